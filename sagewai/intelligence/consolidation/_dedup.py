"""Near-duplicate rules: which facts may merge, which one survives, and what it keeps.

Pure functions, so the rules can be read and tested without a store. The consolidator finds the
candidates (nearest neighbours in the vector store at or above the similarity threshold) and asks
these functions what to do with them.

The rules, in order of strictness:

* Only facts of the same kind, scope and a compatible type merge (``general`` is compatible with
  every type), and never two facts about different subjects ("Alice prefers window seats" and
  "Bob prefers window seats" are close vectors about two people).
* Two facts carrying different structured statements (subject, predicate, object, negation) never
  merge, and neither do a statement and its negation: "Alice likes tea" and "Alice does not like
  tea" are close vectors and opposite facts. Nor do two texts that differ by a word and its
  opposite ("enabled" / "disabled", "to" / "from").
* Exact values are sacred: two facts merge only when one's exact values (declared in
  ``Fact.exact_values`` or written in the content) include all of the other's, and the survivor is
  the one holding the most. "deploy to 10.0.0.1" and "deploy to 10.0.0.2" never merge.
* Two facts whose structure (read from their words when their writer gave no triple, see
  :mod:`.structure`) differs never merge: "Ben likes ramen" and "Ben uses ramen" are two facts
  at a cosine of 0.93 (:func:`~.equivalence.structural_refusal`).
* A pair a user kept apart (by reverting its merge) never merges again.

Which rule merged a pair is recorded (:func:`merge_rule`): ``dedup.cosine`` when the vectors
are at or above the similarity threshold (and nothing above refuses), ``dedup.structure`` when
the two facts state the same subject, predicate and object (or the same words in another
order) at a lower cosine.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from sagewai.core._claims import Claim, negation_pair
from sagewai.core._records import Fact, FactType
from sagewai.intelligence.consolidation._annotations import base_strength, keep_apart
from sagewai.intelligence.consolidation._equivalence import same_statement, structural_refusal
from sagewai.intelligence.consolidation._selection import scope_key_of
from sagewai.intelligence.consolidation._structure import (
    FactStructure,
    Reading,
    exact_values_of,
    structure_of,
)

__all__ = [
    "DEDUP_COSINE_RULE",
    "DEDUP_STRUCTURE_RULE",
    "DedupProfile",
    "canonical_key",
    "merge_refusal",
    "merge_rule",
    "opposite_wording",
    "reinforced_strength",
    "touched_at",
    "union",
]

_T = TypeVar("_T")

DEDUP_COSINE_RULE = "dedup.cosine"
"""The audit rule of a merge at or above the similarity threshold, structure agreeing."""
DEDUP_STRUCTURE_RULE = "dedup.structure"
"""The audit rule of a merge of two facts stating the same subject, predicate and object."""


@dataclass(frozen=True, slots=True)
class DedupProfile:
    """What dedup compares about a fact, computed once per fact version.

    Attributes:
        fact: The fact.
        values: Its exact values: ``Fact.exact_values`` plus those written in its content.
        claim: Its normalised structured statement, when it has one (the same normalisation
            write-time reconciliation uses).
        structure: What it states (see :func:`~.structure.structure_of`).
        kept_apart: Ids it must not merge with.
    """

    fact: Fact
    values: frozenset[str]
    claim: Claim | None
    structure: FactStructure
    kept_apart: frozenset[str] = field(default=frozenset())

    @classmethod
    def of(cls, fact: Fact, reading: Reading | None = None) -> DedupProfile:
        """Profile ``fact`` (``reading``: its content's, when the caller read it already)."""
        read, written = (None, exact_values_of(fact.content)) if reading is None else reading
        return cls(
            fact=fact,
            values=frozenset(fact.exact_values) | frozenset(written),
            claim=Claim.of(fact),
            structure=structure_of(fact, read),
            kept_apart=keep_apart(fact),
        )

    @property
    def id(self) -> str:
        """The fact's id."""
        return self.fact.id


# Words whose swap turns a sentence into its opposite while its embedding barely moves
# ("logging is enabled" / "logging is disabled" have a cosine of 0.95 with MiniLM).
_OPPOSITES: frozenset[frozenset[str]] = frozenset(
    frozenset(pair)
    for pair in (
        ("enabled", "disabled"),
        ("enable", "disable"),
        ("on", "off"),
        ("to", "from"),
        ("before", "after"),
        ("allow", "deny"),
        ("allowed", "denied"),
        ("accept", "reject"),
        ("accepted", "rejected"),
        ("increase", "decrease"),
        ("include", "exclude"),
        ("included", "excluded"),
        ("minimum", "maximum"),
        ("min", "max"),
        ("open", "closed"),
        ("public", "private"),
        ("frontend", "backend"),
        ("input", "output"),
        ("upload", "download"),
        ("start", "stop"),
        ("started", "stopped"),
        ("always", "never"),
        ("true", "false"),
        ("add", "remove"),
        ("added", "removed"),
        ("success", "failure"),
        ("pass", "fail"),
        ("passed", "failed"),
        ("buy", "sell"),
        ("import", "export"),
        ("internal", "external"),
        ("read", "write"),
        ("inbound", "outbound"),
        ("above", "below"),
        ("more", "less"),
        ("higher", "lower"),
        ("earlier", "later"),
        ("first", "last"),
        ("up", "down"),
        ("in", "out"),
        ("online", "offline"),
        ("valid", "invalid"),
        ("available", "unavailable"),
        ("supported", "unsupported"),
        ("required", "optional"),
        ("like", "dislike"),
        ("likes", "dislikes"),
        ("love", "hate"),
        ("loves", "hates"),
        ("win", "lose"),
    )
)
_OPPOSITE_OF: dict[str, frozenset[str]] = {
    word: frozenset(other for pair in _OPPOSITES if word in pair for other in pair - {word})
    for pair in _OPPOSITES
    for word in pair
}
_OPPOSITE_WORDS = frozenset(_OPPOSITE_OF)
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


@functools.lru_cache(maxsize=65_536)
def _words(text: str) -> frozenset[str]:
    return frozenset(w.casefold() for w in _WORD.findall(text))


def opposite_wording(a: str, b: str) -> bool:
    """True when the texts differ by a word and its opposite ("enabled" / "disabled").

    Example:
        >>> opposite_wording("Logging is enabled in prod", "Logging is disabled in prod")
        True
    """
    words_a = _words(a)
    if _OPPOSITE_WORDS.isdisjoint(words_a):
        return False  # most texts hold no word of a pair
    words_b = _words(b)
    only_a, only_b = words_a - words_b, words_b - words_a
    return any(not _OPPOSITE_OF[x].isdisjoint(only_b) for x in only_a & _OPPOSITE_WORDS)


def _loose(text: str) -> str:
    return " ".join(text.casefold().split())


def _types_compatible(a: FactType, b: FactType) -> bool:
    return a == b or FactType.GENERAL in (a, b)


def merge_refusal(a: DedupProfile, b: DedupProfile) -> str | None:
    """Why ``a`` and ``b`` must not merge, or ``None`` when they may (similarity aside).

    Symmetric: ``merge_refusal(a, b)`` refuses exactly when ``merge_refusal(b, a)`` does.

    Example:
        >>> from sagewai import Fact
        >>> one = DedupProfile.of(Fact(project_id="p", content="deploy to 10.0.0.1"))
        >>> two = DedupProfile.of(Fact(project_id="p", content="Deploy to 10.0.0.2"))
        >>> merge_refusal(one, two)
        "different exact values: '10.0.0.1' vs '10.0.0.2'"
    """
    fa, fb = a.fact, b.fact
    if fa.id == fb.id:
        return "the same fact"
    if fa.kind != fb.kind:
        return "different kinds"
    if scope_key_of(fa) != scope_key_of(fb):
        return "different scopes"
    if not _types_compatible(fa.fact_type, fb.fact_type):
        return f"incompatible types {fa.fact_type.value} and {fb.fact_type.value}"
    if fa.id in b.kept_apart or fb.id in a.kept_apart:
        return "kept apart by a user"
    if fa.subject and fb.subject and _loose(fa.subject) != _loose(fb.subject):
        return "different subjects"
    if a.claim is not None and b.claim is not None:
        if a.claim != b.claim:
            return "different statements"
    elif negation_pair(fa.content, fb.content):
        return "one states the negation of the other"
    if opposite_wording(fa.content, fb.content):
        return "one says the opposite of the other"
    if not (a.values <= b.values or b.values <= a.values):
        only_a = ", ".join(repr(v) for v in sorted(a.values - b.values))
        only_b = ", ".join(repr(v) for v in sorted(b.values - a.values))
        return f"different exact values: {only_a} vs {only_b}"
    writer_triples = a.claim is not None and b.claim is not None
    return structural_refusal(a.structure, b.structure, writer_triples=writer_triples)


def _plainly_different(a: DedupProfile, b: DedupProfile) -> bool:
    """The two refusals most neighbours meet, checked first because they are cheap: exact values
    that differ, or a name or place only one of them mentions. Each implies a refusal by
    :func:`merge_refusal` (whichever reason it would give), so the answer is unchanged."""
    if not (a.values <= b.values or b.values <= a.values):
        return True
    one, two = a.structure, b.structure
    return bool(one.names - two.words) or bool(two.names - one.words)


def merge_rule(
    a: DedupProfile, b: DedupProfile, similarity: float, *, threshold: float, floor: float
) -> str | None:
    """The rule under which ``a`` and ``b`` merge at ``similarity``, or ``None`` when they do not.

    Nothing may refuse the pair (:func:`merge_refusal`, structure included). Then
    ``dedup.cosine`` when the cosine reaches ``threshold``, and ``dedup.structure`` when it is
    below but at least ``floor`` and both state the same thing
    (:func:`~.equivalence.same_statement`).

    Example:
        >>> from sagewai import Fact
        >>> one = DedupProfile.of(Fact(project_id="p", content="Ben really likes ramen."))
        >>> two = DedupProfile.of(Fact(project_id="p", content="Ben likes ramen."))
        >>> merge_rule(one, two, 0.86, threshold=0.92, floor=0.75)
        'dedup.structure'
    """
    if similarity < floor or _plainly_different(a, b) or merge_refusal(a, b) is not None:
        return None
    if similarity >= threshold:
        return DEDUP_COSINE_RULE
    return DEDUP_STRUCTURE_RULE if same_statement(a.structure, b.structure) else None


def canonical_key(profile: DedupProfile) -> tuple[int, bool, bool, datetime, str]:
    """Sort key of the survivor of a merge: smallest wins.

    The fact holding the most exact values first (so none is lost), then one with a structured
    statement, then one with a specific type, then the oldest (a stable id that references and
    earlier runs keep pointing at), then the id to break ties.
    """
    fact = profile.fact
    return (
        -len(profile.values),
        profile.claim is None,
        fact.fact_type is FactType.GENERAL,
        fact.created_at,
        fact.id,
    )


def union(groups: Iterable[Iterable[_T]]) -> tuple[_T, ...]:
    """Items of every group, first occurrence kept, in order."""
    return tuple(dict.fromkeys(item for group in groups for item in group))


def touched_at(fact: Fact) -> datetime:
    """When a fact was last used or reinforced (its creation when never since)."""
    if fact.last_accessed_at is not None and fact.last_accessed_at > fact.created_at:
        return fact.last_accessed_at
    return fact.created_at


def reinforced_strength(facts: Sequence[Fact]) -> float:
    """The base strength of a canonical fact after absorbing duplicates.

    Each restatement is independent evidence, so strengths combine like probabilities
    (``1 - prod(1 - s)``, each capped at 1): two facts of strength 0.5 give 0.75, and a fact of
    strength 1 stays 1.

    Example:
        >>> from sagewai import Fact
        >>> round(reinforced_strength([Fact(project_id="p", content="x", strength=0.5),
        ...                            Fact(project_id="p", content="x", strength=0.5)]), 2)
        0.75
    """
    remaining = 1.0
    for fact in facts:
        remaining *= 1.0 - min(1.0, base_strength(fact))
    return round(1.0 - remaining, 6)
