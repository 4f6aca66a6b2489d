"""The arithmetic against the public vectors of docs/memory-arithmetic.md (Table A of its sources) exactly,
the engines' budgets to the byte."""

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_configs, catalog_facts, catalog_key
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines.llamacpp import LlamaCppConfig, estimate_llamacpp
from gpustack_guard.core.memory.engines.sglang import default_fraction
from gpustack_guard.core.memory.engines.vllm import VllmConfig, capture_sizes, estimate_vllm
from gpustack_guard.core.memory.hfconfig import BadConfig, facts_from_config
from gpustack_guard.core.memory.kv import kv_bytes_per_token_layer
from gpustack_guard.core.memory.weights import active_params, param_breakdown, weight_layout
from gpustack_guard.core.units import GiB, MiB


def kv_per_token(name, tp=1, dtype=None):
    facts = catalog_facts(name)
    return kv_bytes_per_token_layer(facts, tp, dtype) * facts.num_hidden_layers


@pytest.mark.parametrize("name,params", [
    ("meta-llama/Llama-3.1-8B", 8_030_261_248),  # A1
    ("meta-llama/Llama-3.3-70B-Instruct", 70_553_706_496),  # A2
    ("Qwen/Qwen2.5-7B-Instruct", 7_615_616_512),  # A3 (qkv bias)
    ("mistralai/Mixtral-8x7B-v0.1", 46_702_792_704),  # A4 total
])
def test_table_a_parameter_counts(name, params):
    assert param_breakdown(catalog_facts(name)).total == params


@pytest.mark.parametrize("name,params", [
    ("Qwen/Qwen3-8B", 8_190_735_360),  # q_norm + k_norm: 2 x 128 per layer
    ("Qwen/Qwen3-30B-A3B", 30_532_122_624),
    ("google/gemma-2-2b", 2_614_341_888),  # four norms per layer
    ("google/gemma-2-9b", 9_241_705_984),
    ("google/gemma-2-27b", 27_227_128_320),
    ("google/gemma-3-1b-it", 999_885_952),  # four norms and q/k norms, text only
    ("google/gemma-3-4b-it", 4_300_079_472),  # + SigLIP tower and projector (Gemma3ForConditionalGeneration)
    ("google/gemma-3-12b-it", 12_187_325_040),
    ("google/gemma-3-27b-it", 27_432_406_640),
    ("bigcode/starcoder2-7b", 7_173_923_840),  # use_bias: q/k/v/o, c_fc/c_proj and LayerNorm biases
    ("tiiuae/falcon-7b-instruct", 6_921_720_704),  # one biased LayerNorm per parallel block, biased ln_f
    ("deepseek-ai/DeepSeek-V3", 671_026_419_200),  # noaux_tc: 256 correction biases in each of 58 MoE layers
    ("Qwen/Qwen1.5-MoE-A2.7B-Chat", 14_315_784_192),  # shared_expert_gate: Linear(2048, 1) in each of 24 layers
])
def test_norm_weights_give_the_published_totals(name, params):
    """The hub's safetensors totals: norms are a few hundred thousand parameters, counted to the parameter."""
    assert param_breakdown(catalog_facts(name)).total == params


VECTORS = Path(__file__).resolve().parents[3] / "benchmarks" / "vectors"
# config.json fields gsg reads, as published; the totals are the hub's counts
LAYERNORM_CONFIGS = {
    "gpt2": ({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "n_positions": 1024,
              "vocab_size": 50257}, 124_439_808),  # every projection and norm biased, 1,024 learned positions
    "EleutherAI/pythia-1b": ({"model_type": "gpt_neox", "hidden_size": 2048, "num_hidden_layers": 16,
                              "num_attention_heads": 8, "intermediate_size": 8192, "vocab_size": 50304,
                              "max_position_embeddings": 2048, "tie_word_embeddings": False}, 1_011_781_632),
    "microsoft/phi-2": ({"model_type": "phi", "hidden_size": 2560, "num_hidden_layers": 32, "num_attention_heads": 32,
                         "num_key_value_heads": 32, "intermediate_size": 10240, "vocab_size": 51200,
                         "max_position_embeddings": 2048, "tie_word_embeddings": False},
                        2_779_683_840),  # one LayerNorm per parallel block, a biased lm_head
    "EleutherAI/gpt-j-6b": ({"model_type": "gptj", "n_embd": 4096, "n_layer": 28, "n_head": 16, "n_positions": 2048,
                             "vocab_size": 50400, "tie_word_embeddings": False},
                            6_050_882_784),  # unbiased attention, biased MLP and lm_head
    "CohereForAI/c4ai-command-r-v01": (json.loads((VECTORS / "command-r-v01" / "config.json").read_text()),
                                       34_980_831_232),  # one LayerNorm per parallel block
}


@pytest.mark.parametrize("name", sorted(LAYERNORM_CONFIGS))
def test_layernorm_families_give_the_published_totals(name):
    config, params = LAYERNORM_CONFIGS[name]
    assert param_breakdown(facts_from_config(config, name)).total == params


def test_starcoder2_without_use_bias_keeps_its_layernorm_biases():
    config = catalog_configs()[catalog_key("bigcode/starcoder2-7b")][1]
    unbiased = param_breakdown(facts_from_config(config | {"use_bias": False}, "t")).total
    # per layer: q 4,608 + k 512 + v 512 + o 4,608, c_fc 18,432 + c_proj 4,608; 32 layers
    assert 7_173_923_840 - unbiased == 32 * (4608 + 512 + 512 + 4608 + 18432 + 4608)


def test_falcon_norms_per_block():
    base = {"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
            "vocab_size": 100}
    def norms(extra):
        return param_breakdown(facts_from_config(base | extra, "t")).per_layer_other[0]
    assert norms({"parallel_attn": True}) == 2 * 64  # one LayerNorm: weight and bias
    assert norms({"parallel_attn": False}) == 2 * 2 * 64
    assert norms({"new_decoder_architecture": True, "num_kv_heads": 2}) == 2 * 2 * 64  # ln_attn, ln_mlp
    assert norms({"new_decoder_architecture": True, "num_kv_heads": 2, "num_ln_in_parallel_attn": 1}) == 2 * 64


@pytest.mark.parametrize("model_type,extra,qk", [
    ("qwen3", {}, 2 * 16),  # per head: q_norm and k_norm over head_dim
    ("glm4_moe", {"use_qk_norm": True}, 2 * 16),
    ("glm4_moe", {}, 0),
    ("olmo2", {}, (4 + 2) * 16),  # over every head: heads x d and KV heads x d
    ("cohere", {"use_qk_norm": True}, (4 + 2) * 16),
    ("llama", {}, 0),
])
def test_qk_norm_parameters_per_layer(model_type, extra, qk):
    base = {"model_type": model_type, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
            "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100}
    plain = {"model_type": "llama"} | {k: v for k, v in base.items() if k != "model_type"}
    norms = 1 if model_type == "cohere" else 2
    other = param_breakdown(facts_from_config(base | extra, "t")).per_layer_other[0]
    assert other == qk + norms * 64 and param_breakdown(facts_from_config(plain, "t")).per_layer_other[0] == 2 * 64


def test_a_norm_count_beyond_eight_is_bad_config():
    base = {"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
            "vocab_size": 100, "new_decoder_architecture": True}
    with pytest.raises(BadConfig, match="'layer_norms' 9 is outside 0..8"):
        facts_from_config(base | {"num_ln_in_parallel_attn": 9}, "t")
    with pytest.raises(BadConfig, match="'layer_norms' must be a whole number"):
        facts_from_config(base | {"num_ln_in_parallel_attn": "2"}, "t")


def test_gguf_weights_leave_the_vision_tower_out():
    """A GGUF holds the language model; the SigLIP tower of Gemma-3-4B-it (419,816,304 parameters) is the mmproj."""
    facts = catalog_facts("google/gemma-3-4b-it")
    assert facts.vision_params == 419_816_304
    bf16 = weight_layout(facts)
    gguf_f16 = weight_layout(replace(facts, quant_method="gguf:f16"))
    assert bf16.total - gguf_f16.total == 2 * 419_816_304


def test_llama_style_attention_and_mlp_bias():
    """attention_bias biases q, k, v and o_proj in Llama's classes; mlp_bias gate, up and down."""
    base = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
            "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100}
    plain = param_breakdown(facts_from_config(base, "t")).total
    biased = param_breakdown(facts_from_config(base | {"attention_bias": True, "mlp_bias": True}, "t")).total
    # per layer: q 64 + k 32 + v 32 + o 64, then gate 128 + up 128 + down 64
    assert biased - plain == 2 * (64 + 32 + 32 + 64 + 128 + 128 + 64)


def test_a4_mixtral_active_parameters():
    assert active_params(catalog_facts("mistralai/Mixtral-8x7B-v0.1")) == 12_879_925_248  # "12.88 B"


def test_a1_a2_bf16_weights():
    assert weight_layout(catalog_facts("meta-llama/Llama-3.1-8B")).total == 2 * 8_030_261_248  # 14.96 GiB
    assert weight_layout(catalog_facts("meta-llama/Llama-3.3-70B-Instruct")).total == 2 * 70_553_706_496


@pytest.mark.parametrize("name,expected", [
    ("meta-llama/Llama-3.1-8B", 131_072), ("meta-llama/Llama-3.3-70B-Instruct", 327_680),
    ("Qwen/Qwen2.5-7B", 57_344), ("Qwen/Qwen2.5-14B", 196_608), ("Qwen/Qwen3-14B", 163_840),
    ("Qwen/Qwen1.5-7B", 524_288), ("meta-llama/Llama-3.1-405B", 516_096),
])
def test_a5_kv_bytes_per_token(name, expected):
    assert kv_per_token(name) == expected


@pytest.mark.parametrize("dtype,expected", [(None, 70_272), ("fp8", 35_136), ("fp8_ds_mla", 40_016)])
def test_a6_mla_kv_is_replicated_on_every_rank(dtype, expected):
    for tp in (1, 8, 16):
        assert kv_per_token("deepseek-ai/DeepSeek-V3", tp, dtype) == expected


@pytest.mark.parametrize("name,tp,expected", [
    ("meta-llama/Llama-3.1-8B", 8, 16_384), ("Qwen/Qwen3-235B-A22B", 4, 48_128),
    ("meta-llama/Llama-3.3-70B-Instruct", 16, 40_960),
    # 4 KV heads at TP8: one whole head per rank, 94 x 2 x 1 x 128 x 2 (V24: 11,423,138,508 B = 237,344 tokens)
    ("Qwen/Qwen3-235B-A22B", 8, 48_128), ("Qwen/Qwen3-30B-A3B", 8, 24_576),
])
def test_a7_kv_heads_replicate_past_tp(name, tp, expected):
    assert kv_per_token(name, tp) == expected


def test_a8_kv_for_128k_tokens():
    assert kv_per_token("meta-llama/Llama-3.1-8B") * 128_000 / GiB == 15.625
    assert kv_per_token("meta-llama/Llama-3.3-70B-Instruct") * 128_000 / GiB == 39.0625
    assert kv_per_token("meta-llama/Llama-3.1-405B") * 128_000 == 66_060_288_000  # 61.52 GiB


@pytest.mark.parametrize("name,tp,blocks", [("meta-llama/Llama-3.1-8B", 1, 2048), ("Qwen/Qwen2.5-7B", 1, 4681),
                                             ("meta-llama/Llama-3.1-8B", 8, 16384)])
def test_a9_v0_cpu_blocks(name, tp, blocks):
    assert (4 * GiB) // (16 * kv_per_token(name, tp)) == blocks


def test_a10_w8a8_and_a11_int4_weights():
    # W8A8: 68,451,041,280 linear params x 1 B + 2,102,665,216 others x 2 B (67.67 GiB; logged 67.7229 GB)
    w8a8 = replace(catalog_facts("meta-llama/Llama-3.1-70B"), quant_method="int8")
    assert weight_layout(w8a8).total == 68_451_041_280 + 2 * 2_102_665_216
    # AWQ g128: 28 layers x 233,046,016 linear x 133/256 B + 1,090,328,064 others x 2 B (5.19 GiB; logged 5.2032)
    awq = replace(catalog_facts("Qwen/Qwen2.5-7B"), quant_method="awq", quant_bits=4, quant_group_size=128)
    assert weight_layout(awq).total == 28 * 233_046_016 * 133 // 256 + 2 * 1_090_328_064


def test_a12_llamacpp_kv_cache_types():
    facts = catalog_facts("meta-llama/Llama-3.1-8B")
    for k, v, per_side_mib in (("f16", "f16", 512), ("q8_0", "q8_0", 272), ("q4_0", "q4_0", 144)):
        est = estimate_llamacpp(facts, [100 * GiB], LlamaCppConfig(ctx_size=8192, gpu_layers=33, cache_type_k=k,
                                                                   cache_type_v=v, flash_attn=True), version=None)
        assert est.kv_cache == 2 * per_side_mib * MiB  # all 32 blocks: -ngl 33 with the output layer


def test_a12_quantised_v_without_flash_attention_falls_back_to_f16():
    facts = catalog_facts("meta-llama/Llama-3.1-8B")
    est = estimate_llamacpp(facts, [100 * GiB], LlamaCppConfig(ctx_size=8192, gpu_layers=33, cache_type_k="q8_0",
                                                               cache_type_v="q8_0"), version=None)
    assert est.kv_cache == (272 + 512) * MiB
    assert "flash attention" in est.notes[0]


def test_a13_sglang_default_fraction():
    assert default_fraction(81_559 * MiB, 1, 1, 8192, 256) == 0.835
    assert default_fraction(24_564 * MiB, 1, 1, 2048, 24) == 0.847


# --- vLLM budget ------------------------------------------------------------------------------------------
RTX3090 = int(23.58 * GiB)


def test_b1_v0_blocks_and_concurrency():
    facts = catalog_facts("meta-llama/Llama-3.1-8B")
    est = estimate_vllm(facts, RTX3090, VllmConfig(gpu_memory_utilization=0.9, max_model_len=20000), version="0.6.4")
    assert est.requested == math.ceil(0.9 * RTX3090)
    # the checkpoint and the 32 MiB rope cos/sin cache (131,072 x 128 x 2 B; profiles.VLLM_ROPE_CACHE)
    assert est.weights == 16_060_522_496 + 131_072 * 128 * 2 == 16_094_076_928
    assert est.kv_capacity_tokens == 1953 * 16  # logged 1952 blocks: +0.05 % (+0.9 % without the rope cache)
    assert est.max_concurrency == 1953 / 1250 and est.verdict == "fits"  # blocks / ceil(20000/16); logged 1.56x


def test_b2_v0_rejects_29000():
    facts = catalog_facts("meta-llama/Llama-3.1-8B")
    est = estimate_vllm(facts, RTX3090, VllmConfig(gpu_memory_utilization=0.9, max_model_len=29000), version="0.6.4")
    assert est.verdict == "kv-below-max-model-len"
    assert est.estimated_max_model_len == est.kv_capacity_tokens == 23_648  # logged 23,648 (+1.1 % without rope)
    assert est.kv_needed == 1813 * 16 * 131_072  # ceil(29000 / 16) blocks of 16 tokens: 3,802,136,576 B


def test_capture_sizes_by_version_rule():
    assert capture_sizes("v1", 32, 2048) == [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64]
    assert len(capture_sizes("v1", 256, 8192)) == 51
    assert len(capture_sizes("v1-early", 1024, 8192)) == 67
    assert capture_sizes("v0", 4, 2048) == [1, 2, 4]
    # 0.10.1-0.11.0: every multiple of 8 up to min(2 x max_num_seqs, 512), capped by the batched tokens
    assert capture_sizes("v1-8step", 32, 2048) == [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64]
    assert len(capture_sizes("v1-8step", 1024, 8192)) == 67 and len(capture_sizes("v1-8step", 256, 8192)) == 67
    assert capture_sizes("v1-8step", 1024, 100) == [1, 2, 4] + list(range(8, 97, 8))


@pytest.mark.parametrize("version,piecewise,full", [("0.10.0", 35, 0), ("0.10.1", 67, 0), ("0.10.2", 67, 0),
                                                    ("0.11.0", 67, 35), ("0.11.1", 51, 35), ("0.14.0", 51, 35)])
def test_graph_counts_follow_each_releases_capture_sizes(version, piecewise, full):
    """config/__init__.py@v0.10.1..@v0.11.0 captures [1,2,4]+range(8, min(2 x seqs, 512)+1, 8) (llm-d#787 on
    0.11.0: '67/67' of each mode at 1,024 sequences); config/vllm.py@v0.11.1 steps by 16 from 256; the 0.9.1 row
    (0.10.0 not read) stops at max_num_seqs. Qwen3-8B at 256 sequences on an A6000."""
    est = estimate_vllm(catalog_facts("Qwen/Qwen3-8B"), A6000,
                        VllmConfig(max_model_len=8192, max_num_seqs=256, max_num_batched_tokens=8192), version=version)
    assert est.extra["cuda_graph_counts"] == {"piecewise": piecewise, "full": full}
    # the flat rule: 384 KiB per layer and graph, 36 layers, one graph per PIECEWISE size and per FULL one
    assert est.cuda_graphs == (piecewise + full) * 36 * 384 * 1024


A6000 = 49_140 * MiB


def test_field_notes_70b_default_length_rejected_with_estimate():
    facts = catalog_facts("meta-llama/Llama-3.3-70B-Instruct")
    est = estimate_vllm(facts, A6000, VllmConfig(tensor_parallel_size=4), version="0.11.0")
    assert est.max_model_len == 131_072 and est.verdict == "kv-below-max-model-len"
    assert est.kv_bytes_per_token == 81_920
    # 0.11 on a 48 GB card: 2048 tokens, 256 sequences; the peak is the sampler phase, FlashInfer's (14 B per
    # entry) in GPUStack's runner image
    assert est.activation == est.extra["sampler_peak"] == 256 * 128_256 * 14 + 2048 * 8192 * 2
    # an unnamed GPU is taken as NVLink-connected: from 0.11 the TP device group's NCCL communicator is made inside
    # the profile (profiles.VLLM_DEVICE_GROUP_NCCL), 780,140,544 B more non-torch per rank
    assert est.extra["device_group_nccl"] == P.NCCL_BUFFERS and est.estimated_max_model_len == 111_648
    # a bare pip install of 0.11.0 sorts (38 B per entry): VLLM_USE_FLASHINFER_SAMPLER=0 books it
    pip = estimate_vllm(facts, A6000, VllmConfig(tensor_parallel_size=4, flashinfer_sampler_env="0"), version="0.11.0")
    assert pip.activation == 256 * 128_256 * 38 + 2048 * 8192 * 2 and pip.estimated_max_model_len == 102_016


def test_field_notes_hardened_block_and_092():
    facts = catalog_facts("meta-llama/Llama-3.3-70B-Instruct")
    cfg = VllmConfig(tensor_parallel_size=4, gpu_memory_utilization=0.88, max_model_len=16384,
                     kv_cache_dtype="fp8", max_num_seqs=32)
    hardened = estimate_vllm(facts, A6000, cfg, version="0.11.0")
    assert hardened.verdict == "fits" and hardened.kv_bytes_per_token == 40_960
    assert hardened.kv_capacity_tokens == 205_968 and hardened.max_concurrency == 12_873 / 1_024
    # 11 PIECEWISE sizes up to 64 and 7 FULL ones up to 32 sequences: 18 graphs x 80 layers x 384 KiB
    assert hardened.cuda_graphs == 18 * 80 * 384 * 1024
    assert (hardened.headroom, hardened.headroom_needed) == (6_183_242_956, 4_175_597_404)  # enough
    tight = estimate_vllm(facts, A6000, replace(cfg, gpu_memory_utilization=0.92), version="0.11.0")
    # 0.92 leaves (1 - 0.92) x total, short of CUDA graphs + CUDA/NCCL context + allocator slack: GSG034 (the
    # sampler warm-up is its own term, GSG043)
    assert (tight.headroom, tight.headroom_needed) == (4_122_161_971, 4_278_651_453)


def test_cuda_graphs_move_into_the_budget_from_0_20():
    """0.20.0 turns VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS on: the graphs leave the headroom for the budget and
    are sized as profile_cudagraph_memory estimates them (51 PIECEWISE + 51 FULL graphs at 1024 sequences)."""
    facts = catalog_facts("meta-llama/Llama-3.1-8B")
    cfg = VllmConfig(gpu_memory_utilization=0.9, max_model_len=8192)
    old = estimate_vllm(facts, 80 * GiB, cfg, version="0.19.1")
    new = estimate_vllm(facts, 80 * GiB, cfg, version="0.20.0")
    per_graph = 32 * (90 * 1024 + 8 * 14_336)
    first = per_graph + 512 * (2 * 14_336 + 4 * 4096) * 2
    assert new.cuda_graphs == first + (50 + 50) * per_graph == 714_670_080
    # 0.19.1 computes the same estimate (profile_cudagraph_memory from 0.18.0) for the capture after the KV cache
    assert old.cuda_graphs == new.cuda_graphs and not old.extra["cuda_graphs_in_budget"]
    assert new.extra["cuda_graph_counts"] == {"piecewise": 51, "full": 51}
    # both run the Triton top-k/top-p sampler in the profile (from 0.17): the budget differs by the graphs alone
    assert old.extra["sampler_peak"] == new.extra["sampler_peak"] == 1024 * 128_256 * 14 + 8192 * 4096 * 2
    assert old.kv_available - new.kv_available == new.cuda_graphs
    assert old.headroom_needed - new.headroom_needed == old.cuda_graphs
    eager = estimate_vllm(facts, 80 * GiB, replace(cfg, enforce_eager=True), version="0.20.0")
    assert eager.cuda_graphs == 0 and eager.extra["cuda_graph_counts"] == {"piecewise": 0, "full": 0}


def test_defaults_follow_gpu_size_and_a100_exception():
    facts = catalog_facts("meta-llama/Llama-3.1-8B")
    h100 = estimate_vllm(facts, 80 * GiB, VllmConfig(max_model_len=8192), version="0.11.0", gpu_name="H100")
    a100 = estimate_vllm(facts, 80 * GiB, VllmConfig(max_model_len=8192), version="0.11.0", gpu_name="A100-SXM4-80GB")
    assert (h100.max_num_seqs, h100.extra["max_num_batched_tokens"]) == (1024, 8192)
    assert (a100.max_num_seqs, a100.extra["max_num_batched_tokens"]) == (256, 2048)


def test_b4_no_kv_memory():
    facts = replace(catalog_facts("Qwen/Qwen2.5-7B"), quant_method="gptq", quant_bits=4, quant_group_size=128)
    est = estimate_vllm(facts, 8 * GiB, VllmConfig(gpu_memory_utilization=0.7, max_model_len=4096), version="0.6.4")
    assert est.verdict == "no-kv-memory" and est.kv_capacity_tokens == 0


def test_gpustack_injected_length_is_an_explicit_policy():
    facts = catalog_facts("meta-llama/Llama-3.3-70B-Instruct")
    est = estimate_vllm(facts, A6000, VllmConfig(tensor_parallel_size=4, gpustack_max_model_len=True),
                        version="0.11.0")
    assert est.max_model_len == 8192 and est.verdict == "fits"


def test_sliding_window_requests_hold_only_the_window():
    facts = catalog_facts("google/gemma-3-27b-it")
    cfg = VllmConfig(gpu_memory_utilization=0.9, max_model_len=32768, max_num_seqs=16)
    hybrid = estimate_vllm(facts, 80 * GiB, cfg, version="0.11.0")
    full = estimate_vllm(replace(facts, sliding_window=None, sliding_window_layers=None), 80 * GiB, cfg,
                         version="0.11.0")
    # one request: 10 global layers hold 32,768 tokens; 52 window layers hold window-1 + 8192 batched (+1 block)
    window_blocks = math.ceil((1024 - 1 + 8192) / 16) + 1
    request = (10 * 32768 + 52 * window_blocks * 16) * 8192  # 8,192 B per token per layer (16 KV heads x 128 x 2 x 2)
    assert hybrid.kv_needed == request
    # vLLM's concurrency counts blocks per group: one full group of 10 layers, six window groups (52 padded to 60)
    blocks = hybrid.kv_available // (16 * 8192 * 10)
    assert hybrid.max_concurrency == blocks / (32768 // 16 + 6 * window_blocks)
    assert full.max_concurrency == (full.kv_available // (16 * 62 * 8192)) / (32768 // 16)


def test_window_layers_hold_two_steps_in_flight_from_0_26():
    # a second model for the in-flight rule (profiles.VLLM_PROFILES' 0.26.0 row): Gemma 3 27B's 52 window layers
    # page window-1 + 8,192 batched tokens (+1 block) at 0.25.x, window-1 + 2 x 8,192 from 0.26.0 (async scheduling:
    # VllmConfig.max_concurrent_batches, vllm/config/vllm.py@v0.26.0)
    facts = catalog_facts("google/gemma-3-27b-it")
    cfg = VllmConfig(gpu_memory_utilization=0.9, max_model_len=32768, max_num_seqs=16, max_num_batched_tokens=8192)
    per_layer_block = 16 * 8192  # 16 tokens x 8,192 B (16 KV heads x 128 x 2 x 2)
    for version, in_flight in (("0.25.1", 8192), ("0.26.0", 16384)):
        window_blocks = math.ceil((1024 - 1 + in_flight) / 16) + 1
        est = estimate_vllm(facts, 80 * GiB, cfg, version=version)
        assert est.kv_needed == (10 * 32768 // 16 + 52 * window_blocks) * per_layer_block, version
    assert [math.ceil((1024 - 1 + t) / 16) + 1 for t in (8192, 16384)] == [577, 1089]


def test_window_steps_in_flight_follow_max_concurrent_batches_from_0_26():
    # config/vllm.py@v0.26.0 .. @v0.34.0 max_concurrent_batches: async -> PP + 1 on the V2 runner, 2 at PP 1 on V1's
    # (PP under V1: PP); no async -> PP. Up to 0.25.x one step whatever the scheduling.
    from gpustack_guard.core.memory.engines.vllm import window_in_flight_steps

    def steps(version, runner, pp=1, async_scheduling=None, method=None):
        cfg = VllmConfig(pipeline_parallel_size=pp, async_scheduling=async_scheduling, speculative_method=method)
        return window_in_flight_steps(P.vllm_profile(version), cfg, runner, version)

    assert [steps("0.25.1", r, pp) for r in ("v1", "v2") for pp in (1, 2)] == [1, 1, 1, 1]
    assert [steps("0.26.0", "v2", pp) for pp in (1, 2, 4)] == [2, 3, 5]
    assert [steps("0.26.0", "v1", pp) for pp in (1, 2, 4)] == [2, 2, 4]
    assert [steps("0.26.0", r, pp, async_scheduling=False) for r in ("v1", "v2") for pp in (1, 2)] == [1, 2, 1, 2]
    # the default is off for a speculative method outside the EAGLE/MTP types up to 0.32.x (VLLM_ASYNC_DEFAULT_ROWS)
    assert [steps(v, "v2", method="ngram") for v in ("0.26.0", "0.32.0", "0.33.0")] == [1, 1, 2]
    assert [steps(v, "v2", method="mtp") for v in ("0.26.0", "0.32.0", "0.33.0")] == [2, 2, 2]
    assert steps("0.32.0", "v2", method="ngram", async_scheduling=True) == 2


def test_no_async_scheduling_pages_one_step_of_window_on_gemma3():
    # the flag as gsg reads it (core/memory/engine.py) moves a window model's one-request pages at 0.26.0
    from gpustack_guard.core.memory import engine
    from gpustack_guard.core.spec.model import Policy

    flags = {"max-model-len": "32768", "max-num-seqs": "16", "max-num-batched-tokens": "8192",
             "gpu-memory-utilization": "0.9"}
    on = engine.vllm_config(flags, Policy(), version="0.26.0")
    off = engine.vllm_config({**flags, "no-async-scheduling": None}, Policy(), version="0.26.0")
    assert (on.async_scheduling, off.async_scheduling) == (None, False)
    assert engine.vllm_config({**flags, "async-scheduling": None}, Policy(), version="0.26.0").async_scheduling
    facts = catalog_facts("google/gemma-3-27b-it")
    per_layer_block = 16 * 8192
    for cfg, in_flight in ((on, 16384), (off, 8192)):
        window_blocks = math.ceil((1024 - 1 + in_flight) / 16) + 1
        est = estimate_vllm(facts, 80 * GiB, cfg, version="0.26.0")
        assert est.kv_needed == (10 * 32768 // 16 + 52 * window_blocks) * per_layer_block


# --- llama.cpp -------------------------------------------------------------------------------------------
def test_field_notes_llamacpp_80_layers_rejected_60_pass():
    facts = replace(catalog_facts("meta-llama/Llama-3.3-70B-Instruct"), quant_method="gguf:q4_k_m")
    cfg = LlamaCppConfig(ctx_size=32768, parallel=4, batch_size=256, ubatch_size=256)
    # -ngl counts the output layer first in the newest builds (profiles.LLAMACPP_OUTPUT_FIRST_SINCE): 81 puts all 80
    # blocks on the GPU, 61 sixty of them
    full = estimate_llamacpp(facts, [A6000], replace(cfg, gpu_layers=81), version=None)
    sixty = estimate_llamacpp(facts, [A6000], replace(cfg, gpu_layers=61), version=None)
    assert full.verdict == "does-not-fit" and sixty.verdict == "fits"
    assert full.kv_cache == 10 * GiB and sixty.kv_cache == int(7.5 * GiB)
    # no-FA KQ scratch, its mask and six hidden-size rows
    assert full.activation == 32768 * 256 * 64 * 4 + 32768 * 256 * 4 + 6 * 8192 * 256 * 4


def test_policy_platform_footprint_replaces_the_default():
    from gpustack_guard.core.memory import engine
    from gpustack_guard.core.spec.model import Policy

    facts = replace(catalog_facts("Qwen/Qwen2.5-7B"), quant_method="gguf:q4_k_m")
    flags = {"ctx-size": "8192"}
    default = engine.estimate("llamacpp", facts, [(A6000, "")], flags, None, Policy())
    smaller = engine.estimate("llamacpp", facts, [(A6000, "")], flags, None, Policy(platform_footprint="250MiB"))
    assert default.requested - smaller.requested == 500 * MiB - 250 * MiB


def test_tensor_split_by_memory():
    facts = replace(catalog_facts("Qwen/Qwen2.5-32B"), quant_method="gguf:q4_k_m")
    est = estimate_llamacpp(facts, [A6000, 24_564 * MiB], LlamaCppConfig(ctx_size=8192, flash_attn=True),
                            version=None)
    layers = [d["layers"] for d in est.extra["per_device"]]
    # 65 slots (64 layers + output) at 48 : 24 GiB: j / 65 < 0.6667 puts slots 0..43 on the A6000
    assert layers == [44, 20] and sum(layers) == 64


@pytest.mark.parametrize("model,drop,named", [
    # DeepSeek-V3's first three layers are dense: their MLP needs intermediate_size even though it is MoE
    ("deepseek-ai/DeepSeek-V3", {"intermediate_size": None}, "intermediate_size"),
    ("deepseek-ai/DeepSeek-V4-Flash", {"num_experts": None}, "num_experts"),
    ("deepseek-ai/DeepSeek-V4-Flash", {"moe_intermediate_size": None}, "moe_intermediate_size"),
])
def test_a_missing_size_the_layout_needs_is_named_not_an_internal_error(model, drop, named):
    facts = replace(catalog_facts(model), **drop)
    with pytest.raises(ValueError, match=f"^missing .*{named}"):
        param_breakdown(facts)
