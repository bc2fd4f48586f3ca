"""Raw batches: captured turns as numbered lines in ``<vault>/.antinomy/raw/``.

One file per batch, ``<batch_id>.tsv``; a batch is closed when a sibling
``<batch_id>.closed`` exists (it holds the reason). ``batch_id`` is the UTC day
of its first turn, ``2026-11-30``, and ``2026-11-30.2``, ``.3`` … for further
batches of the same day. Each line of the file is one line of a turn::

    12<TAB>2026-11-30T10:32:05Z<TAB>user<TAB>session-id<TAB>-<TAB>text

(the fifth field holds flags: ``w`` when the user withdrew the line — its text
is then gone — and ``c`` when the line continues the turn of the line before).
A turn of several lines takes several numbers, so a citation can point
at the exact line.

**Line ids** — the stable citation scheme: ``<batch_id>#L<number>``, for
example ``2026-11-30#L12``. Numbers never change once written (withdrawal
blanks a line, it never renumbers), and a batch file is never renamed, so a
subject page's link ``…/.antinomy/raw/2026-11-30.tsv#L12`` keeps pointing at
the same line.

A batch closes on day change (a turn of another day, earlier or later, opens the
next batch), when it reaches :data:`MAX_LINES` lines or :data:`MAX_BYTES`
bytes, at session end, or on demand; one batch at most is open. This is engine state,
not notes: this module writes it directly (atomically: temp file, fsync,
rename) under a short blocking lock, ``raw/.lock``.
"""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from desktop.vault.layout import state_dir
from foundation import atomic

Role = Literal["user", "assistant"]

MAX_LINES = 400
MAX_BYTES = 64 * 1024
#: A longer line is wrapped at a space so a citation stays precise.
MAX_LINE_CHARS = 600
WITHDRAWN_TEXT = "[withdrawn by the user]"

_BATCH_ID = re.compile(r"(\d{4}-\d{2}-\d{2})(?:\.(\d{1,4}))?")
LINE_ID = re.compile(r"(\d{4}-\d{2}-\d{2}(?:\.\d{1,4})?)#L(\d{1,6})")


@dataclass(frozen=True)
class RawLine:
    batch_id: str
    number: int
    #: ISO 8601 UTC, seconds: ``2026-11-30T10:32:05Z``.
    time: str
    role: Role
    session: str
    text: str
    withdrawn: bool = False
    #: This line continues the turn of the previous line (a turn of several lines).
    continues: bool = False

    @property
    def line_id(self) -> str:
        return f"{self.batch_id}#L{self.number}"


@dataclass(frozen=True)
class Batch:
    batch_id: str
    closed: bool
    close_reason: str
    lines: tuple[RawLine, ...]

    @property
    def day(self) -> str:
        return self.batch_id[:10]

    @property
    def size_bytes(self) -> int:
        return sum(len(line.text.encode("utf-8")) + 40 for line in self.lines)


def batch_sort_key(batch_id: str) -> tuple[str, int]:
    m = _BATCH_ID.fullmatch(batch_id)
    if m is None:
        return (batch_id, 0)
    return (m.group(1), int(m.group(2) or 1))


def split_line_id(line_id: str) -> tuple[str, int] | None:
    m = LINE_ID.fullmatch(line_id.strip())
    return (m.group(1), int(m.group(2))) if m else None


def format_time(ts: datetime) -> str:
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def text_lines(text: str) -> list[str]:
    """A turn's text as batch lines: one per line, tabs gone, long lines wrapped, blanks dropped."""
    out: list[str] = []
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = raw.replace("\t", "    ").rstrip()
        while len(line) > MAX_LINE_CHARS:
            cut = line.rfind(" ", MAX_LINE_CHARS // 2, MAX_LINE_CHARS)
            cut = cut if cut > 0 else MAX_LINE_CHARS
            out.append(line[:cut].rstrip())
            line = line[cut:].lstrip()
        if line.strip():
            out.append(line)
    return out


class RawStore:
    """The raw batch files of one vault. Methods that change files need :meth:`locked`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folder = state_dir(root, "raw")

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the raw folder's lock (blocking, held only for one capture's write)."""
        fd = os.open(self.folder / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def path(self, batch_id: str) -> Path:
        return self.folder / f"{batch_id}.tsv"

    def batch_ids(self) -> list[str]:
        ids = [p.stem for p in self.folder.glob("*.tsv") if _BATCH_ID.fullmatch(p.stem)]
        return sorted(ids, key=batch_sort_key)

    def is_closed(self, batch_id: str) -> bool:
        return (self.folder / f"{batch_id}.closed").exists()

    def read(self, batch_id: str) -> Batch:
        lines: list[RawLine] = []
        try:
            data = self.path(batch_id).read_text(encoding="utf-8")
        except FileNotFoundError:
            data = ""
        for row in data.splitlines():
            parts = row.split("\t", 5)
            if len(parts) != 6 or not parts[0].isdigit():
                continue  # a header or a damaged line: skipped, never fatal
            number, time, role, session, flags, text = parts
            if role not in ("user", "assistant"):
                continue
            lines.append(
                RawLine(
                    batch_id,
                    int(number),
                    time,
                    role,  # type: ignore[arg-type]
                    session,
                    text,
                    withdrawn="w" in flags,
                    continues="c" in flags,
                )
            )
        closed_marker = self.folder / f"{batch_id}.closed"
        reason = ""
        if closed_marker.exists():
            reason = closed_marker.read_text(encoding="utf-8").strip() or "closed"
        return Batch(batch_id, bool(reason), reason, tuple(lines))

    def open_batch(self) -> Batch | None:
        """The batch turns go to: the last one not closed — an earlier day's too, opened
        by a turn dated before the batch it followed (an older transcript imported)."""
        for batch_id in reversed(self.batch_ids()):
            if not self.is_closed(batch_id):
                return self.read(batch_id)
        return None

    def closed_batches(self) -> list[Batch]:
        return [self.read(b) for b in self.batch_ids() if self.is_closed(b)]

    def line(self, line_id: str) -> RawLine | None:
        parts = split_line_id(line_id)
        if parts is None:
            return None
        for line in self.read(parts[0]).lines:
            if line.number == parts[1]:
                return line
        return None

    # ------------------------------------------------------------------ writes (locked)

    def write(self, batch: Batch) -> None:
        body = [f"# antinomy raw batch {batch.batch_id} (line id = {batch.batch_id}#L<number>)"]
        for line in batch.lines:
            flags = ("w" if line.withdrawn else "") + ("c" if line.continues else "") or "-"
            text = WITHDRAWN_TEXT if line.withdrawn else line.text
            body.append(f"{line.number}\t{line.time}\t{line.role}\t{line.session}\t{flags}\t{text}")
        write_private(self.path(batch.batch_id), ("\n".join(body) + "\n").encode("utf-8"))

    def close(self, batch_id: str, reason: str) -> None:
        marker = self.folder / f"{batch_id}.closed"
        if not marker.exists():
            write_private(marker, (reason + "\n").encode("utf-8"))

    def new_batch_id(self, day: str) -> str:
        taken = [b for b in self.batch_ids() if b[:10] == day]
        if not taken:
            return day
        return f"{day}.{max(batch_sort_key(b)[1] for b in taken) + 1}"

    def append(
        self, *, time: str, role: Role, session: str, texts: Sequence[str]
    ) -> tuple[RawLine, ...]:
        """Append one turn's lines to the open batch, closing and opening batches as due."""
        day = time[:10]
        current = self.open_batch()
        if current is not None and current.day != day:
            self.close(current.batch_id, "day change")
            current = None
        if (
            current is not None
            and (
                len(current.lines) + len(texts) > MAX_LINES
                or current.size_bytes + sum(len(t.encode("utf-8")) + 40 for t in texts) > MAX_BYTES
            )
            and current.lines
        ):
            self.close(current.batch_id, "size limit")
            current = None
        if current is None:
            current = Batch(self.new_batch_id(day), False, "", ())
            # Only one batch is ever open: any other left open is closed, never stranded.
            for batch_id in self.batch_ids():
                if not self.is_closed(batch_id):
                    self.close(batch_id, "day change")
        start = current.lines[-1].number + 1 if current.lines else 1
        added = tuple(
            RawLine(current.batch_id, start + i, time, role, session, text, continues=i > 0)
            for i, text in enumerate(texts)
        )
        self.write(replace(current, lines=current.lines + added))
        return added

    def withdraw(self, line_ids: Sequence[str]) -> int:
        """Blank and flag these lines; returns how many were newly withdrawn."""
        by_batch: dict[str, set[int]] = {}
        for line_id in line_ids:
            parts = split_line_id(line_id)
            if parts is not None:
                by_batch.setdefault(parts[0], set()).add(parts[1])
        count = 0
        for batch_id, numbers in by_batch.items():
            batch = self.read(batch_id)
            lines = []
            for line in batch.lines:
                if line.number in numbers and not line.withdrawn:
                    line = replace(line, withdrawn=True, text=WITHDRAWN_TEXT)
                    count += 1
                lines.append(line)
            self.write(replace(batch, lines=tuple(lines)))
        return count


def write_private(target: Path, data: bytes) -> None:
    """Conversation text: atomic, fsynced, owner-only."""
    atomic.write_bytes(target, data, mode=atomic.PRIVATE_MODE)


def now_utc() -> datetime:
    return datetime.now(UTC)
