"""``antinomy-hook`` — the agent-hook client (Claude Code, Codex).

Started as a fresh process on every tool call, so it imports only the standard
library. It forwards the hook's JSON to the local endpoint and prints the
endpoint's answer. It fails open: when the endpoint is down, slow, or anything
goes wrong, it prints nothing and exits 0, so the agent is never blocked by
accident.
"""

from __future__ import annotations

import http.client
import json
import os
import sys
from pathlib import Path

#: The hook's whole budget; the endpoint answers well inside it when warm.
BUDGET_SECONDS = 0.3
DEFAULT_PORT = 8765


def _config_dir() -> Path:
    home = os.environ.get("ANTINOMY_HOME")
    if home:
        return Path(home).expanduser() / "config"
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "antinomy"


def _endpoint() -> tuple[int, str] | None:
    cfg = _config_dir()
    try:
        token = (cfg / "endpoint-token").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    port = int(os.environ.get("ANTINOMY_PORT", DEFAULT_PORT))
    return port, token


def main() -> int:
    try:
        payload = sys.stdin.read(1 << 20)
        endpoint = _endpoint()
        if endpoint is None or not payload.strip():
            return 0
        port, token = endpoint
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=BUDGET_SECONDS)
        conn.request(
            "POST",
            "/v1/guard/check",
            body=payload.encode("utf-8"),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
        )
        response = conn.getresponse()
        body = response.read(1 << 16)
        if response.status == 200 and body.strip():
            json.loads(body)  # only ever print well-formed JSON to the agent
            sys.stdout.write(body.decode("utf-8"))
    except Exception:  # fail open, whatever happened
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
