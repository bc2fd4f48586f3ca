"""The progress journal and the consolidation log: vault notes written in the same
transaction as the subject pages, so a page never holds facts whose input still
looks pending (and a crash never consumes input without its facts).

``Antinomy/Memory/Consolidation progress.md``::

    - batch 2026-11-30 through L120
    - requeue r-3f2a9c01de

A batch line is a watermark: every line up to that number was consolidated
(withdrawn lines included: they are consumed without being read). A requeue
line records a re-queued rejected fragment as done.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from desktop.flows.memory.batches import batch_sort_key
from desktop.vault.transactions import Write, sha256_hex

PROGRESS_NAME = "Consolidation progress.md"
LOG_NAME = "Consolidation log.md"
_BATCH = re.compile(r"^- batch (\S+) through L(\d+)\s*$")
_REQUEUE = re.compile(r"^- requeue (r-[0-9a-f]+)\s*$")


@dataclass
class Progress:
    through: dict[str, int] = field(default_factory=dict)
    requeues: set[str] = field(default_factory=set)
    #: sha256 of the file as read (None: no file yet).
    sha256: str | None = None

    def render(self) -> str:
        lines = [
            "---",
            "type: memory-progress",
            "---",
            "# Consolidation progress",
            "",
            "Written by Antinomy in the same transaction as the subject pages: which raw",
            "lines have been consolidated. Editing it makes those lines pending again.",
            "",
        ]
        for batch in sorted(self.through, key=batch_sort_key):
            lines.append(f"- batch {batch} through L{self.through[batch]}")
        lines += [f"- requeue {r}" for r in sorted(self.requeues)]
        return "\n".join(lines) + "\n"


def read_progress(root: Path, memory_folder: str) -> Progress:
    path = root / memory_folder / PROGRESS_NAME
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Progress()
    progress = Progress(sha256=sha256_hex(data))
    for line in data.decode("utf-8", "replace").splitlines():
        if m := _BATCH.match(line):
            progress.through[m.group(1)] = max(progress.through.get(m.group(1), 0), int(m.group(2)))
        elif m := _REQUEUE.match(line):
            progress.requeues.add(m.group(1))
    return progress


def progress_write(progress: Progress, memory_folder: str) -> Write:
    path = f"{memory_folder}/{PROGRESS_NAME}"
    if progress.sha256 is None:
        return Write.create(path, progress.render())
    return Write.replace(path, progress.render(), expected_sha256=progress.sha256)


def log_write(root: Path, memory_folder: str, entry: str) -> Write:
    path = f"{memory_folder}/{LOG_NAME}"
    try:
        data = (root / path).read_bytes()
    except FileNotFoundError:
        head = (
            "---\ntype: memory-log\n---\n# Consolidation log\n\n"
            "One entry per consolidation step, written with its pages.\n"
        )
        return Write.create(path, head + "\n" + entry)
    text = data.decode("utf-8", "replace")
    sep = "" if text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    return Write.replace(path, text + sep + entry, expected_sha256=sha256_hex(data))
