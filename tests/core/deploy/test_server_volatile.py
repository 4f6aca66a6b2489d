"""What GPUStack changes on a model by itself never makes a plan stale (core/deploy/plan.SERVER_VOLATILE)."""

from __future__ import annotations

import pytest

from gpustack_guard.core.deploy.plan import SERVER_VOLATILE, live_digest
from gpustack_guard.core.spec.model import SERVER_MANAGED_FIELDS

# ModelPublic's fields that ModelUpdate lacks (GPUStack 2.3.0's OpenAPI document) and that name the object rather
# than describe its state: fixed for the model's life, or its ownership, which the applier compares on its own
IDENTITY_AND_OWNERSHIP = {"id", "created_at", "deleted_at", "meta", "cluster_id", "owner_principal_id",
                          "access_policy", "revision_history_limit"}


def test_every_status_field_the_server_writes_is_volatile():
    assert SERVER_MANAGED_FIELDS - IDENTITY_AND_OWNERSHIP <= SERVER_VOLATILE
    assert "has_stale_lora_instances" in SERVER_VOLATILE  # the field a real 2.3.0 answered differently


@pytest.mark.parametrize("field, before, after", [
    ("has_stale_lora_instances", None, False), ("has_stale_lora_instances", False, True),
    ("state", "running", "error"), ("ready_replicas", 1, 0),
])
def test_a_status_change_keeps_the_digest(field, before, after):
    model = {"id": 3, "name": "llama-8b", "replicas": 1, "backend_parameters": ["--max-model-len=8192"]}
    assert live_digest({**model, field: before}) == live_digest({**model, field: after}) == live_digest(model)


def test_a_field_the_spec_sets_still_changes_the_digest():
    model = {"id": 3, "name": "llama-8b", "replicas": 1}
    assert live_digest(model) != live_digest({**model, "replicas": 2})
