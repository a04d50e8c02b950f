"""Fact extraction: turning a chat message into facts worth remembering.

Three extractors share one protocol, :class:`FactExtractor`:

* :class:`RuleBasedFactExtractor`: English patterns, offline, thousands of messages a second;
* :class:`LLMFactExtractor`: a chat model through litellm, falling back to the rules when no
  model is reachable;
* :class:`HybridFactExtractor`: the rules everywhere, the model only where they are unsure.

Example:
    >>> import asyncio
    >>> from sagewai.extraction import ExtractionContext, RuleBasedFactExtractor
    >>> facts = asyncio.run(RuleBasedFactExtractor().extract(
    ...     "I prefer tea over coffee.", ExtractionContext(speaker="Priya")))
    >>> facts[0].content, facts[0].triple
    ('Priya prefers tea over coffee.', ('Priya', 'prefers', 'tea'))
"""

from __future__ import annotations

from sagewai.core._predicates import is_single_valued, normalize_predicate
from sagewai.extraction._base import (
    ExtractedFact,
    ExtractionContext,
    FactExtractor,
    Turn,
)
from sagewai.extraction._hybrid import HybridFactExtractor, HybridStats
from sagewai.extraction._llm import LLMExtractorStats, LLMFactExtractor
from sagewai.extraction._rules import RuleAnalysis, RuleBasedFactExtractor, RuleStats

__all__ = [
    "ExtractedFact",
    "ExtractionContext",
    "FactExtractor",
    "HybridFactExtractor",
    "HybridStats",
    "LLMExtractorStats",
    "LLMFactExtractor",
    "RuleAnalysis",
    "RuleBasedFactExtractor",
    "RuleStats",
    "Turn",
    "is_single_valued",
    "normalize_predicate",
]
