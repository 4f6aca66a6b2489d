"""The rule registry. A rule is a function registered for a phase; adding a rule is adding a function.

Phases run in order for every spec: `document` (no fleet needed), `placement` (sets where it lands),
`memory` (arithmetic on that placement); `fleet` rules run once over all specs at the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from gpustack_guard.core.findings import Finding
from gpustack_guard.core.fleet.model import Cluster, Fleet
from gpustack_guard.core.memory.estimate import Estimate
from gpustack_guard.core.fleet.placement import Ledger, Placement
from gpustack_guard.core.render import RenderedSpec

PHASES = ("document", "placement", "memory")


@dataclass
class Evaluation:
    rendered: RenderedSpec
    cluster: Cluster | None = None
    ledger: Ledger | None = None
    placement: Placement | None = None
    estimates: list[Estimate] = field(default_factory=list)
    blocked: bool = False  # an earlier phase failed; later phases skip this spec

    @property
    def estimate(self) -> Estimate | None:
        """The worst replica: a failing verdict first, else the smallest KV pool."""
        if not self.estimates:
            return None
        return min(self.estimates, key=lambda e: (e.verdict == "fits", e.kv_available))


@dataclass
class Context:
    fleet: Fleet | None
    evaluations: list[Evaluation]
    ledgers: dict[str, Ledger] = field(default_factory=dict)


SpecRule = Callable[[Evaluation, Context], Iterable[Finding]]
FleetRule = Callable[[Context], Iterable[Finding]]
SPEC_RULES: dict[str, list[SpecRule]] = {phase: [] for phase in PHASES}
FLEET_RULES: list[FleetRule] = []


def spec_rule(phase: str):
    def register(fn: SpecRule) -> SpecRule:
        SPEC_RULES[phase].append(fn)
        return fn
    return register


def fleet_rule(fn: FleetRule) -> FleetRule:
    FLEET_RULES.append(fn)
    return fn


def load_builtin_rules() -> None:
    """Import the modules whose decorators register gsg's rules (idempotent)."""
    from gpustack_guard.core.rules import document, fleet_level, memory_rules, placement_rules  # noqa: F401
