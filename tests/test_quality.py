"""Lint, format, types and layer contracts run with the test suite."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = BIN / name
    found = str(path) if path.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed — install the test extra: pip install -e '.[test]'")
    return found


def _run(*cmd: str) -> None:
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(cmd)} failed:\n{result.stdout}\n{result.stderr}"


def test_ruff_lint() -> None:
    _run(_tool("ruff"), "check", ".")


def test_ruff_format() -> None:
    _run(_tool("ruff"), "format", "--check", ".")


def test_mypy() -> None:
    _run(_tool("mypy"))


def test_import_layers() -> None:
    _run(_tool("lint-imports"))


def test_comments_do_not_point_at_files_the_repository_lacks() -> None:
    """SPEC.md and MEASURED.md live beside the project, not in it: say the fact instead."""
    pattern = re.compile(r"SPEC §|\bSPEC\b|MEASURED")
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for folder in ("desktop", "inference", "tests", "scripts", "packaging")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line) and path.name != "test_quality.py"
    ]
    assert found == []
