"""Consolidation: pending raw lines → checked facts → subject pages, one transaction per step.

``consolidate(vault, engine, force=False, stop=None, progress=None) -> Report``

1. A non-blocking lock (``.antinomy/memory/consolidate.lock``): a second run
   returns ``already_running`` at once.
2. The open batch is closed when it is from an earlier day (or always with
   ``force``). Pending input: re-queued fragments, then each closed batch's
   lines past its watermark in the progress journal.
3. Input is cut into steps that fit the model's context (a large batch is
   split; nothing overflows), up to ``max_input_tokens`` per run.
4. Each step: one structured request (shared two-attempt policy), citation
   control per fact, then one transaction writing the touched subject pages,
   the progress journal and a log entry. A re-run after a crash at any point
   consolidates the same input once: the watermark moves only with the pages.
5. An unreadable answer stops the run with ``json_failure``: that input stays
   pending, the raw answers are kept in ``.antinomy/memory/debug/``.

Statuses: ``ok`` (facts written), ``empty`` (input consumed, no fact
accepted), ``nothing`` (no pending input), ``already_running``,
``json_failure``, ``stopped`` (Stop pressed; finished steps are kept).

Call from a worker thread (it blocks on the model); ``stop`` and ``progress``
may be used from any thread.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from desktop.flows.memory.batches import RawLine, RawStore, _atomic_write, split_line_id
from desktop.flows.memory.capture import close_open_batch, close_stale_batch
from desktop.flows.memory.citations import Checked, Rejected, check_fact
from desktop.flows.memory.pages import (
    DEFAULT_FOLDER,
    Fact,
    SubjectPage,
    append_to_page,
    clean_subject_name,
    fact_key,
    read_pages,
    render_new_page,
    subject_key,
)
from desktop.flows.memory.progress import Progress, log_write, progress_write, read_progress
from desktop.flows.memory.prompt import (
    build_prompt,
    fact_schema,
    line_budget,
    shape,
    subjects_block,
)
from desktop.flows.memory.rejected import RejectedFragment, RejectedStore, fragment_id
from desktop.flows.memory.support import SUPPORT_THRESHOLD
from desktop.vault.layout import state_dir, vault_root
from desktop.vault.transactions import Plan, Write, apply_plan, inspect_plan, new_operation_id
from inference.base import GenerationSettings, Generator, StopFlag
from inference.structured import complete_structured

Status = Literal["ok", "nothing", "empty", "already_running", "json_failure", "stopped"]
#: (steps done, steps planned, what is happening)
ProgressFn = Callable[[int, int, str], None]


@dataclass(frozen=True)
class MemorySettings:
    subjects_folder: str = DEFAULT_FOLDER
    memory_folder: str = "Antinomy/Memory"
    max_facts: int = 6
    #: At least this many facts per request. With 0 the shipped 135M model answers
    #: ``{"facts": []}`` by reflex; with 1 it copies the user's statements (its
    #: citations are often off by one, which citation control then rejects).
    min_facts: int = 1
    #: Lines per request: more lines per call means fewer facts per line from a small model.
    max_lines_per_step: int = 40
    max_output_tokens: int = 700
    #: Source-line tokens taken per run (the rest stays pending for the next run).
    max_input_tokens: int = 24_000
    threshold: float = SUPPORT_THRESHOLD


@dataclass(frozen=True)
class AcceptedFact:
    subject: str
    section: str
    text: str
    citations: tuple[str, ...]
    kind: str
    date: str | None
    page: str
    support: float
    date_stripped: str | None = None


@dataclass(frozen=True)
class Report:
    status: Status
    accepted: tuple[AcceptedFact, ...] = ()
    rejected: tuple[RejectedFragment, ...] = ()
    #: Facts already on their page (not written twice).
    duplicates: int = 0
    steps: int = 0
    lines_read: int = 0
    lines_consumed: int = 0
    #: Input still pending when the run ended (budget, Stop, failure).
    lines_pending: int = 0
    operations: tuple[str, ...] = ()
    pages: tuple[str, ...] = ()
    #: json_failure: where the raw answers are, and the start of the first one.
    debug_path: str = ""
    extract: str = ""
    message: str = ""
    seconds: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    finished_at: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Step:
    source: str
    lines: list[RawLine]
    #: Batch watermark this step moves (None for a requeue).
    batch_id: str | None = None
    through: int = 0
    requeue_id: str | None = None
    tokens: int = 0


@dataclass
class _Run:
    accepted: list[AcceptedFact] = field(default_factory=list)
    rejected: list[RejectedFragment] = field(default_factory=list)
    duplicates: int = 0
    steps: int = 0
    lines_read: int = 0
    lines_consumed: int = 0
    operations: list[str] = field(default_factory=list)
    pages: list[str] = field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0


class ConsolidationBusy(Exception):
    pass


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
    force: bool = False,
    stop: StopFlag | None = None,
    progress: ProgressFn | None = None,
    settings: MemorySettings | None = None,
) -> Report:
    root = vault_root(vault)
    settings = settings or MemorySettings()
    started = time.perf_counter()
    try:
        with consolidation_lock(root):
            report = _consolidate(root, engine, force, stop, progress, settings)
    except ConsolidationBusy:
        return Report(
            "already_running",
            message="A consolidation is already running for this vault — wait for it to finish.",
        )
    report = _finish(report, started)
    save_report(root, report)
    return report


def _finish(report: Report, started: float) -> Report:
    from dataclasses import replace

    return replace(
        report,
        seconds=round(time.perf_counter() - started, 3),
        finished_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


def _consolidate(
    root: Path,
    engine: Generator,
    force: bool,
    stop: StopFlag | None,
    on_progress: ProgressFn | None,
    s: MemorySettings,
) -> Report:
    if force:
        close_open_batch(root, reason="on demand")
    else:
        close_stale_batch(root, today=datetime.now(UTC).date().isoformat())
    store = RawStore(root)
    rejected_store = RejectedStore(root)
    journal = read_progress(root, s.memory_folder)
    if not _anything_pending(store, rejected_store, journal):
        return Report("nothing", message="Nothing to consolidate: no closed batch has new lines.")
    pages = read_pages(root, s.subjects_folder)
    subjects = subjects_block(pages, [], engine)
    budget = line_budget(engine, subjects=subjects, max_output_tokens=s.max_output_tokens)
    steps = _plan_steps(store, rejected_store, journal, engine, budget, s)
    if not steps:
        return Report("nothing", message="Nothing to consolidate: no closed batch has new lines.")
    total_lines = sum(_step_span(st) for st in steps)
    run = _Run()
    settings = GenerationSettings(max_tokens=s.max_output_tokens)
    for index, step in enumerate(steps):
        if stop is not None and stop.is_set():
            return _report(run, "stopped", total_lines, "Stopped; finished steps were kept.")
        if on_progress:
            on_progress(index, len(steps), f"consolidating {step.source}")
        pages = read_pages(root, s.subjects_folder)
        answer: dict[str, Any] = {"facts": [], "new_subjects": []}
        if step.lines:
            prompt = build_prompt(
                step.lines,
                subjects=subjects_block(pages, step.lines, engine),
                max_facts=s.max_facts,
            )
            result = complete_structured(
                engine,
                prompt.messages,
                shape=shape,
                schema=fact_schema(s.max_facts, min_facts=s.min_facts),
                settings=settings,
                stop=stop,
            )
            run.tokens_in += result.tokens_in
            run.tokens_out += result.tokens_out
            if result.status == "stopped":
                return _report(run, "stopped", total_lines, "Stopped; finished steps were kept.")
            if result.status == "format_failure":
                debug = _save_debug(root, step, result.raw_answers)
                report = _report(
                    run,
                    "json_failure",
                    total_lines,
                    f"The model's answer for {step.source} was not the expected JSON, even after "
                    f"a stricter retry; that input stays pending. Raw answers: {debug}",
                )
                from dataclasses import replace

                return replace(
                    report, debug_path=str(debug), extract=(result.raw_answers[0] or "")[:300]
                )
            answer = result.value
            run.lines_read += len(step.lines)
        _write_step(root, step, answer, pages, journal, rejected_store, run, s, prompt_lines(step))
        journal = read_progress(root, s.memory_folder)
        run.steps += 1
        run.lines_consumed += _step_span(step)
    if on_progress:
        on_progress(len(steps), len(steps), "done")
    status: Status = "ok" if run.accepted else "empty"
    return _report(run, status, total_lines, "")


def prompt_lines(step: _Step) -> dict[int, RawLine]:
    return {i + 1: line for i, line in enumerate(step.lines)}


def _step_span(step: _Step) -> int:
    return len(step.lines)


def _report(run: _Run, status: Status, total_lines: int, message: str) -> Report:
    return Report(
        status=status,
        accepted=tuple(run.accepted),
        rejected=tuple(run.rejected),
        duplicates=run.duplicates,
        steps=run.steps,
        lines_read=run.lines_read,
        lines_consumed=run.lines_consumed,
        lines_pending=max(0, total_lines - run.lines_consumed),
        operations=tuple(run.operations),
        pages=tuple(dict.fromkeys(run.pages)),
        message=message,
        tokens_in=run.tokens_in,
        tokens_out=run.tokens_out,
    )


# ---------------------------------------------------------------------- planning


def _anything_pending(store: RawStore, rejected: RejectedStore, journal: Progress) -> bool:
    """Cheap check before the model is needed (the CLI loads it lazily)."""
    if set(rejected.requested()) - journal.requeues:
        return True
    for batch in store.closed_batches():
        if batch.lines and batch.lines[-1].number > journal.through.get(batch.batch_id, 0):
            return True
    return False


def _plan_steps(
    store: RawStore,
    rejected: RejectedStore,
    journal: Progress,
    engine: Generator,
    budget: int,
    s: MemorySettings,
) -> list[_Step]:
    steps: list[_Step] = []
    for rid in sorted(set(rejected.requested()) - journal.requeues):
        lines = _requeue_lines(store, rejected.get(rid))
        steps.extend(_split(lines, engine, budget, s, source=f"requeue {rid}", requeue_id=rid))
    for batch in store.closed_batches():
        done = journal.through.get(batch.batch_id, 0)
        fresh = [line for line in batch.lines if line.number > done]
        if not fresh:
            continue
        steps.extend(_split(fresh, engine, budget, s, source=batch.batch_id))
    taken: list[_Step] = []
    used = 0
    for step in steps:
        if taken and used + step.tokens > s.max_input_tokens:
            break
        taken.append(step)
        used += step.tokens
    return taken


def _split(
    lines: Sequence[RawLine],
    engine: Generator,
    budget: int,
    s: MemorySettings,
    *,
    source: str,
    requeue_id: str | None = None,
) -> list[_Step]:
    """Cut ``lines`` into steps of at most ``budget`` tokens and ``max_lines_per_step`` lines.

    Withdrawn lines are consumed (the watermark passes them) but never sent.
    """
    steps: list[_Step] = []
    current: list[RawLine] = []
    tokens = 0
    last = 0
    for line in lines:
        cost = engine.count_tokens(f"[{len(current) + 1}] {line.role}: {line.text}") + 1
        if (
            not line.withdrawn
            and current
            and (tokens + cost > budget or len(current) >= s.max_lines_per_step)
        ):
            steps.append(_make_step(current, tokens, last, source, requeue_id))
            current, tokens = [], 0
        last = line.number
        if line.withdrawn:
            continue
        if cost > budget:  # one enormous line: cut to fit rather than overflow
            line = _truncate(line, engine, budget)
            cost = budget
        current.append(line)
        tokens += cost
    if current or requeue_id or lines:
        steps.append(_make_step(current, tokens, last, source, requeue_id))
    if requeue_id and len(steps) > 1:
        steps = steps[:1]  # a requeue is small; one step records it done
    return steps


def _make_step(
    lines: list[RawLine], tokens: int, through: int, source: str, requeue_id: str | None
) -> _Step:
    if requeue_id:
        return _Step(source, list(lines), requeue_id=requeue_id, tokens=tokens)
    batch_id = source
    first = lines[0].number if lines else through
    return _Step(
        f"{batch_id}#L{first}-L{through}",
        list(lines),
        batch_id=batch_id,
        through=through,
        tokens=tokens,
    )


def _truncate(line: RawLine, engine: Generator, budget: int) -> RawLine:
    from dataclasses import replace

    text = line.text
    while text and engine.count_tokens(text) + 8 > budget:
        text = text[: int(len(text) * 0.8)]
    return replace(line, text=text)


def _requeue_lines(store: RawStore, frag: RejectedFragment) -> list[RawLine]:
    wanted = frag.line_ids or frag.source_ids
    by_batch: dict[str, set[int]] = {}
    for line_id in wanted:
        parts = split_line_id(line_id)
        if parts is None:
            continue
        span = range(parts[1] - 2, parts[1] + 3) if frag.line_ids else range(parts[1], parts[1] + 1)
        by_batch.setdefault(parts[0], set()).update(span)
    out: list[RawLine] = []
    for batch_id, numbers in by_batch.items():
        out += [
            line
            for line in store.read(batch_id).lines
            if line.number in numbers and not line.withdrawn
        ]
    return out


# ---------------------------------------------------------------------- writing


def _write_step(
    root: Path,
    step: _Step,
    answer: dict[str, Any],
    pages: list[SubjectPage],
    journal: Progress,
    rejected_store: RejectedStore,
    run: _Run,
    s: MemorySettings,
    numbered: dict[int, RawLine],
) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    by_key: dict[str, SubjectPage] = {}
    for page in pages:
        for name in (page.name, *page.aliases):
            by_key.setdefault(subject_key(name), page)
    new_aliases: dict[str, list[str]] = {}
    canonical: dict[str, str] = {}
    for entry in answer.get("new_subjects", [])[:8]:
        name = clean_subject_name(str(entry.get("name") or ""))
        if not name:
            continue
        aliases = [
            clean_subject_name(str(a)) for a in entry.get("aliases") or [] if isinstance(a, str)
        ]
        aliases = [a for a in aliases if a and subject_key(a) != subject_key(name)]
        for alias in aliases:
            canonical.setdefault(subject_key(alias), name)
        new_aliases.setdefault(subject_key(name), []).extend(aliases)

    accepted: list[tuple[Checked, str]] = []
    rejected: list[RejectedFragment] = []
    seen: set[tuple[str, str]] = set()
    source_ids = tuple(line.line_id for line in step.lines)
    for proposal in answer.get("facts", []):
        checked = check_fact(proposal, numbered, threshold=s.threshold)
        if isinstance(checked, Rejected):
            rejected.append(_fragment(checked, step.source, source_ids, now))
            continue
        fact = checked.fact
        key = subject_key(fact.subject)
        target = by_key.get(key) or by_key.get(subject_key(canonical.get(key, "")))
        name = target.name if target else canonical.get(key, fact.subject)
        existing = {fact_key(f.text) for f in target.facts} if target else set()
        ident = (subject_key(name), fact_key(fact.text))
        if fact_key(fact.text) in existing or ident in seen:
            run.duplicates += 1
            continue
        seen.add(ident)
        accepted.append(
            (Checked(_renamed(fact, name), checked.support, checked.date_stripped), name)
        )

    writes: list[Write] = []
    touched: dict[str, list[Fact]] = {}
    for checked, name in accepted:
        touched.setdefault(name, []).append(checked.fact)
    paths: dict[str, str] = {}
    for name, facts in touched.items():
        found = by_key.get(subject_key(name))
        aliases = list(dict.fromkeys(new_aliases.get(subject_key(name), [])))
        if found is None:
            path = _free_path(root, s.subjects_folder, name)
            summary = f"{name}: {facts[0].text}"[:200]
            content = render_new_page(
                name=name, aliases=aliases, summary=summary, facts=facts, folder=s.subjects_folder
            )
            writes.append(Write.create(path, content))
        else:
            path = found.path
            known = {subject_key(x) for x in found.aliases}
            fresh = [a for a in aliases if subject_key(a) not in known]
            content = append_to_page(
                found.text, facts=facts, new_aliases=fresh, folder=s.subjects_folder
            )
            writes.append(Write.replace(path, content, expected_sha256=found.sha256))
        paths[name] = path

    if step.requeue_id:
        journal.requeues.add(step.requeue_id)
    else:
        assert step.batch_id is not None
        journal.through[step.batch_id] = max(journal.through.get(step.batch_id, 0), step.through)
    writes.append(progress_write(journal, s.memory_folder))
    operation_id = new_operation_id("memory")
    writes.append(
        log_write(
            root,
            s.memory_folder,
            _log_entry(now, operation_id, step, accepted, rejected, run.duplicates, paths),
        )
    )

    # Fragments first: a crash after this line leaves them listed (deduplicated by id on a re-run).
    rejected_store.add(rejected)
    plan = Plan(
        operation_id,
        "memory",
        f"Consolidate {step.source}: {len(accepted)} fact(s) on {len(touched)} page(s)",
        tuple(writes),
    )
    apply_plan(root, plan, approval=inspect_plan(root, plan).approval)
    run.operations.append(operation_id)
    run.rejected.extend(rejected)
    for checked, name in accepted:
        f = checked.fact
        run.accepted.append(
            AcceptedFact(
                f.subject,
                f.section,
                f.text,
                f.citations,
                f.kind,
                f.date,
                paths[name],
                round(checked.support, 3),
                checked.date_stripped,
            )
        )
        run.pages.append(paths[name])


def _free_path(root: Path, folder: str, name: str) -> str:
    """``<folder>/<name>.md``, or ``<name> (subject).md`` if a note of that name is not ours."""
    path = f"{folder}/{name}.md"
    if (root / path).exists():
        path = f"{folder}/{name} (subject).md"
    return path


def _renamed(fact: Fact, name: str) -> Fact:
    from dataclasses import replace

    return replace(fact, subject=name)


def _fragment(
    rej: Rejected, source: str, source_ids: tuple[str, ...], now: str
) -> RejectedFragment:
    return RejectedFragment(
        fragment_id=fragment_id(source, rej.proposal),
        reason=rej.reason,
        detail=rej.detail,
        subject=str(rej.proposal.get("subject") or ""),
        text=str(rej.proposal.get("text") or ""),
        line_ids=rej.line_ids,
        source=source,
        source_ids=source_ids,
        at=now,
        proposal=json.loads(json.dumps(rej.proposal, default=str)),
    )


def _log_entry(
    now: str,
    operation_id: str,
    step: _Step,
    accepted: list[tuple[Checked, str]],
    rejected: list[RejectedFragment],
    duplicates: int,
    paths: dict[str, str],
) -> str:
    lines = [
        f"## {now} — {operation_id}",
        "",
        f"- input: {step.source} ({len(step.lines)} lines read)",
        f"- accepted {len(accepted)}, rejected {len(rejected)}",
    ]
    for name, path in paths.items():
        lines.append(f"- page [[{path[:-3]}|{name}]]")
    for frag in rejected:
        lines.append(f"- rejected {frag.fragment_id} ({frag.reason}): {frag.detail}")
    stripped = [c for c, _ in accepted if c.date_stripped]
    for c in stripped:
        lines.append(
            f"- date {c.date_stripped} stripped from “{c.fact.text[:60]}”: not in the cited lines"
        )
    return "\n".join(lines) + "\n"


def _save_debug(root: Path, step: _Step, answers: Sequence[str]) -> Path:
    folder = state_dir(root, "memory", "debug")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    path = folder / f"json-failure-{stamp}.txt"
    body = [f"input: {step.source}"]
    for i, a in enumerate(answers, 1):
        body += [f"--- answer {i} ---", a]
    _atomic_write(path, ("\n".join(body) + "\n").encode("utf-8"))
    return path


# ---------------------------------------------------------------------- reports


def save_report(root: Path, report: Report) -> None:
    path = state_dir(root, "memory") / "last-report.json"
    _atomic_write(path, json.dumps(report.to_json(), ensure_ascii=False, indent=1).encode("utf-8"))


def last_report(vault: str | Path) -> dict[str, Any] | None:
    """The last run's report as saved (JSON dict), or None."""
    path = state_dir(vault_root(vault), "memory") / "last-report.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    return data if isinstance(data, dict) else None
