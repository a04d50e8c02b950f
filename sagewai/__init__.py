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
from sagewai.core._scope import ContextScope
from sagewai.errors import SagewaiError

if TYPE_CHECKING:
    from sagewai.agent import UniversalAgent
    from sagewai.context._engine import ContextEngine
    from sagewai.context._ranking import SearchConfig
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
    from sagewai.stores._project import ProjectStores

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
    "ContextEngine": "sagewai.context._engine",
    "SearchConfig": "sagewai.context._ranking",
    "ProjectStores": "sagewai.stores._project",
    "ChangeAction": "sagewai.core._records",
    "Fact": "sagewai.core._records",
    "FactChange": "sagewai.core._records",
    "FactKind": "sagewai.core._records",
    "FactStatus": "sagewai.core._records",
    "FactType": "sagewai.core._records",
    "Provenance": "sagewai.core._records",
    "ScoreParts": "sagewai.core._records",
    "SearchResult": "sagewai.core._records",
    "UniversalAgent": "sagewai.agent",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
