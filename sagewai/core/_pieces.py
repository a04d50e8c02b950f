"""Long records are indexed in pieces: one vector per piece beside the record's own vector.

Why: a sentence encoder reads a few hundred word pieces (MiniLM: 256). A long message (BEAM holds
messages of 40,000 characters and more) squeezed into one vector says little about any one of its
parts, so a question about its last paragraph would never find it on the dense side. Each piece
of a long record gets its own vector, under the id ``<record id>\\x1f<n>`` with the record's payload
(so every filter applies to it as to the record); a search maps a piece's hit back to its record
and scores the record by its best piece. The record's own vector is the mean of its pieces.

The pieces are a pure function of the content, so the engine can always name a record's piece
ids again (to delete them or refresh their payload) without storing them.
"""

from __future__ import annotations

from typing import Final

from sagewai.core._chunking import chunk_text

__all__ = ["MAX_PIECES", "PIECE_CHARS", "is_piece", "piece_ids", "piece_texts", "record_id"]

PIECE_CHARS: Final = 1_000
"""Characters per piece: about 200-250 MiniLM word pieces of English, inside its 256."""
MAX_PIECES: Final = 128
"""At most this many pieces per record, spread evenly over it (a 10 MB text costs as much to
embed as a 128,000-character one)."""
_SEPARATOR: Final = "\x1f"
"""A control character: identifiers never hold one, so a piece id never equals a record id."""


def piece_texts(content: str) -> list[str]:
    """The pieces of ``content`` that get their own vectors; none when it fits in one.

    Example:
        >>> piece_texts("short")
        []
        >>> len(piece_texts("A sentence of some length. " * 200)) > 1
        True
    """
    if len(content) <= int(PIECE_CHARS * 1.5):
        return []
    pieces = chunk_text(content, max_chars=PIECE_CHARS, overlap_sentences=1)
    if len(pieces) <= MAX_PIECES:
        return pieces
    step = (len(pieces) - 1) / (MAX_PIECES - 1)
    return [pieces[round(i * step)] for i in range(MAX_PIECES)]


def piece_ids(record: str, content: str) -> list[str]:
    """The vector ids of the pieces of record ``record`` with this ``content``."""
    return [f"{record}{_SEPARATOR}{n}" for n in range(len(piece_texts(content)))]


def record_id(vector_id: str) -> str:
    """The record a vector id belongs to (a piece's record, or the id itself).

    Example:
        >>> record_id(piece_ids("3f2a", "A sentence of some length. " * 200)[1]), record_id("3f2a")
        ('3f2a', '3f2a')
    """
    return vector_id.split(_SEPARATOR, 1)[0]


def is_piece(vector_id: str) -> bool:
    """True for the vector id of a piece of a long record, not of a record itself.

    Example:
        >>> is_piece(piece_ids("3f2a", "A sentence of some length. " * 200)[1]), is_piece("3f2a")
        (True, False)
    """
    return _SEPARATOR in vector_id
