"""What a fact states, read from its words: the structure a duplicate decision needs.

Why: most facts arrive without a triple (``ctx.add("Ben likes ramen.")``), and cosine alone cannot
tell "Ben likes ramen" from "Ben uses ramen" (MiniLM puts them at 0.93) while it misses
"Ben really likes ramen" next to "Ben likes ramen". So every fact gets a
:class:`FactStructure`, read once from its content when its writer gave none:

* subject, verb and object of a "<Name> <verb> <object>" sentence, the verb normalised through
  the extraction vocabulary (``loves`` -> ``likes``) or kept as a word stem; where two facts'
  verbs differ, the rule extractor reads each as if its subject had said it ("Nadia moved to
  Berlin" is read as Nadia saying "I moved to Berlin": ``lives_in``), see
  :func:`vocabulary_predicate`;
* negation, tense (past / present / progressive / future), numbers, amounts, dates, versions and
  units (the extractor's exact-value and date readers), and the names and places it mentions;
* the set of its content words, stemmed, with auxiliaries and intensifiers left out: two facts
  with the same set say the same thing in another order or with a contraction.

The structure is a pure function of the content, cached by content in the process, and kept in
the fact under ``metadata["consolidation"]["structure"]`` when a run writes the fact anyway (see
:func:`structure_json`), so a later run reads it back instead of reading the words again.
"""

from __future__ import annotations

import functools
import hashlib
import marshal
import re
from dataclasses import dataclass
from typing import Literal

from pydantic import JsonValue

from sagewai.core._predicates import canonical_polarity, normalize_predicate
from sagewai.core._records import Fact
from sagewai.errors import SagewaiError
from sagewai.extraction._base import ExtractionContext
from sagewai.extraction._dates import find_time_mentions
from sagewai.extraction._exact_values import find_exact_values
from sagewai.extraction._rules import RuleBasedFactExtractor

__all__ = [
    "FUNCTION_WORDS",
    "STRUCTURE_CACHE",
    "STRUCTURE_KEY",
    "STRUCTURE_VERSION",
    "FactStructure",
    "Reading",
    "Tense",
    "claim_of",
    "decode_reading",
    "encode_reading",
    "exact_values_of",
    "has_structure",
    "read_structure",
    "reading_of",
    "stored_structure",
    "structure_json",
    "structure_of",
    "tenses_compatible",
    "vocabulary_predicate",
]

STRUCTURE_KEY = "structure"
"""Key of the structure inside ``metadata["consolidation"]``."""
STRUCTURE_VERSION = 5
"""Bumped whenever the reading changes, so a stored structure of an older reader is re-read."""

Tense = Literal["past", "present", "progressive", "future"]


@dataclass(frozen=True, slots=True)
class FactStructure:
    """The parts of a statement that decide whether two facts say the same thing.

    Attributes:
        subject: Who or what it is about, loosely normalised (``None`` when not read).
        predicate: The vocabulary predicate (``likes``) or the main verb's stem (``recommend``).
        object: The object, as its stemmed content words joined by spaces.
        negated: It states the negation ("does not like", "never uses").
        tense: When the claim holds, as far as the verb group tells.
        values: Numbers, amounts, dates, versions, units and other exact values, as written.
        names: Capitalised names and places (case-folded), other than the first word.
        words: Stemmed content words (no auxiliaries, articles, intensifiers).
        source: ``triple`` (given by the writer), ``sentence`` (a "<Name> <verb> <object>"
            sentence) or ``words`` (no statement read).
        phrase: The verb phrase in the first person ("like ramen at work"), which the rule
            extractor reads when two verbs differ (:func:`vocabulary_predicate`).
        sequence: The content words in their order (who did what to whom, when no statement
            was read: "alma had lunch with ben" is not "Ben had lunch with Alma").
        claim: (subject, vocabulary predicate, object) when the verb phrase names a claim of
            the shared vocabulary: "Ana works at Acme", "Ana is employed at Acme" and "Ana has
            a job at Acme" all read ``("ana", "works_at", "acm")`` (see :func:`claim_of`); a
            negated claim's predicate starts with ``"not "``.
    """

    subject: str | None
    predicate: str | None
    object: str | None
    negated: bool
    tense: Tense
    values: frozenset[str]
    names: frozenset[str]
    words: frozenset[str]
    source: str
    phrase: str | None = None
    sequence: tuple[str, ...] = ()
    claim: tuple[str, str, str] | None = None

    @property
    def statement(self) -> tuple[str, str, str] | None:
        """(subject, predicate, object) when all three were read."""
        if self.subject and self.predicate and self.object:
            return (self.subject, self.predicate, self.object)
        return None


# ------------------------------------------------------------------------------- words

_CONTRACTIONS = (
    (re.compile(r"\bwon['’]t\b", re.IGNORECASE), "will not"),
    (re.compile(r"\bcan['’]t\b", re.IGNORECASE), "can not"),
    (re.compile(r"\bcannot\b", re.IGNORECASE), "can not"),
    (re.compile(r"n['’]t\b", re.IGNORECASE), " not"),
    (re.compile(r"['’]re\b", re.IGNORECASE), " are"),
    (re.compile(r"['’]m\b", re.IGNORECASE), " am"),
    (re.compile(r"['’]ve\b", re.IGNORECASE), " have"),
    (re.compile(r"['’]ll\b", re.IGNORECASE), " will"),
    (re.compile(r"['’]d\b", re.IGNORECASE), " would"),
    (re.compile(r"\b(he|she|it|that|there|what|who)['’]s\b", re.IGNORECASE), r"\1 is"),
    (re.compile(r"['’]s\b"), ""),
)
_TOKEN = re.compile(r"[^\W_]+(?:[-.][^\W_]+)*", re.UNICODE)
_BE = frozenset("am is are was were be been being".split())  # noqa: SIM905
_AUX = _BE | frozenset(
    "do does did has have had will would shall should can could may might must gets get got "  # noqa: SIM905
    "getting".split()
)
_MODALS = frozenset(
    "do does did will would shall should can could may might must".split()  # noqa: SIM905
)
_ASPECT = frozenset("keep keeps kept continue continues continued".split())  # noqa: SIM905
_INTENSIFIERS = frozenset(
    """really truly very actually definitely genuinely certainly honestly totally absolutely
    quite so just also too indeed currently still now usually regularly generally basically
    simply clearly surely""".split()  # noqa: SIM905
)
_NEGATIONS = frozenset("not never no neither nor nobody nothing none".split())  # noqa: SIM905
_ARTICLES = frozenset("the a an".split())  # noqa: SIM905
FUNCTION_WORDS = frozenset(
    """in on at to from of out for with by into onto over under about every all each any some
    his her their my our your its there as than after i we you he she they it""".split()  # noqa: SIM905
)
_DETERMINERS = _ARTICLES | frozenset(
    """my our your his her their its this that these those some all every each any in on at
    for from to of with by after before when while during since yesterday today tomorrow
    last next""".split()  # noqa: SIM905
)
_PREPOSITIONS = frozenset("to in at on for with of into".split())  # noqa: SIM905
_PRONOUN_SUBJECTS = frozenset("i we he she they you it".split())  # noqa: SIM905
_PAST_VERBS = frozenset(
    """went ran got made left took came bought sold began became met saw wrote taught spoke
    gave found flew drove ate fell grew heard held kept knew led lost paid read rode sang sat
    sent slept spent stood swam told thought threw woke wore won built chose drew drank fought
    hid hit put quit set shut""".split()  # noqa: SIM905
)
_NUMBER_WORDS = {
    word: str(value)
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "  # noqa: SIM905
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {"dozen": "12", "thirty": "30", "forty": "40", "fifty": "50", "hundred": "100"}
_UNITS = frozenset(
    """km kilometers kilometres mile miles meter meters metre metres cm mm kg kilograms gram
    grams g lb lbs pound pounds ounce ounces oz liter liters litre litres ml gallon gallons
    second seconds minute minutes hour hours day days week weeks month months year years
    percent mb gb tb kb ms celsius fahrenheit degrees euro euros dollar dollars usd eur gbp
    yen cups cup""".split()  # noqa: SIM905
)
_SUFFIXES = ("ies", "ied", "ying", "ing", "ed", "es", "s")


def expand_contractions(text: str) -> str:
    """``"Ana isn't using Rust"`` -> ``"Ana is not using Rust"`` (and ``'re``, ``'m``, ...)."""
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    return text


@functools.lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """A crude English stem, the same for a verb's forms: ``uses``/``using``/``used`` -> ``us``.

    Only equality of stems matters, so "studies", "studying" and "studied" all give ``study``.
    """
    word = word.casefold()
    if len(word) <= 3 or word[-1].isdigit():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            if suffix in ("s",) and word.endswith(("ss", "us", "is")):
                continue
            base = word[: -len(suffix)]
            if suffix in ("ies", "ied", "ying"):
                base += "y"
            elif len(base) >= 3 and base[-1] == base[-2] and base[-1] not in "lsaeiou":
                base = base[:-1]  # running -> run, stopped -> stop
            return base.rstrip("e") or base
    return word.rstrip("e") if len(word) > 3 else word


def _is_name(token: str) -> bool:
    """A capitalised word ("Berlin", "PostgreSQL"); all-capitals abbreviations ("DB") are not."""
    return token[:1].isupper() and not token.isupper()


def _fold(token: str) -> str:
    return stem(token.casefold().replace("-", ""))


# ------------------------------------------------------------------------------- reading

_EXTRACTOR = RuleBasedFactExtractor(min_confidence=0.0)
_FIRST_PERSON = {"is": "am", "has": "have", "does": "do", "was": "was"}
_ES_ENDINGS = ("ses", "xes", "zes", "ches", "shes", "oes")


def _first_person(verb: str) -> str:
    """The first-person form of a third-person verb ("likes" -> "like", "studies" -> "study")."""
    lower = verb.casefold()
    if lower in _FIRST_PERSON:
        return _FIRST_PERSON[lower]
    if lower.endswith("ies") and len(lower) > 4:
        return lower[:-3] + "y"
    if lower.endswith(_ES_ENDINGS) and not lower.endswith("uses"):
        return lower[:-2]
    if lower.endswith("s") and not lower.endswith("ss"):
        return lower[:-1]
    return lower


def _tense(verbs: list[str]) -> Tense:
    """Tense of a verb group (auxiliaries then the main verb), lower-cased."""
    if not verbs:
        return "present"
    if any(v in ("will", "shall", "gonna") for v in verbs):
        return "future"
    if len(verbs) >= 2 and verbs[0] in _BE and verbs[1] == "going" and "to" in verbs:
        return "future"
    first = verbs[0]
    main = verbs[-1]
    if "being" in verbs[1:] and first in _BE and first not in ("was", "were"):
        return "progressive"  # "is being shut down"
    if first in ("was", "were", "did", "had") or (first in ("has", "have") and main != first):
        return "past"
    if first in ("used",) and len(verbs) > 1:
        return "past"
    if main.endswith("ing") and (first in _BE or first in _ASPECT):
        return "past" if first == "kept" else "progressive"
    if first in _BE or first in ("get", "gets", "do", "does"):
        return "present"
    if main.endswith("ed") or main in _PAST_VERBS:
        return "past"
    return "present"


def _verb_form(word: str) -> bool:
    return word.endswith(("ing", "ed")) or word in _PAST_VERBS


def _finite(word: str, pronoun: bool) -> bool:
    """Can ``word`` be the finite verb right after the subject? A name takes "likes"/"liked";
    a pronoun also takes the base form ("I like", "they use")."""
    if _verb_form(word) or (word.endswith("s") and not word.endswith("ss")):
        return True
    return pronoun and word.isalpha()


def _participle(word: str) -> bool:
    return word.endswith(("ed", "en")) or word in _PAST_VERBS


def _verb_group(tokens: list[str]) -> list[str]:
    """The first verb group of a sentence whose subject was not read ("The team moved ...")."""
    lowered = [t.casefold() for t in tokens]
    for i, word in enumerate(lowered):
        if (i == 0 or _is_name(tokens[i])) and not (word in _AUX or word in _PAST_VERBS):
            continue  # "Ahmed", or a first word: rarely the verb of such a sentence
        if word in _AUX or word in _ASPECT or word == "used":
            group = [word]
            for after in lowered[i + 1 : i + 4]:
                if after in _AUX or after.endswith(("ing", "ed")) or after in _PAST_VERBS:
                    group.append(after)
                elif after in ("going", "to") or after in _INTENSIFIERS or after in _NEGATIONS:
                    group.append(after) if after in ("going", "to") else None
                else:
                    break
            return group
        if (word.endswith("ed") and len(word) > 4) or word in _PAST_VERBS:
            return [word]
    return []


@dataclass(frozen=True, slots=True)
class _Sentence:
    subject: str | None
    verbs: list[str]
    rest: list[str]
    pronoun: bool = False


def _split_sentence(tokens: list[str]) -> _Sentence:
    """Cut "<Name> [aux...] [adverbs] <verb> <object...>" into its parts (``subject`` ``None``
    when the sentence does not start with a name or a pronoun)."""
    i = 0
    subject: list[str] = []
    while i < len(tokens) and i < 3 and _is_name(tokens[i]):
        if tokens[i].casefold() in _DETERMINERS or tokens[i].casefold() in _PRONOUN_SUBJECTS:
            break
        subject.append(tokens[i])
        i += 1
    pronoun = False
    if not subject and tokens and tokens[0].casefold() in _PRONOUN_SUBJECTS:
        subject, i, pronoun = [tokens[0]], 1, True
    if not subject or i >= len(tokens):
        return _Sentence(None, [], [t.casefold() for t in tokens])
    # "User uploads are stored": a lower-case word before the auxiliary ends the subject.
    if (
        not pronoun
        and i + 1 < len(tokens)
        and tokens[i].casefold() not in _AUX
        and tokens[i + 1].casefold() in _AUX
        and len(subject) < 3
    ):
        subject.append(tokens[i])
        i += 1
    verbs: list[str] = []
    while i < len(tokens):
        word = tokens[i].casefold()
        aspect = (
            word in _ASPECT and i + 1 < len(tokens) and tokens[i + 1].casefold().endswith("ing")
        )
        if word == "no" and i + 1 < len(tokens) and tokens[i + 1].casefold() == "longer":
            i += 2
            continue
        if word in _AUX or aspect or word in _INTENSIFIERS or word in _NEGATIONS:
            if word not in _INTENSIFIERS and word not in _NEGATIONS:
                verbs.append(word)
            i += 1
            continue
        if word == "going" and i + 1 < len(tokens) and tokens[i + 1].casefold() == "to":
            verbs.extend(("going", "to"))
            i += 2
            continue
        if word == "used" and i + 1 < len(tokens) and tokens[i + 1].casefold() == "to":
            verbs.append("used")
            i += 2
            continue
        break
    word = tokens[i].casefold() if i < len(tokens) else ""
    last = verbs[-1] if verbs else ""
    if last and last not in _MODALS and not _verb_form(word):
        pass  # the auxiliary is the verb: "Lena is Dutch", "Maria has a peanut allergy"
    elif word and not _is_name(tokens[i]) and (verbs or _finite(word, pronoun)):
        verbs.append(word)
        i += 1
    else:
        return _Sentence(None, [], [t.casefold() for t in tokens])
    rest = [t.casefold() for t in tokens[i:]]
    return _Sentence(" ".join(subject), verbs, rest, pronoun)


def _content_stems(words: list[str]) -> list[str]:
    # "keeps recommending": the aspect verb says nothing of the claim; "kept in S3" does.
    words = [
        w
        for i, w in enumerate(words)
        if not (w in _ASPECT and i + 1 < len(words) and words[i + 1].endswith("ing"))
    ]
    return [
        _NUMBER_WORDS.get(w) or stem(w)
        for w in words
        if w not in _ARTICLES and w not in _AUX and w not in _INTENSIFIERS and w not in _NEGATIONS
    ]


@functools.lru_cache(maxsize=131_072)
def exact_values_of(content: str) -> tuple[str, ...]:
    """The extractor's exact values of ``content`` (numbers included), cached by content."""
    return find_exact_values(content)


def _values(content: str, tokens: list[str]) -> frozenset[str]:
    values = {v.casefold() for v in exact_values_of(content)}
    for mention in find_time_mentions(content):
        values.add(mention.iso or " ".join(mention.text.casefold().split()))
    for token in tokens:
        lower = token.casefold()
        if lower in _NUMBER_WORDS:
            values.add(_NUMBER_WORDS[lower])
        elif lower in _UNITS:
            values.add(f"unit:{stem(lower)}")
    return frozenset(values)


@functools.lru_cache(maxsize=65_536)
def vocabulary_predicate(phrase: str) -> tuple[str, bool] | None:
    """The predicate (and negation) the rule extractor reads in "I <phrase>", if any.

    ``"moved to Berlin"`` -> ``("lives_in", False)``, ``"love ramen"`` -> ``("likes", False)``:
    the extractor's rules and its predicate vocabulary, so consolidation reads a verb the way
    extraction writes it.
    """
    try:
        found = _EXTRACTOR.extract_sync(f"I {phrase}", ExtractionContext(speaker="Someone"))
    except SagewaiError:  # input the extractor refuses has no reading
        return None
    for fact in found:
        if fact.predicate and fact.object:
            return canonical_polarity(fact.predicate, fact.negated)
    return None


def _read_words(
    content: str,
) -> tuple[str, list[str], list[str], tuple[str, ...], _Sentence, frozenset[str]]:
    """Where :func:`read_structure` starts: the expanded text, its tokens (as written and
    case-folded), the content stems in order, the sentence cut and the names it mentions."""
    expanded = expand_contractions(content)
    tokens = _TOKEN.findall(expanded)
    lowered = [t.casefold() for t in tokens]
    names = {_fold(t) for t in tokens[1:] if _is_name(t)}
    sequence = tuple(_content_stems([t.replace("-", "") for t in lowered]))
    sentence = _split_sentence(tokens)
    if sentence.subject is not None and not sentence.pronoun:
        names.update(_fold(t) for t in sentence.subject.split() if _is_name(t))  # first words
    return expanded, tokens, lowered, sequence, sentence, frozenset(names)


# The vocabulary families whose verb phrases consolidation reads as one claim: states, where the
# verb is only a way of saying it ("works at" / "is employed at" / "has a job at"). Intentions
# and decisions ("wants to" / "plans to") and events that change a state ("is moving to", "is
# joining") are left out: there the verb is the claim.
_CLAIM_PREDICATES = frozenset(
    """works_at works_as lives_in likes studies_at studies is_from speaks uses owns visited
    member_of allergic_to spouse_of""".split()  # noqa: SIM905
)
_EVENT_PHRASES = frozenset(
    "move_to moved_to moves_to relocate_to relocated_to join joined joins".split()  # noqa: SIM905
)
_PARTICLES = frozenset("in at of to from on for with as by into".split())  # noqa: SIM905
_LONGEST_PHRASE = 4
_HAVE = frozenset({"has", "have"})


def _verb_bases(verb: str) -> tuple[str, ...]:
    """The forms of ``verb`` the vocabulary may list it under ("living" -> "live", "worked" ->
    "work", "relies" -> "rely"), the word itself first."""
    forms = [verb, _first_person(verb)]
    for suffix in ("ing", "ed"):
        if verb.endswith(suffix) and len(verb) > len(suffix) + 2:
            base = verb[: -len(suffix)]
            forms += [base, base + "e"]
            if len(base) >= 3 and base[-1] == base[-2]:
                forms.append(base[:-1])  # "stopped" -> "stop"
    if verb.endswith("ied") and len(verb) > 4:
        forms.append(verb[:-3] + "y")
    return tuple(dict.fromkeys(forms))


def _phrase_claim(words: list[str], lexical: bool) -> tuple[str, list[str]] | None:
    """The vocabulary predicate of the longest leading phrase of ``words`` and the words after
    it. A phrase ends with a particle ("based in", "has a job at"), unless it is a lexical verb
    alone ("adores"); at least one word must be left for the object."""
    for size in range(min(_LONGEST_PHRASE, len(words) - 1), 0, -1):
        head = words[:size]
        if not (head[-1] in _PARTICLES or (size == 1 and lexical)):
            continue
        phrase = "_".join(head)
        if phrase in _EVENT_PHRASES:
            return None
        predicate = normalize_predicate(phrase)
        if predicate is not None and canonical_polarity(predicate, False)[0] in _CLAIM_PREDICATES:
            return predicate, words[size:]
    return None


def claim_of(
    subject: str, verbs: list[str], rest: list[str], negated: bool
) -> tuple[str, str, str] | None:
    """``(subject, predicate, object)`` when the verb phrase names a vocabulary claim.

    ``verbs`` is the sentence's verb group (auxiliaries, then the main verb) and ``rest`` the
    words after it, case-folded. The main verb is tried in its base forms with the words after
    it ("is living in" -> ``live_in``, "makes use of" -> ``make_use_of``); after a form of "be"
    or "have" the words after it are tried too ("is based in", "is a fan of").

    Example:
        >>> claim_of("ana", ["is", "employed"], ["at", "acme"], False)
        ('ana', 'works_at', 'acm')
        >>> claim_of("ben", ["has"], ["a", "job", "at", "acme"], False)
        ('ben', 'works_at', 'acm')
        >>> claim_of("ben", ["is", "moving"], ["to", "porto"], False) is None
        True
    """
    if not verbs:
        return None
    main = verbs[-1]
    kept = [w for w in rest if w not in _ARTICLES and w not in _INTENSIFIERS]
    found: tuple[str, list[str]] | None = None
    for base in _verb_bases(main):
        found = _phrase_claim([base, *kept], lexical=main not in _AUX or main in _HAVE)
        if found is not None:
            break
    if found is None and main in _AUX:
        found = _phrase_claim(kept, lexical=False)
    if found is None:
        return None
    predicate, words = found
    predicate, flipped = canonical_polarity(predicate, negated)
    obj = " ".join(_content_stems(words))
    if not obj:
        return None
    return subject, f"not {predicate}" if flipped else predicate, obj


STRUCTURE_CACHE = 131_072
"""Contents whose full reading :func:`read_structure` keeps (about 1.6 KB each)."""


@functools.lru_cache(maxsize=STRUCTURE_CACHE)
def read_structure(content: str) -> FactStructure:
    """Read the structure of a fact's content (pure, cached by content).

    Example:
        >>> s = read_structure("Eli keeps recommending chess.")
        >>> s.subject, s.predicate, s.object, s.tense
        ('eli', 'recommend', 'chess', 'progressive')
        >>> read_structure("Ben really likes ramen.").predicate
        'likes'
    """
    return _read_structure(content)


def _read_structure(content: str) -> FactStructure:
    expanded, tokens, lowered, sequence, sentence, found = _read_words(content)
    names = set(found)
    words = frozenset(sequence)
    negated = any(t in _NEGATIONS for t in lowered) or "no longer" in expanded.casefold()
    values = _values(expanded, tokens)
    verbs = sentence.verbs
    main = verbs[-1] if verbs else ""
    passive = len(verbs) >= 2 and verbs[0] in _BE and _participle(main)
    claim = None
    if sentence.subject is not None:
        claim = claim_of(sentence.subject.casefold(), verbs, sentence.rest, negated)
    if sentence.subject is None or (passive and "by" not in sentence.rest):
        # No statement read (or a passive without its agent, "User uploads are stored in S3",
        # whose subject is what an active sentence has as its object): the words decide.
        tense = _tense(verbs) if passive else _tense(_verb_group(tokens))
        return FactStructure(
            None, None, None, negated, tense, values, frozenset(names), words, "words",
            sequence=sequence, claim=claim,
        )  # fmt: skip
    tense = _tense(verbs)
    subject = sentence.subject.casefold()
    rest = sentence.rest
    obj = " ".join(_content_stems(rest)) or None
    predicate: str | None = None
    source = "sentence"
    if passive:
        # A passive with its agent ("Ramen is liked by Ben") states "Ben likes ramen".
        cut = rest.index("by")
        subject = " ".join(rest[cut + 1 :])
        obj = " ".join(_content_stems(sentence.subject.casefold().split() + rest[:cut])) or None
        predicate = normalize_predicate(main) or stem(main)
    phrase: str | None = None
    if not passive and main and main not in _AUX and not main.endswith("ing"):
        # What the extractor would read, asked only when two verbs differ (it costs ~0.5 ms).
        phrase = f"{_first_person(main)} {' '.join(rest)}".strip()
    if predicate is None and main and main not in _BE:
        predicate = normalize_predicate(main)
    if predicate is None:
        predicate = "be" if main in _BE or not main else stem(main)
    return FactStructure(
        subject, predicate, obj, negated, tense, values, frozenset(names), words, source, phrase,
        sequence, claim,
    )  # fmt: skip


Reading = tuple[FactStructure, tuple[str, ...]]
"""What a content reads as: its structure and the extractor's exact values (see
:func:`reading_of`)."""


def reading_of(content: str) -> Reading:
    """``(read_structure(content), exact_values_of(content))``, read now and not cached.

    What a large run reads once per fact for its candidate table and keeps encoded
    (:func:`encode_reading`) for the decisions, instead of reading each compared fact again.
    """
    return _read_structure(content), exact_values_of(content)  # the second hits the cache


def encode_reading(reading: Reading) -> bytes:
    """A reading as compact bytes (about 300 for a short fact; the objects take about 1.6 KB).

    Example:
        >>> reading = reading_of("Ana Silva moved to Berlin in 2021.")
        >>> decode_reading(encode_reading(reading)) == reading
        True
    """
    s, values = reading
    fields = (
        s.subject, s.predicate, s.object, s.negated, s.tense, s.values, s.names, s.words,
        s.source, s.phrase, s.sequence, s.claim, values,
    )  # fmt: skip
    return marshal.dumps(fields, 4)


def decode_reading(blob: bytes) -> Reading:
    """The reading :func:`encode_reading` encoded."""
    *fields, values = marshal.loads(blob)  # bytes this process or its child made
    return FactStructure(*fields), values


_COMPATIBLE: dict[Tense, frozenset[Tense]] = {
    "past": frozenset({"past"}),
    "present": frozenset({"present", "progressive"}),
    "progressive": frozenset({"present", "progressive", "future"}),
    "future": frozenset({"future", "progressive"}),
}


def tenses_compatible(a: Tense, b: Tense) -> bool:
    """True unless the tenses change the claim ("moved to" vs "is moving to", "uses" vs "will
    use"); "is using" and "uses" are compatible, as are "is moving" and "will move"."""
    return b in _COMPATIBLE[a]


# ------------------------------------------------------------------------------- on the fact


def _digest(content: str) -> str:
    return hashlib.blake2b(content.encode("utf-8"), digest_size=8).hexdigest()


def structure_json(structure: FactStructure, content: str) -> dict[str, JsonValue]:
    """The JSON kept in ``metadata["consolidation"]["structure"]`` (with the reader's version
    and a digest of the content it was read from, so a stale one is never used)."""
    return {
        "v": STRUCTURE_VERSION,
        "digest": _digest(content),
        "subject": structure.subject,
        "predicate": structure.predicate,
        "object": structure.object,
        "negated": structure.negated,
        "tense": structure.tense,
        "values": list[JsonValue](sorted(structure.values)),
        "names": list[JsonValue](sorted(structure.names)),
        "words": list[JsonValue](sorted(structure.words)),
        "source": structure.source,
        "phrase": structure.phrase,
        "sequence": list[JsonValue](structure.sequence),
        "claim": list[JsonValue](structure.claim) if structure.claim else None,
    }


def _from_json(value: object, content: str) -> FactStructure | None:
    if not isinstance(value, dict) or value.get("v") != STRUCTURE_VERSION:
        return None
    if value.get("digest") != _digest(content):
        return None
    try:
        tense = value["tense"]
        if tense not in _COMPATIBLE:
            return None
        return FactStructure(
            subject=value["subject"],
            predicate=value["predicate"],
            object=value["object"],
            negated=bool(value["negated"]),
            tense=tense,
            values=frozenset(value["values"]),
            names=frozenset(value["names"]),
            words=frozenset(value["words"]),
            source=str(value["source"]),
            phrase=value.get("phrase"),
            sequence=tuple(value.get("sequence", ())),
            claim=_claim_from_json(value.get("claim")),
        )
    except (KeyError, TypeError):
        return None


def _claim_from_json(value: object) -> tuple[str, str, str] | None:
    if isinstance(value, list) and len(value) == 3 and all(isinstance(v, str) for v in value):
        return (value[0], value[1], value[2])
    return None


def has_structure(fact: Fact) -> bool:
    """True when the fact holds a structure of this reader for its current content."""
    return stored_structure(fact) is not None


def structure_of(fact: Fact, read: FactStructure | None = None) -> FactStructure:
    """The fact's structure: its writer's triple where given, the rest read from its content.

    ``read``: the reading of the fact's current content when the caller has it already
    (:func:`reading_of`). Without it, a structure stored in the fact by an earlier run is used as
    it is (it is that reading: same reader version, same content), else the content is read.
    """
    if read is None:
        stored = stored_structure(fact)
        if stored is not None:
            return stored
        read = read_structure(fact.content)
    if fact.subject and fact.predicate and fact.object:
        predicate, negated = canonical_polarity(
            normalize_predicate(fact.predicate) or fact.predicate,
            fact.metadata.get("negated") is True,
        )
        obj = " ".join(_content_stems([t.casefold() for t in _TOKEN.findall(fact.object)]))
        subject = " ".join(fact.subject.casefold().split())
        claim = None
        if predicate in _CLAIM_PREDICATES and obj:
            claim = (subject, f"not {predicate}" if negated or read.negated else predicate, obj)
        return FactStructure(
            subject=subject,
            predicate=predicate,
            object=obj,
            negated=negated or read.negated,
            tense=read.tense,
            values=read.values,
            names=read.names,
            words=read.words,
            source="triple",
            phrase=None,
            sequence=read.sequence,
            claim=claim,
        )
    return read


def stored_structure(fact: Fact) -> FactStructure | None:
    """The structure an earlier run kept in the fact, when it is this reader's for this content."""
    annotations = fact.metadata.get("consolidation")
    if isinstance(annotations, dict):
        return _from_json(annotations.get(STRUCTURE_KEY), fact.content)
    return None
