"""Byte sizes: parse `23.58GiB` / `24GB` / `49140MiB` / plain integers, and print them for humans."""

from __future__ import annotations

import re

KiB = 1024
MiB = 1024**2
GiB = 1024**3

_FACTORS = {
    "": 1, "b": 1,
    "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3,
    "t": 1000**4, "tb": 1000**4,
    "ki": KiB, "kib": KiB, "mi": MiB, "mib": MiB, "gi": GiB, "gib": GiB, "ti": 1024**4, "tib": 1024**4,
}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(value: str | int | float) -> int:
    """Bytes from an int or a string with a unit; raises ValueError with the reason."""
    if isinstance(value, bool):
        raise ValueError("a size must be a number of bytes or a string such as '24GiB'")
    if isinstance(value, int):
        if value < 0:
            raise ValueError("a size cannot be negative")
        return value
    if isinstance(value, float):
        if value < 0 or value != value:
            raise ValueError("a size cannot be negative")
        return int(value)
    match = _SIZE.match(str(value))
    if not match:
        raise ValueError(f"'{value}' is not a size (use bytes or units such as 23.58GiB, 24GB, 49140MiB)")
    number, unit = match.groups()
    factor = _FACTORS.get(unit.lower())
    if factor is None:
        raise ValueError(f"unknown size unit '{unit}' (use B, KB, MB, GB, KiB, MiB, GiB, TiB)")
    return int(round(float(number) * factor))


def size_or_none(value: str | int | float | None) -> int | None:
    """parse_size that lets an unset (None) value through; the before-hook of optional size fields."""
    return None if value is None else parse_size(value)


def gib(n: int | float) -> str:
    """`12.34 GiB`, the unit vLLM's own logs use."""
    return f"{n / GiB:.2f} GiB"
