"""The whole-vault budget and the types it leaves out: Settings ▸ Scan saves them, the
window's scan and ``antinomy scan`` both run with them, and a scan that left notes out for
the budget offers to raise it and scan again."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from desktop.cli import scan_cmd
from desktop.cli.main import main
from desktop.flows.embedding import embedding_model
from desktop.flows.hunter import ScanSettings
from desktop.flows.settings import ScanCaps, Settings, SettingsInvalid, load_settings, save_settings
from desktop.ui import scanner
from desktop.ui.dialogs.settings_dialog import SettingsDialog
from desktop.ui.panels.tensions import QtTensionsPanel
from desktop.vault.index import VaultIndex
from tests.fakes import confirming_judge
from tests.ui.conftest import fake_runtime, ui_embedder
from tests.ui.scans import scripted


def recording(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[ScanSettings]:
    """Record the settings each scan of ``module`` runs with (the real scan still runs)."""
    seen: list[ScanSettings] = []
    real = module.scan

    def scan(*args: Any, settings: ScanSettings, **kwargs: Any) -> Any:
        seen.append(settings)
        return real(*args, settings=settings, **kwargs)

    monkeypatch.setattr(module, "scan", scan)
    return seen


def test_settings_dialog_edits_the_budget_and_the_types_left_out(qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    fields = dialog.scan_budget
    assert fields.max_pairs.value() == 400
    assert fields.skip_types.text() == "defeated, debug, meta_note, source"
    fields.max_pairs.setValue(1200)
    fields.skip_types.setText("source, journal")
    dialog.accept()
    assert dialog.result_settings is not None
    assert dialog.result_settings.scan.max_pairs == 1200
    assert dialog.result_settings.scan.skip_types == ("source", "journal")
    with pytest.raises(SettingsInvalid, match=r"scan\.max_pairs must be between 1 and 20000"):
        ScanCaps(max_pairs=0)


def test_window_and_cli_scans_take_the_same_saved_budget_and_types(
    qtbot, make_window, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    save_settings(replace(Settings(), scan=replace(ScanCaps(), max_pairs=7, skip_types=("log",))))
    # The window, on the saved file.
    seen_window = recording(monkeypatch, scanner)
    window = make_window(fake_runtime(generator=scripted()))
    panel = window.panel("tensions")
    assert isinstance(panel, QtTensionsPanel)
    with qtbot.waitSignal(panel.runner.sig_scan_finished, timeout=30000):
        panel.runner.start("whole-vault")
    # The command line, on the same file.
    seen_cli = recording(monkeypatch, scan_cmd)
    monkeypatch.setattr(scan_cmd, "_load_generator", lambda runtime: scripted())
    monkeypatch.setattr(scan_cmd, "_load_judge", lambda runtime: confirming_judge())
    monkeypatch.setattr(
        scan_cmd,
        "open_index",
        lambda args, **_: VaultIndex(vault, embedding=embedding_model(ui_embedder())),
    )
    assert main(["scan", "--whole-vault", "--vault", str(vault), "--json"]) == 0
    [w], [c] = seen_window, seen_cli
    assert (w.max_pairs, w.skip_types) == (c.max_pairs, c.skip_types) == (7, ("log",))
    assert w == c  # every other value too
    # A flag is one run's: it wins over the saved budget, and saves nothing.
    assert main(["scan", "--whole-vault", "--max-pairs", "3", "--vault", str(vault)]) == 0
    assert seen_cli[-1].max_pairs == 3 and load_settings().scan.max_pairs == 7


def test_a_scan_short_of_budget_offers_to_raise_it_and_scan_again(
    qtbot, make_window, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    save_settings(replace(Settings(), scan=replace(ScanCaps(), max_pairs=2)))
    seen = recording(monkeypatch, scanner)
    window = make_window(fake_runtime(generator=scripted()))
    panel = window.panel("tensions")
    assert isinstance(panel, QtTensionsPanel)
    with qtbot.waitSignal(panel.sig_results_shown, timeout=30000) as shown:
        panel.runner.start("whole-vault")
    over = [e for e in shown.args[0].excluded if e.reason.startswith("beyond the run's budget")]
    assert over
    offer = panel.budget_offer
    assert offer.isVisible()
    assert offer.text.text() == (
        f"{len(over)} notes had candidate pairs beyond the run's budget of 2 pairs. "
        "A larger budget compares them too, and takes longer."
    )
    assert offer.button.text() == "Raise the budget to 4 pairs and scan again"
    with qtbot.waitSignal(panel.sig_results_shown, timeout=30000):
        offer.button.click()
    assert load_settings().scan.max_pairs == 4
    assert window.controller.settings.scan.max_pairs == 4
    assert [s.max_pairs for s in seen] == [2, 4]


def test_each_note_types_row_says_which_scan_it_applies_to(qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    form = dialog.types.parentWidget().layout()

    def label(field: Any) -> str:
        return str(form.labelForField(field).text())

    classic, wider = label(dialog.types), label(dialog.scan_budget.skip_types)
    assert "classic" in classic and "whole-vault" not in classic
    assert "whole-vault" in wider and "focus" in wider and "classic" not in wider
    # The tooltips say how the two rows relate.
    assert "Whole-vault and focus" in dialog.types.toolTip()
    assert "classic scan reads only" in dialog.scan_budget.skip_types.toolTip()
