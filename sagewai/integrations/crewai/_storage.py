"""``SagewaiStorage``: CrewAI's memory ``StorageBackend`` over a sagewai ``ContextEngine``.

CrewAI's unified ``Memory`` embeds text with its embedder, then asks its storage backend to save,
search (by vector), update, list and delete records under scope paths. This backend keeps each
record as one sagewai fact (the record's fields ride in ``metadata["crewai"]``; every prefix of
its path and each category is a tag) at the sagewai scope its path maps onto
(:mod:`sagewai.integrations.crewai._scopes`): short-term memories at SESSION scope, a user's
long-term memories at USER scope, the crew's shared ones at PROJECT scope, entities as subjects.

Search is sagewai's hybrid search, not a bare vector lookup: CrewAI hands the backend a query
*vector*, so the backend's :attr:`SagewaiStorage.embedder` (give it to ``Memory(embedder=...)``)
embeds with the engine's own embedder and remembers which text each vector came from; the
search runs on that text, and reports each hit's cosine similarity to the query, which CrewAI's
scoring and consolidation expect. An update supersedes the fact (history kept); a delete leaves
a content-free tombstone in the audit log.

CrewAI's storage methods are synchronous (and its async ones run in other loops): every call
runs on sagewai's background loop (:mod:`sagewai.sync`), so the engine always runs on one loop.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Coroutine, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from crewai.memory.types import MemoryRecord, ScopeInfo

from sagewai._background import BackgroundLoop, default_loop
from sagewai.core import validate_identifier
from sagewai.core._records import Fact, FactStatus
from sagewai.errors import FactNotFoundError, InvalidInputError
from sagewai.integrations.crewai._scopes import (
    PathScope,
    normalize_path,
    path_prefixes,
    path_tag,
    scope_of_path,
)

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine

__all__ = ["RECORD_TAG", "SagewaiStorage"]

RECORD_TAG = "crewai"
"""The tag every record of a :class:`SagewaiStorage` carries."""
_META = "crewai"
_REMEMBERED = 4_096
_LIVE = (FactStatus.ACTIVE, FactStatus.FLAGGED)
T = TypeVar("T")


class SagewaiStorage:
    """CrewAI's ``StorageBackend`` over a sagewai engine.

    Args:
        engine: The project's engine.
        user_id: Bind the storage to one user: paths naming no user are that user's, a path
            naming another user is refused. Without it, paths decide (``/users/<id>/...``).
        loop: The background loop the engine runs on (sagewai's shared one by default).

    Example:
        >>> from sagewai import ContextEngine
        >>> from sagewai.testing import FakeEmbedder
        >>> storage = SagewaiStorage(ContextEngine.in_memory(embedder=FakeEmbedder()))
        >>> vector = storage.embedder(["Maya keeps bees"])[0]
        >>> storage.save([MemoryRecord(content="Maya keeps bees", scope="/users/maya")])
        >>> [(r.content, r.scope) for r, _ in storage.search(vector, scope_prefix="/users/maya")]
        [('Maya keeps bees', '/users/maya')]
        >>> storage.search(vector, scope_prefix="/users/leo")
        []
    """

    def __init__(
        self,
        engine: ContextEngine,
        *,
        user_id: str | None = None,
        loop: BackgroundLoop | None = None,
    ) -> None:
        self.engine = engine
        self.user_id = None if user_id is None else validate_identifier(user_id, "user_id")
        self.loop = loop or default_loop()
        self._texts: OrderedDict[bytes, str] = OrderedDict()
        self._vectors: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()

    # ---------------------------------------------------------------- plumbing

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        return self.loop.run(work)

    def _address(self, path: str | None) -> PathScope:
        return scope_of_path(path, bound_user=self.user_id)

    def embedder(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts`` with the engine's embedder, remembering each vector's text.

        Give it to CrewAI: ``Memory(storage=storage, embedder=storage.embedder)``.
        """
        texts = list(texts)
        out: list[list[float]] = []
        if texts:
            vectors = self._run(self.engine.stores.embedder.embed_documents(texts))
            out = [[float(x) for x in vector] for vector in vectors]
        with self._lock:
            for text, vector in zip(texts, out, strict=True):
                self._texts[_key(vector)] = text
                self._vectors[text] = vector
                for cache in (self._texts, self._vectors):
                    while len(cache) > _REMEMBERED:
                        cache.popitem(last=False)
        return out

    def _text_of(self, vector: Sequence[float]) -> str:
        with self._lock:
            text = self._texts.get(_key(vector))
        if text is None:
            raise InvalidInputError(
                "SagewaiStorage searches by text: give CrewAI its embedder "
                "(Memory(storage=storage, embedder=storage.embedder))"
            )
        return text

    # ---------------------------------------------------------------- records <-> facts

    def _fields(self, record: MemoryRecord) -> dict[str, Any]:
        path = normalize_path(record.scope)
        address = self._address(path)
        entities = [str(e) for e in (record.metadata or {}).get("entities") or [] if str(e)]
        meta = {
            "id": record.id,
            "scope": path,
            "categories": list(record.categories),
            "metadata": record.model_dump(mode="json", include={"metadata"})["metadata"],
            "importance": record.importance,
            "source": record.source,
            "private": record.private,
            "created_at": _aware(record.created_at).isoformat(),
            "last_accessed": _aware(record.last_accessed).isoformat(),
        }
        return {
            "scope": address.scope,
            "user_id": address.user_id,
            "session_id": address.session_id,
            "subject": entities[0][:256] if entities else None,
            "tags": [
                RECORD_TAG,
                _record_tag(record.id),
                *(path_tag(prefix) for prefix in path_prefixes(path)),
                *(f"crewai:category:{c}" for c in record.categories),
                *(f"crewai:entity:{e.lower()}" for e in entities),
            ],
            "metadata": {_META: meta},
        }

    @staticmethod
    def _record(fact: Fact) -> MemoryRecord:
        meta = _meta(fact)
        return MemoryRecord(
            id=meta.get("id", fact.id),
            content=fact.content,
            scope=meta.get("scope", "/"),
            categories=meta.get("categories", []),
            metadata=meta.get("metadata") or {},
            importance=meta.get("importance", 0.5),
            created_at=_naive(
                datetime.fromisoformat(meta["created_at"])
                if "created_at" in meta
                else fact.created_at
            ),
            last_accessed=_naive(fact.last_accessed_at or fact.created_at),
            source=meta.get("source"),
            private=bool(meta.get("private", False)),
        )

    def _visible(self, fact: Fact) -> bool:
        """A fact this storage may show: one of its records, not another user's."""
        if RECORD_TAG not in fact.tags or fact.project_id != self.engine.project_id:
            return False
        return self.user_id is None or fact.user_id in (None, self.user_id)

    async def _current(self, record_id: str) -> Fact | None:
        """The live version of a record (following supersessions from its first id)."""
        try:
            fact = await self.engine.get(validate_identifier(record_id, "record_id"))
        except FactNotFoundError:
            return None
        for _ in range(64):
            if fact.status in _LIVE or fact.superseded_by is None:
                break
            try:
                fact = await self.engine.get(fact.superseded_by)
            except FactNotFoundError:
                return None
        if fact.status not in _LIVE or not self._visible(fact):
            return None
        return fact

    async def _under(self, prefix: str | None) -> list[Fact]:
        """Every live record under ``prefix`` that this storage may show, newest first."""
        path = normalize_path(prefix)
        address = self._address(path)
        found = await self.engine.get_all(
            scope=address.scope,
            user_id=address.user_id,
            session_id=address.session_id,
            tags=[path_tag(path)],
        )
        mine = [f for f in found if self._visible(f) and _under(f, path)]
        return sorted(mine, key=lambda f: (f.created_at, f.id), reverse=True)

    # ---------------------------------------------------------------- StorageBackend

    async def _save(self, records: list[MemoryRecord]) -> None:
        rows = [{"content": r.content, "fact_id": r.id, **self._fields(r)} for r in records]
        if rows:
            await self.engine.add_many(rows, actor="crewai")

    def save(self, records: list[MemoryRecord]) -> None:
        """Save records (one batched write: all or none)."""
        self._run(self._save(records))

    async def asave(self, records: list[MemoryRecord]) -> None:
        """:meth:`save` for async callers."""
        await self.loop.arun(self._save(records))

    async def _search(
        self,
        query_embedding: Sequence[float],
        scope_prefix: str | None,
        categories: list[str] | None,
        metadata_filter: dict[str, Any] | None,
        limit: int,
        min_score: float,
    ) -> list[tuple[MemoryRecord, float]]:
        query = self._text_of(query_embedding)
        path = normalize_path(scope_prefix)
        address = self._address(path)
        results = await self.engine.search(
            query,
            top_k=min(200, max(limit * 4, 20)),
            scope=address.scope,
            user_id=address.user_id,
            session_id=address.session_id,
            tags=[path_tag(path)],
        )
        hits = [
            r.fact
            for r in results
            if self._visible(r.fact)
            and _under(r.fact, path)
            and _in_categories(r.fact, categories)
            and _matches(r.fact, metadata_filter)
        ]
        cosines = await self._cosines(query_embedding, [f.content for f in hits])
        scored = [
            (self._record(f), c) for f, c in zip(hits, cosines, strict=True) if c >= min_score
        ]
        return scored[:limit]

    async def _cosines(self, query: Sequence[float], texts: list[str]) -> list[float]:
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            fresh = await self.engine.stores.embedder.embed_documents(missing)
            with self._lock:
                for text, vector in zip(missing, fresh, strict=True):
                    self._vectors[text] = [float(x) for x in vector]
        with self._lock:
            matrix = np.asarray([self._vectors[t] for t in texts], dtype=np.float32)
        if not texts:
            return []
        q = np.asarray(query, dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(q) or 1.0)
        sims = matrix @ q / np.where(norms == 0, 1.0, norms)
        return [max(0.0, float(s)) for s in sims]

    def search(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        """Records under ``scope_prefix`` relevant to the query, with cosine similarity."""
        return self._run(
            self._search(
                query_embedding, scope_prefix, categories, metadata_filter, limit, min_score
            )
        )

    async def asearch(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        """:meth:`search` for async callers."""
        return await self.loop.arun(
            self._search(
                query_embedding, scope_prefix, categories, metadata_filter, limit, min_score
            )
        )

    async def _delete(
        self,
        scope_prefix: str | None,
        categories: list[str] | None,
        record_ids: list[str] | None,
        older_than: datetime | None,
        metadata_filter: dict[str, Any] | None,
    ) -> int:
        if record_ids is not None:
            targets = [f for f in [await self._current(i) for i in record_ids] if f is not None]
        else:
            targets = await self._under(scope_prefix)
        cutoff = None if older_than is None else _aware(older_than)
        chosen = [
            f
            for f in targets
            if _in_categories(f, categories)
            and _matches(f, metadata_filter)
            and (cutoff is None or f.created_at < cutoff)
        ]
        for fact in chosen:
            await self._delete_versions(fact)
        return len(chosen)

    async def _delete_versions(self, fact: Fact) -> None:
        """Delete the record and every older version of it (forgetting is complete)."""
        versions = await self.engine.get_all(
            scope=fact.scope,
            user_id=fact.user_id,
            session_id=fact.session_id,
            tags=[_record_tag(_meta(fact).get("id", fact.id))],
            statuses=None,
        )
        for version in [*versions, fact]:
            try:
                await self.engine.delete(version.id, reason="crewai memory delete")
            except FactNotFoundError:  # already gone with an earlier one
                continue

    def delete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        """Delete matching records; returns how many."""
        return self._run(
            self._delete(scope_prefix, categories, record_ids, older_than, metadata_filter)
        )

    async def adelete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        """:meth:`delete` for async callers."""
        return await self.loop.arun(
            self._delete(scope_prefix, categories, record_ids, older_than, metadata_filter)
        )

    async def _update(self, record: MemoryRecord) -> None:
        current = await self._current(record.id)
        if current is None:
            raise InvalidInputError(f"no memory record {record.id!r} to update")
        fields = self._fields(record)
        if fields["scope"] is not current.scope or fields["user_id"] != current.user_id:
            raise InvalidInputError("an update cannot move a record to another scope or user")
        await self.engine.supersede(
            current.id,
            record.content,
            reason="crewai memory update",
            actor="crewai",
            rule="crewai.update",
            subject=fields["subject"],
            tags=fields["tags"],
            metadata=fields["metadata"],
        )

    def update(self, record: MemoryRecord) -> None:
        """Replace a record: the old text is superseded (kept in its history)."""
        self._run(self._update(record))

    def get_record(self, record_id: str) -> MemoryRecord | None:
        """The record with this id (its latest version), or ``None``."""

        async def get() -> MemoryRecord | None:
            fact = await self._current(record_id)
            return None if fact is None else self._record(fact)

        return self._run(get())

    def list_records(
        self, scope_prefix: str | None = None, limit: int = 200, offset: int = 0
    ) -> list[MemoryRecord]:
        """Records under a path, newest first."""
        facts = self._run(self._under(scope_prefix))
        return [self._record(f) for f in facts[offset : offset + limit]]

    def get_scope_info(self, scope: str) -> ScopeInfo:
        """How many records a path holds, their categories, dates and child paths."""
        path = normalize_path(scope)
        records = [self._record(f) for f in self._run(self._under(path))]
        return ScopeInfo(
            path=path,
            record_count=len(records),
            categories=sorted({c for r in records for c in r.categories}),
            oldest_record=min((r.created_at for r in records), default=None),
            newest_record=max((r.created_at for r in records), default=None),
            child_scopes=_children(path, [r.scope for r in records]),
        )

    def list_scopes(self, parent: str = "/") -> list[str]:
        """The paths one level below ``parent`` that hold records."""
        path = normalize_path(parent)
        return _children(path, [_meta(f).get("scope", "/") for f in self._run(self._under(path))])

    def list_categories(self, scope_prefix: str | None = None) -> dict[str, int]:
        """Categories under a path, with how many records carry each."""
        counts: dict[str, int] = {}
        for fact in self._run(self._under(scope_prefix)):
            for category in _meta(fact).get("categories", []):
                counts[category] = counts.get(category, 0) + 1
        return dict(sorted(counts.items()))

    def count(self, scope_prefix: str | None = None) -> int:
        """How many records a path (and the paths below it) holds."""
        return len(self._run(self._under(scope_prefix)))

    def reset(self, scope_prefix: str | None = None) -> None:
        """Delete every record under a path (the storage's whole memory for ``None``)."""
        self.delete(scope_prefix=scope_prefix)


# ------------------------------------------------------------------------------- helpers


def _key(vector: Sequence[float]) -> bytes:
    rounded = np.round(np.asarray(vector, dtype=np.float32), 5).tobytes()
    return hashlib.sha256(rounded).digest()


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _naive(moment: datetime) -> datetime:
    """CrewAI's own times are naive UTC (``datetime.utcnow()``)."""
    return _aware(moment).astimezone(UTC).replace(tzinfo=None)


def _meta(fact: Fact) -> dict[str, Any]:
    meta = fact.metadata.get(_META)
    return meta if isinstance(meta, dict) else {}


def _under(fact: Fact, path: str) -> bool:
    scope = _meta(fact).get("scope", "/")
    return path == "/" or scope == path or str(scope).startswith(path + "/")


def _in_categories(fact: Fact, categories: list[str] | None) -> bool:
    return not categories or bool(set(categories) & set(_meta(fact).get("categories", [])))


def _matches(fact: Fact, wanted: dict[str, Any] | None) -> bool:
    stored = _meta(fact).get("metadata") or {}
    return not wanted or all(stored.get(k) == v for k, v in wanted.items())


def _children(path: str, scopes: list[str]) -> list[str]:
    depth = 0 if path == "/" else path.count("/")
    found = set()
    for scope in scopes:
        labels = [label for label in str(scope).strip("/").split("/") if label]
        if len(labels) > depth:
            found.add("/" + "/".join(labels[: depth + 1]))
    return sorted(found)


def _record_tag(record_id: str) -> str:
    return "crewai:record:" + hashlib.sha256(record_id.encode("utf-8")).hexdigest()[:32]
