"""Loading the golden cases: `contract/conformance/*.yaml` (the format is in that folder's README.md).

A file is a list of cases plus the session it belongs to. Files of one session share one database reset
and one app start, and run in file-name order, cases in file order. The loader also enforces the rules
that make "every case sees a freshly reset database" true (see `check_isolation`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness import paths
from harness.conformance.canon import ERROR_CODES, error_body, validate_expectation
from harness.conformance.client import JSON_HEADERS, RawRequest

WRITE_METHODS = ("POST", "PUT", "DELETE")
ROUTES: dict[str, tuple[str, ...]] = {
    "/health": ("GET",),
    "/ready": ("GET",),
    "/regions": ("GET",),
    "/categories": ("GET",),
    "/categories/{id}/items": ("GET",),
    "/items": ("POST",),
    "/items/{id}": ("GET", "PUT", "DELETE"),
    "/items/{id}/bids": ("GET", "POST"),
    "/users": ("POST",),
    "/users/{id}": ("GET",),
}
_ROUTE_PATTERNS = [
    (re.compile("^" + template.replace("{id}", "([^/]+)") + "$"), template) for template in ROUTES
]
HOSTILE_TAGS = (
    "malformed-json", "wrong-type", "unknown-field", "huge-number", "negative-paging", "non-numeric-id",
    "leading-zeros", "invalid-utf8", "bom", "nesting", "lone-surrogate", "nul", "code-points",
    "duplicate-query", "too-large", "content-type", "charset", "wrong-method", "head",
)  # fmt: skip
"""The one shared list of hostile inputs (issue 6); every tag must be covered by at least one case."""


NON_CASE_FILES = ("dbwork.yaml",)


def case_files(directory: Path) -> list[Path]:
    return [p for p in sorted(directory.glob("*.yaml")) if p.name not in NON_CASE_FILES]


class CaseError(ValueError):
    """A case file is malformed; the message names the file and the case."""


def route_of(path: str) -> tuple[str | None, str | None]:
    """(route template, path id) of a request target; (None, None) for an unknown route."""
    raw_path = path.split("?", 1)[0]
    for pattern, template in _ROUTE_PATTERNS:
        m = pattern.match(raw_path)
        if m:
            return template, m.group(1) if m.groups() else None
    return None, None


@dataclass(frozen=True)
class Expectation:
    status: int
    """The expected status (the first of `statuses`)."""
    body: Any = None
    """The expected parsed body (with matchers), or None when `no_body` is set."""
    no_body: bool = False
    headers: tuple[tuple[str, str | None], ...] = ()
    """Exact header values; a None value means the header must be absent."""
    statuses: tuple[int, ...] = ()
    """All accepted statuses (one, unless the case is about HTTP syntax the stacks parse differently)."""
    any_body: bool = False
    """Lenient: any body and headers; only the status (and that it is no 5xx) is checked."""
    connection: str | None = None
    """`open`: the server must keep the connection (the case runs on one connection, see `Case`);
    `close`: it must close it. None: either."""
    or_closed: bool = False
    """`or_closed: true`: closing the connection without any answer also passes (the contract allows it,
    e.g. for a body cut short by the client's half-close, which nginx never answers); any answer must
    still be exactly the expected one."""
    exempt: tuple[tuple[str, str], ...] = ()
    """(impl, reason): a documented exemption of the contract (contract/README.md, "Request syntax").
    For that app the step passes with any answer or none, as long as it is no 5xx and the server goes
    on serving (the case's later steps)."""

    def accepts(self, status: int) -> bool:
        return status in (self.statuses or (self.status,))


@dataclass(frozen=True)
class Step:
    request: RawRequest
    expect: Expectation


@dataclass(frozen=True)
class Case:
    name: str
    file: str
    session: str
    steps: tuple[Step, ...]
    tags: tuple[str, ...] = ()
    same_connection: bool = False
    """All steps on one keep-alive connection, never silently reconnected (keep-alive checks)."""


@dataclass
class Session:
    name: str
    readonly: bool
    knobs: dict[str, str]
    files: list[str] = field(default_factory=list)
    cases: list[Case] = field(default_factory=list)


def _no_unknown_keys(raw: dict[str, Any], known: str, message: str) -> None:
    """Raise `<message> keys [...]` when raw has keys other than the space-separated `known`."""
    unknown = set(raw) - set(known.split())
    if unknown:
        raise CaseError(f"{message} keys {sorted(unknown)}")


def _decode_part(part: Any, where: str) -> bytes:
    if isinstance(part, str):
        return part.encode("utf-8")
    if not isinstance(part, dict) or len(part) < 1:
        raise CaseError(f"{where}: a body part is a mapping with one of text, hex, json, repeat")
    if "text" in part:
        return str(part["text"]).encode("utf-8")
    if "hex" in part:
        try:
            return bytes.fromhex(str(part["hex"]).replace(" ", ""))
        except ValueError as exc:
            raise CaseError(f"{where}: bad hex: {exc}") from exc
    if "json" in part:
        return json.dumps(part["json"], ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if "repeat" in part:
        count = part.get("count")
        if not isinstance(count, int) or count < 0:
            raise CaseError(f"{where}: repeat needs a non-negative integer count")
        unit = part["repeat"]
        unit_bytes = bytes.fromhex(unit["hex"]) if isinstance(unit, dict) else str(unit).encode("utf-8")
        return unit_bytes * count
    raise CaseError(f"{where}: a body part needs text, hex, json or repeat, got {sorted(part)}")


def decode_body(spec: Any, where: str) -> bytes:
    if spec is None:
        return b""
    if isinstance(spec, list):
        return b"".join(_decode_part(part, f"{where}[{i}]") for i, part in enumerate(spec))
    return _decode_part(spec, where)


def parse_request(raw: Any, where: str) -> RawRequest:
    if not isinstance(raw, dict):
        raise CaseError(f"{where}: request must be a mapping")
    known = "method path headers body chunked declared_length raw half_close pieces"
    _no_unknown_keys(raw, known, f"{where}: unknown request")
    if "raw" in raw:
        return _parse_raw_request(raw, where)
    if "pieces" in raw:
        raise CaseError(f"{where}: pieces goes only with raw (the request written byte for byte)")
    method = raw.get("method")
    path = raw.get("path")
    if not isinstance(method, str) or not method or not isinstance(path, str) or not path.startswith("/"):
        raise CaseError(f"{where}: request needs a method and a path starting with /")
    body = decode_body(raw.get("body"), f"{where}.body")
    headers_raw = raw.get("headers") or {}
    if not isinstance(headers_raw, dict):
        raise CaseError(f"{where}: headers must be a mapping")
    headers = list(JSON_HEADERS) if method in ("POST", "PUT") and "Content-Type" not in headers_raw else []
    # `Content-Type: null` means: send no such header
    headers += [(str(key), str(value)) for key, value in headers_raw.items() if value is not None]
    chunk = raw.get("chunked")
    declared = raw.get("declared_length")
    if chunk is not None and (not isinstance(chunk, int) or chunk < 1):
        raise CaseError(f"{where}: chunked is a chunk size in bytes")
    if declared is not None and (not isinstance(declared, int) or declared < 0):
        raise CaseError(f"{where}: declared_length is a byte count")
    return RawRequest(
        method, path, tuple(headers), body, chunk, declared, half_close=bool(raw.get("half_close", False))
    )


def _parse_raw_request(raw: dict[str, Any], where: str) -> RawRequest:
    """`raw: <body parts>`: the request's bytes exactly; method and path default to the request line's."""
    extra = set(raw) - {"raw", "method", "path", "half_close", "pieces"}
    if extra:
        raise CaseError(
            f"{where}: a raw request takes only raw, method, path, half_close and pieces, not {sorted(extra)}"
        )
    pieces = raw.get("pieces", 1)
    if not isinstance(pieces, int) or isinstance(pieces, bool) or not 1 <= pieces <= 64:
        raise CaseError(f"{where}: pieces must be a whole number from 1 to 64, not {pieces!r}")
    data = decode_body(raw["raw"], f"{where}.raw")
    if not data:
        raise CaseError(f"{where}: raw is empty")
    words = data.split(b"\r\n", 1)[0].split(b"\n", 1)[0].decode("latin-1").split(" ")
    method = str(raw.get("method") or words[0] or "RAW")
    path = str(raw.get("path") or (words[1] if len(words) > 1 else "/"))
    return RawRequest(
        method, path, (), b"", raw=data, half_close=bool(raw.get("half_close", False)), pieces=pieces
    )


def expand_generators(value: Any) -> Any:
    """`{"$repeat": "ab", "count": 3}` in an expected body becomes "ababab" (for long strings)."""
    if isinstance(value, dict):
        if "$repeat" in value:
            return str(value["$repeat"]) * int(value.get("count", 1))
        return {k: expand_generators(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expand_generators(v) for v in value]
    return value


def _parse_expect(raw: Any, where: str, expected_dir: Path) -> Expectation:
    if not isinstance(raw, dict):
        raise CaseError(f"{where}: expect must be a mapping")
    known = "status body json error no_body headers any_body connection exempt or_closed"
    _no_unknown_keys(raw, known, f"{where}: unknown expect")
    connection = raw.get("connection")
    if connection not in (None, "open", "close"):
        raise CaseError(f"{where}: expect.connection is open or close")
    exempt_raw = raw.get("exempt") or {}
    if not isinstance(exempt_raw, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in exempt_raw.items()
    ):
        raise CaseError(f"{where}: expect.exempt maps an app to the reason of its exemption")
    raw_status = raw.get("status")
    statuses = tuple(raw_status) if isinstance(raw_status, list) else (raw_status,)
    if not statuses or not all(isinstance(s, int) and 200 <= s <= 499 for s in statuses):
        raise CaseError(f"{where}: expect.status must be an HTTP status below 500 (or a list of them)")
    status = statuses[0]
    if len(statuses) > 1 and not raw.get("any_body"):
        raise CaseError(f"{where}: several statuses only go with any_body: true")
    common: dict[str, Any] = {
        "statuses": statuses,
        "connection": connection,
        "exempt": tuple((str(k), str(v)) for k, v in exempt_raw.items()),
        "or_closed": bool(raw.get("or_closed", False)),
    }
    if raw.get("any_body"):
        return Expectation(status, any_body=True, **common)
    forms = [k for k in ("body", "json", "error", "no_body") if k in raw]
    if len(forms) != 1:
        raise CaseError(f"{where}: give exactly one of body, json, error, no_body (got {forms})")
    body: Any = None
    no_body = False
    if "error" in raw:
        if status not in ERROR_CODES:
            raise CaseError(f"{where}: no error code for status {status}")
        body = error_body(status, str(raw["error"]))
    elif "json" in raw:
        try:
            body = json.loads(str(raw["json"]))
        except json.JSONDecodeError as exc:
            raise CaseError(f"{where}: expect.json is not JSON: {exc}") from exc
    elif "body" in raw:
        body = raw["body"]
        if isinstance(body, dict) and set(body) == {"$file"}:
            file = expected_dir / str(body["$file"])
            try:
                body = json.loads(file.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise CaseError(f"{where}: cannot load expected body {file.name}: {exc}") from exc
    else:
        no_body = bool(raw["no_body"])
    body = expand_generators(body)
    problems = validate_expectation(body)
    if problems:
        raise CaseError(f"{where}: " + "; ".join(problems))
    headers_raw = raw.get("headers") or {}
    headers = tuple((str(k), None if v is None else str(v)) for k, v in headers_raw.items())
    return Expectation(status, body, no_body, headers, **common)


def _parse_case(raw: Any, file: str, session: str, index: int, expected_dir: Path) -> Case:
    where = f"{file} case #{index + 1}"
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise CaseError(f"{where}: a case is a mapping with a name")
    where = f"{file} case {raw['name']!r}"
    _no_unknown_keys(raw, "name tags note request expect steps same_connection", f"{where}: unknown")
    if "steps" in raw:
        if "request" in raw or "expect" in raw:
            raise CaseError(f"{where}: use either steps or request/expect")
        steps_raw = raw["steps"]
        if not isinstance(steps_raw, list) or not steps_raw:
            raise CaseError(f"{where}: steps must be a non-empty list")
    else:
        steps_raw = [{"request": raw.get("request"), "expect": raw.get("expect")}]
    steps = []
    for i, step in enumerate(steps_raw):
        step_where = f"{where} step {i + 1}"
        if not isinstance(step, dict):
            raise CaseError(f"{step_where}: a step is a mapping with request and expect")
        request = parse_request(step.get("request"), step_where)
        steps.append(Step(request, _parse_expect(step.get("expect"), step_where, expected_dir)))
    tags = raw.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise CaseError(f"{where}: tags must be a list of strings")
    same_connection = bool(raw.get("same_connection", False))
    if not same_connection and any(step.expect.connection == "open" for step in steps):
        raise CaseError(f"{where}: expect.connection: open needs same_connection: true")
    return Case(raw["name"], file, session, tuple(steps), tuple(tags), same_connection)


def load_file(path: Path) -> tuple[str, bool, dict[str, str], list[Case]]:
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise CaseError(f"{path.name}: not valid YAML: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        raise CaseError(f"{path.name}: a case file is a mapping with a `cases` list")
    _no_unknown_keys(doc, "session readonly knobs cases description", f"{path.name}: unknown top-level")
    session = str(doc.get("session") or path.stem)
    readonly = bool(doc.get("readonly", False))
    knobs = {str(k): str(v) for k, v in (doc.get("knobs") or {}).items()}
    expected_dir = path.parent / "expected"
    cases = [_parse_case(raw, path.name, session, i, expected_dir) for i, raw in enumerate(doc["cases"])]
    return session, readonly, knobs, cases


def load_sessions(directory: Path | None = None) -> list[Session]:
    """All sessions, in the order of their first file; cases in file order."""
    directory = directory or paths.CONFORMANCE_CASES
    files = case_files(directory)
    if not files:
        raise CaseError(f"no case files (*.yaml) in {directory}")
    sessions: dict[str, Session] = {}
    names: dict[str, str] = {}
    for path in files:
        name, readonly, knobs, cases = load_file(path)
        session = sessions.get(name)
        if session is None:
            session = sessions[name] = Session(name, readonly, knobs)
        elif session.readonly != readonly or session.knobs != knobs:
            raise CaseError(f"{path.name}: session {name!r} is declared with other readonly/knobs elsewhere")
        session.files.append(path.name)
        for case in cases:
            if case.name in names:
                raise CaseError(f"{path.name}: case name {case.name!r} is also used in {names[case.name]}")
            names[case.name] = path.name
            session.cases.append(case)
    for session in sessions.values():
        problems = check_isolation(session)
        if problems:
            raise CaseError(f"session {session.name!r}: " + "; ".join(problems))
    return list(sessions.values())


def _resource_keys(step: Step) -> tuple[set[str], set[str]]:
    """(read keys, written keys) of one step: the rows it can observe or change, by path id and body."""
    req = step.request
    route, pid = route_of(req.target)
    if route is None or pid is None and route not in ("/items", "/users"):
        return set(), set()
    kind = {"/categories/{id}/items": "category", "/users/{id}": "user"}.get(route, "item")
    key = f"{kind}:{pid}"
    try:
        body = json.loads(req.body.decode("utf-8")) if req.body else None
    except (UnicodeDecodeError, json.JSONDecodeError):
        body = None
    if req.method == "GET":
        return {key}, set()
    writes: set[str] = set()
    if route == "/items" and req.method == "POST":
        if isinstance(body, dict) and "category_id" in body:
            writes.add(f"category:{body['category_id']}")
        writes.add("items:new")
    elif route == "/users" and req.method == "POST":
        writes.add("users:new")
        if isinstance(body, dict) and isinstance(body.get("nickname"), str):
            writes.add(f"nickname:{body['nickname']}")
    elif req.method in WRITE_METHODS:
        writes.add(key)
    return set(), writes


def check_isolation(session: Session) -> list[str]:
    """The rules that make each case see a fresh reset for everything it touches.

    - a readonly session may send write requests that are rejected; the runner verifies afterwards that
      the database fingerprint (table checksums and sequence positions) did not change;
    - in a writing session, a row a case writes (by path id; a new item counts as a write to its category)
      is read or written by no other case;
    - new rows get ids from sequences, which every insert attempt advances (failed ones too), so the
      expected ids of created rows are those of the fixed case order; all apps see the same order.
    """
    if session.readonly:
        return []  # nothing is written; the runner verifies the fingerprint after the session
    problems: list[str] = []
    owners: dict[str, str] = {}
    touched: dict[str, set[str]] = {}
    for case in session.cases:
        keys = [_resource_keys(step) for step in case.steps]
        case_writes: set[str] = set().union(*(writes for _, writes in keys))
        touched[case.name] = case_writes.union(*(reads for reads, _ in keys))
        for key in case_writes:
            if key in ("items:new", "users:new"):
                continue
            if key in owners and owners[key] != case.name:
                problems.append(f"{key} is written by both {owners[key]!r} and {case.name!r}")
            owners[key] = case.name
    for key, owner in owners.items():
        for name, keys in touched.items():
            if name != owner and key in keys and not key.startswith("nickname:"):
                problems.append(f"{key} is written by {owner!r} and also touched by {name!r}")
    return problems
