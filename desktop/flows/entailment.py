"""Does a text support a claim? The judge's P(entailment) over its sentences and short runs.

A claim written in other words than its source ("Locking resolves the project's
dependencies into a lockfile.") is supported when the judge gives at least its
calibrated ``entailment`` threshold (``Judge.thresholds.entailment``, shipped in
``models/manifest.toml``) to the claim given *one* premise: a sentence of the source, or
a short run of consecutive sentences (:func:`sentence_windows`), since a summary often
joins two sentences. The judge reads 128 tokens per pair, so premises are bounded in
words, and only the premises sharing most content words with the claim are judged
(:data:`MAX_PREMISES`): a claim no premise shares a word with is not judged at all.

The judge is not asked about a claim that *is* a premise word for word: it misreads
identical texts (on the shipped judge, three of five sentences paired with themselves
scored P(contradiction) above 0.85). Callers decide identity first.

Blocking; call from a worker thread (the judge runs on the calling thread).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from desktop.flows.sentences import content_words
from inference.judge import CONTRADICTION, ENTAILMENT, Judge

#: Premises judged per claim, best-overlapping first; judging stops at the first that passes.
MAX_PREMISES = 6
#: Consecutive sentences a premise may join, and its length in words.
WINDOW_SENTENCES = 3
WINDOW_WORDS = 80


@dataclass(frozen=True)
class Entailment:
    """The best premise found for a claim."""

    probability: float
    #: P(contradiction) of the claim given that premise.
    contradiction: float
    premise: str
    premises_judged: int

    def holds(self, threshold: float) -> bool:
        return self.probability >= threshold


def sentence_windows(
    runs: Sequence[Sequence[str]],
    *,
    size: int = WINDOW_SENTENCES,
    max_words: int = WINDOW_WORDS,
) -> list[str]:
    """Each sentence, and each run of 2…``size`` consecutive sentences within one of
    ``runs`` (a section or paragraph), up to ``max_words`` words; no duplicates."""
    out: dict[str, None] = {}
    for run in runs:
        for start in range(len(run)):
            words = 0
            for end in range(start, min(len(run), start + size)):
                words += len(run[end].split())
                if end > start and words > max_words:
                    break
                out.setdefault(" ".join(run[start : end + 1]), None)
    return list(out)


def best_entailment(
    judge: Judge,
    claim: str,
    premises: Sequence[str],
    *,
    threshold: float,
    limit: int = MAX_PREMISES,
) -> Entailment:
    """The premise giving ``claim`` the highest P(entailment), judging at most ``limit``
    premises (those sharing most content words with it) and stopping at the first one
    that reaches ``threshold``. P 0.0 and no premise when none shares a word."""
    words = content_words(claim)
    ranked = []
    for premise in premises:
        shared = len(words & content_words(premise))
        if shared:
            ranked.append((-shared, len(premise), premise))
    ranked.sort()
    best = Entailment(0.0, 0.0, "", 0)
    for judged, (_, _, premise) in enumerate(ranked[:limit], 1):
        row = judge.score([(premise, claim)])[0]
        p = round(float(row[ENTAILMENT]), 4)
        if p > best.probability or not best.premise:
            best = Entailment(p, round(float(row[CONTRADICTION]), 4), premise, judged)
        else:
            best = Entailment(best.probability, best.contradiction, best.premise, judged)
        if p >= threshold:
            break
    return best
