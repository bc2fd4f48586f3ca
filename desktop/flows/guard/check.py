"""One vault's guard: the decisions kept fresh, and the check of one pending change."""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import threading
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from desktop.flows.guard.change import statements_of
from desktop.flows.guard.constants import (
    EMBEDDED_STATEMENTS,
    JUDGED_DECISIONS,
    JUDGED_PAIRS,
    SENTENCE_FLOOR,
    SUBJECT_FLOOR,
)
from desktop.flows.guard.decisions import (
    DecisionSet,
    EmbedFn,
    StandingDecision,
    VectorCache,
    decision_fingerprint,
    standing_decisions,
)
from desktop.flows.guard.markers import SessionMarkers
from desktop.flows.guard.switch import Activation, GuardSwitch
from desktop.flows.guard.verdicts import GuardVerdict, bound_summary, hook_output, too_short
from desktop.flows.sentences import content_words, is_evidence, split_sentences
from desktop.vault.index import VaultIndex
from foundation.errors import AntinomyError
from inference.judge import CONTRADICTION, Judge

log = logging.getLogger(__name__)

#: The judge to use for a check, asked each time (None: cosine alone decides).
JudgeSource = Callable[[], Judge | None]
#: Embeds the summary of a pending change without blocking the event loop.
AsyncEmbedFn = Callable[[Sequence[str]], Awaitable[npt.NDArray[np.float32]]]


class GuardNotReady(AntinomyError):
    """The guard has not read the vault's decisions yet (the models may still be loading)."""


class Guard:
    """One vault's guard.

    :meth:`check` is the one entry point for a pending change: it bounds the
    summary, skips one too short to mean anything, asks the switch whether the
    guard is on for the caller's folder, embeds the summary and decides. The
    index and the embedder may come later (:meth:`attach`), so a call from a
    folder where the guard is off is answered before any model is up.

    ``decide`` and ``activation`` are safe from any thread; ``refresh`` embeds
    (blocking) and should run on a worker thread; ``check`` runs on an event loop.
    """

    def __init__(
        self,
        root: Path,
        *,
        index: VaultIndex | None = None,
        embed: EmbedFn | None = None,
        model_id: str = "",
        switch: GuardSwitch | None = None,
        judge: JudgeSource | None = None,
        embed_query: AsyncEmbedFn | None = None,
    ) -> None:
        self.root = root
        self.markers = SessionMarkers(root)
        self.switch = switch or GuardSwitch(root)
        self._judge = judge or (lambda: None)
        self._embed_query = embed_query
        self._snapshot = DecisionSet()
        #: How rare each word of the decisions' sentences is among the decisions (idf): what
        #: picks the statements of a long change worth embedding (:meth:`statements_to_embed`).
        self._word_weights: dict[str, float] = {}
        self._refresh_lock = threading.Lock()
        self._fingerprint: tuple[Any, ...] | None = None
        #: What each decision note gave at its last content hash: a change re-reads only
        #: the notes that changed (10k decisions: one changed note, not 10k, parsed).
        self._parsed: dict[str, tuple[str, StandingDecision | None]] = {}
        self._principles: bool | None = None
        self._split: dict[str, tuple[str, ...]] = {}
        #: Set once the decisions were read (a first :meth:`refresh` succeeded).
        self.ready = threading.Event()
        #: Cosine the best decision sentence needs with the change for the judge to be
        #: asked (:data:`SENTENCE_FLOOR`; benchmarks set it lower to compare).
        self.sentence_floor = SENTENCE_FLOOR
        self.index: VaultIndex | None = None
        if index is not None and embed is not None:
            self.attach(index=index, embed=embed, model_id=model_id)

    def attach(self, *, index: VaultIndex, embed: EmbedFn, model_id: str) -> None:
        """The index to read decisions from and the embedder for them (keys the cache)."""
        self.index = index
        self._embed = embed
        self._cache = VectorCache(self.root, model_id)

    @property
    def decisions(self) -> DecisionSet:
        return self._snapshot

    def _sentences(self, decision: StandingDecision) -> tuple[str, ...]:
        """The statement's sentences worth judging, cut once per distinct text."""
        cut = self._split.get(decision.text)
        if cut is None:
            cut = tuple(s.text for s in split_sentences(decision.text) if is_evidence(s))
            self._split[decision.text] = cut
        return cut

    def activation(self, cwd: str, mode: str | None = None) -> Activation:
        return self.switch.activation(cwd, mode)

    def refresh(self) -> DecisionSet:
        """Re-read the standing decisions from the index; embed new or changed ones."""
        if self.index is None:
            raise GuardNotReady("The guard has no index yet.")
        with self._refresh_lock:
            principles = self.switch.settings().include_principles
            # Cheap when nothing changed (the usual case): one query, no note parsed. It
            # runs every few seconds beside the checks, which it must not slow down.
            fingerprint = decision_fingerprint(self.index, include_principles=principles)
            if fingerprint == self._fingerprint:
                return self._snapshot
            if principles != self._principles:
                self._parsed.clear()  # another set of note types: read them all again
                self._principles = principles
            decisions = standing_decisions(
                self.index, include_principles=principles, known=self._parsed
            )
            signature = tuple((d.path, d.text) for d in decisions)
            if signature != self._snapshot.signature:
                sentences = tuple(
                    (row, text) for row, d in enumerate(decisions) for text in self._sentences(d)
                )
                # One call: the cache keeps only the texts of its last call.
                texts = [d.text for d in decisions] + [t for _, t in sentences]
                both = self._cache.vectors(texts, self._embed)
                matrix, sentence_matrix = both[: len(decisions)], both[len(decisions) :]
                self._snapshot = DecisionSet(
                    tuple(decisions), matrix, signature, sentences, sentence_matrix
                )
                self._word_weights = _word_weights(self._snapshot)
                live = {d.text for d in decisions}
                self._split = {t: cut for t, cut in self._split.items() if t in live}
                log.info("guard: %d standing decisions", len(decisions))
            self._fingerprint = fingerprint
            self.ready.set()
            return self._snapshot

    async def check(
        self,
        summary: str,
        *,
        session_id: str,
        cwd: str,
        mode: str | None = None,
        tool_name: str = "",
    ) -> GuardVerdict:
        """The verdict on a pending change described by ``summary``, from ``cwd``.

        ``skip`` for a summary under :data:`SUMMARY_MIN_CHARS` characters, ``off``
        where the guard is off (nothing embedded), else the decision of
        :meth:`decide` — judged when a judge is available, on what the change says
        (:func:`~desktop.flows.guard.change.statements_of`: for a file change of
        ``tool_name``, the statements of its new text; else the summary). Raises
        :class:`GuardNotReady` before the decisions were first read.
        """
        summary = bound_summary(summary)
        if too_short(summary):
            return GuardVerdict("skip")
        activation = self.switch.activation(cwd, mode)
        if not activation.active:
            return GuardVerdict("off")
        if not self.ready.is_set():
            raise GuardNotReady("The guard is still reading the vault's decisions.")
        # The whole summary (with a file's path: it helps find the near decisions).
        vector = (await self._embed_summary([summary]))[0]
        judge = self._judge()
        if judge is None:
            # On the loop, not a worker: scoring 10k decisions is one matrix-vector product
            # (< 1 ms) and the marker file is a few hundred bytes; a thread hop costs more.
            return self.decide(vector=vector, session_id=session_id, activation=activation)
        # What the change says, which the judge reads: a Bash call's summary, or the
        # statements of a file change's new text, embedded on their own (in the summary's
        # batch a short line would cost as much as the 2 KB summary).
        statements = statements_of(tool_name, summary)
        if statements == (summary,):
            vectors = vector[np.newaxis, :]
        else:
            statements = self.statements_to_embed(statements)
            vectors = (
                await self._embed_summary(list(statements))
                if statements
                else np.zeros((0, vector.shape[0]), dtype=np.float32)
            )
        # The judge is called directly (its ONNX session is thread-safe), not through its
        # queue: a check must not wait behind a scan's batch of sentence pairs.
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            None,
            functools.partial(
                self.decide,
                vector=vector,
                session_id=session_id,
                activation=activation,
                summary=summary,
                judge=judge,
                statements=statements,
                statement_vectors=vectors,
            ),
        )

    async def _embed_summary(self, texts: list[str]) -> npt.NDArray[np.float32]:
        if self._embed_query is not None:
            return await self._embed_query(texts)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self._embed, texts)

    def statements_to_embed(self, statements: Sequence[str]) -> tuple[str, ...]:
        """The statements of a change worth embedding, in the change's order: all of them
        when they are few (:data:`EMBEDDED_STATEMENTS`), else those whose words the
        standing decisions' sentences share most, rare words counting most. Not the
        decisions near the summary's vector: a long text's vector may be near none of
        the decisions one of its sentences goes against."""
        if len(statements) <= EMBEDDED_STATEMENTS:
            return tuple(statements)
        weights = self._word_weights
        shared = [sum(weights.get(w, 0.0) for w in content_words(s)) for s in statements]
        ranked = sorted(range(len(statements)), key=lambda i: -shared[i])  # stable: order
        return tuple(statements[i] for i in sorted(ranked[:EMBEDDED_STATEMENTS]))

    def decide(
        self,
        *,
        vector: npt.NDArray[np.float32],
        session_id: str,
        activation: Activation,
        summary: str = "",
        judge: Judge | None = None,
        statements: Sequence[str] | None = None,
        statement_vectors: npt.NDArray[np.float32] | None = None,
    ) -> GuardVerdict:
        """The verdict for a change whose summary embeds to ``vector``.

        With a ``judge`` (and the ``summary`` text) it decides; without one, cosine
        alone does. The judge reads ``statements`` (what the change says, embedded as
        ``statement_vectors``), by default the summary itself; none: nothing is judged
        and the change is allowed. Blocking when judging (a few ms): call it off the
        event loop."""
        snapshot = self._snapshot
        scores = snapshot.scores(vector)
        if scores.size == 0:
            return GuardVerdict("allow")
        if judge is not None and summary:
            if statements is None or statement_vectors is None:
                statements, statement_vectors = (summary,), vector[np.newaxis, :]
            said = (tuple(statements), np.asarray(statement_vectors, dtype=np.float32))
            if len(said[0]) and said[0] != (summary,):
                # A decision is near when the summary or one of the statements is.
                by_statement = np.einsum("ij,kj->ik", said[1], snapshot.matrix).max(axis=0)
                scores = np.maximum(scores, by_statement)
            return self._judged(snapshot, scores, said, session_id, activation, judge)
        best = int(np.argmax(scores))
        top = snapshot.decisions[best]
        top_score = float(scores[best])
        if top_score < activation.threshold:
            return GuardVerdict("allow", top, top_score)
        hits = np.flatnonzero(scores >= activation.threshold)  # few: sort only these
        warned = self.markers.warned(session_id) if session_id else set()
        for i in hits[np.argsort(-scores[hits])]:
            score = float(scores[i])
            decision = snapshot.decisions[int(i)]
            if decision.path in warned:
                continue
            if session_id:
                self.markers.mark(session_id, decision.path)
            return GuardVerdict(
                activation.mode, decision, score, hook_output(decision, score, activation.mode)
            )
        return GuardVerdict("repeat", top, top_score)

    def _judged(
        self,
        snapshot: DecisionSet,
        scores: npt.NDArray[np.float32],
        said: tuple[tuple[str, ...], npt.NDArray[np.float32]],
        session_id: str,
        activation: Activation,
        judge: Judge,
    ) -> GuardVerdict:
        """Cosine (``scores``: of the summary, or of a statement where nearer) picks the near
        decisions; the judge reads the pairs of (statement of the change, sentence of a
        near decision) nearest by cosine."""
        statements, vectors = said
        near = _near(scores)
        if not near or not statements:
            # Nothing near, or the change says nothing to judge (a file change of code only).
            best = near[0] if near else int(np.argmax(scores))
            return GuardVerdict("allow", snapshot.decisions[best], 0.0)
        candidates = snapshot.sentences_of(near)
        if candidates.size:
            # (statements, sentences); for a Bash call one row, the summary's.
            sims = np.einsum("ij,kj->ik", vectors, snapshot.sentence_matrix[candidates])
            order = _pairs_in_turn(sims, self.sentence_floor)
            if not order:
                # No sentence of the near decisions shares the change's subject: nothing
                # to judge (SENTENCE_FLOOR). When one does, the best pairs are judged
                # together: the int8 judge's scores move with the batch.
                return GuardVerdict("allow", snapshot.decisions[near[0]], 0.0)
            picked = [(statements[s], int(candidates[c])) for s, c in order]
        else:
            picked = []
        pairs = [(statement, snapshot.sentences[k][1]) for statement, k in picked]
        owners = [snapshot.sentences[k][0] for _, k in picked]
        if not pairs:  # the near decisions have no sentence with content: judge the statement
            top = near[0]
            nearest = int(np.argmax(np.einsum("ij,j->i", vectors, snapshot.matrix[top])))
            pairs = [(statements[nearest], snapshot.decisions[top].text)]
            owners = [top]
        probs = judge.score(pairs)[:, CONTRADICTION]
        threshold = self.switch.settings().judge_threshold or judge.thresholds.guard
        best_by_row: dict[int, float] = {}
        for row, p in zip(owners, probs, strict=True):
            best_by_row[row] = max(float(p), best_by_row.get(row, 0.0))
        top_row, top_p = max(best_by_row.items(), key=lambda kv: kv[1])
        if top_p < threshold:
            return GuardVerdict("allow", snapshot.decisions[top_row], top_p)
        # Of the decisions the judge read as contradicted, the one nearest the change is
        # cited, not the one it scored highest: a sentence of a side decision can score
        # higher ("uv add requests" against the pinning rule 0.92, against "requests is
        # not used" 0.86, on tests/perf/guard_cal_cases.py).
        against = sorted(
            ((row, p) for row, p in best_by_row.items() if p >= threshold),
            key=lambda kv: (-float(scores[kv[0]]), -kv[1]),
        )
        warned = self.markers.warned(session_id) if session_id else set()
        for row, p in against:
            decision = snapshot.decisions[row]
            if decision.path in warned:
                continue
            if session_id:
                self.markers.mark(session_id, decision.path)
            return GuardVerdict(
                activation.mode, decision, p, hook_output(decision, p, activation.mode, judged=True)
            )
        return GuardVerdict("repeat", snapshot.decisions[top_row], top_p)


def _word_weights(snapshot: DecisionSet) -> dict[str, float]:
    """The idf of each word of the decisions' sentences: log(1 + decisions / decisions with
    the word)."""
    holders: dict[str, set[int]] = {}
    for row, text in snapshot.sentences:
        for word in content_words(text):
            holders.setdefault(word, set()).add(row)
    total = len(snapshot.decisions)
    return {w: math.log(1 + total / len(rows)) for w, rows in holders.items()}


def _near(scores: npt.NDArray[np.float32]) -> list[int]:
    """The decisions the judge may read: the nearest few with cosine ≥ SUBJECT_FLOOR."""
    near = np.flatnonzero(scores >= SUBJECT_FLOOR)
    return [int(i) for i in near[np.argsort(-scores[near])][:JUDGED_DECISIONS]]


def _pairs_in_turn(sims: npt.NDArray[np.float32], floor: float) -> list[tuple[int, int]]:
    """The (statement, sentence) pairs to judge, at most :data:`JUDGED_PAIRS`, from
    ``sims`` (statements × sentences, cosine).

    A statement takes part only when its nearest sentence reaches ``floor``: a line that
    shares no decision's subject is not judged (the judge read ``branches: [main]``, at
    cosine 0.27 with ADR-0007's rule, as against it: 0.92). Each one's nearest sentence
    comes first, nearest pairs first, then each one's second, and so on, so that one
    statement does not take every pair. With one statement (a Bash call) these are its
    nearest sentences, the floor applying to the first, as before.
    """
    ranked = np.argsort(-sims, axis=1, kind="stable")
    taking = [int(s) for s in np.flatnonzero(sims[np.arange(len(sims)), ranked[:, 0]] >= floor)]
    pairs: list[tuple[int, int]] = []
    for turn in range(min(JUDGED_PAIRS, sims.shape[1])):
        row = sorted(taking, key=lambda s: -float(sims[s, ranked[s, turn]]))
        pairs += [(s, int(ranked[s, turn])) for s in row]
    return pairs[:JUDGED_PAIRS]
