"""`advalidate run FILE --input V [--numeric float|mp]` and its bad-input handling (exit status 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import advalidate
from advalidate.cli import main

REPO = Path(advalidate.__file__).resolve().parent.parent
FIG1 = str(REPO / "examples" / "fig1.adv")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["run", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, text: str, name: str = "prog.adv") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def one_message(err: str) -> list[str]:
    """The lines of an error report: no traceback, and it names what went wrong up front."""
    assert "Traceback" not in err
    lines = err.rstrip("\n").splitlines()
    assert lines and lines[0].strip()
    return lines


# ---- success -------------------------------------------------------------------------------------


def test_run_fig1_prints_300(capsys):
    code, out, err = run(capsys, FIG1, "--input", "(12.0, 13.0)")
    assert (code, out, err) == (0, "300.0\n", "")


def test_run_fig1_in_mp(capsys):
    code, out, err = run(capsys, FIG1, "--input", "(12.0, 13.0)", "--numeric", "mp")
    assert (code, out, err) == (0, "300.0\n", "")


def test_mp_prints_all_its_digits(tmp_path, capsys):
    path = write(tmp_path, r"\(x : R) -> x / 3.0")
    assert run(capsys, path, "--input", "1.0") == (0, "0.3333333333333333\n", "")
    assert run(capsys, path, "--input", "1.0", "--numeric", "mp") == (0, "0." + "3" * 50 + "\n", "")


def test_run_prints_structured_values(tmp_path, capsys):
    path = write(tmp_path, r"\((n, x) : (Z, R)) -> (n + 1, x > 0.0, if x > 0.0 then inl x else inr n, [x, -x], ())")
    code, out, _ = run(capsys, path, "--input", "(2, 1.5)")
    assert (code, out) == (0, "(3, true, inl 1.5, [1.5, -1.5], ())\n")
    code, out, _ = run(capsys, path, "--input", "(2, -1.5)")
    assert (code, out) == (0, "(3, false, inr 2, [-1.5, 1.5], ())\n")


def test_run_a_defs_file(capsys):
    code, out, _ = run(capsys, str(REPO / "examples" / "letrec.adv"), "--input", "(1.5, 5)")
    assert (code, out) == (0, "7.59375\n")  # 1.5^5


# ---- bad input: exit status 2, one message, no traceback -----------------------------------------------


def test_missing_file(tmp_path, capsys):
    path = str(tmp_path / "nope.adv")
    code, out, err = run(capsys, path, "--input", "1.0")
    assert (code, out) == (2, "")
    assert one_message(err) == [f"advalidate: {path}: cannot read program: No such file or directory"]


def test_directory_instead_of_a_file(tmp_path, capsys):
    code, out, err = run(capsys, str(tmp_path), "--input", "1.0")
    assert (code, out) == (2, "")
    (line,) = one_message(err)
    assert line.startswith(f"advalidate: {tmp_path}: cannot read program")


def test_file_that_is_not_utf8(tmp_path, capsys):
    path = tmp_path / "bin.adv"
    path.write_bytes(b"\\(x : R) -> x \xff\xfe")
    code, out, err = run(capsys, str(path), "--input", "1.0")
    assert (code, out) == (2, "")
    (line,) = one_message(err)
    assert line.startswith(f"advalidate: {path}: cannot read program")


def test_parse_error(tmp_path, capsys):
    path = write(tmp_path, "\\(x : R) ->\n  x + ;\n")
    code, out, err = run(capsys, path, "--input", "1.0")
    assert (code, out) == (2, "")
    lines = one_message(err)
    assert lines[0].startswith(f"{path}:2:7: parse error: expected an expression after '+', found ';'")
    assert lines[1:] == ["    x + ;", "        ^"]


def test_type_error(tmp_path, capsys):
    path = write(tmp_path, "\\(x : R) ->\n  x + 1\n")
    code, out, err = run(capsys, path, "--input", "1.0")
    assert (code, out) == (2, "")
    assert one_message(err) == [
        f"{path}:2:7: type error: the right operand of `+` should have type `R`, but has type `Z`",
        "    x + 1",
        "        ^",
    ]


def test_program_type_error_in_a_defs_file(tmp_path, capsys):
    path = write(tmp_path, "def f (x : R) : R = x\n\ndef main (g : R -> R) : R = g 1.0\n")
    code, _, err = run(capsys, path, "--input", "1.0")
    assert code == 2
    assert (
        one_message(err)[0]
        == f"{path}:3:1: type error: the program's input type `R -> R` must be first-order (no `->`)"
    )


def test_ill_typed_input(capsys):
    code, out, err = run(capsys, FIG1, "--input", "(1.0, true)")
    assert (code, out) == (2, "")
    assert one_message(err) == [
        "--input:1:7: bad value: expected a real number (type R), found a Bool",
        "  (1.0, true)",
        "        ^^^^",
    ]


def test_input_of_the_wrong_shape(capsys):
    code, _, err = run(capsys, FIG1, "--input", "1.0")
    assert code == 2
    assert one_message(err)[0] == "--input:1:1: bad value: expected a tuple of type (R, R), found a real number"


def test_unparsable_input(capsys):
    code, out, err = run(capsys, FIG1, "--input", "(1.0, ")
    assert (code, out) == (2, "")
    assert one_message(err)[0] == "--input:1:7: bad value: expected an expression, found end of input"
    code, _, err = run(capsys, FIG1, "--input", "__import__('os')")
    assert code == 2
    assert one_message(err)[0].startswith('--input:1:12: bad value: unexpected character "\'"')


def test_domain_error_at_run_time(tmp_path, capsys):
    path = write(tmp_path, r"\(x : R) -> log x")
    code, out, err = run(capsys, path, "--input", "-1.0")
    assert (code, out) == (2, "")
    assert one_message(err) == [f"advalidate: {path}:1:13: evaluation failed: log of a non-positive number (-1.0)"]
    path = write(tmp_path, r"\((x, y) : (R, R)) -> x / y", "div.adv")
    code, _, err = run(capsys, path, "--input", "(1.0, 0.0)", "--numeric", "mp")
    assert code == 2 and one_message(err) == [f"advalidate: {path}:1:23: evaluation failed: division by zero"]


def test_input_from_the_files_input_line(tmp_path, capsys):
    # Without --input, the file's `-- input: VALUE` line is the input (fig1.adv: (12.0, 13.0)).
    assert run(capsys, FIG1) == (0, "300.0\n", "")
    assert main(["grad", FIG1]) == 0 and capsys.readouterr().out == "(37.0, 12.0)\n"
    path = write(tmp_path, "\\(x : R) -> x * x\n")
    code, out, err = run(capsys, path)
    assert (code, out) == (2, "")
    hint = "give --input VALUE or add a line '-- input: VALUE' to the file"
    assert one_message(err) == [f"advalidate: {path}: no input: {hint}"]
    path = write(tmp_path, "\\(x : R) -> x * x\n-- input:   [1.0]\n", "bad.adv")
    code, out, err = run(capsys, path)
    assert (code, out) == (2, "")
    assert one_message(err) == [
        f"{path}:2:13: bad value: expected a real number (type R), found a list",
        "  -- input:   [1.0]",
        "              ^^^^^",
    ]


def test_usage_errors(capsys):
    assert main(["run", FIG1, "--input", "(1.0, 2.0)", "--numeric", "double"]) == 2
    _, err = capsys.readouterr()
    assert "invalid choice: 'double'" in err


# ---- the real command ------------------------------------------------------------------------------


def _subprocess(*argv: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "advalidate.cli", *argv],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_real_command_line():
    done = _subprocess("run", "examples/fig1.adv", "--input", "(12.0, 13.0)")
    assert (done.returncode, done.stdout, done.stderr) == (0, "300.0\n", "")


@pytest.mark.parametrize(
    "argv, first_line",
    [
        (["run", "examples/none.adv", "--input", "1.0"], "advalidate: examples/none.adv: cannot read program"),
        (["run", "examples/fig1.adv", "--input", "(1.0, ())"], "--input:1:7: bad value:"),
    ],
)
def test_real_command_line_exit_status_2(argv, first_line):
    done = _subprocess(*argv)
    assert (done.returncode, done.stdout) == (2, "")
    assert one_message(done.stderr)[0].startswith(first_line)


def test_an_engine_that_declines_the_program_is_exit_2_without_traceback(capsys):
    assert main(["grad", "--engine", "naive", "examples/arrays/dot.adv"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("advalidate: not supported: stage `naive`") and "Traceback" not in err
