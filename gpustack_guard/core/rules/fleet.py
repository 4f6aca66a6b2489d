"""Rules over the whole fleet once every spec is placed and estimated: real footprints per GPU (GSG035) and each
engine's start-up check in apply order (GSG041)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from gpustack_guard.core import echo
from gpustack_guard.core.findings import Finding, Location, Rule, finding
from gpustack_guard.core.memory.colocation import StartupCheck, startup_sequence
from gpustack_guard.core.units import gib

if TYPE_CHECKING:
    from gpustack_guard.core.memory.estimate import Estimate
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
            lone = len(entries) == 1 and (occupied == 0 or _sizes_from_free(by_name.get(entries[0][0])))
            if total_use <= ref.total or lone:
                continue  # a lone deployment over its GPU is the headroom/KV rules' business
            parts = ", ".join(f"{name} {gib(amount)}" for name, amount in entries)
            if occupied:
                existing = ", ".join(f"{model} {gib(claim)}" for model, claim in ledger.existing[gid])
                parts += f", already in use {gib(occupied)} " + (f"({existing})" if existing else "(foreign processes)")
            last = by_name.get(entries[-1][0])
            where = last.rendered.doc.at("gpu_selector", "gpu_ids") if last else Location("fleet")
            yield finding(GPU_OVERCOMMIT, where,
                          f"GPU {gid} ({echo.value(ref.gpu.name, 60) or ref.gpu.type}, {gib(ref.total)}) would carry "
                          f"{gib(total_use)}: {parts}", spec=entries[-1][0],
                          fix="lower --gpu-memory-utilization / --mem-fraction-static of the co-located "
                              "deployments or move one", gpu=gid, total=ref.total, used=total_use)


def _sizes_from_free(ev) -> bool:
    """An engine that sizes its pool from the memory it finds free (SGLang: its fraction of it; vLLM 0.34's
    extensible KV cache: gmu only a cap) shrinks that pool where other processes hold memory: alone on a GPU it
    cannot overcommit it, and whether what it leaves is enough is the headroom rule's question (GSG034)."""
    if ev is None or not ev.estimates:
        return False
    est = ev.estimates[0]
    return est.engine == "SGLang" or est.extra.get("gmu_semantics") == "extensible"


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

def replica_estimates(by_name: dict) -> dict[str, dict[str, Estimate]]:
    """Per deployment name, the estimate of its replica on each GPU it holds (the first replica that lists the GPU,
    as apply starts them). Built once per run: finding it per GPU by scanning the replicas of every deployment
    there cost ~25 of this rule's ~60 ms at 10,000 specs x 5,000 GPUs (docs/performance.md, eighth round)."""
    found: dict[str, dict[str, Estimate]] = {}
    for name, ev in by_name.items():
        if ev.placement is None:
            continue
        on_gpus: dict[str, Estimate] = {}
        for gpus, est in zip(ev.placement.replicas, ev.estimates):
            for g in gpus:
                on_gpus.setdefault(g.id, est)
        found[name] = on_gpus
    return found


def _on_gpu(gid: str, entries, estimates: dict[str, dict[str, Estimate]]) -> list:
    """(name, the estimate of that deployment's replica on this GPU) in apply order."""
    found = []
    for name, _ in entries:
        est = estimates.get(name, {}).get(gid)
        if est is not None:
            found.append((name, est))
    return found


def _failing_checks(total: int, occupied: int, alone: bool, instances: list) -> list[tuple[int, StartupCheck]]:
    """(position in start order, check) of the instances this rule reports on one GPU."""
    failed = []
    for index, check in enumerate(startup_sequence(total, occupied, instances)):
        # Alone on its GPU, only vLLM's own start-up check is this rule's: a refusal by gmu x total above what
        # CUDA/NCCL start-up leaves free (0.99 on a 24 GiB card). Its OOMs and SGLang's empty pool are the
        # headroom, overcommit and KV rules' findings already.
        if not (check.starts or (alone and not check.free_memory_check)):
            failed.append((index, check))
    return failed


def _startup_free_memory(results: Results) -> Iterator[Finding]:
    """Each deployment, started in apply order on a shared GPU, must find the free memory its engine asks for."""
    by_name = {ev.rendered.name: ev for ev in results.evaluations}
    estimates = replica_estimates(by_name)
    # The checks that fail, per GPU total, memory held before, whether one deployment is alone, and the estimates
    # in start order: a check depends on nothing else (its name only labels it), and 5,000 GPUs hold a few such
    # sets (10,000 specs: ~45 -> ~25 ms). Keyed by the estimates' identity: `estimates` keeps them alive meanwhile.
    failing: dict[tuple, list[tuple[int, StartupCheck]]] = {}
    for ledger in results.ledgers.values():
        for gid, entries in ledger.footprints.items():
            occupied = ledger.occupied_before(gid)
            if not entries:
                continue
            alone = len(entries) == 1 and occupied == 0
            ref = ledger.gpus[gid]
            instances = _on_gpu(gid, entries, estimates)
            key = (ref.total, occupied, alone, *[id(est) for _, est in instances])
            failed = failing.get(key)
            if failed is None:
                failed = failing[key] = _failing_checks(ref.total, occupied, alone, instances)
            for index, check in failed:
                name = instances[index][0]
                doc = by_name[name].rendered.doc
                yield finding(STARTUP_FREE_MEMORY, doc.at("gpu_selector", "gpu_ids"),
                              f"GPU {gid} ({gib(ref.total)}): {name} {check.outcome} with "
                              f"{gib(check.free_at_start)} free, {gib(check.needs_free)} needed: {check.reason}",
                              spec=name, gpu=gid, free=check.free_at_start, needed=check.needs_free,
                              fix="lower --gpu-memory-utilization / --mem-fraction-static of the deployments "
                                  "placed before it, or move one")


STARTUP_FREE_MEMORY = Rule(
    "GSG041", "startup-free-memory",
    "Started in apply order, a deployment finds less free memory than its engine needs to start.",
    what="Several engine instances on one GPU, started in apply order (waves, then file order): each one sees what "
         "the ones before it left free. vLLM V1 takes gpu_memory_utilization x total as its own budget and refuses "
         "to start when less is free; V0 from 0.6.4 takes it unchecked and OOMs; V0 before 0.6.4 capped the "
         "whole GPU; SGLang takes its fraction of what it finds free. A vLLM V1 deployment alone on its GPU is "
         "checked too: a fraction above what the CUDA context (and, from 0.11, NCCL) leaves free is refused.",
    why="Two small models at 0.45 share a 48 GB card; a third at 0.45 may pass GPUStack's admission by bookings and "
        "then stops at start-up with 'Free memory on device ... is less than desired GPU memory utilization'.",
    example="name: small-c   # the third 8B model at 0.30 on one RTX A6000 after two others\n"
            "gpu_selector: {gpu_ids: [gpu-b:cuda:0]}\n"
            "backend_parameters: [--gpu-memory-utilization=0.30]",
    fix="Lower --gpu-memory-utilization / --mem-fraction-static of the deployments placed before it, or move one.",
    check=_startup_free_memory)

RULES = (GPU_OVERCOMMIT, STARTUP_FREE_MEMORY)
