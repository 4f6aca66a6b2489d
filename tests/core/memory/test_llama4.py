"""Llama 4 (Scout, Maverick): chunked local attention on three of four layers, MoE on every n-th layer, the vision
tower; what vLLM and SGLang keep for the chunked layers, per release."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines.sglang import SglangConfig, estimate_sglang
from gpustack_guard.core.memory.engines.vllm import VllmConfig, chunked_local_hybrid, estimate_vllm
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.memory.kv import window_pages
from gpustack_guard.core.memory.weights import active_params, param_breakdown
from gpustack_guard.core.units import GiB

SCOUT = "meta-llama/Llama-4-Scout-17B-16E-Instruct"
MAVERICK = "meta-llama/Llama-4-Maverick-17B-128E-Instruct"
H100 = "NVIDIA H100 80GB HBM3"
H200 = "NVIDIA H200"
GPU = {SCOUT: (80 * GiB, H100), MAVERICK: (141 * GiB, H200)}  # Maverick's 800 GB of bf16 weights need H200s at TP 8


@pytest.mark.parametrize("model, moe_layers, total, active", [
    # 48 MoE layers of 16 experts (interleave_moe_layer_step 1); 17B active
    (SCOUT, 48, 108_641_793_536, 18_044_581_376),
    # 24 MoE layers of 128 experts between 24 dense ones of intermediate_size_mlp (step 2); "400B", 17B active
    (MAVERICK, 24, 401_583_781_376, 18_056_500_736),
])
def test_layers_and_parameters(model, moe_layers, total, active):
    f = catalog_facts(model)
    assert (f.unmodelled, f.vision_unsupported) == (None, None)
    assert (f.attention_chunk_size, f.chunked_attention_layers, f.moe_layers) == (8192, 36, moe_layers)
    assert (f.intermediate_size, f.moe_intermediate_size, f.shared_expert_intermediate_size) == (16384, 8192, 8192)
    assert param_breakdown(f).total == total
    assert active_params(f) == active


def test_the_vision_tower_counts_as_mllama4_builds_it():
    """Per module (a public dump of Scout's parameters): patch 827,904, class 1,408, positions 812,416, pre/post
    LayerNorms 5,632, 34 layers of 23,807,872, adapter 23,068,672 + 16,777,216, projector 20,971,520."""
    assert catalog_facts(SCOUT).vision_params == (827_904 + 1_408 + 812_416 + 5_632 + 34 * 23_807_872
                                                  + 23_068_672 + 16_777_216 + 20_971_520)


def _text(**extra) -> dict:
    return {"model_type": "llama4_text", "hidden_size": 64, "num_hidden_layers": 6, "num_attention_heads": 4,
            "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 32, "intermediate_size_mlp": 96,
            "num_local_experts": 4, "num_experts_per_tok": 1, "vocab_size": 100, "attention_chunk_size": 16,
            "max_position_embeddings": 4096, **extra}


def test_no_rope_layers_beats_the_interval_and_the_step_places_the_experts():
    by_interval = facts_from_config(_text(interleave_moe_layer_step=3), "t")
    assert (by_interval.chunked_attention_layers, by_interval.moe_layers) == (5, 2)  # layers 3 (NoPE); 2 and 5 MoE
    assert [by_interval.is_moe_layer(i) for i in range(6)] == [False, False, True, False, False, True]
    listed = facts_from_config(_text(no_rope_layers=[1, 0, 1, 0, 1, 0], no_rope_layer_interval=2), "t")
    assert (listed.chunked_attention_layers, listed.moe_layers) == (3, 6)
    dense_mlp = 3 * 64 * 96
    moe_mlp = 4 * 3 * 64 * 32 + 3 * 64 * 32  # experts and the shared one
    per_layer = param_breakdown(by_interval).per_layer_linear
    assert per_layer[1] - per_layer[2] == dense_mlp - moe_mlp


def test_chunk_keys_outside_llama4_are_still_refused():
    f = facts_from_config({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 4,
                           "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
                           "attention_chunk_size": 16, "interleave_moe_layer_step": 2}, "t")
    assert f.unmodelled == ("chunked local attention ('attention_chunk_size'); "
                            "MoE on every n-th layer only ('interleave_moe_layer_step')")


def test_a_chunk_holds_chunk_plus_in_flight_pages_without_the_window_s_extra_one():
    """kv_cache_interface.py@v0.14.0 ChunkedLocalAttentionSpec: cdiv(min(chunk + batched, len), block); a sliding
    window cdiv(min(window - 1 + batched, len), block) + 1."""
    assert window_pages(8192, 16, 2048, 65536, chunked=True) == 640
    assert window_pages(8192, 16, 2048, 65536) == 641
    assert window_pages(8192, 16, 2048, 4000, chunked=True) == 250


def _vllm(model: str, version: str, tp: int, **cfg):
    config = VllmConfig(tensor_parallel_size=tp, max_model_len=65536, max_num_batched_tokens=2048, max_num_seqs=64)
    memory, name = GPU[model]
    return estimate_vllm(catalog_facts(model), memory, replace(config, **cfg), version=version, gpu_name=name)


@pytest.mark.parametrize("model, tp", [(SCOUT, 4), (MAVERICK, 8)])
def test_vllm_sizes_every_layer_at_full_length_until_0_14(model, tp):
    """VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE defaults to 0 up to 0.13.0: the manager is off and every
    chunked layer a full one (one group, 48 layers); from 0.14.0 it defaults to 1: 12 full + 36 chunked layers in
    four groups of 12."""
    layer = 2 * (8 // tp) * 128 * 2
    old = _vllm(model, "0.13.0", tp)
    assert any("36 chunked-attention layers at full length" in n for n in old.notes)
    blocks = old.kv_available // (16 * 48 * layer)
    assert (old.kv_capacity_tokens, old.kv_needed) == (blocks * 16, 48 * layer * 65536)
    new = _vllm(model, "0.14.0", tp)
    assert not any("chunked-attention" in n for n in new.notes)
    blocks = new.kv_available // (16 * 12 * layer)
    chunk_pages = math.ceil((8192 + 2048) / 16)
    assert new.kv_capacity_tokens == blocks // 4 * 16
    assert new.kv_needed == 12 * layer * 65536 + 36 * layer * 16 * chunk_pages
    assert new.max_concurrency == blocks / (65536 // 16 + 3 * chunk_pages)


def test_the_environment_and_an_eagle_draft_decide_over_the_default():
    assert [P.row_for("vllm", P.VLLM_CHUNKED_LOCAL_HYBRID, v)[0] for v in ("0.9.2", "0.10.0", "0.10.1.1",
                                                                          "0.13.0", "0.14.0")] == [
        False, True, False, False, True]
    # 0.10.0 has no variable yet: the manager is on for chunked layers whatever the env says
    assert chunked_local_hybrid(VllmConfig(chunked_local_hybrid_env="0"), "0.10.0")
    assert chunked_local_hybrid(VllmConfig(chunked_local_hybrid_env="1"), "0.11.0")
    assert not chunked_local_hybrid(VllmConfig(chunked_local_hybrid_env="0"), "0.20.0")
    assert not chunked_local_hybrid(VllmConfig(speculative_method="eagle3"), "0.20.0")
    on = _vllm(SCOUT, "0.11.0", 4, chunked_local_hybrid_env="1")
    assert on.kv_needed == _vllm(SCOUT, "0.14.0", 4).kv_needed
    assert _vllm(SCOUT, "0.14.0", 4, disable_hybrid_kv_cache_manager=True).kv_needed == 48 * 1024 * 65536



def _sglang(model: str, version: str, cfg: SglangConfig):
    memory, name = GPU[model]
    return estimate_sglang(catalog_facts(model), memory, cfg, version=version, gpu_name=name)


@pytest.mark.parametrize("model", [SCOUT, MAVERICK])
def test_sglang_gives_llama4_two_pools_from_0_5_8(model):
    """configs/model_config.py@v0.5.8 is_hybrid_swa_model lists Llama 4; get_hybrid_layer_ids makes its
    (i + 1) % 4 != 0 layers the SWA ones: full = T x 48 / (0.8 x 36 + 12) at 0.5.8 (the one pool's T)."""
    cfg = SglangConfig(tp_size=8, context_length=65536)
    one = _sglang(model, "0.5.7", cfg)
    assert "hybrid_swa_pool" not in one.extra
    two = _sglang(model, "0.5.8", cfg)
    swa = two.extra["hybrid_swa_pool"]
    assert (swa["full_layers"], swa["swa_layers"]) == (12, 36)
    assert two.kv_capacity_tokens == int(one.kv_capacity_tokens * 48 / (0.8 * 36 + 12))
    assert swa["swa_layer_tokens"] == int(two.kv_capacity_tokens * 0.8)
    off = _sglang(model, "0.5.8", replace(cfg, disable_hybrid_swa_memory=True))
    assert off.kv_capacity_tokens == one.kv_capacity_tokens


def test_figures_per_release():
    """The capacities each engine prints, Scout TP 4 on H100 80GB and Maverick TP 8 on H200, 65,536 tokens: vLLM
    0.13.0 (every layer full), 0.14.0 (hybrid, blocks over four groups) and 0.21.0 (concurrency x max length);
    SGLang 0.5.7 (one pool) and 0.5.11 (full-layer pool of the bytes split)."""
    vllm = {(m, v): _vllm(m, v, tp).kv_capacity_tokens
            for m, tp in ((SCOUT, 4), (MAVERICK, 8)) for v in ("0.13.0", "0.14.0", "0.21.0")}
    # each rank keeps the RoPE layers' cos/sin cache at max_position_embeddings rows (llama4.py get_rope, llama3
    # type): Scout's 10,485,760 x 128 x 2 B = 2.5 GiB, Maverick's 1,048,576 rows 0.25 GiB (profiles.VLLM_ROPE_CACHE)
    assert vllm == {(SCOUT, "0.13.0"): 367_792, (SCOUT, "0.14.0"): 366_944, (SCOUT, "0.21.0"): 1_110_277,
                    (MAVERICK, "0.13.0"): 1_352_256, (MAVERICK, "0.14.0"): 1_350_544,
                    (MAVERICK, "0.21.0"): 4_047_784}
    cfg = SglangConfig(tp_size=8, context_length=65536)
    sglang = {(m, v): _sglang(m, v, cfg).kv_capacity_tokens for m in (SCOUT, MAVERICK) for v in ("0.5.7", "0.5.11")}
    assert sglang == {(SCOUT, "0.5.7"): 860_792, (SCOUT, "0.5.11"): 1_012_696,
                      (MAVERICK, "0.5.7"): 175_393, (MAVERICK, "0.5.11"): 206_345}


def test_the_deployment_env_reaches_the_config():
    from gpustack_guard.core.memory.engine import vllm_config
    from gpustack_guard.core.spec.model import Policy

    cfg = vllm_config({}, Policy(), {P.VLLM_CHUNKED_LOCAL_HYBRID_ENV: "1"}, "0.11.0")
    assert cfg.chunked_local_hybrid_env == "1" and chunked_local_hybrid(cfg, "0.11.0")


def test_sglang_s_own_llama4_ratio_is_refused_not_guessed():
    """model_config.py@v0.5.7 is_hybrid_model: --hybrid-kvcache-ratio above 0 splits Llama 4's pool its own way."""
    from gpustack_guard.core.memory.engine import sglang_config
    from gpustack_guard.core.memory.estimate import UnsupportedModel

    cfg = sglang_config({"tp-size": "8", "hybrid-kvcache-ratio": "0.5"}, "0.5.7")
    with pytest.raises(UnsupportedModel, match="--hybrid-kvcache-ratio"):
        _sglang(SCOUT, "0.5.7", cfg)
    assert _sglang(SCOUT, "0.5.7", replace(cfg, hybrid_kvcache_ratio="0")).kv_capacity_tokens > 0
