"""The judge engine: registry checks, bad files, and (marked ``model``) the shipped judge."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from foundation.errors import ModelUnavailable
from inference.judge import CONTRADICTION, ENTAILMENT, OnnxJudge, Thresholds
from inference.registry import default_spec, load_manifest, resolve_model


def test_the_manifest_names_the_shipped_judge_with_its_thresholds() -> None:
    spec = default_spec("judge", load_manifest())
    assert spec.file == "judge/judge-int8.onnx" and spec.package is None
    t = Thresholds.from_mapping(spec.extra["thresholds"])
    assert 0 < t.contradiction < t.high < 1 and 0 < t.guard < 1 and 0 < t.min_cosine < 1


def test_a_judge_file_of_the_wrong_kind_is_refused_clearly(tmp_path: Path) -> None:
    junk = tmp_path / "judge.onnx"
    junk.write_bytes(b"\x08\x01 not a protobuf model")
    with pytest.raises(ModelUnavailable, match="cannot be loaded as an ONNX model"):
        OnnxJudge(resolve_model("judge", junk))
    with pytest.raises(ModelUnavailable, match="does not exist"):
        resolve_model("judge", tmp_path / "nope.onnx")


def test_an_embedder_is_not_a_judge(tmp_path: Path) -> None:
    embedder = resolve_model("embedder")
    with pytest.raises(ModelUnavailable, match=r"answers shape .* a judge answers \(pairs, 3\)"):
        OnnxJudge(resolve_model("judge", embedder.path))


def test_a_damaged_shipped_judge_names_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = tmp_path / "models"
    (models / "judge").mkdir(parents=True)
    real = Path(__file__).resolve().parents[1] / "models"
    (models / "manifest.toml").write_text((real / "manifest.toml").read_text())
    shipped = models / default_spec("judge").file
    shipped.write_bytes(b"truncated")
    monkeypatch.setattr("inference.registry.models_dir", lambda: models)
    with pytest.raises(ModelUnavailable, match=r"is 9 bytes, expected .* reinstall Antinomy"):
        resolve_model("judge")
    shipped.unlink()
    with pytest.raises(ModelUnavailable, match="The judge file is missing at"):
        resolve_model("judge")


@pytest.mark.model
def test_the_shipped_judge_reads_contradictions_and_agreements() -> None:
    judge = OnnxJudge(resolve_model("judge"))
    pairs = [
        # Written for this test (not in the training data, not in the sample vault).
        ("The library opens at nine on Saturdays.", "On Saturdays the library opens at noon."),
        ("We pay the cleaner in cash every month.", "The cleaner is paid in cash each month."),
        ("The piano lesson is on Wednesday at five.", "The lesson went well; scales are better."),
    ]
    p = judge.score(pairs)
    back = judge.score([(b, a) for a, b in pairs])
    assert np.allclose(p, back, atol=1e-5) and np.allclose(p.sum(axis=1), 1.0, atol=1e-5)
    t = judge.thresholds.contradiction
    # A direct clash is caught; a paraphrase is entailment; an unrelated line is neither.
    # (A rule against an action that needs a step of inference — "I never drink coffee
    # after lunch" / "Had a double espresso at four" — is missed: see the model card.)
    assert p[0, CONTRADICTION] >= t
    assert p[1, CONTRADICTION] < t and p[1, ENTAILMENT] > p[1, CONTRADICTION]
    assert p[2, CONTRADICTION] < t


@pytest.mark.model
def test_a_pairs_score_does_not_depend_on_what_it_is_judged_with() -> None:
    """The int8 judge quantises activations per ONNX call: batched with other pairs, the same
    pair scored up to 0.11 apart. A verdict must not move because another note changed."""
    judge = OnnxJudge(resolve_model("judge"))
    pair = ("The library opens at nine on Saturdays.", "On Saturdays the library opens at noon.")
    others = [
        ("We pay the cleaner in cash every month, always on the first Monday.", "Cash it is."),
        ("A very long line " + "about the weather and the garden wall " * 8, "Short one."),
        ("The piano lesson is on Wednesday at five.", "The lesson went well; scales are better."),
    ]
    alone = judge.score([pair])[0]
    for k in range(1, len(others) + 1):
        together = judge.score([pair, *others[:k]])[0]
        assert np.allclose(alone, together, atol=1e-6), k


def test_the_judge_reads_its_label_order_from_the_manifest() -> None:
    from dataclasses import replace

    from inference.judge import _label_columns

    model = resolve_model("judge")
    assert model.spec is not None
    assert _label_columns(model) == [0, 1, 2]
    swapped = replace(
        model,
        spec=replace(
            model.spec,
            extra={**model.spec.extra, "labels": ["neutral", "contradiction", "entailment"]},
        ),
    )
    assert _label_columns(swapped) == [1, 2, 0]
    bad = replace(
        model,
        spec=replace(model.spec, extra={**model.spec.extra, "labels": ["yes", "no", "maybe"]}),
    )
    with pytest.raises(ModelUnavailable, match=r"fix models/manifest\.toml"):
        _label_columns(bad)
