"""How a GPU's boards talk to each other, from its name: the one classification vLLM's NCCL and custom all-reduce
buffers and SGLang's parallel start-up both depend on (profiles.GPU_INTERCONNECT)."""

from __future__ import annotations

import re

from gpustack_guard.core.memory import profiles as P

PEERLESS = ("pcie", "no_p2p")  # classes on which custom all-reduce sets up no NVLink buffers beyond two GPUs


def interconnect(gpu_name: str) -> str:
    """"nvlink" | "pcie" | "no_p2p" | "unknown" (first match of profiles.GPU_INTERCONNECT wins)."""
    name = gpu_name.lower()
    for kind, pattern in P.GPU_INTERCONNECT:
        if name and re.search(pattern, name):
            return kind
    return "unknown"
