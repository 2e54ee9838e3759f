"""The one table model every output renders (docs/design.md §8): a titled table of columns and rows, with a
caption, notes and per-cell styles. The analysis builds these; table_render.py turns them into the terminal,
Markdown, CSV, JSON and HTML, as benchstat keeps its `benchtab` apart from its renderers.

A cell is its text exactly as printed (format.py) and keeps the number it was printed from: the value, the
bounds of its confidence interval and the unit. Cells are strings, so a row still reads and compares as the
text it shows; the JSON export reads the numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from harness.analysis import format as fmt
from harness.model.stats import Interval, Summary


class Cell(str):
    """A printed cell with the number behind it (value, interval bounds, unit); plain text has none."""

    value: float | int | None
    low: float | None
    high: float | None
    unit: str

    def __new__(
        cls,
        text: str,
        value: float | int | None = None,
        low: float | None = None,
        high: float | None = None,
        unit: str = "",
    ) -> Cell:
        cell = super().__new__(cls, text)
        cell.value, cell.low, cell.high, cell.unit = _finite(value), _finite(low), _finite(high), unit
        return cell

    @classmethod
    def measured(
        cls, text: str, value: float | int | None, iv: Interval | None = None, unit: str = ""
    ) -> Cell:
        return cls(text, value, iv.low if iv else None, iv.high if iv else None, unit)


def _finite(value: float | int | None) -> float | int | None:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# ---- cells as the outputs print them (the text comes from format.py, unchanged) --------------------------


def number(value: float | None, unit: str = "") -> Cell:
    return Cell(fmt.num(value), value, unit=unit)


def count(value: int | float, text: str | None = None) -> Cell:
    return Cell(str(value) if text is None else text, value)


def percent(value: float | None, signed: bool = False) -> Cell:
    return Cell(fmt.pct(value, signed=signed), value, unit="%")


def p_value(p: float | None, suffix: str = "") -> Cell:
    return Cell(fmt.p_value(p) + suffix, p)


def interval(iv: Interval | None, unit: str = "", suffix: str = "") -> Cell:
    """An interval on its own (its value is empty; the bounds carry it)."""
    return Cell.measured(fmt.interval(iv) + suffix, None, iv, unit)


def mean_with_ci(summary: Summary | None, unit: str = "") -> Cell:
    if summary is None:
        return Cell(fmt.mean_with_ci(None))
    return Cell.measured(fmt.mean_with_ci(summary), summary.mean, summary.mean_ci, unit)


def mean_pm(summary: Summary, unit: str = "") -> Cell:
    return Cell.measured(fmt.mean_pm(summary), summary.mean, summary.mean_ci, unit)


@dataclass
class Table:
    id: str
    title: str
    columns: list[str]
    rows: list[list[str]]  # Cells where a number stands behind the text
    caption: str = ""
    source: str = ""
    records: list[dict[str, Any]] = field(default_factory=list)  # the numeric rows of the CSV export
    notes: list[str] = field(default_factory=list)
    empty: str = "no data"
    styles: list[list[str]] | None = None  # per-cell class: better, worse, changed, same, flag, warn, or ""
    align: list[str] | None = None  # per column, "left" or "right"; None: every column on the left

    @property
    def is_empty(self) -> bool:
        return not self.rows
