"""The package's import graph has layers: no package imports one above it, and no packages form a cycle.

Every `import irbgen.X` and `from irbgen.X import ...` in irbgen/ counts, at module level or inside a
function (a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "irbgen"

# Lowest first. A unit may import its own layer or any layer below; within a layer, no cycles.
LAYERS = [
    {"irbgen", "errors", "io", "records", "progress", "text", "schema", "commandline", "listfile", "extras",
     "spacy_models", "resources", "configfile", "outputs", "language", "seekable"},  # fmt: skip
    {"pipeline"},
    {"llm"},
    {"card", "benchmark", "validation", "export", "spread"},
    {"phantom", "web", "wikipedia", "irb", "wikidata"},  # the domain packages
    {"builds"},
    {"eval", "audit", "review", "testing"},
    {"cli", "__main__"},
]
LAYER = {unit: number for number, units in enumerate(LAYERS) for unit in units}


def unit_of(module: str) -> str:
    """irbgen.irb.plans -> "irb"; irbgen.cli -> "cli"; irbgen -> "irbgen"."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "irbgen"


def imports(path: Path) -> list[str]:
    """The irbgen modules (or packages) a file imports, anywhere in it."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = [f"{node.module}.{alias.name}" for alias in node.names]  # "from irbgen.x import y"
            found += [node.module] + [name for name in submodules if name in MODULES]
    return [name for name in found if name == "irbgen" or name.startswith("irbgen.")]


def import_edges() -> dict[tuple[str, str], list[str]]:
    """(importing unit, imported unit) -> the files where it happens."""
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        here = unit_of(module_name(path))
        for name in imports(path):
            there = unit_of(name)
            if there != here:
                edges[(here, there)].append(str(path.relative_to(PACKAGE.parent)))
    return edges


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")


MODULES = {module_name(path) for path in PACKAGE.rglob("*.py")}


def test_every_unit_has_a_layer():
    units = {unit_of(module_name(path)) for path in PACKAGE.rglob("*.py")}
    assert units - set(LAYER) == set(), "give each new module or package a layer in LAYERS"


def test_no_import_runs_upward():
    upward = [
        f"{here} (layer {LAYER[here]}) imports {there} (layer {LAYER[there]}) in {files[0]}"
        for (here, there), files in import_edges().items()
        if LAYER[there] > LAYER[here]
    ]
    assert upward == []


def cycles(graph: dict[str, set[str]]) -> list[str]:
    """Every cycle through each node, as "a -> b -> a"."""
    found = []
    for start in sorted(graph):
        stack, seen = [(start, [start])], set()
        while stack:
            node, path = stack.pop()
            for nxt in sorted(graph[node]):
                if nxt == start:
                    found.append(" -> ".join([*path, start]))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
    return found


def test_no_package_cycle():
    graph: dict[str, set[str]] = defaultdict(set)
    for here, there in import_edges():
        graph[here].add(there)
    assert cycles(graph) == []


def test_no_module_cycle():
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in modules.items():
        for name in imports(path):
            if name in modules and name != module and modules[name].name != "__init__.py":
                graph[module].add(name)
    assert cycles(graph) == []
