"""Settings resolved once: the window, ``serve`` and every CLI command read one saved file
the same way (desktop.flows.settings.resolve), and a command's flags go on top."""

from __future__ import annotations

import argparse
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from desktop.cli.main import main
from desktop.cli.model_options import add_model_options, runtime_settings
from desktop.flows.embedding import embedding_model
from desktop.flows.settings import (
    BackendSettings,
    FolderSettings,
    Overrides,
    PerformanceSettings,
    Settings,
    load_settings,
    resolve,
    save_settings,
)
from desktop.ui.controller import default_runtime
from inference.engines import open_embedder


def _saved() -> Settings:
    """A settings file a user changed: fp32 embedder, 2 LLM threads, their own server and
    folders."""
    settings = replace(
        Settings(),
        backend=BackendSettings(kind="http", base_url="http://127.0.0.1:9/v1", model="qwen"),
        performance=PerformanceSettings(llm_threads=2, embedder_int8=False),
        folders=FolderSettings(principles="Rules", subjects="People and projects"),
    )
    save_settings(settings)
    return settings


def _model_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_model_options(parser)
    return parser.parse_args(list(argv))


def test_a_command_without_flags_runs_what_the_window_runs(antinomy_home: Path) -> None:
    saved = _saved()
    window = default_runtime(load_settings())
    try:
        cli = runtime_settings(_model_args())  # serve and doctor
        assert cli == window.settings
        assert cli.backend == "http" and cli.http is not None and cli.http.model == "qwen"
        assert cli.llama.threads == 2 and cli.embedder.int8 is False
    finally:
        window.close()
    assert resolve().folders == saved.folders


def test_flags_go_on_top_of_the_saved_settings_and_only_what_they_name(
    antinomy_home: Path,
) -> None:
    _saved()
    cli = runtime_settings(_model_args("--backend", "embedded", "--threads", "3"))
    assert cli.backend == "embedded" and cli.http is None
    assert cli.llama.threads == 3
    assert cli.embedder.int8 is False  # not named by a flag: as saved
    served = runtime_settings(_model_args("--base-url", "http://127.0.0.1:8/v1", "--model", "m"))
    assert served.backend == "http" and served.http is not None
    assert served.http.base_url == "http://127.0.0.1:8/v1"
    r = resolve(Overrides(folders={"principles": "Elsewhere"}, scan={"max_pairs": 50}))
    assert r.folders.principles == "Elsewhere" and r.folders.subjects == "People and projects"
    assert r.scan.max_pairs == 50


def test_a_bad_override_is_refused_like_a_bad_saved_value(antinomy_home: Path) -> None:
    from desktop.flows.settings import SettingsInvalid

    with pytest.raises(SettingsInvalid, match=r"folders\.principles must be a folder inside"):
        resolve(Overrides(folders={"principles": "../outside"}))
    with pytest.raises(SettingsInvalid, match=r"performance\.llm_threads"):
        resolve(Overrides(llm_threads=99))


def test_elevate_from_the_cli_uses_the_saved_principles_folder(
    antinomy_home: Path, tmp_path: Path
) -> None:
    _saved()
    vault = tmp_path / "vault"
    (vault / "Tensions").mkdir(parents=True)
    (vault / "Tensions" / "Speed vs care.md").write_text(
        "---\ntype: tension\nstatus: open\n---\n# Speed vs care\n\nShip fast.\nReview first.\n",
        encoding="utf-8",
    )
    code = main(
        [
            "elevate",
            "Speed vs care",
            "--vault",
            str(vault),
            "--title",
            "Ship reviewed",
            "--if",
            "a change is ready",
            "--then",
            "review it the same day",
        ]
    )
    assert code == 0
    assert (vault / "Rules" / "Ship reviewed.md").is_file()
    assert not (vault / "Antinomy" / "Principles").exists()


@pytest.mark.model
def test_the_cli_index_and_the_window_record_the_same_embedder(
    antinomy_home: Path, tmp_path: Path
) -> None:
    """With the fp32 embedder saved, ``antinomy index`` recorded "(int8)" and the window
    did not: each switch between them deleted every vector and re-embedded the vault."""
    _saved()
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "A.md").write_text("# A\n\nThe release goes out on Friday.\n", encoding="utf-8")
    assert main(["index", "--vault", str(vault)]) == 0
    db = sqlite3.connect(vault / ".antinomy" / "index.db")
    try:
        (recorded,) = db.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
    finally:
        db.close()
    window = default_runtime(load_settings())
    embedder = open_embedder(window.settings)  # what the window's runtime loads
    try:
        assert recorded == embedding_model(embedder).model_id
        assert "(int8)" not in recorded
    finally:
        embedder.close()
        window.close()


def test_memory_consolidation_from_the_cli_writes_into_the_saved_subjects_folder(
    antinomy_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.cli import memory_cmd
    from desktop.service.memory_route import memory_settings
    from tests.memory_helpers import RoutingGenerator, small_batch

    _saved()
    vault = tmp_path / "vault"
    vault.mkdir()
    small_batch(vault)
    monkeypatch.setattr(memory_cmd, "LazyGenerator", lambda runtime: RoutingGenerator())
    assert main(["consolidate", "--vault", str(vault), "--no-judge", "--json"]) == 0
    assert list((vault / "People and projects").glob("*.md"))
    assert not (vault / "Antinomy" / "Subjects").exists()
    # The endpoint's memory (capture, recall, background consolidation) reads it too.
    assert memory_settings().subjects_folder == "People and projects"
