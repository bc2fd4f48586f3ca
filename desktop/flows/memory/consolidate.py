"""Consolidation: pending raw lines → candidate facts → routed, gated facts → subject pages.

``consolidate(vault, engine, *, judge=None, embedder=None, force=False, stop=None,
progress=None) -> Report``

1. A non-blocking lock (``.antinomy/memory/consolidate.lock``): a second run
   returns ``already_running`` at once.
2. The open batch is closed when it is from an earlier day (or always with
   ``force``). Pending input is cut into steps (:mod:`.steps`).
3. Each step: **extraction in code** (:mod:`.extract`: the user's own
   declarative sentences, each with its line ids; every line gets an outcome);
   **routing by the model** (:mod:`.route`: subject from an enum, section from a
   fixed set, an optional third-person rephrasing; shared two-attempt policy);
   **citation control** (:mod:`.citations`: the rephrasing must be supported by
   its cited lines — lexically, and entailed by the judge when there is one —
   else the user's words are kept verbatim); **deduplication** (:mod:`.dedup`);
   a **summary line** per touched page (:mod:`.summary`); then one transaction
   writing the pages, the progress journal and a log entry. A crash at any
   point consolidates the same input once: the watermark moves only with the pages.
4. An unreadable routing answer stops the run with ``json_failure``: that step's
   input stays pending, the raw answers are kept (masked) in
   ``.antinomy/memory/debug/``. When the same statement fails in a second run it
   is quarantined (:mod:`.quarantine`) and the run goes on without it.
5. At most ``max_candidates_per_run`` candidates are routed per run; the rest
   stays pending for the next run (the report says how many lines).

Statuses: ``ok`` (facts written), ``empty`` (input consumed, no fact
written), ``nothing`` (no pending input), ``already_running``,
``json_failure``, ``stopped`` (Stop pressed; finished steps are kept).

Call from a worker thread (it blocks on the engines); ``stop`` and ``progress``
may be used from any thread.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from desktop.flows.memory.batches import RawStore, write_private
from desktop.flows.memory.capture import close_open_batch, close_stale_batch
from desktop.flows.memory.errors import ConsolidationBusy
from desktop.flows.memory.progress import read_progress
from desktop.flows.memory.quarantine import REASON as QUARANTINE_REASON
from desktop.flows.memory.records import (
    MemorySettings,
    ProgressFn,
    Report,
    Run,
    Status,
)
from desktop.flows.memory.rejected import RejectedStore
from desktop.flows.memory.secrets import mask_secrets
from desktop.flows.memory.steps import Step, anything_pending, plan_steps
from desktop.flows.memory.write_step import StepFailed, StepStopped, run_step
from desktop.vault.layout import state_dir, vault_root
from inference.base import Generator, StopFlag
from inference.embedder import Embedder
from inference.judge import Judge


@contextmanager
def consolidation_lock(root: Path) -> Iterator[None]:
    """One consolidation per vault, across processes; raises ConsolidationBusy at once."""
    fd = os.open(
        state_dir(root, "memory") / "consolidate.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600
    )
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConsolidationBusy from None
        yield
    finally:
        os.close(fd)


def consolidate(
    vault: str | Path,
    engine: Generator,
    *,
    judge: Judge | None = None,
    embedder: Embedder | None = None,
    force: bool = False,
    stop: StopFlag | None = None,
    progress: ProgressFn | None = None,
    settings: MemorySettings | None = None,
) -> Report:
    """Consolidate the vault's pending memory. ``judge``/``embedder`` None: lexical checks only."""
    root = vault_root(vault)
    settings = settings or MemorySettings()
    started = time.perf_counter()
    try:
        with consolidation_lock(root):
            report = _consolidate(root, engine, judge, embedder, force, stop, progress, settings)
    except ConsolidationBusy as busy:
        return Report("already_running", message=str(busy))
    report = replace(
        report,
        seconds=round(time.perf_counter() - started, 3),
        finished_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        judge_used=judge is not None,
        embedder_used=embedder is not None,
    )
    if report.status not in ("nothing",) and judge is None and report.candidates:
        note = "The judge was not used (none loaded): facts were checked lexically only."
        report = replace(report, message=f"{report.message} {note}".strip())
    save_report(root, report)
    return report


def _consolidate(
    root: Path,
    engine: Generator,
    judge: Judge | None,
    embedder: Embedder | None,
    force: bool,
    stop: StopFlag | None,
    on_progress: ProgressFn | None,
    s: MemorySettings,
) -> Report:
    if force:
        close_open_batch(root, reason="on demand")
    else:
        close_stale_batch(root, today=datetime.now(UTC).date().isoformat())
    store, rejected_store = RawStore(root), RejectedStore(root)
    journal = read_progress(root, s.memory_folder)
    if not anything_pending(store, rejected_store, journal):
        return Report("nothing", message="Nothing to consolidate: no closed batch has new lines.")
    steps = plan_steps(store, rejected_store, journal, max_lines=s.max_lines_per_step)
    if not steps:
        return Report("nothing", message="Nothing to consolidate: no closed batch has new lines.")
    total_lines = sum(st.span for st in steps)
    run = Run()
    for index, step in enumerate(steps):
        if stop is not None and stop.is_set():
            return _report(run, "stopped", total_lines, "Stopped; finished steps were kept.")
        if run.candidates >= s.max_candidates_per_run:
            return _report(
                run,
                "ok" if run.accepted else "empty",
                total_lines,
                f"This run's budget of {s.max_candidates_per_run} candidate facts is used; "
                "the rest stays pending for the next run.",
            )
        if on_progress:
            on_progress(index, len(steps), f"consolidating {step.source}")
        try:
            run_step(
                root,
                step,
                engine=engine,
                judge=judge,
                embedder=embedder,
                rejected_store=rejected_store,
                run=run,
                settings=s,
                stop=stop,
            )
        except StepStopped:
            return _report(run, "stopped", total_lines, "Stopped; finished steps were kept.")
        except StepFailed as failed:
            answers = [mask_secrets(a).text for a in failed.raw_answers]
            debug = _save_debug(root, step, answers)
            report = _report(
                run,
                "json_failure",
                total_lines,
                f"The model's answer for {step.source} was not the expected JSON, even after "
                f"a stricter retry; that input stays pending (if the same statement fails "
                f"again next run, it is quarantined and the rest goes on). Raw answers: {debug}",
            )
            return replace(report, debug_path=str(debug), extract=(answers[0] or "")[:300])
        run.steps += 1
        run.lines_consumed += step.span
    if on_progress:
        on_progress(len(steps), len(steps), "done")
    return _report(run, "ok" if run.accepted else "empty", total_lines, "")


def _report(run: Run, status: Status, total_lines: int, message: str) -> Report:
    quarantined = sum(1 for f in run.rejected if f.reason == QUARANTINE_REASON)
    if quarantined:
        note = (
            f"{quarantined} statement(s) quarantined: the model's answer was unreadable in two "
            "runs (list them with `antinomy memory quarantined`)."
        )
        message = f"{message} {note}".strip()
    return Report(
        status=status,
        accepted=tuple(run.accepted),
        rejected=tuple(run.rejected),
        duplicates=run.duplicates,
        steps=run.steps,
        lines_read=run.lines_read,
        lines_consumed=run.lines_consumed,
        lines_pending=max(0, total_lines - run.lines_consumed),
        lines=tuple(run.lines),
        line_counts=dict(Counter(o.outcome for o in run.lines)),
        candidates=run.candidates,
        operations=tuple(run.operations),
        pages=tuple(dict.fromkeys(run.pages)),
        summaries=dict(run.summaries),
        message=message,
        tokens_in=run.tokens_in,
        tokens_out=run.tokens_out,
    )


def _save_debug(root: Path, step: Step, answers: Sequence[str]) -> Path:
    folder = state_dir(root, "memory", "debug")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    path = folder / f"json-failure-{stamp}.txt"
    body = [f"input: {step.source}"]
    for i, a in enumerate(answers, 1):
        body += [f"--- answer {i} ---", a]
    write_private(path, ("\n".join(body) + "\n").encode("utf-8"))
    return path


# ---------------------------------------------------------------------- reports


def save_report(root: Path, report: Report) -> None:
    path = state_dir(root, "memory") / "last-report.json"
    write_private(path, json.dumps(report.to_json(), ensure_ascii=False, indent=1).encode("utf-8"))


def last_report(vault: str | Path) -> dict[str, Any] | None:
    """The last run's report as saved (JSON dict), or None."""
    path = state_dir(vault_root(vault), "memory") / "last-report.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    return data if isinstance(data, dict) else None
