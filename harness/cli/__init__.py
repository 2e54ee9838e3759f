"""The command line: the only code that knows typer. Nothing imports this package but `harness.__main__`."""
