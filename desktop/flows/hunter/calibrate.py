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
decides anything, three checks:

* the decisions must say the scan is wrong here more often than right (a binomial test on
  the pairs the prior showed): decisions that agree with the shipped calibration move
  nothing, however many there are;
* cross-validation on the decisions themselves: fitted without each fold, the update must
  get clearly more of that fold's decisions right than the prior (a sign test), else it is
  refused;
* no pair the user confirmed (elevated, resolved, defeated) that the prior shows may be
  hidden: a confirmation weighs as many dismissals as it takes to keep them all shown (up
  to ten), and if even that would hide one, the vault's threshold is held at it.

The vault's calibration only ever hides: every decision it learns from is about a pair the
prior showed, so nothing says what lies below the prior's threshold, and a pair the prior
does not show stays hidden (:meth:`Calibration.shows`).

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

Status = Literal["shipped", "too few", "vault", "held", "refused"]


@dataclass(frozen=True)
class LearningSettings:
    #: Decisions (with features) before the vault's calibration is fitted at all.
    min_decisions: int = 7
    #: Prior precision on the weights and on the bias (in the prior's standardised units):
    #: how many decisions it takes to move them.
    weight_prior: float = 8.0
    bias_prior: float = 2.0
    #: Folds of the cross-validation on the decisions (fewer decisions: one per fold).
    folds: int = 5
    #: The scan is trusted to be right about ``trust`` of the pairs it shows: the vault's
    #: calibration is fitted only when the decisions make that unlikely (a binomial test
    #: at ``alpha``: with nothing but dismissals, 7 are enough; with one confirmation, 11).
    trust: float = 0.5
    alpha: float = 0.01
    #: The update is kept only when, out of sample, it fixes at least ``min_gain`` more of
    #: the user's decisions than it breaks, and ``significance`` standard deviations more
    #: (a sign test: chance alone moves the difference by about √(fixed + broken)).
    min_gain: int = 3
    significance: float = 2.0
    #: What a confirmation weighs in the fit, in dismissals: the first of these that keeps
    #: every confirmed pair shown (the cross-validation judges the plain fit).
    confirmed_weights: tuple[float, ...] = (1.0, 2.0, 3.0, 5.0, 10.0)
    max_confirmed_weight: float = 10.0
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

    #: The model that decides (the prior itself unless the status is "vault" or "held").
    model: NoteModel
    prior: NoteModel
    status: Status = "shipped"
    #: Decisions the fit read (with features), of them positive.
    used: int = 0
    positives: int = 0
    #: Why the update was held back or refused, in words ("" when it was not).
    reason: str = ""
    #: Out of sample (cross-validation on the decisions): decisions the vault's calibration
    #: gets right where the prior errs, and the reverse.
    fixed: int = 0
    broken: int = 0
    #: What each confirmation weighed in the fit, in dismissals.
    weight: float = 1.0
    #: Confirmed pairs the fit would have hidden (the held threshold keeps them shown).
    protected: tuple[tuple[str, str], ...] = field(default=())

    @property
    def learned(self) -> bool:
        return self.status in ("vault", "held")

    def shows(self, features: Mapping[str, float]) -> bool:
        """Whether the vault's calibration shows a pair with these features. It only ever
        hides: a pair the prior does not show stays hidden, since the decisions it learned
        from are all about pairs the prior showed (no label says what lies below)."""
        if self.prior.probability(features) < self.prior.threshold:
            return False
        return self.model.probability(features) >= self.model.threshold


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
    cut = logit(prior.threshold)
    shown = x @ theta0 >= cut
    n, right = int(shown.sum()), int((shown & (y == 1)).sum())
    chance = binomial_tail(right, n, settings.trust)
    if chance >= settings.alpha:
        return replace(
            base,
            status="refused",
            reason=(
                f"the scan was right about {right} of the {n} pairs it showed that you "
                f"decided — not clearly wrong more often than right (a {chance:.1%} chance)"
            ),
        )
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
    # No pair the user confirmed that the prior shows may be hidden. Confirmations are rare:
    # each weighs as many dismissals as it takes to keep them shown (up to a bound); if
    # even that would hide one, the threshold is held at the lowest of them.
    confirmed = [i for i, e in enumerate(examples) if e.positive and _z(theta0, x[i]) >= cut]
    ladder = [w for w in settings.confirmed_weights if w <= settings.max_confirmed_weight]
    for weight in ladder if confirmed else ladder[:1]:
        theta = _fit(x, y, theta0, settings, positive_weight=weight)
        hidden = [i for i in confirmed if _z(theta, x[i]) < cut]
        if not hidden:
            return replace(base, model=_as_model(prior, theta), status="vault", weight=weight)
    shift = min(_z(theta, x[i]) for i in hidden) - cut - 1e-6
    protected = tuple(examples[i].pair for i in hidden)
    return replace(
        base,
        model=_as_model(prior, theta, shift_by=shift),
        status="held",
        weight=weight,
        reason=f"threshold held so that {_count(protected)} you confirmed stays shown",
        protected=protected,
    )


def _count(pairs: Sequence[tuple[str, str]]) -> str:
    return "the pair" if len(pairs) == 1 else f"{len(pairs)} pairs"


def binomial_tail(k: int, n: int, p: float) -> float:
    """P(at most ``k`` successes in ``n`` trials of probability ``p``)."""
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1)) if n else 1.0


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
    *,
    positive_weight: float = 1.0,
) -> npt.NDArray[np.float64]:
    """MAP logistic regression by Newton's method, Gaussian prior centred on ``theta0``."""
    reg = np.full(len(theta0), settings.weight_prior)
    reg[-1] = settings.bias_prior
    c = np.where(y == 1, positive_weight, 1.0)
    theta = theta0.copy()
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ theta, -40, 40)))
        grad = x.T @ (c * (p - y)) + reg * (theta - theta0)
        hess = (x * (c * p * (1 - p))[:, None]).T @ x + np.diag(reg)
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
        shown_prior = x[test] @ theta0 >= cut
        right_prior = shown_prior == truth
        right_vault = (shown_prior & (x[test] @ theta >= cut)) == truth
        fixed += int((right_vault & ~right_prior).sum())
        broken += int((right_prior & ~right_vault).sum())
    return fixed, broken


def _as_model(
    prior: NoteModel, theta: npt.NDArray[np.float64], *, shift_by: float = 0.0
) -> NoteModel:
    """``theta`` as the prior's probability scale: the prior's bias kept, the bias shift
    turned into the vault's thresholds (shown and high), the weights the vault's;
    ``shift_by`` (≤ 0) lowers the threshold by that many logits."""
    shift = float(theta[-1]) - prior.bias - shift_by
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
