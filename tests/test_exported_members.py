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
    "FactKind",
    "FactStatus",
    "FactType",
    "Provenance",
    "SagewaiError",
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
        assert getattr(intelligence, name).__module__.startswith("sagewai.intelligence")
