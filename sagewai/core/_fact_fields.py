"""FactFields: the typed keyword arguments of a fact, written once for every call that takes them.

``ContextEngine.add(content, **fields)`` is the most used call of the library. Its fields were
``**fields: Any``, so a misspelt ``user_ID=`` type-checked and failed at run time only. With
:class:`FactFields` and ``Unpack`` (PEP 692) the same calls are checked by mypy and pyright, and
``build_fact``, ``add``, ``add_document`` and ``supersede`` share one definition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TypedDict

from pydantic import JsonValue

from sagewai.core._records import FactKind, FactType, Provenance
from sagewai.core._scope import ContextScope

__all__ = ["FactFields"]


class FactFields(TypedDict, total=False):
    """The fields of a new fact besides its content (all optional).

    Example:
        >>> fields: FactFields = {"subject": "Alice", "fact_type": "preference"}
        >>> sorted(fields)
        ['fact_type', 'subject']
    """

    fact_type: FactType | str
    """What kind of statement it is, a :class:`~sagewai.FactType` (default ``general``)."""
    scope: ContextScope | str | None
    """USER when a ``user_id`` is given, else PROJECT; ``"session"`` keeps it session-local."""
    user_id: str | None
    """The user the fact belongs to (it is recalled in the user's later sessions)."""
    session_id: str | None
    """The session it came from (without ``scope="session"`` this only records where)."""
    subject: str | None
    """Who or what the fact is about (``forget(subject=...)`` finds it by this)."""
    predicate: str | None
    """The relation of a ``subject / predicate / object`` triple."""
    object: str | None
    """The value of the triple."""
    confidence: float
    """How sure the writer is, 0 to 1 (default 1)."""
    exact_values: Sequence[str]
    """Values kept verbatim (ids, paths, versions): never paraphrased, merged or decayed away."""
    tags: Sequence[str]
    """Labels to filter by."""
    metadata: Mapping[str, JsonValue] | None
    """Any JSON the caller wants kept with the fact."""
    source: Provenance | None
    """Where the fact came from (session, message, speaker, extractor)."""
    sources: Sequence[Provenance]
    """Several sources (a fact said more than once)."""
    kind: FactKind | str
    """``fact`` (default), ``message`` (verbatim) or ``document`` (a chunk)."""
    valid_from: datetime | None
    """When it became true (default: when it was stored)."""
    created_at: datetime | None
    """When it was stored (default: now)."""
    fact_id: str | None
    """A caller's own id (an id the store holds already is refused, never overwritten)."""
