"""Reading an archive into any engine: validated first, then streamed, idempotent."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sagewai.context.archive._format import (
    ArchiveHeader,
    ImportReport,
    OnConflict,
    Progress,
    TransferProgress,
    _records,
    _validate_archive,
)
from sagewai.core._profile import IMPORTED_KEY, PROFILE_TAG
from sagewai.core._queries import WriteBatch
from sagewai.core._records import Fact, FactChange
from sagewai.errors import InvalidInputError
from sagewai.stores.base._graph import GraphWrite

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine
    from sagewai.core._episode_records import Episode
    from sagewai.core._graph_records import Entity, Relation

__all__ = ["import_archive"]

_GRAPH_BATCH = 5_000
_NEW_IDS = uuid.UUID("6f1d3c1e-8a0f-4c57-9a57-5a6e9e0d7a11")
_ID_FIELDS = ("superseded_by", "merged_into")
_CONFLICTS: tuple[str, ...] = ("skip", "replace", "new-ids")


@dataclass(slots=True)
class _Parsed:
    """The records of an archive other than facts (facts stream, they hold the vectors)."""

    changes: list[FactChange]
    entities: list[Entity]
    relations: list[Relation]
    episodes: list[Episode]


class _Rewriter:
    """Moves records into the target project, and gives them new ids under ``new-ids``."""

    def __init__(self, engine: ContextEngine, *, new_ids: bool) -> None:
        self.project_id = engine.project_id
        self.org_id = engine.org_id
        self.new_ids = new_ids

    def id(self, old: str) -> str:
        if not self.new_ids:
            return old
        return str(uuid.uuid5(_NEW_IDS, f"{self.project_id}\x1f{old}"))

    def ids(self, old: Sequence[str]) -> tuple[str, ...]:
        return tuple(self.id(value) for value in old)

    def fact(self, fact: Fact) -> Fact:
        changes: dict[str, Any] = {"id": self.id(fact.id), "project_id": self.project_id}
        if PROFILE_TAG in fact.tags:
            # Only the user sets the rules: an archive's profile entry arrives as plain memory,
            # marked as imported (an archive can be edited by anyone who holds the file).
            changes["tags"] = tuple(tag for tag in fact.tags if tag != PROFILE_TAG)
            changes["metadata"] = {**fact.metadata, IMPORTED_KEY: True}
        if self.org_id is not None:
            changes["org_id"] = self.org_id
        for name in _ID_FIELDS:
            value = getattr(fact, name)
            if value is not None:
                changes[name] = self.id(value)
        return fact.model_copy(update=changes)

    def change(self, change: FactChange) -> FactChange:
        update: dict[str, Any] = {"project_id": self.project_id}
        if self.new_ids:
            update |= {
                "id": self.id(change.id),
                "fact_id": self.id(change.fact_id),
                "related_fact_ids": self.ids(change.related_fact_ids),
                "before": self._ids_in(change.before),
                "after": self._ids_in(change.after),
            }
        return change.model_copy(update=update)

    def _ids_in(self, values: dict[str, Any] | None) -> dict[str, Any] | None:
        """A change's before/after values with the fact ids they name moved to new ids."""
        if values is None:
            return None
        return {
            key: self.id(value) if key in _ID_FIELDS and isinstance(value, str) else value
            for key, value in values.items()
        }

    def entity(self, entity: Entity) -> Entity:
        return entity.model_copy(update={"id": self.id(entity.id), "project_id": self.project_id})

    def relation(self, relation: Relation) -> Relation:
        update: dict[str, Any] = {
            "id": self.id(relation.id),
            "project_id": self.project_id,
            "subject_id": self.id(relation.subject_id),
            "object_id": self.id(relation.object_id),
        }
        if relation.superseded_by is not None:
            update["superseded_by"] = self.id(relation.superseded_by)
        return relation.model_copy(update=update)

    def episode(self, episode: Episode) -> Episode:
        return episode.model_copy(update={"id": self.id(episode.id), "project_id": self.project_id})


async def import_archive(
    engine: ContextEngine,
    path: str | Path,
    *,
    on_conflict: OnConflict | str = "skip",
    progress: Progress | None = None,
    batch_size: int = 500,
) -> ImportReport:
    """Read the archive at ``path`` into ``engine``'s project, whatever its backends.

    Records move into the engine's project (and org). Vectors are used as they are when the
    engine's embedder has the archive's name and dimension; otherwise every fact is embedded
    again by the engine's embedder. The whole archive is validated before anything is written
    (a first pass that keeps only counts); then facts stream in batches, so memory stays bounded
    by ``batch_size`` facts whatever the archive's size.
    Re-running an import is a no-op under ``skip`` and ``new-ids`` (derived ids are stable) and
    rewrites the same values under ``replace``; audit rows are immutable and never duplicated.

    Fact ids are unique across a whole metadata store: to import a project's archive into
    another project of the *same* store, use ``on_conflict="new-ids"``.

    Args:
        engine: The target.
        path: An archive written by :func:`export_archive` (``.gz`` for gzip).
        on_conflict: See :data:`OnConflict`.
        progress: Called after each batch of facts.
        batch_size: Facts per atomic write.

    Raises:
        InvalidInputError: not an archive, a newer format, a malformed record (nothing written),
            or an unknown ``on_conflict``.
    """
    if on_conflict not in _CONFLICTS:
        raise InvalidInputError(
            f"on_conflict must be one of {', '.join(_CONFLICTS)}, got {on_conflict!r}"
        )
    if not 1 <= batch_size <= 10_000:
        raise InvalidInputError("batch_size must be between 1 and 10000")
    started = time.perf_counter()
    path = Path(path)
    header, counts = _validate_archive(path)
    await engine.open()
    rewrite = _Rewriter(engine, new_ids=on_conflict == "new-ids")
    replace = on_conflict == "replace"
    report = ImportReport(project_id=engine.project_id, on_conflict=on_conflict)
    same_embedder = (
        header.embedder == engine.port.embedder.name
        and header.dimension == engine.port.embedder.dimension
    )
    total = counts["fact"]
    parsed = _Parsed([], [], [], [])
    pending: list[tuple[Fact, Any]] = []
    read = 0

    async def flush() -> None:
        chunk = [(rewrite.fact(fact), vector) for fact, vector in pending]
        pending.clear()
        held = {
            fact.id: fact
            for fact in await engine.port.get_many([f.id for f, _ in chunk])
            if fact.project_id == engine.project_id
        }
        if not replace:
            kept = [(held[fact.id], vector) for fact, vector in chunk if fact.id in held]
            report.skipped["facts"] += len(kept)
            await _index_missing(engine, kept, same_embedder, report)
            chunk = [(fact, vector) for fact, vector in chunk if fact.id not in held]
        report.re_embedded += await _write_with_vectors(engine, chunk, same_embedder)
        report.imported["facts"] += len(chunk)
        if progress is not None:
            progress(TransferProgress("import facts", read, total))

    for entry in _records(path):
        if isinstance(entry, ArchiveHeader):
            continue
        kind, item, vector = entry
        if kind == "fact":
            pending.append((item, vector))
            read += 1
            if len(pending) >= batch_size:
                await flush()
        elif kind == "change":
            parsed.changes.append(item)
        elif kind == "entity":
            parsed.entities.append(item)
        elif kind == "relation":
            parsed.relations.append(item)
        else:
            parsed.episodes.append(item)
    if pending:
        await flush()
    await _import_changes(engine, parsed.changes, rewrite, report, batch_size)
    await _import_graph(engine, parsed, rewrite, report, replace)
    await _import_episodes(engine, parsed.episodes, rewrite, report, replace)
    report.duration_s = time.perf_counter() - started
    return report


async def _index_missing(
    engine: ContextEngine,
    held: Sequence[tuple[Fact, Any]],
    same_embedder: bool,
    report: ImportReport,
) -> None:
    """Index the held facts whose vectors the target's vector store lacks (another vector store
    than the first run's, or one lost): a skipped fact is searchable like an imported one."""
    if not held:
        return
    present = await engine.port.get_vectors([fact.id for fact, _ in held])
    missing = [(fact, vector) for fact, vector in held if fact.id not in present]
    report.re_embedded += await _write_with_vectors(engine, missing, same_embedder)
    report.indexed += len(missing)


async def _write_with_vectors(
    engine: ContextEngine, chunk: Sequence[tuple[Fact, Any]], same_embedder: bool
) -> int:
    """Write facts with the archive's vectors where the embedders match, embedding the others
    again; return how many were embedded again."""
    with_vectors = [(f, v) for f, v in chunk if v is not None and same_embedder]
    to_embed = [f for f, v in chunk if v is None or not same_embedder]
    if with_vectors:
        facts = [fact for fact, _ in with_vectors]
        matrix = np.stack([vector for _, vector in with_vectors]).astype(np.float32)
        await engine.port.commit(
            WriteBatch(engine.project_id, upserts=facts), new=facts, vectors=matrix
        )
    if to_embed:
        await engine.port.commit(WriteBatch(engine.project_id, upserts=to_embed), new=to_embed)
    return len(to_embed)


async def _import_changes(
    engine: ContextEngine,
    changes: Sequence[FactChange],
    rewrite: _Rewriter,
    report: ImportReport,
    batch_size: int,
) -> None:
    held = {change.id for change in await engine.changes()}
    fresh = [c for c in (rewrite.change(change) for change in changes) if c.id not in held]
    report.skipped["changes"] += len(changes) - len(fresh)
    for start in range(0, len(fresh), batch_size):
        chunk = fresh[start : start + batch_size]
        await engine.port.commit(WriteBatch(engine.project_id, changes=chunk))
        report.imported["changes"] += len(chunk)


async def _import_graph(
    engine: ContextEngine,
    parsed: _Parsed,
    rewrite: _Rewriter,
    report: ImportReport,
    replace: bool,
) -> None:
    if not parsed.entities and not parsed.relations:
        return
    if engine.graph_store is None:
        report.unsupported.append("graph")
        report.skipped["entities"] += len(parsed.entities)
        report.skipped["relations"] += len(parsed.relations)
        return
    entities = [rewrite.entity(entity) for entity in parsed.entities]
    relations = [rewrite.relation(relation) for relation in parsed.relations]
    if not replace:
        held_entities = {e.id for e in await engine.port.graph_entities([e.id for e in entities])}
        held_relations = {r.id for r in await engine.port.graph_relations()}
        report.skipped["entities"] += len(held_entities)
        report.skipped["relations"] += sum(1 for r in relations if r.id in held_relations)
        entities = [e for e in entities if e.id not in held_entities]
        relations = [r for r in relations if r.id not in held_relations]
    for start in range(0, len(entities), _GRAPH_BATCH):
        write = GraphWrite(engine.project_id, put_entities=entities[start : start + _GRAPH_BATCH])
        await engine.port.apply_graph(write)
        report.imported["entities"] += len(write.put_entities)
    for start in range(0, len(relations), _GRAPH_BATCH):
        write = GraphWrite(engine.project_id, put_relations=relations[start : start + _GRAPH_BATCH])
        await engine.port.apply_graph(write)
        report.imported["relations"] += len(write.put_relations)


async def _import_episodes(
    engine: ContextEngine,
    episodes: Sequence[Episode],
    rewrite: _Rewriter,
    report: ImportReport,
    replace: bool,
) -> None:
    if not episodes:
        return
    if not engine.episodes.enabled:
        report.unsupported.append("episodes")
        report.skipped["episodes"] += len(episodes)
        return
    for episode in episodes:
        moved = rewrite.episode(episode)
        if not replace and await engine.episodes.get(moved.id):
            report.skipped["episodes"] += 1
            continue
        await engine.episodes.restore(moved)
        report.imported["episodes"] += 1
