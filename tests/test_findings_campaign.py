"""One finding per bug, with counts that agree everywhere (issue 16).

The campaign's bookkeeping is driven here with the events its workers send (no processes), so
each step can be checked: a program failing fd, forward mode and the cross check is one failure;
failures of the same bug become occurrences of one finding; findings are numbered without gaps;
`finding.json` never lags behind `summary.json`; `--exitfirst` stops at the first finding. The
last tests run real campaigns as a user does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from advalidate.fuzz.campaign import Campaign, CampaignConfig
from advalidate.fuzz.report import render_report
from advalidate.runner.progress import status_line, summary_text

TESTS = Path(__file__).parent
ROOT = TESTS.parent
BROKEN = "broken_engines:BrokenSin"

SIN_PROGRAM = "\\((a, b) : (R, R)) -> sin a * b\n"
EXP, ACT = "(0.6226, 0.2025)", "(0.2632, 0.2025)"


def verdict(oracle: str, detail: str, **kw: Any) -> dict[str, Any]:
    d = {"engine": "broken-sin", "oracle": oracle, "status": "fail", "detail": detail, "expected": EXP}
    d.update(actual=ACT, positions=["dx[0]"], abs_err=0.36, rel_err=0.58)
    d.update(kw)
    return d


def sin_failures() -> list[dict[str, Any]]:
    return [
        verdict("fd", "⟨gradient, v⟩ = -0.0864566480107392 but the finite-difference directional derivative is -0.75"),
        verdict("forward", "dot-product test: ⟨dy, J v⟩ = -0.7595 from forward mode but ⟨Jᵀ dy, v⟩ = -0.0864"),
        verdict("cross", "gradient disagrees with tape (baseline); expected = tape (baseline)'s gradient"),
    ]


def result(index: int, failures: list[dict[str, Any]], constructs: list[str], nodes: int = 40) -> dict[str, Any]:
    verdicts = [("broken-sin", o, "pass") for o in ("once", "linear")]
    verdicts += [("broken-sin", v["oracle"], "fail") for v in failures]
    verdicts += [("broken-sin", "symbolic", "inconclusive")]
    return {
        "index": index,
        "seed": 1000 + index,
        "size": nodes,
        "nodes": nodes,
        "constructs": constructs,
        "verdicts": verdicts,
        "inconclusive": [("broken-sin", "symbolic", "expression swell: 5000 nodes (limit 2000)")],
        "failures": failures,
        "program": SIN_PROGRAM,
        "input": "(0.4, 1.3)",
        "cpu": 0.01,
    }


def shrunk(ident: int, program: str, x: str = "1.0") -> dict[str, Any]:
    return {
        "id": ident,
        "reproduced": True,
        "program": program,
        "input": x,
        "nodes_before": 40,
        "nodes_after": 4,
        "steps": 3,
        "tried": 10,
        "seconds": 0.5,
        "fixpoint": True,
        "verdict": verdict("fd", "⟨gradient, v⟩ = 0.84 but the finite-difference directional derivative is 0.54"),
        "constructs": ["app", "lambda", "sin", "var"],
    }


@pytest.fixture()
def campaign(tmp_path: Path) -> Campaign:
    sys.path.insert(0, str(TESTS))
    c = Campaign(CampaignConfig(seconds=10, seed=1, engines=[BROKEN], out=tmp_path / "out", progress="quiet"))
    c.prepare()
    yield c
    sys.path.remove(str(TESTS))


def dirs(c: Campaign) -> list[str]:
    return sorted(p.name for p in c.out.iterdir() if (p / "finding.json").exists())


def on_disk(c: Campaign, name: str) -> dict[str, Any]:
    return json.loads((c.out / name / "finding.json").read_text())


def test_oracles_that_see_one_bug_make_one_finding(campaign: Campaign) -> None:
    c = campaign
    c.on_result(result(0, sin_failures(), ["lambda", "pair", "sin", "*R", "app", "var"]), 0.1)
    assert len(c.findings) == 1  # not one per oracle
    f = c.findings[0]
    assert f.oracle == "fd" and f.oracles == ["fd", "forward", "cross"] and f.kind == "wrong gradient"
    assert dirs(c) == ["pending-001-broken-sin"]  # written at once, not numbered before it is settled
    # Another program with the same bug, while the first is being shrunk: a second candidate.
    c.on_result(result(1, sin_failures(), ["lambda", "sin", "cos", "app", "var"]), 0.1)
    c.on_result(result(2, sin_failures()[:1], ["lambda", "sin", "let", "app", "var"]), 0.1)  # waits
    assert len(c.findings) == 2 and len(c.waiting) == 1
    # The first shrinks to `sin x`: f001, and everything using `sin` is that bug.
    c.book.on_shrunk(shrunk(1, "\\(x : R) -> sin x\n"))
    assert dirs(c) == ["f001-broken-sin-sin"] and not c.waiting
    (f,) = c.findings
    assert f.signature == "broken-sin: sin: wrong gradient" and f.number == 1
    assert f.occurrences == 3 and f.oracle_counts == {"fd": 3, "forward": 2, "cross": 2}
    info = on_disk(c, f.name)
    assert info["oracles"] == ["fd", "forward", "cross"] and info["failure_class"] == "broken-sin: sin: wrong gradient"
    assert info["culprit"] == "sin" and info["kind"] == "wrong gradient" and info["occurrences"] == 3
    assert (c.out / f.name / "program.adv").read_text() == "\\(x : R) -> sin x\n"


def test_occurrences_in_finding_json_never_lag_behind_the_summary(campaign: Campaign) -> None:
    c = campaign
    c.on_result(result(0, sin_failures(), ["lambda", "sin", "app", "var"]), 0.1)
    c.book.on_shrunk(shrunk(1, "\\(x : R) -> sin x\n"))
    for i in range(1, 6):  # explained at once by f001
        c.on_result(result(i, sin_failures(), ["lambda", "sin", "exp", "app", "var"]), 0.1)
    sympy = verdict("symbolic", "gradient differs from sympy's derivative along the executed path")
    c.on_result(result(6, [sympy], ["lambda", "sin", "app", "var"]), 0.1)  # a new witness of the same bug
    c.save()
    summary = json.loads((c.out / "summary.json").read_text())
    (entry,) = summary["findings"]
    info = on_disk(c, entry["dir"])
    assert entry["occurrences"] == info["occurrences"] == 7
    assert entry["oracle_counts"] == info["oracle_counts"] == {"fd": 6, "symbolic": 1, "forward": 6, "cross": 6}
    assert list(info["witnesses"]) == ["fd", "symbolic", "forward", "cross"]
    # The terminal summary and the HTML report say the same.
    text = summary_text(summary)
    assert "seen in 7 program(s)" in text and "fd 6x, symbolic 1x, forward 6x, cross 6x" in text
    html = render_report(summary, c.findings_for_report())
    assert re.search(r"Seen in <b>7</b> program", html) and "fd (6), symbolic (1), forward (6), cross (6)" in html


def test_finding_numbers_have_no_gaps_and_announced_findings_stay(campaign: Campaign) -> None:
    c = campaign
    notes: list[str] = []
    c._note = notes.append  # type: ignore[method-assign]
    c.on_result(result(0, sin_failures(), ["lambda", "sin", "app", "var"]), 0.1)
    c.on_result(result(1, sin_failures(), ["lambda", "sin", "cos", "app", "var"]), 0.1)
    # The second candidate finishes first, at a bigger program than the first will reach.
    c.book.on_shrunk(shrunk(2, "\\(x : R) -> sin (cos x)\n"))
    c.book.on_shrunk(shrunk(1, "\\(x : R) -> sin x\n"))
    crash = verdict("fd", "engine broken-sin crashed: KeyError: 7", expected=None, actual=None, positions=[])
    c.on_result(result(2, [crash], ["lambda", "exp", "app", "var"]), 0.1)
    c.book.on_shrunk(shrunk(3, "\\(x : R) -> exp x\n"))
    numbers = sorted(f.number for f in c.findings)
    assert numbers == list(range(1, len(numbers) + 1))  # 1, 2, 3: no gaps
    announced = {m.group(1) for n in notes for m in [re.search(r"finding (f\d{3}-\S+):", n)] if m}
    assert announced == {f.name for f in c.findings} == set(dirs(c))
    snap = c.snapshot()
    assert [f["name"] for f in snap["found"]] == [f.name for f in sorted(c.findings, key=lambda f: f.number)]
    # The live panel lists them all, by number.
    import io

    from rich.console import Console

    from advalidate.runner.progress import RichProgress

    buf = io.StringIO()
    Console(file=buf, width=120).print(RichProgress(buf)._render(snap))
    panel = buf.getvalue()
    assert [m.group(0) for m in re.finditer(r"f\d{3}-[\w-]+", panel)] == [f["name"] for f in snap["found"]]
    assert "not applicable 0" in panel
    assert "f003-broken-sin-exp" in dirs(c) and c.findings[-1].signature == "broken-sin: exp: crash (KeyError)"


def test_verdict_counts_keep_not_applicable_and_inconclusive_apart(campaign: Campaign) -> None:
    c = campaign
    r = result(0, [], ["lambda", "sin"])
    r["verdicts"] += [("forward", "once", "not_applicable"), ("forward", "linear", "not_applicable")]
    c.on_result(r, 0.1)
    counts = c.counts()
    assert counts == {"pass": 2, "fail": 0, "inconclusive": 1, "not_applicable": 2}
    s = c.summary()
    assert s["verdicts"] == counts
    assert s["by_engine_oracle"]["forward"]["once"]["not_applicable"] == 1
    assert s["inconclusive_reasons"] == [
        {"engine": "broken-sin", "oracle": "symbolic", "reason": "expression swell: # nodes", "count": 1}
    ]
    assert "inconclusive 1 n/a 2" in status_line(c.snapshot())
    text = summary_text(s)
    assert "2 pass, 0 fail, 1 inconclusive, 2 not applicable" in text and "expression swell" in text
    html = render_report(s, [])
    assert "1 inconclusive" in html and "2 not applicable" in html and "expression swell" in html


def test_exitfirst_takes_no_new_program_after_the_first_failure_and_stops_once_it_is_settled(tmp_path: Path) -> None:
    sys.path.insert(0, str(TESTS))
    try:
        cfg = CampaignConfig(seconds=10, seed=1, engines=[BROKEN], out=tmp_path / "o", progress="quiet", exitfirst=True)
        c = Campaign(cfg)
        c.prepare()
        c.on_result(result(0, sin_failures(), ["lambda", "sin", "app", "var"]), 0.1)
        crash = verdict("fd", "engine broken-sin crashed: KeyError: 7", expected=None, actual=None, positions=[])
        c.on_result(result(1, [crash], ["lambda", "exp", "app", "var"]), 0.1)  # another bug: not looked at
        assert len(c.findings) == 1 and c.stop_reason is None
        c.book.on_shrunk(shrunk(1, "\\(x : R) -> sin x\n"))
        assert c.stop_reason == "exitfirst" and c.exit_status() == 1
        assert dirs(c) == ["f001-broken-sin-sin"]
        assert [w["kind"] for w in c.summary()["unexamined_failures"]] == ["crash (KeyError)"]
    finally:
        sys.path.remove(str(TESTS))


# ---- real campaigns -----------------------------------------------------------------------------


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(TESTS), e.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    e.pop("CI", None)
    return e


def test_a_campaign_against_one_planted_bug_reports_one_finding_consistently(tmp_path: Path) -> None:
    out = tmp_path / "out"
    # Bounded by program counts, never by seconds: programs 0, 1 and 3 of seed 6 use `sin`.
    args = ["fuzz", "--seconds", "600", "--programs", "4", "--seed", "6", "--engine", BROKEN, "--engine", "forward"]
    args += ["--workers", "2"]
    res = subprocess.run(
        [sys.executable, "-m", "advalidate.cli", *args, "--out", str(out), "--progress", "plain"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env(),
    )
    assert res.returncode == 1, res.stdout + res.stderr
    summary = json.loads((out / "summary.json").read_text())
    names = [p.name for p in out.iterdir() if (p / "finding.json").exists()]
    assert names == ["f001-broken-sin-sin"] == [f["dir"] for f in summary["findings"]]
    (entry,) = summary["findings"]
    info = json.loads((out / names[0] / "finding.json").read_text())
    assert info["occurrences"] == entry["occurrences"] >= 2
    assert info["oracle_counts"] == entry["oracle_counts"]
    assert {"fd", "forward", "cross"} <= set(info["oracles"])
    assert info["failure_class"] == "broken-sin: sin: wrong gradient" and "#" not in info["failure_class"]
    fails = summary["by_engine_oracle"]["broken-sin"]
    assert info["oracle_counts"]["fd"] == fails["fd"]["fail"]  # every fd failure is this bug
    # not applicable (forward makes no once/linear promise) is counted apart from inconclusive
    assert summary["by_engine_oracle"]["forward"]["once"]["not_applicable"] == summary["programs"]
    assert summary["by_engine_oracle"]["forward"]["once"]["inconclusive"] == 0
    # The terminal: counts, the shrunk program and input, the command as printed works.
    assert f"seen in {info['occurrences']} program(s)" in res.stdout
    assert info["input"] in res.stdout and "sin" in res.stdout.split("program:")[1]
    assert "not applicable" in res.stdout
    cmd = info["command"]
    assert cmd.startswith(f"PYTHONPATH={TESTS.resolve()} advalidate replay ") and cmd.endswith(f"--engine {BROKEN}")
    bare = {k: v for k, v in env().items() if k != "PYTHONPATH"}
    bare["PYTHONPATH"] = str(ROOT)  # advalidate itself, not the plug-in's directory
    again = subprocess.run(
        cmd.replace("advalidate replay", f"{sys.executable} -m advalidate.cli replay"),
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
        env=bare,
        cwd=tmp_path,
    )
    assert again.returncode == 1, again.stdout + again.stderr  # still failing: the bug is there
    # The report: labelled expected / actual, error sizes and positions, the same counts.
    html = (out / "report.html").read_text()
    assert "expected: gradient by finite differences" in html or "expected: directional derivative" in html
    assert "actual: " in html and "absolute " in html and "differs at" in html
    assert f"Seen in <b>{info['occurrences']}</b> program" in html and "PYTHONPATH=" in html


@pytest.mark.parametrize("flag", ["--exitfirst", "-x"])
def test_exitfirst_stops_at_the_first_finding_once_shrunk(tmp_path: Path, flag: str) -> None:
    out = tmp_path / "out"
    args = ["fuzz", flag, "--seconds", "600", "--programs", "300", "--seed", "7", "--engine", BROKEN, "--oracle", "fd"]
    args += ["--workers", "1"]
    res = subprocess.run(
        [sys.executable, "-m", "advalidate.cli", *args, "--out", str(out), "--progress", "plain"],
        capture_output=True,
        text=True,
        timeout=280,
        env=env(),
    )
    assert res.returncode == 1, res.stdout + res.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped"] == "exitfirst"
    (entry,) = summary["findings"]
    assert entry["status"] == "shrunk" and entry["dir"] == "f001-broken-sin-sin" and entry["nodes_after"] <= 6
    assert (out / entry["dir"] / "program.adv").exists()


def test_a_language_failure_put_to_a_library_call_groups_with_that_calls_finding(campaign: Campaign) -> None:
    """issue #22, one finding per bug: an fd failure whose shrunk program the library fails by itself
    in one call (`worker.attributed_call`) is that call's finding, with the language-semantics kind kept."""
    c = campaign
    own = verdict("consistency", "lowering ⟦lib.f⟧: reverse ⟨Jᵀ dy, v⟩ = 0.0 but central differences give 1.5")
    c.on_result(result(0, [own], ["lambda", "sin", "app", "var"]), 0.1)
    c.book.on_shrunk(shrunk(1, "\\(x : R) -> sin x\n") | {"verdict": own})
    c.on_result(result(1, sin_failures(), ["lambda", "sin", "cos", "app", "var"]), 0.1)
    assert len(c.findings) == 2  # an fd failure is not explained by the call's finding before shrinking
    c.book.on_shrunk(
        shrunk(2, "\\(x : R) -> sin (x - 20.5)\n") | {"attributed": {"verdict": own, "call": "lib.f", "own": True}}
    )
    (f,) = c.findings
    assert f.kind == "wrong gradient in lowering ⟦lib.f⟧" and f.occurrences == 2
    assert f.oracle_counts == {"consistency": 1, "fd": 1, "forward": 1, "cross": 1}
    # not attributed: a finding of its own, keyed by its constructs
    c.on_result(result(2, sin_failures(), ["lambda", "exp", "app", "var"]), 0.1)
    c.book.on_shrunk(shrunk(3, "\\(x : R) -> exp x\n") | {"attributed": None})
    assert sorted(g.kind for g in c.findings) == ["wrong gradient", "wrong gradient in lowering ⟦lib.f⟧"]
    assert on_disk(c, c.findings[1].name)["attributed_from"] is None
    # put to a call that disagrees with the language by itself: two program shapes, one finding
    for i, prog in ((3, "\\(x : R) -> cos (x * x)\n"), (4, "\\(x : R) -> cos (3.0 + x)\n")):
        c.on_result(result(i, sin_failures()[:1], ["lambda", "cos", "app", "var"]), 0.1)
        alone = verdict("fd", "lib.g alone at 2.0: ⟨gradient, v⟩ = 0.5 but the finite-difference … is 0.6")
        c.book.on_shrunk(
            shrunk(c.findings[-1].id, prog) | {"attributed": {"verdict": alone, "call": "lib.g", "own": False}}
        )
    (g,) = [g for g in c.findings if "lib.g" in g.kind]
    assert g.kind == "wrong gradient in ⟦lib.g⟧" and g.occurrences == 2 and g.attributed_from == "wrong gradient"
    assert g.signature == "broken-sin: lib.g: wrong gradient in ⟦lib.g⟧" and g.name.endswith("-lib-g")
    # a later failure of the language kind in a program with what g's example blames is g again
    n = len(c.findings)
    c.on_result(result(5, sin_failures()[:1], ["lambda", "cos", *g.culprit, "app", "var"]), 0.1)
    assert len(c.findings) == n and g.occurrences == 3
    # the call disagreeing with itself is the same bug seen another way (JAX's digamma, both in one program)
    own_g = verdict("consistency", "lowering ⟦lib.g⟧: reverse ⟨Jᵀ dy, v⟩ = 0.0 but central differences give 1.5")
    c.on_result(result(6, [own_g], ["lambda", "tanh", "app", "var"]), 0.1)
    c.book.on_shrunk(shrunk(c.findings[-1].id, "\\(x : R) -> tanh x\n") | {"verdict": own_g})
    assert len(c.findings) == n and g.occurrences == 4


def test_a_program_that_overruns_the_timeout_runs_once_more_before_it_is_an_incident(campaign: Campaign) -> None:
    """On a loaded machine a program may overrun --timeout for reasons not its own: it runs once
    more, `timeout_retry` times as long, first; only a second overrun is an incident. One still
    waiting for its second run when the campaign stops is an incident too (and --resume runs it)."""
    from advalidate.fuzz.pool import Event

    c = campaign
    submitted: list[tuple[Any, float]] = []

    class Pool:
        def idle(self) -> list[int]:
            return [0]

        def busy(self) -> list[int]:
            return []

        def submit(self, w: int, task: Any, timeout: float) -> None:
            submitted.append((task, timeout))

    s = c.scheduler
    s.pool, s.deadline = Pool(), float("inf")
    s.on_lost(Event("timeout", task=("run", 7), seconds=c.cfg.timeout), "timeout")
    assert not c.incidents and list(s.retry) == [7]
    s.dispatch(0.0)
    assert submitted == [(("run", 7), c.cfg.timeout * c.cfg.timeout_retry)]
    s.dispatch(0.0)
    assert submitted[-1] == (("run", 0), c.cfg.timeout)  # the next program: the usual timeout
    s.on_lost(Event("timeout", task=("run", 7), seconds=120.0), "timeout")
    (inc,) = c.incidents
    assert inc["index"] == 7 and "within 30 s, nor within 120 s run again" in inc["detail"]
    s.on_lost(Event("timeout", task=("run", 3), seconds=c.cfg.timeout), "timeout")
    s.unfinished_retries({i["index"] for i in c.incidents})
    assert [i["index"] for i in c.incidents] == [7, 3] and "--resume runs it" in c.incidents[1]["detail"]
    assert 3 in c.state()["retry"] and c.state()["timed_out"] == [3, 7]


def test_a_failure_blamed_on_several_calls_shrinks_to_the_one_it_needs(campaign: Campaign) -> None:
    """A consistency failure the oracle could not put to one call names them all; the shrinker may
    then keep any failure of the same mismatch (`same_failure`), and the shrunk finding is keyed by
    the call its smaller program is put to."""
    from advalidate.fuzz.findings import same_failure

    many = "wrong gradient in lowering ⟦a[i] + lib.f + lib.g⟧"
    assert same_failure(many, "wrong gradient in lowering ⟦lib.f⟧")
    assert not same_failure(many, "wrong gradient at a kink in lowering ⟦lib.f⟧")
    assert not same_failure("wrong gradient in lowering ⟦lib.g⟧", "wrong gradient in lowering ⟦lib.f⟧")
    assert not same_failure("wrong gradient", "wrong jvp")
    c = campaign
    v = verdict("consistency", "lowering ⟦a[i] + lib.f + lib.g⟧: reverse ⟨Jᵀ dy, v⟩ = 0.0 but forward mode 1.5")
    c.on_result(result(0, [v], ["lambda", "sin", "app", "var"]), 0.1)
    one = verdict("consistency", "lowering ⟦lib.f⟧: reverse ⟨Jᵀ dy, v⟩ = 0.0 but forward mode gives 1.5")
    c.book.on_shrunk(shrunk(1, "\\(x : R) -> sin x\n") | {"verdict": one})
    (f,) = c.findings
    assert f.kind == "wrong gradient in lowering ⟦lib.f⟧" and f.name.endswith("-lib-f")
