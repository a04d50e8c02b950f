"""The archive format (version 1): its header, its records, how vectors are encoded.

Reading validates every line; writing is in :mod:`sagewai.context.archive._export`.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from sagewai.core._records import Fact, FactChange, utcnow
from sagewai.errors import InvalidInputError

__all__ = [
    "ARCHIVE_FORMAT",
    "ARCHIVE_VERSION",
    "ArchiveCounts",
    "ArchiveHeader",
    "ImportReport",
    "MigrationReport",
    "OnConflict",
    "TransferProgress",
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
_KINDS = ("facts", "changes", "entities", "relations", "episodes")


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
    indexed: int = 0
    """Facts the target held already (skipped) whose vectors its vector store lacked, and which
    were indexed: the vectors land with their facts, whichever vector store the re-run names."""
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


_Record = tuple[str, Any, Any]
"""``(kind, validated record, decoded vector or None)``."""


def _records(path: Path) -> Iterator[ArchiveHeader | _Record]:
    """The header, then every record of the archive, validated, one line at a time.

    Raises:
        InvalidInputError: unreadable file, bad header, or a malformed line (with its number).
    """
    from sagewai.core._episode_records import Episode
    from sagewai.core._graph_records import Entity, Relation

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
