"""What a test started, so its leftover checks never count (or touch) what others run on this machine: a
`./bidbench serve` or a benchmark from another checkout or terminal carries the same instance marker.

An app instance is a test's when its marker (the instance's run directory) lies under a run directory the
test's runs named (a session root in a stored manifest, a serve's or a tool's own directory), or when it
descends from a process the test started. Resource groups are a test's when one of its processes was in them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import psutil

from harness.engine.instances import INSTANCE_MARKER
from harness.engine.resources import ResourceGroup
from harness.record.folders import RunFolder

CGROUP_ROOT = Path("/sys/fs/cgroup")


def _live(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _descendants(pid: int) -> set[int]:
    try:
        return {p.pid for p in psutil.Process(pid).children(recursive=True)}
    except psutil.NoSuchProcess:
        return set()


def instance_processes(roots: Iterable[str | Path] = (), tree_of: int | None = None) -> list[psutil.Process]:
    """Live app processes whose marker lies under one of `roots`, or that descend from `tree_of` (default:
    this test process). Nothing else on the machine is looked at twice."""
    prefixes = [str(root).rstrip(os.sep) + os.sep for root in roots]
    tree = _descendants(os.getpid() if tree_of is None else tree_of)
    found = []
    for proc in psutil.process_iter():
        try:
            marker = proc.environ().get(INSTANCE_MARKER)
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
        if marker is None:
            continue
        if (proc.pid in tree or any((marker + os.sep).startswith(p) for p in prefixes)) and _live(proc):
            found.append(proc)
    return found


def session_roots(results_dir: Path) -> list[str]:
    """The run directories of the sessions whose runs are stored in `results_dir` (their manifests say)."""
    roots = []
    if not results_dir.is_dir():
        return roots
    for path in results_dir.iterdir():
        folder = RunFolder(path)
        if path.is_dir() and folder.has("manifest.json"):
            root = folder.read_json("manifest.json").get("session", {}).get("root")
            if root:
                roots.append(str(root))
    return roots


def cgroups_of(pid: int) -> set[str]:
    """The bidbench resource groups a process is in, as paths below the cgroup root."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return set()
    return {line.split(":", 2)[2] for line in lines if "/bidbench/" in line}


def cgroup_members(group: str) -> list[int]:
    """Live processes in a resource group; none when the group is gone."""
    # cgroup v2: one tree; v1: one tree per controller (cpu,cpuacct/, cpuset/, memory/).
    candidates = [
        CGROUP_ROOT / group.lstrip("/") / "cgroup.procs",
        *CGROUP_ROOT.glob(f"*{group}/cgroup.procs"),
    ]
    members: list[int] = []
    for procs in candidates:
        try:
            members += [int(p) for p in procs.read_text().split()]
        except OSError:
            continue
    return [pid for pid in members if psutil.pid_exists(pid) and _live(psutil.Process(pid))]


def tree_footprint(pid: int) -> tuple[set[int], set[str]]:
    """A running process's descendants and the bidbench resource groups any of them is in."""
    pids = _descendants(pid)
    return pids, {group for p in pids for group in cgroups_of(p)}


def left_of(pids: Iterable[int], groups: Iterable[str]) -> list[str]:
    """What is still there of a footprint taken earlier: live processes, groups with processes in them."""
    left = []
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            if _live(proc):
                left.append(f"pid {pid}: {' '.join(proc.cmdline()[:4])}")
        except psutil.NoSuchProcess:
            continue
    left += [f"resource group {g}: pids {members}" for g in groups if (members := cgroup_members(g))]
    return left


@contextmanager
def process_in(
    group: ResourceGroup, code: str, preexec: Callable[[], None] | None = None, **popen: Any
) -> Iterator[subprocess.Popen[Any]]:
    """A Python child running `code` in `group` (joined by `preexec`, by default the group's own). After it,
    every process of the group is killed, not only this one: a child it forked would outlive it and keep
    burning a CPU for the rest of the session; then the group is removed."""
    proc = subprocess.Popen([sys.executable, "-c", code], preexec_fn=preexec or group.preexec, **popen)  # noqa: PLW1509
    group.adopt(proc.pid)
    try:
        yield proc
    finally:
        for pid in group.pids():
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.kill()
        proc.wait(timeout=10)
        group.close()
