"""Secret masking: how often ordinary prose is masked, and how many secret kinds are caught.

* **prose** — every sentence (4+ words) of the Markdown files under the given
  folders, outside fenced and indented code: how many ``mask_secrets`` changes,
  and which (all of them are printed, so each can be read and judged).
  ``--sample N`` also reports a seeded random sample of N sentences.
* **kinds** — tests/data/memory/secret_kinds.json (40 kinds, 46 samples): how
  many kinds have a sample whose secret survives masking.

Prints one JSON object. Run: ``python tests/perf/measure_secret_masking.py
/path/to/docs-vault [more folders] --sample 500``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.flows.memory.secrets import mask_secrets

KINDS = Path(__file__).resolve().parents[1] / "data" / "memory" / "secret_kinds.json"
_FENCE = re.compile(r"^\s*(```|~~~)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def prose_sentences(folder: Path) -> Iterator[tuple[Path, str]]:
    for file in sorted(folder.rglob("*.md")):
        if any(part.startswith(".") for part in file.relative_to(folder).parts):
            continue
        inside = False
        for line in file.read_text("utf-8", "replace").splitlines():
            if _FENCE.match(line):
                inside = not inside
                continue
            if inside or line.startswith(("    ", "\t")) or not line.strip():
                continue
            for sentence in _SENTENCE_END.split(line.strip()):
                if len(sentence.split()) >= 4:
                    yield file, sentence


def kinds_surviving() -> dict[str, list[str]]:
    cases = json.loads(KINDS.read_text("utf-8"))
    out: dict[str, list[str]] = {}
    for case in cases:
        masked = mask_secrets(case["text"]).text
        for secret in case["secrets"]:
            if any(part in masked for part in secret.split("\n") if len(part) >= 8):
                out.setdefault(case["kind"], []).append(case["text"][:80])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--sample", type=int, default=0, help="also a random sample of N")
    parser.add_argument("--seed", type=int, default=20261130)
    args = parser.parse_args()
    sentences = [(f, s) for folder in args.folders for f, s in prose_sentences(folder)]
    changed = []
    for file, sentence in sentences:
        masked = mask_secrets(sentence)
        if masked.count:
            changed.append(
                {
                    "file": str(file),
                    "kinds": list(masked.kinds),
                    "text": sentence[:240],
                    "masked": masked.text[:240],
                }
            )
    result: dict[str, object] = {
        "folders": [str(f) for f in args.folders],
        "sentences": len(sentences),
        "masked": len(changed),
        "masked_rate": round(len(changed) / max(len(sentences), 1), 6),
        "masked_by_kind": dict(Counter(k for c in changed for k in c["kinds"])),
        "masked_sentences": changed,
    }
    if args.sample:
        rng = random.Random(args.seed)
        picked = rng.sample(sentences, min(args.sample, len(sentences)))
        result["sample"] = {
            "size": len(picked),
            "masked": sum(1 for _, s in picked if mask_secrets(s).count),
        }
    surviving = kinds_surviving()
    total = len({c["kind"] for c in json.loads(KINDS.read_text("utf-8"))})
    result["secret_kinds"] = {"total": total, "surviving": len(surviving), "which": surviving}
    print(json.dumps(result, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
