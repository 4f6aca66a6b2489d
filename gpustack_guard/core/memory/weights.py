"""Parameter counts and weight bytes of a model, split the way tensor and pipeline parallelism split them.

Dense and MoE transformers are counted here; models with compressed attention (DeepSeek-V4) by their own
module. docs/memory-arithmetic.md explains the formulas.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache

from gpustack_guard.core.memory.facts import ModelFacts, ParamBreakdown, WeightLayout
from gpustack_guard.core.memory.quant import EXPERTS_ONLY, GGUF_TYPE_BYTES, linear_bytes_per_param


def is_linear_layer(f: ModelFacts, layer: int) -> bool:
    """A Gated DeltaNet layer: all but every full_attention_interval-th (Qwen3NextConfig's layer_types)."""
    interval = f.full_attention_interval or 0
    return f.is_gated_delta and interval > 0 and (layer + 1) % interval != 0


def _gated_delta_params(f: ModelFacts) -> tuple[int, int]:
    """(linear, other) parameters of one Gated DeltaNet layer as qwen3_next.py builds it: in_proj_qkvz
    (q, k, v and the gate z), in_proj_ba (beta, alpha per value head), out_proj; the depthwise conv1d over
    q, k and v, dt_bias and A_log per value head, and the gated RMSNorm over one value head."""
    H = f.hidden_size
    nk, nv, dk, dv, kernel = (f.linear_num_key_heads, f.linear_num_value_heads, f.linear_key_head_dim,
                              f.linear_value_head_dim, f.linear_conv_kernel_dim)
    assert H and nk and nv and dk and dv and kernel  # missing_for_params (GATED_DELTA_SHAPE) checked them
    key_dim, value_dim = nk * dk, nv * dv
    linear = H * (2 * key_dim + 2 * value_dim) + H * 2 * nv + value_dim * H
    return linear, (2 * key_dim + value_dim) * kernel + 2 * nv + dv


def _mamba2_params(f: ModelFacts) -> tuple[int, int]:
    """(linear, other) parameters of one Mamba-2 mixer as vLLM's MambaMixer2 builds it: in_proj (gate, x, B, C and
    dt), out_proj; the depthwise conv1d over x, B and C with its bias, A, D and dt_bias per head, the gated norm."""
    H, heads, inner = f.hidden_size, f.mamba_num_heads, f.mamba_intermediate_size
    groups, state, kernel = f.mamba_n_groups, f.mamba_d_state, f.mamba_d_conv
    assert H and heads and inner and groups and state and kernel  # missing_for_params (MAMBA2_SHAPE) checked them
    conv = inner + 2 * groups * state
    return H * (inner + conv + heads) + inner * H, conv * kernel + conv + 3 * heads + inner


def _hybrid_layer_params(f: ModelFacts, layer: int) -> tuple[int, int, int, int]:
    """(mixer linear, mixer other, MLP linear, MLP other) of one layer of a Mamba-2 hybrid (facts.mamba_pattern)."""
    kind = (f.mamba_pattern or "")[layer]
    mixer = _mamba2_params(f) if kind == "M" else _attention_params(f) if kind == "*" else (0, 0)
    mlp = _mlp_params(f, layer) if f.mamba_mlp_every_layer or kind == "-" else (0, 0)
    return (*mixer, *mlp)


def _attention_params(f: ModelFacts, layer: int = -1) -> tuple[int, int]:
    """(linear, other) attention parameters of layer `layer` (-1: a full-attention layer)."""
    if layer >= 0 and is_linear_layer(f, layer):
        return _gated_delta_params(f)
    H, nH = f.hidden_size, f.num_attention_heads
    assert H is not None and nH is not None  # require_shape (missing_for_params) checked them
    if f.is_mla:
        assert f.kv_lora_rank is not None  # is_mla: a non-zero kv_lora_rank
        rope = f.qk_rope_head_dim or 0
        nope = f.qk_nope_head_dim if f.qk_nope_head_dim is not None else (f.dim_head or 0)
        v_dim = f.v_head_dim or nope
        q_dim = nH * (nope + rope)
        q = H * f.q_lora_rank + f.q_lora_rank * q_dim if f.q_lora_rank else H * q_dim
        kv = H * (f.kv_lora_rank + rope) + f.kv_lora_rank * nH * (nope + v_dim)
        o = nH * v_dim * H
        norms = (f.q_lora_rank or 0) + f.kv_lora_rank
        return q + kv + o, norms
    nKV, d, k_eq_v = f.layer_attention_shape(layer)  # Gemma 4's full layers: their own heads, no v_proj
    assert d is not None and nKV is not None  # require_shape (has_attention_shape) checked them
    # an output gate doubles q_proj (Qwen3-Next's attn_output_gate: query and gate per head)
    linear = H * nH * d * (2 if f.attention_output_gate else 1) + (1 if k_eq_v else 2) * H * nKV * d + nH * d * H
    bias = nH * d + 2 * nKV * d if f.attention_bias else 0
    bias += H if f.output_bias else 0
    sinks = nH if f.attention_sinks else 0
    qk_norm = {"per_head": 2 * d, "all_heads": (nH + nKV) * d}.get(f.qk_norm or "", 0)
    return linear, bias + sinks + qk_norm


def _mlp_params(f: ModelFacts, layer: int) -> tuple[int, int]:
    """(linear, other) MLP parameters of layer `layer` (dense, or MoE with router and shared experts)."""
    H = f.hidden_size
    assert H is not None  # require_shape checked it
    if not f.is_moe_layer(layer):
        assert f.intermediate_size is not None  # require_shape (missing_for_params) checked it
        bias = ((2 if f.gated_mlp else 1) * f.intermediate_size + H) if f.mlp_bias else 0
        return (3 if f.gated_mlp else 2) * H * f.intermediate_size, bias
    linear = _routed_expert_params(f, layer) + 3 * H * (f.shared_expert_intermediate_size or 0)
    assert f.num_experts is not None  # is_moe: more than one expert
    router = H * f.num_experts + (f.num_experts if f.router_bias else 0)
    router += H if f.shared_expert_gate and f.shared_expert_intermediate_size else 0
    if f.expert_bias:  # router bias, fused gate_up bias (2I) and down bias (H) of every expert
        expert_inter = f.moe_intermediate_size or f.intermediate_size
        assert expert_inter is not None  # missing_for_params requires one of them for MoE
        router += f.num_experts * (1 + 2 * expert_inter + H)
    return linear, router


def _routed_expert_params(f: ModelFacts, layer: int) -> int:
    """Linear parameters of the routed experts of one layer (what MoE-only quantisations like MXFP4 pack)."""
    if not f.is_moe_layer(layer):
        return 0
    expert_inter = f.moe_intermediate_size or f.intermediate_size
    # is_moe: experts; require_shape (missing_for_params): hidden_size and one of the intermediate sizes
    assert f.num_experts is not None and f.hidden_size is not None and expert_inter is not None
    return f.num_experts * 3 * f.hidden_size * expert_inter


def require_shape(f: ModelFacts) -> None:
    """Raise naming the fields the arithmetic still needs."""
    missing = f.missing_for_params()
    if missing or not f.has_attention_shape:
        raise ValueError("missing " + ", ".join(missing or ["head_dim / num_key_value_heads"]))


@lru_cache(maxsize=256)  # facts are immutable and hashed by identity; one model is counted once per run
def param_breakdown(f: ModelFacts) -> ParamBreakdown:
    require_shape(f)
    if f.is_compressed_attention:
        from gpustack_guard.core.memory import deepseek_v4  # DeepSeek-V4 only: imported when one is counted

        return deepseek_v4.param_breakdown(f)
    H, V, L = f.hidden_size, f.vocab_size, f.num_hidden_layers
    assert H is not None and V is not None and L is not None  # require_shape checked them
    norm = 2 * H if f.norm_bias else H  # one norm's weight (and bias)
    linear, other = [], []
    for layer in range(L):
        if f.mamba_pattern:
            attn_linear, attn_other, mlp_linear, mlp_other = _hybrid_layer_params(f, layer)
        else:
            attn_linear, attn_other = _attention_params(f, layer)
            mlp_linear, mlp_other = _mlp_params(f, layer)
        linear.append(attn_linear + mlp_linear)
        other.append(attn_other + mlp_other + f.layer_norms * norm)
    embedding = (V + f.position_embeddings) * H  # learned positions sit beside the token embedding
    if f.classifier_labels:
        lm_head = f.classifier_labels * H  # the score head replaces the vocabulary's output layer
    else:
        lm_head = (0 if f.tie_word_embeddings else V * H) + (V if f.lm_head_bias else 0)
    return ParamBreakdown(embedding, lm_head, tuple(linear), tuple(other), norm, f.vision_params)


def active_params(f: ModelFacts) -> int:
    """Parameters touched per token (MoE: experts_per_tok of num_experts); compute only, never memory."""
    if not f.is_moe:
        return param_breakdown(f).total
    routed = replace(f, num_experts=f.num_experts_per_tok or 1)
    b = param_breakdown(routed)
    # the router still scores every expert; is_moe: experts; param_breakdown required the shape
    assert f.num_experts is not None and f.hidden_size is not None and f.num_hidden_layers is not None
    return b.total + f.hidden_size * (f.num_experts - (f.num_experts_per_tok or 1)) * f.moe_layers


# --- weight bytes (docs/memory-arithmetic.md, "Weight bytes by quantisation") ------------------------------

UNQUANTISED_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


@lru_cache(maxsize=256)
def weight_layout(f: ModelFacts) -> WeightLayout:
    """Per-layer weight bytes. Measured total bytes (f.weight_bytes) rescale the computed layout."""
    if f.layer_weight_bytes:
        return WeightLayout(tuple(f.layer_weight_bytes), f.embedding_bytes or 0, f.output_bytes or 0, 0)
    layout = _computed_layout(f)
    factor = _measured_factor(f, layout)
    return layout if factor is None else layout.scaled(factor)


def _measured_factor(f: ModelFacts, layout: WeightLayout) -> float | None:
    """Measured total bytes over the computed checkpoint's, which rescales the layout; None without a measure."""
    checkpoint = layout.total + layout.unloaded  # a measured total includes layers not loaded by default (MTP)
    return f.weight_bytes / checkpoint if f.weight_bytes and checkpoint else None


def routed_expert_bytes(f: ModelFacts) -> tuple[int, ...]:
    """Bytes of each layer's routed experts in the computed layout (0 for a dense layer), rescaled as weight_layout
    rescales it; () where the layout is measured per tensor (a GGUF: facts.block_tensors) or has no experts."""
    if f.layer_weight_bytes or not f.is_moe or f.is_compressed_attention:
        return ()
    layout = _computed_layout(f)
    high = UNQUANTISED_BYTES.get(f.dtype or "bfloat16", 2)
    per_param = linear_bytes_per_param(f.quant_method, f.quant_bits, f.quant_group_size, high, f.quant_zero_point)
    routed = [math.ceil(_routed_expert_params(f, layer) * per_param) for layer in range(f.num_hidden_layers or 0)]
    factor = _measured_factor(f, layout)
    return tuple(routed) if factor is None else tuple(int(r * factor) for r in routed)


def _computed_layout(f: ModelFacts) -> WeightLayout:
    if f.is_compressed_attention:
        require_shape(f)
        from gpustack_guard.core.memory import deepseek_v4

        return deepseek_v4.weight_layout(f)
    b = param_breakdown(f)
    high = UNQUANTISED_BYTES.get(f.dtype or "bfloat16", 2)
    per_param = linear_bytes_per_param(f.quant_method, f.quant_bits, f.quant_group_size, high, f.quant_zero_point)
    per_layer: list[int] = []
    replicated: list[int] = []
    for layer, (linear, other) in enumerate(zip(b.per_layer_linear, b.per_layer_other)):
        kept = _kept_linear(f, layer, linear)
        per_layer.append(math.ceil((linear - kept) * per_param) + (kept + other) * high)
        if f.is_mla:
            replicated.append(_mla_replicated_bytes(f, layer, per_param if not kept else high, high))
    embed_bytes = b.embedding * high
    head_bytes = b.lm_head * high
    vision = b.vision
    if f.quant_method and f.quant_method.startswith("gguf:"):
        # GGUF quantises embeddings and output too (q6_K output in *_K_M files); approximate with the file type.
        embed_bytes = math.ceil(b.embedding * per_param)
        head_bytes = math.ceil(b.lm_head * max(per_param, GGUF_TYPE_BYTES["q6_k"]))
        vision = 0  # a GGUF holds the language model only; the vision tower is a separate mmproj file
    # The vision tower and projector stay at the checkpoint dtype whatever the text model's quantisation
    # (profiles.VISION_UNCOUNTED's note); they sit with the embedding on the first pipeline stage, split by TP
    # like it (vLLM builds the encoders from parallel linear layers).
    return WeightLayout(tuple(per_layer), embed_bytes + vision * high, head_bytes, b.final_norm * high,
                        tuple(replicated))


def _kept_linear(f: ModelFacts, layer: int, linear: int) -> int:
    """Linear parameters of a layer the checkpoint leaves at its dtype: skipped attention, or all but the routed
    experts for a quantisation of the experts only."""
    if (f.quant_method or "").lower() in EXPERTS_ONLY:
        return linear - _routed_expert_params(f, layer)
    skipped = f.quant_skips_linear_attention if is_linear_layer(f, layer) else f.quant_skips_attention
    return _attention_params(f, layer)[0] if skipped else 0


def quantised_linear_params(f: ModelFacts) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Per layer of the computed layout: the linear parameters the checkpoint quantises, of them the routed
    experts' and the part every tensor-parallel rank holds whole (MLA's latent down-projections)."""
    b = param_breakdown(f)
    quantised, routed, whole = [], [], []
    for layer, linear in enumerate(b.per_layer_linear):
        kept = _kept_linear(f, layer, linear)
        quantised.append(linear - kept)
        routed.append(_routed_expert_params(f, layer) if linear - kept else 0)
        whole.append(_mla_latent_params(f) if f.is_mla and not kept else 0)
    return tuple(quantised), tuple(routed), tuple(whole)


def _mla_latent_params(f: ModelFacts) -> int:
    """q_a and kv_a with the rope key: the MLA down-projections every tensor-parallel rank holds whole."""
    assert f.hidden_size is not None and f.kv_lora_rank is not None  # is_mla after require_shape
    return f.hidden_size * ((f.q_lora_rank or 0) + f.kv_lora_rank + (f.qk_rope_head_dim or 0))


def _mla_replicated_bytes(f: ModelFacts, layer: int, linear_bytes: float, high: int) -> int:
    """What every tensor-parallel rank of an MLA model holds whole in one layer: the latent down-projections
    (q_a and kv_a with the rope key, ReplicatedLinear in sglang models/deepseek_v2.py@v0.5.8.post1 and vLLM's
    fused_qkv_a_proj with disable_tp, deepseek_v2.py@v0.11.0), their two norms and the MoE router's gate."""
    H = f.hidden_size
    assert H is not None and f.kv_lora_rank is not None  # is_mla after require_shape
    latent = _mla_latent_params(f)
    norms = (f.q_lora_rank or 0) + f.kv_lora_rank
    router = H * f.num_experts if f.is_moe_layer(layer) and f.num_experts else 0
    return math.ceil(latent * linear_bytes) + (norms + router) * high


def layers_on_rank(layout: WeightLayout, start: int, stop: int, tp: int) -> int:
    """Bytes one TP rank holds of layers start..stop-1: split over TP, except the parts every rank holds whole."""
    whole = sum(layout.per_layer_replicated[start:stop]) if layout.per_layer_replicated else 0
    return math.ceil((sum(layout.per_layer[start:stop]) - whole) / tp) + whole


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
