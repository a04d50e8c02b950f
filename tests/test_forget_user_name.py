"""``forget(subject="Dana")`` clears the name the user gave everywhere (issue 42).

The profile's identity entry, every fact reading "Dana (the user) ...", the verbatim messages,
and the bridge's name store (the state a later turn reads "Dana (the user)" from): the receipt
counts the name (``user_names``), a dry run's receipt is the real one's, and the bridge that
was running keeps the name no longer. On memory, the embedded folder and PostgreSQL.
"""

from __future__ import annotations

import re

from sagewai import ContextEngine
from sagewai.context import MemoryBridge
from sagewai.context.bridge._names import user_name_key
from sagewai.core._queries import FactQuery
from sagewai.intelligence import RuleBasedFactExtractor
from tests.helpers import engine_on_every_backend, every_backend  # noqa: F401

DANA = re.compile(r"(?<!\w)dana(?!\w)", re.IGNORECASE)


engine = engine_on_every_backend
"""In memory, the embedded folder and PostgreSQL (``tests.helpers``)."""


def bridge_of(ctx: ContextEngine) -> MemoryBridge:
    return MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor(), journal=False)


async def naming_dana(ctx: ContextEngine) -> list[str]:
    """Every record of the project (any status, any kind) whose text names Dana."""
    found = [
        f
        async for f in ctx.port.iter_facts(FactQuery(project_id=ctx.project_id))
        if DANA.search(" ".join([f.content, f.subject or "", f.object or "", str(f.metadata)]))
        or any(DANA.search(s.speaker or "") for s in f.sources)
    ]
    return [f.content for f in found]


async def test_forgetting_the_name_clears_it_everywhere(engine: ContextEngine) -> None:
    bridge = bridge_of(engine)
    await bridge.process_message(
        "My name is Dana and I lead the platform team.", session_id="s1", user_id="dana"
    )
    await bridge.process_message(
        "Always answer in French. I work at Initech.", session_id="s1", user_id="dana"
    )
    await bridge.process_message("I moved to Lisbon.", session_id="s2", user_id="eve")
    profile = [e.content for e in await engine.profile(user_id="dana").entries()]
    assert "The user's name is Dana." in profile
    assert "Dana (the user) works at Initech." in profile
    assert await engine.port.get_state(user_name_key("dana")) is not None

    preview = await engine.forget(subject="Dana", dry_run=True)
    assert await engine.port.get_state(user_name_key("dana")) is not None  # nothing changed
    done = await engine.forget(subject="Dana")
    assert preview == done
    assert done.user_names == 1
    assert done.as_dict()["user_names"] == 1
    assert done.facts >= 3

    assert await naming_dana(engine) == []
    assert await engine.port.get_state(user_name_key("dana")) is None
    profile = [e.content for e in await engine.profile(user_id="dana").entries()]
    assert not any(DANA.search(text) for text in profile)
    # The instruction said beside the name stays: only the name was forgotten.
    assert "The user's standing instruction: Always answer in French." in profile
    # The running bridge reads no name now, nor does a new one.
    later = await bridge.process_message("I moved to Porto.", session_id="s3", user_id="dana")
    assert [f.content for f in later] == ["The user moved to Porto."]
    assert bridge.user_name("dana") is None
    await bridge.aclose()
    again = bridge_of(engine)
    facts = await again.process_message("I work at Globex.", session_id="s4", user_id="dana")
    assert [f.content for f in facts] == ["The user works at Globex."]
    await again.aclose()
    # Another user's records are untouched, and forgetting again finds nothing.
    assert await engine.search("Lisbon", user_id="eve")
    assert (await engine.forget(subject="Dana")).user_names == 0


async def test_forgetting_the_session_that_gave_the_name_erases_it(engine: ContextEngine) -> None:
    bridge = bridge_of(engine)
    await bridge.process_message("My name is Dana.", session_id="s1", user_id="dana")
    await bridge.process_message("I like tea.", session_id="s2", user_id="dana")
    done = await engine.forget(session_id="s1")
    assert done.user_names == 1
    assert await engine.port.get_state(user_name_key("dana")) is None
    # Forgetting another subject leaves the name.
    await bridge.process_message("My name is Dee.", session_id="s3", user_id="dana")
    await bridge.flush()
    assert (await engine.forget(subject="tea")).user_names == 0
    assert await engine.port.get_state(user_name_key("dana")) is not None
    await bridge.aclose()
