"""ContextEngine behaviour through its public API, on the in-memory backends."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from sagewai import ContextScope
from sagewai.core._records import (
    MAX_CONTENT_CHARS,
    ChangeAction,
    FactKind,
    FactStatus,
    FactType,
    Provenance,
    utcnow,
)
from sagewai.errors import FactNotFoundError, InvalidInputError, ScopeError
from sagewai.stores.memory._metadata import InMemoryMetadataStore
from sagewai.stores.memory._vector import InMemoryVectorStore
from tests.helpers import memory_engine


async def test_add_then_search_finds_the_relevant_fact() -> None:
    async with memory_engine() as ctx:
        await ctx.add("Alice prefers green tea over coffee", subject="Alice")
        await ctx.add("The deploy pipeline runs on Fridays")
        await ctx.add("Bob lives in Lisbon", subject="Bob")
        results = await ctx.search("which tea does Alice prefer", top_k=2)
        assert results[0].fact.content == "Alice prefers green tea over coffee"
        assert results[0].parts.dense is not None
        assert results[0].parts.keyword is not None
        assert results[0].score >= results[-1].score


async def test_get_and_history_of_a_new_fact() -> None:
    async with memory_engine() as ctx:
        fact = await ctx.add("Carol works at Initech", fact_type="general", subject="Carol")
        assert (await ctx.get(fact.id)) == fact
        history = await ctx.history(fact.id)
        assert [c.action for c in history] == [ChangeAction.CREATED]


async def test_user_scope_never_reads_a_sibling_user() -> None:
    async with memory_engine() as ctx:
        await ctx.add("the shared wiki lives at wiki.example.com")
        await ctx.add("alice likes jazz music", user_id="alice")
        await ctx.add("bob likes jazz music too", user_id="bob")
        seen = await ctx.search("jazz music", top_k=10, user_id="alice")
        contents = {r.fact.content for r in seen}
        assert "alice likes jazz music" in contents
        assert "bob likes jazz music too" not in contents
        project_only = await ctx.search("jazz music", top_k=10)
        assert all(r.fact.scope is ContextScope.PROJECT for r in project_only)


async def test_session_scope_reads_its_user_and_project_but_not_other_sessions() -> None:
    async with memory_engine() as ctx:
        await ctx.add("scratch note for session one", scope="session", session_id="s1")
        await ctx.add("scratch note for session two", scope="session", session_id="s2")
        await ctx.add("scratch note for the user", user_id="u1")
        found = await ctx.search("scratch note", top_k=10, session_id="s1", user_id="u1")
        contents = {r.fact.content for r in found}
        assert contents == {"scratch note for session one", "scratch note for the user"}


async def test_scope_without_identifier_is_a_scope_error() -> None:
    async with memory_engine() as ctx:
        with pytest.raises(ScopeError):
            await ctx.search("anything", scope=ContextScope.USER)
        with pytest.raises(ScopeError):
            await ctx.add("x", scope="session")


async def test_other_projects_are_invisible_even_on_shared_stores() -> None:
    metadata = InMemoryMetadataStore()
    vectors = InMemoryVectorStore(64)
    one = memory_engine("one", metadata=metadata, vectors=vectors)
    two = memory_engine("two", metadata=metadata, vectors=vectors)
    secret = await one.add("the launch code is 0000")
    await two.add("nothing secret here")
    assert [r.fact.project_id for r in await two.search("launch code", top_k=10)] == ["two"]
    with pytest.raises(FactNotFoundError):
        await two.get(secret.id)
    with pytest.raises(FactNotFoundError):
        await two.delete(secret.id)
    await two.forget(everything=True)
    assert (await one.get(secret.id)).content == "the launch code is 0000"


async def test_org_scope_is_shared_by_the_orgs_projects_only() -> None:
    metadata = InMemoryMetadataStore()
    vectors = InMemoryVectorStore(64)
    a = memory_engine("a", metadata=metadata, vectors=vectors, org_id="acme")
    b = memory_engine("b", metadata=metadata, vectors=vectors, org_id="acme")
    c = memory_engine("c", metadata=metadata, vectors=vectors, org_id="other")
    await a.add("expense reports are due on the 5th", scope="org")
    assert [r.fact.content for r in await b.search("expense reports", top_k=3)] == [
        "expense reports are due on the 5th"
    ]
    assert await c.search("expense reports", top_k=3) == []


async def test_supersede_keeps_the_old_fact_for_as_of_search() -> None:
    async with memory_engine() as ctx:
        before = utcnow() - timedelta(days=10)
        old = await ctx.add("Dana lives in Paris", subject="Dana", created_at=before)
        moment = utcnow() - timedelta(days=1)
        new = await ctx.supersede(old.id, "Dana lives in Berlin", reason="moved")
        now_results = await ctx.search("where does Dana live", top_k=5)
        assert [r.fact.id for r in now_results] == [new.id]
        then_results = await ctx.search("where does Dana live", top_k=5, as_of=moment)
        assert [r.fact.id for r in then_results] == [old.id]
        closed = await ctx.get(old.id)
        assert closed.status is FactStatus.SUPERSEDED
        assert closed.superseded_by == new.id
        assert closed.valid_to is not None
        assert [c.action for c in await ctx.history(old.id)] == [
            ChangeAction.CREATED,
            ChangeAction.SUPERSEDED,
        ]


async def test_status_change_hides_from_search_and_revert_restores() -> None:
    async with memory_engine() as ctx:
        fact = await ctx.add("the office is on the third floor")
        await ctx.set_status(fact.id, "archived", reason="stale")
        assert await ctx.search("office floor") == []
        archived_change = (await ctx.history(fact.id))[-1]
        restored = await ctx.revert(archived_change.id)
        assert restored.status is FactStatus.ACTIVE
        assert [r.fact.id for r in await ctx.search("office floor")] == [fact.id]
        assert (await ctx.history(fact.id))[-1].action is ChangeAction.RESTORED


async def test_delete_leaves_a_content_free_tombstone() -> None:
    async with memory_engine() as ctx:
        fact = await ctx.add("my password hint is pizza")
        await ctx.delete(fact.id)
        with pytest.raises(FactNotFoundError):
            await ctx.get(fact.id)
        assert await ctx.search("password hint") == []
        history = await ctx.history(fact.id)
        assert [c.action for c in history] == [ChangeAction.DELETED]
        assert "pizza" not in history[0].model_dump_json()


async def test_forget_subject_session_and_user() -> None:
    async with memory_engine() as ctx:
        await ctx.add("Eve likes chess", subject="Eve")
        await ctx.add("Eve plays on Sundays", subject="Eve")
        await ctx.add("Frank likes go", subject="Frank", session_id="s9")
        await ctx.add("Grace's notes", user_id="grace")
        report = await ctx.forget(subject="Eve")
        assert report.facts_deleted == 2
        assert await ctx.search("Eve chess Sundays", top_k=10) != []  # Frank's fact remains
        assert all(r.fact.subject != "Eve" for r in await ctx.search("Eve", top_k=10))
        assert (await ctx.forget(session_id="s9")).facts_deleted == 1
        assert (await ctx.forget(user_id="grace")).facts_deleted == 1
        assert await ctx.count() == 0
        with pytest.raises(InvalidInputError):
            await ctx.forget()


async def test_forget_subject_matches_subject_or_object_case_insensitively() -> None:
    async with memory_engine() as ctx:
        await ctx.add("Nina works with Tom", subject="Nina", predicate="colleague_of", object="Tom")
        await ctx.add("tom likes sailing", subject="tom")
        kept = await ctx.add("Nina likes chess", subject="Nina")
        report = await ctx.forget(subject="TOM")
        assert report.facts_deleted == 2
        assert [f.id for f in await ctx.list()] == [kept.id]


async def test_add_many_validates_everything_before_writing() -> None:
    async with memory_engine() as ctx:
        with pytest.raises(InvalidInputError):
            await ctx.add_many(["fine", {"content": ""}, "also fine"])
        assert await ctx.count() == 0
        stored = await ctx.add_many(["one fact", {"content": "two", "fact_type": "event"}])
        assert [f.fact_type for f in stored] == [FactType.GENERAL, FactType.EVENT]
        assert await ctx.count() == 2


@pytest.mark.parametrize(
    "bad",
    ["", "   ", "x" * (MAX_CONTENT_CHARS + 1), "nul\x00byte"],
)
async def test_hostile_content_is_refused_with_a_typed_error(bad: str) -> None:
    async with memory_engine() as ctx:
        with pytest.raises(InvalidInputError):
            await ctx.add(bad)
        assert await ctx.count() == 0


async def test_hostile_queries_and_identifiers() -> None:
    async with memory_engine() as ctx:
        await ctx.add("'; DROP TABLE facts; -- is just text here")
        results = await ctx.search("'; DROP TABLE facts; --")
        assert results[0].fact.content.startswith("'; DROP TABLE")
        for bad_query in ["", "q" * 5_000]:
            with pytest.raises(InvalidInputError):
                await ctx.search(bad_query)
        with pytest.raises(InvalidInputError):
            await ctx.search("ok", top_k=0)
        with pytest.raises(InvalidInputError):
            await ctx.add("x", user_id="bad\x1fid")
        with pytest.raises(InvalidInputError):
            await ctx.search("ok", user_id="")


async def test_documents_are_chunked_with_provenance() -> None:
    async with memory_engine() as ctx:
        text = " ".join(f"Sentence number {i} talks about topic {i}." for i in range(60))
        chunks = await ctx.add_document(text, document_id="handbook", max_chars=200)
        assert len(chunks) > 5
        assert all(c.kind is FactKind.DOCUMENT for c in chunks)
        found = await ctx.search("topic 42", top_k=1, kinds=["document"])
        source = found[0].fact.sources[0]
        assert source.document_id == "handbook"
        assert "topic 42" in found[0].fact.content


async def test_search_records_access_for_decay() -> None:
    async with memory_engine() as ctx:
        fact = await ctx.add("the printer is in room 12")
        assert fact.last_accessed_at is None
        await ctx.search("printer room")
        assert (await ctx.get(fact.id)).last_accessed_at is not None


async def test_filters_by_type_and_tag() -> None:
    async with memory_engine() as ctx:
        await ctx.add("we decided to use postgres", fact_type="decision", tags=["infra"])
        await ctx.add("postgres meetup on friday", fact_type="event")
        decisions = await ctx.search("postgres", fact_types=["decision"])
        assert [r.fact.fact_type for r in decisions] == [FactType.DECISION]
        tagged = await ctx.search("postgres", tags=["infra"])
        assert [r.fact.tags for r in tagged] == [("infra",)]


async def test_provenance_fills_session() -> None:
    async with memory_engine() as ctx:
        fact = await ctx.add(
            "Hana adopted a cat",
            source=Provenance(session_id="s1", message_id="D1:3", role="user"),
        )
        assert fact.session_id == "s1"
        assert fact.sources[0].message_id == "D1:3"


async def test_embedder_and_store_dimension_must_agree() -> None:
    from sagewai.context._engine import ContextEngine
    from sagewai.testing import FakeEmbedder

    with pytest.raises(InvalidInputError):
        ContextEngine(
            metadata_store=InMemoryMetadataStore(),
            vector_store=InMemoryVectorStore(32),
            project_id="p",
            embedder=FakeEmbedder(64),
        )


async def test_bulk_load_enters_the_stores_blocks_and_loads_the_same_facts(tmp_path: Path) -> None:
    from sagewai import ContextEngine
    from sagewai.stores import QdrantEdgeVectorStore, SqliteMetadataStore
    from sagewai.testing import FakeEmbedder

    texts = [f"note {i} about the Lisbon trip" for i in range(40)]
    async with memory_engine() as plain:  # no store with a bulk step: a plain block
        async with plain.bulk_load():
            added = await plain.add_many(texts)
        assert (await plain.search(texts[5], top_k=1))[0].fact.id == added[5].id
    # A folder of the earlier layout (its vectors in Qdrant's engine, whose index is built in
    # the bulk step); a new folder's SQLite vectors have no build step.
    (tmp_path / "vectors").mkdir()
    async with ContextEngine.local(tmp_path, project_id="p", embedder=FakeEmbedder(32)) as ctx:
        edge = ctx.port.vectors.store
        assert isinstance(edge, QdrantEdgeVectorStore)
        optimized: list[bool] = []
        optimize = edge.optimize

        async def counted() -> bool:
            optimized.append(await optimize())
            return optimized[-1]

        edge.optimize = counted  # type: ignore[method-assign]
        metadata = ctx.stores.metadata
        assert isinstance(metadata, SqliteMetadataStore)
        prepare = metadata.prepare_keyword_search
        steps: list[str] = []

        async def prepared() -> int:
            steps.append(f"words after {len(optimized)} optimization(s)")
            return await prepare()

        metadata.prepare_keyword_search = prepared  # type: ignore[method-assign]
        async with ctx.bulk_load():
            assert edge._bulk_loads == 1  # writes inside never run the optimizer
            added = await ctx.add_many(texts)
            assert (await ctx.search(texts[9], top_k=1))[0].fact.id == added[9].id
            assert steps == []
        assert edge._bulk_loads == 0
        assert len(optimized) == 1  # once, at the end
        assert steps == ["words after 1 optimization(s)"]  # the index first, then the words
        assert (await ctx.search(texts[33], top_k=1))[0].fact.id == added[33].id
