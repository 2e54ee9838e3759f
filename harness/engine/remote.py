"""Resource figures of a deployment bidbench did not start (`./bidbench run --target-url`).

Latency, throughput and errors always come from the load driver. CPU and memory come from a pluggable source:
- `none`: unknown. The result folder says so, and no figure is normalized per CPU.
- `docker`: the Docker Engine stats API on its unix socket, per container.
- `prometheus`: an instant query per sample, e.g. cAdvisor's container_cpu_usage_seconds_total for a pod.
Each source looks like a resource group to the sampler: cumulative CPU seconds plus memory.
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from harness.console import UserError
from harness.engine.resources import ReadOnlyGroup, ResourceGroup, Usage

SOURCES = ("none", "docker", "prometheus")


class _UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, socket_path: str, timeout: float = 5.0) -> None:
        super().__init__("localhost", timeout=timeout)
        self.socket_path = socket_path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.socket_path)
        self.sock = sock


class DockerStatsSource(ReadOnlyGroup):
    backend = "docker-stats"

    def __init__(self, container: str, socket_path: str = "/var/run/docker.sock") -> None:
        super().__init__(f"docker:{container}")
        self.container = container
        self.socket_path = socket_path

    def _stats(self) -> dict[str, object]:
        conn = _UnixHTTPConnection(self.socket_path)
        try:
            conn.request(
                "GET", f"/containers/{urllib.parse.quote(self.container)}/stats?stream=false&one-shot=true"
            )
            response = conn.getresponse()
            body = response.read()
        finally:
            conn.close()
        if response.status != 200:
            raise OSError(f"docker stats for {self.container}: HTTP {response.status}")
        return json.loads(body)

    def cpu_seconds(self) -> float:
        return self.usage().cpu_seconds

    def usage(self) -> Usage:
        stats = self._stats()
        cpu_ns = stats["cpu_stats"]["cpu_usage"]["total_usage"]  # type: ignore[index]
        memory = stats.get("memory_stats", {})
        used = int(memory.get("usage", 0))  # type: ignore[union-attr]
        # Like `docker stats`: working set = usage minus inactive file cache.
        inactive = int(memory.get("stats", {}).get("inactive_file", 0))  # type: ignore[union-attr]
        working = max(used - inactive, 0)
        return Usage(cpu_seconds=int(cpu_ns) / 1e9, rss_bytes=working, pss_bytes=working)


@dataclass(frozen=True)
class PrometheusQueries:
    cpu_seconds: str
    """Cumulative CPU seconds, e.g. sum(container_cpu_usage_seconds_total{pod="bidbench-java-0"})."""
    memory_bytes: str
    """Working-set bytes, e.g. sum(container_memory_working_set_bytes{pod="bidbench-java-0"})."""


class PrometheusSource(ReadOnlyGroup):
    backend = "prometheus"
    exact_cpu = False  # scrape intervals make it a sampled figure

    def __init__(self, name: str, base_url: str, queries: PrometheusQueries) -> None:
        super().__init__(f"prometheus:{name}")
        self.base_url = base_url.rstrip("/")
        self.queries = queries

    def _scalar(self, query: str) -> float:
        url = f"{self.base_url}/api/v1/query?{urllib.parse.urlencode({'query': query})}"
        with urllib.request.urlopen(url, timeout=5) as response:
            data = json.loads(response.read())
        result = data.get("data", {}).get("result", [])
        if data.get("status") != "success" or not result:
            raise OSError(f"prometheus query returned nothing: {query}")
        return float(result[0]["value"][1])

    def cpu_seconds(self) -> float:
        return self._scalar(self.queries.cpu_seconds)

    def usage(self) -> Usage:
        memory = int(self._scalar(self.queries.memory_bytes))
        return Usage(cpu_seconds=self.cpu_seconds(), rss_bytes=memory, pss_bytes=memory)


def remote_sections(urls: list[str], source: str, note: str) -> dict[str, Any]:
    """The manifest sections of a deployment bidbench did not start: where it is, and what its CPU and
    memory figures come from (`note`)."""
    return {
        "target": {"urls": urls, "resource_source": source, "note": note},
        "resource_backend": {"name": f"remote:{source}", "description": note},
    }


def build_sources(source: str, targets: list[str], options: dict[str, str]) -> dict[str, ResourceGroup]:
    """One resource source per target instance, named remote-0, remote-1, ..."""
    if source == "none":
        return {}
    names = [f"remote-{i}" for i in range(len(targets))]
    if source == "docker":
        containers = [c for c in options.get("containers", "").split(",") if c]
        if len(containers) != len(targets):
            raise UserError(
                "--resource-source docker needs --containers with one container name per --target-url"
            )
        return {
            name: DockerStatsSource(c, options.get("docker_socket", "/var/run/docker.sock"))
            for name, c in zip(names, containers, strict=True)
        }
    if source == "prometheus":
        url = options.get("prometheus_url")
        cpu, memory = options.get("cpu_query"), options.get("memory_query")
        if not url or not cpu or not memory:
            raise UserError(
                "--resource-source prometheus needs --prometheus-url, --cpu-query and --memory-query; use {i} in the "
                'queries for the instance index, e.g. sum(container_cpu_usage_seconds_total{pod=~"bidbench-java-.*",pod_index="{i}"})'
            )
        return {
            name: PrometheusSource(
                name, url, PrometheusQueries(cpu.replace("{i}", str(i)), memory.replace("{i}", str(i)))
            )
            for i, name in enumerate(names)
        }
    raise UserError(f"unknown resource source {source!r}; choose from {', '.join(SOURCES)}")
