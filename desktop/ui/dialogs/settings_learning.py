"""Settings ▸ Learning: what this vault's scans learned and leave out, and the second opinion.

Lists the sentence frames hidden with "dismiss all like this" and what the user asked the
scan to ignore, each removable at once (they are the vault's ``.antinomy/`` state, not
settings: OK and Cancel do not apply to them), and "Reset what was learned". The second
opinion is a saved setting (``scan.second_opinion``, off by default): turning it on with a
server that is not on this machine asks first, with the words the command line prints.

The lists are small JSON files read and edited under their lock on this thread; a list
that cannot be read or changed is said under it, inline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.flows import review
from desktop.flows.hunter.ignored import IgnoredItem, IgnoreStore
from desktop.flows.hunter.labels import HiddenFrame, LabelStore
from desktop.flows.hunter.opinion import OFF_MACHINE
from desktop.flows.settings import Settings
from desktop.ui.operations.learning import describe
from desktop.vault.errors import VaultError
from foundation.errors import AntinomyError

_TROUBLE = (AntinomyError, OSError, ValueError)


def confirm_second_opinion(parent: QWidget | None, settings: Settings, before: Settings) -> bool:
    """Ask before the scan sends sentences to a server elsewhere (the second opinion turned
    on, or its server changed, since ``before``); True when it may."""
    backend = settings.backend
    if not settings.scan.second_opinion or not backend.leaves_machine:
        return True
    if before.scan.second_opinion and before.backend == backend:
        return True  # agreed to already
    text = OFF_MACHINE.format(url=backend.base_url)
    answer = QMessageBox.warning(
        parent,
        "The second opinion sends sentences off this machine",
        text[:1].upper() + text[1:] + " Use it only if you trust that server with your notes.",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.No,
    )
    return answer == QMessageBox.StandardButton.Yes


def _list_box(title: str, button: str) -> tuple[QGroupBox, QListWidget, QPushButton, QLabel]:
    box = QGroupBox(title)
    items = QListWidget()
    items.setMaximumHeight(120)
    items.setWordWrap(True)  # long sentences wrap: no sideways scrolling
    items.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    remove = QPushButton(button)
    remove.setEnabled(False)
    items.itemSelectionChanged.connect(lambda: remove.setEnabled(bool(items.selectedItems())))
    note = QLabel()
    note.setWordWrap(True)
    layout = QVBoxLayout(box)
    layout.addWidget(items)
    row = QHBoxLayout()
    row.addWidget(note, 1)
    row.addWidget(remove)
    layout.addLayout(row)
    return box, items, remove, note


class QtLearningSettings(QWidget):
    """The Learning tab of the Settings dialog, over the vault ``vault`` (None: none open)."""

    def __init__(self, settings: Settings, vault: Path | None) -> None:
        super().__init__()
        self.vault = vault
        self.second_opinion = QCheckBox(
            "Ask my language-model server about each pair before it is shown (second opinion)"
        )
        self.second_opinion.setChecked(settings.scan.second_opinion)
        self.second_opinion.setToolTip(
            "Needs an OpenAI-compatible server as the backend (Models tab). Its yes or no, asked "
            "both ways round, is one more input of the decision; it can hide a pair, never "
            "show one. Cards it was asked about carry its answer."
        )
        hint = QLabel(
            "Off by default. Needs an OpenAI-compatible server as the backend (Models tab); "
            "cards it was asked about show its answer."
        )
        hint.setWordWrap(True)
        opinion = QGroupBox("Second opinion")
        opinion_layout = QVBoxLayout(opinion)
        opinion_layout.addWidget(self.second_opinion)
        opinion_layout.addWidget(hint)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        frames, self.frames, self.unhide, self.frames_note = _list_box(
            "Pairs hidden like one you dismissed “all like this”", "Show them again"
        )
        ignored, self.ignored, self.unignore, self.ignored_note = _list_box(
            "Left out of every scan (Ignore on a pair's card)", "Stop ignoring"
        )
        self.reset = QPushButton("Reset what was learned…")
        self.reset.setToolTip(
            "Back to the shipped calibration: your decisions so far are set aside (the notes "
            "keep your dismissals) and the hidden frames are shown again."
        )
        self.unhide.clicked.connect(self._unhide)
        self.unignore.clicked.connect(self._unignore)
        self.reset.clicked.connect(self._reset)
        self.status = QLabel()
        self.status.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(opinion)
        layout.addWidget(self.summary)
        layout.addWidget(frames)
        layout.addWidget(ignored)
        row = QHBoxLayout()
        row.addWidget(self.status, 1)
        row.addWidget(self.reset)
        layout.addLayout(row)
        layout.addStretch(1)
        self.load()

    def applied(self, settings: Settings) -> Settings:
        """``settings`` with the second opinion as the box says."""
        return replace(
            settings, scan=replace(settings.scan, second_opinion=self.second_opinion.isChecked())
        )

    # ------------------------------------------------------------------ the lists

    def load(self) -> None:
        """Read the vault's lists again."""
        self.frames.clear()
        self.ignored.clear()
        for widget in (self.frames, self.ignored, self.reset):
            widget.setEnabled(self.vault is not None)
        if self.vault is None:
            self.summary.setText("Open a vault to see what its scans learned and leave out.")
            return
        self._load_frames(self.vault)
        self._load_ignored(self.vault)

    def _load_frames(self, root: Path) -> None:
        store = LabelStore(root)
        if not store.exists():  # nothing kept yet (the decisions are only in the notes)
            self.summary.setText(
                "No decision kept yet: dismiss, elevate, resolve or defeat pairs a scan shows."
            )
            self.frames_note.setText("None.")
            return
        try:
            learned = store.read()
        except (*_TROUBLE, VaultError) as exc:
            self.summary.setText(f"⚠ What was learned cannot be read: {exc}")
            return
        self.summary.setText(
            f"{len(learned.active())} of your decisions kept for this vault's calibration."
        )
        for frame in learned.frames:
            self.frames.addItem(_frame_item(frame))
        self.frames_note.setText("" if learned.frames else "None.")

    def _load_ignored(self, root: Path) -> None:
        try:
            items = IgnoreStore(root).read().items
        except (*_TROUBLE, VaultError) as exc:
            self.ignored_note.setText(f"⚠ The list cannot be read: {exc}")
            return
        for item in items:
            row = QListWidgetItem(describe(item))
            row.setData(Qt.ItemDataRole.UserRole, item)
            row.setToolTip(item.value)
            self.ignored.addItem(row)
        self.ignored_note.setText("" if items else "Nothing is ignored.")

    def _selected(self, widget: QListWidget) -> object | None:
        items = widget.selectedItems()
        return items[0].data(Qt.ItemDataRole.UserRole) if items else None

    def _do(self, what: Callable[[Path], str]) -> None:
        if self.vault is None:
            return
        try:
            self.status.setText(what(self.vault))
        except (*_TROUBLE, VaultError) as exc:
            self.status.setText(f"⚠ {exc}")
        self.load()

    def _unhide(self) -> None:
        frame = self._selected(self.frames)
        if isinstance(frame, HiddenFrame):
            self._do(
                lambda root: (
                    f"Pairs like “{review.unhide_frame(root, frame.key).quote_a}” are shown "
                    "again by the next scan (the pair's own dismissal stays)."
                )
            )

    def _unignore(self) -> None:
        item = self._selected(self.ignored)
        if isinstance(item, IgnoredItem):
            self._do(
                lambda root: (
                    "No longer ignored: "
                    f"{describe(review.remove_ignored(root, f'{item.kind}:{item.value}'))}."
                )
            )

    def _reset(self) -> None:
        answer = QMessageBox.question(
            self,
            "Reset what was learned",
            "Go back to the shipped calibration? Your decisions so far are set aside (the notes "
            "keep your dismissals, and their pairs stay hidden) and the hidden frames are shown "
            "again. What you asked to ignore stays ignored.",
        )
        if answer != QMessageBox.StandardButton.Yes:
            return

        def reset(root: Path) -> str:
            decisions, frames = review.reset_learning(root)
            return (
                f"Back to the shipped calibration: {decisions} decision(s) set aside, {frames} "
                "hidden frame(s) shown again."
            )

        self._do(reset)


def _short(quote: str, n: int = 60) -> str:
    return quote if len(quote) <= n else quote[: n - 1] + "…"


def _frame_item(frame: HiddenFrame) -> QListWidgetItem:
    item = QListWidgetItem(
        f"“{_short(frame.quote_a)}”  ⟂  “{_short(frame.quote_b)}” "
        f"({Path(frame.path_a).stem} ↔ {Path(frame.path_b).stem})"
    )
    item.setData(Qt.ItemDataRole.UserRole, frame)
    item.setToolTip(
        f"Every pair whose two sentences read as:\n{frame.key}\n(dismissed from "
        f"{Path(frame.path_a).stem} ↔ {Path(frame.path_b).stem})"
    )
    return item
