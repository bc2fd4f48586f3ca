"""The tension scan with a scripted engine: selection, the retry policy, verification."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from desktop.flows.hunter import (
    DISCLAIMER,
    ScanError,
    ScanSettings,
    load_last_run,
    scan,
    write_debug_note,
)
from desktop.flows.hunter.verify import quote_found
from desktop.vault.index import VaultIndex
from desktop.vault.transactions import list_history
from desktop.vault.vectors import EmbeddingModel
from inference.base import StopFlag
from inference.errors import GenerationError
from inference.structured import STRICT_SUFFIX
from tests.fakes import ScriptedGenerator
from tests.test_index import BagOfWords

NOTES = {
    "Tensions/Speed vs care.md": (
        "---\ntype: tension\nstatus: open\n---\n# Speed vs care\n\n"
        "We ship every change the moment it is ready.\nCareful review matters more than speed.\n"
    ),
    "Substrates/Friday releases.md": (
        "---\ntype: substrate\n---\n# Friday releases\n\n"
        "Production releases go out every **Friday** afternoon.\n"
    ),
    "Substrates/Quiet weekends.md": (
        "---\ntype: substrate\nhunter_false_positives: [Morning runs]\n---\n# Quiet weekends\n\n"
        "Nothing ships to production after Thursday noon.\n"
    ),
    "Substrates/Morning runs.md": (
        "---\ntype: substrate\nhunter_false_positives:\n  - Quiet weekends\n---\n"
        "# Morning runs\n\nI run before work, every day, releases or not.\n"
    ),
    "Tensions/Old argument.md": (
        "---\ntype: tension\nstatus: resolved\n---\n# Old argument\n\nSettled long ago.\n"
    ),
    "Principles/Retired.md": "---\ntype: defeated\n---\n# Retired\n\nReleases ship on Fridays.\n",
    "Journal/2024-01-08.md": (
        "# 2024-01-08\n\nShipped the release on Friday again; quiet weekend.\n"
    ),
}


def pair(a: str, b: str, qa: str, qb: str, **extra: Any) -> dict[str, Any]:
    return {
        "note_a": a,
        "note_b": b,
        "quote_a": qa,
        "quote_b": qb,
        "description": extra.pop("description", "They disagree about when releases happen."),
        "confidence": extra.pop("confidence", "high"),
        **extra,
    }


GOOD = pair(
    "Friday releases",
    "Quiet weekends",
    "Production releases go out every Friday afternoon.",
    "Nothing ships to production after Thursday noon.",
)


def answer(*pairs: dict[str, Any], key: str = "pairs") -> str:
    return json.dumps({key: list(pairs)})


@pytest.fixture()
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture()
def index(vault: Path) -> VaultIndex:
    idx = VaultIndex(vault, embedding=EmbeddingModel("bag-of-words", 64, BagOfWords()))
    idx.update()
    return idx


def test_valid_answer_is_verified_kept_and_persisted(index: VaultIndex, vault: Path) -> None:
    gen = ScriptedGenerator([answer(GOOD)])
    run = scan(index, gen, mode="classic")
    assert run.status == "ok" and len(gen.calls) == 1
    assert [(p.note_a, p.note_b, p.confidence) for p in run.pairs] == [
        ("Friday releases", "Quiet weekends", "high")
    ]
    shown = run.pairs[0]
    assert shown.path_a == "Substrates/Friday releases.md"
    assert shown.sha_a == index.note(shown.path_a).sha256  # type: ignore[union-attr]
    # Open tensions and substrates only: the resolved tension and the defeated note stay out.
    user = gen.calls[0].messages[1].content
    assert "Old argument" not in user and "Retired" not in user and "2024-01-08" not in user
    assert "NOTE: Speed vs care (tension)" in user
    assert "hunter_false_positives" not in user and "status: open" not in user
    assert run.notes_examined == 4 and run.candidates == 4 and run.pairs_considered == 6
    assert run.tokens_in > 0 and run.model == "scripted" and run.backend == "fake"
    assert load_last_run(vault) == run


def test_the_schema_names_only_prompt_notes(index: VaultIndex) -> None:
    gen = ScriptedGenerator([answer()])
    scan(index, gen, mode="classic")
    schema = gen.calls[0].schema
    assert schema is not None
    item = schema["properties"]["pairs"]["items"]
    assert sorted(item["properties"]["note_a"]["enum"]) == [
        "Friday releases",
        "Morning runs",
        "Quiet weekends",
        "Speed vs care",
    ]
    assert schema["properties"]["pairs"]["maxItems"] == ScanSettings().max_pairs_per_answer


def test_prose_then_valid_answer_on_the_stricter_retry(index: VaultIndex) -> None:
    first = "Sure! The notes about Friday and the weekend seem to disagree."
    gen = ScriptedGenerator([first, answer(GOOD)])
    run = scan(index, gen, mode="classic")
    assert run.status == "ok" and len(run.pairs) == 1 and len(gen.calls) == 2
    retry_system = gen.calls[1].messages[0].content
    assert STRICT_SUFFIX in retry_system and STRICT_SUFFIX not in gen.calls[0].messages[0].content
    assert all(first not in m.content for m in gen.calls[1].messages)
    assert [a.retry for a in run.attempts] == [False, True]


def test_two_prose_answers_are_a_format_failure_with_a_debug_note(
    index: VaultIndex, vault: Path
) -> None:
    gen = ScriptedGenerator(["I think they agree.", "```\nnot json at all\n```"])
    run = scan(index, gen, mode="classic")
    assert run.status == "format_failure" and run.pairs == ()
    assert run.raw_answers == ("I think they agree.", "```\nnot json at all\n```")
    assert load_last_run(vault) is None  # only completed runs are kept
    path = write_debug_note(vault, run)
    assert path.startswith("Antinomy/Debug/HUNTER-RAW ") and path.endswith(".md")
    text = (vault / path).read_text(encoding="utf-8")
    assert "I think they agree." in text and "not json at all" in text
    assert "````" in text  # a longer fence than the answer's own
    assert "scripted" in text and "fake" in text and "stricter retry" in text
    assert [h.operation_type for h in list_history(vault)] == ["debug-note"]
    # A second note in the same second gets its own name.
    assert write_debug_note(vault, run) != path


def test_empty_array_is_an_answer_and_is_not_retried(index: VaultIndex) -> None:
    gen = ScriptedGenerator([answer()])
    run = scan(index, gen, mode="classic")
    assert run.status == "ok" and run.pairs == () and len(gen.calls) == 1


def test_transport_error_is_not_retried(index: VaultIndex, vault: Path) -> None:
    gen = ScriptedGenerator([GenerationError("connection refused by http://127.0.0.1:9")])
    run = scan(index, gen, mode="classic")
    assert run.status == "error" and "connection refused" in (run.error or "")
    assert len(gen.calls) == 1 and load_last_run(vault) is None


def test_stop_during_generation(index: VaultIndex) -> None:
    stop = StopFlag()
    gen = ScriptedGenerator(["{", answer(GOOD)], stop_on_call=1)
    run = scan(index, gen, mode="classic", stop=stop)
    assert run.status == "stopped" and len(gen.calls) == 1 and run.pairs == ()


def test_bad_pairs_are_dropped_with_their_reason(index: VaultIndex) -> None:
    q_friday = "Production releases go out every Friday afternoon."
    q_quiet = "Nothing ships to production after Thursday noon."
    items = [
        GOOD,
        pair("Invented note", "Quiet weekends", q_friday, q_quiet),  # hallucinated name
        pair("Quiet weekends", "Quiet weekends", q_quiet, q_quiet),  # self-pair
        pair("Friday releases", "Speed vs care", q_friday, "We never ship on Fridays."),  # fake
        pair("Friday releases", "Speed vs care", "", "Careful review matters more than speed."),
        pair(
            "Friday releases", "Speed vs care", q_friday, "Careful review matters.", description=""
        ),
        pair(
            "Quiet weekends", "Morning runs", q_quiet, "I run before work, every day"
        ),  # dismissed
        pair("Morning runs", "Quiet weekends", "I run before work", q_quiet),  # other orientation
        pair("Quiet weekends", "Friday releases", q_quiet, q_friday),  # duplicate of GOOD
        "not an object",
    ]
    run = scan(index, ScriptedGenerator([answer(*items)]), mode="classic")
    assert len(run.pairs) == 1
    assert run.dropped == {
        "dismissed": 2,
        "duplicate": 1,
        "malformed": 1,
        "missing_quote": 1,
        "no_description": 1,
        "quote_not_found": 1,
        "same_note": 1,
        "unknown_note": 1,
    }
    assert run.dropped_total == 9


def test_legacy_italian_keys_and_think_blocks(index: VaultIndex) -> None:
    legacy = {
        "contraddizioni": [
            {
                "nota_a": "[[Friday releases]]",
                "nota_b": "Quiet weekends.md",
                "citazione_a": "“production releases go out every Friday afternoon”",
                "citazione_b": "...Nothing ships to production\n after Thursday noon...",
                "descrizione": "Venerdì contro giovedì.",
                "confidenza": "alta",
            }
        ]
    }
    text = '<think>The user wants JSON. {"pairs": 3}</think>\n' + json.dumps(legacy)
    run = scan(index, ScriptedGenerator([text]), mode="classic")
    assert [(p.note_a, p.note_b, p.confidence, p.description) for p in run.pairs] == [
        ("Friday releases", "Quiet weekends", "high", "Venerdì contro giovedì.")
    ]
    assert run.pairs[0].quote_b == "Nothing ships to production\n after Thursday noon"


def test_unknown_confidence_shows_as_medium_and_sorts_as_medium(index: VaultIndex) -> None:
    other = pair(
        "Speed vs care",
        "Friday releases",
        "We ship every change the moment it is ready.",
        "Production releases go out every Friday afternoon.",
        confidence="certain",
    )
    low = pair(
        "Speed vs care",
        "Quiet weekends",
        "Careful review matters more than speed.",
        "Nothing ships to production after Thursday noon.",
        confidence="bassa",
    )
    run = scan(index, ScriptedGenerator([answer(low, other, GOOD)]), mode="classic")
    assert [(p.confidence, p.confidence_defaulted) for p in run.pairs] == [
        ("high", False),
        ("medium", True),
        ("low", False),
    ]


def test_quotes_match_ignoring_case_space_typography_and_emphasis() -> None:
    text = "Production releases go out every **Friday** afternoon.\nIt's   the rule."
    assert quote_found("production releases go out every friday afternoon", text)
    assert quote_found("It’s the rule.", text)
    assert quote_found('"It\'s the rule."', text)
    assert not quote_found("Releases go out every Monday", text)
    assert not quote_found("…", text)


def test_focus_mode_keeps_pairs_with_the_focus_note(index: VaultIndex) -> None:
    off_focus = pair(
        "Speed vs care",
        "Quiet weekends",
        "Careful review matters more than speed.",
        "Nothing ships to production after Thursday noon.",
    )
    gen = ScriptedGenerator([answer(off_focus, GOOD)])
    run = scan(index, gen, mode="focus", focus="Substrates/Friday releases.md")
    assert run.status == "ok" and run.focus == "Substrates/Friday releases.md"
    assert [p.path_a for p in run.pairs] == ["Substrates/Friday releases.md"]
    assert run.dropped == {"not_focus": 1}
    user = gen.calls[0].messages[1].content
    assert 'Compare the note "Friday releases"' in user
    assert user.index("NOTE: Friday releases") < user.index("NOTE: Quiet weekends")
    # Neighbours come from the whole vault, not only tensions and substrates; never retired notes.
    assert "NOTE: 2024-01-08" in user and "Retired" not in user


def test_focus_pairs_are_oriented_focus_first(index: VaultIndex) -> None:
    flipped = pair(
        "Quiet weekends",
        "Friday releases",
        "Nothing ships to production after Thursday noon.",
        "Production releases go out every Friday afternoon.",
    )
    run = scan(
        index,
        ScriptedGenerator([answer(flipped)]),
        mode="focus",
        focus="Substrates/Friday releases.md",
    )
    (shown,) = run.pairs
    assert shown.note_a == "Friday releases"
    assert shown.quote_a == "Production releases go out every Friday afternoon."


def test_bad_focus_and_too_few_notes_are_clear_errors(index: VaultIndex, tmp_path: Path) -> None:
    with pytest.raises(ScanError, match="not in the index"):
        scan(index, ScriptedGenerator([]), mode="focus", focus="Nope.md")
    with pytest.raises(ScanError, match="needs a focus note"):
        scan(index, ScriptedGenerator([]), mode="focus")
    with pytest.raises(ScanError, match="Unknown scan mode"):
        scan(index, ScriptedGenerator([]), mode="sideways")  # type: ignore[arg-type]
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    (lonely / "One.md").write_text("---\ntype: tension\n---\nAlone.\n")
    idx = VaultIndex(lonely)
    idx.update()
    with pytest.raises(ScanError, match="at least two notes"):
        scan(idx, ScriptedGenerator([]), mode="classic")


def test_classic_cap_and_body_limit(index: VaultIndex) -> None:
    gen = ScriptedGenerator([answer()])
    run = scan(index, gen, mode="classic", settings=ScanSettings(cap=2, body_chars=30))
    assert run.notes_examined == 2 and run.candidates == 4
    assert sorted(e.reason for e in run.excluded) == ["beyond the cap of 2 newest notes"] * 2
    user = gen.calls[0].messages[1].content
    for block in user.split("NOTE: ")[1:]:
        body = block.split("\n", 1)[1].strip()
        assert len(body) <= 32  # 30 characters and an ellipsis


def test_notes_that_do_not_fit_the_context_are_excluded_with_the_reason(
    index: VaultIndex,
) -> None:
    gen = ScriptedGenerator([answer()])
    gen.context_length = 700
    run = scan(index, gen, mode="classic", settings=ScanSettings(max_answer_tokens=200))
    assert 2 <= run.notes_examined < 4
    assert any("did not fit the model's context (700 tokens)" in e.reason for e in run.excluded)
    assert run.candidates == run.notes_examined + len(run.excluded)


def test_whole_vault_batches_candidate_pairs(index: VaultIndex) -> None:
    settings = ScanSettings(band_low=0.0, band_high=1.0, batch_notes=3)
    progress: list[tuple[int, int, str]] = []
    # The model proposes the same pair in every batch: shown once, where both notes were sent.
    gen = ScriptedGenerator([answer(GOOD)] * 20)
    run = scan(
        index,
        gen,
        mode="whole-vault",
        settings=settings,
        progress=lambda d, t, w: progress.append((d, t, w)),
    )
    assert run.status == "ok" and run.batches == len(gen.calls) >= 2
    both = [
        c
        for c in gen.calls
        if "NOTE: Friday releases" in c.messages[1].content
        and "NOTE: Quiet weekends" in c.messages[1].content
    ]
    assert [(p.note_a, p.note_b) for p in run.pairs] == [("Friday releases", "Quiet weekends")]
    assert run.dropped.get("duplicate", 0) == len(both) - 1
    assert run.dropped.get("unknown_note", 0) == len(gen.calls) - len(both)
    for call in gen.calls:
        assert 2 <= call.messages[1].content.count("NOTE: ") <= 3
    reasons = {e.path: e.reason for e in run.excluded}
    assert reasons["Principles/Retired.md"] == "type 'defeated' is not scanned"
    assert run.candidates == 6  # every note but the defeated one
    assert run.pairs_considered > 0 and run.notes_examined <= run.candidates
    assert progress[-1][0] == progress[-1][1] and progress[-1][2] == "done"


def test_whole_vault_reports_notes_without_a_neighbour_in_the_band(index: VaultIndex) -> None:
    settings = ScanSettings(band_low=0.999, band_high=1.0)
    run = scan(index, ScriptedGenerator([]), mode="whole-vault", settings=settings)
    assert run.status == "ok" and run.batches == 0 and run.pairs_considered == 0
    assert any(e.reason.startswith("no neighbour in the similarity band") for e in run.excluded)


def test_whole_vault_stops_between_batches(index: VaultIndex) -> None:
    stop = StopFlag()
    settings = ScanSettings(band_low=0.0, band_high=1.0, batch_notes=2)
    gen = ScriptedGenerator([answer()] * 20)
    original = gen.complete

    def complete_then_stop(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        stop.set()  # the user presses Stop while the first batch finishes
        return result

    gen.complete = complete_then_stop  # type: ignore[method-assign]
    run = scan(index, gen, mode="whole-vault", settings=settings, stop=stop)
    assert run.status == "stopped" and len(gen.calls) == 1


def test_whole_vault_needs_vectors(vault: Path) -> None:
    idx = VaultIndex(vault)
    idx.update()
    with pytest.raises(ScanError, match="needs the embedding index"):
        scan(idx, ScriptedGenerator([]), mode="whole-vault")


def test_whole_vault_keeps_raw_answers_of_failed_batches(index: VaultIndex) -> None:
    settings = ScanSettings(band_low=0.0, band_high=1.0, batch_notes=2)
    gen = ScriptedGenerator(["nope", "still nope"] + [answer()] * 30)
    run = scan(index, gen, mode="whole-vault", settings=settings)
    assert run.status == "ok" and run.failed_batches == 1
    assert run.raw_answers == ("nope", "still nope")


def test_the_disclaimer_says_these_are_not_truths() -> None:
    assert "not truths" in DISCLAIMER


def test_hand_written_dismissals_match_like_links(vault: Path) -> None:
    note = vault / "Substrates/Quiet weekends.md"
    note.write_text(
        note.read_text().replace("[Morning runs]", '["[[friday releases|Fri]]"]'),
        encoding="utf-8",
    )
    idx = VaultIndex(vault)
    idx.update()
    run = scan(idx, ScriptedGenerator([answer(GOOD)]), mode="classic")
    assert run.pairs == () and run.dropped == {"dismissed": 1}


def test_focus_and_two_note_schemas_cannot_pair_a_note_with_itself(index: VaultIndex) -> None:
    gen = ScriptedGenerator([answer()])
    scan(index, gen, mode="focus", focus="Substrates/Friday releases.md")
    item = gen.calls[0].schema["properties"]["pairs"]["items"]["properties"]  # type: ignore[index]
    assert item["note_a"]["enum"] == ["Friday releases"]
    assert "Friday releases" not in item["note_b"]["enum"] and len(item["note_b"]["enum"]) >= 2

    gen = ScriptedGenerator([answer()] * 30)
    settings = ScanSettings(band_low=0.0, band_high=1.0, batch_notes=2)
    scan(index, gen, mode="whole-vault", settings=settings)
    for call in gen.calls:
        item = call.schema["properties"]["pairs"]  # type: ignore[index]
        a = item["items"]["properties"]["note_a"]["enum"]
        b = item["items"]["properties"]["note_b"]["enum"]
        assert len(a) == len(b) == 1 and a != b and item["maxItems"] == 1
