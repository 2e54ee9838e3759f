"""The table model and its renderers: a cell is the text every output prints and keeps its number; a claim's
row reads the same numbers in each place's own style."""

from __future__ import annotations

import io
import json
import math

from rich.console import Console

from harness.analysis.claim_rows import (
    REPORT_STYLE,
    SUMMARY_STYLE,
    TERMINAL_STYLE,
    ratio_cell,
    side_cell,
    side_cells,
)
from harness.analysis.claims_section import claim_table
from harness.analysis.table_model import Cell, Table, mean_with_ci, number
from harness.analysis.table_render import COMMAND_LOOK, json_table, markdown_table, rich_table
from harness.claims.verdict import NOT_TESTABLE, REPLICATED
from harness.model.stats import summarize


def test_a_cell_is_its_text_and_keeps_its_number() -> None:
    summary = summarize("java", [100.0, 110.0, 120.0])
    cell = mean_with_ci(summary, "req/s")
    # A positive quantity: its interval is on the log scale, so it leans up and never reaches 0.
    assert cell == "110.0 [87.46, 137.6]" and cell.value == 110.0 and cell.unit == "req/s"
    assert cell.low is not None and math.isclose(cell.low, summary.mean_ci.low)  # type: ignore[union-attr]
    assert number(float("nan")) == "-" and number(float("nan")).value is None


def test_every_renderer_prints_the_same_text() -> None:
    table = Table("t", "A | title", ["impl", "req/s"], [["java", number(12345.6, "req/s")], ["php", "-"]])
    assert "| java | 12,346 |" in markdown_table(table)
    exported = json_table(table)
    json.dumps(exported, allow_nan=False)
    assert exported["rows"][0][1] == {
        "text": "12,346",
        "value": 12345.6,
        "ci_low": None,
        "ci_high": None,
        "unit": "req/s",
    }
    assert exported["rows"][1][1]["value"] is None


def test_a_command_table_colours_cells_by_their_style() -> None:
    table = Table(
        "run",
        "run r1",
        ["figure", "value"],
        [["valid", "NO"], ["interval", Cell("[1, 2]")]],
        styles=[["", "worse"], ["", ""]],
        align=["left", "right"],
    )
    out = io.StringIO()
    Console(file=out, width=60, force_terminal=True, color_system="standard").print(
        rich_table(table, look=COMMAND_LOOK)
    )
    assert "\x1b[31mNO\x1b[0m" in out.getvalue() and "[1, 2]" in out.getvalue()


def test_a_claim_side_reads_the_same_numbers_in_every_style() -> None:
    side = {"label": "java", "values": [1000.5, 1010.2, 990.1], "invalid": 1, "unbracketed": [1500.0]}
    assert side_cell(side, REPORT_STYLE) == (
        "java: 1000.3 [975.6, 1025.5] n=3, 1 invalid excluded, 1 unbracketed (>= 1500.0)"
    )
    assert (
        side_cell(side, SUMMARY_STYLE) == "java 1,000 [976, 1,026] n=3, 1 invalid, 1 unbracketed (>= 1,500)"
    )
    assert side_cell(side, TERMINAL_STYLE) == (
        "java: 1,000.3 [975.6, 1,025.5] n=3, 1 invalid excluded, 1 unbracketed (>= 1,500)"
    )
    assert len({side_cell(side, style).value for style in (REPORT_STYLE, SUMMARY_STYLE, TERMINAL_STYLE)}) == 1
    empty = {"label": "php", "values": []}
    assert side_cell(empty, REPORT_STYLE) == "php: no valid run"
    assert side_cell(empty, TERMINAL_STYLE) == "php: - n=0"


def test_a_claim_ratio_shows_its_test_by_style() -> None:
    row = {"ratio": 1.19, "ratio_ci": [1.15, 1.22], "tost_p": 0.0123, "tost_ci90": [1.16, 1.21]}
    assert ratio_cell(row, REPORT_STYLE) == "1.190 [1.150, 1.220] (TOST p=0.0123, 90 % [1.160, 1.210])"
    assert ratio_cell(row, SUMMARY_STYLE) == "1.190 [1.150, 1.220], TOST p=0.0123"
    assert (ratio_cell(row, SUMMARY_STYLE).low, ratio_cell(row, SUMMARY_STYLE).high) == (1.15, 1.22)
    welch = {"ratio": 0.5, "p_value": 0.0345}
    assert (
        ratio_cell(welch, REPORT_STYLE) == "0.500 (Welch p=0.0345)"
        and ratio_cell(welch, SUMMARY_STYLE) == "0.500"
    )
    assert ratio_cell({}, REPORT_STYLE) == "-"


def test_a_row_not_testable_here_shows_no_sides_though_its_variants_ran_for_other_rows() -> None:
    """pool-90's row shares java with rows that ran; it ran nothing of its own, so it must not read as
    "no valid run" (a failure) or show another row's values."""
    ran = {"label": "java/pool-60", "values": [100.0, 110.0, 120.0], "invalid": 0}
    idle = {"label": "java/pool-90", "values": [], "invalid": 0}
    testable = {"a": ran, "b": ran, "outcome": REPLICATED}
    untestable = {"a": ran, "b": idle, "outcome": NOT_TESTABLE, "reason": "declared in the YAML"}
    for style in (REPORT_STYLE, SUMMARY_STYLE, TERMINAL_STYLE):
        assert side_cells(untestable, style) == ("-", "-")
        assert side_cells(testable, style)[0].startswith("java/pool-60")
    table = claim_table({"claim_id": "thesis-fig-6.2-pool-size", "comparisons": [testable, untestable]})
    assert "no valid run" not in " ".join(table.rows[1]) and table.rows[1][2:4] == ["-", "-"]
