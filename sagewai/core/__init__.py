"""The core layer: the records, scopes, query types, text rules and decisions all else stands on.

Nothing here imports another part of sagewai but the exception tree (:mod:`sagewai.errors`) and
the lazy-export helper. This package names what a backend of your own or a helper of the engine
speaks besides the records the root package names (:class:`~sagewai.Fact` and its kin):

* the query and row types the store contracts speak (:class:`FactQuery`, :class:`WriteBatch`,
  :class:`VectorFilter`, ...), and :class:`MemoryPort`, what the engine's helpers may read and
  write (``ctx.port``);
* :class:`ContextScope` and :class:`ScopeAddress`, the scope model every store filters on;
* conversation messages (:class:`ChatMessage`, :class:`Conversation`);
* the one tokeniser (:func:`keyword_terms`), the text rules (:func:`clean_text`) and the one
  predicate vocabulary of facts and the graph (:func:`normalize_predicate`).

Names load on first use, so importing this package loads neither pydantic models nor numpy.

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
    from sagewai.core._ids import context_record_id, fact_id_for, message_record_id
    from sagewai.core._lifecycle import Transition
    from sagewai.core._port import BatchQueue, MemoryPort
    from sagewai.core._predicates import (
        Predicate,
        is_single_valued,
        normalize_predicate,
        relation_predicate,
    )
    from sagewai.core._profile import PROFILE_TAG, Origin, ProfileKind, origin_of
    from sagewai.core._queries import (
        ChangeQuery,
        FactQuery,
        VectorFilter,
        VectorHit,
        VectorPayload,
        VectorRecord,
        WriteBatch,
    )
    from sagewai.core._records import new_id, utcnow
    from sagewai.core._scope import ContextScope, ScopeAddress, validate_identifier
    from sagewai.core._text import clean_json, clean_text, keyword_terms

__all__ = [
    "PROFILE_TAG",
    "BatchQueue",
    "ChangeQuery",
    "ChatMessage",
    "ContextScope",
    "Conversation",
    "FactQuery",
    "MemoryPort",
    "MessageLike",
    "Origin",
    "Predicate",
    "ProfileKind",
    "ScopeAddress",
    "Transition",
    "VectorFilter",
    "VectorHit",
    "VectorPayload",
    "VectorRecord",
    "WriteBatch",
    "clean_json",
    "clean_text",
    "context_record_id",
    "fact_id_for",
    "is_single_valued",
    "keyword_terms",
    "message_record_id",
    "new_id",
    "normalize_predicate",
    "origin_of",
    "relation_predicate",
    "utcnow",
    "validate_identifier",
]

_LAZY = {
    "context_record_id": "sagewai.core._ids",
    "fact_id_for": "sagewai.core._ids",
    "message_record_id": "sagewai.core._ids",
    "BatchQueue": "sagewai.core._port",
    "ChangeQuery": "sagewai.core._queries",
    "ChatMessage": "sagewai.core._conversation",
    "ContextScope": "sagewai.core._scope",
    "Conversation": "sagewai.core._conversation",
    "FactQuery": "sagewai.core._queries",
    "MemoryPort": "sagewai.core._port",
    "MessageLike": "sagewai.core._conversation",
    "Origin": "sagewai.core._profile",
    "PROFILE_TAG": "sagewai.core._profile",
    "Predicate": "sagewai.core._predicates",
    "ProfileKind": "sagewai.core._profile",
    "origin_of": "sagewai.core._profile",
    "ScopeAddress": "sagewai.core._scope",
    "Transition": "sagewai.core._lifecycle",
    "VectorFilter": "sagewai.core._queries",
    "VectorHit": "sagewai.core._queries",
    "VectorPayload": "sagewai.core._queries",
    "VectorRecord": "sagewai.core._queries",
    "WriteBatch": "sagewai.core._queries",
    "clean_json": "sagewai.core._text",
    "clean_text": "sagewai.core._text",
    "is_single_valued": "sagewai.core._predicates",
    "keyword_terms": "sagewai.core._text",
    "new_id": "sagewai.core._records",
    "normalize_predicate": "sagewai.core._predicates",
    "relation_predicate": "sagewai.core._predicates",
    "utcnow": "sagewai.core._records",
    "validate_identifier": "sagewai.core._scope",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
