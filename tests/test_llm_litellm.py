"""LiteLLMClient against litellm's offline mock, the model-request switch, error translation."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from sagewai.errors import ConfigurationError, InvalidInputError, SagewaiError
from sagewai.llm import (
    LiteLLMClient,
    ModelNotConfiguredError,
    ModelRateLimitError,
    ModelRequestError,
    ModelRequestsForbiddenError,
    ModelServerError,
    ModelTimeoutError,
    ModelUnreachableError,
    allow_model_requests,
    is_model_unreachable,
    model_requests_allowed,
)
from sagewai.llm._litellm_client import response_from_litellm, translate_litellm_error

MESSAGES = [{"role": "user", "content": "hello"}]


def test_importing_sagewai_does_not_import_litellm() -> None:
    code = (
        "import sys, sagewai, sagewai.llm, sagewai.extraction, sagewai.testing._llm\n"
        "from sagewai.extraction import HybridFactExtractor\n"
        "HybridFactExtractor()\n"
        "assert 'litellm' not in sys.modules, 'litellm imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_switch_restores_previous_value() -> None:
    before = model_requests_allowed()
    with allow_model_requests(False):
        assert not model_requests_allowed()
        with allow_model_requests(True):
            assert model_requests_allowed()
        assert not model_requests_allowed()
    assert model_requests_allowed() is before


async def test_forbidden_requests_fail_before_any_import() -> None:
    client = LiteLLMClient("gpt-4o-mini")
    with allow_model_requests(False), pytest.raises(ModelRequestsForbiddenError) as caught:
        await client.complete(MESSAGES)
    assert isinstance(caught.value, ConfigurationError)
    assert is_model_unreachable(caught.value)


def test_constructor_validates() -> None:
    with pytest.raises(InvalidInputError):
        LiteLLMClient("")
    with pytest.raises(InvalidInputError):
        LiteLLMClient("m", timeout=0)
    with pytest.raises(InvalidInputError):
        LiteLLMClient("m", max_retries=-1)


def test_response_without_choices_is_an_error() -> None:
    class Empty:
        choices: tuple[object, ...] = ()

    with pytest.raises(ModelRequestError):
        response_from_litellm(Empty())


def test_translation_by_name_without_litellm() -> None:
    assert isinstance(translate_litellm_error(TimeoutError("x")), ModelTimeoutError)
    assert isinstance(translate_litellm_error(ConnectionRefusedError("x")), ModelUnreachableError)
    assert isinstance(translate_litellm_error(RuntimeError("weird")), ModelRequestError)


litellm = pytest.importorskip("litellm")


@pytest.fixture
def _offline_litellm() -> Iterator[None]:
    """The tests below run the real client against litellm's offline mock or a closed port."""
    with allow_model_requests(True):
        yield


pytestmark = pytest.mark.usefixtures("_offline_litellm")


async def test_mock_response_round_trip() -> None:
    client = LiteLLMClient("gpt-4o-mini", extra_params={"mock_response": '{"facts": []}'})
    response = await client.complete(MESSAGES, response_format={"type": "json_object"})
    assert response.content == '{"facts": []}'
    assert response.finish_reason == "stop"
    assert response.usage.total_tokens > 0


async def test_mock_tool_calls_are_converted() -> None:
    client = LiteLLMClient(
        "gpt-4o-mini",
        extra_params={
            "mock_response": "calling",
            "mock_tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
    )
    response = await client.complete(
        MESSAGES, tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}]
    )
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [("c1", "f", "{}")]


async def test_missing_api_key_is_not_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    client = LiteLLMClient("gpt-4o-mini", max_retries=0)
    with pytest.raises(ModelNotConfiguredError) as caught:
        await client.complete(MESSAGES)
    assert is_model_unreachable(caught.value)


async def test_refused_connection_is_unreachable() -> None:
    client = LiteLLMClient(
        "openai/local-model", api_base="http://127.0.0.1:9/v1", api_key="x", max_retries=0
    )
    with pytest.raises(ModelUnreachableError) as caught:
        await client.complete(MESSAGES)
    assert isinstance(caught.value, SagewaiError)
    assert is_model_unreachable(caught.value)


async def test_rate_limit_is_retried_with_backoff() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    error = litellm.RateLimitError("429", llm_provider="openai", model="gpt-4o-mini")
    client = LiteLLMClient(
        "gpt-4o-mini", max_retries=2, sleep=sleep, extra_params={"mock_response": error}
    )
    with pytest.raises(ModelRateLimitError):
        await client.complete(MESSAGES)
    assert len(waits) == 2
    assert waits[1] > waits[0] > 0


def test_translation_of_litellm_exceptions() -> None:
    cases = [
        (
            litellm.AuthenticationError("no", llm_provider="openai", model="m"),
            ModelNotConfiguredError,
        ),
        (litellm.RateLimitError("slow", llm_provider="openai", model="m"), ModelRateLimitError),
        (litellm.Timeout("late", model="m", llm_provider="openai"), ModelTimeoutError),
        (litellm.BadRequestError("bad", model="m", llm_provider="openai"), ModelRequestError),
        (litellm.InternalServerError("boom", llm_provider="openai", model="m"), ModelServerError),
        (
            litellm.APIConnectionError("down", llm_provider="ollama", model="m"),
            ModelUnreachableError,
        ),
    ]
    for error, expected in cases:
        assert type(translate_litellm_error(error, "m")) is expected, error
    # litellm reports a missing OpenAI key as an HTTP 500 with the cause in the chain
    wrapped = litellm.InternalServerError(
        "Missing credentials. Please pass an `api_key`", llm_provider="openai", model="m"
    )
    assert isinstance(translate_litellm_error(wrapped), ModelNotConfiguredError)
