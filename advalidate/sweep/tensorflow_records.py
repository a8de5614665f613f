"""TensorFlow's differentiable ops as sweep records (issue #39 item 3): TF has no OpInfo.

Two sources. **Enumerated**: every public function of `tf.math`, `tf.linalg`, `tf.nn`,
`tf.signal` and `tf.image` whose required parameters are all tensors (by name: x, y, input,
features, logits, matrix, rhs, images, …), called on float64 tensors of the module's sample
shapes, on the first domain (`DOMAINS`: real, positive, unit, above-one, near-identity square,
symmetric positive definite) where its primal is finite, deterministic, float64 out, and its
`tf.GradientTape` gradient is registered; an argument TF's gradient does not reach is held
constant. **Designed** (`SPECS`): the calls whose other arguments need values — indices with
duplicates (`tf.gather`, `tf.gather_nd`, `tf.tensor_scatter_nd_*`, `tf.scatter_nd`,
`tf.dynamic_stitch`, the segment ops with repeated ids and an empty segment, `tf.sparse.segment_*`),
reductions along an axis, statistics (`tf.nn.moments`, `weighted_moments`, `batch_normalization`,
`reduce_variance` / `reduce_std`), decompositions on their domains, the complex transforms (FFTs,
logm) on `tf.complex(re, im)`, image ops with their parameters.

The records are float64 and eager; `dtypes` lists float32 and complex128 where the op and its
gradient run there, and the sweep's axes (`axes.py`) copy records into those dtypes and under
`tf.function`. Each sample's variants are the torch sweep's shape-keeping perturbations
(`perturb.py`: off-identity, zero, zeros, large-negative, repeated), kept where the op stays
finite. Every record's `fn` is compiled from its `call_source`, the very text its repro.py
embeds. TF claims every mode for an op with a registered gradient. Draws are seeded by
(seed, op, sample).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from advalidate.sweep.literals import float_literal
from advalidate.sweep.perturb import PERTURBATIONS, keeps_domain
from advalidate.sweep.records import MODES, OpRecord

#: Samples per op (ADVALIDATE_SWEEP_SAMPLES overrides, as for torch).
SAMPLES = 2
SPACES = ("math", "linalg", "nn", "signal", "image")
#: Parameter names that take a tensor (an enumerated op's required parameters must all be these).
TENSOR_PARAMS = frozenset(
    "x y a b q input input_tensor features logits tensor matrix rhs image images img1 img2 signals value t "
    "x1 x2 diagonal operand".split()
)
#: Enumerated names left out: random, I/O, index/boolean results, samplers, windows, constructors.
EXCLUDED = re.compile(
    r"random|decode|encode|jpeg|sampler|dropout|non_max|bounding_box|candidate|ctc|approx_|bincount|"
    r"confusion|sobol|^is_|equal|greater|less|logical|^arg|count_nonzero|in_top_k|invert_perm|window|"
    r"^eye$|mel_weight|^convert_image_dtype$|^(floor|ceil|round|rint|sign)$|zero_fraction|matrix_rank|"
    r"accumulate_n|add_n|global_norm|einsum|stateless"
)
#: Shapes of an enumerated op's samples, by module.
SHAPES = {
    "math": ((2, 3), (4,)),
    "nn": ((2, 3), (4,)),
    "linalg": ((3, 3), (2, 3, 3)),
    "signal": ((8,), (2, 8)),
    "image": ((4, 4, 3), (1, 4, 4, 3)),
}
MODES_ALL = frozenset(MODES)
VARIANTS = ("off-identity", "zero", "zeros", "large-negative", "repeated")


def _spd(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    a = rng.normal(0.0, 0.5, shape)
    n = shape[-1]
    return a @ np.swapaxes(a, -1, -2) / n + np.eye(n)


def _square(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.eye(shape[-1]) + rng.normal(0.0, 0.3, shape)


def _lower(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.tril(rng.normal(0.0, 0.3, shape), -1) + np.eye(shape[-1]) * rng.uniform(1.0, 2.0, shape)


def _upper(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.swapaxes(_lower(rng, shape), -1, -2)


def _symmetric(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Well separated eigenvalues (eigh's derivative divides by their gaps)."""
    n = shape[-1]
    q, _ = np.linalg.qr(rng.normal(size=shape))
    lam = np.arange(1.0, n + 1) * 1.5 - n + rng.uniform(-0.2, 0.2, (*shape[:-2], n))
    return q @ (lam[..., :, None] * np.swapaxes(q, -1, -2))


Draw = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]
#: Where an argument lies; an enumerated op takes the first domain on which it is usable.
DOMAINS: dict[str, Draw] = {
    "real": lambda rng, s: rng.normal(0.0, 1.0, s),
    "positive": lambda rng, s: rng.uniform(0.2, 4.0, s),
    "unit": lambda rng, s: rng.uniform(0.1, 0.9, s),
    "above-one": lambda rng, s: rng.uniform(1.2, 5.0, s),
    "square": _square,
    "spd": _spd,
    "symmetric": _symmetric,
    "lower": _lower,
    "upper": _upper,
}
ENUMERATED_DOMAINS = ("real", "positive", "unit", "above-one")
MATRIX_DOMAINS = ("square", "spd")


@dataclass(frozen=True)
class Spec:
    """One designed call: `expr` in args[0]…, each differentiable argument's (domain, shape)."""

    op: str
    expr: str
    args: tuple[tuple[str, tuple[int, ...]], ...]


def _s(op: str, expr: str, *args: tuple[str, tuple[int, ...]]) -> Spec:
    return Spec(op, expr, tuple(args))


R3, R23, R6, M3, V = ("real", (3,)), ("real", (2, 3)), ("real", (6,)), ("square", (3, 3)), ("real", (4,))
IMG = ("unit", (1, 4, 4, 3))
R8, R44 = ("real", (8,)), ("real", (4, 4))
SEG = "[0, 0, 1, 1, 1, 3]"  # sorted, segment 2 empty, repeated ids
USEG = "[2, 0, 2, 1, 0, 2], 4"  # unsorted, segment 3 empty
DUP = "[[1], [1], [3]]"  # scatter indices, one repeated

SPECS: tuple[Spec, ...] = (
    # indices with duplicates: gathers, scatters, stitches, segments
    _s("gather", "tf.gather(args[0], [2, 0, 2, 1, 2])", V),
    _s("gather", "tf.gather(args[0], [1, 1, 0], axis=1)", ("real", (2, 3))),
    _s("gather_nd", "tf.gather_nd(args[0], [[0, 1], [0, 1], [1, 2]])", R23),
    _s("tensor_scatter_nd_update", f"tf.tensor_scatter_nd_update(args[0], {DUP}, args[1])", ("real", (5,)), R3),
    _s("tensor_scatter_nd_add", f"tf.tensor_scatter_nd_add(args[0], {DUP}, args[1])", ("real", (5,)), R3),
    _s("tensor_scatter_nd_sub", f"tf.tensor_scatter_nd_sub(args[0], {DUP}, args[1])", ("real", (5,)), R3),
    _s("tensor_scatter_nd_max", f"tf.tensor_scatter_nd_max(args[0], {DUP}, args[1])", ("real", (5,)), R3),
    _s("tensor_scatter_nd_min", f"tf.tensor_scatter_nd_min(args[0], {DUP}, args[1])", ("real", (5,)), R3),
    _s("scatter_nd", f"tf.scatter_nd({DUP}, args[0], [5])", R3),
    _s("dynamic_stitch", "tf.dynamic_stitch([[0, 2], [1, 2]], [args[0], args[1]])", ("real", (2,)), ("real", (2,))),
    _s("embedding_lookup", "tf.nn.embedding_lookup(args[0], [1, 1, 3])", ("real", (4, 2))),
    *(_s(f"math.segment_{r}", f"tf.math.segment_{r}(args[0], {SEG})", R6) for r in ("sum", "mean", "max", "min")),
    _s("math.segment_prod", f"tf.math.segment_prod(args[0], {SEG})", R6),
    *(
        _s(f"math.unsorted_segment_{r}", f"tf.math.unsorted_segment_{r}(args[0], {USEG})", R6)
        for r in ("sum", "mean", "max", "min", "prod", "sqrt_n")
    ),
    *(
        _s(f"sparse.segment_{r}", f"tf.sparse.segment_{r}(args[0], [0, 0, 2, 1], [0, 1, 1, 2])", ("real", (3, 2)))
        for r in ("sum", "mean", "sqrt_n")
    ),
    # reductions along an axis; cumulative ops
    *(
        _s(f"math.reduce_{r}", f"tf.math.reduce_{r}(args[0], axis=1)", ("real", (2, 4)))
        for r in ("sum", "mean", "prod", "max", "min", "logsumexp", "variance", "std", "euclidean_norm")
    ),
    _s("math.reduce_variance", "tf.math.reduce_variance(args[0], axis=0, keepdims=True)", ("real", (4, 2))),
    _s("math.reduce_prod", "tf.math.reduce_prod(args[0])", ("real", (5,))),
    _s("math.cumprod", "tf.math.cumprod(args[0], exclusive=True, reverse=True)", ("real", (5,))),
    _s("math.cumsum", "tf.math.cumsum(args[0], axis=1, exclusive=True)", R23),
    _s("math.cumulative_logsumexp", "tf.math.cumulative_logsumexp(args[0], reverse=True)", ("real", (5,))),
    # statistics and normalization
    _s("nn.moments", "tf.nn.moments(args[0], axes=[0])", ("real", (4, 2))),
    _s("nn.moments", "tf.nn.moments(args[0], axes=[0, 1], keepdims=True)", ("real", (2, 3))),
    _s("nn.weighted_moments", "tf.nn.weighted_moments(args[0], [0], args[1])", ("real", (4,)), ("positive", (4,))),
    _s("nn.sufficient_statistics", "tf.nn.sufficient_statistics(args[0], [0])", ("real", (4, 2))),
    _s(
        "nn.batch_normalization",
        "tf.nn.batch_normalization(args[0], *tf.nn.moments(args[0], axes=[0]), args[1], args[2], 1e-3)",
        ("real", (4, 2)),
        ("real", (2,)),
        ("positive", (2,)),
    ),
    _s("nn.l2_normalize", "tf.nn.l2_normalize(args[0], axis=1)", R23),
    _s("nn.softmax", "tf.nn.softmax(args[0], axis=0)", R23),
    _s("nn.log_softmax", "tf.nn.log_softmax(args[0], axis=0)", R23),
    _s("nn.local_response_normalization", "tf.nn.local_response_normalization(args[0], 1)", ("real", (1, 2, 2, 4))),
    _s("math.top_k", "tf.math.top_k(args[0], k=2)", ("real", (5,))),
    _s("sort", "tf.sort(args[0], direction='DESCENDING')", ("real", (5,))),
    # losses
    _s(
        "nn.softmax_cross_entropy_with_logits",
        "tf.nn.softmax_cross_entropy_with_logits(args[0], args[1])",
        ("unit", (2, 3)),
        R23,
    ),
    _s(
        "nn.sigmoid_cross_entropy_with_logits",
        "tf.nn.sigmoid_cross_entropy_with_logits(args[0], args[1])",
        ("unit", (2, 3)),
        R23,
    ),
    _s(
        "nn.sparse_softmax_cross_entropy_with_logits",
        "tf.nn.sparse_softmax_cross_entropy_with_logits([0, 2], args[0])",
        R23,
    ),
    _s(
        "nn.weighted_cross_entropy_with_logits",
        "tf.nn.weighted_cross_entropy_with_logits(args[0], args[1], 2.0)",
        ("unit", (2, 3)),
        R23,
    ),
    _s(
        "nn.log_poisson_loss", "tf.nn.log_poisson_loss(args[0], args[1], compute_full_loss=True)", ("positive", (4,)), V
    ),
    # convolutions and pools
    _s("nn.bias_add", "tf.nn.bias_add(args[0], args[1])", R23, R3),
    _s("nn.conv1d", "tf.nn.conv1d(args[0], args[1], 1, 'SAME')", ("real", (1, 5, 2)), ("real", (3, 2, 2))),
    _s("nn.conv2d", "tf.nn.conv2d(args[0], args[1], 1, 'VALID')", ("real", (1, 4, 4, 2)), ("real", (2, 2, 2, 3))),
    _s(
        "nn.depthwise_conv2d",
        "tf.nn.depthwise_conv2d(args[0], args[1], [1, 1, 1, 1], 'SAME')",
        ("real", (1, 3, 3, 2)),
        ("real", (2, 2, 2, 1)),
    ),
    _s(
        "nn.conv2d_transpose",
        "tf.nn.conv2d_transpose(args[0], args[1], [1, 4, 4, 2], 1, 'VALID')",
        ("real", (1, 3, 3, 3)),
        ("real", (2, 2, 2, 3)),
    ),
    _s("nn.avg_pool2d", "tf.nn.avg_pool2d(args[0], 2, 1, 'VALID')", ("real", (1, 3, 3, 1))),
    _s("nn.max_pool2d", "tf.nn.max_pool2d(args[0], 2, 1, 'VALID')", ("real", (1, 3, 3, 1))),
    _s(
        "nn.dilation2d",
        "tf.nn.dilation2d(args[0], args[1], [1, 1, 1, 1], 'VALID', 'NHWC', [1, 1, 1, 1])",
        ("real", (1, 3, 3, 1)),
        ("real", (2, 2, 1)),
    ),
    _s("nn.depth_to_space", "tf.nn.depth_to_space(args[0], 2)", ("real", (1, 1, 1, 4))),
    _s("nn.space_to_depth", "tf.nn.space_to_depth(args[0], 2)", ("real", (1, 2, 2, 1))),
    # linear algebra on its domains
    _s("linalg.cholesky", "tf.linalg.cholesky(args[0])", ("spd", (3, 3))),
    _s("linalg.cholesky_solve", "tf.linalg.cholesky_solve(args[0], args[1])", ("lower", (3, 3)), ("real", (3, 2))),
    _s("linalg.triangular_solve", "tf.linalg.triangular_solve(args[0], args[1])", ("lower", (3, 3)), ("real", (3, 2))),
    _s(
        "linalg.triangular_solve",
        "tf.linalg.triangular_solve(args[0], args[1], lower=False, adjoint=True)",
        ("upper", (3, 3)),
        ("real", (3, 2)),
    ),
    _s("linalg.solve", "tf.linalg.solve(args[0], args[1])", M3, ("real", (3, 2))),
    _s("linalg.inv", "tf.linalg.inv(args[0])", M3),
    _s("linalg.det", "tf.linalg.det(args[0])", M3),
    _s("linalg.slogdet", "tf.linalg.slogdet(args[0])[1]", M3),
    _s("linalg.logdet", "tf.linalg.logdet(args[0])", ("spd", (3, 3))),
    _s("linalg.eigh", "(lambda e: (e[0], e[1] * e[1]))(tf.linalg.eigh(args[0]))", ("symmetric", (3, 3))),
    _s("linalg.eigvalsh", "tf.linalg.eigvalsh(args[0])", ("symmetric", (3, 3))),
    _s("linalg.svd", "tf.linalg.svd(args[0], compute_uv=False)", ("real", (3, 2))),
    _s("linalg.qr", "tf.linalg.qr(args[0])", ("square", (3, 3))),
    _s("linalg.pinv", "tf.linalg.pinv(args[0])", ("real", (3, 2))),
    _s("linalg.expm", "tf.linalg.expm(args[0])", M3),
    _s("linalg.sqrtm", "tf.linalg.sqrtm(args[0])", ("spd", (3, 3))),
    _s("linalg.lstsq", "tf.linalg.lstsq(args[0], args[1])", ("real", (4, 3)), ("real", (4, 2))),
    _s("linalg.lu_reconstruct", "tf.linalg.lu_reconstruct(args[0], [0, 1, 2])", M3),
    _s("linalg.norm", "tf.linalg.norm(args[0], ord=1, axis=[0, 1])", M3),
    _s("linalg.norm", "tf.linalg.norm(args[0], ord=2, axis=[0, 1])", M3),
    _s("linalg.band_part", "tf.linalg.band_part(args[0], 1, 0)", M3),
    _s("linalg.set_diag", "tf.linalg.set_diag(args[0], args[1])", M3, R3),
    _s("linalg.tensordot", "tf.linalg.tensordot(args[0], args[1], axes=1)", R23, ("real", (3, 2))),
    _s("linalg.einsum", "tf.linalg.einsum('ij,jk->ik', args[0], args[1])", R23, ("real", (3, 2))),
    _s("linalg.matmul", "tf.linalg.matmul(args[0], args[1], adjoint_b=True)", R23, R23),
    _s("linalg.matvec", "tf.linalg.matvec(args[0], args[1])", M3, R3),
    _s(
        "linalg.tridiagonal_solve",
        "tf.linalg.tridiagonal_solve(args[0], args[1])",
        ("positive", (3, 4)),
        ("real", (4, 2)),
    ),
    _s(
        "linalg.tridiagonal_matmul",
        "tf.linalg.tridiagonal_matmul(args[0], args[1])",
        ("real", (3, 4)),
        ("real", (4, 2)),
    ),
    _s("linalg.cross", "tf.linalg.cross(args[0], args[1])", R3, R3),
    _s("linalg.global_norm", "tf.linalg.global_norm([args[0], args[1]])", R3, R23),
    _s("math.add_n", "tf.math.add_n([args[0], args[1], args[0]])", R3, R3),
    _s("math.polyval", "tf.math.polyval([args[0], args[1]], args[2])", R3, R3, R3),
    # signals (complex inputs for the complex transforms)
    *(_s(f"signal.{n}", f"tf.signal.{n}(tf.complex(args[0], args[1]))", R8, R8) for n in ("fft", "ifft")),
    *(_s(f"signal.{n}", f"tf.signal.{n}(tf.complex(args[0], args[1]))", R44, R44) for n in ("fft2d", "ifft2d")),
    _s("signal.rfft", "tf.signal.rfft(args[0])", ("real", (8,))),
    _s("signal.irfft", "tf.signal.irfft(tf.complex(args[0], args[1]))", ("real", (5,)), ("real", (5,))),
    _s("linalg.logm", "tf.linalg.logm(tf.complex(args[0], args[1]))", ("spd", (3, 3)), ("real", (3, 3))),
    _s("signal.rfft2d", "tf.signal.rfft2d(args[0])", ("real", (4, 4))),
    *(_s("signal.dct", f"tf.signal.dct(args[0], type={k})", ("real", (6,))) for k in (1, 2, 3, 4)),
    _s("signal.frame", "tf.signal.frame(args[0], 4, 2)", ("real", (8,))),
    _s("signal.stft", "tf.signal.stft(args[0], 8, 4)", ("real", (16,))),
    _s("signal.overlap_and_add", "tf.signal.overlap_and_add(args[0], 2)", ("real", (3, 4))),
    _s("signal.mdct", "tf.signal.mdct(args[0], 8)", ("real", (16,))),
    # images with their parameters
    _s("image.adjust_brightness", "tf.image.adjust_brightness(args[0], 0.1)", IMG),
    _s("image.adjust_contrast", "tf.image.adjust_contrast(args[0], 1.5)", IMG),
    _s("image.adjust_saturation", "tf.image.adjust_saturation(args[0], 1.5)", IMG),
    _s("image.adjust_hue", "tf.image.adjust_hue(args[0], 0.1)", IMG),
    _s("image.adjust_gamma", "tf.image.adjust_gamma(args[0], 2.0, 1.5)", IMG),
    *(
        _s("image.resize", f"tf.image.resize(args[0], [6, 5], method={m!r})", IMG)
        for m in ("bilinear", "bicubic", "area", "lanczos3", "mitchellcubic", "gaussian")
    ),
    _s("image.crop_and_resize", "tf.image.crop_and_resize(args[0], [[0.1, 0.2, 0.8, 0.9]], [0], [3, 3])", IMG),
    _s(
        "image.extract_patches",
        "tf.image.extract_patches(args[0], [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], 'VALID')",
        IMG,
    ),
    _s(
        "image.ssim",
        "tf.image.ssim(args[0], args[1], 1.0, filter_size=3)",
        ("unit", (1, 6, 6, 1)),
        ("unit", (1, 6, 6, 1)),
    ),
    _s("image.psnr", "tf.image.psnr(args[0], args[1], 1.0)", IMG, IMG),
    _s("image.central_crop", "tf.image.central_crop(args[0], 0.5)", IMG),
    _s("image.pad_to_bounding_box", "tf.image.pad_to_bounding_box(args[0], 1, 0, 5, 5)", IMG),
    _s("image.resize_with_pad", "tf.image.resize_with_pad(args[0], 6, 5)", IMG),
)


#: What TF documents as an op's semantics where a derivative of the mathematical function does
#: not apply: op -> the documented rule. Such records go to known/ with it (filter 1 of docs/sweep.md).
CONVENTIONS = {
    "tensor_scatter_nd_update": "documented: 'the order in which updates are applied is nondeterministic, so "
    "the output will be nondeterministic if indices contains duplicates' (tf.tensor_scatter_nd_update); the "
    "designed call repeats an index, so which update lands, and so its derivative, is unspecified",
}


def _rng(seed: int, op: str, sample: int, what: str = "") -> np.random.Generator:
    digest = hashlib.sha256(f"{seed}/{op}/{sample}/{what}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _tf() -> Any:
    """TensorFlow, imported by modes_tensorflow (triton first where installed; TF's log level)."""
    from advalidate.sweep import modes_tensorflow

    return modes_tensorflow.tf


def compile_source(source: str) -> Callable[..., Any]:
    """The function `f` a call source defines (the sweep's own generated sources only)."""
    namespace: dict[str, Any] = {"tf": _tf(), "np": np}
    exec(compile(source, "<tensorflow_records>", "exec"), namespace)  # noqa: S102 - our own source
    return namespace["f"]


def call_source(expr: str) -> str:
    return f"def f(*args):\n    return {expr}\n"


def _flat(out: Any) -> list[Any]:
    return list(_tf().nest.flatten(out))


def record_function(f: Callable[..., Any]) -> Callable[..., Any]:
    """f on numpy or TF inputs, its output flattened (`tf.nest`): one tensor, or a tuple of them."""
    from advalidate.sweep.modes_tensorflow import _like

    def fn(*xs: Any) -> Any:
        ys = _flat(f(*[_like(x) for x in xs]))
        return ys[0] if len(ys) == 1 else tuple(ys)

    return fn


def _inexact(y: Any) -> bool:
    return hasattr(y, "dtype") and (y.dtype.is_floating or y.dtype.is_complex)


def _probe(fn: Callable[..., Any], args: Sequence[np.ndarray]) -> tuple[tuple[int, ...], list[bool]] | None:
    """(the non-differentiable output positions, which arguments TF's gradient reaches) when fn is
    usable at args: runs, finite float64 / complex128 outputs, deterministic, a registered
    gradient reaching some argument; else None."""
    tf = _tf()
    try:
        xs = [tf.constant(a) for a in args]
        with tf.GradientTape() as tape:
            tape.watch(xs)
            ys = _flat(fn(*xs))
        again = _flat(fn(*xs))
        if not ys or not any(_inexact(y) for y in ys):
            return None
        diff = [y for y in ys if _inexact(y)]
        if any(y.dtype not in (tf.float64, tf.complex128) or not np.all(np.isfinite(y.numpy())) for y in diff):
            return None
        if any(not np.array_equal(np.asarray(y), np.asarray(z)) for y, z in zip(ys, again)):
            return None  # random: not a function
        grads = tape.gradient(diff, xs, unconnected_gradients=tf.UnconnectedGradients.NONE)
    except Exception:  # noqa: BLE001 - an op that does not run here, or has no gradient, has no records
        return None
    reached = [g is not None for g in grads]
    if not any(reached):
        return None
    return tuple(i for i, y in enumerate(ys) if not _inexact(y)), reached


def _literal(a: np.ndarray) -> str:
    def nested(x: Any) -> str:
        if isinstance(x, list):
            return "[" + ", ".join(nested(e) for e in x) + "]"
        if isinstance(x, complex):
            return f"complex({float_literal(x.real)}, {float_literal(x.imag)})"
        return float_literal(float(x))

    dtype = "tf.complex128" if np.iscomplexobj(a) else "tf.float64"
    return f"tf.constant({nested(a.tolist())}, dtype={dtype})"


def _enumerated() -> list[tuple[str, str, str, int]]:
    """(op name, module, qualified call, number of tensor parameters) of every candidate."""
    tf = _tf()
    seen: set[int] = set()
    out = []
    for space in SPACES:
        module = getattr(tf, space)
        for name in sorted(dir(module)):
            fn = getattr(module, name)
            if name.startswith("_") or EXCLUDED.search(name) or not callable(fn) or inspect.isclass(fn):
                continue
            try:
                params = inspect.signature(fn).parameters.values()
            except (TypeError, ValueError):
                continue
            req = [
                p.name
                for p in params
                if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
            if not req or len(req) > 3 or any(r not in TENSOR_PARAMS for r in req) or id(fn) in seen:
                continue
            seen.add(id(fn))
            out.append((f"{space}.{name}", space, f"tf.{space}.{name}", len(req)))
    return out


@dataclass(frozen=True)
class _Sample:
    op: str
    sample: int
    source: str
    args: tuple[np.ndarray, ...]
    nondiff: tuple[int, ...]


def _designed(spec: Spec, index: int, seed: int) -> _Sample | None:
    """A designed call's sample: its arguments drawn on their domains."""
    rng = _rng(seed, spec.op, index)
    args = tuple(DOMAINS[d](rng, shape) for d, shape in spec.args)
    source = call_source(spec.expr)
    probed = _probe(compile_source(source), args)
    return None if probed is None else _Sample(spec.op, index, source, args, probed[0])


def _fix_constants(
    expr_call: str, args: Sequence[np.ndarray], reached: Sequence[bool]
) -> tuple[str, tuple[np.ndarray, ...]]:
    """The call with every argument TF's gradient does not reach written as a constant."""
    parts, kept = [], []
    for a, r in zip(args, reached):
        if r:
            parts.append(f"args[{len(kept)}]")
            kept.append(a)
        else:
            parts.append(_literal(a))
    return call_source(f"{expr_call}({', '.join(parts)})"), tuple(kept)


def _enumerated_samples(op: str, space: str, call: str, nargs: int, seed: int, n: int) -> list[_Sample]:
    """An enumerated op's samples: each shape on the first domain usable at the first shape."""
    if space == "image":
        domains: tuple[str, ...] = ("unit",)
    elif space == "linalg":
        domains = MATRIX_DOMAINS + ENUMERATED_DOMAINS
    else:
        domains = ENUMERATED_DOMAINS
    f = compile_source(call_source(f"{call}({', '.join(f'args[{i}]' for i in range(nargs))})"))

    def sample(index: int, domain: str, shape: tuple[int, ...]) -> _Sample | None:
        rng = _rng(seed, op, index, domain)
        args = [DOMAINS[domain](rng, shape) for _ in range(nargs)]
        probed = _probe(f, args)
        if probed is None:
            return None
        source, kept = _fix_constants(call, args, probed[1])
        return _Sample(op, index, source, kept, probed[0])

    shapes = SHAPES[space]
    first = next(((d, s) for d in domains if (s := sample(0, d, shapes[0])) is not None), None)
    if first is None:
        return []
    domain, smp = first
    return [smp] + [s for i, shape in enumerate(shapes[1:n], 1) if (s := sample(i, domain, shape)) is not None]


@functools.cache
def _candidates() -> dict[str, tuple[Any, ...]]:
    """op -> how its samples are made: ("designed", *specs) or ("enumerated", module, call, nargs);
    the designed calls first (a sweep cut short by --seconds has checked them)."""
    designed: dict[str, list[Spec]] = {}
    for spec in SPECS:
        designed.setdefault(spec.op, []).append(spec)
    out: dict[str, tuple[Any, ...]] = {op: ("designed", *specs) for op, specs in designed.items()}
    for op, space, call, nargs in _enumerated():
        if op not in designed:
            out[op] = ("enumerated", space, call, nargs)
    return out


@functools.cache
def _op_samples(op: str, seed: int, n: int) -> tuple[_Sample, ...]:
    """One op's samples (cached per process: each worker asks for one op at a time)."""
    how = _candidates()[op]
    if how[0] == "enumerated":
        return tuple(_enumerated_samples(op, *how[1:], seed, n))
    return tuple(s for i, spec in enumerate(how[1:]) if (s := _designed(spec, i, seed)) is not None)


def _samples(op: str, seed: int) -> tuple[_Sample, ...]:
    return _op_samples(op, seed, int(os.environ.get("ADVALIDATE_SWEEP_SAMPLES", SAMPLES)))


def op_names() -> list[str]:
    """The ops that have records (each probed on its samples), in order."""
    return [op for op in _candidates() if _samples(op, 0)]


def _runs_in(fn: Callable[..., Any], args: Sequence[np.ndarray], dtype: Any) -> bool:
    """fn and its tape gradient run, finite, on `args` cast to the TF `dtype`."""
    tf = _tf()
    try:
        xs = [tf.constant(a, dtype=dtype) for a in args]
        with tf.GradientTape() as tape:
            tape.watch(xs)
            ys = [y for y in _flat(fn(*xs)) if _inexact(y)]
        grads = tape.gradient(ys, xs, unconnected_gradients=tf.UnconnectedGradients.ZERO)
        return all(np.all(np.isfinite(np.asarray(v))) for v in [*ys, *map(tf.convert_to_tensor, grads)])
    except Exception:  # noqa: BLE001 - no kernel or no gradient in that dtype
        return False


def _dtypes(smp: _Sample, fn: Callable[..., Any]) -> frozenset[str]:
    """The dtypes TF differentiates this op in (`records.DTYPES`; the dtype axis draws from them):
    float64, and float32 / complex128 where the op and its gradient run there (complex128 probed
    at the sample moved off the real line, as the axis moves it)."""
    tf = _tf()
    out = {"float64"}
    if _runs_in(fn, smp.args, tf.float32):
        out.add("float32")
    if _runs_in(fn, [a + 0.3j * np.maximum(np.abs(a), 0.5) for a in smp.args], tf.complex128):
        out.add("complex128")
    return frozenset(out)


def _variants(smp: _Sample, fn: Callable[..., Any], seed: int) -> Iterator[tuple[str, tuple[np.ndarray, ...]]]:
    """("sample", args), then the torch sweep's shape-keeping perturbations that keep the domain
    and keep fn finite wherever it was finite on the sample."""
    yield "sample", smp.args
    ok = _finite(fn, smp.args)
    for name in VARIANTS:
        rng = _rng(seed, smp.op, smp.sample, name)
        args = PERTURBATIONS[name](smp.args, rng, fn)
        if args is None or not all(keeps_domain(a, b) for a, b in zip(smp.args, args)):
            continue
        fin = _finite(fn, args)
        if ok is not None and fin is not None and fin.shape == ok.shape and np.all(fin[ok]):
            yield name, args


def _finite(fn: Callable[..., Any], args: Sequence[np.ndarray]) -> np.ndarray | None:
    try:
        ys = _flat(fn(*args))
        return np.concatenate([np.isfinite(np.asarray(y)).ravel() for y in ys if _inexact(y)])
    except Exception:  # noqa: BLE001
        return None


def _selector(ops: Sequence[str] | None) -> Callable[[str], bool]:
    if ops is None:
        return lambda op: True
    names = set(ops)
    return lambda op: op in names or op.rsplit(".", 1)[-1] in names


def records(*, ops: Sequence[str] | None = None, seed: int = 0) -> Iterator[OpRecord]:
    """Every TensorFlow record in float64, eager (or those of the ops named in `ops`: a full name or
    its last part); the dtype and transform axes (`axes.py`) copy them."""
    if ops is not None and not ops:
        tf = _tf()  # the worker's warm-up: TF imported once, before the first deadline
        tf.get_logger().setLevel("ERROR")  # tf.function's retracing notices are not the sweep's output
        try:  # one thread per op: a worker per core
            tf.config.threading.set_intra_op_parallelism_threads(1)
            tf.config.threading.set_inter_op_parallelism_threads(1)
        except RuntimeError:  # TF's runtime already started in this process: keep its threads
            pass
        return
    wanted = _selector(ops)
    for smp in (smp for op in _candidates() if wanted(op) for smp in _samples(op, seed)):
        f = compile_source(smp.source)
        fn = record_function(f)
        base = OpRecord(
            library="tensorflow",
            op=smp.op,
            sample=smp.sample,
            variant="sample",
            fn=fn,
            args=smp.args,
            modes=MODES_ALL,
            call_source=smp.source,
            nondiff_outputs=smp.nondiff,
            known={"*": CONVENTIONS[smp.op]} if smp.op in CONVENTIONS else {},
            dtypes=_dtypes(smp, f),
        )
        for variant, args in _variants(smp, fn, seed):
            yield replace(base, variant=variant, args=args)


__all__ = ["DOMAINS", "SPECS", "Spec", "compile_source", "op_names", "records"]
