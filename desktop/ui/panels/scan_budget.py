"""The offer under a whole-vault scan that left notes out "beyond the run's budget":
raise the budget (Settings ▸ Scan, saved) and scan again, in one click."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from desktop.flows.hunter import ScanRun
from desktop.flows.progress import plural
from desktop.flows.settings import SettingsInvalid
from desktop.flows.settings.app import MAX_SCAN_PAIRS
from desktop.ui.controller import AppController
from desktop.ui.dialogs.settings_scan import raised_budget

#: How the scan words a note it left out for the budget (:mod:`desktop.flows.hunter.select`).
OVER_BUDGET = "beyond the run's budget"


def notes_over_budget(run: ScanRun) -> int:
    return sum(e.reason.startswith(OVER_BUDGET) for e in run.excluded)


class QtBudgetOffer(QWidget):
    sig_budget_raised = Signal(int)
    """The saved budget was raised and a whole-vault scan asked for: ``(new budget)``."""

    def __init__(self, controller: AppController) -> None:
        super().__init__()
        self._c = controller
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.button = QPushButton()
        self.button.clicked.connect(self.raise_and_rescan)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.text, 1)
        row.addWidget(self.button)
        self.hide()

    def show_for(self, run: ScanRun | None) -> None:
        """Offer more budget when ``run`` left notes out for want of it."""
        over = notes_over_budget(run) if run is not None and run.mode == "whole-vault" else 0
        budget = self._c.settings.scan.max_pairs
        if not over or budget >= MAX_SCAN_PAIRS:
            self.hide()
            return
        new = raised_budget(self._c.settings.scan).max_pairs
        self.text.setText(
            f"{plural(over, 'note')} had candidate pairs beyond the run's budget of "
            f"{plural(budget, 'pair')}. A larger budget compares them too, and takes longer."
        )
        self.button.setText(f"Raise the budget to {new} pairs and scan again")
        self.show()

    def raise_and_rescan(self) -> None:
        """Save the raised budget (Settings ▸ Scan), then ask for a new whole-vault scan."""
        settings = self._c.settings
        try:
            scan = raised_budget(settings.scan)
        except SettingsInvalid as exc:
            self._c.sig_error.emit("Raising the scan budget", str(exc))
            return
        self._c.update_settings(replace(settings, scan=scan))
        self.hide()
        self.sig_budget_raised.emit(scan.max_pairs)
