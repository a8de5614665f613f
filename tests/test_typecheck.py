"""Type inference: the type of every construct and built-in, and every type error with its location.

Expected types are read off the typing rules of docs/language.md: monomorphic user
functions, a fresh instance of a built-in's type at every use, `+ - *`, unary minus, `sum` and
`< <= > >=` on R or Z (an unconstrained choice defaults to R), `/` on R only, `==` on Z only.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import advalidate as adv
from advalidate.lang import ast as A
from advalidate.lang import core as C
from advalidate.lang import types as T
from advalidate.lang.ast import Span
from advalidate.lang.errors import AdvError, ParseError, TypeCheckError
from advalidate.lang.parser import parse_type
from advalidate.lang.typecheck import MAX_TYPE_SIZE, typecheck_program

ROOT = Path(__file__).resolve().parent.parent  # examples/ found from this file, not from the working directory


def sig(text: str) -> str:
    """`input -> output` of a program, as printed types."""
    p = adv.parse(text, "t.adv")
    return f"{p.input_type} -> {p.output_type}"


def err(text: str) -> TypeCheckError:
    with pytest.raises(TypeCheckError) as info:
        adv.parse(text, "t.adv")
    return info.value


def caret(e: TypeCheckError) -> tuple[str, str]:
    """The quoted source line and the caret line of a rendered error (without their 2-space indent)."""
    lines = str(e).splitlines()
    assert len(lines) == 3, str(e)
    assert lines[1].startswith("  ") and lines[2].startswith("  ")
    return lines[1][2:], lines[2][2:]


def walk(e: A.Node):
    stack = [e]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(A.children(n))


def has_tvar(t: T.Type) -> bool:
    t = T.prune(t)
    if isinstance(t, T.TVar):
        return True
    if isinstance(t, (T.Pair, T.Sum)):
        return has_tvar(t.left) or has_tvar(t.right)
    if isinstance(t, T.List):
        return has_tvar(t.elem)
    if isinstance(t, T.Arrow):
        return has_tvar(t.dom) or has_tvar(t.cod)
    return False


def core_ops(prog: adv.Program) -> list[str]:
    out, stack = [], [prog.core]
    while stack:
        e = stack.pop()
        if isinstance(e, C.Op):
            out.append(e.op)
        stack.extend(C.subexprs(e))
    return sorted(out)


# ---- inference results ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        # literals
        (r"\(x : R) -> (1.0, 2, true, false, ())", "R -> (R, Z, Bool, Bool, ())"),
        # a lambda's parameter type is inferred from its use
        (r"\x -> x + 1.0", "R -> R"),
        (r"\x -> x + 1", "Z -> Z"),
        (r"\x -> x * 2 - 3", "Z -> Z"),
        # overloaded and unconstrained: defaults to R
        (r"\x -> x * x", "R -> R"),
        (r"\x -> -x", "R -> R"),
        (r"\(x, y) -> x - y", "(R, R) -> R"),
        (r"\x -> x < x", "R -> Bool"),
        # unary minus and comparisons follow their operand
        (r"\(n : Z) -> -n", "Z -> Z"),
        (r"\(n : Z) -> (n < 1, n <= 1, n > 1, n >= 1, n == 1)", "Z -> (Bool, Bool, Bool, Bool, Bool)"),
        (r"\(x : R) -> (x < 1.0, x <= 1.0, x > 1.0, x >= 1.0)", "R -> (Bool, Bool, Bool, Bool)"),
        (r"\(x : R) -> x / 2.0", "R -> R"),
        # each use of an overloaded operator is resolved independently
        (r"\(x : R) -> let n = 2 + 3 in (x + x, n * n)", "R -> (R, Z)"),
        # tuples: (A, B, C) is (A, (B, C))
        (r"\((a, b, c) : (R, Z, Bool)) -> (c, (b, a))", "(R, Z, Bool) -> (Bool, Z, R)"),
        # lists, cons
        (r"\(x : R) -> x :: [x, 2.0]", "R -> [R]"),
        (r"\(x : R) -> [[x], []]", "R -> [[R]]"),
        (r"\(x : R) -> (x :: [], length [])", "R -> ([R], Z)"),
        # let with patterns
        (r"\(p : (R, Z)) -> let (a, b) = p in (b, a)", "(R, Z) -> (Z, R)"),
        (r"\(p : (R, ())) -> let (a, ()) = p in let _ = a in a", "(R, ()) -> R"),
        # if
        (r"\(x : R) -> if x > 0.0 then x else 0.0", "R -> R"),
        # par is a pair
        (r"\(x : R) -> par (x, 1)", "R -> (R, Z)"),
        # a binder with a tuple pattern and no annotation
        (r"\(a, b) -> a * real b", "(R, Z) -> R"),
    ],
)
def test_construct_types(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        (r"\(p : (R, Z)) -> (fst p, snd p)", "(R, Z) -> (R, Z)"),
        # fst/snd are instantiated afresh at every use
        (r"\(p : (R, Z)) -> fst (snd (p, (p, 1)))", "(R, Z) -> (R, Z)"),
        (r"\(x : R) -> if x > 0.0 then inl x else inr 3", "R -> R + Z"),
        (r"\(x : R) -> (if true then inl x else inr x, if true then inl 1 else inr 1.0)", "R -> (R + R, Z + R)"),
        (r"\(n : Z) -> real n", "Z -> R"),
        (r"\(xs : [R]) -> map (\x -> x < 0.0) xs", "[R] -> [Bool]"),
        (r"\(xs : [R]) -> parmap (\x -> (x, 1)) xs", "[R] -> [(R, Z)]"),
        (r"\(xs : [R]) -> foldl (\acc x -> acc + real (length [x])) 0.0 xs", "[R] -> R"),
        (r"\(xs : [R]) -> zipWith (\a b -> (b, a)) xs [1, 2]", "[R] -> [(Z, R)]"),
        (r"\(xs : [Bool]) -> length xs", "[Bool] -> Z"),
        (r"\(xs : [R]) -> sum xs", "[R] -> R"),
        # sum on [Z] is integer summation; unconstrained sum defaults to R
        (r"\(xs : [Z]) -> sum xs", "[Z] -> Z"),
        (r"\xs -> sum xs", "[R] -> R"),
        (r"\xs -> sum (map (\x -> x + 1) xs)", "[Z] -> Z"),
        # partial application of built-ins
        (r"\(xs : [R]) -> map (zipWith (\a b -> a * b) xs) [xs, xs]", "[R] -> [[R]]"),
        (r"\(xss : [[Z]]) -> map sum xss", "[[Z]] -> [Z]"),
        (r"\(xs : [R]) -> let f = foldl (\a b -> a + b) in f 0.0 xs", "[R] -> R"),
        # map instantiated twice at different types in one program
        (
            r"\(xs : [R]) -> (map (\x -> x < 1.0) xs, map (\b -> if b then 1 else 0) (map (\x -> x < 1.0) xs))",
            "[R] -> ([Bool], [Z])",
        ),
    ],
)
def test_builtin_types(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("name", A.UNARY_REAL)
def test_unary_real_builtins_are_R_to_R(name):
    assert sig(rf"\x -> {name} x") == "R -> R"
    e = err(rf"\(n : Z) -> {name} n")
    assert "should have type a real (R, or an array of R), but has type `Z`" in e.message


def test_bool_is_unit_plus_unit():
    assert parse_type("() + ()") == T.BOOL == parse_type("Bool")
    assert sig(r"\(b : () + ()) -> b") == "Bool -> Bool"
    # inl () and inr () are Bool literals once the two sides meet
    assert sig(r"\(x : R) -> if x > 0.0 then inl () else inr ()") == "R -> Bool"
    assert sig(r"\(x : R) -> if inl () then x else x") == "R -> R"
    # a Bool may be taken apart with inl/inr, and a () + () with true/false
    assert sig(r"\(x : R) -> case x > 1.0 of { inl u -> u; inr v -> v }") == "R -> ()"
    assert sig(r"\(b : () + ()) -> case b of { true -> 1; false -> 2 }") == "Bool -> Z"


@pytest.mark.parametrize(
    "text, expected",
    [
        (r"\(s : R + Z) -> case s of { inl a -> a; inr n -> real n }", "R + Z -> R"),
        (r"\(s : R + Z) -> case s of { inr n -> real n; inl a -> a }", "R + Z -> R"),
        (r"\(b : Bool) -> case b of { true -> 1.0; false -> 0.0 }", "Bool -> R"),
        (r"\(b : Bool) -> case b of { false -> 1.0; true -> 0.0 }", "Bool -> R"),
        (r"\(xs : [R]) -> case xs of { [] -> 0.0; h :: t -> h + sum t }", "[R] -> R"),
        (r"\(xs : [R]) -> case xs of { h :: _ -> [h]; [] -> [] }", "[R] -> [R]"),
        # the scrutinee's type is inferred from the alternatives
        (r"\s -> case s of { inl a -> a + 1.0; inr (p, q) -> p * q }", "R + (R, R) -> R"),
        (r"\xs -> case xs of { [] -> 0; (a, b) :: _ -> a + b }", "[(Z, Z)] -> Z"),
        (r"\b -> case b of { true -> 1.0; false -> 0.0 }", "Bool -> R"),
    ],
)
def test_case_kinds(text, expected):
    assert sig(text) == expected


def test_case_on_sum_and_list_desugars_by_kind():
    p = adv.parse(r"\(s : R + [R]) -> case s of { inl a -> a; inr xs -> case xs of { [] -> 0.0; h :: _ -> h } }")
    kinds = {type(e).__name__ for e in _core_nodes(p.core)}
    assert {"Case", "ListCase"} <= kinds
    q = adv.parse(r"\(b : Bool) -> case b of { inl u -> 1.0; inr v -> 2.0 }")
    assert "If" in {type(e).__name__ for e in _core_nodes(q.core)}  # Bool cases become `if`


def _core_nodes(e):
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(C.subexprs(x))


def test_letrec_with_annotations():
    p = adv.parse(
        r"\(n : Z) -> letrec f (k : Z) (acc : R) : R = if k <= 0 then acc else f (k - 1) (acc * 2.0) in f n 1.0"
    )
    assert (str(p.input_type), str(p.output_type)) == ("Z", "R")
    (lr,) = [e for e in walk(p.expr) if isinstance(e, A.LetRec)]
    assert lr.fn_ty == T.Arrow(T.Z, T.Arrow(T.R, T.R))


def test_letrec_without_annotations_is_inferred_and_monomorphic():
    # k is compared with 0 and decremented: Z; the result adds k: Z
    assert sig(r"\n -> letrec f k = if k <= 0 then 0 else k + f (k - 1) in f n") == "Z -> Z"
    # the recursive call fixes the parameter's type at the one use-site type (no polymorphism)
    e = err(r"\(x : R) -> letrec f y = y in (f x, f 1)")
    assert e.message == "the argument should have type `R`, but has type `Z`"
    assert (e.line, e.column) == (1, 39)  # the argument `1`


def test_letrec_result_annotation_is_checked():
    e = err("\\(n : Z) ->\n  letrec f (k : Z) : R = k in f n")
    assert e.message == "the body of `f` should have type `R`, but has type `Z`"
    assert (e.line, e.column) == (2, 26)


def test_let_is_monomorphic():
    e = err(r"\(x : R) -> let f = \y -> y in (f 1, f x)")
    assert e.message == "the argument should have type `Z`, but has type `R`"
    assert (e.line, e.column) == (1, 40)


def test_defs_file_types():
    text = (ROOT / "examples" / "defs.adv").read_text(encoding="utf-8")
    p = adv.parse(text, "examples/defs.adv")
    assert (str(p.input_type), str(p.output_type)) == ("((R, R), Z)", "R")
    # unannotated defs are inferred from their bodies and uses
    assert sig("def id x = x\ndef twice f x = f (f x)\ndef main y = twice id (y + 1)") == "Z -> Z"
    # a def may call itself and earlier defs
    assert sig("def fact n = if n <= 0 then 1 else n * fact (n - 1)\ndef main (x : R) = real (fact 5) * x") == "R -> R"


def test_defs_are_monomorphic_too():
    e = err("def id x = x\ndef main (y : R) = (id y, id 1)")
    assert (e.line, e.column, e.message) == (2, 30, "the argument should have type `R`, but has type `Z`")


def test_every_node_gets_a_concrete_type():
    paths = sorted((ROOT / "examples").glob("*.adv"))
    assert len(paths) >= 14
    for path in paths:
        p = adv.parse(path.read_text(encoding="utf-8"), str(path))
        for n in walk(p.expr):
            assert n.ty is not None and not has_tvar(n.ty), (path, n)
            if isinstance(n, A.BinOp):
                assert n.operand_ty in (T.R, T.Z)


def test_operand_types_choose_real_or_integer_primitives():
    p = adv.parse(r"\(x : R) -> let n = 2 + 3 * 4 - 1 in (x + x * x - x, -x, -n, n == 1, x < 1.0, n < 1, x / x)")
    ops = core_ops(p)
    assert ops == sorted(["iadd", "imul", "isub", "add", "mul", "sub", "neg", "ineg", "ieq", "lt", "ilt", "div"])
    assert core_ops(adv.parse(r"\(xs : [Z]) -> sum xs")) == ["isum"]
    assert core_ops(adv.parse(r"\xs -> sum xs")) == ["sum"]
    # defaulting to R picks the real primitives
    assert core_ops(adv.parse(r"\x -> x * x + -x")) == ["add", "mul", "neg"]


def test_typecheck_annotates_generator_built_trees():
    # a syntax tree built directly (as the generator does), without spans or source
    lam = A.Lam(A.Binder(A.PVar("x"), T.R), A.BinOp("*", A.Var("x"), A.RealLit(2.0)))
    assert typecheck_program(lam) == (T.R, T.R)
    assert lam.ty == T.Arrow(T.R, T.R) and lam.body.operand_ty == T.R


# ---- errors -----------------------------------------------------------------------------------


def test_unknown_name():
    e = err("\\(x : R) ->\n  x + y")
    assert isinstance(e, AdvError)
    assert e.message == "unknown name `y`"
    assert (e.line, e.column) == (2, 7)
    assert str(e).splitlines()[0] == "t.adv:2:7: type error: unknown name `y`"
    assert caret(e) == ("  x + y", "      ^")


def test_unknown_long_name_is_shortened_in_the_message():
    e = err(r"\(x : R) -> " + "a" * 5000)
    assert len(e.message) < 100 and "aaa..." in e.message


def test_mismatch_names_expected_and_found():
    e = err(r"\(x : R) -> if x > 0.0 then 1.0 else 2")
    assert e.message == "the `else` branch (it must match `then`) should have type `R`, but has type `Z`"
    assert (e.line, e.column) == (1, 38)
    assert caret(e) == (r"\(x : R) -> if x > 0.0 then 1.0 else 2", " " * 37 + "^")


@pytest.mark.parametrize(
    "text, message, col",
    [
        (r"\(x : R) -> if x then x else x", "the condition of `if` should have type `Bool`, but has type `R`", 16),
        (r"\(x : R) -> [x, 1]", "list element 2 should have type `R`, but has type `Z`", 17),
        (r"\(x : R) -> x :: 1", "the tail of `::` should have type `[R]`, but has type `Z`", 18),
        (r"\(x : R) -> x :: [1]", "the tail of `::` should have type `[R]`, but has type `[Z]`", 18),
        (
            r"\(x : R) -> sin true",
            "the argument should have type a real (R, or an array of R), but has type `Bool`",
            17,
        ),
        (r"\(x : R) -> sum x", "the argument should have type `['n]`, but has type `R`", 17),
        (r"\(x : R) -> fst x", "the argument should have type `('a, 'b)`, but has type `R`", 17),
        (r"\(x : R) -> map x [x]", "the argument should have type `'a -> 'b`, but has type `R`", 17),
        (
            r"\(b : Bool) -> b + b",
            "the left operand of `+` should have type a number (R or Z), but has type `Bool`",
            16,
        ),
        (r"\(x : R) -> x + 1", "the right operand of `+` should have type `R`, but has type `Z`", 17),
        (r"\(x : R) -> -true", "the operand of unary `-` should have type a number (R or Z), but has type `Bool`", 14),
        (
            r"\(x : R) -> case x of { [] -> 0.0; h :: t -> h }",
            "the scrutinee of this `case` should have type `['a]`, but has type `R`",
            18,
        ),
        (
            r"\(s : R + Z) -> case s of { inl a -> a; inr n -> n }",
            "the `inr` alternative should have type `R`, but has type `Z`",
            50,
        ),
        (r"\(x : R) -> let (a, b) = x in a", "a pair pattern cannot match a value of type `R`", 17),
        (r"\(x : R) -> let () = x in x", "the pattern `()` should have type `()`, but has type `R`", 17),
        (r"\((x, x) : (R, R)) -> x", "`x` is bound twice in the same pattern", 7),
        (
            r"\(s : R + Z) -> case s of { inl (a, b) -> a; inr n -> 0.0 }",
            "a pair pattern cannot match a value of type `R`",
            33,
        ),
    ],
)
def test_mismatch_errors(text, message, col):
    e = err(text)
    assert (e.message, e.line, e.column) == (message, 1, col)


def test_applying_a_non_function():
    e = err("\\(x : R) ->\n  x 1.0")
    assert e.message == "this is applied to an argument, but it is not a function: it has type `R`"
    assert (e.line, e.column) == (2, 3)
    assert caret(e) == ("  x 1.0", "  ^")
    e = err(r"\(x : R) -> 1 2")
    assert "not a function" in e.message and "`Z`" in e.message and e.column == 13
    # a numeric type variable cannot become a function either
    e = err(r"\x -> (x + x) 1")
    assert "not a function" in e.message and "a number (R or Z)" in e.message


def test_non_exhaustive_or_mixed_case_from_a_syntax_tree():
    # The parser already refuses such cases (see below); trees built directly are checked too.
    span = Span("g.adv", 3, 5, 3, 20)
    scrut = A.Var("s")
    one = A.Lam(
        A.Binder(A.PVar("s"), T.Sum(T.R, T.R)), A.Case(scrut, [A.Alt("inl", [A.PVar("a")], A.Var("a"))], span=span)
    )
    with pytest.raises(TypeCheckError) as info:
        typecheck_program(one, None)
    e = info.value
    assert "exactly the alternatives inl/inr, true/false or []/`::`" in e.message and "found: inl" in e.message
    assert (e.line, e.column) == (3, 5) and str(e).startswith("g.adv:3:5: type error:")
    mixed = A.Lam(
        A.Binder(A.PVar("s"), T.BOOL),
        A.Case(scrut, [A.Alt("inl", [A.PUnit()], A.RealLit(1.0)), A.Alt("false", [], A.RealLit(0.0))], span=span),
    )
    with pytest.raises(TypeCheckError, match="found: inl, false"):
        typecheck_program(mixed, None)
    dup = A.Lam(
        A.Binder(A.PVar("s"), T.BOOL),
        A.Case(scrut, [A.Alt("true", [], A.RealLit(1.0)), A.Alt("true", [], A.RealLit(0.0))], span=span),
    )
    with pytest.raises(TypeCheckError, match="found: true, true"):
        typecheck_program(dup, None)


@pytest.mark.parametrize(
    "text",
    [
        r"\(s : R + R) -> case s of { inl a -> a }",
        r"\(s : R + R) -> case s of { inl a -> a; true -> 0.0 }",
        r"\(s : [R]) -> case s of { [] -> 0.0; inr a -> a }",
    ],
)
def test_non_exhaustive_or_mixed_case_in_text_is_refused(text):
    with pytest.raises((ParseError, TypeCheckError)) as info:
        adv.parse(text, "t.adv")
    assert info.value.line == 1 and info.value.column is not None


def test_division_on_integers():
    e = err(r"\(n : Z) -> n / 2")
    assert (e.message, e.column) == (
        "the left operand of `/` should have type a real (R, or an array of R), but has type `Z`",
        13,
    )
    e = err(r"\(x : R) -> x / 2")
    assert (e.message, e.column) == ("the right operand of `/` should have type `R`, but has type `Z`", 17)
    # with no other constraint, `/` makes its operands real
    assert sig(r"\x -> x / x") == "R -> R"


def test_equality_on_reals():
    e = err(r"\(x : R) -> x == 2.0")
    assert (e.message, e.column) == (
        "the left operand of `==` should have type an integer (Z, or an array of Z), but has type `R`",
        13,
    )
    e = err(r"\(n : Z) -> n == 2.0")
    assert (e.message, e.column) == ("the right operand of `==` should have type `Z`, but has type `R`", 18)
    assert sig(r"\x -> x == x") == "Z -> Bool"


@pytest.mark.parametrize(
    "text, found",
    [("1.0", "`R`"), ("(1, 2)", "`(Z, Z)`"), (r"(\x -> x) 1.0", "`R`"), ("[]", "`['a]`")],
)
def test_program_must_be_a_function(text, found):
    e = err(text)
    assert e.message == f"a program must be a function `σ -> τ`, but this has type {found}"
    assert (e.line, e.column) == (1, 1)


def test_higher_order_input_and_output():
    e = err(r"\(f : R -> R) -> f 1.0")
    assert e.message == "the program's input type `R -> R` must be first-order (no `->`)"
    assert (e.line, e.column) == (1, 1)
    e = err(r"\(x : R) -> \(y : R) -> x + y")
    assert e.message == "the program's output type `R -> R` must be first-order (no `->`)"
    e = err(r"\(p : (R, [Z -> R])) -> fst p")
    assert "input type `(R, [Z -> R])` must be first-order" in e.message
    e = err(r"\(x : R) -> (x, \(y : R) -> y)")
    assert "output type `(R, R -> R)` must be first-order" in e.message


def test_program_errors_in_a_defs_file_point_at_main():
    e = err("def sq (x : R) : R = x * x\n\ndef main (x : R) = \\(y : R) -> sq x")
    assert (e.line, e.column) == (3, 1)
    assert "output type `R -> R` must be first-order" in e.message
    assert caret(e)[0] == "def main (x : R) = \\(y : R) -> sq x"
    e = err("def one (x : R) : R = 1.0\n\ndef main y = one 2.0")
    assert (e.line, e.column) == (3, 1) and "cannot determine the program's input type" in e.message


def test_undeterminable_input_or_output_type():
    e = err(r"\x -> 1.0")
    assert e.message.startswith("cannot determine the program's input type: add a type annotation")
    assert (e.line, e.column) == (1, 1)
    e = err(r"\(x, y) -> x + 1.0")
    assert e.message.startswith("cannot determine the program's input type (so far it is `(R, 'a)`)")
    e = err(r"\(x : R) -> []")
    assert e.message.startswith("cannot determine the program's output type (so far it is `['a]`)")
    e = err(r"\(x : R) -> inl x")
    assert e.message.startswith("cannot determine the program's output type (so far it is `R + 'a`)")
    # numeric variables are not undeterminable: they default to R
    assert sig(r"\x -> -x") == "R -> R"
    # unconstrained variables *inside* the program are harmless
    assert sig(r"\(x : R) -> let e = [] in let n = length e in x") == "R -> R"


def test_occurs_check():
    e = err(r"\f -> f f")
    assert "infinite type" in e.message and "`'a` would have to equal `'a -> 'b`" in e.message
    assert (e.line, e.column) == (1, 7)
    e = err(r"\x -> x :: x")
    assert "infinite type" in e.message and "`'a` would have to equal `['a]`" in e.message
    assert (e.line, e.column) == (1, 12)
    e = err(r"\(x : R) -> letrec f y = f in f x")
    assert "infinite type" in e.message


def test_messages_name_type_variables_consistently():
    # one message shares variable names between the expected and found types
    e = err(r"\(x : R) -> (\p -> (fst p, fst p)) (\q -> q)")
    assert "'t" not in e.message and "`('a, 'b)`" in e.message
    # user names that look like type variables are left alone
    e = err(r"\(x : R) -> x't1")
    assert e.message == "unknown name `x't1`"


def test_exponentially_large_types_are_refused_quickly():
    # a_k = (a_{k-1}, a_{k-1}) has a type tree of 2^(k+1) - 1 constructors; with k = 60 that is
    # astronomically large, but its DAG is small: refuse it without ever expanding it.
    n = 60
    text = r"\(x : R) -> let a0 = (x, x) in " + " ".join(f"let a{i} = (a{i - 1}, a{i - 1}) in" for i in range(1, n))
    text += f" a{n - 1}"
    e = err(text)  # without expanding 2^60 constructors (a regression would hang, not pass)
    assert "too large" in e.message and str(MAX_TYPE_SIZE) in e.message
    # a_k has 2^(k+2) - 1 constructors: the first above the limit is a15 = (a14, a14), with 2^17 - 1
    assert e.column == text.index("(a14, a14)") + 1
    # ... while a large but reasonable type (256 leaves) is fine
    small = r"\(x : R) -> let a0 = (x, x) in " + " ".join(f"let a{i} = (a{i - 1}, a{i - 1}) in" for i in range(1, 8))
    p = adv.parse(small + " a7")
    assert len(adv.flatten(adv.evaluate(p, 1.0))) == 2**8


def test_exponential_unification_is_fast():
    # unifying two separately built DAG types of 2^60 leaves each (an if's branches) must not expand them
    n = 60
    mk = lambda v: f"let {v}0 = (x, x) in " + " ".join(f"let {v}{i} = ({v}{i - 1}, {v}{i - 1}) in" for i in range(1, n))
    text = rf"\(x : R) -> {mk('a')} {mk('b')} let c = if x > 0.0 then a{n - 1} else b{n - 1} in x"
    e = err(text)  # without expanding 2^60 constructors (a regression would hang, not pass)
    assert "too large" in e.message
