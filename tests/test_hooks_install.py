"""``antinomy hooks install|uninstall|status`` and ``antinomy guard enable|disable|status``."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from desktop.cli import exits
from desktop.cli.main import main
from desktop.flows.guard import GuardSwitch, load_guard_settings, load_projects
from desktop.resources import sample_vault_source

EXISTING_CLAUDE = {
    "permissions": {"allow": ["Bash(npm test:*)"]},
    "model": "opus",
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint-guard.sh"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
    },
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "ledgerline"
    (folder / ".claude").mkdir(parents=True)
    (folder / ".claude" / "settings.json").write_text(json.dumps(EXISTING_CLAUDE, indent=4))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return folder


def read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def commands(data: dict[str, Any], event: str) -> list[str]:
    return [h["command"] for g in data.get("hooks", {}).get(event, []) for h in g["hooks"]]


def test_install_merges_and_keeps_everything_else(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = (project / ".claude" / "settings.json").read_text()
    assert main(["hooks", "install", "--project", str(project), "--mode", "ask"]) == exits.OK
    claude = read(project / ".claude" / "settings.json")
    assert claude["permissions"] == EXISTING_CLAUDE["permissions"] and claude["model"] == "opus"
    assert commands(claude, "Stop") == ["say done"]
    pre = claude["hooks"]["PreToolUse"]
    assert pre[0] == EXISTING_CLAUDE["hooks"]["PreToolUse"][0]  # theirs first, untouched
    assert pre[1]["matcher"] == "Write|Edit|MultiEdit|Bash"
    ours = shlex.split(pre[1]["hooks"][0]["command"])
    assert ours[3] == "pretooluse" and ours[-2:] == ["--mode", "ask"]
    assert ours[:2] == [sys.executable, "-S"] and ours[2].endswith("hook.py")
    assert ours[4:6] == ["--home", os.environ["ANTINOMY_HOME"]]  # the tests relocate it
    starts = claude["hooks"]["SessionStart"][-1]["hooks"][0]
    assert starts["timeout"] == 30  # sessionstart waits up to 20 s for the endpoint
    assert "sessionstart" in commands(claude, "SessionStart")[0]
    assert "userpromptsubmit" in commands(claude, "UserPromptSubmit")[0]
    backup = project / ".claude" / "settings.json.antinomy-backup"
    assert backup.read_text() == original
    codex = read(project / ".codex" / "hooks.json")
    assert codex["hooks"]["PreToolUse"][0]["matcher"] == "Bash|apply_patch"
    assert codex["hooks"]["SessionStart"][0]["matcher"] == "startup|resume"
    # Installing the hooks in a project turns the guard on for that folder.
    assert GuardSwitch(project).activation(str(project / "src")).active
    out = capsys.readouterr().out
    assert f"installed claude hooks in {project / '.claude' / 'settings.json'}" in out


def test_install_twice_keeps_one_copy(project: Path) -> None:
    for _ in range(2):
        assert main(["hooks", "install", "--project", str(project)]) == exits.OK
    claude = read(project / ".claude" / "settings.json")
    assert len(commands(claude, "PreToolUse")) == 2  # theirs + one of ours
    assert len(commands(read(project / ".codex" / "hooks.json"), "PreToolUse")) == 1


def test_uninstall_removes_only_ours(project: Path) -> None:
    main(["hooks", "install", "--project", str(project)])
    assert main(["hooks", "uninstall", "--project", str(project)]) == exits.OK
    assert read(project / ".claude" / "settings.json") == EXISTING_CLAUDE
    assert read(project / ".codex" / "hooks.json") == {}
    assert str(project.resolve()) not in load_projects()


def test_user_scope_writes_home_files(project: Path, tmp_path: Path) -> None:
    assert main(["hooks", "install", "--user", "--agent", "claude"]) == exits.OK
    user = read(tmp_path / "home" / ".claude" / "settings.json")
    assert "pretooluse" in commands(user, "PreToolUse")[0]
    assert not (tmp_path / "home" / ".codex").exists()
    assert load_projects() == {}  # --user turns no project on


def test_status_lists_our_entries(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTINOMY_PORT", "9")  # nothing listens there
    main(["hooks", "install", "--project", str(project), "--agent", "claude"])
    capsys.readouterr()
    assert main(["hooks", "status", "--project", str(project), "--json"]) == exits.OK
    report = json.loads(capsys.readouterr().out)
    claude = report["files"][0]
    assert claude["agent"] == "claude"
    assert {e["event"] for e in claude["entries"]} == {
        "PreToolUse",
        "SessionStart",
        "UserPromptSubmit",
    }
    assert report["files"][1]["entries"] == []
    assert report["endpoint"]["up"] is False


def test_a_settings_file_that_is_not_json_is_left_alone(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = project / ".claude" / "settings.json"
    path.write_text("{ not json")
    assert main(["hooks", "install", "--project", str(project)]) == exits.FAILURE
    err = capsys.readouterr().err
    assert f"{path} is not valid JSON" in err and "nothing was changed" in err
    assert path.read_text() == "{ not json"


def test_guard_enable_disable_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(sample_vault_source(), vault)
    assert main(["guard", "enable", "--vault", str(vault), "--threshold", "0.6"]) == exits.OK
    settings = load_guard_settings(vault)
    assert settings.enabled and settings.threshold == 0.6 and settings.mode == "warn"
    assert main(["guard", "disable", "--vault", str(vault)]) == exits.OK
    assert not load_guard_settings(vault).enabled and load_guard_settings(vault).threshold == 0.6
    capsys.readouterr()
    assert main(["guard", "status", "--vault", str(vault), "--json"]) == exits.OK
    assert json.loads(capsys.readouterr().out)["enabled"] is False


def test_guard_threshold_out_of_range_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    assert main(["guard", "enable", "--vault", str(vault), "--threshold", "3"]) == exits.FAILURE
    assert "Guard threshold 3.0 is out of range" in capsys.readouterr().err


def test_the_installed_command_runs_and_fails_open(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command written into settings.json really starts the client (python -S, no site)."""
    import subprocess

    from desktop.service.security import load_or_create_token

    load_or_create_token()
    main(["hooks", "install", "--project", str(project), "--agent", "claude"])
    command = commands(read(project / ".claude" / "settings.json"), "PreToolUse")[1]
    payload = (
        Path(__file__).parent / "data" / "hooks" / "claude_bash_contradicts.json"
    ).read_text()
    monkeypatch.setenv("ANTINOMY_PORT", "9")  # nothing listens there
    monkeypatch.delenv("PYTHONPATH", raising=False)  # the agent's environment has none
    result = subprocess.run(
        shlex.split(command), input=payload, capture_output=True, text=True, cwd=project
    )
    assert result.returncode == 0 and result.stdout == ""
    assert result.stderr == "antinomy-hook: endpoint not running on 127.0.0.1:9; tool allowed\n"


def test_installed_commands_find_a_relocated_home_without_the_environment(
    project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import subprocess

    home = tmp_path / "relocated"
    monkeypatch.setenv("ANTINOMY_HOME", str(home))
    main(["hooks", "install", "--project", str(project), "--agent", "claude"])
    command = commands(read(project / ".claude" / "settings.json"), "PreToolUse")[1]
    env = {k: v for k, v in os.environ.items() if k not in ("ANTINOMY_HOME", "PYTHONPATH")}
    env["ANTINOMY_PORT"] = "9"
    env["HOME"] = str(tmp_path / "elsewhere")  # the default home has no token either
    payload = (
        Path(__file__).parent / "data" / "hooks" / "claude_bash_contradicts.json"
    ).read_text()
    result = subprocess.run(
        shlex.split(command), input=payload, capture_output=True, text=True, env=env
    )
    # No token in the relocated home yet: the client looked there, not in ~/.config.
    assert result.returncode == 0 and result.stdout == ""
    assert f"no endpoint token at {home / 'config' / 'endpoint-token'}" in result.stderr


def test_the_command_line_says_the_judges_threshold_as_the_panel_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`guard enable` and `guard status` said "threshold 0.55" (the cosine fallback) while
    the Guard panel said the judge's calibrated 0.90."""
    from desktop.cli.main import main
    from desktop.flows.guard import GuardSettings, judge_threshold
    from inference.engines import RuntimeSettings

    vault = tmp_path / "vault"
    vault.mkdir()
    assert main(["guard", "enable", "--vault", str(vault)]) == 0
    assert "warns from judge 0.90 (calibrated); cosine 0.55 without a judge" in (
        capsys.readouterr().out
    )
    assert main(["guard", "status", "--vault", str(vault), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["judge_threshold"] == 0.9 and status["judge_threshold_source"] == "calibrated"
    own = judge_threshold(GuardSettings(judge_threshold=0.7), RuntimeSettings())
    assert own == (0.7, "this vault's")
