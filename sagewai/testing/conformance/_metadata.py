"""The metadata store conformance suite: subclass it, give it a factory, run the whole suite.

Every sagewai metadata backend (:class:`~sagewai.stores.InMemoryMetadataStore`, the reference;
:class:`~sagewai.stores.SqliteMetadataStore`; :class:`~sagewai.stores.PostgresMetadataStore`)
runs these tests; a backend of your own passes them the same way (``docs/backends.md``)::

    class TestMyMetadataStore(MetadataStoreConformance):
        @pytest.fixture
        def make_store(self, tmp_path):
            path = tmp_path / "facts.db"
            return lambda: MyMetadataStore(path)

``make_store`` returns a function that makes a store; every store it makes must reach the same
data (a second instance on the same file, schema or server: the lock test takes a lock through
one and expects the other to see it). The suite opens and migrates each store it makes.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import JsonValue

from sagewai.core._queries import ChangeQuery, FactQuery, WriteBatch
from sagewai.core._records import (
    ChangeAction,
    Fact,
    FactChange,
    FactKind,
    FactStatus,
    FactType,
    Provenance,
    utcnow,
)
from sagewai.core._scope import ContextScope, ScopeAddress
from sagewai.core._text import keyword_terms
from sagewai.errors import (
    FactConflictError,
    IntegrityError,
    InvalidInputError,
    LockedError,
)
from sagewai.stores.base._metadata import MetadataStore
from sagewai.testing.conformance._support import async_fixture, mark_async_tests, opened

__all__ = ["MetadataStoreConformance"]

MetadataStoreFactory = Callable[[], MetadataStore]
"""Makes a store (not yet opened) on the one database a test uses."""

T0 = datetime(2024, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
P1, P2 = "proj-1", "proj-2"
ORG = "acme"


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
                status=list(FactStatus)[i % len(FactStatus)],
                kind=FactKind.DOCUMENT if i % 7 == 0 else FactKind.FACT,
                fact_type=list(FactType)[i % len(FactType)],
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


async def _migrate(store: MetadataStore) -> None:
    await store.migrate()


async def _new_store(make_store: MetadataStoreFactory) -> MetadataStore:
    """Another open, migrated store on the test's database (closed by the caller)."""
    store = make_store()
    await store.open()
    await store.migrate()
    return store


@mark_async_tests
class MetadataStoreConformance:
    """The metadata store conformance suite; override the ``make_store`` fixture.

    Attributes:
        faults_mid_batch: Whether a batch can fail half-way through its writes (a SQL store's
            constraint on the last row); a store that validates everything before it mutates
            anything sets it to ``False`` and skips that test.
    """

    faults_mid_batch: bool = True

    @pytest.fixture
    def make_store(self) -> MetadataStoreFactory:
        """A factory of stores on one database: override this fixture in your subclass."""
        raise NotImplementedError("override the make_store fixture to return a store factory")

    @async_fixture
    async def store(self, make_store: MetadataStoreFactory) -> AsyncIterator[MetadataStore]:
        """An open, migrated store from :meth:`make_store`, closed after the test."""
        async with opened(make_store(), prepare=_migrate) as store:
            yield store

    async def test_every_fact_field_round_trips(self, store: MetadataStore) -> None:
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

    async def test_every_change_field_round_trips(self, store: MetadataStore) -> None:
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

    async def test_get_leaves_out_unknown_ids_and_other_projects(
        self, store: MetadataStore
    ) -> None:
        mine, theirs = make_fact("mine"), make_fact("theirs", project_id=P2)
        await put(store, mine)
        await put(store, theirs, project_id=P2)

        assert ids(await store.get(P1, [mine.id, "missing", mine.id])) == [mine.id]
        assert await store.get(P1, [theirs.id]) == []
        assert await store.get(P1, []) == []

    async def test_upsert_replaces_and_the_keyword_index_follows(
        self, store: MetadataStore
    ) -> None:
        fillers = [make_fact(f"filler number {i} about gardening") for i in range(6)]
        old = make_fact("the zebra crossed the meadow", tags=("old",))
        await put(store, old, *fillers)
        new = old.evolve(
            content="a giraffe ate the acacia", tags=("new",), status=FactStatus.ARCHIVED
        )
        await put(store, new)

        assert await store.get(P1, [old.id]) == [new]
        everything = FactQuery(project_id=P1)
        assert await store.count(everything) == 7
        assert await store.keyword_search(everything, "zebra meadow", 5) == []
        assert [i for i, _ in await store.keyword_search(everything, "giraffe", 5)] == [old.id]
        assert ids(await store.query(FactQuery(project_id=P1, tags_any=("old",)))) == []
        assert ids(await store.query(FactQuery(project_id=P1, tags_any=("new",)))) == [old.id]

    async def test_the_last_version_of_a_fact_in_a_batch_wins(self, store: MetadataStore) -> None:
        first = make_fact("first draft")
        second = first.evolve(content="second draft", tags=("final",))
        await put(store, first, make_fact("other"), second)
        assert await store.get(P1, [first.id]) == [second]
        assert await store.count(FactQuery(project_id=P1)) == 2

    async def test_an_upsert_never_takes_over_another_projects_fact(
        self, store: MetadataStore
    ) -> None:
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

    async def test_scope_keys_read_org_facts_across_projects(self, store: MetadataStore) -> None:
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

    @pytest.mark.parametrize("name", list(FILTERS))
    async def test_each_filter_matches_the_reference_semantics(
        self, store: MetadataStore, name: str
    ) -> None:
        dataset = filter_dataset()
        await put(store, *dataset)
        await put(store, *[make_fact(f.content, project_id=P2) for f in dataset], project_id=P2)
        query = FactQuery(project_id=P1, **FILTERS[name])
        expected = sorted(
            (f for f in dataset if query.matches(f)), key=lambda f: (f.created_at, f.id)
        )
        if name not in ("tags_any_unknown", "valid_at_before_everything", "subjects_none"):
            assert 0 < len(expected) < len(dataset), "the dataset must make this filter bite"

        assert ids(await store.query(query)) == ids(expected)
        assert await store.count(query) == len(expected)
        with_ids = replace(query, ids=(*(f.id for f in dataset[::2]), "missing"))
        assert ids(await store.query(with_ids)) == [f.id for f in expected if with_ids.matches(f)]

    async def test_keyword_search_with_tags_and_scope_filters(self, store: MetadataStore) -> None:
        tagged = make_fact("quokka with a tag", tags=("zoo",))
        alice = make_fact("quokka seen by alice", scope=ContextScope.USER, user_id="alice")
        await put(
            store,
            tagged,
            alice,
            make_fact("quokka plain"),
            *[make_fact(f"x {i}") for i in range(8)],
        )
        by_tag = FactQuery(project_id=P1, tags_any=("zoo", "absent"))
        assert [i for i, _ in await store.keyword_search(by_tag, "quokka", 10)] == [tagged.id]
        keys = (alice.scope_key,)
        by_scope = FactQuery(project_id=P1, scope_keys=keys)
        assert [i for i, _ in await store.keyword_search(by_scope, "quokka", 10)] == [alice.id]

    async def test_ids_filter_and_empty_ids(self, store: MetadataStore) -> None:
        facts = [make_fact(f"f{i}", created_at=T0 + timedelta(seconds=i)) for i in range(5)]
        await put(store, *facts)
        wanted = (facts[3].id, facts[1].id, "missing")
        assert ids(await store.query(FactQuery(project_id=P1, ids=wanted))) == [
            facts[1].id,
            facts[3].id,
        ]
        assert await store.query(FactQuery(project_id=P1, ids=())) == []
        assert await store.count(FactQuery(project_id=P1, ids=())) == 0

    async def test_updated_since_sees_writes_not_reads(self, store: MetadataStore) -> None:
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

    async def test_order_and_keyset_pagination(self, store: MetadataStore) -> None:
        # Many ties on created_at: the id breaks them, compared by code point.
        facts = [
            make_fact(f"fact {i}", id=f"id-{rng_id}", created_at=T0 + timedelta(minutes=i % 4))
            for i, rng_id in enumerate(
                ["b", "A", "a", "_", "Z", "é", "0", "z", "aa", "9", "ß", "é2"]
            )
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

    async def test_keyword_search_ranks_and_filters(self, store: MetadataStore) -> None:
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
        assert [i for i, _ in await store.keyword_search(scoped, "quokka", 10)] == [
            facts["sparse"].id
        ]
        other = await store.keyword_search(FactQuery(project_id=P2), "quokka", 10)
        assert len(other) == 1
        assert other[0][0] not in {f.id for f in facts.values()}

    async def test_keyword_facts_are_the_hits_with_their_records(
        self, store: MetadataStore
    ) -> None:
        facts = await keyword_corpus(store)
        alice = make_fact("quokka seen by alice", scope=ContextScope.USER, user_id="alice")
        await put(store, alice)
        queries = [
            FactQuery(project_id=P1),
            FactQuery(project_id=P1, statuses=(FactStatus.ACTIVE,)),
            FactQuery(project_id=P1, scope_keys=(alice.scope_key,)),
            FactQuery(project_id=P1, ids=(facts["sparse"].id, facts["both"].id)),
            FactQuery(project_id=P2),
        ]
        for query in queries:
            for text, top_k in (("quokka", 10), ("wombat quokka", 2), ("Quokka!", 1), ("", 5)):
                hits = await store.keyword_search(query, text, top_k)
                found = await store.keyword_facts(query, text, top_k)
                # The same hits, in the same order, with the same scores ...
                assert [(fact.id, score) for fact, score in found] == hits, (query, text)
                # ... each with its stored record, as get() reads it.
                records = await store.get(query.project_id, [i for i, _ in hits])
                assert sorted((fact for fact, _ in found), key=lambda f: f.id) == sorted(
                    records, key=lambda f: f.id
                )
        assert await store.keyword_facts(FactQuery(project_id=P1), "quokka", 0) == []
        for text in HOSTILE:
            found = await store.keyword_facts(FactQuery(project_id=P1), text, 10)
            assert [(f.id, s) for f, s in found] == await store.keyword_search(
                FactQuery(project_id=P1), text, 10
            ), text

    async def test_keyword_search_survives_hostile_text(self, store: MetadataStore) -> None:
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

    async def test_hostile_content_is_stored_and_found(self, store: MetadataStore) -> None:
        nasty = make_fact("'; DROP TABLE facts; -- \\ '' \" NEAR( * -x OR: alice@example.com")
        await put(store, nasty, *[make_fact(f"filler {i}") for i in range(6)])
        assert await store.get(P1, [nasty.id]) == [nasty]
        for text in ("drop", "table facts", "example", "alice"):
            assert [
                i for i, _ in await store.keyword_search(FactQuery(project_id=P1), text, 3)
            ] == [nasty.id]

    # -- audit log, deletes, touch, projects -------------------------------------------------------

    async def test_changes_filters_and_order(self, store: MetadataStore) -> None:
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
        assert await store.changes(ChangeQuery(project_id=P1, fact_id=a.id)) == [
            changes[2],
            changes[0],
        ]
        assert await store.changes(ChangeQuery(project_id=P1, run_id="r1")) == [
            changes[1],
            changes[0],
        ]
        since = ChangeQuery(project_id=P1, since=T0 + timedelta(minutes=3))
        assert await store.changes(since) == by_time[1:]
        assert await store.changes(ChangeQuery(project_id=P1, limit=2)) == by_time[:2]
        assert len(await store.changes(ChangeQuery(project_id=P2))) == 1

        # Changes at the same instant keep the order they were written in.
        same = [make_change(a.id, at=T0 + timedelta(hours=1), reason=str(i)) for i in range(4)]
        await store.apply(WriteBatch(project_id=P1, changes=same[:2]))
        await store.apply(WriteBatch(project_id=P1, changes=same[2:]))
        assert (await store.changes(ChangeQuery(project_id=P1)))[-4:] == same

    async def test_deletes_remove_history_but_keep_the_batch_tombstones(
        self, store: MetadataStore
    ) -> None:
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
            WriteBatch(
                project_id=P1, deletes=[doomed.id, theirs.id, "missing"], changes=[tombstone]
            )
        )

        assert await store.get(P1, [doomed.id]) == []
        assert await store.changes(ChangeQuery(project_id=P1, fact_id=doomed.id)) == [tombstone]
        assert len(await store.changes(ChangeQuery(project_id=P1, fact_id=kept.id))) == 1
        hits = await store.keyword_search(FactQuery(project_id=P1), "quokka", 10)
        assert [i for i, _ in hits] == [kept.id]
        assert await store.get(P2, [theirs.id]) == [theirs]  # another project's id is ignored

    async def test_redact_changes_rewrites_the_text_in_place_within_the_project(
        self, store: MetadataStore
    ) -> None:
        fact = make_fact("kept")
        first = make_change(fact.id, at=T0, reason="Bob said so", after={"content": "Bob's"})
        second = make_change(fact.id, at=T0 + timedelta(minutes=1), reason="later")
        theirs = make_change("x", project_id=P2, at=T0, reason="Bob said so")
        await store.apply(WriteBatch(project_id=P1, upserts=[fact], changes=[first, second]))
        await store.apply(WriteBatch(project_id=P2, changes=[theirs]))
        redacted = first.model_copy(
            update={"reason": "[forgotten] said so", "after": {"content": "[forgotten]"}}
        )
        # A row of another project is never rewritten through this one.
        wrong = theirs.model_copy(update={"reason": "gone"})
        assert await store.redact_changes(P1, [redacted, wrong]) == 1
        assert await store.changes(ChangeQuery(project_id=P1)) == [redacted, second]
        assert await store.changes(ChangeQuery(project_id=P2)) == [theirs]
        assert await store.redact_changes(P1, []) == 0

    async def test_a_fact_deleted_and_upserted_in_one_batch_survives(
        self, store: MetadataStore
    ) -> None:
        fact = make_fact("phoenix")
        await store.apply(WriteBatch(project_id=P1, upserts=[fact], changes=[make_change(fact.id)]))
        reborn = fact.evolve(content="phoenix reborn")
        await store.apply(WriteBatch(project_id=P1, deletes=[fact.id], upserts=[reborn]))
        assert await store.get(P1, [fact.id]) == [reborn]
        assert await store.changes(ChangeQuery(project_id=P1, fact_id=fact.id)) == []

    async def test_touch_sets_last_accessed_only_in_its_project(self, store: MetadataStore) -> None:
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

    async def test_delete_project_leaves_other_projects_untouched(
        self, store: MetadataStore
    ) -> None:
        ones = [make_fact(f"quokka one {i}") for i in range(3)]
        twos = [make_fact(f"quokka two {i}", project_id=P2) for i in range(2)]
        await store.apply(
            WriteBatch(project_id=P1, upserts=ones, changes=[make_change(f.id) for f in ones])
        )
        await store.apply(
            WriteBatch(
                project_id=P2,
                upserts=twos,
                changes=[make_change(f.id, project_id=P2) for f in twos],
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

    async def test_project_ids_lists_every_project_with_facts_sorted(
        self, store: MetadataStore
    ) -> None:
        assert await store.project_ids() == []
        await put(store, make_fact("one", project_id=P2), project_id=P2)
        await put(store, make_fact("two"), make_fact("three"))
        odd = "proj-ü ☕"
        await put(store, make_fact("four", project_id=odd), project_id=odd)
        assert await store.project_ids() == sorted([P1, P2, odd])
        await store.delete_project(P2)
        assert await store.project_ids() == sorted([P1, odd])

    async def test_concurrent_batches_all_land(self, store: MetadataStore) -> None:
        batches = [
            WriteBatch(project_id=P1, upserts=[make_fact(f"batch {b} fact {i}") for i in range(20)])
            for b in range(8)
        ]
        await asyncio.gather(*(store.apply(batch) for batch in batches))
        assert await store.count(FactQuery(project_id=P1)) == 160

    # -- atomicity ---------------------------------------------------------------------------------

    async def test_a_batch_for_another_project_is_refused_whole(self, store: MetadataStore) -> None:
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

    async def test_a_fault_half_way_leaves_nothing_of_the_batch(self, store: MetadataStore) -> None:
        if not self.faults_mid_batch:
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

    # -- locks -------------------------------------------------------------------------------------

    async def test_lock_is_exclusive(
        self, make_store: MetadataStoreFactory, store: MetadataStore
    ) -> None:
        other = await _new_store(make_store)
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

    async def test_project_state_round_trips_per_project_and_goes_with_the_project(
        self,
        store: MetadataStore,
    ) -> None:
        assert await store.get_state(P1, "consolidation") is None
        value: JsonValue = {
            "finished_at": "2026-11-30T00:00:00+00:00",
            "checkpoint": ["a", 1],
            "ok": True,
        }
        await store.set_state(P1, "consolidation", value)
        await store.set_state(P2, "consolidation", {"other": 1})
        assert await store.get_state(P1, "consolidation") == value
        await store.set_state(P1, "consolidation", {"replaced": None})
        assert await store.get_state(P1, "consolidation") == {"replaced": None}
        assert await store.get_state(P2, "consolidation") == {"other": 1}
        await store.delete_project(P1)
        assert await store.get_state(P1, "consolidation") is None
        assert await store.get_state(P2, "consolidation") == {"other": 1}
