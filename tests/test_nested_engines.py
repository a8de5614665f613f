"""Nested AD through the built-in engines (seed 001 via `advalidate.impl.seed001`).

Every stage that supports "nested" differentiates programs with `grad` / `vjp` / `jvp` inside them
after the operators are eliminated into ordinary code. The expectations are independent of that
pass: closed forms derived by hand (stated next to each program), mp central differences of the
reference interpreter (whose nested operators are tagged forward mode, `lang/nested.py`), and for
Hessian-vector products sympy's Hessian of the expression. Complexity is judged on operation
counts, never on timings.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import mpmath
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from nested_programs import CONFUSION, HESSIAN_FR, HESSIAN_RR, fd_gradient

import advalidate as adv
from advalidate.impl.seed001 import Declined, specialise
from advalidate.impl.seed001.specialise import MAX_COPIES
from advalidate.lang.core_pretty import pretty_core
from advalidate.lang.program import evaluate
from advalidate.lang.values import flatten, unflatten
from advalidate.report.nested import HVP_CONSTANT, hvp_costs, hvp_family, point, run_core, run_eliminated

NESTED_ENGINES = ("naive", "staged", "cayley", "sparse", "mutable", "tape", "parallel", "forward", "delta")
SEED004 = ("delta", "dualarrays", "bot", "compiled")


# (source, input, value by hand or None); gradients are checked against mp differences of the reference.
PROGRAMS: dict[str, tuple[str, Any, Any]] = {
    "hessian_rr": (HESSIAN_RR, (3.0, 4.0), (52.0, 85.0)),
    "hessian_fr": (HESSIAN_FR, (3.0, 4.0), (52.0, 85.0)),
    "confusion": (CONFUSION, 2.5, 1.0),
    # x · d/dy (x·y) = x²: the inner operator sees the captured x as a constant.
    "captured": (r"\(z : R) -> grad (\x -> x * grad (\y -> x * y) 1.0) z", 3.0, 6.0),
    # g y = x sin y captures the differentiated x and is differentiated itself (a let-bound copy):
    # d/dx (x sin x + x cos x) = sin x + x cos x + cos x − x sin x.
    "closure_copy": (
        r"\(z : R) -> grad (\x -> let g = \y -> x * sin y in g x + grad g x) z",
        0.7,
        math.sin(0.7) + 0.7 * math.cos(0.7) + math.cos(0.7) - 0.7 * math.sin(0.7),
    ),
    # (x sin x)'' = 2 cos x − x sin x.
    "grad_grad": (
        r"\(x : R) -> grad (\y -> grad (\z -> z * sin z) y) x",
        0.7,
        2 * math.cos(0.7) - 0.7 * math.sin(0.7),
    ),
    # (x⁴)''' = 24 x.
    "grad_grad_grad": (r"\(x : R) -> grad (\a -> grad (\b -> grad (\c -> c * c * c * c) b) a) x", 1.5, 36.0),
    # d³/dx³ exp(2x) = 8 exp(2x).
    "third_exp": (
        r"\(x : R) -> grad (\a -> grad (\b -> grad (\c -> exp (2.0 * c)) b) a) x",
        0.25,
        8 * math.exp(0.5),
    ),
    # f(u, v) = u²v + sin(uv): H(a, b) · (b, a), forward over reverse.
    "jvp_of_grad": (
        r"""\(x : (R, R)) -> let (a, b) = x in
        jvp (\p -> grad (\(u, v) -> u * u * v + sin (u * v)) p) (a, b) (b, a)""",
        (0.5, 2.0),
        None,
    ),
    # ∇ of the directional derivative ∇f(p) · (1, x₁): reverse over forward.
    "grad_of_jvp": (
        r"\(x : (R, R)) -> grad (\p -> jvp (\(u, v) -> u * u * v + sin (u * v)) p (1.0, fst x)) x",
        (0.5, 2.0),
        None,
    ),
    # J(a, b)ᵀ (1, (2, ())) for (a, b) ↦ (ab, (exp a, ())): (b + 2 exp a, a).
    "vjp_tuples": (
        r"\(x : (R, R)) -> vjp (\(a, b) -> (a * b, (exp a, ()))) x (1.0, (2.0, ()))",
        (0.5, 2.0),
        (2.0 + 2 * math.exp(0.5), 0.5),
    ),
    # vjp inside grad with a cotangent that depends on the point.
    "grad_of_vjp": (
        r"""\(x : (R, R)) -> grad (\p -> let (g1, g2) = vjp (\(a, b) -> (a * b, sin a)) p (fst p, 1.0) in
        g1 * g2) x""",
        (0.3, -1.2),
        None,
    ),
    # |y|³-like branch on the primal: for y ≥ 0, d/dy y³ = 3y².
    "if_inside": (r"\(x : R) -> grad (\y -> if y < 0.0 then - y * y else y * y * y) x", 1.1, 3 * 1.1**2),
    # y⁴ by a local letrec plus 2y: 4y³ + 2.
    "letrec_inside": (
        r"""\(x : R) -> grad (\y -> letrec pw (n : Z) : R = if n <= 0 then 1.0 else y * pw (n - 1) in
        pw 4 + (if y < 0.0 then y else 2.0 * y)) x""",
        1.3,
        4 * 1.3**3 + 2,
    ),
    # A letrec outside the operator, copied in: d/dy (x · y³) = 3xy² at y = x.
    "letrec_outside": (
        r"""\(x : R) -> letrec pw (n : Z) (y : R) : R = if n <= 0 then 1.0 else y * pw (n - 1) y in
        grad (\y -> x * pw 3 y) x""",
        1.3,
        3 * 1.3**3,
    ),
    # Gradient descent on u² from x, three steps: x · 0.8³.
    "grad_in_loop": (
        r"""\(x : R) -> letrec it (n : Z) (y : R) : R =
          if n <= 0 then y else it (n - 1) (y - 0.1 * grad (\u -> u * u) y) in it 3 x""",
        2.0,
        2.0 * 0.8**3,
    ),
    # A free list and lists inside the function: d/dy (y·Σxs + y·y + 3y) = Σxs + 2y + 3.
    "lists": (
        r"""\((x, xs) : (R, [R])) ->
        grad (\y -> y * sum xs + foldl (\a b -> a + b * y) 0.0 [y, 3.0]) x""",
        (0.5, [1.0, -2.0, 4.0]),
        3.0 + 1.0 + 3.0,
    ),
    # A free sum value (a constant inside) and a `par` inside the function: d/dy (y² sin y · k).
    "sum_and_par": (
        r"""\((x, s) : (R, R + R)) -> let k = case s of { inl a -> a; inr b -> 2.0 * b } in
        grad (\y -> let (a, b) = par (y * y, sin y) in a * b * k) x""",
        (0.9, adv.Inr(1.5)),
        3.0 * (2 * 0.9 * math.sin(0.9) + 0.9**2 * math.cos(0.9)),
    ),
    # A function parameter applied on the spot is a let: (\h -> grad h x) (\y -> y³) = 3x².
    "beta_redex": (r"\(x : R) -> (\(h : R -> R) -> grad h x) (\y -> y * y * y)", 0.6, 3 * 0.6**2),
    # A unit domain: nothing is perturbed.
    "unit_domain": (r"\(x : R) -> x + jvp (\u -> x * x) () ()", 2.0, 2.0),
}


def _climb(df: Any, n: int, y: float, rate: float) -> float:
    """n steps y ← y + rate · f'(y): the value of the `climb` programs below, by hand."""
    for _ in range(n):
        y += rate * df(y)
    return y


CLIMB = "def climb (f : R -> R) (n : Z) (y : R) : R = if n <= 0 then y else climb f (n - 1) (y + 0.25 * grad f y)\n"

# Higher-order functions that take the differentiated function as a parameter: the engines accept
# them after the static-argument specialisation (`seed001/specialise.py`) made its code known.
HIGHER_ORDER: dict[str, tuple[str, Any, Any]] = {
    # f is static in the recursion, the call site passes a lambda: three steps y ← y + cos y / 2.
    "hof_static_recursion": (
        r"""\(x : R) -> letrec climb (f : R -> R) (n : Z) (y : R) : R =
          if n <= 0 then y else climb f (n - 1) (y + 0.5 * grad f y) in climb (\u -> sin u) 3 x""",
        0.3,
        _climb(math.cos, 3, 0.3, 0.5),
    ),
    # A non-recursive helper, two call sites with different functions (inlining): cos x + 2x.
    "hof_helper_two_sites": (
        r"\(x : R) -> let d = \f -> \y -> grad f y in d sin x + d (\t -> t * t) x",
        0.4,
        math.cos(0.4) + 0.8,
    ),
    # The call site's lambda captures k, bound there from the input: Newton's method for √(c² + 1).
    "hof_captures_at_call_site": (
        r"""\((x, c) : (R, R)) -> let k = c * c + 1.0 in
        letrec newton (f : R -> R) (n : Z) (y : R) : R =
          if n <= 0 then y else newton f (n - 1) (y - f y / grad f y) in
        newton (\u -> u * u - k) 4 x""",
        (1.0, 2.0),
        _climb(lambda y: -(y * y - 5.0) / (2 * y), 4, 1.0, 1.0),
    ),
    # One recursive function, two call sites: a let-bound lambda capturing x, a def-bound function.
    "hof_two_call_sites": (
        CLIMB
        + """def bump (u : R) : R = exp (0.0 - u * u)
def main (x : R) : R = let g = \\u -> sin u * x in climb g 2 x + climb bump 2 (x * 0.5)""",
        0.7,
        _climb(lambda u: 0.7 * math.cos(u), 2, 0.7, 0.25) + _climb(lambda u: -2 * u * math.exp(-u * u), 2, 0.35, 0.25),
    ),
    # A non-recursive function passes its parameter on to `climb` (specialised in a second round).
    "hof_passed_on": (
        CLIMB
        + """def twice (f : R -> R) (y : R) : R = climb f 2 y + grad f y
def main (x : R) : R = twice (\\u -> x * cos u) x""",
        0.6,
        _climb(lambda u: -0.6 * math.sin(u), 2, 0.6, 0.25) - 0.6 * math.sin(0.6),
    ),
    # The function parameter second, after a tuple pattern: (a, b) goes (x, 2), (2, x + 1), (x + 1, 3),
    # then 3 (ab)² = 3 (3 (x + 1))².
    "hof_parameter_second": (
        """def h ((a, b) : (R, R)) (f : R -> R) (n : Z) : R =
  if n == 0 then grad f (a * b) else h (b, a + 1.0) f (n - 1)
def main (x : R) : R = h (x, 2.0) (\\t -> t * t * t) 2""",
        0.5,
        3 * (3 * 1.5) ** 2,
    ),
    # A partial application passed (`scale x`), the result applied past the parameters: 6x².
    "hof_partial_and_result_applied": (
        """def scale (a : R) (u : R) : R = a * u * u
def pick (f : R -> R) (y : R) : R -> R = if y > 0.0 then (\\z -> grad f y * z) else (\\z -> z)
def main (x : R) : R = pick (scale x) x 3.0""",
        0.5,
        1.5,
    ),
    # f is the only parameter of a recursive function: its copy takes `()`. d/du (u² x) at 1 > 0: 2x².
    "hof_only_parameter": (
        r"""\(x : R) -> letrec fix (f : R -> R) : R = if grad f 1.0 > 0.0 then grad f x else fix f in
        fix (\u -> u * u * x)""",
        0.8,
        2 * 0.8**2,
    ),
}
PROGRAMS |= HIGHER_ORDER

DECLINED = {
    # f changes from one recursive call to the next: not a static argument.
    "not_static": (
        r"""\(x : R) -> letrec it (f : R -> R) (n : Z) (y : R) : R =
          if n <= 0 then grad f y else it (\t -> 2.0 * f t) (n - 1) y in it (\t -> t * t) 2 x""",
        0.4,
        r"`f_\d+` is a function parameter, not specialised away \(`f_\d+` is not a static argument of `it_\d+`: "
        r"a recursive call passes `\\t_\d+ -> 2.0 \* \(f_\d+ t_\d+\)` for it\)",
    ),
    # The helper's only call passes a function taken out of a list.
    "unknown_at_call_site": (
        r"""\(x : R) -> let d = \f -> \y -> grad f y in
        case [\y -> y * y] of { [] -> 0.0; h :: t -> d h x }""",
        1.0,
        r"a call of `d_\d+` passes `h_\d+` for `f_\d+`, and `h_\d+` is bound by a list pattern",
    ),
    # The helper escapes as a value: no call supplies f.
    "escapes": (
        r"\(x : R) -> let d = \(f : R -> R) -> \(y : R) -> grad f y in let e = d in e sin x",
        1.0,
        r"`d_\d+` is used as a value or applied without its argument `f_\d+`",
    ),
    # f is the parameter of an anonymous lambda passed to another function.
    "anonymous": (
        r"\(x : R) -> let app = \(k : (R -> R) -> R) -> k (\y -> y * y) in app (\f -> grad f x)",
        1.0,
        r"`f_\d+` is not a parameter of a function bound by `let` or `letrec`",
    ),
    # More call sites than the bound on copies.
    "too_many_copies": (
        r"\(x : R) -> let d = \f -> \y -> grad f y in "
        + " + ".join(f"d (\\t -> t * {k}.0) x" for k in range(MAX_COPIES + 1)),
        1.0,
        f"the bound of {MAX_COPIES} specialised copies was reached",
    ),
    "list": (
        r"\(x : R) -> let fs = [\y -> y, \y -> y * y] in case fs of { [] -> 0.0; h :: t -> grad h x }",
        1.0,
        "out of a list",
    ),
    "recursive": (
        r"\(x : R) -> letrec h (n : Z) (y : R) : R = if n <= 0 then y * y else grad (\u -> h (n - 1) u) y in h 2 x",
        1.0,
        "recursive function",
    ),
}


def ones(y: Any) -> Any:
    return unflatten(y, [1.0] * len(flatten(y)))


def close(got: list, want: list, rel: float) -> bool:
    return all(abs(float(g) - float(w)) <= rel * max(1.0, abs(float(w))) for g, w in zip(got, want, strict=True))


def test_nested_engines_are_the_element_at_a_time_stages() -> None:
    """Seed 000's stages and seed 004 §2's `delta` (its Delta terms over the shared translation);
    the whole-array stages of seed 004 decline: elimination writes element-at-a-time code."""
    have = {n for n in adv.engine_names() if "nested" in (getattr(adv.engine(n), "supports", None) or ())}
    assert have == set(NESTED_ENGINES)
    assert have & set(SEED004) == {"delta"}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_elimination_preserves_the_value(name: str) -> None:
    src, x, want = PROGRAMS[name]
    prog = adv.parse(src)
    got, _ = run_eliminated(prog, x)
    ref = evaluate(prog, x)
    assert close(flatten(got), flatten(ref), 1e-13)
    if want is not None:
        assert close(flatten(got), flatten(want), 1e-13)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_nested_engine_agrees_with_mp_differences(name: str) -> None:
    src, x, want = PROGRAMS[name]
    prog = adv.parse(src)
    ref = evaluate(prog, x)
    dy = unflatten(ref, [1.0 + 0.5 * k for k in range(len(flatten(ref)))])
    expected = fd_gradient(prog, x, dy)
    for eng in NESTED_ENGINES:
        y, back = adv.engine(eng).vjp(prog, x)
        assert close(flatten(y), flatten(want if want is not None else ref), 1e-12), (eng, y)
        assert close(flatten(back(dy)), expected, 1e-9), (eng, back(dy), expected)


def test_golden_examples_pass_every_oracle() -> None:
    for src, x in ((HESSIAN_RR, (3.0, 4.0)), (HESSIAN_FR, (3.0, 4.0)), (CONFUSION, -1.5)):
        res = adv.check(adv.parse(src), x, engines=NESTED_ENGINES, oracles=["symbolic", "fd", "cross"])
        statuses = [v.status for v in res.verdicts]
        assert res.ok and statuses.count("pass") == 3 * len(NESTED_ENGINES), res


def test_confusion_value_on_every_engine() -> None:
    # The answer 2 would mean the inner derivative also saw the outer perturbation of x.
    prog = adv.parse(CONFUSION)
    for eng in NESTED_ENGINES:
        for z in (1.0, -2.5, 7.0):
            y, back = adv.engine(eng).vjp(prog, z)
            assert y == 1.0 and back(1.0) == 0.0


@pytest.mark.parametrize("name", sorted(DECLINED))
def test_unknown_code_is_declined_with_the_reason(name: str) -> None:
    src, x, reason = DECLINED[name]
    prog = adv.parse(src)
    evaluate(prog, x)  # the reference evaluates it
    for eng in ("tape", "naive", "forward"):
        with pytest.raises(NotImplementedError, match=reason) as err:
            adv.engine(eng).vjp(prog, x)
        assert isinstance(err.value, Declined) and f"stage `{eng}`" in str(err.value)
    res = adv.check(prog, x, engines=["tape"], oracles=["fd"])
    assert res.ok and {v.status for v in res.verdicts} == {"not_applicable"}  # declining is not applicable (issue #23)


def test_stages_without_nested_say_so() -> None:
    prog = adv.parse(CONFUSION)
    with pytest.raises(NotImplementedError, match="does not eliminate derivative operators"):
        adv.engine("dualarrays").vjp(prog, 1.0)
    res = adv.check(prog, 1.0, engines=["dualarrays"], oracles=["fd"])
    assert all("not applicable" in v.detail or v.status == "inconclusive" for v in res.verdicts)


def test_show_prints_the_eliminated_program_then_the_translation(capsys: pytest.CaptureFixture[str]) -> None:
    text = adv.show(adv.parse(HESSIAN_FR), "tape")
    head, _, rest = text.partition("\n\n-- tape")
    assert head.startswith("-- eliminate (seed 001)") and "grad" not in head and "jvp" not in head
    assert "tape(" in rest and "tape(" not in head  # the eliminated program has no stage primitive
    assert "-- eliminate" not in adv.show(adv.parse(r"\(x : R) -> x * x"), "tape")


BODIES = ["sin (y * c)", "y * y * c", "exp (c * y) / (1.0 + y * y)", "tanh (y + c) * y", "atan (c - y) * y"]
NESTINGS = {
    "grad∘grad": r"\(p : (R, R)) -> let (x, c) = p in grad (\y -> grad (\y -> {b}) y) x",
    "jvp∘grad": r"\(p : (R, R)) -> let (x, c) = p in jvp (\y -> grad (\y -> {b}) y) x c",
    "grad∘jvp": r"\(p : (R, R)) -> let (x, c) = p in grad (\y -> c * jvp (\y -> {b}) y (y * c)) x",
    "grad∘vjp": r"\(p : (R, R)) -> grad (\(y, c) -> vjp (\y -> {b}) y (c * y)) p",
}


@settings(max_examples=25, deadline=None)
@given(
    x=st.floats(-1.5, 1.5),
    c=st.floats(-2.0, 2.0),
    body=st.sampled_from(BODIES),
    nesting=st.sampled_from(sorted(NESTINGS)),
    eng=st.sampled_from(NESTED_ENGINES),
)
def test_random_nestings_match_the_reference(x: float, c: float, body: str, nesting: str, eng: str) -> None:
    """Value = the reference's, gradient = mp differences of the reference, for any engine."""
    prog = adv.parse(NESTINGS[nesting].format(b=body))
    y, back = adv.engine(eng).vjp(prog, (x, c))
    assert close(flatten(y), flatten(evaluate(prog, (x, c))), 1e-11)
    dy = ones(y)
    assert close(flatten(back(dy)), fd_gradient(prog, (x, c), dy), 1e-8)


# ---- static function arguments (`seed001/specialise.py`) -----------------------------------------


def test_programs_without_function_parameters_are_left_alone() -> None:
    for name, (src, _, _) in PROGRAMS.items():
        prog = adv.parse(src)
        assert (specialise(prog.core) is prog.core) == (name not in HIGHER_ORDER), name


# Descent and ascent steps per engine for seed 001 §5's saddle point: the example as written (6)
# where the engine takes about a second; 2 where it takes 12-19 s at 6 (staged, cayley, sparse,
# mutable: measured); 1 for naive, whose backpropagators run once per use (1.3 million calls at 2
# steps, beyond its call budget).
SADDLE_STEPS = {
    "naive": 1, "staged": 2, "cayley": 2, "sparse": 2, "mutable": 2, "tape": 6, "parallel": 6, "forward": 6, "delta": 6
}  # fmt: skip
SADDLE = Path(__file__).parent.parent / "examples" / "nested" / "saddle.adv"


def saddle(steps: int) -> tuple[adv.Program, Any]:
    text = SADDLE.read_text()
    x = adv.parse_value(re.search(r"^-- input: (.*)$", text, re.M).group(1), adv.parse(text).input_type)
    code = [line if line.startswith("--") else re.sub(r"\b6\b", str(steps), line) for line in text.splitlines()]
    return adv.parse("\n".join(code), str(SADDLE)), x


@pytest.mark.parametrize("eng", NESTED_ENGINES)
def test_saddle_point_on_every_nested_engine(eng: str) -> None:
    """`ascend f y n` differentiates its parameter f: accepted once f is specialised at each call."""
    prog, x = saddle(SADDLE_STEPS[eng])
    ref = evaluate(prog, x)
    y, back = adv.engine(eng).vjp(prog, x)
    assert close(flatten(y), flatten(ref), 1e-12), (y, ref)
    dy = (1.0, -0.5)
    assert close(flatten(back(dy)), fd_gradient(prog, x, dy), 1e-9)


def test_saddle_point_is_specialised_per_call_site() -> None:
    """Three calls with three different functions: three copies; the originals, now unused, dropped."""
    prog, _ = saddle(6)
    text = pretty_core(specialise(prog.core))
    assert len(re.findall(r"letrec ascend_\d+'\d+ ", text)) == 2
    assert len(re.findall(r"letrec descend_\d+'\d+ ", text)) == 1
    assert not re.search(r"letrec (ascend|descend)_\d+ ", text)


# Random higher-order programs: a function taking the differentiated function as a parameter
# (recursive with f first or second, a non-recursive helper, one passing f on to another), called
# twice with functions given inline, by `let` or by `letrec`, capturing c (and z, under an outer grad).
CLIMB_REC = (
    "letrec climb (f : R -> R) (n : Z) (y : R) : R =\n  if n <= 0 then y else climb f (n - 1) (y + grad f y / 4.0) in "
)
HOFS = {
    "recursive": (CLIMB_REC, "climb {f} {n} {y}"),
    "second": (
        "letrec climb (n : Z) (f : R -> R) (y : R) : R =\n"
        "  if n <= 0 then y else climb (n - 1) f (y - grad f y / 4.0) in ",
        "climb {n} {f} {y}",
    ),
    "helper": (
        r"let climb = \(f : R -> R) -> \(n : Z) -> \(y : R) -> y + jvp f y (real n / 4.0) in ",
        "climb {f} {n} {y}",
    ),
    "passed_on": (
        CLIMB_REC + r"let twice = \(g : R -> R) -> \(n : Z) -> \(y : R) -> climb g n y + grad g y in ",
        "twice {f} {n} {y}",
    ),
}


def _argument(style: str, name: str, body: str) -> tuple[str, str]:
    """(its binding, the argument) for a function of y passed in `style`."""
    if style == "inline":
        return "", f"(\\y -> {body})"
    if style == "let":
        return f"let {name} = \\y -> {body} in ", name
    return f"letrec {name} (y : R) : R = {body} in ", name


@settings(max_examples=40, deadline=None)
@given(
    x=st.floats(-1.5, 1.5),
    c=st.floats(-2.0, 2.0),
    hof=st.sampled_from(sorted(HOFS)),
    styles=st.tuples(*[st.sampled_from(["inline", "let", "letrec"])] * 2),
    bodies=st.tuples(*[st.sampled_from(BODIES)] * 2),
    steps=st.tuples(*[st.integers(0, 3)] * 2),
    outer=st.booleans(),
)
def test_specialisation_preserves_the_value(
    x: float, c: float, hof: str, styles: tuple, bodies: tuple, steps: tuple, outer: bool
) -> None:
    """The reference interpreter gives the specialised core the original's value, bitwise (the same
    operations in the same order), and the engines' elimination then accepts it."""
    definition, call = HOFS[hof]
    binds, calls = [definition], []
    for k in (0, 1):
        bind, f = _argument(styles[k], f"g{k}", re.sub(r"\bc\b", "z", bodies[k]) if outer and k == 0 else bodies[k])
        binds.append(bind)
        calls.append(call.format(f=f, n=steps[k], y="z" if outer and k == 0 else "x"))
    first = f"grad (\\z -> {binds[1]}{calls[0]}) x" if outer else calls[0]
    src = f"\\((x, c) : (R, R)) -> {binds[0]}{'' if outer else binds[1]}{binds[2]}{first} + {calls[1]}"
    prog = adv.parse(src)
    core = specialise(prog.core)
    assert core is not prog.core
    ref = evaluate(prog, (x, c))
    assert run_core(core, prog, (x, c), tagged=True)[0] == ref, src
    assert close([run_eliminated(prog, (x, c))[0]], [ref], 1e-12), src


# ---- Hessian-vector products: correctness and cost -----------------------------------------------
#
# f_n(x1..xn) = Σ_{i<n} x_i x_{i+1} + Σ_i sin x_i on an n-tuple: its Hessian is tridiagonal,
# H_ii = −sin x_i, H_{i,i+1} = H_{i+1,i} = 1, and its primal cost grows linearly in n.


# The HVP family, its point and its measurement are the report's (`advalidate.report.nested`): the
# report's seed 001 section shows the same counts this test asserts on.


def test_hvp_reverse_over_forward_costs_a_constant_times_the_primal() -> None:
    costs = {n: hvp_costs(n) for n in (1, 2, 4, 8, 16, 32)}
    for c in costs.values():
        c["rof"] = c["rof:tape"]
    assert [costs[n]["primal"] for n in (4, 8, 16, 32)] == [13, 29, 61, 125]  # 4n − 3: linear in n
    assert all(c["rof"] <= HVP_CONSTANT for n, c in costs.items() if n >= 2), costs
    assert costs[1]["rof"] == 19  # f = sin x1 is one operation: the fixed part of jvp and of the tape dominates
    assert costs[32]["rof"] <= costs[4]["rof"]  # no growth at all: 15.1 at n = 4, 14.8 at n = 32
    # Forward over reverse runs seed 000 §5's naive reverse inside: every `+` and zero of its
    # backpropagators costs size(τ) = n, so its ratio grows linearly (≈ 3n + 5); so does reverse over reverse.
    for n in (4, 8, 16, 32):
        assert 2 * n <= costs[n]["for"] <= 4 * n + 10, (n, costs[n])
        assert costs[n]["ror"] >= 2 * n, (n, costs[n])


def test_hvp_on_every_linear_stage_does_not_grow_with_n() -> None:
    """The report's `nested-hvp-flat` claim, on the counts of each stage that makes reverse AD
    linear (seed 000's mutable, tape, parallel and seed 004 §2's delta): the ratio of an HVP to
    f's primal at n = 32 is no larger than at n = 4 (within the report's ratio tolerance)."""
    from advalidate.report.fit import RATIO_TOLERANCE
    from advalidate.report.nested import LINEAR_NESTED

    assert "delta" in LINEAR_NESTED
    small, large = hvp_costs(4, LINEAR_NESTED), hvp_costs(32, LINEAR_NESTED)
    for s in LINEAR_NESTED:
        assert large[f"rof:{s}"] <= small[f"rof:{s}"] * (1 + RATIO_TOLERANCE), (s, small, large)


def _sympy_hvp(n: int) -> list[float]:
    sx = sympy.symbols(f"x1:{n + 1}")
    expr = sum(sx[i] * sx[i + 1] for i in range(n - 1)) + sum(sympy.sin(s) for s in sx)
    hess = sympy.hessian(expr, sx)
    x, v = point(n)
    at = dict(zip(sx, flatten(x), strict=True))
    hv = hess * sympy.Matrix(flatten(v))
    return [float(e.evalf(30, subs=at)) for e in hv]


@pytest.mark.parametrize("n", [1, 3, 8])
def test_hvps_agree_with_sympy_and_mp_differences_of_the_gradient(n: int) -> None:
    progs = hvp_family(n)
    x, v = point(n)
    want = _sympy_hvp(n)
    _, back = adv.engine("tape").vjp(progs["rof"], (x, v))
    rof = flatten(back(1.0)[0])
    fwd = flatten(evaluate(progs["for"], (x, v)))
    by_forward = flatten(adv.engine("forward").vjp(progs["for"], (x, v))[0])
    _, back = adv.engine("mutable").vjp(progs["ror"], (x, v))
    ror = flatten(back(1.0)[0])
    for got in (rof, fwd, by_forward, ror):
        assert close(got, want, 1e-13), (got, want)
    # H v = d/dh ∇f(x + h v) at 0, the nested reference's gradient differenced in mp.
    grad = progs["grad"]
    with mpmath.workdps(50):
        h = mpmath.mpf(10) ** -15
        xs, vs = [mpmath.mpf(r) for r in flatten(x)], [mpmath.mpf(r) for r in flatten(v)]
        up = flatten(evaluate(grad, unflatten(x, [a + h * b for a, b in zip(xs, vs, strict=True)]), "mp"))
        down = flatten(evaluate(grad, unflatten(x, [a - h * b for a, b in zip(xs, vs, strict=True)]), "mp"))
        diff = [(a - b) / (2 * h) for a, b in zip(up, down, strict=True)]
    assert close(rof, diff, 1e-13)
