"""Ranking: the pure fusion functions, and what they do to ContextEngine.search."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sagewai.context._query import analyse_query
from sagewai.context._ranking import (
    RankedCandidate,
    SearchConfig,
    convex_fusion,
    date_matches,
    fuse,
    later_values_first,
    limit_per_message,
    neighbour_key,
    neighbour_wanted,
    normalised_dense,
    normalised_keyword,
    rrf_fusion,
    speaker_matches,
    standardised,
    time_matches,
)
from sagewai.core._records import Fact, FactType, Provenance, ScoreParts, SearchResult
from tests.helpers import memory_engine

NOW = datetime(2026, 1, 1, tzinfo=UTC)
PLAIN = SearchConfig(
    speaker_bonus=0, time_bonus=0, neighbour_weight=0, recency_weight=0, strength_weight=0
)


def fact(
    fact_id: str,
    content: str = "something",
    *,
    session: str | None = None,
    turn: int | None = None,
    speaker: str | None = None,
    fact_type: FactType = FactType.GENERAL,
) -> Fact:
    source = Provenance(session_id=session, turn_index=turn, speaker=speaker)
    return Fact(
        id=fact_id,
        project_id="p",
        content=content,
        fact_type=fact_type,
        sources=(source,),
        created_at=NOW,
    )


def order(ranked: list[RankedCandidate]) -> list[str]:
    return [candidate.fact.id for candidate in ranked]


# ------------------------------------------------------------------ normalisation and fusion


def test_normalised_dense_is_min_max_over_the_pool_and_clips_extras() -> None:
    scores = normalised_dense([("a", 0.9), ("b", 0.7), ("c", 0.5)], {"d": 0.1, "e": 0.8})
    assert scores == pytest.approx({"a": 1.0, "b": 0.5, "c": 0.0, "d": 0.0, "e": 0.75})


def test_normalised_dense_without_spread_gives_every_hit_full_marks() -> None:
    assert normalised_dense([("a", 0.3), ("b", 0.3)]) == {"a": 1.0, "b": 1.0}
    assert normalised_dense([], {"x": 0.5}) == {"x": 0.0}


def test_normalised_keyword_divides_by_the_best_and_floors_at_zero() -> None:
    assert normalised_keyword([("a", 8.0), ("b", 2.0), ("c", -1.0)]) == {
        "a": 1.0,
        "b": 0.25,
        "c": 0.0,
    }
    assert normalised_keyword([("a", 0.0)]) == {"a": 0.0}


def test_convex_fusion_weights_and_missing_scores() -> None:
    config = SearchConfig(dense_weight=1, keyword_weight=3)
    fused = convex_fusion({"a": 1.0, "b": 0.2}, {"b": 1.0}, config)
    assert fused == pytest.approx({"a": 0.25, "b": 0.8})


def test_rrf_fusion_gives_one_to_the_top_of_both_lists() -> None:
    fused = rrf_fusion(["a", "b"], ["a", "c"], SearchConfig(dense_weight=1, keyword_weight=1))
    assert fused["a"] == pytest.approx(1.0)
    assert fused["b"] == pytest.approx(fused["c"])
    assert fused["b"] < fused["a"]


def test_convex_keeps_a_dominant_score_that_rrf_flattens() -> None:
    # "kw" is the keyword index's only strong hit; "both" is a marginal hit of both lists.
    facts = {i: fact(i) for i in ("kw", "both", "d1", "d2", "d3")}
    dense = [("d1", 0.90), ("both", 0.70), ("d2", 0.68), ("kw", 0.20), ("d3", 0.10)]
    keyword = [("kw", 10.0), ("both", 0.1)]
    equal = PLAIN.model_copy(update={"dense_weight": 1.0, "keyword_weight": 1.0})
    convex = fuse(facts, dense, keyword, config=equal, now=NOW)
    rrf = fuse(facts, dense, keyword, config=equal.model_copy(update={"fusion": "rrf"}), now=NOW)
    assert order(convex)[0] == "kw"
    assert order(rrf)[0] == "both"


def test_fuse_drops_ids_without_a_fact_and_breaks_ties_by_id() -> None:
    facts = {"b": fact("b"), "a": fact("a")}
    ranked = fuse(facts, [("b", 0.5), ("a", 0.5), ("gone", 0.9)], [], config=PLAIN, now=NOW)
    assert order(ranked) == ["a", "b"]


def test_fuse_gives_each_candidate_the_parts_of_its_score() -> None:
    facts = {"a": fact("a"), "b": fact("b"), "c": fact("c")}
    config = PLAIN.model_copy(update={"graph_weight": 0.5})
    ranked = fuse(
        facts,
        [("a", 0.9), ("b", 0.5)],
        [("b", 4.0), ("c", 1.0)],
        config=config,
        now=NOW,
        bonus={"c": 0.2},
    )
    parts = {candidate.fact.id: candidate.parts for candidate in ranked}
    # dense min-max over the pool (0.9 -> 1, 0.5 -> 0), keyword over the best (4 -> 1);
    # fusion 0.4 * dense + 0.6 * keyword.
    assert [parts[i].fusion for i in "abc"] == pytest.approx([0.4, 0.6, 0.15])
    assert parts["a"] == ScoreParts(
        dense=0.9, dense_rank=0, fusion=parts["a"].fusion, recency=1.0, strength=1.0
    )
    assert parts["b"] == ScoreParts(
        dense=0.5,
        keyword=4.0,
        dense_rank=1,
        keyword_rank=0,
        fusion=parts["b"].fusion,
        recency=1.0,
        strength=1.0,
    )
    assert parts["c"].keyword_rank == 1
    assert parts["c"].graph == pytest.approx(0.1)
    assert parts["c"].dense is None
    assert RankedCandidate(facts["a"], 0.5).parts == ScoreParts()  # nothing scored it


def test_scores_stay_within_zero_and_one() -> None:
    facts = {
        "a": fact("a", "Alice went there yesterday", session="s", turn=1, speaker="Alice"),
        "b": fact("b", "Alice said so last week", session="s", turn=2, speaker="Alice"),
    }
    config = SearchConfig(speaker_bonus=1, time_bonus=1, neighbour_weight=1)
    ranked = fuse(
        facts,
        [("a", 0.9), ("b", 0.8)],
        [("a", 3.0), ("b", 3.0)],
        config=config,
        now=NOW,
        bonus={"a": 0.5},
        query=analyse_query("When did Alice go?"),
    )
    assert all(0.0 <= candidate.score <= 1.0 for candidate in ranked)


# ------------------------------------------------------------------ speaker and time


def test_speaker_matches_speaker_or_subject_words() -> None:
    spoken = fact("a", speaker="Caroline Smith")
    assert speaker_matches(spoken, ["caroline"])
    assert not speaker_matches(spoken, ["melanie"])
    assert not speaker_matches(spoken, [])
    about = Fact(project_id="p", content="likes tea", subject="Melanie")
    assert speaker_matches(about, ["melanie"])


def test_speaker_bonus_lifts_the_named_speakers_fact() -> None:
    facts = {"mel": fact("mel", speaker="Melanie"), "car": fact("car", speaker="Caroline")}
    dense = [("car", 0.8), ("mel", 0.8)]
    query = analyse_query("What does Melanie paint?")
    without = fuse(facts, dense, [], config=PLAIN, now=NOW, query=query)
    with_bonus = fuse(
        facts,
        dense,
        [],
        config=PLAIN.model_copy(update={"speaker_bonus": 0.1}),
        now=NOW,
        query=query,
    )
    assert order(without) == ["car", "mel"]
    assert order(with_bonus) == ["mel", "car"]


def test_time_bonus_only_for_temporal_questions() -> None:
    facts = {"a": fact("a", "I like it"), "b": fact("b", "I did it yesterday")}
    dense = [("a", 0.8), ("b", 0.8)]
    config = PLAIN.model_copy(update={"time_bonus": 0.1})
    when = fuse(facts, dense, [], config=config, now=NOW, query=analyse_query("When was it?"))
    what = fuse(facts, dense, [], config=config, now=NOW, query=analyse_query("What was it?"))
    assert order(when) == ["b", "a"]
    assert order(what) == ["a", "b"]


def test_date_bonus_lifts_records_said_or_placed_on_the_named_date() -> None:
    said = fact("said", "I am off to dinner with friends")
    said = said.model_copy(
        update={"sources": (Provenance(timestamp=datetime(2023, 7, 8, tzinfo=UTC)),)}
    )
    placed = fact("placed", "Maria went camping last weekend (2023-07-01/2023-07-02)")
    other = fact("other", "Maria went hiking last weekend (2023-05-13/2023-05-14)")
    filler = fact("filler", "the weather was fine")
    facts = {f.id: f for f in (said, placed, other, filler)}
    query = analyse_query("What did Maria do on 7 July, 2023?")
    assert date_matches(said, query.dates)
    assert not date_matches(placed, query.dates)  # six days before: outside three days' slack
    assert not date_matches(other, query.dates)
    dense = [("other", 0.82), ("placed", 0.81), ("said", 0.8), ("filler", 0.3)]
    config = PLAIN.model_copy(update={"date_bonus": 0.2})
    assert order(fuse(facts, dense, [], config=config, now=NOW, query=query))[0] == "said"
    flat = PLAIN.model_copy(update={"date_bonus": 0.0})
    assert order(fuse(facts, dense, [], config=flat, now=NOW, query=query))[0] == "other"


def test_time_matches_events_and_time_expressions() -> None:
    assert time_matches(fact("a", "a party", fact_type=FactType.EVENT))
    assert time_matches(fact("b", "we met in March"))
    assert not time_matches(fact("c", "we met"))


# ------------------------------------------------------------------ neighbours


def test_neighbour_key_and_wanted_positions() -> None:
    seed = fact("a", session="s1", turn=4)
    assert neighbour_key(seed) == ("s1", 4)
    assert neighbour_key(fact("b")) is None
    assert neighbour_wanted([seed, fact("b")], 1) == {"s1": {3, 4, 5}}


def test_a_turn_next_to_the_best_hit_is_lent_relevance() -> None:
    facts = {
        "hit": fact("hit", session="s", turn=5),
        "next": fact("next", session="s", turn=6),
        "far": fact("far", session="s", turn=9),
        "other": fact("other", session="t", turn=6),
        "weak": fact("weak", session="u", turn=0),
    }
    dense = [("hit", 0.9), ("weak", 0.3), ("next", 0.1), ("far", 0.1), ("other", 0.1)]
    config = PLAIN.model_copy(update={"neighbour_weight": 0.5, "neighbour_window": 2})
    ranked = fuse(facts, dense, [], config=config, now=NOW)
    assert order(ranked)[:2] == ["hit", "next"]
    by_id = {candidate.fact.id: candidate for candidate in ranked}
    assert by_id["far"].score == by_id["other"].score == 0.0
    without = fuse(facts, dense, [], config=PLAIN, now=NOW)
    assert order(without)[:2] == ["hit", "weak"]


def test_standardised_scores_favour_the_list_whose_best_hit_stands_out() -> None:
    peaked = standardised([("a", 9.0), ("b", 1.0), ("c", 1.0), ("d", 1.0)], 3.0)
    flat = standardised([("a", 1.0), ("b", 0.9), ("c", 0.8), ("d", 0.7)], 3.0)
    assert peaked["a"] > flat["a"]
    assert peaked["b"] == 0.0
    assert all(0.0 <= v <= 1.0 for v in [*peaked.values(), *flat.values()])
    assert standardised([("a", 0.5)], 3.0, {"x": 0.9}) == {"a": 1.0, "x": 0.0}


def test_zscore_fusion_lets_the_confident_list_lead() -> None:
    facts = {i: fact(i) for i in ("kw", "dn", "x1", "x2", "x3")}
    # The keyword list is flat (no hit stands out); the dense list has one clear winner.
    keyword = [("kw", 1.0), ("x1", 0.98), ("x2", 0.97), ("x3", 0.96)]
    dense = [("dn", 0.9), ("kw", 0.3), ("x1", 0.29), ("x2", 0.28), ("x3", 0.27)]
    equal = PLAIN.model_copy(update={"dense_weight": 1.0, "keyword_weight": 1.0})
    assert order(fuse(facts, dense, keyword, config=equal, now=NOW))[0] == "kw"
    zscore = equal.model_copy(update={"fusion": "zscore"})
    assert order(fuse(facts, dense, keyword, config=zscore, now=NOW))[0] == "dn"


def test_neighbour_chars_shrinks_what_a_long_record_takes_from_its_neighbours() -> None:
    facts = {
        "hit": fact("hit", session="s", turn=5),
        "short": fact("short", "yes, last Friday", session="s", turn=6),
        "long": fact("long", "word " * 400, session="s", turn=4),
    }
    dense = [("hit", 0.9), ("short", 0.1), ("long", 0.1)]
    lending = PLAIN.model_copy(update={"neighbour_weight": 0.5, "neighbour_chars": 0})
    by_id = {c.fact.id: c for c in fuse(facts, dense, [], config=lending, now=NOW)}
    assert by_id["short"].score == pytest.approx(by_id["long"].score)
    scaled = lending.model_copy(update={"neighbour_chars": 500})
    by_id = {c.fact.id: c for c in fuse(facts, dense, [], config=scaled, now=NOW)}
    assert by_id["long"].score == pytest.approx(by_id["short"].score * 500 / 2000)


def test_extra_dense_candidates_are_scored_on_the_pool_scale() -> None:
    facts = {"a": fact("a"), "b": fact("b"), "x": fact("x")}
    ranked = fuse(
        facts, [("a", 0.8), ("b", 0.4)], [], config=PLAIN, now=NOW, extra_dense={"x": 0.6}
    )
    by_id = {candidate.fact.id: candidate for candidate in ranked}
    assert by_id["x"].parts.fusion == pytest.approx(0.5 * PLAIN.dense_weight / 1.0)
    assert by_id["x"].parts.dense_rank is None


# ------------------------------------------------------------------ through the engine


def _turns(n: int) -> list[dict[str, object]]:
    fillers = [
        "the weather was grey and windy",
        "traffic on the bridge was slow",
        "my laptop battery died again",
        "the printer jammed twice",
        "coffee machine is broken",
        "we watched a quiz show",
        "the train was late",
        "I repainted the fence",
        "the cat knocked over a vase",
        "my phone screen cracked",
    ]
    items: list[dict[str, object]] = []
    for turn in range(n):
        content = fillers[turn % len(fillers)]
        if turn == 5:
            content = "Alice adopted a rescue greyhound named Biscuit"
        if turn == 6:
            content = "Yes, that happened on a sunny afternoon"
        items.append(
            {
                "content": content,
                "source": Provenance(session_id="s1", turn_index=turn, speaker="Alice"),
            }
        )
    return items


def turn_of(result: SearchResult) -> int:
    index = result.fact.sources[0].turn_index
    assert index is not None
    return index


async def test_search_fetches_a_neighbour_outside_both_candidate_pools() -> None:
    async with memory_engine() as ctx:
        await ctx.add_many(_turns(10))
        narrow = SearchConfig(candidates=1, neighbour_window=1, neighbour_weight=0.5)
        # top_k=3 makes each pool 3 deep: turn 5 and two fillers, never the reply (turn 6).
        off = narrow.model_copy(update={"neighbour_weight": 0.0})
        alone = await ctx.search("rescue greyhound Biscuit", top_k=3, search_config=off)
        turns = [turn_of(r) for r in alone]
        assert turns[0] == 5
        assert 6 not in turns
        found = await ctx.search("rescue greyhound Biscuit", top_k=3, search_config=narrow)
        turns = [turn_of(r) for r in found]
        assert turns[0] == 5
        assert sorted(turns[1:]) == [4, 6]


async def test_neighbour_expansion_never_crosses_a_scope() -> None:
    async with memory_engine() as ctx:
        await ctx.add(
            "Alice adopted a rescue greyhound named Biscuit",
            source=Provenance(session_id="s1", turn_index=5),
        )
        await ctx.add(
            "bob's private reply to that",
            user_id="bob",
            source=Provenance(session_id="s1", turn_index=6),
        )
        config = SearchConfig(candidates=1, neighbour_window=1)
        found = await ctx.search("rescue greyhound Biscuit", top_k=5, search_config=config)
        assert [r.fact.content for r in found] == ["Alice adopted a rescue greyhound named Biscuit"]


async def test_search_strips_question_words_on_the_keyword_side() -> None:
    async with memory_engine() as ctx:
        await ctx.add("what did you do and when did you do it")
        await ctx.add("Melanie painted a sunrise over the lake")
        config = SearchConfig(neighbour_weight=0, dense_weight=0, keyword_weight=1)
        found = await ctx.search("What did Melanie paint?", top_k=1, search_config=config)
        assert found[0].fact.content == "Melanie painted a sunrise over the lake"
        found = await ctx.search(
            "What did Melanie paint?",
            top_k=1,
            search_config=config.model_copy(update={"strip_stopwords": False}),
        )
        assert found[0].fact.content == "what did you do and when did you do it"


async def test_min_score_applies_to_the_zero_to_one_scores() -> None:
    async with memory_engine() as ctx:
        await ctx.add("Alice prefers green tea")
        await ctx.add("The deploy runs on Fridays")
        everything = await ctx.search("green tea", top_k=5)
        assert all(0.0 <= r.score <= 1.0 for r in everything)
        assert await ctx.search("green tea", top_k=5, min_score=1.01) == []


def test_limit_per_message_keeps_the_best_of_each_message() -> None:
    def sourced(fact_id: str, message: str | None) -> Fact:
        return Fact(
            id=fact_id,
            project_id="p",
            content=fact_id,
            sources=(Provenance(session_id="s", message_id=message),),
        )

    facts = {
        "a1": sourced("a1", "m1"),
        "a2": sourced("a2", "m1"),
        "b1": sourced("b1", "m2"),
        "free": sourced("free", None),
    }
    dense = [("a1", 0.9), ("a2", 0.8), ("free", 0.7), ("b1", 0.6)]
    ranked = fuse(facts, dense, [], config=PLAIN, now=NOW)
    assert order(limit_per_message(ranked, 1)) == ["a1", "free", "b1"]
    assert order(limit_per_message(ranked, 0)) == ["a1", "a2", "free", "b1"]
    assert order(limit_per_message(ranked, 2)) == ["a1", "a2", "free", "b1"]


async def test_search_limits_results_per_source_message() -> None:
    async with memory_engine() as ctx:
        source = Provenance(session_id="s1", message_id="m1")
        await ctx.add("Alice moved to Lisbon", source=source)
        await ctx.add("Alice works at a bakery in Lisbon", source=source)
        await ctx.add("Bob visited Lisbon", source=Provenance(session_id="s1", message_id="m2"))
        ungrouped = SearchConfig(group_by_source=False)
        every = await ctx.search("Lisbon", top_k=3, search_config=ungrouped)
        assert len(every) == 3
        one_each = await ctx.search(
            "Lisbon", top_k=3, search_config=ungrouped.model_copy(update={"max_per_message": 1})
        )
        assert sorted(r.fact.sources[0].message_id or "" for r in one_each) == ["m1", "m2"]


async def test_search_fuses_the_records_of_one_source_into_one_result() -> None:
    async with memory_engine() as ctx:
        source = Provenance(session_id="s1", message_id="m1")
        message = await ctx.add("Alice: I moved to Lisbon", source=source, kind="message")
        fact = await ctx.add("Alice moved to Lisbon", source=source)
        other = await ctx.add(
            "Bob visited Lisbon", source=Provenance(session_id="s1", message_id="m2")
        )
        loose = await ctx.add("Lisbon is the capital of Portugal")
        results = await ctx.search("Lisbon", top_k=3)
        assert len(results) == 3
        by_source = {(r.fact.id, *(f.id for f in r.related)) for r in results}
        assert {frozenset(ids) for ids in by_source} == {
            frozenset({message.id, fact.id}),
            frozenset({other.id}),
            frozenset({loose.id}),
        }
        grouped = next(r for r in results if r.related)
        assert 0.0 <= grouped.score <= 1.0
        assert len(grouped.related) == 1
        # Same message id in another session is another source.
        await ctx.add("Carol flew to Lisbon", source=Provenance(session_id="s2", message_id="m1"))
        results = await ctx.search("Lisbon", top_k=10)
        assert len(results) == 4


def test_graph_bonus_is_scaled_by_graph_weight() -> None:
    facts = {"hit": fact("hit"), "linked": fact("linked")}
    dense = [("hit", 0.9), ("linked", 0.5)]
    bonus = {"linked": 1.0}
    light = fuse(facts, dense, [], config=PLAIN, now=NOW, bonus=bonus)
    heavy = fuse(
        facts,
        dense,
        [],
        config=PLAIN.model_copy(update={"graph_weight": 1.0}),
        now=NOW,
        bonus=bonus,
    )
    assert order(light) == ["hit", "linked"]
    assert order(heavy) == ["linked", "hit"]
    assert {c.fact.id: c.parts.graph for c in light}["linked"] == pytest.approx(0.1)


def _said(i: str, text: str, day: int, score: float, turn: int | None = None) -> RankedCandidate:
    at = datetime(2024, 4, day, tzinfo=UTC)
    sources = []
    if turn is not None:
        sources = [Provenance(session_id="s", turn_index=turn, timestamp=at)]
    return RankedCandidate(
        Fact(id=i, project_id="p", content=text, created_at=at, sources=sources), score
    )


TERMS = ["monthly", "budget", "books"]


def test_a_later_value_ranks_above_every_earlier_one_and_keeps_the_scores() -> None:
    ranked = [
        _said("v1", "My monthly budget for books is $50.", 1, 0.9),
        _said("v2", "I raised the monthly budget for books to $60.", 5, 0.7),
        _said("other", "I read 3 books in May.", 6, 0.6),
        _said("v3", "Books budget is now $75 a month.", 9, 0.5),
    ]
    out = later_values_first(ranked, TERMS, window=10)
    assert [c.fact.id for c in out] == ["v3", "v2", "v1", "other"]
    assert [round(c.score, 6) for c in out] == [0.9, 0.7, 0.6, 0.5]


def test_records_without_a_value_or_off_the_subject_keep_their_place() -> None:
    ranked = [
        _said("plain", "I love my monthly budget for books.", 1, 0.9),  # no value
        _said("off", "I ran 5 km.", 9, 0.8),  # a value, another subject
        _said("v1", "My monthly budget for books is $50.", 2, 0.7),
    ]
    assert later_values_first(ranked, TERMS, window=10) == ranked


def test_the_order_of_turns_decides_within_one_day() -> None:
    ranked = [
        _said("early", "Monthly budget for books: $50.", 1, 0.9, turn=3),
        _said("late", "The monthly budget for books went up to $70.", 1, 0.8, turn=40),
    ]
    assert [c.fact.id for c in later_values_first(ranked, TERMS, window=10)] == ["late", "early"]


def test_nothing_moves_from_below_the_window() -> None:
    ranked = [
        _said("v1", "My monthly budget for books is $50.", 1, 0.9),
        _said("x", "Unrelated.", 2, 0.8),
        _said("v2", "The monthly budget for books is $60 now.", 5, 0.7),
    ]
    assert later_values_first(ranked, TERMS, window=2) == ranked
    assert later_values_first(ranked, ["budget"], window=10) == ranked  # one term: no subject
