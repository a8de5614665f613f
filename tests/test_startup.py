"""What starting advalidate imports (issue 24, point 6): `advalidate --version` and `import advalidate`
load no numerical library and no engine. Asserted on the modules imported, never on time (the
times are measured by benchmarks/startup.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import advalidate

HEAVY = ("numpy", "sympy", "mpmath", "scipy", "hypothesis", "torch", "jax", "autograd", "dask", "matplotlib")


def imported_after(code: str) -> list[str]:
    """The advalidate and heavy modules a fresh interpreter has imported after running `code`."""
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def heavy(mods: list[str]) -> list[str]:
    return [m for m in mods if m.split(".")[0] in HEAVY]


@pytest.mark.parametrize("argv", [["--version"], ["--max-reals", "100", "--version"]])
def test_version_imports_no_numerical_library_and_no_engine(argv):
    mods = imported_after(f"from advalidate.cli import main\nassert main({argv!r}) == 0")
    assert heavy(mods) == []
    assert not [m for m in mods if m.startswith(("advalidate.impl", "advalidate.oracles", "advalidate.generators"))]


def test_import_advalidate_is_light_and_its_names_load_on_use():
    assert heavy(imported_after("import advalidate")) == []
    for name in advalidate.__all__:
        assert getattr(advalidate, name) is not None, name
    assert advalidate.evaluate(advalidate.parse(r"\(x : R) -> x * 2.0"), 1.5) == 3.0


def test_version_is_recognised_only_before_the_command(capsys):
    from advalidate.cli import asks_for_version, main

    assert asks_for_version(["--version"]) and asks_for_version(["--max-reals", "5", "--version"])
    assert not asks_for_version(["run", "f.adv", "--version"]) and not asks_for_version([])
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"advalidate {advalidate.__version__}\n"
