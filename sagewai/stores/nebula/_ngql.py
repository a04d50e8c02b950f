"""nGQL statement building for the NebulaGraph store: pure functions, every value escaped.

No user text ever reaches a statement except through :func:`quote`, which writes a double-quoted
nGQL string literal that NebulaGraph's lexer reads back to exactly the same text (quotes,
backslashes, newlines, keywords and any unicode included). Schema names are fixed here or checked
against a strict pattern, and always written in backquotes. Vertex ids are hashes of
``(project_id, entity_id)``, so two projects never share a vertex, and reads filter on a hashed
``project_key`` that an index serves.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sagewai.errors import InvalidInputError

__all__ = [
    "EDGE_INDEX",
    "EDGE_PROPS",
    "EDGE_TYPE",
    "ENTITY_PROPS",
    "TAG",
    "TAG_INDEX",
    "VID_LENGTH",
    "check_name",
    "delete_edges",
    "delete_vertices",
    "edge_rank",
    "fetch_entities",
    "go_relations",
    "insert_edges",
    "insert_vertices",
    "lookup_entities",
    "lookup_relations",
    "project_key",
    "quote",
    "setup_statements",
    "vertex_id",
]

TAG = "sagewai_entity"
EDGE_TYPE = "sagewai_relation"
TAG_INDEX = "sagewai_entity_by_project"
EDGE_INDEX = "sagewai_relation_by_project"
VID_LENGTH = 32
"""Vertex ids are 32 hex characters (``FIXED_STRING(32)``)."""

ENTITY_PROPS: tuple[tuple[str, str], ...] = (
    ("project_key", "string"),
    ("project_id", "string"),
    ("entity_id", "string"),
    ("name", "string"),
    ("label", "string"),
    ("aliases", "string"),
    ("session_ids", "string"),
    ("created_at", "string"),
    ("metadata", "string"),
)
EDGE_PROPS: tuple[tuple[str, str], ...] = (
    ("project_key", "string"),
    ("project_id", "string"),
    ("relation_id", "string"),
    ("subject_id", "string"),
    ("predicate", "string"),
    ("object_id", "string"),
    ("valid_from", "string"),
    ("valid_to", "string"),
    ("confidence", "double"),
    ("sources", "string"),
    ("created_at", "string"),
    ("superseded_by", "string"),
)

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
# Named escapes NebulaGraph's lexer understands; every other control character is written as a
# three-digit octal escape (three digits, so a following digit is never read into it).
_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\n": "\\n",
    "\t": "\\t",
    "\r": "\\r",
    "\b": "\\b",
    "\f": "\\f",
}


def quote(value: str) -> str:
    r"""``value`` as a double-quoted nGQL string literal.

    Example:
        >>> print(quote('say "hi" \\ bye'))
        "say \"hi\" \\ bye"
    """
    out = ['"']
    for ch in value:
        escaped = _ESCAPES.get(ch)
        if escaped is not None:
            out.append(escaped)
        elif ord(ch) < 0x20 or ch == "\x7f":
            out.append(f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        raise InvalidInputError("booleans are not stored in the graph")
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, int):
        return str(value)
    return quote("" if value is None else str(value))


def _ident(name: str) -> str:
    return f"`{check_name(name)}`"


def check_name(name: str) -> str:
    """Check a schema name (space, tag, edge type): letters, digits, underscore, at most 64.

    Raises:
        InvalidInputError: when the name could not be written safely as an identifier.
    """
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise InvalidInputError(
            f"NebulaGraph names must match {_NAME.pattern} (letters, digits, underscore), "
            f"got {name!r}"
        )
    return name


def _bytes(text: str) -> bytes:
    # Identifiers are validated before they get here (no lone surrogates); hashing never
    # raises even so, and stays one-to-one.
    return text.encode("utf-8", "surrogatepass")


def project_key(project_id: str) -> str:
    """The hashed project key stored on every vertex and edge (indexed for LOOKUP)."""
    return hashlib.blake2b(_bytes(project_id), digest_size=16).hexdigest()


def vertex_id(project_id: str, entity_id: str) -> str:
    """The vertex id of an entity: unique per (project, entity), never shared across projects."""
    project = _bytes(project_id)
    data = len(project).to_bytes(4, "big") + project + _bytes(entity_id)
    return hashlib.blake2b(data, digest_size=16, person=b"sagewai-vertex").hexdigest()


def edge_rank(relation_id: str) -> int:
    """The edge rank of a relation: parallel relations between two entities stay distinct."""
    digest = hashlib.blake2b(_bytes(relation_id), digest_size=8, person=b"sagewai-rank").digest()
    return int.from_bytes(digest, "big") & 0x7FFF_FFFF_FFFF_FFFF


def setup_statements(space: str, *, partition_num: int, replica_factor: int) -> list[str]:
    """The schema statements: the space, then (inside it) the tag, edge type and their indexes."""
    if partition_num < 1 or replica_factor < 1:
        raise InvalidInputError("partition_num and replica_factor must be at least 1")
    tag_props = ", ".join(f"{_ident(n)} {t}" for n, t in ENTITY_PROPS)
    edge_props = ", ".join(f"{_ident(n)} {t}" for n, t in EDGE_PROPS)
    return [
        f"CREATE SPACE IF NOT EXISTS {_ident(space)}(partition_num = {partition_num}, "
        f"replica_factor = {replica_factor}, vid_type = FIXED_STRING({VID_LENGTH}))",
        f"CREATE TAG IF NOT EXISTS {_ident(TAG)}({tag_props})",
        f"CREATE EDGE IF NOT EXISTS {_ident(EDGE_TYPE)}({edge_props})",
        f"CREATE TAG INDEX IF NOT EXISTS {_ident(TAG_INDEX)} ON {_ident(TAG)}"
        f"({_ident('project_key')}({VID_LENGTH}))",
        f"CREATE EDGE INDEX IF NOT EXISTS {_ident(EDGE_INDEX)} ON {_ident(EDGE_TYPE)}"
        f"({_ident('project_key')}({VID_LENGTH}))",
    ]


def insert_vertices(rows: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """One ``INSERT VERTEX`` of ``(vertex id, properties)`` rows (an insert overwrites)."""
    names = [n for n, _ in ENTITY_PROPS]
    values = ", ".join(
        f"{quote(vid)}:({', '.join(_literal(props[n]) for n in names)})" for vid, props in rows
    )
    return f"INSERT VERTEX {_ident(TAG)}({', '.join(_ident(n) for n in names)}) VALUES {values}"


def insert_edges(rows: Sequence[tuple[str, str, int, Mapping[str, Any]]]) -> str:
    """One ``INSERT EDGE`` of ``(source vid, destination vid, rank, properties)`` rows."""
    names = [n for n, _ in EDGE_PROPS]
    values = ", ".join(
        f"{quote(src)}->{quote(dst)}@{int(rank)}:({', '.join(_literal(props[n]) for n in names)})"
        for src, dst, rank, props in rows
    )
    return f"INSERT EDGE {_ident(EDGE_TYPE)}({', '.join(_ident(n) for n in names)}) VALUES {values}"


def _yield(kind: str, props: Iterable[tuple[str, str]]) -> str:
    return "YIELD " + ", ".join(f"properties({kind}).{_ident(n)} AS {_ident(n)}" for n, _ in props)


def lookup_entities(project_id: str) -> str:
    """Every vertex of a project, through the project-key index."""
    return (
        f"LOOKUP ON {_ident(TAG)} WHERE {_ident(TAG)}.{_ident('project_key')} == "
        f"{quote(project_key(project_id))} {_yield('vertex', ENTITY_PROPS)}"
    )


def fetch_entities(vids: Sequence[str]) -> str:
    """The vertices with these ids."""
    return (
        f"FETCH PROP ON {_ident(TAG)} {', '.join(quote(v) for v in vids)} "
        f"{_yield('vertex', ENTITY_PROPS)}"
    )


def lookup_relations(project_id: str) -> str:
    """Every edge of a project, through the project-key index."""
    return (
        f"LOOKUP ON {_ident(EDGE_TYPE)} WHERE {_ident(EDGE_TYPE)}.{_ident('project_key')} == "
        f"{quote(project_key(project_id))} {_yield('edge', EDGE_PROPS)}"
    )


def go_relations(project_id: str, vids: Sequence[str]) -> str:
    """The edges of a project that leave or enter any of these vertices (one hop, both ways)."""
    return (
        f"GO FROM {', '.join(quote(v) for v in vids)} OVER {_ident(EDGE_TYPE)} BIDIRECT "
        f"WHERE properties(edge).{_ident('project_key')} == {quote(project_key(project_id))} "
        f"{_yield('edge', EDGE_PROPS)}"
    )


def delete_vertices(vids: Sequence[str]) -> str:
    """Delete vertices and every edge attached to them."""
    return f"DELETE VERTEX {', '.join(quote(v) for v in vids)} WITH EDGE"


def delete_edges(edges: Sequence[tuple[str, str, int]]) -> str:
    """Delete edges addressed by ``(source vid, destination vid, rank)``."""
    keys = ", ".join(f"{quote(src)}->{quote(dst)}@{int(rank)}" for src, dst, rank in edges)
    return f"DELETE EDGE {_ident(EDGE_TYPE)} {keys}"
