"""Rules for changes, stated the way people state them, and the one-at-a-time facts they change.

"I moved to Lisbon", "Priya switched to Neovim", "We migrated the orders service to Postgres",
"We upgraded the billing API from Python 3.10 to 3.11", "My new manager is Omar Haddad",
"I now report to Omar", "We replaced Jenkins with GitHub Actions", "The standup moved to
Wednesday", "Our standup is on Mondays": each is read into the same predicate as the statement
it changes (``lives_in``, ``uses_editor``, ``uses_database``, ``uses_runtime``, ``managed_by``,
``uses_ci``, ``scheduled_on``), so the reconciler sees the old value and the new one side by
side and supersedes the old. Subjects are the speaker (I, we, my, our), a named person
("Priya", "Priya's") or a thing of ours ("the orders service", "our team standup", written
"the ..."). The builder is :func:`~.readers_change.read_change`.

Part of the rule table of :class:`~.rules.RuleBasedFactExtractor` (see :mod:`.rulebook`); the
rules are free (searched in the whole sentence) and tried only when one of their keywords is in
it. They read with confidence 0.85, above the general rules they overlap ("I moved to the
platform team" is a team, not a home).
"""

from __future__ import annotations

from sagewai.core._records import FactType
from sagewai.extraction import _patterns
from sagewai.extraction._patterns import NAME, OBJ_CHAR, Anchor, Rule
from sagewai.extraction._patterns import compile_rule_pattern as _re
from sagewai.extraction._readers_change import read_change

__all__ = ["CHANGE_RULES"]


def _kw(words: str) -> frozenset[str]:
    return frozenset(words.split())


def _inside_values(end: str) -> str:
    """An object's end that does not stop inside a value ("Python 3.11", "a@b.io")."""
    return end.replace('[,.;:!?()\\n\\"]', '(?:[,;:!?()\\n\\"]|\\.(?![\\w/~]))', 1)


END = _inside_values(_patterns.END)
END_PLACE = _inside_values(_patterns.END_PLACE)
END_WORK = _inside_values(_patterns.END_WORK)
_WHO = r"(?P<who>\b(?:i|we)(?:['’](?:ve|d))?\b|" + NAME + r")"
_WHOSE = r"(?P<whose>\b(?:my|our)\b|" + NAME + r"(?:'s|’s))"
_ADVS = (
    r"(?:\s+(?:just|finally|recently|also|now|officially|actually|already|since|then|eventually|"
    r"have|has|'ve|had)){0,3}"
)
_THING = (
    r"\b(?P<owner>the|our|my)\s+(?P<thing>[a-z][\w'-]*(?:\s+(?:[a-z0-9][\w'-]*|(?-i:[A-Z]+)))"
    r"{0,3}?)"
)
_VALUE = r"(?P<obj>" + OBJ_CHAR + r"{1,60}?)"
_OLD = r"(?:\s+from\s+(?P<old>" + OBJ_CHAR + r"{1,40}?))?"
_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
_DAYS = r"(?P<days>" + _DAY + r"(?:\s*(?:,|and|&|,\s*and)\s*" + _DAY + r"){0,4})\b"
_MOVE_VERBS = (
    r"moved|changed|shifted|rescheduled|switched|migrated|upgraded|ported|bumped|converted|"
    r"pushed|transferred"
)
_CONF = 0.85

CHANGE_RULES: tuple[Rule, ...] = (
    Rule(  # "The team standup moved to Wednesday", "the orders service was migrated to MySQL"
        "change.thing_moved",
        FactType.GENERAL,
        Anchor.FREE,
        _re(
            _THING + r"\s+(?:has\s+been\s+|have\s+been\s+|was\s+|were\s+|got\s+|is\s+being\s+)?"
            r"(?:just\s+|now\s+|officially\s+|finally\s+)?(?P<verb>" + _MOVE_VERBS + r")"
            r"(?:\s+(?:back|over))?" + _OLD + r"\s+(?:to|onto)\s+" + _VALUE + END_PLACE
        ),
        _CONF,
        builder=read_change,
        keywords=_kw(
            "moved changed shifted rescheduled switched migrated upgraded ported bumped "
            "converted pushed transferred"
        ),
    ),
    Rule(  # "We migrated the orders service to Postgres", "We moved the standup to Fridays"
        "change.moved_thing",
        FactType.GENERAL,
        Anchor.FREE,
        _re(
            _WHO
            + _ADVS
            + r"\s+(?P<verb>"
            + _MOVE_VERBS
            + r")\s+"
            + _THING
            + r"(?:\s+(?:back|over))?"
            + _OLD
            + r"\s+(?:to|onto)\s+"
            + _VALUE
            + END_PLACE
        ),
        _CONF,
        builder=read_change,
        keywords=_kw(
            "moved changed shifted rescheduled switched migrated upgraded ported bumped "
            "converted pushed transferred"
        ),
    ),
    Rule(  # "Priya moved to Lisbon", "I switched to Neovim", "I moved to the platform team"
        "change.moved",
        FactType.GENERAL,
        Anchor.FREE,
        _re(
            _WHO + _ADVS + r"\s+(?P<verb>moved|relocated|transferred|switched|changed|migrated|"
            r"went\s+over|moved\s+over|switched\s+over)(?:\s+(?:back|over|jobs|teams))?"
            + _OLD
            + r"\s+(?:to|into)\s+"
            + _VALUE
            + END_PLACE
        ),
        _CONF,
        "lives_in",
        builder=read_change,
        keywords=_kw("moved relocated transferred switched changed migrated went"),
    ),
    Rule(  # "We replaced Jenkins with GitHub Actions", "I traded in my Corolla for a Kia Niro"
        "change.replaced",
        FactType.GENERAL,
        Anchor.FREE,
        _re(
            _WHO + _ADVS + r"\s+(?P<verb>replaced|swapped|ditched|traded(?:\s+in)?|exchanged|"
            r"dropped)\s+(?:(?:my|our|the|his|her|their)\s+)?(?P<old>" + OBJ_CHAR + r"{1,40}?)"
            r"\s+(?:with|for)\s+" + _VALUE + r"(?:\s+(?:in|for|on)\s+" + _THING + r")?" + END_PLACE
        ),
        _CONF,
        "uses",
        builder=read_change,
        keywords=_kw("replaced swapped ditched traded exchanged dropped"),
    ),
    Rule(  # "My new manager is Omar Haddad", "Priya's email is now p@x.io", "my editor is Vim"
        "change.new_noun",
        FactType.GENERAL,
        Anchor.FREE,
        _re(
            _WHOSE + r"\s+(?:new\s+|current\s+)?(?P<noun>(?:line\s+|team\s+|text\s+|code\s+|"
            r"phone\s+|mobile\s+|cell\s+|e-?mail\s+|job\s+)?(?:manager|boss|lead|employer|"
            r"company|workplace|team|car|ride|editor|ide|browser|e-?mail|address|phone|number|"
            r"mobile|cell|home|city|title|role|position))\s+is\s+(?:now\s+)?(?:an?\s+|the\s+)?"
            + _VALUE
            + END
        ),
        _CONF,
        builder=read_change,
        keywords=_kw(
            "manager boss lead employer company workplace team car ride editor ide browser "
            "email e mail address phone number mobile cell home city title role position"
        ),
    ),
    Rule(  # "Omar Haddad is my manager now"
        "change.is_my_noun",
        FactType.GENERAL,
        Anchor.FREE,
        _re(
            r"(?P<obj>" + NAME + r")\s+is\s+(?:now\s+)?" + _WHOSE + r"\s+(?:new\s+)?"
            r"(?P<noun>manager|boss|line\s+manager|team\s+lead)\b"
        ),
        _CONF,
        builder=read_change,
        keywords=_kw("manager boss lead"),
    ),
    Rule(  # "I now report to Omar Haddad", "Priya reports to Lena"
        "change.reports_to",
        FactType.GENERAL,
        Anchor.FREE,
        _re(
            _WHO + _ADVS + r"(?:\s+report|\s+reports|\s+am\s+reporting|'m\s+reporting|"
            r"\s+is\s+reporting|\s+are\s+reporting|'re\s+reporting)\s+(?:directly\s+)?to\s+"
            r"(?P<obj>" + NAME + r")"
        ),
        _CONF,
        "managed_by",
        builder=read_change,
        keywords=_kw("report reports reporting"),
    ),
    Rule(  # "Priya lives in Lisbon these days", "Priya no longer lives in Porto"
        "change.named_lives",
        FactType.GENERAL,
        Anchor.FREE,
        _re(
            r"(?P<who>" + NAME + r")" + _ADVS + r"(?P<neg>\s+(?:no\s+longer|doesn't|does\s+not|"
            r"never))?" + _ADVS + r"\s+(?:lives|is\s+living|is\s+based|resides|has\s+lived|"
            r"has\s+been\s+living|is\s+now\s+based)\s+(?:in|at)\s+" + _VALUE + END_PLACE
        ),
        _CONF,
        "lives_in",
        builder=read_change,
        keywords=_kw("lives living based resides lived"),
    ),
    Rule(  # "Priya works at Stripe", "I started a new job at Airbus", "Noah got a job at SAP"
        "change.works_at",
        FactType.GENERAL,
        Anchor.FREE,
        _re(
            _WHO
            + _ADVS
            + r"(?P<neg>\s+(?:no\s+longer|doesn't|does\s+not))?"
            + _ADVS
            + r"(?P<verb>\s+works|\s+work|\s+is\s+working|'m\s+working|\s+am\s+working|"
            r"\s+has\s+been\s+working|\s+started\s+(?:a\s+new\s+job|working|a\s+job)|"
            r"\s+got\s+a\s+(?:new\s+)?job|\s+took\s+a\s+(?:new\s+)?job)\s+(?:at|for|with)\s+"
            + _VALUE
            + END_WORK
        ),
        _CONF,
        "works_at",
        builder=read_change,
        keywords=_kw("works work working started got took"),
    ),
    Rule(  # "I drive a Tesla Model 3", "Priya now drives a Volvo"
        "change.drives",
        FactType.GENERAL,
        Anchor.FREE,
        _re(
            _WHO + _ADVS + r"(?:\s+drive|\s+drives|\s+am\s+driving|'m\s+driving|\s+is\s+driving|"
            r"\s+are\s+driving|'re\s+driving)\s+" + _VALUE + END_PLACE
        ),
        _CONF,
        "drives",
        builder=read_change,
        keywords=_kw("drive drives driving"),
    ),
    Rule(  # "I'm on the payments team", "Priya joined the growth team"
        "change.team",
        FactType.GENERAL,
        Anchor.FREE,
        _re(
            _WHO + _ADVS + r"(?P<verb>\s+joined|\s+transferred\s+to|'m|\s+am|\s+is|\s+are|'re|"
            r"\s+work|\s+works|'m\s+working|\s+am\s+working|\s+is\s+working)\s+(?:now\s+)?"
            r"(?:on|in|with|part\s+of|a\s+member\s+of)?\s*"
            r"(?P<obj>the\s+[\w&/-]+(?:\s+[\w&/-]+){0,2}?\s+team)\b"
        ),
        _CONF,
        "on_team",
        builder=read_change,
        keywords=_kw("team"),
    ),
    Rule(  # "Priya uses Emacs as an editor", "Priya is using Zed now"
        "change.named_uses",
        FactType.GENERAL,
        Anchor.FREE,
        _re(
            r"(?P<who>" + NAME + r")" + _ADVS + r"\s+(?:uses|is\s+using|has\s+been\s+using)\s+"
            r"(?P<obj>" + OBJ_CHAR + r"{1,40}?)(?:\s+as\s+(?:an?|the|his|her|their)\s+"
            r"(?P<noun>editor|ide|browser|database|car))?" + END_PLACE
        ),
        0.8,
        "uses",
        builder=read_change,
        keywords=_kw("uses using"),
    ),
    Rule(  # "The orders service uses MySQL", "the billing API runs on Python 3.10"
        "change.thing_uses",
        FactType.GENERAL,
        Anchor.FREE,
        _re(
            _THING + r"\s+(?:now\s+)?(?:uses|runs\s+on|is\s+on|is\s+now\s+on|is\s+built\s+on|"
            r"is\s+running\s+on|stores\s+(?:all\s+)?(?:its\s+)?data\s+in|is\s+backed\s+by|"
            r"is\s+powered\s+by|runs)\s+(?:now\s+)?" + _VALUE + END_PLACE
        ),
        _CONF,
        builder=read_change,
        keywords=_kw("uses runs on built running stores backed powered"),
    ),
    Rule(  # "Our team standup is on Monday", "the retro is every Friday", "it meets on Tuesdays"
        "change.schedule",
        FactType.GENERAL,
        Anchor.FREE,
        _re(
            _THING + r"\s+(?:is|are|happens|happen|takes\s+place|take\s+place|runs|run|meets|"
            r"meet|is\s+held|are\s+held)\s+(?:now\s+)?(?:on\s+|every\s+|each\s+)?" + _DAYS
        ),
        0.9,
        "scheduled_on",
        builder=read_change,
        keywords=_kw(
            "monday tuesday wednesday thursday friday saturday sunday mondays tuesdays "
            "wednesdays thursdays fridays saturdays sundays"
        ),
    ),
    Rule(  # "We have the weekly sync every Tuesday", "We now hold the retro on Fridays"
        "change.we_schedule",
        FactType.GENERAL,
        Anchor.FREE,
        _re(
            _WHO
            + _ADVS
            + r"\s+(?:have|hold|do|run|meet\s+for)\s+(?:now\s+)?"
            + _THING
            + r"\s+(?:on|every|each)\s+"
            + _DAYS
        ),
        0.9,
        "scheduled_on",
        builder=read_change,
        keywords=_kw(
            "monday tuesday wednesday thursday friday saturday sunday mondays tuesdays "
            "wednesdays thursdays fridays saturdays sundays"
        ),
    ),
)
