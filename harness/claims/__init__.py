"""Published claims (docs/design.md §10): claim files in claims/, their experiments, and the verdicts."""
