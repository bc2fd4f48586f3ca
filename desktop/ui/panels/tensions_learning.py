"""What the user's decisions changed in the run on screen, above its pairs.

One line of what the scan learned (``ScanRun.learning.message``) with the toggle that lays
out the pairs it hid (each card then says why), what it left out because the user asked it
to ignore it, what the user's own server said when asked, any trouble with those as a
warning line, and what the scan learned from the last review action.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop.flows.hunter import ScanRun
from desktop.flows.progress import plural


def opinion_text(run: ScanRun) -> str:
    """What the user's server said in ``run`` ("" when it was not asked)."""
    o = run.second_opinion
    if not o.asked:
        return ""
    where = " (not on this machine)" if o.leaves_machine else ""
    return (
        f"Second opinion from {o.server}{where}: {plural(o.asked, 'pair')} asked both ways — "
        f"{o.yes} yes, {o.no} no, {o.split} split, {o.unusable + o.failed} without an answer; "
        f"{o.hidden} hidden by its no."
    )


def warnings(run: ScanRun) -> list[str]:
    """Trouble with what was learned, ignored or asked: the scan went on and says why."""
    out = []
    if run.learning.error:
        out.append(f"Learning: {run.learning.error}")
    if run.ignored.error:
        out.append(f"Ignore list: {run.ignored.error}")
    if run.second_opinion.error:
        out.append(f"Second opinion: {run.second_opinion.error}")
    return out


def _label() -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    label.hide()
    return label


class QtLearningBar(QWidget):
    sig_show_hidden_toggled = Signal(bool)
    """Show hidden was toggled: ``(on)``."""

    def __init__(self) -> None:
        super().__init__()
        self.message = _label()
        self.toggle = QPushButton()
        self.toggle.setCheckable(True)
        self.toggle.setToolTip(
            "Pairs the judge passed but that what your decisions taught this vault hides; "
            "each card says why. Every review action works on them."
        )
        self.toggle.toggled.connect(self._toggled)
        self.toggle.hide()
        self.ignored = _label()
        self.opinion = _label()
        self.warning = _label()
        self.learned = _label()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.message, 1)
        row.addWidget(self.toggle)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        for label in (self.ignored, self.opinion, self.warning, self.learned):
            layout.addWidget(label)
        self.hidden = 0

    def show_run(self, run: ScanRun | None) -> None:
        """Say what ``run``'s learning did (None: nothing to say)."""
        self.learned.hide()
        if run is None:
            for label in (self.message, self.ignored, self.opinion, self.warning):
                label.hide()
            self.toggle.setChecked(False)  # another vault: its hidden pairs start hidden
            self.set_hidden(0)
            return
        message = run.learning.message
        self.message.setText(
            f"<b>Learned from your decisions:</b> {html.escape(message)}" if message else ""
        )
        self.message.setVisible(bool(message))
        ignored = run.ignored.message
        self.ignored.setText(
            html.escape(ignored[:1].upper() + ignored[1:]) + "." if ignored else ""
        )
        self.ignored.setToolTip("Settings ▸ Learning lists what you asked to ignore.")
        self.ignored.setVisible(bool(ignored))
        opinion = opinion_text(run)
        self.opinion.setText(html.escape(opinion))
        self.opinion.setVisible(bool(opinion))
        problems = warnings(run)
        self.warning.setText("<br>".join(f"⚠ {html.escape(p)}" for p in problems))
        self.warning.setVisible(bool(problems))

    def set_hidden(self, n: int) -> None:
        """``n`` hidden pairs can be laid out (no note dismisses them)."""
        self.hidden = n
        self.toggle.setVisible(n > 0)
        self._label_toggle()

    def _label_toggle(self) -> None:
        if self.toggle.isChecked():
            self.toggle.setText(f"Hide the {plural(self.hidden, 'hidden pair')}")
        else:
            self.toggle.setText(f"Show {self.hidden} hidden")

    def _toggled(self, on: bool) -> None:
        self._label_toggle()
        self.sig_show_hidden_toggled.emit(on)

    def show_learned(self, line: str) -> None:
        """What the scan learned from the last review action."""
        self.learned.setText(f"<i>Your last decision: {html.escape(line)}.</i>")
        self.learned.show()
