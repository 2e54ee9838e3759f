"""Output: a rich table per part (one column per target), the failures in full, and a JSON report."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.table import Table

from harness.conformance.results import CheckResult, failed, number
from harness.console import console

MAX_PROBLEMS_SHOWN = 8


def _cell(result: CheckResult | None) -> str:
    if result is None:
        return "[dim]-[/]"
    if result.skipped:
        return "[yellow]skip[/]"
    return "[green]pass[/]" if result.ok else "[red]FAIL[/]"


def _group(result: CheckResult) -> str:
    """Golden cases are grouped by case file in the table (every case is in the JSON report)."""
    if result.part == "golden" and "file" in result.detail:
        return str(result.detail["file"])
    return result.check


def print_tables(results: list[CheckResult], targets: list[str], verbose: bool = False) -> None:
    """One table per part: a row per check (golden: a row per case file plus one per failing case),
    a column per target, then every failure with its problems."""
    for part in dict.fromkeys(r.part for r in results):
        mine = [r for r in results if r.part == part]
        shown_targets = [t for t in targets if any(r.target == t for r in mine)]
        table = Table(title=f"conformance: {part}", title_justify="left")
        table.add_column("check", overflow="fold")
        for target in shown_targets:
            table.add_column(target, justify="center")
        groups: dict[str, dict[str, list[CheckResult]]] = {}
        for r in mine:
            key = r.check if verbose else _group(r)
            groups.setdefault(key, {}).setdefault(r.target, []).append(r)
        for key, cells in groups.items():
            row = []
            for target in shown_targets:
                rs = cells.get(target, [])
                if not rs:
                    row.append("[dim]-[/]")
                elif len(rs) == 1 and key == rs[0].check:
                    row.append(_cell(rs[0]))
                else:
                    bad = len(failed(rs))
                    row.append(f"[{'red' if bad else 'green'}]{len(rs) - bad}/{len(rs)}[/]")
            label = key
            if part == "golden" and not verbose and key.endswith(".yaml"):
                label = f"{key} ({max(len(v) for v in cells.values())} cases)"
            table.add_row(label, *row)
            if part == "golden" and not verbose:
                failing = sorted({r.check for rs in cells.values() for r in failed(rs)} - {key})
                for check in failing:
                    found = [
                        next((r for r in cells.get(t, []) if r.check == check), None) for t in shown_targets
                    ]
                    table.add_row(f"  [red]{check}[/]", *map(_cell, found))
        per_target = [[r for r in mine if r.target == t] for t in shown_targets]
        totals = [f"[bold]{len(rs) - len(failed(rs))}/{len(rs)}[/]" for rs in per_target]
        table.add_row("[bold]checks passed[/]", *totals)
        console.print(table)
    bad = failed(results)
    if bad:
        console.rule("[bold red]failures")
        for r in bad:
            console.print(
                f"[bold red]{r.part}[/] [bold]{r.target}[/]: {r.check}", markup=True, highlight=False
            )
            for problem in r.problems[:MAX_PROBLEMS_SHOWN]:
                console.print("    " + problem.replace("\n", "\n    "), markup=False, highlight=False)
            if len(r.problems) > MAX_PROBLEMS_SHOWN:
                console.print(f"    ... {len(r.problems) - MAX_PROBLEMS_SHOWN} more (see --json)")


def print_dbwork(extra: dict[str, Any], targets: list[str]) -> None:
    """Statements and rows per request, per type: expected (contract) and measured (every target)."""
    data = extra.get("dbwork")
    if not data:
        return
    lenient = set(data.get("lenient", []))
    table = Table(
        title=f"database work per request ({data['requests_per_type']} requests per type; "
        f"statements exclude {'/'.join(sorted(lenient)).upper()}, see README)",
        title_justify="left",
    )
    table.add_column("request type")
    table.add_column("contract", justify="right")
    for target in targets:
        table.add_column(target, justify="right")
    for name, info in data["types"].items():
        expected = (
            f"{number(info['expected_statements_per_request'])} / {number(info['expected_rows_per_request'])}"
        )
        txn = [k for k in info["expected_statements"] if k in lenient]
        if txn:
            expected += f" +{'/'.join(txn)}"
        cells = []
        for target in targets:
            m = info["measured"].get(target)
            if m is None:
                cells.append("-")
                continue
            text = f"{number(m['statements_per_request'])} / {number(m['rows_per_request'])}"
            same = (
                m["statements_per_request"] == info["expected_statements_per_request"]
                and m["rows_per_request"] == info["expected_rows_per_request"]
            )
            cells.append(text if same else f"[red]{text}[/]")
        table.add_row(name, expected, *cells)
    console.print(table)


def write_json(path: Path, results: list[CheckResult], targets: list[str], extra: dict[str, Any]) -> None:
    doc = {
        "targets": targets,
        "ok": not failed(results),
        "failed": len(failed(results)),
        "total": len(results),
        "summary": {
            target: {
                "passed": sum(1 for r in results if r.target == target and r.ok),
                "failed": sum(1 for r in failed(results) if r.target == target),
            }
            for target in targets
        },
        **extra,
        "results": [asdict(r) for r in results],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")


def summary_line(results: list[CheckResult], targets: list[str]) -> str:
    """Checks passed per target, over every part: the sum of the "checks passed" rows of the part tables."""
    bad = failed(results)
    per_target = ", ".join(
        f"{t} {sum(1 for r in results if r.target == t and r.ok)}/{sum(1 for r in results if r.target == t)}"
        for t in targets
    )
    if not bad:
        return f"conformance passed, checks per target (all parts): {per_target}"
    first = bad[0]
    return (
        f"conformance FAILED ({len(bad)} checks), checks per target (all parts): {per_target}; "
        f"first: {first.part} {first.target} {first.check}"
    )


def part_counts(results: list[CheckResult], targets: list[str]) -> str:
    """How each target's checks split over the parts, so the per-part tables add up to the summary."""
    parts = list(dict.fromkeys(r.part for r in results))
    lines = []
    for t in targets:
        counts = [f"{p} {sum(1 for r in results if r.target == t and r.part == p)}" for p in parts]
        lines.append(f"{t}: {sum(1 for r in results if r.target == t)} checks = {' + '.join(counts)}")
    return "\n".join(lines)
