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
4. Only claims are evidence: code, commands, placeholders, ``Key: value`` lines and
   link lists never reach the judge (:func:`~desktop.flows.sentences.evidence_reason`),
   nor does boilerplate — a sentence whose frame, once each note's own name is masked,
   recurs in ``boilerplate_notes`` notes or more (:func:`frame_counts`).
5. Before a sentence pair is judged, the two sentences are aligned
   (:mod:`desktop.flows.alignment`): the same sentence, the same frame about each
   note's own subject ("Import from Notion…" / "Import from Evernote…"), a rewording
   that changes no value, negation or quantifier, or values that agree as numbers
   (45 minutes is at least half an hour) are set aside, counted, never judged.
6. The note pair is decided at note level by the small calibrated model the judge ships
   with (:class:`~inference.note_model.NoteModel`, named in its manifest entry): it reads the
   pair's features (:func:`note_features`: its best and second-best judged sentence pairs,
   how many pass, their alignment and values, how much was set aside as template, how much
   of each note is structure rather than prose, a rule against a fact, how many of its
   closest sentence pairs have values that conflict or agree; see
   :mod:`desktop.flows.note_features`) and answers the probability shown. A judge without
   one (a file of the user's own) shows a pair when its strongest sentence pair passes its
   calibrated threshold.
"""

from __future__ import annotations

import bisect
import logging
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from desktop.flows.alignment import (
    Alignment,
    align,
    code_names,
    frame,
    subject_words,
)
from desktop.flows.embedding import embed_in_steps
from desktop.flows.note_features import FEATURES, note_features, rule_like
from desktop.flows.progress import Progress
from desktop.flows.sentences import Sentence, evidence_reason, split_sentences
from desktop.flows.value_compare import compare_quantities, outside_prohibition
from desktop.vault.sentence_vectors import SentenceVectorCache
from desktop.vault.vectors import EmbeddingModel
from inference.base import StopFlag
from inference.judge import CONTRADICTION, ENTAILMENT, Judge, Thresholds
from inference.note_model import NoteModel

__all__ = ["FEATURES", "NoteJudge", "note_features"]

log = logging.getLogger(__name__)


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
    #: A sentence frame found in this many notes or more is boilerplate, not evidence.
    boilerplate_notes: int = 3
    #: A judged sentence pair "passes" from this P(contradiction) on (a note-level feature).
    passing: float = 0.5


@dataclass(frozen=True)
class SentencePairVerdict:
    a: Sentence
    b: Sentence
    cosine: float
    contradiction: float
    entailment: float
    alignment: Alignment | None = None


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
    #: Sentence pairs that shared a subject but were set aside by alignment, by reason
    #: (``same``, ``subject``, ``wording``, ``values agree``).
    set_aside: Mapping[str, int] = field(default_factory=dict)
    #: The note-level model's probability that the notes contradict (None: no model).
    probability: float | None = None
    #: The features the note-level model read (:func:`note_features`).
    features: Mapping[str, float] = field(default_factory=dict)
    #: Every judged sentence pair, strongest first (``best`` is the first).
    sentence_pairs: tuple[SentencePairVerdict, ...] = ()

    @property
    def contradiction(self) -> float:
        """What the decision reads: the note-level probability, else the best pair's."""
        if self.probability is not None:
            return self.probability
        return self.best.contradiction if self.best else 0.0

    @property
    def sentence_contradiction(self) -> float:
        return self.best.contradiction if self.best else 0.0


@dataclass
class NoteSentences:
    sentences: list[Sentence]
    vectors: npt.NDArray[np.float32]
    #: Sentences beyond ``max_sentences``, and generic/short ones set aside.
    cut: int = 0
    generic: int = 0
    #: Words that name the note's own subject (title, aliases, file name).
    names: frozenset[str] = frozenset()
    #: Evidence sentences set aside as boilerplate (a frame repeated across notes).
    boilerplate: int = 0
    #: Lines of the note that are structure, not prose (code, markup, placeholders, Key:
    #: value lines, lead-ins, task items), and all its lines: how much of a reference or
    #: how-to page it is, for the note-level decision.
    structure: int = 0
    lines: int = 0


@dataclass
class JudgingStats:
    sentences: int = 0
    sentences_cut: int = 0
    sentence_pairs_judged: int = 0
    sentence_pairs_over_budget: int = 0
    note_pairs: int = 0
    seconds_embedding: float = 0.0
    seconds_judging: float = 0.0
    #: Sentences that were not evidence, by reason (code, placeholder, boilerplate…).
    not_evidence: Counter[str] = field(default_factory=Counter)
    #: Sentence pairs set aside by alignment before the judge, by reason.
    set_aside: Counter[str] = field(default_factory=Counter)
    notes_without_evidence: list[str] = field(default_factory=list)
    #: Why each of those notes has nothing to compare, in words.
    why_no_evidence: dict[str, str] = field(default_factory=dict)
    #: Notes with more sentences than ``max_sentences``: only the first ones were compared.
    notes_cut: list[str] = field(default_factory=list)


#: Sentence pairs (by cosine) whose numbers are compared beyond the budget, and how many
#: whose numbers clash are judged besides it.
_VALUE_SCAN, _VALUE_EXTRA = 64, 2

#: Alignment kinds that set a sentence pair aside before the judge reads it.
_SET_ASIDE = {
    "same": "same sentence",
    "subject": "each about its own subject",
    "wording": "reworded",
    "languages": "written in different languages",
}


def note_names(path: str, *more: str) -> frozenset[str]:
    """The words naming a note's subject: its file name (and title, aliases if given)."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    return subject_words(stem, *more)


def frame_counts(
    notes: Iterable[tuple[str, Iterable[str], str]], *, min_content_words: int = 3
) -> Counter[str]:
    """How many notes hold each sentence frame (:func:`~desktop.flows.alignment.frame`).

    ``notes``: ``(path, names, body)`` of every note of the vault. A frame counted in
    several notes is a template ("This importer converts your _ export to Markdown")."""
    counts: Counter[str] = Counter()
    for path, more, body in notes:
        names = note_names(path, *more)
        seen: set[str] = set()
        for sentence in split_sentences(body):
            if evidence_reason(sentence, min_content_words=min_content_words) is None:
                seen.add(frame(sentence.text, names | code_names(sentence.quote)))
        counts.update(seen)
    return counts


#: Reasons a line is structure rather than prose (:func:`evidence_reason`).
_STRUCTURE = frozenset({"code", "placeholder", "markup", "key_value", "lead_in", "task", "math"})
#: How each reason a line is not evidence reads in a report.
NOT_EVIDENCE_WORDS = {
    "code": "code or commands",
    "placeholder": "templates or placeholders",
    "markup": "markup",
    "key_value": "'Key: value' lines",
    "lead_in": "lead-ins",
    "links": "links",
    "too_short": "lines of a few words",
    "task": "task items",
    "math": "formulas",
    "question": "questions",
    "boilerplate": "boilerplate repeated across the vault",
}


def no_evidence_reason(reasons: Counter[str]) -> str:
    """Why a note has no sentence to compare, in words ("no prose to compare: 12 lines of
    code or commands, 3 of templates or placeholders")."""
    if not reasons:
        return "no prose to compare: the note has no sentences"
    parts = [f"{n} {NOT_EVIDENCE_WORDS.get(why, why)}" for why, n in reasons.most_common()]
    return "no prose to compare: only " + ", ".join(parts)


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
        note_model: NoteModel | bool | None = True,
        frames: Mapping[str, int] | None = None,
    ) -> None:
        """``note_model``: the note-level model (``True``: the judge's own, if it ships one;
        ``None``/``False``: decide on the strongest sentence pair). ``frames``: the vault's
        :func:`frame_counts` (boilerplate is then set aside)."""
        self.judge = judge
        self.embedding = embedding
        self.cache = cache
        self.settings = settings or JudgingSettings()
        self.thresholds = thresholds or judge.thresholds
        if note_model is True:
            note_model = judge.note_model
        self.note_model: NoteModel | None = note_model or None
        self.frames: Mapping[str, int] = frames or {}
        self.stats = JudgingStats()
        self._notes: dict[str, NoteSentences] = {}
        #: Per note pair: sentence pairs whose values conflict / agree (:meth:`candidates`).
        self._values: dict[tuple[str, str], tuple[int, int]] = {}

    # -- sentences ---------------------------------------------------------

    def _embed(
        self, texts: Sequence[str], progress: Progress | None = None, what: str = ""
    ) -> npt.NDArray[np.float32]:
        t0 = time.perf_counter()
        embed = self.embedding.embed
        if progress is not None:
            embed = embed_in_steps(self.embedding, progress, what)
        try:
            if self.cache is not None and texts:
                return self.cache.vectors(
                    texts,
                    model_id=self.embedding.model_id,
                    dimension=self.embedding.dimension,
                    embed=embed,
                )
            if not texts:
                return np.zeros((0, self.embedding.dimension), dtype=np.float32)
            return np.asarray(embed(list(texts)), dtype=np.float32)
        finally:
            self.stats.seconds_embedding += time.perf_counter() - t0

    def prepare(
        self,
        notes: Mapping[str, str],
        *,
        names: Mapping[str, Iterable[str]] | None = None,
        progress: Progress | None = None,
        what: str = "embedding the sentences",
    ) -> None:
        """Split and embed ``path → body`` for the notes not seen yet (one embedding call).

        ``names``: more words naming each note (title, aliases) beyond its file name;
        ``progress``: told ``(sentences embedded, sentences to embed, what)`` as it goes."""
        names = names or {}
        todo: list[tuple[str, list[Sentence], int, int, frozenset[str], int, tuple[int, int]]] = []
        for path, body in notes.items():
            if path in self._notes:
                continue
            own = note_names(path, *names.get(path, ()))
            every = split_sentences(body)
            good: list[Sentence] = []
            boilerplate = 0
            reasons: Counter[str] = Counter()
            for s in every:
                why = evidence_reason(s, min_content_words=self.settings.min_content_words)
                if why is None and self.frames:
                    key = frame(s.text, own | code_names(s.quote))
                    if self.frames.get(key, 0) >= self.settings.boilerplate_notes:
                        why = "boilerplate"
                        boilerplate += 1
                if why is None:
                    good.append(s)
                else:
                    reasons[why] += 1
            self.stats.not_evidence.update(reasons)
            structure = sum(n for why, n in reasons.items() if why in _STRUCTURE)
            if not good:
                self.stats.why_no_evidence[path] = no_evidence_reason(reasons)
            generic = len(every) - len(good)
            cut = max(0, len(good) - self.settings.max_sentences)
            todo.append(
                (
                    path,
                    good[: self.settings.max_sentences],
                    cut,
                    generic,
                    own,
                    boilerplate,
                    (structure, len(every)),
                )
            )
        texts = [s.text for _, sents, *_ in todo for s in sents]
        vectors = self._embed(texts, progress, what)
        offset = 0
        for path, sents, cut, generic, own, boilerplate, (structure, lines) in todo:
            n = len(sents)
            self._notes[path] = NoteSentences(
                sents,
                vectors[offset : offset + n],
                cut,
                generic,
                names=own,
                boilerplate=boilerplate,
                structure=structure,
                lines=lines,
            )
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

    def candidates(
        self, a: str, b: str
    ) -> tuple[list[tuple[int, int, float, Alignment]], int, str, Counter[str]]:
        """Best sentence pairs of notes ``a`` and ``b`` by cosine, the gate applied, and the
        pairs alignment set aside (by reason) on the way."""
        aside: Counter[str] = Counter()
        na, nb = self._notes.get(a), self._notes.get(b)
        if not na or not nb or not na.sentences or not nb.sentences:
            return [], 0, "no sentence with enough content to compare", aside
        sims = na.vectors @ nb.vectors.T
        ii, jj = np.nonzero(sims >= self.thresholds.min_cosine)
        if len(ii) == 0:
            return [], 0, "no two sentences share a subject", aside
        order = np.argsort(-sims[ii, jj], kind="stable")

        def aligned(i: int, j: int) -> Alignment:
            sa, sb = na.sentences[i], nb.sentences[j]
            return align(
                sa.text,
                sb.text,
                names_a=na.names | code_names(sa.quote),
                names_b=nb.names | code_names(sb.quote),
            )

        picked: list[tuple[int, int, float, Alignment]] = []
        for k in order:
            i, j = int(ii[k]), int(jj[k])
            al = aligned(i, j)
            reason = _SET_ASIDE.get(al.kind)
            if reason is None and al.kind == "value" and al.values == "compatible":
                reason = "values agree"
            if reason is None and outside_prohibition(na.sentences[i].text, nb.sentences[j].text):
                reason = "outside what the rule forbids"
            if reason is not None:
                aside[reason] += 1
                continue
            picked.append((i, j, float(sims[i, j]), al))
            if len(picked) >= self.settings.pairs_per_note_pair:
                break
        # Beyond the budget, a pair whose numbers clash (a value outside the other's bound)
        # is still judged: numbers are cheap to compare, and such a pair is a likely clash.
        chosen = {(i, j) for i, j, _, _ in picked}
        extra = 0
        counts: Counter[str] = Counter()
        for k in order[:_VALUE_SCAN]:
            i, j = int(ii[k]), int(jj[k])
            ta, tb = na.sentences[i].text, nb.sentences[j].text
            values = compare_quantities(ta, tb)
            if rule_like(ta) != rule_like(tb):  # a rule against a fact: a breach, or kept
                counts[values] += 1
            if (i, j) in chosen or extra >= _VALUE_EXTRA:
                continue
            if values == "conflict":
                picked.append((i, j, float(sims[i, j]), aligned(i, j)))
                extra += 1
        self._values[(a, b)] = (counts["conflict"], counts["compatible"])
        over = max(0, len(ii) - len(picked) - sum(aside.values()))
        reason = (
            "" if picked or not aside else "every sentence pair agrees or names its own subject"
        )
        return picked, over, reason, aside

    def judge_pairs(
        self,
        pairs: Sequence[tuple[str, str]],
        *,
        stop: StopFlag | None = None,
        progress: Progress | None = None,
    ) -> list[NotePairVerdict]:
        """A verdict per note pair (in order). Stops between judge calls when asked."""
        plans: list[tuple[str, str, list[tuple[int, int, float, Alignment]], int, str]] = []
        asides: list[Counter[str]] = []
        for a, b in pairs:
            picked, over, reason, aside = self.candidates(a, b)
            plans.append((a, b, picked, over, reason))
            asides.append(aside)
            self.stats.set_aside.update(aside)
        flat = [
            (n, i, j, cos, al)
            for n, (_, _, picked, _, _) in enumerate(plans)
            for i, j, cos, al in picked
        ]
        scores = np.zeros((len(flat), 3), dtype=np.float32)
        step = max(1, self.settings.batch)
        done = 0
        # ends[n]: how many sentence pairs are judged once note pair n is done.
        ends = np.cumsum([len(picked) for _, _, picked, _, _ in plans]).tolist()

        def tell(sentence_pairs: int) -> None:
            # Counted in sentence pairs, the judge's unit of work (a note pair holds none to a
            # dozen), so the time left follows what takes the time; the words say note pairs.
            if progress is not None:
                notes = bisect.bisect_right(ends, sentence_pairs)
                done, total = (sentence_pairs, len(flat)) if flat else (notes, len(plans))
                progress(done, total, f"judging {notes} of {len(plans)} note pairs")

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
                for n, i, j, _, _ in chunk
            ]
            t0 = time.perf_counter()
            scores[start : start + len(chunk)] = self.judge.score(texts)
            self.stats.seconds_judging += time.perf_counter() - t0
            done += len(chunk)
            tell(done)
        judged: dict[int, list[SentencePairVerdict]] = {}
        for (n, i, j, cos, al), row in zip(flat, scores, strict=True):
            a, b = plans[n][0], plans[n][1]
            judged.setdefault(n, []).append(
                SentencePairVerdict(
                    self._notes[a].sentences[i],
                    self._notes[b].sentences[j],
                    cos,
                    float(row[CONTRADICTION]),
                    float(row[ENTAILMENT]),
                    al,
                )
            )
        out: list[NotePairVerdict] = []
        for n, (a, b, picked, over, reason) in enumerate(plans):
            mine = sorted(judged.get(n, []), key=lambda v: -v.contradiction)
            if picked and not mine:
                reason = "stopped before it was judged"
            aside = asides[n]
            features: dict[str, float] = {}
            probability: float | None = None
            if mine:
                features = note_features(
                    mine,
                    set_aside=sum(aside.values()),
                    passing=self.settings.passing,
                    notes=(self._notes[a], self._notes[b]),
                    values=self._values.get((a, b), (0, 0)),
                )
                if self.note_model is not None:
                    probability = self.note_model.probability(features)
            out.append(
                NotePairVerdict(
                    a,
                    b,
                    mine[0] if mine else None,
                    len(mine),
                    over,
                    reason,
                    set_aside=dict(aside),
                    probability=probability,
                    features=features,
                    sentence_pairs=tuple(mine),
                )
            )
            self.stats.sentence_pairs_judged += len(mine)
            self.stats.sentence_pairs_over_budget += over
        self.stats.note_pairs += len(pairs)
        return out

    def shown(self, verdict: NotePairVerdict) -> bool:
        if verdict.best is None:
            return False
        if verdict.probability is not None and self.note_model is not None:
            return verdict.probability >= self.note_model.threshold
        return verdict.contradiction >= self.thresholds.contradiction

    def confidence(self, probability: float) -> str:
        if self.note_model is not None:
            high, shown = self.note_model.high, self.note_model.threshold
        else:
            high, shown = self.thresholds.high, self.thresholds.contradiction
        if probability >= high:
            return "high"
        if probability >= (shown + high) / 2:
            return "medium"
        return "low"
