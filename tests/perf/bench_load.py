"""The engines together on a loaded machine: threads chosen from the free cores against a
fixed count, side by side in one run. Prints one JSON object, each figure with the load
average beside it.

1. **Cold start**: a fresh process brings the three engines up (LLM, embedder, judge)
   until all are warm, with one core kept busy by a spinning process and without,
   for ``llm_threads`` 0 (chosen, the default) and 2 (the old default on 2 cores).
2. **Generation** tok/s of a 96-token answer, idle, while the embedder runs bulk
   batches on its worker, and while a process spins on one core, for the chosen
   budget and fixed 1 and 2 threads (same process).
3. **Prompt reuse**: the pair describer's requests with another request between each,
   prompt seconds with the saved system-message state and with it dropped each time.

Run: ``python tests/perf/bench_load.py [--rounds 2]`` (a few minutes here).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

COLD = """
import json, sys, time
t0 = time.perf_counter()
from inference.llama_backend import LlamaSettings
from inference.runtime import Runtime, RuntimeSettings
rt = Runtime(RuntimeSettings(llama=LlamaSettings(threads=int(sys.argv[1]))))
rt.start()
rt.wait_ready(timeout=300)
reports = {n: r.ready_seconds for n, r in rt.reports.items()}
print(json.dumps({"ready_s": rt.ready_seconds, "process_s": time.perf_counter() - t0,
                  "engines_s": reports}))
rt.close()
"""


def load() -> float:
    return round(os.getloadavg()[0], 2)


def spinner() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def cold_start(rounds: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for spin in (False, True):
        proc = spinner() if spin else None
        try:
            time.sleep(1.0 if spin else 0.0)
            for threads in (0, 2):
                key = f"{'one_core_busy' if spin else 'idle'}_llm_threads_{threads}"
                runs = []
                for _ in range(rounds):
                    before = load()
                    res = subprocess.run(
                        [sys.executable, "-c", COLD, str(threads)],
                        capture_output=True,
                        text=True,
                        cwd=ROOT,
                        env={**os.environ, "PYTHONPATH": str(ROOT)},
                        check=True,
                    )
                    data = json.loads(res.stdout.strip().splitlines()[-1])
                    runs.append({"ready_s": round(data["ready_s"], 2), "load": before})
                out[key] = runs
        finally:
            if proc is not None:
                proc.kill()
                proc.wait()
    return out


def generation(rt: Any) -> dict[str, Any]:
    from inference.base import GenerationSettings, Message
    from inference.threads import ThreadBudget
    from tests.perf.corpus import texts_of_about

    gen = rt.generator
    chosen = gen.budget
    prompt = [Message("user", "Write a long story about a lighthouse keeper and the sea.")]
    settings = GenerationSettings(max_tokens=96, temperature=0.0, repeat_penalty=1.0)
    bulk = texts_of_about(200, 16)

    def rate() -> float:
        c = rt.submit_complete(prompt, settings=settings).result()
        return c.tokens_out / max(1e-9, c.duration - c.prompt_seconds)

    out: dict[str, Any] = {}
    for name, budget in (
        ("chosen", chosen),
        ("fixed_1", ThreadBudget(fixed=1)),
        ("fixed_2", ThreadBudget(fixed=2)),
    ):
        gen.budget = budget
        rate()  # warm the cache of this prompt
        idle = [rate() for _ in range(2)]
        idle_load = load()
        stop = threading.Event()

        def keep_busy(stop: threading.Event = stop) -> None:
            while not stop.is_set():
                rt.submit_embed(bulk).result()

        worker = threading.Thread(target=keep_busy)
        worker.start()
        time.sleep(0.3)
        busy = [rate() for _ in range(2)]
        busy_load = load()
        stop.set()
        worker.join()
        proc = spinner()
        try:
            time.sleep(0.5)
            spinning = [rate() for _ in range(2)]
            spin_load = load()
        finally:
            proc.kill()
            proc.wait()
        out[name] = {
            "idle_tok_s": round(statistics.median(idle), 1),
            "idle_load": idle_load,
            "embedder_busy_tok_s": round(statistics.median(busy), 1),
            "busy_load": busy_load,
            "busy_over_idle": round(statistics.median(busy) / statistics.median(idle), 2),
            "core_spinning_tok_s": round(statistics.median(spinning), 1),
            "spinning_load": spin_load,
            "spinning_over_idle": round(statistics.median(spinning) / statistics.median(idle), 2),
        }
    gen.budget = chosen
    out["threads_used"] = dict(sorted(gen.thread_use.items()))
    out["chosen_rates_tok_s"] = {
        kind: {n: round(r, 1) for n, r in rates.items()} for kind, rates in chosen.rates().items()
    }
    return out


def prompt_reuse(rt: Any) -> dict[str, Any]:
    from desktop.flows.hunter.prompt import template
    from inference.base import GenerationSettings, Message

    gen = rt.generator
    system = template("hunter-describe-system")
    other = [Message("user", "Summarise the week in one line. " * 8)]
    settings = GenerationSettings(max_tokens=1)
    out: dict[str, Any] = {}
    for keep in (True, False):
        seconds = []
        for i in range(6):
            rt.submit_complete(other, settings=settings).result()  # wipes the live cache
            if not keep:
                gen.prefixes.clear()
            user = template("hunter-describe").format(
                note_a=f"Note {i}",
                quote_a=f"We ship on day {i}.",
                note_b="Rule",
                quote_b=f"Nothing ships on day {i}.",
            )
            c = rt.submit_complete(
                [Message("system", system), Message("user", user)], settings=settings
            ).result()
            seconds.append(c.prompt_seconds)
        out["saved_state" if keep else "no_saved_state"] = {
            "prompt_tokens": c.tokens_in,
            "prompt_s_median": round(statistics.median(seconds[1:]), 3),
            "load": load(),
        }
    out["ratio"] = round(
        out["no_saved_state"]["prompt_s_median"] / out["saved_state"]["prompt_s_median"], 2
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    from inference.runtime import Runtime

    result: dict[str, Any] = {"cores": os.cpu_count(), "load_start": load()}
    result["cold_start"] = cold_start(args.rounds)
    rt = Runtime()
    rt.start()
    rt.wait_ready(timeout=300)
    try:
        result["generation"] = generation(rt)
        result["prompt_reuse"] = prompt_reuse(rt)
    finally:
        rt.close()
    result["load_end"] = load()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
