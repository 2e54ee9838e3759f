"""The renderers of the table model (table_model.py): rich terminal, Markdown, CSV, JSON and an HTML fragment.
They only lay out what the table holds; every number was formatted when the table was built."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup
from rich.table import Table as RichTable

from harness.analysis.table_model import Cell, Table


def escape_markup(text: str) -> str:
    """rich reads "[...]" as markup; intervals and notes print literally."""
    return text.replace("[", r"\[")


@dataclass(frozen=True)
class RichLook:
    """How a table sits in the terminal: a comparison's tables have a bold title on the left and wrap long
    cells inside their column; a command's own summary keeps rich's centred title and its ellipsis."""

    colours: Mapping[str, str] = field(default_factory=dict)  # style class (Table.styles) -> rich colour
    comparison: bool = True


COMPARISON_LOOK = RichLook()
# The verdict columns (tables.verdict_style): a significant change by the metric's direction, `~` dimmed.
VERDICT_LOOK = RichLook({"better": "bold green", "worse": "bold red", "changed": "bold", "same": "dim"})
# A command's own summary (a run, a ladder): what held is green, what broke red, a doubt yellow.
COMMAND_LOOK = RichLook({"better": "green", "worse": "red", "warn": "yellow"}, comparison=False)


def rich_table(table: Table, look: RichLook = COMPARISON_LOOK) -> RichTable:
    """The table's rows, coloured by `look` where the table has styles."""
    if look.comparison:
        out = RichTable(
            title=f"[bold]{escape_markup(table.title)}[/]",
            title_justify="left",
            caption=escape_markup(table.caption) if table.caption else None,
            caption_justify="left",
        )
    else:
        out = RichTable(title=escape_markup(table.title), caption=escape_markup(table.caption) or None)
    align = table.align or ["left"] * len(table.columns)
    fold: dict[str, Any] = {"overflow": "fold"} if look.comparison else {}
    for column, justify in zip(table.columns, align, strict=True):
        out.add_column(escape_markup(column), justify=justify, **fold)  # type: ignore[arg-type]
    for r, row in enumerate(table.rows):
        styles = table.styles[r] if table.styles else [""] * len(row)
        cells = []
        for text, style in zip(row, styles, strict=True):
            colour = look.colours.get(style)
            cells.append(f"[{colour}]{escape_markup(text)}[/]" if colour else escape_markup(text))
        out.add_row(*cells)
    return out


def markdown_cell(text: str) -> str:
    return str(text).replace("|", r"\|").replace("\n", " ")


def markdown_rows(columns: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A bare pipe table, header and rows."""
    lines = ["| " + " | ".join(markdown_cell(c) for c in columns) + " |"]
    lines.append("|" + "|".join(" --- " for _ in columns) + "|")
    lines += ["| " + " | ".join(markdown_cell(c) for c in row) + " |" for row in rows]
    return lines


def markdown_table(table: Table) -> str:
    lines = [f"### {table.title}", ""]
    if table.caption:
        lines += [table.caption + (f" _(source: {table.source})_" if table.source else ""), ""]
    if table.is_empty:
        lines += [f"_{table.empty}_", ""]
        return "\n".join(lines)
    lines += [*markdown_rows(table.columns, table.rows), ""]
    if table.notes:
        lines += [*(f"- {note}" for note in table.notes), ""]
    return "\n".join(lines)


def csv_value(value: Any) -> Any:
    """Six significant digits for floats, empty for missing: the CSV's number format."""
    if isinstance(value, float):
        return f"{value:.6g}"
    return "" if value is None else value


def write_text(path: str | Path, text: str) -> Path:
    """Write a file, its folder made first."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


def write_records_csv(path: Path, columns: Sequence[str], records: Iterable[dict[str, Any]]) -> None:
    """A table's numeric records (Table.records), one CSV row each, in the given columns."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns))
        writer.writeheader()
        for record in records:
            writer.writerow({k: csv_value(record.get(k)) for k in columns})


def json_cell(cell: str) -> dict[str, Any]:
    """The cell's text and, where a number stands behind it, that number (as a number), its interval and unit."""
    cell = cell if isinstance(cell, Cell) else Cell(cell)
    return {
        "text": str(cell),
        "value": cell.value,
        "ci_low": cell.low,
        "ci_high": cell.high,
        "unit": cell.unit,
    }


def json_table(table: Table) -> dict[str, Any]:
    return {
        "id": table.id,
        "title": table.title,
        "caption": table.caption,
        "source": table.source,
        "columns": list(table.columns),
        "rows": [[json_cell(c) for c in row] for row in table.rows],
        "notes": list(table.notes),
        "empty": table.empty if table.is_empty else None,
    }


_HTML_TABLE = r"""<div class="table" id="{{ t.id }}">
  <h3>{{ t.title }}{% if t.source %} <span class="source">({{ t.source }})</span>{% endif %}</h3>
  {% if t.caption %}<p class="caption">{{ t.caption }}</p>{% endif %}
  {% if t.is_empty %}<p class="empty">{{ t.empty }}</p>{% else %}
  {% if collapsed %}<details><summary>show {{ t.rows|length }} rows</summary>{% endif %}
  <div class="scroll"><table>
    <thead><tr>{% for c in t.columns %}<th>{{ c }}</th>{% endfor %}</tr></thead>
    <tbody>{% for row in t.rows %}{% set r = loop.index0 %}<tr>{% for cell in row %}<td class="{{ t.styles[r][loop.index0] if t.styles else cell_class(cell) }}">{{ cell }}</td>{% endfor %}</tr>{% endfor %}</tbody>
  </table></div>
  {% if collapsed %}</details>{% endif %}
  {% endif %}
  {% if t.notes %}<ul class="notes">{% for n in t.notes %}<li>{{ n }}</li>{% endfor %}</ul>{% endif %}
  </div>"""

_HTML_TEMPLATE = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined).from_string(
    _HTML_TABLE
)


def html_table(table: Table, collapsed: bool = False, cell_class: Any = lambda cell: "") -> Markup:
    """The report's fragment for one table; `cell_class` styles cells of tables that carry no styles."""
    return Markup(_HTML_TEMPLATE.render(t=table, collapsed=collapsed, cell_class=cell_class))
