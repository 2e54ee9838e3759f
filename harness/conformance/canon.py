"""Canonical JSON, expectation matchers, readable diffs and the wire rules every response must follow.

Canonicalization is parsing: objects keep their key order (field order is part of the contract), strings
are decoded (escaping style does not matter, contract/README.md), numbers keep their type (an id sent as
`5.0` is not the integer 5 on the wire). Comparison is structural and type-strict (`true` is not `1`).

The matchers of an expected body (`$match`, `capture`, `of` with `plus_seconds`, `$ref`) are described in
contract/conformance/README.md; a `now` matcher also takes `window_s` (default 120 s).
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from email.utils import parsedate_to_datetime
from typing import Any

from harness.conformance.client import RawResponse

TIMESTAMP_RE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$")
SERVER_TIMING_RE = re.compile(r"^db;dur=[0-9]+\.[0-9]{3}, app;dur=[0-9]+\.[0-9]{3}$")
IMF_FIXDATE_RE = re.compile(
    r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
    r"[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$"
)
ERROR_CODES = {
    400: "bad_request",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    417: "expectation_failed",
    500: "internal_error",
    503: "db_unavailable",
}
MATCHER_KINDS = ("any", "int", "string", "timestamp", "now")


class InvalidJson(ValueError):
    pass


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise InvalidJson(f"duplicate key {key!r} in a response object")
        out[key] = value
    return out


def _no_constants(name: str) -> Any:
    raise InvalidJson(f"non-JSON constant {name}")


def parse(body: bytes) -> Any:
    """Parse a response body strictly: UTF-8, RFC 8259, no duplicate keys, floats kept as Decimal."""
    try:
        text = body.decode("utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        raise InvalidJson(f"body is not valid UTF-8 ({exc.reason} at byte {exc.start})") from exc
    try:
        return json.loads(
            text, object_pairs_hook=_pairs_hook, parse_float=Decimal, parse_constant=_no_constants
        )
    except json.JSONDecodeError as exc:
        raise InvalidJson(f"body is not valid JSON ({exc.msg} at {exc.pos})") from exc


def dumps(value: Any, indent: int | None = None) -> str:
    """The canonical text of a parsed value: key order kept, compact, UTF-8 (not ASCII-escaped)."""

    def default(obj: object) -> object:
        if isinstance(obj, Decimal):
            return float(obj)
        raise TypeError(type(obj).__name__)

    separators = (",", ":") if indent is None else (",", ": ")
    return json.dumps(value, ensure_ascii=False, separators=separators, indent=indent, default=default)


_STRING_OR_SPACE = re.compile(r'"(?:[^"\\]|\\.)*"?|[ \t\r\n]', re.DOTALL)


def whitespace_outside_strings(text: str) -> int | None:
    """Offset of the first insignificant whitespace character, or None if the text is compact."""
    return next((m.start() for m in _STRING_OR_SPACE.finditer(text) if m.group()[0] != '"'), None)


def parse_timestamp(value: str) -> datetime | None:
    if not TIMESTAMP_RE.match(value):
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def format_timestamp(moment: datetime) -> str:
    moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass
class MatchContext:
    sent_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    captures: dict[str, Any] = field(default_factory=dict)
    window_s: float = 120.0


def validate_expectation(value: Any, path: str = "$") -> list[str]:
    """Problems in an expected body (unknown matcher kinds, bad options); used by the case loader."""
    problems: list[str] = []
    if isinstance(value, dict):
        if "$ref" in value:
            if set(value) != {"$ref"}:
                problems.append(f"{path}: $ref takes no other keys")
        elif "$match" in value:
            kind = value["$match"]
            if kind not in MATCHER_KINDS:
                problems.append(f"{path}: unknown matcher {kind!r} (known: {', '.join(MATCHER_KINDS)})")
            extra = set(value) - {"$match", "capture", "plus_seconds", "of", "window_s"}
            if extra:
                problems.append(f"{path}: unknown matcher options {sorted(extra)}")
            if ("plus_seconds" in value) != ("of" in value):
                problems.append(f"{path}: plus_seconds and of go together")
        else:
            for key, item in value.items():
                problems.extend(validate_expectation(item, f"{path}.{key}"))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            problems.extend(validate_expectation(item, f"{path}[{index}]"))
    elif isinstance(value, float):
        problems.append(f"{path}: floats never appear in responses (use an integer)")
    return problems


_TYPE_NAMES = (
    (type(None), "null"), (bool, "boolean"), (int, "integer"), ((float, Decimal), "non-integer number"),
    (str, "string"), (list, "array"), (dict, "object"),
)  # fmt: skip


def _type_name(value: Any) -> str:
    return next((name for kind, name in _TYPE_NAMES if isinstance(value, kind)), type(value).__name__)


def _short(value: Any) -> str:
    text = dumps(value) if not isinstance(value, Decimal) else str(value)
    return text if len(text) <= 100 else text[:97] + "..."


def _match_matcher(spec: dict[str, Any], actual: Any, path: str, ctx: MatchContext) -> list[str]:
    if "$ref" in spec:
        name = spec["$ref"]
        if name not in ctx.captures:
            return [f"{path}: nothing was captured as {name!r} before this step"]
        return match(ctx.captures[name], actual, path, ctx)
    kind = spec["$match"]
    problems: list[str] = []
    if kind == "int" and (not isinstance(actual, int) or isinstance(actual, bool)):
        return [f"{path}: expected an integer, got {_type_name(actual)} {_short(actual)}"]
    if kind == "string" and not isinstance(actual, str):
        return [f"{path}: expected a string, got {_type_name(actual)} {_short(actual)}"]
    if kind in ("timestamp", "now"):
        moment = parse_timestamp(actual) if isinstance(actual, str) else None
        if moment is None:
            return [f"{path}: expected a timestamp YYYY-MM-DDTHH:MM:SS.mmmZ, got {_short(actual)}"]
        if kind == "now":
            window = float(spec.get("window_s", ctx.window_s))
            if abs((moment - ctx.sent_at).total_seconds()) > window:
                problems.append(
                    f"{path}: expected a timestamp near the request time {format_timestamp(ctx.sent_at)} "
                    f"(within {window:.0f} s), got {actual}"
                )
        if "of" in spec:
            base = ctx.captures.get(spec["of"])
            base_moment = parse_timestamp(base) if isinstance(base, str) else None
            if base_moment is None:
                problems.append(f"{path}: no timestamp captured as {spec['of']!r}")
            else:
                wanted = format_timestamp(base_moment + timedelta(seconds=float(spec["plus_seconds"])))
                if actual != wanted:
                    problems.append(
                        f"{path}: expected {spec['of']} + {spec['plus_seconds']} s = {wanted}, got {actual}"
                    )
    if not problems and "capture" in spec:
        ctx.captures[spec["capture"]] = actual
    return problems


def match(expected: Any, actual: Any, path: str = "$", ctx: MatchContext | None = None) -> list[str]:
    """Differences between an expectation (with matchers) and a parsed actual value, as readable lines."""
    ctx = ctx or MatchContext()
    if isinstance(expected, dict) and ("$match" in expected or "$ref" in expected):
        return _match_matcher(expected, actual, path, ctx)
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {_type_name(actual)} {_short(actual)}"]
        problems: list[str] = []
        missing = [k for k in expected if k not in actual]
        extra = [k for k in actual if k not in expected]
        if missing:
            problems.append(f"{path}: missing keys {missing}")
        if extra:
            problems.append(f"{path}: unexpected keys {extra}")
        common_expected = [k for k in expected if k in actual]
        common_actual = [k for k in actual if k in expected]
        if common_expected != common_actual:
            problems.append(f"{path}: key order {common_actual}, expected {common_expected}")
        for key in common_expected:
            problems.extend(match(expected[key], actual[key], f"{path}.{key}", ctx))
        return problems
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [f"{path}: expected an array, got {_type_name(actual)} {_short(actual)}"]
        problems = []
        if len(expected) != len(actual):
            problems.append(f"{path}: expected {len(expected)} elements, got {len(actual)}")
        for index, (exp, act) in enumerate(zip(expected, actual, strict=False)):
            problems.extend(match(exp, act, f"{path}[{index}]", ctx))
        return problems
    if _type_name(expected) != _type_name(actual) or expected != actual:
        if isinstance(expected, str) and isinstance(actual, str) and max(len(expected), len(actual)) > 60:
            at = next((i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b), None)
            at = min(len(expected), len(actual)) if at is None else at
            return [
                f"{path}: strings differ at code point {at} (expected {len(expected)} code points, "
                f"got {len(actual)}): expected ...{_short(expected[at : at + 40])}, got ...{_short(actual[at : at + 40])}"
            ]
        return [f"{path}: expected {_short(expected)}, got {_short(actual)}"]
    return []


def unified_diff(expected: Any, actual: Any, label_a: str, label_b: str) -> str:
    a = dumps(expected, indent=1).splitlines()
    b = dumps(actual, indent=1).splitlines()
    return "\n".join(difflib.unified_diff(a, b, label_a, label_b, n=2, lineterm=""))


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"error": {"code": ERROR_CODES[status], "message": message}}


def wire_problems(response: RawResponse, server_timing: bool = True, head_request: bool = False) -> list[str]:
    """The wire rules of contract/README.md that hold for every response."""
    problems: list[str] = []
    content_types = response.header_all("Content-Type")
    if content_types != ["application/json"]:
        problems.append(f"Content-Type must be exactly application/json once, got {content_types}")
    dates = response.header_all("Date")
    if len(dates) != 1:
        problems.append(f"Date must be present once, got {dates}")
    elif not IMF_FIXDATE_RE.match(dates[0]):
        problems.append(f"Date is not an IMF-fixdate: {dates[0]!r}")
    else:
        try:
            parsedate_to_datetime(dates[0])
        except (TypeError, ValueError):
            problems.append(f"Date does not parse: {dates[0]!r}")
    if response.chunked:
        problems.append("the response is chunked; the contract requires a Content-Length")
    lengths = response.header_all("Content-Length")
    if len(lengths) != 1:
        problems.append(f"Content-Length must be present once, got {lengths}")
    timings = response.header_all("Server-Timing")
    if server_timing:
        if len(timings) != 1 or not SERVER_TIMING_RE.match(timings[0]):
            problems.append(
                f"Server-Timing must be 'db;dur=<ms>, app;dur=<ms>' with 3 decimals, got {timings}"
            )
    elif timings:
        problems.append(f"Server-Timing must be absent with SERVER_TIMING=0, got {timings}")
    if response.status == 405 and not response.header_all("Allow"):
        problems.append("a 405 must carry Allow")
    if response.status >= 500 and response.status != 503:
        problems.append(f"status {response.status} is a bug (the suite fails on any 500)")
    if head_request or response.body is None:
        return problems
    try:
        text = response.body.decode("utf-8")
    except UnicodeDecodeError:
        problems.append("the body is not valid UTF-8")
        return problems
    offset = whitespace_outside_strings(text)
    if offset is not None:
        problems.append(f"the body is not compact JSON (whitespace at offset {offset})")
    try:
        value = parse(response.body)
    except InvalidJson as exc:
        problems.append(str(exc))
        return problems
    code = ERROR_CODES.get(response.status)
    if response.status >= 400 and match({"error": {"code": code, "message": {"$match": "string"}}}, value):
        problems.append(
            f'an error body must be {{"error":{{"code":"{code}","message":...}}}}, got {_short(value)}'
        )
    return problems
