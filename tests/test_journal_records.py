"""Journal records are held to the rules of plans: a crafted record touches nothing outside.

Recovery removes the folders a record says it created, restores the files it
names and deletes its before-images by operation id; a record that names a
path or id no plan could hold is refused before any of that, with the record
left in place.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from desktop.vault.transactions import list_history, recover_vault
from desktop.vault.transactions.errors import RecordUnsafe
from desktop.vault.transactions.journal import JOURNAL_SCHEMA, JournalEntry, JournalRecord
from tests.vault_files import snapshot

SHA = "0" * 64


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / ".antinomy" / "journal" / "pending").mkdir(parents=True)
    (root / ".antinomy" / "journal" / "done").mkdir()
    (root / ".antinomy" / "journal" / "images").mkdir()
    (root / "Note.md").write_text("hello\n")
    return root.resolve()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """Things beside the vault a crafted record aims at: empty folders, a folder with a
    file, and a JSON file."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "full" / "keep").mkdir(parents=True)
    (tmp_path / "full" / "keep" / "file").write_text("precious\n")
    (tmp_path / "full.json").write_text('{"mine": 1}\n')
    return tmp_path


def _record(**changes: Any) -> dict[str, Any]:
    record = JournalRecord(
        operation_id="edit-1",
        operation_type="edit",
        summary="an edit",
        plan_sha256=SHA,
        status="pending",
        started_at="2024-05-01T10:00:00.000+00:00",
        seq=1,
        entries=(JournalEntry("create", "Notes/new.md", None, SHA),),
        created_dirs=("Notes",),
    )
    return {"schema": JOURNAL_SCHEMA, **asdict(record), **changes}


def _plant(vault: Path, data: dict[str, Any], *, folder: str = "pending", name: str = "") -> Path:
    path = vault / ".antinomy" / "journal" / folder / f"{name or data['operation_id']}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _outside_state(outside: Path) -> list[str]:
    found = (p.relative_to(outside) for p in outside.rglob("*"))
    return sorted(p.as_posix() for p in found if p.parts[0] != "vault")


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"created_dirs": ["{outside}/empty"]}, "it is absolute"),
        ({"created_dirs": ["../empty"]}, "it is not a normalised path inside the vault"),
        ({"created_dirs": ["Notes/../../empty"]}, "it is not a normalised path inside the vault"),
        ({"entries": [["create", "../full.json", None, SHA]]}, "it is not a normalised path"),
        ({"entries": [["create", ".antinomy/lock", None, SHA]]}, "inside .antinomy/"),
        ({"conflicts": ["/etc/passwd"]}, "it is absolute"),
    ],
)
def test_a_record_naming_paths_outside_the_vault_is_refused_and_kept(
    vault: Path, outside: Path, changes: dict[str, Any], why: str
) -> None:
    data = _record(**changes)
    data["created_dirs"] = [d.replace("{outside}", str(outside)) for d in data["created_dirs"]]
    data["entries"] = [
        dict(zip(("action", "path", "before_sha256", "after_sha256"), e, strict=True))
        if isinstance(e, list)
        else e
        for e in data["entries"]
    ]
    record = _plant(vault, data)
    before_outside, before_vault = _outside_state(outside), snapshot(vault)
    with pytest.raises(RecordUnsafe) as info:
        recover_vault(vault)
    message = str(info.value)
    assert message.startswith(f"The journal record {record} was not written by Antinomy: ")
    assert why in message
    assert message.endswith(
        "Nothing was changed — move the record out of the journal folder to look at it, then"
        " run `antinomy tx recover` again."
    )
    assert record.exists()
    assert _outside_state(outside) == before_outside
    assert snapshot(vault) == before_vault


def test_an_operation_id_that_climbs_out_of_the_journal_is_refused(
    vault: Path, outside: Path
) -> None:
    """The id names the before-image folder (removed whole) and the record files."""
    op = "../../../../full"
    record = _plant(vault, _record(operation_id=op), name="full")
    before = _outside_state(outside)
    with pytest.raises(RecordUnsafe, match=r"Bad operation_id '\.\./\.\./\.\./\.\./full'"):
        recover_vault(vault)
    assert _outside_state(outside) == before
    assert (outside / "full.json").read_text() == '{"mine": 1}\n'
    assert record.exists()


def test_a_record_filed_under_another_operation_is_refused(vault: Path) -> None:
    record = _plant(vault, _record(operation_id="edit-1"), name="edit-2")
    with pytest.raises(RecordUnsafe, match=r"it is named edit-2\.json but records 'edit-1'"):
        recover_vault(vault)
    assert record.exists()


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"status": "done"}, "its status 'done' is not one the engine writes"),
        ({"undoes": "../x"}, r"Bad operation_id '\.\./x'"),
        ({"entries": [{"action": "chmod", "path": "a.md", "before_sha256": None,
                       "after_sha256": None}]}, "a.md has the unknown action 'chmod'"),
        ({"entries": [{"action": "create", "path": "a.md", "before_sha256": None,
                       "after_sha256": "../x"}]}, "a.md has a hash that is not a sha256"),
        ({"entries": []}, "list of files is not one the engine writes"),
    ],
)  # fmt: skip
def test_other_values_no_engine_writes_are_refused(
    vault: Path, changes: dict[str, Any], match: str
) -> None:
    record = _plant(vault, _record(**changes))
    with pytest.raises(RecordUnsafe, match=match):
        recover_vault(vault)
    assert record.exists()


def test_a_crafted_final_record_is_refused_by_history_too(vault: Path) -> None:
    _plant(vault, _record(status="complete", created_dirs=["/tmp"]), folder="done")
    with pytest.raises(RecordUnsafe, match="it is absolute"):
        list_history(vault)


def test_a_sound_record_still_recovers(vault: Path) -> None:
    """The checks accept what the engine writes: created folders are removed again."""
    (vault / "Notes").mkdir()
    record = _plant(vault, _record())
    (report,) = recover_vault(vault)
    assert report.operation_id == "edit-1"
    assert not (vault / "Notes").exists()
    assert not record.exists()
