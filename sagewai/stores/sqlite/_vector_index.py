"""One process's copy of an embedded folder's vectors: a matrix and payload columns, in memory.

Why a copy: the vectors live in SQLite (:mod:`sagewai.stores.sqlite._vectors`), which every
process can read and write at once, but SQLite cannot rank a million vectors by cosine. Each
process keeps the vectors it has read in one float32 matrix, with each payload field in a numpy
column (strings as integer codes), and answers a search exactly: the filter is a few vectorised
comparisons over the columns, the ranking one matrix product over the rows that pass. The copy
is derived: it is rebuilt from the database by replaying its changes (:meth:`VectorIndex.apply`),
and never written back.

Everything here is pure (no I/O), so it is tested without a database.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from sagewai.core._queries import VectorFilter, VectorHit
from sagewai.errors import BackendError

__all__ = ["CHANGE_COLUMNS", "Change", "VectorIndex"]

CHANGE_COLUMNS: Final = (
    "seq, point_id, vector, project_id, scope_key, status, kind, fact_type, tags, "
    "created_at, valid_from, valid_to"
)
"""The columns of a change row, in the order :meth:`VectorIndex.apply` reads them."""

Change = tuple[Any, ...]
"""One row of :data:`CHANGE_COLUMNS`: a point as written, or deleted (its vector ``None``)."""

_FEW_QUERIES: Final = 4
"""Up to this many queries are scored one by one (see :meth:`VectorIndex.search`)."""
_SCORES_PER_BLOCK: Final = 1 << 24
"""Scores computed per matrix product (64 MB of float32): bounds the memory of a large batch."""


class VectorIndex:
    """Unit vectors and their payloads, searched exactly (see the module).

    Rows of deleted points are reused. Not thread-safe: its store calls it from one thread.

    Args:
        dimension: Vector length.

    Example:
        >>> import numpy as np
        >>> index = VectorIndex(2)
        >>> one = np.array([1.0, 0.0], dtype="<f4").tobytes()
        >>> index.apply([(1, "a", one, "p", "k", "active", "fact", "general", "[]", 0.0, 0.0,
        ...               float("inf"))])
        >>> index.search(np.array([[1.0, 0.0]], dtype=np.float32), 1,
        ...              VectorFilter(scope_keys=("k",)))
        [[VectorHit(id='a', score=1.0)]]
    """

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.seq = 0
        """The last change applied: the next catch-up reads the changes above it."""
        self._size = 0
        self._ids: list[str | None] = []
        self._row_of: dict[str, int] = {}
        self._free: list[int] = []
        self._codes: dict[str, int] = {}
        self._matrix = np.zeros((0, dimension), dtype=np.float32)
        self._live = np.zeros(0, dtype=bool)
        self._project = np.zeros(0, dtype=np.int32)
        self._scope = np.zeros(0, dtype=np.int32)
        self._status = np.zeros(0, dtype=np.int32)
        self._kind = np.zeros(0, dtype=np.int32)
        self._fact_type = np.zeros(0, dtype=np.int32)
        self._created = np.zeros(0, dtype=np.float64)
        self._valid_from = np.zeros(0, dtype=np.float64)
        self._valid_to = np.zeros(0, dtype=np.float64)
        self._tags_of: dict[int, tuple[int, ...]] = {}
        self._rows_with_tag: dict[int, set[int]] = {}

    def __len__(self) -> int:
        return len(self._row_of)

    # -- changes ---------------------------------------------------------------------------

    def apply(self, changes: Sequence[Change]) -> None:
        """Apply change rows in sequence order: a point's last change wins."""
        if not changes:
            return
        latest: dict[str, Change] = {}
        for change in changes:
            latest[change[1]] = change
        for point_id, change in latest.items():
            if change[2] is None:
                self._remove(point_id)
        kept = [change for change in latest.values() if change[2] is not None]
        if kept:
            self._write(kept)
        self.seq = max(self.seq, int(changes[-1][0]))

    def reserve(self, rows: int) -> None:
        """Make room for ``rows`` points at once (a first load knows how many it will read)."""
        self._grow(rows)

    def _write(self, kept: list[Change]) -> None:
        new = sum(1 for change in kept if change[1] not in self._row_of)
        self._grow(self._size + max(0, new - len(self._free)))
        rows = np.fromiter((self._row(change[1]) for change in kept), np.int64, len(kept))
        blob = b"".join(change[2] for change in kept)
        if len(blob) != len(kept) * self.dimension * 4:
            raise BackendError(
                f"a stored vector is not {self.dimension} float32 values long: "
                "the vector table is damaged or was written for another dimension"
            )
        self._matrix[rows] = np.frombuffer(blob, dtype="<f4").reshape(len(kept), self.dimension)
        code = self._code
        for column, position in (
            (self._project, 3),
            (self._scope, 4),
            (self._status, 5),
            (self._kind, 6),
            (self._fact_type, 7),
        ):
            column[rows] = [code(change[position]) for change in kept]
        self._created[rows] = [change[9] for change in kept]
        self._valid_from[rows] = [change[10] for change in kept]
        self._valid_to[rows] = [change[11] for change in kept]
        self._live[rows] = True
        for row, change in zip(rows.tolist(), kept, strict=True):
            self._set_tags(row, () if change[8] == "[]" else tuple(json.loads(change[8])))

    def _row(self, point_id: str) -> int:
        row = self._row_of.get(point_id)
        if row is None:
            if self._free:
                row = self._free.pop()
                self._ids[row] = point_id
            else:
                row = self._size
                self._size += 1
                self._ids.append(point_id)
            self._row_of[point_id] = row
        return row

    def _remove(self, point_id: str) -> None:
        row = self._row_of.pop(point_id, None)
        if row is None:
            return
        self._ids[row] = None
        self._live[row] = False
        self._set_tags(row, ())
        self._free.append(row)

    def _set_tags(self, row: int, tags: tuple[str, ...]) -> None:
        for old in self._tags_of.pop(row, ()):
            holders = self._rows_with_tag[old]
            holders.discard(row)
            if not holders:
                del self._rows_with_tag[old]
        if tags:
            codes = tuple({self._code(tag) for tag in tags})
            self._tags_of[row] = codes
            for code in codes:
                self._rows_with_tag.setdefault(code, set()).add(row)

    def _code(self, value: str) -> int:
        code = self._codes.get(value)
        if code is None:
            code = self._codes[value] = len(self._codes)
        return code

    def _grow(self, needed: int) -> None:
        capacity = self._matrix.shape[0]
        if needed <= capacity:
            return
        # Half again, not double: at a million 384-d vectors a doubling would reserve 1.5 GB.
        size = max(needed, capacity + capacity // 2, 1024)

        def grown(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
            bigger = np.zeros((size, *array.shape[1:]), dtype=array.dtype)
            bigger[:capacity] = array
            return bigger

        self._matrix = grown(self._matrix)
        self._live = grown(self._live)
        self._project = grown(self._project)
        self._scope = grown(self._scope)
        self._status = grown(self._status)
        self._kind = grown(self._kind)
        self._fact_type = grown(self._fact_type)
        self._created = grown(self._created)
        self._valid_from = grown(self._valid_from)
        self._valid_to = grown(self._valid_to)

    # -- reading ---------------------------------------------------------------------------

    def _one_of(
        self, column: np.ndarray[Any, Any], values: Sequence[str]
    ) -> np.ndarray[Any, Any] | None:
        """Rows whose column holds one of ``values`` (``None``: none can)."""
        codes = [self._codes[v] for v in set(values) if v in self._codes]
        if not codes:
            return None
        part = column[: self._size]
        if len(codes) == 1:
            return np.asarray(part == codes[0])
        found = part == codes[0]
        for code in codes[1:]:
            found |= part == code
        return np.asarray(found)

    def rows(self, where: VectorFilter) -> np.ndarray[Any, Any]:
        """The rows matching ``where`` (the semantics of :meth:`VectorFilter.matches`), ordered."""
        size = self._size
        empty = np.zeros(0, dtype=np.int64)
        mask = self._live[:size].copy()
        for column, values in (
            (self._scope, where.scope_keys),
            (self._status, where.statuses),
            (self._kind, where.kinds),
            (self._fact_type, where.fact_types),
        ):
            if values is None:
                continue
            found = self._one_of(column, values)
            if found is None:
                return empty
            mask &= found
        if where.tags_any is not None:
            holding: set[int] = set()
            for tag in set(where.tags_any):
                code = self._codes.get(tag)
                if code is not None:
                    holding |= self._rows_with_tag.get(code, set())
            tagged = np.zeros(size, dtype=bool)
            tagged[np.fromiter(holding, np.int64, len(holding))] = True
            mask &= tagged
        if where.ids is not None:
            chosen = [self._row_of[i] for i in set(where.ids) if i in self._row_of]
            named = np.zeros(size, dtype=bool)
            named[np.array(chosen, dtype=np.int64)] = True
            mask &= named
        if where.valid_at is not None:
            at = where.valid_at
            mask &= self._created[:size] <= at
            mask &= self._valid_from[:size] <= at
            mask &= self._valid_to[:size] > at
        return np.flatnonzero(mask)

    def count(self, where: VectorFilter) -> int:
        """How many points match ``where``."""
        return int(self.rows(where).size)

    def search(
        self, queries: np.ndarray[Any, Any], top_k: int, where: VectorFilter
    ) -> list[list[VectorHit]]:
        """The ``top_k`` best rows matching ``where`` for each unit query, highest first.

        Ties keep row order. When most rows match, every row is scored in place (no copy of the
        matrix); otherwise the matching rows are gathered once and scored.
        """
        rows = self.rows(where)
        if rows.size == 0 or top_k <= 0:
            return [[] for _ in range(len(queries))]
        dense = rows.size * 2 > self._size
        candidates = self._matrix[: self._size] if dense else self._matrix[rows]
        keep = min(top_k, rows.size)
        block = max(1, min(256, _SCORES_PER_BLOCK // max(1, candidates.shape[0])))
        out: list[list[VectorHit]] = []
        ids = self._ids
        for start in range(0, len(queries), block):
            part = queries[start : start + block]
            if len(part) <= _FEW_QUERIES:
                # A search's own query or two: numpy's own loop, one thread. BLAS spreads a
                # matrix-vector product over threads that spin while they wait for memory: at
                # 100k vectors it cost three times the CPU for the same scores (measured).
                scores = np.stack([np.einsum("ij,j->i", candidates, query) for query in part])
            else:
                scores = part @ candidates.T
            if dense:
                scores = scores[:, rows]
            for line in scores:
                if keep < rows.size:
                    # Every row scoring at least the keep-th best: ties at the edge are all in,
                    # so the row-order tie break below picks what a full sort would.
                    edge = -np.partition(-line, keep - 1)[keep - 1]
                    best = np.flatnonzero(line >= edge)
                else:
                    best = np.arange(rows.size)
                best = best[np.lexsort((best, -line[best]))][:keep]
                out.append([VectorHit(str(ids[rows[i]]), float(line[i])) for i in best])
        return out
