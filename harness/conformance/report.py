"""Output: a rich table per part (one column per target), the failures in full, and a JSON report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.table import Table

from harness.conformance.results import CheckResult, failed
from harness.console import console

MAX_PROBLEMS_SHOWN = 8


def _cell(result: CheckResult | None) -> str:
    if result is None:
        return "[dim]-[/]"
    if result.skipped:
        return "[yellow]skip[/]"
    return "[green]pass[/]" if result.ok else "[red]FAIL[/]"


def print_tables(results: list[CheckResult], targets: list[str], verbose: bool = False) -> None:
    parts: list[str] = []
    for r in results:
        if r.part not in parts:
            parts.append(r.part)
    for part in parts:
        rows: dict[str, dict[str, CheckResult]] = {}
        for r in results:
            if r.part == part:
                rows.setdefault(r.check, {})[r.target] = r
        shown_targets = [t for t in targets if any(t in cells for cells in rows.values())]
        table = Table(title=f"conformance: {part}", title_justify="left", show_lines=False)
        table.add_column("check", overflow="fold")
        for target in shown_targets:
            table.add_column(target, justify="center")
        passing_rows = 0
        for check, cells in rows.items():
            all_ok = all(c.ok or c.skipped for c in cells.values())
            if all_ok and not verbose and part == "golden":
                passing_rows += 1
                continue
            table.add_row(check, *[_cell(cells.get(t)) for t in shown_targets])
        if passing_rows:
            table.add_row(f"[dim]... and {passing_rows} more checks passing everywhere (--verbose lists them)[/]",
                          *["" for _ in shown_targets])
        totals = []
        for target in shown_targets:
            mine = [c[target] for c in rows.values() if target in c]
            bad = len(failed(mine))
            totals.append(f"[bold]{len(mine) - bad}/{len(mine)}[/]")
        table.add_row("[bold]passed[/]", *totals)
        console.print(table)
    bad = failed(results)
    if bad:
        console.rule("[bold red]failures")
        for r in bad:
            console.print(f"[bold red]{r.part}[/] [bold]{r.target}[/]: {r.check}")
            for problem in r.problems[:MAX_PROBLEMS_SHOWN]:
                console.print("    " + problem.replace("\n", "\n    "), markup=False, highlight=False)
            if len(r.problems) > MAX_PROBLEMS_SHOWN:
                console.print(f"    ... {len(r.problems) - MAX_PROBLEMS_SHOWN} more (see --json)")


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))


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
        expected = f"{_num(info['expected_statements_per_request'])} / {_num(info['expected_rows_per_request'])}"
        txn = [k for k in info["expected_statements"] if k in lenient]
        if txn:
            expected += f" +{'/'.join(txn)}"
        cells = []
        for target in targets:
            m = info["measured"].get(target)
            if m is None:
                cells.append("-")
                continue
            text = f"{_num(m['statements_per_request'])} / {_num(m['rows_per_request'])}"
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
        "results": [r.to_json() for r in results],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")


def summary_line(results: list[CheckResult], targets: list[str]) -> str:
    bad = failed(results)
    per_target = ", ".join(
        f"{t} {sum(1 for r in results if r.target == t and r.ok)}/{sum(1 for r in results if r.target == t)}"
        for t in targets
    )
    if not bad:
        return f"conformance passed: {per_target}"
    first = bad[0]
    return f"conformance FAILED ({len(bad)} checks): {per_target}; first: {first.part} {first.target} {first.check}"
