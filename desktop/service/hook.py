"""``antinomy-hook`` — the agent-hook client (Claude Code, Codex).

Started as a fresh process on every tool call, so it imports only the standard
library (and not even ``http.client``: a few lines of HTTP over a socket cost
less than that import). Subcommands::

    antinomy-hook pretooluse       [--mode warn|ask] [--budget-ms N] [--port N]
    antinomy-hook sessionstart     [--vault DIR] [--port N]
    antinomy-hook userpromptsubmit [--budget-ms N] [--port N]

``pretooluse`` reads the PreToolUse JSON on stdin (Claude Code: ``tool_name``
Bash/Write/Edit/MultiEdit; Codex: Bash, or ``apply_patch`` with the patch in
``tool_input.command``), makes a summary of the pending change (at most 2 KB;
under 12 characters it asks nothing), and asks ``POST /v1/guard/check``. It
prints the endpoint's hook output only when there is one.

It fails open. The whole process has a hard budget (default 300 ms, counted
from the process's start where the OS says when that was): on timeout, a
refused connection, a bad token, or any error it prints nothing on stdout,
one line on stderr, and exits 0. It never exits 2 (which would block the tool).

``sessionstart`` makes sure the endpoint is up, starting ``antinomy serve`` in
the background if it is not, so the guard is warm before the first tool call.
``userpromptsubmit`` asks ``POST /v1/recall`` (the memory feature) and adds
what it returns as context; while that route does not exist it does nothing.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time

# No pathlib, no typing: each costs milliseconds of start-up on every tool call.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The hook's whole budget; the endpoint answers well inside it when warm.
BUDGET_MS = 300
DEFAULT_PORT = 8765
SUMMARY_MAX_BYTES = 2048
SUMMARY_MIN_CHARS = 12
#: Kept back from the budget for writing the answer and the interpreter's exit.
EXIT_MARGIN = 0.02
_STDIN_MAX = 8 * 1024 * 1024


class HookFailure(Exception):
    """Anything that makes the hook allow the tool silently; the message is the stderr line."""


# ---------------------------------------------------------------- where things are


def config_dir() -> str:
    """The same folder as ``inference.paths.config_dir()`` (platformdirs), without importing it."""
    join, home_dir = os.path.join, os.path.expanduser("~")
    home = os.environ.get("ANTINOMY_HOME")
    if home:
        return join(os.path.expanduser(home), "config")
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or join(home_dir, "AppData", "Local")
        return join(base, "antinomy", "antinomy")
    if sys.platform == "darwin":
        return join(home_dir, "Library", "Application Support", "antinomy")
    base = os.environ.get("XDG_CONFIG_HOME", "").strip() or join(home_dir, ".config")
    return join(base, "antinomy")


def _config_file(name: str) -> str:
    return os.path.join(config_dir(), name)


def endpoint_port(explicit: int | None = None) -> int:
    if explicit:
        return explicit
    env = os.environ.get("ANTINOMY_PORT")
    if env and env.isdigit():
        return int(env)
    try:
        with open(_config_file("endpoint.json"), encoding="utf-8") as f:
            info = json.load(f)
        return int(info["port"])
    except (OSError, ValueError, KeyError, TypeError):
        return DEFAULT_PORT


def read_token() -> str:
    path = _config_file("endpoint-token")
    try:
        with open(path, encoding="utf-8") as f:
            token = f.read().strip()
    except OSError:
        raise HookFailure(
            f"no endpoint token at {path} — run `antinomy serve` once; tool allowed"
        ) from None
    if not token:
        raise HookFailure(f"the endpoint token file {path} is empty; tool allowed")
    return token


# ---------------------------------------------------------------- the summary


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return ""


def _patch_summary(patch: str) -> list[str]:
    """Codex's apply_patch (or a unified diff): the files touched and the added lines."""
    parts: list[str] = []
    for line in patch.splitlines():
        if line.startswith("*** ") and " File: " in line:
            verb, _, path = line[4:].partition(" File: ")
            parts.append(f"{verb} {path.strip()}")
        elif line.startswith("+++ "):
            parts.append(f"Update {line[4:].strip().removeprefix('b/')}")
        elif line.startswith("+"):
            parts.append(line[1:])
    return parts


def summarize(tool_name: Any, tool_input: Any, cwd: str = "") -> str:
    """What the pending tool call would do, as text to embed (at most 2 KB).

    File paths are made relative to the session's ``cwd``: the project's own
    folder names say nothing about the change.
    """
    if not isinstance(tool_input, dict):
        return ""
    name = tool_name if isinstance(tool_name, str) else ""
    path = _text(tool_input.get("file_path") or tool_input.get("path"))
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        path = path[len(cwd.rstrip("/")) + 1 :]
    parts: list[str]
    if name == "apply_patch" or (
        name != "Bash" and _text(tool_input.get("command")).startswith("*** Begin Patch")
    ):
        patch = _text(
            tool_input.get("command") or tool_input.get("input") or tool_input.get("patch")
        )
        parts = _patch_summary(patch)
    elif name == "Write":
        parts = [f"Write {path}", _text(tool_input.get("content"))]
    elif name == "Edit":
        parts = [f"Edit {path}", _text(tool_input.get("new_string"))]
    elif name == "MultiEdit":
        edits = tool_input.get("edits")
        parts = [f"Edit {path}"]
        if isinstance(edits, list):
            parts += [_text(e.get("new_string")) for e in edits if isinstance(e, dict)]
    else:  # Bash (Claude Code and Codex), and anything with a command
        parts = [_text(tool_input.get("description")), _text(tool_input.get("command"))]
        if not any(p.strip() for p in parts):
            parts = [_text(tool_input.get("content")), _text(tool_input.get("new_string"))]
    text = "\n".join(p.strip() for p in parts if p and p.strip())
    data = text.encode("utf-8")
    if len(data) > SUMMARY_MAX_BYTES:
        text = data[:SUMMARY_MAX_BYTES].decode("utf-8", errors="ignore")
    return text


# ---------------------------------------------------------------- the budget


def process_start_deadline(budget_s: float) -> float:
    """``time.monotonic()`` value at which the budget runs out, counted from process start.

    Interpreter start-up is part of what the agent waits for; where ``/proc``
    says when this process started, that time counts against the budget too.
    """
    now = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        start_ticks = int(fields[19])  # field 22 (starttime), counted after "(comm)"
        with open("/proc/uptime", "rb") as f:
            uptime = float(f.read().split()[0])
        ticks = os.sysconf("SC_CLK_TCK")
        elapsed = max(0.0, min(uptime - start_ticks / ticks, 5.0))
    except (OSError, ValueError, IndexError, AttributeError):
        elapsed = 0.0
    return now - elapsed + budget_s


# ---------------------------------------------------------------- HTTP


def _remaining(deadline: float) -> float:
    left = deadline - EXIT_MARGIN - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


def request(
    method: str,
    path: str,
    body: dict[str, Any] | None,
    *,
    port: int,
    token: str | None,
    deadline: float,
) -> tuple[int, Any]:
    """One HTTP/1.1 request to 127.0.0.1:port, all of it before ``deadline``."""
    data = b"" if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
    head = [
        f"{method} {path} HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Connection: close",
        "Content-Type: application/json",
        f"Content-Length: {len(data)}",
    ]
    if token:
        head.append(f"Authorization: Bearer {token}")
    message = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data
    sock = socket.create_connection(("127.0.0.1", port), timeout=_remaining(deadline))
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(_remaining(deadline))
        sock.sendall(message)
        chunks: list[bytes] = []
        while True:
            sock.settimeout(_remaining(deadline))
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        sock.close()
    raw = b"".join(chunks)
    header, _, payload = raw.partition(b"\r\n\r\n")
    status_line = header.split(b"\r\n", 1)[0].split()
    if len(status_line) < 2 or not status_line[1].isdigit():
        raise HookFailure("the endpoint's answer is not HTTP; tool allowed")
    status = int(status_line[1])
    try:
        parsed = json.loads(payload) if payload.strip() else {}
    except ValueError:
        raise HookFailure(f"the endpoint answered {status} without JSON; tool allowed") from None
    return status, parsed


def _error_message(answer: Any) -> str:
    if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
        return str(answer["error"].get("message", ""))[:200]
    return ""


# ---------------------------------------------------------------- subcommands


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
    output = answer.get("output") if isinstance(answer, dict) else None
    return json.dumps(output, ensure_ascii=False) if isinstance(output, dict) else None


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
    if isinstance(answer.get("output"), dict):
        return json.dumps(answer["output"], ensure_ascii=False)
    context = answer.get("additionalContext")
    if isinstance(context, str) and context.strip():
        output = {
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": context,
            }
        }
        return json.dumps(output, ensure_ascii=False)
    return None


def sessionstart(opts: dict[str, Any], deadline: float) -> str | None:
    """Start ``antinomy serve`` in the background unless the endpoint answers. Prints nothing
    (a SessionStart hook's stdout would become context for the agent)."""
    if sys.stdin is not None and not sys.stdin.isatty():
        sys.stdin.read(_STDIN_MAX)  # the agent's payload; nothing in it is needed
    port = endpoint_port(opts.get("port"))
    try:
        status, _ = request("GET", "/healthz", None, port=port, token=None, deadline=deadline)
        if status == 200:
            return None
    except (OSError, HookFailure):
        pass
    lock = _config_file("serve-starting")
    try:
        if time.time() - os.stat(lock).st_mtime < 30:
            return None  # another session is starting it right now
    except OSError:
        pass
    os.makedirs(config_dir(), exist_ok=True)
    with open(lock, "w", encoding="utf-8") as f:
        f.write(str(os.getpid()))
    command = [sys.executable, "-m", "desktop.cli.main", "serve", "--port", str(port)]
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
    raise HookFailure(f"endpoint was down; starting `antinomy serve` on port {port}")


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
        else:
            raise HookFailure(f"unknown option {flag} {value}".rstrip() + "; nothing done")
    return argv[0], opts


def main(argv: list[str] | None = None) -> int:
    """Always returns 0: the agent's tool runs unless the endpoint asked otherwise on stdout."""
    deadline = process_start_deadline(BUDGET_MS / 1000)
    try:
        command, opts = parse_args(list(sys.argv[1:] if argv is None else argv))
        if "budget_ms" in opts:
            deadline = process_start_deadline(opts["budget_ms"] / 1000)
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
