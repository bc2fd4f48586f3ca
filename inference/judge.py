"""The contradiction judge: P(contradiction, entailment, neutral) for two short texts.

A MiniLM-L6 cross-encoder we train ourselves (``scripts/judge/``), exported to
ONNX and shipped under ``models/judge/``. It reads ``[CLS] a [SEP] b [SEP]``
and answers three probabilities. A note pair has no premise/hypothesis
order, so :meth:`Judge.score` runs both orders and averages them: the answer
for ``(a, b)`` is the answer for ``(b, a)``.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from foundation.errors import ModelUnavailable
from inference.judge_graph import judge_file
from inference.note_model import NoteModel, load_note_model
from inference.onnx_session import cpu_session
from inference.paths import models_dir
from inference.registry import ResolvedModel

#: Column order of every score array.
LABELS = ("contradiction", "entailment", "neutral")
CONTRADICTION, ENTAILMENT, NEUTRAL = 0, 1, 2

Scores = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Thresholds:
    """Where a judge's probabilities become decisions. Calibrated per model file
    (``scripts/judge/calibrate.py``) and shipped with it in ``models/manifest.toml``."""

    #: A note pair is shown when its strongest sentence pair reaches this P(contradiction).
    contradiction: float = 0.5
    #: "high" confidence from this probability on.
    high: float = 0.85
    #: Two sentences share a subject (and may be judged) from this cosine on.
    min_cosine: float = 0.3
    #: Memory: the cited lines support a fact from this P(entailment) on.
    entailment: float = 0.5
    #: The guard warns from this P(contradiction) on.
    guard: float = 0.5

    @classmethod
    def from_mapping(cls, data: object) -> Thresholds:
        if not isinstance(data, dict):
            return cls()
        known = {k: float(v) for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


class Judge(ABC):
    """Scores text pairs; one row ``[P(contradiction), P(entailment), P(neutral)]`` per pair."""

    name: str = ""
    #: Identifies the weights (their sha256 prefix): cached verdicts are keyed by it.
    model_id: str = ""
    thresholds: Thresholds = Thresholds()
    #: The note-level decision trained on this judge's scores (None: decide on the
    #: strongest sentence pair at ``thresholds.contradiction``).
    note_model: NoteModel | None = None

    @abstractmethod
    def score(self, pairs: Sequence[tuple[str, str]]) -> Scores:
        """Probabilities of shape ``(len(pairs), 3)``, order-symmetric. Safe from any thread."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release native resources."""


@dataclass(frozen=True)
class JudgeSettings:
    threads: int = 1
    #: Pairs per ONNX call (each pair runs in both orders, so twice as many rows). One: the
    #: int8 judge quantises its activations per call, so a pair batched with others scored
    #: up to 0.11 apart from the same pair alone (0.70 / 0.81 for a sample-vault pair, across
    #: a 0.8 threshold), and a scan's verdicts moved when an unrelated note changed. Alone,
    #: a pair and its reverse are the same length: no padding, and the scan was faster too
    #: (22.5 s against 29.4–33.6 s for the sample vault's 149 whole-vault pairs).
    max_batch: int = 1
    #: Tokens per pair, both texts together; longer pairs are cut from the longer text.
    max_tokens: int = 128


def _softmax(logits: npt.NDArray[np.float32]) -> Scores:
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    out: Scores = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    return out


def _label_columns(model: ResolvedModel) -> list[int]:
    """Where the model answers each of :data:`LABELS`, as its manifest entry lists them."""
    labels = model.spec.extra.get("labels", list(LABELS)) if model.spec else list(LABELS)
    if not isinstance(labels, list) or sorted(map(str, labels)) != sorted(LABELS):
        raise ModelUnavailable(
            f"The manifest lists the judge's labels as {labels!r}; a judge answers "
            f"{', '.join(LABELS)} in some order — fix models/manifest.toml."
        )
    return [labels.index(label) for label in LABELS]


class OnnxJudge(Judge):
    """The shipped judge (or any 3-way BERT-style cross-encoder) on ONNX Runtime."""

    def __init__(self, model: ResolvedModel, settings: JudgeSettings | None = None) -> None:
        from tokenizers import Tokenizer

        self.settings = settings or JudgeSettings()
        self.model = model
        self.name = model.title
        self.model_id = f"{model.path.name}:{model.sha256[:12]}"
        if model.spec is not None:
            self.thresholds = Thresholds.from_mapping(model.spec.extra.get("thresholds"))
            entry = model.spec.extra.get("note_model")
            if isinstance(entry, dict) and entry.get("file"):
                self.note_model = load_note_model(
                    models_dir() / str(entry["file"]), sha256=entry.get("sha256")
                )
        if model.tokenizer is None:
            raise ModelUnavailable("The judge has no tokenizer — reinstall Antinomy.")
        try:
            tokenizer = Tokenizer.from_file(str(model.tokenizer))
        except Exception as exc:  # tokenizers raises plain Exception
            raise ModelUnavailable(
                f"The judge's tokenizer {model.tokenizer} cannot be read ({exc}) — "
                "reinstall Antinomy."
            ) from exc
        tokenizer.enable_truncation(max_length=self.settings.max_tokens, strategy="longest_first")
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tokenizer = tokenizer
        self._tok_lock = threading.Lock()
        path = judge_file(model)
        if path != model.path:
            self.model_id += "+int7"
        what = (
            "the judge file is damaged: reinstall Antinomy, or remove the judge path from "
            "the settings to use the bundled one."
        )
        try:
            self._session = cpu_session(path, threads=self.settings.threads, what=what)
        except ModelUnavailable:
            if path == model.path:
                raise
            path.unlink(missing_ok=True)  # a damaged cached copy: build it again, once
            self._session = cpu_session(judge_file(model), threads=self.settings.threads, what=what)
        self._inputs = {i.name for i in self._session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - self._inputs
        if missing:
            raise ModelUnavailable(
                f"{model.path} has no input named {', '.join(sorted(missing))}: it is not a "
                "BERT-style cross-encoder — choose the judge exported by scripts/judge/export.py."
            )
        #: Column of each of :data:`LABELS` in the model's output, from the manifest's
        #: ``labels`` (a user's file without an entry: the order export.py writes).
        self._columns = _label_columns(model)
        probe = self._logits([("a", "b")])
        if probe.shape != (1, len(LABELS)):
            raise ModelUnavailable(
                f"{model.path} answers shape {tuple(probe.shape)}, a judge answers (pairs, 3) "
                "logits (contradiction, entailment, neutral) — choose the judge exported by "
                "scripts/judge/export.py."
            )

    def _logits(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float32]:
        with self._tok_lock:
            enc = self._tokenizer.encode_batch([(a, b) for a, b in pairs])
        feed = {
            "input_ids": np.asarray([e.ids for e in enc], dtype=np.int64),
            "attention_mask": np.asarray([e.attention_mask for e in enc], dtype=np.int64),
        }
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.asarray([e.type_ids for e in enc], dtype=np.int64)
        (logits,) = self._session.run(None, feed)
        return np.asarray(logits, dtype=np.float32)[:, self._columns]

    def score(self, pairs: Sequence[tuple[str, str]]) -> Scores:
        n = len(pairs)
        out: Scores = np.zeros((n, len(LABELS)), dtype=np.float32)
        if n == 0:
            return out
        # Sorted by length so short pairs are not padded to a long neighbour.
        order = sorted(range(n), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        step = max(1, self.settings.max_batch)
        for start in range(0, n, step):
            idx = order[start : start + step]
            rows = [(pairs[i][0], pairs[i][1]) for i in idx]
            rows += [(b, a) for a, b in rows]
            probs = _softmax(self._logits(rows))
            k = len(idx)
            out[idx] = (probs[:k] + probs[k:]) / 2
        return out

    def close(self) -> None:
        self._session = None
