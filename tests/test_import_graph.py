"""The import graph of advalidate's modules (issue 24, point 7): no cycle, and the architecture rules
of CONTRIBUTING.md. Read from the source with `ast`, not by importing: every import statement of a
module, those it runs when it is imported (module level, `if` / `try` / `TYPE_CHECKING` blocks,
class bodies) and those deferred into a function body (a lazy load for a fast start is still a
dependency: deferring an import hides a cycle, it does not remove it). Only `importlib` calls on a
computed name (the engine and oracle tables of `advalidate.names`, plug-ins) are not edges.
"""

from __future__ import annotations

import ast
from pathlib import Path

import advalidate

ROOT = Path(advalidate.__file__).resolve().parent


def modules() -> dict[str, tuple[Path, bool]]:
    """Every module of advalidate: dotted name -> (file, is a package)."""
    out = {}
    for p in ROOT.rglob("*.py"):
        parts = ["advalidate", *p.relative_to(ROOT).with_suffix("").parts]
        package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if package else parts)] = (p, package)
    return out


def imports(tree: ast.AST, deferred: bool = True) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of a module; with `deferred=False`, only those outside function bodies."""
    out, stack = [], [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(node)
        if deferred or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return out


def import_graph(deferred: bool = True) -> dict[str, set[str]]:
    """module -> the advalidate modules it imports (`from pkg import sub` is an edge to pkg.sub);
    `deferred=False`: only the imports that run when the module is imported."""
    mods = modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, (path, package) in mods.items():
        here = name if package else name.rpartition(".")[0]
        for node in imports(ast.parse(path.read_text(encoding="utf-8")), deferred):
            if isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names if a.name in mods}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[: len(here.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target not in mods:
                    continue
                subs = {f"{target}.{a.name}" for a in node.names} & mods.keys()
                graph[name] |= subs
                if len(subs) < len(node.names):
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), and self-imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_is_read_from_every_module():
    graph = import_graph()
    assert "advalidate.lang.compile" in graph["advalidate.impl.engine"]
    assert "advalidate.fuzz.errors" in graph["advalidate.fuzz.dask_pool"]
    assert len(graph) > 100


def test_imports_deferred_into_functions_are_edges_too():
    graph, loaded = import_graph(), import_graph(deferred=False)
    assert "advalidate.oracles.check" in graph["advalidate.cli"]  # imported inside `_cmd_check`
    assert "advalidate.oracles.check" not in loaded["advalidate.cli"]  # ... not when cli is imported
    assert all(loaded[m] <= graph[m] for m in graph)
    tree = ast.parse("import advalidate.lang\ndef f():\n    from advalidate import names\n")
    assert len(imports(tree)) == 2 and len(imports(tree, deferred=False)) == 1


def test_the_cycle_finder_finds_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_among_advalidates_modules():
    assert cycles(import_graph()) == []


def test_the_architecture_rules_hold():
    graph = import_graph()
    for mod, deps in graph.items():
        if mod.startswith("advalidate.lang."):
            assert all(d.startswith("advalidate.lang") for d in deps), (mod, deps)
        if mod.startswith("advalidate.impl"):
            assert not any(d.startswith("advalidate.oracles") for d in deps), (mod, deps)
    base = graph["advalidate.impl"] | graph["advalidate.impl.engine"] | graph["advalidate.impl.registry"]
    assert not any(d.startswith("advalidate.impl.seed") for d in base), base  # the engine base knows no seed


#: The intended package order, lowest first (CONTRIBUTING.md "Architecture rules", docs/architecture.md
#: "The layers"): a module may import its own unit and units of a lower layer, never one of its own
#: layer or above. A unit is a module prefix; the longest prefix that matches a module is its unit.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("advalidate.lazy", "advalidate.names", "advalidate.differences"),  # import nothing of advalidate
    ("advalidate.lang",),
    ("advalidate",),  # the package itself: `__version__` and the lazy public API (PEP 562)
    ("advalidate.impl",),  # the generic engine base and the registry (its seeds are the units below)
    ("advalidate.impl.seed000",),
    ("advalidate.impl.seed001", "advalidate.impl.seed004", "advalidate.impl.adapters"),
    ("advalidate.libraries",),
    ("advalidate.oracles",),
    ("advalidate.generators",),
    ("advalidate.runner", "advalidate.cli_args"),  # what every campaign command shares
    ("advalidate.fuzz", "advalidate.report", "advalidate.sweep"),
    ("advalidate.cli", "advalidate.testing"),
    ("advalidate.pytest_plugin",),
)

#: Edges (importer unit, imported unit) still allowed against the order, each with its reason: none
#: (issue #41 item 4 removed the last: engine base and registry -> seeds, fuzz <-> sweep).
DEPARTURES: dict[tuple[str, str], str] = {}


def unit(module: str) -> str:
    """The unit of `LAYERS` a module belongs to (its longest matching prefix)."""
    units = [u for layer in LAYERS for u in layer if module == u or module.startswith(u + ".")]
    assert units, f"{module} is in no layer of LAYERS: add its package there"
    return max(units, key=len)


RANK = {u: i for i, layer in enumerate(LAYERS) for u in layer}


def upward_edges(graph: dict[str, set[str]]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(importer unit, imported unit) -> the module edges that go to the same layer or above."""
    out: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for mod, deps in graph.items():
        a = unit(mod)
        for d in deps:
            b = unit(d)
            if a != b and RANK[b] >= RANK[a]:
                out.setdefault((a, b), []).append((mod, d))
    return out


def test_the_order_checker_finds_upward_and_sideways_edges():
    graph = {
        "advalidate.lang.core": {"advalidate.impl.engine"},
        "advalidate.fuzz.cli": {"advalidate.sweep.replay", "advalidate.lang.core"},
        "advalidate.impl.seed000.tape": {"advalidate.impl.engine", "advalidate.impl.seed000.naive"},
    }
    assert set(upward_edges(graph)) == {
        ("advalidate.lang", "advalidate.impl"),
        ("advalidate.fuzz", "advalidate.sweep"),
    }
    assert unit("advalidate.impl.registry") == "advalidate.impl"
    assert unit("advalidate.impl.seed004.bot") == "advalidate.impl.seed004"
    assert unit("advalidate") == "advalidate"


def test_every_package_imports_only_the_layers_below_it():
    found = upward_edges(import_graph())
    unlisted = {k: v for k, v in found.items() if k not in DEPARTURES}
    assert unlisted == {}
    assert set(DEPARTURES) <= set(found), "a departure is gone: remove it from DEPARTURES"


# ---- no library named outside its package (issue #39 item 1) ----------------------------------

#: Modules outside `advalidate/libraries/NAME/` that still compare a value with a library's name,
#: each with its reason. `advalidate.sweep` is outside this check as a whole until its per-library
#: modules move into the library packages (docs/architecture.md, "The layout").
NAMED_LIBRARY: dict[str, str] = {
    "advalidate.oracles.function_order": "check_function's `framework=` is the user's own function's "
    "framework (its driver, `function_drivers._DRIVERS`), not an engine's library",
    "advalidate.oracles.function_trees": "the same: the leaves of the user's arguments by framework",
}


def library_names() -> set[str]:
    """Every outside library an engine drives (`names.ADAPTERS`' second field)."""
    from advalidate.names import ADAPTERS

    return {lib for _, lib, _ in ADAPTERS.values()}


def _strings(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def named_libraries(tree: ast.AST, libraries: set[str]) -> list[str]:
    """The comparisons (`==`, `!=`, `in`, `not in`) of a module with a library's name as a literal:
    `library == "torch"`, `name in ("jax", "torch")`. Keys of a table and words in text are not
    comparisons."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(
            isinstance(o, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for o in node.ops
        ):
            if set().union(*map(_strings, [node.left, *node.comparators])) & libraries:
                out.append(f"{node.lineno}: {ast.unparse(node)}")
    return out


def test_the_library_name_finder_finds_comparisons_only():
    libs = {"torch", "jax"}
    tree = ast.parse(
        'if eng.library == "torch": pass\nok = name in ("jax", "numpy")\nno = lib != "torch"\n'
        'T = {"torch": 1}\ns = "torch"\nf(library="jax")\nx = a == "numpy"\n'
    )
    assert [f.split(":")[0] for f in named_libraries(tree, libs)] == ["1", "2", "3"]


def test_no_module_outside_a_librarys_package_tests_for_a_library_name():
    libs = library_names()
    assert {"torch", "jax", "autograd", "tensorflow"} <= libs
    found = {}
    for name, (path, _) in modules().items():
        if name.startswith(("advalidate.libraries.", "advalidate.sweep.")) and name.count(".") >= 2:
            if name.startswith("advalidate.sweep.") or name.split(".")[2] in libs:
                continue
        hits = named_libraries(ast.parse(path.read_text(encoding="utf-8")), libs)
        if hits:
            found[name] = hits
    assert {m: h for m, h in found.items() if m not in NAMED_LIBRARY} == {}
    assert set(NAMED_LIBRARY) <= set(found), "an exemption is gone: remove it from NAMED_LIBRARY"
