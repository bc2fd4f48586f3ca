"""Lint, format, types and layer contracts run with the test suite."""

from __future__ import annotations

import ast
import io
import re
import shutil
import subprocess
import sys
import tokenize
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
        for folder in ("desktop", "foundation", "inference", "tests", "scripts", "packaging")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line) and path.name != "test_quality.py"
    ]
    assert found == []


#: A work session or an issue named by its number: how the code was developed, not what it is.
_DEV_WORDS = ("session", "issue")
_DATED = re.compile(
    rf"\b(?:{'|'.join(_DEV_WORDS)})s? #?\d|\bsince {_DEV_WORDS[0]}\b|\b{_DEV_WORDS[0]}-\d",
    re.IGNORECASE,
)


def _texts() -> list[Path]:
    """The repository's code and documentation (not the judge's training scenarios)."""
    paths = [
        path
        for folder in ("desktop", "foundation", "inference", "tests", "scripts", "packaging")
        for path in sorted((ROOT / folder).rglob("*.py"))
    ]
    for folder in ("docs", "models", "scripts"):
        paths += sorted((ROOT / folder).rglob("*.md"))
    paths += [ROOT / "README.md", ROOT / "models/manifest.toml"]
    paths.append(ROOT / "tests/data/retrieval_queries.json")
    return [p for p in paths if p.name != "test_quality.py"]


def test_nothing_dates_itself_by_how_it_was_developed() -> None:
    """State what is true now; history lives in git."""
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]}"
        for path in _texts()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _DATED.search(line)
    ]
    assert found == []


#: A path into the repository named in code or docs ("tests/perf/bench_guard.py").
_REPO_PATH = re.compile(
    r"(?<![\w./-])((?:desktop|inference|tests|scripts|docs|models|resources|packaging)"
    r"/[\w./-]*\w)"
)


def _comments_and_docstrings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of each comment and docstring of a Python file."""
    source = path.read_text(encoding="utf-8")
    out = [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc and node.body:
                out.append((node.body[0].lineno, doc))
    return out


def test_comments_name_only_files_the_repository_has() -> None:
    """A comment or docstring that names a file or folder of ours names one we have."""
    missing = [
        f"{path.relative_to(ROOT)}:{n}: {named}"
        for path in _texts()
        if path.suffix == ".py"
        for n, text in _comments_and_docstrings(path)
        for named in (m.group(1).rstrip(".") for m in _REPO_PATH.finditer(text))
        if not any(c in named for c in "*…<") and not (ROOT / named).exists()
    ]
    assert missing == []


#: The most lines a module of the product may have: past it, it holds more than one idea.
MAX_MODULE_LINES = 600


def test_no_module_of_the_product_grows_past_600_lines() -> None:
    too_long = {
        str(path.relative_to(ROOT)): n
        for folder in ("desktop", "foundation", "inference")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert too_long == {}
