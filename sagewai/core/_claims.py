"""The write-time rules of reconciliation: is a new fact a change, a repeat, or new?

Pure functions of facts (no store, no model), written once for their two users: the bridge's
reconciling writer decides ADD / UPDATE / NOOP for each new fact with them
(:mod:`sagewai.context._reconcile`), and consolidation re-applies the same notion of "same claim"
and "negation" to facts already stored (:mod:`sagewai.intelligence.consolidation`). They sit in
the core so that neither of those layers imports the other.

* ``reconcile.triple`` (UPDATE): same subject, same single-valued predicate, a different object
  ("lives in Paris" -> "lives in Berlin").
* ``reconcile.change`` (UPDATE): the candidate states a change (:class:`StatedChange`: "I
  switched from Vim to Neovim", "my new e-mail is ...") and ends what it names: the value it
  replaces, or every other value of a predicate that a change renews (``email``, ``phone``).
  A standing instruction or preference is also ended by one about the same topic that says it
  is a change or reverses it ("you can deploy on Fridays now" ends "never deploy on Fridays";
  :mod:`sagewai.core._standing_topics`).
* A change that does not say of what ("Amara just switched over to Zalando": ``changed_to``) is
  named before it is decided, from the subject's live claims
  (:func:`unnamed_change_predicate`), then decided like any change.
* ``reconcile.negation`` (UPDATE): the candidate negates an existing statement, by triple
  ("likes tea" / ``likes tea`` negated) or, without triples, by wording ("Alice likes tea" /
  "Alice does not like tea").
* ``reconcile.duplicate`` (NOOP): the same triple, or a cosine similarity at or above the
  threshold with the same exact values.
* ``reconcile.new`` (ADD): anything else.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from sagewai.core._predicates import (
    NAMED_VALUES,
    RENEWABLE,
    USES_PREFIX,
    canonical_polarity,
    is_single_valued,
    normalize_predicate,
)
from sagewai.core._records import Fact, Provenance
from sagewai.core._standing_topics import ends_standing, is_standing_predicate

__all__ = [
    "DEFAULT_DUPLICATE_THRESHOLD",
    "Claim",
    "Neighbour",
    "ReconcileAction",
    "ReconcileDecision",
    "StatedChange",
    "already_sourced",
    "decide",
    "is_echo",
    "negation_pair",
    "supersedes",
    "unnamed_change_predicate",
]

DEFAULT_DUPLICATE_THRESHOLD = 0.92
"""Cosine at or above which two facts with the same exact values say the same thing."""


class ReconcileAction(StrEnum):
    """What to do with a candidate fact."""

    ADD = "add"
    UPDATE = "update"
    NOOP = "noop"


@dataclass(frozen=True, slots=True)
class Neighbour:
    """An existing fact near a candidate, with their cosine similarity."""

    fact: Fact
    similarity: float


@dataclass(frozen=True, slots=True)
class ReconcileDecision:
    """The verdict on one candidate.

    Attributes:
        action: ADD, UPDATE or NOOP.
        rule: The rule that decided (``reconcile.triple``, ``reconcile.duplicate``, ...).
        reason: Why, in words (recorded in the facts' history).
        targets: UPDATE: the facts the candidate supersedes; NOOP: the fact it repeats.
    """

    action: ReconcileAction
    rule: str
    reason: str
    targets: tuple[Fact, ...] = ()


# --------------------------------------------------------------------------- claims


_ARTICLE = re.compile(r"^(?:the|a|an)\s+")
_SPACES = re.compile(r"\s+")


def _loose(text: str) -> str:
    folded = _SPACES.sub(" ", text.casefold()).strip().strip(".,;:!?\"'")
    return _ARTICLE.sub("", folded)


@functools.lru_cache(maxsize=4096)
def _canonical(predicate: str, negated: bool) -> tuple[str, bool]:
    name = normalize_predicate(predicate) or _loose(predicate).replace(" ", "_")
    return canonical_polarity(name, negated)


@dataclass(frozen=True, slots=True)
class Claim:
    """A fact's triple, normalised so two facts can be compared.

    The predicate is the vocabulary name with antonyms folded (``dislikes`` is ``likes``
    negated), subject and object are compared loosely (case, spacing, a leading article).
    """

    subject: str
    predicate: str
    object: str
    negated: bool

    @classmethod
    def of(cls, fact: Fact) -> Claim | None:
        """The claim of a fact, or ``None`` without a full triple."""
        if not (fact.subject and fact.predicate and fact.object):
            return None
        predicate, negated = _canonical(fact.predicate, fact.metadata.get("negated") is True)
        return cls(_loose(fact.subject), predicate, _loose(fact.object), negated)

    def same_group(self, other: Claim) -> bool:
        """Same subject and predicate."""
        return self.subject == other.subject and self.predicate == other.predicate

    def contradicts(self, other: Claim) -> bool:
        """A statement and its negation, or two different values of a single-valued predicate."""
        if not self.same_group(other):
            return False
        if self.object == other.object:
            return self.negated != other.negated
        return not self.negated and not other.negated and is_single_valued(self.predicate)


@dataclass(frozen=True, slots=True)
class StatedChange:
    """A fact that says it is a change ("moved to", "switched from A to B", "my new X is").

    The extractors mark such a fact in its metadata: ``change`` (the word that said so) and,
    when the statement names it, ``replaces`` (the value before: "replaced Jenkins with ...").
    A single-valued predicate needs no mark (any new value ends the old); the mark lets a change
    end a value of a multi-valued predicate: the one it names, or, for a predicate a change
    renews (:data:`~sagewai.core._predicates.RENEWABLE`: ``email``, ``phone``), the others.
    """

    replaces: str | None

    @classmethod
    def of(cls, fact: Fact) -> StatedChange | None:
        """The change ``fact`` states, or ``None``."""
        change, replaces = fact.metadata.get("change"), fact.metadata.get("replaces")
        if not change and not replaces:
            return None
        return cls(_loose(replaces) if isinstance(replaces, str) and replaces.strip() else None)


def supersedes(claim: Claim, change: StatedChange | None, other: Claim) -> bool:
    """True when a statement of ``claim`` ends ``other``: it contradicts it, or it states a
    change that names ``other``'s value or renews its predicate.

    The value a change names may have been said with the general ``uses`` ("we use Jenkins"
    is ended by "we replaced Jenkins with GitHub Actions", read as ``uses_ci``).

    Example:
        >>> new = Claim("user", "email", "b@x.io", False)
        >>> old = Claim("user", "email", "a@x.io", False)
        >>> supersedes(new, None, old), supersedes(new, StatedChange(None), old)
        (False, True)
        >>> ci = Claim("user", "uses_ci", "github actions", False)
        >>> supersedes(ci, StatedChange("jenkins"), Claim("user", "uses", "jenkins", False))
        True
    """
    if claim.contradicts(other):
        return True
    if (
        claim.subject == other.subject
        and is_standing_predicate(claim.predicate)
        and is_standing_predicate(other.predicate)
        and claim.object != other.object
    ):
        # A standing instruction or preference changed in other words ("you can deploy on
        # Fridays now" ends "never deploy on Fridays"): sagewai.core._standing_topics.
        return ends_standing(
            claim.object,
            other.object,
            changed=change is not None,
            replaces=None if change is None else change.replaces,
        )
    if change is None or claim.negated or other.negated or claim.subject != other.subject:
        return False
    if other.object == claim.object:
        return False
    if change.replaces is not None:
        return other.object == change.replaces and other.predicate in (claim.predicate, "uses")
    return other.predicate == claim.predicate and claim.predicate in RENEWABLE


_AT_PLACES = frozenset({"works_at", "lives_in", "studies_at"})
"""What "X is at Y now" can be a change of: where X works, lives or studies."""


def unnamed_change_predicate(
    claim: Claim, held: Iterable[Claim], *, via: str | None = None
) -> str | None:
    """The predicate a change of unnamed kind changes, or ``None`` when it cannot be told.

    "Amara just switched over to Zalando" does not say what changed. When Amara holds exactly
    one named value that such a change can replace (where she lives, works or studies, who
    manages her, what she drives, the tool of a kind she uses: :data:`NAMED_VALUES`), the change
    is of that; a value she already holds is a repeat of it. ``via`` narrows by the word before
    the value ("is *at* Zalando now": a workplace, a home or a school). Two candidates or none:
    ``None``, and the statement stays an unnamed change that ends nothing.

    Example:
        >>> new = Claim("amara", "changed_to", "zalando", False)
        >>> held = [Claim("amara", "works_at", "stripe", False)]
        >>> unnamed_change_predicate(new, held)
        'works_at'
        >>> held.append(Claim("amara", "uses_editor", "vim", False))
        >>> unnamed_change_predicate(new, held) is None
        True
        >>> unnamed_change_predicate(new, held, via="at")
        'works_at'
    """
    kinds: set[str] = set()
    for other in held:
        if other.subject != claim.subject or other.negated:
            continue
        if not (other.predicate in NAMED_VALUES or other.predicate.startswith(USES_PREFIX)):
            continue
        if other.object == claim.object:
            return other.predicate  # "Ravi is at Zalando now" while memory says so: a repeat
        kinds.add(other.predicate)
    if via == "at":
        kinds &= _AT_PLACES
    return kinds.pop() if len(kinds) == 1 else None


# --------------------------------------------------------------------------- wording

_NEGATION = re.compile(r"\b(?:not|never|no longer|neither|nor)\b|n['’]t\b", re.IGNORECASE)
_FILLER = frozenset(
    """
    not never no longer neither nor do does did is am are was were has have had anymore
    any more t don doesn didn isn aren wasn weren hasn haven won can cannot
    """.split()  # noqa: SIM905 - a word list reads best as prose
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _core_words(text: str) -> frozenset[str]:
    words = (w.casefold() for w in _WORD.findall(text))
    return frozenset(_stem(w) for w in words if w not in _FILLER)


def negation_pair(a: str, b: str, *, overlap: float = 0.8) -> bool:
    """True when one text negates the other: one is negated, and without the negation and its
    auxiliaries they say the same words.

    Example:
        >>> negation_pair("Alice likes tea", "Alice does not like tea")
        True
        >>> negation_pair("Alice likes tea", "Bob does not like coffee")
        False
    """
    if bool(_NEGATION.search(a)) == bool(_NEGATION.search(b)):
        return False
    words_a, words_b = _core_words(a), _core_words(b)
    if not words_a or not words_b:
        return False
    return len(words_a & words_b) / len(words_a | words_b) >= overlap


def _exact(fact: Fact) -> frozenset[str]:
    return frozenset(fact.exact_values)


# --------------------------------------------------------------------------- the rules


def decide(
    candidate: Fact,
    neighbours: Sequence[Neighbour],
    *,
    duplicate_threshold: float = DEFAULT_DUPLICATE_THRESHOLD,
) -> ReconcileDecision:
    """Decide ADD, UPDATE or NOOP for ``candidate`` against existing facts of its scope.

    Rules in order: triple contradiction or stated change (UPDATE, every fact it ends, see
    :func:`supersedes`), same triple (NOOP),
    negation by wording (UPDATE), similarity at or above ``duplicate_threshold`` with equal exact
    values and no differing triple (NOOP), else ADD. Neighbours of another scope are ignored.

    Example:
        >>> old = Fact(project_id="p", content="Alice lives in Paris", subject="Alice",
        ...            predicate="lives_in", object="Paris")
        >>> new = Fact(project_id="p", content="Alice lives in Berlin", subject="Alice",
        ...            predicate="lives_in", object="Berlin")
        >>> decide(new, [Neighbour(old, 0.8)]).action
        <ReconcileAction.UPDATE: 'update'>
    """
    scope = candidate.scope_key
    same_scope = [n for n in neighbours if n.fact.scope_key == scope and n.fact.id != candidate.id]
    claim = Claim.of(candidate)
    change = StatedChange.of(candidate)
    if claim is not None:
        contradicted: list[Fact] = []
        repeated: Neighbour | None = None
        for neighbour in same_scope:
            other = Claim.of(neighbour.fact)
            if other is None:
                continue
            if supersedes(claim, change, other):
                contradicted.append(neighbour.fact)
            elif other == claim and (
                repeated is None or neighbour.similarity > repeated.similarity
            ):
                repeated = neighbour
        if contradicted:
            first = Claim.of(contradicted[0])
            assert first is not None
            negation = first.object == claim.object
            if negation:
                rule, why = "reconcile.negation", "negates the earlier statement"
            elif first.contradicts(claim):
                rule = "reconcile.triple"
                why = (
                    f"{claim.predicate!r} holds one value at a time: {first.object!r} -> "
                    f"{claim.object!r}"
                )
            else:
                rule = "reconcile.change"
                why = f"states a change: {first.object!r} -> {claim.object!r}"
            return ReconcileDecision(
                ReconcileAction.UPDATE, rule, f"{claim.subject!r} {why}", tuple(contradicted)
            )
        if repeated is not None:
            return ReconcileDecision(
                ReconcileAction.NOOP,
                "reconcile.duplicate",
                f"same statement ({claim.subject!r} {claim.predicate} {claim.object!r})",
                (repeated.fact,),
            )
    negated = [n.fact for n in same_scope if negation_pair(candidate.content, n.fact.content)]
    if negated:
        return ReconcileDecision(
            ReconcileAction.UPDATE,
            "reconcile.negation",
            f"negates {negated[0].content!r}",
            tuple(negated),
        )
    for neighbour in sorted(same_scope, key=lambda n: -n.similarity):
        if neighbour.similarity < duplicate_threshold:
            break
        other = Claim.of(neighbour.fact)
        if claim is not None and other is not None and other != claim:
            continue  # similar wording, different statements ("likes tea" / "likes coffee")
        if _exact(candidate) != _exact(neighbour.fact):
            continue  # "port 5432" is not "port 5433", however close the sentences are
        return ReconcileDecision(
            ReconcileAction.NOOP,
            "reconcile.duplicate",
            f"cosine {neighbour.similarity:.3f} >= {duplicate_threshold}, same exact values",
            (neighbour.fact,),
        )
    return ReconcileDecision(
        ReconcileAction.ADD, "reconcile.new", "no equivalent or conflicting fact"
    )


def is_echo(role: str, best_similarity: float, *, threshold: float) -> bool:
    """True when an assistant turn restates what memory already holds (not new knowledge).

    Only the assistant's own turns are echoes: a user repeating a fact is evidence (a NOOP that
    reinforces it), the agent reading its memory back is not.
    """
    return role == "assistant" and best_similarity >= threshold


def already_sourced(fact: Fact, source: Provenance) -> bool:
    """True when ``fact`` already records ``source`` (the same message of the same session).

    A replayed message must not reinforce a fact twice: this is what makes NOOP idempotent.
    """
    if source.message_id is None:
        return False
    return any(
        s.session_id == source.session_id and s.message_id == source.message_id
        for s in fact.sources
    )
