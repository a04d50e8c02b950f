"""``SagewaiStore``: LangGraph's ``BaseStore`` over a sagewai ``ContextEngine``.

The mapping of namespaces onto scopes and of items onto facts is described in
:mod:`sagewai.integrations.langgraph`.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable, Iterable, Sequence
from concurrent.futures import Future
from datetime import datetime
from typing import TYPE_CHECKING, Any

from langgraph.config import get_config
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

from sagewai.core import ContextScope, FactQuery, new_id, utcnow
from sagewai.core._records import Fact, FactStatus
from sagewai.errors import InvalidInputError
from sagewai.integrations.langgraph._items import (
    _LIVE,
    _META,
    _PAGE,
    ITEM_TAG,
    UNINDEXED_TAG,
    _check_namespace,
    _expired,
    _expiry,
    _is_item_under,
    _item,
    _message_like,
    _meta,
    _namespace_matches,
    _value_matches,
    _weight,
    check_filter,
    item_tag,
    item_text,
    namespace_tag,
    unindexed_text,
)
from sagewai.integrations.langgraph._profile_items import ProfileItems

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
        user_id_keys: The keys of a run's ``config["configurable"]`` naming its user, first
            found wins (LangMem's ``langgraph_user_id``, then ``user_id``).
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
        user_id_keys: Sequence[str] = ("langgraph_user_id", "user_id"),
        index: Sequence[str] | None = None,
        ttl: TTLConfig | None = None,
        bridge: MemoryBridge | None = None,
    ) -> None:
        self.engine = engine
        self.user_namespaces = frozenset(user_namespaces)
        self.session_namespaces = frozenset(session_namespaces)
        self.user_id_keys = tuple(user_id_keys)
        self.index_fields = None if index is None else tuple(index)
        self.ttl_config = ttl
        self.bridge = bridge
        self.profiles = ProfileItems(engine)
        """The ``("standing", user_id)`` namespaces: the user's standing profile."""
        self._loop: asyncio.AbstractEventLoop | None = None

    # ---------------------------------------------------------------- scopes

    def scope_of(self, namespace: Sequence[str], *, run_user: str | None = None) -> dict[str, Any]:
        """The engine scope arguments (``scope``, ``user_id``, ``session_id``) of a namespace.

        The rule (the module text of :mod:`sagewai.integrations.langgraph` has it whole):
        ``(<user label>, id, ...)`` is that user's, ``(<session label>, id, ...)`` that
        session's; inside a run naming its user, a namespace holding that user's id as any
        label is that user's; anything else is the project's. (A namespace that already holds
        items keeps their scope on a later put: :meth:`abatch` looks that up.)
        """
        return self._pinned(namespace, run_user) or {"scope": ContextScope.PROJECT}

    def _pinned(self, namespace: Sequence[str], run_user: str | None) -> dict[str, Any] | None:
        """The scope the labels or the run's user give a namespace, or ``None``."""
        if len(namespace) >= 2 and namespace[0] in self.user_namespaces:
            return {"scope": ContextScope.USER, "user_id": namespace[1]}
        if len(namespace) >= 2 and namespace[0] in self.session_namespaces:
            return {"scope": ContextScope.SESSION, "session_id": namespace[1]}
        if run_user is not None and run_user in namespace:
            return {"scope": ContextScope.USER, "user_id": run_user}
        return None

    def _run_user(self) -> str | None:
        """The user the current LangGraph run names in its config (``None`` outside a run)."""
        try:
            config = get_config()
        except RuntimeError:
            return None
        configurable = config.get("configurable") or {}
        for key in self.user_id_keys:
            value = configurable.get(key)
            if value is not None and str(value):
                return str(value)
        return None

    @staticmethod
    def _visible(fact: Fact, run_user: str | None) -> bool:
        """Inside a run for a user, only the project's, sessions' and that user's items."""
        return run_user is None or fact.user_id in (None, run_user)

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
        run_user = self._run_user()  # read here: the run's config lives in this thread
        loop = self._loop
        if loop is not None and loop.is_running() and not loop.is_closed():
            future: Future[list[Result]] = asyncio.run_coroutine_threadsafe(
                self._execute(ops, run_user), loop
            )
            return future.result()
        return _run_in_new_loop(self._execute(ops, run_user))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order; results line up with them (``None`` for puts)."""
        return await self._execute(ops, self._run_user())

    async def _execute(self, ops: Iterable[Op], run_user: str | None) -> list[Result]:
        self._loop = asyncio.get_running_loop()
        await self.engine.open()
        results: list[Result] = []
        for op in ops:
            if self.profiles.handles(op):  # ("standing", user): the user's standing profile
                results.append(await self.profiles.run(op, run_user))
            elif isinstance(op, GetOp):
                results.append(await self._get(op, run_user))
            elif isinstance(op, SearchOp):
                results.append(await self._search(op, run_user))
            elif isinstance(op, ListNamespacesOp):
                results.append(await self._list_namespaces(op, run_user))
            elif isinstance(op, PutOp):
                await self._put(op, run_user)
                results.append(None)
            else:
                raise InvalidInputError(f"unknown store operation {type(op).__name__}")
        return results

    # ---------------------------------------------------------------- reading

    async def _versions(
        self, namespace: Sequence[str], key: str, *, statuses: Sequence[FactStatus] | None = _LIVE
    ) -> list[Fact]:
        # By the item's tag, whatever scope it was stored at: a namespace reads the same inside
        # a run and outside one.
        found = await self._tagged(item_tag(namespace, key), statuses=statuses)
        return [
            fact
            for fact in found
            if _meta(fact).get("key") == key
            and tuple(_meta(fact).get("namespace", ())) == tuple(namespace)
        ]

    async def _tagged(
        self,
        tag: str,
        *,
        statuses: Sequence[FactStatus] | None = _LIVE,
        until: Callable[[Fact], bool] | None = None,
    ) -> list[Fact]:
        """Facts of this project carrying ``tag``, oldest first (up to the page holding a fact
        that ``until`` accepts, when given)."""
        found: list[Fact] = []
        after: tuple[datetime, str] | None = None
        while True:
            page = await self.engine.port.find(
                FactQuery(
                    project_id=self.engine.project_id,
                    tags_any=(tag,),
                    statuses=None if statuses is None else tuple(statuses),
                    after=after,
                    limit=_PAGE,
                )
            )
            found.extend(f for f in page if f.project_id == self.engine.project_id)
            if len(page) < _PAGE or (until is not None and any(until(f) for f in page)):
                break
            after = (page[-1].created_at, page[-1].id)
        return found

    async def _namespace_scope(self, namespace: Sequence[str]) -> dict[str, Any] | None:
        """The scope of the items a namespace already holds, or ``None`` when it holds none."""

        def held(fact: Fact) -> bool:
            return tuple(_meta(fact).get("namespace", ())) == tuple(namespace)

        for fact in await self._tagged(namespace_tag(namespace), until=held):
            if held(fact):
                return {"scope": fact.scope, "user_id": fact.user_id, "session_id": fact.session_id}
        return None

    async def _current(self, namespace: Sequence[str], key: str) -> Fact | None:
        versions = await self._versions(namespace, key)
        return versions[-1] if versions else None

    async def _get(self, op: GetOp, run_user: str | None) -> Item | None:
        _check_namespace(op.namespace, allow_empty=False)
        fact = await self._current(op.namespace, op.key)
        if fact is None or _expired(fact) or not self._visible(fact, run_user):
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
        from sagewai.core import WriteBatch

        updated = fact.evolve(
            metadata={**fact.metadata, _META: {**meta, "expires_at": _expiry(float(ttl))}}
        )
        await self.engine.port.commit(
            WriteBatch(self.engine.project_id, upserts=[updated]), previous={fact.id: fact}
        )
        return updated

    async def _items_under(self, prefix: Sequence[str], run_user: str | None) -> list[Fact]:
        """Every live, unexpired item under ``prefix`` the run may read, newest first."""
        live = [
            f
            for f in await self._tagged(namespace_tag(prefix))
            if _is_item_under(f, prefix) and not _expired(f) and self._visible(f, run_user)
        ]
        return sorted(live, key=lambda f: (f.created_at, f.id), reverse=True)

    async def _search(self, op: SearchOp, run_user: str | None) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        _check_namespace(prefix, allow_empty=True)
        check_filter(op.filter)
        if op.limit < 0 or op.offset < 0:
            raise InvalidInputError("limit and offset must not be negative")
        wanted = op.offset + op.limit
        if not op.query:
            under = await self._items_under(prefix, run_user)
            items = [f for f in under if _value_matches(f, op.filter)]
            return [_item(f, score=None) for f in items[op.offset : wanted]]
        from sagewai.context._engine import MAX_TOP_K

        top_k = min(MAX_TOP_K, max(50, wanted * (4 if op.filter else 2)))
        pinned = self._pinned(prefix, run_user) if prefix else None
        if pinned is not None:
            if run_user is not None and pinned.get("user_id") not in (None, run_user):
                return []  # another user's namespace: nothing of it is read in this run
            scopes = [pinned]
        else:  # the prefix spans scopes: search each scope holding items under it
            seen: dict[tuple[Any, ...], dict[str, Any]] = {}
            for fact in await self._items_under(prefix, run_user):
                scope: dict[str, Any] = {
                    "scope": fact.scope,
                    "user_id": fact.user_id,
                    "session_id": fact.session_id,
                }
                seen.setdefault(tuple(sorted(scope.items())), scope)
            scopes = list(seen.values())
        scored: dict[str, tuple[float, Fact]] = {}
        for scope in scopes:
            results = await self.engine.search(
                op.query, top_k=top_k, tags=[namespace_tag(prefix)], **scope
            )
            for result in results:
                fact = result.fact
                # TTL decay: an item's weight fades over its TTL without use.
                score = result.score * _weight(fact)
                if (
                    _is_item_under(fact, prefix)
                    and UNINDEXED_TAG not in fact.tags
                    and not _expired(fact)
                    and self._visible(fact, run_user)
                    and _value_matches(fact, op.filter)
                    and (fact.id not in scored or scored[fact.id][0] < score)
                ):
                    scored[fact.id] = (score, fact)
        ranked = sorted(scored.values(), key=lambda pair: (-pair[0], pair[1].id))
        return [_item(fact, score=score) for score, fact in ranked[op.offset : wanted]]

    async def _list_namespaces(
        self, op: ListNamespacesOp, run_user: str | None
    ) -> list[tuple[str, ...]]:
        namespaces = {tuple(_meta(f)["namespace"]) for f in await self._items_under((), run_user)}
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

    async def _put(self, op: PutOp, run_user: str | None) -> None:
        namespace = tuple(op.namespace)
        _check_namespace(namespace, allow_empty=False)
        if not isinstance(op.key, str) or not op.key:
            raise InvalidInputError("an item key must be a non-empty string")
        versions = await self._versions(namespace, op.key, statuses=None)
        scope = (
            self._pinned(namespace, run_user)
            or await self._namespace_scope(namespace)
            or {"scope": ContextScope.PROJECT}
        )
        owner = scope.get("user_id")
        if run_user is not None and (
            owner not in (None, run_user)
            or any(not self._visible(fact, run_user) for fact in versions)
        ):
            raise InvalidInputError(
                f"namespace {namespace!r} belongs to user {owner or versions[0].user_id!r}; "
                f"this run is for {run_user!r}"
            )
        if op.value is None:
            for fact in versions:
                await self.engine.delete(fact.id, reason="langgraph store delete")
            return
        value = dict(op.value)
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"a store value must be JSON: {exc}") from exc
        if op.index is False:  # not indexed: the value's text is neither embedded nor searched
            text = unindexed_text(namespace, op.key)
        else:
            text = item_text(value, self.index_fields if op.index is None else op.index)
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
            *([UNINDEXED_TAG] if op.index is False else []),
        ]
        if current is None:
            # Its own id: two keys holding the same text are two items, never one fact.
            await self.engine.add(
                text, **scope, tags=tags, metadata={_META: meta}, fact_id=new_id()
            )
        elif (
            current.content == text
            and _meta(current).get("value") == value
            and set(current.tags) == set(tags)
        ):
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
                scope=scope["scope"],
                user_id=scope.get("user_id"),
                session_id=scope.get("session_id"),
            )
        if self.bridge is not None and _message_like(value):
            await self.bridge.process_message(
                {"role": value["role"], "content": value["content"]},
                session_id=scope.get("session_id"),
                user_id=scope.get("user_id"),
            )

    async def sweep_expired(self) -> int:
        """Archive every item whose TTL ran out; returns how many (run it on a schedule).

        TTL is decay here: an item fades over its TTL without use (its weight in searches falls
        to :data:`~sagewai.integrations.langgraph.TTL_FLOOR`), and when the TTL has run out it
        is archived, as decay archives a faded fact: no longer read or searched, kept with its
        history, restorable with ``engine.set_status(fact_id, "active")`` or ``engine.revert``.
        """
        await self.engine.open()
        expired = [f for f in await self._tagged(ITEM_TAG) if _expired(f)]
        for fact in expired:
            minutes = _meta(fact).get("ttl_minutes")
            await self.engine.set_status(
                fact.id,
                FactStatus.ARCHIVED,
                reason=f"langgraph ttl: unused for its ttl of {minutes} minutes",
                actor="langgraph",
                rule="langgraph.ttl_decay",
            )
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
