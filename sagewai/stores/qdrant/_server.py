"""A vector store on ``qdrant-client``: Qdrant server or cluster, or the client's local mode.

One class covers the three engines ``qdrant-client`` offers, through its async client:

* ``url="http://host:6333"``: a Qdrant server or cluster, the production setting;
* ``path="./folder"``: the client's local mode persisted to a folder;
* ``location=":memory:"``: the client's local mode in memory.

Local mode is pure Python brute force (tens of milliseconds per query at a few thousand points)
and runs its work on the event loop; it suits tests and prototypes that later move to a server.
The embedded default is :class:`~sagewai.stores.qdrant._edge.QdrantEdgeVectorStore`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
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
    SagewaiTimeoutError,
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
    from qdrant_client import AsyncQdrantClient
    from qdrant_client.http import models

__all__ = ["QdrantVectorStore"]

_T = TypeVar("_T")

_BATCH: Final = 256
"""Points per request: keeps a server request well under its payload limit."""


def _require_client() -> Any:
    return require(
        "qdrant_client", extra="qdrant", feature="QdrantVectorStore", package="qdrant-client"
    )


def _translate(exc: BaseException, action: str) -> SagewaiError:
    """Map a qdrant-client, httpx or grpc error into the sagewai tree."""
    from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

    if isinstance(exc, UnexpectedResponse):
        status = exc.status_code or 0
        if status in (401, 403):
            return ConfigurationError(f"cannot {action}: Qdrant refused the credentials ({exc})")
        if status in (502, 503, 504):
            return BackendUnavailableError(f"cannot {action}: Qdrant is unavailable ({exc})")
        return BackendError(f"cannot {action}: {exc}")
    if isinstance(exc, ResponseHandlingException):
        source = exc.source
        if isinstance(source, TimeoutError) or "timeout" in type(source).__name__.lower():
            return SagewaiTimeoutError(f"cannot {action}: Qdrant did not answer in time ({source})")
        return BackendUnavailableError(f"cannot {action}: Qdrant is unreachable ({source!r})")
    if isinstance(exc, TimeoutError):
        return SagewaiTimeoutError(f"cannot {action}: Qdrant did not answer in time")
    if isinstance(exc, ConnectionError | OSError):
        return BackendUnavailableError(f"cannot {action}: Qdrant is unreachable ({exc!r})")
    if type(exc).__module__.startswith("grpc"):
        code = getattr(exc, "code", None)
        name = str(code()) if callable(code) else ""
        if "UNAVAILABLE" in name:
            return BackendUnavailableError(f"cannot {action}: Qdrant is unreachable ({exc})")
        if "DEADLINE_EXCEEDED" in name:
            return SagewaiTimeoutError(f"cannot {action}: Qdrant did not answer in time")
        if "UNAUTHENTICATED" in name or "PERMISSION_DENIED" in name:
            return ConfigurationError(f"cannot {action}: Qdrant refused the credentials ({exc})")
        return BackendError(f"cannot {action}: {exc}")
    if isinstance(exc, RuntimeError) and "already accessed" in str(exc):
        return BackendUnavailableError(f"cannot {action}: {exc}")
    return BackendError(f"cannot {action}: {exc!r}")


class QdrantVectorStore(VectorStore):
    """Vectors in a Qdrant collection, reached through ``qdrant-client``'s async client.

    On open the collection is created (cosine distance) with keyword indexes on scope, status,
    kind, type, tags and project and float indexes on the three times, so a server answers filtered
    searches from its indexes; per-scope HNSW links keep restrictive scope filters accurate. An
    existing collection is checked: a different vector length or distance raises
    :class:`~sagewai.errors.ConfigurationError`, and missing indexes are added (the server only
    links them into HNSW graphs it builds afterwards).

    On a server a search over several scopes runs one query per scope in one batch request and
    merges the hits, and an "as of" search (``valid_at``) asks for ACORN; both keep filtered
    search accurate (see :func:`~sagewai.stores.qdrant._common.split_by_scope`) and the second
    needs a server with ACORN search parameters (Qdrant 1.16 or later).

    Give exactly one of ``location``, ``path`` or ``url``. Nothing connects before :meth:`open`.

    Args:
        location: ``":memory:"`` for local mode in memory (a URL here works like ``url``).
        path: A folder for local mode on disk; one store at a time may use it.
        url: A Qdrant server, e.g. ``"http://localhost:6333"``.
        api_key: The server's API key, if it needs one.
        collection: Collection name; several projects can share one (the payload holds the
            project and the scope).
        dimension: Vector length.
        prefer_grpc: Talk gRPC to the server instead of REST (faster for large batches).
        ef_search: Candidates kept while searching a server's HNSW graph; raised to ``top_k``.
        timeout: Seconds a server request may take.

    Example:
        >>> import asyncio
        >>> import numpy as np
        >>> from sagewai.core import VectorFilter, VectorPayload, VectorRecord
        >>> async def demo() -> int:
        ...     payload = VectorPayload("p", "project:p:p", "active", "fact", "general")
        ...     vector = np.array([0.0, 1.0, 0.0, 0.0], dtype=np.float32)
        ...     async with QdrantVectorStore(location=":memory:", dimension=4) as store:
        ...         await store.upsert([VectorRecord("fact-1", vector, payload)])
        ...         return await store.count(VectorFilter(scope_keys=("project:p:p",)))
        >>> asyncio.run(demo())
        1
    """

    def __init__(
        self,
        *,
        location: str | None = None,
        path: str | os.PathLike[str] | None = None,
        url: str | None = None,
        api_key: str | None = None,
        collection: str = "sagewai",
        dimension: int,
        prefer_grpc: bool = False,
        ef_search: int = 128,
        timeout: int | None = None,
    ) -> None:
        chosen = [
            name for name, value in (("location", location), ("path", path), ("url", url)) if value
        ]
        if len(chosen) != 1:
            raise ConfigurationError(
                "give exactly one of location=':memory:', path='folder' or url='http://host:6333'"
                + (f" (got {', '.join(chosen)})" if chosen else "")
            )
        if not collection:
            raise InvalidInputError("collection must not be empty")
        if ef_search <= 0:
            raise InvalidInputError("ef_search must be positive")
        self._location = location
        self._path = None if path is None else os.fspath(path)
        self._url = url
        self._api_key = api_key
        self._collection = collection
        self._dimension = self._checked_dimension(dimension)
        self._prefer_grpc = prefer_grpc
        self._ef_search = ef_search
        self._timeout = timeout
        self._client: AsyncQdrantClient | None = None
        self._open_lock = asyncio.Lock()

    @property
    def collection(self) -> str:
        """The Qdrant collection holding the vectors."""
        return self._collection

    @property
    def is_local(self) -> bool:
        """True for the client's local mode (``:memory:`` or ``path=``), False for a server."""
        return self._path is not None or self._location == ":memory:"

    # -- lifecycle ------------------------------------------------------------------------------

    async def open(self) -> None:
        """Connect, then create or check the collection and its payload indexes. Idempotent."""
        async with self._open_lock:
            if self._client is not None:
                return
            qdrant_client = _require_client()
            try:
                client: AsyncQdrantClient = qdrant_client.AsyncQdrantClient(
                    location=self._location,
                    path=self._path,
                    url=self._url,
                    api_key=self._api_key,
                    prefer_grpc=self._prefer_grpc,
                    timeout=self._timeout,
                    # The version check is a blocking request inside the constructor; the
                    # collection checks below catch what matters.
                    check_compatibility=False,
                )
            except Exception as exc:
                raise _translate(exc, f"open Qdrant ({self._where()})") from exc
            try:
                await self._prepare(client)
            except Exception as exc:
                await client.close()
                if isinstance(exc, SagewaiError):
                    raise
                raise _translate(exc, f"prepare collection {self._collection!r}") from exc
            except BaseException:  # cancelled while preparing: release the folder or socket
                await client.close()
                raise
            self._client = client

    async def close(self) -> None:
        """Close the connection (and release a local folder). Idempotent."""
        async with self._open_lock:
            client, self._client = self._client, None
            if client is None:
                return
            try:
                await client.close()
            except Exception as exc:
                raise _translate(exc, f"close Qdrant ({self._where()})") from exc

    def _where(self) -> str:
        if self._url:
            return self._url
        return f"path={self._path}" if self._path else f"location={self._location}"

    async def _prepare(self, client: AsyncQdrantClient) -> None:
        from qdrant_client.http import models

        if not await client.collection_exists(self._collection):
            try:
                await client.create_collection(
                    self._collection,
                    vectors_config=models.VectorParams(
                        size=self._dimension, distance=models.Distance.COSINE
                    ),
                )
            except Exception:
                # Another process may have created it between the check and the create.
                if not await client.collection_exists(self._collection):
                    raise
        info = await client.get_collection(self._collection)
        vectors = info.config.params.vectors
        if not isinstance(vectors, models.VectorParams):
            raise ConfigurationError(
                f"collection {self._collection!r} uses named vectors; "
                "sagewai needs one unnamed vector"
            )
        if vectors.size != self._dimension or vectors.distance != models.Distance.COSINE:
            raise ConfigurationError(
                f"collection {self._collection!r} holds {vectors.size}-d {vectors.distance.value} "
                f"vectors; this store needs {self._dimension}-d Cosine: pick another collection "
                "or the matching embedder"
            )
        if self.is_local:
            return  # local mode has no payload indexes (it scans) and warns when asked for one
        present = set(info.payload_schema or {})
        for name in KEYWORD_FIELDS:
            if name not in present:
                await client.create_payload_index(
                    self._collection,
                    name,
                    field_schema=models.KeywordIndexParams(
                        type=models.KeywordIndexType.KEYWORD, enable_hnsw=name in HNSW_FIELDS
                    ),
                    wait=True,
                )
        for name in FLOAT_FIELDS:
            if name not in present:
                await client.create_payload_index(
                    self._collection,
                    name,
                    field_schema=models.FloatIndexParams(
                        type=models.FloatIndexType.FLOAT, enable_hnsw=False
                    ),
                    wait=True,
                )

    # -- plumbing -------------------------------------------------------------------------------

    async def _call(self, action: str, work: Callable[[AsyncQdrantClient], Awaitable[_T]]) -> _T:
        client = self._client
        if client is None:
            raise BackendUnavailableError(
                f"the Qdrant vector store ({self._where()}) is not open: "
                "call `await store.open()` or use `async with store:`"
            )
        try:
            return await work(client)
        except SagewaiError:
            raise
        except Exception as exc:
            raise _translate(exc, action) from exc

    @staticmethod
    def _filter(plan: FilterPlan) -> models.Filter:
        from qdrant_client.http import models

        must: list[models.Condition] = [
            models.FieldCondition(key=name, match=models.MatchAny(any=list(values)))
            for name, values in plan.any_of
        ]
        must.extend(
            models.FieldCondition(key=name, range=models.Range(lte=bound))
            for name, bound in plan.at_most
        )
        must.extend(
            models.FieldCondition(key=name, range=models.Range(gt=bound))
            for name, bound in plan.above
        )
        if plan.point_ids is not None:
            must.append(models.HasIdCondition(has_id=[str(p) for p in plan.point_ids]))
        return models.Filter(must=must)

    # -- the VectorStore core -------------------------------------------------------------------

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        from qdrant_client.http import models

        latest = {record.id: record for record in records}
        rows = [(record, self._check_vector(record.vector)) for record in latest.values()]
        payloads = [encode_payload(record.id, record.payload) for record, _ in rows]
        if not rows:
            return

        async def work(client: AsyncQdrantClient) -> None:
            for start in range(0, len(rows), _BATCH):
                chunk = rows[start : start + _BATCH]
                batch = models.Batch(
                    ids=[str(point_uuid(record.id)) for record, _ in chunk],
                    vectors=np.stack([vector for _, vector in chunk]).tolist(),
                    payloads=payloads[start : start + _BATCH],
                )
                await client.upsert(self._collection, points=batch, wait=True)

        await self._call("upsert vectors", work)

    async def search_many(
        self,
        vectors: Sequence[Vector],
        top_k: int,
        where: VectorFilter,
        *,
        ef: int | None = None,
    ) -> list[list[VectorHit]]:
        from qdrant_client.http import models

        queries = [self._check_vector(vector) for vector in vectors]
        plan = plan_filter(where)
        self._check_ef(ef)
        if top_k <= 0 or plan.matches_nothing or not queries:
            return [[] for _ in queries]

        def search_params(part: FilterPlan) -> models.SearchParams | None:
            if self.is_local:  # exact, and it warns about parameters it ignores
                return None
            acorn = models.AcornSearchParams(enable=True) if wants_acorn(part) else None
            beam = max(self._ef_search if ef is None else ef, top_k)
            return models.SearchParams(hnsw_ef=beam, acorn=acorn)

        # Local mode is exact: one query. A server searches once per scope (see split_by_scope).
        parts = [plan] if self.is_local else split_by_scope(plan)
        settings = [(self._filter(part), search_params(part)) for part in parts]
        step = max(1, QUERY_BATCH // len(parts))
        out: list[list[VectorHit]] = []
        for start in range(0, len(queries), step):
            requests = [
                models.QueryRequest(
                    query=query.tolist(),
                    filter=only,
                    limit=top_k,
                    with_payload=[ID_FIELD],
                    params=params,
                )
                for query in queries[start : start + step]
                for only, params in settings
            ]

            async def work(
                client: AsyncQdrantClient, requests: list[models.QueryRequest] = requests
            ) -> list[list[VectorHit]]:
                answers = await client.query_batch_points(self._collection, requests)
                hits = [
                    [
                        VectorHit(str((point.payload or {})[ID_FIELD]), float(point.score))
                        for point in answer.points
                    ]
                    for answer in answers
                ]
                return [
                    merge_hits(hits[first : first + len(parts)], top_k)
                    for first in range(0, len(hits), len(parts))
                ]

            out.extend(await self._call("search vectors", work))
        return out

    async def get_vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        by_uuid = {str(point_uuid(i)): i for i in dict.fromkeys(ids)}
        if not by_uuid:
            return {}

        async def work(client: AsyncQdrantClient) -> dict[str, Vector]:
            found: dict[str, Vector] = {}
            keys = list(by_uuid)
            for start in range(0, len(keys), _BATCH):
                records = await client.retrieve(
                    self._collection,
                    ids=keys[start : start + _BATCH],
                    with_payload=False,
                    with_vectors=True,
                )
                for record in records:
                    if isinstance(record.vector, list):
                        found[by_uuid[str(record.id)]] = np.asarray(record.vector, dtype=np.float32)
            return found

        return await self._call("read vectors", work)

    async def update_payloads(self, payloads: Mapping[str, VectorPayload]) -> None:
        from qdrant_client.http import models

        # Selecting each point by filter makes unknown ids a no-op instead of a 404 that would
        # abort the rest of the batch.
        operations: list[models.UpdateOperation] = [
            models.OverwritePayloadOperation(
                overwrite_payload=models.SetPayload(
                    payload=encode_payload(i, payload),
                    filter=models.Filter(must=[models.HasIdCondition(has_id=[str(point_uuid(i))])]),
                )
            )
            for i, payload in payloads.items()
        ]
        if not operations:
            return

        async def work(client: AsyncQdrantClient) -> None:
            for start in range(0, len(operations), _BATCH):
                chunk = operations[start : start + _BATCH]
                await client.batch_update_points(self._collection, chunk, wait=True)

        await self._call("update vector payloads", work)

    async def delete(self, ids: Sequence[str]) -> None:
        from qdrant_client.http import models

        points: list[models.ExtendedPointId] = [str(point_uuid(i)) for i in dict.fromkeys(ids)]
        if not points:
            return

        async def work(client: AsyncQdrantClient) -> None:
            for start in range(0, len(points), _BATCH):
                selector = models.PointIdsList(points=points[start : start + _BATCH])
                await client.delete(self._collection, points_selector=selector, wait=True)

        await self._call("delete vectors", work)

    async def delete_project(self, project_id: str) -> None:
        from qdrant_client.http import models

        selector = models.FilterSelector(
            filter=models.Filter(
                must=[
                    models.FieldCondition(
                        key="project_id", match=models.MatchValue(value=project_id)
                    )
                ]
            )
        )

        async def work(client: AsyncQdrantClient) -> None:
            await client.delete(self._collection, points_selector=selector, wait=True)

        await self._call(f"delete the vectors of project {project_id!r}", work)

    async def count(self, where: VectorFilter) -> int:
        plan = plan_filter(where)
        if plan.matches_nothing:
            return 0

        async def work(client: AsyncQdrantClient) -> int:
            result = await client.count(
                self._collection, count_filter=self._filter(plan), exact=True
            )
            return int(result.count)

        return await self._call("count vectors", work)
