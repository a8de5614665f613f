"""`advalidate sweep … --scheduler` on Dask distributed (issue #38 item 4; runner/cluster_tasks.py).

What must hold: a sweep on a LocalCluster (loopback, two single-threaded worker processes) checks
the same records with the same verdicts and reports the same findings as the local pool; a Dask
worker killed in the middle of an op costs no checked record, and none is written twice; an op past
--op-timeout is an incident whose checked records are kept; an interrupted sweep keeps what it
checked and --resume checks only the ops not done, each record once. Bad --scheduler values exit 2
and leave --out as it was. The first tests need no cluster, the others real torch ops.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import sys
from pathlib import Path
from typing import Any

import pytest

from advalidate.cli import main
from advalidate.runner import cluster_tasks as CT
from advalidate.runner.pool import Event

TESTS = Path(__file__).parent
if str(TESTS) not in sys.path:  # sweep_dask_helpers, for the client and (inherited) the cluster's workers
    sys.path.insert(0, str(TESTS))

#: Cheap ops; nn.functional.hardsigmoid's float64 slope is float32(1/6): a finding in reverse and
#: forward mode (reports/findings/torch-hardsigmoid-float32-slope).
OPS = ["sin", "exp", "tanh", "nn.functional.hardsigmoid"]


# ---- without a cluster ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, why",
    [
        ("local:0", "positive number of worker processes"),
        ("local:x", "positive number of worker processes"),
        ("tcp://", "not a Dask scheduler address"),
        ("tcp://127.0.0.1:1", "cannot reach the Dask scheduler at tcp://127.0.0.1:1"),
    ],
)
def test_bad_scheduler_values_exit_2_and_leave_out_as_it_was(
    value: str, why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    args = ["sweep", "torch", "--op", "sin", "--dtype", "float64", "--transform", "eager", "--out", str(out)]
    assert main([*args, "--scheduler", value, "--progress", "quiet"]) == 2
    err = capsys.readouterr().err
    assert why in err and "Traceback" not in err
    assert not out.exists()


def test_without_dask_the_flag_names_the_extra_and_touches_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` fails
    out = tmp_path / "o"
    args = ["sweep", "torch", "--scheduler", "local:2", "--out", str(out), "--progress", "quiet"]
    assert main([*args, "--dtype", "float64", "--transform", "eager"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'advalidate[dask]'" in err and "Traceback" not in err
    assert not out.exists()


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
    """What TaskPool asks of a Dask client, with tasks that finish when the test says."""

    def __init__(self) -> None:
        self.futures: list[tuple[FakeFuture, tuple]] = []

    def nthreads(self) -> dict[str, int]:
        return {"tcp://w1": 1, "tcp://w2": 1}

    def submit(self, fn: Any, *args: Any, key: str, pure: bool) -> FakeFuture:
        fut = FakeFuture(key)
        self.futures.append((fut, args))
        return fut

    def run(self, fn: Any, *args: Any, **kw: Any) -> dict[str, Any]:
        return {"tcp://w1": fn(*args)}

    def subscribe_topic(self, topic: str, handler: Any) -> None:
        self.handler = handler

    def cancel(self, futures: list[Any]) -> None:
        pass

    def close(self) -> None:
        pass


def test_the_pool_passes_each_record_on_once_resubmits_and_drops_late_replies(monkeypatch: pytest.MonkeyPatch) -> None:
    client = FakeClient()
    monkeypatch.setattr(CT, "connect", lambda scheduler: (client, None))
    pool = CT.TaskPool("tcp://fake:8786").bind(cfg=None, target=None)
    slots = pool.idle()
    assert len(slots) == 2  # one op per worker thread
    pool.submit(slots[0], ("op", "a"), 30.0)
    pool.submit(slots[1], ("op", "b"), 30.0)
    assert pool.idle() == [] and len(client.futures) == 2
    tag_a = client.futures[0][1][-1]

    def streamed(tag: int, n: int) -> None:
        client.handler((0.0, {"tag": tag, "n": n, "payload": pickle.dumps({"rec": n})}))

    streamed(tag_a, 0)
    streamed(tag_a, 1)
    streamed(tag_a, 1)  # the same reply twice: passed on once
    assert [(e.kind, e.task, e.payload) for e in pool.poll(0.0)] == [
        ("partial", ("op", "a"), {"rec": 0}),
        ("partial", ("op", "a"), {"rec": 1}),
    ]
    # Its worker died: the task fails and is sent again; the rerun's replies seen before are dropped.
    client.futures[0][0].finish(error=OSError("worker lost"))
    assert pool.poll(0.0) == [] and len(client.futures) == 3
    streamed(tag_a, 0)
    streamed(tag_a, 2)
    assert [e.payload for e in pool.poll(0.0)] == [{"rec": 2}]
    # Its result holds every reply: those not streamed yet come before its end.
    done = Event("done", payload={"op": "a", "records": 4}, seconds=1.0)
    client.futures[2][0].finish({"partials": [{"rec": n} for n in range(4)], "event": done})
    assert [(e.kind, e.payload) for e in pool.poll(0.0)] == [
        ("partial", {"rec": 3}),
        ("done", {"op": "a", "records": 4}),
    ]
    streamed(tag_a, 4)  # late, after its task's end: dropped
    assert pool.poll(0.0) == [] and [s.task for s in pool.busy()] == [("op", "b")]
    # A task that keeps failing is a crash after MAX_RESUBMITS more tries.
    for _ in range(CT.MAX_RESUBMITS + 1):
        [fut_b, *_] = [f for f, args in reversed(client.futures) if args[3] == ("op", "b")]
        fut_b.finish(error=OSError("worker lost"))
        got = pool.poll(0.0)
    assert [(e.kind, e.task) for e in got] == [("crash", ("op", "b"))]
    assert "failed 4 times: OSError: worker lost" in got[0].payload["error"]
    assert pool.busy() == [] and len(pool.idle()) == 2
    pool.close()
    assert pool.client is None


def test_a_lost_scheduler_ends_the_sweep_with_what_was_checked_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("expecttest")  # torch's OpInfo database names the ops
    from advalidate.runner import cluster

    client = FakeClient()

    def submit(*args: Any, **kw: Any) -> Any:
        raise OSError("connection closed")

    client.submit = submit  # type: ignore[method-assign]
    monkeypatch.setattr(CT, "connect", lambda scheduler: (client, None))
    monkeypatch.setattr(cluster, "refused", lambda scheduler: None)  # as if a scheduler listened there
    out = tmp_path / "o"
    args = ["sweep", "torch", "--op", "sin", "--dtype", "float64", "--transform", "eager", "--out", str(out)]
    assert main([*args, "--scheduler", "tcp://127.0.0.1:8786", "--progress", "quiet"]) == 3  # nothing judged
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped"].startswith("lost the Dask scheduler at tcp://127.0.0.1:8786 (connection closed)")
    assert "Traceback" not in capsys.readouterr().err


# ---- on a LocalCluster, real torch ops ----------------------------------------------------------


class Quiet:
    """A progress display that shows nothing; `stop_at` records: Ctrl-C (KeyboardInterrupt) there."""

    def __init__(self, stop_at: int | None = None) -> None:
        self.stop_at = stop_at

    def start(self, lines: list[str]) -> None:
        self.lines = lines

    def update(self, snap: dict[str, Any]) -> None:
        if self.stop_at is not None and snap["programs"] >= self.stop_at and not snap["finishing"]:
            self.stop_at = None
            raise KeyboardInterrupt

    def note(self, text: str) -> None:
        pass

    def stop(self) -> None:
        pass


def sweep(out: Path, scheduler: str | None, ops: list[str] = OPS, **kw: Any) -> dict[str, Any]:
    from advalidate.sweep.campaign import SweepOptions, run_sweep

    opts = SweepOptions(library="torch", out=str(out), ops=ops, samples=1, scheduler=scheduler, workers=2)
    opts.dtypes, opts.transforms = ["float64"], ["eager"]  # the float64 eager sweep
    progress = kw.pop("progress", None) or Quiet()
    for key, value in kw.items():
        setattr(opts, key, value)
    return run_sweep(opts, progress)


def rows(out: Path) -> dict[str, tuple[str, ...]]:
    """The records of results.jsonl: identity -> each mode's verdict; asserts none is there twice."""
    from advalidate.sweep.campaign import record_key

    got: dict[str, tuple[str, ...]] = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        if "op_done" not in row:
            key = record_key(row)
            assert key not in got, f"written twice: {key}"
            got[key] = tuple(f"{r['mode']}:{r['status']}:{r['known']}" for r in row["results"])
    return got


def findings(s: dict[str, Any]) -> list[tuple[str, str, str, int]]:
    return sorted((f["op"], f["mode"], f["kind"], f["occurrences"]) for f in s["findings"])


@pytest.fixture(scope="module")
def cluster() -> Any:
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("expecttest")  # torch's OpInfo database needs it
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        silence_logs=logging.ERROR,
    ) as c:
        yield c


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    pytest.importorskip("expecttest")
    out = tmp_path_factory.mktemp("local") / "o"
    return out, sweep(out, None)


def test_a_sweep_on_dask_checks_and_finds_what_the_local_pool_does(
    cluster: Any, local_run: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    local_out, local = local_run
    d = sweep(tmp_path / "o", cluster.scheduler_address)
    assert rows(tmp_path / "o") == rows(local_out)
    for key in ("ops_checked", "records", "samples", "verdicts", "incidents", "ops"):
        assert d[key] == local[key], key
    assert findings(d) == findings(local)
    assert ("nn.functional.hardsigmoid", "reverse", "wrong") in {f[:3] for f in findings(d)}
    assert d["incidents"] == [] and d["stopped"] == "all ops checked"
    assert d["options"]["scheduler"] == cluster.scheduler_address
    assert sorted(p.name for p in (tmp_path / "o" / "findings").iterdir()) == sorted(
        p.name for p in (local_out / "findings").iterdir()
    )


def test_a_killed_worker_loses_no_record_and_an_op_past_its_deadline_keeps_its_records(
    cluster: Any, local_run: tuple[Path, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sweep_dask_helpers as H
    from distributed import Client

    from advalidate.sweep import worker

    local_out, _ = local_run
    mark = tmp_path / "killed"
    monkeypatch.setattr(worker, "sweep_worker_main", H.troubled_worker_main)
    with Client(cluster) as client:
        before = set(client.run(os.getpid).values())
        client.run(H.set_env, H.KILL_ENV, str(mark))
        try:
            s = sweep(tmp_path / "o", cluster.scheduler_address, ops=["sin", "exp", "tanh"], op_timeout=20.0)
        finally:
            client.run(H.set_env, H.KILL_ENV, None)
        client.wait_for_workers(2, timeout=600)  # a safety net: the nanny replaces the worker
        after = set(client.run(os.getpid).values())
    killed = int(mark.read_text())
    assert killed in before and killed not in after  # a worker died, and the nanny replaced it
    got, want = rows(tmp_path / "o"), rows(local_out)
    kept = {k: v for k, v in want.items() if json.loads(k)["op"] in ("sin", "exp")}
    assert {k: v for k, v in got.items() if json.loads(k)["op"] != "tanh"} == kept  # nothing lost, nothing twice
    tanh = [k for k in got if json.loads(k)["op"] == "tanh"]
    assert len(tanh) == 1 and tanh[0] in want  # the record it checked before it hung, kept
    assert [(i["op"], i["kind"]) for i in s["incidents"]] == [("tanh", "timeout")]
    assert s["incidents"][0]["detail"].startswith("timeout after ")  # (its seconds vary with the load)


def test_an_interrupted_sweep_keeps_its_records_and_resume_checks_only_the_ops_not_done(
    cluster: Any, local_run: tuple[Path, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sweep_dask_helpers as H

    from advalidate.sweep import worker

    local_out, _ = local_run
    ops, out = OPS[:3], tmp_path / "o"  # no finding: no repro.py to confirm, twice
    with monkeypatch.context() as m:  # paced: the interrupt lands inside an op on any machine
        m.setattr(worker, "sweep_worker_main", H.paced_worker_main)
        first = sweep(out, cluster.scheduler_address, ops=ops, progress=Quiet(stop_at=3))
    assert first["stopped"].startswith("interrupted") and first["records"] >= 3
    done_first = {json.loads(x)["op_done"] for x in (out / "results.jsonl").read_text().splitlines() if "op_done" in x}
    assert len(done_first) < len(ops)
    cut = {json.loads(k)["op"] for k in rows(out)} - done_first
    assert cut  # the records of an op the interrupt cut short are kept: resume must not write them again
    second = sweep(out, cluster.scheduler_address, ops=ops, resume=True)
    assert second["stopped"] == "all ops checked" and second["incidents"] == []
    want = {k: v for k, v in rows(local_out).items() if json.loads(k)["op"] in ops}
    assert rows(out) == want  # each record once: none lost, none checked twice
    done = [json.loads(x)["op_done"] for x in (out / "results.jsonl").read_text().splitlines() if "op_done" in x]
    assert sorted(done) == sorted(ops)  # the ops done before were not run again
