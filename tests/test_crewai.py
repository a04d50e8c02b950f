"""CrewAI on sagewai: a real ``Crew`` and unified ``Memory`` over ``SagewaiStorage``.

CrewAI 1.7+ pins ``mcp<2`` and sagewai's MCP server needs ``mcp>=2.3``, so this module runs in
its own environment (``.ci/run`` builds ``.venv-crewai`` from the ``crewai`` and ``testing``
extras) and skips where CrewAI is not installed. The model is a scripted ``BaseLLM`` (no
network) and CrewAI's telemetry and tracing are off.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_DISABLE_TRACKING", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
pytest.importorskip("crewai", reason="CrewAI runs in its own environment (.venv-crewai)")

from crewai import Agent, Crew, Task
from crewai.memory.analyze import ConsolidationPlan, ExtractedMemories, MemoryAnalysis
from crewai.memory.storage.backend import StorageBackend
from crewai.memory.types import MemoryRecord
from crewai.memory.unified_memory import Memory

from sagewai import ContextEngine
from sagewai.errors import InvalidInputError
from sagewai.integrations.crewai import SagewaiStorage, scope_of_path
from sagewai.sync import wrap
from sagewai.testing import FakeEmbedder, ScriptedCrewLLM


@pytest.fixture(autouse=True)
def _crewai_storage_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CREWAI_STORAGE_DIR", str(tmp_path / "crewai"))


@pytest.fixture
def engine() -> Iterator[ContextEngine]:
    ctx = ContextEngine.in_memory(embedder=FakeEmbedder(), project_id="crew")
    yield ctx
    wrap(ctx).close()


def facts_of(text: str) -> Any:
    """A scripted answer for every kind of call CrewAI's memory and agents make."""

    def answer(messages: list[dict[str, Any]], response_model: type | None) -> Any:
        if response_model is ExtractedMemories:
            return ExtractedMemories(memories=[text])
        if response_model is MemoryAnalysis:
            return MemoryAnalysis(
                suggested_scope="/preferences",
                categories=["preference"],
                importance=0.8,
                extracted_metadata={"entities": ["Maya"], "dates": [], "topics": ["food"]},
            )
        if response_model is ConsolidationPlan:
            return ConsolidationPlan(actions=[], insert_new=True)
        return "Final Answer: " + str(messages[-1]["content"]).splitlines()[0][:80]

    return answer


def test_the_storage_is_a_storage_backend(engine: ContextEngine) -> None:
    assert isinstance(SagewaiStorage(engine), StorageBackend)


def test_paths_map_onto_scopes_by_one_rule() -> None:
    assert scope_of_path("/").scope.value == "project"
    assert scope_of_path(None, bound_user="maya").user_id == "maya"
    assert scope_of_path("/crew/users/maya/agent/chef").scope.value == "user"
    run = scope_of_path("/users/maya/sessions/run-1")
    assert (run.scope.value, run.user_id, run.session_id) == ("session", "maya", "run-1")
    with pytest.raises(InvalidInputError, match="this storage holds 'leo'"):
        scope_of_path("/users/maya", bound_user="leo")
    with pytest.raises(InvalidInputError, match="without an id"):
        scope_of_path("/users")


def test_memory_round_trip_with_entities_and_categories(engine: ContextEngine) -> None:
    storage = SagewaiStorage(engine)
    llm = ScriptedCrewLLM(facts_of("unused"))
    memory = Memory(storage=storage, embedder=storage.embedder, llm=llm)
    memory.remember(
        "Maya is vegetarian and cooks on Fridays",
        scope="/users/maya/preferences",
        categories=["preference"],
        importance=0.9,
        metadata={"entities": ["Maya"]},
    )
    memory.remember("The crew's budget is 4000 EUR", scope="/crew", categories=["budget"])
    memory.drain_writes()
    found = memory.recall("what does Maya eat?", scope="/users/maya", depth="shallow")
    assert [m.record.content for m in found] == ["Maya is vegetarian and cooks on Fridays"]
    # It is a USER fact of maya in sagewai, with the entity as its subject.
    fact = wrap(engine).search("vegetarian", user_id="maya")[0].fact
    assert (fact.scope.value, fact.user_id, fact.subject) == ("user", "maya", "Maya")
    leo_sees = [r.fact.content for r in wrap(engine).search("vegetarian", user_id="leo")]
    assert leo_sees == ["The crew's budget is 4000 EUR"]  # the crew's, never Maya's
    # Reads of a path read the scope it maps onto: "/" is the crew's shared memory, a user's
    # records are read under that user's path (no path lists every user's memory).
    assert storage.list_scopes("/") == ["/crew"]
    assert storage.list_scopes("/users/maya") == ["/users/maya/preferences"]
    assert storage.list_categories("/users/maya") == {"preference": 1}
    info = storage.get_scope_info("/users/maya")
    assert (info.record_count, info.child_scopes) == (1, ["/users/maya/preferences"])
    assert storage.count("/crew") == 1


def test_update_supersedes_and_delete_forgets_every_version(engine: ContextEngine) -> None:
    storage = SagewaiStorage(engine, user_id="ana")
    record = MemoryRecord(content="Ana lives in Paris", scope="/profile")
    storage.save([record])
    storage.update(record.model_copy(update={"content": "Ana lives in Lyon"}))
    got = storage.get_record(record.id)
    assert got is not None
    assert (got.content, got.id) == ("Ana lives in Lyon", record.id)
    history = wrap(engine).history(record.id)
    assert [c.action.value for c in history][-1] == "superseded"
    assert storage.delete(record_ids=[record.id]) == 1
    assert storage.get_record(record.id) is None
    assert wrap(engine).count() == 0  # the old version went too: forgetting is complete
    with pytest.raises(InvalidInputError, match="this storage holds 'ana'"):
        storage.save([MemoryRecord(content="x", scope="/users/bob")])


def test_a_search_needs_the_storages_embedder(engine: ContextEngine) -> None:
    storage = SagewaiStorage(engine)
    with pytest.raises(InvalidInputError, match=r"embedder=storage\.embedder"):
        storage.search([0.1] * 8)


def test_two_users_crews_never_see_each_others_memory(engine: ContextEngine) -> None:
    """CrewAI's own notion of whose memory it is: a scope view per user."""
    storage = SagewaiStorage(engine)
    memory = Memory(
        storage=storage,
        embedder=storage.embedder,
        llm=ScriptedCrewLLM(facts_of("Maya is vegetarian")),
    )

    def crew_for(user: str, question: str, answers: ScriptedCrewLLM) -> Crew:
        chef = Agent(role="Chef", goal="Plan meals", backstory="A cook.", llm=answers)
        task = Task(description=question, expected_output="A meal idea.", agent=chef)
        return Crew(agents=[chef], tasks=[task], memory=memory.scope(f"/users/{user}"))

    seen: list[str] = []

    def agent_answer(messages: list[dict[str, Any]], response_model: type | None) -> Any:
        seen.append("\n".join(str(m.get("content")) for m in messages))
        return "Final Answer: a mushroom risotto"

    crew_for("maya", "I'm vegetarian. Plan my dinner.", ScriptedCrewLLM(agent_answer)).kickoff()
    memory.drain_writes()
    stored = wrap(engine).list(user_id="maya", scope="user")
    assert [f.content for f in stored] == ["Maya is vegetarian"]

    crew_for("maya", "Plan my dinner for Friday.", ScriptedCrewLLM(agent_answer)).kickoff()
    assert "Maya is vegetarian" in seen[-1]  # recalled before the task
    crew_for("leo", "Plan my dinner for Friday.", ScriptedCrewLLM(agent_answer)).kickoff()
    assert "Maya is vegetarian" not in seen[-1]
    assert all(r.fact.user_id != "maya" for r in wrap(engine).search("vegetarian", user_id="leo"))
    memory.drain_writes()


async def test_async_entry_points_run_on_the_same_loop(engine: ContextEngine) -> None:
    storage = SagewaiStorage(engine, user_id="kai")
    await storage.asave([MemoryRecord(content="Kai's office is room 4.12", scope="/work")])
    vector = storage.embedder(["office room"])[0]
    hits = await storage.asearch(vector, scope_prefix="/work")
    assert [r.content for r, _ in hits] == ["Kai's office is room 4.12"]
    assert 0.0 <= hits[0][1] <= 1.0
    assert await storage.adelete(scope_prefix="/work") == 1


def test_short_term_memories_live_in_their_session(engine: ContextEngine) -> None:
    storage = SagewaiStorage(engine, user_id="maya")
    storage.save([MemoryRecord(content="This run is about the Q3 menu", scope="/sessions/run-1")])
    storage.save([MemoryRecord(content="Maya is vegetarian", scope="/preferences")])
    read = wrap(engine).list(user_id="maya", session_id="run-1", scope="session")
    (short,) = [f for f in read if f.scope.value == "session"]
    assert (short.session_id, short.user_id) == ("run-1", "maya")
    assert storage.count("/sessions/run-1") == 1
    # The user's long-term reads never include a session's short-term memory...
    assert [r.content for r in storage.list_records("/")] == ["Maya is vegetarian"]
    # ...and her other sessions do not see it either.
    other = wrap(engine).search("Q3 menu", user_id="maya", session_id="run-2")
    assert all(r.fact.session_id != "run-1" for r in other)
