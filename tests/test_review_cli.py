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
