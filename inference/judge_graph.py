"""The shipped int8 judge, requantised so that every CPU gives the same verdict.

``models/judge/judge-int8.onnx`` was quantised dynamically with full-range int8
weights: each activation is quantised to uint8 per call (``DynamicQuantizeLinear``)
and multiplied in integers (``MatMulInteger``). Without AVX-512 VNNI or AVX-VNNI,
ONNX Runtime's u8×s8 kernel adds pairs of products in 16 bits, which saturates with
full-range weights; with VNNI it adds in 32 bits. So the verdict depended on the
processor, measured on the sample vault's pairs: the tomato pair scored 0.763 on an
AVX2 machine and 0.844 on a VNNI one (0.702 / 0.787 for a "Tuesday" pair), across
the scan's threshold either way.

The fix is ONNX Runtime's own advice for such CPUs, 7-bit weights (``reduce_range``):
a pair of products then stays under 2^15 and both kernels add exactly. The copy is
made in two steps from the verified file:

1. :func:`fp32_activations` turns each ``MatMulInteger`` (with its ``Cast`` and scale
   ``Mul``) back into a plain ``MatMul`` of the activations with the dequantised weights
   (``(W - zero) × scale``, per output channel);
2. ``quantize_dynamic`` quantises that graph again, per channel, in 7 bits.

Measured: scores agree across the two kernels to 0.0013 (the AVX2 path checked under
valgrind, which hides AVX-512), at the int8 speed (5.8 ms a pair in both orders
against 6.4 for the shipped graph, and 12.7 for step 1 alone, fp32 arithmetic). The
copy is built once (~2 s) and cached by the source's hash (``inference/derived.py``).
A file whose integer weights already fit in 7 bits (what ``scripts/judge/export.py``
writes), or that has no ``MatMulInteger`` (an fp32 export), is used as it is. When the
copy cannot be made (no ``onnx`` or quantiser, no disk space) the file runs as shipped,
with the reason in the log: its verdicts then depend on the CPU again, as before.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from foundation.errors import ModelUnavailable
from inference.derived import derived_file, derived_path, quantize_7bit
from inference.registry import ResolvedModel

log = logging.getLogger(__name__)

SUFFIX = "judge-int7.onnx"
#: The largest int8 weight magnitude both of ONNX Runtime's u8×s8 kernels add exactly:
#: two products of a uint8 activation by it stay under 2^15 (2 × 255 × 64 = 32,640).
SEVEN_BITS = 64


def judge_file(model: ResolvedModel) -> Path:
    """The file the judge session should open: ``model``'s own when every CPU runs it
    alike, else its cached 7-bit copy (built here on first use)."""
    cached = derived_path(model, SUFFIX)
    if cached.is_file():
        return cached
    try:
        import onnx
    except ImportError:
        log.warning("The `onnx` package is missing: the judge runs its int8 graph as shipped")
        return model.path
    try:
        proto = onnx.load(str(model.path))
    except Exception:  # protobuf's DecodeError and kin: the session names the problem
        return model.path
    if fits_seven_bits(proto):
        return model.path
    try:
        return derived_file(
            model,
            SUFFIX,
            _build,
            name="The judge's 7-bit copy",
            fix="point the settings at a judge exported by scripts/judge/export.py",
        )
    except ModelUnavailable as exc:  # no quantiser, no disk space: the graph as shipped
        log.warning("the judge runs its int8 graph as shipped: %s", exc)
        return model.path


def fits_seven_bits(proto: Any) -> bool:
    """True when no ``MatMulInteger`` weight of ``proto`` leaves [-64, 64] (what
    ``reduce_range`` writes)."""
    from onnx import numpy_helper

    inits = {init.name: init for init in proto.graph.initializer}
    for node in proto.graph.node:
        if node.op_type != "MatMulInteger":
            continue
        weight = inits.get(node.input[1])
        if weight is None:
            return False
        values = numpy_helper.to_array(weight)
        if values.min() < -SEVEN_BITS or values.max() > SEVEN_BITS:
            return False
    return True


def _build(source: Path, target: Path, scratch: Path) -> None:
    import onnx

    proto = onnx.load(str(source))
    fp32_activations(proto)
    step = scratch / "fp32.onnx"
    onnx.save(proto, str(step))
    quantize_7bit(step, target)


def fp32_activations(proto: Any) -> int:
    """Rewrite ``proto`` (an ``onnx.ModelProto``) in place; returns the MatMuls rewritten.

    Raises :class:`ModelUnavailable` when a ``MatMulInteger`` is not the pattern
    ``onnxruntime.quantization.quantize_dynamic`` writes.
    """
    import numpy as np
    from onnx import NodeProto, TensorProto, checker, helper, numpy_helper

    graph = proto.graph
    # Python lists of the messages, so that ``id()`` names a node for the whole rewrite.
    all_nodes = list(graph.node)
    inits = {init.name: init for init in graph.initializer}
    producer = {out: node for node in all_nodes for out in node.output}
    consumers: dict[str, list[Any]] = {}
    for node in all_nodes:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    def only_consumer(name: str, op: str) -> Any:
        users = consumers.get(name, [])
        if len(users) != 1 or users[0].op_type != op:
            raise _unexpected(f"{name} is not read by one {op}")
        return users[0]

    replaced: dict[int, Any] = {}  # id(MatMulInteger) -> MatMul
    removed: set[int] = set()
    for node in all_nodes:
        if node.op_type != "MatMulInteger":
            continue
        x_q, w_q = node.input[0], node.input[1]
        quantize = producer.get(x_q)
        if quantize is None or quantize.op_type != "DynamicQuantizeLinear":
            raise _unexpected(f"{node.name}'s input is not a DynamicQuantizeLinear")
        if w_q not in inits:
            raise _unexpected(f"{node.name}'s weight is not a constant")
        cast = only_consumer(node.output[0], "Cast")
        rescale = only_consumer(cast.output[0], "Mul")
        scales = producer.get(next(i for i in rescale.input if i != cast.output[0]))
        weight_scale = [i for i in scales.input if i in inits] if scales is not None else []
        if scales is None or scales.op_type != "Mul" or len(weight_scale) != 1:
            raise _unexpected(f"{node.name}'s scale is not activation × weight scale")
        weight = numpy_helper.to_array(inits[w_q]).astype(np.float32)
        zero = (
            numpy_helper.to_array(inits[node.input[3]]).astype(np.float32)
            if len(node.input) > 3 and node.input[3] in inits
            else np.float32(0)
        )
        scale = numpy_helper.to_array(inits[weight_scale[0]]).astype(np.float32)
        name = f"{w_q}_fp32"
        graph.initializer.append(numpy_helper.from_array((weight - zero) * scale, name))
        replaced[id(node)] = helper.make_node(
            "MatMul", [quantize.input[0], name], [rescale.output[0]], name=f"{node.name}_fp32"
        )
        removed.update((id(cast), id(rescale)))
    nodes = [replaced.get(id(n), n) for n in all_nodes if id(n) not in removed]
    # Drop what nothing reads any more (the quantisers, their scale products, old weights).
    needed = {out.name for out in graph.output}
    kept = []
    for node in reversed(nodes):
        if any(out in needed for out in node.output):
            kept.append(node)
            needed.update(node.input)
    kept.reverse()
    copies = [_copy(NodeProto, node) for node in kept]
    initializers = [_copy(TensorProto, i) for i in graph.initializer if i.name in needed]
    del graph.node[:]
    graph.node.extend(copies)
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    checker.check_model(proto)
    return len(replaced)


def _copy(kind: Any, message: Any) -> Any:
    out = kind()
    out.CopyFrom(message)
    return out


def _unexpected(detail: str) -> ModelUnavailable:
    return ModelUnavailable(
        f"The judge's int8 graph is not one this version can requantise ({detail}) — "
        "export it with scripts/judge/export.py."
    )
