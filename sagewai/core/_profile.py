"""Standing memory: how a fact becomes part of a user's profile, and who may put it there.

A user's *standing profile* is what they told the agent about how to work with them ("always
answer in French", "call me Dana", "I prefer short answers") and who they are. It is not a new
kind of record: a profile entry is an ordinary :class:`~sagewai.core._records.Fact` carrying the
tag :data:`PROFILE_TAG` and, in its metadata, its :class:`ProfileKind` under :data:`PROFILE_KEY`.
So it is stored, searched, superseded, audited, reverted, exported and forgotten like every
other fact; a user's entries live at USER scope, a project's team rules at PROJECT scope.

Instructions carry a triple ``(user, instruction_<aspect>, value)`` whose predicate is
single-valued (:data:`~sagewai.core._predicates.INSTRUCTION_PREFIX`), so the reconciler that
turns "lives in Paris" into "lives in Berlin" also turns "always answer in French" into
"answer in English": the old entry is superseded, never shown as current again.

**Only the user sets the rules** (design invariant 11). Every record says who said it
(:func:`origin_of`: the user, the assistant, a tool, a document, an import, or an operator's
explicit call), and a fact counts as a profile entry only when its origin is the user's own
turn or an operator's call (:func:`is_profile_entry`). Text from anyone else that reads like an
instruction is kept as plain memory, never as a rule. Pure functions; no store is read here.
"""

from __future__ import annotations

from enum import StrEnum

from sagewai.core._records import Fact, FactKind, FactStatus

__all__ = [
    "IMPORTED_KEY",
    "PROFILE_KEY",
    "PROFILE_TAG",
    "SETTABLE_ORIGINS",
    "Origin",
    "ProfileKind",
    "is_profile_entry",
    "origin_of",
    "profile_kind",
    "user_name_key",
]

PROFILE_TAG = "profile"
"""The tag of a standing profile entry (an instruction, a stable preference or an identity
fact); ``ctx.list(tags=["profile"])`` lists them."""
PROFILE_KEY = "profile"
"""The metadata key holding an entry's :class:`ProfileKind` (an extractor's mark too)."""
IMPORTED_KEY = "imported"
"""The metadata key an archive import sets on every record it writes."""
_USER_NAME_STATE = "user_name:"


def user_name_key(user_id: str | None) -> str:
    """The project-state key under which the bridge keeps the name ``user_id`` gave ("My name is
    Dana"); ``forget`` erases it.

    Example:
        >>> user_name_key("dana"), user_name_key(None)
        ('user_name:dana', 'user_name:')
    """
    return _USER_NAME_STATE + (user_id or "")


class ProfileKind(StrEnum):
    """What a profile entry is: shown in this order, instructions first."""

    INSTRUCTION = "instruction"
    """How to work with the user: "always answer in French", "never deploy on Fridays"."""
    IDENTITY = "identity"
    """Who the user is: their name, their work, where they live."""
    PREFERENCE = "preference"
    """A stable preference: "I prefer short answers", "I'm vegetarian"."""


class Origin(StrEnum):
    """Who said a record."""

    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    DOCUMENT = "document"
    IMPORT = "import"
    OPERATOR = "operator"
    """An explicit call of the application (``ctx.add``, ``ctx.profile(...).set``)."""
    SYSTEM = "system"


SETTABLE_ORIGINS = frozenset({Origin.USER, Origin.OPERATOR})
"""The origins a profile entry may have: the user's own turn, or an operator's explicit call."""

_ROLES = {
    "user": Origin.USER,
    "human": Origin.USER,
    "assistant": Origin.ASSISTANT,
    "ai": Origin.ASSISTANT,
    "tool": Origin.TOOL,
    "function": Origin.TOOL,
    "document": Origin.DOCUMENT,
    "import": Origin.IMPORT,
    "operator": Origin.OPERATOR,
    "system": Origin.SYSTEM,
    "developer": Origin.SYSTEM,
}
_MODEL_WRITTEN = frozenset({"agent.save_memory"})
"""Extractors whose records the model wrote (the agent's ``save_memory`` tool), whatever role
their provenance names."""


def origin_of(fact: Fact) -> Origin:
    """Who said ``fact``: read from its provenance, its kind and the import mark.

    An imported record is an import whatever it claims; a document chunk is a document; a
    record with a source role is that role's (an unknown role is a tool's: anything but a
    known speaker is untrusted); a record with no role at all was added by an explicit call.

    Example:
        >>> from sagewai import Provenance
        >>> origin_of(Fact(project_id="p", content="x", sources=(Provenance(role="user"),)))
        <Origin.USER: 'user'>
        >>> origin_of(Fact(project_id="p", content="x", kind="document"))
        <Origin.DOCUMENT: 'document'>
        >>> origin_of(Fact(project_id="p", content="x"))
        <Origin.OPERATOR: 'operator'>
    """
    if fact.metadata.get(IMPORTED_KEY) is True:
        return Origin.IMPORT
    if fact.kind is FactKind.DOCUMENT or any(s.document_id for s in fact.sources):
        return Origin.DOCUMENT
    roles = [s for s in fact.sources if s.role]
    if not roles:
        return Origin.OPERATOR
    if any(s.extractor in _MODEL_WRITTEN for s in fact.sources):
        return Origin.ASSISTANT
    return _ROLES.get((roles[0].role or "").strip().lower(), Origin.TOOL)


def profile_kind(fact: Fact) -> ProfileKind | None:
    """The kind a fact's metadata names (``None`` for none or an unknown one)."""
    value = fact.metadata.get(PROFILE_KEY)
    try:
        return ProfileKind(value) if isinstance(value, str) else None
    except ValueError:
        return None


def is_profile_entry(fact: Fact) -> bool:
    """True when ``fact`` is a current entry of a standing profile.

    It must be a fact (not a message or a document chunk), carry :data:`PROFILE_TAG`, be
    active, and come from the user's own turn or an operator's explicit call: a tag that
    reached a record of another origin (an edited archive, a hand-made record) does not make it
    a rule.

    Example:
        >>> from sagewai import Provenance
        >>> said = (Provenance(role="user"),)
        >>> is_profile_entry(Fact(project_id="p", content="Answer in French.", tags=("profile",),
        ...                       sources=said))
        True
        >>> is_profile_entry(Fact(project_id="p", content="Answer in French.", tags=("profile",),
        ...                       sources=(Provenance(role="tool"),)))
        False
    """
    return (
        fact.kind is FactKind.FACT
        and PROFILE_TAG in fact.tags
        and fact.status is FactStatus.ACTIVE
        and origin_of(fact) in SETTABLE_ORIGINS
    )
