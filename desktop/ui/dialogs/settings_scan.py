"""Settings ▸ Scan: the whole-vault budget and the note types whole-vault and focus scans
leave out.

The settings dialog adds these rows to its Scan tab and passes its
:class:`ScanCaps` through :meth:`ScanBudgetFields.apply`, so each saved value
is edited in one place; :func:`desktop.flows.settings.resolve` hands them to
the window's scan and to ``antinomy scan`` alike.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import QFormLayout, QLineEdit, QSpinBox

from desktop.flows.settings import ScanCaps
from desktop.flows.settings.app import MAX_SCAN_PAIRS


def split_types(text: str) -> tuple[str, ...]:
    """``"source, debug"`` → ``("source", "debug")``."""
    return tuple(t.strip() for t in text.split(",") if t.strip())


class ScanBudgetFields:
    """The two rows, on the Scan tab's form."""

    def __init__(self, caps: ScanCaps, form: QFormLayout) -> None:
        self.max_pairs = QSpinBox()
        self.max_pairs.setRange(1, MAX_SCAN_PAIRS)
        self.max_pairs.setSingleStep(100)
        self.max_pairs.setValue(caps.max_pairs)
        self.max_pairs.setToolTip(
            "A whole-vault scan judges at most this many candidate note pairs (nearest "
            "first); notes beyond it are named in the scan's message. Same as "
            "`antinomy scan --whole-vault --max-pairs N` for one run."
        )
        self.skip_types = QLineEdit(", ".join(caps.skip_types))
        self.skip_types.setPlaceholderText("none: every note type is scanned")
        self.skip_types.setToolTip(
            "Note types (the `type:` of a note's frontmatter) whole-vault and focus scans "
            "never compare, separated by commas. The classic scan reads only the types "
            "named above."
        )
        form.addRow("Note pairs per whole-vault scan", self.max_pairs)
        form.addRow("Note types whole-vault and focus scans leave out", self.skip_types)

    def apply(self, caps: ScanCaps) -> ScanCaps:
        """``caps`` with these fields' values (raises SettingsInvalid for a bad one)."""
        return replace(
            caps, max_pairs=self.max_pairs.value(), skip_types=split_types(self.skip_types.text())
        )


def raised_budget(caps: ScanCaps) -> ScanCaps:
    """``caps`` with the whole-vault budget doubled, within what the settings take."""
    return replace(caps, max_pairs=min(MAX_SCAN_PAIRS, caps.max_pairs * 2))
