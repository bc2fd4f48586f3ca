"""Contradictions of an ingest, re-checked by the judge; the ones that hold are kept.

Two sources of candidates: the contradictions the model claimed (each
re-checked), and the judge's own comparison of every new claim with the
nearest existing sentences of the pages in context. A pair holds when the
judge's P(contradiction) reaches ``threshold``. Without a judge nothing is
claimed: the report says the judge was not available.

Kept candidates are stored once the plan is applied, one JSON file per
operation under ``<vault>/.antinomy/ingest/tensions/``, and shown in the
Tensions panel as coming from that ingest.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from desktop.flows.ingest.compose import ClaimedContradiction, DroppedContradiction
from desktop.flows.ingest.context import ContextPage
from desktop.flows.ingest.sentences import Sentence, nearest_sentences
from desktop.vault.layout import state_dir
from desktop.vault.transactions import list_history
from foundation import atomic
from inference.judge import CONTRADICTION, Judge

#: ``None``: the judge's own calibrated threshold (``Judge.thresholds.contradiction``).
DEFAULT_THRESHOLD: float | None = None
NEAREST_PER_CLAIM = 3


@dataclass(frozen=True)
class TensionCandidate:
    """A contradiction between a new claim of an ingest and an existing page."""

    page: str
    existing_claim: str
    new_claim: str
    severity: str
    probability: float
    #: ``model`` (claimed by the model, confirmed by the judge) or ``judge`` (found by it).
    found_by: str
    source_note: str
    operation_id: str = ""
    ingested_at: str = ""


@dataclass(frozen=True)
class JudgeOutcome:
    candidates: tuple[TensionCandidate, ...]
    dropped: tuple[DroppedContradiction, ...]
    pairs_scored: int
    judge: str


def severity_of(p: float) -> str:
    return "high" if p >= 0.9 else "medium" if p >= 0.7 else "low"


def check_contradictions(
    judge: Judge | None,
    *,
    claimed: Sequence[ClaimedContradiction],
    claims: Sequence[Sentence],
    pages: Sequence[ContextPage],
    source_note: str,
    threshold: float | None = DEFAULT_THRESHOLD,
) -> JudgeOutcome:
    if judge is None:
        unchecked = tuple(
            DroppedContradiction("judge_unavailable", f"{c.claim[:60]!r} vs {c.page}")
            for c in claimed
        )
        return JudgeOutcome((), unchecked, 0, "not available")
    pairs: list[tuple[str, str, str, str, str]] = []  # page, existing, new, severity, found_by
    for c in claimed:
        pairs.append((c.page, c.existing_claim, c.claim, c.severity, "model"))
    existing = [(p.path, s.text) for p in pages for s in p.sentences()]
    claimed_keys = {(c.existing_claim, c.claim) for c in claimed}
    for claim in claims:
        for page, text, _ in nearest_sentences(claim.text, existing, NEAREST_PER_CLAIM):
            if (text, claim.text) not in claimed_keys:
                pairs.append((page, text, claim.text, "", "judge"))
                claimed_keys.add((text, claim.text))
    if not pairs:
        return JudgeOutcome((), (), 0, judge.name or "judge")
    if threshold is None:
        threshold = judge.thresholds.contradiction
    scores = judge.score([(existing_claim, new) for _, existing_claim, new, _, _ in pairs])
    kept: list[TensionCandidate] = []
    dropped: list[DroppedContradiction] = []
    for (page, old, new, severity, found_by), row in zip(pairs, scores, strict=True):
        p = float(row[CONTRADICTION])
        if p >= threshold:
            kept.append(
                TensionCandidate(
                    page=page,
                    existing_claim=old,
                    new_claim=new,
                    severity=severity or severity_of(p),
                    probability=round(p, 4),
                    found_by=found_by,
                    source_note=source_note,
                )
            )
        elif found_by == "model":
            dropped.append(
                DroppedContradiction(
                    "judge_disagrees", f"P(contradiction) {p:.2f} < {threshold:.2f}: {new[:60]!r}"
                )
            )
    kept.sort(key=lambda c: (-c.probability, c.page))
    return JudgeOutcome(tuple(kept), tuple(dropped), len(pairs), judge.name or "judge")


def tensions_dir(root: Path) -> Path:
    return state_dir(root, "ingest", "tensions")


def save_candidates(
    root: Path, operation_id: str, candidates: Sequence[TensionCandidate], at: str
) -> Path | None:
    """Record the candidates of an applied ingest (atomic; one file per operation)."""
    if not candidates:
        return None
    rows = [asdict(c) | {"operation_id": operation_id, "ingested_at": at} for c in candidates]
    target = tensions_dir(root) / f"{operation_id}.json"
    return atomic.write_json(target, rows, indent=1, newline=False)


def load_candidates(root: Path) -> list[TensionCandidate]:
    """Every stored candidate, newest ingest first; unreadable files are skipped."""
    folder = root / ".antinomy" / "ingest" / "tensions"
    if not folder.is_dir():
        return []
    out: list[TensionCandidate] = []
    for file in sorted(folder.glob("*.json"), key=lambda f: f.stat().st_mtime, reverse=True):
        try:
            rows: Any = json.loads(file.read_text(encoding="utf-8"))
            out.extend(TensionCandidate(**row) for row in rows)
        except (OSError, ValueError, TypeError):
            continue
    return out


def standing_candidates(root: Path) -> list[TensionCandidate]:
    """The candidates of ingests still in effect (an undone ingest's claims are gone)."""
    standing = {h.operation_id for h in list_history(root) if h.undone_by is None}
    return [c for c in load_candidates(root) if c.operation_id in standing]
