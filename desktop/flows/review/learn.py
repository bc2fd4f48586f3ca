"""Each review decision becomes a label the scan learns from, and "dismiss all like this".

A dismissal is a negative label for its pair; an elevation, resolution or defeat a positive
one for every pair of the last scan the note was part of (and, for a tension note, for the
notes it links to: the clash it records). The labels carry the features the last scan judged
each pair on (:mod:`desktop.flows.hunter.labels`).

Keeping a label never undoes or refuses the review action: the notes were written, and they
say the decision themselves (the labels are rebuilt from them); a label that could not be
kept is said in ``ReviewResult.learned``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from desktop.flows.hunter.labels import (
    HiddenFrame,
    LabelStore,
    forget,
    last_run_features,
    last_run_pairs_with,
    now,
    pair_key,
    record,
)
from desktop.flows.review.errors import BadInput
from desktop.flows.review.records import ReviewResult
from desktop.flows.review.vaultfiles import NoteText, VaultFiles
from desktop.vault.errors import VaultError
from desktop.vault.notes import NoteSkipped, read_note
from desktop.vault.transactions import ApplyResult, OnChange, undo_operation

log = logging.getLogger(__name__)


def keep_decision(
    root: Path, result: ReviewResult, *, action: str, pairs: Iterable[tuple[str, str]]
) -> ReviewResult:
    """``result`` with the labels ``action`` gives ``pairs`` kept (or why they could not be)."""
    wanted = sorted({pair_key(a, b) for a, b in pairs if a != b})
    if not wanted:
        return result
    try:
        features = last_run_features(root)
        with LabelStore(root).editing() as learned:
            labels = record(learned, wanted, action=action, features=features)
    except (OSError, ValueError, VaultError) as exc:
        log.warning("the decision could not be kept as a label: %s", exc)
        after = ", and the next scan reads it from them" if action == "dismiss" else ""
        return replace(
            result,
            learned=f"not kept for the scan to learn from ({exc}); the notes still say it{after}",
        )
    sign = "confirmed" if labels[0].positive else "dismissed"
    overrode = [lab for lab in labels if lab.overrode]
    line = f"kept as {len(labels)} {sign} pair{'s' if len(labels) != 1 else ''} to learn from"
    if overrode:
        line += (
            f"; replaces your earlier “{overrode[0].overrode}” of "
            f"{'that pair' if len(overrode) == 1 else f'{len(overrode)} of them'} "
            "(the latest decision counts)"
        )
    return replace(result, learned=line)


def forget_dismissal(root: Path, result: ReviewResult, pair: tuple[str, str]) -> ReviewResult:
    """An undismissal takes the dismissal's label back."""
    try:
        with LabelStore(root).editing() as learned:
            gone = forget(learned, [pair], action="dismiss")
    except (OSError, ValueError, VaultError) as exc:
        log.warning("the dismissal's label could not be taken back: %s", exc)
        return replace(result, learned=f"its label could not be taken back ({exc})")
    return replace(result, learned="its label taken back" if gone else "")


def confirmed_pairs(
    root: Path, files: VaultFiles, note: NoteText, replaced_by: str | None = None
) -> list[tuple[str, str]]:
    """The pairs a decision on ``note`` confirms: those of the last scan it was part of, the
    notes a tension note links to (pairwise), and the note with the one that replaces it."""
    pairs = list(last_run_pairs_with(root, note.path))
    if (note.type or "").casefold() == "tension":
        linked = sorted(set(_linked(files, note)) - {note.path})
        if len(linked) <= 6:
            pairs += [(a, b) for i, a in enumerate(linked) for b in linked[i + 1 :]]
    if replaced_by:
        pairs.append((note.path, replaced_by))
    return pairs


def _linked(files: VaultFiles, note: NoteText) -> list[str]:
    """The notes ``note``'s wikilinks name (each one unambiguous)."""
    try:
        links = read_note(files.root, note.path).links
    except NoteSkipped:
        return []
    out: list[str] = []
    for link in links:
        found = files.with_basename(link.target_basename)
        if len(found) == 1:
            out.append(found[0])
    return out


def unhide_frame(root: str | os.PathLike[str], which: int | str) -> HiddenFrame:
    """Show pairs like a hidden frame again: ``which`` is its number in ``antinomy learned``
    (from 1) or its key. The pair's dismissal stays (undismiss it on its own)."""
    store = LabelStore(Path(root))
    with store.editing() as learned:
        frames = learned.frames
        index = _frame_index(frames, which)
        return frames.pop(index)


def unhide_frames_of(
    root: str | os.PathLike[str], operation_ids: Iterable[str]
) -> list[HiddenFrame]:
    """Show again the frames hidden with the dismissals ``operation_ids`` (they were undone):
    an undone "dismiss all like this" takes back both halves. Returns the frames shown."""
    wanted = set(operation_ids)
    store = LabelStore(Path(root))
    if not wanted or not store.exists():
        return []
    try:  # most undone operations hid no frame: the file is not rewritten for them
        if not any(f.operation_id in wanted for f in store.read().frames):
            return []
    except ValueError:
        return []  # unreadable: the next scan sets it aside and says so
    with store.editing() as learned:
        gone = [f for f in learned.frames if f.operation_id and f.operation_id in wanted]
        learned.frames = [f for f in learned.frames if f not in gone]
    return gone


def undo_review(
    root: str | os.PathLike[str],
    operation_id: str,
    *,
    on_change: OnChange | None = None,
) -> tuple[ApplyResult, list[HiddenFrame]]:
    """Undo one operation from the journal, and with it what it taught the scan: an undone
    "dismiss all like this" shows the pairs like it again too. The one undo of the window
    and of ``antinomy tx undo``. Returns the undo's result and the frames shown again (a
    frame that cannot be shown again is logged: the notes are already back)."""
    result = undo_operation(Path(root), operation_id, on_change=on_change)
    try:
        shown = unhide_frames_of(root, [operation_id])
    except (OSError, ValueError, VaultError) as exc:
        log.warning("the frame hidden with %s could not be shown again: %s", operation_id, exc)
        shown = []
    return result, shown


def _frame_index(frames: list[HiddenFrame], which: int | str) -> int:
    if isinstance(which, int) or str(which).isdigit():
        n = int(which)
        if 1 <= n <= len(frames):
            return n - 1
        raise BadInput(
            f"There is no hidden frame number {n}: "
            + (f"they are numbered 1 to {len(frames)}" if frames else "none is hidden")
            + " (`antinomy learned` lists them)."
        )
    for i, f in enumerate(frames):
        if f.key == which:
            return i
    raise BadInput(f"No hidden frame is {which!r} — `antinomy learned` lists them.")


def reset_learning(root: str | os.PathLike[str]) -> tuple[int, int]:
    """Back to the shipped calibration: decisions so far are no longer used (they stay in
    the notes and in the file), hidden frames are shown again. Returns (decisions set
    aside, frames shown again)."""
    with LabelStore(Path(root)).editing() as learned:
        decisions = len(learned.active())
        frames = len(learned.frames)
        learned.reset_at = now()
        learned.frames = []
        learned.calibration = {}
    return decisions, frames
