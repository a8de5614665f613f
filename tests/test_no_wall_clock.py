"""No test bounds anything by wall-clock time (issue #43; CONTRIBUTING.md, "Tests"): a test that
passes on an idle machine and fails beside a CPU burner checks the machine, not the code. Read
from the test sources with `ast`, as test_import_graph.py reads the package:

- no result of a clock (`time.time`, `perf_counter`, `monotonic`, their `_ns` forms, `process_time`)
  reaches an `assert` or a comparison, directly or through a name it was assigned to
  (`start = time.monotonic()` ... `assert time.monotonic() - start < 60`; a polling loop
  `while time.monotonic() < deadline` too: wait for the event, and let the campaign's own
  `--seconds` be the safety net);
- every Hypothesis test says `deadline=None` in its `@settings` (the default 200 ms deadline fails
  tests whose examples take a variable time, as they do on a loaded machine);
- a Hypothesis test asks for more than the default 100 examples only under `@pytest.mark.slow`;
- a campaign's `"--seconds", "N"` is the 600 s safety net (or more), never a time box the test
  depends on; `"1"` stays allowed for the usage errors refused before any work.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
CLOCKS = {"time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "process_time"}
DEFAULT_EXAMPLES = 100
SAFETY_NET = 600  # seconds: CONTRIBUTING.md, "Tests"


def scanned_files() -> list[Path]:
    """The test modules and their helpers (tests/*.py)."""
    return sorted(TESTS.glob("*.py"))


def is_clock(node: ast.AST) -> bool:
    """`time.monotonic()`, `perf_counter()` (imported from time), ..."""
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    if isinstance(f, ast.Attribute):
        return f.attr in CLOCKS and isinstance(f.value, ast.Name) and f.value.id == "time"
    return isinstance(f, ast.Name) and f.id in CLOCKS - {"time"}


def clock_uses(tree: ast.AST) -> list[str]:
    """Asserts and comparisons that read a clock, directly or through a name assigned from one."""
    timed: set[str] = set()
    changed = True
    while changed:  # names assigned from a clock, or from an expression holding such a name
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                if _reads_clock(node.value, timed):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for t in targets:
                        for n in ast.walk(t):
                            if isinstance(n, ast.Name) and n.id not in timed:
                                timed.add(n.id)
                                changed = True
    found: dict[int, str] = {}  # by line: an assert and the comparison inside it are one use
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assert, ast.Compare)) and _reads_clock(node, timed):
            found.setdefault(node.lineno, ast.unparse(node)[:80])
    return [f"line {line}: {text}" for line, text in sorted(found.items())]


def _reads_clock(node: ast.AST, timed: set[str]) -> bool:
    return any(is_clock(n) or (isinstance(n, ast.Name) and n.id in timed) for n in ast.walk(node))


def _settings(fn: ast.FunctionDef, module: ast.Module) -> list[ast.Call]:
    """The `settings(...)` calls that decorate `fn`, directly or through a module-level name
    (`FAST = settings(...)`, `@FAST`)."""
    named = {
        t.id: node.value
        for node in module.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    out = []
    for d in fn.decorator_list:
        call = named.get(d.id) if isinstance(d, ast.Name) else d
        if isinstance(call, ast.Call) and ast.unparse(call.func).split(".")[-1] == "settings":
            out.append(call)
    return out


def hypothesis_problems(module: ast.Module) -> list[str]:
    problems = []
    for fn in ast.walk(module):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        decorators = [ast.unparse(d) for d in fn.decorator_list]
        if not any(d.split("(")[0].split(".")[-1] == "given" for d in decorators):
            continue
        kws = {kw.arg: kw.value for call in _settings(fn, module) for kw in call.keywords}
        deadline = kws.get("deadline")
        if not (isinstance(deadline, ast.Constant) and deadline.value is None):
            problems.append(f"{fn.name}: @settings without deadline=None")
        examples = kws.get("max_examples")
        slow = any(d.endswith("mark.slow") for d in decorators)
        if isinstance(examples, ast.Constant) and examples.value > DEFAULT_EXAMPLES and not slow:
            problems.append(f"{fn.name}: max_examples={examples.value} without @pytest.mark.slow")
    return problems


def short_time_boxes(tree: ast.AST) -> list[str]:
    """`"--seconds", "N"` with 1 < N < SAFETY_NET in a command line (a list, a tuple, a call's arguments)."""
    found = []
    for node in ast.walk(tree):
        items = (
            node.elts if isinstance(node, (ast.List, ast.Tuple)) else node.args if isinstance(node, ast.Call) else []
        )
        if len(items) < 3:  # a pair such as ("--seconds", "60") of a help text's defaults is no command line
            continue
        for flag, value in zip(items, items[1:]):
            if isinstance(flag, ast.Constant) and flag.value == "--seconds" and isinstance(value, ast.Constant):
                try:
                    seconds = float(value.value)
                except (TypeError, ValueError):
                    continue
                if 1 < seconds < SAFETY_NET:
                    found.append(f"line {value.lineno}: --seconds {value.value}")
    return found


BAD = """
import time
from time import perf_counter
from hypothesis import given, settings

def test_a():
    start = time.monotonic()
    run()
    assert time.monotonic() - start < 60

def test_b():
    t0 = perf_counter()
    elapsed = perf_counter() - t0
    assert elapsed < 10

def test_c():
    deadline = time.time() + 60
    while time.time() < deadline and not done():
        pass

@given(x)
def test_d(x): ...

@settings(max_examples=500, deadline=None)
@given(x)
def test_e(x): ...

def test_f():
    fuzz("--seconds", "4", "--programs", "3")
    main(["fuzz", "--seconds", "120"])
"""

GOOD = """
import time
import pytest
from hypothesis import given, settings

FAST = settings(deadline=None)

def test_a():
    start = time.monotonic()  # measured and printed, never asserted on
    print(time.monotonic() - start)
    assert run() == 3

@FAST
@given(x)
def test_d(x): ...

@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(x)
def test_e(x): ...

def test_f():
    fuzz("--seconds", "600", "--programs", "3")
    assert main(["fuzz", "--seconds", "1", "--engine", "nosuch"]) == 2
    for option, default in [("--seconds", "60"), ("--out", "o")]:
        assert default in help_text(option)
"""


def test_the_scan_sees_each_kind_of_wall_clock_dependence() -> None:
    """The scan below would pass while checking nothing if it missed these."""
    bad = ast.parse(BAD)
    lines = [use.split(":")[0] for use in clock_uses(bad)]
    assert lines == ["line 9", "line 14", "line 18"]  # test_a's and test_b's asserts, test_c's loop
    assert hypothesis_problems(bad) == [
        "test_d: @settings without deadline=None",
        "test_e: max_examples=500 without @pytest.mark.slow",
    ]
    assert [use.split(":")[0] for use in short_time_boxes(bad)] == ["line 29", "line 30"]
    good = ast.parse(GOOD)
    assert clock_uses(good) == [] and hypothesis_problems(good) == [] and short_time_boxes(good) == []


def test_no_test_asserts_on_elapsed_time() -> None:
    sources = scanned_files()
    assert len(sources) > 50
    found = {p.name: clock_uses(ast.parse(p.read_text(encoding="utf-8"))) for p in sources}
    assert {name: uses for name, uses in found.items() if uses} == {}


def test_every_hypothesis_test_has_no_deadline_and_the_default_examples_outside_slow() -> None:
    sources = scanned_files()
    checked = 0
    problems = {}
    for p in sources:
        module = ast.parse(p.read_text(encoding="utf-8"))
        checked += sum(
            isinstance(n, ast.FunctionDef) and any("given" in ast.unparse(d) for d in n.decorator_list)
            for n in ast.walk(module)
        )
        if found := hypothesis_problems(module):
            problems[p.name] = found
    assert checked > 40  # the Hypothesis tests were found
    assert problems == {}


def test_campaigns_in_tests_have_the_safety_net_not_a_time_box() -> None:
    sources = scanned_files()
    found = {p.name: short_time_boxes(ast.parse(p.read_text(encoding="utf-8"))) for p in sources}
    assert {name: boxes for name, boxes in found.items() if boxes} == {}


def test_the_suite_s_hypothesis_profile_depends_on_no_clock() -> None:
    """tests/conftest.py loads it: no deadline, and no `too_slow` health check (generation time)."""
    from hypothesis import HealthCheck, settings

    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check
