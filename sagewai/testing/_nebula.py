"""A recording, answering stand-in for a NebulaGraph session, so the Nebula store runs in tests.

:class:`FakeNebulaSession` records every statement it is sent (tests assert on the exact text) and
answers the statement shapes :class:`~sagewai.graph.NebulaGraphStore` uses with real
``nebula3`` ``ResultSet`` objects, from a small in-memory graph. It reads string literals the way
NebulaGraph's lexer does (a raw newline ends the statement, ``\\`` escapes, octal escapes), and it
checks inserts against the schema created by ``CREATE TAG`` / ``CREATE EDGE``, so a statement
that is wrongly escaped or does not match the schema fails here as it would on a cluster.

It needs ``nebula3-python`` (``pip install "sagewai[nebula]"``) for the result types.

Example:
    >>> import asyncio
    >>> from sagewai.stores import NebulaGraphStore
    >>> from sagewai.testing import FakeNebulaSession
    >>> session = FakeNebulaSession()
    >>> store = NebulaGraphStore(session=session)
    >>> asyncio.run(store.setup(wait_seconds=0))
    >>> session.statements[0].startswith("CREATE SPACE IF NOT EXISTS `sagewai`")
    True
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from sagewai._optional import require

__all__ = ["FakeNebulaSession", "NgqlSyntaxError"]

_SYNTAX = -1004
_SEMANTIC = -1009
_EXECUTION = -1005
_SPACE_NOT_FOUND = -5
_TAG_NOT_FOUND = -6
_EDGE_NOT_FOUND = -7


class NgqlSyntaxError(Exception):
    """A statement the stand-in cannot read (mirrors NebulaGraph's ``E_SYNTAX_ERROR``)."""

    def __init__(self, message: str, code: int = _SYNTAX) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "str", "num", "word", "ident", "op"
    value: Any


def _read_string(data: bytes, start: int) -> tuple[str, int]:
    """Read a quoted literal starting at ``data[start]`` the way NebulaGraph's scanner does."""
    quote = data[start]
    out = bytearray()
    i = start + 1
    simple = {ord("n"): b"\n", ord("t"): b"\t", ord("r"): b"\r", ord("b"): b"\b", ord("f"): b"\f"}
    while i < len(data):
        byte = data[i]
        if byte == quote:
            return out.decode("utf-8"), i + 1
        if byte == ord("\n"):
            raise NgqlSyntaxError("raw newline inside a string literal")
        if byte != ord("\\"):
            out.append(byte)
            i += 1
            continue
        if i + 1 >= len(data):
            raise NgqlSyntaxError("unterminated string")
        nxt = data[i + 1]
        if ord("0") <= nxt <= ord("7"):
            j = i + 1
            while j < len(data) and j < i + 4 and ord("0") <= data[j] <= ord("7"):
                j += 1
            value = int(data[i + 1 : j].decode(), 8)
            if value > 0xFF:
                raise NgqlSyntaxError("octal escape out of range")
            out.append(value)
            i = j
        elif nxt in (ord("8"), ord("9")):
            raise NgqlSyntaxError("bad numeric escape")
        else:
            out += simple.get(nxt, bytes([nxt]))
            i += 2
    raise NgqlSyntaxError("unterminated string")


def _tokenize(stmt: str) -> list[_Token]:
    data = stmt.encode("utf-8")
    tokens: list[_Token] = []
    i = 0
    while i < len(data):
        ch = chr(data[i])
        if ch in " \t\r\n":
            i += 1
        elif ch in "\"'":
            text, i = _read_string(data, i)
            tokens.append(_Token("str", text))
        elif ch == "`":
            end = data.find(b"`", i + 1)
            if end < 0:
                raise NgqlSyntaxError("unterminated backquote")
            tokens.append(_Token("ident", data[i + 1 : end].decode()))
            i = end + 1
        elif ch.isdigit() or (ch == "-" and i + 1 < len(data) and chr(data[i + 1]).isdigit()):
            j = i + 1
            while j < len(data) and (chr(data[j]).isdigit() or chr(data[j]) in ".eE+-"):
                if chr(data[j]) in "+-" and chr(data[j - 1]) not in "eE":
                    break
                j += 1
            text = data[i:j].decode()
            tokens.append(
                _Token("num", float(text) if any(c in text for c in ".eE") else int(text))
            )
            i = j
        elif ch.isalpha() or ch == "_":
            j = i
            while j < len(data) and (chr(data[j]).isalnum() or chr(data[j]) == "_"):
                j += 1
            tokens.append(_Token("word", data[i:j].decode()))
            i = j
        elif data[i : i + 2] in (b"->", b"=="):
            tokens.append(_Token("op", data[i : i + 2].decode()))
            i += 2
        elif ch in "(),:@.;=":
            tokens.append(_Token("op", ch))
            i += 1
        else:
            raise NgqlSyntaxError(f"unexpected character {ch!r}")
    return tokens


class _Parser:
    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self, offset: int = 0) -> _Token | None:
        index = self.pos + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def take(self) -> _Token:
        token = self.peek()
        if token is None:
            raise NgqlSyntaxError("statement ends too early")
        self.pos += 1
        return token

    def word(self, *expected: str) -> str:
        token = self.take()
        if token.kind != "word" or (expected and token.value.upper() not in expected):
            raise NgqlSyntaxError(
                f"expected {' or '.join(expected) or 'a word'}, got {token.value!r}"
            )
        return str(token.value).upper()

    def at_word(self, *expected: str) -> bool:
        token = self.peek()
        return token is not None and token.kind == "word" and token.value.upper() in expected

    def op(self, expected: str) -> None:
        token = self.take()
        if token.kind != "op" or token.value != expected:
            raise NgqlSyntaxError(f"expected {expected!r}, got {token.value!r}")

    def at_op(self, expected: str) -> bool:
        token = self.peek()
        return token is not None and token.kind == "op" and token.value == expected

    def name(self) -> str:
        token = self.take()
        if token.kind not in ("ident", "word"):
            raise NgqlSyntaxError(f"expected a name, got {token.value!r}")
        return str(token.value)

    def string(self) -> str:
        token = self.take()
        if token.kind != "str":
            raise NgqlSyntaxError(f"expected a string literal, got {token.value!r}")
        return str(token.value)

    def value(self) -> Any:
        token = self.take()
        if token.kind not in ("str", "num"):
            raise NgqlSyntaxError(f"expected a value, got {token.value!r}")
        return token.value

    def names(self) -> list[str]:
        self.op("(")
        out = [self.name()]
        while self.at_op(","):
            self.take()
            out.append(self.name())
        self.op(")")
        return out

    def values(self) -> list[Any]:
        self.op("(")
        out = [self.value()]
        while self.at_op(","):
            self.take()
            out.append(self.value())
        self.op(")")
        return out

    def strings(self) -> list[str]:
        out = [self.string()]
        while self.at_op(","):
            self.take()
            out.append(self.string())
        return out

    def end(self) -> None:
        if self.peek() is not None:
            raise NgqlSyntaxError(f"unexpected {self.peek().value!r} at the end")  # type: ignore[union-attr]


@dataclass
class _State:
    spaces: set[str] = field(default_factory=set)
    tags: dict[str, dict[str, str]] = field(default_factory=dict)
    edge_types: dict[str, dict[str, str]] = field(default_factory=dict)
    indexes: set[str] = field(default_factory=set)
    vertices: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    """vid -> tag -> properties."""
    edges: dict[tuple[str, str, str, int], dict[str, Any]] = field(default_factory=dict)
    """(edge type, source vid, destination vid, rank) -> properties."""


class FakeNebulaSession:
    """A stand-in for ``nebula3``'s ``SessionPool``: records statements and answers them.

    Args:
        space: The space the session is bound to (like a ``SessionPool``); the space must be
            created (``CREATE SPACE``) before data statements succeed.

    Attributes:
        statements: Every statement received, in order (failed ones included).
    """

    def __init__(self, space: str = "sagewai") -> None:
        self._nebula = require(
            "nebula3.common.ttypes",
            extra="nebula",
            feature="FakeNebulaSession",
            package="nebula3-python",
        )
        self._graph_types = require(
            "nebula3.graph.ttypes",
            extra="nebula",
            feature="FakeNebulaSession",
            package="nebula3-python",
        )
        self._result_type = require(
            "nebula3.data.ResultSet",
            extra="nebula",
            feature="FakeNebulaSession",
            package="nebula3-python",
        ).ResultSet
        self.space = space
        self.statements: list[str] = []
        self._state = _State()
        self._failures: list[int] = []
        self._mutex = threading.Lock()
        self.closed = False

    # ----------------------------------------------------------------- test controls

    def fail_next(self, *codes: int) -> None:
        """Answer the next statements with these error codes (e.g. ``-3`` for an RPC failure)."""
        with self._mutex:
            self._failures.extend(codes)

    @property
    def vertex_count(self) -> int:
        """Vertices stored, across every project."""
        return len(self._state.vertices)

    @property
    def edge_count(self) -> int:
        """Edges stored, across every project."""
        return len(self._state.edges)

    def close(self) -> None:
        """Mark the stand-in closed (like ``SessionPool.close``)."""
        self.closed = True

    # ----------------------------------------------------------------- the session API

    def execute(self, stmt: str) -> Any:
        """Record and answer one statement; returns a ``nebula3`` ``ResultSet``."""
        with self._mutex:
            self.statements.append(stmt)
            if self._failures:
                return self._result(code=self._failures.pop(0), message="injected failure")
            try:
                columns, rows = self._dispatch(stmt)
            except NgqlSyntaxError as exc:
                return self._result(code=exc.code, message=str(exc))
            return self._result(columns=columns, rows=rows)

    def execute_py(self, stmt: str, params: dict[str, Any] | None = None) -> Any:
        """Like ``execute``; parameters are refused because the store never sends any."""
        if params:
            raise NgqlSyntaxError("FakeNebulaSession does not take parameters")
        return self.execute(stmt)

    # ----------------------------------------------------------------- results

    def _value(self, python: Any) -> Any:
        types = self._nebula
        if python is None:
            return types.Value(nVal=types.NullType.__NULL__)
        if isinstance(python, float):
            return types.Value(fVal=python)
        if isinstance(python, int):
            return types.Value(iVal=python)
        return types.Value(sVal=str(python).encode("utf-8"))

    def _result(
        self,
        *,
        code: int = 0,
        message: str = "",
        columns: list[str] | None = None,
        rows: list[list[Any]] | None = None,
    ) -> Any:
        types = self._nebula
        data = None
        if columns is not None:
            data = types.DataSet(
                column_names=[c.encode() for c in columns],
                rows=[types.Row(values=[self._value(v) for v in row]) for row in rows or []],
            )
        response = self._graph_types.ExecutionResponse(
            error_code=code,
            latency_in_us=1,
            data=data,
            space_name=self.space.encode(),
            error_msg=message.encode() if message else None,
        )
        return self._result_type(response, 0)

    # ----------------------------------------------------------------- statements

    def _dispatch(self, stmt: str) -> tuple[list[str] | None, list[list[Any]]]:
        tokens = _tokenize(stmt)
        if not tokens:
            raise NgqlSyntaxError("empty statement", code=-1006)
        parser = _Parser(tokens)
        head = parser.word()
        if head == "CREATE":
            return self._create(parser)
        if head == "DROP":
            parser.word("SPACE")
            if parser.at_word("IF"):
                parser.word("IF")
                parser.word("EXISTS")
            name = parser.name()
            parser.end()
            if name == self.space:
                self._state = _State()
            return None, []
        if self.space not in self._state.spaces:
            raise NgqlSyntaxError(f"space {self.space!r} not found", code=_SPACE_NOT_FOUND)
        if head == "INSERT":
            return self._insert(parser)
        if head == "LOOKUP":
            return self._lookup(parser)
        if head == "FETCH":
            return self._fetch(parser)
        if head == "GO":
            return self._go(parser)
        if head == "DELETE":
            return self._delete(parser)
        raise NgqlSyntaxError(f"the stand-in does not know {head!r} statements")

    def _create(self, parser: _Parser) -> tuple[None, list[list[Any]]]:
        kind = parser.word("SPACE", "TAG", "EDGE")
        if kind in ("TAG", "EDGE") and parser.at_word("INDEX"):
            parser.word("INDEX")
            kind += " INDEX"
        if parser.at_word("IF"):
            parser.word("IF")
            parser.word("NOT")
            parser.word("EXISTS")
        name = parser.name()
        if kind == "SPACE":
            parser.take()  # the option list is not interpreted
            while parser.peek() is not None:
                parser.take()
            self._state.spaces.add(name)
            return None, []
        if self.space not in self._state.spaces:
            raise NgqlSyntaxError(f"space {self.space!r} not found", code=_SPACE_NOT_FOUND)
        if kind.endswith("INDEX"):
            parser.word("ON")
            target = parser.name()
            known = self._state.tags if kind == "TAG INDEX" else self._state.edge_types
            if target not in known:
                raise NgqlSyntaxError(f"{target!r} not found", code=_TAG_NOT_FOUND)
            while parser.peek() is not None:
                parser.take()
            self._state.indexes.add(name)
            return None, []
        parser.op("(")
        schema: dict[str, str] = {}
        while True:
            prop = parser.name()
            schema[prop] = parser.word("STRING", "DOUBLE", "INT", "INT64").lower()
            if parser.at_op(")"):
                parser.take()
                break
            parser.op(",")
        parser.end()
        target_map = self._state.tags if kind == "TAG" else self._state.edge_types
        target_map.setdefault(name, schema)
        return None, []

    def _checked(
        self, schema: dict[str, str], names: list[str], values: list[Any]
    ) -> dict[str, Any]:
        if len(names) != len(values):
            raise NgqlSyntaxError("column count does not match value count", code=_SEMANTIC)
        props: dict[str, Any] = {}
        for name, value in zip(names, values, strict=True):
            kind = schema.get(name)
            if kind is None:
                raise NgqlSyntaxError(f"unknown property {name!r}", code=_SEMANTIC)
            if kind == "string" and not isinstance(value, str):
                raise NgqlSyntaxError(f"{name!r} needs a string", code=_EXECUTION)
            if kind == "double" and not isinstance(value, (int, float)):
                raise NgqlSyntaxError(f"{name!r} needs a number", code=_EXECUTION)
            props[name] = float(value) if kind == "double" else value
        return props

    def _insert(self, parser: _Parser) -> tuple[None, list[list[Any]]]:
        kind = parser.word("VERTEX", "EDGE")
        target = parser.name()
        names = parser.names()
        parser.word("VALUES")
        if kind == "VERTEX":
            schema = self._state.tags.get(target)
            if schema is None:
                raise NgqlSyntaxError(f"tag {target!r} not found", code=_TAG_NOT_FOUND)
            pending: list[tuple[Any, dict[str, Any]]] = []
            while True:
                vid = parser.string()
                parser.op(":")
                pending.append((vid, self._checked(schema, names, parser.values())))
                if not parser.at_op(","):
                    break
                parser.take()
            parser.end()
            for vid, props in pending:
                self._state.vertices.setdefault(vid, {})[target] = props
            return None, []
        schema = self._state.edge_types.get(target)
        if schema is None:
            raise NgqlSyntaxError(f"edge {target!r} not found", code=_EDGE_NOT_FOUND)
        edges: list[tuple[tuple[str, str, str, int], dict[str, Any]]] = []
        while True:
            src, dst, rank = self._edge_key(parser)
            parser.op(":")
            edges.append(((target, src, dst, rank), self._checked(schema, names, parser.values())))
            if not parser.at_op(","):
                break
            parser.take()
        parser.end()
        for key, props in edges:
            self._state.edges[key] = props
        return None, []

    def _edge_key(self, parser: _Parser) -> tuple[str, str, int]:
        src = parser.string()
        parser.op("->")
        dst = parser.string()
        rank = 0
        if parser.at_op("@"):
            parser.take()
            token = parser.take()
            if token.kind != "num" or not isinstance(token.value, int):
                raise NgqlSyntaxError("edge rank must be an integer")
            rank = token.value
        return src, dst, rank

    def _yield(self, parser: _Parser, kind: str) -> list[tuple[str, str]]:
        parser.word("YIELD")
        items: list[tuple[str, str]] = []
        while True:
            parser.word("PROPERTIES")
            parser.op("(")
            parser.word(kind.upper())
            parser.op(")")
            parser.op(".")
            prop = parser.name()
            parser.word("AS")
            items.append((prop, parser.name()))
            if not parser.at_op(","):
                break
            parser.take()
        parser.end()
        return items

    def _where_equals(self, parser: _Parser, owner: str) -> tuple[str, Any]:
        parser.word("WHERE")
        if owner in ("vertex", "edge"):
            parser.word("PROPERTIES")
            parser.op("(")
            parser.word(owner.upper())
            parser.op(")")
        elif parser.name() != owner:
            raise NgqlSyntaxError(
                "LOOKUP filters must name the schema they look up", code=_SEMANTIC
            )
        parser.op(".")
        prop = parser.name()
        parser.op("==")
        return prop, parser.value()

    def _project(
        self, rows: list[dict[str, Any]], items: list[tuple[str, str]]
    ) -> tuple[list[str], list[list[Any]]]:
        return [alias for _, alias in items], [[row.get(prop) for prop, _ in items] for row in rows]

    def _lookup(self, parser: _Parser) -> tuple[list[str], list[list[Any]]]:
        parser.word("ON")
        target = parser.name()
        prop, value = self._where_equals(parser, target)
        if target in self._state.tags:
            if not any(i for i in self._state.indexes):
                raise NgqlSyntaxError("there is no index to LOOKUP with", code=_SEMANTIC)
            items = self._yield(parser, "vertex")
            rows = [
                tags[target]
                for _, tags in sorted(self._state.vertices.items())
                if target in tags and tags[target].get(prop) == value
            ]
            return self._project(rows, items)
        if target in self._state.edge_types:
            items = self._yield(parser, "edge")
            rows = [
                props
                for key, props in sorted(self._state.edges.items())
                if key[0] == target and props.get(prop) == value
            ]
            return self._project(rows, items)
        raise NgqlSyntaxError(f"{target!r} not found", code=_TAG_NOT_FOUND)

    def _fetch(self, parser: _Parser) -> tuple[list[str], list[list[Any]]]:
        parser.word("PROP")
        parser.word("ON")
        target = parser.name()
        if target not in self._state.tags:
            raise NgqlSyntaxError(f"tag {target!r} not found", code=_TAG_NOT_FOUND)
        vids = parser.strings()
        items = self._yield(parser, "vertex")
        rows = [
            self._state.vertices[v][target]
            for v in dict.fromkeys(vids)
            if target in self._state.vertices.get(v, {})
        ]
        return self._project(rows, items)

    def _go(self, parser: _Parser) -> tuple[list[str], list[list[Any]]]:
        parser.word("FROM")
        vids = set(parser.strings())
        parser.word("OVER")
        target = parser.name()
        if target not in self._state.edge_types:
            raise NgqlSyntaxError(f"edge {target!r} not found", code=_EDGE_NOT_FOUND)
        direction = "OUT"
        if parser.at_word("BIDIRECT", "REVERSELY"):
            direction = parser.word()
        prop, value = self._where_equals(parser, "edge")
        items = self._yield(parser, "edge")
        rows = []
        for (etype, src, dst, _), props in sorted(self._state.edges.items()):
            if etype != target or props.get(prop) != value:
                continue
            # One row per traversal step, as NebulaGraph returns it (an edge between two start
            # vertices of a BIDIRECT walk comes back twice).
            if direction in ("OUT", "BIDIRECT") and src in vids:
                rows.append(props)
            if direction in ("REVERSELY", "BIDIRECT") and dst in vids:
                rows.append(props)
        return self._project(rows, items)

    def _delete(self, parser: _Parser) -> tuple[None, list[list[Any]]]:
        kind = parser.word("VERTEX", "EDGE")
        if kind == "VERTEX":
            vids = parser.strings()
            with_edge = False
            if parser.at_word("WITH"):
                parser.word("WITH")
                parser.word("EDGE")
                with_edge = True
            parser.end()
            for vid in vids:
                self._state.vertices.pop(vid, None)
                if with_edge:
                    for key in [k for k in self._state.edges if vid in (k[1], k[2])]:
                        del self._state.edges[key]
            return None, []
        target = parser.name()
        keys = [self._edge_key(parser)]
        while parser.at_op(","):
            parser.take()
            keys.append(self._edge_key(parser))
        parser.end()
        for src, dst, rank in keys:
            self._state.edges.pop((target, src, dst, rank), None)
        return None, []
