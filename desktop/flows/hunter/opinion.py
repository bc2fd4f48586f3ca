"""A second opinion from the user's own language-model server (opt-in, off by default).

Where the scan's language model is an OpenAI-compatible server (Settings: backend http) and
the scan is asked for it (``ScanSettings.second_opinion``, ``antinomy scan
--second-opinion``), each pair about to be shown is put to that server: do these two
sentences contradict? One word, yes or no, under the structured-output policy
(:mod:`inference.structured`), asked in both orders — a small model's answer can depend on
which sentence comes first.

The verdict is one more input of the note-level decision, read as an independent vote: a
"yes" both ways adds its weight to the pair's log-odds, a "no" both ways takes it away, a
split or an unusable answer changes nothing. Its weight starts at the log-odds of a server
right three times in four and is learned by this vault's calibration like any other feature
(``second_opinion``: +1, −1 or 0). Only pairs about to be shown are asked, so it can hide a
pair (``hidden_because="second_opinion"``), never show one. Every pair records whether it was
asked and what the server said; a server that fails three times in a row is not asked
about the rest, and the scan says so.

Blocking; the scan's worker thread.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from desktop.flows.hunter.prompt import template
from desktop.flows.hunter.records import Pair, SecondOpinionReport
from foundation.errors import AntinomyError
from inference.base import GenerationSettings, Generator, Message, StopFlag
from inference.http_backend import OpenAIHttpGenerator
from inference.note_model import NoteModel
from inference.structured import complete_structured

if TYPE_CHECKING:
    from desktop.flows.hunter.scan import ScanJob

log = logging.getLogger(__name__)

FEATURE = "second_opinion"
#: Said before a scan asks a server that is not on this machine (the CLI and the window).
OFF_MACHINE = (
    "the language model server {url} is not on this machine — the two sentences of every "
    "pair about to be shown are sent to it for a second opinion."
)
#: The vote's weight before the vault learns one: the log-odds of a server right 3 times in 4.
PRIOR_WEIGHT = math.log(0.75 / 0.25)
#: Failed requests in a row after which the server is not asked about the other pairs.
MAX_FAILURES = 3

#: The prompt's templates in ``resources/prompts/`` (the user message fills ``{first}`` and
#: ``{second}``).
SYSTEM_TEMPLATE = "second-opinion-system"
USER_TEMPLATE = "second-opinion-user"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"contradict": {"type": "string", "enum": ["yes", "no"]}},
    "required": ["contradict"],
}


def _shape(value: Any) -> str | None:
    if isinstance(value, dict):
        word = str(value.get("contradict", "")).strip().casefold()
        if word in ("yes", "no"):
            return word
    return None


def with_opinion(model: NoteModel, weight: float = PRIOR_WEIGHT) -> NoteModel:
    """``model`` with the server's vote as one more feature (a vote of 0 changes nothing)."""
    if FEATURE in model.features:
        return model
    return replace(
        model,
        features=(*model.features, FEATURE),
        mean=(*model.mean, 0.0),
        scale=(*model.scale, 1.0),
        weights=(*model.weights, weight),
    )


def is_server(engine: Generator) -> bool:
    """Whether the scan's language model is a server the user pointed Antinomy at."""
    return isinstance(engine, OpenAIHttpGenerator)


@dataclass
class SecondOpinion:
    """Asks ``engine`` about each pair; counts what it said and how long it took."""

    engine: Generator
    constrain: bool = True
    stop: StopFlag | None = None

    def __post_init__(self) -> None:
        self.asked = self.requests = self.yes = self.no = self.split = 0
        self.unusable = self.failed = self.hidden = 0
        self.seconds = 0.0
        self.error = ""
        self._in_a_row = 0

    def ask(self, pair: Pair) -> str:
        """ "yes" or "no" (both orders agree), "split", "unusable" (no readable answer) or
        "failed" (the server did not answer); "" when not asked."""
        if self._in_a_row >= MAX_FAILURES or (self.stop is not None and self.stop.is_set()):
            return ""
        self.asked += 1
        words = [self._one(pair.quote_a, pair.quote_b)]
        if words[0] != "failed":  # a server that did not answer is not kept waiting twice
            words.append(self._one(pair.quote_b, pair.quote_a))
        if "failed" in words:
            verdict = "failed"
            self.failed += 1
        elif "unusable" in words:
            verdict = "unusable"
            self.unusable += 1
        elif words[0] == words[1]:
            verdict = words[0]
            if verdict == "yes":
                self.yes += 1
            else:
                self.no += 1
        else:
            verdict = "split"
            self.split += 1
        return verdict

    def _one(self, first: str, second: str) -> str:
        self.requests += 1
        t0 = time.perf_counter()
        try:
            result = complete_structured(
                self.engine,
                [
                    Message("system", template(SYSTEM_TEMPLATE)),
                    Message("user", template(USER_TEMPLATE).format(first=first, second=second)),
                ],
                shape=_shape,
                schema=SCHEMA,
                settings=GenerationSettings(max_tokens=16, constrain=self.constrain),
                stop=self.stop,
            )
        except AntinomyError as exc:  # timeout, refused, unreachable
            self._in_a_row += 1
            self.error = str(exc)
            log.warning("second opinion failed: %s", exc)
            return "failed"
        finally:
            self.seconds += time.perf_counter() - t0
        self._in_a_row = 0
        return str(result.value) if result.status == "ok" else "unusable"

    def report(self, *, server: str, leaves_machine: bool, weight: float) -> SecondOpinionReport:
        gave_up = self._in_a_row >= MAX_FAILURES
        return SecondOpinionReport(
            asked=self.asked,
            requests=self.requests,
            yes=self.yes,
            no=self.no,
            split=self.split,
            unusable=self.unusable,
            failed=self.failed,
            hidden=self.hidden,
            seconds=round(self.seconds, 3),
            server=server,
            leaves_machine=leaves_machine,
            weight=round(weight, 4),
            error=(
                f"the server failed {MAX_FAILURES} times in a row ({self.error}); the other "
                "pairs were not asked"
                if gave_up
                else self.error
            ),
        )


def vote(verdict: str) -> float:
    """The verdict as the feature the note-level model reads."""
    return {"yes": 1.0, "no": -1.0}.get(verdict, 0.0)


def apply_opinion(
    pairs: list[Pair],
    opinion: SecondOpinion,
    model: NoteModel,
    confidence: Any,
) -> tuple[list[Pair], list[Pair]]:
    """Ask about each judged pair of ``pairs`` and decide again with the vote; returns the
    pairs still shown and those the vote hid. ``model`` decides (the server's vote among its
    features, :func:`with_opinion`); ``confidence(p)`` is the badge for a probability."""
    shown: list[Pair] = []
    hidden: list[Pair] = []
    for pair in pairs:
        verdict = opinion.ask(pair) if pair.features else ""
        if not verdict:
            shown.append(pair)
            continue
        features = {**pair.features, FEATURE: vote(verdict)}
        p = model.probability(features)
        pair = replace(
            pair,
            second_opinion=verdict,
            features=features,
            probability=round(p, 4),
            confidence=confidence(p),
        )
        if p >= model.threshold:
            shown.append(pair)
        else:
            opinion.hidden += 1
            hidden.append(replace(pair, hidden_because="second_opinion"))
    return shown, hidden


def ask_second_opinion(job: ScanJob) -> None:
    """The user's server's vote on each pair the job is about to show."""
    if job.opinion is None or not job.verifier.accepted:
        return
    model = with_opinion(job.judging.note_model or job.learning.prior)
    n = len(job.verifier.accepted)
    job.tick(0, 1, f"asking your server about {n} pair{'s' if n != 1 else ''}")
    shown, hidden = apply_opinion(job.verifier.accepted, job.opinion, model, job.judging.confidence)
    job.verifier.accepted[:] = shown
    job.hidden.extend(hidden)


def opinion_report(job: ScanJob) -> SecondOpinionReport:
    if job.opinion is None:
        why = ""
        if job.settings.second_opinion:
            why = (
                "not asked: the language model is not a server of yours (set the backend to "
                "an OpenAI-compatible server in Settings)"
            )
        return SecondOpinionReport(error=why)
    model = with_opinion(job.judging.note_model or job.learning.prior)
    return job.opinion.report(
        server=job.engine.backend_name,
        leaves_machine=isinstance(job.engine, OpenAIHttpGenerator) and job.engine.leaves_machine,
        weight=model.weights[model.features.index(FEATURE)],
    )
