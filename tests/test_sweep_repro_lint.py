"""A sweep repro.py is kept in the repository, whose CI runs `ruff check` and `ruff format --check`
over every Python file: what the three templates write must pass both as written, for every mode
and transform, with long inputs and a record's call as the sweep stores it (single quotes, a long
constant, a local import, `a0, = args`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from advalidate.sweep import repro_jax, repro_tensorflow, repro_torch

pytest.importorskip("ruff")

ROOT = Path(__file__).resolve().parents[1]
MODES = ["reverse", "forward", "rev_over_rev", "fwd_over_rev", "fwd_over_fwd"]
#: A row longer than a line, and a matrix of such rows: the literals must be wrapped.
ROW = [0.1234567890123456 * (k + 1) for k in range(12)]
CALL = """def f(*args):
    import {lib}
    a0, a1 = args
    return {call}(a0, {lib}.constant_like(a1, [{long}]), mode='reflect', name='a_rather_long_name_for_the_op')
"""


def record(lib: str, complex_input: bool) -> dict:
    call = {"torch": "torch.nn.functional.pad", "jax": "jax.numpy.pad", "tensorflow": "tf.pad"}[lib]
    source = CALL.format(lib=lib, call=call, long=", ".join(repr(v) for v in ROW))
    args = [[ROW, ROW, ROW], ROW]
    rec = {"args": args, "call_source": source, "nondiff_outputs": [1]}
    if complex_input:
        rec["args_imag"] = args
    return rec


def findings():
    """(module, name, finding) for every mode and transform of each library, float64 and float32."""
    libs = [
        (repro_torch, "torch", list(repro_torch.TRANSFORM_TEXT)),
        (repro_jax, "jax", list(repro_jax.TRANSFORM_TEXT)),
        (repro_tensorflow, "tensorflow", list(repro_tensorflow.TRANSFORM_TEXT)),
    ]
    for module, lib, transforms in libs:
        for mode in MODES:
            for transform in transforms:
                for dtype in ("float64", "float32", "complex128"):
                    finding = {
                        "op": "pad",
                        "mode": mode,
                        "kind": "silent-wrong" if dtype == "float32" else "wrong",
                        "sample": 3,
                        "variant": "sample",
                        "dtype": dtype,
                        "transform": transform,
                        "only_output": None,
                        "record": record(lib, dtype.startswith("complex")),
                    }
                    yield module, f"{lib}_{mode}_{transform}_{dtype}", finding


def ruff(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "ruff", *args, "--config", str(ROOT / "pyproject.toml"), "."]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


def test_every_rendered_repro_py_is_lint_clean_and_formatted(tmp_path: Path):
    count = 0
    for module, name, finding in findings():
        (tmp_path / f"{name}.py").write_text(module.render(finding, "lib 0.0"))
        count += 1
    assert count == 5 * (6 + 4 + 2) * 3
    check = ruff("check", "--output-format", "concise", cwd=tmp_path)
    assert check.returncode == 0, check.stdout[-3000:]
    fmt = ruff("format", "--check", cwd=tmp_path)
    assert fmt.returncode == 0, fmt.stdout[-3000:]


def test_forward_ad_is_imported_only_where_the_transform_uses_it():
    by_transform = {}
    for module, _name, finding in findings():
        if module is repro_torch and finding["mode"] == "forward" and finding["dtype"] == "float64":
            by_transform[finding["transform"]] = "import torch.autograd.forward_ad as fwad" in module.render(
                finding, "torch 0.0"
            )
    assert by_transform == {t: "fwad." in repro_torch.TRANSFORM_RULES[t] for t in repro_torch.TRANSFORM_TEXT}
    assert by_transform["eager"] and not by_transform["func"]
