"""Review actions on synthetic vaults: where the time of a dismissal goes.

For vaults of N notes (10% of them with a ``hunter_false_positives`` list),
times, interleaved, each repeated:

* ``walk``          — listing the vault to find the notes by name (``VaultFiles``);
* ``dismiss``       — ``dismiss_pair`` end to end (walk, read, edit, journaled apply);
* ``undismiss``     — the same, taking it back;
* ``apply_only``    — a 2-file ``apply_plan`` with the same writes (the engine's floor);
* ``list_dismissed``— every dismissed pair of the vault.

Prints one JSON object (medians in ms, and dismiss / apply_only as a ratio).
Run: ``python tests/perf/bench_review.py [--sizes 200 2000 10000] [--repeat 7]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.flows.review import VaultFiles, dismiss_pair, list_dismissed, undismiss_pair
from desktop.vault.layout import approval_identity
from desktop.vault.transactions import Plan, Write, apply_plan, approval_hash, sha256_hex


def make_vault(root: Path, n: int) -> None:
    for i in range(n):
        folder = root / f"F{i % 20:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        extra = f"hunter_false_positives: [Note {i + 1:05d}]\n" if i % 10 == 0 else ""
        (folder / f"Note {i:05d}.md").write_text(
            f"---\ntype: {'tension' if i % 2 else 'substrate'}\nstatus: open\n{extra}---\n"
            f"# Note {i}\n\n" + "Some words about a position held. " * 20 + "\n"
        )


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def bench(n: int, repeat: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        make_vault(root, n)
        a, b = "F01/Note 00001.md", "F03/Note 00003.md"
        times: dict[str, list[float]] = {
            k: [] for k in ("walk", "dismiss", "undismiss", "apply_only", "list_dismissed")
        }
        for r in range(repeat):
            times["walk"].append(timed(lambda: VaultFiles(root)))
            times["dismiss"].append(timed(lambda: dismiss_pair(root, a, b)))
            times["undismiss"].append(timed(lambda: undismiss_pair(root, a, b)))
            writes = []
            for path in (a, b):
                data = (root / path).read_bytes()
                writes.append(Write.replace(path, data + b"\n", expected_sha256=sha256_hex(data)))
            plan = Plan(f"bench-{r}", "bench", "bench", tuple(writes))
            approval = approval_hash(plan, approval_identity(root))
            times["apply_only"].append(
                timed(
                    lambda plan=plan, approval=approval: apply_plan(root, plan, approval=approval)
                )
            )
            times["list_dismissed"].append(timed(lambda: list_dismissed(root)))
        med = {k: round(statistics.median(v), 2) for k, v in times.items()}
        return {
            "notes": n,
            "median_ms": med,
            "dismiss_over_apply": round(med["dismiss"] / med["apply_only"], 2),
            "pairs_listed": len(list_dismissed(root)),
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 2000, 10000])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    print(json.dumps({"runs": [bench(n, args.repeat) for n in args.sizes]}, indent=2))


if __name__ == "__main__":
    main()
