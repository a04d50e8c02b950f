"""Rules for what the speaker wants, chose or will do: preferences, decisions, actions.

Part of the rule table of :class:`~.rules.RuleBasedFactExtractor` (see :mod:`.rulebook`).
"""

from __future__ import annotations

from sagewai.core._records import FactType
from sagewai.core._text import word_set
from sagewai.extraction._patterns import (
    ADV,
    END,
    END_LONG,
    OBJ,
    OBJ_CHAR,
    SUBJ,
    Anchor,
    Rule,
)
from sagewai.extraction._patterns import compile_rule_pattern as _re
from sagewai.extraction._readers import (
    read_decided,
    read_favorite,
    read_need,
    read_plan,
    read_prefers,
    read_reminder,
    read_simple,
    read_went_with,
    read_x_over_y,
)

__all__ = ["INTENT_RULES"]


INTENT_RULES: tuple[Rule, ...] = (
    # ---- preferences
    Rule(
        "preference.likes",
        FactType.PREFERENCE,
        Anchor.SUBJECT,
        _re(SUBJ + ADV + r"\s+(?:love|like|enjoy|adore|dig|fancy|luv)\s+" + OBJ + END),
        0.8,
        "likes",
        builder=read_simple,
        keywords=word_set("love loves like likes enjoy enjoys adore adores dig fancy luv"),
    ),
    Rule(
        "preference.liked",
        FactType.PREFERENCE,
        Anchor.SUBJECT,
        _re(SUBJ + ADV + r"\s+(?:loved|liked|enjoyed|adored)\s+" + OBJ + END),
        0.5,
        "likes",
        builder=read_simple,
        keywords=word_set("loved liked enjoyed adored"),
    ),
    Rule(
        "preference.not_likes",
        FactType.PREFERENCE,
        Anchor.SUBJECT,
        _re(
            SUBJ + r"(?:\s+(?:really|just|still|honestly|also|actually))?"
            r"(?:\s+(?:do\s+not|don't|dont|did\s+not|didn't|never|no\s+longer|won't))"
            + ADV
            + r"\s+(?:love|like|liked|enjoy|enjoyed|care\s+for|cared\s+for|fancy|dig)\s+"
            + OBJ
            + END
        ),
        0.8,
        "likes",
        negated=True,
        builder=read_simple,
        keywords=word_set("like liked love enjoy enjoyed care cared fancy dig"),
    ),
    Rule(
        "preference.stopped_liking",
        FactType.PREFERENCE,
        Anchor.SUBJECT,
        _re(
            SUBJ
            + r"(?:'ve|\s+have)?\s+(?:stopped|quit)\s+(?:liking|enjoying|loving)\s+"
            + OBJ
            + END
        ),
        0.75,
        "likes",
        negated=True,
        builder=read_simple,
        keywords=word_set("liking enjoying loving"),
    ),
    Rule(
        "preference.dislikes",
        FactType.PREFERENCE,
        Anchor.SUBJECT,
        _re(
            SUBJ + ADV + r"\s+(?:hate|hated|dislike|disliked|detest|detested|loathe|loathed|"
            r"despise|despised|can't\s+stand|cannot\s+stand|can\s+not\s+stand|couldn't\s+stand|"
            r"can't\s+bear|cannot\s+bear|am\s+not\s+a\s+fan\s+of)\s+(?:it\s+when\s+)?" + OBJ + END
        ),
        0.8,
        "dislikes",
        builder=read_simple,
        keywords=word_set(
            "hate hated dislike disliked detest detested loathe loathed despise despised stand "
            "bear fan"
        ),
    ),
    Rule(
        "preference.fan",
        FactType.PREFERENCE,
        Anchor.SUBJECT,
        _re(
            SUBJ
            + r"(?:'m|\s+am|'re|\s+are)"
            + ADV
            + r"\s+(?P<neg>not\s+(?:really\s+|much\s+of\s+)?|no\s+longer\s+)?(?:a\s+|an\s+)?"
            r"(?:(?:big|huge|massive|great|real|die-hard|diehard|lifelong|total|long-time)\s+)?"
            r"(?:fan\s+of|into|passionate\s+about|obsessed\s+with|crazy\s+about|keen\s+on|"
            r"fond\s+of|a\s+sucker\s+for|addicted\s+to|hooked\s+on|in\s+love\s+with)\s+" + OBJ + END
        ),
        0.8,
        "likes",
        builder=read_simple,
        keywords=word_set(
            "fan into passionate obsessed crazy keen fond sucker addicted hooked love"
        ),
    ),
    Rule(
        "preference.prefers",
        FactType.PREFERENCE,
        Anchor.SUBJECT,
        _re(
            SUBJ + r"(?:" + ADV + r"\s+(?:prefer|preferred)|(?:'d|\s+would)\s+(?:much\s+|really\s+|"
            r"definitely\s+)?rather)\s+(?P<obj>" + OBJ_CHAR + r"{1,80}?)(?:\s+(?:over|to|"
            r"rather\s+than|"
            r"instead\s+of|than)\s+(?P<other>" + OBJ_CHAR + r"{1,60}?))?" + END
        ),
        0.85,
        "prefers",
        builder=read_prefers,
        keywords=word_set("prefer preferred rather"),
    ),
    Rule(
        "preference.x_over_y",
        FactType.PREFERENCE,
        Anchor.FREE,
        _re(
            r"^(?P<obj>[\w .+#'-]{1,40}?)\s+over\s+(?P<other>[\w .+#'-]{1,40}?)\s*,?\s*"
            r"(?:for\s+me|any\s+day|every\s+time|always)\b"
        ),
        0.7,
        "prefers",
        builder=read_x_over_y,
        keywords=word_set("over"),
    ),
    Rule(
        "preference.favorite",
        FactType.PREFERENCE,
        Anchor.POSSESSIVE,
        _re(
            r"(?P<poss>my|our)\s+(?:(?:absolute|all-time|all\s+time|very|new|current|personal)\s+)?"
            r"(?:favou?rite|fave|fav)\s+(?P<cat>[a-z][a-z -]{0,30}?)\s+(?:is|are|was|were|"
            r"has\s+(?:always\s+)?been|would\s+be|has\s+to\s+be|of\s+all\s+time\s+is)\s+"
            + OBJ
            + END
        ),
        0.85,
        builder=read_favorite,
        keywords=word_set("favorite favourite fave fav"),
    ),
    # ---- decisions
    Rule(
        "decision.decided",
        FactType.DECISION,
        Anchor.SUBJECT,
        _re(
            SUBJ + r"(?:'ve|'d|\s+have|\s+had|\s+finally|\s+just|\s+eventually|\s+all|\s+both|"
            r"\s+collectively|\s+officially|\s+already|\s+then|\s+now|\s+ultimately|\s+jointly)"
            r"{0,3}\s+(?:decided|agreed|chose|chosen|opted|settled|resolved|committed|concluded|"
            r"determined|elected|picked|selected|landed)\b(?P<neg>\s+not)?(?:\s+(?P<conn>to|on|"
            r"for|upon|that|with|against|as))?\s+" + OBJ.replace("{1,120}", "{1,160}") + END_LONG
        ),
        0.85,
        "decided",
        builder=read_decided,
        keywords=word_set(
            "decided agreed chose chosen opted settled resolved committed concluded determined "
            "elected picked selected landed"
        ),
    ),
    Rule(
        "decision.team",
        FactType.DECISION,
        Anchor.FREE,
        _re(
            r"\b(?P<team>the\s+team|our\s+team|the\s+group|everyone|management|the\s+board|"
            r"the\s+committee|leadership)\s+(?:has\s+|have\s+|finally\s+)?(?:decided|agreed|chose|"
            r"opted|settled|resolved|voted)\b(?P<neg>\s+not)?(?:\s+(?P<conn>to|on|for|that|"
            r"against))?\s+" + OBJ.replace("{1,120}", "{1,160}") + END_LONG
        ),
        0.8,
        "decided",
        builder=read_decided,
        keywords=word_set("decided agreed chose opted settled resolved voted"),
    ),
    Rule(
        "decision.and_decided",
        FactType.DECISION,
        Anchor.FREE,
        _re(
            r"\b(?:and|but|so|then|finally|eventually|ultimately)\s+(?:(?:we|i)\s+)?(?:decided|"
            r"agreed|chose|opted)(?P<neg>\s+not)?\s+(?:to|on|for)\s+"
            + OBJ.replace("{1,120}", "{1,160}")
            + END_LONG
        ),
        0.75,
        "decided",
        builder=read_decided,
        keywords=word_set("decided agreed chose opted"),
    ),
    Rule(
        "decision.going_with",
        FactType.DECISION,
        Anchor.SUBJECT,
        _re(
            SUBJ + r"(?:'m|\s+am|'re|\s+are|'ll|\s+will)(?:\s+(?:going\s+to|gonna|definitely|"
            r"probably|just))?\s+(?:go(?:ing)?\s+with|stick(?:ing)?\s+with|switch(?:ing)?\s+to|"
            r"pick(?:ing)?(?!\s+up)|choos(?:e|ing)|settl(?:e|ing)\s+on|opt(?:ing)?\s+for|"
            r"drop(?:ping)?|ditch(?:ing)?|standardi[sz](?:e|ing)\s+on)\s+" + OBJ + END_LONG
        ),
        0.85,
        "decided",
        builder=read_simple,
        keywords=word_set(
            "go going gonna stick sticking switch switching pick picking choose choosing settle "
            "settling opt opting drop dropping ditch ditching standardize standardise "
            "standardizing standardising"
        ),
    ),
    Rule(
        "decision.went_with",
        FactType.DECISION,
        Anchor.SUBJECT,
        _re(
            SUBJ
            + r"(?:\s+(?:finally|eventually|ultimately|just))?\s+(?:went|gone)\s+with\s+"
            + OBJ
            + END
        ),
        0.7,
        "decided",
        builder=read_went_with,
        keywords=word_set("went gone"),
    ),
    Rule(
        "decision.switched",
        FactType.DECISION,
        Anchor.SUBJECT,
        _re(
            SUBJ + r"(?:'ve|\s+have)?(?:\s+(?:just|finally|officially))?\s+(?:switched|migrated|"
            r"moved\s+over|changed)\s+(?:over\s+)?(?:from\s+[^,.;!?]{1,40}?\s+)?to\s+" + OBJ + END
        ),
        0.7,
        "decided",
        builder=read_simple,
        keywords=word_set("switched migrated moved changed"),
    ),
    Rule(
        "decision.lets",
        FactType.DECISION,
        Anchor.FREE,
        _re(
            r"\blet(?:'s|\s+us|s)\s+(?P<obj>(?:go\s+with|use|stick\s+with|switch\s+to|pick|choose|"
            r"adopt|settle\s+on|move\s+forward\s+with|go\s+ahead\s+with|standardi[sz]e\s+on|"
            r"ship|deploy|release|drop|postpone|cancel|skip|merge|freeze)\b"
            + OBJ_CHAR
            + r"{0,120}?)"
            + END_LONG
        ),
        0.8,
        "decided",
        builder=read_simple,
        keywords=word_set("let's lets let"),
    ),
    Rule(
        "decision.decision_is",
        FactType.DECISION,
        Anchor.FREE,
        _re(
            r"\b(?:final\s+|the\s+|our\s+|my\s+)?decision\s*(?::|-|is|was|has\s+been)\s*"
            r"(?:to\s+|that\s+)?" + OBJ.replace("{1,120}", "{1,160}") + END_LONG
        ),
        0.8,
        "decided",
        builder=read_simple,
        keywords=word_set("decision"),
    ),
    Rule(
        "decision.will_not",
        FactType.DECISION,
        Anchor.SUBJECT,
        _re(
            SUBJ + r"(?:\s+will\s+not|\s+won't|'ll\s+no\s+longer|\s+will\s+no\s+longer|"
            r"\s+are\s+not\s+going\s+to|'re\s+not\s+going\s+to|\s+no\s+longer|\s+do\s+not|"
            r"\s+don't)\s+(?P<obj>(?:support|ship|release|allow|accept|deploy|maintain|offer|"
            r"work\s+with|do\s+business\s+with)\b" + OBJ_CHAR + r"{0,120}?)" + END
        ),
        0.75,
        "decided",
        negated=True,
        builder=read_simple,
        keywords=word_set("won't not longer don't"),
    ),
    # ---- actions and commitments
    Rule(
        "action.plans",
        FactType.ACTION,
        Anchor.SUBJECT,
        _re(
            SUBJ + r"(?:'ll|\s+will|\s+shall|'m\s+going\s+to|\s+am\s+going\s+to|'re\s+going\s+to|"
            r"\s+are\s+going\s+to|'m\s+gonna|\s+am\s+gonna|\s+gonna|'re\s+gonna|\s+plan\s+to|"
            r"\s+planned\s+to|'m\s+planning\s+to|\s+am\s+planning\s+to|'re\s+planning\s+to|"
            r"\s+are\s+planning\s+to|\s+intend\s+to|'m\s+intending\s+to|\s+aim\s+to|"
            r"'m\s+aiming\s+to|\s+want\s+to|\s+wanna|'d\s+like\s+to|\s+would\s+like\s+to|"
            r"\s+promise\s+to|'m\s+about\s+to|\s+hope\s+to|'m\s+hoping\s+to|\s+expect\s+to|"
            r"\s+mean\s+to|'m\s+determined\s+to|\s+am\s+determined\s+to|'m\s+committed\s+to|"
            r"'m\s+excited\s+to|'ve\s+decided\s+I'll)"
            + ADV
            + r"\s+(?P<obj>(?P<verb>[a-z']+)\b"
            + OBJ_CHAR
            + r"{0,120}?)"
            + END_LONG
        ),
        0.75,
        "plans_to",
        builder=read_plan,
        assistant=True,
        keywords=word_set(
            "i'll we'll will shall going gonna plan planned planning intend intending aim "
            "aiming want wanna like promise about hope hoping expect mean determined committed "
            "excited i'd we'd"
        ),
    ),
    Rule(
        "action.promised",
        FactType.ACTION,
        Anchor.SUBJECT,
        _re(
            SUBJ + r"\s+promised\s+(?:[\w']+\s+){0,3}?(?:(?:that\s+)?i'd|(?:that\s+)?i\s+would|"
            r"(?:that\s+)?we'd|to)\s+(?P<obj>(?P<verb>[a-z']+)\b"
            + OBJ_CHAR
            + r"{0,120}?)"
            + END_LONG
        ),
        0.75,
        "plans_to",
        builder=read_plan,
        keywords=word_set("promised"),
    ),
    Rule(
        "action.needs",
        FactType.ACTION,
        Anchor.SUBJECT,
        _re(
            SUBJ + r"(?:'ve\s+got\s+to|'ve\s+gotta|" + ADV + r"\s+(?:need\s+to|have\s+to|must|"
            r"should|have\s+got\s+to|got\s+to|gotta|ought\s+to|am\s+supposed\s+to|"
            r"'m\s+supposed\s+to|"
            r"still\s+need\s+to|really\s+need\s+to|really\s+should))"
            + ADV
            + r"\s+(?P<obj>(?P<verb>[a-z']+)\b"
            + OBJ_CHAR
            + r"{0,120}?)"
            + END_LONG
        ),
        0.75,
        "needs_to",
        builder=read_need,
        assistant=True,
        keywords=word_set("need needs have must should got gotta ought supposed i've we've"),
    ),
    Rule(
        "action.reminder",
        FactType.ACTION,
        Anchor.FREE,
        _re(
            r"\b(?:remind\s+me\s+to|(?:don't|do\s+not)\s+let\s+me\s+forget\s+to|make\s+sure\s+"
            r"(?:i|to)|note\s+to\s+self\s*:?|to-?do\s*:|to\s+do\s*:|todo\b\s*:?|action\s+item\s*:|"
            r"next\s+step\s*:\s*(?!i\b))\s*(?:(?P<who>(?-i:[A-Z][a-z]+))\s+(?:to|will|should|"
            r"needs\s+to|must)\s+)?" + OBJ.replace("{1,120}", "{1,160}") + END_LONG
        ),
        0.8,
        "needs_to",
        builder=read_reminder,
        triggers=(
            "remind me",
            "forget to",
            "todo",
            "to-do",
            "to do:",
            "action item",
            "note to self",
            "make sure",
            "next step",
        ),
        keywords=word_set("remind forget todo to do action note sure step"),
    ),
    Rule(
        "action.goal",
        FactType.ACTION,
        Anchor.POSSESSIVE,
        _re(
            r"(?P<poss>my|our)\s+(?:(?:main|big|new|next|only|first|biggest|current)\s+)?"
            r"(?:goal|plan|aim|resolution|new\s+year's\s+resolution|priority|objective|mission|"
            r"dream)\s+(?:for\s+[^,.;!?]{1,30}?\s+)?(?:is|was)\s+to\s+" + OBJ + END_LONG
        ),
        0.8,
        "plans_to",
        builder=read_simple,
        keywords=word_set("goal plan aim resolution priority objective mission dream"),
    ),
    # ---- events
)
