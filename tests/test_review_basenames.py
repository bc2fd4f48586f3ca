"""Pairs between notes that share a basename (a docs vault's many ``index.md``).

A dismissal names such a note by its path (``manual/api/index``; ``/index`` at the top of
the vault), so it hides that pair and no other, becomes a learning label, and is listed
and undismissed like any other; an entry Antinomia wrote by name (``[[index]]``) keeps
meaning every note of that name, as it always did.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.flows.hunter import ScanRun, scan
from desktop.flows.hunter.labels import LabelStore
from desktop.flows.review import DismissedPair, dismiss_pair, list_dismissed, undismiss_pair
from desktop.vault.frontmatter import parse_frontmatter
from desktop.vault.index import VaultIndex
from desktop.vault.vectors import EmbeddingModel
from tests.fakes import ScriptedGenerator, confirming_judge
from tests.test_index import BagOfWords
from tests.vault_files import snapshot

API, CLI, TOP, GUIDE = "docs/api/index.md", "docs/cli/index.md", "index.md", "guide/index.md"
NOTES = {
    API: "---\ntype: substrate\n---\nThe server listens on port 8080.\n",
    CLI: "---\ntype: substrate\n---\nThe server listens on port 9090.\n",
    TOP: "---\ntype: substrate\n---\nThe default port is 7070.\n",
    GUIDE: "---\ntype: substrate\n---\nRead the docs first.\n",
}
QUOTES = {API: "port 8080", CLI: "port 9090", TOP: "port is 7070"}


def answer(*pairs: tuple[str, str]) -> str:
    """The model proposes these pairs, naming each note as the prompt labels it."""
    return json.dumps(
        {
            "pairs": [
                {
                    "note_a": a.removesuffix(".md"),
                    "note_b": b.removesuffix(".md"),
                    "quote_a": QUOTES[a],
                    "quote_b": QUOTES[b],
                    "description": "Two different ports.",
                    "confidence": "high",
                }
                for a, b in pairs
            ]
        }
    )


PROPOSAL = answer((API, CLI), (API, TOP), (CLI, TOP))


@pytest.fixture
def index(tmp_path: Path) -> Iterator[VaultIndex]:
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    idx = VaultIndex(root, embedding=EmbeddingModel("bag-of-words", 64, BagOfWords()))
    idx.update()
    yield idx
    idx.close()


def run(index: VaultIndex) -> ScanRun:
    result = scan(index, ScriptedGenerator(answers=[PROPOSAL]), judge=confirming_judge())
    assert result.status == "ok"
    return result


def shown(index: VaultIndex) -> set[frozenset[str]]:
    return {frozenset((p.path_a, p.path_b)) for p in run(index).pairs}


def listed(root: Path, path: str) -> list[str]:
    value = parse_frontmatter((root / path).read_text()).get("hunter_false_positives")
    return list(value) if isinstance(value, list) else []


ALL = {frozenset((API, CLI)), frozenset((API, TOP)), frozenset((CLI, TOP))}


def test_a_pair_of_two_index_notes_is_dismissed_by_path_and_hides_only_itself(
    index: VaultIndex,
) -> None:
    root = index.root
    assert shown(index) == ALL
    before = snapshot(root)
    result = dismiss_pair(root, API, CLI, on_change=index.update_paths)
    assert result.summary == "Dismiss the pair docs/api/index ↔ docs/cli/index (not a tension)"
    assert listed(root, API) == ["docs/cli/index"] and listed(root, CLI) == ["docs/api/index"]
    after = run(index)
    assert {frozenset((p.path_a, p.path_b)) for p in after.pairs} == ALL - {frozenset((API, CLI))}
    assert after.dropped.get("dismissed") == 1

    top = dismiss_pair(root, TOP, API, on_change=index.update_paths)  # the vault's top note
    assert listed(root, API) == ["docs/cli/index", "/index"] and listed(root, TOP) == [
        "docs/api/index"
    ]
    assert top.operation_id is not None
    assert shown(index) == {frozenset((CLI, TOP))}

    assert list_dismissed(root) == [
        DismissedPair("/index", "docs/api/index", TOP, API, ()),
        DismissedPair("docs/api/index", "docs/cli/index", API, CLI, ()),
    ]
    undismiss_pair(root, API, CLI, on_change=index.update_paths)
    undismiss_pair(root, "index.md", "docs/api/index", on_change=index.update_paths)
    assert snapshot(root) == before
    assert shown(index) == ALL


def test_dismissed_index_pairs_become_learning_labels(index: VaultIndex) -> None:
    root = index.root
    dismiss_pair(root, API, CLI)
    dismiss_pair(root, TOP, CLI)
    (root / ".antinomy" / "learned.json").unlink()  # rebuilt from the notes alone
    negatives = {k for k, lab in LabelStore(root).read().labels.items() if not lab.positive}
    assert negatives == {(API, CLI), (CLI, TOP)}


def test_an_entry_written_by_name_keeps_its_old_meaning(index: VaultIndex) -> None:
    """Antinomia writes ``[[Name]]``: with several notes of that name it hides the pair
    with each of them (as before), and the list says the name is ambiguous."""
    root = index.root
    (root / API).write_text(
        "---\ntype: substrate\nhunter_false_positives: ['[[index]]']\n---\n"
        "The server listens on port 8080.\n"
    )
    index.update()
    assert shown(index) == {frozenset((CLI, TOP))}
    assert list_dismissed(root) == [
        DismissedPair("docs/api/index", "index", API, None, (), ("index",), False)
    ]
    result = undismiss_pair(root, API, CLI)
    assert result.changed == (API,) and listed(root, API) == []
    assert shown(index) == ALL
