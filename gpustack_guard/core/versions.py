"""Comparable backend versions: `v0.11.0`, `0.6.4.post1`, `0.21` -> (0, 11, 0)."""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=256)
def parse_version(text: str | None) -> tuple[int, ...] | None:
    if not text:
        return None
    parts = re.findall(r"\d+", str(text).lstrip("vV").split("+")[0].split("-")[0])
    return tuple(int(p) for p in parts[:3]) if parts else None


def version_lt(a: str | None, b: str) -> bool:
    """a < b; an unknown version is never 'below' anything."""
    pa, pb = parse_version(a), parse_version(b)
    if pa is None or pb is None:
        return False
    return pa < pb
