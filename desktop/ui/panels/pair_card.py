"""One pair of the results view: both notes, both quotes, the confidence badge, actions.

A pair the user's decisions hid (shown on request) says so and why; a pair the user's
server was asked about carries its answer as a badge. Besides × (dismiss), a card offers
"All like this" (dismiss it and hide every pair of the same sentence frames) and Ignore
(a sentence, a note or a folder, left out of every later scan).

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
    QMenu,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.flows.hunter import Pair
from desktop.flows.hunter.records import HIDDEN_REASONS
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


#: The user's server's answer (``Pair.second_opinion``) as a badge: (text, tooltip).
OPINION = {
    "yes": ("server: yes", "Your language-model server was asked: it says they contradict, both "
            "ways round."),
    "no": ("server: no", "Your language-model server was asked: it says they do not "
           "contradict, both ways round."),
    "split": ("server: split", "Your language-model server was asked: its answer changed with "
              "the order of the two sentences (it counted for nothing)."),
    "unusable": ("server: ?", "Your language-model server was asked, and its answer could not "
                 "be read (it counted for nothing)."),
    "failed": ("server: no answer", "Your language-model server was asked and did not answer "
               "(it counted for nothing)."),
}  # fmt: skip


def opinion_badge(pair: Pair) -> str:
    """The second-opinion badge, "" when the server was not asked about the pair."""
    if not pair.second_opinion:
        return ""
    text, _tip = OPINION.get(pair.second_opinion, (f"server: {pair.second_opinion}", ""))
    return (
        f"<span style='background:#3b6ea5; color:#ffffff;'>&nbsp;{html.escape(text)}&nbsp;</span>"
    )


def hidden_badge(pair: Pair) -> str:
    if not pair.hidden_because:
        return ""
    return (
        f"<span style='background:{MUTED}; color:#ffffff; font-weight:bold;'>&nbsp;hidden"
        "&nbsp;</span>"
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


def ignore_choices(pair: Pair) -> list[tuple[str, str, str, str]]:
    """(kind, value, note, menu text) of what a card offers to ignore."""

    def short(quote: str) -> str:
        return quote if len(quote) <= 60 else quote[:59] + "…"

    out = [
        ("sentence", pair.quote_a, pair.path_a, f"Ignore this sentence of {pair.note_a}: "
         f"“{short(pair.quote_a)}”"),
        ("sentence", pair.quote_b, pair.path_b, f"Ignore this sentence of {pair.note_b}: "
         f"“{short(pair.quote_b)}”"),
        ("note", pair.path_a, pair.path_a, f"Ignore the note {pair.note_a}"),
        ("note", pair.path_b, pair.path_b, f"Ignore the note {pair.note_b}"),
    ]  # fmt: skip
    for path in dict.fromkeys((pair.path_a, pair.path_b)):
        folder = folder_of(path).rstrip("/")
        if folder and not any(c[0] == "folder" and c[1] == folder for c in out):
            out.append(("folder", folder, path, f"Ignore the folder {folder}/"))
    return out


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
    sig_dismiss_like_clicked = Signal(object)
    """All like this was clicked: ``(Pair)``."""
    sig_ignore_clicked = Signal(str, str, str)
    """Ignore was chosen: ``(kind: sentence | note | folder, value, the note it is from)``."""
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
        badges = "&nbsp;".join(b for b in (hidden_badge(pair), badge_html(pair)) if b)
        opinion = opinion_badge(pair)
        self.title = QLabel(
            f"{badges}&nbsp; <a href='a'>{html.escape(pair.note_a)}</a>"
            f" &nbsp;↔&nbsp; <a href='b'>{html.escape(pair.note_b)}</a>"
            + (f"&nbsp; {opinion}" if opinion else "")
        )
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.title.linkActivated.connect(self._link)
        tips = []
        if pair.confidence_defaulted:
            tips.append("The model gave no confidence: shown and sorted as medium.")
        if pair.second_opinion:
            tips.append(OPINION.get(pair.second_opinion, ("", pair.second_opinion))[1])
        self.title.setToolTip("\n".join(tips))
        head.addWidget(self.title, 1)
        self.like_button = QPushButton("All like this")
        self.like_button.setToolTip(
            "Dismiss this pair and hide every pair whose two sentences say the same with other "
            "names or numbers, in every later scan (Undo takes both back)."
        )
        self.like_button.clicked.connect(lambda: self.sig_dismiss_like_clicked.emit(self.pair))
        head.addWidget(self.like_button, 0, Qt.AlignmentFlag.AlignTop)
        self.ignore_button = QToolButton()
        self.ignore_button.setText("Ignore")
        self.ignore_button.setToolTip("Leave a sentence, a note or a folder out of later scans")
        self.ignore_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.ignore_menu = QMenu(self.ignore_button)
        for kind, value, note, text in ignore_choices(pair):
            action = self.ignore_menu.addAction(text.replace("&", "&&"))  # no mnemonic
            action.setData((kind, value, note))
            action.triggered.connect(partial(self.sig_ignore_clicked.emit, kind, value, note))
        self.ignore_button.setMenu(self.ignore_menu)
        head.addWidget(self.ignore_button, 0, Qt.AlignmentFlag.AlignTop)
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
        self.hidden_label = QLabel()
        self.hidden_label.setWordWrap(True)
        if pair.hidden_because:
            why = HIDDEN_REASONS.get(pair.hidden_because, pair.hidden_because)
            self.hidden_label.setText(
                f"<span style='color:{MUTED};'>Hidden: {html.escape(why)}.</span>"
            )
        self.hidden_label.setVisible(bool(pair.hidden_because))
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(self.hidden_label)
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
        self.like_button.setEnabled(stale is None)
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
