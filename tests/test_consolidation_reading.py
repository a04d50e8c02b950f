"""A full run reads each fact's words once, for its candidate table, in a child process when large.

The table keeps each compared fact's reading encoded (:func:`encode_reading`) and the decisions
decode it instead of reading the words again; a large run reads them in a child Python on the
other core (:class:`Reader`). Both must give exactly the structure and exact values the
in-process reading gives, for any text, or a run would decide otherwise with the child than
without it. A child that cannot start, or stops, leaves the rest to this process.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.consolidation_realistic import RealisticWorld
from sagewai.intelligence import MemoryConsolidator
from sagewai.intelligence.consolidation import _candidates as candidates
from sagewai.intelligence.consolidation import _reading as reading
from sagewai.intelligence.consolidation import _structure as structure
from sagewai.intelligence.consolidation._structure import (
    STRUCTURE_KEY,
    decode_reading,
    encode_reading,
    exact_values_of,
    read_structure,
    reading_of,
    structure_json,
)
from tests.test_consolidation_candidates import (
    NOW,
    actions,
    consolidator_selection,
    counts,
    engine_with_corpus,
    table_and_facts,
)

TRICKY = [
    "Ana Silva moved to Berlin in 2021.",
    "Ben really likes ramen.",
    "Ben isn't using Rust anymore.",
    "They're moving to Lisbon next week.",
    "I love the new MacBook Pro, it's 14-inch.",
    "User uploads are stored in S3 by the Backend-Team.",
    "Ramen is liked by Ben.",
    "The team moved the API to v2.3.1 last Friday.",
    "She has a peanut allergy since she was 12.",
    "Maria Lopez keeps recommending chess to Eli.",
    "Dr. Chen no longer works at ACME Corp.",
    "We're going to spend 2,500 euros on 3 GPUs.",
    "",
    "   ",
    "über-cool Zoë visited São Paulo",
    "DB migrations run at 5 pm, every Monday.",
    "surrogate \ud800 and NUL \x00 inside",
]


def _realistic(count: int) -> list[str]:
    facts, _ = RealisticWorld(11).facts(count, "p", datetime(2026, 1, 1, tzinfo=UTC))
    return [f.content for f in facts]


def _agrees(content: str) -> None:
    expected = (read_structure(content), exact_values_of(content))
    assert reading_of(content) == expected, content
    assert decode_reading(encode_reading(expected)) == expected, content


def test_an_encoded_reading_decodes_to_the_reading() -> None:
    for content in TRICKY + _realistic(2_000):
        _agrees(content)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120))
def test_an_encoded_reading_decodes_to_the_reading_of_any_text(content: str) -> None:
    _agrees(content)


async def test_the_child_reads_exactly_what_this_process_reads() -> None:
    contents = TRICKY + _realistic(3_000)
    async with reading.Reader(use_process=True) as reader:
        assert reader.running
        parts = [contents[i : i + 700] for i in range(0, len(contents), 700)]
        found = await asyncio.gather(*(reader.read(part) for part in parts))  # in flight at once
        assert reader.running
        assert reader.read_in_child == len(contents)
        process = reader._child.process
    # Equal readings (the bytes may differ: a set's order follows the process's string hashes).
    assert [decode_reading(blob) for part in found for blob in part] == [
        decode_reading(blob) for blob in reading.read_here(contents)
    ]
    assert process is not None
    assert process.returncode is not None


async def test_a_child_that_stops_leaves_the_reading_to_this_process(
    caplog: pytest.LogCaptureFixture,
) -> None:
    contents = _realistic(300)
    async with reading.Reader(use_process=True) as reader:
        first = await reader.read(contents[:100])
        assert reader._child.process is not None
        reader._child.process.kill()
        await reader._child.process.wait()
        with caplog.at_level(logging.WARNING, logger="sagewai.consolidation"):
            rest = await reader.read(contents[100:])
        assert not reader.running
        assert await reader.read(contents[:5]) == reading.read_here(contents[:5])
    assert [decode_reading(b) for b in first + rest] == [
        decode_reading(b) for b in reading.read_here(contents)
    ]
    assert reader.read_in_child == 100
    assert "reading here instead" in caplog.text


async def test_a_child_that_hangs_is_given_up(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(reading, "_BOOT", "import time\ntime.sleep(30)\n")  # never answers
    monkeypatch.setattr(reading, "PATIENCE", 0.5)
    with caplog.at_level(logging.WARNING, logger="sagewai.consolidation"):
        async with reading.Reader(use_process=True) as reader:
            assert reader.running
            assert await reader.read(TRICKY) == reading.read_here(TRICKY)
            assert not reader.running
    assert "TimeoutError" in caplog.text


async def test_a_child_that_cannot_start_leaves_the_reading_to_this_process(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    with caplog.at_level(logging.WARNING, logger="sagewai.consolidation"):
        async with reading.Reader(use_process=True) as reader:
            assert not reader.running
            assert await reader.read(TRICKY) == reading.read_here(TRICKY)
    assert "could not start" in caplog.text


async def test_a_run_with_the_child_decides_what_a_run_without_it_decides(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reports = []
    for use_child in (False, True):
        ctx, _ = await engine_with_corpus()
        async with ctx:
            consolidator = MemoryConsolidator(
                ctx,
                batch_size=10,
                decay_halflife_days=36_500.0,
                reading_process_from=1 if use_child else None,
            )
            if use_child:
                # Nothing is read in this process: the child read the table's facts, and the
                # decisions decode what it read.
                def refuse(content: str) -> None:
                    raise AssertionError(f"read in the parent: {content!r}")

                monkeypatch.setattr(structure, "_read_structure", refuse)
            planned = await consolidator.consolidate(now=NOW, dry_run=True)
            done = await consolidator.consolidate(now=NOW)
            monkeypatch.undo()
        assert counts(planned) == counts(done)
        assert actions(planned) == actions(done)
        reports.append(done)
    without, with_child = reports
    assert with_child.duplicates_removed == without.duplicates_removed >= 10
    assert counts(with_child)[:5] == counts(without)[:5]
    assert len(with_child.actions) == len(without.actions)


async def test_the_table_keeps_readings_only_for_compared_facts_without_a_stored_structure() -> (
    None
):
    content = "Ana Silva moved to Berlin in 2021."
    stored = structure_json(read_structure(content), content)
    stored["names"] = ["stored-name"]
    ctx, _ = await engine_with_corpus()
    async with ctx:
        await ctx.add(content, metadata={"consolidation": {STRUCTURE_KEY: stored}})
        lonely = await ctx.add("Quentin collects antique barometers from Riga.")
        selection = consolidator_selection(ctx)
        async with reading.Reader(use_process=False) as reader:
            read = await candidates._read(ctx.port, selection, ctx.port.embedder, 10, reader)
        table, facts = await table_and_facts(ctx)
    row = {fact_id: i for i, fact_id in enumerate(read.ids)}
    holder = next(f for f in facts if f.content == content)
    assert read.names[row[holder.id]] == frozenset({"stored-name"})  # the stored one is used
    assert read.readings[row[holder.id]] is None
    assert table.reading(holder) is None
    assert table.hits(lonely.id) == []
    assert table.reading(lonely) is None
    compared = [f for f in facts if table.hits(f.id) and f.id != holder.id]
    assert compared
    for fact in compared:
        assert table.reading(fact) == (read_structure(fact.content), exact_values_of(fact.content))
        changed = fact.model_copy(update={"content": fact.content + " Really."})
        assert table.reading(changed) is None  # read from other words: not used
