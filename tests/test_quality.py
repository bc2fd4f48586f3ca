"""Lint, format, types and layer contracts run with the test suite."""

from __future__ import annotations

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
