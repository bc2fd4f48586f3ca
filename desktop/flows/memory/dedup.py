"""Deduplication of facts across batches: the same meaning is written once.

A new fact is compared with the facts already on the page it goes to (and
those accepted earlier in the same run for that page):

1. the same words (case, accents and punctuation ignored) — always a duplicate;
2. with an embedder, the same meaning: the two facts name the same names and
   numbers and carry the same negation (code, both ways), and their cosine
   similarity is ≥ :data:`COSINE_ALONE` without a judge; with a judge, cosine ≥
   :data:`COSINE_WITH_JUDGE` *and* the judge's P(entailment) ≥
   :data:`ENTAILMENT_BOTH_WAYS` (the judge scores both orders and averages
   them, so a high score means each entails the other, not just one way).

Why the lexical rule: cosine measures "about the same thing". On
``tests/data/memory/dedup_calibration.json`` (10 same-meaning pairs, 10 pairs
on the same subject with another or a changed fact; shipped MiniLM;
``tests/test_memory_dedup.py`` recomputes it) same-meaning pairs scored
0.76–0.99, but "due on 19 December" / "due on 12 December" scored 0.96 and
"I prefer window seats" / "I never want window seats" 0.87. Dropping those as
duplicates would lose a fact, so names, numbers and negation must match too.
At 0.85 with that rule: 8 of 10 restatements are caught, none of the 10
different facts; the missed ones are written twice (visible, harmless) rather
than a different fact being lost. The judge's threshold is provisional until
the judge ships: recompute with ``tests/perf/calibrate_memory_judge.py``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from desktop.flows.memory.pages import fact_key
from desktop.flows.memory.support import unsupported_names
from inference.embedder import Embedder
from inference.judge import ENTAILMENT, Judge

COSINE_ALONE = 0.85
COSINE_WITH_JUDGE = 0.70
#: Calibrated with the shipped judge (calibrate_memory_judge.py, dedup_calibration.json):
#: restatements 0.89–0.99 both ways, different facts at most 0.80 (one at 0.80, the rest
#: under 0.07) — 0.6 merged that one; 0.85 separates all twenty.
ENTAILMENT_BOTH_WAYS = 0.85


_NEGATION = re.compile(
    r"\b(not|never|no|none|nobody|nothing|without|instead|n't|pas|jamais|sans|non|mai|senza)\b|n't\b",
    re.IGNORECASE,
)


def same_details(a: str, b: str) -> bool:
    """The same names and numbers both ways, and the same negation."""
    if bool(_NEGATION.search(a)) != bool(_NEGATION.search(b)):
        return False
    return not unsupported_names(a, b) and not unsupported_names(b, a)


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
    known = [k for k in known if same_details(text, k)]
    if not known:
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
