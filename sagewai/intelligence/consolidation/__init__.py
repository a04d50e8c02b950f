"""Memory consolidation: merge near-duplicates, decay unused facts, reconcile contradictions.

Run it on a schedule (``sagewai consolidate``, see docs/consolidation.md) or from code:

    report = await MemoryConsolidator(context_engine=ctx).consolidate(dry_run=True)
"""

from sagewai.intelligence.consolidation._config import ConsolidationSettings, ContradictionStrategy
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
    "ConsolidationProgress",
    "ConsolidationReport",
    "ConsolidationSettings",
    "ContradictionStrategy",
    "MemoryConsolidator",
]
