"""gsg's ownership marker in a GPUStack model's `meta` (it persists through create and sparse PUT), and who owns
a live model (pure).

A marker names the tool, the project (the spec tree that declared the model, like an ApplySet id), the spec path
relative to that project's root, and a digest of the desired document. Markers written before projects existed
carry only a path relative to whatever working directory apply ran in: they are *legacy* and prove nothing about
which repository wrote them, so prune never deletes them and plan/apply touch them only when claimed.
"""

from __future__ import annotations

import hashlib
import json

from gpustack_guard import __version__
from gpustack_guard.core.dataclass_repr import fields_repr

# re-exported: they live apart so that validate, which reads gsg.yaml, does not build this module's classes
from gpustack_guard.core.project_identity import PROJECT_NAME as PROJECT_NAME
from gpustack_guard.core.project_identity import PROJECT_NAME_RULE as PROJECT_NAME_RULE
from gpustack_guard.core.project_identity import Identity as Identity
from gpustack_guard.core.values import frozen_value

MANAGED_BY = "gsg.dev/managed-by"
PROJECT = "gsg.dev/project"
SPEC_FILE = "gsg.dev/spec"
SPEC_DIGEST = "gsg.dev/spec-digest"
# Set by the update that needs a restart, cleared once the restart went through: a run stopped between the two
# (a killed server, a lost answer) leaves it, and the next plan restarts the model instead of forgetting it.
RESTART_PENDING = "gsg.dev/restart-pending"
TOOL = "gsg"

# Who owns a live model.
UNMANAGED = "unmanaged"  # no marker, or another tool's
LEGACY = "legacy"  # gsg's marker without a project (written before projects existed)
PROJECT_OWNED = "project"


@frozen_value(eq=True)
class Owner:
    """Who owns a live deployment: unmanaged, a legacy gsg one, or a project's."""

    __repr__ = fields_repr

    kind: str  # UNMANAGED | LEGACY | PROJECT_OWNED
    project: str | None = None
    spec_file: str | None = None
    managed_by: str | None = None  # the raw managed-by value (another tool's name for UNMANAGED)

    def describe(self) -> str:
        if self.kind == PROJECT_OWNED:
            return f"gsg project '{self.project}'"
        if self.kind == LEGACY:
            return "gsg, legacy marker without a project" + (f" (spec {self.spec_file})" if self.spec_file else "")
        return f"'{self.managed_by}'" if self.managed_by else "not managed by gsg"


def owner(model: dict) -> Owner:
    meta = model.get("meta") or {}
    managed_by = meta.get(MANAGED_BY)
    managed_by = str(managed_by) if managed_by else None
    if not managed_by or managed_by.split("/")[0] != TOOL:
        return Owner(UNMANAGED, managed_by=managed_by)
    spec = meta.get(SPEC_FILE)
    spec_file = str(spec) if spec else None
    project = meta.get(PROJECT)
    if isinstance(project, str) and project:
        return Owner(PROJECT_OWNED, project, spec_file, managed_by)
    return Owner(LEGACY, None, spec_file, managed_by)


def marker(spec_file: str, document: dict, project: str | None) -> dict[str, str]:
    """The marker apply writes. Without a project identity it is a legacy (path-only) marker, as before."""
    found = {MANAGED_BY: f"{TOOL}/{__version__}", SPEC_FILE: spec_file, SPEC_DIGEST: digest(document)}
    if project:
        found[PROJECT] = project
    return found


def digest(document: dict) -> str:
    """A stable digest of a document (key order does not matter). The marker's digest covers the masked desired
    document, so nothing derived from a secret is stored in GPUStack's meta."""
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()[:32]


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class Claims:
    """What a run may touch beyond its own project's models: explicit, per run."""

    __repr__ = fields_repr

    project: str | None  # None: no identity (legacy mode: path-only markers count as ours, prune is refused)
    adopt: bool = False  # unmanaged models of a declared name
    claim_legacy: bool = False  # legacy-marked models of a declared name
    take_over_from: frozenset[str] = frozenset()  # projects whose models of a declared name may be taken

    def may_manage(self, found: Owner, *, adopt: bool = False) -> tuple[bool, str]:
        """Whether a live model of a name our specs declare is ours to change, and why not. `adopt` is the spec's
        own guard.adopt."""
        if found.kind == UNMANAGED:
            if self.adopt or adopt:
                return True, ""
            why = f"managed by {found.describe()}" if found.managed_by else "not managed by gsg"
            return False, (f"a live model of this name is {why}; adopt it with `gsg export` (guard.adopt) or "
                           "`gsg apply --adopt`")
        if found.kind == LEGACY:
            if self.project is None or self.claim_legacy:
                return True, ""
            where = f", recorded spec {found.spec_file}" if found.spec_file else ""
            return False, (f"legacy owned (gsg marker without a project{where}); record project "
                           f"'{self.project}' in its marker with `gsg apply --claim-legacy`")
        if found.project == self.project or found.project in self.take_over_from:
            return True, ""
        ours = f"project '{self.project}'" if self.project else "this run (no project identity)"
        hint = (f"; move it to this project with `--take-over-from {found.project}`" if self.project else
                "; declare a project (gsg.yaml `project:` or --project) to manage it")
        return False, f"owned by gsg project '{found.project}', not {ours}{hint}"

    def takes_ownership(self, found: Owner) -> bool:
        """Whether managing this model rewrites who owns it (adopt, claim or take-over), even with no field diff."""
        if found.kind == UNMANAGED:
            return True
        if found.kind == LEGACY:
            return self.project is not None
        return found.project != self.project
