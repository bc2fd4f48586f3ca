"""Walking the vault's files: which ``.md`` files there are, and which are skipped and why.

Only regular files inside the vault are ever opened; every file seen gets a
:class:`CoverageEntry` (indexed, or skipped with a stable reason), so a bad file
is visible, never silently missing.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from desktop.vault.notes import (
    BAD_NAME_DETAIL,
    SYMLINK_LOOP_DETAIL,
    display_path,
    not_regular_detail,
    relative_path,
)

REASONS = {
    "invalid_yaml": "invalid YAML",
    "not_utf8": "not UTF-8",
    "binary": "binary",
    "too_large": "too large",
    "symlink_outside": "symlink out of the vault",
    "symlink_dir": "symlinked folder not followed",
    "symlink_loop": "symlink loop",
    "not_regular": "not a regular file",
    "bad_name": "file name not UTF-8",
    "unreadable": "unreadable",
    "changing": "kept changing",
    "replaced": "replaced by a link while read",
    "vanished": "vanished while read",
    "duplicate_basename": "duplicate basename",
    "empty": "empty",
}


@dataclass(frozen=True)
class CoverageEntry:
    path: str
    #: "indexed" or "skipped".
    state: str
    #: A stable code (see REASONS) when skipped, or a warning on an indexed note.
    reason: str | None = None
    detail: str | None = None


def walk_vault(root: Path) -> Iterator[tuple[str, os.stat_result | None, CoverageEntry | None]]:
    """Every ``.md`` file under ``root``: (path, stat, None) or (path, None, skip entry).

    Dot-folders (``.obsidian``, ``.git``, ``.trash``, ``.antinomy``…) are not
    entered; symlinked folders are not followed; a symlinked note is read only
    if it points inside the vault. No file can stop the walk: a symlink loop, a
    name that is not UTF-8, a FIFO, socket or device named ``x.md`` is a skip
    entry (only regular files are ever opened).
    """
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        keep = []
        for name in sorted(dirnames):
            if name.startswith("."):
                continue
            full = here / name
            if full.is_symlink():
                rel = display_path(relative_path(root, full))
                try:
                    target = os.readlink(full)
                except OSError as exc:
                    target = f"unreadable: {exc.strerror or exc}"
                yield (
                    rel,
                    None,
                    CoverageEntry(
                        rel,
                        "skipped",
                        "symlink_dir",
                        f"symlinked folder (to {display_path(target)}) is not followed",
                    ),
                )
                continue
            keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            if not name.lower().endswith(".md") or name.startswith("."):
                continue
            yield walk_entry(root, here / name)


def walk_entry(root: Path, full: Path) -> tuple[str, os.stat_result | None, CoverageEntry | None]:
    rel = relative_path(root, full)
    shown = display_path(rel)
    if shown != rel:  # SQLite (and every later reader) needs a name that is text
        return shown, None, CoverageEntry(shown, "skipped", "bad_name", BAD_NAME_DETAIL)
    try:
        st = os.lstat(full)
        if stat.S_ISLNK(st.st_mode):
            target = full.resolve(strict=True)
            if not target.is_relative_to(root):
                return (
                    rel,
                    None,
                    CoverageEntry(rel, "skipped", "symlink_outside", f"points to {target}"),
                )
            st = full.stat()
    except RuntimeError:  # Python < 3.13 reports a loop this way
        return rel, None, CoverageEntry(rel, "skipped", "symlink_loop", SYMLINK_LOOP_DETAIL)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return rel, None, CoverageEntry(rel, "skipped", "symlink_loop", SYMLINK_LOOP_DETAIL)
        return rel, None, CoverageEntry(rel, "skipped", "unreadable", str(exc))
    if not stat.S_ISREG(st.st_mode):
        return rel, None, CoverageEntry(rel, "skipped", "not_regular", not_regular_detail(st))
    return rel, st, None
