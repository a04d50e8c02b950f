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
import threading
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from sagewai.core._queries import VectorFilter, VectorHit
from sagewai.errors import BackendError
from sagewai.stores.base._vector import best_positions
from sagewai.stores.sqlite._vector_cells import DEPTHS, Cells

__all__ = ["CELLS_FROM", "CHANGE_COLUMNS", "Change", "VectorIndex"]

CELLS_FROM: Final = 200_000
"""Live rows from which a search reads cells instead of every row (below it exact search takes
a few milliseconds; see ``docs/backends.md``). The store makes them in the background (see
:class:`VectorIndex`), so no search waits for them."""

CHANGE_COLUMNS: Final = (
    "seq, point_id, vector, project_id, scope_key, status, kind, fact_type, tags, "
    "created_at, valid_from, valid_to"
)
"""The columns of a change row, in the order :meth:`VectorIndex.apply` reads them."""

Change = tuple[Any, ...]
"""One row of :data:`CHANGE_COLUMNS`: a point as written, or deleted (its vector ``None``)."""

_FEW_QUERIES: Final = 4
"""Up to this many queries are scored one by one (see :meth:`VectorIndex.search`)."""
_ONE_THREAD_SCORES: Final = 1 << 20
"""Up to this many scores per product (rows times queries), a batch is scored in numpy's own
loop, one thread: BLAS's worker threads spin for about a tenth of a second after each product,
waiting for more, which costs more CPU than the product of a small matrix itself (a bridge's
write searches a few thousand rows with a few dozen queries; measured in ``docs/bridge.md``,
Performance)."""
_SCORES_PER_BLOCK: Final = 1 << 24
"""Scores computed per matrix product (64 MB of float32): bounds the memory of a large batch."""


def _members(rows: np.ndarray[Any, Any], chosen: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Which of ``rows`` are in ``chosen`` (sorted): a binary search each, where ``np.isin``
    sorts both."""
    if chosen.size == 0:
        return np.zeros(len(rows), dtype=bool)
    places = np.minimum(np.searchsorted(chosen, rows), chosen.size - 1)
    return np.asarray(chosen[places] == rows)


class VectorIndex:
    """Unit vectors and their payloads, searched exactly (see the module).

    Rows of deleted points are reused. Not thread-safe: its store calls it from one thread.

    Making the cells takes seconds (a fifth of a minute at a million rows): with
    ``background=True`` the search that finds them needed starts making them on a thread of
    their own and is answered exactly, like every search until they are ready; the first search
    after that files the rows written meanwhile and uses them. A short-lived process (a CLI
    call) never waits for them.

    Args:
        dimension: Vector length.
        cells_from: Live rows from which searches use cells (see :meth:`search`).
        background: Make the cells on a thread of their own (the store's default) instead of
            in the search that first needs them.

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

    def __init__(
        self, dimension: int, *, cells_from: int = CELLS_FROM, background: bool = False
    ) -> None:
        self.dimension = dimension
        self._cells_from = cells_from
        self._background = background
        self._cells: Cells | None = None
        """The approximate index over the rows, made by the first search that needs it."""
        self._making: _Making | None = None
        """Cells being made on their own thread, and the rows written since they started."""
        self._declined_at = 0
        """Live rows when cells were last found not to pay (tried again at twice as many)."""
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
        self._rows_with_tag: dict[int, np.ndarray[Any, Any]] = {}
        """The rows holding each tag, sorted, as of the last search that read the tag."""
        self._tag_added: dict[int, set[int]] = {}
        self._tag_removed: dict[int, set[int]] = {}
        """Rows given or taken a tag since its rows were last sorted (merged when read)."""

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
        if self._cells is not None:
            self._cells.assign(self._matrix, rows)
        if self._making is not None:
            self._making.written.append(rows)
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
            self._tag_added.get(old, set()).discard(row)
            self._tag_removed.setdefault(old, set()).add(row)
        if tags:
            codes = tuple({self._code(tag) for tag in tags})
            self._tags_of[row] = codes
            for code in codes:
                self._tag_removed.get(code, set()).discard(row)
                self._tag_added.setdefault(code, set()).add(row)

    def _rows_holding(self, code: int) -> np.ndarray[Any, Any]:
        """The rows holding the tag ``code``, sorted: the changes since the last read merged in
        (linear in the tag's rows, where a Python set of them cost a conversion every search:
        134 ms of CPU per search at 1M rows)."""
        rows = self._rows_with_tag.get(code, np.zeros(0, dtype=np.int64))
        removed = self._tag_removed.pop(code, None)
        if removed:
            gone = np.fromiter(removed, np.int64, len(removed))
            rows = rows[~_members(rows, np.sort(gone))]
        added = self._tag_added.pop(code, None)
        if added:
            new = np.sort(np.fromiter(added, np.int64, len(added)))
            new = new[~_members(new, rows)]  # a row written again with the same tag
            rows = np.insert(rows, np.searchsorted(rows, new), new)
        if removed or added:
            self._rows_with_tag[code] = rows
        return rows

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
        self, part: np.ndarray[Any, Any], values: Sequence[str]
    ) -> np.ndarray[Any, Any] | None:
        """Where ``part`` (a column's values) holds one of ``values`` (``None``: nowhere can)."""
        codes = [self._codes[v] for v in set(values) if v in self._codes]
        if not codes:
            return None
        found = part == codes[0]
        for code in codes[1:]:
            found |= part == code
        return np.asarray(found)

    def _matching(
        self, where: VectorFilter, at: np.ndarray[Any, Any] | None = None
    ) -> np.ndarray[Any, Any] | None:
        """Which of the rows ``at`` (default: every row) match ``where``, as a mask over them
        (the semantics of :meth:`VectorFilter.matches`); ``None`` when none can."""
        size = self._size

        def part(column: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
            return column[:size] if at is None else column[at]

        def among(*chosen: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
            """Which rows are in one of ``chosen``: a mask over every row, read at ``at`` (a
            scatter and a gather, where ``np.isin`` sorts both)."""
            mask = np.zeros(size, dtype=bool)
            for rows in chosen:
                mask[rows] = True
            return mask if at is None else mask[at]

        mask = part(self._live).copy()
        for column, values in (
            (self._scope, where.scope_keys),
            (self._status, where.statuses),
            (self._kind, where.kinds),
            (self._fact_type, where.fact_types),
        ):
            if values is None:
                continue
            found = self._one_of(part(column), values)
            if found is None:
                return None
            mask &= found
        if where.tags_any is not None:
            codes = {self._codes[tag] for tag in where.tags_any if tag in self._codes}
            mask &= among(*(self._rows_holding(code) for code in codes))
        if where.ids is not None:
            chosen = [self._row_of[i] for i in set(where.ids) if i in self._row_of]
            mask &= among(np.array(chosen, dtype=np.int64))
        if where.valid_at is not None:
            moment = where.valid_at
            mask &= part(self._created) <= moment
            mask &= part(self._valid_from) <= moment
            mask &= part(self._valid_to) > moment
        return mask

    def rows(self, where: VectorFilter) -> np.ndarray[Any, Any]:
        """The rows matching ``where`` (the semantics of :meth:`VectorFilter.matches`), ordered."""
        mask = self._matching(where)
        return np.zeros(0, dtype=np.int64) if mask is None else np.flatnonzero(mask)

    def count(self, where: VectorFilter) -> int:
        """How many points match ``where``."""
        return int(self.rows(where).size)

    def search(
        self, queries: np.ndarray[Any, Any], top_k: int, where: VectorFilter
    ) -> list[list[VectorHit]]:
        """The ``top_k`` best rows matching ``where`` for each unit query, highest first.

        Ties keep row order. From :data:`CELLS_FROM` live rows a query reads the cells nearest
        to it (:class:`~sagewai.stores.sqlite._vector_cells.Cells`) where they were calibrated to
        find its neighbours; a filter passing too few of their rows, or vectors the cells do not
        suit, are searched exactly.
        """
        cells = self._usable_cells()
        if cells is None or top_k <= 0:
            return self._search_exact(queries, top_k, where)
        out: list[list[VectorHit] | None] = [
            self._search_cells(cells, q, top_k, where) for q in queries
        ]
        exact = [n for n, hits in enumerate(out) if hits is None]
        if exact:
            for n, hits in zip(
                exact, self._search_exact(queries[exact], top_k, where), strict=True
            ):
                out[n] = hits
        return [hits or [] for hits in out]

    def _usable_cells(self) -> Cells | None:
        """The cells, made (again) when the live rows reached :data:`CELLS_FROM`, doubled or
        halved since they were made; ``None`` below that size or where cells do not pay."""
        live = len(self)
        if live < self._cells_from:
            return None
        cells = self._cells
        if cells is not None and cells.trained_on // 2 <= live <= 2 * cells.trained_on:
            return cells
        if cells is None and self._declined_at and live <= 2 * self._declined_at:
            return None
        size = self._size
        if not self._background:
            self._cells = Cells.train(self._matrix[:size], self._live[:size])
            self._declined_at = 0 if self._cells is not None else live
            return self._cells
        making = self._making
        if making is None:
            # The thread reads this matrix while later writes may change its rows: every row
            # written from now on is filed again when the cells are taken in.
            self._making = _Making(self._matrix[:size], self._live[:size].copy())
            return cells  # the old cells (or exact) until the new ones are ready
        if not making.done.is_set():
            return cells
        self._making = None
        made = making.cells
        if made is None:
            self._cells, self._declined_at = None, live
            return None
        if making.written:
            made.assign(self._matrix, np.unique(np.concatenate(making.written)))
        self._cells, self._declined_at = made, 0
        return made

    def _search_cells(
        self, cells: Cells, query: np.ndarray[Any, Any], top_k: int, where: VectorFilter
    ) -> list[VectorHit] | None:
        """One query through the cells; ``None``: search it exactly."""
        closeness = cells.closeness(query)
        wanted = cells.depth(closeness, max(top_k, DEPTHS[0]))
        probes = cells.probes_for(wanted)
        if probes is None:
            return None
        rows = cells.candidates(closeness, probes)
        mask = self._matching(where, rows)
        if mask is None:
            return []  # a filter value no row holds: nothing matches anywhere
        passing = int(np.count_nonzero(mask))
        if passing == 0:
            return None
        # The filter passes this share of the rows near the query; to find the ``top_k`` best
        # of them the cells must hold the nearest ``top_k / share`` of all rows on average,
        # twice that to cover how far the last of them may fall (measured: at 1x a filter
        # passing 5 % found 99.2 % of the exact top 10). Deep enough for a filter passing
        # 0.4 % of the rows (:data:`DEPTHS`); a narrower one is searched exactly, where it
        # gathers few rows.
        deeper = cells.probes_for(2 * wanted * rows.size / passing)
        if deeper is None:
            return None
        if deeper > probes:
            rows = cells.candidates(closeness, deeper)
            mask = self._matching(where, rows)
            if mask is None:
                return []
        rows = self._once(rows[mask])  # in row order (ties), once (a row is in two cells)
        scores = self._matrix[rows] @ query
        ids = self._ids
        best = best_positions(scores, top_k)
        return [VectorHit(str(ids[rows[i]]), float(scores[i])) for i in best]

    def _once(self, rows: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """``rows`` in row order, each once. From a few thousand rows they are marked in a mask of
        every row and read back: at 20,000 of a million rows six times cheaper than sorting them
        (measured), at 500 twice as dear."""
        if rows.size * 500 < self._size:
            return np.unique(rows)
        seen = np.zeros(self._size, dtype=bool)
        seen[rows] = True
        return np.flatnonzero(seen)

    def _search_exact(
        self, queries: np.ndarray[Any, Any], top_k: int, where: VectorFilter
    ) -> list[list[VectorHit]]:
        """Exact :meth:`search`: every matching row is scored.

        When most rows match, every row is scored in place (no copy of the
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
            elif len(part) * candidates.shape[0] <= _ONE_THREAD_SCORES:
                scores = np.einsum("kj,ij->ki", part, candidates)
            else:
                scores = part @ candidates.T
            if dense:
                scores = scores[:, rows]
            for line in scores:
                best = best_positions(line, keep)
                out.append([VectorHit(str(ids[rows[i]]), float(line[i])) for i in best])
        return out


class _Making:
    """Cells made on a thread of their own (a daemon: a process may exit before they are done)."""

    def __init__(self, matrix: np.ndarray[Any, Any], live: np.ndarray[Any, Any]) -> None:
        self.cells: Cells | None = None
        self.written: list[np.ndarray[Any, Any]] = []
        """Rows written since the thread started (filed again when the cells are taken in)."""
        self.done = threading.Event()
        threading.Thread(
            target=self._make, args=(matrix, live), name="sagewai-vector-cells", daemon=True
        ).start()

    def _make(self, matrix: np.ndarray[Any, Any], live: np.ndarray[Any, Any]) -> None:
        try:
            self.cells = Cells.train(matrix, live)
        finally:
            self.done.set()
