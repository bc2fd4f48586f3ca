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
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bigbench_data import Example, fever_claims, vitaminc
from synth import generate

#: Label of a pair known not to contradict, without knowing whether one entails the other
#: (``train.py`` trains it as "not contradiction": the loss is -log(P(entailment) + P(neutral))).
NOT_CONTRADICTION = "not_contradiction"

Embed = Callable[[list[str]], Any]


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


def fever_near(
    claims: list[tuple[str, bool]],
    embed: Embed,
    *,
    per_claim: int = 3,
    band: tuple[float, float] = (0.4, 0.95),
) -> list[Example]:
    """Two *true* FEVER claims about the same subject, as "not contradiction" pairs.

    Two true statements cannot contradict each other, however much they sound alike
    ("Brie Larson is a singer." / "Brie Larson is an actress."). That is the judge's most
    common false alarm on notes: two facts about one subject read as a clash. The pairs
    are each claim's nearest true claims by sentence cosine inside ``band`` (the scan's
    subject gate sends such pairs to the judge; above the band they are restatements).
    Whether one entails the other is not known, so the label is only "not contradiction".
    """
    import numpy as np

    true = sorted({c for c, ok in claims if ok})
    if len(true) < 2:
        return []
    vectors = np.asarray(embed(true), dtype=np.float32)
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -1.0)
    lo, hi = band
    seen: set[tuple[int, int]] = set()
    out: list[Example] = []
    for i in range(len(true)):
        taken = 0
        for j in np.argsort(-sims[i], kind="stable"):
            j = int(j)
            if sims[i, j] < lo or taken >= per_claim:
                break
            if sims[i, j] > hi:
                continue
            taken += 1
            key = (min(i, j), max(i, j))
            if key in seen:
                continue
            seen.add(key)
            out.append(
                Example(
                    true[i], true[j], NOT_CONTRADICTION, "fever_near", group=f"fevernear:{key[0]}"
                )
            )
    return out


def banded_pairs(
    vectors: Any,
    band: tuple[float, float],
    per_text: int,
    rng: random.Random,
    allowed: Callable[[int, int], bool] = lambda i, j: True,
) -> list[tuple[int, int]]:
    """Up to ``per_text`` random partners per row whose cosine lies inside ``band``."""
    import numpy as np

    sims = vectors @ vectors.T
    lo, hi = band
    seen: set[tuple[int, int]] = set()
    out: list[tuple[int, int]] = []
    for i in range(len(vectors)):
        inside = [int(j) for j in np.nonzero((sims[i] >= lo) & (sims[i] <= hi))[0] if j != i]
        rng.shuffle(inside)
        taken = 0
        for j in inside:
            if taken >= per_text:
                break
            key = (min(i, j), max(i, j))
            if key in seen or not allowed(i, j):
                continue
            seen.add(key)
            out.append(key)
            taken += 1
    return out


def loose_pairs(
    claims: list[tuple[str, bool]],
    scenarios: list[dict[str, object]],
    embed: Embed,
    rng: random.Random,
    *,
    synth_val_share: float = 0.2,
    band: tuple[float, float] = (0.3, 0.6),
    per_text: int = 2,
) -> list[Example]:
    """Loosely related pairs — a shared word or theme, not one subject — that do not clash.

    The scan's subject gate lets sentence pairs from cosine 0.3 through, and there the judge
    cried "contradiction" most ("The first hour of the workday belongs to the inbox" /
    "Thursday noon leaves a full working day and a night to notice", cosine 0.36): its
    neutral examples were either on one subject or unrelated (cosine near 0). Two sources:

    * two true FEVER claims in the band: "not contradiction" (``fever_loose``);
    * sentences of two different scenarios of one language in the band: neutral
      (``synth_loose``). Only scenarios of the training split are used, so the held-out
      ones stay unseen (they calibrate the note-level threshold).
    """
    import numpy as np
    from synth import _list

    out: list[Example] = []
    true = sorted({c for c, ok in claims if ok})
    if len(true) > 1:
        vectors = np.asarray(embed(true), dtype=np.float32)
        for i, j in banded_pairs(vectors, band, per_text, rng):
            out.append(
                Example(true[i], true[j], NOT_CONTRADICTION, "fever_loose", group=f"feverloose:{i}")
            )
    keys = ("rules", "breaks", "keeps", "allowed", "related", "contradicts", "agrees")
    lines: list[tuple[str, str, str]] = []  # (text, scenario id, language)
    for sc in scenarios:
        sid = str(sc.get("id", ""))
        if split_of(f"synth:{sid}", synth_val_share) != "train":
            continue
        texts = [str(sc["base"])] if sc.get("base") else []
        texts += [t for key in keys for t in _list(sc, key)]
        lines += [(t, sid, str(sc.get("lang", ""))) for t in texts]
    if len(lines) > 1:
        vectors = np.asarray(embed([t for t, _, _ in lines]), dtype=np.float32)

        def apart(i: int, j: int) -> bool:
            return lines[i][1] != lines[j][1] and lines[i][2] == lines[j][2]

        for i, j in banded_pairs(vectors, band, per_text, rng, apart):
            out.append(
                Example(lines[i][0], lines[j][0], "neutral", "synth_loose", f"synth:{lines[i][1]}")
            )
    return out


def vitaminc_revisions(examples: list[Example], per_claim: int = 1) -> list[Example]:
    """Two revisions of one Wikipedia sentence that a claim tells apart, as contradictions.

    VitaminC is contrastive: the same claim is checked against evidence before and after
    an edit, and an evidence that *supports* the claim and one that *refutes* it are the
    same sentence with one fact changed ("more than 1.3 billion views" / "more than 1.4
    billion"; "led by John Cook and Robin Walker" / "solely handled by John Cook"). Paired
    with each other they are same-subject contradictions in real prose — two amounts, dates
    or people for one fact — the counterpart of :func:`fever_near`'s same-subject pairs
    that do not clash. Grouped by claim, like the VitaminC rows, so they share its split.
    """
    by_claim: dict[str, tuple[list[str], list[str]]] = {}
    for ex in examples:
        if ex.source != "vitaminc" or ex.label not in ("entailment", "contradiction"):
            continue
        supports, refutes = by_claim.setdefault(ex.group, ([], []))
        (supports if ex.label == "entailment" else refutes).append(ex.a)
    out: list[Example] = []
    for group, (supports, refutes) in by_claim.items():
        pairs = [(s, r) for s in supports for r in refutes if s != r]
        for s, r in pairs[:per_claim]:
            out.append(Example(s, r, "contradiction", "vitaminc_revision", group=group))
    return out


def bundled_embed(texts: list[str]) -> Any:
    """The app's own sentence embedder (the scan's subject gate uses the same vectors)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from desktop.flows.embedding import load_embedding_model

    return load_embedding_model().embed(texts)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bigbench", type=Path, help="bigbench sdist (.tar.gz) or unpacked folder")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument(
        "--parts",
        default="vitaminc,fever,synth",
        help="comma list of vitaminc, fever, synth, fever_near (true FEVER claims on one "
        "subject, needs the app's embedder), vitaminc_revision (an evidence that supports "
        "a claim against one that refutes it), loose (loosely related pairs that do not "
        "clash, FEVER and scenarios; needs the embedder)",
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
    unknown = parts - {"vitaminc", "fever", "synth", "fever_near", "vitaminc_revision", "loose"}
    if unknown:
        p.error(f"unknown part(s): {', '.join(sorted(unknown))}")
    if parts - {"synth"} and not args.bigbench:
        p.error("--bigbench is needed for the vitaminc and fever parts")
    if "vitaminc" in parts:
        rows = list(vitaminc(args.bigbench))
        examples += rows[: args.limit] if args.limit else rows
    if "vitaminc_revision" in parts:
        rows = vitaminc_revisions(list(vitaminc(args.bigbench)))
        examples += rows[: args.limit] if args.limit else rows
    if "loose" in parts:
        from synth import load_scenarios

        rows = loose_pairs(
            fever_claims(args.bigbench),
            load_scenarios(),
            bundled_embed,
            rng,
            synth_val_share=args.synth_val_share,
        )
        examples += rows[: args.limit] if args.limit else rows
    if "fever" in parts:
        n = args.limit or 3000
        examples += fever_neutrals(fever_claims(args.bigbench), n, rng)
    if "fever_near" in parts:
        rows = fever_near(fever_claims(args.bigbench), bundled_embed)
        examples += rows[: args.limit] if args.limit else rows
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
