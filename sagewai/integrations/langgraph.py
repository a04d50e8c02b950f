"""LangGraph on sagewai memory: a ``BaseStore``, a recall hook and memory tools.

Why: agent builders already write LangGraph graphs and LangMem managers against LangGraph's
``BaseStore``. :class:`SagewaiStore` is that store over a :class:`ContextEngine`, so
``graph.compile(store=SagewaiStore(engine))`` gives every node sagewai's hybrid search, scopes,
audit history and forgetting, and what a graph stores is recalled by sagewai's own agent too.

How namespaces map onto scopes (``user_namespaces`` and ``session_namespaces`` set the labels):

======================================  ========================================================
namespace                               stored at
======================================  ========================================================
``("users", user_id, ...)``             USER scope of ``user_id`` (read in all their sessions)
``("sessions", session_id, ...)``       SESSION scope of ``session_id``
anything else, e.g. ``("docs", "faq")`` PROJECT scope
======================================  ========================================================

Each item is one fact: its text (the value's ``content``/``text``/``memory`` string, the fields
named by ``index``, or the value as JSON) is embedded and keyword-indexed; the value, namespace
and key ride in ``fact.metadata["langgraph"]``; tags mark the item and every prefix of its
namespace. A ``put`` over an existing key supersedes the old fact (its history stays, and
``engine.search(..., as_of=...)`` still finds what was believed then); ``delete`` deletes every
version with an audit tombstone. A ``ttl`` (minutes) sets an expiry: expired items are left out
of reads and removed by :meth:`SagewaiStore.sweep_expired`; ``refresh_ttl`` pushes it on read.
Decay and consolidation apply to items like to any fact.

Needs the ``langgraph`` extra: ``pip install "sagewai[langgraph]"``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sagewai.context.scope import ContextScope
from sagewai.errors import InvalidInputError, MissingDependencyError
from sagewai.records import Fact, FactStatus, utcnow
from sagewai.stores.metadata import FactQuery

try:
    from langchain_core.messages import AnyMessage, SystemMessage
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import BaseTool, StructuredTool
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        TTLConfig,
        get_text_at_path,
        tokenize_path,
    )
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise MissingDependencyError(
        exc.name or "langgraph", "langgraph", "sagewai.integrations.langgraph"
    ) from exc

if TYPE_CHECKING:
    from sagewai.context.bridge import MemoryBridge
    from sagewai.context.engine import ContextEngine

__all__ = [
    "SagewaiStore",
    "make_memory_tools",
    "make_recall_hook",
    "make_recall_node",
    "matches_filter",
    "recall_text",
]

ITEM_TAG = "langgraph"
"""The tag every item of a :class:`SagewaiStore` carries."""
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


# ------------------------------------------------------------------------------- the store


class SagewaiStore(BaseStore):
    """LangGraph's ``BaseStore`` over a sagewai :class:`ContextEngine`.

    Implements the narrow core (:meth:`abatch`, and :meth:`batch` for sync graphs) and inherits
    ``get/put/search/delete/list_namespaces`` and their async twins from ``BaseStore``.

    Args:
        engine: The project's engine; every item is a fact of its project.
        user_namespaces: First namespace labels whose second label is a user id (USER scope).
        session_namespaces: First namespace labels whose second label is a session id.
        index: Default text paths of a value (LangGraph ``index`` syntax); see :func:`item_text`.
        ttl: LangGraph TTL settings (``default_ttl`` minutes, ``refresh_on_read``).
        bridge: When given, a message-like value (``{"role": ..., "content": ...}``) is also
            sent through this bridge, which learns facts from it for sagewai's own recall.

    Example:
        >>> import asyncio
        >>> from sagewai import ContextEngine
        >>> from sagewai.testing import FakeEmbedder
        >>> async def demo() -> str:
        ...     store = SagewaiStore(ContextEngine.in_memory(embedder=FakeEmbedder()))
        ...     await store.aput(("users", "alice", "memories"), "tea",
        ...                      {"content": "Alice prefers green tea"})
        ...     found = await store.asearch(("users", "alice"), query="what does Alice drink?")
        ...     return found[0].value["content"]
        >>> asyncio.run(demo())
        'Alice prefers green tea'
    """

    supports_ttl: bool = True

    def __init__(
        self,
        engine: ContextEngine,
        *,
        user_namespaces: Sequence[str] = ("users",),
        session_namespaces: Sequence[str] = ("sessions",),
        index: Sequence[str] | None = None,
        ttl: TTLConfig | None = None,
        bridge: MemoryBridge | None = None,
    ) -> None:
        self.engine = engine
        self.user_namespaces = frozenset(user_namespaces)
        self.session_namespaces = frozenset(session_namespaces)
        self.index_fields = None if index is None else tuple(index)
        self.ttl_config = ttl
        self.bridge = bridge
        self._loop: asyncio.AbstractEventLoop | None = None

    # ---------------------------------------------------------------- scopes

    def scope_of(self, namespace: Sequence[str]) -> dict[str, Any]:
        """The engine scope arguments (``scope``, ``user_id``, ``session_id``) of a namespace."""
        if len(namespace) >= 2 and namespace[0] in self.user_namespaces:
            return {"scope": ContextScope.USER, "user_id": namespace[1]}
        if len(namespace) >= 2 and namespace[0] in self.session_namespaces:
            return {"scope": ContextScope.SESSION, "session_id": namespace[1]}
        return {"scope": ContextScope.PROJECT}

    def _pins_scope(self, prefix: Sequence[str]) -> bool:
        if not prefix:
            return False
        if prefix[0] in self.user_namespaces or prefix[0] in self.session_namespaces:
            return len(prefix) >= 2
        return True

    # ---------------------------------------------------------------- the core

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` from synchronous code (a sync graph node or tool).

        Called from a thread while the loop the store last ran on is running, the work goes to
        that loop (connection pools stay on their loop); with no loop in sight it runs in a new
        one. Inside a running event loop use the async methods (``aget``, ``aput``, ...).
        """
        ops = list(ops)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise InvalidInputError(
                "SagewaiStore's sync methods cannot run inside an event loop: use aget/aput/"
                "asearch/adelete/alist_namespaces (or abatch)"
            )
        loop = self._loop
        if loop is not None and loop.is_running() and not loop.is_closed():
            future: Future[list[Result]] = asyncio.run_coroutine_threadsafe(self.abatch(ops), loop)
            return future.result()
        return _run_in_new_loop(self.abatch(ops))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order; results line up with them (``None`` for puts)."""
        self._loop = asyncio.get_running_loop()
        await self.engine.open()
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(await self._get(op))
            elif isinstance(op, SearchOp):
                results.append(await self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(await self._list_namespaces(op))
            elif isinstance(op, PutOp):
                await self._put(op)
                results.append(None)
            else:
                raise InvalidInputError(f"unknown store operation {type(op).__name__}")
        return results

    # ---------------------------------------------------------------- reading

    async def _versions(
        self, namespace: Sequence[str], key: str, *, statuses: Sequence[FactStatus] | None = _LIVE
    ) -> list[Fact]:
        scope = self.scope_of(namespace)
        found: list[Fact] = []
        after: tuple[datetime, str] | None = None
        while True:
            page = await self.engine.list(
                **scope,
                tags=[item_tag(namespace, key)],
                statuses=statuses,
                limit=_PAGE,
                after=after,
            )
            found.extend(page)
            if len(page) < _PAGE:
                break
            after = (page[-1].created_at, page[-1].id)
        return [
            fact
            for fact in found
            if _meta(fact).get("key") == key
            and tuple(_meta(fact).get("namespace", ())) == tuple(namespace)
        ]

    async def _current(self, namespace: Sequence[str], key: str) -> Fact | None:
        versions = await self._versions(namespace, key)
        return versions[-1] if versions else None

    async def _get(self, op: GetOp) -> Item | None:
        _check_namespace(op.namespace, allow_empty=False)
        fact = await self._current(op.namespace, op.key)
        if fact is None or _expired(fact):
            return None
        if self._refresh(op.refresh_ttl):
            fact = await self._refresh_expiry(fact)
        found = _item(fact)
        return Item(
            value=found.value,
            key=found.key,
            namespace=found.namespace,
            created_at=found.created_at,
            updated_at=found.updated_at,
        )

    def _refresh(self, asked: bool | None) -> bool:
        if asked is not None:
            return asked
        return bool((self.ttl_config or {}).get("refresh_on_read", True))

    async def _refresh_expiry(self, fact: Fact) -> Fact:
        meta = _meta(fact)
        ttl = meta.get("ttl_minutes")
        if not isinstance(ttl, int | float):
            return fact
        from sagewai.stores.metadata import WriteBatch

        updated = fact.evolve(
            metadata={**fact.metadata, _META: {**meta, "expires_at": _expiry(float(ttl))}}
        )
        await self.engine.commit(
            WriteBatch(self.engine.project_id, upserts=[updated]), previous={fact.id: fact}
        )
        return updated

    async def _items_under(self, prefix: Sequence[str]) -> list[Fact]:
        """Every live, unexpired item whose namespace starts with ``prefix``, newest first."""
        facts: list[Fact] = []
        after: tuple[datetime, str] | None = None
        while True:
            page = await self.engine.metadata_store.query(
                FactQuery(
                    project_id=self.engine.project_id,
                    tags_any=(namespace_tag(prefix),),
                    statuses=_LIVE,
                    after=after,
                    limit=_PAGE,
                )
            )
            facts.extend(f for f in page if f.project_id == self.engine.project_id)
            if len(page) < _PAGE:
                break
            after = (page[-1].created_at, page[-1].id)
        live = [f for f in facts if _is_item_under(f, prefix) and not _expired(f)]
        return sorted(live, key=lambda f: (f.created_at, f.id), reverse=True)

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        _check_namespace(prefix, allow_empty=True)
        check_filter(op.filter)
        if op.limit < 0 or op.offset < 0:
            raise InvalidInputError("limit and offset must not be negative")
        wanted = op.offset + op.limit
        if not op.query:
            items = [f for f in await self._items_under(prefix) if _value_matches(f, op.filter)]
            return [_item(f, score=None) for f in items[op.offset : wanted]]
        from sagewai.context.engine import MAX_TOP_K

        top_k = min(MAX_TOP_K, max(50, wanted * (4 if op.filter else 2)))
        if self._pins_scope(prefix):
            scopes = [self.scope_of(prefix)]
        else:  # the prefix spans scopes: search each scope holding items under it
            seen: dict[tuple[Any, ...], dict[str, Any]] = {}
            for fact in await self._items_under(prefix):
                scope = self.scope_of(_meta(fact)["namespace"])
                seen.setdefault(tuple(sorted(scope.items())), scope)
            scopes = list(seen.values())
        scored: dict[str, tuple[float, Fact]] = {}
        for scope in scopes:
            results = await self.engine.search(
                op.query, top_k=top_k, tags=[namespace_tag(prefix)], **scope
            )
            for result in results:
                fact = result.fact
                if (
                    _is_item_under(fact, prefix)
                    and not _expired(fact)
                    and _value_matches(fact, op.filter)
                    and (fact.id not in scored or scored[fact.id][0] < result.score)
                ):
                    scored[fact.id] = (result.score, fact)
        ranked = sorted(scored.values(), key=lambda pair: (-pair[0], pair[1].id))
        return [_item(fact, score=score) for score, fact in ranked[op.offset : wanted]]

    async def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = {tuple(_meta(f)["namespace"]) for f in await self._items_under(())}
        if op.match_conditions:
            namespaces = {
                ns
                for ns in namespaces
                if all(_namespace_matches(c, ns) for c in op.match_conditions)
            }
        if op.max_depth is not None:
            namespaces = {ns[: op.max_depth] for ns in namespaces}
        return sorted(namespaces)[op.offset : op.offset + op.limit]

    # ---------------------------------------------------------------- writing

    async def _put(self, op: PutOp) -> None:
        namespace = tuple(op.namespace)
        _check_namespace(namespace, allow_empty=False)
        if not isinstance(op.key, str) or not op.key:
            raise InvalidInputError("an item key must be a non-empty string")
        versions = await self._versions(namespace, op.key, statuses=None)
        if op.value is None:
            for fact in versions:
                await self.engine.delete(fact.id, reason="langgraph store delete")
            return
        value = dict(op.value)
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"a store value must be JSON: {exc}") from exc
        fields = self.index_fields if op.index is None or op.index is False else op.index
        text = item_text(value, fields)
        ttl = op.ttl if op.ttl is not None else (self.ttl_config or {}).get("default_ttl")
        live = [fact for fact in versions if fact.status in _LIVE]
        current = live[-1] if live else None
        now = utcnow()
        meta: dict[str, Any] = {
            "namespace": list(namespace),
            "key": op.key,
            "value": value,
            "created_at": _meta(current).get("created_at", now.isoformat())
            if current is not None
            else now.isoformat(),
            "ttl_minutes": ttl,
            "expires_at": None if ttl is None else _expiry(float(ttl)),
        }
        tags = [
            ITEM_TAG,
            item_tag(namespace, op.key),
            *(namespace_tag(namespace[:depth]) for depth in range(1, len(namespace) + 1)),
        ]
        if current is None:
            await self.engine.add(
                text, **self.scope_of(namespace), tags=tags, metadata={_META: meta}
            )
        elif current.content == text and _meta(current).get("value") == value:
            await self._refresh_expiry(current)
            return
        else:
            await self.engine.supersede(
                current.id,
                text,
                reason="langgraph store put",
                actor="langgraph",
                rule="langgraph.put",
                tags=tags,
                metadata={_META: meta},
            )
        if self.bridge is not None and _message_like(value):
            await self.bridge.process_message(
                {"role": value["role"], "content": value["content"]},
                session_id=self.scope_of(namespace).get("session_id"),
                user_id=self.scope_of(namespace).get("user_id"),
            )

    async def sweep_expired(self) -> int:
        """Delete every item whose TTL ran out; returns how many (run it on a schedule)."""
        await self.engine.open()
        facts: list[Fact] = []
        after: tuple[datetime, str] | None = None
        while True:
            page = await self.engine.metadata_store.query(
                FactQuery(
                    project_id=self.engine.project_id,
                    tags_any=(ITEM_TAG,),
                    after=after,
                    limit=_PAGE,
                )
            )
            facts.extend(f for f in page if f.project_id == self.engine.project_id)
            if len(page) < _PAGE:
                break
            after = (page[-1].created_at, page[-1].id)
        expired = [f for f in facts if f.status in _LIVE and _expired(f)]
        for fact in expired:
            meta = _meta(fact)
            for version in await self._versions(meta["namespace"], meta["key"], statuses=None):
                await self.engine.delete(version.id, reason="langgraph ttl expired")
        return len(expired)


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


def _expired(fact: Fact) -> bool:
    expires = _meta(fact).get("expires_at")
    return isinstance(expires, str) and datetime.fromisoformat(expires) <= utcnow()


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


def _run_in_new_loop(work: Awaitable[list[Result]]) -> list[Result]:
    """Run ``work`` to completion on a fresh event loop in a helper thread."""
    box: dict[str, Any] = {}

    def target() -> None:
        async def main() -> list[Result]:
            return await work

        try:
            box["result"] = asyncio.run(main())
        except BaseException as exc:  # re-raised in the calling thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="sagewai-store-batch")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    result: list[Result] = box["result"]
    return result


# ------------------------------------------------------------------------------- agent parts


def _configured(config: RunnableConfig | None, key: str) -> str | None:
    configurable = (config or {}).get("configurable") or {}
    value = configurable.get(key)
    if value is None and key == "user_id":
        value = configurable.get("langgraph_user_id")
    return None if value is None else str(value)


def _last_user_text(messages: Sequence[AnyMessage]) -> str | None:
    for message in reversed(messages):
        if getattr(message, "type", None) == "human":
            content = message.content
            if isinstance(content, str):
                return content
            parts = [p.get("text", "") for p in content if isinstance(p, dict)]
            return " ".join(p for p in parts if p) or None
    return None


async def recall_text(
    engine: ContextEngine,
    query: str,
    *,
    user_id: str | None = None,
    session_id: str | None = None,
    top_k: int = 5,
    header: str = "What you remember (most relevant first):",
) -> str | None:
    """The memories relevant to ``query`` as a short block for a system message, or ``None``."""
    results = await engine.search(query, top_k=top_k, user_id=user_id, session_id=session_id)
    if not results:
        return None
    return "\n".join([header, *(f"- {r.fact.content}" for r in results)])


def make_recall_hook(
    engine: ContextEngine,
    *,
    top_k: int = 5,
    user_id_key: str = "user_id",
    session_id_key: str | None = "thread_id",
) -> Callable[[Mapping[str, Any], RunnableConfig], Awaitable[dict[str, Any]]]:
    """A LangGraph pre-model hook: recall for the last user message, put it before the model.

    It returns ``{"llm_input_messages": [SystemMessage(memories), *messages]}``, which
    ``create_react_agent(..., pre_model_hook=...)`` sends to the model without changing the
    graph state. The user comes from ``config["configurable"][user_id_key]`` (or
    ``langgraph_user_id``), the session from ``session_id_key`` (the thread by default).
    """

    async def recall_hook(state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        messages = list(state.get("messages", []))
        query = _last_user_text(messages)
        block = None
        if query and query.strip():
            block = await recall_text(
                engine,
                query[:4_000],
                user_id=_configured(config, user_id_key),
                session_id=_configured(config, session_id_key) if session_id_key else None,
                top_k=top_k,
            )
        prefix = [SystemMessage(content=block)] if block else []
        return {"llm_input_messages": [*prefix, *messages]}

    return recall_hook


def make_recall_node(
    engine: ContextEngine,
    *,
    top_k: int = 5,
    user_id_key: str = "user_id",
    output_key: str = "memories",
) -> Callable[[Mapping[str, Any], RunnableConfig], Awaitable[dict[str, Any]]]:
    """A graph node that writes the recalled memories (texts, best first) to ``output_key``."""

    async def recall_node(state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        query = _last_user_text(list(state.get("messages", [])))
        if not query or not query.strip():
            return {output_key: []}
        results = await engine.search(
            query[:4_000], top_k=top_k, user_id=_configured(config, user_id_key)
        )
        return {output_key: [r.fact.content for r in results]}

    return recall_node


def make_memory_tools(
    engine: ContextEngine, *, user_id_key: str = "user_id", top_k: int = 5
) -> list[BaseTool]:
    """Two tools for a LangGraph agent: ``remember`` a fact and ``recall_memories`` by query.

    Both act for the user named in the run's config (``configurable[user_id_key]``, or
    ``langgraph_user_id``); without one, memories are the project's.
    """

    async def remember(content: str, config: RunnableConfig) -> str:
        """Store one short fact worth remembering in later conversations."""
        fact = await engine.add(content, user_id=_configured(config, user_id_key))
        return f"remembered ({fact.id})"

    async def recall_memories(query: str, config: RunnableConfig) -> str:
        """Search long-term memory for facts relevant to the query."""
        text = await recall_text(
            engine, query, user_id=_configured(config, user_id_key), top_k=top_k
        )
        return text or "nothing remembered about that"

    return [
        StructuredTool.from_function(coroutine=remember, name="remember"),
        StructuredTool.from_function(coroutine=recall_memories, name="recall_memories"),
    ]
