"""The one-time upgrade of an embedded folder whose vector points are keyed by fact id alone.

Why: the previous release wrote a fact's vector under its fact id. Point ids now carry the project
(``project_id + "\\x1f" + fact_id``, see
:class:`~sagewai.stores.base._vector.ProjectVectorStore`), so
an old folder opened by this release would find none of its vectors: dense search would miss
every old fact and deleting one would leave its point behind. This module re-keys the old points
of every project in the folder, once, before the engine's first operation.

Crash safety: each batch first writes the points under their new ids, then deletes the old ids,
and the folder's manifest is marked only after the last batch. A run stopped anywhere leaves
every vector under its old id, its new id or both, and the next open runs again: a point found
under its old id is moved (again), one found only under its new id is counted as already moved,
one found under neither is skipped and counted as missing (the fact stays searchable by keyword).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from sagewai.core._pieces import piece_ids
from sagewai.core._queries import FactQuery, VectorPayload, VectorRecord
from sagewai.core._records import Fact
from sagewai.stores.base._vector import ProjectVectorStore, VectorStore
from sagewai.stores.sqlite._metadata import SqliteMetadataStore

__all__ = ["VectorIdMigration", "migrate_vector_ids"]

logger = logging.getLogger(__name__)

BATCH_SIZE: Final = 256
"""Facts per batch: one read, one upsert and one delete of the vector store each."""
_SEPARATOR: Final = "\x1f"


@dataclass(frozen=True, slots=True)
class VectorIdMigration:
    """What :func:`migrate_vector_ids` did."""

    projects: int
    facts: int
    """Facts read from the metadata store (every status, every project)."""
    moved: int
    """Points re-keyed: facts' vectors and the piece vectors of long records."""
    already_moved: int
    """Facts whose vector was under its new id already (an earlier, interrupted run)."""
    missing: int
    """Facts with no vector under either id: skipped."""


async def migrate_vector_ids(
    metadata_store: SqliteMetadataStore,
    vector_store: VectorStore,
    *,
    batch_size: int = BATCH_SIZE,
    max_batches: int | None = None,
) -> VectorIdMigration:
    """Re-key the bare-fact-id points of every project of ``metadata_store`` in ``vector_store``.

    Idempotent: running it on a migrated (or half-migrated) store moves only what is left.

    Args:
        metadata_store: The folder's metadata store, open; the source of the fact ids.
        vector_store: The folder's vector store (a project view is unwrapped to its backend).
        batch_size: Facts per batch.
        max_batches: Stop after this many batches (an interrupted run, for tests).
    """
    while isinstance(vector_store, ProjectVectorStore):
        vector_store = vector_store.store
    projects = await metadata_store.project_ids()
    totals = [0, 0, 0, 0]
    batches = 0
    for project_id in projects:
        after = None
        while max_batches is None or batches < max_batches:
            facts = await metadata_store.query(
                FactQuery(project_id=project_id, after=after, limit=batch_size)
            )
            if not facts:
                break
            counts = await _move(vector_store, project_id, facts, frozenset(projects))
            totals = [total + count for total, count in zip(totals, counts, strict=True)]
            after = (facts[-1].created_at, facts[-1].id)
            batches += 1
    facts_read, moved, already_moved, missing = totals
    report = VectorIdMigration(len(projects), facts_read, moved, already_moved, missing)
    logger.info(
        "vector ids now carry the project: %d projects, %d facts, %d points moved, "
        "%d already moved, %d facts without a vector (skipped)",
        report.projects,
        report.facts,
        report.moved,
        report.already_moved,
        report.missing,
    )
    return report


async def _move(
    store: VectorStore, project_id: str, facts: Sequence[Fact], projects: frozenset[str]
) -> tuple[int, int, int, int]:
    """Move one batch of one project's points; returns (facts, moved, already moved, missing)."""
    prefix = project_id + _SEPARATOR
    targets: dict[str, tuple[str, Fact]] = {}
    for fact in facts:
        targets[fact.id] = (prefix + fact.id, fact)
        # An old piece id "<fact>\x1f<n>" is also the new id of fact <n> of a project named
        # <fact>; such a point cannot be told apart, so it is left to that fact.
        if fact.id not in projects:
            for piece in piece_ids(fact.id, fact.content):
                targets[piece] = (prefix + piece, fact)
    found = await store.get_vectors(list(targets))
    await store.upsert(
        [
            VectorRecord(new_id, found[old_id], VectorPayload.of(fact))
            for old_id, (new_id, fact) in targets.items()
            if old_id in found
        ]
    )
    await store.delete(list(found))
    unmoved = [prefix + fact.id for fact in facts if fact.id not in found]
    present = len(await store.get_vectors(unmoved)) if unmoved else 0
    return len(facts), len(found), present, len(unmoved) - present
