"""Program families parameterised by n, for the complexity work.

Each `Family` in `FAMILIES` has a `name`, a `description` citing the paper it comes from, the
`features` it exercises, `program(n) -> Program`, `input(n, seed) -> value` and, where it can be
computed by hand, `expected(n, x)` (the value the program must produce; None otherwise).
`max_n` is the largest n whose program stays within the parser's nesting limit, or whose input
arrays hold at most the `DISTINCT` magnitudes there are to draw (None: any n; the input then grows
with n instead of the program). A family whose input grows with n says how many
reals `input(n)` holds (`reals`), and n is refused, before anything is made, where that is more
than the memory budget (`lang.limits.max_reals`, `--max-reals`): `gen --family dot --n 1000000000`
would otherwise draw two lists of a billion reals.

All programs are written as source text, so `program(n).source` is also what `advalidate gen`
users would read; inputs are drawn from `random.Random` seeded with a string (the same on every
machine).

Over 800 lines on purpose: it is one catalogue, `FAMILIES`, each family's program text, input and
hand-computed value written next to each other.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..lang.program import Program, parse


@dataclass(frozen=True)
class Family:
    name: str
    description: str
    features: frozenset[str]
    text: Callable[[int], str] = field(repr=False)
    make_input: Callable[[int, random.Random], Any] = field(repr=False)
    expect: Callable[[int, Any], Any] | None = field(default=None, repr=False)
    max_n: int | None = None
    reals: Callable[[int], int] | None = field(default=None, repr=False)  # reals in input(n), if it grows

    def program(self, n: int) -> Program:
        """The family's program for parameter n >= 1 (type-checked)."""
        return _program(self, self._check_n(n))

    def source(self, n: int) -> str:
        return self.text(self._check_n(n))

    def input(self, n: int, seed: int = 0) -> Any:
        """An input for `program(n)`, the same for the same (n, seed) on every machine."""
        return self.make_input(self._check_n(n), random.Random(f"family:{self.name}:{n}:{seed}"))

    def expected(self, n: int, x: Any) -> Any:
        """The value `program(n)` must have at `x`, or None when not derivable by hand."""
        return None if self.expect is None else self.expect(self._check_n(n), x)

    def limit(self) -> int | None:
        """The largest n accepted: `max_n`, and where the input grows with n, the largest n whose
        input holds at most the memory budget's reals (None: any n)."""
        if self.reals is None:
            return self.max_n
        from ..lang.limits import max_reals

        budget = max_reals()
        lo, hi = 0, self.max_n or 2 * budget  # every reals(n) is at least n / 2: no n above fits
        while lo < hi:  # the largest n in [0, hi] with reals(n) <= budget (reals grows with n)
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if self.reals(mid) <= budget else (lo, mid - 1)
        return lo

    def _check_n(self, n: int) -> int:
        limit = self.limit()
        if n < 1 or (limit is not None and n > limit):
            why = ""
            if self.reals is not None and n > limit and (self.max_n is None or n <= self.max_n):
                from ..lang.limits import max_reals

                why = (
                    f": its input would hold {self.reals(n)} reals, more than the memory budget of "
                    f"{max_reals()} reals (--max-reals)"
                )
            raise ValueError(f"family {self.name}: n must be in 1..{limit or 'any'}, got {n}{why}")
        return int(n)


@lru_cache(maxsize=256)
def _program(fam: Family, n: int) -> Program:
    return parse(fam.text(n), filename=f"<family {fam.name} n={n}>")


def _real(rng: random.Random, lo: float = 0.1, hi: float = 2.0, signed: bool = True) -> float:
    v = round(rng.uniform(lo, hi), 3)
    return -v if signed and rng.random() < 0.5 else v


def _balanced_sum(terms: list[str]) -> str:
    """`a + b + c + d` as a balanced tree of `+` (depth log n instead of n)."""
    if len(terms) == 1:
        return terms[0]
    mid = len(terms) // 2
    return f"({_balanced_sum(terms[:mid])} + {_balanced_sum(terms[mid:])})"


# ---- doubling chain (seed 000 Fig. 2) -------------------------------------------------------


def _doubling(n: int) -> str:
    lines = ["\\(x : R) ->", "  let x1 = x + x in"]
    lines += [f"  let x{k} = x{k - 1} + x{k - 1} in" for k in range(2, n + 1)]
    lines.append(f"  x{n}")
    return "\n".join(lines) + "\n"


def _doubling_input(n: int, rng: random.Random) -> float:
    # 2^-n scaling keeps the value 2^n x moderate; doubling is exact in floating point.
    return math.ldexp(_real(rng, 0.5, 1.5, signed=False), -min(n, 1000))


def _doubling_loop(n: int) -> str:
    return f"\\(x : R) ->\n  letrec go (k : Z) (v : R) : R = if k <= 0 then v else go (k - 1) (v + v) in\n  go {n} x\n"


# ---- the f1 ... f4 pattern of seed 000 section 6 ------------------------------------------


def _fpattern(n: int) -> str:
    lines = ["\\(x : R) ->", "  let s1 = x * x in"]
    prev2 = "x"
    for k in range(2, n + 1):
        lines.append(f"  let s{k} = 0.5 * s{k - 1} + 0.5 * {prev2} in")
        prev2 = f"s{k - 1}"
    lines.append(f"  s{n}")
    return "\n".join(lines) + "\n"


def _fpattern_value(n: int, x: float) -> float:
    a, b = x, x * x  # s0 = x, s1 = x * x
    for _ in range(2, n + 1):
        a, b = b, 0.5 * b + 0.5 * a
    return b


# ---- wide input read sparsely, deep right-nested input ----------------------------------------


def _wide_reads(n: int) -> list[int]:
    return sorted({1, (n + 1) // 2, n})


def _wide(n: int) -> str:
    reads = _wide_reads(n)
    names = [f"x{k}" if k in reads else "_" for k in range(1, n + 1)]
    ty = "R" if n == 1 else "(" + ", ".join(["R"] * n) + ")"
    pat = names[0] if n == 1 else "(" + ", ".join(names) + ")"
    a, m, z = f"x{reads[0]}", f"x{reads[len(reads) // 2]}", f"x{reads[-1]}"
    return f"\\({pat} : {ty}) -> {a} * {m} + sin {z}\n"


def _tuple_input(n: int, rng: random.Random) -> Any:
    vals = [_real(rng) for _ in range(n)]
    v: Any = vals[-1]
    for r in reversed(vals[:-1]):
        v = (r, v)
    return v


def _tuple_leaves(x: Any, n: int) -> list[float]:
    out = []
    for _ in range(n - 1):
        out.append(x[0])
        x = x[1]
    out.append(x)
    return out


def _wide_value(n: int, x: Any) -> float:
    v = _tuple_leaves(x, n)
    reads = _wide_reads(n)
    a, m, z = v[reads[0] - 1], v[reads[len(reads) // 2] - 1], v[reads[-1] - 1]
    return a * m + math.sin(z)


WIDE_REREAD = """\\((k, xs) : (Z, [R])) ->
  case xs of {
    [] -> 0.0;
    h :: t -> letrec f (i : Z) (acc : R) : R = if i <= 0 then acc else f (i - 1) (acc * h + h) in f k 0.0
  }
"""


def _reread_input(n: int, rng: random.Random) -> Any:
    return (n, [round(rng.uniform(0.5, 0.75), 3) for _ in range(n)])


def _reread_value(n: int, x: Any) -> float:
    k, xs = x
    acc = 0.0
    for _ in range(k):
        acc = acc * xs[0] + xs[0]
    return acc


def _deep(n: int) -> str:
    if n == 1:
        return "\\(p : R) -> p * p\n"
    ty = "(" + ", ".join(["R"] * n) + ")"
    lines = [f"\\(t0 : {ty}) ->"]
    lines += [f"  let t{k} = snd t{k - 1} in" for k in range(1, n - 1)]
    heads = [f"fst t{k}" for k in range(n - 1)] + [f"snd t{n - 2}"]
    lines.append("  " + _balanced_sum([f"{h} * {h}" for h in heads]))
    return "\n".join(lines) + "\n"


def _deep_value(n: int, x: Any) -> float:
    v = _tuple_leaves(x, n)
    if n == 1:
        return v[0] * v[0]
    return _balanced_value([a * a for a in v])


def _balanced_value(vals: list[float]) -> float:
    if len(vals) == 1:
        return vals[0]
    mid = len(vals) // 2
    return _balanced_value(vals[:mid]) + _balanced_value(vals[mid:])


# ---- the Table 1 benchmarks of seed 000 section 13 ------------------------------------------

DOT = "\\((xs, ys) : ([R], [R])) -> sum (zipWith (\\a b -> a * b) xs ys)\n"


def _dot_input(n: int, rng: random.Random) -> Any:
    return ([_real(rng) for _ in range(n)], [_real(rng) for _ in range(n)])


def _dot(xs: list[float], ys: list[float]) -> float:
    acc = 0.0
    for a, b in zip(xs, ys):
        acc = acc + a * b
    return acc


SUMMATVEC = "\\((m, v) : ([[R]], [R])) -> sum (map (\\row -> sum (zipWith (\\a b -> a * b) row v)) m)\n"


def _side(n: int) -> int:
    return max(1, math.isqrt(n))


def _summatvec_input(n: int, rng: random.Random) -> Any:
    k = _side(n)
    return ([[_real(rng) for _ in range(k)] for _ in range(k)], [_real(rng) for _ in range(k)])


def _summatvec_value(n: int, x: Any) -> float:
    m, v = x
    acc = 0.0
    for row in m:
        acc = acc + _dot(row, v)
    return acc


ROTATE = """\\(((vx, vy, vz), (qw, qx, qy, qz)) : ((R, R, R), (R, R, R, R))) ->
  let rot = \\((px, py, pz) : (R, R, R)) ->
    let uv = qx * px + qy * py + qz * pz in
    let uu = qx * qx + qy * qy + qz * qz in
    let a = 2.0 * uv in
    let b = qw * qw - uu in
    let c = 2.0 * qw in
    let cx = qy * pz - qz * py in
    let cy = qz * px - qx * pz in
    let cz = qx * py - qy * px in
    (a * qx + b * px + c * cx, a * qy + b * py + c * cy, a * qz + b * pz + c * cz)
  in
  letrec go (k : Z) (p : (R, R, R)) : (R, R, R) = if k <= 0 then p else go (k - 1) (rot p) in
  go {n} (vx, vy, vz)
"""


#: The largest n of a family whose program runs a loop n times: the reference's step budget ends
#: such a run long before.
LOOP_MAX = 1_000_000


def _rotate_input(n: int, rng: random.Random) -> Any:
    v = (_real(rng), _real(rng), _real(rng))
    q = [rng.uniform(-1.0, 1.0) for _ in range(4)]
    norm = math.sqrt(sum(c * c for c in q)) or 1.0
    return (v[0], (v[1], v[2])), (q[0] / norm, (q[1] / norm, (q[2] / norm, q[3] / norm)))


def _rotate_value(n: int, x: Any) -> Any:
    (px, (py, pz)), (qw, (qx, (qy, qz))) = x
    for _ in range(n):
        uv = qx * px + qy * py + qz * pz
        uu = qx * qx + qy * qy + qz * qz
        a, b, c = 2.0 * uv, qw * qw - uu, 2.0 * qw
        cx, cy, cz = qy * pz - qz * py, qz * px - qx * pz, qx * py - qy * px
        px, py, pz = a * qx + b * px + c * cx, a * qy + b * py + c * cy, a * qz + b * pz + c * cz
    return (px, (py, pz))


NEURAL = """\\((layer1, layer2, x) : (([[R]], [R]), ([[R]], [R]), [R])) ->
  let dense = \\((w, b) : ([[R]], [R])) (v : [R]) ->
    zipWith (\\row bias -> tanh (sum (zipWith (\\wij vj -> wij * vj) row v) + bias)) w b in
  sum (dense layer2 (dense layer1 x))
"""


def _neural_input(n: int, rng: random.Random) -> Any:
    scale = 1.0 / math.sqrt(n)

    def layer() -> Any:
        w = [[round(rng.uniform(-1.0, 1.0) * scale, 4) for _ in range(n)] for _ in range(n)]
        return (w, [round(rng.uniform(-0.1, 0.1), 4) for _ in range(n)])

    return (layer(), (layer(), [_real(rng, 0.1, 1.0) for _ in range(n)]))


def _neural_value(n: int, x: Any) -> float:
    l1, (l2, v) = x

    def dense(layer: Any, v: list[float]) -> list[float]:
        w, b = layer
        return [math.tanh(_dot(row, v) + bias) for row, bias in zip(w, b)]

    acc = 0.0
    for y in dense(l2, dense(l1, v)):
        acc = acc + y
    return acc


PARTICLES = """\\(ps : [((R, R), (R, R))]) ->
  let dt = 0.1 in
  letrec simulate (n : Z) (((x, y), (vx, vy)) : ((R, R), (R, R))) : ((R, R), (R, R)) =
    if n <= 0 then ((x, y), (vx, vy))
    else
      let r2 = x * x + y * y in
      let fx = -x * (1.0 + 0.1 * r2) - 0.5 * vx in
      let fy = -y * (1.0 + 0.1 * r2) - 0.5 * vy in
      let vx1 = vx + dt * fx in
      let vy1 = vy + dt * fy in
      simulate (n - 1) ((x + dt * vx1, y + dt * vy1), (vx1, vy1))
  in
  sum (parmap (\\p -> let ((x, y), _) = simulate {n} p in x * y) ps)
"""
PARTICLE_COUNT = 4


def _particles_input(n: int, rng: random.Random) -> Any:
    return [((_real(rng), _real(rng)), (_real(rng, 0.0, 0.5), _real(rng, 0.0, 0.5))) for _ in range(PARTICLE_COUNT)]


def _particles_value(n: int, ps: Any) -> float:
    acc = 0.0
    for (x, y), (vx, vy) in ps:
        for _ in range(n):
            r2 = x * x + y * y
            fx = -x * (1.0 + 0.1 * r2) - 0.5 * vx
            fy = -y * (1.0 + 0.1 * r2) - 0.5 * vy
            vx1, vy1 = vx + 0.1 * fx, vy + 0.1 * fy
            x, y, vx, vy = x + 0.1 * vx1, y + 0.1 * vy1, vx1, vy1
        acc = acc + x * y
    return acc


# ---- random fork-join DAGs of par (seed 000 section 12) ------------------------------------

_JOBS = (
    "sin ({a} * {b})",
    "tanh ({a} + {b})",
    "0.5 * {a} + cos {b}",
    "{a} * {b} - 0.25 * {a}",
    "atan ({a} - {b})",
)


def _par_dag(n: int) -> str:
    """n fork-joins `let (a, b) = par (job, job) in ...`, some nested inside a job, each job reading
    earlier results; the output sums every result that nothing else read (the DAG's sinks)."""
    rng = random.Random(f"par_dag:{n}")
    avail = ["x", "y"]
    used: set[str] = set()
    lines = ["\\((x, y) : (R, R)) ->"]
    counter = [0]
    budget = [n]

    def pick() -> str:
        v = avail[-1] if rng.random() < 0.4 else rng.choice(avail)
        used.add(v)
        return v

    def job() -> str:
        if budget[0] > 0 and rng.random() < 0.25:  # a nested fork-join inside this job
            budget[0] -= 1
            counter[0] += 1
            c, d = f"c{counter[0]}", f"d{counter[0]}"
            left = rng.choice(_JOBS).format(a=pick(), b=pick())
            right = rng.choice(_JOBS).format(a=pick(), b=pick())
            return f"let ({c}, {d}) = par ({left}, {right}) in {c} * {d}"
        return rng.choice(_JOBS).format(a=pick(), b=pick())

    while budget[0] > 0:
        budget[0] -= 1
        counter[0] += 1
        a, b = f"a{counter[0]}", f"b{counter[0]}"
        left, right = job(), job()
        lines.append(f"  let ({a}, {b}) = par ({left}, {right}) in")
        avail += [a, b]
    sinks = [v for v in avail if v not in used] or [avail[-1]]
    lines.append("  " + _balanced_sum(sinks))
    return "\n".join(lines) + "\n"


def _pair_input(n: int, rng: random.Random) -> Any:
    return (_real(rng), _real(rng))


# ---- map / fold pipelines, higher-order composition ---------------------------------------

MAP_FOLD = """\\(xs : [R]) ->
  let ys = map (\\x -> sin x * x) xs in
  let zs = zipWith (\\a b -> a * b + 1.0) ys xs in
  let w = foldl (\\acc z -> 0.5 * acc + z) 0.0 zs in
  w + sum (parmap (\\z -> z * w) zs)
"""


def _list_input(n: int, rng: random.Random) -> list[float]:
    return [_real(rng) for _ in range(n)]


def _map_fold_value(n: int, xs: list[float]) -> float:
    ys = [math.sin(x) * x for x in xs]
    zs = [a * b + 1.0 for a, b in zip(ys, xs)]
    w = 0.0
    for z in zs:
        w = 0.5 * w + z
    acc = 0.0
    for z in zs:
        acc = acc + z * w
    return w + acc


_COEFS = (0.5, 0.9, 0.7, 1.1, 0.3)


def _compose(n: int) -> str:
    lines = [
        "\\((x, y) : (R, R)) ->",
        "  let compose = \\(f : R -> R) (g : R -> R) (v : R) -> f (g v) in",
        "  let h0 = \\(v : R) -> v in",
    ]
    for k in range(1, n + 1):
        c = _COEFS[k % len(_COEFS)]
        lines.append(f"  let h{k} = compose (\\(v : R) -> sin ({c} * v + x)) h{k - 1} in")
    lines.append(f"  h{n} y")
    return "\n".join(lines) + "\n"


def _compose_value(n: int, x: Any) -> float:
    xx, v = x
    for k in range(1, n + 1):
        v = math.sin(_COEFS[k % len(_COEFS)] * v + xx)
    return v


# ---- arrays (seed 004) ------------------------------------------------------------------------
# n is the length of a vector / the side of a square matrix. Inputs have pairwise distinct
# magnitudes (4 decimals), so max reductions have no ties. The expected values are computed here
# by plain loops, independently of the interpreter.


#: How many magnitudes `_distinct` can draw in [0.1, 2.0] (4 decimals, the last one not 0): the most
#: elements of one input array, so the vector families stop there, the square-matrix ones at its root.
DISTINCT = sum(1 for m in range(1_000, 20_001) if m % 10)
SIDE_MAX = math.isqrt(DISTINCT)


def _distinct(rng: random.Random, k: int, lo: float = 0.1, hi: float = 2.0) -> list[float]:
    if k > DISTINCT:  # more than there are: drawing would never end (every family's n stops before)
        raise ValueError(f"{k} distinct magnitudes asked for, of {DISTINCT}")
    seen: set[int] = set()
    out = []
    while len(out) < k:
        m = rng.randint(int(lo * 10_000), int(hi * 10_000))
        if m in seen or m % 10 == 0:
            continue
        seen.add(m)
        out.append(m / 10_000 if rng.random() < 0.5 else -m / 10_000)
    return out


def _vec(rng: random.Random, n: int, scale: float = 1.0) -> Any:
    import numpy as np

    return np.array([v * scale for v in _distinct(rng, n)], dtype=np.float64)


def _mat(rng: random.Random, n: int, m: int, scale: float = 1.0) -> Any:
    return _vec(rng, n * m, scale).reshape(n, m)


def _arr(vals: Any) -> Any:
    import numpy as np

    return np.array(vals, dtype=np.float64)


def _seq_sum(xs: Any) -> float:
    acc = 0.0
    for v in xs:
        acc = acc + float(v)
    return acc


ARRAY_DOT = "\\((a, b) : (Array [{n}] R, Array [{n}] R)) ->\n  sumOuter (build1 {n} (\\i -> a ! [i] * b ! [i]))\n"


def _array_dot_input(n: int, rng: random.Random) -> Any:
    return (_vec(rng, n), _vec(rng, n))


MATVEC = (
    "\\((m, v) : (Array [{n}, {n}] R, Array [{n}] R)) ->\n"
    "  build1 {n} (\\i -> sumOuter (build1 {n} (\\j -> m ! [i, j] * v ! [j])))\n"
)


def _matvec_input(n: int, rng: random.Random) -> Any:
    return (_mat(rng, n, n), _vec(rng, n))


def _matvec_value(n: int, x: Any) -> Any:
    m, v = x
    return _arr([_seq_sum(m[i, j] * v[j] for j in range(n)) for i in range(n)])


MATMUL = (
    "\\((a, b) : (Array [{n}, {n}] R, Array [{n}, {n}] R)) ->\n"
    "  build [{n}, {n}] (\\[i, j] -> sumOuter (build1 {n} (\\p -> a ! [i, p] * b ! [p, j])))\n"
)
MATMUL_FIRST_ORDER = (
    "\\((a, b) : (Array [{n}, {n}] R, Array [{n}, {n}] R)) ->\n"
    "  sumOuter (tr [2, 1, 0] (replicate {n} a) * tr [1, 0, 2] (replicate {n} b))\n"
)


def _matmul_input(n: int, rng: random.Random) -> Any:
    return (_mat(rng, n, n), _mat(rng, n, n))


def _matmul_value(n: int, x: Any) -> Any:
    a, b = x
    return _arr([[_seq_sum(a[i, p] * b[p, j] for p in range(n)) for j in range(n)] for i in range(n)])


CONV1D = (
    "\\((x, w) : (Array [{n}] R, Array [3] R)) ->\n"
    "  build1 {n} (\\i -> sumOuter (gather [3] x (\\[k] -> [i + k - 1]) * w))\n"
)


def _conv1d_input(n: int, rng: random.Random) -> Any:
    return (_vec(rng, n), _vec(rng, 3, 0.5))


def _conv1d_value(n: int, x: Any) -> Any:
    sig, w = x
    return _arr(
        [_seq_sum((float(sig[i + k - 1]) if 0 <= i + k - 1 < n else 0.0) * w[k] for k in range(3)) for i in range(n)]
    )


SOFTMAX = """\\(x : Array [{n}] R) ->
  let m = maxOuter x in
  let e = exp (x - replicate {n} m) in
  e / replicate {n} (sumOuter e)
"""
LOGSUMEXP = "\\(x : Array [{n}] R) ->\n  let m = maxOuter x in\n  m + log (sumOuter (exp (x - replicate {n} m)))\n"


def _vec_input(n: int, rng: random.Random) -> Any:
    return _vec(rng, n)


def _softmax_value(n: int, x: Any) -> Any:
    m = max(float(v) for v in x)
    e = [math.exp(float(v) - m) for v in x]
    s = _seq_sum(e)
    return _arr([v / s for v in e])


def _logsumexp_value(n: int, x: Any) -> float:
    m = max(float(v) for v in x)
    return m + math.log(_seq_sum(math.exp(float(v) - m) for v in x))


MLP2 = """\\((w1, b1, w2, b2, x) :
    (Array [{n}, {n}] R, Array [{n}] R, Array [{n}, {n}] R, Array [{n}] R, Array [{n}] R)) ->
  let dense = \\(w : Array [{n}, {n}] R) (b : Array [{n}] R) (v : Array [{n}] R) ->
    tanh (build1 {n} (\\i -> sumOuter (build1 {n} (\\j -> w ! [i, j] * v ! [j]))) + b) in
  sumOuter (dense w2 b2 (dense w1 b1 x))
"""


def _mlp2_input(n: int, rng: random.Random) -> Any:
    scale = 1.0 / math.sqrt(n)
    return (_mat(rng, n, n, scale), (_vec(rng, n, 0.05), (_mat(rng, n, n, scale), (_vec(rng, n, 0.05), _vec(rng, n)))))


def _mlp2_value(n: int, x: Any) -> float:
    w1, (b1, (w2, (b2, v))) = x

    def dense(w: Any, b: Any, v: list[float]) -> list[float]:
        return [math.tanh(_seq_sum(w[i, j] * v[j] for j in range(n)) + b[i]) for i in range(n)]

    return _seq_sum(dense(w2, b2, dense(w1, b1, [float(t) for t in v])))


ONEHOT_LOOP = "\\(a : Array [{n}] R) ->\n  sumOuter (build1 {n} (\\i -> a ! [i] * sin (a ! [i])))\n"


def _onehot_value(n: int, a: Any) -> float:
    return _seq_sum(float(v) * math.sin(float(v)) for v in a)


BUILD_ELEMENTWISE = """\\((a, b) : (Array [{n}] R, Array [{n}] R)) ->
  build1 {n} (\\i -> let x = a ! [i] in let y = b ! [i] in sin x * y + exp (0.5 * x) * cos y - x * x * y)
"""


def _build_elementwise_value(n: int, x: Any) -> Any:
    a, b = x
    out = []
    for i in range(n):
        u, v = float(a[i]), float(b[i])
        out.append(math.sin(u) * v + math.exp(0.5 * u) * math.cos(v) - u * u * v)
    return _arr(out)


def _sized(template: str) -> Callable[[int], str]:
    return lambda n: template.replace("{n}", str(n))


# ---- the registry -------------------------------------------------------------------------

_S = frozenset

FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            "doubling",
            "The doubling chain of seed 000 Fig. 2: x1 = x + x, ..., xn = x(n-1) + x(n-1), value 2^n x. "
            "Naive dual-numbers reverse AD (section 5) calls backpropagators 2^n times; from section 6 "
            "on, each runs once. The input is scaled by 2^-n so the value stays moderate.",
            _S({"let"}),
            _doubling,
            _doubling_input,
            lambda n, x: math.ldexp(x, n),
            max_n=150,
        ),
        Family(
            "doubling_loop",
            "The Fig. 2 doubling chain of seed 000 as a loop (letrec on a counter, section 11): the same "
            "sharing at run time, any n (value 2^n x, input scaled by 2^-n).",
            _S({"letrec"}),
            _doubling_loop,
            _doubling_input,
            lambda n, x: math.ldexp(x, n),
            max_n=1000,
        ),
        Family(
            "f_pattern",
            "The f1 ... f4 backpropagator pattern of seed 000 section 6 generalised to n: each scalar "
            "s_k = 0.5 s_(k-1) + 0.5 s_(k-2) uses the two before it, so naive backpropagation calls "
            "s_1's backpropagator Fibonacci(n) times; linear factoring (Fig. 8) calls each once.",
            _S({"let"}),
            _fpattern,
            lambda n, rng: _real(rng),
            _fpattern_value,
            max_n=150,
        ),
        Family(
            "wide_sparse",
            "A wide input read sparsely (seed 000 sections 7-8): an n-tuple of reals of which the "
            "program reads three. Dense one-hot / zero cotangents of the input type c cost O(n) each; "
            "the sparse collector (section 8) makes the reverse pass independent of n.",
            _S({"pairs"}),
            _wide,
            _tuple_input,
            _wide_value,
            max_n=150,
        ),
        Family(
            "wide_reread",
            "A wide input read many times at a shallow place (seed 000 section 6.2, problem A): a list "
            "of n reals of which only the head is used, n times. Every staged operation's SCall and "
            "0/+ on the collector c cost size(c) ~ n in section 6, so n^2 in all; the Cayley transform "
            "(section 7) makes each O(1) (up to map logarithms), the input being shallow.",
            _S({"lists", "letrec"}),
            lambda n: WIDE_REREAD,
            _reread_input,
            _reread_value,
            reals=lambda n: n,
        ),
        Family(
            "deep_input",
            "A deep right-nested input type (R, (R, (R, ...))) walked by a chain of n projections "
            "(seed 000 sections 7-9): every projection's cotangent is a one-hot of a deep type, so "
            "non-sparse stages pay O(n) per projection, O(n^2) in all.",
            _S({"pairs", "let"}),
            _deep,
            _tuple_input,
            _deep_value,
            max_n=150,
        ),
        Family(
            "dot",
            "Dot product of two lists of length n, a benchmark of seed 000 Table 1 (section 13).",
            _S({"lists", "fold"}),
            lambda n: DOT,
            _dot_input,
            lambda n, x: _dot(x[0], x[1]),
            reals=lambda n: 2 * n,
        ),
        Family(
            "summatvec",
            "sum-mat-vec of seed 000 Table 1: the sum of a sqrt(n) x sqrt(n) matrix times a vector.",
            _S({"lists", "fold", "lambda"}),
            lambda n: SUMMATVEC,
            _summatvec_input,
            _summatvec_value,
            reals=lambda n: _side(n) ** 2 + _side(n),
        ),
        Family(
            "rotate_vec_by_quat",
            "rotate_vec_by_quat of seed 000 Table 1 (Krawiec et al. 2022), applied n times in a loop "
            "(a unit quaternion, so the vector keeps its length); three outputs.",
            _S({"pairs", "lambda", "letrec", "let"}),
            lambda n: ROTATE.replace("{n}", str(n)),
            _rotate_input,
            _rotate_value,
            max_n=LOOP_MAX,
        ),
        Family(
            "neural",
            "The dense neural network of seed 000 Table 1: two tanh layers of width n (weights of "
            "scale 1/sqrt(n), so no unit saturates and every input real has a nonzero gradient).",
            _S({"lists", "fold", "lambda", "transc"}),
            lambda n: NEURAL,
            _neural_input,
            _neural_value,
            reals=lambda n: 2 * n * n + 3 * n,
        ),
        Family(
            "particles",
            "particles of seed 000 Table 1: 4 particles in a force field with friction, n time steps "
            "each, simulated independently with parmap (section 12.1).",
            _S({"lists", "par", "letrec", "pairs", "let"}),
            lambda n: PARTICLES.replace("{n}", str(n)),
            _particles_input,
            _particles_value,
            max_n=LOOP_MAX,
        ),
        Family(
            "par_dag",
            "A random fork-join DAG of n `par` nodes (seed 000 section 12, as its parallel tests): "
            "jobs read earlier results, some fork again inside; the output sums the DAG's sinks.",
            _S({"par", "let", "transc"}),
            _par_dag,
            _pair_input,
            max_n=150,
        ),
        Family(
            "map_fold",
            "A map / zipWith / foldl / parmap pipeline over a list of length n (seed 000 section 11 "
            "lists, section 12.1 parmap).",
            _S({"lists", "fold", "par", "transc"}),
            lambda n: MAP_FOLD,
            _list_input,
            _map_fold_value,
            reals=lambda n: n,
        ),
        Family(
            "hof_compose",
            "Deep higher-order composition: h_k = compose (\\v -> sin (c v + x)) h_(k-1), n levels of "
            "closures capturing the real x (seed 001 section 3: closures, functions as arguments).",
            _S({"lambda", "hof", "let", "transc"}),
            _compose,
            _pair_input,
            _compose_value,
            max_n=150,
        ),
    )
}


#: The array families (seed 004): kept apart from FAMILIES because the tree-cotangent stages
#: (naive, staged, cayley, sparse) decline array programs; `ALL_FAMILIES` holds both.
ARRAY_FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            "array_dot",
            "The dot product t_dot = sumOuter (build1 n (\\i -> a ! [i] * b ! [i])) of seed 004 section 4.1: "
            "element-at-a-time dual numbers build a Delta term of 5n + 1 nodes (the Delta explosion).",
            _S({"arrays"}),
            _sized(ARRAY_DOT),
            _array_dot_input,
            lambda n, x: _seq_sum(x[0][i] * x[1][i] for i in range(n)),
            max_n=DISTINCT,
            reals=lambda n: 2 * n,
        ),
        Family(
            "matvec",
            "Matrix-vector product of an n x n matrix with build / sumOuter / index (seed 004 section 3.1 style).",
            _S({"arrays"}),
            _sized(MATVEC),
            _matvec_input,
            _matvec_value,
            max_n=SIDE_MAX,
            reals=lambda n: n * n + n,
        ),
        Family(
            "matmul",
            "The naive matrix product matmat of seed 004 section 3.1 (higher-order style: build [n, n] of "
            "sumOuter (build1 n ..)), two n x n matrices: n^3 element multiplications.",
            _S({"arrays"}),
            _sized(MATMUL),
            _matmul_input,
            _matmul_value,
            max_n=64,
            reals=lambda n: 2 * n * n,
        ),
        Family(
            "matmul_first_order",
            "matmatFirstOrder of seed 004 section 3.1: the same product with first-order operations only, "
            "sumOuter (tr [2, 1, 0] (replicate n a) * tr [1, 0, 2] (replicate n b)).",
            _S({"arrays"}),
            _sized(MATMUL_FIRST_ORDER),
            _matmul_input,
            _matmul_value,
            max_n=64,
            reals=lambda n: 2 * n * n,
        ),
        Family(
            "conv1d",
            "A 1-d convolution of a signal of length n with a kernel of 3 written with gather "
            "(seed 004 section 3.3): gather [3] x (\\[k] -> [i + k - 1]) reads 0 outside the signal "
            "(zero padding), so the two border windows read out of range.",
            _S({"arrays"}),
            _sized(CONV1D),
            _conv1d_input,
            _conv1d_value,
            max_n=DISTINCT,
            reals=lambda n: n + 3,
        ),
        Family(
            "softmax",
            "softmax of a vector of length n, stabilised by its maximum (maxOuter; inputs have distinct "
            "elements, so the max has no tie): an array output.",
            _S({"arrays", "let", "transc"}),
            _sized(SOFTMAX),
            _vec_input,
            _softmax_value,
            max_n=DISTINCT,
            reals=lambda n: n,
        ),
        Family(
            "logsumexp",
            "log-sum-exp of a vector of length n, stabilised by its maximum (maxOuter).",
            _S({"arrays", "let", "transc"}),
            _sized(LOGSUMEXP),
            _vec_input,
            _logsumexp_value,
            max_n=DISTINCT,
            reals=lambda n: n,
        ),
        Family(
            "mlp2",
            "A 2-layer perceptron of width n (the neural benchmark of seed 000 Table 1 on arrays): "
            "tanh (W x + b) twice, summed; a let-bound function over arrays; weights of scale 1/sqrt(n).",
            _S({"arrays", "let", "lambda", "transc"}),
            _sized(MLP2),
            _mlp2_input,
            _mlp2_value,
            max_n=SIDE_MAX,
            reals=lambda n: 2 * n * n + 3 * n,
        ),
        Family(
            "onehot_loop",
            "Every element read in a loop, sumOuter (build1 n (\\i -> a ! [i] * sin (a ! [i]))): the "
            "one-hot problem of seed 004 section 4.4 (dual arrays make each index a one-hot cotangent "
            "of size n, n^2 in all).",
            _S({"arrays", "transc"}),
            _sized(ONEHOT_LOOP),
            _vec_input,
            _onehot_value,
            max_n=DISTINCT,
            reals=lambda n: n,
        ),
        Family(
            "build_elementwise",
            "Element-wise scalar work inside a build (seed 004 section 4.3, the Delta explosion problem "
            "again): build1 n (\\i -> sin x * y + exp (0.5 * x) * cos y - x * x * y) with x, y read at i.",
            _S({"arrays", "let", "transc"}),
            _sized(BUILD_ELEMENTWISE),
            _array_dot_input,
            _build_elementwise_value,
            max_n=DISTINCT,
            reals=lambda n: 2 * n,
        ),
    )
}

ALL_FAMILIES: dict[str, Family] = {**FAMILIES, **ARRAY_FAMILIES}
