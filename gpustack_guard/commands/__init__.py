"""Command implementations: plain functions taking parsed options and returning an exit code."""
