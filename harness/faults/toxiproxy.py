"""A real fault-injection proxy between the apps and PostgreSQL: Toxiproxy's server on 127.0.0.1.

The binary is built once with `go install` into .bidbench/bin (harness/tools/toolchain.py). `Toxiproxy` starts it
on a free loopback port, creates one TCP proxy in front of the database, and adds or removes toxics
(`latency`, `reset_peer`, ...) through its REST API.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from harness.db.cluster import free_port
from harness.engine.instances import stop_group
from harness.tools import toolchain


class ToxiproxyError(RuntimeError):
    pass


class Toxiproxy:
    """One toxiproxy-server process. Use as a context manager: it is always stopped afterwards."""

    def __init__(self, log_path: Path) -> None:
        self.binary = toolchain.toxiproxy_path()
        self.log_path = log_path
        self.api_port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    def start(self, timeout_s: float = 15.0) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [str(self.binary), "-host", "127.0.0.1", "-port", str(self.api_port)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ToxiproxyError(
                    f"toxiproxy-server exited with {self.proc.returncode}; see {self.log_path}"
                )
            try:
                self._call("GET", "/version")
                return
            except (urllib.error.URLError, OSError):
                time.sleep(0.1)
        self.stop()
        raise ToxiproxyError(f"toxiproxy-server did not answer within {timeout_s:.0f} s; see {self.log_path}")

    def stop(self) -> None:
        if self.proc is not None:
            stop_group(self.proc, signal.SIGTERM)

    def __enter__(self) -> Toxiproxy:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.api + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                text = response.read()
        except urllib.error.HTTPError as exc:
            raise ToxiproxyError(f"{method} {path}: HTTP {exc.code} {exc.read()[:300]!r}") from exc
        return json.loads(text) if text.strip() else None

    def create_proxy(self, name: str, upstream: tuple[str, int]) -> int:
        """A TCP proxy on a free loopback port to upstream; returns the port the apps should connect to."""
        port = free_port()
        upstream_at = f"{upstream[0]}:{upstream[1]}"
        proxy = {"name": name, "listen": f"127.0.0.1:{port}", "upstream": upstream_at, "enabled": True}
        self._call("POST", "/proxies", proxy)
        return port

    def add_toxic(
        self, proxy: str, name: str, kind: str, attributes: dict[str, Any], stream: str = "downstream"
    ) -> None:
        toxic = {"name": name, "type": kind, "stream": stream, "toxicity": 1.0, "attributes": attributes}
        self._call("POST", f"/proxies/{proxy}/toxics", toxic)

    def toxics(self, proxy: str) -> list[dict[str, Any]]:
        return list(self._call("GET", f"/proxies/{proxy}/toxics") or [])

    def clear(self, proxy: str) -> None:
        for toxic in self.toxics(proxy):
            self._call("DELETE", f"/proxies/{proxy}/toxics/{toxic['name']}")
