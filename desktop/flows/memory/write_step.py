"""One consolidation step: extract, route, gate, deduplicate, summarise, write one transaction.

Called by :func:`~.consolidate.consolidate` on its worker thread; raises
:class:`StepFailed` (a routing answer unreadable for the first time: nothing
written, the step's input stays pending) or :class:`StepStopped`. A statement
whose answer was unreadable in an earlier run too is quarantined instead
(:mod:`.quarantine`) and the step goes on.

Lines are masked again as they are read (:func:`~.secrets.mask_secrets`), so a
batch captured before a masking rule existed never carries a secret further.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from desktop.flows.memory.batches import RawLine, RawStore
from desktop.flows.memory.citations import find_date, gate_fact
from desktop.flows.memory.conversations import cited_batches, conversation_writes
from desktop.flows.memory.dedup import find_duplicate
from desktop.flows.memory.extract import (
    DISPUTABLE,
    REASONS,
    Candidate,
    LineOutcome,
    extract_candidates,
)
from desktop.flows.memory.names import find_aliases
from desktop.flows.memory.pages import (
    Fact,
    SubjectPage,
    append_to_page,
    read_pages,
    render_new_page,
    subject_key,
)
from desktop.flows.memory.progress import log_write, progress_write, read_progress
from desktop.flows.memory.quarantine import QUARANTINE_AFTER, FailureLog, quarantine_fragment
from desktop.flows.memory.records import AcceptedFact, MemorySettings, Run
from desktop.flows.memory.rejected import RejectedFragment, RejectedStore, fragment_id
from desktop.flows.memory.route import (
    make_offer,
    read_route,
    route_messages,
    route_schema,
    route_shape,
)
from desktop.flows.memory.secrets import mask_secrets
from desktop.flows.memory.steps import Step
from desktop.flows.memory.subject import conversation_names
from desktop.flows.memory.summary import write_summary
from desktop.vault.frontmatter import set_key
from desktop.vault.transactions import Plan, Write, apply_plan, inspect_plan, new_operation_id
from inference.base import GenerationSettings, Generator, StopFlag
from inference.embedder import Embedder
from inference.judge import Judge
from inference.structured import complete_structured


class StepFailed(Exception):
    def __init__(self, raw_answers: tuple[str, ...]) -> None:
        super().__init__("format failure")
        self.raw_answers = raw_answers


class StepStopped(Exception):
    pass


@dataclass
class _Target:
    """A page facts go to in this step (existing, or new)."""

    name: str
    page: SubjectPage | None
    facts: list[Fact] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)


def run_step(
    root: Path,
    step: Step,
    *,
    engine: Generator,
    judge: Judge | None,
    embedder: Embedder | None,
    rejected_store: RejectedStore,
    run: Run,
    settings: MemorySettings,
    stop: StopFlag | None,
) -> None:
    s = settings
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    pages = read_pages(root, s.subjects_folder)
    by_key: dict[str, SubjectPage] = {}
    for page in pages:
        for name in (page.name, *page.aliases):
            by_key.setdefault(subject_key(name), page)
    lines = [replace(line, text=mask_secrets(line.text).text) for line in step.lines]
    vouched = frozenset(rejected_store.get(step.requeue_id).line_ids) if step.requeue_id else None
    extraction = extract_candidates(lines, vouched=vouched or frozenset())
    details: dict[str, list[str]] = {}
    targets: dict[str, _Target] = {}
    accepted: list[tuple[AcceptedFact, str]] = []
    source_ids = tuple(line.line_id for line in step.lines)
    # A line left out as too short or hedged may still be a fact to its speaker: listed
    # with its reason and re-queueable (it is then read as a statement).
    rejected: list[RejectedFragment] = [
        _left_out(line, outcome.outcome, step.source, source_ids, now)
        for line, outcome in zip(lines, extraction.lines, strict=True)
        if outcome.outcome in DISPUTABLE
    ]
    for frag in rejected:
        details.setdefault(frag.line_ids[0], []).append(f"set aside {frag.fragment_id}")
    gen = GenerationSettings(max_tokens=s.max_route_tokens)
    spoken = {line.line_id: line.time[:10] for line in step.lines}
    tokens = [0, 0]
    names = conversation_names(line.text for line in lines if not line.withdrawn)
    for candidate in extraction.candidates:
        if stop is not None and stop.is_set():
            raise StepStopped
        known_pages = pages + [_pseudo(t.name) for t in targets.values() if t.page is None]
        offer = make_offer(candidate, known_pages, names=names)
        result = complete_structured(
            engine,
            route_messages(candidate, offer),
            shape=route_shape,
            schema=route_schema(offer),
            settings=gen,
            stop=stop,
        )
        tokens[0] += result.tokens_in
        tokens[1] += result.tokens_out
        if result.status == "stopped":
            raise StepStopped
        user_line = candidate.line_ids[-1]
        if result.status == "format_failure":
            runs, answers = FailureLog(root).record(
                candidate, source=step.source, answers=result.raw_answers, at=now
            )
            if runs < QUARANTINE_AFTER:
                raise StepFailed(result.raw_answers)
            frag = quarantine_fragment(
                candidate,
                runs=runs,
                answers=answers,
                source=step.source,
                source_ids=source_ids,
                at=now,
            )
            rejected.append(frag)
            run.candidates += 1
            details.setdefault(user_line, []).append(
                f"quarantined {frag.fragment_id}: routing answer unreadable in {runs} runs"
            )
            continue
        route = read_route(result.value, candidate, offer, known_pages)
        run.candidates += 1
        if not route.subject:
            frag = _fragment(candidate, result.value, step.source, source_ids, now)
            rejected.append(frag)
            details.setdefault(user_line, []).append(f"rejected {frag.fragment_id}: no subject")
            continue
        found = by_key.get(subject_key(route.subject))
        name = found.name if found else route.subject
        target = targets.setdefault(subject_key(name), _Target(name, found))
        gated = gate_fact(
            candidate,
            route.rephrased,
            allowed=(name, route.section),
            judge=judge,
            threshold=s.threshold,
        )
        known = [f.text for f in (found.facts if found else ())] + [f.text for f in target.facts]
        dup = find_duplicate(gated.text, known, embedder=embedder, judge=judge)
        if dup is None and gated.wording == "rephrased":
            dup = find_duplicate(candidate.verbatim, known, embedder=None, judge=None)
        if dup is not None:
            run.duplicates += 1
            details.setdefault(user_line, []).append(f"already on {name} ({dup.how})")
            continue
        when = _spoken_day(spoken.get(user_line, ""))
        dated = find_date(candidate.cited_text, when) if when else None
        kind, fact_date = dated if dated else (_kind(route.section), None)
        fact = Fact(name, route.section, gated.text, candidate.line_ids, kind, fact_date)
        target.facts.append(fact)
        for alias in find_aliases(candidate.cited_text, name):
            if alias not in target.aliases:
                target.aliases.append(alias)
        accepted.append(
            (
                AcceptedFact(
                    name,
                    route.section,
                    gated.text,
                    candidate.line_ids,
                    kind,
                    fact_date,
                    "",
                    gated.support,
                    gated.wording,
                    gated.fallback_reason,
                    gated.entailment,
                    route.subject_refused,
                ),
                subject_key(name),
            )
        )
    writes, paths = _page_writes(root, targets, engine if s.model_summaries else None, stop, run, s)
    journal = read_progress(root, s.memory_folder)
    if step.requeue_id:
        journal.requeues.add(step.requeue_id)
    else:
        assert step.batch_id is not None
        journal.through[step.batch_id] = max(journal.through.get(step.batch_id, 0), step.through)
    # The notes the new citations point into, rebuilt from their batches in this transaction.
    store = RawStore(root)
    writes += conversation_writes(
        root, store, cited_batches([c for a, _ in accepted for c in a.citations])
    )
    writes.append(progress_write(journal, s.memory_folder))
    operation_id = new_operation_id("memory")
    facts = [(a, paths[k]) for a, k in accepted]
    writes.append(
        log_write(root, s.memory_folder, _log_entry(now, operation_id, step, facts, rejected))
    )
    # Fragments first: a crash after this line leaves them listed (deduplicated by id on a re-run).
    rejected_store.add(rejected)
    plan = Plan(
        operation_id,
        "memory",
        f"Consolidate {step.source}: {len(accepted)} fact(s) on {len(paths)} page(s)",
        tuple(writes),
    )
    apply_plan(root, plan, approval=inspect_plan(root, plan).approval)
    run.operations.append(operation_id)
    run.rejected.extend(rejected)
    run.tokens_in += tokens[0]
    run.tokens_out += tokens[1]
    run.lines_read += len(step.lines)
    for fact_record, path in facts:
        run.accepted.append(replace(fact_record, page=path))
        run.pages.append(path)
        details.setdefault(fact_record.citations[-1], []).append(
            f"written to {path} ({fact_record.wording})"
        )
    run.lines.extend(LineOutcome(i, "withdrawn", REASONS["withdrawn"]) for i in step.withdrawn)
    run.lines.extend(
        replace(o, detail="; ".join(details.get(o.line_id, [])) or o.detail)
        for o in extraction.lines
    )


def _page_writes(
    root: Path,
    targets: dict[str, _Target],
    engine: Generator | None,
    stop: StopFlag | None,
    run: Run,
    s: MemorySettings,
) -> tuple[list[Write], dict[str, str]]:
    writes: list[Write] = []
    paths: dict[str, str] = {}
    for key, target in targets.items():
        if not target.facts:
            continue
        old = [f.text for f in target.page.facts] if target.page else []
        summary = write_summary(
            engine, target.name, old + [f.text for f in target.facts], stop=stop
        )
        run.tokens_in += summary.tokens_in
        run.tokens_out += summary.tokens_out
        if target.page is None:
            path = _free_path(root, s.subjects_folder, target.name)
            content = render_new_page(
                name=target.name,
                aliases=target.aliases,
                summary=summary.text,
                facts=target.facts,
                folder=s.subjects_folder,
            )
            writes.append(Write.create(path, content))
        else:
            path = target.page.path
            have = {subject_key(a) for a in (target.page.name, *target.page.aliases)}
            fresh = [a for a in target.aliases if subject_key(a) not in have]
            content = append_to_page(
                target.page.text, facts=target.facts, new_aliases=fresh, folder=s.subjects_folder
            )
            content = set_key(content, "summary", summary.text)
            writes.append(Write.replace(path, content, expected_sha256=target.page.sha256))
        paths[key] = path
        run.summaries[path] = summary.source
    return writes, paths


def _pseudo(name: str) -> SubjectPage:
    """A subject created earlier in this step, offered to the next candidates."""
    return SubjectPage("", name, (), "", (), "", "")


def _spoken_day(value: str) -> date | None:
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


def _kind(section: str) -> str:
    return "preference" if section == "Preferences" else "fact"


def _free_path(root: Path, folder: str, name: str) -> str:
    """``<folder>/<name>.md``, or ``<name> (subject).md`` if a note of that name is not ours."""
    path = f"{folder}/{name}.md"
    if (root / path).exists():
        path = f"{folder}/{name} (subject).md"
    return path


def _left_out(
    line: RawLine, outcome: str, source: str, source_ids: tuple[str, ...], now: str
) -> RejectedFragment:
    proposal = {"line": line.text, "outcome": outcome}
    return RejectedFragment(
        fragment_id=fragment_id(source, proposal),
        reason=outcome,
        detail=f"{REASONS[outcome]} — re-queue it if it is one: it is then read as a statement",
        subject="",
        text=line.text,
        line_ids=(line.line_id,),
        source=source,
        source_ids=source_ids,
        at=now,
        proposal=proposal,
    )


def _fragment(
    candidate: Candidate, answer: dict[str, Any], source: str, source_ids: tuple[str, ...], now: str
) -> RejectedFragment:
    proposal = {"candidate": candidate.text, "context": candidate.context, "answer": answer}
    proposal = json.loads(json.dumps(proposal, default=str))
    return RejectedFragment(
        fragment_id=fragment_id(source, proposal),
        reason="no_subject",
        detail="no usable subject name: the model's was refused and none was found in the words",
        subject=str(answer.get("subject") or ""),
        text=candidate.text,
        line_ids=candidate.line_ids,
        source=source,
        source_ids=source_ids,
        at=now,
        proposal=proposal,
    )


def _log_entry(
    now: str,
    operation_id: str,
    step: Step,
    facts: list[tuple[Any, str]],
    rejected: list[RejectedFragment],
) -> str:
    lines = [
        f"## {now} — {operation_id}",
        "",
        f"- input: {step.source} ({len(step.lines)} lines read, {len(step.withdrawn)} withdrawn)",
        f"- accepted {len(facts)}, rejected {len(rejected)}",
    ]
    for path in dict.fromkeys(p for _, p in facts):
        lines.append(f"- page [[{path[:-3]}]]")
    for fact, _ in facts:
        if fact.wording == "verbatim" and fact.fallback_reason:
            lines.append(f"- kept verbatim “{fact.text[:60]}”: {fact.fallback_reason}")
    for frag in rejected:
        lines.append(f"- rejected {frag.fragment_id} ({frag.reason}): {frag.detail}")
    return "\n".join(lines) + "\n"
