"""Engine `autograd`: HIPS autograd's reverse mode (`autograd.make_vjp`) on `autograd.numpy` arrays.

Arrays run as `autograd.numpy` operations (`advalidate.impl.adapters.tensor`). autograd has no
out-of-range modes, so the language's semantics are mapped by explicit masking (`to_python`'s array
runtime: out-of-range reads clipped and replaced with 0 by `anp.where`, out-of-range scatter
sources removed). autograd arrays cannot be mutated in place, so a scatter is a product with a
one-hot matrix (`onehot.T @ values`: repeated targets add through autograd's `dot` rule) and a
scatterMax is `anp.max` over `anp.where(onehot, values, -inf)`. A gather is advanced indexing
`a[idx]` (whose VJP accumulates repeated reads with `np.add.at`), `tr` is `anp.transpose`,
`maxOuter` / `minOuter` are `anp.max` / `anp.min` (ties share the cotangent: a kink, inconclusive).

The input's real leaves are packed into one vector (autograd differentiates one array argument) and
sliced apart inside the differentiated function; the output's leaves are concatenated.

Derivative operators inside a program (seed 001, feature "nested") are autograd's own, on the
vector of the reals of their argument: `vjp f x dy` is `make_vjp`, `grad f x` is `autograd.grad`,
`jvp f x dx` is autograd's forward mode `make_jvp` (`nested_vjp`, `nested_grad`, `nested_jvp`).
autograd boxes the values of each trace with the trace's own id, so the engine's outer `make_vjp`
differentiates through the inner operators and the perturbations of nested operators stay apart.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import autograd.numpy as anp
import numpy as np
from autograd import grad, make_vjp
from autograd.differential_operators import make_jvp
from autograd.tracer import Box, getval

from ...impl.adapters.common import LibraryOps
from ...impl.adapters.specials import install_ops
from ...impl.adapters.tensor import TensorEngine, ravel_targets
from ...impl.protocol import ReproInfo
from .namespace import AutogradNamespace
from .repro import DRIVER, FORWARD
from .specials import AUTOGRAD, IMPORTS


def _pack(parts: list) -> Any:
    """The parts (scalars and arrays) as one vector, row-major, as autograd's operators take them."""
    return anp.concatenate([anp.reshape(p, (-1,)) for p in parts]) if parts else anp.zeros(0)


def _unpack(v: Any, like: list) -> list:
    """`v` cut back into parts shaped like `like` (a scalar part is an element of `v`)."""
    out, k = [], 0
    for p in like:
        shape = np.shape(getval(p))
        n = math.prod(shape)
        out.append(v[k] if not shape else anp.reshape(v[k : k + n], shape))
        k += n
    return out


def _vector_fn(f: Callable[[list], list], xs: list, holder: dict) -> Callable[[Any], Any]:
    """`f` (list of parts -> list of parts) as a function of one vector to one vector; the
    output's parts are kept in `holder["ys"]` for their shapes."""

    def fn(v: Any) -> Any:
        ys = holder["ys"] = f(_unpack(v, xs))
        return _pack(ys)

    return fn


def nested_vjp(f: Callable[[list], list], xs: list, dys: list) -> list:
    """Jᵀ·dys of `f` (list of scalars and arrays -> list of them) at `xs` by `autograd.make_vjp`,
    on the parts packed into one vector; any argument may be boxed by an enclosing derivative,
    which then differentiates through this one. (The adapter's own code, copied into a finding's
    `repro.py`.)"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "output seems independent of input": a constant f
        pull, _ = make_vjp(_vector_fn(f, xs, {}))(_pack(xs))
        g = pull(_pack(dys))
    return _unpack(g, xs)


def nested_grad(f: Callable[[list], list], xs: list) -> list:
    """The gradient of the scalar `f` (its one output) at `xs` by `autograd.grad`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = grad(lambda v: _vector_fn(f, xs, {})(v)[0])(_pack(xs))
    return _unpack(g, xs)


def nested_jvp(f: Callable[[list], list], xs: list, dxs: list) -> list:
    """J·dxs of `f` at `xs` by autograd's forward mode (`make_jvp`)."""
    holder: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, t = make_jvp(_vector_fn(f, xs, holder))(_pack(xs))(_pack(dxs))
    return _unpack(t, holder["ys"])


class AutogradOps(LibraryOps):
    lib = anp
    lib_vjp = staticmethod(nested_vjp)
    lib_grad = staticmethod(nested_grad)
    lib_jvp = staticmethod(nested_jvp)

    def is_grad_seed(self, dy: Any) -> bool:
        return not isinstance(dy, Box) and float(dy) == 1.0

    def primal(self, a: Any) -> float:
        return float(getval(a))


class AutogradEngine(TensorEngine):
    name = "autograd"
    library = "autograd"
    semantics = "language: explicit masking"

    def ops(self) -> LibraryOps:
        return AutogradOps()

    def worker_setup(self) -> None:
        """In a campaign worker: numpy's warnings about nan or inf inside autograd's traced calls
        (at a kink, a pole) are not the campaign's output; the oracles judge those values."""
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"autograd\.")

    def namespace(self) -> Any:
        return AutogradNamespace()

    def to_lib(self, leaf: Any) -> Any:
        return np.asarray(leaf, dtype=np.float64)

    def to_np(self, t: Any) -> np.ndarray:
        return np.asarray(getval(t), dtype=np.float64)

    def vjp_leaves(self, fn: Callable[[list], list], leaves: list) -> tuple[list, Callable[[list], list]]:
        shapes = [np.shape(leaf) for leaf in leaves]
        sizes = [math.prod(s) for s in shapes]
        out_shapes: list[tuple] = []

        def vector_fn(v: Any) -> Any:
            parts, k = [], 0
            for s, n in zip(shapes, sizes, strict=True):
                parts.append(anp.reshape(v[k : k + n], s) if s else v[k])
                k += n
            outs = fn(parts)
            out_shapes[:] = [np.shape(getval(o)) for o in outs]
            if not outs:
                return anp.zeros(0)
            return anp.concatenate([anp.reshape(o, (-1,)) for o in outs])

        v0 = np.concatenate([np.reshape(leaf, -1) for leaf in leaves]) if leaves else np.zeros(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "output seems independent of input" on constant programs
            vjp, ys = make_vjp(vector_fn)(v0)

        def split(flat: np.ndarray, shapes_: list[tuple]) -> list:
            out, k = [], 0
            for s in shapes_:
                n = math.prod(s)
                out.append(np.reshape(flat[k : k + n], s))
                k += n
            return out

        def back(dy: list) -> list:
            d = np.concatenate([np.reshape(np.asarray(t, dtype=float), -1) for t in dy]) if dy else np.zeros(0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                g = vjp(d) if len(v0) else np.zeros(0)
            return split(np.reshape(np.asarray(g, dtype=float), -1), shapes)

        return split(np.asarray(ys, dtype=float).reshape(-1), out_shapes), back

    def lowering_table(self) -> Any:
        from .lowerings import LOWERINGS

        return LOWERINGS

    def lowering_namespace(self) -> Any:
        from .lowerings import AutogradLoweringNamespace

        return AutogradLoweringNamespace()

    def repro_info(self) -> ReproInfo:
        import inspect

        return {
            "lift": lambda t: t,
            "lib": "anp",
            "atan": "anp.arctan",
            "imports": IMPORTS + "import math\nimport warnings\n\nimport autograd.numpy as anp\nimport numpy as np\n"
            "from autograd import grad, make_vjp\nfrom autograd.differential_operators import make_jvp\n"
            "from autograd.tracer import getval\n\n\n" + inspect.getsource(ravel_targets),
            "driver": DRIVER,
            "forward": FORWARD,
            "what": "autograd.grad, explicit masking",
            "needs": "autograd",
            "nested": [_pack, _unpack, _vector_fn, nested_vjp, nested_grad, nested_jvp],
        }


# The special functions (issue #25) through autograd's own calls (specials.py).
install_ops(AutogradOps, AUTOGRAD)
