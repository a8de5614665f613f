"""Generation rules for the special functions (issue #25), on reals and element-wise on arrays.

`SpecialGen.r_special` builds one call of a special function whose argument stays in its domain by
construction, as the other rules guard `log` and `sqrt` (rules.py): the argument is a generated
expression fitted to a bound (`fit`) and then shifted or scaled, so

- `lgamma` / `digamma` see either c + t (|t| ≤ 1, c ≥ 1.5: positive) or t − k (|t| ≤ 0.4, k a
  half-integer up to 10000.5: at least 0.1 from every pole), the large negative arguments where
  the reflection formula (and libraries' derivatives) matter; a large lgamma value is divided by a
  power of ten so that it stays within the bounds without saturating a squash;
- `expm1` / `log1p` see 1e-9·t (|t| ≤ 8: |x| < 1e-8, where they differ from exp − 1 and log(1 + x))
  as often as ordinary arguments (log1p's ≥ -0.9);
- `erf` / `erfc` / `softplus` see c·t with c up to 25 (erf, erfc) or 200 (softplus): far tails;
- `pow` has a positive base c + t (c ≥ 1.5) with any bounded exponent, or any base with an
  integer literal exponent 2, 3 or 4 (a non-positive base only at integer exponents);
- `abs sign floor atan2 hypot min max` take generated arguments as they are (their kinks are
  recorded by the reference and judged inconclusive nearby, as comparisons are).

The feature "special" is drawn from the side stream (build.py), so a seed's program without it is
the one it was before these rules existed. In a program with derivative operators, `lgamma` is
used at most one operator deep and `digamma` outside every operator: their derivatives beyond the
second (polygamma of order 2) are not in the language, and the engines decline them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..lang import ast as A
from ..lang.specials import GENERATED
from ..lang.types import Array, Real, Type
from .rules import EXP_ARG_MAX, Env, G, Gen, _call, _rlit, fill

#: The functions and their weights (each ≥ 0.5% of the default mix: `advalidate gen --stats`).
WEIGHTS: dict[str, int] = {name: 2 if name in ("lgamma", "digamma", "pow") else 1 for name in GENERATED}
NEG_GAMMA = (0.5, 2.5, 20.5, 170.5, 10000.5)  # large negative arguments of lgamma / digamma: t - k
TINY = 1e-9  # expm1 / log1p at |x| < 1e-8
ATAN2_SHIFT = 0.03125  # added to atan2's x: 5 decimals, so no 3- or 4-decimal input cancels it


class SpecialGen(Gen):
    """The rules of `rules.Gen` plus the special functions (feature "special")."""

    def options(self, ty: Type, size: int, env: Env, pin: bool) -> list[tuple[int, Callable[..., G]]]:
        opts = super().options(ty, size, env, pin)
        if "special" in self.f and isinstance(ty, Real) and size >= 2:
            opts.append((16, self.r_special))
        return opts

    def lit(self, ty: Type, c: float) -> A.Expr:
        """The constant c at type `ty` (a real, or an array every element of which is c)."""
        return fill(ty.shape, _rlit(c)) if isinstance(ty, Array) else _rlit(c)

    def bounded(self, ty: Type, size: int, env: Env, lim: float) -> G:
        return self.fit(self.gen(ty, size, env), ty, lim)

    def r_special(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        names = [n for n in WEIGHTS if self.allowed(n)]
        name = names[self.ch.pick([WEIGHTS[n] for n in names])]
        s = max(1, size - 3)
        if name in ("expm1", "log1p"):
            if self.ch.flip(1, 2):  # |x| < 1e-8
                a = self.bounded(ty, s, env, 8.0)
                return G(_call(name, A.BinOp("*", self.lit(ty, TINY), a.e)), 2 * TINY * a.b, a.dep)
            if name == "expm1":
                a = self.bounded(ty, s, env, EXP_ARG_MAX)
                return G(_call(name, a.e), max(1.0, math.expm1(a.b)), a.dep)
            a = self.bounded(ty, s, env, 1.0)
            return G(_call(name, A.BinOp("*", self.lit(ty, 0.9), a.e)), -math.log1p(-0.9), a.dep)
        if name in ("erf", "erfc", "softplus"):
            cs = (1.0, 4.0, 10.0, 25.0) if name != "softplus" else (1.0, 20.0, 200.0)
            c = cs[self.ch.below(len(cs))]
            a = self.bounded(ty, s, env, 1.0)
            arg = a.e if c == 1.0 else A.BinOp("*", self.lit(ty, c), a.e)
            return G(_call(name, arg), {"erf": 1.0, "erfc": 2.0}.get(name, c * a.b + 1.0), a.dep)
        if name in ("lgamma", "digamma"):
            return self.gamma(name, ty, s, env)
        if name == "pow":
            return self.power(ty, s, env)
        if name in ("abs", "sign", "floor"):
            a = self.gen(ty, s, env)
            return G(_call(name, a.e), {"abs": a.b, "sign": 1.0, "floor": a.b + 1.0}[name], a.dep)
        s1, s2 = self.split(s)
        a, b = self.gen(ty, s1, env), self.gen(ty, s2, env)
        if a.e == b.e:  # `max x x` is a tie everywhere: its kink, not its gradient
            b = G(A.BinOp("+", b.e, self.lit(ty, 0.5)), b.b + 0.5, b.dep)
        if name == "atan2":  # atan2 0 0 is undefined, and reads out of range are exactly 0: keep x off 0
            b = G(A.BinOp("+", b.e, self.lit(ty, ATAN2_SHIFT)), b.b + ATAN2_SHIFT, b.dep)
        bound = {"atan2": math.pi, "hypot": a.b + b.b}.get(name, max(a.b, b.b))
        return G(_call(name, a.e, b.e), bound, a.dep or b.dep)

    def allowed(self, name: str) -> bool:
        """lgamma / digamma only where every derivative the engines take of them is in the language."""
        nest = getattr(self, "nest", 0)
        deep = {"lgamma": 1, "digamma": 0}.get(name)
        return deep is None or "nested" not in self.f or nest <= deep

    def gamma(self, name: str, ty: Type, s: int, env: Env) -> G:
        if self.ch.flip(1, 2):  # c + t, positive
            c = (1.5, 3.0, 30.0)[self.ch.below(3)]
            a = self.bounded(ty, s, env, 1.0)
            arg: A.Expr = A.BinOp("+", self.lit(ty, c), a.e)
            hi = c + 1.0
            value = max(abs(math.lgamma(c - 1.0)), abs(math.lgamma(hi))) if name == "lgamma" else max(2.0, math.log(hi))
            return G(_call(name, arg), value + 1.0, a.dep)
        k = NEG_GAMMA[self.ch.below(len(NEG_GAMMA))]
        a = self.bounded(ty, s, env, 0.4)
        arg = A.BinOp("-", a.e, self.lit(ty, k))
        if name == "digamma":  # ψ(x) = ψ(1 - x) - π cot(πx): within log k + π cot(0.1π) + 1
            return G(_call(name, arg), math.log(k + 1.0) + 11.0, a.dep)
        top = abs(math.lgamma(-k)) + math.log(k + 1.0) + 6.0
        scale = 10.0 ** max(0, math.ceil(math.log10(top)) - 1)
        e = _call(name, arg)
        if scale > 1.0:
            e = A.BinOp("/", e, self.lit(ty, scale))
        return G(e, top / scale, a.dep)

    def power(self, ty: Type, s: int, env: Env) -> G:
        if self.ch.flip(1, 2):  # any base, an integer exponent
            n = (2.0, 3.0, 4.0)[self.ch.below(3)]
            a = self.bounded(ty, s, env, 8.0 if n < 4.0 else 4.0)
            return G(_call("pow", a.e, self.lit(ty, n)), a.b**n, a.dep)
        s1, s2 = self.split(s)
        c = (1.5, 2.0, 3.0)[self.ch.below(3)]
        a = self.bounded(ty, s1, env, 1.0)
        b = self.bounded(ty, s2, env, 2.0)
        base = A.BinOp("+", self.lit(ty, c), a.e)
        return G(_call("pow", base, b.e), (c + 1.0) ** 2.0 * 4.0, a.dep or b.dep)
