"""The embedded default vector store: Qdrant's engine in-process, one folder, no server.

``qdrant-edge-py`` runs Qdrant's storage and search engine (segments, HNSW graphs, payload
indexes, write-ahead log) inside this process. Unlike a Qdrant server, nothing runs in the
background: index building and segment merging happen only when :meth:`EdgeShard.optimize` is
called, so this module decides when (see :class:`QdrantEdgeVectorStore`).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

import numpy as np

from sagewai._optional import require
from sagewai.core._embedder import Vector
from sagewai.core._queries import VectorFilter, VectorHit, VectorPayload, VectorRecord
from sagewai.errors import (
    BackendError,
    BackendUnavailableError,
    ConfigurationError,
    InvalidInputError,
    SagewaiError,
)
from sagewai.stores.base._vector import VectorStore
from sagewai.stores.qdrant._common import (
    FLOAT_FIELDS,
    HNSW_FIELDS,
    ID_FIELD,
    KEYWORD_FIELDS,
    QUERY_BATCH,
    FilterPlan,
    encode_payload,
    merge_hits,
    plan_filter,
    point_uuid,
    split_by_scope,
    wants_acorn,
)

if TYPE_CHECKING:
    import qdrant_edge

__all__ = ["QdrantEdgeVectorStore"]

_T = TypeVar("_T")

_BATCH: Final = 1024
"""Points per update operation: amortises the WAL write and bounds memory."""

_INLINE_REQUESTS: Final = 8
"""At most this many query requests (queries times scope parts) run in the caller's thread:
a search's own, never a consolidation pass's batch (see ``QdrantEdgeVectorStore._call``)."""


def _edge() -> Any:
    return require(
        "qdrant_edge",
        extra="edge",
        feature="QdrantEdgeVectorStore",
        package="qdrant-edge-py",
    )


def _translate(exc: Exception, action: str) -> SagewaiError:
    """Map a ``qdrant_edge`` error (it raises plain ``Exception`` with a message) into our tree."""
    message = str(exc)
    lowered = message.lower()
    if "wouldblock" in lowered or "locked" in lowered:
        return BackendUnavailableError(
            f"cannot {action}: the Qdrant edge folder is in use by another store or process "
            f"({message})"
        )
    if "incompatible" in lowered:
        return ConfigurationError(f"cannot {action}: {message}")
    if "dimension" in lowered:
        return InvalidInputError(f"cannot {action}: {message}")
    return BackendError(f"cannot {action}: {message}")


def _in_use(path: Path) -> str:
    """One line for a folder another process holds: who holds it, and what to do."""
    from sagewai.stores.base._holders import describe_holders

    return (
        f"the vectors at {path} are in use by {describe_holders(path)}: Qdrant's embedded "
        "engine lets one process at a time open its folder. Stop that process and retry, or "
        "copy the memory once into a new folder, which every process can share "
        "(sagewai migrate --project P --from OLD --to NEW_FOLDER, for each project)"
    )


class QdrantEdgeVectorStore(VectorStore):
    """Vectors in one folder, searched by Qdrant's engine running in this process.

    This is the embedded default: no server, data on disk, cosine search with payload filters that
    use indexes (keyword indexes on scope, status, kind, type, tags and project, float indexes on
    the three times) so a filtered search reads only what can match.

    When the index is built: new points land in an appendable segment that is searched exactly
    (brute force, fast below a few tens of thousands of points). Building HNSW graphs and merging
    segments costs seconds to minutes and blocks the process while it runs (the engine keeps the
    interpreter lock), so it happens at defined moments only:

    * when a write leaves ``optimize_threshold`` or more points outside HNSW segments (default
      20 000; ``None`` turns this off), before that write returns;
    * when you call :meth:`optimize`, e.g. after a bulk import or from a scheduled maintenance job.

    How filtered search stays accurate: below Qdrant's indexing threshold (about 6 500 vectors of
    384 dimensions) a segment has no graph and search is exact. In a segment with a graph, the
    engine estimates from the payload indexes how many points a filter matches; under
    ``full_scan_threshold_kb`` worth of vectors (about 6 600 at 384 dimensions) it reads the
    matches from the index and scores them exactly, above that it walks the graph checking the
    filter. Each frequent scope gets its own sub-graph (payload-aware links on ``scope_key``), so
    a one-scope filter walks a connected graph; a search over several scopes (a session, its user,
    the project) therefore runs once per scope in one batch and merges the hits, instead of
    walking the main graph with a union filter (recall@10 0.87 on a 27 % union in measurements,
    against 1.0 per scope). A validity filter (``valid_at``) cuts every sub-graph by time, so
    those searches ask the engine for ACORN, which it uses when the filter is selective.

    ``close()`` flushes; every write also goes through a write-ahead log, so a crash loses nothing
    that was acknowledged.

    Vectors are stored normalised (cosine), so :meth:`get_vectors` returns unit vectors.

    Args:
        path: The folder holding the shard; created when missing, reopened when it exists.
        dimension: Vector length. Reopening a folder built for another length raises
            :class:`~sagewai.errors.ConfigurationError`.
        hnsw_m: Edges per node of the HNSW graph (more: better recall, more memory).
        ef_construct: Candidates kept while building the graph (more: better graph, slower build).
        ef_search: Candidates kept while searching; raised to ``top_k`` when smaller.
        full_scan_threshold_kb: Below this many kilobytes of matching vectors a filtered search
            skips the graph and scores the matches exactly.
        optimize_threshold: Unindexed points that make a write run the optimizer; ``None`` leaves
            it to explicit :meth:`optimize` calls.
        search_threads: Threads one search may use across the shard's segments (``None``:
            Qdrant's own choice, several). One by default: after optimisation nearly every point
            sits in one segment, and extra threads only compete with the rest of the search for
            the cores (at a million facts on two cores, one thread took a tenth off the whole
            search's CPU, with the same results).

    Example:
        >>> import asyncio, tempfile
        >>> import numpy as np
        >>> from sagewai.core import VectorFilter, VectorPayload, VectorRecord
        >>> async def demo(folder: str) -> list[str]:
        ...     payload = VectorPayload("p", "project:p:p", "active", "fact", "general")
        ...     vector = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
        ...     async with QdrantEdgeVectorStore(folder, dimension=4) as store:
        ...         await store.upsert([VectorRecord("fact-1", vector, payload)])
        ...         hits = await store.search(vector, 3, VectorFilter(scope_keys=("project:p:p",)))
        ...     return [hit.id for hit in hits]
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     asyncio.run(demo(folder))
        ['fact-1']
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        dimension: int,
        *,
        hnsw_m: int = 16,
        ef_construct: int = 100,
        ef_search: int = 128,
        full_scan_threshold_kb: int = 10_000,
        optimize_threshold: int | None = 20_000,
        search_threads: int | None = 1,
    ) -> None:
        for name, value in (
            ("hnsw_m", hnsw_m),
            ("ef_construct", ef_construct),
            ("ef_search", ef_search),
            ("full_scan_threshold_kb", full_scan_threshold_kb),
        ):
            if value <= 0:
                raise InvalidInputError(f"{name} must be positive, got {value}")
        if optimize_threshold is not None and optimize_threshold <= 0:
            raise InvalidInputError("optimize_threshold must be positive or None")
        if search_threads is not None and search_threads <= 0:
            raise InvalidInputError("search_threads must be positive or None")
        self._path = Path(path)
        self._dimension = self._checked_dimension(dimension)
        self._hnsw_m = hnsw_m
        self._ef_construct = ef_construct
        self._ef_search = ef_search
        self._full_scan_threshold_kb = full_scan_threshold_kb
        self._optimize_threshold = optimize_threshold
        self._search_threads = search_threads
        self._bulk_loads = 0
        """Open :meth:`bulk_load` blocks: while any is open, writes never optimize."""
        self._shard: qdrant_edge.EdgeShard | None = None
        self._lock = threading.Lock()
        """Serialises every shard call: the shard may not be closed while another thread uses it."""
        self._unindexed_baseline = 0
        """Points outside HNSW segments right after the last optimisation (too small to index)."""

    @property
    def path(self) -> Path:
        """The folder holding the shard."""
        return self._path

    # -- lifecycle ------------------------------------------------------------------------------

    async def open(self) -> None:
        """Create the shard or reopen it from disk, with its payload indexes. Idempotent."""
        await asyncio.to_thread(self._open_sync)

    async def close(self) -> None:
        """Flush to disk and release the folder. Idempotent; the store can be opened again."""
        await asyncio.to_thread(self._close_sync)

    def _config(self, edge: Any) -> Any:
        return edge.EdgeConfig(
            vectors=edge.EdgeVectorParams(size=self._dimension, distance=edge.Distance.Cosine),
            hnsw_config=edge.HnswIndexConfig(
                m=self._hnsw_m,
                ef_construct=self._ef_construct,
                full_scan_threshold=self._full_scan_threshold_kb,
            ),
            # Payloads are small (a few hundred bytes a point) and read by every filtered write
            # and search; keeping them in the page cache halved the upsert time in measurements.
            payload_memory=edge.Memory.Cached,
            max_search_threads=self._search_threads,
        )

    def _open_sync(self) -> None:
        edge = _edge()
        with self._lock:
            if self._shard is not None:
                return
            if self._path.exists() and not self._path.is_dir():
                raise ConfigurationError(f"{self._path} is a file, not a folder for a vector store")
            existing = (self._path / "edge_config.json").exists() or any(
                (self._path / "segments").glob("*")
            )
            try:
                if existing:
                    shard = edge.EdgeShard.load(str(self._path), self._config(edge))
                else:
                    self._path.mkdir(parents=True, exist_ok=True)
                    shard = edge.EdgeShard.create(str(self._path), self._config(edge))
            except Exception as exc:
                lowered = str(exc).lower()
                if "wouldblock" in lowered or "locked" in lowered:
                    raise BackendUnavailableError(_in_use(self._path)) from exc
                raise _translate(exc, f"open the vector store at {self._path}") from exc
            try:
                self._ensure_indexes(edge, shard)
                info = shard.info()
            except Exception as exc:
                shard.close()
                raise _translate(exc, f"index the vector store at {self._path}") from exc
            self._unindexed_baseline = info.points_count - info.indexed_vectors_count
            self._shard = shard

    @staticmethod
    def _ensure_indexes(edge: Any, shard: Any) -> None:
        """Create missing payload indexes; on a new shard this runs before any point exists."""
        present = set(shard.info().payload_schema)
        for name in KEYWORD_FIELDS:
            if name not in present:
                params = edge.KeywordIndexParams(enable_hnsw=name in HNSW_FIELDS)
                shard.update(edge.UpdateOperation.create_field_index(name, params))
        for name in FLOAT_FIELDS:
            if name not in present:
                params = edge.FloatIndexParams(enable_hnsw=False)
                shard.update(edge.UpdateOperation.create_field_index(name, params))

    def _close_sync(self) -> None:
        with self._lock:
            shard, self._shard = self._shard, None
            if shard is None:
                return
            try:
                shard.flush()
            except Exception as exc:
                raise _translate(exc, f"flush the vector store at {self._path}") from exc
            finally:
                shard.close()

    # -- plumbing -------------------------------------------------------------------------------

    async def _call(
        self, action: str, work: Callable[[Any, Any], _T], *, inline: bool = False
    ) -> _T:
        """Run ``work(edge_module, shard)`` under the lock, translating errors: in a worker
        thread, or with ``inline`` in the caller's thread when the lock is free at once.

        Why ``inline`` (a search of a few queries): qdrant-edge-py holds the GIL for the whole
        of a query, so a worker thread runs it no more concurrently than the event loop's own
        thread would, and the hand-over cost a third of a millisecond at a million facts (0.3
        to 0.45 ms on a 1 ms query: the thread's wake-up and cold caches). A write or an
        optimisation holding the lock still sends the search to a thread, so the event loop
        never waits for the lock.
        """
        if inline and self._lock.acquire(blocking=False):
            try:
                return self._work(action, work)
            finally:
                self._lock.release()

        def run() -> _T:
            with self._lock:
                return self._work(action, work)

        return await asyncio.to_thread(run)

    def _work(self, action: str, work: Callable[[Any, Any], _T]) -> _T:
        """``work(edge_module, shard)`` with the lock held; errors translated."""
        if self._shard is None:
            raise BackendUnavailableError(
                f"the vector store at {self._path} is not open: "
                "call `await store.open()` or use `async with store:`"
            )
        try:
            return work(_edge(), self._shard)
        except SagewaiError:
            raise
        except Exception as exc:
            raise _translate(exc, action) from exc

    @staticmethod
    def _filter(edge: Any, plan: FilterPlan) -> Any:
        must: list[Any] = [
            edge.FieldCondition(name, match=edge.MatchAny(list(values)))
            for name, values in plan.any_of
        ]
        must.extend(
            edge.FieldCondition(name, range=edge.RangeFloat(lte=bound))
            for name, bound in plan.at_most
        )
        must.extend(
            edge.FieldCondition(name, range=edge.RangeFloat(gt=bound)) for name, bound in plan.above
        )
        if plan.point_ids is not None:
            must.append(edge.HasIdCondition(set(plan.point_ids)))
        return edge.Filter(must=must)

    def _maybe_optimize(self, shard: Any) -> None:
        """Optimize when writes left ``optimize_threshold`` points outside HNSW segments."""
        if self._optimize_threshold is None or self._bulk_loads:
            return
        info = shard.info()
        unindexed = info.points_count - info.indexed_vectors_count
        if unindexed - self._unindexed_baseline >= self._optimize_threshold:
            self._optimize_locked(shard)

    def _optimize_locked(self, shard: Any) -> bool:
        changed = bool(shard.optimize())
        shard.flush()
        info = shard.info()
        self._unindexed_baseline = info.points_count - info.indexed_vectors_count
        return changed

    # -- the VectorStore core -------------------------------------------------------------------

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        """Insert or replace vectors by id; may run the optimizer (see the class docs)."""
        if not records:
            return
        latest = {record.id: record for record in records}
        rows = [(record, self._check_vector(record.vector)) for record in latest.values()]
        payloads = [encode_payload(record.id, record.payload) for record, _ in rows]

        def work(edge: Any, shard: Any) -> None:
            points = [
                edge.Point(point_uuid(record.id), vector, payload)
                for (record, vector), payload in zip(rows, payloads, strict=True)
            ]
            for start in range(0, len(points), _BATCH):
                batch = points[start : start + _BATCH]
                shard.update(edge.UpdateOperation.upsert_points(batch))
            self._maybe_optimize(shard)

        await self._call("upsert vectors", work)

    async def search_many(
        self,
        vectors: Sequence[Vector],
        top_k: int,
        where: VectorFilter,
        *,
        ef: int | None = None,
    ) -> list[list[VectorHit]]:
        queries = [self._check_vector(vector) for vector in vectors]
        plan = plan_filter(where)
        self._check_ef(ef)
        if top_k <= 0 or plan.matches_nothing or not queries:
            return [[] for _ in queries]
        parts = split_by_scope(plan)
        beam = max(self._ef_search if ef is None else ef, top_k)

        def work(edge: Any, shard: Any, *, batch: Sequence[Vector]) -> list[list[VectorHit]]:
            filters = [(self._filter(edge, part), wants_acorn(part)) for part in parts]
            requests = [
                edge.QueryRequest(
                    limit=top_k,
                    query=edge.Query.Nearest(query),
                    filter=only,
                    with_payload=edge.PayloadSelector.Include([ID_FIELD]),
                    params=edge.SearchParams(
                        hnsw_ef=beam,
                        acorn=edge.AcornSearchParams(enable=True) if acorn else None,
                    ),
                )
                for query in batch
                for only, acorn in filters
            ]
            answers = shard.query_batch(edge.QueryBatchRequest(requests))
            hits = [
                [VectorHit(str(point.payload[ID_FIELD]), float(point.score)) for point in points]
                for points in answers
            ]
            return [
                merge_hits(hits[first : first + len(parts)], top_k)
                for first in range(0, len(hits), len(parts))
            ]

        # One planned batch call per slice (each query once per scope part); the lock is
        # released between slices so writers are not held up by a long batch.
        step = max(1, QUERY_BATCH // len(parts))
        # A search's own few requests run in the caller's thread (see _call); batches of a
        # consolidation pass go to a worker thread, slice by slice.
        inline = len(queries) * len(parts) <= _INLINE_REQUESTS
        out: list[list[VectorHit]] = []
        for start in range(0, len(queries), step):
            batch = queries[start : start + step]
            out.extend(
                await self._call("search vectors", partial(work, batch=batch), inline=inline)
            )
        return out

    async def get_vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        by_uuid = {str(point_uuid(i)): i for i in dict.fromkeys(ids)}
        if not by_uuid:
            return {}

        def work(edge: Any, shard: Any) -> dict[str, Vector]:
            found: dict[str, Vector] = {}
            keys = list(by_uuid)
            for start in range(0, len(keys), _BATCH):
                batch = [point_uuid(by_uuid[k]) for k in keys[start : start + _BATCH]]
                for record in shard.retrieve(batch, with_payload=False, with_vector=True):
                    found[by_uuid[str(record.id)]] = np.asarray(record.vector, dtype=np.float32)
            return found

        return await self._call("read vectors", work)

    async def update_payloads(self, payloads: Mapping[str, VectorPayload]) -> None:
        encoded = [(point_uuid(i), encode_payload(i, p)) for i, p in payloads.items()]
        if not encoded:
            return

        def work(edge: Any, shard: Any) -> None:
            for point, payload in encoded:
                # Selecting by filter instead of by id makes unknown ids a no-op, not an error.
                only = edge.Filter(must=[edge.HasIdCondition({point})])
                shard.update(edge.UpdateOperation.overwrite_payload_by_filter(only, payload))
            self._maybe_optimize(shard)

        await self._call("update vector payloads", work)

    async def delete(self, ids: Sequence[str]) -> None:
        points = [point_uuid(i) for i in dict.fromkeys(ids)]
        if not points:
            return

        def work(edge: Any, shard: Any) -> None:
            for start in range(0, len(points), _BATCH):
                batch = points[start : start + _BATCH]
                shard.update(edge.UpdateOperation.delete_points(batch))

        await self._call("delete vectors", work)

    async def delete_project(self, project_id: str) -> None:
        def work(edge: Any, shard: Any) -> None:
            only = edge.Filter(
                must=[edge.FieldCondition("project_id", match=edge.MatchValue(project_id))]
            )
            shard.update(edge.UpdateOperation.delete_points_by_filter(only))

        await self._call(f"delete the vectors of project {project_id!r}", work)

    async def count(self, where: VectorFilter) -> int:
        plan = plan_filter(where)
        if plan.matches_nothing:
            return 0

        def work(edge: Any, shard: Any) -> int:
            return int(shard.count(edge.CountRequest(exact=True, filter=self._filter(edge, plan))))

        return await self._call("count vectors", work)

    # -- maintenance ----------------------------------------------------------------------------

    async def optimize(self) -> bool:
        """Build HNSW graphs, merge small segments and drop deleted points, then flush.

        Blocks this process while it runs (seconds for tens of thousands of points, minutes for
        hundreds of thousands on a small machine): call it after a bulk import or from a scheduled
        maintenance job, not inside a conversation turn.

        Returns:
            True when segments changed, False when the shard was already optimal.
        """
        return await self._call("optimize the vector store", lambda _, s: self._optimize_locked(s))

    @asynccontextmanager
    async def bulk_load(self) -> AsyncIterator[None]:
        """Load many vectors inside the block, then build the index once (:meth:`optimize`).

        Writes in the block never run the optimizer: with the default ``optimize_threshold``, a
        million points would otherwise rebuild growing graphs fifty times over. The optimizer
        runs once on exit, whether the block succeeds or fails. Meanwhile searches stay correct
        (the new points are scanned exactly, slower as they grow).

        Example:
            >>> async def load(ctx, store: QdrantEdgeVectorStore, texts: list[str]) -> None:
            ...     async with store.bulk_load():
            ...         for start in range(0, len(texts), 2048):
            ...             await ctx.add_many(texts[start : start + 2048])
        """
        self._bulk_loads += 1
        try:
            yield
        finally:
            self._bulk_loads -= 1
            if not self._bulk_loads:
                await self.optimize()
