"""The four store contracts, in one place: what a backend implements, whatever its technology.

* :class:`MetadataStore`: facts and their audit log (``apply`` a :class:`WriteBatch`, ``query`` a
  :class:`FactQuery`, ``keyword_search``, project state and locks);
* :class:`VectorStore`: vectors with a filterable payload (``search_many`` is the one search core;
  ``search`` is a batch of one);
* :class:`GraphMemory`: entities and time-bounded relations per project (a narrow ``_apply`` /
  ``_get_entities`` / ... core; traversal, matching and forgetting are written once here);
* :class:`EpisodeStoreBase`: whole sessions (a narrow ``_put`` / ``_load`` / ``_keyword`` / ...
  core; validation, summaries, hybrid ranking and forgetting are written once here).

Every backend in :mod:`sagewai.stores` subclasses one of these and passes its conformance suite in
:mod:`sagewai.testing.conformance`; a backend of your own does the same.

Example:
    >>> from sagewai.stores.base import MetadataStore, VectorStore
    >>> from sagewai.stores import InMemoryMetadataStore, InMemoryVectorStore
    >>> isinstance(InMemoryMetadataStore(), MetadataStore)
    True
    >>> isinstance(InMemoryVectorStore(4), VectorStore)
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports

if TYPE_CHECKING:
    from sagewai.core.queries import (
        ChangeQuery,
        FactQuery,
        VectorFilter,
        VectorHit,
        VectorPayload,
        VectorRecord,
        WriteBatch,
    )
    from sagewai.stores.base.episodes import EpisodeStoreBase
    from sagewai.stores.base.graph import GraphMemory, GraphWrite, ProjectGraph
    from sagewai.stores.base.metadata import MetadataStore
    from sagewai.stores.base.vector import ProjectVectorStore, VectorStore

__all__ = [
    "ChangeQuery",
    "EpisodeStoreBase",
    "FactQuery",
    "GraphMemory",
    "GraphWrite",
    "MetadataStore",
    "ProjectGraph",
    "ProjectVectorStore",
    "VectorFilter",
    "VectorHit",
    "VectorPayload",
    "VectorRecord",
    "VectorStore",
    "WriteBatch",
]

_LAZY = {
    "ChangeQuery": "sagewai.stores.base.metadata",
    "EpisodeStoreBase": "sagewai.stores.base.episodes",
    "FactQuery": "sagewai.stores.base.metadata",
    "GraphMemory": "sagewai.stores.base.graph",
    "GraphWrite": "sagewai.stores.base.graph",
    "MetadataStore": "sagewai.stores.base.metadata",
    "ProjectGraph": "sagewai.stores.base.graph",
    "ProjectVectorStore": "sagewai.stores.base.vector",
    "VectorFilter": "sagewai.stores.base.vector",
    "VectorHit": "sagewai.stores.base.vector",
    "VectorPayload": "sagewai.stores.base.vector",
    "VectorRecord": "sagewai.stores.base.vector",
    "VectorStore": "sagewai.stores.base.vector",
    "WriteBatch": "sagewai.stores.base.metadata",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
