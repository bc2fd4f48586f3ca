"""``antinomy serve`` — the loopback endpoint, headless (the desktop app runs the same code)."""

from __future__ import annotations

import argparse
import signal
import threading
from types import FrameType

from desktop.cli import exits
from desktop.cli.common import add_vault_option, set_handler, vault_path
from desktop.cli.model_options import add_model_options, runtime_settings
from desktop.cli.output import progress
from desktop.flows.guard import describe_thresholds, load_guard_settings
from desktop.service.heap import return_freed_heap
from desktop.service.security import load_or_create_token, token_path
from desktop.service.server import DEFAULT_PORT, start_endpoint
from inference.runtime import Runtime


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "serve",
        help="serve embeddings and the agent guard on loopback (127.0.0.1, ::1)",
        description="Run the local endpoint until Ctrl-C: OpenAI-compatible /v1/embeddings, "
        "Ollama-compatible /api/embed and /api/embeddings, /v1/guard/check for agent hooks. "
        "Loopback only; every route but /healthz needs the bearer token (the embedding routes "
        "too, unless --open-embeddings). Exit codes: 0 stopped, 1 failure (port in use), "
        "69 models unavailable.",
    )
    add_vault_option(p)
    p.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT})"
    )
    p.add_argument("--no-guard", action="store_true", help="serve embeddings only")
    p.add_argument(
        "--open-embeddings",
        action="store_true",
        help="serve the embedding routes (and the model list) without the token, for clients "
        "that cannot send one, such as Ollama's; still loopback only. Recall, capture and the "
        "guard always need the token",
    )
    add_model_options(p)
    set_handler(p, run_serve)


def run_serve(args: argparse.Namespace) -> int:
    root = vault_path(args)
    # The language model only consolidates memory here: loaded when that first needs it
    # (about 300 MiB less at idle).
    runtime = Runtime(runtime_settings(args), on_demand=("llm",))
    runtime.start()
    load_or_create_token()
    handle = start_endpoint(
        runtime=runtime,
        vault_root=root,
        port=args.port,
        guard=not args.no_guard,
        open_embeddings=args.open_embeddings,
    )
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, on_signal)
    try:
        progress(f"Antinomy endpoint on {handle.url} (vault {root})")
        progress(f"  bearer token in {token_path()}")
        if args.open_embeddings:
            progress("  embeddings open without the token (loopback only); the rest needs it")
        guard = load_guard_settings(root)
        state = "on" if guard.enabled else "off (turn on: antinomy guard enable)"
        progress(
            f"  guard for this vault: {state}; mode {guard.mode}, "
            f"{describe_thresholds(guard, runtime.settings)}"
        )
        runtime.wait_ready()
        return_freed_heap()
        progress(f"  models ready in {runtime.ready_seconds or 0:.2f} s; Ctrl-C stops")
        guard_reading = handle.guard is not None
        while not stop.wait(0.5):
            if guard_reading and handle.guard is not None and handle.guard.ready.is_set():
                guard_reading = False  # it has read the decisions (and built its int8 copy)
                return_freed_heap()
    except KeyboardInterrupt:
        pass
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        handle.stop()
        runtime.close()
        progress("endpoint stopped.")
    return exits.OK
