"""PostgreSQL's CPU, attributed to the groups of a side-by-side fresh start (docs/method.md, "Side by side").

One server serves every group at once, so its CPU has to be split by who asked. Each backend serves one
client connection; the kernel's socket table says which process holds the client end, and the resource
groups say which group that process belongs to. Matching the two ends of each loopback connection needs
no change to any app (no `application_name` to set, so the three apps stay identical) and works for any
pool, persistent PHP connections included. A backend's CPU comes from /proc/PID/schedstat (nanoseconds
on the CPU), or psutil's tick-based times where schedstat is missing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import psutil

from harness.engine.resources import Limits, ResourceGroup, Usage

REMAP_EVERY_S = 0.5


def backend_owners(pg_port: int, group_pids: Mapping[str, set[int]]) -> dict[int, str]:
    """Backend PID -> group label, for every TCP connection to `pg_port` whose client end a group's
    process holds. Connections from anything else (the harness, psql) are left out."""
    owner_of_pid = {pid: label for label, pids in group_pids.items() for pid in pids}
    client_ports: dict[int, str] = {}
    backend_by_client_port: dict[int, int] = {}
    for conn in psutil.net_connections(kind="tcp"):
        if conn.pid is None or not conn.laddr or not conn.raddr:
            continue
        if conn.raddr.port == pg_port and conn.pid in owner_of_pid:
            client_ports[conn.laddr.port] = owner_of_pid[conn.pid]
        elif conn.laddr.port == pg_port:
            backend_by_client_port[conn.raddr.port] = conn.pid
    return {
        backend: client_ports[port]
        for port, backend in backend_by_client_port.items()
        if port in client_ports
    }


def backend_cpu_seconds(pid: int) -> float | None:
    """A process's CPU time in seconds: schedstat's nanoseconds, else psutil's ticks; None once gone."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        pass
    try:
        times = psutil.Process(pid).cpu_times()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None
    return times.user + times.system


class BackendLedger:
    """Cumulative backend CPU per group. A backend's last reading stays in its group's total after it
    exits, so each total only grows; a backend seen for the first time counts from its birth (its whole
    CPU so far), which is right for connections opened inside a measured step."""

    def __init__(
        self,
        pg_port: int,
        group_pids: Callable[[], Mapping[str, set[int]]],
        owners: Callable[[int, Mapping[str, set[int]]], dict[int, str]] = backend_owners,
        cpu_of: Callable[[int], float | None] = backend_cpu_seconds,
    ) -> None:
        self.pg_port = pg_port
        self.group_pids = group_pids
        self._owners_of = owners
        self._cpu_of = cpu_of
        self._owner: dict[int, str] = {}
        self._last: dict[int, float] = {}
        self._mapped_at = -1e9
        self._lock = threading.Lock()

    def _remap(self) -> None:
        now = time.monotonic()
        if now - self._mapped_at < REMAP_EVERY_S:
            return
        self._mapped_at = now
        for pid, label in self._owners_of(self.pg_port, self.group_pids()).items():
            self._owner.setdefault(pid, label)

    def totals(self) -> dict[str, float]:
        with self._lock:
            self._remap()
            for pid in self._owner:
                seconds = self._cpu_of(pid)
                if seconds is not None:
                    self._last[pid] = max(seconds, self._last.get(pid, 0.0))
            totals: dict[str, float] = {}
            for pid, label in self._owner.items():
                totals[label] = totals.get(label, 0.0) + self._last.get(pid, 0.0)
            return totals

    def backends(self) -> dict[str, int]:
        with self._lock:
            counts: dict[str, int] = {}
            for label in self._owner.values():
                counts[label] = counts.get(label, 0) + 1
            return counts


class BackendShare(ResourceGroup):
    """One group's share of PostgreSQL, as a component the sampler reads like any resource group."""

    backend = "pg-backends"
    exact_cpu = True
    enforces_limit = False

    def __init__(self, label: str, ledger: BackendLedger) -> None:
        super().__init__(f"postgres/{label}", Limits())
        self.label = label
        self.ledger = ledger

    def preexec(self) -> None:  # pragma: no cover - nothing is ever started in it
        raise RuntimeError("a share of PostgreSQL's backends starts no process")

    def pids(self) -> list[int]:
        return []

    def cpu_seconds(self) -> float:
        return self.ledger.totals().get(self.label, 0.0)

    def usage(self) -> Usage:
        return Usage(self.cpu_seconds(), 0, 0, 0, ())
