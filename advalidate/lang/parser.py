"""Hand-written recursive-descent parser (docs/language.md, "The language (contract)").

Binary operators are parsed by one iterative operator-precedence loop, so long operator, `::`,
application and unary-minus chains cost no Python recursion; real nesting (brackets, `let`, `\\`, ...)
is bounded by MAX_DEPTH, and so is the depth of the resulting tree, because every later pass
(type inference, interpreters, engines, the pretty-printer) walks it recursively.

Two small extensions of the grammar make every syntax tree printable: a binder may also be `_`,
`()` or a parenthesised pattern `(p)`, and a pattern may be parenthesised.

A binder shadows a built-in name or an array form of the same name, as in ML and Haskell, so adding
a built-in never breaks a program that used its name: the parser tracks which reserved names are
bound in the current scope (`_Parser.shadowed`) and reads such a name there as a variable.

Over 800 lines on purpose: it is one recursive-descent parser, whose `_Parser` methods call each
other for nested expressions, patterns and types and share the depth limits above.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterator
from typing import TypeVar

from . import ast as A
from . import types as T
from .deep import run_deep
from .errors import ParseError
from .gc_pause import paused_gc
from .lexer import Token, TokenStream

MAX_DEPTH = 200  # nesting of brackets and blocks in the text
# Depth of the syntax tree: long chains of operators, applications, tuples and lets (generated and
# unrolled code) nest one level per term. Every later pass walks the tree on a large-stack thread
# (`deep.run_deep`), so this bound is about memory, not Python's recursion limit.
MAX_TREE_DEPTH = 50_000

_BINARY: dict[str, tuple[int, str]] = {
    "<": (1, "none"), "<=": (1, "none"), ">": (1, "none"), ">=": (1, "none"), "==": (1, "none"),
    "::": (2, "right"),
    "+": (3, "left"), "-": (3, "left"),
    "*": (4, "left"), "/": (4, "left"),
}  # fmt: skip
_ATOM_START = frozenset({"NAME", "INT", "REAL", "true", "false", "(", "[", "[|", "par"})
_BINDER_START = frozenset({"NAME", "(", "_"})
_BLOCK_START = {"\\": "a lambda", "let": "a 'let'", "letrec": "a 'letrec'", "if": "an 'if'", "case": "a 'case'"}
_ALT_PAIRS = {"inl": "inr", "inr": "inl", "true": "false", "false": "true", "nil": "cons", "cons": "nil"}
_ALT_SHOWN = {"inl": "'inl'", "inr": "'inr'", "true": "'true'", "false": "'false'", "nil": "'[]'", "cons": "'::'"}
_TYPE_NAMES = {"R": T.R, "Z": T.Z, "Bool": T.BOOL}
_BUILTINS = frozenset(A.BUILTINS)
_FORMS = frozenset(A.ARRAY_FORMS + A.DERIV_FORMS)
# The arguments of each form (array forms, derivative operators): "k" an integer literal, "ks" a
# list of them, "t" an atom,
# "fn1" `(\\i -> t)`, "fn" `(\\[i1, ...] -> t)`, "ix" `(\\[i1, ...] -> [j1, ...])`.
_FORM_ARGS: dict[str, tuple[str, ...]] = {
    "build1": ("k", "fn1"), "build": ("ks", "fn"),
    "gather": ("ks", "t", "ix"), "scatter": ("ks", "t", "ix"), "scatterMax": ("ks", "t", "ix"),
    "sumOuter": ("t",), "maxOuter": ("t",), "minOuter": ("t",), "replicate": ("k", "t"),
    "tr": ("ks", "t"), "reshape": ("ks", "t"), "cond": ("t", "t", "t"), "div": ("t", "t"), "mod": ("t", "t"),
    "grad": ("t", "t"), "vjp": ("t", "t", "t"), "jvp": ("t", "t", "t"),
}  # fmt: skip
_FORM_USAGE = {
    "build1": "build1 k (\\i -> t)", "build": "build [k1, ...] (\\[i1, ...] -> t)",
    "gather": "gather [k1, ...] t (\\[i1, ...] -> [j1, ...])",
    "scatter": "scatter [k1, ...] t (\\[i1, ...] -> [j1, ...])",
    "scatterMax": "scatterMax [k1, ...] t (\\[i1, ...] -> [j1, ...])",
    "sumOuter": "sumOuter t", "maxOuter": "maxOuter t", "minOuter": "minOuter t", "replicate": "replicate k t",
    "tr": "tr [p1, ...] t", "reshape": "reshape [k1, ...] t", "cond": "cond c s t", "div": "div a b",
    "mod": "mod a b", "grad": "grad f x", "vjp": "vjp f x dy", "jvp": "jvp f x dx",
}  # fmt: skip
_KEYWORDS = frozenset(A.KEYWORDS)
_ITEM_END = frozenset({",", "]", "|]"})  # what may follow a complete element of a literal

Result = TypeVar("Result")


class _Parser:
    """Parser state: the token list, the cursor and the current nesting depth."""

    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.file = filename
        self.toks = TokenStream(text, filename)
        self.i = 0
        self.depth = 0
        # Built-in and form names bound in the current scope, with how many binders bind each.
        self.shadowed: dict[str, int] = {}

    # ---- token helpers --------------------------------------------------------------------

    def peek(self) -> Token:
        return self.toks[self.i]  # never past the end: `advance` stops at the final EOF token

    def peek_next(self) -> Token:
        return self.toks[self.i + 1]

    def advance(self) -> Token:
        tok = self.toks[self.i]
        if tok.kind != "EOF":
            self.i += 1
        return tok

    def accept(self, kind: str) -> Token | None:
        return self.advance() if self.peek().kind == kind else None

    def expect(self, kind: str, context: str = "") -> Token:
        tok = self.peek()
        if tok.kind != kind:
            shown = "a name" if kind == "NAME" else f"'{kind}'"
            raise self.error(f"expected {shown}{context}, found {tok.describe()}", tok)
        return self.advance()

    def error(self, message: str, where: Token | A.Span | None = None) -> ParseError:
        span = where.span if isinstance(where, Token) else where
        return ParseError(message, span or self.peek().span, self.text)

    def span_from(self, start: A.Span) -> A.Span:
        """Span from `start` to the end of the last consumed token."""
        end = self.toks[self.i - 1].span if self.i > 0 else start
        return A.Span(self.file, start.line, start.col, end.end_line, end.end_col)

    def enter(self) -> None:
        """Count one level of nesting (the caller decrements), refusing more than MAX_DEPTH."""
        if self.depth >= MAX_DEPTH:
            raise self.error(f"input nested too deeply (more than {MAX_DEPTH} levels of brackets or blocks)")
        self.depth += 1

    def nested(self, parse: Callable[[], Result]) -> Result:
        self.enter()
        try:
            return parse()
        finally:
            self.depth -= 1

    def finish(self, what: str) -> None:
        tok = self.peek()
        if tok.kind != "EOF":
            raise self.error(f"expected {what}, found {tok.describe()}{_block_hint(tok)}", tok)

    # ---- types ------------------------------------------------------------------------------

    def type_(self) -> T.Type:
        return self.nested(self._arrow_type)

    def _arrow_type(self) -> T.Type:
        parts = [self._sum_type()]
        while self.accept("->"):
            parts.append(self._sum_type())
        result = parts.pop()
        for dom in reversed(parts):
            result = T.Arrow(dom, result)
        return result

    def _sum_type(self) -> T.Type:
        result = self._atom_type()
        while self.accept("+"):
            result = T.Sum(result, self._atom_type())
        return result

    def _atom_type(self) -> T.Type:
        tok = self.peek()
        if tok.kind == "NAME":
            if tok.text == "Array":
                self.advance()
                shape = self._int_list("the shape of 'Array'")
                elem_tok = self.peek()
                elem = self._atom_type()
                if elem not in (T.R, T.Z, T.BOOL):
                    raise self.error("array elements are R, Z or Bool (arrays are regular, not nested)", elem_tok)
                return T.array_type(shape, elem)
            if tok.text not in _TYPE_NAMES:
                raise self.error(
                    f"unknown type '{tok.text}': types are R, Z, Bool, (), [T], (A, B), A + B, A -> B "
                    "and Array [k1, ...] R",
                    tok,
                )
            self.advance()
            return _TYPE_NAMES[tok.text]
        if tok.kind == "[":
            self.advance()
            elem = self.type_()
            self._close("]", tok)
            return T.List(elem)
        if tok.kind == "(":
            return self._paren_type()
        raise self.error(f"expected a type, found {tok.describe()}", tok)

    def _paren_type(self) -> T.Type:
        opener = self.advance()
        if self.accept(")"):
            return T.UNIT
        items = [self.type_()]
        while self.accept(","):
            items.append(self.type_())
        self._close(")", opener)
        return _fold_right(items, T.Pair)

    def _close(self, kind: str, opener: Token) -> Token:
        tok = self.peek()
        if tok.kind != kind:
            where = f"line {opener.span.line}, column {opener.span.col}"
            found = f"{tok.describe()}{_block_hint(tok)}"
            raise self.error(f"expected '{kind}' to match the '{opener.text}' at {where}, found {found}", tok)
        return self.advance()

    # ---- patterns and binders ---------------------------------------------------------------

    def pattern(self) -> A.Pattern:
        return self.nested(self._pattern)

    def _pattern(self) -> A.Pattern:
        tok = self.peek()
        if tok.kind == "NAME":
            return A.PVar(self.bindable_name(), span=tok.span)
        if tok.kind == "_":
            self.advance()
            return A.PWild(span=tok.span)
        if tok.kind == "(":
            return self._paren_pattern()
        self.refuse_keyword(tok)
        raise self.error(f"expected a pattern (a name, '_', '()' or a tuple), found {tok.describe()}", tok)

    def _paren_pattern(self) -> A.Pattern:
        opener = self.advance()
        if self.accept(")"):
            return A.PUnit(span=self.span_from(opener.span))
        items = [self.pattern()]
        while self.accept(","):
            items.append(self.pattern())
        self._close(")", opener)
        return self._tuple(items, A.PPair, opener)

    def bindable_name(self) -> str:
        """Consume a NAME that is about to be bound; keywords are reserved (built-in names are not:
        a binder shadows them, `bind`)."""
        tok = self.peek()
        self.refuse_keyword(tok)
        if tok.kind != "NAME":
            raise self.error(f"expected a name, found {tok.describe()}", tok)
        return self.advance().text

    def bind(self, names: list[str]) -> list[str]:
        """Bring `names` into scope (those that shadow a built-in or a form count); `unbind` ends it."""
        reserved = [n for n in names if n in _BUILTINS or n in _FORMS]
        for n in reserved:
            self.shadowed[n] = self.shadowed.get(n, 0) + 1
        return reserved

    def unbind(self, reserved: list[str]) -> None:
        for n in reserved:
            left = self.shadowed[n] - 1
            if left:
                self.shadowed[n] = left
            else:
                del self.shadowed[n]

    def refuse_keyword(self, tok: Token) -> None:
        if tok.kind in _KEYWORDS:
            raise self.error(f"'{tok.text}' is a reserved keyword: it cannot be bound", tok)

    def binder(self) -> A.Binder:
        """`x`, `(p : T)`, `(p, q, ...)`, and the printable extensions `_`, `()` and `(p)`."""
        tok = self.peek()
        if tok.kind != "(":
            pat = self.pattern()
            return A.Binder(pat, None, span=pat.span)
        if self.peek_next().kind == ")":
            pat = self.pattern()
            return A.Binder(pat, None, span=pat.span)
        self.advance()
        pat = self.pattern()
        if self.accept(":"):
            annot = self.type_()
            self._close(")", tok)
            return A.Binder(pat, annot, span=self.span_from(tok.span))
        items = [pat]
        while self.accept(","):
            items.append(self.pattern())
        self._close(")", tok)
        pat = self._tuple(items, A.PPair, tok)
        return A.Binder(pat, None, span=pat.span)

    def binders(self, after: str) -> list[A.Binder]:
        """One or more binders; `after` names what they follow, for the error message."""
        tok = self.peek()
        self.refuse_keyword(tok)
        if tok.kind not in _BINDER_START:
            raise self.error(f"expected a parameter after {after}, found {tok.describe()}", tok)
        result = [self.binder()]
        while self.peek().kind in _BINDER_START or self.peek().kind in _KEYWORDS:
            self.refuse_keyword(self.peek())
            result.append(self.binder())
        return result

    # ---- expressions ------------------------------------------------------------------------

    def expr(self) -> A.Expr:
        self.enter()  # inlined rather than `nested`: every Python frame per nesting level counts
        try:
            block = self._BLOCKS.get(self.peek().kind)
            return block(self) if block else self._operators()
        finally:
            self.depth -= 1

    def _lambda(self) -> A.Expr:
        start = self.advance()
        binders = self.binders("'\\'")
        self.expect("->", " after the lambda's parameters")
        scope = self.bind(_binder_names(binders))
        body = self.expr()
        self.unbind(scope)
        for b in reversed(binders):
            body = A.Lam(b, body, span=self.span_from(b.span))
        body.span = self.span_from(start.span)
        return body

    def _let(self) -> A.Expr:
        """`let p = e in body`; a chain of `let`s / `letrec`s is parsed in a loop, so its length
        does not count as nesting (generated and unrolled code binds thousands in a row)."""
        heads: list[tuple[Token, Callable[[A.Expr, A.Span], A.Expr]]] = []
        scope: list[str] = []
        while self.peek().kind in ("let", "letrec"):
            start = self.peek()
            heads.append((start, self._let_head(scope) if start.kind == "let" else self._letrec_head(scope)))
        body = self.expr()
        self.unbind(scope)
        for start, make in reversed(heads):
            body = make(body, self.span_from(start.span))
        return body

    _letrec = _let

    def _let_head(self, scope: list[str]) -> Callable[[A.Expr, A.Span], A.Expr]:
        """`let p = rhs in`: `p` scopes over what follows (appended to `scope`), not over `rhs`."""
        self.advance()
        pat = self.pattern()
        tok = self.peek()
        if tok.kind != "=":
            hint = ""
            if tok.kind in _BINDER_START:
                hint = "; to define a function write 'letrec f x = ...' or 'let f = \\x -> ...'"
            raise self.error(f"expected '=' after the pattern of this 'let', found {tok.describe()}{hint}", tok)
        self.advance()
        rhs = self.expr()
        self.expect("in", " to close this 'let'")
        scope += self.bind(_pattern_names(pat))
        return lambda body, span: A.Let(pat, rhs, body, span=span)

    def _letrec_head(self, scope: list[str]) -> Callable[[A.Expr, A.Span], A.Expr]:
        """`letrec f ps = rhs in`: `f` scopes over `rhs` and what follows, `ps` over `rhs`."""
        self.advance()
        tok = self.peek()
        if tok.kind not in _KEYWORDS and tok.kind != "NAME":
            raise self.error(f"expected a function name after 'letrec', found {tok.describe()}", tok)
        name = self.bindable_name()
        scope += self.bind([name])
        binders = self.binders(f"'letrec {name}'")
        result = self.type_() if self.accept(":") else None
        self.expect("=", f" after the parameters of '{name}'")
        params = self.bind(_binder_names(binders))
        rhs = self.expr()
        self.unbind(params)
        self.expect("in", " to close this 'letrec'")
        return lambda body, span: A.LetRec(name, binders, result, rhs, body, span=span)

    def _if(self) -> A.Expr:
        start = self.advance()
        cond = self.expr()
        self.expect("then", " after the condition of this 'if'")
        then = self.expr()
        self.expect("else", " to go with this 'if ... then'")
        orelse = self.expr()
        return A.If(cond, then, orelse, span=self.span_from(start.span))

    def _case(self) -> A.Expr:
        start = self.advance()
        scrut = self.expr()
        self.expect("of", " after the scrutinee of this 'case'")
        brace = self.expect("{", " to open the alternatives of this 'case'")
        alts = [self.alt()]
        while self.accept(";"):
            alts.append(self.alt())
        tok = self.peek()
        if tok.kind != "}":
            where = f"line {brace.span.line}, column {brace.span.col}"
            raise self.error(
                f"expected ';' or '}}' to match the '{{' at {where} after a case alternative, found {tok.describe()}",
                tok,
            )
        self.advance()
        span = self.span_from(start.span)
        self._check_alts(alts, span)
        return A.Case(scrut, alts, span=span)

    def _check_alts(self, alts: list[A.Alt], case_span: A.Span) -> None:
        """A case has exactly two alternatives: inl/inr, true/false or []/:: (in either order)."""
        first = alts[0]
        want = _ALT_PAIRS[first.kind]
        if len(alts) == 1:
            raise self.error(
                f"expected a second alternative {_ALT_SHOWN[want]} to go with {_ALT_SHOWN[first.kind]}, "
                "found '}': a case has exactly two alternatives",
                A.Span(self.file, case_span.end_line, case_span.end_col - 1, case_span.end_line, case_span.end_col),
            )
        second = alts[1]
        if second.kind != want:
            raise self.error(
                f"expected an alternative {_ALT_SHOWN[want]} to go with {_ALT_SHOWN[first.kind]}, "
                f"found {_ALT_SHOWN[second.kind]}",
                second.span,
            )
        if len(alts) > 2:
            raise self.error(
                f"a case has exactly two alternatives, {_ALT_SHOWN[first.kind]} and {_ALT_SHOWN[want]}; "
                f"found a third one, {_ALT_SHOWN[alts[2].kind]}",
                alts[2].span,
            )

    _BLOCKS: dict[str, Callable[[_Parser], A.Expr]] = {
        "\\": _lambda,
        "let": _let,
        "letrec": _letrec,
        "if": _if,
        "case": _case,
    }

    def alt(self) -> A.Alt:
        tok = self.peek()
        if tok.kind == "NAME" and tok.text in ("inl", "inr"):
            self.advance()
            pats = [self.pattern()]
            kind = tok.text
        elif tok.kind in ("true", "false"):
            self.advance()
            pats, kind = [], tok.kind
        elif tok.kind == "[":
            self.advance()
            self._close("]", tok)
            pats, kind = [], "nil"
        elif tok.kind in _BINDER_START:
            head = self.pattern()
            self.expect("::", " in a list alternative 'x :: xs -> ...'")
            pats, kind = [head, self.pattern()], "cons"
        else:
            raise self.error(
                "expected a case alternative ('inl p ->', 'inr p ->', 'true ->', 'false ->', '[] ->' or "
                f"'p :: p ->'), found {tok.describe()}",
                tok,
            )
        self.expect("->", " after the pattern of this alternative")
        scope = self.bind([n for p in pats for n in _pattern_names(p)])
        body = self.expr()
        self.unbind(scope)
        return A.Alt(kind, pats, body, span=self.span_from(tok.span))

    def _operators(self) -> A.Expr:
        """cmp / cons / arith / term / unary levels, by operator precedence without recursion."""
        operands: list[A.Expr] = [self._unary(None)]
        ops: list[Token] = []
        while self.peek().kind in _BINARY:
            tok = self.advance()
            prec, assoc = _BINARY[tok.kind]
            while ops and _reduces(ops[-1], prec, assoc):
                self._reduce(operands, ops)
            if assoc == "none" and ops and _BINARY[ops[-1].kind][0] == prec:
                raise self.error(
                    f"comparisons do not chain: parenthesise one side of '{ops[-1].text}' or '{tok.text}'", tok
                )
            ops.append(tok)
            operands.append(self._unary(tok))
        while ops:
            self._reduce(operands, ops)
        return operands[0]

    def _reduce(self, operands: list[A.Expr], ops: list[Token]) -> None:
        op = ops.pop()
        right = operands.pop()
        left = operands.pop()
        span = _join(left.span, right.span)
        if op.kind == "::":
            operands.append(A.Cons(left, right, span=span))
        else:
            operands.append(A.BinOp(op.kind, left, right, span=span))

    def _unary(self, after: Token | None) -> A.Expr:
        """`'-' unary | app`, with `app ::= atom atom*` (left-associative application)."""
        minuses: list[Token] = []
        while self.peek().kind == "-":
            after = self.advance()
            minuses.append(after)
        result = self._atom(after)
        while self.peek().kind in _ATOM_START:
            arg = self._atom(None)
            result = A.App(result, arg, span=_join(result.span, arg.span))
        while self.peek().kind == "!":
            self.advance()
            idxs = self._expr_list("[", "]", "an index after '!'")
            result = A.Index(result, idxs, span=self.span_from(result.span))
        for tok in reversed(minuses):
            result = A.Neg(result, span=_join(tok.span, result.span))
        return result

    def _atom(self, after: Token | None) -> A.Expr:
        tok = self.peek()
        kind = tok.kind
        if kind == "NAME":
            if tok.text in _FORMS and tok.text not in self.shadowed:
                return self.nested(self._form)
            self.advance()
            node = A.Builtin if tok.text in _BUILTINS and tok.text not in self.shadowed else A.Var
            return node(tok.text, span=tok.span)
        if kind == "[|":
            opener = tok
            items = self.nested(lambda: self._expr_list("[|", "|]", "an array literal"))
            return A.ArrayLit(items, span=self.span_from(opener.span))
        if kind == "INT":
            self.advance()
            return A.IntLit(tok.value, span=tok.span)
        if kind == "REAL":
            self.advance()
            return A.RealLit(tok.value, span=tok.span)
        if kind in ("true", "false"):
            self.advance()
            return A.BoolLit(kind == "true", span=tok.span)
        if kind == "(":
            return self._paren_expr()
        if kind == "[":
            return self._list_expr()
        if kind == "par":
            return self._par()
        raise self._no_expression(tok, after)

    def _no_expression(self, tok: Token, after: Token | None) -> ParseError:
        where = f" after '{after.text}'" if after is not None else ""
        hint = ""
        if tok.kind in _BLOCK_START and after is not None:
            hint = f"; {_BLOCK_START[tok.kind]} used as an operand must be parenthesised"
        elif tok.kind == "_":
            hint = "; '_' is only allowed in patterns"
        elif tok.kind == "def":
            hint = "; 'def' is only allowed at the start of a file of definitions"
        return self.error(f"expected an expression{where}, found {tok.describe()}{hint}", tok)

    def _paren_expr(self) -> A.Expr:
        opener = self.advance()
        if self.accept(")"):
            return A.UnitLit(span=self.span_from(opener.span))
        items = [self.expr()]
        while self.accept(","):
            items.append(self.expr())
        self._close(")", opener)
        return self._tuple(items, A.PairE, opener)

    def _list_expr(self) -> A.Expr:
        opener = self.advance()
        items = self._items("]")
        self._close("]", opener)
        return A.ListLit(items, span=self.span_from(opener.span))

    def _items(self, close_kind: str) -> list[A.Expr]:
        """`e1, ..., en` (n ≥ 0) up to `close_kind`, which the caller consumes."""
        items: list[A.Expr] = []
        toks = self.toks
        if toks[self.i].kind != close_kind:
            items.append(self._item())
            while toks[self.i].kind == ",":
                self.i += 1
                items.append(self._item())
        return items

    def _item(self) -> A.Expr:
        """An element of a list or array literal. A number, or a negated one, followed by ',' or a
        closing bracket (nearly every element of a long literal) is read directly: the general
        expression path costs ten calls per element, and a 5 MB literal has a million elements."""
        toks, i = self.toks, self.i
        tok = toks[i]
        neg = tok.kind == "-"
        num = toks[i + 1] if neg else tok
        if num.kind in ("INT", "REAL") and toks[i + 2 if neg else i + 1].kind in _ITEM_END:
            self.i = i + (2 if neg else 1)
            lit: A.Expr = (A.RealLit if num.kind == "REAL" else A.IntLit)(num.value, span=num.span)
            return A.Neg(lit, span=_join(tok.span, num.span)) if neg else lit
        return self.expr()

    def _expr_list(self, open_kind: str, close_kind: str, what: str) -> list[A.Expr]:
        """`open e1, ..., en close` (n ≥ 0)."""
        opener = self.peek()
        if opener.kind != open_kind:
            raise self.error(f"expected '{open_kind}' to start {what}, found {opener.describe()}", opener)
        self.advance()
        items = self._items(close_kind)
        self._close(close_kind, opener)
        return items

    def _int_list(self, what: str) -> list[int]:
        """`[k1, ..., kn]` of integer literals (n ≥ 0): a static shape or permutation."""
        opener = self.peek()
        if opener.kind != "[":
            raise self.error(f"expected '[' to start {what} (a list of integer literals), found {opener.describe()}")
        self.advance()
        items: list[int] = []
        if self.peek().kind != "]":
            items.append(self._int_literal(what))
            while self.accept(","):
                items.append(self._int_literal(what))
        self._close("]", opener)
        return items

    def _int_literal(self, what: str) -> int:
        tok = self.peek()
        if tok.kind != "INT":
            raise self.error(f"{what} must be integer literals (sizes are static), found {tok.describe()}", tok)
        self.advance()
        return tok.value

    def _form(self) -> A.Expr:
        """An array form of seed 004 §3.2, e.g. `build [3, 4] (\\[i, j] -> a ! [j, i])`, or a derivative operator."""
        head = self.advance()
        name = head.text
        usage = f"'{name}' is used as {_FORM_USAGE[name]}"
        static: list[int] = []
        args: list[A.Expr] = []
        params: list[str] = []
        body: A.Expr | None = None
        idxs: list[A.Expr] = []
        for kind in _FORM_ARGS[name]:
            tok = self.peek()
            if kind == "k":
                if tok.kind != "INT":
                    raise self.error(f"expected an integer literal, found {tok.describe()}: {usage}", tok)
                static.append(self._int_literal(usage))
            elif kind == "ks":
                static = self._int_list(f"the static argument of '{name}'")
            elif kind == "t":
                if tok.kind not in _ATOM_START:
                    raise self.error(f"expected an argument, found {tok.describe()}: {usage}", tok)
                args.append(self._atom(head))
            else:
                params, body, idxs = self._index_function(kind, usage)
        span = self.span_from(head.span)
        if name in ("build1", "build"):
            assert body is not None
            shape = static if name == "build" else static[:1]
            return A.Build(shape, params, body, one=name == "build1", span=span)
        if name in ("gather", "scatter", "scatterMax"):
            return A.Gather(name, static, args[0], params, idxs, span=span)
        if name in A.DERIV_FORMS:
            return A.Deriv(name, args[0], args[1:], span=span)
        return A.ArrayPrim(name, static, args, span=span)

    def _index_function(self, kind: str, usage: str) -> tuple[list[str], A.Expr | None, list[A.Expr]]:
        """`(\\i -> t)`, `(\\[i1, ...] -> t)` or `(\\[i1, ...] -> [j1, ...])` of an array form."""
        opener = self.peek()
        if opener.kind != "(" or self.peek_next().kind != "\\":
            raise self.error(f"expected a parenthesised lambda, found {opener.describe()}: {usage}", opener)
        self.advance()
        self.advance()
        if kind == "fn1":
            params = [self._index_name()]
        else:
            lb = self.expect("[", f" (the lambda takes a list of index names): {usage}")
            params = []
            if self.peek().kind != "]":
                params.append(self._index_name())
                while self.accept(","):
                    params.append(self._index_name())
            self._close("]", lb)
        if len(set(params) - {"_"}) != len([p for p in params if p != "_"]):
            raise self.error("an index name is bound twice in the same lambda", opener)
        self.expect("->", f" after the index names: {usage}")
        body: A.Expr | None = None
        idxs: list[A.Expr] = []
        scope = self.bind(params)
        if kind == "ix":
            idxs = self._expr_list("[", "]", f"the target index: {usage}")
        else:
            body = self.expr()
        self.unbind(scope)
        self._close(")", opener)
        return params, body, idxs

    def _index_name(self) -> str:
        if self.peek().kind == "_":
            self.advance()
            return "_"
        return self.bindable_name()

    def _par(self) -> A.Expr:
        start = self.advance()
        opener = self.expect("(", " after 'par'")
        left = self.expr()
        self.expect(",", ": 'par' takes two arguments, 'par(e1, e2)'")
        right = self.expr()
        if self.peek().kind == ",":
            raise self.error("expected ')': 'par' takes exactly two arguments, found ','", self.peek())
        self._close(")", opener)
        return A.Par(left, right, span=self.span_from(start.span))

    def _tuple(self, items: list, pair: Callable, opener: Token):
        """`(a)` is `a` and `(a, b, c)` is `(a, (b, c))`; the outermost node spans the brackets."""
        node = _fold_right(items, lambda left, right: pair(left, right, span=_join(left.span, right.span)))
        node.span = self.span_from(opener.span)
        return node

    # ---- files ------------------------------------------------------------------------------

    def module(self) -> A.Module:
        start = self.peek().span
        if self.peek().kind != "def":
            if self.peek().kind == "EOF":
                raise self.error("expected an expression or 'def', found end of input")
            e = self.expr()
            self.finish("end of input (a file is one expression or a sequence of 'def's)")
            return A.Module(e, [], span=self.span_from(start))
        names: dict[str, Token] = {}
        defs: list[A.Def] = []
        while self.peek().kind == "def":
            defs.append(self.definition(names))
        self.finish("'def' or end of input")
        last = defs[-1]
        if last.name != "main":
            raise self.error(f"the last definition must be 'main' (the program), found '{last.name}'", names[last.name])
        return A.Module(None, defs, span=self.span_from(start))

    def definition(self, names: dict[str, Token]) -> A.Def:
        start = self.advance()
        tok = self.peek()
        name = self.bindable_name()
        if name in names:
            first = names[name].span
            raise self.error(
                f"duplicate definition of '{name}' (first defined at line {first.line}, column {first.col})", tok
            )
        names[name] = tok
        self.bind([name])  # in scope in its own body and every later definition
        binders = self.binders(f"'def {name}' (a definition is a function of at least one parameter)")
        result = self.type_() if self.accept(":") else None
        self.expect("=", f" after the parameters of '{name}'")
        params = self.bind(_binder_names(binders))
        body = self.expr()
        self.unbind(params)
        return A.Def(name, binders, result, body, span=self.span_from(start.span))


def _pattern_names(p: A.Pattern) -> list[str]:
    """The names a pattern binds."""
    out: list[str] = []
    stack = [p]
    while stack:
        q = stack.pop()
        if isinstance(q, A.PVar):
            out.append(q.name)
        elif isinstance(q, A.PPair):
            stack += (q.left, q.right)
    return out


def _binder_names(binders: list[A.Binder]) -> list[str]:
    return [n for b in binders for n in _pattern_names(b.pat)]


def _block_hint(tok: Token) -> str:
    """Why a `\\`, `let`, `letrec`, `if` or `case` after a complete operand is refused."""
    if tok.kind not in _BLOCK_START:
        return ""
    return f"; {_BLOCK_START[tok.kind]} used as an argument or operand must be parenthesised"


def _reduces(top: Token, prec: int, assoc: str) -> bool:
    top_prec = _BINARY[top.kind][0]
    return top_prec > prec or (top_prec == prec and assoc == "left")


def _join(first: A.Span, last: A.Span) -> A.Span:
    return A.Span(first.file, first.line, first.col, last.end_line, last.end_col)


def _fold_right(items: list, pair: Callable):
    result = items[-1]
    for item in reversed(items[:-1]):
        result = pair(item, result)
    return result


# ---- depth of the finished tree --------------------------------------------------------------


@functools.cache
def _tree_fields(cls: type) -> tuple[str, ...]:
    if not dataclasses.is_dataclass(cls):
        return ()
    return tuple(f.name for f in dataclasses.fields(cls) if f.compare)


def _subtrees(obj: object) -> Iterator[object]:
    for name in _tree_fields(type(obj)):
        value = getattr(obj, name)
        if isinstance(value, list):
            yield from value
        elif isinstance(value, (A.Node, T.Type)):
            yield value


def _check_depth(root: object, parser: _Parser) -> None:
    """Refuse trees deeper than MAX_TREE_DEPTH (long operator chains and tuples build deep trees)."""
    stack = [(root, 1, getattr(root, "span", None))]
    while stack:
        obj, depth, span = stack.pop()
        if depth > MAX_TREE_DEPTH:
            raise parser.error(
                f"expression nested too deeply: its syntax tree is more than {MAX_TREE_DEPTH} levels deep "
                "(long chains of operators, applications, tuples or lets count too); split it with 'let' or 'def'",
                span,
            )
        for child in _subtrees(obj):
            stack.append((child, depth + 1, getattr(child, "span", None) or span))


def _run(text: str, filename: str, parse: Callable[[_Parser], Result]) -> Result:
    """Parse; if the caller's stack is too shallow for MAX_DEPTH nesting, retry on the deep thread."""
    with paused_gc():
        return _parse(text, filename, parse)


def _parse(text: str, filename: str, parse: Callable[[_Parser], Result]) -> Result:
    parser = _Parser(text, filename)
    try:
        result = parse(parser)
    except RecursionError:
        parser = _Parser(text, filename)  # afresh: the token scan was cut short too
        result = run_deep(parse, parser)
    _check_depth(A.module_as_expr(result) if isinstance(result, A.Module) else result, parser)
    return result


def _whole_expr(p: _Parser) -> A.Expr:
    e = p.expr()
    p.finish("end of input")
    return e


def _whole_type(p: _Parser) -> T.Type:
    t = p.type_()
    p.finish("end of input after the type")
    return t


def parse_module(text: str, filename: str = "<input>") -> A.Module:
    """Parse a source file: one expression, or `def`s of which the last is `main`."""
    return _run(text, filename, _Parser.module)


def parse_expr(text: str, filename: str = "<input>") -> A.Expr:
    """Parse exactly one expression (also the syntax of value literals)."""
    return _run(text, filename, _whole_expr)


def parse_type(text: str, filename: str = "<input>") -> T.Type:
    """Parse exactly one type, such as `(R, [Z]) -> R + ()`."""
    return _run(text, filename, _whole_type)
