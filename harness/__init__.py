"""bidbench harness: the Python package behind the ./bidbench command."""

__version__ = "0.1.0"
