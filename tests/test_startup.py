"""What starting advalidate imports (issue 24, point 6): `advalidate --version`, `--help`, every
command's `--help` and `import advalidate` load no numerical library and no engine; `advalidate run`
loads the language (its parser, type checker and interpreter, with numpy and mpmath) and nothing of
sympy, Hypothesis, PyTorch or JAX. Asserted on the modules imported, never on time (the
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


COMMANDS = ("run", "grad", "show", "check", "fuzz", "replay", "gen", "report", "sweep")
ENGINES_AND_JUDGES = ("advalidate.impl", "advalidate.oracles", "advalidate.generators.", "advalidate.fuzz.campaign")


def engines_and_judges(mods: list[str]) -> list[str]:
    """The engines, oracles, generator and campaign among `mods` (`gen`'s argument parser aside)."""
    return [m for m in mods if m.startswith(ENGINES_AND_JUDGES) and m != "advalidate.generators.cli"]


def run_main(argv: list[str]) -> str:
    """`main(argv)` in a fresh interpreter (argparse's exit for --help caught)."""
    return f"from advalidate.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass"


@pytest.mark.parametrize("argv", [["--help"], *([c, "--help"] for c in COMMANDS)], ids=" ".join)
def test_help_imports_no_numerical_library_and_no_engine(argv):
    mods = imported_after(run_main(argv))
    assert heavy(mods) == []
    assert engines_and_judges(mods) == []


def test_run_imports_the_language_and_no_engine_oracle_or_generator(tmp_path):
    src = tmp_path / "f.adv"
    src.write_text("-- input: 2.0\n\\(x : R) -> sin x * x\n")
    mods = imported_after(run_main(["run", str(src)]))
    assert {"advalidate.lang.parser", "advalidate.lang.typecheck", "advalidate.lang.program"} <= set(mods)
    assert not {m.split(".")[0] for m in heavy(mods)} & {"sympy", "hypothesis", "torch", "jax", "autograd", "scipy"}
    assert engines_and_judges(mods) == []


def test_lazy_package_names_load_on_use_and_replay_stays_the_function():
    code = (
        "import advalidate.fuzz.replay, advalidate.fuzz as F, advalidate.generators as G\n"
        "assert callable(F.replay) and F.replay.__module__ == 'advalidate.fuzz.replay'\n"
        "from advalidate.fuzz import replay\nassert replay is F.replay\n"
        "assert G.FEATURES and 'doubling' in G.FAMILIES and F.CampaignConfig.__name__ == 'CampaignConfig'\n"
        "assert set(G.__all__) <= set(dir(G))"
    )
    assert "advalidate.fuzz.campaign" in imported_after(code)


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
