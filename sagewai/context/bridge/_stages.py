"""The two stages a message goes through: recorded at once, then read by the deferred extractor.

1. :class:`RecordStage` (every message, as it is accepted): the message's verbatim record, its
   context record and the extractor's at-once facts, reconciled and written in one commit (one
   embedding call for many turns). Searchable from the next turn on.
2. :class:`ExtractStage` (``extract_every_n_turns`` turns of a session at a time): the
   extractor's deferred stage (a model) reads the turns it was sent, each with the turns before
   it as context, and its facts are reconciled and written.

An extractor's failure on one turn is logged and counted, never raised into the conversation
loop: the turn's verbatim record is stored whatever the extractor does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from sagewai.context._ranking import is_context_record
from sagewai.context._reconcile import Candidate, ReconcilingWriter, SharedVector
from sagewai.context.bridge._graphing import GraphStage
from sagewai.context.bridge._names import UserNames
from sagewai.context.bridge._records import RecordBuilder
from sagewai.context.bridge._sessions import Said, Sessions, StoredTurn
from sagewai.context.bridge._settings import BridgeSettings
from sagewai.context.bridge._turns import (
    EXTRACTION_ROLES,
    MODEL_FACT_INDEX,
    ROLE_FOR_EXTRACTION,
    BridgeStats,
    BridgeTurn,
    PendingTurn,
)
from sagewai.core._ids import message_record_id
from sagewai.core._port import MemoryPort
from sagewai.core._queries import FactQuery
from sagewai.core._records import Fact, FactKind
from sagewai.core._scope import validate_identifier
from sagewai.errors import InvalidInputError, SagewaiRuntimeError
from sagewai.extraction._base import ExtractedFact, ExtractionContext, Turn
from sagewai.extraction._stages import AtOnceFacts, TwoStageExtractor

__all__ = ["ExtractStage", "RecordStage"]

logger = logging.getLogger("sagewai.context.bridge")

_T = TypeVar("_T")


async def _guarded(
    work: Callable[[], Awaitable[_T]], fallback: _T, turn: BridgeTurn, stats: BridgeStats
) -> _T:
    """``work()``, or ``fallback`` when the extractor fails on this turn (logged and counted).

    Extractors do not raise on bad model output; this is a bug or bad input: the turn is
    skipped and counted, the conversation loop goes on.
    """
    try:
        return await work()
    except (SagewaiRuntimeError, InvalidInputError, ValueError) as exc:
        stats.extraction_failures += 1
        logger.warning("extraction failed for message %s: %s", turn.message_id, exc)
        return fallback


def _index(turn: BridgeTurn) -> int:
    return turn.turn_index


class RecordStage:
    """Stage 1: a message's verbatim and context records and its at-once facts (see the module)."""

    def __init__(
        self,
        *,
        port: MemoryPort,
        settings: BridgeSettings,
        sessions: Sessions,
        builder: RecordBuilder,
        writer: ReconcilingWriter,
        extractor: TwoStageExtractor,
        stats: BridgeStats,
        names: UserNames,
        graph: GraphStage,
    ) -> None:
        self.port = port
        self.settings = settings
        self.sessions = sessions
        self.builder = builder
        self.writer = writer
        self.extractor = extractor
        self.stats = stats
        self.names = names
        self.graph = graph

    def extraction_context(
        self, turn: BridgeTurn, previous: Sequence[Said], *, user_name: str | None = None
    ) -> ExtractionContext:
        """Who said ``turn``, when, to whom, and the turns before it (``context_turns`` of them);
        ``user_name`` is the name the user gave (their facts read "Dana (the user) ...")."""
        role = ROLE_FOR_EXTRACTION.get(turn.message.role, turn.message.role)
        if role not in EXTRACTION_ROLES:
            role = "user"
        state = self.sessions[turn.session_id]
        window = self.settings.context_turns
        return ExtractionContext(
            speaker=turn.message.speaker_name,
            role=role,
            session_id=turn.session_id,
            message_id=turn.message_id,
            timestamp=turn.timestamp,
            addressee=state.user_speaker if role == "assistant" else None,
            user_name=user_name if role == "user" else None,
            previous_turns=tuple(
                Turn(role=r if r in EXTRACTION_ROLES else "user", content=c, speaker=s)
                for r, c, s in list(previous)[-window:]
                if window
            ),
        )

    async def resume(self, session_id: str, user_id: str | None) -> None:
        """Read in what the store holds of a session this bridge has not seen (once).

        Called before a message of the session is numbered: after a restart (or a crash and
        its replay) the session goes on from its stored turns, so the next turn is numbered
        after them and its context record is built from the turn before it, exactly as an
        uninterrupted bridge would build it. Identifiers that are not valid are left for the
        intake to refuse.
        """
        try:
            validate_identifier(session_id, "session_id")
            if user_id is not None:
                validate_identifier(user_id, "user_id")
        except InvalidInputError:
            return
        state = self.sessions[session_id]
        if not state.resumed:
            async with state.record_lock:
                await self._resume(session_id, user_id, before=None)

    async def _resume(self, session_id: str, user_id: str | None, *, before: int | None) -> None:
        """Resume a session (its record lock held) from its stored turns before ``before``."""
        state = self.sessions[session_id]
        if not state.resumed:
            state.resume(await self._stored_turns(session_id, user_id, before=before))

    async def _stored_turns(
        self, session_id: str, user_id: str | None, *, before: int | None
    ) -> list[StoredTurn]:
        """The session's turns (of this user) whose verbatim records are stored, in order.

        Only the user's own records: a session id another user also uses lends them nothing.
        ``before``: only turns numbered below it (a replayed turn may be stored already).
        """
        query = FactQuery(
            project_id=self.port.project_id,
            session_id=session_id,
            user_id=user_id,
            kinds=(FactKind.MESSAGE,),
        )
        pieces: dict[str, list[tuple[int, Fact]]] = {}
        async for fact in self.port.iter_facts(query):
            if fact.user_id != user_id or is_context_record(fact) or not fact.sources:
                continue
            source = fact.sources[0]
            if source.turn_index is None or source.message_id is None or source.role is None:
                continue
            if before is not None and source.turn_index >= before:
                continue
            part = fact.metadata.get("part", 0)
            pieces.setdefault(source.message_id, []).append(
                (part if isinstance(part, int) else 0, fact)
            )
        turns: list[StoredTurn] = []
        for message_id, parts in pieces.items():
            parts.sort(key=lambda item: item[0])
            source = parts[0][1].sources[0]
            assert source.turn_index is not None
            assert source.role is not None
            turns.append(
                StoredTurn(
                    turn_index=source.turn_index,
                    role=source.role,
                    content="".join(fact.content for _, fact in parts),
                    speaker=source.speaker,
                    record_id=message_record_id(self.port.project_id, session_id, message_id),
                )
            )
        turns.sort(key=lambda turn: turn.turn_index)
        return turns

    async def record(self, turns: Sequence[BridgeTurn]) -> list[PendingTurn]:
        """Record turns of any sessions, in order; return them with their at-once facts.

        Takes the record lock of every session involved, so each session's turns enter its
        history in order. The messages and the at-once facts of every session of these turns
        land in one commit (one embedding call): a drain of the queue is one write.
        """
        if not turns:
            return []
        sessions = sorted({t.session_id for t in turns})
        async with contextlib.AsyncExitStack() as stack:
            for sid in sessions:
                await stack.enter_async_context(self.sessions[sid].record_lock)
            for sid in sessions:  # a session first met in a replay goes on from the store
                first = min((t for t in turns if t.session_id == sid), key=_index)
                await self._resume(sid, first.user_id, before=first.turn_index)
            await self.names.load(turns)  # the names users gave, read back from the store
            pendings, verbatim, shared, histories, last = await self._records(turns)
            found = await asyncio.gather(
                *(self._at_once(p.turn, p.context) for p in pendings if p.context is not None)
            )
            jobs = [p for p in pendings if p.context is not None]
            candidates: list[Candidate] = []
            facts: list[ExtractedFact] = []
            for pending, at_once in zip(jobs, found, strict=True):
                assert pending.context is not None
                pending.rule_facts, pending.deferred = at_once.facts, at_once.defer
                facts.extend(at_once.facts)
                mine = self.builder.candidates(
                    pending.turn,
                    pending.context,
                    at_once.facts,
                    recalled=tuple(self.sessions[pending.turn.session_id].recalled),
                )
                shared.update(self.builder.restating(pending.turn, mine))
                candidates.extend(mine)
            outcome = await self.writer.write(candidates, verbatim=verbatim, shared=shared)
            await self.names.save()  # a name given in these turns, now that they are stored
            # The sessions' histories take these turns only once they are stored (a retried
            # batch must not see its own turns twice as context).
            for sid, history in histories.items():
                state = self.sessions[sid]
                state.history.clear()
                state.history.extend(history)
                state.last_record = last.get(sid)
        self.stats.messages_recorded += len(turns)
        self.stats.count(len(facts), outcome)
        await self.graph.learn(pendings)  # the graph on every turn (when the bridge has one)
        return pendings

    async def _records(
        self, turns: Sequence[BridgeTurn]
    ) -> tuple[
        list[PendingTurn],
        list[Fact],
        dict[str, SharedVector],
        dict[str, list[Said]],
        dict[str, str | None],
    ]:
        """The turns' verbatim and context records (with the vectors the context records share,
        see :mod:`._sharing`), and the sessions' histories after them."""
        pendings: list[PendingTurn] = []
        shared: dict[str, SharedVector] = {}
        messages: dict[str, list[Fact]] = {}
        said: dict[str, list[Said]] = {}
        last: dict[str, str | None] = {}
        # Context records whose earlier turn was recorded before these turns: kept only if
        # that turn's record is still stored (it may have been forgotten since).
        check: dict[str, list[Fact]] = {}
        made: set[str] = set()
        for turn in turns:
            state = self.sessions[turn.session_id]
            history = said.setdefault(turn.session_id, list(state.history))
            before = last.setdefault(turn.session_id, state.last_record)
            context: ExtractionContext | None = None
            user_name = self.names.read(turn)
            if turn.message.role in self.settings.roles and not turn.message.is_empty:
                context = self.extraction_context(turn, history, user_name=user_name)
                records = messages.setdefault(turn.session_id, [])
                own = self.builder.verbatim(turn)
                records.extend(own)
                # The first turn of a conversation has none before it (a session bridged
                # again starts over: its history holds the end of the earlier pass).
                previous = history[-1] if history and turn.turn_index > 0 else None
                around = self.builder.context(turn, previous)
                if (
                    around is not None
                    and previous is not None
                    and before is not None
                    and len(own) == 1
                ):
                    vector = self.builder.context_vector(around, own[0], before, previous[1])
                    if vector is not None:
                        shared[around.id] = vector
                if around is not None and before is not None and before not in made:
                    check.setdefault(before, []).append(around)
                elif around is not None:
                    records.append(around)
                last[turn.session_id] = message_record_id(
                    self.port.project_id, turn.session_id, turn.message_id
                )
                made.add(last[turn.session_id] or "")
            else:
                last[turn.session_id] = None
            history.append((turn.message.role, turn.message.content, turn.message.speaker_name))
            if turn.message.role == "user" and turn.message.speaker_name:
                state.user_speaker = turn.message.speaker_name
            pendings.append(PendingTurn(turn, context, [], False))
        if check:
            present = {f.id for f in await self.port.get_many(list(check))}
            for record_id, arounds in check.items():
                if record_id in present:
                    for around in arounds:
                        messages.setdefault(around.session_id or "", []).append(around)
        verbatim = [record for records in messages.values() for record in records]
        return pendings, verbatim, shared, said, last

    async def _at_once(self, turn: BridgeTurn, context: ExtractionContext | None) -> AtOnceFacts:
        text = turn.message.content
        return await _guarded(
            lambda: self.extractor.extract_at_once(text, context),
            AtOnceFacts(),
            turn,
            self.stats,
        )


class ExtractStage:
    """Stage 2: the extractor's deferred stage over a session's recorded turns (see the module).

    Facts of the deferred stage are numbered after the at-once stage's (from
    ``MODEL_FACT_INDEX``) when the extractor has an at-once stage, else from 0: a replay gives
    every fact the id it had.
    """

    def __init__(
        self,
        *,
        sessions: Sessions,
        builder: RecordBuilder,
        writer: ReconcilingWriter,
        extractor: TwoStageExtractor,
        stats: BridgeStats,
    ) -> None:
        self.sessions = sessions
        self.builder = builder
        self.writer = writer
        self.extractor = extractor
        self.stats = stats
        self.first_index = MODEL_FACT_INDEX if extractor.extracts_at_once else 0

    async def extract(self, batch: Sequence[PendingTurn]) -> list[ExtractedFact]:
        """Extract and store the deferred facts of recorded turns of one session."""
        jobs = [p for p in batch if p.deferred and p.context is not None]
        if not jobs:
            return []
        found = await asyncio.gather(*(self._deferred(p) for p in jobs))
        candidates: list[Candidate] = []
        extracted: list[ExtractedFact] = []
        shared: dict[str, SharedVector] = {}
        for pending, facts in zip(jobs, found, strict=True):
            assert pending.context is not None
            extracted.extend(facts)
            mine = self.builder.candidates(
                pending.turn,
                pending.context,
                facts,
                recalled=tuple(self.sessions[pending.turn.session_id].recalled),
                first_index=self.first_index,
            )
            shared.update(self.builder.restating(pending.turn, mine))
            candidates.extend(mine)
        state = self.sessions[jobs[0].turn.session_id]
        outcome = await self.writer.write(candidates, recalled=list(state.recalled), shared=shared)
        self.stats.count(len(extracted), outcome)
        return extracted

    async def _deferred(self, pending: PendingTurn) -> list[ExtractedFact]:
        text = pending.turn.message.content
        return await _guarded(
            lambda: self.extractor.extract_deferred(text, pending.context, pending.rule_facts),
            [],
            pending.turn,
            self.stats,
        )
