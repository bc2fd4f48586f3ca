"""Asking the scan to ignore a sentence, a note or a folder of this vault, and taking it back.

The list is the vault's ``.antinomy/ignored.json`` (:mod:`desktop.flows.hunter.ignored`);
nothing in the notes changes, so these are not journaled transactions: ``remove_ignored``
is the way back, and the window's Settings ▸ Learning and ``antinomy ignore list`` show
the list. Blocking file I/O: call these from a worker thread.
"""

from __future__ import annotations

import os
from pathlib import PurePosixPath

from desktop.flows.hunter.ignored import KINDS, IgnoredItem, IgnoreStore, add_item, sentence_key
from desktop.flows.review.errors import BadInput
from desktop.flows.review.vaultfiles import VaultFiles
from desktop.vault.layout import PROTECTED_DIRS

#: An ignored sentence shorter than this (once normalised) would match lines by accident.
MIN_SENTENCE_CHARS = 12


def ignore_sentence(
    root: str | os.PathLike[str], text: str, *, note: str | None = None
) -> tuple[IgnoredItem, bool]:
    """Ignore ``text`` in every note of the vault (``note``: the note it was shown from, kept
    to say where it came from). Returns (the item, whether it was new)."""
    files = VaultFiles(root)
    words = " ".join(text.split())
    if len(sentence_key(words)) < MIN_SENTENCE_CHARS:
        raise BadInput(
            f"“{words}” is too short to ignore as a sentence (at least {MIN_SENTENCE_CHARS} "
            "characters): give the whole sentence as the scan showed it."
        )
    path = files.locate(note) if note else ""
    return _add(files, IgnoredItem("sentence", words, path))


def ignore_note(root: str | os.PathLike[str], note: str) -> tuple[IgnoredItem, bool]:
    """Never compare ``note`` (a path or an unambiguous basename) in a scan."""
    files = VaultFiles(root)
    return _add(files, IgnoredItem("note", files.locate(note)))


def ignore_folder(root: str | os.PathLike[str], folder: str) -> tuple[IgnoredItem, bool]:
    """Never compare a note in ``folder`` (vault-relative, its subfolders too)."""
    files = VaultFiles(root)
    return _add(files, IgnoredItem("folder", folder_path(files, folder)))


def folder_path(files: VaultFiles, folder: str) -> str:
    """``folder`` as a vault-relative folder that exists, or a refusal naming why."""
    given = folder.strip().replace("\\", "/")
    if os.path.isabs(given):
        try:
            given = os.path.relpath(os.path.realpath(given), files.root)
        except ValueError:
            given = "../"
    parts = PurePosixPath(given.strip("/")).parts
    if not parts or given.strip("/") in ("", "."):
        raise BadInput(
            "No folder given — name a folder of the vault (to ignore every note, stop scanning)."
        )
    if ".." in parts:
        raise BadInput(f"{folder} is outside the vault {files.root} — give a folder of this vault.")
    if parts[0] in PROTECTED_DIRS:
        raise BadInput(f"{folder} is never scanned anyway ({parts[0]} holds no notes).")
    relative = "/".join(parts)
    if not (files.root / relative).is_dir() or (files.root / relative).is_symlink():
        raise BadInput(
            f"There is no folder {relative} in the vault {files.root} — check the name "
            "(a path from the vault's top folder, e.g. Projects/Old)."
        )
    return relative


def _add(files: VaultFiles, item: IgnoredItem) -> tuple[IgnoredItem, bool]:
    with IgnoreStore(files.root).editing() as ignored:
        added = add_item(ignored, item)
        kept = ignored.find(item.kind, item.value)
    assert kept is not None
    return kept, added


def list_ignored(root: str | os.PathLike[str]) -> list[IgnoredItem]:
    """Everything this vault's scans ignore, in the order it was asked."""
    return list(IgnoreStore(VaultFiles(root).root).read().items)


def remove_ignored(root: str | os.PathLike[str], which: int | str) -> IgnoredItem:
    """Take one item off the list: ``which`` is its number in ``antinomy ignore list`` (from
    1), or ``kind:value`` (``note:Projects/Old.md``, ``sentence:The words``)."""
    with IgnoreStore(VaultFiles(root).root).editing() as ignored:
        items = ignored.items
        if isinstance(which, int) or str(which).strip().isdigit():
            n = int(which)
            if not 1 <= n <= len(items):
                raise BadInput(
                    f"There is no ignored item number {n}: "
                    + (f"they are numbered 1 to {len(items)}" if items else "nothing is ignored")
                    + " (`antinomy ignore list` lists them)."
                )
            return items.pop(n - 1)
        kind, _, value = str(which).partition(":")
        if kind not in KINDS or not value.strip():
            raise BadInput(
                f"{which!r} names no ignored item: give its number in `antinomy ignore list`, "
                "or kind:value (sentence:…, note:…, folder:…)."
            )
        found = ignored.find(kind, value.strip())
        if found is None:
            raise BadInput(f"No {kind} {value.strip()!r} is ignored (`antinomy ignore list`).")
        items.remove(found)
        return found
