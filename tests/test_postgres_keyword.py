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
from sagewai.stores import MetadataStore, SqliteMetadataStore
from sagewai.stores.postgres import _metadata as metadata_module
from sagewai.stores.postgres._metadata import PostgresMetadataStore, significant_terms

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


def alice_corpus(project: str = P) -> list[Fact]:
    """10,000 facts: "alice" in all, "likes" and "visited" in half each (every word frequent)."""
    return [
        Fact(project_id=project, content=f"alice {'likes' if i % 2 else 'visited'} item{i}")
        for i in range(10_000)
    ]


async def fill(store: MetadataStore, facts: list[Fact]) -> None:
    for start in range(0, len(facts), 2_000):
        await store.apply(WriteBatch(facts[0].project_id, upserts=facts[start : start + 2_000]))


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
    facts = alice_corpus()
    facts += [Fact(project_id=P, content="bob visited kyoto")]
    facts += [Fact(project_id=P, content="alice visited kyoto")]
    await fill(postgres, facts)
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
    facts = [*alice_corpus(), Fact(project_id=P, content="bob visited kyoto")]
    for store in stores:
        await fill(store, facts)
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


# -- the in-memory copy of frequent words (sagewai.stores.postgres._frequent) -------------------


async def test_the_copy_ranks_as_the_statement(
    stores: tuple[SqliteMetadataStore, PostgresMetadataStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Above 1,000 matches the words' facts are ranked in memory; the scores must be the
    # statement's (the same BM25 over the same totals), whatever the query.
    _, postgres = stores
    rng = random.Random(5)
    rare = ["ramen", "sushi", "tacos", "pho", "curry"]  # 480 facts each: under 5 %, OR-ed
    facts = corpus(3, 12_000) + [
        Fact(project_id=P, content=f"{rng.choice(NAMES)} {rare[i % 5]} {rng.choice(WORDS)}")
        for i in range(2_400)
    ]
    await fill(postgres, facts)
    query = FactQuery(project_id=P)
    texts = [" ".join(rng.sample(NAMES + WORDS, rng.randint(1, 4))) for _ in range(30)]
    texts += [
        " ".join([*rng.sample(rare, rng.randint(3, 5)), rng.choice(WORDS)]) for _ in range(10)
    ]
    from_copy = [await postgres.keyword_search(query, text, 20) for text in texts]
    assert set(rare) <= set(postgres._frequent_words._words)  # rare words' OR from the copy too
    monkeypatch.setattr(metadata_module, "_STATEMENT_MAX_MATCHES", 10**9)
    for text, got in zip(texts, from_copy, strict=True):
        want = await postgres.keyword_search(query, text, 20)
        assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9), text
        above = min((s for _, s in want), default=0.0) * (1 + 1e-9)  # ties at the cut may differ
        assert {i for i, s in got if s > above} == {i for i, s in want if s > above}, text


async def test_the_copy_sees_every_later_write_of_another_process(
    postgres_dsn: str, postgres_schema: str
) -> None:
    searcher = PostgresMetadataStore(postgres_dsn, schema=postgres_schema)
    writer = PostgresMetadataStore(postgres_dsn, schema=postgres_schema)
    await writer.migrate()
    try:
        facts = alice_corpus()
        await fill(writer, facts)
        query = FactQuery(project_id=P)
        first = await searcher.keyword_search(query, "alice likes", 5)
        assert len(first) == 5
        assert len(searcher._frequent_words) == 2
        # A new fact, shorter than every other one, ranks first once written.
        short = Fact(project_id=P, content="alice likes")
        await writer.apply(WriteBatch(P, upserts=[short]))
        hits = await searcher.keyword_search(query, "alice likes", 5)
        assert hits[0][0] == short.id
        # Rewritten without the word, deleted: never returned, though their bits remain.
        top = hits[1][0]
        await writer.apply(
            WriteBatch(P, upserts=[short.model_copy(update={"content": "bob visited lisbon"})])
        )
        await writer.apply(WriteBatch(P, deletes=[top]))
        ids = [i for i, _ in await searcher.keyword_search(query, "alice likes", 5)]
        assert short.id not in ids
        assert top not in ids
        assert len(ids) == 5
        # A fact that now holds "likes" twice scores above the rest.
        twice = facts[1].model_copy(update={"content": "alice likes likes item1"})
        await writer.apply(WriteBatch(P, upserts=[twice]))
        assert (await searcher.keyword_search(query, "alice likes", 1))[0][0] == twice.id
    finally:
        await searcher.close()
        await writer.close()


async def test_a_transaction_that_commits_late_is_still_read(
    postgres_dsn: str, postgres_schema: str
) -> None:
    # A writer that started first and commits last holds a lower seq than facts the copy has
    # already caught up with: reading "facts above the last seq" would miss it for good.
    import asyncpg

    from sagewai.stores.base._sql import FACT_COLUMNS

    store = PostgresMetadataStore(postgres_dsn, schema=postgres_schema)
    await store.migrate()
    slow = await asyncpg.connect(postgres_dsn)
    try:
        await fill(store, alice_corpus())
        query = FactQuery(project_id=P)
        await store.keyword_search(query, "alice likes", 5)  # the copy is read
        template = Fact(project_id=P, content="alice likes")
        await store.apply(WriteBatch(P, upserts=[template]))
        columns = ", ".join((*FACT_COLUMNS[1:], "updated_at", "search"))
        transaction = slow.transaction()
        await transaction.start()
        await slow.execute(
            f'INSERT INTO "{postgres_schema}".facts (id, {columns})'
            f' SELECT $1, {columns} FROM "{postgres_schema}".facts WHERE id = $2',
            "late-fact",
            template.id,
        )
        quick = Fact(project_id=P, content="alice likes tea")
        await store.apply(WriteBatch(P, upserts=[quick]))  # commits first, with a higher seq
        ids = [i for i, _ in await store.keyword_search(query, "alice likes", 5)]
        assert template.id in ids
        assert quick.id in ids
        assert "late-fact" not in ids
        await transaction.commit()
        ids = [i for i, _ in await store.keyword_search(query, "alice likes", 5)]
        assert "late-fact" in ids
    finally:
        await slow.close()
        await store.close()


async def test_the_copy_never_returns_another_projects_facts(
    stores: tuple[SqliteMetadataStore, PostgresMetadataStore],
) -> None:
    # The copy covers the whole table; the lookup applies the filter. Another project's facts
    # rank above every one of this project's (shorter), so the first batches all fail it.
    _, postgres = stores
    await fill(postgres, alice_corpus())
    await fill(postgres, [Fact(project_id="other", content="alice likes") for _ in range(3_000)])
    hits = await postgres.keyword_search(FactQuery(project_id=P), "alice likes", 10)
    own = {f.id for f in await postgres.query(FactQuery(project_id=P))}
    assert len(hits) == 10
    assert {i for i, _ in hits} <= own
    assert len(postgres._frequent_words) == 2
    other = await postgres.keyword_search(FactQuery(project_id="other"), "alice likes", 10)
    assert len(other) == 10
    assert not {i for i, _ in other} & own


async def test_the_copy_ranks_words_of_any_script_as_sqlite_does(
    stores: tuple[SqliteMetadataStore, PostgresMetadataStore],
) -> None:
    # Frequent words outside ASCII (accents, Greek, CJK), some held twice: both stores answer
    # from their in-memory copies, which must agree with each other on the facts and scores.
    rng = random.Random(9)
    words = ["ñandú", "σίσυφος", "日本語", "straße", "café", "naïve"]
    facts = [
        Fact(
            project_id=P,
            content=" ".join(rng.choices(words, k=rng.randint(2, 5))) + f" note{i}",
        )
        for i in range(10_000)
    ]
    for store in stores:
        await fill(store, facts)
    sqlite, postgres = stores
    query = FactQuery(project_id=P)
    for text in ["ñandú", "σίσυφος 日本語", "Straße café", "naïve ñandú 日本語"]:
        expected = await sqlite.keyword_search(query, text, 20)
        actual = await postgres.keyword_search(query, text, 20)
        assert len(actual) == len(expected) == 20, text
        # Uniform note lengths aside, the average differs only by PostgreSQL's sample.
        assert [s for _, s in actual] == pytest.approx([s for _, s in expected], rel=0.05), text
        contents = {f.id: f.content for f in facts}
        for fact_id, _ in actual:
            assert all(term in contents[fact_id].split() for term in text.lower().split()), text
    assert {"ñandú", "σίσυφος", "日本語"} <= set(postgres._frequent_words._words)


async def test_a_long_catch_up_reads_the_copy_afresh(
    stores: tuple[SqliteMetadataStore, PostgresMetadataStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    # More facts written since the copy's snapshot than a catch-up reads: the copy is dropped
    # and read again, and the search still sees every one of them.
    from sagewai.stores.postgres import _frequent

    _, postgres = stores
    await fill(postgres, alice_corpus())
    query = FactQuery(project_id=P)
    await postgres.keyword_search(query, "alice likes", 5)
    copy = postgres._frequent_words
    first_snapshot, first_alice = copy._snapshot, copy._words["alice"]
    monkeypatch.setattr(_frequent, "_CATCH_UP_MAX", 5)
    shortest = [Fact(project_id=P, content="alice likes") for _ in range(8)]
    await postgres.apply(WriteBatch(P, upserts=shortest))
    hits = await postgres.keyword_search(query, "alice likes", 8)
    assert {i for i, _ in hits} == {f.id for f in shortest}
    assert copy._snapshot != first_snapshot
    assert copy._words["alice"] is not first_alice  # read again, not caught up
    assert copy._words["alice"].count == 10_008


async def _saved_words(dsn: str, schema: str) -> set[str]:
    import asyncpg

    connection = await asyncpg.connect(dsn)
    try:
        rows = await connection.fetch(f'SELECT word FROM "{schema}".keyword_copies')
    finally:
        await connection.close()
    return {row[0] for row in rows}


async def _alice_saved(postgres: PostgresMetadataStore, dsn: str, schema: str) -> list[Fact]:
    """The alice corpus, searched once: "alice" and "likes" are read from the heap and saved."""
    facts = alice_corpus()
    await fill(postgres, facts)
    await postgres.keyword_search(FactQuery(project_id=P), "alice likes", 5)
    assert await _saved_words(dsn, schema) == {"alice", "likes"}
    return facts


def _forbid_heap_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on a word read from the heap (not loaded from its saved copy) fails the test."""
    from sagewai.stores.postgres._frequent import PostgresFrequentWords

    async def no_heap_read(self: PostgresFrequentWords, pool: object, word: str) -> None:
        raise AssertionError(f"{word!r} was read from the heap, not loaded")

    monkeypatch.setattr(PostgresFrequentWords, "_read_word", no_heap_read)


async def test_a_later_process_loads_the_saved_copy_and_catches_it_up(
    postgres_dsn: str, postgres_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first process reads the words from the heap and saves them; a later one (a fresh
    # store) loads them without reading the heap, with every fact written in between.
    first = PostgresMetadataStore(postgres_dsn, schema=postgres_schema)
    await first.migrate()
    later = PostgresMetadataStore(postgres_dsn, schema=postgres_schema)
    try:
        await fill(first, alice_corpus())
        query = FactQuery(project_id=P)
        before = await first.keyword_search(query, "alice likes", 5)
        assert await _saved_words(postgres_dsn, postgres_schema) == {"alice", "likes"}
        short = Fact(project_id=P, content="alice likes")
        twice = Fact(project_id=P, content="alice likes likes tea")
        await first.apply(WriteBatch(P, upserts=[short, twice]))

        _forbid_heap_reads(monkeypatch)
        hits = await later.keyword_search(query, "alice likes", 7)
        assert {i for i, _ in hits[:2]} == {twice.id, short.id}  # the shortest, and a repeat
        assert [i for i, _ in hits[2:]] == [i for i, _ in before]
        loaded = later._frequent_words._words
        assert loaded["alice"].count == 10_002
        assert loaded["likes"].count == 5_002
        # The scores are the ones a copy read from the heap gives (the statement's too).
        monkeypatch.undo()
        fresh = PostgresMetadataStore(postgres_dsn, schema=postgres_schema)
        try:
            fresh._frequent_words._saved = None
            read = await fresh.keyword_search(query, "alice likes", 7)
            assert [i for i, _ in read] == [i for i, _ in hits]
            assert [s for _, s in read] == pytest.approx([s for _, s in hits], rel=1e-12)
        finally:
            await fresh.close()
    finally:
        await first.close()
        await later.close()


async def test_a_bulk_load_saves_the_frequent_words_for_the_next_process(
    postgres_dsn: str, postgres_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # At the end of a bulk load every word in more than 1,000 facts is saved: the next process
    # reads none of them from the heap, and ranks as a process that did.
    loader = PostgresMetadataStore(postgres_dsn, schema=postgres_schema)
    await loader.migrate()
    later = PostgresMetadataStore(postgres_dsn, schema=postgres_schema)
    fresh = PostgresMetadataStore(postgres_dsn, schema=postgres_schema)
    fresh._frequent_words._saved = None  # reads every word from the heap
    try:
        await fill(loader, alice_corpus()[:100])
        assert await loader.prepare_keyword_search() == 0  # small: one statement ranks all
        async with loader.bulk_load():
            await fill(loader, alice_corpus()[100:])
        assert await _saved_words(postgres_dsn, postgres_schema) == {"alice", "likes", "visited"}
        assert len(loader._frequent_words) == 0  # saved, not kept by the loading process
        query = FactQuery(project_id=P)
        expected = {
            text: await fresh.keyword_search(query, text, 7)
            for text in ("alice likes", "visited", "alice item7")
        }

        _forbid_heap_reads(monkeypatch)
        for text, hits in expected.items():
            found = await later.keyword_search(query, text, 7)
            assert [i for i, _ in found] == [i for i, _ in hits], text
            assert [s for _, s in found] == pytest.approx([s for _, s in hits], rel=1e-12)
        assert set(later._frequent_words._words) == {"alice", "likes", "visited"}
    finally:
        await loader.close()
        await later.close()
        await fresh.close()


async def test_a_bulk_load_that_fails_saves_nothing_and_raises(
    stores: tuple[SqliteMetadataStore, PostgresMetadataStore],
    postgres_dsn: str,
    postgres_schema: str,
) -> None:
    _, store = stores

    async def load_then_break() -> None:
        async with store.bulk_load():
            await fill(store, alice_corpus())
            raise RuntimeError("the source broke")

    with pytest.raises(RuntimeError, match="the source broke"):
        await load_then_break()
    assert await store.count(FactQuery(project_id=P)) == 10_000  # what was written stays
    assert await _saved_words(postgres_dsn, postgres_schema) == set()
    assert await store.prepare_keyword_search() == 3  # called by hand once the load is done
    assert await _saved_words(postgres_dsn, postgres_schema) == {"alice", "likes", "visited"}


async def test_deleting_facts_empties_the_saved_copies(
    stores: tuple[SqliteMetadataStore, PostgresMetadataStore],
    postgres_dsn: str,
    postgres_schema: str,
) -> None:
    # Nothing drawn from a forgotten fact outlives it there, not even a bit of a bitmap.
    _, postgres = stores
    facts = await _alice_saved(postgres, postgres_dsn, postgres_schema)
    await postgres.apply(WriteBatch(P, deletes=["no-such-fact"]))  # deletes nothing: kept
    assert await _saved_words(postgres_dsn, postgres_schema) == {"alice", "likes"}
    await postgres.apply(WriteBatch(P, deletes=[facts[0].id]))
    assert await _saved_words(postgres_dsn, postgres_schema) == set()
    # A word read afresh is saved again ("alice" stays in this process's memory, unsaved).
    await postgres.keyword_search(FactQuery(project_id=P), "alice visited", 5)
    assert await _saved_words(postgres_dsn, postgres_schema) == {"visited"}
    await postgres.delete_project(P)
    assert await _saved_words(postgres_dsn, postgres_schema) == set()


async def test_a_saved_copy_is_not_used_once_the_table_changed_by_a_tenth(
    postgres_dsn: str, postgres_schema: str
) -> None:
    import asyncpg

    first = PostgresMetadataStore(postgres_dsn, schema=postgres_schema)
    await first.migrate()
    later = PostgresMetadataStore(postgres_dsn, schema=postgres_schema)
    connection = await asyncpg.connect(postgres_dsn)
    try:
        await fill(first, alice_corpus())
        await first.keyword_search(FactQuery(project_id=P), "alice likes", 5)
        # As if saved when the table held a third as many facts: read afresh, saved again.
        await connection.execute(
            f'UPDATE "{postgres_schema}".keyword_copies SET table_size = table_size / 3,'
            " bits = ''::bytea"
        )
        hits = await later.keyword_search(FactQuery(project_id=P), "alice likes", 5)
        assert len(hits) == 5
        assert later._frequent_words._words["alice"].count == 10_000
        sizes = await connection.fetch(
            f'SELECT table_size, length(bits) FROM "{postgres_schema}".keyword_copies'
        )
        assert all(row[1] > 0 for row in sizes)
    finally:
        await connection.close()
        await first.close()
        await later.close()


async def test_a_delete_never_waits_for_a_saved_copy_another_transaction_holds(
    stores: tuple[SqliteMetadataStore, PostgresMetadataStore],
    postgres_dsn: str,
    postgres_schema: str,
) -> None:
    # The trigger skips rows held elsewhere (a process saving a word): a delete never waits on
    # them, so two writers can never deadlock through the table.
    import asyncio

    import asyncpg

    _, postgres = stores
    facts = await _alice_saved(postgres, postgres_dsn, postgres_schema)
    holder = await asyncpg.connect(postgres_dsn)
    try:
        transaction = holder.transaction()
        await transaction.start()
        await holder.execute(
            f"SELECT 1 FROM \"{postgres_schema}\".keyword_copies WHERE word = 'alice' FOR UPDATE"
        )
        await asyncio.wait_for(postgres.apply(WriteBatch(P, deletes=[facts[0].id])), 10)
        await transaction.rollback()
    finally:
        await holder.close()
    assert await _saved_words(postgres_dsn, postgres_schema) == {"alice"}  # the held row stays


async def test_read_marks_stay_on_their_page_and_the_pending_list_is_bounded(
    stores: tuple[SqliteMetadataStore, PostgresMetadataStore], postgres_schema: str
) -> None:
    """A search's read mark (``touch``) must not add entries to every index: with room left on
    each page (migration 0006) the new row version stays on its page (a HOT update), so the
    keyword index's pending list, which every keyword query scans, does not grow with reads."""
    _, postgres = stores
    facts = corpus(7, 2_000)
    await fill(postgres, facts)
    pool = postgres._pool
    table, index = f'"{postgres_schema}".facts', f'"{postgres_schema}".facts_search'

    async def pages(ids: list[str]) -> dict[str, str]:
        rows = await pool.fetch(
            f"SELECT id, (ctid::text::point)[0]::text FROM {table} WHERE id = ANY($1::text[])", ids
        )
        return {row[0]: row[1] for row in rows}

    marked = [fact.id for fact in facts[::20]]  # one fact in twenty, across every page
    before = await pages(marked)
    await postgres.touch(P, marked, facts[0].created_at)
    after = await pages(marked)
    moved = sum(before[i] != after[i] for i in marked)
    assert moved <= len(marked) // 10, f"{moved} of {len(marked)} marks left their page"
    options = await pool.fetchval("SELECT reloptions FROM pg_class WHERE oid = $1::regclass", index)
    assert "gin_pending_list_limit=512" in options
