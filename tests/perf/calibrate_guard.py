"""Calibrate the guard's threshold on realistic tool calls against the sample vault.

For every case in tests/perf/guard_cases.py: the summary the hook client
builds, embedded with the shipped embedder, against the sample vault's
standing decisions, in three representations of a decision:

* ``statement`` — title + ``## Decision`` section (what the guard uses);
* ``note``      — the whole note, chunked and pooled as the vault index does;
* ``title``     — the title alone.

Prints JSON: per representation, the cosine of each case with its own decision
and the best cosine of unrelated cases with any decision (quantiles), and for
candidate thresholds how many contradicting / related / unrelated calls would
warn, and whether the right decision is the top hit.

Then the guard as it runs with the judge (``judged``): for each case the real
:meth:`Guard.decide` (cosine of the summary picks the nearest decisions, the judge
reads what the change says — a file change's new text, a Bash call's summary —
against their sentences), in a fresh session, at the judge's calibrated
threshold and at a few others — calls against a decision warned (target ≥ 12
of 19), unrelated calls warned (target 0), calls that respect a decision warned
(target ≤ 1), the superseded ADR-0003 never cited. Run:
``python tests/perf/calibrate_guard.py [--set cal|sample] [--judge FILE]`` (~20 s; default:
the guard's own judge; ``--judge`` tries another judge ONNX file, e.g. a newly trained one,
at its own manifest thresholds or the shipped ones).

``--set cal`` (the default) runs the calls of tests/perf/guard_cal_cases.py against the
decisions of tests/data/guard-cal-vault/: the set the guard's threshold and judge are
chosen on. ``--set sample`` runs tests/perf/guard_cases.py on the sample vault: a test
set, measured once with what the calibration set chose, never tuned on.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.flows.embedding import load_embedding_model
from desktop.flows.guard import (
    Activation,
    Guard,
    GuardSettings,
    save_guard_settings,
    standing_decisions,
)
from desktop.flows.guard.change import statements_of
from desktop.resources import sample_vault_source
from desktop.service.hook import summarize
from desktop.vault.index import VaultIndex
from desktop.vault.vectors import embed_notes
from inference.judge import OnnxJudge
from inference.registry import resolve_model
from tests.perf import guard_cal_cases, guard_cases
from tests.perf.guard_cases import Case

#: The calibration set (chosen on) and the sample vault's cases (the test set).
CAL_VAULT = Path(__file__).resolve().parents[1] / "data" / "guard-cal-vault"


def _cal_vault() -> Path:
    return CAL_VAULT


SETS: dict[str, tuple[Callable[[], Path], Callable[[], list[Case]]]] = {
    "cal": (_cal_vault, guard_cal_cases.cases),
    "sample": (sample_vault_source, guard_cases.cases),
}

THRESHOLDS = [0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.82]


def quantiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    arr = np.asarray(values)
    return {
        "min": round(float(arr.min()), 3),
        "p25": round(float(np.quantile(arr, 0.25)), 3),
        "median": round(float(np.median(arr)), 3),
        "p75": round(float(np.quantile(arr, 0.75)), 3),
        "max": round(float(arr.max()), 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--judge", type=Path, help="a judge ONNX file (default: the shipped one)")
    ap.add_argument("--set", choices=sorted(SETS), default="cal", help="the cases to run")
    ap.add_argument(
        "--thresholds", type=float, nargs="*", default=[], help="more guard thresholds to try"
    )
    args = ap.parse_args()
    vault_source, cases = SETS[args.set]
    tmp = Path(tempfile.mkdtemp(prefix="antinomy-calibrate-"))
    try:
        vault = tmp / "vault"
        shutil.copytree(vault_source(), vault)
        model = load_embedding_model()
        index = VaultIndex(vault)
        index.update()
        decisions = standing_decisions(index, include_principles=False)
        ids = [d.id for d in decisions]
        notes = [index.note(d.path) for d in decisions]
        reps = {
            "statement": model.embed([d.text for d in decisions]),
            "note": embed_notes(model, [(n.title, n.body) for n in notes if n is not None]),
            "title": model.embed([d.title for d in decisions]),
        }
        all_cases = cases()
        summaries = [summarize(tool, data) for _, _, tool, data in all_cases]
        vectors = model.embed(summaries)
        report: dict[str, Any] = {
            "decisions": ids,
            "cases": {
                label: sum(1 for c in all_cases if c[0] == label)
                for label in ("contradicts", "related", "unrelated", "superseded")
            },
        }
        for name, matrix in reps.items():
            scores = vectors @ matrix.T  # (cases, decisions)
            own: dict[str, list[float]] = {"contradicts": [], "related": []}
            best_any: dict[str, list[float]] = {"contradicts": [], "related": [], "unrelated": []}
            top_right = {"contradicts": 0, "related": 0}
            for (label, ident, _, _), row in zip(all_cases, scores, strict=True):
                if label in ("contradicts", "related"):
                    own[label].append(float(row[ids.index(ident)]))
                    top_right[label] += int(ids[int(np.argmax(row))] == ident)
                if label in best_any:
                    best_any[label].append(float(row.max()))
            table = {}
            for t in THRESHOLDS:
                table[str(t)] = {
                    label: sum(1 for v in best_any[label] if v >= t) for label in best_any
                }
            report[name] = {
                "own_decision": {k: quantiles(v) for k, v in own.items()},
                "best_any_decision": {k: quantiles(v) for k, v in best_any.items()},
                "top_hit_is_own_decision": top_right,
                "would_warn_at": table,
            }
        worst = []
        stmt = vectors @ reps["statement"].T
        for (label, ident, _tool, _), row, summary in zip(all_cases, stmt, summaries, strict=True):
            j = int(np.argmax(row))
            worst.append(
                {
                    "label": label,
                    "own": ident,
                    "top": ids[j],
                    "score": round(float(row[j]), 3),
                    "summary": summary[:80],
                }
            )
        report["statement_cases"] = sorted(worst, key=lambda r: -r["score"])
        report["judged"] = judged(
            vault, index, model, all_cases, summaries, args.judge, args.thresholds
        )
        print(json.dumps(report, indent=1))
        index.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def judged(
    vault: Path,
    index: VaultIndex,
    model: Any,
    all_cases: list[Any],
    summaries: list[str],
    judge_file: Path | None = None,
    more_thresholds: list[float] | None = None,
) -> dict[str, Any]:
    judge = OnnxJudge(resolve_model("judge", judge_file, role="guard"))
    out: dict[str, Any] = {"judge": judge.model_id, "calibrated": judge.thresholds.guard}
    vectors = model.embed(summaries)
    # What the judge reads of each call (as Guard.check chooses it), and its vectors.
    said = [statements_of(tool, s) for (_, _, tool, _), s in zip(all_cases, summaries, strict=True)]
    reader = Guard(vault, index=index, embed=model.embed, model_id=model.model_id)
    reader.refresh()
    said = [
        s if s == (summary,) else reader.statements_to_embed(s)
        for s, summary in zip(said, summaries, strict=True)
    ]
    texts = sorted({t for statements in said for t in statements})
    embedded = dict(zip(texts, model.embed(texts), strict=True)) if texts else {}
    said_vectors = [
        np.asarray([embedded[t] for t in statements], dtype=np.float32).reshape(
            -1, vectors.shape[1]
        )
        for statements in said
    ]
    by_threshold: dict[str, Any] = {}
    tried = {0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, *(more_thresholds or ())}
    for t in sorted(tried | {round(judge.thresholds.guard, 3)}):
        save_guard_settings(vault, GuardSettings(enabled=True, judge_threshold=t))
        guard = Guard(vault, index=index, embed=model.embed, model_id=model.model_id)
        guard.refresh()
        counts = {"contradicts": 0, "related": 0, "unrelated": 0, "superseded": 0}
        right = wrong_decision = cited_superseded = 0
        cases_out = []
        for n, ((label, ident, tool, _), vector, summary) in enumerate(
            zip(all_cases, vectors, summaries, strict=True)
        ):
            verdict = guard.decide(
                vector=vector,
                session_id=f"calibrate-{t}-{n}",
                activation=Activation(True, "warn", 0.55),
                summary=summary,
                judge=judge,
                statements=said[n],
                statement_vectors=said_vectors[n],
            )
            warned = verdict.verdict == "warn"
            counts[label] += int(warned)
            cited = verdict.decision.id if verdict.decision else None
            if warned and label == "contradicts":
                right += int(cited == ident)
                wrong_decision += int(cited != ident)
            if warned and cited == "ADR-0003":
                cited_superseded += 1
            cases_out.append(
                {
                    "label": label,
                    "own": ident,
                    "tool": tool,
                    "warned": warned,
                    "cited": cited,
                    "p": round(verdict.score or 0.0, 3),
                    "summary": summary[:70],
                    "judged": [t[:60] for t in said[n]] if tool != "Bash" else None,
                }
            )
        by_threshold[str(t)] = {
            "warned": counts,
            "contradicts_citing_own_decision": right,
            "contradicts_citing_another": wrong_decision,
            "cited_superseded_adr_0003": cited_superseded,
        }
        if t == round(judge.thresholds.guard, 3):
            out["cases_at_calibrated"] = cases_out
    out["by_threshold"] = by_threshold
    return out


if __name__ == "__main__":
    main()
