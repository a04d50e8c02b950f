"""Two-stage extraction: a cheap stage as each message arrives, a deferred stage in batches.

Why two stages: the bridge stores every message at once and learns from it at once, but an
extractor may also have an expensive part (a model) that it should run a batch of turns at a
time. A :class:`TwoStageExtractor` says how its work splits:

* ``extract_at_once(text, context)``: what it finds now, cheaply, and whether the deferred
  stage must read the text too (:class:`AtOnceFacts`);
* ``extract_deferred(text, context, at_once)``: what the expensive part adds, given what the
  cheap stage already found (it is stored already: do not return it again).

:class:`~sagewai.extraction.RuleBasedFactExtractor` finds everything at once and never defers;
:class:`~sagewai.extraction.HybridFactExtractor` finds the rules' facts at once and defers to its
model where the rules are unsure; :class:`~sagewai.extraction.LLMFactExtractor` finds nothing at
once and defers every text. Your own extractor joins the cheap stage by implementing the two
methods and the two flags; a plain :class:`~sagewai.extraction.FactExtractor` (only
``extract``) is run whole in the deferred stage (:func:`two_stages` adapts it).

Example:
    >>> import asyncio
    >>> from sagewai.extraction import ExtractedFact, ExtractionContext
    >>> class Shouting:
    ...     extracts_at_once = True
    ...     extracts_deferred = False
    ...     async def extract(self, text, context=None):
    ...         return (await self.extract_at_once(text, context)).facts
    ...     async def extract_at_once(self, text, context=None):
    ...         fact = ExtractedFact(content=text.upper(), fact_type="general", confidence=0.5)
    ...         return AtOnceFacts([fact], defer=False)
    ...     async def extract_deferred(self, text, context, at_once):
    ...         return []
    >>> isinstance(Shouting(), TwoStageExtractor)
    True
    >>> asyncio.run(two_stages(Shouting()).extract_at_once("hi")).facts[0].content
    'HI'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from sagewai.extraction._base import ExtractedFact, ExtractionContext, FactExtractor

__all__ = ["AtOnceFacts", "DeferredOnly", "TwoStageExtractor", "two_stages"]


@dataclass(frozen=True, slots=True)
class AtOnceFacts:
    """What the cheap stage found in a message, and whether the deferred stage must read it."""

    facts: list[ExtractedFact] = field(default_factory=list)
    defer: bool = False


@runtime_checkable
class TwoStageExtractor(Protocol):
    """A :class:`FactExtractor` whose work splits into an at-once and a deferred stage."""

    extracts_at_once: bool
    """Whether the at-once stage may find facts (the deferred stage's facts are then numbered
    after its own, so replaying a message gives every fact the same id)."""
    extracts_deferred: bool
    """Whether the deferred stage may ever run (``False``: every message is done at once)."""

    async def extract(
        self, text: str, context: ExtractionContext | None = None
    ) -> list[ExtractedFact]:
        """Both stages at once: every fact of ``text``."""
        ...

    async def extract_at_once(
        self, text: str, context: ExtractionContext | None = None
    ) -> AtOnceFacts:
        """The cheap stage: facts found now, and whether the deferred stage must read ``text``."""
        ...

    async def extract_deferred(
        self, text: str, context: ExtractionContext | None, at_once: Sequence[ExtractedFact]
    ) -> list[ExtractedFact]:
        """The expensive stage: facts the at-once facts do not state already."""
        ...


class DeferredOnly:
    """A plain :class:`FactExtractor` as two stages: nothing at once, everything deferred.

    Args:
        extractor: The extractor run whole in the deferred stage.
    """

    extracts_at_once = False
    extracts_deferred = True

    def __init__(self, extractor: FactExtractor) -> None:
        self.extractor = extractor

    def __repr__(self) -> str:
        return f"DeferredOnly({self.extractor!r})"

    async def extract(
        self, text: str, context: ExtractionContext | None = None
    ) -> list[ExtractedFact]:
        """The extractor's facts."""
        return await self.extractor.extract(text, context)

    async def extract_at_once(
        self, text: str, context: ExtractionContext | None = None
    ) -> AtOnceFacts:
        """Nothing now; the deferred stage reads every text."""
        return AtOnceFacts(defer=True)

    async def extract_deferred(
        self, text: str, context: ExtractionContext | None, at_once: Sequence[ExtractedFact]
    ) -> list[ExtractedFact]:
        """The extractor's facts of ``text``."""
        return await self.extractor.extract(text, context)


def two_stages(extractor: FactExtractor) -> TwoStageExtractor:
    """The extractor's own two stages, or :class:`DeferredOnly` for a plain extractor."""
    if isinstance(extractor, TwoStageExtractor):
        return extractor
    return DeferredOnly(extractor)
