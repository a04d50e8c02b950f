"""What the bridge keeps about a message: the accepted turn (what the journal holds), the
recorded turn waiting for extraction, and the bridge's counters. The records' deterministic ids
are in :mod:`sagewai.core._ids`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from sagewai.core._conversation import ChatMessage

if TYPE_CHECKING:
    from sagewai.context._reconcile import WriteOutcome
    from sagewai.extraction._base import (
        ExtractedFact,
        ExtractionContext,
    )


EXTRACTION_ROLES = {"user", "assistant", "system", "tool"}
ROLE_FOR_EXTRACTION = {"developer": "system", "function": "tool"}
MAX_SESSIONS = 10_000
RETRY_DELAYS = (0.1, 0.5, 2.0)
MODEL_FACT_INDEX = 1000
"""Fact indexes of a hybrid extractor's model facts start here (the rules' facts from 0)."""
SIBLING_JOURNALS = 256
"""Default journals of one project in one folder: the bridges (processes) that may write it at
once. A bridge takes the first free one; one that starts adopts what the gone ones left."""
RECORD_DRAIN = 256


CONTEXT_MESSAGE_CHARS = 1000
"""Messages up to this long get a context record (the end of the turn before them)."""
CONTEXT_PREFIX_CHARS = 300
"""How much of the turn before a message its context record carries (its end, cut at a word)."""


def context_prefix(previous: str, limit: int = CONTEXT_PREFIX_CHARS) -> str:
    """The end of the turn before a message, at most ``limit`` characters, cut at a word.

    Example:
        >>> context_prefix("Did you finally go to the pottery class on Friday?", 30)
        'the pottery class on Friday?'
    """
    text = previous.strip()
    if len(text) > limit:
        start = len(text) - limit
        tail = text[start:]
        space = tail.find(" ")
        if not text[start - 1].isspace() and 0 <= space < limit // 2:
            tail = tail[space + 1 :]  # the cut fell inside a word: drop its end
        text = tail
    return text.strip()


class BridgeTurn(BaseModel):
    """An accepted message with everything needed to process it later (what the journal keeps)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    message: ChatMessage
    session_id: str
    user_id: str | None = None
    message_id: str
    turn_index: int = Field(ge=0)
    received_at: datetime
    tags: tuple[str, ...] = ()

    @property
    def timestamp(self) -> datetime:
        """When the message was said: its own timestamp, else when the bridge received it."""
        return self.message.timestamp or self.received_at

    @property
    def entry_id(self) -> str:
        """The journal id: one per (session, message)."""
        return f"{self.session_id}\x1f{self.message_id}"


@dataclass(slots=True)
class BridgeStats:
    """Counters of what the bridge did since it was created."""

    messages_accepted: int = 0
    messages_recorded: int = 0
    """Messages whose verbatim record and rule facts are stored (the record stage)."""
    messages_processed: int = 0
    """Messages through both stages (record and extract)."""
    messages_replayed: int = 0
    facts_extracted: int = 0
    facts_added: int = 0
    facts_updated: int = 0
    facts_reinforced: int = 0
    echoes_suppressed: int = 0
    already_stored: int = 0
    facts_invalid: int = 0
    extraction_failures: int = 0
    batches_failed: int = 0
    graph_turns: int = 0
    """Messages the graph builder read (with a graph builder)."""
    graph_failures: int = 0
    """Messages the graph builder failed on (logged, never raised)."""

    @property
    def facts_stored(self) -> int:
        """New fact records written (added or updated; repeats that reinforced a fact and
        verbatim messages are not counted)."""
        return self.facts_added + self.facts_updated

    def count(self, extracted: int, outcome: WriteOutcome) -> None:
        """Add what one write did: ``extracted`` facts read, ``outcome``'s decisions."""
        self.facts_extracted += extracted
        self.facts_added += outcome.added
        self.facts_updated += outcome.updated
        self.facts_reinforced += outcome.reinforced
        self.echoes_suppressed += outcome.echoes
        self.already_stored += outcome.already_stored


@dataclass(slots=True)
class PendingTurn:
    """A recorded turn: its extraction context, the at-once stage's facts, and whether the
    deferred stage still has to read it."""

    turn: BridgeTurn
    context: ExtractionContext | None
    rule_facts: list[ExtractedFact]
    deferred: bool
