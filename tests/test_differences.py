"""Direct tests of `advalidate.differences`, the one module of numerical differences (issue #41 item 2):
known derivatives recovered, the order of Richardson extrapolation, noise estimates, one-sided
differences at a kink, the high-precision variant, and the standalone source for repro scripts."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advalidate import differences as D

K, KINK_RTOL = 10.0, 1e-6  # check_function's (oracles.function.K, tolerance.FUNCTION_KINK_RTOL)


def terms(f):
    """φ(t) -> (value, Σ|terms|) as `directional` takes it, for a scalar f."""
    return lambda t: (f(t), abs(f(t)))


def test_the_module_imports_nothing_of_advalidate():
    """So that every layer above the language may use it, `impl` (the repro writer) included, which
    must never import `advalidate.oracles` (CONTRIBUTING.md, architecture rules)."""
    tree = ast.parse(Path(D.__file__).read_text(encoding="utf-8"))
    found = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = [a.name for n in found if isinstance(n, ast.Import) for a in n.names]
    names += [("." * n.level) + (n.module or "") for n in found if isinstance(n, ast.ImportFrom)]
    assert "math" in names and not [m for m in names if m.startswith((".", "advalidate"))], names


# -- known derivatives ---------------------------------------------------------------------------

CASES = [
    ("cubic", lambda a: lambda t: 3 * (a + t) ** 3 - 2 * (a + t), lambda a: 9 * a * a - 2),
    ("exp", lambda a: lambda t: math.exp(a + t), lambda a: math.exp(a)),
    ("sin", lambda a: lambda t: math.sin(a + t), lambda a: math.cos(a)),
]


@pytest.mark.parametrize("name,make,deriv", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("a", [-3.0, 0.0, 0.5, 7.0, 40.0])
def test_directional_recovers_known_derivatives(name, make, deriv, a):
    fd = D.directional(terms(make(a)), k=K, kink_rtol=KINK_RTOL)
    assert not isinstance(fd, str) and not fd.kink
    true = deriv(a)
    size = max(abs(true), abs(make(a)(0.0)), 1.0)
    assert abs(fd.central - true) <= 1e-10 * size
    assert abs(fd.central - true) <= K * fd.central_err + 1e-14 * size  # the error estimate holds
    assert abs(fd.right - true) <= 1e-7 * size and abs(fd.left - true) <= 1e-7 * size


@pytest.mark.parametrize("scale", [1e-6, 1e-2, 1.0, 1e3, 1e8])
def test_directional_at_various_scales_of_the_direction(scale):
    # φ(t) = sin(x + t·v) with v = scale: the derivative is scale · cos(x)
    x = 0.3
    fd = D.directional(terms(lambda t: math.sin(x + t * scale)), k=K, kink_rtol=KINK_RTOL)
    if scale > 1e3:  # steps of 2⁻² · 1e8 wrap round sin: not resolved, and the error estimate says so
        assert isinstance(fd, str) or fd.kink or fd.central_err > 1e-5 * abs(fd.central)
        return
    assert not isinstance(fd, str) and not fd.kink
    assert fd.central == pytest.approx(scale * math.cos(x), rel=1e-9)


@pytest.mark.parametrize("name,make,deriv", CASES, ids=[c[0] for c in CASES])
def test_dfridr_recovers_known_derivatives(name, make, deriv):
    est, err = D.dfridr(make(0.7))
    assert est == pytest.approx(deriv(0.7), rel=1e-10)
    assert err < 1e-8


@pytest.mark.parametrize("a", ["0.25", "3", "-20"])
def test_mp_derivative_at_60_digits_is_good_to_40(a):
    with mpmath.workdps(80):
        x = mpmath.mpf(a)
    phi = lambda t: mpmath.exp(x + t) * mpmath.sin(x + t)  # noqa: E731
    d, gap = D.mp_derivative(phi, mpmath.mpf("1e-12"), 60)
    d2, err = D.mp_derivative(phi, mpmath.mpf("1e-12"), 60, 80, rounding_k=2)
    with mpmath.workdps(80):
        true = mpmath.exp(x) * (mpmath.sin(x) + mpmath.cos(x))
        assert abs(d - true) <= mpmath.mpf("1e-40") * max(1, abs(true))
        assert abs(d2 - true) <= mpmath.mpf("1e-40") * max(1, abs(true))
        assert gap < mpmath.mpf("1e-40") and err >= gap
        assert abs(d2 - true) <= max(err, mpmath.mpf("1e-60"))


def test_mp_derivative_sees_the_rounding_of_a_cancelling_phi():
    # φ(t) = (1e30 + t) - 1e30 loses 30 digits: at 20 digits the difference is garbage, at 60 exact
    phi = lambda t: (mpmath.mpf(10) ** 30 + t) - mpmath.mpf(10) ** 30  # noqa: E731
    _d, err = D.mp_derivative(phi, mpmath.mpf("1e-12"), 20, 60, rounding_k=2)
    assert err > 1e-3


# -- Richardson ------------------------------------------------------------------------------------


def test_richardson_levels_raise_the_order_by_two_for_central_differences():
    """Plain central differences err by c h², level 1 by c' h⁴, level 2 by c'' h⁶: halving h cuts
    the error of level j by about 4^(j+1)."""
    with mpmath.workdps(100):
        hs = D.halving(mpmath.mpf("0.1"), 6)
        ds = [D.central(mpmath.exp, h) for h in hs]
        rows = [row for row, _ in D.richardson_rows(ds, 4.0, 3)]
        for j, want in ((0, 4), (1, 16), (2, 64)):
            errs = [abs(row[j] - 1) for row in rows[j:]]
            ratios = [float(errs[i] / errs[i + 1]) for i in range(len(errs) - 1)]
            assert all(abs(r / want - 1) < 0.1 for r in ratios), (j, ratios)


def test_richardson_levels_raise_the_order_by_one_for_one_sided_differences():
    with mpmath.workdps(100):
        hs = D.halving(mpmath.mpf("0.01"), 6)
        right = [D.one_sided(mpmath.exp, h, mpmath.mpf(1))[0] for h in hs]
        rows = [row for row, _ in D.richardson_rows(right, 2.0, 3)]
        for j, want in ((0, 2), (1, 4), (2, 8)):
            errs = [abs(row[j] - 1) for row in rows[j:]]
            ratios = [float(errs[i] / errs[i + 1]) for i in range(len(errs) - 1)]
            assert all(abs(r / want - 1) < 0.1 for r in ratios), (j, ratios)


def test_richardson_is_the_fd_oracles_two_levels():
    d = [mpmath.mpf("1.3"), mpmath.mpf("1.1"), mpmath.mpf("1.05")]
    r1 = [(4 * d[1] - d[0]) / 3, (4 * d[2] - d[1]) / 3]
    r2 = (16 * r1[1] - r1[0]) / 15
    assert D.richardson(d) == (r2, abs(r2 - r1[1]))


def test_ridders_skips_non_finite_quotients_and_says_so_when_none_is_left():
    d = [math.nan] * 5
    assert math.isnan(D.ridders(d, 2, [0.0] * 5)[0]) and D.ridders(d, 2, [0.0] * 5)[1] == math.inf
    hs = D.halving(0.25, 12)
    d = [math.nan, math.nan] + [D.central(math.sin, h) for h in hs[2:]]
    est, err = D.ridders(d, 2, [1e-16 / h for h in hs])
    assert est == pytest.approx(1.0, rel=1e-10) and err < 1e-9


def test_ridders_error_floor_is_the_noise_amplified():
    hs = D.halving(0.25, 8)
    d = [D.central(math.exp, h) for h in hs]
    _, quiet = D.ridders(d, 2, [0.0] * 8)
    _, noisy = D.ridders(d, 2, [1e-3] * 8)
    assert noisy >= 1e-3 * D.amplification(2)[1] > quiet


# -- noise -----------------------------------------------------------------------------------------


def noisy(amplitude: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    return lambda t: (math.exp(0.5 + t) + amplitude * rng.standard_normal(), math.exp(0.5 + t))


def test_noise_level_grows_with_the_noise_of_phi():
    smooth = D.noise_level(terms(lambda t: math.exp(0.5 + t)), math.exp(0.5))
    levels = [D.noise_level(noisy(a), noisy(a)(0.0)[0]) for a in (1e-12, 1e-9, 1e-6)]
    assert smooth < 1e-14
    assert smooth < levels[0] < levels[1] < levels[2]
    for a, level in zip((1e-12, 1e-9, 1e-6), levels, strict=True):
        assert a / 10 < level < 10 * a


def test_noisy_phi_gets_a_larger_error_estimate():
    quiet = D.directional(terms(lambda t: math.exp(0.5 + t)), k=K, kink_rtol=KINK_RTOL)
    loud = D.directional(noisy(1e-7), k=K, kink_rtol=KINK_RTOL)
    assert loud.noise > 100 * quiet.noise and loud.central_err > 100 * quiet.central_err
    assert loud.relative_noise > 1e-8


# -- one-sided differences at a kink ---------------------------------------------------------------


def test_one_sided_differences_of_abs_at_zero():
    assert D.one_sided(abs, 1e-6, 0.0) == (1.0, -1.0)
    assert D.central(abs, 1e-6) == 0.0
    assert D.quotients(0.0, abs(1e-6), abs(-1e-6), 1e-6) == (0.0, 1.0, -1.0)
    with mpmath.workdps(50):
        assert D.one_sided(abs, mpmath.mpf("1e-30"), mpmath.mpf(0)) == (1, -1)


def test_mp_one_sided_gives_both_pieces_slopes_at_a_kink():
    """φ(t) = exp(t) - 1 for t >= 0, 2 sin t below: the slopes 1 and 2 to some 35 digits at 60."""

    def phi(t):
        return mpmath.exp(t) - 1 if t >= 0 else 2 * mpmath.sin(t)

    (right, rgap), (left, lgap) = D.mp_one_sided(phi, mpmath.mpf("1e-12"), 60)
    assert abs(right - 1) < mpmath.mpf("1e-35") and abs(left - 2) < mpmath.mpf("1e-35")
    assert rgap < mpmath.mpf("1e-20") and lgap < mpmath.mpf("1e-20")
    (r, _), (lf, _) = D.mp_one_sided(abs, mpmath.mpf("1e-12"), 60)
    assert (r, lf) == (1, -1)


def test_directional_finds_the_kink_of_abs_and_its_two_slopes():
    fd = D.directional(terms(lambda t: abs(t) + 0.5 * t), k=K, kink_rtol=KINK_RTOL)
    assert fd.kink.startswith("a kink at x along v")
    assert fd.right == pytest.approx(1.5, abs=1e-12) and fd.left == pytest.approx(-0.5, abs=1e-12)
    assert not fd.ok


def test_directional_finds_a_staircase_and_a_domain_boundary():
    stairs = D.directional(terms(lambda t: round(0.3 + t, 3)), k=K, kink_rtol=KINK_RTOL)
    assert "jump or staircase" in stairs.kink or "kink" in stairs.kink
    assert D.directional(terms(lambda t: math.nan), k=K, kink_rtol=KINK_RTOL) == (
        "f is not finite at the example arguments"
    )
    both = D.directional(terms(lambda t: 1.0 if t == 0 else math.nan), k=K, kink_rtol=KINK_RTOL)
    assert "on either side" in both
    side = D.directional(terms(lambda t: math.sqrt(t) if t >= 0 else math.nan), k=K, kink_rtol=KINK_RTOL)
    assert "on one side" in side


# -- steps -----------------------------------------------------------------------------------------


def test_steps():
    assert D.halving(0.25, 4) == [0.25, 0.125, 0.0625, 0.03125]
    assert D.scaled_step(0.0, 1e-6) == 1e-6 and D.scaled_step(-1e4, 1e-6) == pytest.approx(1e-2)


# -- standalone source for the repro scripts --------------------------------------------------------


def fresh(source: str) -> dict:
    ns = {"np": np}
    exec(compile(source, "<repro>", "exec"), ns)  # noqa: S102 - our own module's source
    return ns


def test_standalone_source_runs_alone_and_gives_the_same_numbers():
    src = D.standalone_source(*D.STANDALONE)
    assert "advalidate" not in src and "{" not in src and "}" not in src  # embeddable in a str.format template
    ns = fresh(src)
    for f in (math.exp, math.sin, lambda t: (0.3 + t) ** 5, lambda t: float(np.tanh(np.float64(2.0 + 7 * t)))):
        assert ns["dfridr"](f) == D.dfridr(f)
        assert ns["dfridr"](f, 0.1, 2.0, 8) == D.dfridr(f, 0.1, 2.0, 8)
        assert ns["central"](f, 1e-6) == D.central(f, 1e-6)
        assert ns["one_sided"](f, 1e-6, f(0.0)) == D.one_sided(f, 1e-6, f(0.0))
    assert ns["scaled_step"](-3.5, 1e-6) == D.scaled_step(-3.5, 1e-6)
    rows = [r for r, _ in ns["richardson_rows"]([1.0, 0.5, 0.3, 0.2], 4.0, 2)]
    assert rows == [r for r, _ in D.richardson_rows([1.0, 0.5, 0.3, 0.2], 4.0, 2)]


def test_standalone_source_brings_what_a_function_calls_once():
    src = D.standalone_source("dfridr", "central")
    assert src.count("def central(") == 1 and src.count("def richardson_rows(") == 1
    assert src.index("def central(") < src.index("def dfridr(")
    fresh(src)["dfridr"](math.exp)
    with pytest.raises(ValueError, match="not a standalone function"):
        D.standalone_source("directional")


@pytest.mark.parametrize("name", sorted(D.STANDALONE))
def test_each_standalone_function_names_only_what_its_source_brings(name):
    """Every name of the module that a function's code (nested functions included) uses is in its
    emitted source: an import of the header or a function `standalone_source` brings with it."""
    ns = fresh(D.standalone_source(name))

    def names(code):
        out = set(code.co_names)
        for c in code.co_consts:
            if hasattr(c, "co_names"):
                out |= names(c)
        return out

    used = names(getattr(D, name).__code__) & set(vars(D))
    assert used <= set(ns), used - set(ns)
    if name == "dfridr":  # the scan sees calls and imports
        assert {"central", "richardson_rows", "math"} <= used


#: The `ridders` the sweep repro.py templates held before they embedded `standalone_source("dfridr")`
#: (sweep/repro_torch.py at 4790389, over a global phi), kept as the reference that the switch left
#: every repro script's numbers as they were.
FORMER_TEMPLATE_RIDDERS = """
def ridders(h=1e-3, shrink=1.4, levels=12):
    a = [[0.0] * levels for _ in range(levels)]
    a[0][0] = (phi(h) - phi(-h)) / (2 * h)
    best, err = a[0][0], math.inf
    for i in range(1, levels):
        h /= shrink
        a[0][i] = (phi(h) - phi(-h)) / (2 * h)
        fac = shrink * shrink
        for j in range(1, i + 1):
            a[j][i] = (a[j - 1][i] * fac - a[j - 1][i - 1]) / (fac - 1)
            fac *= shrink * shrink
            e = max(abs(a[j][i] - a[j - 1][i]), abs(a[j][i] - a[j - 1][i - 1]))
            if e <= err:
                best, err = a[j][i], e
        if abs(a[i][i] - a[i - 1][i - 1]) >= 2 * err:
            break
    return best, err
"""


def templates_ridders(phi):
    """The templates' former `ridders`, run on `phi`."""
    ns = {"math": math, "phi": phi}
    exec(compile(FORMER_TEMPLATE_RIDDERS, "<repro_torch at 4790389>", "exec"), ns)  # noqa: S102 - a fixed text
    return ns["ridders"]()


def test_the_sweep_templates_embed_the_emitted_dfridr_and_no_ridders_of_their_own():
    """Both sweep repro.py templates hold `standalone_source("dfridr")` verbatim, once, and call it on
    their phi; a rendered script holds it unchanged (it has no brace for str.format to touch)."""
    from advalidate.sweep import repro_jax, repro_torch

    src = D.standalone_source("dfridr", imports=False)  # their imports are in their own import block
    for template in (repro_torch.TEMPLATE, repro_jax.TEMPLATE):
        assert template.count(src) == 1 and template.count("def dfridr(") == 1
        assert "expected, err = dfridr(phi)" in template and "ridders" not in template.replace("Ridders", "")
    rec = {"args": [[0.5]], "call_source": "def f(x):\n    return x\n", "nondiff_outputs": []}
    finding = {"op": "x", "mode": "reverse", "kind": "wrong", "sample": 0, "variant": 0, "record": rec}
    for module in (repro_torch, repro_jax):
        assert src in module.render(finding, "0.0")


@settings(deadline=None, max_examples=60)
@given(
    st.floats(-5, 5),
    st.floats(-3, 3),
    st.sampled_from([math.sin, math.exp, math.atan, lambda t: abs(t), lambda t: round(t, 2)]),
)
def test_dfridr_is_the_repro_templates_former_ridders_to_the_bit(x, scale, f):
    phi = lambda t: f(x + scale * t)  # noqa: E731
    calls_a, calls_b = [], []
    ours = D.dfridr(lambda t: calls_a.append(t) or phi(t))
    theirs = templates_ridders(lambda t: calls_b.append(t) or phi(t))
    assert repr(ours) == repr(theirs) and calls_a == calls_b  # the same numbers from the same evaluations


# -- properties --------------------------------------------------------------------------------------


@settings(deadline=None, max_examples=40)
@given(st.lists(st.integers(-1000, 1000), min_size=1, max_size=6), st.integers(-50, 50))
def test_polynomials_up_to_degree_5_are_exact_at_high_precision(coeffs, x10):
    """Central differences of a polynomial of degree <= 5 err by a h² + b h⁴ exactly: two Richardson
    levels remove both, so only rounding at 60 digits is left."""
    with mpmath.workdps(80):
        x = mpmath.mpf(x10) / 10

    def p(t):
        return mpmath.fsum(c * (x + t) ** k for k, c in enumerate(coeffs))

    d, _gap = D.mp_derivative(p, mpmath.mpf("1e-3"), 60)  # (the gap is the level below's error: h⁴ terms)
    with mpmath.workdps(80):
        true = mpmath.fsum(k * c * x ** (k - 1) for k, c in enumerate(coeffs) if k)
        size = mpmath.fsum(abs(c) * (abs(x) + 1) ** k for k, c in enumerate(coeffs))
        assert abs(d - true) <= mpmath.mpf("1e-50") * size


@settings(deadline=None, max_examples=100)
@given(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6), st.floats(1e-8, 1.0))
def test_one_richardson_step_removes_a_linear_error(d0, c, h):
    fine, coarse = d0 + c * h, d0 + c * 2 * h
    assert D.extrapolate(fine, coarse, 2) == pytest.approx(d0, abs=1e-9 * (abs(d0) + abs(c) + 1))


@settings(deadline=None, max_examples=40)
@given(st.floats(-0.5, 0.5), st.floats(-1e3, 1e3).filter(lambda s: abs(s) > 1e-3), st.floats(-10, 10))
def test_one_sided_differences_of_a_kink_give_each_slope(kink, left, right):
    """φ(t) = left·t for t < k, right·t beyond it (shifted so that the kink is at k): at the kink the
    one-sided quotients are the two slopes, whatever the step."""

    def phi(t):
        u = t - kink
        return right * u if u >= 0 else left * u

    r, lf = D.one_sided(lambda t: phi(kink + t), 1e-3, phi(kink))
    assert r == pytest.approx(right, rel=1e-9, abs=1e-9) and lf == pytest.approx(left, rel=1e-9, abs=1e-9)


@settings(deadline=None, max_examples=40)
@given(st.floats(-3, 3), st.floats(0.01, 30), st.floats(-2, 2))
def test_directional_error_estimate_covers_the_truth(a, b, c):
    """sin(a + b t) + c t: a smooth φ whose derivative the float64 estimate recovers within K times
    its own error estimate (plus float64 rounding of the size)."""
    phi = terms(lambda t: math.sin(a + b * t) + c * t)
    fd = D.directional(phi, k=K, kink_rtol=KINK_RTOL)
    true = b * math.cos(a) + c
    assert not isinstance(fd, str)
    if not fd.kink:
        assert abs(fd.central - true) <= K * fd.central_err + 1e-13 * (abs(b) + abs(c) + 1)


def test_settled_start_skips_the_flat_tails_of_a_narrow_bump_far_from_zero():
    # a Gaussian of width 50 at 5e5 along a direction scaled by |x|: the large steps see its flat
    # tails, whose central differences are 0 with an error estimate of 0 (issue #40 item 5)
    x0, v = 5e5 + 20.0, 5e5

    def phi(t):
        y = math.exp(-((x0 + t * v - 5e5) ** 2) / (2 * 50.0**2))
        return y, y

    exact = -20.0 / 50.0**2 * math.exp(-(20.0**2) / (2 * 50.0**2)) * v
    assert D.directional(phi, k=K, kink_rtol=KINK_RTOL).kink  # every step from |x|: no judgement
    fd = D.directional(phi, k=K, kink_rtol=KINK_RTOL, settle=1e-5)
    assert not fd.kink and abs(fd.central - exact) <= 1e-8 * abs(exact), fd
    quotients = [1.0, 1.0, 5.0, 3.0, 2.5, 2.4, 2.39]
    assert D.settled_start(quotients, [0.0] * 7, keep=2) == 2
    assert D.settled_start([1.0] * 7, [0.0] * 7, keep=2) == 0
