"""Episode summaries: extractive by default, LLM-written when a client is given.

A summary is what an episode is found by (it is embedded for semantic search) and what an agent
reads first. The default needs no model: it picks the session's most salient sentences, those
whose words recur across the conversation, and keeps them verbatim (with who said them), so an
exact value in a summary is always one that was actually said.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from sagewai.core._conversation import ChatMessage
from sagewai.core._text import keyword_terms

if TYPE_CHECKING:
    from sagewai.llm._base import LLMClient

__all__ = [
    "EpisodeSummarizer",
    "ExtractiveSummarizer",
    "LLMSummarizer",
    "extractive_summary",
    "summary_not_naming",
]

logger = logging.getLogger("sagewai.context.episodes")

_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
_STOPWORDS = frozenset(
    """
    a about above after again all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just let me more most my myself no nor not now of off on once
    only or other our ours ourselves out over own same she should so some such than that
    the their theirs them themselves then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you
    your yours yourself yourselves oh yeah yes ok okay hey hi hello thanks thank really so
    much like well got get im ive dont thats
    """.split()  # noqa: SIM905 - a word list reads best as prose
)


@runtime_checkable
class EpisodeSummarizer(Protocol):
    """Writes the summary of a session."""

    async def summarize(self, messages: Sequence[ChatMessage]) -> str:
        """A short summary of ``messages`` (never empty for a non-empty session)."""
        ...


@dataclass(frozen=True, slots=True)
class _Sentence:
    position: int
    text: str
    weights: dict[str, float]
    scale: float

    def score(self, covered: set[str]) -> float:
        return self.scale * sum(
            weight / 3 if word in covered else weight for word, weight in self.weights.items()
        )


def _content_words(text: str) -> list[str]:
    return [t for t in keyword_terms(text, limit=10_000) if len(t) > 2 and t not in _STOPWORDS]


def extractive_summary(
    messages: Sequence[ChatMessage], *, max_sentences: int = 3, max_chars: int = 600
) -> str:
    """Pick the ``max_sentences`` most salient sentences of a session, in their original order.

    A sentence's salience is the sum, over its distinct content words, of how many messages use
    that word, divided by the square root of its length (so long sentences do not win by length
    alone); numbers and capitalised names count double because they carry the specifics, and
    questions count less than statements (the answer states the fact). Sentences are picked
    greedily, and words an earlier pick already covers count a third, so the summary spans the
    session's topics. Ties go to the earlier sentence. Each kept sentence is prefixed with its
    speaker.

    Example:
        >>> from sagewai.core import ChatMessage
        >>> extractive_summary([
        ...     ChatMessage(role="user", speaker="Alice", content="Hi Bob!"),
        ...     ChatMessage(role="user", speaker="Bob", content="Hey! How was Lisbon?"),
        ...     ChatMessage(role="user", speaker="Alice",
        ...                 content="Lisbon was great. We saw Belem."),
        ... ], max_sentences=1)
        'Alice: Lisbon was great.'
    """
    spoken = [m for m in messages if not m.is_empty]
    if not spoken:
        return ""
    document_frequency: Counter[str] = Counter()
    for message in spoken:
        document_frequency.update(set(_content_words(message.content)))
    candidates: list[_Sentence] = []
    for message in spoken:
        who = message.speaker_name or message.role
        for piece in _SENTENCE_BREAK.split(message.content):
            sentence = piece.strip()
            words = _content_words(sentence)
            if not sentence or not words:
                continue
            raw = set(re.findall(r"\b\w+\b", sentence))
            specifics = {w.lower() for w in raw if w[:1].isupper() or w.isdigit()}
            weights = {
                w: document_frequency[w] * (2.0 if w in specifics else 1.0) for w in set(words)
            }
            # A question asks for a fact; the answer states it.
            damping = 0.6 if sentence.endswith("?") else 1.0
            norm = math.sqrt(len(words) + 1)
            candidates.append(
                _Sentence(len(candidates), f"{who}: {sentence}", weights, damping / norm)
            )
    if not candidates:
        return spoken[0].line()[:max_chars]
    covered: set[str] = set()
    picked: list[_Sentence] = []
    for _ in range(min(max_sentences, len(candidates))):
        # Greedy coverage: words a picked sentence already said count a third, so the summary
        # moves on to the session's other topics instead of repeating the first one.
        best = max(
            (c for c in candidates if c not in picked),
            key=lambda c: (c.score(covered), -c.position),
        )
        picked.append(best)
        covered.update(best.weights)
    chosen = [c.text for c in sorted(picked, key=lambda c: c.position)]
    summary = ""
    for text in chosen:
        extended = f"{summary} {text}".strip()
        if len(extended) > max_chars:
            break
        summary = extended
    return summary or chosen[0][:max_chars]


async def summary_not_naming(
    summarizer: EpisodeSummarizer,
    kept: Sequence[ChatMessage],
    names: Callable[[str], bool],
) -> str:
    """The summary of what a redaction left of an episode (``kept``, at least one message).

    The summarizer writes it; when it writes nothing, or its text still ``names`` what was
    removed (an LLM may re-introduce a name from its own context), the extractive summary of
    ``kept`` replaces it, else the first line. The caller decides whether even that may stand.
    """
    summary = await summarizer.summarize(kept)
    if not summary or names(summary):
        summary = extractive_summary(kept) or kept[0].line()[:600]
    return summary


class ExtractiveSummarizer:
    """The default summarizer: salient sentences kept verbatim (see :func:`extractive_summary`).

    Args:
        max_sentences: How many sentences a summary keeps.
        max_chars: Upper bound on the summary's length.

    Example:
        >>> import asyncio
        >>> from sagewai.core import ChatMessage
        >>> asyncio.run(ExtractiveSummarizer().summarize(
        ...     [ChatMessage(role="user", content="We ship version 2.1 on Friday.")]))
        'user: We ship version 2.1 on Friday.'
    """

    def __init__(self, *, max_sentences: int = 3, max_chars: int = 600) -> None:
        self.max_sentences = max_sentences
        self.max_chars = max_chars

    async def summarize(self, messages: Sequence[ChatMessage]) -> str:
        return extractive_summary(
            messages, max_sentences=self.max_sentences, max_chars=self.max_chars
        )


_LLM_PROMPT = (
    "Summarise this conversation for a memory an assistant will search later. Write at most "
    "{words} words in plain prose: who discussed what, decisions, plans, preferences and facts "
    "learned. Keep names, dates, numbers, ids and other exact values verbatim. No preamble."
)


class LLMSummarizer:
    """Summaries written by a model through the LLM layer, extractive when the model fails.

    A model writes better summaries than sentence picking (it can say "they agreed to move the
    launch to May" where no single sentence does), but an episode must be saved even offline:
    any model failure (unreachable, timeout, empty answer) falls back to
    :func:`extractive_summary`, logged once per summarizer.

    Args:
        client: Any :class:`~sagewai.llm.LLMClient` (``LiteLLMClient``, ``ScriptedLLM``, ...).
        max_words: The length asked of the model.
        max_input_chars: The transcript is cut to this many characters (the end is kept).
        timeout: Seconds per model call.

    Example:
        >>> import asyncio
        >>> from sagewai.testing import ScriptedLLM
        >>> summarizer = LLMSummarizer(ScriptedLLM(["Alice plans a May launch."]))
        >>> asyncio.run(summarizer.summarize([ChatMessage(content="Launch in May?")]))
        'Alice plans a May launch.'
    """

    def __init__(
        self,
        client: LLMClient,
        *,
        max_words: int = 80,
        max_input_chars: int = 24_000,
        timeout: float | None = 60.0,
    ) -> None:
        self.client = client
        self.max_words = max_words
        self.max_input_chars = max_input_chars
        self.timeout = timeout
        self._warned = False

    async def summarize(self, messages: Sequence[ChatMessage]) -> str:
        transcript = "\n".join(m.line() for m in messages if not m.is_empty)
        transcript = transcript[-self.max_input_chars :]
        try:
            response = await self.client.complete(
                [
                    {"role": "system", "content": _LLM_PROMPT.format(words=self.max_words)},
                    {"role": "user", "content": transcript},
                ],
                timeout=self.timeout,
            )
            text = " ".join((response.content or "").split())
            if not text:
                raise ValueError("the model returned an empty summary")
            return text[: self.max_words * 12]
        except Exception as exc:  # a summary must never stop an episode from being saved
            if not self._warned:
                self._warned = True
                logger.warning("LLM summary failed, using the extractive summary: %s", exc)
            return extractive_summary(messages)
