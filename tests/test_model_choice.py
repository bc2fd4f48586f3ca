"""Checking a stronger model before it is used: a GGUF file verified, a server listed and timed."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from desktop.flows.model_choice import check_gguf, check_server, model_choice_text
from desktop.flows.settings import BackendSettings, ModelPaths, Settings
from foundation.errors import ModelUnavailable
from inference.registry import resolve_model
from tests.openai_stub import openai_stub


def test_a_gguf_of_ones_own_is_verified(tmp_path: Path) -> None:
    own = tmp_path / "mine.gguf"
    shutil.copyfile(resolve_model("llm").path, own)
    model = check_gguf(str(own))
    assert model.path == own and model.verified and model.source == "user path"
    assert model.size == own.stat().st_size and len(model.sha256) == 64


def test_a_bad_gguf_says_why(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="Choose a GGUF file first"):
        check_gguf("  ")
    text = tmp_path / "notes.gguf"
    text.write_text("hello")
    with pytest.raises(ModelUnavailable, match="is not a GGUF file"):
        check_gguf(text)
    with pytest.raises(ModelUnavailable, match=r"missing\.gguf does not exist — check the path"):
        check_gguf(tmp_path / "missing.gguf")


def test_the_server_lists_its_models_and_answers_once() -> None:
    with openai_stub() as url:
        check = check_server(url + "/")
        assert check.base_url == url and check.models == ("stub-large", "stub-small")
        assert check.model == "stub-large"  # none given: the first listed
        assert check.speed.generated_tokens > 0 and not check.leaves_machine
        assert check.summary().startswith("2 models listed; stub-large answered ")
        assert "tokens/s" in check.summary()
        chosen = check_server(url, model="stub-small")
        assert chosen.model == "stub-small"
        with pytest.raises(ModelUnavailable) as info:
            check_server(url, model="llama-70b")
        assert str(info.value) == (
            f"The server at {url} has no model 'llama-70b'; it lists stub-large, stub-small."
        )


def test_an_unreachable_server_names_the_fix() -> None:
    with openai_stub() as url:
        pass  # stopped: nothing listens there any more
    with pytest.raises(ModelUnavailable, match=f"Cannot reach the LLM server at {url}"):
        check_server(url)


def test_the_choice_in_a_few_words() -> None:
    s = Settings()
    assert model_choice_text(s) == "bundled SmolLM2-135M"
    own = replace(s, models=ModelPaths(llm_path="/m/qwen2.5-7b.Q4_K_M.gguf"))
    assert model_choice_text(own) == "own GGUF qwen2.5-7b.Q4_K_M.gguf"
    http = replace(
        s, backend=BackendSettings(kind="http", base_url="http://127.0.0.1:11434/v1", model="q")
    )
    assert model_choice_text(http) == "q at 127.0.0.1:11434"
