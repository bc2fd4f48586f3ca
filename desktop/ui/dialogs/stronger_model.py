"""Use a stronger model: a GGUF file of one's own, or an OpenAI-compatible server.

Both are checked before the choice is saved — the file verified, the server
asked for its models and timed on one completion ("Test connection") — on a
worker thread, so the dialog never freezes. A server that is not on this
machine is confirmed with the off-machine warning. The chosen settings are
in :attr:`result_settings`; the caller saves them and reloads the models.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.flows.model_choice import BUNDLED_NOTE, ServerCheck, check_gguf, check_server
from desktop.flows.settings import BackendSettings, ModelPaths, Settings, SettingsInvalid
from desktop.ui.dialogs.settings_dialog import LEAVES_MACHINE_WARNING, confirm_backend
from foundation.errors import AntinomyError
from inference.registry import ResolvedModel

FILE_TAB, SERVER_TAB = 0, 1
T = TypeVar("T")


class QtStrongerModelDialog(QDialog):
    sig_file_checked = Signal(object)
    """The GGUF file was verified: ``(ResolvedModel)``."""
    sig_server_checked = Signal(object)
    """Test connection succeeded: ``(ServerCheck)``."""
    sig_check_failed = Signal(str)
    """A check failed: ``(message)``."""

    def __init__(
        self,
        settings: Settings,
        *,
        loop: asyncio.AbstractEventLoop,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Use a stronger language model")
        self.original = settings
        self.result_settings: Settings | None = None
        self._loop = loop
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="antinomy-model-check")
        self._tasks: set[asyncio.Future[None]] = set()
        self.checked_file: ResolvedModel | None = None
        self.checked_server: ServerCheck | None = None

        intro = QLabel(BUNDLED_NOTE)
        intro.setWordWrap(True)

        # -- a GGUF file
        self.gguf = QLineEdit(settings.models.llm_path or "")
        self.gguf.setPlaceholderText("/path/to/a-model.Q4_K_M.gguf")
        self.gguf.textChanged.connect(lambda _t: self._forget_file())
        choose = QPushButton("Choose…")
        choose.clicked.connect(self.choose_file)
        self.check_file_button = QPushButton("Check file")
        self.check_file_button.clicked.connect(self.check_file)
        self.file_result = QLabel(
            "The file is verified here, then loaded and warmed; the Models tab shows its "
            "tokens/s once it is ready."
        )
        self.file_result.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.gguf, 1)
        row.addWidget(choose)
        row.addWidget(self.check_file_button)
        file_tab = QWidget()
        fl = QVBoxLayout(file_tab)
        fl.addWidget(QLabel("A GGUF file on this machine (llama.cpp runs it here):"))
        fl.addLayout(row)
        fl.addWidget(self.file_result)
        fl.addStretch(1)

        # -- a server
        self.base_url = QLineEdit(settings.backend.base_url)
        self.base_url.setPlaceholderText(
            "http://127.0.0.1:11434/v1 (Ollama) · :8080/v1 (llama-server) · :1234/v1 (LM Studio)"
        )
        self.model = QComboBox()
        self.model.setEditable(True)
        self.model.setCurrentText(settings.backend.model)
        self.api_key = QLineEdit(settings.backend.api_key or "")
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key.setPlaceholderText("only if the server asks for one")
        self.test_button = QPushButton("Test connection")
        self.test_button.setToolTip("List the server's models and time one short completion")
        self.test_button.clicked.connect(self.test_connection)
        self.server_result = QLabel("Test the connection before using the server.")
        self.server_result.setWordWrap(True)
        self.base_url.textChanged.connect(lambda _t: self._forget_server())
        self.model.currentTextChanged.connect(lambda _t: self._forget_server())
        server_tab = QWidget()
        form = QFormLayout(server_tab)
        form.addRow("Server URL", self.base_url)
        form.addRow("Model", self.model)
        form.addRow("API key", self.api_key)
        form.addRow(self.test_button)
        form.addRow(self.server_result)

        self.tabs = QTabWidget()
        self.tabs.addTab(file_tab, "A GGUF file")
        self.tabs.addTab(server_tab, "A server (OpenAI-compatible)")
        self.tabs.setCurrentIndex(SERVER_TAB if settings.backend.kind == "http" else FILE_TAB)
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: palette(highlight);")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Use it")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.bundled_button = buttons.addButton(
            "Back to the bundled model", QDialogButtonBox.ButtonRole.ResetRole
        )
        self.bundled_button.clicked.connect(self.use_bundled)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        self.resize(640, 380)

    # ------------------------------------------------------------------ checks

    def _run(self, fn: Callable[..., T], *args: Any, done: Callable[[T], None]) -> None:
        """``fn(*args)`` on the dialog's worker; ``done(result)`` or the error back here."""

        async def go() -> None:
            try:
                result = await self._loop.run_in_executor(self._pool, fn, *args)
            except AntinomyError as exc:
                self._failed(str(exc))
                return
            except Exception as exc:  # a bug, but the dialog must stay usable: say it
                self._failed(f"The check failed: {type(exc).__name__}: {exc}")
                return
            done(result)

        task = asyncio.ensure_future(go(), loop=self._loop)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _failed(self, message: str) -> None:
        self.check_file_button.setEnabled(True)
        self.test_button.setEnabled(True)
        self.problem.setText(message)
        self.sig_check_failed.emit(message)

    def choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "A GGUF model file", self.gguf.text(), "GGUF models (*.gguf);;All files (*)"
        )
        if path:
            self.gguf.setText(path)
            self.check_file()

    def _forget_file(self) -> None:
        self.checked_file = None

    def _forget_server(self) -> None:
        self.checked_server = None

    def check_file(self) -> None:
        self.problem.clear()
        self.check_file_button.setEnabled(False)
        self.file_result.setText("Checking the file (its sha256 takes a moment on a big one)…")
        self._run(check_gguf, self.gguf.text(), done=self._file_ok)

    def _file_ok(self, model: ResolvedModel) -> None:
        self.check_file_button.setEnabled(True)
        self.checked_file = model
        known = "a known model ✓" if model.verified else "not in Antinomy's manifest (allowed)"
        self.file_result.setText(
            f"<b>{model.title}</b> — GGUF, {model.size / 1e6:.0f} MB, sha256 "
            f"{model.sha256[:12]}…, {known}. “Use it” loads and warms it; the Models tab then "
            "shows its tokens/s."
        )
        self.sig_file_checked.emit(model)

    def test_connection(self) -> None:
        self.problem.clear()
        self.test_button.setEnabled(False)
        self.server_result.setText("Asking the server for its models, then one completion…")
        self._run(
            partial(
                check_server,
                self.base_url.text(),
                model=self.model.currentText(),
                api_key=self.api_key.text() or None,
            ),
            done=self._server_ok,
        )

    def _server_ok(self, check: ServerCheck) -> None:
        self.test_button.setEnabled(True)
        self.model.blockSignals(True)
        self.model.clear()
        self.model.addItems(list(check.models))
        self.model.setCurrentText(check.model)
        self.model.blockSignals(False)
        self.checked_server = check
        text = f"✓ {check.summary()}"
        if check.leaves_machine:
            text += "<br><b>⚠ " + LEAVES_MACHINE_WARNING.format(host=check.base_url) + "</b>"
        self.server_result.setText(text)
        self.sig_server_checked.emit(check)

    # ------------------------------------------------------------------ result

    def chosen_settings(self) -> Settings:
        """The settings for the tab on screen; raises SettingsInvalid or AntinomyError."""
        if self.tabs.currentIndex() == FILE_TAB:
            if self.checked_file is None:
                raise AntinomyError("Check the file first (Check file).")
            return replace(
                self.original,
                models=replace(self.original.models, llm_path=str(self.checked_file.path)),
                backend=BackendSettings(),
            )
        if self.checked_server is None:
            raise AntinomyError("Test the connection first: the server must answer once.")
        check = self.checked_server
        return replace(
            self.original,
            backend=BackendSettings(
                kind="http",
                base_url=check.base_url,
                model=check.model,
                api_key=self.api_key.text() or None,
            ),
        )

    def use_bundled(self) -> None:
        self.result_settings = replace(
            self.original,
            models=ModelPaths(llm_path=None, embedder_path=self.original.models.embedder_path),
            backend=BackendSettings(),
        )
        super().accept()

    def accept(self) -> None:
        try:
            settings = self.chosen_settings()
        except (SettingsInvalid, AntinomyError) as exc:
            self.problem.setText(str(exc))
            return
        if settings.backend != self.original.backend and not confirm_backend(
            self, settings.backend
        ):
            self.problem.setText("Not changed: the server would receive note text.")
            return
        self.result_settings = settings
        super().accept()

    def done(self, result: int) -> None:
        for task in list(self._tasks):
            task.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)
        super().done(result)
