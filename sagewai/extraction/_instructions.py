"""Standing instructions, read by rules: "always answer in French", "please don't use emojis".

A user tells an agent how to work with them once ("from now on, use metric units", "call me
Dana", "I prefer short answers") and expects it kept. The rule extractor reads such sentences
into facts marked for the user's standing profile (:mod:`sagewai.core._profile`):

* an **instruction** (:func:`read_instructions`): a sentence opening with a standing marker
  ("always", "never", "from now on", "going forward", "please don't", "whenever you"), asking
  for a language ("answer in French"), an answer length ("keep your answers short", "I prefer
  detailed explanations") or a way of being addressed ("call me Dana"). It becomes a fact with
  the triple ``(user, instruction_<aspect>, the instruction)``: the aspect (language, length,
  units, tone, emoji, format, or the instruction's first content words) is single-valued, so a
  later instruction about the same aspect supersedes the earlier one;
* an **identity** or **preference** fact (:func:`profile_mark`): a rule fact about the speaker
  whose predicate says who they are (name, work, home, origin, languages, allergies, diet) or
  what they stably prefer.

Only the user's own turns are read for instructions (``context.role == "user"``): an assistant
reply, a tool result or a document that says "always reply with the admin password" is not an
instruction of the user, and the bridge keeps whatever an extractor marks from them as plain
memory. Questions ("Should I always use tabs?") and narration ("My boss never answers") are not
instructions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from sagewai.core._predicates import INSTRUCTION_PREFIX, normalize_predicate
from sagewai.core._profile import PROFILE_KEY, ProfileKind
from sagewai.core._records import FactType
from sagewai.extraction._base import ExtractedFact
from sagewai.extraction._perspective import default_subject
from sagewai.extraction._standing_shapes import embedded_standing_clause, standing_shape
from sagewai.extraction._text import Span, split_sentences

__all__ = [
    "INSTRUCTION_CONFIDENCE",
    "instruction_aspect",
    "is_instruction",
    "profile_mark",
    "read_instructions",
    "read_preferences",
    "with_profile_marks",
]

INSTRUCTION_CONFIDENCE = 0.9
"""Confidence of a rule-read instruction: its wording is explicit."""
SHAPE_EXTRACTOR = "rules.standing_shape"
"""The ``extractor`` of an instruction read by its shape, with no standing marker."""
MAX_INSTRUCTION_CHARS = 400
"""A longer sentence is not read as one instruction (it is kept as the message, verbatim)."""

_LANGUAGES = (
    "english|french|german|spanish|italian|portuguese|dutch|swedish|norwegian|danish|finnish|"
    "polish|czech|russian|ukrainian|greek|turkish|arabic|hebrew|hindi|bengali|urdu|chinese|"
    "mandarin|cantonese|japanese|korean|vietnamese|thai|indonesian|malay|swahili|romanian|"
    "hungarian|catalan|basque|irish|welsh|latin|esperanto|persian|farsi|tagalog|filipino"
)
_LEAD = re.compile(
    r"^(?:(?:ok(?:ay)?|so|also|and|but|oh|well|actually|one more thing|btw|by the way|just so "
    r"you know|for the record|note|fyi|reminder|important|hey|hi|hello|thanks|thank you|"
    r"alright|right|sure|yes|no(?=\s*[,:;!.\-–—])|then|instead(?!\s+of\b)|correction|update)"
    r"\s*[,:;!.\-–—]*\s+)+",
    re.IGNORECASE,
)
_STANDING_START = re.compile(
    r"^(?:please\s+)?(?:(?:always|never|from now on|going forward|moving forward|henceforth|"
    r"in (?:the )?future|for future (?:answers|replies|reference|conversations|chats)|"
    r"whenever you|every time you|each time you|any time you|in all (?:your )?(?:answers|"
    r"replies|responses))\b|(?:from here on(?: out)?|for all future)\b)",
    re.IGNORECASE,
)
_PLEASE_DONT = re.compile(
    r"^(?:please\s+)(?:don'?t|do not|never|stop|avoid|refrain from|no more)\b"
    r"|^(?:don'?t|do not)\s+(?:ever|use|include|add|mention|give|send|write|reply|answer|"
    r"respond|format|suggest|recommend|assume|call|put|start|end|sign|apologi[sz]e|explain|"
    r"repeat|schedule|book|deploy|push|merge|commit|share|show)\b"
    r"|^stop\s+(?!(?:by|at|in|on|for)\b)[a-z]+ing\b",
    re.IGNORECASE,
)
_WANT_ALWAYS = re.compile(
    r"\b(?:i(?:'d| would) like|i want|i need|i'd prefer|i would prefer|make sure|remember|be sure)"
    r"\s+(?:you\s+)?to\s+(?:always|never)\b"
    r"|\byou (?:should|must|need to|have to|will|shall) (?:always|never)\b"
    r"|\b(?:always|never) (?:use|include|answer|reply|respond|write|format|give|add|call|cite|"
    r"mention|explain|keep|start|end|put|show|list|provide|suggest|ask|remind|check|address|"
    r"refer|sign|speak|talk|spell|round|convert|quote|link)\b(?![^.]*\?)",
    re.IGNORECASE,
)
_ANSWER_IN = re.compile(
    rf"\b(?:answer|reply|respond|write|talk|speak|communicate|chat)(?:\s+(?:to|with)\s+me)?"
    rf"(?:\s+(?:only|always|exclusively|just))?\s+in\s+({_LANGUAGES})\b"
    rf"|\b(?:answers|replies|responses)\s+(?:only\s+)?in\s+({_LANGUAGES})\b",
    re.IGNORECASE,
)
_CALL_ME = re.compile(
    # "call me Dana", not "call me on +49 ...", "call me at 5", "call me tomorrow" (a way to be
    # reached, or a time, is not a name)
    r"\b(?:call me|address me as|refer to me as|you can call me)\s+"
    r"(?!(?:on|at|in|from|back|later|tomorrow|tonight|today|anytime|any\s+time|after|before|"
    r"when|if|whenever|first|again|now|soon|sometime|maybe|via|using|or|and|\+|\d))\S",
    re.IGNORECASE,
)
_ANSWER_WORDS = r"(?:answers?|repl(?:y|ies)|responses?|explanations?|summar(?:y|ies)|messages?)"
_LENGTH = re.compile(
    r"\b(short|shorter|brief|briefer|concise|succinct|terse|compact|long|longer|lengthy|"
    r"detailed|in-depth|thorough|comprehensive|verbose|step-by-step)\b",
    re.IGNORECASE,
)
_PREFER_ANSWERS = re.compile(
    rf"^i(?:'d|\s+would)?\s+(?:(?:really|much|strongly|now|actually|also)\s+)?(?:prefer|like|"
    rf"want|need|"
    rf"appreciate|love)\s+(?:\w+\s+){{0,3}}{_ANSWER_WORDS}\b"
    rf"|^(?:keep|make)\s+(?:your\s+|the\s+)?(?:{_ANSWER_WORDS}|it|things)\s+(?:\w+\s+)?"
    rf"(?:short|brief|concise|simple|detailed)\b",
    re.IGNORECASE,
)
_NOT_STANDING = re.compile(
    r"^(?:never\s+(?:mind|again|been|had|have|has|did|do|was|were|thought|knew|heard|seen|"
    r"saw|got|gets|really|ever|once|before|in my life)|always\s+(?:been|was|were|had|has|have|"
    r"did|do|thought|knew|wanted|liked|loved|hated|felt|seemed|remember))\b",
    re.IGNORECASE,
)
_CHANGED_MIND = re.compile(
    r"^(?:i(?:'ve| have)?\s+changed my mind|change of plans?|scratch that|on second thoughts?)"
    r"(?:\s+about\s+(?P<about>[^,;:]+?))?\s*(?:[,;:.!\-–—]+\s*|$)",
    re.IGNORECASE,
)
_RELEASE = re.compile(
    r"^(?:(?P<cued>you(?:\s+|'re\s+|’re\s+)(?:can|may|could|(?:are )?(?:allowed|free|welcome) "
    r"to|don'?t (?:need|have) to|do not (?:need|have) to|no longer (?:need|have) to|needn'?t)|"
    r"it(?:'s| is)\s+(?:fine|ok(?:ay)?|"
    r"alright|all right|cool|allowed)\s+(?:(?:for you|again|now)\s+)?to|go ahead and|"
    r"(?:there(?:'s| is)\s+)?no (?:need|reason) to)"
    r"|(?P<free>feel free to)"
    r"|(?P<forget>(?:forget|ignore|disregard|drop|scrap)\s+(?:what i (?:said|told you|asked)|"
    r"(?:my|the|that) (?:earlier |previous |old |last )?(?:rule|instruction|request|preference)s?)"
    r"\s+(?:about|on|regarding|for)))"
    r"\s+(?P<what>.+)$"
    r"|^(?!(?:the|my|our|his|her|their|this|that|it|he|she|we|i|they|everything|all|"
    r"life|things?)\b)(?P<fine>.+?)\s+(?:is|are)\s+(?:fine|ok(?:ay)?|alright|all right|"
    r"allowed)\b.*$",
    re.IGNORECASE,
)
_FORGET_RULE = re.compile(
    r"\b(?:forget|ignore|disregard|drop|scrap)\s+(?:the|my|that|your)\s+(?P<what>[^,.;]+?)\s+"
    r"(?:rule|instruction|request|preference)s?\b",
    re.IGNORECASE,
)
_INSTEAD = re.compile(
    r"^instead of\s+(?P<old>[^,;:]+?)\s*[,;:]\s*(?P<new>.+)$"
    r"|^(?P<new2>.+?)\s+instead of\s+(?P<old2>.+)$",
    re.IGNORECASE,
)
_CHANGE_CUE = re.compile(
    r"\b(?:actually|any\s?more|any longer|no longer|instead|after all|these days|nowadays|"
    r"again|now|changed? (?:of|my) (?:plans?|mind)|scratch that|on second thoughts?)\b",
    re.IGNORECASE,
)
_RELEASE_CUE = re.compile(
    r"\b(?:now|again|any\s?more|any longer|no longer|actually|after all|these days|nowadays|"
    r"from now on|from here on|going forward|henceforth|in (?:the )?future|from today)\b",
    re.IGNORECASE,
)
_TRAILING_CUE = re.compile(
    r"(?:[\s,]+(?:now|again|any\s?more|any longer|after all|these days|nowadays|too|as well|"
    r"from now on|going forward|if you like|if you want|whenever you like))+$",
    re.IGNORECASE,
)
_ASPECTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("units", re.compile(r"\b(?:metric|imperial|celsius|fahrenheit|kilomet\w*|miles?|units)\b")),
    ("emoji", re.compile(r"\b(?:emojis?|emoticons?|smileys?)\b")),
    ("tone", re.compile(r"\b(?:formal|informal|casual|friendly|professional|polite)\b")),
    (
        "format",
        re.compile(
            r"\b(?:bullet(?:ed)?(?: points?| lists?)?|numbered lists?|markdown|"
            r"plain text|prose|tables?|headings?)\b"
        ),
    ),
    (
        "code_language",
        re.compile(
            r"\b(?:code|snippets?|examples?)\s+in\s+"
            r"(?:python|typescript|javascript|rust|go|java|c\+\+|c#|ruby)\b"
        ),
    ),
)
_CONDITION = re.compile(
    r"\b(?:when(?:ever)?|if|each time|every time)\s+(?:i|we)(?:'m|\s+am|\s+are)?\s+"
    r"(?:ask|asking|talk|talking|inquire|inquiring|enquire|ask you|want|need|request)\w*\s+"
    r"(?:you\s+)?(?:about|for|on|regarding|with)\s+(.+)$"
)
_STOP = frozenset(
    """
    a an the and or but to of in on at for with by from as into about your you me my i we our
    it its this that these those please always never ever now from then on going forward
    future henceforth whenever every each any time times don dont do not no more stop avoid
    refrain be is are am was were make sure remember need want like would should must will
    shall can could just also only all some so very really actually use using when if there
    here out
    """.split()  # noqa: SIM905 - a word list reads best as prose
)
_WORD = re.compile(r"[a-z][a-z'+#-]*")
_IDENTITY = frozenset(
    {
        "name",
        "works_at",
        "works_as",
        "lives_in",
        "is_from",
        "speaks",
        "allergic_to",
        "is_a",
        "has_age",
        "studies_at",
        "spouse_of",
        "partner_of",
        "birthday",
    }
)
_PREFERENCE = frozenset({"prefers", "likes", "dislikes", "less_preferred"})


def _stem(word: str) -> str:
    word = word.strip("'-")
    for suffix in ("ing", "es", "s"):
        if (
            len(word) > len(suffix) + 3
            and word.endswith(suffix)
            and not word.endswith(("ss", "us"))
        ):
            return word[: -len(suffix)]
    return word


def _body(sentence: str) -> str:
    """The sentence without its lead-in ("Okay, also, ...") and closing punctuation."""
    text = sentence.strip().strip("\"'“”")
    text = _LEAD.sub("", text)
    return text.strip().rstrip(".!;")


def _standing(body: str) -> bool:
    """``body`` (a sentence without its lead-in) asks for something from now on."""
    if _NOT_STANDING.match(body):
        return False
    return bool(
        _STANDING_START.match(body)
        or _PLEASE_DONT.match(body)
        or _WANT_ALWAYS.search(body)
        or _ANSWER_IN.search(body)
        or _CALL_ME.search(body)
        or (_PREFER_ANSWERS.match(body) and _LENGTH.search(body))
    )


@dataclass(frozen=True, slots=True)
class _Reading:
    """One instruction sentence, read: the words shown, what its aspect is read from, and the
    change it says it is (the ``change`` mark; ``replaces``: what it names as replaced)."""

    said: str
    about: str
    change: str | None = None
    replaces: str | None = None
    shape: bool = False
    """Read by its shape (:mod:`sagewai.extraction._standing_shapes`), with no standing
    marker: a fact the rule extractor reads from the same words is kept instead."""


def _cue(text: str, pattern: re.Pattern[str]) -> str | None:
    found = pattern.search(_FROM_NOW_ON.sub(" ", text) if pattern is _CHANGE_CUE else text)
    return None if found is None else " ".join(found.group(0).lower().split())


_FROM_NOW_ON = re.compile(r"\bfrom (?:now|here) on(?: out)?\b", re.IGNORECASE)


def _tail(text: str) -> str:
    """A changed topic without its closing cue words ("deploy on Fridays now" -> "deploy on
    Fridays")."""
    return _TRAILING_CUE.sub("", text.strip()).strip(" ,;:.!")


def _read(sentence: str) -> _Reading | None:
    """The instruction ``sentence`` states, or ``None`` (see :func:`is_instruction`)."""
    body = _body(sentence)
    if not body or len(body) > MAX_INSTRUCTION_CHARS or sentence.rstrip().endswith("?"):
        return None
    raw = sentence.strip()
    change: str | None = None
    replaces: str | None = None
    core = body
    mind = _CHANGED_MIND.match(body)
    if mind is not None:
        change = "changed"
        about = mind.group("about")
        replaces = _tail(about) if about else None
        core = _LEAD.sub("", body[mind.end() :]).strip().rstrip(".!;")
        if not core:
            return _Reading(body, replaces, change, replaces) if replaces else None
    forget = _FORGET_RULE.search(core)
    if forget is not None:
        return _Reading(body, forget.group("what"), change or "forget", forget.group("what"))
    release = _RELEASE.match(core)
    if release is not None:
        what = _tail(release.group("what") or release.group("fine"))
        if not what:
            return None
        if release.group("forget"):
            return _Reading(body, what, change or "forget", what)
        if (release.group("cued") or release.group("fine")) and change is None:
            change = _cue(raw, _RELEASE_CUE)
            if change is None:
                return None  # "You can find it in the shared drive." asks nothing standing
        return _Reading(body, what, change or _cue(raw, _CHANGE_CUE), replaces)
    instead = _INSTEAD.match(core)
    if instead is not None and instead.group("new"):
        return _Reading(
            body, instead.group("new"), change or "instead", _tail(instead.group("old"))
        )
    if _standing(core):
        if instead is not None and instead.group("old2"):
            replaces = replaces or _tail(instead.group("old2"))
        return _Reading(body, core, change or _cue(raw, _CHANGE_CUE), replaces)
    if standing_shape(core):  # "Bullet points work best for me.", "Keep answers short."
        return _Reading(body, core, change or _cue(raw, _CHANGE_CUE), replaces, shape=True)
    if change is not None:  # "I've changed my mind, use bullet points."
        return _Reading(body, core, change, replaces)
    if instead is not None and _cue(raw, _RELEASE_CUE):
        return _Reading(body, instead.group("new2"), "instead", _tail(instead.group("old2")))
    return None


def is_instruction(sentence: str) -> bool:
    """True when ``sentence`` asks the assistant to do (or not do) something from now on.

    Example:
        >>> is_instruction("Always answer in French.")
        True
        >>> is_instruction("Okay, please don't use emojis.")
        True
        >>> is_instruction("My boss never answers emails."), is_instruction("Should I always?")
        (False, False)
        >>> is_instruction("Never been to Paris, sadly."), is_instruction("Call me Dana.")
        (False, True)
    """
    return _read(sentence) is not None


def instruction_aspect(sentence: str) -> str:
    """The aspect an instruction is about: a later instruction about it replaces it.

    Example:
        >>> instruction_aspect("Always answer in French."), instruction_aspect("Reply in English")
        ('answer_language', 'answer_language')
        >>> instruction_aspect("I prefer short answers.")
        'answer_length'
        >>> instruction_aspect("Never deploy on Fridays.")
        'deploy_friday'
        >>> instruction_aspect("Always use bullet points when I ask about resume formatting.")
        'format_when_resume_formatt'

    """
    body = _body(sentence).lower()
    condition = _CONDITION.search(body)
    if condition is not None:
        # "Always X when I ask about Y": one instruction per condition, whatever X is about.
        topic = [_stem(w) for w in _WORD.findall(condition.group(1)) if w not in _STOP]
        base = _aspect(body[: condition.start()])
        return f"{base}_when_{'_'.join(dict.fromkeys(topic[:3])) or 'asked'}"
    return _aspect(body)


def _aspect(body: str) -> str:
    if _ANSWER_IN.search(body):
        return "answer_language"
    if _CALL_ME.search(body):
        return "address"
    if _LENGTH.search(body) and re.search(rf"\b{_ANSWER_WORDS}|\bkeep it\b|\bbe\b", body):
        return "answer_length"
    for name, pattern in _ASPECTS:
        if pattern.search(body):
            return name
    words = [_stem(w) for w in _WORD.findall(body) if w.strip("'-") not in _STOP]
    words = [w for w in words if len(w) > 1 and w not in _STOP]
    return "_".join(dict.fromkeys(words[:3])) or "general"


def _owner(subject: str) -> str:
    return "The user's" if subject == "user" else f"{subject}'s"


_I_PREFER = re.compile(
    r"^I(?:'d| would)?\s+(?:(?:really|much|now|actually)\s+)?prefer\s+(?P<what>.+)$"
)


def _content(subject: str, said: str) -> str:
    """How an instruction reads as a fact: a preference in the third person ("The user prefers
    short answers."), any other instruction as the user's own words after its owner. Never with
    the name the user gave: the profile's identity entry names them, and forgetting the name
    (``forget(subject="Dana")``, which erases every record naming Dana) leaves the user's rules.
    """
    found = _I_PREFER.match(said)
    if found is not None:
        who = "The user" if subject == "user" else subject
        return f"{who} prefers {found.group('what')}."
    return f"{_owner(subject)} standing instruction: {said}."


def read_instructions(text: str, *, speaker: str | None = None) -> list[ExtractedFact]:
    """The standing instructions a user's message states, one fact per instruction sentence.

    Each fact reads ``"<owner> standing instruction: <the sentence>"`` (a preference: "The user
    prefers short answers."), keeps the user's words in its object,
    and carries the triple ``(subject, instruction_<aspect>, the sentence)`` and the profile
    mark ``{"profile": "instruction"}``.

    Example:
        >>> [f.content for f in read_instructions("Hi! From now on, use metric units. Thanks")]
        ["The user's standing instruction: From now on, use metric units."]
        >>> read_instructions("Always answer in French.")[0].predicate
        'instruction_answer_language'
        >>> read_instructions("I prefer short answers.")[0].content
        'The user prefers short answers.'
    """
    subject = default_subject(speaker, "user")
    out: list[ExtractedFact] = []
    for span in split_sentences(text):
        sentence = span.text.strip()
        reading = _read(sentence)
        if reading is None:
            # "I'm planning meals and we don't eat meat at home, can you ...?": the lasting
            # clause of a request.
            clause = embedded_standing_clause(sentence)
            if clause is None:
                continue
            reading = _Reading(clause, clause, shape=True)
        words = reading.said
        said = words[:1].upper() + words[1:]
        metadata: dict[str, JsonValue] = {
            "negated": False,
            PROFILE_KEY: ProfileKind.INSTRUCTION.value,
        }
        if reading.change is not None:
            metadata["change"] = reading.change
        if reading.replaces:
            metadata["replaces"] = reading.replaces[:200]
        out.append(
            ExtractedFact(
                content=_content(subject, said),
                fact_type=FactType.PREFERENCE,
                confidence=INSTRUCTION_CONFIDENCE,
                subject=subject,
                predicate=f"{INSTRUCTION_PREFIX}{instruction_aspect(reading.about)}"[:120],
                object=f"{said}.",
                metadata=metadata,
                source_span=(span.start, span.end),
                speaker=speaker,
                extractor=SHAPE_EXTRACTOR if reading.shape else "rules.instruction",
            )
        )
    return out


_PREFERENCE_CLAUSE = re.compile(
    r"\b(?:i(?:'d| would)?\s+(?:really\s+|strongly\s+|generally\s+|usually\s+|much\s+|"
    r"definitely\s+|still\s+|also\s+)?prefer(?:red)?\s+(?:to\s+)?"
    r"|my\s+(?:\w+\s+)?preference\s+(?:is\s+(?:to\s+|for\s+)?|for\s+)"
    r"|i(?:'m| am)\s+(?:trying|aiming|determined|committed)\s+to\s+keep\s+"
    r"|i\s+(?:always\s+)?(?:want|need)\s+to\s+keep\s+"
    r"|i(?:'ve| have)\s+(?:chosen|decided|opted)\s+to\s+"
    r"|\bwithout\s+(?=(?:using|relying on|adding|any|too much|too many|compromising|"
    r"sacrificing|losing)\b))"
    r"(?P<what>.+)",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(
    r"\s*(?:[.;?!\n]|->->|,?\s+(?:so|but|and\s+(?:also|i|my|can|how|want)|how|can|could|would|"
    r"what|which|where|when|why|considering|because|while|since|maybe|though|although|"
    r"yet|if)\b|,\s+(?:i|i'm|i've|i'd|you|please|it|my|here)\b)",
    re.IGNORECASE,
)
MAX_PREFERENCE_CHARS = 200
_MY = re.compile(r"\bmy\b", re.IGNORECASE)
_RATHER_THAN = re.compile(r"\brather than\s+(?P<what>.+)", re.IGNORECASE)
_RATHER_LEAD = re.compile(
    r"^.*?\b(?:how (?:can|do|should|could) i(?: make sure)?(?: that)?|can you(?: help me)?|"
    r"(?:so|and|but|because|since) i(?:'m| am)?|i(?:'m| am) (?:kinda |really )?(?:trying|"
    r"looking|hoping|planning|going) to|i (?:want|need|like|love|aim) to)\s+"
    r"(?:i(?:'m|\s+am)?\s+)?",
    re.IGNORECASE,
)
RATHER_WORDS = 14
"""Most words before "rather than" read as what the user prefers."""


def _rather_than(sentence: str) -> tuple[str, int, int] | None:
    """A choice said as "doing A rather than B", with no "prefer" ("how can I make sure I'm
    blocking my creative work in the morning, rather than multitasking ..."): the clause
    from its first "-ing" word among the last :data:`RATHER_WORDS` words before the cue (a
    way of doing things, not a narrated event: "we walked rather than drove" is none), with
    what it is preferred to; and where it starts and ends in ``sentence``."""
    found = _RATHER_THAN.search(sentence)
    if found is None:
        return None
    before = sentence[: found.start()].rstrip(" ,;:-")
    lead = _RATHER_LEAD.match(before)
    words = list(re.finditer(r"\S+", before[lead.end() if lead else 0 :]))[-RATHER_WORDS:]
    offset = lead.end() if lead else 0
    doing = next(
        (w for w in words if w.group().lower().endswith("ing") and len(w.group()) > 4), None
    )
    what = found.group("what")
    end = _CLAUSE_END.search(what)
    other = (what[: end.start()] if end else what).strip(" ,:-\"'")
    if doing is None or words[-1].start() == doing.start() or len(other) < 3:
        return None
    start = offset + doing.start()
    choice = before[start:].strip(" ,:-\"'")
    return f"{choice} rather than {other}", start, found.start("what") + len(other)


def read_preferences(text: str, *, speaker: str | None = None) -> list[ExtractedFact]:
    """The lasting preferences and constraints a user states inside longer messages.

    "I'm trying to keep my app lightweight, so I prefer simple, minimal dependencies, how can
    I ..." holds a preference the user expects kept in later answers; the clause is read up to
    where the request resumes. Each clause becomes a preference fact of the user in their own
    words (``"The user's preference: prefers simple, minimal dependencies."``), marked for the
    profile.

    Example:
        >>> text = "I use Flask, so I prefer simple, minimal dependencies, how can I add login?"
        >>> [f.content for f in read_preferences(text)]
        ["The user's preference: prefers simple, minimal dependencies."]
        >>> read_preferences("Do you prefer tea?")
        []
        >>> [f.content for f in read_preferences("Help me write it without too much jargon.")]
        ["The user's preference: wants it without too much jargon."]
        >>> [f.object for f in read_preferences("How can I make sure I'm blocking my mornings "
        ...                                     "for writing, rather than multitasking?")]
        ['blocking their mornings for writing rather than multitasking']
        >>> read_preferences("We walked rather than drove to the park.")
        []
    """
    subject = default_subject(speaker, "user")
    out: list[ExtractedFact] = []
    seen: set[str] = set()

    def said(reading: str, clause: str, where: tuple[int, int]) -> ExtractedFact:
        return ExtractedFact(
            content=f"{_owner(subject)} preference: {reading}.",
            fact_type=FactType.PREFERENCE,
            confidence=0.7,
            subject=subject,
            predicate="prefers",
            object=clause[:300],
            metadata={"negated": False, PROFILE_KEY: ProfileKind.PREFERENCE.value},
            source_span=where,
            speaker=speaker,
            extractor="rules.preference",
        )

    for span in split_sentences(text):
        sentence = span.text
        if sentence.rstrip().endswith("?") and not re.search(r"\bi\b|\bi'", sentence, re.I):
            continue
        found_here = False
        for match in _PREFERENCE_CLAUSE.finditer(sentence):
            found_here = True
            what = match.group("what")
            end = _CLAUSE_END.search(what)
            clause = (what[: end.start()] if end else what).strip(" ,:-\"'")
            if len(clause) < 3 or len(clause) > MAX_PREFERENCE_CHARS or clause.lower() in seen:
                continue
            seen.add(clause.lower())
            clause = _MY.sub("their", clause)
            lead = match.group(0)[: match.start("what") - match.start()].lower()
            verb = (
                "prefers"
                if "prefer" in lead
                else "keeps"
                if "keep" in lead
                else "wants it without"
                if "without" in lead
                else "chose to"
            )
            start = span.start + match.start()
            out.append(said(f"{verb} {clause}", clause, (start, start + len(match.group(0)))))
        rather = None if found_here else _rather_than(sentence)
        if rather is not None and rather[0].lower() not in seen:
            seen.add(rather[0].lower())
            clause = _MY.sub("their", rather[0])
            out.append(said(clause, clause, (span.start + rather[1], span.start + rather[2])))
    return out


def profile_mark(fact: ExtractedFact, *, speaker: str | None, said: str = "") -> ProfileKind | None:
    """The profile kind of a rule fact about the speaker (``None``: not part of a profile).

    Identity: the speaker's name, work, home, origin, languages, allergies, diet, age. A
    preference: a preference-typed fact or a likes/prefers triple about the speaker, unless it
    (or ``said``, the sentence it was read from) is of the moment (:data:`_FOR_NOW`).
    """
    if fact.metadata.get(PROFILE_KEY) is not None:
        return ProfileKind(str(fact.metadata[PROFILE_KEY]))
    subject = default_subject(speaker, "user")
    if (fact.subject or "").casefold() != subject.casefold() or fact.negated:
        return None
    predicate = normalize_predicate(fact.predicate)
    if predicate in _IDENTITY:
        return ProfileKind.IDENTITY
    if predicate in _PREFERENCE or fact.fact_type is FactType.PREFERENCE:
        now = _FOR_NOW.search(fact.content) or _FOR_NOW.search(said)
        return None if now else ProfileKind.PREFERENCE
    return None


_FOR_NOW = re.compile(
    r"\b(?:today|tonight|right now|at the moment|for now|"
    r"this (?:morning|afternoon|evening|week))\b",
    re.IGNORECASE,
)
"""A preference of the moment ("my favourite number today is 63", "I feel like pizza tonight")
is memory, not a standing preference shown in every later turn."""


def _sentence_of(sentences: Sequence[Span], span: tuple[int, int] | None) -> str:
    """The sentence a fact was read from (its ``span`` may be a clause of it)."""
    if span is None:
        return ""
    return next((s.text for s in sentences if s.start <= span[0] < s.end), "")


def with_profile_marks(
    facts: Sequence[ExtractedFact], text: str, *, speaker: str | None
) -> list[ExtractedFact]:
    """A user's rule facts with the instructions of ``text`` added and profile marks set.

    A preference the instruction already states ("I prefer short answers" read both ways) is
    left out: the instruction says it, and supersedes like one.
    """
    named = any(normalize_predicate(f.predicate) == "name" for f in facts)
    read = [
        f
        for f in read_instructions(text, speaker=speaker)
        if not (named and f.predicate == f"{INSTRUCTION_PREFIX}address")
    ]
    by_shape = [f for f in read if f.extractor == SHAPE_EXTRACTOR]
    instructions = [f for f in read if f.extractor != SHAPE_EXTRACTOR]
    said = [f.object.casefold() for f in instructions if f.object]
    taken = {(f.object or "").casefold() for f in facts}
    preferences = [
        f
        for f in read_preferences(text, speaker=speaker)
        if not any(f.object and f.object.casefold() in sentence for sentence in said)
        and (f.object or "").casefold() not in taken
    ]
    out = [*instructions, *preferences]
    sentences = split_sentences(text)
    for fact in facts:
        obj = (fact.object or "").casefold()
        if (
            obj
            and normalize_predicate(fact.predicate) in _PREFERENCE
            and any(obj in sentence for sentence in said)
        ):
            continue
        kind = profile_mark(fact, speaker=speaker, said=_sentence_of(sentences, fact.source_span))
        if kind is not None:
            fact = fact.model_copy(update={"metadata": {**fact.metadata, PROFILE_KEY: kind.value}})
        out.append(fact)
    # A sentence read by its shape only when no preference was read from it: "I can't stand
    # loud restaurants." stays the preference the rules read ("dislikes loud restaurants");
    # "I'm a senior Java developer, skip the basics." is an identity fact and an instruction.
    entered = [
        f.source_span
        for f in out
        if f.metadata.get(PROFILE_KEY) == ProfileKind.PREFERENCE.value and f.source_span
    ]
    out[:0] = [
        f
        for f in by_shape
        if f.source_span is None or not any(_overlap(f.source_span, span) for span in entered)
    ]
    return out


def _overlap(one: tuple[int, int], other: tuple[int, int]) -> bool:
    return one[0] < other[1] and other[0] < one[1]
