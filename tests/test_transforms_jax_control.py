"""JAX's control-flow primitives as engines (issue #26): `jax-scan` (folds as `lax.scan`) and
`jax-cond` (`if` as `lax.cond` / `lax.select`), each also under `jit`.

Judged three ways: against the language (the `fd`, `forward` and `cross` oracles), against the same
library eager on the same program (`jax`: to float rounding; bitwise on most programs), and by
JAX's own forward mode of the transformed program (⟨Jᵀ dy, v⟩ = ⟨dy, J v⟩). A planted wrong
derivative rule inside the scan body / the cond branches is caught and shrunk by a campaign bounded
by program counts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import advalidate as adv
from advalidate.generators import generate
from advalidate.oracles import check

pytest.importorskip("jax")

from transform_checks import (
    ORACLES,
    ROOT,
    example,
    planted,
    planted_campaign,
    three_ways,
)

ENGINES = ["jax-scan", "jax-cond", "jax-scan-jit", "jax-cond-jit"]
EVERY_EXAMPLE = sorted((ROOT / "examples").rglob("*.adv"))
#: The generator's features of the programs each transformation has something to do in.
MIX = {
    "scan": ["lists", "fold", "let", "lambda", "transc", "pairs"],
    "cond": ["cond", "let", "lambda", "transc", "pairs"],
}


@pytest.mark.peers
@pytest.mark.parametrize("name", ENGINES)
def test_the_examples_with_folds_and_ifs_are_right_three_ways(name: str) -> None:
    eng = adv.engine(name)
    for stem in ("conditionals", "lists") if "scan" in name else ("conditionals",):
        before = eng.tracing.count
        assert three_ways(eng, *example(ROOT / "examples" / f"{stem}.adv")), stem
        assert eng.tracing.count > before, stem  # the transformation ran


@pytest.mark.peers
@pytest.mark.slow
@pytest.mark.parametrize("name", ENGINES)
def test_every_example_is_right(name: str) -> None:
    eng = adv.engine(name)
    for path in EVERY_EXAMPLE:
        prog, x = example(path)
        res = check(prog, x, engines=[eng], oracles=ORACLES)
        assert [v.status for v in res.verdicts] == ["pass"] * len(ORACLES), f"{path}\n{res.report('all')}"


def lowered(prog: adv.Program, kind: str) -> bool:
    """Whether the program has a construct the engine of `kind` lowers: a fold of reals, an `if` of
    reals on a comparison of reals, a `case` on a sum of reals (`case`, `jax-cond`)."""
    from advalidate.impl.adapters.control import case_types, crosses, fold_types
    from advalidate.lang import core as C
    from advalidate.lang.program import CMP_OP_NAMES

    stack: list[Any] = [prog.core]
    while stack:
        e = stack.pop()
        if kind == "scan" and isinstance(e, C.Op) and fold_types(e):
            return True
        if kind == "case" and isinstance(e, C.Case) and case_types(e):
            return True
        if kind == "cond" and isinstance(e, C.If) and crosses(e.ty):
            if isinstance(e.cond, C.Op) and e.cond.op in CMP_OP_NAMES:
                return True
        stack.extend(C.subexprs(e))
    return False


@pytest.mark.peers
@pytest.mark.parametrize("name", ENGINES)
def test_generated_programs_with_folds_or_ifs_are_transformed_and_agree_three_ways(name: str) -> None:
    eng = adv.engine(name)
    kind = "scan" if "scan" in name else "cond"
    judged = 0
    for seed in range(12):
        case = generate(seed, features=MIX[kind])
        if not lowered(case.program, kind):
            continue
        before = eng.tracing.count
        if three_ways(eng, case.program, case.input, seed):
            judged += 1
            assert eng.tracing.count > before, f"seed {seed}: not transformed"
    assert judged >= 3


@pytest.mark.peers
@pytest.mark.parametrize("name", ["jax-scan", "jax-scan-jit"])
def test_a_fold_of_pairs_and_arrays_is_one_scan_over_the_stacked_elements(name: str, monkeypatch: Any) -> None:
    from jax import lax

    calls: list[int] = []
    real = lax.scan

    def spy(f: Any, init: Any, xs: Any, *a: Any, **kw: Any) -> Any:
        calls.append(len(xs[0]))
        return real(f, init, xs, *a, **kw)

    monkeypatch.setattr(lax, "scan", spy)
    prog = adv.parse(
        r"\((xs, a) : ([(R, Array [2] R)], R)) -> "
        r"foldl (\(s, v) (y, b) -> (s * sin y + a, v * b + replicate 2 s)) (1.0, replicate 2 a) xs"
    )
    x = ([(0.5, np.array([1.0, 2.0])), (1.5, np.array([-1.0, 0.5])), (-0.3, np.array([0.2, 0.1]))], 0.3)
    assert three_ways(adv.engine(name), prog, x)
    assert calls and set(calls) == {3}  # one scan over the 3 elements per transformed run


@pytest.mark.peers
@pytest.mark.parametrize("name", ["jax-cond", "jax-cond-jit"])
def test_ifs_are_lax_cond_nested_inside_branches_and_selects_of_selection_like_branches(
    name: str, monkeypatch: Any
) -> None:
    from jax import lax

    seen: list[str] = []
    cond, select = lax.cond, lax.select
    monkeypatch.setattr(lax, "cond", lambda *a, **kw: seen.append("cond") or cond(*a, **kw))
    monkeypatch.setattr(lax, "select", lambda *a, **kw: seen.append("select") or select(*a, **kw))
    prog = adv.parse(
        r"\((x, a) : (R, Array [2] R)) -> "
        r"if x < 1.0 then (if sin x > 0.2 then (sin x, a * a) else (x, a)) else (log x * x, a)"
    )
    for x in (0.5, 0.1, 2.0):
        assert three_ways(adv.engine(name), prog, (x, np.array([1.0, 2.0])))
    assert seen.count("cond") >= 6 and "select" not in seen  # outer and inner `if`, each run
    seen.clear()
    prog = adv.parse(r"\((x, y) : (R, R)) -> let z = (if x < y then x * y else sin y) in z * x")
    assert three_ways(adv.engine(name), prog, (0.5, 2.0))
    assert "select" in seen and "cond" not in seen


#: A `case` on a sum of a pair and a real; the alternative not taken is traced on zeros, where
#: `log (fst p)` is outside its domain: `lax.switch` runs only the taken one.
CASE = (
    r"\((x, y) : (R, R)) -> case (if x < y then inl (x, sin y) else inr y) of "
    r"{ inl p -> log (fst p) * snd p + x; inr z -> z * z * x }"
)


@pytest.mark.peers
@pytest.mark.parametrize("name", ["jax-cond", "jax-cond-jit"])
def test_a_case_on_a_sum_is_lax_switch_on_its_tag_three_ways(name: str, monkeypatch: Any) -> None:
    from jax import lax

    seen: list[int] = []
    switch = lax.switch
    monkeypatch.setattr(lax, "switch", lambda i, bs, *a, **kw: seen.append(i) or switch(i, bs, *a, **kw))
    prog = adv.parse(CASE)
    for x in ((0.5, 2.0), (3.0, 1.0)):
        assert three_ways(adv.engine(name), prog, x)
    assert set(seen) == {0, 1}  # both tags, each run a lax.switch


@pytest.mark.peers
@pytest.mark.parametrize("name", ["jax-cond", "jax-cond-jit"])
def test_generated_programs_with_case_on_sums_are_switched_and_agree_three_ways(name: str) -> None:
    eng = adv.engine(name)
    judged = 0
    for seed in range(30):
        case = generate(seed, features="sums,cond,let,lambda,transc,pairs")
        if lowered(case.program, "case"):
            before = eng.tracing.count
            judged += three_ways(eng, case.program, case.input, seed)
            assert eng.tracing.count > before, f"seed {seed}: not transformed"
    assert judged >= 5


@pytest.mark.peers
def test_a_planted_wrong_switch_rule_is_caught_and_its_repro_applies_it(tmp_path: Path) -> None:
    from test_transforms_repro import run_repro

    prog = adv.parse(CASE)
    eng = planted("broken_transforms", "WrongCaseSwitch")
    res = check(prog, (0.5, 2.0), engines=[eng], oracles=ORACLES)
    assert [v.status for v in res.verdicts] == ["fail"] * len(ORACLES), res.report("all")
    script, out = run_repro(eng, prog, (0.5, 2.0), tmp_path)
    assert "ns.switch(0, f" in script and "jax.lax.switch(" in script
    assert out.returncode == 1, out.stdout + out.stderr
    for real in ("jax-cond", "jax-cond-jit"):  # without the planted rule
        _, out = run_repro(adv.engine(real), prog, (0.5, 2.0), tmp_path)
        assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.peers
def test_an_untaken_branch_outside_its_domain_is_lax_cond_where_a_select_documents_nan() -> None:
    import jax
    import jax.numpy as jnp

    # JAX's FAQ ("gradients contain NaN where using where"): a select differentiates the untaken
    # branch too, and sqrt's infinite partial at -1 times its zero cotangent is NaN, the documented
    # semantics of `jnp.where` / `lax.select`, not the language's `if`.
    assert np.isnan(jax.grad(lambda x: jax.lax.select(x > 0.0, jnp.sqrt(x), 0.0 * x))(-1.0))
    prog = adv.parse(r"\(x : R) -> (if x > 0.0 then sqrt x else 0.0 * x) + x")
    eng = adv.engine("jax-cond")
    before = eng.tracing.count
    assert three_ways(eng, prog, -1.0)  # the branch with sqrt is not selection-like: lax.cond
    assert eng.tracing.count > before
    _, back = eng.vjp(prog, -1.0)
    assert back(1.0) == 1.0


@pytest.mark.peers
@pytest.mark.parametrize(
    "name, text, message",
    [
        (
            "jax-scan",
            r"\(xs : [R]) -> foldl (\acc y -> let b = y < acc in if b then acc else y) 0.0 xs",
            "jax-scan: a fold body",
        ),
        (
            "jax-cond",
            r"\((x, y) : (R, R)) -> if x < 1.0 then (let b = sin x > y in if b then x else y) * x else y",
            "jax-cond: a branch",
        ),
    ],
)
def test_what_needs_a_real_concretely_inside_a_traced_region_is_declined(name: str, text: str, message: str) -> None:
    prog = adv.parse(text)
    x = [0.5, 2.0, 1.0] if "scan" in name else (0.5, 2.0)
    with pytest.raises(NotImplementedError, match=message):
        adv.engine(name).vjp(prog, x)
    res = check(prog, x, engines=[adv.engine(name)], oracles=ORACLES)
    assert {v.status for v in res.verdicts} == {"not_applicable"}, res.report("all")


@pytest.mark.peers
def test_an_untaken_branch_that_raises_when_traced_is_declined() -> None:
    prog = adv.parse(r"\((x, n) : (R, Z)) -> if x < 1.0 then real (div 1 n) * x else x * x")
    with pytest.raises(NotImplementedError, match="jax-cond: lax.cond traces both branches"):
        adv.engine("jax-cond").vjp(prog, (2.0, 0))
    _, back = adv.engine("jax-cond").vjp(prog, (2.0, 1))  # no error in either branch: lax.cond
    assert back(1.0) == (4.0, 1)


@pytest.mark.peers
@pytest.mark.parametrize("name", ["jax-scan", "jax-cond"])
def test_a_domain_error_inside_a_traced_region_is_the_languages(name: str) -> None:
    text = (
        r"\(xs : [R]) -> foldl (\acc y -> acc + log y) 0.0 xs"
        if "scan" in name
        else r"\(x : R) -> if x < 1.0 then log x else x"
    )
    with pytest.raises(adv.DomainError):
        adv.engine(name).vjp(adv.parse(text), [1.0, -2.0] if "scan" in name else -1.0)


# ---- a planted wrong rule inside the scan body / the cond branches ---------------------------------

PLANTED = {
    "WrongScanStep": (r"\(xs : [R]) -> foldl (\acc y -> acc * sin y + y) 1.0 xs", [0.5, 1.0, 2.0], "jax-scan"),
    "WrongCondBranch": (r"\(x : R) -> if x < 1.0 then sin x * x else log x", 0.5, "jax-cond"),
}


@pytest.mark.peers
@pytest.mark.parametrize("name", sorted(PLANTED))
def test_a_planted_wrong_rule_is_caught_where_eager_and_the_real_engine_are_right(name: str) -> None:
    text, x, real = PLANTED[name]
    prog = adv.parse(text)
    res = check(prog, x, engines=[planted("broken_transforms", name)], oracles=ORACLES)
    assert [v.status for v in res.verdicts] == ["fail"] * len(ORACLES), res.report("all")
    assert three_ways(adv.engine(real), prog, x)


@pytest.mark.peers
@pytest.mark.slow
@pytest.mark.parametrize(
    "name, programs, features, construct",
    [
        ("WrongScanStep", 30, "lists,fold,transc,let,lambda", "foldl"),
        ("WrongCondBranch", 20, "cond,transc,let,lambda", "if"),
    ],
)
def test_a_campaign_catches_and_shrinks_the_planted_control_flow_bug(
    tmp_path: Path, name: str, programs: int, features: str, construct: str
) -> None:
    shrunk = planted_campaign(tmp_path, f"broken_transforms:{name}", programs, features)
    assert construct in shrunk, shrunk
