"""The memory operations behind the MCP server, confined to allowed projects and users.

Kept apart from the MCP layer (``sagewai.integrations.mcp``), which only translates arguments
and errors: every scoping decision is made here, with no dependency on the ``mcp`` package, so
it holds for any front end built on :class:`ScopedMemory` and is tested without a transport.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from sagewai.core import _lifecycle as lifecycle
from sagewai.core._queries import WriteBatch
from sagewai.core._records import (
    Fact,
    FactChange,
    FactStatus,
    SearchResult,
    new_id,
)
from sagewai.core._scope import validate_identifier
from sagewai.errors import FactNotFoundError, InvalidInputError

if TYPE_CHECKING:
    from sagewai.context import MemoryBridge
    from sagewai.context._engine import ContextEngine
    from sagewai.extraction._base import FactExtractor

__all__ = ["LIST_LIMIT", "ScopeRefusedError", "ScopedMemory", "fact_view"]

_FORGET_RULE = "mcp.forget"
"""The rule of a forget's archive changes (one run per forget)."""

LIST_LIMIT = 1000
"""Most facts one ``list_facts`` call returns."""


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


def result_view(result: SearchResult) -> dict[str, Any]:
    """A search result for a client: the record, its score, its sources, and its standing."""
    view = fact_view(result.fact) | {
        "score": round(result.score, 4),
        "standing": result.standing.value,
        "related": [fact_view(f) for f in result.related],
    }
    if result.changes:
        view["changes"] = [
            {
                "was": change.old.content,
                "now": None if change.new is None else change.new.content,
                "since": None if change.at is None else change.at.isoformat(),
            }
            for change in result.changes
        ]
    if result.rested_on:
        view["rested_on"] = [
            {"was": c.old.content, "now": None if c.new is None else c.new.content}
            for c in result.rested_on
        ]
    if result.later:
        view["said_later"] = [fact.content for fact in result.later]
    if result.repeats:
        view["said_times"] = 1 + len(result.repeats)
    return view


def _change_view(change: FactChange) -> dict[str, Any]:
    return change.model_dump(mode="json", exclude_none=True)


def _parse_time(value: str | None, what: str) -> datetime | None:
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError as exc:
        raise InvalidInputError(f"{what} must be an ISO 8601 time, got {value!r}") from exc
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)  # naive: UTC


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
            from sagewai.context._engine import ContextEngine

            base = self.engine
            found = self._engines[project] = ContextEngine(
                stores=base.stores,
                project_id=project,
                org_id=base.org_id,
                search_config=base.search_config,
            )
        return found

    def _bridge(self, engine: ContextEngine) -> MemoryBridge:
        bridge = self._bridges.get(engine.project_id)
        if bridge is None:
            from sagewai.context import MemoryBridge
            from sagewai.extraction._rules import RuleBasedFactExtractor

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
        from sagewai.core._ids import fact_id_for

        message_id = new_id()
        # A call without a session is a conversation of its own: unrelated statements of one
        # client are never joined into one context record.
        session_id = session_id or f"mcp-{message_id}"
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
            except FactNotFoundError:  # not written: memory already held it
                continue
            if fact.status in (FactStatus.ACTIVE, FactStatus.FLAGGED):
                stored.append(fact_view(fact))
            # else kept only as provenance (merged into the fact memory already held)
        result: dict[str, Any] = {
            "mode": mode,
            "extracted": len(extracted),
            "stored": stored,
            "already_known": len(extracted) - len(stored),
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
            # One result per source: a message with the facts drawn from it (``related``); a
            # result whose claim changed since says so, with what holds now.
            "results": [result_view(r) for r in results],
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
        from sagewai.context._forgetting import matching_facts, same_source

        engine, user = self.resolve(project, user)
        if fact_id is not None:
            if subject is not None or session_id is not None:
                raise InvalidInputError("name a fact_id, or a subject and/or a session_id")
            fact = await self._own_fact(engine, fact_id, user)
            facts = [fact, *await same_source(engine.port, fact)]
        elif subject is None and session_id is None:
            raise InvalidInputError("forget needs a subject, a session_id or a fact_id")
        else:
            facts = await matching_facts(
                engine.port, subject=subject, session_id=session_id, user_id=user
            )
        if not permanent:
            facts = [f for f in facts if f.status is not FactStatus.ARCHIVED]
        result: dict[str, Any] = {
            "dry_run": dry_run,
            "permanent": permanent,
            "facts": [fact_view(f) for f in facts],
            "count": len(facts),
        }
        if permanent and fact_id is None:
            # Forgetting by subject or session for good is the engine's: every store, with
            # its receipt (a dry run returns the receipt the real run would, changing nothing).
            receipt = await engine.forget(
                subject=subject,
                session_id=session_id,
                user_id=user,
                reason="forgotten through MCP",
                dry_run=dry_run,
            )
            result["receipt"] = receipt.as_dict()
            return result
        if dry_run:
            return result
        if permanent:
            for fact in facts:
                await engine.delete(fact.id, reason="forgotten through MCP")
            return result
        # One forget is one audited run, written at once: reverting any of its changes
        # undoes all of them (the fact and the records it came with).
        cause = lifecycle.Cause("mcp", _FORGET_RULE, "forgotten through MCP", run_id=new_id())
        steps = [lifecycle.set_status(fact, FactStatus.ARCHIVED, cause) for fact in facts]
        if steps:
            await engine.port.commit(
                WriteBatch(
                    engine.project_id,
                    upserts=[step.fact for step in steps],
                    changes=[step.change for step in steps],
                )
            )
        result["changes"] = [{"fact_id": s.fact.id, "change_id": s.change.id} for s in steps]
        if steps:
            result["undo"] = "revert any one of these change ids to undo this whole forget"
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
        changes = await engine.changes()
        matching = [c for c in changes if c.id == change_id]
        if not matching:
            raise InvalidInputError(f"no change with id {change_id!r} in this project")
        named = matching[0]
        # A forget's changes are undone together: the forget archived them as one.
        group = [named]
        if named.rule == _FORGET_RULE and named.run_id is not None:
            group += [
                c
                for c in changes
                if c.run_id == named.run_id and c.rule == _FORGET_RULE and c.id != named.id
            ]
        for change in group:
            await self._own_fact(engine, change.fact_id, user)
        restored = [await engine.revert(c.id, reason="reverted through MCP") for c in group]
        return {"fact": fact_view(restored[0]), "reverted": [fact_view(f) for f in restored]}

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
        if not 1 <= limit <= LIST_LIMIT:
            raise InvalidInputError(f"limit must be between 1 and {LIST_LIMIT}")
        statuses = None if status is None else [FactStatus(status)]
        facts = await engine.list(
            scope="user", user_id=user, statuses=statuses, limit=limit, kinds=["fact"]
        )
        own = [fact_view(f) for f in facts if self._owned(f, user)]
        return {"project": engine.project_id, "user": user, "facts": own}

    async def profile(
        self, *, project: str | None = None, user: str | None = None
    ) -> dict[str, Any]:
        """The user's standing profile (instructions, identity, preferences) and the project's
        team rules, in the order the agent shows them."""
        engine, user = self.resolve(project, user)
        entries = await engine.profile(user_id=user).entries()
        return {
            "project": engine.project_id,
            "user": user,
            "entries": [{**fact_view(f), "profile": f.metadata.get("profile")} for f in entries],
        }

    async def set_profile(
        self,
        *,
        text: str | None = None,
        kind: str = "instruction",
        remove_id: str | None = None,
        project: str | None = None,
        user: str | None = None,
    ) -> dict[str, Any]:
        """Add an entry to the user's profile (an instruction replaces one about the same
        aspect), or remove one of the user's own entries (archived, revertible)."""
        engine, user = self.resolve(project, user)
        profile = engine.profile(user_id=user)
        if (text is None) == (remove_id is None):
            raise InvalidInputError("give either text (to set an entry) or remove_id")
        if remove_id is not None:
            await self._own_fact(engine, remove_id, user)  # never a team rule or another's
            removed = await profile.remove(remove_id, reason="removed through MCP")
            return {"removed": fact_view(removed)}
        fact = await profile.set(text or "", kind=kind, reason="set through MCP")
        return {"set": fact_view(fact)}
