"""Finding exact values in text: the strings memory must keep character for character.

UUIDs, URLs and connection strings, e-mails, IP addresses, file paths, dates and times,
versions, amounts with a currency or a unit, phone numbers, ticket and order ids, API-key-like
identifiers, commit hashes, host names, and (optionally) plain numbers. A fact that holds one
keeps it verbatim in its content and lists it in ``exact_values``, and consolidation never
merges two texts that differ in one.

Patterns are tried from the most specific to the least; a span claimed by one is masked for
the rest, so a URL's host is not found again as a domain. Every quantifier is bounded and every
pattern anchors its start with a look-behind, so a scan is linear in the text length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ExactValue", "find_exact_value_spans", "find_exact_values"]

_TRAILING = ".,;:!?)]}'\""


@dataclass(frozen=True, slots=True)
class ExactValue:
    """One exact value and where it is in the text (``text[start:end] == value``)."""

    value: str
    kind: str
    start: int
    end: int


def _compile(pattern: str, *, ignore_case: bool = False) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE if ignore_case else 0)


_UNITS = (
    r"kb|mb|gb|tb|pb|kib|mib|gib|tib|bytes|ms|µs|ns|sec|secs|kg|mg|lbs?|km|cm|mm|mi|ft|"
    r"mbps|gbps|kbps|ghz|mhz|kwh|kw|°c|°f|rps|qps|tokens|usd|eur|gbp|chf|jpy|dollars|euros|"
    r"pounds|cores|vcpus?|rpm"
)

# (kind, needle that must be in the text for the pattern to be worth running, compiled pattern)
_PATTERNS: tuple[tuple[str, str | None, re.Pattern[str]], ...] = (
    ("url", "://", _compile(r"(?<![\w+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s\"'<>]{1,2000}")),
    ("email", "@", _compile(r"(?<![\w.+\-])[\w.+\-]{1,64}@[\w\-]{1,63}(?:\.[\w\-]{1,63}){1,8}")),
    (
        "uuid",
        "-",
        _compile(
            r"(?<![\w\-])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}"
            r"-[0-9a-fA-F]{12}(?![\w\-])"
        ),
    ),
    (
        "ip",
        ".",
        _compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?(?:/\d{1,2})?(?![\w.]\w)"),
    ),
    ("path", "\\", _compile(r"(?<![\w\\])[A-Za-z]:\\(?:[\w.\-]{1,128}\\?){1,32}")),
    ("path", "/", _compile(r"(?<![\w/.~\-])(?:~|\.{1,2})?(?:/[\w.\-@+]{1,128}){2,32}/?")),
    ("path", "~/", _compile(r"(?<![\w/])~/[\w.\-@+]{1,128}(?:/[\w.\-@+]{1,128}){0,31}/?")),
    (
        "datetime",
        None,
        _compile(
            r"(?<![\w\-])\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?"
            r"(?:Z|[+\-]\d{2}:?\d{2})?)?(?![\w\-])"
        ),
    ),
    (
        "time",
        ":",
        _compile(
            r"(?<![\w:.])\d{1,2}:\d{2}(?::\d{2})?(?:\s?(?:UTC|GMT|Z|CET|CEST|BST|PST|PDT|EST|EDT|"
            r"[ap]\.?m\.?)(?![\w]))?(?![\w:])",
            ignore_case=True,
        ),
    ),
    ("phone", "+", _compile(r"(?<![\w+])\+\d{1,3}(?:[ \-.]?\(?\d{1,5}\)?){2,6}(?![\w])")),
    (
        "amount",
        None,
        _compile(
            r"(?<![\w])[$€£¥₹]\s?\d[\d,]{0,20}(?:\.\d{1,4})?(?:\s?(?:k|m|bn|million|billion|"
            r"thousand)(?![\w]))?",
            ignore_case=True,
        ),
    ),
    (
        "quantity",
        None,
        _compile(
            rf"(?<![\w.])\d[\d,]{{0,20}}(?:\.\d{{1,6}})?\s?(?:%|(?:{_UNITS})(?![\w]))",
            ignore_case=True,
        ),
    ),
    (
        "version",
        ".",
        _compile(r"(?<![\w.\-])v?\d{1,6}(?:\.\d{1,6}){1,3}(?:-[0-9A-Za-z.]{1,32})?(?![\w]|\.\d)"),
    ),
    ("ticket", "-", _compile(r"(?<![\w\-])[A-Z][A-Z0-9]{1,9}-\d{1,10}(?![\w\-])")),
    ("id", "#", _compile(r"(?<![\w#])#[A-Za-z0-9][A-Za-z0-9_\-]{0,40}(?![\w])")),
    (
        "id",
        None,
        _compile(r"(?<![\w\-.])[A-Za-z0-9]{1,64}(?:[_\-][A-Za-z0-9]{1,64}){1,10}(?![\w\-])"),
    ),
    ("hash", None, _compile(r"(?<![\w\-])[0-9a-f]{7,64}(?![\w\-])")),
    (
        "host",
        ".",
        _compile(
            r"(?<![\w@.\-/])(?:[A-Za-z0-9\-]{1,63}\.){1,10}(?:com|org|net|io|dev|ai|app|co|edu|gov|"
            r"de|uk|fr|nl|es|it|eu|ca|au|jp|ch|se|info|biz|cloud|tech|local|internal|lan|corp)"
            r"(?![\w\-])"
        ),
    ),
)
_NEED_DIGIT = frozenset(
    {"uuid", "ip", "datetime", "time", "phone", "amount", "quantity", "version", "ticket", "id",
     "hash"}
)  # fmt: skip
_TLDS = (
    "com", "org", "net", "io", "dev", "ai", "app", "co", "edu", "gov", "de", "uk", "fr", "nl",
    "es", "it", "eu", "ca", "au", "jp", "ch", "se", "info", "biz", "cloud", "tech", "local",
    "internal", "lan", "corp",
)  # fmt: skip
_TLD_HINT = re.compile(r"\.(?:" + "|".join(_TLDS) + r")(?![a-z0-9-])")
_NUMBER = _compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?![\w])")
_DIGIT = re.compile(r"\d")


def _accept(kind: str, value: str) -> bool:
    """Kind-specific checks the patterns cannot express cheaply."""
    if kind == "id":
        if value.startswith("#"):
            return any(ch.isdigit() for ch in value)
        has_digit = any(ch.isdigit() for ch in value)
        has_alpha = any(ch.isalpha() for ch in value)
        return has_digit and has_alpha
    if kind == "hash":
        return any(ch.isdigit() for ch in value) and any(ch.isalpha() for ch in value)
    if kind == "phone":
        return sum(ch.isdigit() for ch in value) >= 8
    if kind == "path":
        return value.count("/") + value.count("\\") >= 2 or value.startswith("~/")
    return True


def find_exact_value_spans(text: str, *, include_numbers: bool = False) -> list[ExactValue]:
    """Every exact value in ``text`` with its kind and span, in order of appearance.

    Args:
        text: Any text; the scan is linear in its length.
        include_numbers: Also report plain numbers ("34", "2019") not inside another value.

    Example:
        >>> [(v.kind, v.value) for v in find_exact_value_spans("Deploy v2.4.1 to db.internal.")]
        [('version', 'v2.4.1'), ('host', 'db.internal')]
    """
    if not text:
        return []
    taken = bytearray(len(text))
    found: list[ExactValue] = []
    has_digit = _DIGIT.search(text) is not None
    lowered = text.lower()
    for kind, needle, pattern in _PATTERNS:
        if needle is not None and needle not in text:
            continue
        if kind in _NEED_DIGIT and not has_digit:
            continue
        if kind == "host" and _TLD_HINT.search(lowered) is None:
            continue
        if kind == "id" and needle is None and "-" not in text and "_" not in text:
            continue
        for match in pattern.finditer(text):
            start = match.start()
            value = match.group(0).rstrip(_TRAILING) if kind != "time" else match.group(0)
            end = start + len(value)
            if not value or any(taken[start:end]) or not _accept(kind, value):
                continue
            taken[start:end] = b"\x01" * (end - start)
            found.append(ExactValue(value, kind, start, end))
    if include_numbers and has_digit:
        for match in _NUMBER.finditer(text):
            start, end = match.span()
            if not any(taken[start:end]):
                found.append(ExactValue(match.group(0), "number", start, end))
    found.sort(key=lambda item: item.start)
    return found


def find_exact_values(text: str, *, include_numbers: bool = True) -> tuple[str, ...]:
    """The exact values of ``text``, verbatim, de-duplicated, in order of appearance.

    Plain numbers are included by default, because two texts that differ only in a number
    ("I'm 34" / "I'm 35") must never be merged as duplicates.

    Example:
        >>> find_exact_values("Ping 10.0.4.17 or mail ops@example.com about JIRA-4521")
        ('10.0.4.17', 'ops@example.com', 'JIRA-4521')
    """
    spans = find_exact_value_spans(text, include_numbers=include_numbers)
    return tuple(dict.fromkeys(item.value for item in spans))
