"""After switching vaults nothing on screen belongs to the previous one: the Memory
report, the Guard settings, the status bar's count, the restored scan (the newest on disk)."""

from __future__ import annotations

from pathlib import Path

from desktop.flows.guard import GuardSettings, load_guard_settings, save_guard_settings
from desktop.flows.hunter.records import ScanRun, save_last_run
from desktop.flows.memory.consolidate import Report, save_report
from desktop.resources import ensure_sample_vault
from desktop.ui.panels.guard import QtGuardPanel
from desktop.ui.panels.memory import QtMemoryPanel
from desktop.ui.panels.tensions import QtTensionsPanel


def _run(when: str, model: str) -> ScanRun:
    return ScanRun(started_at=when, mode="classic", status="ok", model=model, backend="fake")


def test_switching_vaults_leaves_nothing_of_the_old_one(
    qtbot, make_window, vault: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    save_report(vault, Report("ok", message="consolidated in the first vault"))
    save_last_run(vault, _run("2026-01-01T10:00:00+00:00", "first-vault-model"))
    save_guard_settings(vault, GuardSettings(enabled=True, mode="ask", judge_threshold=0.8))
    other = ensure_sample_vault(tmp_path / "other")
    for p in list((other / "Inbox").glob("*.md"))[:3]:
        p.unlink()

    window = make_window()
    memory, guard, tensions = (window.panel(k) for k in ("memory", "guard", "tensions"))
    assert isinstance(memory, QtMemoryPanel) and isinstance(guard, QtGuardPanel)
    assert isinstance(tensions, QtTensionsPanel)
    qtbot.waitUntil(lambda: memory.report is not None, timeout=10000)
    qtbot.waitUntil(lambda: guard.enabled.isChecked(), timeout=10000)
    qtbot.waitUntil(lambda: tensions.run is not None, timeout=10000)
    assert "first-vault-model" in tensions.meta.text()
    first_count = window.status.coverage.text()

    c = window.controller
    with qtbot.waitSignal(guard.sig_guard_settings_shown, timeout=10000):
        c.open_vault(other)
        # At once, before anything of the new vault is read: the old values are gone.
        assert memory.report is None and memory.report_text.text() == "No consolidation yet."
        assert guard.settings is None and not guard.enabled.isEnabled()
        assert tensions.run is None and "No scan yet" in tensions.empty.text()
    assert not guard.enabled.isChecked() and guard.judge_threshold.text() == "calibrated"
    assert c.last_report is None  # the first vault's count is not this one's
    qtbot.waitUntil(
        lambda: c.last_report is not None and c.index is not None and c.index.root == other,
        timeout=20000,
    )
    qtbot.waitUntil(lambda: window.status.coverage.text() == c.last_report.summary(), timeout=5000)  # type: ignore[union-attr]
    assert window.status.coverage.text() != first_count
    assert str(other) in window.status.vault.text()
    assert memory.report is None and tensions.run is None
    # Editing the guard now writes this vault's settings, never the first one's.
    with qtbot.waitSignal(guard.sig_guard_settings_saved, timeout=5000):
        guard.principles.setChecked(True)
    assert load_guard_settings(other).include_principles and not load_guard_settings(other).enabled
    assert load_guard_settings(vault).enabled and not load_guard_settings(vault).include_principles

    # Another process scans this vault: the panel shows that run, the newest on disk.
    save_last_run(other, _run("2026-02-01T10:00:00+00:00", "cli-model"))
    tensions.check_newer_run()
    qtbot.waitUntil(lambda: tensions.run is not None, timeout=5000)
    assert "cli-model" in tensions.meta.text() and "restored" in tensions.meta.text()

    # Back to the first vault: its own run, report and guard again.
    c.open_vault(vault)
    qtbot.waitUntil(lambda: tensions.run is not None and memory.report is not None, timeout=10000)
    assert "first-vault-model" in tensions.meta.text()
    assert "consolidated in the first vault" in memory.report_text.text()
    qtbot.waitUntil(lambda: guard.enabled.isChecked(), timeout=10000)
    assert guard.judge_threshold.value() == 0.8
