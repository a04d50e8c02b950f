"""Builders: pure functions that read a rule's match into a :class:`~.patterns.Reading`.

Each takes the match and its rule and returns what the match states (predicate, object,
negation, a confidence adjusted for what was found) or ``None`` to reject it: a pronoun
object ("I love that"), a reaction to the other person ("I love how you..."), a plan with no
content ("I'm gonna make it").
"""

from __future__ import annotations

import re

from sagewai.core._predicates import is_job_title
from sagewai.core._records import FactType
from sagewai.extraction._kinds import noun_predicate, object_predicate
from sagewai.extraction._patterns import (
    PRONOUNS,
    Reading,
    Rule,
    clean_object,
    group,
    has_content,
    is_pronoun,
    is_reaction,
)

__all__ = [
    "read_age",
    "read_attribute",
    "read_born",
    "read_decided",
    "read_divorced",
    "read_favorite",
    "read_implicit",
    "read_lives",
    "read_need",
    "read_other_lives",
    "read_past_event",
    "read_plan",
    "read_possession",
    "read_possessive_event",
    "read_prefers",
    "read_progressive",
    "read_relation",
    "read_reminder",
    "read_role",
    "read_role_other",
    "read_simple",
    "read_statement",
    "read_thing",
    "read_uses",
    "read_went_with",
    "read_x_over_y",
]

_MOVED_TO = re.compile(r"^(?:back\s+)?(?:to|into)\s+(.+)$", re.IGNORECASE)
_WENT_TO = re.compile(r"^(?:to\s+|back\s+to\s+)?(.+)$", re.IGNORECASE)
_LIFE_OBJECT = re.compile(r"^(?:born|married|engaged|divorced)\b", re.IGNORECASE)
_GOING_TO = re.compile(r"^to\s+(\w+)", re.IGNORECASE)
_MOVING_TO = re.compile(r"^(?:to|into)\s+(.+)$", re.IGNORECASE)
_DIGIT = re.compile(r"\d")
_ON_IN = re.compile(r"^(?:on|in)\s")
_IN_AT = re.compile(r"^(?:in|at)\s+", re.IGNORECASE)
_NOT_TOOLS = re.compile(r"^(?:to|the\s+bathroom|the\s+toilet|every|each|it\s+)", re.IGNORECASE)
_LIVED = re.compile(r"\blived\b|\bhave lived\b|'ve lived")
_YOU = re.compile(r"\byou(?:r|rs)?\b", re.IGNORECASE)
_NEW_JOB = re.compile(r"\b(?:job|position|role|working)\s+(?:at|with|for)\s+(.+)$", re.IGNORECASE)
_USED_AS = re.compile(r"\s+as\s+(?:my|our|an?|the|his|her|their)\s+([a-z -]{2,20})$", re.I)
_LIGHT_PLAN = re.compile(r"^(?:be|keep|continue|make\s+it|try)\b", re.IGNORECASE)


def read_simple(match: re.Match[str], rule: Rule) -> Reading | None:
    """Object from ``obj``; negation from the rule or a ``neg`` group; pronoun objects rejected."""
    obj = clean_object(group(match, "obj"))
    if obj is None or is_pronoun(obj) or not has_content(obj):
        return None
    if rule.fact_type is FactType.PREFERENCE and is_reaction(obj):
        return None
    negated = rule.negated or group(match, "neg") is not None
    confidence = rule.confidence - (0.1 if len(obj.split()) > 10 else 0.0)
    return Reading(rule.predicate, obj, negated, confidence)


def read_prefers(match: re.Match[str], rule: Rule) -> Reading | None:
    reading = read_simple(match, rule)
    if reading is None:
        return None
    other = clean_object(group(match, "other"))
    extra = (("over", other),) if other else ()
    return Reading(
        reading.predicate, reading.object, reading.negated, reading.confidence, extra=extra
    )


def read_favorite(match: re.Match[str], rule: Rule) -> Reading | None:
    reading = read_simple(match, rule)
    category = clean_object(group(match, "cat"))
    if reading is None or category is None or len(category.split()) > 3:
        return None
    key = "_".join(category.lower().replace("-", " ").split())
    key = {"colour": "color", "flavour": "flavor"}.get(key, key)
    return Reading(f"favorite_{key}", reading.object, False, reading.confidence)


_NOT_PEOPLE = re.compile(
    r"^(?:my|our|his|her|their|him|them|me|us|friends?|family|the\s+kids|my\s+kids|mom|dad)\b",
    re.IGNORECASE,
)


def read_went_with(match: re.Match[str], rule: Rule) -> Reading | None:
    obj = clean_object(group(match, "obj"))
    if obj is None or _NOT_PEOPLE.match(obj) or is_pronoun(obj):
        return None
    return Reading("decided", obj, False, rule.confidence)


def read_decided(match: re.Match[str], rule: Rule) -> Reading | None:
    reading = read_simple(match, rule)
    if reading is None:
        return None
    subject = group(match, "team")
    connector = (group(match, "conn") or "").lower()
    negated = reading.negated or connector == "against"
    return Reading("decided", reading.object, negated, reading.confidence, subject=subject)


_NOT_ACTIONS = frozenset(
    """the a an my our his her their your this that these those some be say admit agree confess
    wonder ask guess bet assume pass mention thank tell see try hear feel think believe suppose
    keep let""".split()  # noqa: SIM905
)
_WEAK_PLANS = ("want", "wanna", "like", "hope", "excited")


def read_plan(match: re.Match[str], rule: Rule) -> Reading | None:
    verb = (group(match, "verb") or "").lower()
    obj = clean_object(group(match, "obj"))
    if obj is None or not verb or verb in _NOT_ACTIONS:
        return None
    if verb in {"have", "'ve"} and obj.lower().startswith(("have been", "have known", "have had")):
        return None
    if not has_content(obj):
        return None
    head = match.group(0).lower()
    confidence = rule.confidence
    if any(word in head for word in _WEAK_PLANS):
        confidence -= 0.1
    if len(obj.split()) < 2:
        confidence -= 0.15
    return Reading(rule.predicate, obj, rule.negated, confidence)


def read_need(match: re.Match[str], rule: Rule) -> Reading | None:
    obj = clean_object(group(match, "obj"))
    verb = (group(match, "verb") or "").lower()
    if obj is None or verb in _NOT_ACTIONS or verb == "have" or not has_content(obj):
        return None
    confidence = rule.confidence - (0.15 if len(obj.split()) < 2 else 0.0)
    if (group(match, "subj") or "").lower() == "we":
        confidence -= 0.2  # "we should / we need to" is mostly exhortation in conversation
    return Reading("needs_to", obj, False, confidence)


def read_reminder(match: re.Match[str], rule: Rule) -> Reading | None:
    obj = clean_object(group(match, "obj"))
    if obj is None or is_pronoun(obj):
        return None
    return Reading("needs_to", obj, False, rule.confidence, subject=group(match, "who"))


_LIFE_EVENT = re.compile(
    r"^\s*(?:married|engaged|divorced|promoted|hired|fired|laid\s+off|pregnant|a\s+new\s+job|"
    r"a\s+job|my\s+(?:first|new)|a\s+(?:dog|puppy|cat|kitten|house|car|degree|diploma|tattoo)|"
    r"accepted|admitted|into\s+|my\s+(?:phd|degree|license|licence|master)|a\s+(?:phd|raise))",
    re.IGNORECASE,
)
_SPECIFIC_EVENT_VERBS = frozenset(
    """moved relocated graduated adopted married divorced retired joined quit launched released
    shipped signed won lost broke passed failed celebrated opened bought sold started finished
    completed visited attended volunteered published founded enrolled applied interviewed
    migrated deployed upgraded met welcomed hosted organized organised ran flew travelled
    traveled painted competed performed""".split()  # noqa: SIM905
)
_PLACE_START = re.compile(r"^\s*(?:to\s+)?(?-i:[A-Z])")
_EVENT_NOUN = re.compile(
    r"\b(?:group|meeting|workshop|class|conference|concert|festival|party|wedding|game|match|"
    r"talk|seminar|session|retreat|camp|meetup|event|show|service|ceremony|funeral|rally|"
    r"protest|parade|fair|exhibition|gala|recital|course|lecture|hackathon|tournament)\b",
    re.IGNORECASE,
)


def read_past_event(match: re.Match[str], rule: Rule) -> Reading | None:
    verb = " ".join((group(match, "verb") or "").lower().split())
    obj = " ".join((group(match, "obj") or "").split())
    confidence = rule.confidence
    predicate: str | None = None
    target: str | None = None
    if verb in {"got", "became", "get"} and not _LIFE_EVENT.match(obj):
        confidence -= 0.2
    elif verb.split()[0] in _SPECIFIC_EVENT_VERBS or verb in {"got", "became"}:
        confidence += 0.15
    if verb in {"moved", "relocated"}:
        place = _MOVED_TO.match(obj)
        if place:
            predicate, target = "lives_in", clean_object(place.group(1))
    elif verb in {"went", "visited", "traveled", "travelled", "flew", "drove"}:
        place = _WENT_TO.match(obj)
        target = clean_object(place.group(1)) if place else None
        if target and (_EVENT_NOUN.search(target) or verb == "attended"):
            predicate = "attended"
        elif target and (verb == "visited" or _PLACE_START.match(obj)):
            predicate = "visited"
        else:
            target = None
    elif verb == "attended":
        predicate, target = "attended", obj or None
    elif verb in {"started", "joined"}:
        job = _NEW_JOB.search(obj)
        if job:
            predicate, target = "works_at", clean_object(job.group(1))
        elif verb == "joined" and obj:
            predicate, target = "member_of", obj
    if not obj and verb not in {"retired", "graduated", "married", "divorced", "moved"}:
        return None
    if obj and is_pronoun(obj):
        return None
    return Reading(predicate, target, False, confidence)


_LIFE_VERBS = frozenset(
    {"passed away", "died", "graduated", "graduates", "married", "retired", "gave birth", "born"}
)


def read_possessive_event(match: re.Match[str], rule: Rule) -> Reading | None:
    verb = " ".join((group(match, "verb") or "").lower().split())
    obj = clean_object(group(match, "obj")) or ""
    life = verb in _LIFE_VERBS or bool(_LIFE_OBJECT.match(obj))
    subject, owner = _owned_subject(match)
    if subject is None:
        return None
    confidence = rule.confidence + (0.1 if life else 0.0)
    extra = () if life else (("needs_time", "yes"),)
    return Reading(None, None, False, confidence, subject=subject, owner=owner, extra=extra)


def _owned_subject(match: re.Match[str]) -> tuple[str | None, str]:
    """("sister Anna", "my") from a "my sister Anna ..." match."""
    relation = " ".join((group(match, "rel") or "").split())
    if not relation or relation.lower() in PRONOUNS:
        return None, ""
    name = group(match, "name")
    owner = (group(match, "poss") or "my").lower()
    return (f"{relation} {name}" if name else relation), owner


def read_other_lives(match: re.Match[str], rule: Rule) -> Reading | None:
    reading = read_simple(match, rule)
    subject, owner = _owned_subject(match)
    if reading is None or subject is None:
        return None
    return Reading(
        "lives_in",
        reading.object,
        reading.negated,
        reading.confidence,
        subject=subject,
        owner=owner,
    )


def read_thing(match: re.Match[str], rule: Rule) -> Reading | None:
    thing = " ".join((group(match, "thing") or "").split())
    owner, _, rest = thing.partition(" ")
    if not rest:
        return None
    return Reading(
        None,
        None,
        False,
        rule.confidence,
        subject=rest,
        owner=owner.lower(),
        extra=(("needs_time", "yes"),),
    )


def read_progressive(match: re.Match[str], rule: Rule) -> Reading | None:
    verb = (group(match, "verb") or "").lower()
    obj = " ".join((group(match, "obj") or "").split())
    if not obj:
        return None
    if verb == "going":
        after = _GOING_TO.match(obj)
        if after is None:
            return None
        word = after.group(1)
        if not (
            word[0].isupper() or word.lower() in {"the", "a", "an", "my", "our", "see", "visit"}
        ):
            return None  # "going to <verb>" is a plan, read by the action rules
    predicate: str | None = None
    target: str | None = None
    if verb == "moving":
        place = _MOVING_TO.match(obj)
        if place:
            predicate, target = "lives_in", clean_object(place.group(1))
    extra = () if predicate == "lives_in" else (("needs_time", "yes"),)
    return Reading(predicate, target, False, rule.confidence, extra=extra)


_NOT_IDENTITY = re.compile(
    r"^(?:bit|little|lot|fan|mess|wreck|huge\s+fan|big\s+fan|sucker|believer|part|member|"
    r"fool|kid|child|baby|minute|moment|while|second|way|point)\b",
    re.IGNORECASE,
)


def read_role(match: re.Match[str], rule: Rule) -> Reading | None:
    obj = clean_object(group(match, "obj"))
    if obj is None or is_pronoun(obj) or _NOT_IDENTITY.match(obj):
        return None
    words = obj.lower().replace("-", " ").split()
    negated = group(match, "neg") is not None
    if len(words) > 6:
        return None
    if is_job_title(obj):
        return Reading("works_as", obj, negated, rule.confidence)
    if rule.name == "general.works_as":
        return Reading("works_as", obj, negated, rule.confidence)
    return Reading("is_a", obj, negated, rule.confidence - 0.2)


def read_role_other(match: re.Match[str], rule: Rule) -> Reading | None:
    reading = read_role(match, rule)
    subject, owner = _owned_subject(match)
    if (
        reading is None
        or subject is None
        or subject.split()[0].lower()
        in {"favorite", "favourite", "fave", "goal", "plan", "name", "birthday"}
    ):
        return None
    return Reading(
        reading.predicate,
        reading.object,
        reading.negated,
        reading.confidence,
        subject=subject,
        owner=owner,
    )


_PET = re.compile(
    r"\b(?:dogs?|puppy|puppies|cats?|kittens?|hamsters?|parrots?|fish|rabbits?|bunny|bunnies|"
    r"birds?|pets?|turtles?|tortoises?|snakes?|horses?|goldfish|guinea\s+pigs?|ferrets?|lizards?|"
    r"retriever|labrador|poodle|terrier|beagle|bulldog|shepherd|chihuahua|spaniel|husky|corgi|"
    r"dachshund|pug|rottweiler|collie|doberman|boxer|greyhound)\b",
    re.IGNORECASE,
)
_KIDS = re.compile(
    r"\b(?:kids?|children|child|sons?|daughters?|babies|baby|twins|boys|girls|toddlers?)\b",
    re.IGNORECASE,
)
_SIBLINGS = re.compile(r"\b(?:brothers?|sisters?|siblings?)\b", re.IGNORECASE)
_NOT_POSSESSIONS = re.compile(
    r"\b(?:question|questions|idea|ideas|problem|problems|issue|issues|feeling|feelings|headache|"
    r"cold|fever|flu|time|lot|lots|chance|plan|plans|thing|things|day|night|week|bunch|couple|"
    r"moment|minute|second|look|blast|ball|point|clue|doubt|suggestion|concern|concerns|"
    r"appointment|meeting|interview|exam|test|flight|trip|surgery|party|wedding|concert|game|"
    r"date|call|presentation|deadline|conference|class|lesson|session|reservation|event|"
    r"vacation|holiday|shift|workshop|demo|work|job|homework|fun|great|good|favorite|"
    r"favourite|crush|dream|nightmare|thought|thoughts|opinion|sense|way|reason|right|choice|"
    r"option|break|rest|nap|access|permission|trouble|difficulty|address|e-?mail|number|"
    r"manager|boss|employer|phone\s+number)\b",
    re.IGNORECASE,
)


def read_possession(match: re.Match[str], rule: Rule) -> Reading | None:
    obj = clean_object(group(match, "obj"))
    if obj is None or _NOT_POSSESSIONS.search(obj) or is_pronoun(obj):
        return None
    negated = group(match, "neg") is not None or obj.lower().startswith("no ")
    if _PET.search(obj):
        return Reading("owns", obj, negated, rule.confidence + 0.1, extra=(("kind", "pet"),))
    if _KIDS.search(obj):
        return Reading("parent_of", obj, negated, rule.confidence + 0.1)
    if _SIBLINGS.search(obj):
        return Reading("sibling_of", obj, negated, rule.confidence + 0.1)
    return Reading("owns", obj, negated, rule.confidence)


_RELATIONS = {
    "sister": "sibling_of",
    "brother": "sibling_of",
    "mom": "child_of",
    "mother": "child_of",
    "mum": "child_of",
    "dad": "child_of",
    "father": "child_of",
    "son": "parent_of",
    "daughter": "parent_of",
    "kid": "parent_of",
    "child": "parent_of",
    "friend": "friend_of",
    "boss": "managed_by",
    "colleague": "colleague_of",
    "coworker": "colleague_of",
    "co-worker": "colleague_of",
    "manager": "managed_by",
    "mentor": "knows",
    "roommate": "knows",
    "neighbor": "knows",
    "neighbour": "knows",
    "wife": "spouse_of",
    "husband": "spouse_of",
    "spouse": "spouse_of",
    "boyfriend": "partner_of",
    "girlfriend": "partner_of",
    "partner": "partner_of",
    "fiance": "partner_of",
    "fiancé": "partner_of",
    "fiancee": "partner_of",
    "fiancée": "partner_of",
}
_NOT_NAMES = frozenset(
    """I The A An And But So My Our Is Was Are Were He She They It We You This That Then There Here
    When What Who How Why Yesterday Today Tomorrow Last Next On In At For""".split()  # noqa: SIM905
)


def read_relation(match: re.Match[str], rule: Rule) -> Reading | None:
    relation = (group(match, "rel") or "").lower()
    name = group(match, "obj")
    if not name or name.split()[0] in _NOT_NAMES:
        return None
    predicate = _RELATIONS.get(relation)
    if predicate is None:
        predicate = "relative_of"
    return Reading(predicate, name, False, rule.confidence, extra=(("relation", relation),))


def read_divorced(match: re.Match[str], rule: Rule) -> Reading | None:
    name = group(match, "obj")
    if not name or name.split()[0] in _NOT_NAMES:
        return None
    return Reading("spouse_of", name, True, rule.confidence)


_EMAIL_ATTR = re.compile(r"\b(?:e-?mail|mail)\b", re.IGNORECASE)
_PHONE_ATTR = re.compile(r"\b(?:phone|mobile|cell|number)\b", re.IGNORECASE)


def read_attribute(match: re.Match[str], rule: Rule) -> Reading | None:
    """An attribute set to a value; the builder only marks it, the extractor checks the value."""
    attribute = " ".join((group(match, "attr") or "").split())
    if not attribute:
        return None
    owner, _, rest = attribute.partition(" ")
    if _EMAIL_ATTR.search(rest) and owner.lower() in {"my", "our"}:
        return Reading("email", None, False, rule.confidence, extra=(("value_after", "yes"),))
    if (
        _PHONE_ATTR.search(rest)
        and owner.lower() in {"my", "our"}
        and "number" in rest.lower()
        and "phone" in rest.lower()
    ):
        return Reading("phone", None, False, rule.confidence, extra=(("value_after", "yes"),))
    return Reading(
        "has_value",
        None,
        False,
        rule.confidence,
        subject=rest,
        owner=owner.lower(),
        extra=(("value_after", "yes"),),
    )


def read_age(match: re.Match[str], rule: Rule) -> Reading | None:
    age = group(match, "obj")
    if age is None or not 0 < int(age) < 130:
        return None
    return Reading("has_age", age, False, rule.confidence)


def read_born(match: re.Match[str], rule: Rule) -> Reading | None:
    obj = clean_object(group(match, "obj"))
    if obj is None:
        return None
    if _DIGIT.search(obj) or _ON_IN.match(obj):
        return Reading("birthday", obj, False, rule.confidence, fact_type=FactType.GENERAL)
    place = _IN_AT.sub("", obj)
    return Reading("is_from", place, False, rule.confidence)


def read_uses(match: re.Match[str], rule: Rule) -> Reading | None:
    verb = (group(match, "verb") or "").lower()
    obj = clean_object(group(match, "obj"))
    if obj is None or is_pronoun(obj):
        return None
    if "run" in verb and not (obj[:1].isupper() or _DIGIT.search(obj)):
        return None  # "I run every morning" is not a tool
    if _NOT_TOOLS.match(obj):
        return None
    role = _USED_AS.search(obj)
    if role is not None:  # "I use Vim as my editor": the one editor
        obj = obj[: role.start()].strip()
        predicate = noun_predicate(role.group(1))
        if predicate is not None and predicate.startswith("uses_"):
            return Reading(predicate, obj, False, rule.confidence + 0.1)
    head, _, purpose = obj.partition(" for ")
    kind = object_predicate(head) if purpose else None
    if kind is not None:  # "I use Jenkins for CI": the CI service
        return Reading(kind, head, False, rule.confidence)
    return Reading(object_predicate(obj) or "uses", obj, False, rule.confidence)


def read_lives(match: re.Match[str], rule: Rule) -> Reading | None:
    reading = read_simple(match, rule)
    if reading is None:
        return None
    verb = match.group(0).lower()
    if "grew up" in verb:
        return Reading("is_from", reading.object, reading.negated, reading.confidence)
    if _LIVED.search(verb) and not reading.negated:
        return Reading(None, None, False, reading.confidence - 0.2)
    return reading


def read_x_over_y(match: re.Match[str], rule: Rule) -> Reading | None:
    obj = clean_object(group(match, "obj"))
    other = clean_object(group(match, "other"))
    if obj is None or other is None or is_pronoun(obj):
        return None
    return Reading("prefers", obj, False, rule.confidence, extra=(("over", other),))


_OPINION_START = re.compile(
    r"^(?:'[a-z]{1,2}\s+)?\s*(?:(?:really|just|totally|also|so|definitely|honestly|still|"
    r"actually|truly|do|kinda)\s+)*(?:think|thought|feel|felt|guess|hope|know|knew|agree|bet|"
    r"wonder|wondered|mean|see|saw\s+that|understand|get\s+(?:it|that|you)|can't\s+(?:believe|"
    r"wait|imagine)|cannot\s+(?:believe|wait)|couldn't\s+(?:believe|agree)|appreciate|wish|"
    r"would|could|can|should|may|might|must|'d|want\s+you|love\s+(?:that|it|this|how|your|you)|"
    r"like\s+(?:that|it|this|how|your|you)|believe|remember|recall|admire|totally\s+get|"
    r"need\s+you|was\s+(?:wondering|thinking)|am\s+(?:sure|not\s+sure)|\d+%|"
    r"(?:(?:'m|am|are|'re)\s+)?(?:gonna|going\s+to|will|'ll)\s+(?:keep|continue|make\s+it|try|"
    r"do\s+(?:my|our)\s+best|be\s+there)|keep\s+(?:going|pushing|it\s+up)|"
    r"(?:'m|am|was|'ve\s+been|are|'re)\s+(?:so\s+|really\s+|super\s+|very\s+|totally\s+|"
    r"just\s+|also\s+|truly\s+)*(?:glad|happy|sorry|proud|excited|thrilled|grateful|thankful|"
    r"stoked|pumped|honored|honoured|touched|amazed|impressed|jealous|curious|sure|afraid|"
    r"blessed|lucky|inspired|moved|delighted|relieved|here|there|in|with\s+you|on\s+it|"
    r"all\s+for|down|up\s+for|not\s+sure|looking\s+forward|loving|enjoying|feeling|"
    r"wondering|thinking|hoping|rooting|considering|kidding|joking|good|okay|ok|fine|well|"
    r"doing|tired|hungry|bored|busy|confused|excited|glad|sad|stressed|exhausted|nervous))\b",
    re.IGNORECASE,
)
_PAST_START = re.compile(
    r"^(?:\s+(?:just|finally|recently|also|actually|even|then))?\s+(?:\w+ed|was|were|had|"
    r"went|got|did|made|saw|met|ran|won|lost|left|began|broke|bought|brought|caught|felt|"
    r"found|flew|held|kept|paid|sold|sent|spent|taught|told|wrote|gave|took|came|became|"
    r"drove|ate|fell|grew|heard|hurt|put|quit|read|rode|sang|sat|slept|spoke|swam|threw|"
    r"woke|wore|built|chose|drew|drank|fought|hid|hit|set)\b",
    re.IGNORECASE,
)


def read_statement(match: re.Match[str], rule: Rule) -> Reading | None:
    """Any other first-person statement: low confidence, read as an event when in the past."""
    rest = match.group("obj") or ""
    words = [word for word in rest.split() if not word.startswith("'")]
    if _OPINION_START.match(rest) or len(words) < 4:
        return None
    if _YOU.search(rest):
        return None  # about the other person, not the speaker
    fact_type = FactType.EVENT if _PAST_START.match(rest) else FactType.GENERAL
    return Reading(None, None, False, rule.confidence, fact_type=fact_type)


_IMPLICIT_AUX = {
    "been": "I've",
    "gonna": "I'm",
    "planning to": "I'm",
    "working on": "I'm",
}


def read_implicit(match: re.Match[str], rule: Rule) -> Reading | None:
    """Chat without a subject ("Been rehearsing hard", "Gonna continue my edu"): the speaker."""
    verb = " ".join((group(match, "verb") or "").lower().split())
    obj = clean_object(group(match, "obj"))
    if obj is None or not has_content(obj) or _YOU.search(obj):
        return None
    prefix = _IMPLICIT_AUX.get(verb, "I")
    if verb in {"gonna", "planning to"} and _LIGHT_PLAN.match(obj):
        return None
    if verb in {"gonna", "planning to"}:
        return Reading(
            "plans_to",
            obj,
            False,
            rule.confidence + 0.05,
            fact_type=FactType.ACTION,
            extra=(("implicit", prefix),),
        )
    fact_type = FactType.GENERAL if verb in {"been", "working on"} else FactType.EVENT
    return Reading(
        None, None, False, rule.confidence, fact_type=fact_type, extra=(("implicit", prefix),)
    )
