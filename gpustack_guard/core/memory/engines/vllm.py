"""vLLM's per-GPU startup budget, per pipeline stage, version-aware (docs/memory-arithmetic.md, "vLLM")."""

from __future__ import annotations

import bisect
import copy
import math
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.memory import gpu_arch
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory import terms as T
from gpustack_guard.core.memory.estimate import (
    DOES_NOT_FIT,
    FITS,
    KV_BELOW_MAX_LEN,
    NO_KV_MEMORY,
    SAMPLER_WARMUP_OOM,
    Estimate,
    GatedDeltaUnsupported,
    LayoutUnsupported,
)
from gpustack_guard.core.memory.facts import EncoderDummy, ModelFacts, RopeTable
from gpustack_guard.core.memory.interconnect import PEERLESS, interconnect
from gpustack_guard.core.memory.kv import (
    KV_DTYPE_BYTES,
    KVShape,
    kv_bytes_per_token_layer,
    mla_aligned_layer_bytes,
    window_pages,
)
from gpustack_guard.core.memory.max_len import check_max_model_len, derive_for_facts
from gpustack_guard.core.memory.quant import EXPERTS_ONLY, linear_bytes_per_param
from gpustack_guard.core.memory.vision import qwen2_vl_video, qwen3_vl_video, qwen_vl_side
from gpustack_guard.core.memory.weights import (
    UNQUANTISED_BYTES,
    is_linear_layer,
    layers_on_rank,
    quantised_linear_params,
    weight_layout,
    weights_per_rank,
)
from gpustack_guard.core.table_row import TableRow
from gpustack_guard.core.units import GiB, MiB
from gpustack_guard.core.values import frozen_value
from gpustack_guard.core.versions import Version

if TYPE_CHECKING:  # imported where a DeepSeek-V4 or Gated DeltaNet model needs it: most runs never do
    from gpustack_guard.core.memory.deepseek_v4 import CompressedKV
    from gpustack_guard.core.memory.gated_delta import GatedDeltaKV
    from gpustack_guard.core.memory.lora import LoraRequest, LoraSlots


@frozen_value  # identity equality: cheaper to define, never compared
class VllmConfig:
    """The flags that move memory, with None meaning 'the engine's default'."""

    __repr__ = fields_repr

    gpu_memory_utilization: float | None = None
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    kv_cache_dtype: str | None = None
    kv_skip_layers: tuple[str, ...] = ()  # --kv-cache-dtype-skip-layers, as given
    block_size: int | None = None
    enforce_eager: bool = False
    enable_chunked_prefill: bool | None = None
    kv_cache_memory: int | None = None
    num_gpu_blocks_override: int | None = None
    extensible_kv_cache: bool | None = None  # --[no-]enable-extensible-kv-cache; None = the release's default
    cuda_graph_reserve: int | None = None  # policy override of the CUDA-graph estimate
    activation_margin: float = 0.0
    gpustack_max_model_len: bool = False  # unset --max-model-len evaluated as GPUStack injects it (8192)
    expert_parallel: bool = False
    distributed_executor_backend: str | None = None
    num_scheduler_steps: int | None = None
    pp_layer_partition: str | None = None  # VLLM_PP_LAYER_PARTITION from the deployment's env
    use_v1_env: str | None = None  # VLLM_USE_V1 from the deployment's env
    fused_moe_chunk_size: str | None = None  # VLLM_FUSED_MOE_CHUNK_SIZE from the deployment's env
    flashinfer_sampler_env: str | None = None  # VLLM_USE_FLASHINFER_SAMPLER from the deployment's env
    v2_runner_env: str | None = None  # VLLM_USE_V2_MODEL_RUNNER from the deployment's env (model_runner)
    disable_sliding_window: bool = False  # --disable-sliding-window: caps the derived length at the window
    cpu_offload_bytes: int = 0  # --cpu-offload-gb, per GPU
    lora: LoraRequest | None = None  # --enable-lora's slots (--max-loras, --max-lora-rank, ...); None = LoRA off
    speculative_flag: str | None = None  # the flag that turns on a draft (not counted: a note says so)
    num_speculative_tokens: int = 0  # the draft's tokens per step (q = 1 + this per decode request)
    speculative_method: str | None = None  # --speculative-config's method, as given (eagle3, mtp, draft_model, ...)
    speculative_model: str | None = None  # the draft model's name, where one is given
    disable_custom_all_reduce: bool = False  # --disable-custom-all-reduce
    nccl_p2p_disabled: bool = False  # NCCL_P2P_DISABLE in the deployment's env (profiles.NCCL_P2P_DISABLE_ENV)
    nccl_nvls_disabled: bool = False  # NCCL_NVLS_ENABLE=0 in the deployment's env (profiles.NCCL_NVLS_ENABLE_ENV)
    # --disable-hybrid-kv-cache-manager, or a flag that turns it off (--kv-transfer-config, --kv-events-config)
    disable_hybrid_kv_cache_manager: bool = False
    chunked_local_hybrid_env: str | None = None  # VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE from the env
    force_fp8_marlin_env: str | None = None  # VLLM_TEST_FORCE_FP8_MARLIN from the env (profiles.VLLM_FP8_MARLIN)
    # Gated DeltaNet state dtypes (--mamba-cache-dtype, --mamba-ssm-cache-dtype; None = auto) and
    # --[no-]enable-prefix-caching (None = the release's default): core/memory/gated_delta.py
    mamba_cache_dtype: str | None = None
    mamba_ssm_cache_dtype: str | None = None
    # --mamba-cache-mode as given (None: unset) and --mamba-block-size (profiles.VLLM_MAMBA_CACHE_MODE_ROWS)
    mamba_cache_mode: str | None = None
    mamba_block_size: int | None = None
    enable_prefix_caching: bool | None = None
    # --[no-]async-scheduling (None = the release's default: profiles.VLLM_ASYNC_DEFAULT_ROWS); it sets how many
    # steps of batched tokens a window's pages hold from 0.26.0 (window_in_flight_steps)
    async_scheduling: bool | None = None
    use_replayssm: bool = False  # --use-replayssm (0.33.0+ read only without it)
    gdn_prefill_backend: str | None = None  # --additional-config's gdn_prefill_backend; None = auto
    mm_image_limit: int | None = None  # --limit-mm-per-prompt's image count; None = the release's default
    mm_video_limit: int | None = None  # its video count (Qwen3-VL profiles a video at 0.11-0.12)
    mm_max_pixels: int | None = None  # --mm-processor-kwargs max_pixels (Qwen2/2.5-VL's largest image)
    skip_mm_profiling: bool = False  # --skip-mm-profiling
    # --mm-encoder-tp-mode as given ("data": the encoder whole on every rank where the model supports it,
    # profiles.VLLM_MM_ENCODER_TP_MODES)
    mm_encoder_tp_mode: str = P.VLLM_MM_ENCODER_TP_MODE_DEFAULT
    # capture settings (profiles.CAPTURE_SETTINGS_RULES): None = the release's default
    cudagraph_mode: str | None = None  # compilation_config.cudagraph_mode, one of profiles.CUDAGRAPH_MODES
    cudagraph_capture_sizes: tuple[int, ...] | None = None  # --cudagraph-capture-sizes or the config's list
    cuda_graph_sizes: tuple[int, ...] | None = None  # --cuda-graph-sizes as given (its meaning changed at 0.11.1)
    max_cudagraph_capture_size: int | None = None  # --max-cudagraph-capture-size or the config's value
    # 0.34.0+'s split capture keys of the compilation config (profiles.VLLM_SPLIT_CAPTURE_KEYS); None = unset
    prefill_capture_sizes: tuple[int, ...] | None = None
    max_prefill_capture_tokens: int | None = None
    decode_capture_requests: tuple[int, ...] | None = None
    max_decode_capture_requests: int | None = None
    max_decode_capture_tokens: int | None = None
    # --performance-mode as given (one of the release's choices, engine.vllm_config checks; profiles.
    # VLLM_PERFORMANCE_MODES says what each changes)
    performance_mode: str = P.VLLM_PERFORMANCE_MODE_DEFAULT
    attention_backend: str | None = None  # --attention-backend as given (None: the platform's priority list)
    cudagraph_specialize_lora: bool | None = None  # the compilation config's key (None: the release's default)


@frozen_value
class StageBudget:
    """One pipeline stage's per-rank budget (report() is what the estimate's extra["stages"] shows)."""

    __repr__ = fields_repr

    stage: int
    layers: int
    gpu_total: int
    requested: int
    weights: int
    activation: int
    cuda_graphs: int
    kv_available: int
    shape: KVShape | CompressedKV | GatedDeltaKV

    def report(self) -> dict[str, int]:
        return {"stage": self.stage, "layers": self.layers, "gpu_total": self.gpu_total, "requested": self.requested,
                "weights": self.weights, "activation": self.activation, "cuda_graphs": self.cuda_graphs,
                "kv_available": self.kv_available}


class CaptureDefaults(TableRow):  # a value read by attribute: tuple-built, nothing generated to compile
    """A release's capture-size defaults on one GPU (profiles.VLLM_CAPTURE_DEFAULTS): the default largest size and
    what it appends. The field defaults are the 0.11.1-0.20.0 rule."""

    largest: int = P.CAPTURE_V1_MAX
    adds_batched_tokens: bool = False
    adds_max_num_seqs: bool = False
    split_grids_to: int = 0  # 0.34.0+ on 10.x: the prefill/decode grids' token ceiling (0: the shared list)
    reads_split_keys: bool = False  # 0.34.0+: the compilation config's prefill/decode capture keys are read
    grid_tokens: int = 0  # the split grids' default token ceiling of the release (8192 in 0.34.0), any GPU
    spec_largest: bool = False  # the default largest size counts the draft's query length (VLLM_SPEC_CAPTURE)
    spec_uniform: bool = False  # the draft's uniform decode sizes n x q are appended (VLLM_SPEC_CAPTURE)
    spec_rounds: bool = False  # MRV1 rounds the sizes up to multiples of q (VLLM_SPEC_CAPTURE; V1 runner only)
    lora_specialized: bool = False  # LoRA captures each size with and without adapters (VLLM_LORA_GRAPH_ROWS)


def capture_defaults(version: str | None, gpu_name: str) -> CaptureDefaults:
    """The row of the release, its largest size picked by the GPU's compute-capability major (an unknown name
    takes the family-less entry, as a GPU vLLM does not test for)."""
    row = P.vllm_capture_defaults_row(version)
    major = gpu_arch.major(gpu_name)
    by_family = dict(row.largest_by_family)
    split = row.sm100_split_grids_to if major == 10 else 0
    spec = P.vllm_spec_capture_row(version)
    return CaptureDefaults(by_family.get(major, by_family[0]), row.adds_batched_tokens, row.adds_max_num_seqs, split,
                           row.reads_split_keys, row.sm100_split_grids_to, spec.largest_by_query_len,
                           spec.appends_uniform_decode, spec.rounds_to_query_len,
                           P.vllm_lora_graph_row(version).specialized)


def lora_graph_cases(cfg: VllmConfig, defaults: CaptureDefaults) -> int:
    """How many times each capture size is captured (profiles.VLLM_LORA_GRAPH_ROWS): once without LoRA; with LoRA
    on a specializing release, once without adapters and once per captured adapter count (max_loras + 1 alone, or
    every power of two up to max_loras and max_loras + 1 under --specialize-active-lora)."""
    if cfg.lora is None or not defaults.lora_specialized or cfg.cudagraph_specialize_lora is False:
        return 1
    if not cfg.lora.specialize_active:
        return 2
    counts = range(1, cfg.lora.slots + 2)
    return 1 + sum(1 for n in counts if n & (n - 1) == 0 or n == cfg.lora.slots + 1)


def doubling_grid(limit: int, stride_at) -> list[int]:
    """Sizes from 1 up to `limit` (always the last), each step the largest power of two not above
    stride_at(size) (at least 1), landing on its multiples (config/compilation.py@v0.34.0 _walk_grid)."""
    sizes, size = [], 1
    while size < limit:
        sizes.append(size)
        stride = 1 << (int(max(1.0, stride_at(size))).bit_length() - 1)
        size += stride - size % stride
    return sizes + [limit] if limit > 0 else []


def prefill_grid(max_tokens: int, dense_head: bool = False) -> list[int]:
    """0.34.0's SM100 prefill token grid (prefill_cudagraph_capture_grid): 1, 2, 4, every 8 to 64, four sizes per
    doubling to 1024, then every 256 (512 from 7 % above 512); interactivity adds every size to 32."""
    grid = doubling_grid(max_tokens, lambda t: min(t, max(8, t / 4), 0.07 * max(t, 4096)))
    return sorted(set(grid) | {t for t in range(1, 33) if t < max_tokens}) if dense_head else grid


def decode_grid(max_requests: int) -> list[int]:
    """0.34.0's SM100 decode request grid (decode_cudagraph_capture_grid): every count to 6, then a power-of-two
    step not above 0.65 x n^(2/3)."""
    return doubling_grid(max_requests, lambda n: 0.65 * n ** (2 / 3))


def split_set(cfg: VllmConfig) -> bool:
    """Whether the deployment sets one of 0.34.0's prefill/decode size keys (its uses_split_sizes)."""
    return any(value is not None for value in (cfg.prefill_capture_sizes, cfg.max_prefill_capture_tokens,
                                               cfg.decode_capture_requests, cfg.max_decode_capture_requests))


def split_graph_plan(mode: str, seqs: int, batched: int, every_size_to: int, ceiling: int,
                     cfg: VllmConfig | None = None, shared: list[int] | None = None,
                     grid_tokens: int = 0, query_len: int = 1) -> GraphPlan:
    """0.34.0's split capture (config/vllm.py@v0.34.0 _split_cudagraph_capture_sizes, one token per request, no
    draft): mixed batches take the prefill sizes (a list, else the prefill grid to min(max tokens, batched tokens),
    else the shared list), uniform decode FULL graphs the request counts (a list, else the request grid to
    min(max requests, max_num_seqs), else the shared sizes cut to max_num_seqs) within as many tokens as the decode
    budget leaves, the first count at or above that limit captured at the limit (decode_cudagraph_capture_shapes).
    ceiling > 0: SM100 with no deprecated size setting, where unset kinds take the grids and the decode budget
    defaults to the ceiling; grid_tokens: the prefill grid's default top when only its max is unset."""
    cfg = cfg or VllmConfig()
    shared = shared or []
    wide = ceiling > 0
    top_default = ceiling or grid_tokens
    if cfg.prefill_capture_sizes is not None:
        prefill = sorted({s for s in cfg.prefill_capture_sizes if 1 <= s <= batched})
    elif cfg.max_prefill_capture_tokens is not None or wide:
        top = top_default if cfg.max_prefill_capture_tokens is None else cfg.max_prefill_capture_tokens
        prefill = prefill_grid(min(top, batched), every_size_to > 0)
    else:
        prefill = list(shared)
    if cfg.decode_capture_requests is not None:
        requests = sorted({n for n in cfg.decode_capture_requests if 1 <= n <= seqs})
    elif cfg.max_decode_capture_requests is not None or wide:
        requests = decode_grid(seqs if cfg.max_decode_capture_requests is None
                               else min(cfg.max_decode_capture_requests, seqs))
    else:  # the request counts the shared sizes round up to at q tokens each, within the shared largest size
        q = query_len
        top = max(shared, default=0)
        requests = sorted({min(-(-s // q), seqs) for s in shared if -(-s // q) * q <= top})
    budget = cfg.max_decode_capture_tokens or (ceiling if wide else 0)
    limit = min(seqs, (min(batched, budget) if budget else batched) // query_len)
    reachable = requests[:bisect.bisect_left(requests, limit) + 1]
    decode = sorted({min(n, limit) * query_len for n in reachable}) if limit >= 1 else []
    mixed = [] if mode == "FULL_DECODE_ONLY" else prefill
    decode = decode if mode in ("FULL_DECODE_ONLY", "FULL_AND_PIECEWISE") else []
    piecewise = len(mixed) if mode != "FULL" else 0
    full = len(decode) + (len(mixed) if mode == "FULL" else 0)
    return GraphPlan(mode, piecewise, full, max(mixed + decode, default=0))


def capture_sizes(rule: str, max_num_seqs: int, max_tokens: int, every_size_to: int = 0,
                  defaults: CaptureDefaults = CaptureDefaults(), query_len: int = 1) -> list[int]:
    """The release's default capture sizes; every_size_to: --performance-mode interactivity's fine head; query_len:
    1 + a draft's tokens per step (profiles.VLLM_SPEC_CAPTURE)."""
    small, step = list(P.CAPTURE_SMALL), P.CAPTURE_STEP
    if rule in ("v0", "v1-early"):
        top = P.CAPTURE_V0_MAX if rule == "v0" else P.CAPTURE_V1_EARLY_MAX
        return [s for s in small + list(range(step, top + 1, step)) if s <= max(max_num_seqs, 1)]
    if rule == "v1-8step":  # 0.10.1-0.11.0: every multiple of 8 up to the largest size
        largest = min(max_num_seqs * 2, P.CAPTURE_V1_MAX, max_tokens)
        return [s for s in small if s <= largest] + list(range(step, largest + 1, step))
    q = query_len if defaults.spec_largest else 1
    uncut = min(max_num_seqs * q * 2, defaults.largest)
    sizes = v1_capture_sizes(min(uncut, max_tokens), every_size_to, max_tokens, defaults)
    if q > 1 and defaults.spec_uniform:  # 0.29.0+: n requests x q tokens, n on the request-count grid
        sizes = sorted(set(sizes) | {n * q for n in request_counts(min(max_num_seqs, defaults.largest))
                                     if n * q <= uncut and n * q <= max_tokens})
    elif defaults.adds_max_num_seqs and max_num_seqs <= uncut and max_num_seqs <= max_tokens:
        sizes = sorted(set(sizes + [max_num_seqs]))  # 0.31.0+: the widest decode batch, off-stride or not
    return sizes


def model_capture_override(facts: ModelFacts, cfg: VllmConfig, version: str | None, gpu_name: str,
                           batched: int) -> tuple[VllmConfig, P.VllmModelCaptureRow | None]:
    """The deployment's capture settings after the model's own config hook (profiles.VLLM_MODEL_CAPTURE), which
    vLLM runs before it sets the capture sizes; the row when the hook changed them."""
    row = P.vllm_model_capture_row(facts.architecture, version)
    if row is None or cfg.cudagraph_capture_sizes is not None:
        return cfg, None
    if row.form == "scheduler-list":
        given = cfg.cuda_graph_sizes
        if given is not None and (len(given) != 1 or given[0] >= row.largest):
            return cfg, None
        return replace(cfg, cuda_graph_sizes=tuple(v1_capture_sizes(row.largest))), row
    if cfg.cuda_graph_sizes is not None or cfg.max_cudagraph_capture_size is not None:
        return cfg, None  # 0.11.1+: --cuda-graph-sizes is --cudagraph-capture-sizes (arg_utils.py@v0.11.1)
    if row.form == "max-size":
        return replace(cfg, max_cudagraph_capture_size=row.largest), row
    if split_set(cfg) or gpu_arch.major(gpu_name) == 10:
        return cfg, None
    top = min(batched, row.largest)
    prefill = tuple(sorted({s for s in v1_capture_sizes(row.largest) if s < top} | {top}))
    return replace(cfg, prefill_capture_sizes=prefill,
                   max_decode_capture_requests=row.largest // (1 + cfg.num_speculative_tokens)), row


def capture_hook_notes(row: P.VllmModelCaptureRow | None, architecture: str | None, version: str | None) -> list[str]:
    """What the estimate says when a model's hook widened its capture sizes (none otherwise)."""
    if row is None:
        return []
    return [f"vLLM {version or P.DEFAULT_VERSIONS['vllm']} widens {architecture}'s CUDA-graph capture sizes to "
            f"{row.largest} tokens (its config hook: 'Overriding max cuda graph capture size'); set a capture size "
            "to keep the release's default"]


def rounded_to_query_len(sizes: list[int], q: int) -> list[int]:
    """MRV1's adjust_cudagraph_sizes_for_spec_decode: each size rounded up to a multiple of q, those within the
    largest size kept; q alone when none is and q fits (an empty list stays empty: vLLM refuses it then)."""
    if not sizes:
        return sizes
    largest = max(sizes)
    rounded = sorted({-(-s // q) * q for s in sizes if -(-s // q) * q <= largest})
    return rounded or ([q] if q <= largest else [])


def request_counts(max_requests: int) -> list[int]:
    """0.29.0+'s request-count grid of a draft's uniform decode sizes (_set_cudagraph_sizes request_counts): 1, 2, 4,
    multiples of 8 below 256, of 16 from 256, and the maximum itself."""
    counts = [n for n in P.CAPTURE_SMALL if n <= max_requests]
    counts += list(range(P.CAPTURE_STEP, min(max_requests + 1, P.CAPTURE_V1_WIDE_FROM), P.CAPTURE_STEP))
    counts += list(range(P.CAPTURE_V1_WIDE_FROM, max_requests + 1, P.CAPTURE_V1_WIDE_STEP))
    return sorted(set(counts + [max_requests]))


def v1_capture_sizes(largest: int, every_size_to: int = 0, max_tokens: int = 0,
                     defaults: CaptureDefaults = CaptureDefaults()) -> list[int]:
    """0.11.1+'s list up to its largest size: 1, 2, 4, multiples of 8 below 256, then of 16. every_size_to > 0
    (--performance-mode interactivity, from 0.17.0): every size from 1 to min(largest, every_size_to) in place of
    1, 2, 4 (config/vllm.py@v0.17.0 _set_cudagraph_sizes). From 0.20.1 max_tokens (max_num_batched_tokens) is
    appended when it is at most the largest size, i.e. when it is what cut the largest size."""
    step, wide = P.CAPTURE_STEP, P.CAPTURE_V1_WIDE_FROM
    head = list(range(1, min(largest, every_size_to) + 1)) if every_size_to else \
        [s for s in P.CAPTURE_SMALL if s <= largest]
    tail = [max_tokens] if defaults.adds_batched_tokens and 0 < max_tokens <= largest else []
    return sorted(set(head + list(range(step, min(largest + 1, wide), step)) +
                      list(range(wide, largest + 1, P.CAPTURE_V1_WIDE_STEP)) + tail))


def requested_capture_sizes(rule: str, cfg: VllmConfig, max_tokens: int, every_size_to: int = 0,
                            defaults: CaptureDefaults = CaptureDefaults()) -> list[int] | None:
    """The sizes a deployment's capture settings ask for, as the release reads them (profiles.
    CAPTURE_SETTINGS_RULES); None when it sets none, or the release does not read them."""
    if rule not in P.CAPTURE_SETTINGS_RULES:
        return None
    explicit = cfg.cudagraph_capture_sizes
    if cfg.cuda_graph_sizes is not None and explicit is None:
        if rule == "v1-8step" and len(cfg.cuda_graph_sizes) == 1:
            top = cfg.cuda_graph_sizes[0]
            return [s for s in list(P.CAPTURE_SMALL) + list(range(P.CAPTURE_STEP, top + 1, P.CAPTURE_STEP))
                    if s <= max_tokens]
        if rule == "v1-8step":
            return [s for s in sorted(set(cfg.cuda_graph_sizes)) if s <= max_tokens]
        explicit = cfg.cuda_graph_sizes  # 0.11.1+: a deprecated alias of --cudagraph-capture-sizes
    if explicit is not None:
        sizes = sorted(set(explicit))
        # 0.10.1-0.11.0 take the config's own list as given; 0.11.1+ cut it to the batched tokens
        return sizes if rule == "v1-8step" else [s for s in sizes if s <= max_tokens]
    if cfg.max_cudagraph_capture_size is not None and rule == "v1":
        return v1_capture_sizes(min(cfg.max_cudagraph_capture_size, max_tokens), every_size_to, max_tokens, defaults)
    return None


def pp_partitions(num_layers: int, pp: int, partition: str | None = None) -> list[int]:
    """Layers per pipeline stage, as vllm.distributed.utils.get_pp_indices splits them.

    VLLM_PP_LAYER_PARTITION wins when set; otherwise the remainder of an uneven split goes one layer each to
    the stages before the last (the last stage also carries the LM head)."""
    if partition:
        try:
            parts = [int(x) for x in partition.split(",")]
        except ValueError:
            raise ValueError(f"VLLM_PP_LAYER_PARTITION must be comma-separated integers, got '{partition}'") from None
        if len(parts) != pp:
            raise ValueError(f"VLLM_PP_LAYER_PARTITION has {len(parts)} stages but --pipeline-parallel-size is {pp}")
        if sum(parts) != num_layers:
            raise ValueError(f"VLLM_PP_LAYER_PARTITION sums to {sum(parts)} layers but the model has {num_layers}")
        return parts
    parts = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        parts[-i] += 1
    return parts


def stage_weights(facts: ModelFacts, tp: int, parts: list[int]) -> list[int]:
    """Weights per rank of each stage: its layers (TP-split, replicated parts whole), the embedding on the first
    stage, the LM head (the embedding again when tied) and final norm on the last."""
    layout = weight_layout(facts)
    replicated = layout.per_layer_replicated or (0,) * len(layout.per_layer)
    out, start = [], 0
    for stage, count in enumerate(parts):
        layers = layout.per_layer[start:start + count]
        whole = sum(replicated[start:start + count])
        edge = layout.embedding if stage == 0 else 0
        if stage == len(parts) - 1:
            edge += (layout.lm_head or layout.embedding) + layout.other
        start += count
        out.append(math.ceil((sum(layers) - whole + edge) / tp) + whole)
    return out


@frozen_value(eq=True)
class EncoderProfile:
    """What V1's profile_run spends on a vision encoder before the KV budget is taken (profiles.VLLM_ENCODER_ROWS
    and the note above it): the dummy items, the encoder phase, what stays allocated through the text run."""

    __repr__ = fields_repr

    items: int = 0  # dummy items encoded at once ("profiled with N image items of the maximum feature size")
    item_patches: int = 0
    item_tokens: int = 0
    phase: int = 0  # pixel values + the ViT's largest step over all the items (0: the model file was not read)
    held: int = 0  # pixel values + encoder outputs, kept until the dummy sampler is done
    rule: str = "none"
    source: str = ""
    modality: str = "image"  # the dummy items' modality ("profiled with N <modality> items")
    budget: int = 0  # the encoder cache budget in tokens ("initialized with a budget of N tokens")

    def added(self, text_phase: int) -> int:
        """Bytes the encoder adds to the text phase max(forward, sampler): what max(encoder phase, text phase +
        held) puts above the text phase."""
        return max(self.held, self.phase - text_phase) if self.phase else 0

    def report(self) -> dict:
        return {"items": self.items, "modality": self.modality, "budget": self.budget,
                "item_patches": self.item_patches, "item_tokens": self.item_tokens,
                "encoder_phase": self.phase, "held_through_text": self.held, "rule": self.rule, "source": self.source}


def vit_step_elements(enc: EncoderDummy, attention_widths: int, tp: int = 1,
                      tp_phases: tuple[tuple[int, int], ...] = ()) -> int:
    """Elements per patch live at the ViT's largest step on one rank: the attention step as read
    (profiles.VllmEncoderRow) or the MLP's, residual and norm output beside gate + up + their product + down
    (gated), or fc1's output and its activation (fc1/fc2). Where the row was read at tensor parallel > 1, the
    attention step is its phases' largest and the MLP's inner width is the rank's share."""
    w, i = enc.width, enc.inter
    attention = attention_widths * w
    if tp > 1 and tp_phases:
        attention = max(whole * w + split * w // tp for whole, split in tp_phases)
        i //= tp
    mlp = 3 * (w + i) if enc.gated else max(2 * (w + i), 3 * w + i)
    return max(attention, mlp)


def qwen2_vl_videos(row: P.VllmVideoRow, cfg: VllmConfig, image_patches: int, image_tokens: int, max_len: int,
                    batched: int) -> tuple[int, int, int]:
    """Qwen2/2.5-VL's dummy video for one release (profiles.VLLM_VIDEO_ROWS): (soft tokens of the video the
    encoder budget counts, patches and soft tokens of the video profile_run encodes). The counted one is fitted
    to max_model_len less the images the row takes off; the encoded one to the length the row names, with the
    same images off only where the dummy request carries every modality's limit (0.8.0-0.8.2)."""
    image_limit = row.default_limit if cfg.mm_image_limit is None else cfg.mm_image_limit
    video_limit = row.default_limit if cfg.mm_video_limit is None else cfg.mm_video_limit
    images, videos = {"limits": (image_limit, video_limit), "one": (min(image_limit, 1), 1)}.get(row.images_off,
                                                                                                (0, 1))
    _, _, counted = qwen2_vl_video(image_patches, image_tokens, max_len, row.max_frames, images, videos)
    length = {"batched": batched, "batched-limits": batched, "item": counted}.get(row.encoded_from, max_len)
    encoded_images, encoded_videos = (images, videos) if row.encoded_from == "batched-limits" else (0, 1)
    _, patches, soft = qwen2_vl_video(image_patches, image_tokens, length, row.max_frames, encoded_images,
                                      encoded_videos)
    return counted, patches, soft


def encoder_data_parallel(facts: ModelFacts, cfg: VllmConfig, version: str | None) -> bool:
    """--mm-encoder-tp-mode data in force: tensor parallel > 1 and a model class of the release that supports it
    (profiles.VLLM_MM_ENCODER_TP_MODES); any other model falls back to "weights"."""
    enc = facts.vision_encoder
    if cfg.mm_encoder_tp_mode != "data" or cfg.tensor_parallel_size < 2 or enc is None:
        return False
    return enc.family in P.vllm_encoder_tp_mode_row(P.arithmetic_release("vllm", version)).data_families


def encoder_profile(facts: ModelFacts, cfg: VllmConfig, batched: int, seqs: int, max_len: int,
                    version: str | None, runner: str = "v1") -> EncoderProfile:
    """The V1 encoder profile of a multimodal model for one release (0 bytes for a text-only model): the dummy
    item from the processor (--mm-processor-kwargs max_pixels moves Qwen2/2.5-VL's), as many items as the encoder
    budget holds, capped by max_num_seqs x --limit-mm-per-prompt; none under --skip-mm-profiling. vLLM profiles
    the modality whose item takes the most tokens: Qwen3-VL's video at 0.11-0.12 (profiles.VLLM_VIDEO_ROWS), the
    image otherwise (with an image limit of 0 and no video modelled, nothing). The V2 runner's own profile
    (profiles.VLLM_V2_ENCODER_ROWS) encodes nothing before 0.27 and holds only the outputs from it."""
    enc = facts.vision_encoder
    if enc is None:
        return EncoderProfile()
    if cfg.skip_mm_profiling:
        return EncoderProfile(rule="skipped", source="--skip-mm-profiling (gpu_model_runner.py@v0.10.1.1)")
    v2 = P.vllm_v2_encoder_row(version) if runner == "v2" else None
    if v2 and not v2.profiled:
        return EncoderProfile(rule=v2.rule, source=v2.source)
    patches, tokens = enc.item_patches, enc.item_tokens
    if cfg.mm_max_pixels and enc.patch_factor:
        patches = (qwen_vl_side(cfg.mm_max_pixels, enc.patch_factor) // enc.patch_size) ** 2
        tokens = patches // (enc.patch_factor // enc.patch_size) ** 2
    budget_row = P.vllm_mm_budget_row(version)
    outputs, limit, modality, video = tokens, cfg.mm_image_limit, "image", None
    if budget_row.item_tokens == "contiguous" and enc.break_tokens:
        tokens += enc.break_tokens  # the placeholder's text around the image tokens counts against the budget
    modelled = enc.video_max_pixels or enc.video_per_frame
    row_v = P.vllm_video_row(enc.family, version) if modelled and cfg.mm_video_limit != 0 else None
    if row_v:
        if enc.video_per_frame:  # the frames are the image as sized above (max_pixels included)
            v_counted, v_patches, v_soft = qwen2_vl_videos(row_v, cfg, patches, tokens, max_len, batched)
        else:
            _, v_patches, v_soft = qwen3_vl_video(enc, max_len, row_v.max_frames)
            v_counted = v_soft
        v_tokens = int(v_counted * row_v.tokens_per_soft_token)
        # the registry's max() keeps the first modality of equal tokens: the image
        if v_tokens > tokens or cfg.mm_image_limit == 0:
            patches, tokens, outputs, limit, modality, video = v_patches, v_tokens, v_soft, cfg.mm_video_limit, \
                "video", row_v
    if modality == "image" and cfg.mm_image_limit == 0:
        return EncoderProfile(rule="image-limit-0", source="--limit-mm-per-prompt image 0 (no video modelled)")
    budget = max(batched, tokens)
    floors = P.arithmetic_release("vllm", version) >= P.known_version(P.VLLM_MM_ITEMS_FLOOR_SINCE)
    by_budget = budget // tokens if floors else -(-budget // tokens)
    limit = P.VLLM_MM_LIMIT_DEFAULT if limit is None else limit
    per_prompt = max(1, min(limit, max_len // tokens)) if floors else limit
    items = max(1, min(by_budget, seqs * per_prompt))
    element = 4 if (facts.dtype or "").lower() in ("float32", "fp32") else 2
    pixels = items * patches * enc.pixel_elements_per_patch * element
    row_width = enc.out_width * enc.output_streams * element
    held = (0 if v2 and not v2.pixels_held else pixels) + items * outputs * row_width
    widened = {"budget": budget, "item": tokens}.get(budget_row.widened_to, 0) if not v2 else 0
    if widened > outputs:
        # each item's output copied into a zeroed tensor that many rows long; the encoder's own output stays alive
        held += items * widened * row_width
    row = P.vllm_encoder_row(enc.family, version)
    if row:
        tp, encoded = cfg.tensor_parallel_size, items
        data = encoder_data_parallel(facts, cfg, version)
        if data:
            # the heaviest rank's share of the equal dummies, run by the whole tower as at TP 1, its pixel values
            # copied out of the whole batch every rank holds
            encoded = -(-items // tp)
            pixels += encoded * patches * enc.pixel_elements_per_patch * element
            tp = 1
        step = vit_step_elements(enc, row.attention_widths, tp, row.tp_phases) + enc.held_beside_blocks
        phase = pixels + encoded * patches * step * element
        rule, source = f"max(encoder-phase, text+held):{row.rule}", row.source
        if data:
            tp_mode = P.vllm_encoder_tp_mode_row(P.arithmetic_release("vllm", version))
            rule, source = f"{rule}:encoder-tp-data", f"{source}; {tp_mode.source}"
        if video:
            rule, source = f"{rule}:{video.rule}", f"{source}; {video.source}"
        if budget_row.rule and (widened > outputs or tokens > outputs):
            rule, source = f"{rule}:{budget_row.rule}", f"{source}; {budget_row.source}"
        if v2:
            rule, source = f"{rule}:{v2.rule}", f"{source}; {v2.source}"
    else:
        phase, rule, source = 0, "not-derived", f"the {enc.family} model file was not read for this release"
    return EncoderProfile(items, patches, tokens, phase, held, rule, source, modality, budget)


def cpu_offloaded(facts: ModelFacts, tp: int, parts: list[int], offload: int) -> list[int]:
    """--cpu-offload-gb per stage rank: vLLM moves whole parameters of the decoder layers to the CPU
    (`maybe_offload_to_cpu` on each layer make_layers builds) until the given GiB are there; the embedding and the
    LM head stay on the GPU. "Model loading took" drops by that much (13.60 -> 5.6 GiB for OLMo-2-7B at 8)."""
    layout = weight_layout(facts)
    out, start = [], 0
    for count in parts:
        out.append(min(offload, layers_on_rank(layout, start, start + count, tp)))
        start += count
    return out


def flag_weights(facts: ModelFacts, cfg: VllmConfig, parts: list[int], weights_by_stage: list[int],
                 notes: list[str], version: str | None = None
                 ) -> tuple[list[int], list[int], list[LoraSlots | None]]:
    """Each stage's weights after --cpu-offload-gb and --enable-lora; also what each moved or added. The LoRA
    slots are made while the model loads, so "Model loading took" (the weights term) holds them (lora.py)."""
    tp, pp = cfg.tensor_parallel_size, len(parts)
    offloaded = cpu_offloaded(facts, tp, parts, cfg.cpu_offload_bytes) if cfg.cpu_offload_bytes else [0] * pp
    if cfg.cpu_offload_bytes:
        weights_by_stage = [w - o for w, o in zip(weights_by_stage, offloaded)]
        notes.append(f"--cpu-offload-gb keeps {max(offloaded) / GiB:.2f} GiB of the decoder layers per GPU on the CPU")
    if encoder_data_parallel(facts, cfg, version):
        # every rank holds the whole tower (ReplicatedLinear), not its 1/tp share counted with the embedding
        vision = facts.vision_params * UNQUANTISED_BYTES.get(facts.dtype or "bfloat16", 2)
        added = vision - vision // tp
        weights_by_stage = [weights_by_stage[0] + added, *weights_by_stage[1:]]
        notes.append(f"--mm-encoder-tp-mode data: the vision encoder whole on each GPU, +{added / GiB:.2f} GiB per "
                     "GPU over its tensor-parallel share; each GPU encodes its share of the dummy items")
    elif cfg.mm_encoder_tp_mode == "data" and tp > 1 and facts.vision_encoder is not None:
        notes.append(f"--mm-encoder-tp-mode data: vLLM {version or P.DEFAULT_VERSIONS['vllm']} does not support it "
                     f"for this model ({facts.vision_encoder.family}) and falls back to 'weights' (tensor-parallel)")
    if cfg.lora is None:
        return weights_by_stage, offloaded, [None] * pp
    from gpustack_guard.core.memory.lora import vllm_slots  # LoRA specs only (import budget)

    slots = vllm_slots(facts, cfg.lora, tp, parts, version)
    weights_by_stage = [w + s.bytes for w, s in zip(weights_by_stage, slots)]
    worst = max(slots, key=lambda s: s.bytes)
    notes.append(f"LoRA: {cfg.lora.slots} slot(s) at rank {cfg.lora.rank}, +{worst.bytes / GiB:.2f} GiB per GPU in "
                 f"the weights ({', '.join(worst.modules) or 'no module'})")
    notes.extend(f"LoRA: {text}" for text in worst.unread)
    return weights_by_stage, offloaded, list(slots)


def engine_generation(version: str | None, cfg: VllmConfig, gpu_name: str) -> tuple[P.VllmProfile, str]:
    """The profile row that applies, with V0 forced where the release fell back for a feature; and why."""
    profile = P.vllm_profile(version)
    parsed = P.arithmetic_release("vllm", version)
    env = (cfg.use_v1_env or "").strip()
    if profile.engine == "v0":
        if env == "1" and parsed >= P.known_version(P.VLLM_V1_OPT_IN_SINCE):
            return replace(P.vllm_profile(P.VLLM_V1_DEFAULT_SINCE), since=profile.since), "VLLM_USE_V1=1"
        return profile, ""
    forced = []
    kv_fp8 = (cfg.kv_cache_dtype or "auto").lower().startswith("fp8")
    triggers = {
        P.VLLM_V0_FALLBACKS[0].feature: cfg.pipeline_parallel_size > 1 and
        (cfg.distributed_executor_backend or "mp").lower() != "ray",
        # flash_attn_supports_fp8(): FA3, i.e. capability 9.x; an unknown name is not assumed to be Hopper
        P.VLLM_V0_FALLBACKS[1].feature: kv_fp8 and gpu_arch.major(gpu_name) != 9,
        P.VLLM_V0_FALLBACKS[2].feature: (cfg.num_scheduler_steps or 1) > 1,
        P.VLLM_V0_FALLBACKS[3].feature: env == "0",
        P.VLLM_V0_FALLBACKS[4].feature: gpu_arch.below(gpu_name, (8, 0)),
    }
    for rule in P.VLLM_V0_FALLBACKS:
        if triggers[rule.feature] and P.known_version(rule.since) <= parsed < P.known_version(rule.until):
            forced.append(rule.feature)
    if not forced:
        return profile, ""
    v0 = replace(P.vllm_profile(P.VLLM_LAST_V0_DEFAULT), since=profile.since)
    return v0, "V0 engine: " + "; ".join(forced)


def _env_int(value: str | None) -> int | None:
    """An env value as vLLM's int() reads it (surrounding spaces allowed); None when unset or not an integer (vLLM
    refuses to start on that, and the estimate keeps the release's default)."""
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


def model_runner(facts: ModelFacts, version: str | None, env_value: str | None = None) -> str:
    """The model runner the release builds for this model (profiles.VLLM_RUNNER_ROWS): "v1" or "v2". The env's
    VLLM_USE_V2_MODEL_RUNNER decides first where set, on the "dense" releases whose two runners' profiles are both
    modelled (config/vllm.py@v0.25.0..@v0.28.0 use_v2_model_runner reads it through envs.maybe_convert_bool,
    bool(int(value))); a release whose V2 profile is not read stays "v1", and from 0.29 the rows are V2's."""
    row = P.vllm_runner_row(version)
    if row.default == "v1":
        return "v1"
    forced = _env_int(env_value) if row.default == "dense" else None
    if forced is not None:
        return "v2" if forced else "v1"
    if row.default == "v2" or facts.architecture in row.architectures:
        return "v2"
    return "v1" if facts.is_moe or facts.recurrent_layers or facts.is_gated_delta or facts.is_mamba2 else "v2"


def runner_rows(facts: ModelFacts, version: str | None, profile: P.VllmProfile, sampler: P.VllmSamplerRow,
                notes: list[str], cfg_env: str | None = None) -> tuple[str, P.VllmProfile, P.VllmSamplerRow]:
    """The model runner and the profile and sampler rows it runs with. A "dense" release's model on the V2 runner
    (profiles.VLLM_RUNNER_ROWS): its graphs are captured after the KV cache from the headroom, sized as vLLM's
    estimate would size them; its profile samples without top-k/top-p and its warm-up runs V2's rows."""
    runner = model_runner(facts, version, cfg_env) if profile.engine == "v1" else "v1"
    if runner != "v2" or P.vllm_runner_row(version).default != "dense":
        return runner, profile, sampler
    notes.append("V2 model runner (this release's default for a dense model): no CUDA-graph estimate in the budget, "
                 "the profile samples without top-k/top-p")
    return (runner, replace(profile, graphs_profiled=False, graphs_estimated=True),
            replace(sampler, profiled="no-top-k-top-p", warmup_rows="v2"))


def gated_delta_shape(facts: ModelFacts, cfg: VllmConfig, version: str | None, gpu_name: str,
                      notes: list[str]) -> GatedDeltaKV:
    """A Gated DeltaNet hybrid's geometry; raises GatedDeltaUnsupported where its layout is not modelled."""
    from gpustack_guard.core.memory.gated_delta import GatedDeltaKV, is_qwen3_5

    if is_qwen3_5(facts) and \
            P.arithmetic_release("vllm", version) < P.known_version(P.VLLM_QWEN3_5_SINCE):
        raise GatedDeltaUnsupported(f"vLLM before {P.VLLM_QWEN3_5_SINCE} has no Qwen3.5/3.6 model (models/registry.py"
                                    f"@v{P.VLLM_QWEN3_5_SINCE} adds them): it does not serve this model")
    prefix = P.vllm_gated_delta_prefix_row(version)
    caching = prefix.default_on if cfg.enable_prefix_caching is None else cfg.enable_prefix_caching
    if caching and prefix.turned_off:
        notes.append("--enable-prefix-caching is turned off by this release for a Gated DeltaNet model (\"Hybrid or "
                     "mamba-based model detected ... disabling\"): one state page per sequence")
        caching = False
    if caching and prefix.align_pages is None:
        raise GatedDeltaUnsupported(prefix.note)
    spec_tokens = draft_layers = 0
    if cfg.speculative_flag:
        unread = gated_delta_draft_unread(facts, cfg, version)
        if unread:
            raise GatedDeltaUnsupported(unread)
        draft_layers = gated_delta_mtp_layers(facts)
        spec_tokens = cfg.num_speculative_tokens or draft_layers  # vLLM's default: the MTP layers' n_predict
    if cfg.pipeline_parallel_size > 1:
        raise GatedDeltaUnsupported("pipeline parallelism splits a Gated DeltaNet model's linear and full layers "
                                    "unevenly: gsg sizes it on one stage only")
    mamba_cache_mode(cfg, caching, version, "align", notes, supports_all=False)
    if prefix.flashinfer_prefill:
        unread = gated_delta_checkpoint_unread(facts, cfg, gpu_name, caching)
        if unread:
            raise GatedDeltaUnsupported(unread)
    shape = GatedDeltaKV(facts, cfg.tensor_parallel_size, cfg.kv_cache_dtype, cfg.block_size, version, gpu_name,
                         cfg.mamba_cache_dtype, cfg.mamba_ssm_cache_dtype,
                         prefix.align_pages if caching and prefix.align_pages else 1,
                         fa4_page(facts, cfg, version, gpu_name), spec_tokens, draft_layers)
    if caching:
        why = " (this release's default for hybrid models)" if cfg.enable_prefix_caching is None else ""
        notes.append(f"prefix caching on{why}: vLLM's mamba cache mode 'align' keeps {shape.state_pages} state "
                     "pages per sequence in every linear-attention layer")
    _note_block_raised(shape, "Gated DeltaNet", notes)
    return shape


def mamba2_shape(facts: ModelFacts, cfg: VllmConfig, version: str | None, gpu_name: str,
                 notes: list[str]) -> GatedDeltaKV:
    """A Mamba-2 hybrid's geometry (core/memory/mamba2.py); raises GatedDeltaUnsupported where it is not read."""
    from gpustack_guard.core.memory.mamba2 import Mamba2KV

    row = P.vllm_mamba2_row(version)
    caching = P.vllm_gated_delta_prefix_row(version).default_on if cfg.enable_prefix_caching is None \
        else cfg.enable_prefix_caching
    if caching and row.modelled and row.prefix_turned_off:
        notes.append("--enable-prefix-caching is turned off by this release for a Mamba-2 hybrid (\"Hybrid or "
                     "mamba-based model detected: disabling prefix caching\"): one state page per sequence")
        caching = False
    mode_row = P.vllm_mamba_cache_mode_row(version)
    if caching and row.modelled and not mode_row.read:
        raise GatedDeltaUnsupported(mode_row.note)
    if cfg.speculative_flag:
        raise GatedDeltaUnsupported(f"--{cfg.speculative_flag} adds speculative state rows to a Mamba-2 hybrid: gsg "
                                    "has not read them")
    if cfg.pipeline_parallel_size > 1:
        raise GatedDeltaUnsupported("pipeline parallelism splits a Mamba-2 hybrid's state and attention layers "
                                    "unevenly: gsg sizes it on one stage only")
    if cfg.use_replayssm:  # mamba_mixer2.py@v0.34.0 get_state_shape: 5 states a layer with the replay ring, not 2
        raise GatedDeltaUnsupported("--use-replayssm adds replay-ring states to every Mamba-2 layer "
                                    "(mamba_mixer2.py@v0.34.0): gsg has not read their shape")
    mode = mamba_cache_mode(cfg, caching, version, mode_row.mamba2_default, notes)
    shape = Mamba2KV(facts, cfg.tensor_parallel_size, cfg.kv_cache_dtype, cfg.block_size, version, gpu_name,
                     cfg.mamba_cache_dtype, cfg.mamba_ssm_cache_dtype, fa4_page(facts, cfg, version, gpu_name),
                     mode, cfg.mamba_block_size if mode == "all" else None)
    if mode != "none":
        why = " (this release's default for hybrid models)" if cfg.enable_prefix_caching is None else ""
        pages = "one state page per block of tokens" if mode == "all" else f"{shape.state_pages} state pages"
        notes.append(f"prefix caching on{why}: vLLM's mamba cache mode '{mode}' keeps {pages} per sequence in every "
                     f"Mamba-2 layer" + (f", the block a multiple of {shape.alignment} tokens (lcm of the "
                                         f"{shape.chunk}-token Mamba chunk and the kernel alignment)"
                                         if mode == "all" else ""))
    if shape.ssm_override:
        notes.append(f"vLLM keeps this Nemotron-H model's temporal Mamba state at {shape.ssm_override} "
                     "(NemotronHForCausalLMConfig: the config's mamba_ssm_cache_dtype, else the release's default)")
    _note_block_raised(shape, "Mamba-2", notes)
    return shape


def mamba_cache_mode(cfg: VllmConfig, caching: bool, version: str | None, default: str, notes: list[str],
                     supports_all: bool = True) -> str:
    """The mamba cache mode vLLM runs (profiles.VLLM_MAMBA_CACHE_MODE_ROWS): "none" without prefix caching (an
    explicit mode is reset), else the explicit "all" or "align" where the release honours it, else `default`; "all"
    falls back to "align" on a model without SupportsMambaPrefixCaching (Qwen3-Next, Qwen3.5: models/qwen3_next.py,
    qwen3_5.py). --mamba-block-size exits without prefix caching and is replaced by the block in "align"."""
    row = P.vllm_mamba_cache_mode_row(version)
    given = (cfg.mamba_cache_mode or "none").lower()
    if not caching:
        if cfg.mamba_block_size:
            raise GatedDeltaUnsupported(f"--mamba-block-size {cfg.mamba_block_size} without prefix caching: vLLM "
                                        "exits at start-up unless it equals max_model_len (\"--mamba-block-size can "
                                        "only be set with --enable-prefix-caching\", config/vllm.py "
                                        "validate_mamba_block_size)")
        if given != "none":
            notes.append(f"--mamba-cache-mode {given} without prefix caching: vLLM runs mode 'none' (\"Mamba cache "
                         "mode is set to 'none' when prefix caching is disabled\")")
        return "none"
    if given == "all" and row.flag and not row.all_mode:
        raise GatedDeltaUnsupported(f"vLLM {version} has no mamba cache mode 'all' (config/cache.py MambaCacheMode "
                                    "align|none from 0.32.0): argparse refuses it at start-up")
    mode = given if given in ("all", "align") and row.flag else default
    if mode == "all" and not supports_all:
        notes.append("--mamba-cache-mode all falls back to 'align' on a Gated DeltaNet model (\"Hybrid or "
                     "mamba-based model detected without support for prefix caching with Mamba cache 'all' mode: "
                     "falling back to 'align' mode.\")")
        mode = "align"
    if cfg.mamba_block_size and mode != "all":
        notes.append(f"--mamba-block-size {cfg.mamba_block_size} is replaced by the attention block in mamba cache "
                     "mode 'align' (platforms/interface.py _align_hybrid_block_size)")
    return mode


def _note_block_raised(shape: GatedDeltaKV, state: str, notes: list[str]) -> None:
    if shape.block_raised:
        notes.append(f"vLLM sets the attention block size to {shape.block_size} tokens so that one page holds a "
                     f"{state} state ({shape.state_bytes:,} B per layer and sequence)")


def gated_delta_mtp_layers(facts: ModelFacts) -> int:
    """The MTP layers vLLM builds for a Gated DeltaNet target: qwen3_next_mtp.py reads num_nextn_predict_layers,
    qwen3_5_mtp.py mtp_num_hidden_layers (not a ModelFacts key); both default to 1, every published config's value."""
    qwen3_next = P.VLLM_GATED_DELTA_MTP_TARGETS.get(facts.architecture or "") == "qwen3_next_mtp.py"
    return (facts.num_nextn_predict_layers or 1) if qwen3_next else 1


def gated_delta_draft_unread(facts: ModelFacts, cfg: VllmConfig, version: str | None) -> str | None:
    """Why a draft on a Gated DeltaNet target is not sized (GSG030), or None (profiles.VLLM_GATED_DELTA_SPEC)."""
    method = (cfg.speculative_method or "").lower()
    if method not in P.VLLM_GATED_DELTA_MTP_METHODS or facts.architecture not in P.VLLM_GATED_DELTA_MTP_TARGETS:
        return (f"--{cfg.speculative_flag}{f' (method {method})' if method else ''} adds speculative state slots and "
                "blocks per sequence to a Gated DeltaNet model: gsg reads them only for the target's own MTP layer "
                "(method mtp, qwen3_next_mtp or qwen3_5_mtp on Qwen3-Next or Qwen3.5/3.6)")
    row = P.vllm_gated_delta_spec_row(version)
    if not row.read:
        return (f"vLLM before {P.VLLM_GATED_DELTA_SPEC[1].since} sizes a Gated DeltaNet model's speculative state "
                f"blocks by a rule gsg has not read ({row.source})")
    if facts.quant_method:
        return (f"the MTP layer's fc of a {facts.quant_method} checkpoint is quantised or kept in bf16 by the "
                "checkpoint's format (qwen3_5_mtp.py fc_quant): gsg sizes the draft of unquantised targets only")
    return None


def gated_delta_checkpoint_unread(facts: ModelFacts, cfg: VllmConfig, gpu_name: str, caching: bool) -> str | None:
    """Why gsg cannot size a 0.33.0+ Gated DeltaNet layout (profiles.VLLM_GATED_DELTA_PREFIX_ROWS 0.33.0), or None:
    ReplaySSM changes the state layout; in mode "align" FlashInfer's GDN prefill adds a checkpoint page, a 64-token
    grid and a workspace, and where it runs depends on the GPU and the CUDA runtime."""
    if cfg.use_replayssm:
        return "--use-replayssm changes a Gated DeltaNet model's state layout (replay rings, 16-byte state " \
               "alignment in 0.34.0): gsg has not read it"
    if not caching:
        return None  # mode "none": no checkpoint, the layout of 0.32.0
    if cfg.gdn_prefill_backend not in (None, "auto"):
        return f"--additional-config gdn_prefill_backend '{cfg.gdn_prefill_backend}' picks the Gated DeltaNet " \
               "prefill kernel whose checkpoints shape prefix caching in vLLM 0.33.0+: gsg reads only 'auto'"
    capability = gpu_arch.compute_capability(gpu_name)
    why = "--no-enable-prefix-caching (mode 'none') is sized"
    if capability is None:
        return "vLLM 0.33.0+ lays prefix caching of a Gated DeltaNet model out by the GDN prefill kernel, which " \
               f"depends on the GPU: name a known NVIDIA GPU, or {why}"
    if capability == (9, 0):
        return "vLLM 0.33.0+ runs the GDN prefill with FlashInfer on compute capability 9.0, which with prefix " \
               "caching adds a checkpoint page per sequence, a 64-token block grid and a float32 checkpoint " \
               f"workspace gsg has not sized; {why}"
    if capability[0] in (10, 12) and facts.linear_key_head_dim == 128:
        return f"vLLM 0.33.0+ runs the GDN prefill with FlashInfer on compute capability {capability[0]}.x only " \
               "with CUDA runtime 13+, which a spec does not give; with it prefix caching adds a checkpoint page " \
               f"per sequence and a 64-token block grid; {why}"
    return None  # Triton's prefill: no checkpoint, 0.32.0's "align" layout


def align_budget_refusal(shape, scheduled: int, version: str | None) -> str | None:
    """vLLM's start-up assert in mamba cache mode "align" (profiles.VLLM_GATED_DELTA_ALIGN_BUDGET_ROWS): the raised
    attention block must fit one step's max_num_batched_tokens."""
    if not getattr(shape, "is_gated_delta", False) or shape.state_pages < 2:
        return None
    if not P.vllm_align_budget_row(version).checked or shape.block_size <= scheduled:
        return None
    return (f"In Mamba cache align mode, block_size ({shape.block_size}) must be <= max_num_batched_tokens "
            f"({scheduled}).")


def kv_shape(facts: ModelFacts, cfg: VllmConfig, in_flight_tokens: int, notes: list[str],
             version: str | None = None, gpu_name: str = "") -> KVShape | CompressedKV | GatedDeltaKV:
    """The KV geometry vLLM builds for this model (all layers for KVShape); notes what it overrides."""
    if facts.is_gated_delta:
        return gated_delta_shape(facts, cfg, version, gpu_name, notes)
    if facts.is_mamba2:
        return mamba2_shape(facts, cfg, version, gpu_name, notes)
    if not facts.is_compressed_attention:
        if facts.split_attention:
            gemma4_unread(facts, cfg, version, gpu_name)
        block = cfg.block_size or P.vllm_default_block_size(version)
        if not facts.is_mla and not cfg.block_size:
            block, reason = dense_block_size(facts, cfg, version, gpu_name)
            if reason:
                notes.append(reason)
        if facts.is_mla:
            block, backend = mla_block_size(facts, cfg, version, gpu_name)
            if gpu_arch.compute_capability(gpu_name) is None and not cfg.block_size:
                notes.append(f"GPU not named: the MLA block size ({block}, {backend}) is Hopper's; vLLM picks the "
                             "MLA backend, and its block, by compute capability")
            if cfg.block_size and block != cfg.block_size:
                notes.append(f"vLLM {version or P.DEFAULT_VERSIONS['vllm']} forces block size {block} for "
                             f"{backend} over --block-size {cfg.block_size} (platforms/cuda.py)")
        kv = KVShape(facts, cfg.tensor_parallel_size, 1, cfg.kv_cache_dtype, block, in_flight_tokens)
        boundary_layers(kv, facts, cfg, notes)
        align = P.vllm_mla_align_row(version).align_bytes
        # CUDA only (current_platform.is_cuda()); the non-CUDA names SGLang's table lists are not CUDA for vLLM either
        if facts.is_mla and align and not re.search(P.SGLANG_NON_CUDA, gpu_name.lower()):
            kv.layer_bytes = mla_aligned_layer_bytes(facts, cfg.kv_cache_dtype, align)
            notes.append(f"vLLM {version} pads each MLA latent entry to {align} bytes "
                         f"({kv.layer_bytes} B per token and layer; worker/cache_engine.py)")
        return kv
    from gpustack_guard.core.memory.deepseek_v4 import CompressedKV

    shape = CompressedKV(facts, cfg.pipeline_parallel_size, in_flight_tokens)
    if cfg.block_size and cfg.block_size != shape.block_size:
        notes.append(f"DeepSeek-V4 runs with block size {shape.block_size} whatever --block-size says")
    if (cfg.kv_cache_dtype or "auto").lower() not in ("fp8", "fp8_e4m3", "fp8_ds_mla"):
        notes.append("KV sized as fp8_ds_mla, the layout vLLM's DeepSeek-V4 kernels use; set --kv-cache-dtype fp8")
    notes.append(f"DeepSeek-V4's forward peak holds {P.VLLM_V4_UNREAD_PER_TOKEN:,} B per batched token measured on "
                 "one log (vllm#44376), not derived: the compiled graph's liveness is not read")
    return shape


def boundary_layers(kv: KVShape, facts: ModelFacts, cfg: VllmConfig, notes: list[str]) -> None:
    """TurboQuant and UltraQuant keep a dense model's first and last layers at the model's dtype
    (kv_formats.BOUNDARY_SKIP_DTYPES): those layers take the plain bytes per token."""
    name = (cfg.kv_cache_dtype or "auto").lower()
    if KV_DTYPE_BYTES.get(name, 0) is None or kv.window_layers or kv.split or facts.is_mla:
        return
    if name in KV_DTYPE_BYTES and not cfg.kv_skip_layers:
        return
    from gpustack_guard.core.memory import kv_formats as KVF  # only a packed dtype or skipped layers reach it

    kept = KVF.boundary_layers(name, kv.layers, cfg.kv_skip_layers)
    native = kv_bytes_per_token_layer(facts, cfg.tensor_parallel_size, "auto")
    if not kept or native == kv.layer_bytes:
        return
    kv.native_layers, kv.native_layer_bytes = kept, native
    why = " and ".join(([f"--kv-cache-dtype-skip-layers {' '.join(cfg.kv_skip_layers)}"] if cfg.kv_skip_layers else [])
                       + (["TurboQuantConfig.get_boundary_skip_layers"] if name in KVF.BOUNDARY_SKIP_DTYPES else []))
    notes.append(f"--kv-cache-dtype {name}: vLLM keeps {kept} layers at the model's dtype ({native} B per token and "
                 f"layer; the other {kv.layers - kept} {kv.layer_bytes} B; {why})")


def dense_block_size(facts: ModelFacts, cfg: VllmConfig, version: str | None, gpu_name: str) -> tuple[int, str]:
    """vLLM's KV block for a non-MLA model given no --block-size: the release's default, raised to a FlashAttention 4
    kernel page where FLASH_ATTN runs one (profiles.VLLM_FA4_PAGE), with the note saying so ("" when not raised).
    An unknown GPU keeps the default."""
    default = P.vllm_default_block_size(version)
    page = fa4_page(facts, cfg, version, gpu_name)
    if page <= default:
        return default, ""
    major = gpu_arch.major(gpu_name)
    return page, (f"vLLM {version or P.DEFAULT_VERSIONS['vllm']} raises the KV block to {page} tokens for "
                  f"FlashAttention 4's head-{facts.dim_head} kernel on compute capability {major}.x (FLASH_ATTN "
                  "get_preferred_block_size)")


def gemma4_beyond_checkpoint(facts: ModelFacts, tp: int, parts: list[int], version: str | None,
                             weights_by_stage: list[int], notes: list[str]) -> list[int]:
    """Each stage's weights with what vLLM's Gemma 4 holds beyond the checkpoint (V slices, rope caches)."""
    value_slices = gemma4_value_slices(facts, tp, parts, version)
    rope_caches = gemma4_rope_caches(facts, parts, version)
    if not any(value_slices) and not any(rope_caches):
        return weights_by_stage
    notes.append(f"Gemma 4 holds {max(value_slices) / GiB:.2f} GiB of V slices for its attention_k_eq_v layers "
                 f"and {max(rope_caches) / GiB:.2f} GiB of rope cos/sin caches beyond the checkpoint per rank "
                 "(profiles.VLLM_GEMMA4)")
    return [w + v + r for w, v, r in zip(weights_by_stage, value_slices, rope_caches)]


def gemma4_value_slices(facts: ModelFacts, tp: int, parts: list[int], version: str | None) -> list[int]:
    """Bytes per pipeline stage of the V slices vLLM keeps for Gemma 4's attention_k_eq_v full-attention layers
    beyond the checkpoint (profiles.VLLM_GEMMA4 value_slice): hidden x KV heads on the rank x head size each."""
    full = facts.full_attention_layer_ids or ()
    if not (facts.split_attention and facts.full_attention_k_eq_v and full) or \
            not P.vllm_gemma4_row(version).value_slice:
        return [0] * len(parts)
    heads, head_size, _ = facts.layer_attention_shape(full[0])
    assert facts.hidden_size and heads and head_size  # split_attention: the full layers' shape is known
    # QKVParallelLinear gives each rank max(1, heads / tp) KV heads (replicated when TP exceeds them)
    high = UNQUANTISED_BYTES.get(facts.dtype or "bfloat16", 2)
    kept = facts.quant_skips_attention or (facts.quant_method or "").lower() in EXPERTS_ONLY
    per_param = high if kept else linear_bytes_per_param(facts.quant_method, facts.quant_bits, facts.quant_group_size,
                                                          high, facts.quant_zero_point)
    per_layer = math.ceil(facts.hidden_size * max(1, heads // tp) * head_size * per_param)
    starts = [sum(parts[:s]) for s in range(len(parts))]
    return [per_layer * sum(1 for layer in full if start <= layer < start + count)
            for start, count in zip(starts, parts)]


def gemma4_rope_caches(facts: ModelFacts, parts: list[int], version: str | None) -> list[int]:
    """Bytes per pipeline stage of Gemma 4's rope cos/sin caches (profiles.VLLM_GEMMA4 rope_caches): one of
    max_position_embeddings rows x the head size per layer kind the stage holds, whole on every TP rank."""
    full = facts.full_attention_layer_ids or ()
    rows, window_head, full_head = facts.max_position_embeddings, facts.dim_head, facts.full_attention_head_dim
    if not (facts.split_attention and full and rows and window_head and full_head) or \
            not P.vllm_gemma4_row(version).rope_caches:
        return [0] * len(parts)
    element = UNQUANTISED_BYTES.get(facts.dtype or "bfloat16", 2)  # get_rope's dtype: the model's default dtype
    starts = [sum(parts[:s]) for s in range(len(parts))]
    caches = []
    for start, count in zip(starts, parts):
        full_here = sum(1 for layer in full if start <= layer < start + count)
        width = (full_head if full_here else 0) + (window_head if count > full_here else 0)
        caches.append(rows * width * element)
    return caches


def rope_cache_positions(table: RopeTable, row: P.VllmRopeRow) -> int:
    """The rows of one rope table's cos/sin cache in a release (profiles.ROPE_CACHE_POSITIONS, VLLM_ROPE_CACHE):
    torch.arange of a float length holds its ceiling."""
    basis = P.ROPE_CACHE_POSITIONS.get(table.rope_type, "max_position")
    rows = table.max_position
    if basis == "max_position x factor" and table.factor:
        rows = math.ceil(table.max_position * table.factor)
    elif basis == "original x factor" and table.factor and table.original_max_position:
        rows = math.ceil(table.original_max_position * table.factor)
    elif basis == "original + max_position" and table.original_max_position:
        rows = (table.original_max_position + table.max_position) * row.longrope_copies
    return rows * (row.mrope_position_factor if table.mrope else 1)


def rope_cache_bytes(facts: ModelFacts, version: str | None) -> int:
    """The rotary cos/sin caches vLLM keeps beside the weights on every rank (profiles.VLLM_ROPE_CACHE): one per
    distinct rope table, rows x rotary width at the model dtype, or FP32 where the model file asks for it. Gemma 4's
    are counted by gemma4_rope_caches."""
    if not facts.rope_tables or facts.split_attention:
        return 0
    row = P.vllm_rope_row(version)
    fp32 = (facts.architecture or "") in P.VLLM_ROPE_FP32_ARCHITECTURES
    element = 4 if fp32 else UNQUANTISED_BYTES.get(facts.dtype or "bfloat16", 2)
    return sum(rope_cache_positions(t, row) * t.rotary_dim for t in facts.rope_tables) * element


def with_rope_caches(facts: ModelFacts, version: str | None, weights_by_stage: list[int],
                     notes: list[str]) -> list[int]:
    """Each stage's weights with the rope caches (rope_cache_bytes): every stage builds its layers' rotary
    embeddings, and each table serves layers on every stage (Gemma 3's two kinds alternate every six layers)."""
    caches = rope_cache_bytes(facts, version)
    if not caches:
        return weights_by_stage
    tables = len(facts.rope_tables)
    notes.append(f"vLLM keeps {caches / MiB:,.1f} MiB of rotary cos/sin cache{'s' if tables > 1 else ''} beside the "
                 f"weights per rank ({tables} rope table{'s' if tables > 1 else ''}; profiles.VLLM_ROPE_CACHE)")
    return [w + caches for w in weights_by_stage]


def gemma4_unread(facts: ModelFacts, cfg: VllmConfig, version: str | None, gpu_name: str) -> None:
    """Raise LayoutUnsupported where a release runs Gemma 4's split attention in a way not read
    (profiles.VLLM_GEMMA4): no model file, or FA4 kernel pages that differ between the two layer kinds."""
    shown = version or P.DEFAULT_VERSIONS["vllm"]
    row = P.vllm_gemma4_row(version)
    if not row.modelled:
        raise LayoutUnsupported(f"vLLM {shown} has no Gemma 4 model (models/gemma4.py ships from 0.19.0)")
    pages = P.vllm_fa4_page_row(version)
    major = gpu_arch.major(gpu_name)
    fp8 = (cfg.kv_cache_dtype or "auto").strip().lower().startswith("fp8")
    if (pages.hd256_page and major == 10) or (pages.sm90_fp8_d512_page and major == 9 and fp8):
        raise LayoutUnsupported(f"vLLM {shown} may give Gemma 4's window and full-attention layers different FA4 "
                                f"kernel pages on this GPU{' with an fp8 KV cache' if fp8 else ''} (profiles."
                                "VLLM_FA4_PAGE), which gsg has not read")


def fa4_page(facts: ModelFacts, cfg: VllmConfig, version: str | None, gpu_name: str) -> int:
    """The only kernel page FLASH_ATTN advertises where it runs a FlashAttention 4 kernel that needs one
    (profiles.VLLM_FA4_PAGE), else 0."""
    row = P.vllm_fa4_page_row(version)
    major = gpu_arch.major(gpu_name)
    backend = (cfg.attention_backend or "").strip().upper()
    kv = (cfg.kv_cache_dtype or "auto").strip().lower()
    head = facts.dim_head
    mm_prefix = facts.vision_params > 0 and facts.architecture in P.VLLM_MM_PREFIX_ARCHITECTURES
    fa2_fallback = facts.attention_sinks or facts.attention_softcap or mm_prefix  # _fa4_hd256_fallback_reason
    if row.hd256_page and major == 10 and backend == "FLASH_ATTN" and head == 256 and \
            kv in ("auto", "bfloat16", "float16") and not fa2_fallback:
        return row.hd256_page  # FA4's head-256 kernel (anything it refuses runs FA2, which takes the default)
    if row.sm90_fp8_d512_page and major == 9 and backend in ("", "FLASH_ATTN") and head == 512 and \
            kv in ("fp8", "fp8_e4m3"):
        return row.sm90_fp8_d512_page  # FA3 stops at head 256; FA4's fp8-KV dequant kernel reads 64-token pages
    return 0


def mla_block_size(facts: ModelFacts, cfg: VllmConfig, version: str | None, gpu_name: str) -> tuple[int, str]:
    """The KV block size vLLM runs an MLA model with on CUDA, and the attention backend it follows
    (profiles.VLLM_MLA_BLOCK). An unnamed GPU is sized as Hopper, the usual MLA host."""
    row = P.vllm_mla_block_row(version)
    if row.mode == "keep":
        return cfg.block_size or P.vllm_default_block_size(version), "the MLA backend"
    major, minor = gpu_arch.compute_capability(gpu_name) or (9, 0)
    blackwell = major == 10 and (row.blackwell_family or minor == 0)
    flashinfer = row.flashinfer_first and facts.qk_nope_head_dim in ((128,) if row.mode == "force" else (64, 128))
    if row.mode == "force":
        block = cfg.block_size or P.vllm_default_block_size(version)

        def fits(size: int) -> bool:
            return block % size == 0 if row.fits_multiples else block == size

        if blackwell and flashinfer:
            return (block if block == 32 or fits(64) else 64), "FlashInfer MLA"
        if blackwell:
            return (block if fits(128) else 128), "CUTLASS MLA"
        if major == 9:
            return (block if fits(64) else 64), "FlashMLA"
        return block, "Triton MLA"
    if cfg.block_size:
        return cfg.block_size, "the first MLA backend that takes it"
    default = P.vllm_default_block_size(version)
    named = (cfg.attention_backend or "").strip().upper()
    if named in P.VLLM_MLA_KERNEL_BLOCKS:  # the selector takes the named backend; its preferred block
        sizes = P.VLLM_MLA_KERNEL_BLOCKS[named]
        return (default if not sizes or default in sizes else min(sizes)), named
    fp8 = (cfg.kv_cache_dtype or "auto").lower().startswith("fp8")
    if blackwell and flashinfer:
        return (default if default in (32, 64) else 32), "FlashInfer MLA"
    if blackwell:
        return (default if default % 128 == 0 else 128), "CUTLASS MLA"
    if major == 9 and fp8:
        return 64, "FlashMLA"  # FlashAttention MLA takes no fp8 KV cache
    return default, "FlashAttention MLA" if major == 9 else "Triton MLA"


def stage_shape(full: KVShape, layers: int, total_layers: int) -> KVShape:
    """The KV geometry of one stage holding `layers` of the model's layers (window layers in proportion)."""
    shape = copy.copy(full)
    shape.layers = layers
    shape.window_layers = min(math.ceil(full.window_layers * layers / total_layers), layers)
    shape.full_layers = layers - shape.window_layers
    return shape


def default_batching(profile: P.VllmProfile, gpu_total: int, gpu_name: str, max_model_len: int,
                     chunked: bool | None, version: str | None = None) -> tuple[int, int, bool]:
    """(max_num_batched_tokens, max_num_seqs, chunked_prefill) as vLLM's OpenAI server defaults them, before the
    user's flags adjust them (batch_sizes)."""
    parsed = P.arithmetic_release("vllm", version)
    if profile.engine == "v0":
        auto = parsed >= P.known_version(P.VLLM_V0_AUTO_CHUNKED_SINCE) and \
            max_model_len > P.VLLM_V0_AUTO_CHUNKED_ABOVE
        chunked_on = chunked if chunked is not None else auto
        tokens = P.row_of_release(P.VLLM_V0_CHUNKED_TOKENS, parsed)
        return (tokens if chunked_on else max(max_model_len, P.VLLM_MIN_PROFILE_TOKENS)), P.VLLM_V0_MAX_NUM_SEQS, \
            chunked_on
    tokens, seqs = P.VLLM_BATCH_DEFAULTS[v1_batch_tier(parsed, gpu_total, gpu_name)]
    if parsed < P.known_version(P.VLLM_BATCH_SEQS_BY_NAME_SINCE):
        seqs = P.VLLM_BATCH_DEFAULTS["big"][1]
    unchunked = chunked is False and parsed >= P.known_version(P.VLLM_V1_UNCHUNKED_SINCE)
    return tokens, seqs, not unchunked


def v1_batch_tier(parsed: Version, gpu_total: int, gpu_name: str) -> str:
    """Which of profiles.VLLM_BATCH_DEFAULTS a V1 release gives this GPU (the release rows are listed there)."""
    name = gpu_name.lower()
    if parsed < P.known_version(P.VLLM_BATCH_BY_MEMORY_SINCE):
        return "big" if "h100" in name or "h200" in name else "small"
    if parsed >= P.known_version(P.VLLM_BATCH_GB10_SMALL_SINCE) and "gb10" in name:
        return "small"
    if parsed >= P.known_version(P.VLLM_BATCH_HUGE_SINCE) and gpu_total >= P.VLLM_HUGE_GPU_BYTES:
        return "huge"
    a100_small = parsed >= P.known_version(P.VLLM_BATCH_A100_SMALL_SINCE) and "a100" in name
    return "big" if gpu_total >= P.VLLM_BIG_GPU_BYTES and not a100_small else "small"


def batch_sizes(cfg: VllmConfig, defaults: tuple[int, int, bool], max_len: int, engine: str,
                version: str | None) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) as the scheduler holds them after the user's flags
    (profiles.VLLM_V1_UNCHUNKED_SINCE and VLLM_SEQS_CAPPED_BY_TOKENS_SINCE say from which release each step runs;
    --performance-mode throughput multiplies the defaults before those bounds, profiles.VLLM_PERFORMANCE_MODES)."""
    default_tokens, default_seqs, chunked = defaults
    factor = performance_mode(cfg, version).throughput_factor
    default_tokens, default_seqs = default_tokens * factor, default_seqs * factor
    if engine == "v0":
        return cfg.max_num_batched_tokens or default_tokens, cfg.max_num_seqs or default_seqs
    parsed = P.arithmetic_release("vllm", version)
    seqs = cfg.max_num_seqs or default_seqs
    if cfg.max_num_batched_tokens is not None:
        batched = cfg.max_num_batched_tokens
    elif parsed >= P.known_version(P.VLLM_V1_UNCHUNKED_SINCE):
        batched = min(seqs * max_len, default_tokens if chunked else max(max_len, default_tokens))
    else:
        batched = default_tokens
    if cfg.max_num_seqs is None and parsed >= P.known_version(P.VLLM_SEQS_CAPPED_BY_TOKENS_SINCE):
        seqs = min(seqs, batched)
    return batched, seqs


class PerformanceMode(TableRow):  # tuple-built: no generated methods to compile at import
    """What the deployment's --performance-mode changes in this release (profiles.VLLM_PERFORMANCE_MODES)."""

    name: str
    applied: bool  # the default, or a mode the release has (an unreadable version's assumed release may not)
    throughput_factor: int  # on the defaulted max_num_batched_tokens and max_num_seqs
    every_size_to: int  # interactivity: every capture size up to this one
    row: P.VllmPerformanceModeRow

    def notes(self, version: str | None) -> list[str]:
        if self.applied:
            return []
        # an unreadable version tag, whose assumed release predates the mode (engine.vllm_config lets it through)
        return [f"--performance-mode {self.name} not applied: gsg reads vLLM '{version}' as "
                f"{P.arithmetic_version('vllm', version)}, which has no such mode (it exists from "
                f"{P.VLLM_PERFORMANCE_MODE_SINCE})"]

    def report(self, balanced: dict, changed: dict, terms: list[str]) -> dict:
        """balanced / changed: the figures the mode moves, under "balanced" and under this mode; terms: the
        budget terms they feed (terms.budget_terms names the mode's rule beside each)."""
        return {"mode": self.name, "applied": self.applied, "defaults_factor": self.throughput_factor,
                "every_capture_size_to": self.every_size_to, "since": self.row.since, "source": self.row.source,
                "balanced": balanced, "this_mode": changed, "terms": terms}


def performance_mode_effect(mode: PerformanceMode, cfg: VllmConfig, facts: ModelFacts,
                            defaults: tuple[int, int, bool], max_len: int, version: str | None,
                            profile: P.VllmProfile, batched: int, seqs: int,
                            capture: CaptureDefaults = CaptureDefaults()) -> dict:
    """What the mode moved against "balanced", and the terms it moved, for the estimate's report. A mode applies
    only to V1 releases from 0.17.0, whose profile batch is the scheduler's (batch_sizes)."""
    plan = graph_plan(profile, cfg, seqs, batched, mode.every_size_to, capture)
    if mode.throughput_factor == 1 and not mode.every_size_to:  # balanced, or a mode the release does not have
        base, base_batched, base_seqs, base_plan = cfg, batched, seqs, plan
    else:
        base = replace(cfg, performance_mode=P.VLLM_PERFORMANCE_MODE_DEFAULT)
        base_batched, base_seqs = batch_sizes(base, defaults, max_len, profile.engine, version)
        base_plan = graph_plan(profile, base, base_seqs, base_batched, defaults=capture)
    # the encoder budget is max(max_num_batched_tokens, one item): a larger batch profiles more images
    items, base_items = (encoder_profile(facts, c, b, n, max_len, version).items if profile.engine == "v1" else 0
                         for c, b, n in ((cfg, batched, seqs), (base, base_batched, base_seqs)))
    terms = ([T.FORWARD_PEAK] if batched != base_batched else []) + \
        ([T.SAMPLER_PEAK, T.SAMPLER_WARMUP] if seqs != base_seqs else []) + \
        ([T.ENCODER_PEAK] if items != base_items else []) + \
        ([T.CUDA_GRAPHS] if plan.graphs != base_plan.graphs else [])

    def figures(tokens: int, sequences: int, encoder_items: int, graph_set: GraphPlan) -> dict:
        return {"max_num_batched_tokens": tokens, "max_num_seqs": sequences, "encoder_items": encoder_items,
                "cuda_graph_counts": {"piecewise": graph_set.piecewise, "full": graph_set.full},
                "largest_capture_size": graph_set.largest}

    return mode.report(figures(base_batched, base_seqs, base_items, base_plan),
                       figures(batched, seqs, items, plan), terms)


def performance_mode(cfg: VllmConfig, version: str | None) -> PerformanceMode:
    row = P.vllm_performance_mode_row(P.arithmetic_release("vllm", version))
    applied = cfg.performance_mode in row.choices or cfg.performance_mode == P.VLLM_PERFORMANCE_MODE_DEFAULT
    return PerformanceMode(cfg.performance_mode, applied,
                           row.throughput_default_factor if applied and cfg.performance_mode == "throughput" else 1,
                           row.interactivity_every_size_to if applied and cfg.performance_mode == "interactivity"
                           else 0, row)


def sizing_mode(profile: P.VllmProfile, cfg: VllmConfig) -> tuple[bool, float, bool]:
    """(extensible KV cache, gpu_memory_utilization, start-up free-memory check) for this release and these
    flags: --no-enable-extensible-kv-cache or --kv-cache-memory fall back to the estimate-based sizing, whose
    default fraction is 0.92 and whose start-up check runs (request_memory)."""
    extensible = profile.extensible_kv and cfg.extensible_kv_cache is not False and cfg.kv_cache_memory is None
    fallback = profile.extensible_kv and not extensible
    default_gmu = P.ESTIMATE_BASED_DEFAULT_GMU if fallback else profile.default_gmu
    gmu = cfg.gpu_memory_utilization if cfg.gpu_memory_utilization is not None else default_gmu
    return extensible, gmu, profile.startup_free_check or fallback


def extensible_margin(transient_peak: int) -> int:
    """What the extensible KV cache keeps free beyond the transient peak (profiles.EXTENSIBLE_MARGIN_*)."""
    return max(P.EXTENSIBLE_MARGIN_FLOOR, int(transient_peak * P.EXTENSIBLE_MARGIN_FRACTION))


def extensible_holdings(worst: StageBudget, engine_use: int, comm_outside: int, available: int) -> tuple[int, int, int]:
    """(footprint, headroom, headroom needed) under the extensible KV cache. What it holds is measured, not
    budgeted: engine use, the pool and the transient peak it keeps free; the rest stays free, at least vLLM's own
    margin, which warmup (the sampler's included) has already exercised."""
    footprint = P.CUDA_CONTEXT + comm_outside + engine_use + max(available, 0) + worst.activation
    return footprint, worst.gpu_total - footprint, extensible_margin(worst.activation)


def extensible_kv_bytes(requested: int, free_at_start: int, engine_use: int, transient_peak: int) -> int:
    """measure_kv_cache_bytes: the budget left after what the engine keeps allocated, capped by the device's free
    memory less the margin, less the transient peak kept free in full."""
    return min(requested - engine_use, free_at_start - engine_use - extensible_margin(transient_peak)) - \
        transient_peak


def scheduler_refusal(batched: int, seqs: int, max_len: int, chunked: bool) -> str | None:
    """vLLM's SchedulerConfig._verify_args, the same in every release from 0.6 to 0.34: the engine does not start
    when a step cannot hold one whole prompt without chunked prefill, or one token of each sequence."""
    if batched < max_len and not chunked:
        return (f"max_num_batched_tokens ({batched}) is smaller than max_model_len ({max_len}). This effectively "
                "limits the maximum sequence length to max_num_batched_tokens and makes vLLM reject longer "
                "sequences. Please increase max_num_batched_tokens or decrease max_model_len.")
    if batched < seqs:
        return f"max_num_batched_tokens ({batched}) must be greater than or equal to max_num_seqs ({seqs})."
    return None


def mxfp4_backend(version: str | None, gpu_name: str) -> str | None:
    """The MoE backend vLLM's get_mxfp4_backend picks on this GPU (profiles.MXFP4_PADDING) in GPUStack's image of
    the release (profiles.VLLM_GPUSTACK_IMAGES); None when the GPU is not named (no padding assumed)."""
    if not gpu_name:
        return None
    major = (gpu_arch.compute_capability(gpu_name) or (99, 0))[0]  # unknown names: the newest branch (Triton)
    if major == 10:
        return "flashinfer"
    if major == 9:  # Triton where triton_kernels imports: in GPUStack's image of the release or not
        return "triton" if P.vllm_gpustack_image(version).triton_kernels else "marlin"
    if major < 9:
        return "marlin"
    return "triton"  # capability 12.x (RTX 50 series, RTX PRO Blackwell) and newer take the Triton branch


def custom_all_reduce_on(link: str, tp: int, disabled: bool) -> bool:
    """Whether vLLM's custom all-reduce sets up its buffers on this TP group (profiles.CUSTOM_ALL_REDUCE_SIZES).
    An unknown GPU is taken as NVLink-connected, today's assumption for it (COMM_BUFFERS)."""
    if disabled or tp not in P.CUSTOM_ALL_REDUCE_SIZES or link == "no_p2p":
        return False
    return tp == 2 or link in ("nvlink", "unknown")


def parallel_overheads(gpu_name: str, tp: int, pp: int, disable_custom_all_reduce: bool,
                       version: str | None = None, nccl_p2p_disabled: bool = False,
                       engine: str = "v1") -> tuple[int, int, int]:
    """Per rank: (non-torch memory, the NCCL + custom all-reduce buffers the profile sees before 0.11, the buffers
    outside the budget from 0.11). The non-torch figure is the release's profiles.VLLM_NON_TORCH row for the group's
    interconnect; vLLM sets its communicators up after the memory snapshot before 0.11 and before it from 0.11
    (VllmProfile.comm_in_budget). An unknown GPU is taken as NVLink-connected. Outside the budget it is
    COMM_BUFFERS, except on a group without P2P at all: COMM_BUFFERS_NO_P2P (with custom all-reduce's buffers
    where vLLM turns it on) (profiles.NON_TORCH_PCIE_PARALLEL says why). A group NCCL reaches without
    P2P (nccl_p2p_disabled: profiles.NCCL_P2P_DISABLE_ENV) is booked as a peerless one."""
    if tp * pp == 1:  # V0 measures from its own baseline from 0.6.5 (profiles.VLLM_NON_TORCH "single-v0")
        return P.vllm_non_torch(version, non_torch_links(gpu_name, tp, pp, engine=engine)).in_budget, 0, 0
    link = interconnect(gpu_name)
    custom = P.CUSTOM_ALL_REDUCE_BUFFERS if custom_all_reduce_on(link, tp, disable_custom_all_reduce) else 0
    if link in PEERLESS or nccl_p2p_disabled:  # NCCL's profiled share is inside the logged non-torch figure
        # NCCL's SHM transport (no P2P at all) keeps its FIFOs in host memory; P2P over PCIe has device buffers
        after = P.COMM_BUFFERS_NO_P2P + custom if link == "no_p2p" or nccl_p2p_disabled else P.COMM_BUFFERS
        return P.vllm_non_torch(version, "peerless").in_budget, custom, after
    return P.vllm_non_torch(version, "nvlink").in_budget, P.NCCL_BUFFERS + custom, P.COMM_BUFFERS


def nvls_buffers(gpu_name: str, tp: int, version: str | None, nvls_disabled: bool = False) -> int:
    """One NCCL communicator's NVLS (NVLink SHARP) memory per rank: the TP group's ranks (NCCL's heads) x channels x
    the channel's buffers, on NVSwitch-connected Hopper and Blackwell GPUs, by the NCCL the release's torch pins
    (profiles.VLLM_NVLS); 0 elsewhere."""
    row = P.vllm_nvls(version)
    major = gpu_arch.major(gpu_name)
    if nvls_disabled or tp < row.min_ranks or interconnect(gpu_name) != "nvlink" or major not in row.channels or \
            re.search(P.NVLS_WITHOUT_NVSWITCH, gpu_name.lower()):
        return 0
    return tp * row.channels[major] * row.bytes_per_head_channel


def profiled_nccl(gpu_name: str, tp: int, version: str | None, cfg: VllmConfig) -> tuple[int, int]:
    """NCCL memory made inside the profile on top of the release's VLLM_NON_TORCH row, per rank: (the TP device
    group's communicator where the release makes it at the profile's logits all-gather
    (profiles.VLLM_DEVICE_GROUP_NCCL; beside PyNccl's, which is comm_in_budget before 0.11), one communicator's NVLS
    buffers). Peerless groups log NCCL inside their figure: none."""
    if tp < 2 or interconnect(gpu_name) in PEERLESS or cfg.nccl_p2p_disabled:
        return 0, 0
    device_group = P.NCCL_BUFFERS if P.vllm_device_group_nccl(version).in_profile else 0
    return device_group, nvls_buffers(gpu_name, tp, version, cfg.nccl_nvls_disabled)


def non_torch_rule(version: str | None, device_group: int, nvls: int) -> dict:
    """The non-torch term's rule and source when profiled_nccl adds to the release's row (terms.budget_terms)."""
    if not device_group and not nvls:
        return {}
    row = P.term_source("vllm", "non_torch_bytes_per_gpu", P.arithmetic_release("vllm", version))
    rule = row.rule + ("+tp-device-group-nccl-in-profile" if device_group else "") + \
        ("+nccl-nvls-one-communicator" if nvls else "")
    sources = [row.source] + ([P.vllm_device_group_nccl(version).source] if device_group else []) + \
        ([P.vllm_nvls(version).source] if nvls else [])
    return {"non_torch_bytes_per_gpu": (rule, "; ".join(sources))}


def non_torch_with_context(profile: P.VllmProfile, gpu_name: str, ranks: int,
                           non_torch: int) -> tuple[int, P.ContextNonTorchRow | None]:
    """The non-torch term with the CUDA context where the release counts it in its budget
    (VllmProfile.context_in_budget), and the measured row used, if any. Alone on a card whose figure a 0.6.4 log
    printed with the context inside (profiles.SINGLE_GPU_NON_TORCH_WITH_CONTEXT), that figure is what the release
    subtracts: the release's row plus the context would count the context twice."""
    if not profile.context_in_budget:
        return non_torch, None
    measured = P.single_gpu_non_torch_with_context(gpu_name) if ranks == 1 else None
    return (measured.non_torch, measured) if measured else (non_torch + P.CUDA_CONTEXT, None)


def non_torch_links(gpu_name: str, tp: int, pp: int, nccl_p2p_disabled: bool = False, engine: str = "v1") -> str:
    """The profiles.VLLM_NON_TORCH class of this GPU group."""
    if tp * pp == 1:
        return "single-v0" if engine == "v0" else "single"
    return "peerless" if interconnect(gpu_name) in PEERLESS or nccl_p2p_disabled else "nvlink"


def round_up(value: int, multiple: int | None) -> int:
    return value if not multiple else -(-value // multiple) * multiple


def mxfp4_padding_per_layer(facts: ModelFacts, tp: int, expert_parallel: bool, backend: str | None) -> int:
    """Bytes one MoE layer's experts gain on one rank from the backend's padded shapes: w13 (2 x I_pad x H_pad)
    and w2 (H_pad x I_pad) at 4 bits plus one E8M0 scale per 32, and the bf16 biases (2 x I_pad + H_pad)."""
    if backend is None or (facts.quant_method or "").lower() != "mxfp4" or not facts.is_moe:
        return 0
    inter_multiple, hidden_multiple = P.MXFP4_PADDING[backend]
    experts = (facts.num_experts or 0) // (tp if expert_parallel else 1)
    inter = (facts.moe_intermediate_size or facts.intermediate_size or 0) // (1 if expert_parallel else tp)
    hidden = facts.hidden_size or 0

    def experts_bytes(h: int, i: int) -> int:
        packed = 3 * h * i  # 4-bit values, 2 per byte, and a scale byte per 32: 17/32 bytes per weight
        bias = (2 * i + h) * 2 if facts.expert_bias else 0
        return experts * (packed // 2 + packed // 32 + bias)

    return experts_bytes(round_up(hidden, hidden_multiple), round_up(inter, inter_multiple)) - \
        experts_bytes(hidden, inter)


def fused_moe_chunk(version: str | None, env_value: str | None = None) -> int | None:
    """Tokens per fused_experts chunk: the release's default (profiles.VLLM_FUSED_MOE_CHUNKS) or
    VLLM_FUSED_MOE_CHUNK_SIZE while vLLM reads it; None = the whole batch at once. vLLM reads the variable with
    int() at import, so anything else stops it there (ValueError)."""
    default = P.row_for("vllm", P.VLLM_FUSED_MOE_CHUNKS, version)
    if env_value is None or default is None:
        return default
    try:
        chunk = int(env_value.strip())
    except ValueError:
        raise ValueError(f"VLLM_FUSED_MOE_CHUNK_SIZE must be a whole number, got '{env_value}'") from None
    if chunk < 1:
        raise ValueError(f"VLLM_FUSED_MOE_CHUNK_SIZE must be at least 1, got {chunk}")
    return chunk


def moe_workspace_held(version: str | None, facts: ModelFacts) -> bool:
    """Whether the release's fused-MoE layers take their caches from the worker's WorkspaceManager (kept after the
    profile's forward) rather than allocating them per call (profiles.VLLM_MOE_WORKSPACE_SINCE)."""
    if not facts.is_moe or facts.is_compressed_attention:
        return False
    quant = (facts.quant_method or "").lower() or None
    held_since = P.known_version(P.VLLM_MOE_WORKSPACE_SINCE)
    return quant in P.VLLM_MOE_WORKSPACE_QUANT and P.arithmetic_release("vllm", version) >= held_since


def moe_workspace(facts: ModelFacts, batched: int, tp: int, expert_parallel: bool,
                  chunk: int | None = P.VLLM_FUSED_MOE_CHUNK, held: bool = False, apart: bool = False) -> int:
    """The fused-MoE intermediate caches of one layer's call over `batched` tokens (fused_moe_chunk tokens at a
    time). Per call (fused_experts_impl): cache13 M x top_k x max(N, K) + cache2 M x top_k x N/2. Held in the
    WorkspaceManager (`held`, the modular kernel's TritonExperts): workspace13 M x top_k x max(N/2, K), which
    doubles as the output when one chunk covers the batch, + workspace2 M x top_k x max(N, K), + an M x K output
    of the whole batch when it is chunked. N is 2 x the expert width per rank (whole under expert parallelism).
    `apart`: releases before profiles.VLLM_FUSED_MOE_CACHE_LAYOUTS's "shared" row allocate cache1 M x top_k x N,
    cache2 M x top_k x N/2 and cache3 M x top_k x K as three tensors."""
    if not facts.is_moe:
        return 0
    m = batched if chunk is None else min(batched, chunk)
    topk = facts.num_experts_per_tok or 1
    inter = (facts.moe_intermediate_size or facts.intermediate_size or 0) // (1 if expert_parallel else tp)
    n, k = 2 * inter, facts.hidden_size
    assert k is not None, "engines run on facts whose missing_for_params() is empty"
    act = 2  # bf16/fp16 activations
    if held:
        workspace = m * topk * max(n // 2, k) * act + m * topk * max(n, k) * act
        if m < batched:
            workspace += batched * k * act
    elif apart:
        workspace = m * topk * (n + n // 2 + k) * act
    else:
        workspace = m * topk * max(n, k) * act + m * topk * (n // 2) * act
    if (facts.quant_method or "").lower() in ("fp8", "fbgemm_fp8", "compressed-tensors-fp8"):
        workspace += m * k + m * topk * (n // 2)  # quantised input and cache2 copies, one byte each, per call
    return workspace


def dense_forward_form(facts: ModelFacts, engine: str, version: str | None, cfg: VllmConfig) -> str | None:
    """How the release runs this model's forward where its live tensors are derived (profiles.
    VLLM_DENSE_FORWARD_SOURCES, VLLM_MOE_FORWARD_SOURCES): "piecewise-inductor" (V1 compiled), "eager-gate-up-held"
    or "eager-gate-up-freed" (V0, or V1 under --enforce-eager, by what the model file's MLP keeps) for dense models;
    "moe-piecewise-inductor", "moe-eager" or "moe-eager-caches-apart" (the release's fused_experts layout) for the
    MoE families read (profiles.VLLM_MOE_BLOCK_FILE); None for models it does not cover (DeepSeek's MLA, gpt-oss,
    compressed attention, architectures not read), which keep the calibrated formula."""
    if facts.is_compressed_attention or not facts.num_attention_heads:
        return None
    if facts.is_moe:
        return moe_forward_form(facts, engine, version, cfg)
    if not facts.intermediate_size:
        return None
    mlp = P.VLLM_DENSE_MLP_FILE.get((facts.architecture or "").lower())
    if mlp is None:
        return None
    if engine == "v1" and not cfg.enforce_eager:
        return "piecewise-inductor"
    keeps = P.row_for("vllm", P.VLLM_MLP_KEEPS_GATE_UP[mlp], version)
    return "eager-gate-up-held" if keeps else "eager-gate-up-freed"


def moe_forward_form(facts: ModelFacts, engine: str, version: str | None, cfg: VllmConfig) -> str | None:
    """The MoE forward's form for the sparse-MoE blocks read (profiles.VLLM_MOE_BLOCK_FILE) on the unquantised or
    FP8 Triton experts; None for other MoE models and quantisations (their kernels were not read)."""
    block = P.VLLM_MOE_BLOCK_FILE.get((facts.architecture or "").lower())
    quant = (facts.quant_method or "").lower() or None
    if block is None or facts.is_mla or quant not in P.VLLM_MOE_WORKSPACE_QUANT:
        return None
    if engine == "v1" and not cfg.enforce_eager:
        return "moe-piecewise-inductor"
    layout = P.row_for("vllm", P.VLLM_FUSED_MOE_CACHE_LAYOUTS, version)
    return "moe-eager-caches-apart" if layout == "apart" else "moe-eager"


def dense_live_elements_per_token(facts: ModelFacts, tp: int, form: str) -> int:
    """Elements per token alive at the largest step of one decoder layer on one rank (profiles.
    VLLM_DENSE_FORWARD_SOURCES): the max over its attention, SiluAndMul and down_proj steps."""
    return sum(dense_peak_step_tensors(facts, tp, form))


def dense_peak_step_tensors(facts: ModelFacts, tp: int, form: str) -> tuple[int, ...]:
    """The tensors (elements per token each) alive at the largest step of one decoder layer on one rank."""
    H, heads = facts.hidden_size or 0, facts.num_attention_heads or 1
    head_dim = facts.head_dim or H // heads
    q = -(-heads // tp) * head_dim
    kv = max(1, (facts.num_key_value_heads or heads) // tp) * head_dim  # fewer KV heads than ranks: one each
    inter = (facts.intermediate_size or 0) // tp
    steps: tuple[tuple[int, ...], ...]
    if form == "piecewise-inductor":
        # the split graph holds the piece's inputs (attention output, incoming residual) through the piece
        held: tuple[int, ...] = (q, H)
        steps = (held + (H, 2 * inter, inter),  # SiluAndMul: new residual, gate_up, its output
                 held + (H, inter, H),  # down_proj: new residual, SiluAndMul's output, down's output
                 (H, q + 2 * kv, q + kv, q))  # attention: residual, qkv, rotated q and k, output
    else:
        # the model loop's previous output (normed in place), the residual, the MLP's input (o_proj's output)
        held = (H, H, H)
        gate_up_kept = (2 * inter,) if form == "eager-gate-up-held" else ()
        steps = (held + (2 * inter, inter),  # SiluAndMul: gate_up and its output
                 held + gate_up_kept + (inter, H),  # down_proj: SiluAndMul's output and down's
                 held + (q + 2 * kv, q))  # attention: qkv and its output (o_proj's output is one of held)
    return max(steps, key=sum)


def moe_align_bytes(facts: ModelFacts, tokens: int) -> int:
    """moe_align_block_size's buffers for one fused-MoE call over `tokens`: sorted_token_ids (tokens x top_k plus
    block - 1 padding slots per expert) and one expert id per block, int32 (profiles.VLLM_MOE_ALIGN_BLOCK)."""
    experts, topk = facts.num_experts or 0, facts.num_experts_per_tok or 1
    sorted_ids = tokens * topk + experts * (P.VLLM_MOE_ALIGN_BLOCK - 1)
    return 4 * (sorted_ids + -(-sorted_ids // P.VLLM_MOE_ALIGN_BLOCK))


def moe_forward_bytes(facts: ModelFacts, batched: int, tp: int, cfg: VllmConfig, form: str, chunk: int | None,
                      held: bool, reused: bool, element: int) -> int:
    """The largest step of one sparse-MoE decoder layer on one rank (profiles.VLLM_MOE_FORWARD_SOURCES): its
    attention step as in the dense derivation, the routed experts' step (the layer's held hidden states, the
    replicated router's logits, fused_topk's fp32 weights and int32 ids and indices over the whole batch,
    moe_align_block_size's buffers and the fused-MoE caches of one chunk), and the shared expert's MLP step."""
    H, heads = facts.hidden_size or 0, facts.num_attention_heads or 1
    q = -(-heads // tp) * (facts.head_dim or H // heads)
    piecewise = form == "moe-piecewise-inductor"
    attention = dense_live_elements_per_token(facts, tp, "piecewise-inductor" if piecewise else "eager-gate-up-freed")
    # the experts write their output into their input (inplace=True; moe_forward mutates hidden_states): eager
    # holds the loop's previous output, the residual and that input; a compiled piece holds its inputs (attention
    # output, incoming residual), the new residual and the normed input the experts overwrite
    held_elements = q + 3 * H if piecewise else 3 * H
    shared = facts.shared_expert_intermediate_size or 0
    shared_out = H if shared else 0  # one branch's output is alive while the other runs
    router = facts.num_experts or 0
    topk = facts.num_experts_per_tok or 1
    routed_per_token = (held_elements + shared_out + router) * element + topk * (4 + 4 + 4)
    m = batched if chunk is None else min(batched, chunk)
    caches = 0 if reused else moe_workspace(facts, batched, tp, cfg.expert_parallel, chunk, held,
                                            apart=form == "moe-eager-caches-apart")
    routed = batched * routed_per_token + moe_align_bytes(facts, m) + caches
    steps = [batched * attention * element, routed]
    if shared:
        inter = shared // tp  # Qwen2MoeMLP keeps gate_up named through down_proj
        steps.append(batched * (held_elements + shared_out + 2 * inter + inter + H) * element)
    return max(steps)


def cublas_workspace(gpu_name: str) -> int:
    """torch's cuBLAS workspace on this GPU (profiles.CUBLAS_WORKSPACE_*): held from the profile's first GEMM on;
    an unknown name takes the default branch."""
    major = gpu_arch.major(gpu_name)
    return P.CUBLAS_WORKSPACE_LARGE if major in P.CUBLAS_WORKSPACE_LARGE_MAJORS else P.CUBLAS_WORKSPACE_DEFAULT


def activation_peak(facts: ModelFacts, batched: int, seqs: int, tp: int, cfg: VllmConfig, last_stage: bool,
                    chunk: int | None = P.VLLM_FUSED_MOE_CHUNK, held: bool = False, reused: bool = False,
                    form: str | None = None, gpu_name: str = "") -> int:
    """The profile run's activation peak on one rank: where `form` (dense_forward_form) names how the release runs
    a dense model, its live tensors at the largest step; otherwise the calibrated dense formula + fused-MoE
    workspace, in its held form when `held`; left out when `reused`, an earlier run's held workspace serving
    this one."""
    H, V = facts.hidden_size, facts.vocab_size
    assert H is not None, "engines run on facts whose missing_for_params() is empty"
    # the hidden states and MLP intermediates are in the loaded dtype (--dtype float32: four bytes, not two)
    element = UNQUANTISED_BYTES.get(facts.dtype or "bfloat16", 2)
    if form is not None and form.startswith("moe-"):
        return int(moe_forward_bytes(facts, batched, tp, cfg, form, chunk, held, reused, element) *
                   (1 + cfg.activation_margin))
    if form is not None:
        return int(batched * dense_live_elements_per_token(facts, tp, form) * element *
                   (1 + cfg.activation_margin))
    if facts.is_compressed_attention:
        return int(sum(v4_forward_parts(facts, batched, tp, cfg, chunk, gpu_name).values()) *
                   (1 + cfg.activation_margin))
    if facts.is_moe:
        dense = facts.shared_expert_intermediate_size or 0
        if facts.first_k_dense_replace or (facts.moe_layer_step or 1) > 1:  # dense layers among the MoE ones
            dense = max(dense, facts.intermediate_size or 0)
    else:
        dense = facts.intermediate_size or 0
    logits = 0
    if last_stage:  # only the last stage computes logits
        assert V is not None, "engines run on facts whose missing_for_params() is empty"
        logits = seqs * V * 4
    raw = batched * (2 * dense // tp + 4 * H) * element + logits
    if not reused:
        raw += moe_workspace(facts, batched, tp, cfg.expert_parallel, chunk, held)
    return int(raw * P.ACTIVATION_CALIBRATION * (1 + cfg.activation_margin))


def v4_forward_parts(facts: ModelFacts, batched: int, tp: int, cfg: VllmConfig,
                     chunk: int | None = P.VLLM_FUSED_MOE_CHUNK, gpu_name: str = "") -> dict[str, int]:
    """DeepSeek-V4's profile forward on one rank, by part (profiles.VLLM_V4_FORWARD_SOURCE): the largest step of
    a decoder layer (attention, indexer or MoE, each with the tensors held through the layer), the worker's
    WorkspaceManager buffer (v4_workspace_requests) and the two buffers the model allocates at init by
    max_num_batched_tokens."""
    H, hc = facts.hidden_size or 0, facts.hc_mult or 1
    element = UNQUANTISED_BYTES.get(facts.dtype or "bfloat16", 2)
    head_dim = facts.head_dim or 0
    local_heads = (facts.num_attention_heads or 0) // tp
    padded_heads = max(local_heads, P.VLLM_V4_MIN_PADDED_HEADS)
    q_lora = facts.q_lora_rank or 0
    # per token: the loop's previous output and residual streams, the new residual streams, the fp32 mixes,
    # the layer input
    held = (H + hc * H + hc * H + H) * element + (hc + hc * hc) * 4
    o_padded = padded_heads * head_dim * element
    qr_kv = 2 * (q_lora + head_dim) * element  # the projection and its normed copies
    q_padded = padded_heads * head_dim * element
    attention = held + o_padded + qr_kv + local_heads * head_dim * element + q_padded
    index_heads, index_dim = facts.index_n_heads or 0, facts.index_head_dim or 0
    indexer_per_token = held + o_padded + qr_kv + q_padded + index_heads * index_dim * (element + 1) + index_heads * 4
    indexer = batched * indexer_per_token + P.VLLM_V4_INDEXER_LOGITS_BYTES
    experts, topk = facts.num_experts or 0, facts.num_experts_per_tok or 1
    shared = (facts.shared_expert_intermediate_size or 0) // tp
    moe_per_token = held + experts * 4 + topk * (4 + 4) + 3 * shared * element + H * element
    moe = batched * moe_per_token
    if not v4_marlin_experts(gpu_name):  # the kernel's buffers not read: fused_experts' caches, in the MoE step
        moe += moe_workspace(facts, batched, tp, cfg.expert_parallel, chunk)
    requests = v4_workspace_requests(facts, batched, cfg.max_model_len or 0, tp, cfg.expert_parallel, gpu_name)
    return {"layer_peak": max(batched * attention, indexer, moe),
            "workspace_manager": max(requests.values()),
            "topk_indices_buffer": batched * (facts.index_topk or 0) * 4,
            "mtp_hidden_buffer": batched * hc * H * element,
            # not derived: the remainder one log shows (profiles.VLLM_V4_UNREAD_PER_TOKEN), kept apart
            "unread_measured_once": batched * P.VLLM_V4_UNREAD_PER_TOKEN}


def v4_marlin_experts(gpu_name: str) -> bool:
    """Whether vLLM runs DeepSeek-V4's MXFP4 experts with Marlin on this GPU (profiles.VLLM_V4_MARLIN_SOURCE):
    capability 7.5 and up outside the 10.x family; an unknown name is not assumed either way."""
    capability = gpu_arch.compute_capability(gpu_name)
    return capability is not None and capability >= P.VLLM_V4_MARLIN_MIN_CAPABILITY and \
        capability[0] not in P.VLLM_V4_MARLIN_SKIPPED_MAJORS


def v4_workspace_requests(facts: ModelFacts, batched: int, max_model_len: int, tp: int = 1,
                          expert_parallel: bool = False, gpu_name: str = "") -> dict[str, int]:
    """The get_simultaneous requests DeepSeek-V4's dummy forward makes of the WorkspaceManager, by name: FlashMLA's
    gather for each layer kind, the indexer's K gather and, where the experts run Marlin, their intermediate
    caches (profiles.VLLM_V4_FORWARD_SOURCE, VLLM_V4_MARLIN_SOURCE). The manager keeps one buffer grown to the
    largest request, so the largest is what stays held."""
    def aligned(*parts: int) -> int:
        return sum(round_up(part, P.VLLM_V4_WORKSPACE_ALIGN) for part in parts)

    head_dim, window = facts.head_dim or 0, facts.sliding_window or 0
    ratios = sorted(set(facts.compress_ratios or ()) | {1})
    requests = {f"flashmla_gather_ratio_{r}": aligned(P.VLLM_V4_PREFILL_CHUNK * (
        (0 if r <= 1 else -(-max_model_len // r)) + window + batched) * head_dim * 2) for r in ratios}
    if 4 in ratios and facts.index_head_dim:
        entries = P.VLLM_V4_INDEXER_PREFILL_FACTOR * max_model_len // 4
        requests["indexer_k_gather"] = aligned(entries * facts.index_head_dim, entries * 4,
                                               P.VLLM_V4_RADIX_TOPK_WORKSPACE)
    if v4_marlin_experts(gpu_name) and facts.is_moe:
        element = UNQUANTISED_BYTES.get(facts.dtype or "bfloat16", 2)
        inter = round_up((facts.moe_intermediate_size or 0) // (1 if expert_parallel else tp),
                         P.VLLM_V4_MARLIN_INTERMEDIATE_ALIGN)
        hidden = round_up(facts.hidden_size or 0, P.VLLM_V4_MARLIN_HIDDEN_ALIGN)
        rows = batched * (facts.num_experts_per_tok or 1)
        # workspace13 doubles as the T x H output; workspace2 holds gate_up (2I wide) or the down output
        requests["marlin_moe"] = aligned(max(rows * max(inter, hidden), batched * hidden) * element,
                                         rows * max(2 * inter, hidden) * element)
    return requests


def v1_alpha_logits_rows(engine: str, version: str | None) -> str | None:
    """Which rows the V1 alpha's profile run computes logits for (profiles.VLLM_V1_ALPHA_LOGITS_ROWS): "tokens" or
    "seqs"; None where the profile runs the dummy sampler instead (V0, and V1 from its default release on)."""
    parsed = P.arithmetic_release("vllm", version)
    if engine != "v1" or parsed >= P.known_version(P.VLLM_V1_DEFAULT_SINCE):
        return None
    return P.row_of_release(P.VLLM_V1_ALPHA_LOGITS_ROWS, parsed)


def v1_alpha_logits_phase(facts: ModelFacts, batched: int, seqs: int, tp: int, cfg: VllmConfig, rows_kind: str) -> int:
    """The V1 alpha profile's step after its forward, on the rank that binds (rank 0): the hidden states the logits
    are taken from and the logits in the model dtype, over the padded vocabulary; at TP > 1 rank 0's own shard,
    the gathered shards and their concatenation (profiles.VLLM_V1_ALPHA_LOGITS_ROWS)."""
    element = UNQUANTISED_BYTES.get(facts.dtype or "bfloat16", 2)
    rows = batched if rows_kind == "tokens" else min(seqs, batched)
    padded = round_up(facts.vocab_size or 0, P.VOCAB_PADDING)
    shard = -(-padded // tp)
    logits = rows * shard * element + (2 * rows * shard * tp * element if tp > 1 else 0)
    # "seqs": the rows were indexed out of the batch (a copy), the batch's own hidden states released by then
    hidden = rows * (facts.hidden_size or 0) * element
    return int((hidden + logits) * (1 + cfg.activation_margin))


def profile_phases(facts: ModelFacts, batched: int, seqs: int, cfg: VllmConfig, last_stage: bool,
                   chunk: int | None, moe_held: bool, engine: str, sampler_row: P.VllmSamplerRow, version: str | None,
                   alpha_rows: str | None, gpu_name: str = "") -> tuple[int, int]:
    """(forward peak, sampler phase) of one stage's profile run. Where the forward's live tensors are derived
    (dense_forward_form), the forward holds torch's cuBLAS workspace, taken at its first GEMM (the calibrated
    formula's factor was fit with it inside). It stays held through the sampler too; the sampler rules
    (sampler_phase_bytes) leave it out, 8-32 MiB."""
    tp = cfg.tensor_parallel_size
    form = dense_forward_form(facts, engine, version, cfg)
    workspace = cublas_workspace(gpu_name) if form is not None or facts.is_compressed_attention else 0
    forward = activation_peak(facts, batched, seqs, tp, cfg, last_stage=last_stage and alpha_rows is None,
                              chunk=chunk, held=moe_held, form=form, gpu_name=gpu_name) + workspace
    if alpha_rows is not None:  # the V1 alpha's logits step follows its forward; it runs no sampler
        logits = v1_alpha_logits_phase(facts, batched, seqs, tp, cfg, alpha_rows) if last_stage else 0
        return max(forward, logits), 0
    # the sampler runs on the last stage after the forward's tensors are freed (V0 and V1 alike): the peak is
    # the larger phase; under V0 only the driver rank samples, and it is the rank whose pool binds
    sampler = profiled_sampler(facts, batched, seqs, engine, sampler_row, version) if last_stage else 0
    if sampler and engine == "v0" and form is not None and not form.startswith("moe-"):
        # V0 0.2.5-0.6.3 budgets what torch reserved: the forward's cached segments plus the sampler's new ones
        # (none where every sampler tensor fits a cached block: the allocated phases stand)
        added = v0_sampler_new_segments(facts, batched, seqs, tp, form, version)
        sampler = max(sampler, forward + added) if added else sampler
    return forward, sampler


def v0_sampler_new_segments(facts: ModelFacts, batched: int, seqs: int, tp: int, form: str,
                            version: str | None) -> int:
    """Bytes of segments V0's dummy sampler adds to those its forward cached, where the release budgets the memory
    torch reserved (profiles.VLLM_V0_PROFILE_MEASURES); 0 where it budgets the allocated peak. The forward leaves
    one segment per tensor of its largest step (each above the allocator's mid-size), all cached free but the
    batch's hidden states; the sampler's allocations (profiles.VLLM_V0_SAMPLER_EVENTS, the sort's segmented path
    from SAMPLER_SORT_SEGMENTED_FROM_ROWS rows) reuse what fits and take new segments for the rest."""
    rows = min(seqs, batched)
    if P.vllm_v0_profile_measure(version) != "reserved" or rows < P.SAMPLER_SORT_SEGMENTED_FROM_ROWS:
        return 0
    element = UNQUANTISED_BYTES.get(facts.dtype or "bfloat16", 2)
    H = facts.hidden_size or 0
    step = list(dense_peak_step_tensors(facts, tp, form))
    if H in step:  # every eager step holds it: the model's output, which execute_model keeps through the sampler
        step.remove(H)
    held, freed = (batched * H * element,), tuple(n * batched * element for n in step)
    entries = rows * (facts.vocab_size or 0)
    events = (("alloc", "pruned_hidden", rows * H * element),
              *((kind, name, per_entry * entries) for kind, name, per_entry in
                P.VLLM_V0_SAMPLER_EVENTS[P.vllm_v0_profile_sampler(version)]))
    # imported here: only V0 releases that budget reserved memory reach it, so validate's import path stays as it was
    # (tests/architecture/test_import_budget.py)
    from gpustack_guard.core.memory.allocator import reserved_after

    return reserved_after(held, freed, events) - reserved_after(held, freed, ())


def dense_forward_rule(form: str | None, compressed_attention: bool = False) -> dict:
    """The forward term's rule where the live tensors were derived (dense_forward_form, or DeepSeek-V4's own
    reading), shown in place of the release's calibrated row (terms.budget_terms); nothing where the calibrated
    formula ran."""
    if compressed_attention:
        return {"forward_peak_bytes_per_gpu": ("live-tensors-deepseek-v4", f"{P.VLLM_V4_FORWARD_SOURCE}; "
                                               f"unread_measured_once: {P.VLLM_V4_UNREAD_SOURCE}")}
    if form is None:
        return {}
    return {"forward_peak_bytes_per_gpu": (f"live-tensors-{form}", forward_source(form))}


def forward_source(form: str) -> str:
    """The files@tags a derived forward form was read from."""
    return (P.VLLM_MOE_FORWARD_SOURCES if form.startswith("moe-") else P.VLLM_DENSE_FORWARD_SOURCES)[form]


def v1_alpha_term_rules(rows_kind: str, form: str | None = None) -> dict:
    """The forward and sampler rules of the V1 alpha's profile, shown in place of the 0.8.0 rows its VLLM_USE_V1=1
    estimate otherwise runs with (terms.budget_terms)."""
    source = P.VLLM_V1_ALPHA_SOURCE[rows_kind]
    forward = "dense-mlp-calibrated" if form is None else f"live-tensors-{form}"
    if form is not None:
        source = f"{source}; {forward_source(form)}"
    return {"forward_peak_bytes_per_gpu": (f"max({forward}, v1-alpha-logits-of-{rows_kind})", source),
            "sampler_peak_bytes_per_gpu": ("none-v1-alpha", source),
            "sampler_warmup_bytes_per_gpu": ("none-v1-alpha", "vllm/v1/worker/gpu_worker.py@v0.7.0..@v0.7.3 "
                                             "compile_or_warm_up_model (compile sizes and graph capture only)")}


def sampler_sort_peak_bytes(rows: int, table: dict[str, int] = P.SAMPLER_SORT_PEAK_BYTES) -> int:
    """Bytes per vocabulary entry of each row at the peak of torch's sort of the logits, by the path
    SortStable.cu takes for this many rows (profiles.SAMPLER_SORT_PEAK_BYTES; SAMPLER_SORT_16BIT_PEAK_BYTES for
    V0 before 0.5.5, which sorted the model-dtype logits)."""
    if rows <= 1:
        return table["one_row"]
    if rows < P.SAMPLER_SORT_SEGMENTED_FROM_ROWS:
        return table["full_sort"]
    return table["segmented"]


def sampler_row_for(version: str | None, env_value: str | None) -> P.VllmSamplerRow:
    """The release's sampler row with the top-k/top-p path VLLM_USE_FLASHINFER_SAMPLER picks
    (profiles.VLLM_FLASHINFER_SAMPLER_ENV): "1" FlashInfer's kernels, "0" the release's PyTorch-native path; unset,
    not an integer, or before the variable existed: the release's default."""
    row = P.vllm_sampler_row(version)
    try:
        wanted = int((env_value or "").strip()) != 0
    except ValueError:
        return row
    if P.arithmetic_release("vllm", version) < P.known_version(P.VLLM_FLASHINFER_SAMPLER_ENV_SINCE):
        return row
    return replace(row, kernel="flashinfer" if wanted else row.native)


SAMPLER_RULE_NAMES = {"torch-sort": "torch-sort-after-forward", "triton": "triton-top-k-top-p-after-forward",
                      "flashinfer": "flashinfer-top-k-top-p-after-forward"}


def sampler_term_rule(version: str | None, used: P.VllmSamplerRow, env: str | None) -> dict:
    """The sampler term's rule where the deployment's VLLM_USE_FLASHINFER_SAMPLER moved it off the release's default
    (terms.budget_terms shows it in place of the version row); nothing otherwise."""
    if used.kernel == P.vllm_sampler_row(version).kernel:
        return {}
    said = f"VLLM_USE_FLASHINFER_SAMPLER={(env or '').strip()} (the deployment's env, or a log's sampler line)"
    return {"sampler_peak_bytes_per_gpu": (SAMPLER_RULE_NAMES[used.kernel],
                                           f"{said}; {P.VLLM_FLASHINFER_SAMPLER_ENV_SOURCE}")}


def sampler_bytes_per_entry(kernel: str, rows: int) -> int:
    """Peak bytes per (row x vocabulary entry) of one top-k/top-p sampler pass by kernel (profiles.VllmSamplerRow),
    the logits included."""
    if kernel == "plain":
        return P.SAMPLER_PLAIN_BYTES
    if kernel == "flashinfer" or (kernel == "triton" and rows >= P.SAMPLER_TRITON_MIN_ROWS):
        return P.SAMPLER_KERNEL_PEAK_BYTES[kernel]
    if kernel == "torch-sort-16bit":
        return sampler_sort_peak_bytes(rows, P.SAMPLER_SORT_16BIT_PEAK_BYTES)
    return sampler_sort_peak_bytes(rows)


def sampler_phase_bytes(facts: ModelFacts, batched: int, rows: int, kernel: str) -> int:
    """What is allocated while the dummy sampler runs: the forward's intermediate tensors are freed by then
    (_dummy_run returned), its hidden states of all batched tokens are still held (in the loaded dtype: --dtype
    float32 doubles them), plus the sampler's own peak over `rows` rows."""
    hidden = batched * (facts.hidden_size or 0) * UNQUANTISED_BYTES.get(facts.dtype or "bfloat16", 2)
    return hidden + rows * (facts.vocab_size or 0) * sampler_bytes_per_entry(kernel, rows)


@frozen_value
class SamplerWarmup:
    """The V1 engine's sampler pass after the KV cache (gpu_worker.compile_or_warm_up_model) against the memory
    free then; `profiled` is the sampler's share of the profile peak."""

    __repr__ = fields_repr

    rows: int
    peak: int  # the warm-up's own allocations: its forward over `rows` tokens or its sampler phase
    free: int  # total minus what is held once the KV cache, graphs and buffers exist (activations released)
    profiled: int  # the profile's sampler phase (0 when the profile holds no V1 sampler)
    kernel: str

    @property
    def deficit(self) -> int:
        return self.peak - self.free


def profiled_sampler(facts: ModelFacts, batched: int, seqs: int, engine: str, row: P.VllmSamplerRow,
                     version: str | None = None) -> int:
    """The profile run's sampler phase on the last stage. V1: the batch's hidden states stay held through it from
    0.10 only (P.VLLM_PROFILE_HOLDS_BATCH_HIDDEN_SINCE). V0 (P.VLLM_V0_PROFILE_SAMPLER): one dummy prompt per
    sequence, sampled with top_k = vocab - 1 by a sort of the fp32 logits on the driver rank, while execute_model
    still holds the hidden states of every batched token."""
    rows = min(seqs, batched)
    if engine == "v0":
        return sampler_phase_bytes(facts, batched, rows, P.vllm_v0_profile_sampler(version))
    if engine != "v1":
        return 0
    kernel = row.kernel if row.profiled == "same" else "plain"
    holds_batch = P.arithmetic_release("vllm", version) >= P.known_version(P.VLLM_PROFILE_HOLDS_BATCH_HIDDEN_SINCE)
    return sampler_phase_bytes(facts, batched if holds_batch else rows, rows, kernel)


def warmup_rows(row: P.VllmSamplerRow, seqs: int, batched: int) -> int:
    return min(seqs, batched if row.warmup_rows == "v1" else batched // 2)


@frozen_value(eq=True)
class GraphPlan:
    """What one rank captures: the mode, its PIECEWISE and FULL graphs and the largest captured size."""

    __repr__ = fields_repr

    mode: str
    piecewise: int
    full: int
    largest: int

    @property
    def graphs(self) -> int:
        return self.piecewise + self.full


def graph_plan(profile: P.VllmProfile, cfg: VllmConfig, seqs: int, batched: int, every_size_to: int = 0,
               defaults: CaptureDefaults = CaptureDefaults()) -> GraphPlan:
    """The graphs the release captures under the deployment's capture settings (profiles.CAPTURE_SETTINGS_RULES):
    mixed-batch graphs one per size (PIECEWISE, or FULL under cudagraph_mode FULL), decode FULL graphs one per size
    up to max_num_seqs under FULL_DECODE_ONLY and FULL_AND_PIECEWISE; none under --enforce-eager or NONE; each
    size once per LoRA case (lora_graph_cases). defaults: the release's capture defaults on the GPU."""
    plan = sized_graph_plan(profile, cfg, seqs, batched, every_size_to, defaults)
    cases = lora_graph_cases(cfg, defaults)
    return plan if cases == 1 else replace(plan, piecewise=plan.piecewise * cases, full=plan.full * cases)


def sized_graph_plan(profile: P.VllmProfile, cfg: VllmConfig, seqs: int, batched: int, every_size_to: int,
                     defaults: CaptureDefaults) -> GraphPlan:
    """graph_plan's sizes, one graph each."""
    default = "FULL_AND_PIECEWISE" if profile.graph_sets > 1 else "PIECEWISE"
    reads = profile.capture_rule in P.CAPTURE_SETTINGS_RULES
    mode = cfg.cudagraph_mode if reads and cfg.cudagraph_mode else default
    if cfg.enforce_eager or mode == "NONE":
        return GraphPlan(mode if not cfg.enforce_eager else "NONE", 0, 0, 0)
    q = 1 + cfg.num_speculative_tokens
    sizes = requested_capture_sizes(profile.capture_rule, cfg, batched, every_size_to, defaults)
    if sizes is None and profile.capture_rule == "v1" and defaults.split_grids_to:
        return split_graph_plan(mode, seqs, batched, every_size_to, defaults.split_grids_to, cfg,
                                grid_tokens=defaults.grid_tokens, query_len=q)
    if profile.capture_rule == "v1" and defaults.reads_split_keys and (split_set(cfg) or q > 1 or
                                                                       cfg.max_decode_capture_tokens is not None):
        # a split key (the decode token budget, a draft) where the SM100 grids are off: unset kinds follow the
        # shared list; without any of them the split reproduces the shared plan
        shared = sizes if sizes is not None else capture_sizes(profile.capture_rule, seqs, batched, every_size_to,
                                                               defaults, q)
        return split_graph_plan(mode, seqs, batched, every_size_to, 0, cfg, shared, defaults.grid_tokens, q)
    if sizes is None:
        sizes = capture_sizes(profile.capture_rule, seqs, batched, every_size_to, defaults, q)
    if q > 1 and defaults.spec_rounds and mode in ("FULL_DECODE_ONLY", "FULL_AND_PIECEWISE"):
        sizes = rounded_to_query_len(sizes, q)
    # FULL decode graphs: the sizes from q to q x max_num_seqs tokens (the dispatcher's uniform decode keys)
    decode = [size for size in sizes if q <= size <= q * seqs] if mode in ("FULL_DECODE_ONLY",
                                                                          "FULL_AND_PIECEWISE") else []
    mixed = [] if mode == "FULL_DECODE_ONLY" else sizes
    piecewise = len(mixed) if mode != "FULL" else 0
    full = len(decode) + (len(mixed) if mode == "FULL" else 0)
    return GraphPlan(mode, piecewise, full, max(mixed + decode, default=0))


def graph_width(facts: ModelFacts, tp: int) -> int:
    """The MLP width one rank's graphs are built over: the dense intermediate, else the routed experts' (top-k)."""
    width = facts.intermediate_size or (facts.moe_intermediate_size or 0) * (facts.num_experts_per_tok or 1)
    return width // tp


def estimated_graph_memory(facts: ModelFacts, tp: int, plan: GraphPlan, layers: int) -> int:
    """What profile_cudagraph_memory reports (profiles.GRAPH_ESTIMATE_*): the first capture (one graph and the
    forward's intermediates at the largest size) plus every further graph of each mode at the per-graph cost."""
    if not plan.graphs:
        return 0
    width = graph_width(facts, tp)
    per_graph = max(layers * (P.GRAPH_ESTIMATE_LAYER_BYTES + P.GRAPH_ESTIMATE_BYTES_PER_WIDTH * width),
                    P.GRAPH_ESTIMATE_MIN_PER_GRAPH)
    first_capture = per_graph + plan.largest * (2 * width + 4 * (facts.hidden_size or 0)) * 2
    further = max(plan.piecewise - 1, 0) + max(plan.full - 1, 0)
    return first_capture + further * per_graph


def flashinfer_graph_workspace(version: str | None, cfg: VllmConfig, plan: GraphPlan) -> int:
    """The FlashInfer workspace the estimate's first FULL capture allocates (profiles.VLLM_FLASHINFER_GRAPH_WORKSPACE):
    only where the deployment names FLASHINFER and FULL graphs are captured."""
    size = P.row_for("vllm", P.VLLM_FLASHINFER_GRAPH_WORKSPACE, version)
    named = (cfg.attention_backend or "").strip().upper() == "FLASHINFER"
    return size if size and named and plan.full else 0


def graph_memory(profile: P.VllmProfile, cfg: VllmConfig, seqs: int, batched: int, layers: int,
                 facts: ModelFacts | None = None, every_size_to: int = 0,
                 defaults: CaptureDefaults = CaptureDefaults(), version: str | None = None) -> int:
    """CUDA-graph memory of one rank holding `layers` layers: vLLM's own estimate from the release that computes it
    (0.18.0, outside the budget until 0.20.0; with the model's facts; `version` keys its FlashInfer workspace, the
    profile row's own release when not given), else the capture's measured cost per layer and graph."""
    if cfg.enforce_eager:
        return 0
    if cfg.cuda_graph_reserve is not None:
        return cfg.cuda_graph_reserve
    plan = graph_plan(profile, cfg, seqs, batched, every_size_to, defaults)
    if profile.sizes_graphs_by_estimate and facts is not None:
        return estimated_graph_memory(facts, cfg.tensor_parallel_size, plan, layers) + \
            flashinfer_graph_workspace(version or profile.since, cfg, plan)
    # capture_model (gpu_model_runner.py@v0.11.0) captures a FULL graph only for the uniform-decode sizes up to
    # max_num_seqs: the graphs are the PIECEWISE sizes plus those, not two full sets
    captured = plan.graphs * layers * P.GRAPH_BYTES_PER_LAYER_GRAPH
    return captured + flashinfer_capture_workspace(version or profile.since, cfg, plan, facts)


def flashinfer_capture_workspace(version: str | None, cfg: VllmConfig, plan: GraphPlan,
                                 facts: ModelFacts | None) -> int:
    """The FlashInfer workspace the capture after the KV cache allocates (profiles.VLLM_FLASHINFER_CAPTURE_WORKSPACE):
    with FLASHINFER and FULL graphs, unless the release's kernel warmup made it first (every attention group
    FlashInfer: a model without Gated DeltaNet layers)."""
    size, warmed = P.row_for("vllm", P.VLLM_FLASHINFER_CAPTURE_WORKSPACE, version)
    named = (cfg.attention_backend or "").strip().upper() == "FLASHINFER"
    if not size or not named or not plan.full:
        return 0
    other_groups = facts is not None and (facts.is_gated_delta or facts.is_mamba2)
    return 0 if warmed and not other_groups else size


def gated_delta_report(shape, version: str | None) -> dict:
    """The Gated DeltaNet terms of the estimate (GatedDeltaKV.report) with the groups this release forms."""
    return shape.report(hybrid_groups(shape.full_layers, shape.linear_layers, hybrid_group_factor(version)))


def hybrid_kv_manager(engine: str, cfg: VllmConfig, version: str | None) -> bool:
    """Whether vLLM keeps a model's window and full-attention layers in KV-cache groups of their own; otherwise
    unify_hybrid_kv_cache_specs sizes every window layer as a full one (profiles.VLLM_HYBRID_KV_MANAGER_SINCE)."""
    if engine != "v1" or cfg.disable_hybrid_kv_cache_manager:
        return False
    return P.arithmetic_release("vllm", version) >= P.known_version(P.VLLM_HYBRID_KV_MANAGER_SINCE)


def chunked_local_hybrid(cfg: VllmConfig, version: str | None) -> bool:
    """Whether the release keeps the hybrid manager on for chunked local attention (profiles.VLLM_CHUNKED_LOCAL_HYBRID):
    the environment variable, else its default; never beside an EAGLE or MTP draft."""
    method = (cfg.speculative_method or "").lower()
    if method.startswith("eagle") or "mtp" in method:
        return False
    default, env_read = P.row_for("vllm", P.VLLM_CHUNKED_LOCAL_HYBRID, version)
    if env_read and cfg.chunked_local_hybrid_env is not None:
        return cfg.chunked_local_hybrid_env.strip() not in ("", "0")
    return default


def hybrid_group_factor(version: str | None) -> float | None:
    """The release's bound under which the larger layer count is the group size (VLLM_HYBRID_GROUP_SIZE_FACTORS)."""
    return P.row_for("vllm", P.VLLM_HYBRID_GROUP_SIZE_FACTORS, version)


def hybrid_groups(full_layers: int, window_layers: int, factor: float | None) -> tuple[int, int, int]:
    """(group size, full-attention groups, window groups) as _get_kv_cache_groups_uniform_page_size forms them:
    groups of the smaller kind's layer count (the larger one's when within `factor`), the last group of each kind
    padded to the size."""
    smallest, largest = min(full_layers, window_layers), max(full_layers, window_layers)
    size = largest if factor is not None and largest < smallest * factor else smallest
    return size, math.ceil(full_layers / size), math.ceil(window_layers / size)


def kv_tokens_printed(version: str | None) -> str:
    """How the release prints "GPU KV cache size" (profiles.VLLM_KV_TOKENS_PRINTED)."""
    return P.row_for("vllm", P.VLLM_KV_TOKENS_PRINTED, version)


def pool(available: int, shape, block: int, max_len: int, override: int | None,
         group_factor: float | None = None, printed: str = "blocks-over-groups") -> tuple[int, float, int]:
    """(capacity tokens as vLLM prints them, max concurrency at max_len, pool bytes) of one rank's KV memory."""
    capacity, concurrency, pool_bytes = pool_blocks(available, shape, block, max_len, override, group_factor)
    if printed == "concurrency-x-max-len" and max_len:
        # _report_kv_cache_config@v0.21.0: the tokens of max_len requests the pool holds at that concurrency
        capacity = int(concurrency * max_len)
    return capacity, concurrency, pool_bytes


def pool_blocks(available: int, shape, block: int, max_len: int, override: int | None,
                group_factor: float | None = None) -> tuple[int, float, int]:
    """pool() as releases up to 0.20 print it: the blocks shared out over the KV-cache groups."""
    if available <= 0:
        return 0, 0.0, 0
    if getattr(shape, "is_gated_delta", False):
        assert shape.full_layers > 0  # hfconfig counts a full layer every full_attention_interval
        return shape.pool(available, max_len, override,
                          hybrid_groups(shape.full_layers, shape.linear_layers, group_factor))
    if not isinstance(shape, KVShape):  # DeepSeek-V4's compressed cache: its own per-request cost
        concurrency = available / shape.request_bytes(max_len or 1)
        return int(concurrency * (max_len or 1)), concurrency, available
    if shape.hybrid and shape.full_layers:
        # group_size tensors of `blocks` pages each, one layer of every group per tensor; the printed size is
        # the blocks shared out over the groups ("GPU KV cache size", kv_cache_utils.py@v0.10.1.1)
        # Gemma 4: the kind with the smaller page holds more tokens per block (KVShape.block_sizes); the printed
        # size counts the smaller block (_report_kv_cache_config's min_block_size)
        size, full_groups, window_groups = hybrid_groups(shape.full_layers, shape.window_layers, group_factor)
        full_block, window_block = shape.block_sizes(block)
        page = window_block * shape.layer_bytes
        blocks = override or available // (page * size)
        per_request = full_groups * math.ceil((max_len or 1) / full_block) + \
            window_groups * window_pages(shape.window, window_block, shape.batched_tokens, max_len or 1, shape.chunked)
        return (blocks // (full_groups + window_groups) * min(full_block, window_block), blocks / per_request,
                blocks * page * size)
    if shape.hybrid:  # every layer has the window: one group of all layers, a request held to its window
        blocks = override or available // (block * shape.bytes_per_token)
        per_request = window_pages(shape.window, block, shape.batched_tokens, max_len or 1, shape.chunked)
        return blocks * block, blocks / per_request, blocks * block * shape.bytes_per_token
    blocks = override or available // (block * shape.bytes_per_token)
    concurrency = blocks / math.ceil(max_len / block) if max_len else 0.0
    return blocks * block, concurrency, blocks * block * shape.bytes_per_token


def sampler_warmup(facts: ModelFacts, cfg: VllmConfig, row: P.VllmSamplerRow, seqs: int, batched: int,
                   chunk: int | None, free: int, version: str | None = None, held: bool = False) -> SamplerWarmup:
    """The warm-up's forward over its rows, then its sampler pass; `free` is what the GPU has left by then."""
    rows = warmup_rows(row, seqs, batched)
    # a held MoE workspace was sized by the profile's larger batch: the warm-up's forward reuses it (counted as
    # held memory in `free`), so its own peak leaves the workspace out
    forward = activation_peak(facts, rows, rows, cfg.tensor_parallel_size, cfg, last_stage=True, chunk=chunk,
                              held=held, reused=held, form=dense_forward_form(facts, "v1", version, cfg))
    peak = max(forward,
               sampler_phase_bytes(facts, rows, rows, row.kernel))
    return SamplerWarmup(rows, peak, free, profiled_sampler(facts, batched, seqs, "v1", row, version), row.kernel)


def warmup_verdict(verdict: str, warmup: SamplerWarmup | None) -> str:
    """An engine that passed its KV checks dies at the sampler warm-up when that needs more than is free."""
    if verdict == FITS and warmup is not None and warmup.deficit > 0:
        return SAMPLER_WARMUP_OOM
    return verdict


def hybrid_state_blocks(shape, available: int, override: int | None, version: str | None, graph_mode: str,
                        seqs: int) -> dict:
    """A Gated DeltaNet pool's blocks held against max_num_seqs (core/memory/state_blocks.py); {} for other shapes."""
    if not getattr(shape, "is_gated_delta", False):
        return {}
    from gpustack_guard.core.memory.state_blocks import state_blocks

    size = hybrid_groups(shape.full_layers, shape.linear_layers, hybrid_group_factor(version))[0]
    return state_blocks(shape, available, override, size, version, graph_mode, seqs)


def state_blocks_verdict(verdict: str, report: dict, reached: bool) -> str:
    """reached: no refusal of the configuration stopped the engine before its KV cache."""
    if not report or not reached:
        return verdict
    from gpustack_guard.core.memory.state_blocks import blocks_verdict

    return blocks_verdict(verdict, report)


def warmup_report(warmup: SamplerWarmup | None, fixes: dict[str, float]) -> dict:
    """The estimate's extra keys for the sampler terms (zeros where the engine has no post-KV warm-up)."""
    if warmup is None:
        return {"sampler_peak_in_profile_bytes": 0, "sampler_warmup_bytes": 0, "sampler_warmup_free_bytes": None,
                "sampler_warmup_rows": 0, "sampler_kernel": None, "sampler_warmup_fix": {}}
    return {"sampler_peak_in_profile_bytes": warmup.profiled, "sampler_warmup_bytes": warmup.peak,
            "sampler_warmup_free_bytes": warmup.free, "sampler_warmup_rows": warmup.rows,
            "sampler_kernel": warmup.kernel, "sampler_warmup_fix": fixes}


def warmup_fixes(facts: ModelFacts, gpu_total: int, cfg: VllmConfig, version: str | None, gpu_name: str,
                 stage_totals: list[int] | None, requested: int, seqs: int,
                 warmup: SamplerWarmup | None) -> dict[str, float]:
    """The two flags that let the warm-up fit, when it does not: the fraction that leaves its deficit outside the
    budget (the KV pool shrinks by as much), and the largest --max-num-seqs whose whole estimate clears it."""
    if warmup is None or warmup.deficit <= 0:
        return {}
    fraction = math.floor((requested - warmup.deficit) / gpu_total * 100) / 100
    fits_at = 0
    low, high = 1, seqs - 1
    while low <= high:  # the warm-up peak grows with the rows; the free memory barely moves
        middle = (low + high) // 2
        trial = estimate_vllm(facts, gpu_total, replace(cfg, max_num_seqs=middle), version=version,
                              gpu_name=gpu_name, stage_totals=stage_totals, search_fixes=False)
        if trial.verdict == SAMPLER_WARMUP_OOM:
            high = middle - 1
        else:
            fits_at, low = middle, middle + 1
    return {"gpu_memory_utilization": max(fraction, 0.0), "max_num_seqs": fits_at}


class MtpDraft(TableRow):  # tuple-built: nothing generated to compile at import
    """The target's own MTP layers as the V1 drafter loads them on one rank (profiles.VLLM_MTP_DRAFT)."""

    layers: int  # MTP decoder layers loaded (num_nextn_predict_layers), each with its own attention KV
    decoder: int  # their decoder layers' bytes on one rank
    projections: int  # eh_proj and the three norms of every layer, whole on every rank
    heads: int  # the SharedHead.head copies kept (0 where the target's lm_head replaces them)
    source: str
    table: str = "profiles.VLLM_MTP_DRAFT"  # the rows it was sized by, for the note

    @property
    def weights(self) -> int:
        return self.decoder + self.projections + self.heads

    def report(self, kv_layers: int, kv_bytes_per_token: int) -> dict:
        return {"kind": "mtp-layers", "layers": self.layers, "weights": self.weights, "decoder_layers": self.decoder,
                "projections_and_norms": self.projections, "shared_heads": self.heads,
                "kv_layers": kv_layers, "kv_bytes_per_token": kv_bytes_per_token,
                "profile_run": "not added", "cuda_graphs": "not added", "source": self.source}


def window_in_flight_steps(profile: P.VllmProfile, cfg: VllmConfig, runner: str, version: str | None) -> int:
    """Steps of max_num_batched_tokens a sliding window's (and a compressor state's) admission cap holds beyond the
    window. One up to 0.25.x (VllmProfile.in_flight_steps 1); from 0.26.0 VllmConfig.max_concurrent_batches
    (config/vllm.py@v0.26.0 .. @v0.34.0, profiles.VLLM_PROFILES' 0.26.0 row): under async scheduling PP + 1 on the
    V2 model runner, 2 at PP 1 on the V1 runner (which overlaps no steps under PP: PP), without it PP."""
    if profile.in_flight_steps == 1:
        return 1
    pp = cfg.pipeline_parallel_size
    on = cfg.async_scheduling
    if on is None:  # the release's default (config/vllm.py __post_init__ when async_scheduling is None)
        off_for = P.vllm_async_default_row(version).off_for_methods
        on = (cfg.speculative_method or "").lower() not in off_for
    if not on:
        return pp
    return pp + 1 if runner == "v2" else (2 if pp == 1 else pp)


def mtp_draft(facts: ModelFacts, cfg: VllmConfig, version: str | None, engine: str) -> MtpDraft | None:
    """The drafter of an MTP method on a target whose MTP module was read, at PP 1 on the V1 engine; None keeps the
    note (another method, target or release, PP > 1, or a config without num_nextn_predict_layers)."""
    method = (cfg.speculative_method or "").lower()
    if facts.is_gated_delta:  # kv_shape refused every other draft on it (gated_delta_draft_unread)
        return gated_delta_mtp(facts, cfg, version) if engine == "v1" and cfg.pipeline_parallel_size == 1 else None
    count = facts.num_nextn_predict_layers or 0
    row = P.vllm_mtp_draft_row(version)
    module = P.VLLM_MTP_TARGETS.get(facts.architecture or "")
    if (method not in P.VLLM_MTP_METHODS or not module or not count or not row.counted or engine != "v1"
            or cfg.pipeline_parallel_size != 1 or facts.is_compressed_attention):
        return None
    layout = weight_layout(facts)
    tp = cfg.tensor_parallel_size
    # an MTP layer is a decoder layer of the target's last-layer kind (MoE past first_k_dense_replace)
    last = len(layout.per_layer) - 1
    one = layers_on_rank(layout, last, last + 1, tp)
    H, V = facts.hidden_size, facts.vocab_size
    assert H is not None and V is not None  # missing_for_params checked them
    high = UNQUANTISED_BYTES.get(facts.dtype or "bfloat16", 2)
    head = math.ceil(V * H * high / tp) if row.keeps_mtp_head else 0
    return MtpDraft(count, count * one, count * (2 * H * H + 3 * H) * high, count * head,
                    f"model_executor/models/{module}; {row.source}")


def gated_delta_mtp(facts: ModelFacts, cfg: VllmConfig, version: str | None) -> MtpDraft | None:
    """A Gated DeltaNet target's MTP module on one rank (profiles.VLLM_GATED_DELTA_SPEC): full-attention decoder
    layers of the target's shape, one fc split over TP and three norms; lm_head and embedding are the target's."""
    module = P.VLLM_GATED_DELTA_MTP_TARGETS.get(facts.architecture or "")
    if not module or gated_delta_draft_unread(facts, cfg, version):
        return None  # kv_shape refuses the estimate (GSG030) with the reason
    layout = weight_layout(facts)
    tp, count = cfg.tensor_parallel_size, gated_delta_mtp_layers(facts)
    full = max(i for i in range(len(layout.per_layer)) if not is_linear_layer(facts, i))
    one = layers_on_rank(layout, full, full + 1, tp)
    H = facts.hidden_size
    assert H is not None  # missing_for_params checked it
    high = UNQUANTISED_BYTES.get(facts.dtype or "bfloat16", 2)
    return MtpDraft(count, count * one, math.ceil(2 * H * H * high / tp) + 3 * H * high, 0,
                    f"model_executor/models/{module}; {P.vllm_gated_delta_spec_row(version).source}",
                    "profiles.VLLM_GATED_DELTA_SPEC, with its speculative state pages")


def draft_report(draft: MtpDraft | None, shape, kv_layers: int, layers: int) -> dict:
    """extra["speculative_draft"]: the drafter's terms and the KV bytes per token its layers add ({} uncounted)."""
    if draft is None:
        return {}
    if isinstance(shape, KVShape):
        return draft.report(kv_layers, stage_shape(shape, layers + kv_layers, layers).bytes_per_token
                            - stage_shape(shape, layers, layers).bytes_per_token)
    added = getattr(shape, "draft_full_layers", 0)  # a Gated DeltaNet shape holds them among its full layers
    return {**draft.report(added, added * getattr(shape, "token_bytes", 0)),
            "speculative_state_blocks": getattr(shape, "spec_blocks", 0)}


def speculative_note(cfg: VllmConfig, draft: MtpDraft | None = None) -> str:
    """What an estimate with a draft counts (its graphs' query length, an MTP drafter) and what it leaves out."""
    named = ", ".join(part for part in (cfg.speculative_method and f"method {cfg.speculative_method}",
                                        cfg.speculative_model and f"draft {cfg.speculative_model}") if part)
    counted = (f"the CUDA graphs are sized for {1 + cfg.num_speculative_tokens} tokens per decode request "
               f"(profiles.VLLM_SPEC_CAPTURE); " if cfg.num_speculative_tokens else "")
    if draft:
        return (f"--{cfg.speculative_flag} ({named}): {counted}the target's {draft.layers} MTP layer(s) are "
                f"counted as the drafter loads them ({draft.weights / GiB:.2f} GiB per rank, {draft.layers} more "
                f"KV layer(s); {draft.table}); the drafter's profile run and CUDA graphs are not")
    return (f"--{cfg.speculative_flag}{' (' + named + ')' if named else ''}: {counted}the drafter is not counted "
            "(gsg reads no draft config): its weights, KV cache and profile run (or the MTP layers) come on top of "
            "these figures")


def verdict_of(weights: int, gpu_total: int, available: int, needed: int, max_len: int) -> str:
    if weights > gpu_total:
        return DOES_NOT_FIT
    if available <= 0:
        return NO_KV_MEMORY
    if max_len and needed > available:
        return KV_BELOW_MAX_LEN
    return FITS


def unified_local_layers(facts: ModelFacts, cfg: VllmConfig, version: str | None, engine: str,
                         notes: list[str]) -> ModelFacts:
    """The facts with window or chunked layers made full ones where unify_hybrid_kv_cache_specs does that (no hybrid
    manager, or none for chunked local attention: profiles.VLLM_CHUNKED_LOCAL_HYBRID), with a note saying so."""
    window_count, layer_count = facts.sliding_window_layers or 0, facts.num_hidden_layers or 0
    if facts.sliding_window and 0 < window_count < layer_count and \
            not hybrid_kv_manager(engine, cfg, version):
        # unify_hybrid_kv_cache_specs: the window layers become full-attention ones, sized at full length
        facts = replace(facts, sliding_window=None, sliding_window_layers=None)
        notes.append(f"vLLM {version or P.DEFAULT_VERSIONS['vllm']} sizes the {window_count} sliding-window layers "
                     "at full length (no hybrid KV-cache manager)")
    chunk_count = facts.chunked_attention_layers or 0
    if facts.attention_chunk_size and 0 < chunk_count < layer_count and not (
            hybrid_kv_manager(engine, cfg, version) and chunked_local_hybrid(cfg, version)):
        # the manager is off for chunked local attention (profiles.VLLM_CHUNKED_LOCAL_HYBRID): every layer full
        facts = replace(facts, attention_chunk_size=None, chunked_attention_layers=None)
        notes.append(f"vLLM {version or P.DEFAULT_VERSIONS['vllm']} sizes the {chunk_count} chunked-attention layers "
                     "at full length (no hybrid KV-cache manager for chunked local attention)")
    return facts


def estimate_vllm(facts: ModelFacts, gpu_total: int, cfg: VllmConfig, *, version: str | None,
                  gpu_name: str = "", stage_totals: list[int] | None = None, search_fixes: bool = True) -> Estimate:
    """stage_totals: the smallest GPU of each pipeline stage (heterogeneous PP); else every stage gets gpu_total."""
    # vLLM's budget is gmu x the total CUDA reports, which leaves out the driver's reserve in NVML's total
    gpu_total, total_row = P.cuda_total(gpu_total, gpu_name)
    stage_totals = [P.cuda_total(t, gpu_name)[0] for t in stage_totals or ()] or None
    profile, generation_reason = engine_generation(version, cfg, gpu_name)
    capture = capture_defaults(version, gpu_name)
    sampler_row = sampler_row_for(version, cfg.flashinfer_sampler_env)
    tp, pp = cfg.tensor_parallel_size, cfg.pipeline_parallel_size
    notes: list[str] = [generation_reason] if generation_reason else []
    runner, profile, sampler_row = runner_rows(facts, version, profile, sampler_row, notes, cfg.v2_runner_env)
    capture = capture._replace(spec_rounds=capture.spec_rounds and runner != "v2")  # MRV1's (VLLM_SPEC_CAPTURE)
    draft = mtp_draft(facts, cfg, version, profile.engine) if cfg.speculative_flag else None
    if cfg.speculative_flag:
        notes.append(speculative_note(cfg, draft))
    derived = derive_for_facts(facts.length_config, facts.max_position_embeddings, version,
                               disable_sliding_window=cfg.disable_sliding_window)
    native = derived.limit if derived else 0
    length_check = check_max_model_len(cfg.max_model_len, derived, version, facts.allow_long_max_model_len) \
        if derived else None
    max_len = cfg.max_model_len
    if max_len is None:
        default = derived.default if derived else 0
        max_len = min(default, P.GPUSTACK_INJECTED_MAX_MODEL_LEN) if cfg.gpustack_max_model_len and default else default
    if length_check and (length_check.error or length_check.warning):
        notes.append(f"vLLM {'refuses' if length_check.error else 'warns'}: "
                     f"{length_check.error or length_check.warning}")
    extensible, gmu, startup_free_check = sizing_mode(profile, cfg)

    defaults = default_batching(profile, gpu_total, gpu_name, max_len, cfg.enable_chunked_prefill, version)
    mode = performance_mode(cfg, version)
    notes.extend(mode.notes(version))
    chunked = defaults[2]
    scheduled, seqs = batch_sizes(cfg, defaults, max_len, profile.engine, version)
    refusal = scheduler_refusal(scheduled, seqs, max_len, chunked)
    # the tokens the profile run pushes through: V0 without chunked prefill profiles a whole max-length prompt
    batched = max(scheduled, max_len) if profile.engine == "v0" and not chunked else scheduled
    given_cfg = cfg  # the deployment's own settings: the warm-up fixes re-estimate from them
    cfg, capture_hook = model_capture_override(facts, cfg, version, gpu_name, scheduled)
    notes.extend(capture_hook_notes(capture_hook, facts.architecture, version))
    # vLLM reads VLLM_FUSED_MOE_CHUNK_SIZE only when a fused-MoE layer runs: a dense model never parses it
    chunk = fused_moe_chunk(version, cfg.fused_moe_chunk_size if facts.is_moe else None)
    moe_held = moe_workspace_held(version, facts) if profile.engine == "v1" else False
    # a held MoE workspace is still allocated when the profile's sampler runs (it adds to that phase) and after
    # the KV cache is taken (the warm-up reuses it, so it is held memory there, not part of the warm-up's peak)
    held_workspace = moe_workspace(facts, batched, tp, cfg.expert_parallel, chunk, held=True) if moe_held else 0
    non_torch, comm_profiled, comm_after = parallel_overheads(gpu_name, tp, pp, cfg.disable_custom_all_reduce,
                                                              version, cfg.nccl_p2p_disabled, profile.engine)
    # NCCL memory the profile makes beyond the release's row: vLLM counts it as non-torch (profiles.VLLM_NVLS)
    device_group_nccl, nvls = profiled_nccl(gpu_name, tp, version, cfg)
    non_torch += device_group_nccl + nvls
    # allocated after the snapshot before 0.11: profiled; before it from 0.11, so outside (PR #25359)
    comm_in_budget, comm_outside = (comm_profiled, 0) if profile.comm_in_budget else (0, comm_after)
    # V1 0.8.0-0.9.0 counts every non-torch byte on the device as non-torch memory, its own CUDA context included
    # (VllmProfile.context_in_budget): the context moves from outside the budget into the non-torch term
    context_outside = 0 if profile.context_in_budget else P.CUDA_CONTEXT
    non_torch, measured = non_torch_with_context(profile, gpu_name, tp * pp, non_torch)
    # up to 0.2.4 the profile subtracts torch's peak alone (VllmProfile.torch_peak_only): non-torch memory and the
    # communicators' buffers take their room from outside gmu x total
    non_torch_in_budget = 0 if profile.torch_peak_only else non_torch

    if derived and derived.sliding_window_disabled:  # every layer then keeps full-length KV
        facts = replace(facts, sliding_window=None, sliding_window_layers=None)
    facts = unified_local_layers(facts, cfg, version, profile.engine, notes)
    shape = kv_shape(facts, cfg, batched * window_in_flight_steps(profile, cfg, runner, version), notes, version,
                     gpu_name)
    block = shape.block_size
    align_refusal = align_budget_refusal(shape, scheduled, version)

    L = facts.num_hidden_layers
    assert L is not None and facts.vocab_size is not None, "engines run on facts whose missing_for_params() is empty"
    if facts.is_compressed_attention or pp == 1:
        parts = [math.ceil(L / pp)] * pp if pp > 1 else [L]
        weights_by_stage = [weights_per_rank(facts, tp, pp)] * pp
    else:
        parts = pp_partitions(L, pp, cfg.pp_layer_partition)
        weights_by_stage = stage_weights(facts, tp, parts)
    totals = list(stage_totals) if stage_totals and len(stage_totals) == pp else [gpu_total] * pp
    backend = mxfp4_backend(version, gpu_name) if (facts.quant_method or "").lower() == "mxfp4" else None
    padding = mxfp4_padding_per_layer(facts, tp, cfg.expert_parallel, backend)
    if padding:
        dense = facts.first_k_dense_replace or 0
        counts: list[int] = [n or 0 for n in parts]
        starts = [sum(counts[:s]) for s in range(len(counts))]
        moe_layers = [max(0, start + count - max(start, dense)) for start, count in zip(starts, counts)]
        weights_by_stage = [w + padding * n for w, n in zip(weights_by_stage, moe_layers)]
        notes.append(f"MXFP4 experts padded for vLLM's {backend} MoE backend: "
                     f"+{padding * max(moe_layers) / GiB:.2f} GiB per rank")

    weights_by_stage, marlin = fp8_marlin_weights(facts, cfg, parts, version, gpu_name, weights_by_stage, notes)
    weights_by_stage = gemma4_beyond_checkpoint(facts, tp, parts, version, weights_by_stage, notes)
    weights_by_stage = with_rope_caches(facts, version, weights_by_stage, notes)
    weights_by_stage, offloaded, lora = flag_weights(facts, cfg, parts, weights_by_stage, notes, version)
    if draft:  # PP 1 only (mtp_draft): loaded with the target, inside "Model loading took"
        weights_by_stage = [w + draft.weights for w in weights_by_stage]
    draft_kv_layers = draft.layers if draft and isinstance(shape, KVShape) else 0

    stages: list[StageBudget] = []
    phases: list[tuple[int, int, int]] = []  # per stage: (forward peak, sampler phase, encoder profile)
    mm_profile = encoder_profile(facts, cfg, batched, seqs, max_len, version, runner) if profile.engine == "v1" \
        else EncoderProfile()
    alpha_rows = v1_alpha_logits_rows(profile.engine, version)
    forward_form = dense_forward_form(facts, profile.engine, version, cfg)
    for s, (layers, weights, total) in enumerate(zip(parts, weights_by_stage, totals)):
        requested = math.ceil(gmu * total)
        forward, sampler = profile_phases(facts, batched, seqs, cfg, s == pp - 1, chunk, moe_held, profile.engine,
                                          sampler_row, version, alpha_rows, gpu_name)
        if sampler:
            sampler += held_workspace
        # the encoder runs first on the first stage; its inputs and outputs stay allocated through both phases
        encoder = mm_profile.added(max(forward, sampler)) if s == 0 else 0
        phases.append((forward, sampler, encoder))
        activation = max(forward, sampler) + encoder
        graphs = graph_memory(profile, cfg, seqs, batched, layers, facts, mode.every_size_to, capture, version)
        graphs_in_budget = graphs if profile.graphs_profiled else 0
        if cfg.kv_cache_memory is not None:
            available = cfg.kv_cache_memory
        else:
            available = (extensible_kv_bytes(requested, total - P.CUDA_CONTEXT - comm_outside,
                                             weights + non_torch + graphs, activation) if extensible else
                         requested - weights - activation - non_torch_in_budget - graphs_in_budget - comm_in_budget)
        # compressed: whole; the MTP drafter's attention layers share the target's KV group (get_kv_cache_spec)
        rank_shape = stage_shape(shape, layers + draft_kv_layers, L) if isinstance(shape, KVShape) else shape
        stages.append(StageBudget(s, layers, total, requested, weights, activation, graphs, available, rank_shape))
    if cfg.kv_cache_memory is not None:
        notes.append("--kv-cache-memory bypasses gpu_memory_utilization for the KV pool")

    def stage_blocks(st: StageBudget) -> float:
        sh = st.shape
        if st.kv_available <= 0:
            return 0
        if not sh.hybrid:
            return st.kv_available // (block * sh.bytes_per_token)
        return st.kv_available / sh.request_bytes(max_len or 1)

    worst = min(stages, key=stage_blocks)  # vLLM gives every rank the smallest rank's block count
    blocks_override = cfg.num_gpu_blocks_override
    whole_model_check = pp > 1 and profile.pp_whole_model_check and isinstance(shape, KVShape)
    if whole_model_check:
        # the merged spec of all workers is checked against min(available_memory) over the workers, whatever
        # their layer counts (vllm#34076 prints the 5070 Ti's 3.18 GiB; PR #34080 proposed per-layer ratios):
        # that worker is the one reported; the pool still gets the smallest block count of any worker
        if not worst.shape.hybrid and blocks_override is None:
            blocks_override = int(stage_blocks(worst))
        worst = min(stages, key=lambda st: st.kv_available)
    available, rank_shape = worst.kv_available, worst.shape
    capacity, concurrency, kv_pool = pool(available, rank_shape, block, max_len, blocks_override,
                                          hybrid_group_factor(version), kv_tokens_printed(version))

    check_shape = rank_shape
    if whole_model_check:
        assert isinstance(shape, KVShape), "whole_model_check excludes CompressedKV"
        check_shape = stage_shape(shape, L, L)
        notes.append(f"vLLM {version or P.DEFAULT_VERSIONS['vllm']} checks one request's KV of all {L} layers "
                     "against the smallest pipeline stage (vllm#34076)")
    estimated = check_shape.max_tokens_fitting(available, max(native, max_len, 1))
    needed = check_shape.request_bytes(max_len) if max_len else 0
    graphs = worst.cuda_graphs
    # What a started instance holds beyond its budget, counted once: what exists before vLLM's snapshot and
    # graphs captured after the KV cache. The co-location sum (footprint) takes only these.
    outside = context_outside + comm_outside + (0 if profile.graphs_profiled else graphs)
    requested = worst.requested
    footprint = requested + outside
    # The headroom rule adds a run-time margin on top: allocator slack, calibrated on the field-notes OOM at 0.92
    # (profiles.ALLOCATOR_SLACK). The sampler warm-up is its own term (sampler_warmup below).
    headroom_needed = outside + int(P.ALLOCATOR_SLACK * requested)
    headroom = worst.gpu_total - requested
    engine_use = worst.weights + non_torch + worst.cuda_graphs  # what stays allocated after warmup
    if extensible:
        footprint, headroom, headroom_needed = extensible_holdings(worst, engine_use, comm_outside, available)
        notes.append(f"vLLM {version or P.DEFAULT_VERSIONS['vllm']} sizes the KV cache from the memory free after "
                     f"warmup (extensible KV cache, gpu_memory_utilization {gmu} as a cap)")

    verdict = verdict_of(worst.weights, worst.gpu_total, available, needed, max_len)
    # the extensible cache is sized after the warm-up ran, so only the estimate-based V1 sizing can die there
    last = stages[-1]
    last_pool = kv_pool if pp == 1 or last.shape.hybrid else capacity * last.shape.bytes_per_token
    held = last.weights + non_torch + comm_in_budget + last_pool + last.cuda_graphs + context_outside + \
        comm_outside + held_workspace
    # a budget above what is free once CUDA (and NCCL) started is refused before the weights load: the engine
    # never reaches the warm-up, and GSG041 names that refusal (gpu_worker.init_device / request_memory)
    refused_at_start = startup_free_check and any(
        st.requested > st.gpu_total - P.CUDA_CONTEXT - comm_outside for st in stages)
    # The warm-up is judged on what is free once everything held is in place: memory_profiling empties torch's
    # cache after the profile (utils.py@v0.11.0) and compile_or_warm_up_model captures the graphs before the
    # sampler pass (gpu_worker.py@v0.8.0 .. @v0.19.0), so graphs outside the budget that overflow the headroom do
    # not die at capture: they take the room the profile's released activation left for the warm-up
    warmup_free = last.gpu_total - held
    # the V1 alpha's compile_or_warm_up_model (gpu_worker.py@v0.7.0..@v0.7.3) only captures graphs: no sampler pass
    warmup = sampler_warmup(facts, cfg, sampler_row, seqs, batched, chunk, warmup_free, version, moe_held) \
        if profile.engine == "v1" and alpha_rows is None and not extensible and not refused_at_start else None
    verdict = warmup_verdict(verdict, warmup)
    fixes = warmup_fixes(facts, gpu_total, given_cfg, version, gpu_name, stage_totals, worst.requested, seqs, warmup) \
        if search_fixes else {}
    if not max_len:
        notes.append("max_model_len unknown: set --max-model-len or guard.model.max_position_embeddings")
    graph_set = graph_plan(profile, cfg, seqs, batched, mode.every_size_to, capture)
    # a hybrid's state blocks against max_num_seqs, checked before the capture (profiles.VLLM_STATE_BLOCKS_ROWS);
    # a scheduler refusal (GSG042) stops the engine at its configuration, before the KV cache exists
    blocks_report = hybrid_state_blocks(rank_shape, available, blocks_override, version, graph_set.mode, seqs)
    verdict = state_blocks_verdict(verdict, blocks_report, reached=not (refusal or align_refusal))
    notes.extend(gpu_arch.uma_notes("vllm", P.arithmetic_version("vllm", version), gpu_name))

    return Estimate(
        engine="vLLM", version=version or f"{P.DEFAULT_VERSIONS['vllm']} (assumed)", gpu_total=worst.gpu_total,
        gpus=tp * pp, requested=requested, weights=worst.weights, activation=worst.activation,
        non_torch=non_torch, cuda_graphs=graphs, kv_cache=kv_pool, kv_available=available,
        headroom=headroom, headroom_needed=headroom_needed, footprint=footprint,
        kv_bytes_per_token=rank_shape.bytes_per_token, block_size=block, kv_capacity_tokens=capacity,
        max_model_len=max_len, estimated_max_model_len=estimated, max_num_seqs=seqs, max_concurrency=concurrency,
        verdict=verdict, kv_needed=needed, notes=tuple(notes),
        extra={"engine_generation": profile.engine, "max_num_batched_tokens": batched, "chunked_prefill": chunked,
               "scheduler_refusal": refusal,
               # prefix caching's block above the step's tokens (profiles.VLLM_GATED_DELTA_ALIGN_BUDGET_ROWS)
               "align_block_refusal": align_refusal,
               "cuda_graphs_in_budget": profile.graphs_profiled, "model_runner": runner,
               "cuda_graph_counts": {"piecewise": graph_set.piecewise, "full": graph_set.full},
               "cuda_graph_mode": graph_set.mode,
               "cuda_graph_largest": graph_set.largest,  # the largest size captured, in tokens
               "cuda_graph_query_len": 1 + cfg.num_speculative_tokens,  # tokens per decode request the graphs hold
               "cuda_graph_query_len_source": P.vllm_spec_capture_row(version).source
               if cfg.num_speculative_tokens else "",
               # the drafter's terms where they are counted (profiles.VLLM_MTP_DRAFT), else {}
               "speculative_draft": draft_report(draft, shape, draft_kv_layers, L),
               # the model's config hook that widened the capture sizes (profiles.VLLM_MODEL_CAPTURE)
               "cuda_graph_model_hook": capture_hook.source if capture_hook else "",
               "performance_mode": performance_mode_effect(mode, cfg, facts, defaults, max_len, version, profile,
                                                           batched, seqs, capture),
               "gpu_memory_utilization": gmu,
               "cuda_total": gpu_total, "cuda_total_source": total_row.source if total_row else "",
               # V0 samples with its own sort whatever the env says (profiled_sampler): no V1 rule to name
               "term_rules": {**(v1_alpha_term_rules(alpha_rows, forward_form) if alpha_rows is not None else
                                 {**dense_forward_rule(forward_form, facts.is_compressed_attention),
                                  **(sampler_term_rule(version, sampler_row, cfg.flashinfer_sampler_env)
                                     if profile.engine != "v0" else {})}),
                              **non_torch_rule(version, device_group_nccl, nvls)},
               "device_group_nccl": device_group_nccl, "nccl_nvls": nvls,
               **warmup_report(warmup, fixes), **blocks_report, "cuda_context": P.CUDA_CONTEXT,
               "comm_buffers": comm_outside,
               "cuda_context_in_budget": profile.context_in_budget,
               "comm_buffers_in_budget": comm_in_budget, "interconnect": interconnect(gpu_name),
               "nccl_p2p_disabled": cfg.nccl_p2p_disabled,
               "non_torch_source": measured.source if measured else P.vllm_non_torch(
                   version, non_torch_links(gpu_name, tp, pp, cfg.nccl_p2p_disabled, profile.engine)).source,
               "mxfp4_backend": backend,
               # block-FP8 scales Marlin holds beyond the checkpoint's on the binding rank (profiles.VLLM_FP8_MARLIN)
               "fp8_marlin_scales": fp8_marlin_report(marlin, worst.stage) if marlin else {},
               "rope_cache_bytes": rope_cache_bytes(facts, version),  # inside the weights (profiles.VLLM_ROPE_CACHE)
               # a Gated DeltaNet hybrid's state, pages and groups term by term (core/memory/gated_delta.py)
               "gated_delta": gated_delta_report(rank_shape, version) if facts.is_gated_delta else {},
               # a Mamba-2 hybrid's the same way (core/memory/mamba2.py)
               "mamba2": gated_delta_report(rank_shape, version) if facts.is_mamba2 else {},
               "moe_workspace": moe_workspace(facts, batched, tp, cfg.expert_parallel, chunk, moe_held),
               "moe_workspace_held": moe_held,
               # DeepSeek-V4's forward peak by part (profiles.VLLM_V4_FORWARD_SOURCE), before the margin and cuBLAS
               "v4_forward_parts": v4_forward_parts(facts, batched, tp, cfg, chunk, gpu_name)
               if facts.is_compressed_attention else {},
               # what the WorkspaceManager was asked for; its buffer, v4_forward_parts' workspace_manager, is the max
               "v4_workspace_requests": v4_workspace_requests(facts, batched, cfg.max_model_len or 0, tp,
                                                              cfg.expert_parallel, gpu_name)
               if facts.is_compressed_attention else {},
               "gmu_semantics": "extensible" if extensible else
               ("per-instance" if profile.per_instance_budget else "global-cap"),
               "startup_free_check": startup_free_check,
               "engine_use": engine_use,
               "outside_budget": outside, "cpu_offloaded": max(offloaded),
               "lora_buffers": max(s.bytes if s else 0 for s in lora),
               **({"lora": max((s for s in lora if s), key=lambda s: s.bytes).as_json()} if any(lora) else {}),
               "encoder_profile": mm_profile.report(),
               # the binding rank's profile phases: its activation is max(forward, sampler) + encoder
               "forward_peak": phases[worst.stage][0], "sampler_peak": phases[worst.stage][1],
               "encoder_peak": phases[worst.stage][2],
               **({"stages": [st.report() for st in stages]} if pp > 1 else {}),
               **({"derived_max_model_len": native, "max_model_len_key": derived.key,
                   "max_model_len_refused": length_check.error if length_check else None} if derived else {})},
    )


# --- block-FP8 weights through Marlin (profiles.VLLM_FP8_MARLIN) ------------------------------------------------
# vLLM runs them weight-only (W8A16) on GPUs without native FP8: the weight bytes stay, the scales grow from one
# fp32 per block_n x block_k block to one per block_k inputs and output in the model dtype (1/64 byte per weight at
# bf16 and [128, 128], where the checkpoint holds 1/4096).
FP8_CHECKPOINT_SCALE_BYTES = 4  # Fp8Config's weight_scale_inv: one float32 per block


def fp8_marlin_weights(facts: ModelFacts, cfg: VllmConfig, parts: list, version: str | None, gpu_name: str,
                       weights_by_stage: list[int],
                       notes: list[str]) -> tuple[list[int], Fp8MarlinScales | None]:
    """Each stage's weights with the scales Marlin holds beyond a block-FP8 checkpoint's
    (profiles.VLLM_FP8_MARLIN), and what was added; a note either way where it applies. DeepSeek-V4's own layout
    is not counted here."""
    if facts.is_compressed_attention:
        return weights_by_stage, None
    marlin = fp8_marlin_scales(facts, cfg.tensor_parallel_size, [n or 0 for n in parts], version, gpu_name,
                               cfg.force_fp8_marlin_env)
    if isinstance(marlin, str):
        notes.append(marlin)
        return weights_by_stage, None
    if marlin is None:
        return weights_by_stage, None
    notes.append(fp8_marlin_note(marlin, version, gpu_name))
    return [w + extra for w, extra in zip(weights_by_stage, marlin.per_stage)], marlin


class Fp8MarlinScales(TableRow):
    """What Marlin adds to each pipeline stage's rank (bytes, in stage order), the layers that take it and why."""

    per_stage: tuple[int, ...]
    linear: bool  # the dense linear layers (attention, dense MLP, shared experts) run Marlin
    experts: bool  # the fused-MoE routed experts run Marlin
    row: P.VllmFp8MarlinRow
    block_k: int  # weights along the input a Marlin scale covers (the checkpoint's block_k)


def fp8_marlin_forced(env_value: str | None) -> bool:
    """VLLM_TEST_FORCE_FP8_MARLIN as vllm/envs.py reads it: "1" or "true", any case, around spaces."""
    return (env_value or "").strip().lower() in ("1", "true")


def fp8_marlin_paths(row: P.VllmFp8MarlinRow, capability: tuple[int, int], force: bool) -> tuple[bool, bool]:
    """(linear layers, routed experts) that take Marlin on a CUDA GPU of this capability."""
    if capability < row.marlin_min:
        return False, False
    force = force and row.env_read
    linear = row.linear_below is not None and (
        capability < row.linear_below or (force and (row.forced_linear_below is None or
                                                     capability < row.forced_linear_below)))
    experts = row.moe_below is not None and (capability < row.moe_below or force)
    return linear, experts


def fp8_marlin_applies(facts: ModelFacts) -> bool:
    """An Fp8Config checkpoint with weight_block_size: the only FP8 whose scales Marlin grows by more than one row."""
    return facts.quant_format == "fp8" and (facts.quant_method or "").lower() == "fp8" and facts.quant_block is not None


def fp8_marlin_scales(facts: ModelFacts, tp: int, parts: list[int], version: str | None, gpu_name: str,
                      env_value: str | None) -> Fp8MarlinScales | str | None:
    """The bytes per stage, a note (str) when the GPU's name does not say whether Marlin runs, or None where it does
    not apply (not block FP8, a ROCm GPU, a GPU with native FP8 at this release)."""
    if not fp8_marlin_applies(facts) or re.search(P.SGLANG_ROCM, gpu_name.lower()):
        return None
    row = P.vllm_fp8_marlin_row(version)
    if row.linear_below is None and row.moe_below is None:
        return None
    capability = gpu_arch.compute_capability(gpu_name)
    if capability is None:
        below = max(limit for limit in (row.linear_below, row.moe_below) if limit is not None)
        return (f"GPU {repr(gpu_name) + ' unknown' if gpu_name else 'not named'}: block-FP8 scales counted as the "
                f"checkpoint's; below compute capability {below[0]}.{below[1]} vLLM runs these layers through "
                f"Marlin, whose scales take {_fp8_rate_text(facts)} more per weight ({row.source})")
    linear, experts = fp8_marlin_paths(row, capability, fp8_marlin_forced(env_value))
    experts = experts and facts.is_moe
    if not linear and not experts:
        return None
    quantised, routed, whole = quantised_linear_params(facts)
    dense = tuple(q - r for q, r in zip(quantised, routed))
    per_stage, start = [], 0
    for count in parts:
        stop = start + count
        params = (_fp8_rank_params(dense, whole, start, stop, tp) if linear else 0) + \
            (_fp8_rank_params(routed, (), start, stop, tp) if experts else 0)
        per_stage.append(_fp8_extra_bytes(facts, params))
        start = stop
    block_k = facts.quant_block[1] if facts.quant_block else 0  # fp8_marlin_applies() checked it
    return Fp8MarlinScales(tuple(per_stage), linear, experts, row, block_k)


def _fp8_rank_params(per_layer: tuple[int, ...], whole: tuple[int, ...], start: int, stop: int, tp: int) -> int:
    """One tensor-parallel rank's share of layers start..stop-1, the parts every rank holds whole counted whole."""
    held = sum(whole[start:stop])
    return math.ceil((sum(per_layer[start:stop]) - held) / tp) + held


def _fp8_extra_bytes(facts: ModelFacts, params: int) -> int:
    """Marlin's scales (one per block_k weights, model dtype) less the checkpoint's (one fp32 per block) that the
    weights layout already holds."""
    assert facts.quant_block is not None  # fp8_marlin_applies() checked it
    block_n, block_k = facts.quant_block
    high = UNQUANTISED_BYTES.get(facts.dtype or "bfloat16", 2)
    return params * high // block_k - params * FP8_CHECKPOINT_SCALE_BYTES // (block_n * block_k)


def _fp8_rate_text(facts: ModelFacts) -> str:
    per_million = _fp8_extra_bytes(facts, 10**6)
    return f"{per_million / 10**6:.4f} B"


def fp8_marlin_note(scales: Fp8MarlinScales, version: str | None, gpu_name: str) -> str:
    """What the estimate says where Marlin's scales were added."""
    what = " and ".join(part for part, on in (("linear layers", scales.linear), ("MoE experts", scales.experts)) if on)
    return (f"vLLM {P.arithmetic_version('vllm', version)} runs the block-FP8 {what} through Marlin on {gpu_name} "
            f"(no native FP8): its scales, one per {scales.block_k} weights in the model dtype, add "
            f"+{max(scales.per_stage) / 2**30:.2f} GiB per rank to the weights ({scales.row.source})")


def fp8_marlin_report(scales: Fp8MarlinScales, stage: int) -> dict:
    """The estimate's extra entry: the binding rank's bytes, which layers run Marlin and the row's source."""
    return {"bytes": scales.per_stage[stage], "linear_layers": scales.linear, "moe_experts": scales.experts,
            "source": scales.row.source}
