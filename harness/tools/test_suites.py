"""`./bidbench test`: every suite, against real parts, with one summary line per runner.

Order: the load driver's Go tests, the Python harness tests (pytest), each app's own tests (JUnit,
node --test, PHPUnit), then the conformance suite. Each runner's exit status counts; a runner that cannot start is a failure, never a skip.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass

from rich.table import Table

from harness import paths
from harness.console import console
from harness.tools import toolchain

TEST_SCALE = 1
TEST_SEED = 42


def suite_names() -> tuple[str, ...]:
    """The suites in their running order: each registered implementation's own tests between the harness's
    tests and the conformance suite."""
    from harness.apps import IMPLS

    return ("loadgen", "python", *IMPLS, "conformance")


@dataclass
class Outcome:
    suite: str
    ok: bool
    summary: str
    seconds: float


def _run_streaming(
    name: str, argv: list[str], cwd: os.PathLike[str] | str, env: dict[str, str], pattern: str
) -> Outcome:
    console.rule(f"[bold]{name}")
    console.print(f"$ {' '.join(argv)}  (in {cwd})")
    started = time.monotonic()
    lines: list[str] = []
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        )
    except OSError as exc:
        return Outcome(name, False, f"could not start: {exc}", 0.0)
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line.rstrip("\n"))
        print(line, end="", flush=True)
    code = proc.wait()
    matcher = re.compile(pattern)
    summary = next(
        (line for line in reversed(lines) if matcher.search(line)), lines[-1] if lines else "(no output)"
    )
    return Outcome(
        name,
        code == 0,
        summary.strip()[:160] + ("" if code == 0 else f" [exit {code}]"),
        time.monotonic() - started,
    )


def _prepare_database() -> str:
    from harness.db.ready import ensure_seeded, server

    ensure_seeded(TEST_SCALE, TEST_SEED)
    return server().url()


def _go_tests(env: dict[str, str]) -> Outcome:
    """`go test` of the load driver (pacing, mixes, seeding, histogram merge, coordinated omission)."""
    go = shutil.which("go") or "go"
    proxy = (
        subprocess.run([go, "env", "GOPROXY"], capture_output=True, text=True).stdout.split(",")[0].strip()
    )
    go_env = {**env, "GOPROXY": proxy or "https://proxy.golang.org", "GOFLAGS": "-mod=readonly"}
    return _run_streaming(
        "loadgen (go test)",
        [go, "test", "-count=1", "./..."],
        paths.LOADGEN,
        go_env,
        r"^(ok|FAIL|---)",
    )


def run_all(only: Iterable[str], pytest_args: list[str]) -> int:
    from harness.apps import IMPLS, adapters, driver

    suites = suite_names()
    wanted = list(only) or list(suites)
    unknown = [s for s in wanted if s not in suites]
    if unknown:
        console.print(f"[red]unknown suite(s) {', '.join(unknown)}; choose from {', '.join(suites)}[/]")
        return 2
    needs = (
        ["db", "load"]
        + (["report"] if "python" in wanted else [])
        + [impl for impl in IMPLS if impl in wanted or "conformance" in wanted or "python" in wanted]
    )
    toolchain.ensure(needs)
    database_url = _prepare_database()
    env = dict(
        os.environ,
        DATABASE_URL=database_url,
        BIDBENCH_TEST_SCALE=str(TEST_SCALE),
        BIDBENCH_TEST_SEED=str(TEST_SEED),
    )

    outcomes: list[Outcome] = []
    if "loadgen" in wanted:
        outcomes.append(_go_tests(env))
    # Build first: the harness tests start real instances of every app.
    for impl in IMPLS:
        if impl in wanted or "python" in wanted or "conformance" in wanted:
            console.print(f"building {impl} ...")
            driver(impl).ensure_built()
    if "python" in wanted:
        venv_python = paths.STATE / "venv" / "bin" / "python"
        # Pytest files an app's own suite runs (PHP through nginx) are not run twice.
        argv = [
            str(venv_python),
            "-m",
            "pytest",
            "-ra",
            "-q",
            *(f"--ignore={path}" for app in adapters() for path in app.pytest_files_in_own_suite),
            *pytest_args,
        ]
        outcomes.append(
            _run_streaming("python (pytest)", argv, paths.ROOT, env, r"(passed|failed|error|no tests ran)")
        )
    for impl in IMPLS:
        if impl not in wanted:
            continue
        app_driver = driver(impl)
        app_driver.ensure_built()
        for suite in app_driver.test_suites():
            from harness.db import seed as seeding
            from harness.db.ready import server

            seeding.reset(server())
            outcomes.append(
                _run_streaming(
                    f"{impl}: {suite.name}",
                    suite.argv,
                    suite.cwd,
                    {**env, **suite.env},
                    suite.summary_pattern,
                )
            )
    if "conformance" in wanted:
        from harness.conformance.runner import conformance_exit_code

        started = time.monotonic()
        console.rule("[bold]conformance")
        code, summary = conformance_exit_code(list(IMPLS))
        outcomes.append(Outcome("conformance", code == 0, summary, time.monotonic() - started))

    table = Table(title="bidbench test")
    table.add_column("suite")
    table.add_column("result")
    table.add_column("summary")
    table.add_column("time", justify="right")
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
