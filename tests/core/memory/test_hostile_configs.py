"""A config.json in a pull request can hold anything: every value the arithmetic reads is type- and
range-checked when the facts are built (BadConfig, a GSG030), never a TypeError or a hang later."""

import pytest

from gpustack_guard.core.memory.hfconfig import BadConfig, facts_from_config

LLAMA = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 32,
         "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 8192}


@pytest.mark.parametrize("change, message", [
    ({"num_key_value_heads": "eight"}, "'num_key_value_heads' must be a whole number, not 'eight'"),
    ({"hidden_size": 4096.5}, "'hidden_size' must be a whole number, not 4096.5"),
    ({"hidden_size": float("inf")}, "'hidden_size' must be a whole number, not inf"),
    ({"num_hidden_layers": True}, "'num_hidden_layers' must be a whole number, not True"),
    ({"num_hidden_layers": 0}, "'num_hidden_layers' 0 is outside 1..1,000"),
    ({"num_hidden_layers": 1001}, "'num_hidden_layers' 1,001 is outside 1..1,000"),  # looped over per layer
    ({"vocab_size": -5}, "'vocab_size' -5 is outside 1..1,000,000,000"),
    ({"intermediate_size": 10**9 + 1}, "'intermediate_size' 1,000,000,001 is outside 1..1,000,000,000"),
    ({"model_type": "mpt", "expansion_ratio": "x", "intermediate_size": None}, "'expansion_ratio' must be a number"),
    ({"architectures": [7]}, "'architecture' must be a string, not 7"),
    ({"compress_ratios": [4] * 2001}, "'compress_ratios' must hold at most 2,000"),
    # multiplied while the facts are built: a string would be repeated (gigabytes), a bool taken as 1
    ({"n_shared_experts": "2", "moe_intermediate_size": 2**40}, "'n_shared_experts' must be a whole number, not '2'"),
    ({"model_type": "mpt", "intermediate_size": None, "expansion_ratio": "4"}, "'expansion_ratio' must be a number"),
    ({"hidden_size": "4096"}, "'hidden_size' must be a whole number, not '4096'"),
])
def test_a_hostile_value_is_named(change, message):
    with pytest.raises(BadConfig, match="^config:x.json: ") as caught:
        facts_from_config({**LLAMA, **change}, "config:x.json")
    assert message in str(caught.value)


@pytest.mark.parametrize("value", [[1, 2], "text", 3, None])
def test_a_config_that_is_not_an_object(value):
    with pytest.raises(BadConfig, match="config.json must be a JSON object"):
        facts_from_config(value, "config:x.json")


QWEN25_VL = {**LLAMA, "model_type": "qwen2_5_vl", "vision_config": {"depth": 32, "hidden_size": 1280,
             "intermediate_size": 3420, "out_hidden_size": 4096, "patch_size": 14, "spatial_merge_size": 2}}


@pytest.mark.parametrize("change, message", [
    ({"depth": "x"}, "vision_config 'depth' must be a whole number, not 'x'"),
    # a 0 patch or merge size divides by zero, a negative width books negative bytes: every size is above 0
    ({"patch_size": 0}, "vision_config 'patch_size' must be above 0, not 0"),
    ({"spatial_merge_size": 0}, "vision_config 'spatial_merge_size' must be above 0, not 0"),
    ({"patch_size": -14}, "vision_config 'patch_size' must be above 0, not -14"),
    ({"out_hidden_size": -4096}, "vision_config 'out_hidden_size' must be above 0, not -4096"),
    ({"temporal_patch_size": 0}, "vision_config 'temporal_patch_size' must be above 0, not 0"),
    ({"depth": 10**12}, "'vision_params' 19,"),
    ({"depth": "0", "intermediate_size": 2**31}, "vision_config 'depth' must be a whole number, not '0'"),
    ({"depth": True}, "vision_config 'depth' must be a whole number, not 'True'"),
])
def test_a_hostile_vision_config_is_named(change, message):
    config = {**QWEN25_VL, "vision_config": {**QWEN25_VL["vision_config"], **change}}
    with pytest.raises(BadConfig, match="^config:x.json: ") as caught:
        facts_from_config(config, "config:x.json")
    assert message in str(caught.value)


def test_the_limits_themselves_are_accepted():
    facts = facts_from_config({**LLAMA, "num_hidden_layers": 1000, "vocab_size": 10**9}, "config:x.json")
    assert (facts.num_hidden_layers, facts.vocab_size) == (1000, 10**9)


QWEN3_VL = {"model_type": "qwen3_vl", "text_config": {**LLAMA, "model_type": "qwen3_vl_text"},
            "vision_config": {"deepstack_visual_indexes": [8, 16, 24], "depth": 27, "hidden_size": 1152,
                              "intermediate_size": 4304, "out_hidden_size": 4096, "patch_size": 16,
                              "spatial_merge_size": 2, "temporal_patch_size": 2, "in_channels": 3}}


@pytest.mark.parametrize("change, message", [
    # the DeepStack features held beside the ViT blocks (vision.qwen3_vl_encoder) and their count
    ({"deepstack_visual_indexes": ["8"]}, "'deepstack_visual_indexes' must hold block indexes (whole numbers from "
                                          "0), not '8'"),
    ({"deepstack_visual_indexes": [-1]}, "'deepstack_visual_indexes' must hold block indexes (whole numbers from "
                                         "0), not '-1'"),
    ({"deepstack_visual_indexes": [True]}, "'deepstack_visual_indexes' must hold block indexes"),
    ({"deepstack_visual_indexes": 3}, "vision_config 'deepstack_visual_indexes' must be a list, not '3'"),
    ({"out_hidden_size": 0}, "vision_config 'out_hidden_size' must be above 0, not 0"),
    ({"depth": -27}, "vision_config 'depth' must be above 0, not -27"),
    # SGLang's ViT complexity (ModelFacts.vit_shape): layers x width^2, as a float
    ({"num_hidden_layers": 0}, "vision_config 'num_hidden_layers' must be above 0, not 0"),
    ({"num_hidden_layers": "24"}, "vision_config 'num_hidden_layers' must be a whole number, not '24'"),
    ({"num_hidden_layers": 10**400}, "vision_config 'num_hidden_layers' 1"),
    ({"num_hidden_layers": 10**9 + 1}, "vision_config 'num_hidden_layers' 1,000,000,001 is outside 1..1,000,000,000"),
    ({"hidden_size": -1152}, "vision_config 'hidden_size' must be above 0, not -1152"),
])
def test_a_hostile_qwen3_vl_vision_config_is_named(change, message):
    config = {**QWEN3_VL, "vision_config": {**QWEN3_VL["vision_config"], **change}}
    with pytest.raises(BadConfig, match="^config:x.json: ") as caught:
        facts_from_config(config, "config:x.json")
    assert message in str(caught.value)


def test_vision_limits_themselves_are_accepted():
    config = {**QWEN3_VL, "vision_config": {**QWEN3_VL["vision_config"], "num_hidden_layers": 10**9,
                                            "deepstack_visual_indexes": [0]}}
    facts = facts_from_config(config, "config:x.json")
    assert facts.vit_shape == (10**9, 1152)
    assert facts.vision_encoder is not None and facts.vision_encoder.output_streams == 2


@pytest.mark.parametrize("tokens", [0, -256])
def test_gemma3_image_tokens_below_one_are_named_not_divided_by(tokens):
    # mm_tokens_per_image is the dummy item's token count vLLM's encoder budget is divided by (encoder_profile)
    config = {**LLAMA, "model_type": "gemma3", "text_config": {**LLAMA, "model_type": "gemma3_text"},
              "vision_config": {"model_type": "siglip_vision_model"}, "mm_tokens_per_image": tokens}
    with pytest.raises(BadConfig, match="^config:x.json: ") as caught:
        facts_from_config(config, "config:x.json")
    assert f"'mm_tokens_per_image' must be above 0, not {tokens}" in str(caught.value)
