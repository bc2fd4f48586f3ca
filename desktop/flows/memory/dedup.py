"""Deduplication of facts across batches: the same meaning is written once.

A new fact is compared with the facts already on the page it goes to (and
those accepted earlier in the same run for that page):

1. the same words (case, accents and punctuation ignored) — always a duplicate;
2. with an embedder, cosine similarity of the two facts ≥ :data:`COSINE_ALONE`
   when no judge is given; with a judge, cosine ≥ :data:`COSINE_WITH_JUDGE`
   *and* the judge's P(entailment) ≥ :data:`ENTAILMENT_BOTH_WAYS` (the judge
   scores both orders and averages them, so a high score means each entails
   the other, not just one way).

Calibrated on ``tests/data/memory/dedup_calibration.json`` (pairs labelled same
meaning / different) with the shipped MiniLM; ``tests/test_memory_dedup.py``
recomputes the figures (see that file's docstring).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from desktop.flows.memory.pages import fact_key
from inference.embedder import Embedder
from inference.judge import ENTAILMENT, Judge

COSINE_ALONE = 0.86
COSINE_WITH_JUDGE = 0.70
ENTAILMENT_BOTH_WAYS = 0.6


@dataclass(frozen=True)
class Duplicate:
    #: The fact already known.
    of: str
    how: str


def find_duplicate(
    text: str,
    known: Sequence[str],
    *,
    embedder: Embedder | None = None,
    judge: Judge | None = None,
) -> Duplicate | None:
    """The known fact ``text`` repeats, or None. Blocks on the engines (worker thread)."""
    key = fact_key(text)
    for other in known:
        if fact_key(other) == key:
            return Duplicate(other, "same words")
    if embedder is None or not known:
        return None
    vectors = embedder.embed([text, *known])
    cosines = np.einsum("ij,j->i", vectors[1:], vectors[0])
    order = np.argsort(-cosines)
    floor = COSINE_WITH_JUDGE if judge is not None else COSINE_ALONE
    close = [int(i) for i in order if cosines[i] >= floor][:3]
    if not close:
        return None
    if judge is None:
        i = close[0]
        return Duplicate(known[i], f"cosine {float(cosines[i]):.2f}")
    scores = judge.score([(text, known[i]) for i in close])
    for row, i in zip(scores, close, strict=True):
        if float(row[ENTAILMENT]) >= ENTAILMENT_BOTH_WAYS:
            return Duplicate(
                known[i], f"cosine {float(cosines[i]):.2f}, entailment {float(row[ENTAILMENT]):.2f}"
            )
    return None
