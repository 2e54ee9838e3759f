"""The external check: Schemathesis (pinned 4.32.5) against contract/openapi.yaml, per target.

`schemathesis run` with a fixed seed, a bounded `--max-examples` per operation, one worker, and the
checks `not_a_server_error` and `response_schema_conformance`; no example database (nothing is written
outside the run directory). The number of requests it sent is read from its HAR report.

If contract/openapi.yaml does not parse as YAML, the suite feeds Schemathesis a repaired copy (plain
`description:` scalars that contain ": " are quoted; nothing else changes) and reports the problem as a
failed check of its own, so the contract gets fixed rather than silently worked around.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from harness import paths
from harness.conformance.dbstate import ConformanceDb
from harness.conformance.results import CheckResult, checked
from harness.conformance.targets import Target

PART = "schemathesis"
MAX_EXAMPLES = 25
SEED = 6
TIMEOUT_S = 240
CHECKS = "not_a_server_error,response_schema_conformance"
_PLAIN_DESCRIPTION = re.compile(r"^(\s*description: )([^\"'|>{\[].*: .*)$")


def schema_for_schemathesis(run_dir: Path) -> tuple[Path, list[str]]:
    """The schema file to test against, and the problems found in contract/openapi.yaml on the way."""
    text = paths.OPENAPI.read_text(encoding="utf-8")
    try:
        yaml.safe_load(text)
        return paths.OPENAPI, []
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = f"contract/openapi.yaml is not valid YAML{where}: {getattr(exc, 'problem', exc)}"
    repaired_lines = []
    for line in text.splitlines():
        m = _PLAIN_DESCRIPTION.match(line)
        repaired_lines.append(m.group(1) + json.dumps(m.group(2)) if m else line)
    repaired = "\n".join(repaired_lines) + "\n"
    doc = yaml.safe_load(repaired)  # raises if the repair was not enough: then there is nothing to test
    run_dir.mkdir(parents=True, exist_ok=True)
    out = run_dir / "openapi.repaired.json"
    out.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return out, [problem + " (Schemathesis ran on a repaired copy; fix the contract)"]


def contract_check() -> list[CheckResult]:
    """A check of the contract itself (target `contract`): openapi.yaml must parse."""
    _, problems = schema_for_schemathesis(paths.RUNTIME / "conformance" / f"{os.getpid()}-schema")
    return [checked(PART, "contract", "contract/openapi.yaml parses as YAML", problems)]


def _schemathesis_binary() -> str:
    candidate = Path(sys.executable).with_name("schemathesis")
    return str(candidate) if candidate.exists() else "schemathesis"


def _count_requests(report_dir: Path) -> int:
    total = 0
    for har in report_dir.glob("*.json"):
        try:
            doc = json.loads(har.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        total += len(doc.get("log", {}).get("entries", []))
    return total


def _failure_lines(output: str) -> list[str]:
    lines = [line.rstrip() for line in output.splitlines()]
    keep: list[str] = []
    for i, line in enumerate(lines):
        if (
            line.lstrip().startswith(("_____", "- ", "[", "curl "))
            or "Server error" in line
            or "schema" in line.lower()
        ):
            keep.append(line.strip())
        if len(keep) >= 40:
            break
        if line.startswith("=") and "FAILURES" in line:
            keep.extend(x.strip() for x in lines[i + 1 : i + 40] if x.strip())
            break
    return keep


def run_schemathesis(target: Target, db: ConformanceDb, extra: dict[str, Any]) -> list[CheckResult]:
    run_dir = paths.RUNTIME / "conformance" / f"{os.getpid()}-schemathesis-{target.name}".replace("+", "_")
    report_dir = run_dir / "report"
    schema, _ = schema_for_schemathesis(run_dir)
    db.reset()
    started = time.monotonic()
    with target.running(db) as base_url:
        argv = [
            _schemathesis_binary(), "run", str(schema),
            "--url", base_url,
            "--checks", CHECKS,
            "--max-examples", str(MAX_EXAMPLES),
            "--seed", str(SEED),
            "--workers", "1",
            "--request-timeout", "10",
            "--generation-database", "none",
            "--report", "har",
            "--report-dir", str(report_dir),
            "--no-color",
        ]  # fmt: skip
        run_dir.mkdir(parents=True, exist_ok=True)
        try:
            proc = subprocess.run(
                argv, cwd=run_dir, capture_output=True, text=True, timeout=TIMEOUT_S,
                env={**os.environ, "SCHEMATHESIS_HOOKS": "", "NO_COLOR": "1"},
            )  # fmt: skip
            output = proc.stdout + proc.stderr
            code = proc.returncode
        except subprocess.TimeoutExpired as exc:
            output = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else str(exc.stdout or "")
            code = -1
            output += f"\n(timed out after {TIMEOUT_S} s)"
    seconds = time.monotonic() - started
    (run_dir / "output.txt").write_text(output, encoding="utf-8")
    requests = _count_requests(report_dir)
    problems: list[str] = []
    if code != 0:
        problems.append(f"schemathesis exit {code}; full output in {run_dir / 'output.txt'}")
        problems.extend(_failure_lines(output))
    if requests == 0:
        problems.append("schemathesis sent no requests")
    summary = next(
        (line.strip() for line in reversed(output.splitlines()) if re.search(r"\d+ (passed|failed)", line)),
        "",
    )
    check = f"schemathesis ({CHECKS}; max {MAX_EXAMPLES} examples per operation, seed {SEED})"
    detail = {"requests": requests, "exit": code, "summary": summary}
    extra.setdefault("schemathesis_requests", {})[target.name] = requests
    return [checked(PART, target.name, check, problems, detail=detail, seconds=seconds)]
