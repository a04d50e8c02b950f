"""The public API is curated: this test changes whenever it does, on purpose."""

from __future__ import annotations

import subprocess
import sys

import pytest

import sagewai

EXPECTED = [
    "ChangeAction",
    "ContextEngine",
    "ContextScope",
    "Fact",
    "FactChange",
    "FactFields",
    "FactKind",
    "FactStatus",
    "FactType",
    "Provenance",
    "ScoreParts",
    "SearchConfig",
    "SearchResult",
    "UniversalAgent",
]


def test_all_is_curated_and_sorted() -> None:
    assert sagewai.__all__ == EXPECTED
    assert sorted(sagewai.__all__) == sagewai.__all__


def test_every_exported_name_resolves() -> None:
    for name in sagewai.__all__:
        value = getattr(sagewai, name)
        assert value is not None
        module = getattr(value, "__module__", "")
        assert module.startswith("sagewai"), (name, module)


def test_import_is_light_and_offline() -> None:
    code = (
        "import socket, sys\n"
        "def refuse(*a, **k): raise AssertionError('network touched at import')\n"
        "socket.socket.connect = refuse\n"
        "import sagewai\n"
        "heavy = {'numpy', 'onnxruntime', 'tokenizers', 'litellm', 'qdrant_edge',\n"
        "         'qdrant_client', 'asyncpg', 'torch', 'nebula3', 'gliner'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    env_free = {"PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env_free
    )
    assert out.stdout.strip() == "[]"


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="DoesNotExist"):
        sagewai.DoesNotExist  # type: ignore[attr-defined]  # noqa: B018


def test_the_design_documents_import_paths_work() -> None:
    """DESIGN.md §1: the import lines users copy from the documentation."""
    code = (
        "from sagewai import UniversalAgent, ContextEngine, ContextScope\n"
        "from sagewai.context import MemoryBridge\n"
        "from sagewai.context.episodes import EpisodeStore, PersistentEpisodeStore, Episode\n"
        "from sagewai.intelligence import (\n"
        "    MemoryConsolidator, ConversationGraphBuilder, FactExtractor,\n"
        "    RuleBasedFactExtractor, LLMFactExtractor, HybridFactExtractor,\n"
        "    GLiNEREntityExtractor, HeuristicRelationExtractor,\n"
        "    ExtractedFact, ConsolidationReport, GraphUpdateResult,\n"
        ")\n"
        "HybridFactExtractor(); GLiNEREntityExtractor(); HeuristicRelationExtractor()\n"
        "import sys\n"
        "print(sorted({'torch', 'litellm', 'gliner'} & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_intelligence_all_is_curated() -> None:
    import sagewai.intelligence as intelligence

    assert sorted(intelligence.__all__) == intelligence.__all__
    for name in intelligence.__all__:
        # The extractors' own package is sagewai.extraction; the seed names them here too.
        module = getattr(intelligence, name).__module__
        assert module.startswith(("sagewai.intelligence", "sagewai.extraction")), name


STORES = [
    "BatchWriter",
    "EpisodeStoreBase",
    "GraphMemory",
    "GraphStore",
    "GraphWrite",
    "InMemoryEpisodeStore",
    "InMemoryGraphStore",
    "InMemoryMetadataStore",
    "InMemoryVectorStore",
    "MetadataStore",
    "NebulaGraphStore",
    "PgVectorStore",
    "PostgresEpisodeStore",
    "PostgresMetadataStore",
    "ProjectGraph",
    "ProjectStores",
    "ProjectVectorStore",
    "QdrantEdgeVectorStore",
    "QdrantVectorStore",
    "SqliteEpisodeStore",
    "SqliteGraphStore",
    "SqliteMetadataStore",
    "SqliteVectorStore",
    "VectorStore",
    "resolve_stores",
]


def test_stores_export_every_backend() -> None:
    """Wiring your own engine needs one import path: ``sagewai.stores``."""
    import sagewai.stores as stores

    assert stores.__all__ == STORES
    for name in stores.__all__:
        value = getattr(stores, name)
        assert isinstance(value, type) or callable(value), name
        # GraphMemory is the seed's name of GraphStore.
        assert value.__name__ in {name, "GraphStore"}, name
    assert set(stores.__all__) <= set(dir(stores))


def test_importing_stores_loads_no_driver() -> None:
    code = (
        "import sys\n"
        "import sagewai.stores\n"
        "heavy = {'asyncpg', 'qdrant_client', 'qdrant_edge', 'nebula3', 'numpy'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_episode_stores_have_descriptive_names_beside_the_seed_names() -> None:
    from sagewai.context.episodes import EpisodeStore, PersistentEpisodeStore
    from sagewai.stores import InMemoryEpisodeStore, PostgresEpisodeStore, SqliteEpisodeStore

    assert InMemoryEpisodeStore is EpisodeStore
    assert PostgresEpisodeStore is PersistentEpisodeStore
    assert SqliteEpisodeStore.__module__.startswith("sagewai.stores.sqlite")


def test_context_package_exports_are_curated() -> None:
    import sagewai.context as context

    assert context.__all__ == sorted(context.__all__)
    for name in context.__all__:
        assert getattr(context, name).__module__.startswith("sagewai.context"), name


CORE = [
    "PROFILE_TAG",
    "BatchQueue",
    "ChangeQuery",
    "ChatMessage",
    "ContextScope",
    "Conversation",
    "FactQuery",
    "MemoryPort",
    "MessageLike",
    "Origin",
    "Predicate",
    "ProfileKind",
    "ScopeAddress",
    "Transition",
    "VectorFilter",
    "VectorHit",
    "VectorPayload",
    "VectorRecord",
    "WriteBatch",
    "clean_json",
    "clean_text",
    "context_record_id",
    "fact_id_for",
    "is_single_valued",
    "keyword_terms",
    "message_record_id",
    "new_id",
    "normalize_predicate",
    "origin_of",
    "relation_predicate",
    "utcnow",
    "validate_identifier",
]


def test_core_exports_are_curated_and_light() -> None:
    """A backend of your own needs the query types (the records are at the root): cheap."""
    import sagewai.core as core

    assert core.__all__ == CORE
    for name in core.__all__:
        value = getattr(core, name)
        if isinstance(value, type) or (callable(value) and hasattr(value, "__code__")):
            assert value.__module__.startswith("sagewai.core"), name  # not a type alias
    code = (
        "import sys\nimport sagewai.core\nprint(sorted({'numpy', 'pydantic'} & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# The public import paths examples and docs may use (STYLE.md rule 15).
_PUBLIC = (
    "sagewai",
    "sagewai.agent",
    "sagewai.context",
    "sagewai.context.archive",
    "sagewai.context.episodes",
    "sagewai.core",
    "sagewai.embeddings",
    "sagewai.errors",
    "sagewai.extraction",
    "sagewai.graph",
    "sagewai.integrations",
    "sagewai.intelligence",
    "sagewai.llm",
    "sagewai.stores",
    "sagewai.sync",
    "sagewai.testing",
    "sagewai.testing.conformance",
)

DESIGN_ALIASES = {
    ("sagewai", "ContextEngine"),
    ("sagewai", "ContextScope"),
    ("sagewai", "UniversalAgent"),
    ("sagewai.intelligence", "ExtractedFact"),
    ("sagewai.intelligence", "FactExtractor"),
    ("sagewai.intelligence", "HybridFactExtractor"),
    ("sagewai.intelligence", "LLMFactExtractor"),
    ("sagewai.intelligence", "RuleBasedFactExtractor"),
}
"""DESIGN.md section 1's import lines that name a class outside its own package."""


def _public_packages() -> list[str]:
    import pkgutil

    return ["sagewai"] + [
        info.name
        for info in pkgutil.walk_packages(sagewai.__path__, "sagewai.")
        if info.ispkg and not any(part.startswith("_") for part in info.name.split("."))
    ]


def test_every_public_name_has_one_home() -> None:
    """A name is exported by one package only, but for the seed's documented import paths; the
    implementation folders (``sagewai.stores.sqlite``, ``sagewai.context.bridge``, ...) export
    nothing of their own."""
    import importlib

    from sagewai.errors import MissingDependencyError

    homes: dict[str, list[str]] = {}
    for package in _public_packages():
        try:
            module = importlib.import_module(package)
        except MissingDependencyError:  # an adapter whose framework is installed elsewhere
            continue
        for name in getattr(module, "__all__", []):
            if (package, name) not in DESIGN_ALIASES:
                homes.setdefault(name, []).append(package)
    assert {name: where for name, where in homes.items() if len(where) > 1} == {}
    for package, name in DESIGN_ALIASES:
        module = importlib.import_module(package)
        assert name in module.__all__, (package, name)
    for folder in ("sagewai.stores.sqlite", "sagewai.context.bridge", "sagewai.stores.base"):
        assert not hasattr(importlib.import_module(folder), "__all__"), folder


def test_examples_import_only_public_paths() -> None:
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "examples"
    offenders = []
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                public = name in _PUBLIC or name.startswith("sagewai.integrations.")
                if name.split(".")[0] == "sagewai" and not public:
                    offenders.append(f"{path.name}: {name}")
    assert offenders == []


def test_docs_import_only_public_paths() -> None:
    """The Python blocks of the README and docs/ import packages, never a private module."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    pattern = re.compile(
        r"^\s*(?:>>> )?(?:from (sagewai[\w.]*) import|import (sagewai[\w.]*))", re.M
    )
    offenders = []
    for path in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for block in re.findall(r"```python\n(.*?)```", text, flags=re.S):
            for match in pattern.finditer(block):
                name = match.group(1) or match.group(2)
                if any(part.startswith("_") for part in name.split(".")):
                    offenders.append(f"{path.name}: {name}")
    assert offenders == []
