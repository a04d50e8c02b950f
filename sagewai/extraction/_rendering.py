"""Turning a rule's reading into an :class:`~.base.ExtractedFact`: clause, perspective, dates.

The content of a fact is the clause that states it (not the whole message), rewritten in the
third person (:mod:`.perspective`), with relative dates followed by their ISO form ("last month
(2024-02)"), and with every exact value of the clause kept verbatim. These functions are pure;
:class:`~.rules.RuleBasedFactExtractor` calls them for the readings it keeps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sagewai.core._predicates import describe
from sagewai.core._records import FactType
from sagewai.extraction._base import ExtractedFact, ExtractionContext
from sagewai.extraction._dates import TimeMention, find_time_mentions
from sagewai.extraction._exact_values import ExactValue
from sagewai.extraction._gates import SentenceGate, lead_offset
from sagewai.extraction._patterns import Reading, Rule
from sagewai.extraction._perspective import (
    default_subject,
    display_name,
    possessive,
    resolve_perspective,
)
from sagewai.extraction._text import Span, clause_bounds

__all__ = [
    "EMBEDDED_PENALTY",
    "EXACT_VALUE_FALLBACK_CONFIDENCE",
    "TIMED_TYPES",
    "Candidate",
    "complete_reading",
    "is_embedded",
    "is_settled",
    "render_exact_value_fact",
    "render_fact",
]

TIMED_TYPES = frozenset({FactType.EVENT, FactType.ACTION})
EXACT_VALUE_FALLBACK_CONFIDENCE = 0.6


@dataclass(frozen=True)
class Candidate:
    """A rule's match in a sentence, read (offsets are in the sentence)."""

    rule: Rule
    reading: Reading
    start: int
    end: int


def render_fact(
    sentence: Span,
    candidate: Candidate,
    confidence: float,
    reading: Reading,
    context: ExtractionContext,
    values: list[ExactValue],
    mentions: list[TimeMention],
) -> ExtractedFact:
    """The fact a kept reading states.

    Args:
        sentence: The sentence (offsets of ``candidate`` and ``values`` are in it).
        candidate: The rule match.
        confidence: The final confidence (base, adjusted for penalties and dates).
        reading: What the builder read (the object of an attribute rule completed).
        context: Who said it and when.
        values: Exact values of the sentence.
        mentions: Time phrases of the sentence (resolved into the content of every type; the
            event time of events and actions).
    """
    text = sentence.text
    role = context.role
    # The name the user gave is shown, but the subject stays "user": the user's facts stated
    # before and after the name keep one subject, so a later value still supersedes an earlier.
    user_name = None if reading.predicate == "name" else context.user_name
    speaker_subject = default_subject(context.speaker, role)
    display = display_name(context.speaker, role, user_name)
    subject, relation = _subject(reading, speaker_subject, display)
    fact_type = reading.fact_type or candidate.rule.fact_type
    predicate = reading.predicate
    recurring = any(key == "recurrence" for key, _ in reading.extra)
    if recurring:
        mentions = []  # "every Monday" is a rule, not the date of next Monday
    # A schedule's value is its day; anything else loses a time phrase at its end.
    obj = reading.object if predicate == "scheduled_on" else _trim_time(reading.object, mentions)
    if obj is not None:
        obj = resolve_perspective(
            obj,
            speaker=context.speaker,
            role=role,
            addressee=context.addressee,
            protected=[
                (index, index + len(v.value)) for v in values if (index := obj.find(v.value)) >= 0
            ],
            capitalize=False,
            user_name=user_name,
        )
    metadata: dict[str, object] = {"negated": reading.negated, "rule": candidate.rule.name}
    if user_name and role == "user" and not context.speaker:
        metadata["user_name"] = user_name
    if relation is not None:
        metadata["relation"], metadata["relation_of"] = relation
    for key, value in reading.extra:
        if key not in {"needs_time", "value_after"}:
            metadata[key] = value
    if candidate.rule.secondary:
        who = display if subject == speaker_subject else subject
        content = f"{who} {describe(predicate or '')} {obj}".strip()
        content = content[:1].upper() + content[1:]
        span = (sentence.start + candidate.start, sentence.start + candidate.end)
        exact = tuple(v.value for v in values if obj and v.value in obj)
    else:
        left, right = clause_bounds(text, candidate.start, candidate.end)
        left += lead_offset(text[left:right])
        left -= _companions_before(text, left)
        clause = text[left:right].strip()
        right = left + len(clause)
        inside = [v for v in values if v.start >= left and v.end <= right]
        protected = [(v.start - left, v.end - left) for v in inside]
        implicit = dict(reading.extra).get("implicit")
        if implicit:
            clause = f"{implicit} {clause[:1].lower()}{clause[1:]}"
            shift = len(implicit) + 1
            protected = [(a + shift, b + shift) for a, b in protected]
            metadata.pop("implicit", None)
        content = resolve_perspective(
            clause,
            speaker=context.speaker,
            role=role,
            addressee=context.addressee,
            protected=protected,
            user_name=user_name,
        )
        if relation is not None:
            content = _name_first(content, subject, relation)
        for mention in mentions:
            if (
                mention.relative
                and mention.iso
                and left <= mention.start < right
                and not any(mention.text in v.value for v in inside)  # never edit a value
            ):
                content = content.replace(mention.text, f"{mention.text} ({mention.iso})", 1)
        span = (sentence.start + left, sentence.start + right)
        exact = tuple(v.value for v in inside)
    if candidate.rule.name == "general.name" and obj:
        # "My name is Dana", "call me Dana": said as a statement about the user, not an order
        called = "call" in text[candidate.start : candidate.end].lower()
        content = (
            f"{display} wants to be called {obj}"
            if called
            else f"{possessive(display)} name is {obj}"
        )
        content = content[:1].upper() + content[1:]
    content = _full_stop(content)
    event_time = None
    if fact_type in TIMED_TYPES:
        timed = [m for m in mentions if m.iso]
        if timed:
            event_time = timed[0].iso
            metadata["event_time_text"] = timed[0].text
    return ExtractedFact(
        content=content,
        fact_type=fact_type,
        confidence=round(min(max(confidence, 0.01), 0.99), 3),
        subject=subject,
        predicate=predicate,
        object=obj if predicate else None,
        exact_values=exact,
        source_span=span,
        speaker=context.speaker,
        event_time=event_time,
        extractor="rules",
        metadata=metadata,  # type: ignore[arg-type]
    )


def render_exact_value_fact(
    sentence: Span,
    verdict: SentenceGate,
    context: ExtractionContext,
    values: list[ExactValue],
) -> ExtractedFact:
    """A general fact for a sentence that no rule read but that holds exact values.

    "The release commit is 9c1e4f2a7b" must not be lost because no pattern names its shape.
    """
    text = sentence.text
    left = lead_offset(text)
    clause = text[left:].strip()
    protected = [(v.start - left, v.end - left) for v in values if v.start >= left]
    content = resolve_perspective(
        clause,
        speaker=context.speaker,
        role=context.role,
        addressee=context.addressee,
        protected=protected,
        user_name=context.user_name,
    )
    metadata: dict[str, object] = {"negated": False, "rule": "general.exact_value"}
    if context.user_name and context.role == "user" and not context.speaker:
        metadata["user_name"] = context.user_name
    return ExtractedFact(
        content=content,
        fact_type=FactType.GENERAL,
        confidence=round(max(EXACT_VALUE_FALLBACK_CONFIDENCE - verdict.penalty, 0.01), 3),
        subject=default_subject(context.speaker, context.role),
        exact_values=tuple(v.value for v in values if v.start >= left),
        source_span=(sentence.start + left, sentence.start + left + len(clause)),
        speaker=context.speaker,
        extractor="rules",
        metadata=metadata,  # type: ignore[arg-type]
    )


def is_settled(candidate: Candidate) -> bool:
    """A reading confident enough, and not waiting for a time phrase, to stand for its subject."""
    reading = candidate.reading
    return reading.confidence >= 0.6 and ("needs_time", "yes") not in reading.extra


_UNIT_TAIL = re.compile(r"\s+(?:per|a|an|each)\s+\w+")
_TRAILING_PREPOSITION = re.compile(
    r"\s+(?:on|in|at|by|from|since|for|during|this|last|next)$", re.IGNORECASE
)


def complete_reading(candidate: Candidate, values: list[ExactValue], text: str) -> Reading | None:
    """Finish readings that need the sentence: attribute rules take the value after the verb."""
    reading = candidate.reading
    if dict(reading.extra).get("value_after") != "yes":
        return reading
    following = [v for v in values if candidate.end <= v.start <= candidate.end + 12]
    if not following:
        return None
    value = following[0]
    between = text[candidate.end : value.start]
    if between.strip(" $€£:") and not between.strip().isalpha():
        return None
    end = value.end
    tail = _UNIT_TAIL.match(text, end)
    obj = text[value.start : tail.end() if tail else end]
    return Reading(
        reading.predicate,
        obj,
        reading.negated,
        reading.confidence,
        subject=reading.subject,
        owner=reading.owner,
        fact_type=reading.fact_type,
        extra=reading.extra,
    )


EMBEDDED_PENALTY = 0.2
_CLAUSE_OPENERS = frozenset(
    """and but so then because since after when while now also plus though although until before
    once today yesterday tonight recently lately finally just actually honestly well oh yeah
    anyway ok okay too again morning evening night week month year weekend ago""".split()  # noqa: SIM905
)


def is_embedded(text: str, candidate: Candidate) -> bool:
    """True when the subject sits inside another clause ("the friends I have", "one idea I had").

    A subject opening its clause, or following a fronted adverbial ("Last week, I ...") or a
    conjunction ("... and I ..."), is not embedded.
    """
    if candidate.start == 0:
        return False
    left, right = clause_bounds(text, candidate.start, candidate.end)
    left += lead_offset(text[left:right])
    before = text[left : candidate.start].strip()
    if not before or before.endswith((",", ":", "-", "!")):
        return False
    last = before.split()[-1].lower().strip("\"'")
    return last not in _CLAUSE_OPENERS and not find_time_mentions(before)


_RELATIVE_NAMED = re.compile(
    r"(?P<relation>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2})\s+(?P<name>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?)"
)
_COMPANIONS = re.compile(
    r"(?:^|[,;]\s*)(?P<group>(?:my|our)\s+[a-z][\w-]*(?:\s+[a-z][\w-]*)?\s+and\s+)$",
    re.IGNORECASE,
)


def _subject(
    reading: Reading, speaker_subject: str, display: str
) -> tuple[str, tuple[str, str] | None]:
    """The fact's subject, and ``(relation, whose)`` when it is a named relative of the speaker.

    "My sister Eva lives in Oslo" is about Eva: the subject is "Eva", the relation ("sister" of
    "the user") is noted beside it.
    """
    if reading.subject is None:
        return speaker_subject, None
    if reading.owner in {"my", "our"}:
        named = _RELATIVE_NAMED.fullmatch(reading.subject)
        if named is not None:
            return named["name"], (named["relation"], display)
        return f"{possessive(display)} {reading.subject}", None
    if reading.owner in {"the", "your"}:
        return f"the {reading.subject}", None
    return reading.subject, None


def _name_first(content: str, name: str, relation: tuple[str, str]) -> str:
    """ "The user's sister Eva lives in Oslo" -> "Eva (the user's sister) lives in Oslo"."""
    kind, whose = relation
    said = f"{possessive(whose)} {kind} {name}"
    index = content.lower().find(said.lower())
    if index < 0:
        return content
    named = f"{name} ({possessive(whose)} {kind})"
    return content[:index] + named + content[index + len(said) :]


def _full_stop(content: str) -> str:
    """A fact reads as a sentence: a clause cut before "and ..." gets its full stop."""
    return content + "." if content[-1:].isalnum() else content


def _companions_before(text: str, left: int) -> int:
    """Characters of "my team and " just before a clause that opens at "I" (0 when none)."""
    if not text[left : left + 2].lower().startswith("i"):
        return 0
    match = _COMPANIONS.search(text[:left])
    return len(match["group"]) if match else 0


def _trim_time(value: str | None, mentions: list[TimeMention]) -> str | None:
    """Cut an object before a time phrase inside it ("Shopify on Monday" -> "Shopify")."""
    if value is None:
        return None
    lowered = value.lower()
    cut = len(value)
    for mention in mentions:
        index = lowered.find(mention.text.lower())
        if 0 <= index < cut:
            cut = index
    trimmed = value[:cut].rstrip(" ,-")
    trimmed = _TRAILING_PREPOSITION.sub("", trimmed)
    return trimmed or None
