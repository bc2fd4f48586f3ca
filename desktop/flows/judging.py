"""Do two notes contradict each other? Sentences, a subject gate, and the judge.

Blocking; call from a worker thread. Used by the scan (all three modes) and
by ingest. The recipe, and why:

1. Each note is cut into sentences (:mod:`desktop.flows.sentences`); short
   generic lines ("The point is contact.") are dropped — the first judge
   flagged them against almost anything.
2. Every sentence is embedded (vectors cached in the index). For a note pair,
   the sentence pairs are ranked by cosine: a sentence pair must share its
   subject (cosine at least ``min_cosine``) before the judge's verdict counts,
   since the judge was trained on pairs that talk about the same thing.
3. The best ``pairs_per_note_pair`` sentence pairs go to the judge, in
   batches across note pairs; the note pair's score is its strongest
   contradiction. What was left out (sentences beyond the cap, pairs beyond
   the budget) is counted, never silently dropped.
4. The note pair is shown when that score passes the judge's calibrated
   threshold (``Thresholds`` travel with the model: ``models/manifest.toml``).
"""

from __future__ import annotations

import bisect
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from desktop.flows.sentences import Sentence, is_evidence, split_sentences
from desktop.vault.sentence_vectors import SentenceVectorCache
from desktop.vault.vectors import EmbeddingModel
from inference.base import StopFlag
from inference.judge import CONTRADICTION, ENTAILMENT, Judge, Thresholds

log = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class JudgingSettings:
    #: Sentence pairs of one note pair sent to the judge, best cosine first.
    pairs_per_note_pair: int = 8
    #: Sentences of one note considered (a very long note is cut, and reported).
    max_sentences: int = 60
    #: A sentence needs this many content words to count as evidence.
    min_content_words: int = 3
    #: Sentence pairs per judge call (across note pairs).
    batch: int = 64


@dataclass(frozen=True)
class SentencePairVerdict:
    a: Sentence
    b: Sentence
    cosine: float
    contradiction: float
    entailment: float


@dataclass(frozen=True)
class NotePairVerdict:
    path_a: str
    path_b: str
    #: The sentence pair with the strongest contradiction, or None if none was judged.
    best: SentencePairVerdict | None
    #: Sentence pairs judged / candidate pairs that shared a subject but were over budget.
    judged: int = 0
    over_budget: int = 0
    #: Why nothing was judged ("no sentence with enough content", "no shared subject").
    reason: str = ""

    @property
    def contradiction(self) -> float:
        return self.best.contradiction if self.best else 0.0


@dataclass
class NoteSentences:
    sentences: list[Sentence]
    vectors: npt.NDArray[np.float32]
    #: Sentences beyond ``max_sentences``, and generic/short ones set aside.
    cut: int = 0
    generic: int = 0


@dataclass
class JudgingStats:
    sentences: int = 0
    sentences_cut: int = 0
    sentence_pairs_judged: int = 0
    sentence_pairs_over_budget: int = 0
    note_pairs: int = 0
    seconds_embedding: float = 0.0
    seconds_judging: float = 0.0
    notes_without_evidence: list[str] = field(default_factory=list)
    #: Notes with more sentences than ``max_sentences``: only the first ones were compared.
    notes_cut: list[str] = field(default_factory=list)


class NoteJudge:
    """Judges note pairs; keeps each note's sentences and vectors for the run."""

    def __init__(
        self,
        judge: Judge,
        embedding: EmbeddingModel,
        *,
        cache: SentenceVectorCache | None = None,
        settings: JudgingSettings | None = None,
        thresholds: Thresholds | None = None,
    ) -> None:
        self.judge = judge
        self.embedding = embedding
        self.cache = cache
        self.settings = settings or JudgingSettings()
        self.thresholds = thresholds or judge.thresholds
        self.stats = JudgingStats()
        self._notes: dict[str, NoteSentences] = {}

    # -- sentences ---------------------------------------------------------

    def _embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        t0 = time.perf_counter()
        try:
            if self.cache is not None and texts:
                return self.cache.vectors(
                    texts,
                    model_id=self.embedding.model_id,
                    dimension=self.embedding.dimension,
                    embed=self.embedding.embed,
                )
            if not texts:
                return np.zeros((0, self.embedding.dimension), dtype=np.float32)
            return np.asarray(self.embedding.embed(list(texts)), dtype=np.float32)
        finally:
            self.stats.seconds_embedding += time.perf_counter() - t0

    def prepare(self, notes: dict[str, str]) -> None:
        """Split and embed ``path → body`` for the notes not seen yet (one embedding call)."""
        todo: list[tuple[str, list[Sentence], int, int]] = []
        for path, body in notes.items():
            if path in self._notes:
                continue
            every = split_sentences(body)
            good = [
                s
                for s in every
                if is_evidence(s, min_content_words=self.settings.min_content_words)
            ]
            generic = len(every) - len(good)
            cut = max(0, len(good) - self.settings.max_sentences)
            todo.append((path, good[: self.settings.max_sentences], cut, generic))
        texts = [s.text for _, sents, _, _ in todo for s in sents]
        vectors = self._embed(texts)
        offset = 0
        for path, sents, cut, generic in todo:
            n = len(sents)
            self._notes[path] = NoteSentences(sents, vectors[offset : offset + n], cut, generic)
            offset += n
            self.stats.sentences += n
            self.stats.sentences_cut += cut
            if not sents:
                self.stats.notes_without_evidence.append(path)
            if cut:
                self.stats.notes_cut.append(path)

    def sentences_of(self, path: str) -> NoteSentences | None:
        return self._notes.get(path)

    # -- pairs -------------------------------------------------------------

    def candidates(self, a: str, b: str) -> tuple[list[tuple[int, int, float]], int, str]:
        """Best sentence pairs of notes ``a`` and ``b`` by cosine, the gate applied."""
        na, nb = self._notes.get(a), self._notes.get(b)
        if not na or not nb or not na.sentences or not nb.sentences:
            return [], 0, "no sentence with enough content to compare"
        sims = na.vectors @ nb.vectors.T
        ii, jj = np.nonzero(sims >= self.thresholds.min_cosine)
        if len(ii) == 0:
            return [], 0, "no two sentences share a subject"
        order = np.argsort(-sims[ii, jj], kind="stable")
        picked: list[tuple[int, int, float]] = []
        for k in order:
            i, j = int(ii[k]), int(jj[k])
            if na.sentences[i].text.casefold() == nb.sentences[j].text.casefold():
                continue  # the same sentence in both notes (a quote) agrees with itself
            picked.append((i, j, float(sims[i, j])))
            if len(picked) >= self.settings.pairs_per_note_pair:
                break
        over = max(0, len(ii) - len(picked))
        return picked, over, ""

    def judge_pairs(
        self,
        pairs: Sequence[tuple[str, str]],
        *,
        stop: StopFlag | None = None,
        progress: Progress | None = None,
    ) -> list[NotePairVerdict]:
        """A verdict per note pair (in order). Stops between judge calls when asked."""
        plans: list[tuple[str, str, list[tuple[int, int, float]], int, str]] = []
        for a, b in pairs:
            picked, over, reason = self.candidates(a, b)
            plans.append((a, b, picked, over, reason))
        flat = [
            (n, i, j, cos) for n, (_, _, picked, _, _) in enumerate(plans) for i, j, cos in picked
        ]
        scores = np.zeros((len(flat), 3), dtype=np.float32)
        step = max(1, self.settings.batch)
        done = 0
        # ends[n]: how many sentence pairs are judged once note pair n is done.
        ends = np.cumsum([len(picked) for _, _, picked, _, _ in plans]).tolist()

        def tell(sentence_pairs: int) -> None:
            if progress is not None:
                notes = bisect.bisect_right(ends, sentence_pairs)
                progress(notes, len(plans), f"judging {notes} of {len(plans)} note pairs")

        tell(0)
        for start in range(0, len(flat), step):
            if stop is not None and stop.is_set():
                flat = flat[:start]
                scores = scores[:start]
                break
            chunk = flat[start : start + step]
            texts = [
                (
                    self._notes[plans[n][0]].sentences[i].text,
                    self._notes[plans[n][1]].sentences[j].text,
                )
                for n, i, j, _ in chunk
            ]
            t0 = time.perf_counter()
            scores[start : start + len(chunk)] = self.judge.score(texts)
            self.stats.seconds_judging += time.perf_counter() - t0
            done += len(chunk)
            tell(done)
        best: dict[int, SentencePairVerdict] = {}
        judged: dict[int, int] = {}
        for (n, i, j, cos), row in zip(flat, scores, strict=True):
            a, b = plans[n][0], plans[n][1]
            verdict = SentencePairVerdict(
                self._notes[a].sentences[i],
                self._notes[b].sentences[j],
                cos,
                float(row[CONTRADICTION]),
                float(row[ENTAILMENT]),
            )
            judged[n] = judged.get(n, 0) + 1
            if n not in best or verdict.contradiction > best[n].contradiction:
                best[n] = verdict
        out: list[NotePairVerdict] = []
        for n, (a, b, picked, over, reason) in enumerate(plans):
            if picked and n not in judged:
                reason = "stopped before it was judged"
            out.append(NotePairVerdict(a, b, best.get(n), judged.get(n, 0), over, reason))
            self.stats.sentence_pairs_judged += judged.get(n, 0)
            self.stats.sentence_pairs_over_budget += over
        self.stats.note_pairs += len(pairs)
        return out

    def shown(self, verdict: NotePairVerdict) -> bool:
        return verdict.contradiction >= self.thresholds.contradiction

    def confidence(self, probability: float) -> str:
        if probability >= self.thresholds.high:
            return "high"
        if probability >= (self.thresholds.contradiction + self.thresholds.high) / 2:
            return "medium"
        return "low"
