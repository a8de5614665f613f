"""`adv.check_function`: check the gradient of a user's own function, in the style of `adv.check`.

    res = adv.check_function(f, *example_args, framework="jax" | "torch" | "autograd" | "numpy",
                             vjp=None, jvp=None, argnums=None, seed=0, directions=3, checks=None,
                             timeout=60.0)
    print(res)          # verdict table, then every verdict that is not a pass, with its reason
    res.ok              # False iff some check failed (inconclusive and not_applicable never fail)
    adv.assert_function_gradients(f, *example_args, framework=..., strict=False)   # pytest-friendly

`f` takes the example arguments (arrays of the framework, numpy arrays, Python numbers, and trees
of them: dicts, lists, tuples, JAX pytrees, a torch module's parameters, `function_trees`; floating
and complex leaves are differentiated, the rule in their own dtype, `function_precision`; integer
arrays such as gather indices are passed through unchanged and listed; `argnums` picks the
differentiated positions explicitly) and returns a float or complex scalar or array, or a tuple /
list of them (integer and boolean outputs are not differentiated). The gradient under test is the
framework's reverse mode (`jax.vjp`, `torch.autograd.grad`, `autograd.make_vjp`), custom rules
included (`jax.custom_vjp`, `torch.autograd.Function`, autograd `defvjp`), or a user-supplied
rule `vjp(cotangent, *args)` returning one gradient per differentiated argument (a single array
when there is one); it is the only gradient for framework="numpy". `jvp(tangents, *args)`
likewise supplies a forward rule (tangents: one per differentiated argument, a single one when
there is one; it returns the output's tangent).

Each check is run along `directions` random pairs (u, v): a signed Gaussian cotangent u (never
all-ones, so a rule that ignores its incoming cotangent is caught even on a scalar output) and a
Gaussian direction v whose component k is scaled by max(1, |x_k|); the differences below then
start at the step where they have settled (`differences.settled_start`), so the steps follow f's
own scale of variation, not |x| (a Gaussian of width 50 at 5e5, issue #40 item 5).

`fd` (reverse mode against finite differences)
    ⟨Jᵀu, v⟩ from the reverse pass against the derivative D at t = 0 of φ(t) = ⟨u, f(x + t v)⟩,
    taken by Richardson-extrapolated finite differences (Ridders' method) in careful float64, not
    mpmath: the user's function runs in its framework's float64 and cannot be re-run at high
    precision as the `fd` oracle of `adv.check` re-runs the reference interpreter. The differences
    (`advalidate.differences.directional`, whose constants are named here) are taken at
    `N_STEPS` steps h = 2⁻², 2⁻³, …, 2⁻³¹, extrapolated over up to `MAX_ORDER` levels, and the
    entry with the smallest error estimate is kept. An entry's error estimate is the largest of
    its distances to its neighbours in the Richardson table and a rounding floor,
    amplified by the extrapolation: NOISE_K × (the measured noise of φ) / h, at least
    4 ε Σ|u_k f_k| / h. The noise of φ is measured, not assumed (`noise_level`, after Moré and
    Wild's ECnoise: high-order differences of φ at 9 points 2⁻²⁰ apart): cancellation inside f
    or lower precision makes f's values far noisier than ε |f|. Points where f is not finite are
    left out (a domain boundary inside the larger steps only costs those steps). Central
    differences (error in h², h⁴, …) and forward and backward one-sided differences (h, h², …)
    are extrapolated apart.
    - **Kinks**: where the one-sided derivatives disagree with each other or with the central
      one beyond their error estimates (relu, abs or max at or near 0, a tie, a clip boundary,
      or a singularity of f within the steps; also a staircase or jump, found when the plain
      central difference at the smallest noise-free step disagrees with the extrapolated one),
      the direction is not judged as a whole: at a kink the central difference converges to the
      mean of the two slopes and Richardson's estimate can look perfect while the framework
      (rightly) returns one of them. With at most POSITIONS_MAX inputs each input element is
      then judged apart (issue #23 item 3): every element whose own difference is smooth must
      agree with it (so a kink in one element does not hide a wrong slope in another), and at
      the elements of the kink the derivative must lie in the convex hull of the active smooth
      pieces' (`kink_rule="hull"`, the default: torch's abs'(0) = 0, JAX's even shares at ties)
      or be one of them (`kink_rule="piece"`), by `kinks.judge_at_kink`. The pieces come from
      the rule's gradients just beside the kink, so the rule is first checked there against
      one-sided differences of f (`function_kink`): a wrong slope on one side fails.
      Otherwise (more inputs, pieces not found) the direction is inconclusive, never fail.
    - **Accuracy**: when the best error estimate E exceeds `GIVE_UP` (1e-5) relative to |D|
      (or to TINY × Σ|u_k f_k| when D is about 0), the Richardson error does not shrink
      (ill-conditioned or noisy f, a kink inside every step): inconclusive.
    - **Noisy f**: when φ's measured noise ρ relative to Σ|u_k f_k| is far above float64
      rounding, the relative tolerance becomes NOISE_RTOL × ρ, and above MAX_RTOL (1e-3) the
      verdict is inconclusive: f's own values cannot support a judgement at that precision.
    - Otherwise pass iff |⟨Jᵀu, v⟩ - D| <= max(K E, RTOL s) (K = 10, RTOL = 1e-8, s =
      Σ_k |(Jᵀu)_k v_k| the size of the terms of the dot product, or |D| when larger), widened
      to K times the change of ⟨Jᵀu, v⟩ when x, u and v move by a few ulps (the rounding error
      of the reverse pass itself, e.g. a solve with a condition number of 1e10; a wrong rule
      does not move), to MAX_RTOL of s at most: beyond, the direction is inconclusive (a rule
      whose result moves that much would otherwise excuse itself). A rule that is right to only
      ~1e-7 (a float64 backward pass rounded to float32) fails when f itself is accurate. Two runs
      of a rule at one point must agree (REPEAT_ULPS, or `nondeterministic=`), and torch's reverse
      pass must leave the forward's inputs and outputs as they were (in-place damage). On a
      failure the input positions are named by one finite difference per input element (up to
      `POSITIONS_MAX` elements).
`forward` (forward mode against finite differences)
    ⟨u, J v⟩ from the framework's forward mode (`jax.jvp`, `torch.func.jvp` or else
    `torch.autograd.forward_ad`, `autograd.make_jvp`, or the user's `jvp=`) against the same D.
    not_applicable when there is no forward mode (framework="numpy" without `jvp=`) or it does
    not run on f (a `jax.custom_vjp` function, a `torch.autograd.Function` without `jvp`).
`dot` (the dot-product test)
    ⟨u, J v⟩ (forward mode) against ⟨Jᵀu, v⟩ (reverse mode): exact arithmetic makes them equal
    for any linear map, so the tolerance is tight (DOT_RTOL = 1e-10 of the size of the terms,
    widened by the jitter of both sides, or by the noise of f as above) and needs no finite
    differences: it still decides where they are too inaccurate. Inconclusive at a kink found by `fd` (the two
    modes may pick different one-sided derivatives there); not_applicable without forward mode.

`fd2` (second order, `function_order`)
    the first-order pass Jᵀu, differentiated again, against its own finite differences: by
    default where f holds a custom rule (a torch Function not once_differentiable, a JAX
    custom_vjp / custom_jvp), for any function with `order=2`, never with `order=1`.

A check is `fail` if any direction fails, `pass` if every direction passes, `inconclusive`
otherwise (with the reasons), `not_applicable` if it does not apply to this framework or f.
An exception from the reverse pass (or the gradient of a wrong shape) is a `fail`; an exception
from f itself at the example arguments is raised to the caller. A rule's nan or inf is a `fail`
where the differences resolve a finite derivative and `inconclusive` elsewhere (never a crash:
its terms are summed without `math.fsum`, which raises on inf - inf). A call of f or of its
reverse or forward pass that runs longer than `timeout` seconds (default `TIMEOUT`) makes every
check `inconclusive` ("timeout: …"): the calls run on a worker thread (`interrupt.run_watched`),
which the caller stops waiting for. `directions` is at most `DIRECTIONS_MAX`; out-of-range
parameters are a ValueError naming the parameter, its limits and its value, before f runs.

Outputs the framework marks non-differentiable (torch: a tensor output that does not require grad
when every input does, e.g. native_batch_norm's saved statistics) and those named in
`nondiff_outputs=` are left out on both sides. With several outputs, one more direction per
output puts the cotangent on that output alone (`per_output=True`): a rule can be wrong only where
another output's gradient is absent. Outputs of f in float32, float16, bfloat16 or complex64 at float64
arguments, and sparse arguments, are not applicable (the differences need f in float64); complex
values are pairs of reals (torch's conjugate Wirtinger gradient, JAX's conjugate of it); a
ZeroTensor gradient is zero;
non-finite input elements (a -inf mask) are held fixed and their gradient is not judged.

framework="jax" runs every JAX computation inside `jax.enable_x64(True)` (float64), and
evaluates f for the finite differences under `jax.jit` when f traces (eagerly otherwise).
`function_args(*shapes)` is a Hypothesis strategy for float64 example arguments of given shapes.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..differences import EPS, FiniteDifference, directional
from .function_kink import check_beside, rays, unchecked_elements
from .function_precision import LOW_K, UNIT_ROUNDOFF, dtype_name
from .function_precision import describe as describe_dtypes
from .function_trees import _leaves, _pack, _to_numpy, flatten_arg, from_real, real_view
from .interrupt import CallWatch, TimedOut, run_watched
from .tolerance import FUNCTION_DOT_RTOL as DOT_RTOL
from .tolerance import FUNCTION_KINK_RTOL as KINK_RTOL
from .tolerance import FUNCTION_MAX_RTOL as MAX_RTOL
from .tolerance import FUNCTION_NOISE_RTOL as NOISE_RTOL
from .tolerance import FUNCTION_RTOL as RTOL
from .verdict import FAIL, INCONCLUSIVE, NOT_APPLICABLE, PASS, STATUS_LABELS, STATUSES, Verdict, Verdicts, clip

FRAMEWORKS = ("jax", "torch", "autograd", "numpy")
CHECKS = ("fd", "forward", "dot")
#: The second-order check (`function_order`): run by default where f claims second order.
SECOND = "fd2"
#: Allowed disagreement, as a multiple of the error estimates.
K = 10.0
#: Finite differences whose error estimate exceeds this (relative) are inconclusive.
GIVE_UP = 1e-5
#: A derivative below TINY × Σ|u_k f_k(x)| counts as zero when the accuracy of finite differences is judged.
TINY = 1e-8
#: Jitter of x, u and v, in units of eps, to measure the rounding error of the derivatives.
JITTER = 8.0
#: Two runs of a rule at one point may differ by this many ulps of its largest element.
REPEAT_ULPS = 64
#: Failing checks name positions by one finite difference per input element, up to this many elements.
POSITIONS_MAX = 16
#: Seconds one call of the user's code (f, its reverse or forward pass) may take (`timeout=`).
TIMEOUT = 60.0
#: At most this many random directions (each costs about 70 evaluations of f).
DIRECTIONS_MAX = 1000


class _NoForward(Exception):
    """The framework's forward mode does not apply to f (its message says why)."""


class _BadGradient(Exception):
    """The reverse pass returned something that is not a gradient of the arguments."""


class _NotApplicable(Exception):
    """check_function cannot judge f at these arguments (sparse inputs, lower-precision outputs)."""


# -- arguments and outputs -----------------------------------------------------------------------


def _is_float(a: Any) -> bool:
    if isinstance(a, bool | int):
        return False
    if isinstance(a, float):
        return True
    a = _to_numpy(a)
    return isinstance(a, np.ndarray | np.generic) and a.dtype.kind == "f"


def _is_inexact(a: Any) -> bool:
    """A float or complex argument: differentiated (complex ones as pairs of reals)."""
    if isinstance(a, complex):
        return True
    arr = _to_numpy(a)
    return _is_float(a) or (isinstance(arr, np.ndarray | np.generic) and arr.dtype.kind == "c")


def _wide(a: Any) -> str:
    """The dtype the differences evaluate f in: complex128 for complex values, else float64."""
    return "complex128" if np.iscomplexobj(a) else "float64"


def _is_integral(a: Any) -> bool:
    """An integer or boolean output (Python or array of any framework)."""
    if isinstance(a, bool | int | np.integer | np.bool_):
        return True
    kind = getattr(getattr(_to_numpy(a), "dtype", None), "kind", "")
    return kind in ("i", "u", "b")


def _precision(a: Any) -> str:
    """The dtype of a float or complex array that is not float64 ("" for float64 and non-arrays):
    outputs in it cannot support float64 tolerances, and complex ones are not judged."""
    if isinstance(a, bool | int | float):
        return ""
    dtype = getattr(a, "dtype", None)
    if dtype is None:
        return ""
    name = str(dtype).removeprefix("torch.")
    if name in ("float64", "double", "complex128", "cdouble"):
        return ""
    low = ("float32", "float16", "bfloat16", "half", "float", "complex", "chalf", "cfloat", "cdouble")
    return name if name.startswith(low) else ""


class _Args:
    """The example arguments: which leaves are differentiated, their shapes, and how to rebuild
    the arguments. An argument that is a tree (a dict, list or tuple, a JAX pytree, a torch
    module's parameters: `function_trees.flatten_arg`) counts by its leaves (issue #40 item 4)."""

    def __init__(self, args: Sequence[Any], argnums: Sequence[int] | int | None, framework: str = "numpy") -> None:
        self.args = list(args)
        self.framework = framework
        self.trees = [flatten_arg(a, framework) for a in args]
        self.slots = [leaf for t in self.trees for leaf in t.leaves]
        self.owner = [(i, path) for i, t in enumerate(self.trees) for path in t.paths]
        self.has_trees = any(t.paths != [""] for t in self.trees)
        for s, a in enumerate(self.slots):
            layout = str(getattr(a, "layout", "torch.strided"))
            if type(a).__module__.startswith("torch") and layout != "torch.strided":
                raise _NotApplicable(
                    f"argument {self.slot_name(s)} is a {layout.removeprefix('torch.')} tensor; "
                    f"only dense arguments are judged"
                )
        if argnums is None:
            self.diff = [s for s, a in enumerate(self.slots) if _is_inexact(a)]
        else:
            wanted = [argnums] if isinstance(argnums, int) else list(argnums)
            for i in wanted:
                if not 0 <= i < len(args) or not any(_is_inexact(a) for a in self.trees[i].leaves):
                    raise TypeError(f"argument {i} is not a floating-point argument of f")
            self.diff = [s for s, a in enumerate(self.slots) if self.owner[s][0] in wanted and _is_inexact(a)]
        if not self.diff:
            raise TypeError("f has no floating-point argument to differentiate")
        self.py_float = [isinstance(self.slots[s], float | complex) for s in self.diff]
        #: Complex leaves are differentiated as pairs of reals (real parts, then imaginary parts).
        self.complex = [bool(np.iscomplexobj(_to_numpy(self.slots[s]))) for s in self.diff]
        #: Each differentiated leaf's dtype: the rule runs in it, the differences in float64.
        self.dtypes = [dtype_name(self.slots[s]) for s in self.diff]
        self.low = describe_dtypes(self.dtypes)
        self.unit = max(UNIT_ROUNDOFF[d] for d in self.dtypes)
        self.shapes = [np.shape(_to_numpy(self.slots[s])) for s in self.diff]
        self.sizes = [math.prod(s) * (2 if c else 1) for s, c in zip(self.shapes, self.complex, strict=True)]
        self.x0 = np.concatenate([real_view(self.slots[s]) for s in self.diff])
        self.n = self.x0.size

    def slot_name(self, s: int) -> str:
        """`x1` for a plain argument, `x0['w']` or `x0.weight` for a leaf of a tree."""
        i, path = self.owner[s]
        return f"x{i}{path}"

    def split(self, flat: np.ndarray) -> list[np.ndarray]:
        """The differentiated leaves (float64, or complex128 from their real and imaginary parts)."""
        out, k = [], 0
        for shape, size, c in zip(self.shapes, self.sizes, self.complex, strict=True):
            out.append(from_real(flat[k : k + size], shape, c))
            k += size
        return out

    def leaves(self, pieces: Sequence[Any], const: Callable[[Any], Any]) -> list[Any]:
        """Every leaf: `pieces` at the differentiated ones, `const(leaf)` elsewhere."""
        full = [const(a) for a in self.slots]
        for s, p in zip(self.diff, pieces):
            full[s] = p
        return full

    def rebuild(self, pieces: Sequence[Any], const: Callable[[Any], Any] = lambda a: a) -> list[Any]:
        """The full argument list: `pieces` at the differentiated leaves, `const(leaf)` elsewhere."""
        full, out, k = self.leaves(pieces, const), [], 0
        for t in self.trees:
            out.append(t.unflatten(full[k : k + len(t.leaves)]))
            k += len(t.leaves)
        return out

    def modules(self, pieces: Sequence[Any], const: Callable[[Any], Any]) -> list[tuple[Any, dict[str, Any]]]:
        """The torch modules among the arguments, each with the values its parameters take."""
        full, out, k = self.leaves(pieces, const), [], 0
        for t in self.trees:
            if t.module is not None:
                out.append((t.module, {p[1:]: v for p, v in zip(t.paths, full[k : k + len(t.leaves)], strict=True)}))
            k += len(t.leaves)
        return out

    def position(self, k: int) -> str:
        """The name of flat element k: `x1[2, 0]` (argument 1, element (2, 0)), `x0['w'][1]`."""
        for s, shape, size, c in zip(self.diff, self.shapes, self.sizes, self.complex, strict=True):
            if k < size:
                part = ("" if k < size // 2 else ".imag") if c else ""
                k = k % (size // 2) if c else k
                if not shape:
                    return self.slot_name(s) + part
                return f"{self.slot_name(s)}[{', '.join(str(j) for j in np.unravel_index(k, shape))}]{part}"
            k -= size
        raise IndexError(k)

    def describe(self) -> list[str]:
        """Each leaf: its dtype and shape, and whether it is differentiated (what is not is listed)."""
        out = []
        for s, a in enumerate(self.slots):
            arr = _to_numpy(a)
            name = self.slot_name(s)
            if s in self.diff:
                shape, dt = self.shapes[self.diff.index(s)], self.dtypes[self.diff.index(s)]
                out.append(f"{name}: {dt}{list(shape)}" if shape else f"{name}: {dt} scalar")
            elif isinstance(arr, np.ndarray):
                out.append(f"{name}: {arr.dtype}{list(arr.shape)} (not differentiated)")
            else:
                out.append(f"{name}: {type(a).__name__} (not differentiated)")
        return out

    def gradient(self, grads: Any, sign: float = 1.0) -> np.ndarray:
        """The flat gradient from what a reverse pass returned (one entry per differentiated
        argument, or per argument; a single array for a single argument; None for zero)."""
        if len(self.diff) == 1 and not isinstance(grads, tuple | list):
            grads = [grads]
        if not isinstance(grads, tuple | list):
            raise _BadGradient(f"the reverse pass returned a {type(grads).__name__}, not one gradient per argument")
        grads = list(grads)
        if len(grads) == len(self.args) and len(grads) != len(self.diff) and self.has_trees:
            slots = []  # one gradient per argument, each a tree like its argument
            for t, g in zip(self.trees, grads, strict=True):
                slots += [None] * len(t.leaves) if g is None else flatten_arg(g, self.framework).leaves
            if len(slots) != len(self.slots):
                raise _BadGradient("the reverse pass returned gradients whose trees do not match the arguments")
            grads = [slots[s] for s in self.diff]
        elif len(grads) == len(self.args) and len(grads) != len(self.diff):
            grads = [grads[i] for i in self.diff]
        if len(grads) != len(self.diff):
            raise _BadGradient(
                f"the reverse pass returned {len(grads)} gradients for {len(self.diff)} differentiated arguments"
            )
        out = []
        for s, g, shape, c in zip(self.diff, grads, self.shapes, self.complex, strict=True):
            if g is None:
                out.append(np.zeros(math.prod(shape) * (2 if c else 1)))
                continue
            arr = np.asarray(_to_numpy(g))
            if arr.shape != shape and not (arr.size == 1 and math.prod(shape) == 1):
                got, want, x = list(arr.shape), list(shape), self.slot_name(s)
                raise _BadGradient(f"the gradient of {x} has shape {got}, but {x} has shape {want}")
            if c:  # torch's conjugate Wirtinger gradient ∂L/∂x + i ∂L/∂y (sign 1), JAX's conjugate of it (-1)
                arr = np.asarray(arr, dtype=np.complex128).ravel()
                out.append(np.concatenate([arr.real, sign * arr.imag]))
            else:
                out.append(np.asarray(arr, dtype=np.float64).ravel())
        return np.concatenate(out)


class _Outputs:
    """The structure of f's output (fixed at the example arguments)."""

    def __init__(self, y: Any, nondiff: Sequence[int] = (), sign: float = 1.0) -> None:
        leaves: list[Any] = []
        self.struct = _leaves(y, leaves)
        self.sign = sign  # a complex output's cotangent: re + sign · i · im (torch 1, JAX -1: conjugated)
        #: Integer and boolean outputs (an argmax, a mask) are not differentiable, in every library.
        self.integral = [_is_integral(leaf) for leaf in leaves]
        nondiff = (*nondiff, *(j for j, i in enumerate(self.integral) if i))
        self.py_float = []
        self.shapes = []
        self.complex: list[bool] = []
        for j, leaf in enumerate(leaves):
            low = _precision(leaf) if j not in nondiff else ""
            if low:
                raise _NotApplicable(
                    f"output {j} of f is {low}: derivatives are judged in float64 only (finite differences "
                    f"of a lower-precision or complex output cannot support float64 tolerances)"
                )
            if not _is_inexact(leaf) and j not in nondiff:
                raise TypeError(f"output {j} of f is {leaf!r:.60}; outputs must be float scalars or float arrays")
            self.py_float.append(isinstance(leaf, float))
            self.shapes.append(np.shape(_to_numpy(leaf)))
            self.complex.append(j not in nondiff and bool(np.iscomplexobj(_to_numpy(leaf))))
        self.sizes = [math.prod(s) * (2 if c else 1) for s, c in zip(self.shapes, self.complex, strict=True)]
        self.m = sum(self.sizes)
        #: Output leaves excluded on both sides: marked non-differentiable by the library or by the caller.
        self.nondiff = sorted(set(nondiff))
        self.diff_mask = np.concatenate([np.full(n, j not in nondiff) for j, n in enumerate(self.sizes)] or [[]])
        self.diff_mask = self.diff_mask.astype(bool)

    def leaf_mask(self, j: int) -> np.ndarray:
        """The flat positions of output leaf j."""
        mask = np.zeros(self.m, dtype=bool)
        k = sum(self.sizes[:j])
        mask[k : k + self.sizes[j]] = True
        return mask

    def flat(self, y: Any) -> np.ndarray:
        leaves: list[Any] = []
        _leaves(y, leaves)
        if len(leaves) != len(self.shapes):
            raise _BadGradient(f"f returned {len(leaves)} outputs here but {len(self.shapes)} at the example arguments")
        parts = []
        for leaf, shape, c in zip(leaves, self.shapes, self.complex, strict=True):
            arr = np.asarray(_to_numpy(leaf))
            if arr.size != math.prod(shape):
                raise _BadGradient(f"an output has shape {list(arr.shape)}, expected {list(shape)}")
            parts.append(real_view(arr) if c else np.asarray(arr, dtype=np.float64).real.ravel())
        return np.concatenate(parts) if parts else np.zeros(0)

    def unflat(self, flat: np.ndarray, make: Callable[[np.ndarray], Any]) -> Any:
        """An output-shaped value (a cotangent) from a flat vector; leaves through `make`."""
        leaves, k = [], 0
        for shape, size, py, c in zip(self.shapes, self.sizes, self.py_float, self.complex, strict=True):
            piece = from_real(flat[k : k + size], shape, c, self.sign)
            leaves.append(float(piece) if py else make(piece))
            k += size
        return _pack(self.struct, iter(leaves))

    def describe(self) -> str:
        kinds = ["complex128" if c else "float64" for c in self.complex]
        items = [f"{t}{list(s)}" if s else f"{t} scalar" for s, t in zip(self.shapes, kinds, strict=True)]
        return items[0] if self.struct is None else "(" + ", ".join(items) + ")"


# -- the frameworks ------------------------------------------------------------------------------


class _Driver:
    """Runs f, its reverse pass and its forward pass on flat float64 vectors."""

    framework = "numpy"
    reverse_name = "vjp="
    forward_name: str | None = None
    #: Complex convention: torch's (and a vjp= rule's) gradient is ∂L/∂x + i ∂L/∂y, JAX's its conjugate.
    conj_sign = 1.0

    def __init__(self, f: Callable, args: _Args, vjp: Callable | None, jvp: Callable | None) -> None:
        self.f, self.args, self.user_vjp, self.user_jvp = f, args, vjp, jvp
        if vjp is not None:
            self.reverse_name = "the vjp= rule"
        if jvp is not None:
            self.forward_name = "the jvp= rule"
        self.out: _Outputs | None = None
        self.nondiff: tuple[int, ...] = ()  # output leaves the caller marks non-differentiable
        self.nondeterministic = 0.0  # how far two runs of a rule at one point may differ (relative)
        self.trust_marks = True  # False for a first-order pass: an output that does not require grad is constant
        self.watch = CallWatch(None)  # times each call of the user's code (`timeout=`)

    # framework specifics -------------------------------------------------------------------------
    def context(self) -> Any:
        return contextlib.nullcontext()

    def array(self, a: np.ndarray, dtype: str | None = None) -> Any:
        """A framework array (no gradient tracking) of `dtype` (float64 or complex128 by default)."""
        return a.astype(dtype or _wide(a))

    def const(self, a: Any) -> Any:
        """A non-differentiated argument as f receives it."""
        return a

    def pieces(self, flat: np.ndarray, keep_dtypes: bool = False) -> list[Any]:
        """The differentiated arguments from a flat vector: float64 (for the differences), or in
        their own dtypes (`keep_dtypes`: for the rule under test)."""
        dts = self.args.dtypes if keep_dtypes else [None] * len(self.args.dtypes)
        return [
            p.item() if py else self.array(p, dt)  # a Python float or complex stays one
            for p, py, dt in zip(self.args.split(flat), self.args.py_float, dts, strict=True)
        ]

    def call(self, flat: np.ndarray) -> Any:
        return self.f(*self.args.rebuild(self.pieces(flat), self.const))

    def framework_vjp(self, flat: np.ndarray, u: np.ndarray) -> np.ndarray:
        raise _BadGradient("framework='numpy' has no reverse mode: pass vjp=")

    def framework_jvp(self, flat: np.ndarray, v: np.ndarray) -> np.ndarray:
        raise _NoForward("framework='numpy' has no forward mode (pass jvp= to check a forward rule)")

    def marked_nondiff(self) -> tuple[int, ...]:
        """Output leaves the framework itself marks non-differentiable at x0 (none by default)."""
        return ()

    # common --------------------------------------------------------------------------------------
    def start(self) -> np.ndarray:
        with self.context():
            y = self.call(self.args.x0)
            self.out = _Outputs(y, (*self.nondiff, *self.marked_nondiff()), self.conj_sign)
            return self.out.flat(y)

    def value(self, flat: np.ndarray) -> np.ndarray:
        with self.context():
            return self.out.flat(self.call(flat))

    def vjp(self, flat: np.ndarray, u: np.ndarray) -> np.ndarray:
        with self.context():
            if self.user_vjp is None:
                return self.framework_vjp(flat, u)
            full = self.args.rebuild(self.pieces(flat, keep_dtypes=True), self.const)
            return self.args.gradient(self.user_vjp(self.out.unflat(u, self.array), *full), self.conj_sign)

    def jvp(self, flat: np.ndarray, v: np.ndarray) -> np.ndarray:
        with self.context():
            if self.user_jvp is None:
                return self.framework_jvp(flat, v)
            full = self.args.rebuild(self.pieces(flat, keep_dtypes=True), self.const)
            ts = self.pieces(v, keep_dtypes=True)
            t = ts[0] if len(ts) == 1 else tuple(ts)
            return self.out.flat(self.user_jvp(t, *full))


class _JaxDriver(_Driver):
    framework = "jax"
    reverse_name = "jax.vjp"
    forward_name = "jax.jvp"
    conj_sign = -1.0

    def __init__(self, *a: Any) -> None:
        super().__init__(*a)
        import jax
        import jax.numpy as jnp

        self.jax, self.jnp = jax, jnp
        if not hasattr(jax, "enable_x64"):
            jax.config.update("jax_enable_x64", True)
        self.jitted: Any = None

    def context(self) -> Any:
        return self.jax.enable_x64(True) if hasattr(self.jax, "enable_x64") else contextlib.nullcontext()

    def array(self, a: np.ndarray, dtype: str | None = None) -> Any:
        return self.jnp.asarray(a, dtype=getattr(self.jnp, dtype or _wide(a)))

    def g(self, *pieces: Any) -> Any:
        return self.f(*self.args.rebuild(pieces, self.const))

    def value(self, flat: np.ndarray) -> np.ndarray:
        with self.context():
            xs = self.args.split(flat)  # numpy arrays go to the compiled function as they are
            if self.jitted is None:
                try:  # f under jit when it traces, else eagerly (Python control flow on values)
                    jitted = self.jax.jit(self.g)
                    y = self.out.flat(jitted(*xs))
                    self.jitted = jitted
                    return y
                except Exception:
                    self.jitted = False
            if self.jitted:
                return self.out.flat(self.jitted(*xs))
            return self.out.flat(self.g(*[self.array(p) for p in xs]))

    def framework_vjp(self, flat: np.ndarray, u: np.ndarray) -> np.ndarray:
        xs = [self.array(p, dt) for p, dt in zip(self.args.split(flat), self.args.dtypes, strict=True)]
        y, pullback = self.jax.vjp(self.g, *xs)
        leaves: list[Any] = []
        _leaves(self.out.unflat(u, self.array), leaves)
        ys: list[Any] = []
        _leaves(y, ys)
        float0 = self.jax.dtypes.float0  # an integer output's cotangent (JAX's convention)
        leaves = [
            np.zeros(np.shape(c), float0) if i else self.jnp.asarray(c, dtype=getattr(yl, "dtype", None))
            for c, i, yl in zip(leaves, self.out.integral, ys, strict=True)
        ]
        return self.args.gradient(pullback(_pack(self.out.struct, iter(leaves))), self.conj_sign)

    def framework_jvp(self, flat: np.ndarray, v: np.ndarray) -> np.ndarray:
        dts = self.args.dtypes
        xs = tuple(self.array(p, dt) for p, dt in zip(self.args.split(flat), dts, strict=True))
        ts = tuple(self.array(p, dt) for p, dt in zip(self.args.split(v), dts, strict=True))
        try:
            _y, ty = self.jax.jvp(self.g, xs, ts)
        except Exception as exc:
            raise _NoForward(f"jax.jvp does not run on f: {type(exc).__name__}: {_first_line(exc)}") from None
        return self.out.flat(ty)


class _TorchDriver(_Driver):
    framework = "torch"
    reverse_name = "torch.autograd.grad"
    forward_name = "torch.func.jvp"

    def __init__(self, *a: Any) -> None:
        super().__init__(*a)
        import torch

        self.torch = torch

    def array(self, a: np.ndarray, dtype: str | None = None) -> Any:
        return self.torch.tensor(a, dtype=getattr(self.torch, dtype or _wide(a)))

    def const(self, a: Any) -> Any:
        return self.torch.as_tensor(a) if isinstance(a, np.ndarray) else a

    def g(self, *pieces: Any) -> Any:
        """f at the pieces; a module argument's parameters take their pieces for the call."""
        full = self.args.rebuild(pieces, self.const)
        with contextlib.ExitStack() as stack:
            for module, values in self.args.modules(pieces, self.const):
                stack.enter_context(self.torch.nn.utils.stateless._reparametrize_module(module, values))
            return self.f(*full)

    def call(self, flat: np.ndarray) -> Any:
        return self.g(*self.pieces(flat))

    def value(self, flat: np.ndarray) -> np.ndarray:
        with self.torch.no_grad():
            return super().value(flat)

    def marked_nondiff(self) -> tuple[int, ...]:
        """Tensor outputs that do not require grad when every differentiated input does: marked
        non-differentiable by torch (e.g. the saved mean / invstd of native_batch_norm). None
        with a vjp= rule: then the rule, not torch's marking, is under test."""
        if self.user_vjp is not None or not self.trust_marks:
            return ()
        torch = self.torch
        xs = [torch.tensor(p, requires_grad=True) for p in self.args.split(self.args.x0)]  # float64 or complex128
        with torch.enable_grad():
            leaves: list[Any] = []
            _leaves(self.g(*xs), leaves)
        return tuple(j for j, y in enumerate(leaves) if isinstance(y, torch.Tensor) and not y.requires_grad)

    def framework_vjp(self, flat: np.ndarray, u: np.ndarray) -> np.ndarray:
        torch = self.torch
        xs = [
            torch.tensor(p, dtype=getattr(torch, dt), requires_grad=True)
            for p, dt in zip(self.args.split(flat), self.args.dtypes, strict=True)
        ]
        leaves: list[Any] = []
        _leaves(self.g(*xs), leaves)
        kept = [(f"input {self.args.slot_name(s)}", x) for s, x in zip(self.args.diff, xs)]
        kept += [(f"output {j}", y) for j, y in enumerate(leaves) if isinstance(y, torch.Tensor)]
        before = [t.detach().clone() for _, t in kept]
        cot: list[Any] = []
        _leaves(self.out.unflat(u, self.array), cot)
        pairs = [
            (y, torch.as_tensor(c, dtype=y.dtype).reshape(y.shape))
            for y, c in zip(leaves, cot)
            if isinstance(y, torch.Tensor) and y.requires_grad and bool(np.any(_to_numpy(c)))
        ]  # an all-zero cotangent is left out: torch's path for an absent output gradient is checked
        if not pairs:
            return np.zeros(self.args.n)
        grads = torch.autograd.grad([p[0] for p in pairs], xs, grad_outputs=[p[1] for p in pairs], allow_unused=True)
        for (what, t), b in zip(kept, before, strict=True):  # as in training: the same tensors throughout
            if not np.array_equal(_to_numpy(t), _to_numpy(b), equal_nan=True):
                raise _BadGradient(
                    f"the reverse pass changed {what} in place (a saved tensor overwritten: in training the "
                    f"forward's tensors are the caller's, and a second backward or the next step sees the damage)"
                )
        return self.args.gradient(list(grads))

    def framework_jvp(self, flat: np.ndarray, v: np.ndarray) -> np.ndarray:
        torch = self.torch
        dts = self.args.dtypes
        xs = tuple(self.array(p, dt) for p, dt in zip(self.args.split(flat), dts, strict=True))
        ts = tuple(self.array(p, dt) for p, dt in zip(self.args.split(v), dts, strict=True))
        try:
            _y, ty = torch.func.jvp(self.g, xs, ts)
            return self._tangents(ty)
        except Exception as exc:
            first = f"torch.func.jvp: {_first_line(exc)}"
        import torch.autograd.forward_ad as fwad

        try:
            with fwad.dual_level():
                y = self.g(*[fwad.make_dual(x, t) for x, t in zip(xs, ts)])
                leaves: list[Any] = []
                _leaves(y, leaves)
                tangents = [fwad.unpack_dual(y).tangent if isinstance(y, torch.Tensor) else None for y in leaves]
                return self._tangents(_pack(self.out.struct, iter(tangents)))
        except Exception as exc:
            raise _NoForward(f"{first}; torch.autograd.forward_ad: {_first_line(exc)}") from None

    def _tangents(self, ty: Any) -> np.ndarray:
        leaves: list[Any] = []
        _leaves(ty, leaves)
        out = []
        for leaf, shape in zip(leaves, self.out.shapes):
            out.append(np.zeros(math.prod(shape)) if leaf is None else real_view(leaf))
        return np.concatenate(out) if out else np.zeros(0)


class _AutogradDriver(_Driver):
    """HIPS autograd, driven through one flat vector (autograd boxes the whole input at once)."""

    framework = "autograd"
    reverse_name = "autograd.make_vjp"
    forward_name = "autograd.make_jvp"

    def __init__(self, *a: Any) -> None:
        super().__init__(*a)
        import autograd
        import autograd.numpy as anp

        if any(self.args.complex):
            raise _NotApplicable("complex arguments are judged for torch, jax and numpy, not autograd")
        self.autograd, self.anp = autograd, anp

    def g(self, flat: Any) -> Any:
        pieces, k = [], 0
        for shape, size in zip(self.args.shapes, self.args.sizes):
            pieces.append(self.anp.reshape(flat[k : k + size], shape))
            k += size
        leaves: list[Any] = []
        _leaves(self.f(*self.args.rebuild(pieces)), leaves)
        return self.anp.concatenate([self.anp.ravel(leaf) for leaf in leaves])

    def framework_vjp(self, flat: np.ndarray, u: np.ndarray) -> np.ndarray:
        back, _y = self.autograd.make_vjp(self.g)(np.array(flat, dtype=np.float64))
        return self.args.gradient(self.args.split(np.asarray(back(u), dtype=np.float64).ravel()))

    def framework_jvp(self, flat: np.ndarray, v: np.ndarray) -> np.ndarray:
        try:
            _y, t = self.autograd.make_jvp(self.g)(np.array(flat, dtype=np.float64))(np.array(v, dtype=np.float64))
        except Exception as exc:
            raise _NoForward(f"autograd.make_jvp does not run on f: {type(exc).__name__}: {_first_line(exc)}") from None
        return np.asarray(t, dtype=np.float64).ravel()


_DRIVERS = {"numpy": _Driver, "jax": _JaxDriver, "torch": _TorchDriver, "autograd": _AutogradDriver}


def _first_line(exc: BaseException) -> str:
    """The first sentence of an exception's message (at most 200 characters, cut at a word)."""
    text = str(exc).strip().splitlines()
    if not text:
        return type(exc).__name__
    return clip(text[0].split(". ")[0], 200)


# -- finite differences (`advalidate.differences`) ----------------------------------------------


def directional_fd(phi: Callable[[float], tuple[float, float]]) -> FiniteDifference | str:
    """Finite differences of `phi(t) -> (value, Σ|terms|)` at t = 0, or why there are none; a kink
    where the one-sided and central ones disagree beyond K times their error estimates."""
    return directional(phi, k=K, kink_rtol=KINK_RTOL, settle=GIVE_UP)


# -- the checks ----------------------------------------------------------------------------------


@dataclass
class _Direction:
    u: np.ndarray
    v: np.ndarray
    fd: FiniteDifference | str | None = None
    rev: np.ndarray | None = None
    rev_error: str = ""
    fwd: np.ndarray | None = None
    fwd_error: str = ""
    fwd_missing: str = ""
    what: str = ""  # "" for a random cotangent on every output, else which output it is alone on
    rounding: float = 0.0  # lower-precision arguments: how far D moves when they move by their rounding


@dataclass
class _Outcome:
    status: str
    detail: str
    expected: Any = None
    actual: Any = None
    abs_err: float | None = None
    rel_err: float | None = None
    tolerance: str | None = None
    rel_tol: float | None = None  # the tolerance relative to the expected value (rel_err is judged by it)
    positions: list[str] = field(default_factory=list)


def _ill_conditioned(what: str, name: str, moved: float, size: float) -> str:
    """Why a disagreement is not judged: the rule's own result moves that much between points a few
    ulps apart, more than MAX_RTOL of the size of its terms (a tolerance that followed it would let
    any rule that moves pass, issue #40 item 5)."""
    return (
        f"too ill-conditioned to judge: {what} from {name} moves by {moved / size:.2g} of the size of its "
        f"terms when x, u and v move by a few ulps (at most {MAX_RTOL:g} is allowed for)"
    )


def _rel(err: float, ref: float) -> float:
    return err / ref if ref else (math.inf if err else 0.0)


def _sum(terms: np.ndarray) -> float:
    """Σ terms, correctly rounded (math.fsum) when every term is finite; inf or nan otherwise
    (fsum raises on inf + -inf: a rule's infinite gradient is a verdict, not a crash)."""
    if np.all(np.isfinite(terms)):
        return math.fsum(terms)
    with np.errstate(invalid="ignore"):
        return float(np.sum(terms))


def _resolved(fd: FiniteDifference | str | None) -> bool:
    """Whether the finite differences resolve a finite derivative: only there can a rule's nan or
    inf contradict anything (torch's linalg.norm at exactly 0, differentiated twice, jumps there)."""
    if not isinstance(fd, FiniteDifference) or fd.kink or not math.isfinite(fd.central):
        return False
    return fd.central_err <= GIVE_UP * max(abs(fd.central), TINY * fd.phi_scale)


class _Checker:
    def __init__(
        self, driver: _Driver, seed: int, directions: int, per_output: bool = True, kink_rule: str = "hull"
    ) -> None:
        self.per_output, self.kink_rule = per_output, kink_rule
        self.d = driver
        self.args = driver.args
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        self.n_dirs = directions
        self.x = self.args.x0
        with driver.watch.call("f (at the example arguments)"):
            self.y0 = driver.start()
        #: Non-finite input elements (a legitimate -inf mask value) are held fixed, not judged.
        self.fixed = ~np.isfinite(self.x)
        self.scale = np.where(self.fixed, 1.0, np.maximum(1.0, np.abs(np.where(self.fixed, 0.0, self.x))))
        self.jitter_rng = np.random.default_rng([seed, 1])
        self.positions_cache: dict[int, Any] = {}

    # measurements ----------------------------------------------------------------------------
    def phi(
        self, u: np.ndarray, v: np.ndarray, base: np.ndarray | None = None
    ) -> Callable[[float], tuple[float, float]]:
        """φ(t) = ⟨u, f(base + t v)⟩ (base x by default) and Σ|terms|, nan where f fails."""
        x = self.x if base is None else base

        def phi(t: float) -> tuple[float, float]:
            try:  # f's own warnings far from x (overflow, invalid values) are no concern here
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    with self.d.watch.call("f"):
                        y = self.d.value(x + t * v)
            except Exception:
                return math.nan, math.nan
            if y.shape != u.shape:
                return math.nan, math.nan
            uy = u[on] * y[on]
            if not np.all(np.isfinite(uy)):
                return math.nan, math.nan
            return math.fsum(uy), math.fsum(np.abs(uy))

        on = u != 0  # outputs left out of ⟨u, f⟩ (non-differentiable, or another output's turn)
        return phi

    def rev_at(self, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Jᵀu at x, zero at the input elements held fixed."""
        with self.d.watch.call(f"the reverse pass ({self.d.reverse_name})"):
            g = self.d.vjp(x, u)
        return np.where(self.fixed, 0.0, g) if self.fixed.any() else g

    def fwd_at(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """J v at x, zero on the outputs that are not judged."""
        with self.d.watch.call(f"the forward pass ({self.d.forward_name or 'jvp='})"):
            t = self.d.jvp(x, v)
        mask = self.d.out.diff_mask
        return np.where(mask, t, 0.0) if t.shape == mask.shape and not mask.all() else t

    def cotangents(self) -> list[tuple[np.ndarray, str]]:
        """Which outputs each direction's cotangent is on: `n_dirs` on every judged output, then
        (with two or more judged outputs) one on each output alone: a rule can be wrong only
        where another output's cotangent is absent (torch passes an undefined gradient for it)."""
        out_ = self.d.out
        cots = [(out_.diff_mask, "")] * self.n_dirs
        judged = [j for j in range(len(out_.sizes)) if j not in out_.nondiff and out_.sizes[j]]
        if len(judged) >= 2 and self.per_output:
            cots += [(out_.leaf_mask(j), f"output {j} alone") for j in judged]
        return cots

    def measure(self, want_forward: bool) -> list[_Direction]:
        out = []
        for mask, what in self.cotangents():
            u = self.rng.standard_normal(self.d.out.m) * mask
            v = self.rng.standard_normal(self.args.n) * self.scale * ~self.fixed
            di = _Direction(u, v, what=what)
            di.fd = directional_fd(self.phi(u, v))
            if self.args.low:
                di.rounding = self.rounding_change(di)
            try:
                di.rev = self.rev_at(self.x, u)
                di.rev_error = self.repeat(di.rev, lambda u=u: self.rev_at(self.x, u), self.d.reverse_name)
            except _BadGradient as exc:
                di.rev_error = str(exc)
            except Exception as exc:
                di.rev_error = f"the reverse pass raised {type(exc).__name__}: {_first_line(exc)}"
            if want_forward:
                try:
                    di.fwd = self.fwd_at(self.x, v)
                    di.fwd_error = self.repeat(di.fwd, lambda v=v: self.fwd_at(self.x, v), self.d.forward_name)
                    if di.fwd.shape != u.shape:
                        di.fwd_error = f"forward mode returned {di.fwd.size} output tangents for {u.size} outputs"
                        di.fwd = None
                except _NoForward as exc:
                    di.fwd_missing = str(exc)
                except Exception as exc:
                    di.fwd_error = f"forward mode raised {type(exc).__name__}: {_first_line(exc)}"
            out.append(di)
        return out

    def rounding_change(self, di: _Direction) -> float:
        """How far the directional derivative D of f moves when the arguments move by one rounding
        of their dtype (random signs): the conditioning a lower-precision rule is allowed, taken
        from f's differences, never from the rule (`function_precision`)."""
        if not isinstance(di.fd, FiniteDifference) or not di.fd.ok:
            return 0.0
        unit = np.concatenate(
            [np.full(size, UNIT_ROUNDOFF[dt]) for size, dt in zip(self.args.sizes, self.args.dtypes, strict=True)]
        )
        moved = self.x * (1 + unit * self.jitter_rng.choice([-1.0, 1.0], size=self.x.shape))
        fd = directional_fd(self.phi(di.u, di.v, np.where(self.fixed, self.x, moved)))
        if isinstance(fd, str) or not fd.ok:
            return math.inf
        return abs(fd.central - di.fd.central) + fd.central_err + di.fd.central_err

    def low_allowance(self, di: _Direction, size: float) -> tuple[float, str]:
        """The tolerance a lower-precision rule gets, and its description ("" for float64)."""
        if not self.args.low:
            return 0.0, ""
        tol = LOW_K * self.args.unit * size + K * di.rounding
        return tol, (
            f"; {self.args.low} arguments: {LOW_K:g} × unit roundoff {self.args.unit:.2g} × size + {K:g} × "
            f"the change of D when they move by their rounding {di.rounding:.2g}"
        )

    def ulps(self, diff: float, ref: float, size: float) -> str:
        """The error in ulps of the lower-precision dtype, for messages ("" for float64)."""
        if not self.args.low:
            return ""
        return f" (in {self.args.low}: error {diff / (2 * self.args.unit * max(abs(ref), TINY * size)):.3g} ulps)"

    def repeat(self, first: np.ndarray, again: Callable[[], np.ndarray], name: str | None) -> str:
        """Why the rule is not deterministic ("" if it is): run again at the same point, its result
        must be the same (a backward that draws new randomness, a dropout mask drawn again, agrees
        with nothing; issue #40 item 6), to REPEAT_ULPS ulps of its largest element, or to the
        relative `nondeterministic=` the caller declares (atomics in a parallel reduction)."""
        second = again()
        if second.shape != first.shape or np.array_equal(first, second, equal_nan=True):
            return ""
        with np.errstate(invalid="ignore"):
            gap = float(np.nanmax(np.abs(first - second))) if first.size else 0.0
            big = float(max(np.nanmax(np.abs(first)), np.nanmax(np.abs(second)))) if first.size else 0.0
        allowed = max(self.d.nondeterministic, REPEAT_ULPS * EPS) * big
        if gap <= allowed:
            return ""
        return (
            f"{name} is not deterministic: two runs at the same point differ by {gap:.3g} "
            f"({gap / big if big else math.inf:.2g} of its largest element; declare nondeterministic= to allow for it)"
        )

    def jitter(self, side: str, di: _Direction, expected: float | None = None, tol: float = 0.0) -> float:
        """How much ⟨Jᵀu, v⟩ (side "rev") or ⟨u, J v⟩ ("fwd") moves when x, u and v move by a few
        ulps (twice, the larger change): the rounding error of the derivative itself, which an
        exact derivative does not show (it moves by a few ulps only). 0 when every nudged value
        agrees with `expected` within `tol`: a rule right a few ulps away and wrong at x itself
        (a `where(x == 1.0, …)` branch) has a wrong value at x, not a rounding error (a noisy
        rule does not land within `tol` twice by chance)."""

        def nudge(a: np.ndarray) -> np.ndarray:
            return a * (1 + JITTER * EPS * self.jitter_rng.choice([-1.0, 1.0], size=a.shape))

        out, agree, tried = 0.0, 0, 0
        for _ in range(2):
            xj, uj, vj = nudge(self.x), nudge(di.u), nudge(di.v)
            try:
                if side == "rev":
                    a, b = float(self.rev_at(xj, uj) @ vj), float(di.rev @ di.v)
                else:
                    a, b = float(uj @ self.fwd_at(xj, vj)), float(di.u @ di.fwd)
            except Exception:
                continue
            tried += 1
            agree += expected is not None and abs(a - expected) <= tol
            out = max(out, abs(a - b) if math.isfinite(a - b) else math.inf)
        return 0.0 if tried and agree == tried else out

    @staticmethod
    def noise_rtol(di: _Direction) -> tuple[float, str]:
        """The relative tolerance floor along this direction, and why it is raised ("" if it is not)."""
        rho = di.fd.relative_noise if isinstance(di.fd, FiniteDifference) else 0.0
        rtol = max(RTOL, NOISE_RTOL * rho)
        why = "" if rtol == RTOL else f"f's own values are noisy near x (relative noise {rho:.1g})"
        return rtol, why

    def coordinate_fd(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """One finite difference per input element: (∂⟨u, f⟩/∂x_k, error) for every k, or None."""
        key = id(u)
        if key not in self.positions_cache:
            grad, err = np.zeros(self.args.n), np.zeros(self.args.n)
            for k in range(self.args.n):
                e = np.zeros(self.args.n)
                e[k] = self.scale[k]
                fd = directional_fd(self.phi(u, e))
                if not _resolved(fd):  # an element is smooth only where its difference is accurate
                    grad[k], err[k] = math.nan, math.inf
                else:
                    grad[k], err[k] = fd.central / self.scale[k], fd.central_err / self.scale[k]
            self.positions_cache[key] = (grad, err)
        return self.positions_cache[key]

    def element_derivatives(self, x: np.ndarray, u: np.ndarray, side: str) -> np.ndarray | None:
        """∂⟨u, f⟩/∂x_k at x for every k by the rule under test (None where it raises)."""
        try:
            if side == "rev":
                return self.rev_at(x, u)
            eye = np.eye(self.args.n) * ~self.fixed
            return np.array([float(u @ self.fwd_at(x, eye[k])) for k in range(self.args.n)])
        except Exception:
            return None

    def per_element(self, di: _Direction, side: str) -> _Outcome:
        """Judge each input element apart, for a direction whose random v met a kink (issue #23
        item 3): one difference per element; a smooth element's derivative must agree with it, so
        a kink in one element no longer hides a wrong slope in the others; the elements at the
        kink are judged by the kink verdict (the rule's gradient must be one active piece's)."""
        from .kinks import FAIL as KINK_FAIL
        from .kinks import PASS as KINK_PASS
        from .kinks import judge_at_kink

        name = self.d.reverse_name if side == "rev" else self.d.forward_name
        kink = di.fd.kink if isinstance(di.fd, FiniteDifference) else str(di.fd)
        grad, err = self.coordinate_fd(di.u)
        mine = self.element_derivatives(self.x, di.u, side)
        if mine is None or not np.all(np.isfinite(mine[np.isfinite(grad)])):
            return _Outcome(INCONCLUSIVE, kink)
        rtol, _ = self.noise_rtol(di)
        smooth = np.isfinite(grad)
        with np.errstate(invalid="ignore"):
            bad = smooth & (np.abs(mine - grad) > np.maximum(K * err, rtol * (np.abs(grad) + np.abs(mine)) + 1e-300))
        at = [self.args.position(k) for k in np.flatnonzero(~smooth)]
        if bad.any():
            pos = [self.args.position(k) for k in np.flatnonzero(bad)]
            return _Outcome(
                FAIL,
                f"judged per input element (the random direction met a kink at {', '.join(at) or 'x'}): "
                f"the derivative from {name} differs from the finite differences at {', '.join(pos)}",
                expected=self._shaped(np.where(smooth, grad, np.nan)),
                actual=self._shaped(mine),
                positions=pos,
            )
        if smooth.all():
            return _Outcome(PASS, f"judged per input element: every element agrees ({kink})")
        beside = check_beside(
            self.x,
            rays(self.args.n, ~smooth & ~self.fixed, self.scale, self.seed),
            lambda p: self.element_derivatives(p, di.u, side),
            lambda base, d: directional_fd(self.phi(di.u, d, base)),
            lambda base, d, h: (self.phi(di.u, d, base)(h)[0] - self.phi(di.u, d, base)(0.0)[0]) / h,
            name,
            K,
        )
        if beside.wrong:
            return _Outcome(FAIL, f"at the kink ({', '.join(at)}): {beside.wrong}", positions=at)
        alone = unchecked_elements(beside, list(np.flatnonzero(~smooth & ~self.fixed)))
        if alone:
            where = ", ".join(self.args.position(k) for k in alone)
            return _Outcome(INCONCLUSIVE, f"{kink}; beside it at {where} no one-sided difference of f resolves a slope")
        checked = f"{beside.verified} ray(s) beside it agree with one-sided differences of f" + (
            f", {beside.unverified} unresolved" if beside.unverified else ""
        )
        verdict = judge_at_kink(
            lambda p: self.element_derivatives(np.asarray(p, dtype=np.float64), di.u, side),
            list(self.x),
            list(mine),
            rule=self.kink_rule,
            n_dirs=8,
        )
        if verdict.status == KINK_FAIL:
            return _Outcome(
                FAIL,
                f"at the kink ({', '.join(at)}) the derivative from {name} is no active piece's: {verdict.message}",
            )
        if verdict.status == KINK_PASS:
            return _Outcome(
                PASS,
                f"judged per input element: the smooth elements agree, and at the kink ({', '.join(at)}) "
                f"{name} gives an active piece's derivative ({checked})",
            )
        return _Outcome(INCONCLUSIVE, f"{kink}; at the kink: {verdict.message}")

    # judgements ------------------------------------------------------------------------------
    def against_fd(self, di: _Direction, side: str) -> _Outcome:
        name = self.d.reverse_name if side == "rev" else self.d.forward_name
        fd = di.fd
        if side == "rev":
            if di.rev_error:
                return _Outcome(FAIL, di.rev_error)
            terms = di.rev * di.v
        else:
            if di.fwd_missing:
                return _Outcome(NOT_APPLICABLE, di.fwd_missing)
            if di.fwd_error:
                return _Outcome(FAIL, di.fwd_error)
            terms = di.u * di.fwd
        if isinstance(fd, str):
            return _Outcome(INCONCLUSIVE, fd)
        if fd.kink:
            return _Outcome(INCONCLUSIVE, fd.kink)
        what = "⟨Jᵀu, v⟩" if side == "rev" else "⟨u, J v⟩"
        actual = _sum(terms)
        err = fd.central_err
        if not _resolved(fd):  # before a rule's nan or inf is judged: it contradicts nothing here
            return _Outcome(
                INCONCLUSIVE,
                f"finite differences are not accurate enough here: the Richardson error estimate does not "
                f"shrink below {err:.2g} (relative {_rel(err, abs(fd.central)):.2g})"
                + ("" if math.isfinite(actual) else f"; {what} from {name} is {actual}"),
            )
        if not math.isfinite(actual):
            return _Outcome(FAIL, f"{what} from {name} is {actual}", expected=fd.central, actual=actual)
        size = max(math.fsum(np.abs(terms)), abs(fd.central))
        rtol, noisy = self.noise_rtol(di)
        if rtol > MAX_RTOL:
            return _Outcome(INCONCLUSIVE, f"{noisy}: too noisy to judge derivatives")
        diff = abs(actual - fd.central)
        low_tol, low_why = self.low_allowance(di, size)
        tol = max(K * err, rtol * size, low_tol)
        if diff > tol:
            moved = K * self.jitter(side, di, fd.central, tol)
            tol = max(tol, min(moved, MAX_RTOL * size))  # the rule's own variation widens it so far only
            if tol < diff <= moved:
                return _Outcome(INCONCLUSIVE, _ill_conditioned(what, name, moved, size))
        kw = dict(
            expected=fd.central,
            actual=actual,
            abs_err=diff,
            rel_err=_rel(diff, abs(fd.central)),
            rel_tol=_rel(tol, abs(fd.central)),
            tolerance=f"max({K:g} × FD error estimate {err:.2g}, {rtol:.2g} × size {size:.3g}, {K:g} × jitter"
            f"{low_why}) = {tol:.2g}" + (f" ({noisy})" if noisy else ""),
        )
        ulps = self.ulps(diff, fd.central, size)
        if diff <= tol:
            return _Outcome(PASS, f"{what} from {name}{ulps} agrees with the finite differences", **kw)
        detail = f"{what} = {actual:.15g} from {name}{ulps}, but finite differences give {fd.central:.15g} ± {err:.2g}"
        if side == "rev" and self.args.n <= POSITIONS_MAX:
            grad, gerr = self.coordinate_fd(di.u)
            bad = [
                k
                for k in range(self.args.n)
                if math.isfinite(grad[k])
                and abs(di.rev[k] - grad[k]) > max(K * gerr[k], 1e-6 * (abs(grad[k]) + abs(di.rev[k])))
            ]
            kw["positions"] = [self.args.position(k) for k in bad]
            kw["expected"] = self._shaped(grad)
            kw["actual"] = self._shaped(di.rev)
            detail += " (below, per input element: finite differences of ⟨u, f⟩ against Jᵀu)"
        return _Outcome(FAIL, detail, **kw)

    def _shaped(self, flat: np.ndarray) -> Any:
        pieces = self.args.split(flat)
        return pieces[0] if len(pieces) == 1 else tuple(pieces)

    def dot(self, di: _Direction) -> _Outcome:
        if di.fwd_missing:
            return _Outcome(NOT_APPLICABLE, di.fwd_missing)
        if di.rev_error:
            return _Outcome(FAIL, di.rev_error)
        if di.fwd_error:
            return _Outcome(FAIL, di.fwd_error)
        if isinstance(di.fd, FiniteDifference) and di.fd.kink:
            return _Outcome(INCONCLUSIVE, di.fd.kink + "; forward and reverse mode may pick different sides")
        rev_terms, fwd_terms = di.rev * di.v, di.u * di.fwd
        a, b = _sum(rev_terms), _sum(fwd_terms)
        if not (math.isfinite(a) and math.isfinite(b)):
            sides = [
                f"{w} = {val} from {n}"
                for w, val, n in (("⟨Jᵀu, v⟩", a, self.d.reverse_name), ("⟨u, J v⟩", b, self.d.forward_name))
                if not math.isfinite(val)
            ]
            if _resolved(di.fd):
                why = f"{' and '.join(sides)}, where finite differences give {di.fd.central:.15g}"
                return _Outcome(FAIL, why, expected=b, actual=a)
            return _Outcome(INCONCLUSIVE, f"{' and '.join(sides)}, where finite differences resolve no derivative")
        size = max(math.fsum(np.abs(rev_terms)), math.fsum(np.abs(fwd_terms)))
        diff = abs(a - b)
        rtol, noisy = self.noise_rtol(di)
        rtol = DOT_RTOL if not noisy else rtol
        if rtol > MAX_RTOL:
            return _Outcome(INCONCLUSIVE, f"{noisy}: too noisy to judge derivatives")
        low_tol, low_why = self.low_allowance(di, size)
        tol = max(rtol * size, 2 * low_tol)  # both modes round in the lower precision
        if not diff <= tol:
            moved = K * (self.jitter("rev", di) + self.jitter("fwd", di))
            tol = max(tol, min(moved, MAX_RTOL * size))
            if tol < diff <= moved:
                return _Outcome(INCONCLUSIVE, _ill_conditioned("⟨Jᵀu, v⟩ - ⟨u, J v⟩", "the two modes", moved, size))
        kw = dict(
            expected=b,
            actual=a,
            abs_err=diff,
            rel_err=_rel(diff, abs(b)),
            rel_tol=_rel(tol, abs(b)),
            tolerance=f"max({rtol:.2g} × size {size:.3g}, {K:g} × jitter{low_why}) = {tol:.2g}"
            + (f" ({noisy})" if noisy else ""),
        )
        if diff <= tol:
            return _Outcome(PASS, "⟨Jᵀu, v⟩ (reverse) = ⟨u, J v⟩ (forward)", **kw)
        return _Outcome(
            FAIL,
            f"⟨Jᵀu, v⟩ = {a:.15g} from {self.d.reverse_name} but ⟨u, J v⟩ = {b:.15g} from {self.d.forward_name}",
            **kw,
        )


def _at_kink(o: _Outcome, di: _Direction) -> bool:
    """Whether a direction is judged element by element: its differences met a kink, or resolved
    nothing (a jump of a first-order pass at a kink of f does not look like a kink: its quotients
    diverge on both sides)."""
    return (
        o.status == INCONCLUSIVE and isinstance(di.fd, FiniteDifference) and (bool(di.fd.kink) or not _resolved(di.fd))
    )


def _per_element(checker: _Checker, o: _Outcome, di: _Direction, side: str) -> _Outcome:
    """The direction's outcome judged element by element where `_at_kink` says so; an unresolved
    direction keeps its own reason when the elements decide nothing either."""
    if not _at_kink(o, di):
        return o
    values = di.rev if side == "rev" else di.fwd
    if not di.fd.kink and (values is None or not np.all(np.isfinite(values))):
        return o  # a rule's nan or inf where the differences resolve nothing contradicts nothing
    judged = checker.per_element(di, side)
    return o if judged.status == INCONCLUSIVE and not di.fd.kink else judged


def _ratio(err: float, tol: float) -> float:
    return err / tol if tol else (math.inf if err else 0.0)


def _aggregate(label: str, check: str, outcomes: list[_Outcome], dirs: list[_Direction]) -> Verdict:
    """One verdict from the per-direction outcomes: any fail fails, all pass pass."""
    n = len(outcomes)
    for i, (o, di) in enumerate(zip(outcomes, dirs)):
        if o.status == FAIL:
            fields = {k: getattr(o, k) for k in ("expected", "actual", "abs_err", "rel_err", "tolerance", "positions")}
            where = f" (cotangent on {di.what})" if di.what else ""
            return Verdict(label, check, FAIL, f"direction {i + 1} of {n}{where}: {o.detail}", cotangent=di.u, **fields)
    statuses = {o.status for o in outcomes}
    if statuses == {PASS}:
        judged = [o for o in outcomes if o.rel_err is not None and o.rel_tol is not None]
        worst = max(judged, key=lambda o: _ratio(o.rel_err, o.rel_tol)) if judged else outcomes[0]
        errs = f" (largest relative error {worst.rel_err:.2g}, its tolerance {worst.rel_tol:.2g})" if judged else ""
        return Verdict(
            label,
            check,
            PASS,
            f"{worst.detail} in {n}/{n} directions{errs}",
            abs_err=worst.abs_err,
            rel_err=worst.rel_err,
            tolerance=worst.tolerance,
        )
    if statuses == {NOT_APPLICABLE}:
        return Verdict(label, check, NOT_APPLICABLE, outcomes[0].detail)
    reasons: dict[str, list[str]] = {}  # kind of reason -> its details
    for o in outcomes:
        if o.status != PASS:
            reasons.setdefault(o.detail.split(":")[0], []).append(o.detail)
    passes = sum(o.status == PASS for o in outcomes)
    detail = "; ".join(f"{ds[0]} ({len(ds)}/{n} directions)" if n > 1 else ds[0] for ds in reasons.values())
    if passes:
        detail += f"; passed in {passes}/{n}"
    return Verdict(label, check, INCONCLUSIVE, detail)


# -- the result ----------------------------------------------------------------------------------


@dataclass
class FunctionCheckResult(Verdicts):
    """Everything one `check_function` found: one verdict per check, and what they were computed on."""

    function: str
    framework: str
    arguments: list[str]
    output: str
    seed: int
    directions: int
    verdicts: list[Verdict]
    #: The name of every differentiated element (`x0['w'][1]`), when there are at most POSITIONS_MAX.
    elements: list[str] = field(default_factory=list)

    def verdict(self, check: str) -> Verdict:
        for v in self.verdicts:
            if v.oracle == check:
                return v
        raise KeyError(check)

    def status(self, check: str) -> str:
        return self.verdict(check).status

    def table(self) -> str:
        cell = {PASS: "pass", FAIL: "FAIL", INCONCLUSIVE: "inconclusive", NOT_APPLICABLE: "n/a"}
        width = max(len(v.oracle) for v in self.verdicts) if self.verdicts else 5
        lines = [f"{'check'.ljust(width)}  {'verdict'.ljust(12)}  detail"]
        for v in self.verdicts:  # cut at a word: never half a number (the whole detail follows the table)
            lines.append(f"{v.oracle.ljust(width)}  {cell[v.status].ljust(12)}  {clip(v.detail, 90)}".rstrip())
        return "\n".join(lines)

    def report(self, details: str = "all") -> str:
        """Header, verdict table, then each verdict that is not a pass (details="failures": fails only)."""
        c = self.counts()
        lines = [
            f"check_function: {self.function} (framework={self.framework})",
            f"  arguments: {', '.join(self.arguments)}",
            f"  output: {self.output}",
            f"  seed {self.seed}, {self.directions} random direction pair(s) (u, v)",
            "",
            self.table(),
            "",
            ", ".join(f"{c[s]} {STATUS_LABELS[s]}" for s in STATUSES),
        ]
        shown = (FAIL,) if details == "failures" else (FAIL, INCONCLUSIVE, NOT_APPLICABLE)
        for v in self.verdicts:
            if v.status in shown:
                lines += ["", v.describe()]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.report()


# -- the API -------------------------------------------------------------------------------------


def check_function(
    f: Callable,
    *example_args: Any,
    framework: str,
    vjp: Callable | None = None,
    jvp: Callable | None = None,
    argnums: int | Sequence[int] | None = None,
    seed: int = 0,
    directions: int = 3,
    checks: Sequence[str] | None = None,
    nondiff_outputs: Sequence[int] = (),
    per_output: bool = True,
    kink_rule: str = "hull",
    timeout: float | None = TIMEOUT,
    nondeterministic: float = 0.0,
    order: int | None = None,
) -> FunctionCheckResult:
    """Check the gradient of `f` at `example_args` (see the module docstring); one verdict per check.
    `nondiff_outputs`: output positions (leaves, in order) left out on both sides; `per_output`:
    with several outputs, also one direction with the cotangent on each output alone; `kink_rule`:
    at a kink the rule's derivative must be one active piece's ("piece") or in their convex hull
    ("hull", the default: torch and JAX document subgradients such as abs'(0) = 0 and even
    shares at ties); `timeout`: seconds one call of f or of its reverse or forward pass may take
    before every check is inconclusive (f then runs on a worker thread: `interrupt.run_watched`;
    None runs it on the caller's thread with no limit); `nondeterministic`: how far (relative to
    its largest element) two runs of a rule at the same point may differ (0: to a few ulps);
    `order`: 2 adds the second-order check `fd2` (`function_order`), 1 never, None (the default)
    where f claims it with a custom rule (a torch Function not marked once_differentiable, a JAX
    custom_vjp / custom_jvp)."""
    if framework not in FRAMEWORKS:
        raise ValueError(f"unknown framework {framework!r}; frameworks: {', '.join(FRAMEWORKS)}")
    if framework == "numpy" and vjp is None:
        raise ValueError("framework='numpy' has no reverse mode of its own: pass the rule under test as vjp=")
    if order not in (None, 1, 2):
        raise ValueError(f"order must be 1, 2 or None (second order where f claims it), got {order!r}")
    if checks is not None and SECOND in checks:
        order = 2 if order is None else order
    elif checks is not None:
        order = 1
    checks = [c for c in (CHECKS if checks is None else checks) if c != SECOND]
    for c in checks:
        if c not in CHECKS:
            raise ValueError(f"unknown check {c!r}; checks: {', '.join((*CHECKS, SECOND))}")
    _check_int("directions", directions, 1, DIRECTIONS_MAX)
    _check_int("seed", seed, 0, None)
    for j in nondiff_outputs:
        _check_int("nondiff_outputs", j, 0, None)
    if timeout is not None and not (isinstance(timeout, int | float) and 0 < timeout < math.inf):
        raise ValueError(f"timeout must be a positive number of seconds or None, got {timeout!r}")
    if not (isinstance(nondeterministic, int | float) and 0 <= nondeterministic < math.inf):
        raise ValueError(f"nondeterministic must be a non-negative relative tolerance, got {nondeterministic!r}")
    if kink_rule not in ("piece", "hull"):
        raise ValueError(f"unknown kink_rule {kink_rule!r}; one of piece, hull")
    label = framework + (" + vjp=" if vjp is not None else "")
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
    if isinstance(getattr(f, "__self__", None), type):  # e.g. a torch.autograd.Function's apply
        name = f"{f.__self__.__name__}.{f.__name__}"
    try:
        args = _Args(example_args, argnums, framework)
        driver = _DRIVERS[framework](f, args, vjp, jvp)
    except _NotApplicable as exc:
        result = FunctionCheckResult(name, framework, [], "", seed, directions, [])
        result.verdicts = [Verdict(label, c, NOT_APPLICABLE, str(exc)) for c in checks]
        return result
    driver.nondiff = tuple(nondiff_outputs)
    driver.nondeterministic = float(nondeterministic)
    driver.watch = CallWatch(timeout)
    try:
        return run_watched(
            lambda: _judge(driver, name, label, checks, seed, directions, per_output, kink_rule, order), driver.watch
        )
    except TimedOut as exc:
        result = FunctionCheckResult(name, framework, args.describe(), "", seed, directions, [])
        why = f"timeout: {exc} (timeout={timeout:g}); nothing was judged"
        result.verdicts = [Verdict(label, c, INCONCLUSIVE, why) for c in checks]
        return result


def _check_int(name: str, value: Any, low: int, high: int | None) -> None:
    """A clear ValueError naming the parameter, its limits and its value when it is out of them."""
    ok = isinstance(value, int | np.integer) and not isinstance(value, bool)
    if not ok or value < low or (high is not None and value > high):
        limits = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{name} must be an integer {limits}, got {value!r}")


def _judge(
    driver: _Driver,
    name: str,
    label: str,
    checks: list[str],
    seed: int,
    directions: int,
    per_output: bool,
    kink_rule: str,
    order: int | None = 1,
) -> FunctionCheckResult:
    """The checks of `check_function`: everything that runs the user's code."""
    args = driver.args
    try:
        checker = _Checker(driver, seed, directions, per_output, kink_rule)
    except _NotApplicable as exc:
        result = FunctionCheckResult(name, driver.framework, [], "", seed, directions, [])
        result.verdicts = [Verdict(label, c, NOT_APPLICABLE, str(exc)) for c in checks]
        return result
    result = FunctionCheckResult(name, driver.framework, args.describe(), driver.out.describe(), seed, directions, [])
    if args.n <= POSITIONS_MAX:
        result.elements = [args.position(k) for k in range(args.n)]
    if not driver.out.diff_mask.any():
        why = "f has no output to differentiate" + (" (all are non-differentiable)" if driver.out.m else "")
        result.verdicts = [Verdict(label, c, NOT_APPLICABLE, why) for c in checks]
        return result
    if not np.all(np.isfinite(checker.y0[driver.out.diff_mask])):
        result.verdicts = [Verdict(label, c, INCONCLUSIVE, "f is not finite at the example arguments") for c in checks]
        return result
    dirs = checker.measure(want_forward="forward" in checks or "dot" in checks)
    for c in checks:
        if c == "fd":
            outcomes = [checker.against_fd(di, "rev") for di in dirs]
        elif c == "forward":
            outcomes = [checker.against_fd(di, "fwd") for di in dirs]
        else:
            outcomes = [checker.dot(di) for di in dirs]
        if c != "dot" and args.n <= POSITIONS_MAX:  # a kink along v: each element judged apart
            side = "rev" if c == "fd" else "fwd"
            outcomes = [_per_element(checker, o, di, side) for o, di in zip(outcomes, dirs, strict=True)]
        result.verdicts.append(_aggregate(label, c, outcomes, dirs))
    if order != 1:
        from .function_order import second_order

        def judge(g: Callable, example: list[Any]) -> Verdict:
            inner = type(driver)(g, _Args(example, None, driver.framework), None, None)
            inner.trust_marks, inner.watch = False, driver.watch
            return _judge(inner, "first-order pass", label, ["fd"], seed, directions, False, kink_rule).verdicts[0]

        result.verdicts += second_order(driver, label, seed, order, judge)
    return result


def assert_function_gradients(
    f: Callable, *example_args: Any, framework: str, strict: bool = False, **kwargs: Any
) -> FunctionCheckResult:
    """`check_function`, raising AssertionError with the report when a check fails (with
    `strict=True` also when one is inconclusive); returns the result otherwise."""
    res = check_function(f, *example_args, framework=framework, **kwargs)
    if not res.ok or (strict and any(v.status == INCONCLUSIVE for v in res.verdicts)):
        raise AssertionError(assertion_text(res))
    return res


def assertion_text(res: FunctionCheckResult) -> str:
    """An assertion message that reads like a diff: one line naming the failing checks, then for
    each its reason and, where it names input elements, a table of expected (finite differences)
    against actual (the rule) per element that differs; the full report follows."""
    bad = [v for v in res.verdicts if v.status == FAIL] or [v for v in res.verdicts if v.status == INCONCLUSIVE]
    what = "failed" if any(v.status == FAIL for v in bad) else "inconclusive (strict=True)"
    lines = [f"check_function({res.function}, framework={res.framework}): {', '.join(v.oracle for v in bad)} {what}"]
    for v in bad:
        lines.append(f"  {v.oracle}: {v.detail}")
        lines += _element_diff(res.elements, v)
    return "\n".join(lines) + "\n\n" + res.report()


def _element_diff(names: list[str], v: Verdict) -> list[str]:
    """`- expected` / `+ actual` lines for the elements a failing verdict names."""
    if not v.positions or not names or v.expected is None or v.actual is None:
        return []
    flat = [
        np.concatenate([np.ravel(real_view(p)) for p in (x if isinstance(x, tuple) else (x,))])
        for x in (v.expected, v.actual)
    ]
    if any(len(a) != len(names) for a in flat):
        return []
    width = max(len(p) for p in v.positions)
    out = []
    for p in v.positions:
        k = names.index(p)
        out.append(f"    - {p.ljust(width)}  {flat[0][k]:>20.12g}   (finite differences)")
        out.append(f"    + {p.ljust(width)}  {flat[1][k]:>20.12g}   (the rule)")
    return out


def function_args(
    *shapes: tuple[int, ...], min_value: float = -2.0, max_value: float = 2.0, elements: Any = None
) -> Any:
    """A Hypothesis strategy for a tuple of float64 example arguments with the given shapes
    (`()` for a 0-d array), elements in [min_value, max_value] unless `elements` is given."""
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    elems = elements or st.floats(min_value, max_value, allow_nan=False, allow_infinity=False, width=64)
    return st.tuples(*(hnp.arrays(np.float64, shape, elements=elems) for shape in shapes))
