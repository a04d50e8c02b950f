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

Everything is read and written through :class:`~sagewai.context._engine.ContextEngine` (facts go in
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

from sagewai.context.archive._export import export_archive
from sagewai.context.archive._format import (
    ARCHIVE_FORMAT,
    ARCHIVE_VERSION,
    ArchiveCounts,
    ArchiveHeader,
    ImportReport,
    MigrationReport,
    OnConflict,
    TransferProgress,
    read_header,
)
from sagewai.context.archive._importing import import_archive
from sagewai.context.archive._migration import migrate

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
