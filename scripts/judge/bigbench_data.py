"""Read BIG-bench tasks as (text_a, text_b, label) pairs, from the sdist or a folder.

The judge trains on two BIG-bench tasks only, ``vitaminc_fact_verification``
and ``fact_checker/fever``; every other task stays out of training so that it
can check the judge honestly (``evaluate.py`` reads some of them through the
same functions). ``bigbench`` 1.0.0 is a 358 MB sdist whose installation pulls
TensorFlow; we only need its JSON files, so this module reads them straight
from the downloaded archive (``pip download --no-deps bigbench==1.0.0``) or from
an unpacked copy.

Labels are the judge's: ``contradiction``, ``entailment``, ``neutral``.
"""

from __future__ import annotations

import json
import re
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LABELS = ("contradiction", "entailment", "neutral")

#: The only tasks the judge may train on.
TRAIN_TASKS = ("vitaminc_fact_verification", "fact_checker/fever")


@dataclass(frozen=True)
class Example:
    a: str
    b: str
    label: str
    source: str
    #: Examples sharing a group never straddle the train/validation split.
    group: str = ""


def read_task(bigbench: Path, task: str) -> dict[str, Any]:
    """The ``task.json`` of ``task`` (e.g. ``fact_checker/fever``) from an sdist or a folder."""
    suffix = f"bigbench/benchmark_tasks/{task}/task.json"
    if bigbench.is_dir():
        for candidate in (
            bigbench / suffix,
            bigbench / "benchmark_tasks" / task / "task.json",
            bigbench / task / "task.json",
        ):
            if candidate.is_file():
                return json.loads(candidate.read_text(encoding="utf-8"))
        hits = sorted(bigbench.glob(f"**/{task}/task.json"))
        if hits:
            return json.loads(hits[0].read_text(encoding="utf-8"))
        raise FileNotFoundError(f"no {task}/task.json under {bigbench}")
    with tarfile.open(bigbench) as tar:
        for member in tar:
            if member.name.endswith(suffix):
                handle = tar.extractfile(member)
                assert handle is not None
                return json.loads(handle.read().decode("utf-8"))
    raise FileNotFoundError(f"no {suffix} in {bigbench}")


def _winner(scores: dict[str, float]) -> str:
    return max(scores, key=lambda k: scores[k])


_VITAMINC = re.compile(
    r"^(?P<title>[^\n:]{1,200}):\s*(?P<evidence>.*?)\nClaim:\s*(?P<claim>.+)$", re.S
)
_VITAMINC_LABEL = {"True": "entailment", "False": "contradiction", "Neither": "neutral"}


def vitaminc(bigbench: Path) -> Iterator[Example]:
    """Evidence (with its page title) against a claim; grouped by claim, since VitaminC's
    contrastive pairs share a claim across slightly different evidence."""
    for ex in read_task(bigbench, "vitaminc_fact_verification")["examples"]:
        m = _VITAMINC.match(ex["input"].strip())
        if not m:
            continue
        evidence = " ".join(m["evidence"].replace("\ufffd", " ").split())
        claim = " ".join(m["claim"].split())
        label = _VITAMINC_LABEL[_winner(ex["target_scores"])]
        yield Example(evidence, claim, label, "vitaminc", group=f"vitaminc:{claim.lower()}")


_FEVER = re.compile(r"the following claim was made:\s*(?P<claim>.+?)\s*\nQ:", re.S)


def fever_claims(bigbench: Path) -> list[tuple[str, bool]]:
    """FEVER's claims with their truth value. The task carries no evidence, so they are not
    pairs by themselves; ``synth.py`` uses them as unrelated-but-fluent neutral material."""
    out: list[tuple[str, bool]] = []
    for ex in read_task(bigbench, "fact_checker/fever")["examples"]:
        m = _FEVER.search(ex["input"])
        if m:
            out.append((" ".join(m["claim"].split()), _winner(ex["target_scores"]) == "true"))
    return out


# -- held-out tasks, for evaluation only ---------------------------------------------------------


def _split_premise(text: str) -> tuple[str, str] | None:
    text = re.split(r"\n\s*\n|The answer is", text, maxsplit=1)[0]
    for pattern in (
        r"Premise:\s*(?P<a>.+?)\s*Hypothesis:\s*(?P<b>.+?)\s*$",
        r"Sentence 1:\s*(?P<a>.+?)\s*Sentence 2:\s*(?P<b>.+?)\s*$",
    ):
        m = re.search(pattern, text, re.S)
        if m:
            return " ".join(m["a"].split()), " ".join(m["b"].split())
    return None


_NLI_TARGETS = {
    "entailment": "entailment",
    "contradiction": "contradiction",
    "neutral": "neutral",
}


def presuppositions_as_nli(bigbench: Path) -> Iterator[Example]:
    for ex in read_task(bigbench, "presuppositions_as_nli")["examples"]:
        pair = _split_premise(ex["input"])
        if pair:
            label = _NLI_TARGETS.get(_winner(ex["target_scores"]).lower())
            if label:
                yield Example(pair[0], pair[1], label, "presuppositions_as_nli")


def analytic_entailment(bigbench: Path) -> Iterator[Example]:
    """Two sentences joined by "So"; 'entailment' or 'no-entailment'. Not a contradiction
    task: it measures false alarms — a good judge says 'contradiction' rarely here."""
    for ex in read_task(bigbench, "analytic_entailment")["examples"]:
        parts = re.split(r"\.\s+So,?\s+", ex["input"].strip(), maxsplit=1)
        if len(parts) != 2:
            continue
        label = "entailment" if _winner(ex["target_scores"]).lower() == "entailment" else "neutral"
        second = parts[1].strip()
        yield Example(
            parts[0].strip() + ".", second[0].upper() + second[1:], label, "analytic_entailment"
        )
