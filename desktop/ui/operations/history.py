"""Undo applied operations: one from History, or every one an Undo bar offers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path

from desktop.flows.review import undo_review
from desktop.ui.controller import AppController
from desktop.vault.transactions import ApplyResult
from foundation.errors import AntinomyError

log = logging.getLogger(__name__)


def undo(controller: AppController, *, operation_id: str) -> asyncio.Task[ApplyResult] | None:
    root = controller.root
    if root is None:
        return None

    async def go() -> ApplyResult:
        result = await controller.run_in(controller.write_pool, _undo, root, operation_id)
        controller.history_changed([result.operation_id])
        controller.notes_changed(result.paths)
        return result

    return controller.spawn(go(), what=f"Undoing {operation_id}")


def undo_all(
    controller: AppController, operation_ids: Sequence[str], *, what: str
) -> asyncio.Task[list[ApplyResult]] | None:
    """Undo ``operation_ids``, newest first; one that cannot be undone (a note edited
    since) is named in one problem, the others are undone. ``what``: the action in words."""
    root = controller.root
    if root is None or not operation_ids:
        return None

    def work() -> tuple[list[ApplyResult], list[str]]:
        results, refused = [], []
        for op in reversed(operation_ids):
            try:
                results.append(_undo(root, op))
            except AntinomyError as exc:
                refused.append(str(exc))
        return results, refused

    async def go() -> list[ApplyResult]:
        results, refused = await controller.run_in(controller.write_pool, work)
        if results:
            controller.history_changed(r.operation_id for r in results)
            controller.notes_changed([p for r in results for p in r.paths])
            done = "Undone" if not refused else f"Undone {len(results)} of {len(operation_ids)}"
            controller.sig_action_done.emit(f"{done}: {what}", ())
        if refused:
            controller.sig_error.emit(f"Undoing “{what}”", "\n".join(refused))
        return results

    return controller.spawn(go(), what=f"Undoing “{what}”")


def _undo(root: Path, operation_id: str) -> ApplyResult:
    return undo_review(root, operation_id)[0]  # "all like this" undone: its pairs shown again
