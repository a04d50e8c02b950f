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
    from sagewai.core._queries import (
        ChangeQuery,
        FactQuery,
        VectorFilter,
        VectorHit,
        VectorPayload,
        VectorRecord,
        WriteBatch,
    )
    from sagewai.stores.base._episodes import EpisodeStoreBase
    from sagewai.stores.base._graph import GraphMemory, GraphWrite, ProjectGraph
    from sagewai.stores.base._metadata import MetadataStore
    from sagewai.stores.base._vector import ProjectVectorStore, VectorStore

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
    "ChangeQuery": "sagewai.stores.base._metadata",
    "EpisodeStoreBase": "sagewai.stores.base._episodes",
    "FactQuery": "sagewai.stores.base._metadata",
    "GraphMemory": "sagewai.stores.base._graph",
    "GraphWrite": "sagewai.stores.base._graph",
    "MetadataStore": "sagewai.stores.base._metadata",
    "ProjectGraph": "sagewai.stores.base._graph",
    "ProjectVectorStore": "sagewai.stores.base._vector",
    "VectorFilter": "sagewai.stores.base._vector",
    "VectorHit": "sagewai.stores.base._vector",
    "VectorPayload": "sagewai.stores.base._vector",
    "VectorRecord": "sagewai.stores.base._vector",
    "VectorStore": "sagewai.stores.base._vector",
    "WriteBatch": "sagewai.stores.base._metadata",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
