"""bidbench analysis: from result folders to statistics, the source texts' tables, plots and a report.

The entry points (what compare.py and `./bidbench compare`, harness/cli/compare.py, build on):

    from harness.analysis.comparison import compare
    from harness.analysis.report import write_html
    from harness.analysis.writers import render_terminal, write_csv, write_json, write_markdown

    comparison = compare(["results/"], include_invalid=False, alpha=0.05)
    render_terminal(comparison)
    write_html(comparison, "report.html")

Modules, one job each:
    load        find and read result folders and results/index.jsonl; decide who is excluded and why
    metrics     the compared metrics: where each comes from in metrics.json, its unit and direction
    knee        where a latency curve turns upward
    comparison  the orchestration: groups -> statistics -> tables (the Comparison object)
    table_model the one table model: cells keep their value, interval and unit beside their text
    table_render its renderers: terminal (rich), Markdown, CSV, JSON, HTML fragment
    tables      the benchstat-like table and the source texts' tables, as model tables
    regime_tables, ladder_tables, claim_rows, summary_table  the commands' own tables, same model
    format      number formatting shared by every output
    manifest    the summary of manifests (versions, knobs, host) across runs
    host_factor how much of a ladder group's spread in CPU per request the host explains
    side_by_side  side-by-side comparisons from their stored records alone
    plots       matplotlib figures as base64 PNG
    report, report_template  the self-contained HTML report (jinja2) and its template
    ladder_report, side_by_side_report, resilience, claims_section  the report's pages and sections
    claims_report  docs/replication/REPORT.md from the stored verdicts
    writers     terminal, CSV, Markdown and JSON files of a comparison
"""
