"""A dismissal reaches the next scan: a model that keeps proposing the pair is overruled.

The scripted engine answers every scan with the same pair, in both
orientations. After ``dismiss_pair`` (called as the GUI does, with the pair's
hashes as ``seen``) the next scan drops it as "dismissed"; ``undismiss_pair``
brings it back. The index follows each write through ``on_change``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.flows.hunter import ScanRun, scan
from desktop.flows.review import dismiss_pair, undismiss_pair
from desktop.vault.errors import VaultChanged
from desktop.vault.index import VaultIndex
from desktop.vault.vectors import EmbeddingModel
from tests.fakes import ScriptedGenerator, confirming_judge
from tests.test_index import BagOfWords

NOTES = {
    "Tensions/Rest days.md": (
        "---\ntype: tension\nstatus: open\n---\nI take every Monday off, no matter what.\n"
    ),
    "Substrates/Streak.md": "---\ntype: substrate\n---\nI run every single day of the year.\n",
    "Substrates/Garden.md": "---\ntype: substrate\n---\nTomatoes go out in May.\n",
}


def answer(first: str, second: str, quote_first: str, quote_second: str) -> str:
    pair = {
        "note_a": first,
        "note_b": second,
        "quote_a": quote_first,
        "quote_b": quote_second,
        "description": "One rests every Monday, the other never rests.",
        "confidence": "high",
    }
    return json.dumps({"pairs": [pair]})


FORWARD = answer("Rest days", "Streak", "every Monday off", "every single day")
BACKWARD = answer("Streak", "Rest days", "every single day", "every Monday off")


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


def run(index: VaultIndex, answer_text: str) -> ScanRun:
    return scan(index, ScriptedGenerator(answers=[answer_text]), judge=confirming_judge())


@pytest.mark.parametrize("proposal", [FORWARD, BACKWARD], ids=["a-b", "b-a"])
def test_dismissed_pair_is_dropped_then_back_after_undismiss(
    index: VaultIndex, proposal: str
) -> None:
    first = run(index, proposal)
    assert first.status == "ok"
    assert [(p.note_a, p.note_b) for p in first.pairs] in (
        [("Rest days", "Streak")],
        [("Streak", "Rest days")],
    )
    pair = first.pairs[0]

    result = dismiss_pair(
        index.root,
        pair.path_a,
        pair.path_b,
        seen={pair.path_a: pair.sha_a, pair.path_b: pair.sha_b},
        on_change=index.update_paths,
    )
    assert set(result.changed) == {"Tensions/Rest days.md", "Substrates/Streak.md"}

    for again in (FORWARD, BACKWARD):  # either orientation stays hidden
        later = run(index, again)
        assert later.status == "ok"
        assert later.pairs == ()
        assert later.dropped.get("dismissed") == 1

    undismiss_pair(index.root, pair.path_a, pair.path_b, on_change=index.update_paths)
    back = run(index, proposal)
    assert len(back.pairs) == 1 and "dismissed" not in back.dropped


def test_dismissing_a_pair_from_a_stale_scan_is_refused(index: VaultIndex) -> None:
    pair = run(index, FORWARD).pairs[0]
    streak = index.root / "Substrates" / "Streak.md"
    streak.write_text(streak.read_text() + "Edited after the scan.\n")
    with pytest.raises(VaultChanged, match="changed on disk since it was shown"):
        dismiss_pair(
            index.root,
            pair.path_a,
            pair.path_b,
            seen={pair.path_a: pair.sha_a, pair.path_b: pair.sha_b},
        )
    assert "hunter_false_positives" not in (index.root / pair.path_a).read_text()
