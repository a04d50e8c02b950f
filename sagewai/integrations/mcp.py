"""An MCP server over a :class:`~sagewai.context.engine.ContextEngine`: memory for MCP clients.

Why: Claude Desktop, Cursor and IDE agents reach tools through the Model Context Protocol. This
module gives them a project's memory as six tools and a resource, with the guarantees sagewai
holds everywhere else: every call is confined to the user and project the server was started
for (or to those it was told to allow), every change is audited and can be undone, and a dry run
says what a forget would do without doing it.

Tools:

* ``remember``: a message through the :class:`~sagewai.context.bridge.MemoryBridge`
  (extraction, reconciliation), or a statement stored verbatim as one fact;
* ``recall``: hybrid search at a scope, optionally ``as_of`` a past time;
* ``forget``: a subject, a session or one fact; archived (revertible) by default,
  ``permanent`` deletes the facts and their vectors; ``dry_run`` only reports;
* ``history``: every recorded change of a fact;
* ``revert``: undo one recorded change (a forget, a supersession, a merge);
* ``list_facts`` and the resource ``sagewai://facts``: the user's facts.

A tool call may name a ``project`` and a ``user``; one outside the server's allow-lists is
refused with an MCP error of code :data:`SCOPE_REFUSED` before anything is read. Bad arguments
come back as tool errors (``isError``) with the reason, never as a traceback.

Example:
    >>> import asyncio
    >>> from mcp import Client
    >>> from sagewai.context.engine import ContextEngine
    >>> from sagewai.testing import FakeEmbedder
    >>> async def demo() -> str:
    ...     engine = ContextEngine.in_memory(project_id="demo", embedder=FakeEmbedder())
    ...     server = build_mcp_server(engine, user_id="alice")
    ...     async with Client(server) as client:
    ...         await client.call_tool("remember", {"text": "Alice likes green tea",
    ...                                             "mode": "fact"})
    ...         found = await client.call_tool("recall", {"query": "what tea?"})
    ...         return found.structured_content["results"][0]["content"]
    >>> asyncio.run(demo())
    'Alice likes green tea'
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Collection
from contextlib import asynccontextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import Field

from sagewai._optional import require
from sagewai.context.scope import validate_identifier
from sagewai.errors import FactNotFoundError, InvalidInputError, SagewaiError
from sagewai.records import ChangeAction, Fact, FactChange, FactStatus, new_id

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from sagewai.context.bridge import MemoryBridge
    from sagewai.context.engine import ContextEngine
    from sagewai.intelligence.extraction.base import FactExtractor

__all__ = ["SCOPE_REFUSED", "ScopeRefusedError", "ScopedMemory", "build_mcp_server", "fact_view"]

SCOPE_REFUSED = -32003
"""The MCP error code of a call naming a project or user the server does not allow."""

_T = TypeVar("_T")
_FACTS_URI = "sagewai://facts"
_FACTS_TEMPLATE = "sagewai://projects/{project}/users/{user}/facts"
_LIST_LIMIT = 1000


class ScopeRefusedError(InvalidInputError):
    """A call named a project or user outside what the server was started for."""


def fact_view(fact: Fact) -> dict[str, Any]:
    """The fields of a fact a client needs to read and act on it, JSON-ready."""
    data = fact.model_dump(
        mode="json",
        include={
            "id",
            "content",
            "fact_type",
            "kind",
            "scope",
            "user_id",
            "session_id",
            "subject",
            "predicate",
            "object",
            "confidence",
            "status",
            "tags",
            "created_at",
            "valid_from",
            "valid_to",
            "superseded_by",
            "merged_into",
        },
    )
    return {key: value for key, value in data.items() if value not in (None, [], ())}


def _change_view(change: FactChange) -> dict[str, Any]:
    return change.model_dump(mode="json", exclude_none=True)


def _parse_time(value: str | None, what: str) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError as exc:
        raise InvalidInputError(f"{what} must be an ISO 8601 time, got {value!r}") from exc


class ScopedMemory:
    """The memory operations of the MCP server, confined to allowed projects and users.

    The MCP layer only translates arguments and errors; every scoping decision is made here, so
    it holds for any front end built on this class.

    Args:
        engine: The engine of the default project (its stores are shared with the engines of
            the other allowed projects).
        user_id: The default user: facts are written to and read from this user's scope.
        allowed_projects: Other projects a call may name.
        allowed_users: Other users a call may name.
        fact_extractor: The bridge's extractor (default: the offline rules).
    """

    def __init__(
        self,
        engine: ContextEngine,
        *,
        user_id: str,
        allowed_projects: Collection[str] = (),
        allowed_users: Collection[str] = (),
        fact_extractor: FactExtractor | None = None,
    ) -> None:
        self.engine = engine
        self.user_id = validate_identifier(user_id, "user_id")
        self.projects = {engine.project_id} | {
            validate_identifier(p, "project_id") for p in allowed_projects
        }
        self.users = {self.user_id} | {validate_identifier(u, "user_id") for u in allowed_users}
        self._extractor = fact_extractor
        self._engines: dict[str, ContextEngine] = {engine.project_id: engine}
        self._bridges: dict[str, MemoryBridge] = {}

    # ------------------------------------------------------------------ scoping

    def resolve(self, project: str | None, user: str | None) -> tuple[ContextEngine, str]:
        """The engine and user a call may act on.

        Raises:
            ScopeRefusedError: the call names a project or user that is not allowed.
        """
        project = self.engine.project_id if project is None else project
        user = self.user_id if user is None else user
        if project not in self.projects:
            raise ScopeRefusedError(f"project {project!r} is not served here")
        if user not in self.users:
            raise ScopeRefusedError(f"user {user!r} is not served here")
        return self._engine(project), user

    def _engine(self, project: str) -> ContextEngine:
        found = self._engines.get(project)
        if found is None:
            from sagewai.context.engine import ContextEngine
            from sagewai.graph.base import ProjectGraph

            base = self.engine
            graph = base.graph_store
            found = self._engines[project] = ContextEngine(
                metadata_store=base.metadata_store,
                vector_store=base.vector_store,
                project_id=project,
                embedder=base.embedder,
                graph_store=graph.store.for_project(project)
                if isinstance(graph, ProjectGraph)
                else None,
                org_id=base.org_id,
                episode_store=base.episode_store,
                search_config=base.search_config,
            )
        return found

    def _bridge(self, engine: ContextEngine) -> MemoryBridge:
        bridge = self._bridges.get(engine.project_id)
        if bridge is None:
            from sagewai.context.bridge import MemoryBridge
            from sagewai.intelligence.extraction.rules import RuleBasedFactExtractor

            bridge = self._bridges[engine.project_id] = MemoryBridge(
                context_engine=engine,
                extract_every_n_turns=1,
                fact_extractor=self._extractor or RuleBasedFactExtractor(),
                save_episodes=False,
            )
        return bridge

    @staticmethod
    def _owned(fact: Fact, user: str) -> bool:
        return fact.user_id == user

    async def _own_fact(self, engine: ContextEngine, fact_id: str, user: str) -> Fact:
        fact = await engine.get(validate_identifier(fact_id, "fact_id"))
        if not self._owned(fact, user):
            raise ScopeRefusedError(f"fact {fact_id!r} is not one of user {user!r}'s facts")
        return fact

    # ------------------------------------------------------------------ lifecycle

    async def open(self) -> None:
        """Open the stores (a no-op when they are open)."""
        await self.engine.open()

    async def close(self) -> None:
        """Drain the bridges and close the stores (once, through the default engine)."""
        bridges, self._bridges = list(self._bridges.values()), {}
        for bridge in bridges:
            await bridge.aclose()
        await self.engine.close()

    # ------------------------------------------------------------------ operations

    async def remember(
        self,
        text: str,
        *,
        mode: Literal["message", "fact"] = "message",
        role: str = "user",
        session_id: str | None = None,
        fact_type: str = "general",
        subject: str | None = None,
        project: str | None = None,
        user: str | None = None,
    ) -> dict[str, Any]:
        """Store what ``text`` says; returns the facts stored."""
        engine, user = self.resolve(project, user)
        if not text.strip():
            raise InvalidInputError("text must not be empty")
        if mode == "fact":
            fact = await engine.add(
                text, user_id=user, session_id=session_id, fact_type=fact_type, subject=subject
            )
            return {"mode": mode, "stored": [fact_view(fact)]}
        from sagewai.context.bridge import fact_id_for

        session_id = session_id or f"mcp-{user}"
        message_id = new_id()
        extracted = await self._bridge(engine).process_message(
            {"role": role, "content": text, "id": message_id},
            session_id=session_id,
            user_id=user,
        )
        stored: list[dict[str, Any]] = []
        for index in range(len(extracted)):
            try:
                fact = await engine.get(
                    fact_id_for(engine.project_id, session_id, message_id, index)
                )
            except FactNotFoundError:  # reconciled into a fact memory already held
                continue
            stored.append(fact_view(fact))
        result: dict[str, Any] = {
            "mode": mode,
            "extracted": len(extracted),
            "stored": stored,
        }
        if not extracted:
            result["note"] = "nothing worth remembering was found; use mode='fact' to keep it"
        return result

    async def recall(
        self,
        query: str,
        *,
        top_k: int = 5,
        scope: Literal["project", "user", "session"] | None = None,
        session_id: str | None = None,
        as_of: str | None = None,
        project: str | None = None,
        user: str | None = None,
    ) -> dict[str, Any]:
        """Search at ``scope`` (the user's by default) and the scopes above it."""
        engine, user = self.resolve(project, user)
        when = _parse_time(as_of, "as_of")
        results = await engine.search(
            query,
            top_k,
            scope=scope,
            user_id=None if scope == "project" else user,
            session_id=session_id,
            as_of=when,
        )
        return {
            "results": [fact_view(r.fact) | {"score": round(r.score, 4)} for r in results],
        }

    async def forget(
        self,
        *,
        subject: str | None = None,
        session_id: str | None = None,
        fact_id: str | None = None,
        dry_run: bool = False,
        permanent: bool = False,
        project: str | None = None,
        user: str | None = None,
    ) -> dict[str, Any]:
        """Archive (or with ``permanent`` delete) the user's facts that the criteria name."""
        from sagewai.context.forgetting import matching_facts

        engine, user = self.resolve(project, user)
        if fact_id is not None:
            if subject is not None or session_id is not None:
                raise InvalidInputError("name a fact_id, or a subject and/or a session_id")
            facts = [await self._own_fact(engine, fact_id, user)]
        elif subject is None and session_id is None:
            raise InvalidInputError("forget needs a subject, a session_id or a fact_id")
        else:
            facts = await matching_facts(
                engine, subject=subject, session_id=session_id, user_id=user
            )
        if not permanent:
            facts = [f for f in facts if f.status is not FactStatus.ARCHIVED]
        result: dict[str, Any] = {
            "dry_run": dry_run,
            "permanent": permanent,
            "facts": [fact_view(f) for f in facts],
            "count": len(facts),
        }
        if dry_run:
            return result
        if permanent:
            for fact in facts:
                await engine.delete(fact.id, reason="forgotten through MCP")
            return result
        changes: list[dict[str, str]] = []
        for fact in facts:
            await engine.set_status(
                fact.id,
                FactStatus.ARCHIVED,
                reason="forgotten through MCP",
                actor="mcp",
                rule="mcp.forget",
            )
            last = [c for c in await engine.history(fact.id) if c.action is ChangeAction.ARCHIVED]
            changes.append({"fact_id": fact.id, "change_id": last[-1].id})
        result["changes"] = changes
        return result

    async def history(
        self, fact_id: str, *, project: str | None = None, user: str | None = None
    ) -> dict[str, Any]:
        """The recorded changes of one of the user's facts or of a project-wide fact."""
        engine, user = self.resolve(project, user)
        fact = await engine.get(validate_identifier(fact_id, "fact_id"))
        if fact.user_id is not None and fact.user_id != user:
            raise ScopeRefusedError(f"fact {fact_id!r} belongs to another user")
        changes = await engine.history(fact.id)
        return {"fact": fact_view(fact), "changes": [_change_view(c) for c in changes]}

    async def revert(
        self, change_id: str, *, project: str | None = None, user: str | None = None
    ) -> dict[str, Any]:
        """Undo one recorded change of one of the user's facts."""
        engine, user = self.resolve(project, user)
        validate_identifier(change_id, "change_id")
        matching = [c for c in await engine.changes() if c.id == change_id]
        if not matching:
            raise InvalidInputError(f"no change with id {change_id!r} in this project")
        await self._own_fact(engine, matching[0].fact_id, user)
        restored = await engine.revert(change_id, reason="reverted through MCP")
        return {"fact": fact_view(restored)}

    async def list_facts(
        self,
        *,
        status: str | None = "active",
        limit: int = 100,
        project: str | None = None,
        user: str | None = None,
    ) -> dict[str, Any]:
        """The user's own facts (USER and SESSION scope), oldest first."""
        engine, user = self.resolve(project, user)
        if not 1 <= limit <= _LIST_LIMIT:
            raise InvalidInputError(f"limit must be between 1 and {_LIST_LIMIT}")
        statuses = None if status is None else [FactStatus(status)]
        facts = await engine.list(scope="user", user_id=user, statuses=statuses, limit=limit)
        own = [fact_view(f) for f in facts if self._owned(f, user)]
        return {"project": engine.project_id, "user": user, "facts": own}


# ---------------------------------------------------------------------- the MCP layer

Project = Annotated[
    str | None,
    Field(description="another allowed project (default: the one the server was started for)"),
]
User = Annotated[
    str | None,
    Field(description="another allowed user (default: the one the server was started for)"),
]


def build_mcp_server(
    engine: ContextEngine,
    *,
    user_id: str,
    allowed_projects: Collection[str] = (),
    allowed_users: Collection[str] = (),
    fact_extractor: FactExtractor | None = None,
    name: str = "sagewai",
) -> MCPServer[Any]:
    """An MCP server whose tools read and write ``engine``'s memory for ``user_id``.

    The server opens the engine when a session starts and closes it when the session ends.
    Serve it with ``server.run()`` (stdio), ``server.run("streamable-http", host=..., port=...)``
    or connect to it in-process with ``mcp.Client(server)``.

    Args:
        engine: The default project's engine.
        user_id: Every call acts for this user unless it names another allowed one.
        allowed_projects: Other projects (of the same stores) a call may name.
        allowed_users: Other users a call may name.
        fact_extractor: What ``remember`` extracts messages with (default: offline rules).
        name: The server name shown to clients.

    Raises:
        MissingDependencyError: the ``mcp`` extra is not installed.
    """
    require("mcp", extra="mcp", feature="the MCP server")
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError
    from mcp.shared.exceptions import MCPError
    from mcp_types import ToolAnnotations

    memory = ScopedMemory(
        engine,
        user_id=user_id,
        allowed_projects=allowed_projects,
        allowed_users=allowed_users,
        fact_extractor=fact_extractor,
    )

    async def call(operation: Awaitable[_T], *, resource: bool = False) -> _T:
        try:
            return await operation
        except ScopeRefusedError as exc:
            raise MCPError(code=SCOPE_REFUSED, message=str(exc)) from exc
        except (SagewaiError, ValueError) as exc:
            if resource:
                raise ResourceError(str(exc)) from exc
            raise ToolError(str(exc)) from exc

    @asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[dict[str, Any]]:
        await memory.open()
        try:
            yield {}
        finally:
            await memory.close()

    server: MCPServer[Any] = MCPServer(
        name,
        instructions=(
            f"Long-term memory of project {engine.project_id!r} for user {memory.user_id!r}. "
            "Call recall before answering from what you know about the user, remember what the "
            "user tells you that is worth keeping, forget when asked (dry_run first)."
        ),
        lifespan=lifespan,
        log_level="WARNING",
    )
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False)

    @server.tool(description="Store a message through the memory bridge, or a fact verbatim.")
    async def remember(
        text: Annotated[str, Field(description="what was said or should be kept")],
        mode: Annotated[
            Literal["message", "fact"],
            Field(description="message: extract facts from it; fact: store it as one fact"),
        ] = "message",
        role: Annotated[Literal["user", "assistant"], Field(description="who said it")] = "user",
        session_id: Annotated[str | None, Field(description="the conversation")] = None,
        fact_type: Annotated[
            Literal["decision", "preference", "event", "action", "general"],
            Field(description="with mode=fact: what kind of statement it is"),
        ] = "general",
        subject: Annotated[str | None, Field(description="with mode=fact: who it is about")] = None,
        project: Project = None,
        user: User = None,
    ) -> dict[str, Any]:
        return await call(
            memory.remember(
                text,
                mode=mode,
                role=role,
                session_id=session_id,
                fact_type=fact_type,
                subject=subject,
                project=project,
                user=user,
            )
        )

    @server.tool(
        description="Search memory (hybrid search), optionally as it stood at a time.",
        annotations=read_only,
    )
    async def recall(
        query: Annotated[str, Field(description="what to look for, in words")],
        top_k: Annotated[int, Field(ge=1, le=100, description="how many results")] = 5,
        scope: Annotated[
            Literal["project", "user", "session"] | None,
            Field(description="read this scope and those above it (default: the user's)"),
        ] = None,
        session_id: Annotated[str | None, Field(description="with scope=session")] = None,
        as_of: Annotated[
            str | None, Field(description="ISO 8601 time: what was believed then")
        ] = None,
        project: Project = None,
        user: User = None,
    ) -> dict[str, Any]:
        return await call(
            memory.recall(
                query,
                top_k=top_k,
                scope=scope,
                session_id=session_id,
                as_of=as_of,
                project=project,
                user=user,
            )
        )

    @server.tool(
        description=(
            "Forget the user's facts about a subject, of a session, or one fact. Archived "
            "(undo with revert) unless permanent; dry_run reports what would be forgotten."
        )
    )
    async def forget(
        subject: Annotated[str | None, Field(description="who or what to forget")] = None,
        session_id: Annotated[str | None, Field(description="a conversation to forget")] = None,
        fact_id: Annotated[str | None, Field(description="one fact to forget")] = None,
        dry_run: Annotated[bool, Field(description="change nothing, report the plan")] = False,
        permanent: Annotated[
            bool, Field(description="delete the facts and their vectors; cannot be undone")
        ] = False,
        project: Project = None,
        user: User = None,
    ) -> dict[str, Any]:
        return await call(
            memory.forget(
                subject=subject,
                session_id=session_id,
                fact_id=fact_id,
                dry_run=dry_run,
                permanent=permanent,
                project=project,
                user=user,
            )
        )

    @server.tool(
        description="Every recorded change of a fact: what, when, why, by which rule.",
        annotations=read_only,
    )
    async def history(
        fact_id: Annotated[str, Field(description="the fact's id")],
        project: Project = None,
        user: User = None,
    ) -> dict[str, Any]:
        return await call(memory.history(fact_id, project=project, user=user))

    @server.tool(description="Undo one recorded change (as listed by history or forget).")
    async def revert(
        change_id: Annotated[str, Field(description="the change's id")],
        project: Project = None,
        user: User = None,
    ) -> dict[str, Any]:
        return await call(memory.revert(change_id, project=project, user=user))

    @server.tool(description="List the user's own facts, oldest first.", annotations=read_only)
    async def list_facts(
        status: Annotated[
            Literal["active", "superseded", "merged", "flagged", "archived"] | None,
            Field(description="only facts of this status (null: every status)"),
        ] = "active",
        limit: Annotated[int, Field(ge=1, le=_LIST_LIMIT)] = 100,
        project: Project = None,
        user: User = None,
    ) -> dict[str, Any]:
        return await call(memory.list_facts(status=status, limit=limit, project=project, user=user))

    async def facts_json(project: str | None, user: str | None) -> str:
        import json

        listing = await call(memory.list_facts(project=project, user=user), resource=True)
        return json.dumps(listing, ensure_ascii=False)

    @server.resource(
        _FACTS_URI,
        name="facts",
        description="The active facts of the server's user, as JSON.",
        mime_type="application/json",
    )
    async def own_facts() -> str:
        return await facts_json(None, None)

    @server.resource(
        _FACTS_TEMPLATE,
        name="user-facts",
        description="The active facts of an allowed user of an allowed project, as JSON.",
        mime_type="application/json",
    )
    async def user_facts(project: str, user: str) -> str:
        return await facts_json(project, user)

    return server
