"""PostgreSQL's CPU, attributed to the groups of a side-by-side fresh start (docs/method.md, "Side by side").

Each backend serves one client connection: the kernel's socket table says which process holds the client
end, and the resource groups which group that process is in. This needs no change to any app and works
for any pool, persistent PHP connections included.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import psutil

from harness.engine.resources import ReadOnlyGroup

REMAP_EVERY_S = 2.0


def _tcp_table() -> dict[int, tuple[int, int]]:
    """Socket inode -> (local port, remote port) of every TCP socket, read once from /proc/net/tcp{,6}
    (psutil reads these tables again for every process it is asked about, at a cost the groups share)."""
    table: dict[int, tuple[int, int]] = {}
    for name in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/net/{name}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10:
                continue
            local, remote, inode = fields[1], fields[2], int(fields[9])
            table[inode] = (int(local.rsplit(":", 1)[1], 16), int(remote.rsplit(":", 1)[1], 16))
    return table


def _socket_inodes(pid: int) -> list[int]:
    """The inodes of a process's sockets, from its file descriptors; none once it is gone."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return []
    inodes = []
    for fd in fds:
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:["):
                inodes.append(int(target[8:-1]))
    return inodes


def _tcp(pid: int, table: Mapping[int, tuple[int, int]]) -> list[tuple[int, int]]:
    """(local port, remote port) of a process's TCP connections."""
    return [table[inode] for inode in _socket_inodes(pid) if inode in table]


def server_processes() -> list[int]:
    """Every process named like a PostgreSQL server process: the backends of whichever cluster listens
    on the port asked about (an external or private cluster too, not only the embedded one). The port
    decides which are ours; the name only keeps the socket reads to the server's processes."""
    return [p.pid for p in psutil.process_iter(["name"]) if p.info.get("name") in ("postgres", "postmaster")]


def backend_owners(
    pg_port: int, group_pids: Mapping[str, set[int]], backend_pids: Iterable[int]
) -> dict[int, str]:
    """Backend PID -> group label, for every connection to `pg_port` whose client end a group's process
    holds. Only the groups' processes and PostgreSQL's are looked at (a whole-machine socket scan takes
    seconds on a busy host, and is none of this run's business); other clients are left out."""
    table = _tcp_table()
    client_ports = {
        local: label
        for label, pids in group_pids.items()
        for pid in pids
        for local, remote in _tcp(pid, table)
        if remote == pg_port
    }
    owners = {}
    for backend in backend_pids:
        for local, remote in _tcp(backend, table):
            if local == pg_port and remote in client_ports:
                owners[backend] = client_ports[remote]
    return owners


def backend_cpu_seconds(pid: int) -> float | None:
    """A process's CPU time in seconds: schedstat's nanoseconds, else psutil's ticks; None once gone."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
    try:
        times = psutil.Process(pid).cpu_times()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None
    return times.user + times.system


class BackendLedger:
    """Cumulative backend CPU per group: a backend's last reading stays in its group's total after it
    exits, and a new one counts from its birth. Backends are mapped to groups by a thread of its own,
    every REMAP_EVERY_S: reading the socket tables inside the sampler's reads would move a step's edges."""

    def __init__(
        self,
        pg_port: int,
        group_pids: Callable[[], Mapping[str, set[int]]],
        backend_pids: Callable[[], Iterable[int]],
        owners: Callable[[int, Mapping[str, set[int]], Iterable[int]], dict[int, str]] = backend_owners,
        cpu_of: Callable[[int], float | None] = backend_cpu_seconds,
    ) -> None:
        self.pg_port = pg_port
        self.group_pids = group_pids
        self.backend_pids = backend_pids
        self._owners_of = owners
        self._cpu_of = cpu_of
        self._owner: dict[int, str] = {}
        self._last: dict[int, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def refresh(self) -> None:
        """Map the backends now (new connections join; a known backend keeps its group)."""
        found = self._owners_of(self.pg_port, self.group_pids(), self.backend_pids())
        with self._lock:
            for pid, label in found.items():
                self._owner.setdefault(pid, label)

    def start(self) -> None:
        self.refresh()

        def loop() -> None:
            while not self._stop.wait(REMAP_EVERY_S):
                self.refresh()

        self._thread = threading.Thread(target=loop, name="bidbench-pg-backends", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def totals(self) -> dict[str, float]:
        with self._lock:
            owners = dict(self._owner)
        readings = {pid: self._cpu_of(pid) for pid in owners}
        with self._lock:
            for pid, seconds in readings.items():
                if seconds is not None:
                    self._last[pid] = max(seconds, self._last.get(pid, 0.0))
            totals: dict[str, float] = {}
            for pid, label in owners.items():
                totals[label] = totals.get(label, 0.0) + self._last.get(pid, 0.0)
            return totals

    def backends(self) -> dict[str, int]:
        with self._lock:
            return dict(Counter(self._owner.values()))


class BackendShare(ReadOnlyGroup):
    """One group's share of PostgreSQL, as a component the sampler reads like any resource group."""

    backend = "pg-backends"
    share_of_another = True

    def __init__(self, label: str, ledger: BackendLedger) -> None:
        super().__init__(f"postgres/{label}")
        self.label = label
        self.ledger = ledger

    def cpu_seconds(self) -> float:
        return self.ledger.totals().get(self.label, 0.0)
