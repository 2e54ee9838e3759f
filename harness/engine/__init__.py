"""The run engine: one measured session of an instance set under load (docs/design.md §7-§9).

The driver process, the cgroup sampler and resource limits, the app instances, the validity rules and
the session that ties them together. Regimes call it; analysis reads only the records it writes.
"""
