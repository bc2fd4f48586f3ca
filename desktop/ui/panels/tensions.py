"""Tensions: run the Hunter, see the verified pairs, and review them.

Shows a scan's results: the run metadata line, the excluded-notes warning,
drop counts, what the user's decisions changed (:mod:`tensions_learning`: the
hidden pairs one click away), the permanent disclaimer, the pairs with both
quotes and a confidence badge. Stop returns to idle at once; the results on screen stay
and are marked as the previous run's. A format failure offers **Open raw
response**, which writes the debug note and shows it.
"""

from __future__ import annotations

import html
import time
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.flows.hunter import DISCLAIMER, Mode, ScanRun, dropped_phrase, write_debug_note
from desktop.flows.hunter.records import LAST_RUN_FILE, load_last_run
from desktop.flows.model_choice import uses_bundled_model
from desktop.flows.progress import ProgressClock, plural
from desktop.ui.context import AppContext
from desktop.ui.panels import PanelSpec
from desktop.ui.panels.history import local_time
from desktop.ui.panels.ingest_tensions import QtIngestTensions
from desktop.ui.panels.pair_card import QtPairCard
from desktop.ui.panels.pair_list import QtPairList, run_pairs
from desktop.ui.panels.scan_budget import QtBudgetOffer
from desktop.ui.panels.tensions_learning import QtLearningBar
from desktop.ui.scanner import ScanRunner
from desktop.ui.vault_state import PairsNow, read_pairs_now
from desktop.vault.layout import state_dir

#: How often the panel looks for a scan another process saved (a stat, off the GUI thread).
DISK_POLL_MS = 3000

MODE_CHOICES: list[tuple[str, Mode]] = [
    ("Classic (newest notes)", "classic"),
    ("Focus on the note in the preview", "focus"),
    ("Whole vault", "whole-vault"),
]


def _newer_on_disk(
    root: Path, shown: ScanRun | None, seen_mtime: int
) -> tuple[int, ScanRun | None]:
    """The last run on disk if it is newer than the one shown (read worker).

    Another process (``antinomy scan``, a second window) may have scanned this vault
    since: the file's mtime says whether to read it at all.
    """
    try:
        mtime = (state_dir(root) / LAST_RUN_FILE).stat().st_mtime_ns
    except OSError:
        return seen_mtime, None
    if mtime == seen_mtime:
        return mtime, None
    run = load_last_run(root)
    if run is None or (shown is not None and run.started_at <= shown.started_at):
        return mtime, None
    return mtime, run


def short_time(stamp: str) -> str:
    """A run's start as local time: ``12:41`` today, ``2026-11-30 12:41`` another day."""
    when = local_time(stamp)
    today = time.strftime("%Y-%m-%d")
    return when[11:16] if when.startswith(today) else when[:16]


def counts_text(counts: dict[str, int], *, restored_at: str | None = None) -> str:
    """``9 pairs shown (restored from 12:41; 1 dismissed since).``; a run this
    window just made starts with ``Done:``."""
    extra = [f"restored from {restored_at}"] if restored_at else []
    if counts.get("dismissed"):
        extra.append(f"{counts['dismissed']} dismissed since")
    if counts.get("filtered"):
        extra.append(f"{counts['filtered']} filtered out")
    if counts.get("stale"):
        extra.append(f"{counts['stale']} changed on disk")
    if counts.get("hidden"):
        extra.append(f"{plural(counts['hidden'], 'hidden pair')} shown too")
    text = ("" if restored_at else "Done: ") + f"{plural(counts.get('shown', 0), 'pair')} shown"
    return text + (f" ({'; '.join(extra)})" if extra else "") + "."


def dropped_text(run: ScanRun) -> str:
    if not run.dropped:
        return ""
    parts = ", ".join(dropped_phrase(reason, n) for reason, n in sorted(run.dropped.items()))
    return f"Not shown ({run.dropped_total}): {parts}."


class QtTensionsPanel(QWidget):
    sig_results_shown = Signal(object)
    """A run's results are on screen: ``(ScanRun)``."""
    sig_pair_removed = Signal(object)
    """A pair left the view after it was dismissed: ``(Pair)``."""
    sig_debug_note_opened = Signal(str)
    """Open raw response wrote and showed a debug note: ``(path)``."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self._ctx = ctx
        self._c = ctx.controller
        self.runner = ScanRunner(self._c)
        self._c.closers.append(self.runner.close)
        self.run: ScanRun | None = None
        self.previous = False
        self.failed_run: ScanRun | None = None
        self.restored = False
        self.pairs = QtPairList(ctx)
        self.pairs.sig_view_changed.connect(self._show_counts)
        self.pairs.sig_pair_removed.connect(self.sig_pair_removed)
        self.learning = QtLearningBar()
        self.learning.sig_show_hidden_toggled.connect(self.pairs.set_show_hidden)
        self.pairs.sig_learned.connect(self.learning.show_learned)

        self.mode = QComboBox()
        for text, mode in MODE_CHOICES:
            self.mode.addItem(text, mode)
        self.run_button = QPushButton("Run Hunter")
        self.run_button.setToolTip("Run a tension scan (Ctrl+R)")
        self.run_button.clicked.connect(self.run_scan)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop the scan (Esc); the results on screen stay")
        self.stop_button.clicked.connect(self.runner.stop)
        self.stop_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.hide()
        self.state = QLabel("Idle.")
        # Long progress lines wrap instead of widening the tab (which squeezed the docks).
        self.state.setWordWrap(True)
        self.state.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        top = QHBoxLayout()
        top.addWidget(self.mode)
        top.addWidget(self.run_button)
        top.addWidget(self.stop_button)
        top.addWidget(self.progress)
        top.addWidget(self.state, 1)

        self.meta = QLabel()
        self.meta.setWordWrap(True)
        self.excluded = QLabel()
        self.excluded.setWordWrap(True)
        self.dropped = QLabel()
        self.dropped.setWordWrap(True)
        self.budget_offer = QtBudgetOffer(self._c)
        self.budget_offer.sig_budget_raised.connect(lambda _n: self.runner.start("whole-vault"))
        self.disclaimer = QLabel(f"<i>{html.escape(DISCLAIMER)}</i>")
        self.disclaimer.setWordWrap(True)
        self.failure = QFrame()
        self.failure.setFrameShape(QFrame.Shape.StyledPanel)
        self.failure_text = QLabel()
        self.failure_text.setWordWrap(True)
        self.open_raw = QPushButton("Open raw response")
        self.open_raw.clicked.connect(self.open_raw_response)
        fail_row = QHBoxLayout(self.failure)
        fail_row.addWidget(self.failure_text, 1)
        fail_row.addWidget(self.open_raw)
        self.failure.hide()

        # Shown once there are pairs: no empty box under "No scan yet".
        self.pairs.hide()
        self.results_area = self.pairs.scroll_area
        self._elapsed = QTimer(self)
        self._elapsed.setInterval(1000)
        self._elapsed.timeout.connect(self._tick)
        self._scan_started = 0.0
        self._scan_what = ""
        self._clock = ProgressClock()
        self.empty = QLabel()
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.failure)
        layout.addWidget(self.meta)
        layout.addWidget(self.excluded)
        layout.addWidget(self.budget_offer)
        layout.addWidget(self.dropped)
        layout.addWidget(self.learning)
        layout.addWidget(self.disclaimer)
        layout.addWidget(self.empty)
        layout.addWidget(self.pairs, 1)
        layout.addStretch(0)
        self.ingest_box = QtIngestTensions(ctx)  # candidates recorded by applied ingests
        self.ingest_tensions = self.ingest_box.tree
        layout.addWidget(self.ingest_box)

        self.runner.sig_scan_started.connect(self._started)
        self.runner.sig_scan_progress.connect(self._progress)
        self.runner.sig_scan_finished.connect(self._finished)
        self.runner.sig_scan_stopped.connect(self._stopped)
        self.runner.sig_scan_failed.connect(self._failed)
        self._c.sig_vault_opened.connect(self._vault_opened)
        self._disk_mtime = 0
        self._disk_timer = QTimer(self)
        self._disk_timer.setInterval(DISK_POLL_MS)
        self._disk_timer.timeout.connect(self.check_newer_run)
        self._disk_timer.start()
        self._show_empty("No scan yet: press Run Hunter.")

    # ------------------------------------------------------------------ actions

    def menu_actions(self) -> list[QAction]:
        run = QAction("&Run Hunter", self)
        run.setShortcut(QKeySequence("Ctrl+R"))
        run.triggered.connect(self.run_scan)
        stop = QAction("&Stop", self)
        stop.setShortcut(QKeySequence(Qt.Key.Key_Escape))
        stop.triggered.connect(self.runner.stop)
        dismiss = QAction("&Dismiss checked or selected pairs", self)
        dismiss.setShortcut(QKeySequence(Qt.Key.Key_Delete))
        dismiss.triggered.connect(self.dismiss_selected)
        find = QAction("&Filter the pairs", self)
        find.setShortcut(QKeySequence("Ctrl+Shift+F"))
        find.triggered.connect(self._focus_filter)
        return [run, stop, dismiss, find]

    @property
    def cards(self) -> list[QtPairCard]:
        """The cards shown, in their order."""
        return self.pairs.cards

    @property
    def selected(self) -> QtPairCard | None:
        return self.pairs.selected

    def _focus_filter(self) -> None:
        self.pairs.filter.setFocus()
        self.pairs.filter.selectAll()

    def run_scan(self) -> None:
        mode: Mode = self.mode.currentData()
        focus = None
        if mode == "focus":
            focus = self.focus_note()
            if focus is None:
                self._c.sig_error.emit(
                    "Running the scan",
                    "Open a note in the preview (click it in Notes or Related) to focus the "
                    "scan on it.",
                )
                return
        self.runner.start(mode, focus=focus)

    def focus_note(self) -> str | None:
        """The note a focus scan is about: the one in the preview, else the list selection."""
        preview = self._ctx.panels.get("preview")
        path = getattr(preview, "path", None)
        if isinstance(path, str):
            return path
        notes = self._ctx.panels.get("notes")
        selected = getattr(notes, "selected_path", lambda: None)()
        return selected if isinstance(selected, str) else None

    def scan_focus(self, path: str) -> None:
        """Start a focus scan on ``path`` and bring this panel forward."""
        self.mode.setCurrentIndex(self.mode.findData("focus"))
        tabs = self.parentWidget()
        while tabs is not None and not isinstance(tabs, QTabWidget):
            tabs = tabs.parentWidget()
        if tabs is not None:
            tabs.setCurrentWidget(self)
        self.runner.start("focus", focus=path)

    def dismiss_selected(self) -> None:
        """Del: the checked pairs, else the selected one."""
        self.pairs.dismiss_selected()

    def open_raw_response(self) -> None:
        run, root = self.failed_run, self._c.root
        if run is None or root is None:
            return
        folder = self._c.settings.folders.debug

        async def go() -> None:
            path = await self._c.run_in(self._c.write_pool, _write_debug, root, run, folder)
            self._c.sig_history_changed.emit()
            self._c.notes_changed([path])
            self._c.sig_preview_requested.emit(path)
            self.sig_debug_note_opened.emit(path)

        self._c.spawn(go(), what="Writing the raw-response debug note")

    # ------------------------------------------------------------------ scan states

    def _busy(self, busy: bool) -> None:
        self.run_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)
        self.progress.setVisible(busy)
        if busy:
            self._scan_started = time.monotonic()
            self._elapsed.start()
        else:
            self._elapsed.stop()

    def _started(self, mode: str) -> None:
        self._busy(True)
        self._clock = ProgressClock()
        self.progress.setRange(0, 0)
        self._scan_what = f"Scanning ({mode}): selecting the notes"
        self._tick()
        self.failure.hide()
        self.budget_offer.hide()  # the new run says whether it is still short
        if self.run is not None:
            self._mark_previous()

    def _progress(self, done: int, total: int, what: str) -> None:
        if total <= 1:
            self.progress.setRange(0, 0)  # one prompt: no meaningful fraction, just busy
        else:
            self.progress.setRange(0, total)
            self.progress.setValue(done)
        self._scan_what = self._clock.line(done, total, what)
        self._tick()

    def _tick(self) -> None:
        seconds = int(time.monotonic() - self._scan_started)
        what = self._scan_what[:1].upper() + self._scan_what[1:]
        self.state.setText(f"{what} · {seconds} s so far")

    def _stopped(self) -> None:
        self._busy(False)
        self.state.setText("Stopped. The results below are from the previous run.")
        if self.run is not None:
            self._mark_previous()

    def _failed(self, message: str) -> None:
        self._busy(False)
        self.state.setText("Idle.")
        self._c.sig_error.emit("Running the scan", message)

    def _finished(self, run: ScanRun) -> None:
        self._busy(False)
        if run.status == "format_failure":
            self.failed_run = run
            self.failure_text.setText(
                f"<b>The model's answer could not be read.</b> {html.escape(run.error or '')} "
                "Nothing is shown for this run; the results below (if any) are from the "
                "previous run. The raw answers can be kept as a debug note."
            )
            self.failure.show()
            self.state.setText("Format failure.")
            if self.run is not None:
                self._mark_previous()
            return
        if run.status == "error":
            self.state.setText("Failed.")
            self._c.sig_error.emit("Running the scan", run.error or "The scan failed.")
            return
        self.show_run(run)

    # ------------------------------------------------------------------ results

    def _vault_opened(self, root: Path) -> None:
        self.run = None
        self.failed_run = None
        self.failure.hide()
        self.pairs.set_run(None)
        self.pairs.hide()
        self.state.setText("Idle.")
        self._set_meta(None)
        self._show_empty("No scan yet: press Run Hunter.")

        self._disk_mtime = 0
        self.check_newer_run()

    def check_newer_run(self) -> None:
        """Show the vault's last run from disk if another process scanned since."""
        root = self._c.root
        if root is None or self.runner.running:
            return
        shown = self.run

        async def go() -> None:
            mtime, run = await self._c.run_in(
                self._c.read_pool, _newer_on_disk, root, shown, self._disk_mtime
            )
            if self._c.root != root or self.run is not shown or self.runner.running:
                return
            self._disk_mtime = mtime
            if run is not None:
                self.show_run(run, restored=True)

        self._c.spawn(go(), what="Looking for a newer scan")

    def show_run(self, run: ScanRun, *, restored: bool = False) -> None:
        """Show ``run`` as the vault has it now (its notes are read first, off this thread)."""
        root = self._c.root
        if root is None:
            return

        async def go() -> None:
            now = await self._c.run_in(self._c.read_pool, read_pairs_now, root, run_pairs(run))
            if self._c.root == root:
                self._show(run, now, restored)

        self._c.spawn(go(), what="Showing the scan results")

    def _show(self, run: ScanRun, now: PairsNow, restored: bool) -> None:
        self.run = run
        self.previous = False
        self.restored = restored
        # The mode box says what the results on screen are: a restored run's own mode.
        self.mode.setCurrentIndex(max(self.mode.findData(run.mode), 0))
        self._set_meta(run, prefix="Last run (restored): " if restored else "")
        self.pairs.set_run(run, now)
        self.sig_results_shown.emit(run)

    def _show_counts(self) -> None:
        """The header and the empty-state line, from what the list shows now."""
        run = self.run
        if run is None:
            return
        counts = self.pairs.counts()
        if not self.runner.running and not self.previous:
            self.state.setText(
                counts_text(counts, restored_at=short_time(run.started_at) if self.restored
                            else None)
            )  # fmt: skip
        self.learning.set_hidden(self.pairs.hidden_standing())
        standing = counts["shown"] + counts["filtered"] + counts["hidden"]
        self.pairs.setVisible(standing > 0)
        if counts["shown"] or counts["hidden"]:
            self.empty.hide()
        elif counts["filtered"]:
            self._show_empty("No pair matches the filter.")
        elif run.pairs:
            self._show_empty("No pairs left in this run.")
        else:
            text = "No tensions found in this run (that is not proof that none exist)."
            if uses_bundled_model(self._c.settings) and run.mode == "classic":
                text += (
                    "\nThe bundled language model is small and proposes few pairs of its own: "
                    "a stronger one (Models ▸ Use a stronger model…) proposes more for the "
                    "judge to check."
                )
            self._show_empty(text)

    def _set_meta(self, run: ScanRun | None, prefix: str = "") -> None:
        self.learning.show_run(run)
        self.budget_offer.show_for(run)
        if run is None:
            for label in (self.meta, self.excluded, self.dropped):
                label.clear()
                label.hide()
            return
        self.meta.setText(f"<b>{html.escape(prefix)}</b>{html.escape(run.summary())}")
        self.meta.show()
        if run.excluded:
            names = ", ".join(Path(e.path).stem for e in run.excluded[:8])
            more = "…" if len(run.excluded) > 8 else ""
            self.excluded.setText(
                f"⚠ Excluded {plural(len(run.excluded), 'note')} from this run: "
                f"{html.escape(names)}{more}"
            )
            self.excluded.setToolTip("\n".join(f"{e.path}: {e.reason}" for e in run.excluded))
            self.excluded.show()
        else:
            self.excluded.hide()
        text = dropped_text(run)
        self.dropped.setText(text)
        self.dropped.setVisible(bool(text))

    def _mark_previous(self) -> None:
        """The results on screen are not this run's: say so, with their time, and grey them."""
        self.previous = True
        if self.run is not None:  # the summary starts with the run's time
            self.meta.setText("<b>Previous run:</b> " + html.escape(self.run.summary()))
        self.pairs.set_previous(True)

    def _show_empty(self, text: str) -> None:
        self.empty.setText(text)
        self.empty.show()


def _write_debug(root: Path, run: ScanRun, folder: str) -> str:
    return write_debug_note(root, run, folder=folder)


PANEL = PanelSpec("tensions", "Tensions", "tab", QtTensionsPanel)
