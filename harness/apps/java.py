"""The Java driver: builds java-app/ with Maven and launches one JVM per instance (docs/design.md §4).

The JVM flags are a knob (`JVM_FLAGS`, one shell-quoted string) so that heap and collector are always
explicit and recorded (docs/design.md §3.3). The JDK is a knob too (`JAVA_HOME`), which is how a run compares
OpenJDK 17 with Temurin 25 on the same jar (Freire et al.).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

from harness import paths
from harness.apps import base
from harness.apps import knobs as knob_defaults
from harness.apps.base import AppAdapter, AppDriver, InstanceSpec, ProcessLaunch, TestSuite
from harness.console import UserError

APP_DIR = paths.app_dir("java")
JAR = APP_DIR / "target" / "bidbench-java.jar"
BUILD_STAMP = paths.CACHE / "java-app.build.sha256"

# Fixed 256 MiB heap and G1, the JVM's own server default, stated explicitly so that neither the host's
# RAM nor a 1-CPU limit (where ergonomics would switch to Serial) silently changes them.
DEFAULT_JVM_FLAGS = "-Xms256m -Xmx256m -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError"

# Knobs only this driver reads, on top of harness.apps.knobs.
DRIVER_KNOBS: dict[str, str] = {"JVM_FLAGS": DEFAULT_JVM_FLAGS, **base.UNFAIR_KNOBS}


def source_digest() -> str:
    """Of everything the jar is built from; tests do not go into the jar."""
    main = sorted(p for p in (APP_DIR / "src" / "main").rglob("*") if p.is_file())
    return base.digest_files([APP_DIR / "pom.xml", *main], APP_DIR)


def _maven() -> str:
    return base.on_path(shutil.which("mvn"), "Maven (mvn) is not on PATH; run ./bidbench setup")


def java_binary(java_home: str | None = None) -> str:
    """`<JAVA_HOME>/bin/java` for the knob, else for the environment's JAVA_HOME, else `java` on PATH."""
    home = java_home or os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        if not candidate.is_file():
            raise UserError(f"JAVA_HOME={home} has no bin/java")
        return str(candidate)
    return base.on_path(shutil.which("java"), "no java on PATH and no JAVA_HOME; run ./bidbench setup")


def parse_java_properties(text: str) -> dict[str, str]:
    """The `key = value` lines of `java -XshowSettings:properties -version`."""
    return {
        key: value.strip() for key, value in re.findall(r"^[^\S\n]{4}([\w.]+) = (.*)$", text, re.MULTILINE)
    }


class JavaDriver(AppDriver):
    impl = "java"

    def __init__(self) -> None:
        self._last_java: str | None = None

    def ensure_built(self) -> None:
        digest = source_digest()
        if JAR.is_file() and base.stamped(BUILD_STAMP, digest):
            return
        done = subprocess.run(
            [_maven(), "-q", "-B", "package", "-DskipTests"], cwd=APP_DIR, capture_output=True, text=True
        )
        if done.returncode != 0 or not JAR.is_file():
            output = (done.stdout + done.stderr).strip().splitlines()[-40:]
            raise UserError("java-app build failed (mvn -q -B package -DskipTests):\n" + "\n".join(output))
        base.write_stamp(BUILD_STAMP, digest)

    def launches(self, spec: InstanceSpec) -> list[ProcessLaunch]:
        if not JAR.is_file():
            raise UserError(f"{JAR} is missing; run ./bidbench build java")
        java = java_binary(spec.knobs.get("JAVA_HOME"))
        self._last_java = java
        flags = shlex.split(spec.knobs.get("JVM_FLAGS", DEFAULT_JVM_FLAGS))
        return [spec.app_process("jvm", [java, *flags, "-jar", str(JAR)], APP_DIR)]

    def effective_knobs(self, spec: InstanceSpec) -> dict[str, str]:
        java_home = Path(java_binary(spec.knobs.get("JAVA_HOME"))).resolve().parent.parent
        return {
            **knob_defaults.default_knobs(self.impl),
            **DRIVER_KNOBS,
            "JAVA_HOME": str(java_home),
            **spec.knobs,
        }

    def test_suites(self) -> list[TestSuite]:
        # Not -q: Maven's quiet mode hides Surefire's "Tests run: N, Failures: ..." summary.
        return [
            TestSuite(
                name="JUnit (mvn test)",
                argv=[_maven(), "-B", "--no-transfer-progress", "test"],
                cwd=APP_DIR,
                summary_pattern=r"Tests run: \d+, Failures: \d+",
            )
        ]

    def runtime_versions(self) -> dict[str, str]:
        """The JDK of the most recent launches() (the JAVA_HOME knob), else the default one."""
        java = self._last_java or java_binary()
        try:
            done = subprocess.run(
                [java, "-XshowSettings:properties", "-version"], capture_output=True, text=True, timeout=30
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return {"java": f"unknown ({exc})"}
        properties = parse_java_properties(done.stderr + done.stdout)
        return {
            "java": properties.get("java.runtime.version", properties.get("java.version", "?")),
            "java_vendor": properties.get("java.vendor", "?"),
            "jvm": properties.get("java.vm.name", "?"),
            "java_home": properties.get("java.home", str(Path(java).resolve().parent.parent)),
        }


ADAPTER = AppAdapter(
    name="java",
    folder=APP_DIR,
    driver_class=JavaDriver,
    # JAVA_POOL is the connection-pool library (hikari, driver = pgjdbc unpooled, dbcp2); only Java has that
    # choice (Node: pg.Pool, PHP: persistent PDO).
    knobs={"JAVA_THREADS": "32", "JAVA_POOL": "hikari"},
    tools=("java", "maven"),
    first_build_note="java's first build takes a minute or two",
    runs_on_jvm=True,
)
