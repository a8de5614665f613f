"""Hostile values of `advalidate gen`'s options (issue #42 point 11): every one is refused with exit
status 2 and a message naming the option, its limit and the value given, before anything is
generated; a family's n stops where its input would pass the memory budget or where its arrays would
need more distinct magnitudes than there are."""

from __future__ import annotations

import dataclasses
import gc
import weakref
from typing import Any

import pytest

import advalidate.generators.seeded as seeded
import advalidate.generators.stats as stats
from advalidate.cli import main
from advalidate.generators.cli import MAX_COUNT, MAX_SIZE
from advalidate.generators.families import ALL_FAMILIES, DISTINCT, SIDE_MAX, _distinct

#: The families of issue #42 whose input grows with n without a limit, and the array families whose
#: input drew distinct magnitudes until none were left (an endless loop past 17,100 elements).
GROWING = ("dot", "wide_reread", "summatvec", "neural", "map_fold")
ARRAYS = ("array_dot", "conv1d", "softmax", "logsumexp", "onehot_loop", "build_elementwise", "matvec", "mlp2")


def _nothing_made(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """The family `name` with its program text and input drawing replaced by failures: a check made
    after either is a check made too late."""

    def made(*_: Any) -> Any:
        raise AssertionError(f"family {name}: something was made before n was checked")

    monkeypatch.setitem(ALL_FAMILIES, name, dataclasses.replace(ALL_FAMILIES[name], text=made, make_input=made))


def _no_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    def made(*_: Any, **__: Any) -> Any:
        raise AssertionError("a program was generated before the options were checked")

    monkeypatch.setattr(seeded, "generate", made)
    monkeypatch.setattr(stats, "generate", made)


@pytest.mark.parametrize("name", GROWING + ARRAYS)
@pytest.mark.parametrize("n", ["1000000000", "1e9"])
def test_family_n_beyond_its_limit_is_refused_before_anything_is_made(
    name: str, n: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    limit = ALL_FAMILIES[name].limit()
    assert limit is not None and limit < 10**9
    _nothing_made(monkeypatch, name)
    assert main(["gen", "--family", name, "--n", n]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "--n" in err and f"1..{limit}" in err and "1000000000" in err


@pytest.mark.parametrize("name", GROWING + ARRAYS)
def test_family_limit_is_accepted(name: str) -> None:
    """The limit itself is a valid n: its input holds at most the budget's reals (and the arrays of
    the array families at most `DISTINCT` elements each)."""
    fam = ALL_FAMILIES[name]
    limit = fam.limit()
    assert fam.reals is not None and fam.reals(limit) <= 1 << 22 < fam.reals(limit + 1) or limit == fam.max_n
    fam.source(limit)  # no error
    with pytest.raises(ValueError, match=f"1..{limit}, got {limit + 1}"):
        fam.source(limit + 1)


def test_every_family_has_a_limit() -> None:
    """`--n` is bounded for every family, not only those of the issue (a loop count in the program
    text included: a run of a million steps already ends on the step budget)."""
    assert all(f.limit() is not None for f in ALL_FAMILIES.values())


def test_array_families_need_no_more_magnitudes_than_there_are() -> None:
    assert DISTINCT == 17_100 and SIDE_MAX**2 <= DISTINCT < (SIDE_MAX + 1) ** 2
    assert ALL_FAMILIES["array_dot"].limit() == DISTINCT and ALL_FAMILIES["matvec"].limit() == SIDE_MAX
    with pytest.raises(ValueError, match="distinct"):
        _distinct(__import__("random").Random(0), DISTINCT + 1)


def test_the_memory_budget_sets_the_limit(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ADVALIDATE_MAX_REALS", "100")
    _nothing_made(monkeypatch, "dot")
    assert main(["gen", "--family", "dot", "--n", "51"]) == 2
    err = capsys.readouterr().err
    assert "1..50, got 51" in err and "102 reals" in err and "--max-reals" in err


@pytest.mark.parametrize(
    ("option", "value", "limit"),
    [
        ("--size", "1e9", MAX_SIZE),
        ("--size", "1000000000", MAX_SIZE),
        ("--size", str(MAX_SIZE + 1), MAX_SIZE),
        ("--count", "1e9", MAX_COUNT),
        ("--count", str(MAX_COUNT + 1), MAX_COUNT),
        ("--size", "1e999999999", MAX_SIZE),
        ("--size", "-3", MAX_SIZE),
        ("--count", "0", MAX_COUNT),
    ],
)
@pytest.mark.parametrize("stats_flag", [[], ["--stats"]])
def test_size_and_count_beyond_their_limit(
    option: str,
    value: str,
    limit: int,
    stats_flag: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _no_generation(monkeypatch)
    assert main(["gen", *stats_flag, option, value]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert option in err and str(limit) in err and repr(value) in err


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--size", "nan"),
        ("--size", "inf"),
        ("--size", "2.5"),
        ("--size", "0x10"),
        ("--size", "7" * 100_000),
        ("--count", "x" * 100_000),
        ("--count", "many"),
        ("--n", "-1"),
        ("--n", "1e-9"),
        ("--n", "1e30"),
        ("--seed", "1.5"),
        ("--seed", "9" * 5000),
        ("--features", "x" * 100_000),
        ("--family", "x" * 100_000),
    ],
)
def test_bad_values_are_usage_errors(
    option: str, value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _no_generation(monkeypatch)
    assert main(["gen", "--family", "dot", option, value] if option == "--n" else ["gen", option, value]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and option in err
    assert len(err) < 2000  # a long value is not echoed back whole


def test_whole_numbers_may_be_written_with_an_exponent(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gen", "--count", "2e0", "--size", "1_0"]) == 0
    assert capsys.readouterr().out.count("-- seed ") == 2


def test_stats_keep_no_case(monkeypatch: pytest.MonkeyPatch) -> None:
    """`gen --stats --count K` holds one case at a time (it held all K, ~10 KB each: a million of
    them is 10 GB)."""
    alive: list[weakref.ref] = []
    most = [0]
    real = stats.generate

    def counting(*args: Any, **kw: Any) -> Any:
        gc.collect()
        most[0] = max(most[0], sum(r() is not None for r in alive))
        case = real(*args, **kw)
        alive.append(weakref.ref(case))
        return case

    monkeypatch.setattr(stats, "generate", counting)
    st = stats.collect(0, 30, 20)
    assert len(st.sizes) == 30
    assert most[0] <= 1
