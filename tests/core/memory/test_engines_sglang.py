"""SGLang's pool and defaults per release line, against the public logs S1..S11 of docs/memory-arithmetic.md."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines.sglang import (
    SglangConfig,
    aiter_factor,
    default_chunked_prefill,
    default_cuda_graph_max_bs,
    default_fraction,
    estimate_sglang,
    max_total_num_tokens,
    multimodal_fraction_factor,
    prefill_graph_reserve_mb,
    prefill_graph_sizes,
    sglang_fraction,
)
from gpustack_guard.core.memory.estimate import NO_KV_MEMORY, UnsupportedModel
from gpustack_guard.core.units import GiB, MiB

H100 = 81_559 * MiB
H200 = 143_771 * MiB
B200 = 183_359 * MiB
RTX4090 = 24_564 * MiB
MI355X = 288 * GiB


def fraction(version: str, gpu: int, tp: int) -> float:
    return sglang_fraction(SglangConfig(tp_size=tp), gpu, version)


@pytest.mark.parametrize("version,gpu,tp,expected", [
    ("0.3.6", H100, 1, 0.88), ("0.3.6", H100, 2, 0.87), ("0.3.6", H100, 4, 0.85), ("0.3.6", H100, 8, 0.82),
    ("0.3.6", H100, 16, 0.79),
    ("0.4.6", H100, 8, 0.81),  # 0.4 changed the TP8 tier from 0.82
    # 0.3.0 to 0.3.5.post2: TP 8 took 0.83 (server_args.py@0.3.3, @0.3.5.post2); the other tiers as 0.3.6
    ("0.3.3", H100, 8, 0.83), ("0.3.5.post2", H100, 8, 0.83), ("0.3.0", H100, 16, 0.79), ("0.3.3", H100, 1, 0.88),
    ("0.4.6", H100, 4, 0.85),  # the 0.4.x run the issue quotes printed 0.85
    ("0.5.4", H100, 1, 0.835),  # 512 + 8192 x 1.5 + 256 x 2 + 128 = 13,440 MiB reserved
    ("0.5.4", RTX4090, 1, 0.848),  # 512 + 3072 + 16 x 2 + 128 = 3,744 MiB
    ("0.5.8", MI355X, 1, 0.911),  # printed by sglang PR #18263 ("mem_fraction_static 0.911")
    ("0.5.9", B200, 4, 0.855),  # 512 + 24,576 + 1,024 + 512 = 26,624 MiB
    ("0.5.10", B200, 4, 0.852),  # + 74 piecewise prefill graphs (4 ... 16,384 tokens) x 8 MiB = 27,216 MiB
    # 0.4.0-0.4.5: TP tiers whatever the GPU size
    ("0.4.0", H200, 8, 0.81), ("0.4.5", H200, 1, 0.88), ("0.4.0", H100, 2, 0.87),
    # 0.4.7: TP x PP tiers up to 80 GiB; 0.79 above 180,000 MiB; above 96 GiB min(lift by 48 GiB, keep 18 GiB)
    ("0.4.7", H100, 4, 0.85), ("0.4.7", B200, 1, 0.79),
    ("0.4.7", H200, 1, min(0.88 + 48 * 1024 * 0.12 / 143_771, (143_771 - 18 * 1024) / 143_771)),
    # 0.4.7.post1-0.5.2: reserve by GPU tier and TP x PP
    ("0.4.7.post1", H100, 1, round((81_559 - 10 * 1024) / 81_559, 3)),  # (9.5 + 1/2) GiB -> 0.874
    ("0.4.8", H100, 8, round((81_559 - 13.5 * 1024) / 81_559, 3)),  # (9.5 + 8/2) GiB -> 0.83
    ("0.5.2", RTX4090, 2, round((24_564 - 3.0 * 1024) / 24_564, 3)),  # (2.8 + 2/10) GiB -> 0.875
    ("0.5.2", H100, 8, 0.831),  # printed by a Grok-2 run of Sept 2025 (sglang/grok2-fp8-8x-h100-tp8-kubectl.log)
    ("0.5.2", H200, 1, round((143_771 - 12.5 * 1024) / 143_771, 3)),  # 0.911
    ("0.5.2", B200, 8, round((183_359 - 32 * 1024) / 183_359, 3)),  # 32 GiB whatever the TP: 0.821
    ("0.5.3", H100, 1, 0.835),  # the reserved-memory model replaces the tiers: 13,440 MiB
])
def test_default_fraction_by_release_line(version, gpu, tp, expected):
    assert fraction(version, gpu, tp) == expected


def test_04_above_80_gib_reserves_13_gib():
    assert fraction("0.4.6", H200, 8) == (143_771 - 13_312) / 143_771


def test_05_reserve_with_the_docs_ci_graph_batch():
    # docs.sglang.ai's CI (main of 2026-02-04, 0.5.8 by date) printed 0.841 on an H100 with cuda_graph_max_bs 4:
    # 512 + 8192 x 1.5 + 4 x 2 + 128 = 12,936 MiB (fixture sglang/qwen25-05b-h100-docs-ci-max-total-tokens.log)
    assert default_fraction(H100, 1, 1, 8192, 4, P.sglang_profile("0.5.8")) == 0.841


def test_05_floor_of_10_gib_on_big_gpus():
    # H100 TP1 with chunked prefill 2048 reserves 3,744 MiB by the formula, lifted to the 10 GiB floor
    assert default_fraction(H100, 1, 1, 2048, 16, P.sglang_profile("0.5.4")) == round((81_559 - 10_240) / 81_559, 3)


def test_explicit_fraction_wins():
    assert sglang_fraction(SglangConfig(mem_fraction_static=0.7, tp_size=4), H100, "0.3.6") == 0.7


@pytest.mark.parametrize("rule,gpu,tp,chunked,graph_bs", [
    ("v0.3", RTX4090, 1, 2048, 4), ("v0.3", H100, 1, 8192, 160),
    ("v0.4", RTX4090, 1, 2048, 8), ("v0.4", RTX4090, 4, 2048, 8), ("v0.4", H100, 1, 8192, 160),
    ("v0.4.3", RTX4090, 1, 2048, 8), ("v0.4.3", RTX4090, 4, 2048, 80), ("v0.4.3", H100, 4, 8192, 160),
    ("v0.5", 16 * GiB, 1, 2048, 8), ("v0.5", RTX4090, 1, 2048, 16), ("v0.5", RTX4090, 4, 2048, 80),
    ("v0.5", 48 * GiB, 2, 4096, 32), ("v0.5", H100, 4, 8192, 512), ("v0.5", B200, 1, 16384, 512),
])
def test_chunked_prefill_and_graph_batch_by_release_line(rule, gpu, tp, chunked, graph_bs):
    assert default_chunked_prefill(gpu, rule) == chunked
    assert default_cuda_graph_max_bs(gpu, tp, rule) == graph_bs


def test_max_total_num_tokens_formula():
    # (post - pre * (1 - f)) // cell, post = pre - weights: 80 GiB before, 20 GiB of weights, f 0.9, 1 MiB cells
    assert max_total_num_tokens(80 * GiB, 20 * GiB, 0.9, MiB) == int((60 - 80 * (1 - 0.9)) * GiB // MiB) == 53_248
    assert max_total_num_tokens(80 * GiB, 20 * GiB, 0.9, MiB, page_size=64) == 53_248
    assert max_total_num_tokens(80 * GiB, 75 * GiB, 0.9, MiB) == 0


def test_s3_logged_pool_from_logged_free_memory():
    # sglang PR #18263: avail 230.20 GB after 56.98 GB of weights, f 0.911 -> "initial available_bytes ... 204.63 GB"
    pre, weights = 287.18 * GiB, 56.98 * GiB
    tokens = max_total_num_tokens(int(pre), int(weights), 0.911, 1)
    assert abs(tokens / GiB - 204.63) < 0.02


def test_s1_qwen3_235b_fp8_tp4_h100():
    # vllm#21348: "KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB" at f 0.93
    facts = replace(catalog_facts("Qwen/Qwen3-235B-A22B"), quant_method="fp8", weight_bytes=None)
    est = estimate_sglang(facts, H100, SglangConfig(mem_fraction_static=0.93, tp_size=4), version="0.4.9")
    assert est.kv_bytes_per_token == 94 * 1 * 128 * 2 * 2  # one KV head per rank
    assert est.extra["free_before_weights"] == H100 - P.SGLANG_START_UP_PARALLEL
    assert est.kv_capacity_tokens == 366_527  # -0.24 % (the FP32 rotary cache of 40,960 x 128 now loaded)
    assert est.extra["max_total_num_tokens"] == est.kv_capacity_tokens


def test_s6_qwen3_32b_tp4_b200_default_fraction():
    # sglang PR #22537: 2,206,208 tokens, K 67.33 GB, after 15.50 GB of weights, 160.78 GB free: the logged pool
    # implies f = (134.66 + 15.50) / 176.28 = 0.852, the fraction with the piecewise prefill graphs counted
    est = estimate_sglang(catalog_facts("Qwen/Qwen3-32B"), B200, SglangConfig(tp_size=4), version="0.5.10")
    assert est.extra["mem_fraction_static"] == 0.852
    assert est.extra["prefill_graph_reserve"] == 592 * MiB
    assert est.kv_capacity_tokens == 2_206_838  # +0.03 % (+0.21 % before the weights' segment tails and rotary cache)
    assert est.extra["fraction_rule_since"] == "0.5.10"
    assert "server_args.py@0.5.10" in est.extra["fraction_rule_source"]


def test_prefill_graph_sizes_up_to_the_chunk():
    # range(4, 33, 4) + range(48, 257, 16) + range(288, 513, 32) + range(576, 1025, 64) + range(1280, 4097, 256)
    # + range(4608, max + 1, 512): 8 + 14 + 8 + 8 + 12 sizes up to 4096, 8 more to 8192, 24 to 16384
    assert (prefill_graph_sizes(2048), prefill_graph_sizes(4096), prefill_graph_sizes(8192),
            prefill_graph_sizes(16384)) == (42, 50, 58, 74)
    assert prefill_graph_sizes(100) == 8 + 4  # 4 ... 32 and 48, 64, 80, 96


@pytest.mark.parametrize("cfg,facts_name,gpu_name,expected_mb", [
    (SglangConfig(tp_size=2), "Qwen/Qwen3-8B", "", 58 * 8),  # H100: chunked 8192
    (SglangConfig(tp_size=2, chunked_prefill_size=4096), "Qwen/Qwen3-8B", "", 50 * 8),
    (SglangConfig(tp_size=2, max_total_tokens=1000), "Qwen/Qwen3-8B", "", (8 + 14 + 8 + 7) * 8),  # 37 sizes to 960
    (SglangConfig(tp_size=2), "deepseek-ai/DeepSeek-V2-Lite", "", 1.5 * 1024),  # MLA: flat 1.5 GiB
    (SglangConfig(tp_size=2, pp_size=2), "Qwen/Qwen3-8B", "", 0),  # PP turns them off
    (SglangConfig(tp_size=2, prefill_graphs_off=True), "Qwen/Qwen3-8B", "", 0),
    (SglangConfig(tp_size=2), "Qwen/Qwen3-8B", "AMD Instinct MI300X", 0),  # not CUDA
    (SglangConfig(tp_size=2), "multimodal", "", 0),  # a vision tower turns them off
    (SglangConfig(tp_size=2), "Qwen/Qwen3-8B", "NVIDIA H100 80GB HBM3", 58 * 8),
])
def test_prefill_graph_reserve_where_sglang_captures_them(cfg, facts_name, gpu_name, expected_mb):
    facts = (replace(catalog_facts("Qwen/Qwen3-8B"), vision_params=400_000_000) if facts_name == "multimodal"
             else catalog_facts(facts_name))
    profile = P.sglang_profile("0.5.10")
    assert prefill_graph_reserve_mb(cfg, profile, cfg.chunked_prefill_size or 8192, facts, gpu_name) == expected_mb
    assert prefill_graph_reserve_mb(cfg, P.sglang_profile("0.5.9"), 8192, facts, gpu_name) == 0


@pytest.mark.parametrize("version,since", [
    ("0.3.3", "0.0.0"), ("0.3.5.post1", "0.0.0"), ("0.3.5.post2", "0.3.5.post2"), ("0.3.6", "0.3.6"), ("0.4.0", "0.4.0"),
    ("0.4.0.post1", "0.4.0.post1"), ("0.4.3.post4", "0.4.0.post1"), ("0.4.4", "0.4.4"), ("0.4.5.post2", "0.4.4"),
    ("0.4.5.post3", "0.4.5.post3"), ("0.4.6.post1", "0.4.5.post3"), ("0.4.6.post2", "0.4.6.post2"), ("0.4.6.post5", "0.4.6.post2"), ("0.4.7", "0.4.7"),
    ("0.4.7.post1", "0.4.7.post1"), ("0.4.10", "0.4.7.post1"), ("0.5.2", "0.4.7.post1"), ("0.5.3", "0.5.3"),
    ("0.5.4", "0.5.3"), ("0.5.4.post1", "0.5.4.post1"), ("0.5.9", "0.5.4.post1"), ("0.5.10", "0.5.10"),
    ("0.5.19", "0.5.10"), ("0.5.20", "0.5.20"), ("0.5.22", "0.5.20"), ("0.5.23", "0.5.23"),
])
def test_one_profile_row_per_release_range(version, since):
    assert P.sglang_profile(version).since == since


@pytest.mark.parametrize("version,gpu,tp,expected", [
    # 20-35 GiB GPUs: 512 + max(chunked, 2048) x 1.5 + graph bs x 2 + TP x PP x 128 MiB, graph bs by release
    ("0.5.4", RTX4090, 1, round((24_564 - (512 + 3072 + 16 * 2 + 128)) / 24_564, 3)),  # 3,744 MiB: 0.848
    ("0.5.4.post1", RTX4090, 1, round((24_564 - (512 + 3072 + 24 * 2 + 128)) / 24_564, 3)),  # 3,760: 0.847
    ("0.5.4.post1", RTX4090, 4, round((24_564 - (512 + 3072 + 80 * 2 + 512)) / 24_564, 3)),  # TP 4 kept 80: 0.827
    # 0.5.20: chunked 4096 and graph bs 48 there; the piecewise prefill graphs (50 sizes to 4096) x 8 MiB on top
    ("0.5.20", RTX4090, 1, round((24_564 - (512 + 6144 + 48 * 2 + 128 + 50 * 8)) / 24_564, 3)),  # 7,280: 0.704
    # 0.5.10-0.5.19 add the piecewise prefill graphs: 42 sizes to 2048 tokens x 8 MiB = 336 MiB
    ("0.5.19", RTX4090, 1, round((24_564 - (512 + 3072 + 24 * 2 + 128 + 42 * 8)) / 24_564, 3)),  # 4,096: 0.833
    # a 48 GB card and an H100 are outside the tiers that moved: the same fraction either side of each change
    ("0.5.4", 48 * 1024 * MiB, 1, round((49_152 - (512 + 6144 + 32 * 2 + 128)) / 49_152, 3)),  # 0.861
    ("0.5.4.post1", 48 * 1024 * MiB, 1, 0.861),
    ("0.5.19", H100, 1, round((81_559 - (512 + 12_288 + 256 * 2 + 128 + 58 * 8)) / 81_559, 3)),  # 13,904: 0.83
    ("0.5.20", H100, 1, 0.83),
])
def test_05_default_fraction_follows_the_graph_batch_of_each_release(version, gpu, tp, expected):
    assert fraction(version, gpu, tp) == expected


@pytest.mark.parametrize("version,gpu,tp,chunked,graph_bs", [
    ("0.5.4", RTX4090, 1, 2048, 16), ("0.5.4.post1", RTX4090, 1, 2048, 24), ("0.5.19", RTX4090, 4, 2048, 80),
    ("0.5.20", RTX4090, 1, 4096, 48), ("0.5.23", RTX4090, 4, 4096, 160),
    ("0.5.20", 16 * GiB, 1, 2048, 8), ("0.5.20", H100, 1, 8192, 256),  # the other tiers as in 0.5.3
])
def test_05_graph_batch_and_chunk_by_release(version, gpu, tp, chunked, graph_bs):
    rule = P.sglang_profile(version).graph_rule
    assert (default_chunked_prefill(gpu, rule), default_cuda_graph_max_bs(gpu, tp, rule)) == (chunked, graph_bs)


def test_05_20_falls_back_to_095():
    # memory_hook.py@0.5.20: "else 0.95" where 0.5.19's server_args.py said 0.88; a fraction outside (0, 1) takes it
    assert (P.sglang_profile("0.5.19").fallback_fraction, P.sglang_profile("0.5.20").fallback_fraction) == (0.88, 0.95)
    # a 2 GiB device: 512 + 3,072 + 16 + 128 MiB reserved is more than it holds
    assert default_fraction(2 * GiB, 1, 1, 2048, 8, P.sglang_profile("0.5.20")) == 0.95
    assert default_fraction(2 * GiB, 1, 1, 2048, 8, P.sglang_profile("0.5.19")) == 0.88


def test_04_8_graph_and_chunk_defaults_by_gpu_size():
    # server_args.py@0.4.8: 2048 under 35 GiB, 8192 under 160 GiB, else 16384; cuda_graph_runner.py@0.4.8 captures
    # up to 160, 256 above 90 GiB, 512 above 160,000 MiB; 8 (80 at TP >= 4) under 35 GiB
    assert [default_chunked_prefill(g, "v0.4.8") for g in (RTX4090, H100, H200, B200)] == [2048, 8192, 8192, 16384]
    assert [default_cuda_graph_max_bs(g, 1, "v0.4.8") for g in (RTX4090, H100, H200, B200)] == [8, 160, 256, 512]
    assert default_cuda_graph_max_bs(RTX4090, 4, "v0.4.8") == 80


def test_s3_qwen3_30b_mi355x_default_fraction():
    est = estimate_sglang(catalog_facts("Qwen/Qwen3-30B-A3B"), MI355X, SglangConfig(), version="0.5.8")
    assert est.kv_capacity_tokens == 2_239_391  # logged 2,227,073: +0.55 % (ROCm: the rotary cache stays in bf16)


def test_max_total_tokens_only_lowers_and_page_rounding_from_046():
    facts = catalog_facts("Qwen/Qwen3-8B")
    full = estimate_sglang(facts, H100, SglangConfig(mem_fraction_static=0.8), version="0.5.4")
    capped = estimate_sglang(facts, H100, SglangConfig(mem_fraction_static=0.8, max_total_tokens=1000),
                             version="0.5.4")
    assert capped.kv_capacity_tokens == 1000 < full.kv_capacity_tokens
    # model_runner.py rounds the pool down to the page from 0.4.6 (l.782-786; @0.5.4 l.1699-1703), not @0.4.3.post2
    paged_old = estimate_sglang(facts, H100, SglangConfig(mem_fraction_static=0.8, page_size=64), version="0.4.3")
    unpaged_old = estimate_sglang(facts, H100, SglangConfig(mem_fraction_static=0.8), version="0.4.3")
    paged = {v: estimate_sglang(facts, H100, SglangConfig(mem_fraction_static=0.8, page_size=64), version=v)
             for v in ("0.4.6", "0.5.4", "0.5.23")}
    unpaged = {v: estimate_sglang(facts, H100, SglangConfig(mem_fraction_static=0.8), version=v) for v in paged}
    assert paged_old.kv_capacity_tokens == unpaged_old.kv_capacity_tokens
    assert paged["0.5.4"].kv_capacity_tokens == full.kv_capacity_tokens // 64 * 64 < full.kv_capacity_tokens
    assert all(paged[v].kv_capacity_tokens == unpaged[v].kv_capacity_tokens // 64 * 64 for v in paged)


def test_weights_over_the_fraction_refuse_even_for_compressed_attention():
    # S4 (InferenceX#2128): "Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.88"
    facts = catalog_facts("deepseek-ai/DeepSeek-V4-Flash")
    est = estimate_sglang(facts, 2 * H200, SglangConfig(mem_fraction_static=0.5), version="0.5.23")
    assert est.verdict == NO_KV_MEMORY and est.kv_capacity_tokens == 0
    with pytest.raises(UnsupportedModel):
        estimate_sglang(facts, 2 * H200, SglangConfig(mem_fraction_static=0.9), version="0.5.23")


def test_footprint_counts_start_up_static_part_and_reserve_once():
    est = estimate_sglang(catalog_facts("Qwen/Qwen3-8B"), H100, SglangConfig(mem_fraction_static=0.8),
                          version="0.5.4")
    reserve = int((512 + 8192 * 1.5 + 256 * 2) * MiB)
    assert est.footprint == P.SGLANG_START_UP_SINGLE + est.requested + reserve
    assert est.requested == -(-(0.8 * (H100 - P.SGLANG_START_UP_SINGLE)) // 1)


def test_a_pool_shorter_than_the_context_starts_and_caps_inputs():
    # sglang#4048: context 163,840 on a smaller pool starts ("the serving program starts successfully") and refuses
    # a 160k input: "exceeds the maximum allowed length (59862 tokens)" = pool 59,868 - 1 - 5
    facts = catalog_facts("Qwen/Qwen3-32B")  # 64 layers x 8 KV heads x 128 x 2 x 2 = 262,144 B per token at TP1
    cfg = SglangConfig(mem_fraction_static=0.9, context_length=131_072)
    est = estimate_sglang(facts, H100, cfg, version="0.4.3")
    assert est.verdict == "fits"
    # 0.9 x (81,559 MiB H100 - 0.5 GiB start-up) - the weights as loaded over 262,144 B per token
    assert est.extra["free_before_weights"] == H100 - P.SGLANG_START_UP_SINGLE
    assert est.kv_capacity_tokens == int((0.9 * est.extra["free_before_weights"] - est.weights) // 262_144) == 41_729
    assert est.extra["max_req_len"] == 41_728 and est.extra["max_input_len"] == 41_723  # pool - 1, pool - 6
    assert est.notes == (f"the pool ({est.kv_capacity_tokens:,} tokens) is shorter than the context (131,072): "
                         f"SGLang starts, and refuses inputs over {est.kv_capacity_tokens - 6:,} tokens",)
    roomy = estimate_sglang(facts, H100, replace(cfg, context_length=8192), version="0.4.3")
    assert roomy.verdict == "fits" and roomy.notes == () and roomy.extra["max_req_len"] == 8191
    assert roomy.extra["max_input_len"] == 8186


def test_no_token_of_pool_is_sglangs_not_enough_memory():
    # f x free leaves 100 kB after the weights, less than one 256 KiB token: pool 0, SGLang raises
    facts = catalog_facts("Qwen/Qwen3-32B")
    tight = replace(facts, weight_bytes=int(0.9 * (H100 - P.SGLANG_START_UP_SINGLE)) - 100_000)
    est = estimate_sglang(tight, H100, SglangConfig(mem_fraction_static=0.9), version="0.4.3")
    assert est.kv_capacity_tokens == 0 and est.verdict == NO_KV_MEMORY


def test_parallel_start_up_is_smaller_on_pcie_boards():
    from gpustack_guard.core.memory.engines.sglang import start_up_bytes

    assert start_up_bytes(4, 1, "NVIDIA L4") == start_up_bytes(2, 1, "NVIDIA GeForce RTX 4090") \
        == P.SGLANG_START_UP_PCIE_PARALLEL == int(0.71 * GiB)
    assert start_up_bytes(4, 1, "NVIDIA H100 80GB HBM3") == start_up_bytes(4, 1, "") == P.SGLANG_START_UP_PARALLEL
    assert start_up_bytes(1, 1, "NVIDIA L4") == P.SGLANG_START_UP_SINGLE


def test_s13_qwq_32b_on_four_l4_pcie():
    # llms-in-clouds docs/sglang.md (0.4.3.post4, f 0.85, TP4, context_len 131,072): "Load weight end ... mem usage=
    # 15.54 GB", "KV Cache is allocated. #tokens: 46611"; L4 as GPUStack reports it (23,034 MiB)
    facts = replace(catalog_facts("Qwen/Qwen2.5-32B"), max_position_embeddings=131_072)
    l4 = 23_034 * MiB
    cfg = SglangConfig(mem_fraction_static=0.85, tp_size=4, context_length=131_072)
    est = estimate_sglang(facts, l4, cfg, version="0.4.3.post4", gpu_name="NVIDIA L4")
    # weights as loaded: parameters, the allocator's segment tails (o_proj 12.5 MiB in a 14 MiB segment, ...), and
    # the FP32 rotary cache 131,072 x 128 x 4 B
    assert est.extra["allocator_segment_tail_bytes"] == 237_000_704  # 226.02 MiB
    assert est.extra["rope_cache_bytes"] == 64 * MiB
    assert round(est.weights / GiB, 2) == 15.54  # the log's mem usage
    assert est.kv_capacity_tokens == 48_765  # +4.6 %
    nvlink = estimate_sglang(facts, l4, cfg, version="0.4.3.post4", gpu_name="")
    assert nvlink.kv_capacity_tokens == 19_938  # the NVLink start-up would leave -57 %


def test_segment_tails_follow_the_caching_allocator():
    from gpustack_guard.core.memory.engines.sglang import segment_tails

    assert segment_tails([48 * MiB, 112 * MiB]) == 0  # 2 MiB multiples fill their segments
    assert segment_tails([int(12.5 * MiB)]) == int(1.5 * MiB)  # a 14 MiB segment; the split-off 1.5 MiB stays
    assert segment_tails([int(12.5 * MiB), int(1.5 * MiB)]) == 0  # ... until a mid-sized tensor takes it
    assert segment_tails([int(67.5 * MiB)]) == MiB // 2  # 0.5 MiB is not split off: part of the block
    assert segment_tails([3 * MiB]) == 17 * MiB  # under 10 MiB: a 20 MiB segment
    assert segment_tails([3 * MiB, 3 * MiB]) == 14 * MiB  # the second shares it
    assert segment_tails([10 * 1024, 10 * 1024]) == 2 * MiB - 20 * 1024  # small blocks pack into 2 MiB


def test_llama_weights_as_loaded_and_the_rope_cache_by_release():
    # Llama-3.1-8B at TP1: every large tensor a 2 MiB multiple, the tails are the small segments only; the rotary
    # cache (131,072 x 128) is bf16 in 0.4.1.post7 and FP32 on CUDA from 0.4.2.post1 (rotary_embedding.py), bf16 on
    # ROCm. docs.sglang.ai quick start (0.4.1.post7) logs 15.09 GB of weights, sglang PR #4760 (main after
    # 0.4.4.post1) 15.11 GB
    facts = catalog_facts("meta-llama/Llama-3.1-8B")
    old = estimate_sglang(facts, H100, SglangConfig(), version="0.4.1.post7", gpu_name="NVIDIA H100 80GB HBM3")
    new = estimate_sglang(facts, H100, SglangConfig(), version="0.4.2.post1", gpu_name="NVIDIA H100 80GB HBM3")
    rocm = estimate_sglang(facts, H100, SglangConfig(), version="0.4.2.post1", gpu_name="AMD Instinct MI300X")
    assert old.extra["rope_cache_bytes"] == 32 * MiB and new.extra["rope_cache_bytes"] == 64 * MiB
    assert rocm.extra["rope_cache_bytes"] == 32 * MiB
    assert new.extra["allocator_segment_tail_bytes"] == 1_564_672
    assert new.weights - old.weights == 32 * MiB
    quantised = estimate_sglang(replace(facts, quant_method="fp8"), H100, SglangConfig(), version="0.4.2.post1")
    assert quantised.extra["allocator_segment_tail_bytes"] == 0  # other tensors: not modelled, not guessed


@pytest.mark.parametrize("gpu_name,tp,noted", [
    ("", 2, True), ("NVIDIA H100 NVL", 2, True),  # NVL boards: bridges between 2 or 4 cards, not a switch
    ("NVIDIA L4", 4, False), ("NVIDIA H100 80GB HBM3", 4, False), ("", 1, False),
])
def test_an_unknown_interconnect_says_which_start_up_it_assumed(gpu_name, tp, noted):
    est = estimate_sglang(catalog_facts("Qwen/Qwen3-8B"), H100, SglangConfig(mem_fraction_static=0.8, tp_size=tp),
                          version="0.5.4", gpu_name=gpu_name)
    found = [n for n in est.notes if n.startswith("GPU interconnect unknown")]
    assert bool(found) is noted
    if noted and not gpu_name:
        assert found == ["GPU interconnect unknown (no GPU name): start-up taken as on NVLink (2.78 GiB per rank); "
                         "PCIe boards, where custom all-reduce sets up no buffers beyond two GPUs, keep 0.71 GiB: "
                         "give the GPU name"]


@pytest.mark.parametrize("version,tp,graph_bs", [
    # under 25,000 MiB: 8 at every TP size in 0.4.0; 0.4.0.post1 gives TP >= 4 the 80 of "half of the default 160"
    # (server_args.py@0.4.0.post1 l.189-197, @0.4.2 l.209-217)
    ("0.4.0", 1, 8), ("0.4.0", 4, 8), ("0.4.0.post1", 4, 80), ("0.4.2", 8, 80), ("0.4.2", 1, 8),
    ("0.4.3", 1, 8), ("0.4.3", 4, 80), ("0.4.5", 8, 80), ("0.4.6", 4, 80), ("0.4.7", 4, 80),
])
def test_small_gpu_graph_batch_at_tp4_follows_the_release_it_came_in(version, tp, graph_bs):
    rule = P.sglang_profile(version).graph_rule
    assert default_cuda_graph_max_bs(RTX4090, tp, rule) == graph_bs
    assert default_cuda_graph_max_bs(H100, tp, rule) == 160  # the large-GPU default never moved in 0.4.0-0.4.7
    assert default_chunked_prefill(RTX4090, rule) == 2048


def test_an_estimate_at_tp4_on_a_small_gpu_takes_its_release_s_graph_batch():
    facts = catalog_facts("Qwen/Qwen2.5-7B")
    cfg = SglangConfig(tp_size=4, context_length=8192)
    old = estimate_sglang(facts, RTX4090, cfg, version="0.4.0", gpu_name="NVIDIA GeForce RTX 4090")
    new = estimate_sglang(facts, RTX4090, cfg, version="0.4.0.post1", gpu_name="NVIDIA GeForce RTX 4090")
    assert (old.extra["cuda_graph_max_bs"], new.extra["cuda_graph_max_bs"]) == (8, 80)


def test_0_4_8_small_gpu_bound_is_35_gib_exclusive():
    """server_args.py@0.4.8: "gpu_mem < 35 * 1024" sets 8 (80 from TP 4); a GPU of exactly 35 GiB takes the tiers."""
    below, at = (35 * 1024 - 1) * MiB, 35 * GiB
    assert [default_cuda_graph_max_bs(below, tp, "v0.4.8") for tp in (1, 4)] == [8, 80]
    assert [default_cuda_graph_max_bs(at, tp, "v0.4.8") for tp in (1, 4)] == [160, 160]
    assert (default_chunked_prefill(below, "v0.4.8"), default_chunked_prefill(at, "v0.4.8")) == (2048, 8192)


# --- multimodal models: the fraction cut per release (profiles.SGLANG_VLM_FRACTION_RULES) -----------------------
def _qwen25_vl_7b():
    import json
    from pathlib import Path

    from gpustack_guard.core.memory.hfconfig import facts_from_config

    path = Path(__file__).resolve().parents[3] / "benchmarks" / "vectors" / "qwen2.5-vl-7b" / "config.json"
    return facts_from_config(json.loads(path.read_text(encoding="utf-8")), "qwen2.5-vl-7b")


def test_vit_shape_is_read_as_sglang_reads_it_with_its_defaults():
    assert catalog_facts("google/gemma-3-4b-it").vit_shape == (27, 1152)
    # Qwen2.5-VL names its depth `depth`: SGLang's getattr falls back to 24 layers
    assert _qwen25_vl_7b().vit_shape == (24, 1280)
    assert catalog_facts("Qwen/Qwen3-8B").vit_shape is None


@pytest.mark.parametrize("version,user_set,expected", [
    ("0.3.6", False, 0.95), ("0.3.6", True, 0.95),  # model_runner cuts any fraction
    ("0.4.4.post3", True, 0.95), ("0.4.4.post4", True, 0.90), ("0.4.8.post1", True, 0.90),
    ("0.4.9", False, 0.90), ("0.4.9", True, 1.0),  # server_args cuts only its own default
    # 0.95 x (1 - 0.1 x (27 x 1152^2 / (24 x 1024^2) - 1)) = 0.95 x 0.9576171875
    ("0.4.9.post3", False, 0.95 * 0.9576171875), ("0.5.23", False, 0.95 * 0.9576171875), ("0.5.23", True, 1.0),
])
def test_multimodal_fraction_factor_by_release_gemma3(version, user_set, expected):
    facts = catalog_facts("google/gemma-3-4b-it")
    assert multimodal_fraction_factor(facts, version, user_set=user_set) == pytest.approx(expected, abs=1e-12)
    assert multimodal_fraction_factor(catalog_facts("Qwen/Qwen3-8B"), version, user_set=user_set) == 1.0


def test_multimodal_fraction_factor_second_model_and_clamp():
    facts = _qwen25_vl_7b()
    # 24 x 1280^2 / (24 x 1024^2) = 1.5625: 0.95 x (1 - 0.05625)
    assert multimodal_fraction_factor(facts, "0.5.5", user_set=False) == pytest.approx(0.95 * 0.94375, abs=1e-12)
    assert multimodal_fraction_factor(facts, "0.4.5", user_set=False) == 0.90
    huge = replace(facts, vit_shape=(64, 4096))  # 42.7x ViT-L: clamped at 0.8
    assert multimodal_fraction_factor(huge, "0.5.5", user_set=False) == 0.95 * 0.8
    tiny = replace(facts, vit_shape=(1, 64))  # far below ViT-L: clamped at 1.05
    assert multimodal_fraction_factor(tiny, "0.5.5", user_set=False) == 0.95 * 1.05
    assert multimodal_fraction_factor(replace(facts, vit_shape=None), "0.5.5", user_set=False) == 1.0


def test_pr4826_gemma3_4b_pool_uses_the_cut_fraction():
    # sglang PR #4826: f 0.88 x 0.95 = 0.836; free 139.21 GiB before the weights, 8.13 GiB loaded, 834,615 tokens
    facts = catalog_facts("google/gemma-3-4b-it")
    est = estimate_sglang(facts, H200, SglangConfig(), version="0.4.4.post2", gpu_name="NVIDIA H200")
    assert est.extra["mem_fraction_static"] == 0.88 * 0.95
    assert est.extra["multimodal_fraction_factor"] == 0.95
    assert "model_runner.py@0.3.0" in est.extra["multimodal_fraction_source"]
    assert max_total_num_tokens(int(139.21 * GiB), int(8.13 * GiB), 0.88 * 0.95, 34 * 2 * 4 * 256 * 2) == 834_616  # log: 834,615 (its GB rounded)
    text = estimate_sglang(catalog_facts("Qwen/Qwen3-8B"), H200, SglangConfig(), version="0.4.4.post2")
    assert text.extra["multimodal_fraction_factor"] == 1.0 and text.extra["mem_fraction_static"] == 0.88


MI300X = 192 * GiB  # 196,608 MiB


@pytest.mark.parametrize("version,gpu,name,tp,expected", [
    # 0.4.6 and .post1: TP tiers up to 81,920 MiB, else (gpu_mem - 13 GiB) / gpu_mem
    ("0.4.6.post1", H100, "NVIDIA H100 80GB HBM3", 2, 0.87),
    ("0.4.6.post1", H200, "NVIDIA H200", 2, (143_771 - 13_312) / 143_771),
    # 0.4.6.post2-.post5: 0.88 above 81,920 MiB lifted by 48 GiB x (1 - f) / gpu_mem, at most (gpu_mem - 18 GiB)
    ("0.4.6.post2", H200, "NVIDIA H200", 2, min(0.88 + 49_152 * 0.12 / 143_771, (143_771 - 18_432) / 143_771)),
    ("0.4.6.post5", B200, "NVIDIA B200", 1, min(0.88 + 49_152 * 0.12 / 183_359, (183_359 - 18_432) / 183_359)),
    ("0.4.6.post5", H100, "NVIDIA H100 80GB HBM3", 4, 0.85),  # under 81,920 MiB: the TP x PP tier
    # 0.4.7: 0.79 above 180,000 MiB only where is_cuda(): a B200; an MI300X under ROCm takes the lift
    ("0.4.7", B200, "NVIDIA B200", 1, 0.79), ("0.4.7", B200, "", 1, 0.79),  # an unnamed GPU is taken as CUDA
    ("0.4.7", MI300X, "AMD Instinct MI300X", 1, min(0.88 + 49_152 * 0.12 / 196_608, (196_608 - 18_432) / 196_608)),
    ("0.4.7", H200, "NVIDIA H200", 8, min(0.88 + 49_152 * 0.12 / 143_771, (143_771 - 18_432) / 143_771)),
])
def test_0_4_6_and_0_4_7_big_gpu_fractions_by_release_and_device(version, gpu, name, tp, expected):
    assert sglang_fraction(SglangConfig(tp_size=tp), gpu, version, gpu_name=name) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("version,gpu,tp,chunked,graph_bs", [
    # cuda_graph_runner.py@0.4.6: up to 256 above 81,920 MiB; H100's 81,559 MiB stays at 160
    ("0.4.6", H100, 1, 8192, 160), ("0.4.6", H200, 1, 8192, 256), ("0.4.6.post1", B200, 1, 8192, 256),
    ("0.4.6", RTX4090, 4, 2048, 80),
    # 0.4.6.post2: above 96 GiB (98,304 MiB); a 94 GB H100 NVL (95,830 MiB) stays at 160 there, not in 0.4.6
    ("0.4.6.post2", 95_830 * MiB, 1, 8192, 160), ("0.4.6", 95_830 * MiB, 1, 8192, 256),
    ("0.4.6.post5", H200, 1, 8192, 256), ("0.4.6.post5", RTX4090, 1, 2048, 8),
    # 0.4.7: 512 graphs and a 16,384-token chunk above 180,000 MiB (B200, MI300X); H200 keeps 8,192 and 256
    ("0.4.7", B200, 1, 16384, 512), ("0.4.7", MI300X, 8, 16384, 512), ("0.4.7", H200, 1, 8192, 256),
    ("0.4.7", H100, 1, 8192, 160), ("0.4.7", RTX4090, 4, 2048, 80),
    # before 0.4.6 every GPU of 25,000 MB or more stops at 160 and chunks 8,192
    ("0.4.5", B200, 1, 8192, 160),
])
def test_0_4_6_and_0_4_7_graph_and_chunk_defaults_by_gpu_size(version, gpu, tp, chunked, graph_bs):
    rule = P.sglang_profile(version).graph_rule
    assert (default_chunked_prefill(gpu, rule), default_cuda_graph_max_bs(gpu, tp, rule)) == (chunked, graph_bs)


@pytest.mark.parametrize("architecture,version,expected_mb", [
    # configs/model_config.py piecewise_cuda_graph_disabled_model_archs: no prefill graphs, so no reserve for them
    ("Qwen3NextForCausalLM", "0.5.10", 0), ("Qwen3NextForCausalLM", "0.5.23", 0),
    ("BailingMoeV2_5ForCausalLM", "0.5.16", 0), ("Glm5NextForConditionalGeneration", "0.5.20", 0),
    ("Glm5NextForConditionalGeneration", "0.5.19", 58 * 8),  # listed from 0.5.20 only
    ("GlmMoeDsaForCausalLM", "0.5.12", 0), ("GlmMoeDsaForCausalLM", "0.5.13", 58 * 8),  # dropped in 0.5.13
    ("Qwen3ForCausalLM", "0.5.10", 58 * 8), ("Qwen3ForCausalLM", "0.5.23", 58 * 8),  # 4 ... 8192 tokens
])
def test_prefill_graph_reserve_leaves_the_architectures_sglang_turns_them_off_for(architecture, version, expected_mb):
    facts = replace(catalog_facts("Qwen/Qwen3-8B"), architecture=architecture)
    profile = P.sglang_profile(version)
    assert prefill_graph_reserve_mb(SglangConfig(), profile, 8192, facts, "NVIDIA H100", version) == expected_mb


def test_small_gpu_cut_of_chunk_and_graphs_starts_at_0_3_5_post2():
    # server_args.py@0.3.5.post2 l.167-174 quarters the 8,192-token chunk and sets 4 graphs under 25,000 MB;
    # @0.3.0, @0.3.4 and @0.3.5.post1 keep 8,192 and capture up to 160 on every GPU
    def defaults(version, gpu):
        rule = P.sglang_profile(version).graph_rule
        return default_chunked_prefill(gpu, rule), default_cuda_graph_max_bs(gpu, 1, rule)

    assert [defaults(v, RTX4090) for v in ("0.3.0", "0.3.5.post1", "0.3.5.post2", "0.3.6")] == [
        (8192, 160), (8192, 160), (2048, 4), (2048, 4)]
    assert defaults("0.3.0", H100) == defaults("0.3.5.post2", H100) == (8192, 160)
    assert fraction("0.3.5.post1", H100, 8) == fraction("0.3.5.post2", H100, 8) == 0.83


def test_13_gib_rule_and_wide_graphs_start_at_0_4_5_post3():
    # server_args.py@0.4.5.post3 and @0.4.6: (gpu_mem - 13 GiB) / gpu_mem above 81,920 MiB; @0.4.5.post2 the TP tier
    # on every GPU; cuda_graph_runner.py@0.4.5.post3 captures up to 256 above 81,920 MiB, @0.4.5.post2 only on ROCm
    assert fraction("0.4.5.post3", H200, 1) == fraction("0.4.6", H200, 1) == (143_771 - 13_312) / 143_771
    assert fraction("0.4.5.post2", H200, 1) == 0.88
    assert fraction("0.4.5.post3", H100, 4) == 0.85  # under 81,920 MiB: the TP tier either side
    wide = [default_cuda_graph_max_bs(H200, 1, P.sglang_profile(v).graph_rule) for v in ("0.4.5.post2", "0.4.5.post3")]
    assert wide == [160, 256]


def test_page_rounding_starts_with_the_page_size_flag_in_0_4_4():
    # --page-size and model_runner.py's "// page_size * page_size" both arrive in 0.4.4 (@0.4.4 l.709-711,
    # @0.4.5.post2 l.747-749); 0.4.3.post4 has neither
    facts = catalog_facts("Qwen/Qwen3-8B")
    cfg, paged = SglangConfig(mem_fraction_static=0.8), SglangConfig(mem_fraction_static=0.8, page_size=64)
    tokens = {v: (estimate_sglang(facts, H100, paged, version=v).kv_capacity_tokens,
                  estimate_sglang(facts, H100, cfg, version=v).kv_capacity_tokens)
              for v in ("0.4.3.post4", "0.4.4", "0.4.5.post2")}
    assert tokens["0.4.3.post4"][1] % 64 != 0  # so the checks can tell a rounded pool from an unrounded one
    assert tokens["0.4.3.post4"][0] == tokens["0.4.3.post4"][1]
    assert all(paged_t == whole // 64 * 64 < whole for paged_t, whole in (tokens["0.4.4"], tokens["0.4.5.post2"]))


def test_an_mi300x_and_a_b200_under_0_4_7_size_their_pools_differently():
    # the same 192 GiB: a CUDA GPU of that size takes 0.79, an MI300X under ROCm the lift's cap, 0.90625
    # (8,192 tokens of context: the aiter cut, SGLANG_AITER_CUTS, takes only longer ones)
    facts = catalog_facts("Qwen/Qwen3-8B")
    short = SglangConfig(context_length=8192)
    cuda = estimate_sglang(facts, MI300X, short, version="0.4.7", gpu_name="NVIDIA B200")
    rocm = estimate_sglang(facts, MI300X, short, version="0.4.7", gpu_name="AMD Instinct MI300X")
    assert (cuda.extra["mem_fraction_static"], rocm.extra["mem_fraction_static"]) == (0.79, 0.90625)
    assert (cuda.extra["chunked_prefill_size"], rocm.extra["cuda_graph_max_bs"]) == (16384, 512)
    # the static part: fraction x (192 GiB - 0.5 GiB start-up), 151.285 vs 173.546875 GiB
    assert (cuda.requested, rocm.requested) == (162_441_031_844, 186_344_538_112)


def test_aiter_cuts_the_pool_fraction_on_rocm_above_8192_tokens_from_0_4_7():
    # model_runner.py@v0.4.7 .. arg_groups/attention_hook.py@v0.5.23: aiter (ROCm's MHA default) and a context past
    # 8,192 tokens take 0.85 of the fraction, the user's too; 0.4.6.post5 has no cut, a CUDA GPU no aiter
    facts = catalog_facts("Qwen/Qwen3-8B")  # 40,960 positions

    def frac(version: str, gpu_name: str = "AMD Instinct MI300X", **cfg) -> float:
        est = estimate_sglang(facts, MI300X, SglangConfig(mem_fraction_static=0.8, **cfg), version=version,
                              gpu_name=gpu_name)
        return round(est.extra["mem_fraction_static"], 6)

    assert frac("0.4.7") == frac("0.5.23") == 0.68
    assert frac("0.4.6.post5") == frac("0.4.7", context_length=8192) == frac("0.4.7", gpu_name="NVIDIA B200") == 0.8
    assert frac("0.5.17", attention_backend="triton") == 0.8
    assert frac("0.5.17", attention_backend="aiter", context_length=8193) == 0.68
    # a second model and release: farbodtavakkoli/OTel's Qwen3-0.6B on an MI355X, 0.5.17 at 0.6, logged 1,360,288
    small = estimate_sglang(catalog_facts("Qwen/Qwen3-0.6B"), 294_896 * MiB, SglangConfig(mem_fraction_static=0.6),
                            version="0.5.17", gpu_name="AMD Instinct MI355X")
    assert round(small.extra["mem_fraction_static"], 6) == 0.51


def test_aiter_cut_spares_a_given_fraction_under_the_honour_env_from_0_5_19():
    # attention_hook.py@v0.5.19: SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION true keeps a fraction the user gave
    # (environ.py EnvBool: true/1/yes/y); absent in 0.5.18; a default fraction is cut all the same
    facts = catalog_facts("Qwen/Qwen3-8B")
    rocm = "AMD Instinct MI300X"
    given = SglangConfig(mem_fraction_static=0.8, aiter_honor_env="Yes")
    assert aiter_factor(facts, given, "0.5.19", rocm) == aiter_factor(facts, given, "0.5.23", rocm) == 1.0
    assert aiter_factor(facts, given, "0.5.18", rocm) == 0.85
    assert aiter_factor(facts, SglangConfig(mem_fraction_static=0.8, aiter_honor_env="0"), "0.5.23", rocm) == 0.85
    assert aiter_factor(facts, SglangConfig(aiter_honor_env="1"), "0.5.23", rocm) == 0.85


@pytest.mark.parametrize("model, heads, tp, fraction", [
    # DeepSeek-V3's 128 KV heads (its MLA config): ROCm picks aiter when a rank holds 16 or 128 of them (TP 8, TP 1),
    # triton at TP 2 and 4 (server_args.py@v0.5.16 _get_default_attn_backend): only aiter cuts the fraction
    ("deepseek-ai/DeepSeek-V3", 128, 1, 0.68), ("deepseek-ai/DeepSeek-V3", 128, 2, 0.8),
    ("deepseek-ai/DeepSeek-V3", 128, 4, 0.8), ("deepseek-ai/DeepSeek-V3", 128, 8, 0.68),
    # DeepSeek-V2-Lite's 16: aiter at TP 1 only (8 and 4 a rank at TP 2 and 4)
    ("deepseek-ai/DeepSeek-V2-Lite", 16, 1, 0.68), ("deepseek-ai/DeepSeek-V2-Lite", 16, 2, 0.8),
    ("deepseek-ai/DeepSeek-V2-Lite", 16, 4, 0.8),
])
def test_aiter_cut_of_an_mla_model_follows_rocms_pick_by_kv_heads_per_rank(model, heads, tp, fraction):
    facts = catalog_facts(model)
    assert facts.is_mla and facts.kv_heads == heads
    cut = aiter_factor(facts, SglangConfig(tp_size=tp), "0.5.17", "AMD Instinct MI300X")
    assert round(0.8 * cut, 6) == fraction
    assert aiter_factor(facts, SglangConfig(tp_size=tp, attention_backend="aiter"), "0.5.17",
                                       "AMD Instinct MI300X") == 0.85


@pytest.mark.parametrize("model, tp, rounded, unrounded", [
    # trtllm_mha (gpt_oss.py@0.5.20); the full layers' pool of the hybrid SWA split (SGLANG_HYBRID_SWA, 0.5.10+)
    ("openai/gpt-oss-120b", 1, 1_483_712, 1_483_744),
    ("deepseek-ai/DeepSeek-V3.1", 8, 1_061_184, 1_061_198),  # trtllm_mla (deepseek_v2.py@0.5.20)
])
def test_sm100_model_backend_takes_64_token_pages(model, tp, rounded, unrounded):
    # profiles.SGLANG_SM100_MODEL_PAGE: no backend given on a B200, the architecture's backend forces 64-token
    # pages, and 0.5.20+ rounds the pool down to the page
    facts = catalog_facts(model)
    est = estimate_sglang(facts, B200, SglangConfig(tp_size=tp), version="0.5.20", gpu_name="NVIDIA B200")
    assert (est.kv_capacity_tokens, est.block_size) == (rounded, 64)
    assert "@0.5.20" in est.extra["model_page_source"]
    assert any("64-token KV pages" in n for n in est.notes)
    # a backend the user sets keeps page 1; so does an H100 (fa3, no page rule); 0.5.14 rounds too (model_runner
    # rounds to the page from 0.4.6), from its own fraction
    own = estimate_sglang(facts, B200, SglangConfig(tp_size=tp, attention_backend="fa4"), version="0.5.20",
                          gpu_name="NVIDIA B200")
    old = estimate_sglang(facts, B200, SglangConfig(tp_size=tp), version="0.5.14", gpu_name="NVIDIA B200")
    assert (own.kv_capacity_tokens, own.block_size, own.extra["model_page_source"]) == (unrounded, 1, "")
    assert (old.block_size, old.kv_capacity_tokens % 64) == (64, 0) and old.extra["model_page_source"]
    hopper = estimate_sglang(facts, B200, SglangConfig(tp_size=tp), version="0.5.20",
                             gpu_name="NVIDIA H100 80GB HBM3")
    assert hopper.block_size == 1 and hopper.extra["model_page_source"] == ""


def test_sm100_model_page_keeps_an_accepted_page_and_other_architectures():
    facts = catalog_facts("openai/gpt-oss-120b")
    est = estimate_sglang(facts, B200, SglangConfig(page_size=32), version="0.5.20", gpu_name="NVIDIA B200")
    assert (est.block_size, est.extra["model_page_source"]) == (32, "")  # trtllm_mha accepts 32
    assert P.sglang_model_page_row("LlamaForCausalLM", "0.5.20") is None
    assert P.sglang_model_page_row("DeepseekV3ForCausalLM", "0.5.3") is None  # no sm100 default before 0.5.4
    assert P.sglang_model_page_row("DeepseekV3ForCausalLM", "0.5.4").backend == "trtllm_mla"


@pytest.mark.parametrize("model", ["Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B"])
def test_sm100_ordinary_model_takes_trtllm_mha_pages_from_057(model):
    # profiles.SGLANG_SM100_MHA_PAGE: an ordinary attention model with no backend given on a B200 gets trtllm_mha
    # from 0.5.7 (server_args.py@0.5.7), whose page rule makes page 1 into 64; the pool is rounded down to it
    facts = catalog_facts(model)
    pages = {v: estimate_sglang(facts, B200, SglangConfig(), version=v, gpu_name="NVIDIA B200")
             for v in ("0.5.6", "0.5.7", "0.5.14", "0.5.20", "0.5.23")}
    assert pages["0.5.6"].block_size == 1 and pages["0.5.6"].extra["model_page_source"] == ""
    for v in ("0.5.7", "0.5.14", "0.5.20", "0.5.23"):
        est = pages[v]
        assert (est.block_size, est.kv_capacity_tokens % 64) == (64, 0)
        assert "trtllm_mha" in est.extra["model_page_source"]
        assert any("trtllm_mha attention backend" in n and "64-token KV pages" in n for n in est.notes)
    flat = estimate_sglang(facts, B200, SglangConfig(attention_backend="flashinfer"), version="0.5.20",
                           gpu_name="NVIDIA B200")
    assert pages["0.5.20"].kv_capacity_tokens == flat.kv_capacity_tokens // 64 * 64
    # accepted pages stay (128 only from 0.5.17), Hopper and a speculative run keep theirs
    assert estimate_sglang(facts, B200, SglangConfig(page_size=128), version="0.5.20",
                           gpu_name="NVIDIA B200").block_size == 128
    assert estimate_sglang(facts, B200, SglangConfig(page_size=128), version="0.5.14",
                           gpu_name="NVIDIA B200").block_size == 64
    assert estimate_sglang(facts, H100, SglangConfig(), version="0.5.20",
                           gpu_name="NVIDIA H100 80GB HBM3").block_size == 1
    assert estimate_sglang(facts, B200, SglangConfig(speculative_algorithm="EAGLE"), version="0.5.20",
                           gpu_name="NVIDIA B200").block_size == 1


def test_sm100_mha_page_leaves_mla_linear_and_sliding_window_models():
    for model in ("deepseek-ai/DeepSeek-V2-Lite", "google/gemma-3-4b-it"):
        est = estimate_sglang(catalog_facts(model), B200, SglangConfig(), version="0.5.20", gpu_name="NVIDIA B200")
        assert est.block_size == 1 and est.extra["model_page_source"] == ""
    assert P.sglang_sm100_mha_page_row("0.5.6") is None
    assert P.sglang_sm100_mha_page_row("0.5.7").keeps == (16, 32, 64)
    assert P.sglang_sm100_mha_page_row("0.5.17").keeps == (16, 32, 64, 128)


def test_every_catalog_model_names_its_architecture_so_architecture_rules_reach_it():
    # hfconfig falls back to the model type (deepseek_v3) where architectures is missing, which no
    # architecture-keyed table names: DeepSeek-V3 and R1 from the catalog missed the SM100 page rule
    from gpustack_guard.adapters.model_sources.catalog import catalog_configs

    names = list(catalog_configs())
    assert len(names) >= 80 and all(catalog_facts(name).architecture[:1].isupper() for name in names)
    for name in ("deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1"):
        est = estimate_sglang(catalog_facts(name), B200, SglangConfig(tp_size=8), version="0.5.20",
                              gpu_name="NVIDIA B200")
        assert (est.block_size, est.kv_capacity_tokens % 64) == (64, 0) and est.extra["model_page_source"]


def test_aiter_honour_env_reaches_the_estimate_through_the_deployment_env():
    # engine.ENGINE_ENV carries the variable from the spec's env into sglang_config
    from gpustack_guard.core.memory.engine import ENGINE_ENV, sglang_config

    assert P.SGLANG_AITER_HONOR_ENV in ENGINE_ENV  # the estimate's cache key sees it
    flags = {"mem-fraction-static": 0.8}
    assert sglang_config(flags, "0.5.23", {"SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION": "1"}).aiter_honor_env == "1"
    assert sglang_config(flags, "0.5.23").aiter_honor_env is None
    # and the estimate's pool follows it: the given 0.8 kept whole, not 0.68 (Qwen3-8B on one MI300X, 16k)
    from gpustack_guard.core.memory import engine
    from gpustack_guard.core.spec.model import Policy

    facts = catalog_facts("Qwen/Qwen3-8B")
    gpus = [(192 * GiB, "AMD Instinct MI300X")]
    flags = {"mem-fraction-static": "0.8", "context-length": "16384"}
    cut = engine.estimate("sglang", facts, gpus, flags, "0.5.23", Policy())
    kept = engine.estimate("sglang", facts, gpus, flags, "0.5.23", Policy(), env={P.SGLANG_AITER_HONOR_ENV: "true"})
    assert (cut.kv_capacity_tokens, kept.kv_capacity_tokens) == (837_043, 1_004_378)


@pytest.mark.parametrize("version,gpu_mb,name,tp,chunked,graph_bs", [
    # profiles.SGLANG_NPU_TIERS: 0.5.3.post3-0.5.6 interleave two Ascend tiers with the GPU ones (32,768-token
    # chunks); from 0.5.7 hardware_backend/npu/utils.py sets 4,096 / 8,192 first. 0.5.3.post2 has no NPU branch.
    ("0.5.3.post2", 62_420, "Ascend 910B3", 1, 8192, 256), ("0.5.4", 62_420, "Ascend 910B3", 1, 32768, 64),
    ("0.5.6", 62_420, "Ascend 910B3", 4, 32768, 128), ("0.5.7", 62_420, "Ascend 910B3", 1, 8192, 64),
    ("0.5.23", 62_420, "Ascend 910B3", 4, 8192, 256),
    ("0.5.3.post2", 30_000, "Ascend 910B4", 1, 2048, 16), ("0.5.4", 30_000, "Ascend 910B4", 4, 32768, 64),
    ("0.5.10", 30_000, "Ascend 910B4", 1, 4096, 16), ("0.5.23", 16_000, "Ascend 910B4", 4, 4096, 64),
    ("0.5.4", 50_000, "Ascend 910B", 1, 4096, 32),  # between the NPU tiers: the GPU tier
    ("0.5.23", 96 * 1024, "Ascend 910_9392", 1, 8192, 256),  # above 64 GiB: the GPU tier (90-160 GiB)
    ("0.5.4", 62_420, "NVIDIA A100", 1, 8192, 256),  # a GPU of the same size keeps the GPU tier
])
def test_ascend_npus_take_their_own_chunk_and_graph_batch(version, gpu_mb, name, tp, chunked, graph_bs):
    est = estimate_sglang(catalog_facts("Qwen/Qwen3-8B"), gpu_mb * MiB, SglangConfig(tp_size=tp), version=version,
                          gpu_name=name)
    assert (est.extra["chunked_prefill_size"], est.extra["cuda_graph_max_bs"]) == (chunked, graph_bs)


def test_an_ascend_tier_moves_the_default_fraction():
    # 0.5.4 on a 62,420 MiB 910B3: 512 + 32,768 x 1.5 + 64 x 2 + 128 = 49,920 MiB reserved (no prefill graphs off
    # CUDA), 0.200; 0.5.7: 512 + 12,288 + 128 + 128 = 13,056 MiB, 0.791
    fractions = [sglang_fraction(SglangConfig(), 62_420 * MiB, v, gpu_name="Ascend 910B3") for v in ("0.5.4", "0.5.7")]
    assert fractions == [round((62_420 - 49_920) / 62_420, 3), round((62_420 - 13_056) / 62_420, 3)] == [0.2, 0.791]
