"""How long the judging after the embedding will take, so the time left covers the run.

A whole-vault scan embeds the sentences of its notes, then judges sentence pairs of each
note pair — about as long again. While it embeds, the number of sentence pairs to judge
is not known yet (it comes from the vectors), but the number of note pairs is. The
embedding's progress is therefore told with the judging ahead added to its total, in the
embedding's own unit (sentences): ``(embedded, to embed + judging ahead, what)``. The
words still say how many sentences are embedded; the bar and the time left, measured on
the embedding's rate, then cover the whole run. Once judging starts, its own counts take
over.

The pace (sentence pairs judged per note pair, and the cost of judging one pair in
sentences embedded) starts from figures measured on the shipped models and is replaced
by what each scan of the process measured, so a second scan estimates from the first.
"""

from __future__ import annotations

from dataclasses import dataclass

from desktop.flows.judging import JudgingStats
from desktop.flows.progress import Progress

#: A finished scan's figures replace the pace only when measured on this many items.
_ENOUGH = 100


@dataclass
class ScanPace:
    #: Sentence pairs judged per note pair (a note pair holds none to about ten); 7.5 on a
    #: documentation vault of 111 notes (``tests/perf/measure_scan_eta.py``).
    sentence_pairs_per_note_pair: float = 7.5
    #: Seconds to judge one sentence pair over seconds to embed one sentence (shipped
    #: models, CPU: 28 ms / 25 ms).
    judge_per_embed: float = 1.13

    def judging_ahead(self, note_pairs: int) -> int:
        """The judging of ``note_pairs``, in sentences embedded."""
        return round(note_pairs * self.sentence_pairs_per_note_pair * self.judge_per_embed)

    def learn(self, stats: JudgingStats, *, embedded: int) -> None:
        """Take a finished judging's measured figures, when there were enough of them.
        ``embedded``: sentences really embedded (those the vector cache held cost nothing,
        so ``stats.sentences`` would understate the cost of one)."""
        if stats.note_pairs and stats.sentence_pairs_judged >= _ENOUGH:
            self.sentence_pairs_per_note_pair = stats.sentence_pairs_judged / stats.note_pairs
        if (
            embedded >= _ENOUGH
            and stats.sentence_pairs_judged >= _ENOUGH
            and stats.seconds_embedding > 0
            and stats.seconds_judging > 0
        ):
            per_pair = stats.seconds_judging / stats.sentence_pairs_judged
            per_sentence = stats.seconds_embedding / embedded
            self.judge_per_embed = per_pair / per_sentence


#: One per process: each scan's figures serve the next (the window runs many).
PACE = ScanPace()


class JudgingAhead:
    """A progress for the embedding that tells ``progress`` its counts with ``ahead``
    (sentences' worth of judging) added to the total, so its bar and time left cover the
    judging that follows; it keeps how many sentences were really embedded."""

    def __init__(self, progress: Progress, ahead: int) -> None:
        self._progress = progress
        self.ahead = ahead
        self.embedded = 0

    def __call__(self, done: int, total: int, what: str) -> None:
        self.embedded = total
        self._progress(done, total + self.ahead, what)
