"""Deliberately unequal pseudo-implementations for the negative controls.

Each is a conformance Target: a small forwarding proxy in front of a real app (started on the suite's
private database like any target). The proxy passes every request through byte for byte, except the one
request type it cheats on:

- `CachingTarget` caches GET /items/{id} responses and never invalidates them (a handler that caches a
  row): fewer statements for repeated reads, stale bodies after a write;
- `SkippingTarget` answers GET /items/{id} itself with the contract's own statements, except that it
  skips `top_bids` when the item has no bids (a handler that skips a query): identical bytes, less work.
"""

from __future__ import annotations

import re
import socket
import socketserver
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from email.utils import formatdate

import psycopg

from harness.conformance.canon import dumps
from harness.conformance.client import Connection, RawRequest, RawResponse, TransportError
from harness.conformance.dbstate import ConformanceDb
from harness.conformance.oracle import Oracle
from harness.conformance.targets import AppTarget, Target

LIMIT = 65_536
ITEM_RE = re.compile(r"^/items/([0-9]{1,10})$")

Answer = Callable[[RawRequest], RawResponse | None]
"""A cheat: returns a response for requests it takes over, None to forward."""


def _read_request(rfile) -> RawRequest | None:  # noqa: ANN001 - a socket makefile
    line = rfile.readline(65_537)
    if not line:
        return None
    method, target, _ = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    headers: list[tuple[str, str]] = []
    while True:
        h = rfile.readline(65_537).decode("latin-1").rstrip("\r\n")
        if not h:
            break
        key, _, value = h.partition(":")
        headers.append((key.strip(), value.strip()))
    lower = {k.lower(): v for k, v in headers}
    keep = [
        (k, v)
        for k, v in headers
        if k.lower() not in ("host", "content-length", "transfer-encoding", "connection")
    ]
    target_str = target.encode("latin-1").decode("utf-8", "surrogateescape")
    if "chunked" in lower.get("transfer-encoding", "").lower():
        body = bytearray()
        while True:
            size = int(rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                break
            body += rfile.read(size)
            rfile.readline()
            if len(body) > LIMIT:
                return RawRequest(method, target_str, tuple(keep), bytes(body), chunk_size=4096)
        return RawRequest(method, target_str, tuple(keep), bytes(body), chunk_size=4096)
    length = int(lower.get("content-length", "0") or 0)
    if length > LIMIT:
        return RawRequest(method, target_str, tuple(keep), declared_length=length)
    body = rfile.read(length) if length else b""
    return RawRequest(method, target_str, tuple(keep), body)


def _write_response(wfile, response: RawResponse, method: str) -> None:  # noqa: ANN001
    head = [f"HTTP/1.1 {response.status} {response.reason or 'OK'}"]
    for key, value in response.headers:
        if key.lower() not in ("connection", "keep-alive", "transfer-encoding", "content-length"):
            head.append(f"{key}: {value}")
    body = response.body or b""
    head.append(f"Content-Length: {len(body)}")
    head.append("Connection: close" if response.closed else "Connection: keep-alive")
    wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
    if method != "HEAD":
        wfile.write(body)
    wfile.flush()


class _Proxy(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, upstream: str, answer: Answer) -> None:
        self.upstream = upstream
        self.answer = answer
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(socketserver.StreamRequestHandler):
    server: _Proxy

    def handle(self) -> None:
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with Connection(self.server.upstream) as upstream:
            while True:
                try:
                    req = _read_request(self.rfile)
                except (ValueError, OSError):
                    return
                if req is None:
                    return
                response = self.server.answer(req)
                if response is None:
                    try:
                        response = upstream.request(req)
                    except (TransportError, OSError):
                        return
                try:
                    _write_response(self.wfile, response, req.method)
                except OSError:
                    return
                if response.closed or req.declared_length is not None:
                    return


class ProxyTarget(Target):
    """A real app behind a proxy that may take over some requests (`make_answer`)."""

    def __init__(self, name: str, upstream: AppTarget) -> None:
        self.name = name
        self.upstream = upstream
        self.knobs: dict[str, str] = {}

    def prepare(self) -> None:
        self.upstream.prepare()

    def make_answer(self, db: ConformanceDb, upstream_url: str) -> tuple[Answer, Callable[[], None]]:
        return (lambda req: None), (lambda: None)

    @contextmanager
    def running(self, db: ConformanceDb, knobs: dict[str, str] | None = None) -> Iterator[str]:
        self.knobs = dict(knobs or {})
        with self.upstream.running(db, knobs) as upstream_url:
            answer, close = self.make_answer(db, upstream_url)
            proxy = _Proxy(upstream_url, answer)
            thread = threading.Thread(target=proxy.serve_forever, daemon=True)
            thread.start()
            try:
                yield f"http://127.0.0.1:{proxy.server_address[1]}"
            finally:
                proxy.shutdown()
                proxy.server_close()
                close()


class CachingTarget(ProxyTarget):
    """Caches every 200 of GET /items/{id} forever: a handler that caches a row."""

    def make_answer(self, db: ConformanceDb, upstream_url: str) -> tuple[Answer, Callable[[], None]]:
        cache: dict[str, RawResponse] = {}
        lock = threading.Lock()

        def answer(req: RawRequest) -> RawResponse | None:
            if req.method != "GET" or not ITEM_RE.match(req.target):
                return None
            with lock:
                hit = cache.get(req.target)
            if hit is not None:
                return hit
            with Connection(upstream_url) as conn:
                response = conn.request(req)
            if response.status == 200:
                with lock:
                    cache[req.target] = response
            return response

        return answer, cache.clear


class SkippingTarget(ProxyTarget):
    """Answers GET /items/{id} itself and skips top_bids for items without bids: a skipped query."""

    def make_answer(self, db: ConformanceDb, upstream_url: str) -> tuple[Answer, Callable[[], None]]:
        conn = psycopg.connect(db.url, autocommit=True)
        oracle = Oracle(conn, skip_top_bids_without_bids=True)
        lock = threading.Lock()

        def answer(req: RawRequest) -> RawResponse | None:
            m = ITEM_RE.match(req.target)
            if req.method != "GET" or not m or not 1 <= int(m.group(1)) <= 2_147_483_647:
                return None
            with lock:
                status, body = oracle.get(req.target)
            data = dumps(body).encode("utf-8")
            headers = [("Content-Type", "application/json"), ("Date", formatdate(usegmt=True))]
            if self.knobs.get("SERVER_TIMING", "1") != "0":
                headers.append(("Server-Timing", "db;dur=0.000, app;dur=0.000"))
            return RawResponse(status=status, reason="OK", headers=headers, body=data)

        return answer, conn.close
