"""Typed programs, the reference interpreter (`evaluate`, `run_reference`) and `to_python`.

The reference interpreter is the closure compiler over a reference numeric domain
(`numeric.FloatOps` or `numeric.MpOps`); `to_python` is the same compiler over any user `ops`
namespace, which is how outside AD systems (autograd, JAX, PyTorch) are driven.
"""

from __future__ import annotations

import functools
import math
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mpmath

from . import ast as A
from . import core as C
from .arrays import OpsArrays, VectorArrays
from .compile import INT_PRIMS, Budget, Compiler, list_prims
from .deep import run_deep
from .gc_pause import paused_gc
from .nested import TaggedOps
from .numeric import DEFAULT_DPS, MpOps, ReferenceOps, reference_ops
from .parser import parse_module
from .primitives import ELEMENTARY, OPTIONAL
from .specials import SPECIALS
from .typecheck import typecheck_program
from .types import Array, Type, any_part
from .values import check_value, convert
from .xp import XpArrays, convert_xp

DEFAULT_BUDGET = 10_000_000
#: Digits of mp evaluation at most: the oracles use 50 to 80; a hundred million would take minutes per operation.
MAX_DPS = 10_000
REAL_OP_NAMES = ("add", "sub", "mul", "div", "neg", *(n for n, r in ELEMENTARY.items() if r.required), "real")
# Optional in an `ops` namespace (docs/api.md): only programs that use them need them.
OPTIONAL_OP_NAMES = OPTIONAL
CMP_OP_NAMES = ("lt", "le", "gt", "ge")


@dataclass(eq=False)
class Program:
    """A parsed, type-checked program `σ -> τ` with σ and τ first-order."""

    module: A.Module
    expr: A.Expr  # the module as one typed expression (definitions become `letrec`s)
    input_type: Type
    output_type: Type
    #: The program's text, or how to print it (`program_of_module`): a generated program is printed
    #: only when its text is read (a finding, `advalidate gen`), not for each of a campaign's
    #: programs.
    _source: str | Callable[[], str] | None = field(default=None, repr=False)
    filename: str = "<input>"
    _core: C.CExpr | None = field(default=None, repr=False)

    @property
    def source(self) -> str | None:
        """The program's text (None for a program built without one)."""
        if callable(self._source):
            self._source = self._source()
        return self._source

    @property
    def core(self) -> C.CExpr:
        """The desugared core program (computed once)."""
        if self._core is None:
            with paused_gc():
                self._core = run_deep(C.desugar, self.expr)
        return self._core

    def size(self) -> int:
        return A.node_count(self.expr)

    @functools.cached_property
    def uses_derivatives(self) -> bool:
        """Whether a derivative operator (`grad`, `vjp`, `jvp`; seed 001) occurs in the program."""
        return any(isinstance(e, A.Deriv) for e in _walk(self.expr))

    @functools.cached_property
    def uses_arrays(self) -> bool:
        """Whether arrays occur in the program's type or in its code (seed 004's language)."""
        return any_part(self.input_type, _is_array) or any_part(self.output_type, _is_array) or self.array_code

    @functools.cached_property
    def uses_specials(self) -> bool:
        """Whether a special function (issue #25: `erf`, `max`, ...) occurs in the program's code."""
        return any(isinstance(e, A.Builtin) and e.name in SPECIALS for e in _walk(self.expr))

    @functools.cached_property
    def array_code(self) -> bool:
        """Whether an array construct occurs in the program's code (not only in its type)."""
        return C.contains(self.core, C.ARRAY_NODES)


def _walk(e: A.Node) -> Any:
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(A.children(x))


def _is_array(t: Type) -> bool:
    return isinstance(t, Array)


def parse(text: str, filename: str = "<input>") -> Program:
    """Parse and type-check a program text; raises ParseError / TypeCheckError with a location."""
    module = parse_module(text, filename)
    return program_of_module(module, text, filename)


def program_of_module(
    module: A.Module, source: str | Callable[[], str] | None = None, filename: str = "<input>"
) -> Program:
    """Type-check a syntax tree (e.g. one built by the generator); `source` is its text, or a
    function printing it when first read."""
    expr = A.module_as_expr(module)
    # Inference recurses as deep as the tree (up to the parser's nesting limit), whatever the caller's
    # depth. (A tree not parsed from a text has no positions in its printed text to show.)
    with paused_gc():
        dom, cod = run_deep(typecheck_program, expr, None if callable(source) else source)
    return Program(module, expr, dom, cod, source, filename)


def numeric_prims(ops: Any) -> dict[str, Callable]:
    """The primitive table of the source language over an `ops` namespace."""
    prims: dict[str, Callable] = {name: getattr(ops, name) for name in REAL_OP_NAMES + CMP_OP_NAMES}
    for name in OPTIONAL_OP_NAMES:
        prims[name] = getattr(ops, name, None) or _missing(ops, name)
    prims["const"] = ops.const
    prims["arrays"] = VectorArrays(ops) if isinstance(ops, ReferenceOps) else OpsArrays(ops)
    for name in ("jvp", "vjp"):  # derivative operators (seed 001), where the namespace has them
        if hasattr(ops, name):
            prims[name] = getattr(ops, name)
    prims.update(INT_PRIMS)
    prims.update(list_prims(ops.add, lambda: ops.const(0.0)))
    return prims


def _missing(ops: Any, name: str) -> Callable:
    def fail(*_args: Any) -> Any:
        raise NotImplementedError(f"the ops namespace {type(ops).__name__} has no `{name}`, which the program calls")

    return fail


@dataclass
class RunResult:
    """What a reference run observed besides the value."""

    value: Any
    primal_ops: int
    path: tuple[bool, ...]
    min_margin: float
    min_open_margin: float = math.inf  # the smallest margin that is not an exact tie (numeric.py)
    exact_ties: frozenset[str] = frozenset()  # where exact ties were: "compare", "maxOuter", ... (numeric.py)


def _to_domain(numeric: str) -> Callable[[Any], Any]:
    return float if numeric == "float" else mpmath.mpf


def run_reference(
    prog: Program, x: Any, numeric: str = "float", budget: int | None = DEFAULT_BUDGET, dps: int = DEFAULT_DPS
) -> RunResult:
    """Evaluate with the reference interpreter, recording op count, branch path and margin."""
    if isinstance(dps, bool) or not isinstance(dps, int) or not 1 <= dps <= MAX_DPS:
        raise ValueError(f"dps must be an integer from 1 to {MAX_DPS}, got {dps!r}")
    check_value(x, prog.input_type, "input")
    ref = _compiled_reference(prog, numeric)
    if not ref.lock.acquire(blocking=False):  # busy (another thread): a fresh one of its own
        ref = _Reference(prog, numeric)
        ref.lock.acquire()
    try:
        ref.start(budget, dps)
        ops = ref.ops
        real = _to_domain(numeric)

        def go() -> Any:
            xi = convert(x, prog.input_type, real, internal=True)
            return convert(ref.fn(xi), prog.output_type, lambda v: v, internal=False)

        if numeric == "mp":
            with mpmath.workdps(dps):
                value = run_deep(go)
        else:
            value = run_deep(go)
        ties = frozenset(ops.exact_ties)
        return RunResult(value, ops.ops, tuple(ops.path), ops.min_margin, ops.min_open_margin, ties)
    finally:
        ref.lock.release()


class _Reference:
    """A program compiled for the reference interpreter with one counting domain, reused run after
    run (`start` clears the counts and sets the budget and digits): the oracles evaluate the same
    program a dozen times per check (finite differences at several points and two precisions, the
    generator's well-behaved test under a budget of its own), and compiling it each time cost as
    much as running it. Nothing compiled depends on the budget or the digits: the closures read
    the budget's allowance when they run, and every real is made by the domain's operations under
    the caller's `mpmath.workdps`."""

    def __init__(self, prog: Program, numeric: str) -> None:
        self.ops: ReferenceOps = reference_ops(numeric, DEFAULT_DPS)
        # Derivative operators run on tagged dual numbers over the same (counting) domain.
        self.arith = TaggedOps(self.ops) if prog.uses_derivatives else self.ops
        self.budget = Budget(None)
        # Compiling recurses as deep as the core program nests (a long list literal is a long let chain).
        self.fn = run_deep(lambda: Compiler(numeric_prims(self.arith), self.budget).compile_program(prog.core))
        self.lock = threading.Lock()

    def start(self, budget: int | None, dps: int) -> None:
        self.ops.reset()
        if isinstance(self.ops, MpOps):
            self.ops.dps = dps
        if isinstance(self.arith, TaggedOps):
            self.arith.depth = 0
        self.budget.limit = budget
        self.budget.reset()


_REFERENCES: weakref.WeakKeyDictionary[Program, dict[str, _Reference]] = weakref.WeakKeyDictionary()


def _compiled_reference(prog: Program, numeric: str) -> _Reference:
    per_prog = _REFERENCES.setdefault(prog, {})
    ref = per_prog.get(numeric)
    if ref is None:
        ref = per_prog[numeric] = _Reference(prog, numeric)
    return ref


def evaluate(
    prog: Program, x: Any, numeric: str = "float", budget: int | None = DEFAULT_BUDGET, dps: int = DEFAULT_DPS
) -> Any:
    """The program's value at `x` (reals as floats, or mpmath numbers with `numeric="mp"`)."""
    return run_reference(prog, x, numeric, budget, dps).value


def to_python(prog: Program, ops: Any, budget: int | None = None, *, xp: Any = None) -> Callable[[Any], Any]:
    """A plain Python callable `f(x)` with every real operation routed through `ops`.

    Reals in `x` are passed to the program as they are (wrap them first if `ops` needs its own
    number objects); integers, booleans, tuples, lists and Inl/Inr are plain Python values.
    Comparisons must return a bool. Recursion as deep as the program needs is supported.

    Without `xp`, arrays are numpy arrays of `ops`' reals and every element operation goes through
    `ops`. With `xp` (an array namespace, `advalidate.lang.xp.ArrayNamespace`; `xp.NUMPY` is plain
    numpy), arrays of reals are `xp` arrays and the program's array operations are `xp`'s whole-array
    operations (see `advalidate.lang.xp`); arrays of reals in `x` are passed as they are.
    """
    steps = Budget(budget)
    prims = numeric_prims(ops)
    if xp is None:
        convert_in = lambda v, t: convert(v, t, _identity, internal=True)  # noqa: E731
        convert_out = lambda v, t: convert(v, t, _identity, internal=False)  # noqa: E731
    else:
        prims["arrays"] = XpArrays(ops, xp)
        convert_in = lambda v, t: convert_xp(v, t, internal=True)  # noqa: E731
        convert_out = lambda v, t: convert_xp(v, t, internal=False)  # noqa: E731
    fn = run_deep(lambda: Compiler(prims, steps).compile_program(prog.core))
    din, dout = prog.input_type, prog.output_type

    def f(x: Any) -> Any:
        def go() -> Any:
            return convert_out(fn(convert_in(x, din)), dout)

        steps.reset()  # the budget is per call
        return run_deep(go)

    return f


def _identity(v: Any) -> Any:
    return v


def is_finite_value(v: Any) -> bool:
    """True when every real leaf of an external value is finite."""
    from .values import flatten

    return all(math.isfinite(float(r)) for r in flatten(v))
