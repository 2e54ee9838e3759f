"""`./bidbench test`: every suite, against real parts, with one summary line per runner.

Order: the load driver's Go tests, the Python harness tests (pytest), each app's own tests (JUnit,
node --test, PHPUnit), then the conformance suite. Each runner's exit status counts; a runner that cannot start is a failure, never a skip.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass, replace

from rich.table import Column, Table

from harness import apps, paths
from harness.apps.base import TestSuite
from harness.console import console
from harness.db import seed as seeding
from harness.db.ready import ensure_seeded, server
from harness.tools import toolchain

TEST_SCALE = 1
TEST_SEED = 42
# After Ctrl-C, how long a runner gets to stop what it started (pytest tears its fixtures down, and the
# harness's sessions stop their instances) before its whole process group is killed.
STOP_GRACE_S = 60.0


class SuiteInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM/SIGHUP) while a suite ran; names the suite."""

    def __init__(self, suite: str) -> None:
        super().__init__(suite)
        self.suite = suite


PYTEST_WORKERS = 2
"""pytest-xdist workers for the whole harness suite: it mostly waits on real servers and fixed-length load
steps, so a second worker nearly halves its time even on two cores. Tests on the shared working database
stay on one worker, one at a time (tests/conftest.py groups them; pytest is pinned below 9.2, whose node
ids pytest-xdist 3.8 can no longer group by, pytest-dev/pytest-xdist#1386)."""


def _signal_group(proc: subprocess.Popen[str], signum: int) -> None:
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signum)


def _stop(proc: subprocess.Popen[str]) -> None:
    """Interrupts a runner as Ctrl-C would and waits for it to clean up (its output still shown, so a full
    pipe never blocks its teardown); then kills whatever of its process group is left. A second Ctrl-C
    skips the wait."""
    if proc.stdout is not None:
        stream = proc.stdout
        threading.Thread(
            target=lambda: [print(line, end="", flush=True) for line in stream], daemon=True
        ).start()
    try:
        _signal_group(proc, signal.SIGINT)
        proc.wait(timeout=STOP_GRACE_S)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        pass
    finally:
        _signal_group(proc, signal.SIGKILL)
        with suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)


def one_test_command(pytest_args: Sequence[str]) -> str:
    """The command that runs these pytest arguments with the test database prepared (README, "Testing"):
    what pytest run directly prints."""
    selected = [str(a) for a in pytest_args]
    separator = ["--"] if any(a.startswith("-") for a in selected) else []
    return shlex.join(["./bidbench", "test", "--only", "python", *separator, *selected])


def suite_names() -> tuple[str, ...]:
    """The suites in their running order: each registered implementation's own tests between the harness's
    tests and the conformance suite."""
    return ("loadgen", "python", *apps.IMPLS, "conformance")


@dataclass
class Outcome:
    suite: str
    ok: bool
    summary: str
    seconds: float


def _run_streaming(suite: TestSuite, env: dict[str, str]) -> Outcome:
    name = suite.name
    console.rule(f"[bold]{name}")
    console.print(f"$ {' '.join(suite.argv)}  (in {suite.cwd})", markup=False, highlight=False)
    started = time.monotonic()
    lines: list[str] = []
    try:
        proc = subprocess.Popen(
            suite.argv,
            cwd=suite.cwd,
            env={**env, **suite.env},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            # Its own process group: Ctrl-C reaches it through _stop, which also ends the stragglers.
            start_new_session=True,
        )
    except OSError as exc:
        return Outcome(name, False, f"could not start: {exc}", 0.0)
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            print(line, end="", flush=True)
        code = proc.wait()
    except KeyboardInterrupt:
        console.print(f"[yellow]interrupted: stopping {name} ...[/]")
        _stop(proc)
        raise SuiteInterrupted(name) from None
    matcher = re.compile(suite.summary_pattern)
    summary = next(
        (line for line in reversed(lines) if matcher.search(line)), lines[-1] if lines else "(no output)"
    )
    return Outcome(
        name,
        code == 0,
        summary.strip()[:160] + ("" if code == 0 else f" [exit {code}]"),
        time.monotonic() - started,
    )


def _go_tests() -> TestSuite:
    """`go test` of the load driver (pacing, mixes, seeding, histogram merge, coordinated omission)."""
    go = shutil.which("go") or "go"
    proxy = toolchain.output_of([go, "env", "GOPROXY"]).split(",")[0]
    go_env = {"GOPROXY": proxy or "https://proxy.golang.org", "GOFLAGS": "-mod=readonly"}
    return TestSuite(
        "loadgen (go test)", [go, "test", "-count=1", "./..."], paths.LOADGEN, go_env, r"^(ok|FAIL|---)"
    )


def run_all(only: Iterable[str], pytest_args: list[str]) -> int:
    """Runs the suites; Ctrl-C stops the one running, says which it was, and returns 130."""
    current = ["setup (tools, database, builds)"]
    try:
        return _run_all(only, pytest_args, current)
    except SuiteInterrupted as exc:
        console.print(f"[bold red]interrupted in suite {exc.suite}[/]")
    except KeyboardInterrupt:
        console.print(f"[bold red]interrupted in suite {current[0]}[/]")
    return 130


def _run_all(only: Iterable[str], pytest_args: list[str], current: list[str]) -> int:
    suites = suite_names()
    wanted = list(only) or list(suites)
    unknown = [s for s in wanted if s not in suites]
    if unknown:
        console.print(f"[red]unknown suite(s) {', '.join(unknown)}; choose from {', '.join(suites)}[/]")
        return 2
    needs = (
        ["db", "load"]
        + (["report"] if "python" in wanted else [])
        + [impl for impl in apps.IMPLS if impl in wanted or "conformance" in wanted or "python" in wanted]
    )
    toolchain.ensure(needs)
    ensure_seeded(TEST_SCALE, TEST_SEED)
    env = dict(
        os.environ,
        DATABASE_URL=server().url(),
        BIDBENCH_TEST_SCALE=str(TEST_SCALE),
        BIDBENCH_TEST_SEED=str(TEST_SEED),
    )

    outcomes: list[Outcome] = []
    if "loadgen" in wanted:
        outcomes.append(_run_streaming(_go_tests(), env))
    # Build first: the harness tests start real instances of every app. Selected tests (node ids, files) build
    # only what they start, when they start it (every run and fixture calls ensure_built), so one node test
    # never waits for a JVM build.
    selected = any(not arg.startswith("-") for arg in pytest_args)
    for impl in apps.IMPLS:
        if impl in wanted or "conformance" in wanted or ("python" in wanted and not selected):
            console.print(f"building {impl} ...")
            apps.driver(impl).ensure_built()
    if "python" in wanted:
        venv_python = paths.STATE / "venv" / "bin" / "python"
        # Pytest files an app's own suite runs (PHP through nginx) are not run twice.
        argv = [
            str(venv_python),
            "-m",
            "pytest",
            "-ra",
            # Once only: a second -q from the user's arguments would hide the count the summary shows.
            *([] if "-q" in pytest_args else ["-q"]),
            *([] if selected or PYTEST_WORKERS < 2 else ["-n", str(PYTEST_WORKERS), "--dist", "loadgroup"]),
            # The whole suite names its slowest tests, so its time can be kept in check from any run's log.
            *([] if selected else ["--durations=15"]),
            *(f"--ignore={path}" for app in apps.adapters() for path in app.pytest_files_in_own_suite),
            *pytest_args,
        ]
        pytest = TestSuite("python (pytest)", argv, paths.ROOT, {}, r"(passed|failed|error|no tests ran)")
        outcomes.append(_run_streaming(pytest, env))
    for impl in [i for i in apps.IMPLS if i in wanted]:
        app_driver = apps.driver(impl)
        app_driver.ensure_built()
        for suite in app_driver.test_suites():
            seeding.reset(server())
            outcomes.append(_run_streaming(replace(suite, name=f"{impl}: {suite.name}"), env))
    if "conformance" in wanted:
        from harness.conformance.runner import conformance_exit_code

        started = time.monotonic()
        current[0] = "conformance"
        console.rule("[bold]conformance")
        code, summary = conformance_exit_code(list(apps.IMPLS))
        outcomes.append(Outcome("conformance", code == 0, summary, time.monotonic() - started))

    table = Table("suite", "result", "summary", Column("time", justify="right"), title="bidbench test")
    for outcome in outcomes:
        table.add_row(
            outcome.suite,
            "[green]pass[/]" if outcome.ok else "[red]FAIL[/]",
            outcome.summary,
            f"{outcome.seconds:.0f} s",
        )
    console.print(table)
    failed = [o.suite for o in outcomes if not o.ok]
    if failed:
        console.print(f"[bold red]{len(failed)} suite(s) failed: {', '.join(failed)}[/]")
        return 1
    console.print(f"[bold green]all {len(outcomes)} suites passed[/]")
    return 0
