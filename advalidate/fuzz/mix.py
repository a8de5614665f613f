"""The program mix of a campaign: what the generator draws follows the engines under test.

A campaign whose engines cannot take a kind of program should not spend its time generating it,
and one whose engines only take array programs (seed 004's `dualarrays`, `bot`, `compiled`:
`requires = {"arrays"}`) should generate nothing else. So the mix is derived from the engines'
`supports` / `requires` (docs/plugins.md):

- a generator feature is *required* (every program has it) when every engine requires its engine
  feature ("arrays", "nested");
- it is *excluded* (no program has it) when no engine supports it (an engine without `supports`
  takes everything);
- everything else is the generator's own swarm mix (`generators.build.draw_features`), except that
  engines may ask for a *share*: `mix_share = {"arrays": (3, 4)}` on an engine says that at least 3
  programs in 4 should have that feature. The tensor adapters ask for it because the calls where a
  library's AD bugs live (gathers, scatters and reductions in every mode, `adapters/lowering.py`)
  occur only in array code, of which the swarm mix draws about one program in five (issue #22).
  The share is taken when every engine asks for one (the smallest); which programs get the
  feature is drawn from each program's own seed (`shared_features`), so a campaign replays.

`--features F1,F2|all` fixes the features of every program instead, as in `advalidate gen`.
The mix is a plain JSON-ready dict in the worker configuration, recorded in summary.json.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from ..impl.protocol import hook

#: Engine feature (`supports` / `requires`, those a check declines by: oracles.context.FEATURES_CHECKED)
#: -> the generator features (names.FEATURES) that make programs use it.
GENERATOR_FEATURES: dict[str, tuple[str, ...]] = {
    "arrays": ("arrays",),
    "nested": ("nested",),
    "lists": ("lists", "fold"),
    "sums": ("sums",),
    "recursion": ("letrec",),
    "par": ("par",),
}


def campaign_mix(engines: Iterable[Any], features: str | None = None) -> dict[str, Any]:
    """The mix of a campaign over `engines` (objects), or the fixed `features` (a `gen --features` text)."""
    if features is not None:
        from ..generators.build import check_features

        fixed = sorted(check_features(features))
        return {"features": ",".join(fixed), "require": [], "exclude": [], "why": "--features"}
    engines = list(engines)
    require: set[str] = set()
    exclude: set[str] = set()
    why = []
    for feat, gen in GENERATOR_FEATURES.items():
        if engines and all(feat in hook(e, "requires") for e in engines):
            require.update(gen[:1])
            why.append(f"every engine requires {feat!r}")
        elif engines and not any(_supports(e, feat) for e in engines):
            exclude.update(gen)
            why.append(f"no engine supports {feat!r}")
    if "arrays" in require:
        exclude.add("nested")  # an array-only mix: no operator (generators.build.constrain drops it too)
    share = {}
    for feat, gen in GENERATOR_FEATURES.items():
        asked = [hook(e, "mix_share") for e in engines]
        if engines and all(feat in a for a in asked) and gen[0] not in require | exclude:
            num, den = min((tuple(a[feat]) for a in asked), key=lambda nd: Fraction(*nd))
            share[gen[0]] = [num, den]
            why.append(f"every engine asks for {feat!r} in {num} programs of {den}")
    return {
        "features": None,
        "require": sorted(require),
        "exclude": sorted(exclude - require),
        "share": share,
        "why": "; ".join(why) or "the default mix: the engines take every kind of program",
    }


def _supports(eng: Any, feat: str) -> bool:
    supports = hook(eng, "supports")
    return supports is None or feat in supports


def shared_features(mix: dict[str, Any] | None, seed: int | None) -> frozenset[str]:
    """The features the mix's shares give the program of `seed` (drawn from the seed alone)."""
    if not mix or seed is None:
        return frozenset()
    out = set()
    for feat, (num, den) in sorted((mix.get("share") or {}).items()):
        if random.Random(f"advalidate-mix:{seed}:{feat}").randrange(den) < num:
            out.add(feat)
    return frozenset(out)


def generate_kwargs(mix: dict[str, Any] | None, seed: int | None = None) -> dict[str, Any]:
    """The arguments of `generators.generate` (after seed and size) that realise `mix` for the
    program of `seed` (without it, the mix's shares are not drawn)."""
    if not mix:
        return {}
    return {
        "features": mix.get("features"),
        "require": frozenset(mix.get("require") or ()) | shared_features(mix, seed),
        "exclude": frozenset(mix.get("exclude") or ()),
    }


def describe(mix: dict[str, Any] | None) -> str:
    """One line for the campaign's start and its summary."""
    if not mix:
        return "the default mix"
    if mix.get("features"):
        return f"features {mix['features']} (--features)"
    parts = []
    if mix.get("require"):
        parts.append("every program has " + ", ".join(mix["require"]))
    if mix.get("exclude"):
        parts.append("none has " + ", ".join(mix["exclude"]))
    for feat, (num, den) in sorted((mix.get("share") or {}).items()):
        parts.append(f"{num} in {den} have {feat}")
    return ("; ".join(parts) or "the default mix") + f" ({mix.get('why', '')})"
