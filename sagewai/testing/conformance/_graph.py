"""The graph store conformance suite: subclass it, give it a factory, run the whole suite.

Every sagewai graph backend (:class:`~sagewai.stores.InMemoryGraphStore`, the reference;
:class:`~sagewai.stores.SqliteGraphStore`; :class:`~sagewai.stores.NebulaGraphStore`) runs these
tests; a backend of your own passes them the same way (``docs/backends.md``)::

    class TestMyGraphStore(GraphStoreConformance):
        @pytest.fixture
        def make_store(self, tmp_path):
            return lambda: MyGraphStore(tmp_path / "graph.db")

``make_store`` returns a function that makes a new, empty store; the suite opens it (``open``)
before each test and closes it afterwards.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta

import pytest

from sagewai.core._graph_matching import MAX_MENTION_WORDS
from sagewai.core._records import Provenance
from sagewai.errors import IntegrityError, InvalidInputError
from sagewai.graph import Entity, Relation
from sagewai.stores import GraphStore, GraphWrite
from sagewai.testing.conformance._support import (
    async_fixture,
    mark_async_tests,
    opened,
)

__all__ = ["GraphStoreConformance"]

GraphStoreFactory = Callable[[], GraphStore | Awaitable[GraphStore]]
"""Makes a new, empty graph store (not yet opened); it may be a coroutine function."""

P1, P2 = "proj-1", "proj-2"
T0 = datetime(2024, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)

HOSTILE_NAMES = [
    'Robert"); DROP TAG sagewai_entity; --',
    "O'Brien \\ back\\slash \\\\ double",
    "line one\nline two\r\n\ttabbed",
    'INSERT VERTEX x VALUES "v":(1) | DELETE VERTEX "*" WITH EDGE',
    "北京 — Zürich ☃ 🚀 مرحبا",
    "`backquoted` $var {map} [list] <tag> & % # // /* comment */",
    "'; DELETE FROM graph_entities; --",
    "trailing backslash \\",
]


def entity(name: str, project: str = P1, **fields: object) -> Entity:
    return Entity(project_id=project, name=name, created_at=T0, **fields)  # type: ignore[arg-type]


def relation(
    subject: Entity, predicate: str, obj: Entity, *, session: str | None = None, **fields: object
) -> Relation:
    sources = (Provenance(session_id=session, message_id=f"m-{predicate}"),) if session else ()
    return Relation(
        project_id=subject.project_id,
        subject_id=subject.id,
        predicate=predicate,
        object_id=obj.id,
        valid_from=T0,
        created_at=T0,
        sources=sources,
        **fields,  # type: ignore[arg-type]
    )


# --------------------------------------------------------------------------- traversal


async def _chain(store: GraphStore) -> list[Entity]:
    """a -> b -> c -> d, and a -> e with an ended relation."""
    a, b, c, d, e = (entity(n) for n in "ABCDE")
    await store.upsert_entities(P1, [a, b, c, d, e])
    await store.upsert_relations(
        P1,
        [
            relation(a, "knows", b, session="s1"),
            relation(b, "works_at", c, session="s1"),
            relation(c, "located_in", d, session="s2"),
            relation(a, "lived_in", e, valid_to=T0 + timedelta(days=1)),
        ],
    )
    return [a, b, c, d, e]


@mark_async_tests
class GraphStoreConformance:
    """The graph store conformance suite; override the ``make_store`` fixture."""

    @pytest.fixture
    def make_store(self) -> GraphStoreFactory:
        """A factory of new, empty stores: override this fixture in your subclass."""
        raise NotImplementedError("override the make_store fixture to return a store factory")

    @async_fixture
    async def store(self, make_store: GraphStoreFactory) -> AsyncIterator[GraphStore]:
        """A fresh, empty, open store from :meth:`make_store`, closed after the test."""
        async with opened(make_store()) as store:
            yield store

    # --------------------------------------------------------------------------- round trips

    async def test_entity_round_trip_keeps_every_field(self, store: GraphStore) -> None:
        ana = entity(
            "Ana Lima",
            label="person",
            aliases=("Ana", "A. Lima"),
            session_ids=("s1", "s2"),
            metadata={"first_message_id": "D1:3", "n": 2, "nested": {"ok": True}},
        )
        await store.upsert_entity(P1, ana)
        assert await store.get_entity(P1, ana.id) == ana
        assert await store.entities(P1) == [ana]

    @pytest.mark.parametrize("name", HOSTILE_NAMES)
    async def test_hostile_names_round_trip_and_are_found(
        self, store: GraphStore, name: str
    ) -> None:
        hostile = entity(name, label=name, aliases=(name + " alias",))
        plain = entity("Plain")
        await store.upsert_entities(P1, [hostile, plain])
        await store.upsert_relation(P1, relation(hostile, name, plain, session="s'1\"\\"))
        assert await store.get_entity(P1, hostile.id) == hostile
        assert [e.id for e in await store.entities_named(P1, name)] == [hostile.id]
        found = [e.id for e in await store.find_entities(P1, f"about {name} today")]
        # Mentions are looked for up to MAX_MENTION_WORDS words long.
        assert (hostile.id in found) == (len(name.split()) <= MAX_MENTION_WORDS)
        [stored] = await store.relations(P1, subject_id=hostile.id)
        assert stored.predicate == name
        assert stored.session_ids == ("s'1\"\\",)
        assert (await store.counts(P1)).entities == 2

    async def test_relation_round_trip_keeps_validity_and_sources(self, store: GraphStore) -> None:
        ana, acme = entity("Ana"), entity("Acme")
        await store.upsert_entities(P1, [ana, acme])
        closed = relation(
            ana,
            "works_at",
            acme,
            session="s1",
            valid_to=T0 + timedelta(days=3),
            confidence=0.625,
            superseded_by="r-next",
        )
        await store.upsert_relation(P1, closed)
        assert await store.relations(P1) == [closed]
        assert await store.relations(P1, active_only=True) == []
        assert await store.relations(P1, valid_at=T0 + timedelta(days=1)) == [closed]
        assert await store.relations(P1, valid_at=T0 + timedelta(days=4)) == []

    async def test_upsert_replaces_by_id_and_reindexes_names(self, store: GraphStore) -> None:
        ana = entity("Ana")
        await store.upsert_entity(P1, ana)
        renamed = ana.model_copy(update={"name": "Joana", "aliases": ("Jo",)})
        await store.upsert_entity(P1, renamed)
        assert await store.entities(P1) == [renamed]
        assert await store.entities_named(P1, "Ana") == []
        assert await store.entities_named(P1, "jo") == [renamed]

    async def test_relation_needs_both_ends_in_the_project(self, store: GraphStore) -> None:
        ana, elsewhere = entity("Ana"), entity("Acme", project=P2)
        await store.upsert_entity(P1, ana)
        await store.upsert_entity(P2, elsewhere)
        cross = Relation(project_id=P1, subject_id=ana.id, predicate="x", object_id=elsewhere.id)
        with pytest.raises(IntegrityError):
            await store.upsert_relation(P1, cross)
        assert await store.relations(P1) == []

    async def test_a_batch_is_all_or_nothing(self, store: GraphStore) -> None:
        good, foreign = entity("Good"), entity("Foreign", project=P2)
        with pytest.raises(InvalidInputError):
            await store.apply(GraphWrite(P1, put_entities=[good, foreign]))
        assert await store.entities(P1) == []
        assert await store.entities(P2) == []

    async def test_a_view_refuses_another_projects_write(self, store: GraphStore) -> None:
        with pytest.raises(InvalidInputError):
            await store.for_project(P1).apply(GraphWrite(P2, put_entities=[entity("X", P2)]))

    # --------------------------------------------------------------------------- isolation

    async def test_projects_never_see_each_other(self, store: GraphStore) -> None:
        shared_id = "same-id"
        mine = entity("Ana", id=shared_id)
        theirs = entity("Ana", project=P2, id=shared_id, label="robot")
        other_mine, other_theirs = entity("Acme"), entity("Acme", project=P2)
        await store.upsert_entities(P1, [mine, other_mine])
        await store.upsert_entities(P2, [theirs, other_theirs])
        await store.upsert_relation(P1, relation(mine, "works_at", other_mine, session="s"))
        await store.upsert_relation(P2, relation(theirs, "built_by", other_theirs, session="s"))

        assert await store.get_entity(P1, shared_id) == mine
        assert await store.get_entity(P2, shared_id) == theirs
        assert [r.predicate for r in await store.relations(P1)] == ["works_at"]
        around = await store.neighbours(P1, shared_id, depth=2)
        assert [e.id for e in around.entities] == [other_mine.id]
        assert [e.project_id for e in await store.find_entities(P1, "ana and acme")] == [P1, P1]

        await store.delete_session(P1, "s")
        await store.delete_subject(P1, "Ana")
        assert await store.get_entity(P2, shared_id) == theirs
        assert len(await store.relations(P2)) == 1
        await store.delete_project(P1)
        assert (await store.counts(P2)).entities == 2
        assert (await store.counts(P1)).entities == 0

    # --------------------------------------------------------------------------- finding

    async def test_find_entities_is_word_bounded_case_insensitive_longest_first(
        self,
        store: GraphStore,
    ) -> None:
        bob = entity("Bob", aliases=("Robert",))
        smith = entity("Alice Smith")
        alice = entity("Alice")
        node = entity("node.js")
        await store.upsert_entities(P1, [bob, smith, alice, node])
        found = await store.find_entities(
            P1, "Did ALICE SMITH meet bob's friend? Robert uses Node.js."
        )
        # Longest matched name or alias first: "robert" (6) before "alice" (5).
        assert [e.name for e in found] == ["Alice Smith", "node.js", "Bob", "Alice"]
        assert await store.find_entities(P1, "Bobby and Alicesmith") == []
        assert await store.find_entities(P1, "") == []

    async def test_search_entities_exact_then_partial(self, store: GraphStore) -> None:
        berlin, berliner, other = entity("Berlin"), entity("Berliner Dom"), entity("Paris")
        await store.upsert_entities(P1, [berlin, berliner, other])
        assert [e.name for e in await store.search_entities(P1, "berlin")] == [
            "Berlin",
            "Berliner Dom",
        ]
        assert [e.name for e in await store.search_entities(P1, "BERLIN", limit=1)] == ["Berlin"]
        assert await store.search_entities(P1, "tokyo") == []

    async def test_neighbours_by_depth_with_provenance(self, store: GraphStore) -> None:
        a, b, c, _, e = await _chain(store)
        one = await store.neighbours(P1, a.id, depth=1)
        assert one.center == a
        assert [x.name for x in one.entities] == ["B"]
        assert one.message_ids == ("m-knows",)
        two = await store.neighbours(P1, a.id, depth=2)
        assert [x.name for x in two.entities] == ["B", "C"]
        assert {r.predicate for r in two.relations} == {"knows", "works_at"}
        history = await store.neighbours(P1, a.id, depth=1, active_only=False)
        assert {x.name for x in history.entities} == {"B", "E"}
        back = await store.neighbours(P1, c.id, depth=1)
        assert {x.name for x in back.entities} == {"B", "D"}
        assert b.id in {x.id for x in back.entities}
        with pytest.raises(InvalidInputError):
            await store.neighbours(P1, a.id, depth=0)
        with pytest.raises(InvalidInputError):
            await store.neighbours(P1, "missing", depth=1)
        assert e.id not in {x.id for x in two.entities}

    async def test_paths_shortest_first_within_depth(self, store: GraphStore) -> None:
        a, b, c, d, e = await _chain(store)
        shortcut = relation(a, "invested_in", c)
        await store.upsert_relation(P1, shortcut)
        paths = await store.paths(P1, a.id, d.id, max_depth=3)
        assert [[x.name for x in p.entities] for p in paths] == [
            ["A", "C", "D"],
            ["A", "B", "C", "D"],
        ]
        assert [p.length for p in paths] == [2, 3]
        assert await store.paths(P1, a.id, d.id, max_depth=1) == []
        assert await store.paths(P1, a.id, e.id) == []
        assert len(await store.paths(P1, a.id, e.id, active_only=False)) == 1
        assert len(await store.paths(P1, a.id, d.id, limit=1)) == 1
        assert b in paths[1].entities

    # --------------------------------------------------------------------------- forgetting

    async def test_delete_subject_removes_entity_and_its_edges_by_name_or_alias(
        self,
        store: GraphStore,
    ) -> None:
        a, b, c, _, _ = await _chain(store)
        await store.upsert_entity(P1, b.model_copy(update={"aliases": ("Bee",)}))
        gone = await store.delete_subject(P1, "bee")
        assert (gone.entities_deleted, gone.relations_deleted) == (1, 2)
        assert await store.get_entity(P1, b.id) is None
        assert {r.predicate for r in await store.relations(P1)} == {"located_in", "lived_in"}
        assert (await store.neighbours(P1, a.id, depth=2, active_only=True)).entities == ()
        assert (await store.delete_subject(P1, "nobody")).total == 0
        assert await store.get_entity(P1, c.id) == c

    async def test_delete_session_removes_only_what_only_that_session_said(
        self,
        store: GraphStore,
    ) -> None:
        ana = entity("Ana", session_ids=("s1",))
        lisbon = entity("Lisbon", session_ids=("s1",))
        tea = entity("Tea", session_ids=("s1", "s2"))
        manual = entity("Manual")
        await store.upsert_entities(P1, [ana, lisbon, tea, manual])
        both = Relation(
            project_id=P1,
            subject_id=ana.id,
            predicate="likes",
            object_id=tea.id,
            sources=(Provenance(session_id="s1"), Provenance(session_id="s2", message_id="m9")),
        )
        only = relation(ana, "lives_in", lisbon, session="s1")
        hand = relation(manual, "mentions", lisbon)
        await store.upsert_relations(P1, [both, only, hand])

        report = await store.delete_session(P1, "s1")
        assert (report.relations_deleted, report.relations_updated) == (1, 1)
        remaining = {r.predicate: r for r in await store.relations(P1)}
        assert set(remaining) == {"likes", "mentions"}
        assert remaining["likes"].session_ids == ("s2",)
        # Ana still has the "likes" edge, Lisbon the hand-made one: both stay, without s1.
        assert {e.name for e in await store.entities(P1)} == {"Ana", "Lisbon", "Tea", "Manual"}
        assert all("s1" not in e.session_ids for e in await store.entities(P1))

        await store.delete_session(P1, "s2")
        assert {r.predicate for r in await store.relations(P1)} == {"mentions"}
        assert await store.get_entity(P1, tea.id) is None  # only s1 and s2 ever named it
        assert await store.get_entity(P1, ana.id) is not None  # it lost s1 earlier while linked

    async def test_delete_project_reports_counts(self, store: GraphStore) -> None:
        await _chain(store)
        report = await store.delete_project(P1)
        assert (report.entities_deleted, report.relations_deleted) == (5, 4)
        assert (await store.counts(P1)).entities == 0
        assert await store.relations(P1) == []

    async def test_counts(self, store: GraphStore) -> None:
        await _chain(store)
        counts = await store.counts(P1)
        assert (counts.entities, counts.relations, counts.active_relations) == (5, 4, 3)

    async def test_project_view_has_the_same_operations(self, store: GraphStore) -> None:
        graph = store.for_project(P1)
        ana = await graph.upsert_entity(entity("Ana"))
        acme = await graph.upsert_entity(entity("Acme"))
        await graph.upsert_relation(relation(ana, "works_at", acme))
        assert [e.name for e in await graph.find_entities("ana")] == ["Ana"]
        assert (await graph.neighbours(ana.id)).entities == (acme,)
        assert (await graph.counts()).relations == 1
        assert (await graph.delete_all()).entities_deleted == 2
