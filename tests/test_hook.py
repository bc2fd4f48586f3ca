"""The hook client ``antinomy-hook`` as the agents run it: a fresh process per call.

Recorded PreToolUse payloads (tests/data/hooks/, Claude Code and Codex) go to
a real endpoint on an ephemeral port, guarding a copy of the sample vault.
The failure cases (endpoint stopped, killed mid-request, too slow, bad token)
must all end the same way: exit 0, nothing on stdout, one line on stderr — and a
slow endpoint's answer is not waited for. These tests check that behaviour, not
speed: how long failing open takes on this machine is tests/perf/bench_hook.py's.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.flows.guard import GuardSettings, save_guard_settings, set_project
from desktop.resources import sample_vault_source
from desktop.service.hook import config_dir, summarize
from desktop.service.server import EndpointHandle, start_endpoint
from foundation import paths
from tests.service_util import TOKEN

DATA = Path(__file__).parent / "data" / "hooks"


def payload(name: str, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text())
    data.update(changes)
    return data


def run_hook(
    args: list[str],
    stdin: dict[str, Any] | str,
    *,
    port: int | None = None,
    timeout: float = 30,
) -> tuple[int, str, str, float]:
    cmd = [sys.executable, "-m", "desktop.service.hook", *args]
    if port is not None:
        cmd += ["--port", str(port)]
    text = stdin if isinstance(stdin, str) else json.dumps(stdin)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, input=text, capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - t0


def write_token(value: str = TOKEN) -> None:
    folder = Path(config_dir())
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "endpoint-token").write_text(value + "\n")


def assert_failed_open(rc: int, out: str, err: str) -> None:
    assert rc == 0
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("antinomy-hook: "), err


# ---------------------------------------------------------------- without a server


def test_summaries_of_each_tool() -> None:
    def s(name: str) -> str:
        data = payload(name)
        return summarize(data["tool_name"], data["tool_input"], data["cwd"])

    assert s("claude_bash_contradicts").startswith(
        "Move the billing ledger out of SQLite into the main PostgreSQL cluster\n"
        "python scripts/migrate_ledger.py"
    )
    assert s("claude_write") == (
        'Write billing/config.py\nLEDGER_URL = "postgresql://ledgerline@db.internal/ledgerline"'
    )
    assert s("claude_edit") == "Edit .github/workflows/e2e.yml\nruns-on: ubuntu-latest"
    # Each edit a piece of text of its own: a blank line between them.
    assert s("claude_multiedit") == (
        "Edit oncall/schedule.yaml\nweekends: none\n\npage_within: next business day"
    )
    assert s("codex_apply_patch") == (
        "Update billing/config.py\n"
        'LEDGER_URL = "postgresql://ledgerline@db.internal/ledgerline"  '
        "# ledger moves into the main cluster"
    )
    assert s("codex_apply_patch_against_release_window") == (
        "Update docs/releasing.md\nProduction releases go out every Tuesday between 09:00 and "
        "11:00, after Monday's acceptance checks."
    )
    assert s("codex_bash_contradicts").startswith("sqlite3 /var/lib/billing/ledger.db .dump")
    patch = (
        "*** Begin Patch\n*** Update File: docs/a.md\n@@\n-old\n+one\n+two\n kept\n+three\n"
        "*** Add File: b.py\n+x = 1\n*** End Patch\n"
    )
    # Added lines the patch does not join are kept apart, as MultiEdit's edits are.
    assert summarize("apply_patch", {"command": patch}) == (
        "Update docs/a.md\none\ntwo\n\nthree\nAdd b.py\nx = 1"
    )
    assert summarize("Bash", {"command": "x" * 5000}) == "x" * 2048
    assert summarize("Bash", "not a dict") == ""


def test_hook_config_dir_matches_the_app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert Path(config_dir()) == paths.config_dir()
    monkeypatch.delenv("ANTINOMY_HOME")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert Path(config_dir()) == paths.config_dir() == tmp_path / "xdg" / "antinomy"


def test_the_hook_module_imports_only_the_standard_library() -> None:
    code = (
        "import sys; before = set(sys.modules); import desktop.service.hook; "
        "print('\\n'.join(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    loaded = {name.split(".")[0] for name in out.split()}
    assert loaded - set(sys.stdlib_module_names) == {"desktop"}
    assert {n for n in out.split() if n.startswith("desktop")} == {
        "desktop",
        "desktop.service",
        "desktop.service.hook",
        "desktop.service.hook_wire",
    }


def test_the_installed_command_runs_the_file_with_the_standard_library_alone() -> None:
    """Installed hooks run ``python -S …/desktop/service/hook.py``: no package, no site."""
    import desktop.service.hook as hook

    done = subprocess.run(
        [sys.executable, "-S", "-X", "importtime", hook.__file__, "frobnicate"],
        capture_output=True,
        text=True,
    )
    assert "usage: antinomy-hook {pretooluse|sessionstart|userpromptsubmit}" in done.stderr
    loaded = {
        line.split("|")[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and not line.rstrip().endswith("package")
    }
    ours = {name for name in loaded if name.split(".")[0] not in sys.stdlib_module_names}
    # The two package files (docstrings only) and the wire module: nothing else of ours.
    assert ours == {"desktop", "desktop.service", "desktop.service.hook_wire"}


def test_short_summaries_ask_nothing() -> None:
    rc, out, err, _ = run_hook(["pretooluse"], payload("claude_bash_short"), port=9)
    assert (rc, out, err) == (0, "", "")


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["pretooluse"], "not json", "the hook input on stdin is not JSON"),
        (["pretooluse"], "", "empty hook input on stdin"),
        (["frobnicate"], "{}", "usage: antinomy-hook {pretooluse|sessionstart|userpromptsubmit}"),
        (["pretooluse", "--mode", "block"], "{}", "unknown option --mode block"),
    ],
)
def test_bad_input_fails_open_with_one_line(args: list[str], stdin: str, message: str) -> None:
    rc, out, err, _ = run_hook(args, stdin)
    assert rc == 0 and out == ""
    assert err.count("\n") == 1 and message in err


def test_no_token_fails_open() -> None:
    rc, out, err, _ = run_hook(["pretooluse"], payload("claude_bash_contradicts"), port=9)
    assert_failed_open(rc, out, err)
    assert "no endpoint token at" in err


def test_stopped_endpoint_fails_open() -> None:
    write_token()
    rc, out, err, _ = run_hook(["pretooluse"], payload("claude_bash_contradicts"), port=9)
    assert_failed_open(rc, out, err)
    assert "endpoint not running on 127.0.0.1:9; tool allowed" in err


def test_the_interpreters_start_counts_against_the_budget() -> None:
    """The budget runs from process start (what the agent waits for), not from main():
    a process 0.3 s old has at most 0.7 s of a 1 s budget left."""
    code = (
        "import time; time.sleep(0.3); from desktop.service.hook import process_start_deadline; "
        "print(process_start_deadline(1.0) - time.monotonic())"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    left = float(proc.stdout)
    assert 0.0 < left <= 0.7


def test_a_spent_budget_asks_nothing_and_fails_open() -> None:
    """With no time left the client does not even connect: a listening socket that never
    accepts would otherwise hold it."""
    import socket

    write_token()
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        rc, out, err, _ = run_hook(
            ["pretooluse", "--budget-ms", "0"], payload("claude_bash_contradicts"), port=port
        )
        server.setblocking(False)
        with pytest.raises(BlockingIOError):
            server.accept()  # no connection is waiting: the client never connected
    assert_failed_open(rc, out, err)
    assert "no answer within 0 ms; tool allowed" in err


# ---------------------------------------------------------------- against a real endpoint


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hook") / "vault"
    shutil.copytree(sample_vault_source(), root)
    # These tests check the hook's plumbing, not the judge's calibration
    # (tests/perf/calibrate_guard.py does): a lower judge threshold keeps the sample
    # calls' verdicts clear of the shipped default's edge. The Codex call is a bare shell
    # command (no description), which the judge reads weakly: 0.49 against ADR-0012.
    save_guard_settings(root, GuardSettings(enabled=True, judge_threshold=0.4))
    return root


@pytest.fixture(scope="module")
def endpoint(runtime: Any, vault: Path) -> Iterator[EndpointHandle]:
    handle = start_endpoint(runtime=runtime, vault_root=vault, port=0, token=TOKEN, publish=False)
    assert handle.guard is not None and handle.guard.ready.wait(60), handle.guard.error
    yield handle
    handle.stop()


@pytest.fixture
def hook_env(endpoint: EndpointHandle) -> EndpointHandle:
    write_token()
    return endpoint


#: Functional tests check what is printed, not speed (tests/perf/bench_guard.py does that).
SLACK = ["--budget-ms", "10000"]


def session(name: str) -> str:
    return f"{name}-{time.time_ns()}"


@pytest.mark.model
def test_contradicting_bash_warns_then_not_again(hook_env: EndpointHandle) -> None:
    port = hook_env.port
    sid = session("claude")
    rc, out, err, _ = run_hook(
        ["pretooluse", *SLACK], payload("claude_bash_contradicts", session_id=sid), port=port
    )
    assert (rc, err) == (0, "")
    answer = json.loads(out)
    inner = answer["hookSpecificOutput"]
    assert inner["hookEventName"] == "PreToolUse"
    assert "ADR-0012: Billing ledger in SQLite" in inner["additionalContext"]
    assert "Decisions/ADR-0012 Billing ledger in SQLite.md" in inner["additionalContext"]
    # Another call against the same decision in the same session: no second warning.
    rc, out, err, _ = run_hook(
        ["pretooluse", *SLACK], payload("claude_bash_contradicts_again", session_id=sid), port=port
    )
    assert (rc, out, err) == (0, "", "")
    last = hook_env.guard_log.records()[-1]
    assert last.verdict == "repeat" and last.decision_id == "ADR-0012" and last.tool == "Bash"


@pytest.mark.model
def test_unrelated_bash_prints_nothing(hook_env: EndpointHandle) -> None:
    rc, out, err, _ = run_hook(
        ["pretooluse", *SLACK],
        payload("claude_bash_unrelated", session_id=session("u")),
        port=hook_env.port,
    )
    assert (rc, out, err) == (0, "", "")
    last = hook_env.guard_log.records()[-1]
    assert last.verdict == "allow" and last.score is not None and last.score < 0.55
    assert last.latency_ms > 0


@pytest.mark.model
def test_codex_payloads_warn(hook_env: EndpointHandle) -> None:
    rc, out, _, _ = run_hook(
        ["pretooluse", *SLACK],
        payload("codex_bash_contradicts", session_id=session("x")),
        port=hook_env.port,
    )
    assert rc == 0 and "ADR-0012" in json.loads(out)["hookSpecificOutput"]["additionalContext"]


@pytest.mark.model
def test_ask_mode(hook_env: EndpointHandle) -> None:
    rc, out, _, _ = run_hook(
        ["pretooluse", "--mode", "ask", *SLACK],
        payload("claude_bash_contradicts", session_id=session("ask")),
        port=hook_env.port,
    )
    inner = json.loads(out)["hookSpecificOutput"]
    assert rc == 0 and inner["permissionDecision"] == "ask"
    assert "ADR-0012" in inner["permissionDecisionReason"]


@pytest.mark.model
def test_project_switched_off_prints_nothing(hook_env: EndpointHandle, tmp_path: Path) -> None:
    set_project(tmp_path, enabled=False)
    data = payload("claude_bash_contradicts", session_id=session("off"), cwd=str(tmp_path))
    rc, out, err, _ = run_hook(["pretooluse", *SLACK], data, port=hook_env.port)
    assert (rc, out, err) == (0, "", "")
    assert hook_env.guard_log.records()[-1].verdict == "off"


@pytest.mark.model
def test_wrong_token_fails_open(hook_env: EndpointHandle) -> None:
    write_token("not-the-token")
    rc, out, err, _ = run_hook(
        ["pretooluse", *SLACK], payload("claude_bash_contradicts"), port=hook_env.port
    )
    assert_failed_open(rc, out, err)
    # The endpoint cannot prove it holds a token the hook does not have: nothing is sent.
    assert "did not prove it holds the endpoint token" in err


@pytest.mark.model
def test_a_slow_endpoint_is_not_waited_for(runtime: Any) -> None:
    """The client gives up at its budget: it has exited, allowed, while the endpoint is
    still working on the answer (which would have been a warning)."""
    import threading

    write_token()
    handle = start_endpoint(runtime=runtime, port=0, token=TOKEN, publish=False, guard=False)
    release = threading.Event()
    started: list[str] = []
    answered: list[str] = []

    def slow(body: dict[str, Any]) -> dict[str, Any]:
        started.append(body["session_id"])
        release.wait(30)
        answered.append(body["session_id"])
        return {"output": {"never": "printed"}}

    handle.register_route("/v1/guard/check", slow)
    try:
        for args, message in (
            (["pretooluse"], "no answer within 300 ms; tool allowed"),
            (["pretooluse", "--budget-ms", "150"], "no answer within 150 ms; tool allowed"),
        ):
            sid = session("slow")
            rc, out, err, _ = run_hook(
                args, payload("claude_bash_contradicts", session_id=sid), port=handle.port
            )
            assert_failed_open(rc, out, err)
            assert message in err
            # Only a request the endpoint received shows the client waited on it and left.
            if sid in started:
                assert sid not in answered
    finally:
        release.set()
        handle.stop()


_KILLABLE_SERVER = textwrap.dedent(
    """
    import sys, time
    from inference.runtime import Runtime
    from desktop.service.server import start_endpoint
    handle = start_endpoint(runtime=Runtime(), port=0, token=sys.argv[1], publish=False,
                            guard=False)
    def hold(body):
        print("received", flush=True)
        time.sleep(30)
        return {}

    handle.register_route("/v1/guard/check", hold)
    print(handle.port, flush=True)
    time.sleep(60)
    """
)


def test_endpoint_killed_mid_request_fails_open() -> None:
    write_token()
    server = subprocess.Popen(
        [sys.executable, "-c", _KILLABLE_SERVER, TOKEN], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        command = [sys.executable, "-m", "desktop.service.hook", "pretooluse", "--port", str(port)]
        hook = subprocess.Popen(
            [*command, *SLACK],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert hook.stdin is not None
        hook.stdin.write(json.dumps(payload("claude_bash_contradicts")))
        hook.stdin.close()
        # SLACK: the kill, not the budget, must end this call.
        assert server.stdout.readline().strip() == "received"  # in the server's hands now
        server.send_signal(signal.SIGKILL)
        assert hook.stdout is not None and hook.stderr is not None
        out, err = hook.stdout.read(), hook.stderr.read()
        hook.wait(timeout=10)
        assert_failed_open(hook.returncode, out, err)
        assert "tool allowed" in err and "no answer within" not in err
    finally:
        server.kill()
        server.wait()


# ---------------------------------------------------------------- userpromptsubmit, sessionstart


@pytest.mark.model
def test_userpromptsubmit_fails_open_without_a_vault_and_adds_context_with_recall(
    runtime: Any,
) -> None:
    write_token()
    handle = start_endpoint(runtime=runtime, port=0, token=TOKEN, publish=False, guard=False)
    try:
        prompt = payload("claude_userpromptsubmit")
        # The memory routes are there, but this endpoint serves no vault: nothing to add,
        # one line on stderr, exit 0.
        rc, out, err, _ = run_hook(["userpromptsubmit", *SLACK], prompt, port=handle.port)
        assert (rc, out) == (0, "") and "serves no vault" in err and err.count("\n") == 1
        seen: list[dict[str, Any]] = []

        def recall(body: dict[str, Any]) -> dict[str, Any]:
            seen.append(body)
            return {"additionalContext": "The ledger lives in SQLite (ADR-0012); Teo owns it."}

        handle.register_route("/v1/recall", recall)
        rc, out, err, _ = run_hook(["userpromptsubmit", *SLACK], prompt, port=handle.port)
        assert (rc, err) == (0, "")
        assert json.loads(out) == {
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": "The ledger lives in SQLite (ADR-0012); Teo owns it.",
            }
        }
        assert (
            seen[0]["query"] == prompt["prompt"] and seen[0]["session_id"] == prompt["session_id"]
        )
    finally:
        handle.stop()


@pytest.mark.model
def test_sessionstart_leaves_a_running_endpoint_alone(hook_env: EndpointHandle) -> None:
    rc, out, err, _ = run_hook(
        ["sessionstart", *SLACK], payload("claude_sessionstart"), port=hook_env.port
    )
    assert (rc, out, err) == (0, "", "")
    assert not (Path(config_dir()) / "serve-starting").exists()


def test_sessionstart_starts_the_endpoint_when_it_is_down(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(sample_vault_source(), vault)
    import socket

    with socket.socket() as s:  # a free port
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rc, out, err, _ = run_hook(
        ["sessionstart", "--vault", str(vault), "--budget-ms", "120000"],
        payload("claude_sessionstart"),
        port=port,
        timeout=150,
    )
    info_file = Path(config_dir()) / "endpoint.json"
    try:
        assert rc == 0 and out == ""
        # It waited until the endpoint was ready: engines warm, decisions read.
        assert f"started `antinomy serve` on port {port}; ready (engines warm" in err, err
        assert info_file.exists()
        info = json.loads(info_file.read_text())
        assert info["port"] == port and info["vault"] == str(vault.resolve())
        rc, out, err, _ = run_hook(["sessionstart"], payload("claude_sessionstart"), port=port)
        assert (rc, out, err) == (0, "", "")  # up now: nothing more is started
    finally:
        if info_file.exists():
            pid = json.loads(info_file.read_text())["pid"]
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and info_file.exists():
                time.sleep(0.1)
