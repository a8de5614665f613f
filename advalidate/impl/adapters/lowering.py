"""Lowerings: every library call that computes a construct of the language, and a seeded choice among them.

A library can express one construct of the language in many ways, each with semantics of its own:
JAX reads an array by `a[i]` (indices clamped), `a.at[i].get(mode="fill")`, `jnp.take(..., mode="wrap")`,
...; PyTorch scatters by `index_add`, `index_put_(accumulate=False)` (one of the duplicates wins),
`scatter_reduce(..., "prod")`, .... The AD bugs of released libraries live in these calls and modes,
so a tensor adapter has a *lowering table* (one module per library: `advalidate/libraries/NAME/
lowerings.py`): for each construct every call that computes it, each a
`Lowering` that says in words what the call computes (`semantics`), whether that is the language's
construct exactly (`faithful`), how the library documents ties (`ties`: "hull" where it splits the
cotangent among tied elements, "piece" where one of them takes it) and what it documents as
undefined (`undefined`). A lowering is (construct, library call, mode/options, own semantics,
transformation): the transformations of issue #26 (`vmap`, `scan`, `checkpoint`, ...) and the
special functions of issue #25 are further rows of the same tables.

Constructs (what `to_python`'s array runtime asks for, `advalidate.lang.xp`):

- `gather`: `a[idx]` over the leading `len(idx)` dimensions (language: out of range reads 0);
- `scatter-add`: zeros(shape) with values added at their targets (out of range dropped);
- `scatter-max`: the largest value sent to each target (untouched positions 0);
- `sum`, `max`, `min`: reductions over axis 0 (`sumOuter`, `maxOuter`, `minOuter`).

Empty extents reach the calls as users meet them: a gather with no index (an empty result), a
scatter with no source or into a zero-size result, a sum over an empty axis. Only a read from a
zero-size array (every read out of range), a maximum over an empty axis, and a scatter of nothing
through a call documented to take no empty operand (`empty=False`: numpy's maxima) make no call.

`LoweredArrays` is the array runtime that runs a program through a table: at every occurrence of a
construct it asks the `Plan` for a lowering. The plan draws one per occurrence from the check's seed
(`Random(seed, construct, k)` for the k-th occurrence in a run, so every run of the program at
nearby inputs makes the same choices, and a campaign replays them); `only` keeps one lowering and
puts the table's first (the language-faithful one) everywhere else, which localises a failure to
one call. The plan records what it used, the ties it met (a kink: judged by the selection-gradient
verdict with the lowerings' tie rules) and where it declined a lowering the library documents as
undefined for that data (recorded, and the faithful lowering used instead).

Out of range: a lowering with `oob="mask"` gets in-range indices only (the runtime clips and masks
as the language does: the call raises or is undefined out of range); `"wrap-once"` also gets the
negative indices in [-n, 0) (PyTorch's indexing wraps them); `"own"` gets every index as computed
(the call's mode decides: JAX's clip / fill / drop / wrap).
"""

from __future__ import annotations

import functools
import importlib
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...lang.specials import SPECIALS
from ...lang.xp import XpArrays

ARRAY_CONSTRUCTS = ("gather", "scatter-add", "scatter-max", "sum", "max", "min")


def special_construct(name: str) -> str:
    """The construct of the special function `name` (`special:erf`): rows in `adapters/specials.py`."""
    return f"special:{name}"


CONSTRUCTS = ARRAY_CONSTRUCTS + tuple(special_construct(n) for n in SPECIALS)
#: Short module names the rows' calls use (`jnp.sum`) -> the module: each library's `specials.py`
#: registers its own (`alias`), so this module names no library.
ALIASES: dict[str, str] = {}
OOB = ("mask", "wrap-once", "own")
PALETTE = 2  # lowerings per construct per program
MET_ARGS = 64  # argument points kept per special function's call (`Plan.note_args`)


@dataclass(frozen=True)
class Lowering:
    """One library call computing one construct (see the module docstring)."""

    construct: str
    call: str  # as a user writes it: "a.at[i].get"
    method: str  # the namespace method implementing it (its source goes into a finding's repro.py)
    mode: str = ""  # mode and options: "mode='clip'", "accumulate=False"
    semantics: str = ""  # what the call computes, in words (the library's own semantics)
    faithful: bool = True  # the language's construct exactly, on every input the runtime hands it
    oob: str = "mask"  # which indices reach the call (module docstring)
    ties: str = "hull"  # the documented tie rule: "hull" (split among tied) or "piece" (one takes it)
    undefined: str = ""  # why repeated targets are out of the call's domain ("documented as undefined")
    single: bool = False  # only for one index dimension (a gather over the first axis)
    transformation: str = ""  # a transformation of the library around the call (issue #26)
    weight: int = 1  # how often a plan draws it: 3 for the call users write by default
    empty: bool = True  # the call takes zero-size operands (a maximum of nothing raises in numpy)
    lead: tuple = ()  # a special function's constant leading arguments: (1,) for polygamma(1, x)
    keywords: tuple = ()  # ... and constant keyword arguments: (("threshold", 40.0),)

    def __post_init__(self) -> None:
        if self.construct not in CONSTRUCTS or self.oob not in OOB or self.ties not in ("hull", "piece"):
            raise ValueError(f"bad lowering {self!r}")

    @property
    def name(self) -> str:
        """`call(mode)` (with the transformation around it): how findings name it."""
        text = f"{self.call}({self.mode})" if self.mode else self.call
        return f"{self.transformation}∘{text}" if self.transformation else text

    def text(self, args: list[str]) -> str:
        """A special function's call on the arguments `args` (source text), as a repro.py writes it."""
        keywords = [f"{k}={v!r}" for k, v in self.keywords]
        return f"{self.call}({', '.join([*map(repr, self.lead), *args, *keywords])})"

    def apply(self, *args: Any) -> Any:
        """A special function's call on `args`, with its constant arguments."""
        return resolve(self.call)(*self.lead, *args, **dict(self.keywords))


def alias(short: str, module: str) -> None:
    """Let rows write `short.f` for `module.f` (`alias("jnp", "jax.numpy")`); before any row is made."""
    ALIASES[short] = module


@functools.cache
def resolve(code: str) -> Callable[..., Any]:
    """The function `code` names (`jnp.abs`, `torch.special.erf`, ...)."""
    head, _, rest = code.partition(".")
    path = [ALIASES.get(head, head), *rest.split(".")]
    for k in range(len(path), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(path[:k]))
        except ImportError:
            continue
        for attr in path[k:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(code)


Table = dict[str, tuple[Lowering, ...]]


def check_table(table: Table, namespace: type) -> Table:
    """A table is complete (every construct, the first lowering faithful) and names real methods."""
    for c in CONSTRUCTS:
        rows = table.get(c, ())
        if not rows or not rows[0].faithful or rows[0].oob != "mask":
            raise ValueError(f"lowering table: {c!r} needs a faithful first lowering with oob='mask'")
        for low in rows:
            fn = resolve(low.call) if c.startswith("special:") else getattr(namespace, low.method, None)
            if low.construct != c or not callable(fn):
                raise ValueError(f"lowering table: {low.name} ({low.method}) is not a {c!r} method of {namespace}")
    return table


@dataclass
class Plan:
    """The lowerings a run uses: drawn per occurrence from `seed` (see the module docstring)."""

    table: Table
    seed: int
    only: str | None = None  # keep this lowering's name, the first lowering elsewhere
    pin: str | None = None  # this lowering at every occurrence of its construct (where it applies)
    used: list[Lowering] = field(default_factory=list)
    ties: list[str] = field(default_factory=list)
    #: where ties were met: (the call, the occurrence of its construct in the run)
    tie_sites: set[tuple[Lowering, int]] = field(default_factory=set)
    undefined: list[str] = field(default_factory=list)
    #: special functions met outside the language's domain (`hypot` at (0, 0)): derivative undefined
    outside: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    #: per special function's row (name): the scalar arguments it was called with (`note_args`)
    met_args: dict[str, list[tuple[float, ...]]] = field(default_factory=dict)
    epoch: int = 0  # the judged inputs so far (`forget_met`): each after the first draws afresh

    def start(self) -> None:
        """A new run of the program: the k-th occurrence of a construct gets the same lowering again."""
        self.counts = {}

    def pick(self, construct: str, single: bool, out_of_range: bool = False) -> Lowering:
        """The lowering of the next occurrence of `construct`: drawn from the program's palette for
        it (at most PALETTE rows, drawn once from the seed by their weights, so that a loop over
        many occurrences does not make the library compile every call of the table), one per
        occurrence. An occurrence with indices `out_of_range` draws from the calls that receive
        them (`oob="own"`: the library's clamping, wrapping, dropping, filling), where a library's
        own out-of-range rules are exercised; a masking call would see only the in-range ones."""
        k = self.counts.get(construct, 0)
        self.counts[construct] = k + 1
        rows = [low for low in self.table[construct] if single or not low.single]
        pinned = [low for low in rows if low.name == self.pin]
        if pinned:
            return pinned[0]
        first = rows[0]
        own = [low for low in rows if low.oob == "own"] if out_of_range else []
        rows, tag = (own, ":oob") if own else (rows, "")
        rng = random.Random(f"advalidate-palette:{self.seed}:{self._draw}{construct}:{single}{tag}")
        palette: list[Lowering] = []
        while len(palette) < min(PALETTE, len(rows)):
            low = rng.choices(rows, weights=[r.weight for r in rows])[0]
            if low not in palette:
                palette.append(low)
        low = random.Random(f"advalidate-lowering:{self.seed}:{self._draw}{construct}:{k}{tag}").choice(palette)
        if self.only is not None and low.name != self.only:
            low = first
        return low

    @property
    def _draw(self) -> str:
        """What the draws are keyed by besides the seed: the judged input after the first."""
        return f"{self.epoch}:" if self.epoch > 1 else ""

    def forget_met(self) -> None:
        """Judging at another input: the ties and undefined cases met so far were met elsewhere, and
        the calls are drawn afresh for it. A program's constructs are few (a scatter maximum occurs
        in about one program in fourteen), so each judged input (the check's and the user-met
        ones, `oracles.user_inputs`) exercising its own calls multiplies the calls a campaign reaches
        at no extra run; the judged inputs come in a fixed order, so a replay, the localisation of
        a failure (`only`) and a finding's repro.py meet the same draws. `used` starts afresh too:
        the calls of a failing input are those its failure is localised among and its tie rule
        comes from (a verdict's `calls` are those of the input it was decided at)."""
        self.ties, self.undefined, self.used, self.outside = [], [], [], []
        self.tie_sites = set()
        self.met_args = {}
        self.epoch += 1

    def note_args(self, low: Lowering, args: Sequence[Any]) -> None:
        """A special function's call met these (concrete, broadcast element-wise) arguments: the
        first MET_ARGS distinct scalar points per row are kept, so that a failure of a program can
        be put to the one call, alone at the arguments it met (the consistency oracle judges a
        spread of them: `spread`)."""
        seen = self.met_args.setdefault(low.name, [])
        if len(seen) >= MET_ARGS:
            return
        for point in zip(*(np.ravel(a) for a in np.broadcast_arrays(*args))):
            p = tuple(float(v) for v in point)
            if p not in seen:
                seen.append(p)
                if len(seen) >= MET_ARGS:
                    return

    def use(self, low: Lowering) -> Lowering:
        if low not in self.used:
            self.used.append(low)
        return low

    def note_outside(self, text: str) -> None:
        if text not in self.outside:
            self.outside.append(text)

    def note_tie(self, low: Lowering) -> None:
        text = f"{low.name} ({low.ties})"
        if text not in self.ties:
            self.ties.append(text)
        self.tie_sites.add((low, self.counts.get(low.construct, 0)))

    def composed_ties(self) -> str | None:
        """Why the gradient at the ties met need not be one piece's (or in their hull) although each
        call follows its documented rule, or None. A call giving a tie to one argument decides by
        argument position, not by piece: `fmax(x, y) - fmax(y, x)` (0 everywhere) has gradient
        (1, -1) at x = y, each call right by its rule; so does a splitting call composed with one
        giving it to an argument (`fmax(y, x) / maximum(y, x)`: (0.5, -0.5)). Calls splitting
        ties evenly compose into a point of the hull (the cotangents of every use of one tie are
        split alike), so only those two cases are named."""
        if len({low.ties for low, _ in self.tie_sites}) > 1:
            return f"ties met by calls of different tie rules ({', '.join(self.ties)})"
        if sum(low.ties == "piece" for low, _ in self.tie_sites) > 1:
            return "ties met at several calls giving a tie to one argument"
        return None

    @property
    def tied(self) -> set[str]:
        """The constructs met at a tie or kink."""
        return {low.construct for low, _ in self.tie_sites}

    @property
    def tie_rule(self) -> str:
        """ "piece" when every tie met is resolved by a call documented to give it to one element."""
        return "piece" if all(t.endswith("(piece)") for t in self.ties) else "hull"

    def own(self) -> list[Lowering]:
        """The lowerings used other than the tables' first ones (the language's own way)."""
        return [low for low in self.used if low is not self.table[low.construct][0]]


def spread(points: Sequence[tuple[float, ...]], k: int) -> list[tuple[float, ...]]:
    """At most `k` of `points`, evenly spaced in their sorted order (the extremes among them): a
    call met at a few points of one size and at one far out is judged at both."""
    ordered = sorted(set(points))
    if len(ordered) <= k:
        return ordered
    return [ordered[round(i * (len(ordered) - 1) / (k - 1))] for i in range(k)]


def _values(xp: Any, a: Any) -> np.ndarray | None:
    """`a`'s numbers when they are concrete (not under a tracing compiler)."""
    fn = getattr(xp, "values", None)
    return None if fn is None else fn(a)


class LoweredArrays(XpArrays):
    """`to_python`'s array runtime with gathers, scatters and reductions through a `Plan`'s lowerings."""

    def __init__(self, ops: Any, xp: Any, plan: Plan) -> None:
        super().__init__(ops, xp)
        self.plan = plan

    # ---- gather ----
    def take(self, a: Any, js: Sequence[Any], elem: str, fill: Any) -> Any:
        if elem != "R" or fill is not None or not js:
            return super().take(a, js, elem, fill)
        a = self.arr(a)
        ash = tuple(a.shape)
        m = len(js)
        outer = np.broadcast_shapes(*(np.shape(j) for j in js))
        if 0 in ash[:m]:  # nothing to read from: every read is out of range (0), no library call
            return super().take(a, js, elem, fill)
        js = [np.ascontiguousarray(np.broadcast_to(np.asarray(j, dtype=np.int64), outer)) for j in js]
        low = self.plan.use(self.plan.pick("gather", m == 1, not _in_range(js, ash)))
        fn = getattr(self.xp, low.method)
        if low.oob == "own":
            return fn(a, tuple(js))
        lo = [-n if low.oob == "wrap-once" else 0 for n in ash[:m]]
        valid = np.ones(outer, dtype=bool)
        for j, n, low_end in zip(js, ash, lo):
            valid &= (j >= low_end) & (j < n)
        if valid.all():
            return fn(a, tuple(js))
        clipped = tuple(np.where(valid, j, 0) for j in js)
        rest = ash[m:]
        mask = np.ascontiguousarray(np.broadcast_to(valid.reshape(outer + (1,) * len(rest)), outer + rest))
        return self.xp.where(mask, fn(a, clipped), self.xp.zeros(outer + rest))

    # ---- scatter ----
    def scatter(
        self, a: Any, js: Sequence[Any], src: Any, shape: Any, elem: str, combine: str, zero: Any, combine_fn: Any
    ) -> Any:
        m = len(js)
        if elem != "R" or combine_fn is not None or zero is not None or m == 0:
            return super().scatter(a, js, src, shape, elem, combine, zero, combine_fn)
        a = self.arr(a)
        src, shape = tuple(src), tuple(shape)
        rest = tuple(a.shape[len(src) :])
        n = math.prod(src)
        targets = [np.broadcast_to(np.asarray(j, dtype=np.int64), src).ravel() for j in js]
        construct = "scatter-add" if combine == "add" else "scatter-max"
        values = self.xp.reshape(a, (n,) + rest)
        low = self.plan.pick(construct, m == 1, not _in_range(targets, shape))
        ts, vs = self._in_reach(low, targets, values, shape[:m])
        if low.undefined and _duplicates(ts):
            self.plan.undefined.append(f"{low.name} with repeated targets: {low.undefined}")
            low = self.plan.table[construct][0]
            ts, vs = self._in_reach(low, targets, values, shape[:m])
        if not len(ts[0]) and not low.empty:  # nothing to scatter, and the call takes no empty operand
            return self.zeros(shape)
        self.plan.use(low)
        out = getattr(self.xp, low.method)(shape, tuple(ts), vs)
        if construct == "scatter-max":
            self._tie_scatter(low, ts, vs)
        return out

    def _in_reach(self, low: Lowering, targets: list, values: Any, lead: tuple) -> tuple[list, Any]:
        """The targets (and their values) a lowering gets: every one for `oob="own"`, else those in
        range (and the negative ones in [-n, 0) for "wrap-once")."""
        if low.oob == "own":
            return targets, values
        valid = np.ones(len(targets[0]), dtype=bool)
        for t, k in zip(targets, lead):
            valid &= (t >= (-k if low.oob == "wrap-once" else 0)) & (t < k)
        if valid.all():
            return targets, values
        pos = np.flatnonzero(valid)
        return [t[pos] for t in targets], self.xp.getitem(values, (pos,))

    # ---- reductions ----
    def reduce(self, op: str, a: Any, shape: Any, elem: str) -> Any:
        if elem != "R":
            return super().reduce(op, a, shape, elem)
        a = self.arr(a)
        construct = {"sumOuter": "sum", "maxOuter": "max", "minOuter": "min"}[op]
        if not a.shape or (a.shape[0] == 0 and construct != "sum"):  # a maximum of nothing: no library call
            return super().reduce(op, a, shape, elem)
        low = self.plan.use(self.plan.pick(construct, len(a.shape) == 1))
        out = getattr(self.xp, low.method)(a)
        if construct != "sum":
            v = _values(self.xp, a)
            if v is not None and v.shape[0] > 1:
                best = v.max(axis=0) if construct == "max" else v.min(axis=0)
                if ((v == best).sum(axis=0) > 1).any():
                    self.plan.note_tie(low)
        return out

    def _tie_scatter(self, low: Lowering, targets: list, values: Any) -> None:
        v = _values(self.xp, values)
        if v is None or not len(targets[0]):
            return
        pos = [tuple(int(t[p]) for t in targets) for p in range(len(targets[0]))]
        flat = v.reshape(len(pos), -1)
        best: dict[tuple, np.ndarray] = {}
        for p, row in zip(pos, flat):
            if p in best:
                if (best[p] == row).any():
                    self.plan.note_tie(low)
                    return
                best[p] = np.maximum(best[p], row)
            else:
                best[p] = row


def _in_range(idxs: Sequence[np.ndarray], extents: Sequence[int]) -> bool:
    """Every index within [0, extent) of its dimension."""
    return all(not np.size(j) or (int(np.min(j)) >= 0 and int(np.max(j)) < n) for j, n in zip(idxs, extents))


def _duplicates(targets: list) -> bool:
    if not len(targets[0]):
        return False
    keys = np.stack([np.asarray(t) for t in targets], axis=1)
    return len(np.unique(keys, axis=0)) < len(keys)
