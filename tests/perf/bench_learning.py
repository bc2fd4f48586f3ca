"""What the scan learns from review decisions: simulated review sessions, and a real vault.

* **Sessions** (always): the labelled note pairs held out of the note-level model's
  training (``scripts/judge/scenarios/*-notes-*.json`` and ``*-pairs-*.json``, the
  held-out split of ``synth.heldout``), judged by the shipped judge exactly as a scan
  judges note pairs. Each session splits them in two halves by topic at random; the user
  reviews, in a random order, a random number of the pairs the shipped calibration shows in
  the first half (dismisses the compatible ones, elevates the contradicting ones); this
  vault's calibration is fitted to those decisions and compared with the shipped one on
  the second half: errors (false pairs shown + contradictions hidden), side by side. The
  sample vault is never used.
* **Vault** (``--vault DIR``, optional ``--judge ONNX``): every note pair a whole-vault scan
  of DIR judges (nobody labelled them: all count as false), and what dismissing the first
  N pairs shown does to the others, for N = 1…15 — how many decisions it takes.

Prints one JSON object. Run:
``python tests/perf/bench_learning.py [--reviews 100] [--vault /work/vaults/jekyll
--judge models/judge/guard-int8.onnx]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts" / "judge"))

from synth import group_of, heldout, load_scenarios  # noqa: E402

from desktop.flows.embedding import load_embedding_model  # noqa: E402
from desktop.flows.hunter.calibrate import (  # noqa: E402
    Calibration,
    Example,
    LearningSettings,
    calibrate,
    threshold_prior,
)
from desktop.flows.judging import NoteJudge  # noqa: E402
from inference.judge import OnnxJudge  # noqa: E402
from inference.note_model import NoteModel  # noqa: E402
from inference.registry import resolve_model  # noqa: E402

#: (group, label, features)
Row = tuple[str, int, dict[str, float]]


def _slug(text: str) -> str:
    return re.sub(r"[^\w -]+", "", text).strip()[:60] or "note"


def heldout_rows(judge: OnnxJudge, cache: Path) -> list[Row]:
    """Features of every held-out written and typed note pair, as a scan computes them."""
    scenarios = [sc for sc in load_scenarios() if sc.get("kind") in ("notes", "pairs")]
    scenarios = [sc for sc in scenarios if heldout(sc)]
    key = hashlib.sha256(
        json.dumps([judge.model_id, scenarios], sort_keys=True).encode()
    ).hexdigest()[:16]
    if cache.is_file():
        data = json.loads(cache.read_text())
        if data.get("key") == key:
            return [tuple(r) for r in data["rows"]]  # type: ignore[misc]
    notes: dict[str, str] = {}
    pairs: list[tuple[str, str, str, int]] = []
    for sc in scenarios:
        sid = str(sc.get("id"))
        if sc["kind"] == "notes":
            na, nb = sc.get("note_a") or {}, sc.get("note_b") or {}
            a = f"w/{sid}/a/{_slug(str(na.get('title', 'a')))}.md"  # type: ignore[union-attr]
            b = f"w/{sid}/b/{_slug(str(nb.get('title', 'b')))}.md"  # type: ignore[union-attr]
            notes[a] = str(na.get("body", ""))  # type: ignore[union-attr]
            notes[b] = str(nb.get("body", ""))  # type: ignore[union-attr]
            pairs.append((group_of(sc), a, b, 1 if sc.get("clash") else 0))
            continue
        for n, item in enumerate(sc.get("pairs") or []):  # type: ignore[attr-defined]
            label = {"contradiction": 1, "compatible": 0, "entailment": 0}.get(
                str(item.get("label"))
            )
            if label is None:
                continue
            a = f"t/{sid}/{n}/a/{_slug(str(item.get('title_a') or 'a'))}.md"
            b = f"t/{sid}/{n}/b/{_slug(str(item.get('title_b') or 'b'))}.md"
            notes[a], notes[b] = str(item["a"]), str(item["b"])
            pairs.append((group_of(sc), a, b, label))
    nj = NoteJudge(judge, load_embedding_model(), note_model=None)
    nj.prepare(notes)
    verdicts = nj.judge_pairs([(a, b) for _, a, b, _ in pairs])
    rows: list[Row] = [
        (group, label, dict(v.features))
        for (group, _, _, label), v in zip(pairs, verdicts, strict=True)
    ]
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"key": key, "rows": rows}))
    return rows


def shows(prior: NoteModel, features: dict[str, float]) -> bool:
    return bool(features) and prior.probability(features) >= prior.threshold


def sessions(rows: list[Row], prior: NoteModel, n: int, seed: int, longest: int) -> dict[str, Any]:
    """``n`` review sessions; errors of the vault's calibration minus the shipped one's on
    the half the user did not review."""
    rng = random.Random(seed)
    groups = sorted({r[0] for r in rows})
    diffs: list[int] = []
    statuses: dict[str, int] = {}
    decisions: list[int] = []
    for _ in range(n):
        mine = set(rng.sample(groups, len(groups) // 2))
        review = [r for r in rows if r[0] in mine]
        held = [r for r in rows if r[0] not in mine]
        shown = [r for r in review if shows(prior, r[2])]
        k = min(rng.randint(1, longest), len(shown))
        picked = rng.sample(shown, k)  # a random order of decisions on shown pairs
        cal = calibrate(prior, [Example(r[2], bool(r[1])) for r in picked])
        statuses[cal.status] = statuses.get(cal.status, 0) + 1
        decisions.append(k)

        def errors(c: Calibration | None, held: list[Row] = held) -> int:
            return sum(
                (c.shows(r[2]) if c is not None else shows(prior, r[2])) != bool(r[1]) for r in held
            )

        diffs.append(errors(cal) - errors(None))
    return {
        "sessions": n,
        "decisions_per_session": [min(decisions), max(decisions)],
        "held_out_pairs": len(rows) // 2,
        "calibration": statuses,
        "errors_vault_minus_shipped": {
            "worst": max(diffs),
            "best": min(diffs),
            "mean": round(sum(diffs) / len(diffs), 3),
        },
        "never_worse_by_more_than_one_pair": max(diffs) <= 1,
    }


def vault_curve(vault: Path, judge_path: Path | None) -> dict[str, Any]:
    """Dismissing the first N pairs a whole-vault scan of ``vault`` shows (all false)."""
    from note_model import judge_vault  # scripts/judge: the scan's own note pairs

    judge = OnnxJudge(resolve_model("judge", judge_path))
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:  # indexed in a copy: the vault stays as it is
        copy = Path(tmp) / vault.name
        shutil.copytree(vault, copy, ignore=shutil.ignore_patterns(".antinomy"))
        keys, verdicts, _, notes = judge_vault(judge, load_embedding_model(), copy)
    prior = judge.note_model or threshold_prior(judge.thresholds)
    feats = [dict(v.features) for v in verdicts]
    shown = sorted(
        (i for i, f in enumerate(feats) if shows(prior, f)),
        key=lambda i: -prior.probability(feats[i]),
    )
    curve = []
    for n in range(1, 16):
        dismissed = shown[:n]
        cal = calibrate(prior, [Example(feats[i], False) for i in dismissed])
        left = [i for i in shown[n:] if cal.shows(feats[i])]
        curve.append({"dismissed": n, "calibration": cal.status, "false_shown_after": len(left)})
    return {
        "vault": str(vault),
        "judge": judge.model_id,
        "notes": notes,
        "note_pairs": len(keys),
        "false_shown_first": len(shown),
        "seconds": round(time.perf_counter() - t0, 1),
        "curve": curve,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reviews", type=int, default=100, help="simulated review sessions")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--longest", type=int, default=60, help="most decisions in a session")
    p.add_argument("--vault", type=Path, help="a documentation vault for the decisions curve")
    p.add_argument("--judge", type=Path, help="the judge for --vault (default: shipped)")
    p.add_argument("--cache", type=Path, default=ROOT / "build" / "learning" / "heldout.json")
    args = p.parse_args(argv)
    judge = OnnxJudge(resolve_model("judge", None))
    assert judge.note_model is not None, "the shipped judge ships its note-level model"
    t0 = time.perf_counter()
    rows = heldout_rows(judge, args.cache)
    out: dict[str, Any] = {
        "settings": LearningSettings().__dict__,
        "heldout": {
            "pairs": len(rows),
            "contradicting": sum(r[1] for r in rows),
            "shown_by_shipped": sum(shows(judge.note_model, r[2]) for r in rows),
            "seconds_to_judge": round(time.perf_counter() - t0, 1),
        },
        "sessions": sessions(rows, judge.note_model, args.reviews, args.seed, args.longest),
    }
    if args.vault:
        out["vault"] = vault_curve(args.vault, args.judge)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
