"""Each component's reading is timed when it was read (harness/engine/sampler.py): a slow reading (a process
tree on a busy host) must not shift CPU time from one window into the next."""

from __future__ import annotations

import time

import pytest

from harness.engine.resources import Limits, ResourceGroup, Usage
from harness.engine.sampler import Sampler

CORES_BUSY = 0.5
SLOW_READ_S = 0.4
# Long enough between rounds that a busy host's scheduling delays (tens of ms) stay small beside them.
ROUND_GAP_S = 0.5


class _SteadyGroup(ResourceGroup):
    """Uses CORES_BUSY of a core at all times; its reading takes `delays` in turn, its value taken
    halfway through, as a process tree's walk reads its processes over the whole walk."""

    backend = "test"
    exact_cpu = True
    enforces_limit = False

    def __init__(self, name: str, delays: list[float]) -> None:
        super().__init__(name, Limits())
        self.delays = delays
        self.reads = 0
        self.t0 = time.monotonic()

    def preexec(self) -> None:  # pragma: no cover - starts nothing
        raise RuntimeError("starts nothing")

    def pids(self) -> list[int]:
        return []

    def cpu_seconds(self) -> float:
        delay = self.delays[self.reads % len(self.delays)]
        self.reads += 1
        time.sleep(delay / 2)
        value = CORES_BUSY * (time.monotonic() - self.t0)
        time.sleep(delay / 2)
        return value

    def usage(self) -> Usage:
        return Usage(self.cpu_seconds(), 0, 0)


def test_a_slow_reading_before_a_component_does_not_move_its_cpu_time() -> None:
    # The slow group is read first, every other round: the steady group's readings then start late by
    # SLOW_READ_S in one round and on time in the next.
    slow = _SteadyGroup("postgres", [SLOW_READ_S, 0.0])
    steady = _SteadyGroup("node-0", [0.0])
    sampler = Sampler({"postgres": slow, "node-0": steady})
    for _ in range(4):
        sampler.sample_now()
        time.sleep(ROUND_GAP_S)
    for name in ("postgres", "node-0"):
        rows = sampler.series(name)
        for a, b in zip(rows, rows[1:], strict=False):
            share = (b.cpu_seconds - a.cpu_seconds) / (b.t - a.t)
            assert share == pytest.approx(CORES_BUSY, abs=0.05), (name, a.t, b.t, share)


def test_readings_from_two_threads_are_taken_one_at_a_time() -> None:
    slow = _SteadyGroup("postgres", [0.2])
    sampler = Sampler({"postgres": slow}, interval_s=0.05)
    sampler.start()
    try:
        # Edge readings asked for while the once-an-interval thread reads too.
        sampler.sample_at([0.05, 0.06, 0.07])
        deadline = time.monotonic() + 10
        while len(sampler.series("postgres")) < 6 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        sampler.stop()
    times = sorted(s.t for s in sampler.series("postgres"))
    assert len(times) >= 6
    # Each reading lasts 0.2 s: one at a time, their middles are at least that far apart.
    assert all(b - a >= 0.19 for a, b in zip(times, times[1:], strict=False)), times


class _SlowMemoryGroup(_SteadyGroup):
    """Its CPU reads at once; the memory read after it (PSS of every process) is slow."""

    def pids(self) -> list[int]:
        time.sleep(SLOW_READ_S)
        return []

    def usage(self) -> Usage:
        return ResourceGroup.usage(self)


def test_a_reading_is_timed_when_its_cpu_was_read_not_after_the_slow_memory_read() -> None:
    group = _SlowMemoryGroup("postgres", [0.0])
    sampler = Sampler({"postgres": group})
    sampler.sample_now()
    (sample,) = sampler.series("postgres")
    read_at = sample.cpu_seconds / CORES_BUSY + group.t0 - sampler.t0
    assert sample.t == pytest.approx(read_at, abs=0.05)
