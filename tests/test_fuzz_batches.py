"""A campaign worker hands an engine that compiles in batches (`prepare`, `batch_size`: the compile
engines, docs/transforms.md) the programs it is about to judge, a batch at a time, never past the
campaign's `--programs`."""

from __future__ import annotations

from typing import Any

from advalidate.fuzz.worker import WorkerConfig, generate_case, prepare_batches


class Batching:
    batch_size = 3

    def __init__(self) -> None:
        self.batches: list[list[Any]] = []

    def prepare(self, cases: list) -> int:
        self.batches.append(cases)
        return len(cases)


def test_the_worker_hands_over_each_program_once_in_batches_up_to_the_campaigns_count() -> None:
    cfg = WorkerConfig(campaign_seed=7, engines=[], programs=5)
    eng, plain = Batching(), object()
    prepared: dict[int, int] = {}
    for index in range(5):
        prepare_batches(cfg, [plain, eng], index, prepared)
    assert [len(b) for b in eng.batches] == [3, 2]  # programs 0-2, then 3-4 (not 5: --programs 5)
    texts = [str(prog.core) for batch in eng.batches for prog, _ in batch]
    assert texts == [str(generate_case(cfg, i).program.core) for i in range(5)]  # the programs judged


def test_an_engine_with_batches_of_one_is_not_handed_anything() -> None:
    eng = Batching()
    eng.batch_size = 1
    prepare_batches(WorkerConfig(campaign_seed=7, engines=[]), [eng], 0, {})
    assert eng.batches == []


def test_a_hook_set_to_none_has_its_default_as_every_reader_gives_it() -> None:
    """The worker reads `batch_size` and `prepare` through `impl.protocol.hook`, as the oracles and
    the campaign read theirs: a hook set to None is the protocol's default (batches of one), not an
    error of the worker alone."""
    eng = Batching()
    eng.batch_size = None  # type: ignore[assignment]
    prepare_batches(WorkerConfig(campaign_seed=7, engines=[]), [eng], 0, {})
    assert eng.batches == []
