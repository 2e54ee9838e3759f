"""Per-second CPU and memory time series of every component of a run (instances, the load driver, PostgreSQL).

Window figures come from the cumulative readings at the window's edges, not from averaging per-second
values, so they are exact for cgroups.
"""

from __future__ import annotations

import contextlib
import csv
import itertools
import math
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from harness.engine.resources import ProcessMemory, ResourceGroup, Throttling, parse_cpuset
from harness.engine.sizing import machine_cores

MIB = 1024 * 1024
CSV_COLUMNS = (
    "t_s component cpu_pct rss_mb pss_mb cpu_seconds_total nr_periods_total nr_throttled_total throttled_s_total"
).split()


@dataclass
class Sample:
    t: float
    component: str
    cpu_seconds: float
    rss_bytes: int
    pss_bytes: int
    throttling: Throttling | None = None
    """Cumulative CFS counters; None where the group has no quota or the backend cannot tell."""
    processes: tuple[ProcessMemory, ...] = ()


@dataclass
class HostSample:
    t: float
    busy_seconds: float
    total_seconds: float
    steal_seconds: float = 0.0
    """Time the hypervisor ran someone else while this VM wanted the CPU: counted in busy, shown apart."""


@dataclass
class Sampler:
    components: dict[str, ResourceGroup]
    interval_s: float = 1.0
    samples: list[Sample] = field(default_factory=list)
    host: list[HostSample] = field(default_factory=list)
    t0: float = field(default_factory=time.monotonic)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _reading: threading.Lock = field(default_factory=threading.Lock)
    """One reading at a time: the edge thread and the once-a-second thread would otherwise walk the same
    process trees at once, and a tree group keeps state between its readings."""
    cpuset: str | None = None
    """CPUs the sampling thread runs on (a placement's driver CPUs), kept apart from the instances."""

    def start(self) -> None:
        self.sample_now()
        self._thread = threading.Thread(target=self._loop, name="bidbench-sampler", daemon=True)
        self._thread.start()

    def sample_at(self, offsets: list[float]) -> None:
        """Extra readings at these times (seconds on this sampler's clock), from a thread of their own: a
        ladder's steps last a few seconds, and interpolating between once-a-second readings moved bursts
        across step edges."""

        def read() -> None:
            for offset in offsets:
                time.sleep(max(0.0, self.t0 + offset - time.monotonic()))
                if self._thread is None or self._stop.is_set():
                    return
                self.sample_now()

        threading.Thread(target=read, name="bidbench-sampler-edges", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=10)
        self.sample_now()

    def _loop(self) -> None:
        if self.cpuset:
            # On Linux sched_setaffinity(0) pins the calling thread only: the harness's other threads
            # keep their CPUs, the sampler's reads stay off the instances' CPUs.
            with contextlib.suppress(OSError, ValueError):
                os.sched_setaffinity(0, parse_cpuset(self.cpuset))
        next_at = time.monotonic() + self.interval_s
        while not self._stop.wait(max(0.0, next_at - time.monotonic())):
            self.sample_now()
            next_at += self.interval_s

    def sample_now(self) -> float:
        """One reading of the host and of every component, each timed when its CPU was read (or, where the
        group cannot tell, halfway through its reading): reading a process tree takes long on a busy host,
        and timed at the round's start its CPU would cross a step's edge."""
        with self._reading:
            now = time.monotonic() - self.t0
            cpu = psutil.cpu_times()
            steal = getattr(cpu, "steal", 0.0)
            busy = cpu.user + cpu.nice + cpu.system + cpu.irq + cpu.softirq + steal
            host = HostSample(now, busy, busy + cpu.idle + getattr(cpu, "iowait", 0.0), steal)
            rows = [row for name, group in self.components.items() if (row := self._read(name, group))]
        with self._lock:
            self.samples.extend(rows)
            self.host.append(host)
        return now

    def _read(self, name: str, group: ResourceGroup) -> Sample | None:
        before = time.monotonic()
        try:
            usage = group.usage()
        except OSError:
            return None
        read_at = usage.cpu_read_at if usage.cpu_read_at is not None else (before + time.monotonic()) / 2
        try:
            throttling = group.cpu_throttling()
        except OSError:
            throttling = None
        return Sample(
            read_at - self.t0,
            name,
            usage.cpu_seconds,
            usage.rss_bytes,
            usage.pss_bytes,
            throttling,
            usage.by_process,
        )

    def series(self, component: str) -> list[Sample]:
        with self._lock:
            return [s for s in self.samples if s.component == component]

    def latest_cpu_pct(self, component: str) -> float | None:
        rows = self.series(component)[-2:]
        if len(rows) < 2 or rows[1].t <= rows[0].t:
            return None
        return _cpu_pct(*rows)

    def window_cpu_pct(self, component: str, start: float, end: float) -> float:
        """CPU % over [start, end] from the cumulative readings nearest to the window edges."""
        first, last = _edges(self.series(component), start, end)
        if first is None or last.t <= first.t:
            return float("nan")
        return _cpu_pct(first, last)

    def cpu_seconds_at(self, component: str, t: float) -> float:
        """The component's cumulative CPU seconds at time t, interpolated between the two readings around
        it: a ladder's steps last a few seconds, so taking the nearest once-a-second reading would move
        each step's edges by up to half a second."""
        rows = self.series(component)
        if len(rows) < 2:
            return float("nan")
        before = [s for s in rows if s.t <= t]
        after = [s for s in rows if s.t >= t]
        if not before or not after:
            return float("nan")
        # Readings from the step-edge thread and the sampling thread may be appended out of order.
        a, b = max(before, key=lambda s: s.t), min(after, key=lambda s: s.t)
        if b.t <= a.t:
            return a.cpu_seconds
        return a.cpu_seconds + (b.cpu_seconds - a.cpu_seconds) * (t - a.t) / (b.t - a.t)

    def cpu_seconds_between(self, component: str, start: float, end: float) -> float:
        return self.cpu_seconds_at(component, end) - self.cpu_seconds_at(component, start)

    def window_memory(self, component: str, start: float, end: float) -> dict[str, float]:
        all_rows = self.series(component)
        rows = [s for s in all_rows if start <= s.t <= end] or all_rows
        if not rows:
            return {"rss_peak_mb": float("nan"), "rss_steady_mb": float("nan"), "pss_steady_mb": float("nan")}
        return {
            "rss_peak_mb": max(s.rss_bytes for s in all_rows) / MIB,
            "rss_steady_mb": sum(s.rss_bytes for s in rows) / len(rows) / MIB,
            "pss_steady_mb": sum(s.pss_bytes for s in rows) / len(rows) / MIB,
        }

    def window_throttling(self, component: str, start: float, end: float) -> dict[str, Any] | None:
        """CFS throttling over [start, end] from the cumulative counters nearest to the window edges.

        `throttled_share` is throttled periods over periods in which the group ran; 0.0 when it never
        ran. None when the group has no quota, the backend cannot tell, or the window has < 2 readings."""
        first, last = _edges([s for s in self.series(component) if s.throttling], start, end)
        if first is None or last.t <= first.t:
            return None
        periods = last.throttling.periods - first.throttling.periods
        throttled = last.throttling.throttled_periods - first.throttling.throttled_periods
        return {
            "periods": periods,
            "throttled_periods": throttled,
            "throttled_share": throttled / periods if periods > 0 else 0.0,
            "throttled_s": last.throttling.throttled_s - first.throttling.throttled_s,
            "span_s": last.t - first.t,
        }

    def window_memory_by_process(self, component: str, start: float, end: float) -> list[dict[str, Any]]:
        """Per-process memory of a group over [start, end]: one entry per process alive at the window's
        last sample (a node cluster's primary and each worker, an FPM master and each child), with its
        steady (mean over the window's samples that saw it) and last RSS and PSS."""
        rows = [s for s in self.series(component) if start <= s.t <= end]
        if not rows:
            return []
        seen: dict[int, list[ProcessMemory]] = {}
        for sample in rows:
            for proc in sample.processes:
                seen.setdefault(proc.pid, []).append(proc)
        out = []
        for proc in sorted(rows[-1].processes, key=lambda p: (p.role != "primary", p.pid)):
            history = seen[proc.pid]
            out.append(
                {
                    "pid": proc.pid,
                    "name": proc.name,
                    "role": proc.role,
                    "rss_steady_mb": sum(p.rss_bytes for p in history) / len(history) / MIB,
                    "pss_steady_mb": sum(p.pss_bytes for p in history) / len(history) / MIB,
                    "rss_last_mb": proc.rss_bytes / MIB,
                    "pss_last_mb": proc.pss_bytes / MIB,
                    "samples": len(history),
                }
            )
        return out

    def _host_share(self, start: float, end: float, field: str) -> float:
        """A host counter's share of all the machine's CPU time over [start, end], from the readings
        nearest the edges."""
        first, last = _edges(self.host, start, end)
        if first is None:
            return float("nan")
        total = last.total_seconds - first.total_seconds
        used = getattr(last, field) - getattr(first, field)
        return used / total * 100 if total > 0 else float("nan")

    def host_busy_pct(self, start: float, end: float) -> float:
        return self._host_share(start, end, "busy_seconds")

    def unaccounted_pct(self, start: float, end: float) -> float:
        """The machine's busy share over [start, end] that no component explains: another tenant's work,
        or the kernel's on its behalf. NaN where a reading is missing; never below 0."""
        host = self.host_busy_pct(start, end)
        seconds = [
            self.cpu_seconds_between(name, start, end)
            for name, group in self.components.items()
            if not group.share_of_another
        ]
        if end <= start or not math.isfinite(host) or not all(math.isfinite(v) for v in seconds):
            return float("nan")
        return max(0.0, host - 100 * sum(seconds) / ((end - start) * machine_cores()))

    def host_steal_pct(self, start: float, end: float) -> float:
        """The hypervisor's steal over [start, end], as a share of all the machine's CPU time."""
        return self._host_share(start, end, "steal_seconds")

    def per_second_cpu(self, component: str, start: float, end: float) -> list[float]:
        rows = [s for s in self.series(component) if start - 0.6 <= s.t <= end + 0.6]
        return [_cpu_pct(a, b) for a, b in itertools.pairwise(rows) if b.t > a.t]

    def write_csv(self, path: Path) -> None:
        with self._lock:
            rows = list(self.samples)
        previous: dict[str, Sample] = {}
        with path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            # Throttling columns go last (cumulative, empty where unknown) so that readers indexing the
            # first six columns, and files written before them, keep working.
            writer.writerow(CSV_COLUMNS)
            for sample in rows:
                before = previous.get(sample.component)
                cpu_pct = f"{_cpu_pct(before, sample):.2f}" if before and sample.t > before.t else ""
                counters = sample.throttling
                throttling = (
                    (str(counters.periods), str(counters.throttled_periods), f"{counters.throttled_s:.6f}")
                    if counters
                    else ("", "", "")
                )
                writer.writerow(
                    [
                        f"{sample.t:.3f}",
                        sample.component,
                        cpu_pct,
                        f"{sample.rss_bytes / MIB:.2f}",
                        f"{sample.pss_bytes / MIB:.2f}",
                        f"{sample.cpu_seconds:.4f}",
                        *throttling,
                    ]
                )
                previous[sample.component] = sample


def _cpu_pct(first: Sample, last: Sample) -> float:
    """CPU % between two readings of one component."""
    return (last.cpu_seconds - first.cpu_seconds) / (last.t - first.t) * 100


def _edges(rows: list[Any], start: float, end: float) -> tuple[Any, Any]:
    """The readings nearest to a window's edges, of those within 0.6 s of it; (None, None) with fewer than two."""
    near = [r for r in rows if start - 0.6 <= r.t <= end + 0.6]
    if len(near) < 2:
        return None, None
    return min(near, key=lambda r: abs(r.t - start)), min(near, key=lambda r: abs(r.t - end))
