"""Campaigns on Dask distributed: `advalidate fuzz --scheduler` (advalidate/fuzz/dask_pool.py, issue 17).

A LocalCluster of two worker processes on the loopback interface stands in for a real cluster. What
must hold: a distributed campaign over programs 0..N-1 of a seed reports what a local campaign
reports (the same verdicts, findings and failing programs); a Dask worker killed in the middle of a
batch costs no result; a hung or crashing engine is bounded by --timeout and costs only its program;
--resume takes a distributed campaign to the same end as one local run; Ctrl-C ends the batches, the
cluster and every child process, and leaves what was found and what was still out on disk. The
first tests need no Dask.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from advalidate.cli import main
from advalidate.fuzz import CampaignConfig, run_campaign
from advalidate.fuzz.worker import program_seed, program_size

TESTS = Path(__file__).parent
ROOT = TESTS.parent
if str(TESTS) not in sys.path:  # the engines below, for the client and (inherited) the cluster's workers
    sys.path.insert(0, str(TESTS))

#: A wrong rule for `sin` (tests/broken_engines.py) and a mutant that shifts gradient leaves
#: (tests/mutants.py): each fails often, and always shrinks to one culprit.
ENGINES = ["broken_engines:BrokenSin", "mutants:ShiftedMutable"]
SEED, N = 7, 40  # programs 5, 8, 9, 13, 30, 36 and 39 of seed 7 use `cos`


def campaign(out: Path, scheduler: str | None, programs: int = N, **kw: Any) -> dict[str, Any]:
    """Programs 0..programs-1 of a campaign, judged by fd, on the cluster or on 2 local processes."""
    kw.setdefault("engines", ENGINES)
    kw.setdefault("seed", SEED)
    cfg = CampaignConfig(
        seconds=600, oracles=["fd"], out=out, progress="quiet", programs=programs, scheduler=scheduler, **kw
    )
    if scheduler is None:
        cfg.workers = 2
    _, summary = run_campaign(cfg)
    assert summary["stopped"] == "programs", summary["stopped"]
    return summary


def accounted(s: dict[str, Any]) -> Counter[tuple[str, str]]:
    """Failing programs per engine and kind, wherever the campaign counted them."""
    c: Counter[tuple[str, str]] = Counter()
    for f in s["findings"]:
        c[(f["engine"], f["kind"])] += f["occurrences"]
    for key, n in s["unclassified_failures"].items():
        engine, kind = key.split(": ", 1)
        c[(engine, kind)] += n
    for w in s["unexamined_failures"]:
        c[(w["engine"], w["kind"])] += 1
    return c


def assert_same_campaign(d: dict[str, Any], local: dict[str, Any]) -> None:
    """The same programs, verdicts and findings; every finding shrunk and settled."""
    for key in ("programs", "skipped_not_well_behaved", "verdicts", "by_engine_oracle", "coverage", "nodes_histogram"):
        assert d[key] == local[key], key
    assert d["programs"] > N // 2 and d["verdicts"]["fail"] > 0
    assert sorted(f["signature"] for f in d["findings"]) == sorted(f["signature"] for f in local["findings"])
    assert accounted(d) == accounted(local)
    assert all(f["settled"] and f["status"] == "shrunk" for f in d["findings"])
    assert d["incidents"] == local["incidents"] == []


# ---- without a cluster ----------------------------------------------------------------------------


def test_without_dask_the_flag_names_the_extra_and_touches_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "state.json").write_text("{}")
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` fails
    assert main(["fuzz", "--scheduler", "local:2", "--seconds", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "pip install 'advalidate[dask]'" in err and "Traceback" not in err
    assert (out / "state.json").read_text() == "{}"  # the campaign there is untouched


@pytest.mark.parametrize(
    "args, why",
    [
        (["--scheduler", "local:0"], "positive number of worker processes"),
        (["--scheduler", "local:"], "positive number of worker processes"),
        (["--scheduler", "tcp://"], "not a Dask scheduler address"),
        (["--scheduler", "local:2", "--workers", "2"], "--workers"),
        (["--programs", "0"], "must be positive"),
    ],
)
def test_bad_scheduler_usage_exits_2(args: list[str], why: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", "--seconds", "1", *args]) == 2
    assert why in capsys.readouterr().err


class FakeFuture:
    def __init__(self, key: str) -> None:
        self.key, self.status, self.value, self.error = key, "pending", None, None

    def add_done_callback(self, fn: Any) -> None:
        self.done = fn

    def finish(self, value: Any = None, error: BaseException | None = None) -> None:
        self.status, self.value, self.error = ("error" if error else "finished"), value, error
        self.done(self)

    def result(self) -> Any:
        return self.value

    def exception(self) -> BaseException | None:
        return self.error

    def cancel(self) -> None:
        self.status = "cancelled"


class FakeClient:
    """What DaskPool asks of a Dask client, with tasks that finish when the test says."""

    def __init__(self) -> None:
        self.futures: list[tuple[FakeFuture, list[tuple[tuple, float]]]] = []

    def nthreads(self) -> dict[str, int]:
        return {"tcp://w1": 1, "tcp://w2": 1}

    def submit(self, fn: Any, token: str, cfg: Any, tasks: list, topic: str, key: str, pure: bool) -> FakeFuture:
        fut = FakeFuture(key)
        self.futures.append((fut, tasks))
        return fut

    def run(self, fn: Any, *args: Any, **kw: Any) -> dict[str, Any]:
        return {"tcp://w1": fn(*args)}

    def subscribe_topic(self, topic: str, handler: Any) -> None:
        self.handler = handler

    def close(self) -> None:
        pass


def test_the_pool_batches_with_back_pressure_resubmits_and_drops_stale_progress(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from advalidate.fuzz import dask_pool as DP
    from advalidate.fuzz.pool import Event
    from advalidate.fuzz.worker import WorkerConfig

    client = FakeClient()
    monkeypatch.setattr(DP, "connect", lambda scheduler: (client, None))
    pool = DP.DaskPool("tcp://fake:8786", WorkerConfig(campaign_seed=1, engines=["tape"]), batch_size=4)
    # Back-pressure: two batches per worker thread, and nothing more.
    slots = pool.idle()
    assert len(slots) == 2 * 2 * 4
    for i, w in enumerate(slots):
        pool.submit(w, ("run", i), 30.0)
    assert pool.idle() == [] and pool.poll(0.0) == []
    assert [[t[0][1] for t in tasks] for _, tasks in client.futures] == [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
        [8, 9, 10, 11],
        [12, 13, 14, 15],
    ]
    # A batch's results free its slots; one whose task keeps failing is sent again, then its
    # programs are crash incidents.
    fut, tasks = client.futures[0]
    fut.finish([Event("result", payload={"index": t[0][1]}, seconds=0.01) for t in tasks])
    got = pool.poll(0.0)
    assert [(e.kind, e.task) for e in got] == [("result", ("run", i)) for i in range(4)]
    assert len(pool.idle()) == 4
    batch = client.futures[1]
    for attempt in range(DP.MAX_RESUBMITS + 1):
        fut, tasks = batch
        assert [t[0][1] for t in tasks] == [4, 5, 6, 7]
        fut.finish(error=OSError("worker lost"))
        got = pool.poll(0.0)
        if attempt < DP.MAX_RESUBMITS:
            assert got == [] and client.futures[-1] is not batch
            batch = client.futures[-1]
    assert [(e.kind, e.task) for e in got] == [("crash", ("run", i)) for i in range(4, 8)]
    assert "failed 4 times: OSError: worker lost" in got[0].payload["traceback"]
    # Shrinking progress counts while its shrink is out, not after its result.
    w = pool.idle()[0]
    pool.submit(w, ("shrink", {"id": 7}), 60.0)
    shrink_future = client.futures[-1][0]
    client.handler((0.0, {"id": 7, "nodes": 9}))
    assert [(e.kind, e.payload["nodes"]) for e in pool.poll(0.0)] == [("shrink-progress", 9)]
    shrink_future.finish([Event("shrunk", payload={"id": 7}, seconds=1.0)])
    assert [e.kind for e in pool.poll(0.0)] == ["shrunk"]
    client.handler((0.0, {"id": 7, "nodes": 12}))  # arrives after the result: it must not undo it
    assert pool.poll(0.0) == [] and [w.task[1] for w in pool.busy()] == list(range(8, 16))
    pool.close()
    assert pool.busy() == [] and pool.client is None


def test_a_package_is_shipped_as_a_zip_that_imports(tmp_path: Path) -> None:
    from advalidate.fuzz.dask_pool import _shippable

    pkg = tmp_path / "src" / "myad"
    (pkg / "__pycache__").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "engine.py").write_text("from advalidate.impl.seed000.tape import TapeStage as Engine\n")
    (pkg / "__pycache__" / "engine.cpython-311.pyc").write_bytes(b"stale")
    sys.path.insert(0, str(tmp_path / "src"))
    try:
        path = _shippable("myad", tmp_path)
    finally:
        sys.path.remove(str(tmp_path / "src"))
    assert sorted(zipfile.ZipFile(path).namelist()) == ["myad/__init__.py", "myad/engine.py"]
    code = "import myad.engine, sys; sys.exit(0 if myad.engine.Engine.name == 'tape' else 1)"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(path), str(ROOT)]))
    assert subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path).returncode == 0


# ---- on a LocalCluster ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster() -> Any:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",  # a free port: two of these run at once under pytest-xdist
        silence_logs=logging.ERROR,
    ) as c:
        yield c


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return campaign(tmp_path_factory.mktemp("local") / "o", None)


def test_a_distributed_campaign_finds_what_a_local_one_finds(
    cluster: Any, local_run: dict[str, Any], tmp_path: Path
) -> None:
    d = campaign(tmp_path / "o", cluster.scheduler_address)
    assert_same_campaign(d, local_run)
    assert d["scheduler"] == cluster.scheduler_address and d["workers"] == 2
    # The same files as a local run: a finding directory per finding, summary, state and report.
    out = tmp_path / "o"
    names = sorted(p.name for p in out.iterdir() if (p / "finding.json").exists())
    assert names == sorted(f["dir"] for f in d["findings"])
    assert {"summary.json", "state.json", "report.html"} <= {p.name for p in out.iterdir()}
    info = json.loads((out / names[0] / "finding.json").read_text())
    assert info["campaign_seed"] == SEED and info["sizes"]["after"] < info["sizes"]["before"]


KILLER = '''
import os, signal, time
from pathlib import Path

from broken_engines import BrokenSin, _uses

MARK = Path({mark!r})


class KillsItsWorkerOnce(BrokenSin):
    """broken-sin, except that the first program using `cos` kills the Dask worker running it."""

    def vjp(self, prog, x, numeric="float", **kw):
        if _uses(prog, "cos"):
            try:
                fd = os.open(MARK, os.O_CREAT | os.O_EXCL | os.O_WRONLY)  # once, whichever worker comes first
            except FileExistsError:
                pass
            else:
                os.write(fd, str(os.getppid()).encode())
                os.close(fd)
                os.kill(os.getppid(), signal.SIGKILL)  # this process's parent: the Dask worker
                time.sleep(60)
        return super().vjp(prog, x, numeric, **kw)
'''


def test_a_worker_killed_mid_batch_loses_nothing_and_the_engine_module_is_shipped(
    cluster: Any, local_run: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from distributed import Client

    from advalidate.fuzz.dask_pool import _unimportable

    mark = tmp_path / "killed"
    (tmp_path / "killer.py").write_text(KILLER.format(mark=str(mark)))
    monkeypatch.syspath_prepend(str(tmp_path))  # the client finds it; the workers do not
    with Client(cluster) as client:
        assert all(client.run(_unimportable, ["killer"]).values())
        before = set(client.run(os.getpid).values())
        engines = ["killer:KillsItsWorkerOnce", "mutants:ShiftedMutable"]
        d = campaign(tmp_path / "o", cluster.scheduler_address, engines=engines)
        client.wait_for_workers(2, timeout=600)  # a safety net: the nanny replaces the worker
        after = set(client.run(os.getpid).values())
    killed = int(mark.read_text())
    assert killed in before and killed not in after  # a worker died, and the nanny replaced it
    assert_same_campaign(d, local_run)  # its batch ran again elsewhere: nothing lost, nothing twice


def test_a_hung_program_is_bounded_by_timeout_and_a_crash_costs_only_its_program(cluster: Any, tmp_path: Path) -> None:
    from broken_engines import _uses

    from advalidate.generators import generate

    engines = ["broken_engines:Crashing", "broken_engines:Hanging"]  # die on `cos`, never answer on `exp`
    # Hanging spins: its CPU time (5 CPU s, run again once) bounds it, which load does not stretch;
    # --timeout 600 is a safety net no program that answers must beat (issue #43).
    s = campaign(
        tmp_path / "o", cluster.scheduler_address, programs=12, engines=engines, seed=4, timeout=600,
        timeout_retry=1, cpu_timeout=5,
    )  # fmt: skip
    uses: dict[int, set[str]] = {}  # programs that use `cos` or `exp`: the ones that must be incidents
    for i in range(12):  # seed 4: programs 1 and 2 use both, 10 only `exp`
        pseed = program_seed(4, i)
        case = generate(pseed, program_size(pseed, None))
        found = {kind for kind, name in (("crash", "cos"), ("timeout", "exp")) if _uses(case.program, name)}
        if found and (case.behaved is None or case.behaved[0]):
            uses[i] = found
    got = {i["index"]: i["kind"] for i in s["incidents"]}
    assert set(got) == set(uses) and all(kind in uses[i] for i, kind in got.items())
    assert set(got.values()) == {"crash", "timeout"}
    for inc in s["incidents"]:
        want = "exit code 17" if inc["kind"] == "crash" else "no answer within 5 CPU s, nor run again"
        assert want in inc["detail"]
        assert (tmp_path / "o" / inc["dir"] / "program.adv").exists()
    assert s["programs"] + s["skipped_not_well_behaved"] + len(got) == 12  # the others were checked


def test_resume_takes_a_distributed_campaign_to_the_end_of_a_local_one(
    cluster: Any, local_run: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "o"
    first = campaign(out, cluster.scheduler_address, programs=N // 2)
    assert first["programs"] + first["skipped_not_well_behaved"] == N // 2
    second = campaign(out, cluster.scheduler_address, resume=True)
    assert second["sessions"] == 2
    assert_same_campaign(second, local_run)


def test_ctrl_c_cancels_the_batches_and_writes_what_was_found(tmp_path: Path) -> None:
    psutil = pytest.importorskip("psutil")
    pytest.importorskip("distributed")
    out = tmp_path / "o"
    args = ["fuzz", "--scheduler", "local:2", "--seconds", "600", "--programs", "100000", "--seed", "3"]
    args += ["--engine", ENGINES[0]]  # ended by Ctrl-C, not by the count or the time box
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(TESTS)]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "advalidate.cli", *args, "--oracle", "fd", "--out", str(out), "--progress", "plain"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        # Waits for the event, not for a time: a campaign that ends first (its --seconds 600 is the
        # safety net) fails the test.
        while not any(out.glob("f001-*/finding.json")):
            assert proc.poll() is None, ("the campaign ended without a finding", proc.communicate())
            time.sleep(0.2)
        children = psutil.Process(proc.pid).children(recursive=True)
        assert len(children) >= 4  # two Dask workers, each with the child that runs its programs
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal sends it: to the whole process group
        stdout, stderr = proc.communicate(timeout=600)  # safety nets, not time limits
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 1, stdout + stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    _, alive = psutil.wait_procs(children, timeout=120)
    assert not alive  # workers and their children are gone
    summary = json.loads((out / "summary.json").read_text())
    state = json.loads((out / "state.json").read_text())
    assert summary["stopped"] == "interrupted" and summary["findings"] and (out / "report.html").exists()
    # Every program handed out was either counted or is waiting in state.json for --resume.
    retry = state["retry"]
    assert len(set(retry)) == len(retry) and all(0 <= i < state["next_index"] for i in retry)
    assert state["programs"] + state["skipped"] + len(retry) == state["next_index"]
    # ... and --resume (here on this machine's own pool) checks exactly those.
    resume = ["fuzz", "--resume", "--out", str(out), "--workers", "1", "--programs", str(state["next_index"])]
    again = main([*resume, "--engine", ENGINES[0]])  # a plug-in: named by the user, never by state.json
    assert again == 1
    after = json.loads((out / "state.json").read_text())
    assert after["retry"] == [] and after["next_index"] == state["next_index"]
    assert after["programs"] + after["skipped"] == state["next_index"]


@pytest.mark.slow
def test_the_benchmark_runs_and_writes_its_figures(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    out = tmp_path / "b.json"
    args = ["--programs", "20", "--workers", "1", "--batches", "4", "--json", str(out)]
    script = ROOT / "benchmarks" / "distributed.py"
    res = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    doc = json.loads(out.read_text())
    assert [(r["pool"], r["batch"]) for r in doc["runs"]] == [
        ("local pool (1)", None),
        ("local:1", "adaptive"),
        ("local:1", 4),
    ]
    assert all(r["programs"] > 10 and r["steady_programs_per_second"] > 0 for r in doc["runs"])
    assert "overhead_cpu_ms_per_program" in doc["runs"][1] and doc["on_paper"]["by_batch"]["8"]
