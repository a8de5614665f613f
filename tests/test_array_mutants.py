"""The array-AD mutants (tests/array_mutants.py) are caught; the unmutated stage is not."""

from __future__ import annotations

import numpy as np
import pytest

import advalidate as adv
from tests.array_mutants import MUTANTS


@pytest.mark.parametrize("numeric", [None, "float"])
def test_full_cotangent_to_every_tied_element_is_caught(numeric: str | None) -> None:
    """maxOuter of [1, 3, 3] · 2: the pieces' gradients are (0, 2, 0) and (0, 0, 2); giving both tied
    elements the cotangent, (0, 2, 2), is neither, in mp and in float alike."""
    prog = adv.parse(r"\(a : Array [3] R) -> maxOuter a * 2.0")
    x = np.array([1.0, 3.0, 3.0])
    res = adv.check(prog, x, engines=[MUTANTS["ties-all"](), "dualarrays"], oracles=["forward"], numeric=numeric)
    bad, good = res.verdicts
    assert bad.status == "fail" and "kink" in bad.detail, res.report()
    assert good.status == "pass" and "kink" in good.detail, res.report()
