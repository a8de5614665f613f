"""`advalidate fuzz`: campaigns, shrinking, finding directories, replay, interrupts, crashes, resume.

The engines under test live in `tests/broken_engines.py` (a wrong derivative rule for `sin`, an
engine that kills its process, one that never returns). Campaigns run as `python -m advalidate.cli`
subprocesses, exactly as a user runs them, except those given a CPU budget per program
(`CampaignConfig.cpu_timeout`, not an option of the command).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import advalidate as adv
from advalidate.cli import main
from advalidate.fuzz import findings as F
from advalidate.fuzz import shrink as S
from advalidate.fuzz.worker import program_seed, program_size

TESTS = Path(__file__).parent
ROOT = TESTS.parent
BROKEN = "broken_engines:BrokenSin"


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(TESTS), e.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    e.pop("CI", None)
    return e


def cli(*args: str, timeout: float = 120, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "advalidate.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env(),
        cwd=cwd,
    )


def finding_dirs(out: Path) -> list[Path]:
    return sorted(p for p in out.iterdir() if (p / "finding.json").exists())


# ---- the acceptance campaign: a broken engine is found, shrunk and replayed ---------------------


def test_broken_engine_campaign_finds_shrinks_and_replays(tmp_path: Path) -> None:
    out = tmp_path / "findings"
    # Bounded by program counts, never by seconds (programs 0, 1 and 3 of seed 6 use `sin`).
    args = ["--seconds", "600", "--programs", "4", "--seed", "6", "--engine", BROKEN]
    res = cli("fuzz", *args, "--out", str(out), "--progress", "plain")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "seed 6" in res.stderr  # printed at the start
    summary = json.loads((out / "summary.json").read_text())
    assert summary["exit_status"] == 1 and summary["stopped"] == "programs"
    assert summary["findings"] and summary["verdicts"]["fail"] > 0
    dirs = finding_dirs(out)
    assert [d.name for d in dirs] == [f["dir"] for f in summary["findings"]]
    # One finding per bug: (engine, construct at fault, kind of mismatch), whichever oracles saw it.
    keys = [f["signature"] for f in summary["findings"]]
    assert keys == ["broken-sin: sin: wrong gradient"]
    assert {"fd", "forward", "cross"} <= set(summary["findings"][0]["oracles"])
    for d in dirs:
        for name in ("program.adv", "original.adv", "input.txt", "original-input.txt", "finding.json", "reproduce.sh"):
            assert (d / name).exists(), (d, name)
        info = json.loads((d / "finding.json").read_text())
        for key in ("engine", "oracle", "expected", "actual", "seed", "sizes", "versions", "command", "detail"):
            assert key in info
        assert info["engine"] == "broken-sin" and info["engine_spec"] == BROKEN
        assert info["status"] == "shrunk"
        prog = adv.parse((d / "program.adv").read_text())
        assert S.module_nodes(prog.module) == info["sizes"]["after"] <= 15
        assert info["sizes"]["before"] >= info["sizes"]["after"]
        assert "sin" in (d / "program.adv").read_text()
        assert info["command"] == f"PYTHONPATH={TESTS.resolve()} advalidate replay {d} --engine {BROKEN}"
    # Replay: exits 1 while the bug is there, 0 against a correct engine.
    d = dirs[0]
    again = cli("replay", str(d), "--engine", BROKEN)
    assert again.returncode == 1, again.stdout + again.stderr
    assert main(["replay", str(d), "--engine", "tape"]) == 0  # a correct engine passes it
    assert cli("replay", str(d), "--original", "--engine", BROKEN).returncode == 1
    # The summary table and the report.
    assert "finding" in res.stdout and "advalidate replay" in res.stdout
    html = (out / "report.html").read_text()
    assert "Construct coverage" in html and "broken-sin" in html and dirs[0].name in html
    assert "http://" not in html and "https://" not in html and "<script" not in html


# ---- shrinking ----------------------------------------------------------------------------------

BIG = r"""
\((a, (b, xs)) : (R, (R, [R]))) ->
  let c = a * b + 3.25 in
  let d = map (\t -> t * c + sin (t * a)) xs in
  letrec f (n : Z) (acc : R) : R = if n == 0 then acc else f (n - 1) (acc + cos b) in
  (sum d + f 4 c, [c, 2.5 * b, exp (b / 7.0)])
"""


def test_shrink_to_the_wrong_rule_with_real_oracles() -> None:
    from broken_engines import BrokenSin

    from advalidate.oracles import check

    eng = BrokenSin()
    prog = adv.parse(BIG)
    x = (0.3, (1.7, [0.25, -1.5, 2.75]))

    def fails(p: adv.Program, cx: object) -> bool:
        return check(p, cx, engines=[eng], oracles=["fd"], seed=3).verdicts[0].status == "fail"

    assert fails(prog, x)
    seen: list[int] = []
    res = S.shrink(prog.module, x, fails, budget=60, on_progress=lambda r: seen.append(r.nodes_after))
    assert res.fixpoint and res.nodes_before == S.module_nodes(prog.module)
    assert res.nodes_after <= 10 and seen and seen[-1] == res.nodes_after
    assert fails(res.program, res.x)
    again = adv.parse(res.text)  # the pretty-printed result parses back to the same program
    assert again.module == res.program.module
    assert "sin" in res.text and "cos" not in res.text and "letrec" not in res.text
    # Unused parts of the input are gone, the rest simplified.
    assert res.x in ([1.0], 1.0, (1.0, [1.0]), (1.0, 1.0))


def test_shrink_keeps_the_best_result_when_the_budget_runs_out() -> None:
    prog = adv.parse(BIG)
    clock = iter(range(10_000))
    res = S.shrink(prog.module, (0.3, (1.7, [0.25])), lambda p, x: True, budget=3, clock=lambda: float(next(clock)))
    assert not res.fixpoint
    assert res.nodes_after <= res.nodes_before
    adv.parse(res.text)


def test_shrink_only_accepts_well_typed_well_behaved_failures() -> None:
    from advalidate.generators import well_behaved

    prog = adv.parse(r"\(x : R) -> log (x * x + 1.0) + sin x")
    judged: list[tuple[adv.Program, object]] = []

    def fails(p: adv.Program, x: object) -> bool:
        judged.append((p, x))
        return "log" in adv.pretty(p)

    res = S.shrink(prog.module, 0.75, fails, budget=30)
    assert res.nodes_after < S.module_nodes(prog.module) and "log" in res.text
    assert judged
    for p, x in judged:  # every candidate handed to `fails` type-checks and is well-behaved
        adv.parse(adv.pretty(p))
        assert well_behaved(p, x)[0]


def test_substitution_avoids_capture() -> None:
    e = adv.parse(r"\(x : R) -> let y = x in (\(x : R) -> y + x) 2.0").expr
    let = e.body
    with pytest.raises(S._Capture):
        S.substitute(let.body, "y", let.rhs)
    e2 = adv.parse(r"\(x : R) -> let y = x * 2.0 in y + sin y").expr
    out = S.substitute(e2.body.body, "y", e2.body.rhs)
    assert S.free_vars(out) == {"x"}


def test_input_type_candidates_drop_unused_components() -> None:
    from advalidate.lang.program import program_of_module
    from advalidate.lang.values import check_value

    prog = adv.parse(r"\((a, b, c) : (R, Z, [R])) -> a * a")
    cands = list(S.input_type_candidates(prog.module, (1.5, (2, [1.0]))))
    # All unused components at once first, then one at a time.
    assert [v for _, v in cands] == [1.5, (1.5, [1.0]), (1.5, 2)]
    assert adv.pretty(program_of_module(cands[0][0])).startswith(r"\(a : R) ->")
    for m, v in cands:
        check_value(v, program_of_module(m).input_type)


def test_input_candidates_shorten_and_simplify() -> None:
    xs = list(S.input_candidates((2.75, [0.25, 1.0, 3.0], 7)))
    assert (1.0, [0.25, 1.0, 3.0], 7) in xs
    assert (2.75, [0.25], 7) in xs and (2.75, [0.25, 1.0], 7) in xs
    assert (2.75, [0.25, 1.0, 3.0], 0) in xs


# ---- findings -----------------------------------------------------------------------------------


def test_failure_class_ignores_numbers_and_specifics() -> None:
    a = {"detail": "⟨gradient, v⟩ = 1.96 but the finite-difference directional derivative is 1.26 (v = [1.2, 1.1])"}
    b = {"detail": "⟨gradient, v⟩ = -0.9 but the finite-difference directional derivative is -7.9 (v = [-1.3])"}
    assert F.failure_class(dict(a, oracle="fd")) == F.failure_class(dict(b, oracle="fd")) == "wrong gradient"
    c = {"detail": "engine x crashed: ZeroDivisionError: float division by zero"}
    assert F.failure_class(c) == "crash (ZeroDivisionError)"
    assert F.covers({"sin"}, {"sin", "cos", "let"}) and not F.covers({"sin"}, {"cos"})


def test_write_dir_is_atomic_and_updates_in_place(tmp_path: Path) -> None:
    d = F.write_dir(tmp_path, "f001-x-y", {"a.txt": "1\n", "reproduce.sh": F.reproduce_script()})
    assert (d / "a.txt").read_text() == "1\n" and os.access(d / "reproduce.sh", os.X_OK)
    F.write_dir(tmp_path, "f001-x-y", {"a.txt": "2\n"})
    assert (d / "a.txt").read_text() == "2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["f001-x-y"]  # no temporary leftovers
    F.remove_dir(d)
    assert list(tmp_path.iterdir()) == []


def test_constructs_of_a_program() -> None:
    prog = adv.parse(r"\((x, n) : (R, Z)) -> if n == 0 then sin x else real n * x")
    cs = F.module_constructs(prog.module)
    assert {"if", "==Z", "sin", "real", "*R", "lambda"} <= cs


def test_program_seeds_are_fixed_by_campaign_seed_and_index() -> None:
    assert program_seed(7, 0) == program_seed(7, 0) != program_seed(7, 1) != program_seed(8, 1)
    assert program_seed(7, 0) == 1506970234806006287  # the same on every machine, forever
    sizes = {program_size(program_seed(1, i), 20) for i in range(200)}
    assert max(sizes) <= 20 and min(sizes) >= 1 and len(sizes) > 5
    assert program_size(123, None) is None


# ---- interrupts, crashes, hangs, resume ---------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_writes_summary_and_findings(tmp_path: Path, sig: int) -> None:
    out = tmp_path / "f"
    args = ["fuzz", "--seconds", "600", "--programs", "100000", "--seed", "3", "--engine", BROKEN, "--oracle", "fd"]
    args += ["--workers", "1"]  # ended by the signal, not by the count or the time box
    proc = subprocess.Popen(
        [sys.executable, "-m", "advalidate.cli", *args, "--out", str(out), "--progress", "plain"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
        start_new_session=True,
    )
    try:
        # Waits for the event, not for a time: a campaign that ends first (its --seconds 600 is the
        # safety net) fails the test.
        while not (out.is_dir() and finding_dirs(out)):
            assert proc.poll() is None, ("the campaign ended without a finding", proc.communicate())
            time.sleep(0.2)
        time.sleep(0.5)
        # Ctrl-C reaches the whole process group (workers too); SIGTERM only the parent.
        if sig == signal.SIGINT:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=600)  # a safety net, not a time limit
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 1, stdout + stderr
    assert "Traceback" not in stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped"] == ("interrupted" if sig == signal.SIGINT else "terminated")
    assert summary["findings"] and (out / "report.html").exists() and (out / "state.json").exists()
    for d in finding_dirs(out):
        adv.parse((d / "program.adv").read_text())
        info = json.loads((d / "finding.json").read_text())
        assert info["status"] in ("shrunk", "unshrunk", "partly-shrunk")
    assert "finding" in stdout  # the summary table was printed


def incident_programs(seed: int, n: int) -> dict[int, set[str]]:
    """Programs 0..n-1 of campaign `seed` that broken_engines' Crashing (`cos`) or Hanging (`exp`)
    cannot answer, with the incident kinds each may give (well-behaved ones only: the others are
    skipped before any engine runs)."""
    from broken_engines import _uses

    from advalidate.generators import generate

    out = {}
    for i in range(n):
        pseed = program_seed(seed, i)
        case = generate(pseed, program_size(pseed, None))
        kinds = {kind for kind, name in (("crash", "cos"), ("timeout", "exp")) if _uses(case.program, name)}
        if kinds and (case.behaved is None or case.behaved[0]):
            out[i] = kinds
    return out


def test_crashing_and_hanging_workers_are_reported_and_replaced(tmp_path: Path) -> None:
    from advalidate.fuzz import CampaignConfig, run_campaign

    out = tmp_path / "f"
    # Seed 24: program 1 uses `exp` (Hanging spins for ever), program 2 uses `cos` (Crashing dies).
    # Hanging is caught by its CPU time (5 CPU s, which load does not stretch); --timeout 600 is only
    # a safety net, so no program that answers must beat a short wall clock (issue #43).
    cfg = CampaignConfig(
        seconds=600, programs=5, seed=24, engines=["broken_engines:Crashing", "broken_engines:Hanging"],
        oracles=["fd"], workers=2, timeout=600, timeout_retry=1, cpu_timeout=5, out=out, progress="quiet",
    )  # fmt: skip
    status, summary = run_campaign(cfg)
    assert status == 3, summary["incidents"]  # correct when they answer, but incidents: exit 3
    kinds = {i["kind"] for i in summary["incidents"]}
    assert kinds == {"crash", "timeout"}, summary["incidents"]
    uses = incident_programs(24, 5)  # the programs that use `cos` or `exp`: exactly the incidents
    got = {i["index"]: i["kind"] for i in summary["incidents"]}
    assert {1, 2} <= set(got) == set(uses) and all(kind in uses[i] for i, kind in got.items())
    # the campaign went on: every other program was checked (or skipped as not well-behaved)
    assert summary["programs"] + summary["skipped_not_well_behaved"] + len(got) == 5
    assert summary["programs"] >= 2 and summary["stopped"] == "programs"
    for inc in summary["incidents"]:
        text = (out / inc["dir"] / "program.adv").read_text()
        assert ("cos" if inc["kind"] == "crash" else "exp") in text
        if inc["kind"] == "timeout":  # past its CPU budget, run once more, before it was an incident
            assert "no answer within 5 CPU s, nor run again" in inc["detail"]


def test_a_program_that_waits_is_not_past_its_cpu_budget(tmp_path: Path) -> None:
    """Time a program spends waiting, not computing (as when load starves it), does not count
    against the CPU budget: Slow waits 2 s on program 1 of seed 24, with 1 CPU s, and answers."""
    from advalidate.fuzz import CampaignConfig, run_campaign

    cfg = CampaignConfig(
        seconds=600, programs=5, seed=24, engines=["broken_engines:Slow"], oracles=["fd"], workers=1,
        timeout=600, timeout_retry=0, cpu_timeout=1, out=tmp_path / "f", progress="quiet",
    )  # fmt: skip
    status, summary = run_campaign(cfg)
    assert status == 0 and summary["incidents"] == [], summary["incidents"]
    assert 1 in incident_programs(24, 5)  # program 1 uses `exp`: Slow waited on it
    assert summary["programs"] + summary["skipped_not_well_behaved"] == 5 and summary["stopped"] == "programs"


def test_resume_continues_the_campaign(tmp_path: Path) -> None:
    out = tmp_path / "f"
    common = ["--engine", "tape", "--oracle", "fd", "--workers", "1", "--out", str(out), "--progress", "quiet"]
    # Bounded by program counts, not by a few seconds that a loaded machine may spend starting a worker.
    first = cli("fuzz", "--seconds", "600", "--programs", "6", "--seed", "11", *common, timeout=900)
    assert first.returncode == 0, first.stdout + first.stderr
    s1 = json.loads((out / "summary.json").read_text())
    st1 = json.loads((out / "state.json").read_text())
    second = cli(
        "fuzz",
        "--resume",
        "--seconds",
        "600",
        "--programs",
        "12",
        "--out",
        str(out),
        "--progress",
        "quiet",
        timeout=900,
    )
    assert second.returncode == 0, second.stdout + second.stderr
    s2 = json.loads((out / "summary.json").read_text())
    st2 = json.loads((out / "state.json").read_text())
    assert s2["seed"] == 11 and s2["sessions"] == 2
    assert s1["programs"] + s1["skipped_not_well_behaved"] == 6 and s1["stopped"] == "programs"
    assert s2["programs"] + s2["skipped_not_well_behaved"] == 12 and s2["stopped"] == "programs"
    assert s2["elapsed_seconds"] > s1["elapsed_seconds"]
    assert st2["next_index"] > st1["next_index"]
    assert s2["engines"] == [{"name": "tape", "spec": "tape"}]
    assert main(["fuzz", "--resume", "--seed", "12", "--out", str(out), "--seconds", "1"]) == 2


def test_bad_usage_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", "--engine", "nosuch", "--out", str(tmp_path / "a"), "--seconds", "1"]) == 2
    assert "nosuch" in capsys.readouterr().err
    assert main(["fuzz", "--oracle", "nosuch", "--out", str(tmp_path / "a"), "--seconds", "1"]) == 2
    assert main(["fuzz", "--resume", "--out", str(tmp_path / "none"), "--seconds", "1"]) == 2
    assert "no campaign to resume" in capsys.readouterr().err
    assert main(["replay", str(tmp_path)]) == 2
    assert main(["fuzz", "--seconds", "-1"]) == 2


# ---- the pytest entry point ---------------------------------------------------------------------


def test_pytest_plugin_fuzzes_an_outside_engine(tmp_path: Path) -> None:
    from importlib.metadata import entry_points

    (tmp_path / "test_nothing.py").write_text("def test_ok():\n    pass\n")
    installed = any(ep.value == "advalidate.pytest_plugin" for ep in entry_points(group="pytest11"))
    plugin = [] if installed else ["-p", "advalidate.pytest_plugin"]
    args = [
        sys.executable, "-m", "pytest", *plugin, "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
        "--advalidate-engine", BROKEN, "--advalidate-seconds", "600", "--advalidate-programs", "30",
        "--advalidate-seed", "1",
        "--advalidate-oracle", "fd", "--advalidate-workers", "1", "--advalidate-out", str(tmp_path / "out"),
        "-k", "advalidate_fuzz", "--rootdir", str(tmp_path), str(tmp_path),
    ]  # fmt: skip
    res = subprocess.run(args, capture_output=True, text=True, timeout=900, env=env(), cwd=tmp_path)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "advalidate_fuzz[broken_engines:BrokenSin]" in res.stdout
    assert "broken-sin" in res.stdout and "advalidate replay" in res.stdout and "1 failed" in res.stdout
    assert finding_dirs(tmp_path / "out")


# ---- long campaigns -----------------------------------------------------------------------------


@pytest.mark.slow
def test_correct_engines_survive_two_minutes(tmp_path: Path) -> None:
    out = tmp_path / "f"
    args = ("--seconds", "1200", "--programs", "150", "--seed", "2024", "--out", str(out), "--progress", "plain")
    res = cli("fuzz", *args, timeout=1500)
    summary = json.loads((out / "summary.json").read_text())
    assert res.returncode == 0, res.stdout + res.stderr
    assert summary["findings"] == [] and summary["verdicts"]["fail"] == 0
    assert summary["programs"] > 100 and not summary["errors"]


@pytest.mark.slow
def test_fuzz_engine_helper_raises_with_the_findings(tmp_path: Path) -> None:
    from advalidate.testing import fuzz_engine

    sys.path.insert(0, str(TESTS))
    with pytest.raises(AssertionError) as info:
        fuzz_engine(BROKEN, seconds=600, programs=60, seed=4, oracles=["fd"], workers=1, out=tmp_path / "o")
    assert "broken-sin" in str(info.value) and "sin" in str(info.value)
    clean = fuzz_engine("tape", seconds=600, programs=20, seed=4, oracles=["fd"], workers=1, out=tmp_path / "p")
    assert clean["findings"] == []
