"""Keep every core awake while a side-by-side fresh start measures (docs/method.md, "Side by side").

On a virtual machine waking a halted core costs whichever process woke it, so a request's CPU would depend
on how busy the rest of the host happened to be. One spinning process per core under SCHED_IDLE (the
kernel's lowest class: it takes only CPU time nobody else wants) keeps the cores from halting; its CPU is
read from its own resource group and taken out of the host's busy share."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

from harness.engine.resources import Limits, ResourceGroup, new_group
from harness.engine.sizing import machine_cores

COMPONENT = "keep-awake"
GROUP_NAME = "bidbench-keep-awake"
MAX_S = 3600.0
"""A spinner ends by itself after this long, or as soon as the process that started it is gone."""

# Runs in each spinner: lowest class first, then spin until the parent is gone or the time is up.
_SPIN = """
import os, sys, time
os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
parent, deadline = int(sys.argv[1]), time.monotonic() + float(sys.argv[2])
while os.getppid() == parent and time.monotonic() < deadline:
    for _ in range(200000):
        pass
"""


class KeepAwake:
    """One SCHED_IDLE spinner per core, in `group`; `stop()` ends them all."""

    def __init__(self, group: ResourceGroup, log_path: Path, cores: int | None = None) -> None:
        self.group = group
        self.log_path = log_path
        self.cores = cores or machine_cores()
        self.procs: list[subprocess.Popen[bytes]] = []

    @classmethod
    def in_new_group(cls, backend: str, log_path: Path) -> KeepAwake | None:
        """Spinners in a group of the lowest priority beside bidbench's groups; None where the backend has
        no groups (a spinner in the harness's own group would take that group's share from the rest)."""
        if backend == "none":
            return None
        return cls(new_group(backend, GROUP_NAME, Limits(idle=True)), log_path)

    def start(self) -> KeepAwake:
        argv = [sys.executable, "-c", _SPIN, str(os.getpid()), str(MAX_S)]
        for _ in range(self.cores):
            self.procs.append(self.group.spawn(argv, Path.cwd(), dict(os.environ), self.log_path))
        return self

    def stop(self) -> None:
        """End every spinner; the group is left for its owner to close."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
        for proc in self.procs:
            with contextlib.suppress(subprocess.TimeoutExpired):  # SIGKILL does not wait on anything
                proc.wait(timeout=5)
        self.procs.clear()
