"""``HybridFactExtractor``: the rules first, the model only where the rules are unsure.

Most messages are either plainly factual ("I moved to Berlin") or plainly not ("thanks!",
"do you like tea?"); the rules settle both at thousands of messages a second. The model is
asked only about the rest, which keeps cost and latency down. The decision is a pure function,
:func:`needs_llm`:

    call the model  <=>  the message is not small talk, noise, or made only of questions,
                         hypotheticals, hedges, jokes or assistant echoes
                         AND (no rule fact passed ``min_confidence``
                              OR the best rule fact's confidence < ``llm_threshold``)

The model's facts and the rules' are merged without duplicates (:func:`merge_facts`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from sagewai.core._predicates import canonical_polarity
from sagewai.errors import InvalidInputError
from sagewai.extraction._base import (
    ExtractedFact,
    ExtractionContext,
    FactExtractor,
    sort_facts,
)
from sagewai.extraction._rules import RuleAnalysis, RuleBasedFactExtractor
from sagewai.extraction._stages import AtOnceFacts

__all__ = ["HybridFactExtractor", "HybridStats", "merge_facts", "needs_llm"]

_WORDS = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class HybridStats:
    """Counters of a :class:`HybridFactExtractor`.

    Attributes:
        texts: Messages extracted.
        sent_to_llm: Messages the model was asked about.
        skipped_non_factual: Messages the rules judged to hold no fact at all (no model call).
        rule_facts: Facts returned from the rules.
        llm_facts: Facts returned from the model (after merging).
        duplicates_merged: Model facts dropped as duplicates of rule facts.
    """

    texts: int = 0
    sent_to_llm: int = 0
    skipped_non_factual: int = 0
    rule_facts: int = 0
    llm_facts: int = 0
    duplicates_merged: int = 0

    @property
    def llm_share(self) -> float:
        """Share of messages sent to the model (0 when nothing was extracted yet)."""
        return self.sent_to_llm / self.texts if self.texts else 0.0


def needs_llm(analysis: RuleAnalysis, kept: Iterable[ExtractedFact], threshold: float) -> bool:
    """Whether the model should read a message, given what the rules found (see module doc).

    Example:
        >>> needs_llm(RuleAnalysis(small_talk=True), [], 0.3)
        False
        >>> needs_llm(RuleAnalysis(), [], 0.3)
        True
    """
    if analysis.non_factual:
        return False
    best = max((fact.confidence for fact in kept), default=None)
    return best is None or best < threshold


def _key(fact: ExtractedFact) -> str:
    return " ".join(_WORDS.findall(fact.content.lower()))


def _triple_key(fact: ExtractedFact) -> tuple[str, str, str, bool] | None:
    if not (fact.subject and fact.predicate and fact.object):
        return None
    predicate, negated = canonical_polarity(fact.predicate, fact.negated)
    return (fact.subject.lower(), predicate, " ".join(_WORDS.findall(fact.object.lower())), negated)


def merge_facts(
    first: Iterable[ExtractedFact], second: Iterable[ExtractedFact]
) -> tuple[list[ExtractedFact], int]:
    """Union of two fact lists without duplicates; returns the facts and how many were dropped.

    Two facts are duplicates when their contents match word for word (case and punctuation
    aside) or they state the same triple with the same polarity; the more confident one stays.

    Example:
        >>> a = ExtractedFact(content="Alice likes tea.", fact_type="preference", confidence=0.8)
        >>> b = ExtractedFact(content="alice likes tea", fact_type="preference", confidence=0.9)
        >>> facts, dropped = merge_facts([a], [b])
        >>> [f.confidence for f in facts], dropped
        ([0.9], 1)
    """
    kept: list[ExtractedFact] = []
    dropped = 0
    for fact in sort_facts([*first, *second]):
        key, triple = _key(fact), _triple_key(fact)
        duplicate = any(
            key == _key(other) or (triple is not None and triple == _triple_key(other))
            for other in kept
        )
        if duplicate:
            dropped += 1
        else:
            kept.append(fact)
    return kept, dropped


class HybridFactExtractor:
    """Rules for every message, the model only where the rules are unsure.

    Args:
        rule_extractor: The rules (default ``RuleBasedFactExtractor()``).
        llm_extractor: The model extractor (default ``LLMFactExtractor(fallback=<the rules>)``;
            constructing it is free, the model is reached only when called).
        llm_threshold: The model is called when the best rule fact's confidence is below this
            (see :func:`needs_llm`).

    Example:
        >>> import asyncio
        >>> from sagewai.testing import ScriptedLLM
        >>> from sagewai.extraction import LLMFactExtractor
        >>> llm = ScriptedLLM(['{"facts": []}'])
        >>> hybrid = HybridFactExtractor(llm_extractor=LLMFactExtractor(client=llm))
        >>> facts = asyncio.run(hybrid.extract("I moved to Berlin last month."))
        >>> [f.fact_type.value for f in facts], hybrid.stats.sent_to_llm
        (['event'], 0)
    """

    def __init__(
        self,
        rule_extractor: RuleBasedFactExtractor | None = None,
        llm_extractor: FactExtractor | None = None,
        llm_threshold: float = 0.3,
    ) -> None:
        if not 0.0 <= llm_threshold <= 1.0:
            raise InvalidInputError("llm_threshold must be between 0 and 1")
        self.rule_extractor = rule_extractor or RuleBasedFactExtractor()
        if llm_extractor is None:
            from sagewai.extraction._llm import LLMFactExtractor

            llm_extractor = LLMFactExtractor(fallback=self.rule_extractor)
        self.llm_extractor = llm_extractor
        self.llm_threshold = float(llm_threshold)
        self._stats = HybridStats()

    def __repr__(self) -> str:
        return (
            f"HybridFactExtractor(rule_extractor={self.rule_extractor!r}, "
            f"llm_extractor={self.llm_extractor!r}, llm_threshold={self.llm_threshold})"
        )

    @property
    def stats(self) -> HybridStats:
        """Counters, with :attr:`HybridStats.llm_share` (share of messages sent to the model)."""
        return self._stats

    async def extract(
        self, text: str, context: ExtractionContext | None = None
    ) -> list[ExtractedFact]:
        """The rules' facts, plus the model's where the rules were unsure; most confident first.

        Raises:
            InvalidInputError: ``text`` is not a string.
        """
        rule_facts, ask_model = self.extract_rules(text, context)
        if not ask_model:
            return rule_facts
        return self._merge(rule_facts, await self.llm_extractor.extract(text, context))

    extracts_at_once = True
    """The rules' facts are found as a message arrives."""
    extracts_deferred = True
    """The model reads, later, the messages the rules were unsure of."""

    async def extract_at_once(
        self, text: str, context: ExtractionContext | None = None
    ) -> AtOnceFacts:
        """The rules' facts now, and whether the model should read ``text`` later."""
        facts, ask_model = self.extract_rules(text, context)
        return AtOnceFacts(facts, defer=ask_model)

    async def extract_deferred(
        self, text: str, context: ExtractionContext | None, at_once: Sequence[ExtractedFact]
    ) -> list[ExtractedFact]:
        """The model's facts of ``text`` that the rules' (``at_once``) do not state already."""
        return await self.extract_model(text, context, at_once)

    def extract_rules(
        self, text: str, context: ExtractionContext | None = None
    ) -> tuple[list[ExtractedFact], bool]:
        """The rules' facts now, and whether the model should read ``text`` too.

        The two halves of :meth:`extract`, for a caller that stores the rules' facts at once
        and asks the model later, a batch at a time (what :class:`~sagewai.context.MemoryBridge`
        does: its ``extract_every_n_turns`` sets how often the model runs, never whether a turn
        is learned from).

        Raises:
            InvalidInputError: ``text`` is not a string.
        """
        analysis = self.rule_extractor.analyze(text, context)
        rule_facts = self.rule_extractor.select(analysis)
        stats = replace(self._stats, texts=self._stats.texts + 1)
        ask_model = needs_llm(analysis, rule_facts, self.llm_threshold)
        if not ask_model:
            if analysis.non_factual:
                stats = replace(stats, skipped_non_factual=stats.skipped_non_factual + 1)
            self._stats = replace(stats, rule_facts=stats.rule_facts + len(rule_facts))
        else:
            self._stats = stats
        return rule_facts, ask_model

    async def extract_model(
        self,
        text: str,
        context: ExtractionContext | None,
        rule_facts: Sequence[ExtractedFact],
    ) -> list[ExtractedFact]:
        """The model's facts of ``text`` that the ``rule_facts`` do not already state.

        Call it for a text :meth:`extract_rules` sent on; a model fact that repeats a rule fact
        more confidently replaces it in :meth:`extract`, here it is dropped (the rule fact is
        stored already).
        """
        merged = self._merge(rule_facts, await self.llm_extractor.extract(text, context))
        return [fact for fact in merged if fact not in rule_facts]

    def _merge(
        self, rule_facts: Sequence[ExtractedFact], model_facts: Sequence[ExtractedFact]
    ) -> list[ExtractedFact]:
        merged, dropped = merge_facts(rule_facts, model_facts)
        from_model = sum(1 for fact in merged if fact in model_facts and fact not in rule_facts)
        stats = self._stats
        self._stats = replace(
            stats,
            sent_to_llm=stats.sent_to_llm + 1,
            rule_facts=stats.rule_facts + (len(merged) - from_model),
            llm_facts=stats.llm_facts + from_model,
            duplicates_merged=stats.duplicates_merged + dropped,
        )
        return merged
