"""Frequent words of a large PostgreSQL keyword index, kept in the search process's memory.

At a million facts a query such as "what does Dana like to drink" keeps one known word, "dana",
held by 34,000 facts: the keyword statement scored every one of them (their rows read from the
heap, a BM25 expression each, a sort), 80 to 150 ms. A query of rarer words with many matches
in all does the same at 100,000 facts. Here each such word's facts are read once per process,
into a bitmap over the facts' ``seq`` (:mod:`sagewai.stores.base._word_bitmaps`, the arithmetic
the SQLite store's copy uses), with their token counts and the facts holding the word more than
once; a query becomes an AND or an OR of bitmaps and FTS5's BM25, and only its best facts are
looked up, with the query's filter and the words matched again.

The copy follows every writer of any process:

- it is read in one snapshot, and before each use it catches up with the facts written by the
  transactions that snapshot did not see (``written``, the writing transaction's id, set on
  insert and whenever a fact's keyword vector changes; migration ``0004``), so a transaction
  that commits late, after later ones, is still read;
- a fact deleted, or rewritten so that it no longer holds a word, keeps its bit until the copy
  is read again; the lookup matches the words again, so such a fact is never returned, and
  the word counts it adds to (a tenth of a difference moves an IDF by about 0.1) are dropped
  with the whole copy once the table has grown or shrunk by a tenth, or when a catch-up would
  read more than :data:`_CATCH_UP_MAX` facts.

A word read from the heap is saved for the next process (the table ``keyword_copies``,
migration ``0005``): reading a word held by a tenth of a million facts from cold buffers took
about half a second, the first time each process met it, so a restarted or added process
answered its first queries of common words slowly. A process that meets a word loads the saved
copy in one row and catches it up from the snapshot it was read in, as above. A saved copy is
not used once the table has grown or shrunk by a tenth since, nor when its catch-up would read
more than :data:`_CATCH_UP_MAX` facts (the word is then read from the heap and saved again);
every statement that deletes facts empties the table. After a bulk load the store saves the
copies of every common word at once (:meth:`save`), so that no process pays the first read.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from sagewai.stores.base._sql import quote_lexeme
from sagewai.stores.base._word_bitmaps import (
    MAX_BYTES,
    Seqs,
    WordBits,
    best_first,
    bm25_ranks,
    capacity,
    grown,
    holding_all,
    holding_any,
    keep_within,
)

__all__ = ["PostgresFrequentWords"]

logger = logging.getLogger("sagewai.stores")

_CATCH_UP_MAX = 20_000
"""A catch-up that would read more facts than this drops the copy instead."""
_LENGTH_CAP = 65_535
_RESAVE_AFTER = 1_000
"""A loaded copy that caught up with more facts than this is saved again, caught up."""


class PostgresFrequentWords:
    """The in-memory copy of some words of one PostgreSQL facts table.

    Safe for the coroutines of one event loop (one lock around reading and scoring).

    Args:
        facts: The facts table, schema-qualified and quoted.
        max_bytes: The words' bitmaps are kept up to this size in all, the least recently
            used dropped first.
        saved: The table of saved copies (``keyword_copies``), schema-qualified and quoted;
            ``None`` reads every word from the facts table and saves none.
    """

    def __init__(self, facts: str, max_bytes: int = MAX_BYTES, *, saved: str | None = None) -> None:
        self._facts = facts
        self._saved = saved
        self._max_bytes = max_bytes
        self._words: OrderedDict[str, WordBits] = OrderedDict()
        self._snapshot: str | None = None
        """Every word holds the facts visible in this snapshot (``pg_snapshot`` text)."""
        self._size = 0.0
        """The table's size when the copy was started."""
        self._lengths = np.zeros(0, dtype=np.uint16)
        self._lock = asyncio.Lock()

    def __len__(self) -> int:
        return len(self._words)

    async def ranked(
        self, pool: Any, words: Sequence[str], *, every: bool, rows: float, average: float
    ) -> Iterator[tuple[int, float]]:
        """The facts holding every word (``every``) or any of them, as ``(seq, bm25)`` best
        first (lower is better), equal scores newest first.

        ``rows`` and ``average`` are the table's size and average tokens per fact, as the
        store's keyword statement uses them.
        """
        async with self._lock:
            if 10 * abs(rows - self._size) >= self._size:
                self._clear(rows)
            await self._catch_up(pool)
            entries = [await self._word(pool, word) for word in words]
            seqs = holding_all(entries) if every else holding_any(entries)
            lengths = self._lengths[seqs].astype(np.float64)
            ranks = bm25_ranks(entries, seqs, lengths, max(rows, 1.0), average, every=every)
        return best_first(seqs, ranks)

    async def save(self, pool: Any, words: Sequence[str], *, rows: float) -> None:
        """Read each word's facts from the table and save the copy for later processes.

        For the end of a bulk load (:meth:`PostgresMetadataStore.prepare_keyword_search
        <sagewai.stores.postgres.PostgresMetadataStore.prepare_keyword_search>`): the words
        are not kept in this process, which may never search.
        """
        for word in words:  # the lock is let go between words: searches go on meanwhile
            async with self._lock:
                if 10 * abs(rows - self._size) >= self._size:
                    self._clear(rows)
                await self._read_word(pool, word)
                if not self._words:
                    self._snapshot = None  # the snapshot of the words this process holds: none

    def _clear(self, size: float) -> None:
        self._words.clear()
        self._snapshot = None
        self._size = size
        self._lengths = np.zeros(0, dtype=np.uint16)

    async def _word(self, pool: Any, word: str) -> WordBits:
        entry = self._words.get(word)
        if entry is not None:
            self._words.move_to_end(word)
            return entry
        entry = await self._load_word(pool, word) or await self._read_word(pool, word)
        self._words[word] = entry
        keep_within(self._words, self._max_bytes)
        return entry

    async def _read_word(self, pool: Any, word: str) -> WordBits:
        """Every fact holding ``word``, in one statement (its snapshot with it)."""
        row = await pool.fetchrow(
            "SELECT pg_current_snapshot()::text,"
            " coalesce(array_agg(seq), '{}'), coalesce(array_agg(search_length), '{}'),"
            " coalesce(array_agg(seq) FILTER (WHERE search_repeats ? $2), '{}'),"
            " coalesce(array_agg((search_repeats ->> $2)::int)"
            " FILTER (WHERE search_repeats ? $2), '{}')"
            f" FROM {self._facts} WHERE search @@ $1::tsquery",
            quote_lexeme(word),
            word,
        )
        snapshot, listed, lengths, repeated, counts = row
        seqs = np.asarray(listed, dtype=np.int64)
        self._set_lengths(seqs, np.asarray(lengths, dtype=np.int64))
        entry = WordBits(np.zeros(capacity(int(seqs.max()) if len(seqs) else 0), dtype=np.uint8))
        entry.add(seqs)
        entry.repeats = dict(zip(repeated, counts, strict=True))
        if self._snapshot is None:
            self._snapshot = snapshot  # later snapshots see more: the catch-up reads it again
        await self._save(pool, word, entry, snapshot)
        return entry

    async def _load_word(self, pool: Any, word: str) -> WordBits | None:
        """The word's saved copy, caught up from its snapshot; ``None`` when there is none
        worth using (none saved, the table has changed by a tenth since, or the catch-up
        would read more than :data:`_CATCH_UP_MAX` facts)."""
        if self._saved is None:
            return None
        row = await pool.fetchrow(
            "SELECT snapshot, table_size, facts, bits, lengths, repeated, counts"
            f" FROM {self._saved} WHERE word = $1",
            word,
        )
        if row is None or 10 * abs(self._size - row["table_size"]) >= row["table_size"]:
            return None
        entry = WordBits(
            np.frombuffer(row["bits"], dtype=np.uint8).copy(),
            count=row["facts"],
            repeats=dict(zip(row["repeated"], row["counts"], strict=True)),
        )
        seqs = entry.seqs
        lengths = np.frombuffer(row["lengths"], dtype="<u2")
        if len(seqs) != entry.count or len(lengths) != len(seqs):
            return None  # not what this code saves: read the word afresh
        written = await self._written_since(pool, row["snapshot"], [word])
        if written is None:
            return None
        self._set_lengths(seqs, lengths.astype(np.int64))
        snapshot, rows = written
        self._add_written(rows, {word: entry})
        if self._snapshot is None:
            self._snapshot = snapshot
        if len(rows) > _RESAVE_AFTER:
            await self._save(pool, word, entry, snapshot)
        return entry

    async def _save(self, pool: Any, word: str, entry: WordBits, snapshot: str) -> None:
        """Save the word's copy for later processes; a store that cannot write (a read-only
        replica, say) goes on without it (logged at debug level)."""
        if self._saved is None:
            return
        import asyncpg

        seqs = entry.seqs
        try:
            await pool.execute(
                f"INSERT INTO {self._saved}"
                " (word, snapshot, table_size, facts, bits, lengths, repeated, counts)"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (word) DO UPDATE SET"
                " snapshot = EXCLUDED.snapshot, table_size = EXCLUDED.table_size,"
                " facts = EXCLUDED.facts, bits = EXCLUDED.bits, lengths = EXCLUDED.lengths,"
                " repeated = EXCLUDED.repeated, counts = EXCLUDED.counts",
                word,
                snapshot,
                self._size,
                entry.count,
                entry.bits.tobytes(),
                self._lengths[seqs].astype("<u2").tobytes(),
                list(entry.repeats),
                list(entry.repeats.values()),
            )
        except asyncpg.PostgresError as exc:
            logger.debug("the copy of a frequent word was not saved: %s", exc)

    async def _catch_up(self, pool: Any) -> None:
        """Add the facts written since the copy's snapshot (by transactions it did not see)."""
        if self._snapshot is None or not self._words:
            return
        written = await self._written_since(pool, self._snapshot, list(self._words))
        if written is None:
            self._clear(self._size)
            return
        self._snapshot, rows = written
        self._add_written(rows, self._words)

    async def _written_since(
        self, pool: Any, snapshot: str, words: Sequence[str]
    ) -> tuple[str, list[Any]] | None:
        """The facts holding any of ``words`` written by transactions ``snapshot`` did not see,
        with the snapshot of the statement that read them (which sees them all); ``None`` when
        there are more than :data:`_CATCH_UP_MAX`."""
        match = " | ".join(quote_lexeme(word) for word in words)
        rows = await pool.fetch(
            "SELECT s.snapshot, c.seq, c.search_length, c.search_repeats::text, c.words"
            " FROM (SELECT pg_current_snapshot()::text AS snapshot) AS s LEFT JOIN LATERAL"
            " (SELECT seq, search_length, search_repeats,"
            " ARRAY(SELECT w FROM unnest(tsvector_to_array(search)) AS w"
            " WHERE w = ANY($3::text[])) AS words"
            f" FROM {self._facts} WHERE written >= pg_snapshot_xmin($1::text::pg_snapshot)"
            " AND NOT pg_visible_in_snapshot(written, $1::text::pg_snapshot)"
            f" AND search @@ $2::tsquery LIMIT {_CATCH_UP_MAX + 1}) AS c ON true",
            snapshot,
            match,
            list(words),
        )
        written = [row for row in rows if row[1] is not None]
        if len(written) > _CATCH_UP_MAX:
            return None
        return rows[0][0], written

    def _add_written(self, rows: Sequence[Any], entries: dict[str, WordBits]) -> None:
        """Add facts read by :meth:`_written_since` to the words they hold (once each)."""
        if not rows:
            return
        seqs = np.asarray([row[1] for row in rows], dtype=np.int64)
        self._set_lengths(seqs, np.asarray([row[2] for row in rows], dtype=np.int64))
        for _, seq, _, repeats_text, held in rows:
            repeats = json.loads(repeats_text)
            for word in held:
                entry = entries[word]
                one = np.asarray([seq], dtype=np.int64)
                if not entry.holds(one)[0]:
                    entry.add(one)
                if word in repeats:
                    entry.repeats[seq] = int(repeats[word])
                else:
                    entry.repeats.pop(seq, None)

    def _set_lengths(self, seqs: Seqs, lengths: np.ndarray[Any, np.dtype[np.int64]]) -> None:
        if not len(seqs):
            return
        top = int(seqs.max())
        if top >= len(self._lengths):
            self._lengths = grown(self._lengths, capacity(top) * 8)
        self._lengths[seqs] = np.minimum(lengths, _LENGTH_CAP)
