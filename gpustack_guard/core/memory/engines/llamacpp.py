"""llama.cpp per-device VRAM (memory-arithmetic.md §1.6, gguf-parser's NonUMA sum) with layer offload."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.estimate import DOES_NOT_FIT, FITS, Estimate
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.memory.weights import weight_layout
from gpustack_guard.core.memory.quant import GGUF_TYPE_BYTES

QUANTISED_CACHE = {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"}


@dataclass(frozen=True, eq=False)  # identity equality: cheaper to define, never compared
class LlamaCppConfig:
    ctx_size: int | None = None  # total cells, shared by all --parallel slots
    parallel: int | None = None
    gpu_layers: int | None = None  # -ngl; None = everything
    batch_size: int | None = None
    ubatch_size: int | None = None
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    flash_attn: bool = False
    no_kv_offload: bool = False
    tensor_split: tuple[float, ...] | None = None
    platform_footprint: int = P.LLAMACPP_PLATFORM_FOOTPRINT


@dataclass(frozen=True)
class DeviceUsage:
    layers: int
    weights: int
    kv: int
    compute: int
    output: int
    footprint: int

    @property
    def total(self) -> int:
        return self.footprint + self.weights + self.kv + self.compute + self.output


def _cache_bytes(kind: str) -> float:
    try:
        return GGUF_TYPE_BYTES[kind.lower()]
    except KeyError:
        raise ValueError(f"unknown cache type '{kind}' (f16, bf16, q8_0, q4_0, ...)") from None


def split_layers(count: int, fractions: tuple[float, ...]) -> list[int]:
    """Distribute `count` layers over devices by tensor-split fractions (largest remainder)."""
    total = sum(fractions)
    raw = [count * f / total for f in fractions]
    share = [math.floor(x) for x in raw]
    for i in sorted(range(len(raw)), key=lambda i: raw[i] - share[i], reverse=True)[: count - sum(share)]:
        share[i] += 1
    return share


def estimate_llamacpp(facts: ModelFacts, gpu_totals: list[int], cfg: LlamaCppConfig, *,
                      version: str | None) -> Estimate:
    layout = weight_layout(facts)
    L = facts.num_hidden_layers
    ctx = cfg.ctx_size or P.LLAMACPP_DEFAULT_CTX
    parallel = cfg.parallel or 1
    ubatch = min(cfg.ubatch_size or P.LLAMACPP_DEFAULT_UBATCH, cfg.batch_size or P.LLAMACPP_DEFAULT_BATCH)
    offload = L + 1 if cfg.gpu_layers is None else min(cfg.gpu_layers, L + 1)
    full = offload > L
    on_gpu = min(offload, L)
    notes = []

    type_v = cfg.cache_type_v
    if type_v.lower() in QUANTISED_CACHE and not cfg.flash_attn:
        type_v = "f16"
        notes.append("a quantised V cache needs flash attention: llama.cpp falls back to f16")
    pad = 256 if cfg.flash_attn else 32
    cells = math.ceil(ctx / pad) * pad
    heads_kv, d = facts.kv_heads, facts.dim_head
    kv_per_layer = 0 if cfg.no_kv_offload else int(
        cells * heads_kv * d * (_cache_bytes(cfg.cache_type_k) + _cache_bytes(type_v)))
    kq = cells * ubatch * (2 if cfg.flash_attn else facts.num_attention_heads * 4)
    output_buffer = (facts.hidden_size + facts.vocab_size) * ubatch * 4

    fractions = cfg.tensor_split or tuple(float(t) for t in gpu_totals)
    layer_share = split_layers(on_gpu, fractions[: len(gpu_totals)])
    offloaded = list(layout.per_layer[L - on_gpu:])  # the last blocks go to the GPUs
    devices: list[DeviceUsage] = []
    start = 0
    for i, count in enumerate(layer_share):
        is_output = full and i == len(layer_share) - 1
        weights = sum(offloaded[start:start + count])
        if is_output:
            weights += layout.lm_head or layout.embedding  # tied models use token_embd as output
        start += count
        devices.append(DeviceUsage(count, weights, kv_per_layer * count, kq if count else 0,
                                   output_buffer if is_output else 0, cfg.platform_footprint))

    worst = max(range(len(devices)), key=lambda i: devices[i].total - gpu_totals[i])
    usage, total = devices[worst], gpu_totals[worst]
    kv_token = (kv_per_layer // cells) * usage.layers if cells else 0
    verdict = FITS if all(dev.total <= t for dev, t in zip(devices, gpu_totals)) else DOES_NOT_FIT
    estimated_ctx = 0
    if usage.layers:
        spare = total - (usage.total - usage.kv - usage.compute)
        per_cell = usage.kv / cells + usage.compute / cells
        estimated_ctx = max(int(spare // per_cell) // pad * pad, 0) if per_cell else 0
    return Estimate(
        engine="llama.cpp", version=version or f"{P.DEFAULT_VERSIONS['llamacpp']} (assumed)", gpu_total=total,
        gpus=len(gpu_totals), requested=usage.total, weights=usage.weights, activation=usage.compute,
        non_torch=usage.footprint, cuda_graphs=0, kv_cache=usage.kv, kv_available=usage.kv,
        headroom=total - usage.total, headroom_needed=0, footprint=usage.total, kv_bytes_per_token=kv_token,
        block_size=pad, kv_capacity_tokens=cells, max_model_len=ctx // parallel, estimated_max_model_len=estimated_ctx,
        max_num_seqs=parallel, max_concurrency=float(parallel), verdict=verdict, notes=tuple(notes),
        extra={"offload_layers": on_gpu, "total_layers": L, "full_offload": full, "ctx_size": ctx,
               "ubatch_size": ubatch, "output_buffer": usage.output, "flash_attn": cfg.flash_attn,
               "per_device": [{"layers": dev.layers, "total": dev.total, "gpu_total": t}
                              for dev, t in zip(devices, gpu_totals)]},
    )
