"""What the transformation engines' tests share (issue #26): the examples, the array mix, and the
three-way judgement's own-forward-mode check (library-free, so each library's test imports it)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import advalidate as adv
from advalidate.impl.adapters.leaves import real_leaves, replace_leaves

TESTS = Path(__file__).parent
ROOT = TESTS.parent
EXAMPLES = sorted((ROOT / "examples" / "arrays").glob("*.adv"))
ORACLES = ["fd", "forward", "cross"]
ARRAY_MIX = ["arrays", "let", "pairs", "lambda", "cond", "transc", "ints"]


def example(path: Path) -> tuple[adv.Program, Any]:
    text = path.read_text()
    prog = adv.parse(text, str(path))
    return prog, adv.parse_value(re.search(r"^-- input: (.*)$", text, re.M).group(1), prog.input_type)


def flat(v: Any) -> np.ndarray:
    parts = [np.ravel(np.asarray(t, dtype=float)) for t in real_leaves(v)]
    return np.concatenate(parts) if parts else np.zeros(0)


def own_forward_agrees(eng: Any, prog: adv.Program, x: Any, seed: int) -> None:
    rng = np.random.default_rng(seed)
    y, back = eng.vjp(prog, x)
    leaves = real_leaves(x)
    dx = replace_leaves(
        x, [rng.standard_normal(np.shape(t)) if np.ndim(t) else float(rng.standard_normal()) for t in leaves]
    )
    _, ty = eng.jvp(prog, x, dx)
    dy = replace_leaves(y, [np.ones(np.shape(t)) if np.ndim(t) else 1.0 for t in real_leaves(y)])
    lhs = float(flat(back(dy)) @ flat(dx))
    rhs = float(flat(dy) @ flat(ty))
    assert lhs == pytest.approx(rhs, rel=1e-9, abs=1e-9)


def eager_agrees(eng: Any, eager: str, prog: adv.Program, x: Any) -> bool:
    """The transformed program's value and gradient equal the library's eager engine's (`eager`)
    to float rounding; whether they are bitwise equal."""
    y, back = eng.vjp(prog, x)
    y0, back0 = adv.engine(eager).vjp(prog, x)
    g, g0 = flat(back(y0)), flat(back0(y0))
    np.testing.assert_allclose(flat(y), flat(y0), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(g, g0, rtol=1e-12, atol=1e-12)
    return bool(np.array_equal(flat(y), flat(y0)) and np.array_equal(g, g0))
