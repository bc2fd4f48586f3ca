"""Review actions from the GUI: dismiss (one pair or many, or all like one), undismiss, elevate,
resolve, defeat.

Each runs the review flow on the vault-write worker with the hashes the user
saw (a note edited since is refused with the flow's message), then re-indexes
the touched notes, refreshes every view of the vault (``sig_history_changed``)
and offers Undo in words (``sig_action_done``); :func:`learned_line` says what
the scan learned from it (``ReviewResult.learned``). A dismissal that the notes
already hold, written meanwhile by another process, is reported as that and
never as a problem.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from desktop.flows import review
from desktop.flows.review import ReviewResult
from desktop.flows.settings import resolve_review
from desktop.ui.controller import AppController
from desktop.ui.operations.titles import many_title, operation_title
from desktop.ui.vault_state import dismissed_on_disk
from desktop.vault.errors import VaultChanged
from foundation.errors import AntinomyError


@dataclass(frozen=True)
class Done:
    result: ReviewResult
    #: sha256 of every touched note after the action.
    hashes: Mapping[str, str]


@dataclass(frozen=True)
class Dismissals:
    """What dismissing several pairs did: one transaction per pair written."""

    #: (a, b, result) of every pair that is dismissed now (``operation_id`` None: already was).
    done: tuple[tuple[str, str, ReviewResult], ...]
    #: (a, b, the flow's message) of every pair left as it was.
    refused: tuple[tuple[str, str, str], ...]
    #: sha256 of every note written, as written.
    hashes: Mapping[str, str] = field(default_factory=dict)


def _hashes(root: Path, paths: Sequence[str]) -> dict[str, str]:
    out = {}
    for p in paths:
        try:
            out[p] = hashlib.sha256((root / p).read_bytes()).hexdigest()
        except OSError:
            continue
    return out


def _changes(result: ReviewResult) -> list[tuple[str, str]]:
    return [("replace", p) for p in result.changed] + [("create", p) for p in result.created]


def learned_line(results: Sequence[ReviewResult]) -> str:
    """What the scan learned from ``results``, in one line ("" when nothing was said)."""
    lines = list(dict.fromkeys(r.learned for r in results if r.learned))
    if not lines:
        return ""
    if len(results) > 1 and len(lines) == 1:
        return f"{lines[0]} (each of the {len(results)})"
    return "; ".join(lines)


def _announce(
    controller: AppController, kind: str, results: Sequence[ReviewResult], *, title: str = ""
) -> None:
    """After the write: re-index, refresh every view, offer Undo in words (GUI thread).
    ``title``: the action in words, when the kind's is not it. What the scan learned is the
    Tensions panel's to say (:func:`learned_line`): the words here are also Undo's."""
    applied = [r for r in results if r.operation_id is not None]
    if applied:
        controller.history_changed(r.operation_id for r in applied if r.operation_id)
        controller.notes_changed([p for r in applied for p in r.changed + r.created])
        titles = [operation_title(kind, _changes(r), r.summary) for r in applied]
        ids = tuple(r.operation_id for r in applied if r.operation_id is not None)
        controller.sig_action_done.emit(title or many_title(kind, titles), ids)
    elif results:
        controller.sig_action_done.emit("Nothing to write: the notes already say so.", ())


def _run(
    controller: AppController, what: str, kind: str, action: Callable[[Path], ReviewResult]
) -> asyncio.Task[Done] | None:
    root = controller.root
    if root is None:
        return None

    def work() -> Done:
        result = action(root)
        return Done(result, _hashes(root, result.changed + result.created))

    async def go() -> Done:
        done = await controller.run_in(controller.write_pool, work)
        _announce(controller, kind, [done.result])
        return done

    return controller.spawn(go(), what=what)


def _pair_name(a: str, b: str) -> str:
    return f"{Path(a).stem} ↔ {Path(b).stem}"


def _dismiss_all(
    root: Path, pairs: Sequence[tuple[str, str]], seen: Mapping[str, str]
) -> Dismissals:
    """Dismiss each pair in turn (write worker), each guarded by the hashes seen, renewed
    by the dismissals before it: two pairs sharing a note are both written. Where they are
    written (the notes, or ``.antinomy/``) is the vault's setting, read once here."""
    try:
        keep_in = resolve_review(root).keep_dismissals
    except AntinomyError as exc:
        return Dismissals((), tuple((a, b, str(exc)) for a, b in pairs))
    seen = dict(seen)
    written: dict[str, str] = {}
    done: list[tuple[str, str, ReviewResult]] = []
    refused: list[tuple[str, str, str]] = []
    for a, b in pairs:
        guard = {p: seen[p] for p in (a, b) if p in seen}
        try:
            result = review.dismiss_pair(root, a, b, seen=guard, keep_in=keep_in)
        except VaultChanged as exc:
            if not dismissed_on_disk(root, a, b):
                refused.append((a, b, str(exc)))
                continue
            # Dismissed meanwhile (the command line, another window): what was asked holds.
            result = ReviewResult(None, (), (), "")
        except AntinomyError as exc:
            refused.append((a, b, str(exc)))
            continue
        hashes = _hashes(root, result.changed)
        seen.update(hashes)
        written.update(hashes)
        done.append((a, b, result))
    return Dismissals(tuple(done), tuple(refused), written)


def dismiss_pairs(
    controller: AppController,
    pairs: Sequence[tuple[str, str]],
    *,
    seen: Mapping[str, str] | None = None,
) -> asyncio.Task[Dismissals] | None:
    """Dismiss ``pairs`` (path, path), one transaction each; one Undo takes them all back.

    Pairs the flow refuses are left as they were and listed in one problem; the
    others are written.
    """
    root = controller.root
    if root is None or not pairs:
        return None
    what = (
        f"Dismissing {_pair_name(*pairs[0])}"
        if len(pairs) == 1
        else f"Dismissing {len(pairs)} pairs"
    )

    async def go() -> Dismissals:
        outcome = await controller.run_in(
            controller.write_pool, _dismiss_all, root, list(pairs), dict(seen or {})
        )
        _announce(controller, "dismiss", [r for _a, _b, r in outcome.done])
        if outcome.refused:
            if len(pairs) == 1:
                message = outcome.refused[0][2]
            else:
                lines = [f"{_pair_name(a, b)}: {why}" for a, b, why in outcome.refused]
                message = (
                    f"{len(outcome.refused)} of {len(pairs)} pairs were left as they were:\n"
                    + "\n".join(lines)
                )
            controller.sig_error.emit(what, message)
        return outcome

    return controller.spawn(go(), what=what)


def dismiss(
    controller: AppController, *, a: str, b: str, seen: Mapping[str, str] | None = None
) -> asyncio.Task[Dismissals] | None:
    return dismiss_pairs(controller, [(a, b)], seen=seen)


def dismiss_like(
    controller: AppController,
    *,
    a: str,
    b: str,
    quote_a: str,
    quote_b: str,
    seen: Mapping[str, str] | None = None,
) -> asyncio.Task[Done] | None:
    """Dismiss ``a``–``b`` and hide every pair whose two sentences have the frame of
    ``quote_a``/``quote_b`` (``dismiss --all-like-this``). One transaction, one Undo: undoing
    it shows those pairs again (:func:`~desktop.flows.review.unhide_frames_of`)."""
    root = controller.root
    if root is None:
        return None

    def work() -> Done:
        result, _frame = review.dismiss_like(
            root, a, b, quote_a=quote_a, quote_b=quote_b, seen=seen
        )
        return Done(result, _hashes(root, result.changed + result.created))

    async def go() -> Done:
        done = await controller.run_in(controller.write_pool, work)
        _announce(
            controller,
            "dismiss",
            [done.result],
            title=f"Dismissed all like {_pair_name(a, b)}",
        )
        return done

    return controller.spawn(go(), what=f"Dismissing all like {_pair_name(a, b)}")


def undismiss(controller: AppController, *, a: str, b: str) -> asyncio.Task[Done] | None:
    return _run(
        controller,
        f"Undismissing {_pair_name(a, b)}",
        "undismiss",
        lambda root: review.undismiss_pair(root, a, b),
    )


def resolve(
    controller: AppController, *, tension: str, seen: Mapping[str, str] | None = None
) -> asyncio.Task[Done] | None:
    return _run(
        controller,
        f"Marking {Path(tension).stem} resolved",
        "resolve",
        lambda root: review.resolve_tension(root, tension, seen=seen),
    )


def defeat(
    controller: AppController,
    *,
    note: str,
    motive: str,
    replaced_by: str | None = None,
    seen: Mapping[str, str] | None = None,
) -> asyncio.Task[Done] | None:
    return _run(
        controller,
        f"Marking {Path(note).stem} defeated",
        "defeat",
        lambda root: review.defeat_note(
            root, note, motive=motive, replaced_by=replaced_by, seen=seen
        ),
    )


def elevate(
    controller: AppController,
    *,
    tension: str,
    title: str,
    if_clause: str,
    then_clause: str,
    grey_zone: str = "",
    seen: Mapping[str, str] | None = None,
) -> asyncio.Task[Done] | None:
    folder = controller.settings.folders.principles
    return _run(
        controller,
        f"Elevating {Path(tension).stem}",
        "elevate",
        lambda root: review.elevate_tension(
            root,
            tension,
            title=title,
            if_clause=if_clause,
            then_clause=then_clause,
            grey_zone=grey_zone,
            seen=seen,
            folder=folder,
        ),
    )
