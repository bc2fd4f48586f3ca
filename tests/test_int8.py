"""The int8 copy of the shipped embedder: made once, cached, integer, close enough."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest

from foundation.errors import ModelUnavailable
from inference import int8
from inference.embedder import Embedder, EmbedderSettings, OnnxEmbedder
from inference.registry import ResolvedModel, resolve_model
from inference.runtime import Runtime
from tests.perf.corpus import notes

pytestmark = [pytest.mark.model, pytest.mark.own_model_cache]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(ANTINOMY_HOME, int8 file): prepared once for the module, in its own home.

    Module-scoped fixtures run before the autouse per-test home is set, so this
    one points ANTINOMY_HOME at its own folder while it works.
    """
    home = tmp_path_factory.mktemp("int8-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ANTINOMY_HOME", str(home))
        path = int8.prepare_int8(resolve_model("embedder"))
    yield home, path


@pytest.fixture
def model() -> ResolvedModel:
    return resolve_model("embedder")


def test_the_copy_is_cached_by_source_hash_and_runs_integer_matmuls(
    prepared: tuple[Path, Path], model: ResolvedModel
) -> None:
    home, path = prepared
    assert path == home / "data" / "models" / f"{model.sha256[:16]}-int8.onnx"
    graph = onnx.load(str(path)).graph
    ops = [node.op_type for node in graph.node]
    # 36 weight MatMuls: all but the 2 outlier ones run in integers.
    assert ops.count("MatMulInteger") == 36 - int8.FP32_OUTLIER_LAYERS
    assert "DynamicQuantizeLinear" in ops
    weights = {init.name: init.data_type for init in graph.initializer}
    integer = [n for n in graph.node if n.op_type == "MatMulInteger"]
    assert all(weights[n.input[1]] == onnx.TensorProto.INT8 for n in integer)


def test_a_second_call_returns_the_cached_file_without_quantising(
    prepared: tuple[Path, Path], model: ResolvedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, path = prepared
    monkeypatch.setenv("ANTINOMY_HOME", str(home))
    before = path.stat().st_mtime_ns

    def must_not_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("prepared again")

    monkeypatch.setattr(int8, "_fold_constants", must_not_run)
    monkeypatch.setattr(int8, "_quantize", must_not_run)
    assert int8.prepare_int8(model) == path
    assert path.stat().st_mtime_ns == before


def test_a_crash_mid_preparation_leaves_no_file_at_the_final_path(
    model: ResolvedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = int8.int8_path(model)
    target.parent.mkdir(parents=True)
    stale = target.parent / ".int8-killed-run"  # what a SIGKILL leaves behind
    stale.mkdir()
    two_hours_ago = time.time() - 7200
    os.utime(stale, (two_hours_ago, two_hours_ago))

    def crash(folded: Path, quantized: Path) -> None:
        quantized.write_bytes(b"half a model")
        raise RuntimeError("power cut")

    monkeypatch.setattr(int8, "_quantize", crash)
    with pytest.raises(RuntimeError, match="power cut"):
        int8.prepare_int8(model)
    assert not target.exists()
    assert list(target.parent.iterdir()) == []  # temporary files and the stale run are gone


def test_without_onnx_the_error_names_the_fix(
    model: ResolvedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)  # makes `import onnx` fail
    with pytest.raises(ModelUnavailable) as info:
        int8.prepare_int8(model)
    assert str(info.value) == (
        "Preparing the int8 embedder needs the `onnx` package — run `pip install onnx`, "
        "or turn the int8 embedder off in the settings."
    )


def test_int8_vectors_stay_close_to_the_shipped_ones_and_ignore_their_batch(
    prepared: tuple[Path, Path], model: ResolvedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, _ = prepared
    monkeypatch.setenv("ANTINOMY_HOME", str(home))
    sample = notes()[::5]  # 30 notes: short, long, French, Italian
    shipped = OnnxEmbedder(model, EmbedderSettings(threads=2, int8=False))
    quantized = OnnxEmbedder(model, EmbedderSettings(threads=2, int8=True))
    assert quantized.name != shipped.name  # an index can tell the two apart
    ref, vec = shipped.embed(sample), quantized.embed(sample)
    cos = (ref * vec).sum(axis=1)
    assert cos.mean() >= 0.99 and cos.min() >= 0.98, (cos.mean(), cos.min())
    for i in (0, 7, 29):
        alone = quantized.embed([sample[i]])[0]
        assert float(alone @ vec[i]) >= 0.999
    assert np.allclose(np.linalg.norm(vec, axis=1), 1.0, atol=1e-5)


def _runtime(make_embedder: Callable[[], Embedder]) -> Runtime:
    """A runtime with this embedder and scripted other engines, ready."""
    from tests.fakes import ScriptedGenerator, ScriptedJudge

    rt = Runtime(
        make_generator=lambda: ScriptedGenerator(["x", "{}"]),
        make_embedder=make_embedder,
        make_judge=ScriptedJudge,
    )
    rt.wait_ready(timeout=60)
    return rt


def test_the_embedder_is_int8_by_default_and_the_guard_shares_it(
    prepared: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from inference.engines import open_embedder

    monkeypatch.setenv("ANTINOMY_HOME", str(prepared[0]))
    rt = _runtime(open_embedder)
    assert rt.embedder.name.endswith("(int8)")
    assert rt.guard_embedder() is rt.embedder  # one precision, one engine
    rt.close()


def test_with_an_fp32_embedder_the_guard_gets_its_own_int8_copy(
    prepared: tuple[Path, Path], model: ResolvedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTINOMY_HOME", str(prepared[0]))
    rt = _runtime(lambda: OnnxEmbedder(model, EmbedderSettings(int8=False)))
    guard = rt.guard_embedder()
    assert rt.guard_embedder() is guard  # made once
    assert guard.name.endswith("(int8)") and not rt.embedder.name.endswith("(int8)")
    text = ["Nothing ships to production after Thursday noon."]
    vec = rt.submit_embed(text, urgent=True, embedder=guard).result(timeout=10)
    assert float(vec[0] @ rt.embedder.embed(text)[0]) >= 0.98
    rt.close()


def test_without_the_int8_copy_the_guard_says_why_and_uses_fp32(
    model: ResolvedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)  # no onnx, no cached copy (fresh home)
    rt = _runtime(lambda: OnnxEmbedder(model, EmbedderSettings(int8=False)))
    assert rt.guard_embedder() is rt.embedder
    assert rt.guard_embedder_note == (
        "the guard uses the fp32 embedder: Preparing the int8 embedder needs the `onnx` "
        "package — run `pip install onnx`, or turn the int8 embedder off in the settings."
    )
    rt.close()


def test_without_the_int8_copy_the_embedder_runs_fp32_and_says_why(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from inference.engines import open_embedder

    monkeypatch.setitem(sys.modules, "onnx", None)  # no onnx, no cached copy (fresh home)
    with caplog.at_level("WARNING", logger="inference.engines"):
        embedder = open_embedder()
    assert isinstance(embedder, OnnxEmbedder) and not embedder.settings.int8
    assert not embedder.name.endswith("(int8)")  # an index tells its vectors apart
    assert "the embedder runs in fp32: Preparing the int8 embedder needs the `onnx`" in (
        caplog.text
    )
    assert embedder.embed(["It still embeds."]).shape == (1, 384)


def test_without_the_quantiser_the_embedder_runs_fp32_and_says_why(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A bundle once left out a module the quantiser imports: the embedder still loads."""
    from inference.engines import open_embedder

    monkeypatch.setitem(sys.modules, "onnxruntime.quantization", None)  # import fails
    with caplog.at_level("WARNING", logger="inference.engines"):
        embedder = open_embedder()
    assert isinstance(embedder, OnnxEmbedder) and not embedder.settings.int8
    assert "ONNX Runtime's quantiser cannot be loaded" in caplog.text
