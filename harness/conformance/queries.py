"""The statements of contract/queries.sql, by name, and the normal form used to compare statement texts.

pg_stat_statements stores each statement with its constants replaced by `$n` and keeps the text the app
sent (whitespace, case, trailing semicolon). `normalize` maps both the contract's text and the stored text
to one form: parameters and literal constants become `?`, whitespace collapses, case folds, the trailing
semicolon goes. Two statements with the same normal form do the same work; a dropped ORDER BY, a missing
LIMIT or another column list gives another normal form.
"""

from __future__ import annotations

import re
from functools import lru_cache

from harness import paths

_NAME_RE = re.compile(r"^-- name: (\w+)")
TRANSACTION_CONTROL = {"begin": "BEGIN", "commit": "COMMIT", "rollback": "ROLLBACK"}


@lru_cache(maxsize=1)
def contract_statements() -> dict[str, str]:
    """name -> SQL text, from contract/queries.sql (comment lines dropped)."""
    bodies: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in (paths.CONTRACT / "queries.sql").read_text(encoding="utf-8").splitlines():
        m = _NAME_RE.match(line)
        if m:
            current = bodies[m.group(1)] = []
        elif line.startswith("--"):
            if current:  # a comment block after a statement ends it
                current = None
        elif current is not None and (code := line.split("--", 1)[0].rstrip()):
            current.append(code)
    return {name: "\n".join(lines).strip() for name, lines in bodies.items()}


_STRING_RE = re.compile(r"'(?:[^']|'')*'")
_PARAM_RE = re.compile(r"\$\d+")
_NUMBER_RE = re.compile(r"(?<![\w$.])\d+(?:\.\d+)?(?![\w.])")


def normalize(text: str) -> str:
    out = _STRING_RE.sub("?", text)
    out = _PARAM_RE.sub("?", out)
    out = _NUMBER_RE.sub("?", out)
    out = re.sub(r"\s+", " ", out).strip().rstrip(";").strip().lower()
    out = re.sub(r"\s*([(),=<>*+-])\s*", r"\1", out)
    # `interval '1 second'` is stored by pg_stat_statements as `interval $7`; both are `interval ?` now.
    if out in ("begin", "start transaction") or out.startswith(("begin ", "start transaction ")):
        return "begin"
    if out in ("commit", "end", "commit work"):
        return "commit"
    if out in ("rollback", "abort", "rollback work"):
        return "rollback"
    return out


@lru_cache(maxsize=1)
def normalized_names() -> dict[str, str]:
    """normal form -> contract statement name (transaction control included)."""
    return {normalize(text): name for name, text in {**contract_statements(), **TRANSACTION_CONTROL}.items()}


def name_of(text: str) -> str | None:
    """The contract name of a statement text as stored by pg_stat_statements, or None if it is not one."""
    return normalized_names().get(normalize(text))
