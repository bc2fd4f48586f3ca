"""Ingest: pick a file (or drop it on the window), watch the steps with Stop, read the plan
as per-file diffs with its tension candidates, then Approve or Discard: nothing is written before.

A rejected plan shows its errors and a link to the saved plan file. Planning
runs on its own worker (:mod:`desktop.ui.panels.ingest_runner`); approving
writes one transaction on the vault-write worker, undoable from History.
"""

from __future__ import annotations

import asyncio
import html
from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData, QObject, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QDragEnterEvent, QDropEvent, QShowEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.flows.ingest import IngestReport
from desktop.flows.ingest.read import KINDS
from desktop.ui.context import AppContext
from desktop.ui.operations.ingest import approve_ingest
from desktop.ui.panels import PanelSpec
from desktop.ui.panels.ingest_runner import IngestRunner
from desktop.vault.transactions import ApplyResult

FILE_FILTER = "Documents (" + " ".join(f"*{ext}" for ext in KINDS) + ")"
PATH_ROLE = Qt.ItemDataRole.UserRole


def droppable(event: QDragEnterEvent | QDropEvent) -> Path | None:
    """The one local file of a supported kind being dragged, if any."""
    return dropped_source(event.mimeData())


def dropped_source(mime: QMimeData) -> Path | None:
    """The one local file of a supported kind in a drag's data, if any."""
    if not mime.hasUrls():
        return None
    urls = [u for u in mime.urls() if u.isLocalFile()]
    if len(urls) != 1:
        return None
    path = Path(urls[0].toLocalFile())
    return path if path.suffix.lower() in KINDS else None


class QtIngestPanel(QWidget):
    sig_plan_shown = Signal(object)
    """A plan (or a rejection, or "already ingested") is on screen: ``(IngestReport)``."""
    sig_plan_applied = Signal(object)
    """The approved plan was written: ``(ApplyResult)``."""
    sig_plan_discarded = Signal()
    """The user discarded the plan on screen."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self._c = ctx.controller
        self.runner = IngestRunner(self._c)
        self.report: IngestReport | None = None
        self._window_watched: QObject | None = None

        self.pick_button = QPushButton("Ingest a file…")
        self.pick_button.setToolTip("Markdown, text, HTML or PDF; or drop a file on the window")
        self.pick_button.clicked.connect(self.pick_file)
        self.stop_button = QPushButton("Stop")
        self.stop_button.clicked.connect(self.runner.stop)
        self.progress = QProgressBar()
        self.progress.setRange(0, 6)
        self.progress.setTextVisible(False)
        self.progress.setMaximumWidth(160)
        self.state = QLabel("Pick a file, or drop one on the window.")
        top = QHBoxLayout()
        top.addWidget(self.pick_button)
        top.addWidget(self.stop_button)
        top.addWidget(self.progress)
        top.addWidget(self.state, 1)

        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.rejected = QLabel()
        self.rejected.setWordWrap(True)
        self.rejected.setTextFormat(Qt.TextFormat.RichText)
        self.rejected.setOpenExternalLinks(False)
        self.rejected.linkActivated.connect(self.open_link)
        self.rejected.setStyleSheet("QLabel { color: palette(highlighted-text); "
                                    "background: palette(highlight); padding: 6px; }")  # fmt: skip
        self.rejected.hide()

        self.files = QListWidget()
        self.files.currentItemChanged.connect(self._show_diff)
        self.diff = QPlainTextEdit()
        self.diff.setReadOnly(True)
        self.diff.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.tensions = QTreeWidget()
        self.tensions.setHeaderLabels(["Page", "Existing claim", "New claim", "Severity", "P"])
        self.tensions.setRootIsDecorated(False)
        header = self.tensions.header()  # the two claims share the width: no sideways scroll
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(24)
        stretch = QHeaderView.ResizeMode.Stretch
        self.tensions.setColumnWidth(0, 100)
        fit = QHeaderView.ResizeMode.ResizeToContents
        for column, mode in ((1, stretch), (2, stretch), (3, fit), (4, fit)):
            header.setSectionResizeMode(column, mode)
        self.tensions.itemDoubleClicked.connect(self._open_page)
        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(self.files)
        left.addWidget(self.tensions)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(self.diff)
        split.setSizes([400, 600])  # the claims' five columns need room beside the diff

        self.approve_button = QPushButton("Approve and write")
        self.approve_button.clicked.connect(self.approve)
        self.discard_button = QPushButton("Discard")
        self.discard_button.clicked.connect(self.discard)
        bottom = QHBoxLayout()
        bottom.addStretch(1)
        bottom.addWidget(self.discard_button)
        bottom.addWidget(self.approve_button)

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addWidget(self.rejected)
        layout.addWidget(split, 1)
        layout.addLayout(bottom)

        self.runner.sig_ingest_started.connect(self._started)
        self.runner.sig_ingest_progress.connect(self._progress)
        self.runner.sig_ingest_finished.connect(self.show_report)
        self.runner.sig_ingest_stopped.connect(self._stopped)
        self.runner.sig_ingest_failed.connect(self._failed)
        self._c.sig_vault_opened.connect(self._vault_opened)
        self._c.closers.append(self.runner.close)
        self.setAcceptDrops(True)
        QTimer.singleShot(0, self._watch_window)
        self._buttons()

    def _vault_opened(self, _root: object) -> None:
        self._watch_window()  # the window is built by now
        self.discard()

    def showEvent(self, event: QShowEvent) -> None:
        self._watch_window()
        super().showEvent(event)

    # -- choosing a file ------------------------------------------------------------

    def pick_file(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Ingest a document", "", FILE_FILTER)
        if name:
            self.ingest_file(Path(name))

    def ingest_file(self, path: Path) -> None:
        """Plan the ingest of ``path`` (nothing is written until Approve)."""
        if self.runner.running:
            self.state.setText("An ingest is being planned — stop it first.")
            return
        self.runner.start(path)

    def _watch_window(self) -> None:
        """Accept files dropped anywhere on the main window, not only on this panel."""
        window = self.window()
        if window is self or window is self._window_watched:
            return
        window.setAcceptDrops(True)
        window.installEventFilter(self)
        self._window_watched = window

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._window_watched:
            if event.type() in (QEvent.Type.DragEnter, QEvent.Type.DragMove):
                assert isinstance(event, QDragEnterEvent)
                if droppable(event) is not None:
                    event.acceptProposedAction()
                    return True
            elif event.type() == QEvent.Type.Drop:
                assert isinstance(event, QDropEvent)
                path = droppable(event)
                if path is not None:
                    event.acceptProposedAction()
                    self.dropped(path)
                    return True
        return super().eventFilter(watched, event)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if droppable(event) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        path = droppable(event)
        if path is not None:
            event.acceptProposedAction()
            self.dropped(path)

    def dropped(self, path: Path) -> None:
        """A file dropped on the window: bring the panel forward and plan it."""
        self._raise()
        self.ingest_file(path)

    def _raise(self) -> None:
        """Make the tab holding this panel the current one."""
        chain: list[QWidget] = [self]
        parent = self.parentWidget()
        while parent is not None:
            if isinstance(parent, QTabWidget):
                for widget in chain:
                    if parent.indexOf(widget) >= 0:
                        parent.setCurrentWidget(widget)
                        break
            chain.append(parent)
            parent = parent.parentWidget()

    # -- running ----------------------------------------------------------------------

    def _started(self, source: str) -> None:
        self._clear()
        self.progress.setValue(0)
        self.state.setText(f"Reading {Path(source).name}…")
        self._buttons()

    def _progress(self, done: int, total: int, what: str) -> None:
        self.progress.setRange(0, total)
        self.progress.setValue(done)
        self.state.setText(what[0].upper() + what[1:] if what else "")

    def _stopped(self) -> None:
        self.state.setText("Stopped; nothing was written.")
        self.progress.setValue(0)
        self._buttons()

    def _failed(self, message: str) -> None:
        self.state.setText("Not ingested.")
        self.summary.setText(html.escape(message))
        self._buttons()

    def show_report(self, report: IngestReport) -> None:
        self._clear()
        self.report = report
        self.progress.setValue(self.progress.maximum())
        s = report.source
        head = f"<b>{html.escape(s.title)}</b> ({s.kind}, {s.words_kept} words"
        if s.kind == "html":
            head += f", {s.boilerplate_removed:.0%} boilerplate removed"
        if s.pages:
            head += f", {s.pages} pages"
        lines = [head + ")", html.escape(report.message)]
        if report.context is not None:
            c = report.context
            lines.append(
                f"Context: {c.sentences_sent} of {c.sentences_total} sentences, "
                f"{len(c.pages_sent)} related page(s) shown, "
                f"{len(c.pages_judged)} read-only for the judge, "
                f"{c.prompt_tokens}/{c.context_window} tokens"
            )
            lines += [f"Left out: {html.escape(x.name)} ({html.escape(x.why)})" for x in c.left_out]
        if report.status == "planned":
            lines.append(f"Judge: {html.escape(report.judge)}; {report.pairs_judged} pair(s)")
            if report.errors_first:
                lines.append(f"The first answer had {len(report.errors_first)} problem(s); "
                             "the repair fixed them.")  # fmt: skip
        self.summary.setText("<br>".join(lines))
        self.state.setText(
            {
                "planned": "Plan ready: read the diffs, then approve or discard.",
                "already_ingested": "Already ingested: nothing new.",
                "rejected": "Plan rejected.",
                "stopped": "Stopped; nothing was written.",
            }[report.status]
        )
        if report.status == "rejected":
            self._show_rejection(report)
        if report.preview is not None:
            for f in report.preview.files:
                item = QListWidgetItem(
                    f"{f.action}  {f.path}  (+{f.lines_added} −{f.lines_removed})"
                )
                item.setData(PATH_ROLE, f.path)
                self.files.addItem(item)
            self.files.setCurrentRow(0)
        for t in report.contradictions:
            row = QTreeWidgetItem(
                [t.page, t.existing_claim, t.new_claim, t.severity, f"{t.probability:.2f}"]
            )
            row.setData(0, PATH_ROLE, t.page)
            row.setToolTip(1, t.existing_claim)
            row.setToolTip(2, t.new_claim)
            self.tensions.addTopLevelItem(row)
        self._buttons()
        self.sig_plan_shown.emit(report)

    def _show_rejection(self, report: IngestReport) -> None:
        errors = report.errors_after_repair or report.errors_first
        url = QUrl.fromLocalFile(report.rejected_path).toString()
        items = "".join(f"<li>{html.escape(e)}</li>" for e in errors)
        self.rejected.setText(
            f"The plan failed validation, even after one repair:<ul>{items}</ul>"
            f'Saved with its errors: <a href="{url}">{html.escape(report.rejected_path)}</a>'
        )
        self.rejected.show()

    def open_link(self, url: str) -> None:
        QDesktopServices.openUrl(QUrl(url))

    def _show_diff(self, item: QListWidgetItem | None, _previous: object = None) -> None:
        if item is None or self.report is None or self.report.preview is None:
            self.diff.clear()
            return
        path = item.data(PATH_ROLE)
        for f in self.report.preview.files:
            if f.path == path:
                self.diff.setPlainText(f.diff)
                return

    def _open_page(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        path = item.data(0, PATH_ROLE)
        if path:
            self._c.sig_preview_requested.emit(str(path))

    # -- approve, discard ---------------------------------------------------------------

    def approve(self) -> None:
        report = self.report
        if report is None or report.preview is None:
            return
        task = approve_ingest(self._c, report=report)
        if task is None:
            return
        self.approve_button.setEnabled(False)
        self.state.setText("Writing…")
        task.add_done_callback(self._applied)

    def _applied(self, task: asyncio.Task[ApplyResult]) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self.state.setText(f"Not written: {exc}")
            self._buttons()
            return
        result = task.result()
        self.report = None
        self._clear()
        self.state.setText(
            f"Written: {len(result.changes)} file(s) in one operation — undo it from History."
        )
        self._buttons()
        self.sig_plan_applied.emit(result)

    def discard(self) -> None:
        had = self.report is not None
        self.report = None
        self._clear()
        if had:
            self.state.setText("Plan discarded; nothing was written.")
            self.sig_plan_discarded.emit()
        self._buttons()

    def _clear(self) -> None:
        self.files.clear()
        self.diff.clear()
        self.tensions.clear()
        self.summary.clear()
        self.rejected.clear()
        self.rejected.hide()

    def _buttons(self) -> None:
        running = self.runner.running
        planned = self.report is not None and self.report.preview is not None
        self.pick_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        self.approve_button.setEnabled(planned and not running)
        self.discard_button.setEnabled(self.report is not None and not running)


PANEL = PanelSpec("ingest", "Ingest", "tab", QtIngestPanel)
