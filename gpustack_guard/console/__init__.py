"""The console run around every command: process.py (collector, streams, signals, one line per error, the exit)
and quick_validate.py (plain `gsg validate` runs without typer); cli.py is typer's command line."""
