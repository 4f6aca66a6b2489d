"""The records of a spec document (validated by pydantic-core, see gpustack_guard.core.records).

The GPUStack part mirrors `ModelCreate` of GPUStack 2.3.0 (field names and enum values exactly), minus the
fields the server manages. Unlike GPUStack, unknown fields are errors (`extra="forbid"`) and values are not
coerced (`strict`): `replicas: "2"` or an unquoted env number is reported instead of silently changed.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from gpustack_guard.core.records import Record, field
from gpustack_guard.core.units import MAX_DEVICE_BYTES, MAX_MODEL_BYTES, size_or_none

SOURCES = ("huggingface", "model_scope", "local_path")
CATEGORIES = ("llm", "embedding", "image", "reranker", "speech_to_text", "text_to_speech", "unknown")
PLACEMENT_STRATEGIES = ("spread", "binpack")
BUILTIN_BACKENDS = ("vLLM", "VoxBox", "MindIE", "SGLang", "Custom")
# Community backends GPUStack 2.x ships in assets/community-inference-backends.yaml (names we know of).
COMMUNITY_BACKENDS = ("llama.cpp", "TensorRT-LLM", "Ollama", "LMDeploy")
SOURCE_ID_FIELD = {"huggingface": "huggingface_repo_id", "model_scope": "model_scope_model_id",
                   "local_path": "local_path"}
# Fields GPUStack's own importer refuses as server-managed, plus read-only fields of ModelPublic.
SERVER_MANAGED_FIELDS = frozenset({
    "id", "created_at", "updated_at", "deleted_at", "ready_replicas", "meta", "cluster_id",
    "owner_principal_id", "access_policy", "revision_history_limit", "state", "state_message", "stale",
    "degradations", "restarting_since", "role_status", "has_stale_lora_instances",
})
MAX_REPLICAS = 1024  # above this a number is a typo, not a deployment

Source = Literal["huggingface", "model_scope", "local_path"]
Category = Literal["llm", "embedding", "image", "reranker", "speech_to_text", "text_to_speech", "unknown"]
PlacementStrategy = Literal["spread", "binpack"]


class _Strict(Record, strict=True):
    """Unknown keys are errors and values are not coerced."""


class GPUSelector(_Strict):
    gpu_ids: Optional[list[str]] = None
    gpus_per_replica: Optional[int] = field(default=None, ge=1, le=64)


class GPUTypeSelector(_Strict):
    type: str
    accelerator_sliced_memory_percentage: Optional[int] = field(default=None, ge=0, le=100)
    accelerator_sliced_cores_percentage: Optional[int] = field(default=None, ge=0, le=100)
    accelerator_partitioned_profile: Optional[str] = None


class ExtendedKVCache(_Strict):
    enabled: bool = False
    mode: Optional[Literal["local", "shared"]] = "local"
    cache_service_id: Optional[int] = None
    ram_ratio: Optional[float] = field(default=1.2, gt=0)
    ram_size: Optional[int] = field(default=None, ge=0, le=MAX_MODEL_BYTES)
    chunk_size: Optional[int] = field(default=None, ge=1)


class SpeculativeConfig(_Strict):
    enabled: bool = False
    algorithm: Optional[Literal["eagle3", "mtp", "ngram"]] = None
    draft_model: Optional[str] = None
    num_draft_tokens: Optional[int] = field(default=None, ge=1)
    ngram_min_match_length: Optional[int] = field(default=None, ge=1)
    ngram_max_match_length: Optional[int] = field(default=None, ge=1)


class ScalingRule(_Strict):
    start_cron: str
    duration_seconds: int = field(ge=1)
    replicas: int = field(ge=0, le=MAX_REPLICAS)
    name: Optional[str] = None


class ScalingSchedule(_Strict):
    enabled: bool = False
    paused: bool = False
    baseline_replicas: Optional[int] = field(default=None, ge=0, le=MAX_REPLICAS)
    rules: list[ScalingRule] = field(factory=list)


class LoraEntry(_Strict):
    lora_name: str = field(min_length=1)
    lora_repo_name: Optional[str] = None
    source: str = "huggingface"
    huggingface_filename: Optional[str] = None
    model_scope_file_path: Optional[str] = None
    local_path: Optional[str] = None
    path: Optional[str] = None
    model_file_id: Optional[int] = None


# --- the guard block --------------------------------------------------------------------------------------

class WorkloadShare(_Strict):
    """One workload of a pool several share: its longest requests and how many are in flight at its peak."""

    name: str = field(min_length=1, max_length=63)
    prompt_tokens_p99: int = field(ge=1, le=10_000_000)
    max_output_tokens: int = field(ge=1, le=10_000_000)
    concurrency: int = field(ge=1, le=100_000)


MAX_MIX = 64  # workloads one pool may declare; the KV rule sorts them, so the bound keeps it trivial


class Workload(_Strict):
    """What traffic the deployment must carry; drives the KV-oversubscription rule."""

    prompt_tokens_p99: Optional[int] = field(default=None, ge=1, le=10_000_000)
    max_output_tokens: Optional[int] = field(default=None, ge=1, le=10_000_000)
    concurrency: Optional[int] = field(default=None, ge=1, le=100_000)
    # a shared pool's workloads: GSG033 then prices the declared mix, not every sequence at the longest request
    mix: list[WorkloadShare] = field(factory=list, max_length=MAX_MIX)


class Policy(_Strict):
    """How strict the memory checks are."""

    strict: bool = False  # every memory warning becomes an error
    kv_oversubscription: Literal["off", "warning", "error"] = "warning"
    headroom: Literal["off", "warning", "error"] = "warning"
    # Evaluate an unset --max-model-len as GPUStack's worker injects it (8192) instead of vLLM's own default.
    assume_gpustack_max_model_len: bool = False
    # bytes per GPU; replaces gsg's CUDA-graph estimate
    cuda_graph_reserve: Optional[int] = field(None, before=size_or_none, ge=0, le=MAX_DEVICE_BYTES)
    activation_margin: float = field(default=0.0, ge=0.0, le=10.0)  # extra fraction on the activation estimate
    # llama.cpp: VRAM the runtime itself takes per GPU; replaces gsg's 500 MiB (gguf-parser: --platform-footprint)
    platform_footprint: Optional[int] = field(None, before=size_or_none, ge=0, le=MAX_DEVICE_BYTES)


class Quantization(_Strict):
    method: str  # fp8, int8, gptq, awq, bitsandbytes, gguf:<type>, bf16, fp16
    bits: Optional[int] = field(default=None, ge=1, le=32)
    group_size: Optional[int] = field(default=None, ge=-1, le=65536)


class ModelFactsOverride(_Strict):
    """Architecture facts; each one set here wins over config.json, the hub and the built-in catalog."""

    catalog: Optional[str] = None  # a built-in catalog name, e.g. "meta-llama/Llama-3.3-70B-Instruct"
    config: Optional[str] = None  # path to a local config.json (relative to the spec file)
    gguf: Optional[str] = None  # path to a local GGUF file (its header is read)
    architecture: Optional[str] = None
    num_hidden_layers: Optional[int] = field(default=None, ge=1, le=1000)
    hidden_size: Optional[int] = field(default=None, ge=1, le=1_000_000)
    num_attention_heads: Optional[int] = field(default=None, ge=1, le=10_000)
    num_key_value_heads: Optional[int] = field(default=None, ge=1, le=10_000)
    head_dim: Optional[int] = field(default=None, ge=1, le=100_000)
    intermediate_size: Optional[int] = field(default=None, ge=1, le=10_000_000)
    vocab_size: Optional[int] = field(default=None, ge=1, le=100_000_000)
    tie_word_embeddings: Optional[bool] = None
    attention_bias: Optional[bool] = None
    num_experts: Optional[int] = field(default=None, ge=1, le=100_000)
    num_experts_per_tok: Optional[int] = field(default=None, ge=1, le=100_000)
    moe_intermediate_size: Optional[int] = field(default=None, ge=1, le=10_000_000)
    shared_expert_intermediate_size: Optional[int] = field(default=None, ge=0, le=10_000_000)
    first_k_dense_replace: Optional[int] = field(default=None, ge=0, le=1000)
    kv_lora_rank: Optional[int] = field(default=None, ge=1, le=100_000)
    q_lora_rank: Optional[int] = field(default=None, ge=1, le=100_000)
    qk_rope_head_dim: Optional[int] = field(default=None, ge=0, le=100_000)
    qk_nope_head_dim: Optional[int] = field(default=None, ge=0, le=100_000)
    v_head_dim: Optional[int] = field(default=None, ge=1, le=100_000)
    sliding_window: Optional[int] = field(default=None, ge=1, le=100_000_000)
    sliding_window_layers: Optional[int] = field(default=None, ge=0, le=1000)
    max_position_embeddings: Optional[int] = field(default=None, ge=1, le=100_000_000)
    dtype: Optional[Literal["bfloat16", "float16", "float32"]] = None
    quantization: Optional[Quantization] = None
    # the checkpoint's weights, total bytes
    weight_bytes: Optional[int] = field(None, before=size_or_none, ge=1, le=MAX_MODEL_BYTES)
    num_parameters: Optional[int] = field(default=None, ge=1, le=10**15)


class OllamaAliases(_Strict):
    """Ollama-style knobs for the llama.cpp backend (num_ctx is per slot, as in Ollama)."""

    num_ctx: Optional[int] = field(default=None, ge=1, le=10_000_000)
    num_gpu: Optional[int] = field(default=None, ge=0, le=999)
    num_batch: Optional[int] = field(default=None, ge=1, le=1_000_000)
    num_parallel: Optional[int] = field(default=None, ge=1, le=1024)


# What guard.ignore_differences may not name: the deployment's identity, and gsg's own block.
NOT_IGNORABLE = frozenset({"name", "guard", "source", "cluster_name", *SOURCE_ID_FIELD.values(),
                           "huggingface_filename", "model_scope_file_path"})


def _ignorable(value: Any) -> Any:
    """Each entry a field of the document, `env.KEY` or `backend_parameters.--flag` (checked before use)."""
    if not isinstance(value, list):
        return value  # the type check reports it
    for entry in value:
        if not isinstance(entry, str):
            continue
        head, dot, rest = entry.partition(".")
        if dot and head == "env" and rest:
            continue
        if dot and head == "backend_parameters" and rest.startswith("-") and rest.strip("-"):
            continue
        if dot:
            raise ValueError(f"ignore_differences entry '{entry[:80]}': only env.KEY and "
                             "backend_parameters.--flag name a part of a field")
        if entry in NOT_IGNORABLE:
            raise ValueError(f"ignore_differences cannot ignore '{entry}': it is the deployment's identity")
        if entry not in DeploymentSpec.record_fields:
            raise ValueError(f"ignore_differences entry '{entry[:80]}' is not a field of the deployment document")
    return value


class Guard(_Strict):
    template: Optional[str] = None
    vars: dict[str, Any] = field(factory=dict)
    workload: Workload = field(factory=Workload)
    policy: Policy = field(factory=Policy)
    model: ModelFactsOverride = field(factory=ModelFactsOverride)
    ollama: Optional[OllamaAliases] = None
    wave: int = field(default=0, ge=-1000, le=1000)  # apply order: lower waves first, deletes highest first
    adopt: bool = False  # take over a live model of this name that gsg does not own yet
    secrets: list[str] = field(factory=list)  # more env names and --flags whose values are never printed
    # parts another manager owns (an autoscaler's replicas): never a change, and an update keeps the live value
    ignore_differences: list[str] = field(factory=list, before=_ignorable)


class DeploymentSpec(_Strict):
    """One GPUStack deployment as gsg manages it."""

    name: str = field(min_length=1, max_length=255)
    cluster_name: Optional[str] = None
    source: Source
    huggingface_repo_id: Optional[str] = None
    huggingface_filename: Optional[str] = None
    model_scope_model_id: Optional[str] = None
    model_scope_file_path: Optional[str] = None
    local_path: Optional[str] = None
    description: Optional[str] = None
    replicas: int = field(default=1, ge=0, le=MAX_REPLICAS)
    categories: list[Category] = field(factory=list)
    placement_strategy: PlacementStrategy = "spread"
    cpu_offloading: Optional[bool] = None
    distributed_inference_across_workers: Optional[bool] = None
    worker_selector: Optional[dict[str, str]] = None
    gpu_selector: Optional[GPUSelector] = None
    gpu_type_selector: Optional[GPUTypeSelector] = None
    backend: Optional[str] = None
    backend_version: Optional[str] = None
    backend_parameters: Optional[list[str]] = None
    image_name: Optional[str] = None
    run_command: Optional[str] = None
    native_anthropic_api: bool = False
    env: Optional[dict[str, str]] = None
    restart_on_error: Optional[bool] = True
    distributable: Optional[bool] = None
    extended_kv_cache: Optional[ExtendedKVCache] = None
    speculative_config: Optional[SpeculativeConfig] = None
    scaling_schedule: Optional[ScalingSchedule] = None
    generic_proxy: Optional[bool] = False
    lora_list: Optional[list[LoraEntry]] = None
    roles: Optional[list[dict[str, Any]]] = None  # PD disaggregation: passed through, not checked
    disaggregation: Optional[dict[str, Any]] = None
    gather: Optional[dict[str, Any]] = None
    enable_model_route: Optional[bool] = None
    guard: Guard = field(factory=Guard)

    @property
    def source_id(self) -> str | None:
        return getattr(self, SOURCE_ID_FIELD[self.source])

    @property
    def effective_backend(self) -> str:
        """What GPUStack runs when backend is unset: vLLM, or Custom for a GGUF file."""
        if self.backend:
            return self.backend
        return "Custom" if self.is_gguf else "vLLM"

    @property
    def is_gguf(self) -> bool:
        path = self.huggingface_filename or self.model_scope_file_path or self.local_path or ""
        return path.lower().endswith(".gguf")


# The order GPUStack's exporter writes fields in; rendering keeps it so a spec diff reads naturally.
GPUSTACK_FIELD_ORDER = [name for name in DeploymentSpec.record_fields if name != "guard"]
