"""The vector store contract: a narrow async core every backend implements.

A vector store holds one vector per fact id with a small payload used for filtering (scope key,
status, kind, type, tags, validity). It is an index, not the source of truth: the metadata store
holds the facts, and the engine re-checks every hit against it. Validation, scoping and fusion live
once in :class:`~sagewai.context._engine.ContextEngine`, above the backends.
"""

from __future__ import annotations

import math
import operator
from abc import abstractmethod
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any, SupportsIndex

import numpy as np

from sagewai.core._embedder import Vector
from sagewai.core._queries import VectorFilter, VectorHit, VectorPayload, VectorRecord
from sagewai.core._resource import Resource

__all__ = ["ProjectVectorStore", "VectorStore", "best_positions"]


def best_positions(scores: np.ndarray[Any, Any], keep: int) -> np.ndarray[Any, Any]:
    """The positions of the ``keep`` highest ``scores``, highest first, ties in position order.

    What an exact search returns: the same rows a full stable sort would pick, without sorting
    every score (only those at least the ``keep``-th best, ties at the edge included).
    """
    keep = min(keep, scores.size)
    if keep <= 0:
        return np.zeros(0, dtype=np.int64)
    if keep < scores.size:
        edge = -np.partition(-scores, keep - 1)[keep - 1]
        best = np.flatnonzero(scores >= edge)
    else:
        best = np.arange(scores.size)
    chosen: np.ndarray[Any, Any] = best[np.lexsort((best, -scores[best]))][:keep]
    return chosen


class VectorStore(Resource):
    """Base class of vector store backends.

    Backends implement the abstract core; ``open`` must be idempotent and every method may be
    called after ``open`` only. Backends translate their driver errors into
    :class:`~sagewai.errors.BackendError` subclasses. A backend sets ``_dimension`` (checked
    with :meth:`_checked_dimension`) or overrides :attr:`dimension`.
    """

    _dimension: int

    @property
    def dimension(self) -> int:
        """Vector length this store was created for."""
        return self._dimension

    async def open(self) -> None:
        """Open connections or files. Safe to call more than once."""

    async def close(self) -> None:
        """Release connections or files. Safe to call more than once."""

    @asynccontextmanager
    async def bulk_load(self) -> AsyncIterator[None]:
        """A block for loading many vectors: an index that is built for search (HNSW) is built
        once, when the block ends, instead of at every batch. The default does nothing."""
        yield

    @abstractmethod
    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        """Insert or replace vectors and payloads by id."""

    async def search(self, vector: Vector, top_k: int, where: VectorFilter) -> list[VectorHit]:
        """The ``top_k`` nearest vectors (cosine, highest first) that match ``where``.

        A batch of one: :meth:`search_many` is the only search a backend implements.
        """
        return (await self.search_many([vector], top_k, where))[0]

    @abstractmethod
    async def search_many(
        self,
        vectors: Sequence[Vector],
        top_k: int,
        where: VectorFilter,
        *,
        ef: int | None = None,
    ) -> list[list[VectorHit]]:
        """The ``top_k`` nearest vectors to each of ``vectors`` under one filter, in order.

        The one search core of every backend (:meth:`search` is a batch of one). A backend
        answers the batch at once where it can (Qdrant's batch query; one matrix product in
        memory), which is what makes a consolidation pass over a large project fast. ``ef`` is
        the beam an approximate index keeps per query instead of its own setting (raised to
        ``top_k``); exact stores ignore it (but still reject a value that is not positive).
        """

    @abstractmethod
    async def get_vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        """Stored vectors by id; unknown ids are left out."""

    @abstractmethod
    async def update_payloads(self, payloads: Mapping[str, VectorPayload]) -> None:
        """Replace the payloads of existing ids (status or validity changed); skip unknown ids."""

    @abstractmethod
    async def delete(self, ids: Sequence[str]) -> None:
        """Delete vectors by id; unknown ids are ignored."""

    @abstractmethod
    async def delete_project(self, project_id: str) -> None:
        """Delete every vector whose payload names ``project_id``."""

    @abstractmethod
    async def count(self, where: VectorFilter) -> int:
        """How many vectors match ``where``."""

    @staticmethod
    def _check_ef(ef: int | None) -> None:
        if ef is not None and (isinstance(ef, bool) or not isinstance(ef, int) or ef <= 0):
            from sagewai.errors import InvalidInputError

            raise InvalidInputError(f"ef must be a positive integer, got {ef!r}")

    @staticmethod
    def _checked_dimension(dimension: object) -> int:
        """``dimension`` when it is a positive integer; else :class:`InvalidInputError`."""
        value = 0
        if isinstance(dimension, SupportsIndex) and not isinstance(dimension, bool):
            value = operator.index(dimension)  # an int, or a numpy integer
        if value > 0:
            return value
        from sagewai.errors import InvalidInputError

        raise InvalidInputError(f"dimension must be a positive integer, got {dimension!r}")

    def _unit_vector(self, vector: Vector) -> Vector:
        """``vector`` checked (:meth:`_check_vector`) and scaled to unit length, so inner
        products are cosines (a zero or non-finite one is left as it is)."""
        array = self._check_vector(vector)
        norm = float(np.linalg.norm(array))
        if norm == 0.0 or not math.isfinite(norm):
            return array
        unit: Vector = (array / norm).astype(np.float32)
        return unit

    def _check_vector(self, vector: Vector) -> Vector:
        array = np.asarray(vector, dtype=np.float32)
        if array.shape != (self.dimension,):
            from sagewai.errors import InvalidInputError

            raise InvalidInputError(
                f"vector has shape {array.shape}, this store holds ({self.dimension},)"
            )
        return array


_POINT_SEPARATOR = "\x1f"


class ProjectVectorStore(VectorStore):
    """One project's view of a vector store: every point id carries the project.

    Why: several engines may share one vector store (two projects in one folder, one store
    object passed to two engines). Keyed by fact id alone, a fact id chosen by the user in one
    project would name another project's vector, and an upsert or a delete through one project
    would change the other's index. Through this view a point id is ``project_id + "\\x1f" +
    fact_id`` (identifiers hold no control characters, so no two projects' keys can meet), while
    callers keep speaking fact ids. :class:`~sagewai.context._engine.ContextEngine` wraps the
    store it is given in this view; backends stay unaware of it.

    Args:
        store: The shared backend.
        project_id: The project whose point ids this view writes and reads.
    """

    def __init__(self, store: VectorStore, project_id: str) -> None:
        while isinstance(store, ProjectVectorStore):
            store = store.store
        self.store: VectorStore = store
        self.project_id = project_id
        self._prefix = project_id + _POINT_SEPARATOR

    @classmethod
    def of(cls, store: VectorStore, project_id: str) -> ProjectVectorStore:
        """``store`` as seen by ``project_id`` (a view of a view is re-aimed, not nested)."""
        if isinstance(store, ProjectVectorStore) and store.project_id == project_id:
            return store
        return cls(store, project_id)

    def __repr__(self) -> str:
        return f"ProjectVectorStore({self.store!r}, project_id={self.project_id!r})"

    def _key(self, fact_id: str) -> str:
        return self._prefix + fact_id

    @staticmethod
    def _fact_id(point_id: str) -> str:
        # The first separator ends the project id. ORG-scope hits of other projects of the org
        # are legitimate (the filter let them through); they read back as their fact ids too.
        _, separator, fact_id = point_id.partition(_POINT_SEPARATOR)
        return fact_id if separator else point_id

    def _hits(self, hits: Sequence[VectorHit]) -> list[VectorHit]:
        # This project's points (nearly every hit) lose their known prefix without a search
        # for the separator.
        prefix, cut = self._prefix, len(self._prefix)
        return [
            VectorHit(point[cut:] if point.startswith(prefix) else self._fact_id(point), score)
            for point, score in hits
        ]

    def _where(self, where: VectorFilter) -> VectorFilter:
        if where.ids is None:
            return where
        return replace(where, ids=tuple(self._key(i) for i in where.ids))

    @property
    def dimension(self) -> int:
        return self.store.dimension

    async def open(self) -> None:
        await self.store.open()

    async def close(self) -> None:
        await self.store.close()

    @asynccontextmanager
    async def bulk_load(self) -> AsyncIterator[None]:
        """The shared store's bulk load (its index is built for every project at once)."""
        async with self.store.bulk_load():
            yield

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        await self.store.upsert(
            [VectorRecord(self._key(r.id), r.vector, r.payload) for r in records]
        )

    async def search_many(
        self,
        vectors: Sequence[Vector],
        top_k: int,
        where: VectorFilter,
        *,
        ef: int | None = None,
    ) -> list[list[VectorHit]]:
        found = await self.store.search_many(vectors, top_k, self._where(where), ef=ef)
        return [self._hits(hits) for hits in found]

    async def get_vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        found = await self.store.get_vectors([self._key(i) for i in ids])
        return {self._fact_id(key): vector for key, vector in found.items()}

    async def update_payloads(self, payloads: Mapping[str, VectorPayload]) -> None:
        await self.store.update_payloads({self._key(i): p for i, p in payloads.items()})

    async def delete(self, ids: Sequence[str]) -> None:
        await self.store.delete([self._key(i) for i in ids])

    async def delete_project(self, project_id: str) -> None:
        await self.store.delete_project(project_id)

    async def count(self, where: VectorFilter) -> int:
        return await self.store.count(self._where(where))
