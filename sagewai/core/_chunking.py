"""Split plain text documents into overlapping, sentence-aligned chunks for retrieval."""

from __future__ import annotations

import re

__all__ = ["chunk_text"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n{2,}")


def chunk_text(text: str, *, max_chars: int = 800, overlap_sentences: int = 1) -> list[str]:
    """Split ``text`` into chunks of at most ``max_chars``, cut at sentence boundaries.

    A sentence longer than ``max_chars`` is cut hard. Consecutive chunks share
    ``overlap_sentences`` sentences so a fact spanning a boundary is found from either side.

    Example:
        >>> chunk_text("First point. Second point. Third.", max_chars=26, overlap_sentences=0)
        ['First point. Second point.', 'Third.']
    """
    if max_chars < 20:
        raise ValueError("max_chars must be at least 20")
    sentences: list[str] = []
    for piece in _SENTENCE_END.split(text):
        piece = piece.strip()
        while len(piece) > max_chars:
            sentences.append(piece[:max_chars])
            piece = piece[max_chars:].strip()
        if piece:
            sentences.append(piece)
    chunks: list[str] = []
    current: list[str] = []
    for sentence in sentences:
        candidate = " ".join([*current, sentence])
        if current and len(candidate) > max_chars:
            chunks.append(" ".join(current))
            kept = current[-overlap_sentences:] if overlap_sentences else []
            current = (
                [*kept, sentence] if len(" ".join([*kept, sentence])) <= max_chars else [sentence]
            )
        else:
            current.append(sentence)
    if current:
        chunks.append(" ".join(current))
    return chunks
