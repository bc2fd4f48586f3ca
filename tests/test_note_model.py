"""The note-level model: read, checked, and a clear line when it is missing or damaged."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from foundation.errors import ModelUnavailable
from inference.note_model import NoteModel, load_note_model

MODEL = NoteModel(("best", "second"), (0.5, 0.2), (0.2, 0.1), (2.0, 0.5), -1.0, 0.6, 0.9)


def write(path: Path, model: NoteModel = MODEL) -> str:
    text = json.dumps(model.to_json())
    path.write_text(text, encoding="utf-8")
    return hashlib.sha256(text.encode()).hexdigest()


def test_a_model_round_trips_and_reads_named_features(tmp_path: Path) -> None:
    digest = write(tmp_path / "m.json")
    model = load_note_model(tmp_path / "m.json", sha256=digest)
    assert model.features == MODEL.features and model.threshold == 0.6
    assert model.model_id.startswith("m.json:")
    low, high = model.probability({"best": 0.2}), model.probability({"best": 0.95, "second": 0.9})
    assert 0 < low < 0.5 < high < 1
    # A feature the caller does not give counts as 0; an unknown one is ignored.
    assert model.probability({"best": 0.2, "other": 5.0}) == low


def test_a_missing_model_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match=r"note-level model is missing at .*reinstall"):
        load_note_model(tmp_path / "gone.json")


def test_a_corrupted_model_is_refused_by_its_hash(tmp_path: Path) -> None:
    digest = write(tmp_path / "m.json")
    (tmp_path / "m.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ModelUnavailable, match=r"expected .*corrupted — reinstall"):
        load_note_model(tmp_path / "m.json", sha256=digest)


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        json.dumps({"format": "something-else/1"}),
        json.dumps({**MODEL.to_json(), "weights": [1.0]}),  # does not line up
        json.dumps({**MODEL.to_json(), "scale": [0.0, 1.0]}),  # would divide by zero
    ],
)
def test_a_file_that_is_not_a_note_model_is_refused(tmp_path: Path, content: str) -> None:
    (tmp_path / "m.json").write_text(content, encoding="utf-8")
    with pytest.raises(ModelUnavailable, match=r"is not a note-level model"):
        load_note_model(tmp_path / "m.json")


@pytest.mark.model
def test_a_judge_entry_naming_a_note_model_loads_it_and_refuses_a_damaged_one(
    tmp_path: Path,
) -> None:
    """The manifest can ship a note-level model with the judge (``note_model = {file,
    sha256}`` in its entry): the judge loads it, and a damaged file is one line naming the
    fix. (The shipped judge has none yet: its scan decides on the strongest pair.)"""
    from dataclasses import replace

    from inference.judge import OnnxJudge
    from inference.registry import resolve_model

    digest = write(tmp_path / "note-model.json")
    model = resolve_model("judge")
    assert model.spec is not None
    entry = {"file": str(tmp_path / "note-model.json"), "sha256": digest}
    with_model = replace(
        model, spec=replace(model.spec, extra={**model.spec.extra, "note_model": entry})
    )
    judge = OnnxJudge(with_model)
    assert judge.note_model is not None and judge.note_model.threshold == MODEL.threshold
    judge.close()
    damaged = {**entry, "sha256": "0" * 64}
    bad = replace(
        model, spec=replace(model.spec, extra={**model.spec.extra, "note_model": damaged})
    )
    with pytest.raises(ModelUnavailable, match=r"note-level model is corrupted — reinstall"):
        OnnxJudge(bad)


def test_the_training_fit_keeps_evidence_the_right_way_round() -> None:
    """A feature of clash evidence that the data tie to compatible pairs (as the written
    pairs' traps tie a second clashing-looking sentence pair) gets weight 0, not a negative
    one; the unconstrained fit would give it one."""
    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts" / "judge"))
    from note_model import fit, fit_monotone

    rng = np.random.default_rng(0)
    n = 400
    y = rng.integers(0, 2, n).astype(float)
    best = y + rng.normal(0, 0.8, n)
    second = -0.8 * y + rng.normal(0, 0.5, n)  # more of it where the notes agree
    x = np.column_stack([best, second])
    w = np.ones(n)
    free, _ = fit(x, y, w)
    assert free[1] < 0
    kept, _ = fit_monotone(x, y, w, ("best", "second"))
    assert kept[0] > 0
    assert kept[1] == 0.0
