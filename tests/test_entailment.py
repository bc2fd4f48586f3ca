"""The shared entailment check: premises from runs of sentences, judged best-overlapping first."""

from __future__ import annotations

from desktop.flows.entailment import Entailment, best_entailment, sentence_windows
from tests.fakes import ScriptedJudge


def test_windows_join_consecutive_sentences_within_a_run_up_to_a_word_limit() -> None:
    assert sentence_windows([["a x", "b", "c"], ["d"]], size=3, max_words=100) == [
        "a x", "a x b", "a x b c", "b", "b c", "c", "d"
    ]  # fmt: skip
    long = " ".join(["word"] * 50)
    # two long sentences exceed the limit together; each alone is read, once
    assert sentence_windows([[long, long, "end"]], max_words=80) == [long, f"{long} end", "end"]


def test_the_best_overlapping_premise_is_judged_first_and_judging_stops_when_one_holds() -> None:
    claim = "The lockfile pins every dependency version."
    premises = ["Syncing installs packages.", "The lockfile pins versions.",
                "The lockfile pins every dependency version exactly."]  # fmt: skip
    judge = ScriptedJudge(
        verdict=lambda a, b: (0.0, 0.9, 0.1) if "exactly" in a + b else (0, 0.2, 0.8)
    )
    best = best_entailment(judge, claim, premises, threshold=0.5)
    assert best == Entailment(0.9, 0.0, premises[2], 1)
    assert judge.calls == [(premises[2], claim)]  # "Syncing installs packages." shares no word


def test_no_premise_sharing_a_word_means_no_judge_call() -> None:
    judge = ScriptedJudge()
    assert best_entailment(judge, "Bananas.", ["Rust is a language."], threshold=0.5) == (
        Entailment(0.0, 0.0, "", 0)
    )
    assert judge.calls == []


def test_at_most_limit_premises_are_judged() -> None:
    judge = ScriptedJudge()
    premises = [f"The lockfile version {i}." for i in range(10)]
    best = best_entailment(judge, "The lockfile version.", premises, threshold=0.5, limit=3)
    assert best.premises_judged == 3 and len(judge.calls) == 3
    assert best.probability < 0.5
