"""Planted wrong custom VJPs: how many `adv.check_function`, `torch.autograd.gradcheck` and
`jax.test_util.check_grads` catch, and their false alarms on the correct rules.

    python3 benchmarks/check_function.py [--markdown /tmp/readme_check_function.md] [--json out.json]
                                         [--only NAME ...] [--tools check_function,gradcheck,check_grads]

Every operation below is written once, against a small backend namespace (`TorchOps`, `JaxOps`),
with its correct backward rule and, for most, one realistic planted bug in the backward rule; each
rule becomes a `torch.autograd.Function` and a `jax.custom_vjp` function, so the same bug is measured
in both libraries. The inputs are drawn from a fixed seed.

- Planted bugs (`Op.bad` of each of `OPS`, at generic inputs): does the tool report a problem?
  `check_function` runs on both the torch and the JAX version, `gradcheck` on the torch version,
  `check_grads(f, args, order=1, modes=["rev"])` on the JAX version (forward mode does not apply to
  a custom_vjp function). An exception from the tool counts as a catch.
- False alarms: the correct rules at the same generic inputs, at inputs near kinks (`Op.kinks`:
  relu, abs, maximum, clip, max at 0, a bound or a tie, exactly or a tiny offset away) and at
  ill-conditioned inputs (`Op.ill`: a near-singular matrix, inputs of size 1e8, sqrt near 0, a
  vector of norm 1e-7). A false alarm is a `fail` verdict of check_function, False or an
  exception from gradcheck, an AssertionError or exception from check_grads. check_function's
  inconclusive verdicts are counted apart: they are its answer where finite differences cannot
  decide.

Every tool runs with its defaults: gradcheck(eps=1e-6, atol=1e-5, rtol=1e-3) on every element,
check_grads(eps=1e-4, atol=rtol=1e-5 in float64) along one random direction, check_function with 3
random direction pairs (seed 0). Exit status 1 when check_function misses a planted bug or
raises a false alarm (the acceptance criterion of issue 15), else 0.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's advalidate, whatever is installed

from advalidate.oracles.function import check_function  # noqa: E402

TOOLS = ("check_function", "gradcheck", "check_grads")


# -- backends ------------------------------------------------------------------------------------


class TorchOps:
    name = "torch"

    def __init__(self) -> None:
        import torch

        self.t = torch

    def asarray(self, a: Any) -> Any:
        a = np.asarray(a)
        return self.t.tensor(a, dtype=self.t.float64 if a.dtype.kind == "f" else self.t.int64)

    def __getattr__(self, name: str) -> Any:  # exp, tanh, sqrt, abs, where, maximum, ...
        return getattr(self.t, name)

    def sum(self, x: Any, axis: int | None = None, keepdims: bool = False) -> Any:
        return x.sum() if axis is None else x.sum(dim=axis, keepdim=keepdims)

    def mean(self, x: Any, axis: int) -> Any:
        return x.mean(dim=axis)

    def roll(self, x: Any, k: int) -> Any:
        return self.t.roll(x, k, 0)

    def cumsum(self, x: Any) -> Any:
        return self.t.cumsum(x, 0)

    def flip(self, x: Any) -> Any:
        return self.t.flip(x, (0,))

    def T(self, x: Any) -> Any:
        return x.transpose(-1, -2)

    def inv(self, a: Any) -> Any:
        return self.t.linalg.inv(a)

    def logabsdet(self, a: Any) -> Any:
        return self.t.linalg.slogdet(a)[1]

    def scatter_add(self, like: Any, idx: Any, g: Any) -> Any:
        return self.t.zeros_like(like).index_add(0, idx, g)

    def scatter_set(self, like: Any, idx: Any, g: Any) -> Any:
        return self.t.zeros_like(like).index_put((idx,), g)  # accumulate=False

    def ones_like(self, x: Any) -> Any:
        return self.t.ones_like(x)

    def clip(self, x: Any, lo: float, hi: float) -> Any:
        return self.t.clamp(x, lo, hi)

    def logsumexp(self, x: Any) -> Any:
        return self.t.logsumexp(x, 0)

    def softmax(self, x: Any) -> Any:
        return self.t.softmax(x, 0)

    def amax(self, x: Any) -> Any:
        return self.t.amax(x)

    def argmax_onehot(self, x: Any) -> Any:
        return (self.t.arange(x.shape[0]) == self.t.argmax(x)).to(x.dtype)

    def float32(self, x: Any) -> Any:
        return x.to(self.t.float32).to(self.t.float64)


class JaxOps:
    name = "jax"

    def __init__(self) -> None:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        self.jax, self.j = jax, jnp

    def asarray(self, a: Any) -> Any:
        a = np.asarray(a)
        return self.j.asarray(a, dtype=self.j.float64 if a.dtype.kind == "f" else self.j.int64)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.j, name)

    def sum(self, x: Any, axis: int | None = None, keepdims: bool = False) -> Any:
        return self.j.sum(x, axis=axis, keepdims=keepdims)

    def mean(self, x: Any, axis: int) -> Any:
        return self.j.mean(x, axis=axis)

    def roll(self, x: Any, k: int) -> Any:
        return self.j.roll(x, k, 0)

    def cumsum(self, x: Any) -> Any:
        return self.j.cumsum(x, 0)

    def flip(self, x: Any) -> Any:
        return self.j.flip(x, 0)

    def T(self, x: Any) -> Any:
        return self.j.swapaxes(x, -1, -2)

    def inv(self, a: Any) -> Any:
        return self.j.linalg.inv(a)

    def logabsdet(self, a: Any) -> Any:
        return self.j.linalg.slogdet(a)[1]

    def scatter_add(self, like: Any, idx: Any, g: Any) -> Any:
        return self.j.zeros_like(like).at[idx].add(g)

    def scatter_set(self, like: Any, idx: Any, g: Any) -> Any:
        return self.j.zeros_like(like).at[idx].set(g)

    def ones_like(self, x: Any) -> Any:
        return self.j.ones_like(x)

    def clip(self, x: Any, lo: float, hi: float) -> Any:
        return self.j.clip(x, lo, hi)

    def logsumexp(self, x: Any) -> Any:
        return self.jax.scipy.special.logsumexp(x)

    def softmax(self, x: Any) -> Any:
        return self.jax.nn.softmax(x)

    def amax(self, x: Any) -> Any:
        return self.j.max(x)

    def argmax_onehot(self, x: Any) -> Any:
        return (self.j.arange(x.shape[0]) == self.j.argmax(x)).astype(x.dtype)

    def float32(self, x: Any) -> Any:
        return x.astype(self.j.float32).astype(self.j.float64)


# -- the operations: forward, correct backward, planted bug --------------------------------------


@dataclass
class Op:
    """An operation with a hand-written backward rule `bwd(B, args, out, g) -> one gradient per
    argument` (None for integer arguments) and, unless `bug` is empty, a planted wrong rule."""

    name: str
    fwd: Callable[..., Any]
    bwd: Callable[..., tuple]
    inputs: Callable[[np.random.Generator], tuple]
    bug: str = ""  # the class of the planted bug
    bug_note: str = ""  # what exactly is wrong
    bad: Callable[..., tuple] | None = None
    kinks: list[tuple[str, Callable[[np.random.Generator], tuple]]] = field(default_factory=list)
    ill: list[tuple[str, Callable[[np.random.Generator], tuple]]] = field(default_factory=list)


def _normalize_bwd(B: Any, a: tuple, y: Any, g: Any, term: bool = True) -> tuple:
    (x,) = a
    n = B.sqrt(B.sum(x * x))
    return ((g - y * B.sum(y * g)) / n if term else g / n,)


def _rand(shape: tuple, lo: float = -1.5, hi: float = 1.5) -> Callable[[np.random.Generator], tuple]:
    return lambda rng: (rng.uniform(lo, hi, shape),)


def _away(shape: tuple, lo: float, hi: float) -> Callable[[np.random.Generator], tuple]:
    """Values with lo <= |x| <= hi and random signs."""
    return lambda rng: (rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape),)


def _near_singular(rng: np.random.Generator) -> tuple:
    q1, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    q2, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    return (q1 @ np.diag([3.0, 1.0, 0.5, 3e-7]) @ q2,)  # condition number 1e7, not symmetric


OPS: list[Op] = [
    Op(
        "tanh",
        lambda B, x: B.tanh(x),
        lambda B, a, y, g: (g * (1 - y * y),),
        _rand((5,)),
        "wrong sign",
        "g·(y² - 1) instead of g·(1 - y²)",
        lambda B, a, y, g: (g * (y * y - 1),),
    ),
    Op(
        "normalize",
        lambda B, x: x / B.sqrt(B.sum(x * x)),
        _normalize_bwd,
        _rand((5,)),
        "missing term",
        "g/‖x‖ without the projection -y⟨y, g⟩/‖x‖",
        lambda B, a, y, g: _normalize_bwd(B, a, y, g, term=False),
        ill=[("a vector of norm 1e-7", lambda rng: (rng.uniform(-1, 1, 5) * 1e-7,))],
    ),
    Op(
        "softmax",
        lambda B, x: B.softmax(x),
        lambda B, a, y, g: (y * (g - B.sum(y * g)),),
        _rand((6,)),
        "missing term",
        "y·g without -y⟨y, g⟩",
        lambda B, a, y, g: (y * g,),
    ),
    Op(
        "matmul",
        lambda B, a, b: a @ b,
        lambda B, a, y, g: (g @ B.T(a[1]), B.T(a[0]) @ g),
        lambda rng: (rng.standard_normal((3, 3)), rng.standard_normal((3, 3))),
        "wrong transpose",
        "grad of B is A·g instead of Aᵀ·g (square inputs, so the shapes fit)",
        lambda B, a, y, g: (g @ B.T(a[1]), a[0] @ g),
    ),
    Op(
        "gather",
        lambda B, x, idx: x[idx],
        lambda B, a, y, g: (B.scatter_add(a[0], a[1], g), None),
        lambda rng: (rng.standard_normal(5), np.array([0, 2, 2, 4, 0, 1])),
        "dropped duplicate-index accumulation",
        "scatter (index_put / .at[].set) instead of scatter-add in the backward of x[idx], idx repeats",
        lambda B, a, y, g: (B.scatter_set(a[0], a[1], g), None),
    ),
    Op(
        "bias_add",
        lambda B, x, b: x + b,
        lambda B, a, y, g: (g, B.sum(g, 0)),
        lambda rng: (rng.standard_normal((4, 3)), rng.standard_normal(3)),
        "wrong broadcasting reduction",
        "grad of the broadcast bias is the mean over the batch instead of the sum",
        lambda B, a, y, g: (g, B.mean(g, 0)),
    ),
    Op(
        "square",
        lambda B, x: x * x,
        lambda B, a, y, g: (2 * g * a[0],),
        _rand((5,)),
        "factor 2",
        "g·x instead of 2·g·x",
        lambda B, a, y, g: (g * a[0],),
        ill=[("large inputs, x ~ 1e8", lambda rng: (rng.uniform(1, 2, 5) * 1e8,))],
    ),
    Op(
        "roll",
        lambda B, x: B.roll(x, 2),
        lambda B, a, y, g: (B.roll(g, -2),),
        _rand((7,)),
        "off-by-one shift",
        "roll(g, -1) instead of roll(g, -2)",
        lambda B, a, y, g: (B.roll(g, -1),),
    ),
    Op(
        "row_mean",
        lambda B, x: B.mean(x, 1),
        lambda B, a, y, g: (B.ones_like(a[0]) * g[:, None] / a[0].shape[1],),
        lambda rng: (rng.standard_normal((3, 5)),),
        "right only for square inputs",
        "divides by the number of rows instead of columns (inputs 3 × 5)",
        lambda B, a, y, g: (B.ones_like(a[0]) * g[:, None] / a[0].shape[0],),
    ),
    Op(
        "logabsdet",
        lambda B, a: B.logabsdet(a),
        lambda B, a, y, g: (g * B.T(B.inv(a[0])),),
        lambda rng: (rng.standard_normal((4, 4)) + 3 * np.eye(4),),
        "right only for symmetric inputs",
        "g·A⁻¹ instead of g·A⁻ᵀ",
        lambda B, a, y, g: (g * B.inv(a[0]),),
        ill=[("a near-singular matrix (condition 1e7)", _near_singular)],
    ),
    Op(
        "logsumexp",
        lambda B, x: B.logsumexp(x),
        lambda B, a, y, g: (g * B.softmax(a[0]),),
        _rand((6,)),
        "cotangent ignored",
        "softmax(x) instead of g·softmax(x): right when the output cotangent is 1 (scalar output)",
        lambda B, a, y, g: (B.softmax(a[0]),),
        ill=[("large inputs, x ~ 1e8 ± 3", lambda rng: (1e8 + rng.uniform(-3, 3, 6),))],
    ),
    Op(
        "clip",
        lambda B, x: B.clip(x, -1.0, 1.0),
        lambda B, a, y, g: (g * (B.abs(a[0]) < 1),),
        _away((6,), 0.2, 2.0),
        "gradient through a clipped region",
        "g everywhere (straight-through) instead of g·[-1 < x < 1]",
        lambda B, a, y, g: (g * B.ones_like(a[0]),),
        kinks=[
            ("at the bound 1 exactly", lambda rng: (np.array([1.0, -0.5, 0.3]),)),
            ("at 1 + 1e-9", lambda rng: (np.array([1.0 + 1e-9, -0.5, 0.3]),)),
            ("at -1 - 3e-7", lambda rng: (np.array([-1.0 - 3e-7, -0.5, 0.3]),)),
        ],
    ),
    Op(
        "sqrt",
        lambda B, x: B.sqrt(x),
        lambda B, a, y, g: (g / (2 * y),),
        _rand((5,), 2.0, 4.0),
        "saved output used as input",
        "g/(2x) instead of g/(2√x)",
        lambda B, a, y, g: (g / (2 * a[0]),),
        ill=[("x near 0 (1e-9 .. 1e-7)", lambda rng: (np.array([1e-9, 3e-8, 1e-7, 2.0]),))],
    ),
    Op(
        "cumsum",
        lambda B, x: B.cumsum(x),
        lambda B, a, y, g: (B.flip(B.cumsum(B.flip(g))),),
        _rand((6,)),
        "wrong scan direction",
        "cumsum(g) instead of the reversed cumsum",
        lambda B, a, y, g: (B.cumsum(g),),
    ),
    Op(
        "exp",
        lambda B, x: B.exp(x),
        lambda B, a, y, g: (g * y,),
        _rand((6,)),
        "backward in float32",
        "g·y rounded to float32 (relative error ~ 3e-8)",
        lambda B, a, y, g: (B.float32(g * y),),
    ),
    Op(
        "relu",
        lambda B, x: B.where(x > 0, x, 0 * x),
        lambda B, a, y, g: (g * (a[0] > 0),),
        _away((5,), 0.1, 1.5),
        kinks=[
            ("at 0 exactly", lambda rng: (np.array([0.0, 0.7, -0.4]),)),
            ("at +1e-10", lambda rng: (np.array([1e-10, 0.7, -0.4]),)),
            ("at -3e-7", lambda rng: (np.array([-3e-7, 0.7, -0.4]),)),
            ("at +2e-5", lambda rng: (np.array([2e-5, 0.7, -0.4]),)),
        ],
    ),
    Op(
        "abs",
        lambda B, x: B.abs(x),
        lambda B, a, y, g: (g * B.sign(a[0]),),
        _away((5,), 0.1, 1.5),
        kinks=[
            ("at 0 exactly", lambda rng: (np.array([0.0, 0.7, -0.4]),)),
            ("at -1e-10", lambda rng: (np.array([-1e-10, 0.7, -0.4]),)),
            ("at +3e-7", lambda rng: (np.array([3e-7, 0.7, -0.4]),)),
        ],
    ),
    Op(
        "maximum",
        lambda B, x, y: B.maximum(x, y),
        lambda B, a, out, g: (g * (a[0] >= a[1]), g * (a[0] < a[1])),
        lambda rng: (rng.standard_normal(4), rng.standard_normal(4)),
        kinks=[
            ("a tie", lambda rng: (np.array([0.5, 1.0, -2.0]), np.array([0.5, 0.0, 1.0]))),
            ("a tie + 1e-9", lambda rng: (np.array([0.5 + 1e-9, 1.0, -2.0]), np.array([0.5, 0.0, 1.0]))),
        ],
    ),
    Op(
        "max",
        lambda B, x: B.amax(x),
        lambda B, a, y, g: (g * B.argmax_onehot(a[0]),),
        lambda rng: (rng.permutation(np.linspace(-1, 1, 5)),),
        kinks=[
            ("a tie", lambda rng: (np.array([0.3, 0.9, 0.9, -1.0]),)),
            ("a tie - 1e-8", lambda rng: (np.array([0.3, 0.9 - 1e-8, 0.9, -1.0]),)),
        ],
    ),
]


# -- wrapping a rule as a torch.autograd.Function and a jax.custom_vjp ----------------------------


def torch_function(op: Op, bwd: Callable, B: TorchOps) -> Callable:
    class Rule(B.t.autograd.Function):
        @staticmethod
        def forward(ctx: Any, *args: Any) -> Any:
            out = op.fwd(B, *args)
            ctx.save_for_backward(*args, out)
            return out

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            *args, out = ctx.saved_tensors
            return tuple(bwd(B, tuple(args), out, g))

    Rule.__name__ = Rule.__qualname__ = f"{op.name}_torch"
    return Rule.apply


def jax_function(op: Op, bwd: Callable, B: JaxOps) -> Callable:
    @B.jax.custom_vjp
    def rule(*args: Any) -> Any:
        return op.fwd(B, *args)

    def rule_fwd(*args: Any) -> Any:
        out = op.fwd(B, *args)
        return out, (args, out)

    def rule_bwd(res: Any, g: Any) -> Any:
        args, out = res
        return tuple(bwd(B, args, out, g))

    rule.defvjp(rule_fwd, rule_bwd)
    rule.__name__ = rule.__qualname__ = f"{op.name}_jax"
    return rule


# -- the tools -----------------------------------------------------------------------------------


@dataclass
class Outcome:
    alarm: bool  # the tool reported a problem
    status: str  # check_function: the worst verdict; others: "pass" / "alarm" / "error: ..."
    seconds: float


def run_check_function(fn: Callable, args: tuple, framework: str, seed: int = 0) -> Outcome:
    t = time.perf_counter()
    try:
        res = check_function(fn, *args, framework=framework, seed=seed)
    except Exception as exc:  # a crash of the checker itself is not a catch
        return Outcome(False, f"error: {type(exc).__name__}: {exc}", time.perf_counter() - t)
    statuses = [v.status for v in res.verdicts]
    worst = next((s for s in ("fail", "inconclusive", "pass") if s in statuses), "not_applicable")
    return Outcome(not res.ok, worst, time.perf_counter() - t)


def run_gradcheck(fn: Callable, args: tuple, B: TorchOps) -> Outcome:
    torch = B.t
    inputs = [B.asarray(a) for a in args]
    for x in inputs:
        if x.dtype == torch.float64:
            x.requires_grad_(True)
    t = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ok = torch.autograd.gradcheck(fn, tuple(inputs), raise_exception=False)
        return Outcome(not ok, "pass" if ok else "alarm", time.perf_counter() - t)
    except Exception as exc:
        return Outcome(True, f"error: {type(exc).__name__}", time.perf_counter() - t)


def run_check_grads(fn: Callable, args: tuple, B: JaxOps) -> Outcome:
    from jax.test_util import check_grads

    const = {i: B.asarray(a) for i, a in enumerate(args) if np.asarray(a).dtype.kind != "f"}
    diff = [B.asarray(a) for i, a in enumerate(args) if i not in const]

    def closed(*xs: Any) -> Any:  # integer arguments closed over: check_grads perturbs every argument
        it = iter(xs)
        return fn(*[const[i] if i in const else next(it) for i in range(len(args))])

    t = time.perf_counter()
    try:
        check_grads(closed, tuple(diff), order=1, modes=["rev"])
        return Outcome(False, "pass", time.perf_counter() - t)
    except AssertionError:
        return Outcome(True, "alarm", time.perf_counter() - t)
    except Exception as exc:
        return Outcome(True, f"error: {type(exc).__name__}", time.perf_counter() - t)


# -- the benchmark -------------------------------------------------------------------------------


@dataclass
class Case:
    op: str
    group: str  # "bug", "generic", "kink" or "ill"
    label: str  # the bug class or the input description
    note: str
    results: dict[str, Outcome] = field(default_factory=dict)  # tool column -> outcome


COLUMNS = ("check_function/torch", "check_function/jax", "gradcheck", "check_grads")


def run(only: list[str] | None = None, tools: tuple[str, ...] = TOOLS, seed: int = 0) -> list[Case]:
    have = {}
    try:
        have["torch"] = TorchOps()
    except ImportError:
        print("torch is not installed: its columns are skipped", file=sys.stderr)
    try:
        have["jax"] = JaxOps()
    except ImportError:
        print("jax is not installed: its columns are skipped", file=sys.stderr)
    cases = []
    for op in OPS:
        if only and op.name not in only:
            continue
        rng = np.random.default_rng([seed, sum(map(ord, op.name))])
        generic = op.inputs(rng)
        plan = []
        if op.bad is not None:
            plan.append(("bug", op.bug, op.bug_note, op.bad, generic))
        plan.append(("generic", "correct rule, generic input", "", op.bwd, generic))
        plan += [("kink", label, "", op.bwd, make(rng)) for label, make in op.kinks]
        plan += [("ill", label, "", op.bwd, make(rng)) for label, make in op.ill]
        for group, label, note, rule, args in plan:
            case = Case(op.name, group, label, note)
            for lib, B in have.items():
                fn = torch_function(op, rule, B) if lib == "torch" else jax_function(op, rule, B)
                if "check_function" in tools:
                    case.results[f"check_function/{lib}"] = run_check_function(fn, args, lib, seed)
                if lib == "torch" and "gradcheck" in tools:
                    case.results["gradcheck"] = run_gradcheck(fn, args, B)
                if lib == "jax" and "check_grads" in tools:
                    case.results["check_grads"] = run_check_grads(fn, args, B)
            cases.append(case)
            cells = "  ".join(f"{c}={r.status}" for c, r in case.results.items())
            print(f"{op.name:10s} {group:8s} {label[:40]:40s} {cells}", file=sys.stderr)
    return cases


def summary(cases: list[Case]) -> dict[str, Any]:
    cols = sorted({c for case in cases for c in case.results}, key=COLUMNS.index)
    out: dict[str, Any] = {"columns": cols, "groups": {}}
    for group in ("bug", "generic", "kink", "ill"):
        sel = [c for c in cases if c.group == group]
        row = {"cases": len(sel)}
        for col in cols:
            rs = [c.results[col] for c in sel if col in c.results]
            row[col] = {
                "alarms": sum(r.alarm for r in rs),
                "inconclusive": sum(r.status == "inconclusive" for r in rs),
                "seconds": round(sum(r.seconds for r in rs), 2),
            }
        out["groups"][group] = row
    return out


def markdown(cases: list[Case]) -> str:
    s = summary(cases)
    cols = s["columns"]
    mark = {True: "**caught**", False: "missed"}
    lines = [
        "Planted wrong custom VJPs, each written once as a `torch.autograd.Function` and a `jax.custom_vjp`",
        "(`python3 benchmarks/check_function.py --markdown FILE`; every tool with its defaults):",
        "",
        "| operation | planted bug | " + " | ".join(f"`{c}`" for c in cols) + " |",
        "|---|---|" + "---|" * len(cols),
    ]
    for c in cases:
        if c.group == "bug":
            cells = [mark[c.results[col].alarm] if col in c.results else "—" for col in cols]
            lines.append(f"| `{c.op}` | {c.label}: {c.note} | " + " | ".join(cells) + " |")
    bug = s["groups"]["bug"]
    lines.append(
        f"| **caught** | of {bug['cases']} | "
        + " | ".join(f"**{bug[col]['alarms']}/{bug['cases']}**" for col in cols)
        + " |"
    )
    lines += [
        "",
        "False alarms on the correct rules (check_function: fail verdicts, with its inconclusive verdicts in",
        "parentheses; gradcheck / check_grads: reported a mismatch or raised):",
        "",
        "| inputs | cases | " + " | ".join(f"`{c}`" for c in cols) + " |",
        "|---|---:|" + "---:|" * len(cols),
    ]
    names = {"generic": "generic inputs", "kink": "near kinks", "ill": "ill-conditioned"}
    for group, name in names.items():
        row = s["groups"][group]
        cells = []
        for col in cols:
            r = row[col]
            cells.append(
                f"{r['alarms']} ({r['inconclusive']} inconclusive)"
                if col.startswith("check_function")
                else f"{r['alarms']}"
            )
        lines.append(f"| {name} | {row['cases']} | " + " | ".join(cells) + " |")
    lines += ["", "Per input near a kink or ill-conditioned (false alarm = ✗; check_function: its verdict):", ""]
    lines += ["| operation | input | " + " | ".join(f"`{c}`" for c in cols) + " |", "|---|---|" + "---|" * len(cols)]
    for c in cases:
        if c.group in ("kink", "ill"):
            cells = []
            for col in cols:
                r = c.results.get(col)
                if r is None:
                    cells.append("—")
                elif col.startswith("check_function"):
                    cells.append("✗ fail" if r.alarm else r.status)
                else:
                    cells.append("✗" if r.alarm else "ok")
            lines.append(f"| `{c.op}` | {c.label} | " + " | ".join(cells) + " |")
    total = {col: sum(s["groups"][g][col]["seconds"] for g in s["groups"]) for col in cols}
    lines += ["", "Time, all cases: " + ", ".join(f"`{col}` {total[col]:.1f} s" for col in cols) + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", help="write the README tables to this file")
    ap.add_argument("--json", help="write every outcome as JSON to this file")
    ap.add_argument("--only", nargs="*", help="operations to run (default all)")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--seed", type=int, default=0)
    ns = ap.parse_args(argv)
    cases = run(ns.only, tuple(ns.tools.split(",")), ns.seed)
    text = markdown(cases)
    print(text)
    if ns.markdown:
        Path(ns.markdown).write_text(text, encoding="utf-8")
    if ns.json:
        data = {
            "summary": summary(cases),
            "cases": [
                {
                    "op": c.op,
                    "group": c.group,
                    "label": c.label,
                    "results": {k: vars(r) for k, r in c.results.items()},
                }
                for c in cases
            ],
        }
        Path(ns.json).write_text(json.dumps(data, indent=1), encoding="utf-8")
    bug_cols = [c for c in summary(cases)["columns"] if c.startswith("check_function")]
    s = summary(cases)["groups"]
    missed = any(s["bug"][c]["alarms"] < s["bug"]["cases"] for c in bug_cols)
    false = any(s[g][c]["alarms"] for g in ("generic", "kink", "ill") for c in bug_cols)
    return 1 if missed or false else 0


if __name__ == "__main__":
    raise SystemExit(main())
