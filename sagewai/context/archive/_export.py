"""Writing an archive: every record of one project, read through its engine."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from sagewai.context.archive._format import (
    ArchiveCounts,
    ArchiveHeader,
    Progress,
    TransferProgress,
    _dumps,
    _encode_vector,
    _open_text,
)
from sagewai.core._queries import FactQuery
from sagewai.core._records import Fact
from sagewai.errors import ConfigurationError

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine

__all__ = ["export_archive"]

_PAGE = 1_000
_MAX_EPISODES = 1_000_000


async def _all_facts(engine: ContextEngine) -> AsyncIterator[list[Fact]]:
    """Every fact the project wrote (all scopes, all statuses), ``_PAGE`` at a time."""
    after: tuple[datetime, str] | None = None
    while True:
        page = await engine.port.find(
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
                vectors = await engine.port.get_vectors([fact.id for fact in page])
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
            changes = await engine.changes()
            for change in changes:
                out.write(_dumps({"type": "change", "data": change.model_dump(mode="json")}) + "\n")
            counts.changes = len(changes)
            if engine.graph_store is not None:
                entities = await engine.port.graph_entities()
                relations = await engine.port.graph_relations()
                for kind, records in (("entity", entities), ("relation", relations)):
                    for item in records:
                        out.write(_dumps({"type": kind, "data": item.model_dump(mode="json")}))
                        out.write("\n")
                counts.entities, counts.relations = len(entities), len(relations)
            if engine.episodes.enabled:
                episodes = await engine.episodes.list(limit=_MAX_EPISODES)
                for episode in reversed(episodes):  # oldest first
                    data = episode.model_dump(mode="json", exclude={"score"})
                    out.write(_dumps({"type": "episode", "data": data}) + "\n")
                counts.episodes = len(episodes)
        header = ArchiveHeader(
            project_id=engine.project_id,
            org_id=engine.org_id,
            embedder=engine.port.embedder.name,
            dimension=engine.port.embedder.dimension,
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
