"""The building blocks of the extraction rules: rule and reading records, regex pieces, objects.

A :class:`Rule` is a pre-compiled regular expression plus a small pure *builder* (see
:mod:`.readers`) that reads the match into a :class:`Reading` (predicate, object, negation,
confidence) or rejects it. Rules come in three kinds, by where they may start, which keeps the
scan fast and linear:

* ``SUBJECT`` rules start at a first-person subject ("I", "we") and are tried with
  ``regex.match`` only at those positions;
* ``POSSESSIVE`` rules start at "my"/"our";
* ``FREE`` rules are searched in the whole sentence, only when a trigger is present.

A rule is tried only when one of its keywords is among the sentence's words. Every quantifier
is bounded (objects at most 120 characters), so a match costs at most a constant times the
sentence length. The rules themselves are in :mod:`.rulebook`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from sagewai.core._records import FactType

__all__ = [
    "ADV",
    "END",
    "END_LONG",
    "END_PLACE",
    "END_ROLE",
    "END_WORK",
    "NAME",
    "OBJ",
    "OBJ_CHAR",
    "SUBJ",
    "Anchor",
    "Builder",
    "Reading",
    "Rule",
    "clean_object",
    "compile_rule_pattern",
    "group",
    "has_content",
    "is_pronoun",
    "is_reaction",
    "words_of",
]


class Anchor(Enum):
    """Where a rule's match may start."""

    SUBJECT = "subject"
    POSSESSIVE = "possessive"
    FREE = "free"


@dataclass(frozen=True, slots=True)
class Reading:
    """What a builder read from a match."""

    predicate: str | None
    object: str | None
    negated: bool = False
    confidence: float = 0.0
    subject: str | None = None
    """An explicit subject ("the team", "Jon", "sister"); ``None`` means the speaker."""
    owner: str | None = None
    """``my``/``our``/``the``: the subject is owned ("my sister" -> "Alice's sister")."""
    fact_type: FactType | None = None
    """Overrides the rule's type (a "going to Paris" plan is an event)."""
    extra: tuple[tuple[str, str], ...] = ()


Builder = Callable[[re.Match[str], "Rule"], Reading | None]


@dataclass(frozen=True, slots=True)
class Rule:
    """One way of stating a fact."""

    name: str
    fact_type: FactType
    anchor: Anchor
    regex: re.Pattern[str]
    confidence: float
    predicate: str | None = None
    negated: bool = False
    builder: Builder | None = None
    triggers: tuple[str, ...] = ()
    assistant: bool = False
    """May fire in an assistant's message (commitments, things the assistant did)."""
    secondary: bool = False
    """May overlap another fact's text (a relation named inside another statement)."""
    fallback: bool = False
    """A catch-all, tried at a subject only when no specific rule read it."""
    needs_exact_value: bool = False
    """Tried only on sentences holding an exact value (attribute = value statements)."""
    keywords: frozenset[str] = field(default_factory=frozenset)
    """Lower-case words of which one must be in the sentence for the rule to be tried (empty:
    always tried). A cheap set test that keeps the scan fast."""


def compile_rule_pattern(pattern: str) -> re.Pattern[str]:
    """Compile a rule's pattern (case-insensitive; names opt back in with ``(?-i:...)``)."""
    return re.compile(pattern, re.IGNORECASE)


_WORDS = re.compile(r"[a-z0-9']+")


def words_of(text: str) -> frozenset[str]:
    """The lower-case words of ``text``, for :attr:`Rule.keywords` tests."""
    return frozenset(_WORDS.findall(text.lower()))


# ---------------------------------------------------------------- building blocks
SUBJ = r"(?P<subj>i|we)"
ADV = (
    r"(?:\s+(?:really|absolutely|totally|just|also|still|truly|honestly|definitely|genuinely|"
    r"actually|kinda|generally|usually|always|especially|simply|so|very\s+much|kind\s+of|"
    r"sort\s+of|pretty\s+much|do|personally|now|already|finally|officially|seriously|"
    r"literally|basically|mostly|certainly|particularly|currently)){0,3}"
)
_STOP = (
    r"and|but|because|since|so|though|although|which|who|when|while|whereas|unless|until|"
    r"as\s+well|especially|anymore|any\s+more|these\s+days|nowadays|right\s+now|lately|"
    r"in\s+general|at\s+all|too|if|or\s+so"
)
OBJ_CHAR = r"(?:[^,.;:!?()\n\"]|[.:](?=[\w/~])|(?<=\d),(?=\d))"
"""One character of an object: punctuation ends it, except inside values (v1.2, https://, 1,000)."""
OBJ = rf"(?P<obj>{OBJ_CHAR}{{1,120}}?)"
END = rf"(?=\s*(?:[,.;:!?()\n\"]|$)|\s+[-–—]+\s|\s+(?:{_STOP})\b)"
END_PLACE = (
    rf"(?=\s*(?:[,.;:!?()\n\"]|$)|\s+[-–—]+\s|\s+(?:{_STOP}|with|for|since|as|where|near|now|"
    rf"currently|right|these|this|last|next|in\s+(?:the|a|an|\d))\b)"
)
END_WORK = (
    rf"(?=\s*(?:[,.;:!?()\n\"]|$)|\s+[-–—]+\s|\s+(?:{_STOP}|as|for|since|where|in\s+the|on\s+the|"
    rf"now|currently|full[- ]time|part[- ]time|with|alongside|together)\b)"
)
END_ROLE = (
    rf"(?=\s*(?:[,.;:!?()\n\"]|$)|\s+[-–—]+\s|\s+(?:{_STOP}|at|for|in|of|with|since|from|by|on|"
    rf"and|who|now|currently)\b)"
)
END_LONG = (
    r"(?=\s*(?:[.;!?()\n\"]|$)|\s+[-–—]+\s|\s+(?:because|since|so\s+that|as\s+soon\s+as)\b|"
    r",\s+(?:but|because|so|since|which)\b)"
)
NAME = r"(?-i:[A-Z][a-zà-ÿ'-]{1,30}(?:\s+[A-Z][a-zà-ÿ'-]{1,30}){0,2})"

PRONOUNS = frozenset(
    """it that this them those these him her you one so there here what which something anything
    everything nothing stuff things thing all both either lots much more most some any myself
    yourself us me ya u y'all everyone everybody someone somebody people em""".split()  # noqa: SIM905
)
_TRAILING_WORDS = re.compile(
    r"(?:\s+(?:now|anymore|any\s+more|these\s+days|nowadays|again|too|lately|currently|today|"
    r"tonight|tomorrow|yesterday|either|as\s+well|a\s+lot|so\s+much|very\s+much|though|tho|"
    r"already|for\s+now|right\s+now|at\s+all|in\s+general|of\s+course|haha\w*|lol|honestly|"
    r"actually|really|personally|forever|anyway|at\s+the\s+moment))+$",
    re.IGNORECASE,
)
_LEADING_WORDS = re.compile(r"^(?:to\s+(?=\w)|it\s+when\s+|when\s+)", re.IGNORECASE)


def clean_object(text: str | None) -> str | None:
    """Trim an object: spaces, trailing time adverbs ("now", "anymore"), a leading "to".

    Example:
        >>> clean_object("orange now"), clean_object("to read science fiction")
        ('orange', 'read science fiction')
    """
    if text is None:
        return None
    value = " ".join(text.split()).strip(" -'")
    for _ in range(2):
        value = _TRAILING_WORDS.sub("", value).strip(" -'")
    value = _LEADING_WORDS.sub("", value).strip()
    return value or None


_REACTION_START = re.compile(
    r"^(?:how|what|when|that|the\s+way|your|you|it|this|that|those|these|them|him|her|"
    r"to\s*$)\b",
    re.IGNORECASE,
)
_LIGHT = frozenset(
    """to a an the my our your their his her its of in on at for with and or it this that make do
    keep get go be have let try see take give put it's up out on off back going happen happening
    work working""".split()  # noqa: SIM905
)


def is_pronoun(value: str) -> bool:
    """True when an object names nothing: pronouns only ("it", "that one")."""
    words = value.lower().split()
    return not words or all(word in PRONOUNS for word in words)


def is_reaction(value: str) -> bool:
    """True for objects reacting to the other person or to "it" ("how you did it", "your help")."""
    return _REACTION_START.match(value) is not None and not value.lower().startswith("it when")


def has_content(value: str) -> bool:
    """At least one word beyond pronouns and light verbs ("make it happen" has none)."""
    return any(
        word not in _LIGHT and word not in PRONOUNS for word in _WORDS.findall(value.lower())
    )


def group(match: re.Match[str], name: str) -> str | None:
    try:
        value = match.group(name)
    except IndexError:
        return None
    return value if value else None
