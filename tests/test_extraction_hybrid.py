"""HybridFactExtractor: when the model is asked, merging, stats, offline defaults."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from sagewai.core._records import FactType
from sagewai.extraction import (
    ExtractedFact,
    ExtractionContext,
    FactExtractor,
    HybridFactExtractor,
    LLMFactExtractor,
    RuleBasedFactExtractor,
)
from sagewai.extraction._hybrid import merge_facts, needs_llm
from sagewai.extraction._rules import RuleAnalysis
from sagewai.llm import allow_model_requests
from sagewai.testing._llm import ScriptedLLM

CONTEXT = ExtractionContext(speaker="Alice")


@pytest.fixture(autouse=True)
def _no_real_model_calls() -> Iterator[None]:
    with allow_model_requests(False):
        yield


def model_answer(content: str, **extra: object) -> str:
    item = {"content": content, "fact_type": "general", "confidence": 0.7, "subject": "Alice",
            "predicate": None, "object": None, "negated": False, "exact_values": [],
            "event_time": None, **extra}  # fmt: skip
    return json.dumps({"facts": [item]})


def hybrid(llm: ScriptedLLM, llm_threshold: float = 0.3) -> HybridFactExtractor:
    return HybridFactExtractor(
        llm_extractor=LLMFactExtractor(client=llm), llm_threshold=llm_threshold
    )


async def test_confident_rules_do_not_call_the_model() -> None:
    llm = ScriptedLLM([])  # any call would raise
    extractor = hybrid(llm)
    assert isinstance(extractor, FactExtractor)
    facts = await extractor.extract("I moved to Berlin last month.", CONTEXT)
    assert [f.extractor for f in facts] == ["rules"]
    assert llm.calls == []


@pytest.mark.parametrize(
    "text", ["Thanks so much!", "Do you like tea?", "Maybe I'll try yoga.", "If I were rich..."]
)
async def test_questions_and_small_talk_do_not_call_the_model(text: str) -> None:
    llm = ScriptedLLM([])
    extractor = hybrid(llm)
    assert await extractor.extract(text, CONTEXT) == []
    assert llm.calls == []
    assert extractor.stats.skipped_non_factual == 1


async def test_text_the_rules_cannot_read_goes_to_the_model() -> None:
    llm = ScriptedLLM([model_answer("Alice's grandmother taught her to knit")])
    extractor = hybrid(llm)
    facts = await extractor.extract("Grandma taught me knitting when I was small.", CONTEXT)
    assert [f.extractor for f in facts] == ["llm"]
    assert len(llm.calls) == 1
    stats = extractor.stats
    assert (stats.texts, stats.sent_to_llm, stats.llm_facts) == (1, 1, 1)
    assert stats.llm_share == 1.0


async def test_threshold_sends_weak_rule_facts_to_the_model_and_merges() -> None:
    rules = RuleBasedFactExtractor(min_confidence=0.1)
    llm = ScriptedLLM([
        model_answer("Alice moved to Berlin last month.", fact_type="event", confidence=0.95),
        model_answer("Alice lives in Berlin", predicate="lives_in", object="Berlin"),
    ])  # fmt: skip
    extractor = HybridFactExtractor(
        rule_extractor=rules, llm_extractor=LLMFactExtractor(client=llm), llm_threshold=0.99
    )
    first = await extractor.extract("I moved to Berlin last month.", CONTEXT)
    assert len(first) == 1  # the model's copy of the rules' fact is merged away
    assert first[0].confidence == 0.95
    assert extractor.stats.duplicates_merged == 1
    second = await extractor.extract("I live in Berlin.", CONTEXT)
    assert len(second) == 1  # same triple and polarity: one fact
    assert extractor.stats.sent_to_llm == 2


async def test_default_construction_works_offline(caplog: pytest.LogCaptureFixture) -> None:
    extractor = HybridFactExtractor()
    with caplog.at_level(logging.WARNING, logger="sagewai.extraction"):
        facts = await extractor.extract("Grandma taught me knitting when I was small.", CONTEXT)
        more = await extractor.extract("Knitting with grandma every winter.", CONTEXT)
        confident = await extractor.extract("I live in Berlin.", CONTEXT)
    assert isinstance(facts, list)
    assert isinstance(more, list)
    assert [f.predicate for f in confident] == ["lives_in"]
    assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) == 1
    assert extractor.stats.sent_to_llm == 2
    assert 0 < extractor.stats.llm_share < 1


def test_needs_llm_definition() -> None:
    weak = ExtractedFact(content="x", fact_type=FactType.GENERAL, confidence=0.2)
    strong = ExtractedFact(content="y", fact_type=FactType.GENERAL, confidence=0.8)
    assert needs_llm(RuleAnalysis(), [], 0.3)
    assert needs_llm(RuleAnalysis(), [weak], 0.3)
    assert not needs_llm(RuleAnalysis(), [weak, strong], 0.3)
    assert not needs_llm(RuleAnalysis(small_talk=True), [], 0.3)
    assert not needs_llm(RuleAnalysis(binary=True), [], 0.3)


def test_merge_keeps_the_more_confident_duplicate() -> None:
    a = ExtractedFact(content="Alice likes tea.", fact_type=FactType.PREFERENCE, confidence=0.6,
                      subject="Alice", predicate="likes", object="tea")  # fmt: skip
    b = ExtractedFact(content="Alice enjoys tea", fact_type=FactType.PREFERENCE, confidence=0.9,
                      subject="alice", predicate="likes", object="Tea")  # fmt: skip
    c = ExtractedFact(content="Alice dislikes tea", fact_type=FactType.PREFERENCE, confidence=0.5,
                      subject="Alice", predicate="likes", object="tea",
                      metadata={"negated": True})  # fmt: skip
    merged, dropped = merge_facts([a, c], [b])
    assert merged == [b, c]
    assert dropped == 1
