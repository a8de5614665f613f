"""The shrinker narrows the input to what the program uses (issue 16).

A generated program kept an unused pair component, `\\(p1 : (R, R)) -> sin (fst p1)`: the reducer
must drop unused input components and narrow the input type and value with them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import advalidate as adv
from advalidate.fuzz import shrink as S
from advalidate.lang.program import program_of_module
from advalidate.lang.values import check_value
from advalidate.oracles import check

sys.path.insert(0, str(Path(__file__).parent))


def fd_fails(engine: object):
    def fails(p: adv.Program, cx: object) -> bool:
        return check(p, cx, engines=[engine], oracles=["fd"], seed=3).verdicts[0].status == "fail"

    return fails


def test_an_unused_pair_component_is_dropped_and_the_input_narrowed() -> None:
    from broken_engines import BrokenSin

    prog = adv.parse(r"\(p1 : (R, R)) -> sin (fst p1)")
    fails = fd_fails(BrokenSin())
    assert fails(prog, (0.3, 0.7))
    res = S.shrink(prog.module, (0.3, 0.7), fails, budget=60)
    assert res.fixpoint
    assert res.text.strip() == r"\(x : R) -> sin x"
    assert str(res.program.input_type) == "R"
    assert isinstance(res.x, float)  # the input value narrowed to match (then simplified)
    assert fails(res.program, res.x)


def test_split_candidates_narrow_type_and_value_together() -> None:
    prog = adv.parse(r"\(p1 : (R, R)) -> sin (fst p1)")
    cands = list(S.input_type_candidates(prog.module, (0.3, 0.7)))
    texts = [(adv.pretty(program_of_module(m)).strip(), v) for m, v in cands]
    assert (r"\(x : R) -> sin x", 0.3) in texts
    # Nested: the used component of a pair inside a tuple pattern.
    prog = adv.parse(r"\((a, q) : (Z, (R, [R]))) -> real a * cos (fst q)")
    cands = list(S.input_type_candidates(prog.module, (2, (0.5, [1.0]))))
    assert [(adv.pretty(program_of_module(m)).strip(), v) for m, v in cands] == [
        (r"\((a, x) : (Z, R)) -> real a * cos x", (2, 0.5))
    ]
    for m, v in cands:  # every candidate's value has its candidate's type
        check_value(v, program_of_module(m).input_type)


def test_a_variable_used_whole_is_not_split_into_a_bigger_program() -> None:
    # `p` is used whole, so splitting it would only make the program bigger: the reducer keeps it.
    prog = adv.parse(r"\(p : (R, R)) -> let f = \(q : (R, R)) -> fst q * snd q in f p + sin (fst p)")
    res = S.shrink(prog.module, (0.5, 1.5), lambda p, x: "f" in adv.pretty(p) and "sin" in adv.pretty(p), budget=30)
    assert "(R, R)" in res.text
    adv.parse(res.text)


def test_definitions_and_nested_unused_components() -> None:
    prog = adv.parse("def main ((a, (b, c)) : (R, (Z, R))) : R = a * c\n")
    cands = list(S.input_type_candidates(prog.module, (1.5, (2, 0.25))))
    first, v = cands[0]
    assert v == (1.5, 0.25)
    assert str(program_of_module(first).input_type) == "(R, R)"
    prog = adv.parse("def main (p : (R, (Z, R))) : R = fst p * snd (snd p)\n")
    seen: list[tuple[str, object]] = []
    m, x = prog.module, (1.5, (2, 0.25))
    for _ in range(3):  # split twice: p, then its second component
        out = [(c, v) for c, v in S.input_type_candidates(m, x) if S.module_nodes(c) < S.module_nodes(m)]
        if not out:
            break
        m, x = out[0]
        seen.append((adv.pretty(program_of_module(m)), x))
    assert seen[-1][1] == (1.5, 0.25)
    assert "(R, R)" in seen[-1][0] and "fst" not in seen[-1][0] and "snd" not in seen[-1][0]
