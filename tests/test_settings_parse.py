"""Settings parsed from their dataclass fields: app-wide and per vault."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest

from desktop.flows.guard import GuardError, GuardSettings, load_guard_settings, save_guard_settings
from desktop.flows.settings import SettingsInvalid, settings_from_dict
from desktop.flows.settings.parse import from_mapping
from desktop.flows.settings.vault import load_vault_settings, vault_settings_path


class Bad(Exception):
    pass


@dataclass(frozen=True)
class Inner:
    words: tuple[str, ...] = ("a",)


@dataclass(frozen=True)
class Sample:
    count: int = 1
    ratio: float = 0.5
    on: bool = False
    name: str | None = None
    kind: Literal["x", "y"] = "x"
    inner: Inner = field(default_factory=Inner)


def parse(data: object) -> Sample:
    return from_mapping(Sample, data, where="sample", error=Bad)


def test_values_of_the_fields_types_are_taken() -> None:
    got = parse(
        {"count": 3, "ratio": 1, "on": True, "name": "n", "kind": "y", "inner": {"words": ["b"]}}
    )
    assert got == Sample(3, 1, True, "n", "y", Inner(("b",)))
    assert parse(None) == Sample() == parse({"unknown": 1})  # newer keys are ignored


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"count": True}, "sample.count has the wrong type: True."),
        ({"count": "3"}, "sample.count has the wrong type: '3'."),
        ({"ratio": "0.5"}, "sample.ratio has the wrong type: '0.5'."),
        ({"on": 1}, "sample.on has the wrong type: 1."),
        ({"name": 5}, "sample.name has the wrong type: 5."),
        ({"kind": 1}, "sample.kind has the wrong type: 1."),
        ({"inner": {"words": "b"}}, "sample.inner.words has the wrong type: 'b'."),
        ({"inner": [1]}, "'sample.inner' must be a table of settings, not [1]."),
        ([1], "'sample' must be a table of settings, not [1]."),
    ],
)
def test_a_wrong_type_names_the_key(data: object, message: str) -> None:
    with pytest.raises(Bad) as info:
        parse(data)
    assert str(info.value) == message


def test_app_settings_need_no_table_of_types() -> None:
    s = settings_from_dict({"scan": {"cap": 30, "types": ["tension"]}, "memory": {}})
    assert s.scan.cap == 30 and s.scan.types == ("tension",)
    with pytest.raises(SettingsInvalid, match=r"^memory.auto_consolidate has the wrong type: 1\.$"):
        settings_from_dict({"memory": {"auto_consolidate": 1}})


def test_a_vaults_settings_live_in_the_vault(tmp_path: Path) -> None:
    save_guard_settings(tmp_path, GuardSettings(enabled=True, threshold=0.6))
    path = tmp_path / ".antinomy" / "guard" / "settings.json"
    assert vault_settings_path(tmp_path, "guard") == path
    assert json.loads(path.read_text())["threshold"] == 0.6
    assert load_guard_settings(tmp_path) == GuardSettings(enabled=True, threshold=0.6)
    fix = "Fix it."
    assert load_vault_settings(tmp_path, "other", Sample, error=Bad, fix=fix) == Sample()


def test_a_hand_edited_guard_file_with_a_wrong_type_is_a_clear_error(tmp_path: Path) -> None:
    """It used to reach the range check and fail there with a bare TypeError."""
    save_guard_settings(tmp_path, GuardSettings(enabled=True))
    path = tmp_path / ".antinomy" / "guard" / "settings.json"
    path.write_text(json.dumps({"enabled": True, "threshold": "0.5"}))
    with pytest.raises(GuardError) as info:
        load_guard_settings(tmp_path)
    assert str(info.value) == (
        f"{path}: guard.threshold has the wrong type: '0.5'. "
        "Fix it or run `antinomy guard enable` again."
    )
