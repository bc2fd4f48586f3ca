"""A real-int8 copy of the embedder's ONNX file, prepared once and cached.

The shipped all-MiniLM-L6-v2 file stores int8 weights but turns them back
into fp32 (Cast, Mul) when it loads, so it runs fp32 arithmetic. Dynamic
quantisation (``MatMulInteger`` fed by ``DynamicQuantizeLinear``) does the
matrix products in integers — faster, but it moves vectors a little, so only
the guard uses this copy by default (``RuntimeSettings.guard_int8``: its decisions
and each change, both sides the same precision); notes and search stay fp32
unless ``EmbedderSettings.int8`` asks otherwise.

How the copy is made, and why:

* ONNX Runtime's offline optimiser (basic level: constant folding) first
  folds the Cast/Mul (or DequantizeLinear) subgraphs into plain fp32
  initializers; ``quantize_dynamic`` only quantises a MatMul whose weight is
  a constant.
* Weights are int8, per output channel, in 7 bits (``reduce_range``): on
  CPUs without VNNI the u8×s8 kernel adds pairs of products in 16 bits,
  which overflows with full-range weights; measured here the 7-bit file was
  closer to the shipped vectors (min cosine 0.983 vs 0.979).
* The FFN output projection of the first two layers stays fp32: its input
  (after GELU) has outliers 8–12× above the bulk of values, and one
  quantisation scale per tensor cannot cover both. Keeping those two MatMuls
  in fp32 lifted the mean cosine to the shipped model from 0.9905 to 0.994
  on the note corpus in ``tests/perf/corpus.py``.

The file lands in ``data_dir()/models/<sha256[:16]>-int8.onnx``, keyed by the
source file's hash, built and cached as ``inference/derived.py`` builds every
derived file (a crash never leaves a half file). Changing the recipe above needs
a new file name, or old copies stay in use.
"""

from __future__ import annotations

from pathlib import Path

from foundation.errors import ModelUnavailable
from inference.derived import derived_file, derived_path, quantize_7bit
from inference.registry import ResolvedModel

#: FFN output projections kept in fp32, counted from the first layer.
FP32_OUTLIER_LAYERS = 2
SUFFIX = "int8.onnx"


def int8_path(model: ResolvedModel) -> Path:
    """Where the int8 copy of ``model`` is cached (it may not exist yet)."""
    return derived_path(model, SUFFIX)


def prepare_int8(model: ResolvedModel) -> Path:
    """The cached int8 copy of ``model``'s ONNX file, built on first use (~5 s).

    Blocks while it builds; call it from the embedder's worker thread.
    """
    target = int8_path(model)
    if target.is_file():
        return target
    try:
        import onnx  # noqa: F401 - onnxruntime.quantization needs it
    except ImportError as exc:
        raise ModelUnavailable(
            "Preparing the int8 embedder needs the `onnx` package — run `pip install onnx`, "
            "or turn the int8 embedder off in the settings."
        ) from exc
    return derived_file(
        model, SUFFIX, _build, name="The int8 embedder", fix="turn the int8 embedder off"
    )


def _build(source: Path, target: Path, scratch: Path) -> None:
    folded = scratch / "folded.onnx"
    _fold_constants(source, folded)
    _quantize(folded, target)
    _check_integer_ops(target, source=source)


def _fold_constants(source: Path, folded: Path) -> None:
    """Write ``source`` with its dequantisation subgraphs folded into fp32 weights."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    options.enable_cpu_mem_arena = False
    # Constant folding skips DequantizeLinear unless QDQ handling is off.
    options.add_session_config_entry("session.disable_quant_qdq", "1")
    try:
        ort.InferenceSession(str(source), sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph types
        raise ModelUnavailable(
            f"{source} cannot be loaded to prepare an int8 copy "
            f"({str(exc).splitlines()[0][:200]}) — turn the int8 embedder off."
        ) from exc


def _outlier_matmuls(folded: Path, count: int) -> list[str]:
    """Names of the first ``count`` MatMuls that contract (K > N): the FFN outputs."""
    import onnx

    graph = onnx.load(str(folded), load_external_data=False).graph
    shapes = {init.name: tuple(init.dims) for init in graph.initializer}
    names = []
    for node in graph.node:  # ONNX keeps nodes in topological order
        shape = shapes.get(node.input[1]) if node.op_type == "MatMul" else None
        if shape is not None and len(shape) == 2 and shape[0] > shape[1]:
            names.append(node.name)
    return names[:count]


def _quantize(folded: Path, quantized: Path) -> None:
    """Dynamic int8 quantisation of every constant-weight MatMul but the outlier ones."""
    quantize_7bit(folded, quantized, exclude=_outlier_matmuls(folded, FP32_OUTLIER_LAYERS))


def _check_integer_ops(quantized: Path, *, source: Path) -> None:
    """Refuse a copy that would silently run fp32 (e.g. a model with no constant MatMul)."""
    import onnx

    ops = {node.op_type for node in onnx.load(str(quantized)).graph.node}
    if not {"MatMulInteger", "DynamicQuantizeLinear"} <= ops:
        raise ModelUnavailable(
            f"{source} has no matrix product that can run in int8 — turn the int8 embedder off."
        )
