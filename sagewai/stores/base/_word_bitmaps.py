"""In-memory copies of a keyword index's words, as bitmaps over the facts' sequence numbers.

The SQL stores keep the words of large queries in memory (the SQLite store reads them from its
FTS5 index, the PostgreSQL store from its GIN-indexed ``tsvector``): a word is a bitmap of the
facts holding it, with the few facts that hold it more than once. A query of such words becomes
an AND (or an OR) of bitmaps and a BM25 computed as SQLite FTS5's ``bm25()`` computes it (same
constants, same floating-point operations in the same order), so the ranking is the index's own.
How a store reads a word and keeps its copy exact is the store's part; this module is the
arithmetic both share.

Memory: a bitmap is an eighth of a byte per fact (125 KB a word at a million facts), and once a
query has needed the list of a word's facts, four bytes per fact holding it.
"""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "MAX_BYTES",
    "Seqs",
    "WordBits",
    "best_first",
    "bm25_ranks",
    "capacity",
    "grown",
    "head_batches",
    "holding_all",
    "holding_any",
    "keep_within",
]

MAX_BYTES = 64 * 2**20
"""A store keeps its words' bitmaps up to this size in all."""
_K1 = 1.2
_B = 0.75
_HEAD = 256
_BATCH_MARGIN = 32
"""The first batch checked against a filter holds at least this many rows beyond ``top_k``."""
_BATCH_GROWTH = 8
_BATCH_MAX = 8_192
"""Later batches grow 8-fold up to this size."""

Seqs = np.ndarray[Any, np.dtype[np.int64]]
"""Facts' sequence numbers, ascending."""


def capacity(seq: int) -> int:
    """Bytes of a bitmap holding ``seq``, with room to grow by a quarter."""
    return (seq + seq // 4 + 64) // 8 + 1


def grown(array: np.ndarray[Any, Any], size: int) -> np.ndarray[Any, Any]:
    """``array`` zero-extended to ``size`` items (itself when it is that long already)."""
    if len(array) >= size:
        return array
    extended = np.zeros(size, dtype=array.dtype)
    extended[: len(array)] = array
    return extended


@dataclass
class WordBits:
    """The facts holding one word."""

    bits: np.ndarray[Any, np.dtype[np.uint8]]
    """Bit ``seq`` (most significant first in each byte) is set when fact ``seq`` holds it."""
    count: int = 0
    """Set bits: the word's document count."""
    repeats: dict[int, int] = field(default_factory=dict)
    """Facts holding the word more than once: seq -> occurrences."""
    _listed: np.ndarray[Any, Any] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    """The set bits' positions, made on first use (:attr:`seqs`); :meth:`add` extends it with
    facts above every listed one and drops it otherwise."""

    @property
    def seqs(self) -> Seqs:
        """The facts holding the word, ascending.

        Listed from the bitmap once and kept (in 32 bits where they fit): listing the bits of
        a word in 34,000 of a million facts took a millisecond and a half, and a query made
        of one frequent word needs every one of them.
        """
        if self._listed is None:
            listed = _set_bits(self.bits)
            small = len(self.bits) * 8 <= np.iinfo(np.int32).max
            self._listed = listed.astype(np.int32) if small else listed
        return self._listed.astype(np.int64)

    @property
    def nbytes(self) -> int:
        """Memory the word may hold: its bitmap and the list of its facts (counted before the
        list is made, so a budget checked when the word is added holds once it is)."""
        return self.bits.nbytes + 4 * self.count

    def add(self, seqs: Seqs) -> None:
        """Set the bits of these facts: each listed once, none of them set yet."""
        if not len(seqs):
            return
        top = int(seqs.max())
        if top // 8 + 1 > len(self.bits):
            self.bits = grown(self.bits, capacity(top))
        np.bitwise_or.at(self.bits, seqs >> 3, (0x80 >> (seqs & 7)).astype(np.uint8))
        self.count += len(seqs)
        listed = self._listed
        if (
            listed is not None
            and (not len(listed) or int(seqs.min()) > int(listed[-1]))
            and top <= np.iinfo(listed.dtype).max
        ):  # facts added after every listed one (a catch-up): the list grows at its end
            self._listed = np.concatenate([listed, np.sort(seqs).astype(listed.dtype)])
        else:
            self._listed = None

    def holds(self, seqs: Seqs) -> np.ndarray[Any, np.dtype[np.bool_]]:
        """Whether each fact holds the word."""
        inside = (seqs >> 3) < len(self.bits)
        found = np.zeros(len(seqs), dtype=bool)
        at = seqs[inside]
        found[inside] = (self.bits[at >> 3] >> (7 - (at & 7)).astype(np.uint8)) & 1 == 1
        return found


def keep_within(words: OrderedDict[str, Any], max_bytes: int) -> None:
    """Drop the least recently used (first) of ``words`` (:class:`WordBits` by word) until
    they hold at most ``max_bytes``; the most recent one always stays."""
    held = sum(entry.nbytes for entry in words.values())
    while held > max_bytes and len(words) > 1:
        _, dropped = words.popitem(last=False)
        held -= dropped.nbytes


def holding_all(entries: Sequence[WordBits]) -> Seqs:
    """Sequence numbers (ascending) whose bit is set in every word's bitmap: the rarest
    word's facts, kept where every other word's bit is set."""
    rarest = min(entries, key=lambda entry: entry.count)
    seqs = rarest.seqs
    for entry in entries:
        if entry is not rarest:
            seqs = seqs[entry.holds(seqs)]
    return seqs


def holding_any(entries: Sequence[WordBits]) -> Seqs:
    """Sequence numbers (ascending) whose bit is set in any word's bitmap."""
    either = np.zeros(max(len(entry.bits) for entry in entries), dtype=np.uint8)
    for entry in entries:
        np.bitwise_or(either[: len(entry.bits)], entry.bits, out=either[: len(entry.bits)])
    return _set_bits(either)


def bm25_ranks(
    entries: Sequence[WordBits],
    seqs: Seqs,
    lengths: np.ndarray[Any, np.dtype[np.float64]],
    rows: float,
    average: float,
    *,
    every: bool,
) -> np.ndarray[Any, np.dtype[np.float64]]:
    """FTS5's ``bm25()`` of each fact (lower is better), operation for operation (fts5_aux.c).

    ``seqs`` hold every word (``every``) or any of them; ``lengths`` are their token counts;
    ``rows`` and ``average`` the index's row count and average tokens per row.
    """
    score = np.zeros(len(seqs), dtype=np.float64)
    for entry in entries:
        # FTS5 floors the log at 1e-6; an estimated row count below the count floors too.
        ratio = (rows - entry.count + 0.5) / (entry.count + 0.5)
        idf = math.log(ratio) if ratio > 1.0 else 1e-6
        if every:
            freq = np.ones(len(seqs), dtype=np.float64)
        else:  # 0 where the fact lacks the word: FTS5 adds its 0.0 term too
            freq = entry.holds(seqs).astype(np.float64)
        if entry.repeats:
            repeated = np.fromiter(entry.repeats, dtype=np.int64, count=len(entry.repeats))
            at = np.searchsorted(seqs, repeated)
            hit = at < len(seqs)
            hit[hit] = seqs[at[hit]] == repeated[hit]
            freq[at[hit]] = [entry.repeats[int(s)] for s in repeated[hit]]
        score += idf * ((freq * (_K1 + 1.0)) / (freq + _K1 * (1 - _B + _B * lengths / average)))
    ranks: np.ndarray[Any, np.dtype[np.float64]] = -1.0 * score
    return ranks


def best_first(
    seqs: Seqs, rank: np.ndarray[Any, np.dtype[np.float64]]
) -> Iterator[tuple[int, float]]:
    """``(seq, rank)`` by ascending rank, equal ranks newest (highest seq) first, computed as
    read: the best 256 and everything tied with the last of them first (a partial sort), the
    rest only if it is read. ``seqs`` is ascending."""
    if not len(rank):
        return
    head = min(_HEAD, len(rank))
    kth = float(np.partition(rank, head - 1)[head - 1])
    below = np.flatnonzero(rank < kth)
    below = below[np.lexsort((-seqs[below], rank[below]))]
    tied = np.flatnonzero(rank == kth)[::-1]
    yield from _pairs(seqs, rank, np.concatenate([below, tied]))
    rest = np.flatnonzero(rank > kth)
    if len(rest):
        yield from _pairs(seqs, rank, rest[np.lexsort((-seqs[rest], rank[rest]))])


def head_batches(
    ranked: Iterator[tuple[int, float]], top_k: int
) -> Iterator[list[tuple[int, float]]]:
    """``ranked`` in growing batches, for a store to check against a query's filter until
    ``top_k`` have passed: the first ``top_k + max(top_k, 32)`` rows, then 8 times as many up
    to 8,192; the last batch is the first one shorter than asked (every row was read)."""
    batch = top_k + max(top_k, _BATCH_MARGIN)
    while True:
        rows = list(itertools.islice(ranked, batch))
        yield rows
        if len(rows) < batch:
            return
        batch = min(batch * _BATCH_GROWTH, _BATCH_MAX)


def _set_bits(bitmap: np.ndarray[Any, np.dtype[np.uint8]]) -> Seqs:
    """The positions (ascending) of the set bits, most significant bit first in each byte.

    One byte a bit, scanned once: 0.7 ms for a million facts whatever the count, where
    unpacking only the non-zero bytes and masking their positions took 1.8 ms for a word in
    34,000 facts and 4 ms for one in 110,000.
    """
    seqs: Seqs = np.flatnonzero(np.unpackbits(bitmap).view(bool)).astype(np.int64, copy=False)
    return seqs


def _pairs(
    seqs: Seqs,
    rank: np.ndarray[Any, np.dtype[np.float64]],
    order: np.ndarray[Any, np.dtype[np.intp]],
) -> Iterator[tuple[int, float]]:
    for start in range(0, len(order), _HEAD):
        part = order[start : start + _HEAD]
        yield from zip(seqs[part].tolist(), rank[part].tolist(), strict=True)
