"""What a campaign worker loads before its first task (`load_lazy_modules`)."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from advalidate.fuzz.worker import load_lazy_modules
assert "sympy" not in sys.modules and "scipy.special" not in sys.modules
load_lazy_modules({oracles!r})
print(*(m in sys.modules for m in ("sympy", "scipy.special", "advalidate.impl.seed001.eliminate")))
"""


def _loaded(oracles: list[str]) -> str:
    out = subprocess.run([sys.executable, "-c", PROBE.format(oracles=oracles)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_a_worker_with_the_symbolic_oracle_loads_sympy_before_its_first_task() -> None:
    assert _loaded(["symbolic", "fd"]) == "True True True"


def test_a_worker_without_the_symbolic_oracle_does_not_load_sympy() -> None:
    assert _loaded(["fd", "forward"]) == "False True True"
