"""`advalidate replay DIR`: re-run one finding; exit 1 while the bug is there, 0 once it is fixed.

The program comes from `program.adv` (the shrunk program; `--original`: `original.adv`) and
`input.txt`, and from `finding.json` the oracle, the seed its check used (the random cotangent is
drawn from it) and the engine.

A finding directory is data that people send each other in bug reports, so replaying one never
runs code that the directory names: only a built-in engine name (`tape`, ..., and the adapters
`autograd`, `jax`, `torch`) is taken from `finding.json`. A finding made with a plug-in engine
(`module:attr`) is replayed only when the user names the engine on the command line
(`--engine module:attr`); otherwise replay stops with exit status 2 and says how. Nothing from the
directory is put on the import path either. `--engine NAME` also replays the finding against
another engine (e.g. the fixed one).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..lang.errors import printable as escaped
from ..lang.reader import read_user_file
from .layout import FINDING_JSON


class ReplayError(Exception):
    """The directory is not a finding directory or its engine cannot be used (exit status 2)."""


@dataclass
class ReplayResult:
    status: str  # pass | fail | inconclusive | not_applicable
    verdict: Any
    report: str
    finding: dict[str, Any]
    engine: str = ""

    @property
    def exit_status(self) -> int:
        return 1 if self.status == "fail" else 0


def printable(text: object, limit: int = 200) -> str:
    """Text from a received file, safe to print (`lang.errors.printable`), cut to `limit` at a word
    (`oracles.verdict.clip`: never half a number; imported here, as it brings numpy)."""
    from ..oracles.verdict import clip

    return clip(escaped(text), limit)


def read_finding_json(d: Path) -> dict[str, Any]:
    """`finding.json` of a finding directory, checked: a readable JSON object naming an oracle."""
    path = d / FINDING_JSON
    if not d.exists():
        raise ReplayError(f"{d}: no such directory")
    if not d.is_dir():
        raise ReplayError(f"{d}: not a directory (give a finding directory, which holds {FINDING_JSON})")
    if not path.is_file():
        raise ReplayError(f"{d}: not a finding directory (no {FINDING_JSON})")
    try:
        info = json.loads(read_user_file(path, "finding"))
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ReplayError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise ReplayError(
            f"{path}:{exc.lineno}:{exc.colno}: corrupt or truncated: {exc.msg}; "
            "the finding's program and input are still in program.adv and input.txt"
        ) from None
    if not isinstance(info, dict):
        raise ReplayError(f"{path}: not a finding: expected a JSON object, found {type(info).__name__}")
    return info


def _field(info: dict[str, Any], d: Path, key: str) -> str:
    value = info.get(key)
    if not isinstance(value, str) or not value:
        raise ReplayError(f"{d / FINDING_JSON}: no {key!r} (a name) in the finding")
    return value


def recorded_engine(info: dict[str, Any], d: Path) -> str:
    """The engine a finding was made with: its `engine_spec`, else its `engine` name."""
    spec = info.get("engine_spec") or info.get("engine")
    if not isinstance(spec, str) or not spec:
        raise ReplayError(
            f"{d / FINDING_JSON}: no engine in the finding; give one: advalidate replay {d} --engine NAME"
        )
    return spec


def choose_engine(info: dict[str, Any], d: Path, given: Any = None) -> Any:
    """The engine to replay with: `given` (the user's `--engine`, or an engine object), else the
    finding's own engine if it is a built-in one. Never imports a plug-in named by the directory."""
    from ..cli_args import cli_engine
    from ..impl.registry import EngineError, is_builtin, valid_spec
    from .findings import reproduce_command

    if given is not None and not isinstance(given, str):
        return given
    if given is None:
        spec = recorded_engine(info, d)
        if not is_builtin(spec):
            if valid_spec(spec):
                path = info.get("pythonpath")
                path = path if isinstance(path, str) and path and escaped(path, 200) == path else None
                how = f"if you trust it, name it yourself: {reproduce_command(d, spec, path)}"
            else:
                how = f"its engine {printable(spec)!r} is not a module:attr name; give one with --engine"
            raise ReplayError(
                f"{d}: this finding was made with the plug-in engine {printable(spec)!r}; replay never imports "
                f"code named in a finding directory: {how} (or --engine NAME for a built-in engine)"
            )
        given = spec
    try:
        return cli_engine(given)
    except EngineError as exc:
        raise ReplayError(str(exc)) from None


def replay(directory: Path | str, engine: Any = None, original: bool = False) -> ReplayResult:
    """Re-run the check of a finding. `engine`: a name, `module:attr` or engine object to use
    instead of the finding's own (which is used only when it is a built-in engine)."""
    from ..lang.program import parse
    from ..lang.values import parse_value
    from ..oracles import check, oracle_names

    d = Path(directory)
    info = read_finding_json(d)
    oracle = _field(info, d, "oracle")
    if oracle not in oracle_names():
        raise ReplayError(
            f"{d / FINDING_JSON}: unknown oracle {printable(oracle)!r}; oracles: {', '.join(oracle_names())}"
        )
    seed = info.get("check_seed", info.get("seed", 0))
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ReplayError(f"{d / FINDING_JSON}: the check seed is not an integer: {printable(seed)!r}")
    pname, iname = ("original.adv", "original-input.txt") if original else ("program.adv", "input.txt")
    try:
        text = read_user_file(d / pname, "the finding's program")
        input_text = read_user_file(d / iname, "the finding's input").strip()
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else f"not UTF-8 text ({exc.reason})"
        raise ReplayError(f"{d}: cannot read the finding: {why}: {getattr(exc, 'filename', None) or pname}") from None
    eng = choose_engine(info, d, engine)
    prog = parse(text, filename=str(d / pname))
    x = parse_value(input_text, prog.input_type, filename=str(d / iname))
    res = check(prog, x, engines=[eng], oracles=[oracle], seed=seed)
    v = res.verdicts[0]
    label = engine if isinstance(engine, str) else str(getattr(eng, "name", "") or recorded_engine(info, d))
    return ReplayResult(v.status, v, res.report(details="all"), info, label)


def replay_main(directory: str, engine: str | None = None, original: bool = False) -> int:
    res = replay(directory, engine, original)  # a bad program.adv / input.txt: an AdvError, located
    info = res.finding
    which = "original" if original else "shrunk"
    print(f"replay {directory}: {which} program, engine {printable(res.engine)}, oracle {info['oracle']}")
    print(res.report)
    if res.status == "fail":
        print(f"still failing: exit 1 (found as: {printable(info.get('detail', ''))})")
    elif res.status == "pass":
        print("passes now: exit 0")
    else:
        print(f"{res.status.replace('_', ' ')} now (not a failure): exit 0")
    return res.exit_status
