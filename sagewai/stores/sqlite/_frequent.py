"""Frequent words of a large embedded store's keyword index, kept in memory.

In a store of a million facts a word such as "birthday" sits in a tenth of them. FTS5 answers a
query made only of such words by walking each word's whole posting list twice: ``bm25()``
counts the word's documents, and the AND intersects the lists. "When is Aiko's birthday"
(33,000 and 110,000 facts) cost 20 to 50 ms that way. Here each frequent word's facts are read
from the index once, into a bitmap over the facts' sequence numbers with the few facts that
hold the word more than once, and the query becomes an AND of bitmaps and a BM25 computed as
FTS5's ``bm25()`` computes it (same constants, same document counts, same token lengths, same
floating-point operations in the same order), so the ranking is the index's own.

The same copies answer a query of rarer words with many matches in all (an OR of the words:
at 100,000 facts "Greta", "budget" and "Berlin" match 7,600 facts, which FTS5 ranked and
sorted in 17 to 25 ms): an OR of bitmaps, each word's term counted where a fact holds it.

The copy is exact, not a sample:

- each word covers the facts up to a sequence number; facts added since (by any process) are
  read from the index before the word is used, a query on the few rows above that number;
- rewriting a fact's text or deleting a fact bumps the store's keyword epoch (triggers of the
  migration ``0003``, so every writer bumps it); a changed epoch drops every word, and each is
  read again when next used.

The bitmaps and the BM25 arithmetic are shared with the PostgreSQL store's copy
(:mod:`sagewai.stores.base._word_bitmaps`); reading FTS5's index and keeping the copy exact are
this module's part.

The copies are saved for the next process (the tables ``keyword_copies`` and
``keyword_lengths``, migration ``0004``): a word read from the index is saved with the keyword
epoch and the sequence number it covers, and the facts' token counts, once read for the whole
index, are saved likewise. A later process, a restart, loads them in one row each and reads only
the facts added since; a copy of another epoch is never used, and deleting a fact or rewriting
its text empties both tables. A save that would wait for another writer is skipped (the next
process reads the word again).

Memory: a bitmap is an eighth of a byte per fact (125 KB a word at a million facts), the list
of a word's facts four bytes a fact holding it (made when a query first needs it), and the
token lengths two bytes a fact; words are kept up to
:data:`~sagewai.stores.base._word_bitmaps.MAX_BYTES` in all, the least recently used dropped
first.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

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

__all__ = ["FrequentWords", "index_forms", "index_totals", "within_a_tenth"]

_CATCH_UP_MAX = 20_000
"""A saved copy more facts behind than this is read afresh from the index instead."""
_ALL_LENGTHS_FROM = 20_000
"""Past this many facts of unknown length, every length is read at once (one table scan)."""
_LENGTH_CAP = 65_535
_INSTANCES = "sagewai_fts_instances"
_TOKEN = re.compile(r"[^\W_]+")


def _varint(blob: bytes, at: int = 0) -> tuple[int, int]:
    """SQLite's varint at ``blob[at:]`` (FTS5 stores its counts so): (value, next offset)."""
    value = 0
    for i in range(8):
        byte = blob[at + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    return (value << 8) | blob[at + 8], at + 9


@dataclass
class _Word(WordBits):
    upto: int = 0
    """Facts up to this sequence number are in ``bits``."""


class FrequentWords:
    """The frequent words of one SQLite keyword index, for the connection that owns them.

    Not thread-safe: the store calls it on its worker thread only.
    """

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self._max_bytes = max_bytes
        self._words: OrderedDict[str, _Word] = OrderedDict()
        self._epoch: int | None = None
        self._lengths = np.zeros(0, dtype=np.uint16)
        self._known = np.zeros(0, dtype=bool)
        self._lengths_loaded = False
        """Whether the saved token counts were looked for since the epoch was last read."""
        self._saved: dict[str, tuple[int, int]] | None = None
        """``word -> (upto, facts)`` of the saved copies, read once per epoch (saved_counts)."""

    def __len__(self) -> int:
        return len(self._words)

    def ranked(
        self, db: sqlite3.Connection, words: Sequence[str], *, every: bool = True
    ) -> Iterator[tuple[int, float]]:
        """The facts holding every word (``every``) or any of them, as ``(seq, bm25)`` best
        first (bm25 lower is better).

        What FTS5's ``MATCH 'w1 AND w2 ...' ORDER BY bm25(...)`` (``OR`` when not ``every``)
        returns, with equal scores newest first (facts holding the same words with the same
        length tie, thousands of them for a single frequent word: an order by id would have
        to look every one of them up). The order is computed as it is read.
        """
        self._check_epoch(db)
        last = _last_seq(db)
        entries = [self._word(db, word, last) for word in words]
        rows, tokens = self._totals(db)
        seqs = holding_all(entries) if every else holding_any(entries)
        if not len(seqs):
            return
        lengths = self._lengths_of(db, seqs)
        yield from best_first(
            seqs, bm25_ranks(entries, seqs, lengths, rows, tokens / rows, every=every)
        )

    def prepare(self, db: sqlite3.Connection, words: Sequence[str]) -> int:
        """Save a current copy of each of ``words``, and every fact's token count, for the
        processes to come; return how many words were saved.

        What a search saves as it meets a word, done ahead for every frequent word after a
        bulk load, so the first process after it loads each word in one row instead of reading
        its facts from the index. A word whose saved copy is current is left as it is. Each
        word is saved in a transaction of its own, so writers wait at most one word.
        """
        self._check_epoch(db)
        last = _last_seq(db)
        if not last:
            return 0
        saved = 0
        for word in words:
            row = db.execute(
                "SELECT upto FROM keyword_copies WHERE word = ?1 AND epoch = ?2",
                (word, self._epoch),
            ).fetchone()
            if row is not None and row[0] >= last:
                continue
            entry = self._read_word(db, word, last)
            saved += self._save_word(db, word, entry, wait=True)
        row = db.execute(
            "SELECT upto FROM keyword_lengths WHERE id = 0 AND epoch = ?1", (self._epoch,)
        ).fetchone()
        if row is None or row[0] < last:
            self._save_lengths(db, last, wait=True)
        return saved

    def saved_counts(self, db: sqlite3.Connection, words: Sequence[str]) -> dict[str, int]:
        """How many facts hold each of ``words`` that has a copy of this epoch (in memory, or
        saved), unless the copy misses more than a tenth of the facts written since.

        A count from the index (``facts_vocab``) walks the word's whole posting list: 3 to 10
        ms for a word in tens of thousands of facts at a million, paid by the first query of
        each such word in a process. The copies of :meth:`prepare` hold the count already; their
        counts are read once per keyword epoch, in one statement. Facts added since a copy are
        not counted: a count may be short by the tenth a cached count may be stale by
        (:func:`within_a_tenth`).
        """
        self._check_epoch(db)
        if self._saved is None:
            self._saved = {
                str(word): (int(upto), int(facts))
                for word, upto, facts in db.execute(
                    "SELECT word, upto, facts FROM keyword_copies WHERE epoch = ?1",
                    (self._epoch,),
                )
            }
        copies = {
            word: (entry.upto, entry.count) if entry else self._saved.get(word, (0, 0))
            for word in words
            if (entry := self._words.get(word)) or word in self._saved
        }
        if not copies:  # rare words: no copy, nothing more to read
            return {}
        last = _last_seq(db)
        return {word: count for word, (upto, count) in copies.items() if within_a_tenth(last, upto)}

    # -- keeping the copy exact ----------------------------------------------------------

    def _check_epoch(self, db: sqlite3.Connection) -> None:
        (epoch,) = db.execute("SELECT epoch FROM keyword_epoch").fetchone()
        if epoch != self._epoch:
            self._words.clear()
            self._saved = None
            self._lengths = np.zeros(0, dtype=np.uint16)
            self._known = np.zeros(0, dtype=bool)
            self._lengths_loaded = False
            self._epoch = int(epoch)

    def _word(self, db: sqlite3.Connection, word: str, last: int) -> _Word:
        entry = self._words.get(word)
        if entry is None:
            entry = self._load_word(db, word, last)
            if entry is None:
                entry = self._read_word(db, word, last)
                self._save_word(db, word, entry)
            self._words[word] = entry
            keep_within(self._words, self._max_bytes)
        else:
            self._words.move_to_end(word)
            if last > entry.upto:
                self._catch_up(db, word, entry, last)
        return entry

    def _load_word(self, db: sqlite3.Connection, word: str, last: int) -> _Word | None:
        """The word's saved copy of this epoch, with the facts added since; ``None`` when there
        is none, or when more than :data:`_CATCH_UP_MAX` facts were added since."""
        row = db.execute(
            "SELECT upto, facts, bits, repeated, counts FROM keyword_copies"
            " WHERE word = ?1 AND epoch = ?2",
            (word, self._epoch),
        ).fetchone()
        if row is None or last - row[0] > _CATCH_UP_MAX:
            return None
        upto, facts, bits, repeated, counts = row
        entry = _Word(np.frombuffer(bits, dtype=np.uint8).copy(), count=facts, upto=upto)
        seqs = np.frombuffer(repeated, dtype="<i8").tolist()
        entry.repeats = dict(zip(seqs, np.frombuffer(counts, dtype="<i4").tolist(), strict=True))
        if last > entry.upto:
            self._catch_up(db, word, entry, last)
        return entry

    def _save_word(
        self, db: sqlite3.Connection, word: str, entry: _Word, *, wait: bool = False
    ) -> bool:
        repeated = np.fromiter(entry.repeats, dtype="<i8", count=len(entry.repeats))
        counts = np.fromiter(entry.repeats.values(), dtype="<i4", count=len(entry.repeats))
        saved = _save(
            db,
            self._epoch,
            "INSERT OR REPLACE INTO keyword_copies"
            " (word, epoch, upto, facts, bits, repeated, counts)"
            " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            (
                word,
                self._epoch,
                entry.upto,
                entry.count,
                entry.bits.tobytes(),
                repeated.tobytes(),
                counts.tobytes(),
            ),
            wait=wait,
        )
        if saved and self._saved is not None:  # the counts read for saved_counts stay current
            self._saved[word] = (entry.upto, entry.count)
        return saved

    def _read_word(self, db: sqlite3.Connection, word: str, last: int) -> _Word:
        """The word's facts up to ``last`` from one pass over its occurrences (FTS5's
        ``instance`` vocabulary, ordered by fact): a fact listed twice holds it twice. A third
        of the time of a MATCH for the facts plus a GROUP BY for the repeats."""
        db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_INSTANCES}"
            " USING fts5vocab(main, facts_fts, 'instance')"
        )
        (listed,) = db.execute(
            f"SELECT group_concat(doc) FROM temp.{_INSTANCES} WHERE term = ?1 AND doc <= ?2",
            (word, last),
        ).fetchone()
        seqs, counts = np.unique(_parse_ids(listed), return_counts=True)
        entry = _Word(np.zeros(capacity(last), dtype=np.uint8), upto=last)
        entry.add(seqs)
        repeated = counts > 1
        entry.repeats = dict(zip(seqs[repeated].tolist(), counts[repeated].tolist(), strict=True))
        return entry

    def _catch_up(self, db: sqlite3.Connection, word: str, entry: _Word, last: int) -> None:
        """Add the facts written since the word was read (their text is read for repeats)."""
        phrase = '"' + word.replace('"', '""') + '"'
        rows = db.execute(
            "SELECT f.seq, f.content FROM facts_fts JOIN facts AS f ON f.seq = facts_fts.rowid"
            " WHERE facts_fts MATCH ?1 AND facts_fts.rowid > ?2 AND facts_fts.rowid <= ?3",
            (phrase, entry.upto, last),
        ).fetchall()
        entry.add(np.asarray([row[0] for row in rows], dtype=np.int64))
        for seq, content in rows:
            occurrences = _tokens(content).count(word)
            if occurrences > 1:
                entry.repeats[int(seq)] = occurrences
        entry.upto = last

    def _load_lengths(self, db: sqlite3.Connection) -> None:
        """The saved token counts of this epoch (facts up to the saved ``upto``), if any."""
        self._lengths_loaded = True
        row = db.execute(
            "SELECT upto, lengths FROM keyword_lengths WHERE id = 0 AND epoch = ?1",
            (self._epoch,),
        ).fetchone()
        if row is None:
            return
        upto, saved = row[0], np.frombuffer(row[1], dtype="<u2")
        if len(saved) != upto + 1:
            return
        self._lengths = grown(self._lengths, capacity(upto) * 8)
        self._known = grown(self._known, len(self._lengths))
        self._lengths[: upto + 1] = saved
        # Saved lengths are those of facts that existed (a gap is a seq no fact holds).
        self._known[: upto + 1] = True

    def _totals(self, db: sqlite3.Connection) -> tuple[int, int]:
        """FTS5's row count and token total, as ``bm25()`` reads them."""
        rows, tokens = index_totals(db)
        return max(rows, 1), tokens

    def _lengths_of(
        self, db: sqlite3.Connection, seqs: Seqs
    ) -> np.ndarray[Any, np.dtype[np.float64]]:
        """Token counts of these facts (FTS5's docsize), read once and kept."""
        top = int(seqs[-1])
        if not self._lengths_loaded:
            self._load_lengths(db)
        self._make_room(top)
        unknown = seqs[~self._known[seqs]]
        if len(unknown) > _ALL_LENGTHS_FROM:
            self._save_lengths(db, top)
        elif len(unknown):
            listed = "[" + ",".join(map(str, unknown.tolist())) + "]"
            self._read_lengths(db, "id IN (SELECT value FROM json_each(?1))", listed)
        found: np.ndarray[Any, np.dtype[np.float64]] = self._lengths[seqs].astype(np.float64)
        return found

    def _make_room(self, top: int) -> None:
        if top >= len(self._lengths):
            self._lengths = grown(self._lengths, capacity(top) * 8)
            self._known = grown(self._known, len(self._lengths))

    def _read_lengths(self, db: sqlite3.Connection, where: str, bound: int | str) -> None:
        # One column: its size is the blob's first varint, one byte below 128 tokens.
        read = [
            (seq, size[0] if size[0] < 0x80 else _varint(size)[0])
            for seq, size in db.execute(
                f"SELECT id, sz FROM facts_fts_docsize WHERE {where}", (bound,)
            )
            if size
        ]
        at = np.asarray([seq for seq, _ in read], dtype=np.int64)
        lengths = np.asarray([length for _, length in read], dtype=np.int64)
        self._lengths[at] = np.minimum(lengths, _LENGTH_CAP)
        self._known[at] = True

    def _save_lengths(self, db: sqlite3.Connection, top: int, *, wait: bool = False) -> bool:
        """Read every fact's token count up to ``top`` (one table scan) and save them."""
        self._make_room(top)
        self._read_lengths(db, "id <= ?1", top)
        return _save(
            db,
            self._epoch,
            "INSERT OR REPLACE INTO keyword_lengths (id, epoch, upto, lengths)"
            " VALUES (0, ?1, ?2, ?3)",
            (self._epoch, top, self._lengths[: top + 1].astype("<u2").tobytes()),
            wait=wait,
        )


def _save(
    db: sqlite3.Connection,
    epoch: int | None,
    sql: str,
    values: tuple[Any, ...],
    *,
    wait: bool = False,
) -> bool:
    """Write a saved copy read in keyword ``epoch``; return whether it was written.

    A search saves only if the write lock is free at once, and leaves it otherwise: it never
    waits for another writer to save one, nor fails because it cannot (a read-only file); the
    next process reads the word again. ``wait`` (preparing the index after a load) waits for
    the lock as any write does. A copy whose epoch has passed (a fact was deleted or rewritten
    since it was read) is not saved."""
    (timeout,) = db.execute("PRAGMA busy_timeout").fetchone()
    if not wait:
        db.execute("PRAGMA busy_timeout = 0")
    written = False
    try:
        db.execute("BEGIN IMMEDIATE")
        if db.execute("SELECT epoch FROM keyword_epoch").fetchone()[0] == epoch:
            db.execute(sql, values)
            written = True
        db.execute("COMMIT")
    except sqlite3.OperationalError:  # locked by another writer, or read-only
        written = False
    finally:
        if db.in_transaction:
            db.execute("ROLLBACK")
        db.execute(f"PRAGMA busy_timeout = {int(timeout)}")
    return written


def within_a_tenth(now: int, then: int) -> bool:
    """Whether a count taken when the store held ``then`` (facts, or its last sequence number)
    is still trusted with ``now``: the store has grown or shrunk by less than a tenth.

    Example:
        >>> within_a_tenth(16_000, 15_000), within_a_tenth(18_000, 15_000)
        (True, False)
    """
    return 10 * abs(now - then) < then


def _last_seq(db: sqlite3.Connection) -> int:
    """The highest sequence number in the keyword index (0 when it is empty)."""
    return int(db.execute("SELECT coalesce(max(rowid), 0) FROM facts_fts_docsize").fetchone()[0])


def index_totals(db: sqlite3.Connection) -> tuple[int, int]:
    """The keyword index's row count (one row per fact) and token total, from FTS5's averages
    record: one small read, exact after every commit of any process."""
    row = db.execute("SELECT block FROM facts_fts_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0, 0
    rows, at = _varint(row[0])
    tokens, _ = _varint(row[0], at)
    return rows, tokens


def _parse_ids(listed: str | None) -> Seqs:
    if not listed:
        return np.zeros(0, dtype=np.int64)
    return np.fromstring(listed, dtype=np.int64, sep=",")


_TOKENIZER = "unicode61 remove_diacritics 0"
"""The keyword index's tokenizer (migration ``0001``): the copy splits and folds text as it does."""
_FOLD = threading.local()


def index_forms(terms: Sequence[str]) -> list[str]:
    """The words of ``terms`` as the keyword index stores them, each once, in order.

    :func:`~sagewai.core._text.keyword_terms` lower-cases with Python; FTS5's ``unicode61``
    folds case its own way outside ASCII (a final sigma becomes a sigma), so a word looked up in
    the index's vocabulary by its Python form would be missing there, and a large store would
    leave it out of the query. ASCII words are the same in both.

    Example:
        >>> index_forms(["kyoto", "σίσυφος", "kyoto"])
        ['kyoto', 'σίσυφοσ']
    """
    out: list[str] = []
    for term in terms:
        for form in (term,) if term.isascii() else _fts5_forms(term):
            if form not in out:
                out.append(form)
    return out


def _tokens(text: str) -> list[str]:
    """FTS5's ``unicode61`` tokens of ``text`` (letters and digits, case folded), repeats kept."""
    if text.isascii():
        return _TOKEN.findall(text.lower())
    return list(_fts5_tokens(text))


@functools.lru_cache(maxsize=65_536)
def _fts5_forms(term: str) -> tuple[str, ...]:
    return _fts5_tokens(term)


def _fts5_tokens(text: str) -> tuple[str, ...]:
    """``text`` split by an FTS5 table with the index's tokenizer (one in memory per thread)."""
    db: sqlite3.Connection | None = getattr(_FOLD, "db", None)
    if db is None:
        db = sqlite3.connect(":memory:")
        db.execute(f"CREATE VIRTUAL TABLE fold USING fts5(text, tokenize = '{_TOKENIZER}')")
        db.execute("CREATE VIRTUAL TABLE fold_instances USING fts5vocab(fold, 'instance')")
        _FOLD.db = db
    db.execute("INSERT INTO fold (rowid, text) VALUES (1, ?)", (text,))
    try:
        rows = db.execute('SELECT term FROM fold_instances ORDER BY "offset"').fetchall()
    finally:
        db.execute("DELETE FROM fold")
    return tuple(row[0] for row in rows)
