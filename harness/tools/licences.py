"""Every third-party dependency of every ecosystem with its licence, checked against licences.yaml.

Each licence is read from the ecosystem's own metadata, offline: the Python venv's package metadata for
the pins of requirements.lock, node-app/package-lock.json, the POMs in the local Maven repository of the
artifacts java-app's build resolved (java-app/target/dependency-list.txt, written by every build), the
licence files in the Go module cache of loadgen/go.mod's modules, and php-app/composer.lock when there is
one. Only pinned inputs decide what is listed, so THIRD_PARTY.md comes out the same on every machine.

    python -m harness.tools.licences            # check; exit 1 on a refused licence
    python -m harness.tools.licences --write    # also regenerate THIRD_PARTY.md (= ./bidbench licences --write)
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness import paths

ROOT = paths.ROOT
ALLOWLIST = ROOT / "licences.yaml"
NOTICE = ROOT / "THIRD_PARTY.md"
REQUIREMENTS = ROOT / "requirements.lock"
NPM_LOCK = ROOT / "node-app" / "package-lock.json"
MAVEN_LIST = ROOT / "java-app" / "target" / "dependency-list.txt"
GO_DIR = ROOT / "loadgen"
COMPOSER_LOCK = ROOT / "php-app" / "composer.lock"
# Each ecosystem with its THIRD_PARTY.md section title.
ECOSYSTEMS = {
    "python": "Python (harness; requirements.lock)",
    "npm": "npm (node-app/package-lock.json)",
    "maven": "Maven (java-app/pom.xml, resolved; scope test = java-app's tests only)",
    "go": "Go (loadgen/go.mod)",
    "php": "PHP (php-app/composer.lock)",
}

# Metadata spells licences freely; these spellings (lower-cased) are the SPDX identifiers they stand for.
ALIASES: dict[str, str] = {
    "mit": "MIT",
    "mit license": "MIT",
    "mit licence": "MIT",
    "the mit license": "MIT",
    "the mit license (mit)": "MIT",
    "apache": "Apache-2.0",
    "apache 2.0": "Apache-2.0",
    "apache-2.0": "Apache-2.0",
    "apache license 2.0": "Apache-2.0",
    "apache license, version 2.0": "Apache-2.0",
    "apache software license": "Apache-2.0",
    "the apache license, version 2.0": "Apache-2.0",
    "the apache software license, version 2.0": "Apache-2.0",
    "bsd license": "BSD",
    "bsd-2-clause": "BSD-2-Clause",
    "2-clause bsd": "BSD-2-Clause",
    "bsd-3-clause": "BSD-3-Clause",
    "3-clause bsd": "BSD-3-Clause",
    "isc license": "ISC",
    "isc license (iscl)": "ISC",
    "mozilla public license 2.0 (mpl 2.0)": "MPL-2.0",
    "python software foundation license": "PSF-2.0",
    "eclipse public license - v 1.0": "EPL-1.0",
    "eclipse public license v1.0": "EPL-1.0",
    "eclipse public license - version 1.0": "EPL-1.0",
    "eclipse public license v2.0": "EPL-2.0",
    "eclipse public license - v 2.0": "EPL-2.0",
    "eclipse public license - version 2.0": "EPL-2.0",
    "eclipse public license 2.0": "EPL-2.0",
    "gnu lesser general public license": "LGPL-2.1-only",
    "gnu lesser general public license, version 2.1": "LGPL-2.1-only",
    "the gnu lesser general public license, version 2.1": "LGPL-2.1-only",
    "bsd-2-clause license": "BSD-2-Clause",
    "postgresql license": "PostgreSQL",
}
# Licence file texts of the Go module cache, told apart by phrases each licence's text has and the
# others lack; checked in order, so the narrower BSD-3-Clause comes before BSD-2-Clause.
TEXT_MARKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Apache-2.0", ("apache license", "version 2.0")),
    ("MPL-2.0", ("mozilla public license", "2.0")),
    ("MIT", ("permission is hereby granted, free of charge",)),
    ("BSD-3-Clause", ("redistribution and use in source and binary forms", "neither the name")),
    ("BSD-2-Clause", ("redistribution and use in source and binary forms",)),
    ("ISC", ("permission to use, copy, modify, and/or distribute this software for any purpose",)),
)
_LICENCE_FILE = re.compile(r"^(licen[cs]e|copying)(\.(md|txt))?$", re.IGNORECASE)


@dataclass(frozen=True)
class Dependency:
    ecosystem: str
    name: str
    version: str
    licence: str | None  # an SPDX expression, None when the metadata names none
    source: str  # where the licence was read, for messages
    scope: str = "runtime"


@dataclass
class Verdict:
    dependencies: list[Dependency]
    licences: dict[Dependency, str]  # the licence as listed, after the allowlist's exceptions
    refusals: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class LicenceError(Exception):
    """An input the check needs is missing (not built, not installed)."""


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def normalise(text: str | None) -> str | None:
    """An SPDX expression for a licence name, a list of names (any of them) or an expression."""
    if text is None or not text.strip():
        return None
    text = " ".join(text.split())
    return ALIASES.get(text.lower().removeprefix("license :: osi approved :: ")) or text


def permitted(expression: str, allowed: set[str]) -> bool:
    """In SPDX expressions AND binds tighter than OR, and "WITH exception" rides on its licence."""
    tokens = re.findall(r"\(|\)|[^\s()]+", expression)

    def either(at: int) -> tuple[bool, int]:
        """An OR of ANDs of atoms from tokens[at]: its value, and the index after it."""
        any_of = False
        while True:
            all_of = True
            while True:
                if tokens[at] == "(":
                    value, at = either(at + 1)
                    at += 1  # the closing parenthesis
                else:
                    value = tokens[at].removesuffix("+") in allowed
                    at += 3 if tokens[at + 1 : at + 2] == ["WITH"] else 1
                all_of = all_of and value
                if tokens[at : at + 1] != ["AND"]:
                    break
                at += 1
            any_of = any_of or all_of
            if tokens[at : at + 1] != ["OR"]:
                return any_of, at
            at += 1

    try:
        value, end = either(0)
    except IndexError:
        return False
    return value and end == len(tokens)


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _python_licence(metadata: Any) -> str | None:
    expression = metadata.get("License-Expression")
    if expression:
        return normalise(expression)
    declared = (metadata.get("License") or "").strip()
    # Some projects paste their whole licence text into License; only a name counts here.
    if declared and "\n" not in declared and len(declared) <= 60:
        return normalise(declared)
    named = [
        normalise(c.removeprefix("License :: OSI Approved :: ").removeprefix("License :: "))
        for c in metadata.get_all("Classifier") or []
        if c.startswith("License :: ") and c not in ("License :: OSI Approved", "License :: DFSG approved")
    ]
    return " OR ".join(sorted({n for n in named if n})) or None


def python_dependencies(
    lock: Path = REQUIREMENTS, search_path: Sequence[str] | None = None
) -> list[Dependency]:
    """The pins of requirements.lock, each with the licence of the distribution installed for it."""
    found = {
        _canonical(d.metadata["Name"]): d
        for d in importlib.metadata.distributions(**({"path": list(search_path)} if search_path else {}))
    }
    out = []
    for line in lock.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, _, version = line.partition("==")
        dist = found.get(_canonical(name))
        if dist is None or dist.version != version:
            raise LicenceError(
                f"{name}=={version} of {_rel(lock)} is not installed in {sys.prefix} "
                "(run ./bidbench once to update the venv)"
            )
        where = f"{dist.metadata['Name']}-{dist.version}.dist-info/METADATA"
        out.append(Dependency("python", name, version, _python_licence(dist.metadata), where))
    return out


def npm_dependencies(lock: Path = NPM_LOCK) -> list[Dependency]:
    """Every package of the lock file (optional ones included: pg-native's chain is installed when it builds)."""
    data = json.loads(lock.read_text())
    out = []
    for key, entry in sorted(data.get("packages", {}).items()):
        if not key:
            continue  # the app itself
        name = entry.get("name") or key.rsplit("node_modules/", 1)[-1]
        licence = entry.get("license")
        if isinstance(licence, dict):  # the deprecated {"type": ...} form
            licence = licence.get("type")
        scope = "dev" if entry.get("dev") else "optional" if entry.get("optional") else "runtime"
        out.append(Dependency("npm", name, entry["version"], normalise(licence), _rel(lock), scope))
    return out


_POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}
_LISTED = re.compile(r"^\s+([\w.\-]+):([\w.\-]+):[\w.\-]+(?::[\w.\-]+)?:([\w.\-]+):(\w+)(?:\s|$)")


def _pom_path(repository: Path, group: str, artifact: str, version: str) -> Path:
    return repository.joinpath(*group.split("."), artifact, version, f"{artifact}-{version}.pom")


def _pom_licence(repository: Path, group: str, artifact: str, version: str) -> tuple[str | None, Path]:
    """The <licenses> of the artifact's POM, else of its nearest parent that has some."""
    pom = _pom_path(repository, group, artifact, version)
    for _ in range(10):
        if not pom.is_file():
            raise LicenceError(f"{_rel(pom)} is missing: build java-app first (./bidbench build java)")
        root = ET.parse(pom).getroot()
        names = [
            " ".join((lic.findtext("m:name", "", _POM_NS) or lic.findtext("m:url", "", _POM_NS)).split())
            for lic in root.findall("m:licenses/m:license", _POM_NS)
        ]
        if names:
            # Maven: when a POM lists several licences, the user may choose any of them.
            spdx = sorted({normalise(n) or n for n in names})
            return " OR ".join(f"({s})" if " " in s else s for s in spdx), pom
        parent = root.find("m:parent", _POM_NS)
        if parent is None:
            return None, pom
        coordinates = (
            parent.findtext(f"m:{tag}", "", _POM_NS) for tag in ("groupId", "artifactId", "version")
        )
        pom = _pom_path(repository, *coordinates)
    return None, pom


def maven_dependencies(listing: Path = MAVEN_LIST, repository: Path | None = None) -> list[Dependency]:
    if not listing.is_file():
        raise LicenceError(f"{_rel(listing)} is missing: build java-app first (./bidbench build java)")
    repository = repository or Path(os.environ.get("MAVEN_REPOSITORY") or Path.home() / ".m2" / "repository")
    out = []
    for line in listing.read_text().splitlines():
        match = _LISTED.match(line)
        if not match:
            continue
        group, artifact, version, scope = match.groups()
        licence, pom = _pom_licence(repository, group, artifact, version)
        where = (
            f"~/.m2/repository/{pom.relative_to(repository)}" if pom.is_relative_to(repository) else str(pom)
        )
        out.append(Dependency("maven", f"{group}:{artifact}", version, normalise(licence), where, scope))
    return sorted(out, key=lambda d: d.name)


def _go(args: list[str], cwd: Path) -> str:
    done = subprocess.run(["go", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise LicenceError(f"`go {' '.join(args)}` failed: {done.stderr.strip()}")
    return done.stdout


def classify_text(text: str) -> str | None:
    flat = " ".join(text.lower().split())
    return next((spdx for spdx, marks in TEXT_MARKS if all(mark in flat for mark in marks)), None)


def go_dependencies(module_dir: Path = GO_DIR, cache: Path | None = None) -> list[Dependency]:
    """loadgen/go.mod's modules, each with the licence file of its folder in the module cache."""
    requires = json.loads(_go(["mod", "edit", "-json"], module_dir)).get("Require") or []
    cache = cache or Path(_go(["env", "GOMODCACHE"], module_dir).strip())
    out = []
    for require in requires:
        path, version = require["Path"], require["Version"]
        escaped = re.sub(r"[A-Z]", lambda m: "!" + m.group(0).lower(), path)
        folder = cache / f"{escaped}@{version}"
        if not folder.is_dir():
            raise LicenceError(f"{folder} is missing: build the load driver first (./bidbench setup)")
        files = sorted(p for p in folder.iterdir() if _LICENCE_FILE.match(p.name))
        licence = classify_text(files[0].read_text(errors="replace")) if files else None
        where = f"$GOMODCACHE/{escaped}@{version}/{files[0].name if files else '(no licence file)'}"
        scope = "indirect" if require.get("Indirect") else "runtime"
        out.append(Dependency("go", path, version, licence, where, scope))
    return out


def php_dependencies(lock: Path = COMPOSER_LOCK) -> list[Dependency]:
    if not lock.is_file():
        return []
    data = json.loads(lock.read_text())
    out = []
    for key, scope in (("packages", "runtime"), ("packages-dev", "dev")):
        for entry in data.get(key) or []:
            names = entry.get("license") or []
            licence = " OR ".join(names) if names else None  # composer: several licences are a choice
            out.append(
                Dependency("php", entry["name"], entry["version"], normalise(licence), _rel(lock), scope)
            )
    return out


def load_allowlist() -> dict[str, Any]:
    data = yaml.safe_load(ALLOWLIST.read_text())
    return {"allowed": set(data["allowed"]), "exceptions": list(data.get("exceptions") or [])}


def check(dependencies: Iterable[Dependency], allowlist: dict[str, Any]) -> Verdict:
    deps = list(dependencies)
    verdict = Verdict(deps, {})
    exceptions = {(e["ecosystem"], e["name"]): e for e in allowlist["exceptions"]}
    used: set[tuple[str, str]] = set()
    where = _rel(ALLOWLIST)
    for dep in deps:
        label = f"{dep.ecosystem} {dep.name} {dep.version}"
        exception = exceptions.get((dep.ecosystem, dep.name))
        if exception is not None:
            used.add((dep.ecosystem, dep.name))
            if dep.licence is not None and normalise(exception["licence"]) != dep.licence:
                verdict.refusals.append(
                    f"{label}: its metadata ({dep.source}) now says {dep.licence}, but the exception in {where} "
                    f"was granted for {exception['licence']}: review it and update the exception"
                )
            else:
                verdict.licences[dep] = str(exception["licence"])
        elif dep.licence is None:
            verdict.refusals.append(
                f"{label}: its metadata ({dep.source}) names no licence; find it and add {dep.name} to the "
                f"exceptions of {where} with its licence and a reason"
            )
        elif not permitted(dep.licence, allowlist["allowed"]):
            verdict.refusals.append(
                f"{label}: licence {dep.licence} (from {dep.source}) is not allowed by {where}"
            )
        else:
            verdict.licences[dep] = dep.licence
    for key in sorted(set(exceptions) - used):
        verdict.notes.append(f"exception for {key[0]} {key[1]} in {where} matches no dependency")
    return verdict


def collect() -> list[Dependency]:
    readers = (python_dependencies, npm_dependencies, maven_dependencies, go_dependencies, php_dependencies)
    return [dep for read in readers for dep in read()]


def render(verdict: Verdict) -> str:
    """THIRD_PARTY.md: what bidbench's apps, load driver and harness use, by ecosystem."""
    lines = [
        "# Third-party software",
        "",
        "Generated by `./bidbench licences --write` from each ecosystem's own metadata (harness/tools/licences.py);",
        "do not edit by hand. bidbench itself is licensed under Apache-2.0 (LICENSE). Licences are SPDX",
        "expressions; the ones allowed, and the per-package exceptions with their reasons, are in licences.yaml.",
        "",
    ]
    for ecosystem, title in ECOSYSTEMS.items():
        deps = sorted(
            (d for d in verdict.dependencies if d.ecosystem == ecosystem), key=lambda d: d.name.lower()
        )
        lines += [f"## {title}", ""]
        if not deps:
            lines += [
                "php-app has no composer dependencies: it uses only PHP and its extensions from the Debian "
                "packages (PHP License) and nginx (BSD-2-Clause).",
                "",
            ]
            continue
        lines += ["| package | version | licence | scope |", "| --- | --- | --- | --- |"]
        for dep in deps:
            licence = verdict.licences.get(dep, dep.licence or "(none)")
            lines.append(f"| {dep.name} | {dep.version} | {licence} | {dep.scope} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    write = "--write" in (sys.argv[1:] if argv is None else argv)
    try:
        verdict = check(collect(), load_allowlist())
    except LicenceError as error:
        print(f"licence check: {error}", file=sys.stderr)
        return 2
    counts = {e: sum(1 for d in verdict.dependencies if d.ecosystem == e) for e in ECOSYSTEMS}
    print("dependencies: " + ", ".join(f"{e} {n}" for e, n in counts.items()))
    for note in verdict.notes:
        print(f"note: {note}")
    for refusal in verdict.refusals:
        print(f"REFUSED {refusal}", file=sys.stderr)
    if write:
        NOTICE.write_text(render(verdict))
        print(f"wrote {_rel(NOTICE)}")
    elif NOTICE.is_file() and NOTICE.read_text() != render(verdict):
        print(f"{_rel(NOTICE)} is stale: run ./bidbench licences --write", file=sys.stderr)
        return 1
    return 1 if verdict.refusals else 0


if __name__ == "__main__":
    raise SystemExit(main())
