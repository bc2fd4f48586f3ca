"""The bundled sample vault indexes as its expectations file says."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from desktop.resources import ensure_sample_vault, sample_vault_source
from desktop.vault.index import VaultIndex

EXPECTED = json.loads(
    (Path(__file__).parent / "data" / "sample_vault_expected.json").read_text(encoding="utf-8")
)
SKIPPED = {"invalid_yaml", "not_utf8", "binary", "too_large"}


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("sample") / "vault"
    shutil.copytree(sample_vault_source(), copy, symlinks=True)
    return copy


def test_every_bad_file_is_indexed_or_skipped_with_its_reason(sample: Path) -> None:
    index = VaultIndex(sample)
    report = index.update()
    coverage = {c.path: c for c in index.coverage()}
    assert report.files_seen == EXPECTED["counts"]["markdown_files"]
    for item in EXPECTED["bad_input"]:
        entry = coverage[item["path"]]
        if item["problem"] in SKIPPED:
            assert (entry.state, entry.reason) == ("skipped", item["problem"]), item
        else:
            assert entry.state == "indexed", item
    assert coverage["Projects/Roadmap.md"].reason == "duplicate_basename"
    assert coverage["Inbox/Untitled.md"].reason == "empty"
    skipped = sum(1 for i in EXPECTED["bad_input"] if i["problem"] in SKIPPED)
    assert report.notes_indexed == EXPECTED["counts"]["markdown_files"] - skipped
    assert not (sample / ".obsidian" / "index.db").exists()


def test_contradiction_quotes_are_in_the_indexed_bodies(sample: Path) -> None:
    index = VaultIndex(sample)
    index.update()
    squash = lambda s: re.sub(r"\s+", " ", s).strip().lower()  # noqa: E731
    for pair in EXPECTED["contradictions"]:
        for side in ("a", "b"):
            note = index.note(pair[f"note_{side}"])
            assert note is not None, pair[f"note_{side}"]
            assert squash(pair[f"quote_{side}"]) in squash(note.body)


def test_links_the_vault_declares_ambiguous_or_dangling(sample: Path) -> None:
    index = VaultIndex(sample)
    index.update()
    problems = {(s, t): p for s, t, p in index.broken_links()}
    for item in EXPECTED.get("ambiguous_links", []):
        assert problems.get((item["from"], item["target"])) == "ambiguous", item
    for item in EXPECTED.get("dangling_links", []):
        assert problems.get((item["from"], item["target"])) == "unresolved", item


def test_the_sample_vault_is_copied_once_for_the_user(tmp_path: Path) -> None:
    first = ensure_sample_vault(tmp_path)
    marker = first / "Journal" / "mine.md"
    marker.write_text("my own note")
    assert ensure_sample_vault(tmp_path) == first and marker.exists()
