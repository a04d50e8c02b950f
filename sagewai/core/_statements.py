"""The statements of a message: its sentences, long ones cut at their clauses.

Why: a user's long message mixes what they say about themselves ("I've completed 10 problems,
scoring 8/10") with what they ask. A question about one of those statements matches the whole
message weakly (BM25 divides by length; one vector averages every topic of the message), while the
statement alone matches it well. The bridge stores each statement of a long message as a record
of that message's own source, so search finds the message by its best statement.
"""

from __future__ import annotations

import re

__all__ = ["MAX_STATEMENTS", "STATEMENT_MAX_CHARS", "STATEMENT_MIN_CHARS", "statement_texts"]

STATEMENT_MIN_CHARS = 300
"""Messages up to this long are one statement (they get no statement records)."""
STATEMENT_MAX_CHARS = 240
"""A sentence longer than this is cut at its clauses (a comma or semicolon before a conjunction,
else any comma or semicolon) into parts of about this length."""
STATEMENT_SHORT_CHARS = 40
"""A part shorter than this joins the part before it (a clause such as "thanks" says nothing)."""
MAX_STATEMENTS = 12
"""Most statements of one message (the first ones: in a long message pasted text follows the
words of its author)."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_CLAUSE = re.compile(
    r"[,;:]\s+(?=(?:and|but|so|because|since|while|which|although|though|or|as|where|when|"
    r"considering|especially|like|including|then)\b)|;\s+|\s+-\s+",
    re.IGNORECASE,
)
_COMMA = re.compile(r",\s+")


def _cut(sentence: str, pattern: re.Pattern[str], limit: int) -> list[str]:
    """``sentence`` cut at ``pattern``'s matches into parts of at most about ``limit``."""
    parts: list[str] = []
    start = 0
    last = 0
    for match in pattern.finditer(sentence):
        if match.start() - start > limit and last > start:
            parts.append(sentence[start:last].strip())
            start = last
        last = match.end()
    if len(sentence) - start > limit and last > start:
        parts.append(sentence[start:last].strip())
        start = last
    parts.append(sentence[start:].strip())
    return [p for p in parts if p]


def statement_texts(
    text: str,
    *,
    min_chars: int = STATEMENT_MIN_CHARS,
    max_chars: int = STATEMENT_MAX_CHARS,
    limit: int = MAX_STATEMENTS,
) -> list[str]:
    """The statements of ``text``: none when it is short or one statement, else its sentences
    (long ones cut at clauses), in order, at most ``limit``.

    Example:
        >>> statement_texts("Thanks!")
        []
        >>> message = ("I'm studying triangles and I've completed 10 classification problems, "
        ...            "scoring 8/10. " * 3) + "Can you help me apply this to real-world problems?"
        >>> statement_texts(message, min_chars=100)[-1]
        'Can you help me apply this to real-world problems?'
    """
    text = text.strip()
    if len(text) <= min_chars:
        return []
    parts: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        sentence = " ".join(sentence.split())
        if not sentence:
            continue
        if len(sentence) <= max_chars:
            pieces = [sentence]
        else:
            pieces = [
                piece
                for clause in _cut(sentence, _CLAUSE, max_chars)
                for piece in (
                    _cut(clause, _COMMA, max_chars) if len(clause) > 2 * max_chars else [clause]
                )
            ]
        for piece in pieces:
            short = min(len(piece), len(parts[-1]) if parts else 0) < STATEMENT_SHORT_CHARS
            if parts and short:
                parts[-1] = f"{parts[-1]} {piece}"
            else:
                parts.append(piece)
        if len(parts) > limit:
            break
    parts = parts[:limit]
    return parts if len(parts) > 1 else []
