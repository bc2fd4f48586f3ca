"""What a scan learns from the user's review decisions, and what it does with it.

One :class:`ScanLearning` per scan (blocking, the scan's worker thread):

1. it reads the vault's labels (:mod:`desktop.flows.hunter.labels`; rebuilt from the notes when
   ``.antinomy/`` lost them) and the frames the user hid;
2. it names the labelled pairs whose features this judge has not scored yet, for the scan
   to judge them again (a bounded number per scan);
3. once the scan has judged, it keeps the features of every labelled pair it saw (and turns
   a dismissal written in the notes but unknown to the labels into a label), and fits the
   vault's calibration (:func:`~desktop.flows.hunter.calibrate.calibrate`);
4. each pair that passes is shown, or hidden with its reason: the vault's calibration does
   not show it although the shipped one would, or its sentence pair's frame is one the user
   hid; the counts and one line saying so go into ``ScanRun.learning``;
5. at the end the new features and the calibration are merged into the file under its lock,
   so a decision made meanwhile (in the window) is never overwritten.

Trouble with the file never stops a scan: the shipped calibration decides and the report
says why.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from desktop.flows.hunter.calibrate import (
    Calibration,
    Example,
    LearningSettings,
    calibrate,
    threshold_prior,
)
from desktop.flows.hunter.dismissals import dismisses
from desktop.flows.hunter.labels import (
    LEARNED_FILE,
    Label,
    LabelStore,
    Learned,
    frame_key,
    now,
    pair_key,
    rebuild,
    record,
)
from desktop.flows.hunter.opinion import with_opinion
from desktop.flows.hunter.records import LearningReport, Pair
from desktop.flows.hunter.verify import NoteInPrompt
from desktop.flows.judging import NotePairVerdict, note_names
from desktop.flows.progress import plural
from desktop.vault.errors import VaultError
from inference.judge import Judge
from inference.note_model import NoteModel

if TYPE_CHECKING:
    from desktop.flows.hunter.scan import ScanJob

log = logging.getLogger(__name__)

#: Labelled pairs without features judged again by one scan, at most.
MAX_JUDGED_AGAIN = 100


@dataclass
class _Seen:
    """What this scan learned about the labels: pair key → (features, judge id)."""

    features: dict[tuple[str, str], dict[str, float]]
    #: Pairs dismissed in the notes that the labels did not know, and dismissals the notes
    #: no longer hold.
    dismissed: set[tuple[str, str]]
    undone: set[tuple[str, str]]


class ScanLearning:
    """The user's decisions in one scan. A missing or unreadable store leaves the shipped
    calibration deciding (``report.error`` says why)."""

    def __init__(
        self,
        root: Path,
        judge: Judge,
        settings: LearningSettings | None = None,
        *,
        opinion: bool = False,
    ) -> None:
        """``opinion``: the user's server is asked for a second opinion, whose vote is one
        more feature of the prior (:func:`~desktop.flows.hunter.opinion.with_opinion`)."""
        self.store = LabelStore(root)
        self.judge_id = judge.model_id
        self.settings = settings or LearningSettings()
        self.shipped: NoteModel | None = judge.note_model
        self.shipped_threshold = judge.thresholds.contradiction
        self.prior = judge.note_model or threshold_prior(
            judge.thresholds, slope=self.settings.threshold_slope
        )
        if opinion:
            self.prior = with_opinion(self.prior)
        self.error = ""
        #: False when the file cannot be used at all (a link in its place, an unreadable
        #: folder): nothing is learned or kept, the shipped calibration decides.
        self.usable = True
        self.learned = Learned()
        try:
            self.learned = self.store.read()
        except ValueError as exc:
            self.error = (
                f"what was learned could not be read ({exc}); your decisions were read back "
                f"from the notes (the damaged file is kept as {LEARNED_FILE}.damaged)"
            )
            self.learned = rebuild(root)
        except (OSError, VaultError) as exc:
            self.usable = False
            self.error = (
                f"what was learned could not be read ({exc}); the shipped calibration decided"
            )
        if self.error:
            log.warning("%s", self.error)
        self.labels: dict[tuple[str, str], Label] = {
            pair_key(lab.a, lab.b): lab for lab in self.learned.active()
        }
        self.frames = {f.key for f in self.learned.frames}
        self.seen = _Seen({}, set(), set())
        self.calibration: Calibration | None = None
        self.judged_again = 0
        self.hidden_by_calibration = 0
        self.hidden_like = 0

    # -- before judging ----------------------------------------------------

    def pairs_to_judge_again(
        self, judged: Iterable[tuple[str, str]], loadable: Callable[[list[str]], list[str]]
    ) -> list[tuple[str, str]]:
        """Labelled pairs this judge has no features for, not judged anyway, both notes
        readable (``loadable`` loads them and returns those it could)."""
        already = {pair_key(a, b) for a, b in judged}
        todo: list[tuple[str, str]] = []
        for key, lab in sorted(self.labels.items(), key=lambda kv: kv[1].at, reverse=True):
            if len(todo) >= MAX_JUDGED_AGAIN:
                break
            if key in already or lab.features_for(self.judge_id) is not None:
                continue
            if len(loadable(list(key))) == 2:
                todo.append(key)
        self.judged_again = len(todo)
        return todo

    # -- after judging -----------------------------------------------------

    def observe(
        self, verdicts: Sequence[NotePairVerdict], dismissed: Callable[[str, str], bool]
    ) -> None:
        """Keep the features of every labelled pair judged; a pair dismissed in the notes
        the labels did not know becomes a label (a decision is never lost)."""
        if not self.usable:
            return
        for v in verdicts:
            if not v.features:
                continue
            key = pair_key(v.path_a, v.path_b)
            lab = self.labels.get(key)
            # Set aside by a reset, a label stays set aside: only a decision the file never
            # heard of is read from the notes.
            known = key in self.learned.labels
            in_notes = dismissed(v.path_a, v.path_b)
            if lab is None and not known and in_notes:
                lab = Label(key[0], key[1], positive=False, action="dismiss", source="notes")
                self.seen.dismissed.add(key)
            elif lab is not None and lab.action == "dismiss" and not in_notes:
                # The notes no longer dismiss it (`tx undo`, an edit by hand): taken back.
                del self.labels[key]
                self.seen.undone.add(key)
                continue
            if lab is None:
                continue
            # What the judge does not score (the server's vote, when it was asked) is kept.
            kept = lab.features_for(self.judge_id) or {}
            features = {**{k: x for k, x in kept.items() if k not in v.features}, **v.features}
            self.seen.features[key] = features
            self.labels[key] = replace(lab, features=features, judge=self.judge_id)

    def fit(self) -> NoteModel | None:
        """The vault's calibration from the labels; the model that decides, or None when the
        shipped decision stands."""
        if not self.usable:
            return None
        examples = [
            Example(feats, lab.positive, (lab.a, lab.b))
            for lab in self.labels.values()
            if (feats := lab.features_for(self.judge_id)) is not None
        ]
        self.calibration = calibrate(self.prior, examples, self.settings)
        return self.calibration.model if self.calibration.learned else None

    def shipped_shows(self, verdict: NotePairVerdict) -> bool:
        """What the shipped calibration decides (``verdict`` as the judge scored it)."""
        if verdict.best is None:
            return False
        if self.shipped is not None and verdict.probability is not None:
            return verdict.probability >= self.shipped.threshold
        return verdict.sentence_contradiction >= self.shipped_threshold

    def hidden_pair(self, pair: Pair, *, shown: bool) -> Pair:
        """``pair`` (which the shipped calibration shows) marked hidden when the vault's
        calibration does not show it."""
        if not shown:
            self.hidden_by_calibration += 1
            return replace(pair, hidden_because="calibration")
        return pair

    def like_dismissed(self, pair: Pair, names: Mapping[str, Iterable[str]]) -> bool:
        """Whether ``pair``'s two sentences have a frame the user hid (``names``: each note's
        title and aliases)."""
        if not self.frames:
            return False
        key = frame_key(
            pair.quote_a,
            note_names(pair.path_a, *names.get(pair.path_a, ())),
            pair.quote_b,
            note_names(pair.path_b, *names.get(pair.path_b, ())),
        )
        if key in self.frames:
            self.hidden_like += 1
            return True
        return False

    # -- the report and the file --------------------------------------------

    def report(self) -> LearningReport:
        labels = list(self.labels.values())
        cal = self.calibration
        used = cal.used if cal is not None else 0
        learned = cal is not None and cal.learned
        return LearningReport(
            decisions=len(labels),
            used=used,
            waiting=sum(lab.features_for(self.judge_id) is None for lab in labels),
            positives=sum(lab.positive for lab in labels),
            judged_again=self.judged_again,
            calibration=cal.status if cal is not None else "shipped",
            reason=cal.reason if cal is not None else "",
            threshold_shipped=self.prior.threshold if self.shipped is not None else None,
            threshold_vault=cal.model.threshold if cal is not None and learned else None,
            min_decisions=self.settings.min_decisions,
            hidden_by_calibration=self.hidden_by_calibration,
            hidden_like=self.hidden_like,
            frames=len(self.frames),
            message=self._message(len(labels)),
            error=self.error,
        )

    def _message(self, decisions: int) -> str:
        cal = self.calibration
        if not decisions and not self.frames:
            return ""
        parts: list[str] = []
        if cal is None or cal.status in ("shipped", "too few"):
            if decisions:
                parts.append(
                    f"{plural(decisions, 'decision')} of yours kept; this vault's calibration "
                    f"starts at {self.settings.min_decisions} judged ones "
                    f"({cal.used if cal else 0} so far)"
                )
        elif cal.status == "refused":
            parts.append(
                f"{cal.used} of your decisions read; the shipped calibration still decides: "
                f"{cal.reason}"
            )
        else:
            shift = ""
            if self.shipped is not None and cal.model.threshold != cal.prior.threshold:
                shift = f", threshold {cal.prior.threshold:.2f} → {cal.model.threshold:.2f}"
            parts.append(f"{cal.used} of your decisions used{shift}")
            if cal.status == "held":
                parts.append(cal.reason)
        waiting = sum(lab.features_for(self.judge_id) is None for lab in self.labels.values())
        if waiting:
            parts.append(f"{waiting} wait for a scan that judges their pair")
        if self.hidden_by_calibration:
            parts.append(
                f"{plural(self.hidden_by_calibration, 'pair')} like ones you dismissed "
                f"{'is' if self.hidden_by_calibration == 1 else 'are'} hidden"
            )
        if self.hidden_like:
            parts.append(
                f"{plural(self.hidden_like, 'pair')} with sentences like a pair you dismissed "
                f"“all like this” {'is' if self.hidden_like == 1 else 'are'} hidden"
            )
        return "; ".join(parts)

    def save(self) -> None:
        """Merge what this scan learned into the file (under its lock); trouble is reported
        in ``report.error``, never raised: the decisions themselves are in the notes and in
        the file as it was."""
        if not self.usable or (
            not self.seen.features
            and not self.seen.dismissed
            and not self.seen.undone
            and self.calibration is None
        ):
            return
        cal = self.calibration
        try:
            with self.store.editing() as learned:
                for key, features in self.seen.features.items():
                    lab = learned.labels.get(key)
                    if lab is not None:
                        learned.labels[key] = replace(lab, features=features, judge=self.judge_id)
                    elif key in self.seen.dismissed:
                        record(
                            learned,
                            [key],
                            action="dismiss",
                            features={key: (features, self.judge_id)},
                            source="notes",
                        )
                for key in self.seen.undone:
                    lab = learned.labels.get(key)
                    if lab is not None and lab.action == "dismiss":
                        del learned.labels[key]
                if cal is not None:
                    learned.calibration[self.judge_id] = calibration_summary(cal)
        except (OSError, ValueError, TypeError, VaultError) as exc:
            self.error = (self.error + "; " if self.error else "") + (
                f"what this scan learned could not be kept ({exc})"
            )
            log.warning("%s", self.error)


def calibration_summary(cal: Calibration) -> dict[str, object]:
    """The calibration as ``antinomy learned`` shows it."""
    moved = sorted(
        (
            (name, round(w - w0, 3))
            for name, w, w0 in zip(
                cal.prior.features, cal.model.weights, cal.prior.weights, strict=True
            )
            if abs(w - w0) >= 0.001
        ),
        key=lambda kv: -abs(kv[1]),
    )
    return {
        "at": now(),
        "status": cal.status,
        "used": cal.used,
        "positives": cal.positives,
        "reason": cal.reason,
        "threshold_shipped": cal.prior.threshold,
        "threshold_vault": cal.model.threshold,
        "high_vault": cal.model.high,
        "fixed": cal.fixed,
        "broken": cal.broken,
        "weights_moved": dict(moved[:5]),
        "prior": cal.prior.model_id,
        "model": cal.model.to_json() | {"model_id": cal.model.model_id} if cal.learned else None,
    }


def dismissed(loaded: Mapping[str, NoteInPrompt], a: str, b: str) -> bool:
    """The pair is dismissed (in the notes or in ``.antinomy/``), whichever way round."""
    na, nb = loaded.get(a), loaded.get(b)
    if na is None or nb is None:
        return False
    return dismisses(na.path, na.dismissed, nb.path, nb.dismissed)


def hide_like_dismissed(job: ScanJob) -> None:
    """The job's shown pairs whose sentence pair has a frame the user hid go to its hidden."""
    kept: list[Pair] = []
    for pair in job.verifier.accepted:
        if job.learning.like_dismissed(pair, job.names):
            job.hidden.append(replace(pair, hidden_because="like"))
        else:
            kept.append(pair)
    job.verifier.accepted[:] = kept
