"""``plan_ingest``: read → source note → context → model → validate (→ repair) → judge → preview.

Every claim line is checked against the source while the plan is composed
(:mod:`.support`); the ones it does not support are in ``dropped_claims``, not in the plan.

``apply_ingest`` writes the approved plan in one journaled transaction (the
source note and every page together) and records the tension candidates.

Statuses of :class:`IngestReport`:

- ``planned``: a valid plan with its preview and approval hash;
- ``already_ingested``: these exact bytes have a source note; nothing new;
- ``rejected``: the plan failed validation twice; it is saved and
  ``rejected_path`` says where;
- ``stopped``: the user pressed Stop.

A refused source raises :class:`SourceRefused`; a missing model raises
``ModelUnavailable``. Call from a worker thread (it blocks on the model);
``stop`` and ``progress`` may be used from any thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from desktop.flows.ingest import prompt as prompts
from desktop.flows.ingest.compose import Composed, DroppedContradiction, PageDraft, compose_plan
from desktop.flows.ingest.context import Context, LeftOut, select_context
from desktop.flows.ingest.names import offered_names, tidy_name, word_keys
from desktop.flows.ingest.read import MAX_SOURCE_BYTES, SourceText, headings, read_source
from desktop.flows.ingest.rejected import save_rejected_plan
from desktop.flows.ingest.sentences import Sentence, key_sentences, split_sentences
from desktop.flows.ingest.source_note import (
    DEFAULT_FOLDER,
    SourceNote,
    earlier_version,
    find_known,
    pick_name,
    render_source_note,
)
from desktop.flows.ingest.support import DroppedClaim, SourceSupport
from desktop.flows.ingest.tensions import (
    DEFAULT_THRESHOLD,
    TensionCandidate,
    check_contradictions,
    save_candidates,
)
from desktop.flows.ingest.validate import DEFAULT_MAX_SHRINK, validate_pages
from desktop.flows.memory.pages import DEFAULT_FOLDER as SUBJECTS_FOLDER
from desktop.vault.index import VaultIndex
from desktop.vault.layout import vault_root
from desktop.vault.transactions import (
    ApplyResult,
    OnChange,
    Plan,
    Preview,
    Write,
    apply_plan,
    inspect_plan,
    new_operation_id,
)
from inference.base import GenerationSettings, Generator, Message, StopFlag
from inference.judge import Judge
from inference.structured import StructuredResult, complete_structured

Status = Literal["planned", "already_ingested", "rejected", "stopped"]
#: (phase, detail): phases are reading, planning, validating, repairing, checking, previewing.
#: (phase, what is happening): ingest reports phases, not counts.
PhaseProgress = Callable[[str, str], None]
#: Tokens kept free besides the answer (chat template, rounding of counts).
MARGIN_TOKENS = 128


@dataclass(frozen=True)
class IngestSettings:
    sources_folder: str = DEFAULT_FOLDER
    pages_folder: str = SUBJECTS_FOLDER
    #: Page types an ingest may update (others are read for contradictions only).
    update_types: tuple[str, ...] = ("subject",)
    key_sentences: int = 12
    max_pages: int = 3
    max_contradictions: int = 2
    context_pages: int = 6
    excerpt_chars: int = 700
    max_output_tokens: int = 600
    #: Sampling temperature of the one repair request (the first answer is greedy).
    repair_temperature: float = 0.4
    max_shrink: float = DEFAULT_MAX_SHRINK
    #: P(contradiction) a claim pair needs; None: the judge's calibrated threshold.
    threshold: float | None = DEFAULT_THRESHOLD
    #: P(entailment) a claim in other words than the source's needs; None: calibrated.
    entailment: float | None = None
    max_source_bytes: int = MAX_SOURCE_BYTES


@dataclass(frozen=True)
class SourceInfo:
    origin: str
    kind: str
    title: str
    sha256: str
    size_bytes: int
    words_raw: int
    words_kept: int
    boilerplate_removed: float
    pages: int
    truncated: bool
    seconds: float

    @classmethod
    def of(cls, s: SourceText) -> SourceInfo:
        return cls(
            s.origin, s.kind, s.title, s.sha256, s.size_bytes, s.words_raw, s.words_kept,
            s.boilerplate_removed, s.pages, s.truncated, s.seconds,
        )  # fmt: skip


@dataclass(frozen=True)
class ContextInfo:
    sentences_total: int
    sentences_sent: int
    #: Sentences of the source that claim nothing (lead-ins, commands, questions, …).
    sentences_not_claims: int
    #: Subject pages shown to the model; read-only related notes only the judge reads.
    pages_sent: tuple[str, ...]
    pages_judged: tuple[str, ...]
    left_out: tuple[LeftOut, ...]
    prompt_tokens: int
    context_window: int


@dataclass(frozen=True)
class PageSummary:
    path: str
    action: str
    claims: int
    citations: int


@dataclass(frozen=True)
class IngestReport:
    status: Status
    message: str
    source: SourceInfo
    ingest_id: str = ""
    source_note: str = ""
    known_as: str = ""
    replaces_version: str = ""
    pages: tuple[PageSummary, ...] = ()
    contradictions: tuple[TensionCandidate, ...] = ()
    dropped_contradictions: tuple[DroppedContradiction, ...] = ()
    #: Claim lines the source does not support, with the reason: not in the plan.
    dropped_claims: tuple[DroppedClaim, ...] = ()
    #: Premises the judge read to check claims against the source.
    support_pairs_judged: int = 0
    judge: str = ""
    pairs_judged: int = 0
    context: ContextInfo | None = None
    errors_first: tuple[str, ...] = ()
    errors_after_repair: tuple[str, ...] = ()
    repaired: bool = False
    rejected_path: str = ""
    model_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    seconds_read: float = 0.0
    seconds_plan: float = 0.0
    seconds_judge: float = 0.0
    plan: Plan | None = field(default=None, repr=False)
    preview: Preview | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        data = asdict(replace(self, plan=None, preview=None))
        data.pop("plan")
        data.pop("preview")
        if self.preview is not None:
            data["approval"] = self.preview.approval
            data["operation_id"] = self.preview.operation_id
            data["files"] = [
                {"path": f.path, "action": f.action, "added": f.lines_added,
                 "removed": f.lines_removed, "diff": f.diff}
                for f in self.preview.files
            ]  # fmt: skip
        return data


@dataclass
class _Attempt:
    composed: Composed | None
    errors: list[str]
    raw: str


@dataclass(frozen=True)
class _Prompt:
    """What the model is shown: the key sentences, the related pages, the names offered."""

    all_sentences: list[Sentence]
    sentences: list[Sentence]
    source_words: frozenset[str]
    names: list[str]
    page_title: str
    context: Context
    messages: list[Message]
    prompt_tokens: int
    budget: int
    info: ContextInfo


def plan_ingest(
    vault: str | Path,
    source_path: str | Path,
    *,
    engine: Generator,
    judge: Judge | None,
    index: VaultIndex | None = None,
    settings: IngestSettings | None = None,
    stop: StopFlag | None = None,
    progress: PhaseProgress | None = None,
) -> IngestReport:
    """Read a source, ask the model for a plan (one repair at most), validate it and check
    its claims and contradictions: a previewed plan to approve, or the reason there is none."""
    root = vault_root(vault)
    s = settings or IngestSettings()
    say = progress or (lambda phase, detail: None)
    say("reading", str(source_path))
    source = read_source(source_path, max_bytes=s.max_source_bytes)
    info = SourceInfo.of(source)
    known = find_known(root, source, s.sources_folder)
    if known is not None:
        return IngestReport(
            "already_ingested",
            f"{Path(source.origin).name} was already ingested as {known.path} (same sha256); "
            "there is nothing new to plan. Edit the file to ingest a new version.",
            info,
            known_as=known.path,
            seconds_read=source.seconds,
        )
    started = time.perf_counter()
    ingest_id = new_operation_id("ingest")
    earlier = earlier_version(root, source, s.sources_folder)
    day = datetime.now(UTC).date().isoformat()
    name = pick_name(root, source.title, index=index, folder=s.sources_folder)
    note = render_source_note(source, name=name, folder=s.sources_folder, day=day)
    if _stopped(stop):
        return _stopped_report(info, ingest_id)
    say("planning", "choosing key sentences and related pages")
    prompt = _build_prompt(root, source, note, engine=engine, index=index, s=s)
    support = SourceSupport(
        prompt.all_sentences, text=source.text, judge=judge, threshold=s.entailment
    )
    asked = _ask(root, note, prompt, engine=engine, support=support, s=s, stop=stop, say=say)
    if asked is None:
        return _stopped_report(info, ingest_id)
    first, final, calls = asked
    common = dict(
        source=info,
        ingest_id=ingest_id,
        source_note=note.path,
        replaces_version=earlier.path if earlier else "",
        context=prompt.info,
        errors_first=tuple(first.errors),
        errors_after_repair=tuple(final.errors) if final is not first else (),
        repaired=final is not first and not final.errors,
        model_calls=sum(len(r.completions) for r in calls),
        tokens_in=sum(r.tokens_in for r in calls),
        tokens_out=sum(r.tokens_out for r in calls),
        seconds_read=source.seconds,
    )
    if final.errors or final.composed is None:
        path = save_rejected_plan(
            root,
            ingest_id=ingest_id,
            source=source,
            errors_first=first.errors,
            errors_after_repair=final.errors if final is not first else [],
            raw_answers=[a for r in calls for a in r.raw_answers],
            pages=[_note_draft(note), *(final.composed.pages if final.composed else ())],
            model=engine.model_name,
        )
        return IngestReport(
            "rejected",
            f"The model's plan failed validation, even after one repair: {final.errors[0]} "
            f"({len(final.errors)} problem(s)). The plan and its errors are saved in {path}.",
            rejected_path=str(path),
            seconds_plan=round(time.perf_counter() - started, 3),
            **common,  # type: ignore[arg-type]
        )
    seconds_plan = round(time.perf_counter() - started, 3)
    if _stopped(stop):
        return _stopped_report(info, ingest_id)
    return _planned(
        root, source, note, final.composed, prompt, judge=judge, support=support, s=s,
        say=say, seconds_plan=seconds_plan, common=common,
    )  # fmt: skip


def _build_prompt(
    root: Path,
    source: SourceText,
    note: SourceNote,
    *,
    engine: Generator,
    index: VaultIndex | None,
    s: IngestSettings,
) -> _Prompt:
    """The key sentences, the names the model may give pages, and the related pages that fit
    the context window beside them."""
    all_sentences = split_sentences(source.text)
    budget = engine.context_length - s.max_output_tokens - MARGIN_TOKENS
    sentences = _fit_sentences(engine, key_sentences(all_sentences, s.key_sentences), budget // 2)
    if not sentences:
        sentences = [Sentence(1, source.title, "")]
    source_words = word_keys(source.title, source.text)
    names = offered_names(
        source.title,
        [h for _, h in headings(source.text)],
        source_words=source_words,
        file_name=Path(source.origin).stem,
    )
    page_title = names[0] if names else tidy_name(source.title) or note.name
    base = prompts.build_messages(
        source_title=source.title, sentences=sentences, pages=(), names=names
    )
    base_tokens = sum(engine.count_tokens(m.content) for m in base)
    context = select_context(
        root,
        " ".join([source.title, *(x.text for x in sentences[:6])]),
        engine=engine,
        index=index,
        budget_tokens=max(0, budget - base_tokens),
        max_pages=s.context_pages,
        excerpt_chars=s.excerpt_chars,
        update_types=s.update_types,
        pages_folder=s.pages_folder,
        skip_folders=(s.sources_folder,),
    )
    messages = prompts.build_messages(
        source_title=source.title, sentences=sentences, pages=context.shown, names=names
    )
    prompt_tokens = sum(engine.count_tokens(m.content) for m in messages)
    info = ContextInfo(
        sentences_total=len(all_sentences),
        sentences_sent=len(sentences),
        sentences_not_claims=sum(1 for x in all_sentences if x.not_a_claim() is not None),
        pages_sent=tuple(p.path for p in context.shown),
        pages_judged=tuple(p.path for p in context.pages if not p.updatable),
        left_out=context.left_out,
        prompt_tokens=prompt_tokens,
        context_window=engine.context_length,
    )
    return _Prompt(
        all_sentences, sentences, source_words, names, page_title, context, messages,
        prompt_tokens, budget, info,
    )  # fmt: skip


def _ask(
    root: Path,
    note: SourceNote,
    prompt: _Prompt,
    *,
    engine: Generator,
    support: SourceSupport,
    s: IngestSettings,
    stop: StopFlag | None,
    say: PhaseProgress,
) -> tuple[_Attempt, _Attempt, list[StructuredResult]] | None:
    """The model's plan, validated; once more with the errors when it fails (first attempt,
    final attempt, every call). None when stopped."""

    def schema(new_pages: bool) -> dict[str, Any]:
        return prompts.plan_schema(
            claims=len(prompt.sentences),
            max_pages=s.max_pages,
            max_contradictions=s.max_contradictions,
            pages=[p.name for p in prompt.context.shown],
            names=prompt.names,
            new_pages=new_pages,
        )

    gen = GenerationSettings(max_tokens=s.max_output_tokens)
    calls: list[StructuredResult] = []

    def attempt(
        msgs: list[Message], settings: GenerationSettings, *, new_pages: bool = True
    ) -> _Attempt | None:
        result = complete_structured(
            engine, msgs, shape=prompts.shape, schema=schema(new_pages), settings=settings,
            stop=stop,
        )  # fmt: skip
        calls.append(result)
        if result.status == "stopped":
            return None
        raw = result.raw_answers[-1] if result.raw_answers else ""
        if result.status == "format_failure":
            return _Attempt(None, ["the answer is not one JSON object with title, summary, "
                                   "pages and contradictions"], raw)  # fmt: skip
        say("validating", "checking pages, paths, frontmatter and citations")
        composed = compose_plan(
            result.value,
            sentences=prompt.sentences,
            context=prompt.context,
            source=note,
            default_title=prompt.page_title,
            pages_folder=s.pages_folder,
            check=support.check,
            source_words=prompt.source_words,
        )
        errors = list(composed.errors) + validate_pages(
            root, [_note_draft(note), *composed.pages], source=note, max_shrink=s.max_shrink
        )
        return _Attempt(composed, errors, raw)

    first = attempt(prompt.messages, gen)
    if first is None:
        return None
    if not first.errors:
        return first, first, calls
    say("repairing", f"{len(first.errors)} problem(s); asking the model once more")
    spare_chars = max(0, (prompt.budget - prompt.prompt_tokens - 200) * 3)
    # A refused new page's name: the simpler question, with no new page to name (a small
    # model asked again for a name gives the same one back).
    new_pages = not (first.composed and first.composed.refused_pages)
    second = attempt(
        prompts.repair_messages(
            prompt.messages,
            previous=first.raw,
            errors=first.errors,
            max_chars=spare_chars,
            new_pages=new_pages,
        ),
        # Greedy decoding would give a small model's refused answer back word for word.
        replace(gen, temperature=s.repair_temperature),
        new_pages=new_pages,
    )
    if second is None:
        return None
    return first, second, calls


def _planned(
    root: Path,
    source: SourceText,
    note: SourceNote,
    composed: Composed,
    prompt: _Prompt,
    *,
    judge: Judge | None,
    support: SourceSupport,
    s: IngestSettings,
    say: PhaseProgress,
    seconds_plan: float,
    common: dict[str, Any],
) -> IngestReport:
    """The judge's check of the claimed contradictions, and the previewed plan."""
    say("checking", "the judge re-checks contradictions")
    judged_at = time.perf_counter()
    outcome = check_contradictions(
        judge,
        claimed=composed.contradictions,
        claims=prompt.sentences,
        pages=prompt.context.pages,
        source_note=note.name,
        threshold=s.threshold,
    )
    seconds_judge = round(time.perf_counter() - judged_at + support.seconds, 3)
    say("previewing", "building the per-file diff")
    plan = Plan(
        common["ingest_id"],
        "ingest",
        _summary(source, composed.pages),
        (
            Write.create(note.path, note.content),
            *(_write(p) for p in composed.pages),
        ),
    )
    preview = inspect_plan(root, plan)
    judge_note = (
        ""
        if judge is not None
        else " The judge was not available: no contradiction was checked, and only the "
        "source's own sentences are quoted."
    )
    dropped_note = (
        f" {len(composed.dropped_claims)} claim(s) the source does not support were dropped."
        if composed.dropped_claims
        else ""
    )
    return IngestReport(
        "planned",
        f"Planned: the source note and {len(composed.pages)} page(s); approve to write them."
        + dropped_note
        + judge_note,
        pages=tuple(_page_summary(p, note) for p in [_note_draft(note), *composed.pages]),
        contradictions=outcome.candidates,
        dropped_contradictions=composed.dropped + outcome.dropped,
        dropped_claims=composed.dropped_claims,
        support_pairs_judged=support.pairs_judged,
        judge=outcome.judge,
        pairs_judged=outcome.pairs_scored,
        seconds_plan=seconds_plan,
        seconds_judge=seconds_judge,
        plan=plan,
        preview=preview,
        **common,
    )


def apply_ingest(
    vault: str | Path,
    report: IngestReport,
    *,
    approval: str,
    on_change: OnChange | None = None,
) -> ApplyResult:
    """Write an approved plan (one transaction) and record its tension candidates.

    Raises ``VaultChanged`` (nothing written) when a page changed since planning.
    """
    if report.plan is None:
        raise ValueError(f"an ingest with status {report.status} has no plan to apply")
    root = vault_root(vault)
    result = apply_plan(root, report.plan, approval=approval, on_change=on_change)
    save_candidates(root, result.operation_id, report.contradictions, result.applied_at)
    return result


def _fit_sentences(engine: Generator, sentences: Sequence[Sentence], budget: int) -> list[Sentence]:
    out: list[Sentence] = []
    used = 0
    for sentence in sentences:
        cost = engine.count_tokens(sentence.text) + 4
        if used + cost > budget:
            break
        out.append(sentence)
        used += cost
    return out


def _note_draft(note: SourceNote) -> PageDraft:
    return PageDraft(path=note.path, action="create", content=note.content)


def _write(page: PageDraft) -> Write:
    if page.action == "create":
        return Write.create(page.path, page.content)
    assert page.expected_sha256 is not None
    return Write.replace(page.path, page.content, expected_sha256=page.expected_sha256)


def _page_summary(page: PageDraft, note: SourceNote) -> PageSummary:
    return PageSummary(page.path, page.action, len(page.claims), page.content.count(note.link))


def _summary(source: SourceText, pages: Sequence[PageDraft]) -> str:
    created = sum(1 for p in pages if p.action == "create")
    updated = len(pages) - created
    return (
        f"Ingest {Path(source.origin).name}: source note, {created} new page(s), {updated} updated"
    )[:2000]


def _stopped(stop: StopFlag | None) -> bool:
    return stop is not None and stop.is_set()


def _stopped_report(info: SourceInfo, ingest_id: str) -> IngestReport:
    return IngestReport("stopped", "Stopped; nothing was written.", info, ingest_id=ingest_id)
