"""Pretty-printer: minimal parentheses, layout, and `parse(pretty(t)) == t` over random syntax trees."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advalidate.lang import ast as A
from advalidate.lang import types as T
from advalidate.lang.errors import ParseError
from advalidate.lang.parser import MAX_DEPTH, parse_expr, parse_module, parse_type
from advalidate.lang.pretty import WIDTH, pretty_expr, pretty_module, pretty_type

RESERVED = set(A.BUILTINS) | set(A.KEYWORDS) | {"_"}

# ---- strategies over well-formed syntax trees -----------------------------------------------

names = st.one_of(
    st.sampled_from(["x", "y", "f", "xs", "acc", "x'", "x_1", "_t", "R", "Bool", "lettuce", "inline", "iffy", "main"]),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_']{0,5}", fullmatch=True),
).filter(lambda n: n not in RESERVED)

types = st.recursive(
    st.sampled_from([T.R, T.Z, T.UNIT]),
    lambda t: st.one_of(
        st.builds(T.Pair, t, t), st.builds(T.Sum, t, t), st.builds(T.List, t), st.builds(T.Arrow, t, t)
    ),
    max_leaves=6,
)

patterns = st.recursive(
    st.one_of(st.builds(A.PVar, names), st.builds(A.PWild), st.builds(A.PUnit)),
    lambda p: st.builds(A.PPair, p, p),
    max_leaves=4,
)

binders = st.builds(A.Binder, patterns, st.none() | types)

ALT_PAIRS = [("inl", "inr"), ("true", "false"), ("nil", "cons")]


def alternatives(body: st.SearchStrategy) -> st.SearchStrategy:
    """Exactly two alternatives of matching kinds, in either order, with the right number of patterns."""

    @st.composite
    def build(draw):
        kinds = draw(st.sampled_from(ALT_PAIRS))
        if draw(st.booleans()):
            kinds = kinds[::-1]
        return [A.Alt(k, [draw(patterns) for _ in range(A.ALT_KINDS[k])], draw(body)) for k in kinds]

    return build()


leaves = st.one_of(
    st.builds(A.Var, names),
    st.builds(A.Builtin, st.sampled_from(A.BUILTINS)),
    st.builds(A.RealLit, st.floats(min_value=0.0, allow_nan=False, allow_infinity=False).map(abs)),
    st.builds(A.IntLit, st.integers(min_value=0, max_value=10**30)),
    st.builds(A.BoolLit, st.booleans()),
    st.builds(A.UnitLit),
    st.builds(lambda: A.ListLit([])),
)


def extend(e: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        st.builds(A.PairE, e, e),
        st.builds(A.ListLit, st.lists(e, min_size=1, max_size=3)),
        st.builds(A.Cons, e, e),
        st.builds(A.Lam, binders, e),
        st.builds(A.App, e, e),
        st.builds(A.Let, patterns, e, e),
        st.builds(A.LetRec, names, st.lists(binders, min_size=1, max_size=3), st.none() | types, e, e),
        st.builds(A.If, e, e, e),
        st.builds(A.Case, e, alternatives(e)),
        st.builds(A.BinOp, st.sampled_from(A.ARITH_OPS + A.CMP_OPS), e, e),
        st.builds(A.Neg, e),
        st.builds(A.Par, e, e),
    )


exprs = st.recursive(leaves, extend, max_leaves=25)


@st.composite
def modules(draw):
    if draw(st.booleans()):
        return A.Module(draw(exprs), [])
    fn_names = draw(st.lists(names.filter(lambda n: n != "main"), unique=True, max_size=3)) + ["main"]
    defs = [
        A.Def(n, draw(st.lists(binders, min_size=1, max_size=3)), draw(st.none() | types), draw(exprs))
        for n in fn_names
    ]
    return A.Module(None, defs)


# ---- round trips ----------------------------------------------------------------------------

FAST = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(exprs)
def test_expression_round_trip(e):
    text = pretty_expr(e)
    assert parse_expr(text) == e, text
    assert pretty_expr(parse_expr(text)) == text


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules())
def test_module_round_trip(m):
    text = pretty_module(m)
    assert parse_module(text) == m, text


@FAST
@given(types)
def test_type_round_trip(t):
    assert parse_type(pretty_type(t)) == t


@settings(max_examples=100, deadline=None)
@given(exprs)
def test_expression_round_trip_in_narrow_layout(e):
    """Force multi-line layout everywhere: a bigger tree is printed inside a deep indentation."""
    wrapped = e
    for i in range(WIDTH // 8):
        wrapped = A.Let(A.PVar(f"v{i}"), A.IntLit(i), wrapped)
    wrapped = A.Lam(A.Binder(A.PVar("z")), A.App(A.Var("g"), wrapped))
    text = pretty_expr(wrapped)
    assert parse_expr(text) == wrapped, text


# ---- spans of re-parsed trees ---------------------------------------------------------------


def _offsets(text: str) -> list[int]:
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    return starts


def _slice(text: str, starts: list[int], span: A.Span) -> str:
    return text[starts[span.line - 1] + span.col - 1 : starts[span.end_line - 1] + span.end_col - 1]


def _nodes_with_own_text(e: A.Expr):
    """Expression nodes whose span is a complete expression (not the inner part of `\\a b` or `(a, b, c)`)."""
    stack, inner = [e], set()
    while stack:
        node = stack.pop()
        if id(node) not in inner:
            yield node
        if isinstance(node, A.Lam) and isinstance(node.body, A.Lam):
            inner.add(id(node.body))
        if isinstance(node, A.PairE) and isinstance(node.right, A.PairE):
            inner.add(id(node.right))
        stack.extend(A.children(node))


@settings(max_examples=100, deadline=None)
@given(exprs)
def test_every_node_span_covers_its_own_source(e):
    text = pretty_expr(e)
    tree = parse_expr(text)
    starts = _offsets(text)
    for node in _nodes_with_own_text(tree):
        assert node.span is not None and node.span.file == "<input>"
        assert parse_expr(_slice(text, starts, node.span)) == node
    for node in A.children(tree) + [tree]:
        if isinstance(node, A.Case):
            for alt in node.alts:
                alt_text = _slice(text, starts, alt.span)
                assert alt_text.endswith(_slice(text, starts, alt.body.span))


# ---- robustness: damaged program text -------------------------------------------------------


@settings(deadline=None)
@given(exprs, st.data())
def test_damaged_text_parses_or_raises_parse_error(e, data):
    text = pretty_expr(e)
    pos = data.draw(st.integers(0, len(text)))
    junk = data.draw(st.sampled_from(["", "(", ")", "-", "--", "\\", ";", "in", "let", "'", "{", "$", "1e999"]))
    cut = data.draw(st.integers(0, 3))
    damaged = text[:pos] + junk + text[pos + cut :]
    try:
        parse_expr(damaged)
    except ParseError as err:
        assert err.line is not None and err.column is not None


# ---- minimal parentheses and specific output ------------------------------------------------

x, y, z, f, g = (A.Var(n) for n in "xyzfg")


def bin_(op, a, b):
    return A.BinOp(op, a, b)


@pytest.mark.parametrize(
    ("tree", "text"),
    [
        (bin_("*", bin_("+", x, y), z), "(x + y) * z"),
        (bin_("+", x, bin_("*", y, z)), "x + y * z"),
        (bin_("-", bin_("-", x, y), z), "x - y - z"),
        (bin_("-", x, bin_("-", y, z)), "x - (y - z)"),
        (bin_("/", x, bin_("*", y, z)), "x / (y * z)"),
        (bin_("<", bin_("+", x, y), z), "x + y < z"),
        (bin_("==", bin_("<", x, y), z), "(x < y) == z"),
        (bin_("<", x, bin_("<", y, z)), "x < (y < z)"),
        (A.Cons(x, A.Cons(y, z)), "x :: y :: z"),
        (A.Cons(A.Cons(x, y), z), "(x :: y) :: z"),
        (A.Cons(bin_("+", x, y), z), "x + y :: z"),
        (bin_("+", A.Cons(x, y), z), "(x :: y) + z"),
        (A.Neg(A.Neg(x)), "- -x"),
        (A.Neg(A.RealLit(1.5)), "-1.5"),
        (bin_("-", x, A.Neg(y)), "x - -y"),
        (bin_("*", A.Neg(x), y), "-x * y"),
        (A.Neg(bin_("*", x, y)), "-(x * y)"),
        (A.Neg(A.App(f, x)), "-f x"),
        (A.App(f, A.Neg(x)), "f (-x)"),
        (A.App(A.App(f, x), y), "f x y"),
        (A.App(f, A.App(g, x)), "f (g x)"),
        (A.App(A.Builtin("inl"), A.UnitLit()), "inl ()"),
        (A.App(A.Lam(A.Binder(A.PVar("a")), A.Var("a")), x), "(\\a -> a) x"),
        (A.App(f, A.Lam(A.Binder(A.PVar("a")), A.Var("a"))), "f (\\a -> a)"),
        (bin_("+", A.Let(A.PVar("a"), x, A.Var("a")), y), "(let a = x in a) + y"),
        (bin_("+", y, A.If(x, y, z)), "y + (if x then y else z)"),
        (A.Let(A.PVar("a"), A.Let(A.PVar("b"), x, y), z), "let a = let b = x in y in z"),
        (A.PairE(x, A.PairE(y, z)), "(x, y, z)"),
        (A.PairE(A.PairE(x, y), z), "((x, y), z)"),
        (A.ListLit([A.Lam(A.Binder(A.PVar("a")), x), bin_("+", x, y)]), "[\\a -> x, x + y]"),
        (A.Par(A.App(f, x), A.If(x, y, z)), "par(f x, if x then y else z)"),
        (A.RealLit(1e20), "1e+20"),
        (A.RealLit(2.5e-3), "0.0025"),
        (A.RealLit(3.0), "3.0"),
        (A.IntLit(7), "7"),
        (A.BoolLit(False), "false"),
        (A.ListLit([]), "[]"),
        (A.Lam(A.Binder(A.PVar("a")), A.Lam(A.Binder(A.PWild()), A.Lam(A.Binder(A.PUnit()), x))), "\\a _ () -> x"),
    ],
)
def test_minimal_parentheses(tree, text):
    assert pretty_expr(tree) == text
    assert parse_expr(text) == tree


def test_binders_with_annotations():
    lam = A.Lam(A.Binder(A.PPair(A.PVar("x"), A.PVar("y")), T.Pair(T.R, T.R)), A.Let(A.PVar("z"), x, z))
    assert pretty_expr(lam) == "\\((x, y) : (R, R)) -> let z = x in z"
    rec = A.LetRec("go", [A.Binder(A.PVar("n"), T.Z), A.Binder(A.PVar("k"))], T.Arrow(T.R, T.BOOL), x, y)
    assert pretty_expr(rec) == "letrec go (n : Z) k : R -> Bool = x in y"


def test_case_output():
    case = A.Case(x, [A.Alt("nil", [], y), A.Alt("cons", [A.PVar("h"), A.PWild()], A.Var("h"))])
    assert pretty_expr(case) == "case x of { [] -> y; h :: _ -> h }"
    case = A.Case(x, [A.Alt("inr", [A.PPair(A.PVar("a"), A.PUnit())], y), A.Alt("inl", [A.PWild()], z)])
    assert pretty_expr(case) == "case x of { inr (a, ()) -> y; inl _ -> z }"


def test_types_print_with_minimal_parentheses():
    assert (
        pretty_type(T.Arrow(T.Arrow(T.R, T.R), T.Sum(T.Sum(T.R, T.Z), T.List(T.BOOL)))) == "(R -> R) -> R + Z + [Bool]"
    )
    assert pretty_type(T.Pair(T.R, T.Pair(T.Z, T.UNIT))) == "(R, Z, ())"


def test_long_program_is_laid_out_on_several_lines():
    body = bin_("*", A.Var("acc"), A.App(A.Builtin("sin"), A.Var("long_variable_name")))
    for i in range(8):
        body = A.Let(A.PVar(f"v{i}"), bin_("+", A.Var("long_variable_name"), A.IntLit(i)), body)
    cond = A.If(bin_("<", x, A.IntLit(0)), body, A.Neg(body))
    prog = A.Lam(A.Binder(A.PVar("x"), T.R), cond)
    text = pretty_expr(prog)
    lines = text.split("\n")
    assert lines[0] == "\\(x : R) ->"
    assert lines[1] == "  if x < 0 then"
    assert lines[2] == "    let v7 = long_variable_name + 7 in"
    assert all(len(line) <= WIDTH for line in lines)
    assert parse_expr(text) == prog


def test_module_layout():
    defs = [
        A.Def("sq", [A.Binder(A.PVar("v"), T.R)], T.R, bin_("*", A.Var("v"), A.Var("v"))),
        A.Def("main", [A.Binder(A.PVar("v"))], None, A.App(A.Var("sq"), A.Var("v"))),
    ]
    text = pretty_module(A.Module(None, defs))
    assert text == "def sq (v : R) : R = v * v\n\ndef main v = sq v\n"
    assert pretty_module(A.Module(x, [])) == "x\n"


def test_seed_program_round_trips_from_text():
    src = "\\((x, y) : (R, R)) -> let z = x + y in x * z"
    assert pretty_expr(parse_expr(src)) == src


def test_deep_trees_at_the_limit_round_trip():
    chain = x
    for _ in range(MAX_DEPTH - 1):
        chain = A.App(f, chain)  # f (f (f ... x)): one bracket per level
    assert parse_expr(pretty_expr(chain)) == chain
    sums = x
    for _ in range(MAX_DEPTH - 1):
        sums = bin_("+", sums, y)
    assert parse_expr(pretty_expr(sums)) == sums
    lets = x
    for i in range(MAX_DEPTH - 1):
        lets = A.Let(A.PVar(f"v{i}"), A.IntLit(i), lets)
    assert parse_module(pretty_module(A.Module(lets, []))) == A.Module(lets, [])
