"""The package is layered: every module imports only its own layer and the layers below it.

Read from the bottom up (a module may import its own layer and any layer listed before it):

1. ``core``: ``sagewai.core`` (records, scopes, the store query types, text rules and the
   tokeniser, the fact lifecycle, the predicate vocabulary), with ``sagewai.errors`` (the one
   exception tree), ``sagewai._lazy`` (lazy package exports), ``sagewai._optional`` (the
   "pip install sagewai[extra]" guard) and ``sagewai._background`` (the private event loop that
   runs blocking calls): plumbing every layer uses and that uses nothing of ours.
2. ``embeddings`` and ``llm``: model adapters (the fake embedder is an embedder like the
   others). They need nothing but the core, and the episode stores use both (an episode's
   summary is embedded by the store, and may be written by an LLM), so they sit below storage.
3. ``stores``: ``sagewai.stores``, the backends, their contracts and the episode summarisers.
4. ``extraction``: ``sagewai.extraction`` reads text into facts with rules or an LLM
   and stores nothing, so the memory bridge of the context layer reads through it.
5. ``context``: the engine, the bridge, episodes, archives, and ``sagewai.graph`` (the graph's
   export and page; its backends are in ``stores``).
6. ``intelligence``: consolidation, the graph builder, entity and relation extraction.
7. ``agent``.
8. the front ends: ``sagewai.cli``, ``sagewai.integrations`` (``sagewai mcp`` serves the MCP
   integration) and ``sagewai.server`` (the HTTP API and dashboard that ``sagewai serve`` runs;
   the CLI resolves its ``--store`` locations there).
9. the top: ``sagewai.testing`` (test doubles and conformance suites may use anything) and the
   root package ``sagewai`` with ``sagewai.__main__`` (the facade that names the public API).

Every import statement counts: module level, inside functions, and under ``if TYPE_CHECKING:``
(a type-only import upward is still a dependency a reader must follow). Besides the layers, no
two packages may import each other, directly or around a longer loop, and no two modules may
import each other at module level (``TYPE_CHECKING`` imports included): a reader follows a
module's imports down, never around a circle back to it. An import inside a function (the lazy
import of an optional backend or of a default implementation) is not part of a circle.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "sagewai"

LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "core",
        frozenset(
            {
                "sagewai.core",
                "sagewai.errors",
                "sagewai._lazy",
                "sagewai._optional",
                "sagewai._background",
                "sagewai._logging",
                "sagewai._version",
            }
        ),
    ),
    ("embeddings/llm", frozenset({"sagewai.embeddings", "sagewai.llm"})),
    ("stores", frozenset({"sagewai.stores"})),
    ("extraction", frozenset({"sagewai.extraction"})),
    ("context", frozenset({"sagewai.context", "sagewai.graph"})),
    ("intelligence", frozenset({"sagewai.intelligence"})),
    ("agent", frozenset({"sagewai.agent"})),
    ("front ends", frozenset({"sagewai.cli", "sagewai.integrations", "sagewai.server"})),
    ("top", frozenset({"sagewai", "sagewai.__main__", "sagewai.testing"})),
)


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def _resolve(name: str) -> str | None:
    """The module of ours ``name`` refers to (a module, or the package holding an attribute)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


@functools.cache
def imports_of(module: str) -> frozenset[str]:
    """Every module of ours that ``module`` imports, wherever the import statement is."""
    return frozenset(_imports(module))


def _imports(module: str) -> Iterator[str]:
    yield from _targets(module, ast.parse(MODULES[module].read_text(encoding="utf-8")))


def _targets(module: str, tree: ast.AST) -> Iterator[str]:
    package = module if _is_package(module) else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            # `from pkg import module` imports that module; `from module import name` the module.
            targets = [f"{source}.{alias.name}" for alias in node.names] or [source]
        else:
            continue
        for target in targets:
            if not target.startswith("sagewai"):
                continue
            resolved = _resolve(target)
            if resolved is not None and resolved != module:
                yield resolved


@functools.cache
def module_level_imports_of(module: str) -> frozenset[str]:
    """The modules of ours that ``module`` imports outside any function (``TYPE_CHECKING``
    blocks included)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    outside: list[ast.stmt] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        outside.append(node)
        for field in ("body", "orelse", "handlers", "finalbody"):
            children = getattr(node, field, None)
            if isinstance(children, list):
                pending.extend(c for c in children if isinstance(c, ast.stmt))
    found = set()
    for node in outside:
        if isinstance(node, ast.Import | ast.ImportFrom):
            holder = ast.Module(body=[node], type_ignores=[])
            found.update(_targets(module, holder))
    return frozenset(found)


def module_cycles(graph: dict[str, frozenset[str]] | dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (each holds a circle)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def layer_of(module: str) -> int:
    """The index of the layer ``module`` belongs to (the longest matching prefix decides)."""
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                depth = prefix.count(".")
                if best is None or depth > best[0]:
                    best = (depth, index)
    assert best is not None, f"{module} belongs to no layer: add it to LAYERS"
    return best[1]


def upward_imports() -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for module in MODULES:
        own = layer_of(module)
        for target in imports_of(module):
            if layer_of(target) > own:
                found.add((module, target))
    return found


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


def test_no_module_imports_upward() -> None:
    found = upward_imports()
    unexpected = sorted(found)
    described = [
        f"{importer} ({LAYERS[layer_of(importer)][0]}) imports {target} "
        f"({LAYERS[layer_of(target)][0]})"
        for importer, target in unexpected
    ]
    assert not described, "upward imports:\n" + "\n".join(described)


def package_of(module: str) -> str:
    """The package a module belongs to; a module of the root (``sagewai.errors``) stands alone.

    A package's ``__init__`` is its door: it names what its modules and sub-packages hold, so it
    stands above them as a node of its own (``sagewai.context (door)``). The door of
    ``sagewai.context`` names the bridge, whose modules use the engine's modules: the door
    depends on both, and neither on the door.
    """
    if _is_package(module):
        return f"{module} (door)"
    parent = module.rpartition(".")[0]
    return module if parent == "sagewai" else parent


def package_graph() -> dict[str, set[str]]:
    """Package -> the other packages its modules import (sub-packages are packages too)."""
    graph: dict[str, set[str]] = {package_of(m): set() for m in MODULES}
    for module in MODULES:
        source = package_of(module)
        for target in imports_of(module):
            other = package_of(target)
            if other != source:
                graph[source].add(other)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One loop of the graph, as the packages around it, or ``None``."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                loop = visit(nxt)
                if loop is not None:
                    return loop
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            loop = visit(node)
            if loop is not None:
                return loop
    return None


def test_no_import_cycle_between_packages() -> None:
    graph = package_graph()
    loop = find_cycle(graph)
    assert loop is None, "packages import each other: " + " -> ".join(loop or [])


def test_no_module_level_circle() -> None:
    import sys

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    graph = {module: set(module_level_imports_of(module)) for module in MODULES}
    circles = module_cycles(graph)
    assert circles == [], "modules import each other: " + "; ".join(
        " <-> ".join(group) for group in circles
    )


def test_the_checks_catch_what_they_look_for() -> None:
    """The detectors themselves: a loop is found, and an upward import is seen."""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    assert module_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert module_cycles({"a": {"b"}, "b": set()}) == []
    assert "sagewai.context._engine" not in module_level_imports_of("sagewai.context._search")
    assert layer_of("sagewai.core._records") < layer_of("sagewai.stores.sqlite")
    assert layer_of("sagewai.extraction._rules") < layer_of("sagewai.context.bridge._bridge")
    assert layer_of("sagewai.context.bridge._bridge") < layer_of("sagewai.intelligence")
    assert "sagewai.core._records" in set(imports_of("sagewai.context._engine"))
