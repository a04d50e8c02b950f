"""The engine is the only door to its stores (issue #12, DESIGN §1; the port of issue #36).

Every module outside the engine reads the metadata and vector stores through the engine's port
(``ctx.port``: its reads and ``commit``) or a public engine method: none reaches a fact store
(``engine.stores.metadata``, ``engine.port.vectors``, ...), none calls a write method of any of
the four contracts on a store it found on an engine or its port (``engine.graph_store.apply``,
``engine.episodes.store.save_episode``: the port has ``apply_graph`` and the episode door
``ctx.episodes.save`` for that), none calls the engine's private parts, and none swaps an
engine's store by assignment. The check reads the source (``ast``), so it fails on the line that
breaks the rule, whether or not a test runs it.

The graph builder writes the graph view it is handed (DESIGN's wiring,
``ConversationGraphBuilder(graph_store=ctx.graph_store)``): that view is bound to the engine's
project and validates every record, and the builder never finds it on an engine.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import sagewai
from sagewai.context._engine import ContextEngine
from sagewai.stores.base._episodes import EpisodeStoreBase
from sagewai.stores.base._graph import GraphStore, ProjectGraph
from sagewai.stores.base._metadata import MetadataStore
from sagewai.stores.base._vector import VectorStore

PACKAGE = Path(sagewai.__file__).parent

METADATA_WRITES = ("apply", "delete_project", "migrate", "redact_changes", "set_state", "touch")
"""The write methods of the metadata contract (:class:`MetadataStore`)."""
VECTOR_WRITES = ("delete", "delete_project", "update_payloads", "upsert")
"""The write methods of the vector contract (:class:`VectorStore`)."""
GRAPH_WRITES = (
    "apply",
    "delete_all",
    "delete_entities",
    "delete_project",
    "delete_session",
    "delete_subject",
    "upsert_entities",
    "upsert_entity",
    "upsert_relation",
    "upsert_relations",
)
"""The write methods of the graph contract (:class:`GraphStore` and its :class:`ProjectGraph`)."""
EPISODE_WRITES = (
    "delete_project",
    "delete_session",
    "delete_user",
    "forget_subject",
    "put_episode",
    "redact_subject",
    "save_episode",
)
"""The write methods of the episode contract (:class:`EpisodeStoreBase`)."""
WRITES = frozenset(METADATA_WRITES + VECTOR_WRITES + GRAPH_WRITES + EPISODE_WRITES)

ENGINE_MODULES = frozenset(
    {
        "context/_access.py",
        "context/_access_log.py",
        "context/_commit_queue.py",
        "context/_engine.py",
        "context/_episode_access.py",
        "context/_forget_by_id.py",
        "context/_forgetting.py",
    }
)
"""The engine (its class, its port, its episode door, the body of its ``forget``): the only
callers."""
BACKEND_FOLDERS = ("stores/", "testing/")
"""Backends (and the shipped test doubles) implement the contracts and call their own methods."""

FACT_STORES = frozenset(
    {("stores", "metadata"), ("stores", "vectors"), ("port", "metadata"), ("port", "vectors")}
)
"""``<owner>.<attribute>`` pairs naming the fact stores of an engine (or of its port)."""
OTHER_STORES = frozenset(
    {
        ("stores", "graph"),
        ("stores", "episodes"),
        ("port", "graph"),
        ("port", "episode_store"),
        ("episodes", "store"),
    }
)
"""The pairs naming its graph and episode stores (readable, never written)."""
OTHER_ATTRIBUTES = frozenset({"graph_store"})
"""The engine's attribute naming its graph view (readable, never written)."""
SWAPPABLE = frozenset({"episode_store", "graph_store", "port", "stores"})
PRIVATE_ENGINE = frozenset(
    {"_access", "_episodes", "_searcher", "_stores", "_vectors", "_graph", "_refresh"}
)


def _is_store(node: ast.expr, aliases: set[str], *, any_store: bool = False) -> bool:
    """Whether ``node`` names a fact store (``x.stores.metadata``, ``x.port.vectors``, or a
    local name bound to one of those); with ``any_store``, the graph and episode stores too."""
    if isinstance(node, ast.Name):
        return node.id in aliases
    if not isinstance(node, ast.Attribute):
        return False
    owner = node.value.attr if isinstance(node.value, ast.Attribute) else None
    pair = (owner, node.attr)
    if pair in FACT_STORES:
        return True
    return any_store and (pair in OTHER_STORES or node.attr in OTHER_ATTRIBUTES)


def _aliases(tree: ast.AST) -> set[str]:
    """Names assigned an engine's store anywhere in the module (``g = engine.graph_store``)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            if value is None:
                continue
            pairs: list[tuple[ast.expr, ast.expr]] = []
            for target in targets:
                if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
                    pairs.extend(zip(target.elts, value.elts, strict=False))
                else:
                    pairs.append((target, value))
            for target, bound in pairs:
                if isinstance(target, ast.Name) and _is_store(bound, set(), any_store=True):
                    found.add(target.id)
    return found


def violations(source: str, where: str = "<source>") -> list[str]:
    """Every place in ``source`` that goes past the engine to a fact store."""
    tree = ast.parse(source)
    aliases = _aliases(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        line = f"{where}:{getattr(node, 'lineno', '?')}"
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in WRITES
            and _is_store(node.func.value, aliases, any_store=True)
        ):
            found.append(f"{line}: writes a store past the engine ({node.func.attr})")
        if isinstance(node, ast.Attribute) and _is_store(node, set()):
            found.append(f"{line}: reaches into the engine's {ast.unparse(node)}")
        if (
            isinstance(node, ast.Attribute)
            and node.attr in PRIVATE_ENGINE
            and not (isinstance(node.value, ast.Name) and node.value.id == "self")
        ):
            found.append(f"{line}: calls the engine's private {node.attr}")
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if (
                    isinstance(target, ast.Attribute)
                    and target.attr in SWAPPABLE
                    and not (isinstance(target.value, ast.Name) and target.value.id == "self")
                ):
                    found.append(f"{line}: swaps a store of an engine ({ast.unparse(target)})")
    return found


def _outside_the_engine() -> list[Path]:
    paths = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative in ENGINE_MODULES or relative.startswith(BACKEND_FOLDERS):
            continue
        paths.append(path)
    return paths


def test_the_listed_write_methods_are_the_contracts() -> None:
    for name in METADATA_WRITES:
        assert callable(getattr(MetadataStore, name)), name
    for name in VECTOR_WRITES:
        assert callable(getattr(VectorStore, name)), name
    for name in GRAPH_WRITES:
        assert callable(getattr(ProjectGraph, name, None) or getattr(GraphStore, name)), name
    for name in EPISODE_WRITES:
        assert callable(getattr(EpisodeStoreBase, name)), name


def test_the_check_finds_each_way_past_the_engine() -> None:
    source = (
        "async def f(engine, run):\n"
        "    await engine.port.vectors.update_payloads({})\n"
        "    store = engine.stores.metadata\n"
        "    await store.apply(batch)\n"
        "    await run.engine.stores.vectors.delete(['a'])\n"
        "    engine._access.commit(batch)\n"
        "    engine.stores = other\n"
        "    await engine.episodes.store.save_episode('s', messages)\n"
        "    graph = engine.graph_store\n"
        "    await graph.apply(write)\n"
        "    await self.context.stores.episodes.delete_user('u')\n"
    )
    found = violations(source)
    assert sum("writes a store" in v for v in found) == 6
    assert any("private _access" in v for v in found)
    assert any("swaps a store" in v for v in found)
    assert violations("async def f(engine):\n    await engine.port.commit(batch)\n") == []
    assert violations("async def f(e):\n    await e.episodes.save('s', messages)\n") == []
    reads = "async def f(engine):\n    g = engine.graph_store\n    await g.neighbours('e')\n"
    assert violations(reads) == []


@pytest.mark.parametrize(
    "path", _outside_the_engine(), ids=lambda p: p.relative_to(PACKAGE).as_posix()
)
def test_no_module_outside_the_engine_reaches_a_store(path: Path) -> None:
    relative = path.relative_to(PACKAGE).as_posix()
    assert violations(path.read_text(encoding="utf-8"), relative) == []


def test_the_engine_offers_what_subsystems_read() -> None:
    """The reads the subsystems use instead of the stores (a rename breaks them): the port's
    (every member of :class:`MemoryPort`) and the episode door's."""
    from sagewai.context._access import StoreAccess
    from sagewai.context._episode_access import EpisodeAccess
    from sagewai.core._port import MemoryPort

    port_members = [name for name in vars(MemoryPort) if not name.startswith("_")]
    assert {"commit", "find", "get_many", "nearest", "lock", "apply_graph"} <= set(port_members)
    for name in port_members:
        assert hasattr(StoreAccess, name), name
    for name in ("check", "get", "list", "search", "save", "restore", "attach"):
        assert callable(getattr(EpisodeAccess, name)), name
    assert isinstance(ContextEngine.port, property)
    assert isinstance(ContextEngine.episodes, property)
