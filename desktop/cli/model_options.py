"""The model options every model-loading command shares, and the runtime settings they give."""

from __future__ import annotations

import argparse
from dataclasses import replace

from desktop.cli.common import add_embedder_backend_options, embedder_http
from inference.errors import AntinomyError
from inference.http_backend import HttpSettings
from inference.runtime import RuntimeSettings


def add_model_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("models (default: the bundled models)")
    group.add_argument("--llm", metavar="GGUF", help="a GGUF model file of your own")
    group.add_argument("--embedder", metavar="ONNX", help="an ONNX sentence-embedding model")
    group.add_argument("--judge", metavar="ONNX", help="an ONNX contradiction judge")
    group.add_argument(
        "--backend",
        choices=["embedded", "http"],
        default="embedded",
        help="run the LLM in-process (default) or on an OpenAI-compatible server",
    )
    group.add_argument("--base-url", help="the server's base URL, e.g. http://127.0.0.1:8080/v1")
    group.add_argument("--model", default="", help="model name to ask the server for")
    group.add_argument("--api-key", help="API key for the server, if it needs one")
    group.add_argument("--threads", type=int, help="threads for the embedded LLM")
    add_embedder_backend_options(parser)


def runtime_settings(args: argparse.Namespace) -> RuntimeSettings:
    settings = RuntimeSettings(
        llm_path=args.llm, embedder_path=args.embedder, judge_path=args.judge
    )
    if args.threads:
        settings = replace(settings, llama=replace(settings.llama, threads=args.threads))
    if args.backend == "http":
        if not args.base_url:
            raise AntinomyError("--backend http needs --base-url (e.g. http://127.0.0.1:8080/v1).")
        settings = replace(
            settings,
            backend="http",
            http=HttpSettings(base_url=args.base_url, model=args.model, api_key=args.api_key),
        )
    remote_embedder = embedder_http(args)
    if remote_embedder is not None:
        settings = replace(settings, embedder_backend="http", embedder_http=remote_embedder)
    return settings
