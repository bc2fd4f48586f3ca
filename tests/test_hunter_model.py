"""The tension scan end to end on the shipped models over the sample vault.

The judge decides and the 135M model only describes. These tests check that
every mode completes, that whatever is shown really passes verification against
the files, that the run's numbers add up, and that the textbook contradictions a
new user would try first are shown. Precision and recall over all 12 known
contradictions are measured by ``tests/perf/bench_hunter.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.flows.embedding import embedding_model
from desktop.flows.hunter import ScanRun, ScanSettings, scan
from desktop.flows.hunter.verify import quote_found
from desktop.resources import ensure_sample_vault
from desktop.vault.index import VaultIndex
from desktop.vault.notes import read_note
from inference.runtime import Runtime

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def sample_index(runtime: Runtime, tmp_path_factory: pytest.TempPathFactory) -> VaultIndex:
    root = ensure_sample_vault(tmp_path_factory.mktemp("sample"))
    index = VaultIndex(root, embedding=embedding_model(runtime.queued_embedder()))
    index.update()
    return index


def check_run(index: VaultIndex, run: ScanRun) -> None:
    assert run.status == "ok", run.error
    assert run.model.startswith("SmolLM2") and "llama.cpp" in run.backend
    assert run.judge.startswith("Antinomy judge") and run.note_pairs_judged > 0
    assert run.duration > 0 and run.sentence_pairs_judged > 0
    assert run.tokens_in == sum(a.tokens_in for a in run.attempts)
    assert run.tokens_out == sum(a.tokens_out for a in run.attempts)
    assert run.notes_examined <= run.candidates
    root = Path(index.root)
    for pair in run.pairs:
        assert pair.path_a != pair.path_b
        a, b = read_note(root, pair.path_a), read_note(root, pair.path_b)
        assert quote_found(pair.quote_a, a.body) and quote_found(pair.quote_b, b.body)
        assert pair.description and pair.sha_a == a.sha256 and pair.sha_b == b.sha256
        assert pair.probability is not None and pair.probability >= run.threshold
        fp_a = a.frontmatter.get("hunter_false_positives") or []
        assert b.basename not in fp_a


def test_classic_scan_on_the_sample_vault(runtime: Runtime, sample_index: VaultIndex) -> None:
    run = scan(
        sample_index, runtime.queued_generator(), judge=runtime.queued_judge(), mode="classic"
    )
    check_run(sample_index, run)
    assert run.notes_examined + len(run.excluded) == run.candidates
    assert run.notes_examined >= 15  # 20 newest, minus empty ones; all fit in 8k tokens
    dismissed = {"Run before work", "Mornings are for writing"}
    assert all({p.note_a, p.note_b} != dismissed for p in run.pairs)


def test_focus_scan_on_the_sample_vault(runtime: Runtime, sample_index: VaultIndex) -> None:
    focus = "Principles/No production changes before the weekend.md"
    run = scan(
        sample_index,
        runtime.queued_generator(),
        judge=runtime.queued_judge(),
        mode="focus",
        focus=focus,
    )
    check_run(sample_index, run)
    assert run.notes_examined == 1 + ScanSettings().neighbours
    assert all(focus == p.path_a for p in run.pairs)


def test_whole_vault_scan_on_the_sample_vault(runtime: Runtime, sample_index: VaultIndex) -> None:
    seen: list[tuple[int, int]] = []
    run = scan(
        sample_index,
        runtime.queued_generator(),
        judge=runtime.queued_judge(),
        mode="whole-vault",
        settings=ScanSettings(max_pairs=16),
        progress=lambda d, t, _w: seen.append((d, t)),
    )
    check_run(sample_index, run)
    assert 1 <= run.pairs_considered <= 16 and run.note_pairs_judged >= 1
    # Pairs the vault records (a tension note against a note it links to: the sample vault's
    # tension notes link both of their sides; a decision against the one it supersedes) are
    # skipped before the budget, so every pair in the budget is judged.
    assert run.note_pairs_judged == run.pairs_considered
    assert run.dropped.get("recorded", 0) >= 1
    assert run.excluded  # notes beyond the pair budget are named, with the reason
    assert seen[-1][0] == seen[-1][1]
