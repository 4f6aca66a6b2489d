"""Rules over the whole fleet once every spec is placed: real footprints per GPU."""

from __future__ import annotations

from gpustack_guard.core import findings as F
from gpustack_guard.core.rules import Context, fleet_rule
from gpustack_guard.core.units import gib


@fleet_rule
def gpu_overcommit(ctx: Context):
    """Sum of real footprints of all deployments on one GPU, plus foreign and existing use, within its total."""
    by_name = {ev.rendered.name: ev for ev in ctx.evaluations}
    for ledger in ctx.ledgers.values():
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
            where = last.rendered.doc.at("gpu_selector", "gpu_ids") if last else F.Location("fleet")
            yield F.finding(F.GPU_OVERCOMMIT, where,
                            f"GPU {gid} ({ref.gpu.name or ref.gpu.type}, {gib(ref.total)}) would carry "
                            f"{gib(total_use)}: {parts}", spec=entries[-1][0],
                            fix="lower --gpu-memory-utilization / --mem-fraction-static of the co-located "
                                "deployments or move one", gpu=gid, total=ref.total, used=total_use)
