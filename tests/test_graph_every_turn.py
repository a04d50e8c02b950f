"""The graph on every turn, as the seed says (issue 42).

The seed's wiring builds a ``ConversationGraphBuilder`` over ``ctx.graph_store`` and a
``UniversalAgent`` with a bridge; its ``chat()`` turns must grow the graph. The user's name, once
given, shows in the facts about them, in this process and the next.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sagewai import ContextEngine, UniversalAgent
from sagewai.context import MemoryBridge
from sagewai.errors import ConfigurationError, InvalidInputError
from sagewai.intelligence import (
    ConversationGraphBuilder,
    GLiNEREntityExtractor,
    HeuristicRelationExtractor,
    HybridFactExtractor,
    RuleBasedFactExtractor,
)
from sagewai.stores import InMemoryGraphStore
from sagewai.testing import FakeEmbedder
from sagewai.testing._llm import ScriptedLLM

ROOT = Path(__file__).resolve().parent.parent
TURNS = (
    "We decided to migrate to Postgres next quarter.",
    "My name is Dana and I lead the platform team.",
    "I prefer short answers.",
    "My sister Eva lives in Oslo and she works at Initech.",
)


async def _graph(ctx: ContextEngine) -> tuple[set[tuple[str, str]], set[tuple[str, str, str]]]:
    graph = ctx.graph_store
    assert graph is not None
    entities = await graph.entities()
    names = {e.id: e.name for e in entities}
    relations = {
        (names[r.subject_id], r.predicate, names[r.object_id]) for r in await graph.relations()
    }
    return {(e.name, e.label) for e in entities}, relations


async def test_the_seed_wiring_as_written_grows_the_graph(tmp_path: Path) -> None:
    # DESIGN section 1, line for line; the scripted model stands in for gpt-4o.
    ctx = ContextEngine.local(tmp_path, project_id="proj_123", embedder=FakeEmbedder())
    bridge = MemoryBridge(
        context_engine=ctx,
        model="gpt-4o-mini",
        extract_every_n_turns=5,
        fact_extractor=HybridFactExtractor(),
    )
    graph_builder = ConversationGraphBuilder(  # noqa: F841 - built, and passed nowhere
        graph_store=ctx.graph_store,
        entity_extractor=GLiNEREntityExtractor(),
        relation_extractor=HeuristicRelationExtractor(),
    )
    agent = UniversalAgent(
        name="assistant",
        model="gpt-4o",
        context=ctx,
        memory_bridge=bridge,
        llm=ScriptedLLM(["Noted."] * len(TURNS)),
    )
    for turn in TURNS:
        assert await agent.chat(turn) == "Noted."
    entities, relations = await _graph(ctx)
    assert {
        ("Postgres", "technology"),
        ("Dana", "person"),
        ("Eva", "person"),
        ("Oslo", "location"),
        ("Initech", "organization"),
    } <= entities
    assert {
        ("Dana", "prefers", "short answers"),
        ("Dana", "sibling_of", "Eva"),
        ("Eva", "lives_in", "Oslo"),
        ("Eva", "works_at", "Initech"),  # "she" is Eva: the one person named before it
    } <= relations
    assert bridge.stats.graph_turns >= len(TURNS)
    assert bridge.stats.graph_failures == 0
    await agent.aclose()
    await ctx.close()


async def test_the_agent_hands_its_graph_builder_to_the_bridge() -> None:
    async with ContextEngine.in_memory(project_id="p", embedder=FakeEmbedder()) as ctx:
        graph = InMemoryGraphStore().for_project("p")
        builder = ConversationGraphBuilder(graph_store=graph)
        bridge = MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor())
        agent = UniversalAgent(
            name="helper", context=ctx, llm=ScriptedLLM(["Noted."]), memory_bridge=bridge,
            graph_builder=builder,
        )  # fmt: skip
        assert bridge.graph_builder is builder
        await agent.chat("I live in Lisbon.", user_id="ana")
        names = {e.name for e in await graph.entities()}
        assert {"ana", "Lisbon"} <= names
        await agent.aclose()


async def test_a_bridge_with_a_builder_updates_the_graph_without_an_agent() -> None:
    async with ContextEngine.in_memory(project_id="p", embedder=FakeEmbedder()) as ctx:
        graph = InMemoryGraphStore().for_project("p")
        bridge = MemoryBridge(
            context_engine=ctx,
            fact_extractor=RuleBasedFactExtractor(),
            graph_builder=ConversationGraphBuilder(graph_store=graph),
        )
        await bridge.process_message("My name is Dana and I work at Initech.", session_id="s1")
        await bridge.process_message("I moved to Lisbon.", session_id="s1")
        relations = {(r.predicate) for r in await graph.relations()}
        assert {"works_at", "lives_in"} <= relations
        assert {"Dana", "Initech", "Lisbon"} <= {e.name for e in await graph.entities()}


async def test_two_different_graph_builders_are_a_wiring_mistake() -> None:
    async with ContextEngine.in_memory(project_id="p", embedder=FakeEmbedder()) as ctx:
        graph = InMemoryGraphStore().for_project("p")
        bridge = MemoryBridge(
            context_engine=ctx, graph_builder=ConversationGraphBuilder(graph_store=graph)
        )
        with pytest.raises(ConfigurationError, match="different graph builders"):
            UniversalAgent(
                name="helper", context=ctx, llm=ScriptedLLM([]), memory_bridge=bridge,
                graph_builder=ConversationGraphBuilder(graph_store=graph),
            )  # fmt: skip
        shared = MemoryBridge(context_engine=ctx)
        UniversalAgent(name="first", context=ctx, llm=ScriptedLLM([]), memory_bridge=shared)
        default = shared.graph_builder  # over the engine's own (in-memory) graph store
        assert isinstance(default, ConversationGraphBuilder)
        mine = ConversationGraphBuilder(graph_store=graph)
        UniversalAgent(
            name="second", context=ctx, llm=ScriptedLLM([]), memory_bridge=shared,
            graph_builder=mine,
        )  # fmt: skip
        assert shared.graph_builder is mine  # a builder the user gives replaces a default
        with pytest.raises(ConfigurationError, match="process_turn"):
            bridge.graph_builder = object()  # type: ignore[assignment]


async def test_a_failing_graph_never_breaks_the_turn() -> None:
    class Broken:
        async def process_turn(self, message: str, **kwargs: object) -> object:
            from sagewai.errors import BackendUnavailableError

            raise BackendUnavailableError("graph down")

    async with ContextEngine.in_memory(project_id="p", embedder=FakeEmbedder()) as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, fact_extractor=RuleBasedFactExtractor(), graph_builder=Broken()
        )
        facts = await bridge.process_message("I moved to Lisbon.", session_id="s1")
        assert [f.object for f in facts] == ["Lisbon"]
        assert bridge.stats.graph_failures == 1
        assert await ctx.search("Lisbon")


async def test_the_users_name_shows_in_later_facts_and_survives_a_new_engine(
    tmp_path: Path,
) -> None:
    async with ContextEngine.local(tmp_path, project_id="p", embedder=FakeEmbedder()) as ctx:
        bridge = MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor())
        said = await bridge.process_message(
            "My name is Dana and I lead the platform team.", session_id="s1", user_id="u1"
        )
        assert "Dana (the user) leads the platform team." in [f.content for f in said]
        lead = next(f for f in said if "leads" in f.content)
        assert lead.subject == "user"  # one subject for the user's facts, before and after
        assert lead.metadata["user_name"] == "Dana"
        later = await bridge.process_message("I work at Initech.", session_id="s2", user_id="u1")
        assert [f.content for f in later] == ["Dana (the user) works at Initech."]
        other = await bridge.process_message("I work at Globex.", session_id="s3", user_id="u2")
        assert [f.content for f in other] == ["The user works at Globex."]  # not another's name
        await bridge.aclose()
    async with ContextEngine.local(tmp_path, project_id="p", embedder=FakeEmbedder()) as ctx:
        bridge = MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor())
        again = await bridge.process_message("I moved to Lisbon.", session_id="s4", user_id="u1")
        assert [f.content for f in again] == ["Dana (the user) moved to Lisbon."]
        assert bridge.user_name("u1") == "Dana"
        await bridge.aclose()


async def test_a_forgotten_name_is_not_used_again(tmp_path: Path) -> None:
    async with ContextEngine.local(tmp_path, project_id="p", embedder=FakeEmbedder()) as ctx:
        bridge = MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor())
        await bridge.process_message("My name is Dana.", session_id="s1", user_id="u1")
        await bridge.aclose()
        await ctx.forget(session_id="s1")
    async with ContextEngine.local(tmp_path, project_id="p", embedder=FakeEmbedder()) as ctx:
        bridge = MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor())
        facts = await bridge.process_message("I moved to Lisbon.", session_id="s2", user_id="u1")
        assert [f.content for f in facts] == ["The user moved to Lisbon."]
        assert await ctx.port.get_state("user_name:u1") is None  # erased, not only unused
        await bridge.aclose()


def test_acceptance_4_a_second_process_reads_back_names_and_values(tmp_path: Path) -> None:
    """Issue 42, acceptance 4: the seed's wiring as typed, offline, then a second process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("OPENAI_API_KEY", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "evals.seed_wiring",
            "--folder",
            str(tmp_path / "memory"),
            "--out",
            str(tmp_path / "seed_wiring.json"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (
        json.loads((tmp_path / "seed_wiring.json").read_text(encoding="utf-8"))["relations"]
        == (result["relations"])
    )
    assert result["first_result_names"] == {
        "database migration": True,
        "who leads the platform team": True,
        "answer style": True,
    }
    assert "Dana" in result["first"]["who leads the platform team"]
    assert ["Eva", "lives_in", "Oslo"] in result["relations"]
    assert ["Eva", "works_at", "Initech"] in result["relations"]
    assert ["Postgres", "technology"] in result["entities"]
    assert [f.split(" last year")[0] for f in result["later_facts"]] == [
        "Dana (the user) moved to Lisbon"
    ]


def _engine_on(backend: str, tmp_path: Path, postgres: tuple[str, str] | None) -> ContextEngine:
    """The same project on each backend: in memory, an embedded folder, PostgreSQL."""
    if backend == "memory":
        return ContextEngine.in_memory(project_id="p", embedder=FakeEmbedder())
    if backend == "local":
        return ContextEngine.local(tmp_path, project_id="p", embedder=FakeEmbedder())
    from sagewai.stores import InMemoryVectorStore, PostgresMetadataStore

    assert postgres is not None
    dsn, schema = postgres
    return ContextEngine(
        metadata_store=PostgresMetadataStore(dsn, schema=schema),
        vector_store=InMemoryVectorStore(FakeEmbedder().dimension),
        project_id="p",
        embedder=FakeEmbedder(),
    )


async def _names_stay_with_their_user(ctx: ContextEngine, *, persistent: bool) -> None:
    hostile = "My name is Robert'); DROP TABLE facts; -- and I lead the data team."
    bridge = MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor())
    said = await bridge.process_message(hostile, session_id="s1", user_id="u1")
    assert "Robert (the user) leads the data team." in [f.content for f in said]
    await bridge.process_message("My name is Dana.", session_id="s2", user_id="u2")
    works = await bridge.process_message("I work at Initech.", session_id="s3", user_id="u1")
    assert [f.content for f in works] == ["Robert (the user) works at Initech."]
    for text in ("my name is not important", "Call me maybe", "My name is "):
        await bridge.process_message(text, session_id="s4", user_id="u3")
    with pytest.raises(InvalidInputError):
        await bridge.process_message("My name is \x00", session_id="s4", user_id="u3")
    later = await bridge.process_message("I moved to Lisbon.", session_id="s5", user_id="u3")
    assert [f.content for f in later] == ["The user moved to Lisbon."]
    assert (bridge.user_name("u1"), bridge.user_name("u2")) == ("Robert", "Dana")
    await bridge.aclose()
    if persistent:  # a new bridge reads the names back from the store
        again = MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor())
        facts = await again.process_message("I moved to Oslo.", session_id="s6", user_id="u2")
        assert [f.content for f in facts] == ["Dana (the user) moved to Oslo."]
        await again.aclose()


@pytest.mark.parametrize("backend", ["memory", "local"])
async def test_names_stay_with_their_user_on_every_backend(backend: str, tmp_path: Path) -> None:
    async with _engine_on(backend, tmp_path, None) as ctx:
        await _names_stay_with_their_user(ctx, persistent=backend == "local")


async def test_names_stay_with_their_user_on_postgres(
    tmp_path: Path, postgres_dsn: str, postgres_schema: str
) -> None:
    ctx = _engine_on("postgres", tmp_path, (postgres_dsn, postgres_schema))
    await ctx.stores.metadata.migrate()
    async with ctx:
        await _names_stay_with_their_user(ctx, persistent=True)
