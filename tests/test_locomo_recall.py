"""The LoCoMo recall benchmark's own logic: data parsing, evidence, scoring, the BM25 baseline.

The benchmark is only as good as its scorer; these tests pin it on small hand-made data (the
LoCoMo data itself is never copied into the repository).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals import locomo_recall as bench
from sagewai.context._ranking import SearchConfig
from sagewai.testing import FakeEmbedder

SAMPLE = [
    {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Alice",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Alice", "dia_id": "D1:1", "text": "I adopted a greyhound!"},
                {
                    "speaker": "Bob",
                    "dia_id": "D1:2",
                    "text": "Lovely, what is its name?",
                    "blip_caption": "a photo of a dog on a sofa",
                },
                {"speaker": "Alice", "dia_id": "D1:3", "text": "Biscuit, she is three."},
            ],
            "session_2_date_time": "not a date",
            "session_2": [
                {"speaker": "Bob", "dia_id": "D2:1", "text": "I started learning the violin."},
                {"speaker": "Alice", "dia_id": "D2:2", "text": "Biscuit howls when you play!"},
            ],
        },
        "qa": [
            {"question": "What is Alice's dog called?", "evidence": ["D1:3"], "category": 4},
            {"question": "What did Bob learn?", "evidence": ["D2:1; D1:2"], "category": 1},
            {"question": "When?", "evidence": ["D:11:26"], "category": 2},
            {"question": "Unanswerable?", "evidence": ["D1:1"], "category": 5},
            {"question": "No evidence", "evidence": [], "category": 3},
        ],
    }
]


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(SAMPLE), encoding="utf-8")
    return path


def test_load_keeps_turn_order_dates_captions_and_answerable_questions(data_file: Path) -> None:
    (conversation,) = bench.load_conversations(data_file)
    assert [t.dia_id for t in conversation.turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    assert [t.index for t in conversation.turns] == [0, 1, 2, 0, 1]
    assert conversation.turns[0].date.isoformat() == "2023-05-08T13:56:00+00:00"
    assert conversation.turns[3].date is None
    assert conversation.turns[1].with_caption == (
        "Bob: Lovely, what is its name? [image: a photo of a dog on a sofa]"
    )
    assert conversation.turns[0].with_caption == "Alice: I adopted a greyhound!"
    # Category 5 is left out; two category 1-4 questions have no resolvable evidence.
    assert [q.evidence for q in conversation.questions] == [("D1:3",), ("D2:1", "D1:2")]
    assert conversation.dropped_questions == 2


def test_resolve_evidence_splits_malformed_strings_and_drops_unknown_ids() -> None:
    known = {"D8:6", "D9:17", "D1:1"}
    assert bench.resolve_evidence(["D8:6; D9:17", "D:11:26", "D1:1,D8:6"], known) == [
        "D8:6",
        "D9:17",
        "D1:1",
    ]


def test_recall_at_is_the_share_of_evidence_in_the_first_k_items() -> None:
    retrieved = [["D1:1"], [], ["D1:2", "D1:3"], ["D2:1"]]
    assert bench.recall_at(retrieved, ["D1:3", "D2:1"], 1) == 0.0
    assert bench.recall_at(retrieved, ["D1:3", "D2:1"], 3) == 0.5
    assert bench.recall_at(retrieved, ["D1:3", "D2:1"], 4) == 1.0


def test_bm25_matches_rank_bm25_okapi() -> None:
    # Reference values computed with rank-bm25 0.2.2 (BM25Okapi defaults); "likes" and "the"
    # are in more than half the documents, so their idf takes the epsilon floor.
    corpus = [
        ["alice", "likes", "green", "tea"],
        ["bob", "likes", "coffee"],
        ["alice", "went", "hiking", "with", "bob"],
        ["the", "weather", "is", "nice"],
        ["carol", "likes", "the", "sea", "and", "the", "sun"],
    ]
    bm25 = bench.BM25Okapi(corpus)
    assert list(bm25.scores(["alice", "tea"])) == pytest.approx(
        [1.5245701654343846, 0.0, 0.32380173398694134, 0.0, 0.0]
    )
    assert list(bm25.scores(["likes", "sun", "the"])) == pytest.approx(
        [0.23363863415048267, 0.26073589842051287, 0.0, 0.35745318440128865, 1.4794711107525402]
    )


def test_rrf_orders_by_summed_reciprocal_ranks() -> None:
    # First and last beat twice-second (1/61 + 1/63 > 2/62); ties keep the first list's order.
    assert bench.rrf([[1, 2, 3], [3, 2, 1]]) == [1, 3, 2]
    assert bench.rrf([[1, 2], [4, 1]]) == [1, 4, 2]


def test_tally_summary_by_category_and_conversation() -> None:
    tally = bench.Tally((1, 2))
    question = bench.Question("q", 4, ("D1:1", "D1:2"))
    tally.add("c1", question, [(["D1:1"], "one two"), (["D1:2"], "three")], lambda t: 2)
    summary = tally.summary()
    assert summary["overall"] == {"R@1": 0.5, "R@2": 1.0}
    assert summary["per_category"]["4 single-hop"] == {"R@1": 0.5, "R@2": 1.0}
    assert summary["per_category"]["1 multi-hop"] == {"R@1": None, "R@2": None}
    assert summary["per_conversation"]["c1"]["R@2"] == 1.0
    assert summary["tokens_per_query"]["@2"] == {"words": 3.0, "wordpieces": 4.0}
    assert summary["questions"] == 1


async def test_raw_mode_end_to_end_on_the_engine(data_file: Path, tmp_path: Path) -> None:
    (conversation,) = bench.load_conversations(data_file)
    tally = bench.Tally((1, 5))
    stored = await bench.run_sagewai(
        conversation,
        "raw",
        store="memory",
        extractor="rules",
        embedder=FakeEmbedder(),
        config=SearchConfig(),
        folder=tmp_path,
        tally=tally,
        count_wordpieces=lambda text: len(text.split()),
    )
    assert stored == 5
    summary = tally.summary()
    assert summary["questions"] == 2
    # Five turns, five results: every evidence turn is among them.
    assert summary["overall"]["R@5"] == 1.0
