"""gsg's ownership marker in a GPUStack model's `meta` (it persists through create and sparse PUT)."""

from __future__ import annotations

import hashlib
import json

from gpustack_guard import __version__

MANAGED_BY = "gsg.dev/managed-by"
SPEC_FILE = "gsg.dev/spec"
SPEC_DIGEST = "gsg.dev/spec-digest"
TOOL = "gsg"


def marker(spec_file: str, document: dict) -> dict[str, str]:
    return {MANAGED_BY: f"{TOOL}/{__version__}", SPEC_FILE: spec_file, SPEC_DIGEST: digest(document)}


def digest(document: dict) -> str:
    """A stable digest of a document (key order does not matter). The marker's digest covers the masked desired
    document, so nothing derived from a secret is stored in GPUStack's meta."""
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()[:32]


def owner_of(model: dict) -> str | None:
    """'gsg/<version>' for models gsg manages, another tool's marker if any, else None."""
    meta = model.get("meta") or {}
    value = meta.get(MANAGED_BY)
    return str(value) if value else None


def owned_by_gsg(model: dict) -> bool:
    owner = owner_of(model)
    return bool(owner) and owner.split("/")[0] == TOOL
