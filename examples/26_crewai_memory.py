"""26 CrewAI: a crew whose unified Memory is stored in sagewai, one scope per user.

``SagewaiStorage`` is CrewAI's memory ``StorageBackend``: the crew's memory paths map onto
sagewai scopes (``/users/<id>/...`` at that user's scope, ``.../sessions/<id>`` at a session's,
anything else shared by the crew), entities become subjects, and search is sagewai's hybrid
search. Each user's crew gets ``memory.scope("/users/<id>")``: what Maya's crew learns is
recalled in her next task, never in Leo's.

The model is sagewai's scripted CrewAI model (``sagewai.testing.ScriptedCrewLLM``), so the
example runs offline; CrewAI's telemetry and trace prompts are off.

Needs: pip install "sagewai[crewai]"  (not beside "sagewai[mcp]": CrewAI pins mcp<2)
Run: python examples/26_crewai_memory.py
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_DISABLE_TRACKING", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

from _setup import example_folder
from crewai import Agent, Crew, Task
from crewai.memory.analyze import (
    ConsolidationPlan,
    ExtractedMemories,
    ExtractedMetadata,
    MemoryAnalysis,
)
from crewai.memory.unified_memory import Memory

from sagewai import ContextEngine
from sagewai.integrations.crewai import SagewaiStorage
from sagewai.sync import wrap
from sagewai.testing import ScriptedCrewLLM

prompts: list[str] = []


def memory_model(messages: list[dict[str, Any]], response_model: type | None) -> Any:
    """CrewAI's memory asks what to keep from a task, and whether to merge it: scripted."""
    if response_model is ExtractedMemories:
        said = str(messages[-1]["content"])
        return ExtractedMemories(memories=["Maya is vegetarian"] if "vegetarian" in said else [])
    if response_model is MemoryAnalysis:  # where to file it: the entity, a path, a category
        return MemoryAnalysis(
            suggested_scope="/preferences",
            categories=["diet"],
            importance=0.8,
            extracted_metadata=ExtractedMetadata(entities=["Maya"]),
        )
    if response_model is ConsolidationPlan:
        return ConsolidationPlan(actions=[], insert_new=True)
    raise AssertionError(f"unexpected memory call for {response_model}")


def chef_model(messages: list[dict[str, Any]], response_model: type | None) -> Any:
    prompts.append("\n".join(str(m.get("content")) for m in messages))
    vegetarian = "vegetarian" in prompts[-1]  # said in the task, or recalled from memory
    return "a mushroom risotto" if vegetarian else "a steak with fries"


def main() -> None:
    print("model: a scripted CrewAI model (sagewai.testing.ScriptedCrewLLM), offline")
    with example_folder("26_crewai_memory") as folder:
        os.environ.setdefault("CREWAI_STORAGE_DIR", tempfile.mkdtemp(dir=folder))
        engine = ContextEngine.local(folder, project_id="kitchen")
        storage = SagewaiStorage(engine)
        memory = Memory(
            storage=storage, embedder=storage.embedder, llm=ScriptedCrewLLM(memory_model)
        )
        for user, request in [
            ("maya", "I'm vegetarian. Plan my dinner."),
            ("maya", "Plan my dinner for Friday."),
            ("leo", "Plan my dinner for Friday."),
        ]:
            chef = Agent(
                role="Chef", goal="Plan meals", backstory="A cook.", llm=ScriptedCrewLLM(chef_model)
            )
            task = Task(description=request, expected_output="A meal idea.", agent=chef)
            crew = Crew(agents=[chef], tasks=[task], memory=memory.scope(f"/users/{user}"))
            answer = crew.kickoff()
            memory.drain_writes()
            print(f"{user}: {request}\n  crew: {answer.raw}")

        ctx = wrap(engine)
        fact = ctx.search("vegetarian", user_id="maya")[0].fact
        print(f"sagewai sees it as a {fact.scope.value} fact of {fact.user_id}: {fact.content}")
        leo = [r.fact.content for r in ctx.search("vegetarian", user_id="leo")]
        print(f"leo's recall of it: {leo}")
        (record,) = storage.list_records("/users/maya")
        print(f"subject: {fact.subject}; CrewAI path: {record.scope} {record.categories}")
        ctx.close()


if __name__ == "__main__":
    main()
