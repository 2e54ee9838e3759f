"""Every knob the local runner sets, with its default (docs/design.md §2.5, §3.3).

This is the single source of truth: the runner fills instance environments from it, the manifest
records it, and infra/ (Compose, Kubernetes) is tested for parity against it.
"""

from __future__ import annotations

# Environment variables every app reads, with the defaults the contract states (contract/README.md).
APP_KNOBS: dict[str, str] = {
    "DB_POOL_SIZE": "10",
    "LOG_LEVEL": "info",
    "SERVER_TIMING": "1",
}

# The language's own concurrency and runtime knobs. JAVA_POOL is the connection-pool library (hikari,
# driver = pgjdbc unpooled, dbcp2); only Java has that choice (Node: pg.Pool, PHP: persistent PDO).
IMPL_KNOBS: dict[str, dict[str, str]] = {
    "java": {"JAVA_THREADS": "32", "JAVA_POOL": "hikari"},
    "node": {"NODE_WORKERS": "0", "PG_NATIVE": "0"},
    "php": {"PHP_FPM_CHILDREN": "10", "PHP_JIT": "0"},
}

# Resource knobs of an instance (docs/design.md §4): CPU limit in cores (thesis: one CPU per instance) and memory.
DEFAULT_CPU_LIMIT = 1.0
DEFAULT_MEMORY_LIMIT_MB = 1024


def default_knobs(impl: str) -> dict[str, str]:
    return {**APP_KNOBS, **IMPL_KNOBS[impl]}
