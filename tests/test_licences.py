"""The licence check (harness/tools/licences.py): every dependency of every ecosystem has a licence that
licences.yaml allows, THIRD_PARTY.md is current, and the check refuses what it must refuse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.tools import licences
from harness.tools.licences import Dependency, check, load_allowlist, permitted


@pytest.fixture(scope="module")
def verdict() -> licences.Verdict:
    from harness.apps.java import JavaDriver

    # The Maven list and POMs come from java-app's build; a no-op when the jar is current.
    JavaDriver().ensure_built()
    return check(licences.collect(), load_allowlist())


def test_every_dependency_has_an_allowed_licence(verdict: licences.Verdict) -> None:
    assert verdict.refusals == []
    assert verdict.notes == []  # an exception that matches nothing is stale and should go


def test_every_ecosystem_is_listed(verdict: licences.Verdict) -> None:
    counts = {e: sum(1 for d in verdict.dependencies if d.ecosystem == e) for e in licences.ECOSYSTEMS}
    assert counts["python"] == len(licences.REQUIREMENTS.read_text().split())
    assert counts["npm"] > 0 and counts["maven"] > 0 and counts["go"] > 0
    assert {"pg", "org.eclipse.jetty:jetty-server", "github.com/tsenart/vegeta/v12", "statsmodels"} <= {
        d.name for d in verdict.dependencies
    }
    # php-app has no composer dependencies; a composer.lock would be read.
    assert counts["php"] == (0 if not licences.COMPOSER_LOCK.exists() else counts["php"])


def test_third_party_notice_is_current(verdict: licences.Verdict) -> None:
    assert licences.NOTICE.read_text() == licences.render(verdict), (
        "THIRD_PARTY.md is stale: run ./bidbench licences --write"
    )


def _fake_dist(site: Path, name: str, version: str, headers: str) -> None:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.4\nName: {name}\nVersion: {version}\n{headers}")


def test_an_agpl_python_package_is_refused(tmp_path: Path) -> None:
    _fake_dist(tmp_path, "copyleftdb", "1.0", "License-Expression: AGPL-3.0-only\n")
    _fake_dist(tmp_path, "fine", "2.0", "Classifier: License :: OSI Approved :: MIT License\n")
    lock = tmp_path / "requirements.lock"
    lock.write_text("copyleftdb==1.0\nfine==2.0\n")
    deps = licences.python_dependencies(lock, [str(tmp_path)])
    result = check(deps, load_allowlist())
    assert len(result.refusals) == 1
    assert "copyleftdb 1.0" in result.refusals[0] and "AGPL-3.0-only" in result.refusals[0]


def test_an_agpl_npm_package_is_refused(tmp_path: Path) -> None:
    lock = tmp_path / "package-lock.json"
    packages = {
        "": {"name": "app", "version": "1.0.0"},
        "node_modules/fine": {"version": "1.0.0", "license": "MIT"},
        "node_modules/sspl-db": {"version": "3.1.0", "license": "SSPL-1.0 OR AGPL-3.0-or-later"},
    }
    lock.write_text(json.dumps({"lockfileVersion": 3, "packages": packages}))
    result = check(licences.npm_dependencies(lock), load_allowlist())
    assert [r.split(":")[0] for r in result.refusals] == ["npm sspl-db 3.1.0"]


def test_a_package_without_a_licence_is_refused_and_told_where_to_add_it(tmp_path: Path) -> None:
    _fake_dist(tmp_path, "mystery", "0.1", "Summary: says nothing of its terms\n")
    lock = tmp_path / "requirements.lock"
    lock.write_text("mystery==0.1\n")
    result = check(licences.python_dependencies(lock, [str(tmp_path)]), load_allowlist())
    (refusal,) = result.refusals
    assert refusal.startswith("python mystery 0.1:") and "names no licence" in refusal
    assert "add mystery to the exceptions of licences.yaml" in refusal


def test_an_exception_no_longer_matching_its_licence_is_refused() -> None:
    dep = Dependency("python", "psycopg", "9.9", "AGPL-3.0-only", "psycopg-9.9.dist-info/METADATA")
    (refusal,) = check([dep], load_allowlist()).refusals
    assert "now says AGPL-3.0-only" in refusal and "LGPL-3.0-only" in refusal


def test_a_go_licence_file_is_recognised(tmp_path: Path) -> None:
    assert licences.classify_text("Permission is hereby granted, free of charge, to any person") == "MIT"
    assert licences.classify_text("GNU AFFERO GENERAL PUBLIC LICENSE Version 3") is None


@pytest.mark.parametrize(
    ("expression", "allowed"),
    [
        ("MIT", True),
        ("Apache-2.0 OR GPL-3.0-only", True),
        ("MIT AND GPL-3.0-only", False),
        ("(MIT OR GPL-2.0-only) AND BSD-3-Clause", True),
        ("AGPL-3.0-only", False),
        ("Apache-2.0 WITH LLVM-exception", True),
        ("MIT AND (", False),
    ],
)
def test_spdx_expressions(expression: str, allowed: bool) -> None:
    assert permitted(expression, load_allowlist()["allowed"]) is allowed
