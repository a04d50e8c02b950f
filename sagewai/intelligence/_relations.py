"""Relation extractors: read ``subject --predicate--> object`` triples off a message.

:class:`HeuristicRelationExtractor` is the offline default: sentence-level patterns for the
relations people state about themselves and others in conversation (works at, lives in, moved
to, uses, prefers X over Y, family and social ties, owns, studies, ...). Predicates are normalised
to the vocabulary of :mod:`sagewai.core._predicates`, which also says which predicates are
single-valued (a new value supersedes the old one). "I", "me" and "my" resolve to the speaker.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from sagewai.core._predicates import job_pattern, relation_predicate
from sagewai.core._text import word_set
from sagewai.intelligence._entities import ExtractedEntity

__all__ = [
    "SPEAKER",
    "ExtractedRelation",
    "HeuristicRelationExtractor",
    "RelationExtractor",
]


SPEAKER = "I"
"""Subject (or object) text of a first-person relation when no speaker name is known."""
MAX_TEXT_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class ExtractedRelation:
    """One triple read off a text, with the labels the pattern implies for its ends.

    ``subject_is_speaker`` is true when the subject was "I"/"my": the graph builder then links the
    relation to the speaker's entity even when no speaker name was given.
    """

    subject: str
    predicate: str
    object: str
    confidence: float
    subject_label: str | None = None
    object_label: str | None = None
    subject_is_speaker: bool = False


@runtime_checkable
class RelationExtractor(Protocol):
    """Reads relations off a text. ``entities`` are the mentions an entity extractor found in it."""

    async def extract(
        self,
        text: str,
        *,
        speaker: str | None = None,
        entities: Sequence[ExtractedEntity] = (),
    ) -> list[ExtractedRelation]:
        """Relations stated in ``text``; first person resolves to ``speaker`` when given."""
        ...


_ADVERBS = (
    r"(?:(?:am|is|are|was|were|have|has|had|will|would|just|also|now|currently|recently|finally|"
    r"still|really|actually|been|always|even|definitely|totally|usually|often|do|does|did|"
    r"absolutely|mostly|already|never|gonna|going to|started|start|got|get)\s+)*"
)
_NAME = r"[A-Z][\w'-]*[a-z][\w'-]*(?:\s+[A-Z][\w'-]*[a-z][\w'-]*){0,2}"
_SUBJECT = rf"(?P<subj>\bI\b|\b(?-i:{_NAME}))"
_TIME_TAIL = re.compile(
    r"\s+(?:last|next|this|yesterday|today|tonight|earlier|(?:a\s+)?few|\w+\s+(?:days?|weeks?|"
    r"months?|years?)\s+ago|ago)\b.*$",
    re.IGNORECASE,
)
_DETERMINERS = re.compile(
    r"^(?:a|an|the|my|our|his|her|their|some|your|new|few|couple of|"
    r"lot of|lots of|bunch of)\s+",
    re.IGNORECASE,
)
_PHRASE_STOP = re.compile(
    r"\s+(?:and|but|or|because|so|which|that|who|when|while|where|with|for|to|in|at|on|since|as|"
    r"if|than|over|from|by|about|after|before|until|though|although|instead|rather|too|lately|"
    r"now|today|yesterday|recently|anymore|again|every|each|is|was|are|were|it|this|these)\b.*$",
    re.IGNORECASE,
)
_NOT_OBJECTS = word_set(
    "i me you him her it them us that this those these there here everything something "
    "anything nothing everyone someone anyone one what how why it's its myself yourself all "
    "lot so as is was are be been being still too very really just also more much most less "
    "well even only not no yes again though how when where which who whom whose because if "
    "then than such kind sort way thing things stuff bit lots same other others any each "
    "every both either neither going doing getting having making able about like working "
    "trying thinking for to with in on at from by of into last next weeks days months years "
    "ago yesterday today tonight tomorrow week weekend month year time times"
)
_JOBS = job_pattern()
_POSSESSIONS = (
    "dog|dogs|cat|cats|pet|pets|puppy|kitten|bird|parrot|hamster|rabbit|fish|turtle|horse|snake|"
    "car|truck|motorcycle|bike|bicycle|boat|house|home|apartment|flat|condo|cabin|garden|farm|"
    "guitar|piano|violin|drum kit|drums|camera|laptop|telescope|business|shop|store|bakery|"
    "restaurant|company|startup|podcast|blog|channel"
)
_TIES = (
    "best friend|friend|sister|brother|sibling|mom|mum|mother|dad|father|parent|son|daughter|"
    "kid|child|husband|wife|spouse|partner|boyfriend|girlfriend|fiance|fiancee|colleague|"
    "coworker|co-worker|boss|manager|aunt|uncle|cousin|grandmother|grandfather|grandma|grandpa|"
    "niece|nephew|grandson|granddaughter"
)


# Predicates a capitalised subject that no extractor recognised may still carry ("Alice works at
# Acme"); weak ones ("It's like ...", "Sounds like ...") need a recognised name as subject.
_STRONG = frozenset(
    {
        "works_at",
        "works_as",
        "lives_in",
        "is_from",
        "studies_at",
        "spouse_of",
        "partner_of",
        "member_of",
        "owns",
        "has_age",
        "studies",
        "uses",
        "speaks",
        "works_on",
    }
)


@dataclass(frozen=True, slots=True)
class _Pattern:
    predicate: str
    regex: re.Pattern[str]
    object_kind: str
    """"proper" (a name), "phrase" (any noun phrase), "group" (object in the regex), "pair"
    (prefers X over Y), "visit" (a named place is visited, anything else is attended)."""
    object_label: str | None
    confidence: float


def _verb(predicate: str, verbs: str, kind: str, label: str | None, confidence: float) -> _Pattern:
    regex = re.compile(rf"{_SUBJECT}\s+{_ADVERBS}(?:{verbs})\s+(?P<rest>.+)$", re.IGNORECASE)
    return _Pattern(predicate, regex, kind, label, confidence)


_PATTERNS: tuple[_Pattern, ...] = (
    _verb("works_on", r"working on|work on|works on", "phrase", "project", 0.7),
    _verb(
        "works_at",
        rf"(?:a|an)\s+(?:\w+\s+)?(?:{_JOBS})\s+(?:at|for)|work at|works at|worked at|working at|"
        r"work for|works for|working for|"
        r"employed at|employed by|job at|a job at|internship at|interning at",
        "proper",
        "organization",
        0.8,
    ),
    _Pattern(
        "works_as",
        re.compile(
            rf"{_SUBJECT}\s+{_ADVERBS}(?:work as|works as|working as|am|is|was|became|become)\s+"
            rf"(?:a|an)\s+(?:\w+\s+)??(?P<obj>{_JOBS})\b(?P<rest>.*)$",
            re.IGNORECASE,
        ),
        "group",
        "role",
        0.7,
    ),
    _Pattern(
        "works_as",
        re.compile(
            rf"{_SUBJECT}\s+{_ADVERBS}(?:work|works|worked|working)\s+(?:at|for)\s+[^,.;!?]*?\bas\s+"
            rf"(?:a|an)\s+(?:\w+\s+)??(?P<obj>{_JOBS})\b(?P<rest>.*)$",
            re.IGNORECASE,
        ),
        "group",
        "role",
        0.7,
    ),
    _verb(
        "lives_in",
        r"live in|lives in|living in|moved to|move to|moving to|moved back to|"
        r"relocated to|relocating to|based in|reside in|resides in|settled in",
        "proper",
        "location",
        0.8,
    ),
    _verb(
        "is_from",
        r"from|come from|comes from|came from|grew up in|born in|was born in",
        "proper",
        "location",
        0.7,
    ),
    _verb(
        "studies_at",
        r"study at|studies at|studying at|studied at|enrolled at|enrolled in|"
        r"go to school at|attend|attends|attending",
        "proper",
        "organization",
        0.7,
    ),
    _verb(
        "studies_at",
        r"(?:study|studies|studying|studied|majoring in)\s+\w+(?:\s+\w+)?\s+at",
        "proper",
        "organization",
        0.65,
    ),
    _verb(
        "studies",
        r"study|studies|studying|majoring in|major in|learning|taking classes in|"
        r"taking a class in|doing a degree in|degree in",
        "phrase",
        "topic",
        0.6,
    ),
    _Pattern(
        "prefers",
        re.compile(
            rf"{_SUBJECT}\s+{_ADVERBS}(?:prefer|prefers|preferred|would rather have|like)\s+"
            r"(?P<rest>.+?)\s+(?:over|to|rather than|more than|instead of)\s+(?P<rest2>.+)$",
            re.IGNORECASE,
        ),
        "pair",
        None,
        0.75,
    ),
    _verb("prefers", r"prefer|prefers|preferred", "phrase", None, 0.65),
    _verb(
        "uses",
        r"use|uses|using|switched to|rely on|relies on|work with|works with|"
        r"working with|code in|program in|write in",
        "phrase",
        "technology",
        0.7,
    ),
    _verb(
        "dislikes",
        r"hate|hates|dislike|dislikes|can't stand|cannot stand|don't like|"
        r"do not like|not a fan of",
        "phrase",
        None,
        0.65,
    ),
    _verb(
        "likes",
        r"like|likes|love|loves|enjoy|enjoys|into|a fan of|a big fan of|"
        r"passionate about|obsessed with|fond of",
        "phrase",
        None,
        0.6,
    ),
    _Pattern(
        "owns",
        re.compile(
            rf"{_SUBJECT}\s+{_ADVERBS}(?:have|has|own|owns|bought|adopted|got)\s+(?:a|an|two|three|"
            rf"my|our|some)\s+(?:new\s+|little\s+|big\s+|old\s+)?(?P<obj>{_POSSESSIONS})\b"
            rf"(?:\s+(?:named|called)\s+(?P<named>[A-Z][\w'-]+))?(?P<rest>.*)$",
            re.IGNORECASE,
        ),
        "group",
        "possession",
        0.7,
    ),
    _verb(
        "member_of",
        r"joined|join|part of|a member of|member of|volunteer at|volunteer with|"
        r"volunteering at|volunteering with|signed up for",
        "phrase",
        "group",
        0.65,
    ),
    _verb(
        "visited",
        r"visited|went to|go to|going to|traveled to|travelled to|been to|"
        r"took a trip to|trip to|vacation in|holiday in|attended|attend|attending",
        "visit",
        "location",
        0.6,
    ),
    _verb(
        "interested_in",
        r"keen on|interested in|looking into|curious about|thinking about|"
        r"considering",
        "phrase",
        "topic",
        0.55,
    ),
    _verb("speaks", r"speak|speaks|speaking|fluent in", "proper", "language", 0.6),
    _verb("spouse_of", r"married to|married", "proper", "person", 0.8),
    _verb("partner_of", r"dating|engaged to|in a relationship with", "proper", "person", 0.75),
    _Pattern(
        "has_age",
        re.compile(
            rf"{_SUBJECT}\s+{_ADVERBS}(?:am|is|turned|turning|just turned)\s+(?P<obj>\d{{1,3}})"
            r"(?:\s+years?\s+old|\s+yo\b|\s+this\s+year)(?P<rest>.*)$",
            re.IGNORECASE,
        ),
        "group",
        "value",
        0.8,
    ),
)
_TIE_AFTER = re.compile(
    rf"\b(?P<owner>[Mm]y|{_NAME}'s)\s+(?:(?:older|younger|little|big|best|oldest|youngest|eldest|"
    rf"new|dear|old)\s+)?(?P<tie>{_TIES})\s*,?\s+(?P<obj>{_NAME})",
)
_TIE_BEFORE = re.compile(
    rf"(?P<obj>\b{_NAME})\s*(?:,\s*)?(?:is|was|,)\s+(?P<owner>[Mm]y|{_NAME}'s)\s+(?:(?:older|younger|"
    rf"little|big|best|oldest|youngest|eldest|new|dear|old)\s+)?(?P<tie>{_TIES})\b",
)
_MODIFIER = re.compile(
    r"\s+(?!(?:and|or|but|in|at|on|to|for|with|from|last|this|next|yesterday|today|since|because|"
    r"where|when|which|who|as|after|before|so|too|now|again|is|was|are|were|has|had|have|will|"
    r"would|can|could|lately|recently|every|each|a|an|the|of)\b)[a-z]"
)
_ARTICLES = frozenset({"a", "an", "the", "some", "any", "another", "every", "each"})
_BARE_VERBS = word_set(
    "make teach keep help see get go do have take give find create show try share learn play "
    "spend bring use start feel know think want need let put power push fight stay reach build "
    "be become hear watch read write say tell ask meet visit support encourage inspire"
)
_EVENT_WORDS = re.compile(
    r"\b(?:conference|parade|meeting|reading|festival|fest|concert|party|class|workshop|"
    r"group|show|game|match|wedding|service|ceremony|fair|event|session|retreat|camp|rally|"
    r"protest|march|talk|lecture|seminar|tournament|race|marathon|exhibition|exhibit|"
    r"center|centre|club|gala|fundraiser|recital|performance|play|screening|meetup|hackathon|"
    r"summit|symposium|expo|trip|tour|course|program|programme|celebration|funeral|reunion)s?$",
    re.IGNORECASE,
)
"""A phrase "attended" only when it names an occasion ("a poetry reading", "the council
meeting"); "went to the beach" is a place visited, "went to keep using my voice" nothing."""
_LIST_SPLIT = re.compile(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+")
_CLAUSE_BREAK = re.compile(r",\s*|\s+(?:and|but|so|because|then|also)\s+")
_FIRST_PERSON = re.compile(r"\bI\b")
_HOME = re.compile(
    rf"\b(?P<owner>[Mm]y|(?-i:{_NAME})'s)\s+home\s*(?:country|town|city|state)\s*(?:,|is|was)?\s*"
    rf"(?P<obj>(?-i:{_NAME}))"
)
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
_CONTRACTIONS = (
    (re.compile(r"\bI'm\b", re.IGNORECASE), "I am"),
    (re.compile(r"\bI've\b", re.IGNORECASE), "I have"),
    (re.compile(r"\bI'd\b", re.IGNORECASE), "I would"),
    (re.compile(r"\bI'll\b", re.IGNORECASE), "I will"),
    (re.compile(r"\bim\b"), "I am"),
)
_NAME_STOP = word_set(
    "The A An This That These Those There Here It He She We They You My Our Your His Her "
    "Their What When Where Why How Who Which And But Or So If Then Also Just Yes No Yeah Oh "
    "Wow Hey Hi Hello Thanks Thank Well Really Sure Great Good Nice Cool Awesome Amazing "
    "Maybe Sometimes Today Tomorrow Yesterday Recently Lately Last Next Since After Before "
    "Because Actually Honestly Basically Anyway Plus Now Then Both Every Some Lol Haha Omg "
    "Thankfully Luckily Hopefully Unfortunately Fortunately Sadly Finally Congrats Sounds "
    "Looks Seems"
)


def _noun_phrase(rest: str) -> str:
    """The noun phrase a clause's remainder starts with: determiners dropped, clauses cut off."""
    text = re.split(r"[,.;:!?()\"“”]|\s[-–—]\s", rest, maxsplit=1)[0].strip()
    text = _PHRASE_STOP.sub("", text).strip()
    text = _TIME_TAIL.sub("", text).strip()
    while True:
        stripped = _DETERMINERS.sub("", text)
        if stripped == text:
            break
        text = stripped
    words = text.split()
    if not words or len(words) > 4:
        return ""  # a long remainder is a clause, not a name for a thing
    phrase = " ".join(words).strip(" '\"")
    if not phrase or phrase.lower() in _NOT_OBJECTS or words[0].lower() in _NOT_OBJECTS:
        return ""
    if phrase.lower() in _ARTICLES:
        return ""  # "I went to a" cut short: an article names nothing
    if words[0].lower() in _BARE_VERBS or words[-1].lower() in _ARTICLES | {"more", "you"}:
        return ""  # "teach people", "make people smile": a verb phrase, not a thing
    if phrase.lower().startswith(("to ", "ing ")) or phrase.lower() in {"to", "doing", "going"}:
        return ""
    return phrase


def _proper(rest: str, entities: Sequence[tuple[str, str]]) -> tuple[str, str | None]:
    """A name at the start of ``rest``: a known entity mention first, else a capitalised run."""
    trimmed = _DETERMINERS.sub("", rest.lstrip())
    for name, label in entities:
        if trimmed.startswith(name):
            if _MODIFIER.match(trimmed, len(name)):
                return "", None
            return name, label
    match = re.match(r"(?:[A-Z][\w'&.-]*)(?:\s+(?:of\s+|de\s+)?[A-Z][\w'&.-]*)*", trimmed)
    if match is None:
        return "", None
    name = match.group(0).rstrip(".'")
    if name.endswith("'s"):
        name = name[:-2]
    if name.isupper() and len(name) > 1:
        return "", None  # "an LGBTQ+ event": an acronym the entity extractor did not name
    if name in _NAME_STOP or _MODIFIER.match(trimmed, len(name)):
        # "a LGBTQ support group": the capitalised word only modifies a common noun.
        return "", None
    return name, None


class HeuristicRelationExtractor:
    """Sentence-level patterns for the relations people state in conversation.

    Args:
        min_confidence: Drop relations whose pattern confidence is below this.

    Example:
        >>> import asyncio
        >>> found = asyncio.run(HeuristicRelationExtractor().extract(
        ...     "I moved to Lisbon and I prefer tea over coffee.", speaker="Ana"))
        >>> [(r.subject, r.predicate, r.object) for r in found]  # doctest: +NORMALIZE_WHITESPACE
        [('Ana', 'lives_in', 'Lisbon'), ('Ana', 'prefers', 'tea'),
         ('Ana', 'less_preferred', 'coffee')]
    """

    def __init__(self, min_confidence: float = 0.0) -> None:
        self._min_confidence = min_confidence

    async def extract(
        self,
        text: str,
        *,
        speaker: str | None = None,
        entities: Sequence[ExtractedEntity] = (),
    ) -> list[ExtractedRelation]:
        """Relations stated in ``text``; "I"/"my" become ``speaker`` (or :data:`SPEAKER`)."""
        return self.extract_sync(text, speaker=speaker, entities=entities)

    def extract_sync(
        self,
        text: str,
        *,
        speaker: str | None = None,
        entities: Sequence[ExtractedEntity] = (),
    ) -> list[ExtractedRelation]:
        """The same as :meth:`extract`, without an event loop."""
        text = text[:MAX_TEXT_CHARS].replace("’", "'")
        for pattern, replacement in _CONTRACTIONS:
            text = pattern.sub(replacement, text)
        known = sorted({(e.name, e.label) for e in entities}, key=lambda e: -len(e[0]))
        out: list[ExtractedRelation] = []
        seen: set[tuple[str, str, str]] = set()

        def emit(
            subject: str,
            predicate: str,
            obj: str,
            confidence: float,
            object_label: str | None,
            subject_label: str | None = None,
        ) -> None:
            is_speaker = subject == SPEAKER or subject.lower() == "my"
            subject_name = (speaker or SPEAKER) if is_speaker else subject
            if obj == SPEAKER:
                obj = speaker or SPEAKER
            key = (subject_name.casefold(), predicate, obj.casefold())
            if (
                not obj
                or confidence < self._min_confidence
                or key in seen
                or subject_name.casefold() == obj.casefold()
            ):
                return
            seen.add(key)
            out.append(
                ExtractedRelation(
                    subject_name,
                    predicate,
                    obj,
                    confidence,
                    "person" if is_speaker else subject_label,
                    object_label,
                    is_speaker,
                )
            )

        for sentence in _SENTENCES.split(text):
            self._sentence(sentence.strip(), known, emit)
        return out

    def _sentence(self, sentence: str, known: Sequence[tuple[str, str]], emit: _Emit) -> None:
        if not sentence:
            return
        sentence = _resolve_pronouns(sentence, [name for name, label in known if label == "person"])
        for regex in (_TIE_AFTER, _TIE_BEFORE):
            for match in regex.finditer(sentence):
                owner = match.group("owner")
                subject = SPEAKER if owner.lower() == "my" else owner[:-2]
                obj = match.group("obj")
                if obj.split()[0] in _NAME_STOP or subject in _NAME_STOP:
                    continue
                predicate = relation_predicate(match.group("tie").split()[-1])
                emit(subject, predicate, obj, 0.75, "person", "person")
        for match in _HOME.finditer(sentence):
            owner = match.group("owner")
            subject = SPEAKER if owner.lower() == "my" else owner[:-2]
            emit(subject, "is_from", match.group("obj"), 0.75, "location")
        person_names = [name for name, label in known if label == "person"]
        named = {name for name, label in known if label in ("person", "organization")}
        for pattern in _PATTERNS:
            for match in _clause_matches(pattern.regex, sentence, person_names):
                subject = match.group("subj")
                if subject.lower() != "i" and subject not in named:
                    first = subject.split()[0]
                    if (
                        pattern.predicate not in _STRONG
                        or first in _NAME_STOP
                        or "'" in first
                        or first.lower() in _NOT_OBJECTS
                    ):
                        continue
                if subject.lower() == "i":
                    subject = SPEAKER
                subject_label = None if subject == SPEAKER else "person"
                self._apply(pattern, match, subject, subject_label, known, emit)

    def _apply(
        self,
        pattern: _Pattern,
        match: re.Match[str],
        subject: str,
        subject_label: str | None,
        known: Sequence[tuple[str, str]],
        emit: _Emit,
    ) -> None:
        predicate = pattern.predicate
        if pattern.object_kind == "group":
            named = match.groupdict().get("named")
            obj = named or match.group("obj").lower()
            label = "pet" if named else pattern.object_label
            emit(subject, predicate, obj, pattern.confidence, label, subject_label)
            return
        if pattern.object_kind == "pair":
            first, second = _noun_phrase(match.group("rest")), _noun_phrase(match.group("rest2"))
            if first and second:
                emit(subject, "prefers", first, pattern.confidence, None, subject_label)
                emit(subject, "less_preferred", second, pattern.confidence, None, subject_label)
            return
        rest = match.group("rest")
        if pattern.object_kind == "visit":
            obj, label = _proper(rest, known)
            if obj:
                emit(
                    subject, "visited", obj, pattern.confidence, label or "location", subject_label
                )
            else:
                phrase = _noun_phrase(rest)
                if not phrase or phrase.lower().startswith(("bed", "sleep", "work", "school")):
                    return
                if _EVENT_WORDS.search(phrase):
                    emit(
                        subject,
                        "attended",
                        phrase,
                        pattern.confidence - 0.05,
                        "event",
                        subject_label,
                    )
                elif len(phrase.split()) <= 2 and phrase.islower():
                    # "went to the beach": a place, but no named one
                    emit(
                        subject, "visited", phrase, pattern.confidence - 0.1, "place", subject_label
                    )
            return
        if pattern.object_kind == "proper":
            obj, label = _proper(rest, known)
            emit(
                subject,
                predicate,
                obj,
                pattern.confidence,
                label or pattern.object_label,
                subject_label,
            )
            return
        head = re.split(r"[.;:!?()\"“”]", rest, maxsplit=1)[0]
        for part in _LIST_SPLIT.split(head)[:4]:
            found = next(
                ((n, lab) for n, lab in known if _DETERMINERS.sub("", part.lstrip()).startswith(n)),
                None,
            )
            if found is not None:
                emit(subject, predicate, found[0], pattern.confidence, found[1], subject_label)
            elif pattern.object_label == "technology":
                continue  # "use it to push for...": only a named tool is a technology used
            else:
                emit(
                    subject,
                    predicate,
                    _noun_phrase(part),
                    pattern.confidence,
                    pattern.object_label,
                    subject_label,
                )


_PRONOUN = re.compile(r"\b(?:she|he|She|He)\b")


def _resolve_pronouns(sentence: str, persons: Sequence[str]) -> str:
    """ "My sister Eva lives in Oslo and she works at Initech": "she" is Eva, when exactly one
    person was named before it in the sentence (never a guess between two)."""
    out: list[str] = []
    cursor = 0
    for match in _PRONOUN.finditer(sentence):
        before = sentence[: match.start()]
        named = {name for name in persons if re.search(rf"\b{re.escape(name)}\b", before)}
        if len(named) == 1:
            out.append(sentence[cursor : match.start()])
            out.append(named.pop())
            cursor = match.end()
    out.append(sentence[cursor:])
    return "".join(out)


class _Emit(Protocol):
    def __call__(
        self,
        subject: str,
        predicate: str,
        obj: str,
        confidence: float,
        object_label: str | None,
        subject_label: str | None = None,
    ) -> None: ...


def _clause_matches(
    regex: re.Pattern[str], sentence: str, names: Sequence[str] = ()
) -> list[re.Match[str]]:
    """Matches of ``regex`` anchored at each clause start ("I ... and I ..." gives two)."""
    starts = {0}
    starts.update(m.end() for m in _CLAUSE_BREAK.finditer(sentence))
    starts.update(m.start() for m in _FIRST_PERSON.finditer(sentence))
    starts.update(sentence.find(name) for name in names if name in sentence)
    out = []
    for start in sorted(starts):
        match = regex.match(sentence, start)
        if match is not None:
            out.append(match)
    return out
