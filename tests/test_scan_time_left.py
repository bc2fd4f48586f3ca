"""The scan's long phases report counts the time left can be measured on: the sentences it
embeds (in steps), then the sentence pairs it judges; while it embeds, the total includes
the judging that follows, so the time left covers the run."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import numpy as np
import pytest

from desktop.flows import embedding
from desktop.flows.hunter import ScanSettings, pace, scan
from desktop.flows.judging import JudgingStats, NoteJudge
from desktop.flows.progress import ProgressClock
from desktop.vault.index import VaultIndex
from desktop.vault.vectors import EmbeddingModel
from tests.fakes import ScriptedGenerator
from tests.test_hunter import NOTES, described, release_judge
from tests.test_index import BagOfWords
from tests.test_judging import A, B, C, judge, model


def test_embedding_the_sentences_reports_each_step(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(embedding, "EMBED_STEP", 2)
    nj = NoteJudge(judge(), model())
    seen: list[tuple[int, int, str]] = []
    nj.prepare({"a": A, "b": B, "c": C}, progress=lambda *a: seen.append(a), what="embedding")
    total = sum(len(n.sentences) for n in nj._notes.values())
    assert total > 2
    assert [d for d, _, _ in seen] == [*range(0, total, 2), total]
    assert all(t == total for _, t, _ in seen)
    assert seen[0][2] == f"embedding: 0 of {total} sentences"
    assert seen[-1][2] == f"embedding: {total} sentences"
    # Embedding in steps gives the vectors of one call.
    whole = NoteJudge(judge(), model())
    whole.prepare({"a": A, "b": B, "c": C})
    for path in ("a", "b", "c"):
        assert np.allclose(nj._notes[path].vectors, whole._notes[path].vectors, atol=1e-6)


@pytest.fixture()
def index(tmp_path: Path) -> VaultIndex:
    for rel, text in NOTES.items():
        path = tmp_path / "vault" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    idx = VaultIndex(tmp_path / "vault", embedding=EmbeddingModel("bag-of-words", 64, BagOfWords()))
    idx.update()
    return idx


def test_while_a_whole_vault_scan_embeds_its_time_left_covers_the_judging_after(
    index,
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    # A pace as measured: judging one sentence pair costs two sentences embedded.
    monkeypatch.setattr(
        pace, "PACE", pace.ScanPace(sentence_pairs_per_note_pair=4, judge_per_embed=2)
    )
    monkeypatch.setattr(importlib.import_module("desktop.flows.hunter.scan"), "PACE", pace.PACE)
    seen: list[tuple[int, int, str]] = []
    run = scan(
        index,
        ScriptedGenerator([described()]),
        judge=release_judge(),
        mode="whole-vault",
        settings=ScanSettings(band_low=0.0, band_high=1.0, pairs_per_note=6),
        progress=lambda *a: seen.append(a),
    )
    assert run.status == "ok" and run.note_pairs_judged > 0
    embedding = [(t, m) for _, t, w in seen if (m := re.search(r": 0 of (\d+) sentences$", w))]
    assert embedding, seen
    total, counted = embedding[0]
    embedded = int(counted.group(1))
    # The total is the sentences to embed plus the judging ahead in the same unit.
    assert total == embedded + round(run.note_pairs_judged * 4 * 2)
    # A clock fed the embedding at a steady rate shows the whole run's time left: half
    # the sentences embedded in 10 s leaves 10 s of embedding and the judging after it.
    ticks = iter([0.0, 0.0, 10.0])  # made, first update, half way
    clock = ProgressClock(clock=lambda: next(ticks))
    clock.eta(0, total)
    left = clock.eta(embedded // 2, total)
    assert left is not None
    per_sentence = 10.0 / (embedded // 2)
    assert abs(left - (total - embedded // 2) * per_sentence) < 1e-6
    assert left > (embedded - embedded // 2) * per_sentence  # more than the embedding left


def test_the_pace_is_learned_from_a_finished_judging() -> None:
    p = pace.ScanPace()
    stats = JudgingStats(
        sentences=400,
        sentence_pairs_judged=300,
        note_pairs=50,
        seconds_embedding=4.0,
        seconds_judging=9.0,
    )
    p.learn(stats, embedded=200)  # half the sentences came from the vector cache
    assert p.sentence_pairs_per_note_pair == 6.0
    assert abs(p.judge_per_embed - (9.0 / 300) / (4.0 / 200)) < 1e-9
    assert p.judging_ahead(10) == round(10 * 6.0 * 1.5)
    # Too few to measure on: the pace is kept.
    p.learn(
        JudgingStats(
            sentences=5,
            sentence_pairs_judged=3,
            note_pairs=1,
            seconds_embedding=1.0,
            seconds_judging=50.0,
        ),
        embedded=5,
    )
    assert p.sentence_pairs_per_note_pair == 6.0 and abs(p.judge_per_embed - 1.5) < 1e-9
