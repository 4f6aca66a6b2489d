"""Several engine instances on one GPU, started in apply order (docs/memory-arithmetic.md, "Co-location").

Each instance sees the memory the ones before it left free, and each engine reads that differently:
- vLLM V1 takes gmu x total as its own budget and refuses to start when the free memory it measures after
  CUDA/NCCL start-up is below it ("Free memory on device ... on startup is less than desired GPU memory
  utilization"); V0 from 0.6.4 took the same budget without checking, and OOMs instead;
- vLLM V0 before 0.6.4 capped the GPU's whole allocation at gmu x total: memory other processes hold is taken
  out of its own KV budget;
- SGLang takes mem_fraction_static of the free memory it measures, whatever the total;
- llama.cpp allocates what it needs and fails when it does not find it.
What an instance holds once started is its footprint: its budget plus what lives outside it, counted once.
"""

from __future__ import annotations

import math

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.memory.engines.vllm import extensible_kv_bytes
from gpustack_guard.core.memory.estimate import Estimate
from gpustack_guard.core.units import gib
from gpustack_guard.core.values import frozen_value

STARTS = "starts"
REFUSES = "refuses"  # the engine's own start-up check says no
OOM = "oom"  # no check, but the allocation cannot be served


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class StartupCheck:
    """Whether an instance finds enough free memory on a shared GPU when it starts."""

    __repr__ = fields_repr

    name: str
    free_at_start: int  # free bytes on the GPU when this instance starts
    needs_free: int  # what it must find free to start and survive graph capture
    holds: int  # what it occupies once running (0 when it does not start)
    outcome: str  # STARTS | REFUSES | OOM
    reason: str
    free_memory_check: bool = False  # refused by vLLM V1's "Free memory on device ... on startup" check

    @property
    def starts(self) -> bool:
        return self.outcome == STARTS


def _vllm(name: str, est: Estimate, total: int, free: int) -> StartupCheck:
    x = est.extra
    before_snapshot = x["cuda_context"] + x["comm_buffers"]
    if x["gmu_semantics"] == "global-cap":
        others = total - free
        kv_left = est.kv_available - others
        holds = est.requested - others + x["outside_budget"]
        if kv_left <= 0 or (est.kv_needed and kv_left < est.kv_needed):
            return StartupCheck(name, free, est.requested, 0, REFUSES,
                                f"vLLM {est.version} caps the whole GPU at {x['gpu_memory_utilization']} x total: "
                                f"the {gib(others)} other processes hold leave {gib(max(kv_left, 0))} of KV cache")
        return StartupCheck(name, free, holds, holds, STARTS if holds <= free else OOM, "global cap")
    if x["gmu_semantics"] == "extensible":
        return _vllm_extensible(name, est, free, before_snapshot)
    if x["startup_free_check"] and free - before_snapshot < est.requested:
        return StartupCheck(name, free, est.requested + before_snapshot, 0, REFUSES,
                            f"free memory on device ({gib(free - before_snapshot)} after CUDA/NCCL start-up) is "
                            f"less than desired GPU memory utilization ({x['gpu_memory_utilization']}, "
                            f"{gib(est.requested)})", free_memory_check=True)
    if est.footprint > free:
        return StartupCheck(name, free, est.footprint, 0, OOM,
                            f"its budget and what lives outside it ({gib(est.footprint)}) exceed the "
                            f"{gib(free)} free")
    return StartupCheck(name, free, est.footprint, est.footprint, STARTS, "per-instance budget")


def _vllm_extensible(name: str, est: Estimate, free: int, before_snapshot: int) -> StartupCheck:
    """0.34's extensible KV cache: no start-up check; the pool is what the free memory it finds leaves after its
    engine use, its margin and its transient peak (engines.vllm.extensible_kv_bytes)."""
    engine_use, transient = est.extra["engine_use"], est.activation
    if free - before_snapshot < engine_use:
        return StartupCheck(name, free, before_snapshot + engine_use, 0, OOM,
                            f"its weights, graphs and non-torch memory ({gib(engine_use)}) exceed the "
                            f"{gib(free - before_snapshot)} free after CUDA/NCCL start-up")
    kv = extensible_kv_bytes(est.requested, free - before_snapshot, engine_use, transient)
    if kv <= 0:
        return StartupCheck(name, free, before_snapshot + engine_use + transient, 0, REFUSES,
                            f"the {gib(free - before_snapshot)} free after CUDA/NCCL start-up leave no KV cache "
                            "after its engine use, transient peak and margin (extensible KV cache)")
    holds = before_snapshot + engine_use + kv + transient
    return StartupCheck(name, free, holds, holds, STARTS, "extensible KV cache sized from the free memory")


def _sglang(name: str, est: Estimate, free: int) -> StartupCheck:
    x = est.extra
    fraction, start_up = x["mem_fraction_static"], est.non_torch
    reserve = est.footprint - est.requested - start_up  # activations and graphs outside the static part
    pre = free - start_up
    static = math.ceil(fraction * pre)
    if static - est.weights <= 0:
        return StartupCheck(name, free, est.weights + start_up, 0, REFUSES,
                            f"mem_fraction_static {fraction} of the {gib(pre)} free leaves no KV cache after "
                            f"{gib(est.weights)} of weights")
    # What start-up itself allocates past the static part is the CUDA graphs it captures (decode, and from 0.5.10
    # the piecewise prefill graphs); the rest of SGLang's reserve (metadata, max(chunk, 2048) x 1.5 MiB of
    # activations) is a margin for later, which its own default fraction leaves only (1 - fraction) x free of,
    # never the whole: a shortfall there is the headroom rule's (GSG034), not a start-up OOM
    graphs = est.cuda_graphs + x.get("prefill_graph_reserve", 0)
    needs = start_up + static + graphs
    if needs > free:
        return StartupCheck(name, free, needs, 0, OOM,
                            f"fraction of the free memory, then {gib(graphs)} of CUDA graphs captured at start-up")
    # once running it takes its reserve where it is free: the next instance finds only what is left
    holds = min(start_up + static + reserve, free)
    return StartupCheck(name, free, needs, holds, STARTS, "fraction of the free memory")


def startup_sequence(total: int, foreign: int, instances: list[tuple[str, Estimate]]) -> list[StartupCheck]:
    """One GPU of `total` bytes with `foreign` bytes held by processes gsg does not manage; instances in apply
    order, each with its Estimate on this GPU. Returns one check per instance, in the same order."""
    free = total - foreign
    checks = []
    for name, est in instances:
        if est.engine == "vLLM":
            check = _vllm(name, est, total, free)
        elif est.engine == "SGLang":
            check = _sglang(name, est, free)
        else:
            outcome = STARTS if est.footprint <= free else OOM
            check = StartupCheck(name, free, est.footprint, est.footprint if outcome == STARTS else 0, outcome,
                                 "allocates what it computes")
        checks.append(check)
        free -= check.holds
    return checks
