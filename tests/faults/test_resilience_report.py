"""compare.py's resilience section, from synthetic fault-run folders: present with its table and one timeline
figure per scenario when fault runs are among the compared folders, absent otherwise."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from harness.analysis.comparison import compare
from harness.analysis.report import render_html
from harness.analysis.resilience import fault_runs, resilience_section
from harness.analysis.writers import render_terminal
from harness.faults.timeline import CLASSES


def _fault_folder(base: Path, impl: str, scenario: str, server_5xx: int = 0) -> Path:
    folder = base / f"20260101T00000{len(list(base.iterdir()))}Z-{impl}-faults-abc123"
    (folder / "logs").mkdir(parents=True)
    manifest = {
        "schema": 1,
        "run_id": folder.name,
        "status": "completed",
        "impl": impl,
        "variant": "default",
        "created_utc": "2026-01-01T00:00:00.000000Z",
        "regime": {"name": "faults", "group": f"{impl}/faults/{scenario}", "point": {"scenario": scenario}},
    }
    summary = {
        "impl": impl,
        "scenario": scenario,
        "rate": 50.0,
        "unavailable_503": 120,
        "server_5xx": server_5xx,
        "connection": 0,
        "timeout": 0,
        "fault_hangs": 0,
        "first_success_s": 0.05,
        "p99_back_s": 2.0,
        "peak_rss_mb": 80.0,
        "survived": True,
        "invariants_ok": True,
        "fault_window_s": [5.0, 9.0],
    }
    faults = {
        "scenario": {"name": scenario, "steps": [], "fault_start_s": 5.0, "fault_end_s": 9.0},
        "summary": summary,
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (folder / "faults.json").write_text(json.dumps(faults))
    (folder / "verdict.json").write_text(json.dumps({"valid": False, "reasons": ["system errors 8 %"]}))
    (folder / "metrics.json").write_text(json.dumps({"schema": 1, "requests": 1000, "ok": 880}))
    lines = ["t_s,requests," + ",".join(CLASSES) + ",p50_ms,p99_ms,max_ms"]
    for t in range(20):
        failed = 10 if 5 <= t < 9 else 0
        lines.append(
            f"{t},10,{10 - failed},0,{failed},0,0,0,{'' if failed else '3.0'},{'' if failed else '6.0'},7.0"
        )
    (folder / "timeline.csv").write_text("\n".join(lines) + "\n")
    return folder


def test_section_lists_fault_runs_even_when_they_are_excluded_as_invalid(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    _fault_folder(results, "node", "db-outage")
    _fault_folder(results, "php", "db-outage", server_5xx=3)
    _fault_folder(results, "node", "kill-instance")
    comparison = compare([results])
    assert len(fault_runs(comparison)) == 3
    section = resilience_section(comparison)
    assert section is not None
    table = section["table"]
    assert [row[:2] for row in table.rows] == [
        ["db-outage", "node"],
        ["db-outage", "php"],
        ["kill-instance", "node"],
    ]
    assert table.styles[1][4] == "worse"  # php's 500s are flagged
    assert [f.id for f in section["figures"]] == ["fig-fault-db-outage", "fig-fault-kill-instance"]
    assert all(f.png for f in section["figures"])
    html = render_html(comparison)
    assert 'id="resilience"' in html and "fig-fault-db-outage" in html
    out = io.StringIO()
    render_terminal(comparison, Console(file=out, width=250))
    assert table.title in out.getvalue() and "kill-instance" in out.getvalue()


def test_no_section_without_fault_runs(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    folder = _fault_folder(results, "node", "db-outage")
    (folder / "faults.json").unlink()
    comparison = compare([results])
    assert resilience_section(comparison) is None
    assert 'id="resilience"' not in render_html(comparison)
