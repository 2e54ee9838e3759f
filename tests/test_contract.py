"""The contract itself is well-formed: valid OpenAPI, the README's routes match it, every query is named."""

from __future__ import annotations

import re

import yaml
from openapi_spec_validator import validate

from harness import paths


def test_openapi_is_valid_and_states_the_body_limit() -> None:
    spec = yaml.safe_load(paths.OPENAPI.read_text())
    validate(spec)
    assert spec["info"]["x-body-limit-bytes"] == 65536


def test_readme_route_table_matches_openapi() -> None:
    spec = yaml.safe_load(paths.OPENAPI.read_text())
    readme = (paths.CONTRACT / "README.md").read_text()
    table = dict(re.findall(r"^\| `(/[^`]*)` \| ([A-Z, ]+) \|$", readme, flags=re.M))
    assert set(table) == set(spec["paths"])
    for route, methods in table.items():
        assert [m.strip().lower() for m in methods.split(",")] == list(spec["paths"][route])


def test_every_statement_in_queries_sql_is_named_and_cast() -> None:
    text = (paths.CONTRACT / "queries.sql").read_text()
    sql = "\n".join(line.split("--", 1)[0] for line in text.splitlines())
    names = re.findall(r"^-- name: (\w+)", text, flags=re.M)
    assert len(names) == len(set(names)) >= 17
    for placeholder in re.findall(r"\$\d+(?:::\w+)?", sql):
        assert "::" in placeholder, f"parameter {placeholder} has no explicit cast"
