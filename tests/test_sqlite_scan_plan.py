"""A scan of one scope reads the (scope_key, created_at, id) index in order, never sorts the table.

Consolidation pages through a scope's active facts in ``(created_at, id)`` order, a thousand at
a time. Written as ``scope_key IN (SELECT value FROM json_each(?))``, SQLite scanned the whole
table and sorted it for every page (0.3 s a page at 1M facts, about 600 s of a 1M run); an
equality on the one scope key lets the index serve the filter, the keyset and the order.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sagewai.core._queries import FactQuery, WriteBatch
from sagewai.core._records import Fact, FactKind, FactStatus
from sagewai.core._scope import ContextScope
from sagewai.intelligence.consolidation._selection import Selection
from sagewai.stores import SqliteMetadataStore
from sagewai.stores.base._sql import fact_conditions
from sagewai.stores.sqlite._metadata import _FACT_SELECT, _SqliteBinder

P = "scan"
START = datetime(2026, 1, 1, tzinfo=UTC)


async def _store(tmp_path: Path) -> SqliteMetadataStore:
    store = SqliteMetadataStore(str(tmp_path / "metadata.sqlite3"))
    facts = [
        Fact(
            project_id=P,
            content=f"fact {i}",
            user_id="u1" if i % 3 == 0 else None,
            scope=ContextScope.USER if i % 3 == 0 else ContextScope.PROJECT,
            created_at=START + timedelta(seconds=i // 2),  # ties on created_at: id breaks them
        )
        for i in range(3_000)
    ]
    for start in range(0, len(facts), 1_000):
        await store.apply(WriteBatch(P, upserts=facts[start : start + 1_000]))
    return store


def _project_selection() -> Selection:
    return Selection.build(
        project_id=P,
        org_id=None,
        scope=ContextScope.PROJECT,
        user_id=None,
        session_id=None,
        tags=None,
    )


def _scan_sql(query: FactQuery) -> tuple[str, list[object]]:
    binder = _SqliteBinder()
    where = " AND ".join(fact_conditions(query, binder, paginate=True))
    sql = f"SELECT {_FACT_SELECT} FROM facts AS f WHERE {where} ORDER BY f.created_at, f.id"
    return f"{sql} LIMIT 500", list(binder.values)


async def test_the_scan_of_one_scope_uses_the_scope_index_in_order(tmp_path: Path) -> None:
    store = await _store(tmp_path)
    await store.close()
    selection = _project_selection()
    query = selection.scan(after=(START, ""), limit=500, updated_since=None)
    assert query.scope_keys is not None
    assert len(query.scope_keys) == 1
    sql, params = _scan_sql(query)
    db = sqlite3.connect(tmp_path / "metadata.sqlite3")
    db.execute("ANALYZE")
    plan = " | ".join(row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {sql}", params))
    db.close()
    assert "USING INDEX facts_scope_created" in plan, plan
    assert "TEMP B-TREE" not in plan, plan


async def test_one_value_and_a_list_of_values_select_the_same_pages(tmp_path: Path) -> None:
    """The equality written for one value answers as the list test does, page after page."""
    store = await _store(tmp_path)
    selection = _project_selection()
    (scope_key,) = selection.scan(after=None, limit=1, updated_since=None).scope_keys or ()
    pages: dict[str, list[str]] = {}
    for name, keys, statuses in (
        ("one", (scope_key,), (FactStatus.ACTIVE,)),
        ("list", (scope_key, "absent"), (FactStatus.ACTIVE, FactStatus.FLAGGED)),
    ):
        ids: list[str] = []
        after: tuple[datetime, str] | None = None
        while True:
            page = await store.query(
                FactQuery(
                    project_id=P,
                    scope_keys=keys,
                    statuses=statuses,
                    kinds=(FactKind.FACT,),
                    after=after,
                    limit=250,
                )
            )
            if not page:
                break
            ids += [f.id for f in page]
            after = (page[-1].created_at, page[-1].id)
        pages[name] = ids
    await store.close()
    assert len(pages["one"]) == 2_000  # the project-scope facts, each once
    assert pages["one"] == pages["list"]
