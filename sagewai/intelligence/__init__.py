"""The mechanisms that turn conversations into maintained memory.

* consolidation: :class:`MemoryConsolidator` (dedup, decay, contradictions) with its
  :class:`ConsolidationSettings` and :class:`ConsolidationReport`;
* the knowledge graph: :class:`ConversationGraphBuilder` with :class:`GLiNEREntityExtractor` or
  the rule-based entity extractor, and :class:`HeuristicRelationExtractor`;
* fact extraction, named here as the seed documents it (:class:`FactExtractor`,
  :class:`RuleBasedFactExtractor`, :class:`LLMFactExtractor`, :class:`HybridFactExtractor`,
  :class:`ExtractedFact`); their package is :mod:`sagewai.extraction`.

Names are imported on first use, so importing this package loads no model library.

Example:
    >>> from sagewai.intelligence import RuleBasedFactExtractor
    >>> RuleBasedFactExtractor().__class__.__name__
    'RuleBasedFactExtractor'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports

if TYPE_CHECKING:
    from sagewai.extraction._base import ExtractedFact, FactExtractor
    from sagewai.extraction._hybrid import HybridFactExtractor
    from sagewai.extraction._llm import LLMFactExtractor
    from sagewai.extraction._rules import RuleBasedFactExtractor
    from sagewai.intelligence._entities import (
        EntityExtractor,
        GLiNEREntityExtractor,
        LLMEntityExtractor,
    )
    from sagewai.intelligence._graph_builder import ConversationGraphBuilder, GraphUpdateResult
    from sagewai.intelligence._relations import HeuristicRelationExtractor, RelationExtractor
    from sagewai.intelligence._rule_entities import RuleBasedEntityExtractor
    from sagewai.intelligence.consolidation._config import (
        ConsolidationOptions,
        ConsolidationSettings,
        ContradictionStrategy,
    )
    from sagewai.intelligence.consolidation._consolidator import MemoryConsolidator
    from sagewai.intelligence.consolidation._report import (
        ActionKind,
        ConsolidationAction,
        ConsolidationProgress,
        ConsolidationReport,
    )

__all__ = [
    "ActionKind",
    "ConsolidationAction",
    "ConsolidationOptions",
    "ConsolidationProgress",
    "ConsolidationReport",
    "ConsolidationSettings",
    "ContradictionStrategy",
    "ConversationGraphBuilder",
    "EntityExtractor",
    "ExtractedFact",
    "FactExtractor",
    "GLiNEREntityExtractor",
    "GraphUpdateResult",
    "HeuristicRelationExtractor",
    "HybridFactExtractor",
    "LLMEntityExtractor",
    "LLMFactExtractor",
    "MemoryConsolidator",
    "RelationExtractor",
    "RuleBasedEntityExtractor",
    "RuleBasedFactExtractor",
]

_LAZY = {
    "ActionKind": "sagewai.intelligence.consolidation._report",
    "ConsolidationAction": "sagewai.intelligence.consolidation._report",
    "ConsolidationOptions": "sagewai.intelligence.consolidation._config",
    "ConsolidationProgress": "sagewai.intelligence.consolidation._report",
    "ConsolidationReport": "sagewai.intelligence.consolidation._report",
    "ConsolidationSettings": "sagewai.intelligence.consolidation._config",
    "ContradictionStrategy": "sagewai.intelligence.consolidation._config",
    "ConversationGraphBuilder": "sagewai.intelligence._graph_builder",
    "EntityExtractor": "sagewai.intelligence._entities",
    "ExtractedFact": "sagewai.extraction._base",
    "FactExtractor": "sagewai.extraction._base",
    "GLiNEREntityExtractor": "sagewai.intelligence._entities",
    "GraphUpdateResult": "sagewai.intelligence._graph_builder",
    "HeuristicRelationExtractor": "sagewai.intelligence._relations",
    "HybridFactExtractor": "sagewai.extraction._hybrid",
    "LLMEntityExtractor": "sagewai.intelligence._entities",
    "LLMFactExtractor": "sagewai.extraction._llm",
    "MemoryConsolidator": "sagewai.intelligence.consolidation._consolidator",
    "RelationExtractor": "sagewai.intelligence._relations",
    "RuleBasedEntityExtractor": "sagewai.intelligence._rule_entities",
    "RuleBasedFactExtractor": "sagewai.extraction._rules",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
