"""The project a run speaks for and how a project may be named (pure).

Apart from core.ownership (which re-exports these) because reading `gsg.yaml` needs only this: every `gsg
validate` finds its project, while the ownership markers, owners and claims serve plan/apply/drift, and their
classes cost ~1 ms of start-up to build (issue 34, docs/performance.md "Eleventh round").
"""

from __future__ import annotations

import re

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.values import frozen_value

PROJECT_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,61}[A-Za-z0-9])?\Z")
PROJECT_NAME_RULE = "1-63 letters, digits, '.', '_' or '-', starting and ending with a letter or digit"


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class Identity:
    """The project a run speaks for. `root` is the folder spec paths are recorded relative to (absolute)."""

    __repr__ = fields_repr

    name: str
    root: str
    declared_in: str  # "gsg.yaml at <path>", "--project", "GSG_PROJECT": said in messages
