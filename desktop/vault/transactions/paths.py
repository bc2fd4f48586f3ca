"""Confinement of write paths to the vault.

Two checks. :func:`check_relative_path` is lexical and runs when a plan is
built or parsed: a path is relative, POSIX, normalised (no ``.``, ``..`` or
empty parts), free of NUL and control characters, of sane length, and outside
the protected folders (but for the review state a vault may keep in ``.antinomy/``,
``layout.TRANSACTION_STATE_FILES``). :func:`resolve_target` runs against the disk at
inspect, apply and recovery time: after following symbolic links in the
parent folders, the file is still inside the vault and outside the protected
folders, and the file itself is not a link, a folder or a device.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from pathlib import Path

from desktop.vault.layout import PROTECTED_DIRS, STATE_DIR, TRANSACTION_STATE_FILES
from desktop.vault.transactions.errors import PlanInvalid

#: Longest path accepted (bytes of UTF-8), well under Linux's PATH_MAX of 4096.
MAX_PATH_BYTES = 1024
#: Longest single name (bytes of UTF-8): NAME_MAX on Linux and most filesystems.
MAX_NAME_BYTES = 255

#: Compared case-insensitively: ``.Obsidian`` is ``.obsidian`` on macOS and Windows.
_PROTECTED = {name.casefold(): name for name in PROTECTED_DIRS}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: "C:/…" or a bare "C:" (a backslash is refused on its own); "a: b.md" is a fine name.
_DRIVE = re.compile(r"^[A-Za-z]:(/|$)")


def _refuse(path: str, why: str) -> PlanInvalid:
    shown = path.encode("utf-8", "backslashreplace").decode("utf-8")
    shown = shown.replace("\x00", "\\0")
    if len(shown) > 80:
        shown = shown[:60] + "…" + shown[-15:]
    return PlanInvalid(f"Refused write path {shown!r}: {why}.")


def check_relative_path(path: object) -> str:
    """``path`` if it is a safe vault-relative path; raises :class:`PlanInvalid` naming why."""
    if not isinstance(path, str) or not path:
        raise PlanInvalid("A write needs a path relative to the vault, like 'Notes/idea.md'.")
    if "\x00" in path:
        raise _refuse(path, "it contains a NUL byte")
    if _CONTROL.search(path):
        raise _refuse(path, "it contains a control character (newline, tab, …)")
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:
        raise _refuse(path, "it is not valid Unicode text") from None
    if "\\" in path:
        raise _refuse(path, "it uses a backslash; separate folders with '/'")
    if path.startswith("/") or _DRIVE.match(path):
        raise _refuse(path, "it is absolute; give a path relative to the vault folder")
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise _refuse(
            path, "it is not a normalised path inside the vault (no '.', '..', '//', trailing '/')"
        )
    if size > MAX_PATH_BYTES:
        raise _refuse(path, f"it is too long ({size} bytes; at most {MAX_PATH_BYTES})")
    for part in parts:
        if len(part.encode("utf-8")) > MAX_NAME_BYTES:
            raise _refuse(path, f"a name in it is longer than {MAX_NAME_BYTES} bytes")
    if path in TRANSACTION_STATE_FILES:
        return path
    for part in parts:
        if part.casefold() in _PROTECTED:
            raise _refuse(path, f"it is inside {part}/, which Antinomy never writes")
    return path


def alias_key(path: str) -> str:
    """Paths with the same key name one file on case-insensitive or normalising filesystems."""
    return unicodedata.normalize("NFC", path).casefold()


def resolve_target(root: Path, rel: str) -> Path:
    """The real location of vault file ``rel``; raises :class:`PlanInvalid` if it is unsafe.

    ``root`` must already be resolved (``layout.vault_root``). Parent folders may
    be symbolic links that stay inside the vault; the file itself may not be a
    link (writing would replace the link, not its target).
    """
    check_relative_path(rel)
    lexical = root / rel
    try:
        parent = lexical.parent.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop is RuntimeError in 3.11
        raise _refuse(rel, f"its folder cannot be resolved ({exc})") from None
    if not parent.is_relative_to(root):
        raise _refuse(rel, "it leads outside the vault through a symbolic link")
    inner = parent.relative_to(root).parts
    if rel in TRANSACTION_STATE_FILES:
        # The state folder itself, never a folder reached through a link.
        if parent != root / STATE_DIR or os.path.islink(root / STATE_DIR):
            raise _refuse(rel, f"{STATE_DIR}/ is not a real folder of this vault")
        inner = ()
    for part in inner:
        if part.casefold() in _PROTECTED:
            raise _refuse(rel, f"it leads into {part}/ through a symbolic link")
    target = parent / lexical.name
    _check_existing_folders(rel, root, parent)
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return target
    except NotADirectoryError:
        raise _refuse(rel, "a folder in it is a file") from None
    if stat.S_ISLNK(st.st_mode):
        raise _refuse(rel, "it is a symbolic link; Antinomy does not write through links")
    if stat.S_ISDIR(st.st_mode):
        raise _refuse(rel, "it is a folder, not a note")
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(rel, "it is not a regular file")
    return target


def _check_existing_folders(rel: str, root: Path, parent: Path) -> None:
    folder = parent
    while folder != root and not os.path.lexists(folder):
        folder = folder.parent
    if not folder.is_dir():
        raise _refuse(rel, f"{folder.relative_to(root).as_posix()} is a file, not a folder")


def missing_folders(root: Path, target: Path) -> list[str]:
    """Vault-relative folders that must be created (outermost first) to write ``target``."""
    missing: list[str] = []
    folder = target.parent
    while folder != root and not os.path.lexists(folder):
        missing.append(folder.relative_to(root).as_posix())
        folder = folder.parent
    return missing[::-1]
