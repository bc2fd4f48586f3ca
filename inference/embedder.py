"""Sentence embeddings with ONNX Runtime: tokenise, run, mean-pool, normalise.

Measured on this machine kind (2 cores, no GPU), and handled here:

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

from foundation.errors import ModelUnavailable
from inference.onnx_session import cpu_session
from inference.registry import ResolvedModel

Vectors = npt.NDArray[np.float32]


class Embedder(ABC):
    """Turns texts into L2-normalised float32 vectors, one row per text."""

    dimension: int
    name: str
    #: Identifies the weights ("<name>@<sha256 prefix>"): the index keys its vectors by it,
    #: so a different file (or its int8 copy) never mixes with stored vectors.
    model_id: str = ""
    #: The model's tokenizer file, for callers that count tokens (None: unknown).
    tokenizer_path: Path | None = None
    #: True when calls send text to another machine (an embedding server not on loopback).
    leaves_machine: bool = False

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
    #: Upper bound on texts per ONNX call.
    max_batch: int = 16
    #: Upper bound on padded tokens per ONNX call. Bigger batches are *slower*
    #: per text here (arena off → page faults; full-size attention masks):
    #: measured on 1 thread, short texts 58.7/s at batch 1, 63/s at 8, 29/s at
    #: 128; ~200-word texts 7.8/s at 1, 5.5/s at 8 (tests/perf/bench_embedder.py).
    #: So short texts go in small batches and long ones nearly alone.
    max_batch_tokens: int = 384
    #: Tokens per text; all-MiniLM-L6-v2 was trained on at most 256.
    max_tokens: int = 256
    #: Run a real-int8 copy of the model (inference/int8.py), one text per run:
    #: a batch would share one activation scale, so a text's vector would depend
    #: on its neighbours. Measured: cosine to the shipped vectors mean 0.994 / min
    #: 0.990 (tests/perf/bench_embedder.py); the sample vault indexed 1.8× faster,
    #: and on 144 labelled queries nDCG@10 / recall@10 within a point of fp32
    #: (hybrid −0.02 / +0.83, cosine alone −0.87 / −0.42; tests/perf/bench_retrieval.py).
    #: On by default (notes, search, scans and the guard alike); a
    #: model id of its own, so an index never mixes the two. ~5 s of preparation on
    #: first use, then cached; ``max_batch`` is then ignored. When the copy cannot be
    #: made, :func:`inference.engines.open_embedder` falls back to fp32 and says why.
    int8: bool = True


class OnnxEmbedder(Embedder):
    """all-MiniLM-L6-v2 (or any BERT-like ONNX encoder) on ONNX Runtime."""

    def __init__(
        self,
        model: ResolvedModel,
        settings: EmbedderSettings | None = None,
        *,
        onnx_path: Path | None = None,
    ) -> None:
        from tokenizers import Tokenizer

        self.settings = settings or EmbedderSettings()
        self.model = model
        self.name = model.title
        self.tokenizer_path = model.tokenizer
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

        if self.settings.int8:
            from inference.int8 import prepare_int8

            # A different name, so an index can tell these vectors from fp32 ones.
            self.name = f"{model.title} (int8)"
        self.model_id = f"{self.name}@{model.sha256[:16]}" if model.sha256 else self.name
        # An explicit onnx_path is used as given (e.g. an int8 copy already prepared).
        path = onnx_path or (prepare_int8(model) if self.settings.int8 else model.path)
        self._session = cpu_session(
            path,
            threads=self.settings.threads,
            what="choose a sentence-embedding model exported to ONNX, or remove the path from "
            "the settings to use the bundled default.",
        )
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
        for idx in self._batches(texts):
            out[idx] = self._embed_batch([texts[i] for i in idx])
        return out

    def _batches(self, texts: Sequence[str]) -> list[list[int]]:
        """Indices grouped for one ONNX call each: sorted by length (a short text is
        never padded to a long one), at most ``max_batch`` texts and about
        ``max_batch_tokens`` padded tokens per call. int8 runs one text per call,
        so each text's activations get their own quantisation scale."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        if self.settings.int8:
            return [[i] for i in order]
        s = self.settings
        batches: list[list[int]] = []
        current: list[int] = []
        for i in order:
            # ~4 characters a token, plus [CLS] and [SEP]; the longest is the last added.
            tokens = min(s.max_tokens, len(texts[i]) // 4 + 2)
            if current and (
                len(current) >= s.max_batch or (len(current) + 1) * tokens > s.max_batch_tokens
            ):
                batches.append(current)
                current = []
            current.append(i)
        if current:
            batches.append(current)
        return batches

    def close(self) -> None:
        self._session = None
