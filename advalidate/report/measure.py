"""Run the program families of `advalidate.generators.families` at growing n on every engine.

Everything recorded is deterministic except the wall times: inputs come from the families'
seeded inputs, sizes from a fixed grid, and whether a run is skipped depends only on operation
counts (never on time), so the same settings measure the same points on every machine.

The grid: n = 1, 2, 4, ... up to the family's largest n for this mode (`Settings.n_max`, at most
the family's own `max_n`), with that largest n itself as the last point. An engine skips a size
when the reverse cost predicted from its previous two sizes (a power law through them) exceeds
`Settings.cost_budget`, and every size after a skip or a budget error (recorded as "skipped: over
budget"). Outside AD systems (`PEERS`) report no costs: they are timed only, at sizes whose
primal size T + I + O stays within `Settings.peer_size`.
"""

from __future__ import annotations

import gc
import importlib.util
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..impl.engine import value_size
from ..lang.errors import AdvError, BudgetError
from ..lang.program import Program
from ..lang.values import flatten, unflatten
from ..names import ADAPTERS
from ..oracles.verdict import clip

# The reverse-mode stages of seed 000, in the paper's order, and the ones §9-§12 make linear.
STAGES = ("naive", "staged", "cayley", "sparse", "mutable", "tape", "parallel")
LINEAR_STAGES = ("mutable", "tape", "parallel")
PEERS = ("autograd", "jax", "torch")
SKIPPED = "skipped: over budget"
PARALLEL_KEYS = ("forward_work", "forward_span", "reverse_work", "reverse_span", "jobs")


@dataclass(frozen=True)
class Settings:
    """What a report measures; `Settings.quick()` and `Settings.full()` are the two modes."""

    mode: str
    n_max: int  # the largest n of a family without a smaller own limit
    n_max_by_family: dict[str, int]  # per-family largest n (overrides n_max)
    cost_budget: int  # predicted reverse_cost above which a run is skipped
    peer_size: dict[str, int]  # largest T + I + O timed per outside system
    grids: dict[str, tuple[int, ...]] = field(default_factory=dict)  # explicit per-family grids
    repeats: int = 1  # timing repeats (the minimum is kept); costs are exact anyway
    # The array families of seed 004 (`advalidate.report.arrays`): largest n, per-family largest n,
    # and the predicted reverse cost above which a stage skips the larger sizes.
    array_n_max: int = 128
    array_n_max_by_family: dict[str, int] = field(default_factory=dict)
    array_cost_budget: int = 300_000
    # Seed 001's section (`advalidate.report.nested`): the sizes n of the HVP family.
    nested_ns: tuple[int, ...] = (1, 2, 4, 8, 16)

    @staticmethod
    def quick() -> Settings:
        return Settings(
            mode="quick",
            n_max=128,
            n_max_by_family={"dot": 512, "neural": 100, "particles": 100, "rotate_vec_by_quat": 100},
            cost_budget=400_000,
            peer_size={"autograd": 2_000, "jax": 0, "torch": 1_000},
            grids={"summatvec": _squares(32)},
            array_n_max=128,
            array_n_max_by_family={"matvec": 32, "matmul": 16, "matmul_first_order": 16, "mlp2": 32},
            array_cost_budget=300_000,
            nested_ns=(1, 2, 4, 8, 16),
        )

    @staticmethod
    def full() -> Settings:
        return Settings(
            mode="full",
            n_max=2048,
            n_max_by_family={"dot": 4096, "summatvec": 8192, "neural": 128, "particles": 1000},
            cost_budget=8_000_000,
            peer_size={"autograd": 20_000, "jax": 150, "torch": 20_000},
            grids={"summatvec": _squares(128)},
            array_n_max=2048,
            # matvec stops at 128 although its max_n is 256: its input draws n² distinct magnitudes of
            # 4 decimals in [0.1, 2.0], of which there are only ~17,000 (families._distinct).
            array_n_max_by_family={"matvec": 128, "matmul": 64, "matmul_first_order": 64, "mlp2": 128},
            array_cost_budget=4_000_000,
            nested_ns=(1, 2, 4, 8, 16, 32, 64),
        )


def _squares(k_max: int) -> tuple[int, ...]:
    # sum-mat-vec's n is the matrix's element count, a k x k matrix with k = isqrt(n): square n only.
    out, k = [], 1
    while k <= k_max:
        out.append(k * k)
        k *= 2
    return tuple(out)


@dataclass
class Point:
    """One run of one engine on one family member."""

    n: int
    primal_ops: int
    input_size: int
    output_size: int
    status: str = "ok"  # "ok", SKIPPED, or "error: ..."
    reverse_cost: int | None = None
    backprop_calls_max: int | None = None
    seconds: float | None = None  # wall time of vjp + back: noisy
    agrees: bool | None = None  # gradient equal (to 1e-9 relative) to the reference engine's
    extra: dict[str, int] = field(default_factory=dict)  # parallel: work, span, jobs

    @property
    def size(self) -> int:
        """T + I + O: the primal's operations plus input and output size (§3's right-hand side)."""
        return self.primal_ops + self.input_size + self.output_size

    @property
    def ratio(self) -> float | None:
        if self.reverse_cost is None or self.size == 0:
            return None
        return self.reverse_cost / self.size


@dataclass
class Series:
    engine: str
    points: list[Point]

    def ok(self) -> list[Point]:
        return [p for p in self.points if p.status == "ok"]


@dataclass
class FamilyResult:
    name: str
    description: str
    features: list[str]
    sample: str  # the program's text at a small n
    sample_n: int
    sizes: list[Point]  # the grid with the primal's size at each n
    series: dict[str, Series]  # by engine (stages and peers)
    primal_seconds: dict[int, float]  # plain-float `to_python` time per n (noisy)

    @property
    def parallel(self) -> bool:
        return "par" in self.features


def family_grid(fam: Any, settings: Settings) -> list[int]:
    if fam.name in settings.grids:
        return [n for n in settings.grids[fam.name] if fam.max_n is None or n <= fam.max_n]
    limit = settings.n_max_by_family.get(fam.name, settings.n_max)
    if fam.max_n is not None:
        limit = min(limit, fam.max_n)
    ns, n = [], 1
    while n < limit:
        ns.append(n)
        n *= 2
    if not ns or limit > ns[-1]:
        ns.append(limit)
    if len(ns) >= 2 and ns[-1] < ns[-2] * 1.25:  # 128 then 150: keep the larger only
        del ns[-2]
    return ns


def available_peers() -> list[str]:
    """The outside AD systems whose library is installed (their adapters are then loadable): the
    module each one needs is its entry's in `names.ADAPTERS`."""
    return [p for p in PEERS if importlib.util.find_spec(ADAPTERS[p][1]) is not None]


def ones_like(y: Any) -> Any:
    return unflatten(y, [1.0] * len(flatten(y)))


def _predict(points: list[Point], n: int) -> float | None:
    ok = [p for p in points if p.status == "ok" and p.reverse_cost]
    if len(ok) < 2:
        return None
    (n0, c0), (n1, c1) = (ok[-2].n, ok[-2].reverse_cost), (ok[-1].n, ok[-1].reverse_cost)
    if n1 <= n0 or c0 <= 0:
        return None
    slope = max(math.log(c1 / c0) / math.log(n1 / n0), 1.0)
    return c1 * (n / n1) ** slope


def _close(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and all(abs(float(x) - float(y)) <= 1e-9 * max(1.0, abs(float(y))) for x, y in zip(a, b))


def _primal_size(prog: Program, x: Any) -> tuple[int, int, int]:
    """(T, I, O): primitive operations of a counting plain-float run, input and output size."""
    from ..lang.numeric import FloatOps
    from ..lang.program import to_python

    ops = FloatOps()
    y = to_python(prog, ops)(x)
    return ops.ops, value_size(x), value_size(y)


def _plain_seconds(prog: Program, x: Any) -> float:
    from .plainops import plain_function

    f = plain_function(prog)
    t = time.perf_counter()
    f(x)
    return time.perf_counter() - t


def _timed(fn: Callable[[], Any], repeats: int) -> tuple[Any, float]:
    best, out = math.inf, None
    for _ in range(max(1, repeats)):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return out, best


def measure_family(
    fam: Any,
    engines: Iterable[str],
    settings: Settings,
    peers: Iterable[str] = (),
    progress: Callable[[str], None] | None = None,
) -> FamilyResult:
    from ..impl import engine as get_engine

    gc.collect()  # once per family: a collection per run would cost more than most runs
    ns = family_grid(fam, settings)
    cases = [(n, fam.program(n), fam.input(n)) for n in ns]
    sizes = [Point(n, *_primal_size(prog, x)) for n, prog, x in cases]
    primal_seconds = {n: _plain_seconds(prog, x) for n, prog, x in cases}
    reference: dict[int, list[Any]] = {}
    series: dict[str, Series] = {}
    for name in engines:
        eng = get_engine(name)
        _warm_up(eng, cases[0])
        pts: list[Point] = []
        over = False
        for (n, prog, x), sz in zip(cases, sizes):
            p = Point(n, sz.primal_ops, sz.input_size, sz.output_size)
            pred = _predict(pts, n)
            if over or (pred is not None and pred > settings.cost_budget):
                p.status, over = SKIPPED, True
                pts.append(p)
                continue

            def run(eng: Any = eng, prog: Program = prog, x: Any = x) -> tuple[Any, Any]:
                y, back = eng.vjp(prog, x)
                return back(ones_like(y)), back

            try:
                (dx, back), p.seconds = _timed(run, settings.repeats)
            except BudgetError:
                p.status, over = SKIPPED, True
                pts.append(p)
                continue
            except (AdvError, RecursionError) as exc:
                p.status = clip(f"error: {type(exc).__name__}: {exc}", 200)
                pts.append(p)
                continue
            s = back.stats
            p.reverse_cost = int(s["reverse_cost"])
            p.backprop_calls_max = int(s["backprop_calls_max"])
            p.extra = {k: int(s[k]) for k in PARALLEL_KEYS if k in s}
            g = flatten(dx)
            if n not in reference:
                reference[n] = g
            p.agrees = _close(g, reference[n])
            pts.append(p)
        series[name] = Series(name, pts)
        if progress:
            progress(f"{fam.name}: {name} " + " ".join(_brief(p) for p in pts))
    for name in peers:
        series[name] = _measure_peer(name, cases, sizes, settings, reference)
        if progress:
            progress(f"{fam.name}: {name} " + " ".join(_brief(p) for p in series[name].points))
    small = ns[min(2, len(ns) - 1)]
    return FamilyResult(
        fam.name,
        fam.description,
        sorted(fam.features),
        fam.source(small),
        small,
        sizes,
        series,
        primal_seconds,
    )


def _measure_peer(name: str, cases: list, sizes: list[Point], settings: Settings, reference: dict) -> Series:
    from ..impl import engine as get_engine

    eng = get_engine(name)
    limit = settings.peer_size.get(name, 0)
    _warm_up(eng, cases[0])
    pts = []
    for (n, prog, x), sz in zip(cases, sizes):
        p = Point(n, sz.primal_ops, sz.input_size, sz.output_size)
        if sz.size > limit:
            p.status = SKIPPED
            pts.append(p)
            continue

        def run(prog: Program = prog, x: Any = x) -> Any:
            y, back = eng.vjp(prog, x)
            return back(ones_like(y))

        try:
            dx, p.seconds = _timed(run, settings.repeats)
        except AdvError as exc:
            p.status = clip(f"error: {type(exc).__name__}: {exc}", 200)
            pts.append(p)
            continue
        if n in reference:
            p.agrees = _close(flatten(dx), reference[n])
        pts.append(p)
    return Series(name, pts)


def _warm_up(eng: Any, case: tuple[int, Program, Any]) -> None:
    """One untimed run at the smallest size: imports, thread pools and caches are then ready."""
    _, prog, x = case
    try:
        y, back = eng.vjp(prog, x)
        back(ones_like(y))
    except (AdvError, RecursionError):
        pass


def _brief(p: Point) -> str:
    if p.status != "ok":
        return f"{p.n}:-"
    return f"{p.n}:{p.reverse_cost if p.reverse_cost is not None else ''}"
