"""Every knob the local runner sets, with its default (docs/design.md §2.5, §3.3).

This is the single source of truth: the runner fills instance environments from it, the manifest
records it, and infra/ (Compose, Kubernetes) is tested for parity against it. The knobs every app reads
are here; each language's own knobs are declared by its adapter (harness/apps/<name>.py, AppAdapter.knobs).
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


def impl_knobs() -> dict[str, dict[str, str]]:
    """The language's own concurrency and runtime knobs per implementation, in registry order."""
    from harness.apps import adapters  # the registry imports every app, and the apps import this module

    return {app.name: dict(app.knobs) for app in adapters()}


def default_knobs(impl: str) -> dict[str, str]:
    from harness.apps import adapter  # as above: the registry imports the apps, which import this module

    return {**APP_KNOBS, **adapter(impl).knobs}


def __getattr__(name: str) -> dict[str, dict[str, str]]:
    # IMPL_KNOBS is read where infra/ is checked for parity; the adapters own the values, so it is built
    # from the registry when asked for (harness/apps/__init__.py imports the adapters, which import this).
    if name == "IMPL_KNOBS":
        return impl_knobs()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
