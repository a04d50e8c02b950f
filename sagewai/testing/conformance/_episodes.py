"""The episode store conformance suite: subclass it, give it a factory, run the whole suite.

Every sagewai episode backend (:class:`~sagewai.stores.InMemoryEpisodeStore`,
:class:`~sagewai.stores.SqliteEpisodeStore`, :class:`~sagewai.stores.PostgresEpisodeStore`) runs
these tests: isolation between projects, hybrid search, replacing by id, hostile text, typed
errors on bad input and forgetting. A backend of your own passes them the same way::

    class TestMyEpisodeStore(EpisodeStoreConformance):
        @pytest.fixture
        def make_store(self, tmp_path):
            return lambda: MyEpisodeStore(tmp_path / "episodes.db", embedder=FakeEmbedder())

``make_store`` returns a function that makes a new, empty store; the suite calls ``migrate``
first when the class says the store needs it (``needs_migrate = True``, as PostgreSQL does) and
closes the store after each test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime

import pytest

from sagewai.core._conversation import ChatMessage
from sagewai.errors import InvalidInputError
from sagewai.stores import EpisodeStoreBase
from sagewai.testing.conformance._support import async_fixture, mark_async_tests

__all__ = ["EpisodeStoreConformance"]

EpisodeStoreFactory = Callable[[], EpisodeStoreBase]
"""Makes a new, empty episode store (not yet opened)."""

TRIP = [
    {"role": "user", "name": "alice", "content": "We fly to Lisbon on 12 May for the offsite."},
    {"role": "assistant", "content": "Great, I booked the Lisbon hotel near Belem."},
]
BUDGET = [
    {"role": "user", "name": "bob", "content": "The Q3 marketing budget is $40,000."},
    {"role": "assistant", "content": "Noted: the budget covers ads and two conferences."},
]
PETS = [
    {"role": "user", "name": "carol", "content": "My beagle Rex needs his vaccine next week."},
    {"role": "user", "name": "carol", "content": "Alice will walk Rex while I travel."},
]


@mark_async_tests
class EpisodeStoreConformance:
    """The episode store conformance suite; override the ``make_store`` fixture.

    Attributes:
        needs_migrate: Whether a new store needs ``await store.migrate()`` before use (a
            server-side schema created as a deployment step).
    """

    needs_migrate: bool = False

    @pytest.fixture
    def make_store(self) -> EpisodeStoreFactory:
        """A factory of new, empty stores: override this fixture in your subclass."""
        raise NotImplementedError("override the make_store fixture to return a store factory")

    @async_fixture
    async def store(self, make_store: EpisodeStoreFactory) -> AsyncIterator[EpisodeStoreBase]:
        """A new store from :meth:`make_store` (migrated when it needs it), closed afterwards."""
        store = make_store()
        try:
            if self.needs_migrate:
                await store.migrate()
            yield store
        finally:
            await store.close()

    async def test_save_and_get_round_trip(self, store: EpisodeStoreBase) -> None:
        said = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
        messages = [
            ChatMessage(role="user", content="Ship 2.1.0 on Friday", id="m1", timestamp=said)
        ]
        episode_id = await store.save_episode(
            "s1",
            [*messages, *TRIP],
            metadata={"channel": "slack", "n": 3},
            project_id="p1",
            user_id="alice",
        )
        episode = await store.get_episode(episode_id)
        assert episode is not None
        assert (episode.session_id, episode.project_id, episode.user_id) == ("s1", "p1", "alice")
        assert episode.messages[0] == messages[0]
        assert episode.messages[1].name == "alice"
        assert episode.metadata == {"channel": "slack", "n": 3}
        assert episode.summary
        assert "Lisbon" in episode.summary
        assert await store.get_episode("no-such-episode") is None

    async def test_search_finds_the_session_that_discussed_it(
        self, store: EpisodeStoreBase
    ) -> None:
        ids = {
            name: await store.save_episode(name, messages, project_id="p1")
            for name, messages in (("trip", TRIP), ("budget", BUDGET), ("pets", PETS))
        }
        for query, expected in (
            ("when do we fly to Lisbon", "trip"),
            ("marketing budget for Q3", "budget"),
            ("Rex vaccine", "pets"),
        ):
            found = await store.search_episodes(query, project_id="p1", limit=3)
            assert found[0].id == ids[expected], query
            assert found[0].score is not None
            assert found[0].score >= (found[-1].score or 0)

    async def test_episodes_of_another_project_are_never_seen(
        self, store: EpisodeStoreBase
    ) -> None:
        mine = await store.save_episode("s1", TRIP, project_id="p1")
        theirs = await store.save_episode("s1", TRIP, project_id="p2")
        found = await store.search_episodes("Lisbon hotel", project_id="p1", limit=10)
        assert [e.id for e in found] == [mine]
        assert await store.get_episode(theirs, project_id="p1") is None
        assert await store.delete_session("s1", project_id="p1") == 1
        assert await store.get_episode(theirs) is not None
        assert [e.id for e in await store.search_episodes("Lisbon", project_id="p2")] == [theirs]

    async def test_delete_user_and_project_return_counts(self, store: EpisodeStoreBase) -> None:
        await store.save_episode("s1", TRIP, project_id="p1", user_id="alice")
        await store.save_episode("s2", BUDGET, project_id="p1", user_id="alice")
        await store.save_episode("s3", PETS, project_id="p1", user_id="carol")
        await store.save_episode("s4", PETS, project_id="p2", user_id="alice")
        assert await store.delete_user("alice", project_id="p1") == 2
        assert [e.session_id for e in await store.list_episodes(project_id="p1")] == ["s3"]
        assert await store.delete_project("p1") == 1
        assert await store.list_episodes(project_id="p1") == []
        assert len(await store.list_episodes(project_id="p2")) == 1

    async def test_redact_subject_counts_and_its_dry_run_changes_nothing(
        self, store: EpisodeStoreBase
    ) -> None:
        pets = await store.save_episode("pets", PETS, project_id="p1")
        await store.save_episode(
            "a",
            [{"role": "user", "content": "Hi", "metadata": {"with": ["Alice"]}}],
            project_id="p1",
        )
        await store.save_episode("budget", BUDGET, project_id="p1")
        before = await store.list_episodes(project_id="p1")
        plan = await store.redact_subject("alice", project_id="p1", dry_run=True)
        assert await store.list_episodes(project_id="p1") == before
        done = await store.redact_subject("alice", project_id="p1")
        assert plan == done
        assert (done.episodes_redacted, done.episodes_deleted) == (1, 1)
        assert done.messages_removed == 2
        assert len(await store.list_episodes(project_id="p1")) == 2
        kept = await store.get_episode(pets)
        assert kept is not None
        assert "alice" not in kept.model_dump_json().lower()

    async def test_forget_subject_removes_every_mention(self, store: EpisodeStoreBase) -> None:
        pets = await store.save_episode("pets", PETS, project_id="p1")
        only_alice = await store.save_episode(
            "a", [{"role": "user", "name": "alice", "content": "Hi there"}], project_id="p1"
        )
        budget = await store.save_episode("budget", BUDGET, project_id="p1")
        other_project = await store.save_episode("pets", PETS, project_id="p2")
        assert await store.forget_subject("Alice", project_id="p1") == 2
        redacted = await store.get_episode(pets)
        assert redacted is not None
        assert [m.content for m in redacted.messages] == [PETS[0]["content"]]
        assert "alice" not in redacted.summary.lower()
        assert await store.get_episode(only_alice) is None
        assert await store.get_episode(budget) is not None
        assert await store.search_episodes("Alice walk", project_id="p1") != []
        assert all(
            "Alice" not in m.content
            for e in await store.list_episodes(project_id="p1")
            for m in e.messages
        )
        kept = await store.get_episode(other_project)
        assert kept is not None
        assert len(kept.messages) == 2

    async def test_saving_under_an_id_replaces(self, store: EpisodeStoreBase) -> None:
        first = await store.save_episode("s1", TRIP, project_id="p1", episode_id="ep-1")
        again = await store.save_episode("s1", BUDGET, project_id="p1", episode_id="ep-1")
        assert first == again == "ep-1"
        (episode,) = await store.list_episodes(project_id="p1")
        assert episode.messages[0].content == BUDGET[0]["content"]
        assert [e.id for e in await store.search_episodes("budget", project_id="p1")] == ["ep-1"]
        assert await store.search_episodes("Belem hotel", project_id="p1") != []

    @pytest.mark.parametrize(
        "hostile",
        [
            "'; DROP TABLE episodes; --",
            'NEAR( "tea" * -coffee OR',
            "a & b | !c <-> d:*",
            "\\x00 ) ( ' \" `",
        ],
    )
    async def test_hostile_text_is_data_not_syntax(
        self, store: EpisodeStoreBase, hostile: str
    ) -> None:
        episode_id = await store.save_episode(
            "s'1", [{"role": "user", "content": f"remember {hostile}"}], project_id="p'1"
        )
        found = await store.search_episodes(hostile, project_id="p'1")
        assert [e.id for e in found] == [episode_id]
        assert await store.forget_subject("remember", project_id="p'1") == 1
        assert await store.list_episodes(project_id="p'1") == []

    async def test_bad_input_is_a_typed_error(self, store: EpisodeStoreBase) -> None:
        with pytest.raises(InvalidInputError):
            await store.save_episode("s1", [], project_id="p1")
        with pytest.raises(InvalidInputError):
            await store.save_episode("s1", [{"role": "user", "content": "  "}])
        with pytest.raises(InvalidInputError):
            await store.save_episode("bad\nid", TRIP)
        with pytest.raises(InvalidInputError):
            await store.search_episodes("   ")
        with pytest.raises(InvalidInputError):
            await store.save_episode("s1", TRIP, metadata={"x": float("nan")})
