"""Pretty-printer: syntax trees back to source text that parses to an equal tree.

Parentheses are inserted only where the grammar's precedence levels require them. A `let`, `letrec`,
`if`, `case` or lambda that does not fit in WIDTH columns is broken over several lines; layout only
ever changes whitespace between tokens, so it cannot change the meaning.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from . import ast as A
from .deep import run_deep
from .types import Type, show_type

WIDTH = 100

# Precedence levels of the expression grammar: expr < cmp < cons < arith < term < unary < app < atom.
_EXPR, _CMP, _CONS, _ARITH, _TERM, _UNARY, _APP, _ATOM = range(8)
_BINOP_LEVELS = {
    "<": (_CMP, _CONS, _CONS), "<=": (_CMP, _CONS, _CONS), ">": (_CMP, _CONS, _CONS),
    ">=": (_CMP, _CONS, _CONS), "==": (_CMP, _CONS, _CONS),
    "+": (_ARITH, _ARITH, _TERM), "-": (_ARITH, _ARITH, _TERM),
    "*": (_TERM, _TERM, _UNARY), "/": (_TERM, _TERM, _UNARY),
}  # fmt: skip
_BLOCKS = (A.Lam, A.Let, A.LetRec, A.If, A.Case)
_ALT_HEADS = {"true": "true", "false": "false", "nil": "[]"}

Result = TypeVar("Result")


def pretty_type(t: Type) -> str:
    """A type in the concrete syntax (delegates to `types.show_type`)."""
    return show_type(t)


def pretty_expr(e: A.Expr) -> str:
    """An expression as source text; `parse_expr(pretty_expr(e)) == e`."""
    return _deep_safe(_show, e, _EXPR, 0, False)


def pretty_module(m: A.Module) -> str:
    """A module as the text of a source file (ending in a newline)."""
    if m.expr is not None:
        return pretty_expr(m.expr) + "\n"
    return "\n\n".join(_deep_safe(_definition, d) for d in m.defs) + "\n"


def _deep_safe(fn: Callable[..., Result], *args: object) -> Result:
    """Deep trees (the parser allows depth MAX_DEPTH) may need more stack than the caller has left."""
    try:
        return fn(*args)
    except RecursionError:
        return run_deep(fn, *args)


def pretty_pattern(p: A.Pattern) -> str:
    """A pattern; tuples `(a, (b, c))` print as `(a, b, c)`."""
    if isinstance(p, A.PVar):
        return p.name
    if isinstance(p, A.PWild):
        return "_"
    if isinstance(p, A.PUnit):
        return "()"
    items = [p.left]
    rest = p.right
    while isinstance(rest, A.PPair):
        items.append(rest.left)
        rest = rest.right
    items.append(rest)
    return "(" + ", ".join(pretty_pattern(i) for i in items) + ")"


def pretty_binder(b: A.Binder) -> str:
    """A parameter: a bare pattern, or `(pat : type)` when annotated."""
    if b.annot is None:
        return pretty_pattern(b.pat)
    return f"({pretty_pattern(b.pat)} : {show_type(b.annot)})"


def _definition(d: A.Def) -> str:
    head = _header("def", d.name, d.binders, d.result)
    body = _show(d.body, _EXPR, 2, False)
    if "\n" not in body and len(head) + 3 + len(body) <= WIDTH:
        return f"{head} = {body}"
    return f"{head} =\n  {body}"


def _header(keyword: str, name: str, binders: list[A.Binder], result: Type | None) -> str:
    text = " ".join([keyword, name] + [pretty_binder(b) for b in binders])
    return text if result is None else f"{text} : {show_type(result)}"


def _show(e: A.Expr, prec: int, ind: int, flat: bool) -> str:
    """`e` in a context that needs precedence `prec`; continuation lines are indented absolutely."""
    level = _EXPR if isinstance(e, _BLOCKS) else _level(e)
    if level >= prec:
        return _block(e, ind, flat) if level == _EXPR else _simple(e, ind, flat)
    inner = _block(e, ind + 1, flat) if level == _EXPR else _simple(e, ind + 1, flat)
    return f"({inner})"


def _level(e: A.Expr) -> int:
    if isinstance(e, A.BinOp):
        return _BINOP_LEVELS[e.op][0]
    if isinstance(e, A.Cons):
        return _CONS
    if isinstance(e, A.Neg):
        return _UNARY
    if isinstance(e, (A.App, A.Index, A.Build, A.Gather, A.ArrayPrim, A.Deriv)):
        return _APP
    return _ATOM


def _simple(e: A.Expr, ind: int, flat: bool) -> str:
    if isinstance(e, A.BinOp):
        _, lp, rp = _BINOP_LEVELS[e.op]
        return f"{_show(e.left, lp, ind, flat)} {e.op} {_show(e.right, rp, ind, flat)}"
    if isinstance(e, A.Cons):
        return f"{_show(e.head, _ARITH, ind, flat)} :: {_show(e.tail, _CONS, ind, flat)}"
    if isinstance(e, A.Neg):
        arg = _show(e.arg, _UNARY, ind, flat)
        return "- " + arg if arg.startswith("-") else "-" + arg
    if isinstance(e, A.App):
        return f"{_show(e.fn, _APP, ind, flat)} {_show(e.arg, _ATOM, ind, flat)}"
    if isinstance(e, (A.Var, A.Builtin)):
        return e.name
    if isinstance(e, A.RealLit):
        return repr(float(e.value))
    if isinstance(e, A.IntLit):
        return str(e.value)
    if isinstance(e, A.BoolLit):
        return "true" if e.value else "false"
    if isinstance(e, A.UnitLit):
        return "()"
    if isinstance(e, A.PairE):
        return "(" + ", ".join(_show(i, _EXPR, ind + 1, flat) for i in _tuple_items(e)) + ")"
    if isinstance(e, A.ListLit):
        return "[" + ", ".join(_show(i, _EXPR, ind + 1, flat) for i in e.items) + "]"
    if isinstance(e, A.Par):
        return f"par({_show(e.left, _EXPR, ind + 4, flat)}, {_show(e.right, _EXPR, ind + 4, flat)})"
    if isinstance(e, A.ArrayLit):
        return "[| " + ", ".join(_show(i, _EXPR, ind + 3, flat) for i in e.items) + (" |]" if e.items else "|]")
    if isinstance(e, A.Index):
        return f"{_show(e.arr, _APP, ind, flat)} ! {_exprs(e.idxs, ind, flat)}"
    if isinstance(e, A.Build):
        if e.one:
            return f"build1 {e.shape[0]} (\\{e.params[0]} -> {_show(e.body, _EXPR, ind + 2, flat)})"
        head = f"build {_ints(e.shape)} (\\[{', '.join(e.params)}] -> "
        return head + _show(e.body, _EXPR, ind + 2, flat) + ")"
    if isinstance(e, A.Gather):
        arr = _show(e.arr, _ATOM, ind, flat)
        fn = f"(\\[{', '.join(e.params)}] -> {_exprs(e.idxs, ind, flat)})"
        return f"{e.kind} {_ints(e.shape)} {arr} {fn}"
    if isinstance(e, A.ArrayPrim):
        static = [] if not e.static and e.name != "tr" and e.name != "reshape" else [_ints(e.static)]
        if e.name == "replicate":
            static = [str(e.static[0])]
        return " ".join([e.name, *static, *(_show(a, _ATOM, ind, flat) for a in e.args)])
    if isinstance(e, A.Deriv):
        return " ".join([e.op, *(_show(a, _ATOM, ind, flat) for a in (e.fn, *e.args))])
    raise TypeError(f"not an expression: {e!r}")


def _ints(ks: list[int]) -> str:
    return "[" + ", ".join(map(str, ks)) + "]"


def _exprs(items: list[A.Expr], ind: int, flat: bool) -> str:
    return "[" + ", ".join(_show(i, _EXPR, ind + 1, flat) for i in items) + "]"


def _tuple_items(e: A.PairE) -> list[A.Expr]:
    items = [e.left]
    rest = e.right
    while isinstance(rest, A.PairE):
        items.append(rest.left)
        rest = rest.right
    items.append(rest)
    return items


def _block(e: A.Expr, ind: int, flat: bool) -> str:
    """A lambda / let / letrec / if / case: on one line when it fits, else broken over lines."""
    if flat:
        return _block_flat(e)
    if not _larger_than(e, WIDTH - ind):  # every node prints at least one character
        one_line = _block_flat(e)
        if ind + len(one_line) <= WIDTH and "\n" not in one_line:
            return one_line
    if isinstance(e, A.Lam):
        binders, body = _lambda_parts(e)
        return f"\\{binders} ->\n{_pad(ind + 2)}{_show(body, _EXPR, ind + 2, False)}"
    if isinstance(e, A.Let):
        return _binding(f"let {pretty_pattern(e.pat)}", e.rhs, e.body, ind)
    if isinstance(e, A.LetRec):
        return _binding(_header("letrec", e.name, e.binders, e.result), e.rhs, e.body, ind)
    if isinstance(e, A.If):
        return _if_lines(e, ind)
    return _case_lines(e, ind)


def _block_flat(e: A.Expr) -> str:
    if isinstance(e, A.Lam):
        binders, body = _lambda_parts(e)
        return f"\\{binders} -> {_show(body, _EXPR, 0, True)}"
    if isinstance(e, A.Let):
        return f"let {pretty_pattern(e.pat)} = {_show(e.rhs, _EXPR, 0, True)} in {_show(e.body, _EXPR, 0, True)}"
    if isinstance(e, A.LetRec):
        head = _header("letrec", e.name, e.binders, e.result)
        return f"{head} = {_show(e.rhs, _EXPR, 0, True)} in {_show(e.body, _EXPR, 0, True)}"
    if isinstance(e, A.If):
        parts = (_show(x, _EXPR, 0, True) for x in (e.cond, e.then, e.orelse))
        return "if {} then {} else {}".format(*parts)
    alts = "; ".join(_alt(a, 0, True) for a in e.alts)
    return f"case {_show(e.scrut, _EXPR, 0, True)} of {{ {alts} }}"


def _larger_than(e: A.Expr, limit: int) -> bool:
    """Whether `e` has more than `limit` nodes, looking at no more than limit + 1 of them (so that
    deciding the layout of a long chain of lets costs O(WIDTH) per level, not its length)."""
    n, stack = 0, [e]
    while stack:
        n += 1
        if n > limit:
            return True
        stack.extend(A.children(stack.pop()))
    return False


def _lambda_parts(e: A.Lam) -> tuple[str, A.Expr]:
    """`\\a -> \\b -> body` prints as `\\a b -> body`."""
    binders = [pretty_binder(e.binder)]
    body = e.body
    while isinstance(body, A.Lam):
        binders.append(pretty_binder(body.binder))
        body = body.body
    return " ".join(binders), body


def _binding(head: str, rhs: A.Expr, body: A.Expr, ind: int) -> str:
    rhs_text = _show(rhs, _EXPR, ind + 2, False)
    body_text = _show(body, _EXPR, ind, False)
    if "\n" not in rhs_text and ind + len(head) + len(rhs_text) + 6 <= WIDTH:
        return f"{head} = {rhs_text} in\n{_pad(ind)}{body_text}"
    return f"{head} =\n{_pad(ind + 2)}{rhs_text}\n{_pad(ind)}in\n{_pad(ind)}{body_text}"


def _if_lines(e: A.If, ind: int) -> str:
    cond = _show(e.cond, _EXPR, ind + 3, False)
    then = _show(e.then, _EXPR, ind + 2, False)
    if isinstance(e.orelse, A.If):
        orelse = _show(e.orelse, _EXPR, ind, False)
        return f"if {cond} then\n{_pad(ind + 2)}{then}\n{_pad(ind)}else {orelse}"
    orelse = _show(e.orelse, _EXPR, ind + 2, False)
    return f"if {cond} then\n{_pad(ind + 2)}{then}\n{_pad(ind)}else\n{_pad(ind + 2)}{orelse}"


def _case_lines(e: A.Case, ind: int) -> str:
    scrut = _show(e.scrut, _EXPR, ind + 5, False)
    alts = f";\n{_pad(ind + 2)}".join(_alt(a, ind + 2, False) for a in e.alts)
    return f"case {scrut} of {{\n{_pad(ind + 2)}{alts}\n{_pad(ind)}}}"


def _alt(a: A.Alt, ind: int, flat: bool) -> str:
    if a.kind in ("inl", "inr"):
        head = f"{a.kind} {pretty_pattern(a.pats[0])}"
    elif a.kind == "cons":
        head = f"{pretty_pattern(a.pats[0])} :: {pretty_pattern(a.pats[1])}"
    else:
        head = _ALT_HEADS[a.kind]
    body = _show(a.body, _EXPR, ind + 2, flat)
    if flat or ("\n" not in body and ind + len(head) + len(body) + 4 <= WIDTH):
        return f"{head} -> {body}"
    return f"{head} ->\n{_pad(ind + 2)}{body}"


def _pad(n: int) -> str:
    return " " * n
