"""Engines named on the command line, help and version, `check`'s input and exit statuses (issue 16).

Every command loads `--engine` through one loader: built-in names, adapters, or `module:attr`
found from the current directory too. A spec that does not name an engine is refused before
anything it names is called; a plug-in that fails to import is one message; exit status 2.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest

import advalidate
from advalidate.cli import build_parser, main

ROOT = Path(advalidate.__file__).resolve().parent.parent
FIG1 = str(ROOT / "examples" / "fig1.adv")
GOOD_ENGINE = """\
from advalidate.impl.seed000.tape import TapeStage
class E(TapeStage):
    name = "mine"
engine = E()
"""


def no_traceback(err: str) -> list[str]:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines
    return lines


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Write a plug-in module (with a fresh name) into the current directory, a temporary one."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    names: list[str] = []

    def write(text: str) -> str:
        name = f"plug_{uuid.uuid4().hex[:8]}"
        (tmp_path / f"{name}.py").write_text(text)
        names.append(name)
        return name

    yield write
    for name in names:
        sys.modules.pop(name, None)


COMMANDS = [
    ["grad", FIG1, "--input", "(1.0, 2.0)"],
    ["check", FIG1, "--input", "(1.0, 2.0)", "--oracle", "fd"],
    ["show", FIG1],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
@pytest.mark.parametrize("spec", ["os:system", "builtins:exit", "code:interact", "subprocess:Popen", "json:loads"])
def test_a_spec_that_is_not_an_engine_is_refused_uncalled(argv, spec, capsys, monkeypatch):
    called = []
    monkeypatch.setattr(os, "system", lambda *a: called.append(a) or 0)
    assert main([*argv, "--engine", spec]) == 2
    (line,) = no_traceback(capsys.readouterr().err)
    assert line.startswith(f"advalidate: {spec!r} is not an engine")
    assert called == []


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
@pytest.mark.parametrize(
    "body, message",
    [
        ("raise RuntimeError('boom at import')\n", "importing {m} failed: RuntimeError: boom at import"),
        ("def f(:\n", "syntax error in {m}"),
        ("import sys\nsys.exit(0)\n", "importing {m} failed: SystemExit"),
        ("import no_such_module_anywhere\n", "importing {m} failed: ModuleNotFoundError"),
        ("x = 1\n", "{m} has no attribute 'E'"),
    ],
)
def test_a_plugin_that_cannot_be_imported(argv, body, message, plugins, capsys):
    m = plugins(body)
    assert main([*argv, "--engine", f"{m}:E"]) == 2
    (line,) = no_traceback(capsys.readouterr().err)
    assert line.startswith(f"advalidate: cannot load engine '{m}:E': ") and message.format(m=m) in line


@pytest.mark.parametrize("spec", ["nosuch_mod_xyz:E", "a b:c", ":E", "mod:", "mod:1x"])
def test_unknown_or_malformed_specs(spec, capsys):
    assert main(["grad", FIG1, "--engine", spec]) == 2
    (line,) = no_traceback(capsys.readouterr().err)
    assert spec in line


def test_grad_check_and_show_find_a_plugin_in_the_current_directory(plugins, capsys):
    m = plugins(GOOD_ENGINE)
    assert main(["grad", FIG1, "--engine", f"{m}:engine"]) == 0
    assert capsys.readouterr().out == "(37.0, 12.0)\n"
    assert main(["grad", FIG1, "--engine", f"{m}:E"]) == 0  # a class is instantiated
    assert capsys.readouterr().out == "(37.0, 12.0)\n"
    assert main(["check", FIG1, "--engine", f"{m}:E", "--oracle", "fd"]) == 0
    assert "mine" in capsys.readouterr().out
    assert main(["show", FIG1, "--engine", f"{m}:E"]) == 0
    assert "D[program]" in capsys.readouterr().out


def test_misspelt_names_get_a_suggestion(capsys, tmp_path):
    assert main(["grad", FIG1, "--engine", "tap"]) == 2
    (line,) = no_traceback(capsys.readouterr().err)
    assert "unknown engine 'tap' (did you mean 'tape'?)" in line
    assert main(["check", FIG1, "--engine", "mutabel"]) == 2
    assert "(did you mean 'mutable'?)" in capsys.readouterr().err
    assert main(["check", FIG1, "--oracle", "symbolc"]) == 2
    (line,) = no_traceback(capsys.readouterr().err)
    assert "unknown oracle 'symbolc' (did you mean 'symbolic'?)" in line
    assert main(["fuzz", "--oracle", "frd", "--seconds", "1", "--out", str(tmp_path / "o")]) == 2
    assert "(did you mean 'fd' or 'forward'?)" in capsys.readouterr().err
    assert main(["fuzz", "--engine", "naiv", "--seconds", "1", "--out", str(tmp_path / "o")]) == 2
    assert "(did you mean 'naive'?)" in capsys.readouterr().err


def test_an_engine_error_is_printed_once(capsys, tmp_path):
    assert main(["fuzz", "--engine", "nosuch_mod_xyz:E", "--seconds", "1", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    (line,) = no_traceback(err)
    assert err.count("cannot load engine") == 1 and err.count("nosuch_mod_xyz") == 2  # the spec, the module


# ---- help and version ---------------------------------------------------------------------------


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"advalidate {advalidate.__version__}\n"


def test_help_lists_engines_oracles_families_and_exit_statuses():
    text = build_parser().format_help()
    assert "DESIGN" not in text and "README" in text
    for name in [*advalidate.engine_names(), "autograd", "jax", "torch", "module:attr"]:
        assert name in text
    from advalidate.generators.families import FAMILIES
    from advalidate.oracles import oracle_names

    for name in [*oracle_names(), *FAMILIES]:
        assert name in text
    for status in ("0  nothing found", "1  a finding", "2  bad usage", "3  nothing found, but"):
        assert status in text


@pytest.mark.parametrize("command", ["check", "fuzz", "grad", "replay"])
def test_subcommand_help_names_the_engines(command, capsys):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert "--engine" in out and "module:attr" in out
    if command in ("check", "fuzz"):
        assert "tape" in out and "symbolic" in out and "exit status" in out


# ---- check: the file's input line, and a check that checked nothing ----------------------------------


def test_check_uses_the_files_input_line(capsys, tmp_path):
    assert main(["check", FIG1, "--engine", "tape", "--oracle", "fd"]) == 0
    assert "input: (12.0, 13.0)\n" in capsys.readouterr().out  # fig1.adv: -- input: (12.0, 13.0)
    neural = str(ROOT / "examples" / "neural.adv")
    assert main(["check", neural, "--engine", "tape", "--oracle", "fd"]) == 0
    assert "input: (([[0.1, -0.2, 0.3, 0.05]" in capsys.readouterr().out
    prog = tmp_path / "p.adv"
    prog.write_text("\\(x : R) -> x * x\n-- input: [1.0]\n")
    assert main(["check", str(prog)]) == 2  # a bad input line is bad input, at its place in the file
    assert no_traceback(capsys.readouterr().err)[0].startswith(f"{prog}:2:11: bad value")
    prog.write_text("\\(x : R) -> x * x\n")  # no input line: drawn from --seed, as before
    assert main(["check", str(prog), "--engine", "tape", "--oracle", "fd"]) == 0


def test_check_that_checked_nothing_is_not_a_success(capsys):
    assert main(["check", FIG1, "--engine", "forward", "--oracle", "once"]) == 3  # not applicable
    captured = capsys.readouterr()
    assert "nothing was checked" in captured.err and "1 not applicable" in captured.out
