"""The second opinion as a saved setting: off by default, read once for every entry point,
and the note that the quotes leave this machine said whether it was asked or saved."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from desktop.cli import exits
from desktop.cli.main import main
from desktop.flows.settings import (
    BackendSettings,
    ScanCaps,
    Settings,
    SettingsInvalid,
    resolve,
    save_settings,
    settings_from_dict,
)


def test_off_by_default_and_the_saved_choice_reaches_the_scan() -> None:
    assert resolve(saved=Settings()).scan.second_opinion is False
    saved = replace(Settings(), scan=replace(ScanCaps(), second_opinion=True))
    assert resolve(saved=saved).scan.second_opinion is True
    assert settings_from_dict({"scan": {"second_opinion": True}}).scan.second_opinion is True


def test_a_bad_value_is_refused_with_the_key() -> None:
    with pytest.raises(SettingsInvalid) as raised:
        settings_from_dict({"scan": {"second_opinion": "yes"}})
    assert str(raised.value) == "scan.second_opinion has the wrong type: 'yes'."
    with pytest.raises(SettingsInvalid) as raised:
        ScanCaps(second_opinion=1)  # type: ignore[arg-type]
    assert str(raised.value) == "scan.second_opinion must be true or false, not 1."


def test_a_saved_second_opinion_from_a_remote_server_is_said_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save_settings(
        replace(
            Settings(),
            backend=BackendSettings(kind="http", base_url="http://192.0.2.7:8080/v1"),
            scan=replace(ScanCaps(), second_opinion=True),
        )
    )
    code = main(["scan", "--vault", str(tmp_path / "missing")])
    err = capsys.readouterr().err
    assert code == exits.USAGE  # the missing vault stops it, after the note
    assert (
        "antinomy: note: the language model server http://192.0.2.7:8080/v1 is not on this "
        "machine — the two sentences of every pair about to be shown are sent to it"
    ) in err
