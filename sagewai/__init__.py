"""sagewai: memory for LLM agents that learn from their own conversations.

The names below are the public API. They are imported on first use, so ``import sagewai`` stays
fast and loads no numerical or model library.

Example:
    >>> from sagewai import ContextEngine, ContextScope
    >>> ContextScope.USER.contains(ContextScope.SESSION)
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports
from sagewai.core.scope import ContextScope
from sagewai.errors import SagewaiError

if TYPE_CHECKING:
    from sagewai.agent import UniversalAgent
    from sagewai.context.engine import ContextEngine
    from sagewai.context.ranking import SearchConfig
    from sagewai.context.stores import ProjectStores
    from sagewai.core.records import (
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

__all__ = [
    "ChangeAction",
    "ContextEngine",
    "ContextScope",
    "Fact",
    "FactChange",
    "FactKind",
    "FactStatus",
    "FactType",
    "ProjectStores",
    "Provenance",
    "SagewaiError",
    "ScoreParts",
    "SearchConfig",
    "SearchResult",
    "UniversalAgent",
]
__version__ = "0.1.0"

_LAZY = {
    "ContextEngine": "sagewai.context.engine",
    "SearchConfig": "sagewai.context.ranking",
    "ProjectStores": "sagewai.context.stores",
    "ChangeAction": "sagewai.core.records",
    "Fact": "sagewai.core.records",
    "FactChange": "sagewai.core.records",
    "FactKind": "sagewai.core.records",
    "FactStatus": "sagewai.core.records",
    "FactType": "sagewai.core.records",
    "Provenance": "sagewai.core.records",
    "ScoreParts": "sagewai.core.records",
    "SearchResult": "sagewai.core.records",
    "UniversalAgent": "sagewai.agent",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
