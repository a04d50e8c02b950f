"""The core layer: the records, scopes, query types, text rules and decisions all else stands on.

Nothing here imports another part of sagewai but the exception tree (:mod:`sagewai.errors`) and
the lazy-export helper:

* records: facts and their audit rows (:class:`Fact`, :class:`FactChange`), conversation
  messages, episodes, graph entities and relations;
* :class:`ContextScope` and :class:`ScopeAddress`, the scope model every store filters on;
* the query and row types the store contracts speak (:class:`FactQuery`, :class:`WriteBatch`,
  :class:`VectorFilter`, ...) and the :class:`Embedder` protocol;
* the one tokeniser (:func:`keyword_terms`) and the text rules (:func:`clean_text`);
* :mod:`sagewai.core._lifecycle`, every fact transition and the audit row it writes;
* :mod:`sagewai.core._predicates`, the one predicate vocabulary of facts and the graph.

A third-party backend needs only these names and the contracts in :mod:`sagewai.stores`. Names
load on first use, so importing this package loads neither pydantic models nor numpy.

Example:
    >>> from sagewai.core import FactQuery, keyword_terms, normalize_predicate
    >>> keyword_terms("Alice moved to Lisbon"), normalize_predicate("moved to")
    (['alice', 'moved', 'to', 'lisbon'], 'lives_in')
    >>> FactQuery(project_id="demo", subject="alice").limit is None
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports

if TYPE_CHECKING:
    from sagewai.core._conversation import ChatMessage, Conversation, MessageLike
    from sagewai.core._embedder import Embedder, Vector, Vectors
    from sagewai.core._episode_records import Episode, EpisodeFilter
    from sagewai.core._graph_matching import name_key
    from sagewai.core._graph_records import (
        Entity,
        GraphCounts,
        GraphDeletion,
        GraphPath,
        Neighbourhood,
        Relation,
    )
    from sagewai.core._lifecycle import Transition
    from sagewai.core._predicates import (
        Predicate,
        is_single_valued,
        normalize_predicate,
        relation_predicate,
    )
    from sagewai.core._queries import (
        ChangeQuery,
        FactQuery,
        VectorFilter,
        VectorHit,
        VectorPayload,
        VectorRecord,
        WriteBatch,
    )
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
        new_id,
        utcnow,
    )
    from sagewai.core._scope import ContextScope, ScopeAddress, validate_identifier
    from sagewai.core._text import clean_json, clean_text, keyword_terms

__all__ = [
    "ChangeAction",
    "ChangeQuery",
    "ChatMessage",
    "ContextScope",
    "Conversation",
    "Embedder",
    "Entity",
    "Episode",
    "EpisodeFilter",
    "Fact",
    "FactChange",
    "FactKind",
    "FactQuery",
    "FactStatus",
    "FactType",
    "GraphCounts",
    "GraphDeletion",
    "GraphPath",
    "MessageLike",
    "Neighbourhood",
    "Predicate",
    "Provenance",
    "Relation",
    "ScopeAddress",
    "ScoreParts",
    "SearchResult",
    "Transition",
    "Vector",
    "VectorFilter",
    "VectorHit",
    "VectorPayload",
    "VectorRecord",
    "Vectors",
    "WriteBatch",
    "clean_json",
    "clean_text",
    "is_single_valued",
    "keyword_terms",
    "name_key",
    "new_id",
    "normalize_predicate",
    "relation_predicate",
    "utcnow",
    "validate_identifier",
]

_LAZY = {
    "ContextScope": "sagewai.core._scope",
    "ScopeAddress": "sagewai.core._scope",
    "validate_identifier": "sagewai.core._scope",
    "clean_json": "sagewai.core._text",
    "clean_text": "sagewai.core._text",
    "keyword_terms": "sagewai.core._text",
    "ChangeAction": "sagewai.core._records",
    "Fact": "sagewai.core._records",
    "FactChange": "sagewai.core._records",
    "FactKind": "sagewai.core._records",
    "FactStatus": "sagewai.core._records",
    "FactType": "sagewai.core._records",
    "Provenance": "sagewai.core._records",
    "ScoreParts": "sagewai.core._records",
    "SearchResult": "sagewai.core._records",
    "new_id": "sagewai.core._records",
    "utcnow": "sagewai.core._records",
    "ChatMessage": "sagewai.core._conversation",
    "Conversation": "sagewai.core._conversation",
    "MessageLike": "sagewai.core._conversation",
    "Episode": "sagewai.core._episode_records",
    "EpisodeFilter": "sagewai.core._episode_records",
    "Entity": "sagewai.core._graph_records",
    "GraphCounts": "sagewai.core._graph_records",
    "GraphDeletion": "sagewai.core._graph_records",
    "GraphPath": "sagewai.core._graph_records",
    "Neighbourhood": "sagewai.core._graph_records",
    "Relation": "sagewai.core._graph_records",
    "name_key": "sagewai.core._graph_matching",
    "ChangeQuery": "sagewai.core._queries",
    "FactQuery": "sagewai.core._queries",
    "VectorFilter": "sagewai.core._queries",
    "VectorHit": "sagewai.core._queries",
    "VectorPayload": "sagewai.core._queries",
    "VectorRecord": "sagewai.core._queries",
    "WriteBatch": "sagewai.core._queries",
    "Embedder": "sagewai.core._embedder",
    "Vector": "sagewai.core._embedder",
    "Vectors": "sagewai.core._embedder",
    "Transition": "sagewai.core._lifecycle",
    "Predicate": "sagewai.core._predicates",
    "is_single_valued": "sagewai.core._predicates",
    "normalize_predicate": "sagewai.core._predicates",
    "relation_predicate": "sagewai.core._predicates",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
