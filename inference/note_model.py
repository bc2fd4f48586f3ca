"""The note-level decision: a small calibrated model over a note pair's features.

The judge scores sentence pairs; whether two *notes* contradict is decided by a logistic
regression over named features of the pair (its best and second-best judged sentence
pairs, how many pass, their alignment, how much of it is template — the caller computes
them, :func:`desktop.flows.judging.note_features`). It is trained on labelled note pairs
(``scripts/judge/note_model.py``) and calibrated so that a shown probability means what
it says; it ships with the judge in ``models/judge/`` as a small JSON file, pinned by
sha256 in ``models/manifest.toml``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from foundation.errors import ModelUnavailable

#: The file format this code reads (``format`` in the JSON).
FORMAT = "antinomy-note-model/1"


@dataclass(frozen=True)
class NoteModel:
    features: tuple[str, ...]
    #: Standardisation of each feature (x - mean) / scale, then the weights.
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    #: A pair is shown from this probability on, and called "high" from ``high`` on.
    threshold: float
    high: float
    model_id: str = ""

    def probability(self, values: Mapping[str, float]) -> float:
        """P(the two notes contradict). A feature the caller did not give counts as 0."""
        z = self.bias
        for name, m, s, w in zip(self.features, self.mean, self.scale, self.weights, strict=True):
            z += w * (float(values.get(name, 0.0)) - m) / s
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))

    def to_json(self) -> dict[str, object]:
        return {
            "format": FORMAT,
            "features": list(self.features),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "weights": list(self.weights),
            "bias": self.bias,
            "threshold": self.threshold,
            "high": self.high,
        }

    @classmethod
    def from_json(cls, data: object, *, model_id: str = "") -> NoteModel:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"not an {FORMAT} file")
        features = tuple(str(f) for f in data["features"])
        columns = [tuple(float(x) for x in data[k]) for k in ("mean", "scale", "weights")]
        if any(len(c) != len(features) for c in columns) or any(s <= 0 for s in columns[1]):
            raise ValueError("features, mean, scale and weights do not line up")
        return cls(
            features,
            columns[0],
            columns[1],
            columns[2],
            float(data["bias"]),
            float(data["threshold"]),
            float(data["high"]),
            model_id,
        )


def load_note_model(path: Path, *, sha256: str | None = None) -> NoteModel:
    """Read and check the note-level model at ``path`` (against ``sha256`` when given)."""
    fix = "reinstall Antinomy (`git checkout -- models/` in a source tree)"
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ModelUnavailable(f"The note-level model is missing at {path} — {fix}.") from exc
    digest = hashlib.sha256(raw).hexdigest()
    if sha256 is not None and digest != sha256:
        raise ModelUnavailable(
            f"{path} has sha256 {digest[:12]}…, expected {sha256[:12]}…: the note-level "
            f"model is corrupted — {fix}."
        )
    try:
        return NoteModel.from_json(json.loads(raw), model_id=f"{path.name}:{digest[:12]}")
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelUnavailable(f"{path} is not a note-level model ({exc}) — {fix}.") from exc
