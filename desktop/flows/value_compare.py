"""Numbers in notes compared as numbers: 45 minutes is at least half an hour.

A judge reads "Rode 45 minutes today" against "I ride at least half an hour a day" as a
clash because the numbers differ; a person reads them as one fact keeping the other.
:func:`compare_quantities` compares two sentences' quantities
(:func:`desktop.flows.quantities.quantities`) of one kind:

* ``compatible`` — a stated value lies within the other's bound, or the values are equal;
* ``conflict`` — a stated value breaks the other's bound (or two bounds cannot both hold);
* ``differ`` — two plain values differ (another day's figure, or another figure for one
  thing: the judge and the rest of the pair decide);
* ``none`` — no quantity of a shared kind.

A bound a rule is conditioned on ("trips over €2,000 need approval") or an exception never
makes a conflict; a value at the very end of an exclusive bound is left to the words.
English, French and Italian; rules of language only.
"""

from __future__ import annotations

import math
import re
from typing import Literal

from desktop.flows.quantities import NEGATION_BEFORE, Quantity, folded, quantities

Comparison = Literal["none", "compatible", "conflict", "differ"]


#: Clock times before this (05:00) are also the small hours of the night before's evening:
#: "no phone after ten" is broken at one in the morning.
_SMALL_HOURS = 300.0


def _meets(rule: Quantity, fact: Quantity) -> bool:
    """Whether ``fact`` lies at least partly in ``rule``'s interval; a clock window whose
    end comes before its start runs past midnight ("between 22:00 and 7:00"), and "after"
    an evening hour reaches into the small hours."""
    if rule.dim == "clock" and rule.lo > rule.hi:
        return fact.hi >= rule.lo or fact.lo <= rule.hi
    if (
        rule.dim == "clock"
        and math.isinf(rule.hi)
        and rule.lo >= 720.0
        and fact.lo < _SMALL_HOURS
        and rule.lo <= fact.hi + 1440.0
    ):
        return True
    return rule.lo <= fact.hi and fact.lo <= rule.hi


#: How far apart two ends of intervals may be and still be the same end: an exclusive bound
#: ("below 3 %") sits a hair inside its number.
_EDGE = 1e-3


def _same(x: float, y: float) -> bool:
    return math.isclose(x, y, rel_tol=0.0, abs_tol=_EDGE)


def _at_edge(rule: Quantity, fact: Quantity) -> bool:
    """Whether ``fact`` is one value at the very end of ``rule``'s interval: "after two" /
    "the cutoff is 2pm", "below 20 %" / "20 %". Writers blur whether an end is in or out,
    so a number cannot say whether the two clash."""
    if not _same(fact.lo, fact.hi):
        return False
    return any(_same(fact.lo, end) for end in (rule.lo, rule.hi) if not math.isinf(end))


def _relation(a: Quantity, b: Quantity) -> Comparison:
    if a.bound and b.bound:
        if a.forbidden or b.forbidden:
            return "none"  # two rules: whether they can both hold is not a number question
        if _same(a.lo, b.lo) and _same(a.hi, b.hi):
            return "compatible"
        if math.isinf(a.hi) == math.isinf(b.hi):  # both "at least", or both "at most"
            return "differ"  # two limits for one thing ("capped at 500" / "capped at 640")
        return "compatible" if max(a.lo, b.lo) <= min(a.hi, b.hi) else "conflict"
    if a.bound or b.bound:
        rule, fact = (a, b) if a.bound else (b, a)
        inside = _meets(rule, fact)
        if rule.forbidden:
            return "conflict" if inside else "compatible"
        if not inside and _at_edge(rule, fact):
            return "none"
        return "compatible" if inside else "conflict"
    overlap = a.lo <= b.hi and b.lo <= a.hi
    return "compatible" if overlap else "differ"


#: A bound that says when a rule applies, not what it allows: "if I need it more than three
#: times a week, call the nurse", "trips over €2,000 need the head's approval"; or a rule
#: with an exception, which may be the fact ("no posts on Sundays, except in December").
_IF = re.compile(
    r"\b(?:if|when|whenever|once|unless|in case|except|apart from|other than|quand|lorsque|"
    r"s'il|s'ils|sauf|hormis|excepté|quando|qualora|a meno che|salvo|tranne|eccetto|"
    r"fuorché)\b"
    # French "si" and Italian "se" also make "le linge se lave", "non si lavora": only
    # before a subject
    r"|\bsi (?:(?:on|il|elle|le|la|les|je|tu|nous|vous|ça)\b|l'|j'|c'est)"
    r"|\bse (?:(?:non|il|lo|la|i|gli|le|ci|hai|ho)\b|l'|c'è|è)"
)
_EXCLUSIVE_LOWER = re.compile(
    r"\b(?:more than|over|above|longer than|exceed(?:s|ing)?|beyond|plus de|au-delà de|"
    r"dépass\w*|oltre|più di|superior\w*)\b"
)
#: A threshold a thing stays under, said before what it obliges: "trips under six hours by
#: train must be done by rail", "les achats de moins de 50 € doivent…".
_EXCLUSIVE_UPPER = re.compile(
    r"\b(?:under|below|less than|fewer than|shorter than|moins de|sous|meno di|sotto|"
    r"inférieur\w* à|inferior\w* a)\b"
)
_OBLIGED = re.compile(
    r"\b(?:needs?|needed|requires?|required|must|has to|have to|should|calls? for|"
    r"nécessitent|nécessite|doivent|doit|faut|exige\w*|richiedono|richiede|devono|deve|"
    r"servono|serve)\b"
)


def _conditional(text: str) -> bool:
    """Whether the bounds ``text`` states are conditions of a rule rather than limits:
    an if-clause, or a threshold a thing goes over and an obligation that follows it."""
    text = folded(text)
    if _IF.search(text):
        return True
    for threshold in (_EXCLUSIVE_LOWER, _EXCLUSIVE_UPPER):
        found = threshold.search(text)
        if (
            found
            and _OBLIGED.search(text, found.end())
            and not NEGATION_BEFORE.search(text[: found.start()])
            and not _OBLIGED.search(text[: found.start()])
        ):
            return True
    return False


def _condition_relation(rule: Quantity, fact: Quantity) -> Comparison:
    """A condition met leaves the question to the words ("none"); not met, the rule does not
    apply to the fact ("compatible")."""
    return "none" if _meets(rule, fact) else "compatible"


def compare_quantities(text_a: str, text_b: str) -> Comparison:
    """How the quantities of two sentences relate (see the module's docstring). Of the
    readings of an ambiguous clock time, the most lenient one counts. A sentence's bounds
    that are conditions (:func:`_conditional`) never make a conflict: a fact outside them is
    compatible, one inside is for the judge."""
    qa, qb = _under_rules(quantities(text_a)), _under_rules(quantities(text_b))
    cond_a, cond_b = _conditional(text_a), _conditional(text_b)
    verdicts: dict[str, set[Comparison]] = {}
    for a in qa:
        for b in qb:
            if a.dim != b.dim or (a.reading >= 0 and b.reading >= 0 and a.reading != b.reading):
                continue
            if a.bound != b.bound and (cond_a if a.bound else cond_b):
                rule, fact = (a, b) if a.bound else (b, a)
                verdicts.setdefault(a.dim, set()).add(_condition_relation(rule, fact))
                continue
            verdicts.setdefault(a.dim, set()).add(_relation(a, b))
    if "weekday" in verdicts and any(
        q.dim == "weekday" and not _whole_days(q) for q in (*qa, *qb)
    ):  # a day's time is compared with its day
        verdicts.pop("clock", None)
    if not verdicts:
        return "none"
    lenient: tuple[Comparison, ...] = ("compatible", "differ", "conflict", "none")
    per_dim = [next(level for level in lenient if level in found) for found in verdicts.values()]
    strict: tuple[Comparison, ...] = ("conflict", "differ", "compatible")
    return next((level for level in strict if level in per_dim), "none")


def _under_rules(found: tuple[Quantity, ...]) -> tuple[Quantity, ...]:
    """A sentence's quantities less a plain value it also names under a rule: "Wednesday is
    our maker day: no meetings on Wednesdays" is one Wednesday, the forbidden one (the plain
    one would agree with any other Wednesday and hide the rule)."""
    ruled = {(q.dim, q.lo, q.hi) for q in found if q.bound}
    return tuple(q for q in found if q.bound or (q.dim, q.lo, q.hi) not in ruled)


def _whole_days(q: Quantity) -> bool:
    """Whether a span of the week is whole days (no time of day given with it)."""
    return q.lo % 1440 == 0 and (q.hi + 1) % 1440 == 0


def outside_prohibition(text_a: str, text_b: str) -> bool:
    """Whether one sentence forbids a window ("we never deploy on weekends") and the other
    states an act wholly outside it ("the team ships on Fridays"), with nothing else to
    compare: a prohibition is not broken by what happens where it does not apply.

    Only then: one side's quantities of a kind are all forbidden windows, the other's of
    that kind are all plain values none of which meets any of those windows, the side
    stating the act says no negation of its own (a "not" there may be the clash), and no
    other kind of quantity is shared."""
    qa, qb = quantities(text_a), quantities(text_b)
    shared = {q.dim for q in qa} & {q.dim for q in qb}
    if len(shared) != 1:
        return False
    (dim,) = shared
    a = [q for q in qa if q.dim == dim]
    b = [q for q in qb if q.dim == dim]
    for rules, facts, fact_text in ((a, b, text_b), (b, a, text_a)):
        if not all(q.bound and q.forbidden for q in rules):
            continue
        if any(q.bound for q in facts) or NEGATION_BEFORE.search(folded(fact_text)):
            continue
        if not any(_meets(rule, fact) for rule in rules for fact in facts):
            return True
    return False
