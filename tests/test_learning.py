"""The vault's own calibration (``hunter.calibrate``) and the label store (``hunter.labels``)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from desktop.flows.hunter.calibrate import (
    Example,
    LearningSettings,
    binomial_tail,
    calibrate,
    threshold_prior,
)
from desktop.flows.hunter.labels import (
    FORMAT,
    HiddenFrame,
    LabelStore,
    Learned,
    forget,
    frame_key,
    rebuild,
    record,
)
from desktop.flows.judging import FEATURES
from desktop.flows.review import reset_learning
from desktop.vault.errors import StateUnsafe
from inference.judge import Thresholds
from inference.note_model import NoteModel
from inference.paths import models_dir

SHIPPED = NoteModel.from_json(
    json.loads((models_dir() / "judge" / "note-model.json").read_text()), model_id="shipped"
)

#: What a false pair on a documentation page looks like to the shipped model: a strong
#: sentence pair in a page that is partly structure (shown: P ≈ 0.76).
FALSE_PAIR = {
    "best": 0.97,
    "best_cosine": 0.8,
    "passing": 1.0,
    "best_negation": 1.0,
    "structure_share": 0.15,
}
#: A real clash: two prose notes, a value that differs (P ≈ 0.95).
REAL_PAIR = {"best": 0.99, "best_cosine": 0.6, "passing": 1.0, "values_differ": 1.0}


def negatives(n: int, **change: float) -> list[Example]:
    return [
        Example({**FALSE_PAIR, "best": 0.97 - 0.005 * (i % 8), **change}, False, (f"a{i}", f"b{i}"))
        for i in range(n)
    ]


def test_the_shipped_model_shows_the_pairs_these_tests_use() -> None:
    assert SHIPPED.probability(FALSE_PAIR) >= SHIPPED.threshold
    assert SHIPPED.probability(REAL_PAIR) >= SHIPPED.threshold


def test_a_handful_of_decisions_leaves_the_shipped_calibration() -> None:
    cal = calibrate(SHIPPED, negatives(3))
    assert cal.status == "too few" and not cal.learned
    assert cal.model is SHIPPED
    assert all(cal.shows(e.features) for e in negatives(3))


def test_seven_dismissals_in_a_row_are_the_fewest_that_move_it() -> None:
    assert binomial_tail(0, 6, 0.5) > LearningSettings().alpha > binomial_tail(0, 7, 0.5)
    assert not calibrate(SHIPPED, negatives(6)).learned
    assert calibrate(SHIPPED, negatives(7)).learned
    # With one confirmation among them, it takes 11.
    one = [Example(REAL_PAIR, True, ("r", "x"))]
    assert not calibrate(SHIPPED, [*one, *negatives(9)]).learned
    assert calibrate(SHIPPED, [*one, *negatives(10)]).learned


def test_dismissing_what_the_scan_is_sure_of_raises_this_vault_threshold() -> None:
    cal = calibrate(SHIPPED, negatives(10))
    assert cal.status == "vault", cal.reason
    assert cal.model.threshold > SHIPPED.threshold
    assert cal.fixed >= 7 and cal.broken == 0
    # The dismissed pairs and pairs like them are hidden; the prior is untouched.
    assert not any(cal.shows(e.features) for e in negatives(10))
    assert not cal.shows({**FALSE_PAIR, "best": 0.95})
    assert SHIPPED.probability(FALSE_PAIR) >= SHIPPED.threshold


def test_decisions_that_agree_with_the_scan_change_nothing() -> None:
    examples = [Example(REAL_PAIR, True, (f"r{i}", "x")) for i in range(8)] + negatives(4)
    cal = calibrate(SHIPPED, examples)
    assert cal.status == "refused" and not cal.learned
    assert "right about 8 of the 12 pairs" in cal.reason
    assert cal.model is SHIPPED


def test_a_pair_the_user_confirmed_is_never_hidden() -> None:
    # The confirmed pair looks like the dismissed ones, only a little weaker: a plain fit
    # would hide it with them.
    confirmed = Example({**FALSE_PAIR, "best": 0.93}, True, ("Tension.md", "Note.md"))
    assert SHIPPED.probability(confirmed.features) >= SHIPPED.threshold  # shown before
    cal = calibrate(SHIPPED, [*negatives(12), confirmed])
    assert cal.status == "held", cal.reason
    assert cal.protected == (("Tension.md", "Note.md"),)
    assert cal.reason == "threshold held so that the pair you confirmed stays shown"
    assert cal.shows(confirmed.features)


def test_the_vault_calibration_only_ever_hides() -> None:
    below = {"best": 0.3, "best_cosine": 0.5}
    assert SHIPPED.probability(below) < SHIPPED.threshold
    cal = calibrate(SHIPPED, negatives(10, structure_share=0.1))
    assert cal.learned
    assert not cal.shows(below)


def test_a_judge_without_a_note_model_learns_from_its_threshold() -> None:
    prior = threshold_prior(Thresholds(contradiction=0.7, high=0.9))
    for best in (0.2, 0.69, 0.7, 0.71, 0.99):
        shown = prior.probability({"best": best}) >= prior.threshold
        assert shown == (best >= 0.7)
    cal = calibrate(prior, [Example({"best": 0.99, "passing": 1.0}, False)] * 10)
    assert cal.learned and not cal.shows({"best": 0.99, "passing": 1.0})


def test_hundreds_of_dismissals_are_fitted_in_well_under_a_second() -> None:
    examples = negatives(300) + [Example(REAL_PAIR, True, (f"r{i}", "x")) for i in range(40)]
    t0 = time.perf_counter()
    cal = calibrate(SHIPPED, examples)
    assert time.perf_counter() - t0 < 1.0
    assert cal.learned and cal.used == 340
    assert cal.shows(REAL_PAIR)


# ------------------------------------------------------------------ the label store


def test_dismissed_then_elevated_the_latest_decision_counts_and_says_so() -> None:
    learned = Learned()
    feats = {("A.md", "B.md"): ({"best": 0.9}, "judge:1")}
    record(learned, [("B.md", "A.md")], action="dismiss", features=feats)
    (label,) = record(learned, [("A.md", "B.md")], action="elevate")
    assert label.positive and label.overrode == "dismiss"
    assert label.features == {"best": 0.9} and label.judge == "judge:1"  # kept from before
    assert list(learned.labels) == [("A.md", "B.md")]
    # An undismissal takes back a dismissal only, never a later elevation.
    assert forget(learned, [("A.md", "B.md")], action="dismiss") == 0
    assert learned.labels[("A.md", "B.md")].positive


def test_labels_and_frames_round_trip_through_the_file(tmp_path: Path) -> None:
    (tmp_path / "A.md").write_text("a\n")
    store = LabelStore(tmp_path)
    with store.editing() as learned:
        record(learned, [("A.md", "B.md")], action="dismiss", features={})
        record(
            learned,
            [("C.md", "D.md")],
            action="resolve",
            features={("C.md", "D.md"): ({"best": 0.5}, "j")},
        )
    data = json.loads(store.path.read_text())
    assert data["format"] == FORMAT
    again = store.read()
    assert again.labels == Learned.from_json(data).labels
    assert again.labels[("C.md", "D.md")].features_for("j") == {"best": 0.5}
    assert again.labels[("C.md", "D.md")].features_for("another judge") is None


def write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text, encoding="utf-8")


def test_a_deleted_antinomy_folder_rebuilds_the_decisions_from_the_notes(
    tmp_path: Path,
) -> None:
    write(tmp_path, "Notes/A.md", "---\nhunter_false_positives: [B]\n---\nA.\n")
    write(tmp_path, "Notes/B.md", "---\nhunter_false_positives:\n  - '[[A]]'\n---\nB.\n")
    write(tmp_path, "Notes/C.md", "C.\n")
    write(tmp_path, "Notes/D.md", "D.\n")
    write(
        tmp_path,
        "Tensions/C vs D.md",
        "---\ntype: tension\n---\n[[C]] says one, [[D]] the other.\n",
    )
    write(
        tmp_path,
        "Old/Elevated.md",
        "---\ntype: defeated\nmotive: elevated\n---\n[[A]] against [[C]].\n",
    )
    learned = LabelStore(tmp_path).read()  # no .antinomy/learned.json: rebuilt
    labels = {(lab.a, lab.b): lab for lab in learned.labels.values()}
    assert not labels[("Notes/A.md", "Notes/B.md")].positive
    assert labels[("Notes/C.md", "Notes/D.md")].action == "tension"
    assert labels[("Notes/A.md", "Notes/C.md")].action == "elevate"
    assert all(lab.features is None and lab.source == "notes" for lab in labels.values())
    assert learned.rebuilt_at


def test_a_damaged_file_is_kept_aside_and_the_decisions_rebuilt(tmp_path: Path) -> None:
    write(tmp_path, "A.md", "---\nhunter_false_positives: [B]\n---\nA.\n")
    write(tmp_path, "B.md", "B.\n")
    store = LabelStore(tmp_path)
    store.path.parent.mkdir()
    store.path.write_text("{ not json")
    with pytest.raises(ValueError):
        store.read()
    with store.editing() as learned:
        assert ("A.md", "B.md") in learned.labels
    assert (tmp_path / ".antinomy" / "learned.json.damaged").read_text() == "{ not json"
    assert json.loads(store.path.read_text())["format"] == FORMAT


def test_the_store_is_never_read_or_written_through_a_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(Learned().to_json()))
    vault = tmp_path / "vault"
    (vault / ".antinomy").mkdir(parents=True)
    os.symlink(outside, vault / ".antinomy" / "learned.json")
    store = LabelStore(vault)
    with pytest.raises(StateUnsafe, match="symbolic link"):
        store.read()
    with pytest.raises(StateUnsafe), store.editing() as learned:
        record(learned, [("A.md", "B.md")], action="dismiss")
    assert json.loads(outside.read_text())["labels"] == []


def test_reset_sets_the_decisions_aside_and_shows_the_frames_again(tmp_path: Path) -> None:
    write(tmp_path, "A.md", "A.\n")
    store = LabelStore(tmp_path)
    with store.editing() as learned:
        record(learned, [("A.md", "B.md")], action="dismiss")
        key = frame_key("x y z", (), "x y w", ())
        learned.frames.append(HiddenFrame(key, "x y z", "x y w", "A.md", "B.md"))
    assert reset_learning(tmp_path) == (1, 1)
    learned = store.read()
    assert learned.active() == [] and learned.frames == []
    assert ("A.md", "B.md") in learned.labels  # kept, not used
    with store.editing() as learned:
        record(learned, [("A.md", "C.md")], action="dismiss")
    assert [lab.b for lab in store.read().active()] == ["C.md"]


def test_the_prior_reads_every_feature_the_scan_computes() -> None:
    assert SHIPPED.features == FEATURES
    assert threshold_prior(Thresholds()).features == FEATURES


def test_rebuild_ignores_hub_tension_notes(tmp_path: Path) -> None:
    for n in "ABCDEFGH":
        write(tmp_path, f"{n}.md", f"{n}.\n")
    links = " ".join(f"[[{n}]]" for n in "ABCDEFGH")
    write(tmp_path, "T.md", f"---\ntype: tension\n---\n{links}\n")
    assert rebuild(tmp_path).labels == {}
