"""Database lifecycle: the embedded cluster, the deterministic seed, template reset and checksums."""
