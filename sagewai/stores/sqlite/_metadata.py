"""The embedded metadata store: one SQLite file, standard library only.

SQLite is the default because it needs nothing installed and keeps a project's knowledge in one
file inside the engine's folder. The store runs every statement on one connection owned by a
dedicated worker thread: the event loop never blocks on disk, and statements never interleave, so
a batch is simply one ``BEGIN IMMEDIATE`` ... ``COMMIT`` on that thread. The database runs in WAL
mode so other processes can read while this one writes; a write from another process waits for
the lock up to ``busy_timeout`` seconds.

Keyword search uses an FTS5 index ranked with ``bm25()``. The match expression is built only from
:func:`~sagewai.core._text.keyword_terms` output, each term quoted and OR-joined, so no text a
user types can reach FTS5's query syntax.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar, cast

import filelock
from pydantic import JsonValue

from sagewai.core._arguments import check_int
from sagewai.core._queries import ChangeQuery, FactQuery, WriteBatch
from sagewai.core._records import Fact, FactChange, utcnow
from sagewai.core._text import keyword_terms
from sagewai.errors import (
    BackendUnavailableError,
    FactConflictError,
    LockedError,
)
from sagewai.stores.base._metadata import BatchWriter, MetadataStore
from sagewai.stores.base._sql import (
    CHANGE_COLUMNS,
    FACT_COLUMNS,
    FACT_LIST_COLUMNS,
    FACT_TIME_COLUMNS,
    Binder,
    change_conditions,
    change_from_row,
    change_values,
    fact_conditions,
    fact_from_row,
    fact_values,
    fts5_match,
    to_json,
    visible_condition,
)
from sagewai.stores.base._word_bitmaps import head_batches
from sagewai.stores.sqlite._database import (
    MEMORY,
    SqliteDatabase,
    from_micros,
    micros,
    write_transaction,
)
from sagewai.stores.sqlite._frequent import (
    FrequentWords,
    index_forms,
    index_totals,
    within_a_tenth,
)

__all__ = ["DEFAULT_MMAP_SIZE", "EncodedBatch", "SqliteMetadataStore"]

DEFAULT_MMAP_SIZE = 2 * 1024**3
"""What :class:`SqliteMetadataStore` maps of its file by default: as much as SQLite allows."""

_T = TypeVar("_T")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_COMMON_TERM_MIN_FACTS = 10_000
_FREQUENT_SHARE = 0.05
"""In a large store, a term in more than this share of the facts is "frequent"."""
_FREQUENT_FACTS = 10_000
"""... or in more than this many facts: scoring a term costs a visit to each fact holding it."""
_CACHED_FREQUENCY_MIN = 1_000
_ANALYZE_MIN_ROWS = 2_000
_FEW_TAGGED = 2_000
_JOINED_MAX_MATCHES = 1_000
_PREPARED_WORDS_MAX = 1_000
"""At most this many words are saved by :meth:`SqliteMetadataStore.prepare_keyword_search`,
the most frequent first (each a bitmap of an eighth of a byte per fact: 125 MB for 1,000
words at a million facts)."""
"""Up to this many matching facts (counted from the terms' document frequencies), keyword
search checks the filter on every match in one joined query."""

_FACT_SELECT = ", ".join(f"f.{column}" for column in FACT_COLUMNS)
_FACT_INSERT = (
    f"INSERT INTO facts ({', '.join(FACT_COLUMNS)}, updated_at) "
    f"VALUES ({', '.join('?' for _ in range(len(FACT_COLUMNS) + 1))}) "
    "ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{column} = excluded.{column}" for column in (*FACT_COLUMNS[1:], "updated_at"))
    # A fact id owned by another project is never taken over: the row is left as it is.
    + " WHERE facts.project_id = excluded.project_id"
)
_CHANGE_INSERT = (
    f"INSERT INTO changes ({', '.join(CHANGE_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in CHANGE_COLUMNS)})"
)
_TIME_INDEXES = tuple(i for i, column in enumerate(FACT_COLUMNS) if column in FACT_TIME_COLUMNS)
_LIST_INDEXES = tuple(i for i, column in enumerate(FACT_COLUMNS) if column in FACT_LIST_COLUMNS)
_CHANGE_AT = CHANGE_COLUMNS.index("at")
_CHANGE_RELATED = CHANGE_COLUMNS.index("related_fact_ids")


EncodedBatch = tuple[str, list[str], list[list[Any]], list[list[Any]]]
"""A :class:`WriteBatch` as stored values: project id, deleted ids, fact rows, change rows."""

_CONTENT = FACT_COLUMNS.index("content")
_REWRITABLE = tuple(
    i for i, column in enumerate(FACT_COLUMNS) if column not in ("id", "project_id")
)
"""The columns an upsert of an existing row may rewrite (a row keeps its id and project)."""


@functools.lru_cache(maxsize=256)
def _update_statement(changed: tuple[int, ...]) -> str:
    """``UPDATE`` of the columns ``changed`` (indexes into FACT_COLUMNS) and ``updated_at`` of
    one row by seq, the parameters in that order."""
    sets = [f"{FACT_COLUMNS[i]} = ?{n}" for n, i in enumerate(changed, start=1)]
    sets.append(f"updated_at = ?{len(changed) + 1}")
    return f"UPDATE facts SET {', '.join(sets)} WHERE seq = ?{len(changed) + 2}"


def _execute(db: sqlite3.Connection, sql: str, params: Sequence[Any]) -> int:
    return db.execute(sql, params).rowcount


def _id_list(ids: Sequence[str]) -> str:
    """Many ids as ONE bound parameter (a JSON array read with ``json_each``)."""
    return json.dumps(list(ids))


class _SqliteBinder(Binder):
    """``?N`` placeholders, integer-microsecond times, lists as one JSON parameter.

    ``tag_driven`` picks how ``tags_any`` reads: from the tag index outwards (best when few facts
    carry the tags) or as a per-row probe while another index drives (best when many do).
    """

    def __init__(self, *, tag_driven: bool = True) -> None:
        super().__init__()
        self.tag_driven = tag_driven

    def placeholder(self, position: int) -> str:
        return f"?{position}"

    def time(self, value: datetime) -> int:
        return micros(value)

    def one_of(self, column: str, values: Sequence[str]) -> str:
        return f"{column} IN (SELECT value FROM json_each({self.bind(_id_list(values))}))"

    def tags_any(self, tags: Sequence[str]) -> str:
        wanted = f"(SELECT value FROM json_each({self.bind(_id_list(tags))}))"
        if self.tag_driven:
            return f"f.seq IN (SELECT fact_seq FROM fact_tags WHERE tag IN {wanted})"
        return (
            f"EXISTS (SELECT 1 FROM fact_tags AS t WHERE t.fact_seq = f.seq AND t.tag IN {wanted})"
        )


def _fact_row(fact: Fact, updated_at: int) -> list[Any]:
    row = list(fact_values(fact))
    for i in _TIME_INDEXES:
        if row[i] is not None:
            row[i] = micros(row[i])
    for i in _LIST_INDEXES:
        row[i] = to_json(list(row[i]), "a string list")
    row.append(updated_at)
    return row


def _change_row(change: FactChange) -> list[Any]:
    row = list(change_values(change))
    row[_CHANGE_AT] = micros(row[_CHANGE_AT])
    row[_CHANGE_RELATED] = to_json(list(row[_CHANGE_RELATED]), "related_fact_ids")
    return row


class SqliteMetadataStore(MetadataStore):
    """Facts and their audit log in one SQLite file (or in memory with ``":memory:"``).

    The schema is created and upgraded by versioned migrations when the store opens (recorded in
    its ``schema_migrations`` table), so an embedded store needs no separate setup step. Every
    operation opens the store on first use; ``async with`` closes it.

    Args:
        path: The database file (its folder is created), or ``":memory:"`` for a private
            in-memory database that lives as long as the store is open.
        busy_timeout: Seconds a write waits for another process's write lock before failing
            with :class:`~sagewai.errors.BackendUnavailableError`.
        mmap_size: Bytes of the file each connection reads through a memory map instead of
            ``read()`` calls into its own page cache (SQLite's ``PRAGMA mmap_size``, capped by
            SQLite at its build's limit, 2 GB in CPython's); ``0`` reads every page with
            ``read()``. A search reads a few hundred pages of a large store: at a million
            facts the map took 5 to 10 % of its CPU off (``docs/benchmarks.md``, session
            19). The mapped pages are the operating system's file cache, shared with every
            process reading the file, and count in a process's RSS once touched.

    Example:
        >>> import asyncio, tempfile
        >>> from sagewai import Fact
        >>> from sagewai.core import FactQuery, WriteBatch
        >>> async def demo(folder: str) -> list[str]:
        ...     async with SqliteMetadataStore(f"{folder}/metadata.db") as store:
        ...         fact = Fact(project_id="demo", content="Alice prefers tea")
        ...         await store.apply(WriteBatch(project_id="demo", upserts=[fact]))
        ...         hits = await store.keyword_search(FactQuery(project_id="demo"), "tea?", 5)
        ...         return [(await store.get("demo", [i]))[0].content for i, _ in hits]
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     asyncio.run(demo(folder))
        ['Alice prefers tea']
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 5.0,
        mmap_size: int = DEFAULT_MMAP_SIZE,
    ) -> None:
        super().__init__()
        check_int(mmap_size, "mmap_size", low=0, high=2**63 - 1)  # SQLite's integers are int64
        self._path = MEMORY if str(path) == MEMORY else str(Path(path))
        self._busy_timeout = busy_timeout
        self._mmap_size = mmap_size
        self._database = SqliteDatabase(
            self._path,
            migrations="sqlite",
            table="schema_migrations",
            busy_timeout=busy_timeout,
            pragmas=("PRAGMA cache_size = -32000", f"PRAGMA mmap_size = {mmap_size}"),
            after_open=self._prepare_statistics,
        )
        self._applied_on_open: list[str] = []
        self._frequencies: dict[str, tuple[int, int]] = {}
        self._frequent = FrequentWords()
        self._written = 0
        self._analyzed_rows = 0

    @property
    def path(self) -> str:
        """The database file, or ``":memory:"``."""
        return self._path

    @property
    def persistent(self) -> bool:
        """True for a database file; an in-memory database goes with the process."""
        return self._path != MEMORY

    @asynccontextmanager
    async def background_writer(self) -> AsyncIterator[BatchWriter | None]:
        """A :class:`~sagewai.stores.sqlite._writer.SqliteWriter` on this file (``None`` for an
        in-memory database, or when its process cannot start)."""
        if self._path == MEMORY:
            yield None
            return
        from sagewai.stores.sqlite._writer import SqliteWriter

        async with SqliteWriter(self) as writer:
            yield writer if writer.running else None

    @property
    def busy_timeout(self) -> float:
        """Seconds a write waits for another process's write lock."""
        return self._busy_timeout

    @property
    def mmap_size(self) -> int:
        """Bytes of the file each connection may read through a memory map (as asked)."""
        return self._mmap_size

    def __repr__(self) -> str:
        return f"SqliteMetadataStore({self._path!r})"

    # -- the database ----------------------------------------------------------------------

    async def open(self) -> None:
        """Open the database and apply pending migrations. Safe to call more than once."""
        if not self._database.is_open:
            self._applied_on_open = await self._database.open()

    async def close(self) -> None:
        """Close the database. Safe to call more than once; a later call reopens it."""
        await self._database.close()

    async def _run(self, function: Callable[..., _T], *args: Any) -> _T:
        """Run ``function(*args)`` on the worker thread, translating sqlite3 errors."""
        await self.open()
        return await self._database.run(function, *args)

    def _db(self) -> sqlite3.Connection:
        return self._database.connection

    def _prepare_statistics(self, connection: sqlite3.Connection) -> None:
        """After open: learn when the planner's statistics were last refreshed (see _analyze)."""
        self._analyzed_rows = self._rows_at_last_analysis()
        total = int(connection.execute("SELECT count(*) FROM facts").fetchone()[0])
        self._written = max(0, total - self._analyzed_rows)
        if self._written >= max(_ANALYZE_MIN_ROWS, self._analyzed_rows):
            self._analyze()

    def _rows_at_last_analysis(self) -> int:
        db = self._db()
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone():
            row = db.execute("SELECT stat FROM sqlite_stat1 WHERE tbl = 'facts' LIMIT 1").fetchone()
            if row is not None:
                return int(str(row[0]).split()[0])
        return 0

    # -- the contract ------------------------------------------------------------------------

    async def migrate(self) -> list[str]:
        """Apply pending migrations; return the versions applied (including by this ``open``).

        The embedded store migrates on ``open()`` already; this is for symmetry with the
        PostgreSQL store and for tools that want to report what was applied.
        """
        await self.open()
        applied, self._applied_on_open = self._applied_on_open, []
        return applied + await self._run(self._database.migrate_sync)

    async def apply(self, batch: WriteBatch) -> None:
        batch.validate()
        if batch:
            await self._run(self._apply_sync, batch)

    def _apply_sync(self, batch: WriteBatch) -> None:
        self._write_batch_sync(self.encode(batch))

    def encode(self, batch: WriteBatch) -> EncodedBatch:
        """``batch`` as the rows this store writes (plain values: a writer process takes them).

        A record that cannot be stored fails here, before any transaction.
        """
        now = micros(utcnow())
        return (
            batch.project_id,
            list(batch.deletes),
            [_fact_row(fact, now) for fact in batch.upserts],
            [_change_row(change) for change in batch.changes],
        )

    def _write_batch_sync(self, encoded: EncodedBatch) -> tuple[int, int]:
        """Write an encoded batch in one transaction; returns (rows grown, rows added)."""
        project_id, deletes, facts, changes = encoded
        db = self._db()
        grown = added = 0
        with write_transaction(db):
            if deletes:
                doomed = (project_id, _id_list(deletes))
                db.execute(
                    "DELETE FROM changes WHERE fact_id IN (SELECT id FROM facts"
                    " WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2)))",
                    doomed,
                )
                db.execute(
                    "INSERT INTO facts_fts (facts_fts, rowid, content)"
                    " SELECT 'delete', seq, content FROM facts"
                    " WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2))",
                    doomed,
                )
                grown -= db.execute(
                    "DELETE FROM facts"
                    " WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2))",
                    doomed,
                ).rowcount
                # FTS5 marks a deleted row's terms as deleted and keeps the words in its index
                # segments until they merge: only erasure deletes, so the index is merged now
                # and a forgotten word is in no page of the file.
                db.execute("INSERT INTO facts_fts (facts_fts) VALUES ('optimize')")
            if facts:
                added = self._upsert_sync(project_id, facts)
                grown += added
            if changes:
                db.executemany(_CHANGE_INSERT, changes)
        self._count_written(grown, added)
        return grown, added

    async def count_written(self, grown: int, added: int) -> None:
        """Count the rows a writer process's batch grew this file's table by (as its own)."""
        await self._run(self._count_written, grown, added)

    def _count_written(self, grown: int, added: int) -> None:
        # New rows, as on open: rewriting existing rows (a consolidation run rewrites most of
        # a store's) leaves the table's size, and its statistics, as they were.
        self._written += added
        if self._written >= max(_ANALYZE_MIN_ROWS, self._analyzed_rows):
            self._analyze()

    async def write_encoded(self, encoded: EncodedBatch) -> tuple[int, int]:
        """Write a batch :meth:`encode` made (here or in another process) in one transaction;
        returns (rows the table grew by, rows added)."""
        return await self._run(self._write_batch_sync, encoded)

    async def landed(self, change_id: str) -> bool:
        """Whether the audit row ``change_id`` is stored: a batch's rows land together, so one
        of its changes tells whether the whole batch did."""
        return await self._run(self._landed_sync, change_id)

    def _landed_sync(self, change_id: str) -> bool:
        found = self._db().execute("SELECT 1 FROM changes WHERE id = ?1", (change_id,))
        return found.fetchone() is not None

    def _upsert_sync(self, project_id: str, rows: list[list[Any]]) -> int:
        """Upsert fact rows and keep the keyword index in step, in bulk (see the migration).

        A row that exists is rewritten in the columns that changed only (and ``updated_at``):
        a decay changes a strength and the metadata, and rewriting every column moved every
        index's entry for the row, seven where one changes. Returns the number of new rows.
        """
        db = self._db()
        ids = _id_list([row[0] for row in rows])
        # An id another project holds is never taken over, nor skipped in silence.
        taken = db.execute(
            "SELECT id FROM facts WHERE id IN (SELECT value FROM json_each(?2))"
            " AND project_id <> ?1 LIMIT 1",
            (project_id, ids),
        ).fetchone()
        if taken is not None:
            raise FactConflictError(taken[0], in_project=False)
        stored = {
            row[1]: row
            for row in db.execute(
                f"SELECT seq, {', '.join(FACT_COLUMNS)} FROM facts"
                " WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2))",
                (project_id, ids),
            )
        }
        inserts: list[list[Any]] = []
        updates: dict[tuple[int, ...], list[list[Any]]] = {}
        reindexed: list[int] = []
        # A batch may hold two versions of a fact: the last one is written, as an upsert would.
        for row in {row[0]: row for row in rows}.values():
            old = stored.get(row[0])
            if old is None:
                inserts.append(row)
                continue
            # old[0] is the seq, old[1 + i] the value of column i; row[-1] the new updated_at.
            changed = tuple(i for i in _REWRITABLE if row[i] != old[1 + i])
            updates.setdefault(changed, []).append([*(row[i] for i in changed), row[-1], old[0]])
            if row[_CONTENT] != old[1 + _CONTENT]:
                reindexed.append(old[0])
        # Only rows whose text changes are re-indexed; new rows get seq above today's largest.
        changed_seqs = json.dumps(reindexed)
        (last,) = db.execute("SELECT coalesce(max(seq), 0) FROM facts").fetchone()
        if reindexed:
            db.execute(
                "INSERT INTO facts_fts (facts_fts, rowid, content) SELECT 'delete', seq, content"
                " FROM facts WHERE seq IN (SELECT value FROM json_each(?1))",
                (changed_seqs,),
            )
        for changed, values in updates.items():
            db.executemany(_update_statement(changed), values)
        if inserts:
            db.executemany(_FACT_INSERT, inserts)
        if inserts or reindexed:
            db.execute(
                "INSERT INTO facts_fts (rowid, content) SELECT seq, content FROM facts"
                " WHERE seq > ?1 OR seq IN (SELECT value FROM json_each(?2))",
                (last, changed_seqs),
            )
        return len(inserts)

    def _analyze(self) -> None:
        """Refresh the planner's statistics each time the table has doubled in size.

        Without them SQLite walks the (project, created_at) index for selective filters such as
        a subject: tens of milliseconds at 100k facts instead of one or two. A full ANALYZE
        takes about 0.2 s at 100k facts, so the doubling rule keeps its total cost near that;
        sampled statistics (``analysis_limit``) misjudged tags and users badly.
        """
        db = self._db()
        self._written = 0
        try:
            db.execute("ANALYZE")
            self._analyzed_rows = int(db.execute("SELECT count(*) FROM facts").fetchone()[0])
        except sqlite3.OperationalError:
            pass  # another process holds the write lock: statistics can wait for a later batch

    def _facts_sync(self, sql: str, params: Sequence[Any]) -> list[Fact]:
        rows = self._db().execute(sql, params).fetchall()
        return [fact_from_row(row, from_micros) for row in rows]

    async def get(self, project_id: str, ids: Sequence[str]) -> list[Fact]:
        if not ids:
            return []
        binder = _SqliteBinder()
        sql = (
            f"SELECT {_FACT_SELECT} FROM facts AS f WHERE {binder.one_of('f.id', ids)}"
            f" AND {visible_condition(project_id, binder)}"
        )
        return await self._run(self._facts_sync, sql, binder.values)

    async def query(self, query: FactQuery) -> list[Fact]:
        return await self._run(self._query_sync, query)

    def _query_sync(self, query: FactQuery) -> list[Fact]:
        tag_driven = query.tags_any is None or self._few_tagged(query.tags_any)
        binder = _SqliteBinder(tag_driven=tag_driven)
        where = " AND ".join(fact_conditions(query, binder, paginate=True))
        sql = f"SELECT {_FACT_SELECT} FROM facts AS f WHERE {where} ORDER BY f.created_at, f.id"
        if query.limit is not None:
            sql += f" LIMIT {binder.bind(query.limit)}"
        return self._facts_sync(sql, binder.values)

    def _few_tagged(self, tags: Sequence[str]) -> bool:
        """True when at most a couple of thousand facts carry one of ``tags``.

        Then reading those facts and sorting them is cheap. Past that, walking facts in
        (created_at, id) order or through another filter's index and probing their tags stops
        after ``limit`` matches: 45 ms against 1.5 ms for a tag on 7% of 100k facts. The count
        is capped, so asking costs at most that many index entries.
        """
        (count,) = (
            self._db()
            .execute(
                "SELECT count(*) FROM (SELECT 1 FROM fact_tags"
                " WHERE tag IN (SELECT value FROM json_each(?1)) LIMIT ?2)",
                (_id_list(tags), _FEW_TAGGED + 1),
            )
            .fetchone()
        )
        return int(count) <= _FEW_TAGGED

    def _scalar_sync(self, sql: str, params: Sequence[Any]) -> int:
        row = self._db().execute(sql, params).fetchone()
        return int(row[0])

    async def count(self, query: FactQuery) -> int:
        binder = _SqliteBinder()
        where = " AND ".join(fact_conditions(query, binder, paginate=False))
        return await self._run(
            self._scalar_sync, f"SELECT count(*) FROM facts AS f WHERE {where}", binder.values
        )

    async def keyword_search(
        self, query: FactQuery, text: str, top_k: int
    ) -> list[tuple[str, float]]:
        terms = keyword_terms(text)
        if not terms or top_k <= 0:
            return []
        rows = await self._run(self._keyword_sync, query, terms, top_k, "f.id")
        return [(fact_id, score) for score, fact_id in rows]

    async def keyword_facts(
        self, query: FactQuery, text: str, top_k: int
    ) -> list[tuple[Fact, float]]:
        """:meth:`keyword_search`'s hits with their records, read by the statement that
        ranks them or checks them against the filter (not looked up again afterwards)."""
        terms = keyword_terms(text)
        if not terms or top_k <= 0:
            return []
        return await self._run(self._keyword_facts_sync, query, terms, top_k)

    def _keyword_facts_sync(
        self, query: FactQuery, terms: list[str], top_k: int
    ) -> list[tuple[Fact, float]]:
        rows = self._keyword_sync(query, terms, top_k, _FACT_SELECT)
        return [(fact_from_row(row[1:], from_micros), row[0]) for row in rows]

    def _keyword_sync(
        self, query: FactQuery, terms: list[str], top_k: int, columns: str
    ) -> list[tuple[Any, ...]]:
        """The best ``top_k`` matches as rows of ``(score, *columns)`` (``columns`` of the
        facts table ``f``), ranked as FTS5's ``bm25()`` ranks them (the score is bm25 negated:
        higher is better).

        Few matches (a small store, rare words: at most 1,000 in all) are answered by one
        joined query (best bm25 first, then by id; ``LIMIT top_k``). More matches are ranked
        from the in-memory copy of the words' facts (:class:`~sagewai.stores.sqlite._frequent.
        FrequentWords`), with the same scores and equal scores newest first, and only the
        best are looked up for the filter: the first ``top_k + max(top_k, 32)``, then growing
        batches until ``top_k`` have passed. Ranking every match inside FTS5 walked every
        word's whole posting list and sorted every match per query, and checking the filter
        of each one cost about as much again, for rows the limit throws away. Either way the
        statement that ranks or checks a row also reads its ``columns``, only for the rows
        returned.
        """
        # The index's own forms of the words: its vocabulary is read by word below.
        significant, frequent, most = self._significant_terms(index_forms(terms))
        if not significant:
            return []
        match = fts5_match(significant, all_terms=frequent)
        if most is None or most <= _JOINED_MAX_MATCHES:
            return self._keyword_joined_sync(query, match, top_k, columns)
        # Many matches: the in-memory copy of the words' facts ranks them as FTS5's bm25()
        # would, without walking every word's posting list and sorting every match (FTS5 took
        # 15 to 25 ms for the 8,000 to 10,000 matches of a query of rare words at 100,000
        # facts); every word frequent, a fact must hold them all.
        ranked = self._frequent.ranked(self._db(), significant, every=frequent)
        return self._first_passing(query, ranked, top_k, columns)

    async def prepare_keyword_search(self) -> int:
        """Ready the keyword index after a bulk load, for every process that searches it next.

        ``ANALYZE`` (the query planner's statistics), then the facts of every word in more than
        1,000 facts (the 1,000 most frequent of them) read from the index
        once and saved with every fact's token count
        (:class:`~sagewai.stores.sqlite._frequent.FrequentWords`). Without them the first
        process to meet such a word reads its facts from the index: at a million facts, a few
        to tens of milliseconds added to that search, a word at a time. A word saved already
        and current is left as it is. Returns how many words were saved (none below 10,000
        facts, where every query is ranked by one statement). :meth:`bulk_load` calls it at
        the end of its block; call it yourself after loading facts another way.

        Example:
            >>> async def after_import(store: SqliteMetadataStore) -> None:
            ...     saved = await store.prepare_keyword_search()
            ...     print(f"{saved} frequent words saved")
        """
        return await self._run(self._prepare_keyword_sync)

    def _prepare_keyword_sync(self) -> int:
        db = self._db()
        self._analyze()
        if self._fact_total() < _COMMON_TERM_MIN_FACTS:
            return 0
        words = [
            str(term)
            for (term,) in db.execute(
                "SELECT term FROM facts_vocab WHERE doc > ?1 ORDER BY doc DESC, term LIMIT ?2",
                (_JOINED_MAX_MATCHES, _PREPARED_WORDS_MAX),
            )
        ]
        return self._frequent.prepare(db, words)

    @asynccontextmanager
    async def bulk_load(self) -> AsyncIterator[None]:
        """Load many facts inside the block, then :meth:`prepare_keyword_search` once.

        The counterpart of the vector stores' ``bulk_load()`` (see ``docs/backends.md``):
        nothing changes while the block runs, and when it ends without an error the facts
        table is analysed and its frequent words saved, so the next process searches at full
        speed from its first query. After an error the facts already written stay; call
        :meth:`prepare_keyword_search` once the load is done.

        Example:
            >>> async def load(ctx, store: SqliteMetadataStore, texts: list[str]) -> None:
            ...     async with store.bulk_load():
            ...         for start in range(0, len(texts), 2048):
            ...             await ctx.add_many(texts[start : start + 2048])
        """
        yield
        await self.prepare_keyword_search()

    def _first_passing(
        self,
        query: FactQuery,
        ranked: Iterator[tuple[int, float]],
        top_k: int,
        columns: str,
    ) -> list[tuple[Any, ...]]:
        """The first ``top_k`` of the totally ordered ``(seq, rank)`` rows whose facts pass
        ``query``, as ``(-rank, *columns)``, checked in growing batches: one statement a batch
        checks the rows in rank order and reads ``columns`` of the first that pass."""
        hits: list[tuple[Any, ...]] = []
        for rows in head_batches(ranked, top_k):
            if not rows:
                break
            binder = _SqliteBinder(tag_driven=False)  # the index drives; tags are probed per row
            listed = binder.bind(json.dumps([seq for seq, _ in rows]))
            where = " AND ".join(fact_conditions(query, binder, paginate=False))
            passed = self._db().execute(
                f"SELECT j.key, {columns} FROM json_each({listed}) AS j"
                f" CROSS JOIN facts AS f ON f.seq = j.value WHERE {where}"
                f" ORDER BY j.key LIMIT {binder.bind(top_k - len(hits))}",
                binder.values,
            )
            hits.extend((-rows[row[0]][1], *row[1:]) for row in passed)
            if len(hits) >= top_k:
                break
        return hits

    def _keyword_joined_sync(
        self, query: FactQuery, match_text: str, top_k: int, columns: str
    ) -> list[tuple[Any, ...]]:
        """Every match checked against the filter in one joined query (few matches)."""
        binder = _SqliteBinder(tag_driven=False)
        match = binder.bind(match_text)
        where = " AND ".join(fact_conditions(query, binder, paginate=False))
        sql = (
            f"SELECT -bm25(facts_fts) AS score, {columns} FROM facts_fts"
            " JOIN facts AS f ON f.seq = facts_fts.rowid"
            f" WHERE facts_fts MATCH {match} AND {where}"
            f" ORDER BY score DESC, f.id LIMIT {binder.bind(top_k)}"
        )
        return self._db().execute(sql, binder.values).fetchall()

    def _significant_terms(self, terms: list[str]) -> tuple[list[str], bool, int | None]:
        """The terms worth matching, whether they are all frequent (a fact must then hold every
        one), and at most how many facts match (``None`` in a small store, where it is not
        counted).

        Scoring a term means visiting every fact that holds it, so in a large store frequent
        terms bound the latency while adding little to the ranking (bm25's IDF of a term in 5% of
        the facts is about 3, against 5 to 10 for the rare ones). When the query has rare terms,
        the frequent ones are left out; when every term is frequent, facts must hold them all
        (frequent terms rarely occur together) and the in-memory copy of their facts
        (:class:`~sagewai.stores.sqlite._frequent.FrequentWords`) ranks them. Terms no fact
        holds are left out first: a word the store has never seen would otherwise be the only
        "rare" one, and nothing would be found. Small stores keep every term with OR: there the
        scan is cheap and every match is worth showing. Above 200,000 facts a term is frequent
        from 10,000 facts on (not 5 %), so no term costs more than 10,000 visits, whatever the
        store's size.
        """
        total = self._fact_total()
        if total < _COMMON_TERM_MIN_FACTS:
            return terms, False, None
        bound = min(_FREQUENT_SHARE * total, _FREQUENT_FACTS)
        frequency = self._document_frequencies(terms, total)
        known = [term for term in terms if frequency[term] > 0]
        rare = [term for term in known if frequency[term] <= bound]
        if rare:
            return rare, False, sum(frequency[term] for term in rare)
        if not known:
            return [], False, 0
        return known, True, min(frequency[term] for term in known)

    def _fact_total(self) -> int:
        """The number of facts: the keyword index's row count (one per fact), read from its
        averages record. Exact after every commit of any process, and no count(*) (7 ms at a
        million facts, paid by a search every 30 s when it was cached)."""
        return index_totals(self._db())[0]

    def _document_frequencies(self, terms: Sequence[str], total: int) -> dict[str, int]:
        """How many facts hold each term.

        Counting a term's documents in the index walks its posting list, so frequent terms are
        cached until the store has grown or shrunk by a tenth, and a term with a copy of its
        facts (every frequent term after :meth:`prepare_keyword_search`) is counted from the
        copy.
        """
        found: dict[str, int] = {}
        for term in terms:
            cached = self._frequencies.get(term)
            if cached is not None and within_a_tenth(total, cached[1]):
                found[term] = cached[0]
        missing = [term for term in terms if term not in found]
        if not missing:
            return found
        db = self._db()
        copied = self._frequent.saved_counts(db, missing)
        for term in missing:
            frequency = copied.get(term)
            if frequency is None:
                row = db.execute("SELECT doc FROM facts_vocab WHERE term = ?", (term,)).fetchone()
                frequency = 0 if row is None else int(row[0])
            if frequency >= _CACHED_FREQUENCY_MIN:
                self._frequencies[term] = (frequency, total)
            found[term] = frequency
        return found

    def _changes_sync(self, sql: str, params: Sequence[Any]) -> list[FactChange]:
        rows = self._db().execute(sql, params).fetchall()
        return [change_from_row(row, from_micros) for row in rows]

    async def changes(self, query: ChangeQuery) -> list[FactChange]:
        binder = _SqliteBinder()
        where = change_conditions(query, binder)
        sql = f"SELECT {', '.join(CHANGE_COLUMNS)} FROM changes WHERE {where} ORDER BY at, seq"
        if query.limit is not None:
            sql += f" LIMIT {binder.bind(query.limit)}"
        return await self._run(self._changes_sync, sql, binder.values)

    async def touch(self, project_id: str, ids: Sequence[str], at: datetime) -> None:
        """Stamp read times on a connection of their own, so a search's reads never queue
        behind the access marks of earlier searches (nor behind the checkpoint a commit may
        run): at a million facts that wait was a search's slowest part, up to 130 ms."""
        if ids:
            await self._database.run_aside(
                _execute,
                "UPDATE facts SET last_accessed_at = ?1"
                " WHERE project_id = ?2 AND id IN (SELECT value FROM json_each(?3))",
                (micros(at), project_id, _id_list(ids)),
            )

    def _delete_project_sync(self, project_id: str) -> int:
        db = self._db()
        with write_transaction(db):
            db.execute(
                "DELETE FROM changes WHERE project_id = ?1"
                " OR fact_id IN (SELECT id FROM facts WHERE project_id = ?1)",
                (project_id,),
            )
            db.execute(
                "INSERT INTO facts_fts (facts_fts, rowid, content)"
                " SELECT 'delete', seq, content FROM facts WHERE project_id = ?1",
                (project_id,),
            )
            deleted = db.execute("DELETE FROM facts WHERE project_id = ?1", (project_id,)).rowcount
            db.execute("DELETE FROM project_state WHERE project_id = ?1", (project_id,))
        return deleted

    async def delete_project(self, project_id: str) -> int:
        return await self._run(self._delete_project_sync, project_id)

    def _project_ids_sync(self) -> list[str]:
        rows = self._db().execute("SELECT DISTINCT project_id FROM facts ORDER BY 1").fetchall()
        return [str(row[0]) for row in rows]

    async def project_ids(self) -> list[str]:
        """Every project with facts in this database, sorted (an embedded folder's upgrade walks
        them)."""
        return await self._run(self._project_ids_sync)

    def _get_state_sync(self, project_id: str, key: str) -> JsonValue | None:
        row = (
            self._db()
            .execute(
                "SELECT value FROM project_state WHERE project_id = ?1 AND key = ?2",
                (project_id, key),
            )
            .fetchone()
        )
        return None if row is None else cast(JsonValue, json.loads(row[0]))

    def _set_state_sync(self, project_id: str, key: str, value: str) -> None:
        self._db().execute(
            "INSERT INTO project_state (project_id, key, value, updated_at)"
            " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (project_id, key)"
            " DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            (project_id, key, value, utcnow().isoformat()),
        )

    async def redact_changes(self, project_id: str, changes: Sequence[FactChange]) -> int:
        rows = []
        for change in changes:
            values = change_values(change)
            rows.append((values[7], values[9], values[10], change.id, project_id))
        return await self._run(self._redact_changes_sync, rows) if rows else 0

    def _redact_changes_sync(self, rows: list[tuple[Any, ...]]) -> int:
        db = self._db()
        rewritten = 0
        with write_transaction(db):
            for row in rows:
                rewritten += db.execute(
                    "UPDATE changes SET reason = ?1, before = ?2, after = ?3"
                    " WHERE id = ?4 AND project_id = ?5",
                    row,
                ).rowcount
        return rewritten

    async def get_state(self, project_id: str, key: str) -> JsonValue | None:
        return await self._run(self._get_state_sync, project_id, key)

    async def set_state(self, project_id: str, key: str, value: JsonValue) -> None:
        await self._run(self._set_state_sync, project_id, key, json.dumps(value))

    @asynccontextmanager
    async def lock(self, project_id: str, name: str) -> AsyncIterator[None]:
        """Hold an exclusive lock named ``name`` on ``project_id`` across processes.

        A lock file beside the database (``<database>.lock-<hash>``) is taken without waiting,
        on top of the in-process lock. A ``":memory:"`` store is private to its process, so the
        in-process lock is all it needs.

        Raises:
            LockedError: when this or another process already holds the lock.

        Example:
            >>> async def consolidate(store: SqliteMetadataStore) -> None:
            ...     async with store.lock("demo", "consolidation"):
            ...         ...  # no other process consolidates "demo" meanwhile
        """
        async with super().lock(project_id, name):
            if self._path == MEMORY:
                yield
                return
            digest = hashlib.sha256(f"{project_id}\x1f{name}".encode()).hexdigest()[:20]
            file_lock = filelock.FileLock(f"{self._path}.lock-{digest}", thread_local=False)
            try:
                await asyncio.to_thread(file_lock.acquire, blocking=False)
            except filelock.Timeout as exc:
                raise LockedError(
                    f"{name} is already running on project {project_id!r} in another process"
                ) from exc
            except OSError as exc:
                raise BackendUnavailableError(
                    f"cannot create the lock file {exc.filename}"
                ) from exc
            try:
                yield
            finally:
                file_lock.release()
