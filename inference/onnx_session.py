"""One way to open an ONNX model on the CPU, for the embedder and the judge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from foundation.errors import ModelUnavailable


def cpu_session(path: Path, *, threads: int, what: str) -> Any:
    """An ``onnxruntime.InferenceSession`` on ``threads`` intra-op threads.

    Workers never spin-wait. The memory arena is off: ONNX Runtime otherwise keeps its
    peak (215 MiB → 3.1 GiB after one batch of long texts) for good. ``what`` ends the
    error message: the fix.
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.enable_cpu_mem_arena = False
    # Idle intra-op workers sleep instead of spinning: a spinning worker takes a core
    # from llama.cpp, whose own threads then stall (inference/threads.py).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    try:
        return ort.InferenceSession(
            str(path), sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph types
        raise ModelUnavailable(
            f"{path} cannot be loaded as an ONNX model ({str(exc).splitlines()[0][:200]}) — {what}"
        ) from exc
