"""Fact extraction: turning a chat message into facts worth remembering.

Three extractors share one protocol, :class:`FactExtractor` (``extract(text, context)``), and the
two-stage protocol the memory bridge runs them by (:class:`TwoStageExtractor`: a cheap stage as a
message arrives, a deferred stage in batches):

* :class:`RuleBasedFactExtractor`: English patterns, offline, thousands of messages a second;
  everything at once;
* :class:`LLMFactExtractor`: a chat model through litellm, falling back to the rules when no
  model is reachable; everything deferred;
* :class:`HybridFactExtractor`: the rules at once, the model later where the rules are unsure.

The seed's documented path for the extractors, :mod:`sagewai.intelligence`, names them too.

Example:
    >>> import asyncio
    >>> from sagewai.extraction import ExtractionContext, RuleBasedFactExtractor
    >>> facts = asyncio.run(RuleBasedFactExtractor().extract(
    ...     "I prefer tea over coffee.", ExtractionContext(speaker="Priya")))
    >>> facts[0].content, facts[0].triple
    ('Priya prefers tea over coffee.', ('Priya', 'prefers', 'tea'))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports

if TYPE_CHECKING:
    from sagewai.extraction._base import ExtractedFact, ExtractionContext, FactExtractor, Turn
    from sagewai.extraction._hybrid import HybridFactExtractor, HybridStats
    from sagewai.extraction._llm import LLMExtractorStats, LLMFactExtractor
    from sagewai.extraction._rules import RuleAnalysis, RuleBasedFactExtractor, RuleStats
    from sagewai.extraction._stages import AtOnceFacts, TwoStageExtractor

__all__ = [
    "AtOnceFacts",
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
    "TwoStageExtractor",
]

_LAZY = {
    "AtOnceFacts": "sagewai.extraction._stages",
    "ExtractedFact": "sagewai.extraction._base",
    "ExtractionContext": "sagewai.extraction._base",
    "FactExtractor": "sagewai.extraction._base",
    "HybridFactExtractor": "sagewai.extraction._hybrid",
    "HybridStats": "sagewai.extraction._hybrid",
    "LLMExtractorStats": "sagewai.extraction._llm",
    "LLMFactExtractor": "sagewai.extraction._llm",
    "RuleAnalysis": "sagewai.extraction._rules",
    "RuleBasedFactExtractor": "sagewai.extraction._rules",
    "RuleStats": "sagewai.extraction._rules",
    "Turn": "sagewai.extraction._base",
    "TwoStageExtractor": "sagewai.extraction._stages",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
