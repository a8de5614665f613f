"""The comparison table of docs/check_function.md: check_function, gradcheck (+ gradgradcheck) and
jax check_grads on the tests' corpus of custom rules (issue #40 item 8).

    python3 benchmarks/check_function_corpus_table.py [--write] [--json out.json]

The corpus is `CASES` of tests/test_check_function_corpus.py: for each class of issue #40 a wrong
and a right hand-written rule, as a `torch.autograd.Function` or a `jax.custom_vjp`. Each tool runs
as a user would run it, with its defaults:

- `check_function(f, *args, framework=...)`: caught when a check fails; on a right rule, a fail is a
  false alarm and anything short of a clean pass (`outcome` of the tests) is counted inconclusive.
- torch: `gradcheck` then `gradgradcheck` (every corpus case is a custom rule, which claims second
  order), on every floating or complex leaf of the arguments (a dict's values become tensors) with
  requires_grad; caught when either returns False or raises.
- JAX: `check_grads(f, args, order=2, modes=["rev"])` under float64 (forward mode does not run on a
  custom_vjp); caught when it raises.

`--write` replaces the text between the markers `<!-- corpus-table:start -->` and
`<!-- corpus-table:end -->` in docs/check_function.md; without it the table is printed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's advalidate, whatever is installed
sys.path.insert(0, str(ROOT / "tests"))

DOC = ROOT / "docs" / "check_function.md"
START, END = "<!-- corpus-table:start -->", "<!-- corpus-table:end -->"


def _first_line(exc: BaseException) -> str:
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return f"{type(exc).__name__}: {text[:80]}"


def run_gradcheck(case: Any, args: tuple) -> tuple[bool, str]:
    """gradcheck then gradgradcheck on the inexact leaves of the arguments: (flagged, why)."""
    import torch

    leaves: list[Any] = []
    slots: list[tuple[int, Any]] = []  # (argument, key or None) of each leaf
    for i, a in enumerate(args):
        items = a.items() if isinstance(a, dict) else [(None, a)]
        for key, v in items:
            t = torch.tensor(v, dtype=torch.float64) if isinstance(v, float) else v  # as the corpus's x
            if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex()):
                leaves.append(t.detach().clone().requires_grad_(True))
                slots.append((i, key))

    def wrapped(*xs: Any) -> Any:
        full = [dict(a) if isinstance(a, dict) else a for a in args]
        for (i, key), x in zip(slots, xs, strict=True):
            if key is None:
                full[i] = x
            else:
                full[i][key] = x
        return case.f(*full)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if not torch.autograd.gradcheck(wrapped, tuple(leaves), raise_exception=False):
                return True, "gradcheck: False"
            if not torch.autograd.gradgradcheck(wrapped, tuple(leaves), raise_exception=False):
                return True, "gradgradcheck: False"
    except Exception as exc:
        return True, _first_line(exc)
    return False, ""


def run_check_grads(case: Any) -> tuple[bool, str]:
    """jax.test_util.check_grads at order 2 in reverse mode under float64: (flagged, why)."""
    import jax
    from jax.test_util import check_grads

    context = jax.enable_x64(True) if hasattr(jax, "enable_x64") else None
    if context is None:
        jax.config.update("jax_enable_x64", True)
    try:
        if context is not None:
            with context:
                check_grads(case.f, case.args, order=2, modes=["rev"])
        else:
            check_grads(case.f, case.args, order=2, modes=["rev"])
    except AssertionError as exc:
        return True, "AssertionError: " + (str(exc).strip().splitlines() or [""])[0][:60]
    except Exception as exc:
        return True, _first_line(exc)
    return False, ""


def measure() -> list[dict[str, Any]]:
    import test_check_function_corpus as corpus
    import torch

    torch.set_num_threads(1)
    rows = []
    for param in corpus.CASES:
        case = param.values[0]
        t = time.perf_counter()
        res = corpus.run(case)
        ours_s = time.perf_counter() - t
        ours = corpus.outcome(res)
        t = time.perf_counter()
        if case.framework == "torch":
            flagged, why = run_gradcheck(case, corpus.run_args(case))
            peer = "gradcheck"
        else:
            flagged, why = run_check_grads(case)
            peer = "check_grads"
        peer_s = time.perf_counter() - t
        rows.append(
            {
                "id": param.id,
                "class": case.name.rsplit("-", 1)[0],
                "framework": case.framework,
                "wrong": case.wrong,
                "check_function": ours,
                "check_function_s": ours_s,
                "peer": peer,
                "peer_flagged": flagged,
                "peer_why": why,
                "peer_s": peer_s,
            }
        )
    return rows


def _word(wrong: bool, flagged: bool) -> str:
    if wrong:
        return "**caught**" if flagged else "missed"
    return "✗ false alarm" if flagged else "ok"


def _ours(row: dict[str, Any]) -> str:
    if row["check_function"] == "inconclusive":
        return "inconclusive"
    return _word(row["wrong"], row["check_function"] == "fail")


def summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per tool: wrong rules caught of how many, right rules failed (and inconclusive) of how many."""
    out: dict[str, dict[str, int]] = {}
    for tool in ("check_function", "gradcheck", "check_grads"):
        mine = [r for r in rows if tool == "check_function" or r["peer"] == tool]
        flag = (lambda r: r["check_function"] == "fail") if tool == "check_function" else (lambda r: r["peer_flagged"])
        wrong = [r for r in mine if r["wrong"]]
        right = [r for r in mine if not r["wrong"]]
        out[tool] = {
            "wrong": len(wrong),
            "caught": sum(flag(r) for r in wrong),
            "right": len(right),
            "false_alarms": sum(flag(r) for r in right),
            "inconclusive": sum(r["check_function"] == "inconclusive" for r in right)
            if tool == "check_function"
            else 0,
            "seconds": round(sum(r["check_function_s" if tool == "check_function" else "peer_s"] for r in mine), 1),
        }
    return out


def markdown(rows: list[dict[str, Any]]) -> str:
    import platform

    import jax
    import torch

    s = summary(rows)
    lines = [
        f"Produced by `python3 benchmarks/check_function_corpus_table.py --write` on "
        f"{time.strftime('%Y-%m-%d')} (torch {torch.__version__.split('+')[0]}, jax {jax.__version__}, Python "
        f"{platform.python_version()}); every tool with its defaults, gradcheck followed by gradgradcheck "
        f"on the torch rules, check_grads(order=2, modes=['rev']) on the JAX ones.",
        "",
        "| tool | wrong rules caught | right rules failed | right rules inconclusive | time |",
        "|---|---:|---:|---:|---:|",
    ]
    for tool, label in (
        ("check_function", "`check_function`"),
        ("gradcheck", "`gradcheck` + `gradgradcheck`"),
        ("check_grads", "`check_grads`"),
    ):
        v = s[tool]
        inc = str(v["inconclusive"]) if tool == "check_function" else "—"
        lines.append(
            f"| {label} | {v['caught']}/{v['wrong']} | {v['false_alarms']}/{v['right']} | {inc} | {v['seconds']} s |"
        )
    lines += [
        "",
        "| case | library | rule | `check_function` | `gradcheck` + `gradgradcheck` / `check_grads` |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        peer = _word(r["wrong"], r["peer_flagged"])
        why = f" ({r['peer_why']})" if r["peer_why"] and not r["wrong"] else ""
        lines.append(
            f"| {r['class']} | {r['framework']} | {'wrong' if r['wrong'] else 'right'} | {_ours(r)} | "
            f"{r['peer']}: {peer}{why.replace('|', '/')} |"
        )
    return "\n".join(lines) + "\n"


def write(text: str, doc: Path = DOC) -> None:
    """Replace the text between the markers in the doc (the markers must be there, once each)."""
    old = doc.read_text()
    if old.count(START) != 1 or old.count(END) != 1:
        raise SystemExit(f"{doc}: expected one {START} and one {END}")
    head, rest = old.split(START)
    _, tail = rest.split(END)
    doc.write_text(f"{head}{START}\n{text}{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help=f"write the table into {DOC.relative_to(ROOT)}")
    ap.add_argument("--json", type=Path)
    ns = ap.parse_args(argv)
    rows = measure()
    text = markdown(rows)
    if ns.write:
        write(text)
    print(text)
    if ns.json:
        ns.json.write_text(json.dumps({"rows": rows, "summary": summary(rows)}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
