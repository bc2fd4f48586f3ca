"""Where does a contradicting written note pair get lost? Counts by stage of the scan.

For every held-out written note pair (``scenarios/*-notes-*.json``, ``"kind": "notes"``,
held out by topic as ``synth.heldout`` splits them) this writes the held-out notes into one
temporary vault, indexes it and runs the scan's stages in order on each contradicting pair:

1. ``not a candidate`` — the whole-vault scan never pairs the two notes (embedding
   neighbours, ``whole_vault_pairs``);
2. ``sentence filtered`` — a marked clash's sentence is not evidence in its note (split away,
   code, a lead-in, too short…);
3. ``subject gate`` — the clash's two sentences are below the judge's ``min_cosine``;
4. ``set aside`` — alignment set the clash aside before the judge (same frame, reworded,
   values agree);
5. ``over budget`` — other sentence pairs of the note pair took the judged places;
6. ``judge low`` — judged, but under ``passing`` (P(contradiction) 0.5);
7. ``note model`` — the clash passes, the note-level model does not show the pair;
8. ``shown``.

A pair with several marked clashes counts at the furthest stage any of them reaches. It also
prints the note-level AUC (contradicting vs compatible held-out pairs) and recall at
precision 0.9 for the given note-level model.

    python scripts/judge/diagnose.py [--judge FILE] [--note-model FILE] [--split val]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from judge_cache import CachedJudge  # noqa: E402
from note_model import _slug, auc, recall_at_precision  # noqa: E402
from synth import heldout, load_scenarios  # noqa: E402

from desktop.flows.alignment import align  # noqa: E402
from desktop.flows.embedding import load_embedding_model  # noqa: E402
from desktop.flows.hunter.records import ScanSettings  # noqa: E402
from desktop.flows.hunter.select import scannable, whole_vault_pairs  # noqa: E402
from desktop.flows.judging import _SET_ASIDE, NoteJudge  # noqa: E402
from desktop.vault.index import VaultIndex  # noqa: E402
from inference.judge import OnnxJudge  # noqa: E402
from inference.note_model import load_note_model  # noqa: E402
from inference.registry import resolve_model  # noqa: E402

STAGES = (
    "not a candidate",
    "sentence filtered",
    "subject gate",
    "set aside",
    "over budget",
    "judge low",
    "note model",
    "shown",
)


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))


def find_sentence(sentences, quote: str) -> int | None:
    """The index of the evidence sentence that holds ``quote`` (most shared words)."""
    want = _words(quote)
    best, best_share = None, 0.0
    for i, s in enumerate(sentences):
        have = _words(s.text)
        share = len(want & have) / max(1, min(len(want), len(have)))
        if share > best_share:
            best, best_share = i, share
    return best if best_share >= 0.8 else None


def written_pairs(split: str) -> list[dict]:
    out = []
    for sc in load_scenarios():
        if sc.get("kind") != "notes":
            continue
        if (split == "val") != heldout(sc):
            continue
        out.append(sc)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--judge", type=Path)
    p.add_argument("--note-model", type=Path, help="note-level model JSON (default: shipped)")
    p.add_argument("--split", choices=("val", "train"), default="val")
    p.add_argument("--cache", type=Path, default=ROOT / "build" / "note-model" / "scores.json")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)

    onnx = OnnxJudge(resolve_model("judge", args.judge))
    judge = CachedJudge(onnx, args.cache)
    model = load_note_model(args.note_model) if args.note_model else onnx.note_model
    embedding = load_embedding_model()
    groups = written_pairs(args.split)
    notes: dict[str, str] = {}
    pairs: list[tuple[str, str, dict]] = []
    for sc in groups:
        sid = str(sc["id"])
        na, nb = sc.get("note_a") or {}, sc.get("note_b") or {}
        a = f"w/{sid}/a/{_slug(str(na.get('title', 'a')))}.md"
        b = f"w/{sid}/b/{_slug(str(nb.get('title', 'b')))}.md"
        notes[a], notes[b] = str(na.get("body", "")), str(nb.get("body", ""))
        pairs.append((a, b, sc))

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for path, body in notes.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(body, encoding="utf-8")
        index = VaultIndex(root, embedding=embedding)
        try:
            index.update()
            scan = ScanSettings()
            eligible, _ = scannable(index, scan)
            keys, _ = whole_vault_pairs(index, eligible, scan)
        finally:
            index.close()
    candidates = {frozenset(k) for k in keys}

    nj = NoteJudge(judge, embedding, note_model=model)
    nj.prepare(notes)
    verdicts = nj.judge_pairs([(a, b) for a, b, _ in pairs])
    judge.save()
    stages: Counter[str] = Counter()
    lost: dict[str, list[str]] = {s: [] for s in STAGES}
    labels, probs = [], []
    for (a, b, sc), v in zip(pairs, verdicts, strict=True):
        clash = list(sc.get("clash") or [])
        labels.append(1 if clash else 0)
        probs.append(v.probability if v.probability is not None else 0.0)
        if not clash:
            continue
        na, nb = nj.sentences_of(a), nj.sentences_of(b)
        reached = 0
        for c in clash:
            ia = find_sentence(na.sentences, c["a"]) if na else None
            ib = find_sentence(nb.sentences, c["b"]) if nb else None
            if ia is None or ib is None:  # the clash may be written the other way round
                ia2 = find_sentence(na.sentences, c["b"]) if na else None
                ib2 = find_sentence(nb.sentences, c["a"]) if nb else None
                if ia2 is not None and ib2 is not None:
                    ia, ib = ia2, ib2
            if ia is None or ib is None:
                stage = 1
            else:
                sa, sb = na.sentences[ia], nb.sentences[ib]
                cos = float(na.vectors[ia] @ nb.vectors[ib])
                judged = [
                    sp for sp in v.sentence_pairs if sp.a.text == sa.text and sp.b.text == sb.text
                ]
                if judged:
                    stage = 5 if judged[0].contradiction < nj.settings.passing else 6
                elif cos < nj.thresholds.min_cosine:
                    stage = 2
                else:
                    al = align(sa.text, sb.text, names_a=na.names, names_b=nb.names)
                    aside = al.kind in _SET_ASIDE or (
                        al.kind == "value" and al.values == "compatible"
                    )
                    stage = 3 if aside else 4
            reached = max(reached, stage)
        if reached == 6 and nj.shown(v):
            reached = 7
        if frozenset((a, b)) not in candidates:
            reached = 0
        stages[STAGES[reached]] += 1
        lost[STAGES[reached]].append(str(sc["id"]))
    y, s = np.array(labels, dtype=float), np.array(probs)
    report = {
        "split": args.split,
        "pairs": len(pairs),
        "contradicting": int(y.sum()),
        "stages": {k: stages.get(k, 0) for k in STAGES},
        "auc_note_model": auc(s, y),
        "recall_at_precision_0.9": recall_at_precision(s, y, 0.9),
        "recall_at_precision_0.8": recall_at_precision(s, y, 0.8),
        "shown_at_threshold": {
            "contradicting": int(((s >= model.threshold) & (y == 1)).sum()),
            "compatible": int(((s >= model.threshold) & (y == 0)).sum()),
        }
        if model
        else None,
        "lost": lost,
        "scores": {
            str(sc["id"]): [label, round(prob, 4)]
            for (_, _, sc), label, prob in zip(pairs, labels, probs, strict=True)
        },
    }
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
