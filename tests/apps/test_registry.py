"""The registry of app adapters (harness/apps): its order, its errors, that a registered adapter is picked
up wherever implementations are listed, and that nothing outside harness/apps decides by comparing names."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path

import pytest

from harness import apps, paths
from harness.apps import knobs
from harness.apps.base import AppAdapter, AppDriver, InstanceSpec, ProcessLaunch
from harness.apps.base import TestSuite as AppTestSuite
from harness.cli import test_suites
from harness.console import UserError
from harness.engine.session import RunPlan, _instance_knobs
from harness.tools import toolchain

BUILT_IN = ("java", "node", "php")


def test_the_registry_lists_java_node_php_in_that_order() -> None:
    assert apps.IMPLS == BUILT_IN
    assert tuple(app.name for app in apps.adapters()) == BUILT_IN
    for name in BUILT_IN:
        app = apps.adapter(name)
        assert app.folder == paths.ROOT / f"{name}-app" and (app.folder / "README.md").is_file()
        assert apps.driver(name).impl == name
        assert set(app.tools) <= set(toolchain.TOOLS)
        # Its name is its toolchain group and its suite: it must hide no other group, suite or tool.
        assert name not in toolchain.SHARED_NEEDS and name not in ("loadgen", "python", "conformance")
        assert name not in toolchain.TOOLS or name in app.tools


def test_the_guide_names_every_adapter_field() -> None:
    guide = (paths.ROOT / "docs" / "adding-an-implementation.md").read_text()
    unexplained = [
        f.name for f in fields(AppAdapter) if f"`{f.name}`" not in guide and f"{f.name}=" not in guide
    ]
    assert unexplained == []
    assert "adding-an-implementation.md" in (paths.ROOT / "docs" / "design.md").read_text()


@pytest.mark.parametrize("lookup", [apps.adapter, apps.driver])
def test_an_unknown_name_says_which_names_there_are(lookup: object) -> None:
    with pytest.raises(ValueError, match=r"^unknown implementation 'cobol'; choose from java, node, php$"):
        lookup("cobol")  # type: ignore[operator]


def test_a_name_registers_once() -> None:
    with pytest.raises(ValueError, match="registered already"):
        apps.register(apps.adapter("java"))


def test_the_views_built_from_the_registry_keep_their_values() -> None:
    """The knob and tool tables the adapters now declare, as harness/apps/knobs.py and toolchain.py had them."""
    assert {app.name: dict(app.knobs) for app in apps.adapters()} == {
        "java": {"JAVA_THREADS": "32", "JAVA_POOL": "hikari"},
        "node": {"NODE_WORKERS": "0", "PG_NATIVE": "0"},
        "php": {"PHP_FPM_CHILDREN": "10", "PHP_JIT": "0"},
    }
    assert toolchain.needs_by_group() == {
        "db": ("postgres",),
        "java": ("java", "maven"),
        "node": ("node", "npm", "build-tools", "libpq-dev"),
        "php": ("php", "php-fpm", "phpunit", "nginx"),
        "load": ("go", "driver"),
        "faults": ("go", "toxiproxy"),
        "report": ("chromium",),
    }
    assert test_suites.suite_names() == ("loadgen", "python", "java", "node", "php", "conformance")


def test_a_pool_size_sets_the_php_children_unless_they_are_given() -> None:
    assert _instance_knobs(RunPlan("php", knobs={"DB_POOL_SIZE": "4"}))["PHP_FPM_CHILDREN"] == "4"
    given = _instance_knobs(RunPlan("php", knobs={"DB_POOL_SIZE": "4", "PHP_FPM_CHILDREN": "6"}))
    assert given["PHP_FPM_CHILDREN"] == "6"
    assert _instance_knobs(RunPlan("php"))["PHP_FPM_CHILDREN"] == "10"
    assert "PHP_FPM_CHILDREN" not in _instance_knobs(RunPlan("java", knobs={"DB_POOL_SIZE": "4"}))


def test_only_the_jvm_and_its_slow_first_build_are_javas() -> None:
    assert [app.name for app in apps.adapters() if app.runs_on_jvm] == ["java"]
    assert [app.name for app in apps.adapters() if app.first_build_note] == ["java"]


class _CobolDriver(AppDriver):
    impl = "cobol"

    def ensure_built(self) -> None:
        pass

    def launches(self, spec: InstanceSpec) -> list[ProcessLaunch]:
        return []

    def effective_knobs(self, spec: InstanceSpec) -> dict[str, str]:
        return {**knobs.default_knobs(self.impl), **spec.knobs}

    def test_suites(self) -> list[AppTestSuite]:
        return []


@pytest.fixture
def cobol(tmp_path: Path) -> Iterator[AppAdapter]:
    app = AppAdapter(
        name="cobol",
        folder=tmp_path / "cobol-app",
        driver_class=_CobolDriver,
        knobs={"COBOL_TASKS": "4"},
        tools=("go",),
        pytest_files_in_own_suite=("tests/apps/test_cobol_instance.py",),
    )
    apps.register(app)
    try:
        yield app
    finally:
        apps.unregister(app.name)
    assert apps.IMPLS == BUILT_IN


def test_a_registered_adapter_is_picked_up_where_implementations_are_listed(cobol: AppAdapter) -> None:
    from harness.cli.options import parse_impls
    from harness.conformance.runner import run_conformance

    assert apps.IMPLS == (*BUILT_IN, "cobol")
    assert isinstance(apps.driver("cobol"), _CobolDriver)
    assert parse_impls("node,cobol") == ["node", "cobol"]
    with pytest.raises(UserError, match="java, node, php, cobol"):
        parse_impls("fortran")
    with pytest.raises(UserError, match="choose from java, node, php, cobol"):
        run_conformance(["fortran"], parts=None, json_path=None)
    assert test_suites.suite_names() == ("loadgen", "python", *BUILT_IN, "cobol", "conformance")
    assert toolchain.needs_by_group()["cobol"] == ("go",)
    assert apps.adapter("cobol").knobs == {"COBOL_TASKS": "4"}
    assert knobs.default_knobs("cobol") == {**knobs.APP_KNOBS, "COBOL_TASKS": "4"}
    assert _instance_knobs(RunPlan("cobol", knobs={"DB_POOL_SIZE": "3"}))["DB_POOL_SIZE"] == "3"


# Implementation names are compared nowhere outside harness/apps: each such decision is an adapter attribute.
# No exception is needed today; a language name that is data (a tool or binary called "java") would be one.
LANGUAGE_NAMES = frozenset(BUILT_IN)


def _names_compared(node: ast.Compare) -> list[str]:
    operands: list[ast.expr] = [node.left, *node.comparators]
    for operand in list(operands):
        if isinstance(operand, (ast.Tuple, ast.List, ast.Set)):
            operands.extend(operand.elts)
    return [o.value for o in operands if isinstance(o, ast.Constant) and o.value in LANGUAGE_NAMES]


def test_no_module_outside_harness_apps_compares_an_implementation_name() -> None:
    harness_dir = paths.ROOT / "harness"
    found: list[str] = []
    for path in sorted(harness_dir.rglob("*.py")):
        if path.is_relative_to(harness_dir / "apps"):
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Compare) and _names_compared(node):
                found.append(f"{path.relative_to(paths.ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "decide through an AppAdapter attribute (harness/apps/base.py):\n" + "\n".join(found)


def test_the_scan_sees_a_comparison() -> None:
    tree = ast.parse('if plan.impl == "php" or impl in ("java", "go"): pass')
    assert [
        name for node in ast.walk(tree) if isinstance(node, ast.Compare) for name in _names_compared(node)
    ] == [
        "php",
        "java",
    ]
