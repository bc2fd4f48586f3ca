"""The ``antinomy`` launcher: arguments → CLI; none → GUI; no display → headless scan."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.cli import main as cli_main_module
from desktop.ui import launcher


def test_arguments_run_the_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []
    monkeypatch.setattr(cli_main_module, "main", lambda argv: seen.append(list(argv)) or 0)
    assert launcher.main(["models"]) == 0
    assert seen == [["models"]]


def test_no_display_says_so_and_runs_the_headless_scan(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for var in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(launcher.sys, "platform", "linux")
    seen: list[list[str]] = []
    monkeypatch.setattr(cli_main_module, "main", lambda argv: seen.append(list(argv)) or 0)
    assert launcher.main([]) == 0
    assert seen == [["scan", "--whole-vault"]]
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [launcher.NO_DISPLAY]


def test_a_display_opens_the_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISPLAY", ":0")
    from desktop.ui import app

    opened: list[object] = []
    monkeypatch.setattr(app, "run_app", lambda vault=None: opened.append(vault) or 0)
    monkeypatch.delenv("ANTINOMY_VAULT", raising=False)
    assert launcher.main([]) == 0 and opened == [None]


def test_vault_and_antinomy_vault_open_that_vault_in_the_window(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As for every command: ``antinomy --vault DIR`` and ``$ANTINOMY_VAULT`` choose the
    vault the window opens (it opened the last one whatever they said)."""
    monkeypatch.setenv("DISPLAY", ":0")
    from desktop.ui import app

    opened: list[object] = []
    monkeypatch.setattr(app, "run_app", lambda vault=None: opened.append(vault) or 0)
    notes = tmp_path / "Notes"
    notes.mkdir()
    assert launcher.main(["--vault", str(notes)]) == 0
    monkeypatch.setenv("ANTINOMY_VAULT", str(notes))
    assert launcher.main([]) == 0
    assert opened == [notes.resolve(), notes.resolve()]
    assert launcher.main(["--vault", str(tmp_path / "nope")]) == 2
    assert "no vault folder at" in capsys.readouterr().err
    # Without a display, the headless scan runs on that vault.
    for var in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(launcher.sys, "platform", "linux")
    seen: list[list[str]] = []
    monkeypatch.setattr(cli_main_module, "main", lambda argv: seen.append(list(argv)) or 0)
    assert launcher.main(["--vault", str(notes)]) == 0
    assert seen == [["scan", "--whole-vault", "--vault", str(notes)]]
