"""What a failure is (its kind of mismatch, the construct at fault, the key of its finding) and the
files of a finding directory (docs/cli.md), written atomically.

These are plain functions of verdicts, programs and paths: the worker and the shrinker use them
too (a shrinking step must fail "the same way", `same_failure`). The campaign's findings
themselves (`Finding`, candidates, settling, merging, writing each directory) are `book.py`'s.

One finding is one bug: the failures of one engine that share the construct at fault in the
shrunk program and the kind of mismatch (`finding_key`, which says why), whichever oracles saw
them. A finding directory holds
    program.adv        the shrunk program, pretty-printed (the original until shrinking improves it)
    input.txt          its input, in the literal syntax
    original.adv       the program as generated
    original-input.txt the input as generated
    finding.json       engine, the oracles that saw it, verdict details, seeds, sizes before and after,
                       occurrences, versions, ...
    reproduce.sh       the one command that reproduces it: `advalidate replay DIR` (with the
                       `--engine` and PYTHONPATH a plug-in engine needs)
Every file is written to a temporary name and renamed into place, and a new directory is built
under a temporary name and renamed, so a reader (or a campaign killed half-way) never sees half a
file. A finding is written as soon as the failing verdict arrives, before shrinking starts.
"""

from __future__ import annotations

import json
import math
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
from ..lang.primitives import PRIMITIVES
from ..oracles.verdict import clip
from .layout import FINDING_JSON


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


def rename_dir(out: Path, old: str, new: str) -> Path:
    """Rename finding directory `out/old` to `out/new` (a candidate that became finding `new`)."""
    src, dst = out / old, out / new
    if old != new and src.is_dir() and not dst.exists():
        os.replace(src, dst)
    return dst


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


_OP_WORDS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq"}


def construct_slug(culprit: str) -> str:
    """A culprit in a file name: "*R, let" becomes "mulR-let"; a library call's flags say what they
    are set to: "scatter_reduce('prod', include_self=False)" becomes "scatter-reduce-prod-no-include-self"
    (with `=True`: "...-include-self"), so the two calls' findings never share a name."""
    words = []
    for c in culprit.split(", "):
        m = re.fullmatch(r"(<=|>=|==|[-+*/<>])([RZ]?)", c)
        words.append(_OP_WORDS[m.group(1)] + m.group(2) if m else c)
    text = re.sub(r"\b(\w+)=False\b", r"no-\1", "-".join(words))
    return slug(re.sub(r"\b(\w+)=True\b", r"\1", text), 48)


def finding_name(number: int, engine: str, culprit: str) -> str:
    """The directory of finding `number`: `f001-broken-sin-sin` (engine, then the construct at fault)."""
    return f"f{number:03d}-{slug(engine)}-{construct_slug(culprit)}"


def candidate_name(ident: int, engine: str) -> str:
    """The directory of a failure not yet shrunk and classified: `pending-003-broken-sin`. It becomes
    `fNNN-...` (or part of an existing finding) once shrunk, so that finding numbers have no gaps."""
    return f"pending-{ident:03d}-{slug(engine)}"


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
        if isinstance(x, (A.ArrayLit, A.Build, A.Index, A.Gather, A.ArrayPrim)):
            out.add("arrays")  # the program uses seed 004's arrays (counted as `array_programs`)
        if isinstance(x, A.Deriv):
            out.add("nested")  # a derivative operator (seed 001; counted as `nested_programs`)
    out.discard("case")
    return out


def _construct(x: A.Node) -> str:
    if isinstance(x, A.Builtin):
        return x.name
    if isinstance(x, A.Deriv):
        return x.op  # grad, vjp or jvp
    if isinstance(x, A.Gather):
        return x.kind  # gather, scatter or scatterMax: each has AD rules of its own
    if isinstance(x, A.ArrayPrim):
        return x.name  # sumOuter, maxOuter, minOuter, replicate, tr, reshape, cond, div, mod
    if isinstance(x, A.BinOp):
        t = x.operand_ty
        suffix = "" if t is None else ("Z" if type(t).__name__ == "Int" else "R")
        return f"{x.op}{suffix}"
    names = {
        A.Var: "var", A.RealLit: "real-literal", A.IntLit: "int-literal", A.BoolLit: "bool-literal",
        A.UnitLit: "unit", A.PairE: "pair", A.ListLit: "list-literal", A.Cons: "cons", A.Lam: "lambda",
        A.App: "app", A.Let: "let", A.LetRec: "letrec", A.If: "if", A.Case: "case", A.Neg: "neg",
        A.Par: "par", A.ArrayLit: "array-literal", A.Build: "build", A.Index: "index",
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


# ---- what went wrong: kinds of mismatch, the construct at fault, the finding's class ----------

#: The kinds of mismatch a failing verdict can report (`failure_class`). They are coarse on purpose:
#: every oracle that sees one bug reports the same kind (fd, forward, symbolic and cross all say
#: "wrong gradient" for a wrong derivative rule), and the kind does not depend on the point (the
#: sign of an error does: `mismatch` describes that for the kept example).
WRONG_VALUE = "wrong value"
WRONG_GRADIENT = "wrong gradient"
WRONG_JVP = "wrong jvp"
NOT_ONCE = "complexity: backprop called more than once"
NOT_LINEAR = "complexity: reverse pass not linear"
BOT_VALUE = "wrong value of the bulk-operation transform"

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)\b", re.IGNORECASE)


def library_call(kind: str) -> str | None:
    """The library call and mode a finding's kind names (`"wrong gradient in lowering ⟦a[i](...)⟧"`),
    or None (`oracles.consistency.lowering_tag`)."""
    from ..oracles.consistency import tagged_call

    return tagged_call(kind)


def named_call(kind: str) -> str | None:
    """The library call a finding's kind is keyed by: its own-semantics lowering (`library_call`),
    or the call a language-semantics failure was put to (`"wrong jvp in ⟦torch.special.digamma⟧"`,
    `fuzz.worker.attributed_call`); None for a kind naming no call."""
    m = re.search(r"⟦([^⟧]+)⟧", kind)
    return m.group(1) if m else None


def same_failure(target: str, kind: str) -> bool:
    """Whether a shrinking step's failure of `kind` is still the failure of class `target`: equal,
    or, where `target` blames several calls together (the consistency oracle could not put the
    failure to one, `"… in lowering ⟦a + b + c⟧"`), the same mismatch in any calls: a smaller program
    with fewer calls may put it to one (kept as the finding's kind once shrunk)."""
    if kind == target:
        return True
    if not blames_several(target) or library_call(kind) is None:
        return False
    return target.split(" in lowering ⟦")[0] == kind.split(" in lowering ⟦")[0]


def blames_several(kind: str) -> bool:
    """Whether a kind puts its failure to several library calls together (`"… ⟦a + b⟧"`)."""
    return " + " in (library_call(kind) or "")


def failure_class(verdict: dict[str, Any]) -> str:
    """The kind of mismatch (`mismatch_class`), with the library call and mode it happened in when
    the verdict names one (the consistency oracle's lowerings): `wrong gradient in ⟦a[i](default)⟧`.
    The call is part of the kind, so the shrinker keeps it and findings group by it (`finding_key`)."""
    from ..oracles.consistency import lowering_tag

    kind = mismatch_class(verdict)
    call = library_call(str(verdict.get("detail") or ""))
    if call is None:
        return kind
    if kind == f"{verdict.get('oracle')} fails":
        kind = "wrong gradient at a kink" if "at a kink" in str(verdict.get("detail")) else WRONG_GRADIENT
    return f"{kind} in {lowering_tag(call)}"


def mismatch_class(verdict: dict[str, Any]) -> str:
    """The kind of mismatch a failing verdict reports, named, e.g. "wrong gradient", "wrong value",
    "nan gradient", "crash (KeyError)", "complexity: backprop called more than once".

    This is what one verdict can tell. It is the shrinker's "fails the same way" test (a smaller
    program must fail with the same kind) and, with the engine and the construct at fault in the
    shrunk program, the key that groups failures into findings (`finding_key`). Numbers, vectors and
    engine names in the detail never enter it.
    """
    detail = str(verdict.get("detail") or "")
    oracle = str(verdict.get("oracle") or "")
    m = re.search(r"\bcrashed: ([A-Za-z_][\w.]*)", detail)
    if m:
        return f"crash ({m.group(1)})"
    m = re.search(r"jvp crashed: ([A-Za-z_][\w.]*)", detail)
    if m:
        return f"crash in jvp ({m.group(1)})"
    if "returned an ill-typed value" in detail:
        return "ill-typed value"
    if "returned an ill-typed gradient" in detail:
        return "ill-typed gradient"
    if "differs from the reference in its discrete parts" in detail:
        return "wrong discrete parts of the value"
    if "does not copy the input's integers" in detail:
        return "gradient does not copy the input's discrete parts"
    if oracle == "once" or "backprop_calls_max" in detail:
        return NOT_ONCE
    if oracle == "linear" or detail.startswith("reverse pass is not linear"):
        return NOT_LINEAR
    if "own jvp" in detail:
        return WRONG_JVP
    if "bot's program computes a different value" in detail:
        return BOT_VALUE
    if "bot's program fails where the source program runs" in detail:
        return "bulk-operation transform raises"
    what = "value" if ("value differs" in detail or detail.startswith("value disagrees")) else None
    if what is None and oracle not in ("fd", "symbolic", "forward", "cross") and "gradient" not in detail:
        return f"{oracle} fails" if oracle else "fail"
    what = what or "gradient"
    actual = str(verdict.get("actual") or "").lower()
    if "nan" in re.findall(r"[a-z]+", actual) or "nan" in detail.lower().split():
        return f"nan {what}"
    if "inf" in re.findall(r"[a-z]+", actual):
        return f"infinite {what}"
    return WRONG_VALUE if what == "value" else WRONG_GRADIENT


def _numbers(text: Any) -> list[float]:
    if text is None:
        return []
    out = []
    for tok in _NUMBER.findall(str(text)):
        try:
            out.append(float(tok))
        except ValueError:
            pass
    return out


def mismatch(verdict: dict[str, Any]) -> str:
    """How the kept example fails, finer than its kind: "wrong gradient sign" (actual = −expected
    wherever they differ), "zero gradient", "gradient scaled by 2", "backprop called twice", ..."""
    kind = failure_class(verdict)
    if kind == NOT_ONCE:
        calls = _numbers(verdict.get("actual"))
        if len(calls) == 1:
            n = int(calls[0])
            return "complexity: backprop called twice" if n == 2 else f"complexity: backprop called {n} times"
        return kind
    if kind not in (WRONG_GRADIENT, WRONG_VALUE):
        return kind
    what = "gradient" if kind == WRONG_GRADIENT else "value"
    exp, act = _numbers(verdict.get("expected")), _numbers(verdict.get("actual"))
    if not exp or len(exp) != len(act):
        return kind
    pairs = [(e, a) for e, a in zip(exp, act, strict=True) if not math.isclose(e, a, rel_tol=1e-9, abs_tol=1e-12)]
    if not pairs:
        return kind
    if all(a == 0.0 for _, a in pairs):
        return f"zero {what}"
    if all(math.isclose(a, -e, rel_tol=1e-6, abs_tol=1e-12) for e, a in pairs):
        return f"wrong {what} sign"
    # A simple factor (2, 3, 1/2, ...) on every differing entry: a doubled or halved contribution.
    ratios = [a / e for e, a in pairs if e != 0.0]
    if len(ratios) == len(pairs) and all(math.isclose(r, ratios[0], rel_tol=1e-6) for r in ratios):
        r = ratios[0]
        for k in range(2, 9):
            for factor, text in ((float(k), f"{k}"), (1.0 / k, f"1/{k}")):
                if math.isclose(abs(r), factor, rel_tol=1e-6):
                    return f"{what} scaled by {'-' if r < 0 else ''}{text}"
    return kind


def culprit_constructs(m: A.Module) -> set[str]:
    """The constructs at fault in a shrunk program: what its body uses, without what every program
    has (variables, the program's own parameter, the application of a built-in to its argument)."""
    roots: list[A.Node] = []
    if m.expr is not None:
        roots = [m.expr.body if isinstance(m.expr, A.Lam) else m.expr]
    else:
        roots = [d.body for d in m.defs]
    out: set[str] = set()
    for root in roots:
        out |= constructs(root)
        if not any(_user_application(e) for e in _walk(root)):
            out.discard("app")
    if m.expr is None and len(m.defs) > 1:
        out.add("def")
    out.discard("var")
    return out


def _walk(e: A.Node) -> Iterable[A.Node]:
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(A.children(x))


def _user_application(e: A.Node) -> bool:
    """An application whose function is not a built-in (a lambda, a closure, a recursive call)."""
    if not isinstance(e, A.App):
        return False
    head = e
    while isinstance(head, A.App):
        head = head.fn
    return not isinstance(head, A.Builtin)


#: Primitives first, then the constructs around them, when a culprit is named.
_ORDER = (*PRIMITIVES, *"real +R -R *R /R neg fst snd inl inr map parmap foldl zipWith sum length".split())


def culprit_name(cs: Iterable[str]) -> str:
    """A culprit for people: "sin", "*R, let", or "plain variables" when the body is only variables."""
    cs = set(cs)
    if not cs:
        return "plain variables"
    return ", ".join(sorted(cs, key=lambda c: (_ORDER.index(c) if c in _ORDER else len(_ORDER), c)))


def finding_key(engine: str, culprit: Iterable[str], kind: str) -> tuple[str, str, str]:
    """The key that makes one finding of many failures: (engine, construct at fault, kind of mismatch).

    Why this key. A bug is a property of one engine, so the engine is part of it, but the oracle is
    not: a wrong derivative rule fails fd, forward mode, sympy and the cross-engine check at once,
    and those are four witnesses of one bug, listed inside the finding, not four findings. What
    tells two bugs of one engine apart is where the program goes wrong and how: the construct at
    fault is read from the *shrunk* program, where the reducer has removed everything the failure
    does not need (`\\(x : R) -> sin x` blames `sin`), and the kind of mismatch (`failure_class`:
    wrong value, wrong gradient, nan, crash, a complexity bound) is the coarse one every oracle
    agrees on, so the same bug seen at another point (where its error has another sign) or by
    another oracle lands in the same finding. The original program's constructs are never part of
    the key: they say what the generator happened to produce, not what is wrong. A library's
    finding, whose kind names the call and mode it happened in (the consistency oracle localises
    it), is keyed by that call instead: (engine — the library under its transformation, `jax` or
    `jax-jit` —, call and mode, kind), so two programs meeting the same clamped gather are one
    finding with two occurrences. Whether the call disagrees with itself (`… in lowering ⟦call⟧`) or,
    alone, with the language (`… in ⟦call⟧`, `fuzz.worker.attributed_call`) is how the bug was
    seen, not which bug: JAX's wrong digamma derivative fails both ways in one program.
    """
    call = named_call(kind)
    if call is not None:  # a library's bug is its call and mode (under the engine's transformation)
        return (engine, call, kind.replace(" in lowering ⟦", " in ⟦"))
    return (engine, culprit_name(culprit), kind)


def signature_text(key: tuple[str, str, str]) -> str:
    """A finding's class as one line: "broken-sin: sin: wrong gradient"."""
    return ": ".join(key)


def covers(culprit: Iterable[str], program_constructs: Iterable[str]) -> bool:
    """A finding explains a new failure (same engine and kind) whose program uses everything its
    shrunk program blames: the same bug, met again."""
    return set(culprit) <= set(program_constructs)


# ---- presenting a verdict ---------------------------------------------------------------------


#: How the consistency oracle's detail starts when the library's forward mode is the wrong one.
FORWARD_WRONG = "forward ⟨dy, J v⟩ = "


def verdict_labels(verdict: dict[str, Any]) -> tuple[str, str]:
    """What a failing verdict's `expected` and `actual` are, in words, by oracle and detail."""
    oracle = str(verdict.get("oracle") or "")
    detail = str(verdict.get("detail") or "")
    vector = bool(verdict.get("positions"))
    kind = failure_class(verdict)
    if kind in (WRONG_VALUE, "nan value", "infinite value"):
        if oracle == "cross":
            return _cross_expected(detail, "value"), "value computed by this engine"
        return "value by the reference interpreter", "value computed by this engine"
    if kind == NOT_ONCE:
        return "most calls of any one backpropagator allowed", "backprop_calls_max (most calls of one backpropagator)"
    if kind == NOT_LINEAR:
        return "bound C·(primal_ops + input_size + output_size)", "reverse_cost of the engine's reverse pass"
    if kind == BOT_VALUE:
        return "value of the source program (reference interpreter)", "value of the bot's transformed program"
    if kind == WRONG_JVP:
        return "J v by the reference forward mode", "J v by the engine's own jvp"
    if oracle == "fd":
        if vector:
            return "gradient by finite differences (one per input real)", "gradient by the engine"
        return "directional derivative ⟨∇f, v⟩ by finite differences", "⟨gradient, v⟩ by the engine"
    if oracle == "symbolic":
        return "gradient by sympy (along the executed path)", "gradient by the engine"
    if oracle == "forward":
        if "full Jacobian" in detail:
            return "Jᵀ dy by forward mode (column by column)", "Jᵀ dy by the engine (its gradient)"
        return "⟨dy, J v⟩ by forward mode", "⟨Jᵀ dy, v⟩ by the engine"
    if oracle == "cross":
        return _cross_expected(detail, "gradient"), "gradient by this engine"
    if oracle == "consistency" and "central differences of" in detail:
        # The library against itself: `actual` is the mode that disagrees with its own differences.
        forward = FORWARD_WRONG in detail
        wrong = "⟨dy, J v⟩ by the library's forward mode" if forward else "⟨Jᵀ dy, v⟩ by the library's reverse mode"
        return "derivative along v by central differences of the library's own primal", wrong
    return "expected", "actual"


def _cross_expected(detail: str, what: str) -> str:
    m = re.search(r"expected = (.+?)'s (value|gradient)", detail)
    return f"{what} by {m.group(1)}" if m else f"{what} by the other engines"


def reason_class(detail: str, engine: str = "") -> str:
    """An inconclusive verdict's reason without its specifics (numbers, vectors, the engine's name),
    so that reasons can be counted."""
    text = str(detail or "")
    if engine:
        text = text.replace(f"engine {engine} ", "the engine ").replace(f"engine {engine}'s", "the engine's")
    text = text.split(";", 1)[0]
    for _ in range(3):
        text = re.sub(r"\([^()]*\)|\[[^\[\]]*\]|⟨[^⟨⟩]*⟩|\{[^{}]*\}", " ", text)
    text = _NUMBER.sub("#", text)
    return clip(text, 90) or "no reason given"


# ---- reproducing ------------------------------------------------------------------------------


def engine_pythonpath(spec: str) -> str | None:
    """The directory a fresh `advalidate` must find a plug-in engine `module:attr` in (for
    PYTHONPATH), or None when it needs none (a built-in engine, or a module installed in
    site-packages or the standard library)."""
    if not isinstance(spec, str) or ":" not in spec:
        return None
    import importlib.util
    import site
    import sysconfig

    top = spec.split(":", 1)[0].split(".")[0]
    if not top or top == "advalidate":
        return None
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if found is None or found.origin in ("built-in", "frozen"):
        return None
    if found.submodule_search_locations:  # a package; a namespace package (no __init__.py) has no origin
        root = Path(list(found.submodule_search_locations)[0]).resolve().parent
    elif found.origin:
        root = Path(found.origin).resolve().parent
    else:
        return None
    standard = [sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    try:
        standard += site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:  # pragma: no cover - virtualenvs of old
        pass
    for d in standard:
        if d and (root == Path(d).resolve() or Path(d).resolve() in root.parents):
            return None
    return str(root)


def reproduce_command(directory: Path | str, engine_spec: str | None = None, pythonpath: str | None = None) -> str:
    """The one command that replays a finding, as it can be pasted into a shell: a plug-in engine is
    named with `--engine` (replay imports only what the command line names) and found through
    PYTHONPATH when it is not installed."""
    parts = []
    if pythonpath:
        parts.append(f"PYTHONPATH={shlex.quote(pythonpath)}")
    parts += ["advalidate", "replay", shlex.quote(str(directory))]
    if engine_spec and ":" in engine_spec:
        parts += ["--engine", shlex.quote(engine_spec)]
    return " ".join(parts)


def reproduce_script(engine_spec: str | None = None, pythonpath: str | None = None) -> str:
    lines = ["#!/bin/sh", "# Re-run this finding: exits 1 while the bug is there, 0 once it is fixed."]
    engine = ""
    if pythonpath:
        lines.append(f"PYTHONPATH={shlex.quote(pythonpath)}${{PYTHONPATH:+:$PYTHONPATH}}")
        lines.append("export PYTHONPATH")
    if engine_spec and ":" in engine_spec:
        engine = f" --engine {shlex.quote(engine_spec)}"
    lines.append(f'exec advalidate replay "$(dirname "$0")"{engine} "$@"')
    return "\n".join(lines) + "\n"
