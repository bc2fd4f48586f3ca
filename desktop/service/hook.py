"""``antinomy-hook`` — the agent-hook client (Claude Code, Codex).

Started as a fresh process on every tool call, so it imports only the standard
library (and not even ``http.client``: a few lines of HTTP over a socket cost
less than that import). Subcommands::

    antinomy-hook pretooluse       [--mode warn|ask] [--budget-ms N] [--port N] [--home DIR]
    antinomy-hook sessionstart     [--vault DIR] [--port N] [--budget-ms N]
    antinomy-hook userpromptsubmit [--budget-ms N] [--port N]

``pretooluse`` reads the PreToolUse JSON on stdin (Claude Code: ``tool_name``
Bash/Write/Edit/MultiEdit; Codex: Bash, or ``apply_patch`` with the patch in
``tool_input.command``), makes a summary of the pending change (at most 2 KB;
under 12 characters it asks nothing), and asks ``POST /v1/guard/check``.

It trusts only the real endpoint. Before the token or the summary leaves the
process, the listener must prove it holds the token: on the same connection the
hook sends ``GET /v1/hello`` with a fresh nonce and checks the answer against
HMAC-SHA256(token, "antinomy-endpoint-proof/1 port=<port> nonce=<nonce>"); a
program squatting the port cannot answer, and gets nothing. The hook then
builds its own stdout from the validated verdict — a warning
(``additionalContext``) or ``permissionDecision: "ask"`` with the reason — and
never emits ``allow`` nor passes on JSON it did not build.

It fails open. The whole process has a hard budget (default 300 ms, counted
from the process's start where the OS says when that was): on timeout, a
refused connection, a bad token, or any error it prints nothing on stdout,
one line on stderr, and exits 0. It never exits 2 (which would block the tool).

``sessionstart`` makes sure the endpoint is up, starting ``antinomy serve`` in
the background if it is not, and waits (within its own budget, default 20 s)
until ``/healthz`` says the engines are warm and the decisions read, so the
first tool call is checked; if that does not happen it says so in one line.
``--home DIR`` sets ``ANTINOMY_HOME`` (installed commands carry it when the
app's home is relocated).
``userpromptsubmit`` asks ``POST /v1/recall`` (the memory feature) and adds
what it returns as context; while that route does not exist it does nothing.
"""

from __future__ import annotations

import json
import os
import sys
import time

if not __package__:  # run as a file, as installed hooks do: python -S …/desktop/service/hook.py
    # The folder holding ``desktop/`` (whose package files import nothing), so the wire
    # module is imported by one name either way.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.dirname(os.path.dirname(here)))
from desktop.service.hook_wire import (
    _CONTEXT_MAX,
    _STDIN_MAX,
    _TEXT_MAX,
    BUDGET_MS,
    SESSIONSTART_BUDGET_MS,
    SUMMARY_MIN_CHARS,
    Connection,
    HookFailure,
    _config_file,
    _error_message,
    config_dir,
    endpoint_port,
    process_start_deadline,
    prove_endpoint,
    read_token,
    request,
    summarize,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["HookFailure", "config_dir", "guard_output", "main", "summarize"]


def _read_payload() -> dict[str, Any]:
    raw = sys.stdin.read(_STDIN_MAX)
    if not raw.strip():
        raise HookFailure("empty hook input on stdin; tool allowed")
    try:
        payload = json.loads(raw)
    except ValueError:
        raise HookFailure("the hook input on stdin is not JSON; tool allowed") from None
    if not isinstance(payload, dict):
        raise HookFailure("the hook input on stdin is not a JSON object; tool allowed")
    return payload


def _post(path: str, body: dict[str, Any], opts: dict[str, Any], deadline: float) -> Any:
    port = endpoint_port(opts.get("port"))
    token = read_token()
    try:
        status, answer = request("POST", path, body, port=port, token=token, deadline=deadline)
    except HookFailure:
        raise
    except ConnectionRefusedError:
        raise HookFailure(f"endpoint not running on 127.0.0.1:{port}; tool allowed") from None
    except TimeoutError:
        budget = opts.get("budget_ms", BUDGET_MS)
        raise HookFailure(f"no answer within {budget} ms; tool allowed") from None
    except OSError as exc:
        raise HookFailure(f"endpoint unreachable ({exc.strerror or exc}); tool allowed") from None
    if status == 404 and path != "/v1/guard/check":
        return None  # an optional route (recall) this endpoint does not have yet
    if status != 200:
        detail = _error_message(answer)
        raise HookFailure(
            f"endpoint answered {status}{': ' + detail if detail else ''}; tool allowed"
        )
    return answer


def pretooluse(opts: dict[str, Any], deadline: float) -> str | None:
    payload = _read_payload()
    cwd = str(payload.get("cwd") or os.getcwd())
    summary = summarize(payload.get("tool_name"), payload.get("tool_input"), cwd)
    if len(summary.strip()) < SUMMARY_MIN_CHARS:
        return None
    body: dict[str, Any] = {
        "session_id": str(payload.get("session_id") or ""),
        "cwd": cwd,
        "tool_name": str(payload.get("tool_name") or ""),
        "hook_event_name": str(payload.get("hook_event_name") or "PreToolUse"),
        "summary": summary,
    }
    if opts.get("mode"):
        body["mode"] = opts["mode"]
    answer = _post("/v1/guard/check", body, opts, deadline)
    return guard_output(answer)


def _clean(text: str, limit: int) -> str:
    """Text for the agent: no control characters but newlines and tabs, bounded."""
    kept = "".join(c for c in text if c >= " " or c in "\n\t")
    return kept[:limit].strip()


def guard_output(answer: Any) -> str | None:
    """The hook's stdout for a guard answer, built here from a validated verdict.

    Only ``warn`` (``additionalContext``) and ``ask`` (``permissionDecision: "ask"``)
    print anything; ``allow`` is never emitted, and nothing the endpoint sent is
    passed on but the warning text (a string, cleaned and bounded).
    """
    if not isinstance(answer, dict):
        return None
    verdict = answer.get("verdict")
    if verdict not in ("warn", "ask"):
        return None
    output = answer.get("output")
    inner = output.get("hookSpecificOutput") if isinstance(output, dict) else None
    key = "permissionDecisionReason" if verdict == "ask" else "additionalContext"
    text = inner.get(key) if isinstance(inner, dict) else None
    if not isinstance(text, str) or not text.strip():
        decision = answer.get("decision")
        fields = ("id", "title", "path")
        if not isinstance(decision, dict) or not all(
            isinstance(decision.get(k), str) for k in fields
        ):
            return None
        text = (
            f"⚠ This change may contradict decision {decision['id']}: {decision['title']} "
            f"(vault note {decision['path']}). Read the decision before going ahead."
        )
    text = _clean(text, _TEXT_MAX)
    if not text:
        return None
    built: dict[str, Any] = {"hookEventName": "PreToolUse"}
    if verdict == "ask":
        built["permissionDecision"] = "ask"
        built["permissionDecisionReason"] = text
    else:
        built["additionalContext"] = text
    return json.dumps({"hookSpecificOutput": built}, ensure_ascii=False)


def userpromptsubmit(opts: dict[str, Any], deadline: float) -> str | None:
    payload = _read_payload()
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or len(prompt.strip()) < SUMMARY_MIN_CHARS:
        return None
    body = {
        "query": prompt[:8192],
        "session_id": str(payload.get("session_id") or ""),
        "cwd": str(payload.get("cwd") or os.getcwd()),
    }
    answer = _post("/v1/recall", body, opts, deadline)
    if not isinstance(answer, dict):
        return None
    context = answer.get("additionalContext")
    output = answer.get("output")
    inner = output.get("hookSpecificOutput") if isinstance(output, dict) else None
    if not isinstance(context, str) and isinstance(inner, dict):
        context = inner.get("additionalContext")
    if not isinstance(context, str):
        return None
    context = _clean(context, _CONTEXT_MAX)
    if not context:
        return None
    built = {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}
    }
    return json.dumps(built, ensure_ascii=False)


def sessionstart(opts: dict[str, Any], deadline: float) -> str | None:
    """Leave the endpoint ready for the first tool call: start ``antinomy serve`` in the
    background unless it answers, then wait (within the budget) until ``/healthz`` says
    the engines are warm and the decisions read. Prints nothing on stdout (a SessionStart
    hook's stdout would become context for the agent); one stderr line when it started
    the endpoint, or when the endpoint is not ready in time."""
    if sys.stdin is not None and not sys.stdin.isatty():
        sys.stdin.read(_STDIN_MAX)  # the agent's payload; nothing in it is needed
    port = endpoint_port(opts.get("port"))
    began = time.monotonic()
    health = _health(port, deadline)
    started = False
    lock = _config_file("serve-starting")
    if health is None:
        started = _start_serve(port, opts, lock)
    while not (health and health.get("ready") is True):
        if health and (
            health.get("models") in ("failed", "closed") or health.get("guard") == "error"
        ):
            raise HookFailure(
                f"the endpoint on 127.0.0.1:{port} is up but not usable (models "
                f"{health.get('models')}, guard {health.get('guard')}) — see `antinomy doctor`; "
                "tool calls pass unchecked"
            )
        if deadline - time.monotonic() < 0.15:
            state = (
                "not answering"
                if health is None
                else f"models {health.get('models')}, decisions {health.get('guard')}"
            )
            raise HookFailure(
                f"the endpoint on 127.0.0.1:{port} was not ready within "
                f"{opts.get('budget_ms', SESSIONSTART_BUDGET_MS) / 1000:g} s ({state}); the "
                "first tool calls may pass unchecked"
            )
        time.sleep(0.1)
        health = _health(port, deadline)
    with Connection(port, deadline) as conn:
        prove_endpoint(conn, read_token())
    if started:
        try:  # noqa: SIM105 - contextlib is one more import on every hook call
            os.unlink(lock)
        except OSError:
            pass
        raise HookFailure(
            f"started `antinomy serve` on port {port}; ready (engines warm, decisions read) "
            f"in {time.monotonic() - began:.1f} s"
        )
    return None


def _health(port: int, deadline: float) -> dict[str, Any] | None:
    """``/healthz``'s answer, or None when nothing answers on the port (yet)."""
    try:
        status, answer = request("GET", "/healthz", None, port=port, token=None, deadline=deadline)
    except (OSError, HookFailure):
        return None
    return answer if status == 200 and isinstance(answer, dict) else None


def _start_serve(port: int, opts: dict[str, Any], lock: str) -> bool:
    """Start ``antinomy serve`` in the background (log in ``serve.log``), unless another
    session did so less than 30 s ago. True when this call started it."""
    try:
        if time.time() - os.stat(lock).st_mtime < 30:
            return False  # another session is starting it right now: wait for it
    except OSError:
        pass
    os.makedirs(config_dir(), exist_ok=True)
    with open(lock, "w", encoding="utf-8") as f:
        f.write(str(os.getpid()))
    # In the PyInstaller bundle sys.executable is the app itself, which takes no -m.
    frozen = getattr(sys, "frozen", False)
    command = [sys.executable] if frozen else [sys.executable, "-m", "desktop.cli.main"]
    command += ["serve", "--port", str(port)]
    if opts.get("vault"):
        command += ["--vault", opts["vault"]]
    import subprocess  # only here: the hot path (pretooluse) never pays for it

    log = open(_config_file("serve.log"), "ab")  # noqa: SIM115 - handed to the child
    try:
        subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        log.close()
    return True


SUBCOMMANDS = {
    "pretooluse": pretooluse,
    "sessionstart": sessionstart,
    "userpromptsubmit": userpromptsubmit,
}


def parse_args(argv: list[str]) -> tuple[str, dict[str, Any]]:
    if not argv or argv[0] not in SUBCOMMANDS:
        names = "|".join(SUBCOMMANDS)
        raise HookFailure(f"usage: antinomy-hook {{{names}}} [options]; nothing done")
    opts: dict[str, Any] = {}
    rest = argv[1:]
    while rest:
        flag = rest.pop(0)
        value = rest.pop(0) if rest else ""
        if flag == "--mode" and value in ("warn", "ask"):
            opts["mode"] = value
        elif flag == "--budget-ms" and value.isdigit():
            opts["budget_ms"] = int(value)
        elif flag == "--port" and value.isdigit():
            opts["port"] = int(value)
        elif flag == "--vault" and value:
            opts["vault"] = value
        elif flag == "--home" and value:
            # Before anything reads the config folder; `antinomy serve` started from
            # here inherits it too.
            os.environ["ANTINOMY_HOME"] = value
        else:
            raise HookFailure(f"unknown option {flag} {value}".rstrip() + "; nothing done")
    return argv[0], opts


def main(argv: list[str] | None = None) -> int:
    """Always returns 0: the agent's tool runs unless the endpoint asked otherwise on stdout."""
    deadline = process_start_deadline(BUDGET_MS / 1000)
    try:
        command, opts = parse_args(list(sys.argv[1:] if argv is None else argv))
        default = SESSIONSTART_BUDGET_MS if command == "sessionstart" else BUDGET_MS
        deadline = process_start_deadline(opts.get("budget_ms", default) / 1000)
        out = SUBCOMMANDS[command](opts, deadline)
        if out:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
    except HookFailure as exc:
        _complain(str(exc))
    except BaseException as exc:  # fail open, whatever happened (even Ctrl-C)
        _complain(f"{type(exc).__name__}: {exc}; tool allowed")
    return 0


def _complain(line: str) -> None:
    try:
        sys.stderr.write(f"antinomy-hook: {line.splitlines()[0] if line else 'error'}\n")
        sys.stderr.flush()
    except Exception:  # stderr closed: nothing more to do
        pass


if __name__ == "__main__":
    sys.exit(main())
