"""Where a vault keeps Antinomy's state, and which folders are never touched.

``<vault>/.antinomy/`` holds derived data and history (index, journal, locks,
raw batches, guard markers, rejected plans), the vault's own settings, and — for a vault
that keeps them out of its notes — its dismissals (:data:`DISMISSALS_FILE`). Deleting it
loses no note.

A vault is often copied or cloned, and can carry symbolic links inside
``.antinomy/``: a link there would send the journal, the lock or the index to
any folder or file the user can write. Every state folder is therefore a real
folder (:func:`state_dir` refuses a link, naming it), and the files opened
here are opened without following a link.
"""

from __future__ import annotations

import fcntl
import os
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from desktop.vault.errors import StateUnsafe, VaultNotFound
from foundation import atomic

STATE_DIR = ".antinomy"
#: Folders Antinomy never writes into (and the index never reads).
PROTECTED_DIRS = frozenset({".obsidian", ".git", ".trash", STATE_DIR})
#: Review state a vault keeps out of its notes (the dismissals, when the vault's option says
#: so): the one file inside a protected folder that the vault's transactions write, so its
#: changes are journaled and undoable like a note's.
DISMISSALS_FILE = f"{STATE_DIR}/dismissed.json"
TRANSACTION_STATE_FILES = frozenset({DISMISSALS_FILE})
#: Open a state file without following a link at its last step (Windows has no such flag).
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def vault_root(path: str | os.PathLike[str]) -> Path:
    """The vault folder, resolved; raises VaultNotFound with the fix named."""
    root = Path(path).expanduser()
    if not root.exists():
        raise VaultNotFound(f"The vault folder {root} does not exist — check the path.")
    if not root.is_dir():
        raise VaultNotFound(f"{root} is a file, not a vault folder — give the folder of notes.")
    return root.resolve()


def state_dir(root: Path, *parts: str) -> Path:
    """``<vault>/.antinomy/<parts…>``, created on first use; raises :class:`StateUnsafe`
    if one of these folders is a symbolic link or a file."""
    path = root
    for part in (STATE_DIR, *parts):
        path = path / part
        try:
            path.mkdir()
            continue
        except FileExistsError:
            pass
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            raise StateUnsafe(link_refusal(path))
        if not stat.S_ISDIR(mode):
            raise StateUnsafe(
                f"{path} is a file where Antinomy keeps a folder of its state — move it away"
                " (the folder holds only derived data and history), then try again."
            )
    return path


def link_refusal(path: Path) -> str:
    """What to tell the user when a link stands where Antinomy keeps its own state."""
    try:
        where = os.readlink(path)
    except OSError as exc:
        where = f"an unreadable place ({exc.strerror or exc})"
    return (
        f"{path} is a symbolic link to {where}. Antinomy keeps its state in real folders and"
        " files inside the vault and never follows a link there (a copied or cloned vault can"
        " carry one); nothing was read or written through it — remove the link (.antinomy"
        " holds only derived data and history), then try again."
    )


def vault_id(root: Path) -> str:
    """A stable identity for this vault, kept in ``.antinomy/vault-id``.

    A copy of the vault folder carries the same id; :func:`approval_identity`
    adds the location.
    """
    marker = state_dir(root) / "vault-id"
    value = _read_marker(marker)
    if value:
        return value
    value = uuid.uuid4().hex
    # A fresh name, created new: nothing planted at a guessable name is written through.
    tmp = marker.with_name(f".vault-id.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(value + "\n")
    try:
        os.link(tmp, marker)  # first writer wins if two processes race
    except FileExistsError:
        value = _read_marker(marker) or value
    finally:
        tmp.unlink(missing_ok=True)
    return value


def _read_marker(marker: Path) -> str:
    try:
        fd = os.open(marker, os.O_RDONLY | NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return ""
    except OSError:
        if marker.is_symlink():
            raise StateUnsafe(link_refusal(marker)) from None
        raise
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise StateUnsafe(f"{marker} is not a regular file — move it away, then try again.")
        return f.read(256).decode("utf-8", "replace").strip()


def approval_identity(root: Path) -> str:
    """What an approval hash is bound to: this vault's id *and* where it is.

    A plan approved for one vault cannot be applied to another, nor to a copy
    of the same vault in another folder (it would carry the same id).
    """
    return f"{vault_id(root)}@{root.resolve()}"


def read_state_text(path: Path) -> str | None:
    """A state file's text, None when it does not exist; never through a link (refused by
    name), only a regular file, only UTF-8 (``ValueError`` otherwise)."""
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError:
        if path.is_symlink():
            raise StateUnsafe(link_refusal(path)) from None
        raise
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ValueError(f"{path} is not a regular file")
        try:
            return f.read().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path} is not UTF-8") from exc


@contextmanager
def state_lock(folder: Path, name: str) -> Iterator[None]:
    """Hold the lock file ``folder/name`` (created if need be, never through a link) for
    one writer of a state file at a time; blocks while another holds it."""
    lock = folder / name
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError:
        if lock.is_symlink():
            raise StateUnsafe(link_refusal(lock)) from None
        raise
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def write_state_json(target: Path, data: Any) -> None:
    """Replace a state file atomically with ``data`` as JSON; a link in its place is
    refused by name, never followed."""
    if target.is_symlink():
        raise StateUnsafe(link_refusal(target))
    atomic.write_json(target, data, indent=1)
