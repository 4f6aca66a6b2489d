"""Where GPUStack would put each deployment, and what it books there (pure; mirrors its selectors).

GPUStack books `total x gpu_memory_utilization` per GPU for vLLM (x mem_fraction_static for SGLang) and
admits a GPU only when its free fraction is at least that much. `allocated` counts GPUStack's own bookings
only; live `used` memory of foreign processes is invisible to it, so gsg tracks both.

Every value here is immutable: booking a placement or adding a footprint returns a new Ledger, so the
placement stage is an explicit fold over the specs in their apply order.
"""

from __future__ import annotations

import enum
from bisect import bisect_right
from dataclasses import field
from typing import Callable, Iterable, Iterator, Mapping

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.fleet.model import Cluster, GpuRef, Worker, gpu_index
from gpustack_guard.core.values import frozen_value


class Unplaced(enum.Enum):
    """Why a deployment got no placement; the placement rules pick their id from this, never from text."""

    CLUSTER_REQUIRED = "cluster-required"  # no cluster_name and the fleet has several clusters
    CLUSTER_UNKNOWN = "cluster-unknown"  # cluster_name names no cluster of the fleet
    WORKER_SELECTOR = "worker-selector"  # the selector matches no ready worker
    GPU_ID_UNKNOWN = "gpu-id-unknown"  # gpu_ids lists GPUs the cluster does not have
    WORKER_NOT_READY = "worker-not-ready"  # gpu_ids lists GPUs of a worker that is not ready
    PARALLEL_MISMATCH = "parallel-mismatch"  # gpus_per_replica differs from tp x pp
    TOPOLOGY_REFUSED = "topology-refused"  # GPUStack's worker cannot lay the parallel sizes over the workers
    TOO_FEW_GPU_IDS = "too-few-gpu-ids"  # replicas x GPUs per replica exceed the listed gpu_ids
    WORKER_TOO_SMALL = "worker-too-small"  # no eligible worker has enough GPUs for one replica
    NO_READY_WORKER = "no-ready-worker"  # the cluster has no ready worker at all
    NO_FREE_FRACTION = "no-free-fraction"  # no worker has enough GPUs with GPUStack's free fraction
    NO_ROOM_FOR_CLAIM = "no-room-for-claim"  # claim-based backends: no worker has room for the claim


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class PlacementFailure:
    """A structured reason with the numbers the finding prints; fields a reason does not use stay zero."""

    __repr__ = fields_repr

    reason: Unplaced
    replica: int = 0  # 1-based replica that could not be placed (automatic placement)
    count: int = 0  # GPUs per replica
    largest_worker: int = 0  # GPUs of the largest eligible worker
    fraction: float = 0.0  # the free fraction GPUStack requires
    best_fraction: float = 0.0  # the best free fraction on offer
    parallel: int = 0  # tp x pp
    needed: int = 0  # replicas x GPUs per replica
    listed: int = 0  # gpu_ids given
    missing: tuple[tuple[int, str], ...] = ()  # (gpu_ids index, id) of unknown GPUs
    known: tuple[str, ...] = ()  # cluster names of the fleet
    detail: str = ""  # GPUStack's own reason, where it gives one


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class Placement:
    """The GPUs each replica of a spec lands on and what GPUStack books on each."""

    __repr__ = fields_repr

    replicas: tuple[tuple[GpuRef, ...], ...]
    manual: bool
    fraction: float  # the gmu / mem fraction GPUStack checks against (0 = claim-based)
    booking: Mapping[str, int] = field(default_factory=dict)  # GPUStack booking of this spec per GPU id


def replica_bookings(replicas: Iterable[tuple[GpuRef, ...]], fraction: float,
                     claim_of: Callable[[tuple[GpuRef, ...]], int]) -> dict[str, int]:
    """What GPUStack books per GPU id: total x fraction, or the claim for claim-based backends."""
    booking: dict[str, int] = {}
    for gpus in replicas:
        claim = 0 if fraction else claim_of(gpus)  # read only for a claim-based backend
        for ref in gpus:
            booking[ref.id] = booking.get(ref.id, 0) + (int(ref.total * fraction) if fraction else claim)
    return booking


@frozen_value
class ClusterBase:
    """What a cluster holds before any managed spec lands: computed once per cluster, never changed."""

    __repr__ = fields_repr

    cluster: Cluster
    gpus: Mapping[str, GpuRef]
    base_allocated: Mapping[str, int]
    base_used: Mapping[str, int]
    existing: Mapping[str, tuple[tuple[str, int], ...]]  # foreign instances' claims per GPU id
    _selected: dict = field(default_factory=dict, repr=False)  # memo of eligible workers per selector

    @classmethod
    def of(cls, cluster: Cluster, managed_names: set[str]) -> ClusterBase:
        gpus = gpu_index(cluster)
        existing: dict[str, list[tuple[str, int]]] = {gid: [] for gid in gpus}
        managed_claims = dict.fromkeys(gpus, 0)
        other_claims = dict.fromkeys(gpus, 0)
        for instance in cluster.instances:
            worker = next((w for w in cluster.workers if w.name == instance.worker), None)
            if worker is None:
                continue
            for index, claim in instance.claims.items():
                gpu = next((g for g in worker.gpus if g.index == index), None)
                if gpu is None:
                    continue
                gid = worker.gpu_id(gpu)
                if instance.model in managed_names:
                    managed_claims[gid] += claim
                else:
                    other_claims[gid] += claim
                    existing[gid].append((instance.model, claim))
        allocated, used = {}, {}
        for gid, ref in gpus.items():
            memory = ref.gpu.memory
            # Without an instance list the reported `allocated` is all we know of GPUStack's bookings.
            allocated[gid] = other_claims[gid] if cluster.instances else memory.allocated
            used[gid] = max(memory.used - managed_claims[gid], 0)
        return cls(cluster, gpus, allocated, used, {gid: tuple(v) for gid, v in existing.items()})

    def workers_matching(self, selector: dict[str, str]) -> list[Worker]:
        key = tuple(sorted(selector.items()))
        if key not in self._selected:
            self._selected[key] = eligible_workers(self.cluster, selector)
        return self._selected[key]


class Bookings(Mapping[str, int]):
    """GPUStack's bookings per GPU id at one step of the fold, as a persistent map: booking returns a new
    snapshot that shares one append-only history with this one, so each spec's snapshot costs the few GPUs it
    books, not a copy of the cluster (1,000 specs on 500 GPUs copied 12.5 MB of dicts; benchmarks/scale.py).
    A snapshot never changes: what a later step appends is past its own step."""

    __slots__ = ("_steps", "_totals", "_step", "_newest")

    def __init__(self, steps: dict[str, list[int]], totals: dict[str, list[int]], step: int, newest: list[int]):
        self._steps, self._totals = steps, totals  # per GPU id: the steps it was booked at, its total from each
        self._step = step
        self._newest = newest  # one cell shared by the snapshots of a history: its newest step

    @classmethod
    def zero(cls, gpu_ids: Iterable[str]) -> Bookings:
        ids = list(gpu_ids)
        return cls({gid: [0] for gid in ids}, {gid: [0] for gid in ids}, 0, [0])

    def __getitem__(self, gid: str) -> int:
        steps = self._steps[gid]
        if steps[-1] <= self._step:  # the common case: nothing booked on it after this snapshot
            return self._totals[gid][-1]
        return self._totals[gid][bisect_right(steps, self._step) - 1]

    def __iter__(self) -> Iterator[str]:
        return iter(self._steps)

    def __len__(self) -> int:
        return len(self._steps)

    def __repr__(self) -> str:
        return f"Bookings({dict(self)!r})"

    def plus(self, amounts: Mapping[str, int]) -> Bookings:
        """These bookings with `amounts` added (unknown GPU ids raise KeyError, as a dict would)."""
        unknown = [gid for gid in amounts if gid not in self._steps]
        if unknown:
            raise KeyError(unknown[0])  # before anything is appended
        if self._step != self._newest[0]:  # booking from an older snapshot: a history of its own
            return Bookings({gid: [0] for gid in self}, {gid: [value] for gid, value in self.items()}, 0,
                            [0]).plus(amounts)
        step = self._step + 1
        for gid, amount in amounts.items():
            total = self[gid] + amount
            self._steps[gid].append(step)
            self._totals[gid].append(total)
        self._newest[0] = step
        return Bookings(self._steps, self._totals, step, self._newest)


@frozen_value
class Ledger:
    """Per-GPU state of one cluster at one point of the fold: GPUStack's bookings and real footprints so far."""

    __repr__ = fields_repr

    base: ClusterBase
    bookings: Bookings
    footprints: Mapping[str, tuple[tuple[str, int], ...]]  # (spec name, bytes) per GPU id

    @classmethod
    def empty(cls, cluster: Cluster, managed_names: set[str]) -> Ledger:
        base = ClusterBase.of(cluster, managed_names)
        return cls(base, Bookings.zero(base.gpus), {gid: () for gid in base.gpus})

    @property
    def cluster(self) -> Cluster:
        return self.base.cluster

    @property
    def gpus(self) -> Mapping[str, GpuRef]:
        return self.base.gpus

    @property
    def base_allocated(self) -> Mapping[str, int]:
        return self.base.base_allocated

    @property
    def base_used(self) -> Mapping[str, int]:
        return self.base.base_used

    @property
    def existing(self) -> Mapping[str, tuple[tuple[str, int], ...]]:
        return self.base.existing

    def workers_matching(self, selector: dict[str, str]) -> list[Worker]:
        return self.base.workers_matching(selector)

    def allocatable(self, ref: GpuRef) -> int:
        """GPUStack's view: total - its bookings - system reserved (live usage ignored)."""
        return max(ref.total - self.base.base_allocated[ref.id] - self.bookings[ref.id]
                   - ref.worker.system_reserved.vram, 0)

    def free_fraction(self, ref: GpuRef) -> float:
        return self.allocatable(ref) / ref.total

    def occupied_before(self, gid: str) -> int:
        """Memory held before any spec lands: GPUStack bookings or live usage, whichever is larger."""
        return max(self.base.base_allocated[gid], self.base.base_used[gid])

    def booked(self, placement: Placement) -> Ledger:
        return Ledger(self.base, self.bookings.plus(placement.booking), self.footprints)

    def with_footprints(self, entries: Iterable[tuple[str, str, int]]) -> Ledger:
        """The ledger with each (GPU id, spec name, bytes) added, in the order given."""
        footprints = dict(self.footprints)
        for gid, spec_name, amount in entries:
            footprints[gid] = footprints[gid] + ((spec_name, amount),)
        return Ledger(self.base, self.bookings, footprints)


def eligible_workers(cluster: Cluster, selector: dict[str, str] | None):
    return [w for w in cluster.workers
            if w.state == "ready" and all(w.all_labels.get(k) == v for k, v in (selector or {}).items())]


def choose_gpus(ledger: Ledger, workers, count: int, fraction: float, claim_of, strategy: str,
                replicas: int) -> tuple[tuple[tuple[GpuRef, ...], ...], PlacementFailure | None]:
    """Automatic placement: per replica, `count` GPUs on one worker that pass GPUStack's admission.

    `claim_of(gpus)` gives the per-GPU claim for claim-based backends (fraction == 0).
    Returns (replica GPU lists, the failure when not every replica could be placed).
    """
    placed: list[tuple[GpuRef, ...]] = []
    taken: set[str] = set()
    failure = None
    for _ in range(replicas):
        options = []
        for worker in workers:
            refs = [ledger.gpus[worker.gpu_id(g)] for g in worker.gpus if worker.gpu_id(g) not in taken]
            if fraction > 0:
                refs = [r for r in refs if ledger.free_fraction(r) >= fraction]
            refs.sort(key=lambda r: ledger.allocatable(r), reverse=True)
            if len(refs) < count:
                continue
            chosen = tuple(refs[:count])
            if fraction == 0:
                claim = claim_of(chosen)
                if any(claim > ledger.allocatable(r) for r in chosen):
                    continue
            options.append((sum(ledger.allocatable(r) for r in chosen), worker.name, chosen))
        if not options:
            best = max((ledger.free_fraction(ledger.gpus[w.gpu_id(g)]) for w in workers for g in w.gpus),
                       default=0.0)
            most = max((len(w.gpus) for w in workers), default=0)
            if most < count:
                reason = Unplaced.WORKER_TOO_SMALL
            elif fraction > 0:
                reason = Unplaced.NO_FREE_FRACTION
            else:
                reason = Unplaced.NO_ROOM_FOR_CLAIM
            failure = PlacementFailure(reason, replica=len(placed) + 1, count=count, largest_worker=most,
                                       fraction=fraction, best_fraction=best)
            break
        options.sort(key=lambda o: (o[0], o[1]), reverse=(strategy != "binpack"))
        chosen = options[0][2]
        placed.append(chosen)
        taken.update(r.id for r in chosen)
    return tuple(placed), failure
