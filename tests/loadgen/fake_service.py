"""A tiny stand-in for the bidbench service, for testing the load driver (loadgen/) without a real app.

It answers the contract's routes with the contract's shapes (contract/openapi.yaml), statuses and error
rules that the load driver exercises (413 before reading the body, 404 route, 405, 400 id/paging/JSON,
415 content type, 409 low bid), and a `Server-Timing: db;dur=X, app;dur=Y` header on every response.
It keeps no database: items 1..15000 exist, categories 1..19 have open items, category 20 is empty.

Run alone (for overhead measurements): `python tests/loadgen/fake_service.py --port 18080`.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BODY_LIMIT = 65536
ID_RE = re.compile(r"^[0-9]{1,10}$")
PARAM_RE = re.compile(r"^[0-9]{1,9}$")
USERS = 10_000
ITEMS = 15_000
CATEGORIES = 20
TS = "2036-01-02T03:04:05.678Z"

ROUTES: list[tuple[re.Pattern[str], tuple[str, ...]]] = [
    (re.compile(r"^/health$"), ("GET",)),
    (re.compile(r"^/ready$"), ("GET",)),
    (re.compile(r"^/regions$"), ("GET",)),
    (re.compile(r"^/categories$"), ("GET",)),
    (re.compile(r"^/categories/([^/]+)/items$"), ("GET",)),
    (re.compile(r"^/items$"), ("POST",)),
    (re.compile(r"^/items/([^/]+)$"), ("GET", "PUT", "DELETE")),
    (re.compile(r"^/items/([^/]+)/bids$"), ("GET", "POST")),
    (re.compile(r"^/users$"), ("POST",)),
    (re.compile(r"^/users/([^/]+)$"), ("GET",)),
]


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def _item_summary(item_id: int) -> dict[str, Any]:
    return {
        "id": item_id, "category_id": item_id % 19 + 1, "seller_id": item_id % USERS + 1,
        "title": f"rare lamp #{item_id}", "initial_price_cents": 1000, "max_bid_cents": 5000,
        "bid_count": 3, "start_time": TS, "end_time": TS,
    }  # fmt: skip


def _bid(bid_id: int, item_id: int, amount: int) -> dict[str, Any]:
    return {"id": bid_id, "item_id": item_id, "bidder_id": 7, "amount_cents": amount, "created_at": TS}


def _user(user_id: int, nickname: str | None = None, region_id: int = 3) -> dict[str, Any]:
    return {"id": user_id, "nickname": nickname or f"user{user_id}", "region_id": region_id, "rating": 5,
            "created_at": TS}  # fmt: skip


def _path_id(raw: str) -> int:
    if not ID_RE.match(raw) or not 1 <= int(raw) <= 2147483647:
        raise ApiError(400, "bad_request", "invalid path parameter: id")
    return int(raw)


def _paging(query: str) -> tuple[int, int]:
    seen: dict[str, str] = {}
    duplicated: set[str] = set()
    for part in query.split("&") if query else []:
        key, _, value = part.partition("=")
        if key in ("limit", "offset"):
            if key in seen:
                duplicated.add(key)
            seen[key] = value
    values = {"limit": 20, "offset": 0}
    for key, low, high in (("limit", 1, 100), ("offset", 0, 10000)):
        if key not in seen:
            continue
        raw = seen[key]
        if key in duplicated or not PARAM_RE.match(raw) or not low <= int(raw) <= high:
            raise ApiError(400, "bad_request", f"invalid query parameter: {key}")
        values[key] = int(raw)
    return values["limit"], values["offset"]


def _json_object(handler: BaseHTTPRequestHandler, body: bytes, fields: tuple[str, ...]) -> dict[str, Any]:
    media = (handler.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if media != "application/json":
        raise ApiError(415, "unsupported_media_type", "content type must be application/json")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(400, "bad_request", "request body is not valid UTF-8") from exc
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ApiError(400, "bad_request", "request body is not valid JSON") from exc
    if not isinstance(value, dict):
        raise ApiError(400, "bad_request", "request body must be a JSON object")
    if any(key not in fields for key in value):
        raise ApiError(400, "bad_request", "request body has unknown fields")
    for name in fields:
        if name not in value:
            raise ApiError(400, "bad_request", f"missing field: {name}")
    return value


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-bidbench"
    # The head and the body go out in two writes (wbufsize 0): without TCP_NODELAY, Nagle holds the body
    # back until the client's delayed ACK of the head, ~40 ms per response on Linux loopback.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - signature of the base class
        pass

    def _send(self, status: int, payload: dict[str, Any], extra: dict[str, str] | None = None) -> None:
        server = self.server
        assert isinstance(server, Server)
        if server.error_every and self.headers.get("X-Bidbench-Phase") != "setup":
            with server.lock:
                server.served += 1
                inject = server.served % server.error_every == 0
            if inject:
                status, payload = (
                    503,
                    {"error": {"code": "db_unavailable", "message": "database unavailable"}},
                )
        server.record(self, status)
        body = json.dumps(payload, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Server-Timing", "db;dur=0.250, app;dur=0.750")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _handle(self) -> None:
        server = self.server
        assert isinstance(server, Server)
        if self.headers.get("X-Bidbench-Phase") == "setup" and server.take_setup_stall():
            time.sleep(server.stall_s)  # like an instance still working off a backlog: the client times out
            self.close_connection = True
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > BODY_LIMIT:
            self.close_connection = True
            self._send(413, {"error": {"code": "payload_too_large", "message": "request body exceeds 65536 bytes"}},
                       {"Connection": "close"})  # fmt: skip
            # Answer first, without reading the body (contract rule 1), then drain it before closing: closing a
            # socket with unread data sends a TCP reset, which can destroy the answer before the client reads it.
            self.rfile.read(min(length, 1 << 20))
            return
        body = self.rfile.read(length) if length else b""
        path, _, query = self.path.partition("?")
        for pattern, methods in ROUTES:
            match = pattern.match(path)
            if match is None:
                continue
            if self.command not in methods:
                self._send(405, {"error": {"code": "method_not_allowed", "message": "method not allowed"}},
                           {"Allow": ", ".join(methods)})  # fmt: skip
                return
            try:
                status, payload = self._route(path, match.groups(), query, body)
            except ApiError as err:
                status, payload = err.status, {"error": {"code": err.code, "message": err.message}}
            self._send(status, payload)
            return
        self._send(404, {"error": {"code": "not_found", "message": "route not found"}})

    def _route(
        self, path: str, groups: tuple[str, ...], query: str, body: bytes
    ) -> tuple[int, dict[str, Any]]:
        method = self.command
        if path in ("/health",):
            return 200, {"status": "ok"}
        if path == "/ready":
            return 200, {"status": "ready"}
        if path == "/regions":
            return 200, {"regions": [{"id": i, "name": f"region {i}"} for i in range(1, 21)]}
        if path == "/categories":
            return 200, {"categories": [{"id": i, "name": f"category {i}"} for i in range(1, CATEGORIES + 1)]}
        if path.startswith("/categories/"):
            category = _path_id(groups[0])
            limit, offset = _paging(query)
            if category > CATEGORIES:
                raise ApiError(404, "not_found", "category not found")
            # Five open items per category (none in the last one), so setup() paging ends quickly.
            ids = [] if category == CATEGORIES else [category + 19 * k for k in range(5)]
            return 200, {"items": [_item_summary(i) for i in ids[offset : offset + limit]], "limit": limit,
                         "offset": offset}  # fmt: skip
        if path == "/items":
            fields = (
                "seller_id",
                "category_id",
                "title",
                "description",
                "initial_price_cents",
                "duration_seconds",
            )
            value = _json_object(self, body, fields)
            return 201, {**_item_summary(ITEMS + 1), "description": value["description"]}
        if path == "/users":
            value = _json_object(self, body, ("nickname", "region_id"))
            return 201, _user(USERS + 1, str(value["nickname"]), int(value["region_id"]))
        if path.startswith("/users/"):
            user_id = _path_id(groups[0])
            if user_id > USERS:
                raise ApiError(404, "not_found", "user not found")
            return 200, _user(user_id)
        item_id = _path_id(groups[0])
        if path.endswith("/bids"):
            if method == "GET":
                limit, offset = _paging(query)
                if item_id > ITEMS:
                    raise ApiError(404, "not_found", "item not found")
                return 200, {"bids": [_bid(k, item_id, 9000 - k) for k in range(1, 4)], "limit": limit,
                             "offset": offset}  # fmt: skip
            value = _json_object(self, body, ("bidder_id", "amount_cents"))
            if item_id > ITEMS:
                raise ApiError(404, "not_found", "item not found")
            amount = value["amount_cents"]
            if not isinstance(amount, int) or amount < 5001:
                raise ApiError(409, "conflict", "bid must be at least 5001 cents")
            return 201, _bid(100_000, item_id, amount)
        if item_id > ITEMS:
            raise ApiError(404, "not_found", "item not found")
        if method == "PUT":
            value = _json_object(self, body, ("title", "description"))
            return 200, {
                **_item_summary(item_id),
                "title": value["title"],
                "description": value["description"],
            }
        if method == "DELETE":
            return 200, {"id": item_id, "deleted": True}
        return 200, {**_item_summary(item_id), "seller_nickname": "user1", "description": "d",
                     "top_bids": [_bid(1, item_id, 9000)]}  # fmt: skip

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        self._handle()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_GET  # noqa: N815


class Server(ThreadingHTTPServer):
    """Counts what it answers (outside the driver's setup phase), so tests can check the driver's summary against it."""

    daemon_threads = True

    def __init__(
        self, port: int, error_every: int, stalled_setup_requests: int = 0, stall_s: float = 0.0
    ) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.error_every = error_every
        self.stalls_left = stalled_setup_requests
        self.stall_s = stall_s
        self.lock = threading.Lock()
        self.served = 0
        self.classes: dict[str, int] = {"2xx": 0, "4xx": 0, "5xx": 0}
        self.setup_requests = 0
        self.body_lengths: set[int] = set()

    def record(self, handler: BaseHTTPRequestHandler, status: int) -> None:
        with self.lock:
            if handler.headers.get("X-Bidbench-Phase") == "setup":
                self.setup_requests += 1
                return
            key = f"{status // 100}xx"
            self.classes[key] = self.classes.get(key, 0) + 1
            if handler.command in ("POST", "PUT"):
                self.body_lengths.add(int(handler.headers.get("Content-Length") or 0))

    def take_setup_stall(self) -> bool:
        with self.lock:
            if self.stalls_left <= 0:
                return False
            self.stalls_left -= 1
            return True

    def total(self) -> int:
        with self.lock:
            return sum(self.classes.values())


class FakeService:
    """The fake service on 127.0.0.1, in a background thread; `port=0` picks a free port.

    `error_every=N` answers every Nth request (outside setup) with 503 instead, to produce system errors.
    `stalled_setup_requests=N` leaves the first N setup requests unanswered for `stall_s` seconds.
    """

    def __init__(
        self, port: int = 0, error_every: int = 0, stalled_setup_requests: int = 0, stall_s: float = 0.0
    ) -> None:
        self.server = Server(port, error_every, stalled_setup_requests, stall_s)
        self.thread = threading.Thread(
            target=self.server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-bidbench",
            daemon=True,
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeService:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=18080)
    args = parser.parse_args()
    with FakeService(args.port) as service:
        print(f"fake bidbench service on {service.url}", flush=True)
        service.thread.join()


if __name__ == "__main__":
    main()
