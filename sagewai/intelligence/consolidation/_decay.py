"""Decay rules: how strong a fact still is after a time without use, and when to archive it.

Pure functions. Why computed this way: a scheduled job may run twice on the same night, be
interrupted and resumed, or skip a week. Halving the stored strength on every run would make the
result depend on how often it ran. Instead a fact's strength at a reference time is always
``base * 0.5 ** (idle_days / halflife)``, from the base strength recorded at its last
reinforcement and the time it was last used or reinforced, so running again at the same reference
time changes nothing and running later gives the same value a single later run would.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from sagewai.core._records import Fact
from sagewai.intelligence.consolidation._annotations import base_strength
from sagewai.intelligence.consolidation._dedup import touched_at

__all__ = ["DecayDecision", "decayed_strength", "decide_decay", "idle_days"]

_SECONDS_PER_DAY = 86_400.0


def idle_days(fact: Fact, now: datetime) -> float:
    """Days since the fact was last used or reinforced (0 for a fact from the future)."""
    return max(0.0, (now - touched_at(fact)).total_seconds() / _SECONDS_PER_DAY)


def decayed_strength(base: float, idle: float, halflife_days: float) -> float:
    """``base`` halved every ``halflife_days`` of ``idle`` days, rounded to 6 decimals.

    Example:
        >>> decayed_strength(1.0, 60.0, 30.0)
        0.25
    """
    if halflife_days <= 0:
        raise ValueError("halflife_days must be positive")
    return round(base * math.pow(0.5, max(0.0, idle) / halflife_days), 6)


@dataclass(frozen=True, slots=True)
class DecayDecision:
    """What decay does to one fact.

    Attributes:
        strength: The strength at the reference time.
        base: The base strength it decays from (recorded so later runs start from it).
        idle_days: Days without use or reinforcement.
        archive: True when the strength fell below the floor.
    """

    strength: float
    base: float
    idle_days: float
    archive: bool

    def lowers(self, fact: Fact) -> bool:
        """True when the decision lowers the fact's stored strength."""
        return self.strength < fact.strength


def decide_decay(
    fact: Fact,
    now: datetime,
    *,
    halflife_days: float,
    archive_below: float,
    min_change: float,
) -> DecayDecision | None:
    """The decay decision for ``fact`` at ``now``, or ``None`` when nothing is worth writing.

    A fact is archived when its strength at ``now`` is below ``archive_below``. Otherwise its
    stored strength is rewritten only when it moved by at least ``min_change`` (down with time, or
    back up after it was used again), so the audit log holds a few decay rows per fact, not one per
    run. The caller decides whether an archive is allowed (a fact holding the only copy of an exact
    value never is).

    Example:
        >>> from datetime import timedelta
        >>> from sagewai import Fact
        >>> from sagewai.core import utcnow
        >>> now = utcnow()
        >>> old = Fact(project_id="p", content="x", created_at=now - timedelta(days=150))
        >>> decide_decay(old, now, halflife_days=30, archive_below=0.05, min_change=0.05).archive
        True
    """
    base = base_strength(fact)
    idle = idle_days(fact, now)
    strength = decayed_strength(base, idle, halflife_days)
    if strength < archive_below:
        return DecayDecision(strength=strength, base=base, idle_days=idle, archive=True)
    if abs(strength - fact.strength) >= min_change:
        return DecayDecision(strength=strength, base=base, idle_days=idle, archive=False)
    return None
