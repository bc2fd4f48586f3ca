"""Where the user's state lives: settings, caches, data.

``ANTINOMY_HOME`` relocates all user state (settings, caches, token) to one
folder; tests point it at a temporary directory.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

_APP = "antinomy"


def _home() -> Path | None:
    value = os.environ.get("ANTINOMY_HOME")
    return Path(value).expanduser() if value else None


def config_dir() -> Path:
    home = _home()
    return home / "config" if home else Path(platformdirs.user_config_dir(_APP))


def cache_dir() -> Path:
    home = _home()
    return home / "cache" if home else Path(platformdirs.user_cache_dir(_APP))


def data_dir() -> Path:
    home = _home()
    return home / "data" if home else Path(platformdirs.user_data_dir(_APP))
