"""The command line: version, models, doctor, and clear errors without tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.cli import exits
from desktop.cli.main import main


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "desktop.cli.main", *args], capture_output=True, text=True
    )


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith("antinomy 0.")


def test_models_json_lists_both_verified(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "--json"]) == exits.OK
    data = json.loads(capsys.readouterr().out)
    kinds = {m["kind"]: m for m in data["models"]}
    assert kinds["llm"]["verified"] and kinds["embedder"]["verified"]
    assert kinds["llm"]["sha256"].startswith("b179c952")
    assert kinds["embedder"]["size"] == 22_928_619


def test_models_human_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == exits.OK
    out = capsys.readouterr().out
    assert "SmolLM2-135M-Instruct (Q4_1)" in out and "✓ verified" in out


def test_not_a_gguf_is_one_clear_line_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "x.gguf"
    bad.write_text("hello")
    result = run_cli("doctor", "--llm", str(bad))
    assert result.returncode == exits.UNAVAILABLE
    assert "is not a GGUF file" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_unreachable_http_backend_is_a_clear_error() -> None:
    result = run_cli(
        "doctor", "--quick", "--backend", "http", "--base-url", "http://127.0.0.1:9/v1"
    )
    assert result.returncode == exits.UNAVAILABLE
    assert "Cannot reach the LLM server at http://127.0.0.1:9/v1" in result.stderr
    assert "Traceback" not in result.stderr


def test_http_backend_without_url_is_a_usage_error() -> None:
    result = run_cli("doctor", "--backend", "http")
    assert result.returncode == exits.FAILURE
    assert "--backend http needs --base-url" in result.stderr


def test_no_arguments_prints_help() -> None:
    result = run_cli()
    assert result.returncode == 0 and "doctor" in result.stdout


@pytest.mark.model
def test_doctor_on_the_shipped_models() -> None:
    result = run_cli("doctor", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] and report["ready_s"] > 0
    # Speeds are measured, not asserted (noisy machines): benchmarks live in tests/perf/.
    assert report["generation"]["generated_tokens"] > 0
    assert report["generation"]["tokens_per_second"] > 0
    assert report["embedding"]["short_texts_per_second"] > 0
    for engine in report["engines"].values():
        assert engine["load_s"] is not None and engine["warm_full_s"] is not None
