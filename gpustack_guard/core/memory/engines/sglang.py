"""SGLang's KV pool as profile_max_num_token sizes it (docs/memory-arithmetic.md, "SGLang").

SGLang measures free memory twice: after CUDA/NCCL start-up, before the weights load (`pre`), and after
they load (`post`). The pool is `post - pre * (1 - mem_fraction_static)`, i.e. `f * pre - weights`, divided by
the bytes of one token over all layers: max_total_num_tokens. The default fraction depends on the release.
"""

from __future__ import annotations

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
    NO_KV_MEMORY,
    Estimate,
    UnsupportedModel,
)
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.memory.interconnect import PEERLESS, interconnect
from gpustack_guard.core.memory.kv import KVShape, kv_bytes_per_token_layer, local_window
from gpustack_guard.core.memory.weights import weights_per_rank
from gpustack_guard.core.units import GiB, MiB
from gpustack_guard.core.values import frozen_value

if TYPE_CHECKING:  # LoRA specs import it where they need it (import budget)
    from gpustack_guard.core.memory.lora import LoraRequest, LoraSlots


@frozen_value  # identity equality: cheaper to define, never compared
class SglangConfig:
    """The SGLang server arguments the SGLang arithmetic reads."""

    __repr__ = fields_repr

    mem_fraction_static: float | None = None
    context_length: int | None = None
    max_running_requests: int | None = None
    max_total_tokens: int | None = None
    chunked_prefill_size: int | None = None
    cuda_graph_max_bs: int | None = None  # the decode graphs' largest batch (any name of the release)
    cuda_graph_bs: tuple[int, ...] | None = None  # an explicit decode batch list: its largest entry is the max
    prefill_graph_max_tokens: int | None = None  # the prefill graphs' largest token count, as given
    prefill_graph_tokens: tuple[int, ...] | None = None  # an explicit prefill token list
    decode_graphs_off: bool = False  # the decode backend disabled (0.5.14+: its reserve term goes too)
    speculative_algorithm: str | None = None  # --speculative-algorithm, upper-cased as SGLang compares it
    speculative_num_steps: int | None = None
    speculative_eagle_topk: int | None = None
    speculative_num_draft_tokens: int | None = None
    speculative_draft_given: bool = False  # --speculative-draft-model-path: a draft of its own, not the MTP layers
    tp_size: int = 1
    pp_size: int = 1
    attn_dp_size: int = 1  # DP attention's ranks (--dp-size with --enable-dp-attention, --attn-dp-size); 1: off
    kv_cache_dtype: str | None = None
    page_size: int = 1
    disable_cuda_graph: bool = False
    foreign_bytes: int = 0  # memory other processes hold when this instance starts
    # a flag that turns piecewise CUDA graphs off (server_args.py@0.5.10 _handle_piecewise_cuda_graph:
    # --disable-piecewise-cuda-graph, torch compile, DP attention, speculative decoding, LoRA, GGUF)
    prefill_graphs_off: bool = False
    prefill_graphs_opt_in: bool = False  # --enable-piecewise-cuda-graph (0.5.4-0.5.9: off by default)
    # a Gated DeltaNet hybrid's mamba pool (gated_delta_pools)
    max_mamba_cache_size: int | None = None
    mamba_full_memory_ratio: float | None = None
    mamba_ssm_dtype: str | None = None
    disable_radix_cache: bool = False
    mamba_layout_unread: str | None = None  # a flag whose mamba layout gsg has not read
    mamba_strategy: str | None = None  # --mamba-radix-cache-strategy (or its alias --mamba-scheduler-strategy)
    disable_overlap_schedule: bool = False
    linear_attn_backend: str | None = None
    attention_backend: str | None = None
    aiter_honor_env: str | None = None  # SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION as set
    disable_hybrid_swa_memory: bool = False
    swa_full_tokens_ratio: float | None = None
    # --hybrid-kvcache-ratio (up to 0.5.7): Llama 4's own local/global pool split, not read
    hybrid_kvcache_ratio: str | None = None
    lora: LoraRequest | None = None  # --enable-lora / --lora-paths: the LoRA memory pool (lora.sglang_slots)
    # what a multimodal model's post-sizing reserve depends on (multimodal_kv_reserve)
    mm_feature_transport: str | None = None  # --mm-feature-transport (--keep-mm-feature-on-device: cuda_ipc)
    nnodes: int = 1
    enable_multimodal: bool = False  # --enable-multimodal: on for the classes SGLang leaves text-only by default
    mm_encoder_only: bool = False  # --encoder-only: the transport resolves to cpu
    disaggregated: bool = False  # --disaggregation-mode prefill/decode: no GPU transport chosen by default
    prefill_instance: bool = False  # --disaggregation-mode prefill
    mm_preprocess_cache_mb: int | None = None
    vlm_cache_mb: int | None = None  # SGLANG_VLM_CACHE_SIZE_MB as set
    mm_feature_cache_mb: int | None = None  # SGLANG_MM_FEATURE_CACHE_MB as set
    legacy_ipc: bool | None = None  # SGLANG_USE_CUDA_IPC_TRANSPORT as set (deprecated)


def _first_tier(tiers: tuple, gpu_mb: float) -> tuple:
    """The first (upper bound MiB or None, ...) row whose bound is above gpu_mb."""
    return next(t for t in tiers if t[0] is None or gpu_mb < t[0])


def default_chunked_prefill(gpu_total: int, rule: str = "v0.5") -> int:
    gpu_mb = gpu_total / MiB
    if rule == "v0.3.0":  # no small-GPU cut before 0.3.5.post2
        return P.SGLANG_03_CHUNKED
    if rule == "v0.3":
        return P.SGLANG_03_CHUNKED // 4 if gpu_mb < P.SGLANG_SMALL_GPU_MB else P.SGLANG_03_CHUNKED
    if rule in _V04_RULES:
        if rule == "v0.4.7" and gpu_mb > P.SGLANG_047_HUGE_MB:
            return P.SGLANG_047_HUGE_CHUNKED
        return 2048 if gpu_mb < P.SGLANG_SMALL_GPU_MB else 8192
    if rule == "v0.4.8":
        return _first_tier(P.SGLANG_048_CHUNKED, gpu_mb)[1] if gpu_total else P.SGLANG_048_UNKNOWN_CHUNKED
    return _tier(gpu_mb, rule)[1]


def default_cuda_graph_max_bs(gpu_total: int, tp: int, rule: str = "v0.5") -> int:
    gpu_mb = gpu_total / MiB
    if rule == "v0.3.0":
        return P.SGLANG_CUDA_GRAPH_BS
    if rule == "v0.3":
        return 4 if gpu_mb < P.SGLANG_SMALL_GPU_MB else P.SGLANG_CUDA_GRAPH_BS
    if rule in _V04_RULES:
        if gpu_mb < P.SGLANG_SMALL_GPU_MB:
            return 80 if rule != "v0.4" and tp >= 4 else 8
        return _v04_wide_graph_bs(gpu_mb, rule)
    if rule == "v0.4.8":
        if gpu_mb < P.SGLANG_048_SMALL_GPU_MB:
            return 8 if tp < 4 else 80
        return _first_tier(P.SGLANG_048_GRAPH_BS, gpu_mb)[1]
    tier = _tier(gpu_mb, rule)
    return tier[2] if tp < 4 else tier[3]


_V04_RULES = ("v0.4", "v0.4.3", "v0.4.6", "v0.4.6.post2", "v0.4.7")


def _v04_wide_graph_bs(gpu_mb: float, rule: str) -> int:
    """The largest default graph batch of a 0.4.x rule on a GPU of 25,000 MB or more (profiles.SGLANG_046_*)."""
    if rule == "v0.4.7" and gpu_mb > P.SGLANG_047_HUGE_MB:
        return P.SGLANG_047_HUGE_GRAPH_BS
    wide_above = {"v0.4.6": P.SGLANG_046_WIDE_GRAPH_MB, "v0.4.6.post2": P.SGLANG_0462_WIDE_GRAPH_MB,
                  "v0.4.7": P.SGLANG_0462_WIDE_GRAPH_MB}.get(rule)
    return P.SGLANG_WIDE_GRAPH_BS if wide_above is not None and gpu_mb > wide_above else P.SGLANG_CUDA_GRAPH_BS


def _tier(gpu_mb: float, rule: str) -> tuple:
    """(bound, chunked_prefill_size, graph bs below TP 4, graph bs from TP 4) of a v0.5* rule's GPU tier."""
    return _first_tier(P.SGLANG_GPU_TIERS_BY_RULE[rule], gpu_mb)


def segment_tails(tensor_bytes: list[int]) -> int:
    """Bytes the caching allocator holds beyond these tensors, allocated in this order and all kept (profiles.ALLOC_*):
    the unused part of every segment they occupy."""
    small = sum(size for size in tensor_bytes if size <= P.ALLOC_SMALL_MAX)
    tails = -small % P.ALLOC_SMALL_SEGMENT  # small blocks pack into 2 MiB segments
    free_blocks: list[int] = []  # split-off remainders (> 1 MiB) a later mid-sized tensor can take
    for size in tensor_bytes:
        if size <= P.ALLOC_SMALL_MAX:
            continue
        fitting = [block for block in free_blocks if block >= size] if size < P.ALLOC_MID_MAX else []
        if fitting:
            block = min(fitting)  # best fit, as the allocator searches its size-ordered pool
            free_blocks.remove(block)
        else:
            rounded = -(-size // P.ALLOC_LARGE_ROUND) * P.ALLOC_LARGE_ROUND
            block = P.ALLOC_MID_SEGMENT if size < P.ALLOC_MID_MAX else rounded
        rest = block - size
        if rest > P.ALLOC_SMALL_MAX:
            free_blocks.append(rest)
        else:
            tails += rest
    return tails + sum(free_blocks)


def parameter_tensors(facts: ModelFacts, tp: int) -> list[int] | None:
    """Bytes of each parameter tensor one TP rank allocates, in the order SGLang's Llama/Qwen-style modules create
    them (embedding; per layer fused qkv, o, fused gate_up, down, their biases and norms; final norm; head). None
    where the layout is not that: quantised, MoE, MLA, multimodal or pipeline-split checkpoints."""
    if (facts.quant_method or facts.is_moe or facts.is_mla or facts.vision_params or facts.is_compressed_attention
            or facts.layer_weight_bytes):
        return None
    H, V, L, nH, d, nKV = (facts.hidden_size, facts.vocab_size, facts.num_hidden_layers, facts.num_attention_heads,
                           facts.dim_head, facts.kv_heads)
    inter = facts.intermediate_size
    if not (H and V and L and nH and d and nKV and inter):
        return None
    width = 4 if facts.dtype == "float32" else 2
    kv_rank = max(nKV // tp, 1)  # KV heads are replicated when TP exceeds them
    vocab_rank = -(-V // tp)
    qkv = (nH // tp + 2 * kv_rank) * d
    layer = [qkv * H * width, *([qkv * width] if facts.attention_bias else []), H * (nH // tp) * d * width,
             (2 if facts.gated_mlp else 1) * (inter // tp) * H * width, (inter // tp) * H * width,
             H * width, H * width]
    head = [] if facts.tie_word_embeddings else [vocab_rank * H * width]
    return [vocab_rank * H * width, *(layer * L), H * width, *head]


def rope_cache_bytes(facts: ModelFacts, version: str | None, gpu_name: str = "") -> int:
    """The rotary cos/sin cache: max_position x rotary_dim values, FP32 on CUDA from profiles.SGLANG_ROPE_FP32_SINCE,
    else the model dtype. MLA models rotate qk_rope_head_dim."""
    positions, rotary = facts.max_position_embeddings or 0, facts.qk_rope_head_dim if facts.is_mla else facts.dim_head
    if not positions or not rotary:
        return 0
    fp32 = (not not_cuda(gpu_name)
            and P.arithmetic_release("sglang", version) >= P.known_version(P.SGLANG_ROPE_FP32_SINCE))
    return positions * rotary * (4 if fp32 or facts.dtype == "float32" else 2)


def reserved_mb(tp: int, pp: int, chunked: int, graph_bs: int) -> float:
    """0.5.x: what SGLang keeps outside the static pool, in MiB (metadata, activations, graphs, comm)."""
    return (P.SGLANG_METADATA_MB + max(chunked, 2048) * P.SGLANG_ACTIVATION_MB_PER_TOKEN
            + graph_bs * P.SGLANG_GRAPH_MB_PER_BS + tp * pp * P.SGLANG_COMM_MB_PER_RANK)


def prefill_graph_sizes(max_tokens: int) -> int:
    """How many piecewise (prefill) CUDA graphs 0.5.10+ captures up to max_tokens
    (server_args.py@0.5.10 _generate_piecewise_cuda_graph_tokens)."""
    sizes = [*range(4, 33, 4), *range(48, 257, 16), *range(288, 513, 32), *range(576, 1025, 64),
             *range(1280, 4097, 256), *range(4608, max_tokens + 1, 512)]
    return sum(1 for size in sizes if size <= max_tokens)


def default_fraction(gpu_total: int, tp: int, pp: int, chunked: int, graph_bs: int,
                     profile: P.SglangProfile | None = None, prefill_graph_mb: float = 0.0,
                     gpu_name: str = "", speculative_mb: float = 0.0, speculative: bool = False,
                     dp_attention_mb: float = 0.0) -> float:
    """mem_fraction_static SGLang picks when the flag is unset, by the rule of its release line (an unnamed GPU is
    taken as CUDA). speculative_mb: what is added after the 10 GiB floor (the draft's speculative_reserve_mb,
    0.5.6-0.5.7's opt-in prefill graphs); dp_attention_mb: DP attention's term (dp_attention_reserve_mb), added with
    the GPU tier's reserve (tiered-reserve) or before the floor (reserved)."""
    profile = profile or P.sglang_profile(None)
    gpu_mb = gpu_total / MiB
    rule = profile.fraction_rule
    if rule == "tp" or (rule == "tp-or-13gib" and gpu_mb <= P.SGLANG_013_THRESHOLD_MB):
        return _tp_tier(profile, tp)
    if rule == "tp-or-13gib":
        return (gpu_mb - P.SGLANG_013_RESERVE_MB) / gpu_mb
    if rule in ("tp-or-lift", "tp-or-big-gpu"):
        return _big_gpu_fraction(profile, gpu_mb, tp * pp, cuda=not not_cuda(gpu_name), speculative=speculative)
    if rule == "tiered-reserve":
        _, base_gib, per_rank_gib = _first_tier(P.SGLANG_TIERED_RESERVE, gpu_mb)
        reserved = (base_gib + tp * pp * per_rank_gib) * 1024 + speculative_mb + dp_attention_mb
    else:
        reserved = reserved_mb(tp, pp, chunked, graph_bs) + prefill_graph_mb + dp_attention_mb
        if gpu_mb > 60 * 1024:
            reserved = max(reserved, P.SGLANG_BIG_GPU_FLOOR_MB)
        reserved += speculative_mb
    fraction = round((gpu_mb - reserved) / gpu_mb, 3)
    return fraction if 0 < fraction < 1 else profile.fallback_fraction


def dp_attention_reserve_mb(cfg: SglangConfig, graph_bs: int, version: str | None) -> float:
    """What DP attention adds to the default fraction's reserve, in MiB (profiles.SGLANG_DP_ATTENTION_RESERVE): a
    flat 4 GiB in 0.4.7.post1-0.5.2, then 3 MiB per decode graph batch and attention-DP rank (4.5 above 300
    batches); nothing without DP attention, on one rank, or on a prefill instance from 0.5.15."""
    row = P.sglang_dp_attention_row(version)
    if cfg.attn_dp_size <= 1 or (row.prefill_instance_exempt and cfg.prefill_instance):
        return 0.0
    per_bs = row.mb_per_bs_rank + (row.big_mb_per_bs_rank if graph_bs > row.big_bs else 0.0)
    return row.flat_mb + graph_bs * cfg.attn_dp_size * per_bs


def _tp_tier(profile: P.SglangProfile, parallel: int) -> float:
    return next(f for min_tp, f in profile.tp_fractions if parallel >= min_tp)


def _big_gpu_fraction(profile: P.SglangProfile, gpu_mb: float, parallel: int, cuda: bool = True,
                      speculative: bool = False) -> float:
    """0.4.6.post2-0.4.7: TP x PP tiers up to 80 GiB, 0.88 above; then the big-GPU overrides (profiles.SGLANG_047_*):
    0.4.7's 0.79 only where SGLang's is_cuda() holds, so a ROCm MI300X takes the lift as in 0.4.6.post2. 0.4.7 with a
    speculative algorithm keeps 20 GiB above 96 GiB and takes 0.95 of the fraction below (SGLANG_047_SPEC_*)."""
    tiered = _tp_tier(profile, parallel) if gpu_mb <= P.SGLANG_013_THRESHOLD_MB else profile.fallback_fraction
    spec = speculative and profile.fraction_rule == "tp-or-big-gpu"
    if profile.fraction_rule == "tp-or-big-gpu" and cuda and gpu_mb > P.SGLANG_047_HUGE_MB:
        return P.SGLANG_047_HUGE_FRACTION
    if gpu_mb > P.SGLANG_047_BIG_MB:
        return min(tiered + P.SGLANG_047_LIFT_MB * (1 - tiered) / gpu_mb,
                   (gpu_mb - (P.SGLANG_047_SPEC_RESERVE_MB if spec else P.SGLANG_047_RESERVE_MB)) / gpu_mb)
    return tiered * P.SGLANG_047_SPEC_FACTOR if spec else tiered


def prefill_graph_reserve_mb(cfg: SglangConfig, profile: P.SglangProfile, chunked: int,
                             facts: ModelFacts | None = None, gpu_name: str = "", version: str | None = None) -> float:
    """What 0.5.10+ adds to its reserve for piecewise (prefill) CUDA graphs: 8 MiB per capture size up to
    prefill_graph_max_tokens (or per entry of an explicit list), 1.5 GiB under MLA; nothing where SGLang turns them off
    (server_args.py@0.5.10 _handle_piecewise_cuda_graph: PP, non-CUDA devices, multimodal models, the architectures
    of profiles.SGLANG_PREFILL_GRAPHS_OFF_ARCHS, the flags of SglangConfig.prefill_graphs_off). A model without facts
    is taken as a text model."""
    if not profile.prefill_graph_reserve or cfg.prefill_graphs_off or cfg.pp_size > 1 or not_cuda(gpu_name):
        return 0.0
    if facts is not None and facts.vision_params:
        return 0.0
    if facts is not None and facts.architecture in P.sglang_prefill_graphs_off_archs(version).architectures:
        return 0.0
    if facts is not None and facts.is_mla:
        return P.SGLANG_PREFILL_GRAPH_MLA_MB
    if cfg.prefill_graph_tokens is not None:  # an explicit list: one graph per entry
        return len(set(cfg.prefill_graph_tokens)) * P.SGLANG_PREFILL_GRAPH_MB_PER_SIZE
    top = prefill_graph_max_tokens(cfg, chunked, version, facts.source if facts is not None else "")
    return prefill_graph_sizes(top) * P.SGLANG_PREFILL_GRAPH_MB_PER_SIZE


def opt_in_prefill_reserve_mb(cfg: SglangConfig, chunked: int, facts: ModelFacts | None,
                              version: str | None) -> tuple[float, bool]:
    """(MiB, counted after the 10 GiB floor) that --enable-piecewise-cuda-graph adds to the reserve in 0.5.6-0.5.9
    (profiles.SGLANG_OPT_IN_PREFILL_GRAPHS); (0, False) without the flag or where the release adds nothing."""
    row = P.sglang_opt_in_prefill_graphs(version)
    if not cfg.prefill_graphs_opt_in or not row.rule:
        return 0.0, False
    top = cfg.prefill_graph_max_tokens
    if top is None:
        mla = facts is not None and facts.is_mla and row.mla_max_tokens
        top = row.mla_max_tokens if mla else (row.default_max_tokens or chunked)
    if row.rule == "tokens-div":
        return float(top // row.divisor), True
    if cfg.prefill_graph_tokens is not None:
        return float(len(cfg.prefill_graph_tokens) * P.SGLANG_PREFILL_GRAPH_MB_PER_SIZE), False
    return float(prefill_graph_sizes(top) * P.SGLANG_PREFILL_GRAPH_MB_PER_SIZE), False


def prefill_graph_max_tokens(cfg: SglangConfig, chunked: int, version: str | None = None,
                             model_path: str = "") -> int:
    """The prefill graphs' largest token count: as given, else the chunk capped by --max-total-tokens and, for a
    model whose path names it, by the release's model cap (profiles.SGLANG_PREFILL_PATH_CAPS); 0.5.13-0.5.16 also
    cut it to an explicit --context-length (profiles.SGLANG_GRAPH_ARGS)."""
    if cfg.prefill_graph_max_tokens is not None:
        top = cfg.prefill_graph_max_tokens
    else:
        top = min(chunked, cfg.max_total_tokens) if cfg.max_total_tokens else chunked
        cap = P.sglang_prefill_path_cap(version)
        if cap.tokens and cap.path_text in model_path.lower():
            top = min(top, cap.tokens)
    if cfg.context_length and P.sglang_graph_args(version).clamps_prefill_to_context:
        top = min(top, cfg.context_length)
    return top


def decode_graph_max_bs(cfg: SglangConfig, gpu_total: int, profile: P.SglangProfile,
                        version: str | None = None, facts: ModelFacts | None = None, gpu_name: str = "") -> int:
    """The decode graphs' largest batch: an explicit list's largest entry, else the flag, else the release's
    default by GPU size, which 0.5.22+ cuts to --max-running-requests (profiles.SGLANG_GRAPH_ARGS) and which a
    Qwen3-VL on a large Hopper raises to it (hopper_qwen3_vl_decode_bs)."""
    if cfg.cuda_graph_bs:
        return max(cfg.cuda_graph_bs)
    if cfg.cuda_graph_max_bs:
        return cfg.cuda_graph_max_bs
    npu = npu_tier(gpu_total, gpu_name, version)
    if npu is not None:
        default = npu[4] if cfg.tp_size < 4 else npu[5]
    else:
        default = default_cuda_graph_max_bs(gpu_total, cfg.tp_size, profile.graph_rule)
    if cfg.max_running_requests and P.sglang_graph_args(version).caps_decode_to_running:
        default = min(default, cfg.max_running_requests)
    if facts is not None:
        default = hopper_qwen3_vl_decode_bs(default, cfg, facts, gpu_total, gpu_name, version)
    return default


def npu_tier(gpu_total: int, gpu_name: str, version: str | None) -> tuple[int, int, bool, int, int, int] | None:
    """The release's Ascend tier for this memory (profiles.SGLANG_NPU_TIERS); None off Ascend or outside them."""
    if not gpu_name or re.search(P.SGLANG_NPU, gpu_name.lower()) is None:
        return None
    gpu_mb = gpu_total / MiB
    return next((tier for tier in P.sglang_npu_tiers(version).tiers
                 if tier[0] <= gpu_mb and (gpu_mb <= tier[1] if tier[2] else gpu_mb < tier[1])), None)


def hopper_qwen3_vl_decode_bs(default: int, cfg: SglangConfig, facts: ModelFacts, gpu_total: int, gpu_name: str,
                              version: str | None) -> int:
    """A default decode batch below --max-running-requests (at most 512) raised to it for a multimodal Qwen3-VL on
    an SM90 GPU of 60 GiB or more (profiles.SGLANG_HOPPER_QWEN3_VL_GRAPH_ROWS); the default elsewhere."""
    running = cfg.max_running_requests
    if not P.sglang_hopper_qwen3_vl_graph_row(version).expands or not running:
        return default
    if not (default < running <= P.SGLANG_HOPPER_QWEN3_VL_GRAPH_MAX_RUNNING):
        return default
    large_hopper = (facts.architecture in P.SGLANG_HOPPER_QWEN3_VL and sglang_multimodal(facts, cfg)
                    and gpu_arch.compute_capability(gpu_name) == (9, 0)
                    and gpu_total >= P.SGLANG_HOPPER_QWEN3_VL_MIN_MB * MiB)
    return running if large_hopper else default


def speculative_reserve_mb(cfg: SglangConfig, version: str | None) -> float:
    """What the default fraction keeps for a draft (profiles.SGLANG_SPECULATIVE_RESERVE): by algorithm and release."""
    algorithm = cfg.speculative_algorithm
    if not algorithm:
        return 0.0
    row = P.sglang_speculative_reserve(version)
    if algorithm == "STANDALONE":
        return float(row.standalone_mb)
    if algorithm == "NGRAM" and not row.ngram_counts:
        return 0.0
    return float(row.other_mb)


def not_cuda(gpu_name: str) -> bool:
    """A GPU SGLang drives without CUDA (ROCm, Ascend, Gaudi, MUSA), from its name (profiles.SGLANG_NON_CUDA)."""
    return bool(gpu_name) and re.search(P.SGLANG_NON_CUDA, gpu_name.lower()) is not None


def _defaults(cfg: SglangConfig, gpu_total: int, profile: P.SglangProfile, facts: ModelFacts | None = None,
              gpu_name: str = "", version: str | None = None) -> tuple[int, int, float, float]:
    """(chunked_prefill_size, cuda_graph_max_bs, mem_fraction_static, prefill-graph reserve MiB) after SGLang's
    defaults.

    The fraction heuristic counts the default graph batch size even with --disable-cuda-graph: the fraction
    implied by sglang#18262 (0.774 = 0.911 x AITER's 0.85, graphs disabled) is the one with graphs counted."""
    npu = npu_tier(gpu_total, gpu_name, version)
    chunked = cfg.chunked_prefill_size or (npu[3] if npu else default_chunked_prefill(gpu_total, profile.graph_rule))
    graph_bs = decode_graph_max_bs(cfg, gpu_total, profile, version, facts, gpu_name)
    prefill_mb = prefill_graph_reserve_mb(cfg, profile, chunked, facts, gpu_name, version)
    opt_in_mb, after_floor = opt_in_prefill_reserve_mb(cfg, chunked, facts, version)
    late_mb = opt_in_mb if after_floor else 0.0
    prefill_mb += 0.0 if after_floor else opt_in_mb
    # 0.5.14+ counts the decode graphs only when their backend is on; before, whatever --disable-cuda-graph said
    off = cfg.disable_cuda_graph or cfg.decode_graphs_off
    reserve_bs = 0 if off and P.sglang_graph_args(version).decode_reserve_follows_backend else graph_bs
    fraction = cfg.mem_fraction_static or default_fraction(gpu_total, cfg.tp_size, cfg.pp_size, chunked, reserve_bs,
                                                           profile, prefill_mb, gpu_name,
                                                           speculative_reserve_mb(cfg, version) + late_mb,
                                                           bool(cfg.speculative_algorithm),
                                                           dp_attention_reserve_mb(cfg, graph_bs, version))
    if facts is not None:
        fraction *= multimodal_fraction_factor(facts, version, user_set=bool(cfg.mem_fraction_static))
    return chunked, (0 if off else graph_bs), fraction, prefill_mb + late_mb


def multimodal_fraction_factor(facts: ModelFacts, version: str | None, *, user_set: bool) -> float:
    """What SGLang multiplies mem_fraction_static by for a multimodal model (profiles.SGLANG_VLM_FRACTION_RULES):
    a flat 0.95 or 0.90 up to 0.4.9.post2, then 0.95 scaled by the ViT's size against ViT-L/14; 1 for a text
    model, and from 0.4.9 for a fraction the user sets."""
    if not facts.vision_params:
        return 1.0
    rule = P.sglang_vlm_fraction(version)
    if rule.default_only and user_set:
        return 1.0
    if rule.rule == "flat":
        return rule.factor
    if facts.vit_shape is None:
        return 1.0  # adjust_mem_fraction_for_vlm returns early without a vision_config
    layers, width = facts.vit_shape
    complexity = layers * width * width / P.SGLANG_VIT_BASELINE
    low, high = P.SGLANG_VIT_CLAMP
    return rule.factor * max(low, min(high, 1.0 - P.SGLANG_VIT_SENSITIVITY * (complexity - 1.0)))


def sglang_multimodal(facts: ModelFacts, cfg: SglangConfig) -> bool:
    """model_config.is_multimodal as SGLang sets it: a vision tower, unless the class is one it serves text-only
    without --enable-multimodal (model_config.py@v0.5.18 .. @v0.5.23 mm_disabled_models)."""
    if not facts.vision_params:
        return False
    return cfg.enable_multimodal or facts.architecture not in P.SGLANG_MM_OFF_BY_DEFAULT


def multimodal_kv_reserve(facts: ModelFacts, cfg: SglangConfig, version: str | None, gpu_name: str,
                          gpu_total: int) -> tuple[int, str, list[str]]:
    """The bytes SGLang takes off a multimodal model's KV budget for what it allocates after sizing the pool
    (profiles.SGLANG_MM_RESERVE_ROWS), the feature transport it resolved, and notes where gsg assumed."""
    row = P.sglang_mm_reserve(version)
    if not row.cache_mb or not sglang_multimodal(facts, cfg):
        return 0, "", []
    notes: list[str] = []
    cache_mb, pool_mb, transport = cfg.vlm_cache_mb, cfg.mm_feature_cache_mb, cfg.mm_feature_transport
    capability = gpu_arch.compute_capability(gpu_name)
    hopper = (row.hopper_qwen3_vl and facts.architecture in P.SGLANG_HOPPER_QWEN3_VL and capability == (9, 0)
              and gpu_total >= P.SGLANG_HOPPER_QWEN3_VL_MIN_MB * MiB)
    if hopper:  # the model override runs before the transport is resolved
        cache_mb = 0 if cache_mb is None else cache_mb
        retained = (cfg.mm_preprocess_cache_mb or 0) > 0 or cache_mb > 0
        if transport is None and cfg.nnodes == 1 and not retained:
            transport = "cuda_ipc"
        if (pool_mb is None and (cfg.max_running_requests or 0) >= P.SGLANG_HOPPER_QWEN3_VL_WIDE_RUNNING
                and not retained and transport == "cuda_ipc"):
            pool_mb = P.SGLANG_HOPPER_QWEN3_VL_WIDE_POOL_MB
    if transport is None:
        if cfg.legacy_ipc is not None:
            transport = "cuda_ipc" if cfg.legacy_ipc else "cpu"
        else:
            transport = "cpu"
            if cfg.nnodes > 1 and not cfg.mm_encoder_only and not cfg.disaggregated:
                notes.append(f"SGLang {row.since}+ may pick the cuda_vmm feature transport across nodes on GB200/"
                             "GB300 with an IMEX channel (1 GiB more off the KV budget): gsg took cpu; give "
                             "--mm-feature-transport")
    if cfg.mm_encoder_only:  # encoder-only serving keeps no feature pool
        transport = "cpu"
    cache_mb = row.cache_mb if cache_mb is None else cache_mb
    pool_mb = row.feature_pool_mb if pool_mb is None else pool_mb
    reserved_mb = cache_mb + (pool_mb if transport in P.SGLANG_GPU_FEATURE_TRANSPORTS else 0)
    return max(reserved_mb, 0) * MiB, transport, notes


def aiter_factor(facts: ModelFacts, cfg: SglangConfig, version: str | None, gpu_name: str) -> float:
    """What SGLang multiplies the pool's mem_fraction_static by on ROCm under the aiter backend for a long-context
    model (profiles.SGLANG_AITER_CUTS): aiter given, or picked when no backend is given; 1.0 elsewhere."""
    row = P.sglang_aiter_cut(version)
    if row.factor == 1.0 or not gpu_name or re.search(P.SGLANG_ROCM, gpu_name.lower()) is None:
        return 1.0
    if row.explicit_kept_by_env and cfg.mem_fraction_static is not None and \
            (cfg.aiter_honor_env or "").strip().lower() in P.SGLANG_ENV_TRUE:
        return 1.0  # the user's fraction, kept as given (0.5.19+ logs a warning instead of cutting)
    aiter = cfg.attention_backend == "aiter" or (cfg.attention_backend is None and _rocm_picks_aiter(facts, cfg))
    context = cfg.context_length or facts.max_position_embeddings or 0
    return row.factor if aiter and context > row.above_context else 1.0


def _rocm_picks_aiter(facts: ModelFacts, cfg: SglangConfig) -> bool:
    """SGLang's own backend on ROCm when none is given: aiter for an MHA model; for an MLA model only when each rank
    holds 16 or 128 KV heads (get_num_kv_heads(tp) = total // tp), else triton (model_runner.py@v0.4.7,
    server_args.py@v0.5.5 and @v0.5.16 _get_default_attn_backend, model_override_base.py@v0.5.23)."""
    if not facts.is_mla:
        return True
    return max(1, (facts.kv_heads or 0) // max(1, cfg.tp_size)) in (16, 128)


def sglang_fraction(cfg: SglangConfig, gpu_total: int, version: str | None = None,
                    facts: ModelFacts | None = None, gpu_name: str = "") -> float:
    """The static fraction SGLang takes (and GPUStack books) on a GPU of this size."""
    return _defaults(cfg, gpu_total, P.sglang_profile(version), facts, gpu_name, version)[2]


def start_up_bytes(tp: int, pp: int, gpu_name: str = "") -> int:
    """Memory CUDA and NCCL take before SGLang's first measurement (never part of the pool). Parallel start-up
    is smaller on PCIe boards, where custom all-reduce sets up no buffers (profiles.SGLANG_START_UP_PCIE_PARALLEL);
    an unnamed GPU is taken as NVLink-connected, the larger figure."""
    if tp * pp == 1:
        return P.SGLANG_START_UP_SINGLE
    if interconnect(gpu_name) in PEERLESS:
        return P.SGLANG_START_UP_PCIE_PARALLEL
    return P.SGLANG_START_UP_PARALLEL


def max_total_num_tokens(free_before_weights: int, weights: int, fraction: float, cell_size: float,
                         page_size: int = 1) -> int:
    """profile_max_num_token: (post - pre * (1 - f)) // cell_size with post = pre - weights, in SGLang's own
    float GiB arithmetic (it reads free memory as GiB); 0 when nothing is left."""
    pre = free_before_weights / GiB
    post = (free_before_weights - weights) / GiB
    rest = post - pre * (1 - fraction)
    if rest <= 0 or not cell_size:
        return 0
    tokens = int(rest * GiB // cell_size)
    return tokens // page_size * page_size


def _ordinary_attention(facts: ModelFacts, cfg: SglangConfig) -> bool:
    """A model SGLang's MHA default covers and gsg read it for: no MLA, linear or compressed attention, no
    sliding-window pool, equal K and V widths (fa4 from 0.5.17 otherwise) and no speculative decoding (its topk
    decides the backend)."""
    asymmetric = bool(facts.v_head_dim and facts.head_dim and facts.v_head_dim != facts.head_dim)
    return not (facts.is_mla or facts.is_gated_delta or facts.is_compressed_attention or facts.sliding_window
                or asymmetric or cfg.speculative_algorithm)


def sm100_backend(facts: ModelFacts, cfg: SglangConfig, version: str | None,
                  gpu_name: str) -> P.SglangModelPageRow | None:
    """The attention backend SGLang picks on an SM100 GPU when none is given (profiles.SGLANG_SM100_MODEL_PAGE, else
    SGLANG_SM100_MHA_PAGE for an ordinary attention model), with its page rule; None when a backend is given, on other
    GPUs, and where the release picks none."""
    if cfg.attention_backend is not None:
        return None
    if gpu_arch.major(gpu_name) != 10:  # is_sm100_supported: major 10
        return None
    row = P.sglang_model_page_row(facts.architecture, version)
    if row is None and facts.architecture not in P.SGLANG_SM100_MODEL_PAGE and _ordinary_attention(facts, cfg):
        row = P.sglang_sm100_mha_page_row(version)
    return row


def model_page_override(facts: ModelFacts, cfg: SglangConfig, version: str | None,
                        gpu_name: str) -> tuple[SglangConfig, P.SglangModelPageRow | None]:
    """The deployment's page size after SGLang's backend default on an SM100 GPU (sm100_backend); the row when it
    changed the page."""
    row = sm100_backend(facts, cfg, version, gpu_name)
    if row is None or cfg.page_size in row.keeps:
        return cfg, None
    return replace(cfg, page_size=row.page), row


def hybrid_swa_row(facts: ModelFacts, cfg: SglangConfig, version: str | None,
                   trtllm_mha: bool) -> P.SglangHybridSwaRow | None:
    """The release's two-pool rule (profiles.SGLANG_HYBRID_SWA) when it holds for this deployment: a sliding-window
    architecture the release gives a full and a sliding pool, not turned off by a flag or, for gpt-oss, by the
    trtllm_mha backend or a draft model where the release does that."""
    row = P.sglang_hybrid_swa_row(version)
    if cfg.disable_hybrid_swa_memory or facts.architecture not in row.architectures:
        return None
    if not local_window(facts)[1]:
        return None  # no window (or chunk) on any layer: one pool, as SGLang's layer scan finds
    if facts.architecture == "GptOssForCausalLM" and (
            ("trtllm_mha" in row.gpt_oss_off_with and trtllm_mha)
            or ("speculative" in row.gpt_oss_off_with and cfg.speculative_algorithm)):
        return None
    return row


def gemma4_unread(facts: ModelFacts, cfg: SglangConfig, version: str | None, gpu_name: str) -> None:
    """Raise LayoutUnsupported where SGLang's sizing of Gemma 4's split attention is not read
    (profiles.SGLANG_GEMMA4_SINCE and the notes beside it); nothing for a model without that split."""
    from gpustack_guard.core.memory.estimate import LayoutUnsupported

    if not facts.split_attention:
        return
    shown = version or P.DEFAULT_VERSIONS["sglang"]
    if P.arithmetic_release("sglang", version) < P.known_version(P.SGLANG_GEMMA4_SINCE):
        raise LayoutUnsupported(f"SGLang {shown} has no Gemma 4 model (models/gemma4_causal.py ships from "
                                f"{P.SGLANG_GEMMA4_SINCE})")
    if facts.architecture != "Gemma4ForConditionalGeneration":
        raise LayoutUnsupported(f"SGLang {shown} moves Gemma 4's global_* keys to the full-attention shape for the "
                                "multimodal config only (hf_transformers/config.py@v0.5.11), which gsg has not "
                                f"read for {facts.architecture}")
    if cfg.disable_hybrid_swa_memory:
        raise LayoutUnsupported(f"SGLang {shown}'s one-pool layout for Gemma 4's two layer shapes "
                                "(--disable-hybrid-swa-memory) is not read")
    if gpu_arch.major(gpu_name) == 10:
        raise LayoutUnsupported(f"SGLang {shown}'s Gemma 4 attention backend and page on SM100 (trtllm_mha from "
                                "arg_groups/model_overrides/gemma4.py) are not read")


def hybrid_swa_pools(row: P.SglangHybridSwaRow, shape: KVShape, ratio: float, counted: int,
                     page: int) -> tuple[int, int]:
    """(full-layer tokens, sliding-layer tokens) of a hybrid SWA pool. `counted` is the row's own count, floored
    and capped: for the "tokens" split the one pool's count T, which it divides by the layers; for the "bytes" split
    the full pool itself (the memory over F x n_full + r x S x n_swa)."""
    if row.split == "tokens":  # set_num_token_hybrid: full = T x L / (r x n_swa + n_full), float then int
        counted = int(counted * shape.layers / (ratio * shape.window_layers + shape.full_layers))
    align = page if row.page_aligned else 1
    full = counted // align * align
    return full, int(full * ratio) // align * align


def refuse_chunked_ratio(facts: ModelFacts, cfg: SglangConfig) -> None:
    """model_config.py@v0.5.7 is_hybrid_model: --hybrid-kvcache-ratio above 0 gives Llama 4 a local and a global pool
    of its own (the flag is gone at 0.5.8, where the hybrid SWA pools take over); their sizes are not read."""
    if facts.attention_chunk_size and cfg.hybrid_kvcache_ratio not in (None, "", "0", "0.0"):
        raise UnsupportedModel("gsg does not size SGLang's --hybrid-kvcache-ratio pools of Llama 4; estimate "
                               "without the flag, or with SGLang 0.5.8+ (its hybrid SWA pools)")


def speculative_config(cfg: SglangConfig, version: str | None) -> SglangConfig:
    """The arguments as SGLang leaves them for an EAGLE-style draft: --max-running-requests unset becomes 48
    (profiles.SGLANG_SPECULATIVE_RUNNING)."""
    if (cfg.speculative_algorithm in P.SGLANG_EAGLE_FAMILY and cfg.max_running_requests is None
            and P.arithmetic_release("sglang", version) >= P.known_version(P.SGLANG_SPECULATIVE_RUNNING_SINCE)):
        return replace(cfg, max_running_requests=P.SGLANG_SPECULATIVE_RUNNING)
    return cfg


def draft_weight_terms(facts: ModelFacts, cfg: SglangConfig, version: str | None) -> tuple[int, int]:
    """(a NEXTN/MTP draft's weights per rank, the part resident when the target's pool is sized: all of it from
    0.5.14, none before; profiles.SGLANG_DRAFT_ORDER). Nothing for a draft gsg has no facts for."""
    if not cfg.speculative_algorithm or cfg.pp_size > 1:
        return 0, 0
    from gpustack_guard.core.memory import sglang_draft  # only for a speculative deployment (validate's import budget)

    layers = sglang_draft.mtp_layers(facts, cfg)
    weights = sglang_draft.draft_weight_bytes(facts, layers, cfg.tp_size) if layers else 0
    return weights, (weights if P.sglang_draft_order(version).draft_weights_first else 0)


def draft_terms(facts: ModelFacts, cfg: SglangConfig, version: str | None, capacity: int, weights: int) -> dict:
    """The sized draft (sglang_draft.draft_report) with what it takes outside the static part: its KV pool, and its
    weights where they load after the target's pool; {} where no draft is sized."""
    if not weights:
        return {}
    from gpustack_guard.core.memory.sglang_draft import draft_report

    draft = draft_report(facts, cfg, version, capacity, weights)
    draft["outside_static"] = draft["kv_cache"] + (0 if draft["weights_before_target_pool"] else weights)
    return draft


def speculative_notes(cfg: SglangConfig, version: str | None, draft: dict) -> list[str]:
    """What the estimate says of the draft: its sized terms (sglang_draft.draft_report), or what it left out."""
    release = P.arithmetic_release("sglang", version)
    if draft:
        when = ("before the target's pool is sized, which shrinks it" if draft["weights_before_target_pool"]
                else "after the target's pool is sized, outside the static fraction")
        return [f"--speculative-algorithm {cfg.speculative_algorithm}: the draft is the model's {draft['layers']} MTP "
                f"layer(s): {draft['weights'] / GiB:.2f} GiB of weights per rank, loaded {when}, and a KV pool of "
                f"{draft['kv_tokens']:,} tokens ({draft['kv_cache'] / GiB:.2f} GiB) outside it; SGLang {release}'s "
                "draft CUDA graphs are not sized"]
    if not cfg.speculative_algorithm or cfg.speculative_algorithm == "NGRAM":
        return []
    # the draft's config is another model's: gsg has no facts for it, so it says what it left out
    reserve = speculative_reserve_mb(cfg, version) if not cfg.mem_fraction_static else 0.0
    return [f"--speculative-algorithm {cfg.speculative_algorithm}: the draft model's weights, KV and graphs are not "
            f"sized (gsg reads no draft config); SGLang {release} "
            + (f"keeps {reserve / 1024:g} GiB outside the static fraction for them" if reserve else
               "keeps nothing outside the static fraction for them here")
            + ": make sure the draft fits in what the fraction leaves, or lower --mem-fraction-static"]


def _lora_slots(facts: ModelFacts, cfg: SglangConfig, tp: int, pp: int, version: str | None) -> LoraSlots | None:
    if not cfg.lora:
        return None
    from gpustack_guard.core.memory.lora import sglang_slots  # LoRA specs only (import budget)

    return sglang_slots(facts, cfg.lora, tp, pp, version)


def lora_notes(cfg: SglangConfig, lora: LoraSlots | None) -> list[str]:
    """What the LoRA pool took from the KV pool, and what of it gsg did not count."""
    if lora is None or cfg.lora is None:
        return []
    taken = [f"LoRA pool: {cfg.lora.slots} slot(s) at rank {cfg.lora.rank} over {', '.join(lora.modules)}, "
             f"{lora.bytes / GiB:.2f} GiB per GPU taken before the KV pool is sized"] if lora.bytes else []
    return taken + [f"LoRA: {text}" for text in lora.unread]


def estimate_sglang(facts: ModelFacts, gpu_total: int, cfg: SglangConfig, *, version: str | None,
                    gpu_name: str = "") -> Estimate:
    profile = P.sglang_profile(version)
    cfg = speculative_config(cfg, version)
    cfg, page_hook = model_page_override(facts, cfg, version, gpu_name)
    tp, pp = cfg.tp_size, cfg.pp_size
    chunked, graph_bs, fraction, prefill_mb = _defaults(cfg, gpu_total, profile, facts, gpu_name, version)
    fraction *= aiter_factor(facts, cfg, version, gpu_name)
    context = cfg.context_length or facts.max_position_embeddings or 0
    no_model = UnsupportedModel("gsg has no SGLang memory model for compressed sparse attention (DeepSeek-V4); "
                                "estimate it with the vLLM backend")
    try:
        weights = weights_per_rank(facts, tp, pp)
    except ValueError:
        if facts.is_compressed_attention:
            raise no_model from None  # the missing model, not the missing facts, is what blocks it
        raise
    # weights as loaded: the segments the allocator keeps for them and the rotary cache (profiles.ALLOC_*)
    tensors = parameter_tensors(facts, tp) if pp == 1 else None
    rounding = segment_tails(tensors) if tensors else 0
    rope = rope_cache_bytes(facts, version, gpu_name)
    parameters = weights
    weights += rounding + rope
    start_up = start_up_bytes(tp, pp, gpu_name)
    pre = gpu_total - cfg.foreign_bytes - start_up
    # a NEXTN/MTP draft of the target's own layers (sglang_draft): resident when the target's pool is profiled
    # from 0.5.14 (profiles.SGLANG_DRAFT_ORDER), loaded after it before
    draft_weights, draft_first = draft_weight_terms(facts, cfg, version)
    # the LoRA memory pool is allocated after the weights and before the KV pool is sized (lora.py)
    lora = _lora_slots(facts, cfg, tp, pp, version)
    lora_bytes = lora.bytes if lora else 0
    # 0.5.18+: the multimodal reserve comes off the budget before the pools are sized, as the weights do
    mm_reserve, mm_transport, mm_notes = multimodal_kv_reserve(facts, cfg, version, gpu_name, gpu_total)
    target_weights, weights = weights, weights + draft_first + lora_bytes + mm_reserve  # what the sizing sees
    rest = int(fraction * pre) - weights
    refuse_chunked_ratio(facts, cfg)
    if facts.is_compressed_attention:
        if rest > 0:
            raise no_model
        cell = 0  # the weights alone decide: SGLang refuses before it sizes any KV
    elif facts.is_gated_delta:  # the KV cell counts the full-attention layers only
        from gpustack_guard.core.memory.estimate import GatedDeltaUnsupported
        from gpustack_guard.core.memory.gated_delta import sglang_mamba_pool, sglang_unread

        row = P.sglang_gated_delta_row(version)
        if (reason := sglang_unread(facts, cfg, row, gpu_name, cfg.attention_backend is not None,
                                    version)) is not None:
            raise GatedDeltaUnsupported(reason)
        assert facts.num_hidden_layers and facts.linear_attention_layers  # is_gated_delta
        cell = (facts.num_hidden_layers - facts.linear_attention_layers) * kv_bytes_per_token_layer(
            facts, tp, cfg.kv_cache_dtype)
    else:
        gemma4_unread(facts, cfg, version, gpu_name)
        cell = KVShape(facts, tp, pp, cfg.kv_cache_dtype, 1, chunked).bytes_per_token
    page = cfg.page_size if profile.page_rounding else 1
    mamba: dict = {}
    swa: dict = {}
    picked = sm100_backend(facts, cfg, version, gpu_name)  # a page the user gave keeps the backend SGLang picks
    backend = cfg.attention_backend or (picked.backend if picked else "")
    swa_row = None if facts.is_gated_delta or facts.is_compressed_attention or facts.is_mla else hybrid_swa_row(
        facts, cfg, version, trtllm_mha=backend == "trtllm_mha")
    if facts.is_gated_delta and not facts.is_compressed_attention:
        mamba = sglang_mamba_pool(facts, cfg, row, pre, weights, fraction, cell, page, context, version)
        capacity = mamba.pop("capacity")
    elif swa_row is not None:
        shape = KVShape(facts, tp, pp, cfg.kv_cache_dtype, 1, chunked)
        ratio = cfg.swa_full_tokens_ratio or P.SGLANG_SWA_FULL_TOKENS_RATIO
        if swa_row.split == "tokens":  # the one pool's count T, which set_num_token_hybrid divides
            counted = max_total_num_tokens(pre, weights, fraction, cell, page)
        else:  # HybridSWAPoolConfigurator's cell F x n_full + r x S x n_swa (Gemma 4: F and S differ)
            counted = max_total_num_tokens(pre, weights, fraction, shape.full_layer_bytes * shape.full_layers
                                           + ratio * shape.layer_bytes * shape.window_layers, 1)
        if cfg.max_total_tokens:  # the cap lowers T before the "tokens" split, the full pool of the "bytes" one
            counted = min(counted, cfg.max_total_tokens)
        capacity, swa_tokens = hybrid_swa_pools(swa_row, shape, ratio, counted, page)
        swa = {"full_layer_tokens": capacity, "swa_layer_tokens": swa_tokens, "swa_full_tokens_ratio": ratio,
               "full_layers": shape.full_layers, "swa_layers": shape.window_layers, "split": swa_row.split,
               "source": swa_row.source}
    else:
        capacity = max_total_num_tokens(pre, weights, fraction, cell, page)
    if cfg.max_total_tokens and not swa:
        capacity = min(capacity, cfg.max_total_tokens)  # --max-total-tokens only lowers it
    kv_pool = capacity * cell
    if swa:  # the full layers' pool plus the sliding layers' (memory_pool.py SWAKVPool)
        kv_pool = shape.full_layer_bytes * capacity * shape.full_layers + \
            shape.layer_bytes * swa["swa_layer_tokens"] * shape.window_layers
    requested = math.ceil(fraction * pre)  # the static part: weights + pool
    # outside the static part: SGLang's own reserve terms minus the comm term (already in start_up)
    # and, from 0.5.10, the piecewise prefill graphs; a draft's KV pool (and its weights when loaded after)
    outside = int((reserved_mb(tp, pp, chunked, graph_bs) - tp * pp * P.SGLANG_COMM_MB_PER_RANK + prefill_mb) * MiB)
    draft = draft_terms(facts, cfg, version, capacity, draft_weights)
    outside += draft.get("outside_static", 0)
    weights = target_weights
    running = cfg.max_running_requests or (max(capacity // context, 1) if context else 0)
    if mamba:
        running = mamba["max_running_requests"]

    notes = []
    if page_hook is not None and profile.page_rounding:
        notes.append(f"SGLang {P.arithmetic_release('sglang', version)} picks the {page_hook.backend} attention "
                     f"backend for {facts.architecture} on {gpu_name}, which takes {page_hook.page}-token KV pages: "
                     "the pool is rounded down to them (set --attention-backend to keep the page size)")
    if tp * pp > 1 and interconnect(gpu_name) == "unknown":
        # the larger figure is the safe side for the pool, but a PCIe box keeps ~2 GiB more per rank
        notes.append(f"GPU interconnect unknown{' for ' + gpu_name if gpu_name else ' (no GPU name)'}: start-up taken "
                     f"as on NVLink ({P.SGLANG_START_UP_PARALLEL / GiB:.2f} GiB per rank); PCIe boards, where "
                     f"custom all-reduce sets up no buffers beyond two GPUs, keep "
                     f"{P.SGLANG_START_UP_PCIE_PARALLEL / GiB:.2f} GiB: give the GPU name")
    notes.extend(speculative_notes(cfg, version, draft))
    notes.extend(lora_notes(cfg, lora))
    notes.extend(mm_notes)
    if weights > gpu_total:
        verdict = DOES_NOT_FIT
    elif rest <= 0 or capacity <= 0 or (mamba and mamba["slots"] <= 0):
        verdict = NO_KV_MEMORY  # "Not enough memory. Please try to increase --mem-fraction-static."
    else:
        verdict = FITS
    # Unlike vLLM, SGLang starts with a pool shorter than the context: its scheduler caps a request at
    # max_req_len = min(context - 1, pool - 1) and refuses longer inputs (sglang#4048: context 163,840 on a
    # 59,868-token pool, "Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens)").
    max_req_len = max(min(context, capacity) - 1 if context else capacity - 1, 0)
    max_input_len = max(max_req_len - P.SGLANG_INPUT_MARGIN, 0)
    if verdict == FITS and context and capacity < context:
        notes.append(f"the pool ({capacity:,} tokens) is shorter than the context ({context:,}): SGLang starts, "
                     f"and refuses inputs over {max_input_len:,} tokens")
    notes.extend(gpu_arch.uma_notes("sglang", P.arithmetic_version("sglang", version), gpu_name))
    return Estimate(
        engine="SGLang", version=version or f"{P.DEFAULT_VERSIONS['sglang']} (assumed)", gpu_total=gpu_total,
        gpus=tp * pp, requested=requested, weights=weights, activation=0, non_torch=start_up,
        cuda_graphs=graph_bs * P.SGLANG_GRAPH_MB_PER_BS * MiB, kv_cache=kv_pool, kv_available=rest,
        # memory other processes hold is not free for the reserve either (the fraction is of what is free)
        headroom=gpu_total - cfg.foreign_bytes - requested, headroom_needed=start_up + outside,
        footprint=start_up + requested + outside,
        kv_bytes_per_token=cell, block_size=page, kv_capacity_tokens=capacity,
        max_model_len=context, estimated_max_model_len=min(capacity, max(context, capacity)),
        max_num_seqs=running, max_concurrency=(capacity / context) if context else 0.0, verdict=verdict,
        kv_needed=context * cell, notes=tuple(notes),
        extra={"mem_fraction_static": fraction, "chunked_prefill_size": chunked, "cuda_graph_max_bs": graph_bs,
               "free_before_weights": pre, "foreign_bytes": cfg.foreign_bytes,
               "fraction_rule": profile.fraction_rule,
               "fraction_rule_since": profile.since, "fraction_rule_source": profile.source,
               "multimodal_fraction_factor": multimodal_fraction_factor(
                   facts, version, user_set=bool(cfg.mem_fraction_static)),
               "multimodal_fraction_source": P.sglang_vlm_fraction(version).source if facts.vision_params else "",
               **({"multimodal_kv_reserve": mm_reserve, "mm_feature_transport": mm_transport,
                   "multimodal_kv_reserve_source": P.sglang_mm_reserve(version).source} if mm_transport else {}),
               "parameter_bytes": parameters, "allocator_segment_tail_bytes": rounding, "rope_cache_bytes": rope,
               "prefill_graph_reserve": int(prefill_mb * MiB),
               "graph_args_source": P.sglang_graph_args(version).source,
               "model_page_source": page_hook.source if page_hook else "",
               "speculative_reserve": int((0 if cfg.mem_fraction_static else speculative_reserve_mb(cfg, version))
                                          * MiB),
               "speculative_reserve_source": P.sglang_speculative_reserve(version).source
               if cfg.speculative_algorithm else "",
               "max_total_num_tokens": capacity, "max_req_len": max_req_len,
               "max_input_len": max_input_len,
               **({"mamba_pool": mamba} if mamba else {}),
               **({"lora": lora.as_json()} if lora else {}),
               **({"speculative_draft": draft} if draft else {}),
               **({"hybrid_swa_pool": swa} if swa else {}),
               # the capacity and the pool are the two pools' (the budget rows name the rule that split them)
               **({"term_rules": {T.KV_TOKENS: (f"hybrid-swa-full-layers-by-{swa['split']}", swa["source"]),
                                  T.KV_CACHE: ("full-and-sliding-pools", swa["source"])}} if swa else {})},
    )

