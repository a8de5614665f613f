"""docs/check_function.md's corpus table is the output of benchmarks/check_function_corpus_table.py
and matches the corpus's behaviour (issue #40 item 8): every case of the tests' corpus has its row,
and check_function's column says what tests/test_check_function_corpus.py asserts of it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytest.importorskip("torch")
pytest.importorskip("jax")
sys.path.insert(0, str(ROOT / "tests"))

import test_check_function_corpus as corpus  # noqa: E402


def table_script():
    spec = importlib.util.spec_from_file_location(
        "corpus_table", ROOT / "benchmarks" / "check_function_corpus_table.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def doc_rows() -> list[list[str]]:
    script = table_script()
    text = (ROOT / "docs" / "check_function.md").read_text()
    assert text.count(script.START) == 1 and text.count(script.END) == 1
    table = text.split(script.START)[1].split(script.END)[0]
    return [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines() if line.count("|") == 6]


def test_every_corpus_case_has_its_row_saying_what_the_corpus_asserts() -> None:
    rows = [r for r in doc_rows() if r[2] in ("wrong", "right")]
    cases = [p.values[0] for p in corpus.CASES]
    assert len(rows) == len(cases)
    for row, case in zip(rows, cases, strict=True):
        assert (row[0], row[1], row[2]) == (
            case.name.rsplit("-", 1)[0],
            case.framework,
            "wrong" if case.wrong else "right",
        )
        assert row[3] == ("**caught**" if case.wrong else "ok"), row  # test_corpus_case asserts the same


def test_the_summary_counts_the_rows() -> None:
    rows = doc_rows()
    cases = [r for r in rows if r[2] in ("wrong", "right")]
    summary = {r[0]: r[1:] for r in rows if r[0].startswith("`")}
    wrong = sum(r[2] == "wrong" for r in cases)
    right = len(cases) - wrong
    assert summary["`check_function`"][:2] == [f"{wrong}/{wrong}", f"0/{right}"]
    torch_rows = [r for r in cases if r[1] == "torch"]
    caught = sum(r[2] == "wrong" and "caught" in r[4] for r in torch_rows)
    alarms = sum(r[2] == "right" and "false alarm" in r[4] for r in torch_rows)
    n_wrong = sum(r[2] == "wrong" for r in torch_rows)
    assert summary["`gradcheck` + `gradgradcheck`"][:2] == [
        f"{caught}/{n_wrong}",
        f"{alarms}/{len(torch_rows) - n_wrong}",
    ]


def test_the_table_is_written_between_its_markers(tmp_path: Path) -> None:
    script = table_script()
    doc = tmp_path / "doc.md"
    doc.write_text(f"before\n{script.START}\nold\n{script.END}\nafter\n")
    script.write("new\n", doc)
    assert doc.read_text() == f"before\n{script.START}\nnew\n{script.END}\nafter\n"
    doc.write_text("no markers\n")
    with pytest.raises(SystemExit):
        script.write("new\n", doc)
