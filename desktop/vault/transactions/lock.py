"""The vault mutation lock: one writer at a time, and a second one told so at once.

``fcntl.flock`` on ``<vault>/.antinomy/lock``, non-blocking. The kernel drops
the lock when its holder exits or is killed, so a crash never leaves a stale
lock behind. The file keeps the holder's pid, only to name it in the message.
Two threads of one process conflict too (each opens its own descriptor).

Linux is the target; on Windows this would be ``msvcrt.locking`` on the same
file (``fcntl`` does not exist there).
"""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from desktop.vault.errors import StateUnsafe, VaultBusy
from desktop.vault.layout import NOFOLLOW, link_refusal, state_dir


@contextmanager
def vault_lock(root: Path) -> Iterator[None]:
    """Hold the vault's mutation lock; raises :class:`VaultBusy` if another writer has it."""
    path = state_dir(root) / "lock"
    try:
        # Never through a link: the holder's pid is written into the file it opens.
        fd = os.open(path, os.O_RDWR | os.O_CREAT | NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError:
        if path.is_symlink():
            raise StateUnsafe(link_refusal(path)) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise StateUnsafe(f"{path} is not a regular file — move it away, then try again.")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise VaultBusy(
                f"Another Antinomy process is writing to this vault{_holder(fd)} — try again"
                " when it finishes."
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


def _holder(fd: int) -> str:
    try:
        pid = int(os.pread(fd, 32, 0).decode("ascii").strip())
    except (OSError, ValueError, UnicodeDecodeError):
        return ""
    return f" (pid {pid})"
