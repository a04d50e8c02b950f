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
"""

from __future__ import annotations

import asyncio
import json
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
)

__all__ = ["PostgresFrequentWords"]

_CATCH_UP_MAX = 20_000
"""A catch-up that would read more facts than this drops the copy instead."""
_LENGTH_CAP = 65_535


class PostgresFrequentWords:
    """The in-memory copy of some words of one PostgreSQL facts table.

    Safe for the coroutines of one event loop (one lock around reading and scoring).

    Args:
        facts: The facts table, schema-qualified and quoted.
        max_bytes: The words' bitmaps are kept up to this size in all, the least recently
            used dropped first.
    """

    def __init__(self, facts: str, max_bytes: int = MAX_BYTES) -> None:
        self._facts = facts
        self._max_bytes = max_bytes
        self._words: OrderedDict[str, WordBits] = OrderedDict()
        self._snapshot: str | None = None
        """Every word holds the facts visible in this snapshot (``pg_snapshot`` text)."""
        self._size = 0.0
        """The table's size when the copy was started."""
        self._lengths = np.zeros(0, dtype=np.uint16)
        self._bytes = 0
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

    def _clear(self, size: float) -> None:
        self._words.clear()
        self._snapshot = None
        self._size = size
        self._lengths = np.zeros(0, dtype=np.uint16)
        self._bytes = 0

    async def _word(self, pool: Any, word: str) -> WordBits:
        entry = self._words.get(word)
        if entry is not None:
            self._words.move_to_end(word)
            return entry
        entry = await self._read_word(pool, word)
        self._words[word] = entry
        self._bytes += entry.bits.nbytes
        while self._bytes > self._max_bytes and len(self._words) > 1:
            _, dropped = self._words.popitem(last=False)
            self._bytes -= dropped.bits.nbytes
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
        return entry

    async def _catch_up(self, pool: Any) -> None:
        """Add the facts written since the copy's snapshot (by transactions it did not see)."""
        if self._snapshot is None or not self._words:
            return
        words = list(self._words)
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
            self._snapshot,
            match,
            words,
        )
        snapshot = rows[0][0]
        written = [row for row in rows if row[1] is not None]
        if len(written) > _CATCH_UP_MAX:
            self._clear(self._size)
            return
        if written:
            seqs = np.asarray([row[1] for row in written], dtype=np.int64)
            self._set_lengths(seqs, np.asarray([row[2] for row in written], dtype=np.int64))
            for _, seq, _, repeats_text, held in written:
                repeats = json.loads(repeats_text)
                for word in held:
                    entry = self._words[word]
                    one = np.asarray([seq], dtype=np.int64)
                    if not entry.holds(one)[0]:
                        entry.add(one)
                    if word in repeats:
                        entry.repeats[seq] = int(repeats[word])
                    else:
                        entry.repeats.pop(seq, None)
        self._snapshot = snapshot

    def _set_lengths(self, seqs: Seqs, lengths: np.ndarray[Any, np.dtype[np.int64]]) -> None:
        if not len(seqs):
            return
        top = int(seqs.max())
        if top >= len(self._lengths):
            self._lengths = grown(self._lengths, capacity(top) * 8)
        self._lengths[seqs] = np.minimum(lengths, _LENGTH_CAP)
