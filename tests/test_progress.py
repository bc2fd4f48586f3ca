"""Progress in words: the phase's measured rate gives the time left; the model meter
tells prompt from generation and announces the stricter retry."""

from __future__ import annotations

import io

import pytest

from desktop.cli import output
from desktop.flows.judging import NoteJudge
from desktop.flows.progress import ModelMeter, ProgressClock, eta_text, plural
from inference.base import StopFlag
from inference.structured import complete_structured, object_with_array
from tests.fakes import ScriptedGenerator
from tests.test_judging import A, B, C, judge, model


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plural_and_eta_wording() -> None:
    assert plural(1, "pair") == "1 pair" and plural(5, "pair") == "5 pairs"
    assert plural(2, "match", "matches") == "2 matches" and plural(0, "note") == "0 notes"
    assert eta_text(0.2) == "about 1 s left" and eta_text(45) == "about 45 s left"
    assert eta_text(600) == "about 10 min left" and eta_text(3900) == "about 1 h 5 min left"


def test_eta_comes_from_the_rate_measured_in_the_phase() -> None:
    clock = FakeClock()
    c = ProgressClock(clock=clock)
    assert c.line(0, 40, "judging 0 of 40 note pairs") == "judging 0 of 40 note pairs"
    clock.now += 10  # 10 pairs in 10 s: 30 left take 30 s
    assert c.line(10, 40, "judging 10 of 40") == "judging 10 of 40 — about 30 s left"
    clock.now += 30  # slower now: 20 in 40 s overall, 20 left → 40 s
    assert c.eta(20, 40) == pytest.approx(40)
    # A new phase (another total) starts its own measure: no ETA until it has a rate.
    assert c.eta(1, 8) is None
    clock.now += 2
    assert c.eta(3, 8) == pytest.approx(5)
    # A count going back is a new phase too; a single-step phase never has an ETA.
    assert c.eta(0, 8) is None and c.eta(0, 1) is None
    clock.now += 5
    assert c.eta(0, 1) is None


def test_eta_waits_for_a_second_of_measurement() -> None:
    clock = FakeClock()
    c = ProgressClock(clock=clock)
    c.eta(0, 100)
    clock.now += 0.2
    assert c.eta(50, 100) is None  # too short to trust
    clock.now += 0.8
    assert c.eta(60, 100) == pytest.approx(40 / 60)


def test_meter_tells_prompt_from_generation_and_passes_stop_through() -> None:
    seen: list[str] = []
    stop = StopFlag()
    m = ModelMeter(
        stop, what="asking the model about 3 notes", prompt_tokens=700, max_tokens=64,
        report=seen.append, every=0.0,
    )  # fmt: skip
    m.attempt(0)
    assert seen[-1] == "asking the model about 3 notes: reading the prompt, 0 of 700 tokens"
    m.is_set()  # before the first 512-token batch
    m.is_set()  # before the second
    assert seen[-1].endswith("reading the prompt, 512 of 700 tokens")
    for _ in range(5):
        assert m.is_set() is False
    assert seen[-1] == "asking the model about 3 notes: 5 tokens generated (of at most 64)"
    m.attempt(1)
    assert "stricter retry" in seen[-1] and "0 of 700" in seen[-1]
    m.is_set(), m.is_set(), m.is_set()
    assert seen[-1].endswith("1 token generated (of at most 64)")
    stop.set()
    assert m.is_set() is True


def test_meter_reports_at_most_every_interval() -> None:
    clock, seen = FakeClock(), []
    m = ModelMeter(None, what="w", prompt_tokens=10, max_tokens=5, report=seen.append,
                   every=1.0, clock=clock)  # fmt: skip
    m.attempt(0)
    for _ in range(50):
        m.is_set()
    assert len(seen) == 1
    clock.now += 1
    m.is_set()
    assert len(seen) == 2 and seen[-1] == "w: 50 tokens generated (of at most 5)"


def test_structured_output_announces_each_attempt() -> None:
    attempts: list[int] = []
    engine = ScriptedGenerator(["no json here", '{"pairs": []}'])
    result = complete_structured(
        engine, [], shape=object_with_array("pairs"), on_attempt=attempts.append
    )
    assert result.status == "ok" and attempts == [0, 1]


def test_judging_says_note_pairs_and_counts_the_sentence_pairs_it_judges() -> None:
    """The words count note pairs; the fraction (and so the time left) follows the
    sentence pairs, the judge's unit of work: a note pair holds none to a dozen."""
    nj = NoteJudge(judge(), model())
    nj.settings = type(nj.settings)(batch=1)
    nj.prepare({"a": A, "b": B, "c": C})
    seen: list[tuple[int, int, str]] = []
    nj.judge_pairs([("a", "b"), ("a", "c"), ("b", "c")], progress=lambda *a: seen.append(a))
    sentence_pairs = nj.stats.sentence_pairs_judged
    assert sentence_pairs > 3
    assert seen[0] == (0, sentence_pairs, "judging 0 of 3 note pairs")
    assert seen[-1] == (sentence_pairs, sentence_pairs, "judging 3 of 3 note pairs")
    assert [d for d, _, _ in seen] == list(range(sentence_pairs + 1))  # one per judge call
    notes = [int(w.split()[1]) for _, _, w in seen]
    assert notes == sorted(notes) and all(t == sentence_pairs for _, t, _ in seen)


def test_cli_progress_line_says_the_phase_and_time_left(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(output.sys, "stderr", err)
    clock = FakeClock()
    bar = output.ProgressLine()
    bar.clock = ProgressClock(clock=clock)
    for done in range(0, 11):
        bar.update(done, 10, f"judging {done} of 10 note pairs")
        clock.now += 1
    bar.update(0, 1, "asking the model about 4 notes: 12 tokens generated (of at most 640)")
    lines = err.getvalue().splitlines()
    assert lines[0] == "judging 0 of 10 note pairs (0/10)"
    assert lines[1] == "judging 5 of 10 note pairs — about 5 s left (5/10)"
    assert lines[2] == "judging 10 of 10 note pairs (10/10)"
    assert lines[3].startswith("asking the model about 4 notes: 12 tokens generated")
