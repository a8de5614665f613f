"""`jax-scan` lowers bounded recursion (issue #26): a `letrec` on a counter or a list, split at its
one recursive call, runs as a forward loop over its levels (`lax.scan`, or `lax.fori_loop` for a
tail call), the base at the bottom and a backward `lax.scan(..., reverse=True)` combining.

Judged three ways as the other transformation engines (the language's oracles, eager `jax` on the
same program, JAX's own forward mode of the transformed program); a planted wrong rule inside the
recursion's loops is caught and shrunk by a campaign bounded by a program count, and its
`repro.py` carries it. Which `letrec`s are bounded is library-free (`recursion.py`) and tested
without JAX.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from transform_checks import ORACLES, ROOT, example, planted, planted_campaign, three_ways

import advalidate as adv
from advalidate.generators import generate
from advalidate.impl.adapters.recursion import bounded_recursion
from advalidate.lang import core as C
from advalidate.oracles import check

ENGINES = ["jax-scan", "jax-scan-jit"]
#: A tail recursion carrying a real: `lax.fori_loop`.
TAIL = r"\(x : R) -> letrec go (k : Z) (v : R) : R = if k <= 0 then v else go (k - 1) (sin v * x + v) in go 4 x"
#: A non-tail recursion with an argument, reading its counter (`real n`, `a ! [n]`): a forward scan
#: of the arguments' states and a backward scan combining.
STATES = (
    r"\((x, a) : (R, Array [4] R)) -> letrec g (n : Z) (acc : R) : R = if n < 1 then acc * x "
    r"else let r = g (n - 1) (acc * x + a ! [n]) in sin r + real n * acc in g 3 x"
)
#: A structural recursion on a list of pairs, with a pair as its result: a backward scan over the
#: stacked elements.
LIST = (
    r"\((xs, y) : ([(R, R)], R)) -> letrec g (ys : [(R, R)]) : (R, R) = case ys of "
    r"{ [] -> (y, 1.0); h :: t -> let r = g t in (fst r * fst h + snd h, snd r * sin (fst h)) } in g xs"
)
INPUTS: dict[str, Any] = {
    TAIL: 0.7,
    STATES: (0.6, np.array([0.5, -1.0, 2.0, 0.25])),
    LIST: ([(0.5, 1.0), (1.5, -0.5), (-0.3, 2.0)], 0.4),
}


def letrecs(e: C.CExpr) -> list[C.LetRec]:
    out, stack = [], [e]
    while stack:
        x = stack.pop()
        if isinstance(x, C.LetRec):
            out.append(x)
        stack.extend(C.subexprs(x))
    return out


def shape_of(text: str) -> Any:
    (rec,) = [bounded_recursion(e) for e in letrecs(adv.parse(text).core)]
    return rec if rec is None else (rec.kind, rec.stop, len(rec.extra), rec.comb is None)


# ---- which letrecs are bounded recursion (library-free) --------------------------------------------


def test_bounded_recursions_are_recognised_with_their_stop_and_shape() -> None:
    assert shape_of((ROOT / "examples" / "letrec.adv").read_text()) == ("count", 0, 0, False)
    assert shape_of(TAIL) == ("count", 0, 1, True)
    assert shape_of(STATES) == ("count", 0, 1, False)  # `n < 1`: stops at n <= 0
    assert shape_of(LIST) == ("list", 0, 0, False)
    flipped = r"\(x : R) -> letrec g (n : Z) : R = if n >= 3 then x * g (n - 1) else x in g 5"
    assert shape_of(flipped) == ("count", 2, 0, False)  # recurses while n >= 3: stops at n <= 2


@pytest.mark.parametrize(
    "text",
    [
        # two calls (a tree, not a stack)
        r"\(x : R) -> letrec g (n : Z) : R = if n <= 0 then x else g (n - 1) * g (n - 1) in g 3",
        # the call only in one branch of an `if` of the recursive branch
        r"\(x : R) -> letrec g (n : Z) : R = if n <= 0 then x else (if x < 0.0 then x else g (n - 1)) in g 3",
        # the call under a lambda
        r"\(x : R) -> letrec g (n : Z) : R = if n <= 0 then x else (\y -> y * g (n - 1)) x in g 3",
        # not a decrement by one
        r"\(x : R) -> letrec g (n : Z) : R = if n <= 0 then x else x * g (n - 2) in g 3",
        # a recursion whose end a real decides
        r"\(x : R) -> letrec g (y : R) : R = if y < 0.1 then y else g (0.5 * y) in g x",
        # the tail of the list read after the call
        r"\(xs : [R]) -> letrec g (ys : [R]) : R = case ys of { [] -> 0.0; h :: t -> g t + sum t } in g xs",
    ],
)
def test_other_recursions_are_not_bounded(text: str) -> None:
    assert shape_of(text) is None


# ---- the engines -------------------------------------------------------------------------------------


def spy_loops(monkeypatch: Any) -> list[tuple[str, Any]]:
    """Records each `lax.scan` (with its `reverse` and length) and `lax.fori_loop` (its trip count)."""
    from jax import lax

    seen: list[tuple[str, Any]] = []
    scan, fori = lax.scan, lax.fori_loop

    def spy_scan(f: Any, init: Any, xs: Any, *a: Any, **kw: Any) -> Any:
        seen.append(("scan-reverse" if kw.get("reverse") else "scan", len(xs[0])))
        return scan(f, init, xs, *a, **kw)

    def spy_fori(lo: int, hi: int, body: Any, init: Any, **kw: Any) -> Any:
        seen.append(("fori_loop", hi - lo))
        return fori(lo, hi, body, init, **kw)

    monkeypatch.setattr(lax, "scan", spy_scan)
    monkeypatch.setattr(lax, "fori_loop", spy_fori)
    return seen


@pytest.mark.peers
@pytest.mark.parametrize("name", ENGINES)
@pytest.mark.parametrize(
    "text, loops",
    [
        ("letrec.adv", {("scan-reverse", 5)}),
        (TAIL, {("fori_loop", 4)}),
        (STATES, {("scan", 3), ("scan-reverse", 3)}),
        (LIST, {("scan-reverse", 3)}),
    ],
)
def test_a_bounded_recursion_is_its_loops_and_right_three_ways(
    name: str, text: str, loops: set, monkeypatch: Any
) -> None:
    pytest.importorskip("jax")
    if text.endswith(".adv"):
        prog, x = example(ROOT / "examples" / text)
    else:
        prog, x = adv.parse(text), INPUTS[text]
    seen = spy_loops(monkeypatch)
    eng = adv.engine(name)
    before = eng.tracing.count
    assert three_ways(eng, prog, x)
    assert eng.tracing.count > before
    assert set(seen) == loops  # each transformed run: these loops, of these lengths, nothing unrolled


@pytest.mark.peers
@pytest.mark.parametrize("name", ENGINES)
def test_generated_programs_with_letrec_are_lowered_and_agree_three_ways(name: str) -> None:
    pytest.importorskip("jax")
    eng = adv.engine(name)
    judged = lowered = 0
    for seed in range(40):
        case = generate(seed, features="letrec,transc,let,lambda,pairs,lists")
        if not any(bounded_recursion(e) for e in letrecs(case.program.core)):
            continue
        before = eng.tracing.count
        if three_ways(eng, case.program, case.input, seed):
            judged += 1
            lowered += eng.tracing.count > before
    assert judged >= 6 and lowered >= 5, (judged, lowered)


DECLINED = [
    pytest.param(
        r"\(x : R) -> letrec g (n : Z) : R = if n <= 0 then x else let r = g (n - 1) in "
        r"if n <= 2 then r * x else sin r in g 4",
        "jax-scan: a recursion step that needs its counter",
        id="step-branches-on-its-counter",
    ),
    pytest.param(  # h's count is g's counter, JAX's traced integer inside g's loop: no static trip count
        r"\(x : R) -> letrec h (m : Z) : R = if m <= 0 then x else x * h (m - 1) in "
        r"letrec g (n : Z) : R = if n <= 0 then x else let r = g (n - 1) in r * h n in g 3",
        "jax-scan: a recursion whose count is a traced integer",
        id="count-is-traced",
    ),
]


@pytest.mark.peers
@pytest.mark.parametrize(("source", "message"), DECLINED)
def test_a_recursion_jax_scan_cannot_carry_is_declined_by_name(source: str, message: str) -> None:
    pytest.importorskip("jax")
    prog = adv.parse(source)
    with pytest.raises(NotImplementedError, match=message):
        adv.engine("jax-scan").vjp(prog, 0.5)
    res = check(prog, 0.5, engines=[adv.engine("jax-scan")], oracles=ORACLES)
    assert {v.status for v in res.verdicts} == {"not_applicable"}, res.report("all")
    assert three_ways(adv.engine("jax"), prog, 0.5)  # the program itself is fine


@pytest.mark.peers
def test_a_domain_error_in_a_recursion_is_the_languages() -> None:
    pytest.importorskip("jax")
    prog = adv.parse(r"\(x : R) -> letrec g (n : Z) : R = if n <= 0 then x else log (g (n - 1) - 1.0) in g 3")
    with pytest.raises(adv.DomainError):
        adv.engine("jax-scan").vjp(prog, 1.5)


# ---- a planted wrong rule inside the recursion's loops ------------------------------------------------


@pytest.mark.peers
@pytest.mark.parametrize("text", ["letrec.adv", TAIL, LIST])
def test_a_planted_wrong_recursion_loop_is_caught_where_the_real_engine_is_right(text: str) -> None:
    pytest.importorskip("jax")
    prog, x = example(ROOT / "examples" / text) if text.endswith(".adv") else (adv.parse(text), INPUTS[text])
    res = check(prog, x, engines=[planted("broken_transforms", "WrongRecursionLoop")], oracles=ORACLES)
    assert [v.status for v in res.verdicts] == ["fail"] * len(ORACLES), res.report("all")
    assert three_ways(adv.engine("jax-scan"), prog, x)


@pytest.mark.peers
def test_the_repro_of_a_planted_wrong_recursion_loop_applies_it_and_fails(tmp_path: Path) -> None:
    pytest.importorskip("jax")
    from test_transforms_repro import run_repro

    prog, x = example(ROOT / "examples" / "letrec.adv")
    script, out = run_repro(planted("broken_transforms", "WrongRecursionLoop"), prog, x, tmp_path)
    assert "ns.scan_right(f" in script and "reverse=True" in script
    assert out.returncode == 1, out.stdout + out.stderr
    assert "library gradient matches the expected one: False" in out.stdout
    for real in ENGINES:
        script, out = run_repro(adv.engine(real), prog, x, tmp_path)
        assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.peers
@pytest.mark.slow
def test_a_campaign_catches_and_shrinks_the_planted_recursion_bug(tmp_path: Path) -> None:
    pytest.importorskip("jax")
    shrunk = planted_campaign(tmp_path, "broken_transforms:WrongRecursionLoop", 30, "letrec,transc,let,lambda")
    assert "letrec" in shrunk, shrunk
