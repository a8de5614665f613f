"""Oracles: decide whether an engine's gradient is right (docs/api.md: `check`).

One module per oracle (`symbolic`, `fd`, `forward`, `cross`, `once`, `linear`), the one tolerance
policy (`tolerance`), verdicts (`verdict`) and `check` / `assert_gradients` (`check`). `impl`
never imports this package: the engines under test do not see their judges.
"""

from __future__ import annotations

from .check import DEFAULT_ORACLES, ORACLES, OracleError, assert_gradients, check, default_input, oracle_names
from .verdict import FAIL, INCONCLUSIVE, PASS, CheckResult, Verdict

__all__ = [
    "DEFAULT_ORACLES",
    "FAIL",
    "INCONCLUSIVE",
    "ORACLES",
    "PASS",
    "CheckResult",
    "OracleError",
    "Verdict",
    "assert_gradients",
    "check",
    "default_input",
    "oracle_names",
]
