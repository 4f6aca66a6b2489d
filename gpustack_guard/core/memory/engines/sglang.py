"""SGLang's static pool (memory-arithmetic.md §1.5): f x total - weights - what is already used."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.estimate import (DOES_NOT_FIT, FITS, KV_BELOW_MAX_LEN, NO_KV_MEMORY, Estimate,
                                            UnsupportedModel)
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.memory.weights import weights_per_rank
from gpustack_guard.core.memory.kv import KVShape
from gpustack_guard.core.units import GiB, MiB


@dataclass(frozen=True, eq=False)  # identity equality: cheaper to define, never compared
class SglangConfig:
    mem_fraction_static: float | None = None
    context_length: int | None = None
    max_running_requests: int | None = None
    chunked_prefill_size: int | None = None
    cuda_graph_max_bs: int | None = None
    tp_size: int = 1
    pp_size: int = 1
    kv_cache_dtype: str | None = None
    disable_cuda_graph: bool = False


def default_chunked_prefill(gpu_total: int) -> int:
    if gpu_total < 35 * GiB:
        return 2048
    return 8192 if gpu_total < 160 * GiB else 16384


def default_cuda_graph_max_bs(gpu_total: int, tp: int) -> int:
    """SGLang's capture batch size by GPU memory (24 on 24 GB cards, 256 on 80 GB: Table A13)."""
    if gpu_total < 20 * GiB:
        return 8
    if gpu_total < 35 * GiB:
        return 24 if tp < 4 else 80
    if gpu_total < 60 * GiB:
        return 32 if tp < 4 else 160
    return 256 if gpu_total < 120 * GiB else 512


def reserved_mb(gpu_total: int, tp: int, pp: int, chunked: int, graph_bs: int) -> float:
    """PR #10975 heuristic: memory SGLang keeps outside the static pool, in MB."""
    return 512 + max(chunked, 2048) * 1.5 + graph_bs * 2 + tp * pp / 8 * 1024


def default_fraction(gpu_total: int, tp: int, pp: int, chunked: int, graph_bs: int) -> float:
    gpu_mb = gpu_total / MiB
    reserved = reserved_mb(gpu_total, tp, pp, chunked, graph_bs)
    if gpu_total > 60 * GiB:
        reserved = max(reserved, P.SGLANG_BIG_GPU_FLOOR_MB)
    fraction = round((gpu_mb - reserved) / gpu_mb, 3)
    return fraction if 0 < fraction < 1 else P.SGLANG_FALLBACK_FRACTION


def _defaults(cfg: SglangConfig, gpu_total: int) -> tuple[int, int, float]:
    """(chunked_prefill_size, cuda_graph_max_bs, mem_fraction_static) after SGLang's defaults."""
    chunked = cfg.chunked_prefill_size or default_chunked_prefill(gpu_total)
    graph_bs = 0 if cfg.disable_cuda_graph else (cfg.cuda_graph_max_bs or
                                                 default_cuda_graph_max_bs(gpu_total, cfg.tp_size))
    fraction = cfg.mem_fraction_static or default_fraction(gpu_total, cfg.tp_size, cfg.pp_size, chunked, graph_bs)
    return chunked, graph_bs, fraction


def sglang_fraction(cfg: SglangConfig, gpu_total: int) -> float:
    """The static fraction SGLang takes (and GPUStack books) on a GPU of this size."""
    return _defaults(cfg, gpu_total)[2]


def estimate_sglang(facts: ModelFacts, gpu_total: int, cfg: SglangConfig, *, version: str | None) -> Estimate:
    if facts.is_compressed_attention:
        raise UnsupportedModel("gsg has no SGLang memory model for compressed sparse attention (DeepSeek-V4); "
                               "estimate it with the vLLM backend")
    tp, pp = cfg.tp_size, cfg.pp_size
    chunked, graph_bs, fraction = _defaults(cfg, gpu_total)
    context = cfg.context_length or facts.max_position_embeddings or 0

    weights = weights_per_rank(facts, tp, pp)
    requested = math.ceil(fraction * gpu_total)
    baseline = P.CUDA_CONTEXT + (P.COMM_BUFFERS if tp * pp > 1 else 0)
    available = requested - weights - baseline
    shape = KVShape(facts, tp, pp, cfg.kv_cache_dtype, 1, chunked)
    capacity = max(available, 0) // shape.bytes_per_token if shape.bytes_per_token else 0
    kv_pool = capacity * shape.bytes_per_token
    running = cfg.max_running_requests or (max(capacity // context, 1) if context else 0)
    needed = int(reserved_mb(gpu_total, tp, pp, chunked, graph_bs) * MiB)

    if weights > gpu_total:
        verdict = DOES_NOT_FIT
    elif available <= 0:
        verdict = NO_KV_MEMORY
    elif context and capacity < context:
        verdict = KV_BELOW_MAX_LEN
    else:
        verdict = FITS
    return Estimate(
        engine="SGLang", version=version or f"{P.DEFAULT_VERSIONS['sglang']} (assumed)", gpu_total=gpu_total,
        gpus=tp * pp, requested=requested, weights=weights, activation=0, non_torch=baseline,
        cuda_graphs=graph_bs * 2 * MiB, kv_cache=kv_pool, kv_available=available, headroom=gpu_total - requested,
        headroom_needed=needed, footprint=gpu_total - max(gpu_total - requested - needed, 0),
        kv_bytes_per_token=shape.bytes_per_token, block_size=1, kv_capacity_tokens=capacity,
        max_model_len=context, estimated_max_model_len=min(capacity, max(context, capacity)),
        max_num_seqs=running, max_concurrency=(capacity / context) if context else 0.0, verdict=verdict,
        kv_needed=context * shape.bytes_per_token,
        extra={"mem_fraction_static": fraction, "chunked_prefill_size": chunked, "cuda_graph_max_bs": graph_bs},
    )
