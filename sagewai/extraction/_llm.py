"""``LLMFactExtractor``: facts read by a chat model, with the rules as the safety net.

A model reads what patterns miss (paraphrase, long narratives, implicit subjects), but it is
slow, costs money, fails transiently and is sometimes unreachable. So every call has a timeout
and retries with backoff on transient errors; the answer is parsed leniently and validated item
by item (:mod:`.llm_output`); and when no model can answer (no key, connection refused,
litellm missing, model calls switched off) the extractor says so once in the log and uses its
fallback extractor (the rules) from then on. It never raises into a conversation loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from sagewai.errors import InvalidInputError, SagewaiError
from sagewai.extraction._base import (
    ExtractedFact,
    ExtractionContext,
    FactExtractor,
    sort_facts,
)
from sagewai.extraction._llm_output import (
    build_messages,
    is_response_format_error,
    read_facts,
    response_format,
)
from sagewai.extraction._stages import AtOnceFacts
from sagewai.llm._base import LLMClient, LLMResponse
from sagewai.llm._errors import (
    MalformedOutputError,
    ModelRequestError,
    ModelTimeoutError,
    is_model_unreachable,
)
from sagewai.llm._jsonparse import parse_json_lenient
from sagewai.llm._retry import Sleep, call_with_retries

__all__ = ["LLMExtractorStats", "LLMFactExtractor"]

_log = logging.getLogger("sagewai.extraction")


@dataclass(frozen=True)
class LLMExtractorStats:
    """Counters of an :class:`LLMFactExtractor` since it was made.

    Attributes:
        texts: Messages given to :meth:`~LLMFactExtractor.extract`.
        calls: Requests sent to the model (retries included).
        retries: Requests that were retries after a transient error.
        facts: Facts accepted from model answers.
        facts_rejected: Answer items that failed validation (or exceeded ``max_facts_per_call``).
        parse_failures: Answers with no readable JSON list of facts.
        fallbacks: Messages answered by the fallback extractor instead of the model.
        unreachable: True while the model is considered unreachable (in its cooldown).
    """

    texts: int = 0
    calls: int = 0
    retries: int = 0
    facts: int = 0
    facts_rejected: int = 0
    parse_failures: int = 0
    fallbacks: int = 0
    unreachable: bool = False


class LLMFactExtractor:
    """Extracts facts with a chat model through litellm (or any :class:`~sagewai.llm.LLMClient`).

    Args:
        model: The litellm model name, used when ``client`` is not given.
        max_facts_per_call: At most this many facts per message; extra answer items are counted
            as rejected.
        client: The chat client; default ``LiteLLMClient(model, api_base=..., api_key=...)``
            (litellm is imported at the first call, not here).
        timeout: Seconds one model request may take.
        max_retries: Retries on transient errors (rate limit, timeout, 5xx), with exponential
            backoff and jitter.
        fallback: The extractor used when the model cannot answer; default a
            :class:`~sagewai.extraction._rules.RuleBasedFactExtractor`.
        api_base: Base URL for the default client (a local OpenAI-compatible server).
        api_key: API key for the default client.
        max_input_chars: Characters of a message shown to the model.
        context_turns: Earlier turns shown to the model as context.
        unreachable_cooldown: Seconds to use the fallback without trying the model again after
            it was found unreachable.
        sleep: The awaitable sleep between retries (tests inject a recorder).

    Example:
        >>> import asyncio
        >>> from sagewai.testing import ScriptedLLM
        >>> llm = ScriptedLLM(['{"facts": [{"content": "Alice lives in Berlin", '
        ...     '"fact_type": "general", "confidence": 0.9, "subject": "Alice", '
        ...     '"predicate": "lives_in", "object": "Berlin", "negated": false, '
        ...     '"exact_values": [], "event_time": null}]}'])
        >>> extractor = LLMFactExtractor(client=llm)
        >>> [f.triple for f in asyncio.run(extractor.extract("I live in Berlin",
        ...     ExtractionContext(speaker="Alice")))]
        [('Alice', 'lives_in', 'Berlin')]
    """

    def __init__(
        self,
        model: str = "gpt-4o-mini",
        max_facts_per_call: int = 20,
        client: LLMClient | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        *,
        fallback: FactExtractor | None = None,
        api_base: str | None = None,
        api_key: str | None = None,
        max_input_chars: int = 8_000,
        context_turns: int = 4,
        unreachable_cooldown: float = 300.0,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if max_facts_per_call < 1:
            raise InvalidInputError("max_facts_per_call must be >= 1")
        if timeout <= 0:
            raise InvalidInputError("timeout must be > 0")
        if max_retries < 0:
            raise InvalidInputError("max_retries must be >= 0")
        if client is None:
            from sagewai.llm._litellm_client import LiteLLMClient

            client = LiteLLMClient(
                model, api_base=api_base, api_key=api_key, timeout=timeout, max_retries=0
            )
        if fallback is None:
            from sagewai.extraction._rules import RuleBasedFactExtractor

            fallback = RuleBasedFactExtractor()
        self.model = model
        self.max_facts_per_call = max_facts_per_call
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.max_input_chars = max_input_chars
        self.context_turns = context_turns
        self.unreachable_cooldown = unreachable_cooldown
        self._client = client
        self._fallback = fallback
        self._sleep = sleep
        self._clock: Callable[[], float] = time.monotonic
        self._use_schema = True
        self._unreachable_until: float | None = None
        self._logged: set[str] = set()
        self._stats = LLMExtractorStats()

    def __repr__(self) -> str:
        return f"LLMFactExtractor(model={self.model!r})"

    @property
    def stats(self) -> LLMExtractorStats:
        """The counters (calls, facts_rejected, parse_failures, fallbacks, ...)."""
        unreachable = (
            self._unreachable_until is not None and self._clock() < self._unreachable_until
        )
        return replace(self._stats, unreachable=unreachable)

    def _count(self, **increments: int) -> None:
        current = self._stats
        self._stats = replace(
            current, **{name: getattr(current, name) + value for name, value in increments.items()}
        )

    def _log_once(self, key: str, level: int, message: str, *args: object) -> None:
        if key in self._logged:
            _log.debug(message, *args)
            return
        self._logged.add(key)
        _log.log(level, message, *args)

    extracts_at_once = False
    """The model finds nothing as a message arrives: it reads messages a batch at a time."""
    extracts_deferred = True
    """Every message is read in the deferred stage."""

    async def extract_at_once(
        self, text: str, context: ExtractionContext | None = None
    ) -> AtOnceFacts:
        """Nothing now: every text waits for the deferred stage (the model)."""
        return AtOnceFacts(defer=True)

    async def extract_deferred(
        self, text: str, context: ExtractionContext | None, at_once: Sequence[ExtractedFact]
    ) -> list[ExtractedFact]:
        """The model's facts of ``text`` (see :meth:`extract`)."""
        return await self.extract(text, context)

    async def extract(
        self, text: str, context: ExtractionContext | None = None
    ) -> list[ExtractedFact]:
        """Facts in ``text`` read by the model, most confident first; the fallback's when it fails.

        Raises:
            InvalidInputError: ``text`` is not a string (a caller error, not a model failure).
        """
        if not isinstance(text, str):
            raise InvalidInputError(f"text must be a str, got {type(text).__name__}")
        self._count(texts=1)
        if not text.strip():
            return []
        if self._unreachable_until is not None:
            if self._clock() < self._unreachable_until:
                return await self._use_fallback(text, context)
            self._unreachable_until = None
        try:
            response = await self._ask(text, context)
        except Exception as exc:  # never raise into the conversation loop
            return await self._after_failure(exc, text, context)
        return await self._read(response, text, context)

    async def _ask(self, text: str, context: ExtractionContext | None) -> LLMResponse:
        messages = build_messages(
            text,
            context,
            max_facts=self.max_facts_per_call,
            max_chars=self.max_input_chars,
            context_turns=self.context_turns,
        )
        attempts = 0

        async def attempt() -> LLMResponse:
            nonlocal attempts
            attempts += 1
            self._count(calls=1, retries=1 if attempts > 1 else 0)
            try:
                return await asyncio.wait_for(
                    self._client.complete(
                        messages,
                        response_format=response_format() if self._use_schema else None,
                        timeout=self.timeout,
                    ),
                    timeout=self.timeout,
                )
            except TimeoutError as exc:
                if isinstance(exc, SagewaiError):
                    raise
                raise ModelTimeoutError(f"{self!r}: no answer in {self.timeout:g}s") from exc
            except ModelRequestError as exc:
                if self._use_schema and is_response_format_error(str(exc)):
                    # The provider does not do structured output: ask for JSON in the prompt.
                    self._use_schema = False
                    self._log_once(
                        "schema",
                        logging.INFO,
                        "%r: structured output refused, using plain JSON",
                        self,
                    )
                    return await self._client.complete(messages, timeout=self.timeout)
                raise

        return await call_with_retries(attempt, max_retries=self.max_retries, sleep=self._sleep)

    async def _after_failure(
        self, error: Exception, text: str, context: ExtractionContext | None
    ) -> list[ExtractedFact]:
        if is_model_unreachable(error):
            self._unreachable_until = self._clock() + self.unreachable_cooldown
            self._log_once(
                "unreachable",
                logging.WARNING,
                "%r cannot reach a model (%s: %s); extracting with %r instead",
                self,
                type(error).__name__,
                str(error)[:300],
                self._fallback,
            )
        else:
            self._log_once(
                f"failure:{type(error).__name__}",
                logging.WARNING,
                "%r: model call failed after retries (%s: %s); using %r for this message",
                self,
                type(error).__name__,
                str(error)[:300],
                self._fallback,
            )
        return await self._use_fallback(text, context)

    async def _use_fallback(
        self, text: str, context: ExtractionContext | None
    ) -> list[ExtractedFact]:
        self._count(fallbacks=1)
        try:
            return await self._fallback.extract(text, context)
        except SagewaiError as exc:
            self._log_once("fallback", logging.WARNING, "%r: fallback failed: %s", self, exc)
            return []

    async def _read(
        self, response: LLMResponse, text: str, context: ExtractionContext | None
    ) -> list[ExtractedFact]:
        try:
            value = parse_json_lenient(response.content or "")
        except MalformedOutputError as exc:
            self._count(parse_failures=1)
            self._log_once("parse", logging.WARNING, "%r: unreadable answer (%s)", self, exc)
            return await self._use_fallback(text, context)
        read = read_facts(value, text, context, model=self.model, max_facts=self.max_facts_per_call)
        if read.shape_error:
            self._count(parse_failures=1)
            self._log_once("shape", logging.WARNING, "%r: answer is not a list of facts", self)
            return await self._use_fallback(text, context)
        self._count(facts=len(read.facts), facts_rejected=read.rejected)
        return sort_facts(read.facts)
