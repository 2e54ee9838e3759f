"""The result records every part produces; the report renders them and writes them as JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class CheckResult:
    part: str
    """golden, differential, dbwork, concurrency, schemathesis"""
    target: str
    check: str
    """A case name, a request type, or the name of a whole-run check."""
    ok: bool
    problems: list[str] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    skipped: bool = False


def checked(part: str, target: str, check: str, problems: list[str], **more: Any) -> CheckResult:
    """A check that passes when it found no problems; `more` are detail and seconds."""
    return CheckResult(part, target, check, not problems, problems, **more)


def failed(results: list[CheckResult]) -> list[CheckResult]:
    return [r for r in results if not r.ok and not r.skipped]


def number(value: float) -> str:
    """A per-request figure: `2`, `0.5`, `1.33`."""
    return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))
