"""config.json of architectures that name their shape in other words than Llama's: the KV heads as vLLM's
get_total_num_kv_heads reads them, two-matrix MLPs, widths left to the transformers default, tied embeddings.
Parameter counts are exact sums of the layer shapes (the published sizes agree: Falcon-7B 6.92B, StarCoder
15.5B, MPT-7B 6.7B, ChatGLM3-6B 6.24B, Qwen-7B 7.7B, GPT-2 124M)."""

import pytest

from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.memory.kv import kv_bytes_per_token_layer
from gpustack_guard.core.memory.weights import param_breakdown

FALCON_7B = {"architectures": ["FalconForCausalLM"], "model_type": "falcon", "hidden_size": 4544,
             "num_attention_heads": 71, "num_hidden_layers": 32, "multi_query": True,
             "new_decoder_architecture": False, "vocab_size": 65024, "torch_dtype": "bfloat16"}
FALCON_40B = {"architectures": ["FalconForCausalLM"], "model_type": "falcon", "hidden_size": 8192,
              "num_attention_heads": 128, "num_kv_heads": 8, "num_hidden_layers": 60, "multi_query": True,
              "new_decoder_architecture": True, "vocab_size": 65024}
STARCODER = {"architectures": ["GPTBigCodeForCausalLM"], "model_type": "gpt_bigcode", "n_embd": 6144, "n_head": 48,
             "n_layer": 40, "n_inner": 24576, "n_positions": 8192, "multi_query": True, "vocab_size": 49152}
MPT_7B = {"architectures": ["MPTForCausalLM"], "model_type": "mpt", "d_model": 4096, "n_heads": 32, "n_layers": 32,
          "expansion_ratio": 4, "max_seq_len": 2048, "vocab_size": 50432, "attn_config": {"attn_impl": "triton"}}
CHATGLM3_6B = {"architectures": ["ChatGLMModel"], "model_type": "chatglm", "num_layers": 28, "hidden_size": 4096,
               "num_attention_heads": 32, "multi_query_attention": True, "multi_query_group_num": 2,
               "kv_channels": 128, "ffn_hidden_size": 13696, "padded_vocab_size": 65024, "seq_length": 8192,
               "add_qkv_bias": True, "tie_word_embeddings": False}
QWEN_7B = {"architectures": ["QWenLMHeadModel"], "model_type": "qwen", "hidden_size": 4096, "num_attention_heads": 32,
           "num_hidden_layers": 32, "intermediate_size": 22016, "vocab_size": 151936, "seq_length": 8192}
LLAMA_LIKE = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
              "num_hidden_layers": 32, "intermediate_size": 14336, "vocab_size": 128256}
GPT2 = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 768, "n_head": 12, "n_layer": 12,
        "n_positions": 1024, "vocab_size": 50257}


@pytest.mark.parametrize("config, kv_heads, kv_bytes_per_token_layer_, mlp_width, gated, tied", [
    (FALCON_7B, 1, 2 * 1 * 64 * 2, 4 * 4544, False, True),  # multi_query: one KV head
    (FALCON_40B, 8, 2 * 8 * 64 * 2, 4 * 8192, False, True),  # new decoder architecture: multi_query ignored
    (STARCODER, 1, 2 * 1 * 128 * 2, 24576, False, True),
    (MPT_7B, 32, 2 * 32 * 128 * 2, 16384, False, True),  # no kv_n_heads in attn_config: every head
    (CHATGLM3_6B, 2, 2 * 2 * 128 * 2, 13696, True, False),
    (QWEN_7B, 32, 2 * 32 * 128 * 2, 11008, True, False),  # QWenMLP(hidden, intermediate_size // 2)
    (GPT2, 12, 2 * 12 * 64 * 2, 3072, False, True),
    ({**LLAMA_LIKE, "model_type": "gemma2"}, 8, 2 * 8 * 128 * 2, 14336, True, True),  # Gemma2Config: tied
    ({**LLAMA_LIKE, "model_type": "starcoder2"}, 8, 2 * 8 * 128 * 2, 14336, False, True),
    (LLAMA_LIKE, 8, 2 * 8 * 128 * 2, 14336, True, False),  # LlamaConfig: untied
])
def test_shape_as_vllm_reads_it(config, kv_heads, kv_bytes_per_token_layer_, mlp_width, gated, tied):
    f = facts_from_config(config, "test")
    assert (f.kv_heads, f.intermediate_size, f.gated_mlp, f.tie_word_embeddings) == (kv_heads, mlp_width, gated,
                                                                                       tied)
    assert kv_bytes_per_token_layer(f, 1, None) == kv_bytes_per_token_layer_


@pytest.mark.parametrize("config, linear_per_layer, embedding, layers", [
    # Falcon-7B: fused QKV 4544 x (71 + 2) x 64, dense 4544^2, MLP 2 x 4544 x 18176
    (FALCON_7B, 4544 * 73 * 64 + 4544 * 4544 + 2 * 4544 * 18176, 65024 * 4544, 32),
    # learned positions sit beside the token embedding (8,192 x 6,144; GPT-2 1,024 x 768)
    (STARCODER, 6144 * (6144 + 2 * 128) + 6144 * 6144 + 2 * 6144 * 24576, (49152 + 8192) * 6144, 40),
    (MPT_7B, 4 * 4096 * 4096 + 2 * 4096 * 16384, 50432 * 4096, 32),
    (CHATGLM3_6B, 4096 * (4096 + 2 * 2 * 128) + 4096 * 4096 + 3 * 4096 * 13696, 65024 * 4096, 28),
    (QWEN_7B, 4 * 4096 * 4096 + 3 * 4096 * 11008, 151936 * 4096, 32),
    (GPT2, 4 * 768 * 768 + 2 * 768 * 3072, (50257 + 1024) * 768, 12),
])
def test_parameters_are_the_sum_of_the_layer_shapes(config, linear_per_layer, embedding, layers):
    f = facts_from_config(config, "test")
    b = param_breakdown(f)
    assert b.linear == linear_per_layer * layers
    assert b.embedding == embedding
    assert b.lm_head == (0 if f.tie_word_embeddings else embedding)


def test_published_sizes():
    billions = {name: round(param_breakdown(facts_from_config(c, "test")).total / 1e9, 2) for name, c in (
        ("falcon-7b", FALCON_7B), ("starcoder", STARCODER), ("mpt-7b", MPT_7B), ("chatglm3-6b", CHATGLM3_6B),
        ("qwen-7b", QWEN_7B))}
    # StarCoder's 15.5B holds its learned position embeddings (8192 x 6144) and biased projections and norms
    assert billions == {"falcon-7b": 6.92, "starcoder": 15.52, "mpt-7b": 6.65, "chatglm3-6b": 6.24, "qwen-7b": 7.72}


def test_a_stated_tie_wins_over_the_default():
    assert facts_from_config({**GPT2, "tie_word_embeddings": False}, "test").tie_word_embeddings is False
    assert facts_from_config({**QWEN_7B, "tie_word_embeddings": True}, "test").tie_word_embeddings is True


def test_mpt_kv_heads_from_attn_config():
    f = facts_from_config({**MPT_7B, "attn_config": {"kv_n_heads": 8}}, "test")
    assert f.kv_heads == 8


LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16,
         "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256}


@pytest.mark.parametrize("extra, named", [
    ({"model_type": "kimi_linear", "full_attention_interval": 4}, "model type 'kimi_linear'"),
    ({"model_type": "jamba", "attn_layer_period": 8}, "model type 'jamba'"),
    ({"model_type": "granitemoehybrid", "layer_types": ["mamba", "mamba", "attention"]}, "layer types 'mamba'"),
    ({"model_type": "lfm2", "layer_types": ["conv", "full_attention"]}, "layer types 'conv'"),
    ({"model_type": "nemotron_h", "hybrid_override_pattern": "M-M-M*-"}, "model type 'nemotron_h'"),
    ({"model_type": "acme_hybrid", "attn_layer_period": 8}, "'attn_layer_period' in its config"),
    ({"model_type": "acme_hybrid", "hybrid_override_pattern": "M*M*"}, "'hybrid_override_pattern' in its config"),
    ({"model_type": "acme_lightning", "attn_type_list": [0, 0, 1]}, "'attn_type_list' in its config"),
    ({"model_type": "mamba"}, "model type 'mamba'"),
])
def test_recurrent_layers_are_named(extra, named):
    assert facts_from_config({**LLAMA, **extra}, "test").recurrent_layers == named


@pytest.mark.parametrize("extra", [
    {},
    {"model_type": "gemma3_text", "layer_types": ["sliding_attention"] * 5 + ["full_attention"]},
    {"model_type": "gpt_oss", "layer_types": ["sliding_attention", "full_attention"]},
    {"model_type": "llama4_text", "layer_types": ["chunked_attention", "full_attention"]},
])
def test_attention_only_models_are_not_recurrent(extra):
    assert facts_from_config({**LLAMA, **extra}, "test").recurrent_layers is None


def test_a_recurrent_model_gets_no_verdict_not_a_guess():
    from gpustack_guard.core.memory.engine import estimate
    from gpustack_guard.core.memory.estimate import UnsupportedModel
    from gpustack_guard.core.spec.model import Policy

    # Gated DeltaNet hybrids (Qwen3-Next) are modelled for vLLM (test_gated_delta.py); Jamba's Mamba layers are not
    facts = facts_from_config({**LLAMA, "model_type": "jamba", "architectures": ["JambaForCausalLM"]}, "test")
    for family in ("vllm", "sglang"):
        with pytest.raises(UnsupportedModel, match=r"JambaForCausalLM has recurrent or linear-attention layers "
                                                   r"\(model type 'jamba'\)"):
            estimate(family, facts, [(80 * 2**30, "NVIDIA H100 80GB HBM3")], {}, "0.11.0", Policy())
