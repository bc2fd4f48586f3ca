"""The status bar: models loading/ready, index progress with Stop, index coverage.

Long texts (a deep vault path, a coverage line with many skip reasons) are cut
with "…" and shown whole in their tooltip, so the endpoint's state at the right
end always shows whole, whatever the window's width.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QLabel,
    QProgressBar,
    QSizePolicy,
    QStatusBar,
    QToolButton,
    QWidget,
)

from desktop.flows.model_choice import model_choice_text
from desktop.ui.controller import AppController
from desktop.ui.endpoint import QtEndpointStatus, endpoint_for
from desktop.vault.index import IndexReport
from inference.runtime import State


class QtElidedLabel(QLabel):
    """A one-line label that gives up width first: what does not fit becomes "…".
    ``text()`` is still the whole text; the tooltip shows it too."""

    def __init__(self, text: str = "", *, mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight):
        super().__init__(text)
        self._mode = mode
        # Its text's width when there is room, down to a few characters when there is not.
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(text)

    def minimumSizeHint(self) -> QSize:
        width = self.fontMetrics().horizontalAdvance("…") * 4
        return QSize(width, super().minimumSizeHint().height())

    def shown_text(self) -> str:
        """The text as drawn at the label's current width."""
        return self.fontMetrics().elidedText(self.text(), self._mode, self.contentsRect().width())

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.drawText(
            self.contentsRect(), int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft),
            self.shown_text(),
        )  # fmt: skip


class QtStatusBar(QStatusBar):
    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._c = controller
        self.models = QtElidedLabel("models: loading…")
        self.vault = QtElidedLabel("", mode=Qt.TextElideMode.ElideMiddle)
        self.coverage = QtElidedLabel("")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(180)
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.stop = QToolButton()
        self.stop.setText("Stop")
        self.stop.setToolTip("Stop indexing (what is done is kept)")
        self.stop.clicked.connect(controller.stop_indexing)
        self.stop.hide()
        self.addWidget(self.models)
        self.addWidget(self.vault, 1)
        self.addPermanentWidget(self.progress)
        self.addPermanentWidget(self.stop)
        self.addPermanentWidget(self.coverage)
        self.endpoint = QtEndpointStatus(endpoint_for(controller))
        self.addPermanentWidget(self.endpoint)
        controller.sig_runtime_changed.connect(self.show_runtime)
        controller.sig_settings_changed.connect(lambda _s: self.show_runtime())
        controller.sig_index_progress.connect(self.show_progress)
        controller.sig_index_updated.connect(self.show_report)
        controller.sig_vault_opened.connect(self._vault_opened)
        self.show_runtime()

    def show_runtime(self) -> None:
        rt = self._c.runtime
        if rt.state is State.READY and rt.ready_seconds is not None:
            text = f"models: ready in {rt.ready_seconds:.1f} s"
        elif rt.state is State.FAILED:
            text = "models: failed — see Models"
        elif rt.state is State.CLOSED:
            text = "models: closed"
        else:
            text = "models: loading…"
        choice = model_choice_text(self._c.settings)
        self.models.setText(f"{text} · {choice}")
        self.models.setToolTip(
            f"{text} · {choice}\nThe language model this install uses (Models ▸ Use a stronger "
            "model… changes it)"
        )

    def _vault_opened(self, root: object) -> None:
        self.vault.setText(f"vault: {root}")
        self.progress.setRange(0, 0)  # busy until the first count arrives
        self.progress.show()
        self.stop.show()
        self.coverage.setText("indexing…")

    def show_progress(self, done: int, total: int, phase: str) -> None:
        self.progress.show()
        self.stop.show()
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(f"{phase} %v/%m")

    def show_report(self, report: IndexReport) -> None:
        self.progress.hide()
        self.stop.hide()
        self.coverage.setText(report.summary())
