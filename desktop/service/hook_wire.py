"""The hook client's wire: where the endpoint and its token are, the summary of a pending
change, the budget, and HTTP over a socket to a listener that must prove it holds the token
(:mod:`desktop.service.hook` is the command). Standard library only, no pathlib or typing:
it is imported on every tool call."""

from __future__ import annotations

import json
import os
import socket
import stat
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
    """The same folder as ``foundation.paths.config_dir()`` (platformdirs), without importing it."""
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
    """The endpoint's token, read without following a link (the endpoint refuses a token
    file that is one, and so does the hook)."""
    path = _config_file("endpoint-token")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if os.path.islink(path):
            raise HookFailure(
                f"the endpoint token file {path} is a symbolic link, not used; tool allowed"
            ) from None
        raise HookFailure(
            f"no endpoint token at {path} — run `antinomy serve` once; tool allowed"
        ) from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise HookFailure(f"the endpoint token file {path} is not a file; tool allowed")
        token = os.read(fd, 4096).decode("utf-8", "replace").strip()
    finally:
        os.close(fd)
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
