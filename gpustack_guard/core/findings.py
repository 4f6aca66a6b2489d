"""Findings: the value type every rule returns, and the registry of stable rule ids."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(str, enum.Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    summary: str
    severity: Severity


@dataclass(frozen=True)
class Location:
    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if self.line:
            return f"{self.file}:{self.line}:{self.column or 1}"
        return self.file


@dataclass(frozen=True)
class Finding:
    rule: Rule
    severity: Severity
    location: Location
    message: str
    spec: str | None = None
    fix: str | None = None
    # Numbers behind the message (bytes, tokens) for machine outputs.
    data: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def rule_id(self) -> str:
        return self.rule.id


RULES: dict[str, Rule] = {}


def rule(rule_id: str, name: str, summary: str, severity: Severity = Severity.ERROR) -> Rule:
    """Register a rule id once; ids are stable across releases (SARIF ruleId, docs)."""
    if rule_id in RULES:
        raise ValueError(f"rule {rule_id} registered twice")
    registered = Rule(rule_id, name, summary, severity)
    RULES[rule_id] = registered
    return registered


def finding(r: Rule, location: Location, message: str, *, spec: str | None = None, fix: str | None = None,
            severity: Severity | None = None, **data) -> Finding:
    return Finding(r, severity or r.severity, location, message, spec, fix, data)


# --- the registry: every rule id gsg can emit ------------------------------------------------------------
YAML_SYNTAX = rule("GSG001", "yaml-syntax", "The file is not valid YAML.")
SCHEMA = rule("GSG002", "schema", "A field has the wrong type, a missing required value or an absurd number.")
UNKNOWN_FIELD = rule("GSG003", "unknown-field", "A field GPUStack does not know (GPUStack would silently drop it).")
ENUM_SPELLING = rule("GSG004", "enum-spelling", "An enum value is not spelled exactly as GPUStack expects.")
DUPLICATE_NAME = rule("GSG005", "duplicate-name", "Two specs declare the same model name in one cluster.")
SOURCE_ID = rule("GSG006", "source-id", "The source's id field (repo id, model id or local path) is missing.")
GPU_ID_FORMAT = rule("GSG007", "gpu-id-format", "A gpu_ids entry is not `worker:type:index`.")
CLUSTER = rule("GSG008", "cluster", "cluster_name is missing or names no cluster in the fleet.")
SERVER_MANAGED = rule("GSG009", "server-managed-field", "A field only the server sets appears in a spec.")
DUPLICATE_KEY = rule("GSG010", "duplicate-key", "A YAML mapping repeats a key (YAML parsers keep only the last).")
TEMPLATE = rule("GSG011", "template", "The guard template does not exist, does not parse or uses an undefined variable.")
PINNED_CONFLICT = rule("GSG012", "pinned-conflict", "A backend argument contradicts one the template pins.")
FORBIDDEN_ARG = rule("GSG013", "forbidden-argument", "A backend argument GPUStack rejects (--port, --api-key, --served-model-name).")
DUPLICATE_ARG = rule("GSG014", "duplicate-argument", "A backend argument is given twice with different values.", Severity.WARNING)
BACKEND_UNKNOWN = rule("GSG015", "backend-unknown", "The backend is neither built in nor a known community backend.", Severity.WARNING)
ARG_VALUE = rule("GSG016", "argument-value", "A backend argument's value is not a valid number or choice.")
GPU_ID_UNKNOWN = rule("GSG020", "gpu-id-unknown", "A gpu_ids entry names no GPU in the fleet.")
WORKER_SELECTOR = rule("GSG021", "worker-selector", "worker_selector matches no ready worker of the cluster.")
PARALLEL_SIZE = rule("GSG022", "parallel-size", "The tensor/pipeline-parallel size does not fit the chosen GPUs.")
ADMISSION_FRACTION = rule("GSG023", "admission-free-fraction",
                          "A chosen GPU's free fraction is below gpu_memory_utilization: GPUStack will not schedule it.")
ADMISSION_BOOKING = rule("GSG024", "admission-booking",
                         "GPUStack's bookings (total x gmu per GPU) with existing instances exceed the GPU.")
NO_PLACEMENT = rule("GSG025", "no-placement", "No worker in the cluster can take this deployment.")
MODEL_FACTS = rule("GSG030", "model-facts", "The model's architecture or weight size is unknown: no arithmetic possible.")
NO_KV_MEMORY = rule("GSG031", "no-kv-memory", "Nothing is left for the KV cache after weights, activations and overheads.")
KV_BELOW_MAX_LEN = rule("GSG032", "kv-below-max-model-len",
                        "The KV cache cannot hold one sequence of max_model_len: vLLM refuses to start.")
KV_OVERSUBSCRIBED = rule("GSG033", "kv-oversubscribed",
                         "max_num_seqs x tokens per sequence exceeds the KV capacity: requests queue or get preempted.",
                         Severity.WARNING)
HEADROOM = rule("GSG034", "headroom",
                "The memory left after gpu_memory_utilization cannot hold CUDA graphs, sampler warm-up and CUDA/NCCL context.",
                Severity.WARNING)
GPU_OVERCOMMIT = rule("GSG035", "gpu-overcommit",
                      "The real footprints of all deployments on one GPU, with foreign usage, exceed its memory.")
OFFLOAD_OVER_GPU = rule("GSG036", "llamacpp-offload",
                        "llama.cpp offloaded layers, KV cache and compute buffers exceed the GPU.")
TP_HEADS = rule("GSG037", "tp-heads", "The tensor-parallel size does not divide the attention heads / KV heads.")
MAX_LEN_UNSET = rule("GSG038", "max-model-len-unset",
                     "--max-model-len is not pinned, so the served length depends on engine and GPUStack defaults.",
                     Severity.INFO)
VERSION_UNSET = rule("GSG039", "backend-version-unset",
                     "backend_version is not pinned; gsg assumed a version for version-dependent arithmetic.",
                     Severity.INFO)
MAX_LEN_ABOVE_NATIVE = rule("GSG040", "max-model-len-above-native",
                            "--max-model-len exceeds the model's native context length.", Severity.WARNING)
SERVER_DISAGREES = rule("GSG050", "server-disagrees", "GPUStack's own evaluation disagrees with gsg's.",
                        Severity.WARNING)
SERVER_AGREES = rule("GSG052", "server-evaluation", "GPUStack's own evaluation, shown beside gsg's.",
                     Severity.INFO)
SERVER_UNAVAILABLE = rule("GSG051", "server-evaluation-unavailable", "GPUStack could not evaluate the spec.",
                          Severity.INFO)
