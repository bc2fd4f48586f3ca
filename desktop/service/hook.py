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
import socket
import sys
import time

# No pathlib, no typing: each costs milliseconds of start-up on every tool call.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The hook's whole budget; the endpoint answers well inside it when warm.
BUDGET_MS = 300
#: ``sessionstart`` waits this long for the endpoint to be ready (the agent's own
#: timeout for that hook entry is longer: see hook_install.SESSIONSTART_TIMEOUT).
SESSIONSTART_BUDGET_MS = 20_000
#: Longest answer read from the endpoint, and longest text passed on to the agent.
_ANSWER_MAX = 1 << 20
_TEXT_MAX = 4000
_CONTEXT_MAX = 20_000
PROOF_PATH = "/v1/hello"
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
    """Codex's apply_patch (or a unified diff): the files touched and the added lines.

    Each file's header line (``Update path``), then its added lines; runs of added
    lines that the patch does not join (another hunk, a kept or removed line between
    them) are kept apart by a blank line, as separate MultiEdit edits are: the
    endpoint reads a file's new text by paragraphs."""
    parts: list[str] = []
    runs: list[str] = []
    run: list[str] = []
    for line in patch.splitlines():
        header = ""
        if line.startswith("*** ") and " File: " in line:
            verb, _, path = line[4:].partition(" File: ")
            header = f"{verb} {path.strip()}"
        elif line.startswith("+++ "):
            header = f"Update {line[4:].strip().removeprefix('b/')}"
        elif line.startswith("+"):
            run.append(line[1:])
            continue
        if run:
            runs.append("\n".join(run))
            run = []
        if header:
            if runs:
                parts.append("\n\n".join(runs))
                runs = []
            parts.append(header)
    if run:
        runs.append("\n".join(run))
    if runs:
        parts.append("\n\n".join(runs))
    return parts


def summarize(tool_name: Any, tool_input: Any, cwd: str = "") -> str:
    """What the pending tool call would do, as text to embed (at most 2 KB).

    File paths are made relative to the session's ``cwd``: the project's own
    folder names say nothing about the change. A file change opens with a header
    line (``Write <path>``, ``Edit <path>``; a patch, ``Add|Update|Delete <path>``
    before each file's added lines): the endpoint embeds the whole summary to find
    the near decisions, and judges only the text after the headers
    (desktop/flows/guard/change.py reads them; keep the two in step).
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
            # A blank line between edits: each is a piece of text of its own.
            new = (_text(e.get("new_string")).strip() for e in edits if isinstance(e, dict))
            parts.append("\n\n".join(n for n in new if n))
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


def _sha256() -> Any:
    """SHA-256 without ``hashlib``'s OpenSSL import (~10 ms on every tool call)."""
    import importlib  # already loaded by the interpreter's start-up: costs nothing

    for name in ("_sha256", "_sha2"):  # Python 3.11; 3.12 and later
        try:
            return importlib.import_module(name).sha256
        except ImportError:
            continue
    from hashlib import sha256

    return sha256


def hmac_sha256(key: bytes, message: bytes) -> str:
    """HMAC-SHA256 (RFC 2104) as hex — the same as ``hmac.new(key, message, 'sha256')``."""
    sha256 = _sha256()
    if len(key) > 64:
        key = sha256(key).digest()
    key = key.ljust(64, b"\0")
    inner = sha256(bytes(b ^ 0x36 for b in key) + message).digest()
    return str(sha256(bytes(b ^ 0x5C for b in key) + inner).hexdigest())


def proof_for(token: str, port: int, nonce: str) -> str:
    message = f"antinomy-endpoint-proof/1 port={port} nonce={nonce}".encode("ascii")
    return hmac_sha256(token.encode("utf-8"), message)


def _same(a: str, b: str) -> bool:
    from _operator import _compare_digest  # what hmac.compare_digest is

    return bool(_compare_digest(a.encode("utf-8"), b.encode("utf-8")))


class Connection:
    """One HTTP/1.1 keep-alive connection to 127.0.0.1:port; all of it before ``deadline``."""

    def __init__(self, port: int, deadline: float) -> None:
        self.port = port
        self.deadline = deadline
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=_remaining(deadline))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buffer = b""

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        *,
        headers: tuple[str, ...] = (),
        last: bool = True,
    ) -> tuple[int, Any]:
        data = b"" if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        head = [
            f"{method} {path} HTTP/1.1",
            f"Host: 127.0.0.1:{self.port}",
            "Connection: close" if last else "Connection: keep-alive",
            "Content-Type: application/json",
            f"Content-Length: {len(data)}",
            *headers,
        ]
        self.sock.settimeout(_remaining(self.deadline))
        self.sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data)
        while b"\r\n\r\n" not in self._buffer:
            self._receive()
        header, _, rest = self._buffer.partition(b"\r\n\r\n")
        lines = header.split(b"\r\n")
        status_line = lines[0].split()
        if len(status_line) < 2 or not status_line[1].isdigit():
            raise HookFailure("the answer on the endpoint's port is not HTTP; tool allowed")
        length = None
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length" and value.strip().isdigit():
                length = int(value.strip())
        if length is None or length > _ANSWER_MAX:
            if not last:
                raise HookFailure(
                    "the answer on the endpoint's port has no usable length; tool allowed"
                )
            while self._receive():
                pass
            payload, self._buffer = self._buffer.partition(b"\r\n\r\n")[2], b""
        else:
            while len(rest) < length:
                if not self._receive():
                    raise HookFailure("the endpoint's answer was cut short; tool allowed")
                rest = self._buffer.partition(b"\r\n\r\n")[2]
            payload, self._buffer = rest[:length], rest[length:]
        status = int(status_line[1])
        try:
            parsed = json.loads(payload) if payload.strip() else {}
        except ValueError:
            raise HookFailure(
                f"the endpoint answered {status} without JSON; tool allowed"
            ) from None
        return status, parsed

    def _receive(self) -> bool:
        self.sock.settimeout(_remaining(self.deadline))
        chunk = self.sock.recv(65536)
        if not chunk:
            if b"\r\n\r\n" not in self._buffer:
                raise HookFailure(
                    "the endpoint closed the connection without an answer; tool allowed"
                )
            return False
        self._buffer += chunk
        if len(self._buffer) > _ANSWER_MAX + 65536:
            raise HookFailure("the answer on the endpoint's port is too large; tool allowed")
        return True


def prove_endpoint(conn: Connection, token: str) -> None:
    """Make the listener prove it holds ``token`` before anything is sent to it."""
    nonce = os.urandom(18).hex()
    status, answer = conn.request(
        "GET", PROOF_PATH, None, headers=(f"X-Antinomy-Nonce: {nonce}",), last=False
    )
    proof = answer.get("proof") if isinstance(answer, dict) else None
    if (
        status != 200
        or not isinstance(proof, str)
        or not _same(proof, proof_for(token, conn.port, nonce))
    ):
        raise HookFailure(
            f"what listens on 127.0.0.1:{conn.port} did not prove it holds the endpoint token "
            "(another program on the port, an older Antinomy, or a changed token); nothing "
            "was sent to it, tool allowed"
        )


def request(
    method: str,
    path: str,
    body: dict[str, Any] | None,
    *,
    port: int,
    token: str | None,
    deadline: float,
) -> tuple[int, Any]:
    """One request on its own connection. With ``token``, the endpoint first proves it
    holds it (on the same connection); only then do the token and ``body`` go."""
    with Connection(port, deadline) as conn:
        if token is None:
            return conn.request(method, path, body)
        prove_endpoint(conn, token)
        return conn.request(method, path, body, headers=(f"Authorization: Bearer {token}",))


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
