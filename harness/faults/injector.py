"""Carrying out a scenario's schedule during the measurement window, and recording what happened when:
`FaultHooks` (harness/engine/session.py's WindowHooks) runs the steps on a thread at their times, each
action an event (times, duration, outcome); whatever happens, `finished()` undoes the faults.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from harness.engine.instances import sigkill
from harness.faults.readyprobe import ReadyProbe
from harness.faults.scenarios import Scenario, Step

if TYPE_CHECKING:
    from harness.db.cluster import EmbeddedCluster
    from harness.engine.instances import RunningInstance
    from harness.engine.session import Session
    from harness.faults.toxiproxy import Toxiproxy

PROXY_NAME = "postgres"


@dataclass
class Event:
    action: str
    t_s: float
    """Seconds into the measurement window when the action began."""
    unix: float
    took_s: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)
    error: str = ""

    @property
    def done_s(self) -> float:
        return self.t_s + self.took_s

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "done_s": self.done_s}


def kill_instance(instance: RunningInstance) -> list[int]:
    """SIGKILL every process of an instance (process groups, then its resource group); the pids signalled."""
    killed: list[int] = []
    for proc in instance.processes:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
            killed.append(proc.pid)
    killed += sigkill(instance.group.pids())
    for proc in instance.processes:
        with contextlib.suppress(Exception):  # reaping is best effort; stop() tries again
            proc.wait(timeout=10)
    return sorted(set(killed))


def start_again(cluster: EmbeddedCluster) -> None:
    """Start a stopped embedded cluster on the port it had, as a real database server comes back. Not
    `cluster.up()`: its plain bind fails while closed connections sit in TIME_WAIT, and it would move the
    server to a port the running apps do not know (PostgreSQL binds with SO_REUSEADDR)."""
    if cluster.is_running():
        return
    stale = cluster.data_dir / "postmaster.pid"
    if stale.exists():
        stale.unlink()  # a killed server's pid file; a fast shutdown leaves none
    pg_ctl = [str(cluster.bindir / "pg_ctl"), "-D", str(cluster.data_dir), "-l", str(cluster.log_file)]
    done = cluster._run_as_server_user(  # noqa: SLF001 - the cluster's own way to run pg_ctl as its user
        [*pg_ctl, "-w", "-t", "60", "start"]
    )
    if done.returncode != 0:
        raise RuntimeError(f"pg_ctl start failed ({done.returncode}): {done.stderr.strip()[-500:]}")


class FaultHooks:
    """harness.engine.session.WindowHooks for one scenario (duck-typed, so run.py needs no import of this package)."""

    def __init__(self, scenario: Scenario, cluster: EmbeddedCluster | None = None) -> None:
        self.scenario = scenario
        self.cluster = cluster
        self.proxy: Toxiproxy | None = None
        self.events: list[Event] = []
        self.killed: set[str] = set()
        self.measure_start_unix: float | None = None
        self._session: Session | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.cleanup_errors: list[str] = []
        self.ready_probe: ReadyProbe | None = None
        """db-outage: /ready polled on every instance through the whole window (harness/faults/readyprobe.py)."""

    # ---- WindowHooks ------------------------------------------------------------------------------

    def started(self, session: Session, measure_start_unix: float) -> None:
        self._session = session
        self.measure_start_unix = measure_start_unix
        if self.scenario.name == "db-outage":
            self.ready_probe = ReadyProbe([instance.base_url for instance in session.instances])
            self.ready_probe.start()
        self._thread = threading.Thread(target=self._run, name="bidbench-faults", daemon=True)
        self._thread.start()

    def tolerated(self, instance: RunningInstance) -> bool:
        return instance.name in self.killed

    def finished(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=120)
        if self.ready_probe is not None:
            self.ready_probe.stop()
        self.restore()

    # ---- the schedule -----------------------------------------------------------------------------

    def _run(self) -> None:
        assert self.measure_start_unix is not None
        for step in self.scenario.steps:
            delay = self.measure_start_unix + step.at_s - time.time()
            if delay > 0 and self._stop.wait(delay):
                return
            self.apply(step)

    def now_s(self) -> float:
        return time.time() - (self.measure_start_unix or time.time())

    def apply(self, step: Step) -> Event:
        began = time.time()
        event = Event(step.action, self.now_s(), began, detail=dict(step.params))
        try:
            self._do(step, event)
        except Exception as exc:  # noqa: BLE001 - recorded in the timeline; the run goes on
            event.error = f"{type(exc).__name__}: {exc}"
        event.took_s = time.time() - began
        with self._lock:
            self.events.append(event)
        return event

    def _do(self, step: Step, event: Event) -> None:
        if step.action == "db-stop":
            assert self.cluster is not None, "db-outage needs the embedded cluster"
            event.detail["stopped"] = self.cluster.down()
        elif step.action == "db-start":
            assert self.cluster is not None
            start_again(self.cluster)
            self.cluster.wait_ready(30)
        elif step.action == "latency":
            assert self.proxy is not None, "slow-db needs toxiproxy"
            self.proxy.add_toxic(
                PROXY_NAME, "latency", "latency", {"latency": step.params["latency_ms"], "jitter": 0}
            )
        elif step.action == "reset":
            assert self.proxy is not None
            # Every connection is reset as soon as the client sends anything (new ones included).
            self.proxy.add_toxic(PROXY_NAME, "reset", "reset_peer", {"timeout": 0}, stream="upstream")
        elif step.action == "clear":
            assert self.proxy is not None
            self.proxy.clear(PROXY_NAME)
        elif step.action == "kill":
            assert self._session is not None
            instance = self._session.instances[int(step.params["instance"])]
            self.killed.add(instance.name)
            event.detail["instance_name"] = instance.name
            event.detail["pids"] = kill_instance(instance)
        elif step.action == "mark":
            pass
        else:
            raise ValueError(f"unknown fault action {step.action}")

    def restore(self) -> None:
        """Undo every fault: the database runs again, no toxic is left. Safe to call more than once."""
        if self.cluster is not None and not self.cluster.is_running():
            try:
                start_again(self.cluster)
                self.cluster.wait_ready(30)
                self.events.append(Event("db-start (cleanup)", self.now_s(), time.time()))
            except Exception as exc:  # noqa: BLE001 - reported; the caller checks the database afterwards
                self.cleanup_errors.append(f"could not start PostgreSQL again: {exc}")
        if self.proxy is not None:
            try:
                self.proxy.clear(PROXY_NAME)
            except Exception as exc:  # noqa: BLE001
                self.cleanup_errors.append(f"could not clear the toxics: {exc}")

    def first(self, action: str) -> Event | None:
        return next((e for e in self.events if e.action == action), None)
