"""Entity extractors: find the named things in a message (people, places, organisations, ...).

Three implementations behind one protocol, :class:`EntityExtractor`:

* :class:`RuleBasedEntityExtractor`, the offline default: patterns and small gazetteers for
  names, organisations, places, technologies, dates and exact values (ids, paths, versions, URLs,
  amounts, kept verbatim). No model, no dependency.
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
    "RuleBasedEntityExtractor",
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
        >>> extractor = RuleBasedEntityExtractor()
        >>> found = asyncio.run(extractor.extract("I moved to Berlin in May 2023."))
        >>> [(e.name, e.label) for e in found]
        [('Berlin', 'location'), ('May 2023', 'date')]
    """

    async def extract(self, text: str) -> list[ExtractedEntity]:
        """Mentions in ``text``, in order of appearance."""
        ...


# --------------------------------------------------------------------------- rule based


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_TECHNOLOGIES = _words(
    "python javascript typescript java rust golang c++ c# ruby php kotlin scala haskell elixir "
    "sql postgresql postgres mysql sqlite mongodb redis kafka rabbitmq elasticsearch docker "
    "kubernetes k8s terraform ansible aws azure gcp linux ubuntu debian macos ios android react "
    "vue angular svelte django flask fastapi node.js nodejs deno numpy pandas pytorch tensorflow "
    "keras scikit-learn git github gitlab vim neovim emacs vscode excel photoshop figma slack jira "
    "notion chatgpt gpt-4 gpt-4o claude llama qdrant neo4j nebulagraph spark hadoop airflow "
    "graphql grpc html css bash zsh powershell iphone ipad macbook playstation xbox kindle "
    "instagram tiktok youtube spotify netflix whatsapp zoom pytest jupyter latex wordpress"
)
_AMBIGUOUS_TECH = _words(
    "react spark rust zoom slack notion excel git go swift ruby java keras flask spring vue "
    "deno kindle spotify netflix youtube instagram tiktok whatsapp bash latex"
)
_ORGANISATIONS = _words(
    "Google Microsoft Apple Amazon Meta Facebook OpenAI Anthropic IBM Intel Nvidia NVIDIA Tesla "
    "Netflix Spotify Uber Airbnb Twitter Stripe Oracle Salesforce Adobe Samsung Sony Walmart "
    "Starbucks Harvard Stanford MIT Oxford Cambridge NASA UNICEF Greenpeace Reuters BBC CNN IKEA "
    "Toyota BMW Mercedes Volkswagen Boeing Airbus Disney Pixar Nintendo Deloitte McKinsey"
)
_PLACES = _words(
    "America USA US UK England Scotland Ireland Wales France Germany Spain Portugal Italy Greece "
    "Netherlands Belgium Switzerland Austria Sweden Norway Denmark Finland Poland Ukraine Russia "
    "Turkey Egypt Morocco Nigeria Kenya Ethiopia India China Japan Korea Vietnam Thailand "
    "Indonesia Philippines Australia Canada Mexico Brazil Argentina Chile Peru Colombia Cuba "
    "Israel Iran Iraq Sweden Europe Asia Africa Paris London Berlin Madrid Rome Lisbon Amsterdam "
    "Brussels Vienna Prague Dublin Edinburgh Stockholm Oslo Copenhagen Helsinki Warsaw Athens "
    "Istanbul Moscow Kyiv Cairo Tokyo Kyoto Osaka Seoul Beijing Shanghai Singapore Bangkok Delhi "
    "Mumbai Sydney Melbourne Toronto Vancouver Montreal Boston Chicago Seattle Denver Austin "
    "Dallas Houston Miami Atlanta Portland Phoenix Philadelphia Detroit Nashville Brooklyn "
    "Manhattan Hawaii California Texas Florida Oregon Washington Alaska Colorado Arizona Nevada "
    "Utah Georgia Ohio Michigan Illinois Massachusetts Virginia Carolina Minnesota Wisconsin"
)
_PLACE_PHRASES = (
    "New York",
    "Los Angeles",
    "San Francisco",
    "Las Vegas",
    "New Zealand",
    "South Africa",
    "Hong Kong",
    "Mexico City",
    "New Orleans",
    "San Diego",
)
_MONTHS = (
    "January February March April May June July August September October November "
    "December Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec"
)
_STOP = _words(
    "I I'm I've I'd I'll Im Ive A An The This That These Those There Here It It's Its He She We "
    "They You Your Yours My Mine Our Me Him Her His Them Their What When Where Why How Who Which "
    "Whose And But Or So If Then Than Because Also Just Yes No Not Nope Yeah Yep Ok Okay Oh Wow "
    "Hey Hi Hello Thanks Thank Sure Great Good Nice Cool Awesome Amazing Well Really Totally "
    "Absolutely Definitely Congrats Congratulations Sorry Please Let Lets Let's Do Does Did Is "
    "Are Was Were Be Been Have Has Had Can Could Will Would Should Might Must May Maybe Some Any "
    "All Every Each Many Much More Most Other Another One Two Three First Last Next Today "
    "Tomorrow Yesterday Tonight Monday Tuesday Wednesday Thursday Friday Saturday Sunday Mr Mrs "
    "Ms Dr Haha Lol Omg Btw Aw Aww Ah Hmm Um Uh Dear Happy Love See Look Anyway Speaking Yup "
    "Bye Goodbye Cheers Welcome Agreed Exactly True Right Glad Sounds Keep Take Enjoy Have Hope "
    "The BTW FYI OK OMG LOL IMO TBH ASAP RSVP DIY Woohoo Yay Yikes Whoa Gosh Wait Sweet Cute "
    "Lovely "
    "Beautiful Congrats Thankfully Luckily Honestly Seriously Anyway Also Plus"
) | _words(_MONTHS)
_ORG_SUFFIX = (
    r"(?:Inc|Corp|Corporation|LLC|Ltd|GmbH|Company|Co|University|College|School|Institute"
    r"|Hospital|Bank|Foundation|Group|Labs|Agency|Association|Club|Society|Center|Centre"
    r"|Museum|Church|Studio|Studios|Academy|Team|Party|Council|Network)"
)
_CAP = r"(?:[A-Z][\w'’&.-]*[\w]|[A-Z])"

_VALUE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s\"'<>]+[^\s\"'<>.,;:!?)]"),
    re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
    re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"),
    re.compile(r"(?<![\w/])(?:~|\.{1,2})?(?:/[\w.@-]+){2,}/?"),
    re.compile(r"\b[A-Za-z]:\\(?:[\w .-]+\\)*[\w .-]+\.\w+"),
    re.compile(r"\bv?\d+\.\d+\.\d+(?:[-+][\w.]+)?\b|\bv\d+\.\d+\b"),
    re.compile(r"[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|bn|million|billion))?\b"),
    re.compile(r"\b\d[\d,]*(?:\.\d+)?\s?(?:USD|EUR|GBP|dollars|euros|pounds)\b"),
    re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b"),
    re.compile(r"\b[A-Z]{2,}[-_]\d{2,}\b"),
)
_MONTH = r"(?:" + "|".join(_MONTHS.split()) + r")\.?"
_DATE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b"),
    re.compile(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b"),
    re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?:,?\s+\d{{4}})?\b"),
    re.compile(rf"\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b"),
    re.compile(rf"\b{_MONTH}\s+\d{{4}}\b"),
    re.compile(
        r"(?:(?<=\bin )|(?<=\bof )|(?<=\bby )|(?<=\bsince )|(?<=\bfrom )|(?<=\buntil ))"
        r"(?:19|20)\d{2}\b"
    ),
)
_TECH_PATTERN = re.compile(
    r"(?<![\w.+#-])("
    + "|".join(re.escape(t) for t in sorted(_TECHNOLOGIES, key=len, reverse=True))
    + r")(?![\w+#]|\.\w)",
    re.IGNORECASE,
)
_ORG_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(rf"\b(?:{_CAP}\s+){{0,4}}{_ORG_SUFFIX}\b(?:\s+of\s+{_CAP}(?:\s+{_CAP})?)?"),
    re.compile(rf"\b(?:University|College|Bank|Museum|Institute)\s+of\s+{_CAP}(?:\s+{_CAP})?"),
)
_CAPITALISED = re.compile(rf"{_CAP}(?:\s+(?:of\s+|de\s+|van\s+|von\s+)?{_CAP})*")
_PLACE_CUE = re.compile(
    r"\b(?:in|to|from|near|visit|visited|visiting|around|across|toward|towards)\s+$", re.IGNORECASE
)
_ORG_CUE = re.compile(
    r"\b(?:work|works|worked|working|job|intern|interning|employed)\s+(?:at|for|with)\s+$"
    r"|\b(?:joined|join|at)\s+$",
    re.IGNORECASE,
)
_PERSON_CUE = re.compile(
    r"\b(?:friend|friends|sister|brother|mom|mother|dad|father|son|daughter|wife|husband|"
    r"partner|boyfriend|girlfriend|cousin|aunt|uncle|boss|colleague|coworker|named|called|"
    r"with|and|met|meet|told|tell|asked|ask|thanks|thank|hey|hi|dear)\s+$",
    re.IGNORECASE,
)
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+|[\n\"“(]\s*)$")


class RuleBasedEntityExtractor:
    """The offline default: patterns and gazetteers, no model.

    Exact values (URLs, UUIDs, e-mails, file paths, versions, amounts, IP addresses, ticket ids)
    and dates come from patterns; technologies, well-known organisations and places from small
    word lists; other capitalised names from their context ("my friend Ana", "moved to Lyon",
    "works at Initech"). Spans never overlap: a more specific kind wins.

    Args:
        labels: Keep only these labels (default: all).
        min_score: Drop mentions scored below this.

    Example:
        >>> import asyncio
        >>> found = asyncio.run(RuleBasedEntityExtractor().extract(
        ...     "My friend Ana works at Initech Labs and uses PostgreSQL 15.2.1."))
        >>> [(e.name, e.label) for e in found]  # doctest: +NORMALIZE_WHITESPACE
        [('Ana', 'person'), ('Initech Labs', 'organization'),
         ('PostgreSQL', 'technology'), ('15.2.1', 'value')]
    """

    def __init__(self, labels: Sequence[str] | None = None, min_score: float = 0.0) -> None:
        self._labels = frozenset(labels) if labels is not None else None
        self._min_score = min_score

    async def extract(self, text: str) -> list[ExtractedEntity]:
        """Mentions in ``text``, in order of appearance."""
        return self.extract_sync(text)

    def extract_sync(self, text: str) -> list[ExtractedEntity]:
        """The same as :meth:`extract`, without an event loop (pure and fast)."""
        text = text[:MAX_TEXT_CHARS]
        found: list[ExtractedEntity] = []

        def add(start: int, end: int, label: str, score: float) -> None:
            name = text[start:end].strip().rstrip(".,;:!?")
            if not name:
                return
            start = text.index(name, start)
            found.append(ExtractedEntity(name, label, start, start + len(name), score))

        for pattern in _VALUE_PATTERNS:
            for match in pattern.finditer(text):
                add(match.start(), match.end(), "value", 0.95)
        for pattern in _DATE_PATTERNS:
            for match in pattern.finditer(text):
                add(match.start(), match.end(), "date", 0.9)
        for match in _TECH_PATTERN.finditer(text):
            word = match.group(1)
            if word.lower() in _AMBIGUOUS_TECH and not word[0].isupper():
                continue  # "react", "spark", "rust", "zoom" are words first, products second
            add(match.start(1), match.end(1), "technology", 0.85)
        for pattern in _ORG_PATTERNS:
            for match in pattern.finditer(text):
                add(match.start(), match.end(), "organization", 0.8)
        for phrase in _PLACE_PHRASES:
            for match in re.finditer(rf"\b{re.escape(phrase)}\b", text):
                add(match.start(), match.end(), "location", 0.85)
        for match in _CAPITALISED.finditer(text):
            self._capitalised(text, match.start(), match.end(), add)
        return self._resolve(found)

    def _capitalised(self, text: str, start: int, end: int, add: Any) -> None:
        tokens = text[start:end].split()
        # Drop leading stop words ("Thanks Mel" -> "Mel", "The Louvre" keeps "Louvre").
        while tokens and _POSSESSIVE.sub("", tokens[0]) in _STOP:
            start = text.index(tokens[0], start) + len(tokens[0])
            tokens = tokens[1:]
        while tokens and _POSSESSIVE.sub("", tokens[-1]) in _STOP:
            tokens = tokens[:-1]
        if tokens and _POSSESSIVE.search(tokens[-1]):
            tokens[-1] = _POSSESSIVE.sub("", tokens[-1])
        if not tokens:
            return
        start = text.index(tokens[0], start)
        end = text.index(tokens[-1], start) + len(tokens[-1])
        name = text[start:end]
        before = text[max(0, start - 40) : start]
        if name in _ORGANISATIONS:
            add(start, end, "organization", 0.85)
        elif name in _PLACES:
            add(start, end, "location", 0.85)
        elif _ORG_CUE.search(before):
            add(start, end, "organization", 0.7)
        elif _PLACE_CUE.search(before):
            add(start, end, "location", 0.7)
        elif _PERSON_CUE.search(before):
            add(start, end, "person", 0.7)
        elif name.isupper():
            if 2 <= len(name) <= 6:
                add(start, end, "organization", 0.5)
        elif len(tokens) <= 3 and (
            len(tokens) > 1 or not _SENTENCE_START.search(text[max(0, start - 3) : start])
        ):
            add(start, end, "person", 0.55)

    def _resolve(self, found: list[ExtractedEntity]) -> list[ExtractedEntity]:
        rank = {"value": 0, "date": 1, "technology": 2, "organization": 3, "location": 4}
        ordered = sorted(found, key=lambda e: (rank.get(e.label, 5), -(e.end - e.start), e.start))
        taken: list[ExtractedEntity] = []
        for entity in ordered:
            if self._labels is not None and entity.label not in self._labels:
                continue
            if entity.score < self._min_score:
                continue
            if any(entity.start < t.end and t.start < entity.end for t in taken):
                continue
            taken.append(entity)
        return sorted(taken, key=lambda e: e.start)


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
