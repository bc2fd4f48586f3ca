"""Deduplication: the same meaning is written once; a changed detail is never taken for it."""

from __future__ import annotations

import json

import pytest

from desktop.flows.memory.dedup import COSINE_ALONE, find_duplicate, same_details
from tests.fakes import ScriptedJudge, WordEmbedder
from tests.memory_helpers import DATA


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("Report due on 19 December.", "Report due 19 December, says the user.", True),
        ("Report due on 19 December.", "Report due on 12 December.", False),
        ("I prefer window seats.", "I never want window seats.", False),
        ("The payments lead is Marco.", "The payments lead is Sara.", False),
    ],
)
def test_details_must_match(a: str, b: str, same: bool) -> None:
    assert same_details(a, b) is same


def test_same_words_need_no_engine() -> None:
    dup = find_duplicate("I prefer window seats!", ["i prefer window seats"])
    assert dup is not None and dup.how == "same words"
    assert find_duplicate("I prefer aisle seats.", ["I prefer window seats."]) is None


def test_the_judge_confirms_a_close_pair() -> None:
    a, b = "On long flights I prefer window seats.", "I prefer window seats on long flights."
    assert find_duplicate(a, [b], embedder=WordEmbedder(), judge=ScriptedJudge()) is None
    judge = ScriptedJudge(entailments=[(a, b)])
    dup = find_duplicate(a, [b], embedder=WordEmbedder(), judge=judge)
    assert dup is not None and dup.of == b and "entailment 0.96" in dup.how


@pytest.mark.model
def test_dedup_calibration_with_the_shipped_embedder(runtime: object) -> None:
    """Recomputes the figures in dedup.py's docstring: 8 of 10 restatements, 0 of 10 others."""
    data = json.loads((DATA / "dedup_calibration.json").read_text())
    embedder = runtime.queued_embedder()  # type: ignore[attr-defined]
    caught = {True: 0, False: 0}
    for pair in data["pairs"]:
        if find_duplicate(pair["b"], [pair["a"]], embedder=embedder) is not None:
            caught[pair["same"]] += 1
    print(f"\ndedup at cosine {COSINE_ALONE}: {caught[True]}/10 same, {caught[False]}/10 different")
    assert caught[False] == 0 and caught[True] >= 7
