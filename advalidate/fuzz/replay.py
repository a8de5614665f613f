"""`advalidate replay DIR`: re-run one finding; exit 1 while the bug is there, 0 once it is fixed.

Everything comes from the finding directory: `program.adv` (the shrunk program), `input.txt`, and
from `finding.json` the engine (`engine_spec`: a built-in name or `module:attr`), the oracle and
the seed its check used (the random cotangent is drawn from it). `--engine` replays the same
program against another engine (e.g. the fixed one); `--original` replays the unshrunk program.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..lang.program import parse
from ..lang.values import parse_value
from .findings import FINDING_JSON, read_finding
from .worker import ensure_import_path, load_engine_spec


class ReplayError(Exception):
    """The directory is not a finding directory or its engine cannot be loaded (exit status 2)."""


@dataclass
class ReplayResult:
    status: str  # pass | fail | inconclusive
    verdict: Any
    report: str
    finding: dict[str, Any]

    @property
    def exit_status(self) -> int:
        return 1 if self.status == "fail" else 0


def replay(directory: Path | str, engine: Any = None, original: bool = False) -> ReplayResult:
    d = Path(directory)
    if not (d / FINDING_JSON).exists():
        raise ReplayError(f"{d}: not a finding directory (no {FINDING_JSON})")
    info = read_finding(d)
    pname, iname = ("original.adv", "original-input.txt") if original else ("program.adv", "input.txt")
    try:
        text = (d / pname).read_text(encoding="utf-8")
        input_text = (d / iname).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ReplayError(f"{d}: cannot read the finding: {exc}") from None
    prog = parse(text, filename=str(d / pname))
    x = parse_value(input_text, prog.input_type, filename=str(d / iname))
    ensure_import_path()
    spec = engine if engine is not None else info.get("engine_spec") or info["engine"]
    try:
        eng = load_engine_spec(spec) if isinstance(spec, str) else spec
    except Exception as exc:  # noqa: BLE001 - reported as bad input
        raise ReplayError(f"cannot load engine {spec!r}: {exc}") from None
    from ..oracles import check

    seed = int(info.get("check_seed", info.get("seed", 0)))
    res = check(prog, x, engines=[eng], oracles=[info["oracle"]], seed=seed)
    v = res.verdicts[0]
    return ReplayResult(v.status, v, res.report(details="all"), info)


def replay_main(directory: str, engine: str | None = None, original: bool = False) -> int:
    res = replay(directory, engine, original)
    info = res.finding
    which = "original" if original else "shrunk"
    eng = engine or info.get("engine_spec") or info["engine"]
    print(f"replay {directory}: {which} program, engine {eng}, oracle {info['oracle']}")
    print(res.report)
    if res.status == "fail":
        print(f"still failing: exit 1 (found as: {str(info.get('detail', ''))[:200]})")
    elif res.status == "pass":
        print("passes now: exit 0")
    else:
        print("inconclusive now (not a failure): exit 0")
    return res.exit_status
