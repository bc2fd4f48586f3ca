"""The Settings dialog: a form over :class:`desktop.flows.settings.Settings`.

A bad value keeps the dialog open with the exact message of the settings
object under the form. Choosing a backend that leaves this machine asks first.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.flows.settings import (
    BackendSettings,
    EmbedderBackendSettings,
    EndpointSettings,
    FolderSettings,
    MemoryPrefs,
    ModelPaths,
    ScanCaps,
    Settings,
    SettingsInvalid,
)
from desktop.ui.dialogs.settings_learning import QtLearningSettings, confirm_second_opinion
from desktop.ui.dialogs.settings_review import QtReviewSettings
from desktop.ui.dialogs.settings_scan import ScanBudgetFields

LEAVES_MACHINE_WARNING = (
    "This backend is not on this machine: every scan will send note text to {host}. "
    "Use it only if you trust that server with your notes."
)


def confirm_backend(
    parent: QWidget | None, backend: BackendSettings | EmbedderBackendSettings
) -> bool:
    """Ask before note text would leave this machine; True when it may."""
    if not backend.leaves_machine:
        return True
    answer = QMessageBox.warning(
        parent,
        "This sends note text off this machine",
        LEAVES_MACHINE_WARNING.format(host=backend.base_url),
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.No,
    )
    return answer == QMessageBox.StandardButton.Yes


def _path_row(edit: QLineEdit, caption: str, pattern: str) -> QWidget:
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(edit, 1)
    browse = QPushButton("Choose…")

    def pick() -> None:
        path, _ = QFileDialog.getOpenFileName(row, caption, edit.text(), pattern)
        if path:
            edit.setText(path)

    browse.clicked.connect(pick)
    layout.addWidget(browse)
    return row


class SettingsDialog(QDialog):
    def __init__(
        self, settings: Settings, parent: QWidget | None = None, *, vault: Path | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Antinomy — settings")
        self.original = settings
        self.result_settings: Settings | None = None
        tabs = QTabWidget()

        # Models and backend
        self.llm_path = QLineEdit(settings.models.llm_path or "")
        self.llm_path.setPlaceholderText("shipped SmolLM2-135M-Instruct")
        self.embedder_path = QLineEdit(settings.models.embedder_path or "")
        self.embedder_path.setPlaceholderText("shipped all-MiniLM-L6-v2")
        self.backend = QComboBox()
        self.backend.addItem("Embedded (llama.cpp on this machine)", "embedded")
        self.backend.addItem("OpenAI-compatible server", "http")
        self.backend.setCurrentIndex(0 if settings.backend.kind == "embedded" else 1)
        self.base_url = QLineEdit(settings.backend.base_url)
        self.base_url.setPlaceholderText("http://127.0.0.1:8080/v1")
        self.model = QLineEdit(settings.backend.model)
        self.api_key = QLineEdit(settings.backend.api_key or "")
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        # Where embeddings are computed (the vault's first index is the heavy part).
        e = settings.embedder_backend
        self.embedder_backend = QComboBox()
        self.embedder_backend.addItem("Bundled embedder (ONNX on this machine)", "embedded")
        self.embedder_backend.addItem("OpenAI-compatible /v1/embeddings server", "http")
        self.embedder_backend.setCurrentIndex(0 if e.kind == "embedded" else 1)
        self.embedder_url = QLineEdit(e.base_url)
        self.embedder_url.setPlaceholderText("http://127.0.0.1:8080/v1")
        self.embedder_model = QLineEdit(e.model)
        self.embedder_model.setPlaceholderText("the server's default")
        self.embedder_key = QLineEdit(e.api_key or "")
        self.embedder_key.setEchoMode(QLineEdit.EchoMode.Password)
        models = QWidget()
        form = QFormLayout(models)
        form.addRow("Language model (GGUF)", _path_row(self.llm_path, "GGUF model", "*.gguf"))
        form.addRow("Embedder (ONNX)", _path_row(self.embedder_path, "ONNX model", "*.onnx"))
        form.addRow("Backend", self.backend)
        form.addRow("Server URL", self.base_url)
        form.addRow("Server model", self.model)
        form.addRow("API key", self.api_key)
        form.addRow("Embeddings", self.embedder_backend)
        form.addRow("Embedding server URL", self.embedder_url)
        form.addRow("Embedding model", self.embedder_model)
        form.addRow("Embedding API key", self.embedder_key)
        tabs.addTab(models, "Models")

        # Scan
        self.cap = QSpinBox()
        self.cap.setRange(2, 500)
        self.cap.setValue(settings.scan.cap)
        self.body_chars = QSpinBox()
        self.body_chars.setRange(100, 20000)
        self.body_chars.setSingleStep(100)
        self.body_chars.setValue(settings.scan.body_chars)
        self.types = QLineEdit(", ".join(settings.scan.types))
        self.types.setToolTip(
            "Note types (the `type:` of a note's frontmatter) a classic scan sends to the "
            "model, separated by commas. Whole-vault and focus scans compare every type "
            "except those left out below."
        )
        self.neighbours = QSpinBox()
        self.neighbours.setRange(1, 50)
        self.neighbours.setValue(settings.scan.neighbours)
        scan = QWidget()
        form = QFormLayout(scan)
        form.addRow("Notes per classic scan", self.cap)
        form.addRow("Characters of each note", self.body_chars)
        form.addRow("Note types a classic scan reads", self.types)
        form.addRow("Neighbours in focus mode", self.neighbours)
        self.scan_budget = ScanBudgetFields(settings.scan, form)
        tabs.addTab(scan, "Scan")

        # Endpoint (the guard's threshold and mode belong to each vault: the Guard panel)
        self.port = QSpinBox()
        self.port.setRange(1024, 65535)
        self.port.setValue(settings.endpoint.port)
        guard = QWidget()
        form = QFormLayout(guard)
        form.addRow("Endpoint port (loopback)", self.port)
        where = QLabel(
            "The guard is turned on, and its threshold and mode set, per vault in the Guard "
            "panel (View ▸ Guard); `antinomy guard enable` writes the same settings."
        )
        where.setWordWrap(True)
        form.addRow(where)
        tabs.addTab(guard, "Guard")

        # Folders
        f = settings.folders
        self.principles = QLineEdit(f.principles)
        self.subjects = QLineEdit(f.subjects)
        self.sources = QLineEdit(f.sources)
        self.debug = QLineEdit(f.debug)
        folders = QWidget()
        form = QFormLayout(folders)
        form.addRow("Principles", self.principles)
        form.addRow("Subjects", self.subjects)
        form.addRow("Sources", self.sources)
        form.addRow("Debug notes", self.debug)
        tabs.addTab(folders, "Folders")

        # Memory
        self.auto_consolidate = QCheckBox(
            "Consolidate automatically after a conversation batch closes"
        )
        self.auto_consolidate.setChecked(settings.memory.auto_consolidate)
        self.auto_consolidate.setToolTip(
            "In the background of the app and of `antinomy serve`, one run at a time; the "
            "report appears in the Memory panel. Off: only Consolidate now (or the CLI) runs it."
        )
        memory = QWidget()
        form = QFormLayout(memory)
        form.addRow(self.auto_consolidate)
        tabs.addTab(memory, "Memory")
        self.review = QtReviewSettings(vault)  # the open vault's own: saved in the vault
        tabs.addTab(self.review, "Review")
        self.learning = QtLearningSettings(settings, vault)  # the open vault's lists
        tabs.addTab(self.learning, "Learning")
        self.tabs = tabs

        self.problem = QLabel()
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: palette(highlight);")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(tabs, 1)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        self.backend.currentIndexChanged.connect(self._backend_fields)
        self.embedder_backend.currentIndexChanged.connect(self._backend_fields)
        self._backend_fields()

    def _backend_fields(self, *_: object) -> None:
        http = self.backend.currentData() == "http"
        for w in (self.base_url, self.model, self.api_key):
            w.setEnabled(http)
        http = self.embedder_backend.currentData() == "http"
        for w in (self.embedder_url, self.embedder_model, self.embedder_key):
            w.setEnabled(http)

    def collect(self) -> Settings:
        """The settings the form describes; raises SettingsInvalid for a bad value."""
        types = tuple(t.strip() for t in self.types.text().split(",") if t.strip())
        chosen = replace(
            self.original,
            models=ModelPaths(
                llm_path=self.llm_path.text().strip() or None,
                embedder_path=self.embedder_path.text().strip() or None,
            ),
            backend=BackendSettings(
                kind=self.backend.currentData(),
                base_url=self.base_url.text().strip(),
                model=self.model.text().strip(),
                api_key=self.api_key.text() or None,
            ),
            embedder_backend=EmbedderBackendSettings(
                kind=self.embedder_backend.currentData(),
                base_url=self.embedder_url.text().strip(),
                model=self.embedder_model.text().strip(),
                api_key=self.embedder_key.text() or None,
            ),
            scan=ScanCaps(
                cap=self.cap.value(),
                body_chars=self.body_chars.value(),
                types=types,
                neighbours=self.neighbours.value(),
            ),
            endpoint=EndpointSettings(port=self.port.value()),
            folders=FolderSettings(
                principles=self.principles.text().strip(),
                subjects=self.subjects.text().strip(),
                sources=self.sources.text().strip(),
                debug=self.debug.text().strip(),
            ),
            memory=MemoryPrefs(auto_consolidate=self.auto_consolidate.isChecked()),
        )
        chosen = replace(chosen, scan=self.scan_budget.apply(chosen.scan))
        return self.learning.applied(chosen)

    def accept(self) -> None:
        try:
            settings = self.collect()
        except SettingsInvalid as exc:
            self.problem.setText(str(exc))
            return
        if settings.backend != self.original.backend and not confirm_backend(
            self, settings.backend
        ):
            self.problem.setText("The backend was not changed: it would send notes elsewhere.")
            return
        if settings.embedder_backend != self.original.embedder_backend and not confirm_backend(
            self, settings.embedder_backend
        ):
            self.problem.setText(
                "The embedding server was not changed: it would send notes elsewhere."
            )
            return
        if not confirm_second_opinion(self, settings, self.original):
            self.problem.setText(
                "The second opinion was not turned on: it would send sentences elsewhere."
            )
            return
        # Saved last: a refusal above leaves the vault's own settings as they were.
        if (problem := self.review.save()) is not None:
            self.problem.setText(problem)
            return
        self.result_settings = settings
        super().accept()
