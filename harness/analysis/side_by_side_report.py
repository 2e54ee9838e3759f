"""The side-by-side comparison as one self-contained HTML page: the answers first, one plain "how sure",
then the charts (a bar per group at its geometric mean, a log-scale 95 % interval that cannot reach zero,
a dot per fresh start), the paired ratios, the host, and every fresh start with its folder."""

from __future__ import annotations

import base64
import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jinja2

from harness.analysis.plots import plt
from harness.analysis.side_by_side import aa_check, digits_of, interval_text, ranking, ratio_text, sure
from harness.analysis.table_model import Table
from harness.analysis.table_render import COMMAND_LOOK, rich_table, write_text
from harness.console import console
from harness.model.side_by_side_math import METRICS, Metric

QUESTIONS = {
    "app_us": "Least CPU per request (the app alone)",
    "stack_us": "Least CPU per request for the whole stack (app + its share of PostgreSQL)",
    "capacity_rps": "Most load under the SLO (p99 ≤ 50 ms, mean ≤ 8 ms)",
    "pss_mb": "Least memory (PSS of the whole deployment)",
    "mean_ms": "Lowest mean latency (the same rates, in the same seconds)",
}
ASKED = [metric for metric in METRICS if metric.key in QUESTIONS]
OPTIONAL = {"mean_ms"}
"""Asked only of records that hold it: fresh starts stored before the cost steps kept each group's latency
have none, and their comparison keeps its four answers."""
TERMINAL = [metric for metric in METRICS if metric.key != "mean_ms"]
"""The terminal's tables: a sixth column does not fit 80 columns; the latency is an answer line there."""


def asked(summary: dict[str, Any]) -> list[Metric]:
    return [
        metric
        for metric in ASKED
        if metric.key not in OPTIONAL
        or any((group.get(metric.key) or {}).get("values") for group in summary["groups"].values())
    ]


TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>bidbench side by side: {{ groups|join(', ') }}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }
.banner { padding: .8em 1em; border-radius: 6px; background: {{ '#e6f4ea' if valid else '#fdecea' }}; }
.answers li { margin: .4em 0; } table { border-collapse: collapse; margin: 1em 0; }
td, th { border: 1px solid #ccc; padding: .3em .6em; text-align: right; } th:first-child, td:first-child { text-align: left; }
.sure { font-size: 1.1em; font-weight: 600; } .charts img { max-width: 49%; } .dim { color: #666; }
</style></head><body>
<h1>Side by side: {{ groups|join(', ') }}</h1>
<p class="banner">{{ valid }} valid of {{ fresh_starts }} fresh starts. In each, every group was started together
and measured in the same seconds of this host, so the host's drift cancels in their ratios.</p>
<h2>Answers</h2>
<ul class="answers">
{% for answer in answers %}<li><b>{{ answer.question }}:</b> {{ answer.ranking }}</li>
{% endfor %}</ul>
<p class="sure">How sure: {{ how_sure }}</p>
<details><summary>Why, metric by metric</summary><ul>
{% for answer in answers %}<li>{{ answer.question }}: {{ answer.sure }}</li>{% endfor %}</ul>
<p class="dim">"&lt;" and "&gt;": the paired 95 % interval of the two neighbours' ratio excludes 1; "≈": it does not;
"?": fewer than 2 fresh starts gave both a figure, so there is no interval.
x1.23: the neighbour's figure over the one before it, as the geometric mean of the per-fresh-start ratios.</p></details>
<h2>Charts</h2>
<p class="dim">Bars: geometric means over fresh starts; whiskers: 95 % intervals on the log scale (never below
zero); dots: each fresh start. Absolute figures depend on the host at the time; the ratios are what compares.</p>
<div class="charts">{% for chart in charts %}<img alt="{{ chart.alt }}" src="data:image/png;base64,{{ chart.png }}">{% endfor %}</div>
<h2>Figures per group</h2>
<table><tr><th>group</th>{% for m in metrics %}<th>{{ m.label }} ({{ m.unit }})</th>{% endfor %}</tr>
{% for label, cells in group_rows %}<tr><td>{{ label }}</td>{% for cell in cells %}<td>{{ cell }}</td>{% endfor %}</tr>{% endfor %}</table>
<h2>Paired ratios</h2>
<table><tr><th>ratio</th>{% for m in metrics %}<th>{{ m.label }}</th>{% endfor %}</tr>
{% for label, cells in pair_rows %}<tr><td>{{ label }}</td>{% for cell in cells %}<td>{{ cell }}</td>{% endfor %}</tr>{% endfor %}</table>
<p class="dim">Each cell: the geometric mean of the per-fresh-start ratios [95 % t-interval on their logs], and
the ratios' CV over fresh starts.</p>
<h2>The host</h2>
<p>{{ host }}</p>
<h2>Fresh starts</h2>
<table><tr><th>folder</th><th>valid</th><th>why not</th></tr>
{% for f in folders %}<tr><td>{{ f.folder }}</td><td>{{ 'yes' if f.valid else 'no' }}</td><td>{{ f.reason }}</td></tr>{% endfor %}</table>
<p class="dim">Recompute all of this from the stored records: <code>./bidbench side-by-side{% for f in folders %} --from {{ f.folder }}{% endfor %}</code></p>
</body></html>
"""


def group_cell(summary: dict[str, Any], label: str, metric: Metric) -> str:
    """A group's figure with its interval, and for a capacity the fresh starts that gave only a bound."""
    row = summary["groups"][label]
    text = interval_text((row.get(metric.key) or {}).get("interval"), digits_of(metric))
    bounds = row.get("capacity_at_least") or []
    if metric.key == "capacity_rps" and bounds:
        text += f"; in {len(bounds)} more fresh start(s) only ≥ {min(bounds):,.0f}"
    return text


def how_sure(summary: dict[str, Any]) -> str:
    """One plain sentence over the answers: which ones held, and why the others are not sure."""
    verdicts = [(metric, *sure(summary, metric)) for metric in asked(summary)]
    unsure = [(metric, why) for metric, ok, why in verdicts if not ok]
    if not unsure:
        return f"Sure of all {len(verdicts)} answers: {verdicts[0][2].removeprefix('sure: ')}."
    if len(unsure) == len(verdicts):
        return f"Not sure of any answer: {unsure[0][1].split(': ', 1)[-1]}."
    held = [metric.label for metric, ok, _ in verdicts if ok]
    reasons = "; ".join(f"{metric.label}: {why.split(': ', 1)[-1]}" for metric, why in unsure)
    return f"Sure of {len(held)} of {len(verdicts)} answers ({', '.join(held)}); not sure of {reasons}."


def _chart(summary: dict[str, Any], metric: Metric) -> str | None:
    labels = summary["groups_compared"]
    rows = [(label, summary["groups"][label].get(metric.key) or {}) for label in labels]
    rows = [(label, row) for label, row in rows if row.get("interval")]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(5.2, 3.2), dpi=100)
    for x, (_, row) in enumerate(rows):
        interval = row["interval"]
        ax.bar(x, interval["centre"], color="#9ecae1", width=0.6)
        if interval["low"] is not None:
            ax.errorbar(
                x,
                interval["centre"],
                yerr=[[interval["centre"] - interval["low"]], [interval["high"] - interval["centre"]]],
                color="#333",
                capsize=6,
            )
        ax.scatter([x] * len(row["values"]), row["values"], color="#08519c", s=14, zorder=3)
    ax.set_xticks(range(len(rows)), [label for label, _ in rows])
    ax.set_ylim(bottom=0)
    ax.set_ylabel(metric.unit)
    ax.set_title(metric.label, fontsize=10)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode()


def group_rows(summary: dict[str, Any], metrics: Sequence[Metric] = METRICS) -> list[tuple[str, list[str]]]:
    return [(label, [group_cell(summary, label, m) for m in metrics]) for label in summary["groups_compared"]]


def ratio_rows(ratios: dict[str, Any], metrics: Sequence[Metric] = METRICS) -> list[tuple[str, list[str]]]:
    return [
        (name, [ratio_text((ratio.get(m.key) or {}).get("interval")) for m in metrics])
        for name, ratio in ratios.items()
    ]


def host_text(summary: dict[str, Any]) -> str:
    host = summary["host"]
    steal = [s for s in host["steal_pct_per_fresh_start"] if s is not None]
    unexplained = [u for u in host.get("unaccounted_pct_per_fresh_start") or [] if u is not None]
    if host["busiest_cost_step_pct"] is None:
        return "No cost step was measured."
    return (
        f"The busiest cost step used {host['busiest_cost_step_pct']:.0f} % of the machine; "
        f"{host['flagged_steps']} of {host['cost_steps']} cost steps were busier than the limit"
        + (
            f" and {host['throttled_steps']} had a group throttled by its quota, all left out. "
            if host.get("throttled_steps")
            else " and left out. "
        )
        + f"The hypervisor stole {', '.join(f'{s:.1f}' for s in steal) or '-'} % of the CPU time in the cost steps "
        "of each fresh start"
        + (
            f"; work no measured process explains took {', '.join(f'{u:.0f}' for u in unexplained)} % of the "
            "machine (another tenant's, or the kernel's)."
            if unexplained
            else "."
        )
    )


def render(summary: dict[str, Any]) -> str:
    answers = [
        {"question": QUESTIONS[m.key], "ranking": ranking(summary, m), "sure": sure(summary, m)[1]}
        for m in asked(summary)
    ]
    charts = [{"alt": m.label, "png": png} for m in asked(summary) if (png := _chart(summary, m)) is not None]
    invalid = {bad["folder"]: bad["reason"] for bad in summary["invalid"]}
    folders = [
        {"folder": folder, "valid": folder not in invalid, "reason": invalid.get(folder, "")}
        for folder in summary["folders"]
    ]
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    return env.from_string(TEMPLATE).render(
        groups=summary["groups_compared"],
        valid=summary["valid"],
        fresh_starts=summary["fresh_starts"],
        answers=answers,
        how_sure=how_sure(summary),
        charts=charts,
        metrics=METRICS,
        group_rows=group_rows(summary),
        pair_rows=ratio_rows(summary["pairs"]),
        host=host_text(summary),
        folders=folders,
    )


def _markdown_table(head: list[str], rows: list[tuple[str, list[str]]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    return lines + [f"| {label} | " + " | ".join(cells) + " |" for label, cells in rows]


def markdown(summary: dict[str, Any]) -> str:
    """The answers, how sure, each group's figures and the paired ratios as Markdown."""
    lines = [
        f"# Side by side: {', '.join(summary['groups_compared'])}",
        "",
        f"{summary['valid']} valid of {summary['fresh_starts']} fresh starts.",
        "",
    ]
    lines += [f"- **{QUESTIONS[m.key]}:** {ranking(summary, m)}" for m in asked(summary)]
    lines += ["", f"How sure: {how_sure(summary)}", "", "## Figures per group", ""]
    lines += _markdown_table(["group", *(f"{m.label} ({m.unit})" for m in METRICS)], group_rows(summary))
    lines += ["", "## Paired ratios", ""]
    lines += _markdown_table(["ratio", *(m.label for m in METRICS)], ratio_rows(summary["pairs"]))
    lines += ["", host_text(summary), ""]
    lines += [f"- invalid fresh start {bad['folder']}: {bad['reason']}" for bad in summary["invalid"]]
    return "\n".join(lines) + "\n"


def write_csv(summary: dict[str, Any], path: Path) -> Path:
    """One row per group or ratio and metric: its geometric mean, 95 % interval, CV and count."""
    path.parent.mkdir(parents=True, exist_ok=True)
    figures = [
        (label, m.key, m.unit, summary["groups"][label].get(m.key))
        for label in summary["groups_compared"]
        for m in METRICS
    ]
    figures += [
        (name, m.key, "ratio", pair.get(m.key)) for name, pair in summary["pairs"].items() for m in METRICS
    ]
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)  # None is written as an empty field
        writer.writerow(
            ["group_or_ratio", "metric", "unit", "n", "geometric_mean", "ci_low", "ci_high", "cv_pct"]
        )
        for name, key, unit, figure in figures:
            interval = (figure or {}).get("interval") or {}
            writer.writerow(
                [name, key, unit, *(interval.get(f) for f in ("n", "centre", "low", "high", "cv_pct"))]
            )
    return path


def write_outputs(
    summary: dict[str, Any],
    *,
    json_out: Path | None = None,
    html: Path | None = None,
    markdown_out: Path | None = None,
    csv_out: Path | None = None,
) -> list[Path]:
    """Every file asked for, from the one summary."""
    written = []
    if json_out:
        written.append(write_text(json_out, json.dumps(summary, indent=2)))
    if html:
        written.append(write_text(html, render(summary)))
    if markdown_out:
        written.append(write_text(markdown_out, markdown(summary)))
    if csv_out:
        written.append(write_csv(summary, csv_out))
    return written


def _print_table(title: str, columns: list[str], rows: list[tuple[str, list[str]]]) -> None:
    table = Table("side-by-side", title, ["group", *columns], [[label, *cells] for label, cells in rows])
    console.print(rich_table(table, COMMAND_LOOK))


def print_summary(summary: dict[str, Any], json_out: Path | None = None, html: Path | None = None) -> None:
    """The comparison in the terminal (and as JSON and HTML): the answers, how sure, then the tables."""
    title = f"side by side: {summary['valid']} valid of {summary['fresh_starts']} fresh starts"
    _print_table(title, [f"{m.label} ({m.unit})" for m in TERMINAL], group_rows(summary, TERMINAL))
    console.print(
        "[dim]Absolute figures depend on the host at the time; the ratios below are what compares.[/]"
    )
    ratios = ratio_rows(
        {label: summary["ratios"][label] for label in summary["groups_compared"][1:]}, TERMINAL
    )
    title = f"each group / {summary['baseline']}, paired by fresh start (95 % interval, CV of the ratio)"
    _print_table(title, [m.label for m in TERMINAL], ratios)
    for metric in asked(summary):
        console.print(f"- {QUESTIONS[metric.key]}: {ranking(summary, metric)}")
    console.print(f"- How sure: {how_sure(summary)}")
    for line in aa_check(summary):
        console.print(f"- {line}")
    console.print(host_text(summary))
    for bad in summary["invalid"]:
        console.print(f"[yellow]invalid fresh start[/] {bad['folder']}: {bad['reason']}")
    for path in write_outputs(summary, json_out=json_out, html=html):
        console.print(f"HTML report: {path}" if path == html else f"wrote {path}")
