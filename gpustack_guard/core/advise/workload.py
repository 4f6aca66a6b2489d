"""A workload: the traffic one deployment (or a share of one) must carry. Frozen, validated like specs."""

from __future__ import annotations

from typing import Literal, Optional

from gpustack_guard.core.records import Record, field

WORKLOAD_SCHEMA_ID = "https://gpustack-guard.dev/schema/workload-v1.json"
PATTERNS = ("steady", "burst", "batch")
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"


class Percentiles(Record, strict=True):
    """Token counts per request at three percentiles (p50 <= p95 <= p99, checked by `ordering_problem`)."""

    p50: int = field(ge=1, le=10_000_000)
    p95: int = field(ge=1, le=10_000_000)
    p99: int = field(ge=1, le=10_000_000)


class Workload(Record, strict=True):
    """What traffic must be served: request lengths, requests in flight at peak, and its shape."""

    # part of deployment and file names (`--emit-specs`): letters, digits, '.', '_', '-'
    name: str = field(min_length=1, max_length=63, pattern=NAME_PATTERN)
    prompt_tokens: Percentiles
    output_tokens: Percentiles
    concurrency: int = field(ge=1, le=100_000)  # requests in flight at peak
    pattern: Literal["steady", "burst", "batch"] = "steady"
    ttft_slo_s: Optional[float] = field(default=None, gt=0, le=3600)  # time-to-first-token target, seconds

    @property
    def p99_tokens(self) -> int:
        """One request's longest plausible length: p99 prompt + p99 output (what --max-model-len must hold)."""
        return self.prompt_tokens.p99 + self.output_tokens.p99

    @property
    def p95_tokens(self) -> int:
        """The length a KV pool is sized on: most requests in flight are at most this long."""
        return self.prompt_tokens.p95 + self.output_tokens.p95

    @property
    def interactive(self) -> bool:
        """Someone waits for the first token: chunk prefills small so decodes keep flowing (vLLM tuning guide)."""
        return self.pattern != "batch" or self.ttft_slo_s is not None


def ordering_problem(data: dict) -> tuple[tuple, str] | None:
    """(path, message) when a percentile block is not ordered p50 <= p95 <= p99, else None."""
    for key in ("prompt_tokens", "output_tokens"):
        block = data.get(key)
        raw = [block.get(p) for p in ("p50", "p95", "p99")] if isinstance(block, dict) else []
        values = [v for v in raw if isinstance(v, int)]
        if len(values) == 3 and not values[0] <= values[1] <= values[2]:
            return (key,), (f"'{key}' percentiles must grow: p50 {values[0]} <= p95 {values[1]} "
                            f"<= p99 {values[2]}")
    return None


def workload_schema() -> dict:
    """JSON Schema (draft-07) of a workload file, generated from the record as the spec schema is."""
    from pydantic.json_schema import GenerateJsonSchema

    from gpustack_guard.core.spec.schema import _draft07

    schema = _draft07(GenerateJsonSchema().generate(Workload.core()[2], mode="validation"))
    return {"$schema": "http://json-schema.org/draft-07/schema#", "$id": WORKLOAD_SCHEMA_ID,
            "title": "gpustack-guard workload",
            "description": "The traffic a deployment must carry; `gsg advise --workload FILE` turns it into flags.",
            **{k: v for k, v in schema.items() if k not in ("title", "description")}}


def workload_schema_text() -> str:
    import json

    return json.dumps(workload_schema(), indent=2) + "\n"
