"""Unit tests of the conformance machinery: canonicalization and matchers, the wire checks, case loading
and its isolation rules, statement normalization, differential masking and blame, parity checks.
No database, no apps."""

from __future__ import annotations

import socket
import threading
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from harness.conformance import canon, cases, queries
from harness.conformance.client import (
    ClosedWithoutAnswer,
    RawRequest,
    RawResponse,
    TransportError,
    encode_request,
    send,
)
from harness.conformance.dbwork import LENIENT, Measured, WorkType, check_type, load_work
from harness.conformance.differential import SequenceGenerator, _blame, compare, mask

# ---- canonicalization and matching -------------------------------------------------------------


def test_parse_keeps_key_order_and_number_types() -> None:
    value = canon.parse(b'{"b":1,"a":[1.0,true,null,"\\u00e9"]}')
    assert list(value) == ["b", "a"]
    assert value["a"] == [Decimal("1.0"), True, None, "é"]
    assert isinstance(value["a"][0], Decimal)


@pytest.mark.parametrize(
    "body",
    [b'{"a":1,"a":2}', b"\xff", b"NaN", b"{", b'{"a":1} x'],
)
def test_parse_rejects_what_a_response_must_not_be(body: bytes) -> None:
    with pytest.raises(canon.InvalidJson):
        canon.parse(body)


def test_match_is_type_strict_and_order_sensitive() -> None:
    assert canon.match({"a": 1, "b": 2}, {"a": 1, "b": 2}) == []
    assert any("key order" in p for p in canon.match({"a": 1, "b": 2}, {"b": 2, "a": 1}))
    assert canon.match({"a": 1}, {"a": True})  # a boolean is not the integer 1
    assert canon.match({"a": 1}, {"a": Decimal("1.0")})  # 1.0 on the wire is not an integer
    assert any("missing keys" in p for p in canon.match({"a": 1, "b": 2}, {"a": 1}))
    assert any("unexpected keys" in p for p in canon.match({"a": 1}, {"a": 1, "b": 2}))
    assert any("expected 2 elements" in p for p in canon.match([1, 2], [1]))
    assert canon.match([2, 1], [1, 2])  # ordering included


def test_long_strings_report_where_they_differ() -> None:
    problems = canon.match("x" * 100, "x" * 50 + "y" * 50)
    assert problems and "code point 50" in problems[0]


def test_timestamp_matchers_capture_ref_and_offset() -> None:
    ctx = canon.MatchContext()
    now = canon.format_timestamp(ctx.sent_at)
    expected = {
        "start": {"$match": "now", "capture": "s"},
        "end": {"$match": "timestamp", "of": "s", "plus_seconds": 60},
        "again": {"$ref": "s"},
    }
    start = canon.parse_timestamp(now)
    assert start is not None
    end = canon.format_timestamp(start + timedelta(seconds=60))
    assert canon.match(expected, {"start": now, "end": end, "again": now}, ctx=ctx) == []
    ctx2 = canon.MatchContext()
    problems = canon.match(expected, {"start": now, "end": now, "again": "x"}, ctx=ctx2)
    assert any("+ 60 s" in p for p in problems) and any("$.again" in p for p in problems)


@pytest.mark.parametrize(
    "value,ok",
    [("2026-11-21T14:21:00.123Z", True), ("2026-11-21T14:21:00Z", False), ("2026-11-21T14:21:00.123+00:00", False),
     ("2026-13-21T14:21:00.123Z", False), (5, False)],
)  # fmt: skip
def test_timestamp_format(value: object, ok: bool) -> None:
    assert (canon.match({"$match": "timestamp"}, value) == []) is ok


def test_now_matcher_rejects_a_local_time_shift() -> None:
    ctx = canon.MatchContext()
    shifted = canon.format_timestamp(ctx.sent_at.replace(hour=(ctx.sent_at.hour + 1) % 24))
    assert canon.match({"$match": "now"}, shifted, ctx=ctx)


def test_validate_expectation_flags_unknown_matchers_and_floats() -> None:
    assert canon.validate_expectation({"a": {"$match": "nope"}})
    assert canon.validate_expectation({"a": 1.5})
    assert canon.validate_expectation({"a": {"$match": "timestamp", "of": "x"}})
    assert canon.validate_expectation({"a": [{"$match": "int"}]}) == []


def test_whitespace_outside_strings() -> None:
    assert canon.whitespace_outside_strings('{"a b":"c\\" d"}') is None
    assert canon.whitespace_outside_strings('{"a": 1}') == 5
    assert canon.whitespace_outside_strings('{"a":1}\n') == 7


def _response(status: int = 200, body: bytes = b'{"status":"ok"}', **headers: str) -> RawResponse:
    base = {
        "Content-Type": "application/json",
        "Date": "Sat, 21 Nov 2026 14:34:15 GMT",
        "Content-Length": str(len(body)),
        "Server-Timing": "db;dur=0.000, app;dur=0.168",
    }
    base.update(headers)
    return RawResponse(status, "", [(k, v) for k, v in base.items() if v], body)


def test_wire_rules_accept_a_good_response() -> None:
    assert canon.wire_problems(_response()) == []


@pytest.mark.parametrize(
    "response,fragment",
    [
        (_response(**{"Content-Type": "application/json; charset=utf-8"}), "Content-Type"),
        (_response(Date=""), "Date"),
        (_response(**{"Server-Timing": "db;dur=1.5, app;dur=2.000"}), "Server-Timing"),
        (_response(body=b'{"status": "ok"}'), "compact"),
        (_response(body=b'{"status":"ok"}\n'), "compact"),
        (
            _response(
                status=405, body=b'{"error":{"code":"method_not_allowed","message":"method not allowed"}}'
            ),
            "Allow",
        ),
        (_response(status=400, body=b'{"error":{"code":"not_found","message":"x"}}'), "error body"),
        (
            _response(status=500, body=b'{"error":{"code":"internal_error","message":"internal error"}}'),
            "bug",
        ),
    ],
)
def test_wire_rules_catch_violations(response: RawResponse, fragment: str) -> None:
    assert any(fragment in p for p in canon.wire_problems(response)), fragment


def test_server_timing_must_be_absent_when_off() -> None:
    assert canon.wire_problems(_response(), server_timing=False)
    assert canon.wire_problems(_response(**{"Server-Timing": ""}), server_timing=False) == []


# ---- the raw client's encoding --------------------------------------------------------------------


def test_encode_chunked_and_declared_length() -> None:
    head, body = encode_request(RawRequest("POST", "/users", body=b"abcdefg", chunk_size=3), "h", True)
    assert b"Transfer-Encoding: chunked" in head and body == b"3\r\nabc\r\n3\r\ndef\r\n1\r\ng\r\n0\r\n\r\n"
    head, body = encode_request(RawRequest("POST", "/users", declared_length=70000), "h", False)
    assert b"Content-Length: 70000" in head and body == b"" and b"Connection: close" in head
    head, _ = encode_request(RawRequest("GET", "/items/\uff11"), "h", True)
    assert head.startswith("GET /items/\uff11 HTTP/1.1".encode())


# ---- case loading -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sessions() -> list[cases.Session]:
    return cases.load_sessions()


def _all_cases(sessions: list[cases.Session]) -> list[cases.Case]:
    return [case for session in sessions for case in session.cases]


def test_all_case_files_load(sessions: list[cases.Session]) -> None:
    names = [c.name for c in _all_cases(sessions)]
    assert len(names) == len(set(names)) > 300
    assert {s.name for s in sessions} >= {"reads", "writes", "server-timing-off"}


def test_every_hostile_input_of_the_shared_list_is_covered(sessions: list[cases.Session]) -> None:
    tags = {t for c in _all_cases(sessions) for t in c.tags}
    assert set(cases.HOSTILE_TAGS) - tags == set()


def test_every_route_and_method_has_a_success_and_every_error_status_appears(
    sessions: list[cases.Session],
) -> None:
    seen: set[tuple[str, str, int]] = set()
    for case in _all_cases(sessions):
        for step in case.steps:
            seen.add((cases.route_of(step.request.target)[0] or "-", step.request.method, step.expect.status))
    for route, methods in cases.ROUTES.items():
        for method in methods:
            assert any(r == route and m == method and s < 300 for r, m, s in seen), (route, method)
    statuses = {s for _, _, s in seen}
    assert {400, 404, 405, 409, 413, 415} <= statuses


def test_error_expectations_use_the_error_table(sessions: list[cases.Session]) -> None:
    for case in _all_cases(sessions):
        for step in case.steps:
            body = step.expect.body
            if step.expect.status >= 400 and isinstance(body, dict) and "error" in body:
                assert body["error"]["code"] == canon.ERROR_CODES[step.expect.status], case.name


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_body_parts_and_headers(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "a.yaml",
        """
session: s
readonly: true
cases:
  - name: parts
    request:
      method: POST
      path: '/users'
      headers: {X-Test: '1'}
      body: [{text: 'ab'}, {hex: 'ff 00'}, {repeat: 'x', count: 3}, {json: {k: [1, "é"]}}]
    expect: {status: 400, error: 'missing field: nickname'}
  - name: no content type
    request: {method: PUT, path: '/items/1', headers: {Content-Type: null}, body: '{}'}
    expect: {status: 415, error: content type must be application/json}
""",
    )
    (session,) = cases.load_sessions(tmp_path)
    first, second = session.cases
    req = first.steps[0].request
    assert req.body == b"ab\xff\x00xxx" + '{"k":[1,"é"]}'.encode()
    assert ("Content-Type", "application/json") in req.headers and ("X-Test", "1") in req.headers
    assert first.steps[0].expect.body == {
        "error": {"code": "bad_request", "message": "missing field: nickname"}
    }
    assert all(k != "Content-Type" for k, _ in second.steps[0].request.headers)


def test_raw_requests_keep_connection_and_exemptions(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "a.yaml",
        """
session: s
readonly: true
cases:
  - name: raw
    request: {raw: ["GET /health HTTP/1.1\\r\\nHost: a\\r\\nX: a", {hex: '00'}, "\\r\\n\\r\\n"]}
    expect: {status: 400, error: bad request, exempt: {php: 'nginx answers otherwise'}}
  - name: kept
    same_connection: true
    steps:
      - request: {method: TRACE, path: '/health'}
        expect: {status: 405, error: method not allowed, connection: open}
""",
    )
    (session,) = cases.load_sessions(tmp_path)
    raw, kept = session.cases
    spec = raw.steps[0].request
    assert (spec.method, spec.target) == ("GET", "/health")
    head, body = encode_request(spec, "127.0.0.1:1", keep_alive=True)
    # Sent byte for byte: no Host or Connection added, the NUL kept.
    assert head == b"GET /health HTTP/1.1\r\nHost: a\r\nX: a\x00\r\n\r\n" and body == b""
    assert dict(raw.steps[0].expect.exempt) == {"php": "nginx answers otherwise"}
    assert kept.same_connection and kept.steps[0].expect.connection == "open"


def test_a_half_close_request_may_be_answered_or_closed(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "a.yaml",
        """
session: s
readonly: true
cases:
  - name: cut
    request: {raw: "POST /users HTTP/1.1\\r\\nContent-Length: 9\\r\\n\\r\\n{", half_close: true}
    expect: {status: 400, error: bad request, or_closed: true}
""",
    )
    (session,) = cases.load_sessions(tmp_path)
    step = session.cases[0].steps[0]
    assert step.request.half_close and step.expect.or_closed


def _serve_once(reply: bytes) -> tuple[socket.socket, threading.Thread]:
    """A one-connection loopback server: reads until the client half-closes, then sends reply and closes."""
    server = socket.create_server(("127.0.0.1", 0))

    def run() -> None:
        conn, _ = server.accept()
        with conn:
            while conn.recv(4096):
                pass
            if reply:
                conn.sendall(reply)
        server.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return server, thread


def test_closed_without_answer_is_told_apart_from_a_broken_answer() -> None:
    req = RawRequest(
        "POST", "/users", raw=b"POST /users HTTP/1.1\r\nContent-Length: 9\r\n\r\n{", half_close=True
    )
    server, thread = _serve_once(b"")
    with pytest.raises(ClosedWithoutAnswer):
        send(f"http://127.0.0.1:{server.getsockname()[1]}", req, timeout_s=5)
    thread.join(5)
    server, thread = _serve_once(b"HTTP/1.1 400 Bad")
    with pytest.raises(TransportError) as caught:
        send(f"http://127.0.0.1:{server.getsockname()[1]}", req, timeout_s=5)
    assert not isinstance(caught.value, ClosedWithoutAnswer)
    thread.join(5)


def test_a_request_in_pieces_reaches_the_server_in_parts() -> None:
    """`pieces: N` writes N parts with a pause between them, so the server's reads see them apart."""
    server = socket.create_server(("127.0.0.1", 0))
    reads: list[bytes] = []

    def run() -> None:
        conn, _ = server.accept()
        with conn:
            received = b""
            while not received.endswith(b"\r\n\r\n"):
                data = conn.recv(65536)
                if not data:
                    break
                reads.append(data)
                received += data
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        server.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    raw = b"GET /health HTTP/1.1\r\nX-Big: " + b"a" * 600 + b"\r\n\r\n"
    response = send(
        f"http://127.0.0.1:{server.getsockname()[1]}", RawRequest("GET", "/health", raw=raw, pieces=4)
    )
    thread.join(5)
    assert response.status == 200
    assert b"".join(reads) == raw and len(reads) == 4, [len(r) for r in reads]


@pytest.mark.parametrize(
    ("request_yaml", "refusal"),
    [
        ("{method: GET, path: '/health', pieces: 2}", "pieces goes only with raw"),
        ('{raw: "GET / HTTP/1.1\\r\\n\\r\\n", pieces: 0}', "pieces must be a whole number"),
        ('{raw: "GET / HTTP/1.1\\r\\n\\r\\n", pieces: true}', "pieces must be a whole number"),
    ],
)
def test_pieces_is_refused_where_it_means_nothing(tmp_path: Path, request_yaml: str, refusal: str) -> None:
    _write(
        tmp_path,
        "a.yaml",
        f"cases:\n  - name: c\n    request: {request_yaml}\n    expect: {{status: 200, body: {{}}}}\n",
    )
    with pytest.raises(cases.CaseError, match=refusal):
        cases.load_sessions(tmp_path)


def test_a_kept_connection_expectation_needs_a_shared_connection(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "a.yaml",
        "cases:\n  - name: c\n    request: {method: GET, path: '/x'}\n"
        "    expect: {status: 200, body: {}, connection: open}\n",
    )
    with pytest.raises(cases.CaseError, match="same_connection"):
        cases.load_sessions(tmp_path)


def test_error_table_has_the_step_0_and_timeout_codes() -> None:
    assert canon.ERROR_CODES[408] == "request_timeout"
    assert canon.ERROR_CODES[417] == "expectation_failed"


@pytest.mark.parametrize(
    "snippet,error",
    [
        ("    request: {method: GET, path: '/x'}\n    expect: {status: 200}\n", "exactly one of"),
        (
            "    request: {method: GET, path: '/x'}\n    expect: {status: 200, body: {a: {$match: bogus}}}\n",
            "unknown matcher",
        ),
        (
            "    request: {method: GET, path: 'x'}\n    expect: {status: 200, body: {}}\n",
            "path starting with /",
        ),
        ("    request: {method: GET, path: '/x'}\n    expect: {status: 500, body: {}}\n", "below 500"),
        (
            "    request: {method: GET, path: '/x', bogus: 1}\n    expect: {status: 200, body: {}}\n",
            "unknown request keys",
        ),
        ("    request: {method: GET, path: '/x'}\n    expect: {status: [400, 405], error: x}\n", "any_body"),
    ],
)
def test_malformed_cases_are_rejected(tmp_path: Path, snippet: str, error: str) -> None:
    _write(tmp_path, "a.yaml", "cases:\n  - name: c\n" + snippet)
    with pytest.raises(cases.CaseError, match=error):
        cases.load_sessions(tmp_path)


def test_duplicate_case_names_are_rejected(tmp_path: Path) -> None:
    case = "  - name: same\n    request: {method: GET, path: '/x'}\n    expect: {status: 200, body: {}}\n"
    _write(tmp_path, "a.yaml", "cases:\n" + case)
    _write(tmp_path, "b.yaml", "cases:\n" + case)
    with pytest.raises(cases.CaseError, match="also used"):
        cases.load_sessions(tmp_path)


@pytest.mark.parametrize(
    ("first", "second", "row"),
    [
        # two cases touching a row one of them writes
        (
            """{method: PUT, path: '/items/5', body: '{"title":"t","description":""}'}""",
            "{method: GET, path: '/items/5'}",
            "item:5",
        ),
        # a new item counts as a write to its category
        (
            """{method: POST, path: '/items', body: '{"category_id":3}'}""",
            "{method: GET, path: '/categories/3/items'}",
            "category:3",
        ),
    ],
)
def test_isolation_rule_rejects_two_cases_sharing_a_written_row(
    tmp_path: Path, first: str, second: str, row: str
) -> None:
    _write(
        tmp_path,
        "w.yaml",
        f"""
session: w
cases:
  - name: writer
    request: {first}
    expect: {{status: 200, body: {{}}}}
  - name: reader
    request: {second}
    expect: {{status: 200, body: {{}}}}
""",
    )
    with pytest.raises(cases.CaseError, match=row):
        cases.load_sessions(tmp_path)


def test_readonly_sessions_may_reuse_rows(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "r.yaml",
        """
session: r
readonly: true
cases:
  - name: a
    request: {method: PUT, path: '/items/5', body: '{}'}
    expect: {status: 400, error: 'missing field: title'}
  - name: b
    request: {method: GET, path: '/items/5'}
    expect: {status: 200, body: {}}
""",
    )
    assert len(cases.load_sessions(tmp_path)[0].cases) == 2


def test_repeat_generator_in_expectations(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "r.yaml",
        """
cases:
  - name: a
    request: {method: GET, path: '/x'}
    expect: {status: 200, body: {title: {$repeat: "ab", count: 3}}}
""",
    )
    assert cases.load_sessions(tmp_path)[0].cases[0].steps[0].expect.body == {"title": "ababab"}


# ---- statement normalization ----------------------------------------------------------------------


def test_contract_statements_are_all_parsed() -> None:
    names = set(queries.contract_statements())
    assert {"ready", "list_regions", "get_item", "top_bids", "lock_item_for_bid", "create_user"} <= names
    assert len(names) == 17


def test_normalize_maps_placeholder_syntax_and_constants_to_the_contract() -> None:
    stored_by_pgss = (
        "UPDATE items SET max_bid_cents = $1::bigint, bid_count = bid_count + $3 WHERE id = $2::integer"
    )
    assert queries.name_of(stored_by_pgss) == "raise_item_max_bid"
    assert queries.name_of("SELECT $1") == "ready"
    assert queries.name_of("begin") == "begin" and queries.name_of("COMMIT") == "commit"


def test_normalize_tells_a_dropped_order_by_apart() -> None:
    assert queries.name_of("SELECT id, name FROM regions") is None
    text = queries.contract_statements()["list_item_bids"].replace("ORDER BY amount_cents DESC, id", "")
    assert queries.name_of(text) is None


# ---- differential ---------------------------------------------------------------------------------


def test_sequence_is_deterministic_and_mixed() -> None:
    a = SequenceGenerator(6).sequence(300)
    b = SequenceGenerator(6).sequence(300)
    assert [op.request for op in a] == [op.request for op in b]
    methods = {op.request.method for op in a}
    assert {"GET", "POST", "PUT", "DELETE"} <= methods
    assert SequenceGenerator(7).sequence(50) != SequenceGenerator(6).sequence(50)


def test_mask_hides_only_timestamps_of_new_rows() -> None:
    bid_new = {
        "id": 75065,
        "item_id": 1,
        "bidder_id": 2,
        "amount_cents": 5,
        "created_at": "2026-01-01T00:00:00.000Z",
    }
    bid_old = dict(bid_new, id=3)
    masked = mask({"bids": [bid_new, bid_old]})
    assert masked["bids"][0]["created_at"] == "<new-row timestamp>"
    assert masked["bids"][1]["created_at"] == "2026-01-01T00:00:00.000Z"


def test_blame_names_the_minority() -> None:
    assert _blame({"a": 1, "b": 1, "c": 2}) == (["a", "b"], ["c"])
    assert _blame({"a": 1, "b": 2}) == ([], ["a", "b"])
    assert _blame({"a": 1, "b": 1}) == (["a", "b"], [])


def test_compare_reports_the_first_difference_with_request_and_diff() -> None:
    ops = SequenceGenerator(1).sequence(3)
    same = {"status": 200, "body": {"x": 1}}
    responses = {
        "a": [same, same, same],
        "b": [same, same, same],
        "c": [same, {"status": 200, "body": {"x": 2}}, same],
    }
    problems, summary = compare(["a", "b", "c"], ops, responses)
    assert problems["a"] == [] and problems["b"] == []
    assert "request #1" in problems["c"][0] and ops[1].request.method in problems["c"][0]
    assert '-  "x": 1' in problems["c"][0] and '+  "x": 2' in problems["c"][0]
    assert summary["differences"]["c"] == 1


# ---- database-work parity -------------------------------------------------------------------------


def test_dbwork_file_loads_with_fixed_counts() -> None:
    count, types = load_work()
    assert count == 20
    assert all(len(t.requests) == count for t in types)
    names = [t.name for t in types]
    assert len(names) == len(set(names))
    assert {"get_item", "place_bid", "list_regions", "category_items", "item_bids"} <= set(names)


def _work() -> WorkType:
    return WorkType("get_item", (), {"get_item": 1, "top_bids": 1}, rows=40)


NO_TX = {"begin": 0, "commit": 0, "rollback": 0}


def test_check_type_exact_counts() -> None:
    ok = Measured(calls={"get_item": 20, "top_bids": 20}, rows={"get_item": 20, "top_bids": 20}, ends=NO_TX)
    assert check_type(_work(), 20, ok) == []
    skipped = Measured(
        calls={"get_item": 20, "top_bids": 11}, rows={"get_item": 20, "top_bids": 20}, ends=NO_TX
    )
    problems = check_type(_work(), 20, skipped)
    assert any("top_bids: 0.55 per request" in p and "skipped" in p for p in problems)
    extra = Measured(
        calls={"get_item": 20, "top_bids": 20, "not in the contract: set x=?": 1}, rows=ok.rows, ends=NO_TX
    )
    assert any("not in contract/queries.sql" in p for p in check_type(_work(), 20, extra))
    fewer_rows = Measured(calls=ok.calls, rows={"get_item": 20, "top_bids": 19}, ends=NO_TX)
    assert any(p.startswith("rows:") for p in check_type(_work(), 20, fewer_rows))


def test_check_type_is_lenient_only_for_commit_and_rollback() -> None:
    work = WorkType("place_bid", (), {"begin": 1, "lock_item_for_bid": 1, "commit": 1}, rows=20)
    logged = {"begin": 20, "commit": 20, "rollback": 0}
    seen = Measured(
        calls={"begin": 20, "lock_item_for_bid": 20, "commit": 2}, rows={"lock_item_for_bid": 20}, ends=logged
    )
    assert check_type(work, 20, seen) == []
    too_many = Measured(
        calls={"begin": 20, "lock_item_for_bid": 20, "commit": 21},
        rows={"lock_item_for_bid": 20},
        ends=logged,
    )
    assert check_type(work, 20, too_many)
    no_begin = Measured(
        calls={"begin": 19, "lock_item_for_bid": 20, "commit": 20},
        rows={"lock_item_for_bid": 20},
        ends=logged,
    )
    assert check_type(work, 20, no_begin)
    assert set(LENIENT) == {"commit", "rollback"}


def test_check_type_counts_transaction_ends_exactly_from_the_log() -> None:
    work = WorkType("place_bid", (), {"begin": 1, "lock_item_for_bid": 1, "commit": 1}, rows=20)
    calls = {"begin": 20, "lock_item_for_bid": 20, "commit": 1}  # pg_stat_statements: a lower bound
    # A skipped COMMIT: the lenient pg_stat_statements count cannot see it, the statement log does.
    skipped = Measured(
        calls=calls, rows={"lock_item_for_bid": 20}, ends={"begin": 20, "commit": 19, "rollback": 0}
    )
    problems = check_type(work, 20, skipped)
    assert any(p.startswith("commit: 19 in the server's statement log") and "skipped" in p for p in problems)
    unmeasured = Measured(calls=calls, rows={"lock_item_for_bid": 20}, ends=None)
    assert any("not counted" in p for p in check_type(work, 20, unmeasured))
