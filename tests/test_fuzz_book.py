"""The book of findings alone (`fuzz/book.py`): no campaign, no workers, no state.json.

Failures go in as a checked program's result (`Book.on_failures`), shrinking is played by hand
(`shrink_task`, `on_shrunk`), and what comes out is read from the book and from the finding
directories it writes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from advalidate.fuzz.book import MAX_PENDING_PER_CLASS, Book, BookRules, Engines

SIN = "\\(x : R) -> sin x\n"


def fail(oracle: str = "fd", **kw: Any) -> dict[str, Any]:
    d = {"engine": "e", "oracle": oracle, "status": "fail", "expected": "(0.5)", "actual": "(0.25)"}
    d["detail"] = "⟨gradient, v⟩ = 0.25 but the finite-difference directional derivative is 0.5"
    return d | kw


def program(index: int, constructs: list[str], failures: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "index": index,
        "seed": 100 + index,
        "size": 20,
        "nodes": 20,
        "constructs": constructs,
        "failures": [fail()] if failures is None else failures,
        "program": "\\(x : R) -> sin (cos x)\n",
        "input": "0.5",
    }


def shrunk(ident: int, text: str, nodes: int = 4) -> dict[str, Any]:
    return {
        "id": ident,
        "reproduced": True,
        "program": text,
        "input": "1.0",
        "nodes_after": nodes,
        "steps": 2,
        "tried": 9,
        "seconds": 0.25,
        "fixpoint": True,
        "verdict": fail(),
    }


@pytest.fixture()
def book(tmp_path: Path) -> Book:
    engines = Engines(names=["e"], specs=["e"], paths={"e": None}, objects={})
    return Book(tmp_path, BookRules(campaign_seed=5), engines)


def dirs(book: Book) -> list[str]:
    return sorted(p.name for p in book.out.iterdir() if (p / "finding.json").is_file())


def test_two_shrunk_failures_with_the_same_key_merge_into_one_finding_with_two_occurrences(book: Book) -> None:
    book.on_failures(program(0, ["lambda", "sin", "cos", "app", "var"]), 1.0)
    book.on_failures(program(1, ["lambda", "cos", "app", "var"]), 2.0)  # uses no `sin`: not explained by f001
    assert [f.name for f in book.findings] == ["pending-001-e", "pending-002-e"] == dirs(book)
    book.on_shrunk(shrunk(1, SIN, nodes=5))
    assert [f.number for f in book.findings] == [1, 0]  # the second is not covered: still a candidate
    book.on_shrunk(shrunk(2, SIN, nodes=3))  # the same key (e, sin, wrong gradient): the same bug
    (f,) = book.findings
    assert f.number == 1 and f.occurrences == 2 and f.oracle_counts == {"fd": 2}
    assert f.duplicate_seeds == [101] and f.nodes_after == 3 and f.seed == 101  # the smaller example is kept
    assert dirs(book) == ["f001-e-sin"] and book.number == 1
    info = json.loads((book.out / "f001-e-sin" / "finding.json").read_text())
    assert info["occurrences"] == 2 and info["campaign_seed"] == 5 and info["sizes"]["after"] == 3


def test_findings_are_numbered_without_gaps_and_a_settled_finding_explains_later_failures(book: Book) -> None:
    crash = fail(detail="engine e crashed: KeyError: 7", expected=None, actual=None)
    book.on_failures(program(0, ["lambda", "sin", "app", "var"]), 1.0)
    book.on_failures(program(1, ["lambda", "exp", "app", "var"], [crash]), 1.0)
    book.on_shrunk(shrunk(2, "\\(x : R) -> exp x\n"))
    book.on_shrunk(shrunk(1, SIN))
    assert sorted((f.number, f.name) for f in book.findings) == [(1, "f001-e-exp"), (2, "f002-e-sin")]
    book.on_failures(program(2, ["lambda", "sin", "let", "app", "var"], [fail(), fail("forward")]), 3.0)
    sin = next(f for f in book.findings if f.number == 2)
    assert len(book.findings) == 2 and sin.occurrences == 2 and sin.oracle_counts == {"fd": 2, "forward": 1}
    # counted in memory at once, on disk at the next flush (with summary.json)
    assert json.loads((book.out / sin.name / "finding.json").read_text())["occurrences"] == 1
    book.flush()
    assert json.loads((book.out / sin.name / "finding.json").read_text())["occurrences"] == 2


def test_failures_of_one_class_wait_while_its_candidates_shrink(book: Book) -> None:
    for i in range(MAX_PENDING_PER_CLASS + 3):
        book.on_failures(program(i, ["lambda", "sin", "cos", "app", "var"]), 1.0)
    assert len(book.findings) == MAX_PENDING_PER_CLASS and len(book.waiting) == 3
    book.on_shrunk(shrunk(1, SIN))  # the waiting ones use `sin`: occurrences of f001, and so is candidate 2
    (f,) = book.findings
    assert not book.waiting and f.occurrences == MAX_PENDING_PER_CLASS + 3


def test_a_shrink_task_is_the_queued_candidate_and_a_lost_shrink_settles_it_as_it_is(book: Book) -> None:
    book.on_failures(program(0, ["lambda", "sin", "cos", "app", "var"]), 1.0)
    task = book.shrink_task(7.5)
    assert task is not None and task["id"] == 1 and task["budget"] == 7.5 and task["check_seed"] == 100
    assert book.shrinking == {1} and book.findings[0].status == "shrinking"
    book.on_shrink_lost(1, "timeout", 9.0)
    (f,) = book.findings
    assert not book.shrinking and f.status == "shrink-timeout" and f.number == 1
    assert f.culprit == ["cos", "sin"] and f.name == "f001-e-sin-cos"  # blamed on what its program uses


def test_exitfirst_holds_further_failures_back_and_reports_the_settled_one(tmp_path: Path) -> None:
    settled: list[int] = []
    engines = Engines(names=["e"], specs=["e"], paths={"e": None})
    book = Book(tmp_path, BookRules(exitfirst=True), engines, on_settled=lambda: settled.append(len(book.findings)))
    book.on_failures(program(0, ["lambda", "sin", "app", "var"]), 1.0)
    crash = fail(detail="engine e crashed: KeyError: 7", expected=None, actual=None)
    book.on_failures(program(1, ["lambda", "exp", "app", "var"], [crash]), 1.0)
    assert len(book.findings) == 1 and len(book.waiting) == 1
    book.on_shrunk(shrunk(1, SIN))
    assert settled == [1] and len(book.waiting) == 1  # not promoted: the campaign stops here


def test_at_most_max_findings_per_engine_further_failures_only_counted(tmp_path: Path) -> None:
    book = Book(tmp_path, BookRules(max_findings_per_engine=1), Engines(names=["e"], specs=["e"]))
    book.on_failures(program(0, ["lambda", "sin", "app", "var"]), 1.0)
    crash = fail(detail="engine e crashed: KeyError: 7", expected=None, actual=None)
    book.on_failures(program(1, ["lambda", "exp", "app", "var"], [crash]), 1.0)
    assert len(book.findings) == 1 and book.unclassified == {"e: crash (KeyError)": 1}
