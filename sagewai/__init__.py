"""sagewai: memory for LLM agents that learn from their own conversations.

The names below are the everyday API: the engine, the agent, the scope model and the records a
search returns. They are imported on first use, so ``import sagewai`` stays fast and loads no
numerical or model library. The other parts have their own doors: :mod:`sagewai.context` (the
memory bridge), :mod:`sagewai.intelligence` (consolidation, the graph builder, extractors),
:mod:`sagewai.stores` (backends), :mod:`sagewai.errors` (the exception tree).

Example:
    >>> from sagewai import ContextEngine, ContextScope
    >>> ContextScope.USER.contains(ContextScope.SESSION)
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai import _version
from sagewai._lazy import lazy_exports
from sagewai._logging import install_fallback_handler

if TYPE_CHECKING:
    from sagewai.agent._agent import UniversalAgent
    from sagewai.context._engine import ContextEngine
    from sagewai.context._ranking import SearchConfig
    from sagewai.core._fact_fields import FactFields
    from sagewai.core._records import (
        ChangeAction,
        Fact,
        FactChange,
        FactKind,
        FactStatus,
        FactType,
        Provenance,
        ScoreParts,
        SearchResult,
    )
    from sagewai.core._scope import ContextScope

__all__ = [
    "ChangeAction",
    "ContextEngine",
    "ContextScope",
    "Fact",
    "FactChange",
    "FactFields",
    "FactKind",
    "FactStatus",
    "FactType",
    "Provenance",
    "ScoreParts",
    "SearchConfig",
    "SearchResult",
    "UniversalAgent",
]

_LAZY = {
    "ChangeAction": "sagewai.core._records",
    "ContextEngine": "sagewai.context._engine",
    "ContextScope": "sagewai.core._scope",
    "Fact": "sagewai.core._records",
    "FactChange": "sagewai.core._records",
    "FactFields": "sagewai.core._fact_fields",
    "FactKind": "sagewai.core._records",
    "FactStatus": "sagewai.core._records",
    "FactType": "sagewai.core._records",
    "Provenance": "sagewai.core._records",
    "ScoreParts": "sagewai.core._records",
    "SearchConfig": "sagewai.context._ranking",
    "SearchResult": "sagewai.core._records",
    "UniversalAgent": "sagewai.agent._agent",
}

__version__ = _version.__version__

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)

# Warnings print as "WARNING sagewai.<part>: ..." when the application configured no logging.
install_fallback_handler()
