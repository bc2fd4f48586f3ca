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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from desktop.vault.errors import VaultBusy
from desktop.vault.layout import state_dir


@contextmanager
def vault_lock(root: Path) -> Iterator[None]:
    """Hold the vault's mutation lock; raises :class:`VaultBusy` if another writer has it."""
    path = state_dir(root) / "lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
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
