"""The machine's busy share that no measured process explains (harness/engine/sampler.py), and the ladder
step rule built on it (harness/engine/ladder_digest.py): another tenant's load leaves a step unjudged."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import pytest

from harness.engine.ladder_digest import _step_disturbances, _step_problems
from harness.engine.pg_backends import BackendShare
from harness.engine.resources import Limits, ProcessTreeGroup, ThisProcess
from harness.engine.sampler import HostSample, Sample, Sampler
from harness.engine.sizing import machine_cores
from harness.engine.validity import UNACCOUNTED_MAX_PCT


class _Ledger:
    def totals(self) -> dict[str, float]:
        return {}


def _sampler(host_busy_s: float, component_s: dict[str, float], shares: dict[str, float]) -> Sampler:
    """Two readings 10 s apart: the host busy for host_busy_s of all cores' time, each component for its
    seconds, and PostgreSQL's per-group shares (already inside "postgres") for theirs."""
    groups: dict[str, Any] = {name: ProcessTreeGroup(name, Limits()) for name in component_s}
    groups.update({name: BackendShare(name, _Ledger()) for name in shares})  # type: ignore[arg-type]
    sampler = Sampler(groups)
    total = 10.0 * machine_cores()
    for t, scale in ((0.0, 0.0), (10.0, 1.0)):
        sampler.host.append(HostSample(t, host_busy_s * scale, total * scale))
        for name, seconds in {**component_s, **shares}.items():
            sampler.samples.append(Sample(t, name, seconds * scale, 0, 0))
    return sampler


def test_the_unexplained_share_is_the_host_minus_every_component() -> None:
    cores = machine_cores()
    sampler = _sampler(
        host_busy_s=6.0 * cores, component_s={"node-0": 2.0 * cores, "postgres": 1.0 * cores}, shares={}
    )
    # 60 % busy, 20 % + 10 % explained.
    assert sampler.unaccounted_pct(0.0, 10.0) == pytest.approx(30.0)


def test_a_share_of_postgres_is_not_counted_twice() -> None:
    cores = machine_cores()
    sampler = _sampler(
        host_busy_s=3.0 * cores,
        component_s={"node-0": 2.0 * cores, "postgres": 1.0 * cores},
        shares={"postgres/node": 0.8 * cores},
    )
    assert sampler.unaccounted_pct(0.0, 10.0) == pytest.approx(0.0, abs=1e-9)


def test_the_unexplained_share_is_never_negative_and_nan_without_readings() -> None:
    cores = machine_cores()
    # The counters' edges differ a little: components may read slightly above the host.
    sampler = _sampler(host_busy_s=1.0 * cores, component_s={"node-0": 1.2 * cores}, shares={})
    assert sampler.unaccounted_pct(0.0, 10.0) == 0.0
    assert sampler.unaccounted_pct(20.0, 30.0) != sampler.unaccounted_pct(20.0, 30.0)  # NaN
    assert Sampler({}).unaccounted_pct(0.0, 10.0) != Sampler({}).unaccounted_pct(0.0, 10.0)


def _step(unaccounted: float | None) -> dict[str, Any]:
    return {
        "loadgen_cpu_pct": 10.0,
        "db_cpu_pct": 10.0,
        "host_busy_pct": 60.0,
        "unaccounted_pct": unaccounted,
    }


def test_a_step_beside_another_tenant_is_not_judged() -> None:
    assert _step_disturbances(_step(UNACCOUNTED_MAX_PCT - 1)) == []
    disturbances = _step_disturbances(_step(UNACCOUNTED_MAX_PCT + 15))
    assert len(disturbances) == 1
    assert (
        "no measured process explains" in disturbances[0]
        and f"{UNACCOUNTED_MAX_PCT + 15:.0f} %" in disturbances[0]
    )
    stolen = _step_disturbances({**_step(UNACCOUNTED_MAX_PCT + 15), "steal_pct": 12.0})
    assert "the hypervisor's steal 12 % of the machine" in stolen[0]
    # another tenant is the host's doing, not the measurement's: it is no problem of the step's own
    assert _step_problems(_step(UNACCOUNTED_MAX_PCT + 15), 0.5) == []
    # Not measurable (an external database, remote instances): no rule, and no false problem.
    assert _step_disturbances(_step(None)) == []


def test_a_real_process_outside_every_group_reads_as_unexplained() -> None:
    """A real CPU-bound child in a group of its own, read by two samplers over the same seconds: one
    samples the group, the other does not. Only the second counts the child as unexplained. The harness's
    own process is a component of both, so the sampling itself is explained."""
    spin = [sys.executable, "-c", "import time\nend = time.time() + 4\nwhile time.time() < end: pass"]
    spinner = ProcessTreeGroup("spinner", Limits())
    without = Sampler({"harness": ThisProcess()}, interval_s=0.5)  # type: ignore[dict-item]
    with_spinner = Sampler({"harness": ThisProcess(), "spinner": spinner}, interval_s=0.5)
    child = subprocess.Popen(spin)
    spinner.adopt(child.pid)
    try:
        without.start()
        with_spinner.start()
        time.sleep(0.5)
        edges = [(without.sample_now(), with_spinner.sample_now())]
        time.sleep(2.0)
        edges.append((without.sample_now(), with_spinner.sample_now()))
    finally:
        without.stop()
        with_spinner.stop()
        child.wait(timeout=10)
    (start_a, start_b), (end_a, end_b) = edges
    unexplained_without = without.unaccounted_pct(start_a, end_a)
    unexplained_with = with_spinner.unaccounted_pct(start_b, end_b)
    seconds = with_spinner.cpu_seconds_between("spinner", start_b, end_b)
    spinner_pct = 100 * seconds / ((end_b - start_b) * machine_cores())
    # Another tenant's work is in both figures alike, since both read the same seconds (the side-by-side
    # idea): what differs is the spinner's CPU, read from its group, however busy the machine is.
    shares = (unexplained_without, unexplained_with, spinner_pct)
    assert spinner_pct > 0, shares
    assert unexplained_without >= spinner_pct / 2, shares
    assert unexplained_without - unexplained_with == pytest.approx(spinner_pct, rel=0.5), shares
