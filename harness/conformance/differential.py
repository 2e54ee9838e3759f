"""Differential runs: one seeded random request sequence, the same for every target, from the same reset.

`random.Random(seed)`, not Hypothesis: every target must see exactly the same sequence, and shrinking
makes no sense across processes. What is compared and masked, and how blame is given, is described in
contract/conformance/README.md, "The differential run"; with two targets both are named, and only the
first divergence is printed in full because one divergence usually cascades.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from psycopg import sql

from harness.conformance.canon import InvalidJson, dumps, parse, unified_diff, wire_problems
from harness.conformance.client import JSON_HEADERS, Connection, RawRequest, RawResponse, TransportError, send
from harness.conformance.dbstate import ConformanceDb
from harness.conformance.results import CheckResult, checked
from harness.conformance.targets import Target

PART = "differential"
SEED = 6
COUNT = 300
TIME_BUDGET_S = 120.0
SEEDED_MAX = {"users": 10_000, "items": 15_000, "bids": 75_064}
VOLATILE = {"created_at", "start_time", "end_time"}
WORDS = ["lamp", "vintage", "rare", "Ünïcödé", "日本語",
         "emoji \U0001f600", 'a"quote', "back\\slash", "tab\tx", "x"]  # fmt: skip


@dataclass(frozen=True)
class Op:
    kind: str
    """A request type label for diagnosis, e.g. `POST /items/{id}/bids`."""
    request: RawRequest
    fresh_connection: bool = False


def _json_req(method: str, path: str, body: Any, kind: str) -> Op:
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    return Op(kind, RawRequest(method, path, JSON_HEADERS, data))


def _get(route: str, path: str) -> Op:
    return Op(f"GET {route}", RawRequest("GET", path))


class SequenceGenerator:
    """A bounded, seeded mix of reads, writes and invalid requests over a small set of hot rows."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(f"bidbench-differential:{seed}")
        self.hot_items = sorted(self.rng.sample(range(1, 15_001), 12)) + [15_001, 15_002, 15_003]
        self.nicknames = [f"diff_{i}" for i in range(12)] + ["user7", "user42"]

    def _item_id(self) -> int:
        return self.rng.choice(self.hot_items) if self.rng.random() < 0.7 else self.rng.randint(1, 15_010)

    def _paging(self) -> str:
        parts = []
        if self.rng.random() < 0.3:
            parts.append(f"limit={self.rng.choice([1, 5, 20, 100, self.rng.randint(1, 100)])}")
        if self.rng.random() < 0.3:
            parts.append(f"offset={self.rng.choice([0, 3, 10, 500, 10_000, self.rng.randint(0, 600)])}")
        self.rng.shuffle(parts)
        return ("?" + "&".join(parts)) if parts else ""

    def _text(self, low: int, high: int) -> str:
        words = [self.rng.choice(WORDS) for _ in range(self.rng.randint(low, high))]
        return " ".join(words)[:200] if high <= 40 else " ".join(words)

    def read(self) -> Op:
        r = self.rng.random()
        for limit, route in ((0.05, "/regions"), (0.10, "/categories"), (0.13, "/ready")):
            if r < limit:
                return _get(route, route)
        if r < 0.38:
            cid = self.rng.randint(1, 21)
            return _get("/categories/{id}/items", f"/categories/{cid}/items{self._paging()}")
        if r < 0.65:
            return _get("/items/{id}", f"/items/{self._item_id()}")
        if r < 0.85:
            return _get("/items/{id}/bids", f"/items/{self._item_id()}/bids{self._paging()}")
        uid = self.rng.randint(1, 10_000) if self.rng.random() < 0.7 else self.rng.randint(10_001, 10_015)
        return _get("/users/{id}", f"/users/{uid}")

    def valid_item(self) -> dict[str, Any]:
        return {
            "seller_id": self.rng.randint(1, 10_000) if self.rng.random() < 0.9 else 99_999,
            "category_id": self.rng.randint(1, 20) if self.rng.random() < 0.9 else 21,
            "title": self._text(1, 6) or "t",
            "description": self._text(0, 30),
            "initial_price_cents": self.rng.randint(1, 1_000_000),
            "duration_seconds": self.rng.randint(60, 2_592_000),
        }

    def write(self) -> Op:
        r = self.rng.random()
        if r < 0.25:
            return _json_req("POST", "/items", self.valid_item(), "POST /items")
        if r < 0.40:
            body = {"title": self._text(1, 6) or "t", "description": self._text(0, 20)}
            return _json_req("PUT", f"/items/{self._item_id()}", body, "PUT /items/{id}")
        if r < 0.45:
            return Op("DELETE /items/{id}", RawRequest("DELETE", f"/items/{self._item_id()}"))
        if r < 0.85:
            amount = self.rng.choice([self.rng.randint(1, 200_000), self.rng.randint(50_000, 150_000)])
            bidder = self.rng.randint(1, 10_000) if self.rng.random() < 0.95 else 99_999
            body = {"bidder_id": bidder, "amount_cents": amount}
            return _json_req("POST", f"/items/{self._item_id()}/bids", body, "POST /items/{id}/bids")
        body = {"nickname": self.rng.choice(self.nicknames), "region_id": self.rng.randint(1, 21)}
        return _json_req("POST", "/users", body, "POST /users")

    def invalid(self) -> Op:
        r = self.rng.random()
        if r < 0.15:
            bad = self.rng.choice(["abc", "0", "-1", "2147483648", "1e3", "%31", "00000000001"])
            path = self.rng.choice(
                [f"/items/{bad}", f"/users/{bad}", f"/items/{bad}/bids", f"/categories/{bad}/items"]
            )
            return Op("bad path id", RawRequest("GET", path))
        if r < 0.30:
            bad = self.rng.choice(["limit=0", "limit=101", "offset=-1", "offset=10001", "limit=x", "limit=1&limit=1",
                                   "limit=%35", "limit=", "offset=99999999999999999999"])  # fmt: skip
            path = self.rng.choice(["/categories/3/items", "/items/1/bids"])
            return Op("bad query", RawRequest("GET", f"{path}?{bad}"))
        if r < 0.40:
            method, path = self.rng.choice([("PATCH", "/items/1"), ("DELETE", "/regions"), ("GET", "/items"),
                                            ("OPTIONS", "/users/1"), ("PUT", "/items/2/bids"), ("HEAD", "/categories")])  # fmt: skip
            return Op("wrong method", RawRequest(method, path))
        if r < 0.45:
            return Op(
                "unknown route",
                RawRequest("GET", self.rng.choice(["/nope", "/regions/", "//items", "/items//bids"])),
            )
        if r < 0.55:
            ct = self.rng.choice(["text/plain", "application/xml", "application/jsonx"])
            body = json.dumps({"nickname": "ct_user", "region_id": 1}).encode()
            return Op("wrong content type", RawRequest("POST", "/users", (("Content-Type", ct),), body))
        if r < 0.62:
            raw = self.rng.choice([b"{", b"", b"[]", b"\xef\xbb\xbf{}", b"\xff", b'{"a":1}{}',
                                   b'{"nickname":"\\ud800"}', b"null"])  # fmt: skip
            path = self.rng.choice(["/users", "/items", "/items/5/bids", "/items/5"])
            method = "PUT" if path == "/items/5" else "POST"
            return Op("malformed body", RawRequest(method, path, JSON_HEADERS, raw))
        if r < 0.67:
            size = self.rng.choice([65_537, 70_000])
            if self.rng.random() < 0.5:
                req = RawRequest("POST", "/users", JSON_HEADERS, declared_length=size)
            else:
                req = RawRequest("POST", "/users", JSON_HEADERS, b"x" * size, chunk_size=4096)
            return Op("too large", req, fresh_connection=True)
        # a valid write with one field broken, dropped or an unknown one added
        kind_r = self.rng.random()
        if kind_r < 0.4:
            body: dict[str, Any] = self.valid_item()
            path, kind = "/items", "POST /items (invalid field)"
        elif kind_r < 0.7:
            body = {"bidder_id": self.rng.randint(1, 100), "amount_cents": self.rng.randint(1, 10**6)}
            path, kind = f"/items/{self._item_id()}/bids", "POST /items/{id}/bids (invalid field)"
        else:
            body = {"nickname": "valid_nick", "region_id": 3}
            path, kind = "/users", "POST /users (invalid field)"
        key = self.rng.choice(list(body))
        action = self.rng.random()
        if action < 0.2:
            del body[key]
        elif action < 0.3:
            body["unexpected"] = 1
        else:
            body[key] = self.rng.choice([None, "x", -1, 0, 1.5, [], {}, True, "", 2_147_483_648, 10**20])
        return _json_req("POST", path, body, kind)

    def sequence(self, count: int) -> list[Op]:
        ops = []
        for _ in range(count):
            r = self.rng.random()
            ops.append(self.read() if r < 0.55 else self.write() if r < 0.80 else self.invalid())
        return ops


def _kind_of(obj: dict[str, Any]) -> str | None:
    if "item_id" in obj and "bidder_id" in obj:
        return "bids"
    if "nickname" in obj and "region_id" in obj:
        return "users"
    if "category_id" in obj and "seller_id" in obj:
        return "items"
    return None


def mask(value: Any) -> Any:
    """Replace the timestamps of rows created during the run (id above the seeded maximum) by a marker."""
    if isinstance(value, list):
        return [mask(v) for v in value]
    if isinstance(value, dict):
        kind = _kind_of(value)
        new = isinstance(value.get("id"), int) and kind is not None and value["id"] > SEEDED_MAX[kind]
        return {
            k: ("<new-row timestamp>" if new and k in VOLATILE and isinstance(v, str) else mask(v))
            for k, v in value.items()
        }
    return value


def canonical(response: RawResponse) -> dict[str, Any]:
    out: dict[str, Any] = {"status": response.status, "content_type": response.header("Content-Type")}
    if response.status == 405:
        out["allow"] = response.header("Allow")
    if response.body is None:
        out["body"] = None
    else:
        try:
            out["body"] = mask(parse(response.body))
        except InvalidJson as exc:
            out["body_error"] = str(exc)
            out["raw"] = response.body[:200].decode("utf-8", "replace")
    return out


def run_sequence(base_url: str, ops: list[Op]) -> tuple[list[dict[str, Any]], list[str]]:
    """The canonical responses, and the wire-rule problems seen along the way."""
    out: list[dict[str, Any]] = []
    wire: list[str] = []
    deadline = time.monotonic() + TIME_BUDGET_S
    with Connection(base_url) as conn:
        for index, op in enumerate(ops):
            if time.monotonic() > deadline:
                wire.append(f"time budget of {TIME_BUDGET_S:.0f} s exhausted after {index} requests")
                break
            try:
                response = send(base_url, op.request) if op.fresh_connection else conn.request(op.request)
            except (TransportError, OSError) as exc:
                conn.close()
                out.append({"transport_error": f"{exc.__class__.__name__}: {exc}"})
                continue
            problems = wire_problems(response, head_request=op.request.method == "HEAD")
            wire.extend(f"#{index} {op.request.describe()}: {problem}" for problem in problems)
            out.append(canonical(response))
    return out, wire


def final_state(db: ConformanceDb) -> dict[str, str]:
    """Content digests with the timestamps of new rows masked, plus sequence positions."""
    queries = {
        "users": "concat_ws('|', id, nickname, region_id, rating, CASE WHEN id > {m} THEN NULL ELSE created_at END)",
        "items": "concat_ws('|', id, seller_id, category_id, title, description, initial_price_cents, max_bid_cents, "
        "bid_count, CASE WHEN id > {m} THEN end_time - start_time ELSE NULL END, "
        "CASE WHEN id > {m} THEN NULL ELSE start_time END, CASE WHEN id > {m} THEN NULL ELSE end_time END)",
        "bids": "concat_ws('|', id, item_id, bidder_id, amount_cents, CASE WHEN id > {m} THEN NULL ELSE created_at END)",
    }
    out: dict[str, str] = {}
    with db.connect() as conn:
        for table, expr in queries.items():
            q = sql.SQL("SELECT coalesce(md5(string_agg({} , E'\\n' ORDER BY id)), '') FROM {} t").format(
                sql.SQL(expr.format(m=SEEDED_MAX[table])), sql.Identifier(table)
            )
            row = conn.execute(q).fetchone()
            out[table] = row[0] if row else ""
            seq = conn.execute(
                sql.SQL("SELECT last_value FROM {}").format(sql.Identifier(f"{table}_id_seq"))
            ).fetchone()
            out[f"{table}_id_seq"] = str(seq[0]) if seq else "?"
    return out


def _blame(values: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(majority targets, unequal targets) for one request's canonical responses."""
    groups: dict[str, list[str]] = {}
    for name, value in values.items():
        groups.setdefault(dumps(value), []).append(name)
    if len(groups) == 1:
        return list(values), []
    ranked = sorted(groups.values(), key=len, reverse=True)
    if len(ranked[0]) * 2 > len(values):
        majority = ranked[0]
        return majority, [n for n in values if n not in majority]
    return [], list(values)


def _clip(text: str, lines: int) -> str:
    parts = text.splitlines()
    return "\n".join(
        parts[:lines] + ([f"... ({len(parts) - lines} more diff lines)"] if len(parts) > lines else [])
    )


def compare(
    names: list[str], ops: list[Op], responses: dict[str, list[dict[str, Any]]]
) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """Per-target problems (the first divergence in full, then a count) and a summary."""
    problems: dict[str, list[str]] = {n: [] for n in names}
    counts: dict[str, int] = {n: 0 for n in names}
    by_kind: dict[str, Counter[str]] = {n: Counter() for n in names}
    length = min(len(r) for r in responses.values())
    for index in range(length):
        values = {n: responses[n][index] for n in names}
        majority, unequal = _blame(values)
        for name in unequal:
            counts[name] += 1
            by_kind[name][ops[index].kind] += 1
            if counts[name] > 1:
                continue
            reference = majority[0] if majority else next(n for n in names if n != name)
            problems[name].append(
                f"first difference at request #{index} ({ops[index].kind}): {ops[index].request.describe()}\n"
                f"  {reference}: {dumps(values[reference])[:400]}\n"
                f"  {name}: {dumps(values[name])[:400]}\n"
                + _clip(unified_diff(values[reference], values[name], reference, name), 40)
            )
    for name in names:
        if counts[name]:
            kinds = ", ".join(f"{k} x{v}" for k, v in sorted(by_kind[name].items(), key=lambda kv: -kv[1]))
            problems[name].append(
                f"{counts[name]} of {length} responses differ from the majority; by request type: {kinds}"
            )
    return problems, {"differences": counts}


def run_differential(targets: list[Target], db: ConformanceDb, extra: dict[str, Any]) -> list[CheckResult]:
    ops = SequenceGenerator(SEED).sequence(COUNT)
    names = [t.name for t in targets]
    responses: dict[str, list[dict[str, Any]]] = {}
    wire: dict[str, list[str]] = {}
    states: dict[str, dict[str, str]] = {}
    invariants: dict[str, list[str]] = {}
    seconds: dict[str, float] = {}
    for target in targets:
        db.reset()
        started = time.monotonic()
        with target.running(db) as base_url:
            responses[target.name], wire[target.name] = run_sequence(base_url, ops)
        seconds[target.name] = time.monotonic() - started
        states[target.name] = final_state(db)
        invariants[target.name] = db.invariant_violations()
    statuses = dict(Counter(r.get("status", 0) for r in responses[names[0]]))
    extra["differential"] = {"seed": SEED, "requests": len(ops), "statuses_of_first_target": statuses}
    check = f"sequence of {len(ops)} requests (seed {SEED})"
    if len(targets) < 2:  # nothing to compare against: only the wire rules and the invariants count
        return [checked(PART, n, check, wire[n] + invariants[n], seconds=seconds[n]) for n in names]
    results: list[CheckResult] = []
    diffs, summary = compare(names, ops, responses)
    _, state_unequal = _blame(states)
    for name in names:
        problems = list(diffs[name])
        if name in state_unequal:
            others = [n for n in names if n != name]
            differing = sorted(
                k for k in states[name] if any(states[o].get(k) != states[name][k] for o in others)
            )
            problems.append(f"final database state differs from the others in: {', '.join(differing)}")
        problems.extend(f"wire rule: {w}" for w in wire[name][:20])
        problems.extend(f"invariant: {v}" for v in invariants[name])
        detail = {"differences": summary["differences"][name], "requests": len(responses[name])}
        results.append(checked(PART, name, check, problems, detail=detail, seconds=seconds[name]))
    return results
