"""The embedded default layout: every store of a project family in one folder.

```
<folder>/
  sagewai.json        which embedder the vectors were made with (checked on every open), and
                      how vector points are keyed ("vector_ids": "project"; older folders are
                      upgraded on their first open, see sagewai.stores._local_migration)
  metadata.sqlite3    facts and their audit history (SQLite)
  vectors.sqlite3     the dense index (SQLite; every process on the machine shares it)
  graph.sqlite3       the knowledge graph (SQLite)
  episodes.sqlite3    whole sessions (SQLite)
```

Several projects can share one folder; every store scopes by project. Any number of processes
can open the folder at once (the agent, ``sagewai mcp`` servers, ``sagewai consolidate``, the
inspector): every file is SQLite in WAL mode.

A folder made before the vectors moved to SQLite holds them in ``vectors/`` (Qdrant's embedded
engine, which one process at a time may open); it keeps working as it is, one process at a time.
:meth:`LocalLayout.vector_backend` tells which of the two a folder uses.
:meth:`ProjectStores.local <sagewai.stores._project.ProjectStores.local>` builds the stores of a
folder; this module knows its paths, its manifest and the upgrade of an older folder.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from sagewai.errors import ConfigurationError

if TYPE_CHECKING:
    from sagewai.core._embedder import Embedder
    from sagewai.stores.base._metadata import MetadataStore
    from sagewai.stores.base._vector import VectorStore

__all__ = ["LocalLayout"]

MANIFEST = "sagewai.json"
METADATA_FILE = "metadata.sqlite3"
VECTOR_DIR = "vectors"
"""Qdrant's embedded engine: the vectors of a folder made before ``vectors.sqlite3``."""
VECTOR_FILE = "vectors.sqlite3"
EPISODES_FILE = "episodes.sqlite3"
FORMAT_VERSION = 1
VECTOR_IDS = "vector_ids"
"""Manifest key: how vector point ids are made. ``"project"``: ``project_id + "\x1f" + fact_id``;
missing in folders of the previous release, whose points are keyed by the fact id alone."""
PROJECT_VECTOR_IDS = "project"


@dataclass(frozen=True, slots=True)
class LocalLayout:
    """Paths of the embedded stores inside one folder."""

    root: Path

    @property
    def metadata_path(self) -> Path:
        return self.root / METADATA_FILE

    @property
    def vector_path(self) -> Path:
        """The Qdrant edge folder of an older folder (see :meth:`vector_backend`)."""
        return self.root / VECTOR_DIR

    @property
    def vector_file(self) -> Path:
        """The SQLite vector store, every new folder's."""
        return self.root / VECTOR_FILE

    def vector_backend(self) -> Literal["sqlite", "qdrant-edge"]:
        """Where this folder's vectors are: ``"qdrant-edge"`` for a folder made before
        ``vectors.sqlite3`` (a ``vectors/`` folder and no ``vectors.sqlite3``), else
        ``"sqlite"`` (every new folder, and an older one once migrated)."""
        if not self.vector_file.exists() and self.vector_path.is_dir():
            return "qdrant-edge"
        return "sqlite"

    @property
    def graph_path(self) -> Path:
        from sagewai.stores.sqlite._graph import GRAPH_FILENAME

        return self.root / GRAPH_FILENAME

    @property
    def episodes_path(self) -> Path:
        return self.root / EPISODES_FILE

    def check_manifest(self, embedder: Embedder) -> None:
        """Create the folder and manifest, or refuse an embedder the vectors were not made with.

        Raises:
            ConfigurationError: the folder was written with another embedder or dimension.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        manifest = self.root / MANIFEST
        expected = {
            "format": FORMAT_VERSION,
            "embedder": embedder.name,
            "dimension": embedder.dimension,
            VECTOR_IDS: PROJECT_VECTOR_IDS,
        }
        if manifest.exists():
            try:
                found = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise ConfigurationError(f"{manifest} is unreadable: {exc}") from exc
            if found.get("embedder") != embedder.name or found.get("dimension") != (
                embedder.dimension
            ):
                raise ConfigurationError(
                    f"{self.root} holds vectors made by {found.get('embedder')!r} "
                    f"({found.get('dimension')}-d); this engine embeds with {embedder.name!r} "
                    f"({embedder.dimension}-d). Use the same embedder or a new folder."
                )
            return
        self._write_manifest(expected)

    def _write_manifest(self, content: dict[str, Any]) -> None:
        manifest = self.root / MANIFEST
        # A temporary name of this process and thread: processes opening a new folder at once
        # each write a whole manifest and the last rename wins, never a half-written one.
        tmp = manifest.with_suffix(f".{os.getpid()}-{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
        tmp.replace(manifest)

    def _vector_ids_current(self) -> bool:
        found = json.loads((self.root / MANIFEST).read_text(encoding="utf-8"))
        return bool(found.get(VECTOR_IDS) == PROJECT_VECTOR_IDS)

    def _mark_vector_ids(self) -> None:
        found = json.loads((self.root / MANIFEST).read_text(encoding="utf-8"))
        self._write_manifest({**found, VECTOR_IDS: PROJECT_VECTOR_IDS})

    async def upgrade(self, metadata_store: MetadataStore, vector_store: VectorStore) -> None:
        """Bring an older folder's open stores to this release's layout, once; then mark it.

        A folder of the previous release keys vector points by fact id alone: they are re-keyed
        (:func:`~sagewai.stores._local_migration.migrate_vector_ids`) before the manifest records
        ``"vector_ids": "project"``, so an interrupted upgrade runs again on the next open.
        Only the folder's own SQLite metadata store can hold such points: a folder whose
        metadata lives elsewhere (stores swapped in by hand) has nothing to upgrade.
        """
        from sagewai.stores.sqlite._metadata import SqliteMetadataStore

        if not isinstance(metadata_store, SqliteMetadataStore):
            return
        if await asyncio.to_thread(self._vector_ids_current):
            return
        from sagewai.stores._local_migration import migrate_vector_ids

        await migrate_vector_ids(metadata_store, vector_store)
        await asyncio.to_thread(self._mark_vector_ids)
