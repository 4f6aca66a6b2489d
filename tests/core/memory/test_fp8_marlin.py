"""Block-FP8 weights vLLM runs through Marlin on GPUs without native FP8 (profiles.VLLM_FP8_MARLIN,
engines/vllm.py fp8_marlin_scales): Marlin keeps one scale per 128 weights in the model dtype where the checkpoint holds one
fp32 per 128 x 128 block, so each rank holds (2/128 - 4/16384) bytes more per quantised weight. A dense and a MoE
model, an Ampere, an Ada and a Hopper GPU, releases on both sides of 0.9.0 (Marlin takes block weights) and 0.29.0
(Ada's linear layers take it too)."""

from __future__ import annotations

import pytest

from gpustack_guard.core.memory import engine
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines import vllm as V
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
from gpustack_guard.core.memory.hfconfig import BadConfig, facts_from_config
from gpustack_guard.core.memory.terms import WEIGHTS, budget_terms
from gpustack_guard.core.memory.weights import weights_per_rank
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import GiB

FP8_BLOCK = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
QWEN3_8B_FP8 = {
    "model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 36,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288,
    "vocab_size": 151936, "tie_word_embeddings": False, "max_position_embeddings": 40960, "torch_dtype": "bfloat16",
    "quantization_config": FP8_BLOCK}
QWEN3_30B_A3B_FP8 = {
    "model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 48,
    "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 6144,
    "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8, "vocab_size": 151936,
    "tie_word_embeddings": False, "max_position_embeddings": 40960, "torch_dtype": "bfloat16",
    "quantization_config": FP8_BLOCK}
A100, L40S, H100 = "NVIDIA A100-SXM4-80GB", "NVIDIA L40S", "NVIDIA H100 80GB HBM3"

# per layer: q, k, v, o + gate, up, down (Qwen3-8B); attention, then 128 experts of 3 x 2048 x 768 (Qwen3-30B-A3B)
DENSE_LAYER = 4096 * 32 * 128 * 2 + 2 * 4096 * 8 * 128 + 3 * 4096 * 12288
MOE_ATTENTION = 2048 * 32 * 128 * 2 + 2 * 2048 * 4 * 128
MOE_EXPERTS = 128 * 3 * 2048 * 768


def extra(params: int) -> int:
    """bf16 scale per 128 weights, less the fp32 per 128 x 128 block the checkpoint layout already holds."""
    return params * 2 // 128 - params * 4 // 16384


def dense():
    return facts_from_config(QWEN3_8B_FP8, "test:qwen3-8b-fp8")


def moe():
    return facts_from_config(QWEN3_30B_A3B_FP8, "test:qwen3-30b-a3b-fp8")


def test_the_checkpoint_block_is_read_from_weight_block_size_and_a_malformed_one_is_one_line():
    assert dense().quant_block == (128, 128)
    unblocked = facts_from_config(QWEN3_8B_FP8 | {"quantization_config": FP8_BLOCK | {"weight_block_size": None}}, "t")
    assert (unblocked.quant_block, unblocked.quant_group_size) == (None, None)
    for block, shown in (([128], "[128]"), ([0, 128], "[0, 128]"), ([128, "128"], "[128, '128']"),
                         ([True, 128], "[True, 128]"), ("128x128", "'128x128'"), ([-128, -128], "[-128, -128]"),
                         ([128, 10**10], "[128, 10000000000]")):
        config = QWEN3_8B_FP8 | {"quantization_config": FP8_BLOCK | {"weight_block_size": block}}
        with pytest.raises(BadConfig) as caught:
            facts_from_config(config, "test:bad-block")
        assert str(caught.value) == ("test:bad-block: quantization_config.weight_block_size must be two whole numbers "
                                     f"from 1 to 1,000,000,000, not {shown}")


# (model, release, GPU) -> bytes per rank at TP 1: exact, from the shapes above
@pytest.mark.parametrize("release,gpu,dense_bytes,moe_bytes", [
    ("0.8.5", A100, 0, 0),  # fp8.py@v0.8.5 turns Marlin off for block weights, and its MoE has no Marlin path
    ("0.9.0", A100, extra(36 * DENSE_LAYER), extra(48 * (MOE_ATTENTION + MOE_EXPERTS))),
    ("0.9.0", L40S, 0, 0),  # 8.9 has native FP8
    ("0.9.0", H100, 0, 0),
    ("0.28.0", L40S, 0, 0),  # Marlin's kernel still refuses 8.9
    # 0.29.0: Ada's block linear layers take Marlin (CUTLASS block needs 9.0); its experts run Triton's fp8
    ("0.29.0", L40S, extra(36 * DENSE_LAYER), extra(48 * MOE_ATTENTION)),
    ("0.29.0", A100, extra(36 * DENSE_LAYER), extra(48 * (MOE_ATTENTION + MOE_EXPERTS))),
    ("0.34.0", H100, 0, 0),
])
def test_marlin_scale_bytes_per_model_release_and_gpu(release, gpu, dense_bytes, moe_bytes):
    for facts, expected in ((dense(), dense_bytes), (moe(), moe_bytes)):
        scales = V.fp8_marlin_scales(facts, 1, [facts.num_hidden_layers], release, gpu, None)
        assert (scales.per_stage if scales else (0,)) == (expected,)


def test_the_figures_themselves():
    """Qwen3-8B: 6,945,767,424 quantised weights -> 108,527,616 B of Marlin scales less 1,695,744 B of blocks."""
    assert extra(36 * DENSE_LAYER) == 106_831_872
    assert extra(48 * (MOE_ATTENTION + MOE_EXPERTS)) == 459_841_536  # 29,896,998,912 weights


def test_tensor_and_pipeline_parallel_split_the_scales_like_the_weights():
    facts = moe()
    tp2 = V.fp8_marlin_scales(facts, 2, [48], "0.14.0", A100, None)
    assert tp2.per_stage == (extra(48 * (MOE_ATTENTION + MOE_EXPERTS) // 2),)
    pp2 = V.fp8_marlin_scales(facts, 1, [20, 28], "0.14.0", A100, None)
    assert pp2.per_stage == (extra(20 * (MOE_ATTENTION + MOE_EXPERTS)), extra(28 * (MOE_ATTENTION + MOE_EXPERTS)))


def test_the_model_dtype_sizes_marlin_scales():
    """The scales are cast to layer.orig_dtype: float32 doubles them."""
    facts = facts_from_config(QWEN3_8B_FP8 | {"torch_dtype": "float32"}, "test:fp32")
    params = 36 * DENSE_LAYER
    assert V.fp8_marlin_scales(facts, 1, [36], "0.14.0", A100, None).per_stage == (params * 4 // 128 - params // 4096,)


@pytest.mark.parametrize("release,gpu,value,linear,experts", [
    ("0.14.0", H100, "1", True, True),  # fp8.py / the MoE oracle: use_marlin = ... or the variable, any CUDA GPU
    ("0.14.0", H100, " TRUE ", True, True),
    ("0.14.0", H100, "yes", False, False),  # envs.py: "1" or "true" only
    ("0.20.0", H100, "1", False, True),  # the block kernel list puts CUTLASS block (9.0+) before Marlin
    ("0.20.0", L40S, "1", True, True),
    ("0.29.0", L40S, "1", True, False),  # the variable is gone: Ada's linear layers by default, never its experts
    ("0.29.0", H100, "1", False, False),
])
def test_force_env_where_the_release_reads_it(release, gpu, value, linear, experts):
    scales = V.fp8_marlin_scales(moe(), 1, [48], release, gpu, value)
    assert ((scales.linear, scales.experts) if scales else (False, False)) == (linear, experts)


def test_no_term_on_rocm_or_below_the_marlin_minimum_or_for_other_fp8():
    assert V.fp8_marlin_scales(moe(), 1, [48], "0.14.0", "AMD Instinct MI300X", "1") is None  # is_rocm: never Marlin
    assert V.fp8_marlin_scales(dense(), 1, [36], "0.13.0", "Tesla T4", None) is None  # 7.5 < 8.0 (fp8 refused: GSG054)
    assert V.fp8_marlin_scales(dense(), 1, [36], "0.14.0", "Tesla T4", None).per_stage == (extra(36 * DENSE_LAYER),)
    per_tensor = facts_from_config(QWEN3_8B_FP8 | {"quantization_config": {"quant_method": "fp8"}}, "test:tensor")
    assert V.fp8_marlin_scales(per_tensor, 1, [36], "0.14.0", A100, None) is None  # one scale per row: negligible
    ct = {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {
        "type": "float", "num_bits": 8, "strategy": "block", "block_structure": [128, 128]}}}}
    compressed = facts_from_config(QWEN3_8B_FP8 | {"quantization_config": ct}, "test:ct")
    assert V.fp8_marlin_scales(compressed, 1, [36], "0.14.0", A100, None) is None  # W8A16Fp8 has no block strategy


def test_an_unknown_gpu_name_adds_nothing_and_says_so():
    note = V.fp8_marlin_scales(dense(), 1, [36], "0.14.0", "Acme Tensor Card", None)
    assert note == ("GPU 'Acme Tensor Card' unknown: block-FP8 scales counted as the checkpoint's; below compute "
                    "capability 8.9 vLLM runs these layers through Marlin, whose scales take 0.0154 B more per "
                    f"weight ({P.vllm_fp8_marlin_row('0.14.0').source})")
    assert V.fp8_marlin_scales(dense(), 1, [36], "0.14.0", "", None).startswith("GPU not named: ")
    assert V.fp8_marlin_scales(dense(), 1, [36], "0.8.5", "", None) is None  # no Marlin for block weights to speak of


def test_the_estimate_adds_the_scales_to_the_weights_names_them_and_notes_them():
    cfg = VllmConfig(max_model_len=8192)
    ampere = estimate_vllm(dense(), 80 * GiB, cfg, version="0.14.0", gpu_name=A100)
    hopper = estimate_vllm(dense(), 80 * GiB, cfg, version="0.14.0", gpu_name=H100)
    # beside the rotary cache every rank keeps (40,960 positions x 128 x 2 B: 10,485,760 B, profiles.VLLM_ROPE_CACHE)
    rope = V.rope_cache_bytes(dense(), "0.14.0")
    assert rope == 10_485_760
    assert ampere.weights == weights_per_rank(dense(), 1, 1) + rope + 106_831_872
    assert hopper.weights == weights_per_rank(dense(), 1, 1) + rope
    assert ampere.extra["fp8_marlin_scales"] == {"bytes": 106_831_872, "linear_layers": True, "moe_experts": False,
                                                 "source": P.vllm_fp8_marlin_row("0.14.0").source}
    assert hopper.extra["fp8_marlin_scales"] == {}
    assert (f"vLLM 0.14.0 runs the block-FP8 linear layers through Marlin on {A100} (no native FP8): its scales, one "
            "per 128 weights in the model dtype, add +0.10 GiB per rank to the weights") in "\n".join(ampere.notes)
    weights = {r.term: r for r in budget_terms(ampere)}[WEIGHTS]
    assert weights.rule.endswith("+fp8-marlin-scales") and P.vllm_fp8_marlin_row("0.14.0").source in weights.source
    assert not {r.term: r for r in budget_terms(hopper)}[WEIGHTS].rule.endswith("+fp8-marlin-scales")


def test_the_deployment_env_reaches_the_estimate():
    assert P.VLLM_FP8_MARLIN_ENV in engine.ENGINE_ENV  # the estimate's cache key sees it
    gpus = [(80 * GiB, H100)]
    flags = {"max-model-len": "8192"}
    forced = engine.estimate("vllm", moe(), gpus, flags, "0.14.0", Policy(), env={P.VLLM_FP8_MARLIN_ENV: "1"})
    plain = engine.estimate("vllm", moe(), gpus, flags, "0.14.0", Policy())
    assert forced.weights - plain.weights == extra(48 * (MOE_ATTENTION + MOE_EXPERTS))


def test_mla_latents_every_rank_holds_whole_carry_their_scales_whole():
    """DeepSeek's fused_qkv_a_proj (q_a, kv_a with the rope key) is replicated across tensor-parallel ranks, and
    quantised: its Marlin scales sit whole on every rank, the rest split."""
    config = {"model_type": "deepseek_v3", "architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 2048,
              "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 16, "q_lora_rank": 1536,
              "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128,
              "intermediate_size": 10944, "moe_intermediate_size": 1408, "n_routed_experts": 8,
              "n_shared_experts": 2, "num_experts_per_tok": 2, "first_k_dense_replace": 1, "vocab_size": 102400,
              "max_position_embeddings": 4096, "torch_dtype": "bfloat16", "quantization_config": FP8_BLOCK}
    facts = facts_from_config(config, "test:deepseek-fp8")
    latent = 2048 * (1536 + 512 + 64)
    tp1 = V.fp8_marlin_scales(facts, 1, [4], "0.14.0", A100, None).per_stage[0]
    tp2 = V.fp8_marlin_scales(facts, 2, [4], "0.14.0", A100, None).per_stage[0]
    # every layer's linear weights: q_a, q_b, kv_a, kv_b, o; dense MLP (layer 0); 8 experts and 2 shared (layers 1-3)
    attention = latent + 1536 * 16 * 192 + 512 * 16 * 256 + 16 * 128 * 2048
    total = 4 * attention + 3 * 2048 * 10944 + 3 * (8 * 3 * 2048 * 1408 + 3 * 2048 * 2 * 1408)
    assert tp1 == extra(total)
    assert tp2 == extra((total - 4 * latent) // 2 + 4 * latent)
