"""JAX's operators as sweep records: its own op databases plus calls of the sweep's own design.

Three sources, in this order:

- `lax.*`: the op records JAX's wheel ships for its own lax tests
  (`jax._src.internal_test_util.lax_test_util.lax_ops()`: op, arity, dtypes, rng factory,
  tolerance), every differentiable one with float64 among its dtypes, its samples drawn by
  JAX's own rng factory (`rand_small`, `rand_positive`, …) at two shapes;
- `harness.*`: the primitive harnesses JAX's wheel ships for jax2tf and its export tests
  (`jax._src.internal_test_util.test_harnesses.all_harnesses`), the float64 ones of the
  differentiable groups, the first `SAMPLES` of each group;
- `jax.scipy.special.*`, `jax.numpy.*`, `jax.lax.*`, `jax.nn.*`, `jax.scipy.linalg.*`: the calls
  of `jax_specs.SPECS`.

Each sample is followed by its perturbed variants (`jax_inputs`): the same op and structure,
inputs drawn from the edge regions of each argument's domain, plus zeros inside products and
repeated values where the op has them. Everything is drawn from generators seeded by
(seed, op, sample, variant), so a record is the same whatever `ops` selects.

`call_source` is a self-contained `def f(*args):` in JAX's public API (the harness records
look their harness up in JAX's own test utilities by its full name), and `fn` is compiled from
that very source, so a repro runs exactly what was checked. Records must be evaluated with
float64 enabled (`jax.enable_x64(True)` or `jax.config.update("jax_enable_x64", True)`).
The JAX test utilities import `absl` (the `absl-py` package, in the `peers` extra).
"""

from __future__ import annotations

import functools
import os
import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from advalidate.sweep import jax_inputs
from advalidate.sweep.jax_specs import ALL, BETAINC_AB, FIRST, SECOND_ORDER_A, SPECS, Spec
from advalidate.sweep.records import DTYPES, OpRecord

LIBRARY = "jax"
#: Shapes of the samples of each `lax_test_util` op (the first of JAX's compatible_shapes).
LAX_SHAPES = ((3,), (2, 3))
#: Samples per lax op and harnesses per group; `advalidate sweep --samples` (the environment
#: variable ADVALIDATE_SWEEP_SAMPLES in its workers) lowers it. The designed calls have one.
SAMPLES = 2

#: lax_test_util ops with a derivative, and the domain of each argument (their rng factories
#: draw JAX's samples; the domains say where the perturbed variants may go).
LAX_DOMAINS: dict[str, tuple[str, ...]] = {
    "neg": ("real",),
    "exp": ("moderate",),
    "exp2": ("moderate",),
    "expm1": ("moderate",),
    "log": ("positive",),
    "log1p": ("above-minus-one",),
    "tanh": ("real",),
    "logistic": ("real",),
    "sin": ("real",),
    "cos": ("real",),
    "atan2": ("real", "nonzero"),
    "sqrt": ("positive",),
    "rsqrt": ("positive",),
    "cbrt": ("nonzero",),
    "square": ("real",),
    "reciprocal": ("nonzero",),
    "tan": ("ball",),
    "asin": ("ball",),
    "acos": ("ball",),
    "atan": ("real",),
    "asinh": ("real",),
    "acosh": ("above-one",),
    "atanh": ("ball",),
    "sinh": ("moderate",),
    "cosh": ("moderate",),
    "lgamma": ("gamma",),
    "digamma": ("gamma",),
    "igamma": ("positive", "positive"),
    "igammac": ("positive", "positive"),
    "erf": ("real",),
    "erfc": ("real",),
    "erf_inv": ("ball",),
    "bessel_i0e": ("real",),
    "bessel_i1e": ("real",),
    "abs": ("nonzero",),
    "pow": ("positive", "real"),
    "add": ("real", "real"),
    "sub": ("real", "real"),
    "mul": ("real", "real"),
    "div": ("real", "nonzero"),
    "max": ("real", "real"),
    "min": ("real", "real"),
}
#: What JAX refuses on purpose for some ops of its databases (it raises, with these messages):
#: the claimed modes and the refusals, by lax op / harness group.
KNOWN: dict[str, tuple[frozenset[str], dict[str, str]]] = {
    "igamma": (FIRST, SECOND_ORDER_A),
    "igammac": (FIRST, SECOND_ORDER_A),
    "regularized_incomplete_beta": (frozenset(), {"*": BETAINC_AB}),
    # The harness binds lax.mul_p itself, without the out_dtype parameter lax.mul always passes,
    # and mul's transpose needs it: not reachable from JAX's API, so the transposing modes are off.
    "mul": (
        frozenset(("forward", "fwd_over_fwd")),
        {
            m: "the harness binds mul_p without out_dtype (lax.mul passes it); mul's transpose needs it"
            for m in ("reverse", "fwd_over_rev", "rev_over_rev")
        },
    ),
    # A reduce_window with a general computation (lax.mul) has no transpose: JAX says so ("an
    # operation that does not support reverse-mode autodiff"); forward mode is claimed.
    "reduce_window_mul": (
        frozenset(("forward", "fwd_over_fwd")),
        {
            m: "JAX raises ValueError: Linearization failed ... an operation that does not support "
            "reverse-mode autodiff (reduce_window with a general computation)"
            for m in ("reverse", "fwd_over_rev", "rev_over_rev")
        },
    ),
    # The harness binds cholesky_p itself, which reads only the lower triangle, while the JVP
    # rule assumes a symmetric tangent; lax.linalg.cholesky symmetrizes its input first.
    "cholesky": (
        frozenset(),
        {"*": "the harness binds cholesky_p without symmetrizing (lax.linalg.cholesky does); the rule assumes it"},
    ),
}
#: lax ops whose complex dtypes in lax_test_util are not differentiable ones: max and min order
#: complex numbers lexicographically (a comparison, not a function JAX differentiates in ℂ).
NO_COMPLEX_GRAD = frozenset(("max", "min"))


def dtype_names(dtypes: Any) -> frozenset[str]:
    """The `records.DTYPES` names among numpy / JAX dtypes (integers and booleans left out)."""
    return frozenset(n for n in (np.dtype(d).name for d in dtypes) if n in DTYPES)


#: JAX refuses scatter_mul's derivatives unless unique_indices=True (NotImplementedError).
SCATTER_MUL = (
    frozenset(),
    {"*": "JAX raises NotImplementedError: scatter_mul gradients are only implemented if `unique_indices=True`"},
)

#: Harness groups with a derivative. Left out: integer or boolean outputs only (argmax, compare,
#: bitcast, iota, random_*), staircases (floor, round, sign, reduce_precision), complex outputs
#: (eig, fft), outputs defined up to sign (eigh, svd: their sign-free forms are in jax_specs),
#: conversions that change precision (convert_element_type) and stop_gradient (zero by design).
HARNESS_GROUPS = frozenset(
    "abs acos acosh add add_any asin asinh atan atan2 atanh bessel_i0e bessel_i1e broadcast_in_dim cbrt "
    "cholesky clamp concatenate cos cosh cumlogsumexp cummax cummin cumprod cumsum custom_linear_solve "
    "digamma div dot_general dynamic_slice dynamic_update_slice erf erf_inv erfc exp expm1 gather igamma "
    "igammac integer_pow lgamma log log1p logistic lu max min mul neg pad pow qr reduce reduce_max reduce_min "
    "reduce_prod reduce_sum reduce_window_add reduce_window_max reduce_window_min reduce_window_mul "
    "regularized_incomplete_beta rem reshape rev rsqrt scatter scatter_add scatter_max scatter_min "
    "scatter_mul select_and_gather_add select_and_scatter_add select_n sin sinh slice sort sqrt squeeze "
    "sub tan tanh top_k transpose triangular_solve tridiagonal_solve".split()
)
_HARNESS_STRUCTURE = {
    "cumprod": "zeros",
    "reduce_prod": "zeros",
    "reduce_window_mul": "zeros",
    "cummax": "repeated",
    "cummin": "repeated",
    "reduce_max": "repeated",
    "reduce_min": "repeated",
    "sort": "repeated",
    "top_k": "repeated",
}


def records(*, ops: Sequence[str] | None = None, seed: int = 0) -> Iterator[OpRecord]:
    """Every JAX record (or those of the ops named in `ops`: a full name, or its last part)."""
    import jax

    wanted = _selector(ops)
    # JAX's test utilities list float64 among an op's dtypes only while float64 is enabled.
    with jax.enable_x64(True):
        try:
            from jax._src.internal_test_util import lax_test_util, test_harnesses
        except ImportError as exc:
            raise ImportError(
                f"JAX's own op records (jax._src.internal_test_util) could not be imported: {exc}; "
                "they need absl-py (pip install absl-py, or advalidate's `peers` extra)"
            ) from exc

        lax_ops = lax_test_util.lax_ops()
        harnesses = list(test_harnesses.all_harnesses)
    n = int(os.environ.get("ADVALIDATE_SWEEP_SAMPLES", SAMPLES))
    yield from _lax_test_util_records(lax_ops, wanted, seed, LAX_SHAPES[:n])
    yield from _harness_records(harnesses, wanted, seed, n)
    for spec in SPECS:
        if wanted(spec.op):
            yield from _spec_records(spec, seed)


def _selector(ops: Sequence[str] | None) -> Callable[[str], bool]:
    if ops is None:
        return lambda op: True
    names = set(ops)
    return lambda op: op in names or any(op.endswith("." + n) for n in names)


def _rng(seed: int, op: str, sample: int, variant: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(op.encode()), sample, zlib.crc32(variant.encode())])


# -- call sources --------------------------------------------------------------------------------

_MODULES = ("jax.numpy", "jax.scipy.special", "jax.scipy.linalg", "jax.lax", "jax.nn")


def call_source(body: str, nargs: int, prelude: str = "") -> str:
    """`def f(*args):` around `body` (an expression in a0…, or statements ending in `return`)."""
    lines = ["def f(*args):", "    import jax"]
    lines += [f"    import {m}" for m in _MODULES if m + "." in body or m + "(" in body]
    lines += ["    " + line for line in prelude.splitlines()]
    names = ", ".join(f"a{i}" for i in range(nargs))
    lines.append(f"    {names}{',' if nargs == 1 else ''} = args")
    stmts = body.splitlines()
    if not stmts[-1].lstrip().startswith("return"):
        stmts[-1] = "return " + stmts[-1]
    lines += ["    " + s for s in stmts]
    return "\n".join(lines) + "\n"


def compile_source(source: str) -> Callable[..., Any]:
    """The function `f` a call source defines (the sweep's own sources only: never a user's)."""
    namespace: dict[str, Any] = {}
    exec(compile(source, "<jax_records>", "exec"), namespace)  # noqa: S102 - our own generated source
    return namespace["f"]


def _float64(f: Callable[..., Any]) -> Callable[..., Any]:
    """`f` run under `jax.enable_x64(True)`: the records are float64 wherever the checker calls them."""
    import jax

    @functools.wraps(f)
    def run(*args: Any) -> Any:
        with jax.enable_x64(True):
            return f(*args)

    return run


def _record(op: str, sample: int, variant: str, source: str, args: Sequence[np.ndarray], **kw: Any) -> OpRecord:
    return OpRecord(
        library=LIBRARY,
        op=op,
        sample=sample,
        variant=variant,
        fn=_float64(compile_source(source)),
        args=tuple(np.asarray(a, dtype=np.float64) for a in args),
        call_source=source,
        **kw,
    )


# -- perturbed variants --------------------------------------------------------------------------


def _variants(
    op: str,
    sample: int,
    seed: int,
    domains: tuple[str, ...],
    shapes: Sequence[tuple[int, ...]],
    base: Sequence[np.ndarray],
    structure: Sequence[str],
) -> Iterator[tuple[str, list[np.ndarray]]]:
    """(variant, args) for every perturbation of the sample `base`: each domain's edge regions
    (arguments whose domain has no such region keep their sample value), then the structural ones."""
    for name in jax_inputs.variants(domains)[1:]:
        rng = _rng(seed, op, sample, name)
        args = []
        for domain, shape, b in zip(domains, shapes, base):
            table = jax_inputs.DOMAINS.get(domain) or jax_inputs.MATRICES[domain]
            args.append(jax_inputs.draw(domain, name, rng, shape) if name in table else b)
        yield name, args
    for name in structure:
        rng = _rng(seed, op, sample, name)
        if name == "repeated":
            yield name, [jax_inputs.repeated(base[0], rng), *base[1:]]
        else:
            yield name, [jax_inputs.with_zeros(base[0], rng, 2 if name == "two-zeros" else 1), *base[1:]]


# -- lax_test_util -------------------------------------------------------------------------------


def _lax_test_util_records(
    lax_ops: Sequence[Any], wanted: Callable[[str], bool], seed: int, shapes: Sequence[tuple[int, ...]]
) -> Iterator[OpRecord]:
    seen: set[str] = set()
    for rec in lax_ops:
        name = rec.op
        op = f"lax.{name}"
        if name not in LAX_DOMAINS or name in seen or not wanted(op):
            continue
        if not any(np.dtype(d) == np.float64 for d in rec.dtypes):
            continue
        seen.add(name)
        domains = LAX_DOMAINS[name]
        modes, known = KNOWN.get(name, (ALL, {}))
        known = dict(known)
        dtypes = dtype_names(rec.dtypes)
        if name in NO_COMPLEX_GRAD:
            dtypes -= {"complex64", "complex128"}
        tol = rec.tol.get(np.float64) if isinstance(rec.tol, dict) else rec.tol
        if tol:
            known["tolerance"] = f"lax_test_util compares float64 results to {tol:g}"
        body = f"jax.lax.{name}({', '.join(f'a{i}' for i in range(rec.nargs))})"
        source = call_source(body, rec.nargs)
        for sample, shape in enumerate(shapes):
            state = np.random.RandomState(zlib.crc32(f"{seed}:{op}:{sample}".encode()))
            make = rec.rng_factory(state)
            base = [np.asarray(make(shape, np.float64), dtype=np.float64) for _ in range(rec.nargs)]
            kw = {"modes": modes, "known": known, "dtypes": dtypes}
            yield _record(op, sample, "sample", source, base, **kw)
            for variant, args in _variants(op, sample, seed, domains, [shape] * rec.nargs, base, ()):
                yield _record(op, sample, variant, source, args, **kw)


# -- test_harnesses ------------------------------------------------------------------------------


def _harness_records(
    harnesses: Sequence[Any], wanted: Callable[[str], bool], seed: int, per_group: int
) -> Iterator[OpRecord]:
    taken: dict[str, int] = {}
    dtypes = _group_dtypes(harnesses)
    for h in harnesses:
        group = h.group_name
        op = f"harness.{group}"
        if group not in HARNESS_GROUPS or np.dtype(h.dtype) != np.float64 or not wanted(op):
            continue
        if taken.get(group, 0) >= per_group:
            continue
        if not _runs_on_cpu(h):
            continue
        sample = taken.get(group, 0)
        taken[group] = sample + 1
        yield from _one_harness(h, op, sample, seed, dtypes[group])


def _runs_on_cpu(h: Any) -> bool:
    return not any(lim.filter(device="cpu", dtype=h.dtype) for lim in h.jax_unimplemented)


def _group_dtypes(harnesses: Sequence[Any]) -> dict[str, frozenset[str]]:
    """Each differentiable group's dtypes: those of its harnesses JAX runs on CPU."""
    out: dict[str, set[str]] = {}
    for h in harnesses:
        if h.group_name in HARNESS_GROUPS and _runs_on_cpu(h):
            out.setdefault(h.group_name, set()).update(dtype_names([h.dtype]))
    return {g: frozenset(d) for g, d in out.items()}


def _one_harness(h: Any, op: str, sample: int, seed: int, dtypes: frozenset[str]) -> Iterator[OpRecord]:
    state = np.random.RandomState(zlib.crc32(f"{seed}:{h.fullname}".encode()))
    dyn = [np.asarray(a) for a in h.dyn_args_maker(state)]
    diff = [i for i, a in enumerate(dyn) if a.dtype == np.float64]
    consts = {i: a for i, a in enumerate(dyn) if i not in diff}
    prelude = "\n".join(
        [
            "import numpy as np",
            "from jax._src.internal_test_util import test_harnesses",
            f"harness = next(h for h in test_harnesses.all_harnesses if h.fullname == {h.fullname!r})",
            "consts = {" + ", ".join(f"{i}: {_literal(a)}" for i, a in consts.items()) + "}",
        ]
    )
    order = ", ".join(f"consts[{i}]" if i in consts else f"a{diff.index(i)}" for i in range(len(dyn)))
    source = call_source(f"harness.dyn_fun({order}{',' if len(dyn) == 1 else ''})", len(diff), prelude)
    base = [dyn[i] for i in diff]
    if not base:
        return
    nondiff = _nondiff_outputs(compile_source(source), base)
    modes, known = KNOWN.get(h.group_name, (ALL, {}))
    if h.group_name == "scatter_mul" and not h.params.get("unique_indices"):
        modes, known = SCATTER_MUL
    kw = {"modes": modes, "known": dict(known), "nondiff_outputs": nondiff, "dtypes": dtypes}
    yield _record(op, sample, "sample", source, base, **kw)
    structure = _HARNESS_STRUCTURE.get(h.group_name)
    if structure:
        rng = _rng(seed, op, sample, structure)
        first = jax_inputs.repeated(base[0], rng) if structure == "repeated" else jax_inputs.with_zeros(base[0], rng, 1)
        yield _record(op, sample, structure, source, [first, *base[1:]], **kw)


def _literal(a: np.ndarray) -> str:
    return f"np.array({a.tolist()!r}, dtype=np.{a.dtype})"


def _nondiff_outputs(fn: Callable[..., Any], args: Sequence[np.ndarray]) -> tuple[int, ...]:
    """Positions of the outputs that are not floating point (indices, pivots, permutations)."""
    import jax

    with jax.enable_x64(True):
        out = jax.eval_shape(fn, *args)
    if not isinstance(out, tuple | list):
        return ()
    return tuple(i for i, o in enumerate(out) if not np.issubdtype(o.dtype, np.floating))


# -- the sweep's own calls -----------------------------------------------------------------------


def _spec_records(spec: Spec, seed: int) -> Iterator[OpRecord]:
    source = call_source(spec.body, len(spec.domains))
    shapes = spec.shapes()
    rng = _rng(seed, spec.op, 0, "sample")
    base = [jax_inputs.draw(d, "sample", rng, s) for d, s in zip(spec.domains, shapes)]
    kw = {"modes": spec.modes, "known": dict(spec.known), "dtypes": spec.dtypes}
    yield _record(spec.op, 0, "sample", source, base, **kw)
    for variant, args in _variants(spec.op, 0, seed, spec.domains, shapes, base, spec.structure):
        documented = {"*": spec.documented[variant]} if variant in spec.documented else {}
        not_run = spec.not_run.get(variant, "")
        yield _record(
            spec.op, 0, variant, source, args, **{**kw, "known": {**kw["known"], **documented}}, not_run=not_run
        )


__all__ = ["HARNESS_GROUPS", "LAX_DOMAINS", "SAMPLES", "call_source", "compile_source", "records"]
