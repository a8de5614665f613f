"""The JAX functions the sweep calls with inputs of its own design, beyond JAX's op records.

One `Spec` per call: the call in JAX's public API (differentiable arguments a0, a1, …; every
other argument a literal), each differentiable argument's domain (`jax_inputs.DOMAINS` /
`MATRICES`), the shape of the arguments, structural variants (zeros inside a product, repeated
values) and what JAX itself says about its derivatives. JAX claims every AD mode for a
differentiable function unless it refuses one: the refusals it raises on purpose are recorded
as `known` with JAX's own message and the mode left out of `modes`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from advalidate.sweep.records import MODES

ALL = frozenset(MODES)
#: The dtypes a designed call is swept in (issue #38): JAX's scipy.special and numpy tests run
#: their functions in float32 and float64; the calls JAX differentiates in complex add complex.
REAL = frozenset(("float64", "float32"))
COMPLEX = REAL | {"complex128", "complex64"}
FIRST = frozenset(("reverse", "forward"))
_IGAMMA_A = "JAX raises NotImplementedError: Differentiation rule for 'igamma_grad_a' not implemented"
#: igamma / gammainc differentiated in `a` twice: JAX has no rule for igamma_grad_a.
SECOND_ORDER_A = {m: _IGAMMA_A for m in ALL - FIRST}
#: expn's `jnp.piecewise` runs every branch on an array of more than one element, and the
#: continued fraction meant for x > 1 needs ~x**-0.55 iterations (9.5 s at x = 1e-5; hours at the
#: "tiny" variant's 1e-12..1e-8), so the op never finishes there (a scalar takes 1 s).
EXPN_TINY = {
    "tiny": "jax-ml/jax#21760 (open): expn/exp1/expi on an array with a tiny element run the x > 1 "
    "continued fraction to convergence (hours at x ~ 1e-10)"
}
BETAINC_AB = "JAX raises ValueError: Betainc gradient with respect to a and b not supported."


_AB = {"*": BETAINC_AB}


@dataclass(frozen=True)
class Spec:
    """One call of a JAX function: `body` is an expression in a0, a1, … (or statements ending in `return`)."""

    op: str
    body: str
    domains: tuple[str, ...]
    shape: tuple[int, ...] | tuple[tuple[int, ...], ...] = (4,)
    structure: tuple[str, ...] = ()  # "zeros", "repeated": structural variants of the sample
    modes: frozenset[str] = ALL
    known: Mapping[str, str] = field(default_factory=dict)
    #: variant -> the documented semantics that variant sits in (its records go to known/)
    documented: Mapping[str, str] = field(default_factory=dict)
    #: variant -> why its records are not run (the primal does not finish there; an upstream issue)
    not_run: Mapping[str, str] = field(default_factory=dict)
    #: the dtypes this call is swept in (`records.DTYPES` names)
    dtypes: frozenset[str] = REAL

    def shapes(self) -> tuple[tuple[int, ...], ...]:
        """One shape per argument (a single shape is shared by all of them)."""
        if self.shape and isinstance(self.shape[0], tuple):
            return self.shape  # type: ignore[return-value]
        return (self.shape,) * len(self.domains)  # type: ignore[return-value]


def _s(name: str, body: str, *domains: str, **kw) -> Spec:
    return Spec(f"jax.scipy.special.{name}", f"jax.scipy.special.{body}", tuple(domains), **kw)


def _n(name: str, body: str, *domains: str, **kw) -> Spec:
    return Spec(f"jax.numpy.{name}", f"jax.numpy.{body}", tuple(domains), **kw)


SPECIAL = (
    _s("gammaln", "gammaln(a0)", "gamma"),
    _s("digamma", "digamma(a0)", "gamma"),
    _s("gamma", "gamma(a0)", "gamma"),
    _s("polygamma(1)", "polygamma(1, a0)", "gamma"),
    _s("polygamma(2)", "polygamma(2, a0)", "gamma"),
    _s("loggamma", "loggamma(a0)", "positive"),
    _s("multigammaln", "multigammaln(a0, 3)", "above-one"),
    _s("betaln", "betaln(a0, a1)", "positive", "positive"),
    _s("beta", "beta(a0, a1)", "positive", "positive"),
    _s("betainc(x)", "betainc(2.0, 3.0, a0)", "unit"),
    _s("betainc(a,b,x)", "betainc(a0, a1, a2)", "positive", "positive", "unit", modes=frozenset(), known=_AB),
    _s("gammainc(x)", "gammainc(2.5, a0)", "positive"),
    _s("gammainc", "gammainc(a0, a1)", "positive", "positive", modes=FIRST, known=SECOND_ORDER_A),
    _s("gammaincc(x)", "gammaincc(2.5, a0)", "positive"),
    _s("gammaincc", "gammaincc(a0, a1)", "positive", "positive", modes=FIRST, known=SECOND_ORDER_A),
    _s("erf", "erf(a0)", "real"),
    _s("erfc", "erfc(a0)", "real"),
    _s("erfinv", "erfinv(a0)", "ball"),
    _s("erfcx", "erfcx(a0)", "upper"),
    _s("ndtr", "ndtr(a0)", "real"),
    _s("ndtri", "ndtri(a0)", "unit"),
    _s(
        "log_ndtr",
        "log_ndtr(a0)",
        "real",
        documented={
            "large-negative": "documented: below x = -20 log_ndtr is its asymptotic series of order "
            "`series_order` = 3 (primal relative error 1e-11 at x = -21; its derivatives follow, "
            "second ones to ~1e-6; series_order=5 gives 1e-15)"
        },
    ),
    _s("dawsn", "dawsn(a0)", "real"),
    _s("expit", "expit(a0)", "real"),
    _s("logit", "logit(a0)", "unit"),
    _s("xlogy", "xlogy(a0, a1)", "real", "positive"),
    _s("xlog1py", "xlog1py(a0, a1)", "real", "above-minus-one"),
    _s("entr", "entr(a0)", "positive"),
    _s("kl_div", "kl_div(a0, a1)", "positive", "positive"),
    _s("rel_entr", "rel_entr(a0, a1)", "positive", "positive"),
    _s("i0", "i0(a0)", "real"),
    _s("i0e", "i0e(a0)", "real"),
    _s("i1", "i1(a0)", "real"),
    _s("i1e", "i1e(a0)", "real"),
    _s("expi", "expi(a0)", "nonzero", not_run=EXPN_TINY),
    _s("exp1", "exp1(a0)", "positive", not_run=EXPN_TINY),
    _s("expn(2)", "expn(2, a0)", "positive", not_run=EXPN_TINY),
    _s("spence", "spence(a0)", "positive"),
    _s("zeta(3,q)", "zeta(3.0, a0)", "positive"),
    _s("zeta(s,2)", "zeta(a0, 2.0)", "above-one"),
    _s("hyp1f1(x)", "hyp1f1(1.5, 2.5, a0)", "moderate"),
    _s("hyp2f1(x)", "hyp2f1(1.0, 2.0, 3.0, a0)", "ball"),
    _s("poch", "poch(a0, 3.0)", "positive"),
    _s("sici", "sici(a0)", "positive"),
    _s("fresnel", "fresnel(a0)", "real"),
    _s("bessel_jn", "bessel_jn(a0, v=2)", "positive"),
    _s("owens_t", "owens_t(a0, a1)", "real", "real"),
    _s("boxcox", "boxcox(a0, a1)", "scale", "real"),
    _s("boxcox1p", "boxcox1p(a0, a1)", "scale", "real"),
    _s("logsumexp", "logsumexp(a0)", "real", shape=(5,), structure=("repeated",), dtypes=COMPLEX),
    _s("softmax", "softmax(a0)", "real", shape=(5,), structure=("repeated",)),
    _s("log_softmax", "log_softmax(a0)", "real", shape=(5,), structure=("repeated",)),
)

NUMPY = (
    _n("sinc", "sinc(a0)", "real"),
    _n("expm1", "expm1(a0)", "moderate", dtypes=COMPLEX),
    _n("log1p", "log1p(a0)", "above-minus-one", dtypes=COMPLEX),
    _n("exp2", "exp2(a0)", "moderate", dtypes=COMPLEX),
    _n("log2", "log2(a0)", "positive", dtypes=COMPLEX),
    _n("log10", "log10(a0)", "positive", dtypes=COMPLEX),
    _n("cbrt", "cbrt(a0)", "nonzero"),
    _n("arcsin", "arcsin(a0)", "ball", dtypes=COMPLEX),
    _n("arccos", "arccos(a0)", "ball", dtypes=COMPLEX),
    _n("arctanh", "arctanh(a0)", "ball", dtypes=COMPLEX),
    _n("arccosh", "arccosh(a0)", "above-one", dtypes=COMPLEX),
    _n("arcsinh", "arcsinh(a0)", "real", dtypes=COMPLEX),
    _n("hypot", "hypot(a0, a1)", "nonzero", "nonzero"),
    _n("arctan2", "arctan2(a0, a1)", "real", "nonzero"),
    _n("power", "power(a0, a1)", "positive", "real"),
    _n("float_power", "float_power(a0, 2.5)", "positive"),
    _n("logaddexp", "logaddexp(a0, a1)", "real", "real"),
    _n("logaddexp2", "logaddexp2(a0, a1)", "real", "real"),
    _n("i0", "i0(a0)", "real"),
    # Real-valued functions of a complex argument (JAX's gradient convention for non-holomorphic
    # functions), and the holomorphic sqrt and log off their branch cut.
    _n("abs", "abs(a0)", "nonzero", dtypes=COMPLEX),
    _n("angle", "angle(a0)", "nonzero", dtypes=COMPLEX),
    _n("sqrt", "sqrt(a0)", "positive", dtypes=COMPLEX),
    _n("log", "log(a0)", "positive", dtypes=COMPLEX),
    _n("prod", "prod(a0)", "real", shape=(5,), structure=("zeros", "two-zeros"), dtypes=COMPLEX),
    _n("cumprod", "cumprod(a0)", "real", shape=(5,), structure=("zeros", "two-zeros"), dtypes=COMPLEX),
    _n("cumsum", "cumsum(a0, axis=1)", "real", shape=(2, 4), dtypes=COMPLEX),
    _n("var", "var(a0, axis=0)", "real", shape=(5, 2)),
    _n("std", "std(a0, axis=0)", "real", shape=(5, 2)),
    _n("linalg.norm", "linalg.norm(a0)", "real", shape=(5,), dtypes=COMPLEX),
    _n("linalg.det", "linalg.det(a0)", "square-any", shape=(3, 3), dtypes=COMPLEX),
    _n("linalg.slogdet", "linalg.slogdet(a0)[1]", "square", shape=(3, 3), dtypes=COMPLEX),
    _n("linalg.inv", "linalg.inv(a0)", "square", shape=(3, 3), dtypes=COMPLEX),
    _n("linalg.solve", "linalg.solve(a0, a1)", "square", "real", shape=((3, 3), (3,)), dtypes=COMPLEX),
    _n("linalg.cholesky", "linalg.cholesky(a0)", "spd", shape=(3, 3)),
    _n("linalg.eigh", "linalg.eigh(a0)", "symmetric", shape=(3, 3)),
    _n("linalg.eigvalsh", "linalg.eigvalsh(a0)", "symmetric", shape=(3, 3)),
    # Singular vectors are defined up to sign: u * u and vh * vh are not, so they can be differenced.
    Spec(
        "jax.numpy.linalg.svd",
        "u, s, vh = jax.numpy.linalg.svd(a0, full_matrices=False)\nreturn s, u * u, vh * vh",
        ("tall",),
        shape=(4, 3),
    ),
    _n("linalg.qr", "linalg.qr(a0)", "tall", shape=(4, 3), dtypes=COMPLEX),
    _n("linalg.pinv", "linalg.pinv(a0)", "tall", shape=(4, 3), dtypes=COMPLEX),
    _n("linalg.matrix_power", "linalg.matrix_power(a0, 3)", "square", shape=(3, 3), dtypes=COMPLEX),
    Spec("jax.scipy.linalg.expm", "jax.scipy.linalg.expm(a0)", ("square",), shape=(3, 3), dtypes=COMPLEX),
    Spec(
        "jax.scipy.linalg.solve_triangular",
        "jax.scipy.linalg.solve_triangular(a0, a1, lower=True)",
        ("lower", "real"),
        shape=((3, 3), (3,)),
    ),
)

LAX = (
    Spec("jax.lax.cumlogsumexp", "jax.lax.cumlogsumexp(a0)", ("real",), shape=(5,), structure=("repeated",)),
    Spec("jax.lax.cummax", "jax.lax.cummax(a0)", ("real",), shape=(5,), structure=("repeated",)),
    Spec("jax.lax.cumprod", "jax.lax.cumprod(a0)", ("real",), shape=(5,), structure=("zeros", "two-zeros")),
    Spec("jax.lax.sort", "jax.lax.sort(a0)", ("real",), shape=(5,), structure=("repeated",)),
    Spec("jax.lax.integer_pow", "jax.lax.integer_pow(a0, -3)", ("nonzero",)),
    Spec("jax.lax.rsqrt", "jax.lax.rsqrt(a0)", ("positive",)),
    Spec("jax.lax.zeta", "jax.lax.zeta(a0, a1)", ("above-one", "positive")),
    Spec("jax.nn.softplus", "jax.nn.softplus(a0)", ("real",)),
    Spec("jax.nn.gelu", "jax.nn.gelu(a0, approximate=False)", ("real",)),
    Spec("jax.nn.silu", "jax.nn.silu(a0)", ("real",)),
    Spec("jax.nn.log_sigmoid", "jax.nn.log_sigmoid(a0)", ("real",)),
)

SPECS: tuple[Spec, ...] = SPECIAL + NUMPY + LAX

__all__ = ["ALL", "BETAINC_AB", "COMPLEX", "FIRST", "REAL", "SECOND_ORDER_A", "SPECS", "Spec"]
