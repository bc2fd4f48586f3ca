"""Train the contradiction judge: a MiniLM-L6 cross-encoder with a 3-way head.

Not part of the runtime (PyTorch lives in the ``train`` extra). Reads the JSONL
files ``prepare.py`` writes (``{"a", "b", "label", "source", "split"}``), trains
on ``split == "train"``, validates on ``split == "val"``, and keeps
checkpoints so a long run in the background can be stopped and resumed::

    python scripts/judge/train.py --data build/judge/data.jsonl \
        --base build/judge/base --out build/judge/run --epochs 1 --threads 1

The network: BERT (all-MiniLM-L6-v2's weights) over ``[CLS] a [SEP] b [SEP]``,
mean-pooled over the attention mask (the pooling MiniLM was trained with), then
a linear layer to (contradiction, entailment, neutral). Word embeddings are
frozen by default: they are a third of the weights and the slowest to update,
and freezing them keeps the French and Italian sub-words the notes use as the
pre-training left them. A note pair has no premise/hypothesis order, so every
training pair is used in both orders.

Besides the three labels a row may say ``not_contradiction`` (two true statements:
which of entailment and neutral holds is not known); its loss is
``-log(P(entailment) + P(neutral))``, and validation reports how often the judge
still answers "contradiction" on such rows (``false_contradiction``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from pathlib import Path

LABELS = ("contradiction", "entailment", "neutral")
#: Training targets: the three labels, then "not contradiction" (entailment or neutral).
TARGETS = (*LABELS, "not_contradiction")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, nargs="+", required=True, help="JSONL files")
    p.add_argument(
        "--base",
        type=Path,
        required=True,
        help="folder with config.json, model.safetensors, tokenizer.json",
    )
    p.add_argument("--out", type=Path, required=True, help="checkpoint folder")
    p.add_argument("--init", type=Path, help="start from this checkpoint (judge.pt)")
    p.add_argument("--resume", action="store_true", help="continue --out's last checkpoint")
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: none)")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--max-len", type=int, default=128)
    p.add_argument("--lr", type=float, default=4e-5)
    p.add_argument("--head-lr", type=float, default=1e-3)
    p.add_argument("--warmup", type=float, default=0.06, help="share of steps")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--train-embeddings", action="store_true")
    p.add_argument(
        "--weights", default="", help="per-source sampling weights, e.g. 'synth=3,vitaminc=1'"
    )
    p.add_argument(
        "--class-weights",
        default="",
        help="loss weight per label, e.g. 'contradiction=1.5,neutral=0.8'",
    )
    p.add_argument("--eval-every", type=int, default=500)
    p.add_argument("--save-every", type=int, default=250)
    p.add_argument("--val-limit", type=int, default=3000)
    p.add_argument("--hours", type=float, default=0.0, help="stop after this wall time")
    return p.parse_args(argv)


def load_rows(paths: list[Path]) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    for path in paths:
        with path.open(encoding="utf-8") as fh:
            rows.extend(json.loads(line) for line in fh if line.strip())
    return rows


def source_weights(spec: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for part in filter(None, spec.split(",")):
        name, _, value = part.partition("=")
        out[name.strip()] = float(value)
    return out


def build_epoch(
    rows: list[dict[str, str]], weights: dict[str, float], rng: random.Random, batch: int = 16
) -> list[tuple[str, str, int]]:
    """Both orders of every pair; a source weighted w appears w times (fractions sampled).

    Consecutive ``batch``-sized slices are the batches: pairs of similar length are
    batched together (sorted within windows of 64 batches, then the batches shuffled),
    so little time goes into padding."""
    out: list[tuple[str, str, int]] = []
    for row in rows:
        w = weights.get(row["source"], 1.0)
        copies = int(w) + (1 if rng.random() < w - int(w) else 0)
        label = TARGETS.index(row["label"])
        for _ in range(copies):
            out.append((row["a"], row["b"], label))
            out.append((row["b"], row["a"], label))
    rng.shuffle(out)
    window = batch * 64
    batches: list[list[tuple[str, str, int]]] = []
    for start in range(0, len(out), window):
        chunk = sorted(out[start : start + window], key=lambda r: len(r[0]) + len(r[1]))
        batches += [chunk[i : i + batch] for i in range(0, len(chunk), batch)]
    rng.shuffle(batches)
    return [row for b in batches for row in b]


class Judge:  # built lazily so that --help works without torch
    pass


def make_model(base: Path, torch, nn):
    from safetensors.torch import load_file
    from transformers import BertConfig, BertModel

    config = BertConfig.from_json_file(str(base / "config.json"))
    # Plain attention: the SDPA path builds its mask with Python conditionals that the
    # ONNX tracer freezes to the example's shape (wrong logits at other lengths).
    config._attn_implementation = "eager"

    class CrossEncoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = BertModel(config, add_pooling_layer=False)
            self.dropout = nn.Dropout(0.1)
            self.head = nn.Linear(config.hidden_size, len(LABELS))

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return self.head(self.dropout(pooled))

    model = CrossEncoder()
    weights = load_file(str(base / "model.safetensors"))
    weights = {k.removeprefix("bert."): v for k, v in weights.items()}
    missing, _unexpected = model.bert.load_state_dict(weights, strict=False)
    missing = [m for m in missing if "position_ids" not in m]
    if missing:
        raise SystemExit(f"base weights lack {missing[:5]}")
    return model, config


def make_tokenizer(base: Path, max_len: int):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(base / "tokenizer.json"))
    tok.enable_truncation(max_length=max_len, strategy="longest_first")
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    return tok


def encode(tok, pairs: list[tuple[str, str]], torch):
    enc = tok.encode_batch(pairs)
    ids = torch.tensor([e.ids for e in enc], dtype=torch.long)
    mask = torch.tensor([e.attention_mask for e in enc], dtype=torch.long)
    types = torch.tensor([e.type_ids for e in enc], dtype=torch.long)
    return ids, mask, types


def order_averaged(model, tok, rows: list[dict[str, str]], torch, batch: int = 64):
    """P(contradiction, entailment, neutral) of each row, both orders averaged (eval mode)."""
    model.eval()
    probs: list[list[float]] = []
    with torch.no_grad():
        for i in range(0, len(rows), batch):
            chunk = rows[i : i + batch]
            fwd = encode(tok, [(r["a"], r["b"]) for r in chunk], torch)
            rev = encode(tok, [(r["b"], r["a"]) for r in chunk], torch)
            p = (model(*fwd).softmax(-1) + model(*rev).softmax(-1)) / 2
            probs.extend(p.tolist())
    model.train()
    return probs


def class_f1(gold: list[int], pred: list[int]) -> list[float]:
    """F1 of each of the three labels."""
    out = []
    for c in range(3):
        tp = sum(g == c and q == c for g, q in zip(gold, pred, strict=True))
        fp = sum(g != c and q == c for g, q in zip(gold, pred, strict=True))
        fn = sum(g == c and q != c for g, q in zip(gold, pred, strict=True))
        out.append(2 * tp / max(1, 2 * tp + fp + fn))
    return out


def evaluate(model, tok, rows: list[dict[str, str]], torch, batch: int = 64) -> dict[str, float]:
    """3-way accuracy, macro F1 and contradiction AUC, both orders averaged."""
    probs = order_averaged(model, tok, rows, torch, batch)
    gold = [LABELS.index(r["label"]) for r in rows]
    pred = [max(range(3), key=p.__getitem__) for p in probs]
    acc = sum(g == q for g, q in zip(gold, pred, strict=True)) / max(1, len(rows))
    f1s = class_f1(gold, pred)
    return {
        "accuracy": acc,
        "macro_f1": sum(f1s) / 3,
        "f1_contradiction": f1s[0],
        "auc_contradiction": auc([p[0] for p in probs], [g == 0 for g in gold]),
        "auc_polarity": polarity_auc([p[0] for p in probs], gold),
    }


def false_contradiction(model, tok, rows: list[dict[str, str]], torch, batch: int = 64) -> float:
    """Share of "not contradiction" rows the judge still calls a contradiction (both orders)."""
    if not rows:
        return 0.0
    probs = order_averaged(model, tok, rows, torch, batch)
    return sum(max(range(3), key=p.__getitem__) == 0 for p in probs) / len(rows)


def target_loss(logits, targets, weights, torch):
    """Cross-entropy over the three labels; "not contradiction" rows (target 3) pay
    ``-log(P(entailment) + P(neutral))``. ``weights``: one per target (or None); the
    mean is weighted like ``nn.CrossEntropyLoss(weight=...)``."""
    logp = torch.log_softmax(logits, dim=-1)
    full = targets < len(LABELS)
    picked = logp.gather(1, targets.clamp(max=len(LABELS) - 1).unsqueeze(1)).squeeze(1)
    either = torch.logsumexp(logp[:, 1:], dim=1)
    per = -torch.where(full, picked, either)
    if weights is None:
        return per.mean()
    w = weights[targets]
    return (per * w).sum() / w.sum()


def polarity_auc(p_contradiction: list[float], gold: list[int]) -> float:
    """AUC of P(contradiction) between contradiction and entailment pairs only.

    The judge's hard part: both kinds share their subject, so this is near 0.5 when the
    judge has learned "same subject" rather than "opposite meaning".
    """
    keep = [i for i, g in enumerate(gold) if g in (0, 1)]
    return auc([p_contradiction[i] for i in keep], [gold[i] == 0 for i in keep])


def auc(scores: list[float], positive: list[bool]) -> float:
    """Rank AUC (ties count half)."""
    pos = [s for s, y in zip(scores, positive, strict=True) if y]
    neg = [s for s, y in zip(scores, positive, strict=True) if not y]
    if not pos or not neg:
        return float("nan")
    order = sorted((s, y) for s, y in zip(scores, positive, strict=True))
    rank_sum, i = 0.0, 0
    while i < len(order):
        j = i
        while j < len(order) and order[j][0] == order[i][0]:
            j += 1
        avg = (i + j + 1) / 2
        rank_sum += avg * sum(1 for k in range(i, j) if order[k][1])
        i = j
    return (rank_sum - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch
    from torch import nn

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    log = (args.out / "train.log").open("a", encoding="utf-8")

    def say(msg: str) -> None:
        line = f"{time.strftime('%H:%M:%S')} {msg}"
        print(line, flush=True)
        log.write(line + "\n")
        log.flush()

    rows = load_rows(args.data)
    train = [r for r in rows if r.get("split", "train") == "train"]
    val = [r for r in rows if r.get("split") == "val"]
    rng.shuffle(val)
    partial_val = [r for r in val if r["label"] not in LABELS][: args.val_limit]
    val = [r for r in val if r["label"] in LABELS][: args.val_limit]
    weights = source_weights(args.weights)
    say(
        f"{len(train)} train, {len(val)} val rows (+{len(partial_val)} not-contradiction); "
        f"weights {weights or 'none'}"
    )

    model, _ = make_model(args.base, torch, nn)
    tok = make_tokenizer(args.base, args.max_len)
    state_path = args.out / "state.pt"
    start_step, best = 0, -1.0
    if args.init:
        model.load_state_dict(torch.load(args.init, map_location="cpu")["model"])
        say(f"initialised from {args.init}")
    if not args.train_embeddings:
        model.bert.embeddings.word_embeddings.weight.requires_grad_(False)

    head = [p for n, p in model.named_parameters() if n.startswith("head") and p.requires_grad]
    body = [p for n, p in model.named_parameters() if not n.startswith("head") and p.requires_grad]
    opt = torch.optim.AdamW(
        [{"params": body, "lr": args.lr}, {"params": head, "lr": args.head_lr}], weight_decay=0.01
    )
    epoch_rows = build_epoch(train, weights, rng, args.batch)
    steps_per_epoch = math.ceil(len(epoch_rows) / args.batch)
    total = max(1, int(steps_per_epoch * args.epochs))
    if args.max_steps:
        total = min(total, args.max_steps)
    warm = max(1, int(total * args.warmup))

    def lr_at(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return max(0.0, (total - step) / max(1, total - warm))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    if args.resume and state_path.exists():
        state = torch.load(state_path, map_location="cpu")
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        start_step, best = state["step"], state.get("best", -1.0)
        rng.setstate(state["rng"])
        epoch_rows = build_epoch(train, weights, rng, args.batch)
        say(f"resumed at step {start_step}")
    say(f"{len(epoch_rows)} ordered pairs per epoch, {total} steps of {args.batch}")

    def save(path: Path, step: int) -> None:
        tmp = path.with_suffix(".tmp")
        torch.save(
            {
                "model": model.state_dict(),
                "opt": opt.state_dict(),
                "sched": sched.state_dict(),
                "step": step,
                "best": best,
                "rng": rng.getstate(),
                "labels": LABELS,
                "max_len": args.max_len,
            },
            tmp,
        )
        os.replace(tmp, path)

    model.train()
    cw = source_weights(args.class_weights)
    target_weights = torch.tensor([cw.get(t, 1.0) for t in TARGETS]) if cw else None
    t0, seen, running = time.time(), 0, 0.0
    deadline = t0 + args.hours * 3600 if args.hours else math.inf
    step = start_step
    while step < total and time.time() < deadline:
        offset = (step * args.batch) % len(epoch_rows)
        if offset + args.batch > len(epoch_rows) and step:
            epoch_rows = build_epoch(train, weights, rng, args.batch)
            offset = 0
        chunk = epoch_rows[offset : offset + args.batch]
        ids, mask, types = encode(tok, [(a, b) for a, b, _ in chunk], torch)
        labels = torch.tensor([y for *_, y in chunk], dtype=torch.long)
        loss = target_loss(model(ids, mask, types), labels, target_weights, torch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        step += 1
        seen += len(chunk)
        running = 0.98 * running + 0.02 * loss.item() if step > start_step + 1 else loss.item()
        if step % 50 == 0:
            rate = seen / (time.time() - t0)
            say(
                f"step {step}/{total} loss {running:.4f} {rate:.1f} ex/s "
                f"eta {(total - step) * args.batch / max(rate, 1e-9) / 60:.0f} min"
            )
        if step % args.save_every == 0:
            save(state_path, step)
        if val and (step % args.eval_every == 0 or step == total):
            metrics = evaluate(model, tok, val, torch)
            if partial_val:
                metrics["false_contradiction"] = false_contradiction(model, tok, partial_val, torch)
            say("val " + json.dumps({k: round(v, 4) for k, v in metrics.items()}))
            if metrics["macro_f1"] > best:
                best = metrics["macro_f1"]
                save(args.out / "best.pt", step)
                say(f"best so far (macro F1 {best:.4f}) saved")
    save(state_path, step)
    if not val or not (args.out / "best.pt").exists():
        save(args.out / "best.pt", step)
    say(f"done at step {step}; {seen} pairs in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
