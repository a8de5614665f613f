"""Non-benign inputs of the same structure as a library's own sample (issue #27, item 2).

A database's samples are benign: decompositions of near-identity factors, cumulative products
without zeros, arguments near 0. Each perturbation keeps the sample's shapes and domain (a
variant is kept only when the op is finite on it wherever it was finite on the sample) and is
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


PERTURBATIONS: dict[str, Callable[[np.ndarray, np.random.Generator], np.ndarray | None]] = {
    "off-identity": _off_identity,
    "zero": lambda a, rng: _zeros(a, rng, 1),
    "zeros": lambda a, rng: _zeros(a, rng, 2),
    "large-negative": _large_negative,
    "repeated": _repeated,
    "broadcast": lambda a, rng: None,  # several operands at once: see _broadcast
}


def _spd(a: np.ndarray) -> bool:
    """Symmetric positive definite (a stack of them): the domain of cholesky and its kin."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] < 1 or not np.allclose(a, np.swapaxes(a, -1, -2)):
        return False
    return bool(np.all(np.linalg.eigvalsh(a) > 0))


def keeps_domain(base: np.ndarray, new: np.ndarray) -> bool:
    """A variant of a symmetric positive definite sample must stay so: cholesky_ex & co. do not
    raise outside their domain (they report `info`), so finiteness alone cannot tell."""
    return not _spd(base) or _spd(new)


def _output_shapes(fn: Callable[..., Any], args: tuple[np.ndarray, ...]) -> list[tuple[int, ...]] | None:
    import torch

    try:
        with torch.no_grad():
            out = fn(*(torch.tensor(a) for a in args))
    except Exception:
        return None
    return [tuple(y.shape) for y in (out if isinstance(out, tuple) else (out,))]


def _broadcast(base: tuple[np.ndarray, ...], fn: Callable[..., Any]) -> tuple[np.ndarray, ...] | None:
    """One batched operand of a several-operand op without its batch dimension, so the op
    broadcasts it against the others (same output shapes): where batching rules of a
    derivative go wrong (pytorch/pytorch#196694, cholesky_solve's tangent through L)."""
    if len(base) < 2:
        return None
    want = _output_shapes(fn, base)
    for i, a in enumerate(base):
        if a.ndim < 3 or not any(b.ndim >= a.ndim for j, b in enumerate(base) if j != i):
            continue
        args = (*base[:i], a[0].copy(), *base[i + 1 :])
        if want is not None and _output_shapes(fn, args) == want:
            return args
    return None


def _finite_where(fn: Callable[..., Any], args: tuple[np.ndarray, ...]) -> np.ndarray | None:
    """Which output elements of fn(*args) are finite (None when fn raises)."""
    import torch

    try:
        with torch.no_grad():
            out = fn(*(torch.tensor(a) for a in args))
    except Exception:
        return None
    leaves = out if isinstance(out, tuple) else (out,)
    return np.concatenate([np.isfinite(y.detach().numpy()).ravel() for y in leaves])


def variants(
    base: tuple[np.ndarray, ...], fn: Callable[..., Any], *, seed: int, salt: str
) -> Iterator[tuple[str, tuple[np.ndarray, ...]]]:
    """("sample", base), then each perturbation that applies and keeps fn finite where it was.
    `off-identity` moves every square-matrix input (a factor need not be the first operand:
    cholesky_solve's is the second); the others perturb the first input only (the op's main
    operand) and keep the rest at the sample's values."""
    yield "sample", base
    ok = _finite_where(fn, base)
    if ok is None:
        return
    for name, perturb in PERTURBATIONS.items():
        rng = _rng(seed, salt, name)
        if name == "broadcast":
            moved_all = _broadcast(base, fn)
            if moved_all is None:
                continue
            args = moved_all
        elif name == "off-identity":
            moved = [perturb(a, rng) for a in base]
            if all(m is None for m in moved):
                continue
            args = tuple(a if m is None else m for a, m in zip(base, moved))
        else:
            new = perturb(base[0], rng)
            if new is None:
                continue
            args = (new, *base[1:])
        if not all(keeps_domain(a, b) for a, b in zip(base, args)):
            continue
        fin = _finite_where(fn, args)
        if fin is None or fin.shape != ok.shape or not np.all(fin[ok]):
            continue
        yield name, args
