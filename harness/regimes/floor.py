"""The noise floor (issue #28): the load driver against a trivial static responder at the apps' ladder
rates. nginx answers every path with a fixed JSON document, so what the driver measures is the driver,
the loopback and the machine's scheduling: no app can beat it here. The report shows the floor's p99
beside each app's and labels a step within 2x of it "floor-limited" (harness/analysis/ladder_report.py).

The responder is measured as a deployment bidbench did not start (harness/engine/session.py's remote path): the
driver's figures only, no CPU or memory, so the ladder yields no cost per request.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness import paths
from harness.apps import php as php_app
from harness.console import UserError, console
from harness.db.cluster import free_port
from harness.engine.instances import stop_group
from harness.engine.session import RunOutcome, RunPlan, Session, new_session_id
from harness.regimes.ladder import LadderPlan, LadderSettings, geometric, ladder_plan

REGIME = "ladder-floor"
IMPL = "nginx"
VARIANT = "static"
BODY = '{"status":"ok","floor":"static nginx"}'
READY_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0
WARMUP_S = 2.0
"""A static responder has no JIT, GC or pool to settle: its warm-up only opens the driver's connections."""
STEPS = 8
"""The report reads the floor's p99 between its own steps, and a static responder never breaks, so it runs
every step: 8 across the apps' range, not the 16 of an app's ladder (fine only where an app breaks)."""

CONF = """# The noise floor's static responder (harness/regimes/floor.py): every path answers 200 with a fixed
# JSON document, so /health (the driver's bare mix) costs nginx a few microseconds.
daemon off;
master_process on;
worker_processes 1;
{user}
pid {run_dir}/nginx.pid;
lock_file {run_dir}/nginx.lock;
error_log stderr warn;
worker_rlimit_nofile 16384;

events {{
    worker_connections {worker_connections};
}}

http {{
    server_tokens off;
    access_log off;
    default_type application/json;
    charset off;
    client_body_temp_path {run_dir}/tmp/client_body;
    fastcgi_temp_path {run_dir}/tmp/fastcgi;
    proxy_temp_path {run_dir}/tmp/proxy;
{optional_temp_paths}
    # Keep-alive as the apps' servers hold it (php-app/conf/nginx.conf.tmpl).
    keepalive_timeout {keepalive_timeout};
    keepalive_requests {keepalive_requests};
    tcp_nodelay on;

    server {{
        listen 127.0.0.1:{port};
        location / {{
            return 200 '{body}';
        }}
    }}
}}
"""


@dataclass(frozen=True)
class Responder:
    url: str
    version: str
    conf: str
    pid: int


def render_conf(run_dir: Path, port: int, user: str | None) -> str:
    _, configure = php_app.nginx_build()
    optional = "".join(
        f"    {module}_temp_path {run_dir}/tmp/{module};\n"
        for module in ("scgi", "uwsgi")
        if f"--without-http_{module}_module" not in configure
    )
    return CONF.format(
        user=f"user {user};" if user else "",
        run_dir=run_dir,
        worker_connections=php_app.NGINX_WORKER_CONNECTIONS,
        optional_temp_paths=optional,
        keepalive_timeout=php_app.NGINX_KEEPALIVE_TIMEOUT,
        keepalive_requests=php_app.NGINX_KEEPALIVE_REQUESTS,
        port=port,
        body=BODY,
    )


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/health", timeout=1.0) as response:  # noqa: S310 - loopback
            return response.status == 200
    except OSError:  # urllib's URLError included
        return False


@contextmanager
def static_responder(run_dir: Path | None = None) -> Iterator[Responder]:
    """nginx on 127.0.0.1 at a free port, answering every path with BODY; stopped on leaving, whatever
    happened (its master and worker share a new process group, so nothing outlives the block)."""
    binary = php_app.nginx_binary()
    version, _ = php_app.nginx_build()
    scratch = run_dir is None  # ours to remove afterwards; the manifest keeps the configuration
    run_dir = (run_dir or paths.RUNTIME / f"floor-{new_session_id()}").resolve()
    (run_dir / "tmp").mkdir(parents=True, exist_ok=True)
    # nginx refuses to run workers as root without a user directive naming someone.
    user = " ".join(php_app.PhpDriver._worker_account()) if os.geteuid() == 0 else None
    port = free_port()
    conf = render_conf(run_dir, port, user)
    (run_dir / "nginx.conf").write_text(conf)
    argv = [binary, "-p", f"{run_dir}/", "-c", str(run_dir / "nginx.conf")]
    if php_app.version_tuple(version) >= (1, 19, 5):
        argv += ["-e", "stderr"]
    with (run_dir / "nginx.log").open("wb") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not _answers(url):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = (run_dir / "nginx.log").read_text(errors="replace")[-800:]
                raise UserError(f"the floor's nginx did not answer {url}/health: {tail or 'no output'}")
            time.sleep(0.1)
        yield Responder(url, version, conf, process.pid)
    finally:
        stop_group(process, signal.SIGQUIT, STOP_TIMEOUT_S)  # SIGQUIT: nginx's graceful stop
        if scratch:
            shutil.rmtree(run_dir, ignore_errors=True)


def floor_plan(base: RunPlan, rates: Sequence[float], settings: LadderSettings, url: str) -> RunPlan:
    """The apps' ladder plan pointed at the responder: same rates, steps and SLO; the bare mix. One pass:
    the extra passes feed an instance's cost fit, and the responder is not measured for CPU. WARMUP_S,
    at most the apps' own."""
    warmup_s = min(settings.warmup_s, WARMUP_S)
    plan = ladder_plan(base, IMPL, 1, 0, rates, replace(settings, cost_passes=1, warmup_s=warmup_s))
    return replace(
        plan,
        variant=VARIANT,
        regime=REGIME,
        point={"instances": 1},
        target_urls=(url,),
        resource_source="none",
        load=replace(plan.load, mix="bare"),
        prewarm=False,
    )


def run_floor(
    base: RunPlan, rates: Sequence[float], settings: LadderSettings, quiet: bool = False
) -> RunOutcome:
    """One floor ladder at `rates`, stored as a result folder of regime ladder-floor."""
    if len(rates) < 2:
        raise UserError(f"the floor needs at least 2 rates, got {list(rates)}")
    with static_responder() as responder:
        plan = floor_plan(base, tuple(float(r) for r in rates), settings, responder.url)
        with Session(plan, quiet) as session:
            session.common["floor"] = {
                "responder": f"nginx {responder.version}, 1 worker, `return 200` of a fixed document",
                "url": responder.url,
                "body": BODY,
                "conf": responder.conf,
            }
            return session.measure(plan)


def highest_rates(outcomes: Mapping[Any, Sequence[RunOutcome]]) -> tuple[float, ...] | None:
    """The ladder rates that reach highest among the ladders run: the floor covers every app's steps."""
    ladders = [
        tuple(float(r) for r in ((o.metrics or {}).get("ladder") or {}).get("rates") or [])
        for runs in outcomes.values()
        for o in runs
    ]
    ladders = [rates for rates in ladders if len(rates) >= 2]
    return max(ladders, key=lambda rates: rates[-1]) if ladders else None


def floor_rates(rates: Sequence[float]) -> tuple[float, ...]:
    """STEPS rates across the range an app's ladder ran (its cost passes repeat its lowest steps)."""
    ascent = sorted(set(rates))
    return geometric(ascent[0], ascent[-1], STEPS) if len(ascent) > STEPS else tuple(ascent)


def floor_after_ladders(plan: LadderPlan, outcomes: Mapping[Any, Sequence[RunOutcome]]) -> RunOutcome | None:
    """`./bidbench ladder --floor`: one floor ladder at the highest app's rates, after the apps' ladders."""
    rates = highest_rates(outcomes)
    if rates is None:
        console.print("[yellow]no floor:[/] no ladder finished with its rates recorded")
        return None
    outcome = run_floor(plan.base, floor_rates(rates), plan.settings)
    steps = ((outcome.metrics or {}).get("ladder") or {}).get("steps") or []
    p99 = ", ".join(f"{s['rate']:,.0f}: {s['p99_ms']:.2f}" for s in steps if s.get("p99_ms") is not None)
    console.print(
        f"  noise floor (static nginx): {outcome.status}, p99 ms by step rate {p99 or '-'}"
        + (f" ({outcome.reason})" if outcome.reason else "")
        + f"  -> {outcome.folder.path.name}"
    )
    return outcome
