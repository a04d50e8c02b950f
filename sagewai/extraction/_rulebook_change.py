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
from sagewai.core._text import word_set
from sagewai.extraction import _patterns
from sagewai.extraction._kinds import KIND_VALUE, KIND_WORDS, WEEKDAYS
from sagewai.extraction._patterns import NAME, OBJ_CHAR, Anchor, Builder, Rule
from sagewai.extraction._patterns import compile_rule_pattern as _re
from sagewai.extraction._readers_change import (
    read_acquired,
    read_change,
    read_contact,
    read_kind_value,
)

__all__ = ["CHANGE_RULES"]


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
_BARE = r"(?:^|(?<=[:;]\s))(?:(?:just|finally|recently|officially|also|so|and|now)\s+){0,3}"
"""A sentence without its subject ("Just moved to Oslo!", "Finally got hired at Airbus"): the
speaker's."""
_SUBJECT = r"(?:" + _WHO + _ADVS + r"\s+|" + _BARE + r")"
_THING = (
    r"\b(?P<owner>the|our|my)\s+(?P<thing>[a-z][\w'-]*(?:\s+(?:[a-z0-9][\w'-]*|(?-i:[A-Z]+)))"
    r"{0,3}?)"
)
_VALUE = r"(?P<obj>" + OBJ_CHAR + r"{1,60}?)"
_OLD = r"(?:\s+(?:from|off(?:\s+of)?)\s+(?P<old>" + OBJ_CHAR + r"{1,40}?))?"
_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
_DAYS = r"(?P<days>" + _DAY + r"(?:\s*(?:,|and|&|,\s*and)\s*" + _DAY + r"){0,4})\b"
_DAY_WORDS = frozenset(f"{day}{plural}" for day in WEEKDAYS for plural in ("", "s"))
_MOVE_VERBS = (
    r"moved|changed|shifted|rescheduled|switched|migrated|upgraded|ported|bumped|converted|"
    r"pushed|transferred|updated|update|change|set"
)
_CONF = 0.85
_END_MOVE = r"(?:" + END_PLACE + r"|(?=\s+(?:after|before|because|when|following|once)\b))"
_ROLE_WORDS = frozenset(
    """engineer developer designer manager lead scientist analyst consultant intern director
    architect researcher founder cofounder co-founder cto ceo cfo coo vp head sre pm programmer
    specialist officer editor writer accountant lawyer nurse doctor teacher recruiter
    administrator admin advocate associate contractor freelancer employee""".split()  # noqa: SIM905
)
_ROLE = r"(?:" + "|".join(sorted(_ROLE_WORDS, key=len, reverse=True)) + r")s?"


def _change(
    name: str,
    pattern: str,
    *,
    keywords: str | frozenset[str] = "",
    predicate: str | None = None,
    confidence: float = _CONF,
    builder: Builder = read_change,
    triggers: tuple[str, ...] = (),
    secondary: bool = False,
) -> Rule:
    """A change rule from its spec: a general fact, searched in the whole sentence, read by
    :func:`~.readers_change.read_change` at 0.85 unless told otherwise (every rule here is one).

    ``keywords`` are the words of which one must be in the sentence, as one string or a set.
    """
    return Rule(
        name,
        FactType.GENERAL,
        Anchor.FREE,
        _re(pattern),
        confidence,
        predicate,
        builder=builder,
        keywords=word_set(keywords) if isinstance(keywords, str) else keywords,
        triggers=triggers,
        secondary=secondary,
    )


CHANGE_RULES: tuple[Rule, ...] = (
    _change(  # "The team standup moved to Wednesday", "the orders service was migrated to MySQL"
        "change.thing_moved",
        _THING + r"\s+(?:has\s+been\s+|have\s+been\s+|was\s+|were\s+|got\s+|is\s+being\s+)?"
        r"(?:just\s+|now\s+|officially\s+|finally\s+)?(?P<verb>" + _MOVE_VERBS + r")"
        r"(?:\s+(?:back|over|up))?" + _OLD + r"\s+(?:to|onto)\s+" + _VALUE + END_PLACE,
        keywords=(
            "moved changed shifted rescheduled switched migrated upgraded ported bumped "
            "updated converted pushed transferred"
        ),
    ),
    _change(  # "We migrated the orders service to Postgres", "We moved the standup to Fridays"
        "change.moved_thing",
        _WHO
        + _ADVS
        + r"(?:\s+(?:finished|started|are|'re|am|'m|have\s+been|'ve\s+been|is|was|were))?"
        + r"\s*(?P<verb>"
        + _MOVE_VERBS
        + r"|moving|migrating|switching|porting|upgrading|bumping|converting)\s+"
        + _THING
        + r"(?:\s+(?:back|over|up))?"
        + _OLD
        + r"\s+(?:to|onto)\s+"
        + _VALUE
        + END_PLACE,
        keywords=(
            "moved changed shifted rescheduled switched migrated upgraded ported bumped "
            "update updated change set converted pushed transferred moving migrating "
            "switching porting upgrading bumping converting"
        ),
    ),
    _change(  # "Priya moved to Lisbon", "I switched to Neovim", "I moved to the platform team"
        "change.moved",
        r"(?:" + _WHO + r"(?:" + _ADVS + r"\s+|(?:\s+[\w'’]+){1,6}?\s+and\s+"
        r"(?:(?:then|finally|just|so)\s+)?)|" + _BARE + r")"
        r"(?P<verb>moved|relocated|made\s+the\s+move|settled(?:\s+down)?)"
        r"(?:\s+(?:back|over|house))?" + _OLD + r"\s+(?:to|into|in)\s+" + _VALUE + _END_MOVE,
        keywords="moved relocated move settled",
        predicate="lives_in",
    ),
    _change(  # "I switched to Neovim", "Tariq finally converted to VS Code", "I moved to the team"
        "change.switched",
        _SUBJECT + r"(?P<verb>transferred|switched|changed|migrated|went\s+over|converted|"
        r"made\s+the\s+(?:switch|jump)|upgraded|changed\s+over|jumped\s+ship|"
        r"went\s+back)(?:\s+(?:back|over|jobs|teams|ship))?"
        + _OLD
        + r"\s+(?:to|into)\s+"
        + _VALUE
        + END_PLACE,
        keywords="transferred switched changed migrated went converted switch jump upgraded jumped",
    ),
    _change(  # "Ravi is at Zalando now", "I'm with Datadog these days", "Amara is now at Zalando"
        "change.now_at",
        _WHO + r"(?:'s|’s|\s+is|'m|’m|\s+am|\s+are|'re|’re)\s+(?:now\s+)?"
        r"(?P<via>at|with)\s+(?P<obj>" + NAME + r")"
        r"(?:\s+(?:now|these\s+days|nowadays)\b|(?=\s*(?:[.!,;]|$)))",
        keywords="now days nowadays",
        confidence=0.8,
    ),
    _change(  # "We replaced Jenkins with GitHub Actions", "I traded in my Corolla for a Kia Niro"
        "change.replaced",
        _WHO + _ADVS + r"\s+(?P<verb>replaced|swapped|ditched|traded(?:\s+in)?|exchanged|"
        r"dropped)\s+(?:(?:my|our|the|his|her|their)\s+)?(?P<old>" + OBJ_CHAR + r"{1,40}?)"
        r"\s+(?:with|for)\s+" + _VALUE + r"(?:\s+(?:in|for|on)\s+" + _THING + r")?" + END_PLACE,
        keywords="replaced swapped ditched traded exchanged dropped",
        predicate="uses",
    ),
    _change(  # "My new manager is Omar Haddad", "Priya's email is now p@x.io", "my editor is Vim"
        "change.new_noun",
        _WHOSE + r"\s+(?:new\s+|current\s+)?(?P<noun>(?:line\s+|team\s+|text\s+|code\s+|"
        r"phone\s+|mobile\s+|cell\s+|e-?mail\s+|job\s+)?(?:manager|boss|lead|employer|"
        r"company|workplace|team|car|ride|editor|ide|browser|e-?mail|address|phone|number|"
        r"mobile|cell|home|city|title|role|position))(?:\s+of\s+choice|\s+these\s+days|"
        r"\s+nowadays|\s+at\s+the\s+moment|\s+right\s+now)?\s+(?:is|:)\s+(?:now\s+)?"
        r"(?:an?\s+|the\s+)?" + _VALUE + END,
        keywords=(
            "manager boss lead employer company workplace team car ride editor ide browser "
            "email e mail address phone number mobile cell home city title role position"
        ),
    ),
    _change(  # "Omar Haddad is my manager now"
        "change.is_my_noun",
        r"(?P<obj>(?-i:[A-Z][\w.+-]*)(?:\s+(?-i:[A-Z0-9][\w.+-]*)){0,3})"
        + _ADVS
        + r"\s+(?:is|has\s+become|"
        r"became|took\s+over\s+as|stepped\s+in\s+as|is\s+now)\s+(?:now\s+)?"
        + _WHOSE
        + r"\s+(?:new\s+|current\s+)?"
        r"(?P<noun>manager|boss|line\s+manager|team\s+lead|editor|car|employer)\b",
        keywords="manager boss lead editor car employer",
    ),
    _change(  # "I now report to Omar Haddad", "Priya reports to Lena"
        "change.reports_to",
        _WHO + _ADVS + r"(?:(?:\s+report|\s+reports|\s+am\s+reporting|'m\s+reporting|"
        r"\s+is\s+reporting|\s+are\s+reporting|'re\s+reporting)\s+(?:directly\s+)?"
        r"(?:in)?to|\s+work\s+under|\s+works\s+under|'m\s+working\s+under|"
        r"\s+am\s+working\s+under|\s+is\s+working\s+under)\s+"
        r"(?P<obj>" + NAME + r")",
        keywords="report reports reporting under",
        predicate="managed_by",
    ),
    _change(  # "Priya lives in Lisbon these days", "Priya no longer lives in Porto"
        "change.named_lives",
        r"(?P<who>" + NAME + r")" + _ADVS + r"(?:\s+left\s+(?P<old>" + NAME + r")\s*,?\s+and)?"
        r"(?P<neg>\s+(?:no\s+longer|doesn't|does\s+not|never))?"
        + _ADVS
        + r"\s+(?:lives|is\s+living|is\s+based|resides|has\s+lived|has\s+been\s+living|"
        r"is\s+now\s+based|is\s+settled)\s+(?:in|at|out\s+of)\s+" + _VALUE + END_PLACE,
        keywords="lives living based resides lived",
        predicate="lives_in",
    ),
    _change(  # "Priya works at Stripe", "I started a new job at Airbus", "Noah got a job at SAP"
        "change.works_at",
        _WHO
        + _ADVS
        + r"(?P<neg>\s+(?:no\s+longer|doesn't|does\s+not))?"
        + _ADVS
        + r"(?P<verb>\s+works|\s+work|\s+is\s+working|'m\s+working|\s+am\s+working|"
        r"\s+has\s+been\s+working|\s+started\s+(?:a\s+new\s+job|working|a\s+job)|"
        r"\s+got\s+a\s+(?:new\s+)?job|\s+took\s+a\s+(?:new\s+)?job|"
        r"(?:'m|\s+am|\s+is|'s|\s+are|'re|\s+was|\s+got|\s+have\s+been|\s+has\s+been)\s+"
        r"(?:now\s+)?(?:employed|hired|on\s+staff))\s+(?:at|for|with|by)\s+" + _VALUE + END_WORK,
        keywords="works work working started got took employed hired staff",
        predicate="works_at",
    ),
    _change(  # "I drive a Tesla Model 3", "Priya now drives a Volvo"
        "change.drives",
        _WHO + _ADVS + r"(?:\s+drive|\s+drives|\s+am\s+driving|'m\s+driving|\s+is\s+driving|"
        r"\s+are\s+driving|'re\s+driving)\s+" + _VALUE + END_PLACE,
        keywords="drive drives driving",
        predicate="drives",
    ),
    _change(  # "I'm on the payments team", "Priya joined the growth team"
        "change.team",
        _WHO + _ADVS + r"(?P<verb>\s+(?:have\s+|has\s+|'ve\s+|just\s+)?joined|"
        r"\s+(?:was\s+|got\s+|have\s+been\s+|has\s+been\s+)?(?:transferred|moved|switched|"
        r"reassigned|assigned|added|put)\s+(?:over\s+)?(?:to|into|on)|'m|\s+am|\s+is|\s+are|"
        r"'re|\s+belongs?\s+to|\s+work|\s+works|'m\s+working|\s+am\s+working|"
        r"\s+is\s+working|\s+sits?\s+(?:on|in|with))\s+(?:now\s+)?"
        r"(?:on|in|with|part\s+of|a\s+member\s+of|an?\s+\w+\s+(?:on|in|of))?\s*"
        r"(?P<obj>the\s+[\w&/-]+(?:\s+[\w&/-]+){0,2}?\s+team)\b",
        keywords="team",
        predicate="on_team",
    ),
    _change(  # "Priya uses Emacs as an editor", "Priya is using Zed now"
        "change.named_uses",
        r"(?P<who>" + NAME + r")" + _ADVS + r"\s+(?:uses|is\s+using|has\s+been\s+using)\s+"
        r"(?P<obj>" + OBJ_CHAR + r"{1,40}?)(?:\s+as\s+(?:an?|the|his|her|their)\s+"
        r"(?P<noun>editor|ide|browser|database|car))?" + END_PLACE,
        keywords="uses using",
        predicate="uses",
        confidence=0.8,
    ),
    _change(  # "The orders service uses MySQL", "the billing API runs on Python 3.10"
        "change.thing_uses",
        _THING + r"\s+(?:now\s+)?(?:uses|runs\s+on|is\s+on|is\s+now\s+on|is\s+built\s+on|"
        r"is\s+running(?:\s+on)?|is\s+hosted\s+on|lives\s+on|sits\s+on|"
        r"stores\s+(?:all\s+)?(?:its\s+)?data\s+in|is\s+backed\s+by|"
        r"is\s+powered\s+by|runs)\s+(?:now\s+)?" + _VALUE + END_PLACE,
        keywords="uses runs on built running stores backed powered",
    ),
    _change(  # "Our team standup is on Monday", "the retro is every Friday", "it meets on Tuesdays"
        "change.schedule",
        _THING + r"\s+(?:is|are|happens|happen|takes\s+place|take\s+place|runs|run|meets|"
        r"meet|is\s+held|are\s+held)\s+(?:now\s+)?(?:on\s+|every\s+|each\s+)?" + _DAYS,
        keywords=_DAY_WORDS,
        predicate="scheduled_on",
        confidence=0.9,
    ),
    _change(  # "We have the weekly sync every Tuesday", "We now hold the retro on Fridays"
        "change.we_schedule",
        _WHO
        + _ADVS
        + r"\s+(?:have|hold|do|run|meet\s+for|(?:are\s+|'re\s+)?(?:having|holding|doing|"
        r"running))\s+(?:now\s+)?" + _THING + r"\s+(?:on|every|each)\s+" + _DAYS,
        keywords=_DAY_WORDS,
        predicate="scheduled_on",
        confidence=0.9,
    ),
    _change(  # "Home for me is Lisbon", "my home is in Oslo now", "my flat is in Porto"
        "change.home_is",
        r"(?:(?<![\w'’])home(?:\s+for\s+me|\s+base)?|" + _WHOSE + r"\s+(?:new\s+)?(?:home|"
        r"flat|apartment|house|place|base))\s+(?:is|has\s+been)\s+(?:now\s+)?(?:in\s+)?"
        + _VALUE
        + END_PLACE,
        keywords="home flat apartment house place base",
        predicate="lives_in",
    ),
    _change(  # "I write all my code in VS Code", "Priya codes in Emacs", "we do our coding in Zed"
        "change.codes_in",
        _SUBJECT + r"(?:(?:'m|am|is|'s|are|'re|have\s+been|'ve\s+been|has\s+been)\s+)?"
        r"(?:code|codes|coding|program|programs|programming|develop|develops|developing|"
        r"(?:write|writes|writing|do|does|doing)\s+(?:all\s+|most\s+)?(?:of\s+)?"
        r"(?:my|our|his|her|their|the)?\s*(?:code|coding|programming|development|work))"
        r"\s+(?:in|with)\s+" + _VALUE + END_PLACE,
        keywords="code codes coding program programs develop develops programming",
    ),
    _change(  # "I sold my Volvo and got a Kia Niro", "Priya bought a Tesla Model 3"
        "change.acquired",
        _SUBJECT + r"(?:(?:sold|gave\s+away|got\s+rid\s+of|wrote\s+off|crashed)\s+"
        r"(?:my|our|his|her|their|the)\s+(?P<old>" + OBJ_CHAR + r"{1,40}?)\s*,?\s+"
        r"(?:and|so|then)(?:\s+(?:now|then|just))?\s+)?"
        r"(?P<verb>(?:got|bought|purchased|picked\s+up|leased|own|owns|have|has|"
        r"'ve\s+got|'s\s+got|have\s+got|has\s+got))\s+"
        r"(?:(?:myself|herself|himself|themselves|ourselves)\s+)?(?:a|an)\s+"
        r"(?:(?:new|brand\s+new|used|second-hand|shiny|little|red|blue|black|white|grey|"
        r"silver)\s+)*" + _VALUE + END_PLACE,
        keywords="got bought purchased picked leased own owns have has",
        predicate="drives",
        builder=read_acquired,
    ),
    _change(  # "Write to me at ana@x.io", "You can reach me on +49 151 2345678", "New number: ..."
        "change.contact",
        r"(?P<obj>\+?\(?\d[\d ()./-]{6,20}\d)",
        keywords="number phone mobile cell call reach contact text whatsapp signal ring",
        builder=read_contact,
    ),
    _change(  # "Write to me at ana@x.io", "Please use a@b.io from now on instead of c@d.io"
        "change.email",
        r"(?P<obj>[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,4})",
        builder=read_contact,
        triggers=("@",),
    ),
    _change(  # "Marco left Spotify and joined Stripe", "I quit Shopify to join Datadog"
        "change.left_joined",
        _WHO + _ADVS + r"\s+(?:left|quit)\s+(?P<old>" + NAME + r")\s*,?\s+(?:(?:and|to)\s+"
        r"(?:(?:have|has|then|now|just)\s+)?(?P<verb>joined|join|started\s+at|start\s+at|"
        r"went\s+to|moved\s+to|signed\s+on\s+with|sign\s+on\s+with)|for)\s+"
        r"(?P<obj>" + NAME + r")",
        keywords="left quit",
        predicate="works_at",
    ),
    _change(  # "We're running the checkout service on Node 22 now", "we run the ML pipeline on ..."
        "change.run_thing",
        _WHO + _ADVS + r"\s*(?:run|'re\s+running|are\s+running|have\s+been\s+running|"
        r"'ve\s+been\s+running|host|are\s+hosting|'re\s+hosting)\s+"
        + _THING
        + r"\s+(?:on|with)\s+"
        + _VALUE
        + END_PLACE,
        keywords="run running host hosting",
    ),
    _change(  # "These days it's all Neovim for me", "Our orders service sits on MySQL"
        "change.kind_value",
        r"\b" + KIND_VALUE,
        keywords=KIND_WORDS,
        confidence=0.75,
        builder=read_kind_value,
    ),
    _change(  # "I'm an engineer at Datadog", "Priya is a senior designer at Airbus"
        "change.role_at",
        _WHO + _ADVS + r"(?:'m|\s+am|\s+is|'s|\s+are|'re)\s+(?:now\s+)?(?:an?|the)\s+"
        r"(?:[a-z-]+\s+){0,2}?" + _ROLE + r"\s+(?:at|for|with)\s+(?P<obj>" + NAME + r")\b"
        r"(?!\.\s*(?-i:[A-Z]))",
        keywords=_ROLE_WORDS,
        predicate="works_at",
        confidence=0.8,
        secondary=True,
    ),
    _change(  # "Priya joined Shopify", "I signed on with Datadog last week", "got hired by SAP"
        "change.joined_company",
        _SUBJECT + r"(?P<verb>joined|signed\s+on\s+with|got\s+hired\s+(?:at|by)|"
        r"was\s+hired\s+(?:at|by)|got\s+poached\s+by|was\s+poached\s+by|"
        r"accepted\s+an\s+offer\s+from|took\s+an\s+offer\s+from)\s+(?P<obj>" + NAME + r")"
        r"(?=\s*(?:[.!,;]|$)|\s+(?:as|last|this|in|back|recently|after|two|three|a\s+few|"
        r"and|full-time|part-time)\b)",
        keywords="joined signed hired poached accepted took",
        predicate="works_at",
        confidence=0.8,
    ),
    _change(  # "I have a new manager now: Omar Haddad", "Tariq got a new manager: Tom Becker"
        "change.got_new_noun",
        r"(?:" + _WHO + _ADVS + r"\s+|" + _BARE + r")(?:have|has|'ve|got|'ve\s+got|"
        r"have\s+got|has\s+got|get)\s+(?:a\s+)?new\s+(?P<noun>manager|boss|line\s+manager|"
        r"team\s+lead|lead|employer|job|car|editor|e-?mail(?:\s+address)?|address|"
        r"phone(?:\s+number)?|number|mobile(?:\s+number)?|home|team)(?:\s+now)?"
        r"\s*(?::|,|-|–|—|\bcalled\b|\bnamed\b|\bat\b|\bin\b)\s*(?:an?\s+|the\s+)?" + _VALUE + END,
        keywords="new",
    ),
    _change(  # "Omar Haddad took over managing Sofia (from Aisha Khan)"
        "change.took_over_managing",
        r"(?P<obj>" + NAME + r")" + _ADVS + r"\s+(?:took\s+over\s+(?:managing|as\s+)|"
        r"(?:is|has\s+been)\s+now\s+managing|now\s+manages|is\s+managing|manages)\s*"
        r"(?P<who>"
        + NAME
        + r")(?:(?:'s|’s)\s+(?:manager|boss))?(?:\s+from\s+(?P<old>"
        + NAME
        + r"))?\b",
        keywords="managing manages took",
        predicate="managed_by",
    ),
    _change(  # "Amara gave up on Neovim and went with Emacs"
        "change.gave_up",
        _SUBJECT + r"(?:gave\s+up\s+on|got\s+tired\s+of|stopped\s+using|moved\s+on\s+from|"
        r"abandoned|dumped)\s+(?:(?:my|our|his|her|their|the)\s+)?(?P<old>"
        + OBJ_CHAR
        + r"{1,40}?)\s*,?\s+(?:and|so)\s+(?:now\s+|just\s+)?(?P<verb>went\s+with|"
        r"switched\s+to|moved\s+to|picked|chose|got|started\s+using|uses|use|is\s+using|"
        r"'m\s+using|am\s+using|went\s+for|bought)\s+(?:an?\s+)?" + _VALUE + END_PLACE,
        keywords="gave tired stopped moved abandoned dumped",
    ),
)
