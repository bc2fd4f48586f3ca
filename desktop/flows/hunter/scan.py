"""The tension scan: select notes, let the judge decide, the model explain, code verify.

Blocking; call it from a worker thread with engines that may be used from that
thread (``Runtime.queued_generator()`` / ``queued_judge()`` in the app, plain
engines in the CLI and tests).

Each mode yields note pairs (classic: every pair of the notes in its prompt;
focus: the note and each neighbour; whole vault: nearest neighbours in the
similarity band). :class:`~desktop.flows.judging.NoteJudge` compares their
sentences; a pair whose strongest sentence pair passes the judge's calibrated
threshold is shown with those two sentences as quotes — still verified like
any model answer. The language model then writes each shown pair's one-line
description. Classic mode also asks the model for pairs, as Antinomia did;
each is re-checked by the judge and dropped (``judge_disagrees``) unless the
judge reads its quotes as contradicting.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from desktop.flows.hunter.describe import Describer, plain_description
from desktop.flows.hunter.dismissals import read_store, stored_peers, targets_of
from desktop.flows.hunter.ignored import Ignoring
from desktop.flows.hunter.learning import ScanLearning, dismissed, hide_like_dismissed
from desktop.flows.hunter.opinion import (
    SecondOpinion,
    ask_second_opinion,
    is_server,
    opinion_report,
)
from desktop.flows.hunter.pace import PACE, JudgingAhead
from desktop.flows.hunter.prompt import (
    ARRAY_KEYS,
    PromptNote,
    answer_schema,
    build_messages,
    excerpt,
    labels_for,
)
from desktop.flows.hunter.records import (
    Attempt,
    Excluded,
    Mode,
    Pair,
    ScanError,
    ScanRun,
    ScanSettings,
    save_last_run,
    sort_pairs,
)
from desktop.flows.hunter.select import SOURCES
from desktop.flows.hunter.verify import (
    NoteInPrompt,
    Verifier,
    recorded_with,
    records_pair,
)
from desktop.flows.judging import JudgingSettings, NoteJudge, NotePairVerdict, frame_counts
from desktop.flows.progress import ModelMeter, Progress, plural
from desktop.vault.index import VaultIndex
from desktop.vault.notes import NoteSkipped, read_note
from desktop.vault.sentence_vectors import SentenceVectorCache
from foundation.errors import AntinomyError, ModelUnavailable
from inference.base import GenerationSettings, Generator, Message, StopFlag
from inference.judge import CONTRADICTION, Judge
from inference.structured import complete_structured, object_with_array

log = logging.getLogger(__name__)


#: Tokens kept free besides the answer: chat template, rounding of estimates.
_MARGIN = 96


def _now() -> str:
    return datetime.now(UTC).astimezone().isoformat(timespec="seconds")


class ScanJob:
    """One run of :func:`scan`: its index, engines, verifier and counts."""

    def __init__(
        self,
        index: VaultIndex,
        engine: Generator,
        settings: ScanSettings,
        stop: StopFlag | None,
        progress: Progress | None,
        judge: Judge,
    ) -> None:
        self.index = index
        self.root = Path(index.root)
        self.engine = engine
        assert index.embedding is not None
        t0 = time.perf_counter()
        # Boilerplate is a frame repeated across the vault, so every note counts, not only
        # the ones this run judges.
        frames = frame_counts((p, (t, *al), body) for p, t, al, body in index.bodies())
        log.info("sentence frames of the vault read in %.2f s", time.perf_counter() - t0)
        self.judging = NoteJudge(
            judge,
            index.embedding,
            cache=SentenceVectorCache(index.root),
            settings=JudgingSettings(
                pairs_per_note_pair=settings.sentence_pairs, max_sentences=settings.max_sentences
            ),
            frames=frames,
        )
        self.opinion: SecondOpinion | None = None
        if settings.second_opinion and is_server(engine):
            self.opinion = SecondOpinion(engine, constrain=settings.constrain, stop=stop)
        self.learning = ScanLearning(self.root, judge, opinion=self.opinion is not None)
        self.hidden: list[Pair] = []
        self.ignoring = Ignoring(self.root)
        self.describer = Describer(engine, constrain=settings.constrain)
        self.settings = settings
        self.stop = stop
        self.progress = progress
        self.verifier = Verifier()
        self.excluded: list[Excluded] = []
        self.attempts: list[Attempt] = []
        self.raw_failures: list[str] = []
        self.loaded: dict[str, NoteInPrompt] = {}
        #: The dismissals kept in ``.antinomy/dismissed.json``, read with the notes' lists.
        self.stored = stored_peers(read_store(self.root))
        #: Title and aliases of each judged note: the words that name its subject.
        self.names: dict[str, tuple[str, ...]] = {}
        self.unloadable: set[str] = set()  # excluded once, not at every ask
        self.excerpts: dict[str, str] = {}
        self.types: dict[str, str] = {}
        self.failed_batches = 0
        self.batches = 0

    # -- notes -------------------------------------------------------------

    def load(self, paths: Sequence[str]) -> list[str]:
        """Read ``paths`` fresh from disk; unreadable ones become exclusions."""
        ok: list[str] = []
        for path in paths:
            if path in self.loaded:
                ok.append(path)
                continue
            if path in self.unloadable:
                continue
            if self.ignoring.skips(path):  # counted there, not an exclusion: the user's wish
                self.unloadable.add(path)
                continue
            try:
                note = read_note(self.root, path)
            except NoteSkipped as exc:
                self.excluded.append(Excluded(path, f"unreadable now: {exc}"))
                self.unloadable.add(path)
                continue
            body = self.ignoring.clean(note.body).strip()
            if not body:
                self.excluded.append(Excluded(path, "empty body"))
                self.unloadable.add(path)
                continue
            self.loaded[path] = NoteInPrompt(
                path=path,
                label=note.basename,
                basename=note.basename,
                text=body,
                sha256=note.sha256,
                dismissed=targets_of(path, note.frontmatter, self.stored),
                records=recorded_with(note),
            )
            self.excerpts[path] = excerpt(body, self.settings.body_chars)
            self.types[path] = note.type or "note"
            ok.append(path)
        return ok

    def load_indexed(self, paths: Sequence[str]) -> list[str]:
        """:meth:`load` for notes the index knows (a labelled pair's note may be gone)."""
        return self.load(paths) if len(self.index.summaries(paths)) == len(paths) else []

    def prompt_notes(self, paths: Sequence[str]) -> dict[str, NoteInPrompt]:
        """label → note for one prompt (labels unique within it)."""
        labels = labels_for(paths)
        out: dict[str, NoteInPrompt] = {}
        for path in paths:
            note = self.loaded[path]
            out[labels[path]] = replace(note, label=labels[path])
        return out

    def fit(self, paths: Sequence[str], *, must: int = 0) -> list[str]:
        """The longest prefix of ``paths`` whose prompt fits the model's context."""
        budget = self.engine.context_length - self.settings.max_answer_tokens - _MARGIN
        system, _ = build_messages([], focus=None)
        used = self.engine.count_tokens(system) + 40
        kept: list[str] = []
        for i, path in enumerate(paths):
            cost = self.engine.count_tokens(self.excerpts[path]) + 12
            if used + cost > budget and i >= max(must, 2):
                for rest in paths[i:]:
                    self.excluded.append(
                        Excluded(
                            rest,
                            f"did not fit the model's context ({self.engine.context_length} "
                            "tokens) — lower the cap or the body limit, or scan the whole vault",
                        )
                    )
                break
            used += cost
            kept.append(path)
        return kept

    # -- model -------------------------------------------------------------

    def ask(self, paths: Sequence[str], *, focus: str | None) -> str:
        """One prompt over ``paths``; returns the structured status."""
        notes = self.prompt_notes(paths)
        by_path = {n.path: n for n in notes.values()}
        prompt_notes = [
            PromptNote(p, by_path[p].label, self.types[p], self.excerpts[p]) for p in paths
        ]
        focus_note = next((n for n in prompt_notes if n.path == focus), None)
        system, user = build_messages(prompt_notes, focus=focus_note)
        possible = len(prompt_notes) * (len(prompt_notes) - 1) // 2
        if focus_note is not None:
            possible = len(prompt_notes) - 1
        if focus_note is not None:
            first = [focus_note.label]
        elif len(prompt_notes) == 2:
            first = [prompt_notes[0].label]
        else:
            first = []
        schema = answer_schema(
            [n.label for n in prompt_notes],
            max_pairs=max(1, min(self.settings.max_pairs_per_answer, possible)),
            first=first,
        )
        gen = GenerationSettings(
            max_tokens=self.settings.max_answer_tokens, constrain=self.settings.constrain
        )
        meter = self.meter(
            f"asking the model about {len(prompt_notes)} notes",
            prompt_tokens=self.engine.count_tokens(system) + self.engine.count_tokens(user),
            max_tokens=gen.max_tokens,
        )
        result = complete_structured(
            self.engine,
            [Message("system", system), Message("user", user)],
            shape=object_with_array(*ARRAY_KEYS),
            schema=schema,
            settings=gen,
            stop=meter,
            on_attempt=meter.attempt,
        )
        for i, c in enumerate(result.completions):
            self.attempts.append(
                Attempt(
                    prompt_chars=len(system) + len(user),
                    tokens_in=c.tokens_in,
                    tokens_out=c.tokens_out,
                    duration=c.duration,
                    prompt_seconds=c.prompt_seconds,
                    answer=c.text,
                    retry=i > 0,
                )
            )
        self.batches += 1
        if result.status == "ok":
            _, items = result.value
            self.verifier.check_answer(items, notes)
        elif result.status == "format_failure":
            self.failed_batches += 1
            self.raw_failures.extend(result.raw_answers)
        return result.status

    def tick(self, done: int, total: int, what: str) -> None:
        if self.progress is not None:
            self.progress(done, total, what)

    def meter(self, what: str, *, prompt_tokens: int, max_tokens: int) -> ModelMeter:
        """The Stop flag for one model request, reporting its prompt and tokens as progress."""
        return ModelMeter(
            self.stop,
            what=what,
            prompt_tokens=prompt_tokens,
            max_tokens=max_tokens,
            report=lambda text: self.tick(0, 1, text),
        )

    def close(self) -> None:
        if self.judging.cache is not None:
            self.judging.cache.close()
            self.judging.cache = None

    def stopped(self) -> bool:
        return self.stop is not None and self.stop.is_set()

    def recorded(self, a: str, b: str) -> bool:
        """A tension note and a note it records a clash with (or a decision and the one it
        supersedes): skipped before the budget, counted as ``recorded``."""
        if len(self.load([a, b])) < 2:
            return False  # unreadable now: the exclusion says so
        if not records_pair(self.loaded[a], self.loaded[b]):
            return False
        self.verifier.dropped["recorded"] += 1
        return True

    # -- judge -------------------------------------------------------------

    def judge_note_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[NotePairVerdict]:
        """Judge ``pairs`` (both notes loaded) and verify the ones that pass as pairs: shown,
        or hidden by what the user's decisions taught this vault (``self.hidden``)."""
        # A tension note against a note it links to would only find the tension it records.
        recorded = {p for p in pairs if records_pair(self.loaded[p[0]], self.loaded[p[1]])}
        if recorded:
            self.verifier.dropped["recorded"] += len(recorded)
            pairs = [p for p in pairs if p not in recorded]
        again = self.learning.pairs_to_judge_again(pairs, self.load_indexed)
        paths = sorted({p for pair in (*pairs, *again) for p in pair})
        what = f"reading and embedding the sentences of {plural(len(paths), 'note')}"
        self.tick(0, 1, what)
        summaries = self.index.summaries(paths)
        self.names.update({p: (s.title, *s.aliases) for p in paths if (s := summaries.get(p))})
        # The embedding's bar and time left cover the judging that follows.
        ahead = JudgingAhead(self.tick, PACE.judging_ahead(len(pairs) + len(again)))
        self.judging.prepare(
            {p: self.loaded[p].text for p in paths}, names=self.names, progress=ahead, what=what
        )
        verdicts = self.judging.judge_pairs(
            pairs, stop=self.stop, progress=lambda d, t, w: self.tick(d, t, w)
        )
        if not self.stopped():
            PACE.learn(self.judging.stats, embedded=ahead.embedded)
        learned_from = list(verdicts)
        if again and not self.stopped():
            # Judged only to learn their features: not counted in this run's figures.
            stats = copy.deepcopy(self.judging.stats)
            learned_from += self.judging.judge_pairs(again, stop=self.stop)
            self.judging.stats = stats
        self.learning.observe(learned_from, dismissed=lambda a, b: dismissed(self.loaded, a, b))
        vault_model = self.learning.fit()
        if vault_model is not None:
            self.judging.note_model = vault_model
        for v in verdicts:
            shipped = self.learning.shipped_shows(v)
            if vault_model is not None:
                p = vault_model.probability(v.features) if v.features else None
                v = replace(v, probability=p)
            # The vault's calibration only ever hides what the shipped one shows.
            shown = shipped and (vault_model is None or self.judging.shown(v))
            if v.best is None or not shipped:
                continue
            notes = self.prompt_notes([v.path_a, v.path_b])
            label = {n.path: n.label for n in notes.values()}
            item = {
                "note_a": label[v.path_a],
                "note_b": label[v.path_b],
                "quote_a": v.best.a.quote,
                "quote_b": v.best.b.quote,
                "description": "judged",  # replaced by the model's line, or the plain one
                "confidence": self.judging.confidence(v.contradiction),
            }
            before = len(self.verifier.accepted)
            self.verifier.check_answer([item], notes)
            if len(self.verifier.accepted) > before:
                pair = replace(
                    self.verifier.accepted[-1],
                    probability=round(v.contradiction, 4),
                    found_by="judge",
                    features=dict(v.features),
                )
                pair = self.learning.hidden_pair(pair, shown=shown)
                if pair.hidden_because:
                    self.verifier.accepted.pop()
                    self.hidden.append(pair)
                else:
                    self.verifier.accepted[-1] = pair
        return verdicts

    def recheck_model_pairs(self, first: int) -> None:
        """Classic mode: the model's own pairs (``accepted[first:]``) stand only if the judge
        reads their quotes as contradicting; those also found by the judge are merged."""
        model_pairs = self.verifier.accepted[first:]
        del self.verifier.accepted[first:]
        if not model_pairs:
            return
        scores = self.judging.judge.score([(p.quote_a, p.quote_b) for p in model_pairs])
        judged = {p.key(): i for i, p in enumerate(self.verifier.accepted)}
        threshold = self.judging.thresholds.contradiction
        for pair, row in zip(model_pairs, scores, strict=True):
            probability = float(row[CONTRADICTION])
            if probability < threshold:
                self.verifier.dropped["judge_disagrees"] += 1
                continue
            if pair.key() in judged:  # the judge found it too: keep the model's line
                i = judged[pair.key()]
                self.verifier.accepted[i] = replace(
                    self.verifier.accepted[i],
                    description=pair.description,
                    found_by="both",
                    described_by="model",
                )
                continue
            self.verifier.accepted.append(
                replace(
                    pair,
                    probability=round(probability, 4),
                    confidence=self.judging.confidence(probability),  # type: ignore[arg-type]
                    confidence_defaulted=False,
                    found_by="model",
                )
            )

    def describe(self, first_model: int | None = None) -> None:
        """Write each judged pair's description: the model's line, else the plain one."""
        budget = self.settings.describe
        ranked = sorted(
            range(len(self.verifier.accepted)),
            key=lambda i: -(self.verifier.accepted[i].probability or 0.0),
        )
        todo = [i for i in ranked if self.verifier.accepted[i].found_by == "judge"]
        asked = self.describer.engine.describes
        for n, i in enumerate(todo):
            pair = self.verifier.accepted[i]
            line = None
            if asked and n < budget and not self.stopped():
                total = min(budget, len(todo))
                self.tick(n, total, f"asking the model to describe pair {n + 1} of {total}")
                line = self.describer.describe(pair, stop=self.stop)
            if line:
                self.verifier.accepted[i] = replace(pair, description=line, described_by="model")
            else:
                self.verifier.accepted[i] = replace(
                    pair, description=plain_description(pair), described_by="plain"
                )


def scan(
    index: VaultIndex,
    engine: Generator,
    *,
    judge: Judge | None,
    mode: Mode = "classic",
    focus: str | None = None,
    settings: ScanSettings | None = None,
    stop: StopFlag | None = None,
    progress: Progress | None = None,
) -> ScanRun:
    """Find pairs of notes that disagree. Never raises for model trouble: the
    run's ``status`` says what happened. Raises :class:`ScanError` when the
    scan cannot start (unknown focus note, fewer than two notes, no vectors) and
    :class:`ModelUnavailable` when there is no judge: unjudged pairs are never shown."""
    settings = settings or ScanSettings()
    if judge is None:
        raise ModelUnavailable(
            "The scan cannot judge: the contradiction judge is not loaded — run "
            "`antinomy doctor` to see why (the file ships in models/judge/)."
        )
    if mode not in SOURCES:
        raise ScanError(f"Unknown scan mode {mode!r}: use classic, focus or whole-vault.")
    if SOURCES[mode].uses_focus and not focus:
        raise ScanError(f"A {mode} scan needs a focus note.")
    if index.embedding is None:
        raise ScanError(
            "The scan compares sentences by meaning and needs the embedding index: open the "
            "index with the embedder (`antinomy index` does)."
        )
    started = time.perf_counter()
    started_at = _now()
    s = ScanJob(index, engine, settings, stop, progress, judge)
    source = SOURCES[mode]
    focus = focus if source.uses_focus else None
    s.verifier.focus = s.ignoring.focus = focus
    status = "ok"
    error: str | None = None
    candidates = examined = considered = 0
    try:
        found = source.find(s, focus)
        candidates, examined, considered = found.candidates, found.examined, len(found.pairs)
        s.judge_note_pairs(found.pairs)
        status = "stopped" if s.stopped() else "ok"
        if found.ask_model and settings.ask_model and status == "ok":
            first = len(s.verifier.accepted)
            s.tick(0, 1, f"asking the model about {examined} notes")
            # The model may propose a pair the judge found: let it through verification
            # so the two merge (the model's description, the judge's quotes).
            judged = s.verifier.forget_seen()
            status = s.ask(found.ask_model, focus=None)
            s.verifier.remember_seen(judged)
            if status == "format_failure" and first:
                status = "ok"  # the judge's pairs stand; the failure is counted
            s.recheck_model_pairs(first)
    except ScanError:
        s.close()
        raise
    except AntinomyError as exc:
        log.warning("scan failed: %s", exc)
        status, error = "error", str(exc)
    if status in ("ok", "stopped"):
        hide_like_dismissed(s)
        ask_second_opinion(s)
    if status in ("ok", "stopped") and s.verifier.accepted:
        try:
            s.describe()
        except AntinomyError as exc:  # descriptions are a courtesy: the pairs still show
            log.warning("describing the pairs failed: %s", exc)
        for i, pair in enumerate(s.verifier.accepted):
            if pair.description == "judged":
                s.verifier.accepted[i] = replace(
                    pair, description=plain_description(pair), described_by="plain"
                )
    hidden = [replace(p, description=plain_description(p), described_by="plain") for p in s.hidden]
    if status in ("ok", "stopped"):
        s.learning.save()
    s.tick(1, 1, "done")
    s.close()
    attempts = [*s.attempts, *s.describer.attempts]
    stats = s.judging.stats
    for path in stats.notes_without_evidence:
        s.excluded.append(Excluded(path, stats.why_no_evidence.get(path, "no prose to compare")))
    run = ScanRun(
        started_at=started_at,
        mode=mode,
        status=status,  # type: ignore[arg-type]
        focus=focus,
        model=engine.model_name,
        backend=engine.backend_name,
        duration=time.perf_counter() - started,
        tokens_in=sum(a.tokens_in for a in attempts),
        tokens_out=sum(a.tokens_out for a in attempts),
        notes_examined=examined,
        candidates=candidates,
        pairs_considered=considered,
        batches=s.batches,
        failed_batches=s.failed_batches,
        excluded=tuple(sorted(set(s.excluded), key=lambda e: e.path)),
        pairs=sort_pairs(s.verifier.accepted),
        dropped=dict(sorted(s.verifier.dropped.items())),
        raw_answers=tuple([*s.raw_failures, *s.describer.raw_failures]),
        attempts=tuple(attempts),
        error=error,
        judge=judge.name,
        threshold=(
            s.judging.note_model.threshold
            if s.judging.note_model is not None
            else s.judging.thresholds.contradiction
        ),
        note_pairs_judged=stats.note_pairs,
        sentence_pairs_judged=stats.sentence_pairs_judged,
        sentence_pairs_left_out=stats.sentence_pairs_over_budget,
        sentences=stats.sentences,
        judge_seconds=round(stats.seconds_judging + stats.seconds_embedding, 3),
        description_failures=s.describer.failures,
        plain_descriptions_for="" if engine.describes else engine.model_name,
        notes_cut=tuple(sorted(stats.notes_cut)),
        not_evidence=dict(stats.not_evidence.most_common()),
        set_aside=dict(stats.set_aside.most_common()),
        decided_by=s.judging.note_model.model_id if s.judging.note_model is not None else "",
        judge_id=judge.model_id,
        hidden=sort_pairs(hidden),
        learning=s.learning.report(),
        second_opinion=opinion_report(s),
        ignored=s.ignoring.report(),
    )
    if run.status == "ok":
        try:
            save_last_run(s.root, run)
        except OSError as exc:  # the results still show; only the restart copy is lost
            log.warning("could not keep the last scan: %s", exc)
    return run
