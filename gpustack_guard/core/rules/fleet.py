"""Rules over the whole fleet once every spec is placed and estimated: real footprints per GPU (GSG035)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from gpustack_guard.core.findings import Finding, Location, Rule, finding
from gpustack_guard.core.units import gib

if TYPE_CHECKING:
    from gpustack_guard.core.stages.results import Results


def _gpu_overcommit(results: Results) -> Iterator[Finding]:
    """Sum of real footprints of all deployments on one GPU, plus foreign and existing use, within its total."""
    by_name = {ev.rendered.name: ev for ev in results.evaluations}
    for ledger in results.ledgers.values():
        for gid, entries in ledger.footprints.items():
            if not entries:
                continue
            ref = ledger.gpus[gid]
            occupied = ledger.occupied_before(gid)
            total_use = occupied + sum(amount for _, amount in entries)
            if total_use <= ref.total or (len(entries) == 1 and occupied == 0):
                continue  # a lone deployment over its GPU is the headroom/KV rules' business
            parts = ", ".join(f"{name} {gib(amount)}" for name, amount in entries)
            if occupied:
                existing = ", ".join(f"{model} {gib(claim)}" for model, claim in ledger.existing[gid])
                parts += f", already in use {gib(occupied)} " + (f"({existing})" if existing else "(foreign processes)")
            last = by_name.get(entries[-1][0])
            where = last.rendered.doc.at("gpu_selector", "gpu_ids") if last else Location("fleet")
            yield finding(GPU_OVERCOMMIT, where,
                          f"GPU {gid} ({ref.gpu.name or ref.gpu.type}, {gib(ref.total)}) would carry "
                          f"{gib(total_use)}: {parts}", spec=entries[-1][0],
                          fix="lower --gpu-memory-utilization / --mem-fraction-static of the co-located "
                              "deployments or move one", gpu=gid, total=ref.total, used=total_use)


GPU_OVERCOMMIT = Rule(
    "GSG035", "gpu-overcommit",
    "The real footprints of all deployments on one GPU, with foreign usage, exceed its memory.",
    what="A GPU on which the real footprints of the deployments placed there (what each engine really allocates, "
         "not what GPUStack books), plus existing instances or foreign processes (a display, a notebook), exceed "
         "its memory. Reported at the last deployment placed on it.",
    why="GPUStack admits by its bookings and ignores memory it does not manage: every instance passes admission, "
        "then one of them OOMs under load.",
    example="name: half-a\ngpu_selector: {gpu_ids: [gpu-d:cuda:1]}\n"
            "backend_parameters: [--gpu-memory-utilization=0.47]\n---\nname: half-b\n"
            "gpu_selector: {gpu_ids: [gpu-d:cuda:1]}   # the 4090 also drives a 1.5 GiB display\n"
            "backend_parameters: [--gpu-memory-utilization=0.47]",
    fix="Lower --gpu-memory-utilization / --mem-fraction-static of the co-located deployments, or move one.",
    check=_gpu_overcommit)

RULES = (GPU_OVERCOMMIT,)
