"""A GPU's compute capability from its name (profiles.GPU_COMPUTE_CAPABILITY): the fact engine rules key on where
a kernel or an engine generation needs a newer architecture; and whether it is a unified-memory device."""

from __future__ import annotations

import functools
import re

from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.versions import Version, parse_version


def compute_capability(gpu_name: str) -> tuple[int, int] | None:
    """(major, minor) of the first matching row; None for an empty, AMD or unknown name."""
    name = gpu_name.lower()
    if not name:
        return None
    for pattern, capability in P.GPU_COMPUTE_CAPABILITY:
        if re.search(pattern, name):
            return capability
    return None


def major(gpu_name: str) -> int:
    """The compute capability's major number (9 Hopper, 10 datacentre Blackwell); 0 for an unknown name, which no
    engine's "major == N" test takes."""
    return (compute_capability(gpu_name) or (0, 0))[0]


def below(gpu_name: str, capability: tuple[int, int]) -> bool:
    """True only when the name is known to be older than `capability` (an unknown name is not)."""
    known = compute_capability(gpu_name)
    return known is not None and known < capability


def integrated(gpu_name: str) -> str | None:
    """The unified-memory device a GPU name is (profiles.UMA_GPUS), None for a discrete or unknown one."""
    name = gpu_name.lower()
    for pattern, label in P.UMA_GPUS:
        if re.search(pattern, name):
            return label
    return None


@functools.cache
def _uma_keys(engine: str) -> tuple[tuple[Version, P.UmaFreeRow], ...]:
    return P.keyed_by_release([row for row in P.UMA_FREE_MEMORY if row.engine == engine])


def uma_free_row(engine: str, parsed_version: Version) -> P.UmaFreeRow:
    """The row of profiles.UMA_FREE_MEMORY that covers this release (a Version; the oldest row below them all)."""
    return P.row_of_release(_uma_keys(engine), parsed_version)


def uma_note(engine: str, release: str, gpu_name: str) -> str | None:
    """What gsg cannot see on a unified-memory GPU at this release (rule `uma_free_memory`): the estimate's numbers
    do not change, the free memory the engine measures is the host's."""
    label = integrated(gpu_name)
    if label is None:
        return None
    parsed = parse_version(release)
    if parsed is None:
        return None
    row = uma_free_row(engine, parsed)
    shown = "vLLM" if engine == "vllm" else "SGLang"
    if not row.host_available:
        return (f"{label} shares host memory: {shown} {release} reads cudaMemGetInfo's free memory ({row.source}), "
                "which counts the page cache as used, so a checkpoint read at start-up comes out of the KV pool (up "
                "to its size); drop the page cache before start or use a release that reads MemAvailable")
    what = ("the start-up check (free >= gmu x total) and what the engine consumed are measured from it"
            if engine == "vllm" else "the pool is what remains of it after the weights")
    return (f"{label} shares host memory: {shown} {release} takes free memory as the host's MemAvailable "
            f"({row.source}): {what}, so host memory other processes take or release during start-up moves the KV "
            "pool one for one (gsg books a clean host)")


def uma_notes(engine: str, release: str, gpu_name: str) -> list[str]:
    """uma_note as the list an estimate's notes are extended with."""
    note = uma_note(engine, release, gpu_name)
    return [note] if note else []
