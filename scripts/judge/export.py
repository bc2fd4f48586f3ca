"""Export a judge checkpoint to ONNX (fp32), then quantise it to int8, and compare the two.

    python scripts/judge/export.py --checkpoint build/judge/run/best.pt \
        --base build/judge/base --out build/judge/export --data build/judge/data.jsonl

Writes ``judge-fp32.onnx`` and ``judge-int8.onnx`` (dynamic int8, per-channel
weights: per-tensor scales cost the embedder 3 points of cosine) and prints
validation accuracy / macro F1 of both, with the correlation of their
P(contradiction), as JSON. The int8 file ships if its macro F1 is within one
point of fp32's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import train


def export_fp32(checkpoint: Path, base: Path, target: Path) -> None:
    import torch
    from torch import nn

    model, _ = train.make_model(base, torch, nn)
    model.load_state_dict(torch.load(checkpoint, map_location="cpu")["model"])
    model.eval()

    class Logits(nn.Module):
        def __init__(self, inner: nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids, attention_mask, token_type_ids)

    ids = torch.ones((2, 12), dtype=torch.long)
    target.parent.mkdir(parents=True, exist_ok=True)
    axes = {0: "batch", 1: "tokens"}
    kwargs = {
        "input_names": ["input_ids", "attention_mask", "token_type_ids"],
        "output_names": ["logits"],
        "dynamic_axes": {
            "input_ids": axes,
            "attention_mask": axes,
            "token_type_ids": axes,
            "logits": {0: "batch"},
        },
        "opset_version": 17,
    }
    try:
        torch.onnx.export(
            Logits(model), (ids, ids, torch.zeros_like(ids)), str(target), dynamo=False, **kwargs
        )
    except TypeError:  # older torch without the dynamo switch
        torch.onnx.export(Logits(model), (ids, ids, torch.zeros_like(ids)), str(target), **kwargs)


def quantise(source: Path, target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # 7-bit weights (reduce_range): without VNNI, ONNX Runtime's u8×s8 kernel adds pairs of
    # products in 16 bits and saturates on full-range weights, so the same file scored a
    # pair 0.763 on an AVX2 CPU and 0.844 on a VNNI one (inference/judge_graph.py).
    quantize_dynamic(
        str(source),
        str(target),
        weight_type=QuantType.QInt8,
        per_channel=True,
        reduce_range=True,
    )


class OrtJudge:
    """The runtime's recipe (both orders averaged), without the app around it."""

    def __init__(self, path: Path, tokenizer: Path, threads: int = 1) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        self.tok = Tokenizer.from_file(str(tokenizer))
        self.tok.enable_truncation(max_length=128, strategy="longest_first")
        self.tok.enable_padding(pad_id=0, pad_token="[PAD]")

    def logits(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        enc = self.tok.encode_batch(pairs)
        feed = {
            "input_ids": np.asarray([e.ids for e in enc], dtype=np.int64),
            "attention_mask": np.asarray([e.attention_mask for e in enc], dtype=np.int64),
            "token_type_ids": np.asarray([e.type_ids for e in enc], dtype=np.int64),
        }
        return self.session.run(None, feed)[0]

    def score(self, pairs: list[tuple[str, str]], batch: int = 16) -> np.ndarray:
        out = []
        for i in range(0, len(pairs), batch):
            chunk = pairs[i : i + batch]
            rows = chunk + [(b, a) for a, b in chunk]
            z = self.logits(rows)
            e = np.exp(z - z.max(1, keepdims=True))
            p = e / e.sum(1, keepdims=True)
            out.append((p[: len(chunk)] + p[len(chunk) :]) / 2)
        return np.concatenate(out) if out else np.zeros((0, 3))


def metrics(probs: np.ndarray, rows: list[dict[str, str]]) -> dict[str, float]:
    """3-way metrics on the labelled rows; on "not contradiction" rows (compatible, label
    unknown between entailment and neutral) only a contradiction answer is known to be wrong,
    so they give ``false_contradiction``. With both kinds in one source (``synth_indirect``),
    ``auc_vs_compatible`` is P(contradiction)'s AUC between its contradictions and its
    compatible lines: does the judge tell a clash from a line that only shares its words?"""
    full = [i for i, r in enumerate(rows) if r["label"] in train.LABELS]
    partial = [i for i, r in enumerate(rows) if r["label"] not in train.LABELS]
    out: dict[str, float] = {}
    if full:
        gold = [train.LABELS.index(rows[i]["label"]) for i in full]
        sub = probs[full]
        pred = sub.argmax(1).tolist()
        acc = float(np.mean([g == q for g, q in zip(gold, pred, strict=True)]))
        f1s = train.class_f1(gold, pred)
        out |= {
            "accuracy": round(acc, 4),
            "macro_f1": round(sum(f1s) / 3, 4),
            "f1_contradiction": round(f1s[0], 4),
            "auc_contradiction": round(train.auc(sub[:, 0].tolist(), [g == 0 for g in gold]), 4),
            "auc_polarity": round(train.polarity_auc(sub[:, 0].tolist(), gold), 4),
        }
    if partial:
        out |= {
            "false_contradiction": round(float(np.mean(probs[partial].argmax(1) == 0)), 4),
            "mean_contradiction": round(float(probs[partial, 0].mean()), 4),
        }
    clash = [i for i in full if rows[i]["label"] == "contradiction"]
    if clash and partial:
        both = clash + partial
        out["auc_vs_compatible"] = round(
            train.auc(probs[both, 0].tolist(), [i in set(clash) for i in both]), 4
        )
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoint", type=Path, help="the trained checkpoint to export")
    p.add_argument("--base", type=Path, required=True)
    p.add_argument("--out", type=Path, help="folder for judge-fp32.onnx and judge-int8.onnx")
    p.add_argument("--data", type=Path, nargs="*", default=[], help="JSONL with a val split")
    p.add_argument("--val-limit", type=int, default=2000)
    p.add_argument("--evaluate", type=Path, help="no export: validate this ONNX file alone")
    args = p.parse_args(argv)
    tok = args.base / "tokenizer.json"
    report: dict[str, object] = {}
    if args.evaluate:
        judges = {"judge": OrtJudge(args.evaluate, tok)}
    else:
        if not args.checkpoint or not args.out:
            p.error("--checkpoint and --out are needed unless --evaluate is given")
        fp32 = args.out / "judge-fp32.onnx"
        int8 = args.out / "judge-int8.onnx"
        t0 = time.time()
        export_fp32(args.checkpoint, args.base, fp32)
        quantise(fp32, int8)
        report["export_seconds"] = round(time.time() - t0, 1)
        report["fp32_bytes"] = fp32.stat().st_size
        report["int8_bytes"] = int8.stat().st_size
        judges = {"fp32": OrtJudge(fp32, tok), "int8": OrtJudge(int8, tok)} if args.data else {}
    if args.data:
        rows = [r for r in train.load_rows(args.data) if r.get("split") == "val"]
        by_source: dict[str, list[dict[str, str]]] = {}
        for r in rows:
            by_source.setdefault(r["source"], []).append(r)
        for source, items in sorted(by_source.items()):
            items = items[: args.val_limit]
            pairs = [(r["a"], r["b"]) for r in items]
            probs = {name: j.score(pairs) for name, j in judges.items()}
            entry: dict[str, object] = {name: metrics(pr, items) for name, pr in probs.items()}
            if len(probs) == 2:
                entry["corr_contradiction"] = round(
                    float(np.corrcoef(probs["fp32"][:, 0], probs["int8"][:, 0])[0, 1]), 4
                )
            report[source] = entry
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
