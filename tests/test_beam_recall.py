"""The BEAM recall benchmark's own logic, on small hand-made data (BEAM is never copied here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals import beam_recall as beam
from sagewai.testing import FakeEmbedder


def write_conversation(root: Path, name: str = "1") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    chat = [
        {
            "batch_number": 1,
            "time_anchor": None,
            "turns": [
                [
                    {
                        "role": "user",
                        "id": 0,
                        "time_anchor": "March-15-2024",
                        "content": "My first sprint ends on March 29.",
                    },
                    {"role": "assistant", "id": 1, "content": "Noted: the sprint ends March 29."},
                ],
                [
                    {"role": "user", "id": 2, "content": "I use Flask for the budget tracker."},
                    {"role": "assistant", "id": 3, "content": ""},
                ],
            ],
        }
    ]
    questions = {
        "information_extraction": [
            {"question": "When does my first sprint end?", "source_chat_ids": "[0]"},
        ],
        "knowledge_update": [
            {
                "question": "Which framework?",
                "source_chat_ids": "{'original_info': [2], 'updated_info': [2, 99]}",
            },
        ],
        "abstention": [{"question": "What is my cat called?"}],
    }
    (folder / "chat.json").write_text(json.dumps(chat), encoding="utf-8")
    (folder / "probing_questions.json").write_text(json.dumps(questions), encoding="utf-8")
    return folder


def test_evidence_ids_read_lists_dicts_and_their_text_form() -> None:
    assert beam.evidence_ids("[4, 60, 116]") == ["4", "60", "116"]
    assert beam.evidence_ids("{'first': [58], 'second': [24, 58]}") == ["58", "24"]
    assert beam.evidence_ids([3, "7"]) == ["3", "7"]
    assert beam.evidence_ids(None) == []
    assert beam.evidence_ids("not a list") == []


def test_a_conversation_loads_with_dates_and_answerable_questions(tmp_path: Path) -> None:
    conversation = beam.load_conversation(write_conversation(tmp_path))
    assert [m.id for m in conversation.messages] == ["0", "1", "2"]  # the empty one is skipped
    assert conversation.messages[2].date is not None
    assert conversation.messages[2].date.day == 15
    assert [q.evidence for q in conversation.questions] == [("0",), ("2",)]
    assert conversation.skipped_questions == 1
    assert conversation.split == "dev"


def test_recall_counts_the_sources_of_related_records() -> None:
    from sagewai.core._records import Fact, Provenance, SearchResult

    message = Fact(project_id="p", content="m", sources=(Provenance(message_id="5"),))
    fact = Fact(project_id="p", content="f", sources=(Provenance(message_id="6"),))
    result = SearchResult(fact=message, score=1.0, related=(fact,))
    assert beam.result_sources(result) == ["5", "6"]


async def test_the_benchmark_runs_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_conversation(tmp_path / "data")
    import sagewai.embeddings._minilm as minilm

    monkeypatch.setattr(minilm, "MiniLMEmbedder", lambda: FakeEmbedder())
    out = tmp_path / "out.json"
    report = await beam.main(
        ["--data", str(tmp_path / "data"), "--modes", "raw", "--top-k", "1,2", "--out", str(out)]
    )
    assert report["questions"] == 2
    raw = report["systems"]["sagewai_raw"]
    assert raw["overall"]["R@2"] is not None
    assert 0.0 <= raw["overall"]["R@1"] <= raw["overall"]["R@2"] <= 1.0
    assert json.loads(out.read_text())["benchmark"] == "beam_recall"


def test_raw_items_carry_the_reply_mark_only_in_the_ablation(tmp_path: Path) -> None:
    from sagewai.context._ranking import REPLY_MARK

    conversation = beam.load_conversation(write_conversation(tmp_path))
    plain = beam.raw_items(conversation)
    marked = beam.raw_items(conversation, reply_marks=True)
    assert all(item["metadata"] == {} for item in plain)
    roles = {item["source"].message_id: item["source"].role for item in marked}
    assert (
        {item["source"].message_id for item in marked if item["metadata"]}
        == {mid for mid, role in roles.items() if role == "assistant"}
        == {"1"}
    )
    assert all(item["metadata"] in ({}, {REPLY_MARK: True}) for item in marked)
