"""``antinomy serve --open-embeddings`` as a user runs it: a process of its own, the
shipped models; Ollama's routes answer without the token, the rest still needs it."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from desktop.resources import sample_vault_source
from tests.service_util import call

pytestmark = pytest.mark.model

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_open_embeddings(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(sample_vault_source(), vault)
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "desktop.cli.main",
            "serve",
            "--vault",
            str(vault),
            "--port",
            str(port),
            "--open-embeddings",
        ],
        cwd=ROOT,
        env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                call(port, "GET", "/healthz", token=None, timeout=1)
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.1)
        # Right after start: waits for the embedder rather than answering 503.
        status, tags = call(port, "GET", "/api/tags", token=None, timeout=60)
        assert status == 200 and tags["models"][0]["name"] == "all-minilm-l6-v2:latest"
        status, answer = call(
            port, "POST", "/api/embed", {"model": "all-minilm", "input": "hi"}, token=None
        )
        assert status == 200 and len(answer["embeddings"][0]) == 384
        status, answer = call(port, "POST", "/v1/recall", {"query": "releases"}, token=None)
        assert status == 401
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    assert "embeddings open without the token (loopback only); the rest needs it" in out
    assert proc.returncode == 0
