"""The oracles: verdicts, the tolerance policy, each oracle's judgement, plug-ins, the `check` command.

Wrong engines come from `mutants.py` (one realistic AD bug each); the campaigns over random
programs are in `test_mutants.py`.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import mpmath
import pytest
from mutants import mutant

import advalidate as adv
from advalidate.cli import main
from advalidate.impl.seed000.tape import TapeStage
from advalidate.oracles import DEFAULT_ORACLES, check, default_input, oracle_names
from advalidate.oracles import tolerance as T
from advalidate.oracles.symbolic import SymbolicOracle, _GiveUp, time_limited

ROOT = Path(__file__).parent.parent
FIG1 = adv.parse(r"\((x, y) : (R, R)) -> let z = x + y in x * z")
GRADIENT_ORACLES = ["symbolic", "fd", "forward", "cross"]


def statuses(res: adv.oracles.CheckResult) -> dict[tuple[str, str], str]:
    return {(v.engine, v.oracle): v.status for v in res.verdicts}


# ---- correct engines pass ----------------------------------------------------------------------


def test_fig1_every_builtin_engine_passes_every_applicable_oracle() -> None:
    res = check(FIG1, (12.0, 13.0))
    assert res.ok
    assert res.engines == adv.engine_names()
    assert res.oracles == list(DEFAULT_ORACLES) == oracle_names()
    array_only = {"dualarrays", "bot", "compiled"}  # seed 004's array stages: not applicable to fig1
    for v in res.verdicts:
        if v.oracle in GRADIENT_ORACLES:
            assert v.status == ("not_applicable" if v.engine in array_only else "pass"), v.describe()
    st = statuses(res)
    for name in ("staged", "cayley", "sparse", "mutable", "tape"):
        assert st[(name, "once")] == "pass"
    for name in ("mutable", "tape"):
        assert st[(name, "linear")] == "pass"
    # naive is exponential by design (§5); forward's reverse mode is n forward passes
    assert st[("naive", "once")] == st[("naive", "linear")] == "not_applicable"
    assert "not applicable" in res.verdict("naive", "once").detail


def test_verdict_table_and_report() -> None:
    res = check(FIG1, (12.0, 13.0), engines=["tape", mutant("mul-swapped")], oracles=["fd", "once"])
    table = res.table()
    assert table.splitlines()[0].split() == ["engine", "fd", "once"]
    assert "mutant-mul-swapped  FAIL" in table
    report = res.report()
    assert "input: (12.0, 13.0)" in report and "cotangent:" in report
    assert "1 fail" in report and "differs at: dx[1]" in report


# ---- random cotangents ------------------------------------------------------------------------


def test_cotangent_is_signed_random_recorded_and_seeded() -> None:
    prog = adv.parse(r"\(x : R) -> (x, [x * x, sin x, x + 1.0])")
    reals = []
    for seed in range(8):
        res = check(prog, 0.5, engines=["tape"], oracles=["fd"], seed=seed)
        dy = adv.flatten(res.cotangent)
        assert all(0.5 <= abs(d) <= 2.0 for d in dy) and dy != [1.0] * 4
        assert res.verdicts[0].cotangent == res.cotangent
        reals += dy
    assert any(d < 0 for d in reals) and any(d > 0 for d in reals)
    again = check(prog, 0.5, engines=["tape"], oracles=["fd"], seed=3)
    assert again.cotangent == check(prog, 0.5, engines=["tape"], oracles=["fd"], seed=3).cotangent


def test_an_all_ones_seeded_engine_is_caught() -> None:
    # With an all-ones cotangent this mutant would look right: only a random cotangent exposes it.
    prog = adv.parse(r"\((x, y) : (R, R)) -> (x * y, x + y)")
    res = check(prog, (1.5, -0.5), engines=[mutant("cotangent-ignored")])
    for name in GRADIENT_ORACLES:
        assert res.verdict("mutant-cotangent-ignored", name).status == "fail"


# ---- each gradient oracle catches a wrong rule on its own ---------------------------------------


@pytest.mark.parametrize("oracle", GRADIENT_ORACLES)
def test_each_gradient_oracle_alone_catches_a_wrong_rule(oracle: str) -> None:
    res = check(FIG1, (12.0, 13.0), engines=[mutant("mul-swapped")], oracles=[oracle])
    v = res.verdicts[0]
    assert v.status == "fail", v.describe()
    assert v.expected is not None and v.actual is not None and v.cotangent is not None
    assert v.rel_err > 1e-3 and v.abs_err > 1.0
    # x * z with z = x + y: swapped partials give dx = x + z (right by symmetry) but dy = z, not x
    assert "dx[1]" in v.positions and "dx[0]" not in v.positions
    assert v.numeric == "mp"


def test_symbolic_reports_the_expected_gradient() -> None:
    res = check(FIG1, (12.0, 13.0), engines=[mutant("mul-swapped")], oracles=["symbolic"])
    v = res.verdicts[0]
    dy = adv.flatten(res.cotangent)[0]
    assert [float(e) for e in adv.flatten(v.expected)] == pytest.approx([37 * dy, 12 * dy], rel=1e-15)


def test_forward_escalates_to_the_full_jacobian_on_small_programs() -> None:
    prog = adv.parse(r"\((x, y) : (R, R)) -> (x * y, sin x)")
    v = check(prog, (0.7, -1.2), engines=[mutant("mul-swapped")], oracles=["forward"]).verdicts[0]
    assert v.status == "fail"
    # row 0 (x * y) is wrong in both columns; row 1 (sin x) is right
    assert set(v.positions) == {"dx[0]", "dx[1]", "J[0,0]", "J[0,1]"}


def test_a_wrong_value_is_a_fail() -> None:
    class OffByAnUlp(TapeStage):
        name = "off-value"

        def vjp(self, prog: Any, x: Any, numeric: str = "float", **kw: Any) -> Any:
            y, back = super().vjp(prog, x, numeric, **kw)
            return adv.unflatten(y, [r * (1 + mpmath.mpf("1e-20")) for r in adv.flatten(y)]), back

    v = check(FIG1, (12.0, 13.0), engines=[OffByAnUlp()], oracles=["fd"]).verdicts[0]
    assert v.status == "fail" and "value" in v.detail and v.positions == ["y[0]"]


# ---- non-differentiable points and other reasons to say "inconclusive" ---------------------------

KINK = adv.parse(r"\(x : R) -> if x < 1.0 then x * x else 3.0 * x")


def test_fd_is_inconclusive_when_the_step_crosses_a_branch() -> None:
    # 1 - 1e-13 is 1e-13 from the threshold: enough for mp engines (margin > 1e-30), but the
    # finite-difference step (1e-12) crosses it. fd must say inconclusive, never fail, even for a
    # wrong engine; the symbolic derivative along the path is still valid.
    x = 1.0 - 1e-13
    res = check(KINK, x, engines=["tape", mutant("mul-swapped")], oracles=["fd", "symbolic"])
    assert res.verdict("tape", "fd").status == "inconclusive"
    assert "branch path changes" in res.verdict("tape", "fd").detail
    assert res.verdict("mutant-mul-swapped", "fd").status == "inconclusive"
    assert res.verdict("tape", "symbolic").status == "pass"


def test_float_engines_are_inconclusive_near_a_threshold() -> None:
    res = check(KINK, 1.0 - 1e-13, engines=["tape"], oracles=GRADIENT_ORACLES, numeric="float")
    for v in res.verdicts:
        assert v.status == "inconclusive" and "non-differentiable point" in v.detail


def test_exactly_at_a_threshold_forward_gives_the_selection_verdict() -> None:
    """At x = 1 the else branch (3x) is taken: its slope 3 is the tie rule's piece (the then branch's
    2x = 2 is the other). The smooth oracles cannot judge there; `forward` asks for the rule's piece,
    which the swapped product rule (d(3x)/dx = x = 1) is not."""
    res = check(KINK, 1.0, engines=["tape", mutant("mul-swapped")])
    for v in res.verdicts:
        if v.oracle in GRADIENT_ORACLES and v.oracle != "forward":
            assert v.status == "inconclusive", v.describe()
    ok, bad = res.verdict("tape", "forward"), res.verdict("mutant-mul-swapped", "forward")
    assert ok.status == "pass" and "tie rule" in ok.detail, ok.describe()
    assert bad.status == "fail" and "kink" in bad.detail, bad.describe()


def test_domain_error_at_the_input_is_inconclusive() -> None:
    prog = adv.parse(r"\(x : R) -> log x")
    res = check(prog, -1.0, engines=["tape"])
    # every oracle that applies to tape is inconclusive (the bot oracle judges only the bot engine)
    assert res.ok and {v.status for v in res.verdicts if v.oracle != "bot"} == {"inconclusive"}
    assert "DomainError" in res.verdicts[0].detail


def test_symbolic_guards_expression_swell_and_time() -> None:
    # Each level squares the previous expression: the tree doubles per level.
    lets = "".join(f"let x{i} = sin (x{i - 1} * x{i - 1} + x{i - 1}) in " for i in range(1, 16))
    prog = adv.parse(rf"\(x0 : R) -> {lets}x15")
    v = check(prog, 0.3, engines=["tape"], oracles=[SymbolicOracle(size_limit=500)]).verdicts[0]
    assert v.status == "inconclusive" and "expression swell" in v.detail
    v = check(FIG1, (1.0, 2.0), engines=["tape"], oracles=[SymbolicOracle(time_limit=0.0)]).verdicts[0]
    assert v.status == "inconclusive" and "time limit" in v.detail


def test_time_limited_interrupts_a_call_that_does_not_return_by_itself() -> None:
    """`time_limited` stops a call that runs Python code without ever checking the clock (as one
    long sympy `diff` does): the loop below would count to LOOPS (seconds of work) unless
    interrupted; with a limit of 0 s the timer fires at once and the loop never gets there."""
    loops = 10**8
    reached: list[int] = []

    def busy() -> None:
        n = 0
        while n < loops:
            n += 1
        reached.append(n)

    with pytest.raises(_GiveUp, match=r"time limit of the symbolic oracle \(0 s\) reached"):
        time_limited(busy, 0.0)
    assert reached == []
    assert time_limited(lambda: 7, 60.0) == 7  # a call that returns in time keeps its result


def test_symbolic_time_limit_interrupts_a_long_sympy_call() -> None:
    """A program whose sympy derivative takes minutes (19 nested levels: 4.7 s for 11 levels, about
    1.75 times more per level) under a 0.5 s limit: the verdict must be the time limit, not a pass."""
    lets = "".join(f"let x{i} = tanh (x{i - 1} * x{i - 1}) / (1.0 + x{i - 1}) in " for i in range(1, 20))
    prog = adv.parse(rf"\(x0 : R) -> {lets}x19")
    v = check(prog, 0.3, engines=["tape"], oracles=[SymbolicOracle(size_limit=10**9, time_limit=0.5)]).verdicts[0]
    assert v.status == "inconclusive" and "time limit of the symbolic oracle" in v.detail, v.detail
    # the deep thread is still usable afterwards
    assert check(FIG1, (1.0, 2.0), engines=["tape"], oracles=["symbolic"]).verdicts[0].status == "pass"


def test_symbolic_can_be_sampled() -> None:
    never = SymbolicOracle(rate=0.0)
    v = check(FIG1, (1.0, 2.0), engines=["tape"], oracles=[never]).verdicts[0]
    assert v.status == "inconclusive" and "not sampled" in v.detail
    ran = [
        check(FIG1, (1.0, 2.0), engines=["tape"], oracles=[SymbolicOracle(rate=0.5)], seed=s).verdicts[0].status
        for s in range(12)
    ]
    assert "pass" in ran and "inconclusive" in ran


# ---- complexity oracles -----------------------------------------------------------------------


def doubling(n: int) -> adv.Program:
    lets = "".join(f"let x{i} = x{i - 1} + x{i - 1} in " for i in range(1, n + 1))
    return adv.parse(rf"\(x0 : R) -> {lets}x{n}")


def test_once_catches_a_backpropagator_called_more_than_once() -> None:
    res = check(doubling(6), 0.75, engines=[mutant("cayley-eager"), "cayley"], oracles=["once", "fd"])
    v = res.verdict("mutant-cayley-eager", "once")
    assert v.status == "fail" and v.expected == 1 and v.actual == 64
    assert res.verdict("mutant-cayley-eager", "fd").status == "pass"  # the gradient itself is right
    assert res.verdict("cayley", "once").status == "pass"


def test_linear_judges_reported_costs_with_the_one_constant() -> None:
    from advalidate.impl.engine import LINEAR_COST_CONSTANT

    class Quadratic(TapeStage):
        name = "quadratic"

        def vjp(self, prog: Any, x: Any, numeric: str = "float", **kw: Any) -> Any:
            y, back = super().vjp(prog, x, numeric, **kw)
            inner = back

            class Back:
                stats = inner.stats

                def __call__(self, dy: Any) -> Any:
                    out = inner(dy)
                    n = self.stats["primal_ops"]
                    self.stats["reverse_cost"] = n * n
                    return out

            return y, Back()

    res = check(doubling(40), 0.5, engines=[Quadratic(), "tape"], oracles=["linear"])
    v = res.verdict("quadratic", "linear")
    assert v.status == "fail" and v.actual == 40 * 40
    assert f"{LINEAR_COST_CONSTANT}·" in v.detail
    assert res.verdict("tape", "linear").status == "pass"


# ---- the tolerance policy ----------------------------------------------------------------------


def test_mp_tolerance_separates_noise_from_wrong_rules() -> None:
    tol = T.tolerance("mp", [mpmath.mpf(3)])
    e = mpmath.mpf(3)
    with mpmath.workdps(60):
        assert tol.compare([e], [e * (1 + mpmath.mpf("1e-40"))]).ok
        assert not tol.compare([e], [e * (1 + mpmath.mpf("1e-20"))]).ok
    assert tol.rtol == T.MP_RTOL == 1e-25


def test_float_tolerance_scales_with_the_observed_float_error() -> None:
    small = T.tolerance("float", [1.0], observed=1e-16)
    large = T.tolerance("float", [1.0], observed=1e-10)
    assert large.atol > small.atol * 1e5
    assert small.compare([1.0], [1.0 + 1e-13]).ok and not small.compare([1.0], [1.0 + 1e-9]).ok
    assert T.give_up_reason("float", [1.0], 1e-3) is not None
    assert T.give_up_reason("float", [1.0], 1e-12) is None


def test_catastrophic_cancellation_in_mp_is_not_a_fail_but_a_wrong_rule_still_is() -> None:
    # At 50 digits (x + 1e30) - 1e30 keeps only 20 digits of x; the reference (60 digits) keeps 30.
    # The observed error of a correct engine widens the mp tolerance here, and only here.
    prog = adv.parse(r"\(x : R) -> sin (((x + 1.0e30) - 1.0e30) * x)")
    # Finite differences with a 1e-12 step lose 18 digits to the cancellation at 60 digits: the
    # 60- and 80-digit results differ, and fd says "inconclusive" rather than judge with them.
    res = check(prog, 0.3, engines=["tape", "mutable", mutant("sin-sign")], oracles=GRADIENT_ORACLES)
    expect = {"symbolic": "pass", "fd": "inconclusive", "forward": "pass", "cross": "pass"}
    for name in ("tape", "mutable"):
        assert {o: res.verdict(name, o).status for o in GRADIENT_ORACLES} == expect, res.report("all")
    expect = {"symbolic": "fail", "fd": "inconclusive", "forward": "fail", "cross": "fail"}
    assert {o: res.verdict("mutant-sin-sign", o).status for o in GRADIENT_ORACLES} == expect
    # Here the 50-digit engines themselves lose 30 digits (sin x has 166 bits, 1e30 eats 100 of
    # them): their error, ~1e-21, is far above 1e-25 but is what a correct engine observes.
    prog = adv.parse(r"\(x : R) -> ((sin x + 1.0e30) - 1.0e30) * x")
    res = check(prog, 0.3, engines=["tape", "naive", mutant("sin-sign")], oracles=GRADIENT_ORACLES)
    for name in ("tape", "naive"):
        assert [res.verdict(name, o).status for o in GRADIENT_ORACLES] == ["pass"] * 4, res.report()
    assert res.verdict("tape", "symbolic").abs_err > 1e-23
    assert [res.verdict("mutant-sin-sign", o).status for o in GRADIENT_ORACLES] == ["fail"] * 4


class FloatOnlyTape(TapeStage):
    """A correct engine that declares no "mp": it is compared under the float policy."""

    name = "float-tape"
    supports = frozenset({"lists", "sums", "recursion", "par"})


def test_float_only_engines_are_compared_in_float_and_still_catch_wrong_rules() -> None:
    res = check(FIG1, (0.3, -1.1), engines=[FloatOnlyTape()], oracles=GRADIENT_ORACLES)
    assert all(v.status == "pass" and v.numeric == "float" for v in res.verdicts), res.report()
    assert res.verdicts[0].tolerance.startswith("float")
    res = check(FIG1, (0.3, -1.1), engines=[mutant("mul-swapped")], oracles=GRADIENT_ORACLES, numeric="float")
    assert all(v.status == "fail" for v in res.verdicts)


def test_ill_conditioned_programs_are_inconclusive_in_float() -> None:
    prog = adv.parse(r"\(x : R) -> sin (x * 1.0e14)")
    res = check(prog, 0.37, engines=[FloatOnlyTape()], oracles=GRADIENT_ORACLES)
    for v in res.verdicts:
        assert v.status == "inconclusive" and "ill-conditioned" in v.detail, v.describe()
    # in mp the same program is judged; finite differences cannot resolve a frequency of 1e14 and
    # say so instead of guessing
    res = check(prog, 0.37, engines=["tape"], oracles=GRADIENT_ORACLES)
    assert [v.status for v in res.verdicts] == ["pass", "inconclusive", "pass", "pass"]
    assert "not accurate enough" in res.verdict("tape", "fd").detail


# The small float literals (0 < |c| < 1e-2) that the oracle modules other than tolerance.py, and
# advalidate/differences.py (their numerical differences), may hold, counted per (module, value).
# These are the oracles' own thresholds outside the one policy (steps, the consistency oracle's
# self-agreement, check_function's, the kink solver's): a new one, or a value changed (a tolerance
# widened), fails here and must be argued in review before it is listed.
ORACLE_LITERALS = {
    ("at_kink.py", 1e-20): 1,  # STEP of the one-sided rays
    ("consistency.py", 1e-06): 1,  # AGREE_REL: reverse against the library's own forward mode
    ("consistency.py", 1e-05): 2,  # STEP, and the tolerance against central differences of the primal
    ("consistency.py", 0.0001): 1,  # one-sided derivatives at h and h/2 agree (`_one_sided`)
    ("consistency.py", 0.001): 1,  # KINK_REL
    ("differences.py", 1e-300): 2,  # guards against a division by zero (noise_level)
    ("differences.py", 0.001): 2,  # JUMP_NOISE, and dfridr's first step (the repro scripts')
    ("function_checks.py", 1e-300): 1,  # a guard against a division by zero
    ("function_checks.py", 1e-08): 1,  # TINY
    ("function_checks.py", 1e-06): 1,  # reverse against the gradient, relative
    ("function_checks.py", 1e-05): 1,  # GIVE_UP
    ("function_kink.py", 1e-07): 1,  # BESIDE: the point beside a kink, relative
    ("function_kink.py", 1e-06): 2,  # BESIDE_REL (the rule beside a kink), STAIR_STEP (a plain quotient there)
    ("function_kink.py", 0.0001): 2,  # UNRESOLVED and RESOLVE_SHARE: which rays' differences are accurate enough
    ("function_kink.py", 1e-08): 1,  # TINY_SHARE: a derivative counted as zero
    ("function_kink.py", 0.001): 1,  # STAIR_AGREE: the right quotient against the slope beside a jump
    ("function_kink.py", 1e-05): 1,  # PLAIN_STEP: plain right quotients where the differences are spoilt
    # which elements of a large input sit at a kink (a jump of their one-sided slopes): finding too
    # many only sends more elements to the kink judgement, never passes one
    ("function_blocks.py", 0.001): 1,  # JUMP_REL
    ("function_blocks.py", 1e-12): 2,  # the jump's floor, relative to the largest slope
    ("kinks.py", 1e-09): 2,  # the hull's atol and the residual's slack
    ("kinks.py", 1e-07): 1,  # eps
    ("kinks.py", 1e-06): 1,  # the hull's rtol
    ("kinks.py", 0.001): 1,  # the smallest scale of a coordinate, relative to the largest
}


def small_float_literals(tree: ast.AST) -> list[float]:
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and type(n.value) is float and 0 < abs(n.value) < 1e-2
    ]


def tolerance_names() -> set[str]:
    """The UPPER_CASE constants of tolerance.py, and those of the other oracle modules that hold a
    float (thresholds, not counts such as symbolic's ARRAY_OPS_MAX)."""
    names = set()
    for path in (ROOT / "advalidate" / "oracles").glob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
                continue
            floats = any(isinstance(n, ast.Constant) and type(n.value) is float for n in ast.walk(node.value))
            if path.name == "tolerance.py" or floats:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names |= {t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper()}
    return names


def widenings(tree: ast.AST, names: set[str]) -> list[str]:
    """What a test module does to the oracles' constants: assigns one (`T.MP_RTOL = ...`), patches
    one (`monkeypatch.setattr(T, "MP_RTOL", ...)`, `patch("...tolerance.FLOAT_K", ...)`), or builds
    its own `Tolerance(...)`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [
                f"line {node.lineno}: assigns {t.attr}"
                for t in targets
                if isinstance(t, ast.Attribute) and t.attr in names
            ]
        elif isinstance(node, ast.Call):
            callee = ast.unparse(node.func)
            if callee.split(".")[-1] == "Tolerance":
                found.append(f"line {node.lineno}: builds a Tolerance")
            strings = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if callee.split(".")[-1] in ("setattr", "patch", "object", "setitem") and any(
                s.rpartition(".")[2] in names for s in strings
            ):
                found.append(f"line {node.lineno}: {callee} of {strings}")
    return found


def test_no_test_widens_the_tolerance() -> None:
    """The policy's constants live in tolerance.py: no test changes them or any oracle's, and the
    oracles' own literal thresholds are exactly those listed in ORACLE_LITERALS."""
    names = tolerance_names()
    assert {"MP_RTOL", "FLOAT_K", "MP_K", "GIVE_UP", "MARGIN_MIN", "AGREE_REL"} <= names
    # the scanner sees each kind of widening (else the scan below could pass while checking nothing)
    bad = (
        "T.MP_RTOL = 1e-3\nmonkeypatch.setattr(T, 'FLOAT_K', 1e9)\n"
        "patch('advalidate.oracles.consistency.AGREE_REL', 1.0)\nT.Tolerance('mp', 1.0, 1.0)"
    )
    assert len(widenings(ast.parse(bad), names)) == 4
    tests = sorted((ROOT / "tests").glob("*.py"))
    assert len(tests) > 50
    for path in tests:
        assert not widenings(ast.parse(path.read_text(encoding="utf-8")), names), path.name
    literals: dict[tuple[str, float], int] = {}
    scanned = sorted((ROOT / "advalidate" / "oracles").glob("*.py")) + [ROOT / "advalidate" / "differences.py"]
    for path in scanned:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if path.name == "tolerance.py":
            assert small_float_literals(tree), "tolerance.py holds the policy's constants"
            continue
        for node in ast.walk(tree):  # no oracle module defines a constant named as a tolerance
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        assert "TOL" not in t.id, f"{path.name}: {t.id}"
        for value in small_float_literals(tree):
            literals[path.name, value] = literals.get((path.name, value), 0) + 1
    # at most the listed ones: a literal moved out or removed is fine, a new or changed one is not
    unlisted = {k: n for k, n in literals.items() if n > ORACLE_LITERALS.get(k, 0)}
    assert not unlisted, f"new literal thresholds in the oracles, to be reviewed and listed: {unlisted}"
    assert sum(literals.values()) >= 5  # the scan sees the oracles' literals


# ---- engines that crash, decline or break the value contract -----------------------------------


class Crashes:
    name = "crashes"

    def vjp(self, prog: Any, x: Any, numeric: str = "float") -> Any:
        raise KeyError("oops")


class NoLists(TapeStage):
    name = "no-lists"
    supports = frozenset({"mp"})


class DropsTheInteger(TapeStage):
    name = "drops-int"

    def vjp(self, prog: Any, x: Any, numeric: str = "float", **kw: Any) -> Any:
        y, back = super().vjp(prog, x, numeric, **kw)
        return y, lambda dy: (0, back(dy)[1])


def test_crash_is_fail_a_feature_not_supported_is_not_applicable_and_discrete_parts_are_checked() -> None:
    prog = adv.parse(r"\((n, xs) : (Z, [R])) -> real n * sum xs")
    x = (3, [1.0, 2.0])
    res = check(prog, x, engines=[Crashes(), NoLists(), DropsTheInteger()], oracles=["fd", "cross"])
    assert res.verdict("crashes", "fd").status == "fail" and "KeyError" in res.verdict("crashes", "fd").detail
    # issue 16: an engine that does not support what the program uses is not applicable, not inconclusive
    assert res.verdict("no-lists", "fd").status == "not_applicable"
    assert "does not support lists" in res.verdict("no-lists", "fd").detail
    assert res.verdict("drops-int", "fd").status == "fail"
    assert "integers" in res.verdict("drops-int", "fd").detail


# ---- cross ------------------------------------------------------------------------------------


def test_cross_blames_the_odd_engine_out() -> None:
    res = check(FIG1, (0.5, 2.0), engines=["tape", mutant("div-sign"), mutant("mul-swapped")], oracles=["cross"])
    assert res.verdict("tape", "cross").status == "pass"
    v = res.verdict("mutant-mul-swapped", "cross")
    assert v.status == "fail" and "disagrees with" in v.detail and "tape" in v.detail
    # Fig. 1 has no division: the div mutant is correct here and agrees with the baselines
    assert res.verdict("mutant-div-sign", "cross").status == "pass"


def test_cross_alone_compares_with_the_baselines() -> None:
    v = check(FIG1, (0.5, 2.0), engines=[mutant("alias-square")], oracles=["cross"]).verdicts[0]
    assert v.status == "pass"  # no x * x in Fig. 1
    prog = adv.parse(r"\(x : R) -> x * x")
    v = check(prog, 0.5, engines=[mutant("alias-square")], oracles=["cross"]).verdicts[0]
    assert v.status == "fail" and "tape (baseline)" in v.detail and "mutable (baseline)" in v.detail


# ---- inputs, plug-ins, assert_gradients --------------------------------------------------------


def test_default_input_is_deterministic_and_in_the_domain() -> None:
    prog = adv.parse(r"\((x, xs, s) : (R, [R], R + Z)) -> log (x * x) + sum xs")
    xs = [default_input(prog, seed) for seed in range(20)]
    assert xs == [default_input(prog, seed) for seed in range(20)]
    assert len({adv.show_value(x) for x in xs}) > 10
    for x in xs:
        assert -1.5 <= x[0] <= 1.5 and len(x[1][0]) <= 3
    res = check(prog, engines=["tape"], oracles=["fd"], seed=4)
    assert res.input == xs[4] and res.verdicts[0].status == "pass"


def test_plug_in_engines_by_object_and_by_module_attr() -> None:
    res = check(FIG1, (1.0, 2.0), engines=["mutants:OnesTape", FloatOnlyTape()], oracles=["fd"])
    assert res.engines == ["mutant-cotangent-ignored", "float-tape"]
    assert [v.status for v in res.verdicts] == ["fail", "pass"]
    with pytest.raises(adv.AdvError):
        check(FIG1, (1.0, 2.0), engines=["no_such_module:Engine"])
    with pytest.raises(adv.AdvError):
        check(FIG1, (1.0, 2.0), engines=["tape"], oracles=["psychic"])


def test_plug_in_oracle_objects() -> None:
    from advalidate.oracles.verdict import Verdict

    class Always:
        name = "always"

        def judge(self, ctx: Any, run: Any) -> Verdict:
            return Verdict(run.label, self.name, "pass", "trivially")

    res = check(FIG1, (1.0, 2.0), engines=["tape"], oracles=[Always(), "fd"])
    assert res.oracles == ["always", "fd"] and res.ok


def test_assert_gradients_passes_and_raises_a_readable_error() -> None:
    adv.assert_gradients("tape", FIG1, (12.0, 13.0))
    adv.assert_gradients(adv.engine("mutable"), FIG1)
    with pytest.raises(AssertionError) as info:
        adv.assert_gradients(mutant("sin-sign"), adv.parse(r"\(x : R) -> sin x * x"), 0.4)
    msg = str(info.value)
    assert "mutant-sin-sign" in msg and "FAIL" in msg and "expected:" in msg and "cotangent:" in msg


def test_impl_never_imports_oracles() -> None:
    for path in (ROOT / "advalidate" / "impl").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert "oracles" not in (node.module or ""), path
            elif isinstance(node, ast.Import):
                assert not any("oracles" in a.name for a in node.names), path


# ---- the command line ------------------------------------------------------------------------


def test_cli_check_passes_fails_and_rejects(capsys: pytest.CaptureFixture[str], monkeypatch: Any) -> None:
    fig1 = str(ROOT / "examples" / "fig1.adv")
    assert main(["check", fig1, "--input", "(12.0, 13.0)", "--engine", "tape", "--engine", "mutable"]) == 0
    out = capsys.readouterr().out
    assert "engine" in out and "symbolic" in out and "tape" in out and "0 fail" in out
    monkeypatch.chdir(Path(__file__).parent)
    assert main(["check", fig1, "--engine", "mutants:OnesTape", "--oracle", "fd", "--oracle", "once"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "differs at" in out
    assert main(["check", fig1, "--input", "(12.0"]) == 2
    assert "--input:1:6" in capsys.readouterr().err
    assert main(["check", fig1, "--oracle", "psychic"]) == 2
    assert "unknown oracle" in capsys.readouterr().err
    assert main(["check", fig1, "--engine", "nonsense"]) == 2
    assert main(["check", str(ROOT / "examples" / "missing.adv")]) == 2
