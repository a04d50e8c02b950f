"""LLMFactExtractor with the scripted fake: parsing, validation, retries, timeout, fallback."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from sagewai.errors import InvalidInputError
from sagewai.extraction import (
    ExtractionContext,
    FactExtractor,
    LLMFactExtractor,
    RuleBasedFactExtractor,
    Turn,
)
from sagewai.llm import (
    LiteLLMClient,
    LLMResponse,
    ModelNotConfiguredError,
    ModelRateLimitError,
    ModelRequestError,
    ModelServerError,
    ModelUnreachableError,
    allow_model_requests,
)
from sagewai.testing._llm import ScriptedLLM

CONTEXT = ExtractionContext(
    speaker="Alice",
    timestamp=datetime(2024, 3, 13, 15, tzinfo=UTC),
    previous_turns=(Turn(role="assistant", content="How was your week?"),),
)
LOGGER = "sagewai.extraction"


@pytest.fixture(autouse=True)
def _no_real_model_calls() -> Iterator[None]:
    with allow_model_requests(False):
        yield


def fact(**overrides: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "content": "Alice moved to Berlin in February 2024",
        "fact_type": "event",
        "confidence": 0.9,
        "subject": "Alice",
        "predicate": "moved_to",
        "object": "Berlin",
        "negated": False,
        "exact_values": [],
        "event_time": "2024-02",
    }
    item.update(overrides)
    return item


def answer(*items: dict[str, Any]) -> str:
    return json.dumps({"facts": list(items)})


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def make(llm: ScriptedLLM, **options: Any) -> LLMFactExtractor:
    options.setdefault("sleep", Sleeps())
    return LLMFactExtractor(client=llm, **options)


async def test_valid_json_becomes_validated_facts() -> None:
    llm = ScriptedLLM(
        [
            answer(
                fact(),
                fact(
                    content="Alice likes tea",
                    fact_type="preference",
                    predicate="loves",
                    object="tea",
                    event_time=None,
                    confidence=0.7,
                ),
            )
        ]
    )
    extractor = make(llm)
    assert isinstance(extractor, FactExtractor)
    facts = await extractor.extract("I moved to Berlin last month. I love tea.", CONTEXT)
    assert [f.triple for f in facts] == [("Alice", "lives_in", "Berlin"), ("Alice", "likes", "tea")]
    assert facts[0].event_time == "2024-02"
    assert facts[0].extractor == "llm"
    assert facts[0].speaker == "Alice"
    stats = extractor.stats
    assert (stats.calls, stats.facts, stats.facts_rejected, stats.fallbacks) == (1, 2, 0, 0)


async def test_the_model_is_shown_speaker_time_context_and_schema() -> None:
    llm = ScriptedLLM([answer()])
    await make(llm, max_facts_per_call=7).extract("I moved to Berlin.", CONTEXT)
    call = llm.calls[0]
    assert "Alice" in call.messages[0]["content"]
    assert "at most 7 facts" in call.messages[0]["content"]
    assert "lives_in" in call.messages[0]["content"]
    assert "2024-03-13T15:00:00+00:00" in call.prompt
    assert "How was your week?" in call.prompt
    assert '"I moved to Berlin."' in call.prompt
    assert call.response_format is not None
    assert call.response_format["type"] == "json_schema"
    assert call.timeout == 30.0


async def test_fenced_json_is_read() -> None:
    llm = ScriptedLLM([f"Here you go:\n```json\n{answer(fact())}\n```\nAnything else?"])
    facts = await make(llm).extract("I moved to Berlin last month.", CONTEXT)
    assert [f.object for f in facts] == ["Berlin"]


async def test_truncated_json_keeps_the_complete_objects() -> None:
    whole = answer(
        fact(),
        fact(content="Alice likes tea", fact_type="preference", predicate="likes", object="tea"),
        fact(content="Alice plays"),
    )
    cut = whole[: whole.index("Alice plays") + 5]
    llm = ScriptedLLM([LLMResponse(content=cut, finish_reason="length")])
    extractor = make(llm)
    facts = await extractor.extract("I moved to Berlin. I like tea. I play chess.", CONTEXT)
    assert [f.object for f in facts] == ["Berlin", "tea"]
    assert extractor.stats.parse_failures == 0


async def test_wrong_types_are_rejected_and_counted() -> None:
    items = [
        fact(),
        fact(content=42),
        fact(fact_type="opinion"),
        fact(confidence="very"),
        fact(confidence=True),
        "not an object",
        fact(content="Do you like tea?"),
        fact(content="", fact_type="general"),
        fact(
            content="Alice likes tea",
            fact_type="preference",
            confidence="0.6",
            predicate="plays chess with",
            object="Bob",
            event_time="someday",
        ),
    ]
    extractor = make(ScriptedLLM([json.dumps({"facts": items})]))
    facts = await extractor.extract("I moved to Berlin and I like tea.", CONTEXT)
    assert [f.content for f in facts] == [
        "Alice moved to Berlin in February 2024",
        "Alice likes tea",
    ]
    tea = facts[1]
    assert tea.confidence == 0.6
    assert (tea.predicate, tea.object, tea.event_time) == (None, None, None)
    assert tea.metadata["raw_predicate"] == "plays chess with"
    assert extractor.stats.facts_rejected == 7


async def test_exact_values_must_be_in_the_message_and_the_fact() -> None:
    item = fact(
        content="The staging DB is postgresql://db:5432/app, not postgresql://invented:1/x",
        fact_type="general",
        predicate=None,
        object=None,
        exact_values=["postgresql://db:5432/app", "postgresql://invented:1/x", "v9.9.9"],
    )
    facts = await make(ScriptedLLM([answer(item)])).extract(
        "Our staging DB is postgresql://db:5432/app.", CONTEXT
    )
    assert facts[0].exact_values == ("postgresql://db:5432/app",)


async def test_max_facts_per_call_is_enforced() -> None:
    items = [fact(content=f"Alice fact number {i}") for i in range(5)]
    extractor = make(ScriptedLLM([answer(*items)]), max_facts_per_call=2)
    assert len(await extractor.extract("lots of facts", CONTEXT)) == 2
    assert extractor.stats.facts_rejected == 3


@pytest.mark.parametrize("bad", ["", "   ", "I could not find any facts.", '{"facts": 3}', "[1, 2"])
async def test_unreadable_answers_fall_back_without_raising(bad: str) -> None:
    extractor = make(ScriptedLLM([bad]))
    facts = await extractor.extract("I moved to Berlin last month.", CONTEXT)
    assert [f.extractor for f in facts] == ["rules"]
    stats = extractor.stats
    assert (stats.parse_failures, stats.fallbacks) == (1, 1)


async def test_an_empty_list_is_a_valid_answer() -> None:
    extractor = make(ScriptedLLM(['{"facts": []}', "[]"]))
    assert await extractor.extract("Nice weather.", CONTEXT) == []
    assert await extractor.extract("Nice weather.", CONTEXT) == []
    assert extractor.stats.parse_failures == 0


async def test_rate_limit_then_success_backs_off() -> None:
    sleeps = Sleeps()
    llm = ScriptedLLM([ModelRateLimitError("429"), ModelServerError("503"), answer(fact())])
    extractor = make(llm, sleep=sleeps, max_retries=3)
    facts = await extractor.extract("I moved to Berlin last month.", CONTEXT)
    assert [f.extractor for f in facts] == ["llm"]
    assert len(sleeps.waits) == 2
    assert sleeps.waits[1] > sleeps.waits[0] > 0
    stats = extractor.stats
    assert (stats.calls, stats.retries, stats.fallbacks) == (3, 2, 0)


async def test_timeout_is_retried_then_falls_back(caplog: pytest.LogCaptureFixture) -> None:
    async def never(messages: list[dict[str, Any]]) -> str:
        await asyncio.sleep(10)
        return answer()

    sleeps = Sleeps()
    llm = ScriptedLLM([never, never, never])
    extractor = make(llm, sleep=sleeps, timeout=0.02, max_retries=2)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        facts = await extractor.extract("I moved to Berlin last month.", CONTEXT)
    assert [f.extractor for f in facts] == ["rules"]
    assert llm.remaining == 0
    assert len(sleeps.waits) == 2
    assert extractor.stats.fallbacks == 1
    assert "ModelTimeoutError" in caplog.text


@pytest.mark.parametrize(
    "error",
    [ModelUnreachableError("connection refused"), ModelNotConfiguredError("no API key")],
)
async def test_unreachable_model_falls_back_and_logs_once(
    error: Exception, caplog: pytest.LogCaptureFixture
) -> None:
    llm = ScriptedLLM([error])
    extractor = make(llm)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        for _ in range(5):
            facts = await extractor.extract("I moved to Berlin last month.", CONTEXT)
            assert [f.extractor for f in facts] == ["rules"]
    assert len(llm.calls) == 1  # no new attempt during the cooldown
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert "cannot reach a model" in warnings[0].getMessage()
    assert extractor.stats.fallbacks == 5
    assert extractor.stats.unreachable


async def test_model_is_tried_again_after_the_cooldown() -> None:
    llm = ScriptedLLM([ModelUnreachableError("down"), answer(fact())])
    extractor = make(llm, unreachable_cooldown=60.0)
    now = [1000.0]
    extractor._clock = lambda: now[0]
    await extractor.extract("I moved to Berlin.", CONTEXT)
    await extractor.extract("I moved to Berlin.", CONTEXT)
    assert len(llm.calls) == 1
    now[0] += 61.0
    facts = await extractor.extract("I moved to Berlin.", CONTEXT)
    assert [f.extractor for f in facts] == ["llm"]
    assert not extractor.stats.unreachable


async def test_default_client_with_model_requests_switched_off_falls_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    extractor = LLMFactExtractor()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        first = await extractor.extract("I live in Berlin.", CONTEXT)
        second = await extractor.extract("I love tea.", CONTEXT)
    assert [f.predicate for f in first + second] == ["lives_in", "likes"]
    assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) == 1
    assert "ModelRequestsForbiddenError" in caplog.text


async def test_refused_structured_output_retries_with_plain_json() -> None:
    llm = ScriptedLLM(
        [ModelRequestError("response_format json_schema is not supported"), answer(fact())]
    )
    extractor = make(llm)
    facts = await extractor.extract("I moved to Berlin.", CONTEXT)
    assert [f.extractor for f in facts] == ["llm"]
    assert llm.calls[0].response_format is not None
    assert llm.calls[1].response_format is None


async def test_unexpected_client_errors_never_reach_the_caller() -> None:
    class Broken:
        async def complete(self, *args: Any, **kwargs: Any) -> LLMResponse:
            raise RuntimeError("driver exploded")

    extractor = LLMFactExtractor(client=Broken(), fallback=RuleBasedFactExtractor())
    facts = await extractor.extract("I moved to Berlin.", CONTEXT)
    assert [f.extractor for f in facts] == ["rules"]


async def test_input_checks() -> None:
    extractor = make(ScriptedLLM([]))
    assert await extractor.extract("   ", CONTEXT) == []
    with pytest.raises(InvalidInputError):
        await extractor.extract(None, CONTEXT)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        LLMFactExtractor(client=ScriptedLLM([]), max_facts_per_call=0)
    assert isinstance(LLMFactExtractor()._client, LiteLLMClient)
