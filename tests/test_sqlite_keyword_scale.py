"""At scale the SQLite keyword search bounds its work: frequent terms give way to rare ones."""

from __future__ import annotations

from pathlib import Path

from sagewai.core._queries import FactQuery, WriteBatch
from sagewai.core._records import Fact
from sagewai.stores.sqlite import SqliteMetadataStore

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


async def test_reading_the_index_head_first_answers_as_the_joined_query(tmp_path: Path) -> None:
    """In a large store the keyword search checks the filter on the index's best rows first.

    Many equal scores (ties broken by id), filters that reject most or all of the best rows (the
    batches must grow to the end) and one that rejects none must all give what the one joined
    query gives. 10,000 facts or more, every one holding the word: the batched path answers.
    """
    store = SqliteMetadataStore(str(tmp_path / "metadata.sqlite3"))
    facts = [
        Fact(
            project_id=P,
            content=f"tea {'tea ' * (i % 3)}item{i}",
            tags=("rare",) if i % 97 == 0 else ("common",),
            user_id=f"u{i % 2}",
        )
        for i in range(10_000)
    ]
    facts += [Fact(project_id="other", content=f"tea tea tea {i}") for i in range(500)]
    for start in range(0, len(facts), 2_500):
        await store.apply(WriteBatch(facts[start].project_id, upserts=facts[start : start + 2_500]))
    queries = [
        FactQuery(project_id=P),
        FactQuery(project_id=P, tags_any=("rare",)),
        FactQuery(project_id=P, user_id="u1"),
        FactQuery(project_id=P, tags_any=("absent",)),
    ]
    for query in queries:
        for top_k in (1, 10, 60, 500):
            fast = await store.keyword_search(query, "tea", top_k)
            await store.open()
            joined = await store._database.run(store._keyword_joined_sync, query, '"tea"', top_k)
            assert fast == joined, (query, top_k)
    assert len(await store.keyword_search(queries[1], "tea", 500)) == len(range(0, 10_000, 97))
    await store.close()
