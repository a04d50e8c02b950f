"""The bitmaps behind the SQL stores' in-memory copies of frequent words (shared by both)."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from sagewai.stores.base._word_bitmaps import (
    WordBits,
    capacity,
    holding_all,
    holding_any,
    keep_within,
)

facts = st.sets(st.integers(min_value=0, max_value=5_000), max_size=300)


def word(seqs: set[int]) -> WordBits:
    entry = WordBits(np.zeros(capacity(max(seqs, default=0)), dtype=np.uint8))
    entry.add(np.asarray(sorted(seqs), dtype=np.int64))
    return entry


@given(st.lists(facts, min_size=1, max_size=4))
def test_and_and_or_of_words_are_the_intersection_and_union(words: list[set[int]]) -> None:
    entries = [word(seqs) for seqs in words]
    every = holding_all(entries)
    assert every.dtype == np.int64
    assert every.tolist() == sorted(set.intersection(*words))
    assert holding_any(entries).tolist() == sorted(set.union(*words))


@given(facts, facts, st.booleans())
def test_a_words_list_follows_what_is_added_to_it(
    first: set[int], later: set[int], above: bool
) -> None:
    if above:  # a catch-up: every new fact comes after the listed ones
        later = {seq + 5_001 for seq in later}
    entry = word(first)
    assert entry.seqs.tolist() == sorted(first)  # listed, and kept
    entry.add(np.asarray(sorted(later - first, reverse=True), dtype=np.int64))
    assert entry.seqs.tolist() == sorted(first | later)
    assert entry.count == len(first | later)


def test_words_are_dropped_least_recent_first_counting_their_lists() -> None:
    words: OrderedDict[str, WordBits] = OrderedDict(
        (name, word(set(range(start, start + 1_000)))) for name, start in (("a", 0), ("b", 7))
    )
    assert words["a"].nbytes == words["a"].bits.nbytes + 4 * 1_000
    both = words["a"].nbytes + words["b"].nbytes
    keep_within(words, both)
    assert list(words) == ["a", "b"]
    keep_within(words, both - 1)
    assert list(words) == ["b"]  # the least recently used went
    keep_within(words, 0)
    assert list(words) == ["b"]  # the word in use always stays
