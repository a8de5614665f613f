"""Campaign directories and state files that are hostile or wrong (issue #42, points 4, 5, 6, 10, 16, 18).

A campaign directory is data people send each other, and `--out` any directory a user names: what a
campaign reads there never names a path out of it, what it deletes is only its own, one campaign at a
time runs in it, and every bad input is a clear error with exit status 2. Campaigns here are bounded
by `--programs N` counts, never by time, and kept tiny (one worker, the `fd` oracle).
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import advalidate
from advalidate.cli import main

ROOT = Path(advalidate.__file__).resolve().parent.parent
TINY = ("--seconds", "600", "--workers", "1", "--oracle", "fd", "--engine", "tape", "--progress", "quiet")


def env(*paths: Path) -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([*map(str, paths), str(ROOT), e.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    e.pop("CI", None)
    return e


def advalidate_run(*args: str, cwd: Path | None = None, paths: tuple[Path, ...] = ()) -> subprocess.CompletedProcess:
    """`advalidate ARGS` in a fresh interpreter that puts no directory of its own first on the import
    path (`-P`, as the installed `advalidate` script does not either)."""
    return subprocess.run(
        [sys.executable, "-P", "-m", "advalidate.cli", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env(*paths),
        cwd=cwd,
    )


def one_error(err: str) -> str:
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture(scope="module")
def campaign_state(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The state.json of a real one-program campaign of a built-in engine."""
    out = tmp_path_factory.mktemp("made") / "o"
    res = advalidate_run("fuzz", "--programs", "1", "--seed", "5", "--out", str(out), *TINY)
    assert res.returncode == 0, res.stdout + res.stderr
    return json.loads((out / "state.json").read_text())


def pending_finding(name: str) -> dict:
    """A candidate as state.json keeps it, still to be shrunk (so --resume writes its directory)."""
    program = "\\(x : R) -> sin x\n"
    return {
        "id": 1, "name": name, "engine": "tape", "engine_spec": "tape", "oracle": "fd", "kind": "wrong gradient",
        "verdict": {"oracle": "fd", "engine": "tape", "status": "fail", "detail": "made up"}, "index": 0, "seed": 1,
        "size": None, "original": program, "original_input": "1.0", "nodes_before": 4, "constructs": ["sin"],
        "found_at": 0.0, "program": program, "input": "1.0", "nodes_after": 4, "status": "pending",
    }  # fmt: skip


def resume(out: Path, state: dict) -> int:
    out.mkdir(exist_ok=True)
    (out / "state.json").write_text(json.dumps(state))
    return main(["fuzz", "--resume", "--out", str(out), "--programs", "1", *TINY[:-4], "--progress", "quiet"])


# ---- point 4: names read from state.json ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["../victim", "..", ".", "a/b", "/tmp/advalidate-victim", "", "x" * 200, "a\\b"])
def test_resume_refuses_a_finding_name_that_is_not_a_plain_directory_name(name, campaign_state, tmp_path, capsys):
    out = tmp_path / "o"
    state = dict(campaign_state, findings=[pending_finding(name)], next_id=1)
    assert resume(out, state) == 2
    line = one_error(capsys.readouterr().err)
    assert "not a campaign state that --resume can continue" in line and "not a plain directory name" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]
    assert sorted(p.name for p in out.iterdir()) == ["state.json"]  # nothing written, not even a lock


def test_resume_still_continues_a_finding_with_a_plain_name(campaign_state, tmp_path, capsys):
    out = tmp_path / "o"
    state = dict(campaign_state, findings=[pending_finding("pending-001-tape")], next_id=1)
    assert resume(out, state) in (0, 1, 3)
    assert (out / "pending-001-tape" / "finding.json").exists() or any(out.glob("f001-*/finding.json"))


WRONG_TYPES = {
    "finding-program": lambda st: dict(st, findings=[dict(pending_finding("pending-001-tape"), program=5)]),
    "finding-verdict": lambda st: dict(st, findings=[dict(pending_finding("pending-001-tape"), verdict="x")]),
    "finding-id": lambda st: dict(st, findings=[dict(pending_finding("pending-001-tape"), id="1")]),
    "retry": lambda st: dict(st, retry=["a"]),
    "timed-out": lambda st: dict(st, timed_out=5),
    "elapsed": lambda st: dict(st, elapsed="long"),
    "incidents": lambda st: dict(st, incidents=[5]),
    "incident-dir": lambda st: dict(st, incidents=[{"kind": "crash", "dir": "incidents/../../x"}]),
    "waiting": lambda st: dict(st, waiting=[{"engine": "tape"}]),
    "config-engines": lambda st: dict(st, config=dict(st["config"], engines="tape")),
    "config-seed": lambda st: dict(st, config=dict(st["config"], seed="5")),
    "config-oracle": lambda st: dict(st, config=dict(st["config"], oracles=["nope"])),
    "coverage": lambda st: dict(st, coverage={"sin": "many"}),
    "verdict-rows": lambda st: dict(st, verdicts=[["tape", "fd", "pass", "1"]]),
    "calls": lambda st: dict(st, calls={"no separators": 1}),
    "incident-index": lambda st: dict(st, incidents=[{"kind": "crash", "number": 1}]),
}


@pytest.mark.parametrize("change", list(WRONG_TYPES))
def test_resume_with_wrongly_typed_fields_is_bad_input(change, campaign_state, tmp_path, capsys):
    out = tmp_path / "o"
    assert resume(out, WRONG_TYPES[change](campaign_state)) == 2
    line = one_error(capsys.readouterr().err)
    assert line.startswith(f"advalidate fuzz: {out / 'state.json'}: not a campaign state that --resume can continue")


# ---- point 6: what --out may hold, what a campaign deletes, one campaign at a time ------------------------


def test_a_new_campaign_refuses_a_directory_that_holds_no_campaign(tmp_path, capsys):
    out = tmp_path / "mine"
    (out / "incidents").mkdir(parents=True)
    (out / "incidents" / "notes.txt").write_text("keep")
    (out / "f001-kept").mkdir()
    (out / "f001-kept" / "finding.json").write_text("{}")
    (out / "report.html").write_text("my report")
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    assert main(["fuzz", "--programs", "1", "--out", str(out), *TINY]) == 2
    line = one_error(capsys.readouterr().err)
    assert f"--out {out}: not empty and not a fuzz campaign directory (no state.json)" in line
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before
    assert (out / "report.html").read_text() == "my report"


@pytest.mark.parametrize("out", ["/dev/null", "file"])
def test_a_campaign_refuses_an_out_that_is_not_a_directory(out, tmp_path, capsys):
    path = Path(out) if out.startswith("/") else tmp_path / out
    if not path.exists():
        path.write_text("x")
    assert main(["fuzz", "--programs", "1", "--out", str(path), *TINY]) == 2
    assert f"--out {path}: not a directory" in one_error(capsys.readouterr().err)


def test_a_new_campaign_over_an_old_one_deletes_only_the_old_campaigns_files(tmp_path):
    out = tmp_path / "o"
    first = advalidate_run("fuzz", "--programs", "1", "--seed", "5", "--out", str(out), *TINY)
    assert first.returncode == 0, first.stderr
    (out / "notes.txt").write_text("mine")
    (out / "mine").mkdir()
    (out / "mine" / "finding.json").write_text("{}")
    (out / "incidents").mkdir()
    (out / "incidents" / "keep.txt").write_text("mine")
    (out / "pending-001-tape").mkdir()  # a finding directory of the old campaign
    (out / "pending-001-tape" / "finding.json").write_text("{}")
    again = advalidate_run("fuzz", "--programs", "1", "--seed", "6", "--out", str(out), *TINY)
    assert again.returncode == 0, again.stderr
    assert (out / "notes.txt").read_text() == "mine" and (out / "mine" / "finding.json").exists()
    assert (out / "incidents" / "keep.txt").exists()
    assert not (out / "pending-001-tape").exists()
    assert json.loads((out / "state.json").read_text())["config"]["seed"] == 6


def hold_lock(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    fd = os.open(out / ".advalidate.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


@pytest.mark.parametrize("resume", [False, True])
def test_a_second_campaign_on_the_same_out_exits_2(resume, campaign_state, tmp_path):
    """A campaign holds an exclusive lock on its --out while it runs (here the test holds it, as the
    first campaign would): a second one stops at once, before it touches anything there."""
    out = tmp_path / "o"
    out.mkdir()
    (out / "state.json").write_text(json.dumps(campaign_state))
    fd = hold_lock(out)
    try:
        args = ["--resume"] if resume else []
        res = advalidate_run("fuzz", *args, "--programs", "2", "--out", str(out), *TINY)
    finally:
        os.close(fd)
    assert res.returncode == 2, res.stdout + res.stderr
    line = one_error(res.stderr)
    assert f"--out {out}: another fuzz campaign is running in this directory" in line
    assert json.loads((out / "state.json").read_text()) == campaign_state


def test_the_lock_is_free_again_after_a_campaign(tmp_path):
    out = tmp_path / "o"
    res = advalidate_run("fuzz", "--programs", "1", "--out", str(out), *TINY)
    assert res.returncode == 0, res.stderr
    os.close(hold_lock(out))


# ---- point 5: the current directory never shadows an installed module -------------------------------------

SHADOW = "open({marker!r}, 'a').write('{name} from the current directory ran\\n')\nraise ImportError('shadowed')\n"
PLUGIN = "from advalidate.impl.seed000.tape import TapeStage\n\n\nclass E(TapeStage):\n    name = 'cwd-tape'\n"


@pytest.mark.parametrize("engine", ["tape", "cwd_engine:E"])
def test_a_module_in_the_current_directory_never_shadows_an_installed_one(engine, tmp_path):
    """`mpmath.py` (and `numpy.py`) in the directory `fuzz` runs from: neither the campaign nor its
    workers import them; a plug-in engine there is still found (after the installed packages)."""
    cwd, marker = tmp_path / "cwd", tmp_path / "ran.txt"
    cwd.mkdir()
    for name in ("mpmath", "numpy", "sympy"):
        (cwd / f"{name}.py").write_text(SHADOW.format(marker=str(marker), name=name))
    (cwd / "cwd_engine.py").write_text(PLUGIN)
    args = [a if a != "tape" else engine for a in TINY]
    res = advalidate_run("fuzz", "--programs", "2", "--out", str(tmp_path / "o"), *args, cwd=cwd)
    assert not marker.exists(), marker.read_text()
    assert res.returncode == 0, res.stdout + res.stderr
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["programs"] == 2 and summary["verdicts"]["pass"] > 0


# ---- point 10: the documented smallest --memory-limit works ----------------------------------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="--memory-limit is Linux only (RLIMIT_AS)")
def test_the_smallest_memory_limit_runs_a_campaign(tmp_path):
    from advalidate.fuzz.cli import MIN_MEMORY_LIMIT_MB

    out = tmp_path / "o"
    res = advalidate_run("fuzz", "--memory-limit", str(MIN_MEMORY_LIMIT_MB), "--programs", "3", "--seed", "1",
                         "--out", str(out), *TINY)  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["programs"] == 3 and summary["incidents"] == [] and summary["verdicts"]["pass"] > 0


# ---- sweep --out: points 6, 10 and 18 ---------------------------------------------------------------------


def sweep_options(out: Path) -> dict:
    from dataclasses import asdict

    from advalidate.sweep.campaign import SweepOptions

    return asdict(SweepOptions(library="torch", out=str(out)))


def test_sweep_refuses_an_out_that_is_not_a_directory(capsys):
    assert main(["sweep", "torch", "--out", "/dev/null", "--progress", "quiet"]) == 2
    assert one_error(capsys.readouterr().err) == "advalidate sweep: --out /dev/null: not a directory"


@pytest.mark.parametrize("text", ["{", "[]", "5", "\xff"])
def test_sweep_resume_on_a_corrupt_sweep_json_is_bad_input(text, tmp_path, capsys):
    (tmp_path / "sweep.json").write_bytes(text.encode("latin-1"))
    assert main(["sweep", "torch", "--resume", "--out", str(tmp_path), "--progress", "quiet"]) == 2
    line = one_error(capsys.readouterr().err)
    assert line.startswith(f"advalidate sweep: {tmp_path / 'sweep.json'}")


BAD_ROWS = {
    "mode-path": {"op": "abs", "sample": 0, "variant": "sample", "results": [
        {"op": "abs", "sample": 0, "variant": "sample", "mode": "../../victim", "claimed": True, "status": "fail",
         "detail": "x"}]},
    "not-an-object": [1, 2],
    "results-not-a-list": {"op": "abs", "sample": 0, "variant": "sample", "results": 5},
    "status-not-a-string": {"op": "abs", "sample": 0, "variant": "sample", "results": [
        {"op": "abs", "sample": 0, "variant": "sample", "mode": "reverse", "claimed": True, "status": 1,
         "detail": "x"}]},
    "op-done-not-a-string": {"op_done": ["abs"]},
}  # fmt: skip


@pytest.mark.parametrize("row", list(BAD_ROWS))
def test_sweep_resume_checks_every_row_of_results_jsonl(row, tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    (out / "sweep.json").write_text(json.dumps(sweep_options(out)))
    (out / "results.jsonl").write_text(json.dumps(BAD_ROWS[row]) + "\n")
    assert main(["sweep", "torch", "--resume", "--out", str(out), "--progress", "quiet"]) == 2
    line = one_error(capsys.readouterr().err)
    assert line.startswith(f"advalidate sweep: {out / 'results.jsonl'}:1: not a row of a sweep's results")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]


def test_a_second_sweep_on_the_same_out_exits_2(tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    (out / "sweep.json").write_text(json.dumps(sweep_options(out)))
    fd = hold_lock(out)
    try:
        res = advalidate_run("sweep", "torch", "--resume", "--out", str(out), "--progress", "quiet")
    finally:
        os.close(fd)
    assert res.returncode == 2, res.stdout + res.stderr
    assert f"--out {out}: another sweep campaign is running in this directory" in one_error(res.stderr)
    assert sorted(p.name for p in out.iterdir()) == [".advalidate.lock", "sweep.json"]


NO_EXPECTTEST = "raise ModuleNotFoundError(\"No module named 'expecttest'\", name='expecttest')\n"


def test_sweep_without_its_extra_names_it_and_leaves_nothing(tmp_path):
    """torch's OpInfo database imports expecttest (the `torch` extra): without it the sweep says which
    extra to install, and leaves no directory behind, so the same command works once it is installed."""
    pytest.importorskip("torch")
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "expecttest.py").write_text(NO_EXPECTTEST)
    out = tmp_path / "o"
    res = advalidate_run("sweep", "torch", "--op", "abs", "--out", str(out), "--progress", "quiet", paths=(blocked,))
    assert res.returncode == 2, res.stdout + res.stderr
    line = one_error(res.stderr)
    assert "No module named 'expecttest'" in line and 'pip install -e ".[torch]"' in line
    assert not out.exists()


def test_sweep_resume_never_runs_a_call_source_read_from_results_jsonl(tmp_path):
    """A finding's repro.py embeds its op's call and is run to confirm the finding: on --resume the call
    comes from torch's own database again, never from results.jsonl (which anyone may have edited)."""
    pytest.importorskip("expecttest")
    out, marker = tmp_path / "o", tmp_path / "ran.txt"
    out.mkdir()
    evil = f"open({str(marker)!r}, 'w').write('ran')\n\ndef f(x):\n    return x.abs()\n"
    result = {"op": "abs", "sample": 0, "variant": "sample", "mode": "reverse", "claimed": True, "status": "fail",
              "detail": "made up", "known": "", "expected": 1.0, "actual": 2.0, "rel_err": 1.0}  # fmt: skip
    record = {"library": "torch", "args": [[1.0]], "shapes": [[1]], "call_source": evil, "nondiff_outputs": [],
              "modes": ["reverse"], "known": {}}  # fmt: skip
    row = {"op": "abs", "sample": 0, "variant": "sample", "results": [result], "record": record}
    (out / "results.jsonl").write_text(json.dumps(row) + "\n" + json.dumps({"op_done": "abs", "records": 1}) + "\n")
    (out / "sweep.json").write_text(json.dumps(dict(sweep_options(out), ops=["abs"])))
    res = advalidate_run("sweep", "torch", "--resume", "--op", "abs", "--out", str(out), "--progress", "quiet")
    assert not marker.exists()
    assert res.returncode == 0, res.stdout + res.stderr  # the made-up failure is not confirmed: not counted
    (repro,) = out.glob("*/*-abs-reverse-float64-eager/repro.py")  # named by dtype and transform too
    assert str(marker) not in repro.read_text() and "def f(" in repro.read_text()


# ---- point 16: a consistency finding names the mode that disagrees with the differences ------------------


class _Plan:
    undefined: list = []
    ties: list = []
    used: list = []
    outside: list = []

    def forget_met(self) -> None:
        pass


class _Lowered:
    """`x -> x * x` with a correct primal; `forward` or `reverse` mode is off by `error`."""

    def __init__(self, wrong: str, error: float = 5.0) -> None:
        self.plan, self.wrong, self.error = _Plan(), wrong, error

    def value_flat(self, prog, x):
        return [float(x) * float(x)]

    def vjp(self, prog, x):
        slope = 2 * float(x) + (self.error if self.wrong == "reverse" else 0.0)
        return float(x) * float(x), lambda dy: slope * float(dy)

    def jvp(self, prog, x, v):
        slope = 2 * float(x) + (self.error if self.wrong == "forward" else 0.0)
        return float(x) * float(x), slope * float(v)


@pytest.mark.parametrize("wrong", ["forward", "reverse"])
def test_a_consistency_failure_states_the_wrong_mode_as_actual(wrong):
    """torch's scatter_reduce: "expected 0.0, actual -2.24" where 0.0 was torch's (wrong) forward mode
    and -2.24 its reverse mode, which agrees with differences. Now `expected` is the differences'
    value, `actual` the wrong mode's, and the detail and labels name that mode."""
    from advalidate.fuzz.findings import verdict_labels
    from advalidate.lang.program import parse
    from advalidate.oracles.consistency import ConsistencyOracle
    from advalidate.oracles.context import Context, EngineRun

    prog = parse("\\(x : R) -> x * x")
    ctx = Context(prog, 1.5, 3)
    eng = _Lowered(wrong)
    v = ConsistencyOracle()._judge_at(ctx, EngineRun("lib", eng, "float"), eng, ctx.x, "the check's input")
    assert v.status == "fail"
    dy, dv = float(ctx.dy), float(ctx.v)
    right = 2 * 1.5 * dy * dv
    assert v.expected == pytest.approx(right, rel=1e-6)
    assert v.actual == pytest.approx(right + 5.0 * dy * dv, rel=1e-9)
    assert v.detail.startswith(wrong)
    expected_label, actual_label = verdict_labels({"oracle": "consistency", "detail": v.detail})
    assert "central differences" in expected_label and f"{wrong} mode" in actual_label


def test_finding_names_say_which_way_a_flag_of_the_call_is_set():
    from advalidate.fuzz.findings import finding_name

    off = finding_name(1, "torch", "scatter_reduce('prod', include_self=False)")
    on = finding_name(1, "torch", "scatter_reduce('prod', include_self=True)")
    assert off == "f001-torch-scatter-reduce-prod-no-include-self"
    assert on == "f001-torch-scatter-reduce-prod-include-self"


# ---- point 18: replay ---------------------------------------------------------------------------------------


def test_a_plugin_finding_from_a_namespace_package_replays_from_another_directory(tmp_path):
    """`--engine pkg.mod:Engine` where `pkg` has no __init__.py (a namespace package, as a repository's
    `tests/` often is): the finding records where it was found, and its command replays it elsewhere."""
    made, elsewhere, out = tmp_path / "made", tmp_path / "elsewhere", tmp_path / "o"
    (made / "pkg").mkdir(parents=True)
    elsewhere.mkdir()
    (made / "pkg" / "broken_engines.py").write_text((ROOT / "tests" / "broken_engines.py").read_text())
    # Bounded by program counts (program 39 of seed 7 fails for BrokenSin), never by seconds.
    args = [a if a != "tape" else "pkg.broken_engines:BrokenSin" for a in TINY]
    res = advalidate_run("fuzz", "--seed", "7", "--programs", "40", "--out", str(out), *args, cwd=made)
    assert res.returncode == 1, res.stdout + res.stderr
    (finding,) = out.glob("f*/finding.json")
    info = json.loads(finding.read_text())
    assert info["pythonpath"] == str(made.resolve())
    assert info["command"].startswith(f"PYTHONPATH={made.resolve()} advalidate replay")
    again = advalidate_run("replay", str(finding.parent), "--engine", "pkg.broken_engines:BrokenSin",
                           cwd=elsewhere, paths=(Path(info["pythonpath"]),))  # fmt: skip
    assert again.returncode == 1, again.stdout + again.stderr


@pytest.mark.parametrize("path, words", [("/nonexistent-x", "no such directory"), ("/dev/null", "not a directory")])
def test_replay_of_a_path_that_is_no_directory_says_so(path, words, capsys):
    assert main(["replay", path]) == 2
    assert one_error(capsys.readouterr().err) == f"advalidate replay: {path}: {words}" + (
        " (give a finding directory, which holds finding.json)" if words == "not a directory" else ""
    )


# ---- point 18: the sweep's progress line and summary ---------------------------------------------------------


def test_a_sweep_without_seconds_does_not_claim_0_s_left_before_an_op_is_done():
    from advalidate.runner.progress import status_line
    from advalidate.sweep.campaign import SweepOptions, _Live

    live = _Live(SweepOptions(library="torch", out="o"), n_ops=3)
    line = status_line(live.snap())
    assert "time left unknown" in line and " s left" not in line
    live.ops_done = 1
    assert "time left unknown" not in status_line(live.snap())
    timed = _Live(SweepOptions(library="torch", out="o", seconds=50.0), n_ops=3)
    assert " s left" in status_line(timed.snap())


def test_the_sweep_summary_counts_verdicts_as_its_progress_line_does():
    from advalidate.runner.progress import counts_text
    from advalidate.sweep.campaign import SweepOptions, _Live
    from advalidate.sweep.cli import summary_text

    statuses = ["pass", "pass", "fail", "silent_zero", "silent_wrong", "error", "refused", "inconclusive",
                "not_applicable"]  # fmt: skip
    live = _Live(SweepOptions(library="torch", out="o"), n_ops=1)
    live.add({"results": [{"status": s, "known": "", "op": "f", "mode": "reverse"} for s in statuses]})
    verdicts: dict[str, int] = {}
    for s in statuses:
        verdicts[s] = verdicts.get(s, 0) + 1
    summary = {"library": "torch", "version": "torch 0", "ops_checked": 1, "ops_selected": 1, "samples": 1,
               "records": 1, "seconds": 1.0, "stopped": "all ops checked", "verdicts": verdicts, "findings": [],
               "known": [], "incidents": []}  # fmt: skip
    line = summary_text(summary, "o").splitlines()[1]
    assert line.startswith(f"verdicts: {counts_text(live.counts)} (")
    assert "1 silent_zero as fail" in line and "1 error as inconclusive" in line


def test_the_sweep_summary_time_counts_the_confirmation_of_its_findings(tmp_path, monkeypatch):
    """The repros run after the checks (each a fresh interpreter): their time is part of the run's.
    A fake clock, advanced 100 s by the confirmation, so nothing here depends on real time."""
    import types

    from advalidate.sweep import results
    from advalidate.sweep.campaign import SweepOptions

    clock = [1000.0]

    def confirm_all(out, new, workers):
        clock[0] += 100.0
        return [], []

    monkeypatch.setattr(results, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    monkeypatch.setattr(results, "_confirm_all", confirm_all)
    opts = SweepOptions(library="torch", out=str(tmp_path))
    summary = results.write_results(tmp_path, opts, [], [], ["abs"], "all ops checked", 1.0)
    assert summary["seconds"] == 101.0


def test_fuzz_help_states_every_default_and_the_feature_names(capsys):
    from advalidate.names import FEATURES

    assert main(["fuzz", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    defaults = {"--seconds": "60", "--out": "advalidate-findings", "--shrink-seconds": "30",
                "--progress-interval": "10", "--max-size": "the generator's spread of sizes"}  # fmt: skip
    for option, default in defaults.items():
        said = text.split("options:", 1)[1].split(f" {option} ", 1)[1][:160]
        assert f"default {default}" in said or f"default: {default}" in said, (option, said)
    assert all(f in text.split(" --features ", 1)[1] for f in FEATURES)


def test_sweep_resume_reads_sweep_json_bounded(tmp_path, monkeypatch, capsys):
    """sweep.json is read by the one bounded reader (`lang.reader`): past the limit it is refused unread."""
    out = tmp_path / "o"
    out.mkdir()
    (out / "sweep.json").write_text(json.dumps(sweep_options(out)) + " " * 4096)
    monkeypatch.setenv("ADVALIDATE_MAX_INPUT_BYTES", "2048")
    assert main(["sweep", "torch", "--resume", "--op", "abs", "--out", str(out), "--progress", "quiet"]) == 2
    line = one_error(capsys.readouterr().err)
    assert line.startswith(f"advalidate sweep: {out / 'sweep.json'}") and "2048" in line
    assert sorted(p.name for p in out.iterdir()) == ["sweep.json"]


# ---- symbolic links in a campaign directory ------------------------------------------------------------------


@pytest.mark.parametrize("link", ["incidents", "pending-001-tape", "summary.json"])
def test_resume_refuses_a_campaign_directory_with_a_symbolic_link(link, campaign_state, tmp_path, capsys):
    """A received campaign directory whose `incidents/` (or a finding's directory, or a file) points
    elsewhere: --resume would write there. Refused, exit 2, and the place pointed to stays as it was."""
    out, elsewhere = tmp_path / "o", tmp_path / "elsewhere"
    elsewhere.mkdir()
    out.mkdir()
    target = elsewhere if link != "summary.json" else elsewhere / "file.txt"
    if link == "summary.json":
        target.write_text("mine")
    (out / link).symlink_to(target)
    state = dict(campaign_state, findings=[pending_finding("pending-001-tape")], next_id=1)
    assert resume(out, state) == 2
    line = one_error(capsys.readouterr().err)
    assert f"{out / link} is a symbolic link; a campaign directory holds none" in line
    assert sorted(p.name for p in elsewhere.iterdir()) == ([] if link != "summary.json" else ["file.txt"])
    assert link != "summary.json" or target.read_text() == "mine"


def test_sweep_resume_refuses_a_campaign_directory_with_a_symbolic_link(tmp_path, capsys):
    out, elsewhere = tmp_path / "o", tmp_path / "elsewhere"
    elsewhere.mkdir()
    out.mkdir()
    (out / "sweep.json").write_text(json.dumps(sweep_options(out)))
    (out / "findings").symlink_to(elsewhere)
    assert main(["sweep", "torch", "--resume", "--op", "abs", "--out", str(out), "--progress", "quiet"]) == 2
    assert f"{out / 'findings'} is a symbolic link" in one_error(capsys.readouterr().err)
    assert list(elsewhere.iterdir()) == []


def test_sweep_resume_reads_results_jsonl_line_by_line_bounded(tmp_path, monkeypatch, capsys):
    """One endless line in results.jsonl is refused past the user-file limit, not read whole."""
    out = tmp_path / "o"
    out.mkdir()
    (out / "sweep.json").write_text(json.dumps(sweep_options(out)))
    (out / "results.jsonl").write_text('{"op_done": "abs"}\n' + "x" * 5000)
    monkeypatch.setenv("ADVALIDATE_MAX_INPUT_BYTES", "2048")
    assert main(["sweep", "torch", "--resume", "--op", "abs", "--out", str(out), "--progress", "quiet"]) == 2
    line = one_error(capsys.readouterr().err)
    assert line == f"advalidate sweep: {out / 'results.jsonl'}:2: a line longer than 2048 bytes: not a sweep's row"
