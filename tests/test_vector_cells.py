"""The cells of the embedded vector store's in-memory copy: same results as exact search where they
are used, declined where they would not find them, and current through rewrites and deletions."""

from __future__ import annotations

import numpy as np

from sagewai.core._queries import VectorFilter
from sagewai.stores.sqlite._vector_cells import UNLIKE_DEPTH, Cells
from sagewai.stores.sqlite._vector_index import Change, VectorIndex

DIM = 32
SCOPES = ("project:p:p", "user:p:u", "session:p:s1", "session:p:s2")


def _topics(rng: np.random.Generator, count: int, topics: int) -> np.ndarray:
    centres = rng.standard_normal((topics, DIM))
    points = centres[rng.integers(0, topics, count)] + 0.3 * rng.standard_normal((count, DIM))
    return (points / np.linalg.norm(points, axis=1, keepdims=True)).astype(np.float32)


def _changes(
    first_seq: int, ids: list[str], vectors: np.ndarray | None, scopes: list[str]
) -> list[Change]:
    return [
        (
            first_seq + n,
            point_id,
            None if vectors is None else vectors[n].astype("<f4").tobytes(),
            "p",
            scopes[n],
            "active",
            "fact",
            "general",
            "[]",
            0.0,
            0.0,
            float("inf"),
        )
        for n, point_id in enumerate(ids)
    ]


def _pair(rng: np.random.Generator, vectors: np.ndarray) -> tuple[VectorIndex, VectorIndex]:
    """The same rows in an index with cells from 1,000 rows and in an exact one."""
    fast, exact = VectorIndex(DIM, cells_from=1_000), VectorIndex(DIM, cells_from=10**9)
    scopes = [SCOPES[i] for i in rng.choice(4, len(vectors), p=[0.5, 0.3, 0.15, 0.05])]
    changes = _changes(1, [f"f{n}" for n in range(len(vectors))], vectors, scopes)
    fast.apply(changes)
    exact.apply(changes)
    return fast, exact


def _same(fast: VectorIndex, exact: VectorIndex, queries: np.ndarray, where: VectorFilter) -> float:
    found = fast.search(queries, 10, where)
    truth = exact.search(queries, 10, where)
    if not any(truth):
        return 0.0 if any(found) else 1.0
    shared = sum(
        len({h.id for h in a} & {h.id for h in b}) for a, b in zip(found, truth, strict=True)
    )
    return shared / sum(len(b) for b in truth)


def test_cells_find_what_exact_search_finds_under_every_filter() -> None:
    rng = np.random.default_rng(3)
    points = _topics(rng, 6_060, 60)
    fast, exact = _pair(rng, points[:6_000])
    queries = points[6_000:]  # the same topics, not stored
    assert fast._usable_cells() is not None  # the topics make cells pay: they are used
    for where in (
        VectorFilter(scope_keys=SCOPES, statuses=("active",)),
        VectorFilter(scope_keys=("user:p:u",)),
        VectorFilter(scope_keys=("session:p:s2",)),  # 5 %: searched exactly
        VectorFilter(scope_keys=SCOPES, ids=("f1", "f2", "f3")),
        VectorFilter(scope_keys=("nowhere",)),
    ):
        assert _same(fast, exact, queries, where) >= 0.99, where
    assert fast.search(queries[:1], 10, VectorFilter(scope_keys=("nowhere",))) == [[]]


def test_cells_follow_rewrites_and_deletions() -> None:
    rng = np.random.default_rng(5)
    vectors = _topics(rng, 6_000, 60)
    fast, exact = _pair(rng, vectors)
    assert fast._usable_cells() is not None
    everything = VectorFilter(scope_keys=SCOPES)
    query = vectors[:1]
    nearest = [h.id for h in fast.search(query, 10, everything)[0]]
    # delete the query's nearest rows, move others onto the query, add new ones next to it
    gone = _changes(10_000, nearest[:5], None, ["project:p:p"] * 5)
    moved = _changes(10_010, ["f5000", "f5001"], np.repeat(query, 2, axis=0), [SCOPES[0]] * 2)
    added = _changes(10_020, ["new1", "new2"], np.repeat(query, 2, axis=0), [SCOPES[0]] * 2)
    for changes in (gone, moved, added):
        fast.apply(changes)
        exact.apply(changes)
    hits = [h.id for h in fast.search(query, 10, everything)[0]]
    assert not set(hits) & set(nearest[:5])
    assert {"f5000", "f5001", "new1", "new2"} <= set(hits)
    assert hits == [h.id for h in exact.search(query, 10, everything)[0]]


def test_vectors_without_structure_are_searched_exactly() -> None:
    rng = np.random.default_rng(7)
    points = rng.standard_normal((4_000, DIM)).astype(np.float32)
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    assert Cells.train(points, np.ones(len(points), dtype=bool)) is None
    fast, exact = _pair(rng, points)
    assert fast._usable_cells() is None
    assert _same(fast, exact, points[:20], VectorFilter(scope_keys=SCOPES)) == 1.0


def test_a_query_unlike_the_stored_vectors_is_searched_deeper() -> None:
    rng = np.random.default_rng(9)
    points = _topics(rng, 6_000, 60)
    fast, exact = _pair(rng, points)
    cells = fast._usable_cells()
    assert cells is not None
    strangers = rng.standard_normal((40, DIM)).astype(np.float32)  # near no topic
    strangers /= np.linalg.norm(strangers, axis=1, keepdims=True)
    assert all(cells.depth(cells.closeness(q), 10) == UNLIKE_DEPTH for q in strangers)
    assert _same(fast, exact, strangers, VectorFilter(scope_keys=SCOPES)) >= 0.99
    # Between two topics (a question between the statements it asks about): the same.
    pairs = rng.choice(len(points), (40, 2))
    between = points[pairs[:, 0]] + points[pairs[:, 1]]
    between = (between / np.linalg.norm(between, axis=1, keepdims=True)).astype(np.float32)
    assert _same(fast, exact, between, VectorFilter(scope_keys=SCOPES)) >= 0.99


def test_cells_made_over_a_copy_with_deleted_rows_skip_them() -> None:
    rng = np.random.default_rng(11)
    points = _topics(rng, 6_060, 60)
    fast, exact = _pair(rng, points[:6_000])
    doomed = [f"f{n}" for n in range(0, 6_000, 3)]  # a third deleted before the cells exist
    for index in (fast, exact):
        index.apply(_changes(20_000, doomed, None, ["project:p:p"] * len(doomed)))
    assert fast._usable_cells() is not None
    everything = VectorFilter(scope_keys=SCOPES)
    assert not {h.id for hits in fast.search(points[6_000:], 10, everything) for h in hits} & set(
        doomed
    )
    assert _same(fast, exact, points[6_000:], everything) >= 0.99


def test_cells_made_in_the_background_answer_exactly_until_ready_then_know_every_write() -> None:
    rng = np.random.default_rng(5)
    points = _topics(rng, 7_060, 60)
    background = VectorIndex(DIM, cells_from=1_000, background=True)
    exact = VectorIndex(DIM, cells_from=10**9)
    ids = [f"f{n}" for n in range(6_000)]
    changes = _changes(1, ids, points[:6_000], ["project:p:p"] * 6_000)
    background.apply(changes)
    exact.apply(changes)
    where = VectorFilter(scope_keys=("project:p:p",))
    queries = points[7_000:]
    # The search that finds cells needed starts making them and is answered exactly.
    assert background.search(queries, 10, where) == exact.search(queries, 10, where)
    making = background._making
    assert making is not None
    assert background._cells is None
    # Writes while they are being made: new rows, a rewritten row, a deleted one.
    more = _changes(
        6_001, [f"g{n}" for n in range(1_000)], points[6_000:7_000], ["project:p:p"] * 1_000
    )
    moved = _changes(7_001, ["f7"], points[6_500:6_501], ["project:p:p"])
    gone = _changes(7_002, ["f8"], None, ["project:p:p"])
    for batch in (more, moved, gone):
        background.apply(batch)
        exact.apply(batch)
    assert making.done.wait(60)
    assert background._usable_cells() is not None  # taken in, the writes filed
    assert background._making is None
    assert _same(background, exact, queries, where) >= 0.99
    # A row written while the cells were made is found through them: each of the new rows and
    # the rewritten one is its own nearest neighbour; the deleted one is never returned.
    for point_id, vector in (
        ("g17", points[6_017]),
        ("g900", points[6_900]),
        ("f7", points[6_500]),
    ):
        assert background.search(vector[None, :], 1, where)[0][0].id == point_id
    assert all(h.id != "f8" for h in background.search(points[8:9], 10, where)[0])


def _tagged(changes: list[Change], tags: list[str]) -> list[Change]:
    return [(*change[:8], tag, *change[9:]) for change, tag in zip(changes, tags, strict=True)]


def test_narrow_filters_are_read_from_the_cells_with_the_results_of_exact_search() -> None:
    rng = np.random.default_rng(13)
    points = _topics(rng, 24_060, 24)  # large topics: a narrow filter's ten are near
    fast, exact = VectorIndex(DIM, cells_from=1_000), VectorIndex(DIM, cells_from=10**9)
    # one row in twenty holds "rare"; the tags change below, after the cells are made
    tags = ['["rare"]' if rng.random() < 0.05 else '["common"]' for _ in range(24_000)]
    ids = [f"f{n}" for n in range(24_000)]
    changes = _tagged(_changes(1, ids, points[:24_000], [SCOPES[0]] * 24_000), tags)
    for index in (fast, exact):
        index.apply(changes)
    cells = fast._usable_cells()
    assert cells is not None
    assert max(cells.probes) > 320  # calibrated deep enough for a filter passing 5 %
    rare = VectorFilter(scope_keys=SCOPES, tags_any=("rare",))
    queries = points[24_000:]
    through_cells = [fast._search_cells(cells, query, 10, rare) for query in queries]
    assert sum(hits is not None for hits in through_cells) >= 0.9 * len(queries)
    assert _same(fast, exact, queries, rare) >= 0.99
    # rows lose the tag, gain it, are deleted: the tag's rows follow
    retagged = _tagged(
        _changes(20_000, ids[:600], points[:600], [SCOPES[0]] * 600),
        ['["common"]' if t == '["rare"]' else '["rare", "common"]' for t in tags[:600]],
    )
    deleted = _changes(21_000, ids[600:900], None, [SCOPES[0]] * 300)
    for index in (fast, exact):
        index.apply(retagged)
        index.apply(deleted)
    assert fast.count(rare) == exact.count(rare)
    assert fast.count(rare) == sum(t == '["rare"]' for t in tags[900:]) + sum(
        t != '["rare"]' for t in tags[:600]
    )
    assert _same(fast, exact, queries, rare) >= 0.99
    for hits, truth in zip(
        fast.search(queries, 10, rare), exact.search(queries, 10, rare), strict=True
    ):
        assert not {h.id for h in hits} & set(ids[600:900])
        assert len(hits) == len(truth)
