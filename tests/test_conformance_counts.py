"""Every count conformance prints is a count of one named thing, and the lines agree: the golden line and
the golden table's "checks passed" row give the same number of checks, and the summary's per-target checks are
the sum over the parts (the golden line once said 393 cases, its table 396, the summary 429, unexplained)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from harness.conformance.cases import Case, Session
from harness.conformance.golden import golden_checks
from harness.conformance.report import part_counts, print_tables, summary_line
from harness.conformance.results import CheckResult


def _sessions() -> list[Session]:
    case = cast(Case, object())
    return [
        Session("reads", readonly=True, knobs={}, cases=[case, case, case]),
        Session("writes", readonly=False, knobs={}, cases=[case, case]),
    ]


def _results(target: str) -> list[CheckResult]:
    golden: list[CheckResult] = [
        CheckResult("golden", target, f"case {i}", True, detail={"file": "a.yaml" if i < 3 else "b.yaml"})
        for i in range(5)
    ]
    golden += [
        CheckResult("golden", target, "session reads: database unchanged", True),
        CheckResult("golden", target, "session writes: bid invariants", True),
    ]
    return [*golden, CheckResult("concurrency", target, "bids", True)]


def test_golden_checks_are_its_cases_plus_one_database_check_per_session() -> None:
    assert golden_checks(_sessions()) == (7, 5)


def test_every_line_counts_the_same_checks(capsys: pytest.CaptureFixture[str]) -> None:
    results = [*_results("java"), *_results("node")]
    checks, _ = golden_checks(_sessions())
    print_tables(results, ["java", "node"])
    out: Any = capsys.readouterr().out
    golden_table = out.split("conformance: concurrency")[0]
    passed_row = next(line for line in golden_table.splitlines() if "checks passed" in line)
    assert passed_row.count(f"{checks}/{checks}") == 2
    assert summary_line(results, ["java", "node"]) == (
        "conformance passed, checks per target (all parts): java 8/8, node 8/8"
    )
    assert part_counts(results, ["java"]) == f"java: 8 checks = golden {checks} + concurrency 1"
