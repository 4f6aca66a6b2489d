"""Composition root (filled in by the next commit)."""
