"""SGLang's hybrid SWA memory (profiles.SGLANG_HYBRID_SWA): a sliding-window model the release gives two pools
holds max_total_num_tokens in its full-attention layers and swa_full_tokens_ratio (0.8) times as many in its
sliding layers, from the same memory the one pool would take."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.engine_flags import FlagValueError
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engine import sglang_config
from gpustack_guard.core.memory.engines.sglang import SglangConfig, estimate_sglang
from gpustack_guard.core.units import MiB

H100 = 81_559 * MiB
H100_NAME = "NVIDIA H100 80GB HBM3"
B200 = 183_359 * MiB


def pools(model: str, version: str, cfg: SglangConfig = SglangConfig(), gpu: int = H100,
          name: str = H100_NAME) -> tuple[int, int | None, int]:
    est = estimate_sglang(catalog_facts(model), gpu, cfg, version=version, gpu_name=name)
    return est.kv_capacity_tokens, est.extra.get("hybrid_swa_pool", {}).get("swa_layer_tokens"), est.kv_cache


@pytest.mark.parametrize("model, one_pool, split, layers, pool_bytes", [
    # 12 of 24 layers slide: full = 1,230,492 x 24 / (0.8 x 12 + 12); pool = 2,048 x 12 x (1,367,213 + 1,093,770)
    ("openai/gpt-oss-20b", 1_230_492, (1_367_213, 1_093_770), (12, 12), 60_481_118_208),
    # 52 of 62 slide (Gemma 3's 5:1): full = 24,885 x 62 / (0.8 x 52 + 10); pool = 8,192 x (29,900 x 10 + 23,920 x 52)
    ("google/gemma-3-27b-it", 24_885, (29_900, 23_920), (10, 52), 12_638_945_280),
])
def test_the_full_layers_take_the_memory_the_sliding_layers_leave(model, one_pool, split, layers, pool_bytes):
    before = pools(model, "0.4.10", SglangConfig(disable_hybrid_swa_memory=True))
    hybrid = pools(model, "0.4.10")
    assert before[:2] == (one_pool, None)
    assert pools(model, "0.4.9.post2")[1] is None  # no hybrid pool before model_runner.py@v0.4.9.post3
    assert hybrid[:2] == split
    est = estimate_sglang(catalog_facts(model), H100, SglangConfig(), version="0.4.10", gpu_name=H100_NAME)
    swa = est.extra["hybrid_swa_pool"]
    assert (swa["full_layers"], swa["swa_layers"], swa["swa_full_tokens_ratio"], swa["split"]) == (*layers, 0.8,
                                                                                                   "tokens")
    assert "model_runner.py@v0.4.9.post3" in swa["source"]
    # the two pools take the one pool's memory, within one token of each layer (the floors of the split)
    assert hybrid[2] == pool_bytes
    assert 0 <= before[2] - pool_bytes < est.kv_bytes_per_token


@pytest.mark.parametrize("model, version, hybrid", [
    ("google/gemma-2-9b-it", "0.4.10.post1", True),
    ("google/gemma-2-9b-it", "0.4.10.post2", False),  # server_args.py@v0.4.10.post2 turns Gemma 2 off
    ("google/gemma-3-27b-it", "0.4.10.post2", True),
    ("google/gemma-3-27b-it", "0.5.0rc0", False),  # Gemma 3 off from 0.5.0rc0, at every later release read
    ("google/gemma-3-27b-it", "0.5.23", False),
    ("openai/gpt-oss-20b", "0.5.0rc0", True),
    ("openai/gpt-oss-20b", "0.5.0rc1", False),  # gpt-oss off 0.5.0rc1 .. 0.5.7
    ("openai/gpt-oss-20b", "0.5.7", False),
    ("openai/gpt-oss-20b", "0.5.8", True),  # an architecture list from 0.5.8
    ("Qwen/Qwen3-8B", "0.5.10", False),  # no sliding window
])
def test_which_releases_give_an_architecture_two_pools(model, version, hybrid):
    assert (pools(model, version)[1] is not None) == hybrid


def test_gpt_oss_on_sm100_keeps_one_pool_where_trtllm_mha_turns_it_off():
    # SM100's default backend for gpt-oss is trtllm_mha: off at 0.5.8-0.5.9 (server_args.py), on from 0.5.10
    assert pools("openai/gpt-oss-120b", "0.5.9", gpu=B200, name="NVIDIA B200")[1] is None
    assert pools("openai/gpt-oss-120b", "0.5.9", gpu=B200, name=H100_NAME)[1] == 1_193_929
    assert pools("openai/gpt-oss-120b", "0.5.10", gpu=B200, name="NVIDIA B200")[1] is not None
    # a page trtllm_mha accepts keeps the backend SGLang picks on SM100, so the pool stays one
    assert pools("openai/gpt-oss-120b", "0.5.9", SglangConfig(page_size=64), gpu=B200, name="NVIDIA B200")[1] is None
    # a backend the user names: trtllm_mha turns it off on any GPU, another backend keeps it on SM100
    named = SglangConfig(attention_backend="trtllm_mha")
    assert pools("openai/gpt-oss-120b", "0.5.9", named, gpu=B200)[1] is None
    assert pools("openai/gpt-oss-120b", "0.5.9", SglangConfig(attention_backend="triton"), gpu=B200,
                 name="NVIDIA B200")[1] is not None


def test_a_draft_model_turns_gpt_oss_to_one_pool_at_0_5_8_only():
    eagle = SglangConfig(speculative_algorithm="EAGLE")
    assert pools("openai/gpt-oss-120b", "0.5.8", eagle, gpu=B200)[1] is None
    assert pools("openai/gpt-oss-120b", "0.5.9", eagle, gpu=B200)[:2] == (1_460_628, 1_168_502)


def test_flags_turn_it_off_or_change_the_ratio():
    assert pools("openai/gpt-oss-20b", "0.5.20", SglangConfig(disable_hybrid_swa_memory=True))[:2] == (1_154_415,
                                                                                                          None)
    assert pools("openai/gpt-oss-20b", "0.5.20")[:2] == (1_282_684, 1_026_147)
    # r = 0.5: full = the memory / (12 + 0.5 x 12) layers of 2,048 B
    assert pools("openai/gpt-oss-20b", "0.5.20", SglangConfig(swa_full_tokens_ratio=0.5))[:2] == (1_539_221, 769_610)
    flags = sglang_config({"disable-hybrid-swa-memory": None, "swa-full-tokens-ratio": "0.5"}, "0.5.20")
    assert (flags.disable_hybrid_swa_memory, flags.swa_full_tokens_ratio) == (True, 0.5)
    with pytest.raises(FlagValueError, match="a fraction in"):
        sglang_config({"swa-full-tokens-ratio": "1.5"}, "0.5.20")


def test_max_total_tokens_caps_the_one_pool_before_the_split_and_the_full_pool_after():
    # before 0.5.11 the cap lowers T, which the split then divides (model_runner.py@v0.4.9.post3 init_memory_pool);
    # from 0.5.11 calculate_pool_sizes_from_max_tokens makes the cap the full pool
    assert pools("openai/gpt-oss-20b", "0.4.10", SglangConfig(max_total_tokens=100_000))[:2] == (111_111, 88_888)
    assert pools("openai/gpt-oss-20b", "0.5.20", SglangConfig(max_total_tokens=100_000))[:2] == (100_000, 80_000)


def test_every_row_names_its_source_and_sizes_unequal_layers_only_by_bytes():
    sized = {"Gemma2ForCausalLM", "Gemma3ForCausalLM", "Gemma3ForConditionalGeneration", "GptOssForCausalLM",
             "Llama4ForConditionalGeneration"}
    unequal = {"Gemma4ForConditionalGeneration"}  # full and window layers of their own bytes per token
    for row in P.SGLANG_HYBRID_SWA:
        assert row.source and set(row.architectures) <= sized | (unequal if row.split == "bytes" else set())
        assert row.split in ("tokens", "bytes") and set(row.gpt_oss_off_with) <= {"trtllm_mha", "speculative"}
    assert P.sglang_hybrid_swa_row("0.5.11").split == "bytes" and P.sglang_hybrid_swa_row("0.5.10").page_aligned


def test_the_budget_rows_name_the_split_and_its_source():
    from gpustack_guard.core.memory.terms import budget_terms

    facts = catalog_facts("openai/gpt-oss-20b")
    rows = {r.term: r for r in budget_terms(estimate_sglang(facts, H100, SglangConfig(), version="0.4.10",
                                                            gpu_name=H100_NAME))}
    assert (rows["kv_capacity_tokens"].value, rows["kv_capacity_tokens"].rule) == (1_367_213,
                                                                                   "hybrid-swa-full-layers-by-tokens")
    assert rows["kv_cache_bytes_per_gpu"].rule == "full-and-sliding-pools"
    assert "set_num_token_hybrid" in rows["kv_capacity_tokens"].source
    one = {r.term: r for r in budget_terms(estimate_sglang(facts, H100, SglangConfig(), version="0.5.7",
                                                           gpu_name=H100_NAME))}
    assert one["kv_capacity_tokens"].rule == "pool-over-cell"
