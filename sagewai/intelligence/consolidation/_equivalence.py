"""Do two facts say the same thing? The structural half of the duplicate decision.

Pure functions over two :class:`~.structure.FactStructure` values. Cosine similarity finds the
candidates; these functions decide:

* :func:`structural_refusal` names a difference that makes two facts different facts however
  close their vectors: negation, a number, amount, date, version or unit, a name or a place, a
  tense that changes the claim ("moved to" / "is moving to"), and, where both statements were
  read, a different subject, predicate ("likes" / "uses") or object; without a statement, a
  sentence that differs from the other by one content word in the same place ("The team likes
  Kafka" / "The team uses Kafka").
* :func:`same_statement` is true when two facts state the same thing in other words: the same
  subject, predicate and object ("Ben really likes ramen" / "Ben likes ramen", "Ana is using Rust"
  / "Ana uses Rust"), the same vocabulary claim in another verb phrase ("Ana works at Acme" /
  "Ana is employed at Acme" / "Ana has a job at Acme", see
  :attr:`~.structure.FactStructure.claim`), or the same content words in another order or with a
  contraction. Such a pair merges below the cosine threshold (rule ``dedup.structure``).
"""

from __future__ import annotations

from sagewai.core._predicates import normalize_predicate
from sagewai.intelligence.consolidation._structure import (
    FUNCTION_WORDS,
    FactStructure,
    stem,
    tenses_compatible,
    vocabulary_predicate,
)

__all__ = ["same_statement", "structural_refusal"]


# Verbs that state the same thing of a stored record ("Backups are stored / kept in S3"): a
# short list, because a verb missing here only costs a merge, while a wrong entry would join
# two different facts. Keys are stems (see :func:`~.structure.stem`).
_SAME_VERB: dict[str, str] = {
    verb: group
    for group, verbs in {
        "stor": ("stor", "kept", "keep", "sav", "held", "hold"),
        "leav": ("leav", "depart"),
        "chang": ("chang", "switch"),
        "lik": ("lik", "lov", "enjoy", "likes"),
        "offer": ("offer", "provid", "availabl"),
        "nam": ("nam", "call"),
    }.items()
    for verb in verbs
}


_ORDERED = frozenset("over than instead vs versus rather before after to from into".split())  # noqa: SIM905
"""Words that make the order of an object matter ("tea over coffee" / "coffee over tea")."""
_LIGHT_VERBS = frozenset({"be", "owns", "ha", "get"})
"""Verbs that carry little of the claim ("is allergic" / "has an allergy"): when one of them
stands against another verb, the content words decide (a pure swap of the verb still refuses)."""


def _predicate_key(predicate: str | None) -> str | None:
    if predicate is None:
        return None
    key = stem(normalize_predicate(predicate) or predicate)
    return _SAME_VERB.get(key, key)


def _same_predicate(a: FactStructure, b: FactStructure) -> bool:
    """Same verb, or two verbs the extractor reads as one predicate ("moved to" / "lives in")."""
    if _predicate_key(a.predicate) == _predicate_key(b.predicate):
        return True
    if a.phrase is None or b.phrase is None:
        return False
    one, two = vocabulary_predicate(a.phrase), vocabulary_predicate(b.phrase)
    return one is not None and one == two  # "hates" is "likes" negated: not the same


def _listed(values: frozenset[str]) -> str:
    return ", ".join(repr(v) for v in sorted(values)) or "none"


def structural_refusal(
    a: FactStructure, b: FactStructure, *, writer_triples: bool = False
) -> str | None:
    """Why ``a`` and ``b`` are different facts, or ``None`` when their structure allows a merge.

    Symmetric. ``writer_triples`` says both triples were given by their writers (and already
    compared equal): the tense and statement checks are then left to those triples.

    Example:
        >>> from sagewai.intelligence.consolidation._structure import read_structure
        >>> likes, uses = read_structure("Ben likes ramen."), read_structure("Ben uses ramen.")
        >>> structural_refusal(likes, uses)
        "different predicates: 'likes' vs 'uses'"
    """
    if a.negated != b.negated:
        return "one states the negation of the other"
    if not (a.values <= b.values or b.values <= a.values):
        return f"different values: {_listed(a.values - b.values)} vs {_listed(b.values - a.values)}"
    names_a, names_b = a.names - b.words, b.names - a.words
    if names_a or names_b:
        return f"different names or places: {_listed(names_a)} vs {_listed(names_b)}"
    if writer_triples:
        return None
    if not tenses_compatible(a.tense, b.tense):
        return f"different tense: {a.tense} vs {b.tense}"
    if a.claim is not None and b.claim is not None:
        if a.claim == b.claim:
            return None  # "works at Acme" / "is employed at Acme": one claim, other verbs
        (who, said, what), (other_who, other_said, other_what) = a.claim, b.claim
        if who == other_who and what == other_what:
            return f"different predicates: {said!r} vs {other_said!r}"  # "lives in" / "is from"
    one, two = a.statement, b.statement
    if one is not None and two is not None:
        same_verb = _same_predicate(a, b)
        if not same_verb and (one[1] in _LIGHT_VERBS or two[1] in _LIGHT_VERBS):
            # "is allergic to peanuts" / "has a peanut allergy": the claim is in the words,
            # but a pure swap of the verb ("is a teacher" / "has a teacher") still refuses.
            if one[2] == two[2] or _substitution(a.words, b.words) is not None:
                return f"different predicates: {one[1]!r} vs {two[1]!r}"
            return None
        if same_verb and one[1] == "be" and {one[0], one[2]} == {two[0], two[2]}:
            return None  # "Tom is Priya's manager" / "Priya's manager is Tom"
        if one[0] != two[0]:
            return f"different subjects: {one[0]!r} vs {two[0]!r}"
        if not same_verb:
            return f"different predicates: {one[1]!r} vs {two[1]!r}"
        if one[2] != two[2]:
            words_a, words_b = one[2].split(), two[2].split()
            swapped = _substitution(frozenset(words_a), frozenset(words_b))
            if swapped is not None:
                return f"different objects: {one[2]!r} vs {two[2]!r}"
            if sorted(words_a) == sorted(words_b) and _ORDERED.intersection(words_a):
                return f"the same words in another order: {one[2]!r} vs {two[2]!r}"
    swapped = _substitution(a.words, b.words)
    if swapped is not None:
        return f"one says {swapped[0]!r} where the other says {swapped[1]!r}"
    if (one is None) != (two is None) and not _roles_kept(a if one else b, b if one else a):
        return "the same words with the roles swapped"
    extra = _detail(a, b) or _detail(b, a)
    if extra is not None:
        return f"one adds {extra!r}"
    return None


def _roles_kept(read: FactStructure, other: FactStructure) -> bool:
    """Whether a sentence with no statement read keeps the roles of ``read``'s statement: the
    subject's first word before the object's first word ("ben nakamura had breakfast with alma"
    keeps "Ben Nakamura had breakfast with Alma."; "alma nakamura ... with ben" does not)."""
    assert read.subject is not None
    sequence = list(other.sequence)
    subject = next((stem(w) for w in read.subject.split() if w not in FUNCTION_WORDS), None)
    first_object = next((w for w in (read.object or "").split() if w not in FUNCTION_WORDS), None)
    if subject is None or first_object is None:
        return True
    if subject not in sequence or first_object not in sequence:
        return True  # the words differ, which the other rules judge
    return sequence.index(subject) < sequence.index(first_object)


def _detail(a: FactStructure, b: FactStructure) -> str | None:
    """A content word only ``a`` has ("likes pizza at home" / "likes pizza"), other than the
    words of its exact values (a fact holding more exact values absorbs the other)."""
    written = " ".join(a.values).replace("-", "")
    for word in sorted(a.words - b.words):
        if word in FUNCTION_WORDS or word in written:
            continue
        if any(_variants(word, other) for other in b.words - a.words):
            continue
        return word
    return None


def _variants(x: str, y: str) -> bool:
    """Two forms of one word ("allergic" / "allergy") or a word and its abbreviation ("db")."""
    short, long = sorted((x, y), key=len)
    if len(short) >= 4 and long.startswith(short[: max(4, len(short) - 2)]):
        return True
    if (  # "colour" / "color"
        len(long) >= 6
        and len(long) == len(short) + 1
        and any(long[:k] + long[k + 1 :] == short for k in range(len(long)))
    ):
        return True
    if 2 <= len(short) <= 4 and short.isalpha() and short[0] == long[0]:
        letters = iter(long)
        if all(ch in letters for ch in short):
            return True
    return _SAME_VERB.get(x, x) == _SAME_VERB.get(y, y)


def _substitution(a: frozenset[str], b: frozenset[str]) -> tuple[str, str] | None:
    """A content word of one that the other replaces with another word, if any.

    Function words (prepositions, quantifiers, possessives) are left out: "from Cairo" / "out
    of Cairo" and "every editor" / "all editors" say the same. A word found on one side only
    (more detail) is no substitution.
    """
    only_a = sorted(w for w in a - b if w not in FUNCTION_WORDS)
    only_b = sorted(w for w in b - a if w not in FUNCTION_WORDS)
    rest_b = list(only_b)
    unmatched: list[str] = []
    for x in only_a:
        match = next((y for y in rest_b if _variants(x, y)), None)
        if match is None:
            unmatched.append(x)
        else:
            rest_b.remove(match)
    if unmatched and rest_b:
        return unmatched[0], rest_b[0]
    return None


def same_statement(a: FactStructure, b: FactStructure) -> bool:
    """True when ``a`` and ``b`` state the same thing in other words (no refusal assumed checked).

    Example:
        >>> from sagewai.intelligence.consolidation._structure import read_structure
        >>> same_statement(read_structure("Eli keeps recommending chess."),
        ...                read_structure("Eli recommends chess."))
        True
    """
    if a.negated != b.negated or a.values != b.values or not tenses_compatible(a.tense, b.tense):
        return False
    if a.claim is not None and a.claim == b.claim:
        return True
    one, two = a.statement, b.statement
    if one is not None and two is not None:
        if not _same_predicate(a, b):
            return False
        if one[1] == "be" and {one[0], one[2]} == {two[0], two[2]}:
            return True
        return one[0] == two[0] and one[2] == two[2]
    return bool(a.words) and a.words == b.words
