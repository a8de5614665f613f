"""`advalidate.names`, the tables `--help` reads without importing anything (issue 24, point 6),
agree with what the modules define: every `module:attr` names a class whose `name` is the table's
name, and the families and features are those the generator uses."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from advalidate import names
from advalidate.generators import families
from advalidate.impl import registry
from advalidate.oracles.check import ORACLES, oracle_names

#: The pip extras pyproject.toml declares: an adapter's extra must be one of them.
EXTRAS = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["project"][
    "optional-dependencies"
]


@pytest.mark.parametrize("name", list(names.ENGINES))
def test_each_engine_name_loads_an_engine_of_that_name(name):
    cls = names.load(names.ENGINES[name])
    assert isinstance(cls, type) and registry.is_engine(cls)
    assert cls().name == name
    assert type(registry.engine(name)) is cls is registry.builtin_class(name)


@pytest.mark.parametrize("name", list(names.ADAPTERS))
def test_each_adapter_name_loads_an_adapter_of_that_name(name):
    spec, library, extra = names.ADAPTERS[name]
    assert extra in EXTRAS
    pytest.importorskip(library)
    cls = names.load(spec)
    assert registry.is_engine(cls) and cls.name == name


def test_the_oracles_are_the_tables_in_its_order():
    assert list(ORACLES) == list(names.ORACLES) == oracle_names()
    for name, cls in ORACLES.items():
        assert cls().name == name


def test_the_family_and_feature_names_are_the_generators():
    assert names.FAMILIES == tuple(families.FAMILIES)
    from advalidate.generators import FEATURES, build

    assert FEATURES is names.FEATURES
    with pytest.raises(ValueError, match="unknown feature"):
        build.check_features("let,no-such-feature")


def test_a_name_not_in_the_tables_is_unknown():
    assert registry.builtin_class("no-such-engine") is None
    assert not registry.is_builtin("no-such-engine")
    assert "tape" in names.ENGINES and "tape" not in names.ADAPTERS
