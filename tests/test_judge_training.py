"""The judge's training pipeline runs end to end on a tiny slice (CI never retrains).

BIG-bench's two task files are stood in for by a few examples in their exact
format, and the base network by a two-layer BERT with random weights and our
own tokenizer: prepare → train a few steps → export to ONNX and int8 → load the
result with the app's own :class:`OnnxJudge`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts" / "judge"
TOKENIZER = ROOT / "models" / "tokenizers" / "all-MiniLM-L6-v2" / "tokenizer.json"

torch = pytest.importorskip("torch", reason="the train extra is not installed")
pytest.importorskip("transformers", reason="the train extra is not installed")

VITAMINC = [
    (
        "Westlife: Westlife sold more than 23 million records in the UK .",
        "Westlife made under 23.5 million sales in the UK .",
        "Neither",
    ),
    (
        "Westlife: Westlife sold 24 million records in the UK .",
        "Westlife made under 23.5 million sales in the UK .",
        "False",
    ),
    ("Paris: Paris is the capital of France .", "France's capital is Paris .", "True"),
    ("Mount Everest: Everest is 8,849 metres high .", "Everest is under 8,000 metres .", "False"),
]


def bigbench_folder(root: Path) -> Path:
    tasks = root / "bigbench" / "benchmark_tasks"
    vit = tasks / "vitaminc_fact_verification"
    vit.mkdir(parents=True)
    examples = [
        {
            "input": f"{ev}\nClaim: {claim}",
            "target_scores": {k: int(k == label) for k in ("True", "False", "Neither")},
        }
        for ev, claim, label in VITAMINC * 3
    ]
    (vit / "task.json").write_text(json.dumps({"examples": examples}))
    fever = tasks / "fact_checker" / "fever"
    fever.mkdir(parents=True)
    claims = [
        f"On June 2017, the following claim was made: Claim number {i} is true.\nQ: Was "
        "this claim true or false?"
        for i in range(8)
    ]
    (fever / "task.json").write_text(
        json.dumps(
            {"examples": [{"input": c, "target_scores": {"true": 1, "false": 0}} for c in claims]}
        )
    )
    return root


def tiny_base(folder: Path) -> Path:
    from safetensors.torch import save_file
    from transformers import BertConfig, BertModel

    folder.mkdir(parents=True)
    config = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    (folder / "config.json").write_text(config.to_json_string())
    model = BertModel(config, add_pooling_layer=False)
    save_file(
        {k: v.contiguous() for k, v in model.state_dict().items()},
        str(folder / "model.safetensors"),
    )
    (folder / "tokenizer.json").write_bytes(TOKENIZER.read_bytes())
    return folder


def run(script: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / script), *args], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_prepare_train_export_and_load(tmp_path: Path) -> None:
    bb = bigbench_folder(tmp_path / "bb")
    base = tiny_base(tmp_path / "base")
    data = tmp_path / "data.jsonl"
    summary = json.loads(
        run(
            "prepare.py",
            "--bigbench",
            str(bb),
            "--out",
            str(data),
            "--limit",
            "40",
            "--val-share",
            "0.3",
        )
    )
    assert summary["rows"] > 20
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    assert {r["label"] for r in rows} == {"contradiction", "entailment", "neutral"}
    assert {"vitaminc", "fever_random"} <= {r["source"] for r in rows}
    assert any(r["source"].startswith("synth") for r in rows)
    out = tmp_path / "run"
    train_args = ["train.py", "--data", str(data), "--base", str(base), "--out", str(out)]
    train_args += ["--max-steps", "3", "--batch", "4"]
    log = run(
        *train_args,
        "--eval-every",
        "3",
        "--val-limit",
        "8",
    )
    assert "done at step 3" in log and "val {" in log
    assert (out / "best.pt").is_file() and (out / "state.pt").is_file()
    # Resuming a finished run trains nothing more and keeps the step.
    again = run(
        *train_args,
        "--resume",
    )
    assert "resumed at step 3" in again
    report = json.loads(
        run(
            "export.py",
            "--checkpoint",
            str(out / "best.pt"),
            "--base",
            str(base),
            "--out",
            str(tmp_path / "export"),
            "--data",
            str(data),
            "--val-limit",
            "8",
        )
    )
    assert report["int8_bytes"] < report["fp32_bytes"]

    from inference.judge import OnnxJudge
    from inference.registry import resolve_model

    judge = OnnxJudge(resolve_model("judge", tmp_path / "export" / "judge-int8.onnx"))
    ab = judge.score([("The shop opens at nine.", "The shop opens at ten."), ("x y", "y x")])
    ba = judge.score([("The shop opens at ten.", "The shop opens at nine."), ("y x", "x y")])
    assert ab.shape == (2, 3) and np.allclose(ab.sum(axis=1), 1.0, atol=1e-5)
    assert np.allclose(ab, ba, atol=1e-6)  # order-symmetric by construction


def test_not_contradiction_rows_pay_for_the_contradiction_share_only() -> None:
    sys.path.insert(0, str(SCRIPTS))
    import train

    logits = torch.tensor([[2.0, 0.5, -1.0], [0.1, 1.5, 0.3], [0.0, 0.0, 3.0]])
    p = logits.softmax(-1)
    targets = torch.tensor([train.TARGETS.index("not_contradiction"), 1, 2])
    loss = train.target_loss(logits, targets, None, torch)
    expected = -(torch.log(p[0, 1] + p[0, 2]) + torch.log(p[1, 1]) + torch.log(p[2, 2])) / 3
    assert torch.isclose(loss, expected)
    # Plain labels match PyTorch's own weighted cross-entropy.
    weights = torch.tensor([1.3, 1.2, 0.8, 1.0])
    plain = torch.tensor([0, 1, 2])
    ours = train.target_loss(logits, plain, weights, torch)
    ref = torch.nn.functional.cross_entropy(logits, plain, weight=weights[:3])
    assert torch.isclose(ours, ref)
    # A "not contradiction" row is cheap when the judge says entailment or neutral,
    # and costly when it says contradiction — whichever of the other two it picks.
    nc = torch.tensor([3])
    calm = train.target_loss(torch.tensor([[-3.0, 2.0, 0.0]]), nc, None, torch)
    also_calm = train.target_loss(torch.tensor([[-3.0, 0.0, 2.0]]), nc, None, torch)
    alarmed = train.target_loss(torch.tensor([[3.0, 0.0, 0.0]]), nc, None, torch)
    assert torch.isclose(calm, also_calm) and alarmed > 10 * calm


def test_false_contradiction_is_the_share_of_rows_read_as_contradictions(monkeypatch) -> None:
    sys.path.insert(0, str(SCRIPTS))
    import train

    logits = {
        ("x", "y"): [3.0, 0.0, 0.0],
        ("y", "x"): [2.0, 0.0, 0.0],
        ("p", "q"): [0.0, 3.0, 0.0],
        ("q", "p"): [0.0, 0.0, 3.0],
    }

    def encode(_tok, pairs, torch):  # the "input" is the logits themselves
        return (torch.tensor([logits[p] for p in pairs]),)

    class Echo:
        def eval(self) -> None: ...
        def train(self) -> None: ...
        def __call__(self, x):
            return x

    monkeypatch.setattr(train, "encode", encode)
    rows = [{"a": "x", "b": "y"}, {"a": "p", "b": "q"}]
    assert train.false_contradiction(Echo(), None, rows, torch) == 0.5
    assert train.false_contradiction(Echo(), None, [], torch) == 0.0
