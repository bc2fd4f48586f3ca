"""The scan learns from review decisions: labels with features, this vault's calibration,
hidden pairs kept one command away, frames dismissed "all like this", and bad input."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.flows.hunter import ScanRun, ScanSettings, load_last_run, scan
from desktop.flows.hunter.labels import LabelStore, pair_key
from desktop.flows.review import (
    dismiss_like,
    dismiss_pair,
    resolve_tension,
    undismiss_pair,
    unhide_frame,
)
from desktop.vault.index import VaultIndex
from desktop.vault.vectors import EmbeddingModel
from inference.judge import Thresholds
from tests import learning_vault as lv
from tests.fakes import ScriptedGenerator, ScriptedJudge
from tests.test_index import BagOfWords


@pytest.fixture
def index(tmp_path: Path) -> Iterator[VaultIndex]:
    root = tmp_path / "vault"
    root.mkdir()
    idx = lv.make_index(root)
    yield idx
    idx.close()


def dismiss(index: VaultIndex, run: ScanRun, n: int) -> None:
    """The user dismisses the first ``n`` false pairs the scan showed, as the window does."""
    for p in [p for p in run.pairs if not lv.is_omega(p)][:n]:
        dismiss_pair(
            index.root,
            p.path_a,
            p.path_b,
            seen={p.path_a: p.sha_a, p.path_b: p.sha_b},
            on_change=index.update_paths,
        )


def test_dismissals_teach_the_scan_and_the_confirmed_pair_stays_shown(index: VaultIndex) -> None:
    first = lv.run_scan(index)
    assert first.status == "ok" and len(first.pairs) == 15
    assert all(p.features and p.features["best"] > 0.5 for p in first.pairs)
    assert first.learning.message == "" and first.hidden == ()

    result = resolve_tension(index.root, "Tensions/Omega retries.md", on_change=index.update_paths)
    assert result.learned == "kept as 1 confirmed pair to learn from"
    dismiss(index, first, 10)

    second = lv.run_scan(index)
    # The 10 dismissed pairs are dropped as before; the 4 like them are hidden by this
    # vault's calibration, with their reason; the confirmed pair is still shown.
    assert second.dropped.get("dismissed") == 10
    assert [(p.note_a, p.note_b) for p in second.pairs] == [("Omega budget", "Omega retries")]
    assert len(second.hidden) == 4
    assert {p.hidden_because for p in second.hidden} == {"calibration"}
    report = second.learning
    assert (report.decisions, report.used, report.positives) == (11, 11, 1)
    assert report.calibration in ("vault", "held") and report.hidden_by_calibration == 4
    assert report.message.startswith("11 of your decisions used")
    assert report.message.endswith("4 pairs like ones you dismissed are hidden")
    assert second.decided_by.endswith("+ this vault's decisions")
    # Kept for the next start and for `scan --show-hidden`.
    kept = load_last_run(index.root)
    assert kept is not None and kept.hidden == second.hidden
    assert kept.learning == report


def test_a_review_decision_carries_the_features_the_scan_judged(index: VaultIndex) -> None:
    run = lv.run_scan(index)
    pair = run.pairs[0]
    result = dismiss_pair(index.root, pair.path_a, pair.path_b)
    assert result.learned == "kept as 1 dismissed pair to learn from"
    label = LabelStore(index.root).read().labels[pair_key(pair.path_a, pair.path_b)]
    assert not label.positive and label.action == "dismiss"
    assert label.features == pair.features and label.judge == run.judge_id == "scripted"

    undone = undismiss_pair(index.root, pair.path_a, pair.path_b)
    assert undone.learned == "its label taken back"
    assert pair_key(pair.path_a, pair.path_b) not in LabelStore(index.root).read().labels


def test_dismissed_then_confirmed_the_latest_decision_counts(index: VaultIndex) -> None:
    run = lv.run_scan(index)
    omega = next(p for p in run.pairs if lv.is_omega(p))
    dismiss_pair(index.root, omega.path_a, omega.path_b)
    undismiss_pair(index.root, omega.path_a, omega.path_b)
    dismiss_pair(index.root, omega.path_a, omega.path_b)
    result = resolve_tension(index.root, "Tensions/Omega retries.md")
    assert "replaces your earlier “dismiss” of that pair (the latest decision counts)" in (
        result.learned
    )
    label = LabelStore(index.root).read().labels[pair_key(omega.path_a, omega.path_b)]
    assert label.positive and label.overrode == "dismiss"


def test_a_deleted_antinomy_folder_loses_no_decision(index: VaultIndex) -> None:
    first = lv.run_scan(index)
    dismiss(index, first, 10)
    index.close()
    shutil.rmtree(index.root / ".antinomy")
    fresh = lv.make_index(index.root, write=False)  # the index is rebuilt too
    try:
        again = lv.run_scan(fresh)
    finally:
        fresh.close()
    # The dismissals are read back from the notes, judged again, and taught the scan again.
    assert again.learning.decisions == 10 and again.learning.used == 10
    assert again.learning.calibration == "vault"
    assert again.learning.hidden_by_calibration >= 4
    labels = LabelStore(index.root).read().labels
    assert len(labels) == 10
    assert all(lab.source == "notes" and lab.features for lab in labels.values())


def test_a_focus_scan_judges_labelled_pairs_again_to_learn_their_features(
    index: VaultIndex,
) -> None:
    first = lv.run_scan(index)
    dismiss(index, first, 8)
    index.close()
    shutil.rmtree(index.root / ".antinomy")
    fresh = lv.make_index(index.root, write=False)
    try:
        run = lv.run_scan(fresh, mode="focus", focus="Gateways/Mike retries.md")
    finally:
        fresh.close()
    # The focus note's neighbours are not the dismissed pairs: those are judged only to
    # learn their features, and not counted among the pairs the run judged.
    assert run.learning.judged_again == 8
    assert run.note_pairs_judged == run.notes_examined - 1
    assert run.learning.used == 8


def test_a_damaged_learned_file_never_stops_a_scan_nor_loses_a_decision(
    index: VaultIndex,
) -> None:
    first = lv.run_scan(index)
    dismiss(index, first, 10)
    state = index.root / ".antinomy"
    (state / "learned.json").write_text("{ damaged")
    run = lv.run_scan(index)
    assert run.status == "ok"
    assert run.learning.error.startswith("what was learned could not be read (")
    assert "your decisions were read back from the notes" in run.learning.error
    assert run.learning.used == 10 and run.learning.hidden_by_calibration == 5
    assert (state / "learned.json.damaged").read_text() == "{ damaged"
    assert len(LabelStore(index.root).read().labels) == 10


def test_a_link_in_place_of_the_learned_file_leaves_the_shipped_calibration(
    index: VaultIndex, tmp_path: Path
) -> None:
    first = lv.run_scan(index)
    dismiss(index, first, 10)
    state = index.root / ".antinomy"
    elsewhere = tmp_path / "elsewhere.json"
    (state / "learned.json").rename(elsewhere)
    (state / "learned.json").symlink_to(elsewhere)
    before = elsewhere.read_text()
    run = lv.run_scan(index)
    assert run.status == "ok" and len(run.pairs) == 5 and run.hidden == ()
    assert "is a symbolic link" in run.learning.error
    assert run.learning.error.endswith("the shipped calibration decided")
    assert elsewhere.read_text() == before


def test_a_label_that_cannot_be_kept_leaves_the_dismissal_and_the_next_scan_reads_it(
    index: VaultIndex,
) -> None:
    run = lv.run_scan(index)  # keeps learned.json
    assert (index.root / ".antinomy" / "learned.json").is_file()
    lock = index.root / ".antinomy" / "learned.lock"
    lock.unlink(missing_ok=True)
    lock.mkdir()  # the store cannot be locked, so cannot be written
    pair = run.pairs[0]
    result = dismiss_pair(index.root, pair.path_a, pair.path_b, on_change=index.update_paths)
    assert result.operation_id is not None
    assert result.learned.startswith("not kept for the scan to learn from")
    assert "hunter_false_positives" in (index.root / pair.path_a).read_text()
    lock.rmdir()
    lv.run_scan(index)
    label = LabelStore(index.root).read().labels[pair_key(pair.path_a, pair.path_b)]
    assert label.source == "notes" and label.features == pair.features


ALWAYS = "The {} gateway always retries failed payments."
NEVER = "The {} gateway never retries failed payments at all."
TWINS = {
    f"Gateways/{n.capitalize()} {kind}.md": f"# {n.capitalize()} {kind}\n\n{text.format(n)}\n"
    for n in ("alpha", "bravo")
    for kind, text in (("retries", ALWAYS), ("limits", NEVER))
}


def twins_judge() -> ScriptedJudge:
    clashes = {frozenset((ALWAYS.format(n), NEVER.format(n))) for n in ("alpha", "bravo")}

    def verdict(a: str, b: str) -> tuple[float, float, float]:
        return (0.8, 0.1, 0.1) if frozenset((a, b)) in clashes else (0.03, 0.07, 0.9)

    judge = ScriptedJudge(verdict)
    judge.thresholds = Thresholds(min_cosine=0.0)
    return judge


@pytest.mark.parametrize("mode", ["whole-vault", "focus", "classic"])
def test_dismiss_all_like_this_hides_the_frame_in_every_mode(tmp_path: Path, mode: str) -> None:
    root = tmp_path / "vault"
    for rel, text in TWINS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("---\ntype: substrate\n---\n" + text)
    index = VaultIndex(root, embedding=EmbeddingModel("bag-of-words", 64, BagOfWords()))
    index.update()
    focus = "Gateways/Bravo retries.md" if mode == "focus" else None

    def rescan() -> ScanRun:
        return scan(
            index,
            ScriptedGenerator([]),
            judge=twins_judge(),
            mode=mode,  # type: ignore[arg-type]
            focus=focus,
            settings=ScanSettings(
                band_low=0.0, band_high=1.0, pairs_per_note=8, describe=0, ask_model=False
            ),
        )

    try:
        first = scan(
            index,
            ScriptedGenerator([]),
            judge=twins_judge(),
            mode="whole-vault",
            settings=lv.SETTINGS,
        )
        names = sorted((p.note_a, p.note_b) for p in first.pairs)
        assert names == [("Alpha limits", "Alpha retries"), ("Bravo limits", "Bravo retries")]
        alpha = next(p for p in first.pairs if "Alpha" in p.note_a)
        result, frame = dismiss_like(
            root, alpha.path_a, alpha.path_b, quote_a=alpha.quote_a, quote_b=alpha.quote_b
        )
        assert result.learned.endswith("pairs like it hidden")
        assert "the _ gateway always _ failed payments" in frame.key  # names masked

        run = rescan()
        assert [p.note_a for p in run.pairs] == []
        (hidden,) = run.hidden
        assert {hidden.note_a, hidden.note_b} == {"Bravo limits", "Bravo retries"}
        assert hidden.hidden_because == "like" and run.learning.hidden_like == 1
        assert "1 pair with sentences like a pair you dismissed" in run.learning.message

        assert unhide_frame(root, 1).key == frame.key
        back = rescan()
        assert {(p.note_a, p.note_b) for p in back.pairs} == {
            (hidden.note_a, hidden.note_b)
        } and back.hidden == ()
    finally:
        index.close()


def test_hundreds_of_dismissals_keep_the_scan_quick(index: VaultIndex) -> None:
    run = lv.run_scan(index)
    features = run.pairs[0].features
    with LabelStore(index.root).editing() as learned:
        for i in range(400):
            key = pair_key(f"Old/{i}.md", f"Old/{i}b.md")
            from desktop.flows.hunter.labels import record

            record(learned, [key], action="dismiss", features={key: (features, run.judge_id)})
    again = lv.run_scan(index)
    assert again.status == "ok" and again.learning.decisions == 400
    assert again.learning.used == 400 and again.learning.calibration == "vault"
    assert again.duration < 30
    data = json.loads((index.root / ".antinomy" / "learned.json").read_text())
    assert len(data["labels"]) == 400


def test_a_dismissal_undone_in_the_notes_is_taken_back_by_the_next_scan(
    index: VaultIndex,
) -> None:
    from desktop.vault.transactions import undo_operation

    first = lv.run_scan(index)
    pair = first.pairs[0]
    result = dismiss_pair(index.root, pair.path_a, pair.path_b, on_change=index.update_paths)
    assert pair_key(pair.path_a, pair.path_b) in LabelStore(index.root).read().labels
    assert result.operation_id is not None
    undo_operation(index.root, result.operation_id)
    index.update()
    again = lv.run_scan(index)
    assert len(again.pairs) == 15 and "dismissed" not in again.dropped
    assert pair_key(pair.path_a, pair.path_b) not in LabelStore(index.root).read().labels
