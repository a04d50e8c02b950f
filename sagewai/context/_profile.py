"""A user's standing profile, read and edited: ``ctx.profile(user_id="dana")``.

The profile is the user's standing instructions, stable preferences and identity facts, plus
the project's team rules (see :mod:`sagewai.core._profile` for what an entry is and who may set
one). The bridge fills it from the user's own turns; this object is how an application, the
CLI, MCP and the LangGraph store read it and change it by hand (an operator's explicit call):

* :meth:`Profile.entries`: the current entries, instructions first, newest first;
* :meth:`Profile.set`: a new entry; an instruction about an aspect the profile already has
  supersedes the old one (audited, revertible), like a changed instruction said in chat;
* :meth:`Profile.remove`: an entry archived (audited, revertible with ``ctx.revert``).

Every read and write goes through the engine's port and stays inside the profile's scope.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import JsonValue

from sagewai.core import _lifecycle as lifecycle
from sagewai.core._predicates import INSTRUCTION_PREFIX, normalize_predicate
from sagewai.core._profile import (
    PROFILE_KEY,
    PROFILE_TAG,
    ProfileKind,
    is_profile_entry,
    profile_kind,
)
from sagewai.core._queries import FactQuery, WriteBatch
from sagewai.core._records import Fact, FactKind, FactStatus, FactType, Provenance, utcnow
from sagewai.core._scope import ContextScope, ScopeAddress, validate_identifier
from sagewai.core._standing_topics import ends_standing
from sagewai.errors import FactNotFoundError, InvalidInputError

if TYPE_CHECKING:
    from sagewai.context._access import StoreAccess

__all__ = ["MAX_ENTRIES", "MAX_ENTRY_CHARS", "Profile", "entry_order"]

MAX_ENTRIES = 500
"""Most entries one profile read returns (the newest of each kind first)."""
MAX_ENTRY_CHARS = 2000
"""Longest text :meth:`Profile.set` accepts for one entry."""
_ORDER = {kind: rank for rank, kind in enumerate(ProfileKind)}
_ACTOR = "profile"


def entry_order(fact: Fact) -> tuple[int, int, float]:
    """Sort key of entries: instructions, identity, preferences; user's before team rules;
    newest first."""
    kind = profile_kind(fact) or ProfileKind.PREFERENCE
    team = 1 if fact.scope is not ContextScope.USER else 0
    return (_ORDER[kind], team, -fact.effective_from.timestamp())


class Profile:
    """The standing profile of one user (or, without a user, the project's team rules).

    Made by :meth:`ContextEngine.profile <sagewai.ContextEngine.profile>`; cheap, holds no
    state but its scope.

    Example:
        >>> import asyncio
        >>> from sagewai import ContextEngine
        >>> from sagewai.testing import FakeEmbedder
        >>> async def demo() -> list[str]:
        ...     async with ContextEngine.in_memory(embedder=FakeEmbedder()) as ctx:
        ...         profile = ctx.profile(user_id="dana")
        ...         await profile.set("Always answer in French.")
        ...         await profile.set("Answer in English.")
        ...         return [entry.content for entry in await profile.entries()]
        >>> asyncio.run(demo())
        ['Answer in English.']
    """

    def __init__(self, port: StoreAccess, *, user_id: str | None = None) -> None:
        self._port = port
        self.user_id = None if user_id is None else validate_identifier(user_id, "user_id")

    def __repr__(self) -> str:
        return f"Profile(project_id={self._port.project_id!r}, user_id={self.user_id!r})"

    def _address(self, scope: ContextScope | str | None = None) -> ScopeAddress:
        if scope is not None and ContextScope(scope) is ContextScope.PROJECT:
            return self._port.address(ContextScope.PROJECT)
        if scope is not None and ContextScope(scope) is not ContextScope.USER:
            raise InvalidInputError(
                "a profile entry is the user's (scope 'user') or a team rule "
                "of the project (scope 'project')"
            )
        if self.user_id is None:
            return self._port.address(ContextScope.PROJECT)
        return self._port.address(ContextScope.USER, user_id=self.user_id)

    async def entries(self, *, kinds: Sequence[ProfileKind | str] | None = None) -> list[Fact]:
        """The current entries: the user's own, then the project's team rules, each kind in
        order (instructions, identity, preferences), newest first.

        Only active entries that the user said or an operator set are returned: a superseded
        instruction is gone from here (its successor is listed), and a record of any other
        origin carrying the profile tag is not an entry
        (:func:`~sagewai.core._profile.is_profile_entry`).

        Raises:
            InvalidInputError: an unknown kind.
        """
        try:
            wanted = None if kinds is None else {ProfileKind(k) for k in kinds}
        except ValueError as exc:
            raise InvalidInputError(f"kinds are {', '.join(ProfileKind)}: {exc}") from exc
        keys = self._address().readable_keys()
        found = await self._port.find(
            FactQuery(
                project_id=self._port.project_id,
                scope_keys=keys,
                statuses=(FactStatus.ACTIVE,),
                kinds=(FactKind.FACT,),
                tags_any=(PROFILE_TAG,),
            )
        )
        entries = [
            fact
            for fact in found
            if is_profile_entry(fact)
            and (wanted is None or (profile_kind(fact) or ProfileKind.PREFERENCE) in wanted)
        ]
        entries.sort(key=entry_order)
        return entries[:MAX_ENTRIES]

    async def set(
        self,
        text: str,
        *,
        kind: ProfileKind | str = ProfileKind.INSTRUCTION,
        aspect: str | None = None,
        scope: ContextScope | str | None = None,
        reason: str = "set by the operator",
    ) -> Fact:
        """Add an entry as an operator's explicit call, and return it.

        An instruction is about an aspect (``aspect``, else read from the text: "answer in
        English" is about ``answer_language``); an active instruction about the same aspect
        in the same scope is superseded by the new one (audited; the old stays for ``as_of``
        searches and ``ctx.revert``), and so is one the new text changes in other words ("You
        can deploy on Fridays now." ends "Never deploy on Fridays.";
        :mod:`sagewai.core._standing_topics`). The same text again returns the stored entry.

        Args:
            text: The entry as it should be shown ("Always answer in French.").
            kind: ``instruction``, ``identity`` or ``preference``.
            aspect: What an instruction is about (a word or two, ``answer_language``).
            scope: ``"user"`` (default with a user) or ``"project"`` (a team rule).
            reason: Recorded in the audit log.

        Raises:
            InvalidInputError: empty or oversized text, an unknown kind or scope.
        """
        from sagewai.extraction._instructions import instruction_aspect, read_instructions

        if not isinstance(text, str) or not text.strip():
            raise InvalidInputError("a profile entry needs non-empty text")
        if len(text) > MAX_ENTRY_CHARS:
            raise InvalidInputError(f"a profile entry holds at most {MAX_ENTRY_CHARS} characters")
        try:
            kind = ProfileKind(kind)
        except ValueError as exc:
            raise InvalidInputError(f"kind is one of {', '.join(ProfileKind)}") from exc
        address = self._address(scope)
        text = " ".join(text.split())
        current = [f for f in await self.entries() if f.scope_key == address.key]
        for fact in current:
            if fact.content == text and profile_kind(fact) is kind:
                return fact
        predicate: str | None = None
        if kind is ProfileKind.INSTRUCTION:
            name = aspect if aspect is not None else instruction_aspect(text)
            predicate = normalize_predicate(f"{INSTRUCTION_PREFIX}{name}")
            if predicate is None:
                raise InvalidInputError(f"aspect {aspect!r} is not a usable name")
        read = read_instructions(text) if predicate is not None else []
        change = read[0].metadata.get("change") if read else None
        replaces = read[0].metadata.get("replaces") if read else None
        replaced = [
            f
            for f in current
            if predicate is not None
            and (
                f.predicate == predicate
                or (
                    profile_kind(f) is ProfileKind.INSTRUCTION
                    and ends_standing(
                        text,
                        f.object or f.content,
                        changed=change is not None,
                        replaces=replaces if isinstance(replaces, str) else None,
                    )
                )
            )
        ]
        subject = replaced[0].subject if replaced else (self.user_id or "team")
        metadata: dict[str, JsonValue] = {"negated": False, PROFILE_KEY: kind.value}
        now = utcnow()
        fact = self._port.build_fact(
            text,
            fact_type=FactType.PREFERENCE if kind is not ProfileKind.IDENTITY else FactType.GENERAL,
            scope=address.scope,
            user_id=address.user_id,
            subject=subject,
            predicate=predicate,
            object=text if predicate is not None else None,
            tags=[PROFILE_TAG],
            metadata=metadata,
            source=Provenance(role="operator", extractor=_ACTOR, timestamp=now),
            created_at=now,
            valid_from=now,
        )
        cause = lifecycle.Cause(_ACTOR, "profile.set", reason, at=now)
        upserts, changes = (
            [fact],
            [lifecycle.created(fact, cause, related=[f.id for f in replaced])],
        )
        for old in replaced:
            step = lifecycle.supersede(old, cause, successor_id=fact.id, ends=now)
            upserts.append(step.fact)
            changes.append(step.change)
        await self._port.commit(
            WriteBatch(self._port.project_id, upserts=upserts, changes=changes), new=[fact]
        )
        return fact

    async def remove(self, entry_id: str, *, reason: str = "removed from the profile") -> Fact:
        """Take an entry out of the profile (archived, audited; ``ctx.revert`` restores it).

        Raises:
            FactNotFoundError: no current entry with this id in this profile (another user's
                entry is not found either).
        """
        validate_identifier(entry_id, "entry_id")
        for fact in await self.entries():
            if fact.id == entry_id:
                break
        else:
            raise FactNotFoundError(entry_id)
        step = lifecycle.set_status(
            fact, FactStatus.ARCHIVED, lifecycle.Cause(_ACTOR, "profile.remove", reason)
        )
        await self._port.commit(
            WriteBatch(self._port.project_id, upserts=[step.fact], changes=[step.change])
        )
        return step.fact
