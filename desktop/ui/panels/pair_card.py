"""One pair of the results view: both notes, both quotes, the confidence badge, actions.

What a card says about its notes (type, status, how a note was decided, a
quote edited away) comes from :class:`~desktop.ui.vault_state.NoteNow`, read
from the files after every change: the card never keeps a verdict of its own.
"""

from __future__ import annotations

import html
from functools import partial

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QGraphicsOpacityEffect,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.flows.hunter import Pair
from desktop.flows.review import available_actions
from desktop.ui.markdown import wikilinks_as_text
from desktop.ui.vault_state import NoteNow

ACTIONS = (("elevate", "Elevate…"), ("resolve", "Resolved"), ("defeat", "Defeated…"))

BADGE = {
    "high": ("#b3261e", "#ffffff"),
    "medium": ("#b26a00", "#ffffff"),
    "low": ("#5f6368", "#ffffff"),
}
#: Folders and other secondary text: readable on light and dark palettes alike.
MUTED = "#808080"


def badge_html(pair: Pair) -> str:
    bg, fg = BADGE.get(pair.confidence, BADGE["medium"])
    text = pair.confidence + ("?" if pair.confidence_defaulted else "")
    return (
        f"<span style='background:{bg}; color:{fg}; font-weight:bold;'>"
        f"&nbsp;{html.escape(text)}&nbsp;</span>"
    )


def folder_of(path: str) -> str:
    return path.rsplit("/", 1)[0] + "/" if "/" in path else ""


def about_note(path: str, note: NoteNow | None) -> str:
    """``Decisions/ · decision, accepted``: where the note is and what its file says it is."""
    parts = [folder_of(path) or "vault root"]
    if note is not None and note.kind_text():
        parts.append(note.kind_text())
    return " · ".join(parts)


def quote_html(name: str, about: str, quote: str, *, first: bool) -> str:
    margin = "0" if first else "4px 0 0 0"
    return (
        f"<p style='margin:{margin}'><b>{html.escape(name)}</b> "
        f"<span style='color:{MUTED};'>({html.escape(about)})</span>: "
        f"<i>“{html.escape(wikilinks_as_text(quote))}”</i></p>"
    )


class QtNoteRow(QWidget):
    """A note of the pair that can be acted on, or was decided: the actions its type and
    status allow, or how it was decided. Hidden otherwise (the quote line says the rest)."""

    def __init__(self, path: str, name: str, emit: QtPairCard) -> None:
        super().__init__()
        self.path = path
        self.name = name
        self.label = QLabel(name)
        self.label.setEnabled(False)
        self.state = QLabel()
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label, 1)
        row.addWidget(self.state)
        self.buttons: dict[str, QPushButton] = {}
        for action, text in ACTIONS:
            button = QPushButton(text)
            button.clicked.connect(partial(emit.sig_action_clicked.emit, action, path))
            button.hide()
            row.addWidget(button)
            self.buttons[action] = button
        self.hide()

    def show_note(self, note: NoteNow, *, actionable: bool) -> None:
        kind = note.kind_text()
        self.label.setText(f"{self.name} ({kind})" if kind else self.name)
        decided = note.decided_text()
        self.state.setText(decided)
        allowed = available_actions(note.type, note.status) if actionable else ()
        for action, button in self.buttons.items():
            button.setVisible(action in allowed)
        self.setVisible(bool(allowed) or bool(decided))


class QtPairCard(QFrame):
    sig_note_clicked = Signal(str)
    """A note name was clicked: ``(path)``."""
    sig_dismiss_clicked = Signal(object)
    """× was clicked: ``(Pair)``."""
    sig_action_clicked = Signal(str, str)
    """A per-note action: ``(action, path)`` with action elevate | resolve | defeat."""
    sig_card_selected = Signal(object)
    """The card was clicked: ``(QtPairCard)``."""
    sig_checked = Signal(object)
    """The card's check box was toggled: ``(QtPairCard)``."""

    def __init__(self, pair: Pair) -> None:
        super().__init__()
        self.pair = pair
        self.previous = False
        self.stale: str | None = None
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setObjectName("pair-card")
        head = QHBoxLayout()
        self.check = QCheckBox()
        self.check.setToolTip("Select for Dismiss checked")
        self.check.toggled.connect(lambda _on: self.sig_checked.emit(self))
        head.addWidget(self.check, 0, Qt.AlignmentFlag.AlignTop)
        self.title = QLabel(
            f"{badge_html(pair)}&nbsp; <a href='a'>{html.escape(pair.note_a)}</a>"
            f" &nbsp;↔&nbsp; <a href='b'>{html.escape(pair.note_b)}</a>"
        )
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.title.linkActivated.connect(self._link)
        if pair.confidence_defaulted:
            self.title.setToolTip("The model gave no confidence: shown and sorted as medium.")
        head.addWidget(self.title, 1)
        self.dismiss_button = QPushButton("×")
        self.dismiss_button.setToolTip(
            "Dismiss: not a real tension (Del). Written into both notes."
        )
        self.dismiss_button.setFixedWidth(32)
        self.dismiss_button.clicked.connect(lambda: self.sig_dismiss_clicked.emit(self.pair))
        head.addWidget(self.dismiss_button, 0, Qt.AlignmentFlag.AlignTop)
        description = QLabel(html.escape(pair.description))
        description.setWordWrap(True)
        self.quotes = QLabel()
        self.quotes.setWordWrap(True)
        self._show_quotes({})
        self.quotes.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.stale_label = QLabel()
        self.stale_label.setWordWrap(True)
        self.stale_label.hide()
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(description)
        layout.addWidget(self.quotes)
        layout.addWidget(self.stale_label)
        self.rows = {
            path: QtNoteRow(path, name, self)
            for path, name in ((pair.path_a, pair.note_a), (pair.path_b, pair.note_b))
        }
        for row in self.rows.values():
            layout.addWidget(row)
        self.set_selected(False)

    @property
    def action_buttons(self) -> dict[tuple[str, str], QPushButton]:
        """(action, path) → its button, for the actions the note allows now."""
        return {
            (action, path): button
            for path, row in self.rows.items()
            for action, button in row.buttons.items()
            if not button.isHidden()
        }

    @property
    def note_state(self) -> dict[str, QLabel]:
        return {path: row.state for path, row in self.rows.items()}

    def _show_quotes(self, notes: dict[str, NoteNow]) -> None:
        p = self.pair
        self.quotes.setText(
            quote_html(p.note_a, about_note(p.path_a, notes.get(p.path_a)), p.quote_a, first=True)
            + quote_html(
                p.note_b, about_note(p.path_b, notes.get(p.path_b)), p.quote_b, first=False
            )
        )

    def show_notes(self, notes: dict[str, NoteNow], stale: str | None) -> None:
        """Show the notes as they are now; ``stale``: why the pair no longer stands."""
        self.stale = stale
        self._show_quotes(notes)
        for path, row in self.rows.items():
            note = notes.get(path)
            if note is not None:
                row.show_note(note, actionable=stale is None)
        self.dismiss_button.setEnabled(stale is None)
        self.check.setEnabled(stale is None)
        if stale is not None:
            self.check.setChecked(False)
            self.stale_label.setText(
                f"⚠ Changed on disk: {html.escape(stale)}. Re-run the scan to see this pair "
                "as it is now."
            )
        self.stale_label.setVisible(stale is not None)

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
