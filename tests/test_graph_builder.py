"""The conversation graph builder: entity merging, relation supersession, fallbacks, forgetting."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sagewai.embeddings._fake import FakeEmbedder
from sagewai.errors import ConfigurationError, ExtractionError
from sagewai.graph import Entity
from sagewai.intelligence._entities import ExtractedEntity, GLiNEREntityExtractor
from sagewai.intelligence._graph_builder import ConversationGraphBuilder, GraphUpdateResult
from sagewai.intelligence._relations import ExtractedRelation, HeuristicRelationExtractor
from sagewai.stores import InMemoryGraphStore, ProjectGraph, SqliteGraphStore

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def graph() -> ProjectGraph:
    return InMemoryGraphStore().for_project("p")


async def names(g: ProjectGraph) -> dict[str, str]:
    return {e.id: e.name for e in await g.entities()}


async def triples(g: ProjectGraph, *, active_only: bool = False) -> list[tuple[str, str, str]]:
    by_id = await names(g)
    return [
        (by_id[r.subject_id], r.predicate, by_id[r.object_id])
        for r in await g.relations(active_only=active_only)
    ]


async def test_a_short_conversation_builds_entities_and_relations() -> None:
    g = graph()
    builder = ConversationGraphBuilder(graph_store=g)
    result = await builder.process_conversation(
        [
            {"role": "user", "name": "Ana", "content": "I work at Initech and I use PostgreSQL."},
            {
                "role": "user",
                "name": "Ana",
                "content": "My sister Eva lives in Berlin.",
                "id": "m2",
            },
            {"role": "assistant", "content": "Nice! Berlin is lovely."},
        ],
        session_id="s1",
    )
    assert result.total_messages == 3
    assert set(await triples(g)) == {
        ("Ana", "works_at", "Initech"),
        ("Ana", "uses", "PostgreSQL"),
        ("Ana", "sibling_of", "Eva"),
        ("Eva", "lives_in", "Berlin"),
    }
    assert result.relations_added == 4
    labels = {e.name: e.label for e in await g.entities()}
    assert labels == {
        "Ana": "person",
        "Initech": "organization",
        "PostgreSQL": "technology",
        "Eva": "person",
        "Berlin": "location",
    }
    assert result.entities_added == 5
    assert result.entities_merged >= 2  # "Ana" again in turn 2, "Berlin" in turn 3
    [lives] = await g.relations(predicate="lives_in")
    assert lives.sources[0].message_id == "m2"
    assert lives.sources[0].session_id == "s1"
    assert all(e.session_ids == ("s1",) for e in await g.entities())


async def test_entities_merge_by_normalised_name_and_alias() -> None:
    g = graph()
    eva = await g.upsert_entity(Entity(project_id="p", name="Eva Lind", aliases=("Evi",)))
    builder = ConversationGraphBuilder(graph_store=g)
    first = await builder.process_turn("I met EVA LIND. at noon", speaker="Ana")
    second = await builder.process_turn("I called Evi yesterday.", speaker="Ana")
    assert [e.id for e in await g.entities_named("eva lind")] == [eva.id]
    # Turn 1 folds "EVA LIND" into Eva (Ana is new); turn 2 folds "Evi" and the speaker Ana.
    assert (first.entities_added, first.entities_merged) == (1, 1)
    assert (second.entities_added, second.entities_merged) == (0, 2)
    assert len(await g.entities(label="person")) == 2  # Ana and Eva, nothing else
    stored = await g.get_entity(eva.id)
    assert stored is not None
    assert stored.aliases == ("Evi",)


async def test_embedding_similarity_merges_at_the_threshold() -> None:
    g = graph()
    await g.upsert_entity(Entity(project_id="p", name="Acme Robotics Labs", label="organization"))
    close = ConversationGraphBuilder(graph_store=g, embedder=FakeEmbedder(), dedup_threshold=0.6)
    result = await close.process_turn("I work at Acme Robotics Lab", speaker="Ana")
    assert result.entities_merged == 1
    [acme] = await g.entities(label="organization")
    assert acme.name == "Acme Robotics Labs"
    assert acme.aliases == ("Acme Robotics Lab",)
    strict = ConversationGraphBuilder(
        graph_store=InMemoryGraphStore().for_project("p"),
        embedder=FakeEmbedder(),
        dedup_threshold=0.99,
    )
    await strict.graph.upsert_entity(
        Entity(project_id="p", name="Acme Robotics Labs", label="organization")
    )
    await strict.process_turn("I work at Acme Robotics Lab", speaker="Ana")
    assert len(await strict.graph.entities(label="organization")) == 2


async def test_a_new_single_valued_value_closes_the_old_edge() -> None:
    g = graph()
    builder = ConversationGraphBuilder(graph_store=g)
    await builder.process_turn("I live in Paris.", speaker="Ana", timestamp=T0, message_id="m1")
    moved = await builder.process_turn(
        "I moved to Lisbon!", speaker="Ana", timestamp=T0 + timedelta(days=30), message_id="m2"
    )
    assert (moved.relations_added, moved.relations_superseded) == (1, 1)
    by_object = {
        (await g.get_entity(r.object_id)).name: r  # type: ignore[union-attr]
        for r in await g.relations(predicate="lives_in")
    }
    paris, lisbon = by_object["Paris"], by_object["Lisbon"]
    assert paris.valid_to == T0 + timedelta(days=30)
    assert paris.superseded_by == lisbon.id
    assert lisbon.is_active
    assert lisbon.valid_from == T0 + timedelta(days=30)
    # History stays answerable: where did Ana live on a given day?
    assert [r.id for r in await g.relations(valid_at=T0 + timedelta(days=1))] == [paris.id]
    assert [r.id for r in await g.relations(valid_at=T0 + timedelta(days=40))] == [lisbon.id]


async def test_multi_valued_relations_accumulate_and_repeats_reinforce() -> None:
    g = graph()
    builder = ConversationGraphBuilder(graph_store=g)
    await builder.process_turn("I like hiking.", speaker="Ana", message_id="m1")
    await builder.process_turn("I like painting.", speaker="Ana", message_id="m2")
    again = await builder.process_turn("I really like hiking!", speaker="Ana", message_id="m3")
    assert (again.relations_added, again.relations_reinforced) == (0, 1)
    likes = await g.relations(predicate="likes", active_only=True)
    assert len(likes) == 2
    hiking = next(r for r in likes if r.message_ids[0] == "m1")
    assert hiking.message_ids == ("m1", "m3")


async def test_two_values_in_one_message_both_stand() -> None:
    g = graph()
    builder = ConversationGraphBuilder(graph_store=g)
    result = await builder.process_turn("I work at Initech. I also work at Globex.", speaker="Ana")
    assert (result.relations_added, result.relations_superseded) == (2, 0)
    assert len(await g.relations(predicate="works_at", active_only=True)) == 2


async def test_first_person_without_a_speaker_is_the_role() -> None:
    g = graph()
    await ConversationGraphBuilder(graph_store=g).process_turn("I live in Oslo.")
    assert await triples(g) == [("user", "lives_in", "Oslo")]


async def test_bad_messages_are_skipped_and_counted() -> None:
    g = graph()
    builder = ConversationGraphBuilder(graph_store=g)
    result = await builder.process_conversation(
        [
            {"role": "user", "content": ""},
            {"role": "user"},
            "not a dict",
            {"role": "user", "content": "\x00\x01 I live in Rome \ud800."},
            {"role": "user", "content": "x" * 200_000},
        ]
    )
    assert (result.total_messages, result.messages_skipped) == (5, 3)
    assert await triples(g) == [("user", "lives_in", "Rome")]


class MissingModelExtractor:
    """An entity extractor whose model is missing (a GLiNER without weights)."""

    calls = 0

    async def extract(self, text: str) -> list[ExtractedEntity]:
        MissingModelExtractor.calls += 1
        return await GLiNEREntityExtractor("/nonexistent/gliner-model").extract(text)


async def test_a_missing_model_falls_back_once_and_never_crashes_the_loop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    g = graph()
    builder = ConversationGraphBuilder(
        graph_store=g,
        entity_extractor=GLiNEREntityExtractor("/nonexistent/gliner-model"),
        relation_extractor=HeuristicRelationExtractor(),
    )
    with caplog.at_level(logging.WARNING, logger="sagewai.intelligence._graph_builder"):
        for text in ("I moved to Lisbon.", "My friend Rui works at Globex.", "I use Rust."):
            await builder.process_turn(text, speaker="Ana")
    warnings = [r for r in caplog.records if "rule-based" in r.getMessage()]
    assert len(warnings) == 1
    assert "SAGEWAI_GLINER_MODEL" in warnings[0].getMessage()
    assert {t[2] for t in await triples(g)} == {"Lisbon", "Rui", "Globex", "Rust"}


class FlakyExtractor:
    async def extract(self, text: str) -> list[ExtractedEntity]:
        raise ExtractionError("model returned garbage")


class FailingRelations:
    async def extract(
        self,
        text: str,
        *,
        speaker: str | None = None,
        entities: Sequence[ExtractedEntity] = (),
    ) -> list[ExtractedRelation]:
        raise ExtractionError("relation model down")


async def test_extraction_errors_fall_back_per_message(caplog: pytest.LogCaptureFixture) -> None:
    g = graph()
    builder = ConversationGraphBuilder(
        graph_store=g, entity_extractor=FlakyExtractor(), relation_extractor=FailingRelations()
    )
    with caplog.at_level(logging.WARNING):
        await builder.process_turn("Berlin and Paris", speaker="Ana")
        await builder.process_turn("Rome too", speaker="Ana")
    assert {e.name for e in await g.entities()} == {"Ana", "Berlin", "Paris", "Rome"}
    assert await g.relations() == []
    assert len([r for r in caplog.records if "failed" in r.getMessage()]) == 2  # one per kind


async def test_entities_per_message_are_capped_by_score() -> None:
    g = graph()
    builder = ConversationGraphBuilder(graph_store=g, max_entities_per_message=2)
    await builder.process_turn("Paris, Berlin, Rome, Oslo and https://example.com/a/b are cited.")
    assert {e.name for e in await g.entities()} == {"https://example.com/a/b", "Paris"}


async def test_builder_accepts_a_hand_built_sqlite_view_and_persists(tmp_path: Path) -> None:
    store = SqliteGraphStore(tmp_path)
    builder = ConversationGraphBuilder(graph_store=store.for_project("p"))
    await builder.process_turn("I live in Porto.", speaker="Ana", session_id="s1")
    await store.close()
    reopened = SqliteGraphStore(tmp_path / "graph.sqlite3").for_project("p")
    assert await triples(reopened) == [("Ana", "lives_in", "Porto")]
    assert (await reopened.delete_session("s1")).entities_deleted == 2
    assert await reopened.entities() == []
    await reopened.close()


async def test_builder_needs_a_project_graph() -> None:
    with pytest.raises(ConfigurationError):
        ConversationGraphBuilder(graph_store=None)
    with pytest.raises(ConfigurationError, match="project_id"):
        ConversationGraphBuilder(graph_store=InMemoryGraphStore())
    builder = ConversationGraphBuilder(graph_store=InMemoryGraphStore(), project_id="p")
    assert builder.graph.project_id == "p"


def test_results_add_up() -> None:
    total = GraphUpdateResult(entities_added=1, total_messages=1) + GraphUpdateResult(
        entities_merged=2, relations_added=3, total_messages=1, relations_superseded=1
    )
    assert total == GraphUpdateResult(
        entities_added=1,
        entities_merged=2,
        relations_added=3,
        total_messages=2,
        relations_superseded=1,
    )
