"""One claim verdict's comparison rows as cells (docs/design.md §10), for every place that shows them: the
report's claims section (claims_section.py), docs/replication/REPORT.md (claims_report.py) and the terminal
after `./bidbench replicate` (cli/claims.py). They differ only in style: REPORT.md is a dense
one-line-per-row summary with shorter numbers; the terminal keeps its own digits."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harness.analysis import format as fmt
from harness.analysis.table_model import Cell
from harness.claims.verdict import NOT_TESTABLE
from harness.model.stats import mean_ci


def short_number(value: float | None) -> str:
    """Three significant digits, whole numbers from 100 up (REPORT.md's figures)."""
    if value is None or not math.isfinite(value):
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def terminal_number(value: float | None) -> str:
    """Three significant digits below 10, one decimal from 10 up (the terminal's figures)."""
    if value is None:
        return "-"
    return f"{value:,.3g}" if abs(value) < 10 else f"{value:,.1f}"


def whole_number(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


@dataclass(frozen=True)
class ClaimStyle:
    number: Callable[[float | None], str]
    label_separator: str  # between a side's label and its mean
    invalid_words: str  # after the count of invalid runs left out
    ratio_detail: bool  # the TOST 90 % interval and Welch's p beside the ratio, or the TOST p only
    bound_number: Callable[[float | None], str] | None = None  # an unbracketed bound; `number` when None
    says_no_valid_run: bool = True  # a side without values says so, or shows "-" with n=0


REPORT_STYLE = ClaimStyle(fmt.num, ": ", "invalid excluded", ratio_detail=True)
SUMMARY_STYLE = ClaimStyle(short_number, " ", "invalid", ratio_detail=False)
TERMINAL_STYLE = ClaimStyle(
    terminal_number,
    ": ",
    "invalid excluded",
    ratio_detail=True,
    bound_number=whole_number,
    says_no_valid_run=False,
)


def side_of(
    label: str,
    values: Sequence[float],
    invalid: int,
    unbracketed: Sequence[float],
    style: ClaimStyle,
    below: Sequence[float] = (),
) -> Cell:
    """One side of a comparison: its mean with the t-interval over its valid runs, n, and what was left out."""
    extra = f", {invalid} {style.invalid_words}" if invalid else ""
    if below and not values:
        return Cell(
            f"{label}{style.label_separator}< {style.number(max(below))} ({len(below)} ladders missed the SLO "
            f"from their first step){extra}"
        )
    if not values and style.says_no_valid_run:
        return Cell(f"{label}: no valid run")
    mean = sum(values) / len(values) if values else None
    interval = mean_ci(values)
    ci = f" [{style.number(interval.low)}, {style.number(interval.high)}]" if interval else ""
    if unbracketed:
        bound = (style.bound_number or style.number)(min(unbracketed))
        extra += f", {len(unbracketed)} unbracketed (>= {bound})"
    if below:
        extra += f", {len(below)} below their first step (< {style.number(max(below))})"
    text = f"{label}{style.label_separator}{style.number(mean)}{ci} n={len(values)}{extra}"
    return Cell.measured(text, mean, interval)


def side_cell(side: dict[str, Any], style: ClaimStyle) -> Cell:
    """A side as a stored verdict holds it (claims/store.py)."""
    values = [float(v) for v in side.get("values", []) if v is not None]
    return side_of(
        side.get("label", "?"),
        values,
        side.get("invalid") or 0,
        side.get("unbracketed") or [],
        style,
        side.get("below") or [],
    )


def side_cells(row: dict[str, Any], style: ClaimStyle) -> tuple[Cell, Cell]:
    """A stored row's two sides; "-" for a row declared not testable here, which ran nothing of its own
    (harness/claims/model.py `cells`), whatever other rows' runs its variants share."""
    if row.get("outcome") == NOT_TESTABLE:
        return Cell("-"), Cell("-")
    a, b = (side_cell(row[s], style) if s in row else Cell("-") for s in ("a", "b"))
    return a, b


def ratio_of(
    ratio: float | None,
    ratio_ci: Sequence[float] | None,
    tost_p: float | None,
    tost_ci90: Sequence[float] | None,
    p_value: float | None,
    style: ClaimStyle,
    paired: bool = False,
    bound: Sequence[Any] | None = None,
) -> Cell:
    """B/A with its interval, and the equivalence (TOST) or difference (Welch) test behind the verdict; or,
    where one side has only a floor, the 95 % bound on B/A and its one-sample test."""
    if ratio is None and bound:
        side, value = str(bound[0]), float(bound[1])
        text = f"{side} {value:.3g} (95 % bound" + (
            f"; p={p_value:.3g})" if p_value is not None and style.ratio_detail else ")"
        )
        return Cell(text, None, value if side == ">" else None, value if side == "<" else None)
    if ratio is None:
        return Cell("-")
    text = f"{ratio:.3f}"
    low = high = None
    if ratio_ci:
        low, high = ratio_ci
        text += f" [{low:.3f}, {high:.3f}]"
    if tost_p is not None:
        if style.ratio_detail:
            tost_low, tost_high = tost_ci90 or (float("nan"), float("nan"))
            text += f" (TOST p={tost_p:.3g}, 90 % [{tost_low:.3f}, {tost_high:.3f}])"
        else:
            text += f", TOST p={tost_p:.3g}"
    elif p_value is not None and style.ratio_detail:
        text += f" ({'paired' if paired else 'Welch'} p={p_value:.3g})"
    return Cell(text, ratio, low, high)


def ratio_cell(row: dict[str, Any], style: ClaimStyle) -> Cell:
    """The ratio of a comparison row as a stored verdict holds it (claims/store.py)."""
    stored = {key: row.get(key) for key in ("ratio", "ratio_ci", "tost_p", "tost_ci90", "p_value", "bound")}
    return ratio_of(**stored, style=style, paired=bool(row.get("paired")))


def published_text(row: dict[str, Any], record: dict[str, Any]) -> str:
    """The published figure of a row (the claim's own where the row has none), with its ratio."""
    published = row.get("published") or record.get("published", "")
    if row.get("published_ratio") is not None:
        published += f" (ratio {row['published_ratio']:.3g})"
    return published
