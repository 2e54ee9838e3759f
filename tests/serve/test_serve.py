"""`./bidbench serve` end to end: the real command, real apps, the real PostgreSQL `./bidbench test` prepared.

Every serve here runs as a subprocess, as a user or a script starts it, and every wait is bounded. The
orphan checks go three ways: the PIDs serve reported, their process groups, and their resource groups
(cgroups), plus the harness's own instance marker (test_run_e2e's helper).
"""

from __future__ import annotations

import json
import os
import re
import selectors
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest
from ownership import instance_processes

from harness import paths
from harness.db.cluster import EmbeddedCluster, free_port
from harness.engine.serve import LOCK_PATH

# Bounded well above the start-up wait below, so a hung serve fails by its own message first.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

BIDBENCH = str(paths.ROOT / "bidbench")
# Java's first build on a shared 2-core machine takes minutes, then three apps start under half a CPU each.
START_TIMEOUT_S = 600.0
STOP_TIMEOUT_S = 120.0
APP_LINE = re.compile(r"^(java|node|php)\s+(http://127\.0\.0\.1:\d+)\s+pids ([\d,]+)\s", re.MULTILINE)


@dataclass
class Serve:
    proc: subprocess.Popen[str]
    err_path: Path
    urls: dict[str, str] = field(default_factory=dict)

    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    def pids(self) -> dict[str, list[int]]:
        return {impl: [int(p) for p in pids.split(",")] for impl, _, pids in APP_LINE.findall(self.stderr())}

    def wait_for_stderr(self, text: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and text not in self.stderr():
            time.sleep(0.5)
        assert text in self.stderr(), f"serve never said {text!r}:\n{self.stderr()}"

    def terminate(self) -> tuple[int, str]:
        """SIGTERM, then the exit code and whatever else reached stdout."""
        self.proc.send_signal(signal.SIGTERM)
        rest, _ = self.proc.communicate(timeout=STOP_TIMEOUT_S)
        return self.proc.returncode, rest


def _read_json_line(proc: subprocess.Popen[str], err_path: Path, timeout_s: float) -> dict[str, str]:
    assert proc.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        if selector.select(timeout=1.0):
            line = proc.stdout.readline()
            if line:
                return json.loads(line)
            break
    pytest.fail(f"serve printed no JSON line (exit {proc.poll()}):\n{err_path.read_text(errors='replace')}")


@contextmanager
def serving(tmp_path: Path, *args: str, timeout_s: float = START_TIMEOUT_S) -> Iterator[Serve]:
    """`./bidbench serve --json ARGS` until its JSON line; however the test ends, the serve is stopped."""
    err_path = tmp_path / f"serve-{len(list(tmp_path.glob('serve-*.err')))}.err"
    with err_path.open("w") as err:
        proc = subprocess.Popen(
            [BIDBENCH, "serve", "--json", *args],
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            text=True,
        )
    serve = Serve(proc, err_path)
    try:
        serve.urls = _read_json_line(proc, err_path, timeout_s)
        yield serve
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


def _get_json(url: str) -> object:
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.status == 200
        assert response.headers.get_content_type() == "application/json"
        return json.loads(response.read())


def _cgroups(pid: int) -> set[str]:
    """The bidbench resource groups a process is in, as paths below the cgroup root."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return set()
    return {line.split(":", 2)[2] for line in lines if "/bidbench/" in line}


def _cgroup_members(group: str) -> list[int]:
    members = []
    root = Path("/sys/fs/cgroup")
    # cgroup v2: one tree; v1: one tree per controller (cpu,cpuacct/, cpuset/, memory/).
    candidates = [root / group.lstrip("/") / "cgroup.procs", *root.glob(f"*{group}/cgroup.procs")]
    for procs in candidates:
        try:
            members += [int(p) for p in procs.read_text().split()]
        except OSError:
            continue
    return members


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _ours(serve_pid: int) -> list[psutil.Process]:
    """Live app processes of this serve, by the instance marker (their run directory under its own)."""
    return instance_processes([paths.RUNTIME / f"serve-{serve_pid}"], tree_of=serve_pid)


@dataclass
class Footprint:
    """Everything a serve started, taken while it runs, to check afterwards that all of it is gone."""

    serve_pid: int
    pids: set[int]
    process_groups: set[int]
    cgroups: set[str]

    @classmethod
    def of(cls, serve: Serve) -> Footprint:
        pids = {pid for group in serve.pids().values() for pid in group}
        assert pids, f"serve reported no PIDs:\n{serve.stderr()}"
        # The launcher execs the harness, so serve's pid is the process that started every app. (nginx and
        # PHP-FPM clear their environment, so the instance marker finds only java's and node's processes.)
        descendants = {p.pid for p in psutil.Process(serve.proc.pid).children(recursive=True)}
        assert pids <= descendants, f"reported PIDs {sorted(pids - descendants)} are not serve's processes"
        everything = pids | {p.pid for p in _ours(serve.proc.pid)}
        return cls(
            serve.proc.pid,
            everything,
            {os.getpgid(pid) for pid in everything},
            {group for pid in everything for group in _cgroups(pid)},
        )

    def assert_gone(self) -> None:
        left = [pid for pid in self.pids if _alive(pid)]
        assert not left, f"processes left: {[psutil.Process(p).cmdline() for p in left if _alive(p)]}"
        for pgid in self.process_groups:
            with pytest.raises(ProcessLookupError):
                os.killpg(pgid, 0)
        for group in self.cgroups:
            assert not _cgroup_members(group), f"resource group {group} still has processes"
        assert not _ours(self.serve_pid)


def test_serves_the_three_apps_and_sigterm_leaves_nothing(tmp_path: Path, database_url: str) -> None:
    with serving(tmp_path) as serve:
        assert set(serve.urls) == {"java", "node", "php"}
        for impl, url in serve.urls.items():
            assert url.startswith("http://127.0.0.1:"), url
            body = _get_json(url + "/categories")
            assert isinstance(body, dict) and body["categories"], f"{impl}: {body}"
        assert {impl: url for impl, url, _ in APP_LINE.findall(serve.stderr())} == serve.urls
        assert "serve: ready. Try: curl -s http://127.0.0.1:" in serve.stderr()
        footprint = Footprint.of(serve)
        if "(cgroup-v" in serve.stderr():
            assert footprint.cgroups, "the apps are not in bidbench resource groups"
        code, rest = serve.terminate()
    assert code == 0, serve.stderr()
    assert rest == "", f"stdout carries more than the JSON line: {rest!r}"
    assert "serve: stopped; nothing left running" in serve.stderr()
    footprint.assert_gone()
    assert not LOCK_PATH.exists()
    # The database was up before serve (./bidbench test started it), so serve must leave it up.
    assert EmbeddedCluster().is_running()


def test_an_app_killed_from_outside_is_reported_and_the_others_keep_serving(
    tmp_path: Path, database_url: str
) -> None:
    # Two apps are enough to see the other keep serving; a JVM's start under its limit is the slow part.
    with serving(tmp_path, "--impl", "node,php") as serve:
        footprint = Footprint.of(serve)
        victim = serve.pids()["node"][0]
        os.kill(victim, signal.SIGKILL)
        serve.wait_for_stderr("serve: node died (node killed by SIGKILL); still serving php", 60)
        assert "app.log ---" in serve.stderr(), "the dead app's log tail is missing"
        assert serve.proc.poll() is None, "serve stopped when one app died"
        _get_json(serve.urls["php"] + "/categories")
        code, _ = serve.terminate()
    assert code == 0, serve.stderr()
    footprint.assert_gone()


def test_unknown_implementation_is_refused_and_starts_nothing(database_url: str) -> None:
    refused = subprocess.Popen(
        [BIDBENCH, "serve", "--impl", "node,ruby"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    stdout, stderr = refused.communicate(timeout=120)
    assert refused.returncode != 0
    assert "unknown implementation 'ruby'" in stderr and "java, node, php" in stderr
    assert stdout == ""
    assert not LOCK_PATH.exists()
    assert not _ours(refused.pid)


def test_a_second_serve_is_refused_while_one_runs(tmp_path: Path, database_url: str) -> None:
    with serving(tmp_path, "--impl", "node") as first:
        second = subprocess.run(
            [BIDBENCH, "serve", "--impl", "node"], capture_output=True, text=True, timeout=120
        )
        assert second.returncode != 0
        assert f"another ./bidbench serve is running (pid {first.proc.pid})" in second.stderr
        assert first.urls["node"] in second.stderr, "the refusal should say where the running apps are"
        assert first.proc.poll() is None and LOCK_PATH.exists()
        _get_json(first.urls["node"] + "/categories")
        footprint = Footprint.of(first)
        code, _ = first.terminate()
    assert code == 0, first.stderr()
    footprint.assert_gone()


def test_a_stale_lock_is_taken_over(tmp_path: Path, database_url: str) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait(timeout=30)
    assert not LOCK_PATH.exists(), "a serve is running on this checkout; this test needs the lock"
    LOCK_PATH.write_text(json.dumps({"pid": gone.pid}))
    try:
        with serving(tmp_path, "--impl", "node") as serve:
            assert "removed a stale lock" in serve.stderr()
            assert json.loads(LOCK_PATH.read_text())["pid"] == serve.proc.pid
            code, _ = serve.terminate()
        assert code == 0, serve.stderr()
    finally:
        if LOCK_PATH.exists() and json.loads(LOCK_PATH.read_text()).get("pid") == gone.pid:
            LOCK_PATH.unlink()
    assert not LOCK_PATH.exists()


def test_a_taken_port_is_refused_before_anything_starts(database_url: str) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        # --port is java's; node listens one above it.
        done = subprocess.run(
            [BIDBENCH, "serve", "--impl", "node", "--port", str(taken - 1)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode != 0
    assert f"port {taken} on 127.0.0.1 (for node" in done.stderr and "in use" in done.stderr
    assert not LOCK_PATH.exists()


def test_an_app_not_ready_in_time_shows_its_log_and_leaves_nothing(tmp_path: Path, database_url: str) -> None:
    # No JVM answers /ready a tenth of a second after it is started, least of all under half a CPU.
    err_path = tmp_path / "serve.err"
    with err_path.open("w") as err:
        done = subprocess.run(
            [BIDBENCH, "serve", "--impl", "java", "--ready-timeout", "0.1", "--port", str(free_port())],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            timeout=START_TIMEOUT_S,
        )
    stderr = err_path.read_text()
    assert done.returncode != 0
    assert "java-0 was not ready within 0 s" in stderr and "app.log ---" in stderr, stderr
    serve_pid = int(re.search(r"serve-(\d+)", stderr).group(1))  # type: ignore[union-attr]
    assert not _ours(serve_pid)
    assert not LOCK_PATH.exists()


def test_a_database_serve_started_is_stopped_on_exit(tmp_path: Path, database_url: str) -> None:
    """With its own state directory serve finds no database running, so it creates, starts and seeds one,
    and must stop it on exit. The shared database is never touched. php only: node and java keep their
    build stamps in the state directory, and a fresh one would rebuild them under others' running apps."""
    import shutil
    import uuid

    # Not below /tmp/pytest-of-root (mode 700): PostgreSQL's unprivileged user must reach it when we are root.
    state = paths.world_reachable_state() / "test-clusters" / f"serve-{uuid.uuid4().hex[:8]}"
    state.mkdir(parents=True)
    cluster = EmbeddedCluster(base_dir=state / "pg")
    env = dict(os.environ, BIDBENCH_STATE=str(state))
    env.pop("BIDBENCH_DATABASE_URL", None)
    err_path = tmp_path / "serve.err"
    try:
        with err_path.open("w") as err:
            proc = subprocess.Popen(
                [BIDBENCH, "serve", "--json", "--impl", "php"],
                stdout=subprocess.PIPE,
                stderr=err,
                stdin=subprocess.DEVNULL,
                text=True,
                env=env,
            )
        try:
            urls = _read_json_line(proc, err_path, START_TIMEOUT_S)
            assert cluster.is_running(), "serve did not use the database of its own state directory"
            _get_json(urls["php"] + "/categories")
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=STOP_TIMEOUT_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
        assert proc.returncode == 0, err_path.read_text()
        assert "serve: stopped the database serve had started" in err_path.read_text()
        assert not cluster.is_running()
        assert EmbeddedCluster().is_running(), "the shared database must be left as it was"
    finally:
        cluster.destroy()
        shutil.rmtree(state, ignore_errors=True)
