"""What the three repro.py templates (`repro_torch`, `repro_jax`, `repro_tensorflow`) write alike:
the inputs' nested float64 literals, the differences of phi embedded as source, the allowance of a
lower-precision rule, and the fields every template is formatted with. Each template keeps only
its library's own calls, so one change of the shared text reaches every generated repro.py.
"""

from __future__ import annotations

from typing import Any

from advalidate.differences import standalone_source
from advalidate.oracles.function_checks import K
from advalidate.oracles.function_precision import LOW_K, UNIT_ROUNDOFF, WIDE
from advalidate.sweep.literals import float_literal
from advalidate.sweep.pysource import summary

#: phi at X, Ridders' differences (`advalidate.differences.dfridr`, embedded as source) and the
#: size of the rule's terms: the text between a template's phi_at and its derivative().
DIFFERENCES = (
    "def phi(s):\n    return phi_at(X, s)\n\n\n"
    + standalone_source("dfridr", imports=False)
    + "\n\n\nSIZE = [0.0]  # the size of the rule's terms (sum of |w t| or |g v|), for the lower-precision allowance\n"
)

_WHAT = {
    "silent-zero": "returns a zero derivative instead of refusing",
    "silent-wrong": "returns a wrong derivative instead of refusing",
}


def low_allowance(signs: str, moved: str, report: str) -> str:
    """The repro's low_allowance() (a str.format template): `signs` the expression of one input's
    random signs (over `x`), `moved` that of one input moved by a rounding (over `x`, `g`), `report`
    the lines after the allowance is known (indented, ending in a newline)."""
    return (
        '''def low_allowance():
    """0 in float64; in a lower precision: LOW_K units of rounding of the terms, plus K times how far
    the derivative moves when the inputs move by one rounding (from float64 differences, never the rule)."""
    if UNIT is None:
        return 0.0
'''
        + f"    signs = [{signs} for x in X]\n"
        + f"    moved, moved_err = dfridr(lambda s: phi_at([{moved} for x, g in zip(X, signs)], s))\n"
        + "    allowance = LOW_K * UNIT * SIZE[0] + K * (abs(moved - expected) + moved_err + err)\n"
        + report
        + "    return allowance\n\n"
    )


def nested(x: Any) -> str:
    """A nested list of numbers as exact float64 literals."""
    if isinstance(x, list):
        return "[" + ", ".join(nested(e) for e in x) + "]"
    return float_literal(float(x))


def template_fields(
    finding: dict[str, Any],
    library_version: str,
    lib: str,
    short: str,
    mode_text: dict[str, str],
    transform_text: dict[str, str],
    literal: Any,
) -> dict[str, Any]:
    """The fields every template is formatted with, of a finding (finding.json's fields): `lib` the
    library's name in the title, `short` in the refusal text, `literal(real, imag)` one input's line."""
    rec = finding["record"]
    kind = finding["kind"]
    dtype = finding.get("dtype", rec.get("dtype", "float64"))
    transform = finding.get("transform", rec.get("transform", "eager"))
    silent = kind.startswith("silent")
    imag = rec.get("args_imag") or [None] * len(rec["args"])
    return {
        "title": summary(
            f"{lib} {finding['op']}: {finding['mode']} {_WHAT.get(kind, 'derivative is wrong')} "
            f"(sample {finding['sample']}, variant {finding['variant']}; {dtype}, {transform})"
        ),
        "library_version": library_version,
        "mode": finding["mode"],
        "mode_text": mode_text[finding["mode"]],
        "refuse_text": f" or {short} refuses the mode" if silent else "",
        "only_output": finding.get("only_output"),
        "nondiff": tuple(rec["nondiff_outputs"]),
        "args": "\n".join(literal(a, b) for a, b in zip(rec["args"], imag)),
        "dtype": dtype,
        "transform": transform,
        "transform_text": transform_text[transform],
        "unit": None if dtype in WIDE else UNIT_ROUNDOFF[dtype],
        "low_k": LOW_K,
        "k": K,
        "call_source": rec["call_source"].rstrip() + "\n",
        "op": finding["op"],
        "exit_on_raise": 0 if silent else 1,
    }
