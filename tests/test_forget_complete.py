"""Forgetting is complete, with a receipt (issue 37, acceptance 2; DESIGN invariants 3, 4, 12).

A store is filled from a LoCoMo dev conversation the way a user fills it: ``MemoryBridge`` with
the rule extractor, episodes on, a write-ahead journal, and a knowledge graph built from the same
turns. Then ``forget(subject=X)`` for a person named in many turns. Every store is scanned
afterwards (records of every status and kind, their vectors, the graph, the episodes, the journal
files and the audit rows' text) and none may hold X as a word; the receipt's counts must be what
each store lost, and a dry run's receipt must be the real run's. On every backend: in memory, the
embedded folder (SQLite, the embedded vector engine, SQLite graph and episodes) and PostgreSQL
with pgvector.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sagewai import ContextEngine
from sagewai.context import BridgeTurn, MemoryBridge
from sagewai.context._naming import FACT_TEXT_FIELDS, PROVENANCE_TEXT_FIELDS, record_names
from sagewai.context.bridge._journal import WriteAheadJournal
from sagewai.context.episodes import Episode
from sagewai.core._conversation import ChatMessage, Conversation
from sagewai.core._episode_records import subject_pattern
from sagewai.core._graph_records import Entity, Relation
from sagewai.core._queries import ChangeQuery, FactQuery, VectorFilter
from sagewai.core._records import Fact, FactChange, FactKind, FactStatus, Provenance
from sagewai.intelligence import ConversationGraphBuilder, RuleBasedFactExtractor
from sagewai.stores import (
    InMemoryEpisodeStore,
    InMemoryGraphStore,
    InMemoryMetadataStore,
    InMemoryVectorStore,
    PgVectorStore,
    PostgresEpisodeStore,
    PostgresMetadataStore,
    SqliteGraphStore,
)
from sagewai.testing import FakeEmbedder

LOCOMO = Path("/work/shared/data/locomo/locomo_dev.json")
SAMPLE = "conv-26"
TURNS = 150
SUBJECT = "Melanie"
"""A speaker of conv-26, named by the other speaker in many turns ("Mel" is another word)."""
WORD = re.compile(r"(?<!\w)melanie(?!\w)", re.IGNORECASE)
DIMENSION = 64

pytestmark = pytest.mark.skipif(not LOCOMO.exists(), reason="LoCoMo dev data not found")


def names(value: Any) -> bool:
    """Whether any string in a JSON-like value (ids and keys included) holds the subject."""
    if isinstance(value, str):
        return WORD.search(value) is not None
    if isinstance(value, dict):
        return any(names(k) or names(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(names(item) for item in value)
    return False


def locomo_sessions() -> list[tuple[str, list[dict[str, Any]]]]:
    """The first ``TURNS`` turns of the sample, as chat messages per session."""
    data = json.loads(LOCOMO.read_text())
    conversation = next(s for s in data if s["sample_id"] == SAMPLE)["conversation"]
    sessions: list[tuple[str, list[dict[str, Any]]]] = []
    left = TURNS
    number = 1
    while left > 0 and f"session_{number}" in conversation:
        turns = conversation[f"session_{number}"][:left]
        messages = [
            {
                "role": "user",
                "content": turn["text"]
                + (f" [shares {turn['blip_caption']}]" if turn.get("blip_caption") else ""),
                "speaker": turn["speaker"],
                "id": turn["dia_id"],
            }
            for turn in turns
        ]
        sessions.append((f"{SAMPLE}-s{number}", messages))
        left -= len(turns)
        number += 1
    return sessions


@dataclass
class Backend:
    engine: ContextEngine
    journal_path: Path | None
    """``None``: the engine's folder keeps the bridge's default journal."""
    folder: Path


@pytest.fixture(params=["memory", "local", "postgres"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    embedder = FakeEmbedder(DIMENSION)
    if request.param == "memory":
        engine = ContextEngine(
            metadata_store=InMemoryMetadataStore(),
            vector_store=InMemoryVectorStore(DIMENSION),
            graph_store=InMemoryGraphStore(),
            episode_store=InMemoryEpisodeStore(embedder=embedder),
            embedder=embedder,
            project_id="locomo",
        )
        async with engine:
            yield Backend(engine, tmp_path / "bridge.journal", tmp_path)
        return
    if request.param == "local":
        engine = ContextEngine.local(tmp_path / "store", project_id="locomo", embedder=embedder)
        async with engine:
            yield Backend(engine, None, tmp_path / "store")
        return
    dsn = request.getfixturevalue("pgvector_dsn")
    schema = f"sagewai_test_{uuid.uuid4().hex[:12]}"
    metadata = PostgresMetadataStore(dsn, schema=schema)
    vectors = PgVectorStore(dsn, dimension=DIMENSION, schema=schema)
    episodes = PostgresEpisodeStore(dsn, schema=schema, embedder=embedder)
    async with metadata, vectors:
        await metadata.migrate()
        await vectors.migrate()
    await episodes.migrate()
    engine = ContextEngine(
        metadata_store=metadata,
        vector_store=vectors,
        graph_store=SqliteGraphStore(tmp_path / "graph.sqlite3"),
        episode_store=episodes,
        embedder=embedder,
        project_id="locomo",
    )
    try:
        async with engine:
            yield Backend(engine, tmp_path / "bridge.journal", tmp_path)
    finally:
        async with PostgresMetadataStore(dsn, schema=schema) as cleanup:
            await cleanup._pool.execute(f'DROP SCHEMA "{schema}" CASCADE')  # the test's teardown


async def fill(backend: Backend) -> None:
    """The conversation through the bridge and the graph builder, plus a few records that
    exercise other kinds and statuses (a document, an archived fact, an audit reason)."""
    ctx = backend.engine
    options: dict[str, Any] = (
        {} if backend.journal_path is None else {"journal_path": backend.journal_path}
    )
    bridge = MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor(), **options)
    builder = ConversationGraphBuilder(graph_store=ctx.graph_store)
    sessions = locomo_sessions()
    for session_id, messages in sessions[:-1]:  # whole sessions, each saved as an episode
        await bridge.bridge_conversation(Conversation.of(messages, session_id=session_id))
        await builder.process_conversation(messages, session_id=session_id)
    session_id, messages = sessions[-1]
    for message in messages:  # turn by turn, as an agent does: each journaled first
        await bridge.process_message(message, session_id=session_id)
    await builder.process_conversation(messages, session_id=session_id)
    await bridge.aclose()
    await ctx.add_document(
        "Support group notes. Melanie brought her kids; Caroline spoke about adoption.",
        document_id="notes",
    )
    old = await ctx.add("Melanie ran a charity race.", subject="Melanie")
    await ctx.set_status(old.id, FactStatus.ARCHIVED, reason="archived by hand")
    kept = await ctx.add("Caroline is researching adoption agencies.", subject="Caroline")
    # A kept record's audit row whose text names the subject: redacted, not deleted.
    await ctx.set_status(kept.id, FactStatus.FLAGGED, reason="Melanie doubts it")


@dataclass
class Snapshot:
    records: dict[str, Fact]
    vectors: int
    entities: list[Entity]
    relations: list[Relation]
    episodes: dict[str, Episode]
    journal: list[dict[str, Any]]
    """The accepted entries in the journal files."""
    audit: list[FactChange]


def journal_files(backend: Backend) -> list[Path]:
    if backend.journal_path is not None:
        return [backend.journal_path] if backend.journal_path.exists() else []
    return sorted(backend.folder.glob("bridge-*.journal*"))


async def snapshot(backend: Backend, scope_keys: tuple[str, ...] | None = None) -> Snapshot:
    ctx = backend.engine
    port = ctx.port
    records = {f.id: f async for f in port.iter_facts(FactQuery(project_id=ctx.project_id))}
    keys = scope_keys or tuple(sorted({f.scope_key for f in records.values()}))
    vectors = await port.vectors.count(VectorFilter(scope_keys=keys, statuses=None))
    graph = ctx.graph_store
    assert graph is not None
    store = port.episode_store
    assert store is not None
    episodes = await store.list_episodes(project_id=ctx.project_id, limit=10_000)
    journal = []
    for path in journal_files(backend):
        for line in path.read_bytes().splitlines():
            record = json.loads(line.partition(b"\t")[2])
            if record.get("op") == "accept":
                journal.append(record)
    return Snapshot(
        records=records,
        vectors=vectors,
        entities=await graph.entities(),
        relations=await graph.relations(),
        episodes={e.id: e for e in episodes},
        journal=journal,
        audit=await port.changes(ChangeQuery(project_id=ctx.project_id)),
    )


def kind_of(record: Fact) -> str:
    if record.kind is FactKind.DOCUMENT:
        return "documents"
    if record.kind is FactKind.MESSAGE:
        return "context_records" if "context_chars" in record.metadata else "messages"
    return "facts"


async def test_forget_subject_leaves_no_trace_and_the_receipt_counts_it(
    backend: Backend,
) -> None:
    await fill(backend)
    ctx = backend.engine
    before = await snapshot(backend)
    keys = tuple(sorted({f.scope_key for f in before.records.values()}))
    # The store really holds the subject everywhere the scan looks.
    named = {i for i, f in before.records.items() if names(f.model_dump(mode="json"))}
    assert len(named) > 50
    assert {f.status for i, f in before.records.items() if i in named} >= {
        FactStatus.ACTIVE,
        FactStatus.ARCHIVED,
    }
    assert {kind_of(before.records[i]) for i in named} == {
        "facts",
        "messages",
        "context_records",
        "documents",
    }
    assert any(names(e.model_dump(mode="json")) for e in before.entities)
    assert any(names(e.model_dump(mode="json")) for e in before.episodes.values())
    assert any(names(entry) for entry in before.journal)
    assert any(names(c.model_dump(mode="json")) for c in before.audit)

    preview = await ctx.forget(subject=SUBJECT, dry_run=True)
    assert preview.dry_run
    assert await snapshot(backend, keys) == before  # the dry run changed nothing

    done = await ctx.forget(subject=SUBJECT, reason=f"{SUBJECT} asked us to forget her")
    assert not done.dry_run
    assert preview == done
    after = await snapshot(backend, keys)

    # No store holds the subject as a word, in any field.
    assert not [f.content for f in after.records.values() if names(f.model_dump(mode="json"))]
    assert not [e.name for e in after.entities if names(e.model_dump(mode="json"))]
    assert not [r.id for r in after.relations if names(r.model_dump(mode="json"))]
    assert not [e.id for e in after.episodes.values() if names(e.model_dump(mode="json"))]
    assert not [entry["id"] for entry in after.journal if names(entry)]
    for path in journal_files(backend):
        assert not WORD.search(path.read_text(encoding="utf-8"))
    assert not [c.id for c in after.audit if names(c.model_dump(mode="json"))]
    gone = set(before.records) - set(after.records)
    assert await ctx.port.get_vectors(sorted(gone)) == {}
    # ... and search cannot find it.
    for result in await ctx.search("Melanie", top_k=20):
        assert not names(result.fact.model_dump(mode="json"))

    # What was not about the subject is still there ("Mel" is another word).
    assert any("Mel" in f.content for f in after.records.values())
    assert len(after.records) > 100
    assert after.entities
    assert after.episodes

    # The receipt counts what each store lost.
    by_kind = {"facts": 0, "messages": 0, "context_records": 0, "documents": 0}
    for record_id in gone:
        by_kind[kind_of(before.records[record_id])] += 1
    assert (done.facts, done.messages, done.context_records, done.documents) == (
        by_kind["facts"],
        by_kind["messages"],
        by_kind["context_records"],
        by_kind["documents"],
    )
    assert gone >= named
    assert done.facts_deleted == len(gone) == len(before.records) - len(after.records)
    assert done.vectors == before.vectors - after.vectors > 0
    assert done.graph_entities == len(before.entities) - len(after.entities) > 0
    assert done.graph_relations == len(before.relations) - len(after.relations)
    assert done.graph_items_deleted == done.graph_entities + done.graph_relations
    removed = set(before.episodes) - set(after.episodes)
    changed = {
        i for i in after.episodes if after.episodes[i].messages != before.episodes[i].messages
    }
    assert (done.episodes_removed, done.episodes_redacted) == (len(removed), len(changed))
    assert done.episodes_deleted == len(removed) + len(changed) > 0
    messages_before = sum(len(e.messages) for e in before.episodes.values())
    messages_after = sum(len(e.messages) for e in after.episodes.values())
    assert done.episode_messages == messages_before - messages_after > 0
    assert done.journal_entries == sum(1 for entry in before.journal if names(entry)) > 0
    assert done.journals_locked == 0
    assert done.audit_rows_removed == sum(1 for c in before.audit if c.fact_id in gone)
    redacted = [c for c in before.audit if c.fact_id not in gone and names(c.model_dump())]
    assert done.audit_rows_redacted == len(redacted) > 0
    # The audit keeps that something was forgotten, when and by whom: one tombstone a record.
    tombstones = [c for c in after.audit if c.fact_id in gone]
    assert len(tombstones) == len(gone)
    assert {(c.action.value, c.actor, c.rule) for c in tombstones} == {
        ("deleted", "engine", "engine.forget")
    }
    assert {c.reason for c in tombstones} == {"[forgotten] asked us to forget her"}
    kept_rows = {c.id: c for c in after.audit}
    for row in redacted:
        new = kept_rows[row.id]
        kept_fields = (new.action, new.at, new.actor, new.rule, new.fact_id)
        assert kept_fields == (row.action, row.at, row.actor, row.rule, row.fact_id)

    # Forgetting again finds nothing: the receipt is empty.
    again = await ctx.forget(subject=SUBJECT)
    assert again.facts_deleted == again.graph_items_deleted == again.episodes_deleted == 0
    assert again.journal_entries == again.audit_rows_redacted == 0


# ----------------------------------------------------------------- the rules, on every backend


async def test_a_subject_is_forgotten_as_a_word_wherever_it_stands(backend: Backend) -> None:
    """The issue's defect: "The user works at Initech with Bob." stayed active after forgetting
    Bob (facts were matched on an exact subject or object) and was then the top hit."""
    ctx = backend.engine
    kept = [
        await ctx.add("Bobby plays chess on Sundays.", subject="Bobby"),
        await ctx.add("The bobsleigh team trains in Innsbruck."),
        await ctx.add("Zoëy paints murals.", subject="Zoëy"),
    ]
    await ctx.add("The user works at Initech with Bob.", subject="user")
    await ctx.add("Bob's manager is Ana.", subject="manager", object="Ana")
    await ctx.add("Ana reports to BOB.", subject="Ana")
    await ctx.add("Lunch with Ana.", tags=("bob",))
    await ctx.add("A meeting.", metadata={"attendees": ["Ana", "Bob Smith"]})
    await ctx.add("ZOË runs the café.", subject="ZOË")
    superseded = await ctx.add("Bob lives in Oslo.", subject="Bob")
    await ctx.supersede(superseded.id, "Bob moved to Bergen.", reason="moved")
    receipt = await ctx.forget(subject="bob")
    assert receipt.facts_deleted == 7
    assert (await ctx.forget(subject="Zoë")).facts_deleted == 1
    left = {f.id async for f in ctx.port.iter_facts(FactQuery(project_id=ctx.project_id))}
    assert left == {fact.id for fact in kept}
    assert [r.fact.content for r in await ctx.search("Bob Initech", top_k=5)] != []
    for result in await ctx.search("Bob Initech", top_k=5):
        assert not re.search(r"(?<!\w)bob(?!\w)", result.fact.content, re.IGNORECASE)


async def test_forgetting_within_a_session_leaves_the_other_sessions(backend: Backend) -> None:
    ctx = backend.engine
    await ctx.add("Bob fixed the boiler.", session_id="s1")
    other = await ctx.add("Bob paid the rent.", session_id="s2")
    preview = await ctx.forget(subject="Bob", session_id="s1", dry_run=True)
    done = await ctx.forget(subject="Bob", session_id="s1")
    assert preview == done
    assert done.facts_deleted == 1
    assert [f.id async for f in ctx.port.iter_facts(FactQuery(project_id=ctx.project_id))] == [
        other.id
    ]


@pytest.mark.parametrize("criteria", [{"session_id": "s1"}, {"user_id": "u1"}, {}])
async def test_the_dry_run_of_a_session_a_user_or_everything_is_the_real_run(
    backend: Backend, criteria: dict[str, str]
) -> None:
    await fill_small(backend)
    ctx = backend.engine
    named: dict[str, Any] = dict(criteria) or {"everything": True}
    before = await snapshot(backend)
    preview = await ctx.forget(**named, dry_run=True)
    assert await snapshot(backend) == before
    done = await ctx.forget(**named)
    assert preview == done
    assert done.facts_deleted > 0
    assert done.journal_entries > 0
    if not criteria:
        assert done.episodes_removed == 1
        assert done.graph_items_deleted > 0
        assert await ctx.count() == 0


async def fill_small(backend: Backend) -> None:
    ctx = backend.engine
    options: dict[str, Any] = (
        {} if backend.journal_path is None else {"journal_path": backend.journal_path}
    )
    bridge = MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor(), **options)
    messages = [
        {"role": "user", "content": "I moved to Lisbon with Bob.", "id": "m1"},
        {"role": "user", "content": "Bob works at Initech.", "id": "m2"},
    ]
    await bridge.bridge_conversation(Conversation.of(messages, session_id="s1", user_id="u1"))
    await bridge.process_message("Bob likes sailing.", session_id="s1", user_id="u1")
    await bridge.aclose()
    builder = ConversationGraphBuilder(graph_store=ctx.graph_store)
    await builder.process_conversation(messages, session_id="s1")


async def test_forgetting_in_one_project_leaves_another_on_the_same_stores(
    backend: Backend,
) -> None:
    ctx = backend.engine
    other = ContextEngine(stores=ctx.stores, project_id="elsewhere")
    for engine in (ctx, other):
        await engine.add("Bob works at Initech.", subject="Bob")
        await engine.port.episode_store.save_episode(  # type: ignore[union-attr]
            "s1", ["Bob called."], project_id=engine.project_id
        )
        await ConversationGraphBuilder(graph_store=engine.graph_store).process_conversation(
            [{"role": "user", "content": "Bob works at Initech."}], session_id="s1"
        )
    done = await ctx.forget(subject="Bob")
    assert done.facts_deleted == 1
    assert done.episodes_removed == 1
    assert done.graph_entities >= 1
    assert await other.count() == 1
    assert [e.name for e in await other.graph_store.entities() if e.name == "Bob"]  # type: ignore[union-attr]
    store = other.port.episode_store
    assert store is not None
    assert len(await store.list_episodes(project_id="elsewhere")) == 1
    assert await other.forget(subject="Bob", dry_run=True) == done


# ----------------------------------------------------------------- the journal


def leftover_journal(path: Path, texts: list[str]) -> None:
    """A journal as a bridge that died before storing these turns left it."""
    journal = WriteAheadJournal(path, fsync="never")
    journal.open()
    for index, text in enumerate(texts):
        turn = BridgeTurn(
            message=ChatMessage(role="user", content=text, id=f"m{index}"),
            session_id="crashed",
            message_id=f"m{index}",
            turn_index=index,
            received_at=datetime.now(UTC),
        )
        journal.append(turn.entry_id, turn.model_dump(mode="json"))
    journal.close()


async def test_a_replay_cannot_bring_a_forgotten_message_back(backend: Backend) -> None:
    ctx = backend.engine
    path = backend.journal_path or backend.folder / f"bridge-{ctx.project_id}.journal"
    if backend.journal_path is not None:
        # A bridge given journal_path= once: the engine remembers the file.
        MemoryBridge(context_engine=ctx, journal_path=path)
    leftover_journal(path, ["Bob's door code is 4471.", "The boiler was fixed on Monday."])
    preview = await ctx.forget(subject="Bob", dry_run=True)
    assert preview.journal_entries == 1
    assert "Bob" in path.read_text()
    done = await ctx.forget(subject="Bob")
    assert done == preview
    assert "Bob" not in path.read_text()
    bridge = MemoryBridge(
        context_engine=ctx, fact_extractor=RuleBasedFactExtractor(), journal_path=path
    )
    await bridge.start()  # replays what the journal still holds
    await bridge.aclose()
    assert bridge.stats.messages_replayed == 1
    contents = [f.content async for f in ctx.port.iter_facts(FactQuery(project_id=ctx.project_id))]
    assert any("boiler" in content for content in contents)
    assert not any("Bob" in content or "4471" in content for content in contents)


async def test_a_live_bridges_pending_turns_naming_the_subject_are_dropped(
    backend: Backend,
) -> None:
    ctx = backend.engine
    options: dict[str, Any] = (
        {} if backend.journal_path is None else {"journal_path": backend.journal_path}
    )
    bridge = MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor(), **options)
    await bridge.process_message("Bob's locker is 12.", session_id="s1")
    await bridge.process_message("The printer is on floor 2.", session_id="s1")
    journal = bridge.journal
    assert journal is not None
    assert journal.is_open
    done = await ctx.forget(subject="Bob")
    assert done.journal_entries == 1
    assert "Bob" not in journal.path.read_text()
    await bridge.process_message("The kitchen closes at 6.", session_id="s1")
    await bridge.aclose()
    text = journal.path.read_text()  # the journal still takes turns after its rewrite
    assert "Bob" not in text
    assert "kitchen" in text


# ----------------------------------------------------------------- which fields hold text


def test_every_text_field_of_a_record_is_read() -> None:
    """Records are checked field by field (a whole dump per record costs thirty times more):
    a new field of ``Fact`` or ``Provenance`` fails here until it is sorted as text or not."""
    not_text = {
        "confidence",
        "created_at",
        "fact_type",
        "id",
        "kind",
        "last_accessed_at",
        "merged_into",
        "org_id",
        "project_id",
        "scope",
        "session_id",
        "status",
        "strength",
        "superseded_by",
        "user_id",
        "valid_from",
        "valid_to",
    }
    assert set(Fact.model_fields) == FACT_TEXT_FIELDS | not_text
    source_ids = {
        "chunk_index",
        "document_id",
        "message_id",
        "session_id",
        "timestamp",
        "turn_index",
    }
    assert set(Provenance.model_fields) == PROVENANCE_TEXT_FIELDS | source_ids
    bob = subject_pattern("Bob")
    assert bob is not None
    placed: list[dict[str, Any]] = [
        {"content": "Met Bob."},
        {"subject": "bob"},
        {"predicate": "likes Bob"},
        {"object": "BOB"},
        {"exact_values": ("Bob-7",)},
        {"tags": ("bob",)},
        {"metadata": {"people": [{"name": "Bob"}]}},
        *({"sources": (Provenance(**{field: "Bob"}),)} for field in PROVENANCE_TEXT_FIELDS),
    ]
    for fields in placed:
        fact = Fact(project_id="p", **{"content": "A note.", **fields})
        assert record_names(fact, bob), fields
    assert not record_names(Fact(project_id="p", content="Bobby and bobsleigh."), bob)


async def test_forgetting_reaches_a_nebula_graph_with_hostile_names() -> None:
    """The graph part on NebulaGraph (its recording stand-in): entities and relations naming
    the subject go by word, a name that would break a statement goes too, the rest stays."""
    pytest.importorskip("nebula3")
    from sagewai.stores import NebulaGraphStore
    from sagewai.testing._nebula import FakeNebulaSession

    graph = NebulaGraphStore(session=FakeNebulaSession(), retry_delay=0.0)
    await graph.setup(wait_seconds=0)
    embedder = FakeEmbedder(DIMENSION)
    ctx = ContextEngine(
        metadata_store=InMemoryMetadataStore(),
        vector_store=InMemoryVectorStore(DIMENSION),
        graph_store=graph,
        embedder=embedder,
        project_id="nebula",
    )
    hostile = 'Bob"); DROP SPACE sagewai; --'
    view = graph.for_project("nebula")
    bob, evil, ana, initech = (
        Entity(project_id="nebula", name=name, label="person")
        for name in ("Bob Smith", hostile, "Ana", "Initech")
    )
    await view.upsert_entities([bob, evil, ana, initech])
    await view.upsert_relations(
        [
            Relation(
                project_id="nebula", subject_id=bob.id, predicate="works_at", object_id=initech.id
            ),
            Relation(
                project_id="nebula", subject_id=ana.id, predicate="works_at", object_id=initech.id
            ),
            Relation(project_id="nebula", subject_id=ana.id, predicate="knows", object_id=evil.id),
        ]
    )
    async with ctx:
        preview = await ctx.forget(subject="Bob", dry_run=True)
        done = await ctx.forget(subject="Bob")
        assert preview == done
        assert (done.graph_entities, done.graph_relations) == (2, 2)
        assert sorted(e.name for e in await view.entities()) == ["Ana", "Initech"]
        assert [r.predicate for r in await view.relations()] == ["works_at"]


async def test_a_forgotten_word_is_in_no_byte_of_the_folder(tmp_path: Path) -> None:
    """The keyword index keeps a deleted row's words in its segments until they merge: after
    forget(subject=...), no file of the embedded folder holds the word, in any page."""
    from sagewai.testing import FakeEmbedder

    folder = tmp_path / "memory"
    async with ContextEngine.local(folder, project_id="p", embedder=FakeEmbedder()) as ctx:
        for text in ("Zorbulak works at Stripe.", "Zorbulak moved to Oslo.", "I like tea."):
            await ctx.add(text, user_id="u")
        await ctx.forget(subject="Zorbulak")
    held = [
        p.name for p in folder.rglob("*") if p.is_file() and b"zorbulak" in p.read_bytes().lower()
    ]
    assert not held, held
