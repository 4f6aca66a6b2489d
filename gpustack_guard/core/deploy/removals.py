"""What a context's overlay takes out of the specs (pure; spec loading fills it, plan and drift read it). Its own
module: spec loading imports it, and validate must not pay for the planner at start-up."""

from __future__ import annotations

from dataclasses import field
from typing import Mapping

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.values import frozen_value

# An overlay document's directive, spelled as kustomize's strategic-merge patches spell theirs.
DIRECTIVE = "$patch"
DELETE, EXCLUDE = "delete", "exclude"
DIRECTIVES = (DELETE, EXCLUDE)

@frozen_value  # identity equality: cheaper to define, never compared or hashed
class OverlayRemovals:
    """What one context's overlay takes out of the specs, each name with the overlay line that says so:
    `excluded` (`$patch: exclude`) is not managed in this context at all: not planned, not applied, never pruned;
    `deleted` (`$patch: delete`) must be gone there: plan deletes the live model when this project owns it,
    with or without --prune."""

    __repr__ = fields_repr

    overlay: str | None = None
    excluded: Mapping[str, str] = field(default_factory=dict)
    deleted: Mapping[str, str] = field(default_factory=dict)

    def managed(self, models: list[dict]) -> list[dict]:
        """The live models this context manages: an excluded name is left out everywhere."""
        return [m for m in models if m.get("name") not in self.excluded] if self.excluded else models


NO_REMOVALS = OverlayRemovals()
