"""Multimodal config.json: the vision tower and projector vLLM loads, counted from vision_config (vision.py).

The expected counts are the published totals (transformers' sum of parameters, the safetensors metadata) minus
the published text model, so a wrong shape anywhere in a tower moves them: Qwen2.5-VL-7B 8,292,166,656 =
Qwen2.5-7B 7,615,616,512 + 676,550,144 (a training log prints the visual part alone); Qwen2-VL-7B 8,291,375,616;
Qwen3-VL-8B 8,767,123,696 = Qwen3-8B 8,190,735,360 + 576,388,336; gemma-3-4b-it 4,300,079,472; Mistral-Small-3.1
24,011,361,280 = Mistral-Small-24B 23,572,403,200 + 438,958,080; llava-1.5-7b 7,063,427,072 in transformers,
one CLIP layer and the post-LayerNorm more than vLLM builds."""

import pytest
from support.vision_configs import QWEN2_VL_7B, QWEN3_VL_8B, QWEN25_VL_3B, QWEN25_VL_7B

from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.memory.weights import param_breakdown, weight_layout

GEMMA3_4B = {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3", "mm_tokens_per_image": 256,
             "torch_dtype": "bfloat16",
             "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
                             "num_hidden_layers": 34, "sliding_window": 1024,
                             "rope_scaling": {"factor": 8.0, "rope_type": "linear"}},
             "vision_config": {"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304,
                               "model_type": "siglip_vision_model", "num_attention_heads": 16,
                               "num_hidden_layers": 27, "patch_size": 14, "vision_use_head": False}}
MISTRAL_SMALL_31 = {"architectures": ["Mistral3ForConditionalGeneration"], "model_type": "mistral3",
                    "multimodal_projector_bias": False, "projector_hidden_act": "gelu", "spatial_merge_size": 2,
                    "vision_feature_layer": -1, "torch_dtype": "bfloat16",
                    "text_config": {"head_dim": 128, "hidden_size": 5120, "intermediate_size": 32768,
                                    "max_position_embeddings": 131072, "model_type": "mistral",
                                    "num_attention_heads": 32, "num_hidden_layers": 40, "num_key_value_heads": 8,
                                    "sliding_window": None, "vocab_size": 131072},
                    "vision_config": {"head_dim": 64, "hidden_size": 1024, "image_size": 1540,
                                      "intermediate_size": 4096, "model_type": "pixtral", "num_attention_heads": 16,
                                      "num_channels": 3, "num_hidden_layers": 24, "patch_size": 14}}
LLAVA_15_7B = {"architectures": ["LlavaForConditionalGeneration"], "model_type": "llava", "projector_hidden_act": "gelu",
               "vision_feature_layer": -2, "vision_feature_select_strategy": "default", "torch_dtype": "float16",
               "text_config": {"architectures": ["LlamaForCausalLM"], "max_position_embeddings": 4096,
                               "model_type": "llama", "torch_dtype": "float16", "vocab_size": 32064},
               "vision_config": {"hidden_size": 1024, "image_size": 336, "intermediate_size": 4096,
                                 "model_type": "clip_vision_model", "num_attention_heads": 16,
                                 "num_hidden_layers": 24, "patch_size": 14, "projection_dim": 768}}
CLIP_L_LAYER = 4 * 1024 * 1024 + 4 * 1024 + 2 * 1024 * 4096 + 4096 + 1024 + 4 * 1024  # attention, MLP, 2 LayerNorms


@pytest.mark.parametrize("config, vision", [
    (QWEN25_VL_7B, 8_292_166_656 - 7_615_616_512),
    (QWEN25_VL_3B, 3_754_622_976 - 3_085_938_688),
    (QWEN2_VL_7B, 8_291_375_616 - 7_615_616_512),
    (QWEN3_VL_8B, 8_767_123_696 - 8_190_735_360),
    (MISTRAL_SMALL_31, 24_011_361_280 - 23_572_403_200),
    # transformers' 7,063,427,072 less the text model (Llama-2-7B with 32,064 tokens) and what vLLM does not build:
    # the 24th CLIP layer (vision_feature_layer -2) and the post-LayerNorm (2 x 1024)
    (LLAVA_15_7B, 7_063_427_072 - 6_738_939_904 - CLIP_L_LAYER - 2 * 1024),
    # SigLIP-So400m/14 at 896 px (4,096 patches, 27 layers, post-LayerNorm, no head) + RMSNorm + 1152 x 2560
    (GEMMA3_4B, 419_816_304),
])
def test_vision_tower_and_projector_are_counted_exactly(config, vision):
    f = facts_from_config(config, "test")
    assert f.vision_params == vision and f.vision_unsupported is None
    assert param_breakdown(f).total - param_breakdown(facts_from_config(
        {k: v for k, v in config.items() if k != "vision_config"}, "test")).total == vision


@pytest.mark.parametrize("config, total", [
    (QWEN25_VL_7B, 8_292_166_656), (QWEN25_VL_3B, 3_754_622_976), (QWEN2_VL_7B, 8_291_375_616),
    (MISTRAL_SMALL_31, 24_011_361_280), (LLAVA_15_7B, 7_063_427_072 - CLIP_L_LAYER - 2 * 1024),
])
def test_whole_model_matches_the_published_total(config, total):
    assert param_breakdown(facts_from_config(config, "test")).total == total


def test_sparse_text_configs_take_the_transformers_defaults():
    llava = facts_from_config(LLAVA_15_7B, "test")  # LlamaConfig's 4096 / 11008 / 32 layers / 32 heads
    assert (llava.hidden_size, llava.intermediate_size, llava.num_hidden_layers, llava.kv_heads) == (4096, 11008, 32, 32)
    gemma = facts_from_config(GEMMA3_4B, "test")  # Gemma3TextConfig: 8 heads, 4 KV heads of 256, tied
    assert (gemma.num_attention_heads, gemma.kv_heads, gemma.dim_head, gemma.tie_word_embeddings, gemma.vocab_size) \
        == (8, 4, 256, True, 262_208)
    assert facts_from_config(QWEN25_VL_7B, "test").attention_bias  # Qwen2.5-VL's text model has QKV biases


@pytest.mark.parametrize("quant", [
    {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "modules_to_not_convert": ["visual"]},
    {"quant_method": "gptq", "bits": 4, "group_size": 128},
    {"quant_method": "fp8", "weight_block_size": [128, 128]},
])
def test_quantised_checkpoints_keep_the_vision_tower_at_bf16(quant):
    with_vision = facts_from_config({**QWEN25_VL_7B, "quantization_config": quant}, "test")
    text_only = facts_from_config({k: v for k, v in QWEN25_VL_7B.items() if k != "vision_config"}
                                  | {"quantization_config": quant}, "test")
    assert weight_layout(with_vision).total - weight_layout(text_only).total == 676_550_144 * 2


@pytest.mark.parametrize("config, named", [
    ({"model_type": "mllama", "architectures": ["MllamaForConditionalGeneration"],
      "text_config": {"model_type": "mllama_text_model", "hidden_size": 4096, "num_hidden_layers": 40,
                      "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
                      "vocab_size": 128256, "cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38]},
      "vision_config": {"model_type": "mllama_vision_model", "num_hidden_layers": 32,
                        "num_global_layers": 8}}, "model type 'mllama'"),
    ({**QWEN25_VL_7B, "model_type": "phi3_v", "vision_config": None, "img_processor": {"name": "clip_vision_model"}},
     "model type 'phi3_v'"),
    ({**QWEN25_VL_7B, "model_type": "acme_vl", "vision_config": {"model_type": "acme_vit", "depth": 24}},
     "model type 'acme_vl' with a vision_config of type 'acme_vit'"),
    ({**LLAVA_15_7B, "vision_config": {**LLAVA_15_7B["vision_config"], "model_type": "siglip_vision_model"}},
     "a llava vision tower of type 'siglip_vision_model'"),
])
def test_an_uncounted_vision_family_is_named(config, named):
    f = facts_from_config(config, "test")
    assert f.vision_unsupported is not None and f.vision_unsupported.startswith(named)
    assert f.vision_params == 0


def test_an_uncounted_vision_family_gets_no_verdict_not_a_text_only_guess():
    from gpustack_guard.core.memory.engine import estimate
    from gpustack_guard.core.memory.estimate import UnsupportedModel
    from gpustack_guard.core.spec.model import Policy

    facts = facts_from_config({**QWEN25_VL_7B, "model_type": "minicpmv", "architectures": ["MiniCPMV"]}, "test")
    for family in ("vllm", "sglang", "llamacpp"):
        with pytest.raises(UnsupportedModel, match=r"MiniCPMV is multimodal \(model type 'minicpmv' \(MiniCPM-V"):
            estimate(family, facts, [(24 * 2**30, "NVIDIA GeForce RTX 3090")], {}, None, Policy())


def test_text_only_configs_have_no_vision_part():
    facts = facts_from_config({k: v for k, v in QWEN25_VL_7B.items() if k != "vision_config"}, "test")
    assert (facts.vision_params, facts.vision_unsupported) == (0, None)
