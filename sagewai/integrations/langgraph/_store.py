"""``SagewaiStore``: LangGraph's ``BaseStore`` over a sagewai ``ContextEngine``.

The mapping of namespaces onto scopes and of items onto facts is described in
:mod:`sagewai.integrations.langgraph`.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Iterable, Sequence
from concurrent.futures import Future
from datetime import datetime
from typing import TYPE_CHECKING, Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)

from sagewai.core._queries import FactQuery
from sagewai.core._records import Fact, FactStatus, utcnow
from sagewai.core._scope import ContextScope
from sagewai.errors import InvalidInputError
from sagewai.integrations.langgraph._items import (
    _LIVE,
    _META,
    _PAGE,
    ITEM_TAG,
    _check_namespace,
    _expired,
    _expiry,
    _is_item_under,
    _item,
    _message_like,
    _meta,
    _namespace_matches,
    _value_matches,
    check_filter,
    item_tag,
    item_text,
    namespace_tag,
)

if TYPE_CHECKING:
    from sagewai.context import MemoryBridge
    from sagewai.context._engine import ContextEngine

__all__ = ["SagewaiStore"]

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
        from sagewai.core._queries import WriteBatch

        updated = fact.evolve(
            metadata={**fact.metadata, _META: {**meta, "expires_at": _expiry(float(ttl))}}
        )
        await self.engine.port.commit(
            WriteBatch(self.engine.project_id, upserts=[updated]), previous={fact.id: fact}
        )
        return updated

    async def _items_under(self, prefix: Sequence[str]) -> list[Fact]:
        """Every live, unexpired item whose namespace starts with ``prefix``, newest first."""
        facts: list[Fact] = []
        after: tuple[datetime, str] | None = None
        while True:
            page = await self.engine.port.find(
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
        from sagewai.context._engine import MAX_TOP_K

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
            page = await self.engine.port.find(
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
