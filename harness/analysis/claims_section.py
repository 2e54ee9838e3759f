"""The report's claims section: the stored verdicts of `./bidbench replicate` (results/claims/) whose runs are
among the runs being compared, each as a table of our numbers beside the published ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.analysis.claim_rows import REPORT_STYLE, published_text, ratio_cell, side_cells
from harness.analysis.comparison import Comparison
from harness.analysis.table_model import Table
from harness.claims.store import CLAIMS_SUBDIR, latest_per_claim, load_verdicts

COLUMNS = [
    "impl",
    "expected",
    "A: mean [95 % CI] n",
    "B: mean [95 % CI] n",
    "B/A [95 % CI]",
    "published",
    "verdict",
]
OUTCOME_STYLE = {
    "replicated": "better",
    "direction only": "better",
    "contradicted": "worse",
    "inconclusive": "same",
}


def verdict_dirs(sources: list[str]) -> list[Path]:
    """Where verdicts may be stored for these sources: `<results>/claims/` beside run folders or an index."""
    paths = [Path(source) for source in sources]
    candidates = [(base / CLAIMS_SUBDIR).resolve() for p in paths for base in (p, p.parent, p.parent.parent)]
    return list(dict.fromkeys(c for c in candidates if c.is_dir()))


def claim_table(record: dict[str, Any]) -> Table:
    rows, styles = [], []
    for row in record.get("comparisons", []):
        outcome = row.get("outcome", "")
        rows.append(
            [
                row.get("impl", ""),
                row.get("expected", ""),
                *side_cells(row, REPORT_STYLE),
                ratio_cell(row, REPORT_STYLE),
                published_text(row, record),
                outcome + (f": {row['reason']}" if row.get("reason") else ""),
            ]
        )
        styles.append([""] * (len(COLUMNS) - 1) + [OUTCOME_STYLE.get(outcome, "")])
    notes = list(record.get("notes", []))
    if record.get("adaptation"):
        notes.append(f"Adaptation: {record['adaptation']}")
    if record.get("method") is None:
        notes.append(
            "Made with the previous statistics (bootstrap intervals, direction only, no Holm correction): "
            "recompute it with --from to get the current labels."
        )
    if record.get("scaled_down"):
        notes.append(f"Scaled down: {record['scaled_down']}")
    notes.append(
        f"{len(record.get('runs', []))} result folders behind this verdict, listed in {record.get('_path', '?')}; "
        f"re-run with ./bidbench replicate {record['claim_id']}{' --quick' if record.get('size') == 'quick' else ''}, "
        f"or recompute from the folders alone with ./bidbench replicate {record['claim_id']} --from <folders>"
    )
    return Table(
        id=f"claim-{record['claim_id']}-{record.get('size', '')}",
        title=f"{record['claim_id']}: {str(record.get('outcome', '')).upper()} ({record.get('size', '')} size, "
        f"{record.get('created_utc', '')[:16]} UTC)",
        columns=COLUMNS,
        rows=rows,
        caption=f"{record.get('claim', '')} Metric: {record.get('metric', '')}.",
        source=record.get("source", ""),
        notes=notes,
        empty=record.get("reason") or "no comparison could be made",
        styles=styles,
    )


def claim_tables(comparison: Comparison) -> list[Table]:
    """One table per claim verdict (the newest per claim and size) that rests on at least one compared run."""
    runset = comparison.runset
    run_ids = {r.run_id for r in runset.runs} | {e.run_id for e in runset.excluded}
    records = [
        record
        for directory in verdict_dirs(runset.sources)
        for record in latest_per_claim(load_verdicts(directory))
        if run_ids & set(record.get("runs", []))
    ]
    return [claim_table(record) for record in records]
