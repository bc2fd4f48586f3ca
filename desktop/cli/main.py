"""``antinomy`` — the command line. Subcommands are headless; errors are one clear line.

Every :class:`~inference.errors.AntinomyError` becomes its message on stderr
and a stable exit code (:mod:`desktop.cli.exits`), never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence

import inference
from desktop.cli import exits, models_cmd
from inference.errors import AntinomyError, ModelUnavailable

Handler = Callable[[argparse.Namespace], int]


def _add_model_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("models (default: the bundled models)")
    group.add_argument("--llm", metavar="GGUF", help="a GGUF model file of your own")
    group.add_argument("--embedder", metavar="ONNX", help="an ONNX sentence-embedding model")
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="antinomy",
        description="Antinomy: finds tensions between the notes of a Markdown vault, offline.",
    )
    parser.add_argument("--version", action="version", version=f"antinomy {inference.__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("models", help="which model files are used, their hashes and sizes")
    _add_model_options(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=models_cmd.run_models)

    p = sub.add_parser(
        "doctor", help="check the models: present, verified, load and warm-up times, speed"
    )
    _add_model_options(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--quick", action="store_true", help="skip the speed measurements")
    p.set_defaults(handler=models_cmd.run_doctor)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return exits.OK
    try:
        return handler(args)
    except ModelUnavailable as exc:
        print(f"antinomy: {exc}", file=sys.stderr)
        return exits.UNAVAILABLE
    except AntinomyError as exc:
        print(f"antinomy: {exc}", file=sys.stderr)
        return exits.FAILURE
    except KeyboardInterrupt:
        print("antinomy: stopped.", file=sys.stderr)
        return exits.INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
