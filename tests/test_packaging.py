"""Packaging metadata stays consistent with the entry points and the icon."""

from __future__ import annotations

import configparser
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import foundation

ROOT = Path(__file__).resolve().parent.parent


def test_desktop_entry_launches_an_installed_script() -> None:
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read(ROOT / "packaging" / "antinomy.desktop", encoding="utf-8")
    desktop = entry["Desktop Entry"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    command = desktop["Exec"].split()[0]
    assert command in project["gui-scripts"] and command in project["scripts"]
    assert (ROOT / "resources" / "icons" / f"{desktop['Icon']}.svg").is_file()


def test_appstream_metadata_names_the_desktop_entry_and_version() -> None:
    root = ET.parse(ROOT / "packaging" / "io.antinomy.Antinomy.metainfo.xml").getroot()
    assert root.findtext("launchable") == "antinomy.desktop"
    versions = [r.get("version") for r in root.iter("release")]
    assert foundation.__version__ in versions
