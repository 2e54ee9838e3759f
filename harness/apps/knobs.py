"""Every knob the local runner sets, with its default (docs/design.md §2.5, §3.3): the single source of
truth for instance environments, the manifest and infra/'s parity tests. The knobs every app reads are here;
each language's own are declared by its adapter (AppAdapter.knobs).
"""

from __future__ import annotations

# Environment variables every app reads, with the defaults the contract states (contract/README.md).
APP_KNOBS: dict[str, str] = {
    "DB_POOL_SIZE": "10",
    "LOG_LEVEL": "info",
    "SERVER_TIMING": "1",
}

# Resource knobs of an instance (docs/design.md §4): CPU limit in cores (thesis: one CPU per instance) and memory.
DEFAULT_CPU_LIMIT = 1.0
DEFAULT_MEMORY_LIMIT_MB = 1024


def default_knobs(impl: str) -> dict[str, str]:
    from harness.apps import adapter  # the registry imports the apps, which import this module

    return {**APP_KNOBS, **adapter(impl).knobs}
