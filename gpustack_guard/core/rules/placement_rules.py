"""Placement: gpu_ids exist, selectors match, the parallel size fits, and GPUStack's own admission."""

from __future__ import annotations

from gpustack_guard.core import findings as F
from gpustack_guard.core.memory import engine
from gpustack_guard.core.fleet.placement import Ledger, Placement, choose_gpus
from gpustack_guard.core.rules import Context, Evaluation, spec_rule
from gpustack_guard.core.units import gib


def _ledger(ev: Evaluation, ctx: Context) -> Ledger:
    name = ev.cluster.name
    if name not in ctx.ledgers:
        managed = {e.rendered.name for e in ctx.evaluations if e.cluster is ev.cluster}
        ctx.ledgers[name] = Ledger(ev.cluster, managed)
    return ctx.ledgers[name]


def _claim(ev: Evaluation, gpus) -> int:
    """Per-GPU booking of claim-based backends (llama.cpp, Custom), as GPUStack would book it."""
    r = ev.rendered
    if r.facts is None:
        return 0
    try:
        if r.family == "llamacpp":
            est = engine.estimate("llamacpp", r.facts, [(g.total, g.gpu.name) for g in gpus], r.flags,
                                  r.spec.backend_version, r.spec.guard.policy)
            return est.requested
        return engine.gpustack_weight_estimate(r.facts) // max(len(gpus), 1)
    except ValueError:
        return 0  # malformed flags: the memory rules report them with their line (GSG016)


@spec_rule("placement")
def place(ev: Evaluation, ctx: Context):
    if ev.cluster is None or ev.blocked:
        return
    r, doc = ev.rendered, ev.rendered.doc
    spec = r.spec
    ledger = _ledger(ev, ctx)
    ev.ledger = ledger
    count = r.gpus_per_replica()
    tp, pp = r.parallel_size()
    selector = spec.worker_selector or {}
    ids = spec.gpu_selector.gpu_ids if spec.gpu_selector and spec.gpu_selector.gpu_ids else None
    workers = ledger.workers_matching(selector) if selector or not ids else []
    if selector and not workers:
        ev.blocked = True
        yield F.finding(F.WORKER_SELECTOR, doc.at("worker_selector"),
                        f"worker_selector {selector} matches no ready worker of cluster '{ev.cluster.name}'",
                        spec=spec.name, fix="fix the labels or label a worker")
        return
    if ids:
        yield from _manual(ev, ledger, ids, count, tp * pp)
    else:
        yield from _automatic(ev, ledger, workers, count)
    if ev.placement:
        ledger.book(ev.placement)


def _fraction(ev: Evaluation, gpus) -> float:
    smallest = min(g.total for g in gpus) if gpus else 0
    return engine.gpustack_fraction(ev.rendered.family, ev.rendered.flags, smallest)


def _manual(ev: Evaluation, ledger: Ledger, ids: list[str], count: int, parallel: int):
    doc, spec = ev.rendered.doc, ev.rendered.spec
    missing = [(i, gid) for i, gid in enumerate(ids) if gid not in ledger.gpus]
    for i, gid in missing:
        known = ", ".join(sorted(ledger.gpus)[:8])
        yield F.finding(F.GPU_ID_UNKNOWN, doc.at("gpu_selector", "gpu_ids", i),
                        f"gpu id '{gid}' is not in cluster '{ev.cluster.name}' (known: {known}…)", spec=spec.name)
    if missing:
        ev.blocked = True
        return
    refs = [ledger.gpus[gid] for gid in ids]
    if parallel > 1 and count != parallel:
        ev.blocked = True
        yield F.finding(F.PARALLEL_SIZE, doc.at("gpu_selector", "gpus_per_replica"),
                        f"gpus_per_replica is {count} but the parallel size (tp x pp) is {parallel}",
                        spec=spec.name, fix="make them equal")
        return
    needed = count * max(spec.replicas, 1)
    if len(refs) < needed:
        ev.blocked = True
        yield F.finding(F.PARALLEL_SIZE, doc.at("gpu_selector", "gpu_ids"),
                        f"{spec.replicas} replica(s) x {count} GPU(s) need {needed} GPUs; gpu_ids lists {len(refs)}",
                        spec=spec.name, fix="list more gpu_ids or lower replicas / --tensor-parallel-size")
        return
    replicas = [refs[i * count:(i + 1) * count] for i in range(max(spec.replicas, 1))]
    fraction = _fraction(ev, refs)
    placement = Placement(replicas, manual=True, fraction=fraction)
    for gpus in replicas:
        claim = None if fraction else _claim(ev, gpus)
        for ref in gpus:
            booking = int(ref.total * fraction) if fraction else claim
            placement.booking[ref.id] = placement.booking.get(ref.id, 0) + booking
            yield from _admission(ev, ledger, ref, fraction, booking)
    ev.placement = placement


def _admission(ev: Evaluation, ledger: Ledger, ref, fraction: float, booking: int):
    spec, doc = ev.rendered.spec, ev.rendered.doc
    free = ledger.free_fraction(ref)
    forced = " GPUStack force-places a single replica on manual gpu_ids anyway (overcommit);" \
        if spec.replicas == 1 else " GPUStack refuses to place it;"
    if fraction and free < fraction:
        yield F.finding(F.ADMISSION_FRACTION, doc.at("gpu_selector", "gpu_ids"),
                        f"GPU {ref.id} has {free:.2f} of {gib(ref.total)} free by GPUStack's bookings, below "
                        f"the {fraction:.2f} it books for this deployment.{forced} vLLM will not start",
                        spec=spec.name, fix="lower --gpu-memory-utilization or move the deployment",
                        gpu=ref.id, free_fraction=round(free, 4), fraction=fraction)
    booked = ledger.base_allocated[ref.id] + ledger.bookings[ref.id] + booking
    if booked > ref.total:
        yield F.finding(F.ADMISSION_BOOKING, doc.at("gpu_selector", "gpu_ids"),
                        f"GPU {ref.id}: GPUStack bookings {gib(booked)} (this deployment {gib(booking)}, "
                        f"others {gib(booked - booking)}) exceed its {gib(ref.total)}",
                        spec=spec.name, fix="lower --gpu-memory-utilization / move one deployment",
                        gpu=ref.id, booked=booked, total=ref.total)


def _automatic(ev: Evaluation, ledger: Ledger, workers, count: int):
    spec, doc = ev.rendered.spec, ev.rendered.doc
    if not workers:
        ev.blocked = True
        yield F.finding(F.NO_PLACEMENT, doc.at("name"), f"cluster '{ev.cluster.name}' has no ready worker",
                        spec=spec.name)
        return
    all_gpus = [ledger.gpus[w.gpu_id(g)] for w in workers for g in w.gpus]
    fraction = _fraction(ev, all_gpus)
    replicas, reason = choose_gpus(ledger, workers, count, fraction, lambda gpus: _claim(ev, gpus),
                                   spec.placement_strategy, max(spec.replicas, 1))
    if reason:
        ev.blocked = True
        rule = F.PARALLEL_SIZE if "largest eligible worker" in reason else F.NO_PLACEMENT
        yield F.finding(rule, doc.at("name"), f"GPUStack cannot place replica {len(replicas) + 1}: {reason}"
                        " (gsg does not simulate multi-worker placement)", spec=spec.name,
                        fix="pin gpu_selector.gpu_ids, free GPUs or lower the parallel size")
        return
    placement = Placement(replicas, manual=False, fraction=fraction)
    for gpus in replicas:
        claim = None if fraction else _claim(ev, gpus)
        for ref in gpus:
            placement.booking[ref.id] = placement.booking.get(ref.id, 0) + (
                int(ref.total * fraction) if fraction else claim)
    ev.placement = placement
