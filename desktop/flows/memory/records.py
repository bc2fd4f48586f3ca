"""What a consolidation run is told and what it answers: its settings, the facts it
accepted, its report, and the run's state as it goes (shared by :mod:`.consolidate` and
:mod:`.write_step`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from desktop.flows.memory.extract import LineOutcome
from desktop.flows.memory.pages import DEFAULT_FOLDER
from desktop.flows.memory.rejected import RejectedFragment
from desktop.flows.memory.support import SUPPORT_THRESHOLD
from desktop.flows.progress import Progress

Status = Literal["ok", "nothing", "empty", "already_running", "json_failure", "stopped"]
#: (steps done, steps planned, what is happening)
ProgressFn = Progress


@dataclass(frozen=True)
class MemorySettings:
    subjects_folder: str = DEFAULT_FOLDER
    memory_folder: str = "Antinomy/Memory"
    #: Lines per step (one transaction each).
    max_lines_per_step: int = 40
    #: Candidates routed by the model per run (the rest stays pending for the next run).
    max_candidates_per_run: int = 200
    #: Tokens the model may write per routing answer.
    max_route_tokens: int = 120
    threshold: float = SUPPORT_THRESHOLD
    #: Write a model-written summary line on each touched page (else the first facts).
    model_summaries: bool = True


@dataclass(frozen=True)
class AcceptedFact:
    subject: str
    section: str
    text: str
    citations: tuple[str, ...]
    kind: str
    date: str | None
    page: str
    support: float
    #: ``rephrased`` (the model's wording passed the gate) or ``verbatim`` (the user's words).
    wording: str = "verbatim"
    #: Why the model's rephrasing was not used.
    fallback_reason: str = ""
    #: The judge's P(entailment) of cited lines → text (None: no judge).
    entailment: float | None = None
    #: The model's subject name, when code refused it (and why).
    subject_refused: str = ""


@dataclass(frozen=True)
class Report:
    status: Status
    accepted: tuple[AcceptedFact, ...] = ()
    rejected: tuple[RejectedFragment, ...] = ()
    #: Facts already on their page (not written twice).
    duplicates: int = 0
    steps: int = 0
    lines_read: int = 0
    lines_consumed: int = 0
    #: Input still pending when the run ended (budget, Stop, failure).
    lines_pending: int = 0
    #: What happened to each line read: its outcome (see :mod:`.extract`) and where it went.
    lines: tuple[LineOutcome, ...] = ()
    #: Lines per outcome.
    line_counts: dict[str, int] = field(default_factory=dict)
    candidates: int = 0
    operations: tuple[str, ...] = ()
    pages: tuple[str, ...] = ()
    #: Summary source per touched page: ``model`` or ``first_facts``.
    summaries: dict[str, str] = field(default_factory=dict)
    judge_used: bool = False
    embedder_used: bool = False
    #: json_failure: where the raw answers are, and the start of the first one.
    debug_path: str = ""
    extract: str = ""
    message: str = ""
    seconds: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    finished_at: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Run:
    """What a run has done so far (mutable, one thread)."""

    accepted: list[AcceptedFact] = field(default_factory=list)
    rejected: list[RejectedFragment] = field(default_factory=list)
    duplicates: int = 0
    steps: int = 0
    lines_read: int = 0
    lines_consumed: int = 0
    candidates: int = 0
    lines: list[LineOutcome] = field(default_factory=list)
    operations: list[str] = field(default_factory=list)
    pages: list[str] = field(default_factory=list)
    summaries: dict[str, str] = field(default_factory=dict)
    tokens_in: int = 0
    tokens_out: int = 0
