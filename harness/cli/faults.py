"""`./bidbench faults <scenario>`: fault scenarios under a fixed arrival rate (harness/faults/)."""

from __future__ import annotations

from typing import Annotated

import typer

from harness.cli.options import IMPLS, instance_cpus, parse_impls
from harness.console import UserError, console
from harness.db.target import external_url
from harness.faults import report, runner, scenarios, slowclients

# One line per paragraph: rich keeps a help string's line breaks, and the terminal wraps it again.
SCENARIO_HELP = "\n\n".join(
    [
        "Fault scenarios, each under a fixed arrival rate of the mixed mix (reads and bids), bounded in time, on 127.0.0.1 only, stored like every run (regime `faults`) with faults.json (schedule, events, figures) and timeline.csv (per second: requests per error class, p50/p99 of the successes):",
        "[bold]db-outage[/] stop PostgreSQL for --outage seconds mid-run, then start it again. Measures the answers during the outage (the contract's 503; never a 500 or a hang), the time from the database's return to the first success, the time until p99 is back to the pre-fault baseline, and whether the app survived.",
        "[bold]slow-db[/] Toxiproxy between the app and PostgreSQL: --latency ms on every database reply, then every connection reset. Shows pool exhaustion (503 after the 5 s checkout timeout), errors and recovery.",
        "[bold]overload[/] 60 s at twice the measured capacity, then back: no crash, peak RSS, errors by class, time back to baseline latency.",
        "[bold]kill-instance[/] two instances; kill -9 one mid-run. The run is kept, the survivor keeps serving, no orphans.",
        "[bold]all[/] the four, one after the other.",
        "[bold]slow-clients[/] 200 connections hold half-sent uploads; p99 of ordinary GETs with and without them, and every answer the held uploads got (harness/faults/slowclients.py).",
        "After every scenario: no lost or duplicated bids (items.max_bid_cents/bid_count agree with bids; every 201 has its row). The rate is --share of the newest stored capacity of the implementation at --cpus (a `./bidbench ladder` at one instance), or --rate. Exit status 1 when an app answered 500, crashed, left an orphan or broke an invariant. `python compare.py results/` shows the resilience section with a timeline plot per run.",
        "The scenarios run on their own embedded PostgreSQL (.bidbench/pg-faults, seeded on first use, stopped at the end), so they neither stop nor disturb the database other runs use. With BIDBENCH_DATABASE_URL set they use that server instead, except db-outage, which refuses.",
    ]
)


def register(app: typer.Typer) -> None:
    @app.command(help=SCENARIO_HELP)
    def faults(
        scenario: Annotated[
            str, typer.Argument(help="db-outage, slow-db, overload, kill-instance, slow-clients or all.")
        ],
        impl: IMPLS = "java,node,php",
        cpus: Annotated[
            float, typer.Option(help="CPU limit per instance (the stored capacity must match).")
        ] = 0.25,
        share: Annotated[
            float, typer.Option(min=0.05, max=1.0, help="Share of the measured capacity to run at.")
        ] = 0.5,
        rate: Annotated[
            float | None,
            typer.Option(
                help="Arrival rate in req/s instead of --share of the measured capacity. overload's peak is "
                "still 2x the capacity: the stored one, or else --rate / --share (--rate 1200: peak 4800)."
            ),
        ] = None,
        outage: Annotated[
            float | None, typer.Option(help="db-outage: seconds the database is down (10).")
        ] = None,
        latency: Annotated[
            int, typer.Option(help="slow-db: milliseconds added to every database reply.")
        ] = 100,
        quick: Annotated[
            bool, typer.Option(help="The short versions the tests run (about 15-25 s each).")
        ] = False,
    ) -> None:
        limit = instance_cpus(cpus)
        if scenario == "slow-clients":  # self-contained, no load driver: harness/faults/slowclients.py
            raise typer.Exit(slowclients.main(parse_impls(impl), limit, quick))
        names = list(scenarios.NAMES) if scenario == "all" else [scenario]
        if any(name not in scenarios.NAMES for name in names):
            raise UserError(f"unknown scenario {scenario!r}; choose from {', '.join(scenarios.NAMES)} or all")
        impls = parse_impls(impl)
        failed: list[str] = []
        for name in names:
            options = {"db-outage": {"outage_s": outage}, "slow-db": {"latency_ms": latency}}.get(name, {})
            plan = scenarios.scenario(name, quick, **options)
            rows = []
            for impl_name in impls:
                choice = runner.fault_rate(impl_name, limit, share, rate)
                console.print(
                    f"[bold]{name}[/] {impl_name}: {choice.rate:g} req/s ({choice.source}); {plan.description}; "
                    f"{plan.warmup_s:g} s warm-up + {plan.duration_s:g} s"
                )
                result = runner.run_scenario(impl_name, plan, choice, cpus=limit)
                if result.folder is not None:
                    console.print(f"  -> {result.folder.path}")
                if result.status != "completed":
                    console.print(f"  [red]{result.status}: {result.reason}[/]")
                rows.append(result.row)
                if not result.passed:
                    failed.append(f"{name}/{impl_name}")
            report.print_table(name, plan.description, rows)
        if not external_url():
            runner.fault_cluster().down()
        if failed:
            console.print(f"[bold red]failed (500, crash, orphan or invariant): {', '.join(failed)}[/]")
            raise typer.Exit(1)
