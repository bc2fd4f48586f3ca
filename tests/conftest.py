"""Shared fixtures. Every test runs with ANTINOMY_HOME in a temporary folder."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Session-wide too: module- and session-scoped fixtures run before the per-test
# home below exists, and must not write to the developer's cache either.
os.environ["ANTINOMY_HOME"] = tempfile.mkdtemp(prefix="antinomy-test-home-")


#: Derived model copies (the int8 embedder, the judge's 7-bit copy: inference/derived.py)
#: take seconds to build; every test home shares one folder of them, built at most once a
#: session, unless the test is marked ``own_model_cache``.
_DERIVED = Path(os.environ["ANTINOMY_HOME"]) / "data" / "models"


@pytest.fixture(autouse=True)
def antinomy_home(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> Path:
    """Never touch the developer's own settings, caches or token."""
    home = tmp_path_factory.mktemp("antinomy-home")
    monkeypatch.setenv("ANTINOMY_HOME", str(home))
    if request.node.get_closest_marker("own_model_cache") is None:
        _DERIVED.mkdir(parents=True, exist_ok=True)
        (home / "data").mkdir()
        (home / "data" / "models").symlink_to(_DERIVED, target_is_directory=True)
    return home


@pytest.fixture(scope="session")
def runtime() -> Iterator[object]:
    """Both real shipped models, loaded and warmed once per test session."""
    from inference.runtime import Runtime

    rt = Runtime()
    rt.start()
    rt.wait_ready(timeout=120)
    yield rt
    rt.close()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--bundle",
        action="store_true",
        help="also build the PyInstaller bundle and run it (tests marked bundle; minutes)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--bundle"):
        return
    skip = pytest.mark.skip(reason="builds the bundle: run with --bundle (make bundle-check)")
    for item in items:
        if "bundle" in item.keywords:
            item.add_marker(skip)
