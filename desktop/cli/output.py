"""Small output helpers shared by the subcommands."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from desktop.flows.progress import ProgressClock


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def progress(message: str) -> None:
    """A progress line on stderr (stdout stays clean for --json)."""
    print(message, file=sys.stderr, flush=True)


class ProgressLine:
    """A progress bar on stderr: redrawn in place on a terminal, a few lines otherwise.

    Shows what is being done and, once the current phase's rate is measured,
    the time left (:class:`~desktop.flows.progress.ProgressClock`).
    """

    def __init__(self, width: int = 30) -> None:
        self.width = width
        self.tty = sys.stderr.isatty()
        self.clock = ProgressClock()
        self._last: tuple[str, int] = ("", -1)

    def update(self, done: int, total: int, phase: str) -> None:
        if total <= 0:
            return
        text = self.clock.line(done, total, phase)
        tenth = done * 10 // total
        # The same phase whatever its counts ("judging 3 of 9 note pairs").
        kind = re.sub(r"\d+", "#", phase)
        if self.tty:
            if total > 1:
                filled = self.width * done // total
                bar = "█" * filled + "·" * (self.width - filled)
                text = f"{bar} {done}/{total} {text}"
            sys.stderr.write(f"\r\x1b[K{text}")
            sys.stderr.flush()
        elif (kind, tenth) != self._last and (tenth % 5 == 0 or done == total):
            print(text if total <= 1 else f"{text} ({done}/{total})", file=sys.stderr, flush=True)
        self._last = (kind, tenth)

    def close(self) -> None:
        if self.tty and self._last[0]:
            sys.stderr.write("\n")
            sys.stderr.flush()
