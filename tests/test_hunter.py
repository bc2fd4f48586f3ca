"""The tension scan with a scripted engine: selection, the retry policy, verification."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from desktop.flows.hunter import (
    DISCLAIMER,
    ScanError,
    ScanRun,
    ScanSettings,
    load_last_run,
    scan,
    write_debug_note,
)
from desktop.flows.hunter.prompt import template
from desktop.flows.hunter.select import (
    candidate_pairs,
    scannable,
    shown_candidates,
    whole_vault_pairs,
)
from desktop.flows.hunter.verify import quote_found, recorded_with, records_pair
from desktop.vault.index import VaultIndex
from desktop.vault.notes import Note, parse_note
from desktop.vault.transactions import list_history
from desktop.vault.vectors import EmbeddingModel
from foundation.errors import GenerationError, ModelUnavailable
from inference.base import StopFlag
from inference.judge import Thresholds
from inference.structured import STRICT_SUFFIX
from tests.fakes import ScriptedGenerator, ScriptedJudge, confirming_judge
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
    run = scan(index, gen, judge=confirming_judge(), mode="classic")
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
    scan(index, gen, judge=confirming_judge(), mode="classic")
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
    run = scan(index, gen, judge=confirming_judge(), mode="classic")
    assert run.status == "ok" and len(run.pairs) == 1 and len(gen.calls) == 2
    retry_system = gen.calls[1].messages[0].content
    assert STRICT_SUFFIX in retry_system and STRICT_SUFFIX not in gen.calls[0].messages[0].content
    assert all(first not in m.content for m in gen.calls[1].messages)
    assert [a.retry for a in run.attempts] == [False, True]


def test_two_prose_answers_are_a_format_failure_with_a_debug_note(
    index: VaultIndex, vault: Path
) -> None:
    gen = ScriptedGenerator(["I think they agree.", "```\nnot json at all\n```"])
    run = scan(index, gen, judge=confirming_judge(), mode="classic")
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
    run = scan(index, gen, judge=confirming_judge(), mode="classic")
    assert run.status == "ok" and run.pairs == () and len(gen.calls) == 1


def test_transport_error_is_not_retried(index: VaultIndex, vault: Path) -> None:
    gen = ScriptedGenerator([GenerationError("connection refused by http://127.0.0.1:9")])
    run = scan(index, gen, judge=confirming_judge(), mode="classic")
    assert run.status == "error" and "connection refused" in (run.error or "")
    assert len(gen.calls) == 1 and load_last_run(vault) is None


def test_stop_during_generation(index: VaultIndex) -> None:
    stop = StopFlag()
    gen = ScriptedGenerator(["{", answer(GOOD)], stop_on_call=1)
    run = scan(index, gen, judge=confirming_judge(), mode="classic", stop=stop)
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
    run = scan(
        index, judge=confirming_judge(), engine=ScriptedGenerator([answer(*items)]), mode="classic"
    )
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
    run = scan(index, judge=confirming_judge(), engine=ScriptedGenerator([text]), mode="classic")
    assert [(p.note_a, p.note_b, p.confidence, p.description) for p in run.pairs] == [
        ("Friday releases", "Quiet weekends", "high", "Venerdì contro giovedì.")
    ]
    assert run.pairs[0].quote_b == "Nothing ships to production\n after Thursday noon"


def test_confidence_comes_from_the_judge_not_the_model(index: VaultIndex) -> None:
    other = pair(
        "Speed vs care",
        "Friday releases",
        "We ship every change the moment it is ready.",
        FRIDAY,
        confidence="certain",
    )
    low = pair(
        "Speed vs care",
        "Quiet weekends",
        "Careful review matters more than speed.",
        THURSDAY,
        confidence="bassa",
    )
    probabilities = {
        frozenset((FRIDAY, THURSDAY)): 0.96,
        frozenset(("Careful review matters more than speed.", THURSDAY)): 0.7,
        frozenset(("We ship every change the moment it is ready.", FRIDAY)): 0.55,
    }

    def verdict(a: str, b: str) -> tuple[float, float, float]:
        p = probabilities.get(frozenset((a, b)), 0.02)
        return (p, (1 - p) / 2, (1 - p) / 2)

    judge = ScriptedJudge(verdict=verdict)
    judge.thresholds = Thresholds(min_cosine=2.0)  # only the model's proposals are judged
    run = scan(
        index, judge=judge, engine=ScriptedGenerator([answer(low, other, GOOD)]), mode="classic"
    )
    assert [(p.confidence, p.probability) for p in run.pairs] == [
        ("high", 0.96),
        ("medium", 0.7),
        ("low", 0.55),
    ]
    assert not any(p.confidence_defaulted for p in run.pairs)


def test_quotes_match_ignoring_case_space_typography_and_emphasis() -> None:
    text = "Production releases go out every **Friday** afternoon.\nIt's   the rule."
    assert quote_found("production releases go out every friday afternoon", text)
    assert quote_found("It’s the rule.", text)
    assert quote_found('"It\'s the rule."', text)
    assert not quote_found("Releases go out every Monday", text)
    assert not quote_found("…", text)


FRIDAY = "Production releases go out every Friday afternoon."
THURSDAY = "Nothing ships to production after Thursday noon."


def release_judge(**thresholds: float) -> ScriptedJudge:
    """Reads the Friday/Thursday sentences as a contradiction, everything else as neutral."""
    judge = ScriptedJudge(contradictions=[(FRIDAY, THURSDAY)])
    judge.thresholds = Thresholds(min_cosine=thresholds.get("min_cosine", 0.0))
    return judge


def described(text: str = "One ships on Fridays, the other stops on Thursday.") -> str:
    return json.dumps({"description": text})


def test_focus_mode_judges_the_focus_note_against_its_neighbours(index: VaultIndex) -> None:
    gen = ScriptedGenerator([described()])
    judge = release_judge()
    run = scan(index, gen, judge=judge, mode="focus", focus="Substrates/Friday releases.md")
    assert run.status == "ok" and run.focus == "Substrates/Friday releases.md"
    (shown,) = run.pairs
    assert (shown.path_a, shown.path_b) == (
        "Substrates/Friday releases.md",
        "Substrates/Quiet weekends.md",
    )
    # The quotes are the judged sentences, as written in the notes (emphasis kept).
    assert shown.quote_a == "Production releases go out every **Friday** afternoon."
    assert shown.quote_b == THURSDAY
    assert shown.found_by == "judge" and shown.probability == pytest.approx(0.96)
    assert shown.confidence == "high" and not shown.confidence_defaulted
    assert shown.description == "One ships on Fridays, the other stops on Thursday."
    assert shown.described_by == "model"
    # The model was asked once, to describe the pair; the judge compared sentences of
    # the focus note with each neighbour's (never retired notes).
    assert len(gen.calls) == 1 and THURSDAY in gen.calls[0].messages[-1].content
    # The instructions are a system message of their own, the same for every pair (the
    # generator keeps its decoded state for the next pair).
    system = gen.calls[0].messages[0]
    assert system.role == "system" and system.content == template("hunter-describe-system")
    assert THURSDAY not in system.content
    assert run.note_pairs_judged == run.notes_examined - 1 >= 2
    assert all("Retired" not in a + b for a, b in judge.calls)
    n = run.note_pairs_judged
    assert f"focus “Friday releases”, {n} neighbours judged" in run.summary()
    assert "note pairs judged" not in run.summary()


def test_focus_pairs_are_oriented_focus_first(index: VaultIndex) -> None:
    run = scan(
        index,
        ScriptedGenerator([described()]),
        judge=release_judge(),
        mode="focus",
        focus="Substrates/Quiet weekends.md",
    )
    (shown,) = run.pairs
    assert shown.note_a == "Quiet weekends" and shown.quote_a == THURSDAY


def test_a_pair_the_model_cannot_describe_is_shown_with_a_plain_description(
    index: VaultIndex,
) -> None:
    gen = ScriptedGenerator(["nope", "still nope"])
    run = scan(
        index, gen, judge=release_judge(), mode="focus", focus="Substrates/Friday releases.md"
    )
    (shown,) = run.pairs
    assert shown.described_by == "plain"
    assert shown.description == (
        "Friday releases: releases go out every Friday afternoon vs Nothing ships … after "
        "Thursday noon"
    )
    assert run.description_failures == 1 and run.raw_answers == ("nope", "still nope")


def test_a_model_the_manifest_marks_as_not_describing_is_not_asked(index: VaultIndex) -> None:
    gen = ScriptedGenerator([])  # any call would fail: nothing is scripted
    gen.describes = False
    gen.model_name = "Tiny model"
    run = scan(
        index, gen, judge=release_judge(), mode="focus", focus="Substrates/Friday releases.md"
    )
    (shown,) = run.pairs
    assert gen.calls == [] and shown.described_by == "plain"
    assert shown.description.startswith("Friday releases: ")
    assert run.description_failures == 0 and run.plain_descriptions_for == "Tiny model"


def test_the_shipped_default_model_is_not_asked_for_descriptions() -> None:
    from inference.registry import default_spec

    assert default_spec("llm").extra.get("describes") is False


def test_without_a_judge_the_scan_refuses_to_show_unjudged_pairs(index: VaultIndex) -> None:
    with pytest.raises(ModelUnavailable, match="cannot judge"):
        scan(index, ScriptedGenerator([answer(GOOD)]), judge=None, mode="classic")


def test_subject_gate_keeps_unrelated_sentences_from_the_judge(index: VaultIndex) -> None:
    judge = release_judge(min_cosine=2.0)
    run = scan(
        index,
        ScriptedGenerator([]),
        judge=judge,
        mode="focus",
        focus="Substrates/Friday releases.md",
    )
    assert run.pairs == () and judge.calls == [] and run.sentence_pairs_judged == 0


def test_classic_drops_model_pairs_the_judge_does_not_support(index: VaultIndex) -> None:
    wrong = pair(
        "Speed vs care",
        "Friday releases",
        "We ship every change the moment it is ready.",
        "Production releases go out every Friday afternoon.",
    )
    gen = ScriptedGenerator([answer(wrong, GOOD), described()])
    run = scan(index, gen, judge=release_judge(), mode="classic")
    assert run.dropped == {"judge_disagrees": 1}
    (shown,) = run.pairs
    # Found by both: the judge's quotes and probability, the model's own line.
    assert shown.found_by == "both" and shown.description == GOOD["description"]
    assert len(gen.calls) == 1  # no description request: the model already wrote one


def test_bad_focus_and_too_few_notes_are_clear_errors(index: VaultIndex, tmp_path: Path) -> None:
    with pytest.raises(ScanError, match="not in the index"):
        scan(
            index,
            judge=confirming_judge(),
            engine=ScriptedGenerator([]),
            mode="focus",
            focus="Nope.md",
        )
    with pytest.raises(ScanError, match="needs a focus note"):
        scan(index, judge=confirming_judge(), engine=ScriptedGenerator([]), mode="focus")
    with pytest.raises(ScanError, match="Unknown scan mode"):
        scan(index, judge=confirming_judge(), engine=ScriptedGenerator([]), mode="sideways")  # type: ignore[arg-type]
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    (lonely / "One.md").write_text("---\ntype: tension\n---\nAlone.\n")
    idx = VaultIndex(lonely, embedding=EmbeddingModel("bag-of-words", 64, BagOfWords()))
    idx.update()
    with pytest.raises(ScanError, match="at least two notes"):
        scan(idx, judge=confirming_judge(), engine=ScriptedGenerator([]), mode="classic")


def test_classic_cap_and_body_limit(index: VaultIndex) -> None:
    gen = ScriptedGenerator([answer()])
    run = scan(
        index,
        gen,
        judge=confirming_judge(),
        mode="classic",
        settings=ScanSettings(cap=2, body_chars=30),
    )
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
    run = scan(
        index,
        gen,
        judge=confirming_judge(),
        mode="classic",
        settings=ScanSettings(max_answer_tokens=200),
    )
    assert 2 <= run.notes_examined < 4
    assert any("did not fit the model's context (700 tokens)" in e.reason for e in run.excluded)
    assert run.candidates == run.notes_examined + len(run.excluded)


def test_whole_vault_pairs_are_the_strongest_candidates_within_the_budget(
    index: VaultIndex,
) -> None:
    """The pairs the scan judges, which the judge's calibration and comparison also use:
    the ``max_pairs`` strongest candidates, each once, in a stable order."""
    settings = ScanSettings(band_low=0.0, band_high=1.0, pairs_per_note=6, max_pairs=3)
    eligible, _ = scannable(index, settings)
    scored, _ = candidate_pairs(index, eligible, settings)
    assert len(scored) > 3
    pairs, excluded = whole_vault_pairs(index, eligible, settings)
    strongest = sorted(scored, key=lambda k: (-scored[k], sorted(k)))[:3]
    assert pairs == sorted((min(k), max(k)) for k in strongest)
    assert any("budget of 3 candidate pairs" in e.reason for e in excluded)
    run = scan(
        index,
        ScriptedGenerator([described()] * 3),
        judge=release_judge(),
        mode="whole-vault",
        settings=settings,
    )
    assert run.note_pairs_judged == len(pairs)


def test_whole_vault_judges_candidate_pairs(index: VaultIndex) -> None:
    settings = ScanSettings(band_low=0.0, band_high=1.0, pairs_per_note=6)
    progress: list[tuple[int, int, str]] = []
    gen = ScriptedGenerator([described()])
    run = scan(
        index,
        gen,
        judge=release_judge(),
        mode="whole-vault",
        settings=settings,
        progress=lambda d, t, w: progress.append((d, t, w)),
    )
    assert run.status == "ok" and len(gen.calls) == 1
    assert [(p.note_a, p.note_b) for p in run.pairs] == [("Friday releases", "Quiet weekends")]
    reasons = {e.path: e.reason for e in run.excluded}
    assert reasons["Principles/Retired.md"] == "type 'defeated' is not scanned"
    assert run.candidates == 6  # every note but the defeated one
    assert run.pairs_considered == run.note_pairs_judged > 0
    assert run.notes_examined <= run.candidates
    assert any(w.startswith("judging") for _, _, w in progress)
    assert progress[-1][0] == progress[-1][1] and progress[-1][2] == "done"


def test_whole_vault_reports_notes_without_a_neighbour_in_the_band(index: VaultIndex) -> None:
    settings = ScanSettings(band_low=0.999, band_high=1.0)
    run = scan(
        index,
        judge=confirming_judge(),
        engine=ScriptedGenerator([]),
        mode="whole-vault",
        settings=settings,
    )
    assert run.status == "ok" and run.batches == 0 and run.pairs_considered == 0
    assert any(e.reason.startswith("no neighbour in the similarity band") for e in run.excluded)


def test_whole_vault_stops_between_judge_calls(index: VaultIndex) -> None:
    stop = StopFlag()
    judge = release_judge()
    original = judge.score

    def score_then_stop(pairs: Any) -> Any:
        stop.set()  # the user presses Stop while the first batch is judged
        return original(pairs)

    judge.score = score_then_stop  # type: ignore[method-assign]
    settings = ScanSettings(band_low=0.0, band_high=1.0)
    run = scan(
        index,
        ScriptedGenerator([]),
        judge=judge,
        mode="whole-vault",
        settings=replace(settings, sentence_pairs=1),
        stop=stop,
    )
    assert run.status == "stopped"


def test_whole_vault_needs_vectors(vault: Path) -> None:
    idx = VaultIndex(vault)
    idx.update()
    with pytest.raises(ScanError, match="needs the embedding index"):
        scan(idx, judge=confirming_judge(), engine=ScriptedGenerator([]), mode="whole-vault")


def test_the_disclaimer_says_these_are_not_truths() -> None:
    assert "not truths" in DISCLAIMER


def test_hand_written_dismissals_match_like_links(vault: Path) -> None:
    note = vault / "Substrates/Quiet weekends.md"
    note.write_text(
        note.read_text().replace("[Morning runs]", '["[[friday releases|Fri]]"]'),
        encoding="utf-8",
    )
    idx = VaultIndex(vault, embedding=EmbeddingModel("bag-of-words", 64, BagOfWords()))
    idx.update()
    run = scan(
        idx, judge=confirming_judge(), engine=ScriptedGenerator([answer(GOOD)]), mode="classic"
    )
    assert run.pairs == () and run.dropped == {"dismissed": 1}


def test_focus_and_whole_vault_ask_the_model_only_to_describe(index: VaultIndex) -> None:
    gen = ScriptedGenerator([described()] * 4)
    scan(index, gen, judge=release_judge(), mode="focus", focus="Substrates/Friday releases.md")
    settings = ScanSettings(band_low=0.0, band_high=1.0)
    scan(index, gen, judge=release_judge(), mode="whole-vault", settings=settings)
    assert len(gen.calls) == 2
    for call in gen.calls:
        assert call.schema is not None and list(call.schema["properties"]) == ["description"]


def test_code_only_and_very_long_notes_are_reported_not_crashed(vault: Path) -> None:
    (vault / "Substrates/Code only.md").write_text(
        "---\ntype: substrate\n---\n```python\nrelease(friday=True)\n```\n"
    )
    long = " ".join(f"Sentence {i} is about releases and weekends today." for i in range(90))
    (vault / "Substrates/Very long.md").write_text(f"---\ntype: substrate\n---\n{long}\n")
    idx = VaultIndex(vault, embedding=EmbeddingModel("bag-of-words", 64, BagOfWords()))
    idx.update()
    run = scan(
        idx, ScriptedGenerator([answer(), described()]), judge=release_judge(), mode="classic"
    )
    assert run.status == "ok"
    reasons = {e.path: e.reason for e in run.excluded}
    assert reasons["Substrates/Code only.md"] == "no prose to compare: the note has no sentences"
    assert run.notes_cut == ("Substrates/Very long.md",)


def test_a_description_that_is_not_about_the_quotes_is_replaced(index: VaultIndex) -> None:
    junk_lines = (
        "... (no action)",
        "The original note was about [topic]; the other one not.",
        # One quote said again (most of what the 135M model wrote on the sample vault).
        "Production releases go out every Friday afternoon.",
        # Invented: most of its words are in neither quote nor title.
        "Friday releases are a cloud-based payment processing platform for small businesses.",
        # One quote spliced to the other note's title: nothing of the other side.
        "Production releases go out every Friday afternoon, more than quiet weekends.",
        # A number neither quote has: the time moved.
        "Releases go out on Friday at 15:00, nothing ships after Thursday noon.",
        # Both quotes copied one after the other: the card shows them already.
        "Production releases go out every Friday afternoon. Nothing ships to production "
        "after Thursday noon.",
    )
    for junk in junk_lines:
        run = scan(
            index,
            ScriptedGenerator([described(junk), described(junk)]),
            judge=release_judge(),
            mode="focus",
            focus="Substrates/Friday releases.md",
        )
        (shown,) = run.pairs
        assert shown.described_by == "plain" and run.description_failures == 1
    run = scan(
        index,
        ScriptedGenerator([described("Releases on Friday afternoon, nothing after Thursday.")]),
        judge=release_judge(),
        mode="focus",
        focus="Substrates/Friday releases.md",
    )
    assert run.pairs[0].described_by == "model"


RECORDING = {
    "Tensions/Ship now or wait.md": (
        "---\ntype: tension\nstatus: open\n---\n# Ship now or wait\n\n"
        "Every change ships the moment its tests pass.\n"
        "The other side is in [[Cooling-off day]].\n"
    ),
    "Substrates/Cooling-off day.md": (
        "---\ntype: substrate\n---\n# Cooling-off day\n\n"
        "Every change waits one full day before it ships.\n"
    ),
    "Substrates/Release train.md": (
        "---\ntype: substrate\n---\n# Release train\n\n"
        "Every change ships together once a month on the release train.\n"
    ),
}
SHIP_NOW = "Every change ships the moment its tests pass."
WAIT_A_DAY = "Every change waits one full day before it ships."
TRAIN = "Every change ships together once a month on the release train."


def _bag_of_words_vault(tmp_path: Path, files: dict[str, str]) -> VaultIndex:
    root = tmp_path / "vault"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    idx = VaultIndex(root, embedding=EmbeddingModel("bag-of-words", 64, BagOfWords()))
    idx.update()
    return idx


@pytest.mark.parametrize("mode", ["whole-vault", "classic"])
def test_a_tension_note_is_not_shown_against_the_notes_it_records(
    tmp_path: Path, mode: str
) -> None:
    """A tension note states both positions of the tension it records: its clash with a note
    it links to is that tension, not a new one. Against a note it does not link to, it is
    judged like any other note."""
    idx = _bag_of_words_vault(tmp_path, RECORDING)
    judge = ScriptedJudge(contradictions=[(SHIP_NOW, WAIT_A_DAY), (SHIP_NOW, TRAIN)])
    proposed = pair("Ship now or wait", "Cooling-off day", SHIP_NOW, WAIT_A_DAY)
    run = scan(
        idx,
        ScriptedGenerator([answer(proposed)] + [described()] * 3),
        judge=judge,
        mode=mode,  # type: ignore[arg-type]
        settings=ScanSettings(band_low=0.0, band_high=1.0, pairs_per_note=6),
    )
    assert run.status == "ok"
    assert [(p.note_a, p.note_b) for p in run.pairs] == [("Release train", "Ship now or wait")]
    assert run.dropped.get("recorded", 0) >= 1
    judged = {frozenset(c) for c in judge.calls}
    assert frozenset((SHIP_NOW, WAIT_A_DAY)) not in judged  # skipped before judging


SUPERSEDING = {
    "Decisions/ADR-1 Nightly batch.md": (
        "---\nkind: decision\nstatus: accepted\n---\n# ADR-1 Nightly batch\n\n"
        "Reports are computed once a night by a batch job.\n"
    ),
    "Decisions/ADR-2 Streaming reports.md": (
        '---\nkind: decision\nstatus: accepted\nsupersedes: "[[ADR-1 Nightly batch]]"\n---\n'
        "# ADR-2 Streaming reports\n\nReports are updated within a minute of every change.\n"
    ),
    "Substrates/Reports can wait.md": (
        "---\ntype: substrate\n---\n# Reports can wait\n\n"
        "Reports are good enough when they are updated once a day.\n"
    ),
}
NIGHTLY = "Reports are computed once a night by a batch job."
STREAMING = "Reports are updated within a minute of every change."
CAN_WAIT = "Reports are good enough when they are updated once a day."


@pytest.mark.parametrize("mode", ["whole-vault", "focus"])
def test_a_decision_is_not_shown_against_the_one_it_supersedes(tmp_path: Path, mode: str) -> None:
    """A decision that names the one it supersedes goes the other way on purpose: the vault
    records that clash. The newer decision is still judged against everything else."""
    idx = _bag_of_words_vault(tmp_path, SUPERSEDING)
    judge = ScriptedJudge(contradictions=[(NIGHTLY, STREAMING), (STREAMING, CAN_WAIT)])
    run = scan(
        idx,
        ScriptedGenerator([described()] * 3),
        judge=judge,
        mode=mode,  # type: ignore[arg-type]
        focus="Decisions/ADR-2 Streaming reports.md" if mode == "focus" else None,
        settings=ScanSettings(band_low=0.0, band_high=1.0, pairs_per_note=6),
    )
    assert run.status == "ok"
    assert [(p.note_a, p.note_b) for p in run.pairs] == [
        ("ADR-2 Streaming reports", "Reports can wait")
    ]
    assert run.dropped.get("recorded", 0) == 1
    assert frozenset((NIGHTLY, STREAMING)) not in {frozenset(c) for c in judge.calls}


def _closest_pair_recorded(tmp_path: Path) -> VaultIndex:
    """The supersession vault, with ADR-2 worded so that ADR-1 is its nearest note."""
    files = dict(SUPERSEDING)
    files["Decisions/ADR-2 Streaming reports.md"] += (
        "Before it, a nightly batch job computed reports once a night, batch by batch.\n"
    )
    idx = _bag_of_words_vault(tmp_path, files)
    scored, _ = candidate_pairs(idx, sorted(files), ScanSettings(band_low=0.0, band_high=1.0))
    closest = max(scored, key=scored.__getitem__)
    assert closest == {"Decisions/ADR-1 Nightly batch.md", "Decisions/ADR-2 Streaming reports.md"}
    return idx


def test_recorded_pairs_take_no_place_in_the_whole_vault_budget(tmp_path: Path) -> None:
    """With a budget of one pair, the recorded ADR-1/ADR-2 pair (the closest) is skipped and
    the next pair is judged in its place, instead of the run judging nothing."""
    idx = _closest_pair_recorded(tmp_path)
    settings = ScanSettings(band_low=0.0, band_high=1.0, pairs_per_note=6, max_pairs=1)
    judge = ScriptedJudge(contradictions=[(STREAMING, CAN_WAIT), (NIGHTLY, CAN_WAIT)])
    generator = ScriptedGenerator([described()] * 3)
    run = scan(idx, generator, judge=judge, mode="whole-vault", settings=settings)
    assert run.status == "ok"
    assert run.note_pairs_judged == 1 and len(run.pairs) == 1
    assert run.dropped.get("recorded", 0) == 1
    assert frozenset((NIGHTLY, STREAMING)) not in {frozenset(c) for c in judge.calls}


def test_a_recorded_neighbour_takes_no_place_among_the_focus_neighbours(tmp_path: Path) -> None:
    """Focus on ADR-2 with one neighbour: its nearest note, the ADR-1 it supersedes, is
    skipped and the next nearest is judged, instead of the scan judging nothing."""
    idx = _closest_pair_recorded(tmp_path)
    judge = ScriptedJudge(contradictions=[(STREAMING, CAN_WAIT)])
    run = scan(
        idx,
        ScriptedGenerator([described()] * 2),
        judge=judge,
        mode="focus",
        focus="Decisions/ADR-2 Streaming reports.md",
        settings=ScanSettings(neighbours=1),
    )
    assert run.status == "ok" and run.note_pairs_judged == 1
    assert [(p.note_a, p.note_b) for p in run.pairs] == [
        ("ADR-2 Streaming reports", "Reports can wait")
    ]
    assert run.dropped.get("recorded", 0) == 1


def test_either_side_of_a_supersession_records_it() -> None:
    def note(rel: str, fm: str) -> Note:
        return parse_note(rel, f"---\n{fm}\n---\n# x\n\nText here.\n".encode())

    old = note("Decisions/ADR-3 Old.md", "superseded_by: '[[ADR-4 New|the new one]]'")
    new = note("Decisions/ADR-4 New.md", "status: accepted")
    other = note("Decisions/ADR-5 Other.md", "supersedes: [ADR-9 Gone, '[[ADR-8]]']")
    assert recorded_with(old) == {"adr-4 new"}
    assert records_pair(old, new) and records_pair(new, old)
    assert recorded_with(other) == {"adr-9 gone", "adr-8"}
    assert not records_pair(other, new)


def test_measuring_tools_skip_the_pairs_a_scan_skips(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    for rel, text in RECORDING.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    tension, wait, train = sorted(RECORDING)[2], sorted(RECORDING)[0], sorted(RECORDING)[1]
    kept, bodies = shown_candidates(root, [(wait, tension), (train, tension), (wait, train)])
    assert kept == [(train, tension), (wait, train)]
    assert bodies[train].strip() == "# Release train\n\n" + TRAIN


@pytest.mark.parametrize("kind", ["code", "templates", "three languages"])
def test_a_vault_with_nothing_to_compare_shows_nothing_and_says_why(
    tmp_path: Path, kind: str
) -> None:
    """Bad input: a judge that calls every pair a clash still finds nothing to show in a
    vault of commands, of pages from one template, or of unrelated notes in three languages
    — and every note left out says why."""
    root = tmp_path / "vault"
    root.mkdir()
    tools = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
    for i, tool in enumerate(tools):
        if kind == "code":
            body = f"`{tool} --sync`\n\n```sh\n{tool} init <name>\n```\n\n{tool} build --release\n"
        elif kind == "templates":
            body = (
                f"The {tool} importer converts your {tool} export into Markdown files.\n\n"
                f"Open {tool} and choose Export, then pick the folder to import.\n"
            )
        else:
            body = [
                "The boiler was serviced in March and runs quietly now.",
                "La chaudière a été révisée en mars et tourne sans bruit.",
                "La caldaia è stata revisionata a marzo e ora è silenziosa.",
            ][i % 3] + f" Note {tool}."
        (root / f"{tool.title()} import.md").write_text(body, encoding="utf-8")
    idx = VaultIndex(root, embedding=EmbeddingModel("bag-of-words", 64, BagOfWords()))
    idx.update()
    judge = ScriptedJudge(lambda a, b: (0.99, 0.005, 0.005))
    judge.thresholds = Thresholds(min_cosine=0.0)
    settings = ScanSettings(band_low=0.0, band_high=1.0, describe=0)
    run = scan(idx, ScriptedGenerator([]), judge=judge, mode="whole-vault", settings=settings)
    assert run.status == "ok"
    if kind == "three languages":
        # One line in three languages: no two sentences of different languages are
        # compared (neither model reads across them), two in one language are the same.
        assert run.pairs == ()
        assert run.set_aside == {"written in different languages": 11, "same sentence": 3}
        return
    assert run.pairs == ()
    reasons = {e.path: e.reason for e in run.excluded}
    assert len(reasons) == len(tools)
    assert all(r.startswith("no prose to compare: only ") for r in reasons.values()), reasons
    expected = "code or commands" if kind == "code" else "boilerplate repeated across the vault"
    assert all(expected in r for r in reasons.values()), reasons
    # The run counts what it did not read as claims, and keeps it across a restart.
    assert run.not_evidence.get("code" if kind == "code" else "boilerplate", 0) >= len(tools)
    assert ScanRun.from_json(run.to_json()).not_evidence == run.not_evidence
