"""The golden runner: every case of contract/conformance against one target, on a fresh database.

Per session (a group of case files): reset the private database, start the target, run the cases in
order, stop the target. A readonly session must leave the database fingerprint untouched; a writing
session must leave the bid invariants intact. Both are checked after the target stopped, and reported as
checks of their own.
"""

from __future__ import annotations

import contextlib
import time
from datetime import datetime, timezone

from harness.conformance.canon import InvalidJson, MatchContext, match, parse, wire_problems
from harness.conformance.cases import Case, Session, Step
from harness.conformance.client import ClosedWithoutAnswer, Connection, RawResponse, TransportError, send
from harness.conformance.dbstate import ConformanceDb
from harness.conformance.results import CheckResult, checked
from harness.conformance.targets import Target

PART = "golden"


def run_case(base_url: str, case: Case, server_timing: bool, impl: str | None = None) -> list[str]:
    """The problems of one case (empty when it passes). Steps share one capture context.

    `impl` names the app, for the exemptions a step documents (`expect.exempt`)."""
    ctx = MatchContext()
    problems: list[str] = []
    # A keep-alive case never reconnects silently: a closed connection must show as a failure.
    with Connection(base_url, retry=False) if case.same_connection else contextlib.nullcontext() as shared:
        for number, step in enumerate(case.steps, start=1):
            req = step.request
            prefix = f"step {number} ({req.method} {req.target}): " if len(case.steps) > 1 else ""
            exempt = dict(step.expect.exempt).get(impl or "")
            ctx.sent_at = datetime.now(timezone.utc)
            try:
                response = shared.request(req) if shared is not None else send(base_url, req)
            except (TransportError, OSError) as exc:
                # The contract allows closing without an answer here (or_closed); for an exempt app no
                # parseable answer is allowed either, and its later steps show it still serves.
                if exempt is not None or (step.expect.or_closed and isinstance(exc, ClosedWithoutAnswer)):
                    if shared is not None:
                        shared.close()
                    continue
                problems.append(f"{prefix}no response: {exc.__class__.__name__}: {exc}")
                break
            if exempt is not None:
                if response.status >= 500:
                    problems.append(
                        f"{prefix}status {response.status} (exempt from the body rules, not from 5xx)"
                    )
                if shared is not None:
                    shared.close()  # whatever the exempt answer left on the connection is not checked
                continue
            problems.extend(prefix + p for p in _check_step(step, response, server_timing, ctx))
            if not step.expect.accepts(response.status) and number < len(case.steps):
                problems.append(f"later steps skipped after step {number} failed")
                break
    return problems


def _check_step(step: Step, response: RawResponse, server_timing: bool, ctx: MatchContext) -> list[str]:
    """The problems of one answered step: status, connection, wire rules, headers, body."""
    exp = step.expect
    step_problems: list[str] = []
    if not exp.accepts(response.status):
        wanted = " or ".join(str(s) for s in exp.statuses or (exp.status,))
        # The answer's own words name the refusal (which check, which parser limit): keep them.
        said = (response.body or b"")[:200]
        step_problems.append(
            f"status {response.status}, expected {wanted}" + (f" ({said!r})" if said else "")
        )
    if exp.connection == "open" and response.closed:
        step_problems.append(
            "the server closed the connection (or said Connection: close); it must stay open"
        )
    elif exp.connection == "close" and not response.closed:
        step_problems.append("the server kept the connection open; it must close it")
    if exp.any_body:
        return step_problems
    step_problems.extend(wire_problems(response, server_timing, head_request=step.request.method == "HEAD"))
    for name, value in exp.headers:
        actual = response.header_all(name)
        if value is None and actual:
            step_problems.append(f"header {name} must be absent, got {actual}")
        elif value is not None and actual != [value]:
            step_problems.append(f"header {name}: expected {value!r}, got {actual}")
    if exp.no_body:
        if response.body:
            step_problems.append(f"expected no body, got {len(response.body)} bytes")
    elif response.body is not None:
        try:
            actual_body = parse(response.body)
        except InvalidJson as exc:
            step_problems.append(f"body: {exc}: {response.body[:200]!r}")
        else:
            step_problems.extend(match(exp.body, actual_body, "body", ctx))
    return step_problems


def run_session(
    target: Target, db: ConformanceDb, session: Session, fresh: dict[str, str]
) -> list[CheckResult]:
    results: list[CheckResult] = []
    server_timing = session.knobs.get("SERVER_TIMING", "1") != "0"
    db.reset()
    with target.running(db, session.knobs) as base_url:
        for case in session.cases:
            started = time.monotonic()
            problems = run_case(base_url, case, server_timing, getattr(target, "impl", target.name))
            detail = {"file": case.file, "session": session.name, "tags": list(case.tags)}
            seconds = time.monotonic() - started
            results.append(checked(PART, target.name, case.name, problems, detail=detail, seconds=seconds))
    if session.readonly:
        after = db.fingerprint()
        changed = sorted(k for k in fresh if fresh[k] != after.get(k))
        check = f"session {session.name}: database unchanged"
        problems = (
            [f"the readonly session changed {', '.join(changed)}: one of its requests wrote to the database"]
            if changed
            else []
        )
    else:
        check, problems = f"session {session.name}: bid invariants", db.invariant_violations()
    results.append(checked(PART, target.name, check, problems, detail={"session": session.name}))
    return results


def golden_checks(sessions: list[Session]) -> tuple[int, int]:
    """(checks, cases) the golden part reports per target: one check per case, plus one per session for the
    database after it (unchanged, or its bid invariants intact). Every line the report prints counts these."""
    cases = sum(len(s.cases) for s in sessions)
    return cases + len(sessions), cases


def run_golden(
    target: Target, db: ConformanceDb, sessions: list[Session], fresh: dict[str, str]
) -> list[CheckResult]:
    return [result for session in sessions for result in run_session(target, db, session, fresh)]
