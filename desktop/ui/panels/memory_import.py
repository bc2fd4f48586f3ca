"""Importing conversation transcripts from the window, off the GUI thread.

The Memory panel's **Import transcript…**, File ▸ Import conversation transcript…,
and a file dropped on the window or the panel all end here. Each file goes
through :func:`desktop.flows.memory.import_transcript` — the flow behind
``antinomy capture import`` — so masking, withdrawal and the report are the
CLI's. A bad file is reported with the flow's own message and the files after
it are still imported; a refused file imports nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.flows.memory import ImportReport, import_transcript
from desktop.flows.progress import Progress, ProgressClock, plural
from desktop.ui.controller import AppController
from desktop.ui.flow_runner import FlowRunner
from foundation.errors import AntinomyError

#: What the file dialog offers first; any file may still be chosen (the flow reads
#: its records, not its name).
TRANSCRIPT_FILTER = "Conversation transcripts (*.jsonl);;All files (*)"

EMPTY_MEMORY_HINT = (
    "<b>Memory is empty.</b> To start, <b>import a conversation transcript</b> — "
    "<i>Import transcript…</i> above, File ▸ Import conversation transcript…, or drop a "
    "Claude Code <tt>.jsonl</tt> file on this window — or install the agent hooks "
    "(Guard panel ▸ Install hooks): they capture each turn of your coding agent's "
    "conversations as it happens. Then <b>Consolidate now</b> turns the pending lines "
    "into cited facts on subject pages."
)


@dataclass(frozen=True)
class ImportOutcome:
    """One file's result: its report, or why nothing of it was imported."""

    path: Path
    report: ImportReport | None
    problem: str | None = None

    def line(self) -> str:
        if self.report is None:
            return f"{self.path.name}: not imported — {self.problem}"
        text = self.report.summary()
        if self.report.bad_records:
            text += f" ({plural(self.report.bad_records, 'unreadable line')} ignored)"
        return text


def imports_summary(outcomes: Sequence[ImportOutcome]) -> str:
    """One line per file, the refused ones included."""
    return "\n".join(o.line() for o in outcomes)


#: What a file dropped on the window must be called to be taken for a transcript: other
#: files go to the panel they belong to (Ingest takes Markdown, text, HTML, PDF). On the
#: Memory panel itself any file is tried, and refused by the import if it is not one.
TRANSCRIPT_SUFFIXES = (".jsonl", ".ndjson", ".json")


def dropped_files(mime: QMimeData, *, transcripts_only: bool = False) -> list[Path]:
    """The local files of a drag; ``transcripts_only``: only if every one is named as a
    transcript (:data:`TRANSCRIPT_SUFFIXES`)."""
    if not mime.hasUrls():
        return []
    files = [Path(u.toLocalFile()) for u in mime.urls() if u.isLocalFile() and u.toLocalFile()]
    if transcripts_only and any(f.suffix.lower() not in TRANSCRIPT_SUFFIXES for f in files):
        return []
    return files


def choose_transcripts(parent: QWidget | None) -> list[Path]:
    """Ask for transcript files; empty when the user cancels."""
    start = str(Path.home() / ".claude" / "projects")
    names, _ = QFileDialog.getOpenFileNames(
        parent, "Import conversation transcripts", start, TRANSCRIPT_FILTER
    )
    return [Path(n) for n in names]


def import_files(
    vault: Path, files: Sequence[Path], progress: Progress | None = None
) -> list[ImportOutcome]:
    """Import each file in turn (worker thread). A refused file does not stop the others."""
    outcomes: list[ImportOutcome] = []
    for number, path in enumerate(files, 1):
        prefix = f"file {number} of {len(files)}: " if len(files) > 1 else ""

        def report(done: int, total: int, what: str, prefix: str = prefix) -> None:
            if progress is not None:
                progress(done, total, prefix + what)

        try:
            outcomes.append(ImportOutcome(path, import_transcript(vault, path, progress=report)))
        except AntinomyError as exc:
            outcomes.append(ImportOutcome(path, None, str(exc)))
    return outcomes


class TranscriptImporter(FlowRunner):
    sig_import_started = Signal(int)
    """An import began: ``(number of files)``."""
    sig_import_progress = Signal(int, int, str)
    """Progress: ``(turns captured, turns in the file, what)``; throttled."""
    sig_import_finished = Signal(object)
    """Every file was tried: ``(list[ImportOutcome])``."""
    sig_import_stopped = Signal()
    """Never emitted by an import (it has no Stop); the runner's shape needs one."""
    sig_import_failed = Signal(str)
    """The import could not run at all: ``(message)``."""

    def __init__(self, controller: AppController) -> None:
        super().__init__(controller, thread_name="antinomy-import")
        self._signals(
            failed=self.sig_import_failed,
            progress=self.sig_import_progress,
            stopped=self.sig_import_stopped,
        )

    def start(self, files: Sequence[Path]) -> bool:
        """Import ``files`` into the open vault; False (and said why) when it cannot start."""
        root = self._c.root
        if root is None:
            self.sig_import_failed.emit("Open a vault first: transcripts are imported into it.")
            return False
        if self.running:
            self.sig_import_failed.emit(
                "An import is already running — drop the file again when it is done."
            )
            return False
        if not files:
            return False
        request, _stop, progress = self._begin()
        chosen = list(files)
        self.sig_import_started.emit(len(chosen))

        self.run(
            lambda: import_files(root, chosen, progress),
            request=request,
            on_done=self.sig_import_finished.emit,
            what="Importing a transcript",
            describe=lambda exc: f"{type(exc).__name__}: {exc}",
        )
        return True


class QtTranscriptImport(QWidget):
    """The Memory panel's import row: the button, progress, and the last import's report."""

    sig_import_shown = Signal(object)
    """An import's outcome is on screen: ``(list[ImportOutcome])``."""

    def __init__(self, controller: AppController) -> None:
        super().__init__()
        self._c = controller
        self.importer = TranscriptImporter(controller)
        controller.closers.append(self.importer.close)
        self._clock = ProgressClock()
        self.button = QPushButton("Import transcript…")
        self.button.setToolTip(
            "Capture the user and assistant turns of a Claude Code transcript (.jsonl), "
            "secrets masked, as `antinomy capture import` does; a file dropped on the "
            "window is imported the same way"
        )
        self.button.clicked.connect(self.choose_and_import)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(200)
        self.progress.hide()
        self.state = QLabel("Import a conversation transcript, or drop one here.")
        self.report = QLabel()
        self.report.setWordWrap(True)
        self.report.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.report.hide()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.button)
        row.addWidget(self.progress)
        row.addWidget(self.state, 1)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(row)
        column.addWidget(self.report)
        self.importer.sig_import_started.connect(self._started)
        self.importer.sig_import_progress.connect(self._progress)
        self.importer.sig_import_finished.connect(self._finished)
        self.importer.sig_import_failed.connect(self._failed)
        controller.sig_vault_opened.connect(lambda _root: self._vault_opened())

    def choose_and_import(self) -> None:
        if self._c.root is None:
            self._failed("Open a vault first: transcripts are imported into it.")
            return
        files = choose_transcripts(self)
        if files:
            self.import_files(files)

    def import_files(self, files: Sequence[Path]) -> bool:
        return self.importer.start(files)

    def _vault_opened(self) -> None:
        self.report.hide()
        self.state.setText("Import a conversation transcript, or drop one here.")

    def _started(self, count: int) -> None:
        self._clock = ProgressClock()
        self.button.setEnabled(False)
        self.progress.setRange(0, 0)
        self.progress.show()
        self.state.setText(f"Importing {plural(count, 'transcript')}…")

    def _progress(self, done: int, total: int, what: str) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.state.setText(self._clock.line(done, total, what))

    def _idle(self) -> None:
        self.button.setEnabled(True)
        self.progress.hide()

    def _finished(self, outcomes: list[ImportOutcome]) -> None:
        self._idle()
        imported = sum(o.report is not None for o in outcomes)
        refused = len(outcomes) - imported
        self.state.setText(
            f"Imported {plural(imported, 'transcript')}"
            + (
                f"; {refused} refused, nothing of {'it' if refused == 1 else 'them'} kept"
                if refused
                else ""
            )
            + (" — Consolidate now turns the lines into facts." if imported else ".")
        )
        self.report.setText(imports_summary(outcomes))
        self.report.show()
        for o in outcomes:
            if o.report is None:
                self._c.sig_error.emit(f"Importing {o.path.name}", o.problem or "")
        self.sig_import_shown.emit(outcomes)

    def _failed(self, message: str) -> None:
        self._idle()
        self.state.setText(f"Not imported — {message}")
        self._c.sig_error.emit("Importing a transcript", message)
