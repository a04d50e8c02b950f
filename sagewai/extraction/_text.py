"""Preparing a message for the rules: clean it, cap it, cut it into sentences and clauses.

Cleaning maps one character to one character (control characters and invisible marks become
spaces, curly quotes become straight ones, lone surrogates from badly decoded bytes become
U+FFFD), so every offset in the cleaned text is an offset in the original message.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = [
    "MAX_SENTENCE_CHARS",
    "Span",
    "clause_bounds",
    "clean_text",
    "looks_binary",
    "split_sentences",
]

MAX_SENTENCE_CHARS = 1_000
"""Longer runs without a sentence end are cut into pieces of at most this size (at a space)."""

_KEEP = {"\t", "\n"}
_TRANSLATION: dict[int, str] = {
    code: " " for code in (*range(0x20), *range(0x7F, 0xA0)) if chr(code) not in _KEEP
}
_TRANSLATION.update(
    {
        0x200B: " ",  # zero-width space
        0x200C: " ",
        0x200D: " ",
        0x200E: " ",
        0x200F: " ",
        0x2028: "\n",
        0x2029: "\n",
        0x2060: " ",
        0xFEFF: " ",
        0x00A0: " ",
        0x2018: "'",
        0x2019: "'",
        0x201B: "'",
        0x02BC: "'",
        0x201C: '"',
        0x201D: '"',
        0x201E: '"',
        0x2032: "'",
    }
)
_SURROGATE = re.compile("[\ud800-\udfff]")
_BOUNDARY = re.compile(r"[.!?]+[\"')\]]*(?=\s|$)|\n+|[!?]+(?=\S)")
_ABBREVIATIONS = frozenset(
    {
        "st", "dr", "mr", "mrs", "ms", "prof", "sr", "jr", "vs", "etc", "e.g", "i.e", "inc",
        "ltd", "co", "no", "approx", "dept", "mt", "ft", "u.s", "a.m", "p.m", "jan", "feb",
        "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    }
)  # fmt: skip
_CLAUSE = re.compile(
    r",\s+(?:but|and|so|although|though|whereas|while)\s+|;\s*|\s+(?:but|whereas)\s+"
    r"|,?\s+and\s+(?=(?:i|we|my|our|now)\b)|\s+-{1,2}\s+|:\s+(?=[A-Z])",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Span:
    """A piece of the cleaned message: ``text == message[start:end]``."""

    start: int
    end: int
    text: str


_DELETE_NOISE = dict.fromkeys(
    code for code in (*range(0x20), *range(0x7F, 0xA0), 0xFFFD) if chr(code) not in "\t\n\r"
)


def looks_binary(text: str, max_share: float) -> bool:
    """True when over ``max_share`` of ``text`` is control, replacement or surrogate characters.

    Such input is decoded binary data, not something a person said; reading it for facts only
    finds noise.

    Example:
        >>> looks_binary("I like tea", 0.1), looks_binary(chr(0) * 3 + " ab", 0.1)
        (False, True)
    """
    if not text:
        return False
    noise = len(text) - len(text.translate(_DELETE_NOISE))
    if noise / len(text) > max_share:
        return True
    surrogates = len(_SURROGATE.findall(text)) if not text.isascii() else 0
    return (noise + surrogates) / len(text) > max_share


def clean_text(text: str, max_chars: int) -> str:
    """Cap ``text`` at ``max_chars`` and neutralise characters that break patterns, 1 for 1.

    Example:
        >>> clean_text("I\\u2019m \\x00here", 100)
        "I'm  here"
    """
    capped = text[:max_chars]
    if _SURROGATE.search(capped):
        capped = _SURROGATE.sub("\ufffd", capped)
    cleaned = capped.translate(_TRANSLATION)
    if not cleaned.isascii():
        # Compatibility forms (full-width letters, ligatures) only when they keep the length.
        normalized = unicodedata.normalize("NFKC", cleaned)
        if len(normalized) == len(cleaned):
            cleaned = normalized
    return cleaned


def _pieces(text: str, start: int, end: int) -> list[Span]:
    """Trimmed spans of ``text[start:end]``, cut at spaces into runs of MAX_SENTENCE_CHARS."""
    spans: list[Span] = []
    while start < end:
        chunk = text[start:end]
        stripped = chunk.lstrip()
        start += len(chunk) - len(stripped)
        if start >= end:
            break
        stop = end
        if stop - start > MAX_SENTENCE_CHARS:
            cut = text.rfind(" ", start, start + MAX_SENTENCE_CHARS)
            stop = cut if cut > start else start + MAX_SENTENCE_CHARS
        piece = text[start:stop].rstrip()
        if piece:
            spans.append(Span(start, start + len(piece), piece))
        start = stop
    return spans


def split_sentences(text: str) -> list[Span]:
    """Sentences of a cleaned message, with their offsets.

    A sentence ends at ``.``, ``!`` or ``?`` followed by a space or the end, or at a line break.
    Dots inside values (``v1.2.3``, ``db.internal``) and after common abbreviations ("St.",
    "e.g.") do not end a sentence.

    Example:
        >>> [s.text for s in split_sentences("I'm a nurse at St. Mary's. Do you like tea?")]
        ["I'm a nurse at St. Mary's.", 'Do you like tea?']
    """
    spans: list[Span] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        end = match.end()
        if match.group(0).startswith("."):
            before = text[start : match.start()]
            word = before[before.rfind(" ") + 1 :].lower().lstrip("(\"'\t\n")
            if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha() and word != "i"):
                continue
        _add(spans, text, start, end)
        start = end
    _add(spans, text, start, len(text))
    return spans


def _add(spans: list[Span], text: str, start: int, end: int) -> None:
    """Append ``text[start:end]`` trimmed; long runs go through :func:`_pieces`."""
    if end - start > MAX_SENTENCE_CHARS:
        spans.extend(_pieces(text, start, end))
        return
    chunk = text[start:end]
    stripped = chunk.strip()
    if stripped:
        offset = start + len(chunk) - len(chunk.lstrip())
        spans.append(Span(offset, offset + len(stripped), stripped))


def clause_bounds(sentence: str, start: int, end: int) -> tuple[int, int]:
    """The clause of ``sentence`` around ``[start, end)``: cut at ", but", ";", " and I" ...

    Example:
        >>> s = "I'm from Lagos but I live in Manchester now."
        >>> a, b = clause_bounds(s, 19, 29)
        >>> s[a:b]
        'I live in Manchester now.'
    """
    left, right = 0, len(sentence)
    for match in _CLAUSE.finditer(sentence):
        if match.end() <= start:
            left = match.end()
        elif match.start() >= end:
            right = match.start()
            break
    return left, right
