"""The ONNX embedder on the real shipped model, and its refusal of wrong models."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from foundation.errors import ModelUnavailable
from inference.embedder import EmbedderSettings, OnnxEmbedder
from inference.engines import RuntimeSettings, open_embedder
from inference.registry import resolve_model

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def embedder() -> OnnxEmbedder:
    return OnnxEmbedder(resolve_model("embedder"), EmbedderSettings(max_batch=4))


def test_similar_sentences_are_closer_than_unrelated(embedder: OnnxEmbedder) -> None:
    v = embedder.embed(
        [
            "We deploy to production every Friday afternoon.",
            "Releases go live on Fridays after lunch.",
            "My grandmother grows tomatoes in her garden.",
        ]
    )
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    similar, unrelated = float(v[0] @ v[1]), float(v[0] @ v[2])
    assert similar > 0.5 > unrelated
    assert similar - unrelated > 0.3


def test_a_text_has_the_same_vector_alone_and_in_any_batch(embedder: OnnxEmbedder) -> None:
    texts = [f"note number {i} " + "word " * (i * 7) for i in range(11)]
    together = embedder.embed(texts)  # 3 batches of 4, mixed lengths
    for i in (0, 5, 10):
        alone = embedder.embed([texts[i]])[0]
        assert float(alone @ together[i]) > 0.9999


def test_padding_is_to_the_longest_and_truncation_at_256(embedder: OnnxEmbedder) -> None:
    ids, _, _ = embedder._encode(["short", "a bit longer than short"])
    assert ids.shape[1] < 20  # the shipped file alone would pad to 128
    ids, _, _ = embedder._encode(["word " * 1000])
    assert ids.shape[1] == 256


def test_empty_input_and_single_string_misuse(embedder: OnnxEmbedder) -> None:
    assert embedder.embed([]).shape == (0, 384)
    with pytest.raises(TypeError):
        embedder.embed("not a list")  # type: ignore[arg-type]


def test_very_long_and_odd_texts_embed(embedder: OnnxEmbedder) -> None:
    v = embedder.embed(["", "🙂" * 300, "x" * 50_000, "\x00\x01 binary-ish"])
    assert np.isfinite(v).all() and v.shape == (4, 384)


def _tiny_onnx(path: Path, *, rank: int) -> Path:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "t"])
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["b", "t"])
    if rank == 2:
        out = helper.make_tensor_value_info("out", TensorProto.FLOAT, ["b", "t"])
        node = helper.make_node("Cast", ["input_ids"], ["out"], to=TensorProto.FLOAT)
    else:
        raise AssertionError(rank)
    graph = helper.make_graph([node], "tiny", [ids, mask], [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def test_onnx_with_wrong_output_shape_is_refused(tmp_path: Path) -> None:
    bad = _tiny_onnx(tmp_path / "pooled.onnx", rank=2)
    with pytest.raises(ModelUnavailable) as info:
        open_embedder(RuntimeSettings(embedder_path=str(bad)))
    assert "returns an output of shape (1, 3)" in str(info.value)
    assert "token embeddings shaped (batch, tokens, dimension)" in str(info.value)


def test_file_that_is_not_onnx_is_refused(tmp_path: Path) -> None:
    junk = tmp_path / "model.onnx"
    junk.write_bytes(b"this is not a protobuf" * 10)
    with pytest.raises(ModelUnavailable, match="cannot be loaded as an ONNX model"):
        open_embedder(RuntimeSettings(embedder_path=str(junk)))


def test_batches_respect_the_token_budget(embedder: OnnxEmbedder) -> None:
    texts = ["short"] * 40 + ["long " * 400] * 3
    batches = embedder._batches(texts)
    assert sorted(i for b in batches for i in b) == list(range(43))
    assert all(len(b) <= 4 for b in batches)  # the fixture caps max_batch at 4
    assert [len(b) for b in batches if b[0] >= 40] == [1, 1, 1]  # 256 tokens: alone
