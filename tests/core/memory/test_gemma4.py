"""Gemma 4's split attention: window layers with 256-wide heads, every sixth layer a full-attention one with its own
512-wide heads and KV heads (global_head_dim, num_global_key_value_heads, attention_k_eq_v).

Catalog facts are the published configs (google/gemma-4-31B-it and google/gemma-4-26B-A4B-it: index file 70302083267
for the text configs, 63475435511 for the shared vision tower). vLLM: gemma4.py and kv_cache_utils.py@v0.19.0
(unify_kv_cache_spec_page_size, _get_kv_cache_groups_uniform_page_size); SGLang: pool_configurator.py@v0.5.11
HybridSWAPoolConfigurator and utils/hf_transformers/config.py@v0.5.11.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_configs, catalog_facts, catalog_key
from gpustack_guard.core.memory.engine import estimate
from gpustack_guard.core.memory.engines.sglang import SglangConfig, estimate_sglang
from gpustack_guard.core.memory.engines.vllm import gemma4_rope_caches, gemma4_value_slices, pool
from gpustack_guard.core.memory.estimate import UnsupportedModel
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.memory.kv import KVShape, UnevenPages
from gpustack_guard.core.memory.weights import active_params, param_breakdown
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import GiB, MiB

G31, G26 = "google/gemma-4-31B-it", "google/gemma-4-26B-A4B-it"
H100 = (81_559 * MiB, "NVIDIA H100 80GB HBM3")
A100 = (81_050 * MiB, "NVIDIA A100-SXM4-80GB")
LONG = {"max-model-len": "32768"}


def test_the_full_attention_layers_keep_their_own_shape():
    f = catalog_facts(G31)
    assert f.unmodelled is None and f.vision_unsupported is None
    assert f.full_attention_layer_ids == (5, 11, 17, 23, 29, 35, 41, 47, 53, 59) and f.sliding_window_layers == 50
    assert f.layer_attention_shape(5) == (4, 512, True)  # k_eq_v: num_global_key_value_heads
    assert f.layer_attention_shape(4) == (16, 256, False)


def test_keys_as_values_take_the_global_heads_only_with_k_eq_v():
    """gemma4.py@v0.19.0 Gemma4DecoderLayer: num_global_key_value_heads only where attention_k_eq_v."""
    f = catalog_facts(G31)
    assert f.full_attention_kv_heads == 4
    text = {**_config(G31)["text_config"], "attention_k_eq_v": False}
    plain = facts_from_config({**_config(G31), "text_config": text}, "t")
    assert plain.layer_attention_shape(5) == (16, 512, False)


def _config(model: str) -> dict:
    return catalog_configs()[catalog_key(model)][1]


def test_parameters_count_each_layer_kind_and_the_vision_tower():
    # full layers: no v_proj (k_eq_v); q/k norms over their own head size; the vision tower is transformers'
    # Gemma4VisionModel (27 blocks of width 1152) and its projection onto the text width
    assert param_breakdown(catalog_facts(G31)).total == 31_273_088_816
    assert catalog_facts(G31).vision_params == 575_743_536
    # the MoE block runs beside the 2112-wide dense MLP on every layer, counted as an always-on shared expert
    moe = catalog_facts(G26)
    assert (moe.num_experts, moe.num_experts_per_tok, moe.shared_expert_intermediate_size) == (128, 8, 2112)
    assert param_breakdown(moe).total == 25_805_594_416 and active_params(moe) == 4_394_983_216


@pytest.mark.parametrize("model, tp, per_token, blocks", [
    (G31, 1, 50 * 16_384 + 10 * 8_192, (32, 16)),  # full layers' page half the window's: 32-token blocks
    (G31, 8, 60 * 2_048, (16, 16)),  # 16 / 8 = 2 window heads, max(1, 4 // 8) = 1 full head: equal pages
    (G26, 1, 25 * 8_192 + 5 * 4_096, (32, 16)),
])
def test_bytes_per_token_and_unified_block_sizes(model, tp, per_token, blocks):
    shape = KVShape(catalog_facts(model), tp, 1, None, 16, 8192)
    assert shape.bytes_per_token == per_token
    assert shape.block_sizes() == blocks


def test_vllm_pool_groups_the_layers_and_prints_the_smaller_block():
    """50 window + 10 full layers: groups of 10, five window groups and one full; 256 KiB pages. With 50 GiB free
    (vllm#43308 reports ~50 GB and ~55k tokens at v0.20.0 for a 31B AWQ on an A100):
    20,480 blocks // 6 groups x 16 = 54,608 tokens."""
    shape = KVShape(catalog_facts(G31), 1, 1, None, 16, 8192)
    tokens, concurrency, pool_bytes = pool(50 * GiB, shape, 16, 32768, None, 1.5)
    assert tokens == 54_608 and pool_bytes == 50 * GiB
    # a request: 32768 / 32 blocks in the full group, 5 x (ceil((1023 + 8192) / 16) + 1) in the window groups
    assert concurrency == 20_480 / (1024 + 5 * 577)
    # v0.21.0 prints concurrency x max_model_len
    assert pool(50 * GiB, shape, 16, 32768, None, 1.5, "concurrency-x-max-len")[0] == int(concurrency * 32768)


def test_without_the_hybrid_manager_every_layer_keeps_its_own_shape_at_full_length():
    shape = KVShape(replace(catalog_facts(G31), sliding_window=None, sliding_window_layers=None), 1, 1, None, 16, 8192)
    assert shape.bytes_per_token == 901_120
    assert pool(50 * GiB, shape, 16, 32768, None)[0] == 50 * GiB // (16 * 901_120) * 16


def test_pages_without_a_whole_ratio_are_refused():
    f = replace(catalog_facts(G31), full_attention_head_dim=384)  # 2 x 4 x 384 x 2 = 6,144 B against 16,384 B
    with pytest.raises(UnevenPages, match="cannot unify KV pages of 98304 and 262144 bytes"):
        KVShape(f, 1, 1, None, 16, 8192).block_sizes()


@pytest.mark.parametrize("model, tp, parts, version, slices", [
    # 10 full layers x 5376 x 4 KV heads x 512 x 2 B: the V slice QKVParallelLinear keeps beside the loaded K
    (G31, 1, [60], "0.23.0", [220_200_960]),
    (G31, 8, [60], "0.34.0", [55_050_240]),  # max(1, 4 // 8) = 1 KV head per rank, replicated
    (G31, 1, [30, 30], "0.19.0", [5 * 22_020_096, 5 * 22_020_096]),  # layers 5..29 and 35..59
    (G26, 1, [30], "0.21.0", [5 * 2816 * 2 * 512 * 2]),  # the MoE model: 5 full layers, 2 global KV heads
    (G31, 1, [60], "0.18.0", [0]),  # no Gemma 4 model (refused before the weights)
])
def test_vllm_keeps_a_value_slice_for_keys_as_values(model, tp, parts, version, slices):
    """gemma4.py@v0.19.0 .. @v0.34.0: the checkpoint's k_proj fills the K and the V slices of one qkv_proj."""
    assert gemma4_value_slices(catalog_facts(model), tp, parts, version) == slices
    text = {**_config(G31)["text_config"], "attention_k_eq_v": False}
    plain = facts_from_config({**_config(G31), "text_config": text}, "t")  # its own v_proj in the checkpoint
    assert gemma4_value_slices(plain, tp, parts, version) == [0] * len(parts)


@pytest.mark.parametrize("model, parts, version, caches", [
    # 262,144 rows x (256 window + 512 full head) x 2 B: the default and the proportional rope's cos/sin caches
    (G31, [60], "0.23.0", [402_653_184]),
    (G26, [30], "0.34.0", [402_653_184]),  # the MoE model: the same two rope shapes
    (G31, [5, 55], "0.19.0", [134_217_728, 402_653_184]),  # layers 0..4 are window layers only
    (G31, [60], "0.18.0", [0]),
])
def test_vllm_keeps_a_rope_cache_per_layer_kind(model, parts, version, caches):
    """gemma4.py@v0.19.0 .. @v0.34.0 get_rope(head_dim, config.max_position_embeddings) per layer kind; rotary
    base.py registers cos_sin_cache (max_position x rotary_dim, model dtype); gemma4_rope.py: rotary_dim = head."""
    assert gemma4_rope_caches(catalog_facts(model), parts, version) == caches
    # the rows follow max_position_embeddings (a 131,072-token config: half the bytes)
    assert gemma4_rope_caches(replace(catalog_facts(G31), max_position_embeddings=131_072), [60], "0.23.0") == \
        [201_326_592]


@pytest.mark.parametrize("model, gpu, version, tokens, concurrency", [
    (G31, H100, "0.20.0", 9_312, 0.8946),  # 9,952 before the V slices and rope caches
    (G31, A100, "0.21.0", 77_084, 2.3524),
    (G26, H100, "0.21.0", 267_584, 8.166),
    (G26, A100, "0.20.0", 99_024, 18.6722),
])
def test_vllm_estimates(model, gpu, version, tokens, concurrency):
    est = estimate("vllm", catalog_facts(model), [gpu], LONG, version, Policy())
    assert est.kv_capacity_tokens == tokens and round(est.max_concurrency, 4) == concurrency


@pytest.mark.parametrize("version, gpu, why", [
    ("0.18.0", H100, "vLLM 0.18.0 has no Gemma 4 model"),
    ("0.29.0", (183_359 * MiB, "NVIDIA B200"), "different FA4 kernel pages on this GPU"),
])
def test_vllm_refusals(version, gpu, why):
    with pytest.raises(UnsupportedModel, match=why):
        estimate("vllm", catalog_facts(G31), [gpu], LONG, version, Policy())
    with pytest.raises(UnsupportedModel, match="with an fp8 KV cache"):
        estimate("vllm", catalog_facts(G31), [H100], {**LONG, "kv-cache-dtype": "fp8"}, "0.33.0", Policy())


@pytest.mark.parametrize("model, gpu, version, full, swa", [
    (G31, H100, "0.5.11", 2_362, 1_889),
    (G26, H100, "0.5.20", 68_206, 54_564),  # 68,775 before the 100 MB multimodal reserve of 0.5.18+
    (G26, A100, "0.5.11", 66_159, 52_927),
])
def test_sglang_splits_by_each_kinds_bytes(model, gpu, version, full, swa):
    """cell = F x n_full + 0.8 x S x n_swa (31B: 8,192 x 10 + 0.8 x 16,384 x 50); full = available // cell."""
    facts = catalog_facts(model)
    est = estimate_sglang(facts, gpu[0], SglangConfig(context_length=32768), version=version, gpu_name=gpu[1])
    pools = est.extra["hybrid_swa_pool"]
    assert (pools["full_layer_tokens"], pools["swa_layer_tokens"]) == (full, swa)
    shape = KVShape(facts, 1, 1, None, 1, 1)
    assert est.kv_cache == shape.full_layer_bytes * full * 10 // (2 if model == G26 else 1) + \
        shape.layer_bytes * swa * shape.window_layers


def test_sglang_refusals():
    facts = catalog_facts(G31)
    with pytest.raises(UnsupportedModel, match="SGLang 0.5.10 has no Gemma 4 model"):
        estimate("sglang", facts, [H100], {}, "0.5.10", Policy())
    with pytest.raises(UnsupportedModel, match="on SM100"):
        estimate("sglang", facts, [(183_359 * MiB, "NVIDIA B200")], {}, "0.5.20", Policy())
    with pytest.raises(UnsupportedModel, match="multimodal config only"):
        estimate("sglang", replace(facts, architecture="Gemma4ForCausalLM"), [H100], {}, "0.5.20", Policy())
    with pytest.raises(UnsupportedModel, match="disable-hybrid-swa-memory"):
        estimate("sglang", facts, [H100], {"disable-hybrid-swa-memory": ""}, "0.5.20", Policy())
