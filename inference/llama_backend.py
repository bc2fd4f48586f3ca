"""The embedded llama.cpp backend (llama-cpp-python), with cheap JSON constraining.

llama-cpp-python's high-level sampler puts the grammar in the sampler chain,
so every token the grammar is tested against the whole vocabulary (49k
tokens for SmolLM2: ~8.7 ms per token instead of 0.1 ms, generation 1.5–2× slower).
This backend runs its own decode loop on the same ``Llama`` object and checks
the grammar lazily, as llama.cpp's own ``common_sampler`` does: the model's
choice is tested alone (one token, microseconds); only when the grammar
rejects it are the full logits masked and the choice made again. The output
is exactly what the eager grammar gives for greedy decoding, at near
unconstrained speed.

A ``Llama`` is not thread-safe: one instance belongs to one single-worker
executor (see :mod:`inference.runtime`); a lock also guards direct callers.
"""

from __future__ import annotations

import ctypes
import json
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from foundation.errors import GenerationError, ModelUnavailable
from inference.base import (
    Completion,
    FinishReason,
    GenerationSettings,
    Generator,
    Message,
    StopFlag,
)
from inference.kv_prefix import MIN_TOKENS as MIN_PREFIX_TOKENS
from inference.kv_prefix import PrefixStates, common_prefix
from inference.registry import ResolvedModel
from inference.threads import ThreadBudget, passive_openmp

# OpenMP reads its wait policy once, when llama.cpp's library loads: before any import.
passive_openmp()

#: Greedy fallback: how many of the best tokens are tested one by one before the
#: whole vocabulary is masked.
_SCAN_TOP = 32

_CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@dataclass(frozen=True)
class LlamaSettings:
    #: The shipped model was trained for 8192; a classic scan (20 notes × 800
    #: characters) needs ~4.5k tokens with its answer. KV cache at 8192: ~190 MB.
    n_ctx: int = 8192
    #: 0 = every core for a prompt batch, the cores free right now for each generated
    #: token (inference/threads.py); a positive number is used as given for both.
    threads: int = 0
    n_batch: int = 512
    #: Off by default in llama-cpp-python; on: ~10 % faster generation, 10–20 % faster prompts.
    flash_attn: bool = True
    seed: int = 0


def _token_array_dtype() -> np.dtype[Any]:
    import llama_cpp

    dtype = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)
    assert dtype.itemsize == ctypes.sizeof(llama_cpp.llama_token_data)
    return dtype


class LlamaGenerator(Generator):
    """Chat completions from a GGUF file run in-process by llama.cpp."""

    def __init__(
        self,
        model: ResolvedModel,
        settings: LlamaSettings | None = None,
        *,
        budget: ThreadBudget | None = None,
    ) -> None:
        passive_openmp()
        import llama_cpp
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self._lib = llama_cpp
        self.settings = settings or LlamaSettings()
        self.model = model
        self.model_name = model.title
        self.model_id = f"{model.path.name}:{model.sha256[:12]}"
        self.describes = bool(model.spec.extra.get("describes", True)) if model.spec else True
        self.backend_name = "llama.cpp (embedded)"
        #: How many threads to use, asked before every prompt batch and token.
        self.budget = budget or ThreadBudget(fixed=self.settings.threads)
        self._threads_now = self.budget.threads("prompt")
        try:
            self._llama = llama_cpp.Llama(
                model_path=str(model.path),
                n_ctx=self.settings.n_ctx,
                n_batch=self.settings.n_batch,
                n_threads=self._threads_now,
                n_threads_batch=self._threads_now,
                flash_attn=self.settings.flash_attn,
                seed=self.settings.seed,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelUnavailable(
                f"llama.cpp could not load {model.path} ({exc}) — the file may be damaged or its "
                "architecture unsupported by this llama-cpp-python; choose another GGUF model "
                "or remove the path from the settings to use the bundled default."
            ) from exc
        llama = self._llama
        self.context_length = llama.n_ctx()
        self._vocab = llama._model.vocab
        self._n_vocab = llama.n_vocab()
        eos_id, bos_id = llama.token_eos(), llama.token_bos()
        eos = llama._model.token_get_text(eos_id) if eos_id != -1 else ""
        bos = llama._model.token_get_text(bos_id) if bos_id != -1 else ""
        template = llama.metadata.get("tokenizer.chat_template") or _CHATML
        self._formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
        self._candidates = np.zeros(self._n_vocab, dtype=_token_array_dtype())
        self._candidates["id"] = np.arange(self._n_vocab, dtype=np.intc)
        self._one = (llama_cpp.llama_token_data * 1)()
        self._grammars: dict[str, tuple[str, str]] = {}
        self._rng = np.random.default_rng(self.settings.seed)
        self._lock = threading.Lock()
        #: Grammar checks, for benchmarks: [first choice allowed, found in the top
        #: candidates, full-vocabulary mask needed].
        self.grammar_stats = [0, 0, 0]
        #: Thread counts used so far (count of prompt batches and tokens per value).
        self.thread_use: dict[int, int] = {}
        #: KV states of system messages already decoded (inference/kv_prefix.py).
        self.prefixes = PrefixStates()
        #: Prompt tokens the last request did not decode (live cache or saved prefix).
        self.last_reused = 0

    # ------------------------------------------------------------------ prompt

    def format_prompt(self, messages: Sequence[Message]) -> str:
        chat: Any = [m.as_dict() for m in messages]
        return self._formatter(messages=chat).prompt

    def tokenize(self, text: str) -> list[int]:
        return list(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def count_tokens(self, text: str) -> int:
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    # ------------------------------------------------------------------ grammar

    def _grammar_source(self, schema: dict[str, Any]) -> tuple[str, str]:
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            from llama_cpp.llama_grammar import LlamaGrammar

            try:
                grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
            except Exception as exc:  # the converter raises plain exceptions
                raise GenerationError(
                    f"The JSON schema cannot be turned into a grammar: {exc}"
                ) from exc
            self._grammars[key] = (grammar._grammar, grammar._root)
        return self._grammars[key]

    def _new_grammar(self, schema: dict[str, Any]) -> Any:
        text, root = self._grammar_source(schema)
        sampler = self._lib.llama_sampler_init_grammar(
            self._vocab, text.encode("utf-8"), root.encode("utf-8")
        )
        if not sampler:
            raise GenerationError("llama.cpp rejected the grammar built from the JSON schema.")
        return sampler

    def _grammar_allows(self, grammar: Any, token: int) -> bool:
        """Test one token against the grammar without touching the rest of the vocabulary."""
        lib = self._lib
        self._one[0].id = token  # type: ignore[assignment]
        self._one[0].logit = 0.0
        self._one[0].p = 0.0
        arr = lib.llama_token_data_array(
            data=ctypes.cast(self._one, lib.llama_token_data_p), size=1, selected=-1, sorted=False
        )
        lib.llama_sampler_apply(grammar, ctypes.byref(arr))
        return math.isfinite(self._one[0].logit)

    def _mask_with_grammar(
        self, grammar: Any, logits: np.ndarray[Any, Any]
    ) -> np.ndarray[Any, Any]:
        lib = self._lib
        cand = self._candidates
        cand["logit"] = logits
        cand["p"] = 0.0
        arr = lib.llama_token_data_array(
            data=cand.ctypes.data_as(lib.llama_token_data_p),
            size=self._n_vocab,
            selected=-1,
            sorted=False,
        )
        lib.llama_sampler_apply(grammar, ctypes.byref(arr))
        return np.asarray(cand["logit"], dtype=np.float32)

    def _constrain(
        self, grammar: Any, token: int, logits: np.ndarray[Any, Any], temperature: float
    ) -> int:
        """The token the grammar-masked distribution picks, touching as little as possible.

        1. The model's own choice, tested alone — accepted ~3 times in 4.
        2. Greedy only: the next best tokens in logit order, each tested alone; the
           first allowed one *is* the argmax of the masked logits, so the result is
           exactly the eager grammar's.
        3. Otherwise mask the whole vocabulary (~9 ms) and pick again.
        """
        if self._grammar_allows(grammar, token):
            self.grammar_stats[0] += 1
            return token
        if temperature <= 0.0:
            k = min(_SCAN_TOP, logits.shape[0])
            top = np.argpartition(-logits, k - 1)[:k]
            for candidate in top[np.argsort(-logits[top], kind="stable")]:
                if int(candidate) != token and self._grammar_allows(grammar, int(candidate)):
                    self.grammar_stats[1] += 1
                    return int(candidate)
        self.grammar_stats[2] += 1
        masked = self._mask_with_grammar(grammar, logits)
        if not np.isfinite(masked).any():
            raise GenerationError("The JSON grammar admits no next token.")
        return self._pick(masked, temperature)

    # ------------------------------------------------------------------ sampling

    @staticmethod
    def _penalise(
        logits: np.ndarray[Any, Any], recent: list[int], settings: GenerationSettings
    ) -> np.ndarray[Any, Any]:
        """llama.cpp's repetition penalty: shrink the logits of recently seen tokens."""
        logits = logits.copy()
        seen = np.unique(np.asarray(recent, dtype=np.intp))
        values = logits[seen]
        p = settings.repeat_penalty
        logits[seen] = np.where(values > 0, values / p, values * p)
        return logits

    def _pick(self, logits: np.ndarray[Any, Any], temperature: float) -> int:
        if temperature <= 0.0:
            return int(np.argmax(logits))
        k = min(40, logits.shape[0])
        top = np.argpartition(logits, -k)[-k:]
        scaled = logits[top].astype(np.float64) / temperature
        finite = np.isfinite(scaled)
        if not finite.any():
            return int(np.argmax(logits))
        scaled = np.where(finite, scaled, -np.inf)
        probs = np.exp(scaled - scaled[finite].max())
        probs /= probs.sum()
        return int(top[self._rng.choice(k, p=probs)])

    # ------------------------------------------------------------------ Generator

    def _fit_threads(self, kind: str) -> int:
        """Set the thread count for the next step (inference/threads.py): from the free
        cores at first, then from the rates each count actually got."""
        want = self.budget.threads(kind)
        self.thread_use[want] = self.thread_use.get(want, 0) + 1
        if want != self._threads_now:
            self._lib.llama_set_n_threads(self._llama._ctx.ctx, want, want)
            self._threads_now = want
        return want

    def _timed_eval(self, kind: str, tokens: list[int]) -> None:
        threads = self._fit_threads(kind)
        t0 = time.perf_counter()
        self._llama.eval(tokens)
        self.budget.record(kind, threads, len(tokens), time.perf_counter() - t0)

    def _stable_prefix(self, messages: Sequence[Message], tokens: list[int]) -> int:
        """How many leading tokens of the prompt are its system message (0: none, or too
        short to be worth saving): the part the next requests of a run share."""
        if len(messages) < 2 or messages[0].role != "system":
            return 0
        head = self.tokenize(self.format_prompt(messages[:1]))
        n = common_prefix(head, tokens)
        return n if n >= MIN_PREFIX_TOKENS else 0

    def _save_prefix(self, n: int) -> None:
        """Keep the KV state of sequence 0 (exactly ``n`` tokens decoded) for later."""
        lib, ctx = self._lib, self._llama._ctx.ctx
        size = lib.llama_state_seq_get_size(ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        written = lib.llama_state_seq_get_data(ctx, buf, size, 0)
        if 0 < written <= size:
            self.prefixes.add(self._llama.input_ids[:n].tolist(), bytes(buf)[:written])

    def _restore_prefix(self, tokens: list[int], state: bytes) -> bool:
        llama = self._llama
        llama.reset()  # type: ignore[no-untyped-call]
        llama._ctx.kv_cache_seq_rm(-1, -1, -1)
        buf = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if not self._lib.llama_state_seq_set_data(llama._ctx.ctx, buf, len(state), 0):
            llama._ctx.kv_cache_seq_rm(-1, -1, -1)
            return False
        n = len(tokens)
        llama.input_ids[:n] = tokens
        llama.n_tokens = n
        self.prefixes.stats.restored += 1
        return True

    def _eval_prompt(self, tokens: list[int], stop: StopFlag | None, stable: int = 0) -> bool:
        """Decode the prompt, reusing the live cache's common prefix or a saved prefix
        state (inference/kv_prefix.py); ``stable`` leading tokens are saved for the next
        requests when they are not yet. False if Stop came first."""
        llama = self._llama
        prefix = common_prefix(llama.input_ids[: llama.n_tokens].tolist(), tokens)
        prefix = min(prefix, len(tokens) - 1)  # at least one token to get fresh logits
        saved = self.prefixes.best(tokens, longer_than=prefix)
        if saved is not None and self._restore_prefix(tokens[: saved[0]], saved[1]):
            prefix = saved[0]
        elif prefix > 0 and llama._ctx.kv_cache_seq_rm(-1, prefix, -1):
            llama.n_tokens = prefix
        else:
            llama.reset()  # type: ignore[no-untyped-call]
            llama._ctx.kv_cache_seq_rm(-1, -1, -1)
            prefix = 0
        self.prefixes.stats.tokens_reused += prefix
        self.last_reused = prefix
        save_at = stable if stable > prefix and not self.prefixes.has(tokens[:stable]) else 0
        step = self.settings.n_batch
        start = prefix
        while start < len(tokens):
            if stop is not None and stop.is_set():
                return False
            end = min(len(tokens), start + step)
            if start < save_at < end:
                end = save_at  # stop at the prefix's end to save its state
            self._timed_eval("prompt", tokens[start:end])
            if end == save_at:
                self._save_prefix(save_at)
            start = end
        return True

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        settings: GenerationSettings | None = None,
        stop: StopFlag | None = None,
    ) -> Completion:
        settings = settings or GenerationSettings()
        with self._lock:
            return self._complete(messages, schema, settings, stop)

    def _complete(
        self,
        messages: Sequence[Message],
        schema: dict[str, Any] | None,
        settings: GenerationSettings,
        stop: StopFlag | None,
    ) -> Completion:
        lib, llama = self._lib, self._llama
        start = time.perf_counter()
        tokens = self.tokenize(self.format_prompt(messages))
        room = self.context_length - len(tokens)
        if room < 8:
            raise GenerationError(
                f"The prompt is {len(tokens)} tokens but the model's context holds "
                f"{self.context_length} — send less text at once."
            )
        max_new = min(settings.max_tokens, room)
        grammar = self._new_grammar(schema) if schema is not None else None
        out: list[int] = []
        finish: FinishReason = "length"
        try:
            if not self._eval_prompt(tokens, stop, self._stable_prefix(messages, tokens)):
                return self._completion(tokens, out, start, start, "stopped")
            prompt_done = time.perf_counter()
            for _ in range(max_new):
                if stop is not None and stop.is_set():
                    finish = "stopped"
                    break
                logits = np.ctypeslib.as_array(
                    llama._ctx.get_logits_ith(-1), shape=(self._n_vocab,)
                )
                if settings.repeat_penalty != 1.0 and out:
                    logits = self._penalise(logits, out[-settings.repeat_window :], settings)
                token = self._pick(logits, settings.temperature)
                if grammar is not None:
                    token = self._constrain(grammar, token, logits, settings.temperature)
                    lib.llama_sampler_accept(grammar, token)
                if lib.llama_vocab_is_eog(self._vocab, token):
                    finish = "stop"
                    break
                out.append(token)
                self._timed_eval("token", [token])
        except RuntimeError as exc:  # llama_decode failures
            raise GenerationError(f"llama.cpp failed while generating: {exc}") from exc
        finally:
            if grammar is not None:
                lib.llama_sampler_free(grammar)
        return self._completion(tokens, out, start, prompt_done, finish)

    def _completion(
        self,
        prompt: list[int],
        out: list[int],
        start: float,
        prompt_done: float,
        finish: FinishReason,
    ) -> Completion:
        text = self._llama.detokenize(out).decode("utf-8", "replace") if out else ""
        return Completion(
            text=text,
            tokens_in=len(prompt),
            tokens_out=len(out),
            duration=time.perf_counter() - start,
            finish_reason=finish,
            model=self.model_name,
            backend=self.backend_name,
            prompt_seconds=prompt_done - start,
        )

    def close(self) -> None:
        with self._lock:
            self._llama.close()
