"""Model facts (architecture numbers) and what follows from them: parameter count and weight bytes."""

from __future__ import annotations

import math
from functools import lru_cache
from dataclasses import dataclass, fields, replace
from typing import Any

from gpustack_guard.memory.quant import GGUF_TYPE_BYTES, linear_bytes_per_param


@dataclass(frozen=True, eq=False)  # identity equality: cheaper to define, never compared
class ModelFacts:
    architecture: str | None = None
    num_hidden_layers: int | None = None
    hidden_size: int | None = None
    num_attention_heads: int | None = None
    num_key_value_heads: int | None = None
    head_dim: int | None = None
    intermediate_size: int | None = None
    vocab_size: int | None = None
    tie_word_embeddings: bool = False
    attention_bias: bool = False
    num_experts: int | None = None
    num_experts_per_tok: int | None = None
    moe_intermediate_size: int | None = None
    shared_expert_intermediate_size: int | None = None
    first_k_dense_replace: int | None = None
    kv_lora_rank: int | None = None
    q_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    qk_nope_head_dim: int | None = None
    v_head_dim: int | None = None
    sliding_window: int | None = None
    sliding_window_layers: int | None = None  # how many layers use the window (hybrid patterns)
    # DeepSeek-V4 compressed sparse attention: per-layer KV compression (0 none, 4 CSA, 128 HCA; MTP
    # layers after num_hidden_layers), its lightning indexer, grouped low-rank output, hyper-connections
    compress_ratios: tuple[int, ...] | None = None
    index_n_heads: int | None = None
    index_head_dim: int | None = None
    o_lora_rank: int | None = None
    o_groups: int | None = None
    hc_mult: int | None = None
    num_hash_layers: int | None = None
    num_nextn_predict_layers: int | None = None  # MTP layers: in the checkpoint, loaded only for speculation
    expert_dtype: str | None = None  # "fp4": routed experts packed MXFP4 beside an fp8 rest
    max_position_embeddings: int | None = None
    dtype: str | None = None
    quant_method: str | None = None  # None = unquantized
    quant_bits: int | None = None
    quant_group_size: int | None = None
    weight_bytes: int | None = None  # measured (safetensors index / GGUF tensors) beats computed
    num_parameters: int | None = None
    # exact tensor bytes from a GGUF header: per block, token embedding, output (lm_head)
    layer_weight_bytes: tuple[int, ...] | None = None
    embedding_bytes: int | None = None
    output_bytes: int | None = None
    source: str = "unknown"  # where the facts came from, for messages

    # --- derived shape -----------------------------------------------------------------------------------
    @property
    def is_mla(self) -> bool:
        return bool(self.kv_lora_rank)

    @property
    def is_compressed_attention(self) -> bool:
        return bool(self.compress_ratios)

    @property
    def is_moe(self) -> bool:
        return bool(self.num_experts and self.num_experts > 1)

    @property
    def kv_heads(self) -> int | None:
        return self.num_key_value_heads or self.num_attention_heads

    @property
    def dim_head(self) -> int | None:
        if self.head_dim:
            return self.head_dim
        if self.hidden_size and self.num_attention_heads:
            return self.hidden_size // self.num_attention_heads
        return None

    @property
    def has_attention_shape(self) -> bool:
        if self.is_compressed_attention:
            return True  # missing_for_params names every field the DeepSeek-V4 layout needs
        if self.is_mla:
            return bool(self.num_hidden_layers and self.qk_rope_head_dim is not None)
        return bool(self.num_hidden_layers and self.kv_heads and self.dim_head)

    def missing_for_params(self) -> list[str]:
        need = ["num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size"]
        need.append("moe_intermediate_size" if self.is_moe and not self.intermediate_size else "intermediate_size")
        if self.is_compressed_attention:
            need += ["head_dim", "q_lora_rank", "num_experts_per_tok"]
            if 4 in self.compress_ratios:
                need += ["index_n_heads", "index_head_dim"]
        missing = [name for name in need if getattr(self, name) is None]
        if self.is_compressed_attention and len(self.compress_ratios) < (self.num_hidden_layers or 0):
            missing.append("compress_ratios (one per layer)")
        return missing

    def merged(self, override: dict[str, Any]) -> "ModelFacts":
        known = {f.name for f in fields(self)}
        changes = {k: v for k, v in override.items() if k in known and v is not None and getattr(self, k) != v}
        return replace(self, **changes) if changes else self

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


# --- parameter count (memory-arithmetic.md §1.1) ----------------------------------------------------------

@dataclass(frozen=True)
class ParamBreakdown:
    embedding: int  # token embedding
    lm_head: int  # 0 when tied
    per_layer_linear: tuple[int, ...]  # linear (quantisable) params of each layer
    per_layer_other: tuple[int, ...]  # norms, biases, routers of each layer
    final_norm: int

    @property
    def linear(self) -> int:
        return sum(self.per_layer_linear)

    @property
    def total(self) -> int:
        return self.embedding + self.lm_head + self.linear + sum(self.per_layer_other) + self.final_norm


def _attention_params(f: ModelFacts) -> tuple[int, int]:
    """(linear, other) attention parameters of one layer."""
    H, nH = f.hidden_size, f.num_attention_heads
    if f.is_mla:
        rope = f.qk_rope_head_dim or 0
        nope = f.qk_nope_head_dim if f.qk_nope_head_dim is not None else (f.dim_head or 0)
        v_dim = f.v_head_dim or nope
        q_dim = nH * (nope + rope)
        q = H * f.q_lora_rank + f.q_lora_rank * q_dim if f.q_lora_rank else H * q_dim
        kv = H * (f.kv_lora_rank + rope) + f.kv_lora_rank * nH * (nope + v_dim)
        o = nH * v_dim * H
        norms = (f.q_lora_rank or 0) + f.kv_lora_rank
        return q + kv + o, norms
    d, nKV = f.dim_head, f.kv_heads
    linear = H * nH * d + 2 * H * nKV * d + nH * d * H
    bias = nH * d + 2 * nKV * d if f.attention_bias else 0
    return linear, bias


def _mlp_params(f: ModelFacts, layer: int) -> tuple[int, int]:
    """(linear, other) MLP parameters of layer `layer` (dense, or MoE with router and shared experts)."""
    H = f.hidden_size
    dense_first = f.first_k_dense_replace or 0
    if not f.is_moe or layer < dense_first:
        return 3 * H * f.intermediate_size, 0
    expert_i = f.moe_intermediate_size or f.intermediate_size
    linear = f.num_experts * 3 * H * expert_i + 3 * H * (f.shared_expert_intermediate_size or 0)
    return linear, H * f.num_experts


def require_shape(f: ModelFacts) -> None:
    """Raise naming the fields the arithmetic still needs."""
    missing = f.missing_for_params()
    if missing or not f.has_attention_shape:
        raise ValueError("missing " + ", ".join(missing or ["head_dim / num_key_value_heads"]))


@lru_cache(maxsize=256)  # facts are immutable and hashed by identity; one model is counted once per run
def param_breakdown(f: ModelFacts) -> ParamBreakdown:
    require_shape(f)
    if f.is_compressed_attention:
        from gpustack_guard.memory import deepseek_v4

        return deepseek_v4.param_breakdown(f)
    H, V, L = f.hidden_size, f.vocab_size, f.num_hidden_layers
    attn_linear, attn_other = _attention_params(f)
    linear, other = [], []
    for layer in range(L):
        mlp_linear, mlp_other = _mlp_params(f, layer)
        linear.append(attn_linear + mlp_linear)
        other.append(attn_other + mlp_other + 2 * H)
    return ParamBreakdown(V * H, 0 if f.tie_word_embeddings else V * H, tuple(linear), tuple(other), H)


def active_params(f: ModelFacts) -> int:
    """Parameters touched per token (MoE: experts_per_tok of num_experts); compute only, never memory."""
    if not f.is_moe:
        return param_breakdown(f).total
    routed = replace(f, num_experts=f.num_experts_per_tok or 1)
    b = param_breakdown(routed)
    # the router still scores every expert
    return b.total + f.hidden_size * (f.num_experts - (f.num_experts_per_tok or 1)) * (
        f.num_hidden_layers - (f.first_k_dense_replace or 0))


# --- weight bytes (memory-arithmetic.md §1.2) -------------------------------------------------------------

UNQUANTISED_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


@dataclass(frozen=True)
class WeightLayout:
    """Bytes of the checkpoint split the way parallelism splits it."""

    per_layer: tuple[int, ...]
    embedding: int
    lm_head: int  # tied: 0 (vLLM and llama.cpp reuse the embedding)
    other: int  # final norm
    per_layer_replicated: tuple[int, ...] = ()  # the part of each layer every tensor-parallel rank holds whole
    unloaded: int = 0  # in the checkpoint but not loaded by default (multi-token-prediction layers)

    @property
    def total(self) -> int:
        return sum(self.per_layer) + self.embedding + self.lm_head + self.other

    def scaled(self, factor: float) -> "WeightLayout":
        return WeightLayout(tuple(int(x * factor) for x in self.per_layer), int(self.embedding * factor),
                            int(self.lm_head * factor), int(self.other * factor),
                            tuple(int(x * factor) for x in self.per_layer_replicated), int(self.unloaded * factor))


@lru_cache(maxsize=256)
def weight_layout(f: ModelFacts) -> WeightLayout:
    """Per-layer weight bytes. Measured total bytes (f.weight_bytes) rescale the computed layout."""
    if f.layer_weight_bytes:
        return WeightLayout(tuple(f.layer_weight_bytes), f.embedding_bytes or 0, f.output_bytes or 0, 0)
    layout = _computed_layout(f)
    checkpoint = layout.total + layout.unloaded  # a measured total includes layers not loaded by default (MTP)
    return layout.scaled(f.weight_bytes / checkpoint) if f.weight_bytes and checkpoint else layout


def _computed_layout(f: ModelFacts) -> WeightLayout:
    if f.is_compressed_attention:
        from gpustack_guard.memory import deepseek_v4

        require_shape(f)
        return deepseek_v4.weight_layout(f)
    b = param_breakdown(f)
    high = UNQUANTISED_BYTES.get(f.dtype or "bfloat16", 2)
    per_param = linear_bytes_per_param(f.quant_method, f.quant_bits, f.quant_group_size, high)
    per_layer = tuple(math.ceil(lin * per_param) + oth * high for lin, oth in zip(b.per_layer_linear,
                                                                                  b.per_layer_other))
    embed_bytes = b.embedding * high
    head_bytes = b.lm_head * high
    if f.quant_method and f.quant_method.startswith("gguf:"):
        # GGUF quantises embeddings and output too (q6_K output in *_K_M files); approximate with the file type.
        embed_bytes = math.ceil(b.embedding * per_param)
        head_bytes = math.ceil(b.lm_head * max(per_param, GGUF_TYPE_BYTES["q6_k"]))
    return WeightLayout(per_layer, embed_bytes, head_bytes, b.final_norm * high)


def weights_per_rank(facts: ModelFacts, tp: int, pp: int) -> int:
    """The heaviest rank: its stage's layers split over TP, except the parts every TP rank holds whole."""
    layout = weight_layout(facts)
    replicated = layout.per_layer_replicated or (0,) * len(layout.per_layer)
    if pp == 1:
        whole = sum(replicated)
        return math.ceil((layout.total - whole) / tp) + whole
    stage_layers = math.ceil(len(layout.per_layer) / pp)
    heaviest = sorted(zip(layout.per_layer, replicated), reverse=True)[:stage_layers]
    whole = sum(r for _, r in heaviest)
    edge = max(layout.embedding, layout.lm_head + layout.other)
    return math.ceil((sum(b for b, _ in heaviest) - whole + edge) / tp) + whole
