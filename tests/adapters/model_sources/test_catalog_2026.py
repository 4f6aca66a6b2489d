"""Catalog entries of models deployed in 2026, each the published config.json's fields that gsg reads.

Sources (public repositories; "index file N" is a file of the public code index whose repository it does not name):
- KSV = KinChow/model-structure-viewer @55f970b2 models/<org>/<name>/config.json (vendored hub configs, copied whole
  less token ids, initialiser and routing-score fields the arithmetic does not read): DeepSeek-V3.1, Kimi-K2-Instruct,
  Kimi-K2-Instruct-0905, GLM-4.7.
- GLM-4.5-Air: index file 48221590695 (ms-swift log printing its Glm4MoeConfig); the same shape in index file
  71207657110 (GLM45_AIR_CONFIG).
- Phi-4-mini-instruct: index file 71463455676 (PHI4_MINI, "config.json, fields the planner reads"); the same in index
  file 67449186883 ("verified against the HF repo").
- SmolLM3-3B: index file 66655745670 (a full config.json fixture); the shape in 59415072007 ("authoritative copy of
  HuggingFaceTB/SmolLM3-3B/config.json").
- Qwen3-Coder-480B-A35B-Instruct: index file 6630329749 (vllm-kunlun guide pasting its config.json); the same in
  index file 54993165207.
- OLMo-2-0425-1B: index file 60588861793 ("the 0425-1B geometry, from its own config.json").

Every figure below is worked by hand from the config in the comment beside it, not read back from gsg.
"""

from dataclasses import replace

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory.kv import KVShape
from gpustack_guard.core.memory.weights import param_breakdown, weight_layout

# model -> (parameters as vLLM loads them (no MTP layer), KV bytes per token over all layers at TP 1 in bf16)
HAND = {
    # glm4_moe, 46 layers (1 dense, 45 MoE), H 4096, 96 q heads x 128, 8 KV heads, biased q/k/v, vocab 151552 untied:
    # embed+head 2 x 151552 x 4096 = 1,241,513,984; attention 4096 x (96+8+8) x 128 + 96 x 128 x 4096
    # + biases 12288+1024+1024 = 109,066,240 per layer, + 2 norms 8192; dense MLP 3 x 4096 x 10944 = 134,479,872;
    # MoE 128 x 3 x 4096 x 1408 + shared 3 x 4096 x 1408 + router 128 x 4096 + 128 bias = 2,232,418,432;
    # 1,241,513,984 + 46 x 109,074,432 + 134,479,872 + 45 x 2,232,418,432 + 4096 = 106,852,251,264.
    # KV: 46 x 2 x 8 x 128 x 2 = 188,416
    "zai-org/GLM-4.5-Air": (106_852_251_264, 46 * 2 * 8 * 128 * 2),
    # phi3, 32 layers, H 3072, 24 heads x 128, 8 KV heads, MLP 8192, vocab 200064 tied: 614,596,608 embedding
    # + 32 x (3072 x (24+8+8) x 128 + 3072 x 3072 + 3 x 3072 x 8192 + 2 x 3072) + 3072 = 3,836,021,760
    "microsoft/Phi-4-mini-instruct": (3_836_021_760, 32 * 2 * 8 * 128 * 2),
    # smollm3, 36 layers, H 2048, 16 heads x 128, 4 KV heads, MLP 11008, vocab 128256 tied: 262,668,288
    # + 36 x (2048 x (16+4+4) x 128 + 2048 x 2048 + 3 x 2048 x 11008 + 2 x 2048) + 2048 = 3,075,098,624
    "HuggingFaceTB/SmolLM3-3B": (3_075_098_624, 36 * 2 * 4 * 128 * 2),
    # olmo2, 16 layers, H 2048, 16 heads x 128 (MHA), MLP 8192, vocab 100352 untied, q/k norms over all heads:
    # 2 x 205,520,896 + 16 x (4 x 2048 x 2048 + 3 x 2048 x 8192 + 2 x 2048 + 2 x 2048) + 2048 = 1,484,916,736
    "allenai/OLMo-2-0425-1B": (1_484_916_736, 16 * 2 * 16 * 128 * 2),
    # qwen3_moe, 62 layers all MoE, H 6144, 96 heads x 128, 8 KV heads, 160 experts x 2560, no shared expert,
    # per-head q/k norms (2 x 128), vocab 151936 untied: 2 x 933,494,784 + 62 x (163,577,856 + 256 + 12,288
    # + 7,549,747,200 + 983,040) + 6144 = 480,154,875,392
    "Qwen/Qwen3-Coder-480B-A35B-Instruct": (480_154_875_392, 62 * 2 * 8 * 128 * 2),
    # kimi_k2 (DeepSeek-V3 layout, MLA), 61 layers (1 dense), H 7168, 64 heads, q_lora 1536, kv_lora 512, rope 64,
    # nope 128, v 128, 384 experts x 2048 + 1 shared, dense MLP 18432, vocab 163840 untied:
    # MLA linears 7168x1536 + 1536x64x192 + 7168x576 + 512x64x256 + 64x128x7168 = 101,122,048 + norms 1536+512
    # + 2 x 7168 = 101,138,432 per layer; MoE 384 x 3 x 7168 x 2048 + 3 x 7168 x 2048 + 384 x 7168 + 384
    # = 16,958,226,816; 2 x 1,174,405,120 + 61 x 101,138,432 + 3 x 7168 x 18432 + 60 x 16,958,226,816 + 7168
    # = 1,026,408,232,448. KV: 61 x (512 + 64) x 2 = 70,272
    "moonshotai/Kimi-K2-Instruct": (1_026_408_232_448, 61 * (512 + 64) * 2),
    "moonshotai/Kimi-K2-Instruct-0905": (1_026_408_232_448, 61 * (512 + 64) * 2),
    # deepseek_v3 shape unchanged from V3 (the catalog's V3 entry gives the same 671,026,419,200)
    "deepseek-ai/DeepSeek-V3.1": (671_026_419_200, 61 * (512 + 64) * 2),
    # glm4_moe with per-head q/k norms, 92 layers (3 dense), H 5120, 96 heads x 128, 8 KV heads, 160 experts x 1536:
    # 2 x 151552 x 5120 + 92 x (5120 x 112 x 128 + 12288 + 1024 + 1024 + 96 x 128 x 5120 + 2 x 5120 + 2 x 128)
    # + 3 x 3 x 5120 x 12288 + 89 x (160 x 3 x 5120 x 1536 + 3 x 5120 x 1536 + 160 x 5120 + 160) + 5120
    "zai-org/GLM-4.7": (2 * 151552 * 5120 + 92 * (5120 * 112 * 128 + 14336 + 96 * 128 * 5120 + 2 * 5120 + 2 * 128)
                        + 3 * 3 * 5120 * 12288 + 89 * (160 * 3 * 5120 * 1536 + 3 * 5120 * 1536 + 160 * 5120 + 160)
                        + 5120, 92 * 2 * 8 * 128 * 2),
}

BF16 = ["zai-org/GLM-4.5-Air", "microsoft/Phi-4-mini-instruct", "HuggingFaceTB/SmolLM3-3B", "allenai/OLMo-2-0425-1B",
        "Qwen/Qwen3-Coder-480B-A35B-Instruct", "zai-org/GLM-4.7"]


@pytest.mark.parametrize("name", sorted(HAND))
def test_parameters_and_kv_per_token_are_the_hand_figures(name):
    params, kv_per_token = HAND[name]
    facts = catalog_facts(name)
    assert facts is not None and facts.source == f"catalog:{name}"
    assert facts.unmodelled is None and facts.recurrent_layers is None
    assert param_breakdown(facts).total == params
    assert KVShape(facts, 1, 1, None, 16, 8192).bytes_per_token == kv_per_token


@pytest.mark.parametrize("name", BF16)
def test_bf16_checkpoints_weigh_two_bytes_a_parameter(name):
    facts = catalog_facts(name)
    assert facts is not None and facts.dtype == "bfloat16" and facts.quant_method is None
    assert weight_layout(facts).total == 2 * HAND[name][0]


def test_glm_4_7_has_per_head_qk_norms_and_glm_4_5_air_none():
    glm47, air = catalog_facts("zai-org/GLM-4.7"), catalog_facts("zai-org/GLM-4.5-Air")
    assert glm47 is not None and air is not None
    assert (glm47.qk_norm, air.qk_norm) == ("per_head", None)
    assert glm47.router_bias and air.router_bias  # glm4_moe routes noaux_tc by default


def test_kimi_k2_fp8_checkpoint_is_block_scaled_and_lighter_than_bf16():
    """Kimi-K2's checkpoint is fp8 with 128x128 block scales (like DeepSeek-V3's): about one byte a linear weight."""
    facts = catalog_facts("moonshotai/Kimi-K2-Instruct")
    assert facts is not None and (facts.quant_method, facts.quant_group_size) == ("fp8", 128 * 128)
    assert facts.is_mla and facts.num_experts == 384
    total = weight_layout(facts).total
    assert HAND["moonshotai/Kimi-K2-Instruct"][0] < total < 2 * HAND["moonshotai/Kimi-K2-Instruct"][0]
    # exactly, per routed expert of each of the 60 MoE layers (61 less first_k_dense_replace 1): gate, up and down
    # (7,168 x 2,048 each) at one fp8 byte a weight, one fp32 scale per 128 x 128 block, its bf16 router row and
    # its score-correction bias; 128 experts more than DeepSeek-V3's 256
    fewer = weight_layout(replace(facts, num_experts=256)).total
    assert total - fewer == 128 * 60 * (3 * 7168 * 2048 + 3 * (7168 // 128) * (2048 // 128) * 4 + 7168 * 2 + 2)


@pytest.mark.parametrize("asked, entry, length", [
    ("moonshotai/Kimi-K2-Instruct", "moonshotai/Kimi-K2-Instruct", 131072),
    ("moonshotai/Kimi-K2-Instruct-0905", "moonshotai/Kimi-K2-Instruct-0905", 262144),  # its own, longer context
    ("zai-org/GLM-4.5-Air-FP8", None, None),  # another checkpoint: its own config, not borrowed
    ("allenai/OLMo-2-0425-1B-Instruct", "allenai/OLMo-2-0425-1B", 4096),
    ("HuggingFaceTB/SmolLM3-3B-Base", "HuggingFaceTB/SmolLM3-3B", 65536),
    ("deepseek-ai/DeepSeek-V3.1", "deepseek-ai/DeepSeek-V3.1", 163840),
])
def test_names_resolve_to_their_entry(asked, entry, length):
    facts = catalog_facts(asked)
    if entry is None:
        assert facts is None
        return
    assert facts is not None and facts.source == f"catalog:{entry}"
    assert facts.max_position_embeddings == length
