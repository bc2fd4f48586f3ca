"""Taking one change back out of a file that was edited after it: a line-based 3-way merge.

When an operation is refused after it wrote a file, and an editor saved that
file meanwhile on top of what the operation wrote (it reloaded the file, the
user typed, it saved), restoring the before-image would lose the user's edit,
and leaving the file would keep half of a refused operation. The way out is the
one ``git revert`` takes: the change written → before is applied to the file
as it is now, if the edit touches other lines. Edits on the same lines, or on
lines next to each other, are not merged: the file is then left as it is and
reported.

Bytes in, bytes out: lines are split after ``\\n``, ``\\r\\n`` or ``\\r`` and
kept with their endings, so nothing else in the file changes.
"""

from __future__ import annotations

from difflib import SequenceMatcher

#: A run of lines ``[start, end)`` of the common base, and the lines that replace it.
Hunk = tuple[int, int, list[bytes]]
#: Longer files are not merged (the diff is quadratic at worst); notes are far shorter.
MAX_LINES = 20_000


def take_out(*, written: bytes, before: bytes, current: bytes) -> bytes | None:
    """``current`` with the change ``before`` → ``written`` undone, or ``None`` when the
    edit that turned ``written`` into ``current`` touches the lines of that change."""
    base = written.splitlines(keepends=True)
    if max(len(base), current.count(b"\n")) > MAX_LINES:
        return None
    back = _hunks(base, before.splitlines(keepends=True))
    edit = _hunks(base, current.splitlines(keepends=True))
    for start, end, _ in back:
        for other_start, other_end, _ in edit:
            if max(start, other_start) <= min(end, other_end):  # overlapping or adjacent
                return None
    merged: list[bytes] = []
    done = 0
    for start, end, lines in sorted(back + edit, key=lambda h: h[0]):
        merged += base[done:start]
        merged += lines
        done = end
    merged += base[done:]
    return b"".join(merged)


def _hunks(base: list[bytes], other: list[bytes]) -> list[Hunk]:
    matcher = SequenceMatcher(None, base, other, autojunk=False)
    return [
        (i1, i2, other[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    ]
