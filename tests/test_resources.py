"""Resource accounting checked against known truth, on the real kernel accounting of this machine."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from harness.resources import Limits, ProcessTreeGroup, ResourceGroup, detect_backend, new_group

BURNER = "while True: pass"
HOLDER = "import sys, time; b = bytearray({n} * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); print('ready', flush=True); time.sleep(60)"


@contextmanager
def process_in(group: ResourceGroup, code: str) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", code], preexec_fn=group.preexec, stdout=subprocess.PIPE, text=True
    )
    if isinstance(group, ProcessTreeGroup):
        group.adopt(proc.pid)
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()
        group.close()


def _cpu_share(group: ResourceGroup, seconds: float) -> float:
    time.sleep(0.5)  # let the process get going
    cpu0, t0 = group.cpu_seconds(), time.monotonic()
    time.sleep(seconds)
    return (group.cpu_seconds() - cpu0) / (time.monotonic() - t0)


@pytest.fixture(scope="module")
def backend() -> str:
    found = detect_backend()
    if found == "none":
        pytest.fail("no cgroup backend is usable here; these tests need cgroup v1 or v2 (run as root)")
    return found


def test_burner_capped_at_half_a_cpu_reads_fifty_percent(backend: str) -> None:
    group = new_group(backend, "test-burner", Limits(cpus=0.5))
    with process_in(group, BURNER):
        share = _cpu_share(group, 4.0)
    assert share == pytest.approx(0.5, abs=0.05)


def test_process_holding_200_mib_reads_about_200_mib(backend: str) -> None:
    group = new_group(backend, "test-holder", Limits())
    with process_in(group, HOLDER.format(n=200)) as proc:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        usage = group.usage()
    mib = 1024 * 1024
    assert usage.processes == 1
    assert 195 * mib <= usage.rss_bytes <= 240 * mib
    assert 195 * mib <= usage.pss_bytes <= 240 * mib


def test_fallback_backend_agrees_with_cgroup_accounting(backend: str) -> None:
    """The same capped burner, read both by the cgroup and by process-tree sampling."""
    group = new_group(backend, "test-agree", Limits(cpus=0.5))
    sampler = ProcessTreeGroup("test-agree-tree", Limits())
    with process_in(group, BURNER) as proc:
        sampler.adopt(proc.pid)
        time.sleep(0.5)
        cg0, tree0, t0 = group.cpu_seconds(), sampler.cpu_seconds(), time.monotonic()
        time.sleep(4.0)
        elapsed = time.monotonic() - t0
        cg_share = (group.cpu_seconds() - cg0) / elapsed
        tree_share = (sampler.cpu_seconds() - tree0) / elapsed
    assert tree_share == pytest.approx(cg_share, abs=0.05)


def test_fallback_backend_counts_children_and_pins(tmp_path: object) -> None:
    group = ProcessTreeGroup("test-tree", Limits(cpuset="0"))
    code = "import os, subprocess, sys; os.sched_getaffinity(0) == {0} or sys.exit(3); " + (
        "ps = [subprocess.Popen([sys.executable, '-c', 'while True: pass']) for _ in range(2)]; "
        "[p.wait() for p in ps]"
    )
    with process_in(group, code) as proc:
        time.sleep(1.0)
        assert proc.poll() is None, "the child was not pinned to CPU 0"
        assert len(group.pids()) == 3
        share = _cpu_share(group, 3.0)
    # Two burners pinned to one CPU share it: the tree uses about one CPU in total.
    assert share == pytest.approx(1.0, abs=0.1)


def test_forced_backend_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIDBENCH_RESOURCE_BACKEND", "none")
    assert detect_backend() == "none"
    monkeypatch.setenv("BIDBENCH_RESOURCE_BACKEND", "bogus")
    with pytest.raises(Exception, match="not one of"):
        detect_backend()
