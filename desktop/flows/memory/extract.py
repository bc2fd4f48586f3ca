"""Extraction in code: the candidate facts of a batch are the user's own declarative statements.

Each raw line of a step gets exactly one :class:`LineOutcome`, so the report can
say what happened to every line. A user line is split into sentences; a
sentence becomes a :class:`Candidate` unless it is

``assistant``    spoken by the assistant (never a fact on its own)
``withdrawn``    withdrawn by the user ("forget what I just said")
``question``     a question ("What does idempotent mean?", "Can you …")
``request``      a request or command to the assistant ("Show me …", "Give me …")
``greeting``     a greeting, thanks or acknowledgement ("ok", "Thanks, that helps.")
``hedge``        a hedged or uncertain statement ("maybe", "I think", "not sure")
``secret``       it holds a masked secret (a page would only keep the mask)
``tool_output``  code, a log, a path or a command, not words
``fragment``     too few content words to be a fact (three; two when the user speaks of
                 themselves: "I am allergic to penicillin.")

A short user line that answers an assistant question ("Which day?" →
"Tuesday.") is completed with that question as context and cited to both
lines; a short reply that only puts off a yes-or-no question ("Should I add a
test?" → "Later.": no number, date word or name) stays a fragment, set aside
with its reason. The candidate carries its line ids from the start: the model never
chooses a citation, so a citation cannot be wrong.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from desktop.flows.memory.batches import RawLine
from desktop.flows.memory.support import content_words, fold
from desktop.flows.sentences import is_command_line, split_block
from desktop.vault.stopwords import word_set

Outcome = Literal[
    "candidate",
    "assistant",
    "withdrawn",
    "question",
    "request",
    "greeting",
    "hedge",
    "secret",
    "tool_output",
    "fragment",
]
#: Every outcome but "candidate": the line is kept out of memory, with its reason.
EXCLUDED: tuple[Outcome, ...] = tuple(o for o in get_args(Outcome) if o != "candidate")
#: A statement needs this many content words (an answer to a question needs one, a
#: statement the user makes about themselves two).
MIN_CONTENT_WORDS = 3
#: The user speaking of themselves: "I", "my", "je", "mon", "io", "mio"… as a word.
_FIRST_PERSON = re.compile(
    r"(?:^|\s)(?:i|i['’]m|i['’]ve|my|we|our|je|j['’]\w+|mon|ma|mes|nous|io|mio|mia|miei|mie|"
    r"sono|ho)(?=\s|[.,!]|$)",
    re.IGNORECASE,
)
#: Why a line is kept out of memory, in words (every line gets one).
REASONS: dict[str, str] = {
    "assistant": "the assistant's words (context of the user's, never a fact alone)",
    "withdrawn": "withdrawn by the user",
    "question": "a question, not a statement",
    "request": "a request to the assistant",
    "greeting": "a greeting or an acknowledgement",
    "hedge": "hedged or uncertain",
    "secret": "it holds a secret (masked): a page would keep only the mask",
    "tool_output": "code, a log, a path or a command, not words",
    "fragment": "too few words to be a fact",
}
#: Outcomes a person may disagree with: kept as re-queueable fragments, not just counted.
DISPUTABLE: tuple[Outcome, ...] = ("fragment", "hedge")
#: An answer longer than this many words stands on its own (no question needed).
MAX_ANSWER_WORDS = 6

_SECRET = re.compile(r"\[secret:[a-z0-9-]+\]")
_QUESTION_START = re.compile(
    r"^(?:what|whats|what's|how|why|when|where|which|who|whom|whose|is|are|was|were|do|does|"
    r"did|can|could|would|will|should|shall|may|might|have|has|am|any|"
    r"qu['’]?est-ce|est-ce|pourquoi|comment|quand|combien|quel|quelle|quels|quelles|"
    r"perché|perche|come|quando|dove|quanto|quale|cosa|chi)\b",
    re.IGNORECASE,
)
_REQUEST_START = re.compile(
    r"^(?:please\b|pls\b|plz\b|let['’]?s\b|"
    r"(?:show|give|tell|explain|write|make|help|list|rephrase|summari[sz]e|fix|find|create|"
    r"generate|translate|describe|print|convert|compare|look|check|run|try|suggest|draft|"
    r"review|refactor|debug|add|remove|delete|update|rename|open|read|go|continue|"
    r"implement|define|send|search)\b|"
    r"(?:montre|donne|explique|écris|ecris|aide|fais|traduis|mostrami|dammi|spiega|scrivi|"
    r"aiutami|fammi|traduci)\b)",
    re.IGNORECASE,
)
_ACK_WORDS = word_set(
    """
    hi hello hey yo thanks thank thx ty ok okay k cool great nice good perfect awesome sure
    yes yeah yep no nope nah hmm hm ah oh interesting right alright fine bye goodbye morning
    evening night welcome got it that helps helpful makes sense understood lol wow indeed
    excellent merci bonjour salut oui non grazie ciao buongiorno sì si va bene d'accord
    parfait bene
    """
)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|possibly|probably|i think|i guess|i suppose|not sure|i wonder|"
    r"might|may be|kind of|sort of|i don['’]?t know|no idea|peut-être|peut-etre|je pense|"
    r"je crois|forse|penso|credo|non so)\b",
    re.IGNORECASE,
)
#: A question that asks for yes or no opens with an auxiliary or a modal.
_YES_NO_START = re.compile(
    r"^(?:is|are|was|were|am|do|does|did|can|could|would|will|should|shall|may|might|have|"
    r"has|had|est-ce|dois-je|veux-tu|voulez-vous|devo|vuoi)\b",
    re.IGNORECASE,
)
_ALTERNATIVE = re.compile(r"\b(?:or|ou|o|oppure)\b", re.IGNORECASE)
#: What a short reply must hold to answer a yes-or-no question with a fact of its own.
_DETAIL = re.compile(
    r"\d|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|"
    r"march|april|may|june|july|august|september|october|november|december|today|tomorrow|"
    r"tonight)\b",
    re.IGNORECASE,
)
_CODE_HINT = re.compile(
    r"^\s*(?:\$ |>>>|#!|Traceback|File \"|at [\w.$]+\(|[{}\[\]<]|diff --git|@@ |"
    r"(?:def|class|import|from|return|const|let|var|function|SELECT|INSERT)\b)"
)
_PATHLIKE = re.compile(r"^\s*(?:[\w.-]*/)+[\w.-]+\s*$|^\s*\w:\\")


@dataclass(frozen=True)
class Candidate:
    """A user statement to remember, with the lines it comes from."""

    #: The user's own words (masked, whitespace-normalised).
    text: str
    #: Line ids cited: the user line, and the assistant question it answers (if any).
    line_ids: tuple[str, ...]
    #: The assistant question that completes a short answer ("" when none).
    context: str = ""

    @property
    def cited_text(self) -> str:
        """What the cited lines say, as the support check reads it."""
        return f"{self.context}\n{self.text}" if self.context else self.text

    @property
    def verbatim(self) -> str:
        """The fact as the user said it, for when a rephrasing fails the check."""
        if self.context:
            return f"{self.text.rstrip('.!')} (answering “{self.context}”)"
        return self.text


@dataclass(frozen=True)
class LineOutcome:
    line_id: str
    outcome: Outcome
    #: Set later by consolidation for candidates: where the fact went, or why not.
    detail: str = ""


@dataclass(frozen=True)
class Extraction:
    candidates: tuple[Candidate, ...]
    lines: tuple[LineOutcome, ...]


def split_sentences(text: str) -> list[str]:
    """The sentences of a turn (the scan's and ingest's rule: :func:`.sentences.split_block`)."""
    return split_block(" ".join(text.split()))


def classify_sentence(sentence: str) -> Outcome:
    """What a user sentence is: ``candidate`` or the reason it is left out."""
    s = sentence.strip()
    if _SECRET.search(s):
        return "secret"
    if _looks_like_code(s):
        return "tool_output"
    if s.endswith("?") or (_QUESTION_START.match(s) and not _declarative_start(s)):
        return "question"
    if _REQUEST_START.match(s):
        return "request"
    words = re.findall(r"[^\W_]+(?:['’][^\W_]+)?", fold(s))
    if words and all(
        w in _ACK_WORDS or w in {"that", "it", "so", "very", "much", "a"} for w in words
    ):
        return "greeting"
    if _HEDGE.search(s):
        return "hedge"
    needed = MIN_CONTENT_WORDS - 1 if _FIRST_PERSON.search(s) else MIN_CONTENT_WORDS
    if len(content_words(s)) < needed:
        return "fragment"
    return "candidate"


def _declarative_start(s: str) -> bool:
    # "Is" / "Will" start questions, but "May 3 is the deadline" does not.
    return bool(re.match(r"^(?:may|will|march)\s+\d", s, re.IGNORECASE))


def _looks_like_code(s: str) -> bool:
    if _CODE_HINT.match(s) or _PATHLIKE.match(s) or is_command_line(s):
        return True
    letters = sum(ch.isalpha() for ch in s)
    symbols = sum(not ch.isalnum() and not ch.isspace() for ch in s)
    return len(s) >= 12 and (letters < 0.5 * len(s) or symbols > 0.25 * len(s))


def extract_candidates(
    lines: Sequence[RawLine], *, vouched: frozenset[str] = frozenset()
) -> Extraction:
    """The candidate facts of these lines, and one outcome per line (in order), each kept
    out with its reason. ``vouched``: line ids the user re-queued — a sentence of theirs
    left out as a fragment or a hedge is a candidate then."""
    candidates: list[Candidate] = []
    outcomes: list[LineOutcome] = []
    previous: RawLine | None = None
    for line in lines:
        if line.withdrawn:
            outcomes.append(LineOutcome(line.line_id, "withdrawn", REASONS["withdrawn"]))
        elif line.role != "user":
            outcomes.append(LineOutcome(line.line_id, "assistant", REASONS["assistant"]))
        else:
            found, reasons = _from_user_line(line, previous, vouched=line.line_id in vouched)
            candidates.extend(found)
            outcome: Outcome = "candidate" if found else _main_reason(reasons)
            detail = "" if found else REASONS[outcome]
            outcomes.append(LineOutcome(line.line_id, outcome, detail))
        if not line.continues or line.role != "user":
            previous = line
    return Extraction(tuple(candidates), tuple(outcomes))


def _from_user_line(
    line: RawLine, previous: RawLine | None, *, vouched: bool = False
) -> tuple[list[Candidate], list[Outcome]]:
    question = _open_question(previous)
    found: list[Candidate] = []
    reasons: list[Outcome] = []
    for sentence in split_sentences(line.text):
        outcome = classify_sentence(sentence)
        if vouched and outcome in DISPUTABLE and content_words(sentence):
            outcome = "candidate"
        if outcome == "candidate":
            if question and len(sentence.split()) <= MAX_ANSWER_WORDS:
                found.append(_answer(sentence, line, question))
            else:
                found.append(Candidate(sentence, (line.line_id,)))
        elif outcome == "fragment" and question and content_words(sentence):
            if _declines(sentence, question):
                reasons.append(outcome)  # "Later." to "Should I …?": set aside, not a fact
            else:
                found.append(_answer(sentence, line, question))
        else:
            reasons.append(outcome)
    return found, reasons


def _answer(sentence: str, line: RawLine, question: RawLine) -> Candidate:
    return Candidate(sentence, (question.line_id, line.line_id), context=_asked(question))


def _asked(question: RawLine) -> str:
    q = split_sentences(question.text)
    return next((s for s in reversed(q) if s.endswith("?")), question.text)


def _declines(sentence: str, question: RawLine) -> bool:
    """Whether a short reply only puts off a yes-or-no question ("Should I add a test?" →
    "Later."): such a question asks for yes or no (it opens with an auxiliary and offers no
    "or"), so a reply without a number, a date word or a name answers nothing to keep.
    "Which day?" → "Tuesday." and "Tea or coffee?" → "Coffee." are answers."""
    asked = _asked(question)
    if not _YES_NO_START.match(asked) or _ALTERNATIVE.search(asked):
        return False
    return not (_DETAIL.search(sentence) or any(w[:1].isupper() for w in sentence.split()[1:]))


def _open_question(previous: RawLine | None) -> RawLine | None:
    """The assistant line just before, when it ends with a question."""
    if previous is None or previous.role != "assistant" or previous.withdrawn:
        return None
    return previous if previous.text.rstrip().endswith("?") else None


def _main_reason(reasons: list[Outcome]) -> Outcome:
    if not reasons:
        return "fragment"
    order: tuple[Outcome, ...] = ("secret", "tool_output", "question", "request", "hedge")
    for reason in (*order, "greeting"):
        if reason in reasons:
            return reason
    return reasons[0]
