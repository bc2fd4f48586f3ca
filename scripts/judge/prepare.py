"""Write the judge's training data as JSONL: BIG-bench's two allowed tasks plus our own.

    pip download --no-deps bigbench==1.0.0 -d build/judge      # 358 MB sdist, read in place
    python scripts/judge/prepare.py --bigbench build/judge/bigbench-1.0.0.tar.gz \
        --out build/judge/data.jsonl

Each line is ``{"a", "b", "label", "source", "split"}``. The split is decided by
a hash of each example's group (VitaminC: its claim; synthetic data: its
scenario), so near-duplicates never straddle train and validation. Only
``vitaminc_fact_verification`` and ``fact_checker/fever`` are read for training.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bigbench_data import Example, fever_claims, vitaminc
from synth import generate


def split_of(group: str, val_share: float) -> str:
    h = int(hashlib.sha256(group.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "val" if h < val_share else "train"


def fever_neutrals(claims: list[tuple[str, bool]], n: int, rng: random.Random) -> list[Example]:
    """Unrelated fluent claims paired at random: the judge must learn that two statements
    about different things are neutral, however assertive each one is."""
    out: list[Example] = []
    texts = [c for c, _ in claims]
    for i in range(min(n, len(texts) // 2)):
        a, b = rng.sample(texts, 2)
        out.append(Example(a, b, "neutral", "fever_random", group=f"fever:{i}"))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bigbench", type=Path, help="bigbench sdist (.tar.gz) or unpacked folder")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument(
        "--parts", default="vitaminc,fever,synth", help="comma list of vitaminc, fever, synth"
    )
    p.add_argument("--val-share", type=float, default=0.05)
    p.add_argument(
        "--synth-val-share",
        type=float,
        default=0.2,
        help="share of synthetic scenarios held out (they also calibrate the "
        "note-level threshold, so more are kept than of VitaminC)",
    )
    p.add_argument(
        "--synth-scenarios",
        type=int,
        default=0,
        help="synthetic scenarios per pattern and language (0: the default)",
    )
    p.add_argument("--limit", type=int, default=0, help="keep at most this many per part")
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    rng = random.Random(args.seed)
    parts = set(args.parts.split(","))
    examples: list[Example] = []
    if parts & {"vitaminc", "fever"} and not args.bigbench:
        p.error("--bigbench is needed for the vitaminc and fever parts")
    if "vitaminc" in parts:
        rows = list(vitaminc(args.bigbench))
        examples += rows[: args.limit] if args.limit else rows
    if "fever" in parts:
        n = args.limit or 3000
        examples += fever_neutrals(fever_claims(args.bigbench), n, rng)
    if "synth" in parts:
        rows = generate(seed=args.seed, scenarios=args.synth_scenarios or None)
        examples += rows[: args.limit] if args.limit else rows
    args.out.parent.mkdir(parents=True, exist_ok=True)
    counts: Counter[tuple[str, str, str]] = Counter()
    with args.out.open("w", encoding="utf-8") as fh:
        for ex in examples:
            share = args.synth_val_share if ex.source.startswith("synth") else args.val_share
            split = split_of(ex.group or f"{ex.a}\x00{ex.b}", share)
            counts[(ex.source, split, ex.label)] += 1
            fh.write(
                json.dumps(
                    {"a": ex.a, "b": ex.b, "label": ex.label, "source": ex.source, "split": split},
                    ensure_ascii=False,
                )
                + "\n"
            )
    summary: dict[str, dict[str, int]] = {}
    for (source, split, label), n in sorted(counts.items()):
        summary.setdefault(f"{source}/{split}", {})[label] = n
    print(json.dumps({"out": str(args.out), "rows": len(examples), "counts": summary}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
