"""The ``antinomy`` launcher: arguments → CLI; none → GUI; no display → headless scan."""

from __future__ import annotations

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

    opened: list[bool] = []
    monkeypatch.setattr(app, "run_app", lambda: opened.append(True) or 0)
    assert launcher.main([]) == 0 and opened == [True]
