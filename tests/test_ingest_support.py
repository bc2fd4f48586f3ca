"""Every claim line of an ingest is checked against its source; unsupported ones are dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.flows.ingest import IngestReport, plan_ingest
from desktop.flows.ingest.sentences import key_sentences, plain, split_sentences
from desktop.flows.ingest.support import SourceSupport, coverage, polarity_change
from desktop.vault.index import VaultIndex
from tests.fakes import ScriptedGenerator, ScriptedJudge
from tests.ingest_helpers import SOURCE_MD, answer, make_vault, write_source

LEAD = "The first step is to install Rust with rustup, a command line tool for managing versions."
NEXT = (
    "Rustup downloads and installs the stable compiler and the standard library for your platform."
)
#: Says what the first two sentences say together, in other words.
JOINED = "Rustup installs Rust with the stable compiler and the standard library."


def support(judge: ScriptedJudge | None) -> SourceSupport:
    return SourceSupport(split_sentences(SOURCE_MD), text=SOURCE_MD, judge=judge)


def entails(premise: str, claim: str) -> ScriptedJudge:
    """A judge that finds ``claim`` entailed by ``premise`` only (in either order)."""
    return ScriptedJudge(
        verdict=lambda a, b: (0.01, 0.95, 0.04) if {a, b} == {premise, claim} else (0.1, 0.1, 0.8)
    )


def plan(vault: Path, source: Path, *answers: str, judge: ScriptedJudge | None) -> IngestReport:
    index = VaultIndex(vault)
    try:
        index.update()
        return plan_ingest(
            vault, source, engine=ScriptedGenerator(list(answers)), judge=judge, index=index
        )
    finally:
        index.close()


def test_a_quote_of_the_source_is_supported_without_asking_the_judge() -> None:
    judge = ScriptedJudge()
    verdict = support(judge).check(f"“{LEAD}”")
    assert (verdict.supported, verdict.how) == (True, "quote")
    # the judge misreads a text paired with itself; a quote is never put to it
    assert judge.calls == []


def test_words_of_the_model_are_judged_against_runs_of_consecutive_sentences() -> None:
    judge = entails(f"{LEAD} {NEXT}", JOINED)
    verdict = support(judge).check(JOINED)
    assert (verdict.supported, verdict.how, verdict.entailment) == (True, "judge", 0.95)
    assert (f"{LEAD} {NEXT}", JOINED) in judge.calls


@pytest.mark.parametrize(
    ("claim", "reason", "detail"),
    [
        ("It is what it is.", "says_nothing", "it has no content words"),
        (
            "Bananas grow on tall tropical plants in Rust.",
            "foreign_words",
            "words not in the source: bananas, grow, tall, tropical, plants",
        ),
        (
            "Rust is installed with rustup and Homebrew.",
            "names_not_in_source",
            "names or numbers not in the source: Homebrew",
        ),
        (
            "The stable compiler works offline.",  # two sections say half each
            "not_in_one_place",
            "no sentence of the source, nor a run of up to three, holds 80% of its words",
        ),
        (
            "Rustup only installs the stable compiler and the standard library.",
            "changes_polarity",
            "where the source says it, it does not say 'only'",
        ),
        (
            JOINED,
            "not_entailed",
            "the judge gives P(entailment) 0.10 given “The first step is to install Rust with "
            "rustup, a command line tool for managing versions. …”; it needs 0.50",
        ),
    ],
)
def test_a_claim_the_source_does_not_support_is_refused_with_its_reason(
    claim: str, reason: str, detail: str
) -> None:
    verdict = support(entails("nothing", "at all")).check(claim)
    assert (verdict.supported, verdict.reason, verdict.detail) == (False, reason, detail)


def test_the_threshold_is_the_judges_calibrated_entailment() -> None:
    judge = ScriptedJudge(verdict=lambda a, b: (0.1, 0.6, 0.3))
    assert support(judge).check(JOINED).supported  # 0.6 ≥ the default 0.5
    judge.thresholds = type(judge.thresholds)(entailment=0.7)
    verdict = support(judge).check(JOINED)
    assert (verdict.supported, verdict.reason) == (False, "not_entailed")


def test_without_a_judge_only_the_sources_own_sentences_are_written() -> None:
    gate = support(None)
    assert gate.check(LEAD).supported
    verdict = gate.check(JOINED)
    assert (verdict.supported, verdict.reason) == (False, "no_judge")


def test_coverage_and_polarity_compare_words_as_the_source_writes_them() -> None:
    assert coverage("uv locks and syncs the project", "the project is locked and synced") == 1.0
    assert coverage("", "anything") == 0.0
    assert polarity_change("updates apply to every version", "updates apply to the version") == (
        "every"
    )
    assert polarity_change("run it before the build", "run it after the build") == "before"
    assert polarity_change("run it before the build", "run it before the build") == ""


def test_an_unsupported_summary_is_dropped_and_the_rest_written(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    source = write_source(tmp_path / "downloads")
    report = plan(vault, source, answer(summary=JOINED), judge=entails("nothing", "at all"))
    assert report.status == "planned" and report.errors_first == ()
    assert [(d.page, d.claim, d.reason) for d in report.dropped_claims] == [
        ("Antinomy/Subjects/Installing Rust.md", JOINED, "not_entailed")
    ]
    assert "1 claim(s) the source does not support were dropped" in report.message
    assert report.plan is not None
    assert not any(JOINED in (w.text or "") for w in report.plan.writes)
    # a summary the judge finds entailed is written
    kept = plan(
        make_vault(tmp_path / "vault2"),
        source,
        answer(summary=JOINED),
        judge=entails(f"{LEAD} {NEXT}", JOINED),
    )
    assert kept.dropped_claims == () and kept.plan is not None
    assert f"{JOINED} — [[Installing Rust]]" in (kept.plan.writes[1].text or "")


def test_a_page_whose_claims_are_all_dropped_is_not_written(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    text = (
        "# Setup guide\n\nTo install the tool on your machine, run the following command:\n\n"
        "```\n$ make install\n```\n\nThen check which version was installed with this command:\n"
    )
    source = write_source(tmp_path / "downloads", "setup.md", text)
    report = plan(vault, source, answer(title="Setup guide", summary=""), judge=ScriptedJudge())
    assert report.status == "planned", report.errors_first
    assert report.plan is not None
    assert [w.path for w in report.plan.writes] == ["Antinomy/Sources/Setup guide.md"]
    assert {(d.claim, d.reason) for d in report.dropped_claims} == {
        ("Setup guide", "not_in_one_place"),
        ("“Setup guide”", "not_in_one_place"),
    }
    assert report.context is not None and report.context.sentences_not_claims == 2


def test_sentences_that_claim_nothing_are_never_key_sentences() -> None:
    text = (
        "# Locking\n\n"
        "Locking resolves the dependencies of a project into a lockfile.\n\n"
        "To check the lockfile, pass the check flag to the lock command:\n\n"
        "Is the lockfile always up to date after every change?\n\n"
        "Default group: dev, lint\n\n"
        "- uv lock --upgrade-package <package>\n"
    )
    sentences = split_sentences(text)
    reasons = {s.text: s.not_a_claim() for s in sentences}
    assert reasons == {
        "Locking resolves the dependencies of a project into a lockfile.": None,
        "To check the lockfile, pass the check flag to the lock command:": "lead_in",
        "Is the lockfile always up to date after every change?": "question",
    }
    assert [s.text for s in key_sentences(sentences, 5)] == [
        "Locking resolves the dependencies of a project into a lockfile."
    ]


def test_quoted_sentences_read_as_the_page_shows_them() -> None:
    assert plain("A <dfn title='x'>path</dfn> operation<!-- ignore --> and **more**.") == (
        "A path operation and more."
    )
    assert plain("See [the docs][docs] and _this_ file_name.") == (
        "See the docs and this file_name."
    )
    text = (
        "The [blog plugin] builds a blog next to your documentation pages.\n\n"
        "[blog plugin]: https://example.org/blog\n"
    )
    assert [s.text for s in split_sentences(text)] == [
        "The blog plugin builds a blog next to your documentation pages."
    ]
