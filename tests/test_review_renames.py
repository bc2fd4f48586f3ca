"""Renamed notes keep their dismissals: from the index's rename report, or inferred."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.flows.review import (
    NoteNotFound,
    dismiss_pair,
    find_rename_fixes,
    fix_renames,
    infer_renames,
    list_dismissed,
)
from desktop.vault.index import VaultIndex
from desktop.vault.transactions import undo_operation
from tests.vault_files import snapshot


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = (tmp_path / "vault").resolve()
    (root / "T").mkdir(parents=True)
    (root / "T" / "Speed.md").write_bytes(b"---\ntype: tension\n---\nspeed\n")
    (root / "Care.md").write_bytes(b"---\ntype: substrate\n---\ncare\n")
    (root / "Calm.md").write_bytes(
        b"---\ntype: substrate\nhunter_false_positives: [Zed, 'Other']  # mine\n---\ncalm\n"
    )
    dismiss_pair(root, "T/Speed.md", "Care.md")
    dismiss_pair(root, "Calm.md", "T/Speed.md")
    return root


def test_index_reported_rename_is_fixed_in_every_peer(vault: Path) -> None:
    index = VaultIndex(vault)
    index.update()
    (vault / "T" / "Speed.md").rename(vault / "T" / "Velocity.md")
    report = index.update()
    index.close()
    assert report.renamed == (("T/Speed.md", "T/Velocity.md"),)

    fixes = find_rename_fixes(vault, report.renamed)
    assert [(f.old, f.new, f.notes) for f in fixes] == [
        ("Speed", "Velocity", ("Calm.md", "Care.md"))
    ]
    before = snapshot(vault)
    result, _ = fix_renames(vault, report.renamed)
    assert result.operation_id and result.operation_id.startswith("rename-fix-")
    assert set(result.changed) == {"Calm.md", "Care.md"}
    # Only the entry changed; the flow list, its quoting and comment stay.
    assert (vault / "Calm.md").read_bytes() == (
        b"---\ntype: substrate\nhunter_false_positives: [Zed, 'Other', Velocity]  # mine\n"
        b"---\ncalm\n"
    )
    assert (vault / "Care.md").read_bytes() == (
        b"---\ntype: substrate\nhunter_false_positives:\n  - Velocity\n---\ncare\n"
    )
    assert [(p.a, p.b, p.missing) for p in list_dismissed(vault) if "Velocity" in (p.a, p.b)] == [
        ("Calm", "Velocity", ()),
        ("Care", "Velocity", ()),
    ]
    undo_operation(vault, result.operation_id)
    assert snapshot(vault) == before


def test_renames_are_inferred_without_the_index(vault: Path) -> None:
    (vault / "T" / "Speed.md").rename(vault / "Velocity.md")
    assert infer_renames(vault) == [("Speed", "Velocity.md")]
    result, fixes = fix_renames(vault)  # None: infer
    assert [f.new for f in fixes] == ["Velocity"]
    assert set(result.changed) == {"Calm.md", "Care.md"}
    assert infer_renames(vault) == []
    again, fixes = fix_renames(vault)
    assert again.operation_id is None and fixes == []


def test_a_move_that_keeps_the_basename_needs_no_fix(vault: Path) -> None:
    (vault / "T" / "Speed.md").rename(vault / "Speed.md")
    assert find_rename_fixes(vault, [("T/Speed.md", "Speed.md")]) == []
    assert infer_renames(vault) == []


def test_a_rename_whose_old_name_is_taken_again_is_left_alone(vault: Path) -> None:
    (vault / "T" / "Speed.md").rename(vault / "T" / "Velocity.md")
    (vault / "Speed.md").write_bytes(b"a new note with the old name\n")
    assert find_rename_fixes(vault, [("T/Speed.md", "T/Velocity.md")]) == []


def test_inference_leaves_an_ambiguous_case_alone(vault: Path) -> None:
    (vault / "T" / "Speed.md").rename(vault / "Velocity.md")
    # A second renamed note with the very same peers: which old name is whose?
    (vault / "Pace.md").write_bytes(b"---\nhunter_false_positives: [Care, Calm]\n---\npace\n")
    assert infer_renames(vault) == []


def test_an_explicit_rename_to_no_note_is_refused(vault: Path) -> None:
    with pytest.raises(NoteNotFound, match=r"No note 'Nowhere\.md'"):
        fix_renames(vault, [("Speed", "Nowhere.md")])
