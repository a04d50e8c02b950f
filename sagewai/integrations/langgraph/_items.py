"""The pure parts of the LangGraph store: item tags, item text, LangGraph's filter semantics.

No I/O here: what text an item is indexed by, which tags mark it, whether a value matches a
filter and whether a namespace matches a condition are decided by these functions alone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from langgraph.store.base import MatchCondition, SearchItem, get_text_at_path, tokenize_path

from sagewai.core import utcnow
from sagewai.core._records import Fact, FactStatus
from sagewai.errors import InvalidInputError

ITEM_TAG = "langgraph"
"""The tag every item of a :class:`SagewaiStore` carries."""
UNINDEXED_TAG = "langgraph:unindexed"
"""The tag of an item put with ``index=False``: its text is neither embedded nor searched."""
_META = "langgraph"
_TEXT_FIELDS = ("content", "text", "memory")
_LIVE = (FactStatus.ACTIVE, FactStatus.FLAGGED)
_PAGE = 1_000
MAX_NAMESPACE_DEPTH = 16


def _digest(*parts: object) -> str:
    raw = json.dumps(parts, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]


def namespace_tag(prefix: Sequence[str]) -> str:
    """The tag of every item whose namespace starts with ``prefix``."""
    return f"langgraph:ns:{_digest(*prefix)}" if prefix else ITEM_TAG


def item_tag(namespace: Sequence[str], key: str) -> str:
    """The tag of the one item at ``(namespace, key)``."""
    return f"langgraph:item:{_digest(list(namespace), key)}"


# ------------------------------------------------------------------------------- pure parts


def item_text(value: Mapping[str, Any], fields: Sequence[str] | None = None) -> str:
    """The text an item is embedded and keyword-indexed by.

    With ``fields`` (LangGraph's ``index`` paths, e.g. ``["content", "tags[*]"]``), the text at
    those paths; otherwise the first ``content``/``text``/``memory`` string (nested values of
    those keys are searched too, as LangMem stores ``{"content": {"content": ...}}``), else the
    value as JSON.
    """
    if fields:
        texts = [text for path in fields for text in get_text_at_path(value, tokenize_path(path))]
        if texts:
            return "\n".join(texts)
    found = _first_text(value)
    if found:
        return found
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _first_text(value: Any, depth: int = 0) -> str | None:
    if depth > 4 or not isinstance(value, Mapping):
        return None
    for name in _TEXT_FIELDS:
        field = value.get(name)
        if isinstance(field, str) and field.strip():
            return field
        nested = _first_text(field, depth + 1)
        if nested:
            return nested
    return None


def _compare(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            return all(_operator(actual, str(op), arg) for op, arg in wanted.items())
        if not isinstance(actual, Mapping):
            return False
        return all(_compare(actual.get(k), v) for k, v in wanted.items())
    return bool(actual == wanted)


def _operator(actual: Any, operator: str, argument: Any) -> bool:
    if operator == "$eq":
        return bool(actual == argument)
    if operator == "$ne":
        return bool(actual != argument)
    comparisons: dict[str, Callable[[Any, Any], bool]] = {
        "$gt": lambda a, b: a > b,
        "$gte": lambda a, b: a >= b,
        "$lt": lambda a, b: a < b,
        "$lte": lambda a, b: a <= b,
    }
    compare = comparisons.get(operator)
    if compare is None:
        raise InvalidInputError(f"unsupported filter operator {operator!r}")
    try:
        return actual is not None and compare(actual, argument)
    except TypeError:
        return False


_OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"})


def check_filter(where: Any, depth: int = 0) -> None:
    """Refuse a filter LangGraph's semantics do not define (an unknown ``$`` operator, ...)."""
    if where is None:
        return
    if not isinstance(where, Mapping) or depth > 8:
        raise InvalidInputError("a filter must be a mapping of keys to values or operators")
    for key, wanted in where.items():
        if not isinstance(key, str):
            raise InvalidInputError("filter keys must be strings")
        if key.startswith("$") and key not in _OPERATORS:
            raise InvalidInputError(f"unsupported filter operator {key!r}")
        if isinstance(wanted, Mapping):
            check_filter(wanted, depth + 1)


def matches_filter(value: Mapping[str, Any], where: Mapping[str, Any] | None) -> bool:
    """LangGraph's filter semantics: exact matches, nested keys, ``$eq $ne $gt $gte $lt $lte``.

    Example:
        >>> matches_filter({"kind": "note", "score": 5}, {"kind": "note", "score": {"$gt": 4}})
        True
    """
    if not where:
        return True
    return all(_compare(value.get(key), wanted) for key, wanted in where.items())


def _namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    pairs = (
        zip(namespace, path, strict=False)
        if condition.match_type == "prefix"
        else zip(reversed(namespace), reversed(path), strict=False)
    )
    return all(wanted == "*" or label == wanted for label, wanted in pairs)


# ------------------------------------------------------------------------------- item helpers


def _meta(fact: Fact | None) -> dict[str, Any]:
    if fact is None:
        return {}
    meta = fact.metadata.get(_META)
    return meta if isinstance(meta, dict) else {}


def _is_item_under(fact: Fact, prefix: Sequence[str]) -> bool:
    namespace = _meta(fact).get("namespace")
    return isinstance(namespace, list) and tuple(namespace[: len(prefix)]) == tuple(prefix)


def _value_matches(fact: Fact, where: Mapping[str, Any] | None) -> bool:
    value = _meta(fact).get("value")
    return isinstance(value, dict) and matches_filter(value, where)


def _expiry(ttl_minutes: float) -> str:
    return (utcnow() + timedelta(minutes=ttl_minutes)).isoformat()


TTL_FLOOR = 0.05
"""The weight at which an item's TTL runs out: decay's own archive floor."""


def ttl_weight(expires_at: str | None, ttl_minutes: float | None, now: datetime) -> float:
    """How much of an item's weight is left, decaying over its TTL without use.

    The TTL is read as a lifetime without use: the weight starts at 1 when the item is put or
    refreshed and falls exponentially to :data:`TTL_FLOOR` when the TTL runs out (the half-life
    is ``ttl / log2(1 / TTL_FLOOR)``, about a quarter of it), as decay fades an unused fact
    toward the floor where it is archived. An item without a TTL keeps its full weight.

    Example:
        >>> from datetime import UTC, datetime, timedelta
        >>> now = datetime(2026, 1, 1, tzinfo=UTC)
        >>> round(ttl_weight((now + timedelta(minutes=30)).isoformat(), 60, now), 3)
        0.224
        >>> ttl_weight(None, None, now)
        1.0
    """
    if expires_at is None or not ttl_minutes:
        return 1.0
    ends = datetime.fromisoformat(expires_at)
    idle = ttl_minutes - (ends - now).total_seconds() / 60.0
    return float(TTL_FLOOR ** (max(0.0, idle) / ttl_minutes))


def _expired(fact: Fact) -> bool:
    expires = _meta(fact).get("expires_at")
    return isinstance(expires, str) and datetime.fromisoformat(expires) <= utcnow()


def _weight(fact: Fact) -> float:
    meta = _meta(fact)
    ttl = meta.get("ttl_minutes")
    expires = meta.get("expires_at")
    return ttl_weight(
        expires if isinstance(expires, str) else None,
        float(ttl) if isinstance(ttl, int | float) else None,
        utcnow(),
    )


def unindexed_text(namespace: Sequence[str], key: str) -> str:
    """What an ``index=False`` item is stored as: its address, never its value's text."""
    return f"langgraph item {'/'.join(namespace)} {key}"


def _message_like(value: Mapping[str, Any]) -> bool:
    return isinstance(value.get("role"), str) and isinstance(value.get("content"), str)


def _item(fact: Fact, *, score: float | None = None) -> SearchItem:
    meta = _meta(fact)
    created = meta.get("created_at")
    return SearchItem(
        namespace=tuple(meta["namespace"]),
        key=str(meta["key"]),
        value=dict(meta["value"]),
        created_at=datetime.fromisoformat(created) if isinstance(created, str) else fact.created_at,
        updated_at=fact.created_at,
        score=score,
    )


def _check_namespace(namespace: Sequence[str], *, allow_empty: bool) -> None:
    if not namespace and not allow_empty:
        raise InvalidInputError("a namespace must have at least one label")
    if len(namespace) > MAX_NAMESPACE_DEPTH:
        raise InvalidInputError(f"a namespace has at most {MAX_NAMESPACE_DEPTH} labels")
    for label in namespace:
        if not isinstance(label, str) or not label or "." in label or "\x00" in label:
            raise InvalidInputError(
                f"namespace label {label!r} must be a non-empty string without '.' or NUL"
            )
