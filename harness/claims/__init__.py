"""Published claims (SPEC §10): claim files in claims/, their experiments, and the verdicts."""
