"""The predicate vocabulary facts are written in, shared with contradiction handling and the graph.

Extraction builds on the relation vocabulary of :mod:`sagewai.intelligence.predicates` (one name
per meaning: ``works_at``, ``lives_in``, ``spouse_of`` ...) and adds the predicates that only
facts need: decisions, plans, preferences by category, and attribute values. Every predicate a
fact carries is a name from :data:`VOCABULARY`, or ``None``; free text never becomes a predicate,
so "same subject, same predicate, different object" is a meaningful test for a contradiction.

Single-valued predicates hold one value per subject at a time; a new value supersedes the old:

| predicate | single | meaning | predicate | single | meaning |
|---|---|---|---|---|---|
| ``name`` | yes | the subject's name | ``likes`` | no | liked or loved |
| ``has_age`` | yes | age in years | ``dislikes`` | no | disliked or hated |
| ``birthday`` | yes | date of birth | ``prefers`` | no | preferred option |
| ``lives_in`` | yes | home (also "moved to") | ``less_preferred`` | no | option passed over |
| ``is_from`` | yes | place of origin | ``favorite_<category>`` | yes | favourite thing of a kind |
| ``works_at`` | yes | employer | ``decided`` | no | a decision taken |
| ``works_as`` | yes | job title | ``plans_to`` | no | an intention or commitment |
| ``spouse_of`` | yes | husband or wife | ``needs_to`` | no | an obligation or to-do |
| ``partner_of`` | yes | partner | ``attended`` | no | events attended |
| ``studies_at`` | yes | school | ``visited`` | no | places been to |
| ``has_value`` | yes | an attribute's value | ``is_a`` | no | identity (vegetarian, ...) |
| ``email`` | no | e-mail address | ``allergic_to`` | no | allergies |
| ``phone`` | no | phone number | ``owns`` | no | possessions and pets |

plus the relation predicates ``parent_of``, ``child_of``, ``sibling_of``, ``relative_of``,
``friend_of``, ``colleague_of``, ``member_of``, ``works_on``, ``speaks``, ``studies``, ``uses``,
``knows`` (all multi-valued).

Negation is not a predicate: "does not like tea" is ``likes`` with ``negated=True``.
:func:`canonical_polarity` also folds ``dislikes`` into ``likes`` negated, so "loves tea" and
"hates tea" are seen to disagree.
"""

from __future__ import annotations

import re

from sagewai.intelligence import predicates as _relations
from sagewai.intelligence.extraction.exact_values import find_exact_values

__all__ = [
    "FAVORITE_PREFIX",
    "VOCABULARY",
    "canonical_polarity",
    "describe",
    "find_exact_values",
    "is_single_valued",
    "normalize_predicate",
]

FAVORITE_PREFIX = "favorite_"

# name -> (single-valued, phrase used to render a triple as a sentence)
_EXTRACTION: dict[str, tuple[bool, str]] = {
    "name": (True, "is named"),
    "birthday": (True, "has a birthday on"),
    "has_value": (True, "is"),
    "email": (False, "has the e-mail address"),
    "phone": (False, "has the phone number"),
    "allergic_to": (False, "is allergic to"),
    "is_a": (False, "is"),
    "decided": (False, "decided"),
    "plans_to": (False, "plans to"),
    "needs_to": (False, "needs to"),
    "attended": (False, "attended"),
}
_RELATION_PHRASES: dict[str, str] = {
    "works_at": "works at",
    "works_as": "works as",
    "lives_in": "lives in",
    "is_from": "is from",
    "studies_at": "studies at",
    "spouse_of": "is married to",
    "partner_of": "is the partner of",
    "has_age": "is aged",
    "studies": "studies",
    "uses": "uses",
    "prefers": "prefers",
    "less_preferred": "likes less",
    "likes": "likes",
    "dislikes": "dislikes",
    "owns": "has",
    "parent_of": "is the parent of",
    "child_of": "is the child of",
    "sibling_of": "is the sibling of",
    "relative_of": "is a relative of",
    "friend_of": "is a friend of",
    "colleague_of": "is a colleague of",
    "member_of": "is a member of",
    "works_on": "works on",
    "visited": "visited",
    "speaks": "speaks",
    "knows": "knows",
}

VOCABULARY: dict[str, bool] = {
    **{name: entry.single_valued for name, entry in _relations.PREDICATES.items()},
    **{name: single for name, (single, _) in _EXTRACTION.items()},
}
"""Every predicate name (except the ``favorite_<category>`` family) -> single-valued."""

_SYNONYMS: dict[str, str] = {
    "job_title": "works_as",
    "job": "works_as",
    "occupation": "works_as",
    "profession": "works_as",
    "title": "works_as",
    "married_to": "spouse_of",
    "be_married_to": "spouse_of",
    "age": "has_age",
    "comes_from": "is_from",
    "come_from": "is_from",
    "originally_from": "is_from",
    "moved_to": "lives_in",
    "live_in": "lives_in",
    "has_pet": "owns",
    "has_pets": "owns",
    "pet": "owns",
    "has_child": "parent_of",
    "has_children": "parent_of",
    "has_kid": "parent_of",
    "has_sibling": "sibling_of",
    "has_brother": "sibling_of",
    "has_sister": "sibling_of",
    "has_parent": "child_of",
    "has_friend": "friend_of",
    "has_partner": "partner_of",
    "is": "is_a",
    "identity": "is_a",
    "value": "has_value",
    "is_value": "has_value",
    "decision": "decided",
    "decides": "decided",
    "chose": "decided",
    "plan": "plans_to",
    "plans": "plans_to",
    "plan_to": "plans_to",
    "intends_to": "plans_to",
    "will": "plans_to",
    "wants_to": "plans_to",
    "need_to": "needs_to",
    "must": "needs_to",
    "has_to": "needs_to",
    "todo": "needs_to",
    "attends_event": "attended",
    "went_to": "visited",
    "traveled_to": "visited",
    "travelled_to": "visited",
    "email_address": "email",
    "phone_number": "phone",
    "named": "name",
    "full_name": "name",
    "born_on": "birthday",
    "date_of_birth": "birthday",
    "allergy": "allergic_to",
    "loves": "likes",
    "enjoys": "likes",
    "hates": "dislikes",
    "favourite": "favorite",
}
_SPELLING = {
    "favourite": "favorite",
    "colour": "color",
    "flavour": "flavor",
    "neighbour": "neighbor",
}
_NON_WORD = re.compile(r"[^a-z0-9]+")


def _snake(text: str) -> str:
    words = _NON_WORD.sub(" ", text.casefold()).split()
    return "_".join(_SPELLING.get(word, word) for word in words)


def normalize_predicate(predicate: str | None) -> str | None:
    """The vocabulary name of ``predicate``, or ``None`` when it names nothing in the vocabulary.

    Accepts the names themselves, common synonyms (``job_title``, ``married_to``, ``moved_to``,
    ``has_pet``), spaced or British spellings (``"Favourite colour"``), and the base-form
    spellings consolidation uses (``live_in``, ``work_at``).

    Example:
        >>> normalize_predicate("job_title"), normalize_predicate("favourite colour")
        ('works_as', 'favorite_color')
        >>> normalize_predicate("plays chess with") is None
        True
    """
    if not predicate:
        return None
    name = _snake(predicate)
    if not name:
        return None
    if name in VOCABULARY:
        return name
    if name.startswith(FAVORITE_PREFIX) and len(name) > len(FAVORITE_PREFIX):
        return name
    if name in _SYNONYMS:
        return _SYNONYMS[name]
    relation = _relations.normalise_predicate(name.replace("_", " "))
    return relation if relation in VOCABULARY else None


def is_single_valued(predicate: str) -> bool:
    """True when a subject holds one value of ``predicate`` at a time (a new one supersedes).

    Unknown predicates are multi-valued, so nothing is superseded on a guess.

    Example:
        >>> is_single_valued("lives_in"), is_single_valued("job_title"), is_single_valued("likes")
        (True, True, False)
        >>> is_single_valued("favorite_color")
        True
    """
    name = normalize_predicate(predicate)
    if name is None:
        return False
    if name.startswith(FAVORITE_PREFIX):
        return True
    return VOCABULARY.get(name, False)


def canonical_polarity(predicate: str, negated: bool) -> tuple[str, bool]:
    """Fold antonyms so opposite statements share a predicate: ``dislikes`` is ``likes`` negated.

    Example:
        >>> canonical_polarity("dislikes", False)
        ('likes', True)
        >>> canonical_polarity("likes", True)
        ('likes', True)
    """
    name = normalize_predicate(predicate) or predicate
    if name == "dislikes":
        return "likes", not negated
    return name, negated


def describe(predicate: str) -> str:
    """The verb phrase used to write a triple as a sentence (``lives_in`` -> ``"lives in"``)."""
    name = normalize_predicate(predicate) or predicate
    if name.startswith(FAVORITE_PREFIX):
        category = name[len(FAVORITE_PREFIX) :].replace("_", " ")
        return f"has as favorite {category}"
    if name in _EXTRACTION:
        return _EXTRACTION[name][1]
    return _RELATION_PHRASES.get(name, name.replace("_", " "))
