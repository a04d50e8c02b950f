"""The mechanisms that turn conversations into maintained memory.

* fact extraction: :class:`RuleBasedFactExtractor`, :class:`LLMFactExtractor`,
  :class:`HybridFactExtractor` behind the :class:`FactExtractor` protocol;
* consolidation: :class:`MemoryConsolidator` (dedup, decay, contradictions) and its
  :class:`ConsolidationReport`;
* the knowledge graph: :class:`ConversationGraphBuilder` with :class:`GLiNEREntityExtractor` or
  the rule-based entity extractor, and :class:`HeuristicRelationExtractor`.

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
    from sagewai.extraction import (
        ExtractedFact,
        ExtractionContext,
        FactExtractor,
        HybridFactExtractor,
        LLMFactExtractor,
        RuleBasedFactExtractor,
    )
    from sagewai.intelligence._entities import (
        EntityExtractor,
        GLiNEREntityExtractor,
        LLMEntityExtractor,
        RuleBasedEntityExtractor,
    )
    from sagewai.intelligence._graph_builder import ConversationGraphBuilder, GraphUpdateResult
    from sagewai.intelligence._relations import HeuristicRelationExtractor, RelationExtractor
    from sagewai.intelligence.consolidation import ConsolidationReport, MemoryConsolidator

__all__ = [
    "ConsolidationReport",
    "ConversationGraphBuilder",
    "EntityExtractor",
    "ExtractedFact",
    "ExtractionContext",
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
    "ConsolidationReport": "sagewai.intelligence.consolidation",
    "MemoryConsolidator": "sagewai.intelligence.consolidation",
    "EntityExtractor": "sagewai.intelligence._entities",
    "GLiNEREntityExtractor": "sagewai.intelligence._entities",
    "LLMEntityExtractor": "sagewai.intelligence._entities",
    "RuleBasedEntityExtractor": "sagewai.intelligence._entities",
    "ExtractedFact": "sagewai.extraction",
    "ExtractionContext": "sagewai.extraction",
    "FactExtractor": "sagewai.extraction",
    "HybridFactExtractor": "sagewai.extraction",
    "LLMFactExtractor": "sagewai.extraction",
    "RuleBasedFactExtractor": "sagewai.extraction",
    "ConversationGraphBuilder": "sagewai.intelligence._graph_builder",
    "GraphUpdateResult": "sagewai.intelligence._graph_builder",
    "HeuristicRelationExtractor": "sagewai.intelligence._relations",
    "RelationExtractor": "sagewai.intelligence._relations",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
