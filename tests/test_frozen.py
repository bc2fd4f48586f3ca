"""What changes when Antinomy runs from the PyInstaller bundle (``sys.frozen``)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from desktop.cli.main import main
from desktop.service.hook_install import hook_executable, is_ours


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    exe = str(tmp_path / "bundle" / "antinomy")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", exe)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return exe


def test_hooks_call_the_bundle_itself(frozen: str, tmp_path: Path) -> None:
    assert hook_executable() == [frozen, "hook"]
    project = tmp_path / "project"
    project.mkdir()
    assert main(["hooks", "install", "--project", str(project), "--agent", "claude"]) == 0
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    entries = [h for g in settings["hooks"]["PreToolUse"] for h in g["hooks"]]
    assert len(entries) == 1 and is_ours(entries[0])
    assert shlex.split(entries[0]["command"])[:3] == [frozen, "hook", "pretooluse"]
    # And uninstall recognises them as ours.
    assert main(["hooks", "uninstall", "--project", str(project), "--agent", "claude"]) == 0
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert not settings.get("hooks", {}).get("PreToolUse")


def test_not_frozen_keeps_the_interpreter_and_the_client_file() -> None:
    command = hook_executable()
    assert command[0] == sys.executable and command[1] == "-S"
    assert command[2].endswith("hook.py")


def test_the_bundle_entry_routes_hook_to_the_client(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "packaging"))
    try:
        import antinomy_main
    finally:
        sys.path.pop(0)
    seen: list[list[str]] = []
    monkeypatch.setattr("desktop.service.hook.main", lambda argv: seen.append(argv) or 0)
    assert antinomy_main.run(["hook", "pretooluse", "--budget-ms", "50"]) == 0
    assert seen == [["pretooluse", "--budget-ms", "50"]]
    # Anything else is the usual launcher: the command line here.
    with pytest.raises(SystemExit) as info:
        antinomy_main.run(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith("antinomy ")
