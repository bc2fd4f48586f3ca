"""The LLM's part in a judged scan: one line saying what two quoted sentences disagree about.

The judge decided the pair; the model only explains it, under the structured
output policy (schema, one stricter retry). When it cannot, the pair is still
shown, with a plain description built from the quotes' differing words, and the failure is
counted with its raw answers kept for the debug note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from desktop.flows.hunter.plain import describe_from_quotes
from desktop.flows.hunter.prompt import DESCRIPTION_MAX, template
from desktop.flows.hunter.records import Attempt, Pair
from desktop.flows.sentences import content_words
from foundation.errors import GenerationError
from inference.base import GenerationSettings, Generator, Message, StopFlag
from inference.structured import complete_structured

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"description": {"type": "string", "minLength": 8, "maxLength": DESCRIPTION_MAX}},
    "required": ["description"],
}


def _shape(value: Any) -> Any | None:
    if isinstance(value, dict):
        text = value.get("description")
        if isinstance(text, str) and len(text.strip()) >= 8:
            return " ".join(text.split())[:DESCRIPTION_MAX]
    return None


#: Words a description of a disagreement uses that neither quote needs to contain.
_META_TEXT = """
    one other both disagree disagreement contradict contradiction conflict clash tension
    say says said while whereas however claim claims state states rule rules note notes
    versus against allow allows forbid forbids require requires mean means first second
    side sides
"""
_META = frozenset(_META_TEXT.split())


def _stems(text: str) -> frozenset[str]:
    """Content words with a plural or third-person "s" taken off ("Fridays" = "Friday")."""
    return frozenset(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in content_words(text))


_NUMBER = re.compile(r"\d+(?:[:.,]\d+)*")


def _numbers(text: str) -> frozenset[str]:
    return frozenset(n.rstrip(".,") for n in _NUMBER.findall(text))


def about_the_quotes(line: str, pair: Pair) -> bool:
    """A small model's line is kept only if it describes the two quotes:

    * two of their content words, no template left in it ("[topic]"), no trailing off
      ("… (no action)");
    * nothing invented: at most half of its words come from neither the quotes nor the
      notes' titles (measured on the sample vault, the 135M model wrote "a cloud-based
      payment processing platform" for a SQLite ledger);
    * not one quote said again: a line whose words nearly all come from one quote and at
      most one from the other's restates one side and explains nothing (it was most of
      what the model wrote there);
    * both sides: a word of each quote that the other does not have. The model also wrote
      one quote spliced to the other note's title ("…says more about their mood than
      onboarding with a real bug"), which names one side and explains nothing;
    * no number of its own: every number in it is in a quote or a title (it moved a
      nightly run "at 02:00" to "14:00" and a release window to "15:00 and 23:00");
    * not both quotes copied one after the other, which the card shows already.
    """
    if "[" in line or line.lstrip().startswith(("...", "…")):
        return False
    given = _numbers(f"{pair.quote_a} {pair.quote_b} {pair.note_a} {pair.note_b}")
    if _numbers(line) - given:
        return False
    words = _stems(line)
    a, b = _stems(pair.quote_a), _stems(pair.quote_b)
    if len(words & (a | b)) < 2:
        return False
    known = a | b | _stems(pair.note_a) | _stems(pair.note_b) | _META
    if len(words - known) > len(words) / 2:
        return False
    for one, other in ((a, b), (b, a)):
        if len(words & one) >= 0.8 * len(words) and len(words & (other - one)) <= 1:
            return False
        if not words & (one - other):
            return False  # says nothing of one side: one quote and the other note's title
    # Not both quotes copied one after the other: the card shows them already.
    return not (_said_again(line, pair.quote_a) and _said_again(line, pair.quote_b))


def _said_again(line: str, quote: str) -> bool:
    """Whether ``line`` holds most of ``quote`` word for word (a run of its words)."""
    said, words = _words(line), _words(quote)
    if not words:
        return False
    run = SequenceMatcher(None, said, words, autojunk=False).find_longest_match()
    return run.size >= max(4, 0.6 * len(words))


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.casefold())


def plain_description(pair: Pair) -> str:
    """What is shown when the model gives no usable line: what differs between the quotes,
    in their own words (:func:`.plain.describe_from_quotes`), else who judged what."""
    line = describe_from_quotes(pair.quote_a, pair.quote_b, (pair.note_a, pair.note_b))
    if line is not None:
        return line
    p = f" ({pair.probability:.0%})" if pair.probability is not None else ""
    return (
        f"The judge reads these sentences of {pair.note_a} and {pair.note_b} as contradicting "
        f"each other{p}."
    )


@dataclass
class Describer:
    engine: Generator
    max_tokens: int = 96
    constrain: bool = True
    attempts: list[Attempt] = field(default_factory=list)
    raw_failures: list[str] = field(default_factory=list)
    failures: int = 0
    described: int = 0

    def describe(self, pair: Pair, *, stop: StopFlag | None = None) -> str | None:
        """The model's line for ``pair``, or None (format failure, error or Stop)."""
        user = template("hunter-describe").format(
            note_a=pair.note_a, note_b=pair.note_b, quote_a=pair.quote_a, quote_b=pair.quote_b
        )
        # The instructions are the system message, the same for every pair of a run: the
        # generator decodes them once and restores their saved state (inference/kv_prefix.py).
        messages = [Message("system", template("hunter-describe-system")), Message("user", user)]
        try:
            result = complete_structured(
                self.engine,
                messages,
                shape=_shape,
                schema=SCHEMA,
                settings=GenerationSettings(max_tokens=self.max_tokens, constrain=self.constrain),
                stop=stop,
            )
        except GenerationError as exc:
            self.failures += 1
            self.raw_failures.append(f"(description request failed: {exc})")
            return None
        for i, c in enumerate(result.completions):
            self.attempts.append(
                Attempt(
                    prompt_chars=len(user),
                    tokens_in=c.tokens_in,
                    tokens_out=c.tokens_out,
                    duration=c.duration,
                    prompt_seconds=c.prompt_seconds,
                    answer=c.text,
                    retry=i > 0,
                )
            )
        if result.status == "ok":
            line = str(result.value)
            if not about_the_quotes(line, pair):
                self.failures += 1
                self.raw_failures.append(f"(description not about the quotes) {line}")
                return None
            self.described += 1
            return line
        if result.status == "format_failure":
            self.failures += 1
            self.raw_failures.extend(result.raw_answers)
        return None
