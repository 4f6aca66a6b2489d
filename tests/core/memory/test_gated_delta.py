"""Gated DeltaNet hybrids (Qwen3-Next, Qwen3.5/3.6) under vLLM's hybrid KV cache (core/memory/gated_delta.py),
checked against figures vLLM printed: the 0.10.2 start-up log of Qwen3-Next-80B-A3B-Instruct at TP 2 on H200
(tests/fixtures/logs/vllm/v0.10.2-qwen3-next-80b-tp2-h200.log), the 784-token block of Qwen3.6-27B on one GPU and
the prefix-caching pool of Qwen3.6-35B-A3B on an RTX 5090 under 0.24.0 (club-3090#612, #652)."""

from __future__ import annotations

import pytest
from support import REPO

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engine import estimate
from gpustack_guard.core.memory.engines.vllm import hybrid_group_factor, hybrid_groups, pool
from gpustack_guard.core.memory.estimate import GatedDeltaUnsupported, UnsupportedModel
from gpustack_guard.core.memory.gated_delta import GatedDeltaKV
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.memory.weights import param_breakdown, weights_per_rank
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import GiB, MiB
from gpustack_guard.core.verify import patterns as PT
from gpustack_guard.core.verify.logparse import parse_log

NEXT = catalog_facts("Qwen/Qwen3-Next-80B-A3B-Instruct")
H200 = (143771 * MiB, "NVIDIA H200")
H100 = "NVIDIA H100 80GB HBM3"
B200 = "NVIDIA B200"

# Qwen3.6-27B's text model as its published config states it (64 layers, every 4th full attention; the temporal
# state in float32 by mamba_ssm_dtype)
QWEN36_27B_TEXT = {
    "architectures": ["Qwen3_5ForCausalLM"], "model_type": "qwen3_5_text", "hidden_size": 5120,
    "intermediate_size": 17408, "num_hidden_layers": 64, "num_attention_heads": 24, "num_key_value_heads": 4,
    "head_dim": 256, "vocab_size": 248320, "max_position_embeddings": 262144, "attn_output_gate": True,
    "full_attention_interval": 4, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
    "linear_num_key_heads": 16, "linear_num_value_heads": 48, "linear_value_head_dim": 128,
    "mamba_ssm_dtype": "float32", "tie_word_embeddings": False, "dtype": "bfloat16",
    "layer_types": ["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(64)]}


def shape(facts, tp=1, version="0.10.2", gpu=H100, block=None, **kw) -> GatedDeltaKV:
    return GatedDeltaKV(facts, tp, None, block, version, gpu, **kw)


def test_config_facts_name_the_linear_layers_and_their_state():
    assert NEXT.recurrent_layers is None and NEXT.is_gated_delta
    assert (NEXT.linear_attention_layers, NEXT.full_attention_interval) == (36, 4)
    qwen36 = facts_from_config(QWEN36_27B_TEXT, "test")
    assert (qwen36.linear_attention_layers, qwen36.full_attention_interval, qwen36.mamba_ssm_dtype) == \
        (48, 4, "float32")


def test_state_page_and_attention_block_match_the_0_10_2_log():
    # "Setting attention block size to 544 tokens", "Padding mamba page size by 1.49%" at TP 2
    s = shape(NEXT, tp=2)
    assert (s.state_bytes, s.token_bytes, s.block_size, s.page_bytes) == (548_864, 1024, 544, 557_056)
    assert round(100 * (s.page_bytes - s.state_bytes) / s.state_bytes, 2) == 1.49
    assert shape(NEXT, tp=4).block_size == 272  # half the state, one KV head per rank still
    assert shape(NEXT, tp=2, block=1024).block_size == 1024  # a larger --block-size stays


def test_pool_prints_the_logs_tokens_and_concurrency():
    # 0.10.2 log: "Current kv cache memory in use is 47878721024 bytes", "GPU KV cache size: 973,760 tokens",
    # "Maximum concurrency for 262,144 tokens per request: 14.77x", "num_gpu_blocks is: 7162"
    s = shape(NEXT, tp=2)
    groups = hybrid_groups(s.full_layers, s.linear_layers, hybrid_group_factor("0.10.2"))
    assert groups == (12, 1, 3)
    tokens, concurrency, pool_bytes = s.pool(47_878_721_024, 262_144, None, groups)
    assert (tokens, round(concurrency, 2)) == (973_760, 14.77)
    assert pool_bytes == 7162 * 12 * 557_056
    # one request: 12 full layers x 482 pages + 36 state pages
    assert s.request_bytes(262_144) == (12 * 482 + 36) * 557_056


def test_temporal_state_dtype_follows_mamba_ssm_dtype_from_0_17_0():
    qwen36 = facts_from_config(QWEN36_27B_TEXT, "test")
    # 0.17.0 reads the config's float32: "Setting attention block size to 784 tokens" (Qwen3.6-27B, one GPU)
    assert shape(qwen36, version="0.17.0").block_size == 784
    assert shape(qwen36, version="0.16.0").block_size == 400  # both states at the model dtype before
    assert shape(qwen36, version="0.17.0", mamba_ssm_cache_dtype="bfloat16").block_size == 400
    assert shape(NEXT, version="0.17.0").ssm_dtype_bytes == 2  # Qwen3-Next's config names no mamba_ssm_dtype


def test_kernel_alignment_by_release_and_gpu():
    assert shape(NEXT, tp=4, version="0.11.0", gpu=B200).block_size == 272
    assert shape(NEXT, tp=4, version="0.11.2", gpu=B200).block_size == 288  # FlashInfer head 256 on SM100: 32
    assert shape(NEXT, tp=4, version="0.11.2", gpu=H100).block_size == 272
    # 0.20.0: the alignment is max(16, --block-size)
    assert shape(NEXT, tp=2, version="0.19.0", block=64).block_size == 544
    assert shape(NEXT, tp=2, version="0.20.0", block=64).block_size == 576
    assert shape(NEXT, tp=4, version="0.20.0", gpu=B200).block_size == 272


def test_weights_of_qwen3_next_are_the_logs_within_a_tenth_of_a_percent():
    assert param_breakdown(NEXT).total == 79_674_391_296
    per_rank = weights_per_rank(NEXT, 2, 1)
    assert per_rank == 79_674_391_296
    assert abs(per_rank / (74.2812 * GiB) - 1) < 0.002  # "Model loading took 74.2812 GiB" at TP 2


def run(facts, flags, version="0.10.2", gpus=(H200, H200), family="vllm", env=None):
    return estimate(family, facts, list(gpus), flags, version, Policy(), env or {})


def test_the_estimate_shows_the_state_term_by_term():
    est = run(NEXT, {"tensor-parallel-size": "2"}, env={"VLLM_USE_FLASHINFER_SAMPLER": "0"})
    gd = est.extra["gated_delta"]
    assert (gd["attention_block_size"], gd["page_bytes"], gd["state_bytes_per_sequence_layer"]) == \
        (544, 557_056, 548_864)
    assert (gd["group_size"], gd["full_attention_groups"], gd["linear_attention_groups"]) == (12, 1, 3)
    assert gd["state_page_bytes_per_sequence"] == 36 * 557_056
    assert gd["rule"] == "0.10.2" and "HybridAttentionMambaModelConfig" in gd["source"]
    assert est.block_size == 544 and est.kv_bytes_per_token == 12 * 1024
    # the log printed 973,760 tokens; the profile's non-KV terms are gsg's own estimate
    assert abs(est.kv_capacity_tokens / 973_760 - 1) < 0.05


@pytest.mark.parametrize("flags, version, message", [
    ({}, "0.10.1", "before 0.10.2 has no Gated DeltaNet model"),
    ({}, "0.33.0", "FlashInfer on compute capability 9.0"),  # H200, prefix caching on by default
    ({"no-enable-prefix-caching": None, "use-replayssm": None}, "0.34.0", "--use-replayssm changes"),
    ({"additional-config": '{"gdn_prefill_backend": "triton"}'}, "0.33.0", "gdn_prefill_backend 'triton'"),
    ({"speculative-config": '{"method": "qwen3_next_mtp", "num_speculative_tokens": 2}'}, "0.11.0",
     "speculative state blocks by a rule gsg has not read"),  # 0.16.0+ is sized (test_vllm_mtp_draft.py)
    ({"speculative-config": '{"method": "eagle3", "model": "a/b", "num_speculative_tokens": 2}'}, "0.24.0",
     "speculative state slots"),
    ({"pipeline-parallel-size": "2"}, "0.11.0", "pipeline parallelism"),
])
def test_layouts_not_read_get_no_verdict(flags, version, message):
    with pytest.raises(UnsupportedModel, match=message):
        run(NEXT, flags, version)


def test_no_prefix_caching_flag_on_a_modelled_release_is_the_default():
    assert run(NEXT, {"no-enable-prefix-caching": None}).kv_capacity_tokens == run(NEXT, {}).kv_capacity_tokens


def test_other_engines_and_incomplete_configs_get_no_verdict():
    # SGLang is modelled for the releases read (tests/core/memory/test_sglang_gated_delta.py), not after them
    with pytest.raises(UnsupportedModel, match="0.5.21\\+ adds per-slot mamba terms gsg has not read"):
        run(NEXT, {}, "0.5.23", family="sglang")
    bare = facts_from_config({**QWEN36_27B_TEXT, "linear_num_value_heads": None}, "test")
    with pytest.raises(UnsupportedModel, match="missing linear_num_value_heads"):
        run(bare, {})


def test_the_rows_are_keyed_where_the_source_changed():
    assert [row.since for row in P.VLLM_GATED_DELTA_ROWS] == ["0.0.0", "0.10.2", "0.11.2", "0.17.0", "0.20.0",
                                                             "0.26.0", "0.33.0"]
    assert [(row.since, row.default_on, row.align_pages) for row in P.VLLM_GATED_DELTA_PREFIX_ROWS] == \
        [("0.0.0", False, None), ("0.15.0", False, 2), ("0.26.0", True, 2), ("0.33.0", True, 2)]
    assert [row.turned_off for row in P.VLLM_GATED_DELTA_PREFIX_ROWS] == [True, False, False, False]
    assert [(row.since, row.checked) for row in P.VLLM_GATED_DELTA_ALIGN_BUDGET_ROWS] == \
        [("0.0.0", False), ("0.17.0", True), ("0.18.0", True), ("0.27.0", False)]
    with pytest.raises(GatedDeltaUnsupported):
        shape(NEXT, version="0.9.2")


@pytest.mark.parametrize("config, named", [
    ({**QWEN36_27B_TEXT, "layer_types": ["linear_attention"] * 64}, "layer types 'linear_attention'"),
    ({**QWEN36_27B_TEXT, "model_type": "kimi_linear", "layer_types": None}, "model type 'kimi_linear'"),
])
def test_layouts_without_a_full_attention_page_stay_refused(config, named):
    facts = facts_from_config(config, "test")
    assert not facts.is_gated_delta and facts.recurrent_layers == named


def test_a_tensor_parallel_size_that_splits_a_head_is_refused():
    with pytest.raises(UnsupportedModel, match="does not divide the linear-attention heads"):
        run(NEXT, {"tensor-parallel-size": "3"}, gpus=(H200,) * 3)


def test_qwen36_catalog_models_are_estimated_with_their_vision_tower():
    dense, moe = catalog_facts("Qwen/Qwen3.6-27B"), catalog_facts("Qwen/Qwen3.6-35B-A3B")
    assert dense.vision_unsupported is None and dense.vision_params > 0  # qwen3_vl.py's tower, no DeepStack
    est = run(dense, {"max-model-len": "32768"}, "0.19.0", gpus=((81559 * MiB, H100),))
    assert est.block_size == 784  # "Setting attention block size to 784 tokens" (Qwen3.6-27B, one GPU)
    assert est.extra["gated_delta"]["state_dtype_bytes"] == {"conv": 2, "temporal": 4}
    assert run(moe, {"max-model-len": "32768"}, "0.19.0", gpus=((81559 * MiB, H100),)).block_size == 1056
    with pytest.raises(UnsupportedModel, match="before 0.17.0 has no Qwen3.5/3.6 model"):
        run(dense, {}, "0.16.0", gpus=((81559 * MiB, H100),))


RTX_5090 = "NVIDIA GeForce RTX 5090"


@pytest.mark.parametrize("available_gib, tokens, concurrency", [(5.98, 567_978, 4.33), (6.01, 569_878, 4.35)])
def test_align_mode_keeps_two_state_pages_as_the_0_24_0_logs_print(available_gib, tokens, concurrency):
    # club-3090#612 and #652: Qwen3.6-35B-A3B (NVFP4) on an RTX 5090, vLLM 0.24.0, --enable-prefix-caching,
    # --kv-cache-dtype fp8, 131,072 tokens: "Available KV cache memory: 5.98 GiB" / "GPU KV cache size: 567,978
    # tokens" / "4.33x", and 6.01 GiB / 569,878 / 4.35x. Block 2096, groups of 10: 1 full, 3 linear.
    moe = catalog_facts("Qwen/Qwen3.6-35B-A3B")
    s = GatedDeltaKV(moe, 1, "fp8", None, "0.24.0", RTX_5090, state_pages=2)
    factor = hybrid_group_factor("0.24.0")
    assert (s.block_size, hybrid_groups(s.full_layers, s.linear_layers, factor)) == (2096, (10, 1, 3))
    printed, conc, _ = pool(int(available_gib * GiB), s, s.block_size, 131_072, None, factor, "concurrency-x-max-len")
    assert (printed, round(conc, 2)) == (tokens, concurrency)  # 299 or 300 blocks over 63 + 2 x 3 pages
    one_page = GatedDeltaKV(moe, 1, "fp8", None, "0.24.0", RTX_5090)  # mode "none" would have printed 593,795 and 595,781
    assert pool(int(available_gib * GiB), one_page, 2096, 131_072, None, factor, "concurrency-x-max-len")[0] > \
        tokens * 1.04


def test_the_fixture_pool_is_rebuilt_exactly_from_its_printed_memory():
    log = parse_log((REPO / "tests/fixtures/logs/vllm/v0.24-qwen36-35b-a3b-nvfp4-rtx5090-prefix-align.log")
                    .read_text(encoding="utf-8").splitlines(True), PT.VLLM)[0].terms()
    s = GatedDeltaKV(catalog_facts("Qwen/Qwen3.6-35B-A3B"), 1, "fp8", None, "0.24.0", RTX_5090, state_pages=2)
    printed, conc, _ = pool(log[PT.KV_CACHE], s, s.block_size, log[PT.MAX_MODEL_LEN], None,
                            hybrid_group_factor("0.24.0"), "concurrency-x-max-len")
    assert (printed, round(conc, 2)) == (log[PT.KV_TOKENS], log["max_concurrency"]) == (567_978, 4.33)


def test_prefix_caching_is_the_default_from_0_26_0():
    # Qwen3-Next-80B at TP 2 on H200 with the 0.10.2 log's pool (47,878,721,024 B, 7,162 blocks of 12 pages):
    # 0.25.1 prints 7,162 / (482 + 3) x 262,144; 0.26.0 turns prefix caching on, 7,162 / (482 + 2 x 3)
    s25 = shape(NEXT, tp=2, version="0.25.1")
    s26 = shape(NEXT, tp=2, version="0.26.0", state_pages=2)
    groups = hybrid_groups(s26.full_layers, s26.linear_layers, hybrid_group_factor("0.26.0"))
    assert groups == (12, 1, 3) and s26.block_size == s25.block_size == 544
    assert pool(47_878_721_024, s25, 544, 262_144, None, 1.5, "concurrency-x-max-len")[:2] == \
        (3_871_083, 7162 / 485)
    assert pool(47_878_721_024, s26, 544, 262_144, None, 1.5, "concurrency-x-max-len")[:2] == \
        (3_847_285, 7162 / 488)
    assert s26.request_bytes(262_144) == (12 * 482 + 2 * 36) * 557_056


def test_the_estimate_names_the_prefix_caching_mode():
    on = run(NEXT, {"tensor-parallel-size": "2"}, "0.26.0")
    off = run(NEXT, {"tensor-parallel-size": "2", "no-enable-prefix-caching": None}, "0.26.0")
    assert (on.extra["gated_delta"]["mamba_cache_mode"], on.extra["gated_delta"]["pages_per_sequence_state"]) == \
        ("align", 6)
    assert (off.extra["gated_delta"]["mamba_cache_mode"], off.extra["gated_delta"]["pages_per_sequence_state"]) == \
        ("none", 3)
    assert any("prefix caching on (this release's default" in n for n in on.notes)
    assert not any("prefix caching on" in n for n in off.notes)
    # the same pool, fewer full-length sequences: 3 more state pages of 557,056 B each per sequence
    assert on.kv_capacity_tokens < off.kv_capacity_tokens
    # an explicit --enable-prefix-caching from 0.15.1 is the same layout
    explicit = run(NEXT, {"tensor-parallel-size": "2", "enable-prefix-caching": None}, "0.25.1")
    assert explicit.extra["gated_delta"]["mamba_cache_mode"] == "align"
    assert any(n.startswith("prefix caching on: ") for n in explicit.notes)
    assert explicit.kv_capacity_tokens < run(NEXT, {"tensor-parallel-size": "2"}, "0.25.1").kv_capacity_tokens


@pytest.mark.parametrize("version", ["0.10.2", "0.11.0", "0.13.0", "0.14.1"])
def test_prefix_caching_is_turned_off_before_0_15_1(version):
    # models/config.py MambaModelConfig: off for every hybrid @v0.10.2/@v0.11.0, off without
    # SupportsMambaPrefixCaching @v0.11.2..@v0.14.1 ("Hybrid or mamba-based model detected without support for
    # prefix caching: disabling.", the 0.13.0 Qwen3-Next log at TP 2 on L40S): the layout without the flag
    flags = {"tensor-parallel-size": "2", "max-model-len": "32768"}
    asked = run(NEXT, {**flags, "enable-prefix-caching": None}, version)
    plain = run(NEXT, flags, version)
    assert asked.kv_capacity_tokens == plain.kv_capacity_tokens
    assert asked.extra["gated_delta"]["mamba_cache_mode"] == "none"
    assert any(n.startswith("--enable-prefix-caching is turned off by this release") for n in asked.notes)
    assert not any("turned off" in n for n in plain.notes)


# --- mamba cache mode "align": the raised block must fit max_num_batched_tokens (0.17.0-0.26.x) -----------------
RTX_5090_GPU = ((32607 * MiB, RTX_5090),)


def align_refusal(facts, flags, version, gpus):
    return run(facts, flags, version, gpus=gpus).extra["align_block_refusal"]


def test_align_mode_refuses_a_block_above_the_batched_tokens():
    # the public 0.17.0rc1 report: Qwen3.6-35B-A3B, fp8 KV on an RTX 5090 (default 2,048 batched tokens there)
    moe = catalog_facts("Qwen/Qwen3.6-35B-A3B")
    flags = {"kv-cache-dtype": "fp8", "max-model-len": "131072", "enable-prefix-caching": None}
    assert align_refusal(moe, flags, "0.17.0", RTX_5090_GPU) == \
        "In Mamba cache align mode, block_size (2096) must be <= max_num_batched_tokens (2048)."
    # the club-3090 deployments started under 0.24.0 with --max-num-batched-tokens 8192
    assert align_refusal(moe, {**flags, "max-num-batched-tokens": "8192"}, "0.24.0", RTX_5090_GPU) is None
    default_on = {"kv-cache-dtype": "fp8", "max-model-len": "131072"}
    assert align_refusal(moe, default_on, "0.26.0", RTX_5090_GPU).startswith("In Mamba cache align mode, block_size "
                                                                             "(2096)")
    assert align_refusal(moe, {**default_on, "no-enable-prefix-caching": None}, "0.26.0", RTX_5090_GPU) is None
    assert align_refusal(moe, default_on, "0.27.0", RTX_5090_GPU) is None  # the assert is gone


def test_align_refusal_on_a_second_model_and_releases():
    # Qwen3.6-27B's 784-token block on an H100 against 512 batched tokens
    dense = catalog_facts("Qwen/Qwen3.6-27B")
    h100 = ((81559 * MiB, H100),)
    flags = {"max-model-len": "32768", "enable-prefix-caching": None, "max-num-batched-tokens": "512"}
    assert align_refusal(dense, flags, "0.20.0", h100) == \
        "In Mamba cache align mode, block_size (784) must be <= max_num_batched_tokens (512)."
    assert align_refusal(dense, flags, "0.18.0", h100) is not None
    assert align_refusal(dense, {**flags, "max-num-batched-tokens": "784"}, "0.20.0", h100) is None
    # Qwen3-Next at TP 2 (block 544): 0.16.0 only checks long_prefill_token_threshold
    tp2 = {"tensor-parallel-size": "2", "enable-prefix-caching": None, "max-num-batched-tokens": "512"}
    assert align_refusal(NEXT, tp2, "0.16.0", (H200, H200)) is None
    assert align_refusal(NEXT, tp2, "0.17.0", (H200, H200)) == \
        "In Mamba cache align mode, block_size (544) must be <= max_num_batched_tokens (512)."
    assert align_refusal(NEXT, {**tp2, "enable-prefix-caching": "false"}, "0.17.0", (H200, H200)) is None


# --- vLLM 0.33.0 and 0.34.0 ------------------------------------------------------------------------------------
A100 = "NVIDIA A100-SXM4-80GB"


def test_0_33_and_0_34_without_prefix_caching_keep_the_0_32_layout():
    # mode "none": no checkpoint alignment or page (qwen_gdn_linear_attn.py@v0.33.0), state_alignment 1 (0.34.0)
    for version in ("0.32.0", "0.33.0"):
        s = shape(NEXT, tp=2, version=version)
        assert (s.block_size, s.page_bytes, s.state_pages) == (544, 557_056, 1)
        assert pool(47_878_721_024, s, 544, 262_144, None, 1.5, "concurrency-x-max-len")[:2] == \
            (3_871_083, 7162 / 485)
    # 0.34.0 starts from a 64-token block (profiles.VLLM_DEFAULT_BLOCK), which the alignment takes as its floor
    # (platforms/interface.py@v0.34.0 _align_hybrid_block_size: max(the kernel's smallest block, block_size))
    s = shape(NEXT, tp=2, version="0.34.0")
    assert (s.block_size, s.page_bytes, s.state_pages) == (576, 589_824, 1)
    assert shape(NEXT, tp=2, version="0.34.0", block=16).block_size == 544  # a block the deployment sets
    est = run(NEXT, {"tensor-parallel-size": "2", "no-enable-prefix-caching": None}, "0.34.0")
    gd = est.extra["gated_delta"]
    assert (gd["attention_block_size"], gd["mamba_cache_mode"], gd["pages_per_sequence_state"], gd["rule"]) == \
        (576, "none", 3, "0.33.0")


def test_0_34_default_block_is_the_alignment_floor_on_a_second_model():
    qwen35 = catalog_facts("Qwen/Qwen3.5-27B")
    assert [shape(qwen35, tp=tp, version="0.33.0").block_size for tp in (1, 2)] == [784, 784]  # 16 x 49
    assert [shape(qwen35, tp=tp, version="0.34.0").block_size for tp in (1, 2)] == [832, 832]  # 64 x 13


def test_0_33_prefix_caching_is_sized_where_triton_runs_the_prefill():
    a100 = ((81920 * MiB, A100), (81920 * MiB, A100))
    on = run(NEXT, {"tensor-parallel-size": "2"}, "0.33.0", gpus=a100)  # compute capability 8.0: Triton
    gd = on.extra["gated_delta"]
    assert (gd["attention_block_size"], gd["mamba_cache_mode"], gd["pages_per_sequence_state"]) == (544, "align", 6)
    # 0.26.0's align pool (test_prefix_caching_is_the_default_from_0_26_0): 7,162 / (482 + 2 x 3)
    s = shape(NEXT, tp=2, version="0.33.0", gpu=A100, state_pages=2)
    assert pool(47_878_721_024, s, 544, 262_144, None, 1.5, "concurrency-x-max-len")[:2] == (3_847_285, 7162 / 488)


@pytest.mark.parametrize("gpu, message", [
    (H100, "FlashInfer on compute capability 9.0"),
    (B200, "CUDA runtime 13\\+, which a spec does not give"),
    (RTX_5090, "CUDA runtime 13\\+, which a spec does not give"),
    ("", "depends on the GPU"),
])
def test_0_33_prefix_caching_is_refused_where_flashinfer_may_run(gpu, message):
    with pytest.raises(UnsupportedModel, match=message):
        run(NEXT, {"tensor-parallel-size": "2"}, "0.34.0", gpus=((81559 * MiB, gpu),) * 2)
    # the same deployment without prefix caching is sized (0.34.0: a 64-token alignment floor, so 576)
    assert run(NEXT, {"tensor-parallel-size": "2", "no-enable-prefix-caching": None}, "0.34.0",
               gpus=((81559 * MiB, gpu),) * 2).block_size == 576


@pytest.mark.parametrize("model,version,gpu_name,backend,prefix,block", [
    # --attention-backend FLASH_ATTN on 10.x from 0.29.0: FA4's head-256 kernel advertises only 128-token pages,
    # the alignment's floor (platforms/interface.py@v0.29.0 _align_hybrid_block_size): 128 x 7, not 16 x 49
    ("Qwen/Qwen3.5-27B", "0.32.0", "NVIDIA B200", "FLASH_ATTN", None, 896),
    ("Qwen/Qwen3.5-27B", "0.32.0", "NVIDIA B200", None, None, 784),  # FLASHINFER, first on 10.x
    ("Qwen/Qwen3.5-27B", "0.32.0", "NVIDIA H200", "FLASH_ATTN", None, 784),  # FA3: MultipleOf(16)
    ("Qwen/Qwen3.5-27B", "0.28.0", "NVIDIA B200", "FLASH_ATTN", None, 784),  # before the FA4 page
    ("Qwen/Qwen3.5-27B", "0.34.0", "NVIDIA GB200", "FLASH_ATTN", False, 896),  # 64-token default: 64 x 13 = 832
    ("Qwen/Qwen3-Next-80B-A3B-Instruct", "0.30.0", "NVIDIA B200", "FLASH_ATTN", None, 640),  # 128 x 5
    ("Qwen/Qwen3-Next-80B-A3B-Instruct", "0.30.0", "NVIDIA GeForce RTX 5090", "FLASH_ATTN", None, 544),  # FA2
])
def test_fa4_head256_page_is_the_hybrid_alignment_floor(model, version, gpu_name, backend, prefix, block):
    from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm

    cfg = VllmConfig(max_model_len=8192, tensor_parallel_size=2, attention_backend=backend,
                     enable_prefix_caching=prefix)
    est = estimate_vllm(catalog_facts(model), 183_359 * MiB, cfg, version=version, gpu_name=gpu_name)
    assert est.block_size == block
