"""Which language model: the candidates side by side on the three jobs the LLM does.

Every model runs the same fixed set (tests/data/llm_choice/, written for this bench):

* **describe** — 20 judged sentence pairs through the scan's own :class:`Describer`
  (prompt, schema, retry and the ``about_the_quotes`` check): lines kept by the scan,
  lines that name the subject and what differs on each side (``pairs.json``: lists of
  words, a proxy for a person's reading — every line is printed to be read), and lines
  with a number neither quote nor title holds. Measured in a process of its own: cold
  start (the file's pages evicted from the page cache, then load + first token), RSS idle
  (loaded, after one token) and peak, seconds per pair, generation and prompt tokens/s
  (``antinomy doctor``'s measurement).
* **memory** — 10 conversations with 30 planted facts (``transcripts.json``), each in a
  scratch vault of its own: ``antinomy capture import`` then ``antinomy consolidate
  --force --llm GGUF`` (run again, as a user would, after a ``json_failure``). A planted
  fact is *kept* when a written fact holds its words and is filed under its person or
  project; *mixed* when it is filed under, or names, the conversation's other one, or a
  third person's fact is written as the user's own; each planted line's outcome in the
  report is kept, and a *silent drop* is one neither written, already on a page, nor set
  aside, rejected or quarantined with its reason.
* **ingest** — 5 short documents (``sources/``), each into an empty scratch vault with
  ``antinomy ingest FILE --vault V --yes --json --llm GGUF``: plans accepted on the first
  answer, plans applied, claim lines written, and claim lines with a number or most of
  their words not in the source (a proxy; the claims are printed to be read).
* **startup** — load + first token in a fresh process, 3 times from the disk (the file's
  pages evicted) and 3 times from the page cache (a restart), then doctor's generation
  speed in each: medians.

The commands run the product from this checkout, one process per run, so their times
include loading the model, the embedder and the judge. ``--busy-core`` keeps one core
busy (``yes``) for the whole run, as a user's other work would.

Prints one JSON object, and writes it to ``--out`` after every step (a long run can be
read while it goes on). Run::

    python tests/perf/bench_llm_choice.py --busy-core --out build/llm_choice.json \\
        --model smollm2=PATH.gguf --model qwen-0.5b=PATH.gguf …

``--model ID`` alone takes the file of that manifest entry (its packages installed; a model
in parts is joined first, outside the timings).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

DATA = ROOT / "tests" / "data" / "llm_choice"
TASKS = ("describe", "ingest", "memory", "startup")
_NUMBER = re.compile(r"\d+(?:[:.,]\d+)*")
_WORD = re.compile(r"[a-z0-9][a-z0-9'-]+")
_STOP = {
    "the", "a", "an", "and", "or", "of", "to", "in", "on", "at", "by", "for", "with", "from",
    "is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "these", "those",
    "as", "which", "who", "will", "would", "can", "may", "must", "not", "no", "has", "have",
    "had", "their", "there", "they", "about", "after", "before", "into", "than", "then",
    "also", "each", "every", "per", "up", "out",
}  # fmt: skip


def rss_mb() -> tuple[float, float]:
    """This process's resident set now and at its peak, in MB (from /proc)."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def evict(path: Path) -> None:
    """Drop this one file's pages from the page cache, so the next load reads the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def numbers(text: str) -> set[str]:
    return {n.rstrip(".,").replace(",", "") for n in _NUMBER.findall(text)}


def has_any(text: str, words: list[str]) -> bool:
    low = text.lower()
    return any(w.lower() in low for w in words)


# ------------------------------------------------------------------------- describe


def describe_worker(gguf: str, limit: int) -> dict[str, Any]:
    """In a process of its own: cold start, RSS, the 20 descriptions, doctor's speed."""
    from desktop.flows.hunter.describe import Describer
    from desktop.flows.hunter.records import Pair
    from inference.base import GenerationSettings, Message
    from inference.diagnostics import as_dict, measure_generation
    from inference.engines import RuntimeSettings, open_generator

    evict(Path(gguf))
    t0 = time.perf_counter()
    engine = open_generator(RuntimeSettings(llm_path=gguf))
    load = time.perf_counter() - t0
    t1 = time.perf_counter()
    engine.complete([Message("user", "Say hello.")], settings=GenerationSettings(max_tokens=1))
    first = time.perf_counter() - t1
    idle, _ = rss_mb()
    pairs = json.loads((DATA / "pairs.json").read_text())["pairs"][:limit]
    describer = Describer(engine)
    rows = []
    started = time.perf_counter()
    for p in pairs:
        pair = Pair("a.md", "b.md", p["note_a"], p["note_b"], p["quote_a"], p["quote_b"], "")
        before = len(describer.attempts)
        failures = len(describer.raw_failures)
        t = time.perf_counter()
        line = describer.describe(pair)
        seconds = time.perf_counter() - t
        raw = describer.raw_failures[failures:]
        shown = line or (raw[-1] if raw else "")
        given = numbers(f"{p['quote_a']} {p['quote_b']} {p['note_a']} {p['note_b']}")
        rows.append(
            {
                "pair": f"{p['note_a']} / {p['note_b']}",
                "kept_by_scan": line is not None,
                "line": shown,
                "names_subject": has_any(shown, p["subject"]),
                "names_both_sides": has_any(shown, p["a"]) and has_any(shown, p["b"]),
                "invented_numbers": sorted(numbers(shown) - given),
                "seconds": round(seconds, 2),
                "attempts": len(describer.attempts) - before,
            }
        )
    total = time.perf_counter() - started
    attempts = describer.attempts
    gen_s = sum(a.duration - a.prompt_seconds for a in attempts)
    speed = as_dict(measure_generation(engine))
    _, peak = rss_mb()
    close = getattr(engine, "close", None)
    if close is not None:
        close()
    useful = [
        r
        for r in rows
        if r["names_subject"] and r["names_both_sides"] and not r["invented_numbers"]
    ]
    return {
        "model": engine.model_name,
        "model_id": engine.model_id,
        "load_s": round(load, 2),
        "first_token_s": round(first, 2),
        "cold_start_s": round(load + first, 2),
        "rss_idle_mb": round(idle),
        "rss_peak_mb": round(peak),
        "pairs": len(rows),
        "kept_by_scan": sum(r["kept_by_scan"] for r in rows),
        "useful_proxy": len(useful),
        "useful_and_kept": sum(1 for r in useful if r["kept_by_scan"]),
        "invented_numbers": sum(1 for r in rows if r["invented_numbers"]),
        "seconds_total": round(total, 1),
        "seconds_per_pair": round(total / len(rows), 2),
        "describe_tokens_per_second": round(
            sum(a.tokens_out for a in attempts) / max(gen_s, 1e-9), 1
        ),
        "speed": speed,
        "rows": rows,
    }


def startup_worker(gguf: str, *, evicted: bool) -> dict[str, Any]:
    """In a fresh process: load + first token, from the disk (``evicted``) or the page
    cache (a restart), and the RSS once loaded."""
    from inference.base import GenerationSettings, Message
    from inference.diagnostics import measure_generation
    from inference.engines import RuntimeSettings, open_generator
    from inference.registry import resolve_model

    resolve_model("llm", gguf)  # hash checked (and cached) before the clock starts
    if evicted:
        evict(Path(gguf))
    t0 = time.perf_counter()
    engine = open_generator(RuntimeSettings(llm_path=gguf))
    load = time.perf_counter() - t0
    t1 = time.perf_counter()
    engine.complete([Message("user", "Say hello.")], settings=GenerationSettings(max_tokens=1))
    first = time.perf_counter() - t1
    idle, _ = rss_mb()
    speed = measure_generation(engine)
    return {
        "load_s": load,
        "first_token_s": first,
        "rss_idle_mb": idle,
        "tokens_per_second": speed.tokens_per_second,
        "prompt_tokens_per_second": speed.prompt_tokens_per_second,
    }


def bench_startup(gguf: str, rounds: int = 3) -> dict[str, Any]:
    """Median of ``rounds`` starts from the disk and from the page cache, each its own
    process, and the median speed of the six (``antinomy doctor``'s measurement)."""
    out: dict[str, Any] = {}
    every: list[dict[str, Any]] = []
    for label, evicted in (("from_disk", True), ("from_page_cache", False)):
        runs = []
        for _ in range(rounds):
            cmd = [sys.executable, __file__, "--model", "x", "--worker", gguf, "--startup"]
            if evicted:
                cmd.append("--evict")
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
            row = parse_json(proc.stdout)
            if row is None:
                return {"error": proc.stderr[-1500:]}
            runs.append(row)
            every.append(row)
        mid = sorted(runs, key=lambda r: r["load_s"] + r["first_token_s"])[len(runs) // 2]
        out[label] = {
            "cold_start_s": round(mid["load_s"] + mid["first_token_s"], 2),
            "load_s": round(mid["load_s"], 2),
            "first_token_s": round(mid["first_token_s"], 2),
            "all_s": [round(r["load_s"] + r["first_token_s"], 2) for r in runs],
        }
        out["rss_idle_mb"] = round(mid["rss_idle_mb"])
    for key in ("tokens_per_second", "prompt_tokens_per_second"):
        values = sorted(r[key] for r in every)
        out[key] = round(values[len(values) // 2], 1)
    return out


# ---------------------------------------------------------------------- CLI runs


def run_cli(args: list[str], *, timeout: float = 3600) -> dict[str, Any]:
    """``antinomy ARGS`` from this checkout in its own process: exit code, stdout, wall
    seconds and the process's peak RSS."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "desktop.cli.main", *args],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=err,
            text=True,
        )
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        # Reaped here, not by Popen, for this one process's own resource use.
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    return {
        "code": proc.returncode,
        "stdout": stdout,
        "stderr_tail": stderr[-600:],
        "seconds": round(time.perf_counter() - t0, 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024),
    }


def parse_json(text: str) -> dict[str, Any] | None:
    start = text.find("{")
    try:
        return json.loads(text[start:]) if start >= 0 else None
    except ValueError:
        return None


# ------------------------------------------------------------------------- memory


def transcript_jsonl(conversation: dict[str, Any]) -> str:
    """The conversation as a Claude Code transcript: one JSON record per turn."""
    records = []
    for i, turn in enumerate(conversation["turns"]):
        role, text = turn[0], turn[1]
        content: Any = text if role == "user" else [{"type": "text", "text": text}]
        records.append(
            {
                "type": role,
                "isSidechain": False,
                "sessionId": f"bench-{conversation['id']}",
                "uuid": f"{conversation['id']}-{i}",
                "timestamp": f"{conversation['day']}T10:{i:02d}:00.000Z",
                "message": {"role": role, "content": content},
            }
        )
    return "\n".join(json.dumps(r) for r in records) + "\n"


def score_fact(planted: dict[str, Any], facts: list[dict[str, Any]]) -> dict[str, Any]:
    """Kept: a written fact holds every 'keep' group and sits under one of 'subject';
    mixed: a fact with those words filed under, or naming, the other one, or turned into
    the user's own."""
    holding = [f for f in facts if all(has_any(f["text"], group) for group in planted["keep"])]
    # A third person's fact rewritten as the user's own ("The user prefers …") is mixed too.
    about_user = re.search(r"\b(i|my|me)\b", planted["line"].lower()) is not None

    def mixes(f: dict[str, Any]) -> bool:
        if not about_user and "the user" in f["text"].lower():
            return True
        return has_any(f["subject"] + " " + f["text"], planted["other"])

    kept = [f for f in holding if has_any(f["subject"], planted["subject"]) and not mixes(f)]
    mixed = [f for f in holding if mixes(f)]
    return {
        "kept": bool(kept),
        "mixed": bool(mixed),
        "written_with_its_words": bool(holding),
        "facts": [f"{f['subject']} / {f['section']}: {f['text']}" for f in holding],
    }


def silent(outcome: str) -> bool:
    """A planted line with no account in the report: not written, not already on a page,
    not set aside, rejected or quarantined with its reason."""
    marks = ("written to", "already on", "set aside", "rejected", "quarantined")
    return not any(mark in outcome for mark in marks)


def bench_memory(model: str, gguf: str, work: Path, limit: int) -> dict[str, Any]:
    conversations = json.loads((DATA / "transcripts.json").read_text())["transcripts"][:limit]
    rows = []
    seconds = 0.0
    peak = 0
    for conv in conversations:
        vault = work / f"memory-{model}-{conv['id']}"
        vault.mkdir(parents=True)
        transcript = work / f"{conv['id']}.jsonl"
        transcript.write_text(transcript_jsonl(conv))
        imported = run_cli(["capture", "import", str(transcript), "--vault", str(vault)])
        runs = []
        facts: list[dict[str, Any]] = []
        outcomes: dict[str, str] = {}
        for _ in range(3):  # a json_failure leaves the input pending: run again
            run = run_cli(["consolidate", "--vault", str(vault), "--force", "--json",
                           "--llm", gguf])  # fmt: skip
            report = parse_json(run["stdout"]) or {}
            seconds += run["seconds"]
            peak = max(peak, run["peak_rss_mb"])
            facts += [
                {k: str(f.get(k, "")) for k in ("subject", "section", "text", "wording")}
                | {"fallback": bool(f.get("fallback_reason")), "refused": f.get("subject_refused")}
                for f in report.get("accepted", [])
            ]
            for line in report.get("lines", []):
                number = str(line.get("line_id", "")).rpartition("#L")[2]
                outcomes[number] = f"{line.get('outcome')}: {line.get('detail')}"
            runs.append(
                {
                    "code": run["code"],
                    "status": report.get("status"),
                    "seconds": run["seconds"],
                    "rejected": [
                        f"{r.get('reason')}: {r.get('text')}" for r in report.get("rejected", [])
                    ],
                    "stderr_tail": run["stderr_tail"] if not report else "",
                }
            )
            if report.get("status") != "json_failure":
                break
        # One turn is one raw line here, numbered from 1: the planted line's outcome.
        planted = [
            turn[2] | {"line": turn[1], "outcome": outcomes.get(str(i + 1), "")}
            for i, turn in enumerate(conv["turns"])
            if len(turn) > 2
        ]
        rows.append(
            {
                "id": conv["id"],
                "import_code": imported["code"],
                "runs": runs,
                "facts": [f"{f['subject']} / {f['section']}: {f['text']}" for f in facts],
                "rephrase_fallbacks": sum(f["fallback"] for f in facts),
                "rephrased": sum(f["wording"] == "rephrased" for f in facts),
                "subjects_refused": [f["refused"] for f in facts if f["refused"]],
                "planted": [
                    {"line": p["line"], "outcome": p["outcome"]}
                    | score_fact(p, facts)
                    | {"silent": silent(p["outcome"])}
                    for p in planted
                ],
            }
        )
    planted_all = [p for r in rows for p in r["planted"]]
    return {
        "transcripts": len(rows),
        "planted": len(planted_all),
        "kept": sum(p["kept"] for p in planted_all),
        "mixed": sum(p["mixed"] for p in planted_all),
        "written_with_its_words": sum(p["written_with_its_words"] for p in planted_all),
        "silent_drops": sum(p["silent"] for p in planted_all),
        "json_failures": sum(
            1 for r in rows for run in r["runs"] if run["status"] == "json_failure"
        ),
        "rephrase_fallbacks": sum(r["rephrase_fallbacks"] for r in rows),
        "rephrased": sum(r["rephrased"] for r in rows),
        "subjects_refused": sum(len(r["subjects_refused"]) for r in rows),
        "seconds_total": round(seconds, 1),
        "seconds_per_transcript": round(seconds / len(rows), 1),
        "peak_rss_mb": peak,
        "rows": rows,
    }


# ------------------------------------------------------------------------- ingest


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


def claim_problem(claim: str, source: str) -> str | None:
    """A written claim whose number or most of whose words are not in the source."""
    text = re.sub(r"\[\[[^\]]*\]\]|\[[^\]]*\]\([^)]*\)|\^[\w-]+", " ", claim)
    extra = numbers(text) - numbers(source)
    if extra:
        return f"number(s) not in the source: {', '.join(sorted(extra))}"
    words = content_words(text)
    known = content_words(source)
    stems = {w[:5] for w in known}
    missing = {w for w in words if w not in known and w[:5] not in stems}
    if words and len(missing) > len(words) / 2:
        return f"most words not in the source: {', '.join(sorted(missing))}"
    return None


def added_claims(report: dict[str, Any]) -> list[dict[str, str]]:
    from desktop.flows.ingest.validate import claim_lines

    source_note = report.get("source_note")
    out = []
    for f in report.get("files", []):
        if f["path"] == source_note:
            continue
        added = "\n".join(
            line[1:]
            for line in f["diff"].splitlines()
            if line.startswith("+") and not line.startswith("+++")
        )
        body = added.split("\n---\n", 1)[-1] if added.startswith("---") else added
        out += [{"page": f["path"], "claim": c.strip()} for c in claim_lines(body)]
    return out


def bench_ingest(model: str, gguf: str, work: Path, limit: int) -> dict[str, Any]:
    rows = []
    seconds = 0.0
    peak = 0
    for doc in sorted((DATA / "sources").glob("*.md"))[:limit]:
        vault = work / f"ingest-{model}-{doc.stem}"
        vault.mkdir(parents=True)
        (vault / "Home.md").write_text("# Home\n\nMy notes.\n")
        run = run_cli(["ingest", str(doc), "--vault", str(vault), "--yes", "--json",
                       "--llm", gguf])  # fmt: skip
        seconds += run["seconds"]
        peak = max(peak, run["peak_rss_mb"])
        report = parse_json(run["stdout"]) or {}
        source = doc.read_text()
        claims = [c | {"problem": claim_problem(c["claim"], source)} for c in added_claims(report)]
        rows.append(
            {
                "document": doc.name,
                "code": run["code"],
                "status": report.get("status"),
                "applied": bool(report.get("applied")),
                "first_answer_accepted": report.get("status") == "planned"
                and not report.get("errors_first"),
                "errors_first": report.get("errors_first", []),
                "errors_after_repair": report.get("errors_after_repair", []),
                "seconds": run["seconds"],
                "pages": [f["path"] for f in report.get("files", [])],
                "claims": claims,
                "dropped_claims": [
                    f"{d.get('reason')}: {d.get('claim')}" for d in report.get("dropped_claims", [])
                ],
                "stderr_tail": run["stderr_tail"] if not report else "",
            }
        )
    claims_all = [c for r in rows for c in r["claims"]]
    return {
        "documents": len(rows),
        "first_answer_accepted": sum(r["first_answer_accepted"] for r in rows),
        "applied": sum(r["applied"] for r in rows),
        "claims": len(claims_all),
        "claims_flagged": sum(1 for c in claims_all if c["problem"]),
        "seconds_total": round(seconds, 1),
        "seconds_per_document": round(seconds / len(rows), 1),
        "peak_rss_mb": peak,
        "rows": rows,
    }


# ---------------------------------------------------------------------------- main


def model_file(spec: str) -> tuple[str, str]:
    """``ID=PATH``, or a manifest id whose package is installed."""
    if "=" in spec:
        name, path = spec.split("=", 1)
        return name, str(Path(path).expanduser().resolve())
    from inference.registry import resolve_model

    return spec, str(resolve_model("llm", spec).path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", required=True, metavar="ID[=GGUF]")
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--out", type=Path, help="write the JSON here too, after every step")
    parser.add_argument("--busy-core", action="store_true", help="keep one core busy (yes)")
    parser.add_argument("--limit", type=int, default=100, help="items per task (a quick try)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--startup", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--evict", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker and args.startup:
        print(json.dumps(startup_worker(args.worker, evicted=args.evict)))
        return
    if args.worker:
        print(json.dumps(describe_worker(args.worker, args.limit)))
        return
    models = [model_file(m) for m in args.model]
    tasks = [t for t in args.tasks.split(",") if t]
    busy = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) if args.busy_core else None
    result: dict[str, Any] = {
        "cores": os.cpu_count(),
        "busy_core": args.busy_core,
        "models": dict(models),
        "results": {},
    }
    try:
        with tempfile.TemporaryDirectory(prefix="bench-llm-choice-") as tmp:
            for task in tasks:  # task by task, the models side by side
                for name, gguf in models:
                    t0 = time.perf_counter()
                    if task == "describe":
                        cmd = [sys.executable, __file__, "--model", "x", "--worker", gguf,
                               "--limit", str(args.limit)]  # fmt: skip
                        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
                        row = parse_json(proc.stdout) or {"error": proc.stderr[-1500:]}
                    elif task == "startup":
                        row = bench_startup(gguf)
                    elif task == "memory":
                        row = bench_memory(name, gguf, Path(tmp), args.limit)
                    else:
                        row = bench_ingest(name, gguf, Path(tmp), args.limit)
                    row["wall_s"] = round(time.perf_counter() - t0, 1)
                    row["load_average"] = [round(x, 2) for x in os.getloadavg()]
                    result["results"].setdefault(task, {})[name] = row
                    if args.out:
                        args.out.parent.mkdir(parents=True, exist_ok=True)
                        args.out.write_text(json.dumps(result, indent=1))
    finally:
        if busy is not None:
            busy.terminate()
            busy.wait()
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
