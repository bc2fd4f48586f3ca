"""Guard: the endpoint's address and state, the token, the vault's guard settings,
agent hooks for a project folder, and a live log of the guard's checks (verdicts, latency).

The endpoint itself belongs to the app (:mod:`desktop.ui.endpoint`); this panel
shows it and offers Start/Stop. Guard settings are the vault's own
(``.antinomy/guard/settings.json``, :mod:`desktop.flows.guard`), the same file
``antinomy guard enable`` writes; hooks are installed with the code of
``antinomy hooks install``.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont, QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.flows.guard import (
    DEFAULT_THRESHOLD,
    GuardSettings,
    load_guard_settings,
    save_guard_settings,
)
from desktop.service.guard_log import GuardRecord
from desktop.service.security import TokenFileUnsafe, load_or_create_token, token_path
from desktop.ui.context import AppContext
from desktop.ui.endpoint import AppEndpoint, endpoint_for
from desktop.ui.panels import PanelSpec
from desktop.ui.panels.guard_hooks import (
    AGENTS,
    HooksStatus,
    hooks_status,
    install_hooks,
    uninstall_hooks,
)
from foundation.errors import AntinomyError
from inference.judge import Thresholds
from inference.registry import default_spec

#: Rows kept in the live log (the endpoint's GuardLog keeps its own last 500).
MAX_ROWS = 500
LOG_COLUMNS = ["Time", "Tool", "Top decision", "Score", "Verdict", "Latency"]
VERDICT_HELP = {
    "warn": "warned the agent (additional context)",
    "ask": "asked the user to confirm",
    "allow": "below the threshold: allowed",
    "repeat": "already warned about this decision in this session",
    "off": "guard not enabled for this vault or project",
    "skip": "change too short to judge",
    "error": "the check failed; the tool was allowed",
}


def record_row(record: GuardRecord) -> list[str]:
    """The live log's cells for one check."""
    decision = record.decision_title or record.decision_id or ""
    score = "" if record.score is None else f"{record.score:.3f}"
    return [
        time.strftime("%H:%M:%S", time.localtime(record.time)),
        record.tool or "?",
        decision,
        score,
        record.verdict,
        f"{record.latency_ms:.1f} ms",
    ]


class QtGuardPanel(QWidget):
    sig_guard_settings_shown = Signal(object)
    """The vault's guard settings were read into the editors: ``(GuardSettings)``."""
    sig_guard_settings_saved = Signal(object)
    """The editors' values were saved for the vault: ``(GuardSettings)``."""
    sig_hooks_status_shown = Signal(object)
    """A project's hooks status is on screen: ``(HooksStatus)``."""
    sig_guard_check_shown = Signal(object)
    """A guard check reached the live log: ``(GuardRecord)``."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self._c = ctx.controller
        self.endpoint: AppEndpoint = endpoint_for(self._c)
        self._loading = False
        self._settings_request = 0
        self.settings: GuardSettings | None = None

        endpoint_box = self._build_endpoint_box()
        guard_box = self._build_guard_box()
        hooks_box = self._build_hooks_box()
        log_box = self._build_log_box()

        # The central tab is narrow beside the Notes and Preview docks: settings in a row
        # above, the log full width below.
        top = QHBoxLayout()
        top.addWidget(endpoint_box, 1)
        top.addWidget(guard_box, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(hooks_box)
        layout.addWidget(log_box, 1)

        self.endpoint.sig_endpoint_changed.connect(self.show_endpoint)
        self.endpoint.sig_guard_checked.connect(self.add_check)
        self._c.sig_vault_opened.connect(self._vault_opened)
        self._c.sig_runtime_changed.connect(self._show_judge_help)
        # Timers are children: they die with the panel (a bare singleShot would call a
        # deleted widget after the window closed).
        self._later = QTimer(self)
        self._later.setSingleShot(True)
        self._later.setInterval(1500)  # the guard re-reads the decisions meanwhile
        self._later.timeout.connect(self.show_endpoint)
        self._c.sig_index_updated.connect(lambda _r: self._later.start())
        self._copied = QTimer(self)
        self._copied.setSingleShot(True)
        self._copied.setInterval(1500)
        self._copied.timeout.connect(lambda: self.copy_token_button.setText("Copy token"))
        self._set_guard_editors_enabled(False)
        self.show_endpoint()
        for record in self.endpoint.guard_log.records():
            self.add_check(record)
        self.load_guard_settings()

    def _build_endpoint_box(self) -> QGroupBox:
        """The endpoint: its state, the token file, Copy token, Start and Stop."""
        self.endpoint_state = QLabel()
        self.endpoint_state.setWordWrap(True)
        self.endpoint_state.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.token_label = QLabel(f"Token file: {token_path()}")
        self.token_label.setWordWrap(True)
        self.token_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.copy_token_button = QPushButton("Copy token")
        self.copy_token_button.setToolTip("Copy the bearer token every request needs")
        self.copy_token_button.clicked.connect(self.copy_token)
        self.start_button = QPushButton("Start")
        self.start_button.clicked.connect(self.endpoint.start)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop serving: hooks then allow every tool call")
        self.stop_button.clicked.connect(self.endpoint.stop)
        endpoint_buttons = QHBoxLayout()
        endpoint_buttons.addWidget(self.copy_token_button)
        endpoint_buttons.addStretch(1)
        endpoint_buttons.addWidget(self.start_button)
        endpoint_buttons.addWidget(self.stop_button)
        endpoint_box = QGroupBox("Endpoint")
        eb = QVBoxLayout(endpoint_box)
        eb.addWidget(self.endpoint_state)
        eb.addWidget(self.token_label)
        eb.addLayout(endpoint_buttons)
        # The box is as tall as the guard's beside it: the spare height goes below, not
        # between the lines.
        eb.addStretch(1)
        return endpoint_box

    def _build_guard_box(self) -> QGroupBox:
        """This vault's guard settings, saved as they are edited."""
        self.enabled = QCheckBox("Guard on for this vault")
        self.enabled.setToolTip(
            "Check agent tool calls against the vault's standing decisions (off by default)"
        )
        self.mode = QComboBox()
        self.mode.addItem("warn — tell the agent", "warn")
        self.mode.addItem("ask — ask me to confirm", "ask")
        # The judged guard's threshold is what decides; the cosine one only when no judge
        # is loaded. 0 in the judge box means "the judge's calibrated value".
        self.judge_threshold = QDoubleSpinBox()
        self.judge_threshold.setRange(0.0, 0.99)
        self.judge_threshold.setSingleStep(0.01)
        self.judge_threshold.setDecimals(2)
        self.judge_threshold.setSpecialValueText("calibrated")
        self.judge_threshold_help = QLabel()
        self.judge_threshold_help.setWordWrap(True)
        self.threshold = QDoubleSpinBox()
        self.threshold.setRange(0.05, 1.0)
        self.threshold.setSingleStep(0.01)
        self.threshold.setDecimals(2)
        self.threshold.setValue(DEFAULT_THRESHOLD)
        self.threshold.setToolTip(
            "Used only when the contradiction judge is not loaded: the cosine a change needs "
            f"with a decision to warn (default {DEFAULT_THRESHOLD}; lower warns more often)"
        )
        self.principles = QCheckBox("Compare with principles too")
        self.guard_state = QLabel()
        self.guard_state.setWordWrap(True)
        guard_box = QGroupBox("Guard for this vault")
        form = QFormLayout(guard_box)
        form.addRow(self.enabled)
        form.addRow("Mode", self.mode)
        form.addRow("Judge threshold", self.judge_threshold)
        form.addRow(self.judge_threshold_help)
        form.addRow("Fallback (no judge): cosine", self.threshold)
        form.addRow(self.principles)
        form.addRow(self.guard_state)
        self._save_timer = QTimer(self)
        self._save_timer.setSingleShot(True)
        self._save_timer.setInterval(300)  # one write after a burst of spin-box steps
        self._save_timer.timeout.connect(self.save_guard_settings)
        self.enabled.toggled.connect(self._edited)
        self.mode.currentIndexChanged.connect(self._edited)
        self.threshold.valueChanged.connect(self._edited)
        self.judge_threshold.valueChanged.connect(self._edited)
        self.principles.toggled.connect(self._edited)
        return guard_box

    def _build_hooks_box(self) -> QGroupBox:
        """Agent hooks for a project folder: install, uninstall, what is there."""
        self.project = QLineEdit()
        self.project.setPlaceholderText("A project folder where Claude Code or Codex works")
        self.project.editingFinished.connect(self.show_hooks_status)
        choose = QPushButton("Choose…")
        choose.clicked.connect(self.choose_project)
        self.agent = QComboBox()
        for agent in AGENTS:
            self.agent.addItem({"both": "Claude Code + Codex"}.get(agent, agent.title()), agent)
        self.agent.currentIndexChanged.connect(lambda _i: self.show_hooks_status())
        self.install_button = QPushButton("Install hooks")
        self.install_button.setToolTip(
            "Merge Antinomy's hooks into the folder's .claude/settings.json and "
            ".codex/hooks.json (other entries kept, a backup written first) and turn the "
            "guard on for it"
        )
        self.install_button.clicked.connect(self.install)
        self.uninstall_button = QPushButton("Uninstall")
        self.uninstall_button.setToolTip("Remove only Antinomy's hooks from the folder")
        self.uninstall_button.clicked.connect(self.uninstall)
        self.hooks_text = QLabel("Choose a project folder to see its hooks.")
        self.hooks_text.setWordWrap(True)
        self.hooks_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.TypeWriter)
        self.hooks_text.setFont(mono)
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.project, 1)
        folder_row.addWidget(choose)
        hook_buttons = QHBoxLayout()
        hook_buttons.addWidget(self.agent)
        hook_buttons.addStretch(1)
        hook_buttons.addWidget(self.install_button)
        hook_buttons.addWidget(self.uninstall_button)
        hooks_box = QGroupBox("Agent hooks")
        hb = QVBoxLayout(hooks_box)
        hb.addLayout(folder_row)
        hb.addLayout(hook_buttons)
        hb.addWidget(self.hooks_text)
        return hooks_box

    def _build_log_box(self) -> QGroupBox:
        """The guard checks, live."""
        self.log = QTreeWidget()
        self.log.setHeaderLabels(LOG_COLUMNS)
        self.log.setRootIsDecorated(False)
        self.log.setUniformRowHeights(True)
        for column, width in enumerate([76, 56, 240, 56, 64]):
            self.log.setColumnWidth(column, width)
        self.log_count = QLabel()
        clear = QPushButton("Clear")
        clear.clicked.connect(self.clear_log)
        log_row = QHBoxLayout()
        log_row.addWidget(self.log_count, 1)
        log_row.addWidget(clear)
        log_box = QGroupBox("Guard checks (live)")
        lb = QVBoxLayout(log_box)
        lb.addWidget(self.log, 1)
        lb.addLayout(log_row)
        return log_box

    # ------------------------------------------------------------------ endpoint

    def show_endpoint(self) -> None:
        e = self.endpoint
        if e.state == "up" and e.url:
            text = f"<b>Up</b> — {e.url} (and [::1]:{e.port}); hooks find it by its port."
        elif e.state == "starting":
            text = "Starting…"
        elif e.state == "failed":
            text = (
                f"<b>Down</b> — {html.escape(e.problem or '')}<br>In the app: stop the other "
                "server or change the port in File ▸ Settings ▸ Guard, then <b>Start</b>."
            )
        else:
            text = "<b>Down</b>" + (f" — {html.escape(e.problem)}" if e.problem else ".")
        self.endpoint_state.setText(text)
        self.start_button.setText("Restart" if e.state == "up" else "Start")
        self.start_button.setEnabled(e.state != "starting")
        self.stop_button.setEnabled(e.state == "up")
        self.guard_state.setText(self._guard_state_text())

    def _guard_state_text(self) -> str:
        handle = self.endpoint.handle
        service = handle.guard if handle is not None else None
        if service is None:
            return "Checks are answered while the endpoint is up."
        if service.error:
            return f"The guard cannot read the vault: {service.error}"
        if service.guard is None or not service.ready.is_set():
            return "Reading the vault's decisions…"
        n = len(service.guard.decisions.decisions)
        return f"{n} standing decision{'s' if n != 1 else ''} watched."

    def copy_token(self) -> None:
        """Put the endpoint's bearer token on the clipboard (created on first use)."""
        try:
            token = load_or_create_token()
        except TokenFileUnsafe as exc:  # a link or not a file there: neither read nor changed
            self._c.sig_error.emit("Copying the token", str(exc))
            return
        except OSError as exc:
            self._c.sig_error.emit("Copying the token", f"Cannot read {token_path()}: {exc}.")
            return
        QGuiApplication.clipboard().setText(token)
        self.copy_token_button.setText("Copied")
        self._copied.start()

    # ------------------------------------------------------------------ guard settings

    def _set_guard_editors_enabled(self, on: bool) -> None:
        for w in (self.enabled, self.mode, self.judge_threshold, self.threshold, self.principles):
            w.setEnabled(on)

    def _vault_opened(self, _root: object) -> None:
        """The editors showed the previous vault: blank them until this one's are read.

        A save still waiting would have written the old vault's values into the new one.
        """
        self._save_timer.stop()
        self.settings = None
        self._set_guard_editors_enabled(False)
        self.guard_state.setText("Reading this vault's guard settings…")
        self.load_guard_settings()

    def calibrated_threshold(self) -> float:
        """The guard threshold of the judge the guard decides with (the runtime's guard
        judge), else the manifest's."""
        try:
            return self._c.runtime.guard_thresholds().guard
        except AntinomyError:
            pass
        try:
            spec = default_spec("judge", role="guard")
        except AntinomyError:
            return Thresholds().guard
        return Thresholds.from_mapping(spec.extra.get("thresholds")).guard

    def _show_judge_help(self) -> None:
        calibrated = self.calibrated_threshold()
        chosen = self.settings.judge_threshold if self.settings is not None else None
        now = f"this vault uses {chosen:.2f}" if chosen else f"this vault uses {calibrated:.2f}"
        self.judge_threshold_help.setText(
            "<small>The probability of contradiction the judge must give a change against a "
            f"standing decision before the guard warns. Calibrated: {calibrated:.2f} (no "
            f"warning on unrelated calls); {now}. Lower warns more often.</small>"
        )

    def load_guard_settings(self) -> None:
        root = self._c.root
        if root is None:
            return
        self._settings_request += 1
        request = self._settings_request

        async def go() -> None:
            settings = await self._c.run_in(self._c.read_pool, load_guard_settings, root)
            if request == self._settings_request and root == self._c.root:
                self._show_settings(settings)

        self._c.spawn(go(), what="Reading the guard settings")

    def _show_settings(self, settings: GuardSettings) -> None:
        self._loading = True
        try:
            self.settings = settings
            self.enabled.setChecked(settings.enabled)
            self.mode.setCurrentIndex(max(0, self.mode.findData(settings.mode)))
            self.threshold.setValue(settings.threshold)
            self.judge_threshold.setValue(settings.judge_threshold or 0.0)
            self.principles.setChecked(settings.include_principles)
        finally:
            self._loading = False
        self._set_guard_editors_enabled(True)
        self._show_judge_help()
        self.show_endpoint()
        self.sig_guard_settings_shown.emit(settings)

    def edited_settings(self) -> GuardSettings:
        base = self.settings or GuardSettings()
        return replace(
            base,
            enabled=self.enabled.isChecked(),
            mode=self.mode.currentData(),
            threshold=round(self.threshold.value(), 2),
            judge_threshold=round(self.judge_threshold.value(), 2) or None,
            include_principles=self.principles.isChecked(),
        )

    def _edited(self, *_: object) -> None:
        if not self._loading:
            self._save_timer.start()

    def save_guard_settings(self) -> None:
        """Write the editors' values to the vault's guard settings (the guard re-reads them)."""
        self._save_timer.stop()
        root = self._c.root
        if root is None or self.settings is None:
            return
        settings = self.edited_settings()

        async def go() -> None:
            await self._c.run_in(self._c.write_pool, save_guard_settings, root, settings)
            self.settings = settings
            self.sig_guard_settings_saved.emit(settings)

        self._c.spawn(go(), what="Saving the guard settings")

    # ------------------------------------------------------------------ hooks

    def choose_project(self) -> None:
        if self._ask_folder():
            self.show_hooks_status()

    def _ask_folder(self) -> bool:
        start = self.project.text() or str(Path.home())
        folder = QFileDialog.getExistingDirectory(self, "The project folder of your agent", start)
        if folder:
            self.project.setText(folder)
        return bool(folder)

    def _project_folder(self) -> Path | None:
        text = self.project.text().strip()
        return Path(text) if text else None

    def show_hooks_status(self) -> None:
        folder = self._project_folder()
        if folder is not None:
            agent = self.agent.currentData()
            self._hooks_job("Reading the hooks", lambda: hooks_status(folder, agent=agent))

    def install(self) -> None:
        folder = self._project_folder()
        if folder is None:
            self._ask_folder()
            folder = self._project_folder()
            if folder is None:
                return
        agent, root, port = self.agent.currentData(), self._c.root, self.endpoint.port
        self._hooks_job(
            "Installing the hooks",
            lambda: install_hooks(folder, agent=agent, vault=root, port=port),
        )

    def uninstall(self) -> None:
        folder = self._project_folder()
        if folder is not None:
            agent = self.agent.currentData()
            self._hooks_job("Removing the hooks", lambda: uninstall_hooks(folder, agent=agent))

    def _hooks_job(self, what: str, job: Callable[[], HooksStatus]) -> None:
        async def go() -> None:
            status = await self._c.run_in(self._c.write_pool, job)
            self._show_hooks(status)

        self._c.spawn(go(), what=what)

    def _show_hooks(self, status: HooksStatus) -> None:
        self.hooks_text.setText(status.summary())
        self.sig_hooks_status_shown.emit(status)

    # ------------------------------------------------------------------ live log

    def add_check(self, record: GuardRecord) -> None:
        item = QTreeWidgetItem(record_row(record))
        item.setToolTip(2, record.decision_path or "")
        item.setToolTip(4, VERDICT_HELP.get(record.verdict, record.verdict))
        item.setToolTip(1, record.summary or "")
        if record.verdict in ("warn", "ask"):
            bold = item.font(4)
            bold.setBold(True)
            for column in range(len(LOG_COLUMNS)):
                item.setFont(column, bold)
        for column in (3, 5):
            item.setTextAlignment(column, Qt.AlignmentFlag.AlignRight)
        self.log.insertTopLevelItem(0, item)
        while self.log.topLevelItemCount() > MAX_ROWS:
            self.log.takeTopLevelItem(self.log.topLevelItemCount() - 1)
        self._count()
        self.sig_guard_check_shown.emit(record)

    def clear_log(self) -> None:
        self.log.clear()
        self._count()

    def _count(self) -> None:
        n = self.log.topLevelItemCount()
        self.log_count.setText(f"{n} check{'s' if n != 1 else ''} — newest first")


PANEL = PanelSpec("guard", "Guard", "tab", QtGuardPanel)
