"""What the note-level decision reads of a note pair (:func:`note_features`).

The judge scores sentence pairs; :class:`~inference.note_model.NoteModel` decides at note
level from these features: the best judged sentence pairs, their alignment and values,
how much was set aside as template, how much of each note is structure, a rule against a
fact, and how many of the pair's closest sentence pairs have values that conflict or agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from desktop.flows.alignment import tokens, word_set

if TYPE_CHECKING:
    from desktop.flows.judging import NoteSentences, SentencePairVerdict

#: The note-level model's inputs, in order (:class:`~inference.note_model.NoteModel`).
FEATURES = (
    "best",
    "second",
    "passing",
    "best_entailment",
    "best_cosine",
    "best_aligned",
    "best_negation",
    "values_conflict",
    "values_compatible",
    "values_differ",
    "set_aside_share",
    "boilerplate_share",
    "structure_share",
    "rule_against_fact",
    "value_conflicts",
    "value_agreements",
    "conflict_best",
    "rule_fact_best",
    "mean_contradiction",
    "max_entailment",
)
#: Sentence pairs counted by the value features (:func:`note_features`), at most.
_VALUE_CAP = 3

#: Words that make a sentence a rule (a norm, a quantifier), not a statement of fact.
_RULE_WORDS = word_set(
    """
    always never every each only must should no none nothing whenever all cannot forbidden
    toujours jamais chaque seulement doit doivent faut aucun rien tous toutes
    sempre mai ogni solo soltanto deve devono bisogna nessun nessuno niente tutti tutte
    """
)


def rule_like(text: str) -> bool:
    """Whether ``text`` states a rule (a norm, a quantifier) rather than a fact."""
    return any(w in _RULE_WORDS for w in tokens(text))


def note_features(
    verdicts: Sequence[SentencePairVerdict],
    *,
    set_aside: int,
    passing: float,
    notes: tuple[NoteSentences, NoteSentences],
    values: tuple[int, int] = (0, 0),
) -> dict[str, float]:
    """What the note-level decision reads of one note pair (``verdicts`` strongest first).

    ``values``: how many of the pair's closest sentence pairs on one subject, a rule against
    a statement of fact, have values that conflict (a fact outside a rule's window, a day a
    rule rules out) and that agree (45 minutes is at least half an hour), judged or not."""
    best = verdicts[0] if verdicts else None
    second = verdicts[1].contradiction if len(verdicts) > 1 else 0.0
    al = best.alignment if best is not None else None
    evidence = [len(n.sentences) + n.boilerplate for n in notes]
    judged = len(verdicts)
    return {
        "best": best.contradiction if best else 0.0,
        "second": second,
        "passing": float(sum(v.contradiction >= passing for v in verdicts)),
        "best_entailment": best.entailment if best else 0.0,
        "best_cosine": best.cosine if best else 0.0,
        "best_aligned": 1.0 if al is not None and al.candidate else 0.0,
        "best_negation": 1.0 if al is not None and al.negation_differs else 0.0,
        "values_conflict": (
            1.0 if any(v.alignment and v.alignment.values == "conflict" for v in verdicts) else 0.0
        ),
        "values_compatible": 1.0 if al is not None and al.values == "compatible" else 0.0,
        "values_differ": 1.0 if al is not None and al.values == "differ" else 0.0,
        "set_aside_share": set_aside / (set_aside + judged) if set_aside + judged else 0.0,
        "boilerplate_share": max(
            (n.boilerplate / e if e else 0.0) for n, e in zip(notes, evidence, strict=True)
        ),
        "structure_share": max((n.structure / n.lines if n.lines else 0.0) for n in notes),
        "rule_against_fact": (
            1.0 if best is not None and rule_like(best.a.text) != rule_like(best.b.text) else 0.0
        ),
        "value_conflicts": float(min(values[0], _VALUE_CAP)),
        "value_agreements": float(min(values[1], _VALUE_CAP)),
        "conflict_best": max(
            (v.contradiction for v in verdicts if v.alignment and v.alignment.values == "conflict"),
            default=0.0,
        ),
        "rule_fact_best": max(
            (v.contradiction for v in verdicts if rule_like(v.a.text) != rule_like(v.b.text)),
            default=0.0,
        ),
        "mean_contradiction": (
            float(np.mean([v.contradiction for v in verdicts])) if verdicts else 0.0
        ),
        "max_entailment": max((v.entailment for v in verdicts), default=0.0),
    }
