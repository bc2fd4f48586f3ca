"""The ingest flow with scripted engines: plan, validation, repair, rejection, apply, undo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.flows.ingest import (
    IngestReport,
    apply_ingest,
    apply_pending,
    load_candidates,
    plan_ingest,
    save_pending,
    standing_candidates,
)
from desktop.flows.ingest.compose import PageDraft
from desktop.flows.ingest.source_note import SourceNote
from desktop.flows.ingest.validate import validate_pages
from desktop.vault.errors import VaultChanged
from desktop.vault.frontmatter import parse_frontmatter
from desktop.vault.index import VaultIndex
from desktop.vault.transactions import list_history, sha256_hex, undo_operation
from inference.base import StopFlag
from tests.fakes import ScriptedGenerator, ScriptedJudge
from tests.ingest_helpers import (
    INVENTED,
    INVENTED_REASON,
    JUNK_NAME,
    JUNK_NAME_ERROR,
    answer,
    junk_name_answer,
    make_vault,
    write_source,
)
from tests.vault_files import snapshot

SUBJECT = "Antinomy/Subjects/Rust toolchain.md"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return make_vault(tmp_path / "vault")


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return write_source(tmp_path / "downloads")


def plan(vault: Path, source: Path, *answers: str, judge: ScriptedJudge | None = None,
         **kw: object) -> tuple[IngestReport, ScriptedGenerator]:  # fmt: skip
    engine = ScriptedGenerator(list(answers))
    index = VaultIndex(vault)
    try:
        index.update()
        report = plan_ingest(
            vault,
            source,
            engine=engine,
            judge=judge,
            index=index,
            **kw,  # type: ignore[arg-type]
        )
    finally:
        index.close()
    return report, engine


def test_a_valid_plan_is_previewed_and_writes_nothing(vault: Path, source: Path) -> None:
    before = snapshot(vault)
    report, engine = plan(vault, source, answer())
    assert report.status == "planned", report.errors_first
    assert snapshot(vault) == before
    assert report.preview is not None and report.plan is not None
    paths = [f.path for f in report.preview.files]
    assert paths == ["Antinomy/Sources/Installing Rust.md", "Antinomy/Subjects/Installing Rust.md"]
    page = report.plan.writes[1].text or ""
    # every claim line is a sentence quoted from the source, citing the source note
    claims = [line for line in page.splitlines() if line.startswith("- ")]
    assert claims and all(line.endswith("— [[Installing Rust]]") for line in claims)
    assert "“You should always use the stable compiler" in page
    assert parse_frontmatter(page)["sources"] == ["[[Installing Rust]]"]
    note = parse_frontmatter(report.plan.writes[0].text or "")
    assert note["type"] == "source" and note["sha256"] == report.source.sha256
    assert note["origin"] == str(source.resolve())
    assert report.judge == "not available"
    assert "The judge was not available" in report.message
    assert len(engine.calls) == 1
    ctx = report.context
    assert ctx is not None and ctx.pages_sent and ctx.sentences_sent <= ctx.sentences_total


def test_apply_writes_source_and_pages_in_one_undoable_transaction(
    vault: Path, source: Path
) -> None:
    before = snapshot(vault)
    report, _ = plan(vault, source, answer(pages=[{"page": "Rust toolchain", "claims": [1, 2]}]))
    assert report.status == "planned", report.errors_first
    assert report.preview is not None
    result = apply_ingest(vault, report, approval=report.preview.approval)
    assert set(result.paths) == {
        "Antinomy/Sources/Installing Rust.md",
        "Antinomy/Subjects/Installing Rust.md",
        SUBJECT,
    }
    updated = (vault / SUBJECT).read_text()
    assert "[[Old notes]]" in updated and "## From Installing Rust" in updated
    assert parse_frontmatter(updated)["sources"] == ["[[Old notes]]", "[[Installing Rust]]"]
    assert [h.operation_type for h in list_history(vault)] == ["ingest"]
    undo_operation(vault, result.operation_id)
    assert snapshot(vault) == before


def test_the_same_file_again_offers_nothing_new(vault: Path, source: Path) -> None:
    report, _ = plan(vault, source, answer())
    assert report.preview is not None
    apply_ingest(vault, report, approval=report.preview.approval)
    again, engine = plan(vault, source)
    assert again.status == "already_ingested"
    assert again.message == (
        "install.md was already ingested as Antinomy/Sources/Installing Rust.md (same sha256); "
        "there is nothing new to plan. Edit the file to ingest a new version."
    )
    assert engine.calls == []
    # a changed file gets a new source note; the first one is never rewritten
    first = (vault / "Antinomy/Sources/Installing Rust.md").read_bytes()
    source.write_text(source.read_text() + "\nRust also ships rustfmt, a code formatter tool.\n")
    changed, _ = plan(vault, source, answer(title="Updating"))
    assert changed.status == "planned", changed.errors_first
    assert changed.source_note == "Antinomy/Sources/Installing Rust (2).md"
    assert changed.replaces_version == "Antinomy/Sources/Installing Rust.md"
    assert (vault / "Antinomy/Sources/Installing Rust.md").read_bytes() == first


def test_a_bad_answer_is_repaired_once_with_the_errors_and_previous_answer(
    vault: Path, source: Path
) -> None:
    bad = answer(pages=[{"page": JUNK_NAME, "claims": [1]},
                        {"page": "../../etc/passwd", "claims": [1, 99]}])  # fmt: skip
    report, engine = plan(vault, source, bad, answer())
    assert report.status == "planned"
    assert report.repaired
    assert report.errors_first == (
        JUNK_NAME_ERROR,
        "pages[2]: page name '../../etc/passwd' is a path, not a name",
    )
    repair = engine.calls[1].messages[-1].content
    assert "Your previous answer was refused. It said:\n" + bad in repair
    assert f"- {JUNK_NAME_ERROR}" in repair
    # same context: the original request is still there, unchanged, before the repair note
    assert repair.startswith(engine.calls[0].messages[-1].content.rstrip())
    first, second = (c.settings for c in engine.calls)
    assert first is not None and second is not None
    assert (first.temperature, second.temperature) == (0.0, 0.4)


def test_the_previous_answer_is_capped_at_20000_characters(vault: Path, source: Path) -> None:
    huge = junk_name_answer() + " " + "x" * 50_000
    report, engine = plan(vault, source, huge, answer())
    assert report.status == "planned"
    repair = engine.calls[1].messages[-1].content
    said = repair.split("It said:\n", 1)[1].split("\n\nIt was refused because:", 1)[0]
    assert len(said) <= 20_000


def test_a_plan_still_invalid_after_repair_is_saved_and_its_path_shown(
    vault: Path, source: Path
) -> None:
    before = snapshot(vault)
    bad = junk_name_answer()
    report, engine = plan(vault, source, bad, bad)
    assert report.status == "rejected"
    assert len(engine.calls) == 2
    saved = Path(report.rejected_path)
    assert saved.parent == vault / ".antinomy" / "rejected-plans"
    assert str(saved) in report.message
    record = json.loads(saved.read_text())
    assert record["errors_after_repair"] == [JUNK_NAME_ERROR]
    assert record["raw_answers"] == [bad, bad]
    assert snapshot(vault) == before
    assert report.plan is None


def test_unreadable_answers_are_rejected_after_the_shared_retry_and_one_repair(
    vault: Path, source: Path
) -> None:
    report, engine = plan(vault, source, "no json", "still none", "nope", "never")
    assert report.status == "rejected"
    assert len(engine.calls) == 4  # format retry, repair, its format retry
    assert report.errors_after_repair == (
        "the answer is not one JSON object with title, summary, pages and contradictions",
    )


@pytest.mark.parametrize(
    ("page", "error"),
    [
        (
            "Use stable Rust",
            "page 'Use stable Rust' is a decision note, which ingest does not update: route "
            "those claims to a subject page or a new page",
        ),
        (
            ".obsidian",
            "pages[1]: page name '.obsidian' is a path, not a name",
        ),
    ],
)
def test_routing_to_a_read_only_or_protected_place_is_refused_whole(
    vault: Path, source: Path, page: str, error: str | None
) -> None:
    bad = answer(pages=[{"page": page, "claims": [1]}])
    report, _ = plan(vault, source, bad, bad)
    assert report.status == "rejected"
    assert error in report.errors_after_repair


@pytest.mark.parametrize(
    ("path", "error"),
    [
        ("../outside.md", "Refused write path '../outside.md': it is not a normalised path "
         "inside the vault (no '.', '..', '//', trailing '/')."),
        ("/etc/passwd.md", "Refused write path '/etc/passwd.md': it is absolute; give a path "
         "relative to the vault folder."),
        (".obsidian/app.md", "Refused write path '.obsidian/app.md': it is inside .obsidian/, "
         "which Antinomy never writes."),
        ("Linked/escape.md", "Refused write path 'Linked/escape.md': it leads outside the vault "
         "through a symbolic link."),
    ],
)  # fmt: skip
def test_a_plan_writing_outside_the_vault_is_refused_whole(
    vault: Path, tmp_path: Path, path: str, error: str
) -> None:
    (tmp_path / "elsewhere").mkdir()
    (vault / "Linked").symlink_to(tmp_path / "elsewhere")
    note = SourceNote("Antinomy/Sources/S.md", "S", "---\ntype: source\n---\ntext\n")
    page = PageDraft(path, "create", "---\ntype: subject\nsources: ['[[S]]']\n---\n- a — [[S]]\n")
    errors = validate_pages(vault, [page], source=note)
    assert errors == [error]


def test_validation_refuses_uncited_claims_dropped_citations_and_shrinking(vault: Path) -> None:
    note = SourceNote("Antinomy/Sources/S.md", "S", "")
    before = (vault / SUBJECT).read_text()
    sha = sha256_hex(before.encode())
    uncited = PageDraft(
        "Antinomy/Subjects/New.md", "create",
        "---\ntype: subject\nsources: ['[[S]]']\n---\n# New\n\n- cited — [[S]]\n- not cited\n",
    )  # fmt: skip
    no_fm = PageDraft("Antinomy/Subjects/Bare.md", "create", "- cited — [[S]]\n")
    head = before.split("## Notes")[0].replace(
        '  - "[[Old notes]]"', '  - "[[Old notes]]"\n  - "[[S]]"'
    )
    shrunk = PageDraft(SUBJECT, "replace", head + "- new — [[S]]\n", before=before,
                       expected_sha256=sha)  # fmt: skip
    errors = validate_pages(vault, [uncited, no_fm, shrunk], source=note)
    assert errors == [
        "Antinomy/Subjects/New.md: claim line without a citation of [[S]]: '- not cited'",
        "Antinomy/Subjects/Bare.md: frontmatter has no type",
        f"{SUBJECT}: the update drops existing citations: [[Old notes]], [[Old notes]]",
        f"{SUBJECT}: the update shrinks the page from {len(before)} to "
        f"{len(shrunk.content)} characters (more than 30%)",
    ]


def test_a_note_changed_after_planning_refuses_the_whole_apply(vault: Path, source: Path) -> None:
    report, _ = plan(vault, source, answer(pages=[{"page": "Rust toolchain", "claims": [1]}]))
    assert report.preview is not None
    (vault / SUBJECT).write_text((vault / SUBJECT).read_text() + "\nEdited meanwhile.\n")
    before = snapshot(vault)
    with pytest.raises(VaultChanged):
        apply_ingest(vault, report, approval=report.preview.approval)
    assert snapshot(vault) == before
    assert list_history(vault) == ()


def test_claimed_contradictions_are_rechecked_by_the_judge(vault: Path, source: Path) -> None:
    existing = "We always pin the nightly compiler for every project build."
    new = (
        "You should always use the stable compiler for every project build, never the nightly one."
    )
    judge = ScriptedJudge(contradictions=[(existing, new)])
    claimed = [
        {"page": "Use stable Rust", "existing_claim": existing, "claim": 3, "severity": "high"},
        {
            "page": "Rust toolchain",
            "existing_claim": "The toolchain is installed with rustup on every machine.",
            "claim": 1,
            "severity": "low",
        },
        {"page": "Nowhere", "existing_claim": "x", "claim": 1, "severity": "low"},
    ]
    report, _ = plan(vault, source, answer(contradictions=claimed), judge=judge)
    assert report.status == "planned", report.errors_first
    assert [(c.page, c.existing_claim, c.new_claim, c.found_by) for c in report.contradictions] == [
        ("Decisions/Use stable Rust.md", existing, new, "model")
    ]
    reasons = sorted(d.reason for d in report.dropped_contradictions)
    assert reasons == ["judge_disagrees", "unknown_page"]
    assert (existing, new) in judge.calls
    assert report.preview is not None
    result = apply_ingest(vault, report, approval=report.preview.approval)
    stored = load_candidates(vault)
    assert [(c.new_claim, c.operation_id, c.source_note) for c in stored] == [
        (new, result.operation_id, "Installing Rust")
    ]
    assert standing_candidates(vault) == stored
    undo_operation(vault, result.operation_id)
    assert standing_candidates(vault) == []  # the undone ingest's claims are gone


def test_the_judge_also_compares_new_claims_with_the_nearest_existing_sentences(
    vault: Path, source: Path
) -> None:
    existing = "The toolchain is installed with rustup on every machine."
    judge = ScriptedJudge(verdict=lambda a, b: (0.9, 0.05, 0.05) if existing in (a, b)
                          else (0.02, 0.08, 0.9))  # fmt: skip
    report, _ = plan(vault, source, answer(), judge=judge)
    found = [c for c in report.contradictions if c.found_by == "judge"]
    assert found and all(c.existing_claim == existing for c in found)
    assert report.pairs_judged >= len(found)


def test_without_a_judge_no_contradiction_is_claimed(vault: Path, source: Path) -> None:
    existing = "We always pin the nightly compiler for every project build."
    claimed = [{"page": "Use stable Rust", "existing_claim": existing, "claim": 3,
                "severity": "high"}]  # fmt: skip
    report, _ = plan(vault, source, answer(contradictions=claimed))
    assert report.contradictions == ()
    assert [d.reason for d in report.dropped_contradictions] == ["judge_unavailable"]


def test_stop_before_the_model_answers_writes_nothing(vault: Path, source: Path) -> None:
    stop = StopFlag()
    engine = ScriptedGenerator([answer()], stop_on_call=1)
    report = plan_ingest(vault, source, engine=engine, judge=None, stop=stop)
    assert report.status == "stopped"
    assert not (vault / "Antinomy" / "Sources").exists()


def test_a_previewed_plan_is_applied_later_by_its_approval_hash(vault: Path, source: Path) -> None:
    report, _ = plan(vault, source, answer())
    assert report.preview is not None
    save_pending(vault, report)
    result = apply_pending(vault, report.source.sha256, approval=report.preview.approval)
    assert result.operation_id == report.preview.operation_id
    assert (vault / "Antinomy/Sources/Installing Rust.md").exists()


def test_progress_names_each_phase(vault: Path, source: Path) -> None:
    phases: list[str] = []
    plan(vault, source, junk_name_answer(), answer(),
         progress=lambda phase, detail: phases.append(phase))  # fmt: skip
    assert list(dict.fromkeys(phases)) == [
        "reading", "planning", "validating", "repairing", "checking", "previewing"
    ]  # fmt: skip


def test_a_new_page_named_unlike_its_claims_is_an_error(vault: Path, source: Path) -> None:
    junk = answer(pages=[{"page": "Troubleshooting", "claims": [1, 2]}])
    report, _ = plan(vault, source, junk, junk)
    assert report.errors_after_repair == (
        "pages[1]: new page 'Troubleshooting' shares no word with the sentences routed to "
        "it or the source: name it after them, or leave them to the title page",
    )


def test_a_summary_with_words_not_in_the_source_is_dropped_not_sent_back(
    vault: Path, source: Path
) -> None:
    report, engine = plan(vault, source, answer(summary=INVENTED))
    assert report.status == "planned" and report.errors_first == ()
    assert len(engine.calls) == 1  # no repair: the summary is dropped, not argued over
    assert [(d.page, d.claim, d.reason, d.detail) for d in report.dropped_claims] == [
        ("Antinomy/Subjects/Installing Rust.md", INVENTED, *INVENTED_REASON)
    ]
    assert report.plan is not None
    assert not any(INVENTED in (w.text or "") for w in report.plan.writes)
    # in its place, the skeleton's summary: the lead sentence, quoted and cited
    page = report.plan.writes[1].text or ""
    assert "“The first step is to install Rust with rustup" in page.split("## Key points")[0]


def test_the_schema_enumerates_claim_numbers_and_shown_pages() -> None:
    from desktop.flows.ingest.prompt import plan_schema

    schema = plan_schema(claims=3, max_pages=2, max_contradictions=2, pages=["Rust toolchain"])
    props = schema["properties"]
    assert props["pages"]["items"]["properties"]["claims"]["items"] == {"enum": [1, 2, 3]}
    contradiction = props["contradictions"]["items"]["properties"]
    assert contradiction["page"] == {"enum": ["Rust toolchain"]}
    assert (
        plan_schema(claims=3, max_pages=2, max_contradictions=2)["properties"]["contradictions"][
            "maxItems"
        ]
        == 0
    )


def test_only_related_subject_pages_are_shown_and_read_only_notes_go_to_the_judge(
    vault: Path, source: Path
) -> None:
    (vault / "Antinomy/Subjects/Gardening.md").write_text(
        "---\ntype: subject\nsources: []\n---\n# Gardening\n\nTomatoes need a stable support.\n"
    )
    report, engine = plan(vault, source, answer())
    assert report.context is not None
    assert report.context.pages_sent == (SUBJECT,)
    assert report.context.pages_judged == ("Decisions/Use stable Rust.md",)
    prompt = engine.calls[0].messages[-1].content
    assert "PAGE Rust toolchain [subject]" in prompt
    assert "Use stable Rust" not in prompt and "Gardening" not in prompt


def test_a_title_with_a_date_gives_the_model_a_name_to_choose_not_a_pattern(
    vault: Path, tmp_path: Path
) -> None:
    dated = (
        "# Installing Rust, 3 March\n\n"
        "The first step is to install Rust with rustup, a command line tool for managing "
        "versions.\nRustup downloads and installs the stable compiler for your platform.\n"
    )
    source = write_source(tmp_path / "downloads", "notes.md", dated)
    report, engine = plan(vault, source, answer(title="Installing Rust", summary=""))
    assert report.status == "planned", report.errors_first
    title = engine.calls[0].schema["properties"]["title"]  # type: ignore[index]
    assert "pattern" not in title and title["enum"][0] == "Installing Rust"
    assert "- Installing Rust\n" in engine.calls[0].messages[-1].content
    assert report.source_note == "Antinomy/Sources/Installing Rust, 3 March.md"


def test_a_sentence_the_summary_repeats_is_not_listed_again(vault: Path, source: Path) -> None:
    lead = "The first step is to install Rust with rustup"
    copied = (
        "Rustup downloads and installs the stable compiler and the standard library for your "
        "platform."
    )
    for summary, repeated in [("", lead), (copied, copied)]:
        report, _ = plan(vault, source, answer(summary=summary))
        assert report.status == "planned", report.errors_first
        page = (report.plan.writes[1].text or "") if report.plan else ""
        body = page.split("\n---\n", 1)[1]
        assert body.count(repeated) == 1, body
        assert repeated in body.split("## Key points")[0]
        assert "install Rust with rustup" in body and "nightly one" in body


def test_a_refused_page_name_is_repaired_with_the_simpler_question_no_new_page(
    vault: Path, source: Path
) -> None:
    report, engine = plan(vault, source, junk_name_answer(), answer())
    assert report.status == "planned" and report.repaired
    first, second = (c.schema or {} for c in engine.calls)
    shown = [p.rsplit("/", 1)[-1][:-3] for p in report.context.pages_sent] if report.context else []
    assert first["properties"]["pages"]["items"]["properties"]["page"]["enum"][0] == (
        "Installing Rust"
    )
    routed = second["properties"]["pages"]
    assert routed["items"]["properties"]["page"] == {"enum": shown}
    assert shown == ["Rust toolchain"] and routed["maxItems"] == 3
    assert second["properties"]["title"] == first["properties"]["title"]
    assert "This time name no new page" in engine.calls[1].messages[-1].content
    # any other problem is asked again as it was, new pages allowed
    out_of_range = answer(pages=[{"page": "Installing Rust", "claims": [99]}])
    report, engine = plan(vault, source, out_of_range, answer())
    assert report.errors_first == ("pages[1]: claim 99 is not a sentence number 1–6",)
    assert engine.calls[1].schema == engine.calls[0].schema
    assert "This time name no new page" not in engine.calls[1].messages[-1].content
