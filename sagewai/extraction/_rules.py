"""``RuleBasedFactExtractor``: English patterns, no model, thousands of messages a second.

The pipeline for one message, every step a pure function:

1. clean and cap the text (:mod:`.text`), drop small talk (:func:`.gates.is_small_talk`);
2. cut it into sentences; veto questions, hypotheticals, hedges, jokes and assistant echoes
   (:func:`.gates.gate_sentence`);
3. try the rules of :mod:`.patterns` at first-person subjects, at "my"/"our", and wherever a
   free rule's trigger word appears; each match is read into a predicate, object and negation;
4. keep the most confident reading where matches overlap; cut the clause that states it;
   resolve first person to the speaker (:mod:`.perspective`), normalise dates against the
   message time (:mod:`.dates`), keep exact values verbatim (:mod:`.exact_values`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sagewai.core._records import FactType
from sagewai.errors import InvalidInputError
from sagewai.extraction._base import ExtractedFact, ExtractionContext, sort_facts
from sagewai.extraction._dates import TimeMention, find_time_mentions
from sagewai.extraction._exact_values import ExactValue, find_exact_value_spans
from sagewai.extraction._gates import (
    Gate,
    SentenceGate,
    gate_sentence,
    is_small_talk,
    lead_offset,
)
from sagewai.extraction._instructions import read_instructions, with_profile_marks
from sagewai.extraction._patterns import Anchor, Reading, Rule, words_of
from sagewai.extraction._perspective import stated_name
from sagewai.extraction._rendering import (
    EMBEDDED_PENALTY,
    Candidate,
    complete_reading,
    is_embedded,
    is_settled,
    render_exact_value_fact,
    render_fact,
)
from sagewai.extraction._rulebook import RULES
from sagewai.extraction._stages import AtOnceFacts
from sagewai.extraction._text import (
    Span,
    clean_text,
    looks_binary,
    split_sentences,
)

__all__ = [
    "DEFAULT_MAX_INPUT_CHARS",
    "RuleAnalysis",
    "RuleBasedFactExtractor",
    "RuleStats",
]

DEFAULT_MAX_INPUT_CHARS = 10_000
"""Characters of a message the rules read; the rest is ignored (and counted in ``stats``)."""

_SUBJECT_ANCHOR = re.compile(r"\b(?:i|we)(?=['\s])", re.IGNORECASE)
_POSSESSIVE_ANCHOR = re.compile(r"\b(?:my|our)\s", re.IGNORECASE)
_EPISTEMIC = re.compile(
    r"\b(?:i\s+think|i\s+feel\s+like|i\s+believe|i\s+reckon|i'd\s+say)\b", re.IGNORECASE
)
_VALUE_KINDS_FOR_FALLBACK = frozenset(
    {"url", "email", "uuid", "ip", "path", "datetime", "phone", "amount", "quantity", "version",
     "ticket", "id", "hash", "host"}
)  # fmt: skip
_IDIOM_VALUES = frozenset({"100%", "110%", "200%", "1000%", "24/7", "50/50"})
_MAX_CANDIDATES = 64
_RULE_CACHE_SIZE = 4096
_DATE_KINDS = frozenset({"datetime", "time"})
_MAX_SUBJECTS_PER_SENTENCE = 12
"""Subjects ("I", "we", "my") read per sentence; a real sentence has a few, noise has thousands."""
_MAX_BINARY_SHARE = 0.1
"""A text with more than this share of control or replacement characters is noise, not speech."""


@dataclass(frozen=True)
class RuleAnalysis:
    """Everything the rules saw in one message, before the confidence and type filters.

    Attributes:
        facts: Every candidate fact, most confident first (including those under
            ``min_confidence``, which :meth:`RuleBasedFactExtractor.extract` drops).
        gates: The verdict on each sentence.
        small_talk: The whole message is a greeting, thanks or a bare reaction.
        truncated: The message was longer than ``max_input_chars`` and was cut.
        binary: The message looks like binary noise (control or replacement characters).
    """

    facts: tuple[ExtractedFact, ...] = ()
    gates: tuple[Gate, ...] = ()
    small_talk: bool = False
    truncated: bool = False
    binary: bool = False

    @property
    def non_factual(self) -> bool:
        """True when nothing in the message can hold a fact: noise, small talk, or every sentence
        vetoed."""
        if self.small_talk or self.binary:
            return True
        return bool(self.gates) and all(gate is not Gate.FACTUAL for gate in self.gates)

    @property
    def max_confidence(self) -> float:
        """The best candidate's confidence (0 when there is none)."""
        return max((fact.confidence for fact in self.facts), default=0.0)


@dataclass
class RuleStats:
    """Counters since the extractor was made (a snapshot is returned by ``stats``)."""

    texts: int = 0
    sentences: int = 0
    facts: int = 0
    truncated: int = 0
    small_talk: int = 0
    binary: int = 0
    vetoed: Counter[str] = field(default_factory=Counter)


class _RuleIndex:
    """Rules by keyword: the rules worth trying on a sentence, in table order, in one pass."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        self._rules = tuple(rules)
        self._always = tuple(i for i, rule in enumerate(self._rules) if not rule.keywords)
        self._by_word: dict[str, list[int]] = {}
        for index, rule in enumerate(self._rules):
            for word in rule.keywords:
                self._by_word.setdefault(word, []).append(index)
        self._vocabulary = frozenset(self._by_word)
        order = {Anchor.SUBJECT: 0, Anchor.POSSESSIVE: 1, Anchor.FREE: 2}
        self._kinds = tuple(order[rule.anchor] for rule in self._rules)
        self._cache: dict[frozenset[str], tuple[list[Rule], list[Rule], list[Rule]]] = {}

    def active(self, words: frozenset[str]) -> tuple[list[Rule], list[Rule], list[Rule]]:
        """The subject, possessive and free rules worth trying on a sentence with ``words``."""
        key = words & self._vocabulary
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        chosen = set(self._always)
        by_word = self._by_word
        for word in key:
            chosen.update(by_word[word])
        buckets: tuple[list[Rule], list[Rule], list[Rule]] = ([], [], [])
        rules, kinds = self._rules, self._kinds
        for index in sorted(chosen):
            buckets[kinds[index]].append(rules[index])
        if len(self._cache) >= _RULE_CACHE_SIZE:
            self._cache.clear()
        self._cache[key] = buckets
        return buckets


class RuleBasedFactExtractor:
    """Extracts facts with English patterns: fast, offline, deterministic.

    Args:
        min_confidence: Facts below this confidence are dropped.
        fact_types: Only facts of these types are returned (default: all five).
        max_input_chars: A message is read up to this many characters (default 10,000);
            longer input is cut and counted in ``stats.truncated``.
        max_facts: At most this many facts per message.
        max_sentences: At most this many sentences of a message are read.

    Example:
        >>> import asyncio
        >>> from datetime import datetime, UTC
        >>> extractor = RuleBasedFactExtractor()
        >>> when = datetime(2024, 3, 13, tzinfo=UTC)
        >>> context = ExtractionContext(speaker="Alice", timestamp=when)
        >>> [fact] = asyncio.run(extractor.extract("I moved to Berlin last month.", context))
        >>> fact.content, fact.fact_type.value, fact.event_time
        ('Alice moved to Berlin last month (2024-02).', 'event', '2024-02')
        >>> fact.triple
        ('Alice', 'lives_in', 'Berlin')
    """

    def __init__(
        self,
        min_confidence: float = 0.4,
        fact_types: Iterable[FactType | str] | None = None,
        *,
        max_input_chars: int = DEFAULT_MAX_INPUT_CHARS,
        max_facts: int = 20,
        max_sentences: int = 200,
    ) -> None:
        if not 0.0 <= min_confidence <= 1.0:
            raise InvalidInputError("min_confidence must be between 0 and 1")
        if max_input_chars < 1 or max_facts < 1 or max_sentences < 1:
            raise InvalidInputError("max_input_chars, max_facts and max_sentences must be >= 1")
        try:
            types = frozenset(FactType(t) for t in fact_types) if fact_types is not None else None
        except ValueError as exc:
            raise InvalidInputError(f"unknown fact type: {exc}") from exc
        self.min_confidence = float(min_confidence)
        self.fact_types: frozenset[FactType] = types if types is not None else frozenset(FactType)
        self.max_input_chars = max_input_chars
        self.max_facts = max_facts
        self.max_sentences = max_sentences
        self._stats = RuleStats()
        self._rules = _RuleIndex(RULES)

    def __repr__(self) -> str:
        types = ",".join(sorted(t.value for t in self.fact_types))
        return f"RuleBasedFactExtractor(min_confidence={self.min_confidence}, fact_types=[{types}])"

    @property
    def stats(self) -> RuleStats:
        """A copy of the counters (texts, sentences, facts, truncated, small talk, vetoes)."""
        current = self._stats
        return RuleStats(
            current.texts,
            current.sentences,
            current.facts,
            current.truncated,
            current.small_talk,
            current.binary,
            Counter(current.vetoed),
        )

    async def extract(
        self, text: str, context: ExtractionContext | None = None
    ) -> list[ExtractedFact]:
        """The facts in ``text`` at or above ``min_confidence``, most confident first.

        Raises:
            InvalidInputError: ``text`` is not a string.
        """
        return self.extract_sync(text, context)

    extracts_at_once = True
    """Every fact is found as the message arrives (the two-stage protocol's at-once stage)."""
    extracts_deferred = False
    """Nothing is left for a deferred stage."""

    async def extract_at_once(
        self, text: str, context: ExtractionContext | None = None
    ) -> AtOnceFacts:
        """Every fact of ``text``, now (the rules never defer)."""
        return AtOnceFacts(self.extract_sync(text, context), defer=False)

    async def extract_deferred(
        self, text: str, context: ExtractionContext | None, at_once: Sequence[ExtractedFact]
    ) -> list[ExtractedFact]:
        """Nothing: the rules found everything at once."""
        return []

    def extract_sync(
        self, text: str, context: ExtractionContext | None = None
    ) -> list[ExtractedFact]:
        """:meth:`extract` without an event loop (benchmarks, sync callers)."""
        analysis = self.analyze(text, context)
        return self.select(analysis)

    def select(self, analysis: RuleAnalysis) -> list[ExtractedFact]:
        """The facts of an analysis that pass ``min_confidence`` and ``fact_types``."""
        kept = [
            fact
            for fact in analysis.facts
            if fact.confidence >= self.min_confidence and fact.fact_type in self.fact_types
        ]
        return kept[: self.max_facts]

    def analyze(self, text: str, context: ExtractionContext | None = None) -> RuleAnalysis:
        """Read ``text`` and return every candidate fact with the per-sentence verdicts.

        :class:`HybridFactExtractor` uses this to decide whether the LLM is worth calling.

        Raises:
            InvalidInputError: ``text`` is not a string.
        """
        if not isinstance(text, str):
            raise InvalidInputError(f"text must be a str, got {type(text).__name__}")
        context = context or ExtractionContext()
        stats = self._stats
        stats.texts += 1
        truncated = len(text) > self.max_input_chars
        if truncated:
            stats.truncated += 1
        if looks_binary(text[: self.max_input_chars], _MAX_BINARY_SHARE):
            stats.binary += 1
            return RuleAnalysis(truncated=truncated, binary=True)
        cleaned = clean_text(text, self.max_input_chars)
        if not cleaned.strip():
            return RuleAnalysis(truncated=truncated)
        # A user's standing instructions ("from now on, ...") are read whatever the gates say.
        standing = context.role == "user"
        if is_small_talk(cleaned) and not (standing and read_instructions(cleaned)):
            stats.small_talk += 1
            return RuleAnalysis(small_talk=True, truncated=truncated)
        if context.role == "user" and not context.speaker:
            # "My name is Dana and I lead the team": the rest of the message reads "Dana (the user)"
            named = stated_name(cleaned)
            if named is not None:
                context = context.model_copy(update={"user_name": named})
        values = [
            value
            for value in find_exact_value_spans(cleaned)
            if value.kind in _VALUE_KINDS_FOR_FALLBACK
        ]
        gates: list[Gate] = []
        facts: list[ExtractedFact] = []
        for sentence in split_sentences(cleaned)[: self.max_sentences]:
            stats.sentences += 1
            words = words_of(sentence.text)
            verdict = gate_sentence(sentence.text, context.role, words)
            gates.append(verdict.gate)
            if verdict.gate is not Gate.FACTUAL:
                stats.vetoed[verdict.gate.value] += 1
                continue
            facts.extend(self._sentence_facts(sentence, verdict, context, values, words))
            if len(facts) >= _MAX_CANDIDATES:
                break
        if standing:
            facts = with_profile_marks(facts, cleaned, speaker=context.speaker)
        unique: dict[tuple[str, str | None, str | None], ExtractedFact] = {}
        for fact in sort_facts(facts):
            unique.setdefault((fact.content.lower(), fact.predicate, fact.object), fact)
        result = tuple(unique.values())
        stats.facts += sum(1 for fact in result if fact.confidence >= self.min_confidence)
        return RuleAnalysis(facts=result, gates=tuple(gates), small_talk=False, truncated=truncated)

    # ------------------------------------------------------------------ one sentence
    def _matches(
        self, sentence: Span, role: str, words: frozenset[str], has_value: bool
    ) -> list[Candidate]:
        text = sentence.text
        found: list[Candidate] = []
        assistant = role == "assistant"
        subject_rules, possessive_rules, free_rules = self._rules.active(words)
        if assistant:
            subject_rules = [rule for rule in subject_rules if rule.assistant]
        for count, anchor in enumerate(_SUBJECT_ANCHOR.finditer(text)):
            if count >= _MAX_SUBJECTS_PER_SENTENCE:
                break
            position = anchor.start()
            before = len(found)
            for rule in subject_rules:
                if rule.fallback:
                    continue
                match = rule.regex.match(text, position)
                if match is not None:
                    self._read(rule, match, found)
            if any(is_settled(candidate) for candidate in found[before:]):
                continue  # a specific rule read this subject: the catch-all is not needed
            for rule in subject_rules:
                if rule.fallback:
                    match = rule.regex.match(text, position)
                    if match is not None:
                        self._read(rule, match, found)
        if assistant:
            return found
        for count, anchor in enumerate(_POSSESSIVE_ANCHOR.finditer(text)):
            if count >= _MAX_SUBJECTS_PER_SENTENCE:
                break
            position = anchor.start()
            for rule in possessive_rules:
                match = rule.regex.match(text, position)
                if match is not None:
                    self._read(rule, match, found)
        lower = text.lower()
        lead = lead_offset(text)
        for rule in free_rules:
            if rule.name == "general.implicit_subject":
                match = rule.regex.match(text[lead:])
                if match is not None:
                    self._read(rule, match, found, shift=lead)
                continue
            if rule.needs_exact_value and not has_value:
                continue
            if rule.triggers and not any(trigger in lower for trigger in rule.triggers):
                continue
            for match in rule.regex.finditer(text):
                self._read(rule, match, found)
        return found

    @staticmethod
    def _read(rule: Rule, match: re.Match[str], found: list[Candidate], shift: int = 0) -> None:
        if rule.builder is None:
            return
        reading = rule.builder(match, rule)
        if reading is not None:
            found.append(Candidate(rule, reading, match.start() + shift, match.end() + shift))

    def _sentence_facts(
        self,
        sentence: Span,
        verdict: SentenceGate,
        context: ExtractionContext,
        values: list[ExactValue],
        words: frozenset[str],
    ) -> list[ExtractedFact]:
        text = sentence.text
        local_values = [
            ExactValue(v.value, v.kind, v.start - sentence.start, v.end - sentence.start)
            for v in values
            if v.start >= sentence.start and v.end <= sentence.end
        ]
        mentions: list[TimeMention] | None = None

        def time_mentions() -> list[TimeMention]:
            nonlocal mentions
            if mentions is None:
                mentions = [  # a date word inside a URL or a path is not a date
                    m
                    for m in find_time_mentions(text, context.timestamp)
                    if not any(
                        m.start < v.end and v.start < m.end and v.kind not in _DATE_KINDS
                        for v in local_values
                    )
                ]
            return mentions

        candidates = self._matches(sentence, context.role, words, bool(local_values))
        accepted: list[tuple[Candidate, float, Reading]] = []
        scored: list[tuple[float, Candidate, Reading]] = []
        penalty = verdict.penalty + (0.1 if _EPISTEMIC.search(text) else 0.0)
        penalty += 0.05 if context.role == "assistant" else 0.0
        for candidate in candidates:
            reading = complete_reading(candidate, local_values, text)
            if reading is None:
                continue
            extra = dict(reading.extra)
            if extra.get("needs_time") == "yes" and not time_mentions():
                continue
            fact_type = reading.fact_type or candidate.rule.fact_type
            confidence = reading.confidence - penalty
            if candidate.rule.anchor is not Anchor.FREE and is_embedded(text, candidate):
                confidence -= EMBEDDED_PENALTY
            if fact_type is FactType.EVENT:
                confidence += 0.1 if any(m.iso for m in time_mentions()) else 0.0
            scored.append((confidence, candidate, reading))
        scored.sort(key=lambda item: -item[0])
        for confidence, candidate, reading in scored:
            overlaps = any(
                candidate.start < other.end and other.start < candidate.end
                for other, _, _ in accepted
                if not other.rule.secondary
            )
            if overlaps and not candidate.rule.secondary:
                continue
            if candidate.rule.secondary and any(
                other_reading.predicate == reading.predicate
                and other_reading.object == reading.object
                for _, _, other_reading in accepted
            ):
                continue
            accepted.append((candidate, confidence, reading))
        facts = [
            render_fact(
                sentence,
                candidate,
                confidence,
                reading,
                context,
                local_values,
                # Every fact's relative dates are resolved against the message time (in its
                # text); only events and actions take one as their event time.
                time_mentions(),
            )
            for candidate, confidence, reading in accepted
        ]
        anchoring = [v for v in local_values if v.value not in _IDIOM_VALUES]
        if not facts and anchoring and context.role != "assistant" and len(text.split()) >= 3:
            facts.append(render_exact_value_fact(sentence, verdict, context, local_values))
        return facts
