"""The pre-warm's stopping rule and loop (harness/engine/prewarm.py), with a scripted clock, CPU counter and load."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.engine import prewarm


class ScriptedLoad:
    def __init__(self, ends_after_polls: int | None = None) -> None:
        self.polls = 0
        self.ends_after_polls = ends_after_polls
        self.killed = False

    def poll(self) -> int | None:
        self.polls += 1
        return 0 if self.ends_after_polls is not None and self.polls >= self.ends_after_polls else None

    def kill(self) -> None:
        self.killed = True


def run_scripted(
    cpu_pct: list[float], limit_pct: float | None = None, **kwargs: object
) -> tuple[prewarm.PrewarmRecord, ScriptedLoad, list[tuple[float, str]]]:
    """Each second the instances use the next CPU % of the script (the last one repeats)."""
    now = [0.0]
    used = [0.0]
    second = [0]
    started: list[tuple[float, str]] = []
    load = ScriptedLoad(kwargs.pop("ends_after_polls", None))  # type: ignore[arg-type]

    def sleep(seconds: float) -> None:
        pct = cpu_pct[min(second[0], len(cpu_pct) - 1)]
        second[0] += 1
        now[0] += seconds
        used[0] += pct / 100 * seconds

    def start_load(rate: float, stages: str, seconds: float, scratch: Path) -> ScriptedLoad:
        started.append((rate, stages))
        return load

    record = prewarm.prewarm_until_steady(
        start_load,
        lambda: used[0],
        100.0,
        Path("/nonexistent"),
        limit_pct,
        clock=lambda: now[0],
        sleep=sleep,
        **kwargs,  # type: ignore[arg-type]
    )
    return record, load, started


def test_ramp_starts_at_a_tenth_of_the_rate_and_holds_it() -> None:
    assert prewarm.ramp_stages(300, 60) == (30, "4s:300,56s:300")
    assert prewarm.ramp_stages(5, 60)[0] == 1  # a ramp starts at 1 req/s or more


@pytest.mark.parametrize(
    ("series", "limit", "expected"),
    [
        ([10.0] * 12, None, True),
        ([20.0] * 8 + [10.0] * 4, None, False),  # halved: still warming (JIT)
        ([10.0] * 8 + [11.0] * 4, None, True),  # within 15 %
        ([0.5] * 8 + [1.2] * 4, None, True),  # under a point apart: noise at low load
        ([24.5] * 12, 25.0, False),  # flat because pinned at the quota
        ([17.0] * 12, 25.0, False),  # flat at 68 % of the limit: still compiling at half the rate
        ([15.0] * 12, 25.0, True),  # 60 % of the limit
        ([10.0] * 8, None, False),  # too few samples for three blocks
        # A fresh JVM at 0.5 CPU (measured): on its way down from the quota, two blocks agree (35.3 and
        # 32.4 %), three do not.
        ([46.4, 47.0, 46.9, 38.6, 37.1, 43.1, 31.3, 29.7, 33.2, 34.8, 41.7, 19.7], 50.0, False),
    ],
)
def test_settled(series: list[float], limit: float | None, expected: bool) -> None:
    assert prewarm.settled(series, limit) is expected


def test_stops_once_cpu_settles_after_the_ramp() -> None:
    # A JIT-like tail: busy at first, then flat at 10 % from second 12 on.
    script = [25.0] * 6 + [20.0, 18.0, 15.0, 13.0, 12.0, 11.0] + [10.0] * 40
    record, load, started = run_scripted(script, limit_pct=25.0)
    assert started == [(10.0, "4s:100,61s:100")]  # 5 s past the 60 s cap: the cap ends it, not the driver
    assert record.steady and record.reason == "CPU per second settled"
    assert load.killed
    assert record.seconds == 19  # once the last three 3-s blocks agree within 15 % (11, 10, 10)
    assert record.cpu_pct_per_s[:3] == pytest.approx([25.0, 25.0, 25.0])


def test_gives_up_at_the_time_limit_and_says_so() -> None:
    record, load, _ = run_scripted([25.0], limit_pct=25.0, max_s=20.0)
    assert not record.steady and "still changing after 20 s" in record.reason
    assert load.killed and record.seconds == pytest.approx(20.0)


def test_stops_when_the_load_generator_ends() -> None:
    record, load, _ = run_scripted([5.0, 30.0], ends_after_polls=3)
    assert not record.steady and "load generator ended" in record.reason and load.killed


def test_manifest_record_rounds_the_series() -> None:
    record = prewarm.PrewarmRecord(
        rate=50.0, seconds=12.0, steady=True, reason="x", cpu_pct_per_s=[1.234, 5.678]
    )
    assert record.as_manifest()["cpu_pct_per_s"] == [1.2, 5.7]


def scripted_cpu(cpu_pct_per_step: list[float], step_s: float = 0.5) -> tuple[object, object, object]:
    now = [0.0]
    used = [0.0]
    step = [0]

    def sleep(seconds: float) -> None:
        pct = cpu_pct_per_step[min(step[0], len(cpu_pct_per_step) - 1)]
        step[0] += 1
        now[0] += seconds
        used[0] += pct / 100 * seconds

    return (lambda: used[0]), (lambda: now[0]), sleep


def test_waits_until_a_backlog_is_worked_off() -> None:
    cpu, clock, sleep = scripted_cpu([50.0, 50.0, 48.0, 20.0, 3.0, 1.0])
    waited = prewarm.wait_until_idle(cpu, 50.0, clock=clock, sleep=sleep)  # type: ignore[arg-type]
    assert waited == pytest.approx(2.5)  # the fifth half-second is under 10 % of the 50 % limit


def test_idle_cpu_is_read_over_one_window_for_every_component() -> None:
    cpu, clock, sleep = scripted_cpu([2.5])
    readers = {"instances": cpu, "postgres": lambda: 4.0}
    idle = prewarm.idle_cpu_pcts(readers, 3.0, clock=clock, sleep=sleep)  # type: ignore[arg-type]
    assert idle["instances"] == pytest.approx(2.5) and idle["postgres"] == 0.0
    frozen = prewarm.idle_cpu_pcts({"instances": lambda: 1.0}, 3.0, clock=lambda: 0.0, sleep=lambda _: None)
    assert frozen == {"instances": None}


def test_manifest_record_keeps_the_idle_cpu() -> None:
    record = prewarm.PrewarmRecord(rate=50.0, idle_cpu_pct=1.23456, db_idle_cpu_pct=0.0444)
    assert record.as_manifest()["idle_cpu_pct"] == 1.235 and record.as_manifest()["db_idle_cpu_pct"] == 0.044
    assert prewarm.PrewarmRecord(rate=50.0).as_manifest()["idle_cpu_pct"] is None


def test_idle_wait_is_bounded() -> None:
    cpu, clock, sleep = scripted_cpu([50.0])
    assert prewarm.wait_until_idle(cpu, 50.0, max_s=3.0, clock=clock, sleep=sleep) == pytest.approx(3.0)  # type: ignore[arg-type]


def test_prewarm_rate_is_half_the_rate_or_a_share_of_the_cpus_for_a_closed_model() -> None:
    assert prewarm.prewarm_rate("open", 1200.0, 0.5, 1) == 600.0
    # Half of 400 would leave a JVM cold: at least 800 req/s per CPU (400 at 0.5 CPU, 800 for two instances).
    assert prewarm.prewarm_rate("open", 400.0, 0.5, 1) == 400.0
    assert prewarm.prewarm_rate("open", 600.0, 0.5, 1) == 400.0
    assert prewarm.prewarm_rate("open", 1000.0, 0.5, 2) == 800.0
    assert prewarm.prewarm_rate("open", 1000.0, None, 1) == 800.0
    # ...but never above the window's own rate.
    assert prewarm.prewarm_rate("open", 50.0, 0.5, 1) == 50.0
    # A closed-model run has no rate: 800 req/s for every CPU its instances may use.
    assert prewarm.prewarm_rate("closed", 200.0, 0.5, 1) == 400.0
    assert prewarm.prewarm_rate("closed", 200.0, 0.5, 2) == 800.0
    assert prewarm.prewarm_rate("closed", 200.0, None, 1) == prewarm.CLOSED_RATE_PER_CPU


def scripted_compiles(seconds_per_s: list[float]) -> object:
    """Cumulative JIT compile seconds, read once a second: each read adds the script's next share."""
    total = [0.0]
    reads = [0]

    def compile_seconds() -> float:
        total[0] += seconds_per_s[min(reads[0], len(seconds_per_s) - 1)]
        reads[0] += 1
        return total[0]

    return compile_seconds


def test_a_runtime_still_compiling_keeps_the_prewarm_going_after_its_cpu_settles() -> None:
    # CPU is flat from the start; the JIT compiles 3 % of a CPU for 30 s, then nothing.
    record, _, _ = run_scripted(
        [10.0], limit_pct=50.0, compile_seconds=scripted_compiles([0.03] * 30 + [0.0])
    )
    assert record.steady and record.reason == "CPU per second settled, JIT compiler idle"
    assert 30 <= record.seconds <= 36
    assert record.jit_share is not None and record.jit_share < prewarm.JIT_MAX_SHARE


def test_a_jit_that_never_settles_is_named_at_the_time_limit() -> None:
    record, _, _ = run_scripted([10.0], limit_pct=50.0, max_s=25.0, compile_seconds=scripted_compiles([0.03]))
    assert not record.steady and record.reason == "the JIT still compiling after 25 s"
    assert record.as_manifest()["jit_share"] == pytest.approx(0.03)


def test_a_runtime_without_compile_counters_settles_on_cpu_alone() -> None:
    record, _, _ = run_scripted([10.0], limit_pct=50.0, compile_seconds=lambda: None)
    assert record.steady and record.reason == "CPU per second settled" and record.jit_share is None


def test_jit_share_is_compile_time_over_the_last_block() -> None:
    readings = [(float(t), 0.1 * t) for t in range(10)]
    assert prewarm.jit_share(readings[:4]) is None
    assert prewarm.jit_share(readings) == pytest.approx(0.1)


def test_a_driver_that_exits_with_an_error_is_recorded_with_its_code() -> None:
    class FailingLoad(ScriptedLoad):
        def poll(self) -> int | None:
            return 2

    now = [0.0]
    record = prewarm.prewarm_until_steady(
        lambda *_: FailingLoad(),
        lambda: 0.0,
        100.0,
        Path("/nonexistent"),
        clock=lambda: now[0],
        sleep=lambda s: now.__setitem__(0, now[0] + s),
    )
    assert (
        record.driver_exit == 2
        and record.reason == "the load generator ended (exit 2) before the CPU settled"
    )
