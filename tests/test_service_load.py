"""Load: 8 concurrent keep-alive clients for a few seconds — zero errors, memory stays put.

The 60-second version, with a report of requests/s and latencies, is
tests/perf/bench_endpoint.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from desktop.flows.guard import GuardSettings, save_guard_settings
from desktop.resources import sample_vault_source
from desktop.service.server import start_endpoint
from tests.service_util import TOKEN, run_load

pytestmark = pytest.mark.model


def test_eight_clients_for_five_seconds(runtime: Any, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(sample_vault_source(), vault)
    save_guard_settings(vault, GuardSettings(enabled=True))
    handle = start_endpoint(runtime=runtime, vault_root=vault, port=0, token=TOKEN, publish=False)
    try:
        assert handle.guard is not None and handle.guard.ready.wait(60)
        work = [
            ("/v1/embeddings", {"input": "Production releases go out every Friday."}),
            ("/v1/guard/check", {"summary": "rm /var/lib/billing/ledger.db", "session_id": "s"}),
            ("/api/embed", {"input": ["two", "texts at once"]}),
        ]
        run_load(handle.port, clients=8, seconds=1.0, requests=work)  # warm the allocator
        report = run_load(handle.port, clients=8, seconds=5.0, requests=work)
        assert report["error_count"] == 0, report["errors"]
        assert report["requests"] > 40
        assert report["rss_mib_after"] - report["rss_mib_before"] < 64, report
        assert len(handle.guard_log.records()) > 10
    finally:
        handle.stop()
