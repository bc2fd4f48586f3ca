"""The tension scan: select notes, ask the model, verify every pair in code.

Blocking; call it from a worker thread with an engine that may be used from
that thread (``Runtime.queued_generator()`` in the app, a plain generator in
the CLI and tests).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from desktop.flows.hunter.prompt import (
    ARRAY_KEYS,
    PromptNote,
    answer_schema,
    build_messages,
    excerpt,
    labels_for,
)
from desktop.flows.hunter.records import (
    MODES,
    Attempt,
    Excluded,
    Mode,
    ScanRun,
    ScanSettings,
    save_last_run,
    sort_pairs,
)
from desktop.flows.hunter.select import (
    classic_candidates,
    focus_neighbours,
    plan_batches,
    scannable,
)
from desktop.flows.hunter.verify import NoteInPrompt, Verifier, dismissal_key
from desktop.vault.index import VaultIndex
from desktop.vault.notes import NoteSkipped, read_note
from inference.base import GenerationSettings, Generator, Message, StopFlag
from inference.errors import AntinomyError
from inference.structured import complete_structured, object_with_array

log = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]

#: Tokens kept free besides the answer: chat template, rounding of estimates.
_MARGIN = 96


class ScanError(AntinomyError):
    """The scan cannot start (bad focus note, too few notes, no embeddings)."""


def _now() -> str:
    return datetime.now(UTC).astimezone().isoformat(timespec="seconds")


class _Scan:
    def __init__(
        self,
        index: VaultIndex,
        engine: Generator,
        settings: ScanSettings,
        stop: StopFlag | None,
        progress: Progress | None,
    ) -> None:
        self.index = index
        self.root = Path(index.root)
        self.engine = engine
        self.settings = settings
        self.stop = stop
        self.progress = progress
        self.verifier = Verifier()
        self.excluded: list[Excluded] = []
        self.attempts: list[Attempt] = []
        self.raw_failures: list[str] = []
        self.loaded: dict[str, NoteInPrompt] = {}
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
            try:
                note = read_note(self.root, path)
            except NoteSkipped as exc:
                self.excluded.append(Excluded(path, f"unreadable now: {exc}"))
                continue
            body = note.body.strip()
            if not body:
                self.excluded.append(Excluded(path, "empty body"))
                continue
            fp = note.frontmatter.get("hunter_false_positives")
            dismissed = fp if isinstance(fp, list) else [fp] if isinstance(fp, str) else []
            self.loaded[path] = NoteInPrompt(
                path=path,
                label=note.basename,
                basename=note.basename,
                text=body,
                sha256=note.sha256,
                dismissed=frozenset(dismissal_key(d) for d in dismissed if d),
            )
            self.excerpts[path] = excerpt(body, self.settings.body_chars)
            self.types[path] = note.type or "note"
            ok.append(path)
        return ok

    def prompt_notes(self, paths: Sequence[str]) -> dict[str, NoteInPrompt]:
        """label → note for one prompt (labels unique within it)."""
        labels = labels_for(paths)
        out: dict[str, NoteInPrompt] = {}
        for path in paths:
            note = self.loaded[path]
            out[labels[path]] = NoteInPrompt(
                path, labels[path], note.basename, note.text, note.sha256, note.dismissed
            )
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
        result = complete_structured(
            self.engine,
            [Message("system", system), Message("user", user)],
            shape=object_with_array(*ARRAY_KEYS),
            schema=schema,
            settings=gen,
            stop=self.stop,
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

    def stopped(self) -> bool:
        return self.stop is not None and self.stop.is_set()


def scan(
    index: VaultIndex,
    engine: Generator,
    *,
    mode: Mode = "classic",
    focus: str | None = None,
    settings: ScanSettings | None = None,
    stop: StopFlag | None = None,
    progress: Progress | None = None,
) -> ScanRun:
    """Find pairs of notes that disagree. Never raises for model trouble: the
    run's ``status`` says what happened. Raises :class:`ScanError` when the
    scan cannot start (unknown focus note, fewer than two notes, no vectors)."""
    settings = settings or ScanSettings()
    if mode not in MODES:
        raise ScanError(f"Unknown scan mode {mode!r}: use classic, focus or whole-vault.")
    if mode == "focus" and not focus:
        raise ScanError("Focus mode needs a focus note.")
    started = time.perf_counter()
    started_at = _now()
    s = _Scan(index, engine, settings, stop, progress)
    s.verifier.focus = focus if mode == "focus" else None
    status = "ok"
    error: str | None = None
    candidates = examined = considered = 0
    try:
        if mode == "whole-vault":
            candidates, examined, considered, status = _whole_vault(s)
        else:
            paths = _single_prompt_notes(s, mode, focus)
            candidates = len(paths) + len(s.excluded)
            examined = len(paths)
            considered = examined * (examined - 1) // 2 if mode == "classic" else examined - 1
            s.tick(0, 1, f"asking the model about {examined} notes")
            status = s.ask(paths, focus=focus if mode == "focus" else None)
            s.tick(1, 1, "done")
    except ScanError:
        raise
    except AntinomyError as exc:
        log.warning("scan failed: %s", exc)
        status, error = "error", str(exc)
    if status == "format_failure":
        error = (
            "The model answered twice without the expected JSON structure "
            "(after one stricter retry)."
        )
    run = ScanRun(
        started_at=started_at,
        mode=mode,
        status=status,  # type: ignore[arg-type]
        focus=focus if mode == "focus" else None,
        model=engine.model_name,
        backend=engine.backend_name,
        duration=time.perf_counter() - started,
        tokens_in=sum(a.tokens_in for a in s.attempts),
        tokens_out=sum(a.tokens_out for a in s.attempts),
        notes_examined=examined,
        candidates=candidates,
        pairs_considered=considered,
        batches=s.batches,
        failed_batches=s.failed_batches,
        excluded=tuple(sorted(set(s.excluded), key=lambda e: e.path)),
        pairs=sort_pairs(s.verifier.accepted),
        dropped=dict(sorted(s.verifier.dropped.items())),
        raw_answers=tuple(s.raw_failures),
        attempts=tuple(s.attempts),
        error=error,
    )
    if run.status == "ok":
        try:
            save_last_run(s.root, run)
        except OSError as exc:  # the results still show; only the restart copy is lost
            log.warning("could not keep the last scan: %s", exc)
    return run


def _single_prompt_notes(s: _Scan, mode: Mode, focus: str | None) -> list[str]:
    if mode == "classic":
        ordered = classic_candidates(s.index, s.settings)
        chosen = ordered[: s.settings.cap]
        for path in ordered[s.settings.cap :]:
            s.excluded.append(Excluded(path, f"beyond the cap of {s.settings.cap} newest notes"))
        paths = s.fit(s.load(chosen))
    else:
        assert focus is not None
        if s.index.summaries([focus]).get(focus) is None:
            raise ScanError(f"The focus note {focus!r} is not in the index of this vault.")
        eligible, _ = scannable(s.index, s.settings)
        near = [p for p, _ in focus_neighbours(s.index, focus, eligible, s.settings.neighbours)]
        if not near:  # no vectors: fall back to the classic candidates
            near = [p for p in classic_candidates(s.index, s.settings) if p != focus]
            near = near[: s.settings.neighbours]
        loaded = s.load([focus, *near])
        if focus not in loaded:
            raise ScanError(f"The focus note {focus!r} cannot be read or is empty.")
        paths = s.fit(loaded, must=1)
    if len(paths) < 2:
        raise ScanError(
            f"A {mode} scan needs at least two notes to compare; this vault has {len(paths)} "
            f"eligible (types: {', '.join(s.settings.types)}; open ones only)."
        )
    return paths


def _whole_vault(s: _Scan) -> tuple[int, int, int, str]:
    if s.index.vectors is None or len(s.index.vectors) == 0:
        raise ScanError(
            "A whole-vault scan needs the embedding index: index the vault with the embedder "
            "first (`antinomy index`)."
        )
    eligible, excluded = scannable(s.index, s.settings)
    s.excluded.extend(excluded)
    s.tick(0, 1, "finding candidate pairs")
    plan = plan_batches(s.index, eligible, s.settings)
    s.excluded.extend(plan.excluded)
    examined: set[str] = set()
    considered = 0
    statuses: list[str] = []
    total = len(plan.batches)
    for i, batch in enumerate(plan.batches):
        if s.stopped():
            statuses.append("stopped")
            break
        s.tick(i, total, f"batch {i + 1}/{total}: {len(batch.notes)} notes")
        paths = s.load(batch.notes)
        if len(paths) < 2:
            continue
        status = s.ask(s.fit(paths), focus=None)
        statuses.append(status)
        if status == "stopped":
            break
        examined.update(paths)
        considered += sum(1 for p in batch.pairs if p <= set(paths))
    s.tick(total, total, "done")
    if "stopped" in statuses:
        status = "stopped"
    elif statuses and all(st == "format_failure" for st in statuses):
        status = "format_failure"
    else:
        status = "ok"
    return len(eligible), len(examined), considered, status
