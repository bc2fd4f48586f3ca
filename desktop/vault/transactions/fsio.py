"""Durable file primitives: hashing, atomic replace, durable delete, folder sync.

Every write goes to a temp file in the target's own folder (so the rename never
crosses a filesystem), is fsynced, then renamed over the target, and the folder
is fsynced so the rename itself survives a power cut. Temp names are derived
from the operation id and the path, so recovery can find and remove them.

Linux is the target. On Windows, folders cannot be opened for fsync (NTFS
journals the rename itself) and ``os.link`` needs NTFS; both places say so.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

from desktop.vault.transactions.faults import checkpoint

#: Suffix of the engine's temp files (hidden: Obsidian and the index skip dotfiles).
TEMP_SUFFIX = ".antinomy-tmp"
#: Never follow a link at the last step of a path (Windows has no such flag).
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def temp_path(target: Path, operation_id: str, rel: str) -> Path:
    """The temp file used when writing ``target``; short, so long names still fit."""
    digest = sha256_bytes(f"{operation_id}\0{rel}".encode())[:16]
    return target.parent / f".{digest}{TEMP_SUFFIX}"


def read_file(path: Path) -> bytes | None:
    """The bytes of a regular file, or ``None`` if nothing is there.

    Symbolic links are not followed (``O_NOFOLLOW``): the engine never reads or
    writes through a link, even one created after the plan was checked.
    """
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file", str(path))
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def current_sha256(path: Path) -> str | None:
    data = read_file(path)
    return None if data is None else sha256_bytes(data)


def fsync_dir(folder: Path) -> None:
    """Make renames and deletions in ``folder`` durable (no-op where unsupported)."""
    # Windows cannot open a folder for fsync; NTFS journals renames itself.
    if os.name == "nt":  # pragma: no cover - Linux is the target
        return
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_temp(tmp: Path, data: bytes, *, mode: int | None) -> None:
    """Write ``data`` to ``tmp`` and fsync it; ``mode`` copies the old file's permissions."""
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        if mode is not None:
            os.fchmod(fd, stat.S_IMODE(mode))
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def existing_mode(path: Path) -> int | None:
    try:
        return os.lstat(path).st_mode
    except FileNotFoundError:
        return None


def atomic_write(
    target: Path,
    data: bytes,
    *,
    tmp: Path,
    label: str,
    must_not_exist: bool,
    check: Callable[[], None] | None = None,
) -> None:
    """Replace ``target`` with ``data`` atomically and durably.

    With ``must_not_exist`` the final step is a hard link, which fails if a
    file appeared at ``target`` meanwhile (raises ``FileExistsError``) instead
    of overwriting it. ``check`` runs once the new bytes are on disk, right
    before the rename (an editor's save can only be lost in between): if it
    raises, the temp file is removed and ``target`` is untouched.
    """
    write_temp(tmp, data, mode=existing_mode(target))
    checkpoint(f"{label}:temp-synced")
    if check is not None:
        try:
            check()
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    if must_not_exist:
        _link_new(tmp, target)
    else:
        os.replace(tmp, target)
    checkpoint(f"{label}:replaced")
    fsync_dir(target.parent)


def _link_new(tmp: Path, target: Path) -> None:
    try:
        os.link(tmp, target)
    except FileExistsError:
        tmp.unlink(missing_ok=True)
        raise
    except OSError as exc:
        # Filesystems without hard links (FAT/exFAT sticks; Windows off NTFS):
        # check, then rename — a tiny window instead of none.
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        if os.path.lexists(target):
            tmp.unlink(missing_ok=True)
            raise FileExistsError(errno.EEXIST, "file exists", str(target)) from exc
        os.replace(tmp, target)
        return
    tmp.unlink()


def remove_file(target: Path, *, label: str) -> None:
    """Delete ``target`` durably (a missing file is fine: the goal state holds)."""
    target.unlink(missing_ok=True)
    checkpoint(f"{label}:removed")
    fsync_dir(target.parent)


def make_dirs(root: Path, rel_dirs: list[str]) -> None:
    """Create each folder (parents first), syncing its parent so it survives a crash."""
    for rel in sorted(rel_dirs, key=lambda r: r.count("/")):
        folder = root / rel
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        fsync_dir(folder.parent)


def remove_empty_dirs(root: Path, rel_dirs: tuple[str, ...]) -> None:
    """Remove folders the engine created, deepest first, if they are empty."""
    for rel in sorted(rel_dirs, key=lambda r: r.count("/"), reverse=True):
        folder = root / rel
        try:
            folder.rmdir()
        except OSError:
            continue  # gone already, or someone put a file in it: keep it
        fsync_dir(folder.parent)
