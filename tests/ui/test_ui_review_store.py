"""The window with the vault's option "keep dismissals in .antinomy/": the Settings tab that
sets it, a dismissal that leaves the notes byte-identical, the Dismissed list, Undo."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.flows.hunter.dismissals import STORE_PATH
from desktop.flows.settings import ReviewSettings, Settings, resolve_review, save_review_settings
from desktop.ui.dialogs.settings_dialog import SettingsDialog
from desktop.ui.panels.dismissed import QtDismissedPanel
from desktop.ui.panels.history import QtHistoryPanel
from desktop.ui.panels.tensions import QtTensionsPanel
from tests.ui.conftest import fake_runtime
from tests.ui.scans import GOOD, A, B, scan_everything, scripted
from tests.vault_files import snapshot


def test_the_review_tab_saves_the_option_in_the_vault(qtbot, vault: Path) -> None:  # type: ignore[no-untyped-def]
    dialog = SettingsDialog(Settings(), vault=vault)
    qtbot.addWidget(dialog)
    box = dialog.review.keep_in_antinomy
    assert box.isEnabled() and not box.isChecked()
    box.setChecked(True)
    dialog.accept()
    assert dialog.result_settings is not None
    assert resolve_review(vault) == ReviewSettings(keep_dismissals="antinomy")
    again = SettingsDialog(Settings(), vault=vault)
    qtbot.addWidget(again)
    assert again.review.keep_in_antinomy.isChecked()
    again.review.keep_in_antinomy.setChecked(False)
    again.accept()
    assert resolve_review(vault) == ReviewSettings(keep_dismissals="notes")
    closed = SettingsDialog(Settings())  # no vault open: nothing to choose
    qtbot.addWidget(closed)
    assert not closed.review.keep_in_antinomy.isEnabled()
    assert "Open a vault" in closed.review.note.text()


def test_a_damaged_review_file_is_said_and_replaced_on_ok(qtbot, vault: Path) -> None:  # type: ignore[no-untyped-def]
    path = vault / ".antinomy" / "review" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"keep_dismissals": "git"}')
    dialog = SettingsDialog(Settings(), vault=vault)
    qtbot.addWidget(dialog)
    assert "review.keep_dismissals is 'git'" in dialog.review.note.text()
    dialog.review.keep_in_antinomy.setChecked(True)
    dialog.accept()
    assert resolve_review(vault).keep_dismissals == "antinomy"


def test_the_window_opens_settings_on_the_open_vault(
    qtbot, make_window, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window(fake_runtime())
    seen: list[Path | None] = []

    def look(dialog: SettingsDialog) -> int:
        seen.append(dialog.review.vault)
        return 0

    monkeypatch.setattr(SettingsDialog, "exec", look)
    window.edit_settings()
    assert seen == [window.controller.root] and seen[0] is not None


def test_a_dismissal_kept_in_antinomy_from_the_window(qtbot, make_window, vault: Path) -> None:  # type: ignore[no-untyped-def]
    save_review_settings(vault, ReviewSettings(keep_dismissals="antinomy"))
    window = make_window(fake_runtime(generator=scripted(GOOD)))
    scan_everything(window)
    t = window.panel("tensions")
    assert isinstance(t, QtTensionsPanel)
    with qtbot.waitSignal(t.sig_results_shown, timeout=15000):
        t.run_button.click()
    dismissed = window.panel("dismissed")
    assert isinstance(dismissed, QtDismissedPanel)
    qtbot.waitUntil(
        lambda: dismissed.list.count() > 0 or dismissed.count.text() != "", timeout=5000
    )
    already = dismissed.list.count()
    notes = snapshot(vault)
    with qtbot.waitSignal(t.sig_pair_removed, timeout=10000):
        t.cards[0].dismiss_button.click()
    assert snapshot(vault) == notes  # both notes byte-identical
    assert (vault / STORE_PATH).is_file()
    qtbot.waitUntil(lambda: dismissed.list.count() == already + 1, timeout=5000)
    texts = [dismissed.list.item(i).text() for i in range(dismissed.list.count())]
    assert any(text.endswith("(kept in .antinomy/)") for text in texts)
    history = window.panel("history")
    assert isinstance(history, QtHistoryPanel)
    qtbot.waitUntil(lambda: len(history.entries) == 1, timeout=5000)
    entry = history.entries[0]
    assert entry.paths == (STORE_PATH,) and entry.operation_type == "dismiss"
    history.select_operation(entry.operation_id)
    history.undo_button.click()
    qtbot.waitUntil(lambda: dismissed.list.count() == already, timeout=10000)
    qtbot.waitUntil(lambda: len(t.cards) == 1, timeout=5000)
    assert t.cards[0].pair.path_a == A and t.cards[0].pair.path_b == B
    assert snapshot(vault) == notes
