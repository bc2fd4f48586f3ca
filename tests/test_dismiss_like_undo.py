"""An undone "dismiss all like this" takes back both halves: the dismissal (the journal) and
the hidden frame (``unhide_frames_of`` with the operation's id)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.flows.hunter.labels import LabelStore
from desktop.flows.review import dismiss_like, unhide_frames_of
from desktop.vault.index import VaultIndex
from desktop.vault.transactions import undo_operation
from tests import learning_vault as lv


@pytest.fixture
def index(tmp_path: Path) -> Iterator[VaultIndex]:
    root = tmp_path / "vault"
    root.mkdir()
    idx = lv.make_index(root)
    yield idx
    idx.close()


def test_the_frame_remembers_its_dismissal_and_goes_with_its_undo(index: VaultIndex) -> None:
    root = index.root
    first = lv.run_scan(index)
    p = next(p for p in first.pairs if not lv.is_omega(p))
    result, frame = dismiss_like(
        root, p.path_a, p.path_b, quote_a=p.quote_a, quote_b=p.quote_b,
        on_change=index.update_paths,
    )  # fmt: skip
    assert result.operation_id and frame.operation_id == result.operation_id
    assert [f.operation_id for f in LabelStore(root).read().frames] == [result.operation_id]
    second = lv.run_scan(index)
    assert len(second.pairs) + second.learning.hidden_like == 14

    assert unhide_frames_of(root, ["some-other-operation"]) == []
    undo_operation(root, result.operation_id, on_change=index.update_paths)
    shown = unhide_frames_of(root, [result.operation_id])
    assert [f.key for f in shown] == [frame.key]
    assert LabelStore(root).read().frames == []
    assert len(lv.run_scan(index).pairs) == 15
