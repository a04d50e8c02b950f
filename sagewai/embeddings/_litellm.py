"""Embeddings from any provider litellm speaks to (OpenAI, Azure, Cohere, Ollama, a local server).

Why: some deployments already pay for an embedding API or run an OpenAI-compatible server; this
adapter lets them keep it while the rest of sagewai stays the same. litellm is imported on the
first call only (it is slow to import and would otherwise fetch a price list over the network),
and its exceptions are translated into sagewai's tree so callers never import litellm to handle
them: the same translation as :class:`~sagewai.llm.LiteLLMClient`, so a timeout is a
:class:`~sagewai.errors.SagewaiTimeoutError`, an unreachable server a
:class:`~sagewai.errors.BackendUnavailableError`, a refused key a
:class:`~sagewai.errors.ConfigurationError`, anything else a :class:`~sagewai.errors.BackendError`.
The process-wide switch :func:`sagewai.llm.allow_model_requests` applies to embedding calls too.
"""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from sagewai._optional import require
from sagewai.core._embedder import Vector, Vectors, normalize_rows
from sagewai.errors import BackendError, ConfigurationError, InvalidInputError
from sagewai.llm._guard import ensure_model_requests_allowed
from sagewai.llm._litellm_client import translate_litellm_error

__all__ = ["LiteLLMEmbedder"]

_FEATURE = "LiteLLMEmbedder"


def _import_litellm(feature: str = _FEATURE) -> ModuleType:
    """Import litellm lazily, with its bundled model price list instead of a network fetch.

    Args:
        feature: What needs litellm, for the error message.

    Raises:
        MissingDependencyError: If litellm is not installed (``pip install "sagewai[llm]"``).
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return require("litellm", extra="llm", feature=feature)


def _prepared(text: str) -> str:
    """Make a text acceptable to embedding APIs, which reject empty strings and lone surrogates."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text if text.strip() else " "


def _vector_of(item: Any) -> Any:
    if isinstance(item, Mapping):
        return item.get("embedding")
    return getattr(item, "embedding", None)


def _index_of(item: Any, default: int) -> int:
    index = item.get("index") if isinstance(item, Mapping) else getattr(item, "index", None)
    return index if isinstance(index, int) else default


class LiteLLMEmbedder:
    """An :class:`~sagewai.embeddings.Embedder` backed by ``litellm.aembedding``.

    Vectors are L2-normalised here (not every provider does it) and checked against ``dimension``,
    so a misconfigured model fails on the first call instead of corrupting a vector store.
    Empty texts are sent as a single space, since most APIs reject empty input.

    Args:
        model: A litellm model string, e.g. ``"openai/text-embedding-3-small"``.
        dimension: The vector length the model returns (the vector store is sized from it).
        api_base: Base URL of the API or of a local OpenAI-compatible server.
        api_key: Key for the API; ``None`` lets litellm read its usual environment variables.
        timeout: Seconds one request may take before :class:`~sagewai.errors.SagewaiTimeoutError`.
        batch_size: Texts per request (providers cap it; OpenAI accepts up to 2048).
        extra_params: More keyword arguments for ``litellm.aembedding`` (``dimensions``,
            ``input_type``, ``max_retries``...).

    Raises:
        InvalidInputError: If an argument is out of range.

    Example:
        >>> embedder = LiteLLMEmbedder("openai/text-embedding-3-small", dimension=1536)
        >>> embedder.dimension
        1536
        >>> # vectors = await embedder.embed_documents(["hello"])  (calls the API)
    """

    def __init__(
        self,
        model: str,
        dimension: int,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 30,
        batch_size: int = 256,
        extra_params: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise InvalidInputError("model must be a non-empty litellm model string")
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
            raise InvalidInputError(f"dimension must be a positive int, got {dimension!r}")
        if not math.isfinite(timeout) or timeout <= 0:
            raise InvalidInputError(f"timeout must be a positive number of seconds, got {timeout}")
        if batch_size < 1:
            raise InvalidInputError(f"batch_size must be at least 1, got {batch_size}")
        self._model = model.strip()
        self._dimension = dimension
        self._api_base = api_base
        self._api_key = api_key
        self._timeout = float(timeout)
        self._batch_size = batch_size
        self._extra_params = dict(extra_params or {})

    @property
    def dimension(self) -> int:
        """The vector length given at construction and checked on every response."""
        return self._dimension

    @property
    def name(self) -> str:
        """``litellm:<model>``, recorded beside stored vectors."""
        return f"litellm:{self._model}"

    async def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Embed texts in requests of ``batch_size``; results keep the input order.

        Raises:
            InvalidInputError: If ``texts`` is a bare string or holds a non-string.
            ConfigurationError: If the model returns vectors of another length than ``dimension``,
                the API key is refused, or model requests are switched off
                (:func:`sagewai.llm.allow_model_requests`).
            SagewaiTimeoutError: If a request takes longer than ``timeout``.
            BackendUnavailableError: If the service cannot be reached.
            BackendError: For any other failure of the call or a malformed response.
        """
        if isinstance(texts, str):
            raise InvalidInputError("texts must be a sequence of strings, not one string")
        prepared: list[str] = []
        for position, text in enumerate(texts):
            if not isinstance(text, str):
                raise InvalidInputError(f"texts[{position}] is {type(text).__name__}, expected str")
            prepared.append(_prepared(text))
        if not prepared:
            return np.zeros((0, self._dimension), dtype=np.float32)
        ensure_model_requests_allowed(_FEATURE)
        litellm = _import_litellm()
        parts = [
            await self._embed_batch(litellm, prepared[start : start + self._batch_size])
            for start in range(0, len(prepared), self._batch_size)
        ]
        return normalize_rows(np.concatenate(parts, axis=0))

    async def embed_query(self, text: str) -> Vector:
        """Embed one search query through the same call as documents.

        Raises:
            The same errors as :meth:`embed_documents`.
        """
        if not isinstance(text, str):
            raise InvalidInputError(f"text is {type(text).__name__}, expected str")
        vector: Vector = (await self.embed_documents([text]))[0]
        return vector

    async def _embed_batch(self, litellm: ModuleType, batch: list[str]) -> Vectors:
        try:
            async with asyncio.timeout(self._timeout):
                response = await litellm.aembedding(
                    model=self._model,
                    input=batch,
                    api_base=self._api_base,
                    api_key=self._api_key,
                    timeout=self._timeout,
                    **self._extra_params,
                )
        except Exception as exc:  # every provider error funnels through here
            raise translate_litellm_error(exc, self._model) from exc
        return self._parse(response, len(batch))

    def _parse(self, response: Any, expected: int) -> Vectors:
        if isinstance(response, Mapping):
            data = response.get("data")
        else:
            data = getattr(response, "data", None)
        if not isinstance(data, Sequence) or len(data) != expected:
            count = len(data) if isinstance(data, Sequence) else "no"
            raise BackendError(f"{self._model!r} returned {count} vectors for {expected} texts")
        ordered = sorted(enumerate(data), key=lambda pair: _index_of(pair[1], pair[0]))
        try:
            rows = np.asarray([_vector_of(item) for _, item in ordered], dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise BackendError(f"{self._model!r} returned malformed vectors: {exc}") from exc
        if rows.ndim != 2:
            raise BackendError(f"{self._model!r} returned vectors of uneven or missing length")
        if rows.shape[1] != self._dimension:
            raise ConfigurationError(
                f"{self._model!r} returns {rows.shape[1]}-d vectors but the embedder was "
                f"configured with dimension={self._dimension}; set dimension={rows.shape[1]}"
            )
        if not np.isfinite(rows).all():
            raise BackendError(f"{self._model!r} returned non-finite values")
        return normalize_rows(rows)

    def __repr__(self) -> str:
        return f"LiteLLMEmbedder(model={self._model!r}, dimension={self._dimension})"
