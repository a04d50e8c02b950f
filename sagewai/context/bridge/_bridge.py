"""MemoryBridge: conversation turns in; verbatim messages, reconciled facts and episodes out.

The bridge is a pipeline of small collaborators, built once from one :class:`BridgeSettings`:

====================  ===============================================================  ==========
collaborator          what it does to a message                                         module
====================  ===============================================================  ==========
``Sessions``          validates it, numbers it in its session, keeps the context        _sessions
``JournalKeeper``     appends it to the write-ahead journal (durable from here),        _journaling
                      replays what a crashed process left
``RecordStage``       stores it verbatim (with its context record) and the extractor's  _stages
                      at-once facts, reconciled, in one commit
``ExtractStage``      runs the extractor's deferred stage (a model) over a session's    _stages
                      waiting turns, ``extract_every_n_turns`` at a time
``BackgroundWorkers`` the queue and tasks behind ``submit`` (and ``remember``'s          _workers
                      deferred stage)
``UserNames``         remembers the name each user gave ("My name is Dana"), in the     _names
                      store, so their facts read "Dana (the user) ..."
``GraphStage``        hands every recorded message to the graph builder (with one)      _graphing
====================  ===============================================================  ==========

The records are built by ``RecordBuilder`` (:mod:`._records`) and written by the engine's
reconciling writer (:mod:`sagewai.context._reconcile`: ADD / UPDATE / NOOP against what the scope
holds, then one ``commit`` through the engine's port). ``docs/architecture.md`` draws the whole
path of one message, module by module.

Three ways in:

* ``await bridge.process_message(...)`` / ``await bridge.bridge_conversation(...)`` do the work
  before they return (the deferred stage when a turn completes its session's batch);
* ``await bridge.remember(...)`` (what :class:`~sagewai.UniversalAgent` calls) journals and
  records the message before it returns and leaves the deferred stage to the background;
* ``await bridge.submit(...)`` returns as soon as the message is journaled (well under a
  millisecond); background workers record and extract it. ``flush()`` waits until everything
  accepted so far is stored; ``aclose()`` flushes and stops the workers.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Self, Unpack

from sagewai.context._reconcile import TEXT_CACHE, Reconciler, ReconcilingWriter
from sagewai.context.bridge._graphing import GraphStage, TurnGraph
from sagewai.context.bridge._journal import WriteAheadJournal
from sagewai.context.bridge._journaling import JournalKeeper
from sagewai.context.bridge._names import UserNames
from sagewai.context.bridge._records import RecordBuilder
from sagewai.context.bridge._sessions import Sessions
from sagewai.context.bridge._settings import BridgeOptions, BridgeSettings
from sagewai.context.bridge._stages import ExtractStage, RecordStage
from sagewai.context.bridge._turns import (
    RECORD_DRAIN,
    BridgeStats,
    BridgeTurn,
    PendingTurn,
)
from sagewai.context.bridge._workers import BackgroundWorkers
from sagewai.core._conversation import Conversation, MessageLike
from sagewai.core._ids import FACT_NAMESPACE
from sagewai.core._progress import progress_bar, wants_progress
from sagewai.core._records import Fact, new_id
from sagewai.errors import ConfigurationError
from sagewai.extraction._base import ExtractedFact, FactExtractor
from sagewai.extraction._stages import two_stages

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine

__all__ = ["MemoryBridge"]


def _default_extractor(model: str) -> FactExtractor:
    """Rules everywhere, ``model`` where they are unsure, the rules again when it is offline."""
    from sagewai.extraction import HybridFactExtractor, LLMFactExtractor, RuleBasedFactExtractor

    rules = RuleBasedFactExtractor()
    return HybridFactExtractor(
        rule_extractor=rules, llm_extractor=LLMFactExtractor(model=model, fallback=rules)
    )


class MemoryBridge:
    """Turns conversation turns into verbatim records and reconciled, provenance-carrying facts.

    Args:
        context_engine: Where everything is stored (and its episode store, if any, gets whole
            conversations from :meth:`bridge_conversation`).
        settings: Every tunable value (:class:`BridgeSettings`); the fields may also be given by
            name (``model=``, ``extract_every_n_turns=``, ``user_id=``, ``journal_path=``, ...),
            which override ``settings``.
        fact_extractor: Any :class:`~sagewai.intelligence.FactExtractor`. One that implements
            the two-stage protocol (:class:`~sagewai.extraction.TwoStageExtractor`: the rules,
            the hybrid, the LLM extractor, or your own) has its at-once stage run as each message
            arrives and its deferred stage in batches; a plain one runs whole in the deferred
            stage. Default: a ``HybridFactExtractor`` of ``settings.model`` (the rules when no
            model is reachable).
        reconciler: The ADD / UPDATE / NOOP judge (the rules by default; ``LLMReconciler``).
        graph_builder: Updates the knowledge graph with every recorded message (a
            :class:`~sagewai.intelligence.ConversationGraphBuilder`, or anything with its
            ``process_turn``). :class:`~sagewai.UniversalAgent` hands its own, or a default one
            over the engine's graph store, to a bridge that has none; set
            :attr:`graph_builder` to change it later. Failures are logged, never raised.

    Raises:
        ConfigurationError: an invalid setting (:class:`~sagewai.errors.ScopeError` for the
            scope).

    Example:
        >>> import asyncio
        >>> from sagewai import ContextEngine
        >>> from sagewai.intelligence import RuleBasedFactExtractor
        >>> from sagewai.testing import FakeEmbedder
        >>> async def demo() -> list[str]:
        ...     async with ContextEngine.in_memory(embedder=FakeEmbedder()) as ctx:
        ...         bridge = MemoryBridge(context_engine=ctx, extract_every_n_turns=1,
        ...                               fact_extractor=RuleBasedFactExtractor())
        ...         await bridge.process_message("I moved to Berlin.", session_id="s1",
        ...                                      user_id="alice")
        ...         found = await ctx.search("where does the user live", user_id="alice")
        ...         return sorted({f.content for r in found for f in (r.fact, *r.related)})
        >>> asyncio.run(demo())  # the message, verbatim, and the fact drawn from it
        ['I moved to Berlin.', 'The user moved to Berlin.']
    """

    def __init__(
        self,
        context_engine: ContextEngine,
        *,
        settings: BridgeSettings | None = None,
        fact_extractor: FactExtractor | None = None,
        reconciler: Reconciler | None = None,
        graph_builder: TurnGraph | None = None,
        **options: Unpack[BridgeOptions],
    ) -> None:
        if options:
            base = {} if settings is None else settings.model_dump(exclude_unset=True)
            settings = BridgeSettings(**{**base, **options})
        self.settings = settings = settings or BridgeSettings()
        self.engine = context_engine
        self.fact_extractor = fact_extractor or _default_extractor(settings.model)
        self.stats = BridgeStats()
        port = context_engine.port
        extractor = two_stages(self.fact_extractor)
        self.writer = ReconcilingWriter(
            port,
            reconciler=reconciler,
            echo_threshold=settings.echo_threshold,
            remembered_texts=TEXT_CACHE if settings.share_vectors else 0,
        )
        self._sessions = Sessions(settings)
        self._names = UserNames(port)
        self._graph = GraphStage(None, self.stats, self._names.get)
        self.graph_builder = graph_builder
        builder = RecordBuilder(
            project_id=port.project_id,
            org_id=port.org_id,
            settings=settings,
            stats=self.stats,
            extractor=type(self.fact_extractor).__name__,
        )
        self._record = RecordStage(
            port=port,
            settings=settings,
            sessions=self._sessions,
            builder=builder,
            writer=self.writer,
            extractor=extractor,
            stats=self.stats,
            names=self._names,
            graph=self._graph,
        )
        self._extract = ExtractStage(
            sessions=self._sessions,
            builder=builder,
            writer=self.writer,
            extractor=extractor,
            stats=self.stats,
        )
        self._at_once_only = not extractor.extracts_deferred
        self._journal = JournalKeeper(
            settings,
            folder=context_engine.stores.folder,
            project_id=port.project_id,
            stats=self.stats,
        )
        port.attach_journal(self._journal)  # forget(subject=...) rewrites it too
        self._workers = BackgroundWorkers(settings, self._sessions, self.stats)
        self._start_lock = asyncio.Lock()
        self._closing = False

    # ------------------------------------------------------------------ state

    @property
    def graph_builder(self) -> TurnGraph | None:
        """What updates the knowledge graph with every recorded message (``None``: nothing)."""
        return self._graph.builder

    @graph_builder.setter
    def graph_builder(self, builder: TurnGraph | None) -> None:
        if builder is not None and not isinstance(builder, TurnGraph):
            raise ConfigurationError(
                "graph_builder must have process_turn(...) (a ConversationGraphBuilder)"
            )
        self._graph.builder = builder

    def user_name(self, user_id: str | None = None) -> str | None:
        """The name a user gave ("My name is Dana"), once this bridge has read or recorded it."""
        return self._names.get(user_id)

    @property
    def journal(self) -> WriteAheadJournal | None:
        """The write-ahead journal, or ``None`` (no folder and no ``journal_path``)."""
        return self._journal.journal

    @property
    def durable(self) -> bool:
        """Whether an accepted message outlives this process: with a journal, or when the
        engine's store is not in memory (it holds each message's verbatim record once
        recorded)."""
        return self._journal.journal is not None or self.engine.stores.persistent

    @property
    def is_ready(self) -> bool:
        """True once the journal (if any) is open and what it held is replayed."""
        return self._journal.is_ready

    @property
    def is_started(self) -> bool:
        """True once the background workers run."""
        return self._workers.running

    @property
    def default_session_id(self) -> str:
        """The session of messages given without a ``session_id``."""
        return self._sessions.default_session_id

    def note_recalled(self, session_id: str, facts: Sequence[Fact | str]) -> None:
        """Tell the bridge which facts the agent was shown in a session.

        An assistant turn that restates one of them is an echo of memory, not new knowledge,
        and is not stored again. An agent loop calls this after each recall from memory.
        """
        self._sessions.note_recalled(session_id, facts)

    # ------------------------------------------------------------------ the blocking API

    async def process_message(
        self,
        message: MessageLike,
        role: str = "user",
        session_id: str | None = None,
        tags: Sequence[str] | None = None,
        *,
        user_id: str | None = None,
    ) -> list[ExtractedFact]:
        """Store one turn verbatim with its at-once facts; run the deferred stage on a full batch.

        When this returns the message is durable (journaled, and its verbatim record stored)
        and searchable. Turns the deferred stage must read wait in the session's batch until
        ``extract_every_n_turns`` of them are there (or :meth:`flush`).

        Args:
            message: Text, an OpenAI-style dict or a :class:`ChatMessage` (whose own role wins).
            role: The role of a plain-text message.
            session_id: The conversation (the bridge's default session when omitted).
            tags: Tags stored on the facts of this turn.
            user_id: Overrides the bridge's default user for this turn.

        Returns:
            The facts extracted by this call: the at-once facts of this turn, and the deferred
            facts of the whole batch when this turn completed it.

        Raises:
            InvalidInputError: a malformed message or identifier.
            BackendError: the store failed (nothing of the batch was written).

        Example:
            >>> async def chat(bridge: MemoryBridge) -> None:
            ...     await bridge.process_message({"role": "user", "content": "I prefer tea"},
            ...                                  session_id="s1")
            ...     await bridge.flush("s1")
        """
        await self._ready()  # the journal is open, a crash's leftovers replayed
        await self._resume(session_id, user_id)  # a session stored before goes on from there
        turn = self._sessions.turn(
            message, role=role, session_id=session_id, user_id=user_id, tags=tags
        )
        self._accept(turn)  # journaled: durable from here
        recorded = await self._record.record([turn])  # verbatim, context record, at-once facts
        facts = [fact for pending in recorded for fact in pending.rule_facts]
        for session in self._buffer(recorded):  # deferred turns wait for their batch
            facts += await self._extract_session(session)  # the batch is full: run it now
        return facts

    async def remember(
        self,
        message: MessageLike,
        role: str = "user",
        session_id: str | None = None,
        tags: Sequence[str] | None = None,
        *,
        user_id: str | None = None,
    ) -> str:
        """Store one turn verbatim with its at-once facts now; the deferred stage in the
        background.

        What an agent loop calls after each turn: when this returns the message is durable and
        recallable by the next turn (and by ``MemoryConsolidator``), while the deferred stage
        runs in the background every ``extract_every_n_turns`` turns. Returns the message id.

        Raises:
            InvalidInputError: a malformed message (nothing accepted).
            BackendError: the store failed (a journaled message is replayed by the next start).
        """
        await self.start()
        self._refuse_when_closing()
        await self._resume(session_id, user_id)
        turn = self._sessions.turn(
            message, role=role, session_id=session_id, user_id=user_id, tags=tags
        )
        self._accept(turn)
        recorded = await self._record.record([turn])
        for session in self._buffer(recorded):
            await self._dispatch(session)
        return turn.message_id

    async def bridge_conversation(
        self,
        conversation: Conversation | Sequence[MessageLike],
        tags: Sequence[str] | None = None,
        *,
        progress: bool | None = None,
    ) -> int:
        """Store a whole conversation (verbatim and extracted); return how many facts were stored.

        Turns are processed ``extract_every_n_turns`` at a time, each with the turns before it as
        context; a message without an id gets ``turn-<index>``, so bridging the same
        conversation (same ``session_id``) again stores nothing twice. The count is the new fact
        records written (added or updated; verbatim message records are not counted); repeats
        that reinforced a fact are not counted. When the engine has an episode store, the
        conversation is also saved as an episode. A bar on standard error counts the turns of a
        long conversation when standard error is a terminal (``progress`` decides for the call,
        ``SAGEWAI_PROGRESS=0`` for the process).

        Example:
            >>> async def ingest(bridge: MemoryBridge) -> int:
            ...     return await bridge.bridge_conversation(
            ...         Conversation.of([{"role": "user", "content": "I work at Initech"}],
            ...                         session_id="s1", user_id="bob"))
        """
        chat = Conversation.coerce(conversation)
        wants_progress(0, progress)  # a bad value fails before anything is written
        session_id = chat.session_id or new_id()
        user_id = chat.user_id if chat.user_id is not None else self.settings.user_id
        turns = [
            self._sessions.turn(
                message,
                role=None,
                session_id=session_id,
                user_id=user_id,
                tags=tags,
                turn_index=index,
                message_id=message.id or f"turn-{index}",
            )
            for index, message in enumerate(chat.messages)
        ]
        await self._ready()
        episodes = self.engine.episodes
        keep_episode = self.settings.save_episodes and episodes.enabled and bool(chat.messages)
        if keep_episode:
            # All or nothing: an episode that would be refused fails before any fact is written.
            episodes.check(session_id, list(chat.messages), dict(chat.metadata), user_id=user_id)
        self.stats.messages_accepted += len(turns)
        before = self.stats.facts_stored
        state = self._sessions[session_id]
        async with state.lock:
            waiting = self._sessions.take(session_id)
            await self._extract.extract(waiting)
            self._finish(waiting)
            # Each batch is recorded, then extracted, before the next (the deferred facts of a
            # turn are reconciled before later turns' facts). An extractor with no deferred
            # stage (the rules) records many turns per write: one embedding call and one commit.
            step = RECORD_DRAIN if self._at_once_only else self.settings.extract_every_n_turns
            with progress_bar(len(turns), "bridging turns", show=progress) as bar:
                for start in range(0, len(turns), step):
                    recorded = await self._record.record(turns[start : start + step])
                    await self._extract.extract(recorded)
                    self.stats.messages_processed += len(recorded)
                    bar.advance(len(recorded))
        stored = self.stats.facts_stored - before
        if keep_episode:
            await episodes.save(
                session_id,
                list(chat.messages),
                metadata=dict(chat.metadata),
                user_id=user_id,
                episode_id=str(
                    uuid.uuid5(FACT_NAMESPACE, f"{self.engine.project_id}\x1f{session_id}")
                ),
            )
        return stored

    # ------------------------------------------------------------------ the background API

    async def start(self) -> None:
        """Open the journal, replay what it holds, and start the background workers.

        Called for you by the first :meth:`submit` or :meth:`remember`; call it yourself to
        replay a journal left by a crash at a time of your choosing. Replayed messages are
        stored before this returns.

        Raises:
            LockedError: another process has the journal open.
        """
        if self._workers.running:
            return
        await self._ready()
        async with self._start_lock:
            if not self._workers.running:
                self._workers.start(self._record_queued, self._dispatch)

    async def submit(
        self,
        message: MessageLike,
        role: str = "user",
        session_id: str | None = None,
        tags: Sequence[str] | None = None,
        *,
        user_id: str | None = None,
    ) -> str:
        """Accept a message for background storage and extraction; return its message id at once.

        Accepted means journaled (with a journal): it will be stored even if the process dies
        before the workers reach it. Use :meth:`flush` to wait until it is stored, or
        :meth:`remember` to have it recorded before the call returns.

        Raises:
            InvalidInputError: a malformed message (nothing accepted).
            SagewaiTimeoutError: the queue stayed full for ``submit_timeout`` seconds (nothing
                accepted).
            BackendUnavailableError: the journal could not be written (nothing accepted).

        Example:
            >>> async def chat(bridge: MemoryBridge) -> None:
            ...     await bridge.submit("We deploy on Fridays", session_id="s1")
            ...     await bridge.flush()
        """
        await self.start()
        self._refuse_when_closing()
        await self._resume(session_id, user_id)
        turn = self._sessions.turn(
            message, role=role, session_id=session_id, user_id=user_id, tags=tags
        )
        await self._workers.room()
        try:
            self._accept(turn)
        except BaseException:
            self._workers.give_back_room()
            raise
        self._workers.put(turn)
        return turn.message_id

    async def flush(self, session_id: str | None = None) -> int:
        """Extract and store every waiting turn (of one session, or all); return the facts
        stored meanwhile.

        In background mode this also waits until every message accepted by :meth:`submit`
        before the call is stored.

        Raises:
            BackendError: a background batch failed after retries (its messages stay in the
                journal and are replayed by the next start).
        """
        before = self.stats.facts_stored
        await self._ready()
        background = self._workers.running
        if background:
            await self._workers.drain()
        sessions = [session_id] if session_id is not None else self._sessions.with_waiting_turns()
        for sid in sessions:
            state = self._sessions.get(sid)
            if state is None or not state.buffer:
                continue
            if background:
                await self._dispatch(sid)
            else:
                await self._extract_session(sid)
        await self._workers.settle()
        return self.stats.facts_stored - before

    async def aclose(self) -> None:
        """Store everything accepted, stop the workers and close the journal.

        Not needed for durability (what was accepted is journaled): it saves the next start
        the replay.

        Raises:
            BackendError: a background batch failed (its messages stay in the journal).
        """
        self._closing = True
        try:
            if self._workers.running or (
                self._journal.is_ready and self._sessions.with_waiting_turns()
            ):
                await self.flush()
        finally:
            await self._workers.stop()
            self._closing = False
            await self._journal.aclose()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ the steps

    async def _ready(self) -> None:
        """Open the journal and replay what it holds (once)."""
        await self._journal.ready(self._replay)

    async def _resume(self, session_id: str | None, user_id: str | None) -> None:
        """Continue a session this bridge has not met from what the store holds of it.

        After a restart the next turn is numbered after the stored ones and its context record
        holds the stored turn before it: a restarted bridge stores what a running one would.
        """
        if session_id is not None:
            user = user_id if user_id is not None else self.settings.user_id
            await self._record.resume(session_id, user)

    def _refuse_when_closing(self) -> None:
        if self._closing:
            raise ConfigurationError("the bridge is closing; no message is accepted")

    def _accept(self, turn: BridgeTurn) -> None:
        """Journal an accepted turn before anything else happens to it."""
        self._journal.accept(turn)
        self.stats.messages_accepted += 1

    def _buffer(self, recorded: Sequence[PendingTurn]) -> list[str]:
        """Checkpoint the turns the deferred stage need not read; put the others in their
        sessions' batches. Returns the sessions whose batch is full."""
        done, full = self._sessions.buffer(recorded)
        self._finish(done)
        return full

    def _finish(self, batch: Sequence[PendingTurn]) -> None:
        """Both stages of these turns are stored: checkpoint them in the journal."""
        if batch:
            self.stats.messages_processed += len(batch)
            self._journal.complete(p.turn for p in batch)

    async def _extract_session(self, session_id: str) -> list[ExtractedFact]:
        """Run the deferred stage over a session's waiting turns, here and now."""
        async with self._sessions[session_id].lock:
            batch = self._sessions.take(session_id)
            facts = await self._extract.extract(batch)
            self._finish(batch)
        return facts

    async def _record_queued(self, turns: list[BridgeTurn]) -> None:
        """The background record stage: queued turns recorded in one write (with retries)."""
        recorded = await self._workers.retrying(lambda: self._record.record(turns), len(turns))
        for session in self._buffer(recorded or []):
            await self._dispatch(session)

    async def _dispatch(self, session_id: str) -> None:
        """Hand a session's batch to a background worker (journaled first, for the replay)."""
        batch = self._sessions.take(session_id)
        if not batch:
            return
        self._journal.record_batch(new_id(), (p.turn for p in batch))

        async def run() -> None:
            async with self._sessions[session_id].lock:
                done = await self._workers.retrying(
                    lambda: self._extract.extract(batch), len(batch)
                )
            if done is not None:
                self._finish(batch)

        await self._workers.run(run)

    async def _replay(self, turns: list[BridgeTurn]) -> None:
        """Store one group of turns a crashed process accepted, as it would have."""
        state = self._sessions[turns[0].session_id]
        state.next_turn = max(state.next_turn, max(t.turn_index for t in turns) + 1)
        async with state.lock:
            recorded = await self._record.record(turns)
            await self._extract.extract(recorded)
        self.stats.messages_processed += len(turns)
