"""Non-benign inputs of the same structure as a library's own sample (issue #27, item 2).

A database's samples are benign: decompositions of near-identity factors, cumulative products
without zeros, arguments near 0. Each perturbation keeps the sample's shapes (but for
`broadcast-square`, whose whole point is a batch of another length) and domain (a variant is kept
only when the op is finite on it wherever it was finite on the sample) and is
seeded by (seed, op, sample), so every run and every repro sees the same numbers. A symmetric
positive definite sample stays so (`keeps_domain`): ops such as `cholesky_ex` report leaving their
domain in an output instead of raising.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

#: Condition number above which an off-identity factor is not "well-conditioned".
MAX_COND = 1e3


def _rng(seed: int, salt: str, name: str) -> np.random.Generator:
    digest = hashlib.sha256(f"{seed}/{salt}/{name}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _off_identity(a: np.ndarray, rng: np.random.Generator) -> np.ndarray | None:
    """Square matrices moved well off the identity with their structure kept (symmetric and
    positive definite stays so, triangular stays triangular), condition number below MAX_COND."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] < 2:
        return None
    n = a.shape[-1]
    scale = max(1.0, float(np.max(np.abs(a))))
    e = rng.uniform(-0.6, 0.6, size=a.shape) * scale
    if np.allclose(a, np.swapaxes(a, -1, -2)):
        out = a + (e + np.swapaxes(e, -1, -2)) / 2
        lo = np.linalg.eigvalsh(a).min()
        if lo > 0:  # keep it positive definite: shift by what the perturbation took away
            shift = max(0.0, 0.5 * lo - np.linalg.eigvalsh(out).min())
            out = out + shift * np.eye(n)
    elif np.allclose(a, np.tril(a)):
        out = a + np.tril(e, -1)
    elif np.allclose(a, np.triu(a)):
        out = a + np.triu(e, 1)
    else:
        out = a + e
    if not np.all(np.isfinite(out)) or np.max(np.linalg.cond(out)) > MAX_COND:
        return None
    return out


def _zeros(a: np.ndarray, rng: np.random.Generator, count: int) -> np.ndarray | None:
    if a.size < count + 1:
        return None
    out = a.copy().ravel()
    out[rng.choice(a.size, size=count, replace=False)] = 0.0
    return out.reshape(a.shape)


def _large_negative(a: np.ndarray, rng: np.random.Generator) -> np.ndarray | None:
    """Some elements moved to large negative non-integers, where the sample had negatives."""
    if a.size == 0 or np.min(a) >= 0:
        return None
    out = a.copy().ravel()
    k = max(1, a.size // 3)
    idx = rng.choice(a.size, size=k, replace=False)
    out[idx] = -rng.uniform(8.0, 40.0, size=k) - 0.25
    return out.reshape(a.shape)


def _repeated(a: np.ndarray, rng: np.random.Generator) -> np.ndarray | None:
    """One element's value copied into another position (ties for max, sort, median, unique)."""
    if a.size < 2:
        return None
    out = a.copy().ravel()
    i, j = rng.choice(a.size, size=2, replace=False)
    out[j] = out[i]
    return out.reshape(a.shape)


Args = tuple[np.ndarray, ...]


def _every_square(perturb: Callable[[np.ndarray, np.random.Generator], np.ndarray | None]):
    """Move every input `perturb` applies to (a factor need not be the first operand:
    cholesky_solve's is the second)."""

    def apply(base: Args, rng: np.random.Generator, fn: Callable[..., Any]) -> Args | None:
        moved = [perturb(a, rng) for a in base]
        return None if all(m is None for m in moved) else tuple(a if m is None else m for a, m in zip(base, moved))

    return apply


def _first(perturb: Callable[[np.ndarray, np.random.Generator], np.ndarray | None]):
    """Move the first input (the op's main operand) and keep the rest at the sample's values."""

    def apply(base: Args, rng: np.random.Generator, fn: Callable[..., Any]) -> Args | None:
        new = perturb(base[0], rng)
        return None if new is None else (new, *base[1:])

    return apply


def _spd(a: np.ndarray) -> bool:
    """Symmetric positive definite (a stack of them): the domain of cholesky and its kin."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] < 1 or not np.allclose(a, np.swapaxes(a, -1, -2)):
        return False
    return bool(np.all(np.linalg.eigvalsh(a) > 0))


def keeps_domain(base: np.ndarray, new: np.ndarray) -> bool:
    """A variant of a symmetric positive definite sample must stay so: cholesky_ex & co. do not
    raise outside their domain (they report `info`), so finiteness alone cannot tell."""
    return not _spd(base) or _spd(new)


def _outputs(fn: Callable[..., Any], args: Args) -> list[np.ndarray] | None:
    """fn(*args)'s output leaves as arrays (None when fn raises)."""
    import torch

    try:
        with torch.no_grad():
            out = fn(*(torch.tensor(a) for a in args))
        return [y.detach().numpy() for y in (out if isinstance(out, tuple) else (out,))]
    except Exception:
        return None


def _shapes(fn: Callable[..., Any], args: Args) -> list[tuple[int, ...]] | None:
    outs = _outputs(fn, args)
    return None if outs is None else [y.shape for y in outs]


def _broadcast(base: Args, rng: np.random.Generator, fn: Callable[..., Any]) -> Args | None:
    """One batched operand of a several-operand op without its batch dimension, so the op
    broadcasts it against the others (same output shapes): where batching rules of a
    derivative go wrong (pytorch/pytorch#196694, cholesky_solve's tangent through L)."""
    if len(base) < 2:
        return None
    want = _shapes(fn, base)
    for i, a in enumerate(base):
        if a.ndim < 3 or not any(b.ndim >= a.ndim for j, b in enumerate(base) if j != i):
            continue
        args = (*base[:i], a[0].copy(), *base[i + 1 :])
        if want is not None and _shapes(fn, args) == want:
            return args
    return None


def _square_batch(base: Args, rng: np.random.Generator, fn: Callable[..., Any]) -> Args | None:
    """`_broadcast`, with the other batched operands' batch cycled to the length n of the dropped
    operand's last dimension: a (n, n) operand broadcast against a batch of n is where a rule that
    tells a batch from a matrix dimension by its size confuses them (pytorch/pytorch#196694:
    cholesky_solve's tangent through L is wrong exactly when the batch length equals n). The
    batch's matrices are the sample's own, repeated, so the domain is kept."""
    if len(base) < 2:
        return None
    for i, a in enumerate(base):
        n = a.shape[-1] if a.ndim >= 3 else 0
        if n < 2 or n == a.shape[0] or not any(b.ndim >= a.ndim for j, b in enumerate(base) if j != i):
            continue
        cycled = [np.take(b, np.arange(n) % b.shape[0], axis=0) if b.ndim >= 3 else b for b in base]
        args = (*cycled[:i], a[0].copy(), *cycled[i + 1 :])
        if _shapes(fn, args) is not None:
            return args
    return None


def _finite_where(fn: Callable[..., Any], args: Args) -> np.ndarray | None:
    """Which output elements of fn(*args) are finite (None when fn raises)."""
    outs = _outputs(fn, args)
    return None if outs is None else np.concatenate([np.isfinite(y).ravel() for y in outs])


#: name -> (the sample's inputs, a seeded generator, the op) -> the variant's inputs, or None.
PERTURBATIONS: dict[str, Callable[[Args, np.random.Generator, Callable[..., Any]], Args | None]] = {
    "off-identity": _every_square(_off_identity),
    "zero": _first(lambda a, rng: _zeros(a, rng, 1)),
    "zeros": _first(lambda a, rng: _zeros(a, rng, 2)),
    "large-negative": _first(_large_negative),
    "repeated": _first(_repeated),
    "broadcast": _broadcast,
    "broadcast-square": _square_batch,
}


def variants(
    base: tuple[np.ndarray, ...], fn: Callable[..., Any], *, seed: int, salt: str
) -> Iterator[tuple[str, tuple[np.ndarray, ...]]]:
    """("sample", base), then each perturbation of PERTURBATIONS that applies, keeps the
    sample's domain and keeps fn finite where it was (everywhere, when it changes the output's
    shape and the sample's output was all finite)."""
    yield "sample", base
    ok = _finite_where(fn, base)
    if ok is None:
        return
    for name, perturb in PERTURBATIONS.items():
        args = perturb(base, _rng(seed, salt, name), fn)
        if args is None:
            continue
        if not all(keeps_domain(a, b) for a, b in zip(base, args)):
            continue
        fin = _finite_where(fn, args)
        if fin is None or not (np.all(fin[ok]) if fin.shape == ok.shape else np.all(ok) and np.all(fin)):
            continue
        yield name, args
