"""Runs against a deployment bidbench did not start (`run --target-url`), and the resource sources."""

from __future__ import annotations

import json
import socketserver
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from harness import paths
from harness.apps import driver
from harness.apps.base import InstanceSpec
from harness.db.cluster import free_port
from harness.engine.driver import LoadSettings
from harness.engine.instances import running_instance
from harness.engine.remote import DockerStatsSource, PrometheusQueries, PrometheusSource, build_sources
from harness.engine.session import RunPlan, execute


@pytest.mark.slow
def test_remote_run_against_local_instance_marks_resources_unknown(database_url: str, tmp_path: Path) -> None:
    node = driver("node")
    node.ensure_built()
    spec = InstanceSpec("node", 0, free_port(), database_url, paths.RUNTIME / f"remote-test-{tmp_path.name}")
    with running_instance(node, spec) as instance:
        plan = RunPlan(
            impl="node",
            load=LoadSettings(targets=[], rate=50, duration_s=4, warmup_s=2),
            target_urls=(instance.base_url,),
            instances=1,
            cpus=None,
            regime="remote",
            results_dir=tmp_path,
        )
        outcome = execute(plan, quiet=True)
    assert outcome.status == "completed", outcome.reason
    manifest = outcome.folder.read_json("manifest.json")
    metrics = outcome.folder.read_json("metrics.json")
    assert manifest["target"]["resource_source"] == "none"
    assert "UNKNOWN" in manifest["target"]["note"]
    assert metrics["resources_known"] is False
    assert metrics["normalized_throughput"] is None and metrics["cpu_pct_total"] is None
    assert metrics["ok"] > 0 and metrics["sys_errors"] == 0
    assert metrics["loadgen_cpu_pct"] is not None


class _DockerHandler(BaseHTTPRequestHandler):
    calls = 0

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        _DockerHandler.calls += 1
        body = json.dumps(
            {
                "cpu_stats": {"cpu_usage": {"total_usage": 2_500_000_000 * _DockerHandler.calls}},
                "memory_stats": {"usage": 300 * 2**20, "stats": {"inactive_file": 100 * 2**20}},
            }
        ).encode()
        assert self.path.startswith("/containers/app-1/stats")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _UnixHTTPServer(socketserver.UnixStreamServer):
    def get_request(self):  # type: ignore[no-untyped-def]
        request, _ = super().get_request()
        return request, ("local", 0)


@pytest.fixture
def docker_socket(tmp_path: Path) -> Iterator[str]:
    path = str(tmp_path / "docker.sock")
    server = _UnixHTTPServer(path, _DockerHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield path
    server.shutdown()
    server.server_close()


def test_docker_source_reads_cpu_and_working_set(docker_socket: str) -> None:
    source = DockerStatsSource("app-1", docker_socket)
    first, second = source.usage(), source.usage()
    assert second.cpu_seconds - first.cpu_seconds == pytest.approx(2.5)
    assert first.rss_bytes == 200 * 2**20


class _PromHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        value = "12.5" if "cpu" in self.path else str(64 * 2**20)
        body = json.dumps({"status": "success", "data": {"result": [{"value": [0, value]}]}}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_prometheus_source_and_query_templating() -> None:
    server = HTTPServer(("127.0.0.1", 0), _PromHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}"
        source = PrometheusSource("x", url, PrometheusQueries('sum(cpu{i="0"})', "sum(mem)"))
        usage = source.usage()
        assert usage.cpu_seconds == 12.5 and usage.rss_bytes == 64 * 2**20
        sources = build_sources(
            "prometheus",
            ["a", "b"],
            {"prometheus_url": url, "cpu_query": 'cpu{pod="p-{i}"}', "memory_query": "m{i}"},
        )
        assert [s.queries.cpu_seconds for s in sources.values()] == ['cpu{pod="p-0"}', 'cpu{pod="p-1"}']  # type: ignore[attr-defined]
    finally:
        server.shutdown()


def test_sources_refuse_incomplete_options() -> None:
    with pytest.raises(Exception, match="one container name per"):
        build_sources("docker", ["a", "b"], {"containers": "only-one"})
    with pytest.raises(Exception, match="needs --prometheus-url"):
        build_sources("prometheus", ["a"], {})
    assert build_sources("none", ["a"], {}) == {}
