"""The self-contained HTML report: every table, every figure (PNG data URIs), the manifest summary and a
short plain-language explanation of each figure. Viewing it needs no network."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import jinja2

from harness import __version__
from harness.analysis import format as fmt
from harness.analysis import tables as build
from harness.analysis.claims_section import claim_tables
from harness.analysis.comparison import Comparison, ComparisonSet
from harness.analysis.ladder_report import first_screen, step_table
from harness.analysis.manifest import manifest_tables
from harness.analysis.metrics import ALL_METRICS
from harness.analysis.plots import all_figures
from harness.analysis.report_template import TEMPLATE
from harness.analysis.resilience import resilience_section
from harness.analysis.table_render import html_table, write_text
from harness.analysis.writers import condense_warnings

# Every <section id> of the report, in order, with its navigation title (the browser test checks them all).
SECTIONS: tuple[tuple[str, str], ...] = (
    ("overview", "Overview"),
    ("verdicts", "Verdicts"),
    ("statistics", "Statistics"),
    ("throughput", "Throughput"),
    ("latency", "Latency"),
    ("normalized", "Normalized"),
    ("cpu", "CPU"),
    ("memory", "Memory"),
    ("users", "Users"),
    ("breakdown", "Breakdown"),
    ("manifest", "Manifest"),
    ("runs", "Runs"),
    ("method", "Method"),
)

# Sections that appear only when the compared runs have something for them, placed before "manifest".
OPTIONAL_SECTIONS: tuple[tuple[str, str], ...] = (("claims", "Claims"), ("resilience", "Resilience"))
# Shown first when the runs hold ladders: the four questions of issue #28 on one screen.
FIRST_SECTION: tuple[str, str] = ("glance", "At a glance")


def sections_for(present: set[str]) -> list[tuple[str, str]]:
    """The navigation: every fixed section, with the optional ones that have content inserted before Manifest."""
    optional = [section for section in OPTIONAL_SECTIONS if section[0] in present]
    at = next(i for i, (sid, _) in enumerate(SECTIONS) if sid == "manifest")
    first = [FIRST_SECTION] if FIRST_SECTION[0] in present else []
    return [*first, *SECTIONS[:at], *optional, *SECTIONS[at:]]


_SIGNED = re.compile(r"^[+-]\d")


def _cell_class(cell: object) -> str:
    text = str(cell)
    if text.startswith(fmt.TILDE + " ("):
        return "same"
    if _SIGNED.match(text) and "(p" in text:
        return "changed"
    if text.startswith("INVALID") or text.endswith("!"):
        return "flag"
    return ""


def headline(comparison: Comparison) -> tuple[str, list[str]]:
    """Plain sentences for the most informative set (the first ladder or capacity set, else the biggest)."""
    if not comparison.sets:
        return "", []
    chosen: ComparisonSet = next(
        (s for s in comparison.sets if s.regime in ("ladder", "capacity")),
        max(comparison.sets, key=lambda s: (len(s.labels), len(s.runs))),
    )
    sentences = []
    for result in chosen.results:
        metric = ALL_METRICS[result.metric]
        for pair in result.pairs:
            if result.baseline is not None and pair.a != result.baseline:
                continue
            sentences.append(fmt.sentence(pair, metric.title, metric.higher_is_better, comparison.confidence))
    return chosen.title, sentences


def render_html(comparison: Comparison) -> str:
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    env.globals["render_table"] = lambda table, collapsed=False: html_table(table, collapsed, _cell_class)
    runset = comparison.runset
    invalid_used = runset.invalid_included
    banner_invalid = (
        f"This report INCLUDES {len(invalid_used)} INVALID OR FAILED RUN(S) (--include-invalid). Values marked "
        "'!' rest partly on runs that failed the validity checks of docs/design.md §7: treat them as suspect."
        if invalid_used
        else None
    )
    banner_excluded = (
        f"{len(runset.excluded)} run(s) were EXCLUDED as failed or invalid: {runset.reason_text()}. "
        "They are listed under Runs; --include-invalid would use them."
        if runset.excluded
        else None
    )
    headline_set, sentences = headline(comparison)
    tables = {t.id: t for t in build.source_tables(comparison)}
    claims = claim_tables(comparison)
    resilience = resilience_section(comparison)  # fault runs (./bidbench faults), or None
    glance = first_screen(comparison)  # ladder runs, or None
    present = {
        sid for sid, shown in (("claims", claims), ("resilience", resilience), ("glance", glance)) if shown
    }
    return env.from_string(TEMPLATE).render(
        subtitle=(
            f"{len(comparison.runs)} runs of {', '.join(comparison.labels) or 'nothing'}; "
            f"generated {datetime.now(UTC).strftime('%Y-%m-%d %H:%M')} UTC"
        ),
        sections=sections_for(present),
        claim_tables=claims,
        resilience=resilience,
        glance=glance,
        ladder_steps=step_table(comparison),
        banner_invalid=banner_invalid,
        banner_excluded=banner_excluded,
        n_runs=len(comparison.runs),
        n_invalid_used=len(invalid_used),
        n_excluded=len(runset.excluded),
        sources=" ".join(runset.sources),
        labels=comparison.labels,
        regimes=sorted({r.regime for r in comparison.runs}),
        confidence_pct=f"{comparison.confidence * 100:g}",
        alpha=f"{comparison.alpha:g}",
        headline=sentences,
        headline_set=headline_set,
        warnings=condense_warnings(comparison.warnings),
        verdict_tables=build.verdict_tables(comparison),
        anova=build.anova_table(comparison),
        details=build.details_table(comparison),
        ratios=build.ratio_table(comparison),
        tables=tables,
        figures=all_figures(comparison),
        manifest_tables=manifest_tables(comparison.runs),
        runs_used=build.runs_table(comparison),
        runs_excluded=build.excluded_table(comparison),
        two_group_test="Welch's t-test" if comparison.test == "welch" else "the Mann-Whitney U test",
        resamples=str(comparison.n_resamples),
        version=__version__,
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S"),
    )


def write_html(comparison: Comparison, path: str | Path) -> Path:
    """Write the report; returns its path. The file is self-contained (open it anywhere, offline)."""
    return write_text(path, render_html(comparison))
