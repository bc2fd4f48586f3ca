"""Recover a training checkpoint from a judge ONNX file (the shipped one by default).

Training checkpoints live outside git and do not survive a change of machine; the shipped
``models/judge/judge-int8.onnx`` does. Its weights are int8 with a scale and zero point
per channel: dequantised, they are the last checkpoint to within the quantisation step,
enough to continue training from (``train.py --init``). Each quantised matrix is named by
the bias it is added to (``…attention.self.query.bias`` → ``…query.weight``).

    python scripts/judge/recover.py --base build/judge/base --out build/judge/shipped.pt

Checks the recovered model against the ONNX file on a few pairs and prints the largest
probability difference.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))


def dequantised(model) -> dict[str, np.ndarray]:
    """Parameter name (the training model's) → fp32 array, from an int8 ONNX judge."""
    from onnx import numpy_helper

    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    consumers: dict[str, list] = {}
    for node in model.graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    def weight(prefix: str) -> np.ndarray:
        q = inits[f"{prefix}_quantized"].astype(np.float32)
        zp = inits[f"{prefix}_zero_point"].astype(np.float32)
        scale = inits[f"{prefix}_scale"].astype(np.float32)
        if q.ndim == 2 and scale.ndim == 1 and scale.shape[0] == q.shape[1]:
            return (q - zp[None, :]) * scale[None, :]
        if q.ndim == 2 and scale.ndim == 1 and scale.shape[0] == q.shape[0]:
            return (q - zp[:, None]) * scale[:, None]
        return (q - zp) * scale

    out: dict[str, np.ndarray] = {}
    for name, value in inits.items():
        if name.endswith(("_quantized", "_scale", "_zero_point")):
            continue
        if name.startswith("inner."):
            out[name.removeprefix("inner.")] = value.astype(np.float32)
    for name in inits:
        if not name.endswith("_quantized"):
            continue
        prefix = name.removesuffix("_quantized")
        if prefix.startswith("inner.") and prefix.endswith(".weight"):  # embeddings
            out[prefix.removeprefix("inner.")] = weight(prefix)
            continue
        if prefix == "inner.head.weight_Transposed":
            out["head.weight"] = weight(prefix).T  # stored (in, out)
            continue
        # A MatMul weight (in, out): follow its product to the Add that takes its bias.
        matmul = next(n for n in consumers[name] if n.op_type == "MatMulInteger")
        frontier, bias = list(matmul.output), None
        for _ in range(6):
            nxt: list[str] = []
            for t in frontier:
                for node in consumers.get(t, []):
                    if node.op_type == "Add":
                        bias = next(
                            (
                                i
                                for i in node.input
                                if i.startswith("inner.") and i.endswith(".bias")
                            ),
                            None,
                        )
                        if bias:
                            break
                    nxt.extend(node.output)
                if bias:
                    break
            if bias:
                break
            frontier = nxt
        if bias is None:
            raise SystemExit(f"cannot tell which layer {prefix} belongs to")
        out[bias.removeprefix("inner.").removesuffix(".bias") + ".weight"] = weight(prefix).T
    return out


def main(argv: list[str] | None = None) -> int:
    import onnx
    import torch
    from torch import nn
    from train import make_model, make_tokenizer

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--onnx", type=Path, default=ROOT / "models" / "judge" / "judge-int8.onnx")
    p.add_argument("--base", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    weights = dequantised(onnx.load(str(args.onnx)))
    model, _ = make_model(args.base, torch, nn)
    state = model.state_dict()
    missing = [k for k in state if k not in weights and "position_ids" not in k]
    if missing:
        raise SystemExit(f"the ONNX file lacks {missing[:5]}")
    for k, v in weights.items():
        if k in state and tuple(state[k].shape) != v.shape:
            raise SystemExit(f"{k}: shape {v.shape}, the model wants {tuple(state[k].shape)}")
    model.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()}, strict=False)
    model.eval()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.state_dict(), "step": 0}, args.out)

    import onnxruntime as ort

    pairs = [
        ("The meeting is on Monday.", "The meeting is on Friday."),
        ("I always walk to work.", "I walk to work every day."),
        ("The cat sleeps.", "Interest rates rose in March."),
    ]
    tok = make_tokenizer(args.base, 128)
    enc = tok.encode_batch(pairs)
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    types = np.array([e.type_ids for e in enc], dtype=np.int64)
    sess = ort.InferenceSession(str(args.onnx), providers=["CPUExecutionProvider"])
    feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    feed = {k: v for k, v in feed.items() if k in {i.name for i in sess.get_inputs()}}
    (onnx_logits,) = sess.run(None, feed)
    with torch.no_grad():
        torch_logits = model(torch.from_numpy(ids), torch.from_numpy(mask), torch.from_numpy(types))

    def soft(x):
        e = np.exp(x - x.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    diff = np.abs(soft(onnx_logits) - soft(torch_logits.numpy())).max()
    print(f"recovered {len(weights)} tensors into {args.out}; largest probability gap {diff:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
