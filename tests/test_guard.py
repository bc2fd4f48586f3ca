"""The guard's logic (desktop.flows.guard), without HTTP: decisions, verdicts, markers, settings."""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from desktop.flows.guard import (
    DEFAULT_THRESHOLD,
    SENTENCE_FLOOR,
    Activation,
    DecisionSet,
    Guard,
    GuardError,
    GuardSettings,
    GuardSwitch,
    StandingDecision,
    bound_summary,
    load_guard_settings,
    save_guard_settings,
    set_project,
    standing_decisions,
)
from desktop.resources import sample_vault_source
from desktop.vault.index import VaultIndex
from tests.fakes import ScriptedJudge, WordEmbedder

_WORD = re.compile(r"[a-z0-9]+")


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(sample_vault_source(), root)
    return root


@pytest.fixture
def index(vault: Path) -> Iterator[VaultIndex]:
    idx = VaultIndex(vault)
    idx.update()
    yield idx
    idx.close()


def make_guard(vault: Path, index: VaultIndex, embed: WordEmbedder | None = None) -> Guard:
    guard = Guard(vault, index=index, embed=embed or WordEmbedder(), model_id="words")
    guard.refresh()
    return guard


ON = Activation(active=True, mode="warn", threshold=0.5)
LEDGER = "billing service keeps its ledger in a SQLite file on its own worker host"


def test_standing_decisions_exclude_superseded_and_principles_are_optional(
    index: VaultIndex,
) -> None:
    ids = sorted(d.id for d in standing_decisions(index, include_principles=False))
    assert ids == [
        "ADR-0004",
        "ADR-0007",
        "ADR-0008",
        "ADR-0010",
        "ADR-0011",
        "ADR-0012",
        "ADR-0013",
    ]
    with_principles = standing_decisions(index, include_principles=True)
    kinds = {d.kind for d in with_principles}
    assert kinds == {"decision", "principle"} and len(with_principles) == 11


def test_superseded_by_alone_removes_a_decision(vault: Path, index: VaultIndex) -> None:
    (vault / "Decisions" / "ADR-0099 Tabs.md").write_text(
        "---\nkind: decision\nid: ADR-0099\ntitle: Tabs\nstatus: accepted\n"
        'superseded_by: "[[ADR-0100 Spaces]]"\n---\n## Decision\n\nIndent with tabs.\n'
    )
    (vault / "Decisions" / "ADR-0100 Spaces.md").write_text(
        "---\ntype: decision\ntitle: Spaces\n---\n# Spaces\n\n## Decision\n\nIndent with spaces.\n"
    )
    index.update()
    by_id = {d.id: d for d in standing_decisions(index, include_principles=False)}
    assert "ADR-0099" not in by_id
    # No id in the frontmatter: the basename names it.
    assert by_id["ADR-0100 Spaces"].text == "Spaces. Indent with spaces."


def test_decision_text_is_the_title_and_the_decision_section(index: VaultIndex) -> None:
    texts = {d.id: d.text for d in standing_decisions(index, include_principles=True)}
    assert texts["ADR-0011"] == (
        "Friday release window. Production releases go out every Friday between 14:00 and 16:00."
    )
    principle = texts["No production changes before the weekend"]
    assert principle.startswith("No production changes before the weekend. If it is after Thursday")
    assert "then no release, migration or configuration change goes to production." in principle


def test_a_matching_change_warns_once_per_session(vault: Path, index: VaultIndex) -> None:
    guard = make_guard(vault, index)
    vec = guard._embed([LEDGER])[0]
    first = guard.decide(vector=vec, session_id="s1", activation=ON)
    assert first.verdict == "warn" and first.decision is not None
    assert first.decision.id == "ADR-0012" and first.score is not None and first.score > 0.9
    context = first.output["hookSpecificOutput"]["additionalContext"]  # type: ignore[index]
    assert "ADR-0012: Billing ledger in SQLite" in context
    assert "Decisions/ADR-0012 Billing ledger in SQLite.md" in context
    again = guard.decide(vector=vec, session_id="s1", activation=ON)
    assert again.verdict == "repeat" and again.output is None
    other_session = guard.decide(vector=vec, session_id="s2", activation=ON)
    assert other_session.verdict == "warn"
    assert len(list((vault / ".antinomy" / "guard" / "sessions").glob("*.json"))) == 2


def test_ask_mode_asks_with_the_reason(vault: Path, index: VaultIndex) -> None:
    guard = make_guard(vault, index)
    vec = guard._embed([LEDGER])[0]
    verdict = guard.decide(
        vector=vec, session_id="s", activation=Activation(True, "ask", threshold=0.5)
    )
    out = verdict.output["hookSpecificOutput"]  # type: ignore[index]
    assert out["hookEventName"] == "PreToolUse" and out["permissionDecision"] == "ask"
    assert "ADR-0012" in out["permissionDecisionReason"]


def test_below_threshold_allows_and_names_the_nearest(vault: Path, index: VaultIndex) -> None:
    guard = make_guard(vault, index)
    vec = guard._embed(["npm install --save-dev prettier"])[0]
    verdict = guard.decide(vector=vec, session_id="s", activation=ON)
    assert verdict.verdict == "allow" and verdict.output is None
    assert verdict.decision is not None and verdict.score is not None and verdict.score < 0.5


def test_the_next_decision_warns_when_the_first_already_did(vault: Path, index: VaultIndex) -> None:
    guard = make_guard(vault, index)
    vec = guard._embed([LEDGER])[0]
    low = Activation(True, "warn", threshold=-1.0)  # every decision is "a hit"
    seen = [guard.decide(vector=vec, session_id="s", activation=low).decision for _ in range(7)]
    assert len({d.id for d in seen if d}) == 7
    assert guard.decide(vector=vec, session_id="s", activation=low).verdict == "repeat"


def test_markers_older_than_seven_days_are_pruned(vault: Path, index: VaultIndex) -> None:
    guard = make_guard(vault, index)
    vec = guard._embed([LEDGER])[0]
    guard.decide(vector=vec, session_id="old", activation=ON)
    guard.decide(vector=vec, session_id="new", activation=ON)
    folder = vault / ".antinomy" / "guard" / "sessions"
    old = guard.markers._file("old")
    eight_days = time.time() - 8 * 24 * 3600
    os.utime(old, (eight_days, eight_days))
    assert guard.markers.prune() == 1
    assert not old.exists() and len(list(folder.glob("*.json"))) == 1
    assert guard.decide(vector=vec, session_id="old", activation=ON).verdict == "warn"


def test_decision_vectors_are_cached_on_disk(vault: Path, index: VaultIndex) -> None:
    first = WordEmbedder()
    make_guard(vault, index, first)
    statements = [d.text for d in make_guard(vault, index, WordEmbedder()).decisions.decisions]
    # Each statement, and each of its sentences (what the judge compares), once.
    sentences = [t for t in first.texts if t not in statements]
    assert sorted(set(first.texts) & set(statements)) == sorted(statements)
    assert len(statements) == 7 and sentences and len(set(first.texts)) == len(first.texts)
    second = WordEmbedder()
    guard = make_guard(vault, index, second)
    assert second.texts == [] and len(guard.decisions.decisions) == 7
    # A changed decision is the only one embedded again.
    path = vault / "Decisions" / "ADR-0011 Friday release window.md"
    path.write_text(path.read_text().replace("every Friday", "every Thursday"))
    index.update()
    guard.refresh()
    assert second.texts == [
        "Friday release window. Production releases go out every Thursday between 14:00 and 16:00.",
        "Production releases go out every Thursday between 14:00 and 16:00.",
    ]
    # Another model: nothing from the cache is used.
    third = WordEmbedder()
    Guard(vault, index=index, embed=third, model_id="other").refresh()
    assert len(third.texts) == len(first.texts)


def test_guard_is_off_by_default_and_on_per_vault(vault: Path) -> None:
    switch = GuardSwitch(vault)
    assert switch.activation("/anywhere") == Activation(False, "warn", DEFAULT_THRESHOLD)
    save_guard_settings(vault, GuardSettings(enabled=True, mode="ask", threshold=0.6))
    assert switch.activation("/anywhere") == Activation(True, "ask", 0.6)
    assert switch.activation("/anywhere", "warn").mode == "warn"  # the hook's --mode wins
    assert load_guard_settings(vault).threshold == 0.6


def test_projects_turn_the_guard_on_or_off_by_cwd(vault: Path, tmp_path: Path) -> None:
    outer = tmp_path / "work"
    inner = outer / "ledgerline"
    (inner / "src").mkdir(parents=True)
    switch = GuardSwitch(vault)
    set_project(outer, enabled=True, mode="ask")
    set_project(inner, enabled=False)
    assert switch.activation(str(outer / "other")).active
    assert switch.activation(str(outer)).mode == "ask"
    assert not switch.activation(str(inner / "src")).active  # the most specific folder wins
    assert not switch.activation(str(tmp_path / "elsewhere")).active
    set_project(inner, enabled=None)
    assert switch.activation(str(inner / "src")).active


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (GuardSettings(threshold=1.5), "Guard threshold 1.5 is out of range"),
        (GuardSettings(mode="block"), "Guard mode 'block' is unknown: use 'warn' or 'ask'."),  # type: ignore[arg-type]
    ],
)
def test_bad_settings_are_refused(vault: Path, settings: GuardSettings, message: str) -> None:
    with pytest.raises(GuardError, match=re.escape(message)):
        save_guard_settings(vault, settings)


def test_a_broken_settings_file_is_a_clear_error(vault: Path) -> None:
    save_guard_settings(vault, GuardSettings(enabled=True))
    (vault / ".antinomy" / "guard" / "settings.json").write_text("{oops")
    with pytest.raises(GuardError, match=r"cannot be read .* run `antinomy guard enable` again"):
        load_guard_settings(vault)


def test_summary_is_bounded_to_two_kilobytes_on_a_character_boundary() -> None:
    text = "é" * 5000
    bounded = bound_summary(text)
    assert len(bounded.encode()) <= 2048 and bounded == "é" * 1024


# ---------------------------------------------------------------- with the judge

LEDGER = "The billing service keeps its ledger in a SQLite file on its own worker host."


def _ledger_judge(p: float = 0.93) -> ScriptedJudge:
    """Reads a change that moves the ledger to PostgreSQL as against ADR-0012's sentence."""

    def verdict(a: str, b: str) -> tuple[float, float, float]:
        change, sentence = (a, b) if "ledger" in a and "postgres" in a.lower() else (b, a)
        if sentence == LEDGER and "postgres" in change.lower():
            return (p, (1 - p) / 2, (1 - p) / 2)
        return (0.03, 0.2, 0.77)

    return ScriptedJudge(verdict=verdict)


def test_with_a_judge_only_a_judged_contradiction_warns(vault: Path, index: VaultIndex) -> None:
    embed = WordEmbedder()
    guard = make_guard(vault, index, embed)
    judge = _ledger_judge()
    against = "Move the billing ledger from the SQLite file into the postgres cluster"
    agrees = "Back up the billing ledger SQLite file on its worker host every night"
    v = guard.decide(
        vector=embed([against])[0], session_id="s", activation=ON, summary=against, judge=judge
    )
    assert v.verdict == "warn" and v.decision is not None and v.decision.id == "ADR-0012"
    assert v.score == pytest.approx(0.93) and v.output is not None
    assert "contradiction 0.93" in v.output["hookSpecificOutput"]["additionalContext"]
    # Same subject, same words, but the judge does not read it as against: allowed.
    v = guard.decide(
        vector=embed([agrees])[0], session_id="t", activation=ON, summary=agrees, judge=judge
    )
    assert v.verdict == "allow"
    # Judged against the nearest decisions' sentences, a few pairs per check.
    assert any(b == LEDGER for _, b in judge.calls)
    assert len(judge.calls) <= 2 * 3


def test_the_judge_warns_once_per_session_and_honours_the_vault_threshold(
    vault: Path, index: VaultIndex
) -> None:
    embed = WordEmbedder()
    guard = make_guard(vault, index, embed)
    against = "Move the billing ledger from the SQLite file into the postgres cluster"
    args = {"vector": embed([against])[0], "activation": ON, "summary": against}
    assert guard.decide(session_id="s", judge=_ledger_judge(), **args).verdict == "warn"
    assert guard.decide(session_id="s", judge=_ledger_judge(), **args).verdict == "repeat"
    save_guard_settings(vault, GuardSettings(enabled=True, judge_threshold=0.95))
    assert guard.decide(session_id="u", judge=_ledger_judge(), **args).verdict == "allow"
    with pytest.raises(GuardError, match=r"judge_threshold 1\.5 is out of range"):
        GuardSettings(judge_threshold=1.5).validated()


def test_the_judge_is_not_asked_when_no_sentence_shares_the_changes_subject(
    vault: Path, index: VaultIndex
) -> None:
    """Near decisions (by statement) are judged only when one of their sentences reaches
    the guard's sentence floor with the change; when one does, the same best pairs as
    ever go to the judge together (its int8 scores move with the batch)."""
    embed = WordEmbedder()
    guard = make_guard(vault, index, embed)
    assert guard.sentence_floor == SENTENCE_FLOOR == 0.3
    against = "Move the billing ledger from the SQLite file into the postgres cluster"
    vector = embed([against])[0]
    snapshot = guard.decisions
    near = np.argsort(-snapshot.scores(vector))[:3]
    sims = np.sort(snapshot.sentence_matrix[snapshot.sentences_of(near.tolist())] @ vector)[::-1]
    assert sims[0] > sims[1] > SENTENCE_FLOOR  # the ledger sentence first, others nearby

    def decide(floor: float) -> tuple[str, int]:
        judge = _ledger_judge()
        guard.sentence_floor = floor
        verdict = guard.decide(
            vector=vector, session_id=f"s{floor}", activation=ON, summary=against, judge=judge
        )
        return verdict.verdict, len(judge.calls)

    assert decide(float(sims[0]) + 0.01) == ("allow", 0)  # nothing shares the subject
    assert decide(float(sims[1]) + 0.01) == ("warn", 3)  # the best does: the best 3 pairs
    assert decide(SENTENCE_FLOOR) == ("warn", 3)


def test_a_decisions_sentences_are_found_by_their_span() -> None:
    decisions = tuple(
        StandingDecision(path=f"d{i}.md", id=f"D{i}", title="t", kind="decision", text="x")
        for i in range(3)
    )
    rows = ((0, "a"), (0, "b"), (2, "c"))
    snapshot = DecisionSet(decisions, sentences=rows)
    assert snapshot.sentences_of([2, 0]).tolist() == [2, 0, 1]
    assert snapshot.sentences_of([1]).tolist() == []
    assert snapshot.sentences_of([]).tolist() == []
    with pytest.raises(ValueError, match="in decision order"):
        DecisionSet(decisions, sentences=((2, "c"), (0, "a")))


def test_a_changed_decision_is_the_only_note_read_again(
    vault: Path, index: VaultIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    guard = make_guard(vault, index)
    read: list[str] = []
    original = index.note

    def counting(path: str):  # type: ignore[no-untyped-def]
        read.append(path)
        return original(path)

    monkeypatch.setattr(index, "note", counting)
    guard.refresh()
    assert read == []  # nothing changed: no note read
    changed = "Decisions/ADR-0011 Friday release window.md"
    path = vault / changed
    path.write_text(path.read_text().replace("every Friday", "every Thursday"))
    index.update()
    guard.refresh()
    assert read == [changed]
    assert any("every Thursday" in d.text for d in guard.decisions.decisions)
    # A decision that is superseded leaves; a deleted one is forgotten.
    read.clear()
    gone = "Decisions/ADR-0012 Billing ledger in SQLite.md"
    (vault / gone).unlink()
    index.update()
    guard.refresh()
    assert read == [] and gone not in {d.path for d in guard.decisions.decisions}
    assert len(guard.decisions.decisions) == 6
    # Turning principles on reads the principle notes (and only re-reads what it must).
    save_guard_settings(vault, GuardSettings(enabled=True, include_principles=True))
    guard.refresh()
    assert read and all(p.startswith(("Principles/", "Decisions/")) for p in read)
    assert any(d.kind == "principle" for d in guard.decisions.decisions)


def test_incremental_refresh_gives_what_a_fresh_guard_gives(vault: Path, index: VaultIndex) -> None:
    guard = make_guard(vault, index)
    for name in ("ADR-0011 Friday release window.md", "ADR-0013 Self-hosted CI runners.md"):
        path = vault / "Decisions" / name
        path.write_text(path.read_text().replace("## Decision", "## Decision\n\nRevised today."))
    index.update()
    guard.refresh()
    fresh = make_guard(vault, index)
    assert guard.decisions.signature == fresh.decisions.signature
    assert guard.decisions.sentences == fresh.decisions.sentences
    assert np.allclose(guard.decisions.matrix, fresh.decisions.matrix)
