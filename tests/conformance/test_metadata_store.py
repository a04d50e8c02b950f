"""The metadata store conformance suite: every backend, the same behaviour.

Each test runs against :class:`InMemoryMetadataStore` (the reference), :class:`SqliteMetadataStore`
(a file in a temporary folder) and :class:`PostgresMetadataStore` (a fresh schema per test). A few
tests only make sense for the SQL stores (a real fault half-way through a transaction, a lock held
by another process, a reopened file, migrations) and say so.
"""

from __future__ import annotations

import asyncio
import os
import random
import sqlite3
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import sagewai
from sagewai.context.scope import ContextScope, ScopeAddress
from sagewai.errors import (
    BackendUnavailableError,
    ConfigurationError,
    FactConflictError,
    IntegrityError,
    InvalidInputError,
    LockedError,
)
from sagewai.records import (
    ChangeAction,
    Fact,
    FactChange,
    FactKind,
    FactStatus,
    FactType,
    Provenance,
    utcnow,
)
from sagewai.stores._sql import (
    index_terms,
    match_expression,
    query_terms,
    tsquery_literal,
    tsvector_literal,
)
from sagewai.stores.base.metadata import (
    ChangeQuery,
    FactQuery,
    MetadataStore,
    WriteBatch,
    keyword_terms,
)
from sagewai.stores.memory.metadata import InMemoryMetadataStore
from sagewai.stores.postgres import PostgresMetadataStore
from sagewai.stores.postgres._pool import lock_key
from sagewai.stores.sqlite import SqliteMetadataStore

T0 = datetime(2024, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
P1, P2 = "proj-1", "proj-2"
ORG = "acme"


@dataclass
class Backend:
    """How to make (more) stores that share one underlying database."""

    name: str
    make: Callable[[], MetadataStore]
    location: str = ""
    dsn: str = ""

    async def new_store(self) -> MetadataStore:
        store = self.make()
        await store.open()
        await store.migrate()
        return store


@pytest.fixture(
    params=[
        "memory",
        "sqlite",
        pytest.param("postgres", marks=pytest.mark.postgres),
    ]
)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "memory":
        shared = InMemoryMetadataStore()  # one process, one object: "another instance" is it
        return Backend("memory", lambda: shared)
    if request.param == "sqlite":
        path = str(tmp_path / "store" / "metadata.db")
        return Backend("sqlite", lambda: SqliteMetadataStore(path), path)
    dsn: str = request.getfixturevalue("postgres_dsn")
    schema: str = request.getfixturevalue("postgres_schema")
    return Backend(
        "postgres", lambda: PostgresMetadataStore(dsn, schema=schema, max_size=4), schema, dsn
    )


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[MetadataStore]:
    opened = await backend.new_store()
    try:
        yield opened
    finally:
        await opened.close()


def make_fact(content: str = "plain fact", project_id: str = P1, **fields: Any) -> Fact:
    return Fact(project_id=project_id, content=content, **fields)


def make_change(fact_id: str, project_id: str = P1, **fields: Any) -> FactChange:
    fields.setdefault("action", ChangeAction.CREATED)
    fields.setdefault("actor", "engine")
    fields.setdefault("rule", "test.rule")
    return FactChange(fact_id=fact_id, project_id=project_id, **fields)


async def put(store: MetadataStore, *facts: Fact, project_id: str = P1) -> None:
    await store.apply(WriteBatch(project_id=project_id, upserts=list(facts)))


def ids(facts: list[Fact]) -> list[str]:
    return [fact.id for fact in facts]


def project_key(project_id: str) -> str:
    return ScopeAddress(ContextScope.PROJECT, project_id=project_id).key


# -- records round-trip ----------------------------------------------------------------------------


def full_fact() -> Fact:
    plus_two = timezone(timedelta(hours=2))
    return Fact(
        project_id=P1,
        scope=ContextScope.SESSION,
        org_id=ORG,
        user_id="alice",
        session_id="s-42",
        kind=FactKind.DOCUMENT,
        content="Deploy key is at /etc/keys/id_ed25519 — naïve café ☕ “quoted”",
        fact_type=FactType.DECISION,
        confidence=0.3712345678901234,
        subject="deploy",
        predicate="key_path",
        object="/etc/keys/id_ed25519",
        exact_values=("/etc/keys/id_ed25519", "550e8400-e29b-41d4-a716-446655440000"),
        tags=("ops", "security"),
        metadata={
            "nested": {"list": [1, 2.5, None, True, "x"], "empty": {}},
            "float": 0.1,
            "big": 1e300,
            "int": 2**62,
            "unicode": "日本語 \"quote\" 'single' \\ back",
        },
        sources=(
            Provenance(
                session_id="s-42",
                message_id="D1:3",
                turn_index=3,
                role="user",
                speaker="Alice",
                timestamp=datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=plus_two),
                extractor="rules",
            ),
            Provenance(document_id="doc-1", chunk_index=7),
        ),
        created_at=datetime(2024, 3, 1, 14, 0, 0, 654321, tzinfo=plus_two),
        last_accessed_at=T0 + timedelta(days=1),
        valid_from=T0 - timedelta(days=3),
        valid_to=T0 + timedelta(days=30),
        status=FactStatus.FLAGGED,
        strength=0.525,
        superseded_by="f-new",
        merged_into="f-merged",
    )


def assert_utc(fact: Fact) -> None:
    for value in (fact.created_at, fact.last_accessed_at, fact.valid_from, fact.valid_to):
        assert value is not None
        assert value.utcoffset() == timedelta(0)
    for source in fact.sources:
        if source.timestamp is not None:
            assert source.timestamp.utcoffset() == timedelta(0)


async def test_every_fact_field_round_trips(store: MetadataStore) -> None:
    fact = full_fact()
    await put(store, fact)

    [got] = await store.get(P1, [fact.id])
    assert got == fact
    assert got.model_dump() == fact.model_dump()
    assert isinstance(got.tags, tuple)
    assert isinstance(got.exact_values, tuple)
    assert_utc(got)
    [queried] = await store.query(FactQuery(project_id=P1))
    assert queried == fact


async def test_every_change_field_round_trips(store: MetadataStore) -> None:
    change = make_change(
        "f-1",
        action=ChangeAction.MERGED,
        at=datetime(2024, 3, 1, 9, 30, 0, 1, tzinfo=timezone(timedelta(hours=-5))),
        actor="consolidator",
        rule="dedup.cosine",
        reason="near-duplicate of f-2 (0.97)",
        related_fact_ids=("f-2", "f-3"),
        before={"status": "active", "strength": 0.75, "tags": ["a"]},
        after={"status": "merged", "merged_into": "f-2"},
        run_id="run-7",
    )
    bare = make_change("f-1", at=change.at + timedelta(seconds=1))
    await store.apply(WriteBatch(project_id=P1, changes=[change, bare]))

    got = await store.changes(ChangeQuery(project_id=P1))
    assert got == [change, bare]
    assert got[0].at.utcoffset() == timedelta(0)
    assert got[1].before is None
    assert got[1].after is None
    assert got[1].related_fact_ids == ()


async def test_get_leaves_out_unknown_ids_and_other_projects(store: MetadataStore) -> None:
    mine, theirs = make_fact("mine"), make_fact("theirs", project_id=P2)
    await put(store, mine)
    await put(store, theirs, project_id=P2)

    assert ids(await store.get(P1, [mine.id, "missing", mine.id])) == [mine.id]
    assert await store.get(P1, [theirs.id]) == []
    assert await store.get(P1, []) == []


async def test_upsert_replaces_and_the_keyword_index_follows(store: MetadataStore) -> None:
    fillers = [make_fact(f"filler number {i} about gardening") for i in range(6)]
    old = make_fact("the zebra crossed the meadow", tags=("old",))
    await put(store, old, *fillers)
    new = old.evolve(content="a giraffe ate the acacia", tags=("new",), status=FactStatus.ARCHIVED)
    await put(store, new)

    assert await store.get(P1, [old.id]) == [new]
    everything = FactQuery(project_id=P1)
    assert await store.count(everything) == 7
    assert await store.keyword_search(everything, "zebra meadow", 5) == []
    assert [i for i, _ in await store.keyword_search(everything, "giraffe", 5)] == [old.id]
    assert ids(await store.query(FactQuery(project_id=P1, tags_any=("old",)))) == []
    assert ids(await store.query(FactQuery(project_id=P1, tags_any=("new",)))) == [old.id]


async def test_the_last_version_of_a_fact_in_a_batch_wins(store: MetadataStore) -> None:
    first = make_fact("first draft")
    second = first.evolve(content="second draft", tags=("final",))
    await put(store, first, make_fact("other"), second)
    assert await store.get(P1, [first.id]) == [second]
    assert await store.count(FactQuery(project_id=P1)) == 2


async def test_an_upsert_never_takes_over_another_projects_fact(store: MetadataStore) -> None:
    theirs = make_fact("belongs to project two", project_id=P2)
    await put(store, theirs, project_id=P2)
    impostor = Fact(id=theirs.id, project_id=P1, content="hijacked")
    innocent = make_fact("written in the same batch")
    # Refused loudly (never skipped in silence), and the whole batch with it.
    with pytest.raises(FactConflictError):
        await put(store, innocent, impostor)

    assert await store.get(P2, [theirs.id]) == [theirs]
    assert await store.get(P1, [theirs.id, innocent.id]) == []
    assert await store.count(FactQuery(project_id=P1)) == 0


# -- filters ---------------------------------------------------------------------------------------


def scoped_facts() -> dict[str, Fact]:
    return {
        "org_from_p1": make_fact("org wide rule", scope=ContextScope.ORG, org_id=ORG),
        "org_from_p2": make_fact(
            "org wide rule two", project_id=P2, scope=ContextScope.ORG, org_id=ORG
        ),
        "p1": make_fact("project one fact", org_id=ORG),
        "p2": make_fact("project two fact", project_id=P2, org_id=ORG),
        "alice": make_fact("alice fact", scope=ContextScope.USER, user_id="alice"),
        "bob": make_fact("bob fact", scope=ContextScope.USER, user_id="bob"),
        "session": make_fact(
            "session fact", scope=ContextScope.SESSION, user_id="alice", session_id="s1"
        ),
    }


async def test_scope_keys_read_org_facts_across_projects(store: MetadataStore) -> None:
    facts = scoped_facts()
    await put(store, *(f for f in facts.values() if f.project_id == P1))
    await put(store, *(f for f in facts.values() if f.project_id == P2), project_id=P2)
    alice = ScopeAddress(ContextScope.USER, project_id=P1, org_id=ORG, user_id="alice")

    got = await store.query(FactQuery(project_id=P1, scope_keys=alice.readable_keys()))
    assert {f.id for f in got} == {
        facts[name].id for name in ("org_from_p1", "org_from_p2", "p1", "alice")
    }
    assert await store.count(FactQuery(project_id=P1, scope_keys=alice.readable_keys())) == 4

    session = ScopeAddress(
        ContextScope.SESSION, project_id=P1, user_id="alice", session_id="s1"
    ).readable_keys()
    got = await store.query(FactQuery(project_id=P1, scope_keys=session))
    assert {f.id for f in got} == {facts[n].id for n in ("session", "alice", "p1")}

    own = await store.query(FactQuery(project_id=P2))
    assert {f.id for f in own} == {facts["org_from_p2"].id, facts["p2"].id}

    # get() returns ORG facts written by another project (the engine checks scope keys)...
    assert ids(await store.get(P2, [facts["org_from_p1"].id])) == [facts["org_from_p1"].id]
    # ...and never another project's project-, user- or session-scoped facts.
    assert await store.get(P2, [facts["p1"].id, facts["alice"].id, facts["session"].id]) == []


def filter_dataset() -> list[Fact]:
    rng = random.Random(7)
    facts = []
    for i in range(48):
        created = T0 + timedelta(hours=i % 12)
        # Some facts hold from later than recorded, some were back-dated before it.
        valid_from = {0: created + timedelta(hours=2), 3: created - timedelta(hours=3)}.get(i % 6)
        valid_to = None if i % 4 else created + timedelta(hours=5)
        user = ("alice", "bob", None)[i % 3]
        session = "s1" if i % 5 == 0 and user else None
        scope = (
            ContextScope.SESSION if session else ContextScope.USER if user else ContextScope.PROJECT
        )
        facts.append(
            make_fact(
                f"fact {i} about {rng.choice(['tea', 'coffee', 'juice'])}",
                scope=scope,
                user_id=user,
                session_id=session,
                subject=("alice", "bob", "carol", None)[i % 4],
                status=list(FactStatus)[i % 5],
                kind=FactKind.DOCUMENT if i % 7 == 0 else FactKind.FACT,
                fact_type=list(FactType)[i % 5],
                tags=(("red",), ("blue",), ("red", "green"), ())[i % 4],
                created_at=created,
                valid_from=valid_from,
                valid_to=valid_to,
            )
        )
    return facts


FILTERS: dict[str, dict[str, Any]] = {
    "subject": {"subject": "carol"},
    "subjects": {"subjects": ("alice", "carol", "nobody")},
    "subjects_none": {"subjects": ()},
    "user_id": {"user_id": "bob"},
    "session_id": {"session_id": "s1"},
    "statuses": {"statuses": (FactStatus.ACTIVE, FactStatus.FLAGGED)},
    "kinds": {"kinds": (FactKind.DOCUMENT,)},
    "fact_types": {"fact_types": (FactType.DECISION, FactType.EVENT)},
    "tags_any": {"tags_any": ("green", "blue")},
    "tags_any_unknown": {"tags_any": ("nope",)},
    "valid_at_early": {"valid_at": T0 + timedelta(hours=3)},
    "valid_at_late": {"valid_at": T0 + timedelta(hours=8, minutes=30)},
    "valid_at_before_everything": {"valid_at": T0 - timedelta(days=1)},
    "combined": {
        "statuses": (FactStatus.ACTIVE, FactStatus.SUPERSEDED, FactStatus.ARCHIVED),
        "tags_any": ("red",),
        "user_id": "alice",
        "valid_at": T0 + timedelta(hours=10),
    },
}


@pytest.mark.parametrize("name", list(FILTERS))
async def test_each_filter_matches_the_reference_semantics(store: MetadataStore, name: str) -> None:
    dataset = filter_dataset()
    await put(store, *dataset)
    await put(store, *[make_fact(f.content, project_id=P2) for f in dataset], project_id=P2)
    query = FactQuery(project_id=P1, **FILTERS[name])
    expected = sorted((f for f in dataset if query.matches(f)), key=lambda f: (f.created_at, f.id))
    if name not in ("tags_any_unknown", "valid_at_before_everything", "subjects_none"):
        assert 0 < len(expected) < len(dataset), "the dataset must make this filter bite"

    assert ids(await store.query(query)) == ids(expected)
    assert await store.count(query) == len(expected)
    with_ids = replace(query, ids=(*(f.id for f in dataset[::2]), "missing"))
    assert ids(await store.query(with_ids)) == [f.id for f in expected if with_ids.matches(f)]


async def test_sqlite_tag_filter_reads_the_same_either_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sagewai.stores.sqlite.metadata as sqlite_module

    dataset = filter_dataset()
    async with SqliteMetadataStore(str(tmp_path / "metadata.db")) as store:
        await put(store, *dataset)
        for few_tagged in (10_000, 0):  # tag-driven plan, then the per-row probe
            monkeypatch.setattr(sqlite_module, "_FEW_TAGGED", few_tagged)
            for name in ("tags_any", "tags_any_unknown", "combined"):
                query = FactQuery(project_id=P1, **FILTERS[name], limit=7)
                expected = sorted(
                    (f for f in dataset if query.matches(f)), key=lambda f: (f.created_at, f.id)
                )
                assert ids(await store.query(query)) == ids(expected[:7]), (few_tagged, name)


async def test_keyword_search_with_tags_and_scope_filters(store: MetadataStore) -> None:
    tagged = make_fact("quokka with a tag", tags=("zoo",))
    alice = make_fact("quokka seen by alice", scope=ContextScope.USER, user_id="alice")
    await put(
        store, tagged, alice, make_fact("quokka plain"), *[make_fact(f"x {i}") for i in range(8)]
    )
    by_tag = FactQuery(project_id=P1, tags_any=("zoo", "absent"))
    assert [i for i, _ in await store.keyword_search(by_tag, "quokka", 10)] == [tagged.id]
    keys = (alice.scope_key,)
    by_scope = FactQuery(project_id=P1, scope_keys=keys)
    assert [i for i, _ in await store.keyword_search(by_scope, "quokka", 10)] == [alice.id]


async def test_ids_filter_and_empty_ids(store: MetadataStore) -> None:
    facts = [make_fact(f"f{i}", created_at=T0 + timedelta(seconds=i)) for i in range(5)]
    await put(store, *facts)
    wanted = (facts[3].id, facts[1].id, "missing")
    assert ids(await store.query(FactQuery(project_id=P1, ids=wanted))) == [
        facts[1].id,
        facts[3].id,
    ]
    assert await store.query(FactQuery(project_id=P1, ids=())) == []
    assert await store.count(FactQuery(project_id=P1, ids=())) == 0


async def test_updated_since_sees_writes_not_reads(store: MetadataStore) -> None:
    first, second = make_fact("first"), make_fact("second")
    await put(store, first, second)
    mark = utcnow()
    third = make_fact("third")
    await put(store, third, second.evolve(strength=0.5))
    await store.touch(P1, [first.id], utcnow())

    query = FactQuery(project_id=P1, updated_since=mark)
    assert {f.id for f in await store.query(query)} == {second.id, third.id}
    assert await store.count(query) == 2
    assert {i for i, _ in await store.keyword_search(query, "first second third", 10)} == {
        second.id,
        third.id,
    }
    later = FactQuery(project_id=P1, updated_since=utcnow() + timedelta(seconds=5))
    assert await store.query(later) == []


async def test_order_and_keyset_pagination(store: MetadataStore) -> None:
    # Many ties on created_at: the id breaks them, compared by code point.
    facts = [
        make_fact(f"fact {i}", id=f"id-{rng_id}", created_at=T0 + timedelta(minutes=i % 4))
        for i, rng_id in enumerate(["b", "A", "a", "_", "Z", "é", "0", "z", "aa", "9", "ß", "é2"])
    ]
    shuffled = facts[:]
    random.Random(3).shuffle(shuffled)
    await put(store, *shuffled[:6])
    await put(store, *shuffled[6:])
    expected = sorted(facts, key=lambda f: (f.created_at, f.id))

    assert ids(await store.query(FactQuery(project_id=P1))) == ids(expected)
    pages: list[Fact] = []
    after: tuple[datetime, str] | None = None
    while True:
        page = await store.query(FactQuery(project_id=P1, after=after, limit=5))
        if not page:
            break
        assert len(page) <= 5
        pages.extend(page)
        after = (page[-1].created_at, page[-1].id)
    assert ids(pages) == ids(expected)
    assert ids(await store.query(FactQuery(project_id=P1, limit=3))) == ids(expected[:3])
    middle = FactQuery(project_id=P1, after=(expected[4].created_at, expected[4].id), limit=100)
    assert await store.count(middle) == len(facts)  # count ignores after and limit


# -- keyword search --------------------------------------------------------------------------------


async def keyword_corpus(store: MetadataStore) -> dict[str, Fact]:
    facts = {
        "dense": make_fact("quokka quokka quokka"),
        "sparse": make_fact(
            "a long note that mentions a quokka once among many other words about the island"
        ),
        "both": make_fact("the quokka ate a wombat sandwich"),
        "archived": make_fact("quokka in the archive", status=FactStatus.ARCHIVED),
        "unrelated": make_fact("nothing to see here"),
    }
    fillers = [make_fact(f"filler {i} about weather and tides") for i in range(20)]
    await put(store, *facts.values(), *fillers)
    await put(store, make_fact("quokka from project two", project_id=P2), project_id=P2)
    return facts


async def test_keyword_search_ranks_and_filters(store: MetadataStore) -> None:
    facts = await keyword_corpus(store)
    everything = FactQuery(project_id=P1)

    hits = await store.keyword_search(everything, "Quokka!", 10)
    ranked = [i for i, _ in hits]
    assert set(ranked) == {facts[n].id for n in ("dense", "sparse", "both", "archived")}
    assert ranked.index(facts["dense"].id) < ranked.index(facts["sparse"].id)
    scores = [score for _, score in hits]
    assert all(isinstance(s, float) and s > 0 for s in scores)
    assert scores == sorted(scores, reverse=True)

    two_terms = [i for i, _ in await store.keyword_search(everything, "wombat quokka", 10)]
    assert two_terms[0] == facts["both"].id

    active = FactQuery(project_id=P1, statuses=(FactStatus.ACTIVE,))
    assert facts["archived"].id not in {
        i for i, _ in await store.keyword_search(active, "quokka", 10)
    }
    assert len(await store.keyword_search(everything, "quokka", 2)) == 2
    assert await store.keyword_search(everything, "quokka", 0) == []
    scoped = FactQuery(project_id=P1, ids=(facts["sparse"].id,))
    assert [i for i, _ in await store.keyword_search(scoped, "quokka", 10)] == [facts["sparse"].id]
    other = await store.keyword_search(FactQuery(project_id=P2), "quokka", 10)
    assert len(other) == 1
    assert other[0][0] not in {f.id for f in facts.values()}


HOSTILE = [
    '"',
    '""',
    "'",
    "NEAR(",
    "NEAR(quokka wombat, 2)",
    "*",
    "quokka*",
    "-quokka",
    "- -",
    "'; DROP TABLE facts; --",
    'quokka" OR "x',
    "content:quokka",
    "{content}: quokka",
    "AND",
    "OR NOT AND",
    "(((",
    "^quokka",
    "quokka & !wombat | x:*",
    "quokka <-> wombat",
    "\\",
    "%_%",
    "\x00quokka\x01",
    "café ☕ 日本語",
    "🦘" * 50,
    "quokka " * 500,
    "   ",
    "",
]


async def test_keyword_search_survives_hostile_text(store: MetadataStore) -> None:
    facts = await keyword_corpus(store)
    stored = {f.id for f in await store.query(FactQuery(project_id=P1))}
    for text in HOSTILE:
        hits = await store.keyword_search(FactQuery(project_id=P1), text, 10)

        found = {i for i, _ in hits}
        assert found <= stored, text
        if "quokka" in keyword_terms(text):
            assert facts["dense"].id in found, text
        if not keyword_terms(text):
            assert hits == [], text
    assert await store.count(FactQuery(project_id=P1)) == 25  # nothing was dropped or changed


async def test_hostile_content_is_stored_and_found(store: MetadataStore) -> None:
    nasty = make_fact("'; DROP TABLE facts; -- \\ '' \" NEAR( * -x OR: alice@example.com")
    await put(store, nasty, *[make_fact(f"filler {i}") for i in range(6)])
    assert await store.get(P1, [nasty.id]) == [nasty]
    for text in ("drop", "table facts", "example", "alice"):
        assert [i for i, _ in await store.keyword_search(FactQuery(project_id=P1), text, 3)] == [
            nasty.id
        ]


async def test_words_in_most_facts_of_a_large_store_are_ignored(
    backend: Backend, store: MetadataStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend.name == "memory":
        pytest.skip("the in-memory store scores every posting; only the SQL stores prune")
    import sagewai.stores.postgres.metadata as postgres_module
    import sagewai.stores.sqlite.metadata as sqlite_module

    # Pretend 40 facts is a large store (the real threshold is 10,000 facts).
    monkeypatch.setattr(sqlite_module, "_COMMON_TERM_MIN_FACTS", 40)
    monkeypatch.setattr(postgres_module, "_COMMON_TERM_MIN_FACTS", 40)
    facts = [make_fact(f"the note {i} about the weather") for i in range(38)]
    quokkas = [make_fact("the quokka"), make_fact("the quokka and the wombat")]
    await put(store, *facts, *quokkas)
    if isinstance(store, PostgresMetadataStore):
        import asyncpg

        connection = await asyncpg.connect(backend.dsn)
        try:
            await connection.execute(f'ANALYZE "{backend.location}".facts')
        finally:
            await connection.close()

    everything = FactQuery(project_id=P1)
    hits = await store.keyword_search(everything, "the quokka", 10)
    assert {i for i, _ in hits} == {f.id for f in quokkas}
    # A query made only of common words still finds what it can.
    assert len(await store.keyword_search(everything, "the", 10)) == 10


# -- audit log, deletes, touch, projects -----------------------------------------------------------


async def test_changes_filters_and_order(store: MetadataStore) -> None:
    a, b = make_fact("a"), make_fact("b")
    changes = [
        make_change(a.id, at=T0 + timedelta(minutes=5), run_id="r1"),
        make_change(b.id, at=T0 + timedelta(minutes=1), run_id="r1"),
        make_change(a.id, at=T0 + timedelta(minutes=3), action=ChangeAction.DECAYED),
        make_change(b.id, at=T0 + timedelta(minutes=9), run_id="r2"),
    ]
    await store.apply(WriteBatch(project_id=P1, upserts=[a, b], changes=changes))
    await store.apply(
        WriteBatch(project_id=P2, changes=[make_change("x", project_id=P2, at=T0, run_id="r1")])
    )
    by_time = sorted(changes, key=lambda c: c.at)

    assert await store.changes(ChangeQuery(project_id=P1)) == by_time
    assert await store.changes(ChangeQuery(project_id=P1, fact_id=a.id)) == [changes[2], changes[0]]
    assert await store.changes(ChangeQuery(project_id=P1, run_id="r1")) == [changes[1], changes[0]]
    since = ChangeQuery(project_id=P1, since=T0 + timedelta(minutes=3))
    assert await store.changes(since) == by_time[1:]
    assert await store.changes(ChangeQuery(project_id=P1, limit=2)) == by_time[:2]
    assert len(await store.changes(ChangeQuery(project_id=P2))) == 1

    # Changes at the same instant keep the order they were written in.
    same = [make_change(a.id, at=T0 + timedelta(hours=1), reason=str(i)) for i in range(4)]
    await store.apply(WriteBatch(project_id=P1, changes=same[:2]))
    await store.apply(WriteBatch(project_id=P1, changes=same[2:]))
    assert (await store.changes(ChangeQuery(project_id=P1)))[-4:] == same


async def test_deletes_remove_history_but_keep_the_batch_tombstones(store: MetadataStore) -> None:
    doomed, kept = make_fact("doomed quokka"), make_fact("kept quokka")
    theirs = make_fact("their quokka", project_id=P2)
    await store.apply(
        WriteBatch(
            project_id=P1,
            upserts=[doomed, kept, *[make_fact(f"filler {i}") for i in range(6)]],
            changes=[make_change(doomed.id), make_change(kept.id)],
        )
    )
    await put(store, theirs, project_id=P2)
    await store.apply(WriteBatch(project_id=P1, changes=[make_change(doomed.id)]))
    tombstone = make_change(doomed.id, action=ChangeAction.DELETED, reason="user asked")

    await store.apply(
        WriteBatch(project_id=P1, deletes=[doomed.id, theirs.id, "missing"], changes=[tombstone])
    )

    assert await store.get(P1, [doomed.id]) == []
    assert await store.changes(ChangeQuery(project_id=P1, fact_id=doomed.id)) == [tombstone]
    assert len(await store.changes(ChangeQuery(project_id=P1, fact_id=kept.id))) == 1
    hits = await store.keyword_search(FactQuery(project_id=P1), "quokka", 10)
    assert [i for i, _ in hits] == [kept.id]
    assert await store.get(P2, [theirs.id]) == [theirs]  # another project's id is ignored


async def test_a_fact_deleted_and_upserted_in_one_batch_survives(store: MetadataStore) -> None:
    fact = make_fact("phoenix")
    await store.apply(WriteBatch(project_id=P1, upserts=[fact], changes=[make_change(fact.id)]))
    reborn = fact.evolve(content="phoenix reborn")
    await store.apply(WriteBatch(project_id=P1, deletes=[fact.id], upserts=[reborn]))
    assert await store.get(P1, [fact.id]) == [reborn]
    assert await store.changes(ChangeQuery(project_id=P1, fact_id=fact.id)) == []


async def test_touch_sets_last_accessed_only_in_its_project(store: MetadataStore) -> None:
    mine, theirs = make_fact("mine"), make_fact("theirs", project_id=P2)
    await put(store, mine)
    await put(store, theirs, project_id=P2)
    when = T0 + timedelta(days=2, microseconds=7)

    await store.touch(P1, [mine.id, theirs.id, "missing"], when)

    [got] = await store.get(P1, [mine.id])
    assert got.last_accessed_at == when
    assert got.model_dump(exclude={"last_accessed_at"}) == mine.model_dump(
        exclude={"last_accessed_at"}
    )
    assert (await store.get(P2, [theirs.id]))[0].last_accessed_at is None


async def test_delete_project_leaves_other_projects_untouched(store: MetadataStore) -> None:
    ones = [make_fact(f"quokka one {i}") for i in range(3)]
    twos = [make_fact(f"quokka two {i}", project_id=P2) for i in range(2)]
    await store.apply(
        WriteBatch(project_id=P1, upserts=ones, changes=[make_change(f.id) for f in ones])
    )
    await store.apply(
        WriteBatch(
            project_id=P2, upserts=twos, changes=[make_change(f.id, project_id=P2) for f in twos]
        )
    )

    assert await store.delete_project(P1) == 3

    assert await store.count(FactQuery(project_id=P1)) == 0
    assert await store.changes(ChangeQuery(project_id=P1)) == []
    assert await store.keyword_search(FactQuery(project_id=P1), "quokka", 10) == []
    assert ids(await store.query(FactQuery(project_id=P2))) == ids(
        sorted(twos, key=lambda f: (f.created_at, f.id))
    )
    assert len(await store.changes(ChangeQuery(project_id=P2))) == 2
    assert len(await store.keyword_search(FactQuery(project_id=P2), "quokka", 10)) == 2
    assert await store.delete_project(P1) == 0


async def test_concurrent_batches_all_land(store: MetadataStore) -> None:
    batches = [
        WriteBatch(project_id=P1, upserts=[make_fact(f"batch {b} fact {i}") for i in range(20)])
        for b in range(8)
    ]
    await asyncio.gather(*(store.apply(batch) for batch in batches))
    assert await store.count(FactQuery(project_id=P1)) == 160


# -- atomicity -------------------------------------------------------------------------------------


async def test_a_batch_for_another_project_is_refused_whole(store: MetadataStore) -> None:
    ok, stray = make_fact("fine"), make_fact("stray", project_id=P2)
    with pytest.raises(InvalidInputError):
        await store.apply(WriteBatch(project_id=P1, upserts=[ok, stray]))
    with pytest.raises(InvalidInputError):
        await store.apply(
            WriteBatch(project_id=P1, upserts=[ok], changes=[make_change(ok.id, project_id=P2)])
        )
    assert await store.get(P1, [ok.id]) == []
    assert await store.count(FactQuery(project_id=P2)) == 0
    assert await store.changes(ChangeQuery(project_id=P1)) == []


async def test_a_fault_half_way_leaves_nothing_of_the_batch(
    backend: Backend, store: MetadataStore
) -> None:
    if backend.name == "memory":
        pytest.skip("the in-memory store validates before mutating: it has no mid-batch fault")
    existing = make_fact("existing quokka")
    first = make_change(existing.id)
    fillers = [make_fact(f"filler {i}") for i in range(6)]
    await store.apply(WriteBatch(project_id=P1, upserts=[existing, *fillers], changes=[first]))
    newcomer = make_fact("newcomer wombat")
    fresh = make_change(newcomer.id)

    # Deletes and upserts succeed, then the second change row violates the unique change id.
    with pytest.raises(IntegrityError):
        await store.apply(
            WriteBatch(
                project_id=P1,
                deletes=[fillers[0].id],
                upserts=[newcomer, existing.evolve(content="rewritten")],
                changes=[fresh, first],
            )
        )

    assert await store.get(P1, [existing.id, fillers[0].id, newcomer.id]) in (
        [existing, fillers[0]],
        [fillers[0], existing],
    )
    assert await store.changes(ChangeQuery(project_id=P1)) == [first]
    assert await store.keyword_search(FactQuery(project_id=P1), "wombat rewritten", 5) == []
    assert await store.count(FactQuery(project_id=P1)) == 7
    await put(store, newcomer)  # the store is still usable after the rollback
    assert await store.get(P1, [newcomer.id]) == [newcomer]


# -- locks -----------------------------------------------------------------------------------------


async def test_lock_is_exclusive(backend: Backend, store: MetadataStore) -> None:
    other = await backend.new_store()
    try:
        async with store.lock(P1, "consolidation"):
            with pytest.raises(LockedError):
                async with store.lock(P1, "consolidation"):
                    pass
            with pytest.raises(LockedError):
                async with other.lock(P1, "consolidation"):
                    pass
            async with other.lock(P2, "consolidation"), other.lock(P1, "reindex"):
                pass
        async with other.lock(P1, "consolidation"):
            pass
    finally:
        if other is not store:
            await other.close()


LOCK_PROBE = """
import asyncio, sys
from sagewai.errors import LockedError
from sagewai.stores.sqlite import SqliteMetadataStore

async def main() -> None:
    store = SqliteMetadataStore(sys.argv[1])
    try:
        async with store.lock("proj-1", "consolidation"):
            print("acquired")
    except LockedError:
        print("locked")
    finally:
        await store.close()

asyncio.run(main())
"""


WRITER = """
import asyncio, sys
from sagewai.records import Fact
from sagewai.stores.base.metadata import WriteBatch
from sagewai.stores.sqlite import SqliteMetadataStore

async def main() -> None:
    async with SqliteMetadataStore(sys.argv[1]) as store:
        print("ready", flush=True)
        for b in range(20):
            facts = [Fact(project_id="proj-1", content=f"child {b} {i}") for i in range(10)]
            await store.apply(WriteBatch(project_id="proj-1", upserts=facts))
    print("done")

asyncio.run(main())
"""


async def run_in_another_process(script: str, path: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(Path(sagewai.__file__).parent.parent))
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        script,
        path,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 0, err.decode()
    return out.decode().strip()


async def test_sqlite_lock_is_exclusive_across_processes(tmp_path: Path) -> None:
    path = str(tmp_path / "metadata.db")
    async with SqliteMetadataStore(path) as store:
        async with store.lock(P1, "consolidation"):
            assert await run_in_another_process(LOCK_PROBE, path) == "locked"
        assert await run_in_another_process(LOCK_PROBE, path) == "acquired"


async def test_sqlite_two_processes_write_to_one_file(tmp_path: Path) -> None:
    path = str(tmp_path / "metadata.db")
    async with SqliteMetadataStore(path) as store:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            WRITER,
            path,
            env=dict(os.environ, PYTHONPATH=str(Path(sagewai.__file__).parent.parent)),
            stdout=asyncio.subprocess.PIPE,
        )
        assert process.stdout is not None
        assert await asyncio.wait_for(process.stdout.readline(), 60) == b"ready\n"
        for b in range(20):  # meanwhile the child writes its 20 batches
            await put(store, *[make_fact(f"parent {b} {i}") for i in range(10)])
        out, _ = await asyncio.wait_for(process.communicate(), 60)
        assert out == b"done\n"
        assert await store.count(FactQuery(project_id=P1)) == 400
        assert len(await store.keyword_search(FactQuery(project_id=P1), "child", 500)) == 200


async def acquire_soon(store: MetadataStore, seconds: float = 10.0) -> None:
    """Take and release the lock, waiting while the server reaps a dead session."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        try:
            async with store.lock(P1, "consolidation"):
                return
        except LockedError:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.05)


@pytest.mark.postgres
async def test_postgres_lock_is_released_when_its_holder_dies(
    postgres_dsn: str, postgres_schema: str
) -> None:
    import asyncpg

    holder = PostgresMetadataStore(postgres_dsn, schema=postgres_schema, close_timeout=1)
    waiter = PostgresMetadataStore(postgres_dsn, schema=postgres_schema)
    await holder.migrate()
    admin = await asyncpg.connect(postgres_dsn)
    try:
        async with holder.lock(P1, "consolidation"):
            with pytest.raises(LockedError):
                async with waiter.lock(P1, "consolidation"):
                    pass
            # The holder's session dies (a crashed process): the server releases its lock.
            # Only the session holding this very key is ended (the database may be shared).
            key = lock_key("sagewai.lock", postgres_schema, P1, "consolidation")
            killed = await admin.fetchval(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_locks"
                " WHERE locktype = 'advisory' AND granted AND objsubid = 1"
                " AND classid::bigint = $1 AND objid::bigint = $2",
                (key >> 32) & 0xFFFFFFFF,
                key & 0xFFFFFFFF,
            )
            assert killed == 1
            await acquire_soon(waiter)
        # Leaving the dead holder's block neither raises nor leaks a held connection.
        async with holder.lock(P1, "consolidation"):
            pass
    finally:
        await admin.close()
        await waiter.close()
        await holder.close()


@pytest.mark.postgres
async def test_postgres_close_does_not_hang_on_a_held_lock(
    postgres_dsn: str, postgres_schema: str
) -> None:
    holder = PostgresMetadataStore(postgres_dsn, schema=postgres_schema, close_timeout=0.5)
    waiter = PostgresMetadataStore(postgres_dsn, schema=postgres_schema)
    await holder.migrate()
    try:
        lock = holder.lock(P1, "consolidation")
        await lock.__aenter__()  # a holder that never leaves its block
        await asyncio.wait_for(holder.close(), timeout=10)
        await acquire_soon(waiter)  # terminating the pool freed the lock
    finally:
        await waiter.close()


# -- persistence and migrations --------------------------------------------------------------------


async def test_sqlite_persists_across_close_and_reopen(tmp_path: Path) -> None:
    path = str(tmp_path / "nested" / "metadata.db")
    fact = full_fact()
    change = make_change(fact.id, run_id="r1")
    async with SqliteMetadataStore(path) as store:
        await store.apply(WriteBatch(project_id=P1, upserts=[fact], changes=[change]))

    async with SqliteMetadataStore(path) as reopened:
        assert await reopened.get(P1, [fact.id]) == [fact]
        assert await reopened.changes(ChangeQuery(project_id=P1)) == [change]
        assert [
            i for i, _ in await reopened.keyword_search(FactQuery(project_id=P1), "café", 3)
        ] == [fact.id]
    store = SqliteMetadataStore(path)
    await store.close()
    await store.close()  # closing twice, or never opened, is fine
    assert await store.count(FactQuery(project_id=P1)) == 1  # and it reopens on use
    await store.close()


async def test_sqlite_keyword_index_stays_in_step_with_the_facts(tmp_path: Path) -> None:
    path = str(tmp_path / "metadata.db")
    facts = [make_fact(f"quokka number {i}") for i in range(30)]
    theirs = [make_fact(f"wombat number {i}", project_id=P2) for i in range(5)]
    async with SqliteMetadataStore(path) as store:
        await put(store, *facts)
        await put(store, *theirs, project_id=P2)
        newest = facts[-1]
        await store.apply(
            WriteBatch(
                project_id=P1,
                deletes=[newest.id, facts[0].id],  # frees the largest row number for reuse
                upserts=[
                    facts[1].evolve(content="numbat now"),  # text changes
                    facts[2].evolve(strength=0.1),  # text stays
                    make_fact("fresh quokka"),
                    newest.evolve(content="reborn numbat"),
                ],
            )
        )
        await store.delete_project(P2)
        numbats = await store.keyword_search(FactQuery(project_id=P1), "numbat", 10)
        assert {i for i, _ in numbats} == {facts[1].id, newest.id}
        assert len(await store.keyword_search(FactQuery(project_id=P1), "quokka", 50)) == 28

    connection = sqlite3.connect(path)
    try:  # FTS5 compares its index with the facts table and raises on any difference
        connection.execute("INSERT INTO facts_fts (facts_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        connection.close()


async def test_sqlite_memory_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(
        tmp_path
    )  # a ":memory:" store must leave no file (database, WAL or lock) behind
    async with SqliteMetadataStore(":memory:") as store:
        await put(store, make_fact("in memory quokka"))
        assert await store.count(FactQuery(project_id=P1)) == 1
        async with store.lock(P1, "x"):
            with pytest.raises(LockedError):
                async with store.lock(P1, "x"):
                    pass
    assert not os.listdir(tmp_path)


async def test_sqlite_migrations_are_versioned_and_idempotent(tmp_path: Path) -> None:
    path = str(tmp_path / "metadata.db")
    store = SqliteMetadataStore(path)
    assert await store.migrate() == ["0001", "0002"]
    assert await store.migrate() == []
    await store.close()
    async with SqliteMetadataStore(path) as again:
        assert await again.migrate() == []

    connection = sqlite3.connect(path)
    try:
        rows = connection.execute(
            "SELECT version, name, applied_at FROM schema_migrations"
        ).fetchall()
        assert [(v, n) for v, n, _ in rows] == [
            ("0001", "facts_changes_search"),
            ("0002", "project_state"),
        ]
        assert abs(rows[0][2] / 1e6 - utcnow().timestamp()) < 60
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        connection.close()


async def test_sqlite_refuses_a_database_from_a_newer_version(tmp_path: Path) -> None:
    path = str(tmp_path / "metadata.db")
    async with SqliteMetadataStore(path):
        pass
    connection = sqlite3.connect(path)
    connection.execute("INSERT INTO schema_migrations VALUES ('9999', 'future', 0)")
    connection.commit()
    connection.close()
    with pytest.raises(ConfigurationError, match="newer sagewai"):
        await SqliteMetadataStore(path).open()


async def test_sqlite_rejects_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "metadata.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ConfigurationError):
        await SqliteMetadataStore(path).open()


@pytest.mark.postgres
async def test_postgres_migrations_are_versioned_idempotent_and_concurrent(
    postgres_dsn: str, postgres_schema: str
) -> None:
    import asyncpg

    stores = [PostgresMetadataStore(postgres_dsn, schema=postgres_schema) for _ in range(3)]
    try:
        results = await asyncio.gather(*(s.migrate() for s in stores))
        assert sorted(results) == [[], [], ["0001", "0002", "0003"]]
        assert await stores[0].migrate() == []
    finally:
        for s in stores:
            await s.close()
    connection = await asyncpg.connect(postgres_dsn)
    try:
        rows = await connection.fetch(
            f'SELECT version, name, applied_at FROM "{postgres_schema}".schema_migrations'
        )
    finally:
        await connection.close()
    assert [(r["version"], r["name"]) for r in rows] == [
        ("0001", "facts_changes_search"),
        ("0002", "project_state"),
        ("0003", "keyword_length"),
    ]
    assert rows[0]["applied_at"].tzinfo is not None


@pytest.mark.postgres
async def test_postgres_unmigrated_schema_is_a_configuration_error(
    postgres_dsn: str, postgres_schema: str
) -> None:
    store = PostgresMetadataStore(postgres_dsn, schema=postgres_schema)
    try:
        with pytest.raises(ConfigurationError, match=r"migrate\(\)"):
            await store.count(FactQuery(project_id=P1))
        with pytest.raises(ConfigurationError, match=r"migrate\(\)"):
            await put(store, make_fact("too early"))
        await store.migrate()
        await put(store, make_fact("now it works"))
        assert await store.count(FactQuery(project_id=P1)) == 1
    finally:
        await store.close()


async def test_unreachable_postgres_is_backend_unavailable() -> None:
    pytest.importorskip("asyncpg")
    store = PostgresMetadataStore(
        "postgresql://sagewai:s3cr3t-pw@127.0.0.1:1/nowhere", connect_timeout=5
    )
    with pytest.raises(BackendUnavailableError) as caught:
        await store.count(FactQuery(project_id=P1))
    message = str(caught.value)
    assert "127.0.0.1:1/nowhere" in message
    assert "s3cr3t-pw" not in message
    await store.close()


@pytest.mark.parametrize("schema", ["Sagewai", "1abc", 'x"; DROP SCHEMA public; --', "a-b", ""])
def test_postgres_schema_names_are_validated(schema: str) -> None:
    with pytest.raises(ConfigurationError):
        PostgresMetadataStore("postgresql://127.0.0.1/test", schema=schema)


# -- query building (pure functions shared by the SQL stores) --------------------------------------


@pytest.mark.parametrize(
    "text",
    ["Alice's café (v1.2.3) alice@example.com", "don’t stop_me now", "x²+y² ½ Ⅻ", "İstanbul ǅ"],
)
def test_index_terms_split_words_like_keyword_terms(text: str) -> None:
    assert list(dict.fromkeys(index_terms(text))) == keyword_terms(text, limit=10_000)


def test_query_expressions_hold_only_quoted_terms() -> None:
    hostile = "\" NEAR( *x -y '; DROP TABLE facts; -- a:b"
    assert match_expression(hostile) == (
        '"near" OR "x" OR "y" OR "drop" OR "table" OR "facts" OR "a" OR "b"'
    )
    assert (
        tsquery_literal(query_terms(hostile))
        == "'near' | 'x' | 'y' | 'drop' | 'table' | 'facts' | 'a' | 'b'"
    )
    assert match_expression("?! --") is None
    assert tsquery_literal(query_terms("")) is None
    assert tsvector_literal("b a b") == "'b':1,3 'a':2"


async def test_project_state_round_trips_per_project_and_goes_with_the_project(
    store: MetadataStore,
) -> None:
    assert await store.get_state(P1, "consolidation") is None
    value = {"finished_at": "2026-11-30T00:00:00+00:00", "checkpoint": ["a", 1], "ok": True}
    await store.set_state(P1, "consolidation", value)
    await store.set_state(P2, "consolidation", {"other": 1})
    assert await store.get_state(P1, "consolidation") == value
    await store.set_state(P1, "consolidation", {"replaced": None})
    assert await store.get_state(P1, "consolidation") == {"replaced": None}
    assert await store.get_state(P2, "consolidation") == {"other": 1}
    await store.delete_project(P1)
    assert await store.get_state(P1, "consolidation") is None
    assert await store.get_state(P2, "consolidation") == {"other": 1}
