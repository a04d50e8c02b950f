"""Entity extractors: find the named things in a message (people, places, organisations, ...).

Three implementations behind one protocol, :class:`EntityExtractor`:

* :class:`~sagewai.intelligence.RuleBasedEntityExtractor` (in :mod:`._rule_entities`), the
  offline default: patterns and word lists for names, organisations, places, technologies,
  titles, events, dates and exact values (ids, paths, versions, URLs, amounts, kept verbatim).
  No model, no dependency.
* :class:`GLiNEREntityExtractor`: a GLiNER span model (``pip install "sagewai[gliner]"``), loaded
  lazily from a local folder; it never downloads, and fails at first use with
  :class:`~sagewai.errors.ModelNotAvailableError` when the weights are missing.
* :class:`LLMEntityExtractor`: any chat model through litellm (``pip install "sagewai[llm]"``).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from sagewai._optional import require
from sagewai.errors import ExtractionError, InvalidInputError, ModelNotAvailableError

__all__ = [
    "DEFAULT_ENTITY_LABELS",
    "DEFAULT_GLINER_MODEL",
    "HUB_GLINER_MODEL",
    "EntityExtractor",
    "ExtractedEntity",
    "GLiNEREntityExtractor",
    "LLMEntityExtractor",
]

DEFAULT_ENTITY_LABELS: tuple[str, ...] = (
    "person",
    "organization",
    "location",
    "technology",
    "date",
    "product",
    "event",
)
DEFAULT_GLINER_MODEL = "~/.sagewai/models/gliner"
"""Where ``GLiNEREntityExtractor()`` looks first: a local folder holding ``gliner_config.json``
and the weights (copy or save any GLiNER model there). Nothing is ever downloaded."""
HUB_GLINER_MODEL = "urchade/gliner_small-v2.1"
"""Also used when it is already in the local Hugging Face cache (never fetched)."""
GLINER_MODEL_ENV = "SAGEWAI_GLINER_MODEL"
"""Environment variable read at load time (never at import) for a local GLiNER folder."""
MAX_TEXT_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class ExtractedEntity:
    """One mention found in a text: its surface form, a label, its character span and a score."""

    name: str
    label: str
    start: int
    end: int
    score: float


@runtime_checkable
class EntityExtractor(Protocol):
    """Finds entity mentions in a text. Implementations are stateless strategies.

    Example:
        >>> import asyncio
        >>> from sagewai.intelligence import RuleBasedEntityExtractor
        >>> extractor = RuleBasedEntityExtractor()
        >>> found = asyncio.run(extractor.extract("I moved to Berlin in May 2023."))
        >>> [(e.name, e.label) for e in found]
        [('Berlin', 'location'), ('May 2023', 'date')]
    """

    async def extract(self, text: str) -> list[ExtractedEntity]:
        """Mentions in ``text``, in order of appearance."""
        ...


# --------------------------------------------------------------------------- GLiNER


@contextmanager
def _offline_hub() -> Iterator[None]:
    """Make Hugging Face loaders fail at once instead of retrying the network."""
    saved = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    constants: Any = None
    previous = None
    try:
        # read at import by the hub library, so the module constant is switched too
        constants = importlib.import_module("huggingface_hub.constants")

        previous = constants.HF_HUB_OFFLINE
        constants.HF_HUB_OFFLINE = True
    except ImportError:
        constants = None
    try:
        yield
    finally:
        if constants is not None:
            constants.HF_HUB_OFFLINE = previous
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


_HOW_TO_PROVIDE = (
    f"put a GLiNER model folder (gliner_config.json and the weights) at {DEFAULT_GLINER_MODEL}, "
    f"set {GLINER_MODEL_ENV}=/path/to/model, or pass GLiNEREntityExtractor('/path/to/model'); "
    "sagewai never downloads models"
)


def _in_hub_cache(model_id: str) -> bool:
    """True when the Hugging Face cache on this machine holds ``model_id`` (no network)."""
    hub = os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME") or os.path.join(Path.home(), ".cache", "huggingface"), "hub"
    )
    snapshots = Path(hub) / ("models--" + model_id.replace("/", "--")) / "snapshots"
    return snapshots.is_dir() and any(snapshots.iterdir())


class GLiNEREntityExtractor:
    """Zero-shot entity extraction with a GLiNER model, on CPU, from local files only.

    The model is loaded at the first :meth:`extract`, never at construction, and never
    downloaded. It is, in this order: ``model_name_or_path``; the ``SAGEWAI_GLINER_MODEL``
    environment variable (read at load time); the folder :data:`DEFAULT_GLINER_MODEL`
    (``~/.sagewai/models/gliner``: save any GLiNER model there and ``GLiNEREntityExtractor()``
    finds it); :data:`HUB_GLINER_MODEL` when it is already in the local Hugging Face cache.
    With none of them, the first use raises a one-line :class:`ModelNotAvailableError` saying
    how to provide one (before ``gliner`` or torch is imported), and
    :class:`ConversationGraphBuilder` logs that line once and goes on with the rule-based
    extractor.

    Args:
        model_name_or_path: Local folder or cached model name (default: see above).
        labels: Entity labels to look for (default: :data:`DEFAULT_ENTITY_LABELS`).
        threshold: Minimum span score.
        model: An already-built ``gliner.GLiNER`` to use instead of loading one.

    Raises:
        ModelNotAvailableError: at first use, when the weights are not on this machine.
        MissingDependencyError: at first use, when ``gliner`` is not installed.

    Example:
        >>> extractor = GLiNEREntityExtractor()  # nothing is loaded yet
        >>> extractor.labels[:3]
        ('person', 'organization', 'location')
    """

    def __init__(
        self,
        model_name_or_path: str | Path | None = None,
        labels: Sequence[str] | None = None,
        threshold: float = 0.5,
        *,
        model: Any = None,
    ) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise InvalidInputError("threshold must be between 0 and 1")
        self._source = str(model_name_or_path) if model_name_or_path is not None else None
        self.labels: tuple[str, ...] = tuple(labels) if labels else DEFAULT_ENTITY_LABELS
        self.threshold = threshold
        self._model = model
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """True once the model is in memory."""
        return self._model is not None

    def _resolve_source(self) -> str:
        """The model to load: the argument, ``$SAGEWAI_GLINER_MODEL``, the sagewai model
        folder, or the hub model when it is already cached; found without importing gliner."""
        given = self._source or os.environ.get(GLINER_MODEL_ENV)
        if given:
            looks_like_path = given.startswith((".", "~", os.sep)) or os.sep in given.strip(os.sep)
            if looks_like_path and not Path(given).expanduser().exists():
                raise ModelNotAvailableError(
                    f"GLiNER model folder {given!r} does not exist: {_HOW_TO_PROVIDE}"
                )
            return str(Path(given).expanduser()) if looks_like_path else given
        folder = Path(DEFAULT_GLINER_MODEL).expanduser()
        if (folder / "gliner_config.json").is_file():
            return str(folder)
        if _in_hub_cache(HUB_GLINER_MODEL):
            return HUB_GLINER_MODEL
        raise ModelNotAvailableError(f"no GLiNER model on this machine: {_HOW_TO_PROVIDE}")

    def _load(self) -> Any:
        with self._lock:
            if self._model is not None:
                return self._model
            source = self._resolve_source()
            with _offline_hub():
                gliner = require("gliner", extra="gliner", feature="GLiNEREntityExtractor")
                try:
                    self._model = gliner.GLiNER.from_pretrained(source, local_files_only=True)
                except Exception as exc:  # the loaders raise OSError, ValueError, hub errors...
                    raise ModelNotAvailableError(
                        f"GLiNER model {source!r} could not be loaded "
                        f"({type(exc).__name__}): {_HOW_TO_PROVIDE}"
                    ) from exc
            return self._model

    def _predict(self, text: str) -> list[dict[str, Any]]:
        model = self._load()
        try:
            return list(model.predict_entities(text, list(self.labels), threshold=self.threshold))
        except Exception as exc:
            raise ExtractionError(f"GLiNER failed on a text: {exc}") from exc

    async def extract(self, text: str) -> list[ExtractedEntity]:
        """Mentions in ``text``; loads the model at the first call (in a worker thread)."""
        text = text[:MAX_TEXT_CHARS]
        if not text.strip():
            return []
        predictions = await asyncio.to_thread(self._predict, text)
        out = [
            ExtractedEntity(
                name=str(p["text"]),
                label=str(p["label"]),
                start=int(p["start"]),
                end=int(p["end"]),
                score=float(p["score"]),
            )
            for p in predictions
            if str(p.get("text", "")).strip()
        ]
        return sorted(out, key=lambda e: e.start)


# --------------------------------------------------------------------------- LLM

_LLM_PROMPT = (
    "List the named entities in the text below. Answer with JSON only, in the form "
    '{{"entities": [{{"name": "...", "label": "..."}}]}}, using names exactly as written in the '
    "text and labels from: {labels}. At most {limit} entities.\n\nText:\n{text}"
)
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_llm_entities(answer: str, text: str, labels: Sequence[str]) -> list[ExtractedEntity]:
    """Read a model's JSON answer into entities located in ``text``.

    Entities whose name does not occur in the text are dropped (the model invented them).

    Raises:
        ExtractionError: when the answer holds no readable JSON object.
    """
    match = _JSON_OBJECT.search(answer or "")
    if match is None:
        raise ExtractionError("the model's answer holds no JSON object")
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        raise ExtractionError(f"the model's answer is not valid JSON: {exc}") from exc
    items = data.get("entities") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ExtractionError("the model's answer has no 'entities' list")
    allowed = {label.lower() for label in labels}
    lowered = text.lower()
    out: list[ExtractedEntity] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        name = str(item.get("name", "")).strip()
        label = str(item.get("label", "")).strip().lower()
        if not name or (allowed and label not in allowed):
            continue
        start = lowered.find(name.lower())
        if start < 0:
            continue
        raw_score = item.get("score", 0.8)
        score = float(raw_score) if isinstance(raw_score, int | float) else 0.8
        out.append(
            ExtractedEntity(
                text[start : start + len(name)],
                label,
                start,
                start + len(name),
                max(0.0, min(1.0, score)),
            )
        )
    return sorted(out, key=lambda e: e.start)


class LLMEntityExtractor:
    """Entity extraction by a chat model through litellm (any provider or local server).

    Args:
        model: A litellm model name (``"gpt-4o-mini"``, ``"openai/local"`` with ``api_base``...).
        labels: Entity labels to ask for.
        max_entities: Most entities asked for per text.
        completion_kwargs: Extra arguments for ``litellm.acompletion`` (``api_base``,
            ``temperature``, ``mock_response`` in tests, ...).

    Raises:
        ExtractionError: from :meth:`extract` when the call fails or the answer is unreadable
            (the graph builder then falls back to the rule-based extractor).

    Example:
        >>> extractor = LLMEntityExtractor(completion_kwargs={
        ...     "mock_response": '{"entities": [{"name": "Ana", "label": "person"}]}'})
    """

    def __init__(
        self,
        model: str = "gpt-4o-mini",
        labels: Sequence[str] | None = None,
        max_entities: int = 20,
        *,
        completion_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if max_entities < 1:
            raise InvalidInputError("max_entities must be positive")
        self.model = model
        self.labels: tuple[str, ...] = tuple(labels) if labels else DEFAULT_ENTITY_LABELS
        self.max_entities = max_entities
        self._kwargs = dict(completion_kwargs or {})

    async def extract(self, text: str) -> list[ExtractedEntity]:
        """Ask the model for the entities of ``text``."""
        text = text[:MAX_TEXT_CHARS]
        if not text.strip():
            return []
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        litellm = require("litellm", extra="llm", feature="LLMEntityExtractor")
        prompt = _LLM_PROMPT.format(
            labels=", ".join(self.labels), limit=self.max_entities, text=text
        )
        try:
            response = await litellm.acompletion(
                model=self.model,
                messages=[{"role": "user", "content": prompt}],
                **{"temperature": 0.0, **self._kwargs},
            )
            answer = response.choices[0].message.content or ""
        except Exception as exc:  # litellm raises many provider-specific types
            raise ExtractionError(f"the entity model call failed: {exc}") from exc
        return parse_llm_entities(answer, text, self.labels)[: self.max_entities]
