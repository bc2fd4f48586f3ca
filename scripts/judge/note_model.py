"""Train and calibrate the note-level decision (``models/judge/note-model.json``).

The judge scores sentence pairs; the scan decides at note level with a logistic
regression over each note pair's features (``desktop.flows.judging.note_features``),
computed exactly as a scan computes them (:class:`~desktop.flows.judging.NoteJudge`:
prose only, boilerplate and alignment set aside, the judge on what remains). Labelled
note pairs, none from the sample vault or the documentation vaults we check on:

* ``written`` — the hand-written note pairs (``scenarios/*-notes-*.json``): a pair with a
  marked clash contradicts, one without is compatible on the same subject;
* ``typed`` — the typed sentence pairs (``scenarios/*-pairs-*.json``) as two one-line
  notes: contradictions against hard negatives (same template, compatible numbers, a rule
  and its exception, a plan and its outcome, near-duplicates);
* ``scenario`` — notes built from the scenarios (a rule against a break, against its
  keeps and allowed cases, against another scenario);
* ``vault`` — every note pair a whole-vault scan judges in real documentation vaults
  (``--vault DIR``, repositories nobody here wrote), labelled compatible unless listed
  in ``--vault-labels`` (a JSON list of ``[path_a, path_b]`` read and found to clash).

20 % of the written and typed data is held out by topic (``synth.heldout``) and never
trained on; the report gives the held-out AUC (contradicting vs compatible note pairs on
one subject), recall at precision 0.9, and what a threshold shows on the vault pairs.
The shown threshold is the lowest probability at which the vault pairs pass at most
``--vault-rate`` per note (1 in 50 notes: the false-alarm budget of a scan) *and* the
held-out typed pairs reach ``--precision``; ``high`` is where that precision reaches 0.9.

    python scripts/judge/note_model.py --vault V1 --vault V2 … [--write]

Runs in the app's environment (NumPy; no PyTorch). ``--write`` saves the model and pins
its sha256 in ``models/manifest.toml``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from judge_cache import CachedJudge  # noqa: E402
from prepare import split_of  # noqa: E402
from synth import heldout, load_scenarios  # noqa: E402
from train import auc as train_auc  # noqa: E402

from desktop.flows.embedding import load_embedding_model  # noqa: E402
from desktop.flows.hunter.records import ScanSettings  # noqa: E402
from desktop.flows.hunter.select import scannable, shown_candidates, whole_vault_pairs  # noqa: E402
from desktop.flows.judging import (  # noqa: E402
    FEATURES,
    JudgingSettings,
    NoteJudge,
    NotePairVerdict,
    frame_counts,
)
from desktop.vault.index import NoteSummary, VaultIndex  # noqa: E402
from inference.judge import OnnxJudge  # noqa: E402
from inference.note_model import NoteModel  # noqa: E402
from inference.registry import resolve_model  # noqa: E402

MODEL_FILE = ROOT / "models" / "judge" / "note-model.json"

#: (source, split, label, features)
Row = tuple[str, str, int, dict[str, float]]


def _slug(text: str) -> str:
    return re.sub(r"[^\w -]+", "", text).strip()[:60] or "note"


def synthetic_rows(judge: OnnxJudge | CachedJudge, embedding, rng: random.Random) -> list[Row]:
    """Features of every written, typed and scenario note pair (no model at note level)."""
    notes: dict[str, str] = {}
    pairs: list[tuple[str, str, str, str, int]] = []  # source, split, a, b, label
    for sc in load_scenarios():
        sid = str(sc.get("id"))
        kind = sc.get("kind")
        split = "val" if heldout(sc) else "train"
        if kind == "notes":
            na, nb = sc.get("note_a") or {}, sc.get("note_b") or {}
            a = f"w/{sid}/a/{_slug(str(na.get('title', 'a')))}.md"
            b = f"w/{sid}/b/{_slug(str(nb.get('title', 'b')))}.md"
            notes[a], notes[b] = str(na.get("body", "")), str(nb.get("body", ""))
            pairs.append(("written", split, a, b, 1 if sc.get("clash") else 0))
        elif kind == "pairs":
            for n, item in enumerate(sc.get("pairs") or []):
                label = {"contradiction": 1, "compatible": 0, "entailment": 0}.get(
                    str(item.get("label"))
                )
                if label is None:
                    continue
                a = f"t/{sid}/{n}/a/{_slug(str(item.get('title_a') or 'a'))}.md"
                b = f"t/{sid}/{n}/b/{_slug(str(item.get('title_b') or 'b'))}.md"
                notes[a], notes[b] = str(item["a"]), str(item["b"])
                pairs.append(("typed", split, a, b, label))
        elif kind == "scenario":
            split = split_of(f"synth:{sid}", 0.2)
            rules, breaks = list(sc.get("rules") or []), list(sc.get("breaks") or [])
            related = list(sc.get("related") or []) or [""]
            near = list(sc.get("keeps") or []) + list(sc.get("allowed") or [])
            if not rules:
                continue
            base = f"s/{sid}/rule.md"
            notes[base] = " ".join([rules[0], related[0]])
            for k, br in enumerate(breaks):
                other = f"s/{sid}/break{k}.md"
                notes[other] = " ".join([br, related[-1]])
                pairs.append(("scenario", split, base, other, 1))
            if near:
                other = f"s/{sid}/near.md"
                notes[other] = " ".join(near)
                pairs.append(("scenario", split, base, other, 0))
    nj = NoteJudge(judge, embedding, note_model=None)
    nj.prepare(notes)
    verdicts = nj.judge_pairs([(a, b) for _, _, a, b, _ in pairs])
    return [
        (src, split, label, _features(v))
        for (src, split, _, _, label), v in zip(pairs, verdicts, strict=True)
    ]


def _features(verdict) -> dict[str, float]:
    if verdict.features:
        return dict(verdict.features)
    return {name: 0.0 for name in FEATURES}  # nothing judged: every feature is 0


def judge_vault(
    judge: OnnxJudge | CachedJudge, embedding, vault: Path, settings: JudgingSettings | None = None
) -> tuple[list[tuple[str, str]], list[NotePairVerdict], dict[str, NoteSummary], int]:
    """Index ``vault`` and judge the note pairs its whole-vault scan judges, as the scan
    does (boilerplate counted over the whole vault, titles as names, no note-level model):
    ``(pairs, verdicts, summaries, notes)``."""
    index = VaultIndex(vault, embedding=embedding)
    try:
        index.update()
        scan = ScanSettings()
        eligible, _ = scannable(index, scan)
        keys, _ = whole_vault_pairs(index, eligible, scan)
        frames = frame_counts((p, (t, *al), body) for p, t, al, body in index.bodies())
        summaries = index.summaries(eligible)
    finally:
        index.close()
    keys, bodies = shown_candidates(vault, keys)
    nj = NoteJudge(judge, embedding, note_model=None, frames=frames, settings=settings)
    nj.prepare(bodies, names={p: (s.title, *s.aliases) for p, s in summaries.items()})
    return keys, nj.judge_pairs(keys), summaries, len(eligible)


def vault_rows(
    judge: OnnxJudge | CachedJudge, embedding, vault: Path, clashes: set[frozenset[str]]
) -> tuple[list[Row], int]:
    """Features of every note pair a whole-vault scan judges in ``vault``."""
    keys, verdicts, _, notes = judge_vault(judge, embedding, vault)
    rows: list[Row] = []
    for (a, b), v in zip(keys, verdicts, strict=True):
        label = 1 if frozenset((a, b)) in clashes else 0
        rows.append((f"vault:{vault.name}", "vault", label, _features(v)))
    return rows, notes


def fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float = 1.0, steps: int = 50):
    """Weighted logistic regression by Newton's method, L2 on the weights (not the bias)."""
    n, d = x.shape
    xb = np.hstack([x, np.ones((n, 1))])
    beta = np.zeros(d + 1)
    reg = np.full(d + 1, l2)
    reg[-1] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-np.clip(xb @ beta, -40, 40)))
        grad = xb.T @ (w * (p - y)) + reg * beta
        hess = (xb * (w * p * (1 - p))[:, None]).T @ xb + np.diag(reg + 1e-9)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta[:-1], float(beta[-1])


#: Evidence that two notes contradict never lowers the probability, and evidence that they
#: agree never raises it: a fit that gives one of these the other sign (the written pairs'
#: traps make several clashing-looking sentence pairs common in compatible notes) leaves the
#: feature out instead, the strongest violation first, and fits again.
MORE_IS_CONTRADICTION = frozenset(
    {
        "best",
        "second",
        "passing",
        "mean_contradiction",
        "conflict_best",
        "rule_fact_best",
        "values_conflict",
        "value_conflicts",
    }
)
MORE_IS_AGREEMENT = frozenset(
    {"best_entailment", "max_entailment", "values_compatible", "value_agreements"}
)


def fit_monotone(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, features: Sequence[str], l2: float = 1.0
) -> tuple[np.ndarray, float]:
    """:func:`fit` with the signs above kept: a feature whose weight comes out the wrong way
    round gets weight 0."""
    keep = list(range(x.shape[1]))
    while True:
        weights, bias = fit(x[:, keep], y, w, l2=l2)
        wrong = [
            (abs(v), k)
            for v, k in zip(weights, keep, strict=True)
            if (features[k] in MORE_IS_CONTRADICTION and v < 0)
            or (features[k] in MORE_IS_AGREEMENT and v > 0)
        ]
        if not wrong:
            full = np.zeros(x.shape[1])
            full[keep] = weights
            return full, bias
        keep.remove(max(wrong)[1])


def matrix(rows: Sequence[Row]) -> tuple[np.ndarray, np.ndarray]:
    x = np.array([[r[3].get(f, 0.0) for f in FEATURES] for r in rows], dtype=float)
    y = np.array([r[2] for r in rows], dtype=float)
    return x, y


def auc(scores: np.ndarray, labels: np.ndarray) -> float | None:
    pos = [bool(v) for v in labels]
    if all(pos) or not any(pos):
        return None
    return round(train_auc([float(s) for s in scores], pos), 3)


def recall_at_precision(scores: np.ndarray, labels: np.ndarray, precision: float) -> dict:
    order = np.argsort(-scores)
    tp = fp = 0
    best = {"threshold": None, "recall": 0.0}
    total = int(labels.sum())
    for i in order:
        if labels[i]:
            tp += 1
        else:
            fp += 1
        if tp / (tp + fp) >= precision and total:
            best = {"threshold": round(float(scores[i]), 4), "recall": round(tp / total, 3)}
    return best


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--judge", type=Path, help="judge ONNX (default: the shipped one)")
    p.add_argument("--vault", type=Path, action="append", default=[])
    p.add_argument("--vault-labels", type=Path, help="JSON list of [path_a, path_b] that clash")
    p.add_argument("--precision", type=float, default=0.8, help="held-out typed precision")
    p.add_argument("--vault-rate", type=float, default=0.02, help="shown pairs per vault note")
    p.add_argument("--l2", type=float, default=1.0)
    p.add_argument(
        "--source-weight",
        action="append",
        default=[],
        metavar="SOURCE=W",
        help="weigh a source's rows W times (written, typed, scenario, vault)",
    )
    p.add_argument("--cache", type=Path, default=ROOT / "build" / "note-model" / "rows.json")
    p.add_argument("--refresh", action="store_true", help="recompute the features")
    p.add_argument(
        "--monotone",
        action="store_true",
        help="evidence of a clash never lowers the probability, evidence of agreement never "
        "raises it (tried, not shipped: see the model card)",
    )
    p.add_argument("--write", action="store_true", help="save the model, pin it in the manifest")
    p.add_argument("--out", type=Path, help="save the model here instead (manifest untouched)")
    args = p.parse_args(argv)

    judge = CachedJudge(
        OnnxJudge(resolve_model("judge", args.judge)), args.cache.parent / "scores.json"
    )
    embedding = load_embedding_model()
    data = hashlib.sha256()
    for f in sorted((ROOT / "scripts" / "judge" / "scenarios").glob("*.json")):
        data.update(f.read_bytes())
    if args.vault_labels:
        data.update(args.vault_labels.read_bytes())
    parts = [
        judge.model_id,
        embedding.model_id,
        [str(v) for v in args.vault],
        data.hexdigest(),
        list(FEATURES),
    ]
    key = hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]
    cached = json.loads(args.cache.read_text()) if args.cache.is_file() else {}
    if cached.get("key") == key and not args.refresh:
        rows = [tuple(r) for r in cached["rows"]]
        vault_notes = cached["vault_notes"]
    else:
        clashes: set[frozenset[str]] = set()
        if args.vault_labels:
            clashes = {frozenset(x) for x in json.loads(args.vault_labels.read_text())}
        rows = synthetic_rows(judge, embedding, random.Random(0))
        vault_notes = 0
        for vault in args.vault:
            more, notes = vault_rows(judge, embedding, vault, clashes)
            rows += more
            vault_notes += notes
        judge.save()
        args.cache.parent.mkdir(parents=True, exist_ok=True)
        args.cache.write_text(json.dumps({"key": key, "rows": rows, "vault_notes": vault_notes}))

    train = [r for r in rows if r[1] in ("train", "vault")]
    val = [r for r in rows if r[1] == "val" and r[0] in ("written", "typed")]
    vault = [r for r in rows if r[1] == "vault"]
    x, y = matrix(train)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    # Each source weighs as much in total as the written note pairs, whatever its size;
    # within it, both labels weigh alike.
    boost = {k: float(v) for k, v in (x.split("=", 1) for x in args.source_weight)}
    w = np.ones(len(train))
    sources = sorted({r[0].split(":")[0] for r in train})
    for src in sources:
        for lab in (0, 1):
            sel = np.array([r[0].split(":")[0] == src and r[2] == lab for r in train])
            if sel.any():
                w[sel] = 1.0 / sel.sum() / (2 * len(sources)) * len(train) * boost.get(src, 1.0)
    if args.monotone:
        weights, bias = fit_monotone((x - mean) / scale, y, w, FEATURES, l2=args.l2)
    else:
        weights, bias = fit((x - mean) / scale, y, w, l2=args.l2)
    model = NoteModel(
        tuple(FEATURES),
        tuple(float(v) for v in mean),
        tuple(float(v) for v in scale),
        tuple(float(v) for v in weights),
        bias,
        threshold=0.5,
        high=0.9,
    )

    def scores(rs: Sequence[Row]) -> np.ndarray:
        return np.array([model.probability(r[3]) for r in rs])

    def best_pair(rs: Sequence[Row]) -> np.ndarray:
        return np.array([r[3].get("best", 0.0) for r in rs])

    report: dict[str, object] = {
        "rows": {
            s: sum(r[0].split(":")[0] == s for r in rows)
            for s in sorted({r[0].split(":")[0] for r in rows})
        }
    }
    sv, yv = scores(val), np.array([r[2] for r in val], dtype=float)
    report["heldout"] = {}
    for src in ("written", "typed"):
        sel = np.array([r[0] == src for r in val])
        if sel.any():
            report["heldout"][src] = {
                "pairs": int(sel.sum()),
                "contradicting": int(yv[sel].sum()),
                "auc_note_model": auc(sv[sel], yv[sel]),
                "auc_best_sentence_pair": auc(
                    best_pair([r for r, s in zip(val, sel, strict=True) if s]), yv[sel]
                ),
                "recall_at_precision": recall_at_precision(sv[sel], yv[sel], args.precision),
                "recall_at_precision_0.9": recall_at_precision(sv[sel], yv[sel], 0.9),
            }
    # The shown threshold: the lowest probability at which the real vaults' note pairs (all
    # compatible but the ones --vault-labels names) pass at most --vault-rate per note, and
    # the held-out typed pairs reach --precision; "high": held-out typed precision 0.9.
    sva = scores(vault)
    vault_false = np.array([r[2] for r in vault]) == 0
    allowed = args.vault_rate * max(1, vault_notes)
    typed = np.array([r[0] == "typed" for r in val])
    st, yt = sv[typed], yv[typed]

    def precision(t: float) -> float:
        shown = st >= t
        return float(yt[shown].mean()) if shown.any() else 1.0

    candidates = sorted(set(np.round(np.concatenate([sv, sva, [0.5]]), 4)))
    threshold = next(
        (
            float(t)
            for t in candidates
            if precision(t) >= args.precision and int(((sva >= t) & vault_false).sum()) <= allowed
        ),
        0.99,
    )
    high = next((float(t) for t in candidates if t >= threshold and precision(t) >= 0.9), threshold)
    model = NoteModel(
        model.features,
        model.mean,
        model.scale,
        model.weights,
        model.bias,
        threshold=round(threshold, 4),
        high=round(max(high, threshold), 4),
    )
    sv = scores(val)
    report["threshold"] = model.threshold
    report["high"] = model.high
    shown = sv >= model.threshold
    report["heldout_at_threshold"] = {
        "contradicting_shown": f"{int((shown & (yv == 1)).sum())}/{int(yv.sum())}",
        "compatible_shown": f"{int((shown & (yv == 0)).sum())}/{int((yv == 0).sum())}",
    }
    report["vault_shown_at_threshold"] = {
        "pairs": len(vault),
        "notes": vault_notes,
        "shown": int((scores(vault) >= model.threshold).sum()),
    }
    report["weights"] = {f: round(w_, 3) for f, w_ in zip(FEATURES, model.weights, strict=True)}
    print(json.dumps(report, indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(model.to_json(), indent=1) + "\n", encoding="utf-8")
    if args.write:
        text = json.dumps(model.to_json(), indent=1) + "\n"
        MODEL_FILE.write_text(text, encoding="utf-8")
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        manifest = ROOT / "models" / "manifest.toml"
        m = manifest.read_text(encoding="utf-8")
        entry = f'note_model = {{ file = "judge/{MODEL_FILE.name}", sha256 = "{digest}" }}'
        if "note_model = {" in m:
            m = re.sub(r"note_model = \{[^}]*\}", entry, m)
        else:
            m = m.replace(
                'labels = ["contradiction", "entailment", "neutral"]\n',
                'labels = ["contradiction", "entailment", "neutral"]\n' + entry + "\n",
                1,
            )
        manifest.write_text(m, encoding="utf-8")
        print(f"wrote {MODEL_FILE} (sha256 {digest[:12]}…) and pinned it in {manifest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
