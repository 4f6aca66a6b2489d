"""JSON Schema of a spec document, draft-07 (what YAML language servers accept), from the pydantic models."""

from __future__ import annotations

import json
from typing import Any

from gpustack_guard.spec.model import DeploymentSpec

SCHEMA_ID = "https://gpustack-guard.dev/schema/spec-v1.json"


def _draft07(node: Any) -> Any:
    """Rewrite pydantic's 2020-12 output: $defs -> definitions and their $refs; drop what draft-07 lacks."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "$defs":
                out["definitions"] = _draft07(value)
            elif key == "$ref" and isinstance(value, str):
                out[key] = value.replace("#/$defs/", "#/definitions/")
            elif key in ("discriminator",):
                continue
            else:
                out[key] = _draft07(value)
        return out
    if isinstance(node, list):
        return [_draft07(v) for v in node]
    return node


def spec_schema() -> dict:
    schema = _draft07(DeploymentSpec.model_json_schema(mode="validation"))
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "$id": SCHEMA_ID,
              "title": "gpustack-guard spec",
              "description": "A GPUStack 2.x deployment document (ModelCreate fields) plus gsg's guard block.",
              **{k: v for k, v in schema.items() if k not in ("title", "description")}}
    return schema


def schema_text() -> str:
    return json.dumps(spec_schema(), indent=2, sort_keys=False) + "\n"
