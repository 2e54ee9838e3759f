"""The harness's layers (issue #30), read from the source with `ast`, so nothing is imported or run.

The command line (harness/cli) sits on top: it alone knows typer, and only `python -m harness` imports
it. Below it the regimes drive the engine, the engine runs one measurement and writes records, and the
database, the apps' adapters and the record formats know nothing above them. FLOORS (issue #44) orders
every package: the model at the bottom, the reports and the command line on top, and no circle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[1] / "harness"


@dataclass(frozen=True)
class Import:
    """One import statement: `from harness import cli` names both harness and harness.cli as targets."""

    module: str  # the importing module, e.g. harness.engine.session
    targets: tuple[str, ...]  # what it may import, e.g. ("harness.db.ready", "harness.db.ready.server")
    line: int
    text: str  # the statement as written

    def reaches(self, package: str) -> bool:
        return any(_within(target, package) for target in self.targets)

    def __str__(self) -> str:
        return f"{self.module}, line {self.line}: {self.text}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(HARNESS.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _imports() -> Iterator[Import]:
    """Every import statement of every harness module, wherever it stands (inside functions and
    TYPE_CHECKING blocks too: a lazy import is still a dependency)."""
    for path in sorted(HARNESS.rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = tuple(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(module, path.name == "__init__.py", node)
                targets = (base, *(f"{base}.{alias.name}" for alias in node.names))
            else:
                continue
            yield Import(module, targets, node.lineno, ast.unparse(node))


IMPORTS = list(_imports())


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _offenders(importer: str, forbidden: tuple[str, ...]) -> list[str]:
    return sorted(
        {str(i) for i in IMPORTS if _within(i.module, importer) and any(i.reaches(f) for f in forbidden)}
    )


def test_the_imports_were_read() -> None:
    assert any(i.module == "harness.engine.session" for i in IMPORTS)
    assert any(i.module == "harness.cli.main" and i.reaches("typer") for i in IMPORTS)


def test_only_the_cli_knows_typer() -> None:
    offenders = sorted(str(i) for i in IMPORTS if i.reaches("typer") and not _within(i.module, "harness.cli"))
    assert not offenders, (
        "typer belongs to harness/cli; raise harness.console.UserError (or return an exit status) "
        "below it:\n" + "\n".join(offenders)
    )


def test_nothing_imports_the_cli_but_the_entry_point() -> None:
    offenders = sorted(
        str(i)
        for i in IMPORTS
        if i.reaches("harness.cli")
        and not _within(i.module, "harness.cli")
        and i.module != "harness.__main__"
    )
    assert not offenders, (
        "only harness/__main__.py imports harness.cli; move what is shared into a library module "
        "(e.g. harness/db/ready.py, harness/analysis/ladder_tables.py):\n" + "\n".join(offenders)
    )


# Everything that measures, plans or presents a measurement: the layers db, record and apps sit below.
MEASURING = (
    "harness.cli",
    "harness.regimes",
    "harness.engine",
    "harness.analysis",
    "harness.claims",
    "harness.faults",
    "harness.conformance",
)

LOWER_LAYERS = (
    # (package, what it must not import, why)
    (
        "harness.engine",
        ("harness.cli", "harness.regimes", "harness.claims", "harness.faults", "harness.conformance"),
        "the engine runs one measurement; regimes, fault scenarios, claims and the conformance suite use it",
    ),
    (
        "harness.analysis",
        ("harness.cli", "harness.regimes", "harness.engine.session"),
        "analysis reads result folders; it neither runs nor plans measurements",
    ),
    (
        "harness.db",
        (*MEASURING, "harness.record", "harness.apps"),
        "the database layer is below everything that measures",
    ),
    (
        "harness.record",
        (*MEASURING, "harness.db", "harness.apps"),
        "the record formats are read by everyone and depend on nobody",
    ),
    (
        "harness.apps",
        (*MEASURING, "harness.record"),
        "the apps' adapters describe how to build and start an app, not how it is measured",
    ),
)


@pytest.mark.parametrize(
    ("package", "forbidden", "why"), LOWER_LAYERS, ids=[package for package, _, _ in LOWER_LAYERS]
)
def test_a_lower_layer_does_not_import_a_higher_one(
    package: str, forbidden: tuple[str, ...], why: str
) -> None:
    offenders = _offenders(package, forbidden)
    assert not offenders, f"{package} must not import {', '.join(forbidden)} ({why}):\n" + "\n".join(
        offenders
    )


def test_the_ground_floor_imports_nothing_of_bidbench() -> None:
    """harness/model names the domain and holds the pure math: every floor may import it, it imports none."""
    offenders = sorted(
        str(i)
        for i in IMPORTS
        if _within(i.module, "harness.model")
        and any(_within(t, "harness") and not _within(t, "harness.model") for t in i.targets)
    )
    assert not offenders, "harness/model must import nothing of bidbench's:\n" + "\n".join(offenders)


# The floors of issue #44, bottom to top: a package imports only its own floor and the floors below it, and
# the packages import one another without a circle (counting the imports inside functions too). The root
# modules (harness/__init__.py, console.py, paths.py) sit on the ground floor with the model.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("harness", "harness.console", "harness.paths", "harness.model"),  # the domain's names and pure math
    ("harness.record",),  # the stored records
    ("harness.tools",),  # the toolchain: what the infrastructure installs and finds
    ("harness.apps", "harness.db"),  # the apps' adapters and the database
    ("harness.engine",),  # one measurement
    ("harness.regimes", "harness.claims", "harness.faults", "harness.conformance"),  # what runs the engine
    ("harness.analysis",),  # reports: tables, plots, HTML, Markdown, JSON
    ("harness.cli",),  # the command line
    ("harness.__main__",),  # the entry point
)


def _unit(name: str) -> str | None:
    """The floor's unit a module or import target belongs to: its package under harness (or the root module)."""
    if not _within(name, "harness"):
        return None
    units = [unit for floor in FLOORS for unit in floor if _within(name, unit)]
    return max(units, key=len)


def _floor(unit: str) -> int:
    return next(i for i, floor in enumerate(FLOORS) if unit in floor)


def _package_edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for i in IMPORTS:
        source = _unit(i.module)
        # `from harness import paths` names harness and harness.paths: the most precise target counts.
        found = [t for t in i.targets if _unit(t)]
        precise = [t for t in found if _unit(t) != "harness"] or found
        for target in precise:
            unit = _unit(target)
            if source and unit and unit != source:
                edges.setdefault(source, set()).add(unit)
    return edges


def test_every_package_has_a_floor() -> None:
    units = {_unit(i.module) for i in IMPORTS}
    packages = {p.parent.name for p in HARNESS.glob("*/__init__.py")}
    assert {f"harness.{p}" for p in packages} <= {u for floor in FLOORS for u in floor}, (
        "every package under harness/ needs its floor in FLOORS"
    )
    assert None not in units


def test_no_floor_imports_a_higher_one() -> None:
    offenders = sorted(
        {
            str(i)
            for i in IMPORTS
            for target in i.targets
            if (source := _unit(i.module))
            and (unit := _unit(target))
            and unit != "harness"
            and _floor(unit) > _floor(source)
        }
    )
    floors = "\n".join(f"  {n}. {', '.join(floor)}" for n, floor in enumerate(FLOORS))
    assert not offenders, (
        f"a package imports only its own floor and those below it; the floors, bottom up:\n{floors}\n"
        "move what both need down, or pass it in:\n" + "\n".join(offenders)
    )


def test_the_packages_import_one_another_without_a_circle() -> None:
    edges = _package_edges()
    circles = []
    for start in sorted(edges):
        # every package reachable from start that reaches start again
        seen, todo = set(), [start]
        while todo:
            for nxt in edges.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        if start in seen:
            circles.append(start)
    detail = "\n".join(f"  {s} -> {', '.join(sorted(edges[s]))}" for s in circles)
    assert not circles, f"these packages sit in an import circle (imports inside functions count):\n{detail}"


FUNCTION_LOCAL_IMPORTS_OUTSIDE_CLI = 10
"""Issue #44's bound: an import inside a function hides a dependency from the reader and from this file."""


def _function_local_imports() -> Iterator[tuple[str, int, str]]:
    for path in sorted(HARNESS.rglob("*.py")):
        if path.relative_to(HARNESS).parts[0] == "cli":
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        tree = ast.parse("\n".join(lines))
        seen: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    if isinstance(inner, (ast.Import, ast.ImportFrom)) and inner.lineno not in seen:
                        seen.add(inner.lineno)
                        yield str(path.relative_to(HARNESS.parent)), inner.lineno, lines[inner.lineno - 1]


def test_few_imports_hide_inside_functions_and_each_says_why() -> None:
    found = list(_function_local_imports())
    listing = "\n".join(f"  {path}:{line}: {text.strip()}" for path, line, text in found)
    assert len(found) <= FUNCTION_LOCAL_IMPORTS_OUTSIDE_CLI, (
        f"{len(found)} imports inside functions:\n{listing}"
    )
    unexplained = [f"{path}:{line}" for path, line, text in found if "#" not in text]
    assert not unexplained, f"an import inside a function says why on its line: {unexplained}"
