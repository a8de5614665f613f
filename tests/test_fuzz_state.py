"""The campaign's record (`fuzz/state.py`): counts, state.json and `--resume`, what a new campaign
replaces. Campaigns are prepared (engines loaded, --out taken) but never run: no worker starts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from advalidate.fuzz import state
from advalidate.fuzz.campaign import Campaign, CampaignConfig
from advalidate.fuzz.errors import CampaignError


def result(index: int, failures: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "index": index,
        "seed": 50 + index,
        "size": 12,
        "nodes": 12 + index,
        "constructs": ["lambda", "sin", "app", "var"],
        "calls": [],
        "verdicts": [("tape", "fd", "fail" if failures else "pass"), ("tape", "symbolic", "inconclusive")],
        "inconclusive": [("tape", "symbolic", "expression swell: 5000 nodes (limit 2000)")],
        "failures": failures or [],
        "program": "\\(x : R) -> sin x * x\n",
        "input": "0.5",
        "cpu": 0.02,
    }


WRONG = {"engine": "tape", "oracle": "fd", "status": "fail", "expected": "(1.0)", "actual": "(2.0)"}
WRONG["detail"] = "⟨gradient, v⟩ = 2.0 but the finite-difference directional derivative is 1.0"


def prepared(out: Path, **kw: Any) -> Campaign:
    c = Campaign(CampaignConfig(**{"seconds": 5, "engines": ["tape"], "out": out, "progress": "quiet", **kw}))
    c.prepare()
    return c


def test_a_state_saved_and_loaded_round_trips(tmp_path: Path) -> None:
    out = tmp_path / "c"
    c = prepared(out, seed=3, oracles=["fd", "symbolic"], max_size=30)
    for i in range(4):
        c.on_result(result(i, [WRONG] if i in (1, 3) else None), 0.5)
    c.on_result({"index": 4, "seed": 54, "skipped": True, "cpu": 0.0}, 0.1)
    c.on_result({"index": 5, "seed": 55, "size": 9, "error": "generator failed", "cpu": 0.0}, 0.1)
    c.scheduler.next_index, c.scheduler.timed_out = 9, {7}
    c.scheduler.retry.append(7)
    saved = c.state()
    c.save()
    c.lock.release()
    again = prepared(out, resume=True, engines=None)  # the engines come from state.json (built-in ones)
    loaded = again.state()
    again.lock.release()
    assert loaded.pop("elapsed") >= saved.pop("elapsed")
    assert loaded == saved
    assert saved["programs"] == 4 and saved["skipped"] == 1 and saved["errors"] == 1
    assert [f["name"] for f in saved["findings"]] == ["pending-001-tape", "pending-002-tape"]
    assert again.cfg.seed == 3 and again.cfg.oracles == ["fd", "symbolic"] and again.cfg.max_size == 30
    # the candidates, not shrunk yet, are queued to be shrunk again; the summaries agree
    assert list(again.book.shrink_queue) == [1, 2] and again.summary()["verdicts"] == c.summary()["verdicts"]


@pytest.mark.parametrize(
    ("path", "value", "said"),
    [
        (["programs"], "4", "field 'programs'"),
        (["retry"], [1, "2"], "field 'retry'"),
        (["config", "seed"], 3.5, "field 'config.seed'"),
        (["findings", 0, "occurrences"], "1", "findings[0]: field 'occurrences'"),
        (["findings", 0, "name"], "../victim", "findings[0]: field 'name'"),
        (["incidents", 0, "dir"], "incidents/../../x", "incidents[0].dir"),
        (["verdicts"], [["tape", "fd", "pass"]], "field 'verdicts'"),
        (["calls"], {"no bars": 1}, "calls:"),
    ],
)
def test_resume_refuses_a_mistyped_field_and_says_which(tmp_path: Path, path: list[Any], value: Any, said: str) -> None:
    out = tmp_path / "c"
    c = prepared(out, seed=3)
    c.on_result(result(0, [WRONG]), 0.5)
    c.on_result({"index": 1, "seed": 51, "size": 9, "error": "boom", "cpu": 0.0}, 0.1)
    c.save()
    c.lock.release()
    st = json.loads((out / state.STATE_JSON).read_text())
    where = st
    for key in path[:-1]:
        where = where[key]
    where[path[-1]] = value
    (out / state.STATE_JSON).write_text(json.dumps(st))
    with pytest.raises(CampaignError, match="not a campaign state that --resume can continue") as err:
        prepared(out, resume=True, engines=None)
    assert said in str(err.value)
    assert not (tmp_path / "victim").exists()


def test_resume_never_imports_a_plug_in_state_json_names(tmp_path: Path) -> None:
    out = tmp_path / "c"
    c = prepared(out, seed=3)
    c.save()
    c.lock.release()
    st = json.loads((out / state.STATE_JSON).read_text())
    st["config"]["engines"] = ["tape", "evil_module:engine"]
    (out / state.STATE_JSON).write_text(json.dumps(st))
    with pytest.raises(CampaignError, match="never imports code named in a campaign directory"):
        prepared(out, resume=True, engines=None)


def test_a_new_campaign_replaces_only_what_a_campaign_wrote(tmp_path: Path) -> None:
    out = tmp_path / "c"
    (out / "incidents" / "i001-timeout").mkdir(parents=True)
    (out / "incidents" / "i001-timeout" / "incident.json").write_text("{}")
    for name in ("f001-tape-sin", "pending-002-tape"):
        (out / name).mkdir()
        (out / name / "finding.json").write_text("{}")
    (out / "f001-mine").mkdir()  # no finding.json: not a campaign's
    (out / "notes.txt").write_text("mine")
    for name in state.OWN_FILES:
        (out / name).write_text("{}")
    state.clear_previous(out)
    assert sorted(p.name for p in out.iterdir()) == ["f001-mine", "notes.txt"]


def test_the_tally_counts_what_the_summary_reports(tmp_path: Path) -> None:
    c = prepared(tmp_path / "c", seed=1)
    try:
        for i in range(3):
            c.on_result(result(i), 0.25)
        s = c.summary()
        assert s["programs"] == 3 and s["verdicts"]["pass"] == 3 and s["verdicts"]["inconclusive"] == 3
        assert s["nodes_histogram"] == {"8-15": 3} and s["mean_nodes"] == 13.0
        assert s["inconclusive_reasons"][0]["count"] == 3 and s["exit_status"] == 0
        assert s["programs_per_busy_second"] == 4.0
        c.on_result(result(3, [WRONG]), 0.25)
        assert c.exit_status() == 1 and c.summary()["candidates_unsettled"] == 1
    finally:
        c.lock.release()
