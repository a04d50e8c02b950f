"""One embedding per message: the context record and the restating fact share the message's
vector, and no text of an ingest is embedded twice (issue 38)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from benchmarks.bridge_bench import CountingEmbedder
from sagewai import ContextEngine
from sagewai.context import MemoryBridge
from sagewai.context._ranking import is_context_record
from sagewai.context._reconcile import Candidate, ReconcilingWriter, SharedVector, TextVectors
from sagewai.context.bridge._sharing import RESTATES, restates, restating_fact
from sagewai.core import Conversation
from sagewai.core._records import Fact, FactKind, Provenance
from sagewai.extraction import RuleBasedFactExtractor
from sagewai.testing import FakeEmbedder


def counting_embedder() -> CountingEmbedder:
    """The fake embedder, remembering every text (and call) it was given."""
    return CountingEmbedder(FakeEmbedder())


CHAT = [
    {"role": "user", "content": "Did you go to the pottery class on Friday?", "speaker": "Ann"},
    {"role": "user", "content": "Yes, it was great.", "speaker": "Bo"},
    {"role": "user", "content": "I moved to Berlin last year.", "speaker": "Ann"},
    {"role": "user", "content": "Thanks!", "speaker": "Bo"},
]


async def _bridge(folder: Path, embedder: CountingEmbedder, *, share: bool = True) -> list[Fact]:
    async with ContextEngine.local(folder, embedder=embedder, project_id="p1") as ctx:
        bridge = MemoryBridge(
            context_engine=ctx,
            fact_extractor=RuleBasedFactExtractor(),
            save_episodes=False,
            share_vectors=share,
        )
        for session in ("s1", "s2"):  # the same words in two sessions: "Thanks!" twice
            await bridge.bridge_conversation(Conversation.of(CHAT, session_id=session))
        # One more turn through the per-message path, after the conversations.
        await bridge.process_message("Thanks!", session_id="s1", user_id=None)
        await bridge.aclose()
        return await ctx.get_all(statuses=None)


async def test_each_message_text_is_embedded_once(tmp_path: Path) -> None:
    embedder = counting_embedder()
    stored = await _bridge(tmp_path, embedder)
    counts = Counter(embedder.texts)
    assert counts, "nothing was embedded"
    twice = {text: n for text, n in counts.items() if n > 1}
    assert not twice, f"embedded more than once: {twice}"
    contexts = [r for r in stored if is_context_record(r)]
    assert contexts, "the chat has short replies: they get context records"
    assert not {r.content for r in contexts} & set(counts), "a context record was embedded"
    # Each message's text, the facts that restate it, nothing else.
    messages = {m["content"] for m in CHAT}
    assert messages <= set(counts)
    facts = [r for r in stored if r.kind is FactKind.FACT]
    moved = [f for f in facts if "Berlin" in f.content]
    assert moved
    assert restates(moved[0].content, "I moved to Berlin last year.") >= RESTATES
    assert moved[0].content not in counts, "a fact that restates its message was embedded"


async def test_the_old_path_embeds_every_record(tmp_path: Path) -> None:
    embedder = counting_embedder()
    stored = await _bridge(tmp_path, embedder, share=False)
    contexts = {r.content for r in stored if is_context_record(r)}
    assert contexts
    assert contexts <= set(embedder.texts)
    assert Counter(embedder.texts)["Thanks!"] >= 2  # once per write


async def test_a_context_record_sums_the_message_and_the_turn_before(tmp_path: Path) -> None:
    embedder = counting_embedder()
    async with ContextEngine.local(tmp_path, embedder=embedder, project_id="p1") as ctx:
        bridge = MemoryBridge(
            context_engine=ctx,
            fact_extractor=RuleBasedFactExtractor(),
            save_episodes=False,
            share_vectors=True,
        )
        await bridge.bridge_conversation(Conversation.of(CHAT[:2], session_id="s1"))
        records = await ctx.get_all(kinds=["message"])
        (around,) = [r for r in records if is_context_record(r)]
        question, reply = (
            next(r for r in records if r.content == CHAT[n]["content"]) for n in (0, 1)
        )
        vectors = await ctx.port.get_vectors([around.id, question.id, reply.id])
    prefix = len(around.content) - len(reply.content) - 1
    blend = len(reply.content) * vectors[reply.id] + prefix * vectors[question.id]
    expected = blend / np.linalg.norm(blend)
    assert np.allclose(vectors[around.id], expected, atol=1e-5)
    # Between the two: nearer each than they are to each other.
    between = float(vectors[question.id] @ vectors[reply.id])
    assert float(vectors[around.id] @ vectors[question.id]) > between
    assert float(vectors[around.id] @ vectors[reply.id]) > between


async def test_a_context_record_of_the_end_of_a_long_turn_is_embedded(tmp_path: Path) -> None:
    """The record holds the last 300 characters of the turn before: the turn's vector says
    what the rest of it says, so the record's own text is embedded (the default bridge)."""
    long_turn = " ".join(f"Sentence {n} is about a different topic entirely." for n in range(20))
    chat = [
        {"role": "user", "content": long_turn, "speaker": "Ann"},
        {"role": "user", "content": "Yes, it was great.", "speaker": "Bo"},
        {"role": "user", "content": "Did you see Carl there?", "speaker": "Ann"},
    ]
    embedder = counting_embedder()
    async with ContextEngine.local(tmp_path, embedder=embedder, project_id="p1") as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, fact_extractor=RuleBasedFactExtractor(), save_episodes=False
        )
        await bridge.bridge_conversation(Conversation.of(chat, session_id="s1"))
        contexts = {r.content for r in await ctx.get_all(kinds=["message"]) if is_context_record(r)}
    assert len(contexts) == 2
    cut = next(text for text in contexts if text.endswith(chat[1]["content"]))
    whole = next(text for text in contexts if text.endswith(chat[2]["content"]))
    assert len(cut) < len(long_turn)  # only the end of the long turn
    assert cut in embedder.texts
    assert whole not in embedder.texts  # the whole reply before it: shared


def test_one_fact_per_message_takes_its_vector() -> None:
    source = Provenance(message_id="m1")
    facts = [
        Candidate(Fact(id=i, project_id="p", content=text), "user", source)
        for i, text in (("a", "Dana loves tea."), ("b", "Dana loves tea and cake."))
    ]
    shared = restating_fact(facts, "I love tea and cake!", "m-record")
    assert shared == {"b": SharedVector((("m-record", 1.0),))}  # the one that holds most
    assert restating_fact(facts, "I love tea, cake, jam and scones on Sunday.", "m") == {}


async def test_a_vector_that_cannot_be_shared_is_embedded() -> None:
    """A shared vector naming a record with no vector: the record's own text is embedded."""
    embedder = counting_embedder()
    async with ContextEngine.in_memory(embedder=embedder, project_id="p1") as ctx:
        writer = ReconcilingWriter(ctx.port)
        record = Fact(id="r1", project_id="p1", content="hello there", kind=FactKind.MESSAGE)
        await writer.write([], verbatim=[record], shared={"r1": SharedVector((("gone", 1.0),))})
        assert embedder.texts == ["hello there"]
        assert "r1" in await ctx.port.get_vectors(["r1"])


@pytest.mark.parametrize("size", [0, 2])
async def test_text_vectors_remember_recent_texts(size: int) -> None:
    embedder = counting_embedder()
    cache = TextVectors(size)
    first = await cache.embed(embedder, ["a", "b", "a"])
    again = await cache.embed(embedder, ["a", "c"])
    assert np.allclose(first[0], again[0])
    assert embedder.texts == (["a", "b", "a", "c"] if size == 0 else ["a", "b", "c"])
    assert size == 0 or len(cache._known) <= size
