"""Stage `parallel`: fork-join parallel dual-numbers reverse AD (seed 000 §12, Fig. 12-15).

Forward pass (§12.1-12.3). `par (s, t)` is translated to `fork(\\_ -> D[s], \\_ -> D[t])` and
`parmap f xs` forks one thunk `\\_ -> f x` per element (the dynamic-arity ★ of §12.1). A fork
runs its thunks as *jobs* on a thread pool: the forking job α ends, every thunk starts a task in
a fresh job with history `Start`, and when all of them have finished (in their terminal jobs
β'₁ … β'ₖ) evaluation continues in a new job δ whose history is `Fork α [β'₁ … β'ₖ]` (the
JobDescr of Fig. 14 with a k-ary fork). Every job keeps its own §10.3 tape, so an ID is the
compound ID `(job, seq)` of §12.2: the sequential ID restarts at 0 in each job and counts that
job's tape entries. The input reals are taped in the main job (job 0, Errata E10). A compound ID
is stored packed in one integer, `job.origin + seq` with `origin = key · 2^40` for a key unique
to the job: a tape entry then holds only floats and integers, which Python's cyclic garbage
collector stops tracking, as it does for `tape`'s entries (a tuple holding the job itself would
stay tracked, and each collection would walk the whole tape: about 1.2× the time of `tape` on
particles with 1,000 steps).

Job IDs. The paper draws job IDs from an atomic counter, so which job gets which number depends
on the scheduling. Here that counter only gives each job its key (the packing of its IDs, never
shown and never used for ordering); its number is assigned when the forward pass ends,
canonically: depth-first over the job graph, so that
every task (a job chain with all its nested subtasks) occupies a contiguous range of numbers, the
forking job before its subtasks before the joining job. The §10.5 example numbers α = 0, β = 1,
γ = 2, δ = 3. IDs, stats and gradients are therefore the same on every run.

Reverse pass (§12.4, Fig. 15). SResolve walks the job graph from the terminal job back to job 0:
`resolveTask` resolves the current job (its tape from the highest seq ID down), then, if the job
began at a join, resolves the joined subtasks *in parallel* (forks of the primal are joins of the
dual) and finally the forking job. The reference implementation lets parallel subtasks add into
shared cells with compare-and-swap, so its result depends on the order of the additions. Here it
does not: a task adds directly only into the cells of its own jobs and of its nested subtasks (no
other running task can touch those: they are ≤_c-incomparable with every parallel task). Every
other contribution (to a job outside the task, such as an input) goes into the task's own buffer.
At the join of the dual, the buffers of the k subtasks are merged into the parent in child order
1 … k. Every floating-point sum is then formed in one fixed order, and gradients are bitwise
identical across runs and thread counts. They agree with `tape` up to reassociation.

Thread pool (§13.1). Forks nest (inside tasks, and again in the reverse pass), and a pool whose
workers block on their children deadlocks once the nesting reaches the pool size. Here a waiting
job never just blocks: it first runs its own unclaimed children itself and then helps run any
queued task until its children are done (work-helping join). This cannot deadlock: a frame only
ever waits for tasks started after it, so the waits-for relation follows start times and has no
cycle. The calling thread takes part, so `threads = 1` has no worker threads at all (children run
inline, in order) and `threads = n` has n - 1 workers, all `deep_thread_factory` threads. Nothing
relies on the GIL: pool state changes under one lock, each job is written by one thread at a time,
and counters are per job, or per thread (the domain's bookkeeping, the call budget), so the engine
runs unchanged on a free-threaded CPython. There, a counter that every thread writes on every
call would serialise them (its cache line moves between the cores at each write), so without the
GIL the domain's bookkeeping and the call budget are kept per thread (`FREE_THREADED`). With the
GIL only one thread runs at a time anyway, and a `threading.local` counter would only cost time
(updating one takes about 4× as long), so there they stay shared.

Cost model (the units of `tape`'s `reverse_cost`):
    forward cost of a job = 1 (its JobDescr) + n (tape entries written) + e (contributions written)
    reverse cost of a job = 1 + n (allocating its adjoint array) + n (entries visited) + e
    merging a subtask's buffer at a join costs one per buffered cell; reading the gradient costs I.
`reverse_cost` = `reverse_work` = the sum of all of these. A span is the longest path through
the job graph: span(task) = the cost of its jobs + Σ over its forks of (merges + the largest
span among the subtasks). `forward_work`, `forward_span`, `reverse_work`, `reverse_span` and
`jobs` are added to `back.stats`.

Configuration: `ParallelStage(threads=None, test_mode=False, seed=0)`; `threads` defaults to the
environment variable `ADVALIDATE_THREADS`, else 2. `test_mode` injects random yields and short
sleeps at every fork, task start and end, join, merge and now and then at a tape write, and
randomises which child the forking thread runs itself, to shake out scheduling dependence.
"""

from __future__ import annotations

import os
import random
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from ...lang import core as C
from ...lang.compile import Budget, ThreadBudget, cells_to_list, list_to_cells, thread_budget
from ...lang.deep import deep_thread_factory
from ...lang.errors import SettingError, printable
from ...lang.numeric import DEFAULT_DPS, ReferenceOps, reference_ops
from ...lang.program import DEFAULT_BUDGET, Program
from ...lang.types import Type
from ..engine import ARRAY_FEATURES, Back
from .tape import TapeRules, TapeRuntime, TapeStage
from .transform import Transformer
from .wrapper import deinterleave, interleave

THREADS_ENV = "ADVALIDATE_THREADS"
DEFAULT_THREADS = 2
MAX_THREADS = 256  # each a thread with a 1 GiB stack reservation (`deep_thread_factory`)
#: Steps of the call budget each task of a fork (`par`, `parmap`) is charged besides its calls: a
#: task costs a job, a hand-off to the pool and a join, about as much time and memory as this many
#: calls of `tape` (a `par` recursion 2^40 deep ran 250 s and 4.4 GB before the budget stopped it,
#: `tape` 8 s and 0.3 GB: issue #42), so a budget bounds the parallel stage as it bounds `tape`.
FORK_STEPS = 100
SEQ_BITS = 40  # a packed compound ID is origin + seq with origin = key << SEQ_BITS
SEQ_MASK = (1 << SEQ_BITS) - 1
# Whether Python threads run at the same time here (a free-threaded CPython with the GIL off).
FREE_THREADED = not getattr(sys, "_is_gil_enabled", lambda: True)()


# ---- the job graph (Fig. 14) ----------------------------------------------------------------


class Start:
    """The history of the first job of a task."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Start"


START = Start()


class Fork:
    """`Fork jd0 [jd1 … jdk]`: the job `parent` forked k subtasks whose terminal jobs are `children`."""

    __slots__ = ("parent", "children")

    def __init__(self, parent: Job, children: list[Job]) -> None:
        self.parent = parent
        self.children = children


class Job:
    """A job: a maximal sequential stretch of a task, with its own tape.

    Its JobDescr `(history, jid, n)` is `(self.history, self.num, len(self.tape))`. Its tape
    entries have the packed IDs `origin + seq`. `lo`/`hi` are set on the terminal job of every
    task: the task's range of job numbers.
    """

    __slots__ = ("tape", "history", "origin", "num", "base", "ops", "lo", "hi")

    def __init__(self, history: Start | Fork, key: int) -> None:
        self.tape: list[tuple] = []
        self.history = history
        self.origin = key << SEQ_BITS
        self.num = -1
        self.base = 0  # offset of this job's entries in the flat `calls` list
        self.ops = 0  # real comparisons evaluated in this job (see ParallelRuntime.seal)
        self.lo = self.hi = 0

    def __repr__(self) -> str:
        return f"Job({self.num}, n={len(self.tape)})"


def job_descr(job: Job) -> tuple:
    """The JobDescr of Fig. 14/15 as nested tuples: `(history, jid, n)`, with history `"Start"` or
    `("Fork", descr of the forking job, [descrs of the subtasks' terminal jobs])`."""
    # Post-order without recursion: a task may hold a long chain of forks.
    done: dict[int, tuple] = {}
    stack = [job]
    while stack:
        j = stack[-1]
        h = j.history
        pending = [] if h is START else [d for d in (h.parent, *h.children) if id(d) not in done]  # type: ignore[union-attr]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        if h is START:
            done[id(j)] = ("Start", j.num, len(j.tape))
        else:
            kids = [done[id(c)] for c in h.children]  # type: ignore[union-attr]
            done[id(j)] = (("Fork", done[id(h.parent)], kids), j.num, len(j.tape))  # type: ignore[union-attr]
    return done[id(job)]


# ---- the thread pool with work-helping joins (§13.1) -----------------------------------------


class Chaos:
    """Random yields and short sleeps for `test_mode` (thread-safe)."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self._lock = threading.Lock()

    def random(self) -> float:
        with self._lock:
            return self._rng.random()

    def shuffle(self, items: list) -> None:
        with self._lock:
            self._rng.shuffle(items)

    def point(self, p: float = 1.0) -> None:
        r = self.random()
        if r >= p:
            return
        r /= p
        if r < 0.6:
            time.sleep(0)  # yield the processor
        elif r < 0.8:
            time.sleep(r * 2e-4)


class _Task:
    __slots__ = ("fn", "claimed", "done", "exc")

    def __init__(self, fn: Callable[[], None]) -> None:
        self.fn = fn
        self.claimed = False
        self.done = False
        self.exc: BaseException | None = None


class Pool:
    """`workers` large-stack daemon threads sharing one deque of tasks; joins help instead of blocking."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._cv = threading.Condition(threading.Lock())
        self._queue: deque[_Task] = deque()
        for i in range(workers):
            deep_thread_factory(self._work, f"advalidate-parallel-{i}").start()

    def _take(self, newest: bool) -> _Task | None:
        """An unclaimed queued task, claimed; the caller holds the lock."""
        q = self._queue
        while q:
            t = q.pop() if newest else q.popleft()
            if not t.claimed:
                t.claimed = True
                return t
        return None

    def _work(self) -> None:
        cv = self._cv
        while True:
            with cv:
                task = self._take(False)  # workers take the oldest (largest) tasks
                while task is None:
                    cv.wait()
                    task = self._take(False)
            self._run(task)

    def _run(self, task: _Task) -> None:
        try:
            task.fn()
        except BaseException as exc:  # handed to the joining task, which re-raises it
            task.exc = exc
        with self._cv:
            task.done = True
            self._cv.notify_all()

    def run_all(self, fns: Sequence[Callable[[], None]], chaos: Chaos | None = None) -> None:
        """Run every `fn` (possibly in parallel) and return when all are done.

        The first exception, in the order of `fns`, is re-raised once all have finished.
        """
        tasks = [_Task(fn) for fn in fns]
        if self.workers == 0 or len(tasks) == 1:
            for t in tasks:
                t.claimed = True
                self._run(t)
        else:
            cv = self._cv
            with cv:
                self._queue.extend(tasks[1:])
                cv.notify(len(tasks) - 1)
            order = list(tasks)
            if chaos is not None:
                chaos.shuffle(order)
            else:
                order[1:] = reversed(order[1:])  # the newest first, as a helper would
            for t in order:
                with cv:
                    mine = not t.claimed
                    t.claimed = True
                if mine:
                    self._run(t)
            for t in tasks:
                while not t.done:
                    with cv:
                        if t.done:
                            break
                        helped = self._take(chaos is None or chaos.random() < 0.5)
                        if helped is None:
                            cv.wait()
                            continue
                    self._run(helped)
        for t in tasks:
            if t.exc is not None:
                raise t.exc


_POOLS: dict[int, Pool] = {}
_POOLS_LOCK = threading.Lock()


def pool(threads: int) -> Pool:
    """The shared pool for `threads` executing threads (the caller plus `threads - 1` workers)."""
    with _POOLS_LOCK:
        p = _POOLS.get(threads)
        if p is None:
            p = _POOLS[threads] = Pool(threads - 1)
        return p


def default_threads() -> int:
    """`ADVALIDATE_THREADS`, else 2. A value that is not a whole number in [1, MAX_THREADS] is a
    `SettingError` (one line, exit status 2), not a traceback or 100,000 threads."""
    raw = os.environ.get(THREADS_ENV, "")
    if not raw.strip():
        return DEFAULT_THREADS
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_THREADS:
        raise SettingError(f"{THREADS_ENV} must be a whole number from 1 to {MAX_THREADS}, not {printable(raw)!r}")
    return n


# ---- the translation: par becomes a fork of two thunks ----------------------------------------


class ParallelTransformer(Transformer):
    """D[par (s, t)] = fork(\\_ -> D[s], \\_ -> D[t]) (seed 000 §12.3: D[s ★ t] = D[s] ★' D[t])."""

    def par(self, e: C.ParC) -> C.CExpr:
        return C.Op("fork", [C.Lam(self.fresh("u"), self.expr(e.left)), C.Lam(self.fresh("u"), self.expr(e.right))])


# ---- the runtime ------------------------------------------------------------------------------


class ParallelRuntime(TapeRuntime):
    """The §10.3 tape, one per job, with fork-join jobs (§12.3) and the parallel SResolve (Fig. 15)."""

    def __init__(self, numeric: str, ops: Any, threads: int, chaos: Chaos | None) -> None:
        super().__init__(numeric, ops)
        self.pool = pool(threads)
        self.chaos = chaos
        self.local = threading.local()  # `.job`: the job the current thread is running
        self.by_key: list[Job] = []  # every job, at the index of its key
        self._keys = threading.Lock()
        self.main = self.new_job(START)
        self.terminal = self.main
        self.jobs: list[Job] = []
        self.forward_stats: dict[str, int] = {}
        self.reverse_stats: dict[str, int] = {}
        self.record = self._recorder()  # the `tape` primitive (shadows TapeRuntime.record)
        self.steps: Budget | ThreadBudget = Budget(None)  # the run's (`budget`)

    def new_job(self, history: Start | Fork) -> Job:
        """A job with a fresh key (keys are internal: the numbering of `_number` is canonical)."""
        with self._keys:
            job = Job(history, len(self.by_key))
            self.by_key.append(job)
        return job

    def _recorder(self) -> Callable[..., int]:
        local, chaos = self.local, self.chaos

        def record(*contrib: Any) -> int:
            """Append a tape entry to the current job; its compound ID (job, seq), packed."""
            job = local.job
            tape = job.tape
            cid = job.origin + len(tape)
            tape.append(contrib)
            return cid

        if chaos is None:
            return record

        def record_chaos(*contrib: Any) -> int:
            chaos.point(0.02)
            return record(*contrib)

        return record_chaos

    def budget(self, limit: int | None) -> Budget | ThreadBudget:
        """The run's call budget, kept here as well: `fork` charges its tasks to it. Calls and forks
        draw on it alike and either may exhaust it, so its message says what a task costs."""
        note = f"a task of `par` or `parmap` counts {FORK_STEPS}"
        self.steps = thread_budget(limit, note) if FREE_THREADED else Budget(limit, note)
        return self.steps

    def charge(self, tasks: int) -> None:
        """`FORK_STEPS` per task of a fork, from the budget the program's calls draw on."""
        budget = self.steps
        budget.left -= FORK_STEPS * tasks
        if budget.left < 0:
            budget.overdrawn()

    def stage_prims(self) -> dict:
        local = self.local

        def counted(fn: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
            def compare(a: Any, b: Any) -> bool:
                local.job.ops += 1
                return fn(a, b)

            return compare

        prims = {
            "tape": self.record,
            "fork": lambda left, right: tuple(self.fork([left, right])),
            "parmap": lambda f, xs: list_to_cells(self.fork([_apply(f, x) for x in cells_to_list(xs)])),
        }
        prims |= {name: counted(getattr(self.ops, name)) for name in ("lt", "le", "gt", "ge")}
        return prims

    # -- forward ------------------------------------------------------------------------------

    def fork(self, thunks: list[Callable[[Any], Any]]) -> list[Any]:
        """★': end the current job, run each thunk as a task in a fresh job, join into a new job."""
        if not thunks:
            return []
        self.charge(len(thunks))
        local, chaos = self.local, self.chaos
        parent = local.job
        firsts = [self.new_job(START) for _ in thunks]
        terminals: list[Job | None] = [None] * len(thunks)
        results: list[Any] = [None] * len(thunks)

        def task(i: int) -> Callable[[], None]:
            def run() -> None:
                saved = getattr(local, "job", None)
                local.job = firsts[i]
                try:
                    if chaos is not None:
                        chaos.point()
                    results[i] = thunks[i](())
                    if chaos is not None:
                        chaos.point()
                finally:
                    terminals[i] = local.job
                    local.job = saved

            return run

        if chaos is not None:
            chaos.point()
        self.pool.run_all([task(i) for i in range(len(thunks))], chaos)
        local.job = self.new_job(Fork(parent, terminals))  # type: ignore[arg-type]
        return results

    def interleave(self, x: Any, ty: Type) -> Any:
        self.local.job = self.main
        out = interleave(x, ty, lambda r: (r, self.record()))
        self.inputs = len(self.main.tape)
        return out

    def seal(self) -> None:
        """The end of the forward pass: number the jobs and measure the forward work and span."""
        self.terminal = self.local.job
        self._number()
        work = 0
        acc = [0] * len(self.jobs)
        created = 0
        for job in self.jobs:
            job.base = created
            n = len(job.tape)
            created += n
            cost = 1 + n + (sum(map(len, job.tape)) >> 1)
            work += cost
            acc[job.num] = cost + _joined(job, acc)
        self.created = created
        self.calls = [0] * created
        # primal_ops as the reference domain counts them, but per job, so exact under any scheduling
        # (a shared counter loses increments on a free-threaded CPython): every tape entry but the
        # inputs' is one primitive, literal or `real n`; comparisons make no entry and are counted.
        ops = created - self.inputs + sum(j.ops for j in self.jobs)
        self.forward_stats = {
            "primal_ops": ops,
            "forward_work": work,
            "forward_span": acc[self.terminal.num],
            "jobs": len(self.jobs),
        }

    def _number(self) -> None:
        """Canonical job numbers: depth-first, each task a contiguous range (see the module doc)."""
        jobs = self.jobs = []

        def task(term: Job) -> None:
            chain = [term]
            while chain[-1].history is not START:
                chain.append(chain[-1].history.parent)  # type: ignore[union-attr]
            lo = len(jobs)
            for job in reversed(chain):
                h = job.history
                if h is not START:
                    for c in h.children:  # type: ignore[union-attr]
                        task(c)
                job.num = len(jobs)
                jobs.append(job)
            term.lo, term.hi = lo, len(jobs)

        task(self.terminal)

    def job_descr(self) -> tuple:
        """The final JobDescr that the forward pass hands to SResolve."""
        return job_descr(self.terminal)

    def job_of(self, cid: int) -> Job:
        """The job of a packed compound ID."""
        return self.by_key[cid >> SEQ_BITS]

    def compound(self, cid: int) -> tuple[int, int]:
        """The compound ID (job number, seq ID) of §12.2 that `cid` packs."""
        return (self.job_of(cid).num, cid & SEQ_MASK)

    def cid(self, dual: Any) -> tuple[int, int]:
        """The compound ID (job number, seq ID) of a dual number."""
        return self.compound(dual[1])

    # -- reverse (Fig. 15) --------------------------------------------------------------------

    def reverse(self, y: Any, dy: Any, x: Any, din: Type, dout: Type) -> Any:
        jobs = self.jobs
        zero = self.zero
        adjs: list[list | None] = [None] * len(jobs)
        rcost = [0] * len(jobs)
        mcost = [0] * len(jobs)

        def seed(dual: Any, z: Any) -> None:
            job = self.job_of(dual[1])
            arr = adjs[job.num]
            if arr is None:
                arr = adjs[job.num] = [zero] * len(job.tape)
            arr[dual[1] & SEQ_MASK] += z

        deinterleave(y, dy, dout, seed)
        outside: dict = {}
        self._resolve_task(self.terminal, outside, adjs, rcost, mcost)
        assert not outside, "the main task spans every job, so nothing lies outside it"
        acc = [0] * len(jobs)
        for job in jobs:
            acc[job.num] = rcost[job.num] + _joined(job, acc, mcost[job.num])
        work = sum(rcost) + sum(mcost) + self.inputs
        self.reverse_stats = {"reverse_work": work, "reverse_span": acc[self.terminal.num] + self.inputs}
        self.cost.n += work
        grads = adjs[0] or [zero] * len(self.main.tape)
        keys = iter(range(self.inputs))
        return interleave(x, din, lambda _r: grads[next(keys)])

    def _resolve_task(self, term: Job, buf: dict, adjs: list, rcost: list, mcost: list) -> None:
        """resolveTask: this task's jobs from `term` back to its Start; subtasks in parallel."""
        chaos, zero, by_key = self.chaos, self.zero, self.by_key
        lo, hi = term.lo, term.hi
        job = term
        while True:
            self._resolve_job(job, lo, hi, buf, adjs, rcost)
            h = job.history
            if h is START:
                return
            children: list[Job] = h.children  # type: ignore[union-attr]
            bufs: list[dict] = [{} for _ in children]
            self.pool.run_all(
                [_bind(self._resolve_task, c, b, adjs, rcost, mcost) for c, b in zip(children, bufs)], chaos
            )
            if chaos is not None:
                chaos.point()
            # The join of the dual: merge the subtasks' outside contributions in child order.
            merged = 0
            for b in bufs:
                merged += len(b)
                for cid, v in b.items():
                    tj = by_key[cid >> SEQ_BITS]
                    if lo <= tj.num < hi:
                        arr = adjs[tj.num]
                        if arr is None:
                            arr = adjs[tj.num] = [zero] * len(tj.tape)
                        arr[cid & SEQ_MASK] += v
                    else:
                        buf[cid] = buf.get(cid, zero) + v
            mcost[job.num] = merged
            job = h.parent  # type: ignore[union-attr]

    def _resolve_job(self, job: Job, lo: int, hi: int, buf: dict, adjs: list, rcost: list) -> None:
        """resolveJob: the job's tape from its highest seq ID down (the loop of Fig. 10)."""
        zero = self.zero
        tape = job.tape
        n = len(tape)
        adj = adjs[job.num]
        if adj is None:
            adj = adjs[job.num] = [zero] * n
        calls, base, origin, by_key = self.calls, job.base, job.origin, self.by_key
        for i in range(n - 1, -1, -1):
            calls[base + i] += 1
            contrib = tape[i]
            if contrib:
                a = adj[i]
                pairs = iter(contrib)
                for p, cid in zip(pairs, pairs):
                    ti = cid - origin
                    if 0 <= ti < n:
                        adj[ti] += p * a
                        continue
                    tj = by_key[cid >> SEQ_BITS]
                    if lo <= tj.num < hi:
                        arr = adjs[tj.num]
                        if arr is None:
                            arr = adjs[tj.num] = [zero] * len(tj.tape)
                        arr[cid & SEQ_MASK] += p * a
                    else:
                        buf[cid] = buf.get(cid, zero) + p * a
        edges = sum(map(len, tape)) >> 1
        rcost[job.num] = 1 + 2 * n + edges


def _joined(job: Job, acc: list[int], merge: int = 0) -> int:
    """The span accumulated before `job` in its task: nothing after a Start, else the forking
    job's accumulated span plus the join (merges and the longest subtask)."""
    h = job.history
    if h is START:
        return 0
    return acc[h.parent.num] + merge + max(acc[c.num] for c in h.children)  # type: ignore[union-attr]


def _apply(f: Callable[[Any], Any], x: Any) -> Callable[[Any], Any]:
    return lambda _unit: f(x)


def _bind(fn: Callable[..., None], *args: Any) -> Callable[[], None]:
    return lambda: fn(*args)


# ---- the stage -----------------------------------------------------------------------------


class ParallelStage(TapeStage):
    name = "parallel"
    section = "§12, Fig. 14-15"
    supports = ARRAY_FEATURES | {"nested"}  # seed 001 operators, eliminated first (seed001)
    compile_once = False  # its budget is a `ThreadBudget` of each run's threads

    def __init__(self, threads: int | None = None, test_mode: bool = False, seed: int = 0) -> None:
        self.threads = default_threads() if threads is None else threads
        if self.threads < 1:
            raise ValueError("threads must be at least 1")
        self.test_mode = test_mode
        self.seed = seed
        self._runs = 0

    def transformer(self) -> Transformer:
        return ParallelTransformer(self.rules())

    def target(self, prog: Program) -> C.CExpr:
        """The tape stage's translation where the program has no `par` (`ParallelTransformer`
        differs from the plain one only there, §12.3: the same target, made once for both stages);
        its own elsewhere. A subclass with rules or a transformer of its own always makes its own."""
        if "_tape_shared" not in self.__dict__:
            own = type(self.transformer()) is not ParallelTransformer or type(self.rules()) is not TapeRules
            self.__dict__["_tape_shared"] = None if own else TapeStage()
        tape = self.__dict__["_tape_shared"]
        if tape is None or C.contains(self.source(prog), C.ParC):
            return super().target(prog)
        return tape.target(prog)

    def domain(self, numeric: str, dps: int) -> ReferenceOps:
        # The domain's own op count goes unused here (primal_ops are counted per job), but every
        # thread writes it.
        return reference_ops(numeric, dps, per_thread=FREE_THREADED)

    def runtime(self, numeric: str, ops: Any) -> ParallelRuntime:
        chaos = None
        if self.test_mode:
            chaos = Chaos(self.seed * 1_000_003 + self._runs)
            self._runs += 1
        return ParallelRuntime(numeric, ops, self.threads, chaos)

    def vjp(self, prog: Program, x: Any, numeric: str = "float", budget: int | None = DEFAULT_BUDGET,
            dps: int = DEFAULT_DPS) -> tuple[Any, Back]:  # fmt: skip
        y, back = super().vjp(prog, x, numeric, budget, dps)
        rt: ParallelRuntime = back.runtime
        stats = back.stats
        stats.update(rt.forward_stats)  # primal_ops counted per job: exact under any scheduling
        stats.update(reverse_work=0, reverse_span=0)

        def fn(dy: Any) -> Any:
            dx = back(dy)
            stats.update(rt.reverse_stats)
            return dx

        return y, Back(fn, stats, rt)
