"""Contradiction rules: which facts cannot both be true, and which one wins.

Pure functions over one (subject, predicate) group. Why groups: two facts can only contradict when
they say something about the same subject with the same predicate, so the consolidator loads each
group with one metadata query instead of comparing facts pairwise.

Two facts contradict when one is the negation of the other ("likes tea" / "does not like tea"), or
when the predicate is single-valued and they give different objects ("lives in Paris" / "lives in
London"). A multi-valued predicate ("likes tea", "likes coffee") is never a contradiction.

* ``keep_newer`` replays the group in the order the statements became true; each new statement
  supersedes the beliefs it contradicts, whose validity ends when it began. What was believed at
  any date stays answerable.
* ``keep_higher_confidence`` keeps the most confident statements (the newer on a tie) and
  supersedes those that contradict them.
* ``flag`` changes no belief: every fact in a contradiction is marked FLAGGED for review and stays
  retrievable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sagewai.core._claims import Claim
from sagewai.core._records import Fact, FactStatus
from sagewai.intelligence.consolidation._annotations import keep_apart
from sagewai.intelligence.consolidation._config import ContradictionStrategy
from sagewai.intelligence.consolidation._selection import scope_key_of

__all__ = ["Flagging", "Supersession", "claim_of", "conflict", "resolve_group"]


@dataclass(frozen=True, slots=True)
class Supersession:
    """``loser`` stops being believed because ``winner`` contradicts it.

    Attributes:
        loser: The fact to supersede.
        winner: The fact that replaces it.
        valid_to: When the loser stopped holding (never before it started).
        reason: Why, in words.
    """

    loser: Fact
    winner: Fact
    valid_to: datetime
    reason: str


@dataclass(frozen=True, slots=True)
class Flagging:
    """``fact`` contradicts the facts ``against`` and is flagged for review."""

    fact: Fact
    against: tuple[str, ...]
    reason: str


def claim_of(fact: Fact) -> Claim | None:
    """The normalised claim of a fact (``None`` without a full subject/predicate/object).

    The normalisation is write-time reconciliation's, so both agree on what contradicts.
    """
    return Claim.of(fact)


def conflict(a: Fact, b: Fact) -> bool:
    """True when ``a`` and ``b`` cannot both hold (and no user kept them apart)."""
    if a.id == b.id or scope_key_of(a) != scope_key_of(b):
        return False
    if a.id in keep_apart(b) or b.id in keep_apart(a):
        return False
    claim_a, claim_b = claim_of(a), claim_of(b)
    return claim_a is not None and claim_b is not None and claim_a.contradicts(claim_b)


def _describe(fact: Fact) -> str:
    claim = claim_of(fact)
    if claim is None:
        return repr(fact.content)
    return f"{'not ' if claim.negated else ''}{claim.object!r}"


def _why(loser: Fact, winner: Fact, verdict: str) -> str:
    won, lost = claim_of(winner), claim_of(loser)
    assert won is not None
    assert lost is not None
    kind = (
        "a statement and its negation"
        if won.object == lost.object
        else f"{won.predicate!r} holds one value at a time"
    )
    return (
        f"{won.subject!r} {won.predicate}: {_describe(loser)} contradicts "
        f"{_describe(winner)} ({kind}); {verdict}"
    )


def _time_key(fact: Fact) -> tuple[datetime, datetime, str]:
    return (fact.effective_from, fact.created_at, fact.id)


def _keep_newer(group: Sequence[Fact]) -> list[Supersession]:
    out: list[Supersession] = []
    beliefs: list[Fact] = []
    for fact in sorted(group, key=_time_key):
        losers = [held for held in beliefs if conflict(held, fact)]
        for loser in losers:
            out.append(
                Supersession(
                    loser=loser,
                    winner=fact,
                    valid_to=max(fact.effective_from, loser.effective_from),
                    reason=_why(loser, fact, "the newer statement is kept"),
                )
            )
        beliefs = [held for held in beliefs if held not in losers] + [fact]
    return out


def _keep_higher_confidence(group: Sequence[Fact]) -> list[Supersession]:
    ranked = sorted(
        group,
        key=lambda f: (
            -f.confidence,
            -f.effective_from.timestamp(),
            -f.created_at.timestamp(),
            f.id,
        ),
    )
    kept: list[Fact] = []
    out: list[Supersession] = []
    for fact in ranked:
        winner = next((held for held in kept if conflict(held, fact)), None)
        if winner is None:
            kept.append(fact)
            continue
        out.append(
            Supersession(
                loser=fact,
                winner=winner,
                valid_to=max(winner.effective_from, fact.effective_from),
                reason=_why(
                    fact,
                    winner,
                    f"confidence {winner.confidence:.2f} beats {fact.confidence:.2f}",
                ),
            )
        )
    return out


def _flag(group: Sequence[Fact]) -> list[Flagging]:
    out: list[Flagging] = []
    for fact in sorted(group, key=_time_key):
        if fact.status is not FactStatus.ACTIVE:
            continue
        against = tuple(other.id for other in sorted(group, key=_time_key) if conflict(fact, other))
        if against:
            other = next(o for o in group if o.id == against[0])
            out.append(
                Flagging(
                    fact=fact,
                    against=against,
                    reason=_why(fact, other, "both kept and flagged for review"),
                )
            )
    return out


def resolve_group(
    group: Sequence[Fact], strategy: ContradictionStrategy
) -> list[Supersession] | list[Flagging]:
    """Resolve the contradictions of one (subject, predicate) group.

    Args:
        group: The group's facts (ACTIVE ones; for ``flag`` also the FLAGGED ones, so a fact
            contradicting an already flagged fact is flagged too).
        strategy: How to resolve.

    Returns:
        Supersessions for ``keep_newer`` / ``keep_higher_confidence``, flaggings for ``flag``;
        empty when the group holds no contradiction (so a resolved group resolves to nothing).

    Example:
        >>> from datetime import timedelta
        >>> from sagewai import Fact
        >>> from sagewai.core import utcnow
        >>> t = utcnow()
        >>> paris = Fact(project_id="p", content="Alice lives in Paris", subject="Alice",
        ...              predicate="lives_in", object="Paris", created_at=t - timedelta(days=9))
        >>> london = Fact(project_id="p", content="Alice lives in London", subject="Alice",
        ...               predicate="lives_in", object="London", created_at=t)
        >>> decisions = resolve_group([paris, london], ContradictionStrategy.KEEP_NEWER)
        >>> [s.loser.object for s in decisions]
        ['Paris']
    """
    if strategy is ContradictionStrategy.FLAG:
        return _flag(group)
    active = [fact for fact in group if fact.status is FactStatus.ACTIVE]
    if strategy is ContradictionStrategy.KEEP_NEWER:
        return _keep_newer(active)
    return _keep_higher_confidence(active)
