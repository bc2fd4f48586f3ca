"""``antinomy learned``, ``dismiss --all-like-this`` and ``scan --show-hidden``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.cli import exits
from desktop.cli.main import main
from desktop.flows.hunter import ScanRun
from desktop.flows.review import dismiss_pair, resolve_tension
from desktop.vault.index import VaultIndex
from desktop.vault.transactions import list_history
from tests import learning_vault as lv


@pytest.fixture
def scanned(tmp_path: Path) -> Iterator[tuple[VaultIndex, ScanRun]]:
    root = tmp_path / "vault"
    root.mkdir()
    index = lv.make_index(root)
    yield index, lv.run_scan(index)
    index.close()


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def taught(index: VaultIndex, run: ScanRun) -> ScanRun:
    """Resolve the omega tension, dismiss 10 false pairs, scan again."""
    resolve_tension(index.root, "Tensions/Omega retries.md")
    for p in [p for p in run.pairs if not lv.is_omega(p)][:10]:
        dismiss_pair(index.root, p.path_a, p.path_b, on_change=index.update_paths)
    return lv.run_scan(index)


def test_learned_says_there_is_nothing_yet(
    scanned: tuple[VaultIndex, ScanRun], capsys: pytest.CaptureFixture[str]
) -> None:
    index, _ = scanned
    code, out, _ = cli(capsys, "learned", "--vault", str(index.root))
    assert code == exits.OK
    assert "No decision to learn from yet" in out


def test_learned_lists_the_decisions_and_the_calibration_then_reset_undoes_it(
    scanned: tuple[VaultIndex, ScanRun], capsys: pytest.CaptureFixture[str]
) -> None:
    index, run = scanned
    taught(index, run)
    vault = str(index.root)
    code, out, _ = cli(capsys, "learned", "--vault", vault)
    assert code == exits.OK
    assert "11 decision(s) kept: 10 dismissed, 1 resolved" in out
    assert "11 with the features a scan judged them on; 0 wait for one" in out
    assert "calibration for scripted (" in out and "this vault's, from 11 decisions" in out
    assert "resolved   Omega budget ↔ Omega retries" in out
    assert f"start over: antinomy learned --reset --vault {vault}" in out

    code, out, _ = cli(capsys, "learned", "--vault", vault, "--json")
    data = json.loads(out)
    assert data["active"] == 11 and len(data["labels"]) == 11
    assert data["calibration"]["scripted"]["status"] in ("vault", "held")

    code, out, _ = cli(capsys, "learned", "--reset", "--vault", vault)
    assert code == exits.OK
    assert "Back to the shipped calibration: 11 decision(s) set aside" in out
    after = lv.run_scan(index)
    assert after.hidden == () and len(after.pairs) == 5  # 15 less the 10 still dismissed
    assert after.learning.decisions == 0


def test_dismiss_all_like_this_from_the_terminal(
    scanned: tuple[VaultIndex, ScanRun], capsys: pytest.CaptureFixture[str]
) -> None:
    index, run = scanned
    vault = str(index.root)
    pair = run.pairs[0]
    code, out, _ = cli(
        capsys, "dismiss", pair.path_a, pair.path_b, "--all-like-this", "--vault", vault
    )
    assert code == exits.OK
    assert "Learning: kept as 1 dismissed pair to learn from; pairs like it hidden." in out
    code, out, _ = cli(capsys, "learned", "--vault", vault)
    assert "hidden frames (1):" in out and f"from “{pair.quote_a}”" in out
    code, out, _ = cli(capsys, "learned", "--unhide-frame", "2", "--vault", vault)
    assert code == exits.USAGE
    code, out, _ = cli(capsys, "learned", "--unhide-frame", "1", "--vault", vault)
    assert code == exits.OK and "are shown again (the pair's dismissal stays)" in out


def test_dismiss_all_like_this_needs_the_quotes_a_scan_showed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    lv.make_index(root).close()
    code, _, err = cli(
        capsys,
        "dismiss", "Gateways/Alpha retries.md", "Gateways/Alpha limits.md",
        "--all-like-this", "--vault", str(root),
    )  # fmt: skip
    assert code == exits.USAGE
    assert "The last scan of this vault did not show Gateways/Alpha retries.md ↔" in err
    assert "hunter_false_positives" not in (root / "Gateways/Alpha retries.md").read_text()


def test_show_hidden_lists_the_hidden_pairs_with_their_reason(
    scanned: tuple[VaultIndex, ScanRun], capsys: pytest.CaptureFixture[str]
) -> None:
    index, run = scanned
    second = taught(index, run)
    assert len(second.hidden) == 4
    vault = str(index.root)
    code, out, _ = cli(capsys, "scan", "--show-hidden", "--vault", vault)
    assert code == exits.OK
    assert "learned from your decisions: 11 of your decisions used" in out
    assert "Hidden by what your decisions taught this vault (4):" in out
    assert out.count("hidden: this vault's calibration, learned from your decisions") == 4
    code, out, _ = cli(capsys, "scan", "--show-hidden", "--vault", vault, "--json")
    assert len(json.loads(out)["hidden"]) == 4


def test_the_scan_output_points_at_the_hidden_pairs(
    scanned: tuple[VaultIndex, ScanRun], capsys: pytest.CaptureFixture[str]
) -> None:
    from desktop.cli.scan_cmd import print_run

    index, run = scanned
    second = taught(index, run)
    print_run(second, vault=index.root)
    out = capsys.readouterr().out
    assert (
        "4 pairs like ones you dismissed are hidden — show them: antinomy scan --show-hidden "
        f"--vault {index.root}"
    ) in out


def test_show_hidden_refuses_scan_options_and_needs_a_scan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "scan", "--show-hidden", "--whole-vault", "--vault", str(tmp_path))
    assert code == exits.USAGE and "drop --whole-vault" in err
    code, _, err = cli(capsys, "scan", "--show-hidden", "--vault", str(tmp_path))
    assert code == exits.USAGE and "No completed scan of" in err


def test_a_damaged_learned_file_is_named_with_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".antinomy").mkdir()
    (tmp_path / ".antinomy" / "learned.json").write_text("[1, 2")
    code, _, err = cli(capsys, "learned", "--vault", str(tmp_path))
    assert code == exits.USAGE
    assert "cannot be read" in err and "antinomy learned --reset" in err


def test_tx_undo_of_dismiss_all_like_this_shows_the_pairs_like_it_again(
    scanned: tuple[VaultIndex, ScanRun], capsys: pytest.CaptureFixture[str]
) -> None:
    index, run = scanned
    vault = str(index.root)
    pair = run.pairs[0]
    code, out, _ = cli(
        capsys, "dismiss", pair.path_a, pair.path_b, "--all-like-this", "--vault", vault
    )
    assert code == exits.OK
    operation = next(h.operation_id for h in list_history(vault))
    hidden = lv.run_scan(index)
    assert hidden.learning.hidden_like >= 1

    code, out, _ = cli(capsys, "tx", "undo", operation, "--vault", vault, "--json")
    assert code == exits.OK and json.loads(out)["frames_shown_again"] == 1
    code, out, _ = cli(capsys, "learned", "--vault", vault)
    assert "hidden frames" not in out
    after = lv.run_scan(index)
    assert after.learning.hidden_like == 0 and len(after.pairs) == len(run.pairs)
