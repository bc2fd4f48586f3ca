"""Replacing a whole file atomically: a crash leaves the old file or the new one, never half.

Every state file Antinomy writes outside the transaction journal (settings,
caches, guard decisions, raw memory batches, the endpoint's published state,
hook files) goes through :func:`write_bytes` or :func:`write_json`. Notes are
written only by ``desktop.vault.transactions``, which journals its own writes.

Standard library only, and no models: every layer may import it.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

#: Permission bits of a new file before the umask, as ``open()`` gives them.
DEFAULT_MODE = 0o666
#: Owner-only: tokens, API keys, conversation text.
PRIVATE_MODE = 0o600
#: Not on Windows, which has no symbolic links to fear here.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


@contextlib.contextmanager
def replacing(
    path: str | os.PathLike[str], *, mode: int = DEFAULT_MODE, durable: bool = True
) -> Iterator[IO[bytes]]:
    """A binary file that replaces ``path`` when the block ends without an error.

    The data goes to a temporary file beside ``path`` (a unique name, so threads
    and processes never share one), is flushed and, when ``durable``, fsynced;
    then it is renamed over ``path`` and the folder is fsynced so the rename
    survives a power cut. On an error the temporary file is removed and
    ``path`` is untouched. ``mode`` applies to a new file (the umask too).

    No link is followed at either step: the temporary file is created new
    (``O_EXCL | O_NOFOLLOW``: a link planted at its name fails the write), and
    the rename replaces whatever entry is at ``path`` — a symbolic link there is
    replaced by the file, its target is never written. Folders on the way are
    the caller's: they are followed as given.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(
        f".{target.name}.{os.getpid()}.{threading.get_ident()}.{secrets.token_hex(4)}.tmp"
    )
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(tmp, flags, mode)
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
            out.flush()
            if durable:
                os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if durable:
        _fsync_folder(target.parent)


def write_bytes(
    path: str | os.PathLike[str], data: bytes, *, mode: int = DEFAULT_MODE, durable: bool = True
) -> Path:
    """Replace ``path`` with ``data`` atomically; returns the path."""
    with replacing(path, mode=mode, durable=durable) as out:
        out.write(data)
    return Path(path)


def write_text(
    path: str | os.PathLike[str], text: str, *, mode: int = DEFAULT_MODE, durable: bool = True
) -> Path:
    """Replace ``path`` with ``text`` in UTF-8, atomically."""
    return write_bytes(path, text.encode("utf-8"), mode=mode, durable=durable)


def write_json(
    path: str | os.PathLike[str],
    data: Any,
    *,
    indent: int | None = 2,
    newline: bool = True,
    mode: int = DEFAULT_MODE,
    durable: bool = True,
) -> Path:
    """Replace ``path`` with ``data`` as UTF-8 JSON (non-ASCII kept as is), atomically.

    The JSON is encoded before the file is touched, so data that cannot be
    encoded raises ``TypeError``/``ValueError`` and leaves ``path`` as it was.
    """
    text = json.dumps(data, indent=indent, ensure_ascii=False) + ("\n" if newline else "")
    return write_text(path, text, mode=mode, durable=durable)


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return  # some platforms cannot open a folder; the rename is still atomic
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
