"""Mine hard negatives: what today's judge flags in real documentation vaults.

Runs the whole-vault scan's judging (prose only, boilerplate and alignment set aside, the
shipped judge) over each vault folder given and writes every judged sentence pair whose
P(contradiction) reaches ``--min`` to a JSON-lines file, strongest first, with the two
notes' titles. A person (or a helper) then reads each line and labels it; the labelled
pairs become ``"kind": "pairs"`` groups (``scenarios/en-mined-*.json``) with the vault
as their topic, so a vault's pairs are all in training or all held out.

    python scripts/judge/mine.py VAULT… --out build/mined.jsonl [--min 0.5]

Never run it on the vaults we check on (the sample vault, npm's documentation, Obsidian's
help vault, the tldr pages, and the three documentation vaults in docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from note_model import judge_vault  # noqa: E402

from desktop.flows.embedding import load_embedding_model  # noqa: E402
from desktop.flows.judging import JudgingSettings  # noqa: E402
from inference.judge import OnnxJudge  # noqa: E402
from inference.registry import resolve_model  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("vaults", type=Path, nargs="+")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--min", type=float, default=0.5)
    p.add_argument("--per-note-pair", type=int, default=2)
    args = p.parse_args(argv)
    judge = OnnxJudge(resolve_model("judge", None))
    embedding = load_embedding_model()
    rows: list[dict[str, object]] = []
    for vault in args.vaults:
        keys, verdicts, summaries, _ = judge_vault(
            judge, embedding, vault, JudgingSettings(pairs_per_note_pair=8)
        )
        seen: set[tuple[str, str]] = set()
        for (a, b), verdict in zip(keys, verdicts, strict=True):
            for pair in verdict.sentence_pairs[: args.per_note_pair]:
                if pair.contradiction < args.min:
                    break
                key = (pair.a.text, pair.b.text)
                if key in seen:
                    continue
                seen.add(key)
                rows.append(
                    {
                        "vault": vault.name,
                        "title_a": summaries[a].title if a in summaries else a,
                        "title_b": summaries[b].title if b in summaries else b,
                        "a": pair.a.text,
                        "b": pair.b.text,
                        "p": round(pair.contradiction, 3),
                        "alignment": pair.alignment.kind if pair.alignment else "",
                    }
                )
        print(f"{vault.name}: {len(keys)} note pairs, {len(seen)} flagged", file=sys.stderr)
    rows.sort(key=lambda r: -float(r["p"]))  # type: ignore[arg-type]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} pairs to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
