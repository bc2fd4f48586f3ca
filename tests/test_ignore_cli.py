"""``antinomy ignore sentence|note|folder|list|remove`` and what ``antinomy scan`` says of it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.cli import exits
from desktop.cli.main import main
from desktop.cli.scan_cmd import print_run
from desktop.vault.index import VaultIndex
from tests import learning_vault as lv


@pytest.fixture
def index(tmp_path: Path) -> Iterator[VaultIndex]:
    root = tmp_path / "vault"
    root.mkdir()
    idx = lv.make_index(root)
    yield idx
    idx.close()


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_ignore_list_and_remove(index: VaultIndex, capsys: pytest.CaptureFixture[str]) -> None:
    vault = str(index.root)
    code, out, _ = cli(capsys, "ignore", "folder", "Gateways", "--vault", vault)
    assert code == exits.OK
    assert out == "Ignored: folder Gateways. Every scan of this vault leaves it out from now on.\n"
    code, out, _ = cli(capsys, "ignore", "folder", "Gateways/", "--vault", vault)
    assert out == "Already ignored: folder Gateways.\n"
    cli(capsys, "ignore", "sentence", lv.KEEPS, "--note", "Omega retries", "--vault", vault)
    code, out, _ = cli(capsys, "ignore", "note", "Omega budget", "--vault", vault, "--json")
    assert json.loads(out)["item"]["value"] == "Substrates/Omega budget.md"
    code, out, _ = cli(capsys, "ignore", "list", "--vault", vault)
    assert out.splitlines()[:3] == [
        " 1. folder Gateways",
        f" 2. sentence “{lv.KEEPS}” (from Tensions/Omega retries.md)",
        " 3. note Substrates/Omega budget.md",
    ]
    code, out, _ = cli(capsys, "ignore", "remove", "3", "--vault", vault)
    assert out.startswith("No longer ignored: note Substrates/Omega budget.md.")

    run = lv.run_scan(index)
    print_run(run, vault=index.root)
    out = capsys.readouterr().out
    assert (
        "left out 1 sentence and 1 folder (28 notes in it) you asked to ignore "
        "(antinomy ignore list)"
    ) in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("note", "No such note"), "No note 'No such note' in the vault"),
        (("folder", "../up"), "is outside the vault"),
        (("sentence", "short"), "“short” is too short to ignore as a sentence"),
        (("remove", "1"), "There is no ignored item number 1: nothing is ignored"),
    ],
)
def test_bad_input_exits_2_with_the_reason(
    index: VaultIndex, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    code, out, err = cli(capsys, "ignore", *args, "--vault", str(index.root))
    assert code == exits.USAGE
    assert message in err and out == ""
