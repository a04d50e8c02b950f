"""What a turn becomes in the store: its verbatim record, its context record, its candidate facts.

Pure record building (no store is read or written here): the record stage and the deferred
extraction stage call these, the reconciling writer stores what they return.

* the **verbatim record** (kind ``message``, id :func:`message_record_id`): the message as said,
  in parts when it is longer than a record holds;
* the **context record** (kind ``message``, id :func:`context_record_id`): a short message with
  the end of the turn before it (what it answers), searchable as the message's own source;
* **candidate facts**: an extractor's facts of the message with their provenance (session,
  message, turn, role, speaker, time, extractor), deterministic ids (:func:`fact_id_for`) and
  relative dates grounded on the day they were said.

An assistant's records and facts are marked (``REPLY_MARK``): search weighs them below the
user's own words.

Only the user sets the rules (:mod:`sagewai.core._profile`): a fact an extractor marked for
the standing profile becomes a profile entry (tagged ``profile``) only when the turn is the
user's own; from any other role (the assistant, a tool, a system message) the mark is dropped
and the fact is kept as plain memory. A caller's ``tags`` never carry the profile tag in.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pydantic import JsonValue, ValidationError

from sagewai.context._ranking import CONTEXT_MARK, REPLY_MARK
from sagewai.context._reconcile import Candidate, SharedVector
from sagewai.context.bridge._sessions import Said
from sagewai.context.bridge._settings import BridgeSettings
from sagewai.context.bridge._sharing import holds_whole, restating_fact
from sagewai.context.bridge._turns import (
    BridgeStats,
    BridgeTurn,
    context_prefix,
)
from sagewai.core import _records as records
from sagewai.core._ids import context_record_id, fact_id_for, message_record_id
from sagewai.core._profile import PROFILE_KEY, PROFILE_TAG, ProfileKind
from sagewai.core._records import Fact, FactKind, Provenance, utcnow
from sagewai.core._scope import ContextScope
from sagewai.extraction._base import ExtractedFact, ExtractionContext

__all__ = ["RecordBuilder", "split_text"]

logger = logging.getLogger("sagewai.context.bridge")


def split_text(text: str, limit: int) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters, cut at a space where one is near.

    Example:
        >>> split_text("one two three", 8)
        ['one two ', 'three']
    """
    parts: list[str] = []
    while len(text) > limit:
        cut = text.rfind(" ", limit - limit // 10, limit)
        cut = limit if cut <= 0 else cut + 1
        parts.append(text[:cut])
        text = text[cut:]
    parts.append(text)
    return parts


def _plain_tags(turn: BridgeTurn) -> tuple[str, ...]:
    """The turn's tags without the profile tag: only :func:`_standing` sets it."""
    return tuple(tag for tag in turn.tags if tag != PROFILE_TAG)


def _standing(fact: Fact, role: str) -> Fact:
    """``fact`` as a profile entry when the user said it and an extractor marked it so; from
    any other role, the mark dropped (plain memory, see the module)."""
    mark = fact.metadata.get(PROFILE_KEY)
    if mark is None:
        return fact
    metadata = {k: v for k, v in fact.metadata.items() if k != PROFILE_KEY}
    if role != "user" or mark not in tuple(ProfileKind):
        return fact.model_copy(update={"metadata": metadata})
    return fact.model_copy(update={"tags": (*fact.tags, PROFILE_TAG)})


class RecordBuilder:
    """Builds the records of a turn for one project (see the module).

    Args:
        project_id: The project the records belong to.
        org_id: Its organisation, if any.
        settings: The bridge's settings (scope, roles, context records).
        stats: The bridge's counters (records that fail validation are skipped and counted).
        extractor: The name recorded for facts whose extractor names none.
    """

    def __init__(
        self,
        *,
        project_id: str,
        org_id: str | None,
        settings: BridgeSettings,
        stats: BridgeStats,
        extractor: str,
    ) -> None:
        self.project_id = project_id
        self.org_id = org_id
        self.settings = settings
        self.stats = stats
        self.extractor = extractor

    def scope_of(self, turn: BridgeTurn) -> ContextScope:
        """Where a turn's records go: the bridge's scope, else the user's, else the project's."""
        return self.settings.scope or (
            ContextScope.USER if turn.user_id is not None else ContextScope.PROJECT
        )

    def source(self, turn: BridgeTurn, *, speaker: str | None, extractor: str) -> Provenance:
        """The provenance of a record drawn from ``turn``."""
        return Provenance(
            session_id=turn.session_id,
            message_id=turn.message_id,
            turn_index=turn.turn_index,
            role=turn.message.role,
            speaker=speaker,
            timestamp=turn.timestamp,
            extractor=extractor,
        )

    def verbatim(self, turn: BridgeTurn) -> list[Fact]:
        """The verbatim record of a message (in parts when it is longer than a record holds)."""
        parts = split_text(turn.message.content, records.MAX_CONTENT_CHARS)
        source = self.source(turn, speaker=turn.message.speaker_name, extractor="verbatim")
        reply: dict[str, JsonValue] = {REPLY_MARK: True} if turn.message.role == "assistant" else {}
        out: list[Fact] = []
        for part, content in enumerate(parts):
            if not content.strip():
                continue
            split: dict[str, JsonValue] = (
                {"part": part, "parts": len(parts)} if len(parts) > 1 else {}
            )
            record_id = message_record_id(self.project_id, turn.session_id, turn.message_id, part)
            record = self._message(turn, record_id, content, {**split, **reply}, source)
            if record is not None:
                out.append(record)
        return out

    def _message(
        self,
        turn: BridgeTurn,
        record_id: str,
        content: str,
        metadata: dict[str, JsonValue],
        source: Provenance,
    ) -> Fact | None:
        """A record of kind ``message`` drawn from ``turn`` (``None``, counted, when invalid)."""
        try:
            return Fact(
                id=record_id,
                project_id=self.project_id,
                org_id=self.org_id,
                scope=self.scope_of(turn),
                user_id=turn.user_id,
                session_id=turn.session_id,
                kind=FactKind.MESSAGE,
                content=content,
                tags=_plain_tags(turn),
                metadata=metadata,
                sources=(source,),
                created_at=min(turn.timestamp, utcnow()),
                valid_from=turn.timestamp,
            )
        except (ValidationError, ValueError) as exc:
            self.stats.facts_invalid += 1
            logger.warning("message %s: a record could not be built: %s", turn.message_id, exc)
            return None

    def context(self, turn: BridgeTurn, previous: Said | None) -> Fact | None:
        """The message with the end of the turn before it: what it answers or refers to.

        A reply such as "Yes, last Friday" says little by itself; with the question before it,
        search finds it by the question's words. The record is searchable as the message's own
        source (same provenance, so it is fused with the message and never takes a place of
        another source) and ranks with :attr:`~sagewai.SearchConfig.context_weight`. Only short
        messages get one (a long message says what it means by itself); ``None`` when there is
        no earlier turn to add.
        """
        settings = self.settings
        text = turn.message.content
        if (
            not settings.context_records
            or previous is None
            or previous[0] not in settings.roles
            or previous[0] not in settings.context_roles
            or previous[1] == text  # the message again (a replay): nothing before it to add
            or len(text) > settings.context_max_chars
        ):
            return None
        before = context_prefix(previous[1])
        if not before:
            return None
        source = self.source(turn, speaker=turn.message.speaker_name, extractor="context")
        metadata: dict[str, JsonValue] = {CONTEXT_MARK: len(before) + 1}
        if turn.message.role == "assistant":
            metadata[REPLY_MARK] = True
        record_id = context_record_id(self.project_id, turn.session_id, turn.message_id)
        return self._message(turn, record_id, f"{before}\n{text}", metadata, source)

    def context_vector(
        self, around: Fact, message: Fact, previous: str, previous_text: str
    ) -> SharedVector | None:
        """The vector a context record shares: its message's and the turn before's
        (``previous``, its record id; ``previous_text``, its words), weighted by the characters
        of each it holds; ``None`` (the record is embedded) when the record holds only the end
        of the turn before (:func:`._sharing.holds_whole`)."""
        mark = around.metadata.get(CONTEXT_MARK)
        before = mark - 1 if isinstance(mark, int) and mark > 0 else 0
        if not self.settings.share_vectors or not holds_whole(before, previous_text):
            return None
        return SharedVector(((message.id, float(len(message.content))), (previous, float(before))))

    def restating(
        self, turn: BridgeTurn, candidates: Sequence[Candidate]
    ) -> dict[str, SharedVector]:
        """The fact of ``candidates`` (drawn from ``turn``) that restates the message, mapped to
        the message's vector (see :mod:`._sharing`); none for a message stored in parts."""
        text = turn.message.content
        if (
            not self.settings.share_vectors
            or not candidates
            or len(split_text(text, records.MAX_CONTENT_CHARS)) > 1
        ):
            return {}
        record = message_record_id(self.project_id, turn.session_id, turn.message_id)
        return restating_fact(candidates, text, record)

    def candidates(
        self,
        turn: BridgeTurn,
        context: ExtractionContext,
        extracted: Sequence[ExtractedFact],
        *,
        recalled: tuple[str, ...],
        first_index: int = 0,
    ) -> list[Candidate]:
        """The facts an extractor found in a turn, as candidates for the reconciling writer.

        Fact ``first_index + i`` of the turn gets the id :func:`fact_id_for` gives it, so a
        replay of the turn writes the same ids.
        """
        from sagewai.extraction._dates import ground_dates

        now = utcnow()
        out: list[Candidate] = []
        for offset, item in enumerate(extracted):
            source = self.source(
                turn,
                speaker=item.speaker or turn.message.speaker_name,
                extractor=item.extractor or self.extractor,
            )
            # Relative dates mean the day they were said, whichever extractor wrote the fact;
            # a recurrence ("our standup is on Monday": every Monday) names no one day.
            grounded = (
                item.content
                if item.metadata.get("recurrence")
                else ground_dates(item.content, turn.timestamp, protected=item.exact_values)
            )
            fact_id = fact_id_for(
                self.project_id, turn.session_id, turn.message_id, first_index + offset
            )
            try:
                fact = item.to_fact(
                    self.project_id,
                    content=grounded,
                    context=context,
                    id=fact_id,
                    org_id=self.org_id,
                    scope=self.scope_of(turn),
                    user_id=turn.user_id,
                    session_id=turn.session_id,
                    tags=_plain_tags(turn),
                    sources=(source,),
                    created_at=min(turn.timestamp, now),
                    valid_from=turn.timestamp,
                )
            except (ValidationError, ValueError) as exc:
                self.stats.facts_invalid += 1
                logger.warning("skipped an invalid fact from message %s: %s", turn.message_id, exc)
                continue
            fact = _standing(fact, turn.message.role)
            if turn.message.role == "assistant":
                # What the assistant said, like its verbatim reply.
                fact = fact.model_copy(update={"metadata": {**fact.metadata, REPLY_MARK: True}})
            out.append(
                Candidate(fact=fact, role=turn.message.role, source=source, recalled=recalled)
            )
        return out
