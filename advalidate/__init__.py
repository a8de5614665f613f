"""advalidate: a verification and property-testing harness for automatic differentiation.

The public API (docs/api.md): `parse`, `pretty`, `parse_value`, `show_value`,
`evaluate`, `to_python`, `flatten`, `unflatten`, `Inl`, `Inr`, the error types, the AD engines
through `engine_names`, `engine` and `show`, and the oracles through `check` and `assert_gradients`.
"""

from __future__ import annotations

from .impl import engine, engine_names, show
from .lang.errors import (
    AdvError,
    BudgetError,
    DomainError,
    EvalError,
    MemoryBudgetError,
    ParseError,
    TypeCheckError,
    ValueParseError,
)
from .lang.program import Program, evaluate, parse, to_python
from .lang.values import Inl, Inr, flatten, parse_value, show_value, unflatten
from .oracles import assert_gradients, check
from .oracles.function import assert_function_gradients, check_function

__version__ = "0.1.0"


def pretty(prog: Program) -> str:
    """The program's text in canonical layout; it parses back to an equal program."""
    from .lang.pretty import pretty_module

    return pretty_module(prog.module)


__all__ = [
    "AdvError",
    "BudgetError",
    "DomainError",
    "EvalError",
    "Inl",
    "MemoryBudgetError",
    "Inr",
    "ParseError",
    "Program",
    "TypeCheckError",
    "ValueParseError",
    "assert_gradients",
    "check",
    "engine",
    "engine_names",
    "evaluate",
    "flatten",
    "parse",
    "parse_value",
    "pretty",
    "show",
    "show_value",
    "to_python",
    "unflatten",
    "check_function",
    "assert_function_gradients",
]
