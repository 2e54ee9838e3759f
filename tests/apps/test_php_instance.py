"""The PHP app through nginx: a real nginx + PHP-FPM instance (PhpDriver, harness.engine.instances) on the real
database of `./bidbench test` (DATABASE_URL; the test fails without it).

Covers every endpoint, the wire rules on every response, the hostile-input list with the contract's
exact 4xx bodies (including both 413 paths of nginx and PHP's own limit), bids under concurrency, stale
persistent connections, the database being unreachable, PHP-FPM being down, and the knobs
(SERVER_TIMING=0, LOG_LEVEL=debug, PHP_JIT=1, BIDBENCH_UNFAIR_UNSORTED=1).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import socket
import struct
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest

from harness import paths
from harness.apps.base import InstanceSpec
from harness.apps.php import PhpDriver
from harness.db.cluster import free_port
from harness.engine.instances import RunningInstance, running_instance

pytestmark = pytest.mark.slow

TIMING = re.compile(r"^db;dur=[0-9]+\.[0-9]{3}, app;dur=[0-9]+\.[0-9]{3}$")
TIMESTAMP = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$")
LIMIT = 65536
JSON = {"Content-Type": "application/json"}


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    raw: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.raw)

    def error(self) -> tuple[int, str, str]:
        body = self.json
        assert list(body) == ["error"] and list(body["error"]) == ["code", "message"], self.raw
        return self.status, body["error"]["code"], body["error"]["message"]


class Client:
    """One keep-alive connection, reopened when the server closes it (after a 413, say)."""

    def __init__(self, port: int, timing: bool = True) -> None:
        self.port = port
        self.timing = timing
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def request(
        self,
        method: str,
        path: str,
        body: bytes | str | list[bytes] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        """A list body is sent chunked (Transfer-Encoding: chunked, no Content-Length)."""
        data: Any = body.encode() if isinstance(body, str) else body
        chunked = isinstance(body, list)

        def send() -> http.client.HTTPResponse:
            self.conn.request(
                method,
                path,
                body=iter(data) if chunked else data,
                headers=headers or {},
                encode_chunked=chunked,
            )
            return self.conn.getresponse()

        try:
            response = send()
        except (http.client.HTTPException, ConnectionError):
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            response = send()
        raw = response.read()
        reply = Reply(response.status, response.headers, raw)
        if response.will_close:
            self.conn.close()
        self.check_wire(method, reply)
        return reply

    def check_wire(self, method: str, reply: Reply) -> None:
        """docs/design.md §2.4 on every response: exact Content-Type, Content-Length, Date, Server-Timing, compact JSON."""
        headers = reply.headers
        assert headers.get_all("Content-Type") == ["application/json"], headers
        assert headers.get("Transfer-Encoding") is None, headers
        assert headers.get("Date"), headers
        assert headers.get("X-Powered-By") is None, headers
        if method != "HEAD":
            assert int(headers["Content-Length"]) == len(reply.raw)
            parsed = json.loads(reply.raw)
            assert json.dumps(parsed, separators=(",", ":"), ensure_ascii=False).encode() == reply.raw
        if self.timing:
            assert TIMING.match(headers.get("Server-Timing", "")), headers
        else:
            assert headers.get("Server-Timing") is None, headers

    def get(self, path: str) -> Reply:
        return self.request("GET", path)

    def post(self, path: str, payload: Any) -> Reply:
        return self.request("POST", path, json.dumps(payload), JSON)

    def put(self, path: str, payload: Any) -> Reply:
        return self.request("PUT", path, json.dumps(payload), JSON)


def raw_http(port: int, data: bytes, timeout: float = 5) -> bytes:
    """Bytes that http.client would refuse to send."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        out = b""
        try:
            while chunk := sock.recv(65536):
                out += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    return out


def fastcgi(socket_path: str, params: dict[str, str], body: bytes) -> bytes:
    """One FastCGI request straight to PHP-FPM, bypassing nginx: the body arrives without CONTENT_LENGTH,
    as a chunked body would behind a server that does not buffer it, so only the app's own limit applies."""

    def record(kind: int, content: bytes) -> bytes:
        return struct.pack(">BBHHBB", 1, kind, 1, len(content), 0, 0) + content

    def pair(name: str, value: str) -> bytes:
        out = b""
        for item in (name.encode(), value.encode()):
            out += bytes([len(item)]) if len(item) < 128 else struct.pack(">I", len(item) | 0x80000000)
        return out + name.encode() + value.encode()

    message = record(1, struct.pack(">HB5x", 1, 0))
    message += record(4, b"".join(pair(k, v) for k, v in params.items())) + record(4, b"")
    for start in range(0, len(body), 32768):
        message += record(5, body[start : start + 32768])
    message += record(5, b"")
    stdout = b""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(socket_path)
        sock.sendall(message)
        buffer = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            buffer += chunk
        while len(buffer) >= 8:
            _, kind, _, length, padding, _ = struct.unpack(">BBHHBB", buffer[:8])
            if kind == 6:
                stdout += buffer[8 : 8 + length]
            buffer = buffer[8 + length + padding :]
    return stdout


@contextmanager
def php_instance(
    driver: PhpDriver, database_url: str, knobs: dict[str, str] | None = None
) -> Iterator[RunningInstance]:
    run_dir = paths.RUNTIME / "tests" / f"php-{uuid.uuid4().hex[:8]}"
    spec = InstanceSpec(
        impl="php",
        index=0,
        port=free_port(),
        database_url=database_url,
        run_dir=run_dir,
        knobs={
            "LOG_LEVEL": "info",
            "SERVER_TIMING": "1",
            "DB_POOL_SIZE": "4",
            "PHP_FPM_CHILDREN": "4",
            **(knobs or {}),
        },
    )
    try:
        with running_instance(driver, spec, ready_timeout_s=60) as instance:
            yield instance
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


@contextmanager
def unready_instance(
    driver: PhpDriver, database_url: str, knobs: dict[str, str]
) -> Iterator[tuple[int, list[Any]]]:
    """An instance whose /ready cannot answer 200: ready as soon as /health answers."""
    run_dir = paths.RUNTIME / "tests" / f"php-{uuid.uuid4().hex[:8]}"
    spec = InstanceSpec("php", 0, free_port(), database_url, run_dir, {"LOG_LEVEL": "info", **knobs})
    try:
        with running_instance(driver, spec, ready_timeout_s=30, ready_path="/health") as instance:
            yield spec.port, instance.processes
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def driver() -> PhpDriver:
    php = PhpDriver()
    php.ensure_built()
    return php


@pytest.fixture(scope="module")
def instance(driver: PhpDriver, database_url: str) -> Iterator[RunningInstance]:
    with php_instance(driver, database_url) as running:
        yield running


@pytest.fixture()
def client(instance: RunningInstance) -> Iterator[Client]:
    c = Client(instance.spec.port)
    yield c
    c.conn.close()


@pytest.fixture(scope="module")
def db(database_url: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(database_url, autocommit=True) as conn:
        yield conn


def _one(db: psycopg.Connection[Any], sql: str, *params: Any) -> Any:
    row = db.execute(sql, params).fetchone()
    assert row is not None, sql
    return row[0]


# ---- start-up, knobs --------------------------------------------------------------------------------


def test_startup_line_and_manifest_knobs(instance: RunningInstance, driver: PhpDriver) -> None:
    line = instance.startup_line()
    assert line is not None and line.startswith("bidbench-start {")
    fields = json.loads(line.removeprefix("bidbench-start "))
    assert list(fields)[:7] == ["impl", "host", "port", "db", "db_pool_size", "log_level", "server_timing"]
    assert fields["impl"] == "php" and fields["port"] == instance.spec.port
    assert ":***@" in fields["db"] and "bidbench:bidbench@" not in line
    assert fields["php_fpm_children"] == 4 and fields["db_connections"] == 4 and fields["php_jit"] is False
    assert fields["opcache"] is True and fields["opcache_validate_timestamps"] is False
    assert (
        fields["opcache_jit"] == "off"
        and fields["nginx_worker_processes"] == 1
        and fields["php_fpm_pm"] == "static"
        and fields["nginx_worker_connections"] == 10240
    )
    assert "worker_connections 10240;" in (instance.spec.run_dir / "nginx.conf").read_text()
    log = (instance.spec.run_dir / "php-fpm.log").read_text()
    assert log.count("bidbench-start ") == 1
    knobs = driver.effective_knobs(instance.spec)
    assert knobs["PHP_FPM_CHILDREN"] == "4" and knobs["php_fpm.pm"] == "static"
    assert knobs["nginx.worker_processes"] == "1" and knobs["opcache.jit"] == "off"
    assert knobs["nginx.worker_connections"] == "10240"
    versions = driver.runtime_versions()
    assert versions["php"].startswith("8.") and versions["nginx"][0].isdigit()


def test_children_default_to_the_pool_size(driver: PhpDriver, tmp_path: Any) -> None:
    spec = InstanceSpec("php", 0, 1, "postgresql://u:p@127.0.0.1:1/d", tmp_path, {"DB_POOL_SIZE": "7"})
    assert driver.settings(spec)["PHP_FPM_CHILDREN"] == "7"
    assert driver.effective_knobs(spec)["db_connections_per_instance"] == "7"


# ---- every endpoint ---------------------------------------------------------------------------------


def test_health_ready_and_lists(client: Client, db: psycopg.Connection[Any]) -> None:
    assert client.get("/health").json == {"status": "ok"}
    assert client.get("/ready").json == {"status": "ready"}
    regions = client.get("/regions").json
    assert regions == {
        "regions": [{"id": i, "name": n} for i, n in db.execute("SELECT id, name FROM regions ORDER BY id")]
    }
    categories = client.get("/categories").json["categories"]
    assert categories == [
        {"id": i, "name": n} for i, n in db.execute("SELECT id, name FROM categories ORDER BY id")
    ]


def test_category_items_are_paged_in_contract_order(client: Client, db: psycopg.Connection[Any]) -> None:
    category = _one(
        db, "SELECT category_id FROM items WHERE end_time > now() GROUP BY 1 ORDER BY count(*) DESC LIMIT 1"
    )
    page = client.get(f"/categories/{category}/items?limit=7&offset=3").json
    assert list(page) == ["items", "limit", "offset"] and page["limit"] == 7 and page["offset"] == 3
    expected = [
        r[0]
        for r in db.execute(
            "SELECT id FROM items WHERE category_id = %s AND end_time > now() ORDER BY end_time, id LIMIT 7 OFFSET 3",
            (category,),
        )
    ]
    assert [item["id"] for item in page["items"]] == expected
    first = page["items"][0]
    assert list(first) == [
        "id", "category_id", "seller_id", "title", "initial_price_cents", "max_bid_cents", "bid_count",
        "start_time", "end_time",
    ]  # fmt: skip
    assert TIMESTAMP.match(first["start_time"]) and TIMESTAMP.match(first["end_time"])
    assert client.get(f"/categories/{category}/items").json["limit"] == 20
    empty = client.get(f"/categories/{category}/items?offset=10000").json
    assert empty == {"items": [], "limit": 20, "offset": 10000}
    assert client.get("/categories/2147483647/items").error() == (404, "not_found", "category not found")


def test_item_detail_and_bids(client: Client, db: psycopg.Connection[Any]) -> None:
    item = _one(db, "SELECT item_id FROM bids GROUP BY 1 HAVING count(*) > 6 ORDER BY 1 LIMIT 1")
    detail = client.get(f"/items/{item}").json
    assert list(detail)[3] == "seller_nickname" and list(detail)[-1] == "top_bids"
    top = [
        r[0]
        for r in db.execute(
            "SELECT id FROM bids WHERE item_id = %s ORDER BY amount_cents DESC, id LIMIT 5", (item,)
        )
    ]
    assert [b["id"] for b in detail["top_bids"]] == top
    assert detail["seller_nickname"] == _one(
        db, "SELECT u.nickname FROM items i JOIN users u ON u.id = i.seller_id WHERE i.id = %s", item
    )
    start = _one(
        db,
        "SELECT to_char(start_time AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') FROM items WHERE id = %s",
        item,
    )
    assert detail["start_time"] == start
    bids = client.get(f"/items/{item}/bids?limit=3&offset=2").json
    expected = [
        r[0]
        for r in db.execute(
            "SELECT id FROM bids WHERE item_id = %s ORDER BY amount_cents DESC, id LIMIT 3 OFFSET 2", (item,)
        )
    ]
    assert [b["id"] for b in bids["bids"]] == expected and bids["limit"] == 3 and bids["offset"] == 2
    assert list(bids["bids"][0]) == ["id", "item_id", "bidder_id", "amount_cents", "created_at"]
    no_bids = _one(
        db, "SELECT i.id FROM items i WHERE NOT EXISTS (SELECT 1 FROM bids b WHERE b.item_id = i.id) LIMIT 1"
    )
    assert client.get(f"/items/{no_bids}/bids").json == {"bids": [], "limit": 20, "offset": 0}
    assert client.get(f"/items/{no_bids}").json["top_bids"] == []
    assert client.get("/items/2147483647").error() == (404, "not_found", "item not found")
    assert client.get("/items/2147483647/bids").error() == (404, "not_found", "item not found")


def test_users(client: Client, db: psycopg.Connection[Any]) -> None:
    user = client.get("/users/1").json
    assert list(user) == ["id", "nickname", "region_id", "rating", "created_at"] and user["id"] == 1
    assert client.get("/users/2147483647").error() == (404, "not_found", "user not found")
    nickname = "php_" + uuid.uuid4().hex[:20]
    created = client.post("/users", {"nickname": nickname, "region_id": 3})
    assert created.status == 201
    body = created.json
    assert body["nickname"] == nickname and body["region_id"] == 3 and body["rating"] == 0
    assert TIMESTAMP.match(body["created_at"])
    assert client.get(f"/users/{body['id']}").json == body
    assert client.post("/users", {"nickname": nickname, "region_id": 3}).error() == (
        409,
        "conflict",
        "nickname already taken",
    )
    other = "php_" + uuid.uuid4().hex[:20]
    assert client.post("/users", {"nickname": other, "region_id": 2147483647}).error() == (
        404,
        "not_found",
        "region not found",
    )


def test_item_lifecycle_and_bids(client: Client, db: psycopg.Connection[Any]) -> None:
    seller, bidder = 1, 2
    new = {
        "seller_id": seller, "category_id": 1, "title": "PHP tést ☃ 😀", "description": "",
        "initial_price_cents": 500, "duration_seconds": 3600,
    }  # fmt: skip
    created = client.post("/items", new)
    assert created.status == 201
    item = created.json
    assert list(item) == [
        "id", "category_id", "seller_id", "title", "description", "initial_price_cents", "max_bid_cents",
        "bid_count", "start_time", "end_time",
    ]  # fmt: skip
    assert item["title"] == new["title"] and item["max_bid_cents"] == 0 and item["bid_count"] == 0
    item_id = item["id"]
    path = f"/items/{item_id}"

    assert client.post("/items", {**new, "seller_id": 2147483647}).error() == (
        404,
        "not_found",
        "seller or category not found",
    )
    assert client.post("/items", {**new, "category_id": 2147483647}).error() == (
        404,
        "not_found",
        "seller or category not found",
    )

    updated = client.put(path, {"title": "renamed", "description": "now with words"})
    assert (
        updated.status == 200
        and updated.json["title"] == "renamed"
        and updated.json["description"] == "now with words"
    )
    assert client.put("/items/2147483647", {"title": "x", "description": ""}).error() == (
        404,
        "not_found",
        "item not found",
    )

    bids = f"{path}/bids"
    assert client.post(bids, {"bidder_id": bidder, "amount_cents": 499}).error() == (
        409, "conflict", "bid must be at least 500 cents",
    )  # fmt: skip
    placed = client.post(bids, {"bidder_id": bidder, "amount_cents": 500})
    assert placed.status == 201
    assert list(placed.json) == ["id", "item_id", "bidder_id", "amount_cents", "created_at"]
    assert placed.json["amount_cents"] == 500 and placed.json["item_id"] == item_id
    assert client.post(bids, {"bidder_id": bidder, "amount_cents": 500}).error() == (
        409, "conflict", "bid must be at least 501 cents",
    )  # fmt: skip
    assert client.post(bids, {"bidder_id": 2147483647, "amount_cents": 10_000}).error() == (
        404,
        "not_found",
        "bidder not found",
    )
    assert client.post("/items/2147483647/bids", {"bidder_id": bidder, "amount_cents": 10_000}).error() == (
        404, "not_found", "item not found",
    )  # fmt: skip
    detail = client.get(path).json
    assert detail["max_bid_cents"] == 500 and detail["bid_count"] == 1 and len(detail["top_bids"]) == 1

    deleted = client.request("DELETE", path)
    assert deleted.status == 200 and deleted.json == {"id": item_id, "deleted": True}
    assert client.request("DELETE", path).error() == (404, "not_found", "item not found")
    assert client.get(path).error() == (404, "not_found", "item not found")

    ended = _one(db, "SELECT id FROM items WHERE end_time < now() ORDER BY id LIMIT 1")
    assert client.post(f"/items/{ended}/bids", {"bidder_id": bidder, "amount_cents": 10**11}).error() == (
        409, "conflict", "auction has ended",
    )  # fmt: skip


def test_concurrent_bids_lose_no_update(instance: RunningInstance, db: psycopg.Connection[Any]) -> None:
    setup = Client(instance.spec.port)
    item = setup.post(
        "/items",
        {
            "seller_id": 1,
            "category_id": 2,
            "title": "race",
            "description": "",
            "initial_price_cents": 1,
            "duration_seconds": 600,
        },
    ).json["id"]
    statuses: list[int] = []
    lock = threading.Lock()

    def bidder(worker: int) -> None:
        client = Client(instance.spec.port)
        for round_ in range(10):
            reply = client.post(
                f"/items/{item}/bids", {"bidder_id": 3, "amount_cents": 100 + round_ * 10 + worker}
            )
            with lock:
                statuses.append(reply.status)

    threads = [threading.Thread(target=bidder, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(statuses) <= {201, 409} and statuses.count(201) >= 1
    max_bid, count = db.execute(
        "SELECT max_bid_cents, bid_count FROM items WHERE id = %s", (item,)
    ).fetchone() or (0, 0)
    real_max, real_count = db.execute(
        "SELECT max(amount_cents), count(*) FROM bids WHERE item_id = %s", (item,)
    ).fetchone() or (0, 0)
    assert (max_bid, count) == (real_max, real_count) and count == statuses.count(201)
    setup.request("DELETE", f"/items/{item}")


# ---- the hostile-input list -------------------------------------------------------------------------

BAD_JSON = (400, "bad_request", "request body is not valid JSON")
VALID_ITEM = '{"seller_id":1,"category_id":1,"title":"t","description":"d","initial_price_cents":100,"duration_seconds":60}'

HOSTILE: list[tuple[str, str, str, bytes | None, dict[str, str], tuple[int, str, str]]] = [
    # (case, method, path, body, headers, (status, code, message))
    ("unknown route", "GET", "/nope", None, {}, (404, "not_found", "route not found")),
    ("trailing slash", "GET", "/regions/", None, {}, (404, "not_found", "route not found")),
    ("double slash", "GET", "//items/1", None, {}, (404, "not_found", "route not found")),
    ("empty segment", "GET", "/items//bids", None, {}, (404, "not_found", "route not found")),
    ("dot segment", "GET", "/items/../regions", None, {}, (404, "not_found", "route not found")),
    ("wrong method", "DELETE", "/users/1", None, {}, (405, "method_not_allowed", "method not allowed")),
    ("HEAD", "HEAD", "/health", None, {}, (405, "", "")),
    ("OPTIONS", "OPTIONS", "/items/1", None, {}, (405, "method_not_allowed", "method not allowed")),
    ("PATCH", "PATCH", "/items/1", b"{}", JSON, (405, "method_not_allowed", "method not allowed")),
    ("non-numeric id", "GET", "/items/abc", None, {}, (400, "bad_request", "invalid path parameter: id")),
    ("zero id", "GET", "/users/0", None, {}, (400, "bad_request", "invalid path parameter: id")),
    ("negative id", "GET", "/items/-1", None, {}, (400, "bad_request", "invalid path parameter: id")),
    ("huge id", "GET", "/items/99999999999", None, {}, (400, "bad_request", "invalid path parameter: id")),
    ("id over int32", "GET", "/items/2147483648/bids", None, {}, (400, "bad_request", "invalid path parameter: id")),
    ("encoded id", "GET", "/items/%31", None, {}, (400, "bad_request", "invalid path parameter: id")),
    ("id before query", "GET", "/items/x/bids?limit=0", None, {}, (400, "bad_request", "invalid path parameter: id")),
    ("id before body", "PUT", "/items/x", b"nope", {}, (400, "bad_request", "invalid path parameter: id")),
    ("limit zero", "GET", "/items/1/bids?limit=0", None, {}, (400, "bad_request", "invalid query parameter: limit")),
    ("limit huge", "GET", "/items/1/bids?limit=1000000000000", None, {}, (400, "bad_request", "invalid query parameter: limit")),
    ("limit negative", "GET", "/categories/1/items?limit=-5", None, {}, (400, "bad_request", "invalid query parameter: limit")),
    ("limit twice", "GET", "/categories/1/items?limit=5&limit=5", None, {}, (400, "bad_request", "invalid query parameter: limit")),
    ("offset negative", "GET", "/items/1/bids?offset=-1", None, {}, (400, "bad_request", "invalid query parameter: offset")),
    ("offset huge", "GET", "/items/1/bids?offset=10001", None, {}, (400, "bad_request", "invalid query parameter: offset")),
    ("offset text", "GET", "/categories/1/items?offset=abc", None, {}, (400, "bad_request", "invalid query parameter: offset")),
    ("limit first", "GET", "/items/1/bids?offset=x&limit=x", None, {}, (400, "bad_request", "invalid query parameter: limit")),
    ("no content type", "POST", "/users", b'{"nickname":"abc","region_id":1}', {}, (415, "unsupported_media_type", "content type must be application/json")),
    ("text/plain", "POST", "/items", VALID_ITEM.encode(), {"Content-Type": "text/plain"}, (415, "unsupported_media_type", "content type must be application/json")),
    ("form", "PUT", "/items/1", b"title=x", {"Content-Type": "application/x-www-form-urlencoded"}, (415, "unsupported_media_type", "content type must be application/json")),
    ("content type before body", "POST", "/users", b"\xff", {"Content-Type": "text/json"}, (415, "unsupported_media_type", "content type must be application/json")),
    ("invalid UTF-8", "POST", "/users", b'{"nickname":"\xc3\x28","region_id":1}', JSON, (400, "bad_request", "request body is not valid UTF-8")),
    ("latin-1", "POST", "/users", b'{"nickname":"caf\xe9","region_id":1}', JSON, (400, "bad_request", "request body is not valid UTF-8")),
    ("BOM", "POST", "/users", b'\xef\xbb\xbf{"nickname":"abc","region_id":1}', JSON, BAD_JSON),
    ("empty body", "POST", "/users", b"", JSON, BAD_JSON),
    ("malformed", "POST", "/items", b'{"seller_id":', JSON, BAD_JSON),
    ("trailing comma", "POST", "/users", b'{"nickname":"abc","region_id":1,}', JSON, BAD_JSON),
    ("trailing garbage", "POST", "/users", b'{"nickname":"abc","region_id":1} x', JSON, BAD_JSON),
    ("lone surrogate", "POST", "/users", b'{"nickname":"\\ud800","region_id":1}', JSON, BAD_JSON),
    ("lone low surrogate key", "POST", "/users", b'{"\\udc00":1}', JSON, BAD_JSON),
    ("deep nesting", "POST", "/users", b'{"a":' + b"[" * 32 + b"]" * 32 + b"}", JSON, BAD_JSON),
    ("nesting at the limit", "POST", "/users", b'{"a":' + b"[" * 31 + b"]" * 31 + b"}", JSON, (400, "bad_request", "request body has unknown fields")),
    ("array", "POST", "/users", b"[1,2]", JSON, (400, "bad_request", "request body must be a JSON object")),
    ("string", "PUT", "/items/1", b'"title"', JSON, (400, "bad_request", "request body must be a JSON object")),
    ("unknown field", "POST", "/users", b'{"nickname":"abc","region_id":1,"admin":true}', JSON, (400, "bad_request", "request body has unknown fields")),
    ("NUL key", "POST", "/users", b'{"\\u0000":1}', JSON, (400, "bad_request", "request body has unknown fields")),
    ("missing field", "POST", "/users", b'{"nickname":"abc"}', JSON, (400, "bad_request", "missing field: region_id")),
    ("missing first", "POST", "/items/1/bids", b"{}", JSON, (400, "bad_request", "missing field: bidder_id")),
    ("null field", "POST", "/users", b'{"nickname":null,"region_id":1}', JSON, (400, "bad_request", "invalid field: nickname")),
    ("string number", "POST", "/items/1/bids", b'{"bidder_id":"1","amount_cents":100}', JSON, (400, "bad_request", "invalid field: bidder_id")),
    ("boolean", "POST", "/items/1/bids", b'{"bidder_id":true,"amount_cents":100}', JSON, (400, "bad_request", "invalid field: bidder_id")),
    ("fraction", "POST", "/items/1/bids", b'{"bidder_id":1,"amount_cents":100.5}', JSON, (400, "bad_request", "invalid field: amount_cents")),
    ("huge number", "POST", "/items/1/bids", b'{"bidder_id":1,"amount_cents":1e400}', JSON, (400, "bad_request", "invalid field: amount_cents")),
    ("beyond cents", "POST", "/items/1/bids", b'{"bidder_id":1,"amount_cents":100000000001}', JSON, (400, "bad_request", "invalid field: amount_cents")),
    ("negative cents", "POST", "/items/1/bids", b'{"bidder_id":1,"amount_cents":-1}', JSON, (400, "bad_request", "invalid field: amount_cents")),
    ("NUL in title", "PUT", "/items/1", b'{"title":"a\\u0000b","description":""}', JSON, (400, "bad_request", "invalid field: title")),
    ("long title", "PUT", "/items/1", b'{"title":"' + "é".encode() * 201 + b'","description":""}', JSON, (400, "bad_request", "invalid field: title")),
    ("bad nickname", "POST", "/users", b'{"nickname":"no spaces","region_id":1}', JSON, (400, "bad_request", "invalid field: nickname")),
    ("nickname newline", "POST", "/users", b'{"nickname":"abc\\n","region_id":1}', JSON, (400, "bad_request", "invalid field: nickname")),
    ("short duration", "POST", "/items", VALID_ITEM.replace('"duration_seconds":60', '"duration_seconds":59').encode(), JSON, (400, "bad_request", "invalid field: duration_seconds")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("method", "path", "body", "headers", "expected"), [c[1:] for c in HOSTILE], ids=[c[0] for c in HOSTILE]
)
def test_hostile_input(
    client: Client,
    method: str,
    path: str,
    body: bytes | None,
    headers: dict[str, str],
    expected: tuple[int, str, str],
) -> None:
    reply = client.request(method, path, body, headers)
    if method == "HEAD":
        assert reply.status == 405 and reply.headers["Allow"] == "GET" and reply.raw == b""
        return
    assert reply.error() == expected, reply.raw
    if expected[0] == 405:
        allowed = {"/users/1": "GET", "/items/1": "GET, PUT, DELETE"}[path]
        assert reply.headers["Allow"] == allowed


def test_allow_lists(client: Client) -> None:
    for path, allow in [
        ("/health", "GET"), ("/ready", "GET"), ("/regions", "GET"), ("/categories", "GET"),
        ("/categories/1/items", "GET"), ("/items", "POST"), ("/items/1", "GET, PUT, DELETE"),
        ("/items/1/bids", "GET, POST"), ("/users", "POST"), ("/users/1", "GET"),
    ]:  # fmt: skip
        reply = client.request("PATCH", path)
        assert reply.error() == (405, "method_not_allowed", "method not allowed")
        assert reply.headers["Allow"] == allow


def test_body_limit(instance: RunningInstance, client: Client) -> None:
    too_large = (413, "payload_too_large", "request body exceeds 65536 bytes")
    big = b"x" * (LIMIT + 1)
    # Declared Content-Length: refused before routing and before the body is read, on any route and method.
    for method, path in [("POST", "/users"), ("GET", "/nope"), ("DELETE", "/items/abc"), ("PUT", "/items/1")]:
        assert client.request(method, path, big, JSON).error() == too_large
    # Chunked: counted while it streams.
    chunked = {**JSON, "Transfer-Encoding": "chunked"}
    assert client.request("POST", "/users", [b"x" * 40000, b"x" * 40000], chunked).error() == too_large
    # Exactly at the limit is not too large: it reaches the JSON rules.
    assert client.request("POST", "/users", b" " * LIMIT, JSON).error() == BAD_JSON
    assert (
        client.request("POST", "/users", [b" " * 30000, b" " * (LIMIT - 30000)], chunked).error() == BAD_JSON
    )
    # A chunked body under the limit reaches the app whole.
    nickname = "php_" + uuid.uuid4().hex[:20]
    payload = json.dumps({"nickname": nickname, "region_id": 1}).encode()
    created = client.request("POST", "/users", [payload[:10], payload[10:]], chunked)
    assert created.status == 201 and created.json["nickname"] == nickname
    # A GET body is read for the limit and otherwise ignored.
    assert client.request("GET", "/health", b"ignored").json == {"status": "ok"}
    # Without nginx: PHP's own limit on a body of unknown length, and its own declared-length check.
    socket_path = str(instance.spec.run_dir / "php-fpm.sock")
    # The front controller nginx is configured with (a staged copy when the checkout is closed to nobody).
    fastcgi_conf = (instance.spec.run_dir / "fastcgi.conf").read_text()
    script = re.search(r"SCRIPT_FILENAME\s+(\S+);", fastcgi_conf)
    assert script is not None
    params = {
        "SCRIPT_FILENAME": script.group(1),
        "REQUEST_METHOD": "POST",
        "REQUEST_URI": "/users",
        "CONTENT_TYPE": "application/json",
    }
    # (PHP-FPM reads exactly CONTENT_LENGTH bytes of a body, so a web server must de-chunk a chunked body
    # first, as nginx does; the app's checks are the declared length and a read bounded at the limit.)
    for extra, body in [
        ({"CONTENT_LENGTH": str(LIMIT + 1)}, b"x" * (LIMIT + 1)),
        ({"CONTENT_LENGTH": "99999999999"}, b""),
    ]:
        answer = fastcgi(socket_path, {**params, **extra}, body)
        head, _, payload = answer.partition(b"\r\n\r\n")
        assert (
            b"Status: 413" in head
            and payload
            == json.dumps(
                {"error": {"code": too_large[1], "message": too_large[2]}}, separators=(",", ":")
            ).encode()
        )
    answer = fastcgi(socket_path, {**params, "CONTENT_LENGTH": str(LIMIT)}, b" " * LIMIT)
    assert (
        answer.partition(b"\r\n\r\n")[2]
        == b'{"error":{"code":"bad_request","message":"request body is not valid JSON"}}'
    )


def test_nginx_answers_in_json(instance: RunningInstance) -> None:
    port = instance.spec.port
    for request in [
        b"GET /../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n",  # above the root: nginx refuses to parse it
        b"GARBAGE\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
        b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    ]:
        answer = raw_http(port, request)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400") and b"\r\nContent-Type: application/json\r\n" in head, answer[
            :300
        ]
        assert body == b'{"error":{"code":"bad_request","message":"bad request"}}'
    # TRACE is refused by nginx itself; the app still answers with its 405 and Allow.
    answer = raw_http(port, b"TRACE /items/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 405") and b"\r\nAllow: GET, PUT, DELETE\r\n" in answer
    assert answer.endswith(b'{"error":{"code":"method_not_allowed","message":"method not allowed"}}')
    # The internal error locations are not reachable from outside.
    reply = Client(port).get("/.bidbench-nginx/413")
    assert reply.error() == (404, "not_found", "route not found")


# ---- operations -------------------------------------------------------------------------------------


def test_stale_persistent_connections_are_replaced(
    instance: RunningInstance, client: Client, db: psycopg.Connection[Any]
) -> None:
    for _ in range(12):  # warm every child's persistent connection
        assert client.get("/ready").status == 200
    terminated = db.execute(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
        "WHERE application_name = 'bidbench-php' AND pid <> pg_backend_pid()"
    ).fetchone()
    assert terminated is not None and terminated[0] >= 1
    time.sleep(0.2)
    statuses = [client.get(path).status for path in ["/ready", "/regions", "/items/1", "/users/1"] * 6]
    assert statuses == [200] * len(statuses)
    # A write as the first statement on a dead connection: PDO's liveness check already replaced it.
    db.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'bidbench-php' AND pid <> pg_backend_pid()"
    )
    time.sleep(0.2)
    for _ in range(8):
        reply = client.post("/users", {"nickname": "php_" + uuid.uuid4().hex[:20], "region_id": 1})
        assert reply.status == 201, reply.raw


def test_database_down_then_php_fpm_down(driver: PhpDriver) -> None:
    closed = f"postgresql://bidbench:secret@127.0.0.1:{free_port()}/bidbench"
    with unready_instance(driver, closed, {"PHP_FPM_CHILDREN": "2", "DB_POOL_SIZE": "2"}) as (
        port,
        processes,
    ):
        client = Client(port)
        assert client.get("/health").json == {"status": "ok"}
        for path in ["/ready", "/regions", "/items/1"]:
            assert client.get(path).error() == (503, "db_unavailable", "database unavailable")
        assert client.post("/users", {"nickname": "abc", "region_id": 1}).error() == (
            503,
            "db_unavailable",
            "database unavailable",
        )
        # PHP-FPM gone: nginx answers the contract's 500 body, not its HTML 502 page.
        fpm = processes[0]
        os.killpg(fpm.pid, signal.SIGKILL)
        fpm.wait(timeout=10)
        time.sleep(0.3)
        assert Client(port).get("/health").error() == (500, "internal_error", "internal error")


def test_knobs_timing_off_debug_log_jit_unsorted(driver: PhpDriver, database_url: str) -> None:
    knobs = {
        "SERVER_TIMING": "0",
        "LOG_LEVEL": "debug",
        "PHP_JIT": "1",
        "BIDBENCH_UNFAIR_UNSORTED": "1",
        "PHP_FPM_CHILDREN": "2",
    }
    with php_instance(driver, database_url, knobs) as special:
        line = special.startup_line() or ""
        fields = json.loads(line.removeprefix("bidbench-start "))
        assert (
            fields["server_timing"] is False
            and fields["php_jit"] is True
            and fields["opcache_jit"] == "tracing"
        )
        assert fields["unfair_unsorted"] is True and fields["log_level"] == "debug"
        assert "UNFAIR_UNSORTED" in (special.spec.run_dir / "php-fpm.log").read_text()
        client = Client(special.spec.port, timing=False)
        assert client.get("/regions").status == 200
        assert client.get("/items/1").status == 200
        assert client.request("POST", "/users", b"x" * (LIMIT + 1), JSON).error()[0] == 413
        log = (special.spec.run_dir / "app.log").read_text()
        assert "WARN" in log and "UNFAIR_UNSORTED" in log
        assert re.search(r"DEBUG php\[\d+\] sql list_regions [0-9.]+ ms", log)
        assert re.search(r"DEBUG php\[\d+\] sql get_item [0-9.]+ ms", log) and "sql top_bids" in log
        assert re.search(r"DEBUG php\[\d+\] GET /regions 200 [0-9.]+ ms", log)
        assert "bidbench:bidbench" not in log


def test_knob_per_field_answers_the_same_bytes(
    instance: RunningInstance, driver: PhpDriver, database_url: str
) -> None:
    honest = Client(instance.spec.port)
    knobs = {"BIDBENCH_UNFAIR_PER_FIELD": "1", "LOG_LEVEL": "debug", "PHP_FPM_CHILDREN": "2"}
    with php_instance(driver, database_url, knobs) as special:
        fields = json.loads((special.startup_line() or "").removeprefix("bidbench-start "))
        keys = list(fields)
        assert fields["unfair_per_field"] is True
        assert keys[keys.index("unfair_unsorted") + 1] == "unfair_per_field"
        assert "UNFAIR_PER_FIELD" in (special.spec.run_dir / "php-fpm.log").read_text()
        client = Client(special.spec.port)
        for path in ("/items/1", "/items/2", "/items/3"):
            ours, theirs = client.get(path), honest.get(path)
            assert theirs.status == 200 and (ours.status, ours.raw) == (theirs.status, theirs.raw)
        assert client.get("/items/2147483647").error() == (404, "not_found", "item not found")
        log = (special.spec.run_dir / "app.log").read_text()
        assert "sql per_field_id" in log and "sql per_field_end_time" in log and "sql get_item " not in log
