"""How many threads llama.cpp may use, chosen from what the machine has free right now.

Measured on a 2-core machine: llama.cpp's OpenMP workers spin-wait for each other, so
two threads sharing a core with another busy process collapse — cold start to the
engines warm 11.5–27.8 s on 2 threads against 2.0–2.2 s on 1, generation 96 → 11 tok/s
while our own embedder ran. Four rules follow:

* **Passive waiting.** ``OMP_WAIT_POLICY=PASSIVE`` makes an idle OpenMP worker sleep
  instead of spinning (2-thread prompt processing on a loaded machine: 17 → 110
  tok/s). OpenMP reads it once, when its library loads, so :func:`passive_openmp`
  must run before ``llama_cpp`` is imported; a value the user set is kept.
* **Prompt batches on every core.** A prompt batch is hundreds of tokens of work
  between two synchronisations, so with passive waiting an extra thread is an extra
  share of the CPU even where a core is busy: measured faster on 2 threads than on 1
  idle, beside a process spinning on one core (cold start 3.4–3.7 s against 4.2–5.1)
  and beside a background job (113–173 against 92–133 tok/s).
* **Generated tokens on the free cores.** One token is a few milliseconds of work
  with a synchronisation per layer, so a second thread whose core is busy makes every
  token wait for it: with our embedder busy, 1 thread gave 59 tok/s and 2 threads 40;
  beside a background job 50–68 against 38–49; idle, 2 threads won (67 against 48).
  Before each token the generator asks :meth:`ThreadBudget.threads` how many cores
  are free: the cores this process may run on, minus those other processes kept busy
  over the last fraction of a second (``/proc/stat`` minus our own CPU time; a
  ``nice``d job counts too: the "background job" above ran at ``nice 19``, and with
  autogroup scheduling a niced job in another session still gets its share), minus
  our own other engines that are working (the embedder, the judge, each on one thread).
* **Then the count that measured fastest.** Free cores are not always faster: on an
  idle AVX-512 machine two threads gave 47.8 tok/s and one 98.1. So each
  count up to the free cores is tried once, a smaller one is kept while it measures at
  least 10 % faster, and the free count is tried again every 64 tokens
  (:meth:`ThreadBudget.measured`).

The time of each step is still recorded per thread count (:meth:`ThreadBudget.rates`,
for benchmarks and diagnostics). A thread count set in the settings
(``performance.llm_threads``) is used as given for both kinds of step — on a machine
oversubscribed by other work (load 6 on 2 cores) 2 threads measured faster for tokens
too (22–34 against 11–13 tok/s), and that is the setting to use there.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

#: Shorter windows than this say nothing about the machine (one scheduler tick is 4 ms).
_MIN_WINDOW = 0.05
#: How long one measurement of the machine stays good before it is taken again.
_REUSE_SECONDS = 0.25
#: A core counts as busy elsewhere when other processes used this much of it.
_BUSY_FRACTION = 0.5
#: Weight of the newest rate in a thread count's running average.
_SMOOTHING = 0.25
#: Every this many generated tokens, the free-core count is used even where a smaller
#: count measured faster, so its rate follows the machine as it changes.
PROBE_EVERY = 64
#: A smaller thread count is chosen only when it measured at least this much faster.
_MARGIN = 0.1


def passive_openmp() -> None:
    """Make OpenMP workers sleep while they wait (before ``llama_cpp`` loads)."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class CpuSample:
    at: float
    #: Busy CPU seconds of the whole machine, and of this process, since boot.
    machine_busy: float
    own: float


def _clock_ticks() -> int:
    try:
        return int(os.sysconf("SC_CLK_TCK"))
    except (ValueError, OSError, AttributeError):
        return 100


def read_sample() -> CpuSample | None:
    """The machine's and this process's CPU time, or None where /proc is missing."""
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            fields = fh.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 5:
        return None
    ticks = [int(v) for v in fields[1:]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    busy = sum(ticks[:8]) - idle  # user nice system idle iowait irq softirq steal
    times = os.times()
    return CpuSample(time.monotonic(), busy / _clock_ticks(), times.user + times.system)


def busy_elsewhere(before: CpuSample, after: CpuSample) -> float:
    """Cores other processes kept busy between two samples (0.0 when unknown)."""
    window = after.at - before.at
    if window <= 0:
        return 0.0
    others = (after.machine_busy - before.machine_busy) - (after.own - before.own)
    return max(0.0, others / window)


def loadavg_elsewhere(own_running: int) -> float:
    """Fallback without /proc/stat: the 1-minute load average minus our own threads."""
    try:
        return max(0.0, os.getloadavg()[0] - own_running)
    except (AttributeError, OSError):
        return 0.0


def choose_threads(*, cores: int, busy_elsewhere: float, own_busy: int, limit: int = 4) -> int:
    """Threads for llama.cpp: one per core nobody else is using, at least one.

    >>> choose_threads(cores=2, busy_elsewhere=0.0, own_busy=0)
    2
    >>> choose_threads(cores=2, busy_elsewhere=1.0, own_busy=0)  # a core spinning elsewhere
    1
    >>> choose_threads(cores=2, busy_elsewhere=0.1, own_busy=1)  # our embedder is running
    1
    """
    taken = int(busy_elsewhere + (1.0 - _BUSY_FRACTION))  # round half up
    return max(1, min(limit, cores - taken - own_busy))


@dataclass(frozen=True)
class ThreadChoice:
    threads: int
    cores: int
    busy_elsewhere: float
    own_busy: int
    fixed: bool


class ThreadBudget:
    """Answers "how many threads now?" for one generator: every core for a prompt batch,
    the free cores for a generated token. Any thread may call it.

    ``own_busy`` returns how many of our other engines are working right now (the
    runtime counts its embedder and judge jobs, and engines still warming up).
    ``fixed`` (a positive number from the settings) bypasses the measurement.
    """

    def __init__(
        self,
        *,
        fixed: int = 0,
        own_busy: Callable[[], int] | None = None,
        limit: int = 4,
        cores: int | None = None,
        sample: Callable[[], CpuSample | None] = read_sample,
    ) -> None:
        self.fixed = fixed
        self.own_busy = own_busy or (lambda: 0)
        self.limit = limit
        self.cores = cores or usable_cores()
        self._sample = sample
        self._lock = threading.Lock()
        # The first window opens now; by the first token (after loading and the prompt)
        # it is long enough. Until then nothing is known to be busy elsewhere.
        self._last: CpuSample | None = sample() if fixed <= 0 else None
        self._elsewhere = 0.0
        self._measured_at = float("-inf")
        #: The last free-core estimate, for diagnostics and benchmarks.
        self.last: ThreadChoice | None = None
        self._rates: dict[str, dict[int, float]] = {}
        self._tokens = 0

    def _measure(self) -> float:
        now = time.monotonic()
        with self._lock:
            if now - self._measured_at < _REUSE_SECONDS:
                return self._elsewhere
            current = self._sample()
            if current is None or self._last is None:
                self._elsewhere = loadavg_elsewhere(self.own_busy() + 1)
            elif current.at - self._last.at >= _MIN_WINDOW:
                self._elsewhere = busy_elsewhere(self._last, current)
                self._last = current
            else:
                return self._elsewhere  # too short a window: keep the last figure
            self._measured_at = now
            return self._elsewhere

    def all_cores(self) -> int:
        """Threads for a prompt batch: every core this process may use (up to the limit)."""
        return max(1, min(self.limit, self.cores))

    def free_cores(self) -> int:
        """Threads for the cores nobody else uses now (a generated token)."""
        elsewhere = self._measure()
        own = self.own_busy()
        n = choose_threads(
            cores=self.cores, busy_elsewhere=elsewhere, own_busy=own, limit=self.limit
        )
        self.last = ThreadChoice(n, self.cores, elsewhere, own, False)
        return n

    def threads(self, kind: str = "token") -> int:
        """Threads for the next step of ``kind`` ("prompt" batch or generated "token")."""
        if self.fixed > 0:
            self.last = ThreadChoice(self.fixed, self.cores, 0.0, 0, True)
            return self.fixed
        if kind == "prompt":
            return self.all_cores()
        return self.measured(self.free_cores())

    def measured(self, free: int) -> int:
        """The thread count for a generated token, at most ``free``: the one whose tokens
        came fastest. Free cores are not always faster: with the 135M model, two threads
        gave 47.8 tok/s and one 98.1 on an idle AVX-512 machine (a synchronisation per
        layer costs more than a second core gives a token this small), where another
        machine gave 67 against 48. So each count up to ``free`` is tried once, a smaller
        one is kept while it measures at least 10 % faster, and ``free`` itself is tried
        again every :data:`PROBE_EVERY` tokens."""
        with self._lock:
            self._tokens += 1
            rates = dict(self._rates.get("token", {}))
            probe = self._tokens % PROBE_EVERY == 0
        if free <= 1 or probe:
            return free
        untried = [n for n in range(1, free + 1) if n not in rates]
        if untried:
            return untried[-1]  # free first, then the smaller counts
        best = max(range(1, free + 1), key=rates.__getitem__)
        return best if rates[best] > rates[free] * (1 + _MARGIN) else free

    def record(self, kind: str, threads: int, steps: int, seconds: float) -> None:
        """``steps`` tokens of ``kind`` took ``seconds`` on ``threads`` threads (kept as a
        running average per count, for :meth:`rates`)."""
        if self.fixed > 0 or seconds <= 0 or steps <= 0:
            return
        rate = steps / seconds
        with self._lock:
            rates = self._rates.setdefault(kind, {})
            old = rates.get(threads)
            rates[threads] = rate if old is None else old + _SMOOTHING * (rate - old)

    def rates(self) -> dict[str, dict[int, float]]:
        """Tokens per second per thread count, by kind (benchmarks, diagnostics)."""
        with self._lock:
            return {k: dict(v) for k, v in self._rates.items()}
