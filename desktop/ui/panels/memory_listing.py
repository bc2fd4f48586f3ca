"""What the Memory panel lists and how it words a report, apart from the panel itself:
the listing read together on a worker, the one-line report summary, and the small
tree and box builders its sections share.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGroupBox, QHeaderView, QTreeWidget, QVBoxLayout, QWidget

from desktop.flows.memory import (
    MemorySettings,
    PendingBatch,
    RejectedFragment,
    last_report,
    pending_batches,
    rejected_fragments,
    subject_pages,
)
from desktop.flows.memory.pages import SubjectPage
from desktop.flows.progress import plural

PATH_ROLE = Qt.ItemDataRole.UserRole
STATUS_TEXT = {
    "ok": "facts written",
    "empty": "input read, no fact accepted",
    "nothing": "nothing to consolidate",
    "already_running": "another consolidation is running",
    "json_failure": "the model's answer was not valid JSON — the input stays pending",
    "stopped": "stopped — finished steps were kept",
}


@dataclass(frozen=True)
class MemoryListing:
    """What the panel lists, read together on a worker."""

    pending: tuple[PendingBatch, ...]
    pages: tuple[SubjectPage, ...]
    rejected: tuple[tuple[RejectedFragment, str], ...]
    report: dict[str, Any] | None


def read_listing(root: Path, settings: MemorySettings | None = None) -> MemoryListing:
    fragments = sorted(rejected_fragments(root), key=lambda fs: fs[0].at, reverse=True)
    pages = subject_pages(root, settings=settings)
    return MemoryListing(
        tuple(pending_batches(root)),
        tuple(sorted(pages, key=lambda p: p.name.lower())),
        tuple(fragments),
        last_report(root),
    )


def report_summary(report: dict[str, Any]) -> str:
    """One line (HTML) for a report as saved: status, counts, message."""
    status = str(report.get("status", "?"))
    parts = [f"<b>{html.escape(status)}</b> — {html.escape(STATUS_TEXT.get(status, status))}"]
    accepted, rejected = len(report.get("accepted") or ()), len(report.get("rejected") or ())
    if status not in ("nothing", "already_running"):
        parts.append(
            f"{plural(accepted, 'fact')} accepted, {rejected} rejected, "
            f"{report.get('duplicates', 0)} already known; "
            f"{plural(int(report.get('lines_consumed', 0)), 'line')} consumed, "
            f"{report.get('lines_pending', 0)} still pending"
        )
    counts = report.get("line_counts") or {}
    if counts:
        parts.append(
            "lines: " + ", ".join(f"{n} {html.escape(str(k))}" for k, n in sorted(counts.items()))
        )
    when = str(report.get("finished_at") or "").replace("T", " ").rstrip("Z")
    if when:
        parts.append(f"{when} UTC, {report.get('seconds', 0)} s")
    message = report.get("message")
    line = "; ".join(parts) + "."
    if message:
        line += f"<br>{html.escape(str(message))}"
    return line


def make_tree(headers: list[str], widths: list[int], *, stretch: int | None = None) -> QTreeWidget:
    """A flat list with columns; ``stretch`` (the text column) takes the width left, so
    a narrow window elides that text instead of scrolling sideways (the tooltip has it)."""
    tree = QTreeWidget()
    tree.setHeaderLabels(headers)
    tree.setRootIsDecorated(False)
    tree.setUniformRowHeights(True)
    tree.setWordWrap(False)
    for column, width in enumerate(widths):
        tree.setColumnWidth(column, width)
    if stretch is not None:
        header = tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(40)
    return tree


def make_box(title: str, *widgets: QWidget) -> QGroupBox:
    box = QGroupBox(title)
    layout = QVBoxLayout(box)
    layout.setContentsMargins(6, 6, 6, 6)
    for w in widgets:
        layout.addWidget(w)
    return box
