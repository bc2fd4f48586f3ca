"""Ingest on real documents nobody on the team wrote, with the shipped model.

* **extract** — each document through :func:`read_source`: seconds, words in
  the raw document and kept, share of boilerplate removed; refusals with their
  reason.
* **plan** — each readable document planned against a copy of the sample
  vault (full-text index): planning seconds, model calls, validation errors of
  the first answer and after the one repair, status, pages and citations
  produced, contradictions the judge holds (the judge is used when its model
  file is there; otherwise the count is reported as not checked).
* **compare** (``--compare``) — the extractor candidates side by side on the
  HTML and PDF documents: trafilatura vs readability-lxml + markdownify,
  pypdfium2 vs pdfminer.six (seconds, words, share of the page's main element
  kept, words kept from outside it). Needs ``pip install pdfminer.six
  readability-lxml markdownify`` (not dependencies of Antinomy).

Documents are found on this machine (Debian documentation packages, files
inside installed Python packages); missing ones are skipped and listed.
Prints one JSON object. Run: ``python tests/perf/bench_ingest.py [--compare]
[--no-plan] [--limit N]``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.flows.ingest import IngestReport, SourceRefused, plan_ingest, read_source
from desktop.resources import ensure_sample_vault
from desktop.vault.index import VaultIndex

CANDIDATES = [
    "/usr/share/doc/apt/README.md.gz",
    "/usr/share/doc/python3/python-policy.html",
    "/usr/share/doc/libffi8/html/The-Basics.html",
    "/usr/share/doc/base-passwd/users-and-groups.html",
    "/usr/share/doc/libxslt1-dev/html/APIchunk7.html",
    "/usr/share/doc/libtasn1-doc/libtasn1.pdf",
    "/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf",
    "{site}/onnxruntime/Privacy.md",
    "{site}/numpy/random/LICENSE.md",
]
_WORDS = re.compile(r"[A-Za-z]{2,}")


def find_documents(work: Path) -> tuple[list[Path], list[str]]:
    import onnxruntime

    site = str(Path(onnxruntime.__file__).resolve().parents[1])
    found, missing = [], []
    for pattern in CANDIDATES:
        path = Path(pattern.format(site=site))
        if not path.is_file():
            missing.append(str(path))
            continue
        if path.suffix == ".gz":
            target = work / path.stem
            target.write_bytes(gzip.decompress(path.read_bytes()))
            path = target
        found.append(path)
    return found, missing


def extract(paths: list[Path]) -> list[dict[str, Any]]:
    rows = []
    for path in paths:
        try:
            s = read_source(path)
        except SourceRefused as exc:
            rows.append({"file": path.name, "refused": exc.reason, "message": str(exc)})
            continue
        rows.append(
            {
                "file": path.name,
                "kind": s.kind,
                "title": s.title,
                "seconds": s.seconds,
                "words_raw": s.words_raw,
                "words_kept": s.words_kept,
                "boilerplate_removed": s.boilerplate_removed,
                "pages": s.pages,
            }
        )
    return rows


def plan_all(paths: list[Path], limit: int) -> dict[str, Any]:
    from desktop.cli.ingest_cmd import load_judge
    from desktop.flows.settings import resolve
    from inference.engines import LazyGenerator

    runtime = resolve().runtime  # the saved models, as `antinomy ingest` uses
    engine = LazyGenerator(runtime)
    judge = load_judge(runtime)
    rows = []
    try:
        for path in paths[:limit]:
            with tempfile.TemporaryDirectory() as tmp:
                vault = ensure_sample_vault(Path(tmp))
                index = VaultIndex(vault)
                index.update()
                started = time.perf_counter()
                try:
                    report = plan_ingest(vault, path, engine=engine, judge=judge, index=index)
                except SourceRefused as exc:
                    rows.append({"file": path.name, "refused": exc.reason})
                    continue
                finally:
                    index.close()
                rows.append(_plan_row(path, report, time.perf_counter() - started))
    finally:
        engine.close()
    planned = [r for r in rows if r.get("status") == "planned"]
    return {
        "model": engine.model_name,
        "judge": judge.name if judge is not None else "not available",
        "documents": rows,
        "totals": {
            "planned": len(planned),
            "rejected": sum(1 for r in rows if r.get("status") == "rejected"),
            "first_answers_invalid": sum(1 for r in rows if r.get("errors_first")),
            "invalid_after_repair": sum(1 for r in rows if r.get("errors_after_repair")),
            "pages": sum(r["pages_written"] for r in planned),
            "citations": sum(r["citations"] for r in planned),
            "contradictions_held": sum(r["contradictions_held"] for r in planned),
            "plan_seconds_mean": round(
                sum(r["plan_seconds"] for r in rows if "plan_seconds" in r)
                / max(1, sum(1 for r in rows if "plan_seconds" in r)),
                2,
            ),
        },
    }


def _plan_row(path: Path, report: IngestReport, seconds: float) -> dict[str, Any]:
    ctx = report.context
    return {
        "file": path.name,
        "status": report.status,
        "plan_seconds": round(seconds, 2),
        "model_calls": report.model_calls,
        "tokens_in": report.tokens_in,
        "tokens_out": report.tokens_out,
        "sentences": f"{ctx.sentences_sent}/{ctx.sentences_total}" if ctx else "",
        "context_pages": len(ctx.pages_sent) if ctx else 0,
        "left_out": len(ctx.left_out) if ctx else 0,
        "errors_first": list(report.errors_first),
        "errors_after_repair": list(report.errors_after_repair),
        "pages_written": sum(1 for p in report.pages if not p.path.startswith("Antinomy/Sources")),
        "updates": sum(1 for p in report.pages if p.action == "replace"),
        "citations": sum(p.citations for p in report.pages),
        "contradictions_claimed_dropped": [d.reason for d in report.dropped_contradictions],
        "contradictions_held": len(report.contradictions),
        "rejected_path": report.rejected_path,
    }


def compare(paths: list[Path]) -> dict[str, Any]:
    import lxml.html

    out: dict[str, Any] = {}
    for path in paths:
        if path.suffix == ".html":
            raw = path.read_bytes()
            tree = lxml.html.fromstring(raw)
            for node in tree.xpath("//script|//style"):
                node.drop_tree()
            all_words = _WORDS.findall(tree.text_content().lower())
            main = tree.xpath("//main|//*[@role='main']|//*[@id='content']|//body")[0]
            main_words = set(_WORDS.findall(main.text_content().lower()))
            pairs = (("trafilatura", _trafilatura), ("readability+markdownify", _readability))
            for name, fn in pairs:
                t = time.perf_counter()
                text = fn(raw)
                words = _WORDS.findall(text.lower())
                kept = set(words)
                out[f"{path.name}:{name}"] = {
                    "seconds": round(time.perf_counter() - t, 4),
                    "words": len(words),
                    "removed_share": round(1 - len(words) / max(1, len(all_words)), 3),
                    "main_recall": round(len(kept & main_words) / max(1, len(main_words)), 3),
                    "outside_main_kept": round(len(kept - main_words) / max(1, len(kept)), 3),
                }
        elif path.suffix == ".pdf":
            texts = {}
            for name, fn in (("pypdfium2", _pdfium), ("pdfminer.six", _pdfminer)):
                t = time.perf_counter()
                texts[name] = fn(path)
                out[f"{path.name}:{name}"] = {
                    "seconds": round(time.perf_counter() - t, 4),
                    "words": len(_WORDS.findall(texts[name])),
                    "broken_hyphens": len(re.findall(r"[a-z]-\n[a-z]", texts[name])),
                }
            a, b = (set(_WORDS.findall(t.lower())) for t in texts.values())
            out[f"{path.name}:agreement"] = round(len(a & b) / max(1, len(a | b)), 4)
    return out


def _trafilatura(raw: bytes) -> str:
    import trafilatura

    return trafilatura.extract(raw, output_format="markdown", favor_recall=True) or ""


def _readability(raw: bytes) -> str:
    import markdownify
    from readability import Document

    return str(markdownify.markdownify(Document(raw).summary(html_partial=True)))


def _pdfium(path: Path) -> str:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    return "\n".join(pdf[i].get_textpage().get_text_bounded() for i in range(len(pdf)))


def _pdfminer(path: Path) -> str:
    from pdfminer.high_level import extract_text

    return str(extract_text(str(path)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--compare", action="store_true", help="compare extractor candidates")
    parser.add_argument("--no-plan", action="store_true", help="extraction only (no model)")
    parser.add_argument("--limit", type=int, default=8, help="documents to plan (default 8)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="antinomy-bench-ingest-"))
    try:
        docs, missing = find_documents(work)
        result: dict[str, Any] = {
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "documents": [d.name for d in docs],
            "missing": missing,
            "extract": extract(docs),
        }
        if args.compare:
            result["compare"] = compare(docs)
        if not args.no_plan:
            readable = [
                d for d, r in zip(docs, result["extract"], strict=True) if "refused" not in r
            ]
            result["plan"] = plan_all(readable, args.limit)
        result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
        print(json.dumps(result, indent=1, ensure_ascii=False))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
