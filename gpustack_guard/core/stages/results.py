"""The immutable results of the placement and estimation stages: all a rule may read."""

from __future__ import annotations

from dataclasses import field
from functools import cached_property
from typing import TYPE_CHECKING, Mapping

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.deploy.injection import Injection
from gpustack_guard.core.findings import Location
from gpustack_guard.core.fleet.model import Cluster, Fleet, GpuRef
from gpustack_guard.core.fleet.placement import Ledger, Placement, PlacementFailure
from gpustack_guard.core.memory.estimate import Estimate, NoEstimate
from gpustack_guard.core.values import frozen_value

if TYPE_CHECKING:
    from gpustack_guard.core.render import RenderedSpec


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class AdmissionCheck:
    """GPUStack's admission of one chosen GPU for a manual placement, as the ledger stood before this spec."""

    __repr__ = fields_repr

    gpu: GpuRef
    free_fraction: float  # GPUStack's free fraction of the GPU
    fraction: float  # the fraction this deployment books (0 = claim-based)
    booking: int  # what this replica books on the GPU
    booked: int  # GPUStack's bookings on the GPU with this one


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class Placed:
    """One rendered spec after the placement stage."""

    __repr__ = fields_repr

    rendered: RenderedSpec
    cluster: Cluster | None = None
    ledger: Ledger | None = None  # the cluster's ledger this spec was placed against (before its own booking)
    placement: Placement | None = None
    failure: PlacementFailure | None = None
    admission: tuple[AdmissionCheck, ...] = ()
    injections: tuple[Injection, ...] = ()  # per replica: what GPUStack's worker adds to the command line
    unused_gpu_ids: tuple[str, ...] = ()  # listed gpu_ids no replica uses (GPUStack takes a subset)
    parked: bool = False  # replicas 0: nothing booked, nothing estimated

    def flags(self, replica: int = 0) -> dict[str, str | None]:
        """The arguments the engine runs with: the spec's and template's, plus the worker's parallel sizes."""
        if replica < len(self.injections):  # `|` makes the new dict: the kept flag map, not a copy of it, on its left
            return self.rendered._flags | self.injections[replica].flags()
        return self.rendered.flags


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class EstimationFailure:
    """Why a placed spec has no estimate, with the message and its location."""

    __repr__ = fields_repr

    reason: NoEstimate
    message: str
    location: Location
    warning: bool = False  # a value the engine takes that gsg cannot size: a warning, not a refusal


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class Evaluation:
    """One spec after the estimation stage: its placement and one estimate per replica."""

    __repr__ = fields_repr

    placed: Placed
    estimates: tuple[Estimate, ...] = ()
    failure: EstimationFailure | None = None

    def __post_init__(self) -> None:
        # The cached properties below, stored as the instance's attributes at once: a cached_property's first
        # read takes its lock (Python 3.11) and costs ~1.4 us, the stored values ~0.1 (10,000 specs: ~40,000
        # first reads, ~55 -> ~20 ms; docs/performance.md, twelfth round). The same values the properties give:
        # the placed spec's own, and the one estimate of a single replica (min of one).
        values, placed = self.__dict__, self.placed
        values["rendered"], values["cluster"], values["placement"] = placed.rendered, placed.cluster, placed.placement
        if len(self.estimates) < 2:
            values["estimate"] = self.estimates[0] if self.estimates else None

    # cached: every per-spec rule reads these (10,000 specs: ~200,000 reads); after the first, a plain attribute
    @cached_property
    def rendered(self) -> RenderedSpec:
        return self.placed.rendered

    @cached_property
    def cluster(self) -> Cluster | None:
        return self.placed.cluster

    @cached_property
    def placement(self) -> Placement | None:
        return self.placed.placement

    @property
    def flags(self) -> dict[str, str | None]:
        return self.placed.flags()

    @cached_property  # every memory rule asks; the value never changes
    def estimate(self) -> Estimate | None:
        """The worst replica: a failing verdict first, else the smallest KV pool."""
        if not self.estimates:
            return None
        return min(self.estimates, key=lambda e: (e.verdict == "fits", e.kv_available))


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class Results:
    """Everything the stages found, for the rules: the fleet, every spec in apply order, the final ledgers."""

    __repr__ = fields_repr

    fleet: Fleet | None
    evaluations: tuple[Evaluation, ...]
    ledgers: Mapping[str, Ledger] = field(default_factory=dict)  # by cluster name, with every footprint
