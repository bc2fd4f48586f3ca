"""The application's shipped data: ``resources/`` in a checkout, bundled in the wheel."""

from __future__ import annotations

import shutil
from pathlib import Path


def resources_dir() -> Path:
    packaged = Path(__file__).parent / "_data" / "resources"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "resources"


def sample_vault_source() -> Path:
    return resources_dir() / "sample-vault"


def ensure_sample_vault(parent: Path) -> Path:
    """A private, writable copy of the sample vault under ``parent``, made once.

    The user dismisses and elevates tensions in it, so it must not be the
    shipped (possibly read-only) original.
    """
    target = parent / "sample-vault"
    if not target.is_dir():
        parent.mkdir(parents=True, exist_ok=True)
        staging = parent / ".sample-vault.partial"
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(sample_vault_source(), staging, symlinks=True)
        staging.replace(target)
    return target
