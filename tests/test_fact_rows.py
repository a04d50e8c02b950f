"""Stored rows decode to the same records full validation would give (the fast path's contract)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from sagewai.core._queries import WriteBatch
from sagewai.core._records import Fact, FactKind, FactStatus, FactType, Provenance
from sagewai.core._scope import ContextScope
from sagewai.stores import SqliteMetadataStore
from sagewai.stores.base._sql import FACT_COLUMNS, fact_from_row, validated_fact_from_row
from sagewai.stores.sqlite._database import from_micros
from sagewai.testing.conformance._metadata import P1, full_fact


def _facts() -> list[Fact]:
    return [
        full_fact(),
        Fact(project_id=P1, content="plain"),
        Fact(
            project_id=P1,
            scope=ContextScope.USER,
            user_id="bob",
            content="Bob: we land in Lisbon on 3 May, flight TP123 😀",
            kind=FactKind.MESSAGE,
            fact_type=FactType.EVENT,
            confidence=1,
            strength=2,
            tags=("travel",),
            metadata={"context_chars": 12},
            sources=(
                Provenance(
                    session_id="s1",
                    message_id="m1",
                    turn_index=0,
                    speaker="Bob",
                    timestamp=datetime(2023, 5, 8, 13, 56, tzinfo=UTC),
                ),
                Provenance(document_id="d1", chunk_index=3, extractor="rules"),
                Provenance(
                    session_id="s2",
                    timestamp=datetime(
                        2023, 5, 9, 8, 1, 2, 345678, tzinfo=timezone(timedelta(hours=2))
                    ),
                ),
            ),
            status=FactStatus.SUPERSEDED,
            superseded_by="other",
        ),
    ]


async def test_fast_decoding_equals_validation(tmp_path: Path) -> None:
    path = tmp_path / "metadata.sqlite3"
    facts = _facts()
    async with SqliteMetadataStore(path) as store:
        await store.apply(WriteBatch(P1, upserts=facts))
    connection = sqlite3.connect(path)
    rows = connection.execute(f"SELECT {', '.join(FACT_COLUMNS)} FROM facts").fetchall()
    connection.close()
    assert len(rows) == len(facts)
    by_id = {fact.id: fact for fact in facts}
    for row in rows:
        fast, checked = fact_from_row(row, from_micros), validated_fact_from_row(row, from_micros)
        assert fast == checked == by_id[fast.id]
        assert repr(fast) == repr(checked)
        assert fast.model_fields_set == checked.model_fields_set
        assert fast.model_dump_json() == checked.model_dump_json()
        assert [type(getattr(fast, name)) for name in Fact.model_fields] == [
            type(getattr(checked, name)) for name in Fact.model_fields
        ]
        for quick, slow in zip(fast.sources, checked.sources, strict=True):
            assert quick.model_fields_set == slow.model_fields_set
            assert repr(quick) == repr(slow)


def test_an_unknown_stored_value_still_fails() -> None:
    row = list(validated_fact_from_row_row())
    row[FACT_COLUMNS.index("status")] = "exploded"
    with pytest.raises(ValueError, match="exploded"):
        fact_from_row(row, from_micros)


def validated_fact_from_row_row() -> tuple[object, ...]:
    from sagewai.stores.sqlite._metadata import _fact_row

    return tuple(_fact_row(Fact(project_id=P1, content="x"), 0)[: len(FACT_COLUMNS)])


def test_assembled_records_behave_as_constructed_ones() -> None:
    from pydantic import ValidationError

    from sagewai.core._records import FactChange, assembled

    for fact in _facts():
        made = assembled(Fact, dict(fact.__dict__))
        assert made == fact == Fact.model_construct(**fact.__dict__)
        assert made.model_fields_set == set(Fact.model_fields)
        assert made.model_dump_json() == fact.model_dump_json()
        assert made.model_copy(update={"strength": 0.25}).strength == 0.25
        with pytest.raises(ValidationError):
            made.content = "changed"  # type: ignore[misc]  # still frozen
    # A dict missing fields goes through model_construct, which fills the defaults.
    partial = assembled(FactChange, {"fact_id": "f", "project_id": P1, "action": "created"})
    assert partial.model_fields_set == {"fact_id", "project_id", "action"}
    assert partial.reason == ""
    assert partial.id


def test_rows_decode_through_one_generated_function_per_dialect(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The decoder is generated once per time decoding, and refuses to be made when the
    columns stopped naming exactly the fields of a fact (the records skip that check)."""
    from sagewai.core._records import complete_fields
    from sagewai.stores.base import _sql

    assert _sql._row_decoder(from_micros) is _sql._row_decoder(from_micros)
    row = validated_fact_from_row_row()
    assert list(_sql._row_decoder(from_micros)(row)) == list(Fact.model_fields)
    names = [name for name in FACT_COLUMNS if name != "scope_key"]
    assert complete_fields(Fact, names)
    assert not complete_fields(Fact, names[:-1])
    assert not complete_fields(Fact, [*names, names[0]])
    monkeypatch.setattr(_sql, "complete_fields", lambda model, names: False)
    _sql._row_decoder.cache_clear()
    try:
        with pytest.raises(TypeError, match="no longer match"):
            fact_from_row(row, from_micros)
    finally:
        monkeypatch.undo()
        _sql._row_decoder.cache_clear()
    assert fact_from_row(row, from_micros) == validated_fact_from_row(row, from_micros)


def test_a_source_of_another_shape_is_validated() -> None:
    """Sources decode without validation only in the shape the stores write (every field, an
    aware ISO time); anything else goes through :class:`Provenance`'s validation."""
    from pydantic import ValidationError

    from sagewai.stores.base._sql import _sources

    naive = _sources('[{"session_id": "s", "timestamp": "2024-03-13T09:30:00"}]')
    assert naive[0].timestamp == datetime(2024, 3, 13, 9, 30, tzinfo=UTC)
    with pytest.raises(ValidationError):
        _sources('[{"session_id": "s", "unknown": 1}]')
