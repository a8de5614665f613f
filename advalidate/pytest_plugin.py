"""pytest plug-in (entry point `pytest11`): fuzz outside engines as part of a test run.

    pytest --advalidate-engine mypkg.ad:engine --advalidate-seconds 60 -k advalidate_fuzz

adds one test item `advalidate_fuzz[SPEC]` per `--advalidate-engine`; it runs a fuzzing campaign
against that engine (`advalidate.testing.fuzz_engine`) and fails with the shrunk findings. Without
`--advalidate-engine` the plug-in adds nothing.
"""

from __future__ import annotations

from typing import Any

import pytest


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("advalidate", "advalidate: fuzz AD engines")
    group.addoption(
        "--advalidate-engine",
        action="append",
        default=[],
        metavar="NAME|module:attr",
        help="fuzz this engine (repeatable): adds the test item advalidate_fuzz[NAME]",
    )
    group.addoption("--advalidate-seconds", type=float, default=60.0, help="seconds per engine (default 60)")
    group.addoption(
        "--advalidate-programs",
        type=int,
        default=None,
        help="stop after this many programs per engine (reproducible on any machine; default: the time box only)",
    )
    group.addoption("--advalidate-seed", type=int, default=None, help="campaign seed (default: random)")
    group.addoption("--advalidate-oracle", action="append", default=[], help="oracle (repeatable; default all)")
    group.addoption("--advalidate-workers", type=int, default=None, help="worker processes (default: cores)")
    group.addoption(
        "--advalidate-out", default="advalidate-findings", help="findings directory (default advalidate-findings)"
    )


def pytest_collection_modifyitems(session: Any, config: Any, items: list) -> None:
    specs = config.getoption("advalidate_engine", default=[]) or []
    for spec in specs:
        items.append(FuzzItem.from_parent(session, name=f"advalidate_fuzz[{spec}]", spec=spec))


class FuzzItem(pytest.Item):
    def __init__(self, *, spec: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec = spec

    def runtest(self) -> None:
        from .testing import fuzz_engine

        opt = self.config.getoption
        out = opt("advalidate_out")
        if len(opt("advalidate_engine")) > 1:
            from .fuzz.findings import slug

            out = f"{out}/{slug(self.spec, 60)}"
        fuzz_engine(
            self.spec,
            seconds=opt("advalidate_seconds"),
            programs=opt("advalidate_programs"),
            seed=opt("advalidate_seed"),
            oracles=opt("advalidate_oracle") or None,
            workers=opt("advalidate_workers"),
            out=out,
        )

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, AssertionError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, self.name
