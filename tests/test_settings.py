"""The typed settings object: defaults, round trip, validation, recent vaults."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from desktop.flows.settings import (
    MAX_RECENT,
    BackendSettings,
    EndpointSettings,
    FolderSettings,
    ScanCaps,
    Settings,
    SettingsInvalid,
    load_settings,
    save_settings,
    settings_from_dict,
    settings_path,
)


def test_defaults_when_nothing_was_saved(antinomy_home: Path) -> None:
    assert not settings_path().exists()
    s = load_settings()
    assert s == Settings()
    assert (
        s.scan.cap == 20 and s.scan.body_chars == 800 and s.scan.types == ("tension", "substrate")
    )
    # The guard's threshold and mode live with each vault (desktop.flows.guard), not here.
    assert not hasattr(s, "guard")
    assert s.folders.debug == "Antinomy/Debug"
    assert settings_path().is_relative_to(antinomy_home)


def test_round_trip_keeps_every_value(tmp_path: Path) -> None:
    s = Settings(
        backend=BackendSettings(kind="http", base_url="http://10.1.2.3:8080/v1", model="q"),
        scan=ScanCaps(cap=7, body_chars=300, types=("tension",), neighbours=3),
        endpoint=EndpointSettings(port=9123),
        folders=FolderSettings(debug="Meta/Debug"),
    ).with_vault_opened(tmp_path)
    save_settings(s)
    assert load_settings() == s


def test_recent_vaults_newest_first_without_duplicates(tmp_path: Path) -> None:
    s = Settings()
    for i in range(MAX_RECENT + 3):
        s = s.with_vault_opened(tmp_path / f"v{i}")
    s = s.with_vault_opened(tmp_path / "v5")
    assert s.recent_vaults[0] == str((tmp_path / "v5").resolve())
    assert len(s.recent_vaults) == MAX_RECENT
    assert len(set(s.recent_vaults)) == MAX_RECENT
    assert s.last_vault == s.recent_vaults[0]


def test_runtime_settings_follow_the_backend() -> None:
    assert Settings().runtime_settings().backend == "embedded"
    s = Settings(backend=BackendSettings(kind="http", base_url="http://127.0.0.1:1/v1", model="m"))
    rs = s.runtime_settings()
    assert rs.backend == "http" and rs.http is not None and rs.http.base_url.endswith("/v1")


@pytest.mark.parametrize(
    ("url", "leaves"),
    [
        ("http://127.0.0.1:8080/v1", False),
        ("http://localhost:11434/v1", False),
        ("http://[::1]:8080/v1", False),
        ("http://192.168.1.20:8080/v1", True),
        ("https://api.example.com/v1", True),
    ],
)
def test_leaves_machine_only_for_non_loopback_hosts(url: str, leaves: bool) -> None:
    assert BackendSettings(kind="http", base_url=url).leaves_machine is leaves
    assert BackendSettings().leaves_machine is False


def test_http_backend_needs_a_url() -> None:
    with pytest.raises(SettingsInvalid, match=r"backend.base_url must be an http\(s\) URL"):
        BackendSettings(kind="http", base_url="localhost:8080")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: ScanCaps(cap=1), "scan.cap must be between 2 and 500 notes, not 1."),
        (lambda: ScanCaps(body_chars=5), "scan.body_chars must be between 100 and 20000, not 5."),
        (lambda: ScanCaps(types=()), "scan.types must name at least one note type"),
        (lambda: FolderSettings(debug="../out"), "folders.debug must be a folder inside the vault"),
        (lambda: FolderSettings(debug=".antinomy"), "folders.debug must be a folder inside"),
    ],
)
def test_bad_values_name_the_key(make, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SettingsInvalid) as info:
        make()
    assert message in str(info.value)


def test_damaged_file_is_reported_not_overwritten() -> None:
    path = settings_path()
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(SettingsInvalid, match=r"is not valid JSON .* delete it to start"):
        load_settings()
    assert path.read_text(encoding="utf-8") == "{not json"


def test_bad_value_in_file_names_file_and_key() -> None:
    path = settings_path()
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"endpoint": {"port": 80}}), encoding="utf-8")
    with pytest.raises(SettingsInvalid, match=r"settings.json has a bad value: endpoint.port"):
        load_settings()
    path.write_text(json.dumps({"scan": {"cap": "20"}}), encoding="utf-8")
    with pytest.raises(SettingsInvalid, match=r"scan.cap has the wrong type: '20'"):
        load_settings()


def test_unknown_and_missing_keys() -> None:
    path = settings_path()
    path.parent.mkdir(parents=True)
    old = {"scan": {"cap": 9, "future": 1}, "new_section": {}, "guard": {"threshold": 0.82}}
    path.write_text(json.dumps(old))
    s = load_settings()
    assert s.scan == replace(ScanCaps(), cap=9)
    assert s.endpoint == EndpointSettings()


def test_api_key_file_is_owner_only() -> None:
    s = Settings(backend=BackendSettings(kind="http", base_url="http://h:1/v1", api_key="sk-x"))
    path = save_settings(s)
    assert path.stat().st_mode & 0o077 == 0
    assert not list(path.parent.glob(".settings-*"))  # no temp file left behind


def test_scan_settings_carry_the_caps() -> None:
    s = Settings(scan=ScanCaps(cap=5, body_chars=200, types=("tension",), neighbours=2))
    hs = s.scan_settings()
    assert (hs.cap, hs.body_chars, hs.types, hs.neighbours) == (5, 200, ("tension",), 2)


def test_llm_threads_override_reaches_the_runtime() -> None:
    assert Settings().runtime_settings().llama.threads == 0  # chosen from the free cores
    chosen = settings_from_dict({"performance": {"llm_threads": 1}})
    assert chosen.runtime_settings().llama.threads == 1


def test_the_embedder_precision_reaches_the_runtime() -> None:
    # int8 by default (docs/benchmarks.md, "Precision")
    assert Settings().runtime_settings().embedder.int8
    fp32 = settings_from_dict({"performance": {"embedder_int8": False}})
    assert not fp32.runtime_settings().embedder.int8
    with pytest.raises(SettingsInvalid, match=r"performance.embedder_int8 has the wrong type"):
        settings_from_dict({"performance": {"embedder_int8": "no"}})


@pytest.mark.parametrize("value", [-1, 65])
def test_bad_llm_threads_are_refused_by_name(value: int) -> None:
    with pytest.raises(SettingsInvalid) as info:
        settings_from_dict({"performance": {"llm_threads": value}})
    assert "performance.llm_threads must be 0 (choose from the free cores)" in str(info.value)
    with pytest.raises(SettingsInvalid, match=r"performance.llm_threads has the wrong type: '2'"):
        settings_from_dict({"performance": {"llm_threads": "2"}})
