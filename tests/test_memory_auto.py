"""Automatic consolidation: after a batch closes, in the background, one at a time, switchable."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from desktop.flows.memory import last_report, pending_batches
from desktop.flows.memory.auto import AutoConsolidator
from desktop.flows.memory.consolidate import consolidation_lock
from desktop.flows.settings import (
    MemoryPrefs,
    Settings,
    SettingsInvalid,
    save_settings,
    settings_from_dict,
)
from desktop.service.memory_route import auto_consolidate_enabled
from tests.fakes import WordEmbedder
from tests.memory_helpers import RoutingGenerator, small_batch


def _auto(vault: Path, *, enabled: bool = True) -> tuple[AutoConsolidator, threading.Event]:
    closing = threading.Event()
    gen = RoutingGenerator()
    embedder = WordEmbedder()
    auto = AutoConsolidator(
        vault,
        generator=lambda: gen,
        embedder=lambda: embedder,
        judge=lambda: None,
        enabled=lambda: enabled,
        closing=closing,
        settle_seconds=0.05,
    )
    return auto, closing


def _wait(predicate: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_a_closed_batch_is_consolidated_after_a_notice(tmp_path: Path) -> None:
    small_batch(tmp_path)
    auto, closing = _auto(tmp_path)
    auto.notify()
    _wait(lambda: bool(auto.reports))
    assert auto.reports[0].status == "ok" and auto.reports[0].embedder_used
    assert last_report(tmp_path)["status"] == "ok"  # type: ignore[index]
    assert pending_batches(tmp_path) == []
    closing.set()
    auto.join(timeout=5)


def test_switched_off_it_does_nothing(tmp_path: Path) -> None:
    small_batch(tmp_path)
    auto, closing = _auto(tmp_path, enabled=False)
    assert auto.run_pending() == []
    assert last_report(tmp_path) is None and pending_batches(tmp_path)
    closing.set()


def test_one_at_a_time_a_held_lock_makes_it_wait(tmp_path: Path) -> None:
    small_batch(tmp_path)
    auto, closing = _auto(tmp_path)
    with consolidation_lock(tmp_path):
        (report,) = auto.run_pending()
    assert report.status == "already_running"
    assert pending_batches(tmp_path)  # nothing lost: it stays for the next notice
    assert [r.status for r in auto.run_pending()] == ["ok"]
    closing.set()


def test_the_worker_ends_when_the_endpoint_closes(tmp_path: Path) -> None:
    auto, closing = _auto(tmp_path)
    auto.notify()
    closing.set()
    auto.join(timeout=2)
    assert not any(t.name == "antinomy-auto-consolidate" for t in threading.enumerate())


def test_the_setting_is_read_from_the_settings_file() -> None:
    assert auto_consolidate_enabled() is True
    save_settings(Settings(memory=MemoryPrefs(auto_consolidate=False)))
    assert auto_consolidate_enabled() is False
    data = {"memory": {"auto_consolidate": False}}
    assert settings_from_dict(data).memory.auto_consolidate is False
    with pytest.raises(SettingsInvalid, match=r"memory.auto_consolidate has the wrong type: 'no'"):
        settings_from_dict({"memory": {"auto_consolidate": "no"}})


def test_a_run_that_fails_while_the_model_loads_is_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import desktop.flows.memory.auto as auto_module
    from foundation.errors import ModelUnavailable

    monkeypatch.setattr(auto_module, "RETRY_SECONDS", 0.05)
    small_batch(tmp_path)
    closing = threading.Event()
    gen = RoutingGenerator()
    asked: list[int] = []

    def generator() -> RoutingGenerator:
        asked.append(1)
        if len(asked) == 1:
            raise ModelUnavailable("The models are still loading.")
        return gen

    auto = AutoConsolidator(
        tmp_path,
        generator=generator,
        embedder=lambda: None,
        judge=lambda: None,
        enabled=lambda: True,
        closing=closing,
        settle_seconds=0.01,
    )
    auto.notify()
    _wait(lambda: bool(auto.reports))
    assert auto.reports[0].status == "ok" and len(asked) == 2
    closing.set()
    auto.join(timeout=5)
