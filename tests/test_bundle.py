"""The PyInstaller bundle, built from packaging/antinomy.spec and run as a user would.

The built folder is copied somewhere new and started with an empty environment
(``PATH=/usr/bin:/bin``, no venv, no PYTHONPATH, an empty working folder), then
``doctor``, ``index`` and a scan run on the sample vault. Every model file it
uses must be inside the copy. Building takes minutes, so these run only with
``--bundle`` (``make bundle-check``, which CI calls); the build goes to
``$ANTINOMY_BUNDLE_DIR`` (default ``build/bundle``, outside git).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

import foundation

pytestmark = pytest.mark.bundle

ROOT = Path(__file__).resolve().parent.parent
BUILD_DIR = Path(os.environ.get("ANTINOMY_BUNDLE_DIR", ROOT / "build" / "bundle"))
RECORD: dict[str, Any] = {}


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("PyInstaller")
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    log = BUILD_DIR / "build.log"
    t0 = time.perf_counter()
    with log.open("w") as out:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "PyInstaller",
                "--noconfirm",
                "--distpath",
                str(BUILD_DIR / "dist"),
                "--workpath",
                str(BUILD_DIR / "work"),
                str(ROOT / "packaging" / "antinomy.spec"),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=1800,
        )
    assert done.returncode == 0, log.read_text()[-3000:]
    RECORD["build_seconds"] = round(time.perf_counter() - t0, 1)
    # A folder that has never seen the source tree: the bundle must be relocatable.
    target = tmp_path_factory.mktemp("installed") / "antinomy"
    shutil.copytree(BUILD_DIR / "dist" / "antinomy", target, symlinks=True)
    RECORD["size_mib"] = round(folder_size(target) / 2**20, 1)
    return target


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An empty working folder and an environment with nothing of this checkout in it."""
    home = tmp_path_factory.mktemp("user")
    work = home / "work"
    work.mkdir()
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "ANTINOMY_HOME": str(home / "antinomy"),
        "OMP_WAIT_POLICY": "PASSIVE",
    }
    return {"env": env, "cwd": work, "home": home}


def run(
    bundle: Path, clean: dict[str, Any], *args: str, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bundle / "antinomy"), *args],
        env=clean["env"],
        cwd=clean["cwd"],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_carries_no_training_or_test_packages(bundle: Path) -> None:
    internal = bundle / "_internal"
    for name in ("torch", "transformers", "safetensors", "pytest", "huggingface_hub", "openai"):
        assert not (internal / name).exists(), f"{name} is in the bundle"
    # What it must carry, at the places the app looks for them.
    assert (internal / "inference" / "_data" / "models" / "judge" / "judge-int8.onnx").is_file()
    assert (internal / "desktop" / "_data" / "resources" / "sample-vault").is_dir()
    assert list((internal / "llama_cpp" / "lib").glob("libllama.so*"))
    assert (internal / "PySide6" / "Qt" / "plugins" / "platforms" / "libqxcb.so").is_file()
    assert (internal / "PySide6" / "Qt" / "plugins" / "platforms" / "libqoffscreen.so").is_file()


def test_version_and_start_up(bundle: Path, clean: dict[str, Any]) -> None:
    t0 = time.perf_counter()
    done = run(bundle, clean, "--version")
    RECORD["version_seconds"] = round(time.perf_counter() - t0, 3)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"antinomy {foundation.__version__}"


def test_doctor_loads_the_three_models_from_the_bundle(bundle: Path, clean: dict[str, Any]) -> None:
    t0 = time.perf_counter()
    done = run(bundle, clean, "doctor", "--json")
    RECORD["doctor_seconds"] = round(time.perf_counter() - t0, 2)
    assert done.returncode == 0, done.stderr + done.stdout
    report = json.loads(done.stdout)
    assert report["ok"] is True
    models = report["models"]
    # The scan's judge with its note-level model, and the guard's own judge.
    assert {m["kind"] for m in models} == {"llm", "embedder", "judge", "note_model"}
    assert [m.get("role") for m in models if m["kind"] == "judge"] == [None, "guard"]
    for model in models:
        assert model["verified"] is True
        assert Path(model["path"]).is_relative_to(bundle), model["path"]
        assert Path(model.get("tokenizer") or bundle).is_relative_to(bundle)
    assert report["guard_judge"]["id"].startswith("guard-int8.onnx:")
    assert report["generation"]["generated_tokens"] > 0
    RECORD["ready_seconds"] = report["ready_s"]
    RECORD["engines"] = report["engines"]


def test_index_and_scan_the_sample_vault(bundle: Path, clean: dict[str, Any]) -> None:
    t0 = time.perf_counter()
    done = run(bundle, clean, "index", "--json")
    RECORD["index_seconds"] = round(time.perf_counter() - t0, 2)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert Path(report["vault"]).is_relative_to(clean["home"])
    assert report["notes_indexed"] >= 60 and report["embedded"] == report["notes_indexed"]

    t0 = time.perf_counter()
    # The whole-vault mode: at the shipped judge's threshold a classic scan of the sample
    # vault shows no pair; a whole-vault scan shows its bread contradiction.
    done = run(bundle, clean, "scan", "--whole-vault", "--json", timeout=1200)
    RECORD["scan_seconds"] = round(time.perf_counter() - t0, 1)
    assert done.returncode == 0, done.stderr
    scan = json.loads(done.stdout)
    assert scan["status"] == "ok"
    assert scan["pairs"], "the sample vault's planted tensions were not found"
    for pair in scan["pairs"]:
        assert pair["quote_a"] and pair["quote_b"]
    RECORD["scan_pairs"] = len(scan["pairs"])


def test_the_hook_client_runs_from_the_bundle(bundle: Path, clean: dict[str, Any]) -> None:
    """No endpoint is running: the client fails open (exit 0, nothing on stdout)."""
    event = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": str(clean["cwd"])}
    event["tool_input"] = {"command": "rm -rf build && make release"}
    done = subprocess.run(
        [str(bundle / "antinomy"), "hook", "pretooluse"],
        input=json.dumps(event),
        env=clean["env"],
        cwd=clean["cwd"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.count("\n") <= 1


def test_the_window_opens_and_serves_on_qts_offscreen_platform(
    bundle: Path, clean: dict[str, Any], tmp_path: Path
) -> None:
    """Qt's platform plugin loads, the window opens, the models warm and the app's
    endpoint answers /healthz (it starts once the models are ready)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    home = tmp_path / "gui-home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "settings.json").write_text(json.dumps({"endpoint": {"port": port}}))
    env = clean["env"] | {"QT_QPA_PLATFORM": "offscreen", "ANTINOMY_HOME": str(home)}
    log = (tmp_path / "gui.log").open("w+")
    proc = subprocess.Popen(
        [str(bundle / "antinomy")], env=env, cwd=clean["cwd"], stdout=log, stderr=log
    )
    health: dict[str, Any] = {}
    t0 = time.perf_counter()
    try:
        while time.perf_counter() - t0 < 300 and proc.poll() is None:
            try:
                url = f"http://127.0.0.1:{port}/healthz"
                with urllib.request.urlopen(url, timeout=2) as r:
                    health = json.loads(r.read())
                if health.get("models") == "ready":
                    break
            except OSError:
                pass
            time.sleep(0.5)
        RECORD["gui_endpoint_ready_seconds"] = round(time.perf_counter() - t0, 1)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        log.seek(0)
        output = log.read()
        log.close()
    assert health.get("models") == "ready", output[-3000:]
    assert "Could not load the Qt platform plugin" not in output


def test_zz_record(bundle: Path) -> None:
    """Writes what was measured beside the build (and prints it), for docs/benchmarks.md."""
    RECORD["loadavg"] = [round(x, 1) for x in os.getloadavg()]
    (BUILD_DIR / "bundle-check.json").write_text(json.dumps(RECORD, indent=1) + "\n")
    print(json.dumps(RECORD))
    assert RECORD["size_mib"] > 100
