"""The nested-AD section of the report: seed 001's derivative operators on seed 000's stages.

Seed 001 (Pearlmutter & Siskind, *Lambda the Ultimate Backpropagator*) makes derivatives
first-class, and two things are then at stake, both measured here on operation counts
(`back.stats`), so every verdict is the same on every machine:

- Perturbation confusion (§7, after Siskind & Pearlmutter 2005): `grad (\\x -> x * grad (\\y -> x + y)
  1.0) z` is 1; an implementation that confuses the outer perturbation of x with the inner one of y
  gives 2. Every stage that eliminates the operators (`impl.seed001`) runs it; its value must be 1
  and its gradient 0.
- The cost of a Hessian-vector product (§5, after Christianson and Pearlmutter 1994): on the family
  f_n(x) = Σ x_i x_{i+1} + Σ sin x_i of an n-tuple (`hvp_family`; primal 4n − 3 operations), H·v by
  reverse over forward — a stage's `vjp` of `jvp f x v`, forward and reverse pass together
  (`primal_ops + reverse_cost`) — divided by f's primal operations. On the stages that make reverse
  AD linear (seed 000 §9-§12: mutable, tape, parallel; seed 004 §2's Delta terms, `delta`, whose
  evaluation is one pass over the shared Delta graph) the ratio does not grow with n, and on `tape`
  it is at most `HVP_CONSTANT` = 16 at every n ≥ 2 (n = 1 is one `sin`, where the fixed part of jvp
  and of the tape dominates: 19). The stages before them show seed 000's story again through the
  operator: `naive` and `staged` grow linearly per HVP, `cayley` and `sparse` by the log factor.
  Forward over reverse (the eliminated `jvp (\\y -> grad f y) x v`, evaluated) and reverse over
  reverse (`tape`'s vjp of ∇f(x)·v) run seed 001's naive inner reverse, whose every `+` builds an
  n-tuple: shown, linear per HVP, not a claim. The other seed-004 stages (`dualarrays`, `bot`,
  `compiled`) decline derivative operators by name and are not measured.

`tests/test_nested_engines.py` asserts the same bound with the same measurement (`hvp_costs`).
`claim_results` works on the embedded counts, so `python3 -m advalidate.report.check` recomputes
both verdicts from the page's own data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..lang.program import Program, parse, run_reference
from ..oracles.verdict import clip
from .fit import RATIO_TOLERANCE

NESTED_FAMILY = "hvp"  # the name `advalidate report --family` selects this section by
NESTED_STAGES = ("naive", "staged", "cayley", "sparse", "mutable", "tape", "parallel", "delta")
LINEAR_NESTED = ("mutable", "tape", "parallel", "delta")
CONFUSION_STAGES = (*NESTED_STAGES, "forward")
HVP_CONSTANT = 16  # reverse over forward on `tape`: H·v for at most 16 × f's primal ops (n ≥ 2)
HVP_N0 = 2  # below, f is one `sin` and the fixed part dominates
CONFUSION = "\\(z : R) -> grad (\\x -> x * grad (\\y -> x + y) 1.0) z"
CONFUSION_AT = 0.7


def _sum(terms: list[str]) -> str:
    """A balanced `+` tree (the parser's nesting limit stays far away)."""
    if len(terms) == 1:
        return terms[0]
    mid = len(terms) // 2
    return f"({_sum(terms[:mid])}) + ({_sum(terms[mid:])})"


def hvp_family(n: int) -> dict[str, Program]:
    """f_n and its derived programs: `grad`, reverse over forward (`rof`: `jvp f x v`, differentiated
    by a stage), forward over reverse (`for`: the HVP is the value) and reverse over reverse (`ror`:
    ∇f(x)·v, differentiated by a stage)."""
    xs = [f"x{i}" for i in range(1, n + 1)]
    ty = "R" if n == 1 else "(" + ", ".join(["R"] * n) + ")"
    pat = xs[0] if n == 1 else "(" + ", ".join(xs) + ")"
    terms = [f"x{i} * x{i + 1}" for i in range(1, n)] + [f"sin x{i}" for i in range(1, n + 1)]
    f = f"def f ({pat} : {ty}) : R = {_sum(terms)}\n"
    gs = [f"g{i}" for i in range(1, n + 1)]
    gpat = gs[0] if n == 1 else "(" + ", ".join(gs) + ")"
    vpat = "(" + ", ".join(f"v{i}" for i in range(1, n + 1)) + ")" if n > 1 else "v1"
    dot = _sum([f"g{i} * v{i}" for i in range(1, n + 1)])
    return {
        "f": parse(f + f"def main (x : {ty}) : R = f x\n"),
        "grad": parse(f + f"def main (x : {ty}) : {ty} = grad f x\n"),
        "rof": parse(f + f"def main ((x, v) : ({ty}, {ty})) : R = jvp f x v\n"),
        "for": parse(f + f"def main ((x, v) : ({ty}, {ty})) : {ty} = jvp (\\y -> grad f y) x v\n"),
        "ror": parse(f + f"def main ((x, {vpat}) : ({ty}, {ty})) : R = let {gpat} = grad f x in {dot}\n"),
    }


def _tup(vals: list) -> Any:
    v = vals[-1]
    for r in reversed(vals[:-1]):
        v = (r, v)
    return v


def point(n: int) -> tuple[Any, Any]:
    """The point x and direction v of the measurements (fixed: the counts do not depend on them)."""
    return _tup([0.3 + 0.1 * i for i in range(n)]), _tup([1.0 - 0.07 * i for i in range(n)])


def stage_cost(engine: str, prog: Program, x: Any) -> int:
    """One `vjp` and one backpropagator call (cotangent 1.0) of a stage: forward and reverse counts."""
    from ..impl import engine as make

    _, back = make(engine).vjp(prog, x)
    back(1.0)
    return back.stats["primal_ops"] + back.stats["reverse_cost"]


def run_core(core: Any, prog: Program, x: Any, tagged: bool = False) -> tuple[Any, int]:
    """A core program of `prog`'s type run by the reference interpreter's counting arithmetic
    (derivative operators by tagged forward mode when `tagged`): (value, operations)."""
    from ..lang.compile import Budget, Compiler
    from ..lang.deep import run_deep
    from ..lang.nested import TaggedOps
    from ..lang.numeric import reference_ops
    from ..lang.program import numeric_prims
    from ..lang.values import convert

    ops = reference_ops("float")
    arith = TaggedOps(ops) if tagged else ops
    fn = run_deep(lambda: Compiler(numeric_prims(arith), Budget(None)).compile_program(core))
    y = run_deep(lambda: fn(convert(x, prog.input_type, float, internal=True)))
    return convert(y, prog.output_type, lambda v: v, internal=False), ops.ops


def run_eliminated(prog: Program, x: Any) -> tuple[Any, int]:
    """The program after seed 001's elimination, evaluated (value, operations): what forward over
    reverse costs when `prog` is `jvp (\\y -> grad f y) x v`."""
    from ..impl.seed001 import eliminated

    return run_core(eliminated(prog), prog, x)


def hvp_costs(n: int, stages: Iterable[str] = ("tape",)) -> dict[str, float]:
    """Cost of one HVP / f's primal ops: `rof:<stage>` per stage, `for`, `ror` (on tape) and `primal`."""
    progs = hvp_family(n)
    x, v = point(n)
    base = run_reference(progs["f"], x).primal_ops
    out: dict[str, float] = {"primal": base}
    for s in stages:
        out[f"rof:{s}"] = stage_cost(s, progs["rof"], (x, v)) / base
    out["for"] = run_eliminated(progs["for"], (x, v))[1] / base
    out["ror"] = stage_cost("tape", progs["ror"], (x, v)) / base
    return out


def confusion(engine: str) -> dict[str, Any]:
    """The perturbation-confusion program on one stage: its value (1) and gradient (0), or why not."""
    from ..impl import engine as make

    try:
        y, back = make(engine).vjp(parse(CONFUSION), CONFUSION_AT)
        return {"value": float(y), "grad": float(back(1.0))}
    except (NotImplementedError, ArithmeticError, RuntimeError) as exc:
        return {"error": clip(f"{type(exc).__name__}: {exc}", 200)}


def measure_nested(
    ns: Iterable[int], stages: Iterable[str], progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """The section's data, as the page embeds it: per n the primal ops and the cost ratios, and the
    confusion program's result per stage."""
    stages = [s for s in NESTED_STAGES if s in set(stages)]
    rows = []
    for n in ns:
        c = hvp_costs(n, stages)
        rows.append({"n": n, "primal": int(c.pop("primal")), "ratios": {k: round(v, 4) for k, v in c.items()}})
        if progress:
            progress(f"nested hvp: n = {n} measured")
    conf_stages = [s for s in CONFUSION_STAGES if s in stages or s == "forward"]
    return {"stages": stages, "rows": rows, "confusion": {s: confusion(s) for s in conf_stages}}


def claim_results(data: dict[str, Any]) -> list[tuple[str, bool, str]]:
    """(key, holds, what was measured) of seed 001's claims, from the embedded data alone."""
    out = []
    conf = data["confusion"]
    wrong = [s for s, r in conf.items() if r.get("value") != 1.0 or r.get("grad") != 0.0]
    said = "value 1, gradient 0 on " + ", ".join(s for s in conf if s not in wrong)
    if wrong:
        said += "; not on " + ", ".join(f"{s} ({conf[s].get('error') or conf[s]})" for s in wrong)
    out.append(("nested-confusion", bool(conf) and not wrong, said))
    rows = [r for r in data["rows"] if r["n"] >= HVP_N0]
    stages = data["stages"]
    if "tape" in stages and rows:
        worst = max(r["ratios"]["rof:tape"] for r in rows)
        out.append(("nested-hvp", worst <= HVP_CONSTANT, f"tape: at most {worst:.3g} × primal at n ≥ {HVP_N0}"))
    linear = [s for s in LINEAR_NESTED if s in stages]
    if linear and len(rows) >= 2:
        growing = []
        for s in linear:
            first, last = rows[0]["ratios"][f"rof:{s}"], rows[-1]["ratios"][f"rof:{s}"]
            if last > first * (1 + RATIO_TOLERANCE):
                growing.append(f"{s} {first:.3g} → {last:.3g}")
        said = f"{', '.join(linear)}: n = {rows[0]['n']} → {rows[-1]['n']}" + (
            "; grows: " + "; ".join(growing) if growing else ", no growth"
        )
        out.append(("nested-hvp-flat", not growing, said))
    return out
