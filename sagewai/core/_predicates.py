"""One predicate vocabulary for facts and the knowledge graph: names, synonyms, single values, jobs.

A fact's structured triple and a graph edge speak the same words: the many ways of saying a thing
("works for", "is employed at", ``job_title``) map onto one predicate name (``works_at``,
``works_as``), so a statement read into a fact and the same statement read into the graph line up,
and "same subject, same predicate, different object" is a meaningful test for a contradiction in
both. A predicate is *single-valued* when a subject has one value at a time (one employer, one
home, one name): a new value then supersedes the old one (a fact's or an edge's validity ends)
instead of adding a second. Unknown predicates are multi-valued, so nothing is superseded on a
guess.

| predicate | single | meaning | predicate | single | meaning |
|---|---|---|---|---|---|
| ``works_at`` | yes | employer or workplace | ``likes`` | no | liked or loved |
| ``works_as`` | yes | job title or role | ``dislikes`` | no | disliked or hated |
| ``lives_in`` | yes | home (also "moved to") | ``prefers`` | no | preferred option |
| ``is_from`` | yes | place of origin | ``less_preferred`` | no | option passed over |
| ``studies_at`` | yes | school or university | ``owns`` | no | possessions and pets |
| ``spouse_of`` | yes | husband or wife | ``decided`` | no | a decision taken |
| ``partner_of`` | yes | partner | ``plans_to`` | no | an intention |
| ``has_age`` | yes | age in years | ``needs_to`` | no | an obligation or to-do |
| ``name`` | yes | the subject's name | ``attended`` | no | events, groups, classes |
| ``birthday`` | yes | date of birth | ``visited`` | no | places been to |
| ``has_value`` | yes | an attribute's value | ``is_a`` | no | identity (vegetarian, ...) |
| ``favorite_<kind>`` | yes | favourite of a kind | ``allergic_to`` | no | allergies |
| ``email`` | no* | e-mail address | ``phone`` | no* | phone number |
| ``managed_by`` | yes | manager or boss | ``drives`` | yes | the car one drives |
| ``on_team`` | yes | the team one works in | ``scheduled_on`` | yes | when a thing happens |
| ``uses_<kind>`` | yes | the one tool of a kind | | | |

``uses_<kind>`` is a closed family (:data:`TOOL_KINDS`: ``uses_database``, ``uses_runtime``,
``uses_editor``, ``uses_browser``, ...): a service has one database and one runtime at a time, a
person one editor; plain ``uses`` stays multi-valued. ``scheduled_on`` holds a date ("Monday"),
or for a recurring thing a recurrence written as its object ("every Monday", "every Monday and
Thursday") with the RFC 5545 rule in the fact's metadata (``recurrence``:
``FREQ=WEEKLY;BYDAY=MO``). (*) ``email`` and ``phone`` are multi-valued (a work and a private
address), but a stated change ("my new e-mail is ...") replaces the old values: they are
:data:`RENEWABLE`.

plus the multi-valued relations ``parent_of``, ``child_of``, ``sibling_of``, ``relative_of``,
``friend_of``, ``colleague_of``, ``member_of``, ``works_on``, ``speaks``, ``studies``, ``uses``,
``interested_in`` and ``knows``.

Facts carry only vocabulary names (:func:`normalize_predicate` returns ``None`` for free text);
the graph keeps an unknown verb as an edge label of its own (:func:`relation_predicate`). Both
read job titles from one lexicon (:data:`JOB_TITLES`), so "I am a mentor at the youth club" is
``works_as`` in the facts and in the graph.

Negation is not a predicate: "does not like tea" is ``likes`` with ``negated=True``.
:func:`canonical_polarity` also folds ``dislikes`` into ``likes`` negated, so "loves tea" and
"hates tea" are seen to disagree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "FAVORITE_PREFIX",
    "INSTRUCTION_PREFIX",
    "JOB_TITLES",
    "NAMED_VALUES",
    "PREDICATES",
    "RENEWABLE",
    "TOOL_KINDS",
    "UNNAMED_CHANGE",
    "USES_PREFIX",
    "VOCABULARY",
    "Predicate",
    "canonical_polarity",
    "describe",
    "is_job_title",
    "is_single_valued",
    "job_pattern",
    "normalize_predicate",
    "relation_predicate",
]

FAVORITE_PREFIX = "favorite_"
"""``favorite_<kind>`` (``favorite_color``, ``favorite_food``): single-valued, open-ended."""
INSTRUCTION_PREFIX = "instruction_"
"""``instruction_<aspect>`` (``instruction_answer_language``): a standing instruction of a user
about one aspect of how to work with them (:mod:`sagewai.core._profile`); single-valued, so a
later instruction about the same aspect supersedes the earlier one."""

USES_PREFIX = "uses_"
"""``uses_<kind>`` (``uses_database``, ``uses_editor``): the one tool of a kind, single-valued."""

TOOL_KINDS: frozenset[str] = frozenset(
    {"database", "runtime", "editor", "browser", "ci", "cloud", "os", "shell", "framework"}
)
"""The kinds of ``uses_<kind>``: a thing (a service, a person) uses one of each at a time."""


@dataclass(frozen=True, slots=True)
class Predicate:
    """One entry of the vocabulary."""

    name: str
    single_valued: bool
    description: str
    phrase: str
    """The verb phrase a triple with this predicate is written with (``"lives in"``)."""
    relation: bool = True
    """True for predicates that relate two things (graph edges as well as facts); False for
    those only facts carry (a name, a decision, a plan, an attribute's value)."""


_ENTRIES = (
    Predicate("works_at", True, "employer or workplace", "works at"),
    Predicate("works_as", True, "job title or role", "works as"),
    Predicate("lives_in", True, "current home", "lives in"),
    Predicate("is_from", True, "home town or country of origin", "is from"),
    Predicate("studies_at", True, "school or university attended", "studies at"),
    Predicate("spouse_of", True, "husband, wife or spouse", "is married to"),
    Predicate("partner_of", True, "boyfriend, girlfriend or partner", "is the partner of"),
    Predicate("has_age", True, "age in years", "is aged"),
    Predicate("managed_by", True, "manager or boss", "is managed by"),
    Predicate("on_team", True, "the team one works in", "is on"),
    Predicate("drives", True, "the car one drives", "drives"),
    Predicate("studies", False, "subject of study", "studies"),
    Predicate("uses", False, "tools, technologies and products used", "uses"),
    Predicate("prefers", False, "preferred option", "prefers"),
    Predicate("less_preferred", False, "the option passed over", "likes less"),
    Predicate("likes", False, "things liked", "likes"),
    Predicate("dislikes", False, "things disliked", "dislikes"),
    Predicate("owns", False, "possessions and pets", "has"),
    Predicate("parent_of", False, "children", "is the parent of"),
    Predicate("child_of", False, "parents", "is the child of"),
    Predicate("sibling_of", False, "brothers and sisters", "is the sibling of"),
    Predicate("relative_of", False, "other family", "is a relative of"),
    Predicate("friend_of", False, "friends", "is a friend of"),
    Predicate("colleague_of", False, "co-workers and bosses", "is a colleague of"),
    Predicate("member_of", False, "groups, clubs and teams", "is a member of"),
    Predicate("works_on", False, "projects", "works on"),
    Predicate("visited", False, "places been to", "visited"),
    Predicate("attended", False, "events, groups and classes gone to", "attended"),
    Predicate("interested_in", False, "topics and careers being considered", "interested in"),
    Predicate("speaks", False, "languages", "speaks"),
    Predicate("knows", False, "any other acquaintance", "knows"),
    Predicate("name", True, "the subject's name", "is named", relation=False),
    Predicate("birthday", True, "date of birth", "has a birthday on", relation=False),
    Predicate("has_value", True, "an attribute's value", "is", relation=False),
    Predicate("email", False, "e-mail address", "has the e-mail address", relation=False),
    Predicate("phone", False, "phone number", "has the phone number", relation=False),
    Predicate(
        "scheduled_on",
        True,
        "when a thing happens: a date, or a recurrence ('every Monday')",
        "happens",
        relation=False,
    ),
    Predicate("allergic_to", False, "allergies", "is allergic to", relation=False),
    Predicate("is_a", False, "identity (vegetarian, ...)", "is", relation=False),
    Predicate("decided", False, "a decision taken", "decided", relation=False),
    Predicate("plans_to", False, "an intention or commitment", "plans to", relation=False),
    Predicate("needs_to", False, "an obligation or to-do", "needs to", relation=False),
)

PREDICATES: dict[str, Predicate] = {p.name: p for p in _ENTRIES if p.relation}
"""The relation predicates: what a graph edge and a fact can both say."""

VOCABULARY: dict[str, bool] = {p.name: p.single_valued for p in _ENTRIES}
"""Every predicate name (except the ``favorite_<kind>`` and ``uses_<kind>`` families) ->
single-valued."""

RENEWABLE: frozenset[str] = frozenset({"email", "phone"})
"""Multi-valued predicates whose old values a stated change replaces ("my new e-mail is")."""

UNNAMED_CHANGE = "changed_to"
"""The predicate of a change whose kind the sentence does not say ("Amara just switched over to
Zalando", "Ravi is at Zalando now"): the writer reads it as the one named value its subject
holds that could change so (:func:`sagewai.core._claims.unnamed_change_predicate`)."""

NAMED_VALUES: frozenset[str] = frozenset(
    {"lives_in", "works_at", "studies_at", "managed_by", "drives"}
)
"""Single-valued predicates whose values are names (a place, a company, a person, a car): the
ones an unnamed change can be a change of, with every ``uses_<kind>``."""

_SYNONYMS: dict[str, str] = {
    "allergy": "allergic_to",
    "attend": "attended",
    "attends_event": "attended",
    "born_on": "birthday",
    "date_of_birth": "birthday",
    "dad": "child_of",
    "father": "child_of",
    "has_parent": "child_of",
    "mom": "child_of",
    "mother": "child_of",
    "mum": "child_of",
    "parent": "child_of",
    "co_worker": "colleague_of",
    "colleague": "colleague_of",
    "coworker": "colleague_of",
    "chose": "decided",
    "decides": "decided",
    "decision": "decided",
    "dislike": "dislikes",
    "hate": "dislikes",
    "hates": "dislikes",
    "email_address": "email",
    "friend": "friend_of",
    "has_friend": "friend_of",
    "age": "has_age",
    "is_value": "has_value",
    "value": "has_value",
    "identity": "is_a",
    "is": "is_a",
    "born_in": "is_from",
    "come_from": "is_from",
    "comes_from": "is_from",
    "from": "is_from",
    "grew_up_in": "is_from",
    "hometown": "is_from",
    "originally_from": "is_from",
    "enjoys": "likes",
    "like": "likes",
    "love": "likes",
    "loves": "likes",
    "based_in": "lives_in",
    "live_in": "lives_in",
    "move_to": "lives_in",
    "moved_to": "lives_in",
    "relocated_to": "lives_in",
    "resides_in": "lives_in",
    "joined": "member_of",
    "part_of": "member_of",
    "full_name": "name",
    "named": "name",
    "has_to": "needs_to",
    "must": "needs_to",
    "need_to": "needs_to",
    "todo": "needs_to",
    "has": "owns",
    "has_pet": "owns",
    "has_pets": "owns",
    "have": "owns",
    "own": "owns",
    "pet": "owns",
    "child": "parent_of",
    "daughter": "parent_of",
    "has_child": "parent_of",
    "has_children": "parent_of",
    "has_kid": "parent_of",
    "kid": "parent_of",
    "son": "parent_of",
    "boyfriend": "partner_of",
    "dating": "partner_of",
    "girlfriend": "partner_of",
    "has_partner": "partner_of",
    "partner": "partner_of",
    "phone_number": "phone",
    "intends_to": "plans_to",
    "plan": "plans_to",
    "plan_to": "plans_to",
    "plans": "plans_to",
    "wants_to": "plans_to",
    "will": "plans_to",
    "prefer": "prefers",
    "aunt": "relative_of",
    "cousin": "relative_of",
    "granddaughter": "relative_of",
    "grandfather": "relative_of",
    "grandma": "relative_of",
    "grandmother": "relative_of",
    "grandpa": "relative_of",
    "grandson": "relative_of",
    "nephew": "relative_of",
    "niece": "relative_of",
    "uncle": "relative_of",
    "brother": "sibling_of",
    "has_brother": "sibling_of",
    "has_sibling": "sibling_of",
    "has_sister": "sibling_of",
    "sibling": "sibling_of",
    "sister": "sibling_of",
    "speak": "speaks",
    "be_married_to": "spouse_of",
    "husband": "spouse_of",
    "married_to": "spouse_of",
    "spouse": "spouse_of",
    "wife": "spouse_of",
    "study": "studies",
    "studying": "studies",
    "attends": "studies_at",
    "goes_to_school_at": "studies_at",
    "study_at": "studies_at",
    "use": "uses",
    "using": "uses",
    "traveled_to": "visited",
    "travelled_to": "visited",
    "visit": "visited",
    "went_to": "visited",
    "job": "works_as",
    "job_title": "works_as",
    "occupation": "works_as",
    "profession": "works_as",
    "role": "works_as",
    "title": "works_as",
    "employed_at": "works_at",
    "employed_by": "works_at",
    "employer": "works_at",
    "job_at": "works_at",
    "work_at": "works_at",
    "work_for": "works_at",
    "works_for": "works_at",
    "working_on": "works_on",
}
"""Other ways of saying a predicate, in their snake_case form."""
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

# Verb phrases that state a vocabulary claim in other words ("is employed at", "has a job at",
# "relies on"), in the base form the consolidation reader tries ("is living in" -> "live_in").
_SYNONYMS.update(
    {
        "adore": "likes",
        "adores": "likes",
        "enjoy": "likes",
        "fan_of": "likes",
        "fond_of": "likes",
        "keen_on": "likes",
        "been_to": "visited",
        "travel_to": "visited",
        "belong_to": "member_of",
        "belongs_to": "member_of",
        "employed_as": "works_as",
        "has_job_as": "works_as",
        "have_job_as": "works_as",
        "serve_as": "works_as",
        "serves_as": "works_as",
        "work_as": "works_as",
        "has_job_at": "works_at",
        "have_job_at": "works_at",
        "has_allergy_to": "allergic_to",
        "have_allergy_to": "allergic_to",
        "hail_from": "is_from",
        "hails_from": "is_from",
        "native_of": "is_from",
        "reside_in": "lives_in",
        "settled_in": "lives_in",
        "fluent_in": "speaks",
        "enrolled_at": "studies_at",
        "student_at": "studies_at",
        "attend": "studies_at",
        "make_use_of": "uses",
        "makes_use_of": "uses",
        "rely_on": "uses",
        "relies_on": "uses",
        "utilise": "uses",
        "utilises": "uses",
        "utilize": "uses",
        "utilizes": "uses",
        "owner_of": "owns",
        "possess": "owns",
        "possesses": "owns",
    }
)

# Changes and the one-at-a-time relations they change (issue 37): a manager, a team, a car, a
# schedule, the tool of a kind.
_SYNONYMS.update(
    {
        "boss": "managed_by",
        "manager": "managed_by",
        "has_manager": "managed_by",
        "line_manager": "managed_by",
        "report_to": "managed_by",
        "reports_to": "managed_by",
        "reporting_to": "managed_by",
        "supervised_by": "managed_by",
        "team": "on_team",
        "in_team": "on_team",
        "on_the_team": "on_team",
        "member_of_team": "on_team",
        "works_in_team": "on_team",
        "car": "drives",
        "drive": "drives",
        "driving": "drives",
        "happens_on": "scheduled_on",
        "held_on": "scheduled_on",
        "meets_on": "scheduled_on",
        "recurs_on": "scheduled_on",
        "schedule": "scheduled_on",
        "scheduled_for": "scheduled_on",
        "scheduled": "scheduled_on",
        "takes_place_on": "scheduled_on",
        "database": "uses_database",
        "uses_db": "uses_database",
        "stores_data_in": "uses_database",
        "runtime": "uses_runtime",
        "language_version": "uses_runtime",
        "runs_on_version": "uses_runtime",
        "editor": "uses_editor",
        "uses_ide": "uses_editor",
    }
)

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

    Accepts the names themselves, synonyms (``job_title``, ``married to``, ``moved_to``,
    ``has_pet``, ``sister``), spaced, hyphenated or British spellings (``"Favourite colour"``)
    and the base forms consolidation uses (``live_in``, ``work_at``).

    Example:
        >>> normalize_predicate("job_title"), normalize_predicate("favourite colour")
        ('works_as', 'favorite_color')
        >>> normalize_predicate("Moved to"), normalize_predicate("co-worker")
        ('lives_in', 'colleague_of')
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
    for prefix in (FAVORITE_PREFIX, INSTRUCTION_PREFIX):
        if name.startswith(prefix) and len(name) > len(prefix):
            return name
    if name.startswith(USES_PREFIX) and name[len(USES_PREFIX) :] in TOOL_KINDS:
        return name
    return _SYNONYMS.get(name)


def relation_predicate(text: str) -> str:
    """A graph edge's predicate: the vocabulary name, else the phrase itself in snake_case.

    The graph keeps relations the vocabulary has no name for ("plays chess with") as labels of
    their own; a phrase with no letter or digit becomes ``related_to``.

    Example:
        >>> relation_predicate("works for"), relation_predicate("plays chess with")
        ('works_at', 'plays_chess_with')
        >>> relation_predicate("!!!")
        'related_to'
    """
    return normalize_predicate(text) or _snake(text) or "related_to"


def is_single_valued(predicate: str) -> bool:
    """True when a subject holds one value of ``predicate`` at a time (a new one supersedes).

    The one answer for facts and graph edges alike; unknown predicates are multi-valued.

    Example:
        >>> is_single_valued("lives_in"), is_single_valued("moved to"), is_single_valued("likes")
        (True, True, False)
        >>> is_single_valued("favorite_color"), is_single_valued("name")
        (True, True)
        >>> is_single_valued("uses_database"), is_single_valued("uses"), is_single_valued("boss")
        (True, False, True)
        >>> is_single_valued("instruction_answer_language")
        True
    """
    name = normalize_predicate(predicate)
    if name is None:
        return False
    if name.startswith((FAVORITE_PREFIX, USES_PREFIX, INSTRUCTION_PREFIX)):
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
    """The verb phrase used to write a triple as a sentence (``lives_in`` -> ``"lives in"``).

    Example:
        >>> describe("lives_in"), describe("favorite_color"), describe("uses_database")
        ('lives in', 'has as favorite color', 'uses as database')
    """
    name = normalize_predicate(predicate) or predicate
    if name.startswith(FAVORITE_PREFIX):
        category = name[len(FAVORITE_PREFIX) :].replace("_", " ")
        return f"has as favorite {category}"
    if name.startswith(USES_PREFIX):
        return f"uses as {name[len(USES_PREFIX) :]}"
    if name.startswith(INSTRUCTION_PREFIX):
        aspect = name[len(INSTRUCTION_PREFIX) :].replace("_", " ")
        return f"instructs on {aspect}:"
    entry = next((p for p in _ENTRIES if p.name == name), None)
    return entry.phrase if entry is not None else name.replace("_", " ")


JOB_TITLES: frozenset[str] = frozenset(
    """
    accountant actor actress admin administrator analyst animator architect artist assistant
    attorney author baker banker barista bartender biologist broker caregiver carpenter
    cashier ceo cfo chef chemist cio cleaner clerk co-founder coach cofounder composer
    consultant contractor coo cook coordinator counsellor counselor cto dancer dean dentist
    designer detective developer devops dietitian director doctor driver economist editor
    electrician engineer entrepreneur executive farmer firefighter founder freelancer
    geologist hygienist illustrator instructor intern interpreter investor janitor
    journalist lawyer lead lecturer librarian manager marketer mathematician mechanic mentor
    midwife musician nanny nurse nutritionist officer optometrist owner painter paralegal
    paramedic pediatrician pharmacist photographer physician physicist pilot planner plumber
    president principal producer professor programmer psychiatrist psychologist radiologist
    realtor receptionist recruiter researcher salesperson scientist scrum sculptor secretary
    singer soldier specialist sre statistician strategist student supervisor surgeon
    sysadmin teacher technician therapist trader trainer translator tutor vet veterinarian
    volunteer vp waiter waitress writer
    """.split()  # noqa: SIM905
) | frozenset(
    {"data scientist", "police officer", "product manager", "social worker", "software engineer"}
)
"""Job titles and roles, read the same by the fact rules and the graph's relation patterns."""


def is_job_title(phrase: str) -> bool:
    """True when ``phrase`` names a job or role: it ends with a title (``"youth mentor"``).

    Example:
        >>> is_job_title("mentor"), is_job_title("senior software engineers"), is_job_title("fan")
        (True, True, False)
    """
    words = phrase.lower().replace("-", " ").split()
    if not words:
        return False
    for tail in (words[-1], " ".join(words[-2:])):
        if tail in JOB_TITLES or tail.rstrip("s") in JOB_TITLES:
            return True
    return False


def job_pattern() -> str:
    """A regular-expression alternation of :data:`JOB_TITLES`, longest first (for patterns)."""
    return "|".join(re.escape(title) for title in sorted(JOB_TITLES, key=lambda t: (-len(t), t)))
