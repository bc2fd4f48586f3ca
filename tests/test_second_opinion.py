"""A second opinion from the user's own OpenAI-compatible server (opt-in, off by default).

The decision logic runs against a scripted stdlib server (``tests/openai_stub.py``), bad
servers against one that answers garbage and a socket that never answers; the plumbing runs
against llama-cpp-python's own server with the shipped GGUF (marked ``model``).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from desktop.cli import exits
from desktop.cli.main import main
from desktop.flows.hunter import ScanRun, scan
from desktop.flows.hunter.opinion import PRIOR_WEIGHT
from desktop.resources import resources_dir
from desktop.vault.index import VaultIndex
from inference.http_backend import HttpSettings, OpenAIHttpGenerator
from inference.judge import Thresholds
from tests import learning_vault as lv
from tests.fakes import ScriptedGenerator, ScriptedJudge
from tests.openai_stub import openai_stub

SETTINGS = replace(lv.SETTINGS, second_opinion=True)


@pytest.fixture
def index(tmp_path: Path) -> Iterator[VaultIndex]:
    root = tmp_path / "vault"
    root.mkdir()
    idx = lv.make_index(root)
    yield idx
    idx.close()


def judge() -> ScriptedJudge:
    """The gateway couples read as a weak clash (0.6), the omega couple as a strong one."""
    weak = {frozenset((lv.always(i), lv.never(i))) for i in range(len(lv.NAMES))}
    strong = {
        frozenset((lv.ALWAYS.format(n="omega", thing="gateway", obj="payments"), lv.OMEGA_NEVER)),
        frozenset((lv.KEEPS, lv.DROPS)),
    }

    def verdict(a: str, b: str) -> tuple[float, float, float]:
        key = frozenset((a, b))
        if key in strong:
            return (0.9, 0.05, 0.05)
        return (0.6, 0.2, 0.2) if key in weak else (0.03, 0.07, 0.9)

    j = ScriptedJudge(verdict)
    j.thresholds = Thresholds(min_cosine=0.0)
    return j


def server(url: str, **settings: Any) -> OpenAIHttpGenerator:
    return OpenAIHttpGenerator(HttpSettings(base_url=url, model="stub-small", **settings))


def run(index: VaultIndex, engine: Any, **settings: Any) -> ScanRun:
    return scan(
        index,
        engine,
        judge=judge(),
        mode="whole-vault",
        settings=replace(SETTINGS, **settings),
    )


def says(request: dict[str, Any]) -> str:
    """A server that reads the omega sentences as contradicting, nothing else."""
    text = request["messages"][-1]["content"]
    return json.dumps({"contradict": "yes" if "omega" in text else "no"})


def test_its_no_both_ways_hides_a_weak_pair_and_its_yes_keeps_a_strong_one(
    index: VaultIndex,
) -> None:
    asked: list[dict[str, Any]] = []

    def answer(request: dict[str, Any]) -> str:
        asked.append(request)
        return says(request)

    with openai_stub(answer) as url:
        result = run(index, server(url))
    assert [(p.note_a, p.note_b) for p in result.pairs] == [("Omega budget", "Omega retries")]
    (omega,) = result.pairs
    assert omega.second_opinion == "yes" and omega.features["second_opinion"] == 1.0
    assert len(result.hidden) == 14
    assert {p.hidden_because for p in result.hidden} == {"second_opinion"}
    assert {p.second_opinion for p in result.hidden} == {"no"}
    report = result.second_opinion
    assert (report.asked, report.requests, report.yes, report.no) == (15, 30, 1, 14)
    assert report.hidden == 14 and report.error == "" and not report.leaves_machine
    assert report.weight == pytest.approx(PRIOR_WEIGHT, abs=1e-4)
    # Both orders were asked: each pair's quotes came once first, once second.
    firsts = [r["messages"][-1]["content"].split("\n")[0] for r in asked]
    assert len(set(firsts)) == 30


def test_the_prompt_sent_is_the_one_in_resources_prompts(index: VaultIndex) -> None:
    asked: list[dict[str, Any]] = []

    def answer(request: dict[str, Any]) -> str:
        asked.append(request)
        return says(request)

    folder = resources_dir() / "prompts"
    system = (folder / "second-opinion-system.txt").read_text(encoding="utf-8").strip()
    user = (folder / "second-opinion-user.txt").read_text(encoding="utf-8").strip()
    assert "{first}" in user and "{second}" in user
    with openai_stub(answer) as url:
        result = run(index, server(url))
    (omega,) = result.pairs
    messages = [r["messages"] for r in asked]
    assert {m[0]["role"] for m in messages} == {"system"}
    assert {m[0]["content"] for m in messages} == {system}
    sent = {m[-1]["content"] for m in messages}
    assert user.format(first=omega.quote_a, second=omega.quote_b) in sent
    assert user.format(first=omega.quote_b, second=omega.quote_a) in sent


def test_it_is_off_by_default(index: VaultIndex) -> None:
    with openai_stub(says) as url:
        result = scan(index, server(url), judge=judge(), mode="whole-vault", settings=lv.SETTINGS)
    assert len(result.pairs) == 15 and result.hidden == ()
    assert result.second_opinion.asked == 0 and result.second_opinion.error == ""
    assert all(p.second_opinion == "" for p in result.pairs)


def test_the_embedded_model_is_not_a_second_opinion(index: VaultIndex) -> None:
    result = run(index, ScriptedGenerator([]))
    assert len(result.pairs) == 15 and result.second_opinion.asked == 0
    assert result.second_opinion.error.startswith("not asked: the language model is not a server")


def test_a_server_answering_garbage_changes_nothing_and_is_said(index: VaultIndex) -> None:
    with openai_stub() as url:  # answers prose, never the JSON asked for
        result = run(index, server(url))
    assert result.status == "ok" and len(result.pairs) == 15 and result.hidden == ()
    assert {p.second_opinion for p in result.pairs} == {"unusable"}
    assert result.second_opinion.unusable == 15 and result.second_opinion.hidden == 0


@contextmanager
def silent_server() -> Iterator[str]:
    """A port that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    finally:
        sock.close()


def test_a_server_that_times_out_is_given_up_and_the_scan_goes_on(index: VaultIndex) -> None:
    with silent_server() as url:
        t0 = time.perf_counter()
        result = run(index, server(url, read_timeout=0.3))
        took = time.perf_counter() - t0
    assert result.status == "ok" and len(result.pairs) == 15 and result.hidden == ()
    report = result.second_opinion
    assert (report.asked, report.requests, report.failed) == (3, 3, 3)
    assert report.error.startswith("the server failed 3 times in a row (")
    assert report.error.endswith("the other pairs were not asked")
    assert [p.second_opinion for p in result.pairs].count("failed") == 3
    assert took < 10


def test_scan_refuses_a_second_opinion_without_a_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["scan", "--second-opinion", "--vault", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == exits.USAGE
    assert "--second-opinion asks your own OpenAI-compatible server" in err


# ---------------------------------------------------------------- a real server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def llama_cpp_server() -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on the shipped GGUF."""
    from inference.registry import resolve_model

    gguf = resolve_model("llm", None).path
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--port", str(port),
         "--n_ctx", "2048", "--n_threads", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(url + "/models", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("llama_cpp.server did not start") from None
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.model
def test_llama_cpp_python_server_gives_a_second_opinion(index: VaultIndex) -> None:
    with llama_cpp_server() as url:
        engine = OpenAIHttpGenerator(HttpSettings(base_url=url))
        result = run(index, engine)
    report = result.second_opinion
    assert result.status == "ok" and report.error == ""
    assert report.asked == 15 and report.requests == 30 and report.failed == 0
    assert report.yes + report.no + report.split + report.unusable == 15
    assert report.seconds > 0
    everything = (*result.pairs, *result.hidden)
    assert {p.second_opinion for p in everything} <= {"yes", "no", "split", "unusable"}
    assert len(everything) == 15


def test_its_vote_is_kept_with_each_decision_and_its_weight_learned(index: VaultIndex) -> None:
    from desktop.flows.hunter.labels import LabelStore
    from desktop.flows.review import dismiss_pair

    def yes(request: dict[str, Any]) -> str:
        return json.dumps({"contradict": "yes"})

    with openai_stub(yes) as url:
        first = run(index, server(url))
        assert len(first.pairs) == 15 and first.second_opinion.yes == 15
        for p in [p for p in first.pairs if not lv.is_omega(p)][:10]:
            dismiss_pair(index.root, p.path_a, p.path_b, on_change=index.update_paths)
        again = run(index, server(url))
    labels = LabelStore(index.root).read().labels.values()
    assert len(labels) == 10
    assert all(lab.features and lab.features["second_opinion"] == 1.0 for lab in labels)
    # Ten pairs it said yes to were dismissed: its vote now weighs less in this vault.
    assert again.learning.calibration in ("vault", "held")
    assert again.second_opinion.weight < PRIOR_WEIGHT
