"""``antinomy dismiss|undismiss|dismissed|elevate|resolve|defeat`` on a copy of the sample vault."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from desktop.cli import exits
from desktop.cli.main import main
from desktop.resources import sample_vault_source
from desktop.vault.index import VaultIndex
from tests.vault_files import snapshot


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(sample_vault_source(), root)
    return root.resolve()


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_dismiss_prints_the_operation_and_tx_undo_takes_it_back(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(vault)
    code, out, _ = cli(
        capsys, "dismiss", "Base miles vs hard efforts", "Substrates/Run before work.md",
        "--vault", str(vault), "--json",
    )  # fmt: skip
    assert code == exits.OK
    data = json.loads(out)
    assert data["ok"] and data["operation_id"].startswith("dismiss-")
    assert data["changed"] == [
        "Tensions/Base miles vs hard efforts.md",
        "Substrates/Run before work.md",
    ]
    assert data["undo"] == f"antinomy tx undo {data['operation_id']} --vault {vault}"

    code, out, _ = cli(capsys, "dismissed", "--vault", str(vault), "--json")
    pairs = {(p["a"], p["b"]) for p in json.loads(out)["pairs"]}
    assert ("Base miles vs hard efforts", "Run before work") in pairs

    assert cli(capsys, "tx", "undo", data["operation_id"], "--vault", str(vault))[0] == exits.OK
    assert snapshot(vault) == before


def test_human_output_names_the_undo_command(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(capsys, "resolve", "Manager time vs maker time", "--vault", str(vault))
    assert code == exits.OK
    assert out.startswith(
        "Mark the tension Manager time vs maker time resolved\nOperation resolve-"
    )
    assert "  changed  Tensions/Manager time vs maker time.md" in out
    assert "Undo with: antinomy tx undo resolve-" in out


def test_ambiguous_name_is_refused_with_the_candidates(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(vault)
    code, out, err = cli(capsys, "defeat", "Roadmap", "--motive", "old", "--vault", str(vault))
    assert code == exits.USAGE
    assert err == (
        "antinomy: 'Roadmap' is the name of 2 notes: Archive/Roadmap.md, Projects/Roadmap.md "
        "— give the path of the one you mean.\n"
    )
    code, out, _ = cli(capsys, "dismiss", "Roadmap", "Hire slowly", "--vault", str(vault), "--json")
    assert json.loads(out)["candidates"] == ["Archive/Roadmap.md", "Projects/Roadmap.md"]
    assert snapshot(vault) == before


def test_refusals_have_their_exit_codes(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(vault)
    code, _, err = cli(capsys, "resolve", "Hire slowly", "--vault", str(vault))
    assert code == exits.DATA_ERROR
    assert "is of type 'substrate', not a tension" in err
    code, _, err = cli(capsys, "dismiss", "Hire slowly", "No such note", "--vault", str(vault))
    assert code == exits.USAGE and "No note 'No such note'" in err
    code, _, err = cli(
        capsys, "elevate", "Base miles vs hard efforts", "--title", "Cut back every fourth week",
        "--if", "x", "--then", "y", "--vault", str(vault),
    )  # fmt: skip
    assert code == exits.DATA_ERROR and "already exists" in err
    code, _, err = cli(
        capsys, "defeat", "Decisions/ADR-0004 One PostgreSQL cluster.md", "--motive", "m",
        "--vault", str(vault),
    )  # fmt: skip
    assert code == exits.DATA_ERROR and "of type 'decision'" in err
    assert snapshot(vault) == before


def test_elevate_writes_the_principle_and_reindexes(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index = VaultIndex(vault)
    index.update()
    code, out, _ = cli(
        capsys, "elevate", "Base miles vs hard efforts", "--title", "Easy days stay easy",
        "--if", "a run is planned easy", "--then", "it stays easy", "--grey", "race week",
        "--vault", str(vault), "--json",
    )  # fmt: skip
    assert code == exits.OK
    data = json.loads(out)
    assert data["created"] == ["Antinomy/Principles/Easy days stay easy.md"]
    # The CLI re-indexed the touched notes (the vault had an index).
    principle = index.note("Antinomy/Principles/Easy days stay easy.md")
    assert principle is not None and principle.type == "principle"
    tension = index.note("Tensions/Base miles vs hard efforts.md")
    assert tension is not None and tension.type == "defeated"
    index.close()


def test_index_offers_to_fix_dismissals_after_a_rename(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, "index", "--no-embed", "--vault", str(vault))[0] == exits.OK
    (vault / "Substrates" / "Run before work.md").rename(vault / "Substrates" / "Run at dawn.md")
    code, out, _ = cli(capsys, "index", "--no-embed", "--vault", str(vault))
    assert code == exits.OK
    assert (
        "  1 note(s) still dismiss a pair by a renamed note's old name; to keep those dismissals: "
        f"antinomy dismissed --fix-renames --vault {vault} --rename 'Run before work' "
        "'Substrates/Run at dawn.md'\n"
    ) in out

    code, out, _ = cli(capsys, "dismissed", "--vault", str(vault))
    assert "Mornings are for writing ↔ Run before work  (no note named Run before work" in out
    assert "antinomy dismissed --fix-renames" in out

    code, out, _ = cli(
        capsys, "dismissed", "--fix-renames", "--vault", str(vault),
        "--rename", "Run before work", "Substrates/Run at dawn.md",
    )  # fmt: skip
    assert code == exits.OK
    assert out.startswith("Run before work → Run at dawn: fixed in Substrates/Mornings are")
    code, out, _ = cli(capsys, "dismissed", "--vault", str(vault))
    assert out == "Mornings are for writing ↔ Run at dawn\n"


def test_rename_without_fix_renames_is_a_usage_error(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "dismissed", "--rename", "a", "b", "--vault", str(vault))
    assert code == exits.USAGE and "--rename goes with --fix-renames" in err


# -- what the user saw: the last scan's hashes, or --expect-sha --------------------------------

PAIR_A = "Tensions/Base miles vs hard efforts.md"
PAIR_B = "Substrates/Run before work.md"


def _scanned(root: Path) -> None:
    """A last scan that showed the pair A–B with the bytes now on disk."""
    import hashlib

    from desktop.flows.hunter.records import Pair, ScanRun, save_last_run

    def digest(rel: str) -> str:
        return hashlib.sha256((root / rel).read_bytes()).hexdigest()

    pair = Pair(
        path_a=PAIR_A, path_b=PAIR_B, note_a="Base miles vs hard efforts",
        note_b="Run before work", quote_a="a", quote_b="b", description="d",
        sha_a=digest(PAIR_A), sha_b=digest(PAIR_B),
    )  # fmt: skip
    save_last_run(root, ScanRun(started_at="2026-12-01T08:00:00", mode="classic", status="ok",
                                pairs=(pair,)))  # fmt: skip


def test_dismiss_refuses_a_note_edited_since_the_scan_showed_the_pair(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _scanned(vault)
    with (vault / PAIR_B).open("a", encoding="utf-8") as f:
        f.write("\nAn edit made after the scan.\n")
    before = snapshot(vault)
    code, _, err = cli(capsys, "dismiss", PAIR_A, PAIR_B, "--vault", str(vault))
    assert code == exits.TEMP_FAILURE
    assert err.startswith(f"antinomy: {PAIR_B} changed on disk since it was shown. Nothing was")
    assert snapshot(vault) == before
    # The other single-note actions check the same record.
    code, _, _ = cli(capsys, "defeat", PAIR_B, "--motive", "old", "--vault", str(vault))
    assert code == exits.TEMP_FAILURE
    assert snapshot(vault) == before


def test_actions_on_the_scanned_bytes_apply_and_a_second_action_follows_the_first(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _scanned(vault)
    assert cli(capsys, "dismiss", PAIR_A, PAIR_B, "--vault", str(vault))[0] == exits.OK
    # The dismissal changed both notes: that is our write, not an edit behind the user's back.
    assert cli(capsys, "resolve", PAIR_A, "--vault", str(vault))[0] == exits.OK


def test_expect_sha_is_checked_and_must_be_a_sha256(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import hashlib

    before = snapshot(vault)
    wrong = "0" * 64
    right_a = hashlib.sha256((vault / PAIR_A).read_bytes()).hexdigest()
    code, _, err = cli(
        capsys, "dismiss", PAIR_A, PAIR_B, "--expect-sha", right_a, wrong, "--vault", str(vault)
    )
    assert code == exits.TEMP_FAILURE and "changed on disk since it was shown" in err
    code, _, err = cli(capsys, "resolve", PAIR_A, "--expect-sha", "abc", "--vault", str(vault))
    assert code == exits.USAGE
    assert "--expect-sha 'abc' is not a sha256 (64 hex digits)" in err
    assert snapshot(vault) == before
    code, _, _ = cli(capsys, "resolve", PAIR_A, "--expect-sha", right_a, "--vault", str(vault))
    assert code == exits.OK


def test_keep_in_antinomy_is_saved_for_the_vault_and_dismiss_leaves_the_notes(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(capsys, "dismissed", "--keep-in", "antinomy", "--vault", str(vault))
    assert code == exits.OK
    assert out.startswith(
        f"New dismissals in {vault} are kept in .antinomy/dismissed.json (the notes are not "
        "touched).\n"
    )
    saved = json.loads((vault / ".antinomy" / "review" / "settings.json").read_text())
    assert saved == {"keep_dismissals": "antinomy"}
    before = snapshot(vault)
    code, out, _ = cli(
        capsys, "dismiss", "Base miles vs hard efforts", "Substrates/Run before work.md",
        "--vault", str(vault), "--json",
    )  # fmt: skip
    data = json.loads(out)
    assert code == exits.OK and data["created"] == [".antinomy/dismissed.json"]
    assert snapshot(vault) == before  # every note byte-identical

    code, out, _ = cli(capsys, "dismissed", "--vault", str(vault))
    assert "Base miles vs hard efforts ↔ Run before work  (kept in .antinomy/)\n" in out
    assert out.endswith(
        "New dismissals are kept in .antinomy/dismissed.json; the notes are not touched.\n"
    )
    # Switched back: the pair stays dismissed, listed from the file.
    assert cli(capsys, "dismissed", "--keep-in", "notes", "--vault", str(vault))[0] == exits.OK
    code, out, _ = cli(capsys, "dismissed", "--vault", str(vault), "--json")
    listed = json.loads(out)
    assert listed["keep_dismissals"] == "notes"
    assert {(p["a"], p["b"], tuple(p["kept_in"])) for p in listed["pairs"]} >= {
        ("Base miles vs hard efforts", "Run before work", ("antinomy",))
    }
    assert cli(capsys, "tx", "undo", data["operation_id"], "--vault", str(vault))[0] == exits.OK
    code, out, _ = cli(capsys, "dismissed", "--vault", str(vault))
    assert "Base miles vs hard efforts ↔ Run before work" not in out


def test_keep_in_refusals(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["dismissed", "--keep-in", "git", "--vault", str(vault)])
    assert info.value.code == exits.USAGE
    assert "invalid choice: 'git' (choose from 'notes', 'antinomy')" in capsys.readouterr().err
    settings = vault / ".antinomy" / "review" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"keep_dismissals": "git"}')
    before = snapshot(vault)
    code, _, err = cli(
        capsys, "dismiss", "Base miles vs hard efforts", "Run before work", "--vault", str(vault)
    )
    assert code == exits.FAILURE
    assert err.strip().endswith(
        f"{settings}: review.keep_dismissals is 'git': use 'notes' (in each note's "
        "hunter_false_positives) or 'antinomy' (in .antinomy/dismissed.json). Fix it, or set "
        "it again with `antinomy dismissed --keep-in notes|antinomy`."
    )
    assert snapshot(vault) == before
