"""The worker side of a campaign: spawn-safe top-level functions run in worker processes.

A worker loads the engines once, then serves tasks sent by the parent over a pipe:
    ("run", index)          generate program `index` of the campaign, check it, reply ("result", dict)
    ("shrink", task dict)   shrink one finding, replying ("shrink-progress", dict) at every improvement
                            and ("shrunk", dict) at the end
    ("stop",)               exit
Workers ignore SIGINT (the parent decides when to stop) and exit when the parent goes away.
Everything here is a plain function of its arguments: program `index` of a campaign is generated
from `program_seed(campaign seed, index)` alone, so any program can be regenerated anywhere.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import random
import re
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from ..impl.protocol import hook
from ..lang.errors import MemoryBudgetError
from ..runner.signals import detach_from_signals

#: The cyclic garbage collector's thresholds in a worker (CPython's default: 700, 10, 10). A check
#: makes and drops hundreds of thousands of small containers (AST nodes, closures, frames, mp
#: numbers), almost all freed by reference counting; at the default the collector ran some 20
#: young collections per program and a full one, walking every object of the process, every six.
GC_THRESHOLDS = (20_000, 20, 20)
#: Tasks after which a worker settles its collector again (`settle_collector`): an engine builds
#: much of its library lazily during its first programs (JAX: modules, lowering rules, caches of
#: hundreds of thousands of objects); left outside the frozen generation, every full collection
#: walked it, and a JAX worker spent a fifth of its time there (2.8 against 3.6 programs per
#: CPU-second). Rarer later: what an engine still builds then is little.
RESETTLE_AFTER = frozenset(4**k for k in range(8))

#: Oracles that are expensive enough to be sampled (run on one program in `every`) by default.
SAMPLED_ORACLES = {"symbolic": 8}


@dataclass
class WorkerConfig:
    """What every worker needs; picklable (engines are `module:attr` / built-in names, or pickles)."""

    campaign_seed: int
    engines: list[str | bytes]
    oracles: list[str] | None = None  # None: the default oracles (with sampling)
    max_size: int | None = None
    sample: dict[str, int] = field(default_factory=lambda: dict(SAMPLED_ORACLES))
    sys_path: list[str] = field(default_factory=list)
    size: int | None = None  # a fixed target size for every program (benchmarks); None: a spread
    memory_limit: int | None = None  # MB a worker may allocate beyond its size once started (RLIMIT_AS)
    mix: dict[str, Any] | None = None  # what the generator draws (mix.py); None: the default mix
    programs: int | None = None  # the campaign's --programs: no batch compiles a program past it
    # CPU seconds a worker may spend on one program before it counts as hung, which load on the
    # machine does not stretch as it does `--timeout`'s wall clock; None: `--timeout` alone. Not an
    # option of the command: the tests set it, so no ordinary program must beat a short wall clock.
    cpu_timeout: float | None = None


# ---- deterministic plan of a campaign ----------------------------------------------------------


def program_seed(campaign_seed: int, index: int) -> int:
    """The generation seed of program `index` of a campaign (63 bits, the same on every machine)."""
    digest = hashlib.sha256(f"advalidate-fuzz:{int(campaign_seed)}:{int(index)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def program_size(pseed: int, max_size: int | None) -> int | None:
    """The target size of a program: the generator's own spread, capped at `max_size`."""
    if max_size is None:
        return None
    from ..generators.build import SIZE_BUCKETS

    rng = random.Random(f"advalidate-fuzz-size:{pseed}")
    buckets = [(w, lo, min(hi - 1, max_size)) for w, lo, hi in SIZE_BUCKETS if lo <= max_size]
    if not buckets:
        return max(1, max_size)
    total = sum(w for w, _, _ in buckets)
    r = rng.randrange(total)
    for w, lo, hi in buckets:
        if r < w:
            return rng.randint(lo, max(lo, hi))
        r -= w
    return max_size  # pragma: no cover


def default_oracles() -> list[str]:
    from ..oracles import DEFAULT_ORACLES

    return list(DEFAULT_ORACLES)


def oracles_for(cfg: WorkerConfig, index: int, pseed: int, defaults: list[str]) -> list[str] | None:
    """The oracles program `index` is checked with: explicit ones always; default ones sampled."""
    if cfg.oracles is not None:
        return list(cfg.oracles)
    if not defaults:
        return None
    out = []
    for name in defaults:
        every = cfg.sample.get(name, 1)
        if every <= 1 or pseed % every == 0:
            out.append(name)
    return out


# ---- engines and verdicts -----------------------------------------------------------------------


def load_engine_spec(spec: str | bytes) -> Any:
    if isinstance(spec, bytes):
        return pickle.loads(spec)
    from ..impl import engine

    return engine(spec)


def extend_import_path(paths: list[str]) -> None:
    """The campaign's import path in a worker: the entries it lacks, appended in the campaign's order,
    never before the standard library and installed packages (a module in the current directory,
    which the campaign appends for a plug-in engine, must never shadow one advalidate imports)."""
    for p in paths:
        if p not in sys.path:
            sys.path.append(p)


def engine_label(eng: Any) -> str:
    return str(getattr(eng, "name", None) or type(eng).__name__)


def verdict_dict(v: Any) -> dict[str, Any]:
    if hasattr(v, "to_dict"):
        d = dict(v.to_dict())
    else:
        d = {k: getattr(v, k, None) for k in ("engine", "oracle", "status", "detail", "expected", "actual")}
    d["engine"] = str(d.get("engine"))
    for k, val in list(d.items()):
        if not isinstance(val, (str, int, float, bool, list, dict, type(None))):
            d[k] = str(val)
    return d


def judge(prog: Any, x: Any, engines: list[Any], oracles: list[str] | None, seed: int) -> list[dict[str, Any]]:
    """Every verdict of one check, as JSON-ready dicts: a failure in full (`verdict_dict`), any other
    with its engine, oracle, status and detail only, all that a campaign keeps of it (formatting the
    numbers of the thousands of passing verdicts of a campaign cost more than some oracles)."""
    from ..oracles import check

    res = check(prog, x, engines=engines, oracles=oracles, seed=seed)
    return [verdict_dict(v) if getattr(v, "status", None) == "fail" else brief_verdict(v) for v in res.verdicts]


def brief_verdict(v: Any) -> dict[str, Any]:
    """The engine, oracle, status and detail of a verdict, and the library calls it judged through
    (`calls`: the consistency oracle's lowerings, counted in summary.json's `lowering_coverage`)."""
    out = {k: getattr(v, k, None) for k in ("oracle", "status", "detail")}
    out["engine"] = str(getattr(v, "engine", None))
    calls = getattr(v, "calls", None)
    if calls:
        out["calls"] = list(calls)
    return out


#: What the check says of an engine that did not take the program (oracles.context `EngineRun` status
#: "declined": its `supports` lacks a feature, its `requires` are not met, it cannot run in mp, or it
#: raised NotImplementedError): every verdict of that engine is then *not applicable* with this detail.
_DECLINED = re.compile(
    r"^not applicable: engine (.+?) (declines|does not support|is for programs using|does not run in)\b"
)


def declined_engines(verdicts: list[dict[str, Any]]) -> list[str]:
    """The engines that did not take the program: the rest accepted it."""
    out = set()
    for v in verdicts:
        m = _DECLINED.match(str(v.get("detail") or ""))
        if m and m.group(1) == v["engine"]:
            out.add(v["engine"])
    return sorted(out)


def margin(v: dict[str, Any]) -> float:
    """How far past its tolerance a failing verdict is: relative error, inf when not numeric."""
    rel = v.get("rel_err")
    if rel is None:
        return float("inf")
    try:
        return float(rel)
    except (TypeError, ValueError):
        return float("inf")


#: A shrunk candidate must fail with a relative error at least this large (or, when the original
#: failure was smaller, at least half of the original's): "the same failure with a clear margin".
CLEAR_MARGIN = 1e-6


#: The incident kind of a program that ran out of memory or past the memory budget (`lang.limits`).
OUT_OF_MEMORY = "out of memory"


def is_out_of_memory(message: str) -> bool:
    """Whether an error message is an allocation failure or the memory budget's refusal."""
    return "MemoryError" in message or "MemoryBudgetError" in message or "memory budget exceeded" in message


# ---- tasks ------------------------------------------------------------------------------------


def load_lazy_modules(oracles: list[str]) -> None:
    """Import now what a worker's checks import on first use: sympy (the `symbolic` oracle, when it
    is among `oracles`), scipy.special (the special functions' float values,
    `lang.specials`) and seed 001's elimination (every program with derivative operators). Loaded
    before `settle_collector`, their objects join the frozen generation, and the first programs
    that need them no longer carry a one-time 0.7 CPU s (sympy 0.4, scipy.special 0.3) in their
    timings (`cpu`, the timeout, benchmarks/fuzz_throughput.py)."""
    import scipy.special  # noqa: F401

    from ..impl import seed001  # noqa: F401

    if "symbolic" in oracles:
        import sympy  # noqa: F401


def settle_collector() -> None:
    """What a worker does once its engines and oracles are loaded, before its first task: what it
    has made so far (modules, engines, the oracles' imports) moves to the collector's permanent
    generation (`gc.freeze`), which no collection walks again, and the young generation is
    collected less often (`GC_THRESHOLDS`). Cyclic garbage is still collected (a `letrec`'s
    closure refers to its own frame), a few thousand allocations later."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def settle_after(tasks_done: int) -> None:
    """Settle the collector again when a worker has done `tasks_done` tasks (`RESETTLE_AFTER`)."""
    if tasks_done in RESETTLE_AFTER:
        settle_collector()


def generate_case(cfg: WorkerConfig, index: int) -> Any:
    """The generated case of the campaign's program `index`."""
    from ..generators import generate
    from .mix import generate_kwargs

    pseed = program_seed(cfg.campaign_seed, index)
    size = cfg.size if cfg.size is not None else program_size(pseed, cfg.max_size)
    return generate(pseed, size, **generate_kwargs(cfg.mix, pseed))


def prepare_batches(cfg: WorkerConfig, engines: list[Any], index: int, prepared: dict[int, int]) -> None:
    """For each engine that compiles programs in batches (`prepare`, `batch_size`: the compile
    engines, docs/transforms.md), hand it programs `index` .. `index + batch_size - 1` unless a
    batch from an earlier index covers `index` (`prepared`: engine's position -> first index not
    yet handed over). With several workers another may run some of them: their compile is unused."""
    for k, eng in enumerate(engines):
        size = hook(eng, "batch_size")
        if not callable(hook(eng, "prepare")) or size < 2 or index < prepared.get(k, 0):
            continue
        prepared[k] = index + size
        cases = []
        for i in range(index, index + size if cfg.programs is None else min(index + size, cfg.programs)):
            try:
                case = generate_case(cfg, i)
            except Exception:  # noqa: BLE001 - reported when the program itself is run
                continue
            if case.behaved is None or case.behaved[0]:
                cases.append((case.program, case.input))
        eng.prepare(cases)


def run_program(cfg: WorkerConfig, engines: list[Any], index: int, defaults: list[str]) -> dict[str, Any]:
    from ..lang.pretty import pretty_module
    from ..lang.values import show_value
    from .findings import module_constructs

    t0, c0 = time.perf_counter(), time.process_time()
    pseed = program_seed(cfg.campaign_seed, index)
    size = cfg.size if cfg.size is not None else program_size(pseed, cfg.max_size)
    out: dict[str, Any] = {"index": index, "seed": pseed, "size": size}
    try:
        case = generate_case(cfg, index)
    except Exception as exc:  # noqa: BLE001 - a generator bug is reported, not fatal
        out["error"] = f"generator failed: {type(exc).__name__}: {exc}"
        out["seconds"] = time.perf_counter() - t0
        return out
    prog, x = case.program, case.input
    out["nodes"] = prog.size()
    out["constructs"] = sorted(module_constructs(prog.module))
    out["gen_seconds"] = time.perf_counter() - t0
    if case.behaved is not None and not case.behaved[0]:
        out["skipped"] = f"not well-behaved: {case.behaved[1]}"
        out["seconds"] = time.perf_counter() - t0
        return out
    oracles = oracles_for(cfg, index, pseed, defaults)
    out["oracles"] = oracles
    limit = f" (--memory-limit {cfg.memory_limit} MB)" if cfg.memory_limit else ""
    try:
        verdicts = judge(prog, x, engines, oracles, pseed)
    except (MemoryError, MemoryBudgetError) as exc:  # the program itself is past the budget
        out["error"] = f"out of memory{limit}: {type(exc).__name__}: {exc}"
        out["incident"] = OUT_OF_MEMORY
        verdicts = []
    except Exception as exc:  # noqa: BLE001 - a bug in the oracles is reported, not fatal
        out["error"] = f"check failed: {type(exc).__name__}: {exc}"
        out["traceback"] = traceback.format_exc(limit=8)
        verdicts = []
    out["verdicts"] = [(v["engine"], v["oracle"], v["status"]) for v in verdicts]
    out["calls"] = sorted({f"{v['engine']} | {c}" for v in verdicts for c in v.get("calls", [])})
    details = [str(v.get("detail") or "").strip().rstrip(":") for v in verdicts]
    out_of_memory = sorted({d for d in details if is_out_of_memory(d)})
    if out_of_memory and "error" not in out:  # an incident, not an inconclusive verdict among thousands
        out["error"] = f"out of memory{limit}: {'; '.join(out_of_memory)}"
        out["incident"] = OUT_OF_MEMORY
    out["inconclusive"] = [(v["engine"], v["oracle"], v["detail"]) for v in verdicts if v["status"] == "inconclusive"]
    out["declined"] = declined_engines(verdicts)
    failures = [v for v in verdicts if v["status"] == "fail"]
    if failures or "error" in out:
        out["failures"] = failures
        out["program"] = pretty_module(prog.module)
        out["input"] = show_value(x)
    out["seconds"] = time.perf_counter() - t0
    out["cpu"] = time.process_time() - c0
    return out


def run_shrink(cfg: WorkerConfig, engines: dict[str, Any], task: dict[str, Any], send: Any) -> dict[str, Any]:
    from ..lang.program import parse
    from ..lang.values import parse_value
    from .findings import failure_class, module_constructs, same_failure
    from .shrink import module_nodes, shrink

    prog = parse(task["program"], filename="program.adv")
    x = parse_value(task["input"], prog.input_type)
    eng = engines[task["engine"]]
    oracle, seed = task["oracle"], int(task["check_seed"])
    target_class = failure_class(task["verdict"])
    need = min(CLEAR_MARGIN, 0.5 * margin(task["verdict"]))
    last: dict[str, Any] = {}

    def verdict_of(p: Any, cx: Any) -> dict[str, Any] | None:
        for v in judge(p, cx, [eng], [oracle], seed):
            if v["oracle"] == oracle:
                return v
        return None

    def fails(p: Any, cx: Any) -> bool:
        v = verdict_of(p, cx)
        if v is None or v["status"] != "fail" or not same_failure(target_class, failure_class(v)) or margin(v) < need:
            return False
        last["verdict"] = v
        return True

    t0 = time.perf_counter()
    if not fails(prog, x):
        return {"id": task["id"], "reproduced": False, "seconds": time.perf_counter() - t0}

    def progress(r: Any) -> None:
        send(
            (
                "shrink-progress",
                {"id": task["id"], "program": r.text, "input": r.input_text, "nodes": r.nodes_after, "steps": r.steps},
            )
        )

    res = shrink(prog.module, x, fails, budget=float(task["budget"]), on_progress=progress)
    final = verdict_of(res.program, res.x) or last.get("verdict")
    out = {
        "id": task["id"],
        "reproduced": True,
        "program": res.text,
        "input": res.input_text,
        "nodes_before": res.nodes_before,
        "nodes_after": module_nodes(res.program.module),
        "steps": res.steps,
        "tried": res.tried,
        "seconds": res.seconds,
        "fixpoint": res.fixpoint,
        "verdict": final,
        "constructs": sorted(module_constructs(res.program.module)),
    }
    if oracle != "consistency":
        try:
            out["attributed"] = attributed_call(res.program, res.x, eng, seed, oracle)
        except Exception:  # noqa: BLE001 - putting it to a call is a refinement: the shrunk finding stands
            out["attributed"] = None
    return out


def library_defaults(eng: Any, seed: int) -> Any:
    """`eng` with every construct and special function computed by its table's first call (the
    one its own run uses), whose plan records what a run met: from the engine's own table, else
    from its library's (`library`: a transformation engine's calls are the library's defaults)."""
    from ..oracles.consistency import DEFAULTS_ONLY

    out = eng.lowered(seed, only=DEFAULTS_ONLY)
    if out is None and hook(eng, "library"):
        from ..impl import engine

        out = engine(eng.library).lowered(seed, only=DEFAULTS_ONLY)
    return out


def attributed_call(prog: Any, x: Any, eng: Any, seed: int, oracle: str) -> dict[str, Any] | None:
    """The library call a language-semantics failure of an adapter (by `oracle`) is a bug of, once
    shrunk, so the finding groups with that call's other findings (issue #22: one finding per
    library, call, mode and kind; `digamma (x - 20.5)` and a gradient through `digamma` elsewhere
    are one bug, not one finding per program shape):

    - the consistency oracle's verdict on the shrunk program when it fails naming one call (the
      library is wrong under its own semantics), `{"verdict": v, "own": True}`;
    - else `oracle`'s failure on a special function's default call alone (`\\x -> f x`, at the
      arguments the run met it with) when that fails the same way (the call disagrees with the
      language by itself: torch's imprecise trigamma), `{"verdict": v, "call": name, "own": False}`.
      An engine that tests a transformation (`torch-checkpoint`, `jax-vmap`, ...) has no table of
      its own, but computes the special functions by its library's default calls: the library's
      table (`library_defaults`) says which it met and where, and the call alone is judged in
      the engine itself (one finding of torch's trigamma per engine, not one per program shape);
    - else None."""
    from ..oracles.consistency import alone_text, specials_alone
    from .findings import failure_class, library_call

    if hook(eng, "lowered") is None:
        return None
    for v in judge(prog, x, [eng], ["consistency"], seed):
        call = library_call(failure_class(v)) if v["status"] == "fail" else None
        if call is not None and " + " not in call:
            return {"verdict": v, "call": call, "own": True}
    defaults = library_defaults(eng, seed)
    if defaults is None:
        return None
    try:
        defaults.vjp(prog, x)  # the plan records the calls used and the arguments met
    except Exception:  # noqa: BLE001 - the failure is not the calls' alone
        return None
    for low, sctx in specials_alone(defaults.plan, seed, prog.uses_derivatives):
        for v in judge(sctx.prog, sctx.x, [eng], [oracle], seed):
            if v["oracle"] == oracle and v["status"] == "fail":
                v = dict(v, detail=f"{alone_text(low.name, sctx)}: {v['detail']}")
                return {"verdict": v, "call": low.name, "own": False}
    return None


# ---- the process --------------------------------------------------------------------------------


def worker_main(conn: Any, cfg: WorkerConfig) -> None:
    """Entry point of a worker process (a top-level function, so it works under `spawn`)."""
    detach_from_signals()
    from ..lang.deep import run_deep

    extend_import_path(cfg.sys_path)
    try:
        engines = [load_engine_spec(s) for s in cfg.engines]
        defaults = default_oracles() if cfg.oracles is None else []
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which stops the campaign
        _send(conn, ("fatal", f"{type(exc).__name__}: {exc}"))
        return
    by_name = {engine_label(e): e for e in engines}
    for e in engines:  # what an engine does once per worker process (docs/plugins.md: `worker_setup`)
        setup = hook(e, "worker_setup")
        if callable(setup):
            setup()
    load_lazy_modules(defaults if cfg.oracles is None else cfg.oracles)  # before the limit: it counts programs
    if cfg.memory_limit:
        try:
            limit_memory(cfg.memory_limit, engines)
        except (OSError, ValueError, OverflowError, ImportError) as exc:
            _send(conn, ("fatal", f"cannot set the memory limit: {type(exc).__name__}: {exc}"))
            return
    settle_collector()
    prepared: dict[int, int] = {}
    _send(conn, ("ready", os.getpid()))
    done = 0
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        kind = msg[0]
        if kind == "stop":
            return
        try:
            # A whole task runs on the large-stack evaluation thread, so the many evaluations inside
            # it run in place instead of handing over to that thread one by one.
            if kind == "run":
                run_deep(prepare_batches, cfg, engines, int(msg[1]), prepared)
                reply: tuple = ("result", run_deep(run_program, cfg, engines, int(msg[1]), defaults))
            elif kind == "shrink":
                reply = ("shrunk", run_deep(run_shrink, cfg, by_name, msg[1], lambda m: _send(conn, m)))
            else:
                reply = ("error", {"message": f"unknown task {kind!r}"})
        except Exception as exc:  # noqa: BLE001 - reported with the task, the worker goes on
            reply = ("task-error", {"task": list(msg[:2]) if kind == "run" else [kind, msg[1].get("id")],
                                    "message": f"{type(exc).__name__}: {exc}",
                                    "traceback": traceback.format_exc(limit=8)})  # fmt: skip
        if not _send(conn, reply):
            return
        done += 1
        settle_after(done)


def limit_memory(megabytes: int, engines: list[Any]) -> int:
    """Let this process allocate `megabytes` more address space than it uses now (RLIMIT_AS; Linux).

    What a worker sets up once (the large-stack evaluation thread, the parallel engine's threads,
    the allocator's arenas, the oracles' imports) is made first, by a small check with the built-in
    engines, so the limit counts what a program needs. Beyond it an allocation fails with
    MemoryError, which the check reports and the campaign records as an incident.
    """
    import resource

    from ..generators import generate
    from ..impl import engine
    from ..lang.deep import run_deep

    builtin = [e for e in engines if type(e).__module__.startswith("advalidate.")] or [engine("tape")]
    case = generate(0, 12)
    run_deep(judge, case.program, case.input, builtin, None, 0)
    with open("/proc/self/statm", encoding="ascii") as fh:
        used = int(fh.read().split()[0]) * resource.getpagesize()
    limit = used + megabytes * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    return limit


def _send(conn: Any, msg: Any) -> bool:
    try:
        conn.send(msg)
        return True
    except (BrokenPipeError, EOFError, OSError):
        return False
