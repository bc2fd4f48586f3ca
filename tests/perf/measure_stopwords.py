"""What the stop-word lists decide, per consumer: run it before and after changing them.

For each vault folder (default: the bundled sample vault), counts

* **scan**: sentences, content words per sentence, sentences that are evidence
  (:func:`desktop.flows.sentences.evidence_reason`) and why the others are not;
* **ingest**: key sentences per note (:func:`~desktop.flows.ingest.sentences.key_sentences`,
  12 a note, as an ingest picks them) and the pairs of key sentences of two notes whose
  content-word overlap reaches ingest's subject gate (0.25, ``nearest_sentences``);

and, once,

* **fulltext**: the words each query of ``tests/data/retrieval_queries.json`` searches;
* **highlight**: the words of each query a search snippet marks;
* **ingest support**: each summary of ``tests/data/ingest/summary_calibration.json``
  checked against its page without a judge (the lexical verdict) and whether some
  sentence run covers it (``--docs``: the folder holding each project's repository);
* **memory support**: faithful and invented facts of
  ``tests/data/memory/support_calibration.json`` accepted at the shipped threshold.

With ``--words FILE``, writes every content word counted per consumer and each query's
terms, so two runs can be compared word by word. Prints one JSON object.

    python tests/perf/measure_stopwords.py [VAULT …] [--docs DIR] [--words FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from desktop.flows import sentences as prose  # noqa: E402
from desktop.flows.ingest import sentences as ingest  # noqa: E402
from desktop.flows.ingest.support import MIN_COVERAGE, SourceSupport, coverage  # noqa: E402
from desktop.flows.memory.support import (  # noqa: E402
    SUPPORT_THRESHOLD,
    support_ratio,
    unsupported_names,
)
from desktop.vault import fulltext  # noqa: E402
from desktop.vault.frontmatter import split_frontmatter  # noqa: E402
from desktop.vault.stopwords import content_words as highlighted  # noqa: E402

DATA = ROOT / "tests" / "data"
SKIP = {".git", ".antinomy", "node_modules", ".obsidian"}


def notes(vault: Path) -> dict[str, str]:
    out = {}
    for path in sorted(vault.rglob("*.md")):
        if SKIP & set(path.relative_to(vault).parts):
            continue
        text = path.read_text("utf-8", errors="replace")
        out[str(path.relative_to(vault))] = split_frontmatter(text).body
    return out


def measure_vault(vault: Path, words: dict[str, Any]) -> dict[str, Any]:
    bodies = notes(vault)
    sentences = [s for body in bodies.values() for s in prose.split_sentences(body)]
    reasons = Counter(prose.evidence_reason(s) or "evidence" for s in sentences)
    scan_words = Counter(w for s in sentences for w in s.content)
    keys = {path: ingest.key_sentences(ingest.split_sentences(b), 12) for path, b in bodies.items()}
    key_words = {p: [set(ingest.content_words(s.text)) for s in ks] for p, ks in keys.items()}
    ingest_words = Counter(w for ws in key_words.values() for s in ws for w in s)
    gated = 0
    for a, b in combinations(sorted(key_words), 2):
        for wa in key_words[a]:
            for wb in key_words[b]:
                if wa and wb and len(wa & wb) / min(len(wa), len(wb)) >= 0.25:
                    gated += 1
    words[str(vault)] = {
        "scan": dict(scan_words.most_common()),
        "ingest": dict(ingest_words.most_common()),
        "key_sentences": {p: [s.number for s in ks] for p, ks in keys.items()},
    }
    return {
        "notes": len(bodies),
        "scan": {
            "sentences": len(sentences),
            "content_words": sum(len(s.content) for s in sentences),
            "content_words_per_sentence": round(
                sum(len(s.content) for s in sentences) / max(1, len(sentences)), 3
            ),
            "evidence": reasons["evidence"],
            "not_evidence": {k: v for k, v in sorted(reasons.items()) if k != "evidence"},
        },
        "ingest": {
            "key_sentences": sum(len(k) for k in keys.values()),
            "content_words_per_key_sentence": round(
                sum(len(s) for ws in key_words.values() for s in ws)
                / max(1, sum(len(k) for k in keys.values())),
                3,
            ),
            "pairs_through_overlap_gate": gated,
        },
    }


def measure_queries(words: dict[str, Any]) -> dict[str, Any]:
    queries = [
        q["query"] for q in json.loads((DATA / "retrieval_queries.json").read_text())["queries"]
    ]
    terms = {q: fulltext.query_words(q)[1] for q in queries}
    marks = {q: highlighted(q) for q in queries}
    words["fulltext"] = terms
    words["highlight"] = marks
    return {
        "queries": len(queries),
        "fulltext_terms": sum(len(t) for t in terms.values()),
        "highlight_words": sum(len(t) for t in marks.values()),
    }


def measure_ingest_support(docs: Path, words: dict[str, Any]) -> dict[str, Any]:
    from desktop.flows.ingest.read import read_source

    data = json.loads((DATA / "ingest" / "summary_calibration.json").read_text("utf-8"))
    verdicts: dict[str, Counter[str]] = {"faithful": Counter(), "invented": Counter()}
    per_claim = {}
    for claim in data["claims"]:
        source = read_source(docs / claim["doc"] / data["documents"][claim["doc"]])
        sentences = ingest.split_sentences(source.text)
        check = SourceSupport(sentences, text=source.text, judge=None)
        verdict = check.check(claim["text"])
        reason = verdict.how or verdict.reason
        if reason == "no_judge":  # what the judge would be asked: is it said in one place?
            held = any(coverage(claim["text"], p) >= MIN_COVERAGE for p in check._premises)
            reason = "in_one_place" if held else "not_in_one_place"
        verdicts["faithful" if claim["faithful"] else "invented"][reason] += 1
        per_claim[claim["text"]] = reason
    words["ingest_support"] = per_claim
    return {k: dict(sorted(v.items())) for k, v in verdicts.items()}


def measure_memory_support() -> dict[str, Any]:
    pairs = json.loads((DATA / "memory" / "support_calibration.json").read_text("utf-8"))
    out: Counter[str] = Counter()
    for pair in pairs["pairs"]:
        fact, cited, subject = pair["fact"], pair["cited"], pair["subject"]
        ok = support_ratio(fact, cited, allowed=(subject,)) >= SUPPORT_THRESHOLD
        ok = ok and not unsupported_names(fact, cited, allowed=(subject,))
        out[
            ("faithful" if pair["supported"] else "invented") + ("_accepted" if ok else "_held")
        ] += 1
    return dict(sorted(out.items()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("vaults", type=Path, nargs="*")
    ap.add_argument("--docs", type=Path, help="folder of the documentation repositories")
    ap.add_argument("--words", type=Path, help="write the words counted to this JSON file")
    args = ap.parse_args()
    words: dict[str, Any] = {}
    report: dict[str, Any] = {
        "vaults": {
            str(v): measure_vault(v, words)
            for v in args.vaults or [ROOT / "resources/sample-vault"]
        },
        "queries": measure_queries(words),
        "memory_support": measure_memory_support(),
    }
    if args.docs:
        report["ingest_support"] = measure_ingest_support(args.docs, words)
    if args.words:
        args.words.write_text(json.dumps(words, ensure_ascii=False, indent=1), "utf-8")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
