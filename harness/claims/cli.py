"""`./bidbench replicate`: list the claims of docs/design.md §10, run one or all, print verdicts beside the published figures."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from harness import paths
from harness.claims.model import Claim, ClaimError, find, load_all
from harness.claims.runner import replicate, size_for
from harness.claims.store import save_verdict, verdict_record
from harness.claims.verdict import CONTRADICTED, INCONCLUSIVE, NOT_RUNNABLE, REPLICATED, ClaimVerdict
from harness.console import UserError, console

COLOURS = {REPLICATED: "green", CONTRADICTED: "red", INCONCLUSIVE: "yellow", NOT_RUNNABLE: "magenta"}


def _num(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}g}" if abs(value) < 10 else f"{value:,.1f}"


def list_table(claims: list[Claim]) -> Table:
    table = Table(title="claims to replicate (docs/design.md §10)", show_lines=True)
    for column in ("id", "source", "metric", "expected", "runnable"):
        table.add_column(column, overflow="fold")
    for claim in claims:
        runnable = "[green]yes[/]" if claim.runnable else f"[magenta]no[/]: {claim.why_not()}"
        table.add_row(claim.id, claim.source_text(), claim.metric, claim.expected_text(), runnable)
    return table


def verdict_table(claim: Claim, verdict: ClaimVerdict) -> Table:
    colour = COLOURS[verdict.outcome]
    table = Table(
        title=f"{claim.id}: [{colour}]{verdict.outcome}[/]  ({claim.metric}; {claim.source_text()})",
        show_lines=True,
    )
    for column in (
        "impl",
        "expected",
        "A mean [95 % CI] n",
        "B mean [95 % CI] n",
        "B/A [95 % CI]",
        "published",
        "verdict",
    ):
        table.add_column(column, overflow="fold")
    for r in verdict.results:
        cells = []
        for s in (r.a, r.b):
            ci = s.ci
            interval = f" [{_num(ci.low)}, {_num(ci.high)}]" if ci else ""
            invalid = f", {s.invalid} invalid excluded" if s.invalid else ""
            cells.append(f"{s.label}: {_num(s.mean)}{interval} n={s.n}{invalid}")
        ratio = "-"
        if r.ratio is not None:
            ratio = f"{r.ratio:.3f}"
            if r.ratio_ci:
                ratio += f" [{r.ratio_ci.low:.3f}, {r.ratio_ci.high:.3f}]"
            if r.p_value is not None:
                ratio += f" (Welch p={r.p_value:.3g})"
        published = r.comparison.published or claim.source.get("published", "")
        if r.comparison.published_ratio is not None:
            published += f" (ratio {r.comparison.published_ratio:.3g})"
        outcome = f"[{COLOURS[r.outcome]}]{r.outcome}[/]" + (f": {r.reason}" if r.reason else "")
        table.add_row(r.impl, r.comparison.expected_text(), cells[0], cells[1], ratio, published, outcome)
    return table


def print_verdict(claim: Claim, verdict: ClaimVerdict) -> None:
    if verdict.outcome == NOT_RUNNABLE:
        console.print(f"[magenta]{claim.id}: not runnable[/] — {verdict.reason}")
        console.print(f"  published: {claim.source.get('published', '')}")
        return
    console.print(verdict_table(claim, verdict))
    for note in verdict.notes:
        console.print(f"  note: {note}")


def write_report(verdicts: list[tuple[Claim, ClaimVerdict]], html: Path | None) -> None:
    """The comparison report over every run behind these verdicts; its Claims section shows the verdicts."""
    from harness.analysis.cli import main as compare_main

    run_dirs = sorted(
        {
            str(paths.RESULTS / str(record["run"]))
            for _, verdict in verdicts
            for records in verdict.observations.values()
            for record in records
            if record.get("run") and (paths.RESULTS / str(record["run"])).is_dir()
        }
    )
    if not run_dirs:
        return
    target = html or paths.RESULTS / f"replicate-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}.html"
    if compare_main([*run_dirs, "--html", str(target), "--quiet"]) != 0:
        console.print("[yellow]the HTML report could not be written (see above); the verdicts are stored[/]")


def register(app: typer.Typer) -> None:
    @app.command("replicate")
    def replicate_cmd(
        claim_id: Annotated[str | None, typer.Argument(help="A claim id (see --list).")] = None,
        list_: Annotated[bool, typer.Option("--list", help="List every claim with its status.")] = False,
        all_: Annotated[bool, typer.Option("--all", help="Replicate every runnable claim.")] = False,
        quick: Annotated[
            bool, typer.Option("--quick", help="The claim's quick size (about 15 min).")
        ] = False,
        repetitions: Annotated[
            int | None,
            typer.Option("--repetitions", min=3, help="Repetitions per variant (default: the claim's)."),
        ] = None,
        html: Annotated[
            Path | None,
            typer.Option(
                "--html",
                help="Write the HTML report (with its Claims section) here "
                "[default: results/replicate-<time>.html].",
            ),
        ] = None,
    ) -> None:
        """Re-run published benchmark claims (docs/design.md §10) and judge them: replicated, contradicted or inconclusive."""
        try:
            claims = load_all()
            if list_:
                console.print(list_table(claims))
                return
            if all_ == (claim_id is not None):
                raise UserError("give one claim id, or --all, or --list")
            chosen = claims if all_ else [find(claim_id or "")]
        except ClaimError as exc:
            raise UserError(str(exc)) from exc
        verdicts = []
        for claim in chosen:
            verdict = replicate(claim, quick, repetitions)
            print_verdict(claim, verdict)
            verdicts.append((claim, verdict))
            if verdict.outcome != NOT_RUNNABLE:
                record = verdict_record(claim, size_for(claim, quick, repetitions), quick, verdict)
                console.print(f"  verdict stored in {save_verdict(record)}")
        write_report(verdicts, html)
        if len(verdicts) > 1:
            summary = Table(title="claims summary")
            for column in ("id", "verdict"):
                summary.add_column(column)
            for claim, verdict in verdicts:
                summary.add_row(claim.id, f"[{COLOURS[verdict.outcome]}]{verdict.outcome}[/]")
            console.print(summary)
