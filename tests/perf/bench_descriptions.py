"""Plain descriptions on the fixed set of 20 judged pairs (``tests/data/llm_choice``).

The line a card shows when the model is not asked (or fails): the scan's own
:func:`desktop.flows.hunter.describe.plain_description`, scored as
``bench_llm_choice.py --tasks describe`` scores a model's lines — it names the pair's
subject, names both sides, and has no number the quotes and titles do not. Prints JSON with
every line, so the count can be checked by reading.

    python tests/perf/bench_descriptions.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_llm_choice import DATA, has_any, numbers  # noqa: E402

from desktop.flows.hunter.describe import plain_description  # noqa: E402
from desktop.flows.hunter.records import Pair  # noqa: E402


def main() -> int:
    pairs = json.loads((DATA / "pairs.json").read_text(encoding="utf-8"))["pairs"]
    rows = []
    started = time.perf_counter()
    for p in pairs:
        pair = Pair("a.md", "b.md", p["note_a"], p["note_b"], p["quote_a"], p["quote_b"], "")
        line = plain_description(pair)
        given = numbers(f"{p['quote_a']} {p['quote_b']} {p['note_a']} {p['note_b']}")
        rows.append(
            {
                "pair": f"{p['note_a']} / {p['note_b']}",
                "line": line,
                "names_subject": has_any(line, p["subject"]),
                "names_both_sides": has_any(line, p["a"]) and has_any(line, p["b"]),
                "invented_numbers": sorted(numbers(line) - given),
            }
        )
    seconds = time.perf_counter() - started
    useful = [
        r
        for r in rows
        if r["names_subject"] and r["names_both_sides"] and not r["invented_numbers"]
    ]
    report = {
        "pairs": len(rows),
        "names_subject_and_both_sides": len(useful),
        "names_both_sides": sum(r["names_both_sides"] for r in rows),
        "invented_numbers": sum(bool(r["invented_numbers"]) for r in rows),
        "ms_per_description": round(1000 * seconds / max(1, len(rows)), 2),
        "rows": rows,
    }
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
