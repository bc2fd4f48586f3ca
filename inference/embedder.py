"""Sentence embeddings with ONNX Runtime: tokenise, run, mean-pool, normalise.

Measured on this machine kind (MEASURED.md), and handled here:

* the shipped ``tokenizer.json`` pads every text to 128 tokens and truncates
  at 128 — a 20-token request would cost 4–5× more — so padding is reset to
  the longest text of each batch and truncation to the model's 256;
* ONNX Runtime's CPU arena keeps its peak for good (215 MiB → 3.1 GiB after
  one batch of long texts), so the arena is off and batches are capped;
* texts are sorted by length before batching so short texts are not padded
  to a long neighbour.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from inference.errors import ModelUnavailable
from inference.registry import ResolvedModel

Vectors = npt.NDArray[np.float32]


class Embedder(ABC):
    """Turns texts into L2-normalised float32 vectors, one row per text."""

    dimension: int
    name: str

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``; returns an array of shape ``(len(texts), dimension)``.

        Safe to call from any thread.
        """

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release native resources."""


@dataclass(frozen=True)
class EmbedderSettings:
    threads: int = 1
    #: Upper bound on texts per ONNX call (bounds memory; MEASURED.md).
    max_batch: int = 32
    #: Tokens per text; all-MiniLM-L6-v2 was trained on at most 256.
    max_tokens: int = 256


class OnnxEmbedder(Embedder):
    """all-MiniLM-L6-v2 (or any BERT-like ONNX encoder) on ONNX Runtime."""

    def __init__(
        self,
        model: ResolvedModel,
        settings: EmbedderSettings | None = None,
        *,
        onnx_path: Path | None = None,
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.settings = settings or EmbedderSettings()
        self.model = model
        self.name = model.title
        if model.tokenizer is None:
            raise ModelUnavailable("The embedder has no tokenizer — reinstall Antinomy.")
        try:
            tokenizer = Tokenizer.from_file(str(model.tokenizer))
        except Exception as exc:  # tokenizers raises plain Exception
            raise ModelUnavailable(
                f"The tokenizer {model.tokenizer} cannot be read ({exc}) — reinstall Antinomy."
            ) from exc
        tokenizer.enable_truncation(max_length=self.settings.max_tokens)
        pad_id = tokenizer.token_to_id("[PAD]")
        tokenizer.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
        self._tokenizer = tokenizer
        self._tok_lock = threading.Lock()  # Tokenizer padding state is per object

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.settings.threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.enable_cpu_mem_arena = False
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        path = onnx_path or model.path
        try:
            self._session = ort.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph types
            raise ModelUnavailable(
                f"{path} cannot be loaded as an ONNX model ({str(exc).splitlines()[0][:200]}) — "
                "choose a sentence-embedding model exported to ONNX, or remove the path from "
                "the settings to use the bundled default."
            ) from exc
        self._inputs = {i.name for i in self._session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - self._inputs
        if missing:
            raise ModelUnavailable(
                f"{path} has no input named {', '.join(sorted(missing))}: it is not a BERT-style "
                "encoder — choose a sentence-transformers model exported to ONNX."
            )
        self._output = self._session.get_outputs()[0].name
        self.dimension = self._probe_dimension(path)

    def _probe_dimension(self, path: Path) -> int:
        """Run one token through the model and check the output is (batch, tokens, dim)."""
        out, _ = self._run(["probe"])
        if out.ndim != 3 or out.shape[0] != 1 or out.shape[2] < 8:
            raise ModelUnavailable(
                f"{path} returns an output of shape {tuple(out.shape)}; Antinomy needs token "
                "embeddings shaped (batch, tokens, dimension) to mean-pool — choose the model's "
                "last_hidden_state export (e.g. all-MiniLM-L6-v2 as ONNX)."
            )
        expected = self.model.spec.extra.get("dimension") if self.model.spec else None
        if expected and out.shape[2] != expected:
            raise ModelUnavailable(
                f"{path} gives {out.shape[2]}-dimensional vectors, the manifest says {expected} — "
                "the file does not match its manifest entry; reinstall the model package."
            )
        return int(out.shape[2])

    def _encode(
        self, texts: Sequence[str]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        with self._tok_lock:
            encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.asarray([e.type_ids for e in encodings], dtype=np.int64)
        return ids, mask, types

    def _run(self, texts: Sequence[str]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """Token embeddings ``(batch, tokens, dim)`` and the attention mask."""
        ids, mask, types = self._encode(texts)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = types
        (hidden,) = self._session.run([self._output], feed)
        return np.asarray(hidden, dtype=np.float32), mask

    def _embed_batch(self, texts: Sequence[str]) -> Vectors:
        hidden, mask = self._run(texts)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        vectors: Vectors = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return vectors

    def embed(self, texts: Sequence[str]) -> Vectors:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        n = len(texts)
        out = np.empty((n, self.dimension), dtype=np.float32)
        if n == 0:
            return out
        # Length-sorted batches: a short text is never padded to a long one.
        order = sorted(range(n), key=lambda i: len(texts[i]))
        step = max(1, self.settings.max_batch)
        for start in range(0, n, step):
            idx = order[start : start + step]
            out[idx] = self._embed_batch([texts[i] for i in idx])
        return out

    def close(self) -> None:
        self._session = None
