"""MLA models' tensor-parallel split: the latent down-projections, their norms and the router are held whole by
every rank (weights._mla_replicated_bytes), so a rank's weights at TP n are (total - replicated) / n + replicated."""

from __future__ import annotations

import math

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory.weights import layers_on_rank, weight_layout, weights_per_rank

FP8_BLOCK = 1 + 4 / (128 * 128)  # a 128 x 128 block's fp32 scale beside its fp8 weights


@pytest.mark.parametrize("model, dense, moe, linear_bytes, exact", [
    # q_lora 1536, kv_lora 512 + rope 64 over 7,168 wide, fp8 blocks; 256 experts' bf16 gate on MoE layers
    ("deepseek-ai/DeepSeek-V3", 0, 3, FP8_BLOCK, (15_146_608, 18_816_624)),
    # no q_lora (q_proj is split by head): kv_a alone, bf16; 64 experts' gate
    ("deepseek-ai/DeepSeek-V2-Lite", 0, 1, 2, (2_360_320, 2_622_464)),
])
def test_the_latent_projections_norms_and_router_are_whole_on_every_rank(model, dense, moe, linear_bytes, exact):
    f = catalog_facts(model)
    H, q, kv, rope, E = f.hidden_size, f.q_lora_rank or 0, f.kv_lora_rank, f.qk_rope_head_dim, f.num_experts
    layout = weight_layout(f)
    own = math.ceil(H * (q + kv + rope) * linear_bytes) + (q + kv) * 2
    assert layout.per_layer_replicated[dense] == own
    assert layout.per_layer_replicated[moe] == own + H * E * 2
    assert (layout.per_layer_replicated[dense], layout.per_layer_replicated[moe]) == exact
    whole = sum(layout.per_layer_replicated)
    assert weights_per_rank(f, 8, 1) == math.ceil((layout.total - whole) / 8) + whole
    assert weights_per_rank(f, 1, 1) == layout.total


def test_a_model_without_mla_splits_every_layer():
    layout = weight_layout(catalog_facts("Qwen/Qwen3-8B"))
    assert layout.per_layer_replicated == ()


@pytest.mark.parametrize("model, whole", [("deepseek-ai/DeepSeek-V3", True), ("Qwen/Qwen3-8B", False)])
def test_layers_on_rank_splits_all_but_the_replicated_part(model, whole):
    layout = weight_layout(catalog_facts(model))
    layer, replicated = layout.per_layer[3], (layout.per_layer_replicated[3] if whole else 0)
    assert layers_on_rank(layout, 3, 4, 8) == math.ceil((layer - replicated) / 8) + replicated
    assert layers_on_rank(layout, 0, len(layout.per_layer), 1) == sum(layout.per_layer)
    assert layers_on_rank(layout, 2, 2, 8) == 0
