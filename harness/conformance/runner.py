"""`./bidbench conformance`: run the parts against the implementations, print the table, exit non-zero on
any failure, optionally write the JSON report. `conformance_exit_code` is the same for `./bidbench test`.

Everything is bounded: a fixed number of requests per part, timeouts on every request, loopback only.
"""

from __future__ import annotations

import os
import shutil
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from harness import apps, paths
from harness.conformance.cases import CaseError, Session, load_sessions
from harness.conformance.concurrency import run_concurrency
from harness.conformance.dbstate import ConformanceDb, prepare
from harness.conformance.dbwork import run_dbwork
from harness.conformance.differential import run_differential
from harness.conformance.golden import golden_checks, run_golden
from harness.conformance.report import part_counts, print_dbwork, print_tables, summary_line, write_json
from harness.conformance.results import CheckResult, failed
from harness.conformance.schemathesis_check import contract_check, run_schemathesis
from harness.conformance.targets import AppTarget, Target
from harness.console import UserError, console
from harness.db import ready

PARTS = ("golden", "differential", "dbwork", "concurrency", "schemathesis")


def _drop_stale_run_dirs() -> None:
    """Run directories of earlier runs whose process is gone (kept after a failure, for the logs)."""
    for run_dir in (paths.RUNTIME / "conformance").glob("*-*"):
        pid = run_dir.name.split("-", 1)[0]
        if pid.isdigit() and not psutil.pid_exists(int(pid)):
            shutil.rmtree(run_dir, ignore_errors=True)


def run_targets(
    targets: list[Target],
    parts: list[str] | None = None,
    json_path: Path | None = None,
    db: ConformanceDb | None = None,
    sessions: list[Session] | None = None,
    quiet: bool = False,
) -> tuple[int, list[CheckResult]]:
    """Run the parts against these targets (real apps or fixtures). Returns (exit code, results)."""
    wanted = list(parts or PARTS)
    unknown = [p for p in wanted if p not in PARTS]
    if unknown:
        raise UserError(f"unknown part(s) {', '.join(unknown)}; choose from {', '.join(PARTS)}")
    if sessions is None and "golden" in wanted:
        try:
            sessions = load_sessions()
        except CaseError as exc:
            raise UserError(f"the golden cases do not load: {exc}") from exc
    own_db = db is None
    _drop_stale_run_dirs()
    if db is None:
        ready.ensure_up()
        db = prepare(ready.server())
    try:
        names = [t.name for t in targets]
        results: list[CheckResult] = []
        extra: dict[str, Any] = {"parts": wanted, "timings_s": {}}
        for target in targets:
            target.prepare()

        def say(text: str) -> None:
            if not quiet:
                console.print(text)

        def guarded(part: str, target_name: str, fn: Callable[[], list[CheckResult]]) -> None:
            started = time.monotonic()
            try:
                out = fn()
            except Exception as exc:  # a part that crashes is a failure of that part, never a silent skip
                detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
                out = [CheckResult(part, target_name, f"{part} ran to completion", False, [detail])]
                say(f"[red]{part} crashed for {target_name}:[/] {detail}")
            results.extend(out)
            extra["timings_s"][f"{part}:{target_name}"] = round(time.monotonic() - started, 2)

        if "golden" in wanted:
            db.reset()
            fresh = db.fingerprint()
            assert sessions is not None
            checks, cases = golden_checks(sessions)
            for target in targets:
                say(
                    f"golden: {target.name}, {checks} checks ({cases} cases, and the database after each of "
                    f"{len(sessions)} sessions)"
                )
                guarded("golden", target.name, lambda t=target: run_golden(t, db, sessions, fresh))
        for part, run_all in (("differential", run_differential), ("dbwork", run_dbwork)):
            if part in wanted:
                say(f"{part}: {', '.join(names)}")
                guarded(part, "all", lambda run_all=run_all: run_all(targets, db, extra))
        if "concurrency" in wanted:
            for target in targets:
                say(f"concurrency: {target.name}")
                guarded("concurrency", target.name, lambda t=target: run_concurrency(t, db))
        if "schemathesis" in wanted:
            guarded("schemathesis", "contract", contract_check)
            for target in targets:
                say(f"schemathesis: {target.name}")
                guarded("schemathesis", target.name, lambda t=target: run_schemathesis(t, db, extra))

        names = _names(targets, results)
        if not quiet:
            print_tables(results, names, verbose=os.environ.get("BIDBENCH_CONFORMANCE_VERBOSE", "") == "1")
            print_dbwork(extra, [t.name for t in targets])
            console.print(part_counts(results, names))
            console.print(summary_line(results, names))
        if json_path is not None:
            write_json(json_path, results, names, extra)
        code = 1 if failed(results) else 0
        if code == 0:
            for run_dir in (paths.RUNTIME / "conformance").glob(f"{os.getpid()}-*"):
                shutil.rmtree(run_dir, ignore_errors=True)
        return code, results
    finally:
        if own_db:
            db.drop()


def _names(targets: list[Target], results: list[CheckResult]) -> list[str]:
    """The report's columns: the targets, and `contract` when the contract itself was checked."""
    return [t.name for t in targets] + (["contract"] if any(r.target == "contract" for r in results) else [])


def target_label(impl: str, knobs: dict[str, str] | None) -> str:
    """`java`, or `java+JAVA_POOL=driver` when the app runs with extra knobs (the tables name the variant)."""
    return "+".join([impl, *(f"{k}={v}" for k, v in sorted((knobs or {}).items()))])


def run_conformance(
    impls: list[str], parts: list[str] | None, json_path: Path | None, knobs: dict[str, str] | None = None
) -> int:
    """Run the parts against the real apps. `knobs` go to every app (a variant such as JAVA_POOL=driver);
    the knobs a golden session declares still take precedence for that session."""
    unknown = [i for i in impls if i not in apps.IMPLS]
    if unknown:
        raise UserError(
            f"unknown implementation(s) {', '.join(unknown)}; choose from {', '.join(apps.IMPLS)}"
        )
    targets: list[Target] = [AppTarget(impl, target_label(impl, knobs), knobs) for impl in impls]
    code, _ = run_targets(targets, parts, json_path)
    return code


def conformance_exit_code(impls: list[str]) -> tuple[int, str]:
    targets: list[Target] = [AppTarget(impl) for impl in impls if impl in apps.IMPLS]
    try:
        code, results = run_targets(targets, None, None)
    except UserError as exc:
        return 1, f"conformance could not run: {exc}"
    return code, summary_line(results, _names(targets, results))
