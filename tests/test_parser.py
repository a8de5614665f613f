"""Lexer and parser: every grammar production, every error kind, and hostile input."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advalidate.lang import ast as A
from advalidate.lang import types as T
from advalidate.lang.errors import EXCERPT, ParseError
from advalidate.lang.lexer import tokenize
from advalidate.lang.parser import MAX_DEPTH, MAX_TREE_DEPTH, parse_expr, parse_module, parse_type

x, y, z, f, g = (A.Var(n) for n in "xyzfg")


def err(text: str, parse=parse_expr) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(text, "t.adv")
    return info.value


def where(e: ParseError) -> tuple[int, int]:
    return (e.line, e.column)


def binder(name: str, annot: T.Type | None = None) -> A.Binder:
    return A.Binder(A.PVar(name), annot)


# ---- lexer ----------------------------------------------------------------------------------


def test_tokens_kinds_and_spans():
    toks = tokenize("let x' = 1.5e-3 in\n  x' -- note\n\t_y")
    assert [t.kind for t in toks] == ["let", "NAME", "=", "REAL", "in", "NAME", "NAME", "EOF"]
    assert [(t.span.line, t.span.col, t.span.end_col) for t in toks] == [
        (1, 1, 4), (1, 5, 7), (1, 8, 9), (1, 10, 16), (1, 17, 19), (2, 3, 5), (3, 2, 4), (3, 4, 4),
    ]  # fmt: skip
    assert toks[3].value == 1.5e-3


def test_symbols_longest_match():
    toks = tokenize("\\ -> = ( ) , : ; { } [ ] :: + - * / < <= > >= == _")
    assert [t.kind for t in toks][:-1] == "\\ -> = ( ) , : ; { } [ ] :: + - * / < <= > >= == _".split()


def test_crlf_and_cr_count_as_one_line_break_each():
    toks = tokenize("a\r\nb\rc\n\nd")
    assert [(t.text, t.span.line, t.span.col) for t in toks[:-1]] == [
        ("a", 1, 1),
        ("b", 2, 1),
        ("c", 3, 1),
        ("d", 5, 1),
    ]


@pytest.mark.parametrize(
    ("text", "value"),
    [("1.0", 1.0), ("2.5e-3", 2.5e-3), ("1e+20", 1e20), ("3e5", 3e5), ("3E5", 3e5), ("0.5E-2", 0.005), ("1e-400", 0.0)],
)
def test_real_literals(text, value):
    e = parse_expr(text)
    assert isinstance(e, A.RealLit) and e.value == value


@pytest.mark.parametrize(("text", "value"), [("0", 0), ("42", 42), ("007", 7), ("9" * 40, int("9" * 40))])
def test_int_literals(text, value):
    assert parse_expr(text) == A.IntLit(value)


def test_comments_run_to_end_of_line():
    assert parse_expr("1 -- one\n+ 2 --> two") == A.BinOp("+", A.IntLit(1), A.IntLit(2))
    assert parse_expr("x--y") == x


def test_names_with_primes_underscores_and_keyword_prefixes():
    assert parse_expr("x_1' lettuce iffy _t") == A.App(
        A.App(A.App(A.Var("x_1'"), A.Var("lettuce")), A.Var("iffy")), A.Var("_t")
    )


def test_bad_character_is_named_with_caret():
    e = err("x + $y")
    assert "unexpected character '$' (U+0024 DOLLAR SIGN)" in e.message
    assert where(e) == (1, 5)
    assert str(e).splitlines() == ["t.adv:1:5: parse error: " + e.message, "  x + $y", "      ^"]


def test_bad_character_on_later_line():
    e = err("let a = 1 in\n  a ? a")
    assert where(e) == (2, 5) and "'?'" in e.message


@pytest.mark.parametrize(
    ("text", "shown"), [("2x", "2x"), ("1.", "1."), ("1e", "1e"), ("1.5.3", "1.5.3"), ("3e+", "3e")]
)
def test_malformed_numbers(text, shown):
    e = err(f"f {text}")
    assert f"malformed number '{shown}'" in e.message
    assert where(e) == (1, 3)


def test_real_overflow_is_refused():
    e = err("1.0 + 1e999")
    assert "too large" in e.message and where(e) == (1, 7)
    assert "too large" in err("1" * 400 + ".0").message


def test_huge_integer_is_refused():
    assert "integer literal too long" in err("9" * 5000).message


# ---- types ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ty"),
    [
        ("R", T.R),
        ("Z", T.Z),
        ("Bool", T.BOOL),
        ("()", T.UNIT),
        ("( )", T.UNIT),
        ("[R]", T.List(T.R)),
        ("(R)", T.R),
        ("(R, Z)", T.Pair(T.R, T.Z)),
        ("(R, Z, Bool)", T.Pair(T.R, T.Pair(T.Z, T.BOOL))),
        ("R -> Z -> R", T.Arrow(T.R, T.Arrow(T.Z, T.R))),
        ("(R -> Z) -> R", T.Arrow(T.Arrow(T.R, T.Z), T.R)),
        ("R + Z + ()", T.Sum(T.Sum(T.R, T.Z), T.UNIT)),
        ("R + (Z + ())", T.Sum(T.R, T.Sum(T.Z, T.UNIT))),
        ("R + Z -> [R -> R]", T.Arrow(T.Sum(T.R, T.Z), T.List(T.Arrow(T.R, T.R)))),
        ("() + ()", T.BOOL),
    ],
)
def test_types(text, ty):
    assert parse_type(text) == ty


@pytest.mark.parametrize(
    ("text", "message", "col"),
    [
        ("Real", "unknown type 'Real'", 1),
        ("R ->", "expected a type, found end of input", 5),
        ("(R, Z", "expected ')' to match the '(' at line 1, column 1, found end of input", 6),
        ("[R", "expected ']' to match the '[' at line 1, column 1, found end of input", 3),
        ("R R", "expected end of input after the type, found 'R'", 3),
        ("R + -> R", "expected a type, found '->'", 5),
    ],
)
def test_type_errors(text, message, col):
    e = err(text, parse_type)
    assert message in e.message and where(e) == (1, col)


# ---- expressions ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("x", x),
        ("sin", A.Builtin("sin")),
        ("inl x", A.App(A.Builtin("inl"), x)),
        ("true", A.BoolLit(True)),
        ("false", A.BoolLit(False)),
        ("()", A.UnitLit()),
        ("( )", A.UnitLit()),
        ("((x))", x),
        ("(x, y)", A.PairE(x, y)),
        ("(x, y, z)", A.PairE(x, A.PairE(y, z))),
        ("((x, y), z)", A.PairE(A.PairE(x, y), z)),
        ("[]", A.ListLit([])),
        ("[ ]", A.ListLit([])),
        ("[x]", A.ListLit([x])),
        ("[x, y, z]", A.ListLit([x, y, z])),
        ("par(x, y)", A.Par(x, y)),
        ("f x y", A.App(A.App(f, x), y)),
        ("f (g x)", A.App(f, A.App(g, x))),
        ("-x", A.Neg(x)),
        ("- -x", A.Neg(A.Neg(x))),
        ("-f x", A.Neg(A.App(f, x))),
        ("f -x", A.BinOp("-", f, x)),
        ("x - y - z", A.BinOp("-", A.BinOp("-", x, y), z)),
        ("x / y * z", A.BinOp("*", A.BinOp("/", x, y), z)),
        ("x + y * z", A.BinOp("+", x, A.BinOp("*", y, z))),
        ("-x * y", A.BinOp("*", A.Neg(x), y)),
        ("x * -y", A.BinOp("*", x, A.Neg(y))),
        ("x :: y :: z", A.Cons(x, A.Cons(y, z))),
        ("x + y :: z", A.Cons(A.BinOp("+", x, y), z)),
        ("x :: y < z", A.BinOp("<", A.Cons(x, y), z)),
        ("x + y < z * x", A.BinOp("<", A.BinOp("+", x, y), A.BinOp("*", z, x))),
        ("(x < y) == z", A.BinOp("==", A.BinOp("<", x, y), z)),
        ("f (x, y) [z]", A.App(A.App(f, A.PairE(x, y)), A.ListLit([z]))),
    ],
)
def test_expression_forms(text, tree):
    assert parse_expr(text) == tree


@pytest.mark.parametrize("op", A.CMP_OPS)
def test_each_comparison(op):
    assert parse_expr(f"x {op} y") == A.BinOp(op, x, y)


def test_lambda_with_several_binders_nests():
    e = parse_expr("\\a (b : R) ((c, d) : (R, Z)) (p, q) -> a")
    expected = A.Lam(
        binder("a"),
        A.Lam(
            binder("b", T.R),
            A.Lam(
                A.Binder(A.PPair(A.PVar("c"), A.PVar("d")), T.Pair(T.R, T.Z)),
                A.Lam(A.Binder(A.PPair(A.PVar("p"), A.PVar("q"))), A.Var("a")),
            ),
        ),
    )
    assert e == expected


def test_binder_extensions_wildcard_unit_and_parenthesised():
    assert parse_expr("\\_ () (a) -> a") == A.Lam(
        A.Binder(A.PWild()), A.Lam(A.Binder(A.PUnit()), A.Lam(binder("a"), A.Var("a")))
    )


def test_seed_example():
    e = parse_expr("\\((x, y) : (R, R)) -> let z = x + y in x * z")
    assert e == A.Lam(
        A.Binder(A.PPair(A.PVar("x"), A.PVar("y")), T.Pair(T.R, T.R)),
        A.Let(A.PVar("z"), A.BinOp("+", x, y), A.BinOp("*", x, z)),
    )


def test_let_patterns_and_nesting():
    e = parse_expr("let (a, _, ()) = x in let b = let c = a in c in b")
    pat = A.PPair(A.PVar("a"), A.PPair(A.PWild(), A.PUnit()))
    inner = A.Let(A.PVar("b"), A.Let(A.PVar("c"), A.Var("a"), A.Var("c")), A.Var("b"))
    assert e == A.Let(pat, x, inner)


def test_letrec_with_and_without_result_type():
    e = parse_expr("letrec fact (n : Z) : Z = if n < 1 then 1 else n * fact (n - 1) in fact 5")
    assert isinstance(e, A.LetRec) and e.name == "fact" and e.result == T.Z
    assert e.binders == [binder("n", T.Z)]
    assert e.body == A.App(A.Var("fact"), A.IntLit(5))
    e2 = parse_expr("letrec go a b = go b a in go")
    assert e2.result is None and [b.pat.name for b in e2.binders] == ["a", "b"]


def test_if():
    assert parse_expr("if x then y else if y then z else x") == A.If(x, y, A.If(y, z, x))


@pytest.mark.parametrize(
    ("alts", "kinds"),
    [
        ("inl a -> a; inr (b, c) -> b", ["inl", "inr"]),
        ("inr b -> b; inl a -> a", ["inr", "inl"]),
        ("true -> x; false -> y", ["true", "false"]),
        ("false -> y; true -> x", ["false", "true"]),
        ("[] -> x; h :: t -> h", ["nil", "cons"]),
        ("(a, b) :: _ -> a; [ ] -> x", ["cons", "nil"]),
    ],
)
def test_case_alternatives(alts, kinds):
    e = parse_expr(f"case x of {{ {alts} }}")
    assert isinstance(e, A.Case) and [a.kind for a in e.alts] == kinds
    for a in e.alts:
        assert len(a.pats) == A.ALT_KINDS[a.kind]


def test_case_patterns_and_nested_case():
    e = parse_expr("case xs of { [] -> 0; h :: t -> case h of { inl a -> a; inr _ -> 1 } }")
    cons = e.alts[1]
    assert cons.pats == [A.PVar("h"), A.PVar("t")]
    assert isinstance(cons.body, A.Case) and cons.body.alts[1].pats == [A.PWild()]


def test_greedy_bodies_stop_at_delimiters():
    e = parse_expr("(\\a -> a + 1, let b = 2 in b, if x then y else z)")
    assert isinstance(e.left, A.Lam) and isinstance(e.right.left, A.Let) and isinstance(e.right.right, A.If)


# ---- spans ----------------------------------------------------------------------------------


def span_of(node) -> tuple[int, int, int, int]:
    s = node.span
    return (s.line, s.col, s.end_line, s.end_col)


def test_spans_single_line():
    e = parse_expr("let x = (1 + y) in f x", "s.adv")
    assert e.span.file == "s.adv"
    assert span_of(e) == (1, 1, 1, 23)
    assert span_of(e.pat) == (1, 5, 1, 6)
    assert span_of(e.rhs) == (1, 9, 1, 16)
    assert span_of(e.rhs.left) == (1, 10, 1, 11)
    assert span_of(e.body) == (1, 20, 1, 23)


def test_spans_multi_line_and_nested_nodes():
    text = "\\a b ->\n  case a of {\n    true -> -b;\n    false -> (b, b, 1.5)\n  }"
    e = parse_expr(text)
    assert span_of(e) == (1, 1, 5, 4)
    assert span_of(e.body) == (1, 4, 5, 4)
    assert span_of(e.binder) == (1, 2, 1, 3)
    case = e.body.body
    assert span_of(case) == (2, 3, 5, 4)
    assert span_of(case.alts[0]) == (3, 5, 3, 15)
    assert span_of(case.alts[0].body) == (3, 13, 3, 15)
    tup = case.alts[1].body
    assert span_of(tup) == (4, 14, 4, 25)
    assert span_of(tup.right) == (4, 18, 4, 24)


def test_module_spans():
    m = parse_module("def f x = x\n\ndef main (y : R) = f y\n")
    assert span_of(m) == (1, 1, 3, 23)
    assert span_of(m.defs[1]) == (3, 1, 3, 23)
    assert span_of(m.defs[1].binders[0]) == (3, 10, 3, 17)


# ---- modules --------------------------------------------------------------------------------


def test_module_of_one_expression():
    m = parse_module("-- a comment\n\\x -> x\n")
    assert m.expr == A.Lam(binder("x"), x) and m.defs == []


def test_module_of_definitions():
    m = parse_module("def sq (x : R) : R = x * x\ndef main v = sq v + sq 2.0")
    assert m.expr is None and [d.name for d in m.defs] == ["sq", "main"]
    assert m.defs[0].binders == [binder("x", T.R)] and m.defs[0].result == T.R
    assert m.defs[1].result is None


@pytest.mark.parametrize(
    ("text", "message", "pos"),
    [
        ("def f x = x", "the last definition must be 'main' (the program), found 'f'", (1, 5)),
        ("def main x = x\ndef f y = y", "the last definition must be 'main'", (2, 5)),
        (
            "def f x = x\ndef f y = y\ndef main z = z",
            "duplicate definition of 'f' (first defined at line 1, column 5)",
            (2, 5),
        ),
        ("def main = 1", "expected a parameter after 'def main'", (1, 10)),
        ("def main x = x 1)", "expected 'def' or end of input, found ')'", (1, 17)),
        (
            "1 def main x = x",
            "expected end of input (a file is one expression or a sequence of 'def's), found 'def'",
            (1, 3),
        ),
        ("", "expected an expression or 'def', found end of input", (1, 1)),
        ("-- only a comment\n", "expected an expression or 'def', found end of input", (2, 1)),
        ("def main x : R x", "expected '=' after the parameters of 'main', found 'x'", (1, 16)),
        ("def let x = x", "'let' is a reserved keyword", (1, 5)),
        ("def 1 x = x", "expected a name, found '1'", (1, 5)),
    ],
)
def test_module_errors(text, message, pos):
    e = err(text, parse_module)
    assert message in e.message and where(e) == pos


# ---- expression errors ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message", "pos"),
    [
        ("let x = 1 )", "expected 'in' to close this 'let', found ')'", (1, 11)),
        ("let x = 1", "expected 'in' to close this 'let', found end of input", (1, 10)),
        ("let x 1 = 2 in x", "expected '=' after the pattern of this 'let', found '1'", (1, 7)),
        ("let f x = 2 in f", "write 'letrec f x = ...'", (1, 7)),
        ("letrec f = 1 in f", "expected a parameter after 'letrec f', found '='", (1, 10)),
        ("letrec (a, b) x = 1 in a", "expected a function name after 'letrec', found '('", (1, 8)),
        ("letrec f x y = 1 then f", "expected 'in' to close this 'letrec', found 'then'", (1, 18)),
        ("letrec f x : R 1 in f", "expected '=' after the parameters of 'f', found '1'", (1, 16)),
        ("if x y", "expected 'then' after the condition of this 'if', found end of input", (1, 7)),
        ("if x then y", "expected 'else' to go with this 'if ... then', found end of input", (1, 12)),
        ("if x then y then z", "expected 'else' to go with this 'if ... then', found 'then'", (1, 13)),
        ("case x { true -> 1; false -> 2 }", "expected 'of' after the scrutinee of this 'case', found '{'", (1, 8)),
        ("case x of true -> 1", "expected '{' to open the alternatives of this 'case', found 'true'", (1, 11)),
        ("\\ -> x", "expected a parameter after '\\', found '->'", (1, 3)),
        ("\\x . x", "unexpected character '.'", (1, 4)),
        ("\\x x", "expected '->' after the lambda's parameters, found end of input", (1, 5)),
        ("\\(x : R y) -> x", "expected ')' to match the '(' at line 1, column 2, found 'y'", (1, 9)),
        ("(1, 2", "expected ')' to match the '(' at line 1, column 1, found end of input", (1, 6)),
        ("[1, 2)", "expected ']' to match the '[' at line 1, column 1, found ')'", (1, 6)),
        ("x +", "expected an expression after '+', found end of input", (1, 4)),
        ("f (x ++ y)", "expected an expression after '+', found '+'", (1, 7)),
        ("-", "expected an expression after '-', found end of input", (1, 2)),
        ("x y )", "expected end of input, found ')'", (1, 5)),
        (")", "expected an expression, found ')'", (1, 1)),
        ("in", "expected an expression, found 'in'", (1, 1)),
        ("_", "'_' is only allowed in patterns", (1, 1)),
        ("f \\x -> x", "a lambda used as an argument or operand must be parenthesised", (1, 3)),
        ("1 + let a = 1 in a", "a 'let' used as an operand must be parenthesised", (1, 5)),
        ("x < y < z", "comparisons do not chain", (1, 7)),
        ("x == y + 1 <= z", "comparisons do not chain", (1, 12)),
        ("par(x)", "expected ',': 'par' takes two arguments", (1, 6)),
        ("par(x, y, z)", "'par' takes exactly two arguments, found ','", (1, 9)),
        ("par x", "expected '(' after 'par', found 'x'", (1, 5)),
        ("def", "expected an expression, found 'def'", (1, 1)),
    ],
)
def test_expression_errors(text, message, pos):
    e = err(text)
    assert message in e.message, e.message
    assert where(e) == pos


@pytest.mark.parametrize(
    ("text", "name", "pos"),
    [
        ("let in = 1 in 2", "'in' is a reserved keyword", (1, 5)),
        ("let (a, let) = x in a", "'let' is a reserved keyword", (1, 9)),
        ("\\true -> 1", "'true' is a reserved keyword", (1, 2)),
        ("\\x par -> 1", "'par' is a reserved keyword", (1, 4)),
        ("letrec if x = 1 in 2", "'if' is a reserved keyword", (1, 8)),
        ("letrec f x of = 1 in 2", "'of' is a reserved keyword", (1, 12)),
    ],
)
def test_keywords_cannot_be_bound(text, name, pos):
    e = err(text)
    assert name in e.message and "cannot be bound" in e.message
    assert where(e) == pos


@pytest.mark.parametrize(
    ("alts", "message", "pos"),
    [
        ("inl a -> 1", "expected a second alternative 'inr' to go with 'inl', found '}'", (1, 24)),
        ("inl a -> 1; true -> 2", "expected an alternative 'inr' to go with 'inl', found 'true'", (1, 25)),
        ("[] -> 1; [] -> 2", "expected an alternative '::' to go with '[]', found '[]'", (1, 22)),
        ("true -> 1; false -> 2; true -> 3", "found a third one, 'true'", (1, 36)),
        ("x -> 1; y -> 2", "expected '::' in a list alternative", (1, 15)),
        ("1 -> 2", "expected a case alternative ('inl p ->', 'inr p ->', 'true ->'", (1, 13)),
        ("true 1", "expected '->' after the pattern of this alternative, found '1'", (1, 18)),
        ("true -> 1, false -> 2", "expected ';' or '}' to match the '{' at line 1, column 11", (1, 22)),
        ("inl a -> 1; inr b -> 2;", "expected a case alternative", (1, 37)),
    ],
)
def test_case_errors(alts, message, pos):
    e = err(f"case x of {{ {alts} }}")
    assert message in e.message, e.message
    assert where(e) == pos


def test_error_on_later_line_renders_caret():
    e = err("let a = 1 in\nlet b = 2\n  (a, b)")
    assert where(e) == (3, 9) and "expected 'in' to close this 'let', found end of input" in e.message
    text = "\\x ->\n  x +\n  * 2"
    e = err(text)
    assert where(e) == (3, 3)
    assert str(e).splitlines()[1:] == ["    * 2", "    ^"]


@pytest.mark.parametrize("prefix", [0, 30, 5000, 100_000])
def test_a_long_line_is_shown_as_a_window_around_the_caret(prefix: int):
    # One-line programs can be megabytes long; the message shows a bounded excerpt, caret aligned.
    text = "1 + " * (prefix // 4) + "@ + 2 + 3" + " + 4" * 2000
    e = err(text)
    _, shown, caret = str(e).splitlines()
    assert len(shown) <= 2 + 1 + EXCERPT + 1 and len(caret) <= len(shown)
    assert shown[caret.index("^")] == "@"
    assert shown.startswith("  …") == (prefix > EXCERPT) and shown.endswith("…")


# ---- nesting limits and hostile input -------------------------------------------------------


def test_nesting_up_to_the_limit_is_fine():
    n = MAX_DEPTH - 10
    assert parse_expr("(" * n + "x" + ")" * n) == x
    nodes, end = spine(parse_expr("f " + "(f " * n + "x" + ")" * n), A.App, "arg")
    assert len(nodes) == n + 1 and end == x and all(a.fn == A.Var("f") for a in nodes)


@pytest.mark.parametrize(
    ("text", "parse"),
    [
        ("(" * 10_000 + "x" + ")" * 10_000, parse_expr),
        ("(" * 10_000, parse_expr),
        ("[" * 10_000, parse_expr),
        ("\\x -> " * 10_000 + "x", parse_expr),
        ("let a = " * 10_000, parse_expr),
        ("if x then " * 10_000, parse_expr),
        ("case " * 10_000, parse_expr),
        ("par(" * 10_000, parse_expr),
        ("\\" + "(" * 10_000 + "x", parse_expr),
        ("\\(x : " + "[" * 10_000 + "R", parse_expr),
        ("(" * 10_000 + "R", parse_type),
        ("def main x = " + "(" * 10_000, parse_module),
    ],
    ids=lambda v: v[:12] if isinstance(v, str) else v.__name__,
)
def test_deep_nesting_is_a_parse_error(text, parse):
    e = err(text, parse)
    assert "nested too deeply" in e.message


def spine(node, cls: type, attr: str) -> tuple[list, object]:
    """The nodes of class `cls` met following `attr` from `node` (iteratively: the trees are deep),
    and the node where the chain ends."""
    nodes = []
    while isinstance(node, cls):
        nodes.append(node)
        node = getattr(node, attr)
    return nodes, node


N = 10_000
X = A.Var("x")


def _binops(e):
    nodes, end = spine(e, A.BinOp, "left")  # left-associative: ((x + x) + x) + ...
    return len(nodes) == N and end == X and all(n.op == "+" and n.right == X for n in nodes)


def _negs(e):
    nodes, end = spine(e, A.Neg, "arg")
    return len(nodes) == N and end == X


def _apps(e):
    nodes, end = spine(e, A.App, "fn")  # left-associative: ((f x) x) ...
    return len(nodes) == N and end == A.Var("f") and all(n.arg == X for n in nodes)


def _conses(e):
    nodes, end = spine(e, A.Cons, "tail")  # right-associative: x :: (x :: ...)
    return len(nodes) == N and end == A.ListLit([]) and all(n.head == X for n in nodes)


def _tuple(e):
    nodes, end = spine(e, A.PairE, "right")  # (x, x, x) is (x, (x, x))
    return len(nodes) == N and end == X and all(n.left == X for n in nodes)


def _lambdas(e):
    nodes, end = spine(e, A.Lam, "body")  # one lambda per parameter
    return len(nodes) == N and end == X and all(n.binder.pat == A.PVar("x") for n in nodes)


def _pattern(e):
    nodes, end = spine(e.binder.pat, A.PPair, "right")
    return len(nodes) == N and end == A.PVar("b") and all(n.left == A.PVar("a") for n in nodes) and e.body == X


def _lets(e):
    nodes, end = spine(e, A.Let, "body")
    return end == X and [n.pat for n in nodes] == [A.PVar(f"x{i}") for i in range(N)]


def _arrows(t):
    nodes, end = spine(t, T.Arrow, "cod")  # right-associative: R -> (R -> ...)
    return len(nodes) == N and end == T.R and all(n.dom == T.R for n in nodes)


def _sums(t):
    nodes, end = spine(t, T.Sum, "left")  # left-associative (docs/language.md)
    return len(nodes) == N and end == T.R and all(n.right == T.R for n in nodes)


def _defs(m):
    return [d.name for d in m.defs] == [f"f{i}" for i in range(2_000)] + ["main"]


LONG_CHAINS = [
    ("x" + " + x" * N, parse_expr, _binops),
    ("- " * N + "x", parse_expr, _negs),
    ("f" + " x" * N, parse_expr, _apps),
    ("x :: " * N + "[]", parse_expr, _conses),
    ("(" + "x, " * N + "x)", parse_expr, _tuple),
    ("\\" + "x " * N + "-> x", parse_expr, _lambdas),
    ("\\((" + "a, " * N + "b) : R) -> x", parse_expr, _pattern),
    ("".join(f"let x{i} = x in " for i in range(N)) + "x", parse_expr, _lets),
    ("R" + " -> R" * N, parse_type, _arrows),
    ("R" + " + R" * N, parse_type, _sums),
    ("".join(f"def f{i} x = x\n" for i in range(2_000)) + "def main x = x", parse_module, _defs),
]


@pytest.mark.parametrize(
    ("text", "parse", "shape"), LONG_CHAINS, ids=lambda v: v[:12] if isinstance(v, str) else v.__name__
)
def test_long_chains_of_10000_terms_parse(text, parse, shape):
    """Generated and unrolled code is long (issue 16): chains of operators, applications, tuples,
    lambdas, lets and definitions do not count as nesting. Each parses to the tree of its chain:
    every term there, associated as docs/language.md says."""
    assert shape(parse(text))


def test_trees_deeper_than_the_limit_are_a_parse_error():
    e = err("x" + " + x" * MAX_TREE_DEPTH, parse_expr)
    assert f"more than {MAX_TREE_DEPTH} levels deep" in e.message


def test_long_but_shallow_inputs_parse():
    n = 50_000
    e = parse_expr("[" + "1.5, " * n + "2]")
    assert isinstance(e, A.ListLit) and len(e.items) == n + 1
    e = parse_expr("x" + " + x" * (MAX_TREE_DEPTH - 2))
    assert isinstance(e, A.BinOp)


@pytest.mark.parametrize(
    ("text", "pos"),
    [
        ("__import__('os')", (1, 12)),
        ('"hello"', (1, 1)),
        ("f 'a'", (1, 3)),
        ("x; y", (1, 2)),
        ("\\\\\\", (1, 2)),
        ("\\\\x -> x", (1, 2)),
        ("\x00", (1, 1)),
        ("x\u200by", (1, 2)),
        ("λx -> x", (1, 1)),
        ("1 + 2 ?", (1, 7)),
        ("a.b", (1, 2)),
        ("{}", (1, 1)),
        ("x = 1", (1, 3)),
    ],
)
def test_hostile_small_inputs(text, pos):
    e = err(text)
    assert where(e) == pos
    assert "found" in e.message or "unexpected character" in e.message


def test_hostile_quote_message_names_the_character():
    e = err("__import__('os')")
    assert 'unexpected character "\'" (U+0027 APOSTROPHE)' in e.message


MEGABYTE = 1 << 20
MEGABYTE_INPUTS = {
    "random": "".join(random.Random(1).choices("abc ()[]{},;:+-*/<>=\\_0123456789.\n'\"$", k=MEGABYTE)),
    "random-valid-chars": "".join(random.Random(2).choices("fx1 ()[],+-*\n", k=MEGABYTE)),
    "long-sum": "x + " * (MEGABYTE // 4),
    "parens": "(" * MEGABYTE,
    "huge-real": "1" * MEGABYTE + ".0",
    "huge-int": "9" * MEGABYTE,
    "long-name": "x" * MEGABYTE + " $",
    "long-comment": "-- " + "x" * MEGABYTE,
}


@pytest.mark.parametrize("text", list(MEGABYTE_INPUTS.values()), ids=list(MEGABYTE_INPUTS))
def test_one_megabyte_inputs_fail_cleanly(text):
    with pytest.raises(ParseError):
        parse_module(text)


TOKENS = [
    "x", "f", "sin", "inl", "inr", "1", "2.5", "1e3", "true", "false", "(", ")", "[", "]", "{", "}", ",", ";", ":",
    "::", "->", "\\", "=", "+", "-", "*", "/", "<", "<=", "==", "_", "let", "letrec", "in", "if", "then", "else",
    "case", "of", "par", "def", "main", "R", "Z", "Bool", "--", "\n",
]  # fmt: skip


@settings(deadline=None)  # the default 100 examples; more only under `slow`
@given(st.lists(st.sampled_from(TOKENS), max_size=40))
def test_token_soup_parses_or_raises_parse_error(tokens):
    text = " ".join(tokens)
    for parse in (parse_expr, parse_module, parse_type):
        try:
            parse(text)
        except ParseError as e:
            assert e.span is not None and e.source == text
            str(e)


@settings(deadline=None)
@given(st.text(max_size=60))
def test_arbitrary_text_parses_or_raises_parse_error(text):
    for parse in (parse_expr, parse_module, parse_type):
        try:
            parse(text)
        except ParseError as e:
            assert e.line is not None and e.column is not None
            str(e)
