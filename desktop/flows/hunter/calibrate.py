"""The vault's own calibration: the note-level decision moved towards the user's decisions.

The prior is what ships: the judge's note-level model (:class:`~inference.note_model.NoteModel`),
or, for a judge without one, a model that shows exactly what its threshold on the strongest
sentence pair shows (:func:`threshold_prior`). The user's decisions — a dismissal is a
negative, an elevation, resolution or defeat a positive, each with the features the scan
judged the pair on — move it by a regularised logistic regression whose penalty pulls every
weight back to the prior's (maximum a posteriori under a Gaussian prior centred on the
shipped model): a handful of decisions moves it a little, a consistent run of them more.

The result is read as the prior's probability with the vault's own weights and a vault
threshold (the fitted bias shift turned into a threshold on the prior's scale). Before it
decides anything, two checks:

* cross-validation on the decisions themselves: fitted without each fold, the update must
  err on no more of that fold's decisions than the prior does, else it is refused;
* no pair the user confirmed (elevated, resolved, defeated) that the prior shows may be
  hidden: the update is cut (half, a quarter…) until none is, or refused.

Pure computation (NumPy), no I/O; any thread.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
import numpy.typing as npt

from desktop.flows.judging import FEATURES
from inference.judge import Thresholds
from inference.note_model import NoteModel

Status = Literal["shipped", "too few", "vault", "cut", "refused"]


@dataclass(frozen=True)
class LearningSettings:
    #: Decisions (with features) before the vault's calibration is fitted at all.
    min_decisions: int = 5
    #: Prior precision on the weights and on the bias (in the prior's standardised units):
    #: how many decisions it takes to move them.
    weight_prior: float = 8.0
    bias_prior: float = 2.0
    #: Folds of the cross-validation on the decisions (fewer decisions: one per fold).
    folds: int = 5
    #: The update is kept only when, out of sample, it fixes at least ``min_gain`` more of
    #: the user's decisions than it breaks, and ``significance`` standard deviations more
    #: (a sign test: chance alone moves the difference by about √(fixed + broken)).
    min_gain: int = 3
    significance: float = 2.0
    #: Fractions of the update tried, in order, until no confirmed pair is hidden.
    strengths: tuple[float, ...] = (1.0, 0.5, 0.25)
    #: A judge without a note-level model: the prior's slope on the strongest sentence
    #: pair's probability, per unit of probability.
    threshold_slope: float = 6.0


@dataclass(frozen=True)
class Example:
    """One decision as the calibration reads it."""

    features: Mapping[str, float]
    positive: bool
    #: Which pair (for the report): vault-relative paths.
    pair: tuple[str, str] = ("", "")


@dataclass(frozen=True)
class Calibration:
    """What decides this vault's scan, and how it came about."""

    #: The model that decides (the prior itself unless the status is "vault" or "cut").
    model: NoteModel
    prior: NoteModel
    status: Status = "shipped"
    #: Decisions the fit read (with features), of them positive.
    used: int = 0
    positives: int = 0
    #: The share of the fitted update that was kept (1: all, 0: none).
    strength: float = 0.0
    #: Why the update was cut or refused, in words ("" when it was not).
    reason: str = ""
    #: Out of sample (cross-validation on the decisions): decisions the vault's calibration
    #: gets right where the prior errs, and the reverse.
    fixed: int = 0
    broken: int = 0
    #: Confirmed pairs the full update would have hidden (the cut keeps them shown).
    protected: tuple[tuple[str, str], ...] = field(default=())

    @property
    def learned(self) -> bool:
        return self.status in ("vault", "cut")


def threshold_prior(thresholds: Thresholds, *, slope: float = 6.0) -> NoteModel:
    """A note-level model that shows what ``thresholds`` show on the strongest sentence pair:
    P = σ(slope·(best − contradiction)), shown from 0.5, the same ranking. Features in their
    own units (the count of passing sentence pairs in fours)."""
    t = thresholds.contradiction
    weights = tuple(slope if f == "best" else 0.0 for f in FEATURES)
    scale = tuple(4.0 if f == "passing" else 1.0 for f in FEATURES)
    return NoteModel(
        features=FEATURES,
        mean=tuple(0.0 for _ in FEATURES),
        scale=scale,
        weights=weights,
        bias=-slope * t,
        threshold=0.5,
        high=_sigmoid(slope * (thresholds.high - t)),
        model_id=f"threshold {t:.2f} on the strongest sentence pair",
    )


def calibrate(
    prior: NoteModel,
    examples: Sequence[Example],
    settings: LearningSettings | None = None,
) -> Calibration:
    """The vault's calibration from ``examples`` (decisions with features), prior first."""
    settings = settings or LearningSettings()
    positives = sum(e.positive for e in examples)
    base = Calibration(model=prior, prior=prior, used=len(examples), positives=positives)
    if len(examples) < settings.min_decisions:
        return replace(base, status="too few")
    x = _matrix(prior, examples)
    y = np.array([1.0 if e.positive else 0.0 for e in examples])
    theta0 = np.array([*prior.weights, prior.bias])
    theta = _fit(x, y, theta0, settings)
    fixed, broken = _cross_validate(x, y, theta0, prior, settings)
    base = replace(base, fixed=fixed, broken=broken)
    if fixed - broken < max(settings.min_gain, settings.significance * math.sqrt(fixed + broken)):
        return replace(
            base,
            status="refused",
            reason=(
                f"fitted without them, it decided {fixed} of your decisions as you did where "
                f"the shipped calibration did not, and {broken} the other way round: not "
                "enough to say this vault differs"
            ),
        )
    cut = logit(prior.threshold)
    confirmed = [i for i, e in enumerate(examples) if e.positive and _z(theta0, x[i]) >= cut]
    protected: list[tuple[str, str]] = []
    for strength in settings.strengths:
        step = theta0 + strength * (theta - theta0)
        hidden = [i for i in confirmed if _z(step, x[i]) < cut]
        if not hidden:
            model = _as_model(prior, step)
            status: Status = "vault" if strength == settings.strengths[0] else "cut"
            reason = (
                ""
                if status == "vault"
                else f"cut to {strength:.0%} so that {_count(protected)} you confirmed stays shown"
            )
            return replace(
                base,
                model=model,
                status=status,
                strength=strength,
                reason=reason,
                protected=tuple(protected),
            )
        if not protected:
            protected = [examples[i].pair for i in hidden]
    return replace(
        base,
        status="refused",
        reason=f"any update would hide {_count(protected)} you confirmed",
        protected=tuple(protected),
    )


def _count(pairs: Sequence[tuple[str, str]]) -> str:
    return "the pair" if len(pairs) == 1 else f"{len(pairs)} pairs"


def logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


def _matrix(prior: NoteModel, examples: Sequence[Example]) -> npt.NDArray[np.float64]:
    """Standardised features as the prior reads them, with a column of ones for the bias."""
    mean, scale = np.array(prior.mean), np.array(prior.scale)
    rows = [[float(e.features.get(f, 0.0)) for f in prior.features] for e in examples]
    x = (np.array(rows, dtype=np.float64).reshape(len(examples), len(mean)) - mean) / scale
    return np.hstack([x, np.ones((len(examples), 1))])


def _z(theta: npt.NDArray[np.float64], row: npt.NDArray[np.float64]) -> float:
    return float(row @ theta)


def _fit(
    x: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    theta0: npt.NDArray[np.float64],
    settings: LearningSettings,
) -> npt.NDArray[np.float64]:
    """MAP logistic regression by Newton's method, Gaussian prior centred on ``theta0``."""
    reg = np.full(len(theta0), settings.weight_prior)
    reg[-1] = settings.bias_prior
    theta = theta0.copy()
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ theta, -40, 40)))
        grad = x.T @ (p - y) + reg * (theta - theta0)
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(reg)
        step = np.linalg.solve(hess, grad)
        theta -= step
        if np.abs(step).max() < 1e-8:
            break
    return theta


def _cross_validate(
    x: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    theta0: npt.NDArray[np.float64],
    prior: NoteModel,
    settings: LearningSettings,
) -> tuple[int, int]:
    """Out of sample: decisions the fit gets right where the prior errs, and the reverse."""
    n = len(y)
    folds = max(2, min(settings.folds, n))
    cut = logit(prior.threshold)
    order = np.arange(n)
    fixed = broken = 0
    for k in range(folds):
        test = order % folds == k
        theta = _fit(x[~test], y[~test], theta0, settings)
        truth = y[test] == 1
        right_prior = (x[test] @ theta0 >= cut) == truth
        right_vault = (x[test] @ theta >= cut) == truth
        fixed += int((right_vault & ~right_prior).sum())
        broken += int((right_prior & ~right_vault).sum())
    return fixed, broken


def _as_model(prior: NoteModel, theta: npt.NDArray[np.float64]) -> NoteModel:
    """``theta`` as the prior's probability scale: the prior's bias kept, the bias shift
    turned into the vault's thresholds (shown and high), the weights the vault's."""
    shift = float(theta[-1]) - prior.bias
    return NoteModel(
        features=prior.features,
        mean=prior.mean,
        scale=prior.scale,
        weights=tuple(float(w) for w in theta[:-1]),
        bias=prior.bias,
        threshold=_sigmoid(logit(prior.threshold) - shift),
        high=_sigmoid(logit(prior.high) - shift),
        model_id=f"{prior.model_id} + this vault's decisions",
    )
