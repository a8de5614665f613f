"""What a finding is called and how it is shown (issue 16): failure classes that name the failure
(engine, construct at fault, kind of mismatch), never fragments of a detail's text; labelled
expected / actual values; reproduce commands that work as printed; text shortened with "…".
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import advalidate as adv
from advalidate.fuzz import findings as F

TESTS = Path(__file__).parent

# Verdicts as the oracles write them for one wrong `sin` rule (BrokenSin on `sin a * b`).
EXP, ACT = "(0.62260060166805231141, 0.20248562489811688936)", "(0.26323131236755198392, 0.20248562489811688936)"
SIN_BUG = [
    {"oracle": "symbolic", "detail": "gradient differs from sympy's derivative along the executed path"},
    {
        "oracle": "fd",
        "detail": "⟨gradient, v⟩ = -0.0864566480107392 but the finite-difference directional derivative is "
        "-0.759509752887901 (v = [-1.87287, 2.00776])",
    },
    {
        "oracle": "forward",
        "detail": "dot-product test: ⟨dy, J v⟩ = -0.759509752887901 from forward mode but ⟨Jᵀ dy, v⟩ = "
        "-0.0864566480107392 from the engine; full Jacobian comparison (forward columns vs reverse rows) done",
    },
    {
        "oracle": "cross",
        "detail": "gradient disagrees with tape (baseline), mutable (baseline); expected = tape (baseline)'s gradient",
    },
]
for _v in SIN_BUG:
    _v.update(engine="broken-sin", status="fail", expected=EXP, actual=ACT, positions=["dx[0]"])


def test_every_oracle_names_one_bug_with_the_same_kind_of_mismatch() -> None:
    kinds = {F.failure_class(v) for v in SIN_BUG}
    assert kinds == {F.WRONG_GRADIENT}
    for v in SIN_BUG:  # never a fragment of the detail's text
        k = F.failure_class(v)
        assert "#" not in k and "but the" not in k and not re.search(r"\d", k)


def test_kinds_of_mismatch() -> None:
    def kind(oracle: str, detail: str, actual: str | None = "1.0") -> str:
        return F.failure_class({"oracle": oracle, "detail": detail, "actual": actual})

    assert kind("fd", "the engine's value differs from the reference interpreter's") == F.WRONG_VALUE
    assert kind("cross", "value disagrees with tape (baseline); expected = tape (baseline)'s value") == F.WRONG_VALUE
    crash = kind("fd", "engine x crashed: ZeroDivisionError: float division by zero", None)
    assert crash == "crash (ZeroDivisionError)"
    assert kind("once", "engine x crashed: KeyError: 3", None) == "crash (KeyError)"
    assert kind("once", "a backpropagator ran 3 times in one reverse pass (backprop_calls_max = 3 > 1)", "3") == (
        "complexity: backprop called more than once"
    )
    assert kind("linear", "reverse pass is not linear: reverse_cost 900 vs C·(…) = 12·10 = 120", "900") == (
        "complexity: reverse pass not linear"
    )
    assert kind("symbolic", "gradient differs from sympy's derivative", "(nan, 1.0)") == "nan gradient"
    assert kind("forward", "the engine's own jvp differs from the reference forward mode") == "wrong jvp"
    assert kind("fd", "engine e returned an ill-typed gradient: expected R", None) == "ill-typed gradient"
    bot = {"oracle": "bot", "detail": "the bot's program computes a different value from the source program"}
    assert F.failure_class(bot) == F.BOT_VALUE and "bot's transformed program" in F.verdict_labels(bot)[1]
    for oracle in ("fd", "bot", "myoracle"):  # never a fragment of the text, whatever the oracle
        assert F.failure_class({"oracle": oracle, "detail": "1.5 but 2.5 # (v = [1.0])"}) in (
            "wrong gradient",
            f"{oracle} fails",
        )


def test_mismatch_describes_the_kept_example() -> None:
    base = {"oracle": "fd", "detail": "gradient differs from sympy's derivative"}
    assert F.mismatch(dict(base, expected="(0.5, 2.0)", actual="(-0.5, 2.0)")) == "wrong gradient sign"
    assert F.mismatch(dict(base, expected="(0.5, 2.0)", actual="(0.0, 0.0)")) == "zero gradient"
    assert F.mismatch(dict(base, expected="(0.5, 2.0)", actual="(1.0, 4.0)")) == "gradient scaled by 2"
    assert F.mismatch(dict(base, expected="(0.5, 2.0)", actual="(0.7, 2.0)")) == "wrong gradient"
    once = {"oracle": "once", "detail": "a backpropagator ran 2 times (backprop_calls_max = 2 > 1)", "actual": "2"}
    assert F.mismatch(once) == "complexity: backprop called twice"


def test_the_key_names_engine_construct_at_fault_and_kind() -> None:
    prog = adv.parse(r"\(x2 : R) -> sin x2")
    cs = F.culprit_constructs(prog.module)
    assert cs == {"sin"}
    key = F.finding_key("broken-sin", cs, F.failure_class(SIN_BUG[1]))
    assert F.signature_text(key) == "broken-sin: sin: wrong gradient"
    assert F.finding_name(1, "broken-sin", F.culprit_name(cs)) == "f001-broken-sin-sin"
    # A closure call counts as a construct; the application of a built-in does not.
    cs2 = F.culprit_constructs(adv.parse(r"\(x : R) -> let f = \y -> y * x in f x").module)
    assert {"app", "lambda", "let", "*R"} <= cs2
    assert F.culprit_name(cs2).startswith("*R")
    assert F.construct_slug(F.culprit_name({"*R", "let"})) == "mulr-let"
    assert F.culprit_name(F.culprit_constructs(adv.parse(r"\(x : R) -> x").module)) == "plain variables"


def test_expected_and_actual_say_what_they_are() -> None:
    labels = {v["oracle"]: F.verdict_labels(v) for v in SIN_BUG}
    assert labels["fd"] == ("gradient by finite differences (one per input real)", "gradient by the engine")
    assert labels["cross"][0] == "gradient by tape (baseline)"
    assert "forward mode" in labels["forward"][0]
    assert "sympy" in labels["symbolic"][0]
    value = {"oracle": "fd", "detail": "the engine's value differs from the reference interpreter's"}
    assert F.verdict_labels(value) == ("value by the reference interpreter", "value computed by this engine")


def test_clip_never_cuts_a_number_without_saying_so() -> None:
    text = "⟨gradient, v⟩ = 1.60970257897025 but the finite-difference directional derivative is 1.03357813980725"
    numbers = set(re.findall(r"\d[\d.]*", text))
    for limit in range(20, len(text)):
        out = F.clip(text, limit)
        assert len(out) <= limit and out.endswith("…")
        assert set(re.findall(r"\d[\d.]*", out)) <= numbers  # every number shown whole
    assert F.clip(text, len(text)) == text
    assert F.clip("x  y\n z", 20) == "x y z"


def test_reproduce_command_names_the_plug_in_and_its_path(tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(TESTS))
    try:
        path = F.engine_pythonpath("broken_engines:BrokenSin")
    finally:
        sys.path.remove(str(TESTS))
    assert path == str(TESTS.resolve())
    assert F.engine_pythonpath("tape") is None and F.engine_pythonpath("advalidate.impl.seed000.tape:TapeStage") is None
    cmd = F.reproduce_command(tmp_path / "f001-x", "broken_engines:BrokenSin", path)
    assert cmd == f"PYTHONPATH={path} advalidate replay {tmp_path / 'f001-x'} --engine broken_engines:BrokenSin"
    assert F.reproduce_command(tmp_path / "f001-x", "tape", None) == f"advalidate replay {tmp_path / 'f001-x'}"
    script = F.reproduce_script("broken_engines:BrokenSin", path)
    assert f"PYTHONPATH={path}" in script and "--engine broken_engines:BrokenSin" in script
    # The script is valid sh and puts the path first without losing the caller's PYTHONPATH.
    probe = script.replace('exec advalidate replay "$(dirname "$0")"', 'echo "$PYTHONPATH" #')
    out = subprocess.run(["sh", "-c", probe], capture_output=True, text=True, env={"PYTHONPATH": "/elsewhere"})
    assert out.stdout.strip() == f"{path}:/elsewhere"


def test_inconclusive_reasons_are_counted_without_specifics() -> None:
    a = F.reason_class("finite differences are not accurate enough here (error estimate 3.1e-07)", "tape")
    b = F.reason_class("finite differences are not accurate enough here (error estimate 2e-05)", "mutable")
    assert a == b == "finite differences are not accurate enough here"
    c = F.reason_class("engine tape raised EvalError: log of -1.5", "tape")
    assert c == F.reason_class("engine naive raised EvalError: log of -0.25", "naive")


ARRAY_LABELS = {
    r"\(a : Array [4] R) -> a ! [1]": "index",
    r"\(a : Array [4] R) -> gather [2] a (\[i] -> [i + 1])": "gather",
    r"\(a : Array [4] R) -> scatter [2] a (\[i] -> [div i 2])": "scatter",
    r"\(a : Array [4] R) -> scatterMax [2] a (\[i] -> [div i 2])": "scatterMax",
    r"\(a : Array [2, 3] R) -> sumOuter a": "sumOuter",
    r"\(a : Array [2, 3] R) -> maxOuter a": "maxOuter",
    r"\(a : Array [2, 3] R) -> minOuter a": "minOuter",
    r"\(a : Array [3] R) -> replicate 2 a": "replicate",
    r"\(a : Array [2, 3] R) -> tr [1, 0] a": "tr",
    r"\(a : Array [2, 3] R) -> reshape [3, 2] a": "reshape",
    r"\(a : Array [3] R) -> cond (a > replicate 3 0.5) a (a * a)": "cond",
    r"\(a : Array [3] R) -> build1 3 (\i -> a ! [2 - i])": "build",
}


def test_every_array_construct_has_its_own_label() -> None:
    """A finding's culprit names the array construct itself, so gather, scatter and scatterMax (or
    tr, reshape, replicate and sumOuter) are never one group."""
    for text, label in ARRAY_LABELS.items():
        cs = F.culprit_constructs(adv.parse(text).module)
        assert label in cs, (text, cs)
        others = set(ARRAY_LABELS.values()) - {label, "index", "build", "replicate", "sumOuter"}
        assert not (cs & others), (text, cs)
    keys = {F.finding_key("e", F.culprit_constructs(adv.parse(t).module), "wrong gradient") for t in ARRAY_LABELS}
    assert len(keys) == len(ARRAY_LABELS)


def test_the_fuzz_clip_is_the_oracles_clip_and_replay_never_prints_half_a_number() -> None:
    """Issue #42 point 18: one `clip` (cut at a word), used by replay's messages too."""
    from advalidate.fuzz.replay import printable
    from advalidate.oracles import verdict

    assert F.clip is verdict.clip
    text = "expected 1.60970257897025 and 1.03357813980725 and 2.71828182845904"
    numbers = set(re.findall(r"\d[\d.]*", text))
    for limit in range(12, len(text)):
        out = printable(text, limit)
        assert len(out) <= limit and set(re.findall(r"\d[\d.]*", out)) <= numbers, out
    assert printable("a\x1b[2Jb") == "a\\x1b[2Jb"  # still escaped


def test_a_finding_without_labels_says_expected_once() -> None:
    """Issue #42 point 18: "expected, expected:" when a finding names no label."""
    from advalidate.runner.progress import finding_lines

    f = {"dir": "f001-e-sin", "signature": "e: sin: wrong gradient", "occurrences": 1, "status": "shrunk"}
    f |= {"nodes_before": 9, "nodes_after": 3, "detail": "d", "expected": "1.0", "actual": "2.0"}
    f |= {"expected_label": "expected", "input": "0.5", "program": "p", "command": "c"}
    lines = finding_lines(f)
    assert "    expected: 1.0" in lines and "    actual: 2.0" in lines
    labelled = finding_lines(f | {"expected_label": "gradient by fd"})
    assert "    expected, gradient by fd: 1.0" in labelled
