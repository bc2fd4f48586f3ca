"""The index never reads outside the vault, whatever is swapped in after the walk.

Each race is made to happen, not waited for: the swap runs at the moment the
index is about to open the note (the first ``os.open`` of its read), so the
walk saw a plain note and the read meets a link — in place of the note, or of
the folder above it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.vault import index as index_module
from desktop.vault import notes
from desktop.vault.index import VaultIndex
from desktop.vault.notes import NoteSkipped, read_note

SECRET = "OUTSIDE-SECRET: text that is not in the vault\n"


@pytest.fixture
def layout(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    vault = tmp_path / "vault"
    (vault / "Sub").mkdir(parents=True)
    (vault / "Sub" / "note.md").write_text("A note of the vault.\n")
    (vault / "other.md").write_text("Another note.\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "note.md").write_text(SECRET)
    yield vault.resolve(), outside


def swap_note(vault: Path, outside: Path) -> None:
    note = vault / "Sub" / "note.md"
    note.rename(vault / "Sub" / ".note.md.bak")
    note.symlink_to(outside / "note.md")


def swap_folder(vault: Path, outside: Path) -> None:
    (vault / "Sub").rename(vault / ".Sub.bak")
    (vault / "Sub").symlink_to(outside, target_is_directory=True)


class SwapOnOpen:
    """Runs ``swap`` once, at the first ``os.open`` after :meth:`arm`, then opens."""

    def __init__(self, swap: Callable[[], None], monkeypatch: pytest.MonkeyPatch) -> None:
        self.swap: Callable[[], None] | None = None
        self._pending = swap
        real_open = os.open

        def open_then(
            path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None
        ) -> int:
            if self.swap is not None:
                swap, self.swap = self.swap, None
                swap()
            return real_open(path, flags, mode, dir_fd=dir_fd)

        monkeypatch.setattr(os, "open", open_then)
        # The opener checks that os.open takes dir_fd; the stand-in does.
        monkeypatch.setattr(os, "supports_dir_fd", os.supports_dir_fd | {open_then})

    def arm(self) -> None:
        self.swap = self._pending


@pytest.mark.parametrize("swap", [swap_note, swap_folder], ids=["note", "folder"])
def test_a_link_swapped_in_just_before_the_open_is_not_followed(
    layout: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, swap: Any
) -> None:
    vault, outside = layout
    hook = SwapOnOpen(lambda: swap(vault, outside), monkeypatch)
    hook.arm()
    with pytest.raises(NoteSkipped) as caught:
        read_note(vault, "Sub/note.md")
    assert caught.value.reason == "replaced"
    assert str(caught.value) == notes.REPLACED_DETAIL


@pytest.mark.parametrize("swap", [swap_note, swap_folder], ids=["note", "folder"])
def test_the_index_keeps_outside_text_out_when_a_note_is_swapped_after_the_walk(
    layout: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, swap: Any
) -> None:
    vault, outside = layout
    hook = SwapOnOpen(lambda: swap(vault, outside), monkeypatch)
    real_read = index_module.read_note

    def read_after_swap(root: Path, rel: str, **kwargs: Any) -> Any:
        if rel == "Sub/note.md":
            hook.arm()  # the walk is done: the note was a plain file when it listed it
        return real_read(root, rel, **kwargs)

    monkeypatch.setattr(index_module, "read_note", read_after_swap)
    index = VaultIndex(vault)
    report = index.update()
    bodies = [row[0] for row in index.db.execute("SELECT body FROM notes")]
    assert not any("OUTSIDE-SECRET" in body for body in bodies)
    assert {e.path: e.reason for e in report.skipped} == {"Sub/note.md": "replaced"}
    assert index.note("other.md") is not None
    index.close()


def test_a_skipped_swap_is_looked_at_again_on_the_next_update(
    layout: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The swap is undone before the next update: the note comes back, though its own stat
    never changed."""
    vault, outside = layout
    hook = SwapOnOpen(lambda: swap_note(vault, outside), monkeypatch)
    monkeypatch.setattr(index_module, "walk_vault", _walk_then(hook.arm, index_module.walk_vault))
    index = VaultIndex(vault)
    first = index.update()  # swapped at the first read after the walk: found as a link
    assert {e.path: e.reason for e in first.skipped} == {"Sub/note.md": "symlink_outside"}
    assert index.note("Sub/note.md") is None
    monkeypatch.undo()
    (vault / "Sub" / "note.md").unlink()
    (vault / "Sub" / ".note.md.bak").rename(vault / "Sub" / "note.md")
    index.update()
    note = index.note("Sub/note.md")
    assert note is not None and note.body == "A note of the vault.\n"
    index.close()


def _walk_then(arm: Callable[[], None], walk: Callable[[Path], Iterator[Any]]) -> Any:
    def walked(root: Path) -> Iterator[Any]:
        yield from walk(root)
        arm()

    return walked


def test_a_note_linking_to_another_vault_note_is_still_read(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "Real").mkdir(parents=True)
    (vault / "Real" / "target.md").write_text("Kept in Real.\n")
    (vault / "alias.md").symlink_to(vault / "Real" / "target.md")
    note = read_note(vault.resolve(), "alias.md")
    assert note.body == "Kept in Real.\n" and note.path == "alias.md"
