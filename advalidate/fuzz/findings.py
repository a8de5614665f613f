"""Finding directories (DESIGN.md, "Command line"), written atomically, and their dedup signatures.

A finding directory holds
    program.adv        the shrunk program, pretty-printed (the original until shrinking improves it)
    input.txt          its input, in the literal syntax
    original.adv       the program as generated
    original-input.txt the input as generated
    finding.json       engine, oracle, verdict details, seeds, sizes before and after, versions, ...
    reproduce.sh       the one command that reproduces it: `advalidate replay DIR`
Every file is written to a temporary name and renamed into place, and a new directory is built
under a temporary name and renamed, so a reader (or a campaign killed half-way) never sees half a
file. A finding is written as soon as the failing verdict arrives, before shrinking starts.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import shutil
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..lang import ast as A

FINDING_JSON = "finding.json"


def atomic_write_text(path: Path | str, text: str) -> None:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_json(path: Path | str, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")


def write_dir(out: Path, name: str, files: dict[str, str]) -> Path:
    """Create (or update) `out/name` with `files`; a new directory appears complete or not at all."""
    target = out / name
    if target.is_dir():
        for fname, text in files.items():
            atomic_write_text(target / fname, text)
        return target
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=out))
    try:
        for fname, text in files.items():
            (tmp / fname).write_text(text, encoding="utf-8")
        if "reproduce.sh" in files:
            (tmp / "reproduce.sh").chmod(0o755)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def remove_dir(path: Path) -> None:
    """Remove a finding directory (a duplicate of another finding)."""
    if path.is_dir():
        trash = path.with_name(f".{path.name}.deleted")
        try:
            os.replace(path, trash)
        except OSError:
            trash = path
        shutil.rmtree(trash, ignore_errors=True)


def slug(text: str, limit: int = 24) -> str:
    s = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()
    return (s or "x")[:limit]


def finding_name(number: int, engine: str, oracle: str) -> str:
    return f"f{number:03d}-{slug(engine)}-{slug(oracle)}"


def reproduce_command(directory: Path | str) -> str:
    return f"advalidate replay {shlex.quote(str(directory))}"


def reproduce_script() -> str:
    return (
        "#!/bin/sh\n"
        "# Re-run this finding: exits 1 while the bug is there, 0 once it is fixed.\n"
        'exec advalidate replay "$(dirname "$0")" "$@"\n'
    )


def versions() -> dict[str, str]:
    from importlib import metadata

    from .. import __version__

    out = {"advalidate": __version__, "python": sys.version.split()[0], "platform": platform.platform()}
    for pkg in ("sympy", "mpmath", "numpy", "hypothesis"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def read_finding(directory: Path | str) -> dict[str, Any]:
    return json.loads((Path(directory) / FINDING_JSON).read_text(encoding="utf-8"))


# ---- constructs and signatures ----------------------------------------------------------------

#: Constructs too common to tell two failures apart (every program has them).
TRIVIAL = frozenset({"lambda", "var", "app", "real-literal", "pair"})


def constructs(e: A.Node) -> set[str]:
    """The language constructs a program uses (the unit of the campaign's coverage table)."""
    out: set[str] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        stack.extend(A.children(x))
        out.add(_construct(x))
        if isinstance(x, A.Case):
            kinds = {a.kind for a in x.alts}
            out.add("case-sum" if "inl" in kinds else "case-bool" if "true" in kinds else "case-list")
    out.discard("case")
    return out


def _construct(x: A.Node) -> str:
    if isinstance(x, A.Builtin):
        return x.name
    if isinstance(x, A.BinOp):
        t = x.operand_ty
        suffix = "" if t is None else ("Z" if type(t).__name__ == "Int" else "R")
        return f"{x.op}{suffix}"
    names = {
        A.Var: "var", A.RealLit: "real-literal", A.IntLit: "int-literal", A.BoolLit: "bool-literal",
        A.UnitLit: "unit", A.PairE: "pair", A.ListLit: "list-literal", A.Cons: "cons", A.Lam: "lambda",
        A.App: "app", A.Let: "let", A.LetRec: "letrec", A.If: "if", A.Case: "case", A.Neg: "neg",
        A.Par: "par",
    }  # fmt: skip
    return names.get(type(x), type(x).__name__.lower())


def module_constructs(m: A.Module) -> set[str]:
    if m.expr is not None:
        return constructs(m.expr)
    out: set[str] = set()
    for d in m.defs:
        out |= constructs(d.body)
    if len(m.defs) > 1:
        out.add("def")
    return out


def failure_class(verdict: dict[str, Any]) -> str:
    """What kind of failure a verdict reports (for dedup and shrinking): the first words of its
    detail, with numbers and bracketed specifics (vectors, engine lists, `⟨g, v⟩`) taken out."""
    text = str(verdict.get("detail") or "").split(";", 1)[0]
    for _ in range(3):  # nested groups
        text = re.sub(r"\([^()]*\)|\[[^\[\]]*\]|⟨[^⟨⟩]*⟩|\{[^{}]*\}", " ", text)
    text = re.sub(r"[-+]?\d[\d.eE+-]*", "#", text)
    words = [w for w in text.split() if w == "#" or re.search(r"\w", w)][:CLASS_WORDS]
    return " ".join(words) or str(verdict.get("status", "fail"))


CLASS_WORDS = 4


def signature(verdict: dict[str, Any], shrunk_constructs: Iterable[str]) -> str:
    """The dedup key of a shrunk finding, beside its (engine, oracle): failure class + what it uses."""
    core = sorted(set(shrunk_constructs) - TRIVIAL)
    return f"{failure_class(verdict)} | {' '.join(core) if core else '-'}"


def covers(sig_constructs: Iterable[str], program_constructs: Iterable[str]) -> bool:
    """A shrunk finding explains a new failure (same engine, oracle, class) whose program uses all its constructs."""
    return set(sig_constructs) - TRIVIAL <= set(program_constructs)
