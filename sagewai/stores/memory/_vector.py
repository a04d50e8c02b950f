"""An in-memory vector store on numpy: exact cosine search, for tests and small projects."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from sagewai.core._embedder import Vector
from sagewai.core._queries import VectorFilter, VectorHit, VectorPayload, VectorRecord
from sagewai.stores.base._vector import VectorStore, best_positions

__all__ = ["InMemoryVectorStore"]

_QUERY_BLOCK = 256
"""Queries scored per matrix product in :meth:`InMemoryVectorStore.search_many`."""


class InMemoryVectorStore(VectorStore):
    """Exact nearest-neighbour search over a growable float32 matrix.

    Rows are kept in one contiguous matrix so a search is one matrix-vector product followed by a
    filter over the payloads of the best candidates. Deleted rows are reused.

    Args:
        dimension: Vector length.
    """

    def __init__(self, dimension: int) -> None:
        self._dimension = self._checked_dimension(dimension)
        self._matrix = np.zeros((0, dimension), dtype=np.float32)
        self._row_of: dict[str, int] = {}
        self._ids: list[str | None] = []
        self._payloads: list[VectorPayload | None] = []
        self._free: list[int] = []

    def _grow(self, needed: int) -> None:
        capacity = self._matrix.shape[0]
        if needed <= capacity:
            return
        new_capacity = max(needed, capacity * 2, 64)
        grown = np.zeros((new_capacity, self._dimension), dtype=np.float32)
        grown[:capacity] = self._matrix
        self._matrix = grown

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        checked = [(r, self._unit_vector(r.vector)) for r in records]
        for record, vector in checked:
            row = self._row_of.get(record.id)
            if row is None:
                if self._free:
                    row = self._free.pop()
                else:
                    row = len(self._ids)
                    self._ids.append(None)
                    self._payloads.append(None)
                    self._grow(row + 1)
                self._row_of[record.id] = row
                self._ids[row] = record.id
            self._matrix[row] = vector
            self._payloads[row] = record.payload

    async def search_many(
        self,
        vectors: Sequence[Vector],
        top_k: int,
        where: VectorFilter,
        *,
        ef: int | None = None,
    ) -> list[list[VectorHit]]:
        """Filter the rows once, then score blocks of queries with one matrix product each.

        Exact, so ``ef`` changes nothing.
        """
        queries = [self._unit_vector(vector) for vector in vectors]
        self._check_ef(ef)
        if top_k <= 0 or not queries:
            return [[] for _ in queries]
        pairs = enumerate(zip(self._ids, self._payloads, strict=True))
        rows = np.array(
            [
                row
                for row, (point_id, payload) in pairs
                if point_id is not None and payload is not None and where.matches(payload, point_id)
            ],
            dtype=np.int64,
        )
        if rows.size == 0:
            return [[] for _ in queries]
        candidates = self._matrix[rows]
        keep = min(top_k, rows.size)
        out: list[list[VectorHit]] = []
        for start in range(0, len(queries), _QUERY_BLOCK):
            scores = np.stack(queries[start : start + _QUERY_BLOCK]) @ candidates.T
            for line in scores:
                # Highest first; ties in row (insertion) order.
                best = best_positions(line, keep)
                out.append([VectorHit(str(self._ids[rows[i]]), float(line[i])) for i in best])
        return out

    async def get_vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        return {i: self._matrix[self._row_of[i]].copy() for i in ids if i in self._row_of}

    async def update_payloads(self, payloads: Mapping[str, VectorPayload]) -> None:
        for point_id, payload in payloads.items():
            row = self._row_of.get(point_id)
            if row is not None:
                self._payloads[row] = payload

    async def delete(self, ids: Sequence[str]) -> None:
        for point_id in ids:
            row = self._row_of.pop(point_id, None)
            if row is not None:
                self._ids[row] = None
                self._payloads[row] = None
                self._matrix[row] = 0.0
                self._free.append(row)

    async def delete_project(self, project_id: str) -> None:
        doomed = [
            point_id
            for point_id, payload in zip(self._ids, self._payloads, strict=True)
            if point_id is not None and payload is not None and payload.project_id == project_id
        ]
        await self.delete(doomed)

    async def count(self, where: VectorFilter) -> int:
        return sum(
            1
            for point_id, payload in zip(self._ids, self._payloads, strict=True)
            if point_id is not None and payload is not None and where.matches(payload, point_id)
        )
