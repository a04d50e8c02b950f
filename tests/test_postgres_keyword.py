"""PostgreSQL keyword search ranks as the embedded default (SQLite FTS5 bm25) and stays bounded.

The same facts go into a SQLite and a PostgreSQL metadata store; every query must return the same
ids in the same order with the same BM25 scores (up to float noise and ties). At 10,000 facts the
frequent-term rule of the SQLite store holds on PostgreSQL too.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sagewai.core._queries import FactQuery, WriteBatch
from sagewai.core._records import Fact
from sagewai.stores.postgres._metadata import PostgresMetadataStore, significant_terms
from sagewai.stores.sqlite import SqliteMetadataStore

pytestmark = pytest.mark.postgres

P = "kw"
NAMES = ["alice", "bob", "carol", "dave", "erin", "frank"]
WORDS = [
    "tea",
    "coffee",
    "kyoto",
    "lisbon",
    "invoice",
    "meeting",
    "flight",
    "tuesday",
    "march",
    "april",
    "budget",
    "report",
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "on",
    "at",
    "with",
    "for",
    "about",
    "paid",
    "booked",
    "moved",
    "2291",
    "12",
    "3",
    "9am",
    "noon",
]


def corpus(seed: int, size: int) -> list[Fact]:
    rng = random.Random(seed)
    facts = []
    for _ in range(size):
        words = [rng.choice(NAMES), *rng.choices(WORDS, k=rng.randint(2, 14))]
        facts.append(Fact(project_id=P, content=" ".join(words)))
    return facts


@pytest.fixture
async def stores(
    postgres_dsn: str, postgres_schema: str, tmp_path: Path
) -> AsyncIterator[tuple[SqliteMetadataStore, PostgresMetadataStore]]:
    sqlite = SqliteMetadataStore(str(tmp_path / "metadata.sqlite3"))
    postgres = PostgresMetadataStore(postgres_dsn, schema=postgres_schema)
    await sqlite.migrate()
    await postgres.migrate()
    try:
        yield sqlite, postgres
    finally:
        await sqlite.close()
        await postgres.close()


async def test_postgres_ranks_like_sqlite_fts5(
    stores: tuple[SqliteMetadataStore, PostgresMetadataStore],
) -> None:
    sqlite, postgres = stores
    facts = corpus(1, 400)
    for store in stores:
        await store.apply(WriteBatch(P, upserts=facts))
    rng = random.Random(2)
    query = FactQuery(project_id=P)
    for _ in range(60):
        text = " ".join(rng.sample(NAMES + WORDS, rng.randint(1, 5)))
        expected = await sqlite.keyword_search(query, text, 10)
        actual = await postgres.keyword_search(query, text, 10)
        assert len(actual) == len(expected), text
        for (got_id, got), (want_id, want) in zip(actual, expected, strict=True):
            assert got == pytest.approx(want, rel=1e-6, abs=1e-9), text
            if got_id != want_id:  # a tie: both scores equal, so the id may differ
                assert dict(expected).get(got_id, dict(actual)[got_id]) == pytest.approx(got)


async def test_frequent_terms_are_left_out_or_required_together(
    stores: tuple[SqliteMetadataStore, PostgresMetadataStore],
) -> None:
    _, postgres = stores
    facts = [
        Fact(project_id=P, content=f"alice {'likes' if i % 2 else 'visited'} item{i}")
        for i in range(10_000)
    ]
    facts += [Fact(project_id=P, content="bob visited kyoto")]
    facts += [Fact(project_id=P, content="alice visited kyoto")]
    for start in range(0, len(facts), 2_000):
        await postgres.apply(WriteBatch(P, upserts=facts[start : start + 2_000]))
    query = FactQuery(project_id=P)
    contents = {f.id: f.content for f in facts}
    hits = await postgres.keyword_search(query, "alice visited kyoto", 50)
    assert {contents[i] for i, _ in hits} == {"bob visited kyoto", "alice visited kyoto"}
    hits = await postgres.keyword_search(query, "alice likes", 50)
    assert len(hits) == 50
    assert all("alice likes" in contents[i] for i, _ in hits)


def test_significant_terms_follows_the_sqlite_rule() -> None:
    assert significant_terms(["a", "b"], {"a": 9_000}, 9_999) == (["a", "b"], False)
    assert significant_terms(["the", "kyoto"], {"the": 9_000, "kyoto": 3}, 20_000) == (
        ["kyoto"],
        False,
    )
    assert significant_terms(["the", "cat"], {"the": 9_000, "cat": 1_001}, 20_000) == (
        ["the", "cat"],
        True,
    )
    assert significant_terms(["the"], {"the": 9_000}, 20_000) == (["the"], False)


async def test_a_word_no_fact_holds_is_left_out_as_on_sqlite(
    stores: tuple[SqliteMetadataStore, PostgresMetadataStore],
) -> None:
    # "zzyzx" is in no fact: counted as rare it would be the only term matched, and the query
    # would find nothing. Both stores leave it out and rank the frequent words together.
    facts = [
        Fact(project_id=P, content=f"alice {'likes' if i % 2 else 'visited'} item{i}")
        for i in range(10_000)
    ]
    facts += [Fact(project_id=P, content="bob visited kyoto")]
    for store in stores:
        for start in range(0, len(facts), 2_000):
            await store.apply(WriteBatch(P, upserts=facts[start : start + 2_000]))
    query = FactQuery(project_id=P)
    contents = {f.id: f.content for f in facts}
    sqlite, postgres = stores
    for text in ("alice likes zzyzx", "zzyzx kyoto", "zzyzx"):
        expected = await sqlite.keyword_search(query, text, 20)
        actual = await postgres.keyword_search(query, text, 20)
        assert [round(s, 6) for _, s in actual] == [round(s, 6) for _, s in expected], text
        # Equal scores may tie-break differently (SQLite newest first, PostgreSQL by id).
        above = min((s for _, s in expected), default=0.0)
        assert {i for i, s in actual if s > above} == {i for i, s in expected if s > above}, text
    hits = await postgres.keyword_search(query, "alice likes zzyzx", 20)
    assert len(hits) == 20
    assert all("alice likes" in contents[i] for i, _ in hits)
    assert [contents[i] for i, _ in await postgres.keyword_search(query, "zzyzx kyoto", 5)] == [
        "bob visited kyoto"
    ]
    assert await postgres.keyword_search(query, "zzyzx", 5) == []


def test_significant_terms_leaves_out_words_no_fact_holds() -> None:
    assert significant_terms(["alice", "zzyzx"], {"alice": 30_000}, 1_000_000) == (
        ["alice"],
        False,
    )
    assert significant_terms(["zzyzx"], {"zzyzx": 0}, 1_000_000) == ([], False)
    assert significant_terms(["zzyzx", "a"], {}, 9_999) == (["zzyzx", "a"], False)
