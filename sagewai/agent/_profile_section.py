"""Render a user's standing profile into its own section of every turn's system message.

What the user asked once ("always answer in French", "call me Dana", "I prefer short
answers") must be in front of the model on every later turn, whatever the turn is about: the
memory block is chosen by similarity to the message and would miss it. So the profile has its
own section, after the agent's instructions and before the recalled memory, with its own
token budget (``AgentSettings.profile_tokens``). Entries come in the profile's order
(instructions, identity, preferences; the user's before the team's; newest first) and are never
cut: an entry is in or out. When the whole profile does not fit, the entries the message is
about are chosen first (the agent names them), then the others in order, and the section still
lists them in the profile's order: a long profile keeps what this turn needs. Only current
entries are shown: a superseded instruction has left the profile, its successor is there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sagewai.agent._memory_block import TokenCounter, clean_text, estimate_tokens
from sagewai.core._profile import ProfileKind, profile_kind
from sagewai.core._records import Fact
from sagewai.core._scope import ContextScope

__all__ = ["PROFILE_CLOSE", "PROFILE_OPEN", "PROFILE_TITLE", "ProfileSection", "render_profile"]

PROFILE_OPEN = "<profile>"
PROFILE_CLOSE = "</profile>"
PROFILE_TITLE = (
    "Standing instructions and profile (set by the user; follow them in every answer unless "
    "the user changes them):"
)
_DELIMITER = re.compile(r"</?\s*profile\s*>", re.IGNORECASE)
_LABELS = {
    ProfileKind.INSTRUCTION: "instruction",
    ProfileKind.IDENTITY: "about the user",
    ProfileKind.PREFERENCE: "preference",
}


@dataclass(frozen=True, slots=True)
class ProfileSection:
    """The rendered section and what it holds (``text`` empty when the profile is)."""

    text: str
    tokens: int
    fact_ids: tuple[str, ...] = ()
    left_out: int = 0
    """Entries that did not fit the budget."""


def _line(fact: Fact) -> str:
    kind = profile_kind(fact) or ProfileKind.PREFERENCE
    label = _LABELS[kind] if fact.scope is ContextScope.USER else f"team {_LABELS[kind]}"
    # An instruction reads as the user's own words (its object), a fact as its sentence.
    said = fact.object if kind is ProfileKind.INSTRUCTION and fact.object else fact.content
    text = clean_text(_DELIMITER.sub("[profile]", said), limit=600)
    return f"- ({label}) {text}"


def render_profile(
    entries: Sequence[Fact],
    *,
    budget: int,
    count_tokens: TokenCounter = estimate_tokens,
    first: Sequence[str] = (),
) -> ProfileSection:
    """The entries that fit ``budget`` tokens, in order, as one delimited section.

    When they do not all fit, the entries whose ids are in ``first`` (those the message is
    about, best first) are taken first, then the others in order; the section shows the
    chosen ones in the entries' order.

    Example:
        >>> from sagewai import Fact
        >>> rule = Fact(project_id="p", content="Always answer in French.", scope="user",
        ...             user_id="dana", metadata={"profile": "instruction"})
        >>> section = render_profile([rule], budget=60)
        >>> "(instruction) Always answer in French." in section.text, section.tokens <= 60
        (True, True)
        >>> render_profile([rule], budget=10).text
        ''
        >>> tea = Fact(project_id="p", content="The user prefers green tea.", scope="user",
        ...            user_id="dana", metadata={"profile": "preference"})
        >>> render_profile([rule, tea], budget=50).fact_ids == (rule.id,)  # not both
        True
        >>> render_profile([rule, tea], budget=50, first=[tea.id]).fact_ids == (tea.id,)
        True
    """
    if budget <= 0 or not entries:
        return ProfileSection("", 0, left_out=len(entries))
    frame = "\n".join((PROFILE_OPEN, PROFILE_TITLE, PROFILE_CLOSE))
    used = count_tokens(frame + "\n")
    lines = {fact.id: _line(fact) for fact in entries}
    costs = {key: count_tokens(line + "\n") for key, line in lines.items()}
    wanted = list(entries)
    if used + sum(costs.values()) > budget and first:
        rank = {key: index for index, key in enumerate(first)}
        wanted.sort(key=lambda fact: rank.get(fact.id, len(rank)))  # stable: then in order
    taken: set[str] = set()
    for fact in wanted:
        if fact.id in taken or used + costs[fact.id] > budget:
            continue  # a shorter entry further down may still fit
        taken.add(fact.id)
        used += costs[fact.id]
    ids = list(dict.fromkeys(fact.id for fact in entries if fact.id in taken))
    while ids:
        shown = [lines[key] for key in ids]
        text = "\n".join((PROFILE_OPEN, PROFILE_TITLE, *shown, PROFILE_CLOSE))
        tokens = count_tokens(text)
        if tokens <= budget:
            return ProfileSection(text, tokens, tuple(ids), len(entries) - len(ids))
        ids.pop()  # a counter that is not additive: drop the last entry until it fits
    return ProfileSection("", 0, left_out=len(entries))
