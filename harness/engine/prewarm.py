"""Pre-warm a fresh instance set until its CPU per second has settled (docs/design.md §7), before the
first measured window. A fixed warm-up is too short for some runtimes and wasted on others (docs/method.md,
"Pre-warm"): the load ramps to the rate, then holds it until the CPU settles (and a JVM's JIT is idle) or
the time limit is reached. The session records what the pre-warm did in every run's manifest.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.engine.sizing import nominal_cores

RAMP_S = 4  # from a tenth of the rate: a cold instance hit at full rate builds a long backlog
# The settling rules and their figures: the lab log (docs/lab/), prewarm settling rule. Three blocks of
# 3 s: two can agree on a JVM's way down from the quota.
SETTLE_BLOCK_S = 3
SETTLE_BLOCKS = 3
JIT_BLOCK_S = 4
MAX_S = 60.0
DRIVER_SLACK_S = 5.0
# Of the first window's rate: a warm app runs well under its CPU limit there, so one pinned at it is
# still compiling.
RATE_SHARE = 0.5
# The least rate per CPU of the instances (never above the window's own), and a closed model's rate: a
# JIT compiles a method after thousands of calls, so a low rate leaves a fresh JVM cold while its CPU
# already reads as settled.
MIN_RATE_PER_CPU = 800.0
CLOSED_RATE_PER_CPU = MIN_RATE_PER_CPU
MAX_DRIFT = 0.15
ABS_SLACK_PCT = 1.0  # points of CPU %: below this, a difference between blocks is sampling noise
IDLE_SHARE = 0.1  # of the CPU limit: below this the instances have worked off a backlog
IDLE_MAX_S = 15.0
IDLE_WINDOW_S = 1.5
"""How long the instances' idle CPU is read after the pre-warm: the cost fit's intercept (docs/method.md,
"The intercept is the idle CPU")."""
# Of the CPU limit: a JVM still compiling sits above it for tens of seconds, its CPU falling slowly
# enough to look settled.
WARM_MAX_SHARE = 0.65
# Of wall time, over the last block: a JVM is warm when its JIT compiles less than this; CPU settling
# alone ended pre-warms while C2 still compiled (docs/method.md, "Pre-warm").
JIT_MAX_SHARE = 0.01


@dataclass
class PrewarmRecord:
    rate: float
    seconds: float = 0.0
    steady: bool = False
    reason: str = ""
    cpu_pct_per_s: list[float] = field(default_factory=list)
    # Seconds of JIT compilation per second of the last block, for runtimes that report it (else None).
    jit_share: float | None = None
    # After the load stops: an instance the pre-warm overloaded still works off its backlog.
    idle_wait_s: float = 0.0
    # The driver's exit code when it ended before the pre-warm did; non-zero means it could not run.
    driver_exit: int | None = None
    # The instances ran it without their CPU quota (RunPlan.prewarm_unlimited on a cgroup backend).
    limit_lifted: bool = False
    # The instances' and PostgreSQL's CPU % with no load once idle: a ladder's cost fits' intercepts.
    idle_cpu_pct: float | None = None
    db_idle_cpu_pct: float | None = None

    def as_manifest(self) -> dict[str, Any]:
        record = asdict(self)
        record["cpu_pct_per_s"] = [round(v, 1) for v in self.cpu_pct_per_s]
        record["idle_wait_s"] = round(self.idle_wait_s, 1)
        record["jit_share"] = None if self.jit_share is None else round(self.jit_share, 4)
        for key in ("idle_cpu_pct", "db_idle_cpu_pct"):
            record[key] = None if record[key] is None else round(record[key], 3)
        return record


def shortest_s() -> float:
    """The shortest pre-warm: the ramp, then the blocks that must agree (`settled`)."""
    return float(RAMP_S + SETTLE_BLOCKS * SETTLE_BLOCK_S)


def expected_s(on_jvm: bool, max_s: float = MAX_S) -> float:
    """How long a pre-warm is planned to last, for estimates: a JVM's JIT compiler stays busy about as long as
    the cap allows; another runtime settles a block past the shortest."""
    return max_s if on_jvm else min(max_s, shortest_s() + SETTLE_BLOCK_S)


def settled(cpu_pct_after_ramp: Sequence[float], limit_pct: float | None = None) -> bool:
    """The last SETTLE_BLOCKS blocks of per-second CPU % agree within MAX_DRIFT (or ABS_SLACK_PCT points),
    and the last is under WARM_MAX_SHARE of the CPU limit (`limit_pct`, None for none): the load is half
    the rate being measured, and a JIT compiler busy near the quota reads as flat as a steady state."""
    block_s, blocks = SETTLE_BLOCK_S, SETTLE_BLOCKS
    if len(cpu_pct_after_ramp) < blocks * block_s:
        return False
    tail = cpu_pct_after_ramp[len(cpu_pct_after_ramp) - blocks * block_s :]
    means = [statistics.fmean(tail[i * block_s : (i + 1) * block_s]) for i in range(blocks)]
    if limit_pct and means[-1] >= WARM_MAX_SHARE * limit_pct:
        return False
    spread = max(means) - min(means)
    return spread <= ABS_SLACK_PCT or spread / max(means) <= MAX_DRIFT


def jit_share(compiled: Sequence[tuple[float, float]], block_s: int = JIT_BLOCK_S) -> float | None:
    """Compile seconds per second over the last `block_s` readings' span, or None before there are enough."""
    if len(compiled) <= block_s:
        return None
    (t0, c0), (t1, c1) = compiled[-1 - block_s], compiled[-1]
    return (c1 - c0) / (t1 - t0) if t1 > t0 else None


def jit_idle(share: float | None, compiled: Sequence[tuple[float, float]]) -> bool:
    """True without compile readings (a runtime that reports none); else the last block's share is low."""
    if not compiled:
        return True
    return share is not None and share < JIT_MAX_SHARE


def prewarm_rate(model: str, rate: float, cpus: float | None, instances: int) -> float:
    """The pre-warm's rate. Open model: half the first window's rate, but at least MIN_RATE_PER_CPU for
    every CPU the instances may use (an instance without a limit counts as one CPU), unless the window's
    own rate is lower. Closed model: CLOSED_RATE_PER_CPU for every such CPU."""
    per_cpus = nominal_cores(cpus) * instances
    if model == "open":
        return max(rate * RATE_SHARE, min(rate, MIN_RATE_PER_CPU * per_cpus))
    return CLOSED_RATE_PER_CPU * per_cpus


def ramp_stages(rate: float, max_s: float, ramp_s: int = RAMP_S) -> tuple[float, str]:
    """(start rate, BB_STAGES) for the driver: from a tenth of `rate` to `rate` over ramp_s, then held."""
    return max(1.0, rate / 10), f"{ramp_s}s:{rate:g},{max(max_s - ramp_s, 1):g}s:{rate:g}"


def prewarm_until_steady(
    start_load: Callable[[float, str, float, Path], Any],
    cpu_seconds: Callable[[], float],
    rate: float,
    scratch: Path,
    limit_pct: float | None = None,
    max_s: float = MAX_S,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    compile_seconds: Callable[[], float | None] | None = None,
) -> PrewarmRecord:
    """Runs the ramped load (start_load returns a handle with poll() and kill()) and samples the instances'
    cumulative CPU seconds once a second until `settled`, the driver ends, or max_s. `limit_pct` is the instances'
    summed CPU limit in CPU % (None: no limit). `compile_seconds`, for a runtime that reports its JIT
    compiler's cumulative time, adds a condition: the last block compiled less than JIT_MAX_SHARE of its time."""
    record = PrewarmRecord(rate=rate)
    # The driver outlasts the cap, so the cap, not the driver's end, ends the pre-warm.
    driver_s = max_s + DRIVER_SLACK_S
    start_rate, stages = ramp_stages(rate, driver_s)
    load = start_load(start_rate, stages, driver_s, scratch)
    began = clock()
    last_t, last_cpu = began, cpu_seconds()
    compiled: list[tuple[float, float]] = []  # (time, cumulative compile seconds), one per second
    try:
        while True:
            sleep(1.0)
            now, cpu = clock(), cpu_seconds()
            if now > last_t:
                record.cpu_pct_per_s.append(100.0 * (cpu - last_cpu) / (now - last_t))
            last_t, last_cpu = now, cpu
            record.seconds = now - began
            if compile_seconds is not None and (total := compile_seconds()) is not None:
                compiled.append((now, total))
                record.jit_share = jit_share(compiled)
            if settled(record.cpu_pct_per_s[RAMP_S:], limit_pct) and jit_idle(record.jit_share, compiled):
                record.steady = True
                record.reason = "CPU per second settled" + (", JIT compiler idle" if compiled else "")
                break
            if (code := load.poll()) is not None:
                record.driver_exit = code
                record.reason = f"the load generator ended (exit {code}) before the CPU settled"
                break
            if record.seconds >= max_s:
                still = (
                    "the JIT still compiling"
                    if not jit_idle(record.jit_share, compiled)
                    else "CPU still changing"
                )
                record.reason = f"{still} after {max_s:g} s"
                break
    finally:
        load.kill()
    return record


def idle_cpu_pcts(
    cpu_seconds: Mapping[str, Callable[[], float]],
    seconds: float = IDLE_WINDOW_S,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, float | None]:
    """Each component's CPU % over the same `seconds` with no load; None if the clock did not move."""
    began = clock()
    before = {name: read() for name, read in cpu_seconds.items()}
    sleep(seconds)
    elapsed = clock() - began
    return {
        name: 100.0 * (read() - before[name]) / elapsed if elapsed > 0 else None
        for name, read in cpu_seconds.items()
    }


def wait_until_idle(
    cpu_seconds: Callable[[], float],
    limit_pct: float,
    max_s: float = IDLE_MAX_S,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> float:
    """Waits until the instances' CPU over half a second is under IDLE_SHARE of their limit (or max_s).
    Returns the seconds waited."""
    began = last_t = clock()
    last_cpu = cpu_seconds()
    while last_t - began < max_s:
        sleep(0.5)
        now, cpu = clock(), cpu_seconds()
        if now > last_t and 100.0 * (cpu - last_cpu) / (now - last_t) < IDLE_SHARE * limit_pct:
            return now - began
        last_t, last_cpu = now, cpu
    return last_t - began
