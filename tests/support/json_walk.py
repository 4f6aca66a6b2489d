"""Walking JSON-shaped values in tests."""

from __future__ import annotations


def containers(value, found: list) -> list:
    """Every dict and list inside value (value included), depth first: tests compare their identities to see
    whether a copy shares any of them with its original."""
    if isinstance(value, (dict, list)):
        found.append(value)
        for item in value.values() if isinstance(value, dict) else value:
            containers(item, found)
    return found
