"""Byte sizes: parse `23.58GiB` / `24GB` / `49140MiB` / plain integers, and print them for humans."""

from __future__ import annotations

import math
import re

KiB = 1024
MiB = 1024**2
GiB = 1024**3
TiB = 1024**4
# Beyond these a size is a typo, not a device or a checkpoint: bounds of the spec and fleet size fields.
MAX_DEVICE_BYTES = 64 * TiB  # one GPU's memory, a footprint or a reservation on it
MAX_MODEL_BYTES = 1024 * TiB  # a checkpoint's weights, host RAM

_FACTORS = {
    "": 1, "b": 1,
    "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3,
    "t": 1000**4, "tb": 1000**4,
    "ki": KiB, "kib": KiB, "mi": MiB, "mib": MiB, "gi": GiB, "gib": GiB, "ti": 1024**4, "tib": 1024**4,
}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def size_pattern() -> str:
    """What parse_size takes, as a JSON Schema pattern (no flags there: each unit's letters in either case)."""
    units = sorted((u for u in _FACTORS if u), key=lambda u: (-len(u), u))
    either = "|".join("".join(f"[{c.lower()}{c.upper()}]" for c in unit) for unit in units)
    return rf"^\s*[0-9]+(\.[0-9]+)?\s*({either})?\s*$"


def parse_size(value: str | int | float) -> int:
    """Bytes from an int or a string with a unit; raises ValueError with the reason."""
    if isinstance(value, bool):
        raise ValueError("a size must be a number of bytes or a string such as '24GiB'")
    if isinstance(value, int):
        if value < 0:
            raise ValueError("a size cannot be negative")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"a size must be a finite number of bytes, not {value}")
        if value < 0:
            raise ValueError("a size cannot be negative")
        return int(value)
    match = _SIZE.match(str(value))
    if not match:
        raise ValueError(f"'{value}' is not a size (use bytes or units such as 23.58GiB, 24GB, 49140MiB)")
    number, unit = match.groups()
    factor = _FACTORS.get(unit.lower())
    if factor is None:
        raise ValueError(f"unknown size unit '{unit}' (use B, KB, MB, GB, KiB, MiB, GiB, TiB)")
    size = float(number) * factor
    if not math.isfinite(size):  # 309 digits or more: float() is inf, and int(inf) raised OverflowError
        shown = number if len(number) <= 20 else f"{number[:20]}…({len(number):,} digits)"
        raise ValueError(f"'{shown}{unit}' is larger than any size (past a float's range)")
    return int(round(size))


def size_or_none(value: str | int | float | None) -> int | None:
    """parse_size that lets an unset (None) value through; the before-hook of optional size fields."""
    return None if value is None else parse_size(value)


def gib(n: int | float) -> str:
    """`12.34 GiB`, the unit vLLM's own logs use."""
    return f"{n / GiB:.2f} GiB"
