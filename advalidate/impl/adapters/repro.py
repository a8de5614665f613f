"""Standalone reproducers (`repro.py`) for findings against the tensor adapters (issue #15).

One run of the program at the finding's input is traced: every call of the adapter's `xp`
namespace and of its scalar `ops` is recorded as one line of straight-line code (`v3 =
ns.scatter_add((6,), (np.array([...]),), v2)`), with index arrays and masks as numpy literals and
the branches the program took at that input fixed. The script holds the library imports, the
source of the adapter's namespace class (plain library code: `jnp` / `torch` / `anp` calls), the
traced function `f(x0, x1, ...)`, the input and the output cotangent, and prints

- the library's gradient of ⟨f(x), dy⟩ (its own reverse mode: `jax.vjp`, `torch.autograd.grad`,
  `torch.func.vjp` for `torch-func`, `autograd.grad`),
- the expected gradient of the program, computed by advalidate's reference (`tape` engine) when the
  script was written and embedded as a literal,
- central differences of the script's own primal ⟨f(x), dy⟩ (step 1e-6 relative), so a wrong
  derivative rule of the library shows even without trusting the literal.

Derivative operators inside the program (seed 001) are written in the library's own API: the
function an operator differentiates becomes a nested `def` (its body traced when the library
called it, so it may use the variables of the enclosing function, as the program's closure did),
and the operator a call of the adapter's helper `nested_vjp` / `nested_grad` / `nested_jvp`, whose
source is copied into the script (`jax.vjp` / `jax.grad` / `jax.jvp`; `torch.autograd.grad(...,
create_graph=True)`; `torch.func.vjp` / `torch.func.grad` / `torch.func.jvp`; autograd's
`make_vjp` / `grad` / `make_jvp`). The expected gradient of such
a program is the reference interpreter's (tagged nested forward mode), not the `tape` engine's.

The library's part of the script, its imports, the driver (`primal`, `library_gradient`) and
forward-mode templates and the nested helpers, comes from the engine's `repro_info()`
(`impl.protocol.ReproInfo`; the templates are `advalidate/libraries/NAME/repro.py`); this module
writes the rest and names no library.

Nothing of advalidate is imported by the script: `python repro.py` with the library installed.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np

from ...differences import standalone_source
from ...lang.primitives import ELEMENTARY
from ...lang.program import Program, evaluate
from ...lang.specials import SPECIALS
from ...lang.types import Type
from ...lang.xp import NAMESPACE_FUNCTIONS
from .common import LeafFn, operator_jvp, operator_vjp
from .elementary import library_call
from .leaves import real_leaves, replace_leaves
from .specials import XP_NAMES
from .transforms import INT_TEXT

EXTRA_FUNCTIONS = ("take_fill", "scatter_add_drop", "scatter_max_drop", "select", "part")
#: The scalar elementary functions, written as the library's (`jnp.sin(v1)`): every row's.
UNARY = tuple(ELEMENTARY)
BINARY = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
#: The namespace calls that transform a function of the program (issue #26: `jax-vmap`, ...).
TRANSFORMATIONS = ("vmap", "checkpoint", "scan", "cond", "scan_states", "scan_right", "fori_loop", "switch")


class Sym:
    """A traced value: the name of its variable in the script and its actual value."""

    __slots__ = ("name", "value")

    def __init__(self, name: str, value: Any) -> None:
        self.name = name
        self.value = value

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(getattr(self.value, "shape", ()))


class Trace:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.n = 0

    def name(self, prefix: str = "v") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def fresh(self, value: Any, expr: str) -> Sym:
        name = self.name()
        self.lines.append(f"    {name} = {expr}")
        return Sym(name, value)

    def function(self, fn: LeafFn, leaves: list, lift: Callable[[str], str]) -> tuple[str, list]:
        """`fn` applied to `leaves` (the library's values), traced as a nested `def` (appended to the
        lines at the current position): its name and `fn`'s results, unwrapped."""
        name = self.name("f")
        params = [Sym(self.name(), leaf) for leaf in leaves]
        outer, self.lines = self.lines, []
        try:
            outs = fn(params)
        finally:
            body, self.lines = self.lines, outer
        self.lines.append(f"    def {name}(xs):")
        self.lines.append(f"        [{', '.join(p.name for p in params)}] = xs")
        self.lines.extend("    " + ln for ln in body)
        self.lines.append(f"        return [{', '.join(literal(o, lift) for o in outs)}]")
        return name, [unwrap(o) for o in outs]


def unwrap(a: Any) -> Any:
    if isinstance(a, Sym):
        return a.value
    if isinstance(a, tuple):
        return tuple(unwrap(i) for i in a)
    if isinstance(a, list):
        return [unwrap(i) for i in a]
    return a


def literal(a: Any, lift: Callable[[str], str]) -> str:
    """`a` as Python source: traced values by name, numpy arrays and numbers as literals."""
    if isinstance(a, Sym):
        return a.name
    if isinstance(a, tuple):
        return "(" + "".join(literal(i, lift) + ", " for i in a) + ")"
    if isinstance(a, list):
        return "[" + ", ".join(literal(i, lift) for i in a) + "]"
    if isinstance(a, (bool, np.bool_)):
        return repr(bool(a))
    if isinstance(a, (int, np.integer)):
        return repr(int(a))
    if isinstance(a, (float, np.floating)):
        return repr(float(a))
    if isinstance(a, np.ndarray):
        dtype = {"b": "bool", "i": "np.int64", "u": "np.int64"}.get(a.dtype.kind, "np.float64")
        text = f"np.array({a.tolist()!r}, dtype={dtype})"
        return text if a.dtype.kind in "biu" else lift(text)
    if a is None:
        return "None"
    # a library value made outside the traced calls (a constant): its numbers as a literal
    return lift(f"np.array({np.asarray(a, dtype=float).tolist()!r}, dtype=np.float64)")


class TraceNamespace:
    """Forwards every namespace call to the adapter's namespace and records it as `ns.fn(...)` (a
    special or elementary function as the library call it is, `jax.scipy.special.erf(...)`,
    `jnp.sin(...)`)."""

    def __init__(self, inner: Any, trace: Trace, lift: Callable[[str], str]) -> None:
        self._inner, self._trace, self._lift = inner, trace, lift

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self._inner, name)
        if name in XP_NAMES and hasattr(self._inner, "special_table"):
            return _traced_special(self._trace, self._lift, fn, self._inner)
        if name in TRANSFORMATIONS:
            return self._transformation(name, fn)
        call_text = library_call(self._inner, name)
        if call_text is not None:  # an elementary function, not in the namespace's source
            return lambda a: self._trace.fresh(fn(unwrap(a)), f"{call_text}({literal(a, self._lift)})")
        if name not in NAMESPACE_FUNCTIONS and name not in EXTRA_FUNCTIONS and not name.startswith("lw_"):
            return lambda *args: fn(*unwrap(args))  # not a library call of the program (`values`)

        def call(*args: Any) -> Any:
            out = fn(*unwrap(args))
            if name == "asnumpy":  # a branch decision: fixed in the trace
                return out
            return self._trace.fresh(out, f"ns.{name}({', '.join(literal(a, self._lift) for a in args)})")

        return call

    def _transformation(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """A transformation of the library applied to regions of the program (`ns.vmap(fK, k)`,
        `ns.checkpoint(fK)`, `ns.scan(fK, n, ...)`, `ns.cond(p, fK, fL)`): each function argument is
        a region, traced when the library first called it, written as a nested `def fK(...)` before
        the call."""
        trace, lift = self._trace, self._lift

        def region(body: Callable[..., Any], traced: dict[str, Any]) -> Callable[..., Any]:
            def inner(*params: Any) -> Any:
                if "lines" in traced:  # called again (a recomputation): traced once
                    return unwrap(body(*params))
                syms = [Sym(trace.name(), p) for p in params]
                outer, trace.lines = trace.lines, []
                try:
                    out = body(*syms)
                finally:
                    traced["lines"], trace.lines = trace.lines, outer
                traced["head"] = ", ".join(p.name for p in syms)
                traced["out"] = literal(out, lift)
                return unwrap(out)

            return inner

        def call(*args: Any) -> Any:
            regions = {k: {"name": trace.name("f")} for k, a in enumerate(args) if callable(a)}
            result = fn(*[region(a, regions[k]) if k in regions else unwrap(a) for k, a in enumerate(args)])
            for r in regions.values():
                trace.lines.append(f"    def {r['name']}({r['head']}):")
                trace.lines.extend("    " + ln for ln in r["lines"])
                trace.lines.append(f"        return {r['out']}")
            text = ", ".join(regions[k]["name"] if k in regions else literal(a, lift) for k, a in enumerate(args))
            return trace.fresh(result, f"ns.{name}({text})")

        return call


def _traced_special(trace: Trace, lift: Callable[[str], str], fn: Callable[..., Any], inner: Any) -> Callable[..., Any]:
    """A special function's call, run and recorded as the library call its lowering row names (the
    row the run drew, `specials.row_of`)."""

    def call(*args: Any) -> Any:
        out = fn(*unwrap(args))
        return trace.fresh(out, inner.last_special.text([literal(a, lift) for a in args]))

    return call


class TraceOps:
    """Forwards the scalar operations to the adapter's ops and records them with the library's names."""

    def __init__(self, inner: Any, trace: Trace, lift: Callable[[str], str], lib: str, atan: str) -> None:
        self._inner, self._trace, self._lift, self._lib, self._atan = inner, trace, lift, lib, atan

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self._inner, name)
        if name in SPECIALS and hasattr(self._inner, "special_table"):
            return _traced_special(self._trace, self._lift, fn, self._inner)
        if name in ("lt", "le", "gt", "ge"):
            return lambda a, b: fn(unwrap(a), unwrap(b))
        if name == "real":  # of an index: a traced one inside a transformed region
            return lambda r: (
                self._trace.fresh(fn(r.value), f"{self._lib}.asarray({r.name}, dtype={self._lib}.float64)")
                if isinstance(r, Sym)
                else self._trace.fresh(fn(r), self._lift(repr(float(r))))
            )
        if name == "const":
            return lambda r: self._trace.fresh(fn(r), self._lift(repr(float(r))))
        if name == "int_op":  # integer arithmetic on a traced index (transforms.INT_TEXT)
            return lambda op, *args: self._trace.fresh(
                fn(op, *unwrap(args)),
                f" {INT_TEXT[op]} ".join(literal(a, self._lift) for a in args)
                if len(args) == 2
                else f"{INT_TEXT[op]}{literal(args[0], self._lift)}",
            )
        if name in BINARY:
            op = BINARY[name]
            return lambda a, b: self._trace.fresh(
                fn(unwrap(a), unwrap(b)), f"{literal(a, self._lift)} {op} {literal(b, self._lift)}"
            )
        if name == "neg":
            return lambda a: self._trace.fresh(fn(unwrap(a)), f"-{literal(a, self._lift)}")
        if name in UNARY:
            lib_fn = self._atan if name == "atan" else f"{self._lib}.{name}"
            return lambda a: self._trace.fresh(fn(unwrap(a)), f"{lib_fn}({literal(a, self._lift)})")
        return fn

    # ---- derivative operators: the adapter's plumbing, with its library calls traced ----
    def vjp(self, f: Callable[[Any], Any], x: Any, dy: Any, dom: Type, cod: Type) -> Any:
        return operator_vjp(self, f, x, dy, dom, cod)

    def jvp(self, f: Callable[[Any], Any], x: Any, dx: Any, dom: Type, cod: Type) -> Any:
        return operator_jvp(self, f, x, dx, dom, cod)

    def is_grad_seed(self, dy: Any) -> bool:
        return self._inner.is_grad_seed(unwrap(dy))

    def lib_vjp(self, fn: LeafFn, xs: list, dys: list) -> list:
        return self._operator("nested_vjp", self._inner.lib_vjp, fn, xs, dys)

    def lib_grad(self, fn: LeafFn, xs: list) -> list:
        return self._operator("nested_grad", self._inner.lib_grad, fn, xs)

    def lib_jvp(self, fn: LeafFn, xs: list, dxs: list) -> list:
        return self._operator("nested_jvp", self._inner.lib_jvp, fn, xs, dxs)

    def _operator(self, helper: str, run: Callable[..., list], fn: LeafFn, xs: list, *rest: list) -> list:
        """One call of the library's operator `run`, written as `vN = helper(fK, [xs], [...])` after the
        nested `def fK` that the library's call of `fn` traced."""
        traced: dict[str, str] = {}

        def inner(leaves: list) -> list:
            traced["name"], outs = self._trace.function(fn, list(leaves), self._lift)
            return outs

        result = run(inner, unwrap(xs), *(unwrap(r) for r in rest))
        args = ", ".join(literal(list(a), self._lift) for a in (xs, *rest))
        out = self._trace.fresh(result, f"{helper}({traced['name']}, {args})")
        return [Sym(f"{out.name}[{k}]", r) for k, r in enumerate(result)]


def namespace_source(ns: Any) -> str:
    """The source of the namespace's classes (base classes first) and its module's helpers."""
    parts, prev = [], ""
    for cls in reversed(type(ns).__mro__[:-1]):
        src = textwrap.dedent(inspect.getsource(cls))
        head, _, body = src.partition("\n")
        # the class line names its base as the script does (a base may be spelt `module.Class` here)
        parts.append(f"class {cls.__name__}({prev}):\n{body}")
        prev = cls.__name__
    return "\n\n".join(parts)


def _traced_run(engine: Any, prog: Program, x: Any) -> tuple[Trace, list[Any], Any]:
    """One run of the program through the engine's calls, recorded: the trace, the input leaves and
    the output (its real leaves traced values)."""
    r = engine.repro_info()
    trace = Trace()
    ops = TraceOps(engine.ops(), trace, r["lift"], r["lib"], r["atan"])
    xp = TraceNamespace(engine.namespace(), trace, r["lift"])
    f = engine.compile_rt(prog, ops, engine.runtime(ops, xp))
    leaves = real_leaves(x)
    syms = [Sym(f"x{k}", engine.to_lib(leaf)) for k, leaf in enumerate(leaves)]
    return trace, leaves, f(replace_leaves(x, syms))


def trace_program(engine: Any, prog: Program, x: Any) -> tuple[list[str], list[str], list[Any]]:
    """(body lines of `f`, its return expressions, the input leaves) from one traced run."""
    trace, leaves, y = _traced_run(engine, prog, x)
    lift = engine.repro_info()["lift"]
    return trace.lines, [literal(o, lift) for o in real_leaves(y)], leaves


def function_source(lines: list[str], outs: list[str], n: int) -> str:
    """`def f(x0, ..., x{n-1})` with the traced body, returning the list of `outs`."""
    body = "\n".join(lines) if lines else "    pass"
    return f"def f({', '.join(f'x{k}' for k in range(n))}):\n{body}\n    return [{', '.join(outs)}]\n"


def straight_line(engine: Any, prog: Program, x: Any) -> tuple[str, Any]:
    """The program at `x` as the straight-line source of `f(x0, ...)` in the library's own calls
    (what a compiler of the library is given: `torch-compile`), and the output (its real leaves the
    eager values)."""
    trace, leaves, y = _traced_run(engine, prog, x)
    outs = real_leaves(y)
    src = function_source(trace.lines, [literal(o, engine.repro_info()["lift"]) for o in outs], len(leaves))
    return src, replace_leaves(y, [unwrap(o) for o in outs])


#: (gradient tolerance, value tolerance), each (rtol, atol), of a language-semantics repro.py given
#: the reference's gradient and value (flat): the oracles' policy at the program and input, which a
#: campaign passes in (`advalidate.oracles.tolerance`; impl does not import the oracles).
ToleranceFn = Callable[[list, list], tuple[tuple[float, float], tuple[float, float]]]
#: Without one (a direct `engine.repro` call), a loose check: a gross mismatch only.
LOOSE = ((1e-6, 1e-8), (1e-6, 1e-8))


def repro_script(
    engine: Any,
    prog: Program,
    x: Any,
    dy: Any,
    expected: Any,
    note: str = "",
    own: dict[str, Any] | None = None,
    tolerance: ToleranceFn | None = None,
) -> str:
    """The text of `repro.py` for `engine` on `prog` at `x` with output cotangent `dy`.

    Without `own` the script holds the library to the language (the reference's gradient and value,
    embedded, compared component by component within `tolerance`'s bounds: the oracles' own, so
    the script fails exactly where the campaign's oracles did). With `own` (a lowered engine's
    finding: `kind`, the tie `rule` at a kink) it holds the library to itself: its reverse mode
    against its own forward mode and central differences of its own primal, or at a kink against
    the one-sided gradients around the point (`DRIVER_OWN`)."""
    r = engine.repro_info()
    lines, outs, leaves = trace_program(engine, prog, x)
    n = len(leaves)
    xs = [np.asarray(v, dtype=float).tolist() for v in leaves]
    dys = [np.asarray(v, dtype=float).tolist() for v in real_leaves(dy)]
    if own is None:
        exp = [np.asarray(v, dtype=float).tolist() for v in real_leaves(expected)]
        value = [np.asarray(v, dtype=float).tolist() for v in real_leaves(evaluate(prog, x, "float"))]
        flat_g = [float(v) for e in exp for v in np.ravel(e)]
        tol_g, tol_y = LOOSE if tolerance is None else tolerance(flat_g, [float(v) for e in value for v in np.ravel(e)])
        how = "the oracles' tolerance here" if tolerance is not None else "loose: no oracle's tolerance given"
        data = (
            f"EXPECTED = {exp!r}  # advalidate's reference gradient ({reference_name(prog)})\n"
            f"EXPECTED_VALUE = {value!r}  # f(X) by advalidate's reference interpreter\n"
            f"# agreement: |actual - expected| <= rtol * |expected| + atol per component ({how})\n"
            f"GRAD_TOL = {tuple(map(float, tol_g))!r}  # (rtol, atol)\n"
            f"VALUE_TOL = {tuple(map(float, tol_y))!r}  # (rtol, atol)\n\n"
        )
        driver = r["driver"] + DRIVER_COMMON
    else:
        data = f"KIND = {own['kind']!r}\nRULE = {own.get('rule')!r}  # the tie rule of the calls, at a kink\n\n"
        driver = r["driver"] + r["forward"] + DRIVER_DIFFERENCES + DRIVER_OWN
    source = prog.source.strip() if getattr(prog, "source", None) else ""
    header = (
        f"# Standalone reproducer written by advalidate for engine {engine.name!r} ({r['what']}).\n"
        f"# Run: python repro.py  (needs {r['needs']}; advalidate is not imported)\n"
        + (f"# {note}\n" if note else "")
        + "#\n# The program (f below is its straight-line trace at this input, branches fixed as taken):\n#\n"
        + "".join(f"#   {ln}\n" for ln in source.splitlines())
    )
    helpers = ""
    if prog.uses_derivatives:  # the operators' helpers, in the library's own API (the adapter's code)
        helpers = "\n\n" + "\n\n".join(textwrap.dedent(inspect.getsource(fn)) for fn in r["nested"])
    return (
        "from __future__ import annotations\n\n"
        + header
        + "\n"
        + r["imports"]
        + helpers
        + "\n\n"
        + namespace_source(engine.namespace())
        + f"\n\nns = {type(engine.namespace()).__name__}.__new__({type(engine.namespace()).__name__})\n\n\n"
        + function_source(lines, outs, n)
        + "\n\n"
        + f"X = {xs!r}\nDY = {dys!r}\n"
        + data
        + driver
    )


def reference_name(prog: Program) -> str:
    return "reference interpreter, tagged nested forward mode" if prog.uses_derivatives else "tape engine"


def expected_gradient(prog: Program, x: Any, dy: Any) -> Any:
    """The gradient of ⟨prog(x), dy⟩ by advalidate's reference: the `tape` engine, or for a program with
    derivative operators (which `tape` does not run) the reference interpreter's tagged forward
    mode, one `jvp` per input real."""
    from ...lang.nested import TaggedOps
    from ...lang.numeric import reference_ops
    from ...lang.program import to_python
    from ...lang.types import R
    from ...lang.values import flatten, unflatten

    if not prog.uses_derivatives:
        from ..seed000.tape import TapeStage

        _, back = TapeStage().vjp(prog, x, numeric="float")
        return back(dy)
    ops = TaggedOps(reference_ops("float"))
    f = to_python(prog, ops)
    reals, weights = flatten(x), [ops.const(float(w)) for w in flatten(dy)]

    def loss(k: int) -> Callable[[Any], Any]:
        """⟨prog(x), dy⟩ as a function of the k-th real of x."""

        def g(t: Any) -> Any:
            y = flatten(f(unflatten(x, reals[:k] + [t] + reals[k + 1 :])))
            total = ops.const(0.0)
            for w, yk in zip(weights, y, strict=True):
                total = ops.add(total, ops.mul(w, yk))
            return total

        return g

    return unflatten(x, [float(ops.jvp(loss(k), r, ops.const(1.0), R, R)) for k, r in enumerate(reals)])


#: The differences of the scripts: `advalidate.differences`' own functions (those of both drivers),
#: embedded as source since the script does not import advalidate (issue #41 item 2), then the loss
#: and its gradient by central differences.
DRIVER_DIFFERENCES = (
    "\n\n"
    + standalone_source("scaled_step", "central", "one_sided", "extrapolate")
    + '''

def loss_np(xs):
    """<f(x), dy> with the library's own primal, as a float."""
    ys = primal([np.array(v, dtype=np.float64) for v in xs])
    return sum(float(np.sum(np.asarray(y, dtype=np.float64) * np.asarray(d, dtype=np.float64))) for y, d in zip(ys, DY))


def shifted(xs, k, i, h):
    """xs with element i of input k moved by h."""
    out = [np.array(w, dtype=np.float64) for w in xs]
    out[k][i] += h
    return out


def central_differences(xs, step=1e-6):
    """The gradient of the loss by central differences, one coordinate at a time."""
    out = []
    for k, v in enumerate(xs):
        a = np.array(v, dtype=np.float64)
        g = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            g[i] = central(lambda t: loss_np(shifted(xs, k, i, t)), scaled_step(float(a[i]), step))
        out.append(g)
    return out
'''
)

DRIVER_COMMON = (
    DRIVER_DIFFERENCES
    + """

if __name__ == "__main__":
    import sys

    np.set_printoptions(precision=12, suppress=False)
    lib = library_gradient(X, DY)
    fd = central_differences(X)
    print(LIBRARY, "gradient:             ", [np.asarray(g, dtype=np.float64).tolist() for g in lib])
    print("expected (advalidate reference):", EXPECTED)
    print("central differences of f:      ", [g.tolist() for g in fd])
    def agree(actual, expected, tol):
        a = np.asarray(actual, dtype=np.float64)
        e = np.asarray(expected, dtype=np.float64)
        return bool(np.all(np.abs(a - e) <= tol[0] * np.abs(e) + tol[1]))

    same = all(agree(a, b, GRAD_TOL) for a, b in zip(lib, EXPECTED))
    print("tolerance (rtol, atol) of the gradient:", GRAD_TOL, "of the value:", VALUE_TOL)
    print("library gradient matches the expected one:", same)
    # the value: for a program with derivative operators, itself a derivative computed by the library
    value = [np.asarray(y, dtype=np.float64).tolist() for y in primal(X)]
    print(LIBRARY, "value f(x):               ", value)
    print("expected value (advalidate reference):", EXPECTED_VALUE)
    same_value = all(agree(a, b, VALUE_TOL) for a, b in zip(value, EXPECTED_VALUE))
    print("library value matches the expected one:", same_value)
    sys.exit(0 if same and same_value else 1)
"""
)

DRIVER_OWN = '''

def flat(gs):
    return np.concatenate([np.asarray(g, dtype=np.float64).ravel() for g in gs]) if gs else np.zeros(0)


def close(a, b, rtol, atol):
    return bool(np.all(np.abs(flat(a) - flat(b)) <= atol + rtol * np.abs(flat(b))))


def pieces_around(xs, dy, t=1e-7, rounds=3):
    """The gradients of the smooth pieces around X: the library's reverse mode just beside the point,
    along tilted coordinate directions and random ones, extrapolated to t = 0 from t and 2t."""
    rng = np.random.default_rng(0)
    x = flat(xs)
    n = len(x)
    dirs = [s * np.eye(n)[k] + 0.1 * rng.standard_normal(n) for k in range(n) for s in (1.0, -1.0)]
    dirs += [rng.standard_normal(n) for _ in range(8 * rounds)]
    scale = np.maximum(np.abs(x), 1e-3 * max(1.0, float(np.abs(x).max(initial=0.0))))

    def at(p):
        it = iter(p.tolist())
        shaped = [np.array([next(it) for _ in range(np.size(v))], dtype=np.float64).reshape(np.shape(v)) for v in xs]
        return flat(library_gradient(shaped, dy))

    found = []
    for d in dirs:
        g1, g2 = at(x + t * scale * d), at(x + 2 * t * scale * d)
        g = extrapolate(g1, g2, 2)
        if not any(np.allclose(g, p, rtol=1e-5, atol=1e-7) for p in found):
            found.append(g)
    return found


def one_sided_slopes(xs, steps=(1e-6, 5e-7)):
    """The one-sided derivatives of the loss on each side of each coordinate, at two steps each
    ([right at each step], then [left at each step]): finite and (nearly) equal where the primal
    has a finite slope on that side."""
    base = loss_np(xs)
    out = []
    for k, v in enumerate(xs):
        a = np.array(v, dtype=np.float64)
        for i in np.ndindex(a.shape):
            phi = lambda t: loss_np(shifted(xs, k, i, t))
            sides = [one_sided(phi, scaled_step(float(a[i]), s), base) for s in steps]
            out += [[r for r, _ in sides], [lf for _, lf in sides]]
    return out


def in_hull(g, pieces):
    """Whether g is a convex combination of the pieces (least squares with the weights summing to 1)."""
    P = np.array(pieces).T
    A = np.vstack([P, np.ones((1, P.shape[1])) * 1e3])
    w, *_ = np.linalg.lstsq(A, np.concatenate([g, [1e3]]), rcond=None)
    return bool(np.all(w >= -1e-6) and np.allclose(P @ w, g, rtol=1e-5, atol=1e-7)), w


if __name__ == "__main__":
    import sys

    np.set_printoptions(precision=12, suppress=False)
    print("finding:", KIND)
    try:
        rev = [np.asarray(g, dtype=np.float64) for g in library_gradient(X, DY)]
    except Exception as exc:  # the library's reverse mode crashes
        print(LIBRARY, "reverse mode raises", type(exc).__name__, exc)
        sys.exit(1)
    print(LIBRARY, "reverse-mode gradient:        ", [g.tolist() for g in rev])
    bad = False
    g = flat(rev)
    if "at a kink" in KIND and not np.all(np.isfinite(g)):
        sides = one_sided_slopes(X)
        print("one-sided derivatives of f along each coordinate (steps h, h/2):", sides)
        finite = all(np.all(np.isfinite(d)) and abs(d[0] - d[1]) <= 1e-4 * max(1.0, abs(d[1])) for d in sides)
        print("reverse gradient is not finite where every one-sided derivative of f is:", finite)
        bad = finite
    elif "at a kink" in KIND:
        # pieces where the library's reverse mode is itself not finite tell nothing
        pieces = [p for p in pieces_around(X, DY) if np.all(np.isfinite(p))]
        print("gradients of the pieces around x:", [p.tolist() for p in pieces])
        if not pieces:
            print("no piece around x has a finite gradient: undecided")
            ok = True
        elif RULE == "piece":
            ok = any(np.allclose(g, p, rtol=1e-5, atol=1e-7) for p in pieces)
            print("reverse gradient is one piece's gradient:", ok)
        else:
            ok, w = in_hull(g, pieces)
            print("reverse gradient is in the convex hull of the pieces:", ok, "weights", w.tolist())
        bad = not ok
    else:
        try:
            fwd = forward_gradient(X, DY)
            print(LIBRARY, "forward-mode gradient:        ", [np.asarray(g).tolist() for g in fwd])
            agree = close(rev, fwd, 1e-6, 1e-8)
            print("reverse agrees with forward mode:", agree)
            bad = bad or not agree
        except Exception as exc:
            print(LIBRARY, "forward mode raises", type(exc).__name__, exc)
            # a crash finding whose reverse mode ran: the crash is forward mode's (findings.py
            # names a jvp crash "crash (AttributeError) ...", without "jvp")
            bad = bad or "jvp" in KIND or KIND.startswith("crash")
        fd, fd2 = central_differences(X, 1e-6), central_differences(X, 5e-7)
        print("central differences of f:      ", [g.tolist() for g in fd])
        if close(fd, fd2, 1e-4, 1e-6):
            agree = close(rev, fd, 1e-4, 1e-6)
            print("reverse agrees with differences of its own primal:", agree)
            bad = bad or not agree
        else:
            print("f is not smooth at x along the coordinates (differences with two steps disagree)")
    sys.exit(1 if bad else 0)
'''
