"""Does the source say it? Every claim line of an ingest is checked before it is written.

A claim line is a sentence quoted from the source or text the model wrote (the
summary). :meth:`SourceSupport.check` decides, in this order:

1. **Quote** — the claim is a sentence of the source word for word (quote marks,
   case and spacing aside): supported, since the source says exactly that.
2. **Lexical** — at most :data:`MAX_FOREIGN_SHARE` of its content words may be
   absent from the source, and every name and number in it must occur there
   (memory's rule, :func:`desktop.flows.memory.support.unsupported_names`): an invented
   detail is what a small model adds.
3. **One place** — some sentence of the source, or run of up to three consecutive
   ones, must hold :data:`MIN_COVERAGE` of its content words (:func:`coverage`) and
   every negation and quantifier of it ("not", "every", "only"), with no opposite of one
   of its words in their place ("before" for "after": :func:`polarity_change`, the
   scan's word lists in :mod:`desktop.flows.alignment`): the premises the judge reads.
   The judge misses these: "Security updates are applied to every version of Jekyll"
   scored P(entailment) 0.64 given "… applied to the latest MINOR version of Jekyll …".
4. **Judge** — the shipped judge must give the claim P(entailment) at least its
   calibrated ``entailment`` threshold given one of those premises
   (:func:`desktop.flows.entailment.best_entailment`). Without a judge, text the model
   wrote is not written. The judge alone is lenient with a loose paraphrase ("When using
   the lockfile, you need to ensure that your project is up-to-date…" scored 0.69 given
   two sentences that define locking and syncing); step 3 drops it (0.4 of its words).

Calibrated on 28 hand-labelled summaries of five documentation pages
(``tests/perf/calibrate_ingest_support.py``; ``tests/data/ingest/summary_calibration.json``:
14 faithful, 14 with an invented detail, quantifier, link or fact), with the shipped judge
at its entailment threshold (0.5). Kept, faithful / invented, by :data:`MIN_COVERAGE`:
0.5: 13 / 5, 0.6–0.7: 13 / 3, **0.8: 13 / 2**, 0.9: 10 / 1. The faithful one lost says
"each submission" where the page says "your submission"; the invented ones kept change a
verb the judge does not weigh ("keeps" for "removes", "compiled into" for "ignored by").
A dropped summary costs little: the page quotes the source's lead sentence instead.

A claim that fails is dropped — never sent back to the model — and the report lists it
with its reason (:class:`DroppedClaim`); a page left without claims is not written.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby

from desktop.flows import sentences as prose
from desktop.flows.alignment import ANTONYMS, NEGATIONS, QUANTIFIERS, tokens
from desktop.flows.entailment import best_entailment, sentence_windows
from desktop.flows.ingest.sentences import Sentence, content_words
from desktop.flows.memory.support import unsupported_names
from inference.judge import Judge

#: At most this share of a claim's content words may be absent from the source.
MAX_FOREIGN_SHARE = 0.4
#: A premise the judge reads holds at least this share of the claim's content words.
MIN_COVERAGE = 0.8
_QUOTES = "“”\"'‘’ "


@dataclass(frozen=True)
class DroppedClaim:
    """A claim line that was not written, and why.

    ``reason``: ``says_nothing``, ``foreign_words``, ``names_not_in_source``,
    ``no_judge``, ``not_in_one_place``, ``changes_polarity`` or ``not_entailed``.
    """

    page: str
    claim: str
    reason: str
    detail: str


@dataclass(frozen=True)
class Verdict:
    supported: bool
    #: ``quote`` (the source's own sentence) or ``judge`` (entailed); "" when not supported.
    how: str = ""
    reason: str = ""
    detail: str = ""
    entailment: float | None = None


class SourceSupport:
    """Checks claims against one source. Blocking (the judge); call from a worker thread."""

    def __init__(
        self,
        sentences: Sequence[Sentence],
        *,
        text: str,
        judge: Judge | None,
        threshold: float | None = None,
        min_coverage: float = MIN_COVERAGE,
    ) -> None:
        self.judge = judge
        self.min_coverage = min_coverage
        self.threshold = (
            threshold if threshold is not None else judge.thresholds.entailment if judge else 0.5
        )
        self._text = text
        self._quotes = {_key(s.text) for s in sentences}
        self._words = set(content_words(text))
        runs = [[s.text for s in group] for _, group in groupby(sentences, key=lambda s: s.section)]
        self._premises = sentence_windows(runs)
        self._seen: dict[str, Verdict] = {}
        self.pairs_judged = 0
        self.seconds = 0.0

    def check(self, claim: str) -> Verdict:
        key = _key(claim)
        if key not in self._seen:
            started = time.perf_counter()
            self._seen[key] = self._check(claim.strip(_QUOTES))
            self.seconds += time.perf_counter() - started
        return self._seen[key]

    def _check(self, claim: str) -> Verdict:
        if _key(claim) in self._quotes:
            return Verdict(True, "quote")
        words = list(dict.fromkeys(content_words(claim)))
        if not words:
            return Verdict(False, reason="says_nothing", detail="it has no content words")
        foreign = [w for w in words if w not in self._words and w[:-1] not in self._words]
        if len(foreign) > MAX_FOREIGN_SHARE * len(words):
            return Verdict(
                False,
                reason="foreign_words",
                detail=f"words not in the source: {', '.join(foreign[:6])}",
            )
        names = unsupported_names(claim, self._text)
        if names:
            return Verdict(
                False,
                reason="names_not_in_source",
                detail=f"names or numbers not in the source: {', '.join(names[:5])}",
            )
        if self.judge is None:
            return Verdict(
                False,
                reason="no_judge",
                detail="the judge is not available to check words the model wrote",
            )
        covering = [p for p in self._premises if coverage(claim, p) >= self.min_coverage]
        if not covering:
            return Verdict(
                False,
                reason="not_in_one_place",
                detail=(
                    f"no sentence of the source, nor a run of up to three, holds "
                    f"{self.min_coverage:.0%} of its words"
                ),
            )
        changes = [polarity_change(claim, p) for p in covering]
        premises = [p for p, change in zip(covering, changes, strict=True) if not change]
        if not premises:
            return Verdict(
                False,
                reason="changes_polarity",
                detail=f"where the source says it, it does not say {changes[0]!r}",
            )
        best = best_entailment(self.judge, claim, premises, threshold=self.threshold)
        self.pairs_judged += best.premises_judged
        if best.holds(self.threshold):
            return Verdict(True, "judge", entailment=best.probability)
        against = (
            f" given “{_cut(best.premise)}”" if best.premise else " (no sentence shares a word)"
        )
        return Verdict(
            False,
            reason="not_entailed",
            detail=(
                f"the judge gives P(entailment) {best.probability:.2f}{against}; "
                f"it needs {self.threshold:.2f}"
            ),
            entailment=best.probability,
        )


def coverage(claim: str, premise: str) -> float:
    """Share of ``claim``'s content words found in ``premise`` (compared by their first 4
    letters, so "locks" is "locked"; numbers whole). 0.0 for a claim without any."""
    words = prose.content_words(claim)
    if not words:
        return 0.0
    have = {_stem(w) for w in prose.content_words(premise)}
    return sum(1 for w in words if _stem(w) in have) / len(words)


def polarity_change(claim: str, premise: str) -> str:
    """A negation or quantifier of ``claim`` absent from ``premise``, or a word of it whose
    opposite ``premise`` holds instead; "" when there is none."""
    have = set(tokens(premise))
    for word in tokens(claim):
        if word in have:
            continue
        if word in NEGATIONS or word in QUANTIFIERS:
            return word
        if any(word in pair and (pair - {word}) <= have for pair in ANTONYMS):
            return word
    return ""


def _stem(word: str) -> str:
    return word if word.isdigit() else word[:4]


def _key(text: str) -> str:
    return " ".join(text.strip(_QUOTES).split()).casefold()


def _cut(text: str, n: int = 90) -> str:
    return text if len(text) <= n else text[:n].rsplit(" ", 1)[0] + " …"
