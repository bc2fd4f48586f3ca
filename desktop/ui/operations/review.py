"""Review actions from the GUI: dismiss, undismiss, elevate, resolve, defeat.

Each runs the review flow on the vault-write worker with the hashes the user
saw (a note edited since is refused with the flow's message), then re-indexes
the touched notes and refreshes History. The task's result carries the new
hashes of the touched notes, so the view can keep acting on them.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from desktop.flows import review
from desktop.flows.review import ReviewResult
from desktop.ui.controller import AppController


@dataclass(frozen=True)
class Done:
    result: ReviewResult
    #: sha256 of every touched note after the action.
    hashes: Mapping[str, str]


def _hashes(root: Path, paths: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for p in paths:
        try:
            out[p] = hashlib.sha256((root / p).read_bytes()).hexdigest()
        except OSError:
            continue
    return out


def _run(
    controller: AppController, what: str, action: Callable[[Path], ReviewResult]
) -> asyncio.Task[Done] | None:
    root = controller.root
    if root is None:
        return None

    def work() -> Done:
        result = action(root)
        return Done(result, _hashes(root, result.changed + result.created))

    async def go() -> Done:
        done = await controller.run_in(controller.write_pool, work)
        if done.result.operation_id is not None:
            controller.sig_history_changed.emit()
            controller.notes_changed(done.result.changed + done.result.created)
        return done

    return controller.spawn(go(), what=what)


def dismiss(
    controller: AppController, *, a: str, b: str, seen: Mapping[str, str] | None = None
) -> asyncio.Task[Done] | None:
    return _run(
        controller,
        f"Dismissing {Path(a).stem} ↔ {Path(b).stem}",
        lambda root: review.dismiss_pair(root, a, b, seen=seen),
    )


def undismiss(controller: AppController, *, a: str, b: str) -> asyncio.Task[Done] | None:
    return _run(
        controller,
        f"Undismissing {Path(a).stem} ↔ {Path(b).stem}",
        lambda root: review.undismiss_pair(root, a, b),
    )


def resolve(
    controller: AppController, *, tension: str, seen: Mapping[str, str] | None = None
) -> asyncio.Task[Done] | None:
    return _run(
        controller,
        f"Marking {Path(tension).stem} resolved",
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
