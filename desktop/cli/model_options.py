"""The model options every model-loading command shares, and the runtime settings they give
(the saved settings with these flags on top: :func:`desktop.flows.settings.resolve`)."""

from __future__ import annotations

import argparse

from desktop.cli.common import add_embedder_backend_options, embedder_override
from desktop.flows.settings import BackendSettings, Overrides, resolve
from foundation.errors import AntinomyError
from inference.runtime import RuntimeSettings


def add_model_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("models (default: the saved settings, else the bundled ones)")
    group.add_argument(
        "--llm", metavar="GGUF", help="a GGUF model file of your own, or an id `models` lists"
    )
    group.add_argument("--embedder", metavar="ONNX", help="an ONNX sentence-embedding model")
    group.add_argument("--judge", metavar="ONNX", help="an ONNX contradiction judge")
    group.add_argument(
        "--backend",
        choices=["embedded", "http"],
        help="run the LLM in-process or on an OpenAI-compatible server (default: as saved)",
    )
    group.add_argument("--base-url", help="the server's base URL, e.g. http://127.0.0.1:8080/v1")
    group.add_argument("--model", default="", help="model name to ask the server for")
    group.add_argument("--api-key", help="API key for the server, if it needs one")
    group.add_argument("--threads", type=int, help="threads for the embedded LLM")
    add_embedder_backend_options(parser)


def overrides(args: argparse.Namespace) -> Overrides:
    """What the model flags set over the saved settings."""
    backend: BackendSettings | None = None
    if args.backend == "http" or (args.backend is None and args.base_url):
        if not args.base_url:
            raise AntinomyError("--backend http needs --base-url (e.g. http://127.0.0.1:8080/v1).")
        backend = BackendSettings(
            kind="http", base_url=args.base_url, model=args.model, api_key=args.api_key
        )
    elif args.backend == "embedded":
        backend = BackendSettings()
    return Overrides(
        llm_path=args.llm,
        embedder_path=args.embedder,
        judge_path=args.judge,
        backend=backend,
        embedder_backend=embedder_override(args),
        llm_threads=args.threads or None,
    )


def runtime_settings(args: argparse.Namespace) -> RuntimeSettings:
    return resolve(overrides(args)).runtime
