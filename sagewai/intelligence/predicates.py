"""The predicate vocabulary of relations: one name per meaning, and which ones hold one value.

Extractors map the many ways of saying a thing ("works for", "is employed at", "got a job at")
onto one predicate (``works_at``), so relations from different messages line up. A predicate is
*single-valued* when a subject has one value at a time (one employer, one home town, one spouse):
a new value then supersedes the old one (the old edge's validity ends) instead of adding a second.

| predicate | single-valued | meaning |
|---|---|---|
| ``works_at`` | yes | employer or workplace |
| ``works_as`` | yes | job title or role |
| ``lives_in`` | yes | current home (``moved to``, ``relocated to``, ``based in``) |
| ``is_from`` | yes | home town or country of origin |
| ``studies_at`` | yes | school or university attended |
| ``spouse_of`` | yes | husband, wife, spouse (``married to``) |
| ``partner_of`` | yes | boyfriend, girlfriend, partner |
| ``has_age`` | yes | age in years |
| ``studies`` | no | subject of study |
| ``uses`` | no | tools, technologies, products used |
| ``prefers`` | no | preferred option (from "prefers X over Y") |
| ``less_preferred`` | no | the option passed over in "prefers X over Y" |
| ``likes`` | no | things liked or loved |
| ``dislikes`` | no | things disliked or hated |
| ``owns`` | no | possessions and pets |
| ``parent_of`` | no | children (``my son``, ``my daughter``) |
| ``child_of`` | no | parents (``my mom``, ``my father``) |
| ``sibling_of`` | no | brothers and sisters |
| ``relative_of`` | no | other family (aunt, cousin, grandmother, ...) |
| ``friend_of`` | no | friends |
| ``colleague_of`` | no | co-workers, bosses |
| ``member_of`` | no | groups, clubs, teams joined |
| ``works_on`` | no | projects |
| ``visited`` | no | places been to |
| ``attended`` | no | events, groups and classes gone to |
| ``interested_in`` | no | topics and careers being considered |
| ``speaks`` | no | languages |
| ``knows`` | no | any other acquaintance |
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["PREDICATES", "Predicate", "is_single_valued", "normalise_predicate"]


@dataclass(frozen=True, slots=True)
class Predicate:
    """One entry of the vocabulary."""

    name: str
    single_valued: bool
    description: str


PREDICATES: dict[str, Predicate] = {
    p.name: p
    for p in (
        Predicate("works_at", True, "employer or workplace"),
        Predicate("works_as", True, "job title or role"),
        Predicate("lives_in", True, "current home"),
        Predicate("is_from", True, "home town or country of origin"),
        Predicate("studies_at", True, "school or university attended"),
        Predicate("spouse_of", True, "husband, wife or spouse"),
        Predicate("partner_of", True, "boyfriend, girlfriend or partner"),
        Predicate("has_age", True, "age in years"),
        Predicate("studies", False, "subject of study"),
        Predicate("uses", False, "tools, technologies and products used"),
        Predicate("prefers", False, "preferred option"),
        Predicate("less_preferred", False, "the option passed over"),
        Predicate("likes", False, "things liked"),
        Predicate("dislikes", False, "things disliked"),
        Predicate("owns", False, "possessions and pets"),
        Predicate("parent_of", False, "children"),
        Predicate("child_of", False, "parents"),
        Predicate("sibling_of", False, "brothers and sisters"),
        Predicate("relative_of", False, "other family"),
        Predicate("friend_of", False, "friends"),
        Predicate("colleague_of", False, "co-workers and bosses"),
        Predicate("member_of", False, "groups, clubs and teams"),
        Predicate("works_on", False, "projects"),
        Predicate("visited", False, "places been to"),
        Predicate("attended", False, "events, groups and classes gone to"),
        Predicate("interested_in", False, "topics and careers being considered"),
        Predicate("speaks", False, "languages"),
        Predicate("knows", False, "any other acquaintance"),
    )
}

_SYNONYMS: dict[str, str] = {
    "works for": "works_at",
    "work for": "works_at",
    "work at": "works_at",
    "employed at": "works_at",
    "employed by": "works_at",
    "job at": "works_at",
    "employer": "works_at",
    "works as": "works_as",
    "job title": "works_as",
    "role": "works_as",
    "live in": "lives_in",
    "lives in": "lives_in",
    "moved to": "lives_in",
    "move to": "lives_in",
    "relocated to": "lives_in",
    "based in": "lives_in",
    "resides in": "lives_in",
    "from": "is_from",
    "comes from": "is_from",
    "born in": "is_from",
    "grew up in": "is_from",
    "hometown": "is_from",
    "studies at": "studies_at",
    "study at": "studies_at",
    "attends": "studies_at",
    "goes to school at": "studies_at",
    "married to": "spouse_of",
    "husband": "spouse_of",
    "wife": "spouse_of",
    "spouse": "spouse_of",
    "boyfriend": "partner_of",
    "girlfriend": "partner_of",
    "partner": "partner_of",
    "dating": "partner_of",
    "age": "has_age",
    "use": "uses",
    "using": "uses",
    "prefer": "prefers",
    "like": "likes",
    "love": "likes",
    "loves": "likes",
    "enjoys": "likes",
    "hate": "dislikes",
    "hates": "dislikes",
    "dislike": "dislikes",
    "own": "owns",
    "has": "owns",
    "have": "owns",
    "son": "parent_of",
    "daughter": "parent_of",
    "child": "parent_of",
    "kid": "parent_of",
    "mother": "child_of",
    "mom": "child_of",
    "mum": "child_of",
    "father": "child_of",
    "dad": "child_of",
    "parent": "child_of",
    "brother": "sibling_of",
    "sister": "sibling_of",
    "sibling": "sibling_of",
    "friend": "friend_of",
    "colleague": "colleague_of",
    "coworker": "colleague_of",
    "co-worker": "colleague_of",
    "boss": "colleague_of",
    "manager": "colleague_of",
    "member of": "member_of",
    "joined": "member_of",
    "part of": "member_of",
    "working on": "works_on",
    "works on": "works_on",
    "visit": "visited",
    "went to": "visited",
    "attend": "attended",
    "interested in": "interested_in",
    "speak": "speaks",
    "study": "studies",
    "studying": "studies",
}
for _relative in (
    "aunt",
    "uncle",
    "cousin",
    "grandmother",
    "grandfather",
    "grandma",
    "grandpa",
    "niece",
    "nephew",
    "grandson",
    "granddaughter",
):
    _SYNONYMS[_relative] = "relative_of"

_NON_WORD = re.compile(r"[^a-z0-9]+")


def normalise_predicate(text: str) -> str:
    """The vocabulary name for a way of saying a relation; unknown phrases become snake_case.

    Example:
        >>> normalise_predicate("Moved to")
        'lives_in'
        >>> normalise_predicate("plays chess with")
        'plays_chess_with'
    """
    phrase = " ".join(text.lower().replace("_", " ").split())
    if phrase.replace(" ", "_") in PREDICATES:
        return phrase.replace(" ", "_")
    known = _SYNONYMS.get(phrase)
    if known is not None:
        return known
    return _NON_WORD.sub("_", phrase).strip("_") or "related_to"


def is_single_valued(predicate: str) -> bool:
    """True when a subject holds one value of ``predicate`` at a time (a new value supersedes).

    Example:
        >>> is_single_valued("lives_in"), is_single_valued("likes")
        (True, False)
    """
    entry = PREDICATES.get(normalise_predicate(predicate))
    return entry is not None and entry.single_valued
