"""Generation and prompt speed of the embedded backend, side by side in one run.

Compares, at 1 and 2 threads, on the shipped GGUF:

* ``lowlevel``  — a bare llama.cpp decode loop through llama-cpp-python's
  low-level API (greedy sampler chain), the reference speed;
* ``ours``      — ``LlamaGenerator.complete`` without a schema;
* ``ours+schema`` — the same with a JSON schema (lazy grammar check);
* ``eager+schema`` — llama-cpp-python's own ``create_chat_completion`` with
  the schema (grammar applied to the whole vocabulary every token).

Prints one JSON object; ratios are against ``lowlevel`` at the same thread
count. Run: ``python tests/perf/bench_generation.py [--tokens 128] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import llama_cpp

from inference.base import GenerationSettings, Message
from inference.embedder import EmbedderSettings, OnnxEmbedder
from inference.llama_backend import LlamaGenerator, LlamaSettings
from inference.registry import resolve_model

PROMPT = (
    "Here are two notes from my vault.\n"
    "NOTE Deploys: We deploy to production every Friday afternoon, right after the weekly "
    "review, so that the team can watch the release together.\n"
    "NOTE Freeze: Nothing is deployed in the last two days before a weekend; risky changes "
    "wait until Monday so nobody is paged on Saturday.\n"
    "Describe carefully, in several sentences, how these two notes relate to each other, and "
    "list every pair of statements that cannot both be true."
)
SCHEMA = {
    "type": "object",
    "properties": {
        "pairs": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "note_a": {"type": "string"},
                    "note_b": {"type": "string"},
                    "quote_a": {"type": "string"},
                    "quote_b": {"type": "string"},
                    "description": {"type": "string"},
                    "confidence": {"type": "string", "enum": ["high", "medium", "low"]},
                },
                "required": ["note_a", "note_b", "quote_a", "quote_b", "description", "confidence"],
            },
        }
    },
    "required": ["pairs"],
}


def lowlevel(gen: LlamaGenerator, tokens: list[int], n_out: int) -> dict[str, float]:
    """Bare decode loop: llama_decode + greedy sampler chain, no Python sampling."""
    llama = gen._llama
    ctx = llama._ctx.ctx
    llama.reset()
    llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(ctx), True)
    chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
    llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_greedy())
    arr = (llama_cpp.llama_token * len(tokens))(*tokens)
    t0 = time.perf_counter()
    batch = llama_cpp.llama_batch_get_one(arr, len(tokens))
    assert llama_cpp.llama_decode(ctx, batch) == 0
    t1 = time.perf_counter()
    one = (llama_cpp.llama_token * 1)()
    made = 0
    for _ in range(n_out):
        tok = llama_cpp.llama_sampler_sample(chain, ctx, -1)
        one[0] = tok
        made += 1
        assert llama_cpp.llama_decode(ctx, llama_cpp.llama_batch_get_one(one, 1)) == 0
    t2 = time.perf_counter()
    llama_cpp.llama_sampler_free(chain)
    llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(ctx), True)
    llama.reset()
    return {"prompt_tps": len(tokens) / (t1 - t0), "gen_tps": made / (t2 - t1), "out": made}


def ours(gen: LlamaGenerator, n_out: int, schema: dict[str, Any] | None) -> dict[str, float]:
    gen._llama.reset()  # no prompt cache: measure the full prompt every time
    c = gen.complete(
        [Message("user", PROMPT)], schema=schema, settings=GenerationSettings(max_tokens=n_out)
    )
    gen_s = c.duration - c.prompt_seconds
    return {
        "prompt_tps": c.tokens_in / c.prompt_seconds,
        "gen_tps": c.tokens_out / gen_s,
        "out": c.tokens_out,
    }


def eager(gen: LlamaGenerator, n_out: int) -> dict[str, float]:
    llama = gen._llama
    llama.reset()
    t0 = time.perf_counter()
    first: list[float] = []
    n = 0
    for chunk in llama.create_chat_completion(
        [{"role": "user", "content": PROMPT}],
        response_format={"type": "json_object", "schema": SCHEMA},
        max_tokens=n_out,
        temperature=0.0,
        stream=True,
    ):
        delta = chunk["choices"][0]["delta"].get("content")  # type: ignore[index]
        if delta:
            n += 1
            if not first:
                first.append(time.perf_counter())
    t2 = time.perf_counter()
    llama.reset()
    # Stream chunks are tokens here (one chunk per token).
    tokens_in = len(gen.tokenize(gen.format_prompt([Message("user", PROMPT)])))
    return {
        "prompt_tps": tokens_in / (first[0] - t0),
        "gen_tps": (n - 1) / (t2 - first[0]),
        "out": n,
    }


@contextlib.contextmanager
def busy_embedder() -> Iterator[threading.Event]:
    """Keep the shipped embedder (1 thread) busy in this process meanwhile."""
    embedder = OnnxEmbedder(resolve_model("embedder"), EmbedderSettings(threads=1))  # int8
    done = threading.Event()
    busy = threading.Event()
    busy.set()

    def churn() -> None:
        while not done.is_set():
            embedder.embed([PROMPT] * 8)

    worker = threading.Thread(target=churn, daemon=True)
    worker.start()
    try:
        yield busy
    finally:
        done.set()
        worker.join()


def median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: round(statistics.median(r[k] for r in runs), 1) for k in runs[0]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    model = resolve_model("llm")
    results: dict[str, Any] = {"model": model.title, "tokens": args.tokens, "threads": {}}
    for threads in (1, 2):
        gen = LlamaGenerator(model, LlamaSettings(threads=threads, n_ctx=2048))
        tokens = gen.tokenize(gen.format_prompt([Message("user", PROMPT)]))
        ours(gen, 4, None)  # warm
        rows: dict[str, list[dict[str, float]]] = {
            "lowlevel": [],
            "ours": [],
            "ours+schema": [],
            "eager+schema": [],
        }
        gen.grammar_stats[:] = [0, 0, 0]
        for _ in range(args.repeat):
            rows["lowlevel"].append(lowlevel(gen, tokens, args.tokens))
            rows["ours"].append(ours(gen, args.tokens, None))
            rows["ours+schema"].append(ours(gen, args.tokens, SCHEMA))
            rows["eager+schema"].append(eager(gen, args.tokens))
        med = {k: median(v) for k, v in rows.items()}
        base = med["lowlevel"]
        for row in med.values():
            row["gen_ratio_vs_lowlevel"] = round(row["gen_tps"] / base["gen_tps"], 3)
            row["prompt_ratio_vs_lowlevel"] = round(row["prompt_tps"] / base["prompt_tps"], 3)
        med["grammar_checks"] = {
            "first_choice_allowed": gen.grammar_stats[0],
            "found_in_top_candidates": gen.grammar_stats[1],
            "full_vocab_mask": gen.grammar_stats[2],
        }
        med["prompt_tokens"] = {"n": len(tokens)}
        # The app embeds (indexing, guard) while it generates: same call, embedder busy.
        with busy_embedder() as busy:
            med["ours_while_embedding"] = median(
                [ours(gen, args.tokens, None) for _ in range(args.repeat)]
            )
            gen.contention = busy.is_set  # what the Runtime wires: drop to 1 thread
            med["ours_while_embedding_adaptive"] = median(
                [ours(gen, args.tokens, None) for _ in range(args.repeat)]
            )
            gen.contention = None
        results["threads"][str(threads)] = med
        gen.close()
    json.dump(results, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
