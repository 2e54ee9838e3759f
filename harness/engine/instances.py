"""Start and stop app instances inside their resource groups (docs/design.md §4).

Each process joins the instance's resource group before exec; stopping sends the graceful signal first,
then SIGKILL to anything still in the group or its process groups. No orphans, ever.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from harness.apps.base import AppDriver, InstanceSpec, ProcessLaunch
from harness.console import UserError
from harness.engine.resources import Limits, ResourceGroup, new_group

BASE_ENV_KEYS = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER")
STOP_GRACE_S = 15.0
INSTANCE_MARKER = "BIDBENCH_INSTANCE_DIR"


class InstanceFailed(UserError):
    """An instance did not start or died; the message carries the tail of its log."""


@dataclass
class RunningInstance:
    spec: InstanceSpec
    group: ResourceGroup
    launches: list[ProcessLaunch]
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://{self.spec.host}:{self.spec.port}"

    @property
    def name(self) -> str:
        return f"{self.spec.impl}-{self.spec.index}"

    def exited(self) -> list[tuple[str, int]]:
        """Processes that have died, with their exit codes."""
        return [
            (launch.name, proc.returncode)
            for launch, proc in zip(self.launches, self.processes, strict=False)
            if proc.poll() is not None
        ]

    def _logs(self) -> Iterator[tuple[Path, list[str]]]:
        for launch in self.launches:
            if launch.log_path.exists():
                yield launch.log_path, launch.log_path.read_text(errors="replace").splitlines()

    def startup_line(self) -> str | None:
        return next(
            (line for _, text in self._logs() for line in text if line.startswith("bidbench-start ")), None
        )

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(f"--- {path} ---\n" + "\n".join(text[-lines:]) for path, text in self._logs())


READY_PATH = "/ready"
"""Answers 200 once the instance can serve its database work; /health answers without the database."""


def wait_ready(instance: RunningInstance, timeout_s: float, path: str = READY_PATH) -> None:
    deadline = time.monotonic() + timeout_s
    url = instance.base_url + path
    last_error = ""
    while time.monotonic() < deadline:
        dead = instance.exited()
        if dead:
            raise InstanceFailed(
                f"{instance.name} exited during start-up ({', '.join(f'{n} exit {c}' for n, c in dead)}).\n"
                + instance.log_tail()
            )
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except urllib.error.HTTPError as exc:
            last_error = f"HTTP {exc.code}"
        except (urllib.error.URLError, OSError) as exc:
            last_error = str(exc)
        time.sleep(0.2)
    raise InstanceFailed(
        f"{instance.name} was not ready within {timeout_s:.0f} s ({last_error}).\n" + instance.log_tail()
    )


def stop(instance: RunningInstance) -> list[int]:
    """Stop gracefully, then kill leftovers. Returns the pids that had to be SIGKILLed."""
    for launch, proc in reversed(list(zip(instance.launches, instance.processes, strict=False))):
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, launch.stop_signal)
    deadline = time.monotonic() + STOP_GRACE_S
    for proc in instance.processes:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
    leftovers = set(instance.group.pids())
    for proc in instance.processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            leftovers.update(child.pid for child in psutil.Process(proc.pid).children(recursive=True))
            if proc.poll() is None:
                leftovers.add(proc.pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    killed = sigkill(leftovers)
    for proc in instance.processes:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
    instance.group.close()
    return killed


def sigkill(pids: Iterable[int]) -> list[int]:
    """SIGKILL each pid; returns those that were still there to signal."""
    killed: list[int] = []
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
    return killed


def stop_group(proc: subprocess.Popen[bytes], first: int, wait_s: float = 5.0) -> None:
    """Send `first` to the process group proc leads and wait up to wait_s; then SIGKILL the group and wait
    again if it lingers. A group already gone is stopped."""
    if proc.poll() is not None:
        return
    for sig in (first, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(wait_s)
            return


def start(
    driver: AppDriver,
    spec: InstanceSpec,
    backend: str,
    limits: Limits,
    ready_timeout_s: float = 90,
    ready_path: str = READY_PATH,
) -> RunningInstance:
    spec.run_dir.mkdir(parents=True, exist_ok=True)
    group = new_group(backend, f"{spec.impl}-{spec.index}", limits)
    instance = RunningInstance(spec=spec, group=group, launches=driver.launches(spec))
    try:
        for launch in instance.launches:
            inherited = {k: os.environ[k] for k in BASE_ENV_KEYS if k in os.environ}
            # A marker every process of the instance inherits, so leftovers can be found by what they are.
            env = {**inherited, **launch.env, INSTANCE_MARKER: str(launch.log_path.parent)}
            instance.processes.append(group.spawn(launch.argv, launch.cwd, env, launch.log_path))
        wait_ready(instance, ready_timeout_s, ready_path)
    except BaseException:
        stop(instance)
        raise
    return instance


@contextmanager
def running_instance(
    driver: AppDriver,
    spec: InstanceSpec,
    backend: str = "none",
    limits: Limits | None = None,
    ready_timeout_s: float = 90,
    ready_path: str = READY_PATH,
) -> Iterator[RunningInstance]:
    """A started instance, stopped on leaving. `ready_path="/health"` starts one whose database cannot
    answer (a test of how it fails)."""
    instance = start(driver, spec, backend, limits or Limits(), ready_timeout_s, ready_path)
    try:
        yield instance
    finally:
        stop(instance)
