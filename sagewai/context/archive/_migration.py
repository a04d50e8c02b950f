"""Migrating: an export of the source followed by an import into the target."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from sagewai.context.archive._export import export_archive
from sagewai.context.archive._format import (
    MigrationReport,
    OnConflict,
    Progress,
)
from sagewai.context.archive._importing import import_archive

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine

__all__ = ["migrate"]


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
