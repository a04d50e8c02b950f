"""The production metadata store: PostgreSQL through asyncpg, shared by many processes.

Every batch runs in one transaction on a pooled connection. The schema is created by versioned
migrations that run only when :meth:`PostgresMetadataStore.migrate` is called (a deploy step, not
a side effect of connecting); a store pointed at an unmigrated schema refuses to work and says so.

Keyword search uses a ``tsvector`` column with a GIN index, ranked by BM25 as SQLite's FTS5
ranks. The vector is built by the store from the same word split as
:func:`~sagewai.core._text.keyword_terms`, and lexemes are stored as they are (the
``'simple'`` behaviour: no stemming, no stop words), because facts are written in any language and
hold exact values (ids, paths, e-mail addresses) that stemming or the default parser would mangle;
it also makes PostgreSQL match the same words as the SQLite and in-memory stores. The query is an
OR (or, for frequent words only, an AND) of quoted terms, passed as a bound parameter. A query
with many matches is ranked from an in-memory copy of its words' facts
(:mod:`sagewai.stores.postgres._frequent`), as the SQLite store does.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from typing import Any, cast

from pydantic import JsonValue

from sagewai.core._queries import ChangeQuery, FactQuery, WriteBatch
from sagewai.core._records import Fact, FactChange, utcnow
from sagewai.errors import (
    ConfigurationError,
    FactConflictError,
    LockedError,
)
from sagewai.stores.base._metadata import MetadataStore
from sagewai.stores.base._sql import (
    CHANGE_COLUMNS,
    FACT_COLUMNS,
    FACT_LIST_COLUMNS,
    Binder,
    change_conditions,
    change_from_row,
    change_values,
    fact_conditions,
    fact_from_row,
    fact_values,
    query_terms,
    quote_lexeme,
    to_json,
    tsvector_literal,
    visible_condition,
)
from sagewai.stores.base._word_bitmaps import head_batches
from sagewai.stores.postgres._frequent import PostgresFrequentWords
from sagewai.stores.postgres._pool import (
    PostgresPool,
    describe_dsn,
    lock_key,
)

__all__ = ["PostgresMetadataStore"]

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_LIST_INDEXES = tuple(i for i, column in enumerate(FACT_COLUMNS) if column in FACT_LIST_COLUMNS)
_CHANGE_RELATED = CHANGE_COLUMNS.index("related_fact_ids")
_COMMON_TERM_MIN_FACTS = 10_000
"""From this many facts on, frequent query terms are bounded (as in the SQLite store)."""
_FREQUENT_SHARE = 0.05
"""A term in more than this share of the facts is frequent."""
_FREQUENT_FACTS = 10_000
"""... or in more than this many facts (as in the SQLite store)."""
_CACHED_FREQUENCY_MIN = 1_000
_CORPUS_TTL = 300.0
_STATEMENT_MAX_MATCHES = 1_000
"""Up to this many matches a query is ranked by one statement; above, by the in-memory copy."""
_WRITTEN_UPDATE = (
    "written = CASE WHEN f.search = EXCLUDED.search THEN f.written ELSE pg_current_xact_id() END"
)
"""An upsert that changes a fact's words marks it for the search processes' in-memory copies."""


def significant_terms(
    terms: Sequence[str], frequencies: Mapping[str, float], total: float
) -> tuple[list[str], bool]:
    """The query terms worth matching, and whether a fact must hold all of them.

    The SQLite store's rule (see ``SqliteMetadataStore._significant_terms``): below 10,000 facts
    every term counts, OR-ed; above, terms no fact holds (missing from ``frequencies`` or 0) are
    left out, frequent terms (in more than 5 % of the facts, or in more than 10,000) give way to
    rare ones, and a query of frequent terms only requires them all.

    Example:
        >>> significant_terms(["the", "kyoto"], {"the": 9000, "kyoto": 3}, 20_000)
        (['kyoto'], False)
        >>> significant_terms(["the", "cat"], {"the": 9000, "cat": 5000}, 20_000)
        (['the', 'cat'], True)
        >>> significant_terms(["alice", "kyoto"], {"alice": 30_000, "kyoto": 800}, 1_000_000)
        (['kyoto'], False)
        >>> significant_terms(["alice", "zzyzx"], {"alice": 30_000}, 1_000_000)
        (['alice'], False)
    """
    if total < _COMMON_TERM_MIN_FACTS:
        return list(terms), False
    bound = min(_FREQUENT_SHARE * total, _FREQUENT_FACTS)
    known = [term for term in terms if frequencies.get(term, 0.0) > 0]
    rare = [term for term in known if frequencies[term] <= bound]
    if rare:
        return rare, False
    return known, len(known) > 1


_FACT_ARRAY_TYPES = {
    "confidence": "float8[]",
    "strength": "float8[]",
    "exact_values": "json[]",
    "tags": "json[]",
    "metadata": "json[]",
    "sources": "json[]",
    "created_at": "timestamptz[]",
    "last_accessed_at": "timestamptz[]",
    "valid_from": "timestamptz[]",
    "valid_to": "timestamptz[]",
    "search": "tsvector[]",
}


def _aware(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def _decode_time(value: Any) -> datetime | None:
    return None if value is None else _aware(value).astimezone(UTC)


class _PostgresBinder(Binder):
    def placeholder(self, position: int) -> str:
        return f"${position}"

    def time(self, value: datetime) -> datetime:
        return _aware(value)

    def one_of(self, column: str, values: Sequence[str]) -> str:
        return f"{column} = ANY({self.bind(list(values))}::text[])"

    def tags_any(self, tags: Sequence[str]) -> str:
        return f"f.tags && {self.bind(list(tags))}::text[]"


class PostgresMetadataStore(MetadataStore):
    """Facts and their audit log in a PostgreSQL schema, through an asyncpg pool.

    Call :meth:`migrate` once per schema (at deploy time, or at start-up: concurrent calls are
    safe); every other operation checks the schema is migrated and raises
    :class:`~sagewai.errors.ConfigurationError` if not. The pool opens on first use.

    Args:
        dsn: ``postgresql://user:password@host:port/database``. Optional when ``pool`` is given.
        schema: The schema holding the tables (lower-case letters, digits, ``_``).
        min_size: Connections the pool keeps open.
        max_size: Connections the pool may open. :meth:`lock` holds one while it is held.
        pool: An asyncpg pool to use instead of creating one (the store will not close it).
        connect_timeout: Seconds to wait for a connection before giving up.
        close_timeout: Seconds :meth:`close` waits for connections in use before terminating.

    Example:
        >>> import asyncio
        >>> from sagewai import Fact
        >>> from sagewai.core import FactQuery, WriteBatch
        >>> async def demo() -> int:
        ...     async with PostgresMetadataStore("postgresql://postgres@127.0.0.1/test") as store:
        ...         await store.migrate()
        ...         fact = Fact(project_id="demo", content="Alice prefers tea")
        ...         await store.apply(WriteBatch(project_id="demo", upserts=[fact]))
        ...         return await store.count(FactQuery(project_id="demo"))
        >>> asyncio.run(demo())  # doctest: +SKIP
        1
    """

    def __init__(
        self,
        dsn: str | None = None,
        *,
        schema: str = "sagewai",
        min_size: int = 1,
        max_size: int = 10,
        pool: Any = None,
        connect_timeout: float = 10.0,
        close_timeout: float = 10.0,
    ) -> None:
        super().__init__()
        if not _SCHEMA_NAME.match(schema):
            raise ConfigurationError(
                f"schema {schema!r} is not a plain identifier (lower-case letters, digits and _,"
                " at most 63 characters, not starting with a digit)"
            )
        self._postgres = PostgresPool(
            dsn,
            pool=pool,
            min_size=min_size,
            max_size=max_size,
            connect_timeout=connect_timeout,
            close_timeout=close_timeout,
            feature="PostgresMetadataStore",
            unmigrated=f'schema "{schema}"',
        )
        self._dsn = dsn
        self._schema = schema
        self._checked = False
        self._corpus_cache: tuple[float, float, float] | None = None
        """(when, facts, average tokens when large) of the facts table, for BM25."""
        self._frequent_cache: dict[str, float] | None = None
        self._frequencies: dict[str, tuple[float, float]] = {}
        """Document counts of frequent terms: term -> (count, table size when counted)."""
        quoted = f'"{schema}"'
        self._facts = f"{quoted}.facts"
        self._frequent_words = PostgresFrequentWords(self._facts, saved=f"{quoted}.keyword_copies")
        self._changes = f"{quoted}.changes"
        self._migrations = f"{quoted}.schema_migrations"
        self._state_table = f"{quoted}.project_state"
        self._quoted_schema = quoted
        self._fact_select = ", ".join(f"f.{column}" for column in FACT_COLUMNS)
        # One statement per batch: each column travels as one array parameter and unnest()
        # turns them back into rows (string lists travel as JSON, since arrays cannot nest).
        inputs = ", ".join(
            f"${i}::{_FACT_ARRAY_TYPES.get(column, 'text[]')}"
            for i, column in enumerate((*FACT_COLUMNS, "search"), start=1)
        )
        selected = ", ".join(
            f"ARRAY(SELECT e FROM json_array_elements_text(u.{column}) WITH ORDINALITY"
            " AS t(e, n) ORDER BY n)"
            if column in FACT_LIST_COLUMNS
            else f"u.{column}"
            for column in FACT_COLUMNS
        )
        columns = (*FACT_COLUMNS, "updated_at", "search")
        self._fact_insert = (
            f"INSERT INTO {self._facts} AS f ({', '.join(columns)})"
            f" SELECT {selected}, ${len(FACT_COLUMNS) + 2}::timestamptz, u.search"
            f" FROM unnest({inputs}) AS u({', '.join((*FACT_COLUMNS, 'search'))})"
            " ON CONFLICT (id) DO UPDATE SET "
            + ", ".join(f"{column} = EXCLUDED.{column}" for column in columns[1:])
            + f", {_WRITTEN_UPDATE}"
            # A fact id owned by another project is never taken over: the row stays as it is.
            + " WHERE f.project_id = EXCLUDED.project_id"
        )
        self._change_insert = (
            f"INSERT INTO {self._changes} ({', '.join(CHANGE_COLUMNS)}) VALUES ("
            + ", ".join(f"${i}" for i in range(1, len(CHANGE_COLUMNS) + 1))
            + ")"
        )

    @property
    def schema(self) -> str:
        """The schema holding this store's tables."""
        return self._schema

    def __repr__(self) -> str:
        return f"PostgresMetadataStore({describe_dsn(self._dsn)!r}, schema={self._schema!r})"

    # -- connections and errors ----------------------------------------------------------------

    @property
    def _pool(self) -> Any:
        return self._postgres.pool

    def _errors(self) -> AbstractAsyncContextManager[None]:
        """Translate driver exceptions raised inside the block into sagewai errors."""
        return self._postgres.errors()

    async def open(self) -> None:
        """Create the connection pool. Safe to call more than once."""
        await self._postgres.open()

    async def close(self) -> None:
        """Close the pool (unless it was given). Safe to call more than once.

        Connections still in use get ``close_timeout`` seconds to come back before the pool is
        terminated (which also releases any advisory lock they hold).
        """
        self._checked = False
        await self._postgres.close()

    async def _ready(self) -> Any:
        """The pool, once the schema is known to be migrated."""
        pool = await self._postgres.open()
        if not self._checked:
            missing = await self._postgres.missing_versions(self._migrations, "postgres")
            if missing:
                raise ConfigurationError(
                    f'schema "{self._schema}" on PostgreSQL at {describe_dsn(self._dsn)} is not'
                    f" migrated (missing versions {', '.join(missing)}):"
                    " call `await store.migrate()` first"
                )
            self._checked = True
        return pool

    async def migrate(self) -> list[str]:
        """Create or upgrade the schema; return the versions applied by this call.

        All pending migrations run in one transaction under an advisory lock, so concurrent
        calls (several replicas starting at once) apply each version exactly once.

        Example:
            >>> async def deploy(store: PostgresMetadataStore) -> None:
            ...     print(await store.migrate())  # ['0001'] the first time, [] afterwards
        """
        applied = await self._postgres.migrate(
            lock=lock_key("sagewai.migrate", self._schema),
            schema=self._quoted_schema,
            table=self._migrations,
            folder="postgres",
            render=lambda sql: sql.replace("__SCHEMA__", self._quoted_schema),
        )
        self._checked = True
        return applied

    # -- the contract ----------------------------------------------------------------------------

    def _fact_columns(self, facts: Sequence[Fact]) -> list[list[Any]]:
        """The batch's facts as one list per column (the last version of a repeated id wins)."""
        rows: dict[str, list[Any]] = {}
        for fact in facts:
            row = list(fact_values(fact))
            for i in _LIST_INDEXES:
                row[i] = to_json(list(row[i]), "a string list")
            row.append(tsvector_literal(fact.content))
            rows[fact.id] = row
        return [list(column) for column in zip(*rows.values(), strict=True)]

    async def apply(self, batch: WriteBatch) -> None:
        batch.validate()
        if not batch:
            return
        # Encode everything first: a record that cannot be stored fails before the transaction.
        now = utcnow()
        facts = self._fact_columns(batch.upserts)
        changes = [list(change_values(change)) for change in batch.changes]
        for change in changes:
            change[_CHANGE_RELATED] = list(change[_CHANGE_RELATED])
        pool = await self._ready()
        async with self._errors(), pool.acquire() as connection, connection.transaction():
            if batch.deletes:
                await connection.execute(
                    f"DELETE FROM {self._changes} WHERE fact_id IN (SELECT id FROM {self._facts}"
                    " WHERE project_id = $1 AND id = ANY($2::text[]))",
                    batch.project_id,
                    list(batch.deletes),
                )
                await connection.execute(
                    f"DELETE FROM {self._facts} WHERE project_id = $1 AND id = ANY($2::text[])",
                    batch.project_id,
                    list(batch.deletes),
                )
            if facts:
                # An id another project holds is never taken over, nor skipped in silence.
                taken = await connection.fetchval(
                    f"SELECT id FROM {self._facts} WHERE id = ANY($1::text[])"
                    " AND project_id <> $2 LIMIT 1",
                    [fact.id for fact in batch.upserts],
                    batch.project_id,
                )
                if taken is not None:
                    raise FactConflictError(taken, in_project=False)
                await connection.execute(self._fact_insert, *facts, now)
            if changes:
                await connection.executemany(self._change_insert, changes)

    async def _fetch(self, sql: str, values: Sequence[Any]) -> list[Any]:
        pool = await self._ready()
        async with self._errors():
            return list(await pool.fetch(sql, *values))

    async def get(self, project_id: str, ids: Sequence[str]) -> list[Fact]:
        if not ids:
            return []
        binder = _PostgresBinder()
        sql = (
            f"SELECT {self._fact_select} FROM {self._facts} AS f"
            f" WHERE {binder.one_of('f.id', ids)} AND {visible_condition(project_id, binder)}"
        )
        rows = await self._fetch(sql, binder.values)
        return [fact_from_row(row, _decode_time) for row in rows]

    async def query(self, query: FactQuery) -> list[Fact]:
        binder = _PostgresBinder()
        where = " AND ".join(fact_conditions(query, binder, paginate=True))
        sql = (
            f"SELECT {self._fact_select} FROM {self._facts} AS f WHERE {where}"
            " ORDER BY f.created_at, f.id"
        )
        if query.limit is not None:
            sql += f" LIMIT {binder.bind(query.limit)}"
        rows = await self._fetch(sql, binder.values)
        return [fact_from_row(row, _decode_time) for row in rows]

    async def count(self, query: FactQuery) -> int:
        binder = _PostgresBinder()
        where = " AND ".join(fact_conditions(query, binder, paginate=False))
        rows = await self._fetch(
            f"SELECT count(*) FROM {self._facts} AS f WHERE {where}", binder.values
        )
        return int(rows[0][0])

    async def keyword_search(
        self, query: FactQuery, text: str, top_k: int
    ) -> list[tuple[str, float]]:
        """BM25 over the GIN-indexed ``tsvector``, ranked as SQLite's FTS5 ``bm25()`` ranks.

        The same constants (k1 1.2, b 0.75), the same idf (FTS5's, floored at 1e-6) over the
        whole table, the same length normalisation (tokens of the fact against the table's
        average) and the same frequent-term rule as :class:`~sagewai.stores.sqlite.
        SqliteMetadataStore`: in a table of 10,000 facts or more, terms found in more than 5 % of
        the facts (or in more than 10,000 of them) are left out when the query has rarer ones,
        and when every term is frequent a fact must hold all of them.

        Up to 1,000 matches, one statement ranks them: the table's size, average length and the
        document counts it needs are computed inside it (a small table is counted exactly, so
        the ranking follows every write; a large one uses the planner's estimates, see
        :meth:`_frequent_shares`). More matches (a frequent word, rare words that match many
        facts together) are ranked from this process's in-memory copy of the words' facts
        (:class:`~sagewai.stores.postgres._frequent.PostgresFrequentWords`: the same scores,
        read once per word and kept up to date with every writer), and only the best are looked
        up for the filter: scoring every match in SQL read each one's row, 80 to 150 ms for a
        word in 34,000 facts.
        """
        rows = await self._keyword_rows(query, text, top_k, "f.id")
        return [(str(row[1]), float(row[0])) for row in rows]

    async def keyword_facts(
        self, query: FactQuery, text: str, top_k: int
    ) -> list[tuple[Fact, float]]:
        """:meth:`keyword_search`'s hits with their records, read by the statement that ranks
        them or checks them against the filter (not looked up again afterwards)."""
        rows = await self._keyword_rows(query, text, top_k, self._fact_select)
        return [(fact_from_row(row[1:], _decode_time), float(row[0])) for row in rows]

    async def _keyword_rows(
        self, query: FactQuery, text: str, top_k: int, columns: str
    ) -> list[Any]:
        """The best ``top_k`` matches as rows of ``(score, *columns)`` (``columns`` of the
        facts table ``f``), best first (see :meth:`keyword_search`)."""
        terms = query_terms(text)
        if not terms or top_k <= 0:
            return []
        pool = await self._ready()
        async with self._errors():
            size, average = await self._table_size(pool)
            known: dict[str, float] = {}
            if size >= _COMMON_TERM_MIN_FACTS:
                known = await self._known_frequencies(pool, terms, size)
        if size >= _COMMON_TERM_MIN_FACTS:
            # Every term is counted (``known``); words no fact holds are left out.
            terms, all_terms = significant_terms(terms, known, size)
            if not terms:
                return []
            counts = [known[term] for term in terms]
            if (min(counts) if all_terms else sum(counts)) > _STATEMENT_MAX_MATCHES:
                return await self._keyword_from_copy(
                    pool, query, terms, all_terms, (size, average), top_k, columns
                )
        else:
            all_terms = False
        binder = _PostgresBinder()
        if size >= _COMMON_TERM_MIN_FACTS:
            totals = (
                f"SELECT {binder.bind(size)}::float8 AS n,"
                f" {binder.bind(max(average, 1.0))}::float8 AS avg"
            )
        else:
            totals = (
                "SELECT count(*)::float8 AS n,"
                f" greatest(coalesce(avg(search_length), 0), 1)::float8 AS avg FROM {self._facts}"
            )
        lexemes = [binder.bind(quote_lexeme(term)) for term in terms]
        weights = []
        for n, (term, lexeme) in enumerate(zip(terms, lexemes, strict=True)):
            hits = (
                f"{binder.bind(known[term])}::float8"
                if term in known
                else f"(SELECT count(*) FROM {self._facts} WHERE search @@ {lexeme}::tsquery)"
            )
            ratio = f"(t.n - d.h{n} + 0.5) / (d.h{n} + 0.5)"
            weights.append((hits, f"CASE WHEN {ratio} <= 1 THEN 1e-6 ELSE ln({ratio}) END"))
        joiner = " & " if all_terms else " | "
        match = binder.bind(joiner.join(quote_lexeme(term) for term in terms))
        # Per matching fact, the sum over the query terms it holds of
        # idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * tokens / average tokens)),
        # one CASE per term: tf is 1 unless the word is among the fact's repeated ones.
        norm = "1.2 * (0.25 + 0.75 * f.search_length / s.avg)"
        parts = []
        for n, (term, lexeme) in enumerate(zip(terms, lexemes, strict=True)):
            tf = f"coalesce((f.search_repeats ->> {binder.bind(term)}::text)::float8, 1.0)"
            parts.append(
                f"CASE WHEN f.search @@ {lexeme}::tsquery"
                f" THEN s.w{n} * {tf} * 2.2 / ({tf} + {norm}) ELSE 0 END"
            )
        where = " AND ".join(fact_conditions(query, binder, paginate=False))
        hit_columns = ", ".join(f"{hits} AS h{n}" for n, (hits, _) in enumerate(weights))
        weight_columns = ", ".join(f"{w} AS w{n}" for n, (_, w) in enumerate(weights))
        sql = (
            f"WITH t AS MATERIALIZED ({totals}),"
            f" d AS MATERIALIZED (SELECT {hit_columns}),"
            f" s AS MATERIALIZED (SELECT t.avg, {weight_columns} FROM t, d)"
            f" SELECT {' + '.join(parts)} AS score, {columns} FROM {self._facts} AS f, s"
            f" WHERE f.search @@ {match}::tsquery AND {where}"
            f" ORDER BY score DESC, f.id LIMIT {binder.bind(top_k)}"
        )
        return await self._fetch(sql, binder.values)

    async def prepare_keyword_search(self) -> int:
        """Ready the keyword index after a bulk load, for every process that searches it next.

        ``VACUUM ANALYZE`` of the facts table (the GIN index's pending list merged into the
        index, and the word statistics the ranking takes its counts from), then the facts of
        every word the statistics list in more than 1,000 facts read once and saved for the
        processes to come (:class:`~sagewai.stores.postgres._frequent.PostgresFrequentWords`).
        Without them the first process to meet such a word reads its facts from the table:
        at a million facts, tens to hundreds of milliseconds added to that search, a word at a
        time. Returns how many words were saved (none below 10,000 facts, where every query is
        ranked by one statement). :meth:`bulk_load` calls it at the end of its block; call it
        yourself after loading facts another way.

        Example:
            >>> async def after_import(store: PostgresMetadataStore) -> None:
            ...     saved = await store.prepare_keyword_search()
            ...     print(f"{saved} frequent words saved")
        """
        pool = await self._ready()
        async with self._errors():
            await pool.execute(f"VACUUM (ANALYZE) {self._facts}")
            self._corpus_cache = None  # the statistics have changed: read them again
            size, _ = await self._table_size(pool)
            if size < _COMMON_TERM_MIN_FACTS:
                return 0
            shares = await self._frequent_shares(pool)
            words = sorted(
                (word for word, share in shares.items() if share * size > _STATEMENT_MAX_MATCHES),
                key=lambda word: (-shares[word], word),
            )
            await self._frequent_words.save(pool, words, rows=size)
        return len(words)

    @asynccontextmanager
    async def bulk_load(self) -> AsyncIterator[None]:
        """Load many facts inside the block, then :meth:`prepare_keyword_search` once.

        The counterpart of the vector stores' ``bulk_load()`` (see ``docs/backends.md``):
        nothing changes while the block runs, and when it ends without an error the table is
        analysed and its frequent words saved, so the next process searches at full speed
        from its first query. After an error the facts already written stay; call
        :meth:`prepare_keyword_search` once the load is done.

        Example:
            >>> async def load(ctx, store: PostgresMetadataStore, texts: list[str]) -> None:
            ...     async with store.bulk_load():
            ...         for start in range(0, len(texts), 2048):
            ...             await ctx.add_many(texts[start : start + 2048])
        """
        yield
        await self.prepare_keyword_search()

    async def _keyword_from_copy(
        self,
        pool: Any,
        query: FactQuery,
        terms: list[str],
        every: bool,
        totals: tuple[float, float],
        top_k: int,
        columns: str,
    ) -> list[Any]:
        """Many matches, ranked from the in-memory copy of the words' facts
        (:class:`~sagewai.stores.postgres._frequent.PostgresFrequentWords`, the same BM25),
        and only the best looked up for the filter: the first ``top_k + max(top_k, 32)``, then
        growing batches until ``top_k`` have passed. One statement a batch checks its facts in
        rank order and reads ``columns`` of the first that pass, as ``(score, *columns)``."""
        size, average = totals
        async with self._errors():
            ranked = await self._frequent_words.ranked(
                pool, terms, every=every, rows=size, average=max(average, 1.0)
            )
        match = (" & " if every else " | ").join(quote_lexeme(term) for term in terms)
        hits: list[Any] = []
        for rows in head_batches(ranked, top_k):
            if not rows:
                break
            binder = _PostgresBinder()
            conditions = [
                f"f.search @@ {binder.bind(match)}::tsquery",
                *fact_conditions(query, binder, paginate=False),
            ]
            # The facts in rank order (their place in the batch), the first that pass only.
            passed = await self._fetch(
                f"SELECT b.score, {columns} FROM unnest("
                f"{binder.bind([seq for seq, _ in rows])}::bigint[],"
                f" {binder.bind([-rank for _, rank in rows])}::float8[])"
                " WITH ORDINALITY AS b(seq, score, place)"
                f" JOIN {self._facts} AS f ON f.seq = b.seq WHERE {' AND '.join(conditions)}"
                f" ORDER BY b.place LIMIT {binder.bind(top_k - len(hits))}",
                binder.values,
            )
            hits.extend(passed)
            if len(hits) >= top_k:
                break
        return hits

    async def _table_size(self, pool: Any) -> tuple[float, float]:
        """The planner's row count of the facts table and, when large, its average tokens.

        Refreshed every five minutes; it decides whether the frequent-term rule applies (and,
        for a large table, gives BM25 its totals: the average comes from a 1 % block sample).
        """
        now = time.monotonic()
        if self._corpus_cache is not None and now - self._corpus_cache[0] < _CORPUS_TTL:
            return self._corpus_cache[1], self._corpus_cache[2]
        estimate = await pool.fetchval(
            "SELECT reltuples FROM pg_class WHERE oid = to_regclass($1)", self._facts
        )
        if estimate is None or estimate < 0:  # never analysed: count it once
            estimate = await pool.fetchval(f"SELECT count(*) FROM {self._facts}")
        estimate = float(estimate or 0.0)
        average = 0.0
        if estimate >= _COMMON_TERM_MIN_FACTS:
            sampled = await pool.fetchval(
                f"SELECT avg(search_length) FROM {self._facts} TABLESAMPLE SYSTEM (1)"
            )
            if sampled is None:
                sampled = await pool.fetchval(f"SELECT avg(search_length) FROM {self._facts}")
            average = float(sampled or 0.0)
        self._corpus_cache = (now, estimate, average)
        self._frequent_cache = None
        return estimate, average

    async def _known_frequencies(
        self, pool: Any, terms: Sequence[str], size: float
    ) -> dict[str, float]:
        """Document counts of a large table's common words, without walking posting lists.

        Words the planner statistics list as common take their share from there; large counts
        made earlier are cached until the table has grown or shrunk by a tenth, as the SQLite
        store does. The other words are counted through the index (cheap: the statistics list
        every word above about 0.1 % of the sample, so these are rare), in one statement, and
        the large counts cached. Every term gets a count, 0 for a word no fact holds.
        """
        common = await self._frequent_shares(pool)
        found: dict[str, float] = {}
        for term in terms:
            cached = self._frequencies.get(term)
            if term in common:
                found[term] = common[term] * size
            elif cached is not None and 10 * abs(cached[1] - size) < cached[1]:
                found[term] = cached[0]
        missing = [term for term in terms if term not in found]
        if missing:
            counts = ", ".join(
                f"(SELECT count(*) FROM {self._facts} WHERE search @@ ${n}::tsquery)"
                for n in range(1, len(missing) + 1)
            )
            row = await pool.fetchrow(f"SELECT {counts}", *(quote_lexeme(t) for t in missing))
            for term, count in zip(missing, row, strict=True):
                found[term] = float(count)
                if count >= _CACHED_FREQUENCY_MIN:
                    self._frequencies[term] = (float(count), size)
        return found

    async def _frequent_shares(self, pool: Any) -> dict[str, float]:
        """The share of facts holding each word ANALYZE found common (``pg_stats``).

        Its sample is the whole table up to 30,000 rows (at the default statistics target) and
        the list holds the words above a small share (about 0.1 % of the sample); only the
        words below it are counted through the index, which is cheap because they are rare.
        """
        if self._frequent_cache is not None:
            return self._frequent_cache
        row = await pool.fetchrow(
            "SELECT s.most_common_elems::text::text[] AS words,"
            " s.most_common_elem_freqs AS freqs FROM pg_stats AS s"
            " WHERE s.schemaname = $1 AND s.tablename = 'facts' AND s.attname = 'search'",
            self._schema,
        )
        shares: dict[str, float] = {}
        if row is not None and row["words"]:
            shares = {
                word: float(share) for word, share in zip(row["words"], row["freqs"], strict=False)
            }
        self._frequent_cache = shares
        return shares

    async def changes(self, query: ChangeQuery) -> list[FactChange]:
        binder = _PostgresBinder()
        where = change_conditions(query, binder)
        sql = (
            f"SELECT {', '.join(CHANGE_COLUMNS)} FROM {self._changes}"
            f" WHERE {where} ORDER BY at, seq"
        )
        if query.limit is not None:
            sql += f" LIMIT {binder.bind(query.limit)}"
        rows = await self._fetch(sql, binder.values)
        return [change_from_row(row, _decode_time) for row in rows]

    async def get_state(self, project_id: str, key: str) -> JsonValue | None:
        pool = await self._ready()
        async with self._errors():
            raw = await pool.fetchval(
                f"SELECT value::text FROM {self._state_table} WHERE project_id = $1 AND key = $2",
                project_id,
                key,
            )
        return None if raw is None else cast(JsonValue, json.loads(raw))

    async def set_state(self, project_id: str, key: str, value: JsonValue) -> None:
        pool = await self._ready()
        async with self._errors():
            await pool.execute(
                f"INSERT INTO {self._state_table} (project_id, key, value)"
                " VALUES ($1, $2, $3::json) ON CONFLICT (project_id, key)"
                " DO UPDATE SET value = excluded.value, updated_at = now()",
                project_id,
                key,
                json.dumps(value),
            )

    async def redact_changes(self, project_id: str, changes: Sequence[FactChange]) -> int:
        rows = []
        for change in changes:
            values = change_values(change)
            rows.append((values[7], values[9], values[10], change.id, project_id))
        if not rows:
            return 0
        pool = await self._ready()
        rewritten = 0
        async with self._errors(), pool.acquire() as connection, connection.transaction():
            for row in rows:
                status = await connection.execute(
                    f"UPDATE {self._changes} SET reason = $1, before = $2::json,"
                    " after = $3::json WHERE id = $4 AND project_id = $5",
                    *row,
                )
                rewritten += int(status.rsplit(" ", 1)[-1])
        return rewritten

    async def touch(self, project_id: str, ids: Sequence[str], at: datetime) -> None:
        if not ids:
            return
        pool = await self._ready()
        async with self._errors():
            await pool.execute(
                f"UPDATE {self._facts} SET last_accessed_at = $1"
                " WHERE project_id = $2 AND id = ANY($3::text[])",
                _aware(at),
                project_id,
                list(ids),
            )

    async def delete_project(self, project_id: str) -> int:
        pool = await self._ready()
        async with self._errors(), pool.acquire() as connection, connection.transaction():
            await connection.execute(
                f"DELETE FROM {self._changes} WHERE project_id = $1"
                f" OR fact_id IN (SELECT id FROM {self._facts} WHERE project_id = $1)",
                project_id,
            )
            status = await connection.execute(
                f"DELETE FROM {self._facts} WHERE project_id = $1", project_id
            )
            await connection.execute(
                f"DELETE FROM {self._state_table} WHERE project_id = $1", project_id
            )
        return int(status.rsplit(" ", 1)[-1])

    async def project_ids(self) -> list[str]:
        """Every project with facts in this schema, sorted."""
        pool = await self._ready()
        async with self._errors(), pool.acquire() as connection:
            rows = await connection.fetch(
                f'SELECT DISTINCT project_id COLLATE "C" AS project_id FROM {self._facts}'
                " ORDER BY 1"
            )
        return [str(row["project_id"]) for row in rows]

    @asynccontextmanager
    async def lock(self, project_id: str, name: str) -> AsyncIterator[None]:
        """Hold an exclusive lock named ``name`` on ``project_id`` across every process.

        A session-level ``pg_try_advisory_lock`` is taken on a pooled connection held for the
        duration, so the lock is released even if the process dies (its connection closes).

        Raises:
            LockedError: when another holder (any process, any store instance) has it.

        Example:
            >>> async def consolidate(store: PostgresMetadataStore) -> None:
            ...     async with store.lock("demo", "consolidation"):
            ...         ...  # no other replica consolidates "demo" meanwhile
        """
        async with super().lock(project_id, name):
            pool = await self._ready()
            key = lock_key("sagewai.lock", self._schema, project_id, name)
            async with self._errors():
                connection = await pool.acquire()
            try:
                async with self._errors():
                    taken = await connection.fetchval("SELECT pg_try_advisory_lock($1)", key)
                if not taken:
                    raise LockedError(
                        f"{name} is already running on project {project_id!r} (held elsewhere)"
                    )
                try:
                    yield
                finally:
                    try:
                        await connection.fetchval("SELECT pg_advisory_unlock($1)", key)
                    except Exception:
                        # The session is broken; ending it releases the lock on the server
                        # (asyncpg may already have dropped it from the pool).
                        with contextlib.suppress(Exception):
                            connection.terminate()
            finally:
                await pool.release(connection)
