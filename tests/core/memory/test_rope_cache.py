"""vLLM's rotary cos/sin caches beside the weights (profiles.VLLM_ROPE_CACHE, engines/vllm.py rope_cache_bytes):
one cache per distinct rope table, its rows by rope type, its width the rotary dimension, in the model dtype."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines import vllm as V
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
from gpustack_guard.core.memory.facts import RopeTable
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.units import GiB, MiB
from gpustack_guard.core.verify.vector import VectorError, facts_from_json, facts_json

QWEN25_VL = {"architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
             "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
             "intermediate_size": 18944, "vocab_size": 152064, "max_position_embeddings": 128000,
             "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}, "torch_dtype": "bfloat16"}


def rope(facts, version):
    return V.rope_cache_bytes(facts, version)


def test_gemma3_27b_keeps_a_linear_x8_global_cache_and_a_local_one():
    """Gemma 3's global layers take config.rope_scaling (linear, factor 8: 131,072 x 8 rows), its sliding layers
    their own default rope at rope_local_base_freq (gemma3.py Gemma3Attention): two caches of 128 wide."""
    facts = catalog_facts("google/gemma-3-27b-it")
    assert facts.rope_tables == (RopeTable("linear", 131_072, 128, 8.0), RopeTable("default", 131_072, 128))
    assert rope(facts, "0.10.1") == (131_072 * 8 + 131_072) * 128 * 2 == 288 * MiB
    # the same rope type and length for both, but two bases: get_rope's key differs, so two caches (Gemma 3 1B)
    one_b = catalog_facts("google/gemma-3-1b-it")
    assert len(one_b.rope_tables) == 2 and rope(one_b, "0.8.2") == 2 * 32_768 * 256 * 2 == 32 * MiB


def test_the_cache_is_inside_the_weights_on_every_rank_and_stage():
    facts = catalog_facts("google/gemma-3-27b-it")
    cfg = VllmConfig(max_model_len=8192, tensor_parallel_size=2, pipeline_parallel_size=2)
    est = estimate_vllm(facts, 80 * GiB, cfg, version="0.10.1")
    bare = estimate_vllm(replace(facts, rope_tables=()), 80 * GiB, cfg, version="0.10.1")
    assert [s["weights"] - b["weights"] for s, b in zip(est.extra["stages"], bare.extra["stages"])] == \
        [288 * MiB, 288 * MiB]
    assert est.extra["rope_cache_bytes"] == 288 * MiB
    assert "vLLM keeps 288.0 MiB of rotary cos/sin caches beside the weights per rank (2 rope tables; " \
           "profiles.VLLM_ROPE_CACHE)" in est.notes
    assert est.kv_capacity_tokens < bare.kv_capacity_tokens


@pytest.mark.parametrize("version,expected", [
    ("0.6.6", 2 * (4096 + 131_072) * 96 * 2),  # short, long and their concatenation registered
    ("0.7.0", (4096 + 131_072) * 96 * 2),  # only long_short_cos_sin_cache
    ("0.30.0", (4096 + 131_072) * 96 * 2)])
def test_phi4_mini_longrope_keeps_short_and_long_rows_at_its_partial_width(version, expected):
    """Phi-4-mini: longrope (original 4,096 + 131,072 rows, llama.py copies the top-level original length into the
    rope dict), partial_rotary_factor 0.75 of a 128 head: 96 wide."""
    facts = catalog_facts("microsoft/Phi-4-mini-instruct")
    assert facts.rope_tables == (RopeTable("longrope", 131_072, 96, None, 4096),)
    assert rope(facts, version) == expected


@pytest.mark.parametrize("version,factor", [("0.7.1", 1), ("0.7.2", 4), ("0.23.0", 4)])
def test_mrope_caches_four_times_the_positions_from_0_7_2(version, factor):
    """Qwen2.5-VL's mrope ('type' mrope renamed to the default rope with sections): MRotaryEmbedding enlarges its
    cache to max_position x 4 from 0.7.2 (rotary_embedding.py@v0.7.2; @v0.7.1 has no such line)."""
    facts = facts_from_config(QWEN25_VL, "qwen2.5-vl-7b")
    assert facts.rope_tables == (RopeTable("default", 128_000, 128, mrope=True),)
    assert rope(facts, version) == 128_000 * factor * 128 * 2


def test_yarn_caches_the_original_length_times_the_factor_and_gpt_oss_keeps_fp32():
    v2_lite = catalog_facts("deepseek-ai/DeepSeek-V2-Lite")  # MLA: the rope part of the head, 64 wide
    assert v2_lite.rope_tables == (RopeTable("yarn", 163_840, 64, 40.0, 4096),)
    assert rope(v2_lite, "0.7.1") == 4096 * 40 * 64 * 2 == 20 * MiB
    gpt_oss = catalog_facts("openai/gpt-oss-20b")  # gpt_oss.py: get_rope(..., dtype=torch.float32)
    assert gpt_oss.architecture in P.VLLM_ROPE_FP32_ARCHITECTURES
    assert rope(gpt_oss, "0.10.1") == 4096 * 32 * 64 * 4 == 32 * MiB


@pytest.mark.parametrize("scaling,rows", [
    ({"type": "linear", "factor": 2.5}, 10_240),  # arange(4,096 x 2.5)
    ({"rope_type": "dynamic", "factor": 2.0}, 8192),
    ({"rope_type": "dynamic", "alpha": 1000}, 4096),  # DynamicNTKAlpha: max_position rows
    ({"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 1024}, 4096),
    ({"type": "yarn", "factor": 4.0}, 4096),  # no original length: max_position rows (vLLM itself needs one)
    ({"type": "su"}, 4096),  # longrope without an original length
    (None, 4096)])
def test_rope_types_and_their_rows(scaling, rows):
    config = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 2, "num_attention_heads": 32,
              "intermediate_size": 11008, "vocab_size": 32000, "max_position_embeddings": 4096,
              "torch_dtype": "float16", **({"rope_scaling": scaling} if scaling else {})}
    (table,) = facts_from_config(config, "t").rope_tables
    assert V.rope_cache_positions(table, P.vllm_rope_row("0.30.0")) == rows


def test_config_readings_per_family():
    base = {"hidden_size": 4096, "num_hidden_layers": 2, "num_attention_heads": 32, "intermediate_size": 11008,
            "vocab_size": 32000}
    # Transformers v5 rope_parameters per layer type: one table each, identical ones shared
    nested = facts_from_config({**base, "model_type": "llama", "max_position_embeddings": 8192, "rope_parameters": {
        "full_attention": {"rope_type": "default", "rope_theta": 1e6},
        "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
        "chunked": {"rope_type": "default", "rope_theta": 1e6}}}, "t")
    assert len(nested.rope_tables) == 2
    # ChatGLM rotates half the head over seq_length positions (chatglm.py partial_rotary_factor 0.5)
    assert catalog_facts("THUDM/glm-4-9b-chat").rope_tables == (RopeTable("default", 131_072, 64),)
    # Qwen3-Next's partial factor, Qwen3.5's in rope_parameters with M-RoPE sections
    assert catalog_facts("Qwen/Qwen3-Next-80B-A3B-Instruct").rope_tables == (RopeTable("default", 262_144, 64),)
    assert catalog_facts("Qwen/Qwen3.5-27B").rope_tables == (RopeTable("default", 262_144, 64, mrope=True),)
    # no rotary positions, or the length not in config.json: nothing booked
    assert facts_from_config({**base, "model_type": "opt", "max_position_embeddings": 2048}, "t").rope_tables == ()
    assert facts_from_config({**base, "model_type": "falcon", "alibi": True, "max_position_embeddings": 2048},
                             "t").rope_tables == ()
    assert catalog_facts("tiiuae/falcon-7b-instruct").rope_tables == ()  # no max_position_embeddings key
    # Gemma 4's caches are its own rule (gemma4_rope_caches): not counted twice
    gemma4 = catalog_facts("google/gemma-4-31B-it")
    assert gemma4.rope_tables == () and rope(gemma4, "0.23.0") == 0


def test_a_hostile_rope_value_is_ignored_not_multiplied():
    config = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 2, "num_attention_heads": 32,
              "intermediate_size": 11008, "vocab_size": 32000, "max_position_embeddings": 4096,
              "partial_rotary_factor": "0.5", "rotary_dim": True, "rope_scaling": {"type": "dynamic", "factor": True}}
    assert facts_from_config(config, "t").rope_tables == (RopeTable("dynamic", 4096, 128),)


def test_a_vector_keeps_its_rope_tables():
    facts = catalog_facts("google/gemma-3-27b-it")
    stored = facts_json(facts)
    assert stored["rope_tables"][0] == {"rope_type": "linear", "max_position": 131_072, "rotary_dim": 128,
                                        "factor": 8.0, "original_max_position": None, "mrope": False}
    assert facts_from_json(stored).rope_tables == facts.rope_tables
    with pytest.raises(VectorError, match="rope_tables has an unknown key 'base'"):
        facts_from_json({**stored, "rope_tables": [{**stored["rope_tables"][0], "base": 1}]})
    with pytest.raises(VectorError, match=r"whole numbers in 1\.\.1,000,000,000"):
        facts_from_json({**stored, "rope_tables": [{**stored["rope_tables"][0], "max_position": 10**12}]})
