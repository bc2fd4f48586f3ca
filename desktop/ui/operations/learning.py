"""Ignore a sentence, a note or a folder in every later scan, from a pair's card.

These change only the vault's ``.antinomy/ignored.json`` (nothing in the notes), so they
are not journaled: each says what it did in the action bar, without Undo (Settings ▸
Learning takes an item back). Each runs the flow on the vault-write worker.
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
