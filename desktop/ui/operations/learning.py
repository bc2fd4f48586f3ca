"""What the scan is told outside the notes, from the GUI: ignore a sentence, a note or a
folder, take an item off that list, show a hidden frame again, reset what was learned.

These change only the vault's ``.antinomy/`` state (nothing in the notes), so they are not
journaled: each says what it did in the action bar, without Undo (Settings ▸ Learning
takes an item back). Each runs the flow on the vault-write worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from desktop.flows import review
from desktop.flows.hunter.ignored import IgnoredItem
from desktop.ui.controller import AppController

T = TypeVar("T")


def describe(item: IgnoredItem) -> str:
    """An ignored item in words: ``sentence “…” (from Note)``, ``folder Archive``."""
    if item.kind == "sentence":
        text = item.value if len(item.value) <= 90 else item.value[:89] + "…"
        where = f" (from {Path(item.note).stem})" if item.note else ""
        return f"sentence “{text}”{where}"
    if item.kind == "note":
        return f"note {Path(item.value).stem}"
    return f"folder {item.value}"


def _run(
    controller: AppController,
    what: str,
    work: Callable[[Path], T],
    said: Callable[[T], str],
) -> asyncio.Task[T] | None:
    root = controller.root
    if root is None:
        return None

    async def go() -> T:
        result = await controller.run_in(controller.write_pool, work, root)
        controller.sig_action_done.emit(said(result), ())
        return result

    return controller.spawn(go(), what=what)


def _ignored(result: tuple[IgnoredItem, bool]) -> str:
    item, added = result
    if not added:
        return f"Already ignored: {describe(item)}."
    return f"Ignored from the next scan on: {describe(item)} (Settings ▸ Learning lists it)."


def ignore_sentence(
    controller: AppController, *, text: str, note: str
) -> asyncio.Task[tuple[IgnoredItem, bool]] | None:
    return _run(
        controller,
        "Ignoring a sentence",
        lambda root: review.ignore_sentence(root, text, note=note),
        _ignored,
    )


def ignore_note(
    controller: AppController, *, note: str
) -> asyncio.Task[tuple[IgnoredItem, bool]] | None:
    return _run(
        controller, f"Ignoring {Path(note).stem}", lambda r: review.ignore_note(r, note), _ignored
    )


def ignore_folder(
    controller: AppController, *, folder: str
) -> asyncio.Task[tuple[IgnoredItem, bool]] | None:
    return _run(
        controller,
        f"Ignoring the folder {folder}",
        lambda root: review.ignore_folder(root, folder),
        _ignored,
    )


def remove_ignored(
    controller: AppController, *, item: IgnoredItem
) -> asyncio.Task[IgnoredItem] | None:
    return _run(
        controller,
        f"No longer ignoring the {item.kind}",
        lambda root: review.remove_ignored(root, f"{item.kind}:{item.value}"),
        lambda gone: f"No longer ignored: {describe(gone)}. The next scan compares it again.",
    )


def unhide_frame(controller: AppController, *, key: str) -> asyncio.Task[object] | None:
    return _run(
        controller,
        "Showing pairs like a dismissed one again",
        lambda root: review.unhide_frame(root, key),
        lambda _f: "Pairs like that one are shown again by the next scan (its dismissal stays).",
    )


def reset_learning(controller: AppController) -> asyncio.Task[tuple[int, int]] | None:
    return _run(
        controller,
        "Resetting what the scan learned",
        review.reset_learning,
        lambda n: (
            f"Back to the shipped calibration: {n[0]} decision(s) set aside, {n[1]} hidden "
            "frame(s) shown again. The notes keep your dismissals."
        ),
    )
