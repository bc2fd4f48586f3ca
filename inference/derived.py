"""Model files derived from a shipped one, built once and cached beside the app's data.

The int8 embedder (``inference/int8.py``) and the judge's 7-bit copy
(``inference/judge_graph.py``) are rewrites of a verified file, both quantised by
:func:`quantize_7bit`. Each copy lands in
``data_dir()/models/<sha256[:16]>-<suffix>``, keyed by its source's hash; it is
built in a temporary folder beside it and moved into place with ``os.replace``, so
a crash never leaves a half file there. Changing a recipe needs a new suffix, or
old copies stay in use.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from foundation.errors import ModelUnavailable
from foundation.paths import data_dir
from inference.registry import ResolvedModel, file_sha256

#: Leftover temporary folders older than this belong to a crashed run.
_STALE_SECONDS = 3600
_TMP_PREFIX = ".derive-"

_lock = threading.Lock()  # two engines in one process build a copy once

#: ``build(source, target, scratch)``: write the derived file at ``target``; ``scratch``
#: is a temporary folder for intermediate files.
Build = Callable[[Path, Path, Path], None]


def derived_path(model: ResolvedModel, suffix: str) -> Path:
    """Where the ``suffix`` copy of ``model`` is cached (it may not exist yet)."""
    digest = model.sha256 or file_sha256(model.path)
    return data_dir() / "models" / f"{digest[:16]}-{suffix}"


def derived_file(model: ResolvedModel, suffix: str, build: Build, *, name: str, fix: str) -> Path:
    """The cached ``suffix`` copy of ``model``'s file, built on first use.

    Blocks while it builds; call it from the engine's worker thread. When the copy
    cannot be written, the error names it (``name``, "The int8 embedder") and ends with
    ``fix``.
    """
    target = derived_path(model, suffix)
    if target.is_file():
        return target
    with _lock:
        if target.is_file():
            return target
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            sweep_leftovers(target.parent)
            with tempfile.TemporaryDirectory(prefix=_TMP_PREFIX, dir=target.parent) as tmp:
                built = Path(tmp) / target.name
                build(model.path, built, Path(tmp))
                os.replace(built, target)
        except OSError as exc:
            raise ModelUnavailable(
                f"{name} cannot be written to {target.parent} ({exc}) — free some disk "
                f"space or fix the folder's permissions, or {fix}."
            ) from exc
    return target


def sweep_leftovers(folder: Path) -> None:
    """Remove temporary folders a killed build left behind (up to ~150 MB each)."""
    now = time.time()
    for pattern in (f"{_TMP_PREFIX}*", ".int8-*"):  # .int8-: before the copies shared this
        for leftover in folder.glob(pattern):
            try:
                if now - leftover.stat().st_mtime > _STALE_SECONDS:
                    shutil.rmtree(leftover, ignore_errors=True)
            except OSError:
                pass  # another process removed it first


def quantize_7bit(source: Path, target: Path, *, exclude: Sequence[str] = ()) -> None:
    """Dynamic int8 quantisation of ``source``'s constant-weight MatMuls but ``exclude``:
    weights per output channel, in 7 bits (``reduce_range``). On CPUs without VNNI, ONNX
    Runtime's u8×s8 kernel adds pairs of products in 16 bits, which saturates with
    full-range weights; in 7 bits both kernels add exactly, so every CPU computes the
    same vectors and verdicts."""
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:  # a bundle or a build that left part of it out
        raise ModelUnavailable(
            f"ONNX Runtime's quantiser cannot be loaded ({exc}), so the int8 copy of "
            f"{source.name} cannot be made"
        ) from exc
    quiet = _QuantiserAdvice()
    root = logging.getLogger()
    root.addFilter(quiet)  # its advice to pre-process goes to the root logger
    try:
        # Paths, not a ModelProto: with a proto the quantiser saves a copy in the system
        # temp folder; with a path its shape-inference file lands beside ours.
        quantize_dynamic(
            source,
            target,
            op_types_to_quantize=["MatMul"],
            per_channel=True,
            reduce_range=True,
            weight_type=QuantType.QInt8,
            nodes_to_exclude=list(exclude),
        )
    finally:
        root.removeFilter(quiet)


class _QuantiserAdvice(logging.Filter):
    """Drops the quantiser's generic warnings ("consider pre-processing", "already
    quantized?"): they are about its input, which is ours and known."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "onnxruntime" not in record.pathname
