"""Where the models Antinomy ships are (the user's own state: :mod:`foundation.paths`)."""

from __future__ import annotations

from pathlib import Path


def models_dir() -> Path:
    """The ``models/`` folder: inside the wheel, or the source checkout."""
    packaged = Path(__file__).parent / "_data" / "models"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "models"
