"""Transactions: plans, path confinement, inspect, apply, drift, idempotency, history, undo."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop.vault.errors import VaultBusy, VaultChanged, VaultError
from desktop.vault.layout import PROTECTED_DIRS, approval_identity, vault_id
from desktop.vault.transactions import (
    ApprovalMismatch,
    NothingToUndo,
    Plan,
    PlanInvalid,
    UnknownOperation,
    Write,
    apply_plan,
    approval_hash,
    build_undo_plan,
    faults,
    inspect_plan,
    list_history,
    plan_from_json,
    plan_to_json,
    recover_vault,
    undo_operation,
)
from desktop.vault.transactions.lock import vault_lock
from desktop.vault.transactions.paths import check_relative_path
from tests.vault_files import leftovers, snapshot


def sha(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "Notes").mkdir(parents=True)
    (root / "Notes" / "a.md").write_text("---\ntype: tension\n---\nAlpha\n")
    (root / "Notes" / "b.md").write_text("Beta\n")
    (root / "old.md").write_text("Old\n")
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "app.json").write_text("{}")
    return root.resolve()


def three_writes(root: Path, op: str = "edit-1") -> Plan:
    return Plan(
        op,
        "edit",
        "Edit a, add c, drop old",
        (
            Write.replace(
                "Notes/a.md",
                "---\ntype: tension\n---\nAlpha, revised\n",
                expected_sha256=sha((root / "Notes/a.md").read_bytes()),
            ),
            Write.create("Antinomy/Subjects/c.md", "Gamma\n"),
            Write.delete("old.md", expected_sha256=sha((root / "old.md").read_bytes())),
        ),
    )


def approve(root: Path, plan: Plan) -> str:
    return inspect_plan(root, plan).approval


# -- plans -----------------------------------------------------------------------------------


def test_plan_json_round_trip_and_canonical_form(vault: Path) -> None:
    plan = three_writes(vault)
    again = plan_from_json(plan_to_json(plan))
    assert again == plan
    canonical = plan.canonical_bytes()
    assert canonical.startswith(b'{"operation_id":"edit-1","operation_type":"edit",')
    data = json.loads(canonical)
    assert list(data) == sorted(data)
    assert list(data["writes"][0]) == sorted(data["writes"][0])
    assert data["writes"][2] == {
        "action": "delete",
        "path": "old.md",
        "expected_sha256": sha("Old\n"),
    }
    assert plan.sha256() == sha(canonical)


@given(st.text(max_size=200) | st.binary(max_size=200), st.text(min_size=1, max_size=50))
def test_any_content_survives_the_json_round_trip(content: str | bytes, summary: str) -> None:
    if not summary.strip():
        summary = "s"
    plan = Plan("p", "edit", summary, (Write.create("x.md", content),))
    again = plan_from_json(plan_to_json(plan))
    assert again == plan and again.canonical_bytes() == plan.canonical_bytes()
    expected = content.encode() if isinstance(content, str) else content
    assert again.writes[0].content == expected


def test_non_utf8_content_travels_as_base64_and_lone_surrogates_are_refused() -> None:
    raw = b"\xff\xfe binary \x00"
    plan = Plan("bin-1", "edit", "bytes", (Write.create("blob.md", raw),))
    text = plan_to_json(plan)
    assert '"content_base64"' in text and '"content"' not in text
    assert plan_from_json(text).writes[0].content == raw

    bad = json.dumps(
        {
            "operation_id": "x",
            "operation_type": "edit",
            "summary": "s",
            "writes": [
                {"action": "create", "path": "x.md", "expected_sha256": None, "content": "\ud800"}
            ],
        }
    )
    with pytest.raises(PlanInvalid) as info:
        plan_from_json(bad)
    assert str(info.value) == (
        "The content for x.md is not valid Unicode text (it has a lone surrogate) — give UTF-8"
        " text, or content_base64 for exact bytes."
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "The plan is not valid JSON (line 1, column 2: Expecting property name"),
        ("[]", "The plan must be a JSON object"),
        (
            '{"operation_id": "a", "operation_id": "b"}',
            "The plan has the key 'operation_id' twice in one object.",
        ),
        ('{"operation_id": NaN}', "The plan contains NaN, which is not JSON."),
        (
            '{"operation_id": "a", "operation_type": "edit", "summary": "s", "writes": [],'
            ' "extra": 1}',
            "Unknown key(s) in the plan: extra",
        ),
        (
            '{"operation_id": "a", "operation_type": "edit", "summary": "s", "writes": []}',
            "A plan needs at least one write.",
        ),
        (
            '{"operation_id": "../a", "operation_type": "edit", "summary": "s", "writes": []}',
            "Bad operation_id '../a'",
        ),
        (
            '{"operation_id": "a", "operation_type": "edit", "summary": "s", "writes":'
            ' [{"action": "create", "path": "a.md", "expected_sha256": "' + "0" * 64 + '",'
            ' "content": "x"}]}',
            "The create of a.md expects the file to exist",
        ),
        (
            '{"operation_id": "a", "operation_type": "edit", "summary": "s", "writes":'
            ' [{"action": "replace", "path": "a.md", "expected_sha256": null, "content": "x"}]}',
            "The replace of a.md needs expected_sha256",
        ),
        (
            '{"operation_id": "a", "operation_type": "edit", "summary": "s", "writes":'
            ' [{"action": "rename", "path": "a.md", "expected_sha256": null}]}',
            "write #1 (a.md): unknown action 'rename'",
        ),
    ],
)
def test_bad_plan_json_is_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(PlanInvalid) as info:
        plan_from_json(text)
    assert str(info.value).startswith(message)


def test_a_plan_writes_each_file_once() -> None:
    with pytest.raises(PlanInvalid, match=r"Notes/A\.md and notes/a\.md name the same file"):
        Plan("d", "edit", "s", (Write.create("Notes/A.md", "1"), Write.create("notes/a.md", "2")))
    with pytest.raises(
        PlanInvalid, match=r"x\.md cannot be both a file and the folder of x\.md/y\.md"
    ):
        Plan("d", "edit", "s", (Write.create("x.md", "1"), Write.create("x.md/y.md", "2")))


# -- path confinement ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("../x.md", "it is not a normalised path inside the vault"),
        ("Notes/../../x.md", "it is not a normalised path inside the vault"),
        ("./a.md", "it is not a normalised path inside the vault"),
        ("a//b.md", "it is not a normalised path inside the vault"),
        ("Notes/", "it is not a normalised path inside the vault"),
        ("/etc/passwd", "it is absolute; give a path relative to the vault folder"),
        ("C:/x.md", "it is absolute; give a path relative to the vault folder"),
        ("a\\b.md", "it uses a backslash; separate folders with '/'"),
        (".obsidian/app.json", "it is inside .obsidian/, which Antinomy never writes"),
        (".git/config", "it is inside .git/, which Antinomy never writes"),
        (".trash/x.md", "it is inside .trash/, which Antinomy never writes"),
        (".antinomy/journal/x.json", "it is inside .antinomy/, which Antinomy never writes"),
        ("Sub/.git/HEAD", "it is inside .git/, which Antinomy never writes"),
        (".Obsidian/app.json", "it is inside .Obsidian/, which Antinomy never writes"),
        ("a\x00b.md", "it contains a NUL byte"),
        ("a\nb.md", "it contains a control character"),
        ("x" * 300 + ".md", "a name in it is longer than 255 bytes"),
        ("/".join(["folder"] * 150) + "/x.md", "it is too long (1054 bytes; at most 1024)"),
    ],
)
def test_path_attacks_are_refused_at_plan_time(path: str, why: str) -> None:
    with pytest.raises(PlanInvalid) as info:
        Write.create(path, "x")
    assert why in str(info.value)
    assert str(info.value).startswith("Refused write path ")


def test_a_colon_in_a_note_name_is_not_a_drive_letter() -> None:
    assert Write.create("a: b.md", "x").path == "a: b.md"
    assert Write.create("Notes/c:d.md", "x").path == "Notes/c:d.md"
    with pytest.raises(PlanInvalid, match="absolute"):
        Write.create("C:", "x")


def test_the_refusal_message_is_exact() -> None:
    with pytest.raises(PlanInvalid) as info:
        Write.create("../x.md", "x")
    assert str(info.value) == (
        "Refused write path '../x.md': it is not a normalised path inside the vault"
        " (no '.', '..', '//', trailing '/')."
    )
    with pytest.raises(PlanInvalid) as info:
        Write.create("a\x00b.md", "x")
    assert str(info.value) == "Refused write path 'a\\\\0b.md': it contains a NUL byte."


SEGMENTS = st.sampled_from(
    ["a", "b.md", "..", ".", "", ".obsidian", ".Git", "x\x00", "ü", "C:", "~", " ", "\\"]
)
PATHS = st.text(alphabet=st.sampled_from("ab./\\\x00.-_ ") | st.characters(), max_size=40) | (
    st.lists(SEGMENTS | st.text(max_size=5), min_size=1, max_size=6).map("/".join)
)


@given(PATHS)
def test_accepted_paths_stay_inside_the_vault(path: str) -> None:
    try:
        check_relative_path(path)
    except PlanInvalid:
        return
    root = "/vault"
    joined = os.path.normpath(os.path.join(root, path))
    assert joined.startswith(root + "/")
    assert os.path.relpath(joined, root) == path
    assert not {p.casefold() for p in path.split("/")} & PROTECTED_DIRS


def test_symlinks_out_of_the_vault_are_refused(vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret\n")
    (vault / "out").symlink_to(outside, target_is_directory=True)
    (vault / "link.md").symlink_to(outside / "secret.md")
    (vault / "cfg").symlink_to(vault / ".obsidian", target_is_directory=True)
    cases = {
        "out/x.md": "it leads outside the vault through a symbolic link",
        "link.md": "it is a symbolic link; Antinomy does not write through links",
        "cfg/app.json": "it leads into .obsidian/ through a symbolic link",
    }
    for path, why in cases.items():
        write = (
            Write.create(path, "pwned\n")
            if path != "link.md"
            else Write.replace(path, "pwned\n", expected_sha256=sha("secret\n"))
        )
        plan = Plan("attack", "edit", "s", (write,))
        with pytest.raises(PlanInvalid, match=why):
            inspect_plan(vault, plan)
        # apply checks again on its own, even with a computed approval
        with pytest.raises(PlanInvalid, match=why):
            apply_plan(vault, plan, approval=approval_hash(plan, inspect_id(vault)))
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]
    assert (outside / "secret.md").read_text() == "secret\n"
    assert (vault / ".obsidian" / "app.json").read_text() == "{}"


def inspect_id(root: Path) -> str:
    return approval_identity(root)


def test_a_folder_swapped_for_a_link_after_inspect_is_refused(vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (vault / "Drafts").mkdir()
    plan = Plan("swap", "edit", "s", (Write.create("Drafts/x.md", "x\n"),))
    approval = approve(vault, plan)
    (vault / "Drafts").rmdir()
    (vault / "Drafts").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PlanInvalid, match="leads outside the vault"):
        apply_plan(vault, plan, approval=approval)
    assert list(outside.iterdir()) == []


def test_links_inside_the_vault_are_followed_but_two_names_for_one_file_are_refused(
    vault: Path,
) -> None:
    (vault / "Alias").symlink_to(vault / "Notes", target_is_directory=True)
    plan = Plan("via-link", "edit", "s", (Write.create("Alias/new.md", "n\n"),))
    apply_plan(vault, plan, approval=approve(vault, plan))
    assert (vault / "Notes" / "new.md").read_text() == "n\n"
    h = sha((vault / "Notes/b.md").read_bytes())
    both = Plan(
        "twice",
        "edit",
        "s",
        (
            Write.replace("Notes/b.md", "1", expected_sha256=h),
            Write.replace("Alias/b.md", "2", expected_sha256=h),
        ),
    )
    with pytest.raises(PlanInvalid, match=r"Notes/b\.md and Alias/b\.md are the same file"):
        inspect_plan(vault, both)


# -- inspect ---------------------------------------------------------------------------------


def test_inspect_previews_diffs_and_counts_and_binds_the_approval(
    vault: Path, tmp_path: Path
) -> None:
    plan = three_writes(vault)
    before = snapshot(vault)
    preview = inspect_plan(vault, plan)
    assert snapshot(vault) == before  # inspect writes no note
    assert (preview.count("create"), preview.count("replace"), preview.count("delete")) == (1, 1, 1)
    assert (preview.lines_added, preview.lines_removed) == (2, 2)
    assert preview.stale == ()
    a, c, old = preview.files
    assert a.diff == (
        "--- a/Notes/a.md\n+++ b/Notes/a.md\n@@ -1,4 +1,4 @@\n ---\n type: tension\n ---\n"
        "-Alpha\n+Alpha, revised\n"
    )
    assert c.diff.startswith("--- /dev/null\n+++ b/Antinomy/Subjects/c.md\n")
    assert old.diff.endswith("+++ /dev/null\n@@ -1 +0,0 @@\n-Old\n")
    assert len(preview.approval) == 64 and preview.approval == inspect_plan(vault, plan).approval

    # Bound to the vault: the same plan in another vault needs another approval.
    other = tmp_path / "other"
    other.mkdir()
    assert approval_hash(plan, inspect_id(other)) != preview.approval


def test_inspect_lists_files_that_changed_since_the_plan(vault: Path) -> None:
    plan = three_writes(vault)
    (vault / "Notes" / "a.md").write_text("edited in Obsidian\n")
    assert inspect_plan(vault, plan).stale == ("Notes/a.md",)


def test_inspect_does_not_diff_bytes_that_are_not_text(vault: Path) -> None:
    (vault / "blob.md").write_bytes(b"\xff\xfe\x00")
    plan = Plan(
        "b",
        "edit",
        "s",
        (Write.replace("blob.md", "text\n", expected_sha256=sha(b"\xff\xfe\x00")),),
    )
    (f,) = inspect_plan(vault, plan).files
    assert f.diff == "blob.md: not UTF-8 text (3 bytes → 5 bytes); no line diff shown.\n"


# -- apply -----------------------------------------------------------------------------------


def test_apply_writes_everything_journals_and_tells_the_index(vault: Path) -> None:
    plan = three_writes(vault)
    seen: list[tuple[str, ...]] = []
    result = apply_plan(
        vault, plan, approval=approve(vault, plan), on_change=lambda p: seen.append(tuple(p))
    )
    assert seen == [("Notes/a.md", "Antinomy/Subjects/c.md", "old.md")]
    assert (vault / "Notes/a.md").read_text().endswith("Alpha, revised\n")
    assert (vault / "Antinomy/Subjects/c.md").read_text() == "Gamma\n"
    assert not (vault / "old.md").exists()
    assert result.paths == plan.paths and not result.replayed
    assert [c.action for c in result.changes] == ["replace", "create", "delete"]
    assert (
        result.changes[2].before_sha256 == sha("Old\n") and result.changes[2].after_sha256 is None
    )
    assert leftovers(vault) == []
    record = json.loads((vault / ".antinomy/journal/done/edit-1.json").read_text())
    assert record["status"] == "complete" and record["plan_sha256"] == plan.sha256()
    assert (vault / ".antinomy/journal/images/edit-1/2").read_text() == "Old\n"


def test_wrong_or_tampered_approval_is_refused(vault: Path) -> None:
    plan = three_writes(vault)
    approval = approve(vault, plan)
    with pytest.raises(ApprovalMismatch, match="run `antinomy tx inspect` on it again"):
        apply_plan(vault, plan, approval="0" * 64)
    tampered = Plan(plan.operation_id, plan.operation_type, plan.summary, plan.writes[:2])
    with pytest.raises(ApprovalMismatch):
        apply_plan(vault, tampered, approval=approval)
    assert (vault / "old.md").exists()


def test_drift_between_inspect_and_apply_refuses_the_whole_plan(vault: Path) -> None:
    plan = three_writes(vault)
    approval = approve(vault, plan)
    (vault / "old.md").write_text("Old, edited meanwhile\n")
    before = snapshot(vault)
    with pytest.raises(VaultChanged) as info:
        apply_plan(vault, plan, approval=approval)
    assert info.value.paths == ("old.md",)
    assert str(info.value) == (
        "The vault changed since this plan was made: old.md. Nothing was written — re-read the"
        " notes, make a new plan and inspect it again."
    )
    assert snapshot(vault) == before
    assert list_history(vault) == ()
    assert not list((vault / ".antinomy" / "journal").glob("*/*.json"))


def test_a_file_that_appears_is_drift_for_a_create(vault: Path) -> None:
    plan = three_writes(vault)
    approval = approve(vault, plan)
    (vault / "Antinomy/Subjects").mkdir(parents=True)
    (vault / "Antinomy/Subjects/c.md").write_text("mine\n")
    with pytest.raises(VaultChanged) as info:
        apply_plan(vault, plan, approval=approval)
    assert info.value.paths == ("Antinomy/Subjects/c.md",)


def test_an_edit_during_the_write_is_never_overwritten(vault: Path) -> None:
    """Obsidian saves a later file of the plan while earlier ones are being written."""
    plan = three_writes(vault)
    approval = approve(vault, plan)
    original = snapshot(vault)

    def editor_saves(name: str) -> None:
        if name == "file:1:done":
            (vault / "old.md").write_text("typed just now\n")

    faults.set_hook(editor_saves)
    try:
        with pytest.raises(VaultChanged) as info:
            apply_plan(vault, plan, approval=approval)
    finally:
        faults.set_hook(None)
    assert info.value.paths == ("old.md",)
    assert "Everything this operation wrote was put back." in str(info.value)
    assert snapshot(vault) == {**original, "old.md": b"typed just now\n"}
    assert not (vault / "Antinomy").exists()  # the folders it made are gone too
    assert leftovers(vault) == []


def test_a_write_error_midway_puts_everything_back(vault: Path) -> None:
    plan = three_writes(vault)
    approval = approve(vault, plan)
    original = snapshot(vault)

    def disk_full(name: str) -> None:
        if name == "file:1:temp-synced":
            raise OSError(28, "No space left on device", "Antinomy/Subjects/c.md")

    faults.set_hook(disk_full)
    try:
        with pytest.raises(VaultError) as info:
            apply_plan(vault, plan, approval=approval)
    finally:
        faults.set_hook(None)
    assert str(info.value) == (
        "Could not write to the vault (No space left on device: Antinomy/Subjects/c.md)."
        " Everything this operation wrote was put back. Fix the cause and apply again."
    )
    assert snapshot(vault) == original
    assert leftovers(vault) == []
    # The same plan goes through once the cause is fixed.
    apply_plan(vault, plan, approval=approval)
    assert not (vault / "old.md").exists()


def test_same_id_same_content_returns_the_stored_result(vault: Path) -> None:
    plan = three_writes(vault)
    approval = approve(vault, plan)
    first = apply_plan(vault, plan, approval=approval)
    calls: list[object] = []
    again = apply_plan(vault, plan, approval=approval, on_change=calls.append)
    assert again.replayed and calls == []
    assert (again.operation_id, again.changes, again.applied_at) == (
        first.operation_id,
        first.changes,
        first.applied_at,
    )


def test_same_id_different_content_is_refused(vault: Path) -> None:
    plan = three_writes(vault)
    apply_plan(vault, plan, approval=approve(vault, plan))
    other = Plan("edit-1", "edit", "something else", (Write.create("z.md", "z\n"),))
    with pytest.raises(
        PlanInvalid, match=r"Operation edit-1 was already applied on .* with different"
    ):
        apply_plan(vault, other, approval=approve(vault, other))
    assert not (vault / "z.md").exists()


def test_replace_keeps_the_file_permissions(vault: Path) -> None:
    (vault / "Notes/b.md").chmod(0o600)
    plan = Plan(
        "p", "edit", "s", (Write.replace("Notes/b.md", "B\n", expected_sha256=sha("Beta\n")),)
    )
    apply_plan(vault, plan, approval=approve(vault, plan))
    assert stat.S_IMODE((vault / "Notes/b.md").stat().st_mode) == 0o600


def test_failing_index_callback_does_not_undo_the_change(
    vault: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(paths: object) -> None:
        raise RuntimeError("index is down")

    plan = three_writes(vault)
    apply_plan(vault, plan, approval=approve(vault, plan), on_change=broken)
    assert not (vault / "old.md").exists()
    assert "run `antinomy index` to refresh it" in caplog.text


def test_a_second_writer_in_the_same_process_is_busy_too(vault: Path) -> None:
    """Each writer opens its own descriptor, so two threads of the GUI exclude each other."""
    plan = three_writes(vault)
    approval = approve(vault, plan)
    with vault_lock(vault), pytest.raises(VaultBusy, match=f"pid {os.getpid()}"):
        apply_plan(vault, plan, approval=approval)
    apply_plan(vault, plan, approval=approval)  # free again once released


# -- recover ---------------------------------------------------------------------------------


def test_recover_with_nothing_pending_is_a_no_op(vault: Path) -> None:
    before = snapshot(vault)
    calls: list[object] = []
    assert recover_vault(vault, on_change=calls.append) == ()
    assert recover_vault(vault) == ()
    assert snapshot(vault) == before and calls == []


# -- history and undo ------------------------------------------------------------------------


def test_history_lists_completed_operations_newest_first(vault: Path) -> None:
    first = three_writes(vault)
    apply_plan(vault, first, approval=approve(vault, first))
    second = Plan("add-2", "ingest", "Add a source", (Write.create("Sources/s.md", "S\n"),))
    apply_plan(vault, second, approval=approve(vault, second))
    history = list_history(vault)
    assert [h.operation_id for h in history] == ["add-2", "edit-1"]
    assert history[0].operation_type == "ingest" and history[0].summary == "Add a source"
    assert history[1].paths == ("Notes/a.md", "Antinomy/Subjects/c.md", "old.md")
    assert history[1].applied_at <= history[0].applied_at
    assert all(h.undone_by is None for h in history)


def test_undo_restores_every_file_and_can_be_redone(vault: Path) -> None:
    original = snapshot(vault)
    plan = three_writes(vault)
    apply_plan(vault, plan, approval=approve(vault, plan))
    applied = snapshot(vault)
    seen: list[tuple[str, ...]] = []
    undo = undo_operation(vault, "edit-1", on_change=lambda p: seen.append(tuple(p)))
    assert snapshot(vault) == original
    assert not (vault / "Antinomy").exists()  # the folders it created went with it
    assert undo.operation_type == "undo" and undo.undoes == "edit-1"
    assert seen == [("Notes/a.md", "Antinomy/Subjects/c.md", "old.md")]
    assert list_history(vault)[1].undone_by == undo.operation_id

    with pytest.raises(NothingToUndo) as info:
        undo_operation(vault, "edit-1")
    assert str(info.value) == (
        f"Operation edit-1 was already undone by {undo.operation_id} — undo"
        f" {undo.operation_id} to bring it back."
    )
    redo = undo_operation(vault, undo.operation_id)
    assert snapshot(vault) == applied
    assert list_history(vault)[0].operation_id == redo.operation_id
    assert list_history(vault)[2].undone_by is None  # edit-1 is in effect again
    again = undo_operation(vault, "edit-1")
    assert snapshot(vault) == original and again.operation_id == "undo-edit-1-2"


def test_undo_refuses_if_a_file_changed_since(vault: Path) -> None:
    plan = three_writes(vault)
    apply_plan(vault, plan, approval=approve(vault, plan))
    (vault / "Antinomy/Subjects/c.md").write_text("Gamma, with my own notes\n")
    before = snapshot(vault)
    with pytest.raises(VaultChanged) as info:
        undo_operation(vault, "edit-1")
    assert info.value.paths == ("Antinomy/Subjects/c.md",)
    assert str(info.value).startswith(
        "Cannot undo edit-1: Antinomy/Subjects/c.md changed after it was applied, and undo"
        " never overwrites a later edit. Nothing was written"
    )
    assert snapshot(vault) == before
    assert list_history(vault)[0].undone_by is None


def test_undo_of_an_unknown_operation_names_the_next_step(vault: Path) -> None:
    with pytest.raises(UnknownOperation) as info:
        undo_operation(vault, "nope")
    assert str(info.value) == (
        "No applied operation 'nope' in this vault — `antinomy tx history` lists them."
    )


def test_undo_restores_exact_bytes_of_a_file_that_was_not_utf8(vault: Path) -> None:
    raw = b"caf\xe9 latin-1\r\n"
    (vault / "latin.md").write_bytes(raw)
    plan = Plan(
        "fix", "edit", "To UTF-8", (Write.replace("latin.md", "café\n", expected_sha256=sha(raw)),)
    )
    apply_plan(vault, plan, approval=approve(vault, plan))
    undo_plan = build_undo_plan(vault, "fix")
    assert '"content_base64"' in plan_to_json(undo_plan)
    undo_operation(vault, "fix")
    assert (vault / "latin.md").read_bytes() == raw


def test_an_approval_does_not_carry_over_to_a_copy_of_the_vault(
    vault: Path, tmp_path: Path
) -> None:
    import shutil

    plan = Plan("copy-check", "edit", "s", (Write.create("new.md", "x\n"),))
    approval = approve(vault, plan)
    copy = tmp_path / "copy"
    shutil.copytree(vault, copy)
    assert vault_id(copy) == vault_id(vault)  # the id travels with the folder…
    with pytest.raises(ApprovalMismatch):  # …but the approval does not
        apply_plan(copy, plan, approval=approval)
    assert not (copy / "new.md").exists()
