"""One claim verdict's comparison rows as cells (docs/design.md §10), for both places that show them: the
report's claims section (claims_section.py) and docs/replication/REPORT.md (claims/report_md.py). The two
differ only in style: REPORT.md is a dense one-line-per-row summary with shorter numbers."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.analysis import format as fmt
from harness.analysis.stats import mean_ci
from harness.analysis.table_model import Cell


def short_number(value: float | None) -> str:
    """Three significant digits, whole numbers from 100 up (REPORT.md's figures)."""
    if value is None or not math.isfinite(value):
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


@dataclass(frozen=True)
class ClaimStyle:
    number: Callable[[float | None], str]
    label_separator: str  # between a side's label and its mean
    invalid_words: str  # after the count of invalid runs left out
    ratio_detail: bool  # the TOST 90 % interval and Welch's p beside the ratio, or the TOST p only


REPORT_STYLE = ClaimStyle(fmt.num, ": ", "invalid excluded", ratio_detail=True)
SUMMARY_STYLE = ClaimStyle(short_number, " ", "invalid", ratio_detail=False)


def side_cell(side: dict[str, Any], style: ClaimStyle) -> Cell:
    """One side of a comparison: its mean with the t-interval over its valid runs, n, and what was left out."""
    label = side.get("label", "?")
    values = [float(v) for v in side.get("values", []) if v is not None]
    if not values:
        return Cell(f"{label}: no valid run")
    mean = sum(values) / len(values)
    interval = mean_ci(values)
    ci = f" [{style.number(interval.low)}, {style.number(interval.high)}]" if interval else ""
    extra = f", {side['invalid']} {style.invalid_words}" if side.get("invalid") else ""
    if side.get("unbracketed"):
        extra += f", {len(side['unbracketed'])} unbracketed (>= {style.number(min(side['unbracketed']))})"
    text = f"{label}{style.label_separator}{style.number(mean)}{ci} n={len(values)}{extra}"
    return Cell.measured(text, mean, interval)


def ratio_cell(row: dict[str, Any], style: ClaimStyle) -> Cell:
    """B/A with its interval, and the equivalence (TOST) or difference (Welch) test behind the verdict."""
    ratio = row.get("ratio")
    if ratio is None:
        return Cell("-")
    text = f"{ratio:.3f}"
    low = high = None
    if row.get("ratio_ci"):
        low, high = row["ratio_ci"]
        text += f" [{low:.3f}, {high:.3f}]"
    if row.get("tost_p") is not None:
        if style.ratio_detail:
            tost_low, tost_high = row.get("tost_ci90") or (float("nan"), float("nan"))
            text += f" (TOST p={row['tost_p']:.3g}, 90 % [{tost_low:.3f}, {tost_high:.3f}])"
        else:
            text += f", TOST p={row['tost_p']:.3g}"
    elif row.get("p_value") is not None and style.ratio_detail:
        text += f" (Welch p={row['p_value']:.3g})"
    return Cell(text, ratio, low, high)


def published_text(row: dict[str, Any], record: dict[str, Any]) -> str:
    """The published figure of a row (the claim's own where the row has none), with its ratio."""
    published = row.get("published") or record.get("published", "")
    if row.get("published_ratio") is not None:
        published += f" (ratio {row['published_ratio']:.3g})"
    return published
