"""The standing profile in the LangGraph store: namespace ``("standing", user_id)``.

A graph reads a user's standing instructions, identity and preferences (what
``ctx.profile(user_id=...)`` holds, shown by ``UniversalAgent`` in every turn) as store items,
and a node may set or remove one, the operator's explicit call:

* ``aget(("standing", user), entry_id)``: one entry; ``asearch(("standing", user))``: the
  user's entries then the project's team rules, in the profile's order (a query does not
  reorder them: a profile is read whole); ``("standing",)`` alone is the team rules.
* ``aput(("standing", user), key, {"content": "Always answer in French.", "kind":
  "instruction"})``: a new entry (an instruction about an aspect the profile has replaces the
  old one); a ``key`` naming a current entry replaces that entry; ``adelete`` removes one
  (archived, revertible).

The label is not ``"profile"``: LangMem's profile managers keep their own items under
``("profile", user)``, and those stay ordinary items of the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langgraph.store.base import GetOp, Item, Op, PutOp, SearchItem, SearchOp

from sagewai.core._profile import ProfileKind, profile_kind
from sagewai.core._records import Fact
from sagewai.errors import FactNotFoundError, InvalidInputError

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine

__all__ = ["PROFILE_LABEL", "ProfileItems"]

PROFILE_LABEL = "standing"
"""The first label of the namespaces that hold the standing profile."""


def _value(fact: Fact) -> dict[str, Any]:
    return {
        "content": fact.content,
        "kind": (profile_kind(fact) or ProfileKind.PREFERENCE).value,
        "scope": fact.scope.value,
    }


class ProfileItems:
    """The ``("standing", ...)`` namespaces of a ``SagewaiStore`` (see the module)."""

    def __init__(self, engine: ContextEngine, *, label: str = PROFILE_LABEL) -> None:
        self.engine = engine
        self.label = label

    def handles(self, op: Op) -> bool:
        """True for a get, search or put in a profile namespace."""
        if isinstance(op, GetOp | PutOp):
            namespace: Sequence[str] = op.namespace
        elif isinstance(op, SearchOp):
            namespace = op.namespace_prefix
        else:
            return False
        return bool(namespace) and namespace[0] == self.label

    def _user(self, namespace: Sequence[str], run_user: str | None) -> str | None:
        if len(namespace) > 2:
            raise InvalidInputError(f"a profile namespace is ({self.label!r}, user_id) at most")
        user = namespace[1] if len(namespace) == 2 else None
        if run_user is not None and user not in (None, run_user):
            raise InvalidInputError(
                f"the profile of user {user!r} is not this run's ({run_user!r})"
            )
        return user

    async def run(self, op: Op, run_user: str | None) -> Any:
        """The result of ``op`` (see the module); ``None`` for a put."""
        if isinstance(op, SearchOp):
            try:
                user = self._user(op.namespace_prefix, run_user)
            except InvalidInputError:
                return []  # another user's profile: nothing of it is read in this run
            entries = await self.engine.profile(user_id=user).entries()
            window = entries[op.offset : op.offset + op.limit]
            return [self._item(f, (self.label, *([user] if user else [])), True) for f in window]
        if isinstance(op, GetOp):
            try:
                user = self._user(op.namespace, run_user)
            except InvalidInputError:
                return None
            for fact in await self.engine.profile(user_id=user).entries():
                if fact.id == op.key:
                    return self._item(fact, tuple(op.namespace), False)
            return None
        assert isinstance(op, PutOp)
        user = self._user(op.namespace, run_user)
        profile = self.engine.profile(user_id=user)
        current = {f.id: f for f in await profile.entries() if f.user_id == user}
        if op.value is None:
            if op.key not in current:
                raise FactNotFoundError(op.key)
            await profile.remove(op.key, reason="langgraph store delete")
            return None
        content = op.value.get("content")
        if not isinstance(content, str):
            raise InvalidInputError("a profile item's value needs a 'content' string")
        kind = op.value.get("kind", ProfileKind.INSTRUCTION.value)
        aspect = op.value.get("aspect")
        old = current.get(op.key)
        if old is not None and old.content != content:
            await profile.remove(old.id, reason="replaced through the langgraph store")
        await profile.set(content, kind=kind, aspect=aspect, reason="set through langgraph")
        return None

    @staticmethod
    def _item(fact: Fact, namespace: tuple[str, ...], search: bool) -> Item | SearchItem:
        if search:
            return SearchItem(
                namespace=namespace,
                key=fact.id,
                value=_value(fact),
                created_at=fact.effective_from,
                updated_at=fact.created_at,
                score=None,
            )
        return Item(
            value=_value(fact),
            key=fact.id,
            namespace=namespace,
            created_at=fact.effective_from,
            updated_at=fact.created_at,
        )
