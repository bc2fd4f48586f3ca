"""Reading one Markdown file into a :class:`Note`, or saying exactly why not.

A vault is the user's, not ours: any file may be malformed. Reading never
raises for bad content — it raises :class:`NoteSkipped` with a reason code and
a sentence, which the index records in its coverage table.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from desktop.vault.errors import VaultError
from desktop.vault.frontmatter import FrontmatterError, parse_frontmatter, split_frontmatter

#: Notes larger than this are listed as skipped, not read (1 MiB).
DEFAULT_MAX_BYTES = 1 << 20
#: How many times a file that changes while being read is re-read.
READ_ATTEMPTS = 3
#: Never follow a link at the last step of a path (Windows has no such flag).
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
_INLINE_TAG = re.compile(r"(?:(?<=\s)|^)#([A-Za-z0-9_][\w/-]*)", re.UNICODE)
_FENCED_CODE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")


class NoteSkipped(VaultError):
    """A file that cannot be indexed; ``reason`` is a stable code."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Link:
    """A wikilink as written: ``[[target#heading|alias]]`` or ``![[…]]``."""

    target: str
    heading: str | None = None
    alias: str | None = None
    embed: bool = False

    @property
    def target_basename(self) -> str:
        name = PurePosixPath(self.target).name
        return name[:-3] if name.lower().endswith(".md") else name


@dataclass(frozen=True)
class Note:
    #: Vault-relative POSIX path, e.g. ``Tensions/Speed vs care.md``.
    path: str
    basename: str
    frontmatter: Mapping[str, Any] = field(compare=False, repr=False)
    body: str = field(repr=False)
    type: str | None
    status: str | None
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    links: tuple[Link, ...] = field(repr=False)
    #: sha256 of the file's bytes.
    sha256: str
    mtime: float
    size: int

    @property
    def title(self) -> str:
        value = self.frontmatter.get("title")
        return str(value) if isinstance(value, str) and value.strip() else self.basename


def frontmatter_strings(value: Any) -> tuple[str, ...]:
    """A frontmatter value as a tuple of strings (a lone string counts as one)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip()) if "," in value else (value,)
    if isinstance(value, list | tuple):
        return tuple(str(v) for v in value if v is not None and str(v).strip())
    return (str(value),)


def note_type(frontmatter: Mapping[str, Any]) -> str | None:
    """``type``, else ``antinomia_type`` (Antinomia), else ``kind`` (Commonwealth)."""
    for key in ("type", "antinomia_type", "kind"):
        value = frontmatter.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def parse_links(body: str) -> tuple[Link, ...]:
    """Wikilinks outside code: ``[[Note]]``, ``[[Folder/Note]]``, ``[[Note|alias]]``,
    ``[[Note#Heading]]``, ``[[#Heading]]`` (same note) and embeds ``![[Note]]``."""
    text = _INLINE_CODE.sub("", _FENCED_CODE.sub("", body))
    links: list[Link] = []
    for bang, inner in _WIKILINK.findall(text):
        target, _, alias = inner.partition("|")
        target, _, heading = target.partition("#")
        target = target.strip()
        if not target:  # [[#Heading]] points into the same note
            continue
        links.append(
            Link(
                target=target,
                heading=heading.strip() or None,
                alias=alias.strip() or None,
                embed=bool(bang),
            )
        )
    return tuple(links)


def parse_tags(frontmatter: Mapping[str, Any], body: str) -> tuple[str, ...]:
    tags = [
        t.lstrip("#")
        for t in frontmatter_strings(frontmatter.get("tags") or frontmatter.get("tag"))
    ]
    text = _INLINE_CODE.sub("", _FENCED_CODE.sub("", body))
    tags.extend(_INLINE_TAG.findall(text))
    seen: dict[str, None] = {}
    for tag in tags:
        if tag and not tag.isdigit():
            seen.setdefault(tag, None)
    return tuple(seen)


def _check_size(size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise NoteSkipped(
            "too_large",
            f"{size / 1048576:.1f} MB is over the {max_bytes / 1048576:.0f} MB limit for one note",
        )


def parse_note(
    path: str, data: bytes, *, mtime: float = 0.0, max_bytes: int = DEFAULT_MAX_BYTES
) -> Note:
    """Turn a file's bytes into a Note, or raise NoteSkipped with the reason."""
    size = len(data)
    _check_size(size, max_bytes)
    if b"\x00" in data[:8192]:
        raise NoteSkipped("binary", "binary data (NUL bytes), not a Markdown text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NoteSkipped(
            "not_utf8",
            f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}) — re-save it as UTF-8",
        ) from None
    try:
        frontmatter = parse_frontmatter(text)
    except FrontmatterError as exc:
        raise NoteSkipped("invalid_yaml", f"invalid frontmatter: {exc}") from None
    body = split_frontmatter(text).body
    stem = PurePosixPath(path).name
    basename = stem[:-3] if stem.lower().endswith(".md") else stem
    status = frontmatter.get("status")
    return Note(
        path=path,
        basename=basename,
        frontmatter=frontmatter,
        body=body,
        type=note_type(frontmatter),
        status=str(status).strip() if status is not None and str(status).strip() else None,
        aliases=frontmatter_strings(frontmatter.get("aliases") or frontmatter.get("alias")),
        tags=parse_tags(frontmatter, body),
        links=parse_links(body),
        sha256=hashlib.sha256(data).hexdigest(),
        mtime=mtime,
        size=size,
    )


def read_note(root: Path, path: str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Note:
    """Read ``root/path`` consistently: a file that changes while being read is
    re-read, and reported as ``changing`` if it never holds still.

    Only a regular file inside the vault is read: it is opened one name at a time
    from the vault folder without following a link (:func:`open_in_vault`), without
    blocking (a FIFO named ``x.md`` would otherwise wait for a writer for ever), and
    checked on the open descriptor, so nothing swapped in after the walk — a link
    out of the vault in place of the note or of a folder above it, a FIFO — is read.
    A note that is itself a link to another file in the vault is read there.
    """
    for _ in range(READ_ATTEMPTS):
        try:
            data, before, after = _read_regular(root, _where(root, path), max_bytes)
        except FileNotFoundError:
            raise NoteSkipped("vanished", "the file disappeared while being read") from None
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise NoteSkipped("replaced", REPLACED_DETAIL) from None
            raise NoteSkipped("unreadable", f"cannot be read: {exc.strerror or exc}") from None
        if (before.st_mtime_ns, before.st_size) == (after.st_mtime_ns, after.st_size) and len(
            data
        ) == after.st_size:
            return parse_note(path, data, mtime=after.st_mtime, max_bytes=max_bytes)
    raise NoteSkipped(
        "changing", f"the file kept changing while being read ({READ_ATTEMPTS} attempts)"
    )


def _where(root: Path, path: str) -> str:
    """Where note ``path`` is read, relative to the vault: itself, or the vault file its
    link points to (a link out of the vault, or a loop, is a :class:`NoteSkipped`)."""
    full = root / path
    try:
        if not full.is_symlink():
            return path
        target = full.resolve(strict=True)
    except FileNotFoundError:
        raise NoteSkipped("vanished", "the file disappeared while being read") from None
    except RuntimeError:  # Python < 3.13 reports a loop this way
        raise NoteSkipped("symlink_loop", SYMLINK_LOOP_DETAIL) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NoteSkipped("symlink_loop", SYMLINK_LOOP_DETAIL) from None
        raise NoteSkipped("unreadable", f"cannot be read: {exc.strerror or exc}") from None
    real_root = root.resolve()
    if not target.is_relative_to(real_root):
        raise NoteSkipped("symlink_outside", f"points to {target}")
    return relative_path(real_root, target)


def open_in_vault(root: Path, rel: str) -> int:
    """A read-only, non-blocking descriptor of vault file ``rel``, or an ``OSError``.

    Each folder on the way, and the file, is opened relative to the one before it
    with ``O_NOFOLLOW``: a symbolic link anywhere below ``root`` fails the open
    (``ELOOP``/``ENOTDIR``) instead of leading out of the vault, however late it
    was swapped in. Where folders cannot be opened (Windows) the path is opened
    as is.
    """
    flags = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    if os.open not in os.supports_dir_fd or not hasattr(os, "O_DIRECTORY"):
        return os.open(root / rel, flags | getattr(os, "O_NONBLOCK", 0))
    parts = PurePosixPath(rel).parts
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        for part in parts[:-1]:
            inner = os.open(part, flags | os.O_DIRECTORY, dir_fd=folder)
            os.close(folder)
            folder = inner
        return os.open(parts[-1], flags | os.O_NONBLOCK, dir_fd=folder)
    finally:
        os.close(folder)


def _read_regular(
    root: Path, rel: str, max_bytes: int
) -> tuple[bytes, os.stat_result, os.stat_result]:
    fd = open_in_vault(root, rel)
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            raise NoteSkipped("not_regular", not_regular_detail(before))
        _check_size(before.st_size, max_bytes)  # never read a huge file whole
        chunks: list[bytes] = []
        size = 0
        while size <= before.st_size:  # one byte more than expected tells a growing file
            chunk = os.read(fd, max(before.st_size - size + 1, 1))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        after = os.fstat(fd)
    finally:
        os.close(fd)
    return b"".join(chunks), before, after


#: Coverage details of files the walk refuses before reading.
SYMLINK_LOOP_DETAIL = "a symlink loop (the link points, directly or not, at itself)"
#: Reasons ``read_note`` gives for a file that is not what the walk saw (swapped for a link,
#: gone): the index looks at it again on the next update even if its stat is unchanged.
SWAPPED_REASONS = frozenset({"replaced", "symlink_outside", "symlink_loop", "vanished"})
REPLACED_DETAIL = (
    "the file, or a folder above it, was replaced by a link while the vault was read; the"
    " link is not followed (the next update looks at it again)"
)
BAD_NAME_DETAIL = (
    "the file name is not valid UTF-8 (shown with \\x escapes); rename the file to read it"
)


def not_regular_detail(st: os.stat_result) -> str:
    mode = st.st_mode
    kind = (
        "a FIFO (named pipe)"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a folder"
        if stat.S_ISDIR(mode)
        else "not a regular file"
    )
    return f"{kind}, not a regular file: only regular files are read"


def display_path(rel: str) -> str:
    """``rel`` as text that can be stored and shown: bytes of a name that are not
    UTF-8 (Python keeps them as lone surrogates) become ``\\xNN`` escapes."""
    try:
        rel.encode("utf-8")
        return rel
    except UnicodeEncodeError:
        return os.fsencode(rel).decode("utf-8", "backslashreplace")


def relative_path(root: Path, full: Path) -> str:
    return PurePosixPath(os.path.relpath(full, root).replace(os.sep, "/")).as_posix()
