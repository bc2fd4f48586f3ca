"""A refused plan leaves every file as it was, apart from the user's own saves.

The races are made to happen at a named step of the apply (``faults`` hooks),
not waited for: an editor that reloaded a note Antinomy had just written and
saved it with a line added, or that changed the second note before Antinomy
got to it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop.flows.review import dismiss_pair
from desktop.vault.errors import VaultChanged
from desktop.vault.transactions import Plan, Write, apply_plan, faults, inspect_plan, recover
from desktop.vault.transactions.merge import take_out
from tests.vault_files import leftovers

A = "---\ntype: claim\n---\nAlpha says yes.\n\nMore about alpha.\n"
B = "---\ntype: claim\n---\nBeta says no.\n"
TYPED = "typed by the user\n"


def sha(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "A.md").write_text(A)
    (root / "B.md").write_text(B)
    return root.resolve()


@pytest.fixture
def at_step() -> Iterator[Callable[[str, Callable[[], None]], None]]:
    """``at_step(name, action)``: run ``action`` once when the apply reaches step ``name``."""

    def install(step: str, action: Callable[[], None]) -> None:
        done: list[bool] = []

        def hook(name: str) -> None:
            if name == step and not done:
                done.append(True)
                action()

        faults.set_hook(hook)

    yield install
    faults.set_hook(None)


def editor_adds_a_line(path: Path) -> Callable[[], None]:
    """An editor that reloads the file as it is now and saves it with a line added."""
    return lambda: path.write_text(path.read_text() + TYPED)


def two_notes(root: Path) -> Plan:
    return Plan(
        "edit-1",
        "edit",
        "mark both notes",
        (
            Write.replace("A.md", A.replace("claim\n", "claim\nmark: 1\n"), expected_sha256=sha(A)),
            Write.replace("B.md", B.replace("claim\n", "claim\nmark: 1\n"), expected_sha256=sha(B)),
        ),
    )


def test_a_save_on_top_of_the_first_write_keeps_the_save_and_drops_the_change(
    vault: Path, at_step: Callable[[str, Callable[[], None]], None]
) -> None:
    """Left as it is, A would keep the operation's change (under the save) and B not."""
    plan = two_notes(vault)
    approval = inspect_plan(vault, plan).approval
    at_step("file:0:done", editor_adds_a_line(vault / "A.md"))
    with pytest.raises(VaultChanged) as info:
        apply_plan(vault, plan, approval=approval)
    assert (vault / "A.md").read_text() == A + TYPED
    assert (vault / "B.md").read_text() == B
    assert info.value.paths == ("A.md",)
    assert (
        "Everything this operation wrote was put back. A.md had been saved meanwhile on top of"
        " this operation's change: that change was taken out of it and the save kept."
    ) in str(info.value)
    assert leftovers(vault) == []


def test_a_change_to_the_second_note_rolls_the_first_back(
    vault: Path, at_step: Callable[[str, Callable[[], None]], None]
) -> None:
    plan = two_notes(vault)
    approval = inspect_plan(vault, plan).approval
    at_step("file:0:done", lambda: (vault / "B.md").write_text(B + TYPED))
    with pytest.raises(VaultChanged) as info:
        apply_plan(vault, plan, approval=approval)
    assert info.value.paths == ("B.md",)
    assert (vault / "A.md").read_text() == A
    assert (vault / "B.md").read_text() == B + TYPED


def test_a_save_while_the_new_bytes_are_written_is_not_overwritten(
    vault: Path, at_step: Callable[[str, Callable[[], None]], None]
) -> None:
    """The note is checked once its new bytes are on disk, right before the rename: a save
    made while they were written is seen, not renamed over and lost."""
    plan = two_notes(vault)
    approval = inspect_plan(vault, plan).approval
    at_step("file:1:temp-synced", lambda: (vault / "B.md").write_text(B + TYPED))
    with pytest.raises(VaultChanged) as info:
        apply_plan(vault, plan, approval=approval)
    assert info.value.paths == ("B.md",)
    assert (vault / "B.md").read_text() == B + TYPED
    assert (vault / "A.md").read_text() == A
    assert leftovers(vault) == []


def test_a_save_on_the_lines_the_operation_changed_is_left_and_reported(
    vault: Path, at_step: Callable[[str, Callable[[], None]], None]
) -> None:
    """No merge guesses: an edit next to the operation's change is the user's to sort out."""
    plan = two_notes(vault)
    approval = inspect_plan(vault, plan).approval
    mine = A.replace("claim\n", "claim\nmark: 1 (kept by me)\n")
    at_step("file:0:done", lambda: (vault / "A.md").write_text(mine))
    with pytest.raises(VaultChanged) as info:
        apply_plan(vault, plan, approval=approval)
    assert (vault / "A.md").read_text() == mine
    assert (vault / "B.md").read_text() == B
    assert "A.md was left as someone else changed it; its earlier version is at" in str(info.value)


def test_a_note_caught_mid_save_is_read_again_until_it_holds_still(
    vault: Path,
    at_step: Callable[[str, Callable[[], None]], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An editor that saves in place: the roll-back's first read sees half of the save."""
    plan = two_notes(vault)
    approval = inspect_plan(vault, plan).approval
    at_step("file:0:done", editor_adds_a_line(vault / "A.md"))
    real_read = recover.read_file
    reads: list[Path] = []

    def half_saved_first(path: Path) -> bytes | None:
        data = real_read(path)
        reads.append(path)
        if path.name == "A.md" and reads.count(path) == 1 and data is not None:
            return data[: len(data) // 2]
        return data

    monkeypatch.setattr(recover, "read_file", half_saved_first)
    with pytest.raises(VaultChanged):
        apply_plan(vault, plan, approval=approval)
    assert (vault / "A.md").read_text() == A + TYPED
    assert (vault / "B.md").read_text() == B


def test_a_refused_dismissal_leaves_both_notes_without_it(
    vault: Path, at_step: Callable[[str, Callable[[], None]], None]
) -> None:
    """The race seen in use: the editor reloads A after Antinomy wrote it, then saves."""
    at_step("file:0:done", editor_adds_a_line(vault / "A.md"))
    with pytest.raises(VaultChanged):
        dismiss_pair(vault, "A.md", "B.md")
    assert (vault / "A.md").read_text() == A + TYPED
    assert (vault / "B.md").read_text() == B


# -- the merge ---------------------------------------------------------------------------------

_LINES = st.lists(st.integers(0, 10**6), min_size=4, max_size=30, unique=True).map(
    lambda ns: [f"line {n}\n".encode() for n in ns]
)


@st.composite
def two_apart_edits(draw: st.DrawFn) -> tuple[list[bytes], list[bytes], list[bytes], list[bytes]]:
    """Lines, the operation's version, the editor's version (on lines at least one unchanged
    line away), and both edits together."""
    lines = draw(_LINES)
    i = draw(st.integers(0, len(lines) - 3))
    j = draw(st.integers(i, i + 1))
    k = draw(st.integers(j + 1, len(lines) - 1))
    l_ = draw(st.integers(k, min(k + 2, len(lines))))
    mine = [b"op: inserted\n"] * draw(st.integers(0 if j > i else 1, 2))
    theirs = [b"user: typed\n"] * draw(st.integers(0 if l_ > k else 1, 2))
    ours = lines[:i] + mine + lines[j:]
    users = lines[:k] + theirs + lines[l_:]
    both = lines[:i] + mine + lines[j:k] + theirs + lines[l_:]
    return lines, ours, users, both


@given(two_apart_edits())
def test_taking_a_change_out_keeps_an_edit_elsewhere(
    case: tuple[list[bytes], list[bytes], list[bytes], list[bytes]],
) -> None:
    before, written, _, current = (b"".join(part) for part in case)
    expected = b"".join(case[2])
    assert take_out(written=written, before=before, current=current) == expected


@given(st.binary(max_size=300), st.binary(max_size=300))
def test_with_no_edit_the_before_image_comes_back(before: bytes, written: bytes) -> None:
    assert take_out(written=written, before=before, current=written) == before


@given(st.binary(max_size=300), st.binary(max_size=300))
def test_with_nothing_to_take_out_the_edit_is_kept(written: bytes, current: bytes) -> None:
    assert take_out(written=written, before=written, current=current) == current


def test_line_endings_and_a_missing_last_newline_are_kept() -> None:
    before = b"a\r\nb\r\nc\r\nd"
    written = b"a\r\nb2\r\nc\r\nd"
    current = b"a\r\nb2\r\nc\r\nd and more"
    assert take_out(written=written, before=before, current=current) == b"a\r\nb\r\nc\r\nd and more"
