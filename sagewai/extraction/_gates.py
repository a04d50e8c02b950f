"""Which sentences may hold a fact at all: no questions, hypotheticals, hedges, jokes or echoes.

Each check is a pure function of the sentence (and the speaker's role), with one pre-compiled,
linear-time pattern. A *veto* drops the sentence; a *penalty* lowers the confidence of whatever
is found in it (a "lol" often marks a joke, but not always).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "Gate",
    "SentenceGate",
    "gate_sentence",
    "is_question",
    "is_small_talk",
    "lead_offset",
]


class Gate(StrEnum):
    """Why a sentence cannot hold a fact (or ``FACTUAL`` when it may)."""

    FACTUAL = "factual"
    QUESTION = "question"
    HYPOTHETICAL = "hypothetical"
    HEDGE = "hedge"
    JOKE = "joke"
    ECHO = "echo"


@dataclass(frozen=True, slots=True)
class SentenceGate:
    """The verdict on one sentence: the gate, and a confidence penalty when factual."""

    gate: Gate
    penalty: float = 0.0
    reason: str = ""


_LEAD = re.compile(
    r"(?:(?:so|well|oh|ooh|ah|aw+|yeah|yes|yep|yup|no|nope|ok|okay|anyway|also|and|but|btw|"
    r"hey|hi|wow|haha\w{0,8}|lol|hmm+|um+|uh+|honestly|actually|basically|fun fact|"
    r"guess what|by the way|fyi|plus|then|now|right|sure|totally|true|ya|"
    r"yea)\b[\s,.!:;-]{0,4}){1,4}",
    re.IGNORECASE,
)
_WH = re.compile(
    r"(?:what|where|when|who|whom|whose|why|how|which)(?:'s|'re|'d)?\b\s*(?P<next>[\w']*)",
    re.IGNORECASE,
)
_AUX = re.compile(
    r"(?:do|does|did|is|are|was|were|am|can|could|would|will|shall|should|have|has|had|may|"
    r"might|must|isn't|aren't|don't|doesn't|didn't|won't|wouldn't|can't|couldn't|haven't|"
    r"hasn't|shouldn't|wanna|any|anything|anyone)\s+(?:you|i|we|they|he|she|it|there|my|your|"
    r"our|their|his|her|this|that|these|those|the|a|an|u|ya|ur|plans|ideas|news|thoughts|luck)\b",
    re.IGNORECASE,
)
_STATEMENT_AFTER_WH = frozenset(
    {"i", "we", "he", "she", "they", "my", "our", "you'd", "i'd", "i'm", "i've", "we're"}
)

_GATES = re.compile(
    r"(?P<hypo>\b(?:if|suppose|supposing|imagine|imagining|assuming|hypothetically|in\s+theory|"
    r"theoretically|in\s+a\s+perfect\s+world|in\s+an\s+ideal\s+world|let'?s\s+say|say\s+i|"
    r"what\s+if|i\s+wish|we\s+wish|if\s+only|pretend)\b)"
    r"|(?P<hedge>\b(?:maybe|perhaps|possibly|might|may\s+or\s+may\s+not|not\s+sure|unsure|"
    r"i\s+guess|i\s+suppose|who\s+knows|undecided|(?:haven't|have\s+not|hasn't|not\s+yet|"
    r"still\s+haven't)\s+decided|thinking\s+(?:about|of)|considering|(?:don't|do\s+not|didn't)"
    r"\s+know\s+(?:if|whether)|whether|someday|some\s+day|at\s+some\s+point|probably|"
    r"not\s+certain|i\s+could|we\s+could|toying\s+with|on\s+the\s+fence|we'll\s+see|tbd|"
    r"too\s+early\s+to\s+(?:say|tell)|let's\s+discuss|still\s+deciding|can't\s+decide)\b)"
    r"|(?P<joke>\b(?:jk|j/k|just\s+kidding|kidding|just\s+joking|joking)\b|(?:^|\s)/s\s*$)"
    r"|(?P<laugh>\b(?:lol|lmao|lmfao|rofl|haha\w{0,8}|hehe\w{0,8}|xd)\b|[\U0001F602\U0001F923"
    r"\U0001F61C\U0001F606\U0001F605\U0001F643\U0001F61D\U0001F92A])"
    r"|(?P<hyperbole>\b(?:basically|literally|at\s+this\s+point|professional\s+\w{2,20}er|"
    r"the\s+ceo\s+of|fluent\s+in\s+sarcasm)\b)",
    re.IGNORECASE,
)
_ECHO = re.compile(
    r"\b(?:as\s+you\s+(?:mentioned|said|noted|told\s+me|shared|wrote)|you\s+(?:mentioned|said|"
    r"told\s+me|noted|shared|indicated|wrote)|you(?:'ve|\s+have)\s+(?:mentioned|said|told\s+me|"
    r"shared)|i\s+remember|i\s+recall|as\s+i\s+recall|if\s+i\s+(?:remember|recall)|from\s+what\s+"
    r"you|based\s+on\s+what\s+you|according\s+to\s+(?:my|our)\s+(?:notes|memory|records)|"
    r"last\s+time\s+you|earlier\s+you|you\s+previously|since\s+you|given\s+that\s+you|"
    r"because\s+you)\b",
    re.IGNORECASE,
)

_SMALL_TALK_WORDS = frozenset(
    """hi hey hello hiya yo good morning afternoon evening night day bye goodbye see you soon later
    talk take care thanks thank thx ty cheers much so very a lot lots ok okay k kk sure yes yeah
    yep yup no nope nah cool nice great awesome amazing wow oh ooh ah aww hmm hm lol haha hahaha
    hehe lmao i see got it sounds sound good worries of course agreed agree exactly right true
    indeed congrats congratulations interesting welcome please totally get that's that is what's
    up how are doing have been how's going well fine too me and the for your help all at alright
    yay omg gosh dear to this was really just that'll be i'm it's you're glad happy awesome
    wonderful perfect definitely absolutely same here there lovely fantastic excellent bro dude
    man mate buddy sorry hear about oops ugh meh yikes np neat sweet fun funny crazy know makes
    sense fair enough will do noted understood ok'ok hmmm wowww tho though haha""".split()  # noqa: SIM905
)
_WORD = re.compile(r"[a-z']+|\d+")
_FIRST_PERSON = frozenset(
    """i i'm i've i'll i'd im ive my mine me we we're we've we'll our ours us""".split()  # noqa: SIM905
)


_LEAD_FIRST = frozenset(
    """so well oh ooh ah aw aww awww yeah yes yep yup no nope ok okay anyway also and but btw hey
    hi wow lol hmm hmmm um umm uh uhh honestly actually basically fun guess by fyi plus then now
    right sure totally true ya yea""".split()  # noqa: SIM905
)
_FIRST_WORD = re.compile(r"[A-Za-z]+")
_QUESTION_FIRST = frozenset(
    """what where when who whom whose why how which do does did is are was were am can could
    would will shall should have has had may might must isn't aren't don't doesn't didn't won't
    wouldn't can't couldn't haven't hasn't shouldn't wanna any anything anyone""".split()  # noqa: SIM905
)


def _first_word(text: str) -> str:
    match = _FIRST_WORD.match(text)
    return match.group(0).lower() if match else ""


def lead_offset(sentence: str) -> int:
    """Length of leading discourse markers ("Oh, yeah, so ...") to skip before reading on."""
    first = _first_word(sentence)
    if first not in _LEAD_FIRST and not first.startswith(("haha", "aw", "hm", "um", "uh")):
        return 0
    match = _LEAD.match(sentence)
    if match is None or match.end() >= len(sentence):
        return 0
    return match.end()


def is_question(sentence: str) -> bool:
    """True for a question, with or without its question mark.

    Example:
        >>> is_question("what time is my dentist appointment")
        True
        >>> is_question("When I was 5 I lived in Rome")
        False
    """
    text = sentence.strip()
    if not text:
        return False
    if text.rstrip("\"') ").endswith("?"):
        return True
    body = text[lead_offset(text) :]
    head = body[: body.find(" ")] if " " in body else body
    if head.lower().rstrip(",.!") not in _QUESTION_FIRST and not head.lower().startswith(
        ("what", "where", "when", "who", "why", "how")
    ):
        return False
    wh = _WH.match(body)
    if wh is not None:
        return wh.group("next").lower() not in _STATEMENT_AFTER_WH
    return _AUX.match(body) is not None


# For every phrase of _GATES, one word it cannot match without (its rarest): the regex runs
# only when the sentence holds one of them.
_GATE_WORDS = frozenset(
    """if suppose supposing imagine imagining assuming hypothetically theory theoretically perfect
    ideal say wish pretend maybe perhaps possibly might may sure unsure guess knows undecided
    decided thinking considering whether someday day point probably certain could toying fence
    we'll tbd early discuss deciding decide jk j kidding joking lol lmao lmfao rofl xd basically
    literally professional ceo sarcasm""".split()  # noqa: SIM905
)
_WORD_RE = re.compile(r"[a-z']+")
_FACTUAL = SentenceGate(Gate.FACTUAL)


def _may_gate(sentence: str, words: frozenset[str] | None) -> bool:
    """Cheap pre-test: could :data:`_GATES` match at all?"""
    if not sentence.isascii() or "/s" in sentence:
        return True
    lowered = sentence.lower()
    if "haha" in lowered or "hehe" in lowered:
        return True
    return not _GATE_WORDS.isdisjoint(words if words is not None else _WORD_RE.findall(lowered))


def gate_sentence(
    sentence: str, role: str = "user", words: frozenset[str] | None = None
) -> SentenceGate:
    """Decide whether ``sentence`` may hold a fact, and with what confidence penalty.

    Vetoes: questions, hypotheticals ("if I were..."), hedges ("maybe I'll..."), explicit jokes
    ("jk"), and, from the assistant, restatements of what the user said ("As you mentioned...").
    Penalties: laughter markers (-0.4) and hyperbole (-0.1), which often but not always mark a joke.
    ``words`` (the sentence's lower-case words, when the caller has them) saves a pass.

    Example:
        >>> gate_sentence("Maybe I'll try yoga.").gate
        <Gate.HEDGE: 'hedge'>
        >>> gate_sentence("As you mentioned, you like tea.", role="assistant").gate
        <Gate.ECHO: 'echo'>
    """
    if is_question(sentence):
        return SentenceGate(Gate.QUESTION, reason="question")
    if role == "assistant":
        echo = _ECHO.search(sentence)
        if echo is not None:
            return SentenceGate(Gate.ECHO, reason=echo.group(0))
    penalty = 0.0
    reasons: list[str] = []
    if not _may_gate(sentence, words):
        return _FACTUAL
    for match in _GATES.finditer(sentence):
        kind = match.lastgroup
        if kind == "hypo":
            return SentenceGate(Gate.HYPOTHETICAL, reason=match.group(0))
        if kind == "hedge":
            return SentenceGate(Gate.HEDGE, reason=match.group(0))
        if kind == "joke":
            return SentenceGate(Gate.JOKE, reason=match.group(0))
        if kind == "laugh" and "laugh" not in reasons:
            penalty += 0.4
            reasons.append("laugh")
        elif kind == "hyperbole" and "hyperbole" not in reasons:
            penalty += 0.1
            reasons.append("hyperbole")
    return SentenceGate(Gate.FACTUAL, penalty=penalty, reason=",".join(reasons))


def is_small_talk(text: str) -> bool:
    """True for greetings, thanks, acknowledgements and short reactions with no content.

    At most ten words, no digits, and at most one word outside a small-talk lexicon (a name, as
    in "Hey Mel!").

    Example:
        >>> is_small_talk("Thanks so much!"), is_small_talk("I live in Berlin")
        (True, False)
    """
    lowered = text.lower()
    if len(lowered) > 200:
        return False
    words = _WORD.findall(lowered)
    if not words:
        return True
    if len(words) > 10 or any(word.isdigit() for word in words):
        return False
    unknown = sum(1 for word in words if word not in _SMALL_TALK_WORDS)
    if unknown and not _FIRST_PERSON.isdisjoint(words):
        return False  # "I'm a vegetarian": short, but about the speaker
    return unknown <= (1 if len(words) <= 8 else 0)
