"""Progress bars on long calls: shown on a terminal or when asked, never in a pipe or a log."""

from __future__ import annotations

import pytest

from sagewai import ContextEngine
from sagewai.context import MemoryBridge
from sagewai.core import Conversation
from sagewai.errors import InvalidInputError
from sagewai.testing import FakeEmbedder


@pytest.fixture
def ctx() -> ContextEngine:
    return ContextEngine.in_memory(embedder=FakeEmbedder())


async def test_add_many_draws_a_bar_when_asked(
    ctx: ContextEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    await ctx.add_many([f"note {i}" for i in range(5)], progress=True)
    err = capsys.readouterr().err
    assert "embedding facts" in err
    assert "/5 " in err


async def test_no_bar_where_no_one_watches(
    ctx: ContextEngine, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SAGEWAI_PROGRESS", raising=False)
    await ctx.add_many([f"note {i}" for i in range(300)])  # large, but stderr is captured
    assert capsys.readouterr().err == ""


async def test_the_environment_turns_bars_on_and_off(
    ctx: ContextEngine, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SAGEWAI_PROGRESS", "1")
    await ctx.add_many(["one", "two"])
    assert "embedding facts" in capsys.readouterr().err
    monkeypatch.setenv("SAGEWAI_PROGRESS", "0")
    await ctx.add_many(["three", "four"])
    assert capsys.readouterr().err == ""
    await ctx.add_many(["five"], progress=True)  # the call's own choice wins
    assert "embedding facts" in capsys.readouterr().err


async def test_bridge_conversation_counts_its_turns(
    ctx: ContextEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    bridge = MemoryBridge(context_engine=ctx, journal=False)
    chat = Conversation.of(
        [{"role": "user", "content": f"I visited city number {i} last year."} for i in range(4)],
        session_id="s1",
        user_id="bob",
    )
    try:
        await bridge.bridge_conversation(chat, progress=True)
    finally:
        await bridge.aclose()
    err = capsys.readouterr().err
    assert "bridging turns" in err
    assert "/4 " in err


@pytest.mark.parametrize("bad", ["yes", 1, [True]])
async def test_a_bad_progress_value_is_refused_before_anything_is_stored(
    ctx: ContextEngine, bad: object
) -> None:
    with pytest.raises(InvalidInputError, match="progress"):
        await ctx.add_many(["kept out"], progress=bad)  # type: ignore[arg-type]
    assert await ctx.count() == 0
    bridge = MemoryBridge(context_engine=ctx, journal=False)
    try:
        with pytest.raises(InvalidInputError, match="progress"):
            await bridge.bridge_conversation(
                [{"role": "user", "content": "I work at Initech."}],
                progress=bad,  # type: ignore[arg-type]
            )
    finally:
        await bridge.aclose()
    assert await ctx.count() == 0
