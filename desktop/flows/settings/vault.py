"""A vault's own settings: one JSON file per feature in ``<vault>/.antinomy/<feature>/``.

They travel with the vault (a copy keeps them) and are read with the same
field-typed parser as the app-wide settings, so a hand-edited file with a
wrong type gets a message naming the file and the key.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

from desktop.flows.settings.parse import ErrorFactory, from_mapping
from desktop.vault.layout import state_dir
from foundation import atomic

T = TypeVar("T")

SETTINGS_FILE = "settings.json"


def vault_settings_path(root: Path, feature: str) -> Path:
    """``<vault>/.antinomy/<feature>/settings.json`` (the folder is created)."""
    return state_dir(root, feature) / SETTINGS_FILE


def load_vault_settings(
    root: Path, feature: str, cls: type[T], *, error: ErrorFactory, fix: str
) -> T:
    """The feature's settings for this vault; the defaults when none were saved.

    A file that cannot be read, is not JSON or has a value of the wrong type
    raises ``error`` naming the file and ending with ``fix`` (the next step);
    values in range are the dataclass's own business.
    """
    path = vault_settings_path(root, feature)
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return cls()
    except (OSError, ValueError) as exc:
        raise error(f"{path} cannot be read ({exc}) — {fix[0].lower()}{fix[1:]}") from exc
    return from_mapping(
        cls, data, where=feature, error=lambda message: error(f"{path}: {message} {fix}")
    )


def save_vault_settings(root: Path, feature: str, settings: Any) -> Path:
    """Write the feature's settings for this vault, atomically."""
    return atomic.write_json(vault_settings_path(root, feature), asdict(settings))
