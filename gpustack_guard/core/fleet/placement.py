"""Where GPUStack would put each deployment, and what it books there (pure; mirrors its selectors).

GPUStack books `total x gpu_memory_utilization` per GPU for vLLM (x mem_fraction_static for SGLang) and
admits a GPU only when its free fraction is at least that much. `allocated` counts GPUStack's own bookings
only; live `used` memory of foreign processes is invisible to it, so gsg tracks both.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpustack_guard.core.fleet.model import Cluster, GpuRef, gpu_index


@dataclass
class Placement:
    replicas: list[list[GpuRef]]
    manual: bool
    fraction: float  # the gmu / mem fraction GPUStack checks against (0 = claim-based)
    booking: dict[str, int] = field(default_factory=dict)  # GPUStack booking of this spec per GPU id


class Ledger:
    """Per-GPU state of one cluster while specs are placed in order."""

    def __init__(self, cluster: Cluster, managed_names: set[str]):
        self.cluster = cluster
        self.gpus = gpu_index(cluster)
        self.base_allocated: dict[str, int] = {}
        self.base_used: dict[str, int] = {}
        self.existing: dict[str, list[tuple[str, int]]] = {gid: [] for gid in self.gpus}
        self.bookings: dict[str, int] = {gid: 0 for gid in self.gpus}
        self.footprints: dict[str, list[tuple[str, int]]] = {gid: [] for gid in self.gpus}
        self._selected: dict[tuple, list] = {}
        managed_claims: dict[str, int] = {gid: 0 for gid in self.gpus}
        other_claims: dict[str, int] = {gid: 0 for gid in self.gpus}
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
                    self.existing[gid].append((instance.model, claim))
        for gid, ref in self.gpus.items():
            memory = ref.gpu.memory
            # Without an instance list the reported `allocated` is all we know of GPUStack's bookings.
            allocated = other_claims[gid] if cluster.instances else memory.allocated
            self.base_allocated[gid] = allocated
            self.base_used[gid] = max(memory.used - managed_claims[gid], 0)

    def workers_matching(self, selector: dict[str, str]):
        key = tuple(sorted(selector.items()))
        if key not in self._selected:
            self._selected[key] = eligible_workers(self.cluster, selector)
        return self._selected[key]

    def allocatable(self, ref: GpuRef) -> int:
        """GPUStack's view: total - its bookings - system reserved (live usage ignored)."""
        return max(ref.total - self.base_allocated[ref.id] - self.bookings[ref.id]
                   - ref.worker.system_reserved.vram, 0)

    def free_fraction(self, ref: GpuRef) -> float:
        return self.allocatable(ref) / ref.total

    def occupied_before(self, gid: str) -> int:
        """Memory held before any spec lands: GPUStack bookings or live usage, whichever is larger."""
        return max(self.base_allocated[gid], self.base_used[gid])

    def book(self, placement: Placement) -> None:
        for gid, amount in placement.booking.items():
            self.bookings[gid] += amount

    def add_footprint(self, gid: str, spec_name: str, amount: int) -> None:
        self.footprints[gid].append((spec_name, amount))


def eligible_workers(cluster: Cluster, selector: dict[str, str] | None):
    return [w for w in cluster.workers
            if w.state == "ready" and all(w.all_labels.get(k) == v for k, v in (selector or {}).items())]


def choose_gpus(ledger: Ledger, workers, count: int, fraction: float, claim_of, strategy: str,
                replicas: int) -> tuple[list[list[GpuRef]], str | None]:
    """Automatic placement: per replica, `count` GPUs on one worker that pass GPUStack's admission.

    `claim_of(gpus)` gives the per-GPU claim for claim-based backends (fraction == 0).
    Returns (replica GPU lists, reason when not every replica could be placed).
    """
    placed: list[list[GpuRef]] = []
    taken: set[str] = set()
    reason = None
    for _ in range(replicas):
        options = []
        for worker in workers:
            refs = [ledger.gpus[worker.gpu_id(g)] for g in worker.gpus if worker.gpu_id(g) not in taken]
            if fraction > 0:
                refs = [r for r in refs if ledger.free_fraction(r) >= fraction]
            refs.sort(key=lambda r: ledger.allocatable(r), reverse=True)
            if len(refs) < count:
                continue
            chosen = refs[:count]
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
                reason = f"needs {count} GPUs on one worker; the largest eligible worker has {most}"
            elif fraction > 0:
                reason = (f"needs {count} GPU(s) with a free fraction of at least {fraction:.2f}; "
                          f"the best GPU has {best:.2f}")
            else:
                reason = f"no worker has {count} GPU(s) with room for the claim"
            break
        options.sort(key=lambda o: (o[0], o[1]), reverse=(strategy != "binpack"))
        chosen = options[0][2]
        placed.append(chosen)
        taken.update(r.id for r in chosen)
    return placed, reason
