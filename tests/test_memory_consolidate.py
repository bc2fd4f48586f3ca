"""Consolidation with a routing fake of the model: extraction, routing, gate, pages, failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.flows.memory import (
    capture_turn,
    consolidate,
    last_report,
    pending_batches,
    rejected_fragments,
    requeue_fragment,
    subject_pages,
)
from desktop.flows.memory.consolidate import MemorySettings
from desktop.flows.memory.errors import UnknownFragment
from inference.base import StopFlag
from tests.fakes import ScriptedJudge, WordEmbedder
from tests.memory_helpers import (
    RoutingGenerator,
    page_fact_lines,
    route,
    small_batch,
    turns,
)


def test_candidates_are_the_users_statements_cited_to_their_own_lines(tmp_path: Path) -> None:
    small_batch(tmp_path)
    gen = RoutingGenerator()
    report = consolidate(tmp_path, gen)
    assert report.status == "ok"
    # The assistant line was never a candidate; each user statement was routed once.
    assert gen.routed() == [
        "We decided to fly to Lisbon on 12 December with Ana.",
        "I prefer window seats on long flights.",
        "The Helios report is due next Friday.",
    ]
    cites = {f.text: f.citations for f in report.accepted}
    assert cites == {
        "We decided to fly to Lisbon on 12 December with Ana.": ("2026-11-30#L1",),
        "I prefer window seats on long flights.": ("2026-11-30#L3",),
        "The Helios report is due next Friday.": ("2026-11-30#L4",),
    }
    outcomes = {o.line_id: o.outcome for o in report.lines}
    assert outcomes == {
        "2026-11-30#L1": "candidate",
        "2026-11-30#L2": "assistant",
        "2026-11-30#L3": "candidate",
        "2026-11-30#L4": "candidate",
    }
    assert report.line_counts == {"candidate": 3, "assistant": 1}
    assert all(
        "written to Antinomy/Subjects/" in o.detail
        for o in report.lines
        if o.outcome == "candidate"
    )
    assert "The judge was not used" in report.message and not report.judge_used


def test_subjects_are_offered_as_an_enum_and_a_refused_name_falls_back(tmp_path: Path) -> None:
    small_batch(tmp_path)
    gen = RoutingGenerator(
        routes={
            "Lisbon": route("new", new_subject="We decided to fly"),  # a sentence
            "window": route("new", new_subject="we"),  # a pronoun
            # The sentence's own subject is read in code: the model is offered only that one.
            "Helios": route("new", new_subject="thetosmallworld"),
        }
    )
    report = consolidate(tmp_path, gen)
    schema = gen.calls[0][2]
    assert schema is not None
    assert schema["properties"]["subject"]["enum"][:2] == ["Lisbon", "Ana"]
    assert schema["properties"]["subject"]["enum"][-1] == "new"
    assert "pattern" in schema["properties"]["new_subject"]
    helios = gen.calls[2][2]
    assert helios is not None and helios["properties"]["subject"]["enum"] == ["Helios"]
    refused = {f.subject_refused: f.subject for f in report.accepted}
    assert refused == {"We decided to fly": "Lisbon", "we": "Flights", "": "Helios"}
    names = sorted(p.name for p in subject_pages(tmp_path))
    assert names == ["Flights", "Helios", "Lisbon"]


def test_a_new_subject_the_user_named_is_kept(tmp_path: Path) -> None:
    small_batch(tmp_path)
    gen = RoutingGenerator(routes={"Lisbon": route("new", new_subject="Lisbon trip")})
    report = consolidate(tmp_path, gen)
    assert "Lisbon trip" in {f.subject for f in report.accepted}
    assert not any(f.subject_refused for f in report.accepted)


def test_sections_come_from_the_fixed_set(tmp_path: Path) -> None:
    small_batch(tmp_path)
    gen = RoutingGenerator(routes={"window": route("Flights", section="preferences")})
    report = consolidate(tmp_path, gen)
    sections = {f.text[:12]: f.section for f in report.accepted}
    assert sections == {
        "We decided t": "Decisions",
        "I prefer win": "Preferences",
        "The Helios r": "Plans and dates",
    }
    for _, _, schema in gen.calls:
        assert schema is not None
        if "section" in schema["properties"]:
            allowed = set(schema["properties"]["section"]["enum"])
            assert allowed <= {"facts", "decisions", "plans and dates", "preferences", "people"}


def test_a_supported_rephrasing_is_written_an_unsupported_one_keeps_the_users_words(
    tmp_path: Path,
) -> None:
    small_batch(tmp_path)
    gen = RoutingGenerator(
        routes={
            "window": route("Flights", "Prefers window seats on long flights."),
            "Lisbon": route("Lisbon", "Flying to Lisbon on 14 December with Ana."),
            "Helios": route("Helios", "Helios"),  # supported, but says nothing
        }
    )
    report = consolidate(tmp_path, gen)
    by = {f.subject: f for f in report.accepted}
    assert by["Flights"].wording == "rephrased"
    assert by["Flights"].text == "Prefers window seats on long flights."
    assert by["Lisbon"].wording == "verbatim"
    assert by["Lisbon"].text == "We decided to fly to Lisbon on 12 December with Ana."
    assert by["Lisbon"].fallback_reason == "names or numbers not in the cited lines: 14"
    assert by["Helios"].wording == "verbatim"
    assert by["Helios"].fallback_reason == "the rephrasing drops Friday"
    log = (tmp_path / "Antinomy/Memory/Consolidation log.md").read_text()
    assert "kept verbatim “We decided to fly to Lisbon" in log


def test_the_judge_gates_a_rephrasing_and_its_contradiction_is_never_written(
    tmp_path: Path,
) -> None:
    small_batch(tmp_path)
    contra = "Prefers aisle seats on long flights, not window seats."
    gen = RoutingGenerator(
        routes={
            "window": route("Flights", contra),
            "Helios": route("Helios", "The Helios report is due on Friday next week."),
        }
    )
    judge = ScriptedJudge(
        contradictions=[("I prefer window seats on long flights.", contra)],
        entailments=[
            (
                "The Helios report is due next Friday.",
                "The Helios report is due on Friday next week.",
            )
        ],
    )
    report = consolidate(tmp_path, gen, judge=judge)
    by = {f.subject: f for f in report.accepted}
    assert contra not in "\n".join(page_fact_lines(tmp_path))
    assert by["Flights"].wording == "verbatim"
    assert "contradict" in by["Flights"].fallback_reason
    assert by["Helios"].wording == "rephrased" and by["Helios"].entailment == pytest.approx(0.96)
    assert report.judge_used and "judge was not used" not in report.message


def test_without_entailment_the_judge_keeps_the_users_words(tmp_path: Path) -> None:
    small_batch(tmp_path)
    gen = RoutingGenerator(
        routes={"window": route("Flights", "Prefers window seats on long flights.")}
    )
    report = consolidate(tmp_path, gen, judge=ScriptedJudge())  # everything neutral
    fact = next(f for f in report.accepted if f.subject == "Flights")
    assert fact.wording == "verbatim" and "not find it entailed" in fact.fallback_reason


def test_dates_are_found_in_code_from_the_cited_words(tmp_path: Path) -> None:
    small_batch(tmp_path)  # spoken on Monday 2026-11-30
    report = consolidate(tmp_path, RoutingGenerator())
    dates = {f.text[:10]: (f.kind, f.date) for f in report.accepted}
    assert dates == {
        "We decided": ("event", "2026-12-12"),
        "I prefer w": ("preference", None),
        # Said on a Monday, "next Friday" may be in 4 or in 11 days: no date is guessed.
        "The Helios": ("fact", None),
    }
    turns(tmp_path, ("user", "The dentist appointment moved to tomorrow at 9."))
    (dentist,) = consolidate(tmp_path, RoutingGenerator()).accepted
    assert (dentist.kind, dentist.date) == ("event", "2026-12-01")


def test_a_short_answer_is_completed_by_the_assistants_question(tmp_path: Path) -> None:
    turns(
        tmp_path,
        ("user", "Let's plan the offsite."),
        ("assistant", "Which city do you want for the offsite?"),
        ("user", "Porto."),
    )
    report = consolidate(tmp_path, RoutingGenerator())
    (fact,) = report.accepted
    assert fact.citations == ("2026-11-30#L2", "2026-11-30#L3")
    assert fact.text == "Porto (answering “Which city do you want for the offsite?”)"
    assert fact.subject == "Porto"


def test_summary_line_is_model_written_when_supported_else_the_first_facts(
    tmp_path: Path,
) -> None:
    small_batch(tmp_path)
    good = RoutingGenerator(
        routes={"Helios": route("Helios")}, summary="The Helios report is due next Friday."
    )
    consolidate(tmp_path, good)
    helios = next(p for p in subject_pages(tmp_path) if p.name == "Helios")
    assert helios.summary == "The Helios report is due next Friday."
    turns(tmp_path, ("user", "The Helios budget review is on 9 December."))
    junk = RoutingGenerator(summary="Helios is a great company with 500 staff.")
    report = consolidate(tmp_path, junk)
    helios = next(p for p in subject_pages(tmp_path) if p.name == "Helios")
    assert helios.summary == (
        "The Helios report is due next Friday. The Helios budget review is on 9 December."
    )
    assert set(report.summaries.values()) == {"first_facts"}


def test_aliases_are_only_names_the_user_gave(tmp_path: Path) -> None:
    turns(
        tmp_path,
        ("user", "The Atlas API (aka Atlas) moves to Fly.io next month."),
        ("user", "We are not migrating the Neon database."),
    )
    consolidate(tmp_path, RoutingGenerator())
    pages = {p.name: p.aliases for p in subject_pages(tmp_path)}
    assert pages["Atlas API"] == ("Atlas",)
    assert pages["Neon"] == ()


def test_same_fact_in_a_later_batch_is_not_written_twice(tmp_path: Path) -> None:
    small_batch(tmp_path)
    consolidate(tmp_path, RoutingGenerator(routes={"window": route("Flights")}))
    turns(tmp_path, ("user", "I prefer window seats on long flights!"))
    report = consolidate(tmp_path, RoutingGenerator(routes={"window": route("Flights")}))
    assert report.status == "empty" and report.duplicates == 1
    assert "already on Flights (same words)" in report.lines[0].detail
    assert len(page_fact_lines(tmp_path)) == 3


def test_same_meaning_is_judged_by_embedding_and_the_judge(tmp_path: Path) -> None:
    small_batch(tmp_path)
    consolidate(tmp_path, RoutingGenerator(routes={"window": route("Flights")}))
    again = "On long flights I prefer window seats."
    turns(tmp_path, ("user", again))
    judge = ScriptedJudge(entailments=[(again, "I prefer window seats on long flights.")])
    report = consolidate(
        tmp_path,
        RoutingGenerator(routes={"window": route("Flights")}),
        embedder=WordEmbedder(),
        judge=judge,
    )
    assert report.duplicates == 1 and "entailment 0.96" in report.lines[0].detail
    # Without the judge's confirmation a close cosine is not enough (0.70 < 0.86).
    turns(tmp_path, ("user", "On long flights I never want window seats."))
    report = consolidate(
        tmp_path,
        RoutingGenerator(routes={"window": route("Flights")}),
        embedder=WordEmbedder(),
        judge=ScriptedJudge(),
    )
    assert report.duplicates == 0 and len(report.accepted) == 1


def test_existing_page_gets_facts_in_its_section_and_keeps_the_users_text(tmp_path: Path) -> None:
    page = tmp_path / "Antinomy" / "Subjects" / "Travel.md"
    page.parent.mkdir(parents=True)
    page.write_text(
        "---\ntype: subject\naliases: [Trips]\nsummary: How I travel\n---\n# Travel\n\n"
        "My own notes stay.\n\n## Preferences\n\n- Aisle on short hops — [2026-11-01#L3](x)\n\n"
        "## Other\n\ntext\n"
    )
    turns(tmp_path, ("user", "On trips I prefer window seats on long flights."))
    gen = RoutingGenerator(routes={"window": route("Trips", section="preferences")})
    report = consolidate(tmp_path, gen)
    assert report.status == "ok" and report.pages == ("Antinomy/Subjects/Travel.md",)
    text = page.read_text()
    assert "aliases: [Trips]" in text and "My own notes stay." in text
    body = text.split("## Preferences")[1].split("## Other")[0]
    assert body.index("Aisle") < body.index("window seats")
    assert "summary: Aisle on short hops. On trips I prefer window seats" in text
    # The existing subject, named by its alias, was offered first.
    schema = gen.calls[0][2]
    assert schema is not None and schema["properties"]["subject"]["enum"][0] == "Travel"


def test_json_failure_leaves_the_input_pending_and_keeps_the_raw_answer(tmp_path: Path) -> None:
    small_batch(tmp_path)
    gen = RoutingGenerator(routes={"Lisbon": ["I think the user likes Lisbon.", "Sorry, no JSON."]})
    report = consolidate(tmp_path, gen)
    assert report.status == "json_failure"
    assert report.extract == "I think the user likes Lisbon."
    assert "Sorry, no JSON." in Path(report.debug_path).read_text()
    assert len(gen.calls) == 2  # the shared policy's one stricter retry
    assert [b.pending_lines for b in pending_batches(tmp_path)] == [4]
    assert not (tmp_path / "Antinomy").exists()
    assert consolidate(tmp_path, RoutingGenerator()).status == "ok"
    assert pending_batches(tmp_path) == []


def test_nothing_and_empty_statuses(tmp_path: Path) -> None:
    assert consolidate(tmp_path, RoutingGenerator()).status == "nothing"
    turns(tmp_path, ("user", "What time is it?"), ("user", "ok"))
    report = consolidate(tmp_path, RoutingGenerator())
    assert report.status == "empty" and report.line_counts == {"question": 1, "greeting": 1}
    assert last_report(tmp_path)["status"] == "empty"  # type: ignore[index]


def test_open_batch_waits_unless_forced(tmp_path: Path) -> None:
    capture_turn(tmp_path, role="user", text="I like green tea in the morning.", session_id="s")
    assert consolidate(tmp_path, RoutingGenerator()).status == "nothing"
    assert consolidate(tmp_path, RoutingGenerator(), force=True).status == "ok"


def test_no_subject_is_a_rejected_fragment_that_can_be_requeued(tmp_path: Path) -> None:
    turns(tmp_path, ("user", "we sold four for cash"))  # no name to file it under
    gen = RoutingGenerator(routes={"sold": route("new", new_subject="it")})
    report = consolidate(tmp_path, gen)
    assert report.status == "empty"
    (frag,) = report.rejected
    assert frag.reason == "no_subject" and frag.line_ids == ("2026-11-30#L1",)
    assert rejected_fragments(tmp_path)[0][1] == "rejected"
    requeue_fragment(tmp_path, frag.fragment_id)
    assert rejected_fragments(tmp_path)[0][1] == "requeued"
    again = RoutingGenerator(routes={"sold": route("new", new_subject="Cash sales")})
    report = consolidate(tmp_path, again)
    assert report.status == "ok" and report.accepted[0].subject == "Cash sales"
    assert rejected_fragments(tmp_path)[0][1] == "reconsidered"
    assert consolidate(tmp_path, RoutingGenerator()).status == "nothing"
    with pytest.raises(UnknownFragment, match="No rejected fragment 'r-0000' — list them"):
        requeue_fragment(tmp_path, "r-0000")


def test_stop_keeps_finished_steps_and_leaves_the_rest_pending(tmp_path: Path) -> None:
    turns(tmp_path, *[("user", f"I own {i} cats at the farm.") for i in range(6)])
    stop = StopFlag()
    report = consolidate(
        tmp_path,
        RoutingGenerator(),
        stop=stop,
        settings=MemorySettings(max_lines_per_step=3),
        progress=lambda done, total, what: stop.set() if done == 1 else None,
    )
    assert report.status == "stopped" and report.steps == 1
    assert [b.pending_lines for b in pending_batches(tmp_path)] == [3]
    saved = json.loads((tmp_path / ".antinomy/memory/last-report.json").read_text())
    assert saved["status"] == "stopped"
