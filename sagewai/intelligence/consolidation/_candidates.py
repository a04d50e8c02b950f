"""Every pair of facts that could merge, found before a run decides anything: exact and stable.

Why a table built up front: a nearest-neighbour search per fact was most of a run's time, and
most of its hits were facts that can never merge ("Ana Silva likes tea" next to "Ben Okafor likes
tea"). And an approximate index searched while the run changes statuses answers a little
differently from the same index searched by a dry run, which changes nothing: at 100k facts a
dry run planned one to eight merges fewer or more than the real run then made.

How: a merge needs the names and places each fact mentions to be among the other's words (the
refusal "different names or places" of :func:`~.dedup.merge_rule`, which no rule overrides). So
the facts of a scope are grouped by the set of names they mention, and a group is compared only
with the facts whose words hold all of its names (the intersection of those names' lists of
facts); inside such a block the cosines are computed exactly (numpy, one matrix product per
block). Facts that mention no name may merge with each other whatever they say: they are
compared with each other exhaustively, or (past :data:`EXHAUSTIVE` of them in a scope) through
the vector index, searched now, before anything changes. Facts are read in bulk pages, their
vectors in one read per page.

The table is a pure function of the stored facts and vectors when the run starts, so a dry run
and the real run see the same candidates; each run then keeps those its own view calls active.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from sagewai.core._embedder import Embedder, Vector
from sagewai.core._port import MemoryPort
from sagewai.core._queries import VectorHit
from sagewai.core._records import Fact
from sagewai.intelligence.consolidation._reading import Reader
from sagewai.intelligence.consolidation._selection import Selection, scope_key_of
from sagewai.intelligence.consolidation._structure import (
    FactStructure,
    Reading,
    decode_reading,
    stored_structure,
)

__all__ = ["EXHAUSTIVE", "CandidateTable", "build_candidates"]

EXHAUSTIVE = 60_000
"""Facts without a name in one scope up to which they are compared with each other exactly
(a 60k x 60k product costs about a minute on two cores); past it the index is searched."""
_PAGE = 1_000
_CELLS = 4_000_000
"""Cosines computed at once at most (16 MB of float32)."""

_T = TypeVar("_T")
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class CandidateTable:
    """The facts each fact could merge with, nearest first, with their exact cosine.

    Attributes:
        ids: The facts read, in scan order.
        position: Fact id -> its row in ``ids``.
        offsets: Row ``i``'s candidates are ``others[offsets[i]:offsets[i + 1]]``.
        others: Candidate rows, by fact: descending cosine, then ascending id.
        scores: Their cosines.
        index_searches: Facts whose candidates came from the vector index.
        readings: The encoded reading of each fact with candidates (``None`` for the others
            and for facts that hold a stored structure), made while the table was built.
        digests: ``hash()`` of the content each reading was read from.
    """

    ids: list[str]
    position: dict[str, int]
    offsets: IntArray
    others: IntArray
    scores: FloatArray
    index_searches: int
    readings: list[bytes | None]
    digests: list[int]

    def __contains__(self, fact_id: object) -> bool:
        return fact_id in self.position

    @property
    def pairs(self) -> int:
        """Candidate pairs (each counted once)."""
        return len(self.others) // 2

    def reading(self, fact: Fact) -> Reading | None:
        """The reading of ``fact``'s content made for the table, if it is still that content."""
        row = self.position.get(fact.id)
        if row is None:
            return None
        blob = self.readings[row]
        if blob is None or self.digests[row] != hash(fact.content):
            return None
        return decode_reading(blob)

    def hits(self, fact_id: str) -> list[VectorHit]:
        """The candidates of a fact of the table, nearest first."""
        row = self.position[fact_id]
        start, end = int(self.offsets[row]), int(self.offsets[row + 1])
        ids = self.ids
        return [
            VectorHit(ids[other], score)
            for other, score in zip(
                self.others[start:end].tolist(), self.scores[start:end].tolist(), strict=True
            )
        ]


@dataclass(slots=True)
class _Facts:
    """What the table needs of the facts read: ids, scopes, names, words and unit vectors, and
    the readings the decisions will use."""

    ids: list[str]
    scopes: list[str]
    names: list[frozenset[str]]
    words: list[frozenset[str]]
    vectors: FloatArray
    readings: list[bytes | None]
    digests: list[int]


async def _find(
    port: MemoryPort, selection: Selection, after: tuple[datetime, str] | None
) -> tuple[list[Fact], tuple[datetime, str] | None]:
    """One page of the selection's active facts, and where the next starts."""
    page = await port.find(selection.scan(after=after, limit=_PAGE, updated_since=None))
    if not page:
        return [], None
    return [f for f in page if selection.contains(f)], (page[-1].created_at, page[-1].id)


async def _found_after(
    previous: asyncio.Task[dict[str, Vector]],
    port: MemoryPort,
    selection: Selection,
    after: tuple[datetime, str],
) -> tuple[list[Fact], tuple[datetime, str] | None]:
    """:func:`_find` once the previous page's vectors are read."""
    await asyncio.wait([previous])
    return await _find(port, selection, after)


async def _vectors(port: MemoryPort, embedder: Embedder, facts: list[Fact]) -> dict[str, Vector]:
    """The stored vectors of ``facts``."""
    found = await port.get_vectors([f.id for f in facts])
    missing = [f for f in facts if f.id not in found]
    if missing:
        # The index lost these vectors: embedded to compare them (never stored here).
        made = await embedder.embed_documents([f.content for f in missing])
        found.update((f.id, made[i]) for i, f in enumerate(missing))
    return found


async def _read(
    port: MemoryPort,
    selection: Selection,
    embedder: Embedder,
    capacity: int,
    reader: Reader,
) -> _Facts:
    read = _Facts(
        [], [], [], [], np.empty((max(capacity, 1), embedder.dimension), np.float32), [], []
    )
    tasks: list[asyncio.Task[Any]] = []

    def start(work: Coroutine[Any, Any, _T]) -> asyncio.Task[_T]:
        task = asyncio.create_task(work)
        tasks.append(task)
        return task

    # For consecutive pages: the stores read page i + 1 (its facts once page i's vectors are
    # read: finding it meanwhile only made the stores' threads, both decoding in Python, wait
    # for each other; no gain at 100k, slower 1M tables) while the reading process reads page
    # i's words and this process describes page i - 1.
    finding = start(_find(port, selection, None))
    waiting: asyncio.Task[None] | None = None
    try:
        while True:
            facts, after = await finding
            stored = [stored_structure(fact) for fact in facts]
            vectors = start(_vectors(port, embedder, facts))
            if after is not None:
                finding = start(_found_after(vectors, port, selection, after))
            asked = start(
                reader.read([f.content for f, s in zip(facts, stored, strict=True) if s is None])
            )
            if waiting is not None:
                await waiting
            waiting = start(_describe(read, facts, vectors, stored, asked))
            tasks = [t for t in tasks if not t.done()]
            if after is None:
                break
        await waiting
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    read.vectors = read.vectors[: len(read.ids)]
    return read


async def _describe(
    read: _Facts,
    facts: list[Fact],
    vectors: asyncio.Task[dict[str, Vector]],
    stored: list[FactStructure | None],
    asked: asyncio.Task[list[bytes]],
) -> None:
    """Add one page's facts to ``read`` (their vectors made unit length) once its vectors and
    readings are back."""
    found = await vectors
    blobs = iter(await asked)
    start = len(read.ids)
    if len(read.ids) + len(facts) > len(read.vectors):
        read.vectors = np.resize(
            read.vectors, (2 * (len(read.ids) + len(facts)), read.vectors.shape[1])
        )
    for fact, structure in zip(facts, stored, strict=True):
        blob: bytes | None = None
        if structure is None:
            blob = next(blobs)
            structure, _ = decode_reading(blob)
        read.vectors[len(read.ids)] = found[fact.id]
        read.ids.append(fact.id)
        read.scopes.append(scope_key_of(fact))
        read.names.append(structure.names)
        read.words.append(structure.words)
        read.readings.append(blob)
        read.digests.append(hash(fact.content))
    rows = read.vectors[start : len(read.ids)]
    norms = np.linalg.norm(rows, axis=1)
    norms[norms == 0.0] = 1.0
    rows /= norms[:, None]


class _Pairs:
    """Directed candidate pairs as they are found, kept in numpy chunks."""

    def __init__(self) -> None:
        self.sources: list[IntArray] = []
        self.targets: list[IntArray] = []
        self.scores: list[FloatArray] = []

    def add(self, sources: IntArray, targets: IntArray, scores: FloatArray) -> None:
        if len(sources):
            self.sources.append(sources)
            self.targets.append(targets)
            self.scores.append(scores)


def _block(
    facts: _Facts, rows: IntArray, pool: IntArray, floor: float, pairs: _Pairs, *, named: bool
) -> None:
    """Cosines of ``rows`` against ``pool`` (exact); pairs at or above ``floor`` are kept.

    With ``named`` the rows mention names; a pair is kept only when the names of each are among
    the other's words.
    """
    vectors = facts.vectors
    step = max(1, _CELLS // max(1, len(pool)))
    targets_of = vectors[pool].T
    for start in range(0, len(rows), step):
        part = rows[start : start + step]
        cosines = vectors[part] @ targets_of
        at, to = np.nonzero(cosines >= floor)
        sources, targets = part[at], pool[to]
        scores = cosines[at, to].astype(np.float32)
        keep = sources != targets
        if named:
            names, words = facts.names, facts.words
            keep &= np.fromiter(
                (
                    names[t] <= words[s] and names[s] <= words[t]
                    for s, t in zip(sources.tolist(), targets.tolist(), strict=True)
                ),
                dtype=bool,
                count=len(sources),
            )
        pairs.add(sources[keep], targets[keep], scores[keep])


def _named_blocks(facts: _Facts, members: Sequence[int], floor: float, pairs: _Pairs) -> None:
    """The facts of one scope that mention names, against the facts whose words hold them.

    The facts are blocked by their two rarest names (every name of a fact must be among a
    candidate's words; the pair of rarest ones already cuts the pool to a person or two), and
    the rest of the names of both sides are checked on the pairs at or above the floor.
    """
    mentioned = {n for i in members for n in facts.names[i]}
    postings: dict[str, list[int]] = defaultdict(list)
    for i in members:
        for word in facts.words[i] & mentioned:
            postings[word].append(i)
    arrays = {w: np.asarray(p, dtype=np.int64) for w, p in postings.items()}
    empty = np.empty(0, dtype=np.int64)
    blocks: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for i in members:
        if facts.names[i]:
            rarest = sorted(facts.names[i], key=lambda n: (len(arrays.get(n, empty)), n))
            blocks[tuple(rarest[:2])].append(i)
    for key, rows in blocks.items():
        pool = arrays.get(key[0], empty)
        if len(key) > 1:
            pool = np.intersect1d(pool, arrays.get(key[1], empty), assume_unique=True)
        if len(pool):
            _block(facts, np.asarray(rows, dtype=np.int64), pool, floor, pairs, named=True)


async def _nameless(
    port: MemoryPort,
    selection: Selection,
    facts: _Facts,
    members: list[int],
    pairs: _Pairs,
    *,
    floor: float,
    threshold: float,
    neighbours: int,
    max_neighbours: int,
    search_ef: int | None,
) -> int:
    """The facts of one scope mentioning no name, against each other (exactly when few, else
    through the index); returns how many facts were searched in the index."""
    rows = np.asarray(members, dtype=np.int64)
    if len(rows) <= EXHAUSTIVE:
        _block(facts, rows, rows, floor, pairs, named=False)
        return 0
    # Many facts without a name: the index finds their neighbours, searched before the run
    # changes anything (so a dry run finds the same), widened while even the last is a
    # duplicate; the hits are scored again exactly.
    position = {facts.ids[i]: i for i in members}
    vectors = facts.vectors
    where = selection.neighbours_in(facts.scopes[members[0]])
    k = neighbours
    todo = members
    while todo:
        found = await port.nearest_many([vectors[i] for i in todo], k + 1, where, ef=search_ef)
        wider: list[int] = []
        for source, hits in zip(todo, found, strict=True):
            targets = [position[h.id] for h in hits if h.id in position]
            if targets:
                chosen = np.asarray(targets, dtype=np.int64)
                scores = (vectors[chosen] @ vectors[source]).astype(np.float32)
                keep = (scores >= floor) & (chosen != source)
                origin = np.full(int(keep.sum()), source, dtype=np.int64)
                pairs.add(origin, chosen[keep], scores[keep])
            if len(hits) == k + 1 and hits[-1].score >= threshold and k < max_neighbours:
                wider.append(source)
        k = min(max_neighbours, k * 2)
        todo = wider
    return len(members)


def _table(
    facts: _Facts, pairs: _Pairs, *, threshold: float, max_neighbours: int, searched: int
) -> CandidateTable:
    """Symmetric, deduplicated, sorted candidate lists, at most ``max_neighbours`` above the
    threshold and as many below it per fact."""
    count = len(facts.ids)
    empty_int = np.empty(0, dtype=np.int64)
    sources = np.concatenate(pairs.sources) if pairs.sources else empty_int
    targets = np.concatenate(pairs.targets) if pairs.targets else empty_int
    scores = np.concatenate(pairs.scores) if pairs.scores else np.empty(0, dtype=np.float32)
    # One cosine per unordered pair (the two directions may have been computed apart).
    low, high = np.minimum(sources, targets), np.maximum(sources, targets)
    _, first = np.unique(low * count + high, return_index=True)
    low, high, scores = low[first], high[first], scores[first]
    sources = np.concatenate([low, high])
    targets = np.concatenate([high, low])
    scores = np.concatenate([scores, scores])
    rank = np.empty(count, dtype=np.int64)
    rank[np.argsort(np.asarray(facts.ids, dtype=object), kind="stable")] = np.arange(count)
    order = np.lexsort((rank[targets], -scores, sources))
    sources, targets, scores = sources[order], targets[order], scores[order]
    starts = np.searchsorted(sources, np.arange(count + 1))
    within = np.arange(len(sources)) - starts[sources]
    strong = scores >= threshold
    # Entries above the threshold before each one, overall and then in its row.
    strong_before: IntArray = np.cumsum(strong, dtype=np.int64) - strong
    strong_in_row: IntArray = strong_before - strong_before[starts[sources]]
    keep = np.where(strong, within < max_neighbours, within - strong_in_row < max_neighbours)
    sources, targets, scores = sources[keep], targets[keep], scores[keep]
    offsets = np.searchsorted(sources, np.arange(count + 1)).astype(np.int64)
    readings = facts.readings
    for row in np.flatnonzero(offsets[1:] == offsets[:-1]).tolist():
        readings[row] = None  # never compared: its reading is not needed again
    return CandidateTable(
        ids=facts.ids,
        position={fact_id: i for i, fact_id in enumerate(facts.ids)},
        offsets=offsets,
        others=targets,
        scores=scores,
        index_searches=searched,
        readings=readings,
        digests=facts.digests,
    )


async def build_candidates(
    port: MemoryPort,
    selection: Selection,
    embedder: Embedder,
    *,
    floor: float,
    threshold: float,
    neighbours: int,
    max_neighbours: int,
    search_ef: int | None,
    reading_process: bool = False,
) -> CandidateTable:
    """Read the selection's active facts and find every pair that could merge.

    Args:
        port: The project's reads (the engine's port).
        selection: The facts of the run.
        embedder: Embeds a fact whose vector is missing from the index (never stored).
        floor: The lowest cosine at which a pair may merge.
        threshold: The similarity threshold (``max_neighbours`` candidates above it and as many
            below it are kept per fact).
        neighbours: The first width of an index search (facts without names, see module).
        max_neighbours: Candidates kept per fact on each side of the threshold.
        search_ef: The beam of those index searches.
        reading_process: Read the facts' words in a child process (see
            :class:`~.reading.Reader`) while this one pages through the store.
    """
    capacity = await port.count_matching(selection.count(updated_since=None))
    async with Reader(use_process=reading_process) as reader:
        facts = await _read(port, selection, embedder, capacity, reader)
    by_scope: dict[str, list[int]] = defaultdict(list)
    for i, scope in enumerate(facts.scopes):
        by_scope[scope].append(i)
    pairs = _Pairs()
    searched = 0
    for members in by_scope.values():
        _named_blocks(facts, members, floor, pairs)
        nameless = [i for i in members if not facts.names[i]]
        if len(nameless) > 1:
            searched += await _nameless(
                port,
                selection,
                facts,
                nameless,
                pairs,
                floor=floor,
                threshold=threshold,
                neighbours=neighbours,
                max_neighbours=max_neighbours,
                search_ef=search_ef,
            )
    return _table(
        facts, pairs, threshold=threshold, max_neighbours=max_neighbours, searched=searched
    )
