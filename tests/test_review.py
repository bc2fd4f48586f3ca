"""Review actions: dismiss/undismiss/list, elevate, resolve, defeat — fidelity, refusals, undo."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from desktop.flows.review import (
    AmbiguousNote,
    BadInput,
    DismissalListInvalid,
    DismissedPair,
    NotEligible,
    NoteNotFound,
    PrincipleExists,
    ReviewRefused,
    ReviewResult,
    available_actions,
    defeat_note,
    dismiss_pair,
    elevate_tension,
    list_dismissed,
    resolve_tension,
    undismiss_pair,
)
from desktop.vault.errors import VaultChanged
from desktop.vault.frontmatter import parse_frontmatter
from desktop.vault.transactions import list_history, undo_operation
from tests.vault_files import snapshot

# Files chosen for what a careless rewrite would break: CRLF, comments, flow and
# block lists, odd quoting, a BOM, a folded scalar, no frontmatter, no final newline.
FILES: dict[str, bytes] = {
    "Tensions/Flow CRLF.md": (
        b"---\r\n# a comment line\r\ntitle: 'It''s a test'   # inline comment\r\n"
        b'type: "tension"\r\nstatus: open\r\ntags: [a,  b ,c]\r\n'
        b"hunter_false_positives: [ 'Old one' ]  # kept\r\nzeta: >\r\n  folded\r\n---\r\n"
        b"Body with [[Links]]\r\n"
    ),
    "Substrates/Bom block.md": (
        b'\xef\xbb\xbf---\ntype: substrate\naliases:\n  - "Quoted: alias"\n'
        b"# trailing comment\n---\nBOM body\n"
    ),
    "Bare.md": b"No frontmatter at all.\nSecond line",
    "Tensions/Block list.md": (
        b"---\nantinomia_type: tension\nhunter_false_positives:\n    - Someone   # why\n"
        b"    # between\n    - 'Other'\nstatus: open\n---\n\nbody\n"
    ),
    "Old one.md": b"---\ntype: tension\n---\nold\n",
    "Someone.md": b"---\ntype: tension\n---\nsomeone\n",
    "Other.md": b"---\ntype: tension\nstatus: resolved\n---\nother\n",
    "Decisions/ADR-1 Use SQLite.md": b"---\nkind: decision\nstatus: accepted\n---\nSQLite.\n",
    "Principles/Ship small.md": b"---\ntype: principle\n---\nShip small.\n",
}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for rel, data in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root.resolve()


def read(root: Path, rel: str) -> bytes:
    return (root / rel).read_bytes()


def assert_refused_untouched(root: Path, before: dict[str, bytes]) -> None:
    assert snapshot(root) == before
    assert list_history(root) == ()


# -- dismiss / undismiss: exact bytes -----------------------------------------------------


def test_dismiss_writes_both_notes_changing_only_the_key(vault: Path) -> None:
    result = dismiss_pair(vault, "Tensions/Flow CRLF.md", "Substrates/Bom block.md")
    assert isinstance(result, ReviewResult)
    assert result.operation_id and result.operation_id.startswith("dismiss-")
    assert result.changed == ("Tensions/Flow CRLF.md", "Substrates/Bom block.md")
    assert result.created == ()
    assert read(vault, "Tensions/Flow CRLF.md") == FILES["Tensions/Flow CRLF.md"].replace(
        b"[ 'Old one' ]  # kept", b"[ 'Old one', Bom block ]  # kept"
    )
    assert read(vault, "Substrates/Bom block.md") == FILES["Substrates/Bom block.md"].replace(
        b"# trailing comment\n---",
        b"# trailing comment\nhunter_false_positives:\n  - Flow CRLF\n---",
    )
    history = list_history(vault)
    assert [h.operation_id for h in history] == [result.operation_id]
    assert set(history[0].paths) == {"Tensions/Flow CRLF.md", "Substrates/Bom block.md"}


def test_dismiss_block_list_and_note_without_frontmatter(vault: Path) -> None:
    dismiss_pair(vault, "Bare.md", "Tensions/Block list.md")
    assert read(vault, "Bare.md") == (
        b"---\nhunter_false_positives:\n  - Block list\n---\nNo frontmatter at all.\nSecond line"
    )
    assert read(vault, "Tensions/Block list.md") == FILES["Tensions/Block list.md"].replace(
        b"    - 'Other'\n", b"    - 'Other'\n    - Bare\n"
    )


def test_undismiss_gives_the_original_bytes_back_and_drops_empty_keys(vault: Path) -> None:
    before = snapshot(vault)
    dismiss_pair(vault, "Tensions/Flow CRLF.md", "Substrates/Bom block.md")
    dismiss_pair(vault, "Bare.md", "Tensions/Block list.md")
    dismiss_pair(vault, "Tensions/Flow CRLF.md", "Tensions/Block list.md")
    assert snapshot(vault) != before
    undismiss_pair(vault, "Tensions/Flow CRLF.md", "Substrates/Bom block.md")
    undismiss_pair(vault, "Bare.md", "Tensions/Block list.md")
    undismiss_pair(vault, "Block list", "Flow CRLF")  # basenames work too
    assert snapshot(vault) == before  # keys that only held these entries are gone


def test_dismiss_twice_writes_no_duplicate(vault: Path) -> None:
    dismiss_pair(vault, "Tensions/Flow CRLF.md", "Bare.md")
    after_first = snapshot(vault)
    again = dismiss_pair(vault, "Bare.md", "Tensions/Flow CRLF.md")  # either orientation
    assert again.operation_id is None and again.changed == ()
    assert snapshot(vault) == after_first
    assert len(list_history(vault)) == 1
    fp = parse_frontmatter(read(vault, "Tensions/Flow CRLF.md").decode())
    assert fp["hunter_false_positives"] == ["Old one", "Bare"]


def test_dismiss_completes_a_half_written_dismissal(vault: Path) -> None:
    # Antinomia wrote note by note: "Block list" lists "Someone", but not the reverse.
    result = dismiss_pair(vault, "Tensions/Block list.md", "Someone.md")
    assert result.changed == ("Someone.md",)
    assert parse_frontmatter(read(vault, "Someone.md").decode())["hunter_false_positives"] == [
        "Block list"
    ]


def test_undismiss_of_a_pair_that_is_not_dismissed_writes_nothing(vault: Path) -> None:
    before = snapshot(vault)
    result = undismiss_pair(vault, "Bare.md", "Someone.md")
    assert result.operation_id is None
    assert_refused_untouched(vault, before)


def test_undismiss_cleans_an_entry_whose_note_is_gone(vault: Path) -> None:
    dismiss_pair(vault, "Bare.md", "Someone.md")
    (vault / "Someone.md").unlink()
    result = undismiss_pair(vault, "Bare.md", "Someone")
    assert result.changed == ("Bare.md",)
    assert read(vault, "Bare.md") == FILES["Bare.md"]
    with pytest.raises(NoteNotFound, match="does not list it as dismissed"):
        undismiss_pair(vault, "Bare.md", "Never existed")


def test_list_dismissed_flags_missing_and_one_sided(vault: Path) -> None:
    dismiss_pair(vault, "Bare.md", "Substrates/Bom block.md")
    pairs = list_dismissed(vault)
    assert pairs == [
        DismissedPair("Bare", "Bom block", "Bare.md", "Substrates/Bom block.md", ()),
        DismissedPair("Block list", "Other", "Tensions/Block list.md", "Other.md", (), (), False),
        DismissedPair(
            "Block list", "Someone", "Tensions/Block list.md", "Someone.md", (), (), False
        ),
        DismissedPair("Flow CRLF", "Old one", "Tensions/Flow CRLF.md", "Old one.md", (), (), False),
    ]
    (vault / "Old one.md").unlink()
    flow = [p for p in list_dismissed(vault) if p.a == "Flow CRLF"]
    assert flow == [
        DismissedPair(
            "Flow CRLF", "Old one", "Tensions/Flow CRLF.md", None, ("Old one",), (), False
        )
    ]


# -- dismiss refusals ------------------------------------------------------------------------


def test_dismiss_refuses_a_missing_peer_and_writes_nothing(vault: Path) -> None:
    before = snapshot(vault)
    with pytest.raises(NoteNotFound, match=r"No note 'Gone\.md' in the vault"):
        dismiss_pair(vault, "Bare.md", "Gone.md")
    assert_refused_untouched(vault, before)


def test_a_shared_basename_is_named_by_its_path_and_a_bare_name_stays_ambiguous(
    vault: Path,
) -> None:
    (vault / "Archive").mkdir()
    (vault / "Archive" / "Bare.md").write_bytes(b"another Bare\n")
    result = dismiss_pair(vault, "Bare.md", "Someone.md")
    assert result.summary == "Dismiss the pair /Bare ↔ Someone (not a tension)"
    assert parse_frontmatter(read(vault, "Someone.md").decode())["hunter_false_positives"] == [
        "/Bare"
    ]
    assert read(vault, "Bare.md").startswith(b"---\nhunter_false_positives:\n  - Someone\n")
    before = snapshot(vault)
    with pytest.raises(AmbiguousNote) as info:
        dismiss_pair(vault, "Bare", "Someone")
    assert info.value.candidates == ("Archive/Bare.md", "Bare.md")
    assert "give the path of the one you mean" in str(info.value)
    assert snapshot(vault) == before


def test_dismiss_refuses_the_same_note_twice(vault: Path) -> None:
    with pytest.raises(ReviewRefused, match="a pair needs two notes"):
        dismiss_pair(vault, "Bare.md", "Bare")


def test_dismiss_refuses_a_note_edited_since_it_was_seen(vault: Path) -> None:
    seen = {"Bare.md": sha(FILES["Bare.md"]), "Someone.md": sha(FILES["Someone.md"])}
    (vault / "Someone.md").write_bytes(b"---\ntype: tension\n---\nedited in Obsidian\n")
    before = snapshot(vault)
    with pytest.raises(VaultChanged, match=r"Someone\.md changed on disk since") as info:
        dismiss_pair(vault, "Bare.md", "Someone.md", seen=seen)
    assert info.value.paths == ("Someone.md",)
    assert_refused_untouched(vault, before)


def test_dismiss_with_the_hashes_seen_succeeds(vault: Path) -> None:
    seen = {"Bare.md": sha(FILES["Bare.md"]), "Someone.md": sha(FILES["Someone.md"])}
    assert dismiss_pair(vault, "Bare.md", "Someone.md", seen=seen).operation_id


def test_dismiss_refuses_a_frontmatter_it_cannot_edit_faithfully(vault: Path) -> None:
    (vault / "Flowmap.md").write_bytes(b"---\n{type: tension}\n---\nx\n")
    before = snapshot(vault)
    with pytest.raises(ReviewRefused, match=r"Flowmap\.md: .*flow mapping"):
        dismiss_pair(vault, "Flowmap.md", "Bare.md")
    assert_refused_untouched(vault, before)


@pytest.mark.parametrize(
    ("value", "held"),
    [
        (b"5", "int 5"),
        (b"{Peer: yes}", "a mapping"),
        (b"true", "bool True"),
    ],
)
def test_dismiss_and_undismiss_refuse_a_dismissal_list_of_the_wrong_type(
    vault: Path, value: bytes, held: str
) -> None:
    (vault / "Typed.md").write_bytes(
        b"---\ntype: tension\nhunter_false_positives: " + value + b"\n---\nx\n"
    )
    before = snapshot(vault)
    for action in (dismiss_pair, undismiss_pair):
        with pytest.raises(DismissalListInvalid) as info:
            action(vault, "Typed.md", "Someone.md")
        assert str(info.value).startswith(
            f"Typed.md: `hunter_false_positives` holds {held}, not a list of note names. "
            "Nothing was written"
        )
        assert_refused_untouched(vault, before)


# -- elevate ---------------------------------------------------------------------------------


def elevate(root: Path, **kwargs: str) -> ReviewResult:
    args = {
        "title": "Write before noon",
        "if_clause": "a draft is open",
        "then_clause": "it gets the first hour",
        "grey_zone": "travel days",
    } | kwargs
    tension = args.pop("tension", "Tensions/Block list.md")
    return elevate_tension(root, tension, **args)


def test_elevate_creates_the_principle_and_defeats_the_tension(vault: Path) -> None:
    result = elevate(vault)
    assert result.created == ("Antinomy/Principles/Write before noon.md",)
    assert result.changed == ("Tensions/Block list.md",)
    principle = read(vault, "Antinomy/Principles/Write before noon.md").decode()
    assert principle == (
        "---\n"
        "type: principle\n"
        'origin_tension: "[[Block list]]"\n'
        "if_clause: a draft is open\n"
        "then_clause: it gets the first hour\n"
        "grey_zone: travel days\n"
        "---\n"
        "# Write before noon\n\n"
        "**IF** a draft is open, **THEN** it gets the first hour.\n\n"
        "**Grey zone:** travel days\n\n"
        "Elevated from the tension [[Block list]].\n"
    )
    # The Antinomia key stays the Antinomia key; everything else is byte-identical.
    assert read(vault, "Tensions/Block list.md") == FILES["Tensions/Block list.md"].replace(
        b"antinomia_type: tension\n", b"antinomia_type: defeated\n"
    ).replace(
        b"status: open\n",
        b'status: open\nmotive: elevated\nreplaced_by: "[[Write before noon]]"\n',
    )


def test_elevate_then_undo_restores_both_files_byte_identically(vault: Path) -> None:
    before = snapshot(vault)
    result = elevate(vault)
    assert result.operation_id
    undo_operation(vault, result.operation_id)
    assert snapshot(vault) == before
    assert not (vault / "Antinomy").exists()  # the folders it made are gone too


def test_elevate_into_a_configured_folder_with_crlf_tension(vault: Path) -> None:
    result = elevate(vault, tension="Flow CRLF", folder="Rules/Mine", grey_zone="")
    assert result.created == ("Rules/Mine/Write before noon.md",)
    text = read(vault, "Rules/Mine/Write before noon.md").decode()
    assert "grey_zone" not in text and "Grey zone" not in text
    assert read(vault, "Tensions/Flow CRLF.md") == FILES["Tensions/Flow CRLF.md"].replace(
        b'type: "tension"',
        b"type: defeated",  # the value is rewritten, the rest kept
    ).replace(
        b"  folded\r\n", b'  folded\r\nmotive: elevated\r\nreplaced_by: "[[Write before noon]]"\r\n'
    )


def test_elevate_refuses_what_is_not_an_open_tension(vault: Path) -> None:
    before = snapshot(vault)
    with pytest.raises(
        NotEligible, match=r"Substrates/Bom block\.md is of type 'substrate', not a"
    ):
        elevate(vault, tension="Bom block")
    with pytest.raises(NotEligible, match=r"Other\.md is a tension with status 'resolved'"):
        elevate(vault, tension="Other")
    with pytest.raises(NotEligible, match=r"Bare\.md is without a type, not a tension"):
        elevate(vault, tension="Bare")
    assert_refused_untouched(vault, before)


def test_elevating_twice_says_it_was_already_elevated(vault: Path) -> None:
    elevate(vault)
    before = snapshot(vault)
    with pytest.raises(NotEligible) as refused:
        elevate(vault, title="Write after noon")
    assert str(refused.value) == (
        "Tensions/Block list.md was already elevated to [[Write before noon]]; it cannot be "
        "elevated again. Nothing was written."
    )
    assert snapshot(vault) == before and len(list_history(vault)) == 1


def test_elevate_refuses_a_title_that_exists(vault: Path) -> None:
    before = snapshot(vault)
    with pytest.raises(PrincipleExists, match=r"A note named 'Ship small' already exists"):
        elevate(vault, title="Ship small")
    with pytest.raises(PrincipleExists, match=r"'someone' already exists \(Someone\.md\)"):
        elevate(vault, title="someone")  # names compare case-insensitively, as links do
    assert_refused_untouched(vault, before)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"title": "  "}, "The principle needs a title"),
        ({"title": "A/B"}, r"contains /, which a note's name cannot hold"),
        ({"title": "[[x]]"}, r"contains \[ \], which"),
        ({"if_clause": " "}, "The IF clause is empty"),
        ({"then_clause": ""}, "The THEN clause is empty"),
        ({"folder": "../outside"}, "The principles folder '../outside' cannot be used"),
        ({"folder": ".obsidian"}, "never writes"),
    ],
)
def test_elevate_refuses_bad_input(vault: Path, kwargs: dict[str, str], message: str) -> None:
    before = snapshot(vault)
    with pytest.raises(BadInput, match=message):
        elevate(vault, **kwargs)
    assert_refused_untouched(vault, before)


def test_elevate_refuses_a_tension_edited_since_it_was_seen(vault: Path) -> None:
    seen = {"Tensions/Block list.md": sha(FILES["Tensions/Block list.md"])}
    (vault / "Tensions/Block list.md").write_bytes(FILES["Tensions/Block list.md"] + b"more\n")
    before = snapshot(vault)
    with pytest.raises(VaultChanged):
        elevate_tension(
            vault,
            "Tensions/Block list.md",
            title="T",
            if_clause="i",
            then_clause="t",
            seen=seen,
        )
    assert_refused_untouched(vault, before)


# -- resolve, defeat -------------------------------------------------------------------------


def test_resolve_sets_status_only(vault: Path) -> None:
    result = resolve_tension(vault, "Tensions/Flow CRLF.md")
    assert result.changed == ("Tensions/Flow CRLF.md",)
    assert read(vault, "Tensions/Flow CRLF.md") == FILES["Tensions/Flow CRLF.md"].replace(
        b"status: open", b"status: resolved"
    )
    with pytest.raises(NotEligible, match="status 'resolved', not an open one"):
        resolve_tension(vault, "Tensions/Flow CRLF.md")


def test_resolve_refuses_a_substrate(vault: Path) -> None:
    before = snapshot(vault)
    with pytest.raises(NotEligible, match="only open tensions can be resolved"):
        resolve_tension(vault, "Bom block")
    assert_refused_untouched(vault, before)


def test_defeat_a_principle_with_a_successor(vault: Path) -> None:
    result = defeat_note(
        vault, "Principles/Ship small.md", motive="  too vague\n to act on ", replaced_by="Someone"
    )
    assert result.operation_id and result.operation_id.startswith("defeat-")
    assert read(vault, "Principles/Ship small.md") == (
        b'---\ntype: defeated\nmotive: too vague to act on\nreplaced_by: "[[Someone]]"\n---\n'
        b"Ship small.\n"
    )


def test_defeat_keeps_the_commonwealth_key(vault: Path) -> None:
    (vault / "Sub.md").write_bytes(b"---\nkind: substrate\n---\nx\n")
    defeat_note(vault, "Sub", motive="no longer true")
    assert read(vault, "Sub.md") == b"---\nkind: defeated\nmotive: no longer true\n---\nx\n"


def test_defeat_refusals(vault: Path) -> None:
    before = snapshot(vault)
    with pytest.raises(NotEligible, match=r"of type 'decision'; only tensions, substrates and"):
        defeat_note(vault, "ADR-1 Use SQLite", motive="x")
    with pytest.raises(BadInput, match="The motive is empty"):
        defeat_note(vault, "Someone", motive=" \n ")
    with pytest.raises(NoteNotFound, match="No note 'Nobody'"):
        defeat_note(vault, "Someone", motive="x", replaced_by="Nobody")
    with pytest.raises(BadInput, match="cannot be replaced by itself"):
        defeat_note(vault, "Someone", motive="x", replaced_by="Someone.md")
    assert_refused_untouched(vault, before)


def test_paths_outside_or_hidden_are_not_notes(vault: Path) -> None:
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "Hidden.md").write_bytes(b"---\ntype: tension\n---\n")
    with pytest.raises(NoteNotFound):
        resolve_tension(vault, ".obsidian/Hidden.md")
    with pytest.raises(NoteNotFound, match="is outside the vault"):
        resolve_tension(vault, str(vault.parent / "elsewhere.md"))
    # An absolute path inside the vault is accepted.
    assert resolve_tension(vault, str(vault / "Someone.md")).changed == ("Someone.md",)


def test_the_notes_listed_are_the_ones_the_index_walks(tmp_path: Path) -> None:
    import shutil

    from desktop.flows.review.vaultfiles import list_notes
    from desktop.resources import sample_vault_source
    from desktop.vault.index import walk_vault

    root = tmp_path / "v"
    shutil.copytree(sample_vault_source(), root)
    root = root.resolve()
    (root / "inside link.md").symlink_to(root / "Tensions" / "Base miles vs hard efforts.md")
    (root / "outside link.md").symlink_to(tmp_path / "elsewhere.md")
    (tmp_path / "elsewhere.md").write_text("outside\n")
    (root / "folder link").symlink_to(root / "Tensions")
    (root / ".hidden.md").write_text("x\n")
    walked = sorted(rel for rel, st, _ in walk_vault(root) if st is not None)
    assert list_notes(root) == walked
    assert "inside link.md" in walked and "outside link.md" not in walked


def test_names_yaml_would_misread_are_written_as_strings(tmp_path: Path) -> None:
    names = ["2024-01-08", "true", "null", "1e3", "note: b", "#tag", "- dash", "it's", "[x]"]
    root = tmp_path.resolve()
    (root / "Base.md").write_bytes(b"base\n")
    for name in names:
        (root / f"{name}.md").write_bytes(b"---\ntype: tension\n---\nx\n")
        dismiss_pair(root, "Base.md", f"{name}.md")
    fp = parse_frontmatter(read(root, "Base.md").decode())["hunter_false_positives"]
    assert fp == names  # strings, exactly: what the Hunter compares with basenames
    assert len(list_dismissed(root)) == len(names)
    for name in names:
        undismiss_pair(root, name, "Base")
    assert read(root, "Base.md") == b"base\n"


@pytest.mark.parametrize(
    ("note_type", "status", "actions"),
    [
        ("tension", "open", ("elevate", "resolve", "defeat")),
        ("tension", None, ("elevate", "resolve", "defeat")),
        ("Tension", "Open", ("elevate", "resolve", "defeat")),
        ("tension", "resolved", ("defeat",)),
        ("substrate", None, ("defeat",)),
        ("principle", None, ("defeat",)),
        ("defeated", None, ()),
        ("decision", "accepted", ()),
        (None, None, ()),
    ],
)
def test_available_actions_match_what_the_actions_accept(
    vault: Path, note_type: str | None, status: str | None, actions: tuple[str, ...]
) -> None:
    assert available_actions(note_type, status) == actions
    lines = [f"type: {note_type}"] if note_type else []
    lines += [f"status: {status}"] if status else []
    (vault / "N.md").write_text("---\n" + "\n".join(lines) + "\n---\nx\n" if lines else "x\n")
    tries = {
        "resolve": lambda: resolve_tension(vault, "N"),
        "defeat": lambda: defeat_note(vault, "N", motive="m"),
    }
    for action, attempt in tries.items():
        if action in actions:
            assert attempt().operation_id
            undo_operation(vault, list_history(vault)[0].operation_id)
        else:
            with pytest.raises(NotEligible):
                attempt()


def test_an_entry_in_another_case_gets_the_exact_name_beside_it(vault: Path) -> None:
    # The Hunter compares basenames exactly: "someone" would not hide "Someone".
    (vault / "Lower.md").write_bytes(b"---\nhunter_false_positives: [someone]\n---\nx\n")
    dismiss_pair(vault, "Lower.md", "Someone.md")
    assert parse_frontmatter(read(vault, "Lower.md").decode())["hunter_false_positives"] == [
        "someone",
        "Someone",
    ]


def test_undismiss_of_a_gone_note_names_both_sides(vault: Path) -> None:
    dismiss_pair(vault, "Bare.md", "Someone.md")
    (vault / "Someone.md").unlink()
    assert undismiss_pair(vault, "Bare", "Someone").summary == (
        "Undismiss the pair Bare ↔ Someone (the Hunter may show it again)"
    )
