"""Long records: nothing below 10 MB is refused, and a long message is found by any of its parts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sagewai.context._engine import ContextEngine
from sagewai.context._ranking import SearchConfig
from sagewai.core._queries import VectorFilter
from sagewai.core._records import MAX_CONTENT_CHARS, FactKind, Provenance
from sagewai.embeddings._minilm import MiniLMEmbedder, _windows
from sagewai.errors import InvalidInputError
from sagewai.testing import FakeEmbedder

FILLER = (
    "We reviewed the sprint board, moved two tickets to the next iteration and agreed that "
    "the continuous integration pipeline needs another pass over its caching rules. "
)
ENDING = (
    "Finally, about my grandmother's garden: she grows purple heirloom tomatoes beside a "
    "lavender hedge and a small fig tree, and she waters them at dawn every day."
)


def long_message() -> str:
    """About 40,000 characters of project talk with one distinct topic at its very end."""
    body = FILLER * (40_000 // len(FILLER))
    return body + ENDING


def test_windows_cover_a_long_text_and_keep_the_special_tokens() -> None:
    ids = [101, *range(1, 1001), 102]
    windows = _windows(ids, 256, 64)
    assert all(w[0] == 101 and w[-1] == 102 and len(w) <= 256 for w in windows)
    covered = {token for w in windows for token in w[1:-1]}
    assert covered == set(range(1, 1001))
    assert _windows([101, 5, 102], 256, 64) == [[101, 5, 102]]
    spread = _windows([101, *range(1, 100_001), 102], 256, 8)
    assert len(spread) == 8
    assert spread[0][1] == 1
    assert spread[-1][-2] == 100_000


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    embedder = MiniLMEmbedder()
    embedder.load()
    return embedder


async def test_a_40k_message_is_stored_verbatim_and_found_by_its_end_part(
    minilm: MiniLMEmbedder,
) -> None:
    async with ContextEngine.in_memory(project_id="long", embedder=minilm) as ctx:
        text = long_message()
        assert len(text) > 40_000
        stored = await ctx.add(
            text,
            kind=FactKind.MESSAGE,
            source=Provenance(session_id="s1", message_id="0", role="user"),
        )
        await ctx.add_many(
            [
                FILLER,
                "The release is planned for the end of the quarter.",
                "My cat sleeps on the sofa all afternoon.",
                "We use PostgreSQL for the billing service.",
                "I cook pasta with tomato sauce on Fridays.",
                "Our office plants need watering twice a week.",
            ]
        )
        results = await ctx.search("what does my grandmother grow in her garden?", top_k=1)
        assert results[0].fact.id == stored.id
        assert results[0].fact.content == text


async def test_a_text_longer_than_the_model_reads_is_embedded_whole(
    minilm: MiniLMEmbedder,
) -> None:
    text = FILLER * 8 + ENDING * 2  # about 400 word pieces: two windows
    query = await minilm.embed_query("grandmother garden heirloom tomatoes fig tree")
    whole, head = await minilm.embed_documents([text, text[:1_200]])
    assert float(whole @ query) > float(head @ query) + 0.05


async def test_a_40k_message_is_found_by_its_end_part_on_the_dense_side_alone(
    minilm: MiniLMEmbedder,
) -> None:
    dense_only = SearchConfig(
        keyword_weight=0.0, dense_weight=1.0, neighbour_weight=0.0, piece_weight=1.0
    )
    async with ContextEngine.in_memory(project_id="long", embedder=minilm) as ctx:
        stored = await ctx.add(long_message(), kind=FactKind.MESSAGE)
        await ctx.add_many([FILLER, "I cook pasta with tomato sauce on Fridays."])
        results = await ctx.search(
            "what does my grandmother grow in her garden?", top_k=1, search_config=dense_only
        )
        assert [r.fact.id for r in results] == [stored.id]
        # Its piece vectors go when it goes.
        everything = VectorFilter((stored.scope_key,))
        assert await ctx.port.vectors.count(everything) > 3
        await ctx.delete(stored.id)
        assert await ctx.port.vectors.count(everything) == 2
        assert all(r.fact.id != stored.id for r in await ctx.search("grandmother garden"))


async def test_a_9mb_record_is_accepted_by_the_in_memory_engine() -> None:
    text = "word " * (9_000_000 // 5)
    async with ContextEngine.in_memory(project_id="huge", embedder=FakeEmbedder()) as ctx:
        fact = await ctx.add(text + "needle", kind="message")
        assert (await ctx.get(fact.id)).content == text + "needle"
        assert [r.fact.id for r in await ctx.search("needle")] == [fact.id]


async def test_a_9mb_record_is_accepted_by_the_local_engine(tmp_path: Path) -> None:
    text = "word " * (9_000_000 // 5)
    async with ContextEngine.local(tmp_path, project_id="huge", embedder=FakeEmbedder()) as ctx:
        fact, other = await ctx.add_many([text + " needle", "a short one"])
        assert len((await ctx.get(fact.id)).content) == len(text) + 7
        assert (await ctx.search("needle"))[0].fact.id == fact.id
    async with ContextEngine.local(tmp_path, project_id="huge", embedder=FakeEmbedder()) as ctx:
        assert (await ctx.get(fact.id)).content.endswith("needle")
        assert (await ctx.get(other.id)).content == "a short one"


async def test_a_9mb_record_gets_a_minilm_vector_in_bounded_time(minilm: MiniLMEmbedder) -> None:
    vectors = await minilm.embed_documents(["lorem ipsum dolor " * 500_000])
    assert vectors.shape == (1, 384)
    assert np.isclose(float(np.linalg.norm(vectors[0])), 1.0, atol=1e-4)


async def test_content_above_the_limit_is_refused_with_a_typed_error() -> None:
    async with ContextEngine.in_memory(project_id="huge", embedder=FakeEmbedder()) as ctx:
        with pytest.raises(InvalidInputError):
            await ctx.add("x" * (MAX_CONTENT_CHARS + 1))
        assert await ctx.count() == 0


async def test_the_dense_index_is_asked_for_twice_the_pool_once_a_piece_is_seen() -> None:
    """A store that has shown no piece is asked for the pool's worth of hits, and answers as
    asking for twice as many would; the first search meeting a piece asks again for twice the
    pool, and every later one asks for twice the pool at once."""
    config = SearchConfig(candidates=4, group_by_source=False, neighbour_weight=0.0)
    queries = ["sprint board tickets", "caching rules pipeline", "note 7 about lunch"]
    texts = [f"note {i} about {FILLER.split(',')[i % 2]}" for i in range(40)]
    async with ContextEngine.in_memory(project_id="long", embedder=FakeEmbedder()) as ctx:
        asked: list[int] = []
        nearest = ctx.port.nearest

        async def counted(vector: object, top_k: int, where: VectorFilter) -> object:
            asked.append(top_k)
            return await nearest(vector, top_k, where)  # type: ignore[arg-type]

        ctx.port.nearest = counted  # type: ignore[method-assign, assignment]

        async def ids(query: str, *, seen: bool) -> list[str]:
            ctx._searcher.dense_pieces_seen = seen
            return [r.fact.id for r in await ctx.search(query, 3, search_config=config)]

        await ctx.add_many(texts)
        for query in queries:
            asked.clear()
            assert await ids(query, seen=False) == await ids(query, seen=True)
            assert asked == [4, 8]  # the pool's worth, then twice it (the way before)
        ctx._searcher.dense_pieces_seen = False
        await ctx.add(long_message(), kind=FactKind.MESSAGE)
        asked.clear()
        query = "grandmother garden heirloom tomatoes fig tree lavender"
        found = [r.fact.id for r in await ctx.search(query, 3, search_config=config)]
        assert asked == [4, 8]  # a piece among the first four: asked again
        assert ctx._searcher.dense_pieces_seen
        assert found == await ids(query, seen=True)
        asked.clear()
        for query in queries:
            await ctx.search(query, 3, search_config=config)
        assert asked == [8] * len(queries)
