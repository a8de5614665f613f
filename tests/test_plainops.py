"""`report/plainops.py`: the bare-float primal that benchmarks and reports divide gradient times by.
It must compute what the reference interpreter computes in float, on every example."""

from __future__ import annotations

import math
import operator
import re
from pathlib import Path

import pytest

import advalidate as adv
from advalidate.report.plainops import PlainFloatOps, plain_function

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.adv"))


def test_the_examples_are_found() -> None:
    assert len(EXAMPLES) >= 14


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_plain_function_equals_the_reference_in_float(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    prog = adv.parse(text, path.name)
    x = adv.parse_value(re.search(r"^-- input: (.*)$", text, re.M).group(1), prog.input_type)
    # the same float operations in the same order: exactly equal, and a function made once runs again
    f = plain_function(prog)
    assert f(x) == adv.evaluate(prog, x) == f(x)


def test_the_namespace_is_the_bare_built_ins() -> None:
    """No counting, no domain check in between (what makes it the fastest primal)."""
    ops = PlainFloatOps()
    assert ops.add is operator.add and ops.div is operator.truediv and ops.sin is math.sin
    assert ops.const("2.5") == 2.5 and ops.lt(1.0, 2.0) is True
    with pytest.raises(ValueError):  # math's own domain error, not the language's
        ops.log(-1.0)
    prog = adv.parse(r"\((a, b) : (R, R)) -> if a < b then atan (a / b) else tanh (sqrt a) - cos b")
    f = plain_function(prog)
    assert f((1.0, 2.0)) == math.atan(0.5) and f((4.0, 1.0)) == math.tanh(2.0) - math.cos(1.0)
