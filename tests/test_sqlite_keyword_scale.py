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
