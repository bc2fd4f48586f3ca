"""Whole-vault scans of vaults with nothing to compare, on the real shipped models.

A vault of only code, only templates, notes in three languages, one note too large to
read, or thousands of one-line notes: the scan finishes, shows no pair it cannot back
with prose in one language, and says what it left out and why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.flows.alignment import language
from desktop.flows.embedding import embedding_model
from desktop.flows.hunter import ScanRun, ScanSettings, scan
from desktop.vault.index import VaultIndex
from inference.runtime import Runtime

pytestmark = pytest.mark.model


def write(root: Path, notes: dict[str, str]) -> Path:
    for name, text in notes.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def whole_vault(runtime: Runtime, root: Path, **settings: int) -> ScanRun:
    index = VaultIndex(root, embedding=embedding_model(runtime.queued_embedder()))
    index.update()
    run = scan(
        index,
        runtime.queued_generator(),
        judge=runtime.queued_judge(),
        mode="whole-vault",
        settings=ScanSettings(**settings),
    )
    assert run.status == "ok", run.error
    return run


def reasons(run: ScanRun) -> set[str]:
    return {e.reason for e in run.excluded}


def test_a_vault_of_code_shows_nothing_and_says_it_is_code(
    runtime: Runtime, tmp_path: Path
) -> None:
    root = write(
        tmp_path,
        {
            f"snippet{i}.md": f"```python\ndef f{i}(x):\n    return x * {i}\n```\n\n"
            f"`pip install package-{i}`\n"
            for i in range(12)
        },
    )
    run = whole_vault(runtime, root)
    assert run.pairs == ()
    assert run.not_evidence.get("code", 0) >= 12
    assert all("no prose to compare" in e.reason for e in run.excluded)
    assert len(run.excluded) == 12


def test_a_vault_of_templates_shows_nothing_and_calls_them_boilerplate(
    runtime: Runtime, tmp_path: Path
) -> None:
    apps = ["Notion", "Evernote", "Bear", "Roam", "Joplin", "Simplenote", "Zoho", "OneNote"]
    root = write(
        tmp_path,
        {
            f"Import from {app}.md": f"# Import from {app}\n\n"
            f"This importer converts your {app} export into Markdown files.\n"
            f"Open {app} and choose Export before you start.\n"
            f"The {app} importer keeps your folders as they are.\n"
            for app in apps
        },
    )
    run = whole_vault(runtime, root)
    assert run.pairs == ()
    assert any("boilerplate" in reason for reason in run.not_evidence)


def test_three_languages_are_never_judged_across(runtime: Runtime, tmp_path: Path) -> None:
    en = ["I cycle to the office every morning.", "My budget for books is 50 euros a month."]
    fr = [
        "Je vais au bureau à vélo tous les matins.",
        "Mon budget pour les livres est de 50 euros par mois.",
    ]
    it = [
        "Vado in ufficio in bicicletta ogni mattina.",
        "Il mio budget per i libri è di 50 euro al mese.",
    ]
    notes = {
        f"{lang}{i}.md": s
        for lang, lines in (("en", en), ("fr", fr), ("it", it))
        for i, s in enumerate(lines)
    }
    run = whole_vault(runtime, write(tmp_path, notes))
    for pair in run.pairs:
        assert language(pair.quote_a) == language(pair.quote_b), pair
    # The translations of one sentence are each other's nearest neighbours: they reach the
    # judge's door and are set aside there, counted.
    assert run.set_aside.get("written in different languages", 0) >= 1


def test_a_note_too_large_to_read_is_named_and_the_rest_is_scanned(
    runtime: Runtime, tmp_path: Path
) -> None:
    line = "The weather was mild and the walk along the river took most of the afternoon. "
    root = write(
        tmp_path,
        {
            "giant.md": "# Giant\n\n" + line * 16_000,  # about 1.3 MB
            "train.md": "I always take the train to work.\n",
            "no-train.md": "I never take the train to work.\n",
        },
    )
    run = whole_vault(runtime, root)
    assert any(e.path == "giant.md" and "MB limit" in e.reason for e in run.excluded)
    assert run.note_pairs_judged == 1


def test_thousands_of_tiny_notes_finish_within_the_budget_and_name_what_was_left(
    runtime: Runtime, tmp_path: Path
) -> None:
    drinks = ["coffee", "tea", "cocoa", "juice", "water", "lemonade", "milk", "soda"]
    days = ["Mondays", "Tuesdays", "Fridays", "Sundays"]
    root = write(
        tmp_path,
        {
            f"n{i:04d}.md": f"I drink {drinks[i % 8]} on {days[(i // 8) % 4]} at {i % 24}:00."
            for i in range(1500)
        },
    )
    run = whole_vault(runtime, root, max_pairs=60)
    assert run.note_pairs_judged <= 60
    budget = [e for e in run.excluded if "beyond the run's budget of 60" in e.reason]
    assert len(budget) > 1000
    assert len(run.excluded) + run.notes_examined >= 1500
