"""``ctx.add`` with a list of chat messages: the chat goes through the bridge in one call."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagewai import ContextEngine, FactKind, FactStatus
from sagewai.errors import InvalidInputError
from sagewai.testing import FakeEmbedder


@pytest.fixture(params=["memory", "local"])
async def ctx(request: pytest.FixtureRequest, tmp_path: Path) -> ContextEngine:
    if request.param == "memory":
        engine = ContextEngine.in_memory(embedder=FakeEmbedder())
    else:
        engine = ContextEngine.local(tmp_path / "memory", embedder=FakeEmbedder())
    await engine.open()
    yield engine
    await engine.close()


async def test_a_chat_is_kept_verbatim_with_the_facts_read_from_it(ctx: ContextEngine) -> None:
    chat = [
        {"role": "user", "content": "I live in Berlin and I work at Siemens."},
        {"role": "assistant", "content": "Noted!"},
    ]
    written = await ctx.add(chat, user_id="ana", session_id="s1")
    texts = {r.content for r in written if r.kind is FactKind.MESSAGE}
    assert {"I live in Berlin and I work at Siemens.", "Noted!"} <= texts
    facts = [r for r in written if r.kind is FactKind.FACT]
    assert {f.predicate for f in facts} >= {"lives_in", "works_at"}
    assert all(r.user_id == "ana" for r in written)
    assert all(any(s.session_id == "s1" for s in r.sources) for r in written)
    # The same chat again (same session): nothing is stored twice.
    again = await ctx.add(chat, user_id="ana", session_id="s1")
    assert {r.id for r in again} <= {r.id for r in written}
    assert await ctx.count() == len(await ctx.list(user_id="ana", statuses=None, limit=1000))


async def test_a_later_chat_that_states_a_change_supersedes_the_old_fact(
    ctx: ContextEngine,
) -> None:
    await ctx.add([{"role": "user", "content": "I live in Berlin."}], user_id="ana")
    await ctx.add([{"role": "user", "content": "I moved to Munich last week."}], user_id="ana")
    homes = [
        f
        for f in await ctx.list(user_id="ana", statuses=None, kinds=["fact"])
        if f.predicate == "lives_in"
    ]
    status = {f.object: f.status for f in homes}
    assert status.get("Munich") is FactStatus.ACTIVE
    assert status.get("Berlin") is FactStatus.SUPERSEDED


async def test_users_do_not_see_each_others_chats(ctx: ContextEngine) -> None:
    await ctx.add([{"role": "user", "content": "My dog is called Rex."}], user_id="ana")
    written = await ctx.add([{"role": "user", "content": "I like tea."}], user_id="ben")
    assert all(r.user_id == "ben" for r in written)
    found = await ctx.search("dog called Rex", user_id="ben")
    assert all(r.fact.user_id != "ana" for r in found)


@pytest.mark.parametrize(
    ("content", "fields", "words"),
    [
        ([], {}, "empty list"),
        ([{"role": "user", "content": "hi"}], {"subject": "x"}, "takes only"),
        (["I like tea", "I like coffee"], {}, "add_many"),
        (42, {}, "not int"),
    ],
)
async def test_bad_chats_are_refused_and_nothing_is_stored(
    ctx: ContextEngine, content: object, fields: dict[str, object], words: str
) -> None:
    with pytest.raises(InvalidInputError, match=words):
        await ctx.add(content, **fields)  # type: ignore[call-overload]
    assert await ctx.count() == 0


async def test_a_chat_of_empty_messages_stores_nothing(ctx: ContextEngine) -> None:
    assert await ctx.add([{"role": "user", "content": "  "}], user_id="ana") == []
    assert await ctx.count() == 0
