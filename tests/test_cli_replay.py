"""`advalidate replay DIR` is safe on a directory received from someone else (issue 16).

A finding directory is data shared in bug reports: replaying one never imports, calls or puts on the
import path anything the directory names. A plug-in engine is used only when the user names it on
the command line; bad or truncated files are one message and exit status 2, never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import advalidate
from advalidate.cli import main
from advalidate.fuzz.replay import ReplayError, replay

ROOT = Path(advalidate.__file__).resolve().parent.parent
TESTS = ROOT / "tests"

EVIL = """\
import pathlib
pathlib.Path(__file__).with_name("PWNED-" + __name__).write_text("ran")
class Engine:
    name = "evil"
    def vjp(self, prog, x, numeric="float"):
        raise RuntimeError("evil engine called")
def factory():
    pathlib.Path(__file__).with_name("PWNED-factory").write_text("ran")
    return Engine()
"""


def finding_dir(d: Path, engine_spec: str, oracle: str = "fd", **extra: object) -> Path:
    """A finding directory as a stranger might send it: fig1 at (1.0, 2.0), with evilmod.py inside."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "program.adv").write_text((ROOT / "examples" / "fig1.adv").read_text())
    (d / "input.txt").write_text("(1.0, 2.0)\n")
    (d / "evilmod.py").write_text(EVIL)
    info = {"engine": "evil", "engine_spec": engine_spec, "oracle": oracle, "check_seed": 3, "detail": "x"}
    info.update(extra)
    (d / "finding.json").write_text(json.dumps(info))
    return d


def pwned(d: Path) -> list[str]:
    return sorted(p.name for p in d.glob("PWNED-*"))


def no_traceback(err: str) -> list[str]:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines
    return lines


@pytest.fixture
def inside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A received finding directory, and the current directory is it (`advalidate replay .`)."""
    d = tmp_path / "received"
    d.mkdir()
    monkeypatch.chdir(d)
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("evilmod", "sympy_evil"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return d


@pytest.mark.parametrize(
    "spec",
    ["evilmod:Engine", "evilmod:factory", "code:interact", "builtins:exit", "os:system", "subprocess:Popen"],
)
def test_replay_never_loads_a_plugin_named_by_the_directory(inside: Path, capsys: pytest.CaptureFixture, spec: str):
    finding_dir(inside, spec)
    assert main(["replay", "."]) == 2
    err = capsys.readouterr().err
    (line,) = no_traceback(err)
    assert f"plug-in engine {spec!r}" in line
    assert f"advalidate replay . --engine {spec}" in line  # how to use it, if the user trusts it
    assert pwned(inside) == [] and "evilmod" not in sys.modules
    assert str(inside) not in sys.path and "" not in sys.path[:1]


def test_replay_of_a_plugin_finding_needs_the_engine_on_the_command_line(tmp_path: Path, capsys):
    d = finding_dir(tmp_path / "f", "broken_engines:BrokenSin", oracle="fd")
    (d / "program.adv").write_text("\\(x : R) -> sin x\n")
    (d / "input.txt").write_text("1.0\n")
    assert main(["replay", str(d)]) == 2
    assert "--engine broken_engines:BrokenSin" in capsys.readouterr().err
    sys.path.insert(0, str(TESTS))
    try:
        assert main(["replay", str(d), "--engine", "broken_engines:BrokenSin"]) == 1  # still failing
        assert main(["replay", str(d), "--engine", "tape"]) == 0  # against another (correct) engine
    finally:
        sys.path.remove(str(TESTS))


def test_a_builtin_engine_named_by_the_finding_is_used(inside: Path, capsys):
    finding_dir(inside, "tape")
    assert main(["replay", "."]) == 0
    assert "passes now" in capsys.readouterr().out
    assert pwned(inside) == []


def test_engines_named_on_the_command_line_are_validated(tmp_path: Path, capsys, monkeypatch):
    d = finding_dir(tmp_path / "f", "tape")
    called = []
    monkeypatch.setattr(os, "system", lambda *a: called.append(a) or 0)
    for spec in ("builtins:exit", "os:system", "code:interact", "json:dumps"):
        assert main(["replay", str(d), "--engine", spec]) == 2  # builtins:exit() would have exited 0
        (line,) = no_traceback(capsys.readouterr().err)
        assert line == f"advalidate replay: {spec!r} is not an engine: it needs to name an engine object (or " \
            "class) with a `name` and a `vjp(prog, x, numeric)` method"  # fmt: skip
    assert called == []


def test_replay_does_not_put_the_directory_on_the_import_path(tmp_path: Path):
    """A module in the received directory must not shadow one advalidate imports (sympy, for the
    symbolic oracle), even when the user replays from inside it. Run as a fresh process whose
    import path has no current directory, like the installed `advalidate` command."""
    d = finding_dir(tmp_path / "received", "tape", oracle="symbolic")
    (d / "sympy.py").write_text(EVIL)
    (d / "mpmath.py").write_text(EVIL)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-P", "-m", "advalidate.cli", "replay", "."],
        cwd=d,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert pwned(d) == []


# ---- bad finding files: exit status 2, one message --------------------------------------------------


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"engine": "tape", "engine_spec": "tape", "oracle": "f', "corrupt or truncated"),
        ("", "corrupt or truncated"),
        ("[1, 2]", "expected a JSON object, found list"),
        ('{"engine_spec": "tape"}', "no 'oracle'"),
        ('{"engine_spec": "tape", "oracle": "nosuch"}', "unknown oracle 'nosuch'"),
        ('{"engine_spec": "tape", "oracle": "fd", "check_seed": "3"}', "the check seed is not an integer"),
        ('{"oracle": "fd"}', "no engine in the finding"),
        ('{"engine_spec": 7, "engine": null, "oracle": "fd"}', "no engine in the finding"),
    ],
)
def test_bad_finding_json(tmp_path: Path, capsys, text: str, message: str):
    d = finding_dir(tmp_path / "f", "tape")
    (d / "finding.json").write_text(text)
    assert main(["replay", str(d)]) == 2
    (line,) = no_traceback(capsys.readouterr().err)
    assert line.startswith("advalidate replay: ") and message in line


def test_finding_json_that_is_not_utf8(tmp_path: Path, capsys):
    d = finding_dir(tmp_path / "f", "tape")
    (d / "finding.json").write_bytes(b'{"oracle": "\xff"}')
    assert main(["replay", str(d)]) == 2
    (line,) = no_traceback(capsys.readouterr().err)
    assert "not UTF-8" in line


def test_missing_program_file(tmp_path: Path, capsys):
    d = finding_dir(tmp_path / "f", "tape")
    (d / "input.txt").unlink()
    assert main(["replay", str(d)]) == 2
    (line,) = no_traceback(capsys.readouterr().err)
    assert "cannot read the finding" in line and "input.txt" in line


def test_control_characters_from_the_directory_are_not_printed(tmp_path: Path, capsys):
    d = finding_dir(tmp_path / "f", "\x1b]0;owned\x07evil:E\x1b[2J")
    assert main(["replay", str(d)]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err
    assert "not a module:attr name" in err


def test_replay_api_refuses_too(tmp_path: Path):
    d = finding_dir(tmp_path / "f", "evilmod:Engine")
    with pytest.raises(ReplayError, match="never imports"):
        replay(d)
    assert pwned(d) == []


def test_replay_sends_a_sweep_finding_to_the_sweep_and_any_other_to_fuzz(tmp_path, capsys):
    """The top-level `replay` tells the two apart by finding.json's `tool` (fuzz and sweep do not
    import each other): a sweep finding naming an unknown library is refused by the sweep's check."""
    sweep = {"tool": "advalidate sweep", "library": "nolib", "op": "sin", "sample": 0, "variant": "plain"}
    (tmp_path / "finding.json").write_text(json.dumps({**sweep, "mode": "forward", "seed": 0}))
    assert main(["replay", str(tmp_path)]) == 2
    assert "finding.json: unknown library or mode" in capsys.readouterr().err
    (tmp_path / "finding.json").write_text(json.dumps({**sweep, "tool": "advalidate fuzz"}))
    assert main(["replay", str(tmp_path)]) == 2
    assert "unknown library or mode" not in capsys.readouterr().err
