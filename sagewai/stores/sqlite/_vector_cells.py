"""An approximate index over :class:`~sagewai.stores.sqlite._vector_index.VectorIndex`'s rows.

Why: an exact search reads every vector, 1.5 GB at a million 384-d vectors, about 74 ms of CPU.
The vectors are split into cells (spherical k-means on a sample), each vector is filed in the
two cells whose centres are nearest, and a search scores exactly the vectors of the cells whose
centres are nearest to the query (a few percent of the rows) instead of all of them: an
inverted file.

Why this and not a graph (HNSW): the index is derived, per process, and must follow writes made
by any process. A new vector joins its cell with one small matrix product, a deletion is the
index's ``live`` mask, an update re-files the row; building it is a few matrix products (a
graph took 25 times as long at 100k here; see ``docs/backends.md``), and it needs no library
beyond numpy.

Same results: how many cells a search reads is calibrated when the cells are made. Stored
vectors serve as sample queries; their exact neighbours are found once, and the index reads the
fewest cells that find :data:`TARGET_RECALL` of them, for each depth of :data:`DEPTHS`. Where
no such number reads less than :data:`MAX_SHARE` of the rows (vectors without structure, such
as uniform random ones, where nothing is near anything), the index declines and the search
stays exact.

Everything here is pure (no I/O), so it is tested without a database.
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np

__all__ = ["DEPTHS", "MAX_SHARE", "TARGET_RECALL", "UNLIKE_DEPTH", "Cells"]

DEPTHS: Final = (10, 20, 40, 80, 160, 320, 480, 640, 960, 1280, 1920, 2560, 3840, 5120)
"""How deep the probe counts are calibrated. A search for its ``top_k`` under a filter that
passes a share ``s`` of the rows must find the nearest ``top_k / s`` rows of all of them (a
filter passing 0.5 % of the rows, ``2 * 10 / 0.005``: 4,000; see ``VectorIndex``). Past 320
the steps are half as large: a count calibrated for twice the depth a filter needs reads
far more cells than it needs."""
TARGET_RECALL: Final = 0.997
"""Share of the sample queries' exact top 10 the calibrated probe count must find."""
UNLIKE_DEPTH: Final = 640
"""How deep a query further from every centre than :attr:`Cells.floor` is searched: as though it
wanted a stored vector's nearest 640 rows (searched exactly where no probe count reaches that
deep). Such a query (a question, where the stored vectors are statements) finds its neighbours
in cells further down its ranking than a stored vector does. Measured on ``scale_bench``'s
questions at a million rows (``docs/backends.md``, questions through the cells): with the
count for their top 10, 2 of 2,000 cells, recall@10 0.80; with this one, 27 cells, 0.996, at a
seventh of an exact search's CPU."""
MAX_SHARE: Final = 0.25
"""Above this share of the rows per search the index is not worth it: search stays exact."""
_SAMPLE_QUERIES: Final = 128
_SHALLOW: Final = 320
"""Depths up to this are calibrated before every row is filed (they decide whether the cells
pay); deeper ones after, from the rows' cells."""
_FLOOR_ROWS: Final = 4096
"""Held-out rows whose distance to their nearest centre sets :attr:`Cells.floor`."""
_ROUNDS: Final = 6
"""k-means rounds (on a sample: the centres only need to be good enough to split the rows)."""
_TRAIN_PER_CELL: Final = 32
"""Training sample: this many rows per cell."""
_ASSIGN_BATCH: Final = 16_384
"""Rows assigned per matrix product (bounds its memory: batch x cells float32)."""

Array = np.ndarray[Any, Any]


def cell_count(rows: int) -> int:
    """How many cells for ``rows`` vectors: about two square roots (a thousand rows each at 1M)."""
    return max(16, min(4096, int(2 * math.sqrt(rows))))


def _nearest(centres: Array, vectors: Array) -> Array:
    """The nearest centre (highest cosine) of each vector, in batches."""
    out = np.empty(len(vectors), dtype=np.int32)
    for start in range(0, len(vectors), _ASSIGN_BATCH):
        part = vectors[start : start + _ASSIGN_BATCH]
        out[start : start + len(part)] = np.argmax(part @ centres.T, axis=1)
    return out


def _two_nearest(centres: Array, vectors: Array) -> Array:
    """The two nearest centres of each vector (shape ``(len(vectors), 2)``), in batches."""
    out = np.empty((len(vectors), 2), dtype=np.int32)
    for start in range(0, len(vectors), _ASSIGN_BATCH):
        scores = vectors[start : start + _ASSIGN_BATCH] @ centres.T
        lines = np.arange(len(scores))
        first = np.argmax(scores, axis=1)  # two argmax passes: far cheaper than argpartition
        scores[lines, first] = -np.inf
        out[start : start + len(scores), 0] = first
        out[start : start + len(scores), 1] = np.argmax(scores, axis=1)
    return out


def _cell_ranks(rank: Array, cells: Array) -> Array:
    """Each neighbour's nearer cell's rank (``cells``: the two cells of each sample query's
    neighbours; ``rank``: each query's rank of each cell, 0 the nearest centre)."""
    nearer: Array = np.minimum(
        np.take_along_axis(rank, cells[..., 0], axis=1),
        np.take_along_axis(rank, cells[..., 1], axis=1),
    )
    return nearer


def _filtered_ranks(ranks: Array, depth: int, rng: np.random.Generator) -> Array:
    """The cell ranks of the first :data:`DEPTHS` ``[0]`` neighbours that pass a random filter
    of the share a search reads ``depth`` rows for (``2 * 10 / depth``, see ``VectorIndex``),
    eight draws a query: what a filtered search must find, where every one of the nearest
    ``depth`` rows is far more than it needs (on topics the last of 640 neighbours lay in the
    hundredth cell)."""
    passing = rng.random((8, *ranks.shape)) < 2 * DEPTHS[0] / depth
    first = passing & (np.cumsum(passing, axis=2) <= DEPTHS[0])
    return np.broadcast_to(ranks, passing.shape)[first]


def _probe_counts(
    ranks: list[tuple[int, Array]], sizes: Array, rows: int, at_least: int = 1
) -> dict[int, int]:
    """The fewest cells to read for each depth (see :meth:`Cells._calibrate`).

    Args:
        ranks: For each depth, ascending, the cell ranks of the neighbours it must find.
        sizes: The rows in each cell (estimated or counted); the first depth whose count reads
            more than :data:`MAX_SHARE` of the rows ends the list.
        rows: The live rows.
        at_least: The count of the depth before the first of ``depths`` (a deeper search
            never reads fewer cells).
    """
    largest = np.cumsum(np.sort(sizes)[::-1])
    probes: dict[int, int] = {}
    count = at_least
    for depth, found in ranks:
        ordered = np.sort(found.ravel())
        count = max(count, int(ordered[math.ceil(TARGET_RECALL * ordered.size) - 1]) + 1)
        if largest[count - 1] > MAX_SHARE * rows:
            break
        probes[depth] = count
    return probes


class Cells:
    """Cell centres, the cell of each row, and the rows of each cell (see the module).

    The rows of each cell are kept sorted in one array (``_order``, cut at ``_starts``); rows
    written since that sort are kept apart (``_moved``) and looked at by every search until the
    next sort, which happens when they grow past a twentieth of the rows.

    Args:
        centres: Unit cell centres, one per row.
        probes: How many cells a search reads, by the number of nearest rows it must find
            (:data:`DEPTHS`; a depth missing: too many cells, search exactly).
        trained_on: The number of live rows the centres were made from.
    """

    def __init__(self, centres: Array, probes: dict[int, int], trained_on: int) -> None:
        self.centres = centres.astype(np.float32, copy=False)
        self.probes = probes
        self.trained_on = trained_on
        self._cell = np.full((0, 2), -1, dtype=np.int32)
        """The two cells of each row (``-1``: not filed)."""
        self._order = np.zeros(0, dtype=np.int64)
        self._starts = np.zeros(len(centres) + 1, dtype=np.int64)
        self._sorted = np.zeros(0, dtype=bool)
        """Rows whose place in ``_order`` is current."""
        self._moved: set[int] = set()
        self.floor = -1.0
        """The cosine to its nearest centre that all but 1 % of the stored vectors reach: a query
        further from every centre is unlike what the probe counts were calibrated on."""

    @classmethod
    def train(cls, matrix: Array, live: Array, seed: int = 0) -> Cells | None:
        """Cells for the ``live`` rows of ``matrix``; ``None`` when they would not pay.

        k-means on a sample, then the probe counts are calibrated (see the module), then every
        live row is filed (only when the cells pay).
        """
        rows = np.flatnonzero(live)
        if rows.size < 2 * _SAMPLE_QUERIES:
            return None
        rng = np.random.default_rng(seed)
        count = cell_count(int(rows.size))
        sampled = np.sort(rng.choice(rows, min(rows.size, count * _TRAIN_PER_CELL), False))
        sample = matrix[sampled]
        centres = sample[rng.choice(len(sample), count, replace=False)].copy()
        for _ in range(_ROUNDS):
            owner = _nearest(centres, sample)
            order = np.argsort(owner, kind="stable")
            present, starts = np.unique(owner[order], return_index=True)
            sums = np.zeros_like(centres)
            sums[present] = np.add.reduceat(sample[order], starts, axis=0)
            norms = np.linalg.norm(sums, axis=1)
            filled = norms > 0
            centres[filled] = sums[filled] / norms[filled, None]
        cells = cls(centres, {}, int(rows.size))
        cells._calibrate(matrix, rows, sampled, rng)
        return cells if cells.probes else None

    def _calibrate(
        self, matrix: Array, rows: Array, sampled: Array, rng: np.random.Generator
    ) -> None:
        """Set :attr:`probes`: for each depth of :data:`DEPTHS`, the fewest cells that find
        :data:`TARGET_RECALL` of the sample queries' exact neighbours down to that depth, where
        that reads at most :data:`MAX_SHARE` of the rows; file every row when the cells pay.

        The sample queries and :attr:`floor` come from rows the centres were not trained on
        (the training rows lie nearer their centres than new vectors do: measured on topics,
        5 % of new queries fell below a floor taken from them instead of 1 %). The shallow
        depths, which decide whether the cells pay, file the neighbours with a matrix product
        (cell sizes estimated from the training sample), so that declining costs no filing of
        every row; the deeper depths, for filters that pass few rows, read the neighbours'
        cells once every row is filed.
        """
        unseen = np.ones(len(matrix), dtype=bool)
        unseen[sampled] = False
        held_out = rows[unseen[rows]]
        if held_out.size < _SAMPLE_QUERIES:
            held_out = rows
        picked = np.sort(rng.choice(held_out, _SAMPLE_QUERIES, replace=False))
        queries = matrix[picked]
        dead = np.ones(len(matrix), dtype=bool)
        dead[rows] = False  # scored with the rest (no copy of the matrix), then left out
        deepest = min(DEPTHS[-1], rows.size - 1)
        neighbours = np.empty((len(picked), deepest), dtype=np.int64)
        for start in range(0, len(picked), 8):
            scores = queries[start : start + 8] @ matrix.T
            scores[:, dead] = -np.inf
            scores[np.arange(len(scores)), picked[start : start + 8]] = -np.inf  # not itself
            best = np.argpartition(-scores, deepest - 1, axis=1)[:, :deepest]
            neighbours[start : start + len(best)] = np.take_along_axis(
                best, np.argsort(-np.take_along_axis(scores, best, axis=1), axis=1), axis=1
            )
        # The rank of each cell for each query: a neighbour is found when its cell's rank is
        # below the probe count (inside a cell the scoring is exact).
        ranking = np.argsort(-(queries @ self.centres.T), axis=1)
        rank = np.empty_like(ranking)
        rank[np.arange(len(ranking))[:, None], ranking] = np.arange(ranking.shape[1])
        checked = rng.choice(held_out, min(held_out.size, _FLOOR_ROWS), replace=False)
        closest = np.max(matrix[np.sort(checked)] @ self.centres.T, axis=1)
        self.floor = float(np.quantile(closest, 0.01))
        shallow = [depth for depth in DEPTHS if depth <= min(deepest, _SHALLOW)]
        near = neighbours[:, : shallow[-1]] if shallow else neighbours[:, :0]
        filed = _two_nearest(self.centres, matrix[sampled]).ravel()
        sizes = np.bincount(filed, minlength=len(self.centres)) * (rows.size / len(sampled))
        cells = _two_nearest(self.centres, matrix[near.ravel()]).reshape((*near.shape, 2))
        ranks = _cell_ranks(rank, cells)
        self.probes = _probe_counts([(d, ranks[:, :d]) for d in shallow], sizes, rows.size)
        if not self.probes:
            return
        self.assign(matrix, rows)
        deeper = [depth for depth in DEPTHS if _SHALLOW < depth <= deepest]
        if deeper and len(self.probes) == len(shallow):
            ranks = _cell_ranks(rank, self._cell[neighbours])
            sizes = np.diff(self._starts).astype(np.float64)
            found = [(d, _filtered_ranks(ranks[:, :d], d, rng)) for d in deeper]
            self.probes.update(_probe_counts(found, sizes, rows.size, self.probes[shallow[-1]]))

    def probes_for(self, depth: float) -> int | None:
        """Cells to read to find the nearest ``depth`` rows; ``None``: search exactly."""
        for calibrated, count in self.probes.items():
            if calibrated >= depth:
                return count
        return None

    def assign(self, matrix: Array, rows: Array) -> None:
        """File ``rows`` (new or rewritten vectors) in their nearest cells."""
        if rows.size == 0:
            return
        needed = int(rows.max()) + 1
        filed = len(self._cell)
        if needed > filed:
            size = max(needed, filed + filed // 2)
            self._cell = np.concatenate([self._cell, np.full((size - filed, 2), -1, np.int32)])
            self._sorted = np.concatenate([self._sorted, np.zeros(size - filed, bool)])
        self._cell[rows] = _two_nearest(self.centres, matrix[rows])
        self._sorted[rows] = False
        if len(self._moved) + rows.size > max(1024, len(self._cell) // 20):
            self._sort()
        else:
            self._moved.update(rows.tolist())

    def _sort(self) -> None:
        filed = np.flatnonzero(self._cell[:, 0] >= 0)
        pairs = self._cell[filed].ravel()  # each row twice, once in each of its cells
        self._order = np.repeat(filed, 2)[np.argsort(pairs, kind="stable")]
        counts = np.bincount(pairs, minlength=len(self.centres))
        self._starts = np.concatenate([[0], np.cumsum(counts)])
        self._sorted[:] = False
        self._sorted[filed] = True
        self._moved.clear()

    def closeness(self, query: Array) -> Array:
        """The unit ``query``'s cosine to each centre."""
        scores: Array = self.centres @ query
        return scores

    def depth(self, closeness: Array, wanted: int) -> int:
        """How many nearest rows a query must be searched for to find its ``wanted`` best:
        ``wanted``, or :data:`UNLIKE_DEPTH` for a query further from every centre than
        :attr:`floor` (its :meth:`closeness`)."""
        return wanted if float(closeness.max()) >= self.floor else max(wanted, UNLIKE_DEPTH)

    def candidates(self, closeness: Array, probes: int) -> Array:
        """The rows of the ``probes`` cells nearest to a query (its :meth:`closeness`), unordered;
        a row filed in two of them is there twice (the caller removes repeats from the few
        rows its filter keeps: cheaper than sorting every candidate)."""
        near = np.argpartition(-closeness, probes - 1)[:probes]
        starts, order = self._starts, self._order
        parts = [order[starts[cell] : starts[cell + 1]] for cell in near.tolist()]
        found = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        found = found[self._sorted[found]]
        if self._moved:
            wanted = np.zeros(len(self.centres), dtype=bool)
            wanted[near] = True
            moved = np.fromiter(self._moved, np.int64, len(self._moved))
            found = np.concatenate([found, moved[wanted[self._cell[moved]].any(axis=1)]])
        return found
