"""check_function's example arguments and f's outputs: which leaves are differentiated, their
shapes and dtypes, and the flat float64 vectors the checks work on (split out of `function`,
issue #41: the drivers and the checks both read them)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .function_precision import UNIT_ROUNDOFF, dtype_name
from .function_precision import describe as describe_dtypes
from .function_trees import _leaves, _pack, _to_numpy, flatten_arg, from_real, real_view


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
    return isinstance(a, np.ndarray | np.generic) and (a.dtype.kind == "f" or a.dtype.name == "bfloat16")


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
