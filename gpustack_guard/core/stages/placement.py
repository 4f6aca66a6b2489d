"""The placement stage: each spec's cluster, GPUs and GPUStack bookings, as a fold over the specs in apply
order (lower waves first, then file order), since every booking changes what the next spec is admitted to."""

from __future__ import annotations

from typing import Sequence

from gpustack_guard.core.fleet.model import Cluster, Fleet, GpuRef
from gpustack_guard.core.fleet.placement import (
    Ledger,
    Placement,
    PlacementFailure,
    Unplaced,
    choose_gpus,
    replica_bookings,
)
from gpustack_guard.core.memory import engine
from gpustack_guard.core.render import RenderedSpec
from gpustack_guard.core.stages.results import AdmissionCheck, Placed


def place_all(specs: Sequence[RenderedSpec], fleet: Fleet | None) -> tuple[tuple[Placed, ...], dict[str, Ledger]]:
    """Place every spec in the given order; returns the placed specs and each cluster's final ledger."""
    if fleet is None:
        return tuple(Placed(r) for r in specs), {}
    clusters = [fleet.cluster(r.spec.cluster_name) for r in specs]
    ledgers: dict[str, Ledger] = {}
    placed: list[Placed] = []
    for rendered, cluster in zip(specs, clusters, strict=True):
        if cluster is None:
            placed.append(Placed(rendered, failure=_cluster_failure(rendered, fleet)))
            continue
        ledger = ledgers.get(cluster.name)
        if ledger is None:
            managed = {r.name for r, c in zip(specs, clusters, strict=True) if c is cluster}
            ledger = Ledger.empty(cluster, managed)
        result = place(rendered, cluster, ledger)
        placed.append(result)
        ledgers[cluster.name] = ledger.booked(result.placement) if result.placement else ledger
    return tuple(placed), ledgers


def _cluster_failure(rendered: RenderedSpec, fleet: Fleet) -> PlacementFailure:
    reason = Unplaced.CLUSTER_REQUIRED if rendered.spec.cluster_name is None else Unplaced.CLUSTER_UNKNOWN
    return PlacementFailure(reason, known=tuple(c.name for c in fleet.clusters))


def place(rendered: RenderedSpec, cluster: Cluster, ledger: Ledger) -> Placed:
    """Where GPUStack would put one spec given the ledger so far (manual gpu_ids or its own selection)."""
    spec = rendered.spec
    count = rendered.gpus_per_replica()
    tp, pp = rendered.parallel_size()
    selector = spec.worker_selector or {}
    ids = spec.gpu_selector.gpu_ids if spec.gpu_selector and spec.gpu_selector.gpu_ids else None
    workers = ledger.workers_matching(selector) if selector or not ids else []
    if selector and not workers:
        return Placed(rendered, cluster, ledger, failure=PlacementFailure(Unplaced.WORKER_SELECTOR))
    if ids:
        return _manual(rendered, cluster, ledger, ids, count, tp * pp)
    return _automatic(rendered, cluster, ledger, workers, count)


def _claim(rendered: RenderedSpec, gpus: Sequence[GpuRef]) -> int:
    """Per-GPU booking of claim-based backends (llama.cpp, Custom), as GPUStack would book it."""
    r = rendered
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


def _fraction(rendered: RenderedSpec, gpus: Sequence[GpuRef]) -> float:
    smallest = min(g.total for g in gpus) if gpus else 0
    return engine.gpustack_fraction(rendered.family, rendered.flags, smallest)


def _manual(rendered: RenderedSpec, cluster: Cluster, ledger: Ledger, ids: list[str], count: int,
            parallel: int) -> Placed:
    spec = rendered.spec
    missing = tuple((i, gid) for i, gid in enumerate(ids) if gid not in ledger.gpus)
    if missing:
        return Placed(rendered, cluster, ledger, failure=PlacementFailure(Unplaced.GPU_ID_UNKNOWN, missing=missing))
    refs = [ledger.gpus[gid] for gid in ids]
    if parallel > 1 and count != parallel:
        failure = PlacementFailure(Unplaced.PARALLEL_MISMATCH, count=count, parallel=parallel)
        return Placed(rendered, cluster, ledger, failure=failure)
    needed = count * max(spec.replicas, 1)
    if len(refs) < needed:
        failure = PlacementFailure(Unplaced.TOO_FEW_GPU_IDS, count=count, needed=needed, listed=len(refs))
        return Placed(rendered, cluster, ledger, failure=failure)
    replicas = tuple(tuple(refs[i * count:(i + 1) * count]) for i in range(max(spec.replicas, 1)))
    fraction = _fraction(rendered, refs)
    admission = []
    bookings: dict[str, int] = {}
    for gpus in replicas:
        claim = None if fraction else _claim(rendered, gpus)
        for ref in gpus:
            booking = int(ref.total * fraction) if fraction else claim
            bookings[ref.id] = bookings.get(ref.id, 0) + booking
            booked = ledger.base_allocated[ref.id] + ledger.bookings[ref.id] + booking
            admission.append(AdmissionCheck(ref, ledger.free_fraction(ref), fraction, booking, booked))
    placement = Placement(replicas, manual=True, fraction=fraction, booking=bookings)
    return Placed(rendered, cluster, ledger, placement, admission=tuple(admission))


def _automatic(rendered: RenderedSpec, cluster: Cluster, ledger: Ledger, workers, count: int) -> Placed:
    spec = rendered.spec
    if not workers:
        return Placed(rendered, cluster, ledger, failure=PlacementFailure(Unplaced.NO_READY_WORKER))
    all_gpus = [ledger.gpus[w.gpu_id(g)] for w in workers for g in w.gpus]
    fraction = _fraction(rendered, all_gpus)
    replicas, failure = choose_gpus(ledger, workers, count, fraction, lambda gpus: _claim(rendered, gpus),
                                    spec.placement_strategy, max(spec.replicas, 1))
    if failure:
        return Placed(rendered, cluster, ledger, failure=failure)
    booking = replica_bookings(replicas, fraction, lambda gpus: _claim(rendered, gpus))
    return Placed(rendered, cluster, ledger, Placement(replicas, manual=False, fraction=fraction, booking=booking))
