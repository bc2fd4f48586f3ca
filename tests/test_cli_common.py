"""One behaviour for every subcommand: the vault option, note names, errors and exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from desktop.cli import common, exits, scan_cmd
from desktop.cli.main import main
from desktop.flows.review.errors import BadInput, NotEligible
from desktop.resources import sample_vault_source
from desktop.vault.errors import AmbiguousNote, NoteNotFound, VaultBusy, VaultNotFound
from desktop.vault.vectors import EmbeddingModel
from foundation.errors import AntinomyError, ModelUnavailable
from tests.fakes import ScriptedGenerator, confirming_judge
from tests.test_hunter import BagOfWords
from tests.vault_files import snapshot


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(sample_vault_source(), root)
    return root.resolve()


@pytest.fixture
def no_models(monkeypatch: pytest.MonkeyPatch) -> ScriptedGenerator:
    """Scan and index without loading a model: bag-of-words vectors, a scripted LLM and judge."""
    gen = ScriptedGenerator(['{"pairs": []}'] * 4)
    monkeypatch.setattr(scan_cmd, "_load_generator", lambda runtime: gen)
    monkeypatch.setattr(scan_cmd, "_load_judge", lambda runtime: confirming_judge())
    bag = EmbeddingModel("bag-of-words", 64, BagOfWords())
    monkeypatch.setattr(common, "load_embedding_model", lambda **_: bag)
    return gen


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_exit_codes_follow_the_error_class_and_its_parents() -> None:
    assert common.exit_code_for(NoteNotFound("x")) == exits.USAGE
    assert common.exit_code_for(AmbiguousNote("x", ("a.md", "b.md"))) == exits.USAGE
    assert common.exit_code_for(BadInput("x")) == exits.USAGE  # a ReviewRefused, but usage
    assert common.exit_code_for(NotEligible("x")) == exits.DATA_ERROR
    assert common.exit_code_for(VaultBusy("x")) == exits.TEMP_FAILURE
    assert common.exit_code_for(ModelUnavailable("x")) == exits.UNAVAILABLE
    assert common.exit_code_for(AntinomyError("x")) == exits.FAILURE


MISSING_VAULT_COMMANDS = [
    ["index", "--no-embed"],
    ["search", "words", "--no-embed"],
    ["scan"],
    ["dismiss", "A", "B"],
    ["dismissed"],
    ["resolve", "A"],
    ["tx", "history"],
    ["tx", "recover"],
    ["memory", "pending"],
    ["consolidate", "--no-judge"],
    ["recall", "words"],
    ["capture", "import", "t.jsonl"],
    ["ingest", "source.md"],
    ["guard", "status"],
]


@pytest.mark.parametrize("argv", MISSING_VAULT_COMMANDS, ids=lambda a: " ".join(a))
def test_a_missing_vault_is_the_same_error_everywhere(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], no_models: object
) -> None:
    missing = tmp_path / "nowhere"
    code, _, err = cli(capsys, *argv, "--vault", str(missing))
    assert code == exits.USAGE
    assert err == f"antinomy: The vault folder {missing} does not exist — check the path.\n"
    assert not missing.exists()  # nothing created where the vault was expected


def test_tx_defaults_to_the_sample_vault_like_every_command(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("ANTINOMY_VAULT", raising=False)
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, "tx", "history")
    assert code == exits.OK and out == "No operations yet.\n"
    assert "using the sample vault at" in err
    assert not (tmp_path / ".antinomy").exists()  # no state left in the current folder


def test_an_unknown_note_is_the_same_error_for_scan_and_review(
    vault: Path, capsys: pytest.CaptureFixture[str], no_models: object
) -> None:
    message = (
        f"antinomy: No note 'Nobody' in the vault {vault} — check the name, or give the "
        "note's path relative to the vault (`antinomy search` finds it).\n"
    )
    for argv in (["scan", "--focus", "Nobody"], ["resolve", "Nobody"]):
        code, out, err = cli(capsys, *argv, "--vault", str(vault))
        assert (code, out) == (exits.USAGE, "")
        assert err.endswith("\n" + message) or err == message  # after the scan's progress


def test_an_ambiguous_name_lists_the_candidates_for_scan_and_review(
    vault: Path, capsys: pytest.CaptureFixture[str], no_models: object
) -> None:
    before = snapshot(vault)
    records = []
    for argv in (["scan", "--focus", "[[roadmap]]"], ["defeat", "Roadmap", "--motive", "old"]):
        code, out, err = cli(capsys, *argv, "--vault", str(vault), "--json")
        assert code == exits.USAGE
        assert "is the name of 2 notes: Archive/Roadmap.md, Projects/Roadmap.md" in err
        records.append(json.loads(out))
    for record in records:
        assert record["ok"] is False and record["exit_code"] == exits.USAGE
        assert record["error_type"] == "AmbiguousNote"
        assert record["candidates"] == ["Archive/Roadmap.md", "Projects/Roadmap.md"]
    assert snapshot(vault) == before


def test_scan_focus_takes_a_wikilink_like_dismiss(
    vault: Path, capsys: pytest.CaptureFixture[str], no_models: ScriptedGenerator
) -> None:
    code, out, err = cli(
        capsys, "scan", "--focus", "[[Run before work|my habit]]", "--vault", str(vault), "--json"
    )
    assert code == exits.OK, err
    assert json.loads(out)["focus"] == "Substrates/Run before work.md"


@pytest.mark.parametrize("argv", [["search", "  ", "--no-embed"], ["recall", ""]])
def test_an_empty_query_is_a_usage_error_before_any_model_loads(
    argv: list[str],
    vault: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_load(*_args: object) -> None:
        raise AssertionError("a model was loaded for an empty query")

    monkeypatch.setattr("desktop.cli.memory_cmd.open_embedder", no_load)
    code, out, err = cli(capsys, *argv, "--vault", str(vault))
    assert (code, out) == (exits.USAGE, "")
    assert err == "antinomy: The query is empty — give a few words to look for.\n"


def test_error_records_have_one_shape(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text("not json")
    shapes = set()
    for argv in (
        ["tx", "inspect", str(plan)],
        ["resolve", "Nobody"],
        ["ingest", str(tmp_path / "missing.pdf")],
    ):
        code, out, _ = cli(capsys, *argv, "--vault", str(vault), "--json")
        record = json.loads(out)
        assert record["exit_code"] == code != exits.OK
        shapes.add(frozenset(record) - {"reason"})
    assert shapes == {frozenset({"ok", "error", "error_type", "paths", "candidates", "exit_code"})}


def test_vault_not_found_is_raised_for_a_file(tmp_path: Path) -> None:
    file = tmp_path / "note.md"
    file.write_text("x")
    args = type("Args", (), {"vault": str(file)})()
    with pytest.raises(VaultNotFound, match="is a file, not a vault folder"):
        common.vault_path(args)  # type: ignore[arg-type]


def test_options_are_not_abbreviated(capsys: pytest.CaptureFixture[str]) -> None:
    # argparse would read "--mode whole-vault" as "--model whole-vault" (a GGUF file named
    # whole-vault) and fail on a missing model instead of on the unknown option
    from desktop.cli.main import main

    with pytest.raises(SystemExit) as exc:
        main(["scan", "--mode", "whole-vault"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --mode whole-vault" in capsys.readouterr().err
