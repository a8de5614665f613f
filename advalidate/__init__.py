"""advalidate: a verification and property-testing harness for automatic differentiation.

The public API (docs/api.md): `parse`, `pretty`, `parse_value`, `show_value`,
`evaluate`, `to_python`, `flatten`, `unflatten`, `Inl`, `Inr`, the error types, the AD engines
through `engine_names`, `engine` and `show`, and the oracles through `check` and `assert_gradients`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import exports

if TYPE_CHECKING:
    from .lang.program import Program

__version__ = "0.1.0"


def pretty(prog: Program) -> str:
    """The program's text in canonical layout; it parses back to an equal program."""
    from .lang.pretty import pretty_module

    return pretty_module(prog.module)


#: Where each public name lives: imported at first use (PEP 562), so `advalidate --version` and
#: `--help` load neither numpy nor sympy nor any engine.
_EXPORTS = {
    **dict.fromkeys(("engine", "engine_names", "show"), ".impl"),
    **dict.fromkeys(
        (
            "AdvError",
            "BudgetError",
            "DomainError",
            "EvalError",
            "MemoryBudgetError",
            "ParseError",
            "TypeCheckError",
            "ValueParseError",
        ),
        ".lang.errors",
    ),
    **dict.fromkeys(("Program", "evaluate", "parse", "to_python"), ".lang.program"),
    **dict.fromkeys(("Inl", "Inr", "flatten", "parse_value", "show_value", "unflatten"), ".lang.values"),
    **dict.fromkeys(("assert_gradients", "check"), ".oracles"),
    **dict.fromkeys(("assert_function_gradients", "check_function"), ".oracles.function"),
}


__getattr__, __dir__ = exports(__name__, _EXPORTS)

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
