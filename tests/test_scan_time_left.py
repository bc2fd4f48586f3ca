"""The scan's long phases report counts the time left can be measured on: the sentences it
embeds (in steps), then the sentence pairs it judges."""

from __future__ import annotations

import numpy as np

from desktop.flows import embedding
from desktop.flows.judging import NoteJudge
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
