"""Engines `tensorflow`, `tensorflow-function`, `tensorflow-xla`: TensorFlow's reverse mode
(`tf.GradientTape`) and forward mode (`tf.autodiff.ForwardAccumulator`) on float64 tensors.

Arrays run as TensorFlow operations (`namespace.py`; out-of-range indices masked, since TF raises on
them on CPU). Three ways a TF user runs a function:

- `tensorflow`: eagerly, op by op, under a persistent `tf.GradientTape`;
- `tensorflow-function`: the whole program as one `tf.function` graph, the tape around its call
  (TF differentiates the function-call op: its backward is a graph of its own);
- `tensorflow-xla`: the same with `tf.function(jit_compile=True)`, forward and backward compiled
  by XLA.

Under `tf.function` there are no concrete values: the comparisons of an eager run are recorded and
replayed while TF traces (`tensor.Branches`, as for `jax-jit`), so the graph is the straight-line
program of that input's branch path.

Forward mode (`jvp`) is `tf.autodiff.ForwardAccumulator`, which builds its JVPs from the backward
functions (the "double-backward" trick): forward agreeing with reverse proves little, so the
consistency oracle holds both to central differences of TF's own primal.

Derivative operators inside a program (seed 001, feature "nested") are nested TF transforms on the
list of the reals of the argument: `vjp f x dy` a `tf.GradientTape` (`nested_vjp`), `jvp f x dx` a
`tf.autodiff.ForwardAccumulator` (`nested_jvp`), `grad` the tape with dy = 1. The inner function's
argument is a fresh node (`tf.identity`), so the inner derivative is taken with respect to that
occurrence only; the engine's outer tape or accumulator records the inner one's computation, which
is how TF nests tapes and accumulators (second order: backward over backward, forward over
backward, forward over forward).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from ...impl.adapters.common import LibraryOps
from ...impl.adapters.specials import install_ops
from ...impl.adapters.tensor import Branches, ForwardMode, TensorEngine, branching_ops, ravel_targets
from ..base import ReproInfo
from . import lowerings, namespace
from .namespace import TensorflowNamespace, _t
from .repro import DRIVER, FORWARD
from .specials import IMPORTS, TENSORFLOW

ZERO = tf.UnconnectedGradients.ZERO


def _dense(g: Any) -> Any:
    """A gradient as a dense tensor (a gradient through `tf.gather` comes as `tf.IndexedSlices`)."""
    return tf.convert_to_tensor(g)


def _shaped(d: Any, like: Any) -> Any:
    """A cotangent or tangent as a float64 tensor of `like`'s shape."""
    return tf.reshape(_t(d), tf.shape(like))


def nested_vjp(f: Callable[[list], list], xs: list, dys: list) -> list:
    """Jᵀ·dys of `f` (list of scalars and tensors -> list of them) at `xs`, by a `tf.GradientTape`
    around a fresh node per argument; an enclosing tape or accumulator records this computation and
    differentiates through it. (The engine's own code, copied into a finding's `repro.py`.)"""
    ins = [tf.identity(_t(x)) for x in xs]
    with tf.GradientTape() as tape:
        tape.watch(ins)
        ys = [_t(y) for y in f(ins)]
    out = [_shaped(d, y) for y, d in zip(ys, dys, strict=True)]
    return [
        _dense(g)
        for g in tape.gradient(ys, ins, output_gradients=out, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    ]


def nested_jvp(f: Callable[[list], list], xs: list, dxs: list) -> list:
    """J·dxs of `f` at `xs` by a `tf.autodiff.ForwardAccumulator` around a fresh node per argument."""
    ins = [tf.identity(_t(x)) for x in xs]
    with tf.autodiff.ForwardAccumulator(ins, [_shaped(d, x) for x, d in zip(ins, dxs, strict=True)]) as acc:
        ys = [_t(y) for y in f(ins)]
    return [acc.jvp(y, unconnected_gradients=tf.UnconnectedGradients.ZERO) for y in ys]


class TensorflowOps(LibraryOps):
    """The scalar ops over TF float64 scalars (`tf.math`)."""

    lib = tf.math
    lib_vjp = staticmethod(nested_vjp)
    lib_jvp = staticmethod(nested_jvp)

    def lift(self, r: float) -> Any:
        return tf.constant(r, dtype=tf.float64)

    def primal(self, a: Any) -> float:
        return float(a.numpy()) if hasattr(a, "numpy") else float(a)

    def atan(self, a: Any) -> Any:
        return tf.math.atan(a)


class TensorflowEngine(ForwardMode, TensorEngine):
    """Eager TensorFlow: a persistent `tf.GradientTape` around the program, op by op."""

    name = "tensorflow"
    library = "tensorflow"
    semantics = "language: explicit masking"
    #: As for JAX: array code for 1 program in 2 (fuzz/mix.py), where the table's calls occur.
    mix_share = {"arrays": (1, 2)}
    #: `tf.function` options (None: eager).
    function: dict[str, Any] | None = None

    def __init__(self) -> None:
        self.branches = Branches()

    def ops(self) -> LibraryOps:
        return branching_ops(TensorflowOps, self.branches)

    def namespace(self) -> Any:
        return TensorflowNamespace(self.branches)

    def worker_setup(self) -> None:
        """In a campaign worker: TF's log notices (a `tf.function` retraced per program and input)
        are not the campaign's output, and one thread per op suits a worker per core."""
        tf.get_logger().setLevel("ERROR")
        tf.autograph.set_verbosity(0)
        try:
            tf.config.threading.set_intra_op_parallelism_threads(1)
            tf.config.threading.set_inter_op_parallelism_threads(1)
        except RuntimeError:  # TF's runtime already started in this process: keep its threads
            pass

    def to_lib(self, leaf: Any) -> Any:
        return tf.constant(np.asarray(leaf, dtype=np.float64), dtype=tf.float64)

    def to_np(self, t: Any) -> np.ndarray:
        if isinstance(t, tf.IndexedSlices):
            t = _dense(t)
        return np.asarray(t.numpy() if hasattr(t, "numpy") else t, dtype=np.float64)

    def out_leaf(self, o: Any) -> Any:
        return _t(o)

    def vjp_leaves(self, fn: Callable[[list], list], leaves: list) -> tuple[list, Callable[[list], list]]:
        xs = [tf.identity(x) for x in leaves]
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(xs)
            ys = fn(xs)

        def back(dy: list) -> list:
            if not ys:
                return [tf.zeros_like(x) for x in xs]
            out = [_shaped(d, y) for y, d in zip(ys, dy, strict=True)]
            return [_dense(g) for g in tape.gradient(ys, xs, output_gradients=out, unconnected_gradients=ZERO)]

        return ys, back

    def jvp_leaves(self, fn: Callable[[list], list], leaves: list, tangents: list) -> tuple[list, list]:
        with tf.autodiff.ForwardAccumulator(leaves, [_shaped(t, x) for x, t in zip(leaves, tangents)]) as acc:
            ys = fn(leaves)
        return ys, [acc.jvp(y, unconnected_gradients=ZERO) for y in ys]

    def _leaves_fn(self, prog: Any, x: Any, holder: dict[str, Any]) -> Callable[[list], list]:
        if self.function is None:
            return super()._leaves_fn(prog, x, holder)
        # autograph off: the program's Python is straight-line once its branches are replayed
        return tf.function(self._replayed(prog, x, holder), autograph=False, **self.function)

    def lowering_table(self) -> Any:
        return lowerings.LOWERINGS

    def lowering_namespace(self) -> Any:
        return lowerings.TensorflowLoweringNamespace(self.branches)

    def repro_info(self) -> ReproInfo:
        helpers = [
            namespace._t,
            namespace._nd,
            namespace._select,
            ravel_targets,
            lowerings._ids,
            lowerings._touched,
            lowerings._zero_untouched,
        ]
        if self.function is None:
            f, what = "f", "tf.GradientTape, eager"
        else:
            opts = ", ".join(f"{k}={v!r}" for k, v in self.function.items())
            f, what = f"tf.function(f{', ' if opts else ''}{opts})", f"tf.GradientTape around tf.function({opts})"
        return {
            "lift": lambda t: f"tf.constant({t}, dtype=tf.float64)",
            "lib": "tf.math",
            "atan": "tf.math.atan",
            "imports": IMPORTS + "\n\n" + "\n\n".join(inspect.getsource(fn) for fn in helpers),
            "driver": DRIVER.format(f=f),
            "forward": FORWARD,
            "what": f"{what}, {self.semantics}",
            "needs": f"tensorflow {tf.__version__}",
            "nested": [_dense, _shaped, nested_vjp, nested_jvp],
        }


class TensorflowFunctionEngine(TensorflowEngine):
    """The program as one `tf.function` graph (branch outcomes replayed from an eager run)."""

    name = "tensorflow-function"
    function = {}  # noqa: RUF012 - read only


class TensorflowXlaEngine(TensorflowEngine):
    """The program as one `tf.function(jit_compile=True)`: XLA compiles its forward and backward."""

    name = "tensorflow-xla"
    function = {"jit_compile": True}  # noqa: RUF012 - read only

    def lowering_table(self) -> Any:
        return lowerings.XLA_LOWERINGS


# The special functions (issue #25) through TensorFlow's own calls (specials.py).
install_ops(TensorflowOps, TENSORFLOW)
