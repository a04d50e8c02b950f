"""The core layer: the records, scopes, query types, text rules and decisions all else stands on.

Nothing here imports another part of sagewai but the exception tree (:mod:`sagewai.errors`) and
the lazy-export helper:

* records: facts and their audit rows (:class:`Fact`, :class:`FactChange`), conversation
  messages, episodes, graph entities and relations;
* :class:`ContextScope` and :class:`ScopeAddress`, the scope model every store filters on;
* the query and row types the store contracts speak (:class:`FactQuery`, :class:`WriteBatch`,
  :class:`VectorFilter`, ...) and the :class:`Embedder` protocol;
* the one tokeniser (:func:`keyword_terms`) and the text rules (:func:`clean_text`);
* :mod:`sagewai.core.lifecycle`, every fact transition and the audit row it writes;
* :mod:`sagewai.core.predicates`, the one predicate vocabulary of facts and the graph.

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
    from sagewai.core.conversation import ChatMessage, Conversation, MessageLike
    from sagewai.core.embedder import Embedder, Vector, Vectors
    from sagewai.core.episode_records import Episode, EpisodeFilter
    from sagewai.core.graph_matching import name_key
    from sagewai.core.graph_records import (
        Entity,
        GraphCounts,
        GraphDeletion,
        GraphPath,
        Neighbourhood,
        Relation,
    )
    from sagewai.core.lifecycle import Transition
    from sagewai.core.predicates import (
        Predicate,
        is_single_valued,
        normalize_predicate,
        relation_predicate,
    )
    from sagewai.core.queries import (
        ChangeQuery,
        FactQuery,
        VectorFilter,
        VectorHit,
        VectorPayload,
        VectorRecord,
        WriteBatch,
    )
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
        new_id,
        utcnow,
    )
    from sagewai.core.scope import ContextScope, ScopeAddress, validate_identifier
    from sagewai.core.text import clean_json, clean_text, keyword_terms

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
    "ContextScope": "sagewai.core.scope",
    "ScopeAddress": "sagewai.core.scope",
    "validate_identifier": "sagewai.core.scope",
    "clean_json": "sagewai.core.text",
    "clean_text": "sagewai.core.text",
    "keyword_terms": "sagewai.core.text",
    "ChangeAction": "sagewai.core.records",
    "Fact": "sagewai.core.records",
    "FactChange": "sagewai.core.records",
    "FactKind": "sagewai.core.records",
    "FactStatus": "sagewai.core.records",
    "FactType": "sagewai.core.records",
    "Provenance": "sagewai.core.records",
    "ScoreParts": "sagewai.core.records",
    "SearchResult": "sagewai.core.records",
    "new_id": "sagewai.core.records",
    "utcnow": "sagewai.core.records",
    "ChatMessage": "sagewai.core.conversation",
    "Conversation": "sagewai.core.conversation",
    "MessageLike": "sagewai.core.conversation",
    "Episode": "sagewai.core.episode_records",
    "EpisodeFilter": "sagewai.core.episode_records",
    "Entity": "sagewai.core.graph_records",
    "GraphCounts": "sagewai.core.graph_records",
    "GraphDeletion": "sagewai.core.graph_records",
    "GraphPath": "sagewai.core.graph_records",
    "Neighbourhood": "sagewai.core.graph_records",
    "Relation": "sagewai.core.graph_records",
    "name_key": "sagewai.core.graph_matching",
    "ChangeQuery": "sagewai.core.queries",
    "FactQuery": "sagewai.core.queries",
    "VectorFilter": "sagewai.core.queries",
    "VectorHit": "sagewai.core.queries",
    "VectorPayload": "sagewai.core.queries",
    "VectorRecord": "sagewai.core.queries",
    "WriteBatch": "sagewai.core.queries",
    "Embedder": "sagewai.core.embedder",
    "Vector": "sagewai.core.embedder",
    "Vectors": "sagewai.core.embedder",
    "Transition": "sagewai.core.lifecycle",
    "Predicate": "sagewai.core.predicates",
    "is_single_valued": "sagewai.core.predicates",
    "normalize_predicate": "sagewai.core.predicates",
    "relation_predicate": "sagewai.core.predicates",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
