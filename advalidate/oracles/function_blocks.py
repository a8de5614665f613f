"""check_function at a kink met by a large input: the direction judged in blocks (issue #40, left over
from item 5: the element-wise judgement stopped at `POSITIONS_MAX` inputs).

With up to POSITIONS_MAX inputs a direction that meets a kink is judged element by element, one
finite difference per element (`function_checks._Checker.per_element`). A 10⁵-element input
cannot afford that, and its direction was left inconclusive, however wrong the rule. Here the
kinked elements are isolated instead, by group testing on the direction v: the differences along
v restricted to a block B of elements (v_B) are smooth unless B holds a kinked element, so a
smooth block is judged at once (⟨(Jᵀu)_B, v_B⟩ against its differences, `against_fd` with all of
its tolerances), and a kinked one is halved until its kinked elements stand alone. Which
elements to try alone first is guessed from the rule (elements whose gradient jumps between
x ± BESIDE·s, s random signs); the guess only saves differences, every verdict rests on f.
The elements left alone at the kink are then judged as with few inputs: the rule beside the kink
against one-sided differences of f (`function_kink`), and its value at the kink in the hull of the
active pieces (`kinks.judge_at_kink`), restricted to those elements (the others are judged by their
blocks). More kinked elements than BLOCK_FDS differences can isolate, or than KINKED_MAX, leave
the direction inconclusive, never a pass.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..differences import FiniteDifference
from .function_checks import K, _at_kink, _Checker, _Direction, _Outcome, _resolved, directional_fd
from .function_kink import BESIDE, Beside, check_beside, rays, unchecked_elements
from .verdict import FAIL, INCONCLUSIVE, PASS

#: At most this many directional differences per direction to isolate the kinked elements.
BLOCK_FDS = 96
#: At most this many elements at the kink are judged (each costs two rays beside it).
KINKED_MAX = 32
#: A gradient element that changes by more than this share of its size between x ± BESIDE·s is
#: guessed to be at the kink (only an order of work: the differences decide).
JUMP_REL = 1e-3


def guess_kinked(checker: _Checker, di: _Direction) -> np.ndarray:
    """Elements whose gradient from the rule jumps across x (at most KINKED_MAX; none if more)."""
    rng = np.random.default_rng([checker.seed, 41])
    s = rng.choice([-1.0, 1.0], size=checker.args.n) * checker.scale * ~checker.fixed
    try:
        plus = checker.rev_at(checker.x + BESIDE * s, di.u)
        minus = checker.rev_at(checker.x - BESIDE * s, di.u)
    except Exception:
        return np.zeros(0, dtype=int)
    with np.errstate(invalid="ignore"):
        size = np.abs(plus) + np.abs(minus)
        jump = np.abs(plus - minus) > JUMP_REL * size + 1e-12 * float(np.nanmax(size, initial=0.0))
    found = np.flatnonzero(jump & ~checker.fixed)
    return found if found.size <= KINKED_MAX else np.zeros(0, dtype=int)


def judge_in_blocks(checker: _Checker, o: _Outcome, di: _Direction) -> _Outcome:
    """The reverse pass's outcome along a direction, judged in blocks where `_at_kink` says so (as
    `function_checks._per_element` does with few inputs)."""
    if not _at_kink(o, di):
        return o
    if not di.fd.kink and (di.rev is None or not np.all(np.isfinite(di.rev))):
        return o  # a rule's nan or inf where the differences resolve nothing contradicts nothing
    judged = per_block(checker, di)
    return o if judged.status == INCONCLUSIVE and not di.fd.kink else judged


def per_block(checker: _Checker, di: _Direction) -> _Outcome:
    """Judge a direction that met a kink, with more inputs than POSITIONS_MAX, in blocks."""
    args = checker.args
    kink = di.fd.kink if isinstance(di.fd, FiniteDifference) else str(di.fd)
    free = np.flatnonzero(~checker.fixed)
    first = guess_kinked(checker, di)
    queue = [b for b in [np.setdiff1d(free, first), *([k] for k in first)] if len(b)]
    kinked: list[int] = []
    used = judged = 0
    while queue:
        block = np.asarray(queue.pop(0))
        if used >= BLOCK_FDS or len(kinked) > KINKED_MAX:
            return _too_many(checker, di, kink, len(kinked))
        vb = np.zeros_like(di.v)
        vb[block] = di.v[block]
        fd = directional_fd(checker.phi(di.u, vb))
        used += 1
        if isinstance(fd, str):
            return _Outcome(INCONCLUSIVE, f"{kink}; along a block of {len(block)} element(s): {fd}")
        if fd.kink or not _resolved(fd):
            if len(block) == 1:
                kinked.append(int(block[0]))
            else:
                queue += [block[: len(block) // 2], block[len(block) // 2 :]]
            continue
        sub = _Direction(di.u, vb, fd=fd, rev=di.rev, what=di.what)
        if args.low:
            sub.rounding = checker.rounding_change(sub)
        o = checker.against_fd(sub, "rev")
        if o.status == FAIL:
            o.positions = [args.position(int(k)) for k in block[:8]]
            where = ", ".join(o.positions) + (f" and {len(block) - 8} more" if len(block) > 8 else "")
            o.detail = (
                f"judged in blocks (the random direction met a kink at {_names(args, kinked) or 'x'}): "
                f"along the {len(block)} element(s) {where}, where f is smooth: {o.detail}"
            )
            return o
        if o.status != PASS:
            return _Outcome(INCONCLUSIVE, f"{kink}; along a smooth block of {len(block)} element(s): {o.detail}")
        judged += len(block)
    return _alone(checker, di, np.array(sorted(kinked), dtype=int), judged, used, kink)


def _beside(checker: _Checker, di: _Direction, directions: list[np.ndarray]) -> Beside:
    """The rule along rays beside the kink against one-sided differences of f (`function_kink`)."""

    def quotient(base: np.ndarray, d: np.ndarray, h: float) -> float:
        phi = checker.phi(di.u, d, base)
        return (phi(h)[0] - phi(0.0)[0]) / h

    return check_beside(
        checker.x,
        directions,
        lambda p: checker.element_derivatives(p, di.u, "rev"),
        lambda base, d: directional_fd(checker.phi(di.u, d, base)),
        quotient,
        checker.d.reverse_name,
        K,
        2 * checker.args.unit,
    )


def _too_many(checker: _Checker, di: _Direction, kink: str, found: int) -> _Outcome:
    """Too many kinked elements to isolate: only random rays beside the kink are checked against
    f (a wrong slope met at many elements, a ReLU's zeros fed on, still fails), never a pass."""
    beside = _beside(
        checker, di, rays(checker.args.n, np.zeros(checker.args.n, dtype=bool), checker.scale, checker.seed)
    )
    if beside.wrong:
        return _Outcome(FAIL, f"at a kink of many elements: {beside.wrong}")
    return _Outcome(
        INCONCLUSIVE,
        f"{kink}; judged in blocks: more elements at the kink than {BLOCK_FDS} differences isolate "
        f"(at least {found}); {beside.verified} random ray(s) beside it agree with one-sided differences of f",
    )


def _names(args, ks) -> str:  # noqa: ANN001 - check_function's _Args
    shown = [args.position(int(k)) for k in list(ks)[:8]]
    return ", ".join(shown) + (f" and {len(ks) - 8} more" if len(ks) > 8 else "")


def _alone(checker: _Checker, di: _Direction, kinked: np.ndarray, judged: int, used: int, kink: str) -> _Outcome:
    """The elements alone at the kink: the rule beside it against f, then in the pieces' hull."""
    from .kinks import FAIL as KINK_FAIL
    from .kinks import PASS as KINK_PASS
    from .kinks import judge_at_kink

    args, name, x = checker.args, checker.d.reverse_name, checker.x
    at = _names(args, kinked)
    smooth = f"{judged} smooth element(s) agree along {used} block difference(s)"
    if not kinked.size:
        return _Outcome(PASS, f"judged in blocks: {smooth}, and no element alone is at the kink ({kink})")
    mask = np.zeros(args.n, dtype=bool)
    mask[kinked] = True

    def rule(p: np.ndarray) -> np.ndarray | None:
        return checker.element_derivatives(p, di.u, "rev")

    beside = _beside(checker, di, rays(args.n, mask, checker.scale, checker.seed, tilt=mask))
    if beside.wrong:
        return _Outcome(FAIL, f"at the kink ({at}): {beside.wrong}", positions=[args.position(int(k)) for k in kinked])
    alone = unchecked_elements(beside, list(kinked))
    if alone:
        why = f"beside it at {_names(args, alone)} no one-sided difference of f resolves a slope"
        return _Outcome(INCONCLUSIVE, f"{kink}; {why}")

    groups = coupled(kinked, rule, x, checker.scale)
    if groups is None:
        return _Outcome(INCONCLUSIVE, f"{kink}; {name} raised or was not finite beside the kink")
    undecided = ""
    for group in groups:

        def near(pk: list[float], group: np.ndarray = group) -> list[float] | None:
            p = x.copy()
            p[group] = pk
            g = rule(p)
            return None if g is None else list(g[group])

        verdict = judge_at_kink(near, list(x[group]), list(di.rev[group]), rule=checker.kink_rule, n_dirs=8)
        if verdict.status == KINK_FAIL:
            where = _names(args, group)
            return _Outcome(
                FAIL,
                f"at the kink ({where}) the derivative from {name} is no active piece's: {verdict.message}",
                positions=[args.position(int(k)) for k in group],
            )
        if verdict.status != KINK_PASS and not undecided:
            undecided = f"at the kink ({_names(args, group)}): {verdict.message}"
    if undecided:
        return _Outcome(INCONCLUSIVE, f"{kink}; {undecided}")
    return _Outcome(
        PASS,
        f"judged in blocks: {smooth}, and at the kink ({at}) {name} gives an active piece's derivative in each "
        f"of {len(groups)} coupled group(s) ({beside.verified} ray(s) beside it agree with one-sided differences "
        f"of f)",
    )


def coupled(
    kinked: np.ndarray, rule: Callable[[np.ndarray], np.ndarray | None], x: np.ndarray, scale: np.ndarray
) -> list[np.ndarray] | None:
    """The kinked elements in groups whose pieces are judged together: k and j are coupled when
    moving x_k across the kink makes the rule's gradient at j jump (a tie of max(x_k, x_j); relu and
    abs couple nothing). The rule has just been checked beside the kink against f, so its jumps are
    f's. Independent groups' hull is the product of theirs: 2 pieces per ReLU instead of 2^k."""
    parent = {int(k): int(k) for k in kinked}

    def root(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for k in kinked:
        step = np.zeros_like(x)
        step[k] = BESIDE * scale[k]
        plus, minus = rule(x + step), rule(x - step)
        if plus is None or minus is None or not (np.all(np.isfinite(plus)) and np.all(np.isfinite(minus))):
            return None
        a, b = plus[kinked], minus[kinked]
        size = np.abs(a) + np.abs(b)
        for j in kinked[np.abs(a - b) > JUMP_REL * size + 1e-12 * float(np.max(size, initial=0.0))]:
            parent[root(int(j))] = root(int(k))
    groups: dict[int, list[int]] = {}
    for k in kinked:
        groups.setdefault(root(int(k)), []).append(int(k))
    return [np.array(g, dtype=int) for g in groups.values()]
