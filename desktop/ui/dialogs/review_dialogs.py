"""The review forms: Elevate (title, IF, THEN, grey zone) and Defeated (motive)."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)


@dataclass(frozen=True)
class ElevateForm:
    title: str
    if_clause: str
    then_clause: str
    grey_zone: str


@dataclass(frozen=True)
class DefeatForm:
    motive: str
    replaced_by: str | None


#: A normal dialog window: title bar with its title, a close button, no help button.
DIALOG_FLAGS = (
    Qt.WindowType.Dialog
    | Qt.WindowType.WindowTitleHint
    | Qt.WindowType.WindowSystemMenuHint
    | Qt.WindowType.WindowCloseButtonHint
)


class _Form(QDialog):
    def __init__(self, title: str, intro: str, parent: QWidget | None) -> None:
        # Parented to the window, not to the panel that asks: a dialog owned by a widget
        # deep in a dock is placed and decorated as that widget's child on some systems.
        super().__init__(parent.window() if parent is not None else None, DIALOG_FLAGS)
        self.setWindowTitle(title)
        # Wide enough to read, as tall as the form: a window first made zero pixels high
        # (the old ``resize(520, 0)``) is shown by some window managers without its frame.
        self.setMinimumWidth(520)
        self.form = QFormLayout()
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        label = QLabel(intro)
        label.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addLayout(self.form)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        self.adjustSize()


def _text_box(text: str = "") -> QPlainTextEdit:
    box = QPlainTextEdit(text)
    box.setTabChangesFocus(True)
    box.setFixedHeight(64)
    return box


class ElevateDialog(_Form):
    def __init__(self, tension: str, parent: QWidget | None = None) -> None:
        super().__init__(
            "Elevate tension to a principle",
            f"Create a principle from “{tension}”. The tension is marked defeated "
            "(motive: elevated) and points to the new principle — one undoable change.",
            parent,
        )
        self.title = QLineEdit()
        self.if_clause = _text_box()
        self.then_clause = _text_box()
        self.grey_zone = _text_box()
        self.form.addRow("Title", self.title)
        self.form.addRow("IF", self.if_clause)
        self.form.addRow("THEN", self.then_clause)
        self.form.addRow("Grey zone", self.grey_zone)
        self.value: ElevateForm | None = None

    def accept(self) -> None:
        value = ElevateForm(
            self.title.text().strip(),
            self.if_clause.toPlainText().strip(),
            self.then_clause.toPlainText().strip(),
            self.grey_zone.toPlainText().strip(),
        )
        missing = [
            n
            for n, v in (
                ("title", value.title),
                ("IF", value.if_clause),
                ("THEN", value.then_clause),
            )
            if not v
        ]
        if missing:
            self.problem.setText(f"Fill in the {', '.join(missing)} to elevate.")
            return
        self.value = value
        super().accept()


class DefeatDialog(_Form):
    def __init__(self, note: str, parent: QWidget | None = None) -> None:
        super().__init__(
            "Mark as defeated",
            f"Why is “{note}” defeated? The note keeps its text; its type becomes defeated.",
            parent,
        )
        self.motive = _text_box()
        self.replaced_by = QLineEdit()
        self.replaced_by.setPlaceholderText("optional: the note that replaces it")
        self.form.addRow("Motive", self.motive)
        self.form.addRow("Replaced by", self.replaced_by)
        self.value: DefeatForm | None = None

    def accept(self) -> None:
        motive = self.motive.toPlainText().strip()
        if not motive:
            self.problem.setText("Write the motive: it is kept in the note.")
            return
        self.value = DefeatForm(motive, self.replaced_by.text().strip() or None)
        super().accept()


def ask_elevate(tension: str, parent: QWidget | None) -> ElevateForm | None:
    dialog = ElevateDialog(tension, parent)
    try:
        return dialog.value if dialog.exec() else None
    finally:
        dialog.deleteLater()


def ask_defeat(note: str, parent: QWidget | None) -> DefeatForm | None:
    dialog = DefeatDialog(note, parent)
    try:
        return dialog.value if dialog.exec() else None
    finally:
        dialog.deleteLater()
