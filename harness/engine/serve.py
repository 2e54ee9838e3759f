"""`./bidbench serve`: start the apps exactly as measured runs do (harness/engine/instances.py), then leave
them running for a person or an outside tool to use (issue #32). Nothing is measured. On SIGINT/SIGTERM it
stops every process it started, and the database too if (and only if) it started it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import psutil

from harness import paths
from harness.apps import IMPLS
from harness.apps import adapter as app_adapter
from harness.apps import driver as app_driver
from harness.apps.base import InstanceSpec
from harness.console import UserError, console
from harness.db import ready as db_ready
from harness.db.cluster import free_port, port_is_free
from harness.db.target import external_url
from harness.engine.instances import INSTANCE_MARKER, RunningInstance, sigkill, start, stop
from harness.engine.resources import Limits, describe_backend, detect_backend
from harness.engine.session import RunPlan, _instance_knobs
from harness.tools import toolchain

LOCK_PATH = paths.STATE / "serve.lock"
DEFAULT_READY_TIMEOUT_S = 180.0
"""Generous: a JVM under half a CPU on a busy 2-core machine took tens of seconds to answer /ready."""
WATCH_INTERVAL_S = 1.0
LOG_TAIL_LINES = 15


@dataclass(frozen=True)
class ServeOptions:
    impls: list[str]
    cpus: float | None
    """CPU limit per app in cores; None = no limit."""
    knobs: dict[str, str] = field(default_factory=dict)
    reset: bool = False
    json: bool = False
    scale: int = 1
    seed: int = 42
    port: int | None = None
    """Base port: java gets it, node +1, php +2 (whichever of them run). None = free ports."""
    ready_timeout_s: float = DEFAULT_READY_TIMEOUT_S


class ServeLock:
    """A lock file holding the serving process's pid (and, once ready, its URLs).

    A lock whose pid is gone, or now belongs to a process started after the lock was written (a reused
    pid) or to something other than a serve, is stale: a serve killed with SIGKILL cannot remove its own."""

    def __init__(self, path: Path = LOCK_PATH) -> None:
        self.path = path

    def __enter__(self) -> ServeLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(3):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                holder = self._live_holder()
                if holder is not None:
                    raise UserError(self._busy_message(holder)) from None
                console.print(f"serve: removed a stale lock {self.path} (its serve is gone)")
                self.path.unlink(missing_ok=True)
                continue
            with os.fdopen(fd, "w") as handle:
                json.dump({"pid": os.getpid()}, handle)
            return self
        raise UserError(f"could not take the lock {self.path}; remove it if no ./bidbench serve is running")

    def __exit__(self, *exc: object) -> None:
        if self._read().get("pid") == os.getpid():
            self.path.unlink(missing_ok=True)

    def record(self, urls: dict[str, str]) -> None:
        """Add the URLs, so that a second serve can say where the first one's apps are."""
        self.path.write_text(json.dumps({"pid": os.getpid(), "urls": urls}))

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _live_holder(self) -> dict[str, Any] | None:
        data = self._read()
        if not isinstance(data.get("pid"), int):
            # Half-written by a serve that is starting this very moment, or garbage: look again shortly.
            time.sleep(0.5)
            data = self._read()
        pid = data.get("pid")
        if not isinstance(pid, int):
            return None
        try:
            proc = psutil.Process(pid)
            written = self.path.stat().st_mtime
            if proc.create_time() > written + 1 or "serve" not in proc.cmdline():
                return None
        except (psutil.NoSuchProcess, psutil.ZombieProcess, FileNotFoundError):
            return None
        except psutil.AccessDenied:
            pass  # another user's live process: assume it is the serve that wrote the lock
        return data

    def _busy_message(self, holder: dict[str, Any]) -> str:
        urls = holder.get("urls") or {}
        where = (
            " It serves " + ", ".join(f"{impl} at {url}" for impl, url in urls.items()) + "."
            if urls
            else " (it is still starting)."
        )
        return (
            f"another ./bidbench serve is running (pid {holder['pid']}).{where} "
            f"Use its apps, or stop it first (Ctrl-C in its terminal, or kill -TERM {holder['pid']})."
        )


def plan_ports(impls: list[str], base: int | None) -> dict[str, int]:
    """Fixed ports from --port (java +0, node +1, php +2, so each app keeps its port whichever others run),
    each checked before anything starts; otherwise a free port each, as measured runs take."""
    if base is None:
        return {impl: free_port() for impl in impls}
    ports = {impl: base + IMPLS.index(impl) for impl in impls}
    for impl, port in ports.items():
        if not 1 <= port <= 65535:
            raise UserError(f"--port {base} gives {impl} port {port}, outside 1-65535")
        if not port_is_free(port):
            raise UserError(
                f"port {port} on 127.0.0.1 (for {impl}: --port {base} + {IMPLS.index(impl)}) is in use"
                f"{_port_owner(port)}. Pick another --port, or leave --port out to take free ports."
            )
    return ports


def _port_owner(port: int) -> str:
    with contextlib.suppress(psutil.AccessDenied, psutil.NoSuchProcess, OSError):
        for conn in psutil.net_connections(kind="tcp"):
            if conn.laddr and conn.laddr.port == port and conn.status == psutil.CONN_LISTEN and conn.pid:
                return f" by pid {conn.pid} ({psutil.Process(conn.pid).name()})"
    return ""


@contextmanager
def stdout_reserved(reserve: bool) -> Iterator[TextIO]:
    """With --json, stdout carries one JSON line and nothing else. Everything else that would reach file
    descriptor 1 (the console, a build tool's output, a library's print) is sent to stderr instead; the
    yielded stream writes to the real stdout."""
    if not reserve:
        yield sys.stdout
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    real = os.fdopen(os.dup(saved), "w")
    try:
        yield real
    finally:
        real.close()
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def start_database() -> bool:
    """The embedded server up; returns whether serve started it (then serve stops it on exit; a server
    that was already up, or an external one, is left as it was)."""
    if external_url():
        return False
    toolchain.ensure(["db"])
    # up() itself says whether it started the server: checking beforehand could race with another command
    # starting it meanwhile, and serve would then stop a server others use.
    report = db_ready.embedded_cluster().up()
    for message in report.messages if report.started else []:
        console.print(f"db: {message}")
    return report.started


@dataclass
class Served:
    impl: str
    instance: RunningInstance
    config: dict[str, str]


def start_apps(options: ServeOptions, ports: dict[str, int], backend: str, served: list[Served]) -> None:
    """Start each app as a measured run does (same knobs, resource group, launch), appending to `served`
    as each one answers /ready, so the caller can stop whatever started if a later one fails."""
    database_url = db_ready.server().url()
    run_root = run_root_dir()
    for impl in options.impls:
        driver = app_driver(impl)
        knobs = _instance_knobs(RunPlan(impl=impl, knobs=options.knobs))
        spec = InstanceSpec(
            impl=impl,
            index=0,
            port=ports[impl],
            database_url=database_url,
            run_dir=run_root / impl,
            knobs=knobs,
        )
        console.print(f"serve: starting {impl} on {spec.host}:{spec.port} ...")
        instance = start(driver, spec, backend, Limits(cpus=options.cpus), options.ready_timeout_s)
        served.append(Served(impl, instance, driver.effective_knobs(spec)))


def run_root_dir() -> Path:
    """Rendered configs, sockets and logs of this serve's apps; kept afterwards for their logs."""
    return paths.RUNTIME / f"serve-{os.getpid()}"


def leftovers(run_root: Path) -> list[psutil.Process]:
    """Live processes of this serve's apps, found by the marker every process of an instance inherits
    (its run directory), so a reused pid is never taken for one of ours. nginx and PHP-FPM clear their
    environment; their processes are found by their resource group, which stop() empties."""
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            marker = proc.environ().get(INSTANCE_MARKER, "")
            if marker.startswith(str(run_root) + os.sep) and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
    return found


def describe(entry: Served, cpus: float | None, backend: str) -> str:
    pids = ",".join(str(pid) for pid in sorted(entry.instance.group.pids()))
    limit = f"{cpus:g}" if cpus else "none"
    knobs = " ".join(f"{key}={shlex.quote(value)}" for key, value in sorted(entry.config.items()))
    return f"{entry.impl:<4}  {entry.instance.base_url}  pids {pids}  cpus {limit} ({backend})  {knobs}"


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit {code}"


def watch(served: list[Served]) -> None:
    """Until SIGINT/SIGTERM (KeyboardInterrupt): report an app that dies, stop its leftovers, serve on."""
    while served:
        time.sleep(WATCH_INTERVAL_S)
        for entry in list(served):
            dead = entry.instance.exited()
            if not dead:
                continue
            served.remove(entry)
            how = ", ".join(f"{name} {_exit_text(code)}" for name, code in dead)
            still = ", ".join(e.impl for e in served) or "nothing"
            console.print(
                f"serve: {entry.impl} died ({how}); still serving {still}. "
                f"Last lines of its log:\n{entry.instance.log_tail(LOG_TAIL_LINES)}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
            stop(entry.instance)  # the rest of its group (e.g. PHP-FPM when nginx died) goes too
    raise UserError("every app has died; nothing left to serve")


@contextmanager
def signals_deferred() -> Iterator[None]:
    """While stopping, a second Ctrl-C must not cut the clean-up short and leave orphans."""

    def note(signum: int, _frame: object) -> None:
        console.print(f"serve: still stopping (signal {signum} ignored until everything has stopped)")

    previous = {s: signal.signal(s, note) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def serve(options: ServeOptions) -> int:
    """Start, print where, serve until SIGINT/SIGTERM, stop everything. Returns the exit code."""
    with stdout_reserved(options.json) as out, ServeLock() as lock:
        ports = plan_ports(options.impls, options.port)
        toolchain.ensure(list(options.impls))
        db_started = False
        served: list[Served] = []
        interrupted = ready = False
        try:
            db_started = start_database()
            # Without --reset the working data is left as it is: what a student changed stays between serves.
            db_ready.ensure_template(
                db_ready.server(), options.scale, options.seed, restore=options.reset, announce=True
            )
            notes = [app_adapter(impl).first_build_note for impl in options.impls]
            slow = "".join(f" ({note})" for note in notes if note)
            console.print(f"serve: building what changed of {', '.join(options.impls)}{slow} ...")
            for impl in options.impls:
                app_driver(impl).ensure_built()
            backend = detect_backend()
            if backend == "none":
                console.print(f"serve: note: {describe_backend(backend)}")
            start_apps(options, ports, backend, served)
            urls = {entry.impl: entry.instance.base_url for entry in served}
            lock.record(urls)
            for entry in served:
                console.print(describe(entry, options.cpus, backend), markup=False, soft_wrap=True)
            first = next(iter(urls.values()))
            console.print(
                f"serve: ready. Try: curl -s {first}/categories   Logs: {run_root_dir()}/   "
                f"Stop: Ctrl-C or kill -TERM {os.getpid()}",
                markup=False,
                soft_wrap=True,
            )
            # The JSON line last: a script may send SIGTERM the moment it has read it, and that is an
            # ordinary stop (exit 0), not an interrupted start; and the human lines are complete by then.
            ready = True
            if options.json:
                out.write(json.dumps(urls) + "\n")
                out.flush()
            watch(served)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            with signals_deferred():
                if served:
                    console.print(f"serve: stopping {', '.join(e.impl for e in served)} ...")
                for entry in reversed(served):
                    stop(entry.instance)
                left = leftovers(run_root_dir())
                if left:
                    console.print(
                        "serve: killed processes that outlived their app's stop: "
                        + ", ".join(str(proc.pid) for proc in left)
                    )
                    sigkill(proc.pid for proc in left)
                if db_started and db_ready.embedded_cluster().down():
                    console.print("serve: stopped the database serve had started")
        if interrupted and not ready:
            console.print("serve: interrupted while starting; stopped whatever had started")
            raise KeyboardInterrupt  # the CLI exits 130, as for any interrupted command
        console.print("serve: stopped; nothing left running")
        return 0
