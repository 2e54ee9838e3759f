"""Per-second CPU and memory time series of every component of a run (instances, the load driver, PostgreSQL).

A background thread reads each component's resource group once a second. CPU % over an interval is
the group's CPU-time delta over the wall-time delta; window figures are computed from the cumulative
readings at the window's edges, not by averaging per-second values, so they are exact for cgroups.
"""

from __future__ import annotations

import csv
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from harness.resources import ResourceGroup

MIB = 1024 * 1024


@dataclass
class Sample:
    t: float
    component: str
    cpu_seconds: float
    rss_bytes: int
    pss_bytes: int


@dataclass
class HostSample:
    t: float
    busy_seconds: float
    total_seconds: float


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

    def start(self) -> None:
        self.sample_now()
        self._thread = threading.Thread(target=self._loop, name="bidbench-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=10)
        self.sample_now()

    def _loop(self) -> None:
        next_at = time.monotonic() + self.interval_s
        while not self._stop.wait(max(0.0, next_at - time.monotonic())):
            self.sample_now()
            next_at += self.interval_s

    def sample_now(self) -> float:
        now = time.monotonic() - self.t0
        cpu = psutil.cpu_times()
        busy = cpu.user + cpu.nice + cpu.system + cpu.irq + cpu.softirq + getattr(cpu, "steal", 0.0)
        rows = []
        for name, group in self.components.items():
            try:
                usage = group.usage()
            except OSError:
                continue
            rows.append(Sample(now, name, usage.cpu_seconds, usage.rss_bytes, usage.pss_bytes))
        with self._lock:
            self.samples.extend(rows)
            self.host.append(HostSample(now, busy, busy + cpu.idle + getattr(cpu, "iowait", 0.0)))
        return now

    def series(self, component: str) -> list[Sample]:
        with self._lock:
            return [s for s in self.samples if s.component == component]

    def latest_cpu_pct(self, component: str) -> float | None:
        rows = self.series(component)[-2:]
        if len(rows) < 2 or rows[1].t <= rows[0].t:
            return None
        return (rows[1].cpu_seconds - rows[0].cpu_seconds) / (rows[1].t - rows[0].t) * 100

    def window_cpu_pct(self, component: str, start: float, end: float) -> float:
        """CPU % over [start, end] from the cumulative readings nearest to the window edges."""
        rows = [s for s in self.series(component) if start - 0.6 <= s.t <= end + 0.6]
        if len(rows) < 2:
            return float("nan")
        first = min(rows, key=lambda s: abs(s.t - start))
        last = min(rows, key=lambda s: abs(s.t - end))
        if last.t <= first.t:
            return float("nan")
        return (last.cpu_seconds - first.cpu_seconds) / (last.t - first.t) * 100

    def window_memory(self, component: str, start: float, end: float) -> dict[str, float]:
        rows = [s for s in self.series(component) if start <= s.t <= end] or self.series(component)
        if not rows:
            return {"rss_peak_mb": float("nan"), "rss_steady_mb": float("nan"), "pss_steady_mb": float("nan")}
        all_rows = self.series(component)
        return {
            "rss_peak_mb": max(s.rss_bytes for s in all_rows) / MIB,
            "rss_steady_mb": sum(s.rss_bytes for s in rows) / len(rows) / MIB,
            "pss_steady_mb": sum(s.pss_bytes for s in rows) / len(rows) / MIB,
        }

    def host_busy_pct(self, start: float, end: float) -> float:
        rows = [h for h in self.host if start - 0.6 <= h.t <= end + 0.6]
        if len(rows) < 2:
            return float("nan")
        first = min(rows, key=lambda h: abs(h.t - start))
        last = min(rows, key=lambda h: abs(h.t - end))
        total = last.total_seconds - first.total_seconds
        return (last.busy_seconds - first.busy_seconds) / total * 100 if total > 0 else float("nan")

    def per_second_cpu(self, component: str, start: float, end: float) -> list[float]:
        rows = [s for s in self.series(component) if start - 0.6 <= s.t <= end + 0.6]
        return [
            (b.cpu_seconds - a.cpu_seconds) / (b.t - a.t) * 100
            for a, b in zip(rows, rows[1:], strict=False)
            if b.t > a.t
        ]

    def write_csv(self, path: Path) -> None:
        with self._lock:
            rows = list(self.samples)
        previous: dict[str, Sample] = {}
        with path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["t_s", "component", "cpu_pct", "rss_mb", "pss_mb", "cpu_seconds_total"])
            for sample in rows:
                before = previous.get(sample.component)
                cpu_pct = (
                    (sample.cpu_seconds - before.cpu_seconds) / (sample.t - before.t) * 100
                    if before and sample.t > before.t
                    else ""
                )
                writer.writerow(
                    [
                        f"{sample.t:.3f}",
                        sample.component,
                        f"{cpu_pct:.2f}" if cpu_pct != "" else "",
                        f"{sample.rss_bytes / MIB:.2f}",
                        f"{sample.pss_bytes / MIB:.2f}",
                        f"{sample.cpu_seconds:.4f}",
                    ]
                )
                previous[sample.component] = sample
