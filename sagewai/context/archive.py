"""Export a project to a versioned JSONL archive, import it into any backend, migrate between two.

Why an archive: memory outlives the backend it started on. A project written in the embedded
folder moves to PostgreSQL + Qdrant, is backed up, or is copied into another project, and what
arrives must be the same memory: every fact with every field, its audit history, the vectors
(with the name of the embedder that made them), the knowledge graph and the episodes.

The format (version 1) is one JSON object per line; ``.gz`` paths are gzip-compressed::

    {"type": "header", "format": "sagewai-archive", "version": 1, "project_id": ...,
     "embedder": ..., "dimension": ..., "vector_encoding": "float32-le-base64", "counts": {...}}
    {"type": "fact", "data": {...every field of the Fact...}, "vector": "<base64>" | null}
    {"type": "change", "data": {...FactChange...}}
    {"type": "entity", "data": {...Entity...}}
    {"type": "relation", "data": {...Relation...}}
    {"type": "episode", "data": {...Episode...}}

Everything is read and written through :class:`~sagewai.context.engine.ContextEngine` (facts go in
with :meth:`ContextEngine.commit`, which keeps the vector index in step with the metadata store);
the only store-level calls, the paged read of every fact of a project and the existence checks,
live here in one place.

Example:
    >>> import asyncio, tempfile, pathlib
    >>> from sagewai import ContextEngine
    >>> from sagewai.testing import FakeEmbedder
    >>> async def demo() -> int:
    ...     path = pathlib.Path(tempfile.mkdtemp()) / "demo.jsonl"
    ...     async with ContextEngine.in_memory(project_id="a", embedder=FakeEmbedder()) as a:
    ...         await a.add("Alice prefers green tea", subject="Alice")
    ...         await export_archive(a, path)
    ...     async with ContextEngine.in_memory(project_id="b", embedder=FakeEmbedder()) as b:
    ...         report = await import_archive(b, path)
    ...         return report.imported["facts"]
    >>> asyncio.run(demo())
    1
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from sagewai.errors import ConfigurationError, InvalidInputError
from sagewai.records import Fact, FactChange, utcnow
from sagewai.stores.metadata import ChangeQuery, FactQuery, WriteBatch

if TYPE_CHECKING:
    from sagewai.context.engine import ContextEngine
    from sagewai.context.episodes.records import Episode
    from sagewai.graph.records import Entity, Relation

__all__ = [
    "ARCHIVE_FORMAT",
    "ARCHIVE_VERSION",
    "ArchiveCounts",
    "ArchiveHeader",
    "ImportReport",
    "MigrationReport",
    "OnConflict",
    "TransferProgress",
    "export_archive",
    "import_archive",
    "migrate",
    "read_header",
]

ARCHIVE_FORMAT = "sagewai-archive"
ARCHIVE_VERSION = 1
"""The format version this module writes and the newest it reads."""
VECTOR_ENCODING = "float32-le-base64"
OnConflict = Literal["skip", "replace", "new-ids"]
"""What an import does with a record whose id the target already holds: keep the target's
(``skip``, the default, which makes a re-run a no-op), overwrite it (``replace``), or give every
imported record a new id derived from its old one (``new-ids``: a copy beside the original; the
derived ids are stable, so re-running it is a no-op too)."""
_CONFLICTS: tuple[str, ...] = ("skip", "replace", "new-ids")
_PAGE = 1_000
_GRAPH_BATCH = 5_000
_MAX_EPISODES = 1_000_000
_KINDS = ("facts", "changes", "entities", "relations", "episodes")
_NEW_IDS = uuid.UUID("6f1d3c1e-8a0f-4c57-9a57-5a6e9e0d7a11")
_ID_FIELDS = ("superseded_by", "merged_into")


class ArchiveCounts(BaseModel):
    """How many records of each kind an archive holds."""

    facts: int = 0
    vectors: int = 0
    changes: int = 0
    entities: int = 0
    relations: int = 0
    episodes: int = 0


class ArchiveHeader(BaseModel):
    """The first line of an archive: what it holds and how its vectors were made."""

    type: Literal["header"] = "header"
    format: str = ARCHIVE_FORMAT
    version: int = ARCHIVE_VERSION
    project_id: str
    org_id: str | None = None
    embedder: str
    """The name of the embedder that made the vectors (``Embedder.name``)."""
    dimension: int
    vector_encoding: str = VECTOR_ENCODING
    created_at: datetime = Field(default_factory=utcnow)
    counts: ArchiveCounts = Field(default_factory=ArchiveCounts)


class ImportReport(BaseModel):
    """What an import did, per kind of record (``facts``, ``changes``, ``entities``, ...)."""

    project_id: str
    on_conflict: str
    imported: dict[str, int] = Field(default_factory=lambda: dict.fromkeys(_KINDS, 0))
    skipped: dict[str, int] = Field(default_factory=lambda: dict.fromkeys(_KINDS, 0))
    """Records left as they were: the target already held them (``skip``), or it has no store
    for their kind (see ``unsupported``)."""
    unsupported: list[str] = Field(default_factory=list)
    """Kinds the target cannot hold (an engine without a graph or episode store)."""
    re_embedded: int = 0
    """Facts embedded again: the target's embedder differs from the archive's, or a vector was
    missing."""
    duration_s: float = 0.0


class MigrationReport(BaseModel):
    """An export of the source followed by an import into the target."""

    header: ArchiveHeader
    imported: ImportReport
    export_s: float
    import_s: float

    @property
    def facts_per_second(self) -> float:
        """End-to-end rate over the facts moved (export plus import)."""
        total = self.export_s + self.import_s
        return self.header.counts.facts / total if total > 0 else 0.0


@dataclass(frozen=True, slots=True)
class TransferProgress:
    """Progress of an export or import: ``done`` of ``total`` records of ``stage``."""

    stage: str
    done: int
    total: int


Progress = Callable[[TransferProgress], None]


# ---------------------------------------------------------------------------------- encoding


def _encode_vector(vector: Any) -> str:
    array = np.ascontiguousarray(vector, dtype="<f4")
    return base64.b64encode(array.tobytes()).decode("ascii")


def _decode_vector(text: str, dimension: int, line: int) -> Any:
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError) as exc:
        raise InvalidInputError(f"archive line {line}: the vector is not base64") from exc
    if len(raw) != 4 * dimension:
        raise InvalidInputError(
            f"archive line {line}: the vector has {len(raw) // 4} values, the header says "
            f"{dimension}"
        )
    return np.frombuffer(raw, dtype="<f4").astype(np.float32)


def _dumps(record: Mapping[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


@contextmanager
def _open_text(
    path: Path, mode: Literal["r", "w"], *, gzipped: bool | None = None
) -> Iterator[IO[str]]:
    if path.suffix == ".gz" if gzipped is None else gzipped:
        with gzip.open(path, mode + "t", encoding="utf-8") as handle:
            yield handle  # type: ignore[misc]  # text mode: typeshed cannot tell
    else:
        with path.open(mode, encoding="utf-8", newline="\n") as handle:
            yield handle


def read_header(path: str | Path) -> ArchiveHeader:
    """The header of the archive at ``path``.

    Raises:
        InvalidInputError: not a sagewai archive, or written by a newer format version.
    """
    path = Path(path)
    try:
        with _open_text(path, "r") as handle:
            first = handle.readline()
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise InvalidInputError(f"cannot read the archive {path}: {exc}") from exc
    return _parse_header(first, path)


def _parse_header(line: str, path: Path) -> ArchiveHeader:
    try:
        data = json.loads(line)
    except ValueError as exc:
        raise InvalidInputError(f"{path} is not a sagewai archive (no JSON header)") from exc
    if not isinstance(data, dict) or data.get("format") != ARCHIVE_FORMAT:
        raise InvalidInputError(f"{path} is not a sagewai archive (format {ARCHIVE_FORMAT!r})")
    version = data.get("version")
    if not isinstance(version, int) or not 1 <= version <= ARCHIVE_VERSION:
        raise InvalidInputError(
            f"{path} has archive format version {version!r}; this sagewai reads up to "
            f"{ARCHIVE_VERSION}: upgrade sagewai"
        )
    try:
        header = ArchiveHeader.model_validate(data)
    except ValidationError as exc:
        raise InvalidInputError(f"{path}: malformed archive header: {exc}") from exc
    if header.vector_encoding != VECTOR_ENCODING:
        raise InvalidInputError(f"{path}: unknown vector encoding {header.vector_encoding!r}")
    return header


# ---------------------------------------------------------------------------------- export


async def _all_facts(engine: ContextEngine) -> AsyncIterator[list[Fact]]:
    """Every fact the project wrote (all scopes, all statuses), ``_PAGE`` at a time."""
    after: tuple[datetime, str] | None = None
    while True:
        page = await engine.metadata_store.query(
            FactQuery(project_id=engine.project_id, after=after, limit=_PAGE)
        )
        page = [fact for fact in page if fact.project_id == engine.project_id]
        if not page:
            return
        yield page
        last = page[-1]
        after = (last.created_at, last.id)


async def export_archive(
    engine: ContextEngine, path: str | Path, *, progress: Progress | None = None
) -> ArchiveHeader:
    """Write every record of ``engine``'s project to a JSONL archive at ``path``.

    The facts of every scope and status, the project's whole audit log (tombstones of deleted
    facts included), each fact's vector as the index holds it, the graph (when the engine has
    a graph store) and the episodes (when it has an episode store). The file appears complete
    or not at all: it is written beside ``path`` and renamed into place.

    Returns:
        The header written, with the counts.

    Raises:
        ConfigurationError: the archive cannot be written there (no such folder, no permission).
    """
    path = Path(path)
    await engine.open()
    counts = ArchiveCounts()
    total = await engine.count()
    body = path.with_name(f".{path.name}.{os.getpid()}.body")
    try:
        with body.open("w", encoding="utf-8", newline="\n") as out:
            async for page in _all_facts(engine):
                vectors = await engine.vector_store.get_vectors([fact.id for fact in page])
                for fact in page:
                    vector = vectors.get(fact.id)
                    record = {
                        "type": "fact",
                        "data": fact.model_dump(mode="json"),
                        "vector": None if vector is None else _encode_vector(vector),
                    }
                    out.write(_dumps(record) + "\n")
                counts.facts += len(page)
                counts.vectors += sum(1 for fact in page if fact.id in vectors)
                if progress is not None:
                    progress(TransferProgress("export facts", counts.facts, total))
            changes = await engine.metadata_store.changes(ChangeQuery(project_id=engine.project_id))
            for change in changes:
                out.write(_dumps({"type": "change", "data": change.model_dump(mode="json")}) + "\n")
            counts.changes = len(changes)
            if engine.graph_store is not None:
                entities = await engine.graph_store.entities()
                relations = await engine.graph_store.relations()
                for kind, records in (("entity", entities), ("relation", relations)):
                    for item in records:
                        out.write(_dumps({"type": kind, "data": item.model_dump(mode="json")}))
                        out.write("\n")
                counts.entities, counts.relations = len(entities), len(relations)
            if engine.episode_store is not None:
                episodes = await engine.episode_store.list_episodes(
                    project_id=engine.project_id, limit=_MAX_EPISODES
                )
                for episode in reversed(episodes):  # oldest first
                    data = episode.model_dump(mode="json", exclude={"score"})
                    out.write(_dumps({"type": "episode", "data": data}) + "\n")
                counts.episodes = len(episodes)
        header = ArchiveHeader(
            project_id=engine.project_id,
            org_id=engine.org_id,
            embedder=engine.embedder.name,
            dimension=engine.embedder.dimension,
            counts=counts,
        )
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        with (
            _open_text(partial, "w", gzipped=path.suffix == ".gz") as final,
            body.open("r", encoding="utf-8") as source,
        ):
            final.write(_dumps(header.model_dump(mode="json")) + "\n")
            while chunk := source.read(1 << 20):
                final.write(chunk)
        partial.replace(path)
    except OSError as exc:
        raise ConfigurationError(f"cannot write the archive {path}: {exc}") from exc
    finally:
        body.unlink(missing_ok=True)
    return header


# ---------------------------------------------------------------------------------- import


@dataclass(slots=True)
class _Parsed:
    """The records of an archive other than facts (facts stream, they hold the vectors)."""

    changes: list[FactChange]
    entities: list[Entity]
    relations: list[Relation]
    episodes: list[Episode]


_Record = tuple[str, Any, Any]
"""``(kind, validated record, decoded vector or None)``."""


def _records(path: Path) -> Iterator[ArchiveHeader | _Record]:
    """The header, then every record of the archive, validated, one line at a time.

    Raises:
        InvalidInputError: unreadable file, bad header, or a malformed line (with its number).
    """
    from sagewai.context.episodes.records import Episode
    from sagewai.graph.records import Entity, Relation

    models: dict[str, type[BaseModel]] = {
        "fact": Fact,
        "change": FactChange,
        "entity": Entity,
        "relation": Relation,
        "episode": Episode,
    }
    try:
        with _open_text(path, "r") as handle:
            header = _parse_header(handle.readline(), path)
            yield header
            for number, line in enumerate(handle, start=2):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    kind = record["type"]
                    item = models[kind].model_validate(record["data"])
                except (ValueError, KeyError, TypeError) as exc:
                    # ValidationError is a ValueError: a malformed record of a known kind.
                    raise InvalidInputError(f"{path} line {number}: bad record: {exc}") from exc
                vector = record.get("vector") if kind == "fact" else None
                decoded = (
                    None
                    if vector is None
                    else _decode_vector(str(vector), header.dimension, number)
                )
                yield (kind, item, decoded)
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise InvalidInputError(f"cannot read the archive {path}: {exc}") from exc


def _validate_archive(path: Path) -> tuple[ArchiveHeader, dict[str, int]]:
    """Read the whole archive once, keeping nothing but counts: no partial import of bad input."""
    counts = dict.fromkeys(("fact", "change", "entity", "relation", "episode"), 0)
    header: ArchiveHeader | None = None
    for entry in _records(path):
        if isinstance(entry, ArchiveHeader):
            header = entry
        else:
            counts[entry[0]] += 1
    assert header is not None  # _records yields the header first or raises
    return header, counts


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
                "before": self._snapshot(change.before),
                "after": self._snapshot(change.after),
            }
        return change.model_copy(update=update)

    def _snapshot(self, values: dict[str, Any] | None) -> dict[str, Any] | None:
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
        header.embedder == engine.embedder.name and header.dimension == engine.embedder.dimension
    )
    total = counts["fact"]
    parsed = _Parsed([], [], [], [])
    pending: list[tuple[Fact, Any]] = []
    read = 0

    async def flush() -> None:
        chunk = [(rewrite.fact(fact), vector) for fact, vector in pending]
        pending.clear()
        held = {
            fact.id
            for fact in await engine.metadata_store.get(engine.project_id, [f.id for f, _ in chunk])
            if fact.project_id == engine.project_id
        }
        if not replace:
            report.skipped["facts"] += sum(1 for fact, _ in chunk if fact.id in held)
            chunk = [(fact, vector) for fact, vector in chunk if fact.id not in held]
        with_vectors = [(f, v) for f, v in chunk if v is not None and same_embedder]
        to_embed = [f for f, v in chunk if v is None or not same_embedder]
        if with_vectors:
            facts = [fact for fact, _ in with_vectors]
            matrix = np.stack([vector for _, vector in with_vectors]).astype(np.float32)
            await engine.commit(
                WriteBatch(engine.project_id, upserts=facts), new=facts, vectors=matrix
            )
        if to_embed:
            await engine.commit(WriteBatch(engine.project_id, upserts=to_embed), new=to_embed)
            report.re_embedded += len(to_embed)
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


async def _import_changes(
    engine: ContextEngine,
    changes: Sequence[FactChange],
    rewrite: _Rewriter,
    report: ImportReport,
    batch_size: int,
) -> None:
    held = {
        change.id
        for change in await engine.metadata_store.changes(ChangeQuery(project_id=engine.project_id))
    }
    fresh = [c for c in (rewrite.change(change) for change in changes) if c.id not in held]
    report.skipped["changes"] += len(changes) - len(fresh)
    for start in range(0, len(fresh), batch_size):
        chunk = fresh[start : start + batch_size]
        await engine.commit(WriteBatch(engine.project_id, changes=chunk))
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
    graph = engine.graph_store
    if graph is None:
        report.unsupported.append("graph")
        report.skipped["entities"] += len(parsed.entities)
        report.skipped["relations"] += len(parsed.relations)
        return
    entities = [rewrite.entity(entity) for entity in parsed.entities]
    relations = [rewrite.relation(relation) for relation in parsed.relations]
    if not replace:
        held_entities = {e.id for e in await graph.get_entities([e.id for e in entities])}
        held_relations = {r.id for r in await graph.relations()}
        report.skipped["entities"] += len(held_entities)
        report.skipped["relations"] += sum(1 for r in relations if r.id in held_relations)
        entities = [e for e in entities if e.id not in held_entities]
        relations = [r for r in relations if r.id not in held_relations]
    for kind, records in (("entities", entities), ("relations", relations)):
        for start in range(0, len(records), _GRAPH_BATCH):
            write = graph.write()
            chunk = records[start : start + _GRAPH_BATCH]
            if kind == "entities":
                write.put_entities.extend(chunk)
            else:
                write.put_relations.extend(chunk)
            await graph.apply(write)
            report.imported[kind] += len(chunk)


async def _import_episodes(
    engine: ContextEngine,
    episodes: Sequence[Episode],
    rewrite: _Rewriter,
    report: ImportReport,
    replace: bool,
) -> None:
    if not episodes:
        return
    store = engine.episode_store
    if store is None:
        report.unsupported.append("episodes")
        report.skipped["episodes"] += len(episodes)
        return
    for episode in episodes:
        moved = rewrite.episode(episode)
        if not replace and await store.get_episode(moved.id, project_id=engine.project_id):
            report.skipped["episodes"] += 1
            continue
        await store.put_episode(moved)
        report.imported["episodes"] += 1


# ---------------------------------------------------------------------------------- migrate


async def migrate(
    source: ContextEngine,
    target: ContextEngine,
    *,
    on_conflict: OnConflict | str = "skip",
    archive: str | Path | None = None,
    progress: Progress | None = None,
    batch_size: int = 500,
) -> MigrationReport:
    """Move ``source``'s project into ``target``: an export, then an import.

    The archive goes to ``archive`` when given (kept, a backup of what was moved), else to a
    temporary file deleted afterwards.
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="sagewai-migrate-") as folder:
        path = Path(archive) if archive is not None else Path(folder) / "migrate.jsonl"
        started = time.perf_counter()
        header = await export_archive(source, path, progress=progress)
        exported = time.perf_counter()
        report = await import_archive(
            target, path, on_conflict=on_conflict, progress=progress, batch_size=batch_size
        )
        done = time.perf_counter()
    return MigrationReport(
        header=header, imported=report, export_s=exported - started, import_s=done - exported
    )
