"""The memory budget (issue 24, point 1): a small program cannot make evaluation, an engine or an
oracle hold more reals at once than `--max-reals`; past it, one clear message and exit status 2,
never numpy's allocation failure, a traceback or exit status 1."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advalidate.cli import main
from advalidate.cli_args import known_names
from advalidate.impl import engine
from advalidate.lang import limits
from advalidate.lang.errors import MemoryBudgetError
from advalidate.lang.program import evaluate, parse


def nested_sums(depth: int, width: int = 2) -> str:
    """`depth` nested `sumOuter (build1 width (\\i -> ...))` over a scalar input: every array has
    `width` elements, the bulk evaluation of the nest holds width^depth reals at once."""
    e = "x"
    for k in range(depth):
        e = f"sumOuter (build1 {width} (\\i{k} -> {e}))"
    return f"-- input: 1.0\n\\(x : R) -> {e}\n"


@pytest.fixture
def budget():
    yield limits.set_max_reals
    limits.set_max_reals(None)


@pytest.mark.parametrize("depth", [31, 40])
@pytest.mark.parametrize("command", [["run"], ["grad"], ["check"]])
def test_a_memory_bomb_is_refused_with_exit_status_2(depth, command, tmp_path, capsys):
    f = tmp_path / "bomb.adv"
    f.write_text(nested_sums(depth))
    assert main([*command, str(f)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Unable to allocate" not in err
    assert "memory budget exceeded" in err and f"{2**depth} reals at once" in err


#: The stages of §5-§8 differentiate no array program (their cotangents are trees of the input);
#: every other engine must take the nest: a new NotImplementedError from one of them is a failure.
DECLINE_ARRAYS = {"naive", "staged", "cayley", "sparse"}


def test_the_engines_that_may_decline_arrays_exist_and_are_few():
    engines = set(known_names()["engines"])
    assert DECLINE_ARRAYS < engines and len(engines - DECLINE_ARRAYS) >= 8


@pytest.mark.parametrize("name", known_names()["engines"])
def test_every_engine_stays_within_the_budget_or_refuses(name):
    """An engine either differentiates the 40-deep nest without holding 2^40 reals (seed 004's bot
    stage sums a build of a constant as a product) or refuses it with the budget's error; only the
    stages without arrays decline it, and say why."""
    prog = parse(nested_sums(40))
    if name in DECLINE_ARRAYS:
        with pytest.raises(NotImplementedError, match="does not differentiate array programs"):
            engine(name).vjp(prog, 1.0)
        return
    try:
        _, back = engine(name).vjp(prog, 1.0)
        assert back(1.0) == float(2**40)
    except MemoryBudgetError as exc:
        assert "reals at once" in str(exc)


@settings(max_examples=25, deadline=None)
@given(depth=st.integers(1, 12), width=st.integers(1, 3), limit=st.integers(1, 5000))
def test_the_budget_refuses_exactly_the_nests_past_it(depth, width, limit):
    prog = parse(nested_sums(depth, width))
    limits.set_max_reals(limit)
    try:
        if width**depth <= limit:
            assert evaluate(prog, 1.0) == float(width**depth)
        else:
            with pytest.raises(MemoryBudgetError, match=f"would hold {width**depth} reals"):
                evaluate(prog, 1.0)
    finally:
        limits.set_max_reals(None)


def test_held_at_once_counts_what_an_operation_holds():
    prog = parse("\\(a : Array [3, 4] R) -> sumOuter (build1 5 (\\i -> replicate 6 (a ! [0])))")
    # the nest holds 5 * 6 * 4 reals (the replicate inside the build), more than the 3 * 4 input
    assert max(limits.held_at_once(e) for e in _array_nodes(prog.core)) == 5 * 6 * 4


def _array_nodes(e):
    from advalidate.lang import core as C

    stack, out = [e], []
    while stack:
        x = stack.pop()
        if isinstance(x, C.ARRAY_NODES):
            out.append(x)
        stack.extend(C.subexprs(x))
    return out


def test_max_reals_option_and_environment(tmp_path, capsys, monkeypatch):
    # `--max-reals` writes the environment variable (for campaign workers). Setting it (empty: no
    # budget given) through monkeypatch first makes monkeypatch restore its state before the test,
    # so no later test in this process inherits a budget of 4096 reals.
    monkeypatch.setenv(limits.MAX_REALS_ENV, "")
    f = tmp_path / "n12.adv"
    f.write_text(nested_sums(12))
    assert main(["--max-reals", "4000", "run", str(f)]) == 2
    assert "budget is 4000 reals" in capsys.readouterr().err
    limits.set_max_reals(None)
    assert main(["--max-reals", "2**12", "run", str(f)]) == 0
    assert capsys.readouterr().out.strip() == str(float(2**12))
    monkeypatch.setenv(limits.MAX_REALS_ENV, "100")
    assert main(["run", str(f)]) == 2
    assert "budget is 100 reals" in capsys.readouterr().err
    for bad in ("0", "-3", "1.5", "lots", "2**99"):
        assert main(["--max-reals", bad, "run", str(f)]) == 2
        assert "argument --max-reals" in capsys.readouterr().err
    monkeypatch.setenv(limits.MAX_REALS_ENV, "lots")
    assert main(["run", str(f)]) == 2
    assert "ADVALIDATE_MAX_REALS: not a whole number" in capsys.readouterr().err


def test_an_allocation_failure_is_a_clear_error_not_a_traceback(tmp_path, capsys, monkeypatch):
    """numpy's `_ArrayMemoryError` (a MemoryError) anywhere under a command: exit 2, one line."""
    import advalidate.cli as cli

    def fail(*a, **k):
        np.empty((1 << 42,))  # numpy: "Unable to allocate 32.0 TiB"

    monkeypatch.setattr(cli, "evaluate", fail, raising=False)
    monkeypatch.setattr("advalidate.lang.program.evaluate", fail)
    f = tmp_path / "p.adv"
    f.write_text("-- input: 1.0\n\\(x : R) -> x\n")
    assert main(["run", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("advalidate: out of memory: Unable to allocate") and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_replaying_a_memory_bomb_sent_as_a_finding_exits_2(tmp_path, capsys):
    d = tmp_path / "f001-bomb"
    d.mkdir()
    (d / "program.adv").write_text(nested_sums(40))
    (d / "input.txt").write_text("1.0\n")
    (d / "finding.json").write_text(
        json.dumps({"engine": "tape", "engine_spec": "tape", "oracle": "fd", "check_seed": 0, "input": "1.0"})
    )
    assert main(["replay", str(d)]) == 2
    err = capsys.readouterr().err
    assert "memory budget exceeded" in err and "Traceback" not in err
