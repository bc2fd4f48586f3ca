"""One pair of the results view: both notes, both quotes, the confidence badge, actions."""

from __future__ import annotations

import html
from functools import partial

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import (
    QFrame,
    QGraphicsOpacityEffect,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
)

from desktop.flows.hunter import Pair
from desktop.flows.review import available_actions

#: (type, status) of a note, as the index has it.
NoteKind = tuple[str | None, str | None]
ACTIONS = (("elevate", "Elevate…"), ("resolve", "Resolved"), ("defeat", "Defeated…"))

BADGE = {
    "high": ("#b3261e", "#ffffff"),
    "medium": ("#b26a00", "#ffffff"),
    "low": ("#5f6368", "#ffffff"),
}


def badge_html(pair: Pair) -> str:
    bg, fg = BADGE.get(pair.confidence, BADGE["medium"])
    text = pair.confidence + ("?" if pair.confidence_defaulted else "")
    return (
        f"<span style='background:{bg}; color:{fg}; font-weight:bold;'>"
        f"&nbsp;{html.escape(text)}&nbsp;</span>"
    )


class QtPairCard(QFrame):
    sig_note_clicked = Signal(str)
    """A note name was clicked: ``(path)``."""
    sig_dismiss_clicked = Signal(object)
    """× was clicked: ``(Pair)``."""
    sig_action_clicked = Signal(str, str)
    """A per-note action: ``(action, path)`` with action elevate | resolve | defeat."""
    sig_card_selected = Signal(object)
    """The card was clicked: ``(QtPairCard)``."""

    def __init__(self, pair: Pair, kinds: dict[str, NoteKind]) -> None:
        super().__init__()
        self.pair = pair
        self.previous = False
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setObjectName("pair-card")
        head = QHBoxLayout()
        title = QLabel(
            f"{badge_html(pair)}&nbsp; <a href='a'>{html.escape(pair.note_a)}</a>"
            f" &nbsp;↔&nbsp; <a href='b'>{html.escape(pair.note_b)}</a>"
        )
        title.setTextFormat(Qt.TextFormat.RichText)
        title.linkActivated.connect(self._link)
        if pair.confidence_defaulted:
            title.setToolTip("The model gave no confidence: shown and sorted as medium.")
        head.addWidget(title, 1)
        self.dismiss_button = QPushButton("×")
        self.dismiss_button.setToolTip(
            "Dismiss: not a real tension (Del). Written into both notes."
        )
        self.dismiss_button.setFixedWidth(32)
        self.dismiss_button.clicked.connect(lambda: self.sig_dismiss_clicked.emit(self.pair))
        head.addWidget(self.dismiss_button)
        description = QLabel(html.escape(pair.description))
        description.setWordWrap(True)
        quotes = QLabel(
            f"<p style='margin:0'><b>{html.escape(pair.note_a)}:</b> "
            f"<i>“{html.escape(pair.quote_a)}”</i></p>"
            f"<p style='margin:4px 0 0 0'><b>{html.escape(pair.note_b)}:</b> "
            f"<i>“{html.escape(pair.quote_b)}”</i></p>"
        )
        quotes.setWordWrap(True)
        quotes.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(description)
        layout.addWidget(quotes)
        self.action_buttons: dict[tuple[str, str], QPushButton] = {}
        self.note_state: dict[str, QLabel] = {}
        for path, name in ((pair.path_a, pair.note_a), (pair.path_b, pair.note_b)):
            layout.addLayout(self._note_row(path, name, kinds.get(path, (None, None))))
        self.set_selected(False)

    def _note_row(self, path: str, name: str, kind: NoteKind) -> QHBoxLayout:
        row = QHBoxLayout()
        note_type, status = kind
        label = QLabel(f"{name} ({note_type or 'no type'}{', ' + status if status else ''})")
        label.setEnabled(False)
        row.addWidget(label, 1)
        state = QLabel()
        self.note_state[path] = state
        row.addWidget(state)
        # Only the buttons that will work: the review flow's own rules.
        allowed = available_actions(note_type, status)
        for action, text in ACTIONS:
            if action not in allowed:
                continue
            button = QPushButton(text)
            button.clicked.connect(partial(self.sig_action_clicked.emit, action, path))
            row.addWidget(button)
            self.action_buttons[(action, path)] = button
        return row

    def mark_done(self, path: str, text: str) -> None:
        """A review action on ``path`` succeeded: show it, and offer no further action."""
        self.note_state[path].setText(text)
        for (_action, p), button in self.action_buttons.items():
            if p == path:
                button.setEnabled(False)

    def _link(self, which: str) -> None:
        self.sig_note_clicked.emit(self.pair.path_a if which == "a" else self.pair.path_b)

    def set_selected(self, selected: bool) -> None:
        self.setProperty("selected", selected)
        self.setLineWidth(2 if selected else 1)
        self.setFrameShadow(QFrame.Shadow.Sunken if selected else QFrame.Shadow.Raised)
        self.setStyleSheet(
            "QFrame#pair-card { border: 2px solid palette(highlight); border-radius: 4px; }"
            if selected
            else "QFrame#pair-card { border: 1px solid palette(mid); border-radius: 4px; }"
        )

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self.sig_card_selected.emit(self)
        super().mousePressEvent(event)

    def set_previous(self, previous: bool) -> None:
        """Grey the card: it belongs to the previous run (its actions still work)."""
        self.previous = previous
        if previous:
            effect = QGraphicsOpacityEffect(self)
            effect.setOpacity(0.45)
            self.setGraphicsEffect(effect)
            self.setToolTip("From the previous run: a new scan is running or did not finish.")
        else:
            self.setGraphicsEffect(None)  # type: ignore[arg-type]
            self.setToolTip("")
