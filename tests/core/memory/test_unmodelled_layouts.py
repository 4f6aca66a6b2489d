"""Layouts gsg has no rule for are refused by name (hfconfig._unmodelled), never sized as a plain decoder.

Configs are the published ones' keys that carry each feature (sources beside each); the shape around them is a
small Llama so that only the named feature decides.
"""

import pytest

from gpustack_guard.core.memory.engine import estimate
from gpustack_guard.core.memory.estimate import UnsupportedModel
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.spec.model import Policy

LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 16,
         "num_attention_heads": 16, "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 32000,
         "max_position_embeddings": 8192}
H100 = [(80 * 2**30, "NVIDIA H100 80GB HBM3")]

# KinChow/model-structure-viewer @55f970b2 models/deepseek-ai/DeepSeek-V3.2/config.json (the keys that differ from
# V3.1's config beside it: architecture, model type and the indexer)
DEEPSEEK_V32 = {"architectures": ["DeepseekV32ForCausalLM"], "model_type": "deepseek_v32", "first_k_dense_replace": 3,
                "hidden_size": 7168, "index_head_dim": 128, "index_n_heads": 64, "index_topk": 2048,
                "intermediate_size": 18432, "kv_lora_rank": 512, "max_position_embeddings": 163840,
                "moe_intermediate_size": 2048, "moe_layer_freq": 1, "n_routed_experts": 256, "n_shared_experts": 1,
                "num_attention_heads": 128, "num_experts_per_tok": 8, "num_hidden_layers": 61,
                "num_key_value_heads": 128, "num_nextn_predict_layers": 1, "q_lora_rank": 1536, "qk_nope_head_dim": 128,
                "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 129280, "torch_dtype": "bfloat16",
                "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                                        "weight_block_size": [128, 128]}}
# index file 70302083267 (a Gemma 4 config.json, 60 layers, hidden 5376): full-attention layers have their own head
# size and KV heads, and keys serve as values there
GEMMA4_TEXT = {"model_type": "gemma4_text", "hidden_size": 5376, "intermediate_size": 21504, "num_hidden_layers": 60,
               "num_attention_heads": 32, "num_key_value_heads": 16, "num_global_key_value_heads": 4, "head_dim": 256,
               "global_head_dim": 512, "attention_k_eq_v": True, "num_kv_shared_layers": 0,
               "hidden_size_per_layer_input": 0, "sliding_window": 1024, "vocab_size": 262144,
               "max_position_embeddings": 262144, "tie_word_embeddings": True}

CASES = [
    # Gemma 3n / Gemma 4 E2B (index file 53158868777): the last 20 of 35 layers reuse earlier layers' KV
    ({"model_type": "gemma4_text", "num_kv_shared_layers": 20, "hidden_size_per_layer_input": 256},
     "per-layer KV sharing ('num_kv_shared_layers'); per-layer input embeddings ('hidden_size_per_layer_input')"),
    ({"model_type": "gemma3n_text", "altup_num_inputs": 4, "laurel_rank": 64},
     "AltUp and LAuReL blocks ('altup_num_inputs')"),
    # Llama 4's keys (transformers Llama4TextConfig; index file 55019529373) are read for Llama 4 only (test_llama4.py)
    ({"model_type": "acme_chunked", "attention_chunk_size": 8192, "interleave_moe_layer_step": 2},
     "chunked local attention ('attention_chunk_size'); MoE on every n-th layer only ('interleave_moe_layer_step')"),
    # ERNIE-4.5-21B-A3B (transformers Ernie4_5_MoeConfig) and Hunyuan-A13B (HunYuanMoEV1Config)
    ({"model_type": "ernie4_5_moe", "moe_num_experts": 64, "moe_layer_start_index": 1},
     "ERNIE-style MoE keys ('moe_num_experts', 'moe_layer_start_index')"),
    ({"model_type": "hunyuan_v1_moe", "num_experts": 64, "moe_topk": [8] * 16},
     "Hunyuan-style MoE keys ('moe_topk', 'num_shared_expert')"),
    ({"model_type": "hunyuan", "use_cla": True, "cla_share_factor": 2},
     "cross-layer KV sharing ('use_cla', 'cla_share_factor')"),
    # MiniMax-M3 (index file 62550018882): three dense layers, then MoE
    ({"model_type": "minimax_m3", "moe_layer_freq": [0, 0, 0] + [1] * 13}, "MoE on listed layers only ('moe_layer_freq')"),
    ({"model_type": "qwen2_moe", "num_experts": 8, "mlp_only_layers": [0, 1]},
     "dense layers among MoE ones ('mlp_only_layers')"),
    ({"model_type": "qwen2_moe", "num_experts": 8, "decoder_sparse_step": 2},
     "MoE on every n-th layer only ('decoder_sparse_step')"),
]


@pytest.mark.parametrize("extra, named", CASES)
def test_each_unmodelled_feature_is_named(extra, named):
    assert facts_from_config({**LLAMA, **extra}, "test").unmodelled == named


def test_deepseek_v32_indexer_cache_is_refused_for_every_engine():
    """vLLM keeps the lightning indexer's keys in their own per-token cache beside the MLA latent; gsg models that
    only for DeepSeek-V4's compressed layout (compress_ratios), so V3.2 gets no verdict rather than V3's number."""
    facts = facts_from_config(DEEPSEEK_V32, "catalog-test:DeepSeek-V3.2")
    assert facts.unmodelled == "a sparse-attention indexer with its own per-token key cache ('index_topk')"
    for family in ("vllm", "sglang"):
        with pytest.raises(UnsupportedModel, match=r"DeepseekV32ForCausalLM has a sparse-attention indexer with its "
                                                   r"own per-token key cache \('index_topk'\): gsg has no rule for it"):
            estimate(family, facts, H100, {}, "0.11.0", Policy())


def test_gemma4_full_attention_heads_without_layer_types_are_refused():
    """Gemma 4's own full-attention shape is modelled (test_gemma4.py) where layer_types places those layers."""
    config = {"model_type": "gemma4", "architectures": ["Gemma4ForConditionalGeneration"], "audio_config": None,
              "text_config": GEMMA4_TEXT}
    facts = facts_from_config(config, "test")
    assert facts.unmodelled == "full-attention layers of their own shape without 'layer_types' to place them"
    with pytest.raises(UnsupportedModel, match="Gemma4ForConditionalGeneration has full-attention layers of their own"):
        estimate("vllm", facts, H100, {}, "0.19.0", Policy())


def test_an_audio_tower_is_refused():
    assert facts_from_config({**LLAMA, "audio_config": {"model_type": "gemma3n_audio"}}, "t").unmodelled \
        == "an audio encoder ('audio_config')"


@pytest.mark.parametrize("extra", [
    {"moe_layer_freq": 1},  # DeepSeek-V3/V3.1, Kimi-K2: MoE on every layer past first_k_dense_replace
    {"moe_layer_freq": [1, 1, 1]},
    {"interleave_moe_layer_step": 1},
    {"mlp_only_layers": [], "decoder_sparse_step": 1},  # Qwen3-MoE as published
    {"num_kv_shared_layers": 0, "hidden_size_per_layer_input": 0, "audio_config": None},  # Gemma 4 31B's zeros
    {"cla_share_factor": 1, "use_cla": False},
    {"index_topk": 512, "compress_ratios": [0, 4, 128]},  # DeepSeek-V4: modelled (deepseek_v4.py)
])
def test_features_switched_off_are_not_refused(extra):
    assert facts_from_config({**LLAMA, **extra}, "test").unmodelled is None
