"""At scale the SQLite keyword search bounds its work: frequent terms give way to rare ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sagewai.core._queries import FactQuery, WriteBatch
from sagewai.core._records import Fact
from sagewai.stores import SqliteMetadataStore

P = "scale"


async def test_frequent_terms_are_left_out_or_required_together(tmp_path: Path) -> None:
    store = SqliteMetadataStore(str(tmp_path / "metadata.sqlite3"))
    facts = [
        Fact(project_id=P, content=f"alice {'likes' if i % 2 else 'visited'} item{i}")
        for i in range(10_000)
    ]
    facts.append(Fact(project_id=P, content="bob visited kyoto"))
    facts.append(Fact(project_id=P, content="alice visited kyoto"))
    for start in range(0, len(facts), 2_000):
        await store.apply(WriteBatch(P, upserts=facts[start : start + 2_000]))
    query = FactQuery(project_id=P)
    # "kyoto" is rare: the frequent "alice"/"visited" are left out, so only kyoto facts match.
    hits = await store.keyword_search(query, "alice visited kyoto", 50)
    contents = {f.id: f.content for f in facts}
    assert {contents[i] for i, _ in hits} == {"bob visited kyoto", "alice visited kyoto"}
    # Every term frequent: facts must hold all of them ("alice" and "likes"), never just one.
    hits = await store.keyword_search(query, "alice likes", 50)
    assert len(hits) == 50
    assert all("alice likes" in contents[i] for i, _ in hits)
    await store.close()


async def _joined(
    store: SqliteMetadataStore, query: FactQuery, match: str, top_k: int
) -> list[tuple[str, float]]:
    """FTS5's own ranking of ``match`` (one joined query), as ``(id, score)``."""
    hits = await store._database.run(store._keyword_joined_sync, query, match, top_k, "f.id")
    return [(fact_id, score) for score, fact_id in hits]


def filters() -> list[FactQuery]:
    """No filter, one that rejects most of the best rows, half of them, and all of them."""
    return [
        FactQuery(project_id=P),
        FactQuery(project_id=P, tags_any=("rare",)),
        FactQuery(project_id=P, user_id="u1"),
        FactQuery(project_id=P, tags_any=("absent",)),
    ]


def assert_same_ranking(
    fast: list[tuple[str, float]], joined: list[tuple[str, float]], every: dict[str, float]
) -> None:
    """The same scores in the same order; the same facts but for ties at the last score."""
    assert [score for _, score in fast] == [score for _, score in joined]
    assert all(every[fact_id] == score for fact_id, score in fast)
    last = joined[-1][1] if joined else None
    assert {i for i, s in fast if s != last} == {i for i, s in joined if s != last}
    assert len(set(fast)) == len(fast)


async def test_frequent_words_rank_as_fts5_bm25(tmp_path: Path) -> None:
    """Every word frequent: the in-memory copy of the index ranks as FTS5's bm25() does.

    Repeated words (tf 2 and 3), filters that reject most or all of the best rows, many equal
    scores (newest first here; by id in the joined query) and every top_k give the joined
    query's scores, in its order.
    """
    store = SqliteMetadataStore(str(tmp_path / "metadata.sqlite3"))
    facts = [
        Fact(
            project_id=P,
            content=f"tea {'tea ' * (i % 3)}{'green ' * (i % 4 != 0)}item{i}",
            tags=("rare",) if i % 97 == 0 else ("common",),
            user_id=f"u{i % 2}",
        )
        for i in range(10_000)
    ]
    facts += [Fact(project_id="other", content=f"tea tea tea green {i}") for i in range(500)]
    for start in range(0, len(facts), 2_500):
        await store.apply(WriteBatch(facts[start].project_id, upserts=facts[start : start + 2_500]))
    queries = filters()
    by_id = {fact.id: fact for fact in facts}
    await store.open()
    for text, match in (("tea", '"tea"'), ("green tea", '"green" AND "tea"')):
        for query in queries:
            every = dict(await _joined(store, query, match, 100_000))
            for top_k in (1, 10, 60, 500):
                fast = await store.keyword_search(query, text, top_k)
                joined = await _joined(store, query, match, top_k)
                assert_same_ranking(fast, joined, every)
                # The hits with their records, read by sequence number in the same step.
                found = await store.keyword_facts(query, text, top_k)
                assert [(fact.id, score) for fact, score in found] == fast
                assert all(fact == by_id[fact.id] for fact, _ in found)
    assert len(store._frequent) == 2  # "tea" and "green", read once
    assert len(await store.keyword_search(queries[1], "tea", 500)) == len(range(0, 10_000, 97))
    # A word no fact holds is left out rather than left alone to match nothing.
    assert len(await store.keyword_search(queries[0], "green tea zzyzx", 10)) == 10
    await store.close()


async def test_the_frequent_words_follow_every_write(tmp_path: Path) -> None:
    """New facts, rewritten texts and deletions, by this store or another process's, are seen
    by the next search as if the index were read afresh."""
    path = str(tmp_path / "metadata.sqlite3")
    store = SqliteMetadataStore(path)
    other = SqliteMetadataStore(path)  # a second connection: another process, as far as SQLite sees
    facts = [Fact(project_id=P, content=f"coffee item{i}") for i in range(10_000)]
    await store.apply(WriteBatch(P, upserts=facts))
    query = FactQuery(project_id=P)
    await store.open()

    async def check() -> None:
        every = dict(await _joined(store, query, '"coffee"', 100_000))
        fast = await store.keyword_search(query, "coffee", 20)
        joined = await _joined(store, query, '"coffee"', 20)
        assert_same_ranking(fast, joined, every)

    await check()
    short = Fact(project_id=P, content="coffee")  # the shortest: the best score
    await other.apply(WriteBatch(P, upserts=[short]))
    await check()
    assert (await store.keyword_search(query, "coffee", 1))[0][0] == short.id
    await other.apply(WriteBatch(P, upserts=[short.model_copy(update={"content": "tea"})]))
    await check()
    assert short.id not in {i for i, _ in await store.keyword_search(query, "coffee", 50)}
    repeated = facts[5].model_copy(update={"content": "coffee coffee"})
    await store.apply(WriteBatch(P, upserts=[repeated]))
    await check()
    assert (await store.keyword_search(query, "coffee", 1))[0][0] == repeated.id
    await other.apply(WriteBatch(P, deletes=[repeated.id]))
    await check()
    assert repeated.id not in {i for i, _ in await store.keyword_search(query, "coffee", 50)}
    await store.close()
    await other.close()


async def test_rare_words_many_matches_rank_as_fts5_bm25(tmp_path: Path) -> None:
    """Rare words with thousands of matches in all (an OR of them): the in-memory copy of their
    facts ranks as FTS5's bm25() does, facts holding several of the words and facts holding a
    word twice first, the filter checked on the best rows in growing batches."""
    store = SqliteMetadataStore(str(tmp_path / "metadata.sqlite3"))
    facts = [
        Fact(
            project_id=P,
            content=(
                f"w{i % 25} {'w' + str(i % 25) + ' ' if i % 7 == 0 else ''}"
                f"{'w' + str((i + 3) % 25) + ' ' if i % 11 == 0 else ''}item{i}"
            ),
            tags=("rare",) if i % 97 == 0 else ("common",),
            user_id=f"u{i % 2}",
        )
        for i in range(10_000)
    ]
    await store.apply(WriteBatch(P, upserts=facts))
    text = " ".join(f"w{n}" for n in range(12))  # 12 rare words of about 436 facts each
    match = " OR ".join(f'"w{n}"' for n in range(12))
    await store.open()
    assert (await store._database.run(store._significant_terms, text.split()))[1] is False
    for query in filters():
        every = dict(await _joined(store, query, match, 100_000))
        for top_k in (1, 10, 60, 500):
            fast = await store.keyword_search(query, text, top_k)
            joined = await _joined(store, query, match, top_k)
            assert_same_ranking(fast, joined, every)
    assert len(store._frequent) == 12
    # A fact holding two of the words outranks one holding one.
    best = (await store.keyword_search(FactQuery(project_id=P), "w0 w3", 1))[0][0]
    assert {"w0", "w3"} <= set(next(f.content for f in facts if f.id == best).split())
    await store.close()


async def test_the_size_rule_counts_every_fact_of_every_process(tmp_path: Path) -> None:
    # The frequent-term rule reads the store's size from the keyword index (one row per fact):
    # exact after this process's and another's writes, rewrites, deletions and a dropped project.
    path = str(tmp_path / "metadata.sqlite3")
    store, other = SqliteMetadataStore(path), SqliteMetadataStore(path)

    async def counted() -> tuple[int, int]:
        def both(db: Any) -> tuple[int, int]:
            return store._fact_total(), int(db.execute("SELECT count(*) FROM facts").fetchone()[0])

        return await store._database.run(lambda: both(store._db()))

    assert await counted() == (0, 0)
    facts = [Fact(project_id=P, content=f"fact {i}") for i in range(30)]
    await store.apply(WriteBatch(P, upserts=facts[:20]))
    await other.apply(WriteBatch(P, upserts=facts[20:]))
    await other.apply(WriteBatch("q", upserts=[Fact(project_id="q", content="elsewhere")]))
    assert await counted() == (31, 31)
    await other.apply(WriteBatch(P, upserts=[facts[0].model_copy(update={"content": "new"})]))
    await store.apply(WriteBatch(P, deletes=[facts[1].id, facts[2].id]))
    assert await counted() == (29, 29)
    await other.delete_project("q")
    assert await counted() == (28, 28)
    await store.close()
    await other.close()


async def test_words_the_index_folds_otherwise_are_kept(tmp_path: Path) -> None:
    """FTS5 folds a Greek final sigma to a sigma; Python's lower() keeps it. A large store looks
    words up in the index's vocabulary, so a Greek word would be "unknown" there and left out
    of the query; the in-memory copy must also count its repeats in the index's form."""
    store = SqliteMetadataStore(str(tmp_path / "metadata.sqlite3"))
    facts = [
        Fact(project_id=P, content=f"{'Σίσυφος ' * (1 + i % 2)}κυλάει την πέτρα {i}")
        for i in range(10_000)
    ]
    facts += [Fact(project_id=P, content=f"κόσμος {i}") for i in range(300)]
    for start in range(0, len(facts), 2_500):
        await store.apply(WriteBatch(P, upserts=facts[start : start + 2_500]))
    contents = {f.id: f.content for f in facts}
    query = FactQuery(project_id=P)
    hits = await store.keyword_search(query, "σίσυφος", 10)
    assert len(hits) == 10
    assert all(contents[i].count("Σίσυφος") == 2 for i, _ in hits)  # held twice ranks first
    # A rare Greek word beside a frequent one: the rare one is matched (not left out as unknown).
    hits = await store.keyword_search(query, "σίσυφος κόσμος", 5)
    assert [contents[i].split()[0] for i, _ in hits] == ["κόσμος"] * 5
    # A fact written after the copy was read, holding the word twice, is counted so.
    late = Fact(project_id=P, content="Σίσυφος Σίσυφος Σίσυφος")
    await store.apply(WriteBatch(P, upserts=[late]))
    assert (await store.keyword_search(query, "σίσυφος", 1))[0][0] == late.id
    await store.close()


def _saved(path: str) -> tuple[set[str], int]:
    """The words saved in the file, and how many token counts are saved."""
    import sqlite3

    connection = sqlite3.connect(path)
    try:
        words = {row[0] for row in connection.execute("SELECT word FROM keyword_copies")}
        lengths = connection.execute("SELECT coalesce(max(upto), -1) FROM keyword_lengths")
        return words, int(lengths.fetchone()[0]) + 1
    finally:
        connection.close()


async def test_a_later_process_loads_the_saved_copies(tmp_path: Path, monkeypatch: Any) -> None:
    """The first process reads the words and the token counts from the index and saves them; a
    later one (a store opened afresh) loads them, reads only the facts added since, and ranks
    exactly as the index does."""
    from sagewai.stores.sqlite._frequent import FrequentWords

    path = str(tmp_path / "metadata.sqlite3")
    first = SqliteMetadataStore(path)
    facts = [
        Fact(project_id=P, content=f"tea {'tea ' * (i % 3)}{'green ' * (i % 4 != 0)}item{i}")
        for i in range(30_000)
    ]
    for start in range(0, len(facts), 10_000):
        await first.apply(WriteBatch(P, upserts=facts[start : start + 10_000]))
    query = FactQuery(project_id=P)
    await first.keyword_search(query, "green tea", 10)
    await first.close()
    words, lengths = _saved(path)
    assert words == {"tea", "green"}
    assert lengths >= 30_000
    later = SqliteMetadataStore(path)
    added = [Fact(project_id=P, content="green tea"), Fact(project_id=P, content="tea tea tea")]
    await later.apply(WriteBatch(P, upserts=added))

    def no_index_read(*args: Any) -> None:
        raise AssertionError("read from the index, not loaded")

    monkeypatch.setattr(FrequentWords, "_read_word", no_index_read)
    await later.open()
    for text, match in (("tea", '"tea"'), ("green tea", '"green" AND "tea"')):
        every = dict(await _joined(later, query, match, 100_000))
        for top_k in (1, 10, 60):
            fast = await later.keyword_search(query, text, top_k)
            joined = await _joined(later, query, match, top_k)
            assert_same_ranking(fast, joined, every)
    assert (await later.keyword_search(query, "green tea", 1))[0][0] == added[0].id
    await later.close()


async def test_deleting_or_rewriting_a_fact_empties_the_saved_copies(tmp_path: Path) -> None:
    """Nothing drawn from a forgotten or rewritten fact outlives it in the saved copies."""
    path = str(tmp_path / "metadata.sqlite3")
    store = SqliteMetadataStore(path)
    facts = [Fact(project_id=P, content=f"coffee item{i}") for i in range(30_000)]
    await store.apply(WriteBatch(P, upserts=facts))
    query = FactQuery(project_id=P)
    await store.keyword_search(query, "coffee", 5)
    assert _saved(path)[0] == {"coffee"}
    await store.apply(WriteBatch(P, deletes=[facts[0].id]))
    assert _saved(path) == (set(), 0)
    await store.keyword_search(query, "coffee", 5)
    assert _saved(path)[0] == {"coffee"}
    await store.apply(WriteBatch(P, upserts=[facts[1].model_copy(update={"content": "tea"})]))
    assert _saved(path) == (set(), 0)
    await store.close()


async def test_a_copy_is_not_saved_while_another_writer_holds_the_lock(tmp_path: Path) -> None:
    """A search never waits for another process's write to save a copy: it skips the save."""
    import sqlite3
    import time

    path = str(tmp_path / "metadata.sqlite3")
    store = SqliteMetadataStore(path)
    await store.apply(
        WriteBatch(P, upserts=[Fact(project_id=P, content=f"juice {i}") for i in range(30_000)])
    )
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        started = time.perf_counter()
        assert len(await store.keyword_search(FactQuery(project_id=P), "juice", 5)) == 5
        assert time.perf_counter() - started < store.busy_timeout
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert _saved(path)[0] == set()
    await store.close()


def _bulk_corpus(start: int, stop: int) -> list[Fact]:
    """Facts holding "coffee" (every one), "latte" (every other one), "mocha" twice (one in
    ten: 1,500 of 15,000, saved) and "rare" (one in a thousand: 15, never saved)."""
    return [
        Fact(
            project_id=P,
            content=(
                f"coffee {'latte ' * (i % 2)}{'mocha mocha ' * (i % 10 == 0)}"
                f"{'rare ' * (i % 1000 == 0)}item{i}"
            ),
        )
        for i in range(start, stop)
    ]


async def test_a_bulk_load_saves_the_frequent_words_for_the_next_process(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """At the end of a bulk load every word in more than 1,000 facts is saved with every
    fact's token count: the next process reads none of them from the index, and ranks exactly
    as the index does."""
    from sagewai.stores.sqlite._frequent import FrequentWords

    path = str(tmp_path / "metadata.sqlite3")
    loader = SqliteMetadataStore(path)
    await loader.apply(WriteBatch(P, upserts=_bulk_corpus(0, 100)))
    assert await loader.prepare_keyword_search() == 0  # small: one statement ranks all
    async with loader.bulk_load():
        for start in range(100, 15_000, 5_000):
            await loader.apply(WriteBatch(P, upserts=_bulk_corpus(start, start + 5_000)))
        assert _saved(path) == (set(), 0)  # nothing before the block ends
    words, lengths = _saved(path)
    assert words == {"coffee", "latte", "mocha"}
    assert lengths >= 15_000
    assert len(loader._frequent) == 0  # saved, not kept by the loading process
    assert await loader.prepare_keyword_search() == 0  # current already: nothing to redo
    await loader.close()

    monkeypatch.setattr(FrequentWords, "_read_word", _no_index_read)
    monkeypatch.setattr(FrequentWords, "_save_lengths", _no_index_read)
    later = SqliteMetadataStore(path)
    query = FactQuery(project_id=P)
    for text, match in (
        ("coffee", '"coffee"'),
        ("coffee latte", '"coffee" AND "latte"'),
        ("mocha", '"mocha"'),
    ):
        every = dict(await _joined(later, query, match, 100_000))
        for top_k in (1, 10, 60):
            fast = await later.keyword_search(query, text, top_k)
            joined = await _joined(later, query, match, top_k)
            assert_same_ranking(fast, joined, every)
    assert set(later._frequent._words) == {"coffee", "latte", "mocha"}
    await later.close()


async def test_the_next_process_counts_saved_words_from_their_copies(tmp_path: Path) -> None:
    """Which words a query keeps depends on how many facts hold each; for a word with a saved
    copy that count comes from the copy (the index's own count walks the word's whole posting
    list, milliseconds a word at a million facts), equal to the index's. A copy missing more
    than a tenth of the facts written since is not trusted: the index counts again."""
    path = str(tmp_path / "metadata.sqlite3")
    loader = SqliteMetadataStore(path)
    async with loader.bulk_load():
        await loader.apply(WriteBatch(P, upserts=_bulk_corpus(0, 15_000)))
    await loader.close()

    later = SqliteMetadataStore(path)
    statements: list[str] = []
    await later.open()
    await later._run(lambda: later._db().set_trace_callback(statements.append))

    def counts(words: list[str]) -> dict[str, int]:
        later._frequencies.clear()
        return later._document_frequencies(words, later._fact_total())

    words = ["coffee", "latte", "mocha", "rare", "absent"]
    expected = {"coffee": 15_000, "latte": 7_500, "mocha": 1_500, "rare": 15, "absent": 0}
    assert await later._run(counts, words) == expected
    counted = [s for s in statements if "facts_vocab" in s]
    assert len(counted) == 2  # "rare" and "absent" have no copy; the saved words were not
    hits = await later.keyword_search(FactQuery(project_id=P), "coffee mocha", 5)
    assert len(hits) == 5
    await later.apply(WriteBatch(P, upserts=_bulk_corpus(15_000, 16_000)))
    statements.clear()
    assert (await later._run(counts, ["coffee"]))["coffee"] == 15_000  # a fifteenth: trusted
    assert not [s for s in statements if "facts_vocab" in s]
    await later.apply(WriteBatch(P, upserts=_bulk_corpus(16_000, 18_000)))
    later._frequent._words.clear()  # as in a process that has not used the word yet
    statements.clear()
    assert (await later._run(counts, ["coffee"]))["coffee"] == 18_000  # a sixth: the index
    assert [s for s in statements if "facts_vocab" in s]
    assert await later.prepare_keyword_search() > 0  # saved again, up to date
    later._frequent._words.clear()
    statements.clear()
    assert (await later._run(counts, ["coffee"]))["coffee"] == 18_000  # the new copy counts
    assert not [s for s in statements if "facts_vocab" in s]
    await later.close()


def _no_index_read(*args: Any, **kwargs: Any) -> None:
    raise AssertionError("read from the index, not loaded")


async def test_a_bulk_load_that_fails_saves_nothing_and_raises(tmp_path: Path) -> None:
    path = str(tmp_path / "metadata.sqlite3")
    store = SqliteMetadataStore(path)

    async def load_then_break() -> None:
        async with store.bulk_load():
            await store.apply(WriteBatch(P, upserts=_bulk_corpus(0, 15_000)))
            raise RuntimeError("the source broke")

    with pytest.raises(RuntimeError, match="the source broke"):
        await load_then_break()
    assert await store.count(FactQuery(project_id=P)) == 15_000  # what was written stays
    assert _saved(path) == (set(), 0)
    assert await store.prepare_keyword_search() == 3  # called by hand once the load is done
    assert _saved(path)[0] == {"coffee", "latte", "mocha"}
    await store.close()


async def test_preparing_waits_for_another_writer_instead_of_skipping(tmp_path: Path) -> None:
    """A search skips a save the lock would delay; preparing after a load waits for it."""
    import sqlite3
    import threading

    path = str(tmp_path / "metadata.sqlite3")
    store = SqliteMetadataStore(path)
    await store.apply(WriteBatch(P, upserts=_bulk_corpus(0, 15_000)))
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.5, lambda: writer.execute("ROLLBACK"))
    release.start()
    try:
        assert await store.prepare_keyword_search() == 3
    finally:
        release.join()
        writer.close()
    assert _saved(path)[0] == {"coffee", "latte", "mocha"}
    await store.close()
