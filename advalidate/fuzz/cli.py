"""The `advalidate fuzz` subcommand and the replay of its findings (docs/fuzzing.md, docs/cli.md)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cli_args import (
    EXIT_INCOMPLETE,
    EXIT_STATUSES,
    EXIT_USAGE,
    UsageError,
    check_names,
    known_names,
    positive,
    scheduler_address,
)
from ..names import FEATURES

if TYPE_CHECKING:
    from .campaign import Campaign, CampaignConfig


def gen_features(text: str) -> str:
    """`--features` as `advalidate gen` takes it (the generator is imported only when it is given)."""
    from ..generators.cli import features_arg

    return features_arg(text)


def add_commands(sub: Any) -> None:
    names = known_names()
    fuzz = sub.add_parser(
        "fuzz",
        help="run a time-boxed fuzzing campaign: generate programs, check every engine, shrink failures",
        description="Generate random programs, check every engine with every oracle, and write a shrunk, "
        "replayable finding for each failure.",
        epilog=EXIT_STATUSES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    fuzz.add_argument("--seconds", type=positive(float), default=60.0, help="campaign length (default %(default)g)")
    fuzz.add_argument("--seed", type=int, default=None, help="campaign seed (default: random, printed at start)")
    fuzz.add_argument(
        "--engine",
        action="append",
        metavar="NAME|module:attr",
        help=f"engine to test: {', '.join(names['engines'] + names['adapters'])} or module:attr "
        "(repeatable; default: every built-in engine)",
    )
    fuzz.add_argument(
        "--oracle",
        action="append",
        metavar="NAME",
        help=f"oracle: {', '.join(names['oracles'])} (repeatable; default: all)",
    )
    fuzz.add_argument("--workers", type=positive(int), default=None, help="worker processes (default: cores)")
    fuzz.add_argument(
        "--out",
        default="advalidate-findings",
        metavar="DIR",
        help="the campaign directory: new or empty, or a campaign's to replace or --resume (default %(default)s)",
    )
    fuzz.add_argument(
        "--max-size",
        type=positive(int),
        default=None,
        metavar="N",
        help="largest program, in AST nodes (default: the generator's spread of sizes)",
    )
    fuzz.add_argument("--resume", action="store_true", help="continue the campaign in --out for --seconds more")
    fuzz.add_argument(
        "-x", "--exitfirst", action="store_true", help="stop at the first finding once it is shrunk (exit 1)"
    )
    fuzz.add_argument(
        "--timeout",
        type=positive(float),
        default=None,
        metavar="S",
        help="seconds one program may take before its worker is replaced (default 30; "
        "120 with torch-compile, 600 with torch-inductor, whose compiles take 10-100 s)",
    )
    fuzz.add_argument(
        "--timeout-retry",
        type=positive(float, zero=True),
        default=None,
        metavar="F",
        help="a program that overruns --timeout runs once more with F times as long before it is "
        "an incident (default 4; 0: not again)",
    )
    fuzz.add_argument(
        "--shrink-seconds",
        type=positive(float),
        default=30.0,
        metavar="S",
        help="time budget per shrink (default %(default)g)",
    )
    fuzz.add_argument(
        "--symbolic-every",
        type=positive(int),
        default=None,
        metavar="N",
        help="with the default oracles, run the (slow) symbolic oracle on one program in N (default 8)",
    )
    fuzz.add_argument(
        "--progress",
        choices=("auto", "rich", "plain", "quiet"),
        default="auto",
        help="live panel on a terminal, plain lines otherwise (default auto)",
    )
    fuzz.add_argument(
        "--progress-interval",
        type=positive(float),
        default=10.0,
        metavar="S",
        help="seconds between plain lines (default %(default)g)",
    )
    fuzz.add_argument(
        "--memory-limit",
        type=positive(int),
        default=None,
        metavar="MB",
        help="memory each worker may allocate beyond what it uses once started (address space, "
        "RLIMIT_AS); a program that needs more is recorded as an incident (default: no limit)",
    )
    fuzz.add_argument(
        "--scheduler",
        type=scheduler_address,
        default=None,
        metavar="ADDRESS|local:N",
        help="run the campaign on a Dask distributed cluster: its scheduler's address (tcp://host:8786), or "
        "local:N to start one of N worker processes here (needs the dask extra: pip install "
        "'advalidate[dask]'; default: this machine's own worker processes, see --workers)",
    )
    fuzz.add_argument(
        "--programs",
        type=positive(int),
        default=None,
        metavar="N",
        help="stop once programs 0..N-1 of the campaign are checked and their failures shrunk (with "
        "--resume, counting the earlier sessions); --seconds still bounds the campaign",
    )
    fuzz.add_argument(
        "--features",
        type=gen_features,
        default=None,
        metavar="F1,F2|all",
        help=f"every program's generator features, as in `advalidate gen`: from {', '.join(FEATURES)} "
        "(default: the swarm mix, following the engines: only array engines named, every program has arrays)",
    )
    fuzz.set_defaults(handler=cmd_fuzz)


#: Worker processes per core `--workers` (and `--scheduler local:N`) may start: more only add
#: memory and start-up time on a machine that cannot run them at once.
WORKERS_PER_CORE = 4
#: The smallest `--memory-limit`: below it no worker can import the oracles.
MIN_MEMORY_LIMIT_MB = 64


def max_workers() -> int:
    """The most worker processes a campaign starts on this machine."""
    return WORKERS_PER_CORE * (os.cpu_count() or 1)


def machine_memory_mb() -> int:
    """This machine's physical memory in MB (a generous bound where it cannot be read)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
    except (ValueError, OSError, AttributeError):
        return 1 << 22


def check_worker_options(args: argparse.Namespace) -> None:
    """`--workers`, `local:N` and `--memory-limit` within what this machine can do, before anything
    starts (a worker count of 10000 spawned for minutes; a memory limit past the address space made
    every worker fail in setrlimit while the campaign idled)."""
    if args.scheduler is not None and args.workers is not None:
        raise UsageError("--workers sizes this machine's own pool; with --scheduler the cluster's workers run it")
    cap = max_workers()
    local = args.scheduler[len("local:") :] if args.scheduler and args.scheduler.startswith("local:") else None
    for what, n in (("--workers", args.workers), ("--scheduler local:N", int(local) if local else None)):
        if n is not None and n > cap:
            raise UsageError(
                f"{what}: {n} worker processes is more than this machine can run; at most {cap} "
                f"({WORKERS_PER_CORE} per core, {os.cpu_count() or 1} cores)"
            )
    if args.memory_limit is not None:
        if not sys.platform.startswith("linux"):
            raise UsageError("--memory-limit needs Linux (it limits each worker's address space, RLIMIT_AS)")
        total = machine_memory_mb()
        if not MIN_MEMORY_LIMIT_MB <= args.memory_limit <= total:
            raise UsageError(
                f"--memory-limit {args.memory_limit}: must be between {MIN_MEMORY_LIMIT_MB} and {total} MB "
                "(this machine's memory)"
            )


@dataclass(frozen=True)
class FuzzOptions:
    """`advalidate fuzz`'s options, each checked (`fuzz_options`): what a campaign is configured from."""

    args: argparse.Namespace  # as argparse parsed them (each value already of its type and range)
    timeout: float  # --timeout, or what the engines named ask for (`registry.program_timeout`)
    timeout_retry: float
    sample: dict[str, int] | None  # the oracles sampled (--symbolic-every), None: the default


def fuzz_options(args: argparse.Namespace) -> FuzzOptions:
    """Every option of `advalidate fuzz` checked together, before any campaign configuration
    exists: `UsageError` (exit status 2) for the first one that is wrong."""
    from ..impl.registry import program_timeout
    from ..oracles import oracle_names
    from .worker import SAMPLED_ORACLES

    check_worker_options(args)
    check_names("oracle", args.oracle, list(oracle_names()))
    from .campaign import CampaignConfig

    return FuzzOptions(
        args=args,
        timeout=args.timeout if args.timeout is not None else program_timeout(args.engine, CampaignConfig.timeout),
        timeout_retry=args.timeout_retry if args.timeout_retry is not None else CampaignConfig.timeout_retry,
        sample=None if args.symbolic_every is None else dict(SAMPLED_ORACLES, symbolic=args.symbolic_every),
    )


def campaign_config(opts: FuzzOptions) -> CampaignConfig:
    """The `campaign.CampaignConfig` of checked options."""
    from .campaign import CampaignConfig

    args = opts.args
    return CampaignConfig(
        seconds=args.seconds,
        seed=args.seed,
        engines=args.engine,
        oracles=args.oracle,
        workers=args.workers,
        out=args.out,
        max_size=args.max_size,
        resume=args.resume,
        exitfirst=args.exitfirst,
        timeout=opts.timeout,
        timeout_retry=opts.timeout_retry,
        shrink_seconds=args.shrink_seconds,
        sample=opts.sample,
        progress=args.progress,
        progress_interval=args.progress_interval,
        command="advalidate " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        memory_limit=args.memory_limit,
        scheduler=args.scheduler,
        programs=args.programs,
        features=args.features,
    )


def cmd_fuzz(args: argparse.Namespace) -> int:
    opts = fuzz_options(args)
    from ..runner.progress import make_progress
    from .campaign import Campaign, CampaignError

    corrupt = corrupt_findings(Path(args.out)) if args.resume else []
    progress = make_progress(args.progress, args.progress_interval)
    campaign = Campaign(campaign_config(opts), progress)
    try:
        status = campaign.run()
    except CampaignError as exc:
        print(f"advalidate fuzz: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:  # e.g. --out is not writable
        print(f"advalidate fuzz: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if corrupt:
        repair_findings(campaign, corrupt)
    if status == EXIT_INCOMPLETE:
        print(f"advalidate fuzz: exit status {EXIT_INCOMPLETE}: {incomplete_reason(campaign)}", file=sys.stderr)
    return status


def incomplete_reason(campaign: Campaign) -> str:
    """Why a campaign without findings cannot vouch for the engines (exit status 3)."""
    s = campaign.summary()
    verdicts = s.get("verdicts") or {}
    judged = int(verdicts.get("pass", 0)) + int(verdicts.get("fail", 0))
    incidents = s.get("incidents") or []
    parts = []
    if judged == 0:
        why = "no gradient passed or failed"
        if not s.get("programs") and not incidents and not s.get("scheduler") and not s.get("workers_started"):
            why = f"no worker process finished starting within --seconds {s.get('seconds_requested', 0):g}"
        parts.append(f"nothing was checked ({s.get('programs', 0)} programs ran, {why})")
    if incidents:
        kinds: dict[str, int] = {}
        for inc in incidents:
            kinds[str(inc.get("kind"))] = kinds.get(str(inc.get("kind")), 0) + 1
        listed = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        parts.append(f"{len(incidents)} incidents ({listed}), see {Path(s['out']) / 'incidents'}/")
    return "no finding, but " + ("; and ".join(parts) or "nothing was checked")


def corrupt_findings(out: Path) -> list[tuple[Path, str]]:
    """Finding directories in `out` whose finding.json cannot be read, each with the reason."""
    from ..lang.reader import read_user_json

    bad: list[tuple[Path, str]] = []
    if not out.is_dir():
        return bad
    for path in sorted(out.glob("*/finding.json")):
        try:
            info = read_user_json(path, "finding")
            if not isinstance(info, dict):
                raise ValueError(f"a JSON {type(info).__name__}, not an object")
        except ValueError as exc:  # `lang.reader.UserFileError` too
            bad.append((path.parent, str(exc)))
    for d, why in bad:
        print(f"advalidate fuzz: warning: {d / 'finding.json'} is corrupt ({why})", file=sys.stderr)
    return bad


def repair_findings(campaign: Campaign, corrupt: list[tuple[Path, str]]) -> None:
    """Rewrite the corrupt finding.json of findings the campaign state knows; say what is left."""
    known = {f.name: f for f in campaign.findings}
    for d, _ in corrupt:
        f = known.get(d.name)
        if f is not None:
            try:
                campaign.write_finding(f)
            except OSError as exc:
                print(f"advalidate fuzz: warning: could not rewrite {d / 'finding.json'}: {exc}", file=sys.stderr)
                continue
            print(f"advalidate fuzz: {d / 'finding.json'} rewritten from the campaign state", file=sys.stderr)
        elif d.is_dir():
            print(
                f"advalidate fuzz: warning: {d} is not a finding of this campaign's state: "
                "left as it is (replay cannot use it)",
                file=sys.stderr,
            )


def cmd_replay(args: argparse.Namespace) -> int:
    """`advalidate replay` on a finding of `advalidate fuzz` (the top-level CLI tells it from a sweep's)."""
    from .replay import ReplayError, replay_main

    try:
        return replay_main(args.dir, args.engine, args.original)
    except ReplayError as exc:
        print(f"advalidate replay: {exc}", file=sys.stderr)
        return EXIT_USAGE
