"""An implementation under test: something that serves the contract on a loopback port.

A real app is started through its driver (harness/apps) and harness.engine.instances.running_instance, pointed
at the suite's private database. Test fixtures (the negative controls) are targets too, so the very same
golden, differential and parity machinery runs against them.
"""

from __future__ import annotations

import os
import shutil
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager

from harness import paths
from harness.apps import driver
from harness.apps.base import InstanceSpec
from harness.conformance.dbstate import ConformanceDb
from harness.db.cluster import free_port
from harness.engine.instances import running_instance

BASE_KNOBS = {"LOG_LEVEL": "warn", "SERVER_TIMING": "1"}


class Target(ABC):
    name: str

    def prepare(self) -> None:  # noqa: B027 - optional hook, most fixtures need no build
        """Build once before any part runs (may be slow the first time)."""

    @abstractmethod
    @contextmanager
    def running(self, db: ConformanceDb, knobs: dict[str, str] | None = None) -> Iterator[str]:
        """Start on the private database with these extra knobs; yield the base URL; stop on exit."""


class AppTarget(Target):
    """One of the three real apps, one instance, default knobs plus the ones a part asks for."""

    def __init__(self, impl: str, label: str | None = None, knobs: dict[str, str] | None = None) -> None:
        self.impl = impl
        self.name = label or impl
        self.fixed_knobs = dict(knobs or {})
        self._last_tail = ""

    def prepare(self) -> None:
        driver(self.impl).ensure_built()

    @contextmanager
    def running(self, db: ConformanceDb, knobs: dict[str, str] | None = None) -> Iterator[str]:
        all_knobs = {**BASE_KNOBS, **self.fixed_knobs, **(knobs or {})}
        port = free_port()
        run_dir = paths.RUNTIME / "conformance" / f"{os.getpid()}-{self.name}".replace("+", "_")
        shutil.rmtree(run_dir, ignore_errors=True)
        spec = InstanceSpec(
            impl=self.impl, index=90, port=port, database_url=db.url, run_dir=run_dir, knobs=all_knobs
        )
        with running_instance(driver(self.impl), spec, backend="none") as instance:
            try:
                yield instance.base_url
            finally:
                self._last_tail = instance.log_tail(20)

    def log_tail(self) -> str:
        return self._last_tail
