"""The Java driver: build stamp, launch command, knobs, JDK versions, and one real JVM instance through
harness.engine.instances on the database of `./bidbench test` (DATABASE_URL; that test fails without it)."""

from __future__ import annotations

import json
import shutil
import urllib.request
from pathlib import Path

import pytest
from app_helpers import instance_spec

from harness.apps import java as java_driver
from harness.apps.java import DEFAULT_JVM_FLAGS, JAR, JavaDriver, parse_java_properties, source_digest
from harness.db.cluster import free_port

TEMURIN_25 = Path("/usr/lib/jvm/temurin-25-jdk-amd64")


def test_digest_follows_main_sources_and_pom_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = tmp_path / "java-app"
    (app / "src" / "main" / "java").mkdir(parents=True)
    (app / "src" / "test" / "java").mkdir(parents=True)
    (app / "pom.xml").write_text("<project/>")
    source = app / "src" / "main" / "java" / "Main.java"
    source.write_text("class Main {}")
    monkeypatch.setattr(java_driver, "APP_DIR", app)

    first = source_digest()
    (app / "src" / "test" / "java" / "MainTest.java").write_text("class MainTest {}")
    assert source_digest() == first, "tests are not in the jar"
    source.write_text("class Main { }")
    assert source_digest() != first
    second = source_digest()
    (app / "pom.xml").write_text("<project><!-- pin --></project>")
    assert source_digest() != second


def test_launch_uses_the_default_jvm_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(java_driver, "JAR", tmp_path / "app.jar")
    (tmp_path / "app.jar").write_bytes(b"")
    spec = instance_spec("java", tmp_path, LOG_LEVEL="debug")
    (launch,) = JavaDriver().launches(spec)
    assert launch.argv[-2:] == ["-jar", str(tmp_path / "app.jar")]
    assert launch.argv[1:-2] == DEFAULT_JVM_FLAGS.split()
    assert Path(launch.argv[0]).name == "java"
    assert launch.env["PORT"] == str(spec.port) and launch.env["LOG_LEVEL"] == "debug"
    assert launch.env["DATABASE_URL"] == spec.database_url
    assert launch.log_path == spec.run_dir / "app.log"


@pytest.mark.skipif(not TEMURIN_25.is_dir(), reason="Temurin 25 is not installed on this machine")
def test_launch_honours_java_home_and_jvm_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(java_driver, "JAR", tmp_path / "app.jar")
    (tmp_path / "app.jar").write_bytes(b"")
    driver = JavaDriver()
    spec = instance_spec(
        "java", tmp_path, JAVA_HOME=str(TEMURIN_25), JVM_FLAGS="-Xmx64m -XX:+UseSerialGC '-Dx=a b'"
    )
    (launch,) = driver.launches(spec)
    assert launch.argv[:4] == [str(TEMURIN_25 / "bin" / "java"), "-Xmx64m", "-XX:+UseSerialGC", "-Dx=a b"]
    knobs = driver.effective_knobs(spec)
    assert knobs["JAVA_HOME"] == str(TEMURIN_25)
    assert knobs["JVM_FLAGS"] == "-Xmx64m -XX:+UseSerialGC '-Dx=a b'"
    versions = driver.runtime_versions()
    assert versions["java"].startswith("25") and versions["java_home"] == str(TEMURIN_25)


def test_effective_knobs_fill_in_every_default(tmp_path: Path) -> None:
    knobs = JavaDriver().effective_knobs(instance_spec("java", tmp_path, DB_POOL_SIZE="60"))
    assert knobs["DB_POOL_SIZE"] == "60"
    assert knobs["JAVA_THREADS"] == "32"
    assert knobs["LOG_LEVEL"] == "info"
    assert knobs["SERVER_TIMING"] == "1"
    assert knobs["JVM_FLAGS"] == DEFAULT_JVM_FLAGS
    assert knobs["BIDBENCH_UNFAIR_UNSORTED"] == "0"
    assert knobs["BIDBENCH_UNFAIR_PER_FIELD"] == "0"
    assert Path(knobs["JAVA_HOME"], "bin", "java").is_file()


def test_java_properties_parsing() -> None:
    text = (
        "Property settings:\n    java.home = /usr/lib/jvm/x\n    java.runtime.version = 17.0.15+6\n"
        "    java.vendor = Debian\n    line.separator = \\n \n"
    )
    properties = parse_java_properties(text)
    assert properties["java.home"] == "/usr/lib/jvm/x"
    assert properties["java.runtime.version"] == "17.0.15+6"
    assert properties["java.vendor"] == "Debian"


def test_default_runtime_versions() -> None:
    versions = JavaDriver().runtime_versions()
    assert versions["java"][:2].isdigit() and int(versions["java"].split(".")[0].split("+")[0]) >= 17
    assert versions["java_vendor"] not in ("", "?")


def test_test_suite_shows_the_surefire_summary() -> None:
    (suite,) = JavaDriver().test_suites()
    assert "-q" not in suite.argv and suite.argv[-1] == "test"
    assert suite.cwd == java_driver.APP_DIR


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("mvn") is None, reason="needs Maven")
def test_real_instance_through_the_harness(tmp_path: Path, database_url: str) -> None:
    from harness.engine.instances import running_instance

    driver = JavaDriver()
    driver.ensure_built()
    assert JAR.is_file()
    port = free_port()
    spec = instance_spec(
        "java", tmp_path, port=port, database_url=database_url, DB_POOL_SIZE="2", JAVA_THREADS="16"
    )
    with running_instance(driver, spec) as instance:
        line = instance.startup_line()
        assert line is not None
        start = json.loads(line.removeprefix("bidbench-start "))
        assert start["impl"] == "java" and start["port"] == port and start["db_pool_size"] == 2
        assert start["java_threads"] == 16 and start["max_heap_bytes"] == 256 * 1024 * 1024
        assert start["jvm_args"] == DEFAULT_JVM_FLAGS.split()
        assert ":***@" in start["db"] or "@" not in start["db"]
        with urllib.request.urlopen(f"{instance.base_url}/regions", timeout=10) as response:
            assert response.status == 200
            assert response.headers["Content-Type"] == "application/json"
            assert response.headers["Server-Timing"].startswith("db;dur=")
            assert json.loads(response.read())["regions"][0]["id"] == 1
        process = instance.processes[0]
    assert process.returncode == 0, "SIGTERM is a clean stop"
