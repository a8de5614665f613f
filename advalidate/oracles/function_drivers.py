"""check_function's drivers: one per framework, each running f, its reverse pass and its forward
pass on flat float64 vectors, so the checks (`function_checks`) are the same for every framework."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .function_io import _Args, _BadGradient, _NoForward, _NotApplicable, _Outputs, _wide
from .function_trees import _leaves, _pack, _to_numpy, real_view
from .interrupt import CallWatch
from .verdict import clip

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
