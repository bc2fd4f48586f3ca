"""The Guard panel and the app's endpoint: a real server on a free loopback port,
a scripted engine, real guard checks over HTTP."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog

from desktop.flows.guard import load_guard_settings, load_projects
from desktop.flows.settings import EndpointSettings, Settings, save_settings
from desktop.service.security import load_or_create_token
from desktop.service.server import endpoint_file
from desktop.ui.panels.guard import QtGuardPanel
from tests.service_util import call

FRIDAY = "Friday release window. Production releases go out every Friday between 14:00 and 16:00."


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def use_port(port: int) -> None:
    """The app's settings (read when the window is built) name this endpoint port."""
    save_settings(replace(Settings(), endpoint=EndpointSettings(port=port)))


@pytest.fixture
def port() -> int:
    p = free_port()
    use_port(p)
    return p


@pytest.fixture
def blocker() -> Iterator[socket.socket]:
    """A listening socket on a port the app is told to use: the port is taken."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    use_port(s.getsockname()[1])
    yield s
    s.close()


def guard_panel(window) -> QtGuardPanel:  # type: ignore[no-untyped-def]
    panel = window.panel("guard")
    assert isinstance(panel, QtGuardPanel)
    return panel


def wait_up(qtbot, panel: QtGuardPanel) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: panel.endpoint.state in ("up", "failed"), timeout=15000)
    assert panel.endpoint.state == "up", panel.endpoint.problem


def check(port: int, summary: str, **extra: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    token = load_or_create_token()
    body = {"summary": summary, "session_id": "s-1", "cwd": "/tmp", "tool_name": "Bash", **extra}
    return call(port, "POST", "/v1/guard/check", body, token=token)


def test_panel_shows_the_endpoint_up_with_its_address(qtbot, make_window, port: int) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    panel = guard_panel(window)
    wait_up(qtbot, panel)
    assert f"http://127.0.0.1:{port}" in panel.endpoint_state.text()
    assert "Up" in panel.endpoint_state.text()
    assert window.status.endpoint.text() == f"endpoint: up :{port}"
    assert panel.stop_button.isEnabled() and panel.start_button.text() == "Restart"
    status, body = call(port, "GET", "/healthz", token=None)
    assert status == 200 and body["status"] == "ok" and body["vault"] is True
    # Same code as `antinomy serve`: the hook client finds it through endpoint.json,
    # and the memory routes are there.
    assert json.loads(endpoint_file().read_text())["port"] == port
    assert panel.endpoint.handle is not None
    assert {"/v1/guard/check", "/v1/recall", "/v1/capture", "/v1/embeddings"} <= set(
        panel.endpoint.handle.routes.paths()
    )


def test_enabling_the_guard_then_a_real_check_reaches_the_live_log(
    qtbot, make_window, vault: Path, port: int
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    panel = guard_panel(window)
    wait_up(qtbot, panel)
    qtbot.waitUntil(lambda: panel.enabled.isEnabled(), timeout=5000)
    assert not load_guard_settings(vault).enabled  # off by default
    # Off: the check is answered "off" and still logged.
    with qtbot.waitSignal(panel.sig_guard_check_shown, timeout=10000) as shown:
        status, body = check(port, FRIDAY)
    assert status == 200 and body["verdict"] == "off"
    assert shown.args[0].verdict == "off"
    # Turn it on from the panel, in ask mode: written where `antinomy guard` keeps it.
    with qtbot.waitSignal(panel.sig_guard_settings_saved, timeout=5000):
        panel.enabled.setChecked(True)
        panel.mode.setCurrentIndex(panel.mode.findData("ask"))
    saved = load_guard_settings(vault)
    assert saved.enabled and saved.mode == "ask"
    service = panel.endpoint.handle.guard if panel.endpoint.handle else None
    assert service is not None
    qtbot.waitUntil(service.ready.is_set, timeout=15000)
    with qtbot.waitSignal(panel.sig_guard_check_shown, timeout=10000) as shown:
        status, body = check(port, FRIDAY)
    assert status == 200, body
    assert body["verdict"] == "ask" and body["decision"]["id"] == "ADR-0011"
    assert body["output"]["hookSpecificOutput"]["permissionDecision"] == "ask"
    record = shown.args[0]
    assert record.verdict == "ask" and record.tool == "Bash"
    top = panel.log.topLevelItem(0)
    assert top is not None
    cells = [top.text(i) for i in range(6)]
    assert cells[1] == "Bash" and cells[2] == "Friday release window" and cells[4] == "ask"
    assert float(cells[3]) >= saved.threshold and cells[5].endswith(" ms")
    assert panel.log.topLevelItemCount() == 2 and "2 checks" in panel.log_count.text()
    panel.show_endpoint()
    assert panel.guard_state.text().endswith("standing decisions watched.")


def test_threshold_editor_persists_for_the_vault(
    qtbot, make_window, vault: Path, port: int
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    panel = guard_panel(window)
    qtbot.waitUntil(lambda: panel.enabled.isEnabled(), timeout=5000)
    with qtbot.waitSignal(panel.sig_guard_settings_saved, timeout=5000) as saved:
        for _ in range(5):  # a burst of spin-box steps: one write
            panel.threshold.stepUp()
    assert saved.args[0].threshold == pytest.approx(0.60)
    assert load_guard_settings(vault).threshold == pytest.approx(0.60)
    assert not load_guard_settings(vault).enabled


def test_the_judge_threshold_is_what_the_panel_shows_and_edits(
    qtbot, make_window, vault: Path, port: int
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    panel = guard_panel(window)
    qtbot.waitUntil(lambda: panel.enabled.isEnabled(), timeout=5000)
    calibrated = window.controller.runtime.guard_thresholds().guard
    # No judge_threshold in the vault: the judge's calibrated value, said in words.
    assert panel.judge_threshold.text() == "calibrated"
    help_text = panel.judge_threshold_help.text()
    assert "probability of contradiction the judge must give" in help_text
    assert f"Calibrated: {calibrated:.2f}" in help_text
    assert f"this vault uses {calibrated:.2f}" in help_text
    with qtbot.waitSignal(panel.sig_guard_settings_saved, timeout=5000) as saved:
        panel.judge_threshold.setValue(0.8)
    assert saved.args[0].judge_threshold == pytest.approx(0.8)
    assert load_guard_settings(vault).judge_threshold == pytest.approx(0.8)
    assert load_guard_settings(vault).threshold == pytest.approx(0.55)  # the cosine one untouched
    panel._show_judge_help()
    assert "this vault uses 0.80" in panel.judge_threshold_help.text()
    # Back to the bottom of the box: the calibrated value again (the key is removed).
    with qtbot.waitSignal(panel.sig_guard_settings_saved, timeout=5000):
        panel.judge_threshold.setValue(0.0)
    assert load_guard_settings(vault).judge_threshold is None


def test_port_taken_is_shown_not_raised_and_start_retries(
    qtbot, make_window, blocker: socket.socket
) -> None:  # type: ignore[no-untyped-def]
    taken = blocker.getsockname()[1]
    window = make_window()
    panel = guard_panel(window)
    qtbot.waitUntil(lambda: panel.endpoint.state == "failed", timeout=15000)
    assert f"Port {taken} on 127.0.0.1 is in use" in panel.endpoint_state.text()
    assert (
        "change the port in File ▸ Settings ▸ Guard, then <b>Start</b>"
        in panel.endpoint_state.text()
    )
    assert "antinomy serve" in panel.endpoint_state.text()
    assert window.status.endpoint.text() == f"endpoint: down (port {taken} unavailable)"
    assert "in use" in window.status.endpoint.toolTip()
    assert not window.errors.errors  # a state, not an error dialog
    assert panel.start_button.isEnabled() and not panel.stop_button.isEnabled()
    # The other server goes away; Start tries again.
    blocker.close()
    panel.start_button.click()
    wait_up(qtbot, panel)
    assert window.status.endpoint.text() == f"endpoint: up :{taken}"


def test_stop_and_quit_free_the_port(qtbot, make_window, port: int) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    panel = guard_panel(window)
    wait_up(qtbot, panel)
    panel.stop_button.click()
    assert panel.endpoint.state == "down" and window.status.endpoint.text() == "endpoint: down"
    qtbot.waitUntil(lambda: not _listening(port), timeout=10000)
    panel.start_button.click()
    wait_up(qtbot, panel)
    assert _listening(port)
    window.close()  # no tray in tests: closing quits
    assert not _listening(port)
    assert not endpoint_file().exists()


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def test_hooks_install_and_uninstall_for_a_chosen_project(
    qtbot, make_window, monkeypatch, tmp_path: Path, port: int
) -> None:  # type: ignore[no-untyped-def]
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    theirs = {"permissions": {"allow": ["Bash(ls)"]}, "hooks": {"Stop": [{"hooks": []}]}}
    (project / ".claude" / "settings.json").write_text(json.dumps(theirs))
    window = make_window()
    panel = guard_panel(window)
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(project))
    with qtbot.waitSignal(panel.sig_hooks_status_shown, timeout=5000) as shown:
        panel.install_button.click()  # no folder yet: asks for one, then installs
    status = shown.args[0]
    assert [len(f.entries) for f in status.files] == [3, 3]
    claude = json.loads((project / ".claude" / "settings.json").read_text())
    assert claude["permissions"] == theirs["permissions"]
    commands = [h["command"] for g in claude["hooks"]["PreToolUse"] for h in g["hooks"]]
    assert any("pretooluse" in c and f"--port {port}" in c for c in commands)
    assert (project / ".codex" / "hooks.json").exists()
    assert load_projects()[str(project.resolve())].enabled
    assert "PreToolUse [Write|Edit|MultiEdit|Bash]" in panel.hooks_text.text()
    assert "guard for this folder: on" in panel.hooks_text.text()
    with qtbot.waitSignal(panel.sig_hooks_status_shown, timeout=5000) as shown:
        panel.uninstall_button.click()
    assert [len(f.entries) for f in shown.args[0].files] == [0, 0]
    claude = json.loads((project / ".claude" / "settings.json").read_text())
    assert claude == theirs
    assert str(project.resolve()) not in load_projects()


def test_hooks_for_a_missing_folder_say_so(qtbot, make_window, tmp_path: Path, port: int) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    panel = guard_panel(window)
    panel.project.setText(str(tmp_path / "nowhere"))
    with qtbot.waitSignal(window.errors.sig_error_shown, timeout=5000) as shown:
        panel.install_button.click()
    what, message = shown.args
    assert what == "Installing the hooks"
    assert message == (
        f"The project folder {tmp_path / 'nowhere'} does not exist — choose an existing folder."
    )


def test_copy_token_puts_the_bearer_token_on_the_clipboard(qtbot, make_window, port: int) -> None:  # type: ignore[no-untyped-def]
    window = make_window(wait_ready=False)
    panel = guard_panel(window)
    panel.copy_token_button.click()
    assert QGuiApplication.clipboard().text() == load_or_create_token()
    assert panel.copy_token_button.text() == "Copied"


def test_a_new_port_in_the_settings_moves_the_endpoint(qtbot, make_window, port: int) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    panel = guard_panel(window)
    wait_up(qtbot, panel)
    other = free_port()
    c = window.controller
    c.update_settings(replace(c.settings, endpoint=EndpointSettings(port=other)))
    qtbot.waitUntil(
        lambda: panel.endpoint.state == "up" and panel.endpoint.port == other, timeout=15000
    )
    assert window.status.endpoint.text() == f"endpoint: up :{other}"
    assert _listening(other) and not _listening(port)
    c.update_settings(replace(c.settings, recent_vaults=c.settings.recent_vaults))  # no restart
    assert panel.endpoint.state == "up"


@pytest.mark.model
def test_real_models_the_hook_client_reaches_the_app_and_the_log_shows_it(
    qtbot, qloop, vault: Path, runtime, port: int
) -> None:  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    from desktop.ui.app import build_window

    window = build_window(loop=qloop, runtime=runtime, use_tray=False, owns_runtime=False)
    qtbot.addWidget(window)
    window.show()
    window.controller.start(vault)
    panel = guard_panel(window)
    qtbot.waitUntil(lambda: panel.endpoint.state in ("up", "failed"), timeout=180000)
    assert panel.endpoint.state == "up", panel.endpoint.problem
    qtbot.waitUntil(lambda: panel.enabled.isEnabled(), timeout=10000)
    with qtbot.waitSignal(panel.sig_guard_settings_saved, timeout=5000):
        panel.enabled.setChecked(True)
    service = panel.endpoint.handle.guard if panel.endpoint.handle else None
    assert service is not None
    qtbot.waitUntil(service.ready.is_set, timeout=60000)
    data = Path(__file__).parent.parent / "data" / "hooks" / "claude_bash_contradicts.json"
    payload = json.loads(data.read_text()) | {"session_id": f"gui-{time.time_ns()}"}
    # The real hook client, as an agent runs it: it finds the app's port in endpoint.json.
    with qtbot.waitSignal(panel.sig_guard_check_shown, timeout=30000) as shown:
        proc = subprocess.run(
            [sys.executable, "-m", "desktop.service.hook", "pretooluse", "--budget-ms", "10000"],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert "ADR-0012" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    record = shown.args[0]
    assert record.verdict == "warn" and record.decision_id == "ADR-0012"
    top = panel.log.topLevelItem(0)
    assert top is not None and top.text(2) == "Billing ledger in SQLite" and top.text(4) == "warn"
    window.close()


def test_checks_are_answered_while_the_gui_thread_is_busy(qtbot, make_window, port: int) -> None:  # type: ignore[no-untyped-def]
    import threading

    window = make_window()
    panel = guard_panel(window)
    wait_up(qtbot, panel)
    answered: list[tuple[int, float]] = []

    def client() -> None:
        for _ in range(5):
            t0 = time.perf_counter()
            status, _body = check(port, FRIDAY)
            answered.append((status, time.perf_counter() - t0))

    thread = threading.Thread(target=client)
    busy_until = time.perf_counter() + 1.5
    thread.start()
    while time.perf_counter() < busy_until:  # the GUI thread does not return to its loop
        pass
    done_while_busy = len(answered)
    thread.join(10)
    assert done_while_busy == 5, answered
    assert all(status == 200 for status, _s in answered)
    # The live log catches up once the GUI thread is free again.
    qtbot.waitUntil(lambda: panel.log.topLevelItemCount() == 5, timeout=5000)


def test_endpoint_box_keeps_its_lines_together_at_1920x1080(qtbot, make_window, port: int) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    panel = guard_panel(window)
    window.resize(1920, 1080)
    window.show_panel("guard")
    wait_up(qtbot, panel)
    qtbot.wait(50)  # the layout settles
    box = panel.endpoint_state.parentWidget()
    spacing = box.layout().spacing()
    state, token = panel.endpoint_state, panel.token_label
    # Each line is as tall as its text (a label given spare height centres its text in it,
    # which shows as a gap) and follows the one above at the layout's spacing, whatever
    # height the guard box beside it takes.
    for label in (state, token):
        assert label.height() <= label.heightForWidth(label.width()) + 2, label.text()
    assert token.geometry().top() - state.geometry().bottom() <= spacing + 2
    assert panel.copy_token_button.geometry().top() - token.geometry().bottom() <= spacing + 2
