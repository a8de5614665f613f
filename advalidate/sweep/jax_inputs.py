"""Inputs of the JAX sweep: each argument's domain and the edge regions users meet inside it.

An op's database sample sits where every rule is benign (JAX's `rand_small` draws values of
size 1e-3, its decompositions see matrices near the identity). The defects that matter live
elsewhere: large negative arguments of the gamma family, the neighbourhood of poles, |x| < 1e-8
for expm1/log1p/sinc, arguments where a rule underflows, repeated values for sorts and
reductions, zeros inside products, matrices far from the identity. A domain names where an
argument may lie; its variants are seeded draws from named regions of that domain, so every
variant keeps the op's domain (no pole, no branch cut, no boundary is ever drawn).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Draw = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]


def _uniform(lo: float, hi: float) -> Draw:
    return lambda rng, shape: rng.uniform(lo, hi, shape)


def _log_uniform(
    lo_exp: float, hi_exp: float, *, signed: bool = False, offset: float = 0.0, flip: bool = False
) -> Draw:
    """offset ± 10**U(lo_exp, hi_exp): tiny values, or values just inside a boundary."""

    def draw(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        mag = 10.0 ** rng.uniform(lo_exp, hi_exp, shape)
        if signed:
            mag = mag * rng.choice([-1.0, 1.0], shape)
        return offset - mag if flip else offset + mag

    return draw


def _signed(draw: Draw) -> Draw:
    return lambda rng, shape: draw(rng, shape) * rng.choice([-1.0, 1.0], shape)


def _away_from_zero(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(0.3, 3.0, shape) * rng.choice([-1.0, 1.0], shape)


def _negative_nonpole(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """-(k + u), k in 3..40, u in [0.15, 0.85]: far from the poles at the non-positive integers."""
    return -(rng.integers(3, 41, shape) + rng.uniform(0.15, 0.85, shape))


def _near_pole(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """-k ± 10**U(-4, -2), k in 1..6: close to a pole, never on it."""
    offs = 10.0 ** rng.uniform(-4, -2, shape) * rng.choice([-1.0, 1.0], shape)
    return -rng.integers(1, 7, shape) + offs


def _integers(values: tuple[int, ...]) -> Draw:
    """Exact small integers as floats, the points users type and where branch selections sit
    (`x == 0.5` tests, exact-zero special cases): a shuffle of `values`, so each is drawn."""
    return lambda rng, shape: np.resize(rng.permutation(np.array(values, dtype=np.float64)), shape)


#: domain -> variant name -> draw. Every domain has a "sample"; the other variants stay inside it.
DOMAINS: dict[str, dict[str, Draw]] = {
    "real": {
        "sample": lambda rng, shape: rng.normal(0.0, 1.5, shape),
        "large-negative": _uniform(-40.0, -5.0),
        "large-positive": _uniform(5.0, 40.0),
        "tiny": _log_uniform(-12, -8, signed=True),
        "integers": _integers((1, -1, 3, 2, -3, -2, 0)),
    },
    "moderate": {  # real, but overflow-prone ops (exp, sinh, cosh): large only up to |x| = 40
        "sample": lambda rng, shape: rng.normal(0.0, 1.0, shape),
        "large-negative": _uniform(-40.0, -10.0),
        "tiny": _log_uniform(-12, -8, signed=True),
    },
    "nonzero": {
        "sample": _away_from_zero,
        "large-negative": _uniform(-40.0, -5.0),
        "tiny": _log_uniform(-8, -5, signed=True),
    },
    "positive": {
        "sample": _uniform(0.2, 4.0),
        "tiny": _log_uniform(-12, -8),
        "large": _uniform(30.0, 300.0),
        "integers": _integers((1, 3, 2, 5, 4, 6)),
    },
    "scale": {  # positive data beside a parameter whose edge regions matter (boxcox's x): no tiny x
        "sample": _uniform(0.5, 4.0),
        "large": _uniform(30.0, 300.0),
    },
    "unit": {  # the open interval (0, 1)
        "sample": _uniform(0.1, 0.9),
        "near-zero": _log_uniform(-10, -5),
        "near-one": _log_uniform(-9, -4, offset=1.0, flip=True),
    },
    "ball": {  # the open interval (-1, 1)
        "sample": _uniform(-0.9, 0.9),
        "near-boundary": _signed(_log_uniform(-8, -4, offset=1.0, flip=True)),
        "tiny": _log_uniform(-12, -8, signed=True),
    },
    "above-one": {  # (1, inf)
        "sample": _uniform(1.2, 5.0),
        "near-one": _log_uniform(-8, -4, offset=1.0),
        "large": _uniform(1e3, 1e6),
    },
    "gamma": {  # the reals without the poles 0, -1, -2, ...
        "sample": _uniform(0.2, 6.0),
        "large-negative": _negative_nonpole,
        "near-pole": _near_pole,
        "tiny": _log_uniform(-10, -6),
        "large": _uniform(30.0, 150.0),
    },
    "upper": {  # real, where a function grows like exp(x²) for x -> -inf (erfcx): large only upwards
        "sample": lambda rng, shape: rng.normal(0.0, 1.5, shape),
        "large-positive": _uniform(5.0, 1e3),
        "tiny": _log_uniform(-12, -8, signed=True),
    },
    "above-minus-one": {  # (-1, inf): log1p and friends
        "sample": _uniform(-0.9, 4.0),
        "tiny": _log_uniform(-12, -8, signed=True),
        "near-minus-one": _log_uniform(-9, -4, offset=-1.0),
        "large": _uniform(30.0, 1e4),
    },
}


def draw(domain: str, variant: str, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """A float64 array of `shape` from `variant` of `domain` (its "sample" when it has no such variant)."""
    table = DOMAINS[domain] if domain in DOMAINS else MATRICES[domain]
    return np.asarray(table.get(variant, table["sample"])(rng, shape), dtype=np.float64)


def variants(domains: tuple[str, ...]) -> tuple[str, ...]:
    """The variants of an op whose arguments lie in `domains`: "sample" first, then every other
    variant any of its arguments has (in table order); arguments without it keep their sample."""
    names = ["sample"]
    for d in domains:
        table = DOMAINS[d] if d in DOMAINS else MATRICES[d]
        names += [v for v in table if v not in names]
    return tuple(names)


# -- matrices ------------------------------------------------------------------------------------


def _orthogonal(rng: np.random.Generator, n: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(n, n)))
    return q * np.sign(np.diag(r))


def _spd_near_identity(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    b = rng.normal(size=shape) * 0.3
    return b @ b.T / shape[0] + np.eye(shape[0])


def _spd_off_identity(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Q diag(λ) Qᵀ with λ log-uniform in [0.3, 30]: condition number at most 100, far from I."""
    q = _orthogonal(rng, shape[0])
    lam = 10.0 ** rng.uniform(np.log10(0.3), np.log10(30.0), shape[0])
    return (q * lam) @ q.T


def _symmetric_gapped(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Symmetric with eigenvalues at least 0.5 apart (eigenvectors well defined), some negative."""
    q = _orthogonal(rng, shape[0])
    lam = np.cumsum(rng.uniform(0.5, 2.0, shape[0])) - 2.0
    return (q * lam) @ q.T


def _square_near_identity(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.eye(shape[0]) + 0.1 * rng.normal(size=shape)


def _square_off_identity(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """U diag(σ) Vᵀ with σ in [0.5, 5], U, V random orthogonal: well conditioned, far from I."""
    u, v = _orthogonal(rng, shape[0]), _orthogonal(rng, shape[1])
    return (u * rng.uniform(0.5, 5.0, shape[0])) @ v.T


def _square_singular(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Rank n-1 (det's gradient, the adjugate, is still defined and non-zero there)."""
    u, v = _orthogonal(rng, shape[0]), _orthogonal(rng, shape[1])
    s = rng.uniform(0.5, 5.0, shape[0])
    s[-1] = 0.0
    return (u * s) @ v.T


def _tall_distinct(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """m x n, m >= n, singular values at least 0.5 apart (the SVD is differentiable there)."""
    m, n = shape
    u = _orthogonal(rng, m)[:, :n]
    s = np.cumsum(rng.uniform(0.5, 2.0, n))[::-1]
    return (u * s) @ _orthogonal(rng, n).T


def _lower_well_conditioned(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    low = np.tril(rng.normal(size=shape), -1) * 0.5
    return low + np.diag(rng.uniform(1.0, 3.0, shape[0]) * rng.choice([-1.0, 1.0], shape[0]))


MATRICES: dict[str, dict[str, Draw]] = {
    "spd": {"sample": _spd_near_identity, "off-identity": _spd_off_identity},
    "symmetric": {"sample": _symmetric_gapped, "off-identity": _symmetric_gapped},
    "square": {"sample": _square_near_identity, "off-identity": _square_off_identity},
    "square-any": {"sample": _square_near_identity, "off-identity": _square_off_identity, "singular": _square_singular},
    "tall": {"sample": _tall_distinct, "off-identity": _tall_distinct},
    "lower": {"sample": _lower_well_conditioned, "off-identity": _lower_well_conditioned},
}


# -- structure: values that matter to reductions, scans and sorts ----------------------------------


def with_zeros(x: np.ndarray, rng: np.random.Generator, count: int) -> np.ndarray:
    """`x` with `count` entries set to exactly 0 (products and cumulative products through a zero)."""
    flat = x.copy().reshape(-1)
    flat[rng.choice(flat.size, size=min(count, flat.size), replace=False)] = 0.0
    return flat.reshape(x.shape)


def repeated(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """`x` with about half its entries replaced by copies of one of its values (ties)."""
    flat = x.copy().reshape(-1)
    mask = rng.random(flat.size) < 0.5
    mask[:2] = True
    flat[mask] = flat[rng.integers(flat.size)]
    return flat.reshape(x.shape)


__all__ = ["DOMAINS", "MATRICES", "draw", "repeated", "variants", "with_zeros"]
