"""Version-dependent engine behaviour and calibrated constants, each with its source.

Everything that changes between vLLM / SGLang releases lives here, keyed by the first version it applies to,
so a behaviour change is one new row rather than an `if` scattered through the arithmetic.
"""

import functools
from collections.abc import Sequence
from dataclasses import replace
from typing import Iterable, Protocol, TypeVar

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.table_row import TableRow
from gpustack_guard.core.units import GiB, KiB, MiB
from gpustack_guard.core.values import frozen_value
from gpustack_guard.core.versions import Version, parse_version


def known_version(text: str) -> Version:
    """A release named in this module's tables (always a valid version string)."""
    parsed = parse_version(text)
    assert parsed is not None, f"profiles names an invalid release: {text!r}"
    return parsed


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class VllmProfile:
    """vLLM's defaults and formulas from one release on (the `since` version)."""

    __repr__ = fields_repr

    since: str
    engine: str  # "v0" | "v1"
    capture_rule: str  # "v0" | "v1-early" | "v1-8step" | "v1": how CUDA-graph capture sizes are chosen
    graph_sets: int  # 1 piecewise; 2 FULL_AND_PIECEWISE
    graphs_profiled: bool  # CUDA-graph memory subtracted inside the gmu budget (else paid from headroom)
    source: str
    in_flight_steps: int = 1  # scheduler steps whose tokens sliding-window caches must still hold
    per_instance_budget: bool = True  # gmu x total is this instance's own budget (else a cap on the whole GPU)
    startup_free_check: bool = False  # refuses to start when free memory < gmu x total
    pp_whole_model_check: bool = False  # under PP, one request's KV of ALL layers is checked against one rank
    # NCCL / custom all-reduce buffers (TP x PP > 1) allocated after the memory snapshot, so the profiler counts
    # them as non-torch memory inside the gmu budget; from 0.11.0 the distributed init runs before the snapshot
    # and they live outside it (vllm PR #25359, merged 2025-09-22: "NCCL buffers ... were allocated after the
    # memory snapshot ... The NCCL buffer allocation shows up as non-torch memory increase during forward pass";
    # the fix moves init_worker_distributed_environment() before the snapshot). V0 from 0.6.4 took its baseline
    # snapshot in init_device before init_worker_distributed_environment as well.
    comm_in_budget: bool = False
    # V1 0.8.0-0.9.0 and the 0.7 alpha (gpu_worker.py@v0.7.3, @v0.8.0, @v0.8.5, @v0.9.0
    # determine_available_memory): after the profile run the worker takes mem_get_info() total - free - torch's
    # allocated bytes as non-torch memory and subtracts it, with torch's peak, from gmu x total. That is every byte
    # on the device torch does not hold: this process's CUDA context and other processes' memory too, so gmu caps
    # the whole GPU. 0.9.1 (gpu_worker.py@v0.9.1 init_device) measures from a MemorySnapshot taken after CUDA starts
    # and refuses to start below gmu x total.
    context_in_budget: bool = False
    # the sampler's share of the profile and the warm-up after the KV cache: VLLM_SAMPLER_ROWS below
    # CacheConfig.gpu_memory_utilization's default: 0.9 up to 0.19.x, 0.92 from 0.20.0 (vllm/config/cache.py of the
    # wheels 0.19.1 and 0.20.0)
    default_gmu: float = 0.9
    # 0.34.0's extensible KV cache, on by default on CUDA: the pool is sized from the memory measured free after
    # warmup and graph capture, with gpu_memory_utilization defaulting to 1.0 (extensible_kv_cache.py
    # measure_kv_cache_bytes; docs/memory-arithmetic.md, "Extensible KV cache")
    extensible_kv: bool = False
    # CUDA-graph memory sized as vLLM's own profile_cudagraph_memory sizes it (GRAPH_ESTIMATE_*: first capture plus
    # a cost per further graph of each mode) rather than the flat GRAPH_BYTES_PER_LAYER_GRAPH; true wherever
    # graphs_profiled is (sizes_graphs_by_estimate), and from 0.18.0 for the graphs captured after the KV cache
    graphs_estimated: bool = False
    # up to 0.2.4 the budget is gmu x the device's total less torch.cuda.max_memory_allocated() after the profile
    # (worker.py@v0.2.4 profile_num_available_blocks): torch's own bytes only, so the CUDA context and NCCL's buffers
    # (non-torch memory) are outside it; 0.2.5 takes total - free instead (worker.py@v0.2.5, vllm PR #2031)
    torch_peak_only: bool = False

    @property
    def sizes_graphs_by_estimate(self) -> bool:
        return self.graphs_profiled or self.graphs_estimated


VLLM_PROFILES = (
    VllmProfile("0.0.0", "v0", "v0", 1, False,
                "V0 up to 0.2.4: the profile's peak is torch.cuda.max_memory_allocated() (vllm/worker/worker.py"
                "@v0.2.4 profile_num_available_blocks; vllm#2136 quotes the same blocks from 0.2.3 and 0.2.4), so "
                "non-torch memory (CUDA context, NCCL) is outside gmu x total; graphs captured after the KV cache",
                per_instance_budget=False, torch_peak_only=True),
    VllmProfile("0.2.5", "v0", "v0", 1, False,
                "V0 engine: graphs captured after KV allocation, 'CUDA graphs can take additional 1~3 GiB'; the "
                "profiler took all memory used on the GPU, other processes included, against gmu x total "
                "(gmu documented as a global limit, vllm PR #9505 discussion); from 0.2.5 the peak is mem_get_info's "
                "total - free after the profile (vllm/worker/worker.py@v0.2.5, @v0.2.7, @v0.3.3; vllm PR #2031)",
                per_instance_budget=False, comm_in_budget=True),
    VllmProfile("0.6.4", "v0", "v0", 1, False,
                "memory profiling per instance: 'the current vLLM instance can use total_gpu_memory x "
                "gpu_memory_utilization' (vllm#10517 and PR #10511 logs, Dec 2024)", comm_in_budget=True),
    VllmProfile("0.8.0", "v1", "v1-early", 1, False,
                "V1 default since 0.8.0; capture sizes [1,2,4]+range(8,513,8) capped by max_num_seqs; "
                "gpu_worker.py@v0.8.0..@v0.9.0 determine_available_memory: gmu x total minus torch's peak and "
                "every non-torch byte on the device (mem_get_info total - free - allocated), the CUDA context and "
                "other processes included; no start-up free-memory check", per_instance_budget=False,
                comm_in_budget=True, context_in_budget=True),
    VllmProfile("0.9.1", "v1", "v1-early", 1, False,
                "gpu_worker.py@v0.9.1 init_device: MemorySnapshot after CUDA starts, requested_memory = gmu x "
                "total, and the refusal 'Free memory on device ... on startup is less than desired GPU memory "
                "utilization' (also in a 0.11.0 log, docker/model-runner PR #414)", startup_free_check=True,
                comm_in_budget=True),
    VllmProfile("0.10.1", "v1", "v1-8step", 1, False,
                "vllm/config/scheduler.py@v0.10.1 cuda_graph_sizes defaults to [min(2*max_num_seqs, 512)] and "
                "vllm/config/__init__.py@v0.10.1 captures [1,2,4]+range(8, that+1, 8) up to max_num_batched_tokens "
                "(0.10.0 not read: it keeps the 0.9.1 row)", startup_free_check=True, comm_in_budget=True),
    VllmProfile("0.11.0", "v1", "v1-8step", 2, False,
                "FULL_AND_PIECEWISE default; capture sizes [1,2,4]+range(8, min(2*max_num_seqs, 512)+1, 8) "
                "(vllm/config/__init__.py@v0.11.0: 67 graphs of each mode at 1,024 sequences, llm-d#787's '67/67'); "
                "V0 removed; NCCL initialised before the memory snapshot (vllm PR #25359), so its buffers sit "
                "outside the budget", startup_free_check=True),
    VllmProfile("0.11.1", "v1", "v1", 2, False,
                "vllm/config/vllm.py@v0.11.1: capture sizes [1,2,4]+range(8,256,8)+range(256, min(2*max_num_seqs, "
                "512)+1, 16) (51 graphs of each mode at 1,024 sequences)", startup_free_check=True),
    VllmProfile("0.15.0", "v1", "v1", 2, False,
                "PP: one request's KV of all layers checked against the smallest rank (vllm#34076 on "
                "0.15.2rc1: 24.0 GiB needed for 262,144 tokens = 48 layers; PR #34080 closed unmerged)",
                startup_free_check=True, pp_whole_model_check=True),
    VllmProfile("0.18.0", "v1", "v1", 2, False,
                "gpu_worker.py@v0.18.0 determine_available_memory runs gpu_model_runner.profile_cudagraph_memory "
                "(capture sizes: the two largest graphs of each mode measured, the rest at the second's cost) "
                "but leaves it out of the budget while VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS is '0' (envs.py "
                "@v0.18.0, @v0.19.0); the graphs captured after the KV cache are what that estimate sizes, and "
                "compile_or_warm_up_model prints 'CUDA graph pool memory: X GiB (actual), Y GiB (estimated)'",
                startup_free_check=True, pp_whole_model_check=True, graphs_estimated=True),
    VllmProfile("0.20.0", "v1", "v1", 2, True,
                "gpu_memory_utilization defaults to 0.92 (CacheConfig, vllm/config/cache.py; 0.9 in 0.19.1); CUDA "
                "graphs estimated inside the budget: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to '1' in "
                "vllm/envs.py of the 0.20.0 wheel ('0' in 0.18.0 and 0.19.0), although the log line it prints says "
                "'default since v0.21.0'",
                startup_free_check=True, pp_whole_model_check=True, default_gmu=0.92),
    VllmProfile("0.21.0", "v1", "v1", 2, True,
                "the dummy sampler no longer sorts in the profile (CUDA graph memory profiling, on since 0.20.0, "
                "is quoted in gpustack/runner#251)",
                startup_free_check=True, pp_whole_model_check=True, default_gmu=0.92),
    VllmProfile("0.26.0", "v1", "v1", 2, True,
                "sliding-window blocks freed on processed tokens: a window's admission cap is the window plus "
                "VllmConfig.max_in_flight_tokens, max_concurrent_batches (2 under async scheduling) x "
                "max_num_batched_tokens (vllm/v1/kv_cache_interface.py and vllm/config/vllm.py@v0.26.0, alike "
                "@v0.28.0 and @v0.34.0; vllm#52495 quotes cdiv(16384, 4) pages for 8192 batched tokens). "
                "0.24.0, 0.25.0 and 0.25.1 still add one max_num_batched_tokens (kv_cache_interface.py "
                "SlidingWindowSpec.max_admission_blocks_per_request at those tags)", in_flight_steps=2,
                startup_free_check=True, pp_whole_model_check=True, default_gmu=0.92),
    VllmProfile("0.34.0", "v1", "v1", 2, True,
                "extensible KV cache on by default on CUDA (vllm PR #50779's --enable-extensible-kv-cache): the "
                "pool is sized after warmup and graph capture from measured free memory, gpu_memory_utilization "
                "defaults to 1.0 and is only a cap, and the start-up free-memory check is skipped",
                in_flight_steps=2, pp_whole_model_check=True, default_gmu=1.0, extensible_kv=True),
)
# Extensible KV cache (0.34.0, vllm/v1/worker/extensible_kv_cache.py): KV = min(requested - engine use, free at
# start - engine use - margin) - transient peak, the margin max(1 GiB, 0.75 x transient peak) on CUDA
# (KV_CACHE_MARGIN_FLOOR_BYTES, KV_CACHE_MARGIN_FRACTION); "engine use" is what stays allocated after warmup
# (weights, graphs, non-torch), the transient peak the profiled activation. Without it (--no-enable-extensible-
# kv-cache, or --kv-cache-memory) the estimate-based sizing runs with the 0.92 default and the start-up check.
EXTENSIBLE_MARGIN_FLOOR = GiB
EXTENSIBLE_MARGIN_FRACTION = 0.75
ESTIMATE_BASED_DEFAULT_GMU = 0.92
# The llama.cpp build gsg assumes for a spec with no build number (no backend_version, or a moving one): GPUStack
# 2.x's community llama.cpp backend (gpustack/assets/community-inference-backends.yaml) runs moving image tags,
# ghcr.io/ggml-org/llama.cpp:server-cuda, :server, :server-vulkan, :server-rocm, :server-musa, whose version names
# (cuda, cpu, ...) are no build, so what starts is the newest build. gsg counts it as its newest modelled one: the
# latest `since` of the llama.cpp rows (LLAMACPP_F16_MASK_INPUT_SINCE; a test keeps the two equal).
LLAMACPP_NEWEST_MODELLED = "b10507"
# vLLM and SGLang: what GPUStack 2.3.0's worker wrote back as backend_version in the export fixture. Used when a
# spec leaves backend_version unset or names no release (vLLM/SGLang: GSG039; llama.cpp: a note in the estimate).
DEFAULT_VERSIONS = {"vllm": "0.11.0", "sglang": "0.5.5", "llamacpp": LLAMACPP_NEWEST_MODELLED}


def arithmetic_version(family: str, version: str | None) -> str:
    """The release whose behaviour the arithmetic applies: the stated one when it reads as a version, else the
    default. A moving tag (`latest`, `main`) or a commit is treated like no version at all, the newest modelled
    default rather than the oldest profile; GSG039 says so."""
    if version is not None and parse_version(version) is not None:
        return version
    return DEFAULT_VERSIONS[family]


def arithmetic_release(family: str, version: str | None) -> Version:
    """arithmetic_version, parsed: what every version comparison of the memory arithmetic compares."""
    return known_version(arithmetic_version(family, version))


Row = TypeVar("Row")


def row_of_release(keyed: Sequence[tuple[Version, Row]], release: Version) -> Row:
    """The row of a version table (rows keyed by the release they start at, oldest first) that applies to
    `release`: the last one it reaches, the oldest for anything older. One lookup for every table here."""
    chosen = keyed[0][1]
    for since, row in keyed:
        if release >= since:
            chosen = row
    return chosen


def row_for(family: str, keyed: Sequence[tuple[Version, Row]], version: str | None) -> Row:
    """The row of a version table for a deployment's `version` as the arithmetic reads it (arithmetic_release:
    unknown or unparsable versions take the family's default release)."""
    return row_of_release(keyed, arithmetic_release(family, version))


def keyed_by_release(rows: Sequence[Row]) -> tuple[tuple[Version, Row], ...]:
    """A version table's rows keyed by their parsed `since` for row_of_release: parsed once, at import."""
    return tuple((known_version(row.since), row) for row in rows)  # type: ignore[attr-defined]


_PROFILE_KEYS = keyed_by_release(VLLM_PROFILES)


def vllm_profile(version: str | None) -> VllmProfile:
    return row_for("vllm", _PROFILE_KEYS, version)


class VllmAsyncDefaultRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """Whether vLLM turns async scheduling on when neither --async-scheduling nor --no-async-scheduling is given
    (VllmConfig.__post_init__, `async_scheduling is None`): on, except for these --speculative-config methods."""

    since: str
    off_for_methods: frozenset[str]
    source: str


# Read only where it matters to gsg, from 0.26.0 (the release whose window caches hold max_concurrent_batches steps;
# before it one step whatever the scheduling): a pooling runner, an executor without async support and ROCm DeepEP
# high-throughput DBO also turn it off at every tag; gsg reads none of them.
VLLM_ASYNC_DEFAULT_ROWS = (
    VllmAsyncDefaultRow("0.0.0", frozenset(), "before 0.26.0 the in-flight window does not depend on it"),
    VllmAsyncDefaultRow(
        "0.26.0", frozenset({"ngram", "medusa", "mlp_speculator", "draft_model", "suffix", "custom_class"}),
        "vllm/config/vllm.py@v0.26.0 .. @v0.32.0: 'Async scheduling not supported with %s-based speculative "
        "decoding and will be disabled' for a method outside EagleModelTypes (eagle, eagle3, the MTP types), "
        "ngram_gpu and dspark (config/speculative.py SpeculativeMethod)"),
    VllmAsyncDefaultRow("0.33.0", frozenset(),
                        "vllm/config/vllm.py@v0.33.0, @v0.34.0: no speculative-method exception"),
)
_ASYNC_DEFAULT_KEYS = keyed_by_release(VLLM_ASYNC_DEFAULT_ROWS)


def vllm_async_default_row(version: str | None) -> VllmAsyncDefaultRow:
    """The async-scheduling default of a vLLM release (VLLM_ASYNC_DEFAULT_ROWS)."""
    return row_for("vllm", _ASYNC_DEFAULT_KEYS, version)


class V0Fallback(TableRow):  # a table row: tuple-built, no generated methods to compile
    """A feature that made a V1-default release run the V0 engine (vllm arg_utils _is_v1_supported_oracle)."""

    feature: str
    since: str
    until: str  # first release where V1 handles it (or V0 is gone)
    source: str


VLLM_V0_REMOVED = "0.11.0"  # the V0 engine was deleted; VLLM_USE_V1=0 no longer exists
VLLM_V0_FALLBACKS = (
    V0Fallback("pipeline parallelism without the Ray executor", "0.8.0", "0.9.0",
               "0.8.x oracle: 'Pipeline Parallelism without Ray distributed executor' falls back to V0 (the "
               "PP + bitsandbytes run of issue 12 on 0.8.x printed V0 lines)"),
    V0Fallback("--kv-cache-dtype fp8 without FlashAttention 3 (pre-Hopper GPU)", "0.8.0", "0.10.0",
               "0.8.x oracle: '--kv-cache-dtype' falls back unless flash_attn_supports_fp8()"),
    V0Fallback("--num-scheduler-steps > 1 (multi-step scheduling)", "0.8.0", VLLM_V0_REMOVED,
               "multi-step scheduling was never ported to V1"),
    V0Fallback("VLLM_USE_V1=0", "0.8.0", VLLM_V0_REMOVED, "the documented opt-out of V1"),
    V0Fallback("compute capability below 8.0 (pre-Ampere GPU: T4, V100, RTX 20xx)", "0.8.0", "0.10.2",
               "vllm/engine/arg_utils.py@v0.8.0..v0.10.1 _is_v1_supported_oracle: 'Need at least Ampere for now "
               "(FA support required)' falls back to V0; the check is gone at v0.10.2"),
)
VLLM_V1_OPT_IN_SINCE = "0.7.0"  # VLLM_USE_V1=1 selected the V1 alpha before it was the default
VLLM_V1_DEFAULT_SINCE = "0.8.0"  # the first release whose default engine is V1 (VLLM_PROFILES)
VLLM_LAST_V0_DEFAULT = "0.7.3"  # the last release whose default engine is V0


def vllm_generation_release(release: Version, generation: str) -> Version:
    """The release whose TERM_SOURCES rows describe the code an estimate ran: a V0 fallback on a release that
    defaults to V1 (VLLM_V0_FALLBACKS, VLLM_USE_V1=0) runs V0's code, described up to VLLM_LAST_V0_DEFAULT;
    V1 opted into before it was the default (VLLM_USE_V1=1) is estimated with VLLM_V1_DEFAULT_SINCE's profile."""
    first_v1 = known_version(VLLM_V1_DEFAULT_SINCE)
    if generation == "v0" and release >= first_v1:
        return known_version(VLLM_LAST_V0_DEFAULT)
    if generation == "v1" and release < first_v1:
        return first_v1
    return release

# V0 chunked prefill: auto-enabled for long models, and its max_num_batched_tokens default.
VLLM_V0_AUTO_CHUNKED_SINCE = "0.5.0"  # "Chunked prefill is enabled by default for models with max_model_len > 32K"
VLLM_V0_AUTO_CHUNKED_ABOVE = 32768
VLLM_V0_CHUNKED_TOKENS = ((known_version("0.0.0"), 512), (known_version("0.6.4"), 2048))  # 512 in 0.5-0.6.3 V0
VLLM_V0_MAX_NUM_SEQS = 256

# Fused-MoE workspace: vLLM's fused_experts processes tokens in chunks of VLLM_FUSED_MOE_CHUNK_SIZE
# (default 32 * 1024; vllm/envs.py) and holds, per chunk, intermediate_cache1/3 in one shared buffer of
# M x top_k x max(N, K) and intermediate_cache2 of M x top_k x N/2 (N = 2 x moe_intermediate / tp, K = hidden),
# in the activation dtype; FP8 MoE adds the quantised copies of the input (M x K) and of cache2 (1 byte each).
# The chunk by release, read from vllm/envs.py and fused_moe.py of the wheels 0.11.2, 0.12.0, 0.17.0 and 0.18.0:
# 32,768 up to 0.11.x, 16,384 from 0.12.0; 0.18.0 removed the variable and runs the whole batch as one chunk.
# Before 0.6.0 the default was 65,536 (envs.py@v0.5.4; 32,768 at @v0.6.0).
VLLM_FUSED_MOE_CHUNKS = ((known_version("0.0.0"), 64 * 1024), (known_version("0.6.0"), 32 * 1024),
                         (known_version("0.12.0"), 16 * 1024), (known_version("0.18.0"), None))
VLLM_FUSED_MOE_CHUNK = 32 * 1024  # 0.6.0-0.11.x's chunk, for callers without a version
# Where the fused-MoE intermediate caches live, by release (unquantised and FP8 Triton experts on CUDA):
#   "transient"  fused_moe.py@v0.12.0 fused_experts_impl: cache13 = M x top_k x max(N, K) and cache2 = M x top_k x
#                N/2, torch.empty per call, freed when the layer returns (UnquantizedFusedMoEMethod.forward_cuda
#                calls fused_experts directly; the modular kernel only under all2all EP).
#   "workspace"  modular_kernel.py@v0.17.0 (and @v0.18.0..v0.33.0 alike): every CUDA MoE layer runs a
#                FusedMoEKernel whose TritonExperts.workspace_shapes asks for workspace13 = M x top_k x
#                max(N/2, K) (shared with the M x K output) and workspace2 = M x top_k x max(N, K), taken from
#                v1/worker/workspace.py WorkspaceManager.get_simultaneous: one buffer per worker that only grows
#                and is never freed, so the profile's workspace is still allocated while the dummy sampler runs.
# Transient as well in the 0.10.1.1 wheel on the FP8 path: Fp8MoEMethod.apply (quantization/fp8.py) reaches
# DeepGEMM's modular kernel only under VLLM_USE_DEEP_GEMM (default "0", envs.py), else fused_experts_impl's per-call
# cache13 / cache2 (fused_moe.py@v0.10.1.1, chunk 32,768).
# The manager exists from 0.13.0 (v1/worker/workspace.py@v0.13.0); its use by the MoE layers is read here from 0.14.0
# (modular_kernel.py@v0.14.0 _allocate_buffers, VLLM_MOE_WORKSPACE_SINCE).
VLLM_MOE_WORKSPACE_SINCE = "0.14.0"
VLLM_MOE_WORKSPACE_QUANT = (None, "fp8", "fbgemm_fp8", "compressed-tensors-fp8")  # Triton experts, read above

# The V1 alpha's profile run (VLLM_USE_V1=1 on 0.7.x, before V1 became the default at VLLM_V1_DEFAULT_SINCE): after
# the dummy forward of max_num_tokens it computes the logits and runs no sampler ("TODO(woosuk): Consider the memory
# usage of the sampler"). Read in v1/worker/gpu_model_runner.py profile_run of the wheels:
#   @v0.7.0, @v0.7.1, @v0.7.2  compute_logits(hidden_states): one row per token of the max_num_tokens batch, the
#                              batch's hidden states held while the logits exist
#   @v0.7.3                    compute_logits(hidden_states[logit_indices]): one row per max_num_seqs request
# The logits are the LM head's output in the model dtype (model_executor/layers/logits_processor.py@v0.7.1
# _get_logits: no float cast), over the vocabulary padded to DEFAULT_VOCAB_PADDING_SIZE and split over the TP ranks
# (vocab_parallel_embedding.py). At TP > 1 rank 0 gathers them (distributed/parallel_state.py@v0.7.1
# GroupCoordinator.gather: tp empty_like shards, then torch.cat), holding its shard, the gathered shards and their
# concatenation at once. (since, rows): "tokens" | "seqs".
VLLM_V1_ALPHA_LOGITS_ROWS = ((known_version("0.0.0"), "tokens"), (known_version("0.7.3"), "seqs"))
VLLM_V1_ALPHA_SOURCE = {"tokens": "vllm/v1/worker/gpu_model_runner.py@v0.7.0..@v0.7.2 profile_run (compute_logits of "
                                  "every max_num_tokens row, no sampler run); "
                                  "vllm/distributed/parallel_state.py@v0.7.1 gather",
                        "seqs": "vllm/v1/worker/gpu_model_runner.py@v0.7.3 profile_run (compute_logits of one row "
                                "per max_num_seqs request, no sampler run); "
                                "vllm/distributed/parallel_state.py@v0.7.1 gather"}
VOCAB_PADDING = 64  # vllm/model_executor/layers/vocab_parallel_embedding.py DEFAULT_VOCAB_PADDING_SIZE

# The hybrid KV-cache manager (models mixing sliding-window and full-attention layers), read in
# vllm/v1/core/kv_cache_utils.py of the wheels 0.9.0, 0.9.2, 0.10.1.1, 0.12.0 and 0.19.0:
#   before 0.9.2 (and in V0, and under --disable-hybrid-kv-cache-manager, a --kv-transfer-config or a
#   --kv-events-config: config/__init__.py@v0.10.1.1 VllmConfig.__post_init__) unify_hybrid_kv_cache_specs turns
#   every window layer into a full one: one pool of blocks of all layers, each request sized at full length;
#   from 0.9.2 _get_kv_cache_config_uniform_page_size groups the layers of each kind into groups of group_size
#   layers (the smallest kind's count; the last group of a kind padded), makes group_size tensors of num_blocks
#   = available // (page x group_size) pages each, shared by one layer of every group, and prints
#   "GPU KV cache size: num_blocks // len(groups) x block_size tokens" (the same figure in 0.19.0's
#   _report_kv_cache_config). Later releases take the larger count as group_size when the kinds are within a
#   factor of each other (12 window + 13 full layers of gpt-oss-20b with a drafter): no factor in 0.9.2, 0.10.1.1
#   and 0.11.0, 1.25 in 0.12.0 and 0.17.0, 1.5 in 0.19.0 (0.18.0 not read: keyed at 0.19.0). (since, factor).
VLLM_HYBRID_KV_MANAGER_SINCE = "0.9.2"
VLLM_HYBRID_GROUP_SIZE_FACTORS = ((known_version("0.9.2"), None), (known_version("0.12.0"), 1.25),
                                  (known_version("0.19.0"), 1.5))
# Chunked local attention (Llama 4's attention_chunk_size) and the hybrid KV-cache manager, per release:
#   0.9.2    no ChunkedLocalAttentionSpec (kv_cache_interface.py@v0.9.2): every chunked layer is a full one
#   0.10.0   gpu_model_runner.py@v0.10.0 get_kv_cache_spec gives chunked layers a ChunkedLocalAttentionSpec and
#            config.py@v0.10.0 VllmConfig.__post_init__ keeps the manager on for them (off only beside EAGLE)
#   0.10.1   VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE (vllm PR #21761): the manager is off for a model with
#            attention_chunk_size unless it is set; default "0" (envs.py and config/__init__.py@v0.10.1.1 ..
#            @v0.11.0, config/vllm.py@v0.12.0 and @v0.13.0)
#   0.14.0   its default "1" (envs.py and config/vllm.py@v0.14.0 .. @v0.34.0)
# Off, unify_hybrid_kv_cache_specs sizes every chunked layer at full length; on, the chunked layers form groups of
# their own whose requests hold the chunk plus the tokens in flight (ChunkedLocalAttentionSpec). Releases between
# the rows read are keyed with the earlier one. (since, (on by default, the variable read)).
VLLM_CHUNKED_LOCAL_HYBRID_ENV = "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE"
VLLM_CHUNKED_LOCAL_HYBRID = ((known_version("0.0.0"), (False, False)), (known_version("0.10.0"), (True, False)),
                             (known_version("0.10.1"), (False, True)), (known_version("0.14.0"), (True, True)))
# How V1 prints "GPU KV cache size" (the figure a log shows and gsg's kv_capacity_tokens):
#   up to 0.20.0 (kv_cache_utils.py@v0.10.1.1 _get_kv_cache_config_uniform_page_size, @v0.12.0 .. @v0.19.0 and
#   @v0.20.0 _report_kv_cache_config) num_blocks // len(kv_cache_groups) x block_size: a hybrid model's window
#   groups count as if they held full-length requests;
#   from 0.21.0 (kv_cache_utils.py@v0.21.0 and @v0.26.0 _report_kv_cache_config, @v0.30.0 and @v0.33.0 the
#   "KV cache size" report) int(max_concurrency x max_model_len), the concurrency being num_blocks over the pages
#   one max_model_len request takes in every group (a window group only its window plus the batched tokens).
#   Equal for a full-attention model whose max_model_len is a multiple of the block size; larger for hybrid ones.
#   0.20.1 and 0.20.2 not read (keyed at 0.21.0). (since, rule): "blocks-over-groups" | "concurrency-x-max-len".
VLLM_KV_TOKENS_PRINTED = ((known_version("0.0.0"), "blocks-over-groups"),
                          (known_version("0.21.0"), "concurrency-x-max-len"))

# Gated DeltaNet hybrids (Qwen3-Next, Qwen3.5/3.6; core/memory/gated_delta.py): how a release sizes the linear
# layers' state and the attention block that must hold it. Read per tag:
#   0.10.2  models/registry.py adds Qwen3NextForCausalLM (absent @v0.10.1.1); models/config.py
#           HybridAttentionMambaModelConfig: block = 16 x cdiv(state page, 16 x attention bytes of one token),
#           raised only (a larger --block-size stays), state page padded to the attention page;
#           layers/mamba/mamba_utils.py gated_delta_net_state_dtype: both states at --mamba-cache-dtype (auto: the
#           model dtype); kv_cache_interface.py MambaSpec.max_memory_usage_bytes: one page per sequence
#           (@v0.11.2 cdiv(max_model_len, mamba block = max_model_len), the same page; @v0.15.1 mamba_cache_mode
#           "none": 1 + speculative blocks); engine/arg_utils.py and config/model.py@v0.11.2 ..@v0.25.0
#           is_prefix_caching_supported: no prefix caching for a hybrid model by default, so mode "none".
#   0.11.2  models/config.py: head size 256 on compute capability 10.x with FlashInfer (the default) aligns to 32.
#   0.17.0  mamba_utils.py: the temporal state takes --mamba-ssm-cache-dtype; models/config.py
#           Qwen3_5ForConditionalGenerationConfig sets it from the config's mamba_ssm_dtype when auto.
#   0.20.0  platforms/interface.py _align_hybrid_block_size: alignment = max(the attention backend's smallest
#           kernel block, 16 for FlashAttention, FlashInfer and Triton; cache_config.block_size).
#   0.26.0  platforms/interface.py@v0.26.0 and @v0.32.0 _align_hybrid_block_size: the same block for a model with
#           one attention backend (0.32.0 takes the lcm over backends' smallest kernel blocks; one here).
#   0.33.0  platforms/interface.py@v0.33.0 and @v0.34.0: the same block in mamba cache mode "none"; in "align"
#           the alignment also takes the lcm with the GDN prefill checkpoint grid (64 where FlashInfer runs the
#           prefill: VLLM_GATED_DELTA_PREFIX_ROWS 0.33.0). v1/kv_cache_interface.py@v0.34.0 MambaSpec rounds each
#           state up to state_alignment bytes, 16 only with --use-replayssm (mamba_utils.mamba_state_alignment),
#           else 1: the same page. State shape and dtype (mamba_utils.py) and the grouping (v1/core/
#           kv_cache_planning.py@v0.33.0 _get_kv_cache_groups_uniform_page_size, moved from kv_cache_utils.py) read
#           the same as @v0.32.0.
GATED_DELTA_KERNEL_ALIGNMENT = 16
# Qwen3.5/3.6 (Qwen3_5ForConditionalGeneration, Qwen3_5MoeForConditionalGeneration and their text-only classes)
# arrive in models/registry.py@v0.17.0 (absent @v0.16.0)
VLLM_QWEN3_5_SINCE = "0.17.0"


class VllmGatedDeltaRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    since: str
    modelled: bool
    source: str
    blackwell_head256: bool = False
    ssm_dtype_flag: bool = False
    alignment_from_block: bool = False
    note: str = ""


VLLM_GATED_DELTA_ROWS = (
    VllmGatedDeltaRow("0.0.0", False, "vllm/model_executor/models/registry.py@v0.10.2",
                      note="vLLM before 0.10.2 has no Gated DeltaNet model (Qwen3NextForCausalLM is added in "
                           "models/registry.py@v0.10.2): it does not serve this model"),
    VllmGatedDeltaRow("0.10.2", True, "vllm/model_executor/models/config.py@v0.10.2 HybridAttentionMambaModelConfig;"
                      " layers/mamba/mamba_utils.py@v0.10.2; v1/kv_cache_interface.py@v0.10.2 MambaSpec"),
    VllmGatedDeltaRow("0.11.2", True, "vllm/model_executor/models/config.py@v0.11.2 (head 256 on SM100: 32)",
                      blackwell_head256=True),
    VllmGatedDeltaRow("0.17.0", True, "vllm/model_executor/layers/mamba/mamba_utils.py@v0.17.0 "
                      "gated_delta_net_state_dtype; models/config.py@v0.17.0 Qwen3_5ForConditionalGenerationConfig",
                      blackwell_head256=True, ssm_dtype_flag=True),
    VllmGatedDeltaRow("0.20.0", True, "vllm/platforms/interface.py@v0.20.0 _align_hybrid_block_size",
                      ssm_dtype_flag=True, alignment_from_block=True),
    VllmGatedDeltaRow("0.26.0", True, "vllm/platforms/interface.py@v0.26.0 and @v0.32.0 _align_hybrid_block_size",
                      ssm_dtype_flag=True, alignment_from_block=True),
    VllmGatedDeltaRow("0.33.0", True, "vllm/platforms/interface.py@v0.33.0 and @v0.34.0 _align_hybrid_block_size; "
                      "v1/kv_cache_interface.py@v0.34.0 MambaSpec (state_alignment 1 without --use-replayssm)",
                      ssm_dtype_flag=True, alignment_from_block=True),
)
_GATED_DELTA_KEYS = keyed_by_release(VLLM_GATED_DELTA_ROWS)


def vllm_gated_delta_row(version: str | None) -> VllmGatedDeltaRow:
    return row_for("vllm", _GATED_DELTA_KEYS, version)


# Mamba-2 hybrids (Nemotron-H, Granite-4.0-H, Bamba; core/memory/mamba2.py): the state each Mamba-2 layer keeps
# per sequence and the dtype of its temporal part. Read in the wheels (@v0.10.2, 0.11.0, 0.12.0, 0.13.0, 0.14.0,
# 0.16.0, 0.18.0, 0.19.0, 0.20.0, 0.26.0, 0.34.0):
#   layers/mamba/mamba_utils.py mamba2_state_shape (the same at every tag; num_spec rows from 0.16): conv state
#           (kernel - 1) x (intermediate + 2 x groups x state) / TP, with the groups raised to TP where TP does not
#           divide them (extra_groups_for_head_shards); temporal state heads / TP x head dim x state. The
#           intermediate width is mamba_num_heads x mamba_head_dim (nemotron_h.py) or mamba_expand x hidden
#           (granitemoehybrid.py, bamba.py). _mamba_state_dtype: conv at --mamba-cache-dtype (auto: the model's
#           dtype), temporal at --mamba-ssm-cache-dtype, auto meaning the conv dtype.
#   models/config.py HybridAttentionMambaModelConfig (@v0.10.2 .. @v0.19.0) and platforms/interface.py
#           _align_hybrid_block_size (@v0.20.0 ..): the attention block raised to hold one state page, as for Gated
#           DeltaNet (VLLM_GATED_DELTA_ROWS gives the alignment of each release).
#   0.13.0  models/config.py NemotronHForCausalLMConfig: an auto --mamba-ssm-cache-dtype becomes the config's
#           mamba_ssm_cache_dtype, else float16 (@v0.13.0 .. @v0.19.0); absent @v0.12.0.
#   0.20.0  the same with float32 (DEFAULT_MAMBA_SSM_CACHE_DTYPE, @v0.20.0 .. @v0.34.0).
#   Prefix caching: models/config.py@v0.10.2 and @v0.11.0 MambaModelConfig turns it off for every hybrid (one state
#           page a sequence); nemotron_h.py and granitemoehybrid.py@v0.12.0 .. @v0.34.0 are
#           SupportsMambaPrefixCaching, so an --enable-prefix-caching (the default from 0.26.0,
#           VLLM_GATED_DELTA_PREFIX_ROWS) runs mamba cache mode "all" or "align" (VLLM_MAMBA_CACHE_MODE_ROWS).
VLLM_NEMOTRON_H_ARCHITECTURES = ("NemotronHForCausalLM", "NemotronHPuzzleForCausalLM")


class VllmMamba2Row(TableRow):  # a table row: tuple-built, no generated methods to compile
    since: str
    modelled: bool
    source: str
    nemotron_ssm_default: str | None = None  # NemotronHForCausalLMConfig's dtype for an auto temporal state
    prefix_turned_off: bool = False  # the engine turns --enable-prefix-caching off: one state page a sequence
    note: str = ""


VLLM_MAMBA2_ROWS = (
    VllmMamba2Row("0.0.0", False, "vllm/model_executor/models/config.py@v0.10.2 HybridAttentionMambaModelConfig",
                  note="vLLM before 0.10.2 lays out a Mamba-2 hybrid's state by code gsg has not read (the first "
                       "read is models/config.py@v0.10.2 HybridAttentionMambaModelConfig)"),
    VllmMamba2Row("0.10.2", True, "vllm/model_executor/layers/mamba/mamba_utils.py@v0.10.2 and @v0.11.0 "
                  "mamba2_state_shape; models/config.py@v0.10.2 MambaModelConfig (prefix caching off)",
                  prefix_turned_off=True),
    VllmMamba2Row("0.11.1", True, "vllm/model_executor/layers/mamba/mamba_utils.py@v0.12.0 mamba2_state_shape; "
                  "models/nemotron_h.py@v0.12.0 SupportsMambaPrefixCaching"),
    VllmMamba2Row("0.13.0", True, "vllm/model_executor/models/config.py@v0.13.0 .. @v0.19.0 "
                  "NemotronHForCausalLMConfig (auto: the config's mamba_ssm_cache_dtype, else float16)",
                  nemotron_ssm_default="float16"),
    VllmMamba2Row("0.20.0", True, "vllm/model_executor/models/config.py@v0.20.0 .. @v0.34.0 "
                  "NemotronHForCausalLMConfig (DEFAULT_MAMBA_SSM_CACHE_DTYPE float32)",
                  nemotron_ssm_default="float32"),
)
_MAMBA2_KEYS = keyed_by_release(VLLM_MAMBA2_ROWS)


def vllm_mamba2_row(version: str | None) -> VllmMamba2Row:
    return row_for("vllm", _MAMBA2_KEYS, version)


# Mamba cache modes with prefix caching (a Mamba-2 hybrid's layout; a Gated DeltaNet hybrid's explicit flag): which
# mode a release picks and what each takes. Read in the wheels (0.12.0 .. 0.15.1, 0.20.0, 0.26.0 .. 0.34.0):
#   0.12.0  models/config.py@v0.12.0 (and @v0.13.0, @v0.14.1) MambaModelConfig: prefix caching stays on for a
#           SupportsMambaPrefixCaching model (nemotron_h.py, granitemoehybrid.py), and HybridAttentionMambaModelConfig
#           then sizes the block as in mode "all": unit = lcm(--mamba-block-size or the config's mamba_chunk_size /
#           chunk_size, the kernel alignment), block = unit x cdiv(cdiv(state page, attention bytes of a token),
#           unit), mamba_block_size = that block (a larger --block-size keeps its own, which gsg has not read);
#           v1/kv_cache_interface.py MambaSpec.max_memory_usage_bytes: cdiv(max_model_len, block) pages, and
#           v1/core/single_type_kv_cache_manager.py MambaManager takes a page for every block of tokens, as attention.
#           No --mamba-cache-mode (engine/arg_utils.py@v0.12.0 .. @v0.14.1).
#   0.15.0  engine/arg_utils.py@v0.15.0 adds --mamba-cache-mode (config/cache.py MambaCacheMode all|align|none,
#           default none). models/config.py@v0.15.1 MambaModelConfig: without prefix caching any mode becomes "none";
#           with it "none" becomes "all" for SupportsMambaPrefixCaching models and "align" for the rest, and "all" on
#           a model without it (Qwen3-Next, Qwen3.5) falls back to "align". "align": 2 pages (MambaSpec), the block as
#           without prefix caching and mamba_block_size = the block (an explicit --mamba-block-size is replaced).
#           platforms/interface.py@v0.20.0 .. @v0.31.0 _align_hybrid_block_size: the same "all" block, its alignment
#           max(the backend's smallest kernel block, --block-size) (VLLM_GATED_DELTA_ROWS).
#   0.28.0  models/config.py@v0.28.0 .. @v0.31.0: "none" with prefix caching becomes "align" for every hybrid; an
#           explicit "all" still runs "all" on a Mamba-2 hybrid (@v0.27.0: "all" by default).
#   0.32.0  config/cache.py@v0.32.0 MambaCacheMode align|none (argparse refuses "all"); mamba_mixer2.py@v0.32.0
#           get_kv_cache_spec sets num_prefill_checkpoint_blocks=1: "align" takes 3 pages (MambaSpec), with no
#           alignment of its own (get_prefill_checkpoint_alignment None @v0.33.0, @v0.34.0). @v0.28.0 .. @v0.31.0
#           mamba_mixer2.py sets none: 2 pages.
#   0.33.0  engine/arg_utils.py@v0.33.0 and @v0.34.0: --mamba-cache-mode is deprecated, "It has no effect" (the mode
#           follows --enable-prefix-caching, as an explicit align|none already did in 0.32.0).
#   Everywhere: config/vllm.py validate_mamba_block_size (@v0.12.0 .. @v0.34.0) exits on a --mamba-block-size other
#           than max_model_len without prefix caching ("--mamba-block-size can only be set with
#           --enable-prefix-caching").
class VllmMambaCacheModeRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    since: str
    read: bool  # a Mamba-2 hybrid's layout with prefix caching is read
    source: str
    flag: bool = False  # --mamba-cache-mode exists
    mamba2_default: str = "all"  # the mode of a Mamba-2 hybrid with prefix caching and no explicit one
    all_mode: bool = True  # "all" is one of the choices
    mamba2_align_pages: int = 2  # state pages of a Mamba-2 layer per sequence in "align"
    note: str = ""


VLLM_MAMBA_CACHE_MODE_SINCE = "0.15.0"
VLLM_MAMBA_CACHE_MODE_ROWS = (
    VllmMambaCacheModeRow("0.0.0", False, "vllm/model_executor/models/config.py@v0.12.0 MambaModelConfig",
                          note="prefix caching of a Mamba-2 hybrid before vLLM 0.12.0 (0.11.1 .. 0.11.x keep it for "
                               "SupportsMambaPrefixCaching models) lays out state pages by code gsg has not read: "
                               "--no-enable-prefix-caching is sized"),
    VllmMambaCacheModeRow("0.12.0", True, "vllm/model_executor/models/config.py@v0.12.0 .. @v0.14.1 "
                          "HybridAttentionMambaModelConfig (all: lcm(chunk, alignment) block); "
                          "v1/kv_cache_interface.py@v0.12.0 MambaSpec (cdiv(max_model_len, block) pages)"),
    VllmMambaCacheModeRow("0.15.0", True, "vllm/model_executor/models/config.py@v0.15.1 MambaModelConfig; "
                          "v1/kv_cache_interface.py@v0.15.1 .. @v0.27.0 MambaSpec (all: cdiv(max_model_len, block); "
                          "align: 2 pages); platforms/interface.py@v0.20.0 .. @v0.27.0 _align_hybrid_block_size",
                          flag=True),
    VllmMambaCacheModeRow("0.28.0", True, "vllm/model_executor/models/config.py@v0.28.0 .. @v0.31.0 "
                          "MambaModelConfig (align by default); v1/kv_cache_interface.py@v0.28.0 .. @v0.31.0 MambaSpec",
                          flag=True, mamba2_default="align"),
    VllmMambaCacheModeRow("0.32.0", True, "vllm/config/cache.py@v0.32.0 MambaCacheMode (no all); "
                          "model_executor/layers/mamba/mamba_mixer2.py@v0.32.0 (align: 3 pages)",
                          flag=True, mamba2_default="align", all_mode=False, mamba2_align_pages=3),
    VllmMambaCacheModeRow("0.33.0", True, "vllm/engine/arg_utils.py@v0.33.0 and @v0.34.0 (--mamba-cache-mode has no "
                          "effect); mamba_mixer2.py@v0.34.0 (align: 3 pages)",
                          flag=True, mamba2_default="align", all_mode=False, mamba2_align_pages=3),
)
_MAMBA_CACHE_MODE_KEYS = keyed_by_release(VLLM_MAMBA_CACHE_MODE_ROWS)


def vllm_mamba_cache_mode_row(version: str | None) -> VllmMambaCacheModeRow:
    return row_for("vllm", _MAMBA_CACHE_MODE_KEYS, version)


# Prefix caching of a Gated DeltaNet hybrid (core/memory/gated_delta.py): whether the release turns it on by
# default and how many state pages a sequence's linear group then takes. Read per tag:
#   0.15.0  models/config.py MambaModelConfig.verify_and_update_config: --enable-prefix-caching sets mamba cache
#           mode "all" only for models with SupportsMambaPrefixCaching, which Qwen3NextForCausalLM and the
#           Qwen3_5 classes lack (models/qwen3_next.py, qwen3_5.py @v0.15.1 .. @v0.34.0), so "align";
#           mamba_block_size = the attention block (the block size is computed as with no prefix caching);
#           v1/kv_cache_interface.py MambaSpec.max_memory_usage_bytes: "align" takes 2 + speculative pages
#           (@v0.15.0 .. @v0.32.0; the num_prefill_checkpoint_blocks of 0.29.0 is set by KDA layers, and by
#           Mamba2 layers from 0.32.0, mamba_mixer2.py, not by GDN ones up to 0.32.0). @v0.15.0 reads as @v0.15.1.
#   0.0.0   (the model arrives in 0.10.2) models/config.py@v0.10.2 and @v0.11.0 MambaModelConfig sets
#           enable_prefix_caching = False for every hybrid model; @v0.11.2 .. @v0.14.1 it keeps it only for models
#           with SupportsMambaPrefixCaching, which Qwen3NextForCausalLM lacks (models/qwen3_next.py), and logs
#           "Hybrid or mamba-based model detected without support for prefix caching: disabling.": an
#           --enable-prefix-caching is turned off, one state page per sequence (mamba_block_size = max_model_len).
#   0.26.0  config/model.py is_prefix_caching_supported: True for generative hybrid models (False @v0.25.1), and
#           engine/arg_utils.py takes it as --enable-prefix-caching's default: "align" unless turned off.
#   0.33.0  layers/mamba/gdn/qwen_gdn_linear_attn.py@v0.33.0 and @v0.34.0: in "align" mode, where FlashInfer runs
#           the GDN prefill (_resolve_gdn_prefill_backend: compute capability 9.0; 10.x and 12.x with key head dim
#           128 and CUDA runtime 13+), the layer's MambaSpec takes num_prefill_checkpoint_blocks=1 (3 pages) and
#           the block aligns to lcm(alignment, 64) (FLASHINFER_GDN_CHECKPOINT_ALIGNMENT, v1/attention/backends/
#           gdn_attn.py), and a float32 checkpoint workspace of cdiv(max_num_batched_tokens, grid) states comes
#           from the workspace manager. Elsewhere (Triton: compute capability 8.x, or a key head dim other than
#           128 on 10.x/12.x) the layout is 0.32.0's, 2 pages. Mode "none" is unchanged (MambaSpec: 1 page).
#           flashinfer_prefill says that gsg refuses "align" where FlashInfer may run: on 9.0 the workspace is not
#           sized, on 10.x/12.x the CUDA runtime is not in a spec, and on an unknown GPU neither is the backend.
class VllmGatedDeltaPrefixRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    since: str
    default_on: bool  # prefix caching without --[no-]enable-prefix-caching
    align_pages: int | None  # state pages per sequence and linear group with prefix caching; None: not read
    source: str
    note: str = ""
    flashinfer_prefill: bool = False  # "align" where FlashInfer runs the GDN prefill: checkpoint layout, refused
    turned_off: bool = False  # the engine turns --enable-prefix-caching off for these models: mode "none"


VLLM_GATED_DELTA_PREFIX_ROWS = (
    VllmGatedDeltaPrefixRow("0.0.0", False, None, "vllm/model_executor/models/config.py@v0.10.2 and @v0.11.0 "
                            "MambaModelConfig (off for every hybrid); @v0.11.2 .. @v0.14.1 (off without "
                            "SupportsMambaPrefixCaching, which models/qwen3_next.py lacks)", turned_off=True),
    VllmGatedDeltaPrefixRow("0.15.0", False, 2, "vllm/v1/kv_cache_interface.py@v0.15.0 and @v0.15.1 MambaSpec "
                            "(align: 2 pages); model_executor/models/config.py@v0.15.0 and @v0.15.1 MambaModelConfig"),
    VllmGatedDeltaPrefixRow("0.26.0", True, 2, "vllm/config/model.py@v0.26.0 is_prefix_caching_supported; "
                            "v1/kv_cache_interface.py@v0.26.0 MambaSpec (align: 2 pages)"),
    VllmGatedDeltaPrefixRow("0.33.0", True, 2, "vllm/model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py@v0.33.0"
                            " and @v0.34.0 _resolve_gdn_prefill_backend (Triton: align 2 pages, as 0.32.0)",
                            flashinfer_prefill=True),
)
_GATED_DELTA_PREFIX_KEYS = keyed_by_release(VLLM_GATED_DELTA_PREFIX_ROWS)


def vllm_gated_delta_prefix_row(version: str | None) -> VllmGatedDeltaPrefixRow:
    return row_for("vllm", _GATED_DELTA_PREFIX_KEYS, version)


# Mamba cache mode "align" (prefix caching on a Gated DeltaNet hybrid) refuses to start when the attention block,
# raised to hold a state page, exceeds max_num_batched_tokens: "AssertionError: In Mamba cache align mode,
# block_size (2096) must be <= max_num_batched_tokens (2048)." Read per tag:
#   0.15.1  config/vllm.py@v0.15.1 and @v0.16.0 VllmConfig.__post_init__: only long_prefill_token_threshold is
#           checked against the block in "align": no refusal.
#   0.17.0  config/vllm.py@v0.17.0 and @v0.17.1 __post_init__ asserts block_size <= max_num_batched_tokens, after
#           try_verify_and_update_config raised the block (HybridAttentionMambaModelConfig).
#   0.18.0  config/vllm.py@v0.18.0 .. @v0.26.0 validate_block_size, the same assert, called by v1/engine/core.py
#           once update_block_size_for_backend set the block (aligned from 0.20.0) and the KV cache groups took it:
#           the raised block.
#   0.27.0  config/vllm.py@v0.27.0 .. @v0.34.0 validate_block_size keeps only the chunked-mm-input assert.
class VllmAlignBudgetRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    since: str
    checked: bool  # "align" refuses a block above max_num_batched_tokens
    source: str


VLLM_GATED_DELTA_ALIGN_BUDGET_ROWS = (
    VllmAlignBudgetRow("0.0.0", False, "vllm/config/vllm.py@v0.15.1 and @v0.16.0 VllmConfig.__post_init__"),
    VllmAlignBudgetRow("0.17.0", True, "vllm/config/vllm.py@v0.17.0 VllmConfig.__post_init__"),
    VllmAlignBudgetRow("0.18.0", True, "vllm/config/vllm.py@v0.18.0 and @v0.26.0 VllmConfig.validate_block_size"),
    VllmAlignBudgetRow("0.27.0", False, "vllm/config/vllm.py@v0.27.0 VllmConfig.validate_block_size"),
)
_ALIGN_BUDGET_KEYS = keyed_by_release(VLLM_GATED_DELTA_ALIGN_BUDGET_ROWS)


def vllm_align_budget_row(version: str | None) -> VllmAlignBudgetRow:
    return row_for("vllm", _ALIGN_BUDGET_KEYS, version)


# A hybrid with state layers (any MambaSpec group: Gated DeltaNet, Mamba-2) replays FULL decode CUDA graphs with
# one state block per decode sequence, so the KV pool's block count (kv_cache_config.num_blocks: every group's page
# unified to the attention page, engines/vllm.hybrid_groups) must hold max_num_seqs. Read from the wheels:
#   0.0.0   no check before 0.18 (vllm#34094's out-of-bounds capture is not modelled).
#   0.18.0  v1/worker/gpu_model_runner.py@v0.18.0 .. @v0.19.1 _check_and_update_cudagraph_mode calls
#           config/compilation.py adjust_cudagraph_sizes_for_mamba_cache under any FULL mode: the capture sizes are
#           cut to num_blocks and the engine starts (with fewer graphs).
#   0.20.0  config/compilation.py@v0.20.0 .. @v0.34.0 resolve_cudagraph_mode_and_sizes (vllm PR #38270), called by
#           both model runners once the real KV config exists (not for the profiling one): with
#           cudagraph_mode.has_full_cudagraphs() (FULL, FULL_DECODE_ONLY, FULL_AND_PIECEWISE) and max_num_reqs >
#           kv_cache_config.num_blocks it raises "ValueError: max_num_seqs (N) exceeds available Mamba cache blocks
#           (M)", naming the fix: max_num_seqs at most M, or a larger gpu_memory_utilization. --enforce-eager or a
#           mode without FULL skips it. The text is the same at every tag to 0.34.0.
class VllmStateBlocksRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    since: str
    refused: bool  # max_num_seqs above the pool's blocks under FULL graphs refuses to start
    source: str


VLLM_STATE_BLOCKS_ROWS = (
    VllmStateBlocksRow("0.0.0", False, "vllm/v1/worker/gpu_model_runner.py@v0.17.0: no state-block check"),
    VllmStateBlocksRow("0.18.0", False, "vllm/config/compilation.py@v0.18.0 .. @v0.19.1 "
                       "adjust_cudagraph_sizes_for_mamba_cache (capture sizes capped to num_blocks)"),
    VllmStateBlocksRow("0.20.0", True, "vllm/config/compilation.py@v0.20.0 .. @v0.34.0 "
                       "resolve_cudagraph_mode_and_sizes (max_num_reqs > kv_cache_config.num_blocks)"),
)
_STATE_BLOCKS_KEYS = keyed_by_release(VLLM_STATE_BLOCKS_ROWS)
FULL_GRAPH_MODES = ("FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")  # CUDAGraphMode.has_full_cudagraphs()


def vllm_state_blocks_row(version: str | None) -> VllmStateBlocksRow:
    return row_for("vllm", _STATE_BLOCKS_KEYS, version)


# SGLang serves Gated DeltaNet hybrids with two pools (engines/sglang.gated_delta_pools): a mamba pool of
# per-request slots (conv state at bfloat16, temporal state at --mamba-ssm-dtype, over every linear layer) beside a
# KV pool whose cell counts only the full-attention layers. profile_max_num_token takes the pool's bytes off the
# static part before dividing by the cell. How the slot count is chosen, read in each wheel
# (python/sglang/srt/model_executor/model_runner.py, from 0.5.7 model_runner_kv_cache_mixin.py,
# handle_max_mamba_cache; server_args.py; configs/qwen3_next.py, mamba_utils.py):
#   "fixed"            0.5.2: radix cache forced off for Qwen3-Next; slots = --max-mamba-cache-size, else
#                      --max-running-requests, else 512; --mamba-ssm-dtype float32 (also 0.5.3).
#   "ratio"            0.5.4: radix cache left on; with it on the pool takes ratio / (1 + ratio) of the rest
#                      (--mamba-full-memory-ratio 0.9) whatever --max-mamba-cache-size says; with
#                      --disable-radix-cache "fixed" (also 0.5.5, 0.5.6: handle_max_mamba_cache identical).
#   "explicit-first"   0.5.7: --max-mamba-cache-size wins with the radix cache on too (0.5.8 alike: only the
#                      speculative reserve moved).
#   "running-or-ratio" 0.5.9: the flag, else --max-running-requests with --disable-radix-cache, else the ratio
#                      (no 512); --mamba-ssm-dtype unset reads the config's mamba_ssm_dtype, else float32; Qwen3.5
#                      classes arrive (also 0.5.10-0.5.15 without speculative decoding: 0.5.12 divides the rest in
#                      pool_configurator.py, page-rounded; 0.5.13 raises where no slot fits, which gsg already
#                      calls no KV memory; 0.5.14 names a rest <= 0).
#   not modelled       0.5.16+: the pools are sized in mem_cache/kv_cache_configurator.py and unified_memory_pool.py,
#                      which gsg has not read.
# With the radix cache on, max_running_requests is capped to slots // 3 (MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO).
# The pool allocates slots + 1 rows (MambaPool: size + 1, slot 0 the padding one).
SGLANG_MAMBA_DEFAULT_SLOTS = 512
SGLANG_MAMBA_FULL_MEMORY_RATIO = 0.9
SGLANG_MAMBA_RUNNING_RATIO = 3
# 0.5.16+ (kv_cache_configurator.py _calculate_mamba_ratio): slots one running request tracks beyond the base 3 under
# the extra_buffer strategy, by whether the overlap schedule is on and the lazy variant asked for
SGLANG_MAMBA_TRACKING_SLOTS = {"overlap": 2, "overlap-lazy": 1, "no-overlap": 1}


class SglangGatedDeltaRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    since: str
    modelled: bool
    sizing: str  # "fixed" | "ratio" | "explicit-first" | "running-or-ratio"
    source: str
    ssm_dtype_from_config: bool = False
    qwen3_5: bool = False  # Qwen3_5(Moe)ForConditionalGeneration served
    note: str = ""
    # 0.5.16+: --mamba-radix-cache-strategy (auto resolves to extra_buffer with the overlap schedule) sets the slots
    # a running request takes, and max_running_requests is also capped at half the token capacity
    strategy: bool = False
    padded: bool = False  # 0.5.17+: the pool's padding row comes off the ratio budget and off the KV rest


SGLANG_GATED_DELTA_ROWS = (
    SglangGatedDeltaRow("0.0.0", False, "", "python/sglang/srt/configs/qwen3_next.py@v0.5.2",
                        note="gsg read no SGLang release before 0.5.2 for Gated DeltaNet models"),
    SglangGatedDeltaRow("0.5.2", True, "fixed", "python/sglang/srt/model_executor/model_runner.py@v0.5.2 "
                        "profile_max_num_token; configs/qwen3_next.py@v0.5.2 mamba_cache_per_req"),
    SglangGatedDeltaRow("0.5.4", True, "ratio", "python/sglang/srt/model_executor/model_runner.py@v0.5.4 "
                        "handle_max_mamba_cache; configs/mamba_utils.py@v0.5.4"),
    SglangGatedDeltaRow("0.5.7", True, "explicit-first", "python/sglang/srt/model_executor/"
                        "model_runner_kv_cache_mixin.py@v0.5.7 handle_max_mamba_cache"),
    SglangGatedDeltaRow("0.5.9", True, "running-or-ratio", "python/sglang/srt/model_executor/"
                        "model_runner_kv_cache_mixin.py@v0.5.9 handle_max_mamba_cache; configs/mamba_utils.py@v0.5.9 "
                        "mamba2_state_dtype", ssm_dtype_from_config=True, qwen3_5=True),
    SglangGatedDeltaRow("0.5.12", True, "running-or-ratio", "python/sglang/srt/model_executor/"
                        "model_runner_kv_cache_mixin.py@v0.5.12 _profile_available_bytes, handle_max_mamba_cache "
                        "(alike @v0.5.15 without speculative decoding); pool_configurator.py@v0.5.12",
                        ssm_dtype_from_config=True, qwen3_5=True),
    SglangGatedDeltaRow("0.5.16", True, "running-or-ratio", "python/sglang/srt/mem_cache/kv_cache_configurator.py"
                        "@v0.5.16 _profile_available_bytes, _handle_max_mamba_cache, _calculate_mamba_ratio, "
                        "resolve_max_num_reqs; arg_groups/overrides.py@v0.5.16 _mamba_radix_cache_resolution",
                        ssm_dtype_from_config=True, qwen3_5=True, strategy=True),
    SglangGatedDeltaRow("0.5.17", True, "padded-ratio", "python/sglang/srt/mem_cache/kv_cache_configurator.py"
                        "@v0.5.17 _handle_max_mamba_cache ((budget - per_req) // per_req slots, (slots + 1) x "
                        "per_req taken off)", ssm_dtype_from_config=True, qwen3_5=True, strategy=True, padded=True),
    SglangGatedDeltaRow("0.5.18", True, "padded-ratio", "python/sglang/srt/mem_cache/kv_cache_configurator.py"
                        "@v0.5.18 (alike @v0.5.19, @v0.5.20 without speculative decoding; the multimodal reserve "
                        "taken before the mamba budget is SGLANG_MM_RESERVE_ROWS)",
                        ssm_dtype_from_config=True, qwen3_5=True, strategy=True, padded=True),
    SglangGatedDeltaRow("0.5.21", False, "", "python/sglang/srt/mem_cache/kv_cache_configurator.py@v0.5.23",
                        note="SGLang 0.5.21+ adds per-slot mamba terms gsg has not read (kv_cache_configurator.py@"
                             "v0.5.23: fused_entry_bytes, extra_mamba_cache_bytes_per_req); gsg read up to 0.5.20"),
)
_SGLANG_GATED_DELTA_KEYS = keyed_by_release(SGLANG_GATED_DELTA_ROWS)


def sglang_gated_delta_row(version: str | None) -> SglangGatedDeltaRow:
    return row_for("sglang", _SGLANG_GATED_DELTA_KEYS, version)


# MXFP4 MoE weights as vLLM allocates them (model_executor/layers/quantization/mxfp4.py, Mxfp4MoEMethod
# create_weights): the expert tensors are created with the per-partition intermediate size and the hidden size
# rounded up for the kernel, then loaded into the zero-padded buffers. Per backend, (intermediate multiple,
# hidden multiple or None):
#   Marlin ("The moe marlin kernel requires that for each linear n % 256 == 0 and k % 128 == 0"): 128, 256
#   FlashInfer TRT-LLM on SM100 (B200/GB200, the default there when flashinfer is present): 256, 256
#   Triton (triton_kernels, the OpenAI kernel): 64, hidden unchanged
# get_mxfp4_backend picks Marlin when the GPU's compute capability is below 9.0, when triton_kernels is
# missing or when torch < 2.8.0; otherwise Triton, SM100 FlashInfer first. gpt-oss-120b (hidden 2880,
# intermediate 2880, 128 experts x 36 layers) under Marlin: 65.897 GiB computed vs "Model loading took
# 65.9651 GiB" on an H100 with vLLM 0.10.1.x (vllm#23278, which also prints the Marlin fallback warning).
MXFP4_PADDING = {"marlin": (128, 256), "flashinfer": (256, 256), "triton": (64, None)}


class VllmFp8MarlinRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """Where vLLM runs an Fp8Config checkpoint with weight_block_size through Marlin (weight-only W8A16) from
    release `since`: the dense linear layers on a CUDA GPU of compute capability below `linear_below`, the fused-MoE
    experts below `moe_below` (None: never), from `marlin_min` up (the kernel's own minimum). FORCE_ENV set to 1 or
    true, while `env_read`, forces the experts on any CUDA GPU and the linear layers below `forced_linear_below`
    (None: any). ROCm never takes it. Marlin then holds each scale repeated over the block's rows: one per block_k
    inputs and output, in the model dtype, in place of the checkpoint's fp32 scale per block."""

    since: str
    linear_below: tuple[int, int] | None
    moe_below: tuple[int, int] | None
    marlin_min: tuple[int, int]
    env_read: bool
    forced_linear_below: tuple[int, int] | None
    source: str


# Read in the wheels on PyPI (pip download --no-deps vllm==X): v0.8.5, v0.9.0, v0.14.0, v0.17.0, v0.18.0, v0.19.0,
# v0.19.1, v0.20.0, v0.24.0, v0.28.0, v0.29.0, v0.30.0, v0.31.0, v0.34.0 (v0.10.0 by an earlier reading); the
# CUTLASS block minimum (9.0) in csrc/quantization/cutlass_w8a8/scaled_mm_entry.cu
# (cutlass_scaled_mm_supports_block_fp8). The scales: utils/marlin_utils_fp8.py
# prepare_fp8_layer_for_marlin / prepare_moe_fp8_layer_for_marlin at every tag from v0.9.0 (block-wise -> group-wise:
# scales.repeat_interleave(block_n) to (size_k / block_k, size_n) in layer.orig_dtype, replacing weight_scale_inv;
# the experts' the same per expert). Its workspace (multi_processor_count int32 per layer, x4 for MoE) is a few
# hundred bytes per layer: not counted. Compressed-tensors FP8 (W8A16Fp8: channel and tensor strategies only) and
# per-tensor/per-channel Fp8Config scales (one per output row) are not in this table: their growth is negligible.
_VQ_FP8 = "vllm/model_executor/layers/quantization"
VLLM_FP8_MARLIN_ENV = "VLLM_TEST_FORCE_FP8_MARLIN"
VLLM_FP8_MARLIN = (
    VllmFp8MarlinRow("0.0.0", None, None, (8, 0), True, None,
                     f"{_VQ_FP8}/fp8.py@v0.8.5 (Fp8LinearMethod: use_marlin = False for block_quant; Fp8MoEMethod "
                     "has no Marlin path)"),
    VllmFp8MarlinRow("0.9.0", (8, 9), (8, 9), (8, 0), True, None,
                     f"{_VQ_FP8}/fp8.py@v0.9.0, @v0.10.0 (use_marlin = not has_device_capability(89) or "
                     "VLLM_TEST_FORCE_FP8_MARLIN, False on ROCm; Fp8MoEMethod the same); utils/marlin_utils_fp8.py"),
    VllmFp8MarlinRow("0.14.0", (8, 9), (8, 9), (7, 5), True, None,
                     f"{_VQ_FP8}/fp8.py@v0.14.0 .. @v0.18.0, fused_moe/oracle/fp8.py@v0.14.0 .. @v0.19.1 (Marlin "
                     "below 8.9 or forced); vllm/model_executor/kernels/linear/__init__.py@v0.19.0 .. @v0.19.1 "
                     "(Marlin first, refusing 8.9 and up unless forced); is_fp8_marlin_supported: capability 7.5"),
    VllmFp8MarlinRow("0.20.0", (8, 9), (8, 9), (7, 5), True, (9, 0),
                     "vllm/model_executor/kernels/linear/__init__.py@v0.20.0 .. @v0.28.0 (_POSSIBLE_FP8_BLOCK_KERNELS: "
                     "DeepGEMM and CUTLASS block from 9.0 before Marlin), kernels/linear/scaled_mm/marlin.py "
                     "(refuses 8.9 and up unless forced); fused_moe/oracle/fp8.py (forced: Marlin first; Triton's fp8 "
                     "from 8.9)"),
    VllmFp8MarlinRow("0.29.0", (9, 0), (8, 9), (7, 5), False, None,
                     "vllm/model_executor/kernels/linear/scaled_mm/marlin.py@v0.29.0 .. @v0.34.0 (no 8.9 refusal: "
                     "Ada's block layers take Marlin, CUTLASS block needs 9.0), vllm/envs.py (no "
                     "VLLM_TEST_FORCE_FP8_MARLIN); fused_moe/oracle/fp8.py (Triton, fp8 from 8.9, before Marlin)"),
)
_FP8_MARLIN_KEYS = keyed_by_release(VLLM_FP8_MARLIN)


def vllm_fp8_marlin_row(version: str | None) -> VllmFp8MarlinRow:
    return row_for("vllm", _FP8_MARLIN_KEYS, version)


class VllmImageRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """What the image GPUStack runs a vLLM release from holds beside the wheel, where vLLM's choice depends on it.

    flashinfer: FlashInfer imports (topk_topp_sampler.py@v0.9.0..@v0.11.0 then samples with it unless
    VLLM_USE_FLASHINFER_SAMPLER=0); triton_kernels: the package imports (mxfp4.py get_mxfp4_backend: Hopper takes
    Triton, else Marlin). Both for linux/amd64: the arm64 images skip the FlashInfer build ("Skipping FlashInfer")."""

    since: str
    flashinfer: bool
    triton_kernels: bool
    source: str


# The image a GPUStack deployment of each vLLM release runs (the product's users run these, so they are the
# default; a bare `pip install vllm` of 0.9-0.11 has neither package, which VLLM_USE_FLASHINFER_SAMPLER=0 in the
# deployment's env says for the sampler; no variable moves the MXFP4 choice before 0.12.0). Read per tag/commit:
#   0.9.2: gpustack/gpustack Dockerfile@v0.7.0 (VLLM 0.9.2 in pyproject.toml, FLASHINFER_VERSION=0.2.6.post1 built
#     and installed on amd64, triton==3.3.1, no triton_kernels); 0.8.5 before it (@v0.6.2) had no FlashInfer, and
#     the 0.8.x sampler sorts either way. 0.9.0 and 0.9.1 shipped in no GPUStack release: keyed with 0.9.2.
#   0.10.0-0.11.x: gpustack/runner pack/cuda/Dockerfile@da76887 (VLLM_VERSION=0.10.0, FlashInfer 0.2.8rc1),
#     @99e25ed (0.10.1.1, 0.2.11), @abc9b3e (0.10.2, 0.3.0), @9063cc7 (0.11.0, 0.3.1), @3064509 (0.11.2, 0.5.2):
#     `uv pip install vllm==` then the FlashInfer wheel built in the vllm-build-flashinfer stage; no
#     VLLM_USE_FLASHINFER_SAMPLER; triton_kernels only in pack/rocm (never pack/cuda). Logs of these images:
#     vllm#30172 (GPUStack, v0.11.0: "Using FlashInfer for top-p & top-k sampling."), gpustack#3656 (GPUStack 2.0,
#     0.11.0, T4: FlashInfer's sampler fails inside _dummy_sampler_run).
#   0.12.0: vLLM vendors triton_kernels as vllm.third_party.triton_kernels (vllm PR #28788, "[Build] Add OpenAI
#     triton_kernels"); runner @bd631b4 (0.12.0, FlashInfer 0.5.3). Before it a pip install lacked it: vllm PR
#     #27370 "users have to install triton_kernels manually", its requirements entry reverted (vllm#27573, #27672).
# vLLM's own image agrees for these releases: docker/Dockerfile@v0.10.2 and @v0.11.0 install FlashInfer v0.3.0 and
# v0.3.1 (FLASHINFER_GIT_REF) and no triton_kernels (only Dockerfile.rocm_base builds it); topk_topp_sampler.py and
# mxfp4.py read the same at both tags (FlashInfer >= 0.2.3, the variable not 0, the logprobs mode not "processed";
# triton_kernels and torch >= 2.8.0 for Triton).
VLLM_GPUSTACK_IMAGES = (
    VllmImageRow("0.0.0", False, False, "gpustack/gpustack Dockerfile@v0.6.2 (vLLM 0.8.5.post1, no FlashInfer)"),
    VllmImageRow("0.9.0", True, False, "gpustack/gpustack Dockerfile@v0.7.0 (vLLM 0.9.2, FlashInfer 0.2.6.post1 "
                                       "on amd64, no triton_kernels)"),
    VllmImageRow("0.10.0", True, False, "gpustack/runner pack/cuda/Dockerfile@da76887..@3064509 (vLLM 0.10.0-0.11.2 "
                                        "from pip, FlashInfer built on amd64, no triton_kernels)"),
    VllmImageRow("0.12.0", True, True, "vllm/third_party/triton_kernels@v0.12.0 (vllm PR #28788); gpustack/runner "
                                       "pack/cuda/Dockerfile@bd631b4 (vLLM 0.12.0, FlashInfer 0.5.3)"),
)
_IMAGE_KEYS = keyed_by_release(VLLM_GPUSTACK_IMAGES)


def vllm_gpustack_image(version: str | None) -> VllmImageRow:
    """What GPUStack's image of this vLLM release holds (VLLM_GPUSTACK_IMAGES)."""
    return row_for("vllm", _IMAGE_KEYS, version)


# So 0.10.x-0.11.x on Hopper run Marlin: vllm#23278 (0.10.1, torch 2.7.1, the Marlin warning, 65.9651 GiB) and
# V07 (vllm#27508, torch 2.8.0 in a conda env, i.e. 0.11.0 from pip); "[mxfp4.py] Using Triton backend" on an H100
# with 0.14.1 (vllm#33155). An image with triton_kernels installed by hand runs Triton earlier (64.38 GiB logged
# against Marlin's 65.97; gsg books the unpadded tensors, 5.1 GiB below Marlin: Triton's own swizzled layout pads
# further inside triton_kernels, not modelled). The first release whose GPUStack image takes Triton on Hopper:
VLLM_MXFP4_HOPPER_TRITON_SINCE = next(row.since for row in VLLM_GPUSTACK_IMAGES if row.triton_kernels)

# --- the dense forward's live tensors (vLLM) --------------------------------------------------------------
# The profile's forward peak of a dense decoder is the set of tensors alive at its largest step, read from the
# model file and the way the release runs it; per token and rank, in the activation dtype (H hidden, I/tp the
# MLP width, q = heads/tp x head_dim, kv = KV heads/tp x head_dim):
#   eager (V0 at every release; V1 under --enforce-eager, whose CompilationConfig stays at NO_COMPILATION:
#   config.py@v0.8.5 VllmConfig.__post_init__, config/vllm.py@v0.19.0): LlamaModel.forward's loop variable still
#   holds the previous layer's output while the next layer runs (input_layernorm's fused add is in place, so it
#   is the layer's normed input too), beside the residual and post_attention_layernorm's output (in place on
#   o_proj's). SiluAndMul: those 3 H + gate_up 2 I + its output I. down_proj: 3 H + I + its output H, plus gate_up's
#   2 I where MLP.forward keeps it named (`gate_up, _ = self.gate_up_proj(x)`) rather than rebinding x.
#   Attention: 3 H + qkv (q + 2 kv) + the attention output q (o_proj's output is one of the 3 H).
#   piecewise inductor (V1 compiled, custom ops "none", split at attention; use_inductor_graph_partition False
#   through 0.33: config/compilation.py@v0.19.0 and config/vllm.py@v0.33.0 optimisation levels): inductor frees
#   each buffer at its last use inside a piece, but the split graph holds a piece's inputs (the attention output
#   q and the incoming residual H) until it returns. SiluAndMul: q + 2 H (old and new residual) + 2 I + I; the
#   normed input dies after gate_up's GEMM. down_proj: q + 2 H + I + H. Attention: H + qkv + rotated q, k + q.
# Logits are not a forward tensor: the profile computes them in the sampler phase (sampler_phase_bytes). The
# caching allocator's peak counts blocks rounded to 512 B, not 2 MiB segments (allocated_bytes.all.peak,
# worker.py@v0.6.4), so no rounding term. FlashAttention's softmax_lse (heads x 4 B a token) and cuBLAS
# workspaces are left out (under 0.2 % of the MLP step). Checked: vllm#10517 (Llama-3.1-8B, 0.6.4, eager)
# T=20,000 gives 2.060 GiB vs the logged 2.07, T=29,000 2.987 vs 2.99 (peak_torch_memory minus 14.9888 weights).
# torch's cuBLAS workspace: the first GEMM on a stream takes getChosenWorkspaceSize() bytes from the caching
# allocator and keeps them (aten/src/ATen/cuda/CublasHandlePool.cpp parseChosenWorkspaceSize, setCublasWorkspace:
# ":4096:2:16:8" = 8,519,680 B by default, ":4096:8" = 32 MiB where the device's major is 9, and 10 and 12 as well
# in the later file that names Blackwell). The profile's forward is the first GEMM after the weights load, so the
# workspace is inside its torch peak and stays held through the sampler: with it vllm#10517's RTX 3090 runs come
# to 2.068 and 2.995 GiB (logged 2.07, 2.99), and mellea#416's H100 Qwen3-0.6B forward to 0.234 GiB (logged 0.23).
CUBLAS_WORKSPACE_DEFAULT = 4096 * 1024 * 2 + 16 * 1024 * 8
CUBLAS_WORKSPACE_LARGE = 4096 * 8 * 1024
CUBLAS_WORKSPACE_LARGE_MAJORS = (9, 10, 12)
CUBLAS_WORKSPACE_SOURCE = "aten/src/ATen/cuda/CublasHandlePool.cpp parseChosenWorkspaceSize (torch)"
VLLM_DENSE_MLP_FILE = {  # config architecture or model_type -> the MLP class vLLM runs (models/registry.py)
    "llamaforcausallm": "llama", "llama": "llama", "mistralforcausallm": "llama", "mistral": "llama",
    "qwen2forcausallm": "qwen2", "qwen2": "qwen2", "qwen3forcausallm": "qwen2", "qwen3": "qwen2"}
# Whether the MLP keeps gate_up's output through down_proj: llama.py names it up to 0.6.3 and rebinds x from
# 0.6.4 (llama.py@v0.5.4, @v0.6.0, @v0.6.2, @v0.6.3 vs @v0.6.4, @v0.8.5, @v0.19.0, @v0.33.0; mistral.py@v0.19.0,
# MistralForCausalLM's own file there, rebinds too); qwen2.py's Qwen2MLP names it at every release read
# (@v0.5.4 to @v0.33.0), and qwen3.py imports Qwen2MLP (@v0.8.5, @v0.33.0).
VLLM_MLP_KEEPS_GATE_UP = {
    "llama": ((known_version("0.0.0"), True), (known_version("0.6.4"), False)),
    "qwen2": ((known_version("0.0.0"), True),)}
VLLM_DENSE_FORWARD_SOURCES = {
    "eager-gate-up-held": "vllm/model_executor/models/llama.py@v0.5.4..@v0.6.3, qwen2.py@v0.5.4..@v0.33.0 "
                          "(LlamaModel/Qwen2Model.forward loop, MLP.forward `gate_up, _ =`); "
                          "layers/layernorm.py fused_add_rms_norm in place",
    "eager-gate-up-freed": "vllm/model_executor/models/llama.py@v0.6.4..@v0.33.0 (LlamaModel.forward loop, "
                           "LlamaMLP.forward rebinds x); layers/layernorm.py fused_add_rms_norm in place",
    "piecewise-inductor": "vllm/config.py@v0.8.5 (V1: custom_ops none, level PIECEWISE, split at attention), "
                          "config/compilation.py@v0.19.0 (use_inductor_graph_partition False); "
                          "models/llama.py, qwen2.py forward"}

# --- the MoE forward's live tensors (vLLM) ----------------------------------------------------------------
# The sparse-MoE decoder layers read (Qwen3MoeSparseMoeBlock, Qwen2MoeSparseMoeBlock, MixtralMoE) run attention as
# the dense models do (the dense derivation's attention step) and replace the MLP by: router_logits = gate(x), a
# ReplicatedLinear over every expert (T x E, activation dtype, not split by TP); FusedMoE -> moe_forward (a custom
# op that mutates hidden_states: UnquantizedFusedMoEMethod calls fused_experts with inplace=True, so the output is
# written into the input); select_experts/fused_topk: topk_weights fp32, topk_ids int32 and token_expert_indices
# int32, T x top_k each, over the whole batch; per chunk of M tokens moe_align_block_size's sorted_token_ids
# (M x top_k + E x (BLOCK_SIZE_M - 1)) and expert_ids int32; the intermediate caches (VLLM_FUSED_MOE_CACHE_LAYOUTS,
# or the modular kernel's held workspace from VLLM_MOE_WORKSPACE_SINCE); Qwen2-MoE's shared expert (Qwen2MoeMLP,
# gate_up kept through down_proj) runs beside the routed experts, one branch's H output alive while the other
# runs (the model file at 0.8.5 runs it first; at 0.14.0 and 0.19.0 SharedFusedMoE runs it inside the layer).
# Held around the experts: eager, the model loop's previous output, the residual and the experts' input (3 H);
# piecewise inductor, the piece's inputs (attention output q, incoming residual H), the new residual and the normed
# input (q + 3 H). Read in models/qwen3_moe.py@v0.10.1.1, qwen2_moe.py@v0.8.5, @v0.10.1.1, @v0.14.0, @v0.19.0,
# mixtral.py@v0.8.0, @v0.10.1.1, layers/fused_moe/layer.py@v0.10.1.1 and fused_moe.py at the tags below.
# Not read (calibrated formula, ACTIVATION_CALIBRATION): DeepSeek-V2/V3 (MLA projections, grouped top-k), gpt-oss
# (MXFP4 experts through triton_kernels matmul_ogs or Marlin), experts quantised other than FP8 (Marlin, GPTQ, AWQ
# MoE kernels) and other MoE architectures.
VLLM_MOE_BLOCK_FILE = {  # config architecture or model_type -> the sparse-MoE block vLLM runs
    "qwen3moeforcausallm": "qwen3_moe", "qwen3_moe": "qwen3_moe",
    "qwen2moeforcausallm": "qwen2_moe", "qwen2_moe": "qwen2_moe",
    "mixtralforcausallm": "mixtral", "mixtral": "mixtral"}
# fused_experts_impl's intermediate caches per call: "apart" (fused_moe.py@v0.5.4, @v0.6.4, @v0.7.3: cache1
# M x top_k x N, cache2 M x top_k x N/2, cache3 M x top_k x K, three torch.empty) and "shared" (@v0.8.0, @v0.8.5,
# @v0.10.1.1: cache13 of M x top_k x max(N, K) holding cache1 then cache3, cache2 apart).
VLLM_FUSED_MOE_CACHE_LAYOUTS = ((known_version("0.0.0"), "apart"), (known_version("0.8.0"), "shared"))
# get_default_config's BLOCK_SIZE_M for a batch larger than the expert count (fused_moe.py@v0.10.1.1); tuned
# configs per GPU take 16-256, a difference under 0.3 MiB per call for 128 experts.
VLLM_MOE_ALIGN_BLOCK = 64
VLLM_MOE_FORWARD_SOURCES = {
    "moe-eager-caches-apart": "vllm/model_executor/layers/fused_moe/fused_moe.py@v0.5.4..@v0.7.3 fused_experts "
                              "(cache1, cache2, cache3 apart; fused_topk; moe_align_block_size); models/"
                              "qwen2_moe.py, mixtral.py (V0 eager loop)",
    "moe-eager": "vllm/model_executor/layers/fused_moe/fused_moe.py@v0.8.0..@v0.10.1.1 fused_experts_impl (cache13 "
                 "shared), layer.py moe_forward (mutates hidden_states); models/qwen3_moe.py, qwen2_moe.py, "
                 "mixtral.py (eager loop)",
    "moe-piecewise-inductor": "vllm/model_executor/layers/fused_moe/layer.py@v0.10.1.1, @v0.19.0 moe_forward (a "
                              "custom op inside the piece), fused_moe.py fused_experts_impl / "
                              "modular_kernel.py@v0.14.0 workspaces; models/qwen3_moe.py, "
                              "qwen2_moe.py@v0.8.5, @v0.19.0; "
                              "config/compilation.py@v0.19.0 (split at attention)"}

# --- calibrated constants (vLLM) -------------------------------------------------------------------------
# Where the dense and MoE derivations above do not reach (DeepSeek's MLA, gpt-oss, architectures not read): activation
# peak = T*(2*I/tp + 4*H)*2 B + max_num_seqs*V*4 B times a factor FIT TO ONE LOG, vllm#10517 (Llama-3.1-8B
# T=20000 formula 1.80 vs logged 2.07 GiB; T=29000 2.55 vs 2.99), which the derivation now explains for dense
# Llama/Qwen models (the loop's previous output and SiluAndMul's three MLP widths).
ACTIVATION_CALIBRATION = 1.15
# --- DeepSeek-V4's forward (vLLM) ----------------------------------------------------------------------------
# The profile's dummy forward of max_num_batched_tokens (T) tokens on one rank, read in
# model_executor/models/deepseek_v4.py@v0.21.0 (DeepSeek-V4's first release) and models/deepseek_v4/nvidia/
# model.py, attention.py, nvidia/flashmla.py, layers/sparse_attn_indexer.py, v1/worker/workspace.py@v0.22.0:
# - held through each decoder layer: the model loop keeps the previous layer's output (T x H) and residual
#   streams (T x hc_mult x H, bf16) while the layer runs; the layer's mhc_fused_post_pre returns the new residual
#   streams, post_mix (T x hc_mult fp32), res_mix (T x hc_mult^2 fp32) and the layer input (T x H).
# - attention step (a ratio-4 layer): o_padded (T x padded heads x head_dim, allocated before the op), qr_kv
#   (T x (q_lora_rank + head_dim)) and its fused_q_kv_rmsnorm outputs, wq_b's q (T x local heads x head_dim)
#   and the F.pad copy to padded heads the profile path returns (attn_metadata is None: no kernel fires).
# - indexer step: the indexer's wq_b q (T x index heads x index_head_dim bf16), its fp8 quant and fp32 weights
#   beside the attention's padded q, plus the dummy logits allocation of VLLM_SPARSE_INDEXER_MAX_LOGITS_MB.
# - MoE step: the replicated router's fp32 logits (T x experts), fused_topk's fp32 weights and int32 ids
#   (T x top_k), the shared expert's gate_up and activation (TP-split) and the routed experts' intermediate
#   caches. Where the MXFP4 expert kernel is Marlin (VLLM_V4_MARLIN_SOURCE) those caches are WorkspaceManager
#   requests, counted below; on Blackwell (10.x: TRTLLM MXFP8 or DeepGEMM FP4) and unknown GPUs the kernel's
#   buffers were NOT read and the caches are sized as fused_experts' shared layout (engines/vllm.py
#   moe_workspace), in the MoE step.
# - held after the forward: the WorkspaceManager's buffer, the largest get_simultaneous request: FlashMLA's
#   dummy-run gather (PREFILL_CHUNK_SIZE x (ceil(max_model_len / ratio) + window + T) x head_dim bf16) or the
#   indexer's K gather (get_max_prefill_buffer_size = 40 x max_model_len / 4 entries of index_head_dim fp8 + 4 B
#   scale, + RADIX_TOPK_WORKSPACE_SIZE), 256-byte aligned parts.
# - allocated at model init, so inside vLLM's non-KV memory though not in the checkpoint: topk_indices_buffer
#   (T x index_topk int32) and _mtp_hidden_buffer (T x hc_mult x H, model dtype, on the last PP rank).
# Unchanged at @v0.26.0 and @v0.34.0 for these figures (padded heads 64, PREFILL_CHUNK_SIZE 4, the 512 MB
# logits default, both init buffers); @v0.34.0 sizes the indexer's prefill buffer by a factor not modelled, and
# the indexer's workspace stays below FlashMLA's there.
# --- DeepSeek-V4's routed experts on pre-Blackwell GPUs (vLLM) ---
# fused_moe/oracle/mxfp4.py select_deepseek_v4_mxfp4_moe_backend@v0.21.0..@v0.34.0: CUDA priority TRTLLM MXFP8,
# DeepGEMM MXFP4, MARLIN (TRITON_UNFUSED disabled for MTP); the first two require is_device_capability_family(100)
# (experts/trtllm_mxfp4_moe.py, deep_gemm_moe.py), Marlin capability >= 7.5, so Hopper/GH200, Ampere, Ada and
# 12.x run MarlinExperts (Standard format: no DP, so no batched activations). modular_kernel.py _allocate_buffers
# takes them from the WorkspaceManager unchunked (M_chunk = M_full = T): get_simultaneous(max(T x top_k x max(I, H),
# T x H), T x top_k x max(2I, H)) in the model dtype (experts/marlin_moe.py workspace_shapes), with I and H rounded
# to 128 and 256 (mxfp4_round_up_hidden_size_and_intermediate_size). The request shares the manager's one buffer
# with FlashMLA's and the indexer's gathers, so the buffer is the largest request, held from the first MoE layer
# through the rest of the forward. Also read and found to add nothing:
# - weights as loaded: prepare_moe_mxfp4_layer_for_marlin (quantization/utils/marlin_utils_fp4.py@v0.22.0)
#   repacks the 4-bit weights to the same size and turns the e8m0 scales back to e8m0 (one byte each): the
#   checkpoint's bytes; its per-expert temporaries are freed before the profile.
# - expert-parallel dispatch: FusedMoEParallelConfig.use_all2all_kernels is dp_size > 1 and use_ep (config.py
#   @v0.22.0): TP + EP without data parallelism builds no DeepEP / all2all buffers (the experts are masked by
#   expert_map on the replicated tokens).
VLLM_V4_MARLIN_SOURCE = ("fused_moe/oracle/mxfp4.py select_deepseek_v4_mxfp4_moe_backend, experts/marlin_moe.py "
                         "workspace_shapes, modular_kernel.py _allocate_buffers@v0.22.0 (same @v0.21.0, @v0.26.0, "
                         "@v0.34.0)")
VLLM_V4_MARLIN_MIN_CAPABILITY = (7, 5)  # experts/marlin_moe.py _supports_current_device
VLLM_V4_MARLIN_SKIPPED_MAJORS = (10,)  # TRTLLM MXFP8 / DeepGEMM MXFP4 take the 10.x family first
VLLM_V4_MARLIN_INTERMEDIATE_ALIGN = 128  # mxfp4_round_up_hidden_size_and_intermediate_size, MARLIN branch
VLLM_V4_MARLIN_HIDDEN_ALIGN = 256
VLLM_V4_FORWARD_SINCE = "0.21.0"
VLLM_V4_MIN_PADDED_HEADS = 64  # attention.py: padded_heads = max(n_local_heads, 64) for FlashMLA
VLLM_V4_PREFILL_CHUNK = 4  # nvidia/flashmla.py PREFILL_CHUNK_SIZE
VLLM_V4_INDEXER_LOGITS_BYTES = 512 * MiB  # envs.py VLLM_SPARSE_INDEXER_MAX_LOGITS_MB default, fp8 elements
VLLM_V4_INDEXER_PREFILL_FACTOR = 40  # v1/attention/backends/mla/indexer.py get_max_prefill_buffer_size
VLLM_V4_RADIX_TOPK_WORKSPACE = 1 * MiB  # layers/sparse_attn_indexer.py RADIX_TOPK_WORKSPACE_SIZE
VLLM_V4_WORKSPACE_ALIGN = 256  # v1/worker/workspace.py get_simultaneous rounds each part up to 256 bytes
VLLM_V4_FORWARD_SOURCE = ("vllm/model_executor/models/deepseek_v4.py@v0.21.0; models/deepseek_v4/nvidia/model.py, "
                          "attention.py, nvidia/flashmla.py, model_executor/layers/sparse_attn_indexer.py, "
                          "v1/attention/backends/mla/indexer.py, v1/worker/workspace.py@v0.22.0 (checked @v0.26.0, "
                          "@v0.34.0); routed experts: Marlin's WorkspaceManager request (VLLM_V4_MARLIN_SOURCE) before "
                          "Blackwell, fused_experts' caches elsewhere (the kernel's buffers not read)")
# What the derivation above does not reach, MEASURED ON ONE LOG, NOT DERIVED: B14 (vllm#44376, 2x GH200, TP2+EP,
# 16,384 batched tokens, 0.22) prints a 5.44 GiB pool where the derived parts leave 9.33 GiB; the 3.88 GiB between
# (4,170,612,736 B) is carried per batched token so that gsg never calls a refused start a fit. The piece not read
# is the compiled (piecewise inductor, custom_ops all) graph's liveness across the layer's steps; it replaces the
# whole-forward constant of earlier rounds (558,714 B a token), and it goes once that piece is read or a second V4
# log shows it is wrong (benchmarks/vectors/MISSES.md). Shown on its own in v4_forward_parts. The second public
# V4 log (2x GB10, TP2+EP, 1M tokens, a development build) lands +2.2 % with it at 8,192 batched tokens (+13.1 % at
# the GB10's default 2,048: the log prints neither), +8.8 % without: within that log's own uncertainty (its CUDA
# total alone moves the pool by as much as this term), so not a contradiction.
VLLM_V4_UNREAD_PER_TOKEN = 254_555
VLLM_V4_UNREAD_SOURCE = "measured once: vllm#44376 (B14) less the derived parts; compiled-graph liveness not read"
NON_TORCH_SINGLE = int(0.35 * GiB)  # vllm#10517, RTX 3090, TP=1: "non_torch_memory 0.35GiB"
NON_TORCH_PARALLEL = int(0.6 * GiB)  # llm-d capacity planner's TP>=2 figure (NCCL, custom all-reduce)
# Before vLLM's first memory snapshot: CUDA context and torch init. 0.3-1 GiB across the logs of
# docs/memory-arithmetic.md; V21 (docker/model-runner PR #414) shows 1.04 GiB used before start on a desktop GPU.
CUDA_CONTEXT = int(0.5 * GiB)
class CudaTotalRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """The total CUDA reports for a GPU whose driver keeps part of its memory (nvidia-smi's "Reserved").

    GPUStack's worker reports NVML's total (nvidia-smi's "Total"); vLLM sizes its budget from
    torch.cuda.mem_get_info()'s total (vllm/v1/worker/gpu_worker.py request_memory, MemorySnapshot), which leaves
    the driver's reserve out. Applied only when the given total is this card's NVML total, so a total read from a
    log's own line is never reduced twice."""

    gpu: str  # lower-cased model name within the name NVML reports, not followed by a letter or digit
    nvml_total: int  # bytes: what nvidia-smi and a GPUStack worker report as the card's total
    cuda_total: int  # bytes: mem_get_info()'s total, as vLLM prints it
    source: str


# One row per card whose CUDA total a public log prints; a card without one keeps its NVML total (gsg then books
# the driver's reserve as usable: about 0.46 GiB too much on an H100, gmu x that in the budget).
CUDA_TOTALS = (
    CudaTotalRow("h100 80gb hbm3", 81559 * MiB, int(79.19 * GiB),
                 "vllm/worker/worker.py@v0.8.1 determine_num_available_blocks prints mem_get_info's total: "
                 "'total_gpu_memory (79.19GiB)' on H100 80GB HBM3 in gateway-api-inference-extension#550 and "
                 "mellea PR #416 (tests/fixtures/logs/vllm/v0.8-llama-h100-gateway.log, "
                 "v0-qwen3-06b-h100-gmu080.log); nvidia-smi reports 81559MiB total for the same card"),
    CudaTotalRow("l40s", 46068 * MiB, int(44.42 * GiB),
                 "vllm/v1/worker/gpu_worker.py@v0.10.2 (its line 391 as logged) prints mem_get_info's total: "
                 "'Free memory on device (43.93/44.42 GiB) on startup. Desired GPU memory utilization is (0.9, "
                 "39.98 GiB)' on eight NVIDIA L40S (tests/fixtures/logs/vllm/v1-0.10.2-qwen3-235b-fp8-8xl40s-tp8-ep"
                 ".log, whose nvidia-smi reports 46068MiB total for the same cards)"),
    CudaTotalRow("nvidia a40", 46068 * MiB, 45498 * MiB,
                 "llama-server's device list prints cudaMemGetInfo's total (ggml-cuda.cu "
                 "ggml_backend_cuda_device_get_memory), the figure vLLM's mem_get_info reads: 'CUDA0: NVIDIA A40 "
                 "(45498 MiB, 45231 MiB free)' on a RunPod 2x A40 box whose nvidia-smi reports 46068 MiB total "
                 "(search-index file 63454661244, llama.cpp build 9665); 44.43 GiB, as the L40S's 44.42"),
    CudaTotalRow("a10g", 23028 * MiB, int(22.06 * GiB),
                 "torch reports an NVIDIA A10G's total as 22.06 GiB, the figure vLLM's mem_get_info reads: 'CUDA "
                 "devices: NVIDIA A10G (22.06 GiB)' on an AWS host (search-index file 59932372583) and 'GPU 0 has a "
                 "total capacity of 22.06 GiB' on an A10G (file 59672298265); NVML reports 23028MiB. Read against "
                 "vllm 0.2.6's 2x A10G TP 2 log (tests/fixtures/logs/vllm/v0.2.6-mistral-7b-2xa10g-tp2-gmu095-32k-"
                 "modal.log; worker.py@v0.2.6 takes mem_get_info's total since vllm PR #2031)"),
    CudaTotalRow("nvidia l4", 23034 * MiB, int(22.03 * GiB),
                 "vllm/v1/worker/gpu_worker.py prints mem_get_info's total: 'Free memory on device (21.84/22.03 "
                 "GiB) on startup' and '(1.43/22.03 GiB)' on L4s (search-index files 69494016274, 69659197413; "
                 "torch's 'GPU 0 has a total capacity of 22.03 GiB' on L4s in files 55464855199, 61414032113); "
                 "nvidia-smi reports 23034MiB (V25's own nvidia-smi, file 70974742012). One 0.28.0 record prints "
                 "22.04 (tests/fixtures/logs/vllm/v1-0.28.0-qwen25-7b-awq-l4-gmu035-32k-refused.log), 9 MiB more"),
    CudaTotalRow("rtx 3090", 24576 * MiB, int(23.58 * GiB),
                 "vllm/worker/worker.py@v0.6.4 prints mem_get_info's total: 'total_gpu_memory=23.58GiB' on one RTX "
                 "3090 in vllm#10517 (tests/fixtures/logs/vllm/v0.6.4-llama31-8b-rtx3090-20k.log) and '(23.58GiB)' "
                 "on RTX 3090s in vllm PR #14447 (v0.8-moe-marlin-4x-rtx3090-workers.log); NVML reports 24576MiB"),
    CudaTotalRow("rtx pro 6000 blackwell server edition", 97887 * MiB, int(95.01 * GiB),
                 "vllm/v1/worker/gpu_worker.py@v0.27.0 (its line 789 as logged) prints mem_get_info's total: 'Free "
                 "memory on device (94.05/95.01 GiB) on startup. Desired GPU memory utilization is (0.9, 85.51 GiB)' "
                 "on four RTX PRO 6000 Blackwell Server Edition under vLLM 0.27.1 (tests/fixtures/logs/vllm/"
                 "v1-0.27.1-qwen3-235b-fp8-4x-rtx-pro-6000-tp4.log, whose post names the card; 97887MiB by NVML as "
                 "on the 0.23.0 GCP G4 record); it also lands Colab's 0.20.1 Qwen3-8B LLM-class row "
                 "(v1-0.20-qwen3-reranker-8b-rtx-pro-6000-gmu085-1k.log) at -0.1 % from +0.7 %"),
)


def cuda_total(gpu_total: int, gpu_name: str) -> tuple[int, CudaTotalRow | None]:
    """The total vLLM's budget is taken from, and the row that moved it (None: the given total is used as is)."""
    name = gpu_name.lower()
    for row in CUDA_TOTALS:
        if _names_card(name, row.gpu) and gpu_total == row.nvml_total:
            return row.cuda_total, row
    return gpu_total, None


def _names_card(name: str, key: str) -> bool:
    """Whether a lower-cased GPU name holds a CUDA_TOTALS key as a whole model name: "nvidia l4" names an L4, not
    an "NVIDIA L40S" (the key followed by a letter or digit is another card)."""
    at = name.find(key)
    while at >= 0:
        end = at + len(key)
        if end == len(name) or not name[end].isalnum():
            return True
        at = name.find(key, at + 1)
    return False


class ContextNonTorchRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """One card's non-torch memory alone on the GPU as mem_get_info's total - free - torch's allocated bytes after
    the profile: the CUDA context and what the profile adds outside torch, as one figure."""

    gpu: str  # lower-cased model name within the name NVML reports (matched as CUDA_TOTALS' keys are)
    non_torch: int  # bytes
    source: str


# V0 up to 0.6.4 (worker.py@v0.6.4 determine_num_available_blocks) and V1 0.8.0-0.9.0 (gpu_worker.py@v0.8.4
# determine_available_memory: total - free - allocated after profile_run, VllmProfile.context_in_budget) measure
# non-torch memory the same way, the context inside it. Where a 0.6.4 log printed that figure for a card, a release
# that counts the context in its budget books it at TP x PP = 1 in place of the release's row plus CUDA_CONTEXT
# (which double-counts the context the row already holds on such a card); other cards keep the row plus the context.
# Checked on a second release: V1 0.8.4 on an RTX 3090 (v1-0.8.4-qwen25-7b-rtx3090-4k-llm-class.log) leaves
# 0.35 GiB beside its logged weights and 1.38 GiB sampler peak (-8.0 % with the context added twice, +1.6 % now).
SINGLE_GPU_NON_TORCH_WITH_CONTEXT = (
    ContextNonTorchRow("rtx 3090", int(0.35 * GiB),
                       "vllm#10517 (0.6.4, Llama-3.1-8B on an RTX 3090): 'non_torch_memory=0.35GiB' "
                       "(tests/fixtures/logs/vllm/v0.6.4-llama31-8b-rtx3090-20k.log, -29k-refused.log)"),
    ContextNonTorchRow("h200", int(0.73 * GiB),
                       "0.6.4.post1, a 1B model through the LLM class on an H200: 'non_torch_memory=0.73GiB' "
                       "(tests/fixtures/logs/vllm/v0.6.4.post1-rho-1b-sft-h200-llm-class-2k.log)"),
)


def single_gpu_non_torch_with_context(gpu_name: str) -> ContextNonTorchRow | None:
    """The card's measured non-torch memory with its CUDA context inside (None: no public log printed it)."""
    name = gpu_name.lower()
    return next((row for row in SINGLE_GPU_NON_TORCH_WITH_CONTEXT if _names_card(name, row.gpu)), None)


# NCCL channel buffers and custom all-reduce IPC buffers per rank when TP x PP > 1, also before the snapshot.
# An estimate, not a fit: no public vLLM log prints it alone (SGLang's start-up at TP4 is larger, see below).
# It is the figure for NVLink-connected GPUs and for GPUs gsg cannot place (see GPU_INTERCONNECT below).
COMM_BUFFERS = int(0.75 * GiB)
# vLLM (V1) profiles a multimodal model's encoder on dummy items of the maximum size before the text dummy run.
# Qwen2/2.5-VL processors cap an image at 12,845,056 pixels (preprocessor_config.json max_pixels; 65,536 patches
# of 14): Qwen2.5-VL-7B logs "Encoder cache will be initialized with a budget of 16384 tokens, and profiled with 1
# image items of the maximum feature size".
QWEN_VL_MAX_PIXELS = 12_845_056
# Qwen3-VL's processor caps size["longest_edge"] instead (qwen3_vl.py@v0.11.0 _get_vision_info: smart_resize(...,
# max_pixels=image_processor.size["longest_edge"])), 16,777,216 in the published preprocessor_config.json: a
# 4,096 px square, 65,536 patches of 16, 16,384 tokens (not the 50,176 patches Qwen2's cap would give).
QWEN3_VL_MAX_PIXELS = 16_777_216
# What V1's profile_run does with a multimodal model, read in gpu_model_runner.py@v0.9.0.1, @v0.10.1.1, @v0.12.0,
# @v0.29.0 and gpu/model_runner.py@v0.29.0 (the V2 runner's encoder_runner.profile_encoder_cache): it encodes a
# batch of dummy items of the largest size first, then keeps the batched pixel values (a local of profile_run) and
# the encoder outputs (encoder_cache["tmp"]) until the text dummy run and the dummy sampler are done. So the
# profiled peak is max(encoder phase, max(forward, sampler) + pixel values + encoder outputs), the encoder phase
# being the pixel values plus the ViT's largest step over all the items at once (VLLM_ENCODER_ROWS below).
# Items per batch: the encoder budget (max of max_num_batched_tokens and one item's tokens) over one item's tokens,
# capped by max_num_seqs x the per-prompt limit (--limit-mm-per-prompt, default 999 on V1: config@v0.10.1.1).
VLLM_MM_LIMIT_DEFAULT = 999
# Before 0.10 the budget is divided rounding up (gpu_model_runner.py@v0.9.0.1 profile_run: cdiv(encoder_budget,
# max_tokens_per_mm_item)); from 0.10 MultiModalBudget.get_max_items floors it (v1/worker/utils.py@v0.10.1.1).
VLLM_MM_ITEMS_FLOOR_SINCE = "0.10.0"


class VllmEncoderRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """The live tensors of one ViT block's attention step at the encoder's peak, in ViT widths per patch at 16
    bits (an fp32 copy counts twice), for one model file from a release on. The MLP step is computed from its
    shape (engines/vllm.py vit_step_elements): gated 3 x (width + inter), fc1/fc2 max(2 x (width + inter),
    3 x width + inter). tp_phases, where the file was read at tensor parallel > 1: the attention step's phases on one
    rank, each (widths every rank holds whole, widths split over the ranks); the MLP's inner width is split too
    (Column/RowParallelLinear). Empty: not read at TP > 1, the step stays the TP 1 reading at every size."""

    since: str
    family: str
    attention_widths: int
    rule: str
    source: str
    tp_phases: tuple[tuple[int, int], ...] = ()


# The ViT attention backend (platforms/cuda.py get_vit_attn_backend) depends on the GPU: up to 0.11 FLASH_ATTN
# (upstream flash-attn installed, or vLLM's own from 0.11 on compute capability >= 8.0) or xFormers'
# memory-efficient kernel, TORCH_SDPA on Blackwell at 0.11.0; from 0.12 FLASH_ATTN on compute capability >= 8.0 and
# TORCH_SDPA below it (Volta, Turing). None materialises a patches x patches matrix on CUDA: SDPA runs per window
# (vit_attn_wrappers.py torch_sdpa_wrapper) and PyTorch dispatches head sizes of 72/80 to its flash or
# memory-efficient kernels. SDPA's per-window outputs and their torch.cat (2 widths) are live where FLASH_ATTN holds
# its output and proj's (2), so the widths below are the same for every backend of a release.
_QWEN_FP32_ROTARY = ("residual, norm1, qkv (3), q/k/v made contiguous (3), then qwen2_vl.py "
                     "apply_rotary_pos_emb_vision's t.float() copy (2), vllm_flash_attn's out-of-place fp32 result "
                     "(2) and the 16-bit cast (1), for q and for k in turn")
_QWEN_CONCAT_FP32_ROTARY = ("residual, norm1, qkv (3), q/k/v made contiguous (3), torch.cat([q, k]) (2), then "
                            "apply_rotary_pos_emb_vision's t.float() copy of both (4), the fp32 result (4) and the "
                            "16-bit cast (2)")
_QWEN_16BIT_ROTARY = ("residual, norm1, qkv (3), q and k gathered into one tensor (2: qk_reshaped, or "
                      "torch.cat([q, k]) in qwen2_vl.py) and rotated in 16 bits (2), the attention output (1: "
                      "rearranged to s b (h d) without a copy at one batch) and proj (1)")
# Tensor parallel (round 30): qkv is a Column/QKVParallelLinear, so each rank computes its 3/tp widths, then
# split_qkv gathers the whole qkv on every rank (qwen2_5_vl.py all_gather_interleave: a list of tp buffers and their
# torch.cat; qwen2_vl.py tensor_model_parallel_all_gather: all_gather_into_tensor's buffer and the reshape's copy
# after movedim, base_device_communicator.py) and takes its own heads back as views. Per rank, in ViT widths: the
# gather (residual, norm1, local qkv 3/tp, 3 gathered, 3 reordered: 8 + 3/tp), the contiguous q/k/v copies while
# the gathered qkv is still viewed (5 + 6/tp), then the rotary step on the rank's heads (2 + 11/tp).
_QWEN_TP_GATHER = ((8, 3), (5, 6), (2, 11))
_QWEN_TP_GATHER_SOURCE = ("; at tensor parallel > 1 (qwen2_5_vl.py and qwen2_vl.py @v0.8.0, @v0.9.2 and @v0.10.2 "
                          "split_qkv): the rank's qkv gathered whole on every rank before its heads are taken back")
# 0.11.0's Qwen2_5_VisionAttention gathers the same way, then rotates q and k concatenated in fp32: 2 + 18/tp.
_QWEN_TP_GATHER_CONCAT = ((8, 3), (5, 6), (2, 18))
_QWEN_TP_GATHER_CONCAT_SOURCE = ("; at tensor parallel > 1 (qwen2_5_vl.py@v0.11.0 split_qkv, "
                                 "all_gather_interleave): the rank's qkv gathered whole on every rank first")
# From 0.12 qwen2_5_vl.py gathers nothing: the rank's qkv is split into heads as views (einops), so only the
# residual, norm1 and proj's output (RowParallelLinear, whole before its all-reduce) are whole: 3 + 8/tp.
_QWEN_TP_LOCAL = ((3, 8),)
_QWEN_TP_LOCAL_SOURCE = ("; at tensor parallel > 1 (qwen2_5_vl.py@v0.12.0 and @v0.19.0, no gather; "
                         "mm_encoder_tp_mode 'weights' by default): the rank's heads only, proj's output whole")
# Qwen2-VL's split_qkv gathers the whole qkv again from 0.13 (tensor_model_parallel_all_gather, then its heads taken
# back with split_tensor_along_last_dim views), then rotates q and k concatenated in 16 bits. Per rank, in ViT
# widths: the gather as through 0.10 (8 + 3/tp), then the gathered qkv (3, viewed by v) beside residual, norm1 and
# proj's output (whole) and the local qkv, qk_concat, its rotation and the attention output (3 + 2 + 2 + 1 split).
_QWEN2_TP_REGATHER = ((8, 3), (6, 8))
_QWEN2_TP_REGATHER_SOURCE = ("; at tensor parallel > 1 (split_qkv@v0.13.0 .. @v0.19.0; "
                             "base_device_communicator.py@v0.13.0 all_gather: an empty buffer, movedim and "
                             "reshape's copy): the rank's qkv gathered whole on every rank again")
# SigLIP (Gemma 3's tower) is tensor-parallel at every release read: QKVParallelLinear qkv_proj, MultiHeadAttention
# over num_heads / tp, RowParallelLinear out_proj; fc1 ColumnParallelLinear, fc2 RowParallelLinear. Per rank: the
# residual, layer_norm1 and out_proj's output (before its all-reduce) whole, qkv (3) and the attention output with
# its reshape (2) split.
_SIGLIP_TP = ((3, 5),)
VLLM_ENCODER_ROWS = (
    VllmEncoderRow("0.8.0", "qwen2_5_vl", 13, "vit-attention-fp32-rotary",
                   f"qwen2_5_vl.py@v0.9.0.1, @v0.10.1.1 and @v0.10.2 Qwen2_5_VisionAttention.forward: "
                   f"{_QWEN_FP32_ROTARY}{_QWEN_TP_GATHER_SOURCE}", _QWEN_TP_GATHER),
    VllmEncoderRow("0.11.0", "qwen2_5_vl", 20, "vit-attention-concat-fp32-rotary",
                   f"qwen2_5_vl.py@v0.11.0 Qwen2_5_VisionAttention.forward: {_QWEN_CONCAT_FP32_ROTARY}"
                   f"{_QWEN_TP_GATHER_CONCAT_SOURCE}", _QWEN_TP_GATHER_CONCAT),
    VllmEncoderRow("0.12.0", "qwen2_5_vl", 11, "vit-attention-16bit-rotary",
                   f"qwen2_5_vl.py@v0.12.0, @v0.14.1, @v0.19.0, @v0.27.1 and @v0.34.0 (MMEncoderAttention from "
                   f"0.14): {_QWEN_16BIT_ROTARY}{_QWEN_TP_LOCAL_SOURCE}", _QWEN_TP_LOCAL),
    VllmEncoderRow("0.8.0", "qwen2_vl", 13, "vit-attention-fp32-rotary",
                   f"qwen2_vl.py@v0.9.0.1 and @v0.10.1.1 Qwen2VisionAttention.forward: {_QWEN_FP32_ROTARY}"
                   f"{_QWEN_TP_GATHER_SOURCE}", _QWEN_TP_GATHER),
    VllmEncoderRow("0.11.0", "qwen2_vl", 20, "vit-attention-concat-fp32-rotary",
                   f"qwen2_vl.py@v0.11.0 Qwen2VisionAttention.forward: {_QWEN_CONCAT_FP32_ROTARY}"),
    VllmEncoderRow("0.12.0", "qwen2_vl", 11, "vit-attention-16bit-rotary",
                   f"qwen2_vl.py@v0.12.0 Qwen2VisionAttention.forward: {_QWEN_16BIT_ROTARY}; at tensor parallel > 1 "
                   f"(split_qkv@v0.12.0): no gather, the rank's heads only, proj's output whole", _QWEN_TP_LOCAL),
    VllmEncoderRow("0.13.0", "qwen2_vl", 11, "vit-attention-16bit-rotary",
                   f"qwen2_vl.py@v0.13.0, @v0.14.0, @v0.16.0, @v0.18.0, @v0.19.0 and @v0.34.0 "
                   f"Qwen2VisionAttention.forward: {_QWEN_16BIT_ROTARY}{_QWEN2_TP_REGATHER_SOURCE}",
                   _QWEN2_TP_REGATHER),
    # Qwen3-VL first ships in 0.11.0; its blocks use qwen2_5_vl.py's Qwen2_5_VisionAttention
    VllmEncoderRow("0.11.0", "qwen3_vl", 20, "vit-attention-concat-fp32-rotary",
                   f"qwen3_vl.py@v0.11.0 Qwen3_VisionBlock (Qwen2_5_VisionAttention): {_QWEN_CONCAT_FP32_ROTARY}"
                   f"{_QWEN_TP_GATHER_CONCAT_SOURCE}; Qwen3_VisionMLP's linear_fc1/fc2 Column/RowParallel",
                   _QWEN_TP_GATHER_CONCAT),
    VllmEncoderRow("0.12.0", "qwen3_vl", 11, "vit-attention-16bit-rotary",
                   f"qwen3_vl.py@v0.12.0, @v0.19.0 and @v0.34.0 Qwen3_VisionBlock (Qwen2_5_VisionAttention): "
                   f"{_QWEN_16BIT_ROTARY}{_QWEN_TP_LOCAL_SOURCE}", _QWEN_TP_LOCAL),
    VllmEncoderRow("0.11.0", "qwen3_vl_moe", 20, "vit-attention-concat-fp32-rotary",
                   "qwen3_vl_moe.py@v0.11.0: the vision tower of qwen3_vl.py (Qwen3_VisionTransformer)",
                   _QWEN_TP_GATHER_CONCAT),
    VllmEncoderRow("0.12.0", "qwen3_vl_moe", 11, "vit-attention-16bit-rotary",
                   "qwen3_vl_moe.py@v0.12.0: the vision tower of qwen3_vl.py (Qwen3_VisionTransformer)",
                   _QWEN_TP_LOCAL),
    VllmEncoderRow("0.8.0", "gemma3", 8, "siglip-attention",
                   "siglip.py@v0.10.1.1 SiglipEncoderLayer / SiglipAttention: residual, layer_norm1, qkv_proj (3), "
                   "MultiHeadAttention's output and its reshape (2), out_proj (1); gemma3_mm.py@v0.10.1.1 encodes "
                   "all the dummy images in one vision_tower call (896 px, 256 tokens each, no pan-and-scan); at "
                   "tensor parallel > 1 siglip.py@v0.8.5, @v0.10.2, @v0.12.0, @v0.14.0, @v0.16.0 and @v0.19.0 "
                   "SiglipAttention / SiglipMLP: heads and fc1's width split over the ranks", _SIGLIP_TP),
)


class VllmEncoderTpModeRow(TableRow):
    """--mm-encoder-tp-mode from one release on: the values argparse takes (none: no such flag) and the encoder
    families gsg models whose model class sets supports_encoder_tp_data (the others fall back to "weights" with a
    warning: config._init_multimodal_config / ModelConfig)."""

    since: str
    choices: tuple[str, ...]
    data_families: frozenset[str]
    source: str
    # the deprecated --enable-multimodal-encoder-data-parallel switch sets the mode to "data" (create_model_config)
    data_switch: bool = False


# "data" (batch-level DP of the encoder): the tower's linears are built with disable_tp (ReplicatedLinear weights,
# whole on every rank) and run_dp_sharded_mrope_vision_model gives each rank its share of the items
# (get_load_balance_assignment: largest first to the least-loaded rank, so ceil(items / tp) of equal dummies on the
# heaviest), copied out of the whole pixel_values (torch.cat of the rank's slices), then all-gathers the outputs.
_TP_MODE_QWEN = frozenset({"qwen2_5_vl", "qwen2_vl", "qwen3_vl", "qwen3_vl_moe"})
VLLM_MM_ENCODER_TP_MODES = (
    VllmEncoderTpModeRow("0.0.0", (), frozenset(),
                         "vllm/engine/arg_utils.py@v0.9.2, @v0.10.0 and @v0.10.1.1: no --mm-encoder-tp-mode "
                         "(--enable-multimodal-encoder-data-parallel, not modelled)"),
    VllmEncoderTpModeRow("0.10.2", ("weights", "data"), frozenset({"qwen2_5_vl"}),
                         "vllm/config/__init__.py@v0.10.2 MMEncoderTPMode Literal['weights', 'data'], default "
                         "'weights'; supports_encoder_tp_data in qwen2_5_vl.py (and glm4_1v, kimi_vl, minicpmv, "
                         "mllama4, step3_vl); multimodal/utils.py@v0.10.2 run_dp_sharded_mrope_vision_model; "
                         "arg_utils.py@v0.10.2: --enable-multimodal-encoder-data-parallel (deprecated) sets 'data'",
                         data_switch=True),
    *(VllmEncoderTpModeRow(since, ("weights", "data"), _TP_MODE_QWEN,
                           "vllm/config/multimodal.py@v0.11.0 .. @v0.19.0 MMEncoderTPMode; supports_encoder_tp_data "
                           "in qwen2_5_vl.py, qwen2_vl.py, qwen3_vl.py (qwen3_vl_moe.py inherits it) @v0.11.0, "
                           "@v0.12.0, @v0.14.0, @v0.16.0, @v0.18.0 and @v0.19.0 (not gemma3_mm.py: SigLIP stays "
                           f"tensor-parallel); models/vision.py run_dp_sharded_mrope_vision_model{switch}",
                           data_switch=not switch.endswith("removed"))
      for since, switch in (("0.11.0", "; arg_utils.py@v0.11.0 and @v0.12.0: --enable-multimodal-encoder-data-"
                                       "parallel (deprecated) sets 'data'"),
                            ("0.13.0", "; arg_utils.py@v0.13.0: --enable-multimodal-encoder-data-parallel removed"))),
)
VLLM_MM_ENCODER_TP_MODE_DEFAULT = "weights"
VLLM_MM_ENCODER_TP_MODE_SINCE = next(row.since for row in VLLM_MM_ENCODER_TP_MODES if row.choices)
_TP_MODE_KEYS = keyed_by_release(VLLM_MM_ENCODER_TP_MODES)


def vllm_encoder_tp_mode_row(release: Version) -> VllmEncoderTpModeRow:
    """The --mm-encoder-tp-mode row of a vLLM release."""
    return row_of_release(_TP_MODE_KEYS, release)


# Qwen3-VL's dummy video (qwen3_vl.py@v0.11.0 Qwen3VLDummyInputsBuilder, get_max_video_tokens): frames of the
# largest image, as many as Qwen2VLProcessingInfo._get_max_video_frames counts before one more would pass
# max_model_len tokens (from 2, one video a prompt: the registry profiles mm_counts {modality: 1}), capped at
# _MAX_FRAMES_PER_VIDEO; each resized by the video processor's smart_resize under size["longest_edge"] for all the
# frames together (transformers video_processing_qwen3_vl.py). The published video_preprocessor_config.json of
# every Qwen3-VL checkpoint gives size {"longest_edge": 25165824, "shortest_edge": 4096}; config.json does not
# carry it, so these are the published values. At 65,536 tokens: 24,576 frames of 32 px, 12,288 tokens.
QWEN3_VL_VIDEO_MAX_PIXELS = 25_165_824
# Gemma 3's image placeholder beside its mm_tokens_per_image embeddings: transformers Gemma3Processor
# full_image_sequence "\n\n<start_of_image>...<end_of_image>\n\n" ("\n\n" is one token of Gemma's vocabulary).
# Evidence: a 0.11.0rc2 Gemma-3-27B start-up (search-index file 9297248278) logs "a budget of 8192 tokens, and
# profiled with 31 image items" = 8,192 // 260, not 8,192 // 256.
GEMMA3_IMAGE_BREAK_TOKENS = 4
QWEN3_VL_VIDEO_MIN_PIXELS = 4_096
QWEN3_VL_MAX_FRAMES_PER_VIDEO = 24_576


class VllmVideoRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """How a release sizes a model file's dummy video against its dummy image: the tokens one video takes of the
    encoder budget per soft token and the frame cap (vLLM profiles the modality whose item takes the most)."""

    since: str
    family: str
    tokens_per_soft_token: float
    max_frames: int
    rule: str
    source: str
    # Qwen2/2.5-VL only: the images whose tokens come off max_model_len before the counted video's frames are fitted
    # ("limits": --limit-mm-per-prompt's image count, the frames then split over its video count; "one": one image
    # where images are allowed; "none"), and the length the video profile_run encodes is sized from ("batched":
    # max_num_batched_tokens, one video and no image; "batched-limits": the same with the images off and the split
    # of "limits"; "item": the counted video's tokens; "max-len": max_model_len)
    images_off: str = "none"
    encoded_from: str = "max-len"
    default_limit: int = VLLM_MM_LIMIT_DEFAULT  # a modality's --limit-mm-per-prompt when not given


# Qwen2/2.5-VL (qwen2_vl.py Qwen2VLProcessingInfo): each frame is the largest image (the image processor's
# max_pixels, --mm-processor-kwargs included), two frames a temporal step; frames are added from 1 while the next
# count's tokens stay within max_model_len, up to _MAX_FRAMES_PER_VIDEO. So the video outranks the image from
# 2 x 16,384 = 32,768 tokens on: 7 steps (114,688 tokens) at 128,000, as a 0.23.0 Qwen2.5-VL-7B start-up logs
# ("budget of 114688 tokens, and profiled with 1 video items", search-index file 55021192520).
_QWEN2_VIDEO = ("get_max_video_tokens: the frames of the largest image, two a temporal step of 16,384 tokens "
                "at the default max_pixels, as many as fit the length left")
# Before 0.11 the video profile_run encodes is not the one the budget counts: gpu_model_runner.py builds it from
# another length (max_num_batched_tokens, or the counted item's tokens at 0.10.0), so at the usual 2,048-16,384
# batched tokens it is one temporal step (65,536 patches, 16,384 soft tokens) whatever the budget line says.
_QWEN2_VL_VIDEO_ROWS = (
    VllmVideoRow("0.0.0", "qwen2_vl", 1.0, 16, "video-frames-after-image-limit",
                 f"qwen2_vl.py@v0.8.0 and @v0.8.2 get_num_frames_with_most_features: max_model_len less "
                 f"limit_per_prompt image x 16,384, the frames split over limit_per_prompt video (config.py@v0.8.0 "
                 f"and @v0.8.2 get_limit_per_prompt: 1 when not given), at least 1; gpu_model_runner.py@v0.8.0 and "
                 f"@v0.8.2 profile_run encodes the first video of inputs/registry.py dummy_data_for_profiling("
                 f"seq_len=max_num_tokens), every limit's items, sized the same way from max_num_batched_tokens "
                 f"(0.8.1 not read) {_QWEN2_VIDEO}",
                 images_off="limits", encoded_from="batched-limits", default_limit=1),
    VllmVideoRow("0.8.3", "qwen2_vl", 1.0, 16, "video-frames-after-image-limit",
                 f"multimodal/registry.py@v0.8.3 passes the limits as mm_counts to qwen2_vl.py "
                 f"get_mm_max_tokens_per_item (config.py@v0.8.3: 1 when not given); gpu_model_runner.py@v0.8.3 "
                 f"encodes get_decoder_dummy_data(seq_len=max_num_tokens, {{video: 1}}) {_QWEN2_VIDEO}",
                 images_off="limits", encoded_from="batched", default_limit=1),
    VllmVideoRow("0.8.4", "qwen2_vl", 1.0, 16, "video-frames-after-one-image",
                 f"multimodal/registry.py@v0.8.4, @v0.8.5, @v0.9.0.1, @v0.9.1 and @v0.9.2 "
                 f"get_max_tokens_per_item_by_modality passes mm_counts {{modality: 1}}, so qwen2_vl.py takes one "
                 f"image's 16,384 tokens off max_model_len (config.py@v0.8.4: 999 a modality on V1 when not given); "
                 f"gpu_model_runner.py@v0.8.4-v0.9.2 profile_run encodes "
                 f"get_decoder_dummy_data(seq_len=max_num_tokens, {{video: 1}}) {_QWEN2_VIDEO}",
                 images_off="one", encoded_from="batched"),
    VllmVideoRow("0.10.0", "qwen2_vl", 1.0, 16, "video-frames-after-one-image",
                 f"multimodal/registry.py@v0.10.0 (mm_counts {{modality: 1}}, one image off); "
                 f"gpu_model_runner.py@v0.10.0 profile_run encodes get_decoder_dummy_data("
                 f"seq_len=max_tokens_per_mm_item, {{video: 1}}): the counted video {_QWEN2_VIDEO}",
                 images_off="one", encoded_from="item"),
    VllmVideoRow("0.10.1", "qwen2_vl", 1.0, 16, "video-frames-after-one-image",
                 f"qwen2_vl.py and multimodal/registry.py@v0.10.1 and @v0.10.1.1 (one image off); "
                 f"gpu_model_runner.py@v0.10.1 and @v0.10.1.1 _get_mm_dummy_batch encodes "
                 f"get_decoder_dummy_data(seq_len=max_num_tokens, {{video: 1}}) {_QWEN2_VIDEO}",
                 images_off="one", encoded_from="batched"),
    VllmVideoRow("0.10.2", "qwen2_vl", 1.0, 16, "video-frame-steps",
                 f"qwen2_vl.py@v0.10.2 get_num_frames_with_most_features: the frames of max_model_len, no image "
                 f"off (_MAX_FRAMES_PER_VIDEO 16); gpu_model_runner.py@v0.10.2 _get_mm_dummy_batch still encodes "
                 f"get_decoder_dummy_data(seq_len=max_num_tokens, {{video: 1}}) {_QWEN2_VIDEO}",
                 encoded_from="batched"),
    VllmVideoRow("0.11.0", "qwen2_vl", 1.0, 14, "video-frame-steps",
                 f"qwen2_vl.py@v0.11.0, @v0.13.0, @v0.19.0, @v0.23.0, @v0.27.0 and @v0.34.0 (_MAX_FRAMES_PER_VIDEO "
                 f"14); gpu_model_runner.py@v0.11.0, @v0.12.0 and @v0.13.0 _get_mm_dummy_batch "
                 f"(seq_len=max_model_len) and multimodal/registry.py@v0.23.0 get_dummy_mm_inputs (max_model_len) "
                 f"encode the counted video {_QWEN2_VIDEO}"),
)
_VIDEO_TIMESTAMPS = ("get_max_video_tokens returns int(soft tokens x 12.5) (the '<t seconds>' text around each "
                     "frame's tokens), so the video outranks the 16,384-token image and is the profiled modality")
_QWEN3_VL_VIDEO_ROWS = (
    VllmVideoRow("0.11.0", "qwen3_vl", 12.5, QWEN3_VL_MAX_FRAMES_PER_VIDEO, "video-timestamp-tokens",
                 f"qwen3_vl.py@v0.11.0, @v0.11.1 and @v0.12.0: {_VIDEO_TIMESTAMPS}"),
    VllmVideoRow("0.13.0", "qwen3_vl", 1.0, QWEN3_VL_MAX_FRAMES_PER_VIDEO, "video-soft-tokens",
                 "qwen3_vl.py@v0.13.0 and @v0.19.0 get_max_video_tokens: the soft tokens alone (12,288 at most "
                 "under the published longest_edge), under the image's 16,384, so the image is profiled"),
)
# qwen2_5_vl.py's processing info is qwen2_vl.py's, qwen3_vl_moe.py's qwen3_vl.py's
VLLM_VIDEO_ROWS = _QWEN2_VL_VIDEO_ROWS + tuple(r._replace(family="qwen2_5_vl") for r in _QWEN2_VL_VIDEO_ROWS) + \
    _QWEN3_VL_VIDEO_ROWS + tuple(r._replace(family="qwen3_vl_moe") for r in _QWEN3_VL_VIDEO_ROWS)


class VllmMmBudgetRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """What one item takes of the encoder budget, and how far profile_run widens each dummy output it keeps
    through the text run, from a release on (every model file)."""

    since: str
    item_tokens: str  # "embeddings" (the encoder's output rows) or "contiguous" (the placeholder's whole span)
    widened_to: str  # "none", "budget" (each output to the encoder budget) or "item" (to one item's tokens)
    rule: str
    source: str


_WIDEN = ("profile_run copies each output shorter than {to} into new_zeros(({to}, width)) and caches the copies; "
          "the loop's `output` keeps the encoder's own output alive until the dummy sampler returns")
VLLM_MM_BUDGET_ROWS = (
    VllmMmBudgetRow("0.0.0", "embeddings", "none", "",
                    "multimodal/registry.py@v0.10.0 get_max_tokens_per_item_by_modality: profiler.get_mm_max_tokens "
                    "(the embeddings); gpu_model_runner.py@v0.10.0 caches the outputs as they are"),
    VllmMmBudgetRow("0.10.1", "contiguous", "none", "contiguous-item-tokens",
                    "multimodal/registry.py@v0.10.1, @v0.10.2: get_mm_max_contiguous_tokens (the placeholder's "
                    "length with its break and text tokens) where the model file gives no per-item maximum"),
    VllmMmBudgetRow("0.11.0", "contiguous", "budget", "contiguous-item-tokens:outputs-widened-to-budget",
                    "multimodal/registry.py@v0.11.0 get_mm_max_contiguous_tokens; gpu_model_runner.py@v0.11.0 and "
                    f"@v0.11.1 {_WIDEN.format(to='the encoder budget')}"),
    VllmMmBudgetRow("0.12.0", "contiguous", "item", "contiguous-item-tokens:outputs-widened-to-item",
                    "multimodal/registry.py@v0.12.0 get_mm_max_contiguous_tokens; gpu_model_runner.py@v0.12.0 "
                    f"{_WIDEN.format(to='max_tokens_by_modality')}"),
    VllmMmBudgetRow("0.13.0", "embeddings", "none", "",
                    "multimodal/registry.py@v0.13.0 profiler.get_mm_max_tokens ('excluding any break/text tokens'); "
                    "gpu_model_runner.py@v0.13.0 and @v0.19.0 cache the outputs as they are (encoder_cache "
                    "tmp_<i>)"),
)
_MM_BUDGET_KEYS = keyed_by_release(VLLM_MM_BUDGET_ROWS)


def vllm_mm_budget_row(version: str | None) -> VllmMmBudgetRow:
    return row_for("vllm", _MM_BUDGET_KEYS, version)


def vllm_video_row(family: str, version: str | None) -> VllmVideoRow | None:
    """The dummy-video row of a model file for a release, or None where its video profile is not read."""
    rows = keyed_by_release([r for r in VLLM_VIDEO_ROWS if r.family == family])
    if not rows or arithmetic_release("vllm", version) < rows[0][0]:
        return None
    return row_for("vllm", rows, version)


class VllmV2EncoderRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """What the V2 model runner's profile_run (v1/worker/gpu/model_runner.py) does with a multimodal model's
    encoder from a release on: whether it encodes dummy items at all, and whether their pixel values stay on the
    GPU through the text run (V1's gpu_model_runner.py keeps them: a local of profile_run)."""

    since: str
    profiled: bool
    pixels_held: bool
    rule: str
    source: str


VLLM_V2_ENCODER_ROWS = (
    VllmV2EncoderRow("0.0.0", False, False, "v2-runner-no-encoder-profile",
                     "gpu/model_runner.py@v0.25.0 and @v0.26.0 profile_run: _dummy_run and the dummy sampler only, "
                     "no dummy multimodal items (nothing in gpu/ builds them), though config/vllm.py@v0.25.0 "
                     "_is_default_v2_model_runner_model puts a dense multimodal model on this runner"),
    VllmV2EncoderRow("0.27.0", True, False, "v2-runner-outputs-held",
                     "gpu/model_runner.py@v0.27.0, @v0.29.0 and @v0.34.0 profile_run: "
                     "encoder_runner.profile_encoder_cache encodes the dummy items and keeps the outputs in the "
                     "encoder cache until reset_encoder_cache after the sampler; the items are CPU tensors that "
                     "gpu/mm/encoder_runner.py execute_mm_encoder batches onto the GPU as a local, freed when it "
                     "returns, so the pixel values are not held through the text run"),
)


_V2_ENCODER_KEYS = keyed_by_release(VLLM_V2_ENCODER_ROWS)


def vllm_v2_encoder_row(version: str | None) -> VllmV2EncoderRow:
    return row_for("vllm", _V2_ENCODER_KEYS, version)


def vllm_encoder_row(family: str, version: str | None) -> VllmEncoderRow | None:
    """The encoder row of a model file for a release, or None where gsg has not read that file."""
    rows = keyed_by_release([r for r in VLLM_ENCODER_ROWS if r.family == family])
    return row_for("vllm", rows, version) if rows else None


# No deployment has more tensor-parallel ranks than this (a GPUStack cluster's GPUs); past it a size is a typo
MAX_PARALLEL_RANKS = 4096
# LoRAConfig defaults (vllm/config: max_loras 1, max_lora_rank 16; lora_dtype auto = the model's 16-bit dtype).
DEFAULT_MAX_LORAS = 1
DEFAULT_MAX_LORA_RANK = 16
LORA_ELEMENT_BYTES = 2
# SGLang's --max-loras-per-batch and --lora-backend defaults (server_args.py@v0.5.5 to @v0.5.12,
# arg_groups/fields/lora.py@v0.5.23: 8 and "csgmv")
SGLANG_DEFAULT_MAX_LORAS_PER_BATCH = 8
SGLANG_LORA_DEFAULT_BACKEND = "csgmv"


# --- LoRA adapter slots (core/memory/lora.py) --------------------------------------------------------------
# vLLM: every linear of a dense layer gets max_loras slots of A (rank x input) and B (output x rank) per packed
# slice (lora/layers/base_linear.py, column_parallel_linear.py, row_parallel_linear.py create_lora_weights, the
# same at @v0.11.0, @v0.12.0, @v0.13.0 and @v0.34.0), created in load_model inside the DeviceMemoryProfiler
# (v1/worker/gpu_model_runner.py@v0.11.0, v1/worker/gpu/model_runner.py@v0.34.0): "Model loading took" counts
# them and the KV cache gets what is left. The profile's dummy LoRAs (lora_model_runner_mixin.py
# maybe_setup_dummy_loras, rank 8) are built on the CPU (models.py create_dummy_lora, device "cpu") and copied
# into those slots: no GPU memory of their own. The embedding and the LM head get slots too when the model class
# declares embedding_modules (lora/utils.py get_supported_lora_modules): embedding A (vocab x rank), B
# (hidden x rank); LM head A (rank x hidden), B (vocab x rank), all whole on every TP rank. Up to 0.11 each also
# holds lora_extra_vocab_size (256) extra rows per slot in the model's dtype and the LM head's B rows are the
# vocabulary plus those rows padded to lora_vocab_padding_size (256 on CUDA; vocal_parallel_embedding.py,
# logits_processor.py@v0.11.0; models/llama.py@v0.11.0 unpadded_vocab_size += lora_extra_vocab_size). 0.12.0 drops
# the extra vocabulary (config/lora.py@v0.12.0, logits B at base_layer.vocab_size). --lora-target-modules
# (config/lora.py target_modules, lora/utils.py is_in_target_modules) is read at 0.34.0 (not in the 0.12.0 or
# 0.13.0 wheels).
# The architectures whose model class (through the registry, models/registry.py) declares a non-empty
# embedding_modules, read in each wheel's model files (not the Transformers backend's subpackage):
VLLM_LORA_VOCAB_0110 = frozenset((
    "ApertusForCausalLM", "AquilaForCausalLM", "AquilaModel", "BambaForCausalLM", "Cohere2ForCausalLM",
    "CohereForCausalLM", "CwmForCausalLM", "DeciLMForCausalLM", "Eagle3LlamaForCausalLM", "EagleLlama4ForCausalLM",
    "EagleLlamaForCausalLM", "EagleMiniCPMForCausalLM", "Ernie4_5ForCausalLM", "Exaone4ForCausalLM",
    "ExaoneForCausalLM", "Fairseq2LlamaForCausalLM", "FalconH1ForCausalLM", "GlmForCausalLM", "GraniteForCausalLM",
    "GraniteMoeForCausalLM", "GraniteMoeHybridForCausalLM", "GraniteMoeSharedForCausalLM", "GritLM",
    "InternLM3ForCausalLM", "InternLMForCausalLM", "JambaForCausalLM", "JambaForSequenceClassification",
    "LLaMAForCausalLM", "Lfm2ForCausalLM", "Llama4ForCausalLM", "LlamaForCausalLM", "LlamaForCausalLMEagle3",
    "LlamaModel", "MiniCPM3ForCausalLM", "MiniCPMForCausalLM", "MistralForCausalLM", "MistralModel",
    "MixtralForCausalLM", "MotifForCausalLM", "NemotronForCausalLM", "NemotronHForCausalLM", "Phi3ForCausalLM",
    "PhiMoEForCausalLM", "SolarForCausalLM", "TeleChat2ForCausalLM", "TeleFLMForCausalLM", "XverseForCausalLM"))
VLLM_LORA_VOCAB_0340 = frozenset((
    "ApertusForCausalLM", "Cohere2ForCausalLM", "CohereForCausalLM", "DFlash2DraftModel", "DFlashDraftModel",
    "DFlashMuseGlimmerAssistantModel", "DFlashQwen3XPressModel", "DeciLMForCausalLM", "Eagle3Qwen3ForCausalLM",
    "EagleCohereForCausalLM", "EagleMiniCPMForCausalLM", "Ernie4_5ForCausalLM", "Exaone4ForCausalLM",
    "ExaoneForCausalLM", "ExaoneMoEForCausalLM", "ExaoneMoeForCausalLM", "FalconH1ForCausalLM", "Gemma4DSparkModel",
    "GraniteForCausalLM", "GraniteMoeForCausalLM", "GraniteMoeHybridForCausalLM", "GraniteMoeSWAForCausalLM",
    "GraniteMoeSharedForCausalLM", "GraniteSWAForCausalLM", "HyperCLOVAXForCausalLM", "IQuestCoderForCausalLM",
    "InternLM3ForCausalLM", "JambaForCausalLM", "JambaForSequenceClassification", "JinaEmbeddingsV5Model",
    "K2HorizonForCausalLM", "LLaMAForCausalLM", "Lfm2ForCausalLM", "Lfm2MoeForCausalLM", "Lfm3ForCausalLM",
    "LiLiCorrDraftModel", "Llama4ForCausalLM", "LlamaForCausalLM", "LlamaModel", "MiniCPM3ForCausalLM",
    "MiniCPMForCausalLM", "MistralModel", "MixtralForCausalLM", "MossAudioModel", "MuseGlimmerAssistantModel",
    "NemotronForCausalLM", "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM", "Param2MoEForCausalLM",
    "Phi3ForCausalLM", "PhiMoEForCausalLM", "Qwen3DSparkModel", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM",
    "Qwen3OmniDSparkModel", "Qwen3XPressModel", "SolarForCausalLM", "TeleChat2ForCausalLM", "TeleChat3ForCausalLM",
    "TeleFLMForCausalLM"))
VLLM_LORA_VOCAB_READ = ("0.11.0", "0.34.0")  # the wheels whose every model file was read for the lists above
VLLM_LORA_TARGETS_SINCE = "0.34.0"


class VllmLoraRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """How a vLLM release shapes its LoRA slots (core/memory/lora.py vllm_slots)."""

    since: str
    extra_vocab: int  # lora_extra_vocab_size rows each embedding / LM-head slot adds (0: none)
    logits_padding: int  # the LM head's B rows are padded to a multiple of this (1: none)
    target_flag: bool  # --lora-target-modules narrows the wrapped modules
    vocab_architectures: frozenset[str]  # whose embedding and LM head get slots
    vocab_unread_architectures: frozenset[str]  # read to have them at a later release, not read at this one
    source: str


VLLM_LORA_ROWS = (
    VllmLoraRow("0.0.0", 256, 256, False, VLLM_LORA_VOCAB_0110, frozenset(),
                "vllm/lora/layers/base_linear.py, vocal_parallel_embedding.py, logits_processor.py@v0.11.0 "
                "create_lora_weights (extra vocabulary 256, LM head padded to 256); "
                "v1/worker/gpu_model_runner.py@v0.11.0 load_model (inside 'Model loading took'); releases before "
                "0.11.0 not read: taken as 0.11.0"),
    # between the two fully read wheels: the architectures that declare the modules at both ends
    VllmLoraRow("0.12.0", 0, 1, False, VLLM_LORA_VOCAB_0110 & VLLM_LORA_VOCAB_0340,
                VLLM_LORA_VOCAB_0340 - VLLM_LORA_VOCAB_0110,
                "vllm/lora/layers/base_linear.py, logits_processor.py@v0.12.0 and @v0.13.0 create_lora_weights (no "
                "extra vocabulary; LM head B at "
                "the model's vocabulary); embedding slots for the architectures that declare them at both 0.11.0 "
                "and 0.34.0"),
    VllmLoraRow(VLLM_LORA_TARGETS_SINCE, 0, 1, True, VLLM_LORA_VOCAB_0340, frozenset(),
                "vllm/lora/layers/base_linear.py, vocab_parallel_embedding.py, logits_processor.py@v0.34.0 "
                "create_lora_weights; config/lora.py@v0.34.0 target_modules; "
                "v1/worker/gpu/model_runner.py@v0.34.0 load_model (inside 'Model loading took')"),
)
_VLLM_LORA_KEYS = keyed_by_release(VLLM_LORA_ROWS)


def vllm_lora_row(version: str | None) -> VllmLoraRow:
    return row_for("vllm", _VLLM_LORA_KEYS, version)


# SGLang: LoRAManager builds its LoRAMemoryPool (lora/mem_pool.py init_buffers) right after the weights load and
# before init_memory_pool (model_executor/model_runner.py@v0.5.5 initialize; @v0.5.23 maybe_init_lora_manager
# "before the KV cache is sized"), so profile_max_num_token's free memory is already short of it. Per slot
# (--max-loras-per-batch), target module and layer: A (rank x stacked slices, input), B (output, rank) at the
# model's dtype; row-parallel modules (o_proj, down_proj) split A's input over TP, the others B's output
# (get_lora_A_shape / get_lora_B_shape). `--lora-target-modules all` means the linear projections up to 0.5.6
# (utils/common.py SUPPORTED_LORA_TARGET_MODULES@v0.5.5, @v0.5.6); from 0.5.7 embed_tokens and lm_head too
# (@v0.5.7), dropped again from `all` under the csgmv backend up to 0.5.9 (server_args.py@v0.5.7, @v0.5.8,
# @v0.5.9: "LoRA backend 'csgmv' does not yet support embedding or lm_head layers"); from 0.5.10 kept (and
# resolved from the model's own linears plus EMBEDDING_NAMES from 0.5.14: lora_manager.py@v0.5.14, @v0.5.23).
# Embedding buffers (mem_pool.py@v0.5.8 get_embedding_lora_A_shape / _B_shape): embed_tokens A (rank x vocab) and
# B (hidden x rank), lm_head A (rank x hidden) and B (vocab x rank), all whole on every rank at 0.5.7-0.5.9 ("Have
# not imp self.tp_size > 1 yet"); from 0.5.10 the LM head's B has the rank's vocabulary shard
# (get_lm_head_lora_b_shard_size: shard_indices.num_org_elements).


class SglangLoraRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """How an SGLang release shapes its LoRA memory pool (core/memory/lora.py sglang_slots)."""

    since: str
    modelled: bool
    all_targets: frozenset[str]  # what `--lora-target-modules all` books
    vocab_modules: bool  # embed_tokens / lm_head buffers exist
    vocab_dropped_by: str  # the backend that drops them from `all` ("" : none)
    lm_head_sharded: bool  # the LM head's B holds the rank's vocabulary shard at TP > 1
    source: str


_SGLANG_LORA_LINEAR = frozenset(("qkv_proj", "o_proj", "gate_up_proj", "down_proj"))
_SGLANG_LORA_ALL = _SGLANG_LORA_LINEAR | {"embed_tokens", "lm_head"}
SGLANG_LORA_ROWS = (
    SglangLoraRow("0.0.0", False, frozenset(), False, "", False,
                  "python/sglang/srt/lora/mem_pool.py before v0.5.5: not read"),
    SglangLoraRow("0.5.5", True, _SGLANG_LORA_LINEAR, False, "", False,
                  "python/sglang/srt/lora/mem_pool.py@v0.5.5 init_buffers; model_executor/model_runner.py@v0.5.5 "
                  "(init_lora_manager before init_memory_pool); utils/common.py@v0.5.5 "
                  "SUPPORTED_LORA_TARGET_MODULES (0.5.6 the same)"),
    SglangLoraRow("0.5.7", True, _SGLANG_LORA_ALL, True, "csgmv", False,
                  "python/sglang/srt/server_args.py@v0.5.7 to @v0.5.9 (all = SUPPORTED_LORA_TARGET_MODULES, "
                  "embed_tokens and lm_head dropped under csgmv); lora/mem_pool.py@v0.5.8 embedding buffers"),
    SglangLoraRow("0.5.10", True, _SGLANG_LORA_ALL, True, "", True,
                  "python/sglang/srt/lora/mem_pool.py@v0.5.10 to @v0.5.23 (LM head B per vocabulary shard); "
                  "lora/lora_manager.py@v0.5.14 to @v0.5.23 init_lora_shapes (all = the model's linears and "
                  "EMBEDDING_NAMES)"),
)
_SGLANG_LORA_KEYS = keyed_by_release(SGLANG_LORA_ROWS)


def sglang_lora_row(version: str | None) -> SglangLoraRow:
    return row_for("sglang", _SGLANG_LORA_KEYS, version)
# --- NCCL and custom all-reduce by interconnect (vLLM) ---------------------------------------------------
# vLLM's custom all-reduce (vllm/distributed/device_communicators/custom_all_reduce.py, CustomAllreduce.__init__
# and finalize_p2p) serves the TP group only (cuda_communicator.py: "only tp uses custom allreduce"; PP uses
# NCCL send/recv) and stays off when
#   - --disable-custom-all-reduce is given (init_worker_distributed_environment: set_custom_all_reduce(not ...));
#   - the TP size is not in _SUPPORTED_WORLD_SIZES = [2, 4, 6, 8] ("unsupported world size");
#   - TP > 2 and the GPUs are not fully connected by NVLink: "Custom allreduce is disabled because it's not
#     supported on more than two PCIe-only GPUs" (platforms/cuda.py is_fully_connected asks NVML for
#     nvmlDeviceGetP2PStatus(..., NVML_P2P_CAPS_INDEX_NVLINK) == NVML_P2P_STATUS_OK for every pair);
#   - GPU P2P is missing ("your platform lacks GPU P2P capability or P2P test failed": GeForce cards);
#   - the group spans nodes (gsg does not know the node layout; a TP group is assumed to be on one node).
# When on, each rank holds three buffers of max_size = 8192 * 1024 bytes: the metadata buffer (meta_size() +
# max_size, IPC-shared), the registered input buffer (max_size, IPC-shared) and rank_data (8 MiB); meta_size(),
# the few-KiB signal struct, is left out.
CUSTOM_ALL_REDUCE_SIZES = (2, 4, 6, 8)
CUSTOM_ALL_REDUCE_BUFFERS = 3 * 8192 * 1024
# NCCL's own share of COMM_BUFFERS, profiled (inside the budget) before 0.11 on NVLink-connected and unknown GPUs,
# with custom all-reduce's buffers where vLLM's rules turn it on. The logs say NVLink NCCL is larger
# still (V04, vllm PR #10511, H100 TP2 V0: non-torch 1.79 -> 3.58 GiB from TP1 to TP2, measured before PR #11809
# stopped counting allocator slack as non-torch; vllm PR #25359: "NCCL buffers (~4.5 GiB for tensor
# parallelism)" on 80 GB GPUs, TP size not stated): not refitted, the estimate stands.
NCCL_BUFFERS = COMM_BUFFERS - CUSTOM_ALL_REDUCE_BUFFERS
# A group whose ranks cannot reach each other by P2P runs NCCL without its P2P transport, whatever the GPU name
# says: NCCL_P2P_DISABLE=1 in the deployment's env (NCCL's own switch: NCCL takes shared memory or the network
# instead), or what a vLLM log prints when custom all-reduce finds no P2P between the ranks (custom_all_reduce.py
# @v0.10.1.1 CustomAllreduce.__init__: "spans across nodes" from in_the_same_node_as, "lacks GPU P2P capability"
# from _can_p2p). Such a group is booked as a peerless one (NON_TORCH_PCIE_PARALLEL with NCCL inside, no NVLink
# NCCL share in the budget); custom all-reduce still follows the name and --disable-custom-all-reduce.
NCCL_P2P_DISABLE_ENV = "NCCL_P2P_DISABLE"
# PCIe-only GPUs (P2P over PCIe) and GPUs without P2P (GeForce): non-torch memory per rank as logged, NCCL
# included (every log is from before 0.11, where NCCL is set up after the snapshot and profiled as non-torch):
#   V24 (vLLM 0.10.2, 8x L40S TP8 + EP, custom all-reduce off): "0.21 GiB for non-torch memory" (0.17-0.21)
#   V22 (vllm#13061, V0 0.7.2, 2x RTX 4090 TP2, no P2P): "non_torch_memory takes 0.25GiB"
#   vllm PR #14447 (a V0 worker of April 2025, 23.58 GiB cards, GPU not named in the log): "non_torch_memory takes
#   0.20GiB", in line with them
# The largest is taken, with no NCCL term on top before 0.11 (it is inside); custom all-reduce, where vLLM's rules
# turn it on (a PCIe pair), is added. From 0.11 NCCL leaves the snapshot: the figure stays in the budget whole (no
# PCIe log of 0.11+ prints non-torch; fewer KV tokens rather than more) and outside it gsg keeps COMM_BUFFERS, as
# on every interconnect and whether custom all-reduce is on or not: no log sizes NCCL outside the snapshot, NCCL
# keeps allocating after the profile (connections made at first use, CUDA-graph capture of NCCL all-reduce where
# custom all-reduce is off: nccl#1234 on two L4s), and GSG034's ALLOCATOR_SLACK was fitted with it (the field
# notes' 4x RTX A6000 TP4, PCIe-only, OOM at gmu 0.92).
NON_TORCH_PCIE_PARALLEL = int(0.25 * GiB)
# Outside the budget from 0.11 on a group without P2P at all (GeForce cards, NCCL_P2P_DISABLE=1): NCCL then takes
# its SHM transport, whose FIFOs are host allocations (nccl src/transport/shm.cc, unless NCCL_SHM_USE_CUDA_MEMCPY),
# and the only measured figure of its device memory there is V22's logged non-torch memory with NCCL inside it
# (2x RTX 4090, no P2P, 0.25 GiB): that whole figure. PCIe-only groups with P2P keep COMM_BUFFERS (P2P transport
# buffers live on the device; GSG034's ALLOCATOR_SLACK was set with it on the field notes' RTX A6000 TP4).
COMM_BUFFERS_NO_P2P = NON_TORCH_PCIE_PARALLEL


class NonTorchRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """Non-torch memory per rank that vLLM's profile counts inside the budget, from release `since` on, for one
    class of GPU group: "single" (TP x PP = 1), "nvlink" (NVLink-connected, and GPUs gsg cannot place) or
    "peerless" (PCIe-only and no-P2P GPUs, interconnect.PEERLESS)."""

    since: str
    links: str
    in_budget: int
    source: str


# What memory_profiling (vllm/utils/mem_utils.py) calls non_torch_increase: everything the device lost since the
# worker's init snapshot that torch's allocator does not hold. From 0.11.0 the snapshot is taken after
# init_worker_distributed_environment (v1/worker/gpu_worker.py init_device@v0.11.0 .. @v0.19.0), so NCCL's set-up
# and the symmetric-memory all-reduce buffers (VLLM_ALLREDUCE_USE_SYMM_MEM, default "1" from 0.11.0, envs.py) are
# outside it (COMM_BUFFERS); what the profile run adds (NCCL connections made at first use, cuBLAS/cuBLASLt
# workspaces, loaded kernel images) stays in. No public log of 0.11+ prints the in-budget figure for an NVLink TP
# group (0.11+ logs it at debug level, "GiB for non-torch memory"), so that row keeps the pre-0.11 figure:
# an assumption, named as such in its source, until a log sizes it.
VLLM_NON_TORCH = (
    NonTorchRow("0.0.0", "single", NON_TORCH_SINGLE,
                "vllm#10517, RTX 3090, TP 1: 'non_torch_memory 0.35GiB' (V0); V14 0.29 TP 1 logs weights + non-torch "
                "2.81 GiB in line with it"),
    NonTorchRow("0.0.0", "nvlink", NON_TORCH_PARALLEL,
                "llm-d capacity planner's TP >= 2 figure; NCCL on top of it before 0.11 (NCCL_BUFFERS): V04 (vllm PR "
                "#10511, H100 TP 2, V0) logs 3.58 GiB with allocator slack counted as non-torch"),
    NonTorchRow("0.0.0", "peerless", NON_TORCH_PCIE_PARALLEL,
                "NCCL inside: V22 (vllm#13061, 2x RTX 4090 TP 2) 0.25 GiB, V24 (8x L40S TP 8, 0.10.2) 0.17-0.21, "
                "vllm PR #14447 (23.58 GiB cards) 0.20; also vllm#15815 (2x L40S TP 2, V0) 0.30 and vllm#14452 "
                "(RTX 5090 workers, V0) 0.33 GiB: the spread is 0.17-0.33 GiB"),
    # V0 alone on a GPU: up to 0.6.4 the profiler took everything the device held beyond torch's allocations
    # (worker.py@v0.6.4 determine_num_available_blocks: mem_get_info total - free - allocated), so the CUDA context
    # was inside vllm#10517's 0.35 GiB; from 0.6.5 memory_profiling (utils.py@v0.6.5) subtracts the baseline taken
    # in init_device after CUDA starts (worker.py@v0.6.5 init_gpu_memory; MemorySnapshot in @v0.7.3), leaving only
    # what the profile run adds outside torch (kernel images loaded on first use): 0.01-0.16 GiB in eight public
    # V0 logs of 0.7.3-0.9 (H100 0.16 three times, V100 0.09, RTX 3090 0.06, T4 0.05, RTX 4070 Laptop 0.02, A100
    # 40GB 0.01); the largest is booked, no log's own figure
    NonTorchRow("0.0.0", "single-v0", NON_TORCH_SINGLE, "as 'single': vllm#10517 (0.6.4), the CUDA context inside"),
    NonTorchRow("0.6.5", "single-v0", int(0.16 * GiB),
                "worker.py@v0.6.5 / utils.py@v0.6.5 memory_profiling: non-torch measured from the post-CUDA-init "
                "baseline; the largest of eight public V0 TP 1 logs of 0.7.3-0.9 (0.01-0.16 GiB: v0.8-llama-h100-"
                "gateway, v0-qwen3-06b-h100-gmu080, v0.7-llama32-11b-vision-h100 print 0.16)"),
    NonTorchRow("0.11.0", "nvlink", NON_TORCH_PARALLEL,
                "assumed unchanged: NCCL and symmetric-memory buffers leave the budget (PR #25359, envs.py@v0.11.0), "
                "no public 0.11+ log prints the in-budget figure of an NVLink TP group"),
)
_NON_TORCH_KEYS = keyed_by_release(VLLM_NON_TORCH)

# The TP group's torch.distributed device group (parallel_state.py GroupCoordinator: torch.distributed.new_group(ranks,
# backend="nccl"), no device_id, so ProcessGroupNCCL makes its NCCL communicator at the first collective on it) is a
# second NCCL communicator beside PyNccl's. From 0.11.0 PyNccl is set up before the worker's memory snapshot, but the
# first collective on the device group is the logits all-gather of the profile's dummy sampler run
# (logits_processor.py _gather_logits: current_platform.use_all_gather() is True under V1 ->
# base_device_communicator.py all_gather -> dist.all_gather_into_tensor(group=self.device_group)), so that
# communicator's buffers are made inside memory_profiling and counted as non-torch. From 0.27.0 CudaCommunicator
# overrides all_gather with PyNccl's (set up before the snapshot): the device group is no longer touched in the
# profile. Only at TP > 1 (a TP group of one gathers nothing); sized as one communicator's share of COMM_BUFFERS
# (NCCL_BUFFERS), the estimate every NCCL communicator gets here. On PCIe and no-P2P groups the logged peerless
# figure already holds NCCL (VLLM_NON_TORCH "peerless"), so it is added on NVLink and unknown groups only. Before 0.11
# every communicator is made after the snapshot: PyNccl's is booked as comm_in_budget (NCCL_BUFFERS), and from 0.6.5
# (V0's first baseline) the device group's, first used by the profile's logits gather, is booked here as well.
class DeviceGroupNcclRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """Whether the TP device group's NCCL communicator is first made inside the profile, from release `since`."""

    since: str
    in_profile: bool
    source: str


VLLM_DEVICE_GROUP_NCCL = (
    DeviceGroupNcclRow("0.0.0", False, "vllm/worker/worker.py@v0.6.4, v1/worker/gpu_worker.py@v0.10.2 init_device "
                       "(the snapshot precedes every communicator: NCCL_BUFFERS in the budget as comm_in_budget)"),
    # V0 gathers the logits with torch.distributed.gather on the TP device group (platforms use_all_gather is V1's),
    # V1 with all_gather_into_tensor on it; either way after the worker's snapshot, so the communicator is non-torch
    # beside PyNccl's (NCCL_BUFFERS in comm_in_budget): two logs of TP 8 on NVSwitch A100s print it (2.10 GiB,
    # 0.7.1; 2.15 GiB on a last PP stage, 0.8.3, whose first stage, which computes no logits, logs 0.93-1.07)
    DeviceGroupNcclRow("0.6.5", True,
                       "vllm/model_executor/layers/logits_processor.py _gather_logits (tensor_model_parallel_gather "
                       "in V0), distributed/parallel_state.py GroupCoordinator.gather (torch.distributed.gather, "
                       "group=self.device_group; new_group without device_id, so made at that first use) and "
                       "worker/worker.py init_device (the baseline, init_gpu_memory @v0.6.5 and baseline_snapshot "
                       "from @v0.7.0, taken before init_worker_distributed_environment) @v0.6.5, @v0.7.0, @v0.7.1 "
                       "and @v0.8.3 (device_communicators/base_device_communicator.py gather); V1's "
                       "v1/worker/gpu_worker.py init_device (init_snapshot first) and base_device_communicator.py "
                       "all_gather @v0.10.2. Logged: 2.10 GiB non-torch at TP 8 on 8x A100-SXM4-40GB (0.7.1, "
                       "v0.7.1-deepseek-coder-v2-lite-8xa100-40gb-tp8-djl.log), 2.15 GiB on the last stage of TP 8 x "
                       "PP 2 (0.8.3, v0.8.3-deepseek-v25-2x8xa100-40gb-tp8-pp2-ray.log); 0.6.4 and before (total - "
                       "free after the profile) not read"),
    DeviceGroupNcclRow("0.11.0", True,
                       "vllm/v1/worker/gpu_worker.py init_device (snapshot after init_worker_distributed_environment), "
                       "distributed/parallel_state.py (new_group, no device_id) and device_communicators/"
                       "base_device_communicator.py all_gather (dist.all_gather_into_tensor on the device group, "
                       "first used by logits_processor.py _gather_logits in the profile) @v0.11.0, @v0.14.0, @v0.19.0, "
                       "@v0.21.0, @v0.24.0 (VLLM_DISTRIBUTED_USE_SPLIT_GROUP's eager binding off by default), "
                       "@v0.25.0 and @v0.26.0 (CudaCommunicator.all_gather takes the base class's but for dim-0 "
                       "symmetric-memory gathers; the logits gather is on the last dim)"),
    DeviceGroupNcclRow("0.27.0", False,
                       "vllm/distributed/device_communicators/cuda_communicator.py@v0.27.0 CudaCommunicator.all_gather "
                       "(PyNccl's all_gather, made before the snapshot; the same @v0.28.0 and @v0.33.0)"),
)
_DEVICE_GROUP_NCCL_KEYS = keyed_by_release(VLLM_DEVICE_GROUP_NCCL)


def vllm_device_group_nccl(version: str | None) -> DeviceGroupNcclRow:
    """The VLLM_DEVICE_GROUP_NCCL row of the release."""
    return row_for("vllm", _DEVICE_GROUP_NCCL_KEYS, version)


# NCCL's NVLink SHARP (NVLS) buffers: on NVSwitch-connected Hopper and Blackwell GPUs (CUDA multicast support) NCCL
# binds multicast memory for a communicator of enough GPUs: each rank holds nHeads (the ranks) x nvlsPerRankSize.
# The size and the rank floor are NCCL's, so they follow the NCCL wheel each vLLM release's torch pins
# (vllm METADATA "torch==", torch's "nvidia-nccl-cu1x==", resolved with pip; src/transport/nvls.cc at each NCCL tag):
#   - before 0.6.4 (torch 2.4, NCCL 2.20): buffers made at communicator init, nChannels x 2 x (buffSize + memSize)
#     per head; vllm#9699 prints it for 8x H200: "nHeads 8 buffSize 4194304 memSize 2097152 nvlsPerRankSize
#     301989888 nvlsTotalSize 2415919104" (24 channels);
#   - 0.6.4 (torch 2.5-2.6, NCCL 2.21.5): the same at init with a 1 MiB buffSize (NVLS_CHUNKSIZE x NCCL_STEPS);
#   - 0.9.0 (torch 2.7, NCCL 2.26.2): ncclNvlsBufferSetup, at the first NVLS collective (runtime connection),
#     nvlsChannels x 2 x NVLS_CHUNKSIZE (128 KiB) x NCCL_STEPS (8) per head, NVLS_NCHANNELS_SM90 16 and _SM100 32,
#     and none at gpuCount <= 2;
#   - 0.10.2 (torch 2.8, NCCL 2.27.3; 2.27.5 under torch 2.9-2.10): Blackwell within one node takes
#     NVLS_NCHANNELS_SM100_NVL 24;
#   - 0.20.0 (torch 2.11, NCCL 2.28.9; 2.30.7 under torch 2.14 is the same): "gpuCount < 2", so TP 2 too.
# One communicator's NVLS memory is counted inside the profile: before 0.11 every communicator is made after the
# snapshot; from 0.11 PyNccl's NVLS buffers connect at its first large all-reduce, which the profile's forward runs
# (all-reduces above custom all-reduce's and symmetric memory's sizes go to PyNccl). Not booked: a second
# communicator's (the device group's all-gather need not pick NVLS), and NVLS of TP groups spread over nodes.
class NvlsRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """NCCL's NVLS memory per head (TP rank) and channel, from vLLM release `since` (the NCCL its torch pins)."""

    since: str
    nccl: str
    min_ranks: int
    bytes_per_head_channel: int  # 2 x the channel's buffer (+ its memSize before NCCL 2.22)
    channels: dict[int, int]  # by compute-capability major: 9 Hopper, 10 Blackwell (one node)
    source: str


NVLS_CHUNK_BUFFER = 128 * 1024 * 8  # NVLS_CHUNKSIZE x NCCL_STEPS (NCCL 2.21+)
VLLM_NVLS = (
    NvlsRow("0.0.0", "2.20", 3, 301_989_888 // 24, {9: 24, 10: 24},
            "NCCL 'NVLS comm ... nHeads 8 buffSize 4194304 memSize 2097152 nvlsPerRankSize 301989888 nvlsTotalSize "
            "2415919104' on 8x H200, NVLS 'only enabled for n > 2 GPUs' (vllm#9699, NCCL 2.20)"),
    NvlsRow("0.6.4", "2.21.5", 3, 2 * (NVLS_CHUNK_BUFFER + 2 * 1024 * 1024), {9: 24, 10: 24},
            "nccl src/transport/nvls.cc@v2.21.5-1 ncclNvlsSetup (nChannels x 2 x (chunk x NCCL_STEPS + "
            "NVLS_MEM_ALIGN_SIZE) per head, at init; the 24 channels of vllm#9699's H200 log); vllm 0.6.4 pins torch "
            "2.5.1, which pins nvidia-nccl-cu12 2.21.5 (torch 2.6 the same)"),
    NvlsRow("0.9.0", "2.26.2", 3, 2 * NVLS_CHUNK_BUFFER, {9: 16, 10: 32},
            "nccl src/transport/nvls.cc@v2.26.2-1 ncclNvlsBufferSetup (nvlsChannels x 2 x chunk x NCCL_STEPS per "
            "head), ncclNvlsInit (gpuCount <= 2: none); torch 2.7 pins nvidia-nccl-cu12 2.26.2"),
    NvlsRow("0.10.2", "2.27.3", 3, 2 * NVLS_CHUNK_BUFFER, {9: 16, 10: 24},
            "nccl src/transport/nvls.cc@v2.27.3-1 and @v2.27.5-1 (NVLS_NCHANNELS_SM100_NVL 24 within a node); "
            "torch 2.8 pins 2.27.3, torch 2.9-2.10 2.27.5"),
    NvlsRow("0.20.0", "2.28.9", 2, 2 * NVLS_CHUNK_BUFFER, {9: 16, 10: 24},
            "nccl src/transport/nvls.cc@v2.28.9-1 and @v2.30.7-1 ncclNvlsInit (gpuCount < 2: TP 2 too); torch 2.11 "
            "pins nvidia-nccl-cu13 2.28.9, torch 2.14 2.30.7"),
)
_NVLS_KEYS = keyed_by_release(VLLM_NVLS)


def vllm_nvls(version: str | None) -> NvlsRow:
    """The VLLM_NVLS row of the release."""
    return row_for("vllm", _NVLS_KEYS, version)


NCCL_NVLS_ENABLE_ENV = "NCCL_NVLS_ENABLE"
# NVLink-class names whose boards link their GPUs without an NVSwitch, so CUDA reports no multicast support and
# NCCL sets NVLS up nowhere: GH200 (one superchip per node, or NVL2's direct NVLink pair)
NVLS_WITHOUT_NVSWITCH = r"\bgh200\b"


def vllm_non_torch(version: str | None, links: str) -> NonTorchRow:
    """The newest VLLM_NON_TORCH row for this class of GPU group at or before the release."""
    keyed = [(since, row) for since, row in _NON_TORCH_KEYS if row.links == links]
    assert keyed, f"VLLM_NON_TORCH has no row for {links!r}"
    return row_for("vllm", keyed, version)


# GPU names by interconnect, lower-cased, tried in this order (regular expressions; the first match wins):
#   unknown: NVL boards (H100 NVL, H200 NVL: NVLink bridges between 2 or 4 boards) and anything unmatched;
#   pcie: a name saying PCIe (H100 PCIe, A100-PCIE-40GB, V100-PCIE), whatever the family;
#   no_p2p: GeForce, TITAN and GTX cards and bare consumer RTX numbers (RTX 3090, RTX 5070 Ti);
#   nvlink: SXM boards (A100-SXM4, V100-SXM2, H100 SXM), "H100 80GB HBM3" (the SXM part's NVML name), H200, H800,
#     H20, GH200, B200, GB200, B300, GB300;
#   pcie: L40S, L40, L20, L4, A40, A30, A16, A10(G), A2, T4, RTX Ax000, RTX 6000/5000/4000/2000 Ada, RTX PRO
#     (Blackwell workstation and server cards), Quadro.
# A bare "A100", "H100" or "A800" is unknown: both forms exist.
GPU_INTERCONNECT = (
    ("unknown", r"\bnvl\b"),
    ("pcie", r"pcie"),
    ("no_p2p", r"geforce|titan|\bgtx\b|\brtx ?[2-5]0[5-9]0\b"),
    ("nvlink", r"sxm|hbm3|\bh200\b|\bh800\b|\bh20\b|\bgh200\b|\bg?b[23]00\b"),
    ("pcie", r"\bl40s?\b|\bl20\b|\bl4\b|\ba40\b|\ba30\b|\ba16\b|\ba10g?\b|\ba2\b|\bt4\b|\brtx a\d{4}\b|"
             r"\brtx (pro )?\d{4}\b|quadro"),
)
# Compute capability by GPU name as NVML reports it (nvidia-smi, GPUStack's worker), lower-cased, first match wins;
# from NVIDIA's "CUDA GPUs - Compute Capability" list. Only what an engine rule reads is kept exact: vLLM 0.8.0-
# 0.10.1 ran the V0 engine below 8.0 (VLLM_V0_FALLBACKS). AMD and unmatched names have none (None: nothing assumed).
GPU_COMPUTE_CAPABILITY = (
    (r"\bv100s?\b|\btitan v\b|\bgv100\b", (7, 0)),  # Volta: Tesla V100-SXM2/-PCIE, V100S, TITAN V, Quadro GV100
    (r"\bt4\b|quadro rtx|titan rtx|\brtx 20[5-9]0\b|\bgtx 16[5-6]0\b|\bt(400|600|1000|1200|2000)\b",
     (7, 5)),  # Turing: Tesla T4, Quadro RTX 4000-8000, TITAN RTX, GeForce RTX 20xx, GTX 16xx, T400-T2000
    (r"\bp100\b", (6, 0)),
    (r"\bp40\b|\bp4\b|\bgtx 10[5-8]0\b|\btitan xp?\b|quadro p\d", (6, 1)),  # Pascal
    (r"\bm[46]0\b", (5, 2)),
    (r"\bk80\b", (3, 7)),
    (r"\ba100\b|\ba800\b|\ba30\b", (8, 0)),
    (r"\ba40\b|\ba10g?\b|\ba16\b|\ba2\b|\brtx a\d{4}\b|\brtx 30[5-9]0\b", (8, 6)),  # Ampere workstation/GeForce
    (r"\bl4\b|\bl40s?\b|\bl20\b|\brtx 40[5-9]0\b|\bada\b", (8, 9)),
    (r"\bgh200\b|\bh100\b|\bh200\b|\bh800\b|\bh20\b", (9, 0)),
    # Blackwell datacentre: B100/B200/GB200 are sm_100, B300/GB300 sm_103 (vLLM's exact 10.0 tests miss them)
    (r"\bg?b[12]00\b", (10, 0)),
    (r"\bg?b300\b", (10, 3)),
    (r"\bgb10\b|dgx spark", (12, 1)),
    (r"\brtx 50[5-9]0\b|\brtx pro \d{4}\b", (12, 0)),
    # Jetson modules, as NVML names them on JetPack 7 ("NVIDIA Thor") and as the CUDA device name reads on
    # JetPack 6 ("Orin", "Orin (nvgpu)"); Thor is sm_110 since CUDA 13 (sm_101 before), Orin sm_87
    (r"\bthor\b", (11, 0)),
    (r"\borin\b", (8, 7)),
)


class UmaFreeRow(TableRow):
    """How an engine reads 'free memory' on an integrated (unified-memory) GPU from `since` on."""

    engine: str
    since: str
    host_available: bool  # True: the host's MemAvailable (psutil); False: cudaMemGetInfo's free
    selector: str  # which GPUs take the host figure
    source: str


# Integrated GPUs: CPU and GPU share one LPDDR memory, cudaMemGetInfo's total is the host's (less firmware
# carve-outs) and its free excludes reclaimable page cache. GH200 is not one: its HBM is the GPU's own and C2C only
# joins it to the Grace memory (torch's is_integrated is false), whatever vLLM's comment lists.
UMA_GPUS = (
    (r"\bgb10\b|dgx spark", "GB10 (DGX Spark)"),
    (r"\bthor\b", "Jetson Thor"),
    (r"\borin\b", "Jetson Orin"),
)
# One row per release range, newest last (first row: the oldest release gsg models).
# vLLM: the budget stays gmu x the CUDA total (worker/utils.py request_memory); what changes is the free figure, which
# both the start-up check (free >= requested) and the consumption (free at the worker's snapshot - free after the
# profile: non-torch increase before 0.27.0, total_consumed from 0.27.0, utils/mem_utils.py) are taken from.
# SGLang: get_available_gpu_memory's free figure is the whole pool arithmetic (total_gpu_memory at start, rest after
# the weights), so there the host figure is the budget itself.
UMA_FREE_MEMORY = (
    UmaFreeRow("vllm", "0.0", False, "none",
               "vllm/utils/__init__.py@v0.10.1..@v0.11.0 MemorySnapshot.measure: torch.cuda.mem_get_info() only"),
    UmaFreeRow("vllm", "0.11.1", True, "compute capability 8.7, 11.0 or 12.1 (Orin, Thor, Spark)",
               "vllm/utils/mem_utils.py@v0.11.1..@v0.19.0 MemorySnapshot.measure: shared_sysmem_device_mem_sms, "
               "free_memory = psutil.virtual_memory().available"),
    UmaFreeRow("vllm", "0.20.0", True, "torch's device property is_integrated",
               "vllm/utils/mem_utils.py@v0.20.0..@v0.34.0 MemorySnapshot.measure with "
               "platforms/cuda.py is_integrated_gpu (get_device_properties().is_integrated)"),
    UmaFreeRow("sglang", "0.0", False, "none",
               "sglang/srt/utils/common.py@v0.5.2/@v0.5.3 get_available_gpu_memory: torch.cuda.mem_get_info() only"),
    UmaFreeRow("sglang", "0.5.4", True, "SM 87, 110 or 121 (SHARED_SYSMEM_DEVICE_MEM_SMS)",
               "sglang/srt/utils/common.py@v0.5.4..@v0.5.8 get_available_gpu_memory: psutil.virtual_memory()"
               ".available"),
    UmaFreeRow("sglang", "0.5.9", True, "torch's device property is_integrated",
               "sglang/srt/utils/common.py@v0.5.9..@v0.5.23 get_available_gpu_memory: props.is_integrated"),
)
# The CUDA total torch reports on a GB10 (a DGX Spark with DGX OS): 'Free memory on cuda:0 at boot caps at
# 101.3-102.2 GiB of 121.69' (vLLM's request_memory refusal quoted in MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks#47;
# gpustack_guard's GB10 vectors take it). Another kit observes 124,546 MiB of host memory (AEON-7/
# vllm-ultimate-dgx-spark#9): firmware carve-outs (display scan-out, ~2 GiB) differ per image, so it is a fact of
# those logs, not a CUDA_TOTALS row (GPUStack's reported total for a GB10 is not in the evidence read).
DEFAULT_GPU_MEMORY_UTILIZATION = 0.9  # GPUStack's worker books 0.9 when the spec sets none (whatever vLLM's default)
GPUSTACK_INJECTED_MAX_MODEL_LEN = 8192  # GPUStack's worker passes --max-model-len 8192 when the native is larger
# V1's OpenAI-server defaults for max_num_batched_tokens and max_num_seqs, per release (EngineArgs.
# _set_default_args_v1, later get_batch_defaults, in vllm/engine/arg_utils.py of the PyPI wheels 0.8.0, 0.8.3,
# 0.8.4, 0.8.5, 0.9.0, 0.9.1, 0.9.2, 0.10.0, 0.10.1, 0.11.0, 0.27.0, 0.27.1, 0.28.0, 0.32.0, 0.33.0, 0.34.0):
# - 0.8.0-0.8.3: "h100" or "h200" in the device name -> 8192 tokens, else 2048; 1024 sequences on every GPU
# - 0.8.4: the same name test picks 1024 or 256 sequences too
# - 0.8.5: device memory >= 70 GiB -> 8192 / 1024, else 2048 / 256
# - 0.9.0: A100s stay on the small tier ("Setting large max_num_batched_tokens for A100 reduces throughput",
#   PR #17885)
# - 0.28.0: >= 160 GiB (B200, B300, MI300X) -> 16384 / 1024
# - GB10 (DGX Spark) is on the small tier from 0.8.5: the memory test reads NVML's total (platforms/cuda.py
#   NvmlCudaPlatform.get_device_total_memory: nvmlDeviceGetMemoryInfo), which has none for the GB10's unified memory
#   (nvidia-smi prints it "Not Supported"), and arg_utils.py takes the failure for 0 GiB (`except Exception:
#   device_memory = 0`, @v0.8.5, @v0.11.0, @v0.20.0 and @v0.30.0): the 0.11.0 log of search-index file 9009555428
#   prints the small tier's 2,048 tokens on a GB10; 0.33.0 names the GB10 (compute capability 12.1) outright
VLLM_BATCH_DEFAULTS = {"huge": (16384, 1024), "big": (8192, 1024), "small": (2048, 256)}
VLLM_BIG_GPU_BYTES = 70 * GiB
VLLM_HUGE_GPU_BYTES = 160 * GiB
VLLM_BATCH_BY_MEMORY_SINCE = "0.8.5"  # before: the device-name test
VLLM_BATCH_SEQS_BY_NAME_SINCE = "0.8.4"  # before: 1024 sequences everywhere
VLLM_BATCH_A100_SMALL_SINCE = "0.9.0"
VLLM_BATCH_HUGE_SINCE = "0.28.0"
VLLM_BATCH_GB10_SMALL_SINCE = "0.8.5"  # NVML has no total for it (above); by name from 0.33.0
# V1 up to 0.11.0 turns chunked prefill on for every generative model whatever the flag says ("V1 always uses
# chunked prefills"; from 0.9.2 only pooling models may turn it off). From 0.11.1 --no-enable-chunked-prefill is
# honoured, and a defaulted max_num_batched_tokens is then at least max_model_len; a defaulted one is also at most
# max_num_seqs x max_model_len from 0.11.1.
VLLM_V1_UNCHUNKED_SINCE = "0.11.1"
# From 0.10.1 a defaulted max_num_seqs is at most max_num_batched_tokens (given or defaulted)
VLLM_SEQS_CAPPED_BY_TOKENS_SINCE = "0.10.1"
VLLM_MIN_PROFILE_TOKENS = 2048  # V0 without chunked prefill profiles max(max_model_len, 2048) tokens
# CUDA-graph capture sizes: V0 [1,2,4]+range(8,257,8); V1 0.8-0.10 [1,2,4]+range(8,513,8), both capped by
# max_num_seqs; V1 0.11+ _set_cudagraph_sizes: [1,2,4]+range(8,256,8)+range(256,max+1,16) with
# max = min(2 x max_num_seqs, 512, max_num_batched_tokens)
CAPTURE_SMALL = (1, 2, 4)
CAPTURE_STEP, CAPTURE_V0_MAX, CAPTURE_V1_EARLY_MAX = 8, 256, 512
CAPTURE_V1_MAX, CAPTURE_V1_WIDE_FROM, CAPTURE_V1_WIDE_STEP = 512, 256, 16
# Capture settings a deployment sets, read as each release reads them (capture_rule of the VllmProfile rows; the
# V0 engine and V1 before 0.10.1 are not read here):
# - "v1-8step" (0.10.1-0.11.0): --cuda-graph-sizes (SchedulerConfig) with one value N captures
#   [1,2,4] + range(8, N+1, 8), several values that list; either is then cut to max_num_batched_tokens
#   (vllm/config/__init__.py@v0.10.1 and @v0.11.0 _set_cudagraph_sizes); the compilation config's own
#   cudagraph_capture_sizes wins over both and is only de-duplicated (config/compilation.py
#   init_with_cudagraph_sizes).
# - "v1" (0.11.1 on): --cudagraph-capture-sizes (and its deprecated alias --cuda-graph-sizes, arg_utils.py@v0.11.1,
#   gone from the 0.13.0 wheel) is the list, cut to max_num_batched_tokens; otherwise --max-cudagraph-capture-size
#   replaces min(2 x max_num_seqs, 512) as the largest size, still cut to max_num_batched_tokens
#   (config/vllm.py@v0.11.1 .. @v0.16.0 _set_cudagraph_sizes).
# - compilation_config.cudagraph_mode (--compilation-config / -O JSON, from 0.10.1): NONE captures nothing,
#   PIECEWISE or FULL one graph per size, FULL_DECODE_ONLY a FULL graph per size up to max_num_seqs only, and
#   FULL_AND_PIECEWISE both (v1/cudagraph_dispatcher.py@v0.10.1 .. @v0.16.0 initialize_cudagraph_keys).
CAPTURE_SETTINGS_RULES = ("v1-8step", "v1")


class VllmCaptureDefaultsRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """What a V1 release's _set_cudagraph_sizes (capture_rule "v1") does beyond the 0.11.1 list, from `since` on."""

    since: str
    # the default largest capture size, min(2 x max_num_seqs, this), keyed by compute-capability major (the
    # "family" vLLM's is_device_capability_family compares: capability // 10); 0 keys every other GPU
    largest_by_family: tuple[tuple[int, int], ...]
    # max_num_batched_tokens is appended when it is at most the largest size (the size cut to the batched tokens
    # is the batched tokens then), so an off-stride batch is captured; the default and a
    # --max-cudagraph-capture-size alike, not an explicit size list
    adds_batched_tokens: bool
    # max_num_seqs is appended when it is at most the default largest size (before the cut to the batched
    # tokens) and at most the batched tokens; the default only (no --max-cudagraph-capture-size, no list)
    adds_max_num_seqs: bool
    # on compute capability 10.x with no capture setting: PIECEWISE graphs on the prefill token grid and FULL decode
    # graphs on the request grid, both up to min(this, max_num_batched_tokens) tokens (0: the shared list)
    sm100_split_grids_to: int
    source: str
    # the compilation config's split keys are read (VLLM_SPLIT_CAPTURE_KEYS); with one set, that kind's sizes come
    # from it on every GPU, the unset kind from the SM100 grid or, elsewhere, the shared list
    reads_split_keys: bool = False


# Read in vllm/config/vllm.py _set_cudagraph_sizes of every wheel from 0.19.0 to 0.34.0 (the newest on the mirror),
# diffed tag by tag: 0.19.0 = 0.19.1 = 0.20.0; 0.20.1 adds the batched-tokens size (unchanged to 0.28.0);
# 0.28.0 the SM100 ceiling (current_platform.is_device_capability_family(100): B200, GB200, B300; not the 12.x
# RTX 50 / RTX PRO / GB10); 0.29.0 appends speculative decoding's uniform-decode sizes (query length > 1: not
# modelled, a draft is not counted at all); 0.31.0 appends max_num_seqs without a draft; 0.32.0 moves the
# sequence-parallel TP-divisible filter out of the function (not modelled at any version); 0.34.0 splits prefill
# and decode grids (_split_cudagraph_capture_sizes), which on SM100 with no capture setting default to
# config/compilation.py@v0.34.0 prefill_cudagraph_capture_grid(min(8192, tokens)) and
# decode_cudagraph_capture_grid(max_num_seqs), its graphs kept within min(8192, tokens) tokens; elsewhere both
# follow the shared list. Unknown GPU names take the family-less entry.
VLLM_CAPTURE_DEFAULTS = (
    VllmCaptureDefaultsRow("0.0.0", ((0, CAPTURE_V1_MAX),), False, False, 0,
                           "vllm/config/vllm.py@v0.11.1 .. @v0.20.0 _set_cudagraph_sizes: min(2 x max_num_seqs, 512) "
                           "cut to max_num_batched_tokens, nothing appended"),
    VllmCaptureDefaultsRow("0.20.1", ((0, CAPTURE_V1_MAX),), True, False, 0,
                           "vllm/config/vllm.py@v0.20.1 _set_cudagraph_sizes ('ensure max_num_tokens is captured if "
                           "within max capture size'); unchanged @v0.27.1"),
    VllmCaptureDefaultsRow("0.28.0", ((0, CAPTURE_V1_MAX), (10, 1024)), True, False, 0,
                           "vllm/config/vllm.py@v0.28.0 _set_cudagraph_sizes (default_max_graph_size = 1024 if "
                           "current_platform.is_device_capability_family(100) else 512); unchanged @v0.30.0 "
                           "without a draft"),
    VllmCaptureDefaultsRow("0.31.0", ((0, CAPTURE_V1_MAX), (10, 1024)), True, True, 0,
                           "vllm/config/vllm.py@v0.31.0 _set_cudagraph_sizes (elif max_num_seqs <= "
                           "max_cudagraph_capture_size: uniform_decode_sizes = [max_num_seqs], kept <= "
                           "max_num_tokens); unchanged @v0.33.0"),
    VllmCaptureDefaultsRow("0.34.0", ((0, CAPTURE_V1_MAX), (10, 1024)), True, True, 8192,
                           "vllm/config/vllm.py@v0.34.0 _split_cudagraph_capture_sizes (wide_defaults on "
                           "is_device_capability_family(100): prefill grid to min(8192, max_num_batched_tokens), "
                           "decode grid to max_num_seqs, max_decode_cudagraph_capture_tokens = 8192); the grids in "
                           "config/compilation.py@v0.34.0; v1/worker/gpu/cudagraph_utils.py _init_candidates",
                           reads_split_keys=True),
)
# The compilation config keys of 0.34.0's split capture sizes (config/compilation.py@v0.34.0 CompilationConfig,
# resolved by config/vllm.py@v0.34.0 _split_cudagraph_capture_sizes): gsg's VllmConfig field for each. Lists keep
# the sizes in [1, max_num_batched_tokens] (prefill) or [1, max_num_seqs] (decode requests), `[]` captures none;
# a max of 0 captures none; max_decode_cudagraph_capture_tokens (>= 1) bounds the decode graphs' tokens. With the
# deprecated cudagraph_capture_sizes / max_cudagraph_capture_size also set, vLLM raises ("cannot be combined").
# Earlier CompilationConfigs have no such fields and forbid extra keys (config/utils.py config(): extra="forbid").
VLLM_SPLIT_CAPTURE_KEYS = {
    "prefill_cudagraph_capture_token_sizes": "prefill_capture_sizes",
    "max_prefill_cudagraph_capture_tokens": "max_prefill_capture_tokens",
    "decode_cudagraph_capture_request_sizes": "decode_capture_requests",
    "max_decode_cudagraph_capture_requests": "max_decode_capture_requests",
    "max_decode_cudagraph_capture_tokens": "max_decode_capture_tokens",
}
VLLM_SPLIT_CAPTURE_SINCE = "0.34.0"


class VllmSpecCaptureRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """How a V1 release's capture sizes follow a draft's query length q = 1 + num_speculative_tokens."""

    since: str
    largest_by_query_len: bool  # the default largest size is min(max_num_seqs x q x 2, the GPU's ceiling)
    appends_uniform_decode: bool  # n x q for n on the request-count grid up to max_num_seqs (within the largest)
    # the V1 model runner (MRV1) rounds every size up to a multiple of q, keeping those within the largest
    # (CompilationConfig.adjust_cudagraph_sizes_for_spec_decode), where decode graphs are FULL
    rounds_to_query_len: bool
    source: str


# The FULL decode graphs with a draft are the capture sizes from q to q x max_num_seqs tokens (v1/
# cudagraph_dispatcher.py@v0.11.1, @v0.14.0, @v0.18.0, @v0.28.0 .. @v0.33.0 initialize_cudagraph_keys: `x <=
# uniform_decode_query_len * max_num_seqs and x >= uniform_decode_query_len`), one token each without a draft;
# 0.34.0 keys them by request count instead (config/vllm.py@v0.34.0 decode_cudagraph_capture_shapes: n requests x
# q tokens, n up to the decode token budget / q). Not modelled: EAGLE's one-token draft decode graphs
# (get_draft_decode_cudagraph_request_sizes, 0.34.0), dynamic per-batch-size draft widths, adaptive verification,
# 0.11.1's rounding to max(q, TP) at TP > 1 (0.14.0+: only under sequence parallelism), and the V2 runner's own
# sizing (v1/worker/gpu/cudagraph_utils.py, not read with a draft).
VLLM_SPEC_CAPTURE = (
    VllmSpecCaptureRow("0.0.0", False, False, False, "before vllm 0.11.1: not read with a draft (no draft term)"),
    VllmSpecCaptureRow("0.11.1", False, False, True,
                       "vllm/config/vllm.py@v0.11.1 _set_cudagraph_sizes: min(max_num_seqs * 2, 512), no draft term; "
                       "v1/worker/gpu_model_runner.py@v0.11.1 calls config/compilation.py "
                       "adjust_cudagraph_sizes_for_spec_decode (round_up(size, q) within max_cudagraph_capture_size) "
                       "when decode_mode() is FULL with a separate routine and q > 1"),
    VllmSpecCaptureRow("0.14.0", True, False, True,
                       "vllm/config/vllm.py@v0.14.0, @v0.18.0, @v0.28.0 _set_cudagraph_sizes: decode_query_len = 1 + "
                       "num_speculative_tokens; max_cudagraph_capture_size = min(max_num_seqs * decode_query_len * 2, "
                       "512 (1024 on SM100 from 0.28.0)); the MRV1 rounding as 0.11.1 (config/compilation.py@v0.28.0 "
                       "calls it itself, `not use_v2_model_runner`)"),
    VllmSpecCaptureRow("0.29.0", True, True, True,
                       "vllm/config/vllm.py@v0.29.0 .. @v0.33.0 _set_cudagraph_sizes: uniform_decode_sizes = n * "
                       "query_len for n in request_counts(max_num_seqs) within the largest size, appended when at "
                       "most max_num_batched_tokens; max_num_seqs alone only without a draft; the MRV1 rounding "
                       "(config/compilation.py@v0.29.0, @v0.33.0)"),
    VllmSpecCaptureRow("0.34.0", True, True, False,
                       "config/vllm.py@v0.34.0: the shared sizes as 0.29.0, then _split_cudagraph_capture_sizes keys "
                       "decode graphs by request count at q tokens; config/compilation.py@v0.34.0 has no "
                       "adjust_cudagraph_sizes_for_spec_decode"),
)
_VLLM_SPEC_CAPTURE_KEYS = keyed_by_release(VLLM_SPEC_CAPTURE)


def vllm_spec_capture_row(version: str | None) -> VllmSpecCaptureRow:
    return row_for("vllm", _VLLM_SPEC_CAPTURE_KEYS, version)


class VllmMtpDraftRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """What the V1 drafter keeps of a target's own multi-token-prediction (MTP) layers (--speculative-config
    method mtp / deepseek_mtp / glm4_moe_mtp). counted False: the release is not read (the note stays)."""

    since: str
    counted: bool
    keeps_mtp_head: bool  # each MTP layer's SharedHead.head (vocab x hidden, split over TP) stays loaded
    source: str


# Read at every tag from 0.10.1 to 0.34.0. The drafter is built from the target's config (num_nextn_predict_layers
# MTP layers, indices L .. L+n-1: deepseek_mtp.py / glm4_moe_mtp.py DeepSeekMultiTokenPredictor /
# Glm4MoeMultiTokenPredictor): per layer enorm, hnorm and SharedHead.norm (hidden each), eh_proj (a plain
# nn.Linear 2H -> H: every TP rank holds it whole, unquantised), SharedHead.head (ParallelLMHead) and one decoder
# layer of the target's own shape and quantisation; one VocabParallelEmbedding for all. It is loaded inside
# gpu_model_runner.load_model's DeviceMemoryProfiler (after "Loading drafter model..."), so "Model loading took"
# includes it; at PP 1 the embedding is deleted for the target's (eagle.py load_model "share embed_tokens",
# llm_base_proposer.py _maybe_share_embeddings "Detected MTP model", worker/gpu/spec_decode/eagle/utils.py@v0.34.0
# maybe_share_target_embed). The draft's attention layers join the static forward context, so get_kv_cache_spec
# (v1/worker/gpu_model_runner.py) gives them pages in the target's KV group: bytes per token grow by n layers.
# Not counted: the drafter's dummy_run inside profile_run (one decoder layer at the step's tokens, after the
# target's forward freed its own activations) and its CUDA graphs; PP > 1 (the embedding is then the drafter's own).
VLLM_MTP_DRAFT = (
    VllmMtpDraftRow("0.0.0", False, True, "before vllm 0.10.1: the V0 MTP worker is not read"),
    VllmMtpDraftRow("0.10.1", True, True,
                    "v1/spec_decode/eagle.py@v0.10.1 .. @v0.14.0 load_model: embed_tokens shared at PP 1; the "
                    "target's lm_head is set on model.lm_head, which the MTP layers do not use: each "
                    "SharedHead.head (deepseek_mtp.py, glm4_moe_mtp.py) stays loaded"),
    VllmMtpDraftRow("0.16.0", True, False,
                    "v1/spec_decode/eagle.py@v0.16.0 .. @v0.19.0, llm_base_proposer.py@v0.20.0 .. @v0.33.0 "
                    "_maybe_share_lm_head, worker/gpu/spec_decode/eagle/utils.py@v0.34.0 load_eagle_model: every "
                    "MTP layer's shared_head.head is deleted for the target's lm_head"),
)
_VLLM_MTP_DRAFT_KEYS = keyed_by_release(VLLM_MTP_DRAFT)
# --speculative-config methods that draft with the target's own MTP layers, and the targets whose MTP module
# (deepseek_mtp.py, glm4_moe_mtp.py) was read; other MTP targets (Qwen3-Next, MiMo, ERNIE, DeepSeek-V3.2's indexer,
# DeepSeek-V4) keep the note
VLLM_MTP_METHODS = frozenset({"mtp", "deepseek_mtp", "glm4_moe_mtp"})
VLLM_MTP_TARGETS = {"DeepseekV3ForCausalLM": "deepseek_mtp.py", "Glm4MoeForCausalLM": "glm4_moe_mtp.py"}


def vllm_mtp_draft_row(version: str | None) -> VllmMtpDraftRow:
    return row_for("vllm", _VLLM_MTP_DRAFT_KEYS, version)


class VllmGatedDeltaSpecRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """How a release sizes a Gated DeltaNet target's states with a draft; read False keeps GSG030."""

    since: str
    read: bool
    source: str


# A Gated DeltaNet target (Qwen3-Next, Qwen3.5/3.6) with its own MTP layer drafting n = num_speculative_tokens:
# every linear layer's MambaSpec gets num_speculative_blocks = n (model_executor/layers/mamba/abstract.py
# get_kv_cache_spec), so a sequence holds 1 + n state pages (2 + n in mode "align"), and its conv state keeps
# kernel - 1 + n rows (mamba_utils.py gated_delta_net_state_shape's num_spec, passed by qwen3_next.py /
# qwen3_5.py get_mamba_state_shape_from_config, which also sizes the page the attention block is raised to). The
# MTP module (qwen3_next_mtp.py, qwen3_5_mtp.py) is one full-attention decoder layer of the target's shape, one
# fc (ColumnParallelLinear 2H -> H, split over TP), three norms; its lm_head and embedding are the target's at PP 1.
VLLM_GATED_DELTA_SPEC = (
    VllmGatedDeltaSpecRow("0.0.0", False, "v1/kv_cache_interface.py@v0.14.0 MambaSpec.max_memory_usage_bytes "
                                          "(cdiv(max_model_len, block) pages) is not read with speculative blocks"),
    VllmGatedDeltaSpecRow("0.16.0", True,
                          "v1/kv_cache_interface.py@v0.16.0, @v0.24.0, @v0.34.0 MambaSpec.max_memory_usage_bytes: "
                          "page x (1 + num_speculative_blocks), (2 + n) in mode align; model_executor/layers/mamba/"
                          "abstract.py@v0.24.0 num_speculative_blocks; mamba_utils.py@v0.24.0 "
                          "gated_delta_net_state_shape conv rows kernel - 1 + num_spec"),
)
_VLLM_GATED_DELTA_SPEC_KEYS = keyed_by_release(VLLM_GATED_DELTA_SPEC)
VLLM_GATED_DELTA_MTP_METHODS = frozenset({"mtp", "qwen3_next_mtp", "qwen3_5_mtp"})
VLLM_GATED_DELTA_MTP_TARGETS = {"Qwen3NextForCausalLM": "qwen3_next_mtp.py",
                                "Qwen3_5ForConditionalGeneration": "qwen3_5_mtp.py",
                                "Qwen3_5MoeForConditionalGeneration": "qwen3_5_mtp.py"}


def vllm_gated_delta_spec_row(version: str | None) -> VllmGatedDeltaSpecRow:
    return row_for("vllm", _VLLM_GATED_DELTA_SPEC_KEYS, version)
_CAPTURE_DEFAULTS_KEYS = keyed_by_release(VLLM_CAPTURE_DEFAULTS)


def vllm_capture_defaults_row(version: str | None) -> VllmCaptureDefaultsRow:
    """The capture-size defaults row of a vLLM release (as the arithmetic reads the version)."""
    return row_for("vllm", _CAPTURE_DEFAULTS_KEYS, version)


# CUDA graphs of a LoRA deployment (--enable-lora): each capture size is captured once per LoRA case, PIECEWISE and
# FULL sets alike, so the capture bars count sizes x cases and vLLM's graph-memory estimate (0.18.0+) prices them all
# (profile_cudagraph_memory takes the dispatcher's capture descriptors). Read per tag:
#   0.0.0   v1/worker/gpu_model_runner.py@v0.11.0 capture_model: one case per size (the graphs hold the LoRA kernels)
#   0.11.2  gpu_model_runner.py@v0.11.2, @v0.12.0, @v0.13.0, @v0.14.1 capture_model: lora_cases [True, False] while
#           compilation_config.cudagraph_specialize_lora (config/compilation.py: default True), else [True];
#           v1/cudagraph_dispatcher.py@v0.19.0, @v0.24.0, @v0.30.0 _get_lora_cases and (V2 runner)
#           v1/worker/gpu/lora_utils.py@v0.30.0 get_lora_capture_cases: [0] + lora/utils.py
#           get_captured_lora_counts(max_loras, --specialize-active-lora): [max_loras + 1] without the flag (two
#           cases), with it every power of two up to max_loras and max_loras + 1. 0.11.1 not read.
class VllmLoraGraphRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    since: str
    specialized: bool  # cudagraph_specialize_lora (default True) captures the sizes with and without LoRA
    source: str


VLLM_LORA_GRAPH_ROWS = (
    VllmLoraGraphRow("0.0.0", False, "vllm/v1/worker/gpu_model_runner.py@v0.11.0 capture_model (one case)"),
    VllmLoraGraphRow("0.11.2", True, "vllm/v1/worker/gpu_model_runner.py@v0.11.2 .. @v0.14.1 capture_model "
                     "lora_cases; vllm/v1/cudagraph_dispatcher.py@v0.19.0 .. @v0.30.0 _get_lora_cases; "
                     "vllm/lora/utils.py get_captured_lora_counts; config/compilation.py cudagraph_specialize_lora"),
)
_LORA_GRAPH_KEYS = keyed_by_release(VLLM_LORA_GRAPH_ROWS)


def vllm_lora_graph_row(version: str | None) -> VllmLoraGraphRow:
    return row_for("vllm", _LORA_GRAPH_KEYS, version)


class VllmModelCaptureRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """A model's own config hook (model_executor/models/config.py MODELS_CONFIG_MAP, run by
    VllmConfig.try_verify_and_update_config before the capture sizes are set) that widens its capture sizes."""

    since: str
    # "none": no hook; "scheduler-list": one scheduler size (--cuda-graph-sizes or its default) below `largest`
    # becomes 1, 2, 4, every 8 below 256, every 16 to `largest`; "max-size": max_cudagraph_capture_size = `largest`
    # when no size is set; "split": 0.34.0's prefill token sizes to min(batched tokens, `largest`) and at most
    # `largest` // q decode requests when no size key is set, except on compute capability 10.x
    form: str
    largest: int
    source: str


# GptOssForCausalLMConfig.verify_and_update_config read at every tag from 0.10.1 (gpt-oss's first release) to 0.34.0:
# 0.10.1 = 0.10.1.1 = 0.10.2; 0.11.0 caps it at 992 ("When using full cuda graph with FA3, the max supported size
# is 992"); 0.11.1 .. 0.33.0 identical; 0.34.0 sets the split keys and skips SM100, whose defaults are wider.
VLLM_MODEL_CAPTURE = {
    "GptOssForCausalLM": (
        VllmModelCaptureRow("0.0.0", "none", 0, "no gpt-oss support before vllm 0.10.1"),
        VllmModelCaptureRow("0.10.1", "scheduler-list", 1024,
                            "vllm/model_executor/models/config.py@v0.10.1 .. @v0.10.2 GptOssForCausalLMConfig "
                            "(len(scheduler_config.cuda_graph_sizes) == 1 and below 1024: [1, 2, 4] + range(8, 256, "
                            "8) + range(256, 1025, 16)), then config/__init__.py _set_cudagraph_sizes cuts the list to "
                            "max_num_batched_tokens"),
        VllmModelCaptureRow("0.11.0", "scheduler-list", 992,
                            "vllm/model_executor/models/config.py@v0.11.0 GptOssForCausalLMConfig (below 992: [1, 2, "
                            "4] + range(8, 256, 8) + range(256, 993, 16))"),
        VllmModelCaptureRow("0.11.1", "max-size", 1024,
                            "vllm/model_executor/models/config.py@v0.11.1 .. @v0.33.0 GptOssForCausalLMConfig "
                            "(cudagraph_capture_sizes and max_cudagraph_capture_size unset: "
                            "max_cudagraph_capture_size = 1024), cut to max_num_batched_tokens by "
                            "_set_cudagraph_sizes"),
        VllmModelCaptureRow("0.34.0", "split", 1024,
                            "vllm/model_executor/models/config.py@v0.34.0 GptOssForCausalLMConfig (no capture size "
                            "key set and not is_device_capability_family(100): prefill_cudagraph_capture_token_sizes = "
                            "the 1024-token list's sizes below min(max_num_batched_tokens, 1024) and that minimum, "
                            "max_decode_cudagraph_capture_requests = 1024 // the decode query length)"),
    ),
}


@functools.cache
def _model_capture_keys(architecture: str) -> tuple[tuple[Version, VllmModelCaptureRow], ...]:
    return keyed_by_release(VLLM_MODEL_CAPTURE[architecture])  # keyed at first use: one model family, rarely


def vllm_model_capture_row(architecture: str | None, version: str | None) -> VllmModelCaptureRow | None:
    """The capture hook of a model architecture at a vLLM release; None where the architecture has no hook."""
    if architecture not in VLLM_MODEL_CAPTURE:
        return None
    row = row_for("vllm", _model_capture_keys(architecture), version)
    return None if row.form == "none" else row
# gsg's bound on a capture size a deployment sets (--cudagraph-capture-sizes, --cuda-graph-sizes,
# --max-cudagraph-capture-size, the compilation config's): the size lists are built one entry per 8 or 16 tokens,
# so an unbounded size is an unbounded list. vLLM sets none; 2**20 tokens is 64 x the largest default batch.
CAPTURE_SIZE_LIMIT = 2**20
CUDAGRAPH_MODES = ("NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")
CUDAGRAPH_MODE_NUMBERS = {0: "NONE", 1: "PIECEWISE", 2: "FULL"}  # the enum's plain values, as 0.10.x logs print them


class VllmPerformanceModeRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """What vLLM's --performance-mode accepts and changes from one release on (the `since` version)."""

    since: str
    choices: tuple[str, ...]  # argparse choices, case-sensitive (empty: the release has no such flag)
    # "throughput" multiplies max_num_batched_tokens and max_num_seqs by this, each only where the user left it to
    # its default, before the defaulted tokens are bounded by max_num_seqs x max_model_len and the defaulted
    # sequences by the tokens
    throughput_default_factor: int
    # "interactivity" captures every size from 1 up to this (bounded by the largest capture size) in place of
    # 1, 2, 4, when the deployment gives no capture-size list
    interactivity_every_size_to: int
    source: str


# Read in vllm/engine/arg_utils.py and vllm/config/vllm.py of every wheel from 0.16.0 to 0.34.0: 0.16.0 has no
# flag; 0.17.0 adds PerformanceMode = Literal["balanced", "interactivity", "throughput"], default "balanced", which
# goes to argparse as choices (literal_to_kwargs). The doubling and the shared capture head read the same at every
# tag to 0.34.0. The doubling also lands on 0.20.0's batched-DP MoE default (256 tokens) and before 0.22.0's
# multimodal prefix-LM floor; gsg models neither for any mode. 0.34.0 also passes "interactivity" to its SM100
# default prefill grid (modelled with that grid: VLLM_CAPTURE_DEFAULTS) and its adaptive-verification decode grid
# (every size to 32 there too; not modelled: adaptive verification needs a draft, which gsg does not count).
VLLM_PERFORMANCE_MODES = (
    VllmPerformanceModeRow("0.0.0", (), 1, 0, "vllm/engine/arg_utils.py@v0.16.0 (no --performance-mode)"),
    VllmPerformanceModeRow(
        "0.17.0", ("balanced", "interactivity", "throughput"), 2, 32,
        "vllm/engine/arg_utils.py@v0.17.0 _set_default_max_num_seqs_and_batched_tokens_args ('If throughput mode "
        "is set, double max_num_batched_tokens and max_num_seqs', defaulted ones only); vllm/config/vllm.py@v0.17.0 "
        "_set_cudagraph_sizes (interactivity: range(1, min(max capture size, 32) + 1) before the multiples of 8); "
        "unchanged through @v0.33.0"),
    VllmPerformanceModeRow(
        "0.34.0", ("balanced", "interactivity", "throughput"), 2, 32,
        "vllm/engine/arg_utils.py@v0.34.0 _set_default_max_num_seqs_and_batched_tokens_args (the doubling as at "
        "0.17.0); vllm/config/vllm.py@v0.34.0 _set_cudagraph_sizes (the same head on the shared sizes; interactivity "
        "also densifies config/compilation.py@v0.34.0 prefill_cudagraph_capture_grid on SM100, modelled with that "
        "grid, and varlen_decode_cudagraph_capture_grid, not modelled)"),
)
VLLM_PERFORMANCE_MODE_DEFAULT = "balanced"
VLLM_PERFORMANCE_MODE_SINCE = next(row.since for row in VLLM_PERFORMANCE_MODES if row.choices)
_PERFORMANCE_MODE_KEYS = keyed_by_release(VLLM_PERFORMANCE_MODES)


def vllm_performance_mode_row(release: Version) -> VllmPerformanceModeRow:
    """The --performance-mode row of a vLLM release."""
    return row_of_release(_PERFORMANCE_MODE_KEYS, release)


# CUDA-graph memory per (layer x captured graph): Table C, Llama-3.2-1B 0.21 GiB / (16 layers x 35 graphs)
# and Qwen3-Next-80B 2.37 GiB / (48 layers x 134 graphs) both give ~0.38 MiB.
GRAPH_BYTES_PER_LAYER_GRAPH = 384 * KiB
# CUDA-graph memory as vLLM itself estimates it inside the budget (VllmProfile.graphs_profiled, from 0.20.0):
# gpu_model_runner.py profile_cudagraph_memory (0.18.0-0.20.0 wheels alike) captures the two largest graphs of each
# mode in a throwaway pool, takes the first capture's memory as the mode's shared pool and the second's as the cost
# of every further graph ("Use at least 1 MiB per graph for driver overhead"), and returns max(first captures) +
# sum over modes of (graphs - 1) x per-graph cost. PIECEWISE has a graph per capture size, FULL (FULL_AND_PIECEWISE)
# one per uniform-decode size up to max_num_seqs ("PIECEWISE=35 (largest=256), FULL=19 (largest=128)" at 128
# sequences; "PIECEWISE=51 (largest=512), FULL=35 (largest=256)" at 256). The first capture is one graph plus the
# forward's intermediates at the largest size (tokens x (2 x intermediate / tp + 4 x hidden) x 2 B).
# Per graph and layer: GRAPH_ESTIMATE_LAYER_BYTES + GRAPH_ESTIMATE_BYTES_PER_WIDTH x intermediate / tp. The two
# figures come from two public logs of the estimate and are checked on a third (tests/core/memory/
# test_cuda_graph_estimate.py):
#   Qwen3-0.6B w4a16 (28 layers, intermediate 3,072), 0.19.0, 51 + 35 graphs: "Estimated CUDA graph memory: 0.27 GiB"
#   Qwen2.5-7B (28 layers, intermediate 18,944), 35 + 19 graphs: 0.37 GiB (both markdown session logs in the index)
#   check: V14 (vllm PR #57047, Qwen3-4B AWQ, 36 layers, 51 + 35 graphs): 0.42 GiB logged, 0.52 computed (+24 %)
# The flat GRAPH_BYTES_PER_LAYER_GRAPH over two full sets gave 0.74, 0.72 and 1.34 GiB for them.
GRAPH_ESTIMATE_LAYER_BYTES = 90 * KiB
# FlashInfer's attention workspace inside vLLM's own graph estimate: each FlashInfer metadata builder allocates
# VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE (394 MiB, envs.py) lazily (v1/attention/backends/flashinfer.py
# _get_workspace_buffer), and _dummy_run builds attention metadata only for a FULL graph or force_attention
# (v1/worker/gpu_model_runner.py), so the profile run never allocates it and the estimate's first FULL capture does
# (its mem_get_info difference). Read at 0.18.0, 0.19.0, 0.20.0 and 0.24.0 (the same three lines); None before
# 0.18.0, which does not estimate, and from 0.25.0, where the V2 runner (a dense model's default from 0.25, every
# model's from 0.29) shares one workspace made in init_attn_backend (v1/worker/gpu/attn_utils.py) at a point
# relative to the profile not read here. Booked once, for a deployment that names FLASHINFER (--attention-backend):
# gsg does not pick vLLM's backend by platform. Evidence: the 0.20.0 RTX 5090 log (tests/fixtures/logs/vllm/
# v1-0.20-qwen36-35b-a3b-nvfp4-rtx5090-wsl-cutlass.log) estimates 0.39 GiB for 3 + 1 graphs up to size 4, where
# the graphs alone come to 0.01, and its capture took 0.58 GiB.
VLLM_FLASHINFER_GRAPH_WORKSPACE = ((known_version("0.0.0"), None), (known_version("0.18.0"), 394 * MiB),
                                   (known_version("0.25.0"), None))
# FlashInfer's attention workspace in the capture after the KV cache (the "Graph capturing finished ... took" figure of
# the releases that do not estimate graphs before the budget): (since, bytes, warmed). Its metadata builder makes the
# workspace lazily (v1/attention/backends/flashinfer.py _get_workspace_buffer, @v0.10.1 .. @v0.17) and the profile
# run builds no attention metadata (gpu_model_runner.py _dummy_run: only for a FULL graph or force_attention), so
# the first FULL capture allocates it: FLASHINFER_WORKSPACE_BUFFER_SIZE 256 MiB (flashinfer.py@v0.10.1, @v0.11.0),
# VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE 394 MiB from 0.11.1 (envs.py@v0.11.1, @v0.12.0, @v0.13.0). warmed: from
# 0.11.0 kernel_warmup (model_executor/warmup/kernel_warmup.py@v0.11.0, @v0.13.0) runs a force_attention dummy
# batch before the capture when EVERY attention group is FlashInfer ("Warming up FlashInfer attention."), which
# allocates it there: only a model with other groups (Gated DeltaNet beside attention) pays it inside the capture.
# From 0.18.0 the graph estimate before the budget allocates it (VLLM_FLASHINFER_GRAPH_WORKSPACE).
# Evidence: Qwen3-Next-80B-A3B W4A16 TP 2, 0.13.0, FLASHINFER, 5 + 4 graphs: 0.79 GiB logged, 0.16 booked -> 0.55.
VLLM_FLASHINFER_CAPTURE_WORKSPACE = ((known_version("0.0.0"), (None, False)),
                                     (known_version("0.10.1"), (256 * MiB, False)),
                                     (known_version("0.11.0"), (256 * MiB, True)),
                                     (known_version("0.11.1"), (394 * MiB, True)),
                                     (known_version("0.18.0"), (None, False)))
GRAPH_ESTIMATE_BYTES_PER_WIDTH = 8
GRAPH_ESTIMATE_MIN_PER_GRAPH = MiB  # the source's floor per graph
# What V1's "Graph capturing finished in N secs, took X GiB" measures (capture_model: free memory before the
# capture less free memory after it). "net_of_cache": v1/worker/gpu_model_runner.py@v0.10.1, @v0.11.0, @v0.14.0,
# @v0.15.0, @v0.16.0, @v0.17.0 read the free memory before anything empties torch's cache, and the first capture of
# each size does (compilation/cuda_graph.py@v0.11.0-@v0.17.0: torch.cuda.graph empties it on entry; vLLM patches
# that out only for the later pieces, gc_disable), so X is the graphs' memory less the cache the warm-ups before
# the capture left (kernel_warmup's FlashInfer autotune, one forward of max_num_batched_tokens on compute
# capability >= 9.0 with FlashInfer, model_executor/warmup/kernel_warmup.py@v0.11.0): a lower bound, negative when
# that cache was larger. "cache_emptied": @v0.18.0, @v0.20.0, @v0.26.0 (and the V2 runner's gpu/model_runner.py
# @v0.26.0, @v0.34.0) call empty_cache first. None: V1 before 0.10.1 and V0, not read.
VLLM_GRAPH_TOOK_MEASURE: tuple[tuple[Version, str | None], ...] = (
    (known_version("0.0.0"), None), (known_version("0.10.1"), "net_of_cache"),
    (known_version("0.18.0"), "cache_emptied"))
# Peak bytes per (row x vocabulary entry) while V1's dummy sampler sorts the logits (kernel "torch-sort";
# apply_top_k_top_p: logits.sort(dim=-1)), by the path torch takes (aten/src/ATen/native/cuda/SortStable.cu,
# do_launch_stable_sort_kernel; rows are the segments, the vocabulary > 4096 rules out the in-place small sort).
# Always live: the bf16 logits compute_logits returned (2, still held by _dummy_sampler_run), their fp32 copy
# (4), the sorted values (4) and int64 indices (8) = 18. Then, per path:
#   >= 128 rows, segmented_sort_pairs: int64 reverse indices (8) + cub DeviceSegmentedRadixSort::SortPairs'
#     alternate key and value buffers in its temporary storage (4 + 8)                       -> 18 + 20 = 38
#   2-127 rows, segmented_sort_pairs_by_full_sort: two int2 (index, segment) arrays (8 + 8), the keys_out
#     radix_sort_pairs allocates (4) and cub's alternate key and int2 value buffers (4 + 8)   -> 18 + 32 = 50
#   1 row, segmented_sort_large_segments: cub's alternate buffers (4 + 8); the iota is one row -> 18 + 12 = 30
# Evidence: V07 (vllm#27508, gpt-oss-120b, 1024 rows x 201,088) 1.91 GiB computed vs 1.71 logged, where 20
# bytes left 5.4 GiB; V02 (vllm#21348, Qwen3-235B-A22B-FP8 TP4, 1024 rows x 151,936) +41 % -> +9 %.
SAMPLER_SORT_PEAK_BYTES = {"one_row": 30, "full_sort": 50, "segmented": 38}
SAMPLER_SORT_SEGMENTED_FROM_ROWS = 128  # "else if (nsegments < 128)" picks the full-sort path below this


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class VllmSamplerRow:
    """How one release line of vLLM's V1 engine samples in its profile run and in the warm-up after the KV cache.

    kernel: the top-k/top-p path TopKTopPSampler takes on CUDA with the environment unset: "torch-sort" (PyTorch
    sort of the whole vocabulary, SAMPLER_SORT_PEAK_BYTES), "triton" (in-place Triton top-k/top-p from
    SAMPLER_TRITON_MIN_ROWS rows, the sort below) or "flashinfer" (FlashInfer's sampling kernels, no sort).
    profiled: "same" when profile_run's dummy sampler is the warm-up's pass over the same rows, so the warm-up
    fits in the activation memory the profile released; "no-top-k-top-p" when the profile's pass skips them and
    the warm-up's peak was never budgeted. warmup_rows: "v1" min(max_num_seqs, max_num_batched_tokens);
    "v2" min(max_num_seqs, max_num_batched_tokens // 2) (warmup_kernels' two-token prompts).
    """

    __repr__ = fields_repr

    since: str
    kernel: str
    profiled: str
    warmup_rows: str
    source: str
    native: str = "torch-sort"  # the path with FlashInfer's sampler off (VLLM_USE_FLASHINFER_SAMPLER=0, not installed)
    install_dependent: bool = False  # the default path differs between GPUStack's runner image and a bare pip install


# Where a release takes FlashInfer's sampler whenever it imports (0.9.0-0.11.0, install_dependent), the default is
# what GPUStack's image of the release holds (VLLM_GPUSTACK_IMAGES: FlashInfer on amd64 from GPUStack 0.7.0's vLLM
# 0.9.2 on, so the row books it; vllm_sampler_row takes the native path where an image lacks it). A bare
# `pip install vllm` of those releases has no FlashInfer and sorts, which VLLM_USE_FLASHINFER_SAMPLER=0 in the
# deployment's env says (gsg verify reads the log's own sampler line, and takes a silent log as the sort).
VLLM_SAMPLER_ROWS = (
    VllmSamplerRow("0.8.0", "torch-sort", "same", "v1",
                   "v0.8.0 and v0.8.5 wheels: topk_topp_sampler.py turns FlashInfer's sampler off for FlashInfer >= "
                   "0.2.3 ('not backward compatible'), so images with a current FlashInfer sort too; "
                   "gpu_model_runner.profile_run ends with _dummy_sampler_run (top_k = vocab - 1, top_p = 0.9) over "
                   "min(max_num_seqs, max_num_tokens) rows after the forward returned; "
                   "gpu_worker.compile_or_warm_up_model repeats it after capture_model"),
    VllmSamplerRow("0.9.0", "flashinfer", "same", "v1",
                   "v0.9.0-v0.11.0 wheels: topk_topp_sampler.py takes FlashInfer (>= 0.2.3) wherever it imports and "
                   "VLLM_USE_FLASHINFER_SAMPLER is not 0 ('in V1, None means True'): GPUStack's images have it "
                   "(VLLM_GPUSTACK_IMAGES); "
                   "the wheel does not require it (METADATA: an extra in 0.10.1-0.10.2, none in 0.11.0), so a bare "
                   "pip install sorts (VLLM_USE_FLASHINFER_SAMPLER=0 books that)", install_dependent=True),
    VllmSamplerRow("0.11.1", "torch-sort", "same", "v1",
                   "v0.11.1 wheel: flashinfer-python becomes a dependency but the sampler is opt-in "
                   "('Users must opt in explicitly via VLLM_USE_FLASHINFER_SAMPLER=1'), so every install sorts"),
    VllmSamplerRow("0.17.0", "triton", "same", "v1", native="triton", source=
                   "v0.17.0 wheel: apply_top_k_top_p uses apply_top_k_top_p_triton (topk_topp_triton.py, in place "
                   "on the fp32 logits) when HAS_TRITON and logits.shape[0] >= 8; v0.16.0 still sorts"),
    VllmSamplerRow("0.21.0", "flashinfer", "same", "v1", native="triton", source=
                   "v0.21.0 wheel: envs.VLLM_USE_FLASHINFER_SAMPLER defaults to True (None in 0.20.2), FlashInfer "
                   "sampling where FlashInferBackend supports the compute capability, else the native path"),
    VllmSamplerRow("0.29.0", "flashinfer", "no-top-k-top-p", "v2", native="triton", source=
                   "v0.29.0 wheel: config/vllm.py use_v2_model_runner is True for every generative model on CUDA "
                   "(0.22-0.28: a short architecture list); the V2 runner's _dummy_sampler_run 'may skip top_k, "
                   "top_p, and logprobs' while gpu/warmup.py warmup_kernels samples with "
                   "SamplingParams.for_sampler_warmup() after the KV cache is allocated (vllm PR #48601)"),
    VllmSamplerRow("0.33.0", "flashinfer", "same", "v2", native="triton", source=
                   "v0.33.0 wheel: the V2 _dummy_sampler_run adds the warm-up-parameter pass ('warmup_kernels (run "
                   "after the KV cache is sized) pays for the fp32 logits pipeline, so the profiled peak must too')"),
)
# VLLM_USE_FLASHINFER_SAMPLER in the deployment's environment picks the top-k/top-p path over the release's default
# (read in vllm/v1/sample/ops/topk_topp_sampler.py TopKTopPSampler.__init__ on CUDA): @v0.8.0 to @v0.8.5 FlashInfer
# only below FlashInfer 0.2.3 and the variable not 0 (>= 0.2.3 "is not backward compatible": the sort); @v0.9.0 to
# @v0.11.0 FlashInfer (>= 0.2.3) wherever it imports and the variable is not 0, which the 0.9.0 row books for
# GPUStack's runner image (either way the log says "Using FlashInfer for top-p & top-k sampling." or "Falling back
# to the PyTorch-native implementation"); @v0.11.1 to @v0.20.2 only when it is 1 (opt in); @v0.21.0 on unless it is
# 0. So "1" is FlashInfer (in 0.8.x, where a log or an image with an older FlashInfer says so) and "0" the
# PyTorch-native path of the release (its sort, or Triton's in-place top-k/top-p from 0.17.0) in every V1 release;
# vllm/envs.py reads it as bool(int(value)). V0 ignores it here (it sorts: profiled_sampler).
VLLM_FLASHINFER_SAMPLER_ENV = "VLLM_USE_FLASHINFER_SAMPLER"
VLLM_FLASHINFER_SAMPLER_ENV_SINCE = "0.8.0"
VLLM_FLASHINFER_SAMPLER_ENV_SOURCE = "vllm/v1/sample/ops/topk_topp_sampler.py@v0.8.0 ... @v0.33.0 TopKTopPSampler"
# Peak bytes per (row x vocabulary entry) of the paths that do not sort: the bf16 logits compute_logits returned
# (2), their fp32 copy (4, Triton then masks it in place), and the fp32 probabilities (4) plus the exponential
# noise random_sample draws (4) for Triton; FlashInfer's top_k_top_p_sampling_from_logits masks a copy of the
# logits (4) and softmaxes it (4) instead (assumed from FlashInfer's Python wrapper, not read per release here).
SAMPLER_KERNEL_PEAK_BYTES = {"triton": 14, "flashinfer": 14}
SAMPLER_TRITON_MIN_ROWS = 8  # "logits.shape[0] >= 8": fewer rows take the PyTorch sort
# V0's profile (vllm/worker/model_runner.py@v0.6.4 and @v0.9.1 profile_run / _dummy_run) builds max_num_seqs dummy
# prompts sharing max_num_batched_tokens, each sampled with SamplingParams(top_p=0.99, top_k=vocab_size - 1), so
# Sampler.forward (model_executor/layers/sampler.py@v0.6.4, @v0.9.1) casts the logits to fp32 and
# _apply_top_k_top_p sorts them (FlashInfer only with VLLM_USE_FLASHINFER_SAMPLER set): the same torch sort as
# V1's dummy sampler, SAMPLER_SORT_PEAK_BYTES by rows. It runs after the forward's intermediates are freed, while
# execute_model holds the hidden states of every batched token; only the driver rank (TP rank 0 of the last
# stage) gathers the logits and samples. Check: vllm#18993 (0.9.0.1, V0, Qwen3-4B, 2,048 chunked tokens, 256
# sequences): 256 x 151,936 x 38 B + 2,048 x 2,560 x 2 B = 1.39 GiB against "PyTorch activation peak memory takes
# 1.40GiB"; vllm#10517 (0.6.4, Llama-3.1-8B, 20,000 tokens) keeps the forward as its peak.
# Before 0.5.5 Sampler.forward had no `logits.to(torch.float)` (sampler.py@v0.4.0, @v0.4.1, @v0.4.3, @v0.5.0,
# @v0.5.4; the cast is in @v0.5.5, @v0.6.0): the 16-bit logits LogitsProcessor returned were sorted as they are.
# Per (row x entry): the logits (2), the sorted values (2) and int64 indices (8), then per path, with 2-byte keys:
#   >= 128 rows: int64 reverse indices (8) + cub's alternate key and value buffers (2 + 8)           -> 12 + 18 = 30
#   2-127 rows: two int2 arrays (8 + 8), keys_out (2), cub's alternate key and int2 value (2 + 8)   -> 12 + 28 = 40
#   1 row: cub's alternate buffers (2 + 8)                                                            -> 12 + 10 = 22
# (the later steps, the re-sort through an int64 inverse index included, stay below these)
SAMPLER_SORT_16BIT_PEAK_BYTES = {"one_row": 22, "full_sort": 40, "segmented": 30}
VLLM_V0_PROFILE_SAMPLERS = ((known_version("0.0.0"), "torch-sort-16bit"), (known_version("0.5.5"), "torch-sort"))
VLLM_V0_PROFILE_SAMPLER = VLLM_V0_PROFILE_SAMPLERS[-1][1]  # from 0.5.5: the fp32 sort


def vllm_v0_profile_sampler(version: str | None) -> str:
    """The sort V0's profile sampler runs in this release (VLLM_V0_PROFILE_SAMPLERS)."""
    return row_for("vllm", VLLM_V0_PROFILE_SAMPLERS, version)


# What V0's budget takes out for the profile run (worker.py): up to 0.2.4 torch.cuda.max_memory_allocated(), the
# most torch had allocated at once (@v0.2.4 profile_num_available_blocks); from 0.2.5 the device memory in use once
# profile_run returns, read by mem_get_info with no empty_cache between (total - free @v0.2.5 .. @v0.3.3, vllm PR
# #2031; init_gpu_memory - free @v0.4.1, @v0.5.4 and @v0.6.3.post1 determine_num_available_blocks). That is what
# torch's caching allocator reserved: the segments the forward cached stay counted, and a sampler tensor no cached
# block can hold takes a further segment (core/memory/allocator.py replays it). PR #2031's review names the gap
# ("allocator fragmentation"); from 0.6.4 the peak is torch.cuda.memory_stats()'s allocated bytes (vllm PR #9352;
# worker.py@v0.6.4), and V1 measures the same way.
VLLM_V0_PROFILE_MEASURES = ((known_version("0.0.0"), "allocated"), (known_version("0.2.5"), "reserved"),
                            (known_version("0.6.4"), "allocated"))
VLLM_V0_PROFILE_MEASURE_SOURCE = ("vllm/worker/worker.py@v0.2.4 (max_memory_allocated), @v0.2.7 (total - free), "
                                  "@v0.4.1, @v0.5.4, @v0.6.3.post1 (init_gpu_memory - free after profile_run), "
                                  "@v0.6.4 (memory_stats allocated peak, vllm PR #9352)")


def vllm_v0_profile_measure(version: str | None) -> str:
    """What V0's budget subtracts for the profile run in this release (VLLM_V0_PROFILE_MEASURES)."""
    return row_for("vllm", VLLM_V0_PROFILE_MEASURES, version)


# V0's dummy sampler over R rows of a V-entry vocabulary, allocation by allocation in bytes per (row x entry), on the
# driver rank after the forward's intermediates were freed (the batch's hidden states still held). The sort's own
# temporaries are torch's segmented path at >= 128 rows (SAMPLER_SORT_PEAK_BYTES: int64 reverse indices, then cub's
# temporary storage holding the alternate keys and int64 values). Read in model_executor/layers/sampler.py:
#   torch-sort-16bit  @v0.4.1 and @v0.5.4 Sampler.forward and _apply_top_k_top_p: the model-dtype logits
#                     (execute_model keeps them), sorted values and indices, top-k mask, softmax and cumsum of the
#                     sorted logits, top-p mask, inverse indices, gathered logits; then the fp32 probs and
#                     logprobs, _multinomial's row copy and exponential noise, _get_ranks' rows, comparison and
#                     int64 cast. @v0.2.7 _apply_top_p_top_k sorts the same way and makes masks of the same sizes
#                     in another order (one 1-byte mask more), which the freed sort temporaries hold.
#   torch-sort        @v0.6.3.post1: logits.to(torch.float) first, so the sort runs on 4-byte keys, and the
#                     re-sort scatters into a new fp32 tensor instead of gathering through inverse indices.
VLLM_V0_SAMPLER_EVENTS: dict[str, tuple[tuple[str, str, int], ...]] = {
    "torch-sort-16bit": (
        ("alloc", "logits", 2), ("alloc", "sorted", 2), ("alloc", "indices", 8), ("alloc", "reverse", 8),
        ("alloc", "cub", 2 + 8), ("free", "cub", 0), ("free", "reverse", 0),
        ("alloc", "top_k_mask", 1), ("alloc", "probs_sort", 2), ("alloc", "probs_sum", 2), ("alloc", "top_p_mask", 1),
        ("alloc", "inverse", 8), ("alloc", "resorted", 2),
        *(("free", name, 0) for name in ("sorted", "indices", "top_k_mask", "probs_sort", "probs_sum", "top_p_mask",
                                         "inverse")),
        ("alloc", "probs", 4), ("alloc", "logprobs", 4), ("alloc", "sample_rows", 4), ("alloc", "noise", 4),
        ("free", "noise", 0), ("free", "sample_rows", 0),
        ("alloc", "rank_rows", 4), ("alloc", "greater", 1), ("alloc", "ranks", 8)),
    "torch-sort": (
        ("alloc", "logits", 2), ("alloc", "logits_fp32", 4), ("alloc", "sorted", 4), ("alloc", "indices", 8),
        ("alloc", "reverse", 8), ("alloc", "cub", 4 + 8), ("free", "cub", 0), ("free", "reverse", 0),
        ("alloc", "top_k_mask", 1), ("alloc", "probs_sort", 4), ("alloc", "probs_sum", 4), ("alloc", "top_p_mask", 1),
        ("alloc", "resorted", 4),
        *(("free", name, 0) for name in ("sorted", "indices", "top_k_mask", "probs_sort", "probs_sum", "top_p_mask")),
        ("alloc", "probs", 4), ("alloc", "logprobs", 4), ("alloc", "sample_rows", 4), ("alloc", "noise", 4),
        ("free", "noise", 0), ("free", "sample_rows", 0),
        ("alloc", "rank_rows", 4), ("alloc", "greater", 1), ("alloc", "ranks", 8)),
}


# The profile's pass without top-k/top-p: the 4-byte logits the activation formula always counted
SAMPLER_PLAIN_BYTES = 4
# What profile_run holds of the forward while its dummy sampler runs. Up to 0.9.x _dummy_run returns
# hidden_states[logit_indices] only (gpu_model_runner.py@v0.8.5 and @v0.9.0.1): the batch's hidden states are
# freed with it, the sampler's rows kept. From 0.10.2 (read; 0.10.0 assumed, the release line of the pooling
# runner) it returns (hidden_states, hidden_states[logit_indices]) and profile_run keeps both until after the
# sampler (@v0.10.2, @v0.11.0, @v0.12.0 ... @v0.33.0: "hidden_states, last_hidden_states = self._dummy_run(").
VLLM_PROFILE_HOLDS_BATCH_HIDDEN_SINCE = "0.10.0"
_SAMPLER_KEYS = keyed_by_release(VLLM_SAMPLER_ROWS)


def vllm_sampler_row(version: str | None) -> VllmSamplerRow:
    """The sampler row of a V1 release (the first row for anything older), its default path the one GPUStack's
    image of the release takes where that depends on the install (install_dependent: VLLM_GPUSTACK_IMAGES)."""
    row = row_for("vllm", _SAMPLER_KEYS, version)
    if row.install_dependent and not vllm_gpustack_image(version).flashinfer:
        return replace(row, kernel=row.native)
    return row


class VllmRunnerRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """Which model runner a V1 release builds by default (config/vllm.py use_v2_model_runner) and, where the V2
    runner's profile differs from the release's other rows, how. default: "v1" every model (as modelled);
    "dense" the V2 runner for a generative model that is neither MoE nor hybrid, or whose architecture is listed;
    "v2" every generative model (the sampler and profile rows of those releases are already the V2 runner's).
    For a model on the V2 runner under a "dense" row: no CUDA-graph estimate inside the budget and a profile
    sampler pass without top-k/top-p, warmed up over V2's rows."""

    since: str
    default: str
    architectures: frozenset[str]
    source: str


VLLM_RUNNER_ROWS = (
    VllmRunnerRow("0.0.0", "v1", frozenset(),
                  "v1/worker/gpu_model_runner.py; not read: 0.22.0-0.24.0 default a short list to the V2 runner "
                  "(config/vllm.py DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES: Qwen3ForCausalLM in 0.22.0, Llama, "
                  "Mistral and three MoE families added by 0.24.0), whose profile in those releases is not read"),
    VllmRunnerRow("0.25.0", "dense", frozenset({"DeepseekV2ForCausalLM", "Qwen2MoeForCausalLM",
                                                "GraniteMoeForCausalLM"}),
                  "config/vllm.py@v0.25.0..@v0.28.0 _is_default_v2_model_runner_model: 'generate' runner, not "
                  "is_hybrid, not attention-free, and a listed architecture 'or not model_config.is_moe'; "
                  "v1/worker/gpu/model_runner.py@v0.25.0..@v0.28.0 profile_cudagraph_memory returns 0 ('It is TBD "
                  "whether we keep this API'), so gpu_worker.py subtracts no graph estimate, and _dummy_sampler_run "
                  "'may skip top_k, top_p, and logprobs'; gpu/warmup.py warmup_kernels samples after the KV cache. "
                  "A 0.27.1 log shows it: Qwen2.5-0.5B's lines come from gpu/model_runner.py and its KV is budget - "
                  "consumed - 0.08 GiB of peak activation, no graph estimate"),
    VllmRunnerRow("0.29.0", "v2", frozenset(),
                  "config/vllm.py@v0.29.0 use_v2_model_runner: every generative model on CUDA (the 0.29.0 sampler "
                  "row); gpu/model_runner.py@v0.29.0 profile_cudagraph_memory measures the graphs"),
)
_RUNNER_KEYS = keyed_by_release(VLLM_RUNNER_ROWS)

# What the "Free memory on device ... Actual usage is" line calls peak activation: from 0.27.0 the profile's transient
# peak plus the CUDA-graph estimate the budget takes out (v1/worker/gpu_worker.py@v0.27.0, @v0.31.0, @v0.34.0
# determine_available_memory: peak_activation_memory = transient_peak_headroom + cudagraph_memory_estimate_applied);
# before, torch_peak_increase alone (@v0.26.0). Its "CUDAGraph memory" is what the capture took, measured after it.
VLLM_LOGGED_ACTIVATION_HOLDS_GRAPHS_SINCE = "0.27.0"


def vllm_runner_row(version: str | None) -> VllmRunnerRow:
    return row_for("vllm", _RUNNER_KEYS, version)


class TermSource(TableRow):  # a table row: tuple-built, no generated methods to compile
    """Where one budget term's rule was read: the first release it applies to, its name and file@tag."""

    since: str
    rule: str
    source: str


# Per engine and term (core/memory/terms.py names), the rule gsg applies from each release on, and the file of
# that release it was read in; `gsg estimate --output json` shows it beside each figure ("budget").
TERM_SOURCES: dict[str, dict[str, tuple[TermSource, ...]]] = {
    "vllm": {
        "weights_bytes_per_gpu": (
            TermSource("0.0.0", "parameters-as-loaded",
                       "vllm/worker/model_runner.py@v0.6.4 load_model ('Loading model weights took')"),
            TermSource("0.8.0", "parameters-as-loaded",
                       "vllm/v1/worker/gpu_model_runner.py@v0.8.0 load_model ('Model loading took')")),
        "non_torch_bytes_per_gpu": (  # the figures: VLLM_NON_TORCH, one row per interconnect and release
            TermSource("0.0.0", "non-torch-by-interconnect",
                       "vllm/worker/worker.py@v0.6.4 determine_num_available_blocks (total - free - allocated)"),
            TermSource("0.6.5", "non-torch-by-interconnect-v0-from-baseline",
                       "vllm/utils.py@v0.6.5 memory_profiling (non_torch_increase over worker.py's init_gpu_memory "
                       "baseline: the CUDA context left out; V0 alone on a GPU books VLLM_NON_TORCH 'single-v0')"),
            TermSource("0.8.0", "non-torch-device-wide-with-cuda-context",
                       "vllm/v1/worker/gpu_worker.py@v0.8.5 determine_available_memory (mem_get_info total - free - "
                       "torch allocated: the CUDA context inside the budget)"),
            TermSource("0.9.1", "non-torch-by-interconnect",
                       "vllm/v1/worker/gpu_worker.py@v0.9.1 init_device (MemorySnapshot after CUDA starts); "
                       "vllm/utils.py memory_profiling"),
            TermSource("0.11.0", "non-torch-by-interconnect-nccl-outside",
                       "vllm/utils/__init__.py@v0.11.0 memory_profiling; NCCL before the snapshot (vllm PR #25359)"),
            TermSource("0.19.0", "non-torch-by-interconnect-nccl-outside",
                       "vllm/utils/mem_utils.py@v0.19.0 memory_profiling")),
        "forward_peak_bytes_per_gpu": (
            TermSource("0.0.0", "dense-mlp-and-logits-calibrated",
                       "vllm/worker/model_runner.py@v0.6.4 profile_run (max_num_batched_tokens dummy prefill)"),
            TermSource("0.6.0", "dense-mlp-and-logits-calibrated+fused-moe-chunk-32768",
                       "vllm/envs.py@v0.6.0 VLLM_FUSED_MOE_CHUNK_SIZE (65536 at @v0.5.4)"),
            TermSource("0.8.0", "dense-mlp-and-logits-calibrated+fused-moe-chunk-32768",
                       "vllm/v1/worker/gpu_model_runner.py@v0.8.0 _dummy_run; "
                       "vllm/model_executor/layers/fused_moe/fused_moe.py@v0.8.5 fused_experts"),
            TermSource("0.12.0", "dense-mlp-and-logits-calibrated+fused-moe-chunk-16384",
                       "vllm/envs.py@v0.12.0 VLLM_FUSED_MOE_CHUNK_SIZE"),
            TermSource(VLLM_MOE_WORKSPACE_SINCE, "dense-mlp-and-logits-calibrated+fused-moe-held-workspace",
                       f"vllm/model_executor/layers/fused_moe/modular_kernel.py@v{VLLM_MOE_WORKSPACE_SINCE} "
                       "(workspace13 + workspace2 from WorkspaceManager, kept through the sampler)"),
            TermSource("0.18.0", "dense-mlp-and-logits-calibrated+fused-moe-held-workspace-whole-batch",
                       "vllm/model_executor/layers/fused_moe/modular_kernel.py@v0.18.0 (no chunk variable)")),
        "sampler_peak_bytes_per_gpu": (
            TermSource("0.0.0", "v0-16bit-sort-after-forward-driver-rank",
                       "vllm/worker/model_runner.py@v0.4.0 profile_run (SamplingParams(top_p=0.99, top_k=vocab - 1) "
                       "per dummy sequence); vllm/model_executor/layers/sampler.py@v0.4.0..@v0.5.4 "
                       "_apply_top_k_top_p (sort of the model-dtype logits)"),
            TermSource("0.2.5", "v0-16bit-sort-reserved-after-forward-driver-rank",
                       "vllm/worker/worker.py@v0.2.7, @v0.4.1, @v0.5.4 (free memory after profile_run: torch's "
                       "reserved segments, core/memory/allocator.py); vllm/model_executor/layers/sampler.py@v0.4.1 "
                       "and @v0.5.4 (VLLM_V0_SAMPLER_EVENTS)"),
            TermSource("0.5.5", "v0-fp32-sort-reserved-after-forward-driver-rank",
                       "vllm/worker/worker.py@v0.6.3.post1 (init_gpu_memory - free after profile_run); "
                       "vllm/model_executor/layers/sampler.py@v0.5.5, @v0.6.3.post1 (logits.to(torch.float) "
                       "before _apply_top_k_top_p)"),
            TermSource("0.6.4", "v0-fp32-sort-after-forward-driver-rank",
                       "vllm/model_executor/layers/sampler.py@v0.5.5, @v0.6.4 and @v0.9.1 (logits.to(torch.float) "
                       "before _apply_top_k_top_p); vllm/worker/model_runner.py@v0.6.4 _dummy_run; "
                       "vllm/worker/worker.py@v0.6.4 (memory_stats allocated peak)"),
            TermSource("0.8.0", "torch-sort-after-forward",
                       "vllm/v1/worker/gpu_model_runner.py@v0.8.0 _dummy_sampler_run; "
                       "vllm/v1/sample/ops/topk_topp_sampler.py@v0.8.0 apply_top_k_top_p (logits.sort)"),
            TermSource("0.9.0", "flashinfer-top-k-top-p-after-forward",
                       "vllm/v1/sample/ops/topk_topp_sampler.py@v0.9.0 TopKTopPSampler (FlashInfer >= 0.2.3 wherever "
                       "it imports, VLLM_USE_FLASHINFER_SAMPLER None means True); gpustack/gpustack Dockerfile@v0.7.0 "
                       "and gpustack/runner pack/cuda/Dockerfile@da76887..@3064509 install FlashInfer"),
            TermSource("0.11.1", "torch-sort-after-forward",
                       "vllm/v1/sample/ops/topk_topp_sampler.py@v0.11.1 (FlashInfer's sampler opt-in: "
                       "VLLM_USE_FLASHINFER_SAMPLER=1); apply_top_k_top_p (logits.sort)"),
            TermSource("0.17.0", "triton-top-k-top-p-after-forward",
                       "vllm/v1/sample/ops/topk_topp_sampler.py@v0.17.0 apply_top_k_top_p_triton (rows >= 8)"),
            TermSource("0.21.0", "flashinfer-top-k-top-p-after-forward",
                       "vllm/envs.py@v0.21.0 VLLM_USE_FLASHINFER_SAMPLER = True"),
            TermSource("0.29.0", "plain-logits-v2-runner",
                       "vllm/v1/worker/gpu/model_runner.py@v0.29.0 _dummy_sampler_run ('may skip top_k, top_p')"),
            TermSource("0.33.0", "flashinfer-top-k-top-p-v2-runner",
                       "vllm/v1/worker/gpu/model_runner.py@v0.33.0 _dummy_sampler_run (warm-up parameters)")),
        "encoder_peak_bytes_per_gpu": (
            TermSource("0.0.0", "none-v0", "vllm/worker/model_runner.py@v0.6.4 (no encoder cache profile)"),
            TermSource("0.8.0", "max(encoder-phase, text+held)",
                       "vllm/v1/worker/gpu_model_runner.py@v0.9.0.1 profile_run (the dummy items encoded first; "
                       "encoder_cache['tmp'] and the batched pixel values held through the text run); the ViT "
                       "step per model file and release in profiles.VLLM_ENCODER_ROWS"),
            TermSource("0.10.0", "max(encoder-phase, text+held)",
                       "vllm/v1/worker/utils.py@v0.10.1.1 MultiModalBudget.get_max_items (items floored)"),
            TermSource("0.34.0", "max(encoder-phase, text+held)",
                       "vllm/v1/worker/gpu/model_runner.py@v0.34.0 profile_run "
                       "(encoder_runner.profile_encoder_cache)")),
        "activation_bytes_per_gpu": (
            TermSource("0.0.0", "max(forward, sampler)",
                       "vllm/worker/worker.py@v0.6.4 determine_num_available_blocks (torch peak over profile_run)"),
            TermSource("0.8.0", "max(forward, sampler)+encoder",
                       "vllm/v1/worker/gpu_model_runner.py@v0.8.0 profile_run (del hidden_states after both)")),
        "cuda_graphs_bytes_per_gpu": (
            # the graph counts are read from the source; the bytes per graph are not a buffer the source
            # allocates (CUDA's graph objects and the capture pool's growth) and are MEASURED, with the logs named
            TermSource("0.0.0", "capture-sizes-x-layers-after-kv",
                       "vllm/worker/model_runner.py@v0.6.4 capture_model (after the KV cache); bytes per layer "
                       "and graph measured: Table C Llama-3.2-1B 0.21 GiB, Qwen3-Next-80B 2.37 GiB"),
            TermSource("0.8.0", "capture-sizes-x-layers-after-kv",
                       "vllm/v1/worker/gpu_model_runner.py@v0.8.0 capture_model; bytes per layer and graph "
                       "measured: Table C Llama-3.2-1B 0.21 GiB, Qwen3-Next-80B 2.37 GiB"),
            TermSource("0.10.1", "capture-sizes-every-8-to-2x-seqs-after-kv",
                       "vllm/config/scheduler.py@v0.10.1 cuda_graph_sizes [min(2*max_num_seqs, 512)], "
                       "vllm/config/__init__.py@v0.10.1 [1,2,4]+range(8, that+1, 8); bytes per layer and graph "
                       "measured as from 0.8.0"),
            TermSource("0.11.0", "full-and-piecewise-capture-sizes-every-8-after-kv",
                       "vllm/config/compilation.py@v0.11.0 FULL_AND_PIECEWISE; vllm/config/__init__.py@v0.11.0 "
                       "[1,2,4]+range(8, min(2*max_num_seqs, 512)+1, 8); bytes per layer and graph measured as "
                       "from 0.8.0"),
            TermSource("0.11.1", "full-and-piecewise-capture-sizes-after-kv",
                       "vllm/config/vllm.py@v0.11.1 [1,2,4]+range(8,256,8)+range(256, min(2*max_num_seqs, 512)+1, "
                       "16); bytes per layer and graph measured as from 0.8.0"),
            TermSource("0.18.0", "vllm-graph-estimate-after-kv-measured-per-graph",
                       "vllm/v1/worker/gpu_model_runner.py@v0.18.0 profile_cudagraph_memory, run by "
                       "gpu_worker.py@v0.18.0 determine_available_memory and left out of the budget "
                       "(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS='0' in envs.py@v0.18.0 and @v0.19.0); the same "
                       "sizing as the 0.20.0 row, paid from the headroom"),
            TermSource("0.20.0", "vllm-graph-estimate-in-budget-measured-per-graph",
                       "vllm/envs.py@v0.20.0 VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS='1'; "
                       "vllm/v1/worker/gpu_model_runner.py@v0.20.0 profile_cudagraph_memory (per graph = "
                       "torch.cuda.mem_get_info() around the second capture, at least 1 MiB: measured by vLLM, "
                       "not a buffer of the source); gsg's per graph fitted to two estimate lines: Qwen3-0.6B "
                       "w4a16 0.19.0 'Estimated CUDA graph memory: 0.27 GiB', Qwen2.5-7B 0.37 GiB")),
        "kv_cache_bytes_per_gpu": (
            TermSource("0.0.0", "gmu-x-total-minus-profile", "vllm/worker/worker.py@v0.6.4 "
                       "determine_num_available_blocks"),
            TermSource("0.8.0", "gmu-x-total-minus-profile",
                       "vllm/v1/worker/gpu_worker.py@v0.8.0 determine_available_memory"),
            TermSource("0.34.0", "measured-free-after-warmup",
                       "vllm/v1/worker/extensible_kv_cache.py@v0.34.0 measure_kv_cache_bytes")),
        "kv_capacity_tokens": (
            TermSource("0.0.0", "blocks-x-block-size", "vllm/worker/worker.py@v0.6.4 ('# GPU blocks')"),
            TermSource("0.8.0", "blocks-x-block-size",
                       "vllm/v1/core/kv_cache_utils.py@v0.8.0 ('GPU KV cache size')"),
            TermSource(VLLM_HYBRID_KV_MANAGER_SINCE, "blocks-x-block-size; hybrid: blocks-of-group-size-pages "
                       "// groups x block-size",
                       f"vllm/v1/core/kv_cache_utils.py@v{VLLM_HYBRID_KV_MANAGER_SINCE} "
                       "_get_kv_cache_config_uniform_page_size ('GPU KV cache size')"),
            TermSource("0.21.0", "concurrency-x-max-len",
                       "vllm/v1/core/kv_cache_utils.py@v0.21.0 _report_kv_cache_config ('GPU KV cache size' = "
                       "int(max_concurrency x max_model_len); profiles.VLLM_KV_TOKENS_PRINTED)")),
        # VLLM_LORA_ROWS, row for row: the LoRA slots, inside the weights term ("Model loading took")
        "lora_buffers_bytes_per_gpu": tuple(
            TermSource(row.since, "slots-x-modules-x-layers-in-model-loading", row.source) for row in VLLM_LORA_ROWS),
        "sampler_warmup_bytes_per_gpu": (
            TermSource("0.0.0", "none-v0", "vllm/worker/worker.py@v0.6.4 (no sampler warm-up after the KV cache)"),
            TermSource("0.8.0", "post-kv-sampler-warmup",
                       "vllm/v1/worker/gpu_worker.py@v0.8.0 compile_or_warm_up_model (_dummy_sampler_run)"),
            TermSource("0.29.0", "post-kv-sampler-warmup-v2",
                       "vllm/v1/worker/gpu/warmup.py@v0.29.0 warmup_kernels"),
            TermSource("0.34.0", "inside-measured-free",
                       "vllm/v1/worker/extensible_kv_cache.py@v0.34.0 (sized after the warm-up)")),
    },
    "sglang": {
        "weights_bytes_per_gpu": (
            TermSource("0.0.0", "parameters-allocator-segments-and-rope-cache",
                       "python/sglang/srt/model_executor/model_runner.py@v0.3.6 ('Load weight end ... mem usage'); "
                       "c10/cuda/CUDACachingAllocator.cpp segment sizes; the rotary cache in the model dtype "
                       "(layers/rotary_embedding.py@v0.4.1.post7)"),
            TermSource("0.4.2.post1", "parameters-allocator-segments-and-fp32-rope-cache",
                       "python/sglang/srt/layers/rotary_embedding.py@v0.4.2.post1 (cos_sin_cache kept in FP32 on "
                       "CUDA); utils.py@v0.4.3.post4 get_available_gpu_memory")),
        "non_torch_bytes_per_gpu": (
            TermSource("0.0.0", "start-up-by-interconnect",
                       "python/sglang/srt/model_executor/model_runner.py@v0.4.3 ('Load weight begin. avail mem')"),),
        "activation_bytes_per_gpu": (
            TermSource("0.0.0", "inside-mem-fraction-static",
                       "python/sglang/srt/server_args.py@v0.3.6 mem_fraction_static by TP"),
            TermSource("0.5.0", "reserved-memory",
                       "python/sglang/srt/server_args.py@v0.5.4 _handle_gpu_memory_settings")),
        "cuda_graphs_bytes_per_gpu": (
            TermSource("0.0.0", "cuda-graph-max-bs-x-2mib",
                       "python/sglang/srt/server_args.py@v0.5.4 reserved_mem (cuda_graph_max_bs * 2)"),),
        "kv_cache_bytes_per_gpu": (
            TermSource("0.0.0", "fraction-x-total-minus-weights",
                       "python/sglang/srt/model_executor/model_runner.py@v0.3.6 profile_max_num_token"),
            TermSource("0.5.23", "fraction-x-total-minus-weights-page-rounded",
                       "python/sglang/srt/mem_cache/kv_cache_configurator.py@v0.5.23 _profile_available_bytes")),
        "kv_capacity_tokens": (
            TermSource("0.0.0", "pool-over-cell", "python/sglang/srt/model_executor/model_runner.py@v0.3.6 "
                       "('max_total_num_tokens')"),),
        # SGLANG_LORA_ROWS, row for row: the LoRA memory pool, between the weights and the KV pool
        "lora_buffers_bytes_per_gpu": tuple(
            TermSource(row.since, "slots-x-modules-x-layers-before-kv-pool" if row.modelled else "not-modelled",
                       row.source) for row in SGLANG_LORA_ROWS),
        # SGLANG_GATED_DELTA_ROWS, row for row: the mamba pool beside the KV pool of a Gated DeltaNet hybrid
        "mamba_state_bytes_per_gpu": tuple(
            TermSource(row.since, f"mamba-slots-{row.sizing}" if row.modelled else "not-modelled", row.source)
            for row in SGLANG_GATED_DELTA_ROWS),
    },
    "llamacpp": {
        "weights_bytes_per_gpu": (
            TermSource("b0", "tensor-bytes-by-device", "src/llama-model.cpp@b6000 ('model buffer size')"),),
        "non_torch_bytes_per_gpu": (
            TermSource("b0", "platform-footprint", "gpustack/gguf-parser-go cmd/gguf-parser/main.go "
                       "--platform-footprint (GPUStack 2.x passes 150,500: 500 MiB of VRAM)"),),
        "kv_cache_bytes_per_gpu": (
            TermSource("b0", "cells-x-layers-by-device", "src/llama-kv-cache.cpp@b6000 ('KV buffer size')"),
            TermSource("b7045", "cells-padded-256-per-stream", "src/llama-context.cpp@b7045 (n_ctx padding)")),
        "compute_buffer_bytes_per_gpu": (
            TermSource("b0", "graph-high-water-mark", "src/llama-context.cpp@b6000 ('compute buffer size')"),
            TermSource("b2431", "high-water-mark-plus-held-input-copies",
                       "ggml/src/ggml-backend.cpp@0c1e57098 ggml_backend_sched_split_graph (n_copies, set_input "
                       "+ set_output); the f16 mask cast on the first device: llama.cpp#11200 at b4462"),
            TermSource("b10507", "held-input-copies-f16-mask",
                       "src/llama-graph.cpp (llama.cpp PR #23764: the KQ mask input built in f16 under flash "
                       "attention)")),
        "kv_capacity_tokens": (
            TermSource("b0", "n-ctx-cells", "src/llama-context.cpp@b6000 ('n_ctx')"),),
        # LLAMACPP_RECURRENT_RULES, row for row (tests/core/memory/test_llamacpp_recurrent.py keeps them equal)
        "recurrent_state_bytes_per_gpu": (
            TermSource("b0", "states-in-kv-cache-not-modelled",
                       "src/llama-kv-cache.cpp@794fe23f llama_kv_cache_init (recurrent rows at type_k / type_v)"),
            TermSource("b5500", "f32-conv-and-scan-rows-per-sequence",
                       "src/llama-model.cpp create_memory + src/llama-kv-cache.cpp llama_kv_cache_recurrent@"
                       "8733e0cf (GGML_TYPE_F32, kv_size = max(1, n_seq_max))"),
            TermSource("b6200", "rs-buffer-f32-rows-per-sequence",
                       "src/llama-memory-recurrent.cpp@4227c9be, @0c1e57098 ('RS buffer size'); "
                       "src/llama-hparams.cpp n_embd_r / n_embd_s; src/llama-memory-hybrid.cpp")),
    },
}


@functools.cache
def _term_keys(family: str, term: str) -> tuple[tuple[Version, TermSource], ...]:
    return keyed_by_release(TERM_SOURCES[family][term])  # parsed on first use, not at import, and once


def term_source(family: str, term: str, version: Version) -> TermSource:
    """The row of TERM_SOURCES that applies to this release (the oldest for anything older)."""
    return row_of_release(_term_keys(family, term), version)


# PyTorch caching-allocator slack on what vLLM grabs. Calibrated on the field-notes fleet: Llama-3.3-70B
# bf16 TP=4 on RTX A6000 OOM'd at gmu 0.92 and runs at 0.88 with identical flags.
ALLOCATOR_SLACK = 0.05
DEFAULT_BLOCK_SIZE = 16


class VllmMlaBlockRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """How vLLM on CUDA sets an MLA model's KV block size from one release on (the `since` version): the block
    size follows the MLA attention backend its platform picks by compute capability."""

    since: str
    # "force": CudaPlatform.check_and_update_config sets the default backend's block size over any --block-size
    # that does not fit it: FlashMLA 64 on 9.x, CUTLASS MLA 128 or FlashInfer MLA 64 (32 kept) on Blackwell,
    # nothing elsewhere (Triton MLA takes 16). "prefer": a --block-size is kept (a backend that cannot take it is
    # skipped); without one the first valid backend's get_preferred_block_size(VLLM_DEFAULT_BLOCK) is used.
    # "keep": no MLA backend touches it (the deployment's block size or the default 16).
    mode: str
    fits_multiples: bool  # "force": a multiple of the backend's size is kept (else only the size itself)
    blackwell_family: bool  # the Blackwell backend on every 10.x (else on exactly 10.0; 10.3 falls to Triton)
    flashinfer_first: bool  # on Blackwell, FlashInfer MLA when qk_nope_head_dim fits it, CUTLASS MLA otherwise
    source: str


# vllm/platforms/cuda.py check_and_update_config read at v0.10.1, v0.10.1.1, v0.10.2, v0.11.0, v0.11.1, v0.12.0,
# v0.13.0, v0.14.0, v0.16.0, v0.17.0 (no 0.15.x was published); from 0.18.0 the hook is gone and
# Platform.update_block_size_for_backend (platforms/interface.py) with the backends' get_supported_kernel_block_sizes
# and cuda.py _get_backend_priorities decide, read at every tag from v0.18.0 to v0.34.0. FlashMLA dense runs only
# on 9.x (ops/flashmla.py is_flashmla_dense_supported), so Ampere, Ada and 12.x keep 16 through Triton MLA.
# DeepSeek-V3.2's sparse MLA (forced 64) is refused before this table is read.
VLLM_MLA_BLOCK = (
    VllmMlaBlockRow("0.0.0", "keep", False, False, False,
                    "vllm/platforms/cuda.py@v0.7.3 check_and_update_config: block_size None -> 16, no MLA backend "
                    "sets it (FlashMLA and its forced 64 arrive in @v0.8.0)"),
    VllmMlaBlockRow("0.8.0", "force", False, False, False,
                    "vllm/platforms/cuda.py@v0.8.0 (FlashMLA on 9.x: block != 64 -> 64), @v0.10.1 .. @v0.11.0 "
                    "check_and_update_config: 9.x FlashMLA, block != 64 -> 64; is_device_capability(100) CUTLASS "
                    "MLA, block != 128 -> 128"),
    VllmMlaBlockRow("0.11.1", "force", True, False, False,
                    "vllm/platforms/cuda.py@v0.11.1 .. @v0.12.0 check_and_update_config: block % 64 != 0 -> 64 "
                    "(FlashMLA), block % 128 != 0 -> 128 (CUTLASS MLA on exactly 10.0)"),
    VllmMlaBlockRow("0.13.0", "force", True, True, False,
                    "vllm/platforms/cuda.py@v0.13.0 .. @v0.14.0 check_and_update_config: "
                    "is_device_capability_family(100) -> CUTLASS MLA on every 10.x"),
    VllmMlaBlockRow("0.16.0", "force", True, True, True,
                    "vllm/platforms/cuda.py@v0.16.0 .. @v0.17.0 check_and_update_config: 10.x with qk_nope_head_dim "
                    "128 -> FlashInfer MLA (block != 32 and block % 64 != 0 -> 64), else CUTLASS MLA"),
    VllmMlaBlockRow("0.18.0", "prefer", True, True, True,
                    "vllm/platforms/interface.py@v0.18.0 .. @v0.33.0 update_block_size_for_backend (a --block-size "
                    "kept), cuda.py _get_backend_priorities (10.x: FlashInfer MLA [32, 64] -> 32, CUTLASS MLA; 9.x: "
                    "FlashAttention MLA MultipleOf(16) takes the default block size, FlashMLA [64] for an fp8 KV "
                    "cache) .. @v0.34.0 (whose default 64 every one of them takes)"),
)
_MLA_BLOCK_KEYS = keyed_by_release(VLLM_MLA_BLOCK)
# An MLA backend named by --attention-backend ("prefer" rows): its get_supported_kernel_block_sizes, the same in
# v1/attention/backends/mla/{flashmla,cutlass_mla,flashinfer_mla,triton_mla,flashattn_mla}.py@v0.18.0, @v0.24.0
# and @v0.34.0; () is MultipleOf(16), which takes the default. get_preferred_block_size: the default when listed,
# else the smallest.
VLLM_MLA_KERNEL_BLOCKS = {"FLASHMLA": (64,), "CUTLASS_MLA": (128,), "FLASHINFER_MLA": (32, 64), "TRITON_MLA": (),
                          "FLASH_ATTN_MLA": ()}


class VllmDefaultBlockRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """vLLM's KV block size on CUDA when no --block-size is given, from one release on (the `since` version)."""

    since: str
    block_size: int
    source: str


# Dense attention takes it as it is: FLASH_ATTN and TRITON_ATTN accept MultipleOf(16), FLASHINFER [16, 32, 64]
# (up to 1024 on 10.x with trtllm-gen, which the default always fits), except FLASH_ATTN on FA4 (VLLM_FA4_PAGE);
# hybrid (mamba) models align their own size (gated_delta.py).
VLLM_DEFAULT_BLOCK = (
    VllmDefaultBlockRow("0.0.0", 16, "vllm/platforms/cuda.py@v0.10.1 .. @v0.17.0 check_and_update_config "
                                     "(block_size None -> 16), vllm/config/cache.py@v0.18.0 .. @v0.33.0 "
                                     "CacheConfig.DEFAULT_BLOCK_SIZE = 16"),
    VllmDefaultBlockRow("0.34.0", 64, "vllm/config/cache.py@v0.34.0 CacheConfig.DEFAULT_BLOCK_SIZE = 64, kept by "
                                      "platforms/interface.py update_block_size_for_backend"),
)
_DEFAULT_BLOCK_KEYS = keyed_by_release(VLLM_DEFAULT_BLOCK)


class VllmFa4PageRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """The page FlashAttention 4 kernels need, which FLASH_ATTN's get_preferred_block_size raises vLLM's default
    block to (max(default, page)) when no --block-size is given, from one release on (the `since` version)."""

    since: str
    hd256_page: int  # 10.x, head size 256 (K and V), FA4's dedicated kernel; 0: no such rule
    sm90_fp8_d512_page: int  # 9.x, fp8 KV cache, head size 512 (FA3 tops out at 256: FA4); 0: no such rule
    source: str


# Who reaches FLASH_ATTN: cuda.py _get_backend_priorities puts FLASHINFER first on 10.x (it takes head 256), so the
# 10.x rule needs --attention-backend FLASH_ATTN; on 9.x FLASH_ATTN is first. FA4 is the 10.x default only
# (fa_utils.get_flash_attn_version: 9.x FA3, 11.x/12.x FA2); the hd256 kernel falls back to FA2 under attention
# sinks, logit softcapping, a quantized KV cache, mm-prefix models (Gemma 3, PaliGemma) and R-SWA/DCP.
VLLM_FA4_PAGE = (
    VllmFa4PageRow("0.0.0", 0, 0, "vllm/v1/attention/backends/flash_attn.py@v0.20.0 .. @v0.28.0 "
                                  "get_supported_kernel_block_sizes [MultipleOf(16)], no preferred size"),
    VllmFa4PageRow("0.29.0", 128, 0, "vllm/v1/attention/backends/fa_utils.py@v0.29.0 FA4_HD256_PAGE_SIZE = 128, "
                                     "uses_fa4_hd256_kernel, _fa4_hd256_fallback_reason; flash_attn.py@v0.29.0 "
                                     "_get_fa4_hd256_block_size, get_preferred_block_size (unchanged to @v0.34.0)"),
    VllmFa4PageRow("0.33.0", 128, 64, "vllm/v1/attention/backends/flash_attn.py@v0.33.0 and @v0.34.0 "
                                      "_get_sm90_fa4_fp8_kv_block_size ('64-token TMA tile/page'); fa_utils.py "
                                      "get_flash_attn_version (SM90 head_size > 256: FA3 -> FA4)"),
)
_FA4_PAGE_KEYS = keyed_by_release(VLLM_FA4_PAGE)
# model types vLLM's ModelArchConfigConvertor.is_mm_prefix_lm lists (transformers_utils/model_arch_config_convertor.py
# @v0.29.0), by the architecture class gsg keeps; only when the vision part is loaded (supports_multimodal)
VLLM_MM_PREFIX_ARCHITECTURES = ("Gemma3ForConditionalGeneration", "PaliGemmaForConditionalGeneration")


class VllmGemma4Row(TableRow):  # a table row: tuple-built, no generated methods to compile
    """How a vLLM release runs Gemma 4's split attention (256-wide window heads, 512-wide full-attention heads)."""

    since: str
    modelled: bool  # False: the release has no Gemma 4 model file
    backend: str  # what Gemma4Config.verify_and_update_config picks when no backend is named
    # attention_k_eq_v full-attention layers ship k_proj only, yet Gemma4Attention builds the usual
    # QKVParallelLinear (K and V slices) and the loader copies k_proj into both: a V slice beyond the checkpoint
    value_slice: bool
    # each layer kind's get_rope keeps a cos/sin cache buffer of max_position_embeddings rows x its head size at
    # the model dtype (rotary_embedding/base.py; Gemma4RotaryEmbedding widens the proportional one's rotary_dim to
    # the head size), allocated with the weights: 262,144 x (256 + 512) x 2 B = 0.375 GiB for the released models
    rope_caches: bool
    source: str


# The KV side: each layer's AttentionSpec keeps its own heads and head size (gemma4.py Gemma4Attention, K and V
# cached apart even with attention_k_eq_v); get_kv_cache_groups then unify_kv_cache_spec_page_size raises the
# smaller page's block_size by the page ratio and _get_kv_cache_groups_uniform_page_size groups the layers
# (kv_cache_utils.py@v0.19.0, unchanged in this respect to @v0.34.0). Both backends below keep the release's
# default block (TRITON_ATTN and FLASH_ATTN advertise MultipleOf(16)); the FA4 pages of VLLM_FA4_PAGE (head 256 on
# 10.x from 0.29, fp8 head 512 on 9.x from 0.33) would give the two layer kinds different kernel pages, which is
# not read: engines/vllm.py refuses those deployments by name.
VLLM_GEMMA4 = (
    VllmGemma4Row("0.0.0", False, "", False, False,
                  "vllm/model_executor/models/registry.py@v0.18.0 (no Gemma4ForCausalLM)"),
    VllmGemma4Row("0.19.0", True, "TRITON_ATTN", True, True,
                  "vllm/model_executor/models/config.py@v0.19.0 Gemma4Config (head_dim != global_head_dim, one "
                  "above 256: TRITON_ATTN unless a backend is named); gemma4.py@v0.19.0 (unchanged to @v0.23.0) "
                  "Gemma4Attention: qkv_proj = QKVParallelLinear(..., total_num_kv_heads) for every layer kind, "
                  "'k_eq_v layers load K weights into both K and V slots'; get_rope(head_dim, max_position="
                  "config.max_position_embeddings) per layer kind, rotary_embedding/base.py RotaryEmbeddingBase "
                  "register_buffer('cos_sin_cache', cache.to(dtype)), gemma4_rope.py rotary_dim = head_size"),
    VllmGemma4Row("0.24.0", True, "FA4 where supported, else TRITON_ATTN", True, True,
                  "vllm/model_executor/models/config.py@v0.24.0 Gemma4Config (flash_attn_version 4 when FA4 is "
                  "supported and the larger head is at most 512); flash_attn.py@v0.24.0 [MultipleOf(16)]; "
                  "gemma4.py@v0.34.0 keeps the V slice (hf_to_vllm_mapper loads k_proj as ['k', 'v']) and the "
                  "two rope caches (base.py and gemma4_rope.py unchanged in size to @v0.34.0)"),
)
_GEMMA4_KEYS = keyed_by_release(VLLM_GEMMA4)


class VllmRopeRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """How a vLLM release sizes the rotary cos/sin caches the model keeps beside its weights ("Model loading took"
    counts them): one cache per distinct get_rope key (_ROPE_DICT), rows by rope type (ROPE_CACHE_POSITIONS) x the
    rotary width, in the model dtype (get_rope's dtype = torch.get_default_dtype(), the cache cast to it) unless
    the model file names another (VLLM_ROPE_FP32_ARCHITECTURES). Replicated on every TP rank."""

    since: str
    # MRotaryEmbedding's cache covers max_position x this many positions ("we enlarge max_position_embeddings to 4
    # times" for Qwen2.5-VL's video positions)
    mrope_position_factor: int
    # Phi3LongRoPEScaledRotaryEmbedding's buffers holding short + long rows: 2 while it registers short, long and
    # their concatenation, 1 once only the concatenation is kept
    longrope_copies: int
    source: str


VLLM_ROPE_CACHE = (
    VllmRopeRow("0.0.0", 1, 2,
                "vllm/model_executor/layers/rotary_embedding.py@v0.2.4 and @v0.3.3 (RotaryEmbedding register_buffer("
                "'cos_sin_cache', cache.to(torch.get_default_dtype())), get_rope's _ROPE_DICT); @v0.6.4, @v0.6.5, "
                "@v0.6.6 Phi3LongRoPEScaledRotaryEmbedding registers short_cos_sin_cache, long_cos_sin_cache and "
                "long_short_cos_sin_cache (their concatenation); MRotaryEmbedding(max_position_embeddings)"),
    VllmRopeRow("0.7.0", 1, 1,
                "vllm/model_executor/layers/rotary_embedding.py@v0.7.0 and @v0.7.1 (only long_short_cos_sin_cache "
                "registered; MRotaryEmbedding unchanged)"),
    VllmRopeRow("0.7.2", 4, 1,
                "vllm/model_executor/layers/rotary_embedding.py@v0.7.2, @v0.7.3, @v0.8.0, @v0.8.5 MRotaryEmbedding "
                "cache_max_position_num = max_position_embeddings * 4; rotary_embedding/mrope.py@v0.10.1.1, @v0.14.0, "
                "@v0.23.0 and @v0.30.0 the same, base.py cache.to(dtype), phi3_long_rope_scaled_rope.py one buffer"),
)
_ROPE_KEYS = keyed_by_release(VLLM_ROPE_CACHE)
# The positions each rope type's cos/sin cache covers (vLLM's get_rope, rotary_embedding.py@v0.8.5 and
# rotary_embedding/__init__.py@v0.14.0 and @v0.30.0, unchanged in this respect from @v0.2.4): LinearScaling and
# DynamicNTKScaling arange(max_position x factor); YaRN and deepseek_yarn are built with the rope's
# original_max_position and arange(original x factor); Phi-3 LongRoPE keeps original + max_position rows (short
# then long); llama3, the default rope, mrope and the other RotaryEmbedding subclasses max_position rows.
ROPE_CACHE_POSITIONS = {
    "linear": "max_position x factor",
    "dynamic": "max_position x factor",
    "yarn": "original x factor",
    "deepseek_yarn": "original x factor",
    "longrope": "original + max_position",
}
# Model files that ask get_rope for an FP32 cache whatever the model dtype (dtype=torch.float32)
VLLM_ROPE_FP32_ARCHITECTURES = {
    "GptOssForCausalLM": "vllm/model_executor/models/gpt_oss.py@v0.10.1.1, @v0.14.0 and @v0.23.0 get_rope(..., "
                         "dtype=torch.float32)",
    "MiniMaxText01ForCausalLM": "vllm/model_executor/models/minimax_text_01.py@v0.14.0 and @v0.23.0 get_rope(..., "
                                "dtype=torch.float32)",
}


def vllm_rope_row(version: str | None) -> VllmRopeRow:
    """The rope-cache rule of a vLLM release."""
    return row_for("vllm", _ROPE_KEYS, version)


def vllm_gemma4_row(version: str | None) -> VllmGemma4Row:
    return row_for("vllm", _GEMMA4_KEYS, version)


def vllm_fa4_page_row(version: str | None) -> VllmFa4PageRow:
    """The FA4 page rule of a vLLM release."""
    return row_for("vllm", _FA4_PAGE_KEYS, version)


def vllm_default_block_size(version: str | None) -> int:
    """vLLM's KV block size on CUDA when the deployment gives none (MLA models: vllm_mla_block_row)."""
    return row_for("vllm", _DEFAULT_BLOCK_KEYS, version).block_size


def vllm_mla_block_row(version: str | None) -> VllmMlaBlockRow:
    """The MLA block-size rule of a vLLM release."""
    return row_for("vllm", _MLA_BLOCK_KEYS, version)


class VllmMlaAlignRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """Whether vLLM V0's CacheEngine pads an MLA latent entry on CUDA from one release on (the `since` version)."""

    since: str
    # 0: no padding; else the entry (kv_lora_rank + qk_rope_head_dim elements) is rounded up to this many bytes
    # counted in the MODEL dtype (align_to_256bytes(entry, model_config.dtype)), then stored in the KV dtype
    align_bytes: int
    source: str


# The padded entry is both the block size the profiler divides by and the allocation: DeepSeek-R1's 576 bf16
# elements become 640 (78,080 B/token over 61 layers, not 70,272). VLLM_CUDA_MEM_ALIGN_KV_CACHE=0 turns it off.
VLLM_MLA_KV_ALIGN = (
    VllmMlaAlignRow("0.0.0", 0, "vllm/worker/cache_engine.py@v0.7.1: get_cache_block_size has no alignment"),
    VllmMlaAlignRow("0.7.2", 256, "vllm/worker/cache_engine.py@v0.7.2, @v0.7.3 get_cache_block_size and "
                                  "_allocate_kv_cache: align_to_256bytes(num_heads * head_size, model_config.dtype) "
                                  "when model_config.use_mla and current_platform.is_cuda() and "
                                  "VLLM_CUDA_MEM_ALIGN_KV_CACHE (envs.py default \"1\"); utils.py align_to_256bytes"),
    VllmMlaAlignRow("0.8.0", 0, "vllm/worker/cache_engine.py@v0.8.0: the alignment is removed"),
)
_MLA_ALIGN_KEYS = keyed_by_release(VLLM_MLA_KV_ALIGN)


def vllm_mla_align_row(version: str | None) -> VllmMlaAlignRow:
    """The MLA KV-entry padding of a vLLM release (V0's CacheEngine on CUDA)."""
    return row_for("vllm", _MLA_ALIGN_KEYS, version)


# GPUStack's own estimate_model_vram for LLMs (gpustack/scheduler): weights x 1.2 + 2 GiB
GPUSTACK_WEIGHT_FACTOR = 1.2
GPUSTACK_WEIGHT_EXTRA = 2 * GiB

# --- SGLang ----------------------------------------------------------------------------------------------
class SglangProfile(TableRow):  # a table row: tuple-built, no generated methods to compile
    """How one SGLang release line picks its defaults (docs/memory-arithmetic.md, "SGLang"), read in
    python/sglang/srt/server_args.py of the release's PyPI wheel (`source` names the file and release)."""

    since: str
    # How the default mem_fraction_static is chosen:
    #   "tp"            TP tiers only (tp_fractions)
    #   "tp-or-13gib"   TP tiers up to 81,920 MiB, else (gpu_mem - 13 GiB) / gpu_mem
    #   "tp-or-lift"    TP x PP tiers up to 81,920 MiB, else 0.88; over 96 GiB
    #                   min(f + 48 GiB x (1 - f) / gpu_mem, (gpu_mem - 18 GiB) / gpu_mem)
    #   "tp-or-big-gpu" as "tp-or-lift", but 0.79 over 180,000 MiB on CUDA (not ROCm: SGLANG_NON_CUDA)
    #   "tiered-reserve" a reserve by GPU-memory tier and TP x PP (SGLANG_TIERED_RESERVE)
    #   "reserved"      a reserve from chunked prefill, graph batch size and TP x PP (reserved_mb)
    fraction_rule: str
    tp_fractions: tuple[tuple[int, float], ...]  # (minimum TP, fraction), largest TP first
    fallback_fraction: float  # when the GPU size is unknown
    # "v0.3.0" (no small-GPU cut) | "v0.3" | "v0.4" | "v0.4.3" (80 graphs from TP 4 on small GPUs; from
    # 0.4.0.post1) | "v0.4.6" (from 0.4.5.post3) | "v0.4.6.post2" | "v0.4.7" (the v0.4.3 rule with wider graph
    # captures and, in 0.4.7, a larger chunk on big GPUs) | "v0.4.8" | "v0.5" | "v0.5.4.post1" |
    # "v0.5.20": cuda_graph_max_bs and chunked_prefill_size by GPU size (the v0.5* rules read SGLANG_GPU_TIERS_BY_RULE)
    graph_rule: str
    page_rounding: bool  # max_total_num_tokens rounded down to --page-size (model_runner.py from 0.4.4)
    source: str
    prefill_graph_reserve: bool = False  # the reserve counts piecewise (prefill) CUDA graphs, on by default


SGLANG_TP_TIERS_030 = ((16, 0.79), (8, 0.83), (4, 0.85), (2, 0.87), (1, 0.88))  # 0.3.0 to 0.3.5.post2
SGLANG_TP_TIERS_036 = ((16, 0.79), (8, 0.82), (4, 0.85), (2, 0.87), (1, 0.88))  # 0.3.6
SGLANG_TP_TIERS_04 = ((16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87), (1, 0.88))
SGLANG_PROFILES = (
    SglangProfile("0.0.0", "tp", SGLANG_TP_TIERS_030, 0.88, "v0.3.0", False,
                  "server_args.py@0.3.0, @0.3.3, @0.3.4 and @0.3.5.post1 (fraction by TP only): TP 8 to 15 take "
                  "0.83; chunked_prefill_size 8192 and graph captures up to 160 on every GPU "
                  "(model_runner.py@0.3.0 batch_size_list, cuda_graph_runner.py@0.3.5 capture_bs end at 160)"),
    SglangProfile("0.3.5.post2", "tp", SGLANG_TP_TIERS_030, 0.88, "v0.3", False,
                  "server_args.py@0.3.5.post2 l.167-174: under 25000 MB chunked_prefill_size //= 4 and "
                  "cuda_graph_max_bs = 4 (not @0.3.5.post1); TP 8 to 15 still take 0.83"),
    SglangProfile("0.3.6", "tp", SGLANG_TP_TIERS_036, 0.88, "v0.3", False,
                  "server_args.py@0.3.6 l.156-166 (fraction by TP only, TP 8 to 15: 0.82); under 25000 MB "
                  "chunked_prefill_size //= 4 and cuda_graph_max_bs = 4"),
    SglangProfile("0.4.0", "tp", SGLANG_TP_TIERS_04, 0.88, "v0.4", False,
                  "server_args.py@0.4.0 l.158-168: TP8 tier 0.81 (0.82 in 0.3.6); chunked_prefill_size 2048 and "
                  "cuda_graph_max_bs 8 under 25000 MB at every TP size, else 8192 and 160"),
    SglangProfile("0.4.0.post1", "tp", SGLANG_TP_TIERS_04, 0.88, "v0.4.3", False,
                  "server_args.py@0.4.0.post1 l.189-197 (same @0.4.2, @0.4.3, @0.4.3.post4): as 0.4.0, but under "
                  "25000 MB cuda_graph_max_bs is 80 from TP 4 ('half of the default value 160', from the TP4 "
                  "serving of qwen2-72b), 8 below"),
    SglangProfile("0.4.4", "tp", SGLANG_TP_TIERS_04, 0.88, "v0.4.3", True,
                  "server_args.py@0.4.4 adds --page-size; model_runner.py@0.4.4 l.709-711 (@0.4.5.post2 alike) "
                  "rounds max_total_num_tokens down to page_size; the fraction and graph rules as 0.4.0.post1"),
    SglangProfile("0.4.5.post3", "tp-or-13gib", SGLANG_TP_TIERS_04, 0.88, "v0.4.6", True,
                  "server_args.py@0.4.5.post3 (same @0.4.6 l.224-238, @0.4.6.post1): TP tiers up to 81920 MiB, else "
                  "(gpu_mem - 1024 * 13) / gpu_mem; cuda_graph_runner.py@0.4.5.post3 and @0.4.6 capture up to 256 "
                  "above 81920 MiB; model_runner.py@0.4.5.post3 l.790-792 and @0.4.6 l.782-786 round "
                  "max_total_num_tokens down to page_size"),
    SglangProfile("0.4.6.post2", "tp-or-lift", SGLANG_TP_TIERS_04, 0.88, "v0.4.6.post2", True,
                  "server_args.py@0.4.6.post2 (same @0.4.6.post3, .post4, .post5): TP x PP tiers up to 81920 MiB else "
                  "0.88; above 96 * 1024 MiB min(f + 48 * 1024 * (1 - f) / gpu_mem, (gpu_mem - 1024 * 18) / gpu_mem), "
                  "on every device; cuda_graph_runner.py captures up to 256 above 96 * 1024 MiB"),
    SglangProfile("0.4.7", "tp-or-big-gpu", SGLANG_TP_TIERS_04, 0.88, "v0.4.7", True,
                  "server_args.py@0.4.7 l.253-283: TP x PP tiers up to 81920 MiB else 0.88; 0.79 above 180 * 1000 "
                  "MiB on CUDA (is_cuda(): ROCm takes the next branch); above 96 * 1024 MiB min(f + 48 * 1024 * (1 - "
                  "f) / gpu_mem, (gpu_mem - 1024 * 18) / gpu_mem); chunked_prefill_size 16384 above 180_000 MB; "
                  "cuda_graph_runner.py@0.4.7 captures up to 256 above 96 * 1024 MiB, 512 above 180 * 1000"),
    SglangProfile("0.4.7.post1", "tiered-reserve", (), 0.88, "v0.4.8", True,
                  "server_args.py@0.4.7.post1 and @0.4.8 l.273-315: reserved_mem by GPU-memory tier and TP x PP, "
                  "round((gpu_mem - reserved_mem) / gpu_mem, 3); unchanged to 0.5.2"),
    SglangProfile("0.5.3", "reserved", (), 0.88, "v0.5", True,
                  "server_args.py@0.5.3 _handle_gpu_memory_settings l.637-676 (sglang PR #10975): reserved_mem = "
                  "512 + 1.5 x max(chunked_prefill_size, 2048) + 2 x cuda_graph_max_bs + tp x pp / 8 x 1024, at "
                  "least 10 GiB above 60 GiB; model_runner.py@0.5.3 l.1476-1480 rounds to page_size"),
    SglangProfile("0.5.4.post1", "reserved", (), 0.88, "v0.5.4.post1", True,
                  "server_args.py@0.5.4.post1 _handle_gpu_memory_settings l.669-681: cuda_graph_max_bs 24 (16 in "
                  "0.5.4) below TP 4 on 20-35 GiB GPUs, so the reserve holds 16 MiB more there; the rule as 0.5.3; "
                  "model_runner.py@0.5.4 l.1699-1703 rounds to page_size"),
    SglangProfile("0.5.10", "reserved", (), 0.88, "v0.5.4.post1", True,
                  "server_args.py@0.5.10 l.1254-1314: piecewise CUDA graphs on by default "
                  "(disable_piecewise_cuda_graph = False; enable_piecewise_cuda_graph, off, up to 0.5.9), their "
                  "capture sizes x 8 MiB (1.5 GiB under MLA) added to the reserve before the 10 GiB floor; "
                  "model_runner_kv_cache_mixin.py@0.5.10 _resolve_token_capacity l.824-826 rounds to page_size",
                  prefill_graph_reserve=True),
    SglangProfile("0.5.20", "reserved", (), 0.95, "v0.5.20", True,
                  "arg_groups/memory_hook.py@0.5.20 handle_gpu_memory_settings l.100-116 and l.274-321: 20-35 GiB "
                  "GPUs take chunked_prefill_size 4096 and max_bs 48 below TP 4, 160 from TP 4 (2048, 24 and 80 "
                  "to 0.5.19); the fraction falls back to 0.95 (0.88 to 0.5.19); reserve_for_graph_mb keeps the "
                  "prefill-graph reserve; model_executor/pool_configurator.py@0.5.20 l.542 rounds to page_size",
                  prefill_graph_reserve=True),
    SglangProfile("0.5.23", "reserved", (), 0.95, "v0.5.20", True,
                  "sglang 0.5.23 wheel: kv_cache_configurator.py _profile_available_bytes (gc before measuring), "
                  "pool_configurator.py rounds to page_size; arg_groups/memory_hook.py falls back to 0.95 and keeps "
                  "the prefill-graph reserve (reserve_for_graph_mb)", prefill_graph_reserve=True),
)
_SGLANG_KEYS = keyed_by_release(SGLANG_PROFILES)


class SglangVlmFraction(TableRow):  # a table row: tuple-built, no generated methods to compile
    """How a release cuts mem_fraction_static for a multimodal model ("Automatically reduce --mem-fraction-static
    ... because this is a multimodal model" / "Multimodal model: Dynamically adjusted --mem-fraction-static")."""

    since: str
    # "flat": fraction x factor; "vit": x factor x clamp(1 - 0.1 x (layers x width^2 / (24 x 1024^2) - 1),
    # 0.8, 1.05) from vision_config (ModelFacts.vit_shape), nothing without one
    rule: str
    factor: float
    default_only: bool  # only the fraction SGLang picks, not one the user sets
    source: str


SGLANG_VLM_FRACTION_RULES = (
    SglangVlmFraction("0.0.0", "flat", 0.95, False,
                      "model_executor/model_runner.py@0.3.0 (server_args.mem_fraction_static *= 0.95) to "
                      "@0.4.4.post3 (self.mem_fraction_static *= 0.95), whatever set the fraction"),
    SglangVlmFraction("0.4.4.post4", "flat", 0.90, False,
                      "model_executor/model_runner.py@0.4.4.post4 to @0.4.8.post1: self.mem_fraction_static *= 0.90"),
    SglangVlmFraction("0.4.9", "flat", 0.90, True,
                      "server_args.py@0.4.9 to @0.4.9.post2 __post_init__: *= 0.90 inside `if "
                      "self.mem_fraction_static is None` (model_runner.py@0.4.9 no longer cuts it)"),
    SglangVlmFraction("0.4.9.post3", "vit", 0.95, True,
                      "server_args.py@0.4.9.post3 to @0.5.10 adjust_mem_fraction_for_vlm, "
                      "arg_groups/memory_hook.py@0.5.20 to @0.5.23 (its post-capture branch, 8 GiB off the fraction, "
                      "only under SGLANG_ENABLE_POST_CAPTURE_KV_SIZING, off by default: environ.py@0.5.23)"),
)
SGLANG_VIT_BASELINE = 24 * 1024**2  # ViT-L/14: 24 layers x 1024^2 (adjust_mem_fraction_for_vlm)
SGLANG_VIT_SENSITIVITY = 0.1  # "every time the complexity grows 100%, adjust final factor for 10%"
SGLANG_VIT_CLAMP = (0.8, 1.05)
_SGLANG_VLM_KEYS = keyed_by_release(SGLANG_VLM_FRACTION_RULES)


def sglang_vlm_fraction(version: str | None) -> SglangVlmFraction:
    return row_for("sglang", _SGLANG_VLM_KEYS, version)


class SglangMultimodalReserve(TableRow):  # a table row: tuple-built, no generated methods to compile
    """What a release takes off the KV budget of a multimodal model for the allocations made after the pool is
    sized (kv_cache_configurator.py mm_runtime_reservation_gb, logged as "Reserving %.2f GB of the KV budget for
    post-sizing multimodal allocations"): the embedding cache's MB (SGLANG_VLM_CACHE_SIZE_MB) and, when the feature
    transport resolves to cuda_ipc or cuda_vmm, the feature pool's MB (SGLANG_MM_FEATURE_CACHE_MB)."""

    since: str
    cache_mb: int  # SGLANG_VLM_CACHE_SIZE_MB's default (0 with no reserve)
    feature_pool_mb: int  # SGLANG_MM_FEATURE_CACHE_MB's default
    # Qwen3-VL on an SM90 GPU of 60 GiB or more: the embedding cache off unless its variable is set, cuda_ipc
    # chosen on one node when no cache retains embeddings, and a 3 GiB pool at --max-running-requests 400+
    hopper_qwen3_vl: bool
    source: str


SGLANG_MM_RESERVE_ROWS = (
    SglangMultimodalReserve("0.0.0", 0, 0, False, "mem_cache/kv_cache_configurator.py@v0.5.17 "
                            "_profile_available_bytes (no multimodal reserve)"),
    SglangMultimodalReserve("0.5.18", 100, 1024, False,
                            "mem_cache/kv_cache_configurator.py@v0.5.18 and @v0.5.19 mm_runtime_reservation_gb; "
                            "environ.py@v0.5.18 (100 and 1024 MB); server_args.py@v0.5.18 "
                            "_handle_multimodal_feature_transport, arg_groups/serving_hook.py@v0.5.19 (cpu on one "
                            "node unless asked)"),
    SglangMultimodalReserve("0.5.20", 100, 1024, True,
                            "mem_cache/kv_cache_configurator.py@v0.5.20 to @v0.5.23 mm_runtime_reservation_gb; "
                            "arg_groups/model_overrides/qwen3_vl.py@v0.5.20 to @v0.5.23 "
                            "_qwen3vl_hopper_serving_overrides; environ.py@v0.5.23"),
)
_SGLANG_MM_RESERVE_KEYS = keyed_by_release(SGLANG_MM_RESERVE_ROWS)
# the transports that keep a feature pool on the GPU (mm_runtime_reservation_gb)
SGLANG_GPU_FEATURE_TRANSPORTS = frozenset({"cuda_ipc", "cuda_vmm"})
SGLANG_VLM_CACHE_ENV, SGLANG_MM_FEATURE_CACHE_ENV = "SGLANG_VLM_CACHE_SIZE_MB", "SGLANG_MM_FEATURE_CACHE_MB"
SGLANG_LEGACY_IPC_ENV = "SGLANG_USE_CUDA_IPC_TRANSPORT"  # deprecated: set, it picks cuda_ipc (true) or cpu
# model_config.py@v0.5.18 .. @v0.5.23: multimodal off by default for these classes (--enable-multimodal turns it on)
SGLANG_MM_OFF_BY_DEFAULT = frozenset({"Gemma3ForConditionalGeneration", "Llama4ForConditionalGeneration",
                                      "Step3VLForConditionalGeneration", "InklingForConditionalGeneration"})
SGLANG_HOPPER_QWEN3_VL = frozenset({"Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration"})
SGLANG_HOPPER_QWEN3_VL_MIN_MB = 60 * 1024  # large_hopper_qwen3_vl_model_type: gpu_mem < 60 * 1024 is not "large"
SGLANG_HOPPER_QWEN3_VL_WIDE_RUNNING = 400  # max_running_requests >= 400: the pool grows to 3 GiB
SGLANG_HOPPER_QWEN3_VL_WIDE_POOL_MB = 3 * 1024


class SglangHopperQwen3VlGraphRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """Whether a release raises a large-Hopper Qwen3-VL's default decode-graph batch to --max-running-requests."""

    since: str
    expands: bool
    source: str


SGLANG_HOPPER_QWEN3_VL_GRAPH_ROWS = (
    SglangHopperQwen3VlGraphRow("0.0.0", False, "arg_groups/memory_hook.py@0.5.19 (no model override of the batch)"),
    SglangHopperQwen3VlGraphRow("0.5.20", True,
                                "arg_groups/model_overrides/qwen3_vl.py@0.5.20 .. @0.5.23 "
                                "expand_multimodal_decode_graph_to_running_limit (is_sm90_supported: major 9; gpu_mem "
                                ">= 60 * 1024; model_type qwen3_vl or qwen3_vl_moe; max_running_requests <= 512 and "
                                "above the default; no decode max_bs or bs given), called by memory_hook.py@0.5.20 .. "
                                "@0.5.23 handle_gpu_memory_settings before the reserve counts max_bs x 2 MiB"),
)
SGLANG_HOPPER_QWEN3_VL_GRAPH_MAX_RUNNING = 512
_SGLANG_HOPPER_QWEN3_VL_GRAPH_KEYS = keyed_by_release(SGLANG_HOPPER_QWEN3_VL_GRAPH_ROWS)


def sglang_hopper_qwen3_vl_graph_row(version: str | None) -> SglangHopperQwen3VlGraphRow:
    return row_for("sglang", _SGLANG_HOPPER_QWEN3_VL_GRAPH_KEYS, version)


def sglang_mm_reserve(version: str | None) -> SglangMultimodalReserve:
    return row_for("sglang", _SGLANG_MM_RESERVE_KEYS, version)


class SglangAiterCut(TableRow):  # a table row: tuple-built, no generated methods to compile
    """What a release multiplies mem_fraction_static by under the aiter attention backend (ROCm) for a model whose
    context is longer than `above_context` tokens, a fraction the user sets included; 1.0: no cut."""

    since: str
    factor: float
    above_context: int
    source: str
    # an environment variable that, set true, keeps a fraction the user gave uncut ("" : none in that release)
    explicit_kept_by_env: str = ""


SGLANG_AITER_HONOR_ENV = "SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION"
# what SGLang's EnvBool reads as true (environ.py@v0.5.19 .. @v0.5.23), case and spaces aside
SGLANG_ENV_TRUE = frozenset({"true", "1", "yes", "y"})
SGLANG_AITER_CUTS = (
    SglangAiterCut("0.0.0", 1.0, 0, "model_executor/model_runner.py@v0.4.6.post5 (no aiter cut)"),
    # aiter is also what 0.4.7+ picks on ROCm for an MHA model when no backend is given (model_runner.py@v0.4.7
    # "elif _is_hip: attention_backend = 'aiter'", server_args.py@v0.5.5 and @v0.5.17 _get_default_attn_backend)
    SglangAiterCut("0.4.7", 0.85, 8192,
                   "model_executor/model_runner.py@v0.4.7 to @v0.5.3 (self.mem_fraction_static *= 0.85 if "
                   "attention_backend == 'aiter' and context_len > 8192), server_args.py@v0.5.5, @v0.5.12 and "
                   "@v0.5.17 _handle_attention_backend_compatibility, arg_groups/attention_hook.py@v0.5.23 (there an "
                   "explicit fraction is kept under SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION=1, off by default)"),
    SglangAiterCut("0.5.19", 0.85, 8192,
                   "arg_groups/attention_hook.py@v0.5.19 and @v0.5.23, environ.py@v0.5.19 (EnvBool: 'true', '1', "
                   "'yes', 'y'; absent in 0.5.18): an explicit fraction is kept when the variable is true",
                   SGLANG_AITER_HONOR_ENV),
)
_SGLANG_AITER_KEYS = keyed_by_release(SGLANG_AITER_CUTS)


def sglang_aiter_cut(version: str | None) -> SglangAiterCut:
    return row_for("sglang", _SGLANG_AITER_KEYS, version)


def sglang_profile(version: str | None) -> SglangProfile:
    return row_for("sglang", _SGLANG_KEYS, version)


# Free memory SGLang's first measurement no longer sees: CUDA context alone on one GPU; with TP, NCCL and its
# all-reduce buffers too. The parallel value is sglang#22537 (B200 TP4): 183,359 MiB total = 179.06 GiB, and
# "Load weight end. avail mem=160.78 GB, mem usage=15.50 GB" puts the free memory before the weights at
# 176.28 GiB. It reproduces S1 (vllm#21348, 4x H100 TP4, 16.46 GiB of pool) to 0.1 %.
SGLANG_START_UP_SINGLE = CUDA_CONTEXT
SGLANG_START_UP_PARALLEL = int(2.78 * GiB)
# On PCIe boards (GPU_INTERCONNECT "pcie" / "no_p2p") SGLang disables custom all-reduce beyond two GPUs, or its
# set-up finds no peer access, and start-up keeps the CUDA context and NCCL only. GPU total minus "avail mem" at
# "Load weight begin", per rank: 4x L4 TP4 0.40 GiB (0.4.3, "Custom allreduce is disabled ... more than two
# PCIe-only GPUs"), 2x A100-PCIe TP2 0.38-0.48 (sglang#17680, 0.5.8), 2x RTX 4090 TP2 0.71, 4x RTX 6000 Ada TP4
# 0.66-0.79 (sglang#7212, 0.4.7), 4x sm_120 96 GB TP4 0.96 (sglang#40558). The median, 0.71 GiB, keeps every one
# within 0.3 GiB; NVLink logs of the same step are 1.3-2.5 GiB.
SGLANG_START_UP_PCIE_PARALLEL = int(0.71 * GiB)
# Weights as SGLang loads them ("Load weight end ... mem usage"): the parameters, plus the rotary cos/sin cache
# (one per shape, get_rope's _ROPE_DICT), max_position x rotary_dim values, kept in FP32 on CUDA from 0.4.2.post1
# (layers/rotary_embedding.py@v0.4.2.post1: "cache needs to be in FP32 for numerical stability", cast to the
# model dtype only off CUDA; @v0.4.1.post7 casts it to the model dtype everywhere).
SGLANG_ROPE_FP32_SINCE = "0.4.2.post1"
# PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp, kept by every torch SGLang pins): a request of
# at most 1 MiB comes from a 2 MiB segment of small blocks, one under 10 MiB from a 20 MiB segment, a larger one
# from its own segment rounded up to 2 MiB; a block is split only when more than 1 MiB would remain. SGLang
# measures "mem usage" after torch.cuda.empty_cache(), which frees whole unused segments only, so the unused
# tails of the parameters' segments count as loaded (utils.py@v0.4.3.post4 get_available_gpu_memory).
ALLOC_SMALL_MAX = 1 * MiB
ALLOC_SMALL_SEGMENT = 2 * MiB
ALLOC_MID_MAX = 10 * MiB
ALLOC_MID_SEGMENT = 20 * MiB
ALLOC_LARGE_ROUND = 2 * MiB
SGLANG_FALLBACK_FRACTION = 0.88  # 0.3.6-0.5.19 with no GPU size (0.95 from 0.5.20: SglangProfile.fallback_fraction)
SGLANG_BIG_GPU_FLOOR_MB = 10 * 1024  # reserved floor on GPUs over 60 GiB (PR #10975, 0.5.4 wheel)
SGLANG_013_RESERVE_MB = 13 * 1024  # 0.4.x above 81920 MiB: (gpu_mem - 1024 * 13) / gpu_mem
SGLANG_013_THRESHOLD_MB = 81920
# 0.4.7 only (server_args.py@0.4.7): GPUs above 180,000 MiB on CUDA take 0.79; above 96 GiB the fraction is lifted
# by 48 GiB of the remainder but keeps 18 GiB free
SGLANG_047_HUGE_MB, SGLANG_047_HUGE_FRACTION = 180 * 1000, 0.79
SGLANG_047_BIG_MB, SGLANG_047_LIFT_MB, SGLANG_047_RESERVE_MB = 96 * 1024, 48 * 1024, 18 * 1024
# 0.4.7 only, with a speculative algorithm (server_args.py@0.4.7 l.272-283; none in 0.4.6.post2, the tiered reserve
# from 0.4.7.post1): 20 GiB kept above 96 GiB ("need reserve more memory for spec cuda graph"), x 0.95 below
SGLANG_047_SPEC_RESERVE_MB, SGLANG_047_SPEC_FACTOR = 20 * 1024, 0.95
# 0.4.5.post3-0.4.7 graph captures and chunk on big GPUs (cuda_graph_runner.py get_batch_sizes_to_capture and
# server_args.py of each wheel): the default list ends at 160 and gains range(160, 257, 8) above 81,920 MiB in
# 0.4.5.post3 to 0.4.6.post1 (0.4.6 adds "and dp_size == 1"), above 96 * 1024 MiB from 0.4.6.post2; 0.4.7 adds
# range(256, 513, 16) and a 16,384-token chunk above 180 * 1000 MiB (SGLANG_047_HUGE_MB). gsg does not model DP
# attention, so 0.4.6's DP test is not read.
SGLANG_046_WIDE_GRAPH_MB = 81920
SGLANG_0462_WIDE_GRAPH_MB = 96 * 1024
SGLANG_WIDE_GRAPH_BS, SGLANG_047_HUGE_GRAPH_BS, SGLANG_047_HUGE_CHUNKED = 256, 512, 16384
# 0.4.7.post1-0.5.2 (server_args.py@0.4.8): reserved MiB by GPU size, (upper bound MiB or None, base GiB,
# GiB per TP x PP rank)
SGLANG_TIERED_RESERVE = ((20 * 1024, 2.8, 0.1), (35 * 1024, 2.8, 0.1), (90 * 1024, 9.5, 0.5),
                         (100 * 1024, 12.0, 0.5), (160 * 1024, 12.0, 0.5), (None, 32.0, 0.0))
# 0.4.7.post1-0.5.2 graph batch sizes: cuda_graph_runner.py@0.4.8 get_batch_sizes_to_capture captures up to 160,
# up to 256 above 90 GiB and up to 512 above 160 * 1000 MiB; server_args sets 8 (80 at TP >= 4) under 35 GiB
SGLANG_048_SMALL_GPU_MB = 35 * 1024
SGLANG_048_GRAPH_BS = ((90 * 1024, 160), (160 * 1000, 256), (None, 512))
SGLANG_048_CHUNKED = ((SGLANG_048_SMALL_GPU_MB, 2048), (160 * 1024, 8192), (None, 16384))
SGLANG_048_UNKNOWN_CHUNKED = 4096
# 0.5.10+: the piecewise (prefill) CUDA graphs' capture sizes up to piecewise_cuda_graph_max_tokens (=
# chunked_prefill_size, 2048 under MLA), 8 MiB of non-torch memory each; 1.5 GiB flat under MLA
# (server_args.py@0.5.10 _generate_piecewise_cuda_graph_tokens; cuda_graph_hook.py@0.5.23 alike)
SGLANG_PREFILL_GRAPH_MB_PER_SIZE = 8
SGLANG_PREFILL_GRAPH_MLA_MB = 1.5 * 1024


class SglangOptInPrefillGraphs(TableRow):  # a table row: tuple-built, no generated methods to compile
    """What --enable-piecewise-cuda-graph adds to the default fraction's reserve before piecewise graphs were on by
    default (0.5.10: SglangProfile.prefill_graph_reserve)."""

    since: str
    # "": no term; "tokens-div": max tokens // divisor MiB after the 10 GiB floor; "per-size": 8 MiB per capture
    # size (prefill_graph_sizes) before the floor
    rule: str
    divisor: int
    default_max_tokens: int  # the ceiling when not given; 0: chunked_prefill_size
    mla_max_tokens: int  # the ceiling under MLA when not given; 0: as above
    source: str


SGLANG_OPT_IN_PREFILL_GRAPHS = (
    SglangOptInPrefillGraphs("0.0.0", "", 0, 0, 0, "server_args.py@0.5.4 and @0.5.5 _handle_gpu_memory_settings: the "
                             "flag exists, the reserve has no term for it"),
    SglangOptInPrefillGraphs("0.5.6", "tokens-div", 4, 4096, 0,
                             "server_args.py@0.5.6 and @0.5.6.post2: reserved_mem += piecewise_cuda_graph_max_tokens "
                             "// 4 after the 10 GiB floor (dataclass default 4096)"),
    SglangOptInPrefillGraphs("0.5.7", "tokens-div", 8, 0, 0,
                             "server_args.py@0.5.7: // 8, after the floor; the ceiling defaults to "
                             "chunked_prefill_size"),
    SglangOptInPrefillGraphs("0.5.8", "per-size", 0, 0, 2048,
                             "server_args.py@0.5.8 and @0.5.9: len(piecewise_cuda_graph_tokens) * 8 before the floor; "
                             "the ceiling is 2048 under MLA (pr #15927)"),
    SglangOptInPrefillGraphs("0.5.10", "", 0, 0, 0,
                             "server_args.py@0.5.10: on by default (--disable-piecewise-cuda-graph), "
                             "SglangProfile.prefill_graph_reserve"),
)
_SGLANG_OPT_IN_PREFILL_KEYS = keyed_by_release(SGLANG_OPT_IN_PREFILL_GRAPHS)


def sglang_opt_in_prefill_graphs(version: str | None) -> SglangOptInPrefillGraphs:
    return row_for("sglang", _SGLANG_OPT_IN_PREFILL_KEYS, version)


class SglangPrefillPathCap(TableRow):  # a table row: tuple-built, no generated methods to compile
    """A cap on the default prefill-graph token ceiling for a model whose --model-path holds `path_text` (lower
    case); 0 tokens: none. gsg matches the model name it was given (ModelFacts.source), SGLang the path it loads."""

    since: str
    path_text: str
    tokens: int
    source: str


SGLANG_PREFILL_PATH_CAPS = (
    SglangPrefillPathCap("0.0.0", "", 0, "server_args.py@0.5.9 (no piecewise graphs by default, no cap)"),
    SglangPrefillPathCap("0.5.10", "llama-2", 4096,
                         "server_args.py@0.5.10, @0.5.13, @0.5.14 and @0.5.18 _handle_gpu_memory_settings, "
                         "arg_groups/memory_hook.py@0.5.19 .. @0.5.23 handle_gpu_memory_settings: 'For Llama2 series "
                         "models, the max tokens is limited to 4096' when \"llama-2\" is in model_path.lower() and "
                         "the ceiling is not given"),
)
_SGLANG_PREFILL_PATH_KEYS = keyed_by_release(SGLANG_PREFILL_PATH_CAPS)


def sglang_prefill_path_cap(version: str | None) -> SglangPrefillPathCap:
    return row_for("sglang", _SGLANG_PREFILL_PATH_KEYS, version)


class SglangPrefillGraphsOffArchs(TableRow):  # a table row: tuple-built, no generated methods to compile
    """Architectures whose piecewise (prefill) CUDA graphs a release turns off (ModelConfig.
    is_piecewise_cuda_graph_disabled_model, read by _handle_piecewise_cuda_graph before the reserve is sized)."""

    since: str
    architectures: frozenset[str]
    source: str


_SGLANG_PCG_OFF_0510 = frozenset({"DeepseekV32ForCausalLM", "Qwen3NextForCausalLM", "GlmMoeDsaForCausalLM",
                                  "BailingMoeV2_5ForCausalLM", "LLaDAModelLM"})
_SGLANG_PCG_OFF_0513 = frozenset({"DeepseekV4ForCausalLM", "DeepseekV4ForCausalLMNextN", "Qwen3NextForCausalLM",
                                  "BailingMoeV2_5ForCausalLM", "LLaDAModelLM"})
SGLANG_PREFILL_GRAPHS_OFF_ARCHS = (
    SglangPrefillGraphsOffArchs("0.0.0", frozenset(), "server_args.py@0.5.9: no prefill graphs by default"),
    SglangPrefillGraphsOffArchs("0.5.10", _SGLANG_PCG_OFF_0510,
                                "configs/model_config.py@0.5.10 and @0.5.11 piecewise_cuda_graph_disabled_model_archs"
                                " (DeepSeek-V3.2's NSA also by is_deepseek_nsa)"),
    SglangPrefillGraphsOffArchs("0.5.12", _SGLANG_PCG_OFF_0510 | {"DeepseekV4ForCausalLM",
                                                                  "DeepseekV4ForCausalLMNextN"},
                                "configs/model_config.py@0.5.12: DeepSeek-V4 added"),
    SglangPrefillGraphsOffArchs("0.5.13", _SGLANG_PCG_OFF_0513,
                                "configs/model_config.py@0.5.13 .. @0.5.15: DeepseekV32ForCausalLM and "
                                "GlmMoeDsaForCausalLM (and the is_deepseek_nsa test) dropped"),
    SglangPrefillGraphsOffArchs("0.5.16", _SGLANG_PCG_OFF_0513 | {"DeepseekV4ForCausalLMDSpark"},
                                "configs/model_config.py@0.5.16 .. @0.5.19"),
    SglangPrefillGraphsOffArchs("0.5.20", _SGLANG_PCG_OFF_0513 | {"DeepseekV4ForCausalLMDSpark",
                                                                  "Glm5NextForConditionalGeneration"},
                                "configs/model_config.py@0.5.20 .. @0.5.23"),
)
_SGLANG_PCG_OFF_KEYS = keyed_by_release(SGLANG_PREFILL_GRAPHS_OFF_ARCHS)


def sglang_prefill_graphs_off_archs(version: str | None) -> SglangPrefillGraphsOffArchs:
    return row_for("sglang", _SGLANG_PCG_OFF_KEYS, version)


# GPU names SGLang drives without CUDA (lower-cased regex): AMD Instinct / Radeon (ROCm), Huawei Ascend (NPU),
# Intel Gaudi (HPU), Moore Threads MTT (MUSA). is_hip() / is_npu() and the rest turn piecewise graphs off.
SGLANG_NON_CUDA = r"\bamd\b|instinct|radeon|\bmi[1-9]\d{2}x?\b|ascend|gaudi|\bmtt\b"
SGLANG_ROCM = r"\bamd\b|instinct|radeon|\bmi[1-9]\d{2}x?\b"  # the ROCm part of SGLANG_NON_CUDA (is_hip)
SGLANG_SMALL_GPU_MB = 25000  # 0.3.x/0.4.x "gpu_mem < 25000" (MiB, from get_device_memory_capacity)
SGLANG_METADATA_MB = 512  # reserved_mem = 512 (constant metadata) + ... (0.5.4 wheel)
SGLANG_ACTIVATION_MB_PER_TOKEN = 1.5  # ... + max(chunked_prefill_size, 2048) * 1.5
SGLANG_GRAPH_MB_PER_BS = 2  # ... + cuda_graph_max_bs * 2
SGLANG_COMM_MB_PER_RANK = 1024 / 8  # ... + tp * pp / 8 * 1024
# 0.5.x defaults by GPU memory (MiB upper bound, chunked_prefill_size, graph bs below TP4, graph bs at TP>=4),
# the table of _handle_gpu_memory_settings in the 0.5.4 wheel
SGLANG_05_GPU_TIERS = ((20 * 1024, 2048, 8, 8), (35 * 1024, 2048, 16, 80), (60 * 1024, 4096, 32, 160),
                       (90 * 1024, 8192, 256, 512), (160 * 1024, 8192, 256, 512), (None, 16384, 512, 512))
# 0.5.4.post1-0.5.19 (server_args.py@0.5.4.post1 l.669-681, unchanged to @0.5.19): graph bs 24 below TP 4 on
# 20-35 GiB GPUs
SGLANG_0541_GPU_TIERS = ((20 * 1024, 2048, 8, 8), (35 * 1024, 2048, 24, 80), *SGLANG_05_GPU_TIERS[2:])
# 0.5.20+ (arg_groups/memory_hook.py@0.5.20 l.100-116, alike @0.5.23): 20-35 GiB GPUs chunk 4096, graph bs 48 / 160
SGLANG_0520_GPU_TIERS = ((20 * 1024, 2048, 8, 8), (35 * 1024, 4096, 48, 160), *SGLANG_05_GPU_TIERS[2:])
SGLANG_GPU_TIERS_BY_RULE = {"v0.5": SGLANG_05_GPU_TIERS, "v0.5.4.post1": SGLANG_0541_GPU_TIERS,
                            "v0.5.20": SGLANG_0520_GPU_TIERS}
SGLANG_03_CHUNKED = 8192  # 0.3.x dataclass default, //4 under 25000 MB from 0.3.5.post2


class SglangNpuTiers(TableRow):  # a table row: tuple-built, no generated methods to compile
    """An Ascend NPU's chunked_prefill_size and decode-graph batch by memory, where they differ from the GPU tiers:
    (low MiB, high MiB, high included, chunked_prefill_size, graph bs below TP 4, graph bs at TP >= 4), the first
    tier with low <= memory below (or at) high wins; memory in no tier takes the GPU tiers."""

    since: str
    tiers: tuple[tuple[int, int, bool, int, int, int], ...]
    source: str


SGLANG_NPU_TIERS = (
    SglangNpuTiers("0.0.0", (), "server_args.py@0.5.3.post2 _handle_gpu_memory_settings (no NPU branch)"),
    SglangNpuTiers("0.5.3.post3", ((20 * 1024, 32 * 1024, False, 32768, 16, 64),
                                   (60 * 1024, 64 * 1024, False, 32768, 64, 128)),
                   "server_args.py@0.5.3.post3, @0.5.4 and @0.5.6.post2 _handle_gpu_memory_settings: 'is_npu() and "
                   "gpu_mem < 32 * 1024' after the 20 GiB tier, 'is_npu() and gpu_mem < 64 * 1024' after the 60 GiB "
                   "one (Atlas A2B4; Atlas A2 and A3)"),
    SglangNpuTiers("0.5.7", ((0, 32 * 1024, True, 4096, 16, 64), (0, 64 * 1024, True, 8192, 64, 256)),
                   "hardware_backend/npu/utils.py@0.5.7, @0.5.10, @0.5.16, @0.5.20 and @0.5.23 "
                   "set_default_server_args (npu_mem <= 32 * 1024: 910B4; <= 64 * 1024: 910B1-B3, 910_93xx), run "
                   "by _handle_npu_backends before the GPU tiers, which then leave the set values"),
)
_SGLANG_NPU_KEYS = keyed_by_release(SGLANG_NPU_TIERS)
SGLANG_NPU = r"ascend"  # the NPU part of SGLANG_NON_CUDA (is_npu)


def sglang_npu_tiers(version: str | None) -> SglangNpuTiers:
    return row_for("sglang", _SGLANG_NPU_KEYS, version)
# The scheduler's longest input: max_req_input_len = max_req_len - 5, max_req_len = min(context, pool) - 1
# (scheduler.py; sglang#4048 logs 59,862 on a 59,868-token pool).
SGLANG_INPUT_MARGIN = 5
SGLANG_CUDA_GRAPH_BS = 160  # 0.3.x/0.4.x default ("80 (half of the default value 160)" comment in server_args)


class SglangGraphArgs(TableRow):  # a table row: tuple-built, no generated methods to compile
    """The CUDA-graph capture arguments one SGLang release line reads, and what they do to its reserve (a flag
    list's first name is the release's own; later names are its deprecated aliases, which share the dest)."""

    since: str
    decode_max: tuple[str, ...]  # the decode graphs' largest batch (cuda_graph_max_bs, then [decode].max_bs)
    decode_list: tuple[str, ...]  # an explicit decode batch list: its largest entry replaces the max
    prefill_max: tuple[str, ...]  # the prefill (piecewise) graphs' largest token count
    prefill_list: tuple[str, ...]  # an explicit prefill token list: the reserve counts its entries
    refused: tuple[str, ...]  # names the release's argparse refuses (gone, or an ambiguous abbreviation)
    graph_config: bool  # --cuda-graph-config JSON ({"decode": {...}, "prefill": {...}}), over every flag
    # the decode graphs' 2 MiB per batch leaves the reserve when the decode backend is disabled (before: counted
    # even under --disable-cuda-graph)
    decode_reserve_follows_backend: bool
    clamps_prefill_to_context: bool  # the default prefill max is cut to an explicit --context-length
    caps_decode_to_running: bool  # the default decode max is cut to --max-running-requests
    source: str


SGLANG_LEGACY_GRAPH_FLAGS_GONE = "0.5.20"
SGLANG_LEGACY_GRAPH_FLAGS = ("cuda-graph-max-bs", "cuda-graph-bs", "piecewise-cuda-graph-max-tokens",
                             "piecewise-cuda-graph-tokens", "disable-piecewise-cuda-graph")
SGLANG_GRAPH_ARGS = (
    SglangGraphArgs("0.0.0", ("cuda-graph-max-bs",), ("cuda-graph-bs",), (), (), (), False, False, False, False,
                    "server_args.py@0.5.3: --cuda-graph-max-bs, --cuda-graph-bs (nargs='+'; cuda_graph_max_bs = "
                    "max(cuda_graph_bs)); reserved_mem counts cuda_graph_max_bs x 2 whatever --disable-cuda-graph"),
    SglangGraphArgs("0.5.4", ("cuda-graph-max-bs",), ("cuda-graph-bs",), ("piecewise-cuda-graph-max-tokens",),
                    ("piecewise-cuda-graph-tokens",), (), False, False, False, False,
                    "server_args.py@0.5.4 .. @0.5.12.post1: --piecewise-cuda-graph-max-tokens (default "
                    "chunked_prefill_size) and --piecewise-cuda-graph-tokens; the reserve counts "
                    "len(piecewise_cuda_graph_tokens) x 8 from 0.5.8 when on (by default from 0.5.10: "
                    "SglangProfile.prefill_graph_reserve)"),
    SglangGraphArgs("0.5.13", ("cuda-graph-max-bs",), ("cuda-graph-bs",), ("piecewise-cuda-graph-max-tokens",),
                    ("piecewise-cuda-graph-tokens",), (), False, False, True, False,
                    "server_args.py@0.5.13 and @0.5.13.post1 _handle_gpu_memory_settings: the flags of 0.5.4, and "
                    "piecewise_cuda_graph_max_tokens cut to an explicit --context-length (sglang#21112; "
                    "@0.5.12.post1 has no cut)"),
    SglangGraphArgs("0.5.14", ("cuda-graph-max-bs-decode", "cuda-graph-max-bs"),
                    ("cuda-graph-bs-decode", "cuda-graph-bs"),
                    ("cuda-graph-max-bs-prefill", "piecewise-cuda-graph-max-tokens"),
                    ("cuda-graph-bs-prefill", "piecewise-cuda-graph-tokens"), (), True, True, True, False,
                    "server_args.py@0.5.14 _parse_cuda_graph_config (JSON > per-phase flags > legacy) and the "
                    "DeprecatedAliasStoreAction aliases; _handle_gpu_memory_settings: decode max_bs x 2 only when "
                    "the decode backend is not disabled, prefill max_bs = min(chunked, max_total_tokens, "
                    "context_length) (the context clamp from sglang#21112, @0.5.13 .. @0.5.16)"),
    SglangGraphArgs("0.5.17", ("cuda-graph-max-bs-decode", "cuda-graph-max-bs"),
                    ("cuda-graph-bs-decode", "cuda-graph-bs"),
                    ("cuda-graph-max-bs-prefill", "piecewise-cuda-graph-max-tokens"),
                    ("cuda-graph-bs-prefill", "piecewise-cuda-graph-tokens"), (), True, True, False, False,
                    "server_args.py@0.5.17 .. arg_groups/memory_hook.py@0.5.19: as 0.5.14 without the "
                    "context_length clamp of the prefill max"),
    SglangGraphArgs("0.5.20", ("cuda-graph-max-bs-decode",), ("cuda-graph-bs-decode",),
                    ("cuda-graph-max-bs-prefill",), ("cuda-graph-bs-prefill",), SGLANG_LEGACY_GRAPH_FLAGS,
                    True, True, False, False,
                    "arg_groups/fields/exec_.py@0.5.20 (ExecGraph) and server_args.py@0.5.20 prepare_server_args "
                    "(argparse.ArgumentParser, allow_abbrev on, parse_args): the aliases are gone, so "
                    "--cuda-graph-max-bs / --cuda-graph-bs are ambiguous abbreviations of the -decode and -prefill "
                    "flags and the piecewise ones unrecognized; both stop the server"),
    SglangGraphArgs("0.5.22", ("cuda-graph-max-bs-decode",), ("cuda-graph-bs-decode",),
                    ("cuda-graph-max-bs-prefill",), ("cuda-graph-bs-prefill",), SGLANG_LEGACY_GRAPH_FLAGS,
                    True, True, False, True,
                    "arg_groups/memory_hook.py@0.5.22 .. @0.5.23 handle_gpu_memory_settings: a default decode "
                    "max_bs above --max-running-requests is cut to it (decode_max_bs_is_default)"),
)
_SGLANG_GRAPH_ARGS_KEYS = keyed_by_release(SGLANG_GRAPH_ARGS)


def sglang_graph_args(version: str | None) -> SglangGraphArgs:
    return row_for("sglang", _SGLANG_GRAPH_ARGS_KEYS, version)


class SglangDpAttentionRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """What DP attention (--enable-dp-attention with --dp-size N, or --attn-dp-size N) adds to the reserve SGLang
    keeps out of the default mem_fraction_static, by release (the flag's figures, not its pools)."""

    since: str
    flat_mb: float  # a flat addition (the tiered-reserve releases)
    mb_per_bs_rank: float  # MiB per decode graph batch and attention-DP rank, before the 10 GiB floor
    big_bs: int  # above this decode graph max batch, big_mb_per_bs_rank more per batch and rank
    big_mb_per_bs_rank: float
    prefill_instance_exempt: bool  # a PD-disaggregation prefill instance adds nothing
    source: str


SGLANG_DP_ATTENTION_RESERVE = (
    SglangDpAttentionRow("0.0.0", 0.0, 0.0, 0, 0.0, False,
                         "server_args.py@0.4.7 l.253-283 (and before): the default fraction has no DP-attention term"),
    SglangDpAttentionRow("0.4.7.post1", 4 * 1024.0, 0.0, 0, 0.0, False,
                         "server_args.py@0.4.7.post1 l.297-298, @0.4.8 l.310-311, @0.4.9.post1 l.318-319, @0.5.2 "
                         "l.493-494: `if self.enable_dp_attention: reserved_mem += 4 * 1024` after the GPU tier's "
                         "reserve"),
    SglangDpAttentionRow("0.5.3", 0.0, 3.0, 300, 1.5, False,
                         "server_args.py@0.5.3 _handle_gpu_memory_settings l.650-658 (@0.5.5 l.798-806, @0.5.12 "
                         "l.1554-1562, @0.5.13 l.1605-1607, @0.5.14 l.3289-3291 alike): reserved_mem += "
                         "cuda_graph_max_bs * dp_size * 3, and * 1.5 more above 300, before the 10 GiB floor; the "
                         "default graph batch and the chunk before _handle_data_parallelism divides it by dp_size"),
    SglangDpAttentionRow("0.5.15", 0.0, 3.0, 300, 1.5, True,
                         "server_args.py@0.5.15 l.3647-3652 and reserve_for_graph_mb @0.5.16 l.4174-4182, "
                         "arg_groups/memory_hook.py@0.5.20 l.363-371 and @0.5.23 l.370-378 (attn_dp_size, which "
                         "--dp-size N --enable-dp-attention resolves to from 0.5.22): the same term, not on a "
                         "disaggregation prefill instance (disaggregation_mode != \"prefill\")"),
)
_SGLANG_DP_ATTENTION_KEYS = keyed_by_release(SGLANG_DP_ATTENTION_RESERVE)


def sglang_dp_attention_row(version: str | None) -> SglangDpAttentionRow:
    """The DP-attention reserve rule of an SGLang release."""
    return row_for("sglang", _SGLANG_DP_ATTENTION_KEYS, version)


class SglangDpAttentionPrefillGraphs(TableRow):  # a table row: tuple-built, no generated methods to compile
    """Whether DP attention (--enable-dp-attention) turns the prefill (piecewise) CUDA graphs off, by release:
    for every prefill graph backend, for the named ones only, or never."""

    since: str
    every_backend: bool  # off whatever the prefill graph backend
    backends: frozenset[str]  # else off only under these prefill graph backends
    default_backend: str  # the backend without --cuda-graph-backend-prefill (CUDA); "" before the flag
    source: str


SGLANG_DP_ATTENTION_PREFILL_GRAPHS = (
    SglangDpAttentionPrefillGraphs("0.0.0", True, frozenset(), "",
                                   "server_args.py@0.5.10 and @0.5.10.post1 _handle_piecewise_cuda_graph (`# 3. DP "
                                   "attention: if self.enable_dp_attention: self.disable_piecewise_cuda_graph = "
                                   "True`), @0.5.13 (`# 2. DP attention`)"),
    SglangDpAttentionPrefillGraphs("0.5.14", False, frozenset({"tc_piecewise"}), "tc_piecewise",
                                   "server_args.py@0.5.14 l.3007: the rule only in "
                                   "_disable_tc_piecewise_cudagraph_if_incompatible, not in the breakable list "
                                   "(l.3059); model_executor/cuda_graph_config.py@0.5.14 l.90-91: prefill default "
                                   "tc_piecewise"),
    SglangDpAttentionPrefillGraphs("0.5.15", True, frozenset(), "breakable",
                                   "server_args.py@0.5.15 l.3283 and l.3372, @0.5.16 l.3700 and l.3799 (`DP-attn x "
                                   "BCG capture/replay not yet validated`): in both the tc_piecewise and the "
                                   "breakable list; cuda_graph_config.py@0.5.15 default_prefill_backend: breakable on "
                                   "CUDA"),
    SglangDpAttentionPrefillGraphs("0.5.17", False, frozenset({"tc_piecewise"}), "breakable",
                                   "server_args.py@0.5.17 l.4387 and @0.5.18 l.4601, arg_groups/cuda_graph_hook.py"
                                   "@0.5.19 l.181 and @0.5.21 l.189: the DP-attention rule only in "
                                   "disable_tc_piecewise_cudagraph_if_incompatible, no longer in the breakable one; "
                                   "model_executor/cuda_graph_config.py@0.5.17 default_prefill_backend: breakable on "
                                   "CUDA (tc_piecewise only for the multimodal models gsg already counts without "
                                   "prefill graphs, or as given)"),
    SglangDpAttentionPrefillGraphs("0.5.22", False, frozenset(), "breakable",
                                   "arg_groups/cuda_graph_hook.py@0.5.22 and @0.5.23: no tc_piecewise backend and no "
                                   "DP-attention rule in disable_breakable_cudagraph_if_incompatible"),
)
_SGLANG_DP_PREFILL_KEYS = keyed_by_release(SGLANG_DP_ATTENTION_PREFILL_GRAPHS)


def sglang_dp_attention_prefill_graphs(version: str | None) -> SglangDpAttentionPrefillGraphs:
    """The release's rule for DP attention and the prefill CUDA graphs."""
    return row_for("sglang", _SGLANG_DP_PREFILL_KEYS, version)


class SglangModelPageRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """The attention backend SGLang picks for an architecture on an SM100 GPU (B200, GB200, B300) when no backend is
    given, and the KV page size that backend forces from one release on (the `since` version)."""

    since: str
    backend: str  # "" where the release picks none for the architecture
    keeps: tuple[int, ...]  # page sizes the backend accepts; any other becomes `page`
    page: int
    source: str


# Read in server_args.py _handle_model_specific_adjustments and _handle_attention_backend_compatibility at 0.5.2,
# 0.5.3, 0.5.4, 0.5.10 and 0.5.14 and in arg_groups/model_overrides + overrides.py at 0.5.20 (0.5.15's server_args.py
# says the sm100 fill moved there; 0.5.15-0.5.19 and 0.5.21+ taken as their neighbours, unread). The page only
# moves a figure where gsg rounds the pool to the page (SglangProfile.page_rounding, 0.4.4+). DeepSeek-V3's
# architecture is also Kimi-K2's; DeepSeek-V3.2 (NSA) has its own branch, which gsg does not size.
SGLANG_SM100_MODEL_PAGE = {
    "DeepseekV3ForCausalLM": (
        SglangModelPageRow("0.0.0", "", (), 1, "server_args.py@0.5.3 (no sm100 default for DeepseekV3ForCausalLM)"),
        SglangModelPageRow("0.5.4", "trtllm_mla", (32, 64), 64,
                           "server_args.py@0.5.4 .. @0.5.14 _handle_model_specific_adjustments (is_sm100_supported() "
                           "and no attention backend set: trtllm_mla); _handle_attention_backend_compatibility "
                           "(trtllm_mla: page_size not in [32, 64] becomes 64)"),
        SglangModelPageRow("0.5.20", "trtllm_mla", (32, 64), 64,
                           "arg_groups/model_overrides/deepseek_v2.py@0.5.20 _deepseek_family_overrides (sm100, no "
                           "backend set: trtllm_mla); arg_groups/overrides.py@0.5.20 _mla_backend_page_constraints "
                           "(page_size not in [32, 64] becomes 64)"),
    ),
    "GptOssForCausalLM": (
        SglangModelPageRow("0.0.0", "trtllm_mha", (16, 32, 64), 64,
                           "server_args.py@0.5.2 .. @0.5.14 _handle_model_specific_adjustments (GptOssForCausalLM on "
                           "sm100, no backend set: trtllm_mha); _handle_attention_backend_compatibility (trtllm_mha: "
                           "page_size not in [16, 32, 64] becomes 64)"),
        SglangModelPageRow("0.5.20", "trtllm_mha", (16, 32, 64, 128), 64,
                           "arg_groups/model_overrides/gpt_oss.py@0.5.20 _gpt_oss_overrides (sm100, no backend set: "
                           "trtllm_mha); arg_groups/overrides.py@0.5.20 (trtllm_mha: page_size not in [16, 32, 64, "
                           "128] becomes 64)"),
    ),
}


# Ordinary attention models (no MLA, no linear attention, equal K and V widths) with no architecture row above:
# SGLang's default backend on SM100 and the page it forces. Read in server_args.py _handle_attention_backend_
# compatibility at 0.5.6 (MHA: fa3 on Hopper, else flashinfer or triton; no sm100 branch), 0.5.7 and 0.5.9,
# _get_default_attn_backend at 0.5.10 and 0.5.14 (no speculative decoding with topk > 1: trtllm_mha), the page rule
# in server_args.py@0.5.7 .. @0.5.14 and arg_groups/overrides.py@0.5.16 .. @0.5.23. The sampled logs agree: Qwen3-8B
# on a B200 at main of 2026-04 and 2026-05 prints trtllm_mha and pools of 992,896 and 1,707,904 tokens, multiples
# of 64. From 0.5.17 a model whose K and V widths differ takes fa4 instead (model_config.has_asymmetric_kv), which
# gsg leaves out with sliding-window pools and speculative decoding (their backend choice is not read).
SGLANG_SM100_MHA_PAGE = (
    SglangModelPageRow("0.0.0", "", (), 1, "server_args.py@0.5.6 _handle_attention_backend_compatibility (MHA: no "
                                           "sm100 default)"),
    SglangModelPageRow("0.5.7", "trtllm_mha", (16, 32, 64), 64,
                       "server_args.py@0.5.7 _handle_attention_backend_compatibility l.1534-1542 (MHA on sm100, no "
                       "spec with topk > 1: trtllm_mha); l.1634 (trtllm_mha: page_size not in [16, 32, 64] becomes "
                       "64); the same at 0.5.10 (_get_default_attn_backend l.2244-2252) and 0.5.14"),
    SglangModelPageRow("0.5.17", "trtllm_mha", (16, 32, 64, 128), 64,
                       "arg_groups/overrides.py@0.5.17 l.2090 (trtllm_mha: page_size not in [16, 32, 64, 128] "
                       "becomes 64); arg_groups/model_override_base.py@0.5.20 get_default_attn_backend (MHA on "
                       "sm100: trtllm_mha, fa4 for unequal K/V widths); the same @0.5.23"),
)
_SGLANG_SM100_MHA_KEYS = keyed_by_release(SGLANG_SM100_MHA_PAGE)


def sglang_sm100_mha_page_row(version: str | None) -> SglangModelPageRow | None:
    """SGLang's SM100 default for an ordinary attention model at a release; None before it had one."""
    row = row_for("sglang", _SGLANG_SM100_MHA_KEYS, version)
    return row if row.backend else None


@functools.cache
def _model_page_keys(architecture: str) -> tuple[tuple[Version, SglangModelPageRow], ...]:
    return keyed_by_release(SGLANG_SM100_MODEL_PAGE[architecture])


def sglang_model_page_row(architecture: str | None, version: str | None) -> SglangModelPageRow | None:
    """The SM100 backend default of an architecture at an SGLang release; None where it has none."""
    if architecture not in SGLANG_SM100_MODEL_PAGE:
        return None
    row = row_for("sglang", _model_page_keys(architecture), version)
    return row if row.backend else None


class SglangHybridSwaRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """Which sliding-window architectures SGLang gives two KV pools from a release on (`since`), unless
    --disable-hybrid-swa-memory: the full-attention layers' pool, whose token count is max_total_num_tokens, and the
    sliding layers' pool of swa_full_tokens_ratio times as many tokens."""

    since: str
    architectures: tuple[str, ...]  # of those gsg sizes (equal KV bytes per token on every layer)
    gpt_oss_off_with: tuple[str, ...]  # what gives gpt-oss one pool again: "trtllm_mha", "speculative"
    split: str  # "tokens": the one-pool token count T is split, full = T x L / (n_full + r x n_swa); "bytes":
    #             full = the pool's bytes / (bytes per token per layer x (n_full + r x n_swa))
    page_aligned: bool  # both counts rounded down to the page
    source: str


# Read at every tag from 0.4.8 to 0.5.10 and at 0.5.11-0.5.18, 0.5.20 and 0.5.23 (model_runner.py and its
# kv-cache mixin / pool_configurator.py for the split, server_args.py or arg_groups for what turns it off,
# configs/model_config.py for the architecture list). Before 0.5.8 any model whose attention layers have a sliding
# window (get_attention_sliding_window_size) takes it, Llama 4 excepted; from 0.5.8 an architecture list does.
# Sized here: Gemma 2, Gemma 3, gpt-oss and Llama 4, whose layers all keep the same KV bytes per token (Llama 4 from
# 0.5.8: configs/model_config.py@v0.5.8 .. @v0.5.23 is_hybrid_swa_model lists it, get_hybrid_layer_ids makes its
# (i + 1) % 4 != 0 chunked layers the SWA ones; before, its hybrid_kvcache_ratio path is off unless the flag is
# given, which gsg does not read), and Gemma 4 (0.5.11+), whose full and window layers each keep their own. Not sized
# (other per-layer shapes, or layer types gsg's facts do not count): Gemma 3n (0.4.9.post3-0.4.10.post2),
# MiMo-V2-Flash, Step-3.5 and the later list entries.
# configs/model_config.py@v0.5.8 .. @v0.5.23 is_hybrid_swa_model, the entries gsg sizes
_SGLANG_LIST_SWA = ("GptOssForCausalLM", "Llama4ForConditionalGeneration")
SGLANG_HYBRID_SWA = (
    SglangHybridSwaRow("0.0.0", (), (), "tokens", False, "model_runner.py@v0.4.9.post2 (one pool for every model)"),
    SglangHybridSwaRow("0.4.9.post3", ("Gemma2ForCausalLM", "Gemma3ForCausalLM", "Gemma3ForConditionalGeneration",
                                       "GptOssForCausalLM"), (), "tokens", False,
                       "model_runner.py@v0.4.9.post3 __init__ (a sliding window on the model's layers, not Llama 4: "
                       "hybrid) and set_num_token_hybrid (full = T x layers / (r x swa layers + full layers)); "
                       "swa_full_tokens_ratio 0.8 (server_args.py@v0.4.9.post3)"),
    SglangHybridSwaRow("0.4.10.post2", ("Gemma3ForCausalLM", "Gemma3ForConditionalGeneration", "GptOssForCausalLM"),
                       (), "tokens", False, "server_args.py@v0.4.10.post2 (Gemma2ForCausalLM: hybrid SWA memory off)"),
    SglangHybridSwaRow("0.5.0rc0", ("GptOssForCausalLM",), (), "tokens", False,
                       "server_args.py@v0.5.0rc0 (Gemma 2, Gemma 3 and Gemma 3n: off)"),
    SglangHybridSwaRow("0.5.0rc1", (), (), "tokens", False,
                       "server_args.py@v0.5.0rc1 .. @v0.5.7 (GptOssForCausalLM: off as well)"),
    SglangHybridSwaRow("0.5.8", _SGLANG_LIST_SWA, ("trtllm_mha", "speculative"), "tokens", False,
                       "configs/model_config.py@v0.5.8 is_hybrid_swa_model (an architecture list); "
                       "server_args.py@v0.5.8 "
                       "(gpt-oss: off with the trtllm_mha backend, SM100's default, or speculative decoding); "
                       "model_runner_kv_cache_mixin.py@v0.5.8 set_num_token_hybrid"),
    SglangHybridSwaRow("0.5.9", _SGLANG_LIST_SWA, ("trtllm_mha",), "tokens", False,
                       "server_args.py@v0.5.9 (gpt-oss: off with trtllm_mha only); "
                       "model_runner_kv_cache_mixin.py@v0.5.9 "
                       "(the split by bytes per token, equal to the token split when every layer's are equal)"),
    SglangHybridSwaRow("0.5.10", _SGLANG_LIST_SWA, (), "tokens", True,
                       "server_args.py@v0.5.10 (gpt-oss never off); model_runner_kv_cache_mixin.py@v0.5.10 "
                       "_resolve_hybrid_swa_tokens (page-aligned)"),
    SglangHybridSwaRow("0.5.11", (*_SGLANG_LIST_SWA, "Gemma4ForConditionalGeneration"), (), "bytes", True,
                       "model_executor/pool_configurator.py@v0.5.11 .. @v0.5.23 HybridSWAPoolConfigurator (cell = "
                       "F x full layers + r x S x swa layers, F and S each layer kind's bytes per token; full = "
                       "available // cell); configs/model_config.py@v0.5.11 is_hybrid_swa_model (Gemma 4 added); "
                       "@v0.5.20 SWA_SINK_ARCHS (gpt-oss); arg_groups/overrides.py@v0.5.15 .. @v0.5.23 (gpt-oss never "
                       "off)"),
)
# models/gemma4_causal.py first ships in the 0.5.11 wheel (absent from 0.5.10's). utils/hf_transformers/config.py
# @v0.5.11 .. @v0.5.20 moves a multimodal Gemma 4 config's global_head_dim / num_global_key_value_heads to the
# full-attention shape (head_dim, num_key_value_heads) and keeps the window one as swa_*; @v0.5.23 reads the same two
# shapes from transformers' per_layer_config. Either way K and V are both cached (v_head_dim = head_dim).
SGLANG_GEMMA4_SINCE = "0.5.11"
_SGLANG_HYBRID_SWA_KEYS = keyed_by_release(SGLANG_HYBRID_SWA)


def sglang_hybrid_swa_row(version: str | None) -> SglangHybridSwaRow:
    return row_for("sglang", _SGLANG_HYBRID_SWA_KEYS, version)


SGLANG_SWA_FULL_TOKENS_RATIO = 0.8  # --swa-full-tokens-ratio's default at every release read (0.4.9.post3-0.5.23)


class SglangSpeculativeReserve(TableRow):  # a table row: tuple-built, no generated methods to compile
    """MiB the default mem_fraction_static keeps for a draft model and its graphs, by --speculative-algorithm."""

    since: str
    standalone_mb: int  # STANDALONE: a separate draft model
    other_mb: int  # EAGLE, EAGLE3, NEXTN, ...
    ngram_counts: bool  # NGRAM (drafts from the prompt, no draft weights) takes other_mb too
    source: str


SGLANG_SPECULATIVE_RESERVE = (
    SglangSpeculativeReserve("0.0.0", 0, 0, False,
                             "server_args.py@0.4.6.post2 and earlier: no speculative term in the default fraction "
                             "(0.4.7's own: SGLANG_047_SPEC_RESERVE_MB, SGLANG_047_SPEC_FACTOR)"),
    SglangSpeculativeReserve("0.4.7.post1", 2 * 1024, 2 * 1024, True,
                             "server_args.py@0.4.7.post1 .. @0.5.1 (tiered reserve): reserved_mem += 2 * 1024 for any "
                             "speculative_algorithm"),
    SglangSpeculativeReserve("0.5.2", 6 * 1024, 2 * 1024, True,
                             "server_args.py@0.5.2: 6 * 1024 for STANDALONE, 2 * 1024 for every other algorithm"),
    SglangSpeculativeReserve("0.5.3", 6 * 1024, 2 * 1024, False,
                             "server_args.py@0.5.3 .. @0.5.9 _handle_gpu_memory_settings: reserved_mem += 6 * 1024 "
                             "for STANDALONE, 2 * 1024 for any other algorithm but NGRAM, after the 10 GiB floor"),
    SglangSpeculativeReserve("0.5.10", 6 * 1024, 4 * 1024, False,
                             "server_args.py@0.5.10 .. @0.5.13: EAGLE-style drafts 4 * 1024 (STANDALONE 6 * 1024)"),
    SglangSpeculativeReserve("0.5.14", 0, 0, False,
                             "server_args.py@0.5.14, arg_groups/memory_hook.py@0.5.19 .. @0.5.23: the speculative "
                             "term is gone from the reserve"),
)
# From 0.5.11 a speculative algorithm no longer turns the piecewise (prefill) graphs off: server_args.py@0.5.10 and
# @0.5.10.post1 _handle_piecewise_cuda_graph test `self.speculative_algorithm is not None`, @0.5.11 .. @0.5.13 do not,
# nor server_args.py@0.5.14 _apply_cuda_graph_compatibility or arg_groups/cuda_graph_hook.py@0.5.19 .. @0.5.23
SGLANG_SPECULATIVE_PREFILL_GRAPHS_SINCE = "0.5.11"
_SGLANG_SPECULATIVE_KEYS = keyed_by_release(SGLANG_SPECULATIVE_RESERVE)


def sglang_speculative_reserve(version: str | None) -> SglangSpeculativeReserve:
    return row_for("sglang", _SGLANG_SPECULATIVE_KEYS, version)


# An EAGLE-style algorithm (EAGLE, EAGLE3, NEXTN, STANDALONE) with --max-running-requests unset resets it to 48
# (server_args.py@0.4.8 .. @v0.5.12 _handle_speculative_decoding, arg_groups/speculative_hook.py@v0.5.14 and @v0.5.23:
# "Max running requests is reset to 48 for speculative decoding"); NEXTN is renamed EAGLE first.
SGLANG_SPECULATIVE_RUNNING = 48
SGLANG_SPECULATIVE_RUNNING_SINCE = "0.4.8"
SGLANG_EAGLE_FAMILY = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE")
# auto_choose_speculative_params (server_args.py@v0.5.8 .. @v0.5.12) with no --speculative-num-steps: (steps, topk,
# draft tokens); (5, 4, 8) for Llama and Grok targets, (3, 1, 4) for every other architecture and for STANDALONE.
# With topk 1 the draft tokens are steps + 1 whatever was given.
SGLANG_SPECULATIVE_AUTO = (3, 1, 4)
SGLANG_SPECULATIVE_AUTO_WIDE = (5, 4, 8)
SGLANG_SPECULATIVE_AUTO_WIDE_ARCHS = ("LlamaForCausalLM", "Grok1ForCausalLM", "Grok1VForCausalLM")


class SglangDraftOrderRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """When an EAGLE-style draft loads against the target's KV pool sizing (engines/sglang_draft)."""

    since: str
    draft_weights_first: bool  # the draft's weights are resident when the target's pool is profiled
    source: str


# "target pool first": the target's ModelRunner sizes its pool in its own constructor (init_memory_pool), before
# the scheduler builds the draft worker, so the draft's weights, its KV pool (draft_runner_cache_size = the
# target's max_total_num_tokens over the draft's layers) and its graphs all come out of what the fraction leaves.
# From 0.5.14 Scheduler.init_model_worker loads both models, then init_memory_pools sizes the target's pool with
# the draft's weights resident (their embedding and head copies too, freed only after: sglang#36452), then the
# draft's pool; 0.5.20's account_preloaded_weights adds 0 unless a loader preloads.
SGLANG_DRAFT_ORDER = (
    SglangDraftOrderRow("0.0.0", False, "python/sglang/srt/managers/scheduler.py@v0.5.2 .. @v0.5.13 init_model_worker "
                        "(no init_memory_pools; model_runner.py@0.4.8 initialize calls init_memory_pool itself); "
                        "model_runner_kv_cache_mixin.py@v0.5.9 init_memory_pool (is_draft_worker: "
                        "max_total_num_tokens = draft_runner_cache_size)"),
    SglangDraftOrderRow("0.5.14", True, "python/sglang/srt/managers/scheduler.py@v0.5.14 init_model_worker, "
                        "init_memory_pools (alike @v0.5.20, @v0.5.23 with account_preloaded_weights)"),
)
_SGLANG_DRAFT_ORDER_KEYS = keyed_by_release(SGLANG_DRAFT_ORDER)


def sglang_draft_order(version: str | None) -> SglangDraftOrderRow:
    return row_for("sglang", _SGLANG_DRAFT_ORDER_KEYS, version)


class SglangGatedDeltaSpecRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """What speculative decoding adds to a Gated DeltaNet target's mamba pool (gated_delta.sglang_mamba_pool)."""

    since: str
    rule: str  # "" (not read) | "reserve-running"
    source: str
    note: str = ""


# The verify step keeps an SSM state and a conv window per draft token of every running request (MambaPool's
# intermediate_ssm_state_cache and intermediate_conv_window_cache: (max_num_reqs + 1) x draft tokens x one request's
# states). "reserve-running": handle_max_mamba_cache takes mamba_cache_per_req x max_running_requests x
# speculative_num_draft_tokens off the rest before it sizes the slots.
SGLANG_GATED_DELTA_SPEC = (
    SglangGatedDeltaSpecRow("0.0.0", "", "python/sglang/srt/mem_cache/memory_pool.py@v0.5.2, @v0.5.4 MambaPool",
                            note="speculative decoding: SGLang before 0.5.8 allocates the intermediate mamba states "
                                 "per draft token after the pool is sized (size + 1 rows): gsg has not sized them"),
    SglangGatedDeltaSpecRow("0.5.8", "reserve-running", "python/sglang/srt/model_executor/"
                            "model_runner_kv_cache_mixin.py@v0.5.8 .. @v0.5.12 handle_max_mamba_cache; "
                            "mem_cache/memory_pool.py@v0.5.9 MambaPool (spec_state_size = max_num_reqs)"),
    SglangGatedDeltaSpecRow("0.5.13", "", "python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py@v0.5.13, "
                            "mem_cache/kv_cache_configurator.py@v0.5.16",
                            note="speculative decoding: SGLang 0.5.13+ solves the intermediate mamba states per draft "
                                 "token jointly with the slots (by sizing branch): gsg has not read that; 0.5.8-0.5.12 "
                                 "are sized"),
)
_SGLANG_GATED_DELTA_SPEC_KEYS = keyed_by_release(SGLANG_GATED_DELTA_SPEC)


def sglang_gated_delta_spec(version: str | None) -> SglangGatedDeltaSpecRow:
    return row_for("sglang", _SGLANG_GATED_DELTA_SPEC_KEYS, version)

# --- llama.cpp -------------------------------------------------------------------------------------------
# GPUStack 2.x passes --platform-footprint "150,500" to gguf-parser: 500 MiB of VRAM per device.
LLAMACPP_PLATFORM_FOOTPRINT = 500 * MiB
# What GPUStack's scheduler books a llama.cpp instance with when backend_parameters set no -c: gguf-parser's
# defaults (ctx_size 8192, parallel 4; GPUStack 2.x's claim for llama.cpp). The SCHEDULER's figure, not what the
# engine starts with (LLAMACPP_DEFAULT_CTX_BY_BUILD): placement books with it, the memory verdict does not.
GPUSTACK_BOOKING_CTX = 8192
GPUSTACK_BOOKING_PARALLEL = 4  # gguf-parser's --parallel-size default; one unified cache, so no extra KV cells


class LlamaCppDefaultCtx(TableRow):  # a table row: tuple-built, no generated methods to compile
    """The n_ctx llama-server starts with when -c is not given, from one build on (common/common.h
    common_params::n_ctx). 0 is llama_context's "the model's trained context" (n_ctx_train)."""

    since: str
    n_ctx: int
    rule: str
    source: str


# common.h's n_ctx default changed three times. llama_context takes n_ctx_train for 0 (src/llama-context.cpp@
# 0c1e57098: `params.n_ctx == 0 ? hparams.n_ctx_train : params.n_ctx`). Each row names where it was read; where
# the change's own build is not known, the row starts at the oldest numbered build gsg has seen with it.
LLAMACPP_DEFAULT_CTX_BY_BUILD = (
    LlamaCppDefaultCtx("b0", 512, "n-ctx-512",
                       "common/common.h@b1880 (n_ctx = 512; llama-cpp-python 0.2.29's vendored llama.cpp, still 512 "
                       "in 0.2.58, 0.2.64 and 0.2.70's, and at 02c1ecad of 2024-05-29 per llama.cpp#7609)"),
    LlamaCppDefaultCtx("b3579", 0, "n-ctx-train",
                       "common/common.h n_ctx = 0 (llama-cpp-python 0.2.78's vendored fd5ea0f8, June 2024, and "
                       "0.2.88's); llama.cpp#9016 (build 3579) serves n_ctx_train without -c: the oldest numbered "
                       "build gsg has with it, builds between fd5ea0f8 and it are counted at 512"),
    LlamaCppDefaultCtx("b4020", 4096, "n-ctx-4096",
                       "common/common.h n_ctx = 4096 from llama.cpp PR #10136 (merged 2024-11-02, b4020 by date); "
                       "read in llama-cpp-python 0.3.10's vendored 8846aace (b5763) and 0.3.12's"),
    LlamaCppDefaultCtx("b7474", 0, "n-ctx-train-fit",
                       "common/common.h@0c1e57098 n_ctx = 0 (\"0 == context the model was trained with\") with --fit: "
                       "common/fit.cpp shortens only an unset context (n_ctx_auto), so the two are keyed together at "
                       "LLAMACPP_FIT_SINCE (llama.cpp#18181, build 7474)"),
)
_DEFAULT_CTX_KEYS = keyed_by_release(LLAMACPP_DEFAULT_CTX_BY_BUILD)


def llamacpp_default_ctx(version: str | None) -> LlamaCppDefaultCtx:
    return row_for("llamacpp", _DEFAULT_CTX_KEYS, version)


LLAMACPP_DEFAULT_BATCH = 2048  # llama.cpp common.h n_batch (-b)
LLAMACPP_DEFAULT_UBATCH = 512  # llama.cpp common.h n_ubatch (-ub)


class LlamaCppBatchDefaults(TableRow):  # a table row: tuple-built, no generated methods to compile
    """-b / -ub defaults from one build on. Without n_ubatch (None) the graph is reserved for n_batch tokens."""

    since: str
    n_batch: int
    n_ubatch: int | None
    source: str


# n_ubatch (-ub) came with pipeline parallelism (PR #6017), which also raised n_batch from 512 to 2048; before it,
# the compute buffer is reserved for min(n_ctx, n_batch) tokens, so an old build's -b 1024 reserves 1,024, not 512.
# Keyed at the same build as LLAMACPP_PIPELINE_PARALLEL_SINCE (the oldest log gsg has of that PR).
LLAMACPP_BATCH_DEFAULTS = (
    LlamaCppBatchDefaults("b0", 512, None, "common/common.h@b1880 (n_batch = 512; llama-cpp-python 0.2.29's vendored "
                                            "llama.cpp)"),
    LlamaCppBatchDefaults("b2431", LLAMACPP_DEFAULT_BATCH, LLAMACPP_DEFAULT_UBATCH,
                          "common/common.h after PR #6017 (n_batch = 2048, n_ubatch = 512: llama-cpp-python 0.2.58, "
                          "0.2.64, 0.3.10 and 0.3.36's vendored llama.cpp)"),
)
_BATCH_KEYS = keyed_by_release(LLAMACPP_BATCH_DEFAULTS)


def llamacpp_batch_defaults(version: str | None) -> LlamaCppBatchDefaults:
    return row_for("llamacpp", _BATCH_KEYS, version)
LLAMACPP_AUTO_PARALLEL = 4  # llama-server's slots for -np -1 (auto) with the unified KV cache of recent builds
LLAMACPP_CELL_PAD_FLASH = 256  # KV cells padded to 256 with flash attention (gguf-parser, llama.cpp get_padding)
LLAMACPP_CELL_PAD = 32
# From llama.cpp PR #17046 (reviewed 2025-11-07) llama_context pads n_ctx to 256 cells whatever the attention, and
# a cache split per slot (-np N without --kv-unified) pads each slot's share to 256 too: n_ctx becomes
# pad256(pad256(n_ctx) / n_seq_max) x n_seq_max (src/llama-context.cpp). The first release tag we can date after
# the change is b7045 (2025-11-13); builds between the PR and it keep the old padding here, which differs by
# at most 224 cells. Read in the source llama-cpp-python 0.3.36 vendors (llama.cpp 0c1e57098) and checked
# against that build's own buffer lines in CI (tests/integration/test_real_llamacpp.py).
LLAMACPP_CTX_PAD_ALWAYS_SINCE = "b7045"
LLAMACPP_CTX_PAD_ALWAYS = 256
# One KV stream per slot (-np N without --kv-unified; the automatic slot count keeps one unified cache): a separate
# term from the padding above. It appeared before b7045, in a build not dated here; gsg counts it from the first
# build it has checked against a real run (the CI build, newer than b7045) and one cache before that.
LLAMACPP_KV_STREAMS_SINCE = "b7045"
# llama-server caps the outputs one batch can hold at its slots (times 1 + the draft length with speculative
# decoding, never more than n_batch): load_model sets n_outputs_max from server_output_limits
# (tools/server/server-context.cpp), and sched_reserve reserves the prompt graph with min(n_ubatch, n_outputs_max)
# outputs (src/llama-context.cpp), so the compute buffer holds the logits of a few rows, not of n_ubatch.
# Read in the source llama-cpp-python 0.3.26 and 0.3.36 vendor (llama.cpp 7c158fbb4, which runs as b9518, and
# 0c1e57098); 0.3.20's (f49e9178, April 2026) reserves n_ubatch outputs. b9518 is the first build number we can
# put on the change: builds between keep the n_ubatch logits here. Other front ends on libllama (ollama's runner,
# llama-cli) leave n_outputs_max at its default, n_batch.
LLAMACPP_SERVER_OUTPUTS_SINCE = "b9518"
# Weights that stay in host memory and feed a matrix multiplication are copied, interleaved, into a CPU_REPACK
# buffer when ggml's CPU backend has a kernel for their type on that CPU (ggml-cpu/repack.cpp,
# ggml_repack_get_optimal_repack_type): on x86-64 with AVX2 that is Q4_0, Q4_K, IQ4_NL and MXFP4 weights whose
# row count (ne[1]) is a multiple of 8; the mmap'd CPU_Mapped buffer still spans the file, so the copy is memory
# on top. gsg counts this x86 AVX2 rule (the usual GPUStack worker CPU; AVX-512 adds Q2_K, ARM repacks other
# types). The same build's log in CI shows it: Q4_0 layers logged as "CPU_REPACK model buffer size".
LLAMACPP_CPU_REPACK_TYPES = frozenset({"q4_0", "q4_k", "iq4_nl", "mxfp4"})
LLAMACPP_CPU_REPACK_ROWS = 8
# DeepSeek-2/3's attention (MLA) in llama.cpp's cache, per layer and cell (src/llama-model.cpp LLM_ARCH_DEEPSEEK2,
# src/llama-kv-cache.cpp). Before PR #12801 (merged 2025-04-15) it is plain multi-head attention: K holds every
# head's nope + rope dims (128 x 192 for DeepSeek-V3) and V every head's value dims (128 x 128); the GGUF says so
# (attention.head_count_kv = 128, key_length = 192, value_length = 128; llama.cpp#8254 prints V2-Lite's n_embd_k_gqa
# 3072 and n_embd_v_gqa 2048) and the log shows `can_shift = 0`, context
# shift for DeepSeek coming with the PR. From the PR on convert_hf_to_gguf.py writes the model as MQA over the
# latent: one KV head, K = kv_lora_rank + rope (576), V = kv_lora_rank (512); legacy GGUFs still load the old way,
# but gsg assumes the file the build's own converter writes. The first tag gsg can date after the merge is b5452
# (2025-05-21, llama.cpp#13703); builds between count the legacy layout, which over-counts, never under-counts.
# PR #19067 (merged 2026-01-24) drops the V cache of MLA models (V is read from K's latent); the first tag dated
# after it here is b8651 (2026-04-03), and builds between count the 512-wide V, again over-counting.
LLAMACPP_MLA_CACHE_SINCE = "b5452"
LLAMACPP_MLA_V_LESS_SINCE = "b8651"
LLAMACPP_MLA_CACHE_SOURCE = ("src/llama-model.cpp (LLM_ARCH_DEEPSEEK2 hparams), convert_hf_to_gguf.py "
                             "(DeepseekV2Model.set_gguf_parameters) and src/llama-kv-cache.cpp: llama.cpp PR #12801, "
                             "PR #19067; the legacy layout checked on uv-genai/llm-setonix's 8-GCD log")


class LlamaCppRecurrentRule(TableRow):  # a table row: tuple-built
    """How one build range holds the per-sequence state of recurrent layers (Mamba's conv and scan rows)."""

    since: str
    rule: str
    state_bytes: int | None  # bytes per element of the r and s rows; None: held another way, not modelled
    source: str


# Recurrent layers keep, per sequence, a conv row r of (d_conv - 1) x (d_inner + 2 x n_group x d_state) elements
# (LFM2: n_embd x (l_cache - 1)) and a scan row s of d_state x d_inner (hparams n_embd_r / n_embd_s, n_embd_k_s /
# n_embd_v_s before the rename), one cell per sequence: max(1, n_seq_max), which llama-server sets to its slots
# (-np; 4 for auto), unified cache or not. Read in the sources llama-cpp-python vendors:
# - 0.3.7 (794fe23f, ~b4500): the states are rows of the one KV cache, sized at --cache-type-k / --cache-type-v
#   (src/llama-kv-cache.cpp llama_kv_cache_init, kv_size = n_seq_max): not modelled, refused.
# - 0.3.9 (8733e0cf, ~b5500): llama_kv_cache_recurrent, GGML_TYPE_F32 for both whatever -ctk/-ctv say
#   (src/llama-model.cpp create_memory), logged as "llama_kv_cache_recurrent: ... KV buffer size". No build
#   between the two is dated here, so builds before b5500 keep the refusal.
# - 0.3.16 (4227c9be, ~b6200), 0.3.20, 0.3.26, 0.3.36 (0c1e57098): llama_memory_recurrent, still F32, logged as
#   "llama_memory_recurrent: <dev> RS buffer size"; hybrid models (llama-memory-hybrid.cpp) give their attention
#   layers a KV cache of the usual size and their recurrent layers these rows. From 0.3.26 each row is repeated
#   1 + n_rs_seq times, n_rs_seq > 0 only for speculative decoding's rollback (not modelled: 0).
LLAMACPP_RECURRENT_RULES = (
    LlamaCppRecurrentRule("b0", "states-in-kv-cache-not-modelled", None,
                          "src/llama-kv-cache.cpp@794fe23f llama_kv_cache_init (recurrent rows at type_k / type_v)"),
    LlamaCppRecurrentRule("b5500", "f32-conv-and-scan-rows-per-sequence", 4,
                          "src/llama-model.cpp create_memory + src/llama-kv-cache.cpp llama_kv_cache_recurrent@"
                          "8733e0cf (GGML_TYPE_F32, kv_size = max(1, n_seq_max))"),
    LlamaCppRecurrentRule("b6200", "rs-buffer-f32-rows-per-sequence", 4,
                          "src/llama-memory-recurrent.cpp@4227c9be, @0c1e57098 ('RS buffer size'); "
                          "src/llama-hparams.cpp n_embd_r / n_embd_s; src/llama-memory-hybrid.cpp"),
)
_RECURRENT_KEYS = keyed_by_release(LLAMACPP_RECURRENT_RULES)


def llamacpp_recurrent_rule(version: str | None) -> LlamaCppRecurrentRule:
    return row_for("llamacpp", _RECURRENT_KEYS, version)


# Sliding-window layers get their own, smaller cache from b5452 on (the oldest log showing it: llama.cpp#13703,
# "creating SWA KV cache, size = 18432 cells" = 1024-token window x 16 slots + n_batch 2048). Older builds are
# treated as one full cache, which over-counts, never under-counts.
LLAMACPP_SWA_CACHE_SINCE = "b5452"
# From b5560 the SWA cache holds one window per slot plus one micro-batch (n_ubatch), not n_batch.
LLAMACPP_SWA_UBATCH_SINCE = "b5560"
# The architectures llama.cpp builds with a sliding-window cache, and their pattern n as its loader sets it
# (hparams.set_swa_pattern(n) in llama-model.cpp: layer il is windowed when il % n < n - 1). Every other model
# gets one full-length cache, whatever its config says: llama.cpp ignores Mistral-7B-v0.1's and Qwen2's window and
# turned Phi-3's off (swa_type NONE). Keys are architecture names normalised by engines.llamacpp.arch_key, so HF
# architectures, model types and GGUF general.architecture names meet (Gemma3ForConditionalGeneration, gemma3_text,
# gemma3 -> gemma3; GptOssForCausalLM, gpt-oss -> gptoss).
LLAMACPP_SWA_PATTERNS = {"gemma2": 2, "gemma3": 6, "cohere2": 4, "gptoss": 2}
# --flash-attn became on|off|auto with auto the default in b6325 (before it, -fa was a switch, off unless given);
# auto enables flash attention wherever the device runs the FLASH_ATTN_EXT op, which every CUDA, ROCm, Metal and
# Vulkan build does for the usual head sizes: gsg counts auto as on.
LLAMACPP_FLASH_AUTO_SINCE = "b6325"
# Without flash attention the graph's high-water mark is the f32 KQ matrix and its mask plus hidden-size f32 rows
# per reserved token that are live beside them (the residual stream, the normed input, Q before its reshape, ...).
# Six rows make llama.cpp#13661 exact (Qwen3-30B-A3B, n_ctx 30016, n_ubatch 512, hidden 2048: 1934.625 MiB of KQ
# and mask + 24 MiB = the logged 1958.625 MiB); it is a fit to that log, not a count of tensors.
LLAMACPP_KQ_LIVE_HIDDEN_ROWS = 6
# The feed-forward stage keeps the residual and the normed input (two hidden-size f32 rows per token) beside the
# gate and up outputs; on the device that takes the input from the CPU, one more row (the copied embeddings) and,
# with flash attention, the f32 mask beside its f16 cast. llama.cpp#14075 (b5605, Llama-70B Q5_K_M, 4x Quadro RTX
# 5000, -fa, n_ctx 2048, n_ubatch 512) logs 166 / 146 / 146 / 266.50 MiB: 2 x 28672 + 2 x 8192 rows x 512 x 4 B
# + the 2 MiB f16 mask = 146 MiB on CUDA1/2, + 16 MiB of embeddings + the 4 MiB f32 mask = 166 on CUDA0, and the
# logits (8192 + 128256) x 512 x 4 B = 266.5 MiB on CUDA3, all to the MiB. The extras of the input device are fitted
# to that one log; the two rows are a count of live tensors.
LLAMACPP_FFN_HIDDEN_ROWS = 2


class LlamaCppFfnForm(TableRow):  # a table row: tuple-built, no generated methods to compile
    """How llama.cpp's graph builds the feed-forward stage from one build on, and so how many f32 values per token
    its widest moment keeps alive (engines.llamacpp.ffn_width). Each row was read at the build it names and checked
    against that build's own "compute buffer size" on CPU with tiny GGUFs of two widths and three expert counts."""

    since: str
    rule: str
    gated_live: int  # intermediate-width tensors alive at once in a gated MLP (gate, up, and the GLU output)
    expert_loop: bool  # MoE experts computed one at a time (one ggml_mul_mat_id per selected expert)
    source: str


# b0: build_mixtral loops over n_expert_used, one ggml_mul_mat_id per selected expert (llama.cpp PR #4406), silu and
#   the gate product in place. With k >= 2 the next expert's gate finds no free block of its width: expert i's down
#   output sits in the slot its gate freed, so ggml-alloc puts it above (three widths), and the running sum of the
#   expert outputs is one more hidden row. The b1880-era build (llama-cpp-python 0.2.29's vendored llama.cpp) logs
#   CPU compute buffers 10.04 / 14.54 / 14.54 MiB for k = 1 / 2 / 3 and 20.54 MiB with a 1.5 times wider expert
#   (hidden 256, n_ff 2048 and 3072, 512 tokens over 512 cells): 2 widths at k = 1, 3 widths + a hidden row from 2.
# b2694: one ggml_mul_mat_id for all selected experts (PR #6505, commit 0d56246f, build 2694): gate and up of the k
#   experts, [n_ff, k, n_tokens] each, silu and the product in place: 2 k widths (the llama-cpp-python 0.2.64 build:
#   10.04 / 18.04 / 26.04 MiB for k = 1 / 2 / 3; dense 10.01 / 14.01 MiB for n_ff 2048 / 3072).
# b5764: build_ffn and build_moe_ffn use ggml_swiglu_split (ggml PR #14158's GLU ops); GGML_OP_GLU is not one of
#   ggml-alloc's in-place ops (ggml_op_can_inplace), so its output lives beside gate and up: 3 widths dense, 3 k for
#   MoE (the CI build 0c1e57098: dense 15.01 / 21.01 MiB, MoE 15.04 / 27.04 / 39.04 MiB for k = 1 / 2 / 3). b5763
#   (8846aace, llama-cpp-python 0.3.10) still builds silu and mul; 0.3.12's a0374a67 has the GLU op. gsg counts the
#   wider form from the first build after b5763, so an undated build between them is over-counted by one width.
LLAMACPP_FFN_FORMS = (
    LlamaCppFfnForm("b0", "ffn-gate-up-moe-expert-loop", 2, True,
                    "llama.cpp@b1880 llama.cpp build_mixtral (PR #4406 loop over n_expert_used) + ggml-alloc.c "
                    "ggml_op_can_inplace; measured on llama-cpp-python 0.2.29's vendored build"),
    LlamaCppFfnForm("b2694", "ffn-gate-up-moe-all-experts", 2, False,
                    "llama.cpp@b2694 llama.cpp llm_build_moe_ffn (PR #6505 ggml_mul_mat_id over all selected "
                    "experts); measured on llama-cpp-python 0.2.64's vendored build"),
    LlamaCppFfnForm("b5764", "ffn-glu-output-beside-gate-up", 3, False,
                    "src/llama-graph.cpp build_ffn/build_moe_ffn ggml_swiglu_split + ggml/src/ggml-alloc.c "
                    "ggml_op_can_inplace (GLU not in place)@0c1e57098; absent at b5763 (8846aace)"),
)
_FFN_FORM_KEYS = keyed_by_release(LLAMACPP_FFN_FORMS)


def llamacpp_ffn_form(version: str | None) -> LlamaCppFfnForm:
    return row_for("llamacpp", _FFN_FORM_KEYS, version)


class LlamaCppDeltaNetForm(TableRow):  # a table row: tuple-built, no generated methods to compile
    """What a Gated DeltaNet layer keeps alive at its widest moment, from one build on (engines.llamacpp
    delta_net_scratch): conv-channel-wide f32 rows per token (conv channels = d_inner + 2 x n_group x d_state) and
    (d_conv - 1)-row conv states per sequence, beside the hidden rows and the KQ mask every stage holds. None: the
    build's graph was not read, so no delta-net stage is counted."""

    since: str
    rule: str
    conv_rows: int | None
    conv_state_copies: int
    source: str


# b0: not read. Builds before the fused GATED_DELTA_NET op (PR #19504, 2026-02) build the chunked graph
#   (build_delta_net_chunking: 64-token chunks, decay masks of chunk x chunk per head), and up to at least b8586
#   llama_context probes the fused op per device ("resolving fused Gated Delta Net support" in the kept b8586 log):
#   neither graph was measured, so these builds count the feed-forward and logits stages only.
# b10507 (the CI build 0c1e57098, dated after b10507): llama_context sets fused_gdn_ch / fused_gdn_ar without a
#   probe (llama-context.cpp), so every prompt ubatch runs one ggml_gated_delta_net. The widest moment is the
#   ssm_conv of build_layer_attn_linear (src/models/qwen35.cpp, qwen35moe.cpp the same code): the qkv projection,
#   its concat behind the gathered conv state (build_conv_state, delta-net-base.cpp) and the conv output are three
#   conv-channel rows per token, and the gathered state and its copy in the concat are two (d_conv - 1)-row blocks
#   per sequence; z is computed after the delta net (it hangs off the gated norm) and so is not among them.
#   Measured with tiny qwen35 GGUFs (two of them qwen35moe) on this build's CPU backend (tests/core/memory/
#   test_llamacpp_delta_net.py): 39 runs over hidden 256/512, n_ff 128-2048, d_inner 512-4096, n_group 2/4,
#   d_state 64/128, d_conv 4/6, -ub 128-1024, -c 512-4096, -np 1/2; exact wherever the conv rows outweigh a
#   sequence's scan state (d_state x d_inner) five times, which real Qwen3.5 shapes do from -ub 512 (27B: 10240 x
#   512 vs 128 x 6144, 6.7 times); below that ggml-alloc leaves gaps of up to 2.5 scan states per sequence, not counted.
LLAMACPP_DELTA_NET_FORMS = (
    LlamaCppDeltaNetForm("b0", "delta-net-not-modelled", None, 0,
                         "not read: src/models/delta-net-base.cpp build_delta_net_chunking, or the fused op behind "
                         "llama_context's probe (b8586 log)"),
    LlamaCppDeltaNetForm("b10507", "delta-net-fused-conv-stage", 3, 2,
                         "src/models/qwen35.cpp build_layer_attn_linear + src/models/delta-net-base.cpp "
                         "build_conv_state/build_delta_net_fused + src/llama-context.cpp fused_gdn_ch@0c1e57098; "
                         "measured on llama-cpp-python 0.3.36's vendored build (CPU)"),
)
_DELTA_NET_FORM_KEYS = keyed_by_release(LLAMACPP_DELTA_NET_FORMS)
# The architectures whose linear-attention layer is build_layer_attn_linear as read above (qwen3next projects
# q, k, v, z in one matrix and beta, alpha in another: a different graph, not read)
LLAMACPP_DELTA_NET_ARCHS = frozenset({"qwen35", "qwen35moe"})
# A Qwen3.5/3.6 GGUF with its MTP head stores it as the last nextn_predict_layers blocks. From 0.3.26's vendored
# llama.cpp (7c158fbb4, b9518) the target's hybrid memory filters them out of both caches (create_memory:
# filter_attn / filter_recr take il < n_layer - nextn_predict_layers; the MTP draft context holds the head's KV);
# 0.3.20's (f49e9178, April 2026) qwen35 loader does not read the key, so every block counts there. Checked on a
# public Qwen3.6-27B-MTP run (search-index file 56678392724): 16 attention layers and 48 RS rows of 65 blocks.
LLAMACPP_NEXTN_OUTSIDE_CACHES_SINCE = "b9518"


def llamacpp_delta_net_form(version: str | None) -> LlamaCppDeltaNetForm:
    return row_for("llamacpp", _DELTA_NET_FORM_KEYS, version)


# Pipeline parallelism (llama.cpp PR #6017, merged 2024-03-13): with several devices, full offload (-ngl above the
# layer count), --split-mode layer, the KV cache offloaded, no --override-tensor and async compute plus events on
# every device (CUDA, ROCm), llama_context asks ggml_backend_sched_new for `parallel`, and the scheduler keeps
# n_copies = GGML_SCHED_MAX_COPIES (4, a build-time define) copies of every split's inputs so the host can fill
# micro-batch k + 1 while a device still reads k (ggml-backend.cpp ggml_backend_sched_split_graph: "add input copies
# as leafs so that they are allocated first"). Leafs stay allocated through the graph, so each device's compute
# buffer holds n_copies copies of what it receives: the hidden state (the embeddings on the input device), the KQ
# mask (f16 with flash attention, f32 without) and the positions (llama-context.cpp, llama-graph.cpp of the build
# llama-cpp-python 0.3.36 vendors). One copy is what the graph holds without pipeline parallelism, so the buffer
# grows by n_copies - 1 copies. L2 (llama.cpp PR #6122, "pipeline parallelism enabled (n_copies=4)") is the oldest
# log gsg has with it; builds between the PR and that one are counted with it as well.
LLAMACPP_PIPELINE_PARALLEL_SINCE = "b2431"
# The KQ mask input is built in f16 under flash attention from llama.cpp PR #23764 (merged 2026-05-27, "Currently we
# reserve the KQ mask in f32 even if FA is used"); before it the input device received the f32 mask and cast it
# (later devices receive the cast: LLAMACPP_CAST_MASK_DOWNSTREAM). gsg
# counts the f16 input from the first build it has read with it (the CI build, llama.cpp 0c1e57098, b10507 or
# later); builds between the PR and that one are counted with the f32 mask, more than they hold, never less.
LLAMACPP_F16_MASK_INPUT_SINCE = "b10507"
LLAMACPP_SCHED_MAX_COPIES = 4
# With n_copies > 1 the scheduler marks every input copy as a graph input and output ("prevent ggml-alloc from
# overwriting the tensor", ggml-backend.cpp ggml_backend_sched_split_graph, read in the CI build 0c1e57098), so
# all copies stay allocated beside the graph's own high-water mark, the logits included: a device whose buffer is
# sized by the logits holds n_copies copies of its inputs on top of them, not n_copies - 1.
LLAMACPP_COPIES_HELD = "ggml/src/ggml-backend.cpp@0c1e57098 ggml_backend_sched_split_graph (set_input + set_output)"
# Before the f16 mask input (LLAMACPP_F16_MASK_INPUT_SINCE), flash attention casts the f32 mask input to f16 once
# (the mask builder returns ggml_cast of the input), and the scheduler places the cast with the first offloaded
# layer: later devices receive that f16 tensor as their split input, only the input device the f32 one (the rule
# the CI build's PR #23764 comment describes, "we reserve the KQ mask in f32 even if FA is used"). llama.cpp#11200
# (b4462, -fa, n_ubatch 256, n_ctx 32768, two devices) shows it on the output device: 4 x (20 + 0.0010) MiB of
# hidden-state, f16-mask and position copies + (5120 + 152064) x 256 x 4 B of logits = 237.50 MiB, logged 237.51.
LLAMACPP_CAST_MASK_DOWNSTREAM = "llama.cpp#11200 (b4462): CUDA1 compute 237.51 MiB = four f16-mask copies + logits"
LLAMACPP_POSITION_BYTES = 4  # int32 position per token
# --fit (llama.cpp PR #16653, merged mid-December 2025; common/fit.cpp llama_params_fit at 0c1e57098): on by default,
# before loading llama-server measures the arguments and, where a device would keep less than --fit-target free
# (1024 MiB each), shortens the context if -c was not given (down to --fit-ctx, 4096, per stream, rounded down to
# 256 cells per stream), then offloads fewer layers if -ngl, --tensor-split and -ot were not given (MoE: expert
# tensors first). With -ngl given it gives up ("n_gpu_layers already set by user") and loads what was asked.
# llama.cpp#18181 (build 7474, 2025-12-18, no --fit on its command line, fit running) is the oldest build gsg has
# seen with it; builds between the merge and that one are counted without it.
LLAMACPP_FIT_SINCE = "b7474"
# --cpu-moe and --n-cpu-moe are shorthands for --override-tensor (common/arg.cpp): --cpu-moe adds one override,
# <experts>=CPU; --n-cpu-moe N adds blk\.<i><experts>=CPU for i in 0..N-1, counted from layer 0 whatever -ngl
# offloads. They append to the list in command-line order, after any -ot given before them (each -ot appends its
# own comma-separated pairs; gsg joins repeated -ot values in order at the first -ot's place, engine_flags.REPEATABLE,
# so only an -ot after a --cpu-moe that follows another -ot is checked too early), and the loader takes
# the first pattern std::regex_search finds in a tensor's name (src/llama-model-loader.cpp create_tensor,
# "buffer type overridden to"); a pattern that matches nothing moves nothing. Rows: the <experts> pattern by build.
@frozen_value(eq=True, repr=True)
class LlamaCppExpertPattern:
    # a docstring of its own: without one, @dataclass writes one through inspect.signature at every import
    # (docs/performance.md, first and sixteenth rounds)
    """One build's <experts> pattern of --cpu-moe / --n-cpu-moe (LLAMACPP_EXPERT_PATTERNS)."""

    since: str
    rule: str
    experts: str
    source: str


LLAMACPP_EXPERT_PATTERNS: tuple[LlamaCppExpertPattern, ...] = (
    # PR #14992 (--cpu-moe, three patterns ending \.weight$) landed days before PR #15077 replaced them with this
    # one; no model of that week had expert biases or chunked experts, so both match the same tensors. The (ch|)
    # alternative arrived later with the only tensors it matches (ffn_*_chexps), so it is exact from here on too.
    LlamaCppExpertPattern("b6089", "ffn-exps-up-down-gate", r"\.ffn_(up|down|gate)_(ch|)exps",
                          "common/common.h@b6089 LLM_FFN_EXPS_REGEX (PR #15077: --n-cpu-moe)"),
    # fused gate+up experts (ffn_gate_up_exps) stayed on the GPU under --cpu-moe before it (llama.cpp#20414)
    LlamaCppExpertPattern("b8301", "ffn-exps-with-gate-up", r"\.ffn_(up|down|gate|gate_up)_(ch|)exps",
                          "common/common.h@b8301 LLM_FFN_EXPS_REGEX (PR #20416: fused gate + up)"),
)
_EXPERT_PATTERN_KEYS = keyed_by_release(LLAMACPP_EXPERT_PATTERNS)


def llamacpp_expert_pattern(version: str | None) -> LlamaCppExpertPattern:
    return row_for("llamacpp", _EXPERT_PATTERN_KEYS, version)


# A weight in host memory feeding an op the GPU runs: the scheduler offloads a matrix multiplication whose weight is
# in a host buffer to the GPU when the GPU backend asks for it (ggml-backend.cpp ggml_backend_sched_backend_id_from_cur,
# op_offload; ggml-cuda.cu offload_op: at least 32 tokens, so the reserved prompt graph qualifies) and copies the
# weight in as a split input, one weight per split so its memory is reused ("by starting a new split, the memory of
# the previously offloaded weights can be reused"). The device's compute buffer therefore holds the largest such
# weight beside the feed-forward stage's activations.
LLAMACPP_OFFLOAD_MIN_BATCH = 32
LLAMACPP_HOST_WEIGHT_COPY = ("ggml/src/ggml-backend.cpp ggml_backend_sched_split_graph (one split per host weight) "
                             "+ ggml/src/ggml-cuda/ggml-cuda.cu offload_op (min_batch_size 32)")
# The same offload takes the output layer's matrix multiplication when -ngl leaves the output on the host: the
# first device (the scheduler's highest-priority backend) copies the output weight (token_embd for a tied model)
# in and holds the logits and the normed hidden rows beside it, when the graph computes at least min_batch_size
# output rows (the op's ne[1]: llama-server's per-slot outputs from LLAMACPP_SERVER_OUTPUTS_SINCE stay under it).
# Read in llama-cpp-python's vendored llama.cpp: absent at c2101a2e (0.2.56: "operations with weights are always
# run on the same backend as the weights", ggml-backend.c), present at ac9ee6a4 (0.2.57) and 46e12c46 (0.2.65):
# ggml_backend_sched_backend_id_from_cur's "1.off" and ggml-cuda.cu's offload_op. The build number of the change
# is not read: gsg counts it from LLAMACPP_PIPELINE_PARALLEL_SINCE (which c2101a2e already has), more than the
# builds between hold, never less. --no-op-offload (sched->op_offload) is not modelled. Measured: ollama's runner of
# August 2026, QwQ-32B Q4_K_M at 29/65 layers, CUDA0 916.08 MiB = the q6_K output 609.08 + 512 x 152,064 x 4 B of
# logits 297.00 + 512 x 5,120 x 4 B of normed rows 10.00 (benchmarks/vectors/MISSES.md).
LLAMACPP_OUTPUT_OFFLOAD_SINCE = "b2431"
# Which layers -ngl N offloads. Until llama.cpp PR #18148 ("offload output layer to GPU first", opened 2025-12-17)
# load_tensors started at layer n_layer - N, so the last N blocks went to the GPUs and the output layer only once N
# passed n_layer; from it i_gpu_start = n_layer + 1 - N, so the output layer is the first to go and N - 1 blocks
# follow it (llama-model.cpp: the old form in llama-cpp-python 0.3.16's vendored 4227c9be, the new one in 0.3.17's
# 49bfddec, 0.3.19's, 0.3.26's and 0.3.36's 0c1e57098). The same change prints "offloading output layer to GPU"
# before "offloading N repeating layers" (after it before); the oldest build gsg has a log of in that order is
# b8164 (the gpt-oss-20b Metal fixture), so builds between the PR and it are counted with the old placement.
# Measured: b9849's Qwen3.5-9B at 31 of 33 layers keeps blocks 0 and 1 on the CPU (16.75 MiB of recurrent rows).
LLAMACPP_OUTPUT_FIRST_SINCE = "b8164"
# Which of the two placements a run used, where its own log shows it (gsg verify) and the build number does not
# (ollama's runner prints none, an excerpt cuts it, a build between the PR and b8164): this deployment env key, which
# llama.cpp does not read, carries "first" or "last" to the estimate in place of LLAMACPP_OUTPUT_FIRST_SINCE. verify
# sets it from the order of load_tensors' two lines (core/verify/compare.output_layer_env) and --record keeps it in
# the vector's estimate_inputs.env, so a replay places the layers the same way.
LLAMACPP_OUTPUT_LAYER_ENV = "GSG_LLAMACPP_OUTPUT_LAYER"
LLAMACPP_OUTPUT_LAYER_FIRST, LLAMACPP_OUTPUT_LAYER_LAST = "first", "last"
# Whether the run's scheduler kept pipeline copies, where its own log shows it and the build's options do not: from
# PR #6017 llama_context prints "pipeline parallelism enabled (n_copies=N)" right after creating the scheduler, before
# the compute buffers, whenever it enables it (src/llama.cpp llama_new_context_with_model in llama-cpp-python 0.2.62's
# vendored llama.cpp, src/llama.cpp at 0.3.8's). It also needs every device to report async compute and events
# (0.3.8's: "pipeline parallelism requires support for async compute and events in all devices"), and a CUDA or HIP
# build with GGML_CUDA_NO_PEER_COPY reports no events (ggml-cuda.cu ggml_backend_cuda_device_get_props), as does a
# build whose first reserve failed and retried without it. A log whose KV buffers and two or more devices' compute
# buffers print without that line ran without copies (llama.cpp#12369: five Radeon VII, 2,664 MiB each, one KQ mask
# apiece where four copies would hold three more): this deployment env key, which llama.cpp does not read, carries
# "off" to the estimate (core/verify/compare.pipeline_env), and --record keeps it with the vector.
LLAMACPP_PIPELINE_ENV = "GSG_LLAMACPP_PIPELINE"
LLAMACPP_PIPELINE_OFF = "off"
LLAMACPP_OUTPUT_FIRST_SOURCE = ("src/llama-model.cpp load_tensors i_gpu_start = n_layer + 1 - n_gpu_layers "
                                "(llama.cpp PR #18148; llama-cpp-python 0.3.17's vendored 49bfddec to 0.3.36's "
                                "0c1e57098; n_layer - n_gpu_layers at 0.3.16's 4227c9be)")
LLAMACPP_OUTPUT_OFFLOAD = ("ggml-backend.c ggml_backend_sched_backend_id_from_cur ('1.off') + ggml-cuda.cu "
                           "offload_op, llama-cpp-python 0.2.57 (ac9ee6a4) and 0.2.65 (46e12c46); absent at 0.2.56 "
                           "(c2101a2e)")
LLAMACPP_FIT_TARGET = 1024 * MiB
LLAMACPP_FIT_MIN_CTX = 4096
LLAMACPP_FIT_CTX_ALIGN = 256

# --- multimodal models (core/memory/vision.py) -----------------------------------------------------------
# Vision towers and projectors are counted from vision_config as vLLM's model files build them (qwen2_vl.py,
# qwen2_5_vl.py, qwen3_vl.py, llava.py, llava_next.py, gemma3_mm.py, mistral3.py with clip.py, siglip.py,
# pixtral.py). Checks against the published totals: Qwen2.5-VL-7B 8,292,166,656 = 7,615,616,512 text +
# 676,550,144 visual (a training log printing both, and the safetensors metadata); Qwen2.5-VL-3B 3,754,622,976;
# Qwen3-VL-8B 8,767,123,696; gemma-3-4b-it 4,300,079,472; Mistral-Small-3.1-24B 24,011,361,280; llava-1.5-7b
# 7,063,427,072 in transformers, of which vLLM loads all but the last CLIP layer and the post-LayerNorm
# (vision_feature_layer -2). Tests: tests/core/memory/test_vision.py.
# Quantised checkpoints leave the vision tower at the checkpoint dtype: AWQ and GPTQ exports of Qwen2.5-VL list
# "visual" in modules_to_not_convert (AutoAWQ), vLLM's qwen2_vl.py / qwen2_5_vl.py _maybe_ignore_quant_config
# builds the vision tower without the GPTQ config ("GPTQ configs do not have a list of ignored modules, however
# AutoGPTQ seems to avoid vision encoder sections for some models"), and llm-compressor's FP8 / W4A16 recipes for
# Qwen-VL ignore "re:visual.*". gsg keeps
# every vision parameter at the checkpoint's unquantised width, which over-counts only vLLM's online
# `--quantization fp8` of the encoder's linear layers (< 0.7 GB on the models above).
# Model types whose vision part gsg does not count, and why: their memory has no verdict (GSG030).
VISION_UNCOUNTED = {
    "mllama": "Llama 3.2 Vision: cross-attention layers inside the text model and a two-stage vision encoder",
    "internvl_chat": "InternVL (remote code): InternViT encoder and an llm_config instead of text_config",
    "internvl": "InternVL: InternViT encoder with layer scale and QK norm",
    "minicpmv": "MiniCPM-V: SigLIP encoder with a resampler",
    "phi3_v": "Phi-3/3.5-vision: CLIP encoder configured in img_processor",
    "phi4mm": "Phi-4-multimodal: vision and audio encoders with LoRA adapters",
    "phi4_multimodal": "Phi-4-multimodal: vision and audio encoders with LoRA adapters",
    "llava_onevision": "LLaVA-OneVision: SigLIP encoder whose pooling head vLLM may or may not build",
    "idefics3": "Idefics3 / SmolVLM: SigLIP encoder with a pixel-shuffle connector",
    "qwen2_5_omni": "Qwen2.5-Omni: vision, audio and talker modules",
}

# --- which release loads which weights format (core/memory/quant_support.py, rule GSG053) ----------------------
class QuantLoaderRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """An engine loads weights gsg calls `method` (ModelFacts.quant_method) from a checkpoint whose
    quantization_config names `checkpoint` (what the engine looks its loader up by) in releases `since` <= r <
    `until` (None: up to the newest release read). `since` "0.0.0": the oldest release read already loads it."""

    family: str
    method: str
    checkpoint: str
    since: str
    until: str | None
    source: str


# Read at every tag named, in vLLM's vllm/model_executor/layers/quantization/__init__.py (QUANTIZATION_METHODS, from
# 0.8.5 the QuantizationMethods literal, from 0.14.0 beside DEPRECATED_QUANTIZATION_METHODS, which still load) and
# compressed_tensors/compressed_tensors.py (the _is_* scheme tests of _get_scheme_from_parts), and in SGLang's
# python/sglang/srt/layers/quantization/__init__.py (QUANTIZATION_METHODS; from 0.4.5 BASE_ plus
# VLLM_QUANTIZATION_METHODS, the latter vLLM's own loaders, there when vLLM is installed) and its
# compressed_tensors/compressed_tensors.py. Tags read: vLLM 0.6.0, 0.6.4, 0.7.0, 0.7.3, 0.8.0, 0.8.5, 0.9.0,
# 0.9.1, 0.9.2, 0.10.0, 0.10.1, 0.11.0, 0.12.0, 0.13.0, 0.14.0, 0.20.0-0.24.0, 0.27.0, 0.28.0, 0.30.0-0.34.0;
# SGLang 0.4.0-0.4.6, 0.4.8-0.4.10, 0.5.0rc0, 0.5.1-0.5.10, 0.5.23. gsg's method names several checkpoint formats
# (fp8: native, ModelOpt, compressed-tensors): the row is the format's. Not gated, and why: compressed-tensors NVFP4
# W4A4 and W4A16 are one method to gsg, so the earlier scheme's release is the row (vLLM W4A16 0.9.0, W4A4 0.9.1;
# SGLang W4A4 0.5.7); SGLang's compressed-tensors MXFP4 (a MoE-only path through 0.5.23) has no row.
_VLLM_INIT = "vllm/model_executor/layers/quantization/__init__.py"
_VLLM_CT = "vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors.py"
_SGL_INIT = "python/sglang/srt/layers/quantization/__init__.py"
_SGL_CT = "python/sglang/srt/layers/quantization/compressed_tensors/compressed_tensors.py"
QUANT_LOADERS: tuple[QuantLoaderRow, ...] = (
    QuantLoaderRow("vllm", "fp8", "fp8", "0.0.0", None, f"{_VLLM_INIT}@v0.6.0 .. @v0.34.0 'fp8' (Fp8Config)"),
    QuantLoaderRow("vllm", "fbgemm_fp8", "fbgemm_fp8", "0.0.0", None,
                   f"{_VLLM_INIT}@v0.6.0 .. @v0.34.0 'fbgemm_fp8' (deprecated, still loaded, from @v0.14.0)"),
    QuantLoaderRow("vllm", "fp8", "modelopt", "0.6.4", None,
                   f"{_VLLM_INIT}@v0.6.4 'modelopt' (ModelOptFp8Config); absent @v0.6.0"),
    QuantLoaderRow("vllm", "nvfp4", "modelopt", "0.8.0", None,
                   f"{_VLLM_INIT}@v0.8.0 'nvfp4' (ModelOptNvFp4Config, 'modelopt_fp4' from @v0.9.0); absent @v0.7.3"),
    QuantLoaderRow("vllm", "nvfp4", "modelopt_fp4", "0.8.0", None,
                   f"{_VLLM_INIT}@v0.8.0 'nvfp4' (ModelOptNvFp4Config, 'modelopt_fp4' from @v0.9.0); absent @v0.7.3"),
    QuantLoaderRow("vllm", "mxfp4", "mxfp4", "0.10.1", None,
                   f"{_VLLM_INIT}@v0.10.1 'mxfp4' (Mxfp4Config); absent @v0.10.0"),
    QuantLoaderRow("vllm", "fp8", "compressed-tensors", "0.0.0", None,
                   f"{_VLLM_CT}@v0.6.0 .. @v0.34.0 _is_fp8_w8a8 / _is_fp8_w8a16"),
    QuantLoaderRow("vllm", "int8", "compressed-tensors", "0.0.0", None,
                   f"{_VLLM_CT}@v0.6.0 .. @v0.34.0 _is_static_tensor_w8a8 / _is_dynamic_token_w8a8"),
    QuantLoaderRow("vllm", "w4a16", "compressed-tensors", "0.0.0", None,
                   f"{_VLLM_CT}@v0.6.0 .. @v0.34.0 _is_wNa16_group_channel (CompressedTensorsWNA16)"),
    QuantLoaderRow("vllm", "w8a16", "compressed-tensors", "0.0.0", None,
                   f"{_VLLM_CT}@v0.6.0 .. @v0.34.0 _is_wNa16_group_channel (CompressedTensorsWNA16)"),
    QuantLoaderRow("vllm", "nvfp4", "compressed-tensors", "0.9.0", None,
                   f"{_VLLM_CT}@v0.9.0 _is_fp4a16_nvfp4 (W4A4 _is_fp4a4_nvfp4 from @v0.9.1); absent @v0.8.5"),
    QuantLoaderRow("vllm", "mxfp4_dense", "compressed-tensors", "0.14.0", None,
                   f"{_VLLM_CT}@v0.14.0 _is_mxfp4 (CompressedTensorsW4A16Mxfp4); absent @v0.13.0"),
    QuantLoaderRow("vllm", "gptq", "gptq", "0.0.0", None, f"{_VLLM_INIT}@v0.6.0 .. @v0.34.0 'gptq', 'gptq_marlin'"),
    QuantLoaderRow("vllm", "gptq_marlin", "gptq_marlin", "0.0.0", None, f"{_VLLM_INIT}@v0.6.0 .. @v0.34.0"),
    QuantLoaderRow("vllm", "awq", "awq", "0.0.0", None, f"{_VLLM_INIT}@v0.6.0 .. @v0.34.0 'awq', 'awq_marlin'"),
    QuantLoaderRow("vllm", "awq_marlin", "awq_marlin", "0.0.0", None, f"{_VLLM_INIT}@v0.6.0 .. @v0.34.0"),
    QuantLoaderRow("vllm", "marlin", "marlin", "0.0.0", "0.11.0",
                   f"{_VLLM_INIT}@v0.6.0 .. @v0.10.1 'marlin' (MarlinConfig); absent @v0.11.0"),
    QuantLoaderRow("vllm", "bitsandbytes", "bitsandbytes", "0.0.0", "0.28.0",
                   f"{_VLLM_INIT}@v0.6.0 .. @v0.27.0 'bitsandbytes'; absent @v0.28.0 (bitsandbytes.py gone)"),
    QuantLoaderRow("vllm", "gguf", "gguf", "0.0.0", "0.24.0",
                   f"{_VLLM_INIT}@v0.6.0 .. @v0.23.0 'gguf'; absent @v0.24.0 (gguf.py gone)"),
    QuantLoaderRow("sglang", "fp8", "fp8", "0.0.0", None, f"{_SGL_INIT}@v0.4.0 .. @v0.5.23 'fp8'"),
    QuantLoaderRow("sglang", "fbgemm_fp8", "fbgemm_fp8", "0.0.0", "0.5.23",
                   f"{_SGL_INIT}@v0.4.0 .. @v0.5.10 'fbgemm_fp8'; absent @v0.5.23 (releases between not read)"),
    QuantLoaderRow("sglang", "fp8", "modelopt", "0.4.2", None, f"{_SGL_INIT}@v0.4.2 'modelopt'; absent @v0.4.1"),
    QuantLoaderRow("sglang", "nvfp4", "modelopt", "0.4.6", None,
                   f"{_SGL_INIT}@v0.4.6 'modelopt_fp4' (ModelOptFp4Config); absent @v0.4.5"),
    QuantLoaderRow("sglang", "nvfp4", "modelopt_fp4", "0.4.6", None,
                   f"{_SGL_INIT}@v0.4.6 'modelopt_fp4' (ModelOptFp4Config); absent @v0.4.5"),
    QuantLoaderRow("sglang", "mxfp4", "mxfp4", "0.5.0rc0", None,
                   f"{_SGL_INIT}@v0.5.0rc0 'mxfp4' (Mxfp4Config, added on CUDA); absent @v0.4.10"),
    QuantLoaderRow("sglang", "fp8", "compressed-tensors", "0.0.0", None,
                   f"{_SGL_INIT}@v0.4.0 vLLM's CompressedTensorsConfig; {_SGL_CT}@v0.4.5 .. @v0.5.23 _is_fp8_w8a8"),
    QuantLoaderRow("sglang", "int8", "compressed-tensors", "0.0.0", None,
                   f"{_SGL_CT}@v0.4.5 .. @v0.5.23 _is_static_tensor_w8a8 (vLLM's scheme until @v0.5.3)"),
    QuantLoaderRow("sglang", "w4a16", "compressed-tensors", "0.0.0", None,
                   f"{_SGL_CT}@v0.4.5 .. @v0.5.23 _is_wNa16_group_channel (vLLM's scheme until @v0.5.4)"),
    QuantLoaderRow("sglang", "w8a16", "compressed-tensors", "0.0.0", None,
                   f"{_SGL_CT}@v0.4.5 .. @v0.5.23 _is_wNa16_group_channel (vLLM's scheme until @v0.5.4)"),
    QuantLoaderRow("sglang", "nvfp4", "compressed-tensors", "0.5.7", None,
                   f"{_SGL_CT}@v0.5.7 _is_fp4a4_nvfp4; absent @v0.5.6"),
    QuantLoaderRow("sglang", "gptq", "gptq", "0.0.0", None, f"{_SGL_INIT}@v0.4.0 .. @v0.5.10 'gptq' (SGLang's own from "
                   "@v0.5.1); @v0.5.23 only in the NPU, CPU and XPU tables (how CUDA reaches it not read: not gated)"),
    QuantLoaderRow("sglang", "gptq_marlin", "gptq_marlin", "0.0.0", None, f"{_SGL_INIT}@v0.4.0 .. @v0.5.23"),
    QuantLoaderRow("sglang", "awq", "awq", "0.0.0", None, f"{_SGL_INIT}@v0.4.0 .. @v0.5.23 'awq'"),
    QuantLoaderRow("sglang", "awq_marlin", "awq_marlin", "0.0.0", None, f"{_SGL_INIT}@v0.4.0 .. @v0.5.23"),
    QuantLoaderRow("sglang", "bitsandbytes", "bitsandbytes", "0.0.0", None,
                   f"{_SGL_INIT}@v0.4.0 .. @v0.5.4 vLLM's, @v0.5.8 .. @v0.5.23 SGLang's 'bitsandbytes'; absent "
                   "@v0.5.5 .. @v0.5.7 (how the loader reaches it there not read: not gated)"),
    QuantLoaderRow("sglang", "gguf", "gguf", "0.0.0", None, f"{_SGL_INIT}@v0.4.0 .. @v0.5.23 'gguf'"),
)


# --- which GPUs an engine runs a weights format on (core/memory/quant_support.py, rule GSG054) -----------------------
class QuantCapabilityRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """The engine refuses weights gsg calls `method` from a checkpoint naming `checkpoint` on a GPU whose compute
    capability is below `capability` in releases `since` <= r < `until` (None: up to the newest release read):
    `config`.get_min_capability(), which the loader compares with the device's major * 10 + minor before loading
    ("The quantization method X is not supported for the current GPU. Minimum capability: N. Current capability:
    M."). `since` "0.0.0": from the oldest release read (QUANT_LOADERS says which releases load it at all)."""

    family: str
    method: str
    checkpoint: str
    since: str
    until: str | None
    capability: tuple[int, int]
    config: str
    source: str


# Read at every tag named, from the wheels on PyPI (pip download --no-deps; each config class's get_min_capability in
# vllm/model_executor/layers/quantization/*.py): vLLM 0.6.0, 0.8.5, 0.9.0, 0.10.0, 0.10.1, 0.11.0, 0.12.0, 0.13.0,
# 0.14.0, 0.20.0-0.28.0, 0.34.0; the comparison in model_executor/model_loader/loader.py@v0.6.0,
# config.py@v0.8.5-@v0.10.0, config/__init__.py@v0.10.1-@v0.11.0, config/vllm.py@v0.12.0-@v0.34.0
# (_get_quantization_config). SGLang (python/sglang/srt/layers/quantization/*.py, the comparison in
# srt/model_loader/loader.py _get_quantization_config at every tag read): 0.4.0 (vLLM's configs), 0.4.2, 0.4.6,
# 0.5.0rc0, 0.5.10-0.5.13, 0.5.16, 0.5.23. The check runs on the method the engine settled on: vLLM turns gptq/awq
# into gptq_marlin/awq_marlin only where Marlin runs (is_*_marlin_compatible tests the capability), so a GPTQ or AWQ
# checkpoint meets the plain config's minimum. Not here, and why: compressed-tensors schemes check their own
# minimum after the config's 70 (_check_scheme_supported, another message); SGLang's gptq/gguf (60: only Maxwell
# and older, which no SGLang release read supports otherwise) and its Marlin variants.
_VQ = "vllm/model_executor/layers/quantization"
_SQ = "python/sglang/srt/layers/quantization"
_CT_METHODS = ("fp8", "int8", "w4a16", "w8a16", "nvfp4", "mxfp4_dense")
QUANT_MIN_CAPABILITY: tuple[QuantCapabilityRow, ...] = (
    QuantCapabilityRow("vllm", "fp8", "fp8", "0.0.0", "0.14.0", (8, 0), "Fp8Config",
                       f"{_VQ}/fp8.py@v0.6.0 .. @v0.13.0"),
    QuantCapabilityRow("vllm", "fp8", "fp8", "0.14.0", None, (7, 5), "Fp8Config", f"{_VQ}/fp8.py@v0.14.0 .. @v0.34.0"),
    QuantCapabilityRow("vllm", "fbgemm_fp8", "fbgemm_fp8", "0.0.0", None, (8, 0), "FBGEMMFp8Config",
                       f"{_VQ}/fbgemm_fp8.py@v0.6.0 .. @v0.34.0"),
    QuantCapabilityRow("vllm", "fp8", "modelopt", "0.0.0", "0.27.0", (8, 9), "ModelOptFp8Config",
                       f"{_VQ}/modelopt.py@v0.8.5 .. @v0.26.0"),
    QuantCapabilityRow("vllm", "fp8", "modelopt", "0.27.0", None, (8, 0), "ModelOptFp8Config",
                       f"{_VQ}/modelopt.py@v0.27.0 .. @v0.34.0"),
    *(QuantCapabilityRow("vllm", "nvfp4", checkpoint, since, until, capability, "ModelOptNvFp4Config",
                         f"{_VQ}/modelopt.py{read}")
      for checkpoint in ("modelopt", "modelopt_fp4")
      for since, until, capability, read in (("0.0.0", "0.9.0", (10, 0), "@v0.8.5"),
                                             ("0.9.0", "0.14.0", (8, 0), "@v0.9.0 .. @v0.13.0"),
                                             ("0.14.0", None, (7, 5), "@v0.14.0 .. @v0.34.0"))),
    QuantCapabilityRow("vllm", "mxfp4", "mxfp4", "0.0.0", None, (8, 0), "Mxfp4Config",
                       f"{_VQ}/mxfp4.py@v0.10.1 .. @v0.34.0"),
    *(QuantCapabilityRow("vllm", method, "compressed-tensors", "0.0.0", None, (7, 0), "CompressedTensorsConfig",
                         f"{_VQ}/compressed_tensors/compressed_tensors.py@v0.6.0 .. @v0.34.0")
      for method in _CT_METHODS),
    QuantCapabilityRow("vllm", "awq", "awq", "0.0.0", None, (7, 5), "AWQConfig (AutoAWQConfig from @v0.24.0)",
                       f"{_VQ}/awq.py@v0.6.0 .. @v0.23.0, auto_awq.py@v0.24.0 .. @v0.34.0"),
    QuantCapabilityRow("vllm", "gptq", "gptq", "0.0.0", None, (6, 0), "GPTQConfig (AutoGPTQConfig from @v0.22.0)",
                       f"{_VQ}/gptq.py@v0.6.0 .. @v0.21.0, auto_gptq.py@v0.22.0 .. @v0.34.0"),
    QuantCapabilityRow("vllm", "awq_marlin", "awq_marlin", "0.0.0", "0.14.0", (8, 0), "AWQMarlinConfig",
                       f"{_VQ}/awq_marlin.py@v0.6.0 .. @v0.13.0"),
    QuantCapabilityRow("vllm", "awq_marlin", "awq_marlin", "0.14.0", None, (7, 5),
                       "AWQMarlinConfig (AutoAWQConfig from @v0.24.0)",
                       f"{_VQ}/awq_marlin.py@v0.14.0 .. @v0.23.0, auto_awq.py@v0.24.0 .. @v0.34.0"),
    QuantCapabilityRow("vllm", "gptq_marlin", "gptq_marlin", "0.0.0", "0.14.0", (8, 0), "GPTQMarlinConfig",
                       f"{_VQ}/gptq_marlin.py@v0.6.0 .. @v0.13.0"),
    QuantCapabilityRow("vllm", "gptq_marlin", "gptq_marlin", "0.14.0", "0.22.0", (7, 5), "GPTQMarlinConfig",
                       f"{_VQ}/gptq_marlin.py@v0.14.0 .. @v0.21.0"),
    QuantCapabilityRow("vllm", "gptq_marlin", "gptq_marlin", "0.22.0", None, (6, 0), "AutoGPTQConfig",
                       f"{_VQ}/auto_gptq.py@v0.22.0 .. @v0.34.0"),
    QuantCapabilityRow("vllm", "marlin", "marlin", "0.0.0", "0.11.0", (8, 0), "MarlinConfig",
                       f"{_VQ}/marlin.py@v0.6.0 .. @v0.10.1"),
    QuantCapabilityRow("vllm", "bitsandbytes", "bitsandbytes", "0.0.0", "0.28.0", (7, 0), "BitsAndBytesConfig",
                       f"{_VQ}/bitsandbytes.py@v0.6.0 .. @v0.27.0"),
    QuantCapabilityRow("vllm", "gguf", "gguf", "0.0.0", "0.24.0", (6, 0), "GGUFConfig",
                       f"{_VQ}/gguf.py@v0.6.0 .. @v0.23.0"),
    QuantCapabilityRow("sglang", "fp8", "fp8", "0.0.0", None, (8, 0), "Fp8Config",
                       f"{_SQ}/fp8.py@v0.4.2 .. @v0.5.23 (not MXFP8; vLLM's @v0.4.0)"),
    QuantCapabilityRow("sglang", "fp8", "modelopt", "0.0.0", None, (8, 9), "ModelOptFp8Config",
                       f"{_SQ}/modelopt_quant.py@v0.4.2 .. @v0.5.23"),
    *(QuantCapabilityRow("sglang", "nvfp4", checkpoint, since, until, capability, "ModelOptFp4Config",
                         f"{_SQ}/modelopt_quant.py{read}")
      for checkpoint in ("modelopt", "modelopt_fp4")
      for since, until, capability, read in (("0.0.0", "0.5.13", (10, 0), "@v0.4.6 .. @v0.5.12.post1"),
                                             ("0.5.13", None, (8, 0), "@v0.5.13 .. @v0.5.23"))),
    QuantCapabilityRow("sglang", "mxfp4", "mxfp4", "0.0.0", None, (8, 0), "Mxfp4Config",
                       f"{_SQ}/mxfp4.py@v0.5.0rc0 .. @v0.5.23"),
    *(QuantCapabilityRow("sglang", method, "compressed-tensors", "0.0.0", None, (7, 0), "CompressedTensorsConfig",
                         f"{_SQ}/compressed_tensors/compressed_tensors.py@v0.4.6 .. @v0.5.23")
      for method in _CT_METHODS if method != "mxfp4_dense"),
    QuantCapabilityRow("sglang", "awq", "awq", "0.0.0", "0.5.11", (7, 5), "AWQConfig",
                       f"{_SQ}/awq.py@v0.4.6 .. @v0.5.10 (vLLM's @v0.4.0)"),
    QuantCapabilityRow("sglang", "bitsandbytes", "bitsandbytes", "0.5.10", None, (7, 0), "BitsAndBytesConfig",
                       f"{_SQ}/bitsandbytes.py@v0.5.10 .. @v0.5.23"),
    QuantCapabilityRow("sglang", "fbgemm_fp8", "fbgemm_fp8", "0.5.10", "0.5.23", (8, 0), "FBGEMMFp8Config",
                       f"{_SQ}/fpgemm_fp8.py@v0.5.10 .. @v0.5.12.post1"),
)

class LlamaCppSplitMode(TableRow):  # a table row: tuple-built, no generated methods to compile
    """What one --split-mode value does to the GPUs' buffers, from build `since` on. weights/kv: "layers" (whole
    layers and their KV per device, by -ts or free memory), "shares" (every split tensor cut across all devices by
    -ts, evenly without it: the weights by their rows, the KV cache by whole KV heads), or "engine" (gsg keeps its
    layer arithmetic: none, row)."""

    since: str
    mode: str
    weights: str
    kv: str
    source: str
    # architectures (engines/llamacpp.arch_key spellings) whose load throws "LLAMA_SPLIT_MODE_TENSOR not implemented
    # for architecture": llama-server exits
    refused: frozenset[str] = frozenset()


# llm_arch_supports_sm_tensor's false list at 0c1e57098 (src/llama-arch.cpp), by llama.cpp's arch names and the HF
# class names that differ from them; earlier builds refused more (lfm2 was added by PR #26993), which gsg has not read
_TENSOR_REFUSED = frozenset({
    "grok", "grok1", "mpt", "plamo2", "minicpm3", "gemma3n", "mamba", "mamba2", "jamba", "falconh1", "olmo2",
    "olmoe", "deepseek2", "deepseekv2", "deepseekv3", "deepseek32", "deepseekv32", "hyv4", "dots3note", "glmdsa",
    "bitnet", "t5", "nemotronh", "nemotronhmoe", "granitehybrid", "granitemoehybrid", "minimax01", "minimaxm2",
    "minimaxm3", "mistral4", "kimilinear", "bailingmoe3", "kimik3", "glm5next", "qwen3tts", "qwen4exp"})


# -sm none|layer|row read in every vendored common/arg.cpp gsg has (llama-cpp-python 0.3.10's 8846aace to 0.3.36's
# 0c1e57098). -sm tensor: ggml-org/llama.cpp PR #19378 (backend-agnostic tensor parallelism), first released in
# b8738 (2026-04-09 release notes); read at 0c1e57098: llama.cpp builds one "Meta" device of every GPU
# (src/llama.cpp llama_prepare_model_devices), llama_meta_device_get_split_state (src/llama-model.cpp) cuts the
# matmul weights, the output and the K/V caches (cache_k_l*, cache_v_l* on axis 0 in whole KV heads, the remainder
# rotated by layer) across them, mirrors norms and biases, and the Meta buffer holds one buffer per GPU whose size
# it reports as the largest one's (ggml/src/ggml-backend-meta.cpp ggml_backend_meta_alloc_ctx_tensors_from_buft).
# llama_context turns flash attention on for it (auto) or refuses to start without it, builds no pipeline copies
# (pipeline_parallel needs LLAMA_SPLIT_MODE_LAYER), and common/fit.cpp gives up ("not implemented for
# SPLIT_MODE_TENSOR"): the arguments run as given.
_SPLIT_ARG = "common/arg.cpp -sm {none,layer,row} (llama-cpp-python 0.3.10's 8846aace .. 0.3.36's 0c1e57098)"
LLAMACPP_SPLIT_MODES = (
    LlamaCppSplitMode("b0", "none", "layers", "layers", _SPLIT_ARG),
    LlamaCppSplitMode("b0", "layer", "layers", "layers", _SPLIT_ARG),
    LlamaCppSplitMode("b0", "row", "engine", "layers", _SPLIT_ARG),
    LlamaCppSplitMode("b8738", "tensor", "shares", "shares",
                      "common/arg.cpp@0c1e57098 -sm tensor; src/llama-model.cpp@0c1e57098 "
                      "llama_meta_device_get_split_state; ggml/src/ggml-backend-meta.cpp@0c1e57098; llama.cpp PR "
                      "#19378, first in release b8738", _TENSOR_REFUSED),
)
LLAMACPP_SPLIT_TENSOR_SINCE = "b8738"
_SPLIT_MODE_KEYS = tuple((known_version(row.since), row) for row in LLAMACPP_SPLIT_MODES)


def llamacpp_split_mode(mode: str, version: str | None) -> LlamaCppSplitMode | None:
    """The row of a --split-mode value the build takes, None where common/arg.cpp refuses it ("invalid value")."""
    release = arithmetic_release("llamacpp", version)
    return next((row for since, row in _SPLIT_MODE_KEYS if row.mode == mode and release >= since), None)


# --kv-unified-per-slot N (llama.cpp PR #24124, June 2026), read at 0c1e57098 (gsg's newest modelled build, counted
# as b10507; public --help audits first list it between b10502 and b10734): tools/server/server.cpp sizes the pool
# n_ctx = n_parallel x N when -c is not given (-c 0 and -c N keep theirs; --fit then sees a context set and does not
# shorten it) and logs "--kv-unified-per-slot: sizing KV pool to n_parallel * kv_unified_per_slot = ..."; every slot
# holds min(n_ctx_seq, N) tokens (server-context.cpp n_ctx_slot, "capping per-slot context (...) to
# --kv-unified-per-slot (...)"). The cache itself is whatever n_ctx gives: the flag adds no buffer.
LLAMACPP_KV_PER_SLOT_SINCE = "b10507"
LLAMACPP_KV_PER_SLOT_SOURCE = ("tools/server/server.cpp + tools/server/server-context.cpp n_ctx_slot@0c1e57098 "
                               "(llama-cpp-python 0.3.36); llama.cpp PR #24124")


class LlamaCppEnvArg(TableRow):  # a table row: tuple-built, no generated methods to compile
    """One llama-server option that common/arg.cpp also reads from the environment (`.set_env(...)`), from one
    build on. kind: "value" (the text is the flag's value), "switch" (a handler without a value: a truthy text,
    on/enabled/true/1, gives the flag, anything else is ignored) or "bool" (parse_bool_value: truthy gives
    `option`, falsey gives `off`, any other text makes llama-server exit; LLAMA_ARG_NO_<X> reads as falsey)."""

    option: str  # gsg's flag key (args._ALIASES long name)
    env: str
    since: str
    kind: str
    off: str | None
    source: str


# Read in the common/ sources of the llama-cpp-python sdists: 0.2.85 (398ede5) reads no LLAMA_ARG_ variable;
# 0.2.90 (1d1ccce) reads six in common/common.cpp gpt_params_parse_from_env, which examples/server/server.cpp runs
# AFTER the command line (the variable beat the flag then; not modelled: gsg names no build number for it, so builds
# before the first row read no variable); 0.3.0 (ea9c32b) moved them to common/arg.cpp `.set_env`, applied in
# common_params_parse_ex before the command line, so a flag given beats its variable (arg.cpp@0c1e57098 warns
# "environment variable is set, but will be overwritten by command line argument"). Each row starts at the oldest
# numbered build gsg has read it in: 0.3.10's 8846aace (b5763), 0.3.16's 4227c9be (~b6200), 0.3.26's 7c158fbb4
# (b9518); the older sdists that have it are named, builds between them and the row are counted without it.
_ENV_B5763 = "common/arg.cpp@8846aace (llama-cpp-python 0.3.10; also 0.3.0's ea9c32b, before gsg's build numbers)"
_ENV_B6200 = "common/arg.cpp@4227c9be (llama-cpp-python 0.3.16; absent at 0.3.10's 8846aace)"
_ENV_B9518 = ("common/arg.cpp@7c158fbb4 (llama-cpp-python 0.3.26, also 0.3.20's f49e9178 and 0.3.36's 0c1e57098; "
              "absent at 0.3.16's 4227c9be)")
LLAMACPP_ENV_ARGS = (
    LlamaCppEnvArg("ctx-size", "LLAMA_ARG_CTX_SIZE", "b5763", "value", None, _ENV_B5763),
    LlamaCppEnvArg("gpu-layers", "LLAMA_ARG_N_GPU_LAYERS", "b5763", "value", None, _ENV_B5763),
    LlamaCppEnvArg("parallel", "LLAMA_ARG_N_PARALLEL", "b5763", "value", None, _ENV_B5763),
    LlamaCppEnvArg("batch-size", "LLAMA_ARG_BATCH", "b5763", "value", None, _ENV_B5763),
    LlamaCppEnvArg("ubatch-size", "LLAMA_ARG_UBATCH", "b5763", "value", None, _ENV_B5763),
    # -fa was a switch until on|off|auto (LLAMACPP_FLASH_AUTO_SINCE): 4227c9be's handler still takes no value
    LlamaCppEnvArg("flash-attn", "LLAMA_ARG_FLASH_ATTN", "b5763", "switch", None, _ENV_B5763),
    LlamaCppEnvArg("flash-attn", "LLAMA_ARG_FLASH_ATTN", LLAMACPP_FLASH_AUTO_SINCE, "value", None,
                   "common/arg.cpp@0c1e57098 (-fa on|off|auto, a string handler; llama-cpp-python 0.3.36)"),
    LlamaCppEnvArg("cache-type-k", "LLAMA_ARG_CACHE_TYPE_K", "b5763", "value", None, _ENV_B5763),
    LlamaCppEnvArg("cache-type-v", "LLAMA_ARG_CACHE_TYPE_V", "b5763", "value", None, _ENV_B5763),
    LlamaCppEnvArg("no-kv-offload", "LLAMA_ARG_NO_KV_OFFLOAD", "b5763", "switch", None, _ENV_B5763),
    LlamaCppEnvArg("swa-full", "LLAMA_ARG_SWA_FULL", "b5763", "switch", None, _ENV_B5763),
    LlamaCppEnvArg("tensor-split", "LLAMA_ARG_TENSOR_SPLIT", "b5763", "value", None, _ENV_B5763),
    LlamaCppEnvArg("split-mode", "LLAMA_ARG_SPLIT_MODE", "b5763", "value", None, _ENV_B5763),
    LlamaCppEnvArg("cpu-moe", "LLAMA_ARG_CPU_MOE", "b6200", "switch", None, _ENV_B6200),
    LlamaCppEnvArg("n-cpu-moe", "LLAMA_ARG_N_CPU_MOE", "b6200", "value", None, _ENV_B6200),
    # -kvo/-nkvo became one bool option with LLAMA_ARG_KV_OFFLOAD; LLAMA_ARG_NO_KV_OFFLOAD still reads as falsey
    LlamaCppEnvArg("kv-offload", "LLAMA_ARG_KV_OFFLOAD", "b9518", "bool", "no-kv-offload", _ENV_B9518),
    LlamaCppEnvArg("kv-unified", "LLAMA_ARG_KV_UNIFIED", "b9518", "bool", "no-kv-unified", _ENV_B9518),
    LlamaCppEnvArg("fit", "LLAMA_ARG_FIT", "b9518", "value", None, _ENV_B9518),
    LlamaCppEnvArg("fit-target", "LLAMA_ARG_FIT_TARGET", "b9518", "value", None, _ENV_B9518),
    LlamaCppEnvArg("fit-ctx", "LLAMA_ARG_FIT_CTX", "b9518", "value", None, _ENV_B9518),
    LlamaCppEnvArg("override-tensor", "LLAMA_ARG_OVERRIDE_TENSOR", "b9518", "value", None, _ENV_B9518),
    LlamaCppEnvArg("kv-unified-per-slot", "LLAMA_ARG_KV_UNIFIED_PER_SLOT", LLAMACPP_KV_PER_SLOT_SINCE, "value", None,
                   "common/arg.cpp@0c1e57098 .set_env(\"LLAMA_ARG_KV_UNIFIED_PER_SLOT\") (llama-cpp-python 0.3.36)"),
)
_ENV_ARG_KEYS = tuple((known_version(row.since), row) for row in LLAMACPP_ENV_ARGS)
LLAMACPP_ENV_PREFIX = "LLAMA_ARG_"


def llamacpp_env_args(version: str | None) -> tuple[LlamaCppEnvArg, ...]:
    """The options the build reads from the environment, the latest row of each option the build reaches."""
    release = arithmetic_release("llamacpp", version)
    in_force: dict[str, LlamaCppEnvArg] = {}
    for since, row in _ENV_ARG_KEYS:
        if release >= since:
            in_force[row.option] = row
    return tuple(in_force.values())



# --- argument shapes the engines' parsers refuse (engine_flags.check, GSG016) ----------------------------------
# Each row holds for the releases [since, until), `until` being the first release after the ones read. A release gsg
# has not read matches no row and gets no new report: a later parser may accept more.

@frozen_value(eq=True, repr=True)
class SwitchFlagsRow:
    """Flags that take no value in releases [since, until): argparse `store_true` or `BooleanOptionalAction`
    (nargs=0), which exit at start-up on `--flag=x` ("ignored explicit argument") and on `--flag x` (an
    unrecognized argument); llama.cpp's handler_void / handler_bool options, after which common/arg.cpp reads a
    value as an argument of its own (invalid argument). `true_false`: flags whose action takes an optional value,
    true or false in any case (vLLM's StoreBoolean, nargs='?'), and raises on any other. `needs_value`: on|off
    flags that take a value (llama.cpp's handler_string): alone, the next argument is their value, or none is left
    (expected value for argument)."""

    since: str
    until: str
    flags: frozenset[str]
    source: str
    true_false: frozenset[str] = frozenset()
    needs_value: frozenset[str] = frozenset()


_VLLM_SWITCHES = frozenset({"enforce-eager", "disable-sliding-window", "disable-custom-all-reduce",
                            "enable-prefix-caching", "enable-lora", "fully-sharded-loras"})
# bool config fields from 0.9: get_kwargs gives every bool field BooleanOptionalAction
_VLLM_SWITCHES_011 = _VLLM_SWITCHES | {"enable-chunked-prefill", "enable-expert-parallel", "skip-mm-profiling",
                                       "disable-hybrid-kv-cache-manager"}
_VLLM_BOOL_SOURCE = ("vllm/engine/arg_utils.py: get_kwargs gives a bool config field (ModelConfig.enforce_eager, "
                     "SchedulerConfig.enable_chunked_prefill, ...) argparse.BooleanOptionalAction; --enable-lora "
                     "BooleanOptionalAction")
_SGLANG_SWITCHES = frozenset({"disable-cuda-graph", "disable-radix-cache", "disable-overlap-schedule",
                              "enable-dp-attention"})
_LLAMACPP_SWITCHES = frozenset({"no-kv-offload", "kv-unified", "no-kv-unified", "swa-full", "cpu-moe"})


def _after(build: str) -> str:
    """The llama.cpp build after `build` (bNNNN)."""
    return f"b{int(build[1:]) + 1}"


SWITCH_FLAGS: dict[str, tuple[SwitchFlagsRow, ...]] = {
    "vllm": (
        SwitchFlagsRow("0.6.4", "0.8.5", _VLLM_SWITCHES,
                       "vllm/engine/arg_utils.py@v0.6.4 .. @v0.8.4: action='store_true' (--enable-lora "
                       "BooleanOptionalAction by 0.8.4); --enable-chunked-prefill action=StoreBoolean, nargs='?' "
                       "(vllm/utils.py: 'true' or 'false' in any case, else ValueError)",
                       true_false=frozenset({"enable-chunked-prefill"})),
        SwitchFlagsRow("0.8.5", "0.11.0", _VLLM_SWITCHES | {"enable-chunked-prefill"},
                       "vllm/engine/arg_utils.py@v0.8.5 .. @v0.10.2: store_true (--enforce-eager, "
                       "--disable-sliding-window at 0.8.5) or get_kwargs' BooleanOptionalAction"),
        SwitchFlagsRow("0.11.0", "0.34.1", _VLLM_SWITCHES_011, _VLLM_BOOL_SOURCE + " (@v0.11.0 .. @v0.14.0; the PyPI "
                       "wheels 0.11.1, 0.11.2, 0.14.1 .. 0.34.0: the same ten flags bool fields or --enable-lora)"),
    ),
    "sglang": (
        SwitchFlagsRow("0.4.0", "0.4.9.post3", _SGLANG_SWITCHES,
                       "python/sglang/srt/server_args.py@v0.4.0 .. @v0.4.9.post2: action='store_true' (no "
                       "--enable-lora)"),
        SwitchFlagsRow("0.4.9.post3", "0.5.24", _SGLANG_SWITCHES | {"enable-lora"},
                       "python/sglang/srt/server_args.py@v0.4.9.post3 .. @v0.5.13: action='store_true'; @v0.5.14 .. "
                       "@v0.5.23: bool fields (arg_groups/arg_utils.py add_cli_args_from_dataclass: store_true), "
                       "--disable-cuda-graph (and --enable-dp-attention from 0.5.22) also a DeprecatedStoreTrueAction "
                       "(nargs=0)"),
    ),
    # -fa turned from a switch into on|off|auto at LLAMACPP_FLASH_AUTO_SINCE; --fit (on|off) exists from
    # LLAMACPP_FIT_SINCE. Builds after the newest gsg models are not read.
    "llamacpp": (
        SwitchFlagsRow("b0", LLAMACPP_FLASH_AUTO_SINCE, _LLAMACPP_SWITCHES | {"flash-attn"},
                       "common/arg.cpp handler_void for -fa, -nkvo, -kvu, --swa-full, -cmoe (the llama.cpp "
                       "llama-cpp-python 0.3.0, 0.3.10 and 0.3.16 vendor, 4227c9be ~b6200)"),
        SwitchFlagsRow(LLAMACPP_FLASH_AUTO_SINCE, LLAMACPP_FIT_SINCE, _LLAMACPP_SWITCHES,
                       "common/arg.cpp: -fa [on|off|auto] a handler_string (is_truthy / is_falsey / is_autoy, "
                       "case-sensitive)", needs_value=frozenset({"flash-attn"})),
        SwitchFlagsRow(LLAMACPP_FIT_SINCE, _after(LLAMACPP_NEWEST_MODELLED), _LLAMACPP_SWITCHES,
                       "common/arg.cpp in llama-cpp-python 0.3.36's vendored 0c1e57098: -fa [on|off|auto] and "
                       "-fit [on|off] handler_string, -nkvo and -kvu handler_bool, --swa-full and -cmoe "
                       "handler_void", needs_value=frozenset({"flash-attn", "fit"})),
    ),
}


@frozen_value(eq=True, repr=True)
class ChoiceFlagRow:
    """One flag's argparse `choices` in releases [since, until), compared exactly (case-sensitive): `FP8` and an
    empty value exit at start-up ("invalid choice"). `unset`: texts the parser's type turns into None, which the
    choices hold (vLLM's nullable_str / optional_type(str) with None among the choices, up to 0.8.5): the flag
    left unset."""

    since: str
    until: str
    flag: str
    choices: tuple[str, ...]
    source: str
    unset: tuple[str, ...] = ()
    # the engine lowercases the value before comparing (vLLM's quantization from 0.13)
    folded: bool = False
    # the choices are the engine's built-in ones and a plugin may register more: the parser takes any text and a
    # later check refuses what no plugin registered, so a value outside them is a warning, not a refusal
    plugins: bool = False
    # the plugin case's words: what the value is, the engine's refusal text, who may register more, and what gsg
    # adds (vLLM's --kv-cache-dtype from 0.33: platform plugins, and no bytes gsg could size)
    noun: str = "method"
    refusal: str = "Unknown quantization method"
    registrar: str = "a plugin"
    after: str = ""


def _choices(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_VLLM_DTYPES = _choices("auto half float16 bfloat16 float float32")
_VLLM_KV = _choices("auto fp8 fp8_e5m2 fp8_e4m3")
_VLLM_KV_18 = _choices("auto float16 bfloat16 fp8 fp8_e4m3 fp8_e5m2 fp8_inc fp8_ds_mla")
_VLLM_KV_20 = (*_VLLM_KV_18, *_choices("turboquant_k8v4 turboquant_4bit_nc turboquant_k3v4_nc turboquant_3bit_nc "
                                       "int8_per_token_head fp8_per_token_head nvfp4"))
_VLLM_KV_25 = _choices("auto float16 bfloat16 fp8 fp8_e4m3 fp8_e5m2 fp8_inc fp8_ds_mla turboquant_k8v4 "
                       "turboquant_4bit_nc turboquant_k3v4_nc turboquant_3bit_nc int4_per_token_head "
                       "int8_per_token_head fp8_per_token_head nvfp4")
_VLLM_KV_28 = (*_VLLM_KV_25, "nvfp4_4over6")
_VLLM_KV_30 = _choices("auto float16 bfloat16 fp8 fp8_e4m3 fp8_e5m2 fp8_inc fp8_ds_mla nvfp4_ds_mla turboquant_k8v4 "
                       "turboquant_4bit_nc turboquant_k3v4_nc turboquant_3bit_nc int4_per_token_head "
                       "int8_per_token_head fp8_per_token_head nvfp4 nvfp4_4over6")
_VLLM_KV_32 = (*_VLLM_KV_30[:13], "ultraquant_4bit", *_VLLM_KV_30[13:])
_VLLM_KV_33 = (*_VLLM_KV_32[:13], "octave_k3v4", "octave_k3v3", "octave_k3v3_compact", *_VLLM_KV_32[13:])
# From 0.33 the parser takes any text (CacheConfig.cache_dtype `CacheDType | str`); CacheConfig._validate_cache_dtype
# refuses a name outside KV_CACHE_DTYPES ("Invalid kv_cache_dtype: 'x'. Valid values are: [...]", exactly as
# written: is_known_kv_cache_dtype is `name in KV_CACHE_DTYPES`), the Literal's values plus what a platform plugin
# registered with register_kv_cache_dtype (vllm/config/cache.py@v0.33.0 and @v0.34.0; no in-tree registration)
_KV_PLUGIN_SOURCE = ("vllm/config/cache.py CacheDType Literal, KV_CACHE_DTYPES, register_kv_cache_dtype, "
                     "CacheConfig._validate_cache_dtype")
_KV_SOURCE = "vllm/config CacheDType Literal (argparse choices through get_kwargs' literal_to_kwargs)"
_VLLM_WHEELS = "vllm/config in the PyPI wheels"
_Q_OLD = ("vllm/engine/arg_utils.py --quantization type=nullable_str (optional_type(str) at 0.8.5), "
          "choices=[*QUANTIZATION_METHODS, None]: '' and 'None' are None, the flag unset")
_Q_NEW = ("vllm/config ModelConfig.quantization Optional[QuantizationMethods]: choices are the Literal's values and "
          "'None', type optional_type(str), which turns '' and 'None' into None, itself no choice")
# (since, until, tags read, methods): QuantizationMethods / QUANTIZATION_METHODS in
# vllm/model_executor/layers/quantization/__init__.py at each tag, in its order
_VLLM_QUANTIZATION = (
    ("0.6.3", "0.6.5", "@v0.6.3, @v0.6.4",
     "aqlm awq deepspeedfp tpu_int8 fp8 fbgemm_fp8 modelopt marlin gguf gptq_marlin_24 gptq_marlin awq_marlin "
     "gptq compressed-tensors bitsandbytes qqq experts_int8 neuron_quant ipex"),
    ("0.6.5", "0.6.7", "@v0.6.5, @v0.6.6",
     "aqlm awq deepspeedfp tpu_int8 fp8 fbgemm_fp8 modelopt marlin gguf gptq_marlin_24 gptq_marlin awq_marlin "
     "gptq compressed-tensors bitsandbytes qqq hqq experts_int8 neuron_quant ipex"),
    ("0.7.0", "0.7.1", "@v0.7.0",
     "aqlm awq deepspeedfp tpu_int8 fp8 fbgemm_fp8 modelopt marlin gguf gptq_marlin_24 gptq_marlin awq_marlin "
     "gptq compressed-tensors bitsandbytes qqq hqq experts_int8 neuron_quant ipex quark"),
    ("0.7.1", "0.7.3", "@v0.7.1, @v0.7.2",
     "aqlm awq deepspeedfp tpu_int8 fp8 fbgemm_fp8 modelopt marlin gguf gptq_marlin_24 gptq_marlin awq_marlin "
     "gptq compressed-tensors bitsandbytes qqq hqq experts_int8 neuron_quant ipex quark moe_wna16"),
    ("0.7.3", "0.7.4", "@v0.7.3",
     "aqlm awq deepspeedfp tpu_int8 fp8 ptpc_fp8 fbgemm_fp8 modelopt marlin gguf gptq_marlin_24 gptq_marlin "
     "awq_marlin gptq compressed-tensors bitsandbytes qqq hqq experts_int8 neuron_quant ipex quark moe_wna16"),
    ("0.8.0", "0.8.4", "@v0.8.0, @v0.8.2, @v0.8.3",
     "aqlm awq deepspeedfp tpu_int8 fp8 ptpc_fp8 fbgemm_fp8 modelopt nvfp4 marlin gguf gptq_marlin_24 "
     "gptq_marlin awq_marlin gptq compressed-tensors bitsandbytes qqq hqq experts_int8 neuron_quant ipex quark "
     "moe_wna16"),
    ("0.8.4", "0.8.5", "@v0.8.4",
     "aqlm awq deepspeedfp tpu_int8 fp8 ptpc_fp8 fbgemm_fp8 modelopt nvfp4 marlin gguf gptq_marlin_24 "
     "gptq_marlin awq_marlin gptq compressed-tensors bitsandbytes qqq hqq experts_int8 neuron_quant ipex quark "
     "moe_wna16 torchao"),
    ("0.8.5", "0.8.6", "@v0.8.5",
     "aqlm awq deepspeedfp tpu_int8 fp8 ptpc_fp8 fbgemm_fp8 modelopt nvfp4 marlin bitblas gguf gptq_marlin_24 "
     "gptq_marlin gptq_bitblas awq_marlin gptq compressed-tensors bitsandbytes qqq hqq experts_int8 "
     "neuron_quant ipex quark moe_wna16 torchao"),
    ("0.9.0.1", "0.9.2", "@v0.9.0.1, @v0.9.1",
     "aqlm awq deepspeedfp tpu_int8 fp8 ptpc_fp8 fbgemm_fp8 modelopt modelopt_fp4 marlin bitblas gguf "
     "gptq_marlin_24 gptq_marlin gptq_bitblas awq_marlin gptq compressed-tensors bitsandbytes qqq hqq "
     "experts_int8 neuron_quant ipex quark moe_wna16 torchao auto-round"),
    ("0.9.2", "0.9.3", "@v0.9.2",
     "aqlm awq deepspeedfp tpu_int8 fp8 ptpc_fp8 fbgemm_fp8 modelopt modelopt_fp4 marlin bitblas gguf "
     "gptq_marlin_24 gptq_marlin gptq_bitblas awq_marlin gptq compressed-tensors bitsandbytes qqq hqq "
     "experts_int8 neuron_quant ipex quark moe_wna16 torchao auto-round rtn"),
    ("0.10.0", "0.10.1", "@v0.10.0",
     "aqlm awq deepspeedfp tpu_int8 fp8 ptpc_fp8 fbgemm_fp8 modelopt modelopt_fp4 marlin bitblas gguf "
     "gptq_marlin_24 gptq_marlin gptq_bitblas awq_marlin gptq compressed-tensors bitsandbytes qqq hqq "
     "experts_int8 neuron_quant ipex quark moe_wna16 torchao auto-round rtn inc"),
    ("0.10.1", "0.10.2", "@v0.10.1, @v0.10.1.1",
     "awq deepspeedfp tpu_int8 fp8 ptpc_fp8 fbgemm_fp8 modelopt modelopt_fp4 marlin bitblas gguf "
     "gptq_marlin_24 gptq_marlin gptq_bitblas awq_marlin gptq compressed-tensors bitsandbytes qqq hqq "
     "experts_int8 neuron_quant ipex quark moe_wna16 torchao auto-round rtn inc mxfp4"),
    ("0.10.2", "0.11.1", "@v0.10.2, @v0.11.0",
     "awq deepspeedfp tpu_int8 fp8 ptpc_fp8 fbgemm_fp8 modelopt modelopt_fp4 bitblas gguf gptq_marlin_24 "
     "gptq_marlin gptq_bitblas awq_marlin gptq compressed-tensors bitsandbytes hqq experts_int8 ipex quark "
     "moe_wna16 torchao auto-round rtn inc mxfp4 petit_nvfp4"),
    ("0.11.1", "0.12.0", "@v0.11.1, @v0.11.2",
     "awq deepspeedfp tpu_int8 fp8 ptpc_fp8 fbgemm_fp8 fp_quant modelopt modelopt_fp4 bitblas gguf gptq_marlin_24 "
     "gptq_marlin gptq_bitblas awq_marlin gptq compressed-tensors bitsandbytes hqq experts_int8 ipex quark "
     "moe_wna16 torchao auto-round rtn inc mxfp4 petit_nvfp4"),
    ("0.12.0", "0.13.0", "@v0.12.0",
     "awq deepspeedfp tpu_int8 fp8 ptpc_fp8 fbgemm_fp8 fp_quant modelopt modelopt_fp4 bitblas gguf "
     "gptq_marlin_24 gptq_marlin gptq_bitblas awq_marlin gptq compressed-tensors bitsandbytes hqq experts_int8 "
     "ipex quark moe_wna16 torchao auto-round rtn inc mxfp4 petit_nvfp4 cpu_gptq cpu_awq"),
    # No argparse choices from 0.13.0: ModelConfig.quantization is `QuantizationMethods | str | None` (read @v0.13.0
    # .. @v0.34.0), and get_kwargs' literal_to_kwargs gives a Literal beside `str` a metavar, not choices: the parser
    # takes any text, so that a plugin's registered method passes; _VLLM_BUILTIN_QUANTIZATION below.
)
# From 0.13.0 ModelConfig lowercases --quantization (validate_quantization_before) and _verify_quantization exits
# with "Unknown quantization method" on a name not in QUANTIZATION_METHODS, the Literal's values plus what a plugin
# registered (register_quantization_config): vllm/config/model.py and model_executor/layers/quantization/__init__.py
# in the PyPI wheels, read at each release named; (since, until, releases read, built-in methods)
_VLLM_BUILTIN_QUANTIZATION = (
    ("0.13.0", "0.14.0", "0.13.0",
     "awq deepspeedfp tpu_int8 fp8 ptpc_fp8 fbgemm_fp8 fp_quant modelopt modelopt_fp4 bitblas gguf "
     "gptq_marlin_24 gptq_marlin gptq_bitblas awq_marlin gptq compressed-tensors bitsandbytes hqq experts_int8 "
     "ipex quark moe_wna16 torchao auto-round rtn inc mxfp4 petit_nvfp4 cpu_gptq cpu_awq"),
    ("0.14.0", "0.15.0", "0.14.0, 0.14.1",
     "awq deepspeedfp fp8 ptpc_fp8 fbgemm_fp8 fp_quant modelopt modelopt_fp4 bitblas gguf gptq_marlin_24 "
     "gptq_marlin gptq_bitblas awq_marlin gptq compressed-tensors bitsandbytes hqq experts_int8 ipex quark "
     "moe_wna16 torchao auto-round rtn inc mxfp4 petit_nvfp4 cpu_awq"),
    ("0.15.0", "0.16.0", "0.15.0, 0.15.1",
     "awq fp8 ptpc_fp8 fbgemm_fp8 fp_quant modelopt modelopt_fp4 bitblas gguf gptq_marlin_24 gptq_marlin "
     "gptq_bitblas awq_marlin gptq compressed-tensors bitsandbytes experts_int8 ipex quark moe_wna16 torchao inc "
     "mxfp4 petit_nvfp4 cpu_awq"),
    ("0.16.0", "0.17.0", "0.16.0",
     "awq fp8 ptpc_fp8 fbgemm_fp8 fp_quant modelopt modelopt_fp4 modelopt_mxfp8 gguf gptq_marlin awq_marlin gptq "
     "compressed-tensors bitsandbytes experts_int8 quark moe_wna16 torchao inc mxfp4 petit_nvfp4 cpu_awq"),
    ("0.17.0", "0.19.0", "0.17.0 .. 0.18.1",
     "awq fp8 ptpc_fp8 fbgemm_fp8 fp_quant modelopt modelopt_fp4 modelopt_mxfp8 modelopt_mixed gguf gptq_marlin "
     "awq_marlin gptq compressed-tensors bitsandbytes experts_int8 quark moe_wna16 torchao inc mxfp4 petit_nvfp4 "
     "cpu_awq"),
    ("0.19.0", "0.20.0", "0.19.0, 0.19.1",
     "awq fp8 fbgemm_fp8 fp_quant modelopt modelopt_fp4 modelopt_mxfp8 modelopt_mixed gguf gptq_marlin awq_marlin "
     "gptq compressed-tensors bitsandbytes experts_int8 quark moe_wna16 torchao inc mxfp4 mxfp8 petit_nvfp4 "
     "cpu_awq"),
    ("0.20.0", "0.22.0", "0.20.0 .. 0.21.0",
     "awq fp8 fbgemm_fp8 fp_quant modelopt modelopt_fp4 modelopt_mxfp8 modelopt_mixed gguf gptq_marlin awq_marlin "
     "gptq humming compressed-tensors bitsandbytes experts_int8 quark moe_wna16 torchao inc mxfp4 gpt_oss_mxfp4 "
     "deepseek_v4_fp8 cpu_awq online fp8_per_tensor fp8_per_block int8_per_channel_weight_only mxfp8"),
    ("0.22.0", "0.23.0", "0.22.0, 0.22.1",
     "awq fp8 fbgemm_fp8 fp_quant modelopt modelopt_fp4 modelopt_mxfp8 modelopt_mixed gguf auto_gptq gptq "
     "gptq_marlin awq_marlin humming compressed-tensors bitsandbytes experts_int8 quark moe_wna16 torchao inc "
     "mxfp4 gpt_oss_mxfp4 deepseek_v4_fp8 cpu_awq online fp8_per_tensor fp8_per_block "
     "int8_per_channel_weight_only mxfp8"),
    ("0.23.0", "0.24.0", "0.23.0",
     "awq fp8 fbgemm_fp8 fp_quant modelopt modelopt_fp4 modelopt_mxfp8 modelopt_mixed gguf auto_gptq gptq "
     "gptq_marlin awq_marlin humming compressed-tensors bitsandbytes experts_int8 quark moe_wna16 torchao inc "
     "mxfp4 gpt_oss_mxfp4 deepseek_v4_fp8 online fp8_per_tensor fp8_per_block int8_per_channel_weight_only mxfp8"),
    ("0.24.0", "0.26.0", "0.24.0 .. 0.25.1",
     "awq auto_awq fp8 fbgemm_fp8 fp_quant modelopt modelopt_fp4 modelopt_mxfp8 modelopt_mixed auto_gptq gptq "
     "gptq_marlin awq_marlin humming compressed-tensors bitsandbytes experts_int8 quark moe_wna16 torchao inc "
     "mxfp4 gpt_oss_mxfp4 deepseek_v4_fp8 online fp8_per_tensor fp8_per_block fp8_per_channel "
     "int8_per_channel_weight_only mxfp8"),
    ("0.26.0", "0.28.0", "0.26.0 .. 0.27.1",
     "awq auto_awq fp8 fbgemm_fp8 fp_quant modelopt modelopt_fp4 modelopt_mxfp8 modelopt_mixed auto_gptq gptq "
     "gptq_marlin awq_marlin humming compressed-tensors bitsandbytes experts_int8 quark moe_wna16 torchao inc "
     "mxfp4 gpt_oss_mxfp4 deepseek_v4_fp8 online fp8_per_tensor fp8_per_block fp8_per_channel "
     "int8_per_channel_weight_only nvfp4_per_token mxfp8"),
    ("0.28.0", "0.34.0", "0.28.0 .. 0.33.0",
     "awq auto_awq fp8 fbgemm_fp8 fp_quant modelopt modelopt_fp4 modelopt_mxfp8 modelopt_mixed auto_gptq gptq "
     "gptq_marlin awq_marlin humming compressed-tensors experts_int8 quark moe_wna16 torchao inc mxfp4 "
     "gpt_oss_mxfp4 deepseek_v4_fp8 online fp8_per_tensor fp8_per_block fp8_per_channel "
     "int8_per_channel_weight_only nvfp4_per_token mxfp8"),
    ("0.34.0", "0.34.1", "0.34.0",
     "awq auto_awq fp8 w4afp8 fbgemm_fp8 modelopt modelopt_fp4 modelopt_mxfp8 modelopt_mixed auto_gptq gptq "
     "gptq_marlin awq_marlin humming compressed-tensors experts_int8 quark moe_wna16 torchao inc mxfp4 "
     "gpt_oss_mxfp4 deepseek_v4_fp8 online fp8_per_tensor fp8_per_block fp8_per_channel "
     "int8_per_channel_weight_only nvfp4_per_token mxfp8 lut_b_moe mxfp4_hadamard32"),
)
_Q_BUILTIN = ("vllm/config/model.py ModelConfig._verify_quantization ('Unknown quantization method') against "
              "QUANTIZATION_METHODS, the QuantizationMethods Literal plus plugins' registrations, the value lowercased "
              "by validate_quantization_before")
_VLLM_NULLABLE_QUANTIZATION_UNTIL = "0.9.0"  # from 0.9 --quantization comes from get_kwargs (optional_type)

# SGLang's lists, read in every release on PyPI from 0.4.0 to 0.5.23 (wheels; `@v` names the release): --quantization,
# --dtype and --kv-cache-dtype take type=str and a fixed list (add_quantization_method_choices, which extends the
# list, is called by nothing in SGLang itself). Up to 0.5.13 add_argument(choices=[...] or QUANTIZATION_CHOICES) in
# server_args.py; from 0.5.14 a dataclass field A[str, Arg(choices=...)], which arg_groups/arg_utils.py's
# add_cli_args_from_dataclass gives the same type=str and choices (the fields in arg_groups/fields/model.py and
# QUANTIZATION_CHOICES in arg_groups/choices.py from 0.5.20). A .post release may change a list (0.5.4.post2 and
# 0.5.4.post3 did). (since, until, releases read, the list in the parser's order):
_SGLANG_QUANTIZATION = (
    ("0.4.0", "0.4.1.post5", "@v0.4.0 .. @v0.4.1.post4",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf"),
    ("0.4.1.post5", "0.4.1.post6", "@v0.4.1.post5",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt"),
    ("0.4.1.post6", "0.4.4", "@v0.4.1.post6 .. @v0.4.3.post4",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt w8a8_int8"),
    ("0.4.4", "0.4.4.post4", "@v0.4.4 .. @v0.4.4.post3",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt w8a8_int8 w8a8_fp8"),
    ("0.4.4.post4", "0.4.5.post1", "@v0.4.4.post4, @v0.4.5",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt w8a8_int8 w8a8_fp8 moe_wna16"),
    ("0.4.5.post1", "0.4.6.post5", "@v0.4.5.post1 .. @v0.4.6.post4",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp4 w8a8_int8 w8a8_fp8 "
     "moe_wna16"),
    ("0.4.6.post5", "0.4.9.post1", "@v0.4.6.post5 .. @v0.4.9",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp4 w8a8_int8 w8a8_fp8 "
     "moe_wna16 qoq"),
    ("0.4.9.post1", "0.4.9.post3", "@v0.4.9.post1, @v0.4.9.post2",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp4 w8a8_int8 w8a8_fp8 "
     "moe_wna16 qoq w4afp8"),
    ("0.4.9.post3", "0.5.1", "@v0.4.9.post3 .. @v0.4.10.post2",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp4 petit_nvfp4 w8a8_int8 "
     "w8a8_fp8 moe_wna16 qoq w4afp8"),
    ("0.5.1", "0.5.4", "@v0.5.1 .. @v0.5.3.post3",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp4 petit_nvfp4 w8a8_int8 "
     "w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4"),
    ("0.5.4", "0.5.4.post2", "@v0.5.4, @v0.5.4.post1",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 modelopt_fp4 "
     "petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 compressed-tensors"),
    ("0.5.4.post2", "0.5.6.post1", "@v0.5.4.post2 .. @v0.5.6",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 modelopt_fp4 "
     "petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 auto-round compressed-tensors"),
    ("0.5.6.post1", "0.5.8", "@v0.5.6.post1 .. @v0.5.7",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 modelopt_fp4 "
     "petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 auto-round compressed-tensors modelslim"),
    ("0.5.8", "0.5.9", "@v0.5.8, @v0.5.8.post1",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 modelopt_fp4 "
     "petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 auto-round compressed-tensors modelslim "
     "quark_int4fp8_moe"),
    ("0.5.9", "0.5.10", "@v0.5.9",
     "awq fp8 mxfp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 modelopt_fp4 "
     "petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 auto-round compressed-tensors modelslim "
     "quark_int4fp8_moe"),
    ("0.5.10", "0.5.11", "@v0.5.10, @v0.5.10.post1",
     "awq fp8 mxfp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 modelopt_fp4 "
     "modelopt_mixed petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 auto-round compressed-tensors "
     "modelslim quark_int4fp8_moe"),
    ("0.5.11", "0.5.12", "@v0.5.11",
     "awq fp8 mxfp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 modelopt_fp4 "
     "modelopt_mixed petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 auto-round compressed-tensors "
     "modelslim quark_int4fp8_moe unquant"),
    ("0.5.12", "0.5.13", "@v0.5.12, @v0.5.12.post1",
     "awq fp8 mxfp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 modelopt_fp4 "
     "modelopt_mixed petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 auto-round compressed-tensors "
     "modelslim quark quark_int4fp8_moe mlx_q4 mlx_q8 unquant"),
    ("0.5.13", "0.5.14", "@v0.5.13, @v0.5.13.post1",
     "awq fp8 mxfp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 modelopt_fp4 "
     "modelopt_mixed petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 auto-round compressed-tensors "
     "modelslim quark quark_int4fp8_moe quark_mxfp4 mlx_q4 mlx_q8 unquant"),
    ("0.5.14", "0.5.15", "@v0.5.14",
     "awq fp8 mxfp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 modelopt_fp4 "
     "nvfp4_online modelopt_mixed petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 auto-round "
     "compressed-tensors modelslim quark quark_int4fp8_moe quark_mxfp4 mlx_q4 mlx_q8 unquant"),
    ("0.5.15", "0.5.16", "@v0.5.15, @v0.5.15.post1",
     "awq fp8 mxfp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 modelopt_fp4 "
     "nvfp4_online modelopt_mixed petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 auto-round "
     "auto-round-int8 compressed-tensors modelslim mxfp_w4a8 quark quark_int4fp8_moe quark_mxfp4 mlx_q4 mlx_q8 "
     "unquant"),
    ("0.5.16", "0.5.20", "@v0.5.16 .. @v0.5.19",
     "awq fp8 mxfp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 modelopt_fp4 "
     "nvfp4_online modelopt_mixed petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 w4afp8 mxfp4 auto-round "
     "auto-round-int8 compressed-tensors modelslim mxfp_w4a8 quark quark_int4fp8_moe quark_mxfp4 mlx_q4 mlx_q8 "
     "unquant humming"),
    ("0.5.20", "0.5.24", "@v0.5.20 .. @v0.5.23",
     "awq fp8 mxfp8 gptq gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 modelopt_fp4 "
     "nvfp4_online modelopt_mixed petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 w4afp8 mxfp4 auto-round "
     "auto-round-int8 compressed-tensors modelslim mxfp_w4a8 quark quark_int4fp8_moe quark_mxfp4 mlx_q4 mlx_q8 "
     "unquant humming"),
)
_SGLANG_KV_CACHE_DTYPES = (
    ("0.4.0", "0.4.1.post6", "@v0.4.0 .. @v0.4.1.post5",
     "auto fp8_e5m2"),
    ("0.4.1.post6", "0.5.4", "@v0.4.1.post6 .. @v0.5.3.post3",
     "auto fp8_e5m2 fp8_e4m3"),
    ("0.5.4", "0.5.4.post3", "@v0.5.4 .. @v0.5.4.post2",
     "auto fp8_e5m2 fp8_e4m3 bf16 bfloat16"),
    ("0.5.4.post3", "0.5.16", "@v0.5.4.post3 .. @v0.5.15.post1",
     "auto fp8_e5m2 fp8_e4m3 bf16 bfloat16 fp4_e2m1"),
    ("0.5.16", "0.5.21", "@v0.5.16 .. @v0.5.20",
     "auto fp8_e5m2 fp8_e4m3 mxfp8 bf16 bfloat16 nvfp4 fp4_mx_block16 fp4_e2m1"),
    ("0.5.21", "0.5.24", "@v0.5.21 .. @v0.5.23",
     "auto fp8_e5m2 fp8_e4m3 mxfp8 bf16 bfloat16 nvfp4 fp4_mx_block16"),
)
_SGLANG_LIST_SOURCE = ("python/sglang/srt/server_args.py choices (from 0.5.14 an Arg(choices=...) field; 0.5.20 "
                       "arg_groups/fields/model.py, arg_groups/choices.py)")
CHOICE_FLAGS: dict[str, tuple[ChoiceFlagRow, ...]] = {
    "vllm": (
        ChoiceFlagRow("0.6.4", "0.34.1", "dtype", _VLLM_DTYPES, "vllm/engine/arg_utils.py choices, later vllm/config "
                      "ModelDType Literal (@v0.6.4 .. @v0.14.0; " + _VLLM_WHEELS + " 0.14.1 .. 0.34.0)"),
        ChoiceFlagRow("0.6.4", "0.10.0", "kv-cache-dtype", _VLLM_KV,
                      "vllm/engine/arg_utils.py choices @v0.6.4 .. @v0.8.4; " + _KV_SOURCE + " @v0.8.5 .. @v0.9.2"),
        ChoiceFlagRow("0.10.0", "0.11.0", "kv-cache-dtype", (*_VLLM_KV, "fp8_inc"),
                      _KV_SOURCE + " @v0.10.0 .. @v0.10.2"),
        ChoiceFlagRow("0.11.0", "0.11.1", "kv-cache-dtype", (*_VLLM_KV, "fp8_inc", "bfloat16"),
                      _KV_SOURCE + " @v0.11.0"),
        ChoiceFlagRow("0.11.1", "0.18.0", "kv-cache-dtype", (*_VLLM_KV, "fp8_inc", "bfloat16", "fp8_ds_mla"),
                      _KV_SOURCE + " @v0.12.0 .. @v0.14.0; " + _VLLM_WHEELS + " 0.11.1, 0.11.2, 0.14.1 .. 0.17.1"),
        *(ChoiceFlagRow(since, until, "kv-cache-dtype", kinds, f"{_KV_SOURCE} ({_VLLM_WHEELS} {read})")
          for since, until, read, kinds in (("0.18.0", "0.20.0", "0.18.0 .. 0.19.1", _VLLM_KV_18),
                                            ("0.20.0", "0.25.0", "0.20.0 .. 0.24.0", _VLLM_KV_20),
                                            ("0.25.0", "0.28.0", "0.25.0 .. 0.27.1", _VLLM_KV_25),
                                            ("0.28.0", "0.30.0", "0.28.0, 0.29.0", _VLLM_KV_28),
                                            ("0.30.0", "0.32.0", "0.30.0, 0.31.0", _VLLM_KV_30),
                                            ("0.32.0", "0.33.0", "0.32.0", _VLLM_KV_32))),
        # from 0.33.0 no argparse choices (`CacheDType | str`): a value outside the built-in names is refused by
        # CacheConfig's validator unless a platform plugin registered it, so it is a warning
        ChoiceFlagRow("0.33.0", "0.34.1", "kv-cache-dtype", _VLLM_KV_33,
                      f"{_KV_PLUGIN_SOURCE} ({_VLLM_WHEELS} 0.33.0, 0.34.0)", plugins=True, noun="value",
                      refusal="Invalid kv_cache_dtype", registrar="a platform plugin (register_kv_cache_dtype)",
                      after="; gsg cannot size a KV cache in it"),
        # config/cache.py MambaCacheMode Literal, argparse choices (VLLM_MAMBA_CACHE_MODE_ROWS)
        ChoiceFlagRow("0.15.0", "0.32.0", "mamba-cache-mode", ("all", "align", "none"),
                      "vllm/config/cache.py@v0.15.0 .. @v0.31.0 MambaCacheMode"),
        ChoiceFlagRow("0.32.0", "0.34.1", "mamba-cache-mode", ("align", "none"),
                      "vllm/config/cache.py@v0.32.0 .. @v0.34.0 MambaCacheMode"),
        *(ChoiceFlagRow(since, until, "quantization", _choices(methods),
                        f"{_Q_OLD if nullable else _Q_NEW} ({tags})", ("", "None") if nullable else ())
          for since, until, tags, methods in _VLLM_QUANTIZATION
          for nullable in (known_version(since) < known_version(_VLLM_NULLABLE_QUANTIZATION_UNTIL),)),
        *(ChoiceFlagRow(since, until, "quantization", _choices(methods), f"{_Q_BUILTIN} ({_VLLM_WHEELS} {read})",
                        ("", "None"), folded=True, plugins=True)
          for since, until, read, methods in _VLLM_BUILTIN_QUANTIZATION),
    ),
    "sglang": (
        ChoiceFlagRow("0.4.0", "0.5.24", "dtype", _VLLM_DTYPES, _SGLANG_LIST_SOURCE + " (@v0.4.0 .. @v0.5.23)"),
        *(ChoiceFlagRow(since, until, flag, _choices(listed), f"{_SGLANG_LIST_SOURCE} ({tags})")
          for flag, table in (("kv-cache-dtype", _SGLANG_KV_CACHE_DTYPES), ("quantization", _SGLANG_QUANTIZATION))
          for since, until, tags, listed in table),
    ),
}


class _ReleaseRange(Protocol):
    @property
    def since(self) -> str: ...
    @property
    def until(self) -> str: ...


_Ranged = TypeVar("_Ranged", bound=_ReleaseRange)


def _read_row(rows: Iterable[_Ranged], release: Version | None) -> _Ranged | None:
    """The row whose releases [since, until) hold `release`: a release gsg has read. None for one it has not (or
    no readable version), so that nothing is refused on a release whose parser was not read."""
    if release is None:
        return None
    return next((row for row in rows if known_version(row.since) <= release < known_version(row.until)), None)


def switch_row(family: str, release: Version | None) -> SwitchFlagsRow | None:
    """The switch-flag row of an engine release gsg has read, or None."""
    return _read_row(SWITCH_FLAGS.get(family, ()), release)


def choice_row(family: str, flag: str, release: Version | None) -> ChoiceFlagRow | None:
    """The choices of one flag in an engine release gsg has read, or None."""
    return _read_row((row for row in CHOICE_FLAGS.get(family, ()) if row.flag == flag), release)


@frozen_value(eq=True, repr=True)
class ConfigFileRow:
    """An engine's `--config FILE` in releases [since, until): it reads more arguments from a YAML file at start-up,
    and only when `--config` is an argument of its own (the parser's `"--config" in args`); `--config=FILE` is then
    argparse's plain string option, stored and the file never read."""

    since: str
    until: str
    source: str


CONFIG_FILE_FLAG: dict[str, tuple[ConfigFileRow, ...]] = {
    "vllm": (
        ConfigFileRow("0.6.4", "0.14.1", "FlexibleArgumentParser.parse_args `'--config' in args` then "
                                         "_pull_args_from_config (vllm/utils.py@v0.6.4, @v0.8.5, vllm/utils/__init__.py"
                                         "@v0.11.0, vllm/utils/argparse_utils.py@v0.14.0); --config a str option "
                                         "(vllm/scripts.py@v0.6.4, cli_args.py later)"),
        ConfigFileRow("0.23.0", "0.24.1", "vllm/utils/argparse_utils.py@v0.23.0, @v0.24.0, the same check"),
        ConfigFileRow("0.28.0", "0.28.1", "vllm/utils/argparse_utils.py@v0.28.0, the same check"),
        ConfigFileRow("0.30.0", "0.30.1", "vllm/utils/argparse_utils.py@v0.30.0, the same check"),
    ),
    "sglang": (
        ConfigFileRow("0.5.3", "0.5.11", "python/sglang/srt/server_args.py prepare_server_args `\"--config\" in "
                                         "argv` then ConfigArgumentMerger; --config a str option (@v0.5.3, @v0.5.4, "
                                         "@v0.5.5, @v0.5.10)"),
    ),
}


def config_file_row(family: str, release: Version | None) -> ConfigFileRow | None:
    """The --config reading of an engine release gsg has read, or None."""
    return _read_row(CONFIG_FILE_FLAG.get(family, ()), release)
