"""UniversalAgent: an LLM loop that reads from memory every turn and writes back what it learns.

Each turn runs three phases:

1. **Recall**: facts of the user and session (hybrid search, graph-aware), relations around the
   names in the message, and relevant past sessions, fitted to a token budget and rendered as
   one ``<memory>`` block in the system message (:mod:`sagewai.agent._recall`,
   :mod:`sagewai.agent._memory_block`).
2. **Answer**: a bounded tool loop over the memory tools and the user's tools, whose last step
   has no tools (:mod:`sagewai.agent._loop`).
3. **Learn**: the user's message and the answer go to the :class:`~sagewai.context.MemoryBridge`
   (background extraction and reconciliation) and to the graph builder, and into the session's
   transcript, saved as an episode when the session ends.

When no model is reachable the turn still completes: the reply says so plainly and lists what
memory holds on the question, and the agent keeps learning from what the user says.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, Unpack

from sagewai.agent._exchange import ExchangeReader, about
from sagewai.agent._forgetting import AgentForgetReport, ForgottenFacts, forget_everywhere
from sagewai.agent._history import ConversationHistory
from sagewai.agent._learning import LearnedMessage, TurnLearner, default_bridge, graph_learner
from sagewai.agent._loop import LoopResult, TextChunk, run_tool_loop
from sagewai.agent._memory_block import (
    MemoryBlock,
    MemoryItem,
    TokenCounter,
    estimate_tokens,
    render_memory_block,
)
from sagewai.agent._memory_tools import (
    FORGET_TOOL,
    SAVE_TOOL,
    SEARCH_TOOL,
    memory_tools,
    save_fact,
)
from sagewai.agent._profile_section import ProfileSection, render_profile
from sagewai.agent._recall import MemoryRecaller, RecalledFact, fact_item, fact_lines
from sagewai.agent._replies import EMPTY_ANSWER, AgentReply, describe_error, failure_reply
from sagewai.agent._session import AgentSession
from sagewai.agent._settings import AgentOptions, AgentSettings
from sagewai.agent._tools import Tool, ToolBox
from sagewai.core._conversation import MAX_MESSAGE_CHARS
from sagewai.core._records import Fact, new_id, utcnow
from sagewai.core._scope import validate_identifier
from sagewai.errors import ConfigurationError, InvalidInputError, SagewaiError, ScopeError
from sagewai.llm._base import LLMClient
from sagewai.llm._errors import is_model_unreachable

if TYPE_CHECKING:
    from sagewai.context import MemoryBridge
    from sagewai.context._engine import ContextEngine
    from sagewai.context.bridge._graphing import TurnGraph
    from sagewai.intelligence._graph_builder import ConversationGraphBuilder
    from sagewai.stores import EpisodeStoreBase
    from sagewai.stores.base._graph import ProjectGraph

__all__ = ["AgentForgetReport", "AgentReply", "UniversalAgent"]

logger = logging.getLogger("sagewai.agent")

_EPISODE_NAMESPACE = uuid.UUID("0b7c4a52-3d0e-5f41-9a7e-5c2d9e8f6a31")
MEMORY_TOOL_GUIDE = (
    "Memory tools: search_memory looks for more facts; save_memory keeps something the user "
    "asks you to remember; forget_memory deletes facts by their [m..] reference when the user "
    "asks you to forget them."
)


def _check_message(message: object) -> str:
    if not isinstance(message, str) or not message.strip():
        raise InvalidInputError("a chat message must be non-empty text")
    if len(message) > MAX_MESSAGE_CHARS:
        raise InvalidInputError(f"a chat message holds at most {MAX_MESSAGE_CHARS} characters")
    if "\x00" in message:
        raise InvalidInputError("a chat message must not contain NUL characters")
    return message


class UniversalAgent:
    """A chat agent that remembers: it recalls before it answers and learns after.

    Args:
        name: The agent's name (in its default system prompt and episode metadata).
        context: The engine holding the facts it recalls and learns.
        memory_bridge: Extracts facts from each turn in the background. ``None`` makes one
            (rules everywhere; with the default client, the model where the rules are unsure).
        settings: Every tunable value (:class:`~sagewai.agent.AgentSettings`: ``model``,
            ``system_prompt``, ``user_id``, ``memory_token_budget``, ``max_steps``, ...); the
            fields may also be given by name (``model="gpt-4o"``), which override ``settings``.
        llm: The chat model client; ``LiteLLMClient(settings.model, api_base=...)`` when
            ``None``. Tests pass :class:`sagewai.testing.ScriptedLLM`.
        tools: Plain typed functions (or :class:`~sagewai.agent.Tool`) the model may call.
        graph_builder: Learns entities and relations from each turn (handed to the memory
            bridge, which runs it on every recorded message). With none, a bridge whose engine
            has a graph store gets a default ``ConversationGraphBuilder`` (the rule-based
            extractors). Recall reads the graph around the names in a message either way.
        episode_store: Where ended sessions are saved and recalled from; the engine's own when
            ``None``. A store given here is attached to the engine so ``forget`` reaches it.

    Raises:
        ConfigurationError: invalid settings, tools, or parts wired to different engines.

    Example:
        >>> import asyncio
        >>> from sagewai import ContextEngine
        >>> from sagewai.testing import FakeEmbedder
        >>> from sagewai.testing import ScriptedLLM
        >>> async def demo() -> str:
        ...     async with ContextEngine.in_memory(embedder=FakeEmbedder()) as ctx:
        ...         await ctx.add("The user's favourite tea is sencha.", user_id="ana")
        ...         llm = ScriptedLLM(["Sencha, as you told me."])
        ...         async with UniversalAgent(name="helper", context=ctx, llm=llm) as agent:
        ...             answer = await agent.chat("Which tea do I like?", user_id="ana")
        ...         assert "sencha" in llm.calls[0].messages[0]["content"]
        ...         return answer
        >>> asyncio.run(demo())
        'Sencha, as you told me.'
    """

    def __init__(
        self,
        *,
        name: str,
        context: ContextEngine,
        memory_bridge: MemoryBridge | None = None,
        settings: AgentSettings | None = None,
        llm: LLMClient | None = None,
        tools: Sequence[Tool | Callable[..., Any]] = (),
        graph_builder: ConversationGraphBuilder | None = None,
        episode_store: EpisodeStoreBase | None = None,
        **options: Unpack[AgentOptions],
    ) -> None:
        from sagewai.context._engine import ContextEngine

        if not isinstance(name, str) or not name.strip():
            raise ConfigurationError("the agent needs a non-empty name")
        if not isinstance(context, ContextEngine):
            raise ConfigurationError("context must be a ContextEngine")
        if options:
            base = {} if settings is None else settings.model_dump(exclude_unset=True)
            settings = AgentSettings(**{**base, **options})
        self.settings = settings = settings or AgentSettings()
        model, api_base, user_id = settings.model, settings.api_base, settings.user_id
        self.name = name
        self.context = context
        self.user_id = user_id
        self.system_prompt = settings.system_prompt or (
            f"You are {name}, a helpful assistant with a long-term memory of your conversations "
            "with this user. Answer briefly; use what you remember when it is relevant."
        )
        self.count_tokens: TokenCounter = settings.token_counter or estimate_tokens
        if llm is None:
            from sagewai.llm._litellm_client import LiteLLMClient

            llm = LiteLLMClient(model, api_base=api_base)
            default_client = True
        else:
            default_client = False
        self.llm: LLMClient = llm
        self._wire_episodes(episode_store)
        if memory_bridge is None and self.settings.learn:
            memory_bridge = default_bridge(context, model, api_base, use_model=default_client)
        if memory_bridge is not None and memory_bridge.engine is not context:
            raise ConfigurationError("the memory bridge writes to another engine than the agent's")
        self.bridge = memory_bridge
        # The graph on every turn: the bridge updates it (with this builder, its own, or a
        # default one over the engine's graph store); without a bridge, the learner does.
        learner = graph_learner(memory_bridge, graph_builder, context)
        self.graph_builder: TurnGraph | None = learner
        self.learner = TurnLearner(memory_bridge, learner if memory_bridge is None else None)
        graph = getattr(learner, "graph", None) or context.graph_store
        if graph is not None and getattr(graph, "project_id", context.project_id) != (
            context.project_id
        ):
            raise ConfigurationError("the graph belongs to another project than the engine")
        self.graph: ProjectGraph | None = graph
        self.user_tools = [t if isinstance(t, Tool) else Tool.from_function(t) for t in tools]
        names = [t.name for t in self.user_tools]
        if self.settings.memory_tools:
            names += [SEARCH_TOOL, SAVE_TOOL, FORGET_TOOL]
        if len(set(names)) != len(names):
            raise ConfigurationError(f"tool names must be unique (memory tools included): {names}")
        self.recaller = MemoryRecaller(
            context,
            graph=graph,
            top_k=self.settings.recall_top_k,
            graph_hops=self.settings.graph_hops,
            episode_limit=self.settings.episode_limit,
            graph_depth=self.settings.graph_depth,
            max_relations=self.settings.max_relations,
        )
        self._exchanges = ExchangeReader(context)
        self.default_session_id = new_id()
        """The session of :meth:`chat` calls that name none."""
        self._sessions: dict[str, AgentSession] = {}
        self._sessions_lock = asyncio.Lock()
        self._offline_logged = False
        self._closed = False

    # ------------------------------------------------------------------ wiring

    def _wire_episodes(self, store: EpisodeStoreBase | None) -> None:
        if store is None:
            return
        try:
            self.context.episodes.attach(store)  # so engine.forget(...) reaches the episodes
        except ConfigurationError as exc:
            raise ConfigurationError(
                "the engine already has an episode store (ContextEngine.local keeps one in its "
                "folder): omit episode_store=, or pass context.episodes.store; a second store "
                "would be missed by forget"
            ) from exc

    @property
    def episode_store(self) -> EpisodeStoreBase | None:
        """Where ended sessions are saved: the engine's episode store (``None``: not saved)."""
        return self.context.episodes.store

    @property
    def sessions(self) -> list[str]:
        """Ids of the open sessions."""
        return list(self._sessions)

    # ------------------------------------------------------------------ the public turn API

    async def chat(
        self, message: str, session_id: str | None = None, user_id: str | None = None
    ) -> str:
        """Answer one message of a session, from memory, and learn from it.

        Args:
            message: What the user said.
            session_id: The conversation; the agent's default session when omitted.
            user_id: Whose memory is read and written; the agent's ``user_id`` (or the
                session's user) when omitted.

        Returns:
            The answer. When no model is reachable, an answer saying so (never an exception).

        Raises:
            InvalidInputError: an empty or oversized message, a bad identifier.
            ScopeError: the session belongs to another user.
        """
        return (await self.respond(message, session_id=session_id, user_id=user_id)).answer

    async def respond(
        self, message: str, session_id: str | None = None, user_id: str | None = None
    ) -> AgentReply:
        """Like :meth:`chat`, returning the answer with the memory shown, tools run and errors."""
        reply: AgentReply | None = None
        async for event in self._turn(message, session_id, user_id, stream=False):
            if isinstance(event, AgentReply):
                reply = event
        assert reply is not None
        return reply

    async def stream(
        self, message: str, session_id: str | None = None, user_id: str | None = None
    ) -> AsyncIterator[str]:
        """Like :meth:`chat`, yielding the answer in chunks as the model produces them.

        With a client implementing :class:`~sagewai.agent.StreamingLLMClient` the chunks are the
        model's deltas; otherwise the answer arrives as one chunk. Consume the stream to its end:
        a stream closed early records nothing of the turn.

        Example:
            >>> async def show(agent: UniversalAgent) -> None:
            ...     async for chunk in agent.stream("What do you know about me?"):
            ...         print(chunk, end="", flush=True)
        """
        async for event in self._turn(message, session_id, user_id, stream=True):
            if isinstance(event, str):
                yield event

    async def _turn(
        self, message: str, session_id: str | None, user_id: str | None, *, stream: bool
    ) -> AsyncIterator[str | AgentReply]:
        if self._closed:
            raise ConfigurationError(f"agent {self.name!r} is closed")
        text = _check_message(message)
        while True:
            session = await self._session(session_id or self.default_session_id, user_id)
            await session.lock.acquire()
            if not session.ended:
                break
            session.lock.release()  # it ended while this turn waited: resume it afresh
        try:
            user_message_id = new_id()
            forgotten: list[ForgottenFacts] = []
            if self.settings.learn:
                await self.learner.ready()  # what an earlier process accepted is stored first
            recollection = await self.recaller.recall(
                text, user_id=session.user_id, session_id=session.session_id
            )
            found = [recalled.fact for recalled in recollection.facts]
            profile, shown = await self._profile(session.user_id, text, found)
            items = recollection.items(session.ref_for)
            exchange = await self._exchange(shown, text, found, {i.fact_id for i in items}, session)
            block = render_memory_block(
                [*exchange, *items],
                budget=self.settings.memory_token_budget,
                count_tokens=self.count_tokens,
            )
            if self.bridge is not None and block.fact_ids:
                self.bridge.note_recalled(session.session_id, block.fact_ids)
            messages = [
                {"role": "system", "content": self._system_message(block, profile)},
                *session.history.messages(),
                {"role": "user", "content": text},
            ]
            toolbox = self._toolbox(session, user_message_id, forgotten)
            result = LoopResult()
            async for event in run_tool_loop(
                self.llm,
                messages,
                toolbox,
                max_steps=self.settings.max_steps,
                timeout=self.settings.model_timeout,
                stream=stream,
            ):
                if isinstance(event, TextChunk):
                    yield event.text
                else:
                    result = event
            answered = result.error is None and bool(result.answer.strip())
            answer_id = new_id()
            if result.error is not None:
                # Learn first: the reply says the message was saved only when it is durable.
                saved = await self._learn(session, text, user_message_id, None, forgotten)
                answer = self._failure_reply(result.error, block, saved=saved)
                yield answer
                self._record(session, text, user_message_id, answer, answer_id, result, forgotten)
            else:
                if not answered:
                    logger.warning("agent %r: the model returned an empty answer", self.name)
                    answer = EMPTY_ANSWER
                    yield answer
                else:
                    answer = result.answer
                self._record(session, text, user_message_id, answer, answer_id, result, forgotten)
                await self._learn(
                    session,
                    text,
                    user_message_id,
                    (answer, answer_id) if answered else None,
                    forgotten,
                )
            yield AgentReply(
                answer=answer,
                session_id=session.session_id,
                user_id=session.user_id,
                memory=block,
                profile=profile,
                steps=result.steps,
                tool_results=tuple(result.tool_results),
                usage=result.usage,
                model_error=None if result.error is None else describe_error(result.error),
                offline=result.error is not None and is_model_unreachable(result.error),
                reached_step_cap=result.reached_step_cap,
            )
        finally:
            session.lock.release()

    async def _profile(
        self, user_id: str | None, message: str, found: Sequence[Fact]
    ) -> tuple[ProfileSection, list[Fact]]:
        """The user's standing profile (and the project's team rules), fitted to its budget
        (the entries ``message`` is about first when it does not all fit; ``found``: what
        recall found for it), and the entries it shows."""
        budget = self.settings.profile_tokens
        if budget <= 0:
            return ProfileSection("", 0), []
        entries = await self.context.profile(user_id=user_id).entries()
        first = [entry.id for entry in about(entries, message, limit=None, recalled=found)]
        section = render_profile(
            entries, budget=budget, count_tokens=self.count_tokens, first=first
        )
        shown = set(section.fact_ids)
        return section, [entry for entry in entries if entry.id in shown]

    async def _exchange(
        self,
        entries: Sequence[Fact],
        message: str,
        found: Sequence[Fact],
        recalled: set[str | None],
        session: AgentSession,
    ) -> list[MemoryItem]:
        """The user's turns that followed the statement of the entries ``message`` is about
        (``found``: what recall found for it), as said (:mod:`sagewai.agent._exchange`), minus
        what recall already shows."""
        out: list[MemoryItem] = []
        users = [e for e in entries if e.user_id is not None]
        for entry in about(users, message, recalled=found):
            for record in await self._exchanges.turns(entry):
                if record.id in recalled:
                    continue
                recalled.add(record.id)
                out.append(
                    fact_item(RecalledFact(record, 0.0), session.ref_for(record.id), message)
                )
        return out

    def _system_message(self, block: MemoryBlock, profile: ProfileSection) -> str:
        parts = [self.system_prompt]
        if self.settings.memory_tools:
            parts.append(MEMORY_TOOL_GUIDE)
        parts.append(f"Today is {utcnow().date().isoformat()}.")
        if profile.text:
            parts.append(profile.text)
        if block.text:
            parts.append(block.text)
        return "\n\n".join(parts)

    def _failure_reply(self, error: Exception, block: MemoryBlock, *, saved: bool) -> str:
        if not is_model_unreachable(error):
            logger.warning("agent %r: the model call failed: %s", self.name, describe_error(error))
        elif not self._offline_logged:
            self._offline_logged = True
            logger.warning(
                "agent %r: no language model is reachable (%s); replies say so and list "
                "recalled memory, and the agent keeps learning (logged once)",
                self.name,
                describe_error(error),
            )
        return failure_reply(error, block, saved=saved)

    # ------------------------------------------------------------------ sessions

    async def _session(self, session_id: str, user_id: str | None) -> AgentSession:
        validate_identifier(session_id, "session_id")
        if user_id is not None:
            validate_identifier(user_id, "user_id")
        async with self._sessions_lock:
            session = self._sessions.get(session_id)
            if session is None:
                session = await self._open_session(session_id, user_id)
                self._sessions[session_id] = session
        if user_id is not None and user_id != session.user_id:
            raise ScopeError(f"session {session_id!r} belongs to another user")
        return session

    async def _open_session(self, session_id: str, user_id: str | None) -> AgentSession:
        owner = user_id if user_id is not None else self.user_id
        session = AgentSession(
            session_id=session_id,
            user_id=owner,
            history=ConversationHistory(window=self.settings.history_window),
        )
        if self.context.episodes.enabled:
            saved = await self.context.episodes.list(session_id=session_id, limit=1)
            if saved:
                if saved[0].user_id != owner:
                    raise ScopeError(f"session {session_id!r} belongs to another user")
                session.seed(list(saved[0].messages))  # a session resumed after it ended
        return session

    def _episode_id(self, session_id: str) -> str:
        return str(uuid.uuid5(_EPISODE_NAMESPACE, f"{self.context.project_id}\x1f{session_id}"))

    async def end_session(self, session_id: str) -> str | None:
        """Finish learning from a session and save it as an episode; return the episode id.

        Waits until the bridge and the graph builder have stored everything from the session,
        then saves its whole transcript (``None`` when there is no episode store or nothing
        was said). Chatting on the same session id later resumes it from the episode.
        """
        session = self._sessions.get(session_id)
        if session is None:
            return None
        async with session.lock:
            if session.ended:
                return None
            await self.flush(session_id)
            said = [m for m in session.transcript if not m.is_empty]
            episode_id: str | None = None
            if self.context.episodes.enabled and said:
                episode_id = await self.context.episodes.save(
                    session_id,
                    said,
                    metadata={"agent": self.name},
                    user_id=session.user_id,
                    episode_id=self._episode_id(session_id),
                )
            # Only now: a turn waiting for this session starts over on a resumed one.
            session.ended = True
            if self._sessions.get(session_id) is session:
                del self._sessions[session_id]
            return episode_id

    async def flush(self, session_id: str | None = None) -> None:
        """Wait until what was said so far (in one session, or all) is stored as memory.

        Raises:
            BackendError: the bridge failed to store a background batch.
        """
        await self.learner.flush(session_id)

    async def aclose(self) -> None:
        """End every open session (saving episodes), finish learning and close the bridge.

        The engine is not closed: it belongs to the caller. Safe to call more than once.

        Raises:
            SagewaiError: the first failure met while ending the sessions or closing the bridge
                (everything else is still closed).
        """
        if self._closed:
            return
        self._closed = True
        failures: list[SagewaiError] = []
        for session_id in list(self._sessions):
            try:
                await self.end_session(session_id)
            except SagewaiError as exc:
                logger.error("agent %r: ending session %s failed: %s", self.name, session_id, exc)
                failures.append(exc)
        try:
            await self.learner.aclose()
        except SagewaiError as exc:
            failures.append(exc)
        if failures:
            raise failures[0]

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ tools

    def _toolbox(
        self, session: AgentSession, message_id: str, forgotten: list[ForgottenFacts]
    ) -> ToolBox:
        tools: list[Tool] = []
        if self.settings.memory_tools:

            async def search(query: str, top_k: int) -> str:
                found = await self.recaller.search(
                    query, user_id=session.user_id, session_id=session.session_id, top_k=top_k
                )
                return fact_lines(found, session.ref_for)

            async def save(content: str, fact_type: str, subject: str | None) -> str:
                return await save_fact(
                    self.context, self.bridge, session, message_id, content, fact_type, subject
                )

            async def forget(references: list[str]) -> str:
                ids = [session.resolve(reference) for reference in references]
                report, outcome = await self._forget(ids, session.user_id)
                forgotten.append(outcome)
                refused = f"; not forgotten (unknown or not yours): {len(report.refused)}"
                return f"forgot {report.facts_deleted} fact(s)" + (
                    refused if report.refused else ""
                )

            tools = memory_tools(search=search, save=save, forget=forget)
        return ToolBox([*tools, *self.user_tools], timeout=self.settings.tool_timeout)

    # ------------------------------------------------------------------ forgetting

    async def forget(
        self, fact_ids: Sequence[str], *, user_id: str | None = None
    ) -> AgentForgetReport:
        """Forget facts for good, and every message of this user that could show them again.

        The facts are deleted with the older values they replaced; the messages they came from,
        and messages naming their values, are removed from the user's episodes, from the open
        sessions' histories and transcripts, and the graph relations read from those messages
        are deleted. Only the user's own facts are forgotten (``refused`` lists the others).

        Args:
            fact_ids: Fact ids (for example ``reply.memory.fact_ids``).
            user_id: The user asking; the agent's default user when omitted.
        """
        report, _ = await self._forget(list(fact_ids), user_id or self.user_id)
        return report

    async def _forget(
        self, fact_ids: list[str], user_id: str | None
    ) -> tuple[AgentForgetReport, ForgottenFacts]:
        await self.flush()  # what was said before is stored first, so it cannot come back later
        return await forget_everywhere(
            self.context,
            fact_ids,
            user_id=user_id,
            graph=self.graph,
            sessions=self._sessions.values(),
        )

    # ------------------------------------------------------------------ learning

    @staticmethod
    def _record(
        session: AgentSession,
        text: str,
        text_id: str,
        answer: str,
        answer_id: str,
        result: LoopResult,
        forgotten: list[ForgottenFacts],
    ) -> None:
        """Record the turn in the session's history and transcript."""
        session.record_turn(
            text=text,
            text_id=text_id,
            answer=answer,
            answer_id=answer_id,
            exchanges=result.exchanges,
            forgotten=[pattern for outcome in forgotten for pattern in outcome.patterns()],
        )

    async def _learn(
        self,
        session: AgentSession,
        text: str,
        text_id: str,
        answer: tuple[str, str] | None,
        forgotten: list[ForgottenFacts],
    ) -> bool:
        """Hand the turn to the learners; True when the user's message is durably saved."""
        if not self.settings.learn or forgotten:
            return False  # a turn that asked to forget is not learned from: it restates the fact
        messages = [LearnedMessage("user", text, text_id, session.user_id)]
        if answer is not None and self.settings.learn_from_answers:
            messages.append(LearnedMessage("assistant", answer[0], answer[1], self.name))
        return await self.learner.learn(
            messages, session_id=session.session_id, user_id=session.user_id
        )
