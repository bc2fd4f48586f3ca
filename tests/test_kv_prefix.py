"""Saved prefix states: the longest matching one wins, least recently used ones go."""

from __future__ import annotations

from inference.kv_prefix import PrefixStates, common_prefix


def test_the_longest_saved_prefix_longer_than_the_live_cache_is_chosen() -> None:
    states = PrefixStates()
    states.add([1, 2, 3], b"short")
    states.add([1, 2, 3, 4, 5], b"long")
    assert states.best([1, 2, 3, 4, 5, 6], longer_than=0) == (5, b"long")
    assert states.best([1, 2, 3, 9], longer_than=0) == (3, b"short")
    # The live cache already shares 4 tokens: only a longer state helps.
    assert states.best([1, 2, 3, 4, 5, 6], longer_than=4) == (5, b"long")
    assert states.best([1, 2, 3, 4, 5, 6], longer_than=5) is None
    # A state as long as the prompt is no use: one token must be decoded for logits.
    assert states.best([1, 2, 3], longer_than=0) is None
    assert states.best([7, 8, 9, 10], longer_than=0) is None


def test_least_recently_used_states_are_dropped() -> None:
    states = PrefixStates(max_states=2)
    states.add([1], b"a")
    states.add([2], b"b")
    assert states.best([1, 0], longer_than=0) == (1, b"a")  # used: now the newest
    states.add([3], b"c")
    assert len(states) == 2 and states.has([1]) and states.has([3]) and not states.has([2])
    states.add([3], b"c2")  # the same prefix again replaces its state
    assert len(states) == 2 and states.best([3, 0], longer_than=0) == (1, b"c2")
    assert states.stats.saved == 4


def test_common_prefix() -> None:
    assert common_prefix([1, 2, 3], [1, 2, 4]) == 2
    assert common_prefix([], [1]) == 0
    assert common_prefix([1, 2], [1, 2, 3]) == 2
