"""Rules for what happened and what is: events, and general facts about people and things.

Part of the rule table of :class:`~.rules.RuleBasedFactExtractor` (see :mod:`.rulebook`).
"""

from __future__ import annotations

from sagewai.core._records import FactType
from sagewai.core._text import word_set
from sagewai.extraction._patterns import (
    ADV,
    END,
    END_LONG,
    END_PLACE,
    END_ROLE,
    END_WORK,
    NAME,
    OBJ,
    OBJ_CHAR,
    SUBJ,
    Anchor,
    Rule,
)
from sagewai.extraction._patterns import compile_rule_pattern as _re
from sagewai.extraction._readers import (
    read_age,
    read_attribute,
    read_born,
    read_divorced,
    read_implicit,
    read_lives,
    read_other_lives,
    read_past_event,
    read_possession,
    read_possessive_event,
    read_progressive,
    read_relation,
    read_role,
    read_role_other,
    read_simple,
    read_statement,
    read_thing,
    read_uses,
)

__all__ = ["WORLD_RULES"]


_SCHEDULE_NOUNS = (
    r"(?:appointment|meeting|interview|exam|test|flight|trip|surgery|operation|party|wedding|"
    r"concert|game|match|date|call|presentation|deadline|conference|class|lesson|session|checkup|"
    r"check-up|reservation|booking|event|recital|show|performance|competition|race|marathon|"
    r"tournament|ceremony|vacation|holiday|hearing|shift|workshop|webinar|demo|retreat|offsite|"
    r"visit|gig|audition|graduation|dinner|lunch|brunch)s?"
)
_PAST_VERBS = (
    r"went|visited|attended|moved|relocated|started|finished|completed|graduated|met|bought|"
    r"adopted|ran|took|traveled|travelled|flew|drove|joined|quit|left|won|lost|celebrated|"
    r"broke|got|had|became|gave|made|saw|watched|opened|launched|released|shipped|passed|"
    r"failed|signed|booked|volunteered|painted|wrote|published|built|created|organized|"
    r"organised|hosted|hiked|climbed|returned|came\s+back|began|received|earned|reached|fell|"
    r"hurt|injured|tried|learned|learnt|found|sold|rented|married|divorced|retired|spent|baked|"
    r"cooked|played|performed|competed|read|swam|camped|skied|welcomed|turned|signed\s+up|"
    r"enrolled|applied|interviewed|presented|fixed|deployed|migrated|upgraded|closed|filed|"
    r"submitted|paid|ordered|picked\s+up|taught|studied|lived|worked|did|took\s+up|founded|"
    r"opened|lost|got\s+back|went\s+back|made\s+it|finally\s+got|decorated|renovated|"
    r"celebrated|danced|sang|recorded|donated|raised|ran\s+into|bumped\s+into|visited"
)
_SIMPLE_PREFIX = (
    r"(?:\s+(?:just|finally|recently|already|also|actually|even|first|officially|once|then|"
    r"eventually|accidentally|luckily|unfortunately|totally|really|successfully)){0,2}"
)

WORLD_RULES: tuple[Rule, ...] = (
    Rule(
        "event.past",
        FactType.EVENT,
        Anchor.SUBJECT,
        _re(
            SUBJ + _SIMPLE_PREFIX + r"\s+(?P<verb>" + _PAST_VERBS + r")\b(?!')"
            r"(?P<obj>" + OBJ_CHAR + r"{0,120}?)" + END
        ),
        0.5,
        builder=read_past_event,
        assistant=True,
        keywords=word_set(
            "adopted applied attended baked became began booked bought broke built bumped came "
            "camped celebrated climbed closed competed completed cooked created danced "
            "decorated deployed did divorced donated drove earned enrolled failed fell filed "
            "finally finished fixed flew found founded gave got graduated had hiked hosted hurt "
            "injured interviewed joined launched learned learnt left lived lost made married "
            "met migrated moved opened ordered organised organized paid painted passed "
            "performed picked played presented published quit raised ran reached read received "
            "recorded released relocated renovated rented retired returned sang saw shipped "
            "signed skied sold spent started studied submitted swam taught took traveled "
            "travelled tried turned upgraded visited volunteered watched welcomed went won "
            "worked wrote"
        ),
    ),
    Rule(
        "event.perfect",
        FactType.EVENT,
        Anchor.SUBJECT,
        _re(
            SUBJ + r"(?:'ve|\s+have)(?:\s+(?:just|finally|recently|already|now|officially))?"
            r"\s+(?P<verb>been\s+to|visited|started|finished|completed|moved|joined|adopted|bought|"
            r"booked|scheduled|created|sent|signed\s+up|enrolled|launched|released|shipped|"
            r"graduated|retired|quit|opened|filed|ordered|reserved|set\s+up|got\s+(?:married|"
            r"engaged|promoted|divorced|hired))\b(?P<obj>" + OBJ_CHAR + r"{0,120}?)" + END
        ),
        0.55,
        builder=read_past_event,
        assistant=True,
        keywords=word_set("i've we've have"),
    ),
    Rule(
        "event.possessive",
        FactType.EVENT,
        Anchor.POSSESSIVE,
        _re(
            r"(?P<poss>my|our)\s+(?P<rel>(?:[a-z'-]{2,20}\s+){0,2}?[a-z'-]{2,20})"
            r"(?:\s+(?P<name>" + NAME + r"))?\s+(?:just\s+|finally\s+|recently\s+|officially\s+)?"
            r"(?P<verb>got|was|were|is|are|passed\s+away|passed|died|started|starts|graduated|"
            r"graduates|moved|won|turned|turns|married|retired|left|arrived|arrives|launched|"
            r"begins|began|opened|opens|gave\s+birth|came|comes|will\s+be|happened|happens)\b"
            r"(?P<obj>" + OBJ_CHAR + r"{0,120}?)" + END
        ),
        0.6,
        builder=read_possessive_event,
        keywords=word_set(
            "got was were is are passed died started starts graduated graduates moved won "
            "turned turns married retired left arrived arrives launched begins began opened "
            "opens gave came comes will happened happens"
        ),
    ),
    Rule(
        "event.scheduled",
        FactType.EVENT,
        Anchor.SUBJECT,
        _re(
            SUBJ + r"(?:\s+have|'ve\s+got|\s+have\s+got|\s+got|\s+had|\s+also\s+have)\s+(?:a|an|my|"
            r"our|the|this|that|two|three)\s+(?P<obj>[\w' -]{0,40}?\b"
            + _SCHEDULE_NOUNS
            + r"\b"
            + OBJ_CHAR
            + r"{0,80}?)"
            + END
        ),
        0.7,
        builder=read_simple,
        keywords=word_set("have got had i've we've"),
    ),
    Rule(
        "event.progressive",
        FactType.EVENT,
        Anchor.SUBJECT,
        _re(
            SUBJ + r"(?:'m|\s+am|'re|\s+are)(?:\s+(?:also|finally|actually|officially))?"
            r"\s+(?P<verb>flying|going|travell?ing|driving|heading|moving|visiting|attending|"
            r"starting|leaving|hosting|throwing|celebrating|running|meeting|getting\s+married|"
            r"taking\s+off|relocating)\s+(?P<obj>" + OBJ_CHAR + r"{1,120}?)" + END
        ),
        0.6,
        builder=read_progressive,
        keywords=word_set("i'm we're am are"),
    ),
    Rule(
        "event.thing",
        FactType.EVENT,
        Anchor.FREE,
        _re(
            r"\b(?P<thing>(?:the|our|my)\s+[a-z][\w-]{1,30}(?:\s+[a-z][\w-]{1,30})?)\s+"
            r"(?:happened|occurred|took\s+place|started|ended|was\s+signed|were\s+signed|"
            r"was\s+released|was\s+launched|went\s+live|was\s+deployed|was\s+merged|"
            r"was\s+published|was\s+approved|was\s+cancell?ed|was\s+postponed|broke|failed|"
            r"crashed|went\s+down|is\s+scheduled)\b(?P<obj>" + OBJ_CHAR + r"{0,120}?)" + END
        ),
        0.6,
        builder=read_thing,
        keywords=word_set(
            "happened occurred took started ended signed released launched went deployed merged "
            "published approved cancelled canceled postponed broke failed crashed scheduled"
        ),
    ),
    # ---- general facts about the speaker
    Rule(
        "general.name",
        FactType.GENERAL,
        Anchor.FREE,
        _re(
            r"\b(?:my\s+name\s+is|my\s+name's|call\s+me|i'm\s+called|i\s+am\s+called|"
            r"people\s+call\s+me|you\s+can\s+call\s+me|my\s+full\s+name\s+is)\s+(?P<obj>"
            + NAME
            + r")"
        ),
        0.9,
        "name",
        builder=read_simple,
        keywords=word_set("name name's call called"),
    ),
    Rule(
        "general.lives_in",
        FactType.GENERAL,
        Anchor.SUBJECT,
        _re(
            SUBJ
            + ADV
            + r"(?P<neg>\s+(?:don't|do\s+not|no\s+longer|never|didn't|did\s+not))?"
            + ADV
            + r"(?:\s+|(?=['’]))(?:live|lived|reside|resided|"
            r"(?:am|'m|are|'re)\s+(?:now\s+|currently\s+|still\s+)?based|"
            r"am\s+living|'m\s+living|are\s+living|'re\s+living|have\s+lived|'ve\s+lived|grew\s+up|"
            r"currently\s+live|now\s+live)\s+(?:in|at|near|outside(?:\s+of)?|on)\s+"
            + OBJ
            + END_PLACE
        ),
        0.85,
        "lives_in",
        builder=read_lives,
        keywords=word_set("live lived reside resided based living grew"),
    ),
    Rule(
        "general.lives_in_other",
        FactType.GENERAL,
        Anchor.POSSESSIVE,
        _re(
            r"(?P<poss>my|our)\s+(?P<rel>(?:[a-z'-]{2,20}\s+){0,2}?[a-z'-]{2,20})(?:\s+(?P<name>"
            + NAME
            + r"))?\s+(?:still\s+|now\s+|currently\s+)?(?:lives|resides|is\s+based|stays)\s+"
            r"(?:in|at)\s+" + OBJ + END_PLACE
        ),
        0.8,
        "lives_in",
        builder=read_other_lives,
        keywords=word_set("lives resides based stays"),
    ),
    Rule(
        "general.from",
        FactType.GENERAL,
        Anchor.SUBJECT,
        _re(
            SUBJ
            + r"(?:'m|\s+am|'re|\s+are|\s+come|\s+came)\s+(?:originally\s+|actually\s+)?from\s+"
            + OBJ
            + END_PLACE
        ),
        0.85,
        "is_from",
        builder=read_simple,
        keywords=word_set("from"),
    ),
    Rule(
        "general.born",
        FactType.GENERAL,
        Anchor.SUBJECT,
        _re(SUBJ + r"\s+was\s+born\s+(?P<obj>(?:in|on|at)\s+" + OBJ_CHAR + r"{1,60}?)" + END_PLACE),
        0.8,
        builder=read_born,
        keywords=word_set("born"),
    ),
    Rule(
        "general.works_at",
        FactType.GENERAL,
        Anchor.SUBJECT,
        _re(
            SUBJ
            + ADV
            + r"(?P<neg>\s+(?:don't|do\s+not|no\s+longer|never))?"
            + ADV
            + r"(?:\s+|(?=['’]))(?:work|am\s+working|'m\s+working|are\s+working|'re\s+working|"
            r"have\s+worked|"
            r"'ve\s+worked|'ve\s+been\s+working|"
            r"have\s+been\s+working)(?:\s+[\w-]+){0,3}?\s+(?:at|for)\s+" + OBJ + END_WORK
        ),
        0.85,
        "works_at",
        builder=read_simple,
        keywords=word_set("work working worked"),
    ),
    Rule(
        "general.works_as",
        FactType.GENERAL,
        Anchor.SUBJECT,
        _re(
            SUBJ
            + ADV
            + r"\s+(?:work|am\s+working|'m\s+working|worked)\s+as\s+(?:an?\s+|the\s+)?"
            + OBJ
            + END_ROLE
        ),
        0.85,
        "works_as",
        builder=read_role,
        keywords=word_set("work working worked"),
    ),
    Rule(
        "general.role",
        FactType.GENERAL,
        Anchor.SUBJECT,
        _re(
            SUBJ
            + r"(?:'m|\s+am|'ve\s+been|\s+have\s+been|'re|\s+are)"
            + ADV
            + r"\s+(?P<neg>not\s+|no\s+longer\s+)?(?:an?|the)\s+(?P<obj>"
            + OBJ_CHAR
            + r"{1,60}?)"
            + END_ROLE
        ),
        0.8,
        builder=read_role,
        keywords=word_set("i'm am i've we've have we're are"),
    ),
    Rule(
        "general.role_other",
        FactType.GENERAL,
        Anchor.POSSESSIVE,
        _re(
            r"(?P<poss>my|our)\s+(?P<rel>(?:[a-z'-]{2,20}\s+){0,2}?[a-z'-]{2,20})(?:\s+(?P<name>"
            + NAME
            + r"))?\s+(?:is|was|'s)\s+(?P<neg>not\s+)?(?:an?|the)\s+"
            r"(?P<obj>" + OBJ_CHAR + r"{1,60}?)" + END_ROLE
        ),
        0.75,
        builder=read_role_other,
        keywords=word_set("is was my's our's"),
    ),
    Rule(
        "general.identity",
        FactType.GENERAL,
        Anchor.SUBJECT,
        _re(
            SUBJ + r"(?:'m|\s+am)(?:\s+(?:also|now|still|actually|a\s+proud))?\s+"
            r"(?P<neg>not\s+(?:a\s+)?|no\s+longer\s+(?:a\s+)?)?(?:an?\s+)?(?P<obj>vegetarian|vegan|"
            r"pescatarian|diabetic|left-handed|right-handed|ambidextrous|introverted|introvert|"
            r"extrovert|extroverted|colou?r-?blind|deaf|blind|pregnant|retired|single|married|"
            r"divorced|widowed|engaged|sober|gay|lesbian|bisexual|queer|trans|transgender|"
            r"non-?binary|autistic|dyslexic|celiac|coeliac|lactose\s+intolerant|"
            r"gluten[- ]intolerant|christian|muslim|jewish|hindu|buddhist|atheist|catholic|"
            r"agnostic|"
            r"only\s+child|twin|self-employed|unemployed|immigrant|veteran|citizen|"
            r"first-generation\s+[a-z]+|[a-z]+-american)\b" + END
        ),
        0.8,
        "is_a",
        builder=read_simple,
        keywords=word_set(
            "vegetarian vegan pescatarian diabetic left handed right ambidextrous introverted "
            "introvert extrovert extroverted colorblind color blind colourblind colour deaf "
            "pregnant retired single married divorced widowed engaged sober gay lesbian "
            "bisexual queer trans transgender nonbinary non binary autistic dyslexic celiac "
            "coeliac lactose gluten christian muslim jewish hindu buddhist atheist catholic "
            "agnostic only twin self employed unemployed immigrant veteran citizen first "
            "generation"
        ),
    ),
    Rule(
        "general.age",
        FactType.GENERAL,
        Anchor.SUBJECT,
        _re(
            SUBJ + r"(?:'m|\s+am)\s+(?:now\s+|turning\s+)?(?P<obj>\d{1,3})(?:\s+years?\s+old|"
            r"\s+y/?o\b|\s+now|\s+this\s+year)?(?=\s*(?:[,.;!?]|$)|\s+(?:years|now|and|but|so)\b)"
        ),
        0.85,
        "has_age",
        builder=read_age,
        keywords=word_set("i'm am"),
    ),
    Rule(
        "general.married_to",
        FactType.GENERAL,
        Anchor.SUBJECT,
        _re(
            SUBJ
            + r"(?:'m|\s+am|'ve\s+been|\s+have\s+been|\s+got)\s+married\s+to\s+(?P<obj>"
            + NAME
            + r")"
        ),
        0.9,
        "spouse_of",
        builder=read_simple,
        keywords=word_set("married"),
    ),
    Rule(
        "general.divorced",
        FactType.GENERAL,
        Anchor.FREE,
        _re(
            r"(?P<obj>"
            + NAME
            + r")\s+and\s+i\s+(?:got\s+|are\s+|have\s+|'ve\s+|just\s+)?(?:divorced|"
            r"separated|split\s+up|broke\s+up)"
        ),
        0.8,
        "spouse_of",
        builder=read_divorced,
        keywords=word_set("divorced separated split broke"),
    ),
    Rule(
        "general.relation",
        FactType.GENERAL,
        Anchor.POSSESSIVE,
        _re(
            r"(?P<poss>my|our)\s+(?:(?:older|younger|little|big|baby|twin|best|oldest|"
            r"youngest|eldest|"
            r"step|half|late|dear|good|close|new)\s+){0,2}(?P<rel>sister|brother|mom|mother|"
            r"mum|dad|"
            r"father|son|daughter|kid|child|friend|cousin|aunt|uncle|grandma|grandmother|grandpa|"
            r"grandfather|grandson|granddaughter|niece|nephew|boss|colleague|coworker|co-worker|"
            r"roommate|neighbou?r|manager|mentor|wife|husband|spouse|boyfriend|girlfriend|partner|"
            r"fianc[ée]e?)(?:\s+(?:is\s+(?:named|called)|'s\s+name\s+is)|,)?\s+(?P<obj>"
            + NAME
            + r")\b"
        ),
        0.75,
        builder=read_relation,
        secondary=True,
        keywords=word_set(
            "sister brother mom mother mum dad father son daughter kid child friend cousin aunt "
            "uncle grandma grandmother grandpa grandfather grandson granddaughter niece nephew "
            "boss colleague coworker co worker roommate neighbor neighbour manager mentor wife "
            "husband spouse boyfriend girlfriend partner fiance fianc fiancee e"
        ),
    ),
    Rule(
        "general.possession",
        FactType.GENERAL,
        Anchor.SUBJECT,
        _re(
            SUBJ + r"(?P<neg>\s+(?:don't|do\s+not|no\s+longer|didn't|never))?(?:\s+(?:also|still|"
            r"now|just|finally))?(?:\s+have|\s+own|'ve\s+got|\s+have\s+got|\s+got\s+(?=(?:a|an|two|"
            r"three)\s))\s+(?P<obj>(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|"
            r"\d{1,3}|"
            r"some|several|many|any|no|my\s+own|(?-i:[A-Z0-9])[\w-]*)\s+"
            + OBJ_CHAR
            + r"{1,80}?)"
            + END
        ),
        0.65,
        builder=read_possession,
        keywords=word_set("have own got i've we've"),
    ),
    Rule(
        "general.speaks",
        FactType.GENERAL,
        Anchor.SUBJECT,
        _re(
            SUBJ + ADV + r"\s+(?:speak|can\s+speak|am\s+fluent\s+in|'m\s+fluent\s+in|"
            r"am\s+a\s+native\s+speaker\s+of|'m\s+a\s+native\s+speaker\s+of)\s+" + OBJ + END
        ),
        0.8,
        "speaks",
        builder=read_simple,
        keywords=word_set("speak fluent native"),
    ),
    Rule(
        "general.learning",
        FactType.GENERAL,
        Anchor.SUBJECT,
        _re(
            SUBJ + r"(?:'m|\s+am|'ve\s+been|\s+have\s+been)" + ADV + r"\s+(?:learning|studying|"
            r"majoring\s+in|taking\s+(?:a\s+)?(?:class|classes|course|courses|lessons)\s+in)\s+"
            + OBJ
            + END_ROLE
        ),
        0.75,
        "studies",
        builder=read_simple,
        keywords=word_set("learning studying majoring taking"),
    ),
    Rule(
        "general.studies",
        FactType.GENERAL,
        Anchor.SUBJECT,
        _re(SUBJ + ADV + r"\s+(?:study|major\s+in|majored\s+in|studied)\s+" + OBJ + END_ROLE),
        0.8,
        "studies",
        builder=read_simple,
        keywords=word_set("study studied major majored"),
    ),
    Rule(
        "general.allergic",
        FactType.GENERAL,
        Anchor.SUBJECT,
        _re(
            SUBJ + r"(?:'m|\s+am)(?:\s+(?:very|severely|super|mildly|deathly|also|really))?"
            r"\s+(?P<neg>not\s+)?allergic\s+to\s+" + OBJ + END
        ),
        0.9,
        "allergic_to",
        builder=read_simple,
        keywords=word_set("allergic"),
    ),
    Rule(
        "general.birthday",
        FactType.GENERAL,
        Anchor.POSSESSIVE,
        _re(
            r"(?P<poss>my)\s+(?:birthday|bday|b-day|date\s+of\s+birth)\s+is\s+(?:on\s+)?"
            r"(?P<obj>" + OBJ_CHAR + r"{1,30}?)" + END
        ),
        0.85,
        "birthday",
        builder=read_simple,
        keywords=word_set("birthday bday b day birth"),
    ),
    Rule(
        "general.uses",
        FactType.GENERAL,
        Anchor.SUBJECT,
        _re(
            SUBJ
            + ADV
            + r"(?:\s+|(?=['’]))(?P<verb>use|run|are\s+using|'re\s+using|am\s+using|'m\s+using|"
            r"rely\s+on|deploy\s+(?:on|to)|host\s+(?:on|with)|are\s+running|'re\s+running|"
            r"am\s+running|'m\s+running|code\s+in|program\s+in|write\s+in)\s+" + OBJ + END
        ),
        0.7,
        "uses",
        builder=read_uses,
        keywords=word_set("use run using running rely deploy host code program write"),
    ),
    Rule(
        "general.statement",
        FactType.GENERAL,
        Anchor.SUBJECT,
        _re(SUBJ + r"(?P<obj>(?:'[a-z]{1,2})?\s+[^.!?;,\n\"]{12,200})"),
        0.45,
        builder=read_statement,
        fallback=True,
    ),
    Rule(
        "general.implicit_subject",
        FactType.GENERAL,
        Anchor.FREE,
        _re(
            r"^(?:(?:just|finally|recently|also|still|already)\s+)?(?P<verb>been|gonna|"
            r"planning\s+to|working\s+on|went|got\s+back|just\s+got|finished|started|bought|"
            r"adopted|visited|took|moved|joined|wrapped\s+up|spent|signed\s+up|ran|tried|made|"
            r"had|did|met|saw|learned|picked\s+up|volunteered|painted|baked|cooked|hiked|"
            r"attended|booked|landed|launched|won|lost|quit)\s+(?P<obj>[^.!?;\n\"]{6,160}?)"
            + END_LONG
        ),
        0.5,
        builder=read_implicit,
        keywords=word_set(
            "been gonna going planning working went got finished started bought adopted visited "
            "took moved joined wrapped spent signed ran tried made had did met saw learned picked "
            "volunteered painted baked cooked hiked attended booked landed launched won lost quit"
        ),
    ),
    Rule(
        "general.attribute",
        FactType.GENERAL,
        Anchor.FREE,
        _re(
            r"\b(?P<attr>(?:my|our|the|your)\s+(?:[\w'-]{1,30}\s+){0,6}?[\w'-]{1,30})\s+(?:is|are|"
            r"was|=|:|lives\s+at|is\s+at|are\s+at|is\s+stored\s+(?:in|at)|are\s+stored\s+(?:in|at)|"
            r"are\s+written\s+to|is\s+written\s+to|is\s+located\s+at|moved\s+to|runs\s+on|"
            r"points\s+to|is\s+set\s+to|changed\s+to|is\s+now|are\s+now|lives\s+in)\s+"
            r"(?:about\s+|around\s+|roughly\s+|approximately\s+|now\s+|just\s+|exactly\s+)?"
        ),
        0.8,
        builder=read_attribute,
        keywords=word_set("my our the your"),
        needs_exact_value=True,
    ),
)
