"""The interface between the harness and one implementation.

An *instance* (docs/design.md §4) is one independently started unit: a JVM, a node process (or cluster primary
with its workers), or an nginx + PHP-FPM pair. A driver turns an InstanceSpec into the processes to
launch; the harness (harness/engine/instances.py) starts them inside the instance's resource group, waits for
GET /ready, and stops them.
"""

from __future__ import annotations

import hashlib
import signal
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.console import UserError

LISTEN_BACKLOG = 4096
"""The accept backlog of every app (Jetty's accept queue, node's listen(), nginx's `listen ... backlog`),
capped by net.core.somaxconn: the driver opens up to 5000 connections, and a full queue drops handshakes
that then wait for a SYN retransmit (tests/apps/test_listen_backlog.py)."""

UNFAIR_KNOBS: dict[str, str] = {"BIDBENCH_UNFAIR_UNSORTED": "0", "BIDBENCH_UNFAIR_PER_FIELD": "0"}
"""Every app's deliberately unequal variants (contract/README.md), off by default."""


@dataclass(frozen=True)
class InstanceSpec:
    impl: str
    index: int
    port: int
    database_url: str
    run_dir: Path
    """Per-instance runtime directory (rendered configs, sockets, logs). Created by the harness."""
    knobs: dict[str, str] = field(default_factory=dict)
    """docs/design.md §2.5 variables and variant knobs, e.g. DB_POOL_SIZE, LOG_LEVEL, SERVER_TIMING, JAVA_HOME."""
    host: str = "127.0.0.1"

    def app_env(self) -> dict[str, str]:
        """The environment every app reads (contract/README.md, Configuration)."""
        return {"HOST": self.host, "PORT": str(self.port), "DATABASE_URL": self.database_url, **self.knobs}

    def app_process(self, name: str, argv: list[str], cwd: Path) -> ProcessLaunch:
        """An instance that is one process (java, node): the app's environment, its log in app.log."""
        return ProcessLaunch(
            name=name, argv=argv, env=self.app_env(), cwd=cwd, log_path=self.run_dir / "app.log"
        )


@dataclass(frozen=True)
class ProcessLaunch:
    """One OS process of an instance. All processes of an instance share its resource group."""

    name: str
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    log_path: Path
    stop_signal: int = signal.SIGTERM
    """The graceful-stop signal (nginx and PHP-FPM use SIGQUIT for graceful)."""


@dataclass(frozen=True)
class TestSuite:
    """One test runner of an app (JUnit, node --test, PHPUnit), run by `./bidbench test` in cwd with env and
    DATABASE_URL of a freshly reset database added. A non-zero exit fails; the last output lines matching
    summary_pattern are its summary line."""

    name: str
    argv: list[str]
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)
    summary_pattern: str = r"(?i)(tests?|pass|fail)"


class AppDriver(ABC):
    impl: str

    @abstractmethod
    def ensure_built(self) -> None:
        """Build or install dependencies if anything changed since the last build; otherwise return fast."""

    @abstractmethod
    def launches(self, spec: InstanceSpec) -> list[ProcessLaunch]:
        """The processes of one instance, in start order. May render config files into spec.run_dir."""

    @abstractmethod
    def effective_knobs(self, spec: InstanceSpec) -> dict[str, str]:
        """Every knob of this instance with its effective value (defaults filled in), for the manifest."""

    @abstractmethod
    def test_suites(self) -> list[TestSuite]:
        """The app's own test runners. ensure_built() has run before these are called."""

    def runtime_versions(self) -> dict[str, str]:
        """Runtime versions for the manifest (JDK vendor/version, node, PHP, nginx)."""
        return {}


def digest_files(files: Iterable[Path], root: Path) -> str:
    """sha256 over each file's path under root and its bytes: what a build stamp records."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def stamped(stamp: Path, digest: str) -> bool:
    """The last build (or install, or lint) was of these inputs."""
    return stamp.is_file() and stamp.read_text().strip() == digest


def write_stamp(stamp: Path, digest: str) -> None:
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(digest + "\n")


def on_path(found: str | None, missing: str) -> str:
    """A tool's path, or the user's error saying how to get it."""
    if found is None:
        raise UserError(missing)
    return found


def no_implied_knobs(given: Mapping[str, str]) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class AppAdapter:
    """Everything the harness knows about one implementation, declared once in its module: the harness asks
    these instead of comparing names, so a fourth language is its folder, one module declaring an
    AppAdapter, and its line in harness/apps/__init__.py (docs/adding-an-implementation.md)."""

    name: str
    """The name on the command line (--impl), in result folders and tables."""
    folder: Path
    """The app's own folder (`<name>-app/`): its sources, README, build files and tests."""
    driver_class: type[AppDriver]
    knobs: Mapping[str, str]
    """The language's own knobs with their defaults, on top of harness.apps.knobs.APP_KNOBS."""
    tools: tuple[str, ...]
    """The tools (harness/tools/toolchain.py TOOLS) needed to build, run and test the app."""
    pytest_files_in_own_suite: tuple[str, ...] = ()
    """Repository-relative pytest files one of the app's own test suites runs; the python suite of
    `./bidbench test` leaves them out so that they run once."""
    first_build_note: str = ""
    """Said before building, when the first build is slow enough that a silent wait would look stuck."""
    runs_on_jvm: bool = False
    """A JVM's heap after a full GC can be read after a stepped run (harness/apps/jvm.py)."""
    knobs_implied_by: Callable[[Mapping[str, str]], dict[str, str]] = no_implied_knobs
    """Knobs that follow from the given ones unless given too (PHP: a pool size is a child count)."""

    def driver(self) -> AppDriver:
        return self.driver_class()
