"""A seed means the same program: the texts and inputs of samples of seeds, hashed, as recorded from
the generator at 4790389 before the speed-ups of issue #42 point 2 (one hand-over to the evaluation
thread per program, nested programs over `NEST_COST_MAX` rejected before their outermost code is
simplified). A change to what the generator draws must update these digests on purpose: campaign
findings and `advalidate gen --seed S` name programs by their seed."""

from __future__ import annotations

import hashlib

import pytest

from advalidate.generators.seeded import generate
from advalidate.lang.values import show_value

DIGESTS = {
    (50, None, 200): "6bf0424cd87ed9aaf656c98d1e469a16f97cfde63ace0e7beb3068d6eeaab5ee",
    (None, None, 200): "3f8ca0c171ba43baa42a21de0b8c18e2fe41a6476b16833c07b98b35093d79d6",
    (50, "nested", 200): "ecb8099c86312d2bcfef68ccd7f9948b244e35113307ffe0ce728f0557026da2",
    (40, "all", 100): "c7a9e6be086fc96f3091f0ad4700cfe1ceb737d49dddfe2960771720e153d254",
}


@pytest.mark.parametrize(("size", "features", "seeds"), list(DIGESTS))
def test_seeds_give_the_programs_they_gave(size: int | None, features: str | None, seeds: int) -> None:
    h = hashlib.sha256()
    for s in range(seeds):
        c = generate(s, size, features)
        h.update(f"{s}\n{c.text}\n{show_value(c.input)}\n".encode())
    assert h.hexdigest() == DIGESTS[(size, features, seeds)]
