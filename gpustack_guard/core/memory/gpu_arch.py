"""A GPU's compute capability from its name (profiles.GPU_COMPUTE_CAPABILITY): the fact engine rules key on where
a kernel or an engine generation needs a newer architecture."""

from __future__ import annotations

import re

from gpustack_guard.core.memory import profiles as P


def compute_capability(gpu_name: str) -> tuple[int, int] | None:
    """(major, minor) of the first matching row; None for an empty, AMD or unknown name."""
    name = gpu_name.lower()
    if not name:
        return None
    for pattern, capability in P.GPU_COMPUTE_CAPABILITY:
        if re.search(pattern, name):
            return capability
    return None


def below(gpu_name: str, capability: tuple[int, int]) -> bool:
    """True only when the name is known to be older than `capability` (an unknown name is not)."""
    known = compute_capability(gpu_name)
    return known is not None and known < capability
