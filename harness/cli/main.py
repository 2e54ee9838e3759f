"""The ./bidbench command line. Each command is a thin layer over one harness module."""

from __future__ import annotations

import inspect
import os
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from harness import __version__, apps, paths
from harness.analysis.summary_table import print_run
from harness.cli import aa, claims, collect, compare, faults, ladder, options, overhead, regimes, side_by_side
from harness.cli.interrupts import stop_on_signals
from harness.cli.test_suites import run_all
from harness.console import UserError, console, err_console, widen_for_logs
from harness.db import ready
from harness.db import seed as seeding
from harness.db.cluster import EmbeddedCluster
from harness.db.target import external_url, mask_password
from harness.engine import session
from harness.engine.driver import FIXED_RATE_WARMUP_S, LoadSettings
from harness.engine.serve import ServeOptions
from harness.engine.serve import serve as run_serve
from harness.engine.validity import Slo
from harness.tools import toolchain
from harness.tools.licences import main as licences_main

app = typer.Typer(
    help=(
        "bidbench: compare Java, Node.js and PHP implementations of one auction service, fairly.\n\n"
        "Start with `./bidbench demo` (everything, about 7 minutes once installed) or `./bidbench test` (the test suites). "
        "Both install what they need. Results go to results/."
    ),
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)
db_app = typer.Typer(
    help="The embedded PostgreSQL: start, stop, seed deterministic data, reset to the seeded state.",
    no_args_is_help=True,
)
app.add_typer(db_app, name="db")


def _version(value: bool) -> None:
    if value:
        console.print(f"bidbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    pass


@app.command()
def setup() -> None:
    """Find or install every tool: JDK 17+, Maven, Node 20+, PHP-FPM 8.2 with pgsql/opcache, nginx, PHPUnit,
    PostgreSQL 15+ with contrib, and the load driver (loadgen/, built with Go into .bidbench/bin). Safe to run again."""
    toolchain.ensure(toolchain.all_tool_names(), quiet=False)


@db_app.command("up")
def db_up() -> None:
    """Start the embedded PostgreSQL (create it on first use) on 127.0.0.1 and a free port. Idempotent;
    recovers from a stale pid file or a killed server. With BIDBENCH_DATABASE_URL set, uses that server instead."""
    if external_url():
        console.print(f"using the existing server at {mask_password(external_url() or '')}; nothing to start")
        return
    toolchain.ensure(["db"])
    cluster = ready.embedded_cluster()
    for message in cluster.up().messages:
        console.print(message)
    console.print(f"DATABASE_URL={cluster.url('bidbench')}")


def _cluster_to_stop(command: str, force: bool) -> EmbeddedCluster:
    """Stopping the server under a running measurement would break it midway: unless forced, say who is
    connected."""
    cluster = ready.embedded_cluster()
    if not force and (clients := cluster.clients()):
        names = ", ".join(f"{name} ({count})" for name, count in clients.items())
        raise UserError(
            f"the database has open connections: {names}. A measurement or `./bidbench serve` is using it; "
            f"let it finish or stop it (Ctrl-C in its terminal), or run `./bidbench {command} --force`."
        )
    return cluster


@db_app.command("down")
def db_down(
    force: Annotated[
        bool, typer.Option("--force", help="Stop it even while clients (a measurement, serve) are connected.")
    ] = False,
) -> None:
    """Stop the embedded PostgreSQL (fast shutdown). The data stays. Refused while clients are connected."""
    cluster = _cluster_to_stop("db down", force)
    console.print("stopped" if cluster.down() else "not running")


@db_app.command("destroy")
def db_destroy(
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask.")] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="Destroy it even while clients (a measurement, serve) are connected."),
    ] = False,
) -> None:
    """Stop the embedded PostgreSQL and delete its data directory. Refused while clients are connected."""
    cluster = _cluster_to_stop("db destroy", force)
    if not yes and not typer.confirm(f"delete {cluster.base_dir}?"):
        raise typer.Exit(1)
    cluster.destroy()
    console.print(f"deleted {cluster.base_dir}")


@db_app.command("status")
def db_status() -> None:
    """Show whether the database runs, where, and what is seeded."""
    if external_url():
        console.print(f"external server: {mask_password(external_url() or '')}")
    else:
        cluster = ready.embedded_cluster()
        running = cluster.is_running()
        console.print(f"data dir:  {cluster.data_dir}")
        console.print(f"running:   {'yes, pid ' + str(cluster.server_pid()) if running else 'no'}")
        console.print(f"port:      {cluster.port or '-'}")
        if not running:
            return
    info = seeding.template_info(ready.server())
    console.print(f"template:  {info if info else 'not seeded (run ./bidbench db seed)'}")


@db_app.command("seed")
def db_seed(
    scale: Annotated[
        int, typer.Option(min=1, help="Data size: scale 1 is 10k users, 15k items, ~75k bids.")
    ] = 1,
    seed: Annotated[
        int, typer.Option(help="Random seed; the same (scale, seed) gives the same checksum.")
    ] = 42,
    no_indexes: Annotated[
        bool,
        typer.Option("--no-indexes", help="Omit the secondary indexes (the RUBiS missing-index variant)."),
    ] = False,
) -> None:
    """Fill a template database with deterministic data and clone the working database from it.
    Prints the content checksum."""
    ready.ensure_up()
    info = seeding.seed(ready.server(), scale, seed, with_indexes=not no_indexes)
    counts = ", ".join(f"{table} {count}" for table, count in info.row_counts.items())
    console.print(f"seeded scale={scale} seed={seed} in {info.seconds:.1f} s: {counts}")
    console.print(f"checksum {info.checksum}")


@db_app.command("reset")
def db_reset() -> None:
    """Restore the working database to the seeded state (about a second) and print its checksum."""
    server = ready.server()
    seconds = seeding.reset(server)
    console.print(f"reset in {seconds:.2f} s; checksum {seeding.checksum(server)}")


@db_app.command("checksum")
def db_checksum() -> None:
    """Print the content checksum of the working database."""
    console.print(seeding.checksum(ready.server()))


@db_app.command("url")
def db_url() -> None:
    """Print the DATABASE_URL of the working database (what the apps use)."""
    print(ready.server().url())


@db_app.command("psql")
def db_psql() -> None:
    """Open psql on the working database."""
    psql = shutil.which("psql") or str(toolchain.find_pg_bindir() / "psql")
    os.execvp(psql, [psql, ready.server().url()])


@app.command()
def build(
    impls: Annotated[
        list[str] | None, typer.Argument(help="java, node and/or php (default: all three).")
    ] = None,
) -> None:
    """Build the apps (Maven jar, npm ci with pg-native, PHP checks). Skips what has not changed."""
    for impl in impls or list(apps.IMPLS):
        toolchain.ensure([impl])
        console.print(f"building {impl} ...")
        apps.driver(impl).ensure_built()
    console.print("built")


@app.command()
def test(
    only: Annotated[
        list[str] | None,
        typer.Option(
            help="Run just these suites: loadgen, python, java, node, php, conformance (repeatable)."
        ),
    ] = None,
    pytest_args: Annotated[list[str] | None, typer.Argument(help="Extra arguments passed to pytest.")] = None,
) -> None:
    """Run every test suite (Python harness tests, each app's own tests, the conformance suite).
    Installs what it needs, starts and seeds the embedded database, prints each runner's summary line,
    and exits non-zero on any failure."""
    raise typer.Exit(run_all(only or [], pytest_args or []))


@app.command()
def run(
    impl: Annotated[str, typer.Option(help="Implementation: java, node or php.")] = "node",
    mix: Annotated[
        str, typer.Option(help="Request mix: browse (reads), bid (writes), mixed (85/15), payload.")
    ] = "browse",
    model: Annotated[
        str, typer.Option(help="open: fixed arrival rate (--rate). closed: --users with --think.")
    ] = "open",
    rate: Annotated[float, typer.Option(help="Open model: requests per second offered.")] = 200.0,
    users: Annotated[int, typer.Option(help="Closed model: concurrent virtual users.")] = 10,
    think: Annotated[
        str, typer.Option(help="Closed model: think time between requests, e.g. 0, 100ms.")
    ] = "0",
    duration: Annotated[str, typer.Option(help="Measurement window, e.g. 20s.")] = "20s",
    warmup: Annotated[
        str,
        typer.Option(
            help="Warm-up at the rate before the window (excluded from figures), e.g. 10s. The default "
            "is long enough for a fresh app under a CPU limit of 0.5 to reach its steady latency."
        ),
    ] = f"{FIXED_RATE_WARMUP_S:g}s",
    prewarm: Annotated[
        bool,
        typer.Option(
            help="Before the warm-up, ramped load without the CPU limit until the instances' CPU settles and "
            "a JVM's JIT compiler is idle (at most 60 s; recorded in the manifest), as ladders do: half the "
            "rate but at least 800 req/s per CPU of the instances (open model; a JIT stays cold at lower "
            "rates), or 800 req/s per CPU (closed model). Off: only the warm-up."
        ),
    ] = True,
    instances: Annotated[int, typer.Option(min=1, help="App instances, each in its own resource group.")] = 1,
    cpus: options.CPUS = None,
    invalid_share: Annotated[
        float, typer.Option(help="Share of deliberately invalid requests (STEP used 0.125).")
    ] = 0.0,
    knob: Annotated[
        list[str] | None,
        typer.Option(help="App knob KEY=VALUE, e.g. DB_POOL_SIZE=30, LOG_LEVEL=debug (repeatable)."),
    ] = None,
    variant: Annotated[
        str, typer.Option(help="A name for this configuration, used to group runs in comparisons.")
    ] = "default",
    scale: Annotated[int, typer.Option(min=1, help="Data scale.")] = 1,
    seed: Annotated[int, typer.Option(help="Data seed.")] = 42,
    slo_p99: options.SLO_P99_LATENCY = 50.0,
    slo_mean: options.SLO_MEAN_LATENCY = 8.0,
    target_url: Annotated[
        str | None,
        typer.Option(
            help="Measure an already running deployment instead: comma-separated base URLs (one per instance)."
        ),
    ] = None,
    resource_source: Annotated[
        str, typer.Option(help="With --target-url: where CPU/memory come from: none, docker or prometheus.")
    ] = "none",
    containers: Annotated[
        str | None, typer.Option(help="docker source: container names, one per target URL.")
    ] = None,
    prometheus_url: Annotated[
        str | None, typer.Option(help="prometheus source: the server's base URL.")
    ] = None,
    cpu_query: Annotated[
        str | None, typer.Option(help="prometheus source: PromQL for cumulative CPU seconds ({i} = index).")
    ] = None,
    memory_query: Annotated[
        str | None, typer.Option(help="prometheus source: PromQL for memory bytes ({i} = index).")
    ] = None,
) -> None:
    """One measured run: reset the data, start the instances under CPU limits, warm up, measure with the load driver,
    account CPU and memory, judge validity, and store everything in a new folder under results/.

    Example: ./bidbench run --impl node --mix browse --rate 300 --duration 20s"""
    plan = session.RunPlan(
        impl=impl,
        load=LoadSettings(
            targets=[],
            mix=mix,
            model=model,
            rate=rate,
            users=users,
            think_ms=options.parse_duration(think) * 1000,
            duration_s=options.parse_duration(duration),
            warmup_s=options.parse_duration(warmup),
            invalid_share=invalid_share,
        ),
        instances=instances,
        cpus=options.instance_cpus(cpus),
        knobs=options.parse_knobs(knob),
        variant=variant,
        point={"rate": rate} if model == "open" else {"users": users},
        scale=scale,
        seed=seed,
        slo=Slo(p99_ms=slo_p99, mean_ms=slo_mean),
        prewarm=prewarm,
        # As the ladders and side by side do: inside its quota a fresh JVM's JIT compiles with the requests'
        # CPU and can still be compiling when the window starts, which the steady-state check then fails.
        prewarm_unlimited=True,
    )
    if target_url:
        urls = tuple(u.strip().rstrip("/") for u in target_url.split(",") if u.strip())
        names = ("containers", "prometheus_url", "cpu_query", "memory_query")
        values = (containers, prometheus_url, cpu_query, memory_query)
        resource_options = {k: v for k, v in zip(names, values, strict=True) if v}
        plan = replace(
            plan,
            target_urls=urls,
            instances=len(urls),
            cpus=None,
            regime="remote",
            resource_source=resource_source,
            resource_options=resource_options,
        )
        console.print(f"run: remote target {', '.join(urls)} ({impl}), resources from: {resource_source}")
    else:
        console.print(f"run: {impl} x{instances} at {plan.load.describe()}, CPU limit {plan.cpus or 'none'}")
    outcome = session.execute(plan)
    print_run(outcome.folder.run_id, outcome.status, outcome.metrics, outcome.verdict, outcome.reason)
    console.print(f"result folder: {outcome.folder.path}")
    if outcome.status != "completed":
        raise typer.Exit(1)


@app.command()
def serve(
    impl: options.IMPLS = "java,node,php",
    cpus: options.CPUS = None,
    reset: Annotated[
        bool, typer.Option("--reset", help="Restore the working database from the seeded template first.")
    ] = False,
    json_out: Annotated[
        bool,
        typer.Option(
            "--json", help='Print only {"java": "http://127.0.0.1:PORT", ...} on stdout (one line).'
        ),
    ] = False,
    knob: Annotated[
        list[str] | None,
        typer.Option(help="App knob KEY=VALUE for every app, e.g. LOG_LEVEL=debug (repeatable)."),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(help="Fixed ports: java on PORT, node on PORT+1, php on PORT+2 (default: free ports)."),
    ] = None,
    scale: Annotated[int, typer.Option(min=1, help="Data scale, if the database must be seeded.")] = 1,
    seed: Annotated[int, typer.Option(help="Data seed, if the database must be seeded.")] = 42,
    ready_timeout: Annotated[
        float, typer.Option(min=0.1, help="Seconds each app may take to answer GET /ready.")
    ] = 180.0,
) -> None:
    """Start the apps exactly as measured runs do (same knobs, CPU limits, start-up line) on 127.0.0.1 and leave them running for curl, a browser or an outside test tool, until Ctrl-C or SIGTERM.

    Brings the database up and seeded, builds what is missing, and once every app answers /ready prints one line per app: its URL, PIDs and configuration. An app that dies is reported; the others keep serving. On exit everything serve started is stopped (the database only if serve started it).

    Example: ./bidbench serve --port 8080    (java on 8080, node on 8081, php on 8082)

    Then: curl -s http://127.0.0.1:8081/categories

    For scripts: ./bidbench serve --json prints {"java": "http://127.0.0.1:PORT", ...} on one line of stdout.
    """
    serve_options = ServeOptions(
        impls=options.parse_impls(impl),
        cpus=options.instance_cpus(cpus),
        knobs=options.parse_knobs(knob),
        reset=reset,
        json=json_out,
        scale=scale,
        seed=seed,
        port=port,
        ready_timeout_s=ready_timeout,
    )
    raise typer.Exit(run_serve(serve_options))


def _remove_orphaned_states() -> None:
    """As root in a checkout others cannot enter, runtime state lives in /var/tmp (harness/paths.py): a
    deleted clone's folder, its database's files included, would stay there for good."""
    for folder in paths.orphaned_states():
        owner = paths.checkout_of(folder)
        shutil.rmtree(folder, ignore_errors=True)
        err_console.print(f"[dim]removed {folder}: the state of {owner}, a checkout that no longer exists[/]")


def main() -> None:
    stop_on_signals()
    widen_for_logs()
    _remove_orphaned_states()
    try:
        app(prog_name="bidbench")
    except UserError as exc:
        err_console.print(f"[bold red]error:[/] {exc}")
        sys.exit(2)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)


@app.command()
def conformance(
    impl: options.IMPLS = "java,node,php",
    part: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated parts: golden, differential, dbwork, concurrency, schemathesis (default: all)."
        ),
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write machine-readable results here.")
    ] = None,
    knob: Annotated[
        list[str] | None,
        typer.Option(help="App knob KEY=VALUE for every app under test, e.g. JAVA_POOL=driver (repeatable)."),
    ] = None,
) -> None:
    """Prove the apps do identical work (docs/design.md §3): golden cases with exact bodies, randomized differential
    sequences, database-work parity from pg_stat_statements, concurrent-bid invariants, and Schemathesis.
    Exits non-zero on any difference, naming the app and the request type. --knob checks a variant
    (e.g. --impl java --knob JAVA_POOL=dbcp2); a part's own knobs (a golden session's) still win."""
    from harness.conformance.runner import run_conformance

    ready.ensure_up()  # the suite clones the seeded template into its own database; nobody else's data is touched
    impls = options.parse_impls(impl)
    for name in impls:
        toolchain.ensure([name])
    parts = [p.strip() for p in part.split(",")] if part else None
    raise typer.Exit(run_conformance(impls, parts, json_out, options.parse_knobs(knob)))


compare.register(app)


@app.command()
def licences(
    write: Annotated[bool, typer.Option("--write", help="Regenerate THIRD_PARTY.md.")] = False,
) -> None:
    """Check every dependency's licence against licences.yaml, offline (also part of `./bidbench test`);
    --write regenerates THIRD_PARTY.md."""
    raise typer.Exit(licences_main(["--write"] if write else []))


@app.command()
def demo() -> None:
    """The main job, from a fresh clone: install the tools, seed the embedded PostgreSQL, build the three
    apps, then compare java, node and php side by side (3 fresh starts, each measuring all three in the
    same seconds, then each one's capacity in turns), print the comparison and write it as JSON and HTML
    under results/. About 7 minutes on 2 cores once the tools are installed; every fresh start is kept."""
    from harness.cli.demo import run_demo

    raise typer.Exit(run_demo())


for module in (regimes, faults, collect, ladder, aa, side_by_side, overhead, claims):
    module.register(app)


def _reflow(text: str) -> str:
    """In rich mode typer keeps a help paragraph's source line breaks inside the terminal's own wrapping,
    so prose wrapped at 110 columns came out ragged: each prose paragraph becomes one line. A paragraph
    with indented lines (examples, a table) keeps its lines."""
    paragraphs = text.split("\n\n")
    return "\n\n".join(
        p if any(line.startswith(" ") for line in p.splitlines()) else " ".join(p.split()) for p in paragraphs
    )


def _reflow_help(group: typer.Typer) -> None:
    for command in group.registered_commands:
        command.help = _reflow(command.help or inspect.getdoc(command.callback) or "")
    for sub in group.registered_groups:
        _reflow_help(sub.typer_instance)


_reflow_help(app)
