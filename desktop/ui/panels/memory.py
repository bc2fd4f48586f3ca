"""Memory: transcript import (button, File menu, a file dropped here or a ``.jsonl`` on the
window: :mod:`desktop.ui.panels.memory_import`), pending batches, Consolidate now (progress,
Stop), the last report with its accepted facts and rejected fragments (Requeue), subject
pages, and a recall box; empty, it says how to start.

Everything that reads or writes the vault runs on a worker; consolidation on
its own (:mod:`desktop.ui.panels.memory_runner`), recall on another, so a
recall never waits behind a long consolidation. Subject pages and cited facts
open in the preview.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QShowEvent
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.flows.memory import RecallIndex, RecallResult, Report, requeue_fragment
from desktop.flows.progress import ProgressClock, plural
from desktop.flows.settings import resolve
from desktop.ui.context import AppContext
from desktop.ui.endpoint import endpoint_for
from desktop.ui.panels import PanelSpec
from desktop.ui.panels.memory_import import EMPTY_MEMORY_HINT, QtTranscriptImport, dropped_files
from desktop.ui.panels.memory_listing import (
    PATH_ROLE,
    STATUS_TEXT,
    MemoryListing,
    make_box,
    make_tree,
    read_listing,
    report_summary,
)
from desktop.ui.panels.memory_runner import ConsolidationRunner
from inference.runtime import Runtime

#: How often the panel looks for a report saved by an automatic consolidation.
REPORT_POLL_MS = 1000


class QtMemoryPanel(QWidget):
    sig_memory_listed = Signal(object)
    """Pending batches, pages, fragments and the last report are on screen: ``(MemoryListing)``."""
    sig_report_shown = Signal(object)
    """A consolidation report is on screen: ``(report as a JSON dict)``."""
    sig_fragment_requeued = Signal(str)
    """A rejected fragment was put back in the queue: ``(fragment id)``."""
    sig_recall_shown = Signal(object)
    """Recall results are on screen: ``(RecallResult)``."""
    sig_import_shown = Signal(object)
    """A transcript import's outcome is on screen: ``(list[ImportOutcome])``."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self._c = ctx.controller
        self.runner = ConsolidationRunner(self._c)
        self.transcripts = QtTranscriptImport(self._c)
        self.setAcceptDrops(True)  # a transcript dropped here is imported
        self.recall_pool = ThreadPoolExecutor(1, thread_name_prefix="antinomy-recall")
        self._c.closers.append(self.shutdown)
        self._list_request = 0
        self._recall_request = 0
        self._recall_index: tuple[Path, Runtime, RecallIndex] | None = None
        self.listing: MemoryListing | None = None
        self._clock = ProgressClock()
        self.report: dict[str, Any] | None = None

        top = self._build_top_row()  # built in reading order: the focus chain follows it
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(self._build_lists())
        body.addWidget(self._build_report())
        body.addWidget(make_box("Recall", self._build_recall()))
        body.setSizes([120, 420, 200])  # the report holds two lists
        self.empty_hint = QLabel(EMPTY_MEMORY_HINT)
        self.empty_hint.setWordWrap(True)
        self.empty_hint.setTextFormat(Qt.TextFormat.RichText)
        self.empty_hint.setContentsMargins(6, 4, 6, 4)
        self.empty_hint.hide()
        layout = QVBoxLayout(self)
        layout.addWidget(self.transcripts)
        layout.addLayout(top)
        layout.addWidget(self.empty_hint)
        layout.addWidget(body, 1)

        self.runner.sig_consolidation_started.connect(self._started)
        self.runner.sig_consolidation_progress.connect(self._progress)
        self.runner.sig_consolidation_finished.connect(self._finished)
        self.runner.sig_consolidation_stopped.connect(self._stopped)
        self.runner.sig_consolidation_failed.connect(self._failed)
        self.transcripts.sig_import_shown.connect(self._imported)
        self._c.sig_vault_opened.connect(lambda _root: self._vault_opened())
        self._c.sig_history_changed.connect(self.refresh)
        # Turns captured by agents' hooks arrive through the app's endpoint: list them live,
        # at most twice a second.
        self._capture_timer = QTimer(self)
        self._capture_timer.setSingleShot(True)
        self._capture_timer.setInterval(500)
        self._capture_timer.timeout.connect(self.refresh)
        endpoint_for(self._c).sig_memory_captured.connect(self._capture_timer.start)
        # Automatic consolidation runs in the endpoint's thread: its report file is watched.
        self._report_mtime: int | None = None
        self._report_timer = QTimer(self)
        self._report_timer.setInterval(REPORT_POLL_MS)
        self._report_timer.timeout.connect(self._check_report)
        self._report_timer.start()
        self._buttons()
        self.refresh()

    # ------------------------------------------------------------------ building

    def _build_top_row(self) -> QHBoxLayout:
        self.consolidate_button = QPushButton("Consolidate now")
        self.consolidate_button.setToolTip(
            "Turn pending conversation lines into cited facts on subject pages "
            "(closes the open batch first)"
        )
        self.consolidate_button.clicked.connect(self.consolidate)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop after the current token; finished steps are kept")
        self.stop_button.clicked.connect(self.runner.stop)
        self.stop_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(200)
        self.progress.hide()
        self.state = QLabel("Idle.")
        refresh = QPushButton("Refresh")
        refresh.clicked.connect(self.refresh)
        top = QHBoxLayout()
        top.addWidget(self.consolidate_button)
        top.addWidget(self.stop_button)
        top.addWidget(self.progress)
        top.addWidget(self.state, 1)
        top.addWidget(refresh)
        return top

    def _build_lists(self) -> QSplitter:
        """Pending batches beside the subject pages."""
        self.pending = make_tree(
            ["Batch", "Lines", "Pending", "Withdrawn", "State"], [90, 44, 56, 70, 80], stretch=4
        )
        self.pages = QListWidget()
        self.pages.itemActivated.connect(self._open_page)
        self.pages.itemClicked.connect(self._open_page)
        lists = QSplitter(Qt.Orientation.Horizontal)
        self.pending_box = make_box("Pending batches", self.pending)
        self.pages_box = make_box("Subject pages", self.pages)
        lists.addWidget(self.pending_box)
        lists.addWidget(self.pages_box)
        return lists

    def _build_report(self) -> QGroupBox:
        """The last consolidation: its summary, accepted facts, rejected fragments."""
        self.report_text = QLabel("No consolidation yet.")
        self.report_text.setWordWrap(True)
        self.report_text.setTextFormat(Qt.TextFormat.RichText)
        self.report_text.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.accepted = make_tree(
            ["Subject", "Section", "Fact", "Cited", "Date"], [110, 80, 260, 130, 90], stretch=2
        )
        self.accepted.itemActivated.connect(self._open_item)
        self.accepted.itemDoubleClicked.connect(self._open_item)
        report_box = QGroupBox("Last consolidation")
        rb = QVBoxLayout(report_box)
        rb.setContentsMargins(6, 6, 6, 6)
        rb.addWidget(self.report_text)
        self.report_lists = QSplitter(Qt.Orientation.Vertical)
        self.report_lists.addWidget(make_box("Accepted facts", self.accepted))
        self.report_lists.addWidget(make_box("Rejected fragments", self._build_rejected()))
        rb.addWidget(self.report_lists, 1)
        return report_box

    def _build_rejected(self) -> QWidget:
        self.rejected = make_tree(
            ["Reason", "Subject", "Fragment", "Detail", "State"],
            [120, 100, 220, 200, 80],
            stretch=2,
        )
        self.rejected.currentItemChanged.connect(lambda *_: self._buttons())
        self.requeue_button = QPushButton("Requeue")
        self.requeue_button.setToolTip(
            "Let the next consolidation reconsider this fragment's lines"
        )
        self.requeue_button.clicked.connect(self.requeue_selected)
        self.rejected_count = QLabel()
        requeue_row = QHBoxLayout()
        requeue_row.addWidget(self.rejected_count, 1)
        requeue_row.addWidget(self.requeue_button)
        rejected_widget = QWidget()
        rw = QVBoxLayout(rejected_widget)
        rw.setContentsMargins(0, 0, 0, 0)
        rw.addWidget(self.rejected, 1)
        rw.addLayout(requeue_row)
        return rejected_widget

    def _build_recall(self) -> QWidget:
        self.query = QLineEdit()
        self.query.setPlaceholderText("Recall: what does memory hold about…")
        self.query.returnPressed.connect(self.recall)
        self.recall_button = QPushButton("Recall")
        self.recall_button.clicked.connect(self.recall)
        self.results = make_tree(
            ["Kind", "Subject", "Text", "Citations", "Score"], [56, 100, 280, 120, 50], stretch=2
        )
        self.results.itemActivated.connect(self._open_item)
        self.results.itemDoubleClicked.connect(self._open_item)
        query_row = QHBoxLayout()
        query_row.addWidget(self.query, 1)
        query_row.addWidget(self.recall_button)
        recall_widget = QWidget()
        qw = QVBoxLayout(recall_widget)
        qw.setContentsMargins(0, 0, 0, 0)
        qw.addLayout(query_row)
        qw.addWidget(self.results, 1)
        return recall_widget

    # ------------------------------------------------------------------ listing

    def _vault_opened(self) -> None:
        """Nothing of the previous vault stays on screen: its lists, its report, its recall."""
        self._list_request += 1  # a listing of the old vault still in flight is dropped
        self.results.clear()
        self._report_mtime = None
        self.listing = None
        self._clear_report()
        for view in (self.pending, self.pages, self.rejected):
            view.clear()
        self.refresh()

    def _clear_report(self) -> None:
        self.report = None
        self.report_text.setText("No consolidation yet.")
        self.report_text.setToolTip("")
        self.report_text.setEnabled(True)
        self.accepted.clear()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()  # captures arrive through the endpoint at any time

    def refresh(self) -> None:
        root = self._c.root
        if root is None:
            return
        self._list_request += 1
        request = self._list_request

        async def go() -> None:
            settings = resolve(saved=self._c.settings).memory
            listing = await self._c.run_in(self._c.read_pool, read_listing, root, settings)
            if request == self._list_request and root == self._c.root:
                self._fill(listing)

        self._c.spawn(go(), what="Reading the memory")

    def _fill(self, listing: MemoryListing) -> None:
        self.listing = listing
        self.pending.clear()
        for b in listing.pending:
            state = "closed" if b.closed else "open"
            if b.closed and b.close_reason:
                state += f" ({b.close_reason})"
            item = QTreeWidgetItem(
                [b.batch_id, str(b.lines), str(b.pending_lines), str(b.withdrawn_lines), state]
            )
            item.setToolTip(0, b.path)
            for column in (1, 2, 3):
                item.setTextAlignment(column, Qt.AlignmentFlag.AlignRight)
            self.pending.addTopLevelItem(item)
        self.pending_box.setTitle(f"Pending batches ({len(listing.pending)})")
        self.pages_box.setTitle(f"Subject pages ({len(listing.pages)})")
        self.pages.clear()
        for page in listing.pages:
            item_p = QListWidgetItem(f"{page.name}  ({plural(len(page.facts), 'fact')})")
            item_p.setData(PATH_ROLE, page.path)
            aliases = f"Aliases: {', '.join(page.aliases)}\n" if page.aliases else ""
            item_p.setToolTip(f"{aliases}{page.summary}\n{page.path}".strip())
            self.pages.addItem(item_p)
        self.rejected.clear()
        for frag, state in listing.rejected:
            item = QTreeWidgetItem([frag.reason, frag.subject, frag.text, frag.detail, state])
            item.setData(0, PATH_ROLE, frag.fragment_id)
            item.setToolTip(2, frag.text)
            item.setToolTip(
                3, f"{frag.detail}\nfrom {frag.source}; cited {', '.join(frag.line_ids)}"
            )
            self.rejected.addTopLevelItem(item)
        waiting = sum(1 for _f, s in listing.rejected if s == "rejected")
        self.rejected_count.setText(
            f"{plural(len(listing.rejected), 'fragment')}, {waiting} not re-queued"
            if listing.rejected
            else "No rejected fragment."
        )
        empty = (
            not listing.pending
            and not listing.pages
            and not listing.rejected
            and listing.report is None
        )
        self.empty_hint.setVisible(empty)
        self.report_lists.setVisible(not empty)  # no empty lists under the hint
        if listing.report is None:
            if self.report is not None:
                self._clear_report()
        elif listing.report != self.report:
            self.show_report(listing.report)
        self._buttons()
        self.sig_memory_listed.emit(listing)

    # ------------------------------------------------------------------ consolidation

    def consolidate(self) -> None:
        self.runner.start(force=True)

    def _started(self) -> None:
        self.state.setText("Consolidating: reading the pending lines…")
        self._clock = ProgressClock()
        self.progress.setRange(0, 0)
        self.progress.show()
        if self.report is not None:  # the report on screen is the last run's, not this one's
            self.report_text.setText(f"<b>Previous run:</b> {report_summary(self.report)}")
            self.report_text.setEnabled(False)
        self._buttons()

    def _progress(self, done: int, total: int, what: str) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        line = self._clock.line(done, total, what)
        self.state.setText(f"Step {min(done + 1, total)} of {total}: {line}")

    def _stopped(self) -> None:
        self.progress.hide()
        self.state.setText("Stopped — finished steps are kept; the rest stays pending.")
        self._buttons()

    def _failed(self, message: str) -> None:
        self.progress.hide()
        self.state.setText("Consolidation failed — see Problems; finished steps were kept.")
        self._c.sig_error.emit("Consolidating memory", message)
        self._buttons()
        # Steps finished before the failure are real writes: show them.
        self._c.sig_history_changed.emit()

    def _finished(self, report: Report) -> None:
        self.progress.hide()
        if self.runner.running:
            pass  # a newer run is going: its own state line stays
        elif report.status == "stopped":
            self._stopped()
        else:
            self.state.setText(f"Done: {STATUS_TEXT.get(report.status, report.status)}.")
        self.show_report(report.to_json())
        self._buttons()
        self.refresh()

    def show_report(self, report: dict[str, Any]) -> None:
        self.report = report
        self.report_text.setEnabled(True)
        self.report_text.setText(report_summary(report))
        debug = report.get("debug_path")
        self.report_text.setToolTip(f"Raw answers: {debug}" if debug else "")
        self.accepted.clear()
        for fact in report.get("accepted") or ():
            date = fact.get("date") or ""
            item = QTreeWidgetItem(
                [
                    str(fact.get("subject", "")),
                    str(fact.get("section", "")),
                    str(fact.get("text", "")),
                    ", ".join(fact.get("citations") or ()),
                    date,
                ]
            )
            item.setData(0, PATH_ROLE, fact.get("page"))
            wording = str(fact.get("wording") or "")
            why = fact.get("fallback_reason")
            note = f"\n{wording}" + (f": the rephrasing failed ({why})" if why else "")
            if fact.get("subject_refused"):
                note += f"\nsubject {fact['subject_refused']!r} refused"
            item.setToolTip(2, f"{fact.get('text', '')}{note}")
            self.accepted.addTopLevelItem(item)
        self.sig_report_shown.emit(report)

    # ------------------------------------------------------------------ transcript import

    def choose_and_import(self) -> None:
        """Ask for transcript files, then import them (File menu and the panel's button)."""
        self.transcripts.choose_and_import()

    def import_files(self, files: list[Path]) -> bool:
        """Import ``files`` on the import worker; False when it could not start."""
        return self.transcripts.import_files(files)

    def _imported(self, outcomes: object) -> None:
        self.refresh()
        self.sig_import_shown.emit(outcomes)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if dropped_files(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        files = dropped_files(event.mimeData())
        if files:
            event.acceptProposedAction()
            self.import_files(files)

    # ------------------------------------------------------------------ rejected fragments

    def selected_fragment(self) -> tuple[str, str] | None:
        item = self.rejected.currentItem()
        if item is None:
            return None
        return str(item.data(0, PATH_ROLE)), item.text(4)

    def requeue_selected(self) -> None:
        selected = self.selected_fragment()
        root = self._c.root
        if selected is None or root is None:
            return
        fragment_id = selected[0]

        async def go() -> None:
            await self._c.run_in(self._c.write_pool, requeue_fragment, root, fragment_id)
            self.state.setText("Re-queued: the next consolidation reconsiders those lines.")
            self.sig_fragment_requeued.emit(fragment_id)
            self.refresh()

        self._c.spawn(go(), what="Re-queueing a rejected fragment")

    def select_fragment(self, fragment_id: str) -> None:
        for i in range(self.rejected.topLevelItemCount()):
            item = self.rejected.topLevelItem(i)
            if item is not None and item.data(0, PATH_ROLE) == fragment_id:
                self.rejected.setCurrentItem(item)
                return

    def _buttons(self) -> None:
        running = self.runner.running
        self.consolidate_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        selected = self.selected_fragment()
        self.requeue_button.setEnabled(selected is not None and selected[1] == "rejected")

    # ------------------------------------------------------------------ recall

    def _index(self, root: Path) -> RecallIndex:
        """The warm recall index for this vault and runtime (recall worker only)."""
        runtime = self._c.runtime
        cached = self._recall_index
        if cached is not None and cached[0] == root and cached[1] is runtime:
            return cached[2]
        settings = resolve(saved=self._c.settings).memory
        index = RecallIndex(root, runtime.queued_embedder(), settings=settings)
        self._recall_index = (root, runtime, index)
        return index

    def recall(self) -> None:
        query = self.query.text().strip()
        root = self._c.root
        if not query or root is None:
            return
        if not self._c.semantic_ready():
            self._c.sig_error.emit(
                "Recalling", "The embedder is still loading — try again when the models are ready."
            )
            return
        self._recall_request += 1
        request = self._recall_request

        def work() -> RecallResult:
            return self._index(root).recall(query, k=8)

        async def go() -> None:
            result = await self._c.run_in(self.recall_pool, work)
            if request == self._recall_request:
                self._show_recall(result)

        self._c.spawn(go(), what="Recalling")

    def _show_recall(self, result: RecallResult) -> None:
        self.results.clear()
        for hit in (*result.subjects, *result.facts):
            text = hit.text + (f" ({hit.date})" if hit.date else "")
            kind = "subject" if hit.kind == "summary" else hit.kind
            item = QTreeWidgetItem(
                [kind, hit.subject, text, ", ".join(hit.citations), f"{hit.score:.2f}"]
            )
            item.setData(0, PATH_ROLE, hit.page)
            item.setToolTip(2, text)
            item.setToolTip(4, result.ranking)
            self.results.addTopLevelItem(item)
        if not result.subjects and not result.facts:
            empty = (
                "Nothing in memory yet."
                if not result.below_floor
                else f"Nothing relevant: every item scored under the floor {result.floor:.2f}."
            )
            self.results.addTopLevelItem(QTreeWidgetItem(["", "", empty]))
        self.results.setToolTip(result.ranking)
        self.sig_recall_shown.emit(result)

    # ------------------------------------------------------------------ preview and closing

    def _open_page(self, item: QListWidgetItem) -> None:
        path = item.data(PATH_ROLE)
        if path:
            self._c.sig_preview_requested.emit(str(path))

    def _open_item(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        path = item.data(0, PATH_ROLE)
        if path:
            self._c.sig_preview_requested.emit(str(path))

    def _check_report(self) -> None:
        """Refresh when a consolidation (the automatic one too) saved a new report."""
        root = self._c.root
        if root is None:
            return
        try:
            mtime = (root / ".antinomy" / "memory" / "last-report.json").stat().st_mtime_ns
        except OSError:
            mtime = -1  # no report yet: its appearance is a change
        if self._report_mtime is not None and mtime != self._report_mtime:
            self.refresh()
        self._report_mtime = mtime

    def shutdown(self) -> None:
        """Stop a running consolidation and free the workers (the app is quitting)."""
        self._report_timer.stop()
        self.runner.close()
        self.recall_pool.shutdown(wait=True, cancel_futures=True)


PANEL = PanelSpec("memory", "Memory", "tab", QtMemoryPanel)
