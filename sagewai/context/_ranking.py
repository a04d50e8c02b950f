"""Pure ranking functions: how dense, keyword, speaker, time, neighbour, recency and strength
signals become one score.

Kept free of I/O so retrieval can be tuned and tested without a backend. The engine gathers ranked
candidate lists from the stores and hands them here; every decision about order is made here.

Why score-aware fusion: reciprocal-rank fusion (RRF) throws the scores away and keeps the ranks,
so a fact that one retriever finds far better than anything else counts no more than a marginal
first place. On the LoCoMo benchmark a convex combination of the two normalised scores finds the
evidence of a question markedly more often than RRF (``docs/benchmarks-locomo.md`` holds the
figures). RRF stays available as ``fusion="rrf"``, and ``fusion="zscore"`` standardises each
list over its candidates (a list whose best hit stands out leads the fusion).

Why ``neighbour_chars``: the weights that suit short chat turns (where a turn often needs the one
before it) lose to dense search alone on long messages, mostly because neighbours of the evidence
(long replies) were lent its relevance and crowded other sources out of the top k. Scaling the
share a record takes by its length keeps the neighbour gain on chat and removes the loss on long
messages.

Why neighbours: in a conversation the answer to a question is often spread over a turn and the
one right after it ("Did you go?" / "Yes, last Friday"). A fact whose neighbouring turn scores high
gets a share of that score, so both turns come back together.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from datetime import date, datetime
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from sagewai.context._query import DateRange, QueryAnalysis, mentions_time
from sagewai.core._records import Fact, FactKind, FactType, ScoreParts, assembled
from sagewai.core._text import keyword_terms

__all__ = [
    "CONTEXT_MARK",
    "NO_PARTS",
    "REPLY_MARK",
    "NeighbourKey",
    "PartValues",
    "RankedCandidate",
    "SearchConfig",
    "SourceGroup",
    "answers_first",
    "convex_fusion",
    "date_matches",
    "fuse",
    "group_by_source",
    "is_context_record",
    "is_reply_record",
    "later_first",
    "later_values_first",
    "limit_per_message",
    "message_text",
    "neighbour_key",
    "neighbour_wanted",
    "normal_form",
    "normalised_dense",
    "normalised_keyword",
    "prefer_current",
    "recency_score",
    "record_days",
    "rrf_fusion",
    "said_at",
    "speaker_matches",
    "standardised",
    "time_matches",
]

CONTEXT_MARK = "context_chars"
"""Metadata key of a context record: how many leading characters of its content come from the
turn before the message (the message itself follows, verbatim)."""

REPLY_MARK = "reply"
"""Metadata key the bridge sets (to ``True``) on its records of an assistant's message: the
verbatim reply, its context record and the facts drawn from it. A memory of a user is asked
mostly about the user's own words; :attr:`SearchConfig.reply_weight` scales these records'
scores."""

NeighbourKey = tuple[str, int]
"""Where a fact sits in a conversation: ``(session_id, turn_index)`` of its first such source."""


class SearchConfig(BaseModel):
    """Tuning knobs of hybrid search. The defaults hold on short two-person chat (LoCoMo) and on
    long user-assistant chat (BEAM) alike.

    The score of a candidate is built in three steps:

    1. ``fusion`` of the dense and keyword evidence, in [0, 1]: ``convex`` blends the min-max
       normalised cosine and the max-normalised keyword score with ``dense_weight`` and
       ``keyword_weight``; ``rrf`` sums weighted reciprocal ranks (``rrf_k``), normalised by the
       best possible sum.
    2. ``relevance = fusion + speaker + time + graph``: ``speaker_bonus`` when a name in the query
       is the fact's speaker or subject, ``time_bonus`` when the query asks "when" and the fact
       mentions a time (or is an event), and the graph expansion bonus times ``graph_weight``.
    3. ``total = relevance + neighbour_weight * best relevance of a neighbouring turn`` (same
       session, at most ``neighbour_window`` turns away, among the ``neighbour_seeds`` best
       candidates), divided by its largest possible value so it lies in [0, 1], then
       ``score = (1 - recency_weight - strength_weight) * total + recency_weight * recency
       + strength_weight * strength``.

    Chosen on two tuning splits, LoCoMo conv-26 and BEAM conversations 1-10 (the setting with the
    best mean R@10 of those that beat plain BM25 and plain dense search on both), and checked on
    LoCoMo conv-30 / conv-41 and BEAM 11-20 (``docs/benchmarks-beam.md``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    candidates: int = Field(default=60, ge=1, le=2000)
    """How many candidates each retriever contributes (at least ``top_k``). Also the list the
    dense scores are min-max normalised over: larger pools flatten the dense scores."""
    fusion: Literal["convex", "rrf", "zscore"] = "convex"
    """``convex``: weighted sum of normalised scores (the default, measurably better);
    ``rrf``: reciprocal-rank fusion, which ignores how far apart the scores are."""
    dense_weight: float = Field(default=0.4, ge=0)
    """Weight of the dense (embedding) evidence."""
    keyword_weight: float = Field(default=0.6, ge=0)
    """Weight of the keyword (BM25) evidence."""
    zscore_scale: float = Field(default=3.0, gt=0)
    """``fusion="zscore"`` only: how many standard deviations above its pool's mean a score must
    stand to count fully (1.0); scores at or below the mean count 0."""
    rrf_k: float = Field(default=60.0, gt=0)
    """The RRF constant (``fusion="rrf"`` only): larger values flatten the first ranks' lead."""
    strip_stopwords: bool = True
    """Search the keyword index with the query's content words only (see
    :func:`sagewai.context._query.keyword_query`); the dense side always sees the full query."""
    speaker_bonus: float = Field(default=0.1, ge=0, le=1)
    """Added to the relevance of a fact spoken by, or about, someone the query names."""
    time_bonus: float = Field(default=0.05, ge=0, le=1)
    """Added, for "when" questions, to facts that mention a time or are events."""
    date_bonus: float = Field(default=0.2, ge=0, le=1)
    """Added, for a query that names a date ("on 7 July, 2023", "in May 2023"), to records said
    on or placed at that date (:func:`date_matches`; a day matches three days either side). The
    date's numbers are left out of the keyword side (see
    :func:`~sagewai.context._query.keyword_query`)."""
    neighbour_weight: float = Field(default=0.5, ge=0, le=1)
    """Share of the best neighbouring turn's relevance a fact receives; 0 turns expansion off."""
    neighbour_window: int = Field(default=2, ge=0, le=10)
    """How many turns away, in the same session, a neighbour may be (0: the same turn only)."""
    neighbour_chars: int = Field(default=600, ge=0)
    """A record longer than this many characters takes a proportionally smaller share from its
    neighbours (``neighbour_chars / len(content)``); 0 gives every record the full share. A short
    chat turn ("Yes, last Friday") needs the turn before it to make sense; a long message says
    what it means by itself, and lending to it only crowds out other sources."""
    neighbour_seeds: int = Field(default=20, ge=1, le=500)
    """How many of the best candidates lend relevance to their neighbours (and have their
    neighbours fetched by the engine when they were not candidates already)."""
    recency_weight: float = Field(default=0.02, ge=0, le=0.5)
    recency_halflife_days: float = Field(default=90.0, gt=0)
    strength_weight: float = Field(default=0.02, ge=0, le=0.5)
    graph_weight: float = Field(default=0.1, ge=0, le=2)
    """Scale of the graph expansion bonus (``search(..., graph_hops=1 or 2)``). On LoCoMo 0.1
    helps a little and 0.2 or more hurts: the bonus then outweighs the query's own evidence."""
    max_per_message: int = Field(default=0, ge=0, le=100)
    """At most this many results that came from the same source message (0: no limit). A
    message's raw turn and the facts extracted from it say much the same; a limit spends the
    ``top_k`` slots on more of the conversation instead."""
    piece_weight: float = Field(default=0.25, ge=0, le=1)
    """How far a long record's best piece lifts its dense score above its own (whole-record)
    vector: 1 scores it by its best piece, 0 by its own vector only. On BEAM (tuning split) 1
    ranked long assistant replies above the user's evidence (R@10 0.573), 0.25 kept the gain of
    finding a part of a long message without that bias (0.589; 0 gave 0.591)."""
    group_by_source: bool = True
    """Fuse the records of one source (a message and the facts drawn from it, matched on
    ``sources[0]``'s ``session_id`` and ``message_id``) into one result, so ``top_k`` results are
    ``top_k`` distinct sources and a fact adds recall instead of taking a slot from another
    message. Records without a message source stand alone."""
    related_weight: float = Field(default=0.0, ge=0, le=1)
    """How much the other records of a source raise its score (see :func:`group_by_source`);
    0: a source scores as its best record."""
    context_weight: float = Field(default=0.8, ge=0, le=1)
    """Scale of a context record's score (the bridge's record of a short message with the end of
    the turn before it, see :func:`is_context_record`). Below 1, a source found only through the
    words of the turn before it ranks below one its own words match; 0 leaves such sources to
    the neighbour bonus."""
    reply_weight: float = Field(default=0.5, ge=0, le=1)
    """Scale of the score of a record of an assistant's reply (:func:`is_reply_record`: the
    bridge marks them; records stored without the mark are never scaled) when the query does not
    ask what the assistant said (:func:`~sagewai.context._query.asks_about_replies`). A
    memory of a user is asked mostly about the user's own words: on BEAM 4% of the evidence of
    such questions is an assistant's reply, against about half the messages. Chosen on BEAM
    conversations 1 and 2 (R@10 0.717 at 1.0, 0.741 at 0.7, 0.754 at 0.5 and 0.4, 0.741 at
    0.3); 1 turns it off."""
    prefer_current: bool = True
    """For a question about the present, rank what replaced a changed claim above it (see
    :func:`prefer_current`); ``False`` ranks them as their evidence says (the results still
    carry their standing)."""
    changed_weight: float = Field(default=0.5, ge=0, le=1)
    """Scale of the score of a record whose claim changed since (a message that said "I live in
    Berlin" after the move to Munich; see :func:`prefer_current`) when the query asks about the
    present; what replaced the claim takes the record's place, just above it. A record the
    query quotes (see ``changed_quoted``) is not scaled."""
    changed_quoted: float = Field(default=0.95, ge=0, le=1)
    """Cosine to the query from which the query quotes a changed record (its own words asked
    again: "Eve moved to Kyoto and now prefers sourdough; ticket W1-00027 tracks it."). Such a
    record is what the user is looking for: it keeps its score and ranks right below what
    replaced it, shown as changed, instead of giving way by ``changed_weight`` to records the
    query matches far less (at 0.5 an exact quote fell below five unrelated facts). A question
    about the present ("Where does Eve live?") is far below this cosine."""
    later_values: bool = True
    """For a question about a value as it stands now ("How many commits have been merged?"),
    of two records near the top that speak of the query's subject and each state a value (a
    number, a date), the one said later ranks first (see :func:`later_values_first`): the last
    statement of a value is its current one. ``False`` ranks them as their evidence says."""
    chatter_floor: float = Field(default=0.25, ge=0, le=1)
    """A message that holds no statement (a question, small talk: see
    :func:`~sagewai.context._query.is_chatter`) and echoes the query (see ``chatter_echo``)
    ranks below every record that scores at least this share of its score
    (:func:`answers_first`): asking again "where do I live?" finds the answer first, not the
    earlier question. 0 leaves such messages where they score."""
    chatter_echo: float = Field(default=0.8, ge=0, le=1)
    """Cosine to the query from which a question or small talk echoes it (the same question
    asked again, or the same words); only such messages give way to the records that answer.
    A question that merely touches the topic keeps its place: in a conversation between people
    a question is often part of the evidence (lowering it cost 0.004 of R@10 on LoCoMo dev)."""
    track_access: bool = True
    """Record reads in ``last_accessed_at`` (reads keep a fact from decaying)."""


PartValues = tuple[float | None, float | None, int | None, int | None, float, float, float, float]
"""The values of a :class:`~sagewai.core._records.ScoreParts`, in its fields' order."""

NO_PARTS: PartValues = (None, None, None, None, 0.0, 0.0, 0.0, 0.0)
"""The values of ``ScoreParts()``: a candidate no retriever scored."""

_PART_FIELDS = tuple(ScoreParts.model_fields)


class RankedCandidate(NamedTuple):
    """A fact with its final score, the values of its parts, and the relevance before
    neighbours.

    A named tuple, not a frozen dataclass: a search makes about a hundred of them, and a frozen
    dataclass pays an ``object.__setattr__`` per field to be made. For the same reason the
    parts are kept as plain values and made into a :class:`ScoreParts` only when asked for
    (:attr:`parts`): a search shows ten of its hundred candidates.
    """

    fact: Fact
    score: float
    part_values: PartValues = NO_PARTS
    relevance: float = 0.0
    """Fusion plus speaker, time and graph bonuses (what neighbours lend each other)."""

    @property
    def parts(self) -> ScoreParts:
        """How :attr:`score` was made."""
        return assembled(ScoreParts, dict(zip(_PART_FIELDS, self.part_values, strict=True)))


def is_context_record(fact: Fact) -> bool:
    """True for a context record: a message with the end of the turn before it (the bridge's
    :attr:`~sagewai.context.bridge.MemoryBridge.context_records`), not the message verbatim.

    Example:
        >>> from sagewai import FactKind
        >>> record = Fact(project_id="p", content="Q? Yes.", kind=FactKind.MESSAGE,
        ...               metadata={CONTEXT_MARK: 3})
        >>> is_context_record(record), is_context_record(record.model_copy(update={"metadata": {}}))
        (True, False)
    """
    return fact.kind is FactKind.MESSAGE and CONTEXT_MARK in fact.metadata


def is_reply_record(fact: Fact) -> bool:
    """True for the bridge's record of an assistant's message (metadata :data:`REPLY_MARK`).

    Example:
        >>> record = Fact(project_id="p", content="Here is how.", metadata={REPLY_MARK: True})
        >>> is_reply_record(record), is_reply_record(record.model_copy(update={"metadata": {}}))
        (True, False)
    """
    return fact.metadata.get(REPLY_MARK) is True


def recency_score(fact: Fact, now: datetime, halflife_days: float) -> float:
    """1.0 for a fact valid from now, halving every ``halflife_days`` of age."""
    age_days = max(0.0, (now - fact.effective_from).total_seconds() / 86_400.0)
    return math.pow(0.5, age_days / halflife_days)


def normalised_dense(
    dense: Sequence[tuple[str, float]], extra: Mapping[str, float] | None = None
) -> dict[str, float]:
    """Min-max normalise cosines over the dense candidate list.

    The pool's worst cosine maps to 0 and its best to 1: cosine values of one model cluster in a
    narrow band that differs from query to query, and only the spread inside the band says how much
    better one candidate is than another. ``extra`` cosines (neighbours fetched outside the pool)
    use the same scale, clipped to [0, 1].

    Example:
        >>> normalised_dense([("a", 0.75), ("b", 0.5), ("c", 0.25)], {"d": 0.0})
        {'a': 1.0, 'b': 0.5, 'c': 0.0, 'd': 0.0}
    """
    extra = extra or {}
    if not dense:
        return dict.fromkeys(extra, 0.0)
    scores = [score for _, score in dense]
    low, high = min(scores), max(scores)
    spread = high - low
    out: dict[str, float] = {}
    for fact_id, score in [*dense, *extra.items()]:
        # With a single pool score, the pool's hits are the best and anything below the worst.
        value = (score - low) / spread if spread > 0 else float(score >= high)
        out.setdefault(fact_id, min(1.0, max(0.0, value)))
    return out


def normalised_keyword(keyword: Sequence[tuple[str, float]]) -> dict[str, float]:
    """Divide keyword scores by the best one (non-positive scores count as 0).

    BM25 scores have no fixed scale (they grow with query length and rare terms), but their ratios
    to the best hit do; the best hit maps to 1.

    Example:
        >>> normalised_keyword([("a", 4.0), ("b", 1.0)])
        {'a': 1.0, 'b': 0.25}
    """
    best = max((score for _, score in keyword), default=0.0)
    if best <= 0:
        return {fact_id: 0.0 for fact_id, _ in keyword}
    out: dict[str, float] = {}
    for fact_id, score in keyword:
        out.setdefault(fact_id, max(0.0, score) / best)
    return out


def standardised(
    scores: Sequence[tuple[str, float]], scale: float, extra: Mapping[str, float] | None = None
) -> dict[str, float]:
    """How far each score stands above its list's mean, in ``scale`` standard deviations.

    ``(score - mean) / (scale * std)`` clipped to [0, 1]. Unlike min-max or max normalisation,
    a list whose best hit stands out (a rare word matched, a near-paraphrase) gives it a high
    value, while a flat list (nothing stands out) gives every hit a low one: the list that is sure
    of itself leads the fusion, whichever retriever it is. ``extra`` scores use the same scale.

    Example:
        >>> standardised([("a", 10.0), ("b", 1.0), ("c", 1.0), ("d", 0.0)], 1.5)
        {'a': 1.0, 'b': 0.0, 'c': 0.0, 'd': 0.0}
    """
    extra = extra or {}
    values = [score for _, score in scores]
    if len(values) < 2:
        return {fact_id: 1.0 for fact_id, _ in scores} | dict.fromkeys(extra, 0.0)
    mean = sum(values) / len(values)
    spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    out: dict[str, float] = {}
    for fact_id, score in [*scores, *extra.items()]:
        value = (score - mean) / (scale * spread) if spread > 0 else 0.0
        out.setdefault(fact_id, min(1.0, max(0.0, value)))
    return out


def convex_fusion(
    dense: Mapping[str, float], keyword: Mapping[str, float], config: SearchConfig
) -> dict[str, float]:
    """Weighted mean of normalised dense and keyword scores (a missing score counts as 0)."""
    total = config.dense_weight + config.keyword_weight
    if total <= 0:
        return dict.fromkeys([*dense, *keyword], 0.0)
    return {
        fact_id: (
            config.dense_weight * dense.get(fact_id, 0.0)
            + config.keyword_weight * keyword.get(fact_id, 0.0)
        )
        / total
        for fact_id in dict.fromkeys([*dense, *keyword])
    }


def rrf_fusion(
    dense_ids: Sequence[str], keyword_ids: Sequence[str], config: SearchConfig
) -> dict[str, float]:
    """Weighted reciprocal-rank fusion, divided by the best possible sum so it lies in [0, 1]."""
    best = (config.dense_weight + config.keyword_weight) / (config.rrf_k + 1)
    fused: dict[str, float] = {}
    for weight, ids in ((config.dense_weight, dense_ids), (config.keyword_weight, keyword_ids)):
        for rank, fact_id in enumerate(ids):
            fused[fact_id] = fused.get(fact_id, 0.0) + weight / (config.rrf_k + 1 + rank)
    return {fact_id: (value / best if best > 0 else 0.0) for fact_id, value in fused.items()}


def speaker_matches(fact: Fact, names: Iterable[str]) -> bool:
    """True when a name the query mentions is a word of the fact's speaker or subject.

    Example:
        >>> from sagewai import Provenance
        >>> fact = Fact(project_id="p", content="I paint", sources=(Provenance(speaker="Mel"),))
        >>> speaker_matches(fact, ["mel"]), speaker_matches(fact, ["caroline"])
        (True, False)
    """
    return _SpeakerMatch(names)(fact)


class _SpeakerMatch:
    """:func:`speaker_matches` for one query's names over many facts: each distinct speaker or
    subject is split into words once (a search's candidates share a handful of speakers)."""

    __slots__ = ("_known", "_wanted")

    def __init__(self, names: Iterable[str]) -> None:
        self._wanted = frozenset(names)
        self._known: dict[str, bool] = {}

    def _named(self, who: str) -> bool:
        named = self._known.get(who)
        if named is None:
            named = self._known[who] = not self._wanted.isdisjoint(keyword_terms(who))
        return named

    def __call__(self, fact: Fact) -> bool:
        if not self._wanted:
            return False
        for source in fact.sources:
            if source.speaker and self._named(source.speaker):
                return True
        return self._named(fact.subject) if fact.subject else False


def time_matches(fact: Fact) -> bool:
    """True when a fact places something in time: an event, or a text with a time expression."""
    return fact.fact_type is FactType.EVENT or mentions_time(fact.content)


_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


def record_days(fact: Fact) -> list[date]:
    """The days a record is said on or placed at: its sources' times and the ISO dates its text
    holds (the bridge writes "last night (2023-05-03)")."""
    days = [source.timestamp.date() for source in fact.sources if source.timestamp is not None]
    for year, month, day in _ISO_DAY.findall(fact.content):
        try:
            days.append(date(int(year), int(month), int(day)))
        except ValueError:
            continue
    return days


def date_matches(fact: Fact, ranges: Sequence[DateRange]) -> bool:
    """True when the record is said on, or placed at, a day of one of ``ranges``."""
    return any(first <= day <= last for day in record_days(fact) for first, last in ranges)


def neighbour_key(fact: Fact) -> NeighbourKey | None:
    """``(session_id, turn_index)`` of the fact's first source that has both, else ``None``."""
    for source in fact.sources:
        if source.session_id is not None and source.turn_index is not None:
            return (source.session_id, source.turn_index)
    return None


def neighbour_wanted(seeds: Iterable[Fact], window: int) -> dict[str, set[int]]:
    """The turns, per session, whose facts can take a share of the seeds' relevance.

    The engine fetches facts at these positions that are not candidates yet.
    """
    wanted: dict[str, set[int]] = {}
    for fact in seeds:
        key = neighbour_key(fact)
        if key is None:
            continue
        session_id, turn = key
        wanted.setdefault(session_id, set()).update(range(turn - window, turn + window + 1))
    return wanted


def _neighbour_lend(
    relevance: Mapping[str, float],
    keys: Mapping[str, NeighbourKey],
    seeds: Sequence[str],
    window: int,
) -> dict[str, float]:
    """For each fact, the best relevance among seed facts at most ``window`` turns away."""
    by_position: dict[NeighbourKey, list[str]] = {}
    for fact_id, key in keys.items():
        by_position.setdefault(key, []).append(fact_id)
    lent: dict[str, float] = {}
    for seed in seeds:
        seed_key = keys.get(seed)
        if seed_key is None:
            continue
        session_id, turn = seed_key
        for position in range(turn - window, turn + window + 1):
            for fact_id in by_position.get((session_id, position), ()):
                if fact_id != seed and relevance[seed] > lent.get(fact_id, 0.0):
                    lent[fact_id] = relevance[seed]
    return lent


def fuse(
    facts: Mapping[str, Fact],
    dense: Sequence[tuple[str, float]],
    keyword: Sequence[tuple[str, float]],
    *,
    config: SearchConfig,
    now: datetime,
    bonus: Mapping[str, float] | None = None,
    query: QueryAnalysis | None = None,
    extra_dense: Mapping[str, float] | None = None,
) -> list[RankedCandidate]:
    """Fuse ranked candidate lists into one ranking.

    Args:
        facts: The hydrated facts by id; ids missing here (deleted, filtered out) are dropped.
        dense: ``(id, cosine)`` best first: the dense candidate pool.
        keyword: ``(id, keyword score)`` best first.
        config: Weights.
        now: The reference time for recency.
        bonus: Extra relevance per id from graph expansion, on the scale of the fusion (0..1).
        query: The analysed query; without it, no speaker or time bonus is given.
        extra_dense: ``id -> cosine`` of facts fetched outside the pool (neighbours of the best
            candidates); they are scored on the pool's dense scale and take no keyword score.

    Returns:
        Candidates sorted by score, best first; ties broken by id for determinism.
    """
    bonus = {i: config.graph_weight * b for i, b in (bonus or {}).items()}
    extra_dense = {i: s for i, s in (extra_dense or {}).items() if i in facts}
    dense = [(i, s) for i, s in dense if i in facts]
    keyword = [(i, s) for i, s in keyword if i in facts]
    dense_rank = {fact_id: rank for rank, (fact_id, _) in enumerate(dense)}
    keyword_rank = {fact_id: rank for rank, (fact_id, _) in enumerate(keyword)}
    dense_score = {**extra_dense, **dict(dense)}
    keyword_score = dict(keyword)

    if config.fusion == "rrf":
        fused = rrf_fusion([i for i, _ in dense], [i for i, _ in keyword], config)
    elif config.fusion == "zscore":
        fused = convex_fusion(
            standardised(dense, config.zscore_scale, extra_dense),
            standardised(keyword, config.zscore_scale),
            config,
        )
    else:
        fused = convex_fusion(
            normalised_dense(dense, extra_dense), normalised_keyword(keyword), config
        )
    ids = dict.fromkeys([*fused, *extra_dense, *(i for i in bonus if i in facts)])
    speaking = _SpeakerMatch(query.names if query is not None else ())
    temporal = query is not None and query.temporal
    dates = query.dates if query is not None else ()
    date_bonus = config.date_bonus if dates else 0.0
    reply_weight = 1.0 if query is None or query.asks_replies else config.reply_weight
    relevance: dict[str, float] = {}
    for fact_id in ids:
        fact = facts[fact_id]
        relevance[fact_id] = (
            fused.get(fact_id, 0.0)
            + (config.speaker_bonus if speaking(fact) else 0.0)
            + (config.time_bonus if temporal and time_matches(fact) else 0.0)
            + (date_bonus if date_bonus and date_matches(fact, dates) else 0.0)
            + bonus.get(fact_id, 0.0)
        )

    lent: dict[str, float] = {}
    if config.neighbour_weight > 0:
        keys = {i: k for i in ids if (k := neighbour_key(facts[i])) is not None}
        seeds = sorted(relevance, key=lambda i: (-relevance[i], i))[: config.neighbour_seeds]
        lent = _neighbour_lend(relevance, keys, seeds, config.neighbour_window)

    top_relevance = (
        1.0 + config.speaker_bonus + config.time_bonus + date_bonus + max(bonus.values(), default=0)
    )
    ceiling = top_relevance * (1.0 + config.neighbour_weight)
    blend = 1.0 - config.recency_weight - config.strength_weight
    # The settings read once: the loop below runs for every candidate (about a hundred).
    neighbour_weight, neighbour_chars = config.neighbour_weight, config.neighbour_chars
    recency_weight, strength_weight = config.recency_weight, config.strength_weight
    context_weight, halflife_days = config.context_weight, config.recency_halflife_days
    ranked: list[RankedCandidate] = []
    for fact_id in ids:
        fact = facts[fact_id]
        share = neighbour_weight * lent.get(fact_id, 0.0)
        if neighbour_chars and len(fact.content) > neighbour_chars:
            share *= neighbour_chars / len(fact.content)
        total = (relevance[fact_id] + share) / ceiling
        recency = recency_score(fact, now, halflife_days)
        strength = min(1.0, fact.strength)
        score = blend * total + recency_weight * recency + strength_weight * strength
        if is_context_record(fact):
            score *= context_weight
        if reply_weight != 1.0 and is_reply_record(fact):
            score *= reply_weight
        # ScoreParts' values, in its fields' order; the record is made for the results only.
        values: PartValues = (
            dense_score.get(fact_id),
            keyword_score.get(fact_id),
            dense_rank.get(fact_id),
            keyword_rank.get(fact_id),
            fused.get(fact_id, 0.0),
            recency,
            strength,
            bonus.get(fact_id, 0.0),
        )
        ranked.append(RankedCandidate(fact, score, values, relevance[fact_id]))
    ranked.sort(key=lambda candidate: (-candidate.score, candidate.fact.id))
    return ranked


def _message_key(fact: Fact) -> tuple[str | None, str] | None:
    for source in fact.sources:
        if source.message_id is not None:
            return (source.session_id, source.message_id)
    return None


def limit_per_message(
    ranked: Sequence[RankedCandidate], max_per_message: int
) -> list[RankedCandidate]:
    """Keep at most ``max_per_message`` candidates per source message, best first.

    Candidates without a source message are always kept; ``0`` keeps everything.
    """
    if max_per_message <= 0:
        return list(ranked)
    seen: dict[tuple[str | None, str], int] = {}
    kept: list[RankedCandidate] = []
    for candidate in ranked:
        key = _message_key(candidate.fact)
        if key is not None:
            if seen.get(key, 0) >= max_per_message:
                continue
            seen[key] = seen.get(key, 0) + 1
        kept.append(candidate)
    return kept


SourceKey = tuple[str | None, str]


def source_key(fact: Fact) -> SourceKey | None:
    """``(session_id, message_id)`` of the fact's first source, ``None`` when it names no message.

    A message record and the facts drawn from it share this key (the records' contract).

    Example:
        >>> from sagewai import Provenance
        >>> fact = Fact(project_id="p", content="x",
        ...             sources=(Provenance(session_id="s1", message_id="m7"),))
        >>> source_key(fact)
        ('s1', 'm7')
    """
    if not fact.sources or fact.sources[0].message_id is None:
        return None
    return (fact.sources[0].session_id, fact.sources[0].message_id)


class SourceGroup(NamedTuple):
    """The records of one source as one result: the best record, the others, the group's score."""

    score: float
    best: RankedCandidate
    others: tuple[RankedCandidate, ...]


_TIE = 1e-5
"""Scores closer than this are a tie (float32 cosines of one text embedded alone and in a
batch differ by about 1e-7)."""


def group_by_source(
    ranked: Sequence[RankedCandidate], related_weight: float = 0.0
) -> list[SourceGroup]:
    """Group ranked candidates by source (:func:`source_key`), best group first.

    A group scores as its best record, raised by the others as independent evidence:
    ``1 - (1 - best) * prod(1 - related_weight * other)`` (0 keeps the best record's score). A
    source that both a message and a fact drawn from it match is then more likely the answer
    than one matched by a single record, and scores stay in [0, 1].

    Example:
        >>> from sagewai import Provenance
        >>> def c(i: str, m: str | None, score: float) -> RankedCandidate:
        ...     src = (Provenance(session_id="s", message_id=m),) if m else ()
        ...     return RankedCandidate(Fact(id=i, project_id="p", content=i, sources=src), score)
        >>> groups = group_by_source([c("a", "m1", 0.9), c("b", None, 0.8), c("c", "m1", 0.7)])
        >>> [(g.best.fact.id, [o.fact.id for o in g.others]) for g in groups]
        [('a', ['c']), ('b', [])]
        >>> [round(g.score, 2) for g in group_by_source(
        ...     [c("a", "m1", 0.5), c("b", None, 0.6), c("c", "m1", 0.4)], related_weight=0.5)]
        [0.6, 0.6]
    """
    members: dict[SourceKey | str, list[RankedCandidate]] = {}
    for candidate in ranked:
        key: SourceKey | str = source_key(candidate.fact) or candidate.fact.id
        members.setdefault(key, []).append(candidate)
    groups: list[SourceGroup] = []
    for candidates in members.values():
        top = candidates[0]
        missing = 1.0 - top.score
        if len(candidates) == 1:  # most sources: one record, nothing to choose
            groups.append(SourceGroup(1.0 - missing, top, ()))
            continue
        for other in candidates[1:]:
            missing *= 1.0 - related_weight * max(0.0, other.score)
        # The record shown is the message or a fact, not the context record that found them;
        # of two that score the same, the message (the words as said): a fact that restates
        # its message shares the message's vector, so the two tie, exactly or (the message
        # embedded in a batch, the fact alone) to the last digits of a float32 cosine.
        shown = [c for c in candidates if not is_context_record(c.fact)] or [top]
        high = max(c.score for c in shown)
        tied = [c for c in shown if c.score >= high - _TIE]
        best = min(tied, key=lambda c: (c.fact.kind is not FactKind.MESSAGE, -c.score))
        others = tuple(c for c in candidates if c is not best)
        groups.append(SourceGroup(1.0 - missing, best, others))
    groups.sort(key=lambda g: (-g.score, g.best.fact.id))
    return groups


def message_text(fact: Fact) -> str:
    """What a message record says itself: a context record's own message, without the end of
    the turn before it; any other record's content.

    Example:
        >>> from sagewai import FactKind
        >>> record = Fact(project_id="p", content="Q?\\nYes.", kind=FactKind.MESSAGE,
        ...               metadata={CONTEXT_MARK: 3})
        >>> message_text(record)
        'Yes.'
    """
    if is_context_record(fact):
        mark = fact.metadata.get(CONTEXT_MARK)
        if isinstance(mark, int) and 0 <= mark <= len(fact.content):
            return fact.content[mark:]
    return fact.content


def prefer_current(
    ranked: Sequence[RankedCandidate],
    successors: Mapping[str, Sequence[Fact]],
    *,
    changed_weight: float,
    quoted_from: float = 1.0,
) -> list[RankedCandidate]:
    """The ranking for a question about the present: a changed claim gives way to its successor.

    ``successors`` maps a candidate whose claim (the one the query asks) changed since to the
    facts that hold now in its place. The candidate's score is scaled by ``changed_weight``; each
    successor ranks at least where the candidate ranked (just above it), joining the candidates
    if it was not one: the question the old record answered is answered by what replaced it.
    A candidate the query quotes (its dense cosine at least ``quoted_from``: the query is its
    own text) keeps its score: the user asks for that record, so it stays right below its
    successor instead of below records the query matches far less.

    Example:
        >>> berlin = Fact(id="berlin", project_id="p", content="I live in Berlin")
        >>> old = RankedCandidate(berlin, 0.6)
        >>> munich = Fact(id="munich", project_id="p", content="I moved to Munich")
        >>> new = RankedCandidate(munich, 0.3)
        >>> [(c.fact.id, round(c.score, 2)) for c in prefer_current(
        ...     [old, new], {"berlin": [munich]}, changed_weight=0.5)]
        [('munich', 0.6), ('berlin', 0.3)]
        >>> quoted = old._replace(part_values=(0.99, *NO_PARTS[1:]))  # asked in its own words
        >>> [(c.fact.id, round(c.score, 2)) for c in prefer_current(
        ...     [quoted, new], {"berlin": [munich]}, changed_weight=0.5, quoted_from=0.95)]
        [('munich', 0.6), ('berlin', 0.6)]
    """
    out = {candidate.fact.id: candidate for candidate in ranked}
    for candidate in ranked:
        replacing = successors.get(candidate.fact.id)
        if not replacing:
            continue
        dense = candidate.part_values[0]
        if dense is None or dense < quoted_from:
            out[candidate.fact.id] = candidate._replace(score=candidate.score * changed_weight)
        for fact in replacing:
            present = out.get(fact.id)
            if present is None or present.score <= candidate.score:
                out[fact.id] = RankedCandidate(
                    fact,
                    candidate.score + 1e-9,
                    present.part_values if present is not None else NO_PARTS,
                    max(candidate.relevance, present.relevance if present is not None else 0.0),
                )
    return sorted(out.values(), key=lambda c: (-c.score, c.fact.id))


_VALUE = re.compile(r"\d")
_CHANGE_CUE = re.compile(
    r"\b(?:now|new|updated?|changed?|moved|rescheduled|postponed|extended|increased"
    r"|decreased|raised|lowered|reduced|improved|reached|adjusted|revised|upgraded|switched)\b"
)
"""Words of a statement that changes a value (matched against lower-cased text)."""


def said_at(fact: Fact) -> tuple[datetime, datetime, int]:
    """When a record was said (its sources' latest time, else when it was stored), when it was
    stored, and its place in its conversation: the order of two statements of a value (the
    turns of one conversation often share a day, and the records of one batch a store time)."""
    times = [source.timestamp for source in fact.sources if source.timestamp is not None]
    turns = [source.turn_index for source in fact.sources if source.turn_index is not None]
    return (max(times) if times else fact.created_at, fact.created_at, max(turns, default=-1))


def later_values_first(
    ranked: Sequence[RankedCandidate], terms: Sequence[str], *, window: int
) -> list[RankedCandidate]:
    """The ranking for a question about a value now: a later statement of the value first.

    Among the first ``window`` candidates, a record that states a value (holds a digit) and
    speaks of the query's subject (holds at least a third of the query's content ``terms``, two
    at least; two are enough for a statement of a change: "new", "now", "moved", "extended" ...)
    ranks just above every such record said before it: "the commits merged have now
    reached 165" above "150 commits merged", whatever their scores. A record that states no
    value, or speaks of something else, keeps its place; so does the order below ``window``.

    Example:
        >>> from datetime import UTC, datetime
        >>> def c(i: str, text: str, day: int, score: float) -> RankedCandidate:
        ...     at = datetime(2024, 4, day, tzinfo=UTC)
        ...     return RankedCandidate(
        ...         Fact(id=i, project_id="p", content=text, created_at=at), score)
        >>> ranked = [
        ...     c("old", "My repo has 150 commits merged into main.", 1, 0.9),
        ...     c("tea", "I drink 2 cups of tea.", 3, 0.5),
        ...     c("new", "Merged commits on main have now reached 165.", 9, 0.4),
        ... ]
        >>> [x.fact.id for x in later_values_first(ranked, ["commits", "merged", "main"],
        ...                                        window=10)]
        ['new', 'old', 'tea']
    """
    stems = [re.compile(rf"\b{re.escape(t[: max(4, len(t) - 2)])}") for t in terms if len(t) > 2]
    need = max(2, math.ceil(len(stems) / 3))
    if len(stems) < 2 or len(ranked[:window]) < 2:
        return list(ranked)

    def states_value(candidate: RankedCandidate) -> bool:
        text = message_text(candidate.fact)
        if _VALUE.search(text) is None:
            return False
        low = text.lower()
        hits = sum(1 for stem in stems if stem.search(low))
        # A statement that says it changes something needs less of the query's words.
        return hits >= need or (hits >= 2 and _CHANGE_CUE.search(low) is not None)

    return later_first(ranked, states_value, window=window)


def later_first(
    ranked: Sequence[RankedCandidate],
    qualifies: Callable[[RankedCandidate], bool],
    *,
    window: int,
    moves: Callable[[RankedCandidate], bool] | None = None,
) -> list[RankedCandidate]:
    """Among the first ``window`` candidates, each one that ``qualifies`` (and ``moves``, when
    given) moves just above every qualifying one said before it; the others keep their order
    (what a statement moves above moves down one place with its neighbours, the other records
    of its message among them), and so does the order below ``window``. The places keep their
    scores: the records move between them.

    Keeping the others exactly in their places was tried: on BEAM knowledge updates it left
    the other records of a demoted message where they stood, so the message still ranked above
    its update (conversations 2 and 5 lost, 6 gained).

    Example:
        >>> from datetime import UTC, datetime
        >>> def c(i: str, day: int, score: float) -> RankedCandidate:
        ...     at = datetime(2024, 4, day, tzinfo=UTC)
        ...     return RankedCandidate(Fact(id=i, project_id="p", content=i, created_at=at), score)
        >>> ranked = [c("old", 1, 0.9), c("other", 3, 0.5), c("new", 9, 0.4)]
        >>> [x.fact.id for x in later_first(ranked, lambda x: x.fact.id != "other", window=3)]
        ['new', 'old', 'other']
    """
    head, tail = list(ranked[:window]), list(ranked[window:])
    valued = {c.fact.id: said_at(c.fact) for c in head if qualifies(c)}
    if len(valued) < 2:
        return list(ranked)
    movers = {c.fact.id for c in head if c.fact.id in valued and (moves is None or moves(c))}
    # Each move puts a later statement above an earlier one, never the reverse: it ends.
    moved = True
    while moved:
        moved = False
        for j, later in enumerate(head):
            when = valued.get(later.fact.id)
            if when is None or later.fact.id not in movers:
                continue
            for i in range(j):
                earlier = valued.get(head[i].fact.id)
                if earlier is not None and earlier < when:
                    head.insert(i, head.pop(j))
                    moved = True
                    break
            if moved:
                break
    # The places keep their scores, the records move between them (later steps sort by score).
    scores = sorted((c.score for c in head), reverse=True)
    size = len(head)
    moved_head = [c._replace(score=scores[k] + (size - k) * 1e-12) for k, c in enumerate(head)]
    return [*moved_head, *tail]


def answers_first(
    ranked: Sequence[RankedCandidate], chatter: AbstractSet[str], *, floor: float
) -> list[RankedCandidate]:
    """The ranking with messages that hold no statement below the records that answer.

    A ``chatter`` candidate (a question, small talk) is placed just below the weakest candidate
    that is not chatter and scores at least ``floor`` times the chatter's score; with none, it
    keeps its place.

    Example:
        >>> def c(i: str, score: float) -> RankedCandidate:
        ...     return RankedCandidate(Fact(id=i, project_id="p", content=i), score)
        >>> [x.fact.id for x in answers_first([c("q", 0.9), c("a", 0.4)], {"q"}, floor=0.25)]
        ['a', 'q']
        >>> [x.fact.id for x in answers_first([c("q", 0.9), c("a", 0.1)], {"q"}, floor=0.25)]
        ['q', 'a']
    """
    if not chatter or floor <= 0:
        return list(ranked)
    answers = sorted((c.score for c in ranked if c.fact.id not in chatter), reverse=True)
    out: list[RankedCandidate] = []
    for candidate in ranked:
        if candidate.fact.id in chatter:
            answering = [score for score in answers if score >= floor * candidate.score]
            if answering and answering[-1] <= candidate.score:
                candidate = candidate._replace(score=answering[-1] - 1e-9)
        out.append(candidate)
    out.sort(key=lambda c: (-c.score, c.fact.id))
    return out


def normal_form(text: str) -> str:
    """A text as compared for repeats: case, spacing and surrounding punctuation folded.

    Example:
        >>> normal_form("  The staging DB is db-7.internal:5432. ") == normal_form(
        ...     "the staging db is db-7.internal:5432")
        True
    """
    return " ".join(text.casefold().split()).strip(" .,;:!?\"'")
