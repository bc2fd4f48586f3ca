"""The calibration, kept honest: the shipped embedder on tests/perf/guard_cases.py.

tests/perf/calibrate_guard.py chose DEFAULT_THRESHOLD from these cases; this
test fails if a change to what is embedded (the decision statement, the hook's
summary) or to the threshold breaks what the choice rested on.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from desktop.flows.embedding import embedding_model
from desktop.flows.guard import DEFAULT_THRESHOLD, Activation, Guard
from desktop.resources import sample_vault_source
from desktop.service.hook import summarize
from desktop.vault.index import VaultIndex
from tests.perf.guard_cases import cases

pytestmark = pytest.mark.model


def test_default_threshold_on_the_calibration_cases(runtime: Any, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(sample_vault_source(), vault)
    index = VaultIndex(vault)
    index.update()
    embedder = runtime.queued_embedder()
    guard = Guard(
        vault, index=index, embed=embedder.embed, model_id=embedding_model(embedder).model_id
    )
    guard.refresh()
    on = Activation(True, "warn", DEFAULT_THRESHOLD)
    all_cases = cases()
    vectors = embedder.embed([summarize(tool, data) for _, _, tool, data in all_cases])
    warned: dict[str, list[str | None]] = {}
    for n, ((label, ident, _, _), vec) in enumerate(zip(all_cases, vectors, strict=True)):
        verdict = guard.decide(vector=vec, session_id=f"case-{n}", activation=on)
        assert verdict.decision is None or verdict.decision.id != "ADR-0003"  # superseded
        if verdict.verdict == "warn":
            assert verdict.decision is not None
            warned.setdefault(label, []).append(ident)
            if label == "contradicts":
                assert verdict.decision.id == ident  # it names the decision it goes against
    assert "unrelated" not in warned
    assert len(warned.get("contradicts", [])) >= 3
    assert len(warned.get("related", [])) <= 2
    index.close()


def test_the_judges_guard_threshold_on_the_guard_calibration_set(tmp_path: Path) -> None:
    """The guard judge's threshold was chosen with tests/perf/calibrate_guard.py on
    tests/perf/guard_cal_cases.py (not on the sample vault's calls): at it, no unrelated call
    warns, at most 2 of the 24 that respect a decision do, and some calls against one warn,
    at least one naming the decision it goes against."""
    from desktop.flows.embedding import load_embedding_model
    from tests.perf import guard_cal_cases
    from tests.perf.calibrate_guard import CAL_VAULT, judged

    vault = tmp_path / "vault"
    shutil.copytree(CAL_VAULT, vault)
    index = VaultIndex(vault)
    index.update()
    model = load_embedding_model()
    all_cases = guard_cal_cases.cases()
    summaries = [summarize(tool, data) for _, _, tool, data in all_cases]
    report = judged(vault, index, model, all_cases, summaries)
    index.close()
    at = report["by_threshold"][str(round(report["calibrated"], 3))]
    assert at["warned"]["unrelated"] == 0
    assert at["warned"]["related"] <= 2
    assert at["warned"]["contradicts"] >= 3
    assert at["contradicts_citing_own_decision"] >= 1
