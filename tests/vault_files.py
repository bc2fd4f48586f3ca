"""Helpers for tests that compare a vault's files before and after an operation."""

from __future__ import annotations

from pathlib import Path


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the vault outside .antinomy/, with its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".antinomy" not in p.relative_to(root).parts
    }


def leftovers(root: Path) -> list[Path]:
    """Temporary files a write or the journal left behind."""
    return [*root.rglob("*.antinomy-tmp"), *root.glob(".antinomy/journal/**/*.tmp")]
