"""Models: which files, their hashes, the backend, load and warm-up times, speeds.

Speeds are measured on request (a short generation and a batch of
embeddings, on each engine's own worker), like ``antinomy doctor`` does.
"""

from __future__ import annotations

import asyncio
import html
from dataclasses import dataclass

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from desktop.flows.model_choice import BUNDLED_NOTE, model_choice_text, uses_bundled_model
from desktop.ui.context import AppContext
from desktop.ui.dialogs.settings_dialog import SettingsDialog
from desktop.ui.dialogs.stronger_model import QtStrongerModelDialog
from desktop.ui.panels import PanelSpec
from inference.diagnostics import (
    EmbeddingSpeed,
    GenerationSpeed,
    measure_embedding,
    measure_generation,
)
from inference.runtime import EngineReport, Runtime


@dataclass(frozen=True)
class Speeds:
    generation: GenerationSpeed
    embedding: EmbeddingSpeed


def _s(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f} s"


def _engine_rows(report: EngineReport) -> list[tuple[str, str]]:
    rows = [("engine", report.description or "—")]
    m = report.model
    if m is not None:
        rows += [
            ("model", m.title),
            ("file", str(m.path)),
            ("source", m.source),
            (
                "sha256",
                m.sha256
                + ("  ✓ matches the manifest" if m.verified else "  (not in the manifest)"),
            ),
            ("size", f"{m.size / 1e6:.1f} MB"),
        ]
    rows += [
        ("load", _s(report.load_seconds)),
        (
            "warm-up (tiny / full)",
            f"{_s(report.warm_tiny_seconds)} / {_s(report.warm_full_seconds)}",
        ),
        ("ready after", _s(report.ready_seconds)),
    ]
    if report.error:
        rows.append(("problem", report.error))
    return rows


def models_html(runtime: Runtime, backend: str, speeds: Speeds | None) -> str:
    parts = [
        f"<p><b>State:</b> {runtime.state.value}"
        + (f" — all models ready in {runtime.ready_seconds:.2f} s" if runtime.ready_seconds else "")
        + f"<br><b>Backend:</b> {html.escape(backend)}</p>"
    ]
    names = {"llm": "Language model", "embedder": "Embedder", "judge": "Contradiction judge"}
    for key, report in runtime.reports.items():
        parts.append(f"<h3>{names[key]}</h3><table cellspacing='0' cellpadding='2'>")
        for label, value in _engine_rows(report):
            parts.append(
                f"<tr><td><i>{html.escape(label)}</i>&nbsp;&nbsp;</td>"
                f"<td>{html.escape(value)}</td></tr>"
            )
        parts.append("</table>")
    if speeds is not None:
        g, e = speeds.generation, speeds.embedding
        parts.append(
            "<h3>Speed</h3>"
            f"<p>Generation {g.tokens_per_second:.0f} tokens/s "
            f"(prompt {g.prompt_tokens_per_second:.0f} tokens/s, {g.generated_tokens} tokens)<br>"
            f"Embedder {e.short_texts_per_second:.0f} short texts/s, "
            f"{e.long_texts_per_second:.1f} long texts/s, "
            f"single text {e.single_latency_ms:.1f} ms</p>"
        )
    else:
        parts.append("<p><i>Press “Measure speed” for tokens/s and embedder throughput.</i></p>")
    return "".join(parts)


class QtModelsPanel(QWidget):
    sig_speeds_measured = Signal(object)
    """Speeds were measured: ``(Speeds)``."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self._c = ctx.controller
        self.speeds: Speeds | None = None
        self.view = QTextBrowser()
        self.measure_button = QPushButton("Measure speed")
        self.measure_button.clicked.connect(self.measure)
        switch = QPushButton("Switch model or backend…")
        switch.clicked.connect(self.switch)
        self.stronger_button = QPushButton("Use a stronger model…")
        self.stronger_button.setToolTip(
            "A GGUF file of your own, or an OpenAI-compatible server (Ollama, llama-server, "
            "LM Studio, vLLM): checked, then loaded and timed"
        )
        self.stronger_button.clicked.connect(self.choose_stronger)
        self.note = QLabel()
        self.note.setWordWrap(True)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.measure_button)
        row.addWidget(self.stronger_button)
        row.addWidget(switch)
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addWidget(self.view, 1)
        layout.addLayout(row)
        #: Measure tokens/s as soon as a newly chosen model is ready.
        self.measure_when_ready = False
        self._c.sig_runtime_changed.connect(self.refresh)
        self._c.sig_settings_changed.connect(lambda _s: self.refresh())
        self.refresh()

    def refresh(self) -> None:
        s = self._c.settings.backend
        backend = "embedded llama.cpp" if s.kind == "embedded" else f"{s.base_url} ({s.model})"
        if s.leaves_machine:
            backend += " — sends note text off this machine"
        self.view.setHtml(models_html(self._c.runtime, backend, self.speeds))
        self.measure_button.setEnabled(self._c.semantic_ready())
        settings = self._c.settings
        if uses_bundled_model(settings):
            self.note.setText(f"<i>{html.escape(BUNDLED_NOTE)}</i>")
        else:
            self.note.setText(
                f"Language model: <b>{html.escape(model_choice_text(settings))}</b> (your "
                "choice, kept for this install). “Use a stronger model…” changes it or goes back "
                "to the bundled one."
            )
        if self.measure_when_ready and self._c.semantic_ready():
            self.measure_when_ready = False
            self.measure()

    def measure(self) -> None:
        runtime = self._c.runtime
        self.measure_button.setEnabled(False)

        async def go() -> None:
            try:
                # Each on its engine's own worker; wrap_future never blocks the loop.
                gen = await asyncio.wrap_future(
                    runtime.submit("llm", measure_generation, runtime.generator),
                    loop=self._c.loop,
                )
                emb = await asyncio.wrap_future(
                    runtime.submit("embedder", measure_embedding, runtime.embedder),
                    loop=self._c.loop,
                )
            finally:
                self.measure_button.setEnabled(True)
            self.speeds = Speeds(gen, emb)
            self.refresh()
            self.sig_speeds_measured.emit(self.speeds)

        self._c.spawn(go(), what="Measuring model speed")

    def choose_stronger(self) -> None:
        dialog = QtStrongerModelDialog(self._c.settings, loop=self._c.loop, parent=self)
        if dialog.exec() and dialog.result_settings is not None:
            self.speeds = None
            self._c.apply_settings(dialog.result_settings)
            # After the runtime was replaced: measure the new model once it is warm.
            self.measure_when_ready = True
            self.refresh()
        dialog.deleteLater()

    def switch(self) -> None:
        dialog = SettingsDialog(self._c.settings, self, vault=self._c.root)
        dialog.tabs.setCurrentIndex(0)
        if dialog.exec() and dialog.result_settings is not None:
            self.speeds = None
            self._c.apply_settings(dialog.result_settings)
        dialog.deleteLater()


PANEL = PanelSpec("models", "Models", "tab", QtModelsPanel)
