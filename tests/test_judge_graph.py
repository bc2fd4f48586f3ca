"""The judge's 7-bit copy: the same verdict on every CPU, built once, refused clearly."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from foundation.errors import ModelUnavailable
from inference import judge_graph
from inference.judge import OnnxJudge
from inference.registry import ResolvedModel, resolve_model

ROOT = Path(__file__).resolve().parents[1]


def _fp32_matmul(path: Path, weight: np.ndarray) -> None:
    """A one-MatMul model ``y = x @ weight``, the shape quantize_dynamic rewrites."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, weight.shape[0]])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, weight.shape[1]])],
        [numpy_helper.from_array(weight, "w")],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def _int8(source: Path, target: Path, *, reduce_range: bool) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        source, target, per_channel=True, reduce_range=reduce_range, weight_type=QuantType.QInt8
    )


def _run(path: Path | bytes, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    source = path if isinstance(path, bytes) else str(path)
    session = ort.InferenceSession(source, providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, {"x": x})[0])


def test_the_rewrite_multiplies_fp32_activations_by_the_dequantised_weights(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(3)
    weight = rng.normal(size=(16, 8)).astype(np.float32)
    _fp32_matmul(tmp_path / "fp32.onnx", weight)
    _int8(tmp_path / "fp32.onnx", tmp_path / "int8.onnx", reduce_range=False)
    proto = onnx.load(str(tmp_path / "int8.onnx"))
    assert not judge_graph.fits_seven_bits(proto)  # full-range weights

    assert judge_graph.fp32_activations(proto) == 1
    ops = [n.op_type for n in proto.graph.node]
    assert ops == ["MatMul"]  # the quantiser, the Cast and the rescale are gone
    x = rng.normal(size=(4, 16)).astype(np.float32)
    y = _run(proto.SerializeToString(), x)
    init = {i.name: numpy_helper.to_array(i) for i in proto.graph.initializer}
    (dequantised,) = init.values()
    assert np.allclose(y, x @ dequantised, atol=1e-5)
    assert np.abs(dequantised - weight).max() < np.abs(weight).max() / 100


def test_a_7_bit_file_and_an_fp32_file_are_used_as_they_are(tmp_path: Path) -> None:
    weight = np.random.default_rng(4).normal(size=(16, 8)).astype(np.float32)
    _fp32_matmul(tmp_path / "fp32.onnx", weight)
    _int8(tmp_path / "fp32.onnx", tmp_path / "int7.onnx", reduce_range=True)
    assert judge_graph.fits_seven_bits(onnx.load(str(tmp_path / "int7.onnx")))
    assert judge_graph.fits_seven_bits(onnx.load(str(tmp_path / "fp32.onnx")))
    for name in ("int7.onnx", "fp32.onnx"):
        model = resolve_model("judge", tmp_path / name)
        assert judge_graph.judge_file(model) == model.path


def test_a_graph_of_another_shape_is_refused_with_the_fix(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["x", "w"], ["y"], name="odd")],
        "odd",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [None, 4])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [None, 2])],
        [numpy_helper.from_array(np.full((4, 2), 100, dtype=np.int8), "w")],
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(ModelUnavailable) as info:
        judge_graph.fp32_activations(proto)
    assert str(info.value) == (
        "The judge's int8 graph is not one this version can requantise (odd's input is not "
        "a DynamicQuantizeLinear) — export it with scripts/judge/export.py."
    )


@pytest.fixture
def shipped() -> ResolvedModel:
    """The shipped judge with full-range weights: the guard's (the notes judge was
    exported with 7-bit weights and runs as it is)."""
    return resolve_model("judge", role="guard")


@pytest.mark.model
def test_the_notes_judge_ships_with_7_bit_weights_and_runs_as_it_is() -> None:
    model = resolve_model("judge")
    assert judge_graph.fits_seven_bits(onnx.load(str(model.path)))
    assert judge_graph.judge_file(model) == model.path
    assert not OnnxJudge(model).model_id.endswith("+int7")


@pytest.mark.model
def test_the_shipped_judge_runs_from_its_cached_7_bit_copy(
    shipped: ResolvedModel, antinomy_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not judge_graph.fits_seven_bits(onnx.load(str(shipped.path)))
    path = judge_graph.judge_file(shipped)
    assert path == antinomy_home / "data" / "models" / f"{shipped.sha256[:16]}-judge-int7.onnx"
    copy = onnx.load(str(path))
    assert judge_graph.fits_seven_bits(copy)
    ops = [n.op_type for n in copy.graph.node]
    assert ops.count("MatMulInteger") == 37  # still integer: 6 layers × 6 + the head

    def must_not_run(*args: object) -> None:
        raise AssertionError("built again")

    monkeypatch.setattr(judge_graph, "_build", must_not_run)
    judge = OnnxJudge(shipped)
    assert judge.model_id.endswith("+int7")
    assert judge_graph.judge_file(shipped) == path


@pytest.mark.model
@pytest.mark.own_model_cache  # it damages the copy
def test_a_damaged_cached_copy_is_built_again(shipped: ResolvedModel, antinomy_home: Path) -> None:
    path = judge_graph.judge_file(shipped)
    # A judge exported with 7-bit weights runs as it is: its "copy" is the shipped file,
    # which this test must never overwrite.
    assert path != shipped.path, "the shipped judge needs no copy: nothing to damage here"
    path.write_bytes(b"half a model")
    judge = OnnxJudge(shipped)
    assert judge.score([("It rains.", "It does not rain.")]).shape == (1, 3)
    assert path.stat().st_size > 10_000_000


_SCORES = """
import json, sys
from inference.judge import OnnxJudge
from inference.registry import resolve_model
judge = OnnxJudge(resolve_model("judge", role="guard"))
pairs = [
    ("The library opens at nine on Saturdays.", "On Saturdays the library opens at noon."),
    ("The piano lesson is on Wednesday at five.", "The lesson went well; scales are better."),
    ("Il treno parte sempre alle sette.", "Il treno di stamattina è partito alle sette."),
]
print(json.dumps(judge.score(pairs)[:, 0].tolist()))
"""


@pytest.mark.model
@pytest.mark.skipif(
    shutil.which("valgrind") is None and not os.environ.get("CI"),
    reason="needs valgrind (Debian's valgrind package; CI has it, and there this test runs)",
)
def test_the_verdict_does_not_depend_on_the_cpu(antinomy_home: Path) -> None:
    """Valgrind's CPU has AVX2 and no AVX-512 or VNNI: ONNX Runtime then takes the
    16-bit u8×s8 kernel, where the shipped full-range weights saturated (0.763 against
    0.844 natively on a VNNI machine). On a CPU without VNNI both runs take the same
    kernel, and this test shows only that the copy runs."""
    judge_graph.judge_file(resolve_model("judge", role="guard"))  # built once, not in valgrind
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    native = subprocess.run(
        [sys.executable, "-c", _SCORES], env=env, capture_output=True, text=True, check=True
    )
    emulated = subprocess.run(
        ["valgrind", "--tool=none", "-q", sys.executable, "-c", _SCORES],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    a = json.loads(native.stdout.strip().splitlines()[-1])
    b = json.loads(emulated.stdout.strip().splitlines()[-1])
    assert np.allclose(a, b, atol=0.005), (a, b)


@pytest.mark.model
@pytest.mark.own_model_cache  # no cached copy: it must be built, and cannot be
def test_without_the_quantiser_the_judge_runs_as_shipped_and_says_why(
    shipped: ResolvedModel, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime.quantization", None)  # import fails
    with caplog.at_level("WARNING", logger="inference.judge_graph"):
        judge = OnnxJudge(shipped)
    assert not judge.model_id.endswith("+int7")
    assert "the judge runs its int8 graph as shipped: ONNX Runtime's quantiser" in caplog.text
    assert judge.score([("It rains.", "It does not rain.")]).shape == (1, 3)
