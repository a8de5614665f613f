"""`advalidate fuzz`: honest exit statuses, bad input on the command line and in `--out`, SIGTERM,
worker memory limits (issue 16).

Exit status 0 means the engines were checked and nothing was found: a campaign that checked
nothing, or in which programs timed out or crashed their workers, exits 3. Engines under test are
written into a temporary directory and found through PYTHONPATH, as a user's would be.
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

import advalidate
from advalidate.cli import main
from advalidate.fuzz.cli import machine_memory_mb, max_workers
from advalidate.fuzz.scheduler import exit_reason

ROOT = Path(advalidate.__file__).resolve().parent.parent
TESTS = ROOT / "tests"

ENGINES = """\
import os
import time
import zlib
from advalidate.impl.seed000.tape import TapeStage
from advalidate.lang.errors import BudgetError, MemoryBudgetError


class Refusing(TapeStage):
    '''Never finishes within its budget: every verdict is inconclusive.'''
    name = "refusing"

    def vjp(self, prog, x, numeric="float", **kw):
        raise BudgetError("this engine never finishes")


class Hanging(TapeStage):
    '''Never returns, on any program.'''
    name = "hanging-always"

    def vjp(self, prog, x, numeric="float", **kw):
        while True:
            time.sleep(0.05)


class Flaky(TapeStage):
    '''Correct, but its process dies on about half of the inputs.'''
    name = "flaky"

    def vjp(self, prog, x, numeric="float", **kw):
        if zlib.crc32(repr(x).encode()) % 2 == 0:
            os._exit(17)
        return super().vjp(prog, x, numeric, **kw)


class Slow(TapeStage):
    '''Correct, and takes a second per program: its workers are nearly always busy.'''
    name = "slow"

    def vjp(self, prog, x, numeric="float", **kw):
        time.sleep(1.0)
        return super().vjp(prog, x, numeric, **kw)


class OverBudget(TapeStage):
    '''Its target program is past the memory budget on every program.'''
    name = "over-budget"

    def vjp(self, prog, x, numeric="float", **kw):
        raise MemoryBudgetError("memory budget exceeded: a build of shape [2] would hold 2147483648 reals")


class Hungry(TapeStage):
    '''Asks for 64 GB on every program.'''
    name = "hungry"

    def vjp(self, prog, x, numeric="float", **kw):
        block = bytearray(64 << 30)
        return super().vjp(prog, x, numeric, **kw)
"""


@pytest.fixture
def engines_dir(tmp_path: Path) -> Path:
    d = tmp_path / "engines"
    d.mkdir()
    (d / "cli_fuzz_engines.py").write_text(ENGINES)
    return d


def env(*paths: Path) -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([*map(str, paths), str(ROOT), e.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    e.pop("CI", None)
    return e


def fuzz(*args: str, paths: tuple[Path, ...] = (), timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "advalidate.cli", "fuzz", "--progress", "quiet", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env(*paths),
    )


def no_traceback(err: str) -> list[str]:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines
    return lines


# ---- bad numbers --------------------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--seconds", "--timeout", "--shrink-seconds", "--progress-interval"])
@pytest.mark.parametrize("value, why", [("nan", "finite"), ("inf", "finite"), ("-inf", "finite"), ("-1", "positive")])
def test_times_must_be_finite_and_positive(option, value, why, capsys, tmp_path):
    assert main(["fuzz", f"{option}={value}", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert f"argument {option}: must be {'a finite number' if why == 'finite' else 'positive'}: '{value}'" in err
    assert not (tmp_path / "o").exists()


def test_memory_limit_must_be_a_positive_integer(capsys):
    for value in ("0", "-5", "1.5", "lots"):
        assert main(["fuzz", "--memory-limit", value]) == 2
        assert "argument --memory-limit" in capsys.readouterr().err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="--memory-limit is Linux only (RLIMIT_AS)")
@pytest.mark.parametrize("value", ["10", "99999999999999", str(machine_memory_mb() + 1)])
def test_memory_limit_is_range_checked_before_anything_starts(value, capsys, tmp_path):
    assert main(["fuzz", "--memory-limit", value, "--out", str(tmp_path / "o")]) == 2
    (line,) = no_traceback(capsys.readouterr().err)
    assert f"--memory-limit {value}: must be between 64 and {machine_memory_mb()} MB" in line
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("option", [["--workers"], ["--scheduler", "local:"]])
def test_worker_counts_are_capped_with_a_message_naming_the_cap(option, capsys, tmp_path):
    n = max_workers() + 1
    args = [*option[:-1], f"{option[-1]}{n}"] if option[-1].endswith(":") else [*option, str(n)]
    assert main(["fuzz", *args, "--out", str(tmp_path / "o")]) == 2
    (line,) = no_traceback(capsys.readouterr().err)
    assert f"{n} worker processes is more than this machine can run; at most {max_workers()}" in line
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "bad",
    [["--oracle", "nosuch"], ["--workers", "2", "--scheduler", "local:2"], ["--workers", str(max_workers() + 1)]],
)
def test_every_option_is_checked_before_any_campaign_config_exists(bad, capsys, tmp_path, monkeypatch):
    """Issue #41 item 3: the configuration was built (loading the engines named, to read their
    timeouts) before the options were checked; now no config is made from a bad command line."""
    from advalidate.fuzz import campaign

    def no_config(*_a: object, **_k: object) -> None:
        raise AssertionError("a CampaignConfig was made from bad options")

    monkeypatch.setattr(campaign, "CampaignConfig", no_config)
    monkeypatch.setattr("advalidate.impl.registry.program_timeout", no_config)
    assert main(["fuzz", "--engine", "tape", *bad, "--out", str(tmp_path / "o")]) == 2
    no_traceback(capsys.readouterr().err)
    assert not (tmp_path / "o").exists()


def test_checked_options_make_the_whole_config_memory_limit_included(tmp_path):
    from advalidate.cli import build_parser
    from advalidate.fuzz.cli import campaign_config, fuzz_options

    args = build_parser().parse_args(["fuzz", "--engine", "tape", "--symbolic-every", "3", "--out", str(tmp_path)])
    cfg = campaign_config(fuzz_options(args))
    assert cfg.memory_limit is None and cfg.sample["symbolic"] == 3 and cfg.timeout == 30.0
    if sys.platform.startswith("linux"):
        args = build_parser().parse_args(["fuzz", "--memory-limit", "512", "--timeout", "7", "--out", str(tmp_path)])
        cfg = campaign_config(fuzz_options(args))
        assert cfg.memory_limit == 512 and cfg.timeout == 7.0 and cfg.sample is None


def test_a_refused_scheduler_connection_is_reported_at_once(capsys, tmp_path):
    """Found by one plain TCP connection, not by Dask's client retrying for 20 s (issue 24)."""
    assert main(["fuzz", "--scheduler", "tcp://127.0.0.1:1", "--out", str(tmp_path / "o")]) == 2
    (line,) = no_traceback(capsys.readouterr().err)
    assert line == "advalidate fuzz: cannot reach the Dask scheduler at tcp://127.0.0.1:1: Connection refused"


@pytest.mark.parametrize("code, words", [(-9, "killed by SIGKILL, as the kernel's out-of-memory killer does"),
                                         (-11, "killed by SIGSEGV"), (17, "exit code 17")])  # fmt: skip
def test_a_dead_worker_is_described_by_its_signal(code, words):
    assert words in exit_reason(code)


# ---- honest exit statuses ----------------------------------------------------------------------------


def test_a_campaign_that_checked_nothing_exits_3(tmp_path: Path, engines_dir: Path):
    out = tmp_path / "o"
    res = fuzz("--seconds", "600", "--programs", "20", "--seed", "1", "--workers", "1", "--oracle", "fd", "--engine",
               "cli_fuzz_engines:Refusing", "--out", str(out), paths=(engines_dir,))  # fmt: skip
    assert res.returncode == 3, res.stdout + res.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["exit_status"] == 3 and summary["findings"] == []
    assert summary["verdicts"]["pass"] == summary["verdicts"]["fail"] == 0
    assert "nothing was checked" in res.stderr and "exit status 3" in res.stderr
    no_traceback(res.stderr)


def test_a_campaign_whose_engine_hangs_until_its_time_box_ends_exits_3(tmp_path: Path, engines_dir: Path):
    """The issue's repro (`--engine broken_engines:Hanging --oracle fd`), with an engine that hangs on
    every program and the default timeout: the program still hanging when the time box ends is an
    incident, nothing is checked, and the campaign cannot vouch for the engine. The box must end while
    a program hangs, so a worker must have started in it: where none did (a loaded machine), the
    campaign runs again with a box four times as long; a count of tries, not a time, ends the test."""
    for seconds in ("4", "16", "64"):
        out = tmp_path / f"o{seconds}"
        res = fuzz("--seconds", seconds, "--workers", "1", "--oracle", "fd", "--engine", "cli_fuzz_engines:Hanging",
                   "--out", str(out), paths=(engines_dir,))  # fmt: skip
        assert res.returncode == 3, res.stdout + res.stderr
        summary = json.loads((out / "summary.json").read_text())
        assert summary["exit_status"] == 3 and summary["verdicts"]["pass"] == 0
        if summary["workers_started"]:
            break
        assert f"no worker process finished starting within --seconds {seconds}" in res.stderr
    else:
        pytest.fail("no worker started within three time boxes (4, 16, 64 s)")
    assert "exit status 3" in res.stderr
    assert [i["kind"] for i in summary["incidents"]] == ["hang"] and "incident" in res.stderr
    assert f"when the campaign's time box (--seconds {seconds}) ended" in summary["incidents"][0]["detail"]


def test_a_campaign_whose_programs_all_time_out_exits_3(tmp_path: Path, engines_dir: Path):
    """The same engine with `--timeout 1`: every program times out, twice (--timeout-retry 1), and is
    an incident; the campaign ends by its count of programs, not by its time box."""
    out = tmp_path / "o"
    res = fuzz("--seconds", "600", "--programs", "3", "--timeout", "1", "--timeout-retry", "1", "--workers", "1",
               "--oracle", "fd", "--engine", "cli_fuzz_engines:Hanging", "--out", str(out),
               paths=(engines_dir,))  # fmt: skip
    assert res.returncode == 3, res.stdout + res.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["exit_status"] == 3 and summary["verdicts"]["pass"] == 0 and summary["stopped"] == "programs"
    assert sorted(i["index"] for i in summary["incidents"]) == [0, 1, 2]
    assert {i["kind"] for i in summary["incidents"]} == {"timeout"}
    assert "exit status 3" in res.stderr and "3 incidents (3 timeout)" in res.stderr


def test_a_campaign_whose_workers_never_started_says_so() -> None:
    """Where no worker finished starting before the time box ended (a machine too busy), exit status
    3 says that, not that the engine was checked."""
    from advalidate.fuzz.cli import incomplete_reason

    class Campaign:
        def summary(self) -> dict:
            return {"verdicts": {}, "incidents": [], "programs": 0, "workers_started": 0, "seconds_requested": 4.0,
                    "out": "o"}  # fmt: skip

    assert "no worker process finished starting within --seconds 4" in incomplete_reason(Campaign())


def test_incidents_make_the_exit_status_3_even_when_programs_pass(tmp_path: Path, engines_dir: Path):
    """An engine that is correct but kills its process on about every other program: the programs it
    survives pass, the others are crash incidents, and the campaign does not exit 0."""
    out = tmp_path / "o"
    res = fuzz("--seconds", "600", "--programs", "6", "--seed", "4", "--workers", "1", "--oracle", "fd", "--engine",
               "cli_fuzz_engines:Flaky", "--out", str(out), paths=(engines_dir,))  # fmt: skip
    assert res.returncode == 3, res.stdout + res.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["exit_status"] == 3 and summary["findings"] == []
    assert {i["kind"] for i in summary["incidents"]} <= {"crash"}
    if summary["incidents"]:
        assert "crash" in res.stderr and "incidents" in res.stderr


# ---- --resume on a damaged campaign directory ----------------------------------------------------------


def valid_state() -> dict:
    return {
        "version": 1,
        "config": {"seed": 5, "engines": ["tape"], "oracles": ["fd"], "max_size": None},
        "next_index": 0,
        "elapsed": 0.0,
        "programs": 0,
        "skipped": 0,
        "errors": 0,
        "busy_seconds": 0.0,
        "nodes_total": 0,
        "nodes_hist": {},
        "verdicts": [],
        "coverage": {},
        "number": 0,
        "findings": [],
    }


@pytest.mark.parametrize(
    "change",
    [
        lambda st: [],
        lambda st: {},
        lambda st: "state",
        lambda st: {**st, "config": {}},
        lambda st: {**st, "config": None},
        lambda st: {k: v for k, v in st.items() if k != "programs"},
        lambda st: {**st, "next_index": "zero"},
        lambda st: {**st, "verdicts": [["tape", "fd"]]},
        lambda st: {**st, "nodes_hist": []},
        lambda st: {**st, "findings": [{"bogus": 1}]},
        lambda st: {**st, "findings": [7]},
    ],
    ids=[
        "list",
        "empty",
        "string",
        "empty-config",
        "null-config",
        "no-programs",
        "string-counter",
        "short-verdict",
        "list-histogram",
        "bogus-finding",
        "number-finding",
    ],  # fmt: skip
)
def test_resume_with_a_state_of_the_wrong_shape(tmp_path: Path, capsys, change):
    out = tmp_path / "o"
    out.mkdir()
    (out / "state.json").write_text(json.dumps(change(valid_state())))
    assert main(["fuzz", "--resume", "--out", str(out), "--seconds", "1", "--progress", "quiet"]) == 2
    (line,) = no_traceback(capsys.readouterr().err)
    assert line.startswith(f"advalidate fuzz: {out / 'state.json'}: ")
    assert "not a campaign state that --resume can continue" in line


@pytest.mark.parametrize("where", ["cwd", "out"])
def test_resume_never_imports_a_plugin_named_in_the_state(tmp_path: Path, where: str):
    """A campaign directory someone sends you may name a plug-in engine placed beside it (or in the
    directory you run from): --resume refuses it unless you name the engine yourself (issue 24)."""
    out, cwd = tmp_path / "o", tmp_path / "cwd"
    out.mkdir()
    cwd.mkdir()
    marker = tmp_path / "imported"
    st = valid_state()
    st["config"]["engines"] = ["tape", "evil_engine:E"]
    (out / "state.json").write_text(json.dumps(st))
    code = f"open({str(marker)!r}, 'w').write('ran')\nfrom advalidate.impl.seed000.tape import TapeStage as E\n"
    (out if where == "out" else cwd).joinpath("evil_engine.py").write_text(code)
    e = env(out) if where == "out" else env()
    res = subprocess.run(
        [sys.executable, "-m", "advalidate.cli", "fuzz", "--resume", "--out", str(out), "--seconds", "600",
         "--programs", "1", "--progress", "quiet"],
        capture_output=True, text=True, timeout=300, env=e, cwd=cwd,
    )  # fmt: skip
    assert res.returncode == 2, res.stdout + res.stderr
    (line,) = no_traceback(res.stderr)
    assert "--resume never imports code named in a campaign directory" in line
    assert "'evil_engine:E'" in line and "--engine tape --engine evil_engine:E" in line
    assert not marker.exists()


def test_resume_runs_a_plugin_the_user_names(tmp_path: Path, engines_dir: Path):
    out = tmp_path / "o"
    out.mkdir()
    st = valid_state()
    st["config"]["engines"] = ["cli_fuzz_engines:Slow"]
    (out / "state.json").write_text(json.dumps(st))
    res = fuzz("--resume", "--out", str(out), "--seconds", "600", "--programs", "1", "--workers", "1",
               "--engine", "cli_fuzz_engines:Slow", paths=(engines_dir,))  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    assert json.loads((out / "summary.json").read_text())["programs"] == 1


def test_resume_warns_about_and_repairs_a_corrupt_finding_json(tmp_path: Path):
    out = tmp_path / "o"
    # Bounded by program counts (program 39 of seed 7 fails for BrokenSin), never by seconds.
    first = fuzz("--seconds", "600", "--programs", "40", "--seed", "7", "--workers", "1", "--oracle", "fd",
                 "--engine", "broken_engines:BrokenSin", "--out", str(out), paths=(TESTS,))  # fmt: skip
    assert first.returncode == 1, first.stdout + first.stderr
    dirs = sorted(p.parent for p in out.glob("*/finding.json"))
    assert dirs
    good = json.loads((dirs[0] / "finding.json").read_text())
    (dirs[0] / "finding.json").write_text(json.dumps(good)[:40])  # truncated
    stray = out / "f999-stray"
    stray.mkdir()
    (stray / "finding.json").write_text("{not json")
    again = fuzz("--resume", "--seconds", "600", "--programs", "40", "--out", str(out), "--engine",
                 "broken_engines:BrokenSin", paths=(TESTS,))  # fmt: skip
    assert again.returncode == 1, again.stdout + again.stderr
    no_traceback(again.stderr)
    assert f"warning: {dirs[0] / 'finding.json'} is corrupt" in again.stderr
    assert f"{dirs[0] / 'finding.json'} rewritten from the campaign state" in again.stderr
    assert f"warning: {stray / 'finding.json'} is corrupt" in again.stderr
    assert f"warning: {stray} is not a finding of this campaign" in again.stderr
    repaired = json.loads((dirs[0] / "finding.json").read_text())
    assert repaired["engine"] == good["engine"] and repaired["oracle"] == good["oracle"]


# ---- SIGTERM and memory ----------------------------------------------------------------------------


def saved_programs(out: Path) -> int:
    try:
        return int(json.loads((out / "state.json").read_text())["programs"])
    except (OSError, ValueError, KeyError):
        return -1


def wait_for(condition, proc: subprocess.Popen, what: str) -> None:
    """Until `condition()`: the test waits for events, not for a time. A campaign that ends first
    (its own --seconds is the safety net) fails the test."""
    while not condition():
        assert proc.poll() is None, (f"the campaign ended before it {what}", proc.communicate())
        time.sleep(0.2)


def children(pid: int) -> list[int]:
    """The worker processes of campaign `pid` (Linux /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == pid and b"spawn_main" in cmdline:
            out.append(int(stat.parent.name))
    return out


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the workers through /proc")
def test_sigterm_to_the_process_group_stops_cleanly(tmp_path: Path, engines_dir: Path):
    """`kill -TERM -PGID` (what a CI runner or systemd does) reaches the workers too, in the middle
    of their programs: that is the campaign being stopped, not workers crashing. Here the workers'
    copies of the signal come first (the order a group signal may well arrive in), then the
    campaign's: no incident, everything written, and the programs checked passed: exit status 0."""
    out = tmp_path / "o"
    proc = subprocess.Popen(
        [sys.executable, "-m", "advalidate.cli", "fuzz", "--seconds", "600", "--seed", "3", "--workers", "2",
         "--engine", "cli_fuzz_engines:Slow", "--oracle", "fd", "--out", str(out), "--progress", "quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(engines_dir), start_new_session=True,
    )  # fmt: skip
    try:
        wait_for(lambda: saved_programs(out) >= 2, proc, "saved a checked program")
        workers = children(proc.pid)
        assert len(workers) == 2
        for pid in workers:
            os.kill(pid, signal.SIGTERM)
        done = saved_programs(out)
        wait_for(lambda: saved_programs(out) > done, proc, "went on after its workers got SIGTERM")
        os.killpg(proc.pid, signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped"] == "terminated"
    assert summary["incidents"] == [], summary["incidents"]
    assert proc.returncode == 0, stdout + stderr
    assert (out / "report.html").exists() and (out / "state.json").exists()
    assert "Traceback" not in stderr


PROBE = """\
import json, sys
sys.path.insert(0, sys.argv[1])
from cli_fuzz_engines import Hungry
from advalidate.fuzz.worker import WorkerConfig, limit_memory, run_program
cfg = WorkerConfig(campaign_seed=1, engines=[], oracles=["fd"], memory_limit=200)
engines = [Hungry()]
limit_memory(200, engines)
print(json.dumps(run_program(cfg, engines, 0, [])))
"""


def test_a_worker_over_its_memory_limit_reports_an_incident(engines_dir: Path):
    done = subprocess.run([sys.executable, "-c", PROBE, str(engines_dir)], capture_output=True, text=True,
                          timeout=300, env=env())  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["error"] == "out of memory (--memory-limit 200 MB): engine hungry raised MemoryError"
    assert "program" in result and "input" in result  # kept for the incident directory


def test_memory_limit_in_a_campaign(tmp_path: Path, engines_dir: Path):
    out = tmp_path / "o"
    res = fuzz("--seconds", "600", "--programs", "2", "--seed", "2", "--workers", "1", "--oracle", "fd",
               "--memory-limit", "200", "--engine", "cli_fuzz_engines:Hungry", "--out", str(out),
               paths=(engines_dir,))  # fmt: skip
    assert res.returncode == 3, res.stdout + res.stderr
    no_traceback(res.stderr)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["findings"] == [] and summary["verdicts"]["pass"] == 0
    assert len(summary["incidents"]) == 2
    for incident in summary["incidents"]:
        assert incident["kind"] == "out of memory" and "out of memory" in incident["detail"]
        assert (out / incident["dir"]).name.endswith("-out-of-memory")


def test_a_program_past_the_memory_budget_is_an_out_of_memory_incident(tmp_path: Path, engines_dir: Path):
    out = tmp_path / "o"
    res = fuzz("--seconds", "600", "--programs", "2", "--seed", "2", "--workers", "1", "--oracle", "fd",
               "--engine", "cli_fuzz_engines:OverBudget", "--out", str(out), paths=(engines_dir,))  # fmt: skip
    assert res.returncode == 3, res.stdout + res.stderr
    no_traceback(res.stderr)
    summary = json.loads((out / "summary.json").read_text())
    assert [i["kind"] for i in summary["incidents"]] == ["out of memory"] * 2
    assert "memory budget exceeded" in summary["incidents"][0]["detail"]
