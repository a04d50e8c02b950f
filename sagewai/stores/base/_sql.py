"""What the SQL metadata stores share: row <-> record codecs and the filter builder.

SQLite and PostgreSQL keep facts in the same columns and answer :class:`FactQuery` with the same
``WHERE`` clauses; only placeholders, list membership and the time encoding differ. Those
differences live in a small :class:`Binder` per dialect, so the filter semantics are written once
here and checked against :meth:`FactQuery.matches` by the conformance suite.
"""

from __future__ import annotations

import functools
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import TypeAdapter

from sagewai.core._queries import ChangeQuery, FactQuery
from sagewai.core._records import (
    Fact,
    FactChange,
    FactKind,
    FactStatus,
    FactType,
    Provenance,
    assembled,
    complete_fields,
)
from sagewai.core._scope import ContextScope, scope_key
from sagewai.core._text import keyword_terms
from sagewai.errors import InvalidInputError

__all__ = [
    "CHANGE_COLUMNS",
    "FACT_COLUMNS",
    "Binder",
    "change_conditions",
    "change_from_row",
    "change_values",
    "equal_conditions",
    "fact_conditions",
    "fact_from_row",
    "fact_values",
    "fts5_match",
    "index_terms",
    "match_expression",
    "query_terms",
    "quote_lexeme",
    "to_json",
    "tsquery_literal",
    "tsvector_literal",
    "validated_fact_from_row",
    "visible_condition",
]

FACT_COLUMNS: tuple[str, ...] = (
    "id",
    "project_id",
    "scope",
    "scope_key",
    "org_id",
    "user_id",
    "session_id",
    "kind",
    "content",
    "fact_type",
    "confidence",
    "subject",
    "predicate",
    "object",
    "exact_values",
    "tags",
    "metadata",
    "sources",
    "created_at",
    "last_accessed_at",
    "valid_from",
    "valid_to",
    "status",
    "strength",
    "superseded_by",
    "merged_into",
)
"""Every stored field of a fact, in the order :func:`fact_values` returns them."""

FACT_TIME_COLUMNS = frozenset({"created_at", "last_accessed_at", "valid_from", "valid_to"})
FACT_LIST_COLUMNS = frozenset({"exact_values", "tags"})
FACT_JSON_COLUMNS = frozenset({"metadata", "sources"})

CHANGE_COLUMNS: tuple[str, ...] = (
    "id",
    "fact_id",
    "project_id",
    "action",
    "at",
    "actor",
    "rule",
    "reason",
    "related_fact_ids",
    "before",
    "after",
    "run_id",
)
"""Every stored field of an audit row, in the order :func:`change_values` returns them."""

_SOURCES = TypeAdapter(tuple[Provenance, ...])
_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_SCOPE_ID_FIELD = {
    ContextScope.ORG: "org_id",
    ContextScope.PROJECT: "project_id",
    ContextScope.USER: "user_id",
    ContextScope.SESSION: "session_id",
}
# The same word pattern as ``keyword_terms``; a unit test keeps the two in step.
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def to_json(value: object, what: str) -> str:
    """Serialise ``value`` as strict JSON (no NaN/Infinity, which PostgreSQL's json rejects).

    Raises:
        InvalidInputError: when ``value`` holds something JSON cannot represent.
    """
    if not value and isinstance(value, list | tuple | dict):
        return "{}" if isinstance(value, dict) else "[]"
    try:
        return _JSON.encode(value)
    except ValueError as exc:
        raise InvalidInputError(f"{what} must be JSON without NaN or Infinity: {exc}") from exc


def _from_json(text: str) -> Any:
    # Most facts have no sources, exact values or metadata: skip the parser for those.
    if text == "[]":
        return []
    if text == "{}":
        return {}
    return json.loads(text)


def fact_values(fact: Fact) -> tuple[Any, ...]:
    """The column values of ``fact`` in :data:`FACT_COLUMNS` order.

    Datetimes and string tuples are left as they are for the dialect to encode; ``metadata`` and
    ``sources`` become JSON text.
    """
    return (
        fact.id,
        fact.project_id,
        fact.scope.value,
        # Same key as ``fact.scope_key``, without re-validating the address (the fact is valid).
        scope_key(
            fact.scope,
            fact.project_id,
            getattr(fact, _SCOPE_ID_FIELD[fact.scope]),
            fact.user_id if fact.scope is ContextScope.SESSION else None,
        ),
        fact.org_id,
        fact.user_id,
        fact.session_id,
        fact.kind.value,
        fact.content,
        fact.fact_type.value,
        fact.confidence,
        fact.subject,
        fact.predicate,
        fact.object,
        fact.exact_values,
        fact.tags,
        to_json(fact.metadata, f"metadata of fact {fact.id}"),
        _SOURCES.dump_json(fact.sources).decode() if fact.sources else "[]",
        fact.created_at,
        fact.last_accessed_at,
        fact.valid_from,
        fact.valid_to,
        fact.status.value,
        fact.strength,
        fact.superseded_by,
        fact.merged_into,
    )


def _utc(value: datetime) -> datetime:
    """``value`` in UTC, as the records' time validator stores it."""
    return value if value.tzinfo is UTC else value.astimezone(UTC)


def _sources(value: Any) -> tuple[Provenance, ...]:
    listed = _from_json(value) if isinstance(value, str) else value
    if not listed:
        return ()
    if not isinstance(listed, list):
        return _SOURCES.validate_python(listed)
    return tuple(_source(item) for item in listed)


_PROVENANCE_FIELDS = frozenset(Provenance.model_fields)


def _source(item: Any) -> Provenance:
    """One stored source, rebuilt as :func:`fact_from_row` rebuilds its fact: it was a
    validated :class:`Provenance` when it was written (``_SOURCES.dump_json`` writes every
    field), so only its time is decoded; anything of another shape is validated. Every
    neighbour a write reads carries its sources, and validating them was a third of reading
    a row."""
    if not isinstance(item, dict) or item.keys() != _PROVENANCE_FIELDS:
        return Provenance.model_validate(item)
    when = item["timestamp"]
    if when is not None:
        try:
            parsed = datetime.fromisoformat(when)
        except (TypeError, ValueError):
            return Provenance.model_validate(item)
        if parsed.tzinfo is None:  # never written so; validation says what it means
            return Provenance.model_validate(item)
        item["timestamp"] = _utc(parsed)
    return assembled(Provenance, item, complete=True)


def _mapping(value: Any) -> Any:
    return _from_json(value) if isinstance(value, str) else dict(value)


def _string_tuple(value: Any) -> tuple[Any, ...]:
    return tuple(_from_json(value) if isinstance(value, str) else value)


def _member(enum: type[StrEnum]) -> Callable[[Any], Any]:
    """``enum(value)`` through a dict of its members (a fifth of the cost); an unknown value
    still fails as ``enum(value)`` does."""
    members = {member.value: member for member in enum}

    def decode(value: Any) -> Any:
        found = members.get(value)
        return enum(value) if found is None else found

    return decode


def _column_decoder(name: str) -> Callable[[Any], Any] | None:
    """How :func:`fact_from_row` turns a column into its field value (``None``: as it is)."""
    if name in FACT_LIST_COLUMNS:
        return _string_tuple
    decoders: dict[str, Callable[[Any], Any]] = {
        "scope": _member(ContextScope),
        "kind": _member(FactKind),
        "fact_type": _member(FactType),
        "status": _member(FactStatus),
        "confidence": float,
        "strength": float,
        "metadata": _mapping,
        "sources": _sources,
    }
    return decoders.get(name)


_SCOPE_KEY = FACT_COLUMNS.index("scope_key")


def _row_plan(
    decode_time: Callable[[Any], datetime | None],
) -> tuple[tuple[str, int, Callable[[Any], Any] | None], ...]:
    """``(field, column index, decoder or None)`` for every field of a fact row, the times
    decoded by ``decode_time`` (what :func:`_row_decoder` is generated from, once a dialect)."""

    def decode_utc(value: Any) -> datetime | None:
        when = decode_time(value)
        return None if when is None else _utc(when)

    return tuple(
        (name, index, decode_utc if name in FACT_TIME_COLUMNS else _column_decoder(name))
        for index, name in enumerate(FACT_COLUMNS)
        if index != _SCOPE_KEY
    )


@functools.cache
def _row_decoder(
    decode_time: Callable[[Any], datetime | None],
) -> Callable[[Sequence[Any]], dict[str, Any]]:
    """A function turning a fact row into its fields, in the fields' order (one per dialect).

    Generated from :func:`_row_plan` once, as :mod:`dataclasses` generates ``__init__``: one
    dict display with each column's decoder called in place, which builds a record's fields in
    a third of the time of a loop over the plan (2.3 against 6 microseconds; a search builds
    about a hundred facts). The names are the constant column names, checked to be exactly
    the fields of :class:`Fact`, so the records are assembled without checking each one.
    """
    plan = _row_plan(decode_time)
    if not complete_fields(Fact, [name for name, _, _ in plan]):
        raise TypeError("the fact columns no longer match the fields of Fact")
    namespace: dict[str, Any] = {f"decode_{i}": decode for _, i, decode in plan if decode}
    fields = ", ".join(
        f"{name!r}: " + (f"row[{i}]" if decode is None else f"decode_{i}(row[{i}])")
        for name, i, decode in plan
    )
    exec(f"def decode_row(row):\n    return {{{fields}}}\n", namespace)
    decoder: Callable[[Sequence[Any]], dict[str, Any]] = namespace["decode_row"]
    return decoder


def fact_from_row(row: Sequence[Any], decode_time: Callable[[Any], datetime | None]) -> Fact:
    """Rebuild a :class:`Fact` from a row selected in :data:`FACT_COLUMNS` order.

    A stored row was a validated :class:`Fact` when it was written, so the record is rebuilt
    without validation (:func:`~sagewai.core._records.assembled`) after decoding each column to
    the type validation would give it (enums, aware UTC times, tuples, floats,
    :class:`Provenance` records, which are validated), instead of running every field validator
    again: a search hydrates about a hundred rows, and re-validation was most of that cost. An
    unknown enum value still fails here. A unit test checks the result equals
    :func:`validated_fact_from_row` of the same row.

    Args:
        row: The column values.
        decode_time: Turns the dialect's stored time into an aware datetime (or ``None``): a
            module-level function, one per dialect (its decoding plan is kept for good).
    """
    if len(row) != len(FACT_COLUMNS):
        raise ValueError(f"a fact row has {len(FACT_COLUMNS)} columns, not {len(row)}")
    return assembled(Fact, _row_decoder(decode_time)(row), complete=True)


def validated_fact_from_row(
    row: Sequence[Any], decode_time: Callable[[Any], datetime | None]
) -> Fact:
    """:func:`fact_from_row` through full validation (what the fast path must equal)."""
    data: dict[str, Any] = {}
    for name, value in zip(FACT_COLUMNS, row, strict=True):
        if name in FACT_TIME_COLUMNS:
            data[name] = decode_time(value)
        elif name in FACT_JSON_COLUMNS or (name in FACT_LIST_COLUMNS and isinstance(value, str)):
            data[name] = _from_json(value)
        elif name in FACT_LIST_COLUMNS:
            data[name] = tuple(value)
        elif name == "scope_key":
            continue
        else:
            data[name] = value
    return Fact.model_validate(data)


def change_values(change: FactChange) -> tuple[Any, ...]:
    """The column values of ``change`` in :data:`CHANGE_COLUMNS` order (JSON fields as text)."""
    return (
        change.id,
        change.fact_id,
        change.project_id,
        change.action.value,
        change.at,
        change.actor,
        change.rule,
        change.reason,
        change.related_fact_ids,
        None if change.before is None else to_json(change.before, f"before of change {change.id}"),
        None if change.after is None else to_json(change.after, f"after of change {change.id}"),
        change.run_id,
    )


def change_from_row(
    row: Sequence[Any], decode_time: Callable[[Any], datetime | None]
) -> FactChange:
    """Rebuild a :class:`FactChange` from a row selected in :data:`CHANGE_COLUMNS` order."""
    data: dict[str, Any] = dict(zip(CHANGE_COLUMNS, row, strict=True))
    data["at"] = decode_time(data["at"])
    related = data["related_fact_ids"]
    data["related_fact_ids"] = json.loads(related) if isinstance(related, str) else tuple(related)
    for name in ("before", "after"):
        if data[name] is not None:
            data[name] = json.loads(data[name])
    return FactChange.model_validate(data)


def index_terms(text: str) -> list[str]:
    """Every word of ``text`` in order, normalised exactly as :func:`keyword_terms` does.

    ``keyword_terms`` de-duplicates and truncates (right for a query); an index needs every
    occurrence for term frequencies and positions.
    """
    return [match.group(0).lower() for match in _WORD.finditer(text)]


class Binder(ABC):
    """Collects the bound parameters of one statement and writes their placeholders.

    One instance per statement: :meth:`bind` appends a value and returns its placeholder, so the
    SQL text never holds a value, only ``?1``/``$1`` references to :attr:`values`.
    """

    def __init__(self) -> None:
        self.values: list[Any] = []

    @abstractmethod
    def placeholder(self, position: int) -> str:
        """The placeholder of the ``position``-th (1-based) parameter."""

    @abstractmethod
    def time(self, value: datetime) -> Any:
        """``value`` encoded as the dialect stores times."""

    @abstractmethod
    def one_of(self, column: str, values: Sequence[str]) -> str:
        """A condition: ``column`` equals one of ``values`` (bound as ONE parameter)."""

    @abstractmethod
    def tags_any(self, tags: Sequence[str]) -> str:
        """A condition: the fact row ``f`` carries at least one of ``tags``."""

    def bind(self, value: Any) -> str:
        """Append ``value`` to the parameters and return its placeholder."""
        self.values.append(value)
        return self.placeholder(len(self.values))


def _member_of(binder: Binder, column: str, values: Sequence[str]) -> str:
    """``column`` is one of ``values``: an equality for one value, else the store's list test.

    The equality matters to the planners: SQLite serves ``scope_key = ? ... ORDER BY
    created_at, id`` from the (scope_key, created_at, id) index, while for ``IN (SELECT ...
    json_each(?))`` it scans the table and sorts it, every page of a scan (0.3 s a page at 1M
    facts).
    """
    if len(values) == 1:
        return f"{column} = {binder.bind(values[0])}"
    return binder.one_of(column, values)


def fact_conditions(query: FactQuery, binder: Binder, *, paginate: bool) -> list[str]:
    """The ``WHERE`` conditions (ANDed) over fact rows aliased ``f`` that answer ``query``.

    The semantics are those of :meth:`FactQuery.matches` plus ``updated_since`` and, when
    ``paginate`` is true, the ``after`` keyset position.
    """
    out: list[str] = []
    if query.scope_keys is not None:
        out.append(_member_of(binder, "f.scope_key", query.scope_keys))
    else:
        out.append(f"f.project_id = {binder.bind(query.project_id)}")
    if query.ids is not None:
        out.append(_member_of(binder, "f.id", query.ids) if query.ids else "FALSE")
    for column in ("subject", "user_id", "session_id"):
        value = getattr(query, column)
        if value is not None:
            out.append(f"f.{column} = {binder.bind(value)}")
    if query.subjects is not None:
        out.append(_member_of(binder, "f.subject", query.subjects) if query.subjects else "FALSE")
    for column, members in (
        ("status", query.statuses),
        ("kind", query.kinds),
        ("fact_type", query.fact_types),
    ):
        if members is not None:
            out.append(_member_of(binder, f"f.{column}", [m.value for m in members]))
    if query.tags_any is not None:
        out.append(binder.tags_any(query.tags_any) if query.tags_any else "FALSE")
    if query.valid_at is not None:
        when = binder.bind(binder.time(query.valid_at))
        out.append(
            f"f.created_at <= {when} AND COALESCE(f.valid_from, f.created_at) <= {when}"
            f" AND (f.valid_to IS NULL OR f.valid_to > {when})"
        )
    if query.updated_since is not None:
        out.append(f"f.updated_at >= {binder.bind(binder.time(query.updated_since))}")
    if paginate and query.after is not None:
        created, fact_id = query.after
        out.append(
            f"(f.created_at, f.id) > ({binder.bind(binder.time(created))}, {binder.bind(fact_id)})"
        )
    return out


def change_conditions(query: ChangeQuery, binder: Binder) -> str:
    """The ``WHERE`` clause (ANDed conditions) over audit rows that answers ``query``."""
    where = [f"project_id = {binder.bind(query.project_id)}"]
    if query.fact_id is not None:
        where.append(f"fact_id = {binder.bind(query.fact_id)}")
    if query.run_id is not None:
        where.append(f"run_id = {binder.bind(query.run_id)}")
    if query.since is not None:
        where.append(f"at >= {binder.bind(binder.time(query.since))}")
    return " AND ".join(where)


def equal_conditions(
    alias: str, values: Sequence[tuple[str, object]], params: list[Any], mark: str
) -> str:
    """``alias.column = <param>`` for each pair whose value is set, ANDed (``1 = 1`` if none).

    Each value is appended to ``params`` and written as ``mark`` plus its 1-based position
    (``"?"`` for SQLite, ``"$"`` for PostgreSQL), so the SQL text never holds a value.

    Example:
        >>> params: list[Any] = []
        >>> equal_conditions("e", [("project_id", "p"), ("user_id", None)], params, "$"), params
        ('1 = 1 AND e.project_id = $1', ['p'])
    """
    out = ["1 = 1"]
    for column, value in values:
        if value is not None:
            params.append(value)
            out.append(f"{alias}.{column} = {mark}{len(params)}")
    return " AND ".join(out)


def visible_condition(project_id: str, binder: Binder) -> str:
    """Rows ``get`` may return: the project's own facts and ORG facts shared across projects."""
    return (
        f"(f.project_id = {binder.bind(project_id)}"
        f" OR f.scope = {binder.bind(ContextScope.ORG.value)})"
    )


# -- keyword query building (pure: the only path from user text to a full-text engine) ---------

_MAX_LEXEME_BYTES = 2046
_MAX_POSITION = 16383
_MAX_POSITIONS_PER_LEXEME = 256


def match_expression(text: str) -> str | None:
    """The FTS5 ``MATCH`` expression for ``text``: its terms quoted and OR-joined.

    ``None`` when ``text`` has no word at all. Only :func:`keyword_terms` output is used, and each
    term is a quoted FTS5 string (inner quotes doubled), so operators such as ``NEAR(``, ``*``,
    ``-`` or ``"`` in user text are never interpreted.

    Example:
        >>> match_expression('tea "OR" NEAR(coffee*')
        '"tea" OR "or" OR "near" OR "coffee"'
    """
    terms = keyword_terms(text)
    return fts5_match(terms) if terms else None


def fts5_match(terms: Sequence[str], *, all_terms: bool = False) -> str:
    """``terms`` as FTS5 strings (inner quotes doubled), OR-joined (AND-joined with all_terms)."""
    joiner = " AND " if all_terms else " OR "
    return joiner.join('"' + term.replace('"', '""') + '"' for term in terms)


def quote_lexeme(text: str) -> str:
    """A lexeme quoted for tsvector/tsquery input (our terms never need it; defence in depth)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(text: str) -> str:
    """The ``tsvector`` of ``text``: its words with positions, split as ``keyword_terms`` does.

    Built here rather than by ``to_tsvector`` so that PostgreSQL's parser (which keeps
    ``alice@example.com`` as one token, and depends on the database locale) cannot disagree with
    the query side. Limits of the type are respected: over-long words are skipped, positions
    stop at 16383 and at 256 per word.

    Example:
        >>> tsvector_literal("Tea, then tea again")
        "'tea':1,3 'then':2 'again':4"
    """
    positions: dict[str, list[int]] = {}
    for index, term in enumerate(index_terms(text), start=1):
        if len(term.encode()) > _MAX_LEXEME_BYTES:
            continue
        seen = positions.setdefault(term, [])
        position = min(index, _MAX_POSITION)
        if len(seen) < _MAX_POSITIONS_PER_LEXEME and (not seen or seen[-1] != position):
            seen.append(position)
    return " ".join(
        f"{quote_lexeme(term)}:{','.join(map(str, places))}" for term, places in positions.items()
    )


def query_terms(text: str) -> list[str]:
    """The terms of ``text`` that fit in a lexeme (PostgreSQL refuses words over 2 KB)."""
    return [term for term in keyword_terms(text) if len(term.encode()) <= _MAX_LEXEME_BYTES]


def tsquery_literal(terms: Sequence[str]) -> str | None:
    """The OR ``tsquery`` of ``terms``, each a quoted lexeme; ``None`` when there is none.

    Example:
        >>> tsquery_literal(query_terms("tea & !coffee | 'x"))
        "'tea' | 'coffee' | 'x'"
    """
    return " | ".join(quote_lexeme(term) for term in terms) if terms else None
