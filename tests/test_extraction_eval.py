"""The evaluation: scoring arithmetic, the labelled set's shape, and ``sagewai eval extraction``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from sagewai.cli._main import main
from sagewai.extraction import ExtractedFact
from sagewai.extraction._evaluation import (
    LabelledUtterance,
    load_labelled,
    locomo_turns,
    score,
)

LABELLED = Path(__file__).resolve().parent.parent / "evals" / "data" / "extraction_labelled.jsonl"


def utterance(uid: str, save: bool, fact_type: str | None, **extra: object) -> LabelledUtterance:
    row = {"id": uid, "text": "t", "should_save": save, "fact_type": fact_type, **extra}
    return LabelledUtterance.from_json(row)


def fact(fact_type: str, confidence: float = 0.8, **extra: object) -> ExtractedFact:
    return ExtractedFact(content="c", fact_type=fact_type, confidence=confidence, **extra)  # type: ignore[arg-type]


def test_score_arithmetic() -> None:
    items = [
        utterance("a", True, "event", predicate="lives_in", subject="Al", object="Berlin",
                  negated=True),
        utterance("b", True, "general"),
        utterance("c", False, None, category="question"),
        utterance("d", True, "action", exact_values=["v1"], event_time="2024"),
        utterance("e", False, None, category="joke"),
    ]  # fmt: skip
    predictions = [
        [fact("event", subject="Al", predicate="moved_to", object="Berlin",
              metadata={"negated": True})],
        [fact("preference")],
        [],
        [],
        [fact("general", 0.45)],
    ]  # fmt: skip
    figures = score(items, predictions)
    save = figures["save"]
    assert (save["tp"], save["fp"], save["fn"], save["tn"]) == (2, 1, 1, 1)
    assert save["precision"] == pytest.approx(2 / 3, abs=1e-4)
    assert save["recall"] == pytest.approx(2 / 3, abs=1e-4)
    assert figures["type_accuracy"] == 0.5
    assert figures["triples"] == {"labelled": 1, "matched": 1.0, "negation_correct": 1.0}
    assert figures["exact_values"] == {"labelled": 1, "recall": 0.0}
    assert figures["negatives_saved"]["joke"] == {"total": 1, "wrongly_saved": 1}
    assert figures["per_type"]["event"]["f1"] == 1.0
    bins = {row["bin"]: row for row in figures["reliability"]}
    assert bins["[0.4, 0.5)"]["precision"] == 0.0
    assert bins["[0.8, 0.9)"]["facts"] == 2


def test_labelled_set_shape() -> None:
    items = load_labelled(LABELLED)
    assert len(items) >= 250
    assert len({item.id for item in items}) == len(items)
    splits = Counter(item.split for item in items)
    assert 0.25 <= splits["heldout"] / len(items) <= 0.35
    saved = Counter(item.fact_type for item in items if item.should_save)
    assert set(saved) == {"decision", "preference", "event", "action", "general"}
    negatives = Counter(item.category for item in items if not item.should_save)
    for category in ("small_talk", "question", "hypothetical", "hedge", "joke", "echo"):
        assert negatives[category] >= 10, category
    pairs = Counter(item.pair_id for item in items if item.pair_id)
    assert len(pairs) >= 10
    assert set(pairs.values()) == {2}
    assert sum(1 for item in items if item.exact_values) >= 20
    assert all(item.timestamp is not None for item in items)


def test_rules_meet_the_acceptance_bar_on_the_labelled_set(tmp_path: Path) -> None:
    out = tmp_path / "eval.json"
    code = main(["eval", "extraction", "--data", str(LABELLED), "--out", str(out),
                 "--throughput-seconds", "0", "--json"])  # fmt: skip
    assert code == 0
    results = json.loads(out.read_text())
    for split in ("dev", "heldout"):
        figures = results["splits"][split]
        assert figures["save"]["f1"] >= 0.90, split
        assert figures["type_accuracy"] >= 0.85, split


def test_cli_locomo_coverage_on_a_tiny_conversation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = {
        "sample_id": "tiny",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I moved to Berlin last month!"},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Wow, how is it?"},
                {"speaker": "Ann", "dia_id": "D1:3", "text": "I love the parks here."},
            ],
        },
        "observation": {
            "session_1_observation": {
                "Ann": [["Ann moved to Berlin last month.", "D1:1"],
                        ["Ann loves the parks in Berlin.", "D1:3; D9:99"]],
            }
        },
    }  # fmt: skip
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([sample]))
    turns = locomo_turns(data)
    assert [t.dia_id for t in turns] == ["D1:1", "D1:2", "D1:3"]
    assert turns[2].observations == ("Ann loves the parks in Berlin.",)
    out = tmp_path / "eval.json"
    code = main(["eval", "extraction", "--data", str(LABELLED), "--locomo", str(data),
                 "--embedder", "fake", "--split", "dev", "--throughput-seconds", "0.3",
                 "--out", str(out)])  # fmt: skip
    assert code == 0
    report = capsys.readouterr().out
    assert "LoCoMo" in report
    assert "save decision" in report
    results = json.loads(out.read_text())
    assert results["locomo"]["observations"] == 2
    assert results["locomo"]["facts"] >= 2
    assert results["throughput"]["labelled"]["messages_per_cpu_second"] > 0


def test_cli_reports_a_missing_data_file(tmp_path: Path) -> None:
    assert main(["eval", "extraction", "--data", str(tmp_path / "nope.jsonl")]) == 2
