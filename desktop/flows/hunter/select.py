"""Which notes a scan sends, per mode (:data:`SOURCES`), and how whole-vault pairs are
batched."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from desktop.flows.hunter.records import Excluded, Mode, ScanError, ScanSettings
from desktop.flows.hunter.verify import records_pair
from desktop.vault.index import VaultIndex
from desktop.vault.notes import read_note

if TYPE_CHECKING:
    from desktop.flows.hunter.scan import ScanJob

#: Statuses that take a note out of classic mode ("open tensions and substrates").
CLOSED_STATUSES = frozenset({"resolved", "closed", "done", "superseded", "archived"})


def classic_candidates(index: VaultIndex, settings: ScanSettings) -> list[str]:
    """Open notes of the scanned types, newest first (Antinomia's order)."""
    notes = [
        n
        for n in index.notes(types=settings.types)
        if (n.status or "").casefold() not in CLOSED_STATUSES
    ]
    notes.sort(key=lambda n: (-n.mtime, n.path))
    return [n.path for n in notes]


def scannable(index: VaultIndex, settings: ScanSettings) -> tuple[list[str], list[Excluded]]:
    """Whole-vault and focus candidates: every indexed note but retired/derived types."""
    keep: list[str] = []
    out: list[Excluded] = []
    skip = {t.casefold() for t in settings.skip_types}
    for n in index.notes():
        if (n.type or "").casefold() in skip:
            out.append(Excluded(n.path, f"type '{n.type}' is not scanned"))
        else:
            keep.append(n.path)
    for entry in index.coverage(only="skipped"):
        out.append(Excluded(entry.path, f"not indexed: {entry.detail or entry.reason}"))
    return keep, out


def focus_neighbours(
    index: VaultIndex, focus: str, eligible: Iterable[str], k: int
) -> list[tuple[str, float]]:
    """The ``k`` notes nearest in meaning to ``focus`` among ``eligible``."""
    if index.vectors is None or k <= 0:
        return []
    vector = index.vectors.vector(focus)
    if vector is None:
        return []
    allowed = set(eligible) - {focus}
    return index.vectors.nearest(np.asarray(vector), k, allowed=allowed.__contains__)


@dataclass
class Batch:
    notes: list[str]
    pairs: list[frozenset[str]] = field(default_factory=list)


@dataclass
class PairPlan:
    batches: list[Batch]
    pairs: int
    excluded: list[Excluded]


def candidate_pairs(
    index: VaultIndex, eligible: Sequence[str], settings: ScanSettings
) -> tuple[dict[frozenset[str], float], list[Excluded]]:
    """Nearest-neighbour pairs whose cosine lies in the band, with their score."""
    assert index.vectors is not None
    allowed = set(eligible)
    pairs: dict[frozenset[str], float] = {}
    excluded: list[Excluded] = []
    lo, hi = settings.band_low, settings.band_high
    for path in eligible:
        vector = index.vectors.vector(path)
        if vector is None:
            excluded.append(Excluded(path, "no embedding yet (index the vault with the embedder)"))
            continue
        near = index.vectors.nearest(
            np.asarray(vector),
            settings.pairs_per_note,
            allowed=allowed.__contains__,
            exclude=[path],
        )
        for other, score in near:
            if lo <= score <= hi:
                key = frozenset((path, other))
                pairs[key] = max(score, pairs.get(key, -1.0))
    return pairs, excluded


#: ``skip(a, b)`` (paths in order): a candidate pair the run leaves out before its budget.
Skip = Callable[[str, str], bool]


def plan_batches(
    index: VaultIndex,
    eligible: Sequence[str],
    settings: ScanSettings,
    *,
    skip: Skip | None = None,
) -> PairPlan:
    """Group the best candidate pairs into prompts of at most ``batch_notes`` notes.

    Greedy: the strongest pair not yet covered opens a batch; pairs that add at
    most one new note join it while it has room. Every candidate pair whose two
    notes share a batch counts as considered. Pairs ``skip`` names take no place in
    the ``max_pairs`` budget; it is asked only until the budget is full.
    """
    scored, excluded = candidate_pairs(index, eligible, settings)
    ranked = sorted(scored, key=lambda k: (-scored[k], sorted(k)))
    budget: list[frozenset[str]] = []
    over: list[frozenset[str]] = []
    for pair in ranked:
        if len(budget) >= settings.max_pairs:
            over.append(pair)
        elif skip is None or not skip(*sorted(pair)):
            budget.append(pair)
    in_budget = {p for pair in budget for p in pair}
    for path in sorted({p for pair in over for p in pair} - in_budget):
        excluded.append(
            Excluded(path, f"beyond the run's budget of {settings.max_pairs} candidate pairs")
        )
    no_vector = {e.path for e in excluded}
    for path in eligible:
        if path not in in_budget and path not in no_vector and not any(path in k for k in over):
            excluded.append(
                Excluded(
                    path,
                    "no neighbour in the similarity band "
                    f"[{settings.band_low:.2f}, {settings.band_high:.2f}]",
                )
            )
    size = max(2, settings.batch_notes)
    covered: set[frozenset[str]] = set()
    batches: list[Batch] = []
    for pair in budget:
        if pair in covered:
            continue
        batch = Batch(notes=sorted(pair))
        for other in budget:
            if other in covered:
                continue
            new = other - set(batch.notes)
            if len(new) <= 1 and len(batch.notes) + len(new) <= size:
                batch.notes.extend(sorted(new))
        members = set(batch.notes)
        batch.pairs = [p for p in budget if p <= members and p not in covered]
        covered.update(batch.pairs)
        batches.append(batch)
    return PairPlan(batches=batches, pairs=len(covered), excluded=excluded)


def whole_vault_pairs(
    index: VaultIndex,
    eligible: Sequence[str],
    settings: ScanSettings,
    *,
    skip: Skip | None = None,
) -> tuple[list[tuple[str, str]], list[Excluded]]:
    """The note pairs a whole-vault scan judges, sorted, and the notes it leaves out.

    The scan, the judge's calibration and the judge comparison all take their pairs
    from here, so a threshold is measured on exactly the pairs the scan judges.
    ``skip`` names pairs that are not judged and take no place in the budget (the scan:
    a tension note and a note it records a clash with)."""
    plan = plan_batches(index, eligible, settings, skip=skip)
    wanted = sorted({(min(p), max(p)) for b in plan.batches for p in b.pairs})
    return wanted, plan.excluded


def shown_candidates(
    root: Path, pairs: Sequence[tuple[str, str]]
) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """For measuring tools: ``pairs`` less the ones a scan skips (a tension note and a note
    it links to), and each remaining note's body, read the way the scan reads it."""
    notes = {p: read_note(root, p) for pair in pairs for p in pair}
    kept = [(a, b) for a, b in pairs if not records_pair(notes[a], notes[b])]
    return kept, {p: notes[p].body for pair in kept for p in pair}


# ------------------------------------------------------------------ sources by mode

#: Focus mode asks for this many neighbours beyond its count, to replace the ones the
#: vault already records a clash with (a tension note's sides, a superseded decision).
RECORDED_SLACK = 8


@dataclass(frozen=True)
class _Found:
    """What a mode's candidate source hands the judge."""

    pairs: list[tuple[str, str]]
    #: Notes the mode could have compared, and those it did.
    candidates: int
    examined: int
    #: Notes whose pairs the language model is asked for too (classic mode).
    ask_model: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Source:
    find: Callable[[ScanJob, str | None], _Found]
    #: The mode compares one note (the focus) with others.
    uses_focus: bool = False


def _classic(s: ScanJob, focus: str | None) -> _Found:
    """The newest open tensions and substrates, every pair of them."""
    ordered = s.ignoring.keep(classic_candidates(s.index, s.settings))
    chosen = ordered[: s.settings.cap]
    for path in ordered[s.settings.cap :]:
        s.excluded.append(Excluded(path, f"beyond the cap of {s.settings.cap} newest notes"))
    loaded = s.load(chosen)
    paths = _enough("classic", s, s.fit(loaded) if s.settings.ask_model else loaded)
    pairs = [(a, b) for i, a in enumerate(paths) for b in paths[i + 1 :]]
    return _Found(pairs, len(paths) + len(s.excluded), len(paths), ask_model=paths)


def _focus(s: ScanJob, focus: str | None) -> _Found:
    """The focus note against its nearest neighbours."""
    assert focus is not None
    if s.index.summaries([focus]).get(focus) is None:
        raise ScanError(f"The focus note {focus!r} is not in the index of this vault.")
    eligible, _ = scannable(s.index, s.settings)
    eligible = s.ignoring.keep(eligible)
    # A neighbour the vault records a clash with (s.recorded) takes no neighbour's place,
    # as it takes no place in a whole-vault budget: the next nearest is judged instead.
    k = s.settings.neighbours
    near: list[str] = []
    for path, _ in focus_neighbours(s.index, focus, eligible, k + RECORDED_SLACK):
        if len(near) == k:
            break
        if not s.recorded(focus, path):
            near.append(path)
    if not near:  # no vectors: fall back to the classic candidates
        near = [p for p in s.ignoring.keep(classic_candidates(s.index, s.settings)) if p != focus]
        near = near[: s.settings.neighbours]
    loaded = s.load([focus, *near])
    if focus not in loaded:
        raise ScanError(f"The focus note {focus!r} cannot be read or is empty.")
    paths = _enough("focus", s, loaded)
    pairs = [(paths[0], p) for p in paths[1:]]
    return _Found(pairs, len(paths) + len(s.excluded), len(paths))


def _enough(mode: Mode, s: ScanJob, paths: list[str]) -> list[str]:
    if len(paths) < 2:
        raise ScanError(
            f"A {mode} scan needs at least two notes to compare; this vault has {len(paths)} "
            f"eligible (types: {', '.join(s.settings.types)}; open ones only)."
        )
    return paths


def _whole_vault(s: ScanJob, focus: str | None) -> _Found:
    """Candidate pairs from the embedding index, within the run's budget."""
    if s.index.vectors is None or len(s.index.vectors) == 0:
        raise ScanError(
            "A whole-vault scan needs the embedding index: index the vault with the embedder "
            "first (`antinomy index`)."
        )
    eligible, excluded = scannable(s.index, s.settings)
    eligible = s.ignoring.keep(eligible)
    s.excluded.extend(excluded)
    s.tick(0, 1, "finding candidate pairs")
    wanted, left_out = whole_vault_pairs(s.index, eligible, s.settings, skip=s.recorded)
    s.excluded.extend(left_out)
    loaded = set(s.load(sorted({p for pair in wanted for p in pair})))
    pairs = [(a, b) for a, b in wanted if a in loaded and b in loaded]
    examined = {p for pair in pairs for p in pair}
    return _Found(pairs, len(eligible), len(examined))


#: Where each mode finds the note pairs it judges.
SOURCES: dict[Mode, _Source] = {
    "classic": _Source(_classic),
    "focus": _Source(_focus, uses_focus=True),
    "whole-vault": _Source(_whole_vault),
}
