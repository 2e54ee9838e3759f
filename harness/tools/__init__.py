"""Project tooling that is not measurement: building the driver and tools, the test-suite runner, the fake target."""
