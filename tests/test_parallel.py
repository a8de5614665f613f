"""The parallel engine (seed 000 §12, Fig. 14-15): job graph, agreement with `tape`, determinism
under randomised scheduling, no deadlock with nested forks, and the work/span counters.

Expected job graphs and numbers are derived by hand from the paper (notes §10.5), never from the code.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mpmath
import pytest

import advalidate as adv
from advalidate.impl.engine import LINEAR_COST_CONSTANT
from advalidate.impl.seed000 import parallel
from advalidate.impl.seed000.parallel import THREADS_ENV, ParallelStage, default_threads
from advalidate.lang.errors import BudgetError, DomainError

EXAMPLES = sorted(Path(__file__).parent.parent.joinpath("examples").glob("*.adv"))
PARTICLES = Path(__file__).parent.parent.joinpath("examples", "particles.adv").read_text()
STAR = r"\((x, y) : (R, R)) -> let p = par (x * x, y * y) in fst p + snd p"


def example_input(path: Path) -> tuple[adv.Program, Any]:
    text = path.read_text()
    prog = adv.parse(text, str(path))
    line = next(ln for ln in text.splitlines() if ln.startswith("-- input:"))
    return prog, adv.parse_value(line.split(":", 1)[1].strip(), prog.input_type)


def particles(k: int, steps: int) -> tuple[adv.Program, Any]:
    """The particles benchmark (seed 000 §13) with k particles simulated with parmap for `steps` steps."""
    prog = adv.parse(PARTICLES.replace("simulate 10 p", f"simulate {steps} p"))
    base = [((1.0, 0.5), (0.0, 0.2)), ((-0.8, 1.2), (0.3, 0.0)), ((0.4, -1.0), (-0.2, 0.1)), ((1.5, 1.5), (0.0, -0.3))]
    x = [((a + 0.01 * i, b - 0.02 * i), v) for i in range(k) for ((a, b), v) in [base[i % 4]]]
    return prog, x


def grad(eng: Any, prog: adv.Program, x: Any, dy: Any = None, numeric: str = "float") -> tuple[Any, Any, Any]:
    y, back = eng.vjp(prog, x, numeric=numeric)
    if dy is None:
        dy = adv.unflatten(y, [1.0] * len(adv.flatten(y)))
    return y, back(dy), back


def finishes(fn: Callable[[], Any], seconds: float = 60.0) -> Any:
    """fn(), failing (instead of hanging) if it has not returned within `seconds`: a deadlock."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # re-raised below
            box["error"] = exc

    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(seconds)
    assert not th.is_alive(), f"no result after {seconds} s: deadlock"
    if "error" in box:
        raise box["error"]
    return box["value"]


def close(a: Any, b: Any, rel: float) -> bool:
    return abs(a - b) <= rel * max(1, abs(a), abs(b))


def assert_same_as_tape(prog: adv.Program, x: Any, eng: Any, numeric: str, rng: random.Random) -> adv.Program:
    y1, back1 = adv.engine("tape").vjp(prog, x, numeric=numeric)
    dy = adv.unflatten(y1, [rng.uniform(-2.0, 2.0) for _ in adv.flatten(y1)])
    y2, g2, back2 = grad(eng, prog, x, dy, numeric)
    g1 = back1(dy)
    assert adv.flatten(y2) == adv.flatten(y1)  # the primal computation is the same, op for op
    rel = 1e-10 if numeric == "float" else mpmath.mpf("1e-30")
    for a, b in zip(adv.flatten(g1), adv.flatten(g2), strict=True):
        assert close(a, b, rel), (a, b)
    assert adv.unflatten(g1, [0.0] * len(adv.flatten(g1))) == adv.unflatten(g2, [0.0] * len(adv.flatten(g2)))
    # Each backpropagator (tape entry) is resolved exactly once; primal_ops is counted as tape counts it.
    assert back2.runtime.calls and set(back2.runtime.calls) == {1}
    assert back2.stats["backprop_calls_max"] == 1
    assert back2.stats["primal_ops"] == back1.stats["primal_ops"]
    assert back2.stats["backprops_created"] == back1.stats["backprops_created"]
    return prog


# ---- the job graph of §12 --------------------------------------------------------------------


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_fork_example_of_notes_10_5(threads: int) -> None:
    # (x*x) ★ (y*y) at (3, 4): main job α = 0 tapes the inputs (n = 2), the fork makes β = 1 (x*x),
    # γ = 2 (y*y), they join into δ = 3 (the +). JobDescr (Fork (Start,0,2) (Start,1,1) (Start,2,1), 3, 1).
    # Value 9 + 16 = 25, gradient (2x, 2y) = (6, 8).
    y, g, back = grad(ParallelStage(threads=threads), adv.parse(STAR), (3.0, 4.0))
    assert (y, g) == (25.0, (6.0, 8.0))
    rt = back.runtime
    assert rt.job_descr() == (("Fork", ("Start", 0, 2), [("Start", 1, 1), ("Start", 2, 1)]), 3, 1)
    s = back.stats
    assert s["jobs"] == 4
    # Forward cost of a job: 1 + entries + contributions. α: 1 + 2 + 0; β, γ: 1 + 1 + 2; δ: 1 + 1 + 2.
    assert s["forward_work"] == 3 + 4 + 4 + 4
    assert s["forward_span"] == 3 + max(4, 4) + 4
    # Reverse: 1 + 2n + e per job; β and γ each hand one outside cell (x resp. y) to the join; I = 2.
    assert s["reverse_work"] == (1 + 4) + 2 * (1 + 2 + 2) + (1 + 2 + 2) + 2 + 2 == s["reverse_cost"]
    assert s["reverse_span"] == (1 + 2 + 2) + 2 + (1 + 2 + 2) + (1 + 4) + 2


def test_compound_ids_restart_in_every_job() -> None:
    # A seq ID counts the entries of its own job: the output x*x + y*y of the join job is (3, 0).
    prog = adv.parse(STAR)
    _, back = ParallelStage(threads=2).vjp(prog, (3.0, 4.0))
    rt = back.runtime
    assert [(j.num, len(j.tape)) for j in rt.jobs] == [(0, 2), (1, 1), (2, 1), (3, 1)]
    # The contributions of β and γ point at the inputs (0, 0) and (0, 1) of the main job.
    beta, gamma = rt.jobs[1], rt.jobs[2]
    assert rt.compound(beta.tape[0][1]) == (0, 0)
    assert rt.compound(gamma.tape[0][1]) == (0, 1)
    delta = rt.jobs[3]
    assert [rt.compound(delta.tape[0][k]) for k in (1, 3)] == [(1, 0), (2, 0)]


def test_parmap_is_a_k_ary_fork() -> None:
    # parmap over k elements: one fork with k subtasks (each one job) joining into one continuation.
    prog = adv.parse(r"\(xs : [R]) -> sum (parmap (\x -> x * x) xs)")
    y, g, back = grad(ParallelStage(threads=3), prog, [1.0, 2.0, 3.0, 4.0, 5.0])
    assert y == 55.0 and g == [2.0, 4.0, 6.0, 8.0, 10.0]
    hist, jid, _ = back.runtime.job_descr()
    assert hist[0] == "Fork" and [c[1] for c in hist[2]] == [1, 2, 3, 4, 5] and jid == 6
    assert back.stats["jobs"] == 7


def test_job_graph_is_the_same_on_every_run() -> None:
    prog, x = example_input(Path(__file__).parent.parent / "examples" / "par.adv")
    descrs = {
        repr(ParallelStage(threads=1 + i % 4, test_mode=True, seed=i).vjp(prog, x)[1].runtime.job_descr())
        for i in range(20)
    }
    assert len(descrs) == 1


# ---- agreement with tape --------------------------------------------------------------------


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize("numeric", ["float", "mp"])
def test_examples_agree_with_tape(path: Path, numeric: str) -> None:
    prog, x = example_input(path)
    rng = random.Random(path.stem)
    for threads in (1, 3):
        assert_same_as_tape(prog, x, ParallelStage(threads=threads), numeric, rng)


def random_program(rng: random.Random, size: int) -> str:
    """A random fork-join program over four real inputs: nested par, parmap, let, letrec with par.

    Every fork's branches read the inputs and outer variables, so parallel tasks contribute to the
    same outer cells, and forks nest inside forks (the job graphs of Fig. 13)."""
    counter = iter(range(10**6))

    def expr(depth: int, scope: list[str]) -> str:
        if depth <= 0 or rng.random() < 0.15:
            return rng.choice(scope) if rng.random() < 0.8 else f"{rng.uniform(-1.5, 1.5):.3f}"
        d = depth - 1
        kind = rng.choice(["unary", "binary", "binary", "let", "par", "par", "parmap", "rec"])
        n = next(counter)
        if kind == "unary":
            return f"{rng.choice(['sin', 'cos', 'tanh', 'atan'])} ({expr(d, scope)})"
        if kind == "binary":
            return f"({expr(d, scope)} {rng.choice(['+', '-', '*'])} {expr(d, scope)})"
        if kind == "let":
            return f"(let v{n} = {expr(d, scope)} in {expr(d, [*scope, f'v{n}'])})"
        if kind == "par":
            left, right = expr(d, scope), expr(d, scope)
            return f"(let (p{n}, q{n}) = par ({left}, {right}) in {expr(d, [*scope, f'p{n}', f'q{n}'])})"
        if kind == "parmap":
            items = ", ".join(expr(d - 1, scope) for _ in range(rng.randint(1, 4)))
            return f"(sum (parmap (\\t{n} -> {expr(d, [*scope, f't{n}'])}) [{items}]))"
        body = f"let (a{n}, b{n}) = par (g{n} (m{n} - 1) (w{n} * 0.9), {expr(d - 1, [*scope, f'w{n}'])}) in a{n} * b{n}"
        return (
            f"(letrec g{n} (m{n} : Z) (w{n} : R) : R = if m{n} <= 0 then w{n} else {body} "
            f"in g{n} {rng.randint(1, 3)} ({expr(d, scope)}))"
        )

    scope = ["x0", "x1", "x2", "x3"]
    body = expr(size, scope)
    if rng.random() < 0.3:
        body = f"par ({body}, {expr(size - 1, scope)})"
    return rf"\((x0, x1, x2, x3) : (R, R, R, R)) -> {body}"


@pytest.mark.parametrize("seed", range(40))
def test_random_fork_join_programs_agree_with_tape(seed: int) -> None:
    rng = random.Random(seed)
    prog = adv.parse(random_program(rng, 5))
    x = tuple(rng.uniform(-1.0, 1.0) for _ in range(4))
    x = (x[0], (x[1], (x[2], x[3])))
    eng = ParallelStage(threads=1 + seed % 4, test_mode=seed % 2 == 0, seed=seed)
    assert_same_as_tape(prog, x, eng, "float", rng)
    if seed % 4 == 0:
        assert_same_as_tape(prog, x, eng, "mp", rng)


# ---- determinism -----------------------------------------------------------------------------

SHARED = r"""
\((a, b, xs) : (R, R, [R])) ->
  let s = sum (parmap (\x -> let (u, v) = par (a * x + b, sin (a * x) * b) in u * v + a * b) xs) in
  let (p, q) = par (s * a, par (b * s + a, tanh (a + b) * s)) in
  p + fst q * snd q
"""


def _bits(v: Any) -> list[str]:
    return [r.hex() for r in adv.flatten(v)]


def test_bitwise_identical_over_1000_randomised_runs() -> None:
    # Every parallel task adds into a and b (the main job's cells): with compare-and-swap the order
    # of those additions, hence the last bits, would follow the scheduling. Here they must not.
    prog = adv.parse(SHARED)
    x = (0.7, (-1.3, [0.1 * i - 0.45 for i in range(10)]))
    dy = 1.0
    y0, g0, _ = grad(ParallelStage(threads=1), prog, x, dy)
    expected = (_bits(y0), _bits(g0))
    for i in range(1000):
        eng = ParallelStage(threads=1 + i % 4, test_mode=True, seed=i)
        y, g, back = grad(eng, prog, x, dy)
        assert (_bits(y), _bits(g)) == expected, f"run {i}"
        assert back.stats["backprop_calls_max"] == 1
    _, g_tape, _ = grad(adv.engine("tape"), prog, x, dy)
    assert all(close(a, b, 1e-12) for a, b in zip(adv.flatten(g0), adv.flatten(g_tape), strict=True))


def test_stats_do_not_depend_on_threads_or_scheduling() -> None:
    prog = adv.parse(SHARED)
    x = (0.7, (-1.3, [0.1 * i for i in range(6)]))
    seen = set()
    for i in range(24):
        _, _, back = grad(ParallelStage(threads=1 + i % 4, test_mode=i % 2 == 1, seed=i), prog, x)
        seen.add(tuple(sorted(back.stats.items())))
    assert len(seen) == 1


def test_free_threaded_configuration_changes_nothing_but_speed(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without the GIL the engine keeps the domain's bookkeeping and the call budget per thread
    # (FREE_THREADED). Forced on here, under any build, it must give the same bits and stats.
    prog = adv.parse(SHARED)
    x = (0.7, (-1.3, [0.1 * i - 0.45 for i in range(10)]))
    y0, g0, back0 = grad(ParallelStage(threads=1), prog, x, 1.0)
    monkeypatch.setattr(parallel, "FREE_THREADED", True)
    for i in range(20):
        y, g, back = grad(ParallelStage(threads=1 + i % 4, test_mode=True, seed=i), prog, x, 1.0)
        assert (_bits(y), _bits(g)) == (_bits(y0), _bits(g0)), f"run {i}"
        assert back.stats == back0.stats
        assert isinstance(back.runtime.ops, threading.local)
    with pytest.raises(BudgetError):
        finishes(lambda: ParallelStage(threads=2).vjp(adv.parse(PAR_CHAIN), 0.3, budget=50))


# ---- no deadlock with nested forks (§13.1) ----------------------------------------------------

PAR_CHAIN = r"""
\(x : R) ->
  letrec f (n : Z) (y : R) : R =
    if n <= 0 then y * y
    else let (a, b) = par (f (n - 1) (y * 0.99), sin y) in a + 0.5 * b
  in f 40 x
"""
PAR_CHAIN_RIGHT = r"""
\(x : R) ->
  letrec f (n : Z) (y : R) : R =
    if n <= 0 then y * y
    else let (a, b) = par (cos y, f (n - 1) (y * 0.99)) in a * 0.5 + b
  in f 40 x
"""
PARMAP_FORKS = r"""
\(xs : [R]) ->
  sum (parmap (\x ->
    let (u, v) = par (x * x, sum (parmap (\z -> let (p, q) = par (z * x, sin z) in p + q) [x, 0.5 * x, 0.25 * x])) in
    u * v) xs)
"""


def _nested_literal(depth: int) -> str:
    e = "x * 1.0"
    for i in range(depth):
        e = f"(let (a{i}, b{i}) = par ({e}, sin (x * {i + 1}.0)) in a{i} + b{i})"
    return rf"\(x : R) -> {e}"


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("text", [PAR_CHAIN, PAR_CHAIN_RIGHT, _nested_literal(40)], ids=["left", "right", "literal"])
def test_par_nested_40_deep_on_a_small_pool(threads: int, text: str) -> None:
    prog = adv.parse(text)
    for test_mode in (False, True):
        eng = ParallelStage(threads=threads, test_mode=test_mode, seed=7)
        y, g, back = finishes(lambda eng=eng: grad(eng, prog, 0.3))
        y1, g1, _ = grad(adv.engine("tape"), prog, 0.3)
        assert y == y1 and close(g, g1, 1e-12)
        assert back.stats["jobs"] == 1 + 3 * 40


@pytest.mark.parametrize("threads", [2, 3])
def test_parmap_over_64_elements_each_forking_again(threads: int) -> None:
    prog = adv.parse(PARMAP_FORKS)
    xs = [0.01 * i - 0.3 for i in range(64)]
    eng = ParallelStage(threads=threads, test_mode=True, seed=threads)
    y, g, back = finishes(lambda: grad(eng, prog, xs))
    y1, g1, _ = grad(adv.engine("tape"), prog, xs)
    assert close(y, y1, 0) and all(close(a, b, 1e-12) for a, b in zip(g, g1, strict=True))
    # Main job, continuation, and per element: its first job, x * x, the inner sum's first job,
    # 3 inner elements of (first job, p, q, join), the inner join, the element's join.
    assert back.stats["jobs"] == 2 + 64 * (1 + 1 + 1 + 3 * 4 + 1 + 1)


def test_concurrent_vjps_share_the_pool() -> None:
    prog = adv.parse(PARMAP_FORKS)
    xs = [0.1 * i for i in range(8)]
    _, expected, _ = grad(ParallelStage(threads=1), prog, xs)
    out: list[Any] = [None] * 4

    def one(i: int) -> None:
        out[i] = grad(ParallelStage(threads=2, test_mode=True, seed=i), prog, xs)[1]

    def all_four() -> None:
        threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    finishes(all_four)
    assert all(_bits(g) == _bits(expected) for g in out)


# ---- errors inside jobs -----------------------------------------------------------------------


@pytest.mark.parametrize("threads", [1, 3])
def test_domain_error_in_a_branch_is_reported_and_the_pool_survives(threads: int) -> None:
    prog = adv.parse(r"\(xs : [R]) -> sum (parmap (\x -> let (a, b) = par (log x, x * x) in a + b) xs)")
    eng = ParallelStage(threads=threads)
    with pytest.raises(DomainError):
        finishes(lambda: eng.vjp(prog, [1.0, 2.0, -1.0, 3.0]))
    y, g, _ = finishes(lambda: grad(eng, prog, [1.0, 2.0]))
    assert g == [3.0, 4.5]  # 1/x + 2x


def test_budget_error_in_a_branch() -> None:
    prog = adv.parse(PAR_CHAIN)
    with pytest.raises(BudgetError):
        finishes(lambda: ParallelStage(threads=2).vjp(prog, 0.3, budget=50))


# ---- work, span, complexity --------------------------------------------------------------------


@pytest.mark.parametrize("k", [4, 8])
def test_particles_reverse_span_is_a_kth_of_the_work(k: int) -> None:
    # k independent particles: everything but the inputs and the final sum runs in k parallel tasks.
    # 100 steps (the paper: 1000) make the sequential part (inputs, the sum, the merges) small.
    prog, x = particles(k, 100)
    _, _, back = grad(ParallelStage(threads=2), prog, x)
    s = back.stats
    assert s["reverse_work"] / s["reverse_span"] >= 0.95 * k
    assert s["forward_work"] / s["forward_span"] >= 0.95 * k
    assert s["jobs"] == k + 2


def test_work_and_span_on_a_program_without_par() -> None:
    prog, x = example_input(Path(__file__).parent.parent / "examples" / "fig1.adv")
    _, g, back = grad(ParallelStage(), prog, x)
    s = back.stats
    assert g == (37.0, 12.0)
    assert s["jobs"] == 1 and s["forward_work"] == s["forward_span"] and s["reverse_work"] == s["reverse_span"]
    # One job of n = 4 entries (x, y, z = x + y, x * z) with 4 contributions: 1 + 2·4 + 4, plus I = 2.
    assert s["reverse_work"] == 1 + 8 + 4 + 2 == s["reverse_cost"]


def test_linear_bound_on_examples_and_random_programs() -> None:
    cases = [example_input(p) for p in EXAMPLES] + [particles(8, 20)]
    for seed in range(10):
        rng = random.Random(seed)
        cases.append((adv.parse(random_program(rng, 5)), (0.1, (0.2, (0.3, 0.4)))))
    for prog, x in cases:
        _, _, back = grad(ParallelStage(threads=2), prog, x)
        s = back.stats
        assert s["reverse_cost"] <= LINEAR_COST_CONSTANT * (s["primal_ops"] + s["input_size"] + s["output_size"])
        assert s["forward_span"] <= s["forward_work"] and s["reverse_span"] <= s["reverse_work"]
        assert s["jobs"] <= s["forward_work"]


# ---- configuration and presentation ----------------------------------------------------------


def test_thread_count_from_constructor_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(THREADS_ENV, raising=False)
    assert default_threads() == 2 and ParallelStage().threads == 2
    monkeypatch.setenv(THREADS_ENV, "3")
    assert ParallelStage().threads == 3 and ParallelStage(threads=1).threads == 1
    assert adv.engine("parallel").threads == 3
    monkeypatch.setenv(THREADS_ENV, "many")
    with pytest.raises(ValueError):
        ParallelStage()
    with pytest.raises(ValueError):
        ParallelStage(threads=0)


def test_registered_after_tape_and_shown_with_fork() -> None:
    names = adv.engine_names()
    assert names.index("parallel") == names.index("tape") + 1
    text = adv.show(adv.parse(STAR), "parallel")
    assert "§12" in text and "fork(" in text and "tape(" in text
