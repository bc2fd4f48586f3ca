"""What a whole-vault scan shows on real vaults: every shown pair, to read and count.

For each vault folder given: index it (in its own ``.antinomy/``), run the whole-vault scan
with the shipped models (descriptions off: only the judge and the note-level decision
choose what is shown), and print the notes, the note pairs judged and every shown pair
with its quotes and confidence. With ``--sample``, the bundled sample vault is scanned too
and its shown pairs are counted against ``tests/data/sample_vault_expected.json`` (known
contradictions, near misses, other pairs), and focus mode is run on each known pair's
first note.

    python tests/perf/bench_vault_scan.py [VAULT …] [--sample] [--out FILE]

Prints JSON (and writes it to ``--out``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from desktop.flows.embedding import embedding_model  # noqa: E402
from desktop.flows.hunter import ScanRun, ScanSettings, scan  # noqa: E402
from desktop.resources import ensure_sample_vault  # noqa: E402
from desktop.vault.index import VaultIndex  # noqa: E402
from inference.embedder import OnnxEmbedder  # noqa: E402
from inference.judge import OnnxJudge  # noqa: E402
from inference.llama_backend import LlamaGenerator  # noqa: E402
from inference.note_model import load_note_model  # noqa: E402
from inference.registry import resolve_model  # noqa: E402

EXPECTED = json.loads((ROOT / "tests/data/sample_vault_expected.json").read_text("utf-8"))


def shown(run: ScanRun) -> list[dict[str, Any]]:
    return [
        {
            "a": p.path_a,
            "b": p.path_b,
            "quote_a": p.quote_a,
            "quote_b": p.quote_b,
            "p": p.probability,
            "confidence": p.confidence,
        }
        for p in run.pairs
    ]


def gate(run: ScanRun) -> dict[str, int]:
    """How many sentences were evidence, and the sentence pairs past the subject gate."""
    return {
        "sentences": run.sentences,
        "sentence_pairs_judged": run.sentence_pairs_judged,
        "sentence_pairs_left_out": run.sentence_pairs_left_out,
    }


def counted(runs: list[ScanRun]) -> dict[str, Any]:
    known = {frozenset((c["note_a"], c["note_b"])) for c in EXPECTED["contradictions"]}
    near = {frozenset((c["note_a"], c["note_b"])) for c in EXPECTED["near_misses"]}
    keys = {p.key() for r in runs for p in r.pairs}
    return {
        "known": f"{len(keys & known)}/{len(known)}",
        "near_misses": len(keys & near),
        "others": len(keys - known - near),
        "found": sorted(" ↔ ".join(sorted(k)) for k in keys & known),
        "other_pairs": sorted(" ↔ ".join(sorted(k)) for k in keys - known - near),
        "near_pairs": sorted(" ↔ ".join(sorted(k)) for k in keys & near),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("vaults", type=Path, nargs="*")
    ap.add_argument("--sample", action="store_true")
    ap.add_argument("--judge", type=Path, help="another judge ONNX file")
    ap.add_argument("--note-model", type=Path, help="another note-level model (JSON)")
    ap.add_argument("--no-note-model", action="store_true", help="decide on the best pair")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    gen = LlamaGenerator(resolve_model("llm", None))
    emb = embedding_model(OnnxEmbedder(resolve_model("embedder", None)))
    judge = OnnxJudge(resolve_model("judge", args.judge))
    if args.note_model:
        judge.note_model = load_note_model(args.note_model)
    if args.no_note_model:
        judge.note_model = None
    settings = ScanSettings(describe=0)
    out: dict[str, Any] = {
        "judge": judge.model_id,
        "note_model": judge.note_model.model_id if judge.note_model else None,
        "vaults": {},
    }
    for vault in args.vaults:
        index = VaultIndex(vault, embedding=emb)
        index.update()
        notes = len(index.notes())
        t = time.perf_counter()
        run = scan(index, gen, judge=judge, mode="whole-vault", settings=settings)
        index.close()
        out["vaults"][vault.name] = {
            "notes": notes,
            "note_pairs_judged": run.note_pairs_judged,
            **gate(run),
            "seconds": round(time.perf_counter() - t, 1),
            "shown": len(run.pairs),
            "shown_per_50_notes": round(50 * len(run.pairs) / max(1, notes), 2),
            "dropped": run.dropped,
            "pairs": shown(run),
        }
    if args.sample:
        root = ensure_sample_vault(Path(tempfile.mkdtemp(prefix="bench-vault-scan-")))
        index = VaultIndex(root, embedding=emb)
        index.update()
        whole = scan(index, gen, judge=judge, mode="whole-vault", settings=settings)
        focus = [
            scan(index, gen, judge=judge, mode="focus", focus=c["note_a"], settings=settings)
            for c in EXPECTED["contradictions"]
        ]
        index.close()
        out["sample"] = {
            "whole_vault": counted([whole])
            | {"note_pairs_judged": whole.note_pairs_judged, **gate(whole), "pairs": shown(whole)},
            "focus_on_known": counted(focus),
        }
    gen.close()
    text = json.dumps(out, indent=1, ensure_ascii=False)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
