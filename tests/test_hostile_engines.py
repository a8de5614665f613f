"""Hostile inputs to the engines (issue #42): each does bounded work, measured by counts.

A program as long as a user may write (10^4 terms) is translated in work linear in its length, as
the paper's transformation is (seed 000 §6); the count here is the nodes of the core language built
while translating, which a transformation that copies what it has already built (issue #42: every
operation copied its argument's whole chain of bindings) makes quadratic.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

import advalidate as adv
from advalidate.cli import main
from advalidate.impl.seed000.parallel import Job
from advalidate.impl.seed004.gradient import gradient_program
from advalidate.impl.seed004.symbolic import Stager
from advalidate.lang import ast as A
from advalidate.lang import core as C
from advalidate.lang.deep import run_deep
from advalidate.lang.errors import BudgetError
from advalidate.lang.nesting import deriv_depth
from advalidate.lang.types import Pair, prune


def long_sum(n: int) -> str:
    return r"\(x : R) -> " + " + ".join(["x"] * n)


def long_product(n: int) -> str:
    return r"\(x : R) -> " + " * ".join(["sin x"] * n)


def long_lets(n: int) -> str:
    lets = " ".join(f"let x{i + 1} = x{i} * x0 + x{i} in" for i in range(n))
    return rf"\(x0 : R) -> {lets} x{n}"


def nested_sums(n: int) -> str:
    """Each term a `let` whose body is a sum: the translation's chains nest inside one another."""
    return r"\(x : R) -> " + " + ".join(f"(let y = x * {i}.0 in y + x)" for i in range(n))


class _Limit(Exception):
    """More nodes built than the linear bound allows (raised at once, so a quadratic translation
    fails in seconds rather than running for minutes)."""


def _node_classes() -> list[type]:
    out, todo = [], [C.CExpr]
    while todo:
        cls = todo.pop()
        out.append(cls)
        todo += cls.__subclasses__()
    return [c for c in out if "__init__" in c.__dict__]


@contextmanager
def counting_nodes(limit: float = float("inf")) -> Iterator[list[int]]:
    """Counts every core node constructed inside the block (`count[0]`); past `limit`, `_Limit`."""
    count = [0]
    saved = {cls: cls.__dict__["__init__"] for cls in _node_classes()}

    def counted(init: Callable) -> Callable:
        def __init__(self, *args, **kwargs) -> None:  # noqa: N807 - replaces the dataclass's own
            count[0] += 1
            if count[0] > limit:
                raise _Limit(f"more than {limit:.0f} nodes built")
            init(self, *args, **kwargs)

        return __init__

    try:
        for cls, init in saved.items():
            cls.__init__ = counted(init)
        yield count
    finally:
        for cls, init in saved.items():
            cls.__init__ = init


#: The stages that translate with seed 000's transformation (`compiled` stages symbolically).
TRANSLATING = [name for name in adv.engine_names() if name != "compiled"]


def nodes_built(name: str, text: str, limit: float = float("inf")) -> int:
    """Nodes built by stage `name` translating the program `text` (its D[t], seed 000 Fig. 6)."""
    stage = adv.engine(name)
    core = stage.source(adv.parse(text))
    with counting_nodes(limit) as count:
        run_deep(stage.transformer().program, core)
    return count[0]


CASES = [(name, long_sum) for name in TRANSLATING] + [
    (name, make) for name in ("tape", "dualarrays") for make in (long_product, long_lets, nested_sums)
]


@pytest.mark.parametrize(("name", "make"), CASES)
def test_translation_of_ten_thousand_terms_is_linear(name, make):
    """Each term costs the same number of nodes, at 10^3 terms as at 10^4 (before the fix of issue
    #42 a term cost nodes in proportion to the terms before it: 10^4 terms took 13 minutes)."""
    small, large = nodes_built(name, make(100)), nodes_built(name, make(1_000))
    per_term = (large - small) / 900
    assert per_term < 100, f"{per_term:.0f} nodes per term at 10^3 terms: the translation is not linear"
    predicted = large + per_term * 9_000
    huge = nodes_built(name, make(10_000), limit=predicted + 1)
    assert huge == pytest.approx(predicted, abs=1)


def _type_depth(ty) -> int:
    ty = prune(ty)
    return 1 + max(_type_depth(ty.left), _type_depth(ty.right)) if isinstance(ty, Pair) else 0


def test_compiled_saves_thousands_of_values_in_a_shallow_tuple():
    """`compiled` hands its reverse part the primal's saved values as one tuple: nested as deep as
    the program was long, type-checking it walked that type once per value (issue #42: a 10^4-term
    product took 194 s and 13.7 GB); a balanced tuple nests log2(n) deep."""
    prog = adv.parse(r"\(x : R) -> " + " * ".join(["x"] * 4_000))
    gradient = run_deep(gradient_program, prog)
    saved = prune(gradient.reverse.input_type).left
    assert run_deep(_type_depth, saved) <= 13  # 2^12 >= the ~4,000 values saved
    _, back = adv.engine("compiled").vjp(prog, 1.0)
    assert back(1.0) == 4_000.0


def _peak_bytes(fn: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        run_deep(fn)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_derivative_depth_of_ten_thousand_lets_takes_linear_memory():
    """Every program's derivative-operator depth is measured when it is type-checked; the walk
    copied its environment at every `let` (issue #42: `advalidate run` of 10^4 lets took 1.35 GB)."""
    small, large = (adv.parse(long_lets(n)).expr for n in (1_000, 4_000))
    small_peak, large_peak = _peak_bytes(lambda: deriv_depth(small)), _peak_bytes(lambda: deriv_depth(large))
    assert large_peak < 8 * small_peak  # 4x the lets: 4x the memory (it was 16x: 14 MB, then 227 MB)


def cli(capsys, tmp_path, text: str, *argv: str) -> tuple[int, str, str]:
    """`advalidate <argv> FILE` on a file holding `text`: exit status, stdout, stderr."""
    path = tmp_path / "prog.adv"
    path.write_text(text)
    code = main([*argv, str(path)])
    out = capsys.readouterr()
    return code, out.out, out.err


DEFS = """-- input: (3.0, 4.0)
def sq (x : R) : R = x * x

def norm2 ((x, y) : (R, R)) : R = sqrt (sq x + sq y)

def scale (k : R) ((x, y) : (R, R)) : (R, R) = (k * x, k * y)

def main (p : (R, R)) : R =
  let (u, v) = scale (1.0 / norm2 p) p in
  u + 2.0 * v
"""


def test_compiled_differentiates_a_file_of_defs(capsys, tmp_path):
    """A `def` that does not call itself is a `let` of a lambda to the compile-time stage (#42 18:
    every `def` file was refused, the program not being a lambda)."""
    code, out, err = cli(capsys, tmp_path, DEFS, "grad", "--engine", "compiled")
    assert (code, err) == (0, "")
    assert out == cli(capsys, tmp_path, DEFS, "grad", "--engine", "tape")[1]


def test_compiled_names_the_recursive_def_it_declines(capsys, tmp_path):
    fact = "def fact (n : Z) : Z = if n <= 0 then 1 else n * fact (n - 1)\n\n"
    text = DEFS.replace("def main", fact + "def main").replace("u + 2.0 * v", "real (fact 3) * u")
    code, out, err = cli(capsys, tmp_path, text, "grad", "--engine", "compiled")
    assert (code, out) == (2, "")
    assert "cannot stage the recursive function `fact`" in err


PAR_RECURSION = r"""-- input: 1.0
\(x : R) ->
  letrec f (n : Z) : R -> R = \(y : R) ->
    if n <= 0 then y else (let (a, b) = par (f (n - 1) y, f (n - 1) y) in a + b) in
  f 40 x
"""


def _run_to_budget(name: str, budget: int) -> str:
    with pytest.raises(BudgetError) as failed:
        adv.engine(name).vjp(adv.parse(PAR_RECURSION), 1.0, budget=budget)
    return str(failed.value)


def test_parallel_charges_its_forks_to_the_step_budget():
    """A `par` recursion 2^40 deep stops at the step budget having made jobs in proportion to the
    budget, no more than `tape` makes tape entries (issue #42: 1.25 million forks, 250 s and 4.4 GB
    before the budget of 10^7 calls ran out; `tape` 8 s, 0.3 GB)."""
    jobs = [0]
    init = Job.__init__

    def counted(self, *args) -> None:
        jobs[0] += 1
        init(self, *args)

    Job.__init__ = counted
    try:
        message = _run_to_budget("parallel", 200_000)
    finally:
        Job.__init__ = init
    assert "a task of `par` or `parmap` counts" in message
    assert jobs[0] <= 200_000 * 3 // 200 + 3  # a fork makes 3 jobs and is charged 2 x 100 steps
    peaks = {name: _peak_bytes(lambda name=name: _run_to_budget(name, 200_000)) for name in ("tape", "parallel")}
    assert peaks["parallel"] < 2 * peaks["tape"]


def test_parallel_reports_the_exhausted_budget_on_the_command_line(capsys, tmp_path):
    code, out, err = cli(capsys, tmp_path, PAR_RECURSION, "grad", "--engine", "parallel")
    assert (code, out) == (2, "")
    assert "step budget of 10000000 function calls exhausted" in err


#: An integer of a build's element beyond 2^62: in bulk (the reference's vectorised build, `bot`,
#: `compiled`) an int64 overflow; one index at a time (a body calling a function, every stage's
#: build of dual numbers) it was a Python int, and `tape`, `delta`, `dualarrays` returned a gradient.
ELEMENT_OVERFLOW = {
    "vectorised": r"\(x : R) -> sumOuter (build1 3 (\i -> x * real ((i + 1) * 4611686018427387904)))",
    "one index at a time": r"""\(x : R) ->
      let f = \(k : Z) -> k * 4611686018427387904 in sumOuter (build1 3 (\i -> x * real (f (i + 1))))""",
}
#: Sums of int64 elements past 2^62 (3 · (2^62 - 1) wrapped, silently, in `run` and every engine).
SUM_OVERFLOW = {
    "sumOuter": r"\(x : R) -> x * real (sumOuter (replicate 3 4611686018427387903))",
    "scatter": r"\(x : R) -> x * real (scatter [1] (replicate 3 4611686018427387903) (\[i] -> [0]) ! [0])",
}
ARRAY_ENGINES = [name for name in adv.engine_names() if "arrays" in adv.engine(name).supports]


@pytest.mark.parametrize(
    ("op", "body"),
    [("imul", body) for body in ELEMENT_OVERFLOW.values()] + list(SUM_OVERFLOW.items()),
    ids=[*ELEMENT_OVERFLOW, *SUM_OVERFLOW],
)
def test_every_engine_reports_an_elements_integer_overflow_as_run_does(capsys, tmp_path, op, body):
    text = "-- input: 2.0\n" + body + "\n"
    message = f"integer overflow in `{op}` on an array (elements beyond 2^62)"
    code, out, err = cli(capsys, tmp_path, text, "run")
    assert (code, out) == (2, "")
    assert err.endswith(f"evaluation failed: {message}\n")
    expected = (2, "", f"advalidate: evaluation failed: {message}\n")
    for name in ARRAY_ENGINES:
        assert cli(capsys, tmp_path, text, "grad", "--engine", name) == expected, name


def test_integer_sums_near_int64s_bound_are_exact():
    """Sums within 2^62 whose terms' magnitudes pass it (checked exactly, in Python ints) are kept."""
    big = 1152921504606846976  # 2^60
    prog = adv.parse(
        rf"\(x : R) -> let a = scatter [2] (replicate 4 {big}) (\[i] -> [mod i 2]) in "
        rf"let b = sumOuter (build1 3 (\i -> {big} * (1 - 2 * mod i 2))) in x * real (a ! [0] + b)"
    )
    assert adv.evaluate(prog, 1.0) == 3 * big
    for name in ARRAY_ENGINES:
        _, back = adv.engine(name).vjp(prog, 1.0)
        assert back(1.0) == 3 * big, name


def test_an_integer_outside_builds_may_exceed_int64():
    """Only an element's integers are int64: a scalar's bound is still `MAX_INT_BITS`."""
    prog = adv.parse(r"\(x : R) -> x * real (4611686018427387904 * 4 - 18446744073709551615)")
    assert adv.evaluate(prog, 2.0) == 2.0
    for name in adv.engine_names():
        _, back = adv.engine(name).vjp(prog, 2.0)
        assert back(1.0) == 1.0


def test_compiled_stages_a_let_chain_in_linear_memory():
    """`compiled` stages the program symbolically in an environment of its names; a copy per `let`
    held every prefix of a chain at once (issue #42: 10^4 lets, 1.46 GB)."""

    def staging(n: int) -> Callable[[], object]:
        prog = adv.parse(long_lets(n))

        def stage() -> object:
            st = Stager()
            x = (st.emit(A.Var("x"), prog.input_type), st.delta("Input", (0,), ()))
            return st.expr(prog.core, {})(x)

        return stage

    small, large = _peak_bytes(staging(1_000)), _peak_bytes(staging(4_000))
    assert large < 8 * small  # 4x the lets: 4x the memory (it was 15x: 16 MB, then 234 MB)
