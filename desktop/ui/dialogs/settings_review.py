"""The Review tab of Settings: where this vault's dismissals are written.

The choice belongs to the vault (``<vault>/.antinomy/review/settings.json``, the file
``antinomy dismissed --keep-in`` writes), not to the app: a vault under git or sync can
keep its notes untouched while another keeps Antinomia-compatible lists in its notes.
Both places are always read, so switching hides every pair dismissed before.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtWidgets import QCheckBox, QLabel, QVBoxLayout, QWidget

from desktop.flows.hunter.dismissals import STORE_PATH
from desktop.flows.settings import ReviewSettings, resolve_review, save_review_settings
from foundation.errors import AntinomyError

KEEP_IN_ANTINOMY = f"Keep dismissals in {STORE_PATH} — leave the notes untouched"
EXPLAIN = (
    "Off: a dismissal writes each note's name into the other's hunter_false_positives "
    "(Antinomia reads it too). On: it goes into {store} instead, for a vault under git or "
    "sync whose notes Antinomy should not touch; deleting .antinomy/ then loses those "
    "dismissals. Either way it is one transaction you can undo, and dismissals already made "
    "stay where they are: both places are always read."
)


class QtReviewSettings(QWidget):
    """The vault's review settings, read when the dialog opens and saved by :meth:`save`
    (GUI thread: one small file)."""

    def __init__(self, vault: Path | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vault = vault
        self.keep_in_antinomy = QCheckBox(KEEP_IN_ANTINOMY)
        self.note = QLabel(EXPLAIN.format(store=STORE_PATH))
        self.note.setWordWrap(True)
        self._saved: bool | None = None
        if vault is None:
            self.keep_in_antinomy.setEnabled(False)
            self.note.setText("Open a vault to choose where its dismissals are written.")
        else:
            try:
                self._saved = resolve_review(vault).keep_dismissals == "antinomy"
            except AntinomyError as exc:  # a damaged file: said here, rewritten on OK
                self.note.setText(f"{exc}\n\n{self.note.text()}")
            self.keep_in_antinomy.setChecked(bool(self._saved))
        layout = QVBoxLayout(self)
        layout.addWidget(self.keep_in_antinomy)
        layout.addWidget(self.note)
        layout.addStretch(1)

    def save(self) -> str | None:
        """Write the choice if it changed; the problem in words if it could not be."""
        chosen = self.keep_in_antinomy.isChecked()
        if self.vault is None or chosen == self._saved:
            return None
        try:
            try:
                current = resolve_review(self.vault)
            except AntinomyError:
                current = ReviewSettings()  # the damaged file is replaced
            save_review_settings(
                self.vault,
                replace(current, keep_dismissals="antinomy" if chosen else "notes"),
            )
        except (OSError, AntinomyError) as exc:
            return f"Where dismissals are kept was not saved: {exc}"
        self._saved = chosen
        return None
