"""The builder of the change rules: who changed what, from what, to what.

One reader for the rules of :mod:`.rulebook_change`. It reads the match's named groups:

* the subject: ``who`` (I, we, a name), ``whose`` (my, our, "Priya's") or ``thing`` (a service,
  a meeting; written "the ..."), else the speaker;
* the value: ``obj``, the value before it ``old`` when named ("from MySQL to Postgres",
  "replaced Jenkins with ..."), a ``noun`` ("my new *manager* is") and ``days`` (a schedule);
* the predicate: a schedule's when the value is a day of a thing ("the standup moved to
  Wednesday"), else the noun's ("my new *manager* is"), else the value's kind (:mod:`.kinds`:
  Postgres is a database, Neovim an editor, "the payments team" a team), else the rule's own;
  a change of no known kind said of a person ("Amara just switched over to Zalando", "Ravi is
  at Zalando now") is ``changed_to``, which the writer names from what the person holds
  (:func:`sagewai.core._claims.unnamed_change_predicate`).

A reading that changes something carries ``change`` (the word that said so) and, when named,
``replaces`` (the old value) in its extra fields; they reach the fact's metadata, where the
reconciler reads them (:mod:`sagewai.core._claims`). A weekly schedule carries ``recurrence``
(an RFC 5545 rule) and its object is "every Monday", not a date.
"""

from __future__ import annotations

import re

from sagewai.core._predicates import UNNAMED_CHANGE
from sagewai.core._records import FactType
from sagewai.extraction._kinds import (
    HABITUAL_MEETING,
    kind_of,
    noun_predicate,
    object_predicate,
    recurrence,
    weekday_of,
)
from sagewai.extraction._patterns import Reading, Rule, clean_object, group, is_pronoun

__all__ = ["read_change"]

_NOT_NAME_WORDS = frozenset(
    """I The A An And But So My Our Is Was Are Were He She They It We You This That Then There
    Here When What Who How Why Yesterday Today Tomorrow Tonight Last Next On In At For Also Now
    Big News Update Btw Oh Well Good Great Just Finally Recently Actually Guess Anyway Since After
    Before From Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March
    April May June July August September October November December Meanwhile Sadly Luckily
    Fun Fact Quick Heads Hey Hi Hello Ok Okay Yes No Sure Cool Wow Please These Those Every
    Each""".split()  # noqa: SIM905
)
_ARTICLE = re.compile(r"^(?:a|an|the|my|our)\s+", re.IGNORECASE)
_NOW = re.compile(r"\b(?:now|these\s+days|nowadays|from\s+now\s+on|anymore|no\s+longer)\b", re.I)
_NEW = re.compile(r"\bnew\b", re.IGNORECASE)
_DAY_WORD = re.compile(r"[A-Za-z]+")
_PLURAL_OR_EVERY = re.compile(r"\b(?:every|each)\b|days\b", re.IGNORECASE)
_DATED = re.compile(r"\b(?:next|this|last|coming|the\s+\d)", re.IGNORECASE)
_DIGIT = re.compile(r"\d")
_OWNED_BEFORE = re.compile(
    r"\b(?:my|our|his|her|their|your)\s+(?:[a-z'-]+\s+){0,2}$", re.IGNORECASE
)
_CAPITAL = re.compile(r"^(?-i:[A-Z0-9])")


_SPEAKER_WORDS = frozenset(
    {"i", "we", "i've", "we've", "i'd", "we'd", "i'm", "we're", "i'll", "we'll"}
)


def _person(raw: str | None) -> tuple[str | None, bool]:
    """``(subject, is_speaker)`` of a ``who`` group; a name loses leading sentence words."""
    if raw is None:
        return None, True
    words = raw.replace("’", "'").split()
    if len(words) == 1 and words[0].lower() in _SPEAKER_WORDS:
        return None, True
    while words and words[0] in _NOT_NAME_WORDS:
        words.pop(0)
    if not words:  # "Just moved to Oslo!": sentence words, no name; the speaker's
        return None, True
    return " ".join(words), False


def _thing(raw: str | None) -> str | None:
    if raw is None:
        return None
    thing = " ".join(raw.split()).strip(" '")
    return thing or None


def _value(raw: str | None) -> str | None:
    value = clean_object(raw)
    if value is None:
        return None
    value = _ARTICLE.sub("", value).strip()
    if not value or is_pronoun(value):
        return None
    return value


def _valid(predicate: str, value: str) -> bool:
    """Whether ``value`` can be a value of ``predicate`` (names are capitalised, ...)."""
    if predicate == "email":
        return "@" in value and " " not in value
    if predicate == "phone":
        return len(_DIGIT.findall(value)) >= 6
    if predicate in {"managed_by", "works_at", "lives_in", "is_from", UNNAMED_CHANGE}:
        return bool(_CAPITAL.match(value)) and len(value.split()) <= 5
    if predicate == "drives":
        return kind_of(value) == "car" or bool(_CAPITAL.match(value))
    if predicate == "on_team":
        return kind_of(value) == "team"
    if predicate.startswith("uses_"):
        return kind_of(value) is not None or bool(_CAPITAL.match(value))
    return True


def _schedule(days_text: str, thing: str | None, head: str) -> tuple[str, str | None] | None:
    """``(object, rrule or None)`` of the days named; a recurrence for recurring things."""
    days = [d for d in (weekday_of(w) for w in _DAY_WORD.findall(days_text)) if d]
    if not days:
        return None
    recurring = (
        bool(_PLURAL_OR_EVERY.search(days_text))
        or bool(_PLURAL_OR_EVERY.search(head))
        or (thing is not None and HABITUAL_MEETING.search(thing) is not None)
    )
    if recurring and not _DATED.search(days_text):
        return recurrence(days)
    return days_text.strip(), None


_LASTING = re.compile(r"\b(?:these\s+days|nowadays)\b", re.IGNORECASE)
_UNNAMED = frozenset({"change.switched", "change.now_at"})
"""Rules whose value may be of no known kind: read as an unnamed change (``changed_to``) that
the writer names from what its subject holds (``unnamed_change_predicate``)."""

_CHANGE_VERBS = frozenset(
    """moved relocated transferred switched changed migrated upgraded ported bumped converted
    pushed shifted rescheduled replaced swapped ditched traded exchanged dropped joined started
    got took went update updated change set""".split()  # noqa: SIM905
)
_MOVES_HOME = frozenset({"moved", "relocated"})


def read_change(match: re.Match[str], rule: Rule) -> Reading | None:
    """Read a change rule's match (see the module's docstring)."""
    text = match.group(0)
    thing = _thing(group(match, "thing"))
    noun = group(match, "noun")
    owner = (group(match, "owner") or "").lower()
    if thing is not None and owner in {"my", "our"} and noun_predicate(thing) is not None:
        noun, thing = thing, None  # "I changed my number to ...": the speaker's number
    person, speaker = _person(group(match, "who"))
    whose = group(match, "whose")
    if whose is not None:
        if whose.lower() in {"my", "our"}:
            person, speaker = None, True
        else:
            person, speaker = _person(whose.removesuffix("'s").removesuffix("’s"))
    if not speaker and person is None and thing is None:
        return None
    if person is not None and _OWNED_BEFORE.search(match.string, 0, match.start()):
        return None  # "my brother Kevin lives in ...": the possessive rules' subject
    extra: list[tuple[str, str]] = []
    days = group(match, "days")
    obj: str | None
    predicate: str | None
    if days is not None or rule.predicate == "scheduled_on":
        obj = days or group(match, "obj") or ""
    else:
        obj = _value(group(match, "obj"))
        if obj is None:
            return None
    if days is not None or weekday_of(obj.split()[0] if obj else "") is not None:
        # "our standup is on Monday", "the standup moved to Wednesdays" (a person does not
        # move to a Monday)
        schedule = _schedule(obj, thing, text) if thing is not None else None
        if schedule is None:
            return None
        obj, rule_text = schedule
        predicate = "scheduled_on"
        if rule_text is not None:
            extra.append(("recurrence", rule_text))
    else:
        if noun is not None:
            predicate = noun_predicate(noun)
        else:
            predicate = object_predicate(obj) or rule.predicate
            if predicate is None and rule.name in _UNNAMED and thing is None:
                predicate = UNNAMED_CHANGE  # "Amara switched over to Zalando": of what, unsaid
        if predicate is None or predicate == "scheduled_on" or not _valid(predicate, obj):
            return None
    verb = " ".join((group(match, "verb") or "").lower().split())
    changed = verb.split()[0] if verb and verb.split()[0] in _CHANGE_VERBS else None
    if changed is None and _NEW.search(text):
        changed = "new"
    elif changed is None and (_NOW.search(text) or group(match, "old")):
        changed = "now"
    if changed is not None:
        extra.append(("change", changed))
    elif predicate == UNNAMED_CHANGE:
        return None  # "Ravi is at Zalando": a place he is at, no change said
    via = group(match, "via")
    if via is not None:
        if speaker and via.lower() == "at" and not _LASTING.search(text):
            return None  # "I'm at Starbucks now, come over": where I am, not where I work
        extra.append(("via", via.lower()))
    old = _value(group(match, "old"))
    if old is not None and old.casefold() != obj.casefold():
        extra.append(("replaces", old))
    negated = group(match, "neg") is not None
    if negated:  # "no longer lives in Porto" ends a value and names no new one
        extra = [item for item in extra if item[0] not in {"change", "replaces"}]
    return Reading(
        predicate,
        obj,
        negated,
        rule.confidence,
        subject=thing if thing is not None else person,
        owner="the" if thing is not None else None,
        # A move of home stays an event (it happened on a day) as well as the new home.
        fact_type=FactType.EVENT
        if predicate == "lives_in" and changed in _MOVES_HOME
        else FactType.GENERAL,
        extra=tuple(extra),
    )


def read_acquired(match: re.Match[str], rule: Rule) -> Reading | None:
    """A car got, bought or owned ("I sold my Volvo and got a Kia Niro"): the car one drives.

    Only a car: "I got a cold", "I have a Postgres instance" are not what one drives.
    """
    reading = read_change(match, rule)
    if reading is None or reading.predicate != "drives" or kind_of(reading.object or "") != "car":
        return None
    value = reading.object or ""
    if not _CAPITAL.match(value) or value.split()[0].casefold() in _AMBIGUOUS:
        return None  # "a mini fridge"
    return reading


_EMAIL = re.compile(r"@")
_PHONE_CUE = re.compile(
    r"\b(?:number|phone|mobile|cell|call|reach|text|whatsapp|signal|ring|contact)\b", re.I
)
_FORMER = re.compile(
    r"(?:\b(?:instead\s+of|rather\s+than|from|replacing|replaces|not|no\s+longer|than|off|of)"
    r"|\b(?:old|previous|former|dead|ex)(?:\s+[a-z-]+){0,2})\s*[:(]?\s*$",
    re.IGNORECASE,
)
_SOMEONE_ELSES = re.compile(
    r"\b(?:his|her|their|your|its)\b|(?-i:[A-Z][a-z]+)(?:'s|’s)\b"
    r"|\b(?:my|our)\s+(?!(?:new|current|personal|private|work|main|own|phone|mobile|cell|"
    r"e-?mail|address|number|contact|details|inbox)\b)[a-z]+",
    re.IGNORECASE,
)
_TO_SOMEONE = re.compile(
    r"\b(?:e-?mail|mail|write\s+to|contact|cc|bcc|ping|message|call|ring|text|dial|"
    r"send\s+(?:\w+\s+)?to|forward\s+(?:\w+\s+)?to)\s*$",
    re.IGNORECASE,
)
_CALL_NAME = re.compile(r"\b(?:call|reach|text|ring|email)\s+(?-i:[A-Z])", re.IGNORECASE)
_DONT = re.compile(r"\b(?:don't|do\s+not|never|stop|no\s+longer|not)\b", re.IGNORECASE)
_RENEWED = re.compile(
    r"\b(?:new|now|from\s+now\s+on|changed|instead|updated|switched|moved|no\s+longer)\b", re.I
)


def read_contact(match: re.Match[str], rule: Rule) -> Reading | None:
    """The speaker's e-mail address or phone number, however it is said ("Write to me at
    a@b.io", "You can call me on +49 151 2345678", "Please use a@b.io from now on").

    A phone number needs a word that says it is one (number, phone, call, reach, ...); an
    e-mail address is one by its shape. Neither may be someone else's ("my sister's number is
    ...", "call Priya on ...", "email eva@x.io about ...") or the value before ("instead of
    ...", "the old number ..."); "don't use ... anymore" ends it. "new", "now", "from now on"
    mark it as a change, which ends the speaker's other addresses or numbers.
    """
    value = match.group("obj").strip()
    text = match.string
    if _EMAIL.search(value):
        predicate = "email"
    else:
        if len(_DIGIT.findall(value)) < 7 or not _PHONE_CUE.search(text):
            return None
        predicate = "phone"
    before = text[: match.start()]
    if _FORMER.search(before):
        return None  # "... instead of a@b.io": the value before, not the one now
    if _TO_SOMEONE.search(before):
        return None  # "Email eva@x.io about the invoice", "call +49 ... for a table"
    if _SOMEONE_ELSES.search(before) or _CALL_NAME.search(before):
        return None  # "my sister's number is ...", "call Priya on ..."
    if _DONT.search(before):  # "Please don't use a@b.io anymore": it ends, nothing new
        return Reading(predicate, value, True, rule.confidence)
    extra: tuple[tuple[str, str], ...] = (("change", "new"),) if _RENEWED.search(text) else ()
    former = [
        m.group("obj").strip()
        for m in match.re.finditer(text, match.end())
        if _FORMER.search(text[: m.start()])
    ]
    if former:
        extra = (*extra, ("replaces", former[0]))
    return Reading(predicate, value, False, rule.confidence, extra=extra)


_AMBIGUOUS = frozenset(
    """go edge arc cursor drone seat mini atom fleet aurora spanner oracle bamboo nano rider
    travis sublime""".split()  # noqa: SIM905
)
_NOT_NOW = re.compile(
    r"\?|\b(?:used\s+to|sold|ditched|dropped|left|quit|replaced|got\s+rid|no\s+longer|anymore|"
    r"previously|before|instead|gave\s+up|stopped|tried|trying|try|considering|thinking|"
    r"might|maybe|perhaps|want|wants|wish|would|could|should|plan|planning|going\s+to|will|"
    r"won't|hate|hates|dislike|don't|doesn't|didn't|isn't|aren't|wasn't|not|never|recommend|"
    r"compare|comparing|vs|versus|or|than|if|when|whether|friend|friends|sister|brother|"
    r"mother|father|mom|dad|wife|husband|partner|colleague|he|she|they|his|her|their|your|you)\b",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|me|my|we|we're|we've|us|our)\b", re.IGNORECASE)
_OUR_THING = re.compile(
    r"\b(?:the|our)\s+(?P<thing>(?:[a-z][\w-]*\s+){0,2}(?:service|api|app|backend|frontend|"
    r"pipeline|job|site|platform|database|db|cluster|server|stack|project|repo|worker|bot))\b",
    re.IGNORECASE,
)
_NAME_FIRST = re.compile(r"(?-i:([A-Z][a-z]{1,30}))(?:'s|’s)?\s")
_NOW_WORDS = re.compile(
    r"\b(?:now|new|these\s+days|nowadays|from\s+now\s+on|switched|moved|migrated|upgraded)\b",
    re.IGNORECASE,
)


def read_kind_value(match: re.Match[str], rule: Rule) -> Reading | None:
    """The catch-all of the change rules: a sentence of ours that names one value of a known
    kind ("These days it's all Neovim for me", "Our orders service sits on MySQL") states it as
    the current value of that kind's predicate, for the speaker or the thing of ours it names.

    It says nothing when the sentence could mean another time or another person: a question,
    a past or wished-for value ("used to", "sold", "thinking about", "instead of"), a negation,
    someone else ("my sister", "he"), two values of the kind, or a lower-case common word
    ("a mini fridge").
    """
    value = match.group("obj")
    text = match.string
    bare = value.split()[0].casefold()
    if bare in _AMBIGUOUS or not (value[:1].isupper() or value.casefold().startswith("the ")):
        return None
    predicate = object_predicate(value)
    if predicate is None or _NOT_NOW.search(text):
        return None
    kind = kind_of(value)
    others = [
        m.group("obj")
        for m in match.re.finditer(text)
        if m.start() != match.start() and kind_of(m.group("obj")) == kind
    ]
    if others:
        return None
    thing = _OUR_THING.search(text)
    named = _NAME_FIRST.match(text)
    subject: str | None = None
    owner: str | None = None
    if thing is not None and predicate not in {"drives", "on_team", "uses_editor"}:
        subject, owner = " ".join(thing.group("thing").split()), "the"
    elif (
        named is not None
        and named.group(1) not in _NOT_NAME_WORDS
        and not _FIRST_PERSON.search(text)
    ):
        subject = named.group(1)  # "Tariq is on Neovim now"
    elif not _FIRST_PERSON.search(text):
        return None
    obj = _value(value)
    if obj is None:
        return None
    extra = (("change", "now"),) if _NOW_WORDS.search(text) else ()
    return Reading(
        predicate,
        obj,
        False,
        rule.confidence,
        subject=subject,
        owner=owner,
        extra=extra,
    )
