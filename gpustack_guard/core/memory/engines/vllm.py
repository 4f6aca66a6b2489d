"""vLLM's per-GPU startup budget (memory-arithmetic.md §1.4), worst rank, version-aware."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.estimate import DOES_NOT_FIT, FITS, KV_BELOW_MAX_LEN, NO_KV_MEMORY, Estimate
from gpustack_guard.core.memory.deepseek_v4 import CompressedKV
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.memory.weights import weights_per_rank
from gpustack_guard.core.memory.kv import KVShape
from gpustack_guard.core.memory.max_len import check_max_model_len, derive_for_facts
from gpustack_guard.core.units import GiB


@dataclass(frozen=True, eq=False)  # identity equality: cheaper to define, never compared
class VllmConfig:
    """The flags that move memory, with None meaning 'the engine's default'."""

    gpu_memory_utilization: float | None = None
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    kv_cache_dtype: str | None = None
    block_size: int | None = None
    enforce_eager: bool = False
    enable_chunked_prefill: bool | None = None
    kv_cache_memory: int | None = None
    num_gpu_blocks_override: int | None = None
    cuda_graph_reserve: int | None = None  # policy override of the CUDA-graph estimate
    activation_margin: float = 0.0
    gpustack_max_model_len: bool = False  # unset --max-model-len evaluated as GPUStack injects it (8192)
    disable_sliding_window: bool = False  # --disable-sliding-window: caps the derived length at the window


def capture_sizes(rule: str, max_num_seqs: int, max_tokens: int) -> list[int]:
    if rule == "v0":
        return [s for s in [1, 2, 4] + list(range(8, 257, 8)) if s <= max(max_num_seqs, 1)]
    if rule == "v1-early":
        return [s for s in [1, 2, 4] + list(range(8, 513, 8)) if s <= max(max_num_seqs, 1)]
    largest = min(max_num_seqs * 2, 512, max_tokens)
    return [s for s in [1, 2, 4] if s <= largest] + list(range(8, min(largest + 1, 256), 8)) + \
        list(range(256, largest + 1, 16))


def kv_shape(facts: ModelFacts, cfg: VllmConfig, in_flight_tokens: int, notes: list[str]) -> KVShape | CompressedKV:
    """The KV geometry vLLM builds for this model; notes what it overrides."""
    if not facts.is_compressed_attention:
        block = cfg.block_size or (P.MLA_BLOCK_SIZE if facts.is_mla else P.DEFAULT_BLOCK_SIZE)
        return KVShape(facts, cfg.tensor_parallel_size, cfg.pipeline_parallel_size, cfg.kv_cache_dtype, block,
                       in_flight_tokens)
    shape = CompressedKV(facts, cfg.pipeline_parallel_size, in_flight_tokens)
    if cfg.block_size and cfg.block_size != shape.block_size:
        notes.append(f"DeepSeek-V4 runs with block size {shape.block_size} whatever --block-size says")
    if (cfg.kv_cache_dtype or "auto").lower() not in ("fp8", "fp8_e4m3", "fp8_ds_mla"):
        notes.append("KV sized as fp8_ds_mla, the layout vLLM's DeepSeek-V4 kernels use; set --kv-cache-dtype fp8")
    return shape


def default_batching(profile: P.VllmProfile, gpu_total: int, gpu_name: str, max_model_len: int,
                     chunked: bool | None) -> tuple[int, int, bool]:
    """(max_num_batched_tokens, max_num_seqs, chunked_prefill) as vLLM's OpenAI server defaults them."""
    big = gpu_total >= 70 * GiB and "a100" not in gpu_name.lower()
    if profile.engine == "v0":
        chunked_on = chunked if chunked is not None else max_model_len > 32768
        return (2048 if chunked_on else max(max_model_len, 2048)), 256, chunked_on
    return (8192 if big else 2048), (1024 if big else 256), True


def estimate_vllm(facts: ModelFacts, gpu_total: int, cfg: VllmConfig, *, version: str | None,
                  gpu_name: str = "") -> Estimate:
    profile = P.vllm_profile(version)
    tp, pp = cfg.tensor_parallel_size, cfg.pipeline_parallel_size
    notes: list[str] = []
    derived = derive_for_facts(facts.length_config, facts.max_position_embeddings, version,
                               disable_sliding_window=cfg.disable_sliding_window)
    native = derived.limit if derived else 0
    length_check = check_max_model_len(cfg.max_model_len, derived, version, facts.allow_long_max_model_len) \
        if derived else None
    max_len = cfg.max_model_len
    if max_len is None:
        default = derived.default if derived else 0
        max_len = min(default, 8192) if cfg.gpustack_max_model_len and default else default
    if length_check and (length_check.error or length_check.warning):
        notes.append(f"vLLM {'refuses' if length_check.error else 'warns'}: "
                     f"{length_check.error or length_check.warning}")
    gmu = cfg.gpu_memory_utilization if cfg.gpu_memory_utilization is not None else 0.9

    default_tokens, default_seqs, chunked = default_batching(profile, gpu_total, gpu_name, max_len,
                                                             cfg.enable_chunked_prefill)
    batched = cfg.max_num_batched_tokens or default_tokens
    if profile.engine == "v0" and not chunked:
        batched = max(batched, max_len)  # V0 without chunked prefill profiles a whole max-length prompt
    seqs = cfg.max_num_seqs or default_seqs

    weights = weights_per_rank(facts, tp, pp)
    requested = math.ceil(gmu * gpu_total)
    H, V = facts.hidden_size, facts.vocab_size
    inter = facts.intermediate_size or 0
    if facts.is_moe:
        inter = (facts.num_experts_per_tok or 1) * (facts.moe_intermediate_size or inter) + \
            (facts.shared_expert_intermediate_size or 0)
    raw_activation = batched * (2 * inter // tp + 4 * H) * 2 + seqs * V * 4
    workspace = batched * P.COMPRESSED_ATTENTION_WORKSPACE_PER_TOKEN if facts.is_compressed_attention else 0
    activation = int((raw_activation * P.ACTIVATION_CALIBRATION + workspace) * (1 + cfg.activation_margin))
    non_torch = P.NON_TORCH_SINGLE if tp * pp == 1 else P.NON_TORCH_PARALLEL

    layers_rank = math.ceil(facts.num_hidden_layers / pp)
    if cfg.enforce_eager:
        graphs = 0
    elif cfg.cuda_graph_reserve is not None:
        graphs = cfg.cuda_graph_reserve
    else:
        sizes = capture_sizes(profile.capture_rule, seqs, batched)
        graphs = profile.graph_sets * len(sizes) * layers_rank * P.GRAPH_BYTES_PER_LAYER_GRAPH
    graphs_in_budget = graphs if profile.graphs_profiled else 0

    if derived and derived.sliding_window_disabled:  # every layer then keeps full-length KV
        facts = replace(facts, sliding_window=None, sliding_window_layers=None)
    shape = kv_shape(facts, cfg, batched * profile.in_flight_steps, notes)
    block = shape.block_size
    if cfg.kv_cache_memory is not None:
        available = cfg.kv_cache_memory
        notes.append("--kv-cache-memory bypasses gpu_memory_utilization for the KV pool")
    else:
        available = requested - weights - activation - non_torch - graphs_in_budget

    if available > 0 and not shape.hybrid:
        blocks = available // (block * shape.bytes_per_token)
        if cfg.num_gpu_blocks_override:
            blocks = cfg.num_gpu_blocks_override
        capacity = blocks * block
        per_request_blocks = math.ceil(max_len / block) if max_len else 1
        concurrency = blocks / per_request_blocks if max_len else 0.0
        kv_pool = blocks * block * shape.bytes_per_token
    elif available > 0:
        per_request = shape.request_bytes(max_len or 1)
        concurrency = available / per_request
        capacity = int(concurrency * (max_len or 1))
        kv_pool = available
    else:
        capacity, concurrency, kv_pool = 0, 0.0, 0

    estimated = shape.max_tokens_fitting(available, max(native, max_len, 1))
    sampler = seqs * V * P.SAMPLER_BYTES_PER_VOCAB_ENTRY
    comm = P.COMM_BUFFERS if tp * pp > 1 else 0
    headroom_needed = P.CUDA_CONTEXT + comm + (0 if profile.graphs_profiled else graphs) + sampler + \
        int(P.ALLOCATOR_SLACK * requested)
    footprint = requested + headroom_needed

    needed = shape.request_bytes(max_len) if max_len else 0
    if weights > gpu_total:
        verdict = DOES_NOT_FIT
    elif available <= 0:
        verdict = NO_KV_MEMORY
    elif max_len and needed > available:
        verdict = KV_BELOW_MAX_LEN
    else:
        verdict = FITS
    if not max_len:
        notes.append("max_model_len unknown: set --max-model-len or guard.model.max_position_embeddings")

    return Estimate(
        engine="vLLM", version=version or f"{P.DEFAULT_VERSIONS['vllm']} (assumed)", gpu_total=gpu_total,
        gpus=tp * pp, requested=requested, weights=weights, activation=activation, non_torch=non_torch,
        cuda_graphs=graphs, kv_cache=kv_pool, kv_available=available, headroom=gpu_total - requested,
        headroom_needed=headroom_needed, footprint=footprint, kv_bytes_per_token=shape.bytes_per_token,
        block_size=block, kv_capacity_tokens=capacity, max_model_len=max_len, estimated_max_model_len=estimated,
        max_num_seqs=seqs, max_concurrency=concurrency, verdict=verdict, kv_needed=needed, notes=tuple(notes),
        extra={"engine_generation": profile.engine, "max_num_batched_tokens": batched,
               "cuda_graphs_in_budget": profile.graphs_profiled, "gpu_memory_utilization": gmu,
               "sampler_warmup": sampler, "cuda_context": P.CUDA_CONTEXT, "comm_buffers": comm,
               **({"derived_max_model_len": native, "max_model_len_key": derived.key,
                   "max_model_len_refused": length_check.error} if derived else {})},
    )
