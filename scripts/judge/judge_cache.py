"""A judge whose sentence-pair scores are kept on disk between runs of the training tools.

The note-level model's features change more often than the judge: recomputing them should
not mean scoring every sentence pair again. :class:`CachedJudge` wraps an
:class:`~inference.judge.OnnxJudge`; pairs it has scored (keyed by the judge's model id
and the two texts) come from the cache, the rest from the judge. Not part of the runtime.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from inference.judge import OnnxJudge


class CachedJudge:
    def __init__(self, judge: OnnxJudge, path: Path) -> None:
        self.judge = judge
        self.path = path
        self.model_id = judge.model_id
        self.thresholds = judge.thresholds
        self.note_model = judge.note_model
        self._scores: dict[str, list[float]] = {}
        self._dirty = False
        if path.is_file():
            saved = json.loads(path.read_text(encoding="utf-8"))
            if saved.get("model_id") == judge.model_id:
                self._scores = saved["scores"]

    def _key(self, a: str, b: str) -> str:
        return hashlib.sha1(f"{a}\x00{b}".encode()).hexdigest()

    def score(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros((0, 3), dtype=np.float32)
        keys = [self._key(a, b) for a, b in pairs]
        todo = [i for i, k in enumerate(keys) if k not in self._scores]
        if todo:
            fresh = self.judge.score([pairs[i] for i in todo])
            for i, row in zip(todo, fresh, strict=True):
                self._scores[keys[i]] = [float(v) for v in row]
            self._dirty = True
        return np.array([self._scores[k] for k in keys], dtype=np.float32).reshape(len(pairs), -1)

    def save(self) -> None:
        if self._dirty:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps({"model_id": self.model_id, "scores": self._scores}))
            tmp.replace(self.path)
            self._dirty = False
