"""The placement stage: each spec's cluster, GPUs and GPUStack bookings, as a fold over the specs in apply
order (lower waves first, then file order), since every booking changes what the next spec is admitted to."""

from __future__ import annotations

from typing import Mapping, Sequence

from gpustack_guard.core.deploy import injection as I
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
    clusters = _clusters_of(specs, fleet)
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


def _clusters_of(specs: Sequence[RenderedSpec], fleet: Fleet) -> list[Cluster | None]:
    """Each spec's cluster, looked up once per cluster name: Fleet.cluster scans the clusters, and 10,000 specs
    name a few (~1.3 -> ~0.3 us a spec; docs/performance.md, fourteenth round)."""
    found: dict[str | None, Cluster | None] = {}
    clusters = []
    for r in specs:
        name = r.spec.cluster_name
        if name not in found:
            found[name] = fleet.cluster(name)
        clusters.append(found[name])
    return clusters


def _cluster_failure(rendered: RenderedSpec, fleet: Fleet) -> PlacementFailure:
    reason = Unplaced.CLUSTER_REQUIRED if rendered.spec.cluster_name is None else Unplaced.CLUSTER_UNKNOWN
    return PlacementFailure(reason, known=tuple(c.name for c in fleet.clusters))


def place(rendered: RenderedSpec, cluster: Cluster, ledger: Ledger) -> Placed:
    """Where GPUStack would put one spec given the ledger so far (manual gpu_ids or its own selection)."""
    spec = rendered.spec
    selector = spec.worker_selector or {}
    ids = spec.gpu_selector.gpu_ids if spec.gpu_selector and spec.gpu_selector.gpu_ids else None
    if spec.replicas == 0:
        return _parked(rendered, cluster, ledger, ids or [])
    workers = ledger.workers_matching(selector) if selector or not ids else []
    if selector and not workers:
        return Placed(rendered, cluster, ledger, failure=PlacementFailure(Unplaced.WORKER_SELECTOR))
    if ids:
        if selector:  # GPUStack filters candidates by both: a listed GPU on an excluded worker is never chosen
            allowed = {w.name for w in workers}
            excluded = tuple((i, gid) for i, gid in enumerate(ids)
                             if gid in ledger.gpus and ledger.gpus[gid].worker.name not in allowed)
            if excluded:
                return Placed(rendered, cluster, ledger,
                              failure=PlacementFailure(Unplaced.WORKER_SELECTOR, missing=excluded))
        return _manual(rendered, cluster, ledger, ids)
    return _automatic(rendered, cluster, ledger, workers, rendered.gpus_per_replica())


def _parked(rendered: RenderedSpec, cluster: Cluster, ledger: Ledger, ids: list[str]) -> Placed:
    """replicas 0: GPUStack creates no instance, so nothing is booked; only unknown gpu_ids are worth saying."""
    missing = tuple((i, gid) for i, gid in enumerate(ids) if gid not in ledger.gpus)
    if missing:
        return Placed(rendered, cluster, ledger, failure=PlacementFailure(Unplaced.GPU_ID_UNKNOWN, missing=missing))
    return Placed(rendered, cluster, ledger, parked=True)


def _injections(rendered: RenderedSpec, replicas, fraction_of=None) -> tuple[I.Injection, ...]:
    """What the worker adds per replica, from that replica's GPUs per worker (the leader first)."""
    spec, facts = rendered.spec, rendered.facts
    result = []
    for gpus in replicas:
        fraction = fraction_of(gpus) if fraction_of is not None else None
        # the kept flag map, not the copy `flags` hands out: injected_arguments only reads it (once a spec)
        result.append(I.injected_arguments(
            rendered.family, rendered._flags, I.per_worker([g.id for g in gpus]), name=spec.name,
            version=spec.backend_version, image_name=spec.image_name, env=rendered.env,
            native_max_len=facts.max_position_embeddings if facts else None, fraction=fraction))
    return tuple(result)


def replica_injection(rendered: RenderedSpec, gpus: Sequence[GpuRef]) -> I.Injection:
    """What the worker adds for one replica on these GPUs (leader first), SGLang's with the fraction GPUStack books
    on them (it depends on the parallel size the worker adds)."""
    added = _injections(rendered, [gpus])[0]
    if rendered.family != "sglang":
        return added
    fraction = _fraction(rendered, gpus, rendered.flags | added.flags())
    return _injections(rendered, [gpus], lambda _gpus: fraction)[0]


def _claim(rendered: RenderedSpec, gpus: Sequence[GpuRef]) -> int:
    """Per-GPU booking of claim-based backends (llama.cpp, Custom), as GPUStack would book it."""
    r = rendered
    if r.facts is None:
        return 0
    try:
        if r.family == "llamacpp":
            # GPUStack's scheduler books an unset -c at gguf-parser's default, not at the engine's own
            est = engine.estimate("llamacpp", r.facts, [(g.total, g.gpu.name) for g in gpus], r.flags,
                                  r.spec.backend_version, r.spec.guard.policy, booking=True)
            return est.requested
        return engine.gpustack_weight_estimate(r.facts) // max(len(gpus), 1)
    except ValueError:
        return 0  # malformed flags: the memory rules report them with their line (GSG016)


def _fraction(rendered: RenderedSpec, gpus: Sequence[GpuRef], flags: dict | None = None) -> float:
    """The fraction GPUStack books; SGLang's depends on the parallel size the worker will run (flags)."""
    smallest = min([g.total for g in gpus]) if gpus else 0  # a list: no generator to resume (~1 us a spec)
    return engine.gpustack_fraction(rendered.family, rendered.flags if flags is None else flags, smallest)


def _skip_count_check(rendered: RenderedSpec) -> bool:
    value = rendered.env.get("GPUSTACK_SKIP_GPU_COUNT_CHECK")  # GPUStack reads the env it is sent
    return value is not None and str(value).strip().lower() in I.SKIP_VALUES


def _manual(rendered: RenderedSpec, cluster: Cluster, ledger: Ledger, ids: list[str]) -> Placed:
    spec = rendered.spec
    by_id = ledger.gpus  # a property (ledger -> base): read once a spec, not once per listed id and GPU
    if not all(gid in by_id for gid in ids):
        missing = tuple((i, gid) for i, gid in enumerate(ids) if gid not in by_id)
        return Placed(rendered, cluster, ledger, failure=PlacementFailure(Unplaced.GPU_ID_UNKNOWN, missing=missing))
    # GPUStack's StatusFilter keeps ready workers only, after matching gpu_ids: a listed GPU of a worker that is
    # not_ready, unreachable or in maintenance is never chosen, and its memory must not pass as room
    down = tuple((i, gid) for i, gid in enumerate(ids) if by_id[gid].worker.state != "ready")
    if down:
        return Placed(rendered, cluster, ledger, failure=PlacementFailure(Unplaced.WORKER_NOT_READY, missing=down))
    tp, pp = rendered.parallel_size()
    explicit = spec.gpu_selector.gpus_per_replica if spec.gpu_selector else None
    skip = _skip_count_check(rendered)
    count = I.gpus_per_replica(len(ids), spec.replicas, tp * pp, explicit, skip)
    if tp * pp > 1 and count != tp * pp and not skip:
        failure = PlacementFailure(Unplaced.PARALLEL_MISMATCH, count=count, parallel=tp * pp)
        return Placed(rendered, cluster, ledger, failure=failure)
    assigned = I.assign_replicas(ids, count, spec.replicas) if count else None
    if assigned is None:
        failure = PlacementFailure(Unplaced.TOO_FEW_GPU_IDS, count=max(count, tp * pp), listed=len(ids),
                                   needed=max(count, tp * pp) * spec.replicas)
        return Placed(rendered, cluster, ledger, failure=failure)
    replicas, unused, refs = _chosen(ids, assigned, by_id)
    first = _injections(rendered, replicas[:1])[0]
    if first.refusal:
        failure = PlacementFailure(Unplaced.TOPOLOGY_REFUSED, detail=first.refusal)
        return Placed(rendered, cluster, ledger, failure=failure)
    fraction = _fraction(rendered, refs, rendered._flags | first.flags())  # `|` makes the new map
    # only SGLang's arguments carry the fraction; one replica's layout is every replica's for vLLM
    injections = _injections(rendered, replicas, lambda gpus: fraction) if rendered.family == "sglang" \
        or len(replicas) > 1 else (first,)
    admission = []
    bookings: dict[str, int] = {}
    for gpus in replicas:
        claim = 0 if fraction else _claim(rendered, gpus)  # read only for a claim-based backend
        for ref in gpus:
            booking = int(ref.total * fraction) if fraction else claim
            bookings[ref.id] = bookings.get(ref.id, 0) + booking
            booked = ledger.base_allocated[ref.id] + ledger.bookings[ref.id] + booking
            admission.append(AdmissionCheck(ref, ledger.free_fraction(ref), fraction, booking, booked))
    placement = Placement(replicas, manual=True, fraction=fraction, booking=bookings)
    return Placed(rendered, cluster, ledger, placement, admission=tuple(admission), injections=injections,
                  unused_gpu_ids=unused)


def _chosen(ids: list[str], assigned: list[list[str]], by_id: Mapping[str, GpuRef]
            ) -> tuple[tuple[tuple[GpuRef, ...], ...], tuple[str, ...], list[GpuRef]]:
    """Each replica's GPUs, the listed ids no replica uses, and every chosen GPU in replica order."""
    if len(ids) == 1:  # one id listed (most specs): one replica takes it, as assign_replicas leaves no other way
        ref = by_id[ids[0]]
        return ((ref,),), (), [ref]
    replicas = tuple(tuple(by_id[gid] for gid in chosen) for chosen in assigned)
    used = {gid for chosen in assigned for gid in chosen}
    unused = tuple(gid for gid in ids if gid not in used)
    return replicas, unused, [g for gpus in replicas for g in gpus]


def _automatic(rendered: RenderedSpec, cluster: Cluster, ledger: Ledger, workers, count: int) -> Placed:
    spec = rendered.spec
    if not workers:
        return Placed(rendered, cluster, ledger, failure=PlacementFailure(Unplaced.NO_READY_WORKER))
    all_gpus = [ledger.gpus[w.gpu_id(g)] for w in workers for g in w.gpus]
    fraction = _fraction(rendered, all_gpus)
    replicas, failure = choose_gpus(ledger, workers, count, fraction, lambda gpus: _claim(rendered, gpus),
                                    spec.placement_strategy, spec.replicas)
    if failure:
        return Placed(rendered, cluster, ledger, failure=failure)
    booking = replica_bookings(replicas, fraction, lambda gpus: _claim(rendered, gpus))
    return Placed(rendered, cluster, ledger, Placement(replicas, manual=False, fraction=fraction, booking=booking),
                  injections=_injections(rendered, replicas, lambda gpus: fraction))
