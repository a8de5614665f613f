"""Generator statistics: what `advalidate gen --stats` measures and prints.

Over `count` consecutive seeds: construct frequencies (share of programs containing each
construct), program sizes and depths, the well-behaved rate at the generated input (first attempt,
before any regeneration), and throughput — generation + type-check, and the well-behaved check,
timed separately in CPU seconds of this process (one core), so a busy machine does not distort it.
Array programs (seed 004) get their own lines: their share of the mix, the array constructs as a
share of the array programs, and what the gather / scatter index functions did (`index_maps`:
repeated targets, out-of-range targets, permutations), per index function and per array program,
and the table of array cases (`cases.py`: ranks, `tr` permutation classes on cube and non-cube
shapes, `reshape` splits and merges, index functions, exact ties, zero extents, non-square
`replicate`), each to reach at least 1% of the array programs.
Programs with derivative operators (seed 001) likewise: their share, the nested constructs as a
share of them (the confusion pattern, tuples, let-bound and parameter functions), and how deep the
operators nest (`analysis.nest_depth`).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .analysis import (
    ARRAY_CONSTRUCTS,
    CONSTRUCTS,
    EXTRA_CONSTRUCTS,
    NESTED_CONSTRUCTS,
    SPECIAL_CONSTRUCTS,
    constructs,
    depth,
    index_maps,
    nest_depth,
)
from .behaved import reason_kind, well_behaved
from .cases import CASE_SHARE, CASES, array_cases
from .seeded import generate

REQUIRED_SHARE = 0.02  # every construct of CONSTRUCTS should occur in at least 2% of programs
SPECIAL_SHARE = 0.005  # every special function should occur in at least 0.5% of programs (issue #25)
MAP_PROPS = ("repeated", "out_of_range", "permutation", "identity", "opaque")


@dataclass
class GenStats:
    seed: int
    count: int
    size: int | None
    features: Any
    sizes: list[int] = field(default_factory=list)
    depths: list[int] = field(default_factory=list)
    constructs: Counter = field(default_factory=Counter)
    reasons: Counter = field(default_factory=Counter)
    gen_cpu: float = 0.0
    gen_wall: float = 0.0
    check_cpu: float = 0.0
    regenerated_ok: int = 0
    attempts: int = 0
    array_programs: int = 0
    array_constructs: Counter = field(default_factory=Counter)  # over the array programs
    cases: Counter = field(default_factory=Counter)  # (construct, case) -> array programs reaching it (cases.py)
    maps: Counter = field(default_factory=Counter)  # index function properties, per index function
    map_count: int = 0
    nested_programs: int = 0
    nested_constructs: Counter = field(default_factory=Counter)  # over the programs with derivative operators
    nest_depths: Counter = field(default_factory=Counter)  # nesting depth -> programs (`analysis.nest_depth`)

    @property
    def behaved(self) -> int:
        return self.reasons.get("ok", 0)

    def share(self, name: str) -> float:
        return self.constructs.get(name, 0) / max(1, self.count)

    def array_share(self, name: str) -> float:
        """Share of the array programs containing an array construct."""
        return self.array_constructs.get(name, 0) / max(1, self.array_programs)

    def nested_share(self, name: str) -> float:
        """Share of the programs with derivative operators containing a nested construct."""
        return self.nested_constructs.get(name, 0) / max(1, self.nested_programs)

    def case_share(self, construct: str, case: str) -> float:
        """Share of the array programs reaching a case of CASES (at their generated input)."""
        return self.cases.get((construct, case), 0) / max(1, self.array_programs)

    def missing_cases(self, share: float = CASE_SHARE) -> list[tuple[str, str]]:
        """The cases of CASES below `share` of the array programs."""
        return [(c, k) for c, ks in CASES.items() for k in ks if self.case_share(c, k) < share]

    def map_share(self, prop: str) -> float:
        """Share of the gather / scatter index functions with a property (`repeated`, ...)."""
        return self.maps.get(prop, 0) / max(1, self.map_count)

    def missing(self, share: float = REQUIRED_SHARE) -> list[str]:
        """Constructs of CONSTRUCTS occurring in fewer than `share` of the programs."""
        return [c for c in CONSTRUCTS if self.share(c) < share]


def collect(seed: int = 0, count: int = 1000, size: int | None = None, features: Any = None) -> GenStats:
    """The statistics of seeds `seed` .. `seed + count - 1`, one program at a time: two integers
    are kept per program (size, depth), not the case (~10 KB each: `--count` up to a million)."""
    st = GenStats(seed, count, size, features)
    for s in range(seed, seed + count):
        w0, c0 = time.perf_counter(), time.process_time()
        c = generate(s, size, features, check=False)
        c1 = time.process_time()
        st.gen_cpu, st.gen_wall = st.gen_cpu + c1 - c0, st.gen_wall + time.perf_counter() - w0
        ok, reason = well_behaved(c.program, c.input)
        st.check_cpu += time.process_time() - c1
        st.sizes.append(c.program.size())
        st.depths.append(depth(c.program.expr))
        cs = constructs(c.program)
        st.constructs.update(cs)
        if "array" in cs:
            st.array_programs += 1
            st.array_constructs.update(cs & set(ARRAY_CONSTRUCTS))
            st.cases.update(array_cases(c.program, c.input))
            for m in index_maps(c.program):
                st.map_count += 1
                st.maps.update(p for p in MAP_PROPS if getattr(m, p))
        if "deriv" in cs:
            st.nested_programs += 1
            st.nested_constructs.update(cs & set(NESTED_CONSTRUCTS))
            st.nest_depths[nest_depth(c.program)] += 1
        st.reasons[reason_kind(reason)] += 1
        if ok:
            st.regenerated_ok += 1
            st.attempts += 1
        else:  # what `generate` does by default: the next sub-seeds until well-behaved
            again = generate(c.seed, size, features)
            st.attempts += again.attempts
            st.regenerated_ok += bool(again.behaved and again.behaved[0])
    return st


def _pct(xs: list[int], p: float) -> int:
    s = sorted(xs)
    return s[min(len(s) - 1, int(p * (len(s) - 1) + 0.5))]


def format_stats(st: GenStats) -> str:
    n = max(1, st.count)
    size = "spread (3-200)" if st.size is None else str(st.size)
    feats = "swarm (random subset per program)" if st.features is None else str(st.features)
    sz = st.sizes
    not_ok = ", ".join(f"{k} {v}" for k, v in sorted(st.reasons.items()) if k != "ok")
    gen_rate, wall_rate = st.count / max(st.gen_cpu, 1e-9), st.count / max(st.gen_wall, 1e-9)
    check_rate = st.count / max(st.check_cpu, 1e-9)
    lines = [
        f"programs          {st.count} (seeds {st.seed}..{st.seed + st.count - 1}), target size {size}",
        f"features          {feats}",
        f"size (AST nodes)  min {min(sz)} p10 {_pct(sz, 0.1)} median {_pct(sz, 0.5)} p90 {_pct(sz, 0.9)} "
        f"max {max(sz)} mean {sum(sz) / n:.1f}",
        f"depth             min {min(st.depths)} median {_pct(st.depths, 0.5)} max {max(st.depths)}",
        f"well-behaved      {100 * st.behaved / n:.2f}% at the generated input (first attempt)"
        + (f"; not: {not_ok}" if not_ok else ""),
        f"after regenerating {100 * st.regenerated_ok / n:.2f}% well-behaved, {st.attempts / n:.3f} attempts/program",
        f"programs/s        {gen_rate:.0f} generated + type-checked per CPU second ({wall_rate:.0f}/s wall); "
        f"well-behaved check {check_rate:.0f}/s",
        "",
        "construct frequencies (% of programs containing it; * below 2%):",
    ]
    names = list(CONSTRUCTS) + list(EXTRA_CONSTRUCTS)
    cells = [
        f"{c:<12} {100 * st.share(c):5.1f}%{'*' if c in CONSTRUCTS and st.share(c) < REQUIRED_SHARE else ' '}"
        for c in names
    ]
    lines += _rows(cells)
    lo = min(CONSTRUCTS, key=st.share)
    lines.append(f"least frequent required construct: {lo} {100 * st.share(lo):.1f}%")
    lines += ["", "special functions (% of programs containing it; * below 0.5%):"]
    lines += _rows(
        [f"{c:<12} {100 * st.share(c):5.1f}%{'*' if st.share(c) < SPECIAL_SHARE else ' '}" for c in SPECIAL_CONSTRUCTS]
    )
    if st.array_programs:
        lines += [
            "",
            f"array programs    {st.array_programs} ({100 * st.array_programs / n:.1f}% of the programs); "
            "array constructs as % of the array programs:",
        ]
        lines += _rows([f"{c:<16} {100 * st.array_share(c):5.1f}%" for c in ARRAY_CONSTRUCTS])
        per_fn = ", ".join(f"{p.replace('_', ' ')} {100 * st.map_share(p):.1f}%" for p in MAP_PROPS)
        lines.append(f"gather/scatter index functions: {st.map_count}; {per_fn}")
        lines += ["", f"array cases (% of the array programs reaching each; * below {100 * CASE_SHARE:g}%):"]
        missing = set(st.missing_cases())
        for construct, cases in CASES.items():
            cells = []
            for case in cases:
                mark = "*" if (construct, case) in missing else " "
                cells.append(f"{case} {100 * st.case_share(construct, case):.1f}%{mark}")
            lines.append(f"  {construct:<12} " + "  ".join(cells))
    if st.nested_programs:
        k = st.nested_programs
        lines += [
            "",
            f"nested programs   {k} ({100 * k / n:.1f}% of the programs) with grad/vjp/jvp; nested constructs as % "
            "of them:",
        ]
        lines += _rows([f"{c:<16} {100 * st.nested_share(c):5.1f}%" for c in NESTED_CONSTRUCTS])
        depths = ", ".join(f"{d}: {100 * m / k:.1f}%" for d, m in sorted(st.nest_depths.items()))
        lines.append(f"operator nesting depth (% of them): {depths}")
    return "\n".join(lines)


def _rows(cells: list[str]) -> list[str]:
    """Table cells laid out four to a line."""
    return ["  " + "   ".join(cells[i : i + 4]) for i in range(0, len(cells), 4)]
