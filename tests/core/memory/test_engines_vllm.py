"""vLLM: pipeline stages, engine generation per release and feature, V0 chunked prefill, fused-MoE workspace
(docs/memory-arithmetic.md, "vLLM")."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import gpu_arch
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines import vllm as V
from gpustack_guard.core.memory.engines.vllm import (
    VllmConfig,
    batch_sizes,
    default_batching,
    engine_generation,
    estimate_vllm,
    fused_moe_chunk,
    moe_workspace,
    moe_workspace_held,
    pp_partitions,
    stage_weights,
)
from gpustack_guard.core.memory.kv import mla_aligned_layer_bytes
from gpustack_guard.core.memory.terms import budget_terms
from gpustack_guard.core.memory.weights import weight_layout
from gpustack_guard.core.units import GiB, MiB

A6000 = 49_140 * MiB


@pytest.mark.parametrize("layers,pp,expected", [
    (48, 2, [24, 24]), (61, 4, [15, 15, 16, 15]), (80, 3, [27, 27, 26]), (62, 4, [15, 16, 16, 15]),
])
def test_pp_split_like_get_pp_indices(layers, pp, expected):
    assert pp_partitions(layers, pp) == expected


def test_pp_layer_partition_env_wins_and_is_checked():
    assert pp_partitions(48, 2, "16,32") == [16, 32]
    with pytest.raises(ValueError, match="sums to 40 layers but the model has 48"):
        pp_partitions(48, 2, "16,24")
    with pytest.raises(ValueError, match="has 3 stages"):
        pp_partitions(48, 2, "16,16,16")


def test_stage_weights_put_embedding_first_and_head_last():
    facts = catalog_facts("meta-llama/Llama-3.1-8B")  # untied
    layout = weight_layout(facts)
    first, last = stage_weights(facts, 1, [16, 16])
    assert first == sum(layout.per_layer[:16]) + layout.embedding
    assert last == sum(layout.per_layer[16:]) + layout.lm_head + layout.other
    assert first + last == layout.total


def _v09_estimate(version="0.15.2rc1", gpu_name="NVIDIA GeForce RTX 5070 Ti"):
    """vllm#34076's run: Qwen3-Coder-30B-A3B-FP8 split 16/32 layers over a 5070 Ti and a 5090 D, gmu 0.9."""
    facts = replace(catalog_facts("Qwen/Qwen3-30B-A3B").merged({"max_position_embeddings": 262_144}),
                    quant_method="fp8", weight_bytes=None)
    cfg = VllmConfig(gpu_memory_utilization=0.9, pipeline_parallel_size=2, pp_layer_partition="16,32")
    return estimate_vllm(facts, 16_303 * MiB, cfg, version=version, gpu_name=gpu_name,
                         stage_totals=[16_303 * MiB, 32_607 * MiB])


def test_v09_heterogeneous_pp_with_partition_refuses_like_vllm_015():
    # vllm#34076: Qwen3-Coder-30B-A3B-FP8, VLLM_PP_LAYER_PARTITION=16,32 on a 5070 Ti (16303 MiB) + 5090 D
    # (32607 MiB), gmu 0.9: "24.0 GiB KV cache is needed, which is larger than the available KV cache memory
    # (3.18 GiB) ... estimated maximum model length is 34736"
    est = _v09_estimate()
    assert est.verdict == "kv-below-max-model-len"
    assert est.kv_needed == 24 * GiB  # all 48 layers x 98,304 B x 262,144 tokens, as vLLM 0.15 checks it
    assert [s["layers"] for s in est.extra["stages"]] == [16, 32]
    assert est.gpu_total == 16_303 * MiB and est.kv_bytes_per_token == 16 * 2048
    older = _v09_estimate("0.11.0", gpu_name="")
    # before 0.15 the bottleneck stage's own layers are checked: the 5070 Ti's 16. The 5090 D's stage holds the
    # sampler, but its sort phase replaces the forward's peak instead of adding to it (profile_run), which leaves
    # it 0.252 GiB per layer against the 5070 Ti's 0.249
    assert older.kv_needed == 262_144 * 16 * 2048 and older.gpu_total == 16_303 * MiB
    first, last = older.extra["stages"]
    assert first["kv_available"] // 16 < last["kv_available"] // 32


@pytest.mark.parametrize("version,cfg,gpu,generation", [
    ("0.8.4", VllmConfig(pipeline_parallel_size=2), "A6000", "v0"),  # PP without Ray: V0 on 0.8.x
    ("0.8.4", VllmConfig(pipeline_parallel_size=2, distributed_executor_backend="ray"), "A6000", "v1"),
    ("0.9.0", VllmConfig(pipeline_parallel_size=2), "A6000", "v1"),
    ("0.8.4", VllmConfig(kv_cache_dtype="fp8"), "NVIDIA RTX A6000", "v0"),  # no FA3 before Hopper
    ("0.8.4", VllmConfig(kv_cache_dtype="fp8"), "NVIDIA H100 80GB HBM3", "v1"),
    ("0.8.4", VllmConfig(kv_cache_dtype="fp8"), "NVIDIA GH200 480GB", "v1"),
    ("0.8.4", VllmConfig(kv_cache_dtype="fp8"), "NVIDIA B200", "v0"),  # FA3's fp8 is capability 9.x only
    ("0.8.4", VllmConfig(kv_cache_dtype="fp8"), "", "v0"),  # an unnamed GPU is not assumed to be Hopper
    ("0.10.0", VllmConfig(kv_cache_dtype="fp8"), "NVIDIA RTX A6000", "v1"),
    ("0.10.1", VllmConfig(use_v1_env="0"), "", "v0"),
    ("0.11.0", VllmConfig(use_v1_env="0"), "", "v1"),  # V0 is gone
    ("0.9.2", VllmConfig(num_scheduler_steps=8), "", "v0"),
    ("0.7.3", VllmConfig(use_v1_env="1"), "", "v1"),
    ("0.7.3", VllmConfig(), "", "v0"),
    # below compute capability 8.0 (T4, V100), 0.8.0-0.10.1 fall back to V0; 0.10.2 dropped the check
    ("0.8.0", VllmConfig(), "Tesla T4", "v0"), ("0.10.1", VllmConfig(), "Tesla T4", "v0"),
    ("0.10.2", VllmConfig(), "Tesla T4", "v1"), ("0.9.2", VllmConfig(), "Tesla V100-SXM2-32GB", "v0"),
    ("0.9.2", VllmConfig(), "Quadro RTX 6000", "v0"), ("0.9.2", VllmConfig(), "NVIDIA RTX 6000 Ada Generation", "v1"),
    ("0.9.2", VllmConfig(), "NVIDIA A10G", "v1"), ("0.9.2", VllmConfig(), "AMD Instinct MI300X", "v1"),
])
def test_engine_generation_by_release_and_feature(version, cfg, gpu, generation):
    profile, reason = engine_generation(version, cfg, gpu)
    assert profile.engine == generation
    assert bool(reason) == (generation != P.vllm_profile(version).engine)


def test_forced_v0_uses_v0_graph_capture_and_budget():
    facts = catalog_facts("meta-llama/Llama-3.1-8B")
    cfg = VllmConfig(pipeline_parallel_size=2, max_model_len=8192)
    est = estimate_vllm(facts, A6000, cfg, version="0.8.4")
    assert est.extra["engine_generation"] == "v0"
    assert est.notes[0] == "V0 engine: pipeline parallelism without the Ray executor"
    assert est.extra["max_num_batched_tokens"] == 8192  # V0 without chunked prefill profiles the whole prompt


@pytest.mark.parametrize("version,max_len,tokens,chunked", [
    ("0.4.3", 65_536, 65_536, False),  # no auto chunked prefill yet: the whole prompt is profiled
    ("0.5.4", 65_536, 512, True), ("0.6.4", 65_536, 2048, True), ("0.6.4", 32_768, 32_768, False),
])
def test_v0_chunked_prefill_defaults_by_version(version, max_len, tokens, chunked):
    profile = P.vllm_profile(version)
    batched, seqs, on = default_batching(profile, A6000, "", max_len, None, version)
    assert (on, seqs) == (chunked, 256)
    assert (batched if on else max(batched, max_len)) == tokens


H100, A100_80, H200, B200, GB10 = 81_559 * MiB, 81_920 * MiB, 143_771 * MiB, 183_359 * MiB, 124_610 * MiB


@pytest.mark.parametrize("version,total,name,expected", [
    # 0.8.0-0.8.3: the device name decides the tokens, 1024 sequences everywhere
    ("0.8.3", H100, "NVIDIA H100 80GB HBM3", (8192, 1024)), ("0.8.3", A6000, "NVIDIA RTX A6000", (2048, 1024)),
    ("0.8.3", 96 * 1024 * MiB, "NVIDIA H20", (2048, 1024)),  # 96 GB, but not named H100/H200
    ("0.8.3", 97_871 * MiB, "NVIDIA GH200 480GB", (8192, 1024)),  # "gh200" holds "h200"
    ("0.8.4", A6000, "NVIDIA RTX A6000", (2048, 256)), ("0.8.4", H200, "NVIDIA H200", (8192, 1024)),
    # 0.8.5: memory, A100 included; 0.9.0: A100 on the small tier
    ("0.8.5", 96 * 1024 * MiB, "NVIDIA H20", (8192, 1024)), ("0.8.5", A100_80, "NVIDIA A100-SXM4-80GB", (8192, 1024)),
    ("0.9.0", A100_80, "NVIDIA A100-SXM4-80GB", (2048, 256)), ("0.11.0", H100, "", (8192, 1024)),
    # 0.28.0: >= 160 GiB is its own tier; H200 (140 GiB) stays at 8192
    ("0.27.1", B200, "NVIDIA B200", (8192, 1024)), ("0.28.0", B200, "NVIDIA B200", (16384, 1024)),
    ("0.28.0", H200, "NVIDIA H200", (8192, 1024)),
    # a GB10's unified memory never makes it a big GPU: NVML has no total for it, which arg_utils reads as 0 from
    # 0.8.5 (the 0.11.0 log of search-index file 9009555428: 2,048 tokens on a GB10); by name from 0.33.0; and
    # before 0.8.5 it is not named H100/H200
    ("0.8.4", GB10, "NVIDIA GB10", (2048, 256)), ("0.8.5", GB10, "NVIDIA GB10", (2048, 256)),
    ("0.11.0", GB10, "NVIDIA GB10", (2048, 256)), ("0.30.0", GB10, "NVIDIA GB10", (2048, 256)),
    ("0.32.0", GB10, "NVIDIA GB10", (2048, 256)), ("0.33.0", GB10, "NVIDIA GB10", (2048, 256)),
    # ... while a discrete card of that memory is big (huge from 0.28.0 only at 160 GiB)
    ("0.30.0", GB10, "NVIDIA RTX PRO 6000 Blackwell Server Edition", (8192, 1024)),
    # the neighbours as GPUStack names them: under 70 GiB the small tier at every release from 0.8.5
    ("0.19.0", 46_068 * MiB, "NVIDIA L40S", (2048, 256)), ("0.19.0", 15_360 * MiB, "Tesla T4", (2048, 256)),
    ("0.19.0", 24_564 * MiB, "NVIDIA GeForce RTX 4090", (2048, 256)),
    ("0.19.0", H100, "NVIDIA H100 80GB HBM3", (8192, 1024)), ("0.19.0", 95_830 * MiB, "NVIDIA H100 NVL", (8192, 1024)),
    # every A100 spelling holds "a100": the PCIe 80 GB too; an A800 (the export part) does not
    ("0.19.0", A100_80, "NVIDIA A100 80GB PCIe", (2048, 256)), ("0.19.0", A100_80, "NVIDIA A800-SXM4-80GB", (8192, 1024)),
    # before 0.8.5 the name, not the memory: an 80 GB A100 and a 46 GB L40S alike
    ("0.8.4", A100_80, "NVIDIA A100-SXM4-80GB", (2048, 256)), ("0.8.4", 46_068 * MiB, "NVIDIA L40S", (2048, 256)),
    ("0.8.4", H100, "NVIDIA H100 80GB HBM3", (8192, 1024)),
    # 0.28.0's 160 GiB tier reads the memory only: an MI300X (192 GiB) as a B200
    ("0.28.0", 192 * GiB, "AMD Instinct MI300X", (16384, 1024)), ("0.27.1", 192 * GiB, "AMD Instinct MI300X", (8192, 1024)),
])
def test_v1_batching_defaults_by_release_and_gpu(version, total, name, expected):
    batched, seqs, on = default_batching(P.vllm_profile(version), total, name, 32_768, None, version)
    assert ((batched, seqs), on) == (expected, True)


@pytest.mark.parametrize("version,max_len,seqs,expected", [
    ("0.11.0", 32_768, None, (2048, 256, True)),  # "V1 always uses chunked prefills": the flag is overridden
    ("0.11.1", 32_768, None, (32_768, 256, False)),  # honoured: at least max_model_len batched tokens
    ("0.11.1", 1024, None, (2048, 256, False)),  # ... and never fewer than the default
    ("0.11.1", 1024, 1, (1024, 1, False)),  # at most max_num_seqs x max_model_len
])
def test_v1_without_chunked_prefill_from_0_11_1(version, max_len, seqs, expected):
    profile = P.vllm_profile(version)
    defaults = default_batching(profile, A6000, "", max_len, False, version)
    cfg = VllmConfig(max_model_len=max_len, max_num_seqs=seqs, enable_chunked_prefill=False)
    assert (*batch_sizes(cfg, defaults, max_len, profile.engine, version), defaults[2]) == expected


def test_defaulted_batched_tokens_are_at_most_sequences_times_length_from_0_11_1():
    for version, expected in (("0.11.0", 2048), ("0.11.1", 512)):
        profile = P.vllm_profile(version)
        defaults = default_batching(profile, A6000, "", 256, None, version)
        cfg = VllmConfig(max_model_len=256, max_num_seqs=2)
        assert batch_sizes(cfg, defaults, 256, profile.engine, version) == (expected, 2)


@pytest.mark.parametrize("version,tokens,seqs", [("0.10.0", 128, 256), ("0.10.1", 128, 128), ("0.11.0", 512, 256)])
def test_default_sequences_are_capped_by_batched_tokens_from_0_10_1(version, tokens, seqs):
    facts = catalog_facts("meta-llama/Llama-3.1-8B")
    est = estimate_vllm(facts, A6000, VllmConfig(max_model_len=128, max_num_batched_tokens=tokens), version=version)
    assert (est.extra["max_num_batched_tokens"], est.max_num_seqs) == (tokens, seqs)
    given = estimate_vllm(facts, A6000, VllmConfig(max_model_len=128, max_num_batched_tokens=tokens,
                                                   max_num_seqs=300), version=version)
    assert given.max_num_seqs == 300  # a given value is the user's: vLLM does not cap it


@pytest.mark.parametrize("version,flags,refusal", [
    ("0.10.0", {"max_num_batched_tokens": 128}, "max_num_batched_tokens (128) must be greater than or equal to "
                                                "max_num_seqs (256)."),
    ("0.10.1", {"max_num_batched_tokens": 128}, None),  # the default sequences are capped at 128
    ("0.11.0", {"max_num_batched_tokens": 128, "max_num_seqs": 200}, "max_num_batched_tokens (128) must be greater "
                                                                     "than or equal to max_num_seqs (200)."),
    ("0.11.1", {"max_num_batched_tokens": 4096, "enable_chunked_prefill": False},
     "max_num_batched_tokens (4096) is smaller than max_model_len (8192). This effectively limits the maximum "
     "sequence length to max_num_batched_tokens and makes vLLM reject longer sequences. Please increase "
     "max_num_batched_tokens or decrease max_model_len."),
    ("0.11.0", {"max_num_batched_tokens": 4096, "enable_chunked_prefill": False}, None),  # V1 chunks regardless
    ("0.11.1", {"enable_chunked_prefill": False}, None),  # unset: the whole length is batched
    ("0.6.4", {"max_num_batched_tokens": 4096, "enable_chunked_prefill": False},
     "max_num_batched_tokens (4096) is smaller than max_model_len (8192). This effectively limits the maximum "
     "sequence length to max_num_batched_tokens and makes vLLM reject longer sequences. Please increase "
     "max_num_batched_tokens or decrease max_model_len."),
    ("0.6.4", {}, None),
])
def test_scheduler_refuses_batches_smaller_than_the_sequences_or_an_unchunked_prompt(version, flags, refusal):
    cfg = VllmConfig(max_model_len=8192, **flags)
    est = estimate_vllm(catalog_facts("meta-llama/Llama-3.1-8B"), A6000, cfg, version=version)
    assert est.extra["scheduler_refusal"] == refusal


@pytest.mark.parametrize("version,env,chunk", [
    ("0.11.2", None, 32_768), ("0.12.0", None, 16_384), ("0.17.0", None, 16_384), ("0.18.0", None, None),
    ("0.11.0", "4096", 4096), ("0.17.0", " 65536 ", 65_536), ("0.18.0", "4096", None),  # 0.18 reads no variable
])
def test_fused_moe_chunk_by_release_and_env(version, env, chunk):
    assert fused_moe_chunk(version, env) == chunk


@pytest.mark.parametrize("env,message", [("abc", "must be a whole number, got 'abc'"), ("0", "at least 1, got 0"),
                                         ("1.5", "must be a whole number, got '1.5'")])
def test_a_chunk_size_vllm_cannot_read_is_refused(env, message):
    with pytest.raises(ValueError, match=message):
        fused_moe_chunk("0.11.0", env)


def test_a_dense_model_never_reads_the_chunk_size():
    # the variable is parsed only when a fused-MoE layer runs: a bad value stops a MoE model, not a dense one
    dense = VllmConfig(max_model_len=8192, fused_moe_chunk_size="abc")
    est = estimate_vllm(catalog_facts("meta-llama/Llama-3.1-8B"), 80 * GiB, dense, version="0.11.0")
    assert est.extra["moe_workspace"] == 0
    with pytest.raises(ValueError, match="VLLM_FUSED_MOE_CHUNK_SIZE must be a whole number, got 'abc'"):
        estimate_vllm(catalog_facts("Qwen/Qwen3-30B-A3B"), 80 * GiB, dense, version="0.11.0")


def test_moe_workspace_of_a_large_batch_follows_the_release():
    facts = catalog_facts("Qwen/Qwen3-30B-A3B")
    per_token = 8 * 2048 * 2 + 8 * 768 * 2  # top-8 x max(2 x 768, 2048) + top-8 x 768, bf16
    runs = {v: estimate_vllm(facts, 80 * GiB, VllmConfig(max_model_len=8192, max_num_batched_tokens=65_536),
                             version=v).extra["moe_workspace"] for v in ("0.11.0", "0.12.0", "0.18.0")}
    held_per_token = 8 * 2048 * 2 + 8 * 2048 * 2  # 0.18: top-8 x max(768, 2048) + top-8 x max(1536, 2048), held
    assert runs == {"0.11.0": 32_768 * per_token, "0.12.0": 16_384 * per_token,
                    "0.18.0": 65_536 * held_per_token}
    chunked = VllmConfig(max_model_len=8192, max_num_batched_tokens=65_536, fused_moe_chunk_size="8192")
    assert estimate_vllm(facts, 80 * GiB, chunked, version="0.12.0").extra["moe_workspace"] == 8192 * per_token


def test_fused_moe_workspace_exact():
    facts = catalog_facts("Qwen/Qwen3-30B-A3B")  # top-8 of 128 experts, moe_intermediate 768, hidden 2048
    cache13 = 8192 * 8 * max(2 * 768, 2048) * 2
    cache2 = 8192 * 8 * 768 * 2
    assert moe_workspace(facts, 8192, 1, False) == cache13 + cache2 == 369_098_752
    fp8 = replace(facts, quant_method="fp8")
    assert moe_workspace(fp8, 8192, 1, False) == cache13 + cache2 + 8192 * 2048 + 8192 * 8 * 768
    assert moe_workspace(facts, 65_536, 1, False) == 4 * (cache13 + cache2)  # chunks of 32,768 tokens
    assert moe_workspace(facts, 8192, 2, False) == 8192 * 8 * 2048 * 2 + 8192 * 8 * 384 * 2
    assert moe_workspace(facts, 8192, 2, True) == cache13 + cache2  # EP: experts split, not their width
    assert moe_workspace(catalog_facts("meta-llama/Llama-3.1-8B"), 8192, 1, False) == 0


@pytest.mark.parametrize("version,quant,held", [
    ("0.12.0", None, False), ("0.13.0", None, False),  # fused_experts_impl per call (0.13 not read: per call kept)
    ("0.14.0", None, True), ("0.18.0", "fp8", True), ("0.33.0", None, True),  # modular kernel + WorkspaceManager
    ("0.18.0", "mxfp4", False), ("0.18.0", "awq", False),  # other experts classes: not read, per call kept
])
def test_moe_workspace_is_held_from_the_release_that_moved_it_into_the_workspace_manager(version, quant, held):
    for model in ("Qwen/Qwen3-30B-A3B", "mistralai/Mixtral-8x7B-Instruct-v0.1"):
        assert moe_workspace_held(version, replace(catalog_facts(model), quant_method=quant)) is held
    assert moe_workspace_held("0.18.0", catalog_facts("meta-llama/Llama-3.1-8B")) is False  # dense


def test_held_moe_workspace_shapes_follow_triton_experts_workspace_shapes():
    qwen = catalog_facts("Qwen/Qwen3-30B-A3B")  # top-8, moe_intermediate 768 (N 1,536), hidden 2,048
    assert moe_workspace(qwen, 8192, 1, False, None, held=True) == 8192 * 8 * 2048 * 2 + 8192 * 8 * 2048 * 2
    # chunked (0.14-0.17: 16,384 tokens at a time): the chunk's workspaces plus the whole batch's output
    assert moe_workspace(qwen, 32_768, 1, False, 16_384, held=True) == \
        16_384 * 8 * 2048 * 2 * 2 + 32_768 * 2048 * 2
    mixtral = catalog_facts("mistralai/Mixtral-8x7B-Instruct-v0.1")  # top-2, intermediate 14,336, hidden 4,096
    assert moe_workspace(mixtral, 8192, 1, False, None, held=True) == \
        8192 * 2 * 14_336 * 2 + 8192 * 2 * 28_672 * 2
    assert moe_workspace(mixtral, 8192, 1, False, None) == 8192 * 2 * 28_672 * 2 + 8192 * 2 * 14_336 * 2
    # TP 4 narrows N to 2 x 3,584: workspace13 is then K wide, workspace2 N wide
    assert moe_workspace(mixtral, 8192, 4, False, None, held=True) == \
        8192 * 2 * 4096 * 2 + 8192 * 2 * 7168 * 2
    assert moe_workspace(mixtral, 8192, 4, True, None, held=True) == \
        8192 * 2 * 14_336 * 2 + 8192 * 2 * 28_672 * 2  # EP: whole experts per rank


@pytest.mark.parametrize("model", ["Qwen/Qwen3-30B-A3B", "mistralai/Mixtral-8x7B-Instruct-v0.1"])
def test_a_held_moe_workspace_adds_to_the_profiles_sampler_phase(model, monkeypatch):
    facts = catalog_facts(model)
    cfg = VllmConfig(max_model_len=8192, max_num_batched_tokens=8192, max_num_seqs=256)
    held = estimate_vllm(facts, 141 * GiB, cfg, version="0.14.0", gpu_name="NVIDIA H200")
    assert held.extra["moe_workspace_held"] is True
    assert held.extra["moe_workspace"] == moe_workspace(facts, 8192, 1, False, 16_384, held=True)
    # the same release with the workspace per call: the sampler phase differs by exactly the held buffer
    monkeypatch.setattr(P, "VLLM_MOE_WORKSPACE_SINCE", "99.0.0")
    per_call = estimate_vllm(facts, 141 * GiB, cfg, version="0.14.0", gpu_name="NVIDIA H200")
    assert per_call.extra["moe_workspace_held"] is False
    assert held.extra["sampler_peak"] - per_call.extra["sampler_peak"] == held.extra["moe_workspace"]
    assert held.activation == max(held.extra["forward_peak"], held.extra["sampler_peak"])
    assert per_call.kv_available - held.kv_available == \
        max(held.extra["forward_peak"], held.extra["sampler_peak"]) - \
        max(per_call.extra["forward_peak"], per_call.extra["sampler_peak"])


def test_footprint_counts_outside_budget_once():
    facts = catalog_facts("Qwen/Qwen3-8B")
    est = estimate_vllm(facts, A6000, VllmConfig(gpu_memory_utilization=0.45, max_model_len=8192), version="0.11.0")
    assert est.footprint == est.requested + P.CUDA_CONTEXT + est.cuda_graphs  # graphs not profiled in 0.11
    # the sampler warm-up is its own term (GSG043), not part of the headroom margin
    assert est.headroom_needed == est.footprint - est.requested + int(P.ALLOCATOR_SLACK * est.requested)
    profiled = estimate_vllm(facts, A6000, VllmConfig(gpu_memory_utilization=0.45, max_model_len=8192),
                             version="0.21.0")
    assert profiled.footprint == profiled.requested + P.CUDA_CONTEXT


def test_engine_entry_reads_the_partition_env_and_each_stage_gpu():
    from gpustack_guard.core.memory import engine
    from gpustack_guard.core.spec.model import Policy

    facts = replace(catalog_facts("Qwen/Qwen3-30B-A3B"), max_position_embeddings=32_768)
    gpus = [(16_303 * MiB, "NVIDIA GeForce RTX 5070 Ti"), (32_607 * MiB, "NVIDIA GeForce RTX 5090 D")]
    flags = {"pipeline-parallel-size": "2", "max-model-len": "8192"}
    est = engine.estimate("vllm", facts, gpus, flags, "0.15.2", Policy(), env={"VLLM_PP_LAYER_PARTITION": "16,32"})
    assert [(s["layers"], s["gpu_total"]) for s in est.extra["stages"]] == [(16, 16_303 * MiB), (32, 32_607 * MiB)]
    even = engine.estimate("vllm", facts, gpus, flags, "0.15.2", Policy())
    assert [s["layers"] for s in even.extra["stages"]] == [24, 24]
    with pytest.raises(ValueError, match="VLLM_PP_LAYER_PARTITION"):
        engine.estimate("vllm", facts, gpus, flags, "0.15.2", Policy(), env={"VLLM_PP_LAYER_PARTITION": "a,b"})


# --- issue 12 accuracy: MXFP4 padding per MoE backend, NCCL inside the budget before 0.11 ----------------------

def test_mxfp4_marlin_pads_gpt_oss_experts_to_the_kernel_shapes():
    """Marlin: intermediate 2880 -> 2944 (x128), hidden 2880 -> 3072 (x256); 128 experts, bf16 biases."""
    from gpustack_guard.core.memory.engines.vllm import mxfp4_padding_per_layer

    facts = catalog_facts("openai/gpt-oss-120b")

    def experts(h, i):
        return 128 * (3 * h * i // 2 + 3 * h * i // 32 + (2 * i + h) * 2)

    per_layer = experts(3072, 2944) - experts(2880, 2880)
    assert per_layer == 152_993_792
    assert mxfp4_padding_per_layer(facts, 1, False, "marlin") == per_layer
    assert mxfp4_padding_per_layer(facts, 1, False, "flashinfer") == experts(3072, 3072) - experts(2880, 2880)
    assert mxfp4_padding_per_layer(facts, 1, False, "triton") == 0  # 2880 is already a multiple of 64
    # TP2: each rank holds 1440 intermediate columns, padded to 1536
    assert mxfp4_padding_per_layer(facts, 2, False, "marlin") == experts(3072, 1536) - experts(2880, 1440)


def test_mxfp4_backend_by_gpu_class_and_version():
    from gpustack_guard.core.memory.engines.vllm import mxfp4_backend

    assert mxfp4_backend("0.10.1", "NVIDIA H100 80GB HBM3") == "marlin"  # vllm#23278's log
    assert mxfp4_backend("0.14.1", "NVIDIA H100 80GB HBM3") == "triton"  # vllm#33155's log
    # triton_kernels shipped with vLLM from 0.12.0 (PR #28788); a pip install of 0.10.2-0.11.x lacked it
    assert mxfp4_backend("0.11.2", "NVIDIA H100 80GB HBM3") == "marlin"
    assert mxfp4_backend("0.12.0", "NVIDIA H100 80GB HBM3") == "triton"
    assert mxfp4_backend("0.14.1", "NVIDIA A100-SXM4-80GB") == "marlin"  # compute capability 8.0
    assert mxfp4_backend("0.14.1", "NVIDIA L40S") == "marlin"
    assert mxfp4_backend("0.14.1", "NVIDIA B200") == "flashinfer"
    assert mxfp4_backend("0.14.1", "NVIDIA GeForce RTX 5090") == "triton"  # capability 12.0
    assert mxfp4_backend("0.14.1", "") is None


@pytest.mark.parametrize("version,flashinfer,triton_kernels", [
    ("0.8.5", False, False),  # gpustack/gpustack@v0.6.2: no FlashInfer
    ("0.9.2", True, False), ("0.10.1.1", True, False), ("0.11.0", True, False), ("0.11.2", True, False),
    ("0.12.0", True, True), ("0.14.1", True, True),
])
def test_gpustack_image_of_each_release(version, flashinfer, triton_kernels):
    """profiles.VLLM_GPUSTACK_IMAGES: the image GPUStack runs each release from decides FlashInfer's sampler
    (0.9-0.11) and the MXFP4 MoE kernel on Hopper (triton_kernels); the Hopper row follows it."""
    from gpustack_guard.core.memory.engines.vllm import mxfp4_backend

    image = P.vllm_gpustack_image(version)
    assert (image.flashinfer, image.triton_kernels) == (flashinfer, triton_kernels)
    assert mxfp4_backend(version, "NVIDIA H100 80GB HBM3") == ("triton" if triton_kernels else "marlin")
    assert P.VLLM_MXFP4_HOPPER_TRITON_SINCE == "0.12.0"


@pytest.mark.parametrize("model,marlin_padding", [
    ("openai/gpt-oss-120b", 36 * 152_993_792), ("openai/gpt-oss-20b", 24 * 38_248_448)])
def test_mxfp4_weights_on_hopper_follow_what_the_image_holds(monkeypatch, model, marlin_padding):
    """gpt-oss on an H100 with vLLM 0.11.0: GPUStack's runner image has no triton_kernels, so Marlin's padded
    experts; an image that holds it (the official image does not either: docker/Dockerfile@v0.11.0) books
    Triton's unpadded ones, the same as 0.12.0 where vLLM vendors the package."""
    facts = catalog_facts(model)
    h100 = "NVIDIA H100 80GB HBM3"
    runner = estimate_vllm(facts, 81_559 * MiB, VllmConfig(), version="0.11.0", gpu_name=h100)
    vendored = estimate_vllm(facts, 81_559 * MiB, VllmConfig(), version="0.12.0", gpu_name=h100)
    assert runner.extra["mxfp4_backend"] == "marlin" and vendored.extra["mxfp4_backend"] == "triton"
    assert runner.weights - vendored.weights == marlin_padding
    with_kernels = P.VllmImageRow("0.10.0", True, True, "an image with triton_kernels installed by hand")
    monkeypatch.setattr(P, "vllm_gpustack_image", lambda version: with_kernels)
    by_hand = estimate_vllm(facts, 81_559 * MiB, VllmConfig(), version="0.11.0", gpu_name=h100)
    assert by_hand.extra["mxfp4_backend"] == "triton" and by_hand.weights == vendored.weights


@pytest.mark.parametrize("model,vocab", [("Qwen/Qwen3-4B", 151_936), ("meta-llama/Llama-3.1-8B", 128_256)])
def test_sampler_of_install_dependent_releases_follows_the_image(monkeypatch, model, vocab):
    """0.9.0-0.11.0 sample with FlashInfer wherever it imports: GPUStack's images hold it (14 B per row and
    entry); an image without it sorts (38 B from 128 rows), as VLLM_USE_FLASHINFER_SAMPLER=0 makes any image."""
    facts = catalog_facts(model)
    cfg = VllmConfig(max_model_len=4096, max_num_seqs=256, max_num_batched_tokens=2048)
    image = estimate_vllm(facts, 24 * GiB, cfg, version="0.10.2")
    sorting = estimate_vllm(facts, 24 * GiB, replace(cfg, flashinfer_sampler_env="0"), version="0.10.2")
    assert sorting.extra["sampler_peak"] - image.extra["sampler_peak"] == 256 * vocab * (38 - 14)
    without = P.VllmImageRow("0.10.0", False, False, "an image without FlashInfer")
    monkeypatch.setattr(P, "vllm_gpustack_image", lambda version: without)
    assert P.vllm_sampler_row("0.10.2").kernel == "torch-sort" and P.vllm_sampler_row("0.11.1").kernel == "torch-sort"
    assert estimate_vllm(facts, 24 * GiB, cfg, version="0.10.2").extra["sampler_peak"] == \
        sorting.extra["sampler_peak"]
    flashinfer = estimate_vllm(facts, 24 * GiB, replace(cfg, flashinfer_sampler_env="1"), version="0.10.2")
    assert flashinfer.extra["sampler_peak"] == image.extra["sampler_peak"]  # an image of FlashInfer's, opted in


def test_gpt_oss_120b_weights_on_h100_with_marlin_match_the_log():
    """vllm#23278: 'Model loading took 65.9651 GiB' (Marlin on an H100, 0.10.1.x)."""
    facts = catalog_facts("openai/gpt-oss-120b")
    est = estimate_vllm(facts, 81_559 * MiB, VllmConfig(), version="0.10.1", gpu_name="NVIDIA H100 80GB HBM3")
    unpadded = estimate_vllm(facts, 81_559 * MiB, VllmConfig(), version="0.10.1")
    assert est.weights - unpadded.weights == 36 * 152_993_792
    # 65.928 GiB: 65.897 of parameters and padding, and the FP32 YaRN cos/sin cache gpt_oss.py asks for (131,072
    # rows = 4,096 x 32, 64 wide, 4 B: 32 MiB; profiles.VLLM_ROPE_FP32_ARCHITECTURES)
    assert est.weights == 70_756_592_256 + 131_072 * 64 * 4 == 70_790_146_688
    assert est.extra["mxfp4_backend"] == "marlin" and abs(est.weights / GiB - 65.9651) < 0.1  # the logged figure


def test_nccl_buffers_inside_the_budget_before_0_11_outside_from_it():
    """vllm PR #25359 (0.11.0): distributed init moved before the memory snapshot."""
    facts = catalog_facts("meta-llama/Llama-3.1-8B")
    cfg = VllmConfig(tensor_parallel_size=2, max_model_len=8192, gpu_memory_utilization=0.9)
    old = estimate_vllm(facts, 80 * GiB, cfg, version="0.10.2", gpu_name="NVIDIA H100 80GB HBM3")
    new = estimate_vllm(facts, 80 * GiB, cfg, version="0.11.0", gpu_name="NVIDIA H100 80GB HBM3")
    assert old.extra["comm_buffers_in_budget"] == P.COMM_BUFFERS and old.extra["comm_buffers"] == 0
    assert new.extra["comm_buffers_in_budget"] == 0 and new.extra["comm_buffers"] == P.COMM_BUFFERS
    assert old.footprint == old.requested + P.CUDA_CONTEXT + old.cuda_graphs  # counted once, inside
    assert new.footprint == new.requested + P.CUDA_CONTEXT + P.COMM_BUFFERS + new.cuda_graphs
    single = estimate_vllm(facts, 80 * GiB, VllmConfig(max_model_len=8192), version="0.10.2")
    assert single.extra["comm_buffers_in_budget"] == 0  # no NCCL on one GPU


def test_v1_profile_peak_is_the_larger_of_forward_and_sampler_by_release():
    """profile_run (gpu_model_runner.py) runs _dummy_run, then _dummy_sampler_run on its last hidden states: the
    forward's intermediates are freed by then, the hidden states of all batched tokens are not. So the peak is
    max(forward, hidden + sampler), the sampler's share by release (profiles.VLLM_SAMPLER_ROWS): torch's sort
    (38 B per row and entry from 128 rows) from 0.8, Triton (14 B) from 0.17, FlashInfer (14 B) from 0.21, the
    V2 runner's plain logits (4 B) in 0.29-0.32, FlashInfer again in its profile from 0.33."""
    facts = catalog_facts("Qwen/Qwen3-4B")  # vocabulary 151,936, hidden 2,560
    cfg = VllmConfig(max_model_len=4096, max_num_seqs=256, max_num_batched_tokens=2048)
    hidden = 2048 * 2560 * 2
    # V0 (0.7.3) profiles the whole 4,096-token prompt unchunked: twice the hidden states, the same sort
    expected = {"0.7.3": 2 * hidden + 256 * 151_936 * 38, "0.11.0": hidden + 256 * 151_936 * 14,
                "0.11.1": hidden + 256 * 151_936 * 38, "0.17.0": hidden + 256 * 151_936 * 14,
                "0.21.0": hidden + 256 * 151_936 * 14, "0.29.0": hidden + 256 * 151_936 * 4,
                "0.33.0": hidden + 256 * 151_936 * 14}
    by_version = {v: estimate_vllm(facts, 24 * GiB, cfg, version=v) for v in expected}
    assert {v: e.extra["sampler_peak"] for v, e in by_version.items()} == expected
    assert expected["0.11.1"] == 1_488_519_168  # 0.9.0-0.11.0 take FlashInfer in GPUStack's runner image
    for version, est in by_version.items():
        assert est.activation == max(est.extra["forward_peak"], expected[version])
    # the forward is the same in every V1 release here (piecewise inductor, Qwen3-4B: the attention output 4,096,
    # two residuals 2 x 2,560, gate_up and SiluAndMul's output 3 x 9,728 per token, + torch's cuBLAS workspace):
    # only the sampler phase moves the peak
    forward = 2048 * (4096 + 2 * 2560 + 3 * 9728) * 2 + P.CUBLAS_WORKSPACE_DEFAULT
    assert by_version["0.11.0"].extra["forward_peak"] == by_version["0.33.0"].extra["forward_peak"] == forward
    assert by_version["0.29.0"].activation == expected["0.29.0"]  # the plain pass is above the forward: it binds


@pytest.mark.parametrize("moving", ["latest", "main", "nightly-2026", "a1b2c3d"])
def test_a_moving_tag_gets_the_default_release_not_the_oldest_profile(moving):
    assert P.arithmetic_version("vllm", moving) == P.arithmetic_version("vllm", None) == "0.11.0"
    assert P.vllm_profile(moving) is P.vllm_profile(None) is not P.VLLM_PROFILES[0]
    assert P.sglang_profile(moving) is P.sglang_profile(None)
    assert P.arithmetic_version("vllm", "v0.8.5") == "v0.8.5"


def test_v07_gpt_oss_on_one_h100_at_011_is_refused_like_vllm27508():
    """vllm#27508 (torch 2.8.0 pip install, gmu 0.95, 1024 batched tokens): 'Available KV cache memory: 1.71 GiB',
    refused at 131,072. Marlin weights (no triton_kernels) and the sampler sort over 1024 x 201,088 entries."""
    facts = catalog_facts("openai/gpt-oss-120b")
    # a bare pip install of 0.11.0 has no FlashInfer: VLLM_USE_FLASHINFER_SAMPLER=0 books the sort it runs
    cfg = VllmConfig(gpu_memory_utilization=0.95, max_num_batched_tokens=1024, flashinfer_sampler_env="0")
    est = estimate_vllm(facts, 81_559 * MiB, cfg, version="0.11.0", gpu_name="NVIDIA H100 80GB HBM3")
    assert est.extra["mxfp4_backend"] == "marlin" and est.max_num_seqs == 1024
    assert est.extra["sampler_peak"] == 1024 * 201_088 * 38 + 1024 * 2880 * 2 == 7_830_634_496
    assert est.activation == est.extra["sampler_peak"]  # the sort's phase is larger than the forward's
    assert est.verdict == "kv-below-max-model-len"
    # gmu x CUDA's 79.19 GiB, not NVML's 81,559 MiB (profiles.CUDA_TOTALS): 1.66 GiB computed, 1.71 logged;
    # with NVML's total it was 2,281,733,095 (2.13 GiB), 0.95 x the 491,194,942 B driver reserve more; the 32 MiB
    # FP32 rope cache is inside the weights
    assert est.kv_available == 1_781_543_468 == 2_281_733_095 - math.ceil(0.95 * 85_520_809_984) + \
        math.ceil(0.95 * int(79.19 * GiB)) - 131_072 * 64 * 4


def test_pp_whole_model_check_uses_the_smallest_available_memory_and_the_smallest_block_count():
    est = _v09_estimate()
    first, last = est.extra["stages"]
    assert est.kv_available == min(first["kv_available"], last["kv_available"]) == first["kv_available"]
    per_layer_blocks = [st["kv_available"] // (16 * st["layers"] * 2048) for st in (first, last)]
    assert est.kv_capacity_tokens == 16 * min(per_layer_blocks)  # every worker gets the fewest blocks
    assert est.estimated_max_model_len == est.kv_available // (48 * 2048) // 16 * 16


@pytest.mark.parametrize("rows,per_entry", [(1, 30), (2, 50), (127, 50), (128, 38), (129, 38), (1024, 38)])
def test_sampler_sort_bytes_at_every_path_boundary(rows, per_entry):
    """SortStable.cu: one row the large-segment sort, 2-127 the full sort, from 128 the segmented sort."""
    from gpustack_guard.core.memory.engines.vllm import profiled_sampler, sampler_phase_bytes, sampler_sort_peak_bytes

    assert sampler_sort_peak_bytes(rows) == per_entry
    facts = catalog_facts("Qwen/Qwen3-4B")  # vocabulary 151,936, hidden 2,560
    assert sampler_phase_bytes(facts, 8192, rows, "torch-sort") == 8192 * 2560 * 2 + rows * 151_936 * per_entry
    # the profile samples min(max_num_seqs, batched tokens) rows, whichever side is the smaller one
    sort_row = P.vllm_sampler_row("0.11.1")  # FlashInfer's sampler opt-in: every install sorts
    assert profiled_sampler(facts, 8192, rows, "v1", sort_row) == sampler_phase_bytes(facts, 8192, rows, "torch-sort")
    assert profiled_sampler(facts, rows, 8192, "v1", sort_row) == sampler_phase_bytes(facts, rows, rows, "torch-sort")


@pytest.mark.parametrize("rows,per_entry", [(7, 50), (8, 14), (1024, 14)])
def test_triton_top_k_top_p_from_eight_rows_and_the_sort_below(rows, per_entry):
    """0.17's apply_top_k_top_p takes apply_top_k_top_p_triton when 'logits.shape[0] >= 8', else the sort."""
    from gpustack_guard.core.memory.engines.vllm import sampler_bytes_per_entry

    assert sampler_bytes_per_entry("triton", rows) == per_entry
    assert sampler_bytes_per_entry("flashinfer", rows) == 14  # no sort whatever the rows
    assert sampler_bytes_per_entry("plain", rows) == 4


_AMPERE = ("NVIDIA A100-SXM4-80GB", "NVIDIA A10", "NVIDIA RTX A6000", "NVIDIA GeForce RTX 3090",
           "Tesla T4", "NVIDIA GeForce RTX 2080 Ti", "Quadro RTX 8000")  # and Turing: capability 7.5, below 9.0
_ADA = ("NVIDIA L40S", "NVIDIA L4", "NVIDIA RTX 6000 Ada Generation", "NVIDIA GeForce RTX 4090")
_HOPPER = ("NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA H20", "NVIDIA GH200 480GB")
_SM100 = ("NVIDIA B200", "NVIDIA GB200")
_SM120 = ("NVIDIA GeForce RTX 5090", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition")
# around the Hopper boundary (0.12.0) and for what is not a release (the 0.11.0 default applies)
_VERSIONS = (None, "latest", "0.10.1", "0.11.2", "0.12.0", "0.12.1", "0.14.1")


@pytest.mark.parametrize("gpu", _AMPERE + _ADA + _HOPPER + _SM100 + _SM120)
def test_mxfp4_backend_for_each_gpu_class_around_each_boundary(gpu):
    from gpustack_guard.core.memory.engines.vllm import mxfp4_backend

    if gpu in _HOPPER:  # Triton only once vLLM ships triton_kernels (0.12.0)
        expected = ["marlin"] * 4 + ["triton"] * 3
    else:
        one = "marlin" if gpu in _AMPERE + _ADA else "flashinfer" if gpu in _SM100 else "triton"
        expected = [one] * len(_VERSIONS)
    assert [mxfp4_backend(v, gpu) for v in _VERSIONS] == expected


# --- NCCL and custom all-reduce by interconnect (profiles.GPU_INTERCONNECT, CUSTOM_ALL_REDUCE_*) ---------------

@pytest.mark.parametrize("name,link", [
    ("NVIDIA H100 80GB HBM3", "nvlink"), ("NVIDIA H100 PCIe", "pcie"), ("NVIDIA H100 NVL", "unknown"),
    ("H100", "unknown"), ("NVIDIA A100-SXM4-80GB", "nvlink"), ("NVIDIA A100 80GB PCIe", "pcie"),
    ("NVIDIA A100-PCIE-40GB", "pcie"), ("NVIDIA A100", "unknown"), ("NVIDIA A800-SXM4-80GB", "nvlink"),
    ("NVIDIA H200", "nvlink"), ("NVIDIA H200 NVL", "unknown"), ("NVIDIA H20", "nvlink"), ("NVIDIA H800", "nvlink"),
    ("NVIDIA GH200 480GB", "nvlink"), ("NVIDIA B200", "nvlink"), ("NVIDIA GB200", "nvlink"),
    ("Tesla V100-SXM2-32GB", "nvlink"), ("Tesla V100-PCIE-16GB", "pcie"),
    ("NVIDIA L40S", "pcie"), ("NVIDIA L40", "pcie"), ("NVIDIA L4", "pcie"), ("NVIDIA L20", "pcie"),
    ("NVIDIA A10", "pcie"), ("NVIDIA A10G", "pcie"), ("NVIDIA A40", "pcie"), ("NVIDIA A30", "pcie"),
    ("NVIDIA A2", "pcie"), ("Tesla T4", "pcie"), ("NVIDIA RTX A6000", "pcie"),
    ("NVIDIA RTX 6000 Ada Generation", "pcie"), ("NVIDIA RTX 5000 Ada Generation", "pcie"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "pcie"), ("Quadro RTX 8000", "pcie"),
    ("NVIDIA GeForce RTX 4090", "no_p2p"), ("NVIDIA GeForce RTX 5070 Ti", "no_p2p"), ("RTX 3090", "no_p2p"),
    ("NVIDIA TITAN RTX", "no_p2p"), ("NVIDIA GeForce GTX 1080 Ti", "no_p2p"),
    ("", "unknown"), ("AMD Instinct MI300X", "unknown"), ("Tesla P100", "unknown"),
])
def test_interconnect_by_gpu_name(name, link):
    from gpustack_guard.core.memory.interconnect import interconnect
    assert interconnect(name) == link


NCCL_BYTES = 805_306_368 - 25_165_824  # 0.75 GiB less three 8 MiB custom all-reduce buffers
DG = NCCL_BYTES  # the TP device group's NCCL communicator the profile makes (profiles.VLLM_DEVICE_GROUP_NCCL, 0.6.5+)


def _parallel(gpu_name, tp=1, pp=1, version="0.10.2", disable_car=False, no_p2p=False):
    facts = catalog_facts("meta-llama/Llama-3.1-8B")
    cfg = VllmConfig(tensor_parallel_size=tp, pipeline_parallel_size=pp, max_model_len=8192,
                     gpu_memory_utilization=0.9, disable_custom_all_reduce=disable_car, nccl_p2p_disabled=no_p2p)
    return estimate_vllm(facts, 44 * GiB, cfg, version=version, gpu_name=gpu_name)


def test_custom_all_reduce_and_nccl_constants_in_bytes():
    assert P.CUSTOM_ALL_REDUCE_BUFFERS == 3 * 8_388_608 == 25_165_824
    assert P.NCCL_BUFFERS == NCCL_BYTES == 780_140_544
    assert P.NON_TORCH_PCIE_PARALLEL == 268_435_456 and P.NON_TORCH_PARALLEL == 644_245_094


@pytest.mark.parametrize("gpu,tp,pp,disable_car,non_torch,comm", [
    # PCIe-only: custom all-reduce only for a pair ("more than two PCIe-only GPUs" disables it)
    ("NVIDIA L40S", 2, 1, False, 268_435_456, 25_165_824),
    ("NVIDIA L40S", 4, 1, False, 268_435_456, 0),
    ("NVIDIA L40S", 8, 1, False, 268_435_456, 0),
    ("NVIDIA L40S", 2, 1, True, 268_435_456, 0),  # --disable-custom-all-reduce
    ("NVIDIA L40S", 1, 2, False, 268_435_456, 0),  # PP only: custom all-reduce serves the TP group
    # GeForce: no P2P, so no custom all-reduce even for a pair
    ("NVIDIA GeForce RTX 4090", 2, 1, False, 268_435_456, 0),
    ("NVIDIA GeForce RTX 4090", 4, 1, False, 268_435_456, 0),
    # NVLink: NCCL plus custom all-reduce at every supported size, NCCL alone where it is off; the TP device group's
    # communicator, made at the profile's logits gather (DG, profiles.VLLM_DEVICE_GROUP_NCCL from 0.6.5), in the
    # non-torch figure; on an NVSwitch Hopper board past two ranks NCCL 2.27's NVLS buffers too (TP x 16 channels x
    # 2 MiB, profiles.VLLM_NVLS)
    ("NVIDIA H100 80GB HBM3", 2, 1, False, 644_245_094 + DG, 805_306_368),
    ("NVIDIA H100 80GB HBM3", 8, 1, False, 644_245_094 + DG + 8 * 33_554_432, 805_306_368),
    ("NVIDIA H100 80GB HBM3", 8, 1, True, 644_245_094 + DG + 8 * 33_554_432, NCCL_BYTES),
    ("NVIDIA H100 80GB HBM3", 3, 1, False, 644_245_094 + DG + 3 * 33_554_432, NCCL_BYTES),  # not in [2, 4, 6, 8]
    ("NVIDIA H100 80GB HBM3", 16, 1, False, 644_245_094 + DG + 16 * 33_554_432, NCCL_BYTES),
    ("NVIDIA H100 80GB HBM3", 1, 2, False, 644_245_094, NCCL_BYTES),  # PP only: no TP group of three, no gather
    ("NVIDIA A100-SXM4-80GB", 8, 1, False, 644_245_094 + DG, 805_306_368),  # Ampere: no NVLS
    # unknown name: today's NVLink assumption (0.6 + 0.75 GiB)
    ("", 2, 1, False, 644_245_094 + DG, 805_306_368),
    ("", 8, 1, False, 644_245_094 + DG, 805_306_368),
    ("NVIDIA H100 NVL", 4, 1, False, 644_245_094 + DG, 805_306_368),
    ("AMD Instinct MI300X", 2, 1, False, 644_245_094 + DG, 805_306_368),
    ("NVIDIA L40S", 1, 1, False, 375_809_638, 0),  # one GPU: no NCCL, the single-GPU non-torch figure
])
def test_parallel_overheads_by_interconnect_and_custom_all_reduce_rules(gpu, tp, pp, disable_car, non_torch, comm):
    est = _parallel(gpu, tp, pp, disable_car=disable_car)
    assert est.non_torch == non_torch
    assert est.extra["comm_buffers_in_budget"] == comm and est.extra["comm_buffers"] == 0  # 0.10.x: inside


@pytest.mark.parametrize("gpu,tp,pp,disable_car,comm", [
    # NVLink by name, but NCCL has no P2P between the ranks: the peerless rows; custom all-reduce follows the name
    ("NVIDIA H100 80GB HBM3", 2, 1, False, 25_165_824),
    ("NVIDIA A100-SXM4-80GB", 8, 1, False, 25_165_824),
    ("NVIDIA A100-SXM4-80GB", 2, 1, True, 0),  # and --disable-custom-all-reduce, as a log without P2P shows it
    ("", 4, 1, False, 25_165_824),  # an unnamed GPU, taken as NVLink-connected otherwise
    ("NVIDIA H100 80GB HBM3", 1, 2, False, 0),  # PP only: no custom all-reduce, NCCL without P2P
    ("NVIDIA L40S", 2, 1, False, 25_165_824),  # already peerless: nothing changes
])
def test_a_group_nccl_reaches_without_p2p_is_booked_as_a_peerless_one(gpu, tp, pp, disable_car, comm):
    est = _parallel(gpu, tp, pp, disable_car=disable_car, no_p2p=True)
    assert est.non_torch == P.NON_TORCH_PCIE_PARALLEL == 268_435_456
    assert est.extra["comm_buffers_in_budget"] == comm and est.extra["nccl_p2p_disabled"] is True
    assert est.extra["non_torch_source"] == P.vllm_non_torch("0.10.2", "peerless").source
    # from 0.11 the buffers NCCL sets up sit outside the budget: without P2P, NCCL's SHM transport keeps its FIFOs
    # in host memory, so the measured peerless figure, with custom all-reduce's buffers where the name turns it on
    new = _parallel(gpu, tp, pp, version="0.11.0", disable_car=disable_car, no_p2p=True)
    assert (new.extra["comm_buffers_in_budget"], new.extra["comm_buffers"]) == (0, 268_435_456 + comm)


def test_without_p2p_an_nvlink_pair_gains_the_nvlink_terms_it_no_longer_pays():
    nvlink, no_p2p = _parallel("NVIDIA H100 80GB HBM3", tp=2), _parallel("NVIDIA H100 80GB HBM3", tp=2, no_p2p=True)
    # the NVLink pair's non-torch figure, PyNccl's buffers and the device group's communicator (0.6.5+)
    assert no_p2p.kv_available - nvlink.kv_available == (644_245_094 - 268_435_456) + NCCL_BYTES + DG
    single = _parallel("NVIDIA H100 80GB HBM3", tp=1, no_p2p=True)
    assert single.non_torch == _parallel("NVIDIA H100 80GB HBM3", tp=1).non_torch  # one GPU: no NCCL at all


@pytest.mark.parametrize("value,off", [("1", False), ("2", False), (" 1 ", False), ("0", True), ("", True),
                                       ("yes", True), (None, True)])
def test_nccl_p2p_disable_in_the_env_reaches_the_config_as_nccl_reads_it(value, off):
    from gpustack_guard.core.memory import engine
    from gpustack_guard.core.spec.model import Policy

    env = {} if value is None else {"NCCL_P2P_DISABLE": value}
    assert engine.vllm_config({}, Policy(), env).nccl_p2p_disabled is (not off)
    assert "NCCL_P2P_DISABLE" in engine.ENGINE_ENV  # the estimate's cache key keeps it
    facts = catalog_facts("Qwen/Qwen2-7B-Instruct")
    flags = {"tensor-parallel-size": "2", "max-model-len": "16384", "gpu-memory-utilization": "0.5"}
    gpus = [(80 * GiB, "NVIDIA A100-SXM4-80GB")] * 2
    base = engine.estimate("vllm", facts, gpus, flags, "0.10.1.1", Policy())
    given = engine.estimate("vllm", facts, gpus, flags, "0.10.1.1", Policy(), env)
    assert (given.kv_available == base.kv_available) is off


def test_pcie_kv_gains_exactly_the_terms_it_no_longer_pays():
    nvlink, pcie = _parallel("", tp=2), _parallel("NVIDIA L40S", tp=2)
    # the device group's communicator (DG) is inside the logged PCIe figure, added to the NVLink one
    assert pcie.kv_available - nvlink.kv_available == (644_245_094 - 268_435_456) + (805_306_368 - 25_165_824) + DG
    four = _parallel("NVIDIA L40S", tp=4)
    assert four.kv_available - _parallel("", tp=4).kv_available == (644_245_094 - 268_435_456) + 805_306_368 + DG


@pytest.mark.parametrize("gpu,tp,disable_car,profiled,after", [
    ("NVIDIA L40S", 2, False, 25_165_824, 805_306_368), ("NVIDIA L40S", 4, False, 0, 805_306_368),
    ("NVIDIA GeForce RTX 4090", 2, False, 0, 268_435_456), ("NVIDIA GeForce RTX 3090", 4, False, 0, 268_435_456),
    ("NVIDIA H100 80GB HBM3", 8, False, 805_306_368, 805_306_368),
    ("NVIDIA H100 80GB HBM3", 8, True, NCCL_BYTES, 805_306_368), ("", 2, False, 805_306_368, 805_306_368),
])
def test_from_0_11_the_buffers_sit_outside_the_budget(gpu, tp, disable_car, profiled, after):
    """Before 0.11 what the profile sees (PCIe: only custom all-reduce, NCCL is inside the logged non-torch);
    from 0.11 COMM_BUFFERS outside wherever NCCL has P2P (no log sizes it there), and the measured peerless
    figure (NCCL inside it) on GeForce cards without P2P, whose NCCL transport is host memory; in the footprint."""
    old = _parallel(gpu, tp, version="0.10.2", disable_car=disable_car)
    new = _parallel(gpu, tp, version="0.11.0", disable_car=disable_car)
    assert old.extra["comm_buffers_in_budget"] == profiled and old.extra["comm_buffers"] == 0
    assert new.extra["comm_buffers_in_budget"] == 0 and new.extra["comm_buffers"] == after
    # the non-torch figure stays in the budget in both, and on NVLink and unknown groups in both it holds the TP
    # device group's NCCL communicator, made at the profile's logits gather (PCIe: inside the logged figure)
    device_group = 0 if gpu in ("NVIDIA L40S", "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 3090") else NCCL_BYTES
    assert new.extra["device_group_nccl"] == old.extra["device_group_nccl"] == device_group
    assert new.non_torch == old.non_torch
    assert new.footprint == new.requested + P.CUDA_CONTEXT + after + new.cuda_graphs
    assert old.footprint == old.requested + P.CUDA_CONTEXT + old.cuda_graphs


def test_disable_custom_all_reduce_flag_reaches_the_config():
    from gpustack_guard.core.memory import engine
    from gpustack_guard.core.spec.model import Policy

    assert engine.vllm_config({"disable-custom-all-reduce": ""}, Policy()).disable_custom_all_reduce
    assert not engine.vllm_config({"disable-custom-all-reduce": "false"}, Policy()).disable_custom_all_reduce
    assert not engine.vllm_config({}, Policy()).disable_custom_all_reduce
    facts = catalog_facts("meta-llama/Llama-3.1-8B")
    flags = {"tensor-parallel-size": "8", "max-model-len": "8192"}
    gpus = [(80 * GiB, "NVIDIA H100 80GB HBM3")] * 8
    on = engine.estimate("vllm", facts, gpus, flags, "0.10.2", Policy())
    off = engine.estimate("vllm", facts, gpus, {**flags, "disable-custom-all-reduce": ""}, "0.10.2", Policy())
    assert on.kv_available - off.kv_available == -25_165_824


def test_v24_qwen3_235b_fp8_on_8_l40s_keeps_the_logged_kv_pool():
    """V24 (vLLM 0.10.2, 8x L40S TP8 + EP, gmu 0.90, len 32,768): 'GPU KV cache size: 237,344 tokens', non-torch
    0.21 GiB with custom all-reduce disabled on the PCIe-only GPUs."""
    facts = replace(catalog_facts("Qwen/Qwen3-235B-A22B"), quant_method="fp8", weight_bytes=None)
    # its log says 'FlashInfer is not available': a pip install that sorts (VLLM_USE_FLASHINFER_SAMPLER=0)
    cfg = VllmConfig(tensor_parallel_size=8, expert_parallel=True, gpu_memory_utilization=0.9, max_model_len=32_768,
                     flashinfer_sampler_env="0")
    est = estimate_vllm(facts, int(44.42 * GiB), cfg, version="0.10.2", gpu_name="NVIDIA L40S")
    assert est.extra["interconnect"] == "pcie" and est.extra["comm_buffers_in_budget"] == 0
    assert est.kv_bytes_per_token == 48_128
    assert abs(est.kv_capacity_tokens - 237_344) / 237_344 <= 0.10
    # the profile's peak is the sampler's sort phase over 256 rows, not the forward: 1.39 GiB, logged 1.4
    assert est.activation == est.extra["sampler_peak"] == 2048 * 4096 * 2 + 256 * 151_936 * 38
    assert est.extra["forward_peak"] < est.activation
    unknown = estimate_vllm(facts, int(44.42 * GiB), cfg, version="0.10.2", gpu_name="")
    # an unnamed GPU is taken as NVLink-connected: 0.6 GiB non-torch, NCCL (PyNccl's and the device group's) and
    # custom all-reduce in the budget
    assert est.kv_available - unknown.kv_available == \
        P.NON_TORCH_PARALLEL + 2 * P.NCCL_BUFFERS + P.CUSTOM_ALL_REDUCE_BUFFERS - P.NON_TORCH_PCIE_PARALLEL
    assert abs(unknown.kv_capacity_tokens - 237_344) / 237_344 > 0.05


# --- the default fraction and 0.34's extensible KV cache (docs/memory-arithmetic.md, "Extensible KV cache") -----

@pytest.mark.parametrize("version,gmu", [("0.19.1", 0.9), ("0.20.0", 0.92), ("0.33.0", 0.92), ("0.34.0", 1.0)])
def test_default_gpu_memory_utilization_by_release(version, gmu):
    est = estimate_vllm(catalog_facts("meta-llama/Llama-3.1-8B"), 80 * GiB, VllmConfig(max_model_len=8192),
                        version=version)
    assert est.extra["gpu_memory_utilization"] == gmu
    assert est.requested == math.ceil(gmu * 80 * GiB)


def test_extensible_kv_cache_is_what_the_free_memory_leaves():
    facts = catalog_facts("meta-llama/Llama-3.1-8B")
    est = estimate_vllm(facts, 80 * GiB, VllmConfig(max_model_len=8192), version="0.34.0")
    engine_use = est.weights + est.non_torch + est.cuda_graphs
    margin = max(GiB, int(0.75 * est.activation))
    # gmu 1.0: the device bound (80 GiB less the CUDA context) wins over the budget
    assert est.kv_available == 80 * GiB - P.CUDA_CONTEXT - engine_use - margin - est.activation
    assert est.extra["gmu_semantics"] == "extensible" and est.extra["startup_free_check"] is False
    assert est.footprint == 80 * GiB - margin and est.headroom == est.headroom_needed == margin
    # an explicit 0.9 is a cap below the device bound: the estimate-based figure again
    capped = estimate_vllm(facts, 80 * GiB, VllmConfig(max_model_len=8192, gpu_memory_utilization=0.9),
                           version="0.34.0")
    assert capped.kv_available == math.ceil(0.9 * 80 * GiB) - engine_use - capped.activation


def test_extensible_kv_cache_off_is_estimate_based_with_0_92_and_the_startup_check():
    facts = catalog_facts("meta-llama/Llama-3.1-8B")
    for cfg in (VllmConfig(max_model_len=8192, extensible_kv_cache=False),
                VllmConfig(max_model_len=8192, kv_cache_memory=20 * GiB)):
        est = estimate_vllm(facts, 80 * GiB, cfg, version="0.34.0")
        assert est.extra["gpu_memory_utilization"] == 0.92
        assert (est.extra["gmu_semantics"], est.extra["startup_free_check"]) == ("per-instance", True)


@pytest.mark.parametrize("version,verdict,free,fix", [
    ("0.28.0", "sampler-warmup-oom", 915_476_890, {"gpu_memory_utilization": 0.94, "max_num_seqs": 275}),
    ("0.29.0", "sampler-warmup-oom", 1_649_217_946, {"gpu_memory_utilization": 0.95, "max_num_seqs": 671}),
    ("0.32.0", "sampler-warmup-oom", 1_649_217_946, {"gpu_memory_utilization": 0.95, "max_num_seqs": 671}),
    ("0.33.0", "fits", None, None)])
def test_the_sampler_warmup_fails_only_where_the_profile_did_not_budget_its_pass(version, verdict, free, fix):
    """The V2 runner (a dense model's from 0.25, every model's from 0.29) up to 0.32 profiles the sampler without
    top-k/top-p and warms it up with them after the KV cache (gpu/warmup.py SamplingParams.for_sampler_warmup);
    0.33 adds the pass to the profile, so the warm-up reruns what the profile reserved. In 0.25-0.28 the V2
    runner's graphs are captured from the headroom before the warm-up (no estimate in the budget), so less is free
    for it than in 0.29."""
    facts = catalog_facts("Qwen/Qwen3-8B")  # vocabulary 151,936, hidden 4,096
    cfg = VllmConfig(gpu_memory_utilization=0.97, max_model_len=8192, max_num_seqs=1024, max_num_batched_tokens=2048)
    est = estimate_vllm(facts, 49140 * MiB, cfg, version=version, gpu_name="NVIDIA RTX A6000")
    x = est.extra
    assert est.verdict == verdict
    # 1,024 warm-up rows (the V2 runner's two-token prompts: 2,048 // 2) through FlashInfer's 14 B per entry
    assert (x["sampler_warmup_rows"], x["sampler_kernel"]) == (1024, "flashinfer")
    assert x["sampler_warmup_bytes"] == 1024 * 4096 * 2 + 1024 * 151_936 * 14 == 2_186_543_104
    if verdict == "fits":
        assert x["sampler_peak"] == 2048 * 4096 * 2 + 1024 * 151_936 * 14 and x["sampler_warmup_fix"] == {}
    else:  # the profile's plain pass: 4 B per entry, so 1.44 GiB of the warm-up was never budgeted
        # (free is what the KV pool left: the derived forward of 0.16 GiB is the smaller phase)
        assert x["sampler_peak"] == 2048 * 4096 * 2 + 1024 * 151_936 * 4
        assert x["sampler_warmup_free_bytes"] == free
        assert x["sampler_warmup_fix"] == fix


@pytest.mark.parametrize("gmu,verdict,free", [(0.90, "fits", 964_423_680), (0.92, "sampler-warmup-oom", 448_524_288),
                                               (0.95, "sampler-warmup-oom", -324_276_224), (0.97, "fits", None)])
def test_graphs_over_the_headroom_take_the_warm_ups_room_and_a_refused_start_never_warms_up(gmu, verdict, free):
    """Llama-3.1-8B TP2 on two RTX 4090s (0.11): context, NCCL and the graphs captured after the KV cache overflow
    the headroom (GSG034); the graphs are captured before the sampler warm-up (gpu_worker.py@v0.11.0
    compile_or_warm_up_model), so what they take beyond the headroom is gone when the warm-up runs: at 0.90 its
    256 rows still fit, from 0.92 they do not (GSG043). At 0.97 the budget is above what CUDA and NCCL start-up
    leave free: refused before the weights load (GSG041), no warm-up."""
    facts = catalog_facts("meta-llama/Llama-3.1-8B-Instruct")
    cfg = VllmConfig(gpu_memory_utilization=gmu, max_model_len=8192, tensor_parallel_size=2)
    est = estimate_vllm(facts, 24564 * MiB, cfg, version="0.11.0", gpu_name="NVIDIA GeForce RTX 4090")
    x = est.extra
    assert est.verdict == verdict and est.headroom < est.headroom_needed
    refused = est.requested > est.gpu_total - P.CUDA_CONTEXT - x["comm_buffers"]
    assert refused is (free is None)
    if free is None:
        assert (x["sampler_warmup_bytes"], x["sampler_warmup_free_bytes"]) == (0, None)
        return
    # FlashInfer in the runner image: 256 rows x 128,256 entries x 14 B + their hidden states
    assert x["sampler_warmup_bytes"] == 256 * 128_256 * 14 + 256 * 4096 * 2 == 461_766_656
    # all the card less what is held: weights, non-torch, KV, graphs, context and the no-P2P NCCL figure
    held = est.weights + est.non_torch + est.kv_cache + est.cuda_graphs + P.CUDA_CONTEXT + x["comm_buffers"]
    assert x["sampler_warmup_free_bytes"] == est.gpu_total - held == free
    assert (x["sampler_warmup_fix"] == {}) is (verdict == "fits")


def test_llm_d_787_captures_67_graphs_of_each_mode_under_0_11_0_and_dies_at_the_warm_up():
    """llm-d#787: Qwen3-32B TP 2, gmu 0.95 on H100s (0.11.0 image, 1,024 sequences): the log captures '67/67' graphs
    of each mode (config/__init__.py@v0.11.0: every multiple of 8 up to 512), sizes 41.87 GiB of KV per worker and
    dies at the sampler warm-up: the graphs, captured first, took the room beyond the headroom."""
    facts = catalog_facts("Qwen/Qwen3-32B")
    cfg = VllmConfig(gpu_memory_utilization=0.95, tensor_parallel_size=2)
    est = estimate_vllm(facts, 81559 * MiB, cfg, version="0.11.0", gpu_name="NVIDIA H100 80GB HBM3")
    x = est.extra
    assert x["cuda_graph_counts"] == {"piecewise": 67, "full": 67}
    assert est.cuda_graphs == 134 * 64 * 384 * 1024 == 3_372_220_416
    # 41.27 GiB against the log's 41.87 (-1.4 %): the TP device group's NCCL communicator is made inside the profile
    assert est.kv_cache == 44_317_016_064
    # FlashInfer's 14 B per entry over 1,024 rows of 151,936, plus the rows' hidden states
    assert x["sampler_warmup_bytes"] == 1024 * 151_936 * 14 + 1024 * 5120 * 2 == 2_188_640_256
    assert x["sampler_warmup_free_bytes"] == 1_801_206_620 and est.verdict == "sampler-warmup-oom"
    # the flags that fix it: the thread's own suggestion was gmu 0.90-0.92 or 512 sequences
    assert x["sampler_warmup_fix"] == {"gpu_memory_utilization": 0.94, "max_num_seqs": 391}
    assert est.headroom < est.headroom_needed  # GSG034 names the overflow too


@pytest.mark.parametrize("version,held_tokens", [("0.8.5", 256), ("0.9.2", 256), ("0.10.0", 2048),
                                                 ("0.11.0", 2048), ("0.33.0", 2048)])
def test_the_profile_holds_the_batch_hidden_states_through_the_sampler_from_0_10(version, held_tokens):
    """Up to 0.9 _dummy_run returns hidden_states[logit_indices]: only the sampler's rows outlive the forward;
    from 0.10 profile_run keeps (hidden_states, last_hidden_states) until after the sampler."""
    from gpustack_guard.core.memory.engines.vllm import profiled_sampler, sampler_phase_bytes

    facts = catalog_facts("Qwen/Qwen3-4B")  # hidden 2,560
    row = P.vllm_sampler_row(version)
    assert profiled_sampler(facts, 2048, 256, "v1", row, version) == \
        sampler_phase_bytes(facts, held_tokens, 256, row.kernel if row.profiled == "same" else "plain")
    # V0's execute_model holds every batched token's hidden states while its sampler sorts, in every release
    assert profiled_sampler(facts, 2048, 256, "v0", row, version) == sampler_phase_bytes(facts, 2048, 256, "torch-sort")


def test_a_pre_ampere_gpu_runs_v0_in_the_estimate_and_says_why():
    # the same Qwen2.5-3B on a T4 and on an A10G under 0.9.2: the T4 gets V0's profile (no V1 sampler phase)
    facts = catalog_facts("Qwen/Qwen2.5-3B-Instruct")
    cfg = VllmConfig(max_model_len=8192)
    t4 = estimate_vllm(facts, 15_360 * MiB, cfg, version="0.9.2", gpu_name="Tesla T4")
    a10g = estimate_vllm(facts, 15_360 * MiB, cfg, version="0.9.2", gpu_name="NVIDIA A10G")
    assert (t4.extra["engine_generation"], a10g.extra["engine_generation"]) == ("v0", "v1")
    assert t4.notes[0] == "V0 engine: compute capability below 8.0 (pre-Ampere GPU: T4, V100, RTX 20xx)"
    assert (t4.extra["max_num_batched_tokens"], a10g.extra["max_num_batched_tokens"]) == (8192, 2048)


@pytest.mark.parametrize("version,env,kernel", [
    ("0.10.1", None, "flashinfer"), ("0.10.1", "1", "flashinfer"), ("0.10.1", "0", "torch-sort"),
    ("0.8.5", None, "torch-sort"), ("0.11.0", None, "flashinfer"), ("0.11.1", None, "torch-sort"),
    ("0.11.1", "0", "torch-sort"), ("0.9.0", "0", "torch-sort"),
    ("0.16.0", "1", "flashinfer"), ("0.17.0", "0", "triton"), ("0.21.0", None, "flashinfer"),
    ("0.21.0", "0", "triton"), ("0.21.0", "yes", "flashinfer"), ("0.7.3", "1", "torch-sort"), ("0.10.1", "2", "flashinfer"),
])
def test_vllm_use_flashinfer_sampler_picks_the_top_k_top_p_path(version, env, kernel):
    """TopKTopPSampler reads VLLM_USE_FLASHINFER_SAMPLER as bool(int(value)) from 0.8.0: 1 takes FlashInfer's
    kernels in every V1 release, 0 the release's native path (the sort, Triton's from 0.17); a value vLLM cannot
    read as an integer, or a release before the variable, keeps the release's default."""
    from gpustack_guard.core.memory.engines.vllm import sampler_row_for

    assert sampler_row_for(version, env).kernel == kernel


def test_the_flashinfer_sampler_env_moves_the_profile_peak_by_its_bytes_per_entry():
    # Llama-3.1-8B (vocabulary 128,256, hidden 4,096) under 0.10.1 on an A100 80GB: the 256 default sequences
    # sort at 38 B per entry (segmented sort) or sample through FlashInfer at 14; the batch's 2,048 hidden
    # states are held either way
    facts = catalog_facts("meta-llama/Llama-3.1-8B-Instruct")
    peaks = {}
    for env in ("0", "1"):
        cfg = VllmConfig(max_model_len=8192, max_num_seqs=256, flashinfer_sampler_env=env)
        est = estimate_vllm(facts, 81920 * MiB, cfg, version="0.10.1", gpu_name="NVIDIA A100-SXM4-80GB")
        peaks[env] = (est.extra["sampler_peak"], est.extra["sampler_kernel"])
    hidden = 2048 * 4096 * 2
    assert peaks["0"] == (hidden + 256 * 128_256 * 38, "torch-sort")
    assert peaks["1"] == (hidden + 256 * 128_256 * 14, "flashinfer")


@pytest.mark.parametrize("model,gpu_total", [("Qwen/Qwen3-8B", 23_028 * MiB), ("meta-llama/Llama-3.1-8B", A6000)])
def test_v1_before_0_9_1_counts_its_cuda_context_inside_the_budget(model, gpu_total):
    # gpu_worker.py@v0.9.0 subtracts mem_get_info's total - free - torch's allocated bytes (the context included);
    # @v0.9.1 measures from a snapshot taken after CUDA started and checks the free memory at start-up
    facts = catalog_facts(model)
    cfg = VllmConfig(max_model_len=8192)
    old, new = (estimate_vllm(facts, gpu_total, cfg, version=v, gpu_name="NVIDIA A10G") for v in ("0.9.0", "0.9.1"))
    assert old.weights == new.weights and old.activation == new.activation
    assert old.non_torch == new.non_torch + P.CUDA_CONTEXT
    assert old.kv_available == new.kv_available - P.CUDA_CONTEXT
    assert (old.extra["gmu_semantics"], old.extra["startup_free_check"], old.extra["cuda_context_in_budget"]) == \
        ("global-cap", False, True)
    assert (new.extra["gmu_semantics"], new.extra["startup_free_check"], new.extra["cuda_context_in_budget"]) == \
        ("per-instance", True, False)
    # the context is counted once: inside the budget before 0.9.1, outside it from 0.9.1
    assert old.footprint == new.footprint - P.CUDA_CONTEXT
    # the V1 alpha of 0.7 (VLLM_USE_V1=1) ran the same worker; V0 at 0.9.0 (VLLM_USE_V1=0) keeps its own snapshot
    alpha = estimate_vllm(facts, gpu_total, replace(cfg, use_v1_env="1"), version="0.7.3", gpu_name="NVIDIA A10G")
    v0 = estimate_vllm(facts, gpu_total, replace(cfg, use_v1_env="0"), version="0.9.0", gpu_name="NVIDIA A10G")
    assert alpha.extra["cuda_context_in_budget"] is True and v0.extra["cuda_context_in_budget"] is False
    assert alpha.non_torch == P.vllm_non_torch("0.7.3", "single").in_budget + P.CUDA_CONTEXT
    # V0's own baseline (from 0.6.5) leaves the context out and books its smaller single-GPU row
    assert v0.non_torch == P.vllm_non_torch("0.9.0", "single-v0").in_budget == int(0.16 * GiB)


@pytest.mark.parametrize("gpu_name,model", [("NVIDIA GeForce RTX 3090", "Qwen/Qwen2.5-7B"),
                                            ("NVIDIA H200", "meta-llama/Llama-3.1-8B")])
def test_v1_before_0_9_1_alone_on_a_measured_card_books_its_context_once(gpu_name, model):
    # gpu_worker.py@v0.8.4 takes total - free - allocated, as worker.py@v0.6.4 did: a card whose 0.6.4 figure is
    # known (the context inside it) is booked that figure, not the release's row plus CUDA_CONTEXT again
    facts = catalog_facts(model)
    row = P.single_gpu_non_torch_with_context(gpu_name)
    assert row is not None
    cfg = VllmConfig(max_model_len=4096)
    old, new = (estimate_vllm(facts, 24576 * MiB, cfg, version=v, gpu_name=gpu_name) for v in ("0.8.4", "0.9.1"))
    assert old.non_torch == row.non_torch and old.extra["non_torch_source"] == row.source
    assert new.non_torch == P.vllm_non_torch("0.9.1", "single").in_budget  # 0.9.1 measures from a baseline
    # a card without a measured figure keeps the row plus its context; a TP group keeps its rows plus the context
    a10g = estimate_vllm(facts, 24576 * MiB, cfg, version="0.8.4", gpu_name="NVIDIA A10G")
    assert a10g.non_torch == P.vllm_non_torch("0.8.4", "single").in_budget + P.CUDA_CONTEXT
    tp2 = estimate_vllm(facts, 24576 * MiB, replace(cfg, tensor_parallel_size=2), version="0.8.4", gpu_name=gpu_name)
    assert tp2.non_torch >= P.CUDA_CONTEXT + P.vllm_non_torch("0.8.4", "peerless").in_budget
    # the key names a whole model: an H20 is not an H200, a 3090 is not a 30900
    assert P.single_gpu_non_torch_with_context("NVIDIA H20") is None
    assert P.single_gpu_non_torch_with_context("NVIDIA GeForce RTX 30900") is None


def test_v0_profile_peak_is_the_larger_of_its_forward_and_its_driver_ranks_sort():
    """V0's _dummy_run (model_runner.py@v0.6.4, @v0.9.1) samples max_num_seqs dummy prompts with top_k = vocab - 1:
    the fp32 logits are sorted (38 B per row and entry from 128 rows) after the forward, beside the hidden states
    of every batched token. A short chunked batch is bound by the sort, a long unchunked one by its forward."""
    qwen = catalog_facts("Qwen/Qwen3-4B")  # vocabulary 151,936, hidden 2,560; 40,960 tokens: chunked, 2,048
    chunked = estimate_vllm(qwen, 32 * GiB, VllmConfig(use_v1_env="0"), version="0.9.0.1", gpu_name="Tesla V100")
    assert (chunked.extra["engine_generation"], chunked.extra["max_num_batched_tokens"]) == ("v0", 2048)
    assert chunked.extra["sampler_peak"] == 2048 * 2560 * 2 + 256 * 151_936 * 38 == 1_488_519_168
    assert chunked.activation == chunked.extra["sampler_peak"] > chunked.extra["forward_peak"]
    llama = catalog_facts("meta-llama/Llama-3.1-8B")  # vocabulary 128,256: 20,000 tokens unchunked
    whole = estimate_vllm(llama, 24 * GiB, VllmConfig(max_model_len=20000), version="0.6.4")
    assert whole.extra["sampler_peak"] == 20000 * 4096 * 2 + 256 * 128_256 * 38
    assert whole.activation == whole.extra["forward_peak"] > whole.extra["sampler_peak"]
    # fewer sequences take torch's full-sort path (50 B); the driver rank of a TP group is the one that sorts
    few = estimate_vllm(qwen, 32 * GiB, VllmConfig(use_v1_env="0", max_num_seqs=32), version="0.9.0.1")
    assert few.extra["sampler_peak"] == 2048 * 2560 * 2 + 32 * 151_936 * 50
    tp2 = estimate_vllm(catalog_facts("Qwen/Qwen2.5-14B"), 24 * GiB, VllmConfig(tensor_parallel_size=2),
                        version="0.7.2", gpu_name="NVIDIA GeForce RTX 4090")
    assert tp2.extra["max_num_batched_tokens"] == 32768  # its derived length, not above 32K: unchunked
    assert tp2.extra["sampler_peak"] == 32768 * 5120 * 2 + 256 * 152_064 * 38


@pytest.mark.parametrize("seqs,fp32,sixteen", [(256, 38, 30), (64, 50, 40), (1, 30, 22)])
def test_v0_before_0_5_5_sorts_the_16_bit_logits(seqs, fp32, sixteen):
    """sampler.py@v0.5.4 sorts the logits in the model's dtype; @v0.5.5 casts them to fp32 first (2-byte keys
    against 4-byte ones on each of torch's three sort paths: 128 rows and more, 2-127, one)."""
    facts = catalog_facts("Qwen/Qwen2.5-7B")  # vocabulary 152,064, hidden 3,584
    cfg = VllmConfig(max_model_len=4096, max_num_seqs=seqs)
    old, new = (estimate_vllm(facts, 24 * GiB, cfg, version=v) for v in ("0.5.4", "0.5.5"))
    hidden = 4096 * 3584 * 2  # unchunked: one max-length prompt's tokens
    # the allocated sampler phase; from 128 rows both releases book torch's reserved segments over it as well
    # (VLLM_V0_PROFILE_MEASURES: the sort's reverse indices fit no block the 4,096-token forward cached)
    row = V.sampler_row_for("0.5.4", None)
    assert V.profiled_sampler(facts, 4096, seqs, "v0", row, "0.5.4") == hidden + seqs * 152_064 * sixteen
    assert V.profiled_sampler(facts, 4096, seqs, "v0", row, "0.5.5") == hidden + seqs * 152_064 * fp32
    for est, per_entry in ((old, sixteen), (new, fp32)):
        assert (est.extra["sampler_peak"] > hidden + seqs * 152_064 * per_entry) == (seqs >= 128)
    assert P.vllm_v0_profile_sampler("0.4.0") == "torch-sort-16bit" and P.vllm_v0_profile_sampler("0.9.0") == "torch-sort"


def _alpha(model: str, version: str, tp: int = 1, env: str | None = "1"):
    cfg = VllmConfig(use_v1_env=env, max_model_len=4096, max_num_batched_tokens=8192, max_num_seqs=256,
                     tensor_parallel_size=tp)
    return estimate_vllm(catalog_facts(model), 80 * GiB, cfg, version=version, gpu_name="NVIDIA H100 80GB HBM3")


def test_the_v1_alpha_profile_takes_the_logits_of_every_batched_token_before_0_7_3():
    # Llama-3.1-8B: 8,192 rows x 128,256 (a multiple of 64) bf16 logits, with the batch's 8,192 x 4,096 hidden
    est = _alpha("meta-llama/Llama-3.1-8B", "0.7.1")
    assert est.extra["forward_peak"] == 8192 * 4096 * 2 + 8192 * 128_256 * 2 == 2_168_455_168
    assert est.extra["sampler_peak"] == 0  # no dummy sampler run until 0.8.0
    assert est.extra["sampler_warmup_bytes"] == 0  # compile_or_warm_up_model only captures graphs
    assert est.activation == 2_168_455_168
    rules = {t.term: t.rule for t in budget_terms(est)}
    assert rules["forward_peak_bytes_per_gpu"] == "max(live-tensors-piecewise-inductor, v1-alpha-logits-of-tokens)"
    assert rules["sampler_peak_bytes_per_gpu"] == rules["sampler_warmup_bytes_per_gpu"] == "none-v1-alpha"
    # TP 2: rank 0 holds its 64,128-wide shard, the two gathered shards and their concatenation
    assert _alpha("meta-llama/Llama-3.1-8B", "0.7.0", tp=2).extra["forward_peak"] == \
        8192 * 4096 * 2 + 8192 * 64_128 * 2 * (1 + 2 * 2) == 5_320_474_624


def test_the_v1_alpha_profile_takes_one_row_per_request_from_0_7_3():
    # Qwen2.5-7B: 256 rows of 152,064 logits and 3,584 hidden; the forward's live tensors at SiluAndMul (the
    # attention output and two residuals, 3 x 3,584, gate_up and its output, 3 x 18,944, per token, in bf16, + the
    # H100's 32 MiB cuBLAS workspace) are then the larger phase
    est = _alpha("Qwen/Qwen2.5-7B", "0.7.3")
    logits_phase = 256 * 3584 * 2 + 256 * 152_064 * 2
    assert logits_phase == 79_691_776
    assert est.extra["forward_peak"] == 8192 * (3 * 3584 + 3 * 18_944) * 2 + P.CUBLAS_WORKSPACE_LARGE
    assert est.extra["sampler_peak"] == 0
    assert {t.term: t.rule for t in budget_terms(est)}["forward_peak_bytes_per_gpu"] == \
        "max(live-tensors-piecewise-inductor, v1-alpha-logits-of-seqs)"
    llama = _alpha("meta-llama/Llama-3.1-8B", "0.7.3")
    assert llama.extra["forward_peak"] == 8192 * (3 * 4096 + 3 * 14_336) * 2 + P.CUBLAS_WORKSPACE_LARGE


@pytest.mark.parametrize("version,env", [("0.7.3", None), ("0.7.3", "0"), ("0.8.0", None), ("0.8.0", "1")])
def test_outside_the_v1_alpha_the_profile_samples(version, env):
    est = _alpha("meta-llama/Llama-3.1-8B", version, env=env)
    assert est.extra["sampler_peak"] > 0
    assert "v1-alpha" not in {t.term: t.rule for t in budget_terms(est)}["forward_peak_bytes_per_gpu"]


@pytest.mark.parametrize("version,form,tokens", [
    # vllm#10517's Llama-3.1-8B on an RTX 3090 (0.6.4, eager): the loop's previous output, the residual and the
    # MLP's input (3 x 4,096), gate_up and SiluAndMul's output (3 x 14,336), + torch's 8,519,680 B workspace:
    # 2.068 GiB at 20,000 tokens (logged 17.06 - 14.9888 = 2.07)
    ("0.6.4", "eager-gate-up-freed", 20_000),
    # llama.py@v0.6.3 keeps gate_up named through down_proj: 4 x 4,096 + 3 x 14,336 at down_proj
    ("0.6.3", "eager-gate-up-held", 20_000)])
def test_the_eager_forward_peak_is_the_live_tensors_of_the_mlp(version, form, tokens):
    facts = catalog_facts("meta-llama/Llama-3.1-8B")
    cfg = VllmConfig(gpu_memory_utilization=0.9, max_model_len=tokens)
    est = estimate_vllm(facts, 24 * GiB, cfg, version=version, gpu_name="NVIDIA GeForce RTX 3090")
    per_token = 3 * 4096 + 3 * 14_336 if form == "eager-gate-up-freed" else 4 * 4096 + 3 * 14_336
    assert est.extra["forward_peak"] == tokens * per_token * 2 + 8_519_680
    rules = {t.term: (t.rule, t.source) for t in budget_terms(est)}
    assert rules["forward_peak_bytes_per_gpu"][0] == f"live-tensors-{form}"
    assert "llama.py@v0." in rules["forward_peak_bytes_per_gpu"][1]


def test_the_forward_form_follows_the_engine_the_model_file_and_eager_mode():
    qwen = catalog_facts("Qwen/Qwen2.5-7B")
    v1, eager = VllmConfig(), VllmConfig(enforce_eager=True)
    assert V.dense_forward_form(qwen, "v1", "0.10.1.1", v1) == "piecewise-inductor"
    # Qwen2MLP names gate_up at every release read; V1 under --enforce-eager runs the eager model
    assert V.dense_forward_form(qwen, "v1", "0.10.1.1", eager) == "eager-gate-up-held"
    assert V.dense_forward_form(qwen, "v0", "0.6.4", v1) == "eager-gate-up-held"
    # the sparse-MoE blocks read take their own forms; MLA, MXFP4 experts and architectures not read keep the
    # calibrated formula
    moe = catalog_facts("Qwen/Qwen3-30B-A3B")
    assert V.dense_forward_form(moe, "v1", "0.10.1.1", v1) == "moe-piecewise-inductor"
    assert V.dense_forward_form(moe, "v1", "0.10.1.1", eager) == "moe-eager"
    assert V.dense_forward_form(moe, "v0", "0.7.3", v1) == "moe-eager-caches-apart"  # fused_moe.py@v0.7.3
    assert V.dense_forward_form(moe, "v0", "0.8.0", v1) == "moe-eager"  # cache13 from @v0.8.0
    assert V.dense_forward_form(replace(moe, quant_method="gptq_marlin"), "v1", "0.10.1.1", v1) is None
    assert V.dense_forward_form(catalog_facts("deepseek-ai/DeepSeek-V3"), "v1", "0.10.1.1", v1) is None
    assert V.dense_forward_form(catalog_facts("openai/gpt-oss-120b"), "v1", "0.10.1.1", v1) is None
    assert V.dense_forward_form(catalog_facts("google/gemma-3-27b-it"), "v1", "0.10.1.1", v1) is None


def test_piecewise_steps_per_rank_under_tensor_parallelism():
    # Qwen2.5-7B at TP 2 under V1 compiled: attention output 14 heads x 128, the two residuals whole (2 x 3,584),
    # gate_up and its output 3 x 9,472 per rank
    facts = catalog_facts("Qwen/Qwen2.5-7B")
    assert V.dense_live_elements_per_token(facts, 2, "piecewise-inductor") == 1792 + 2 * 3584 + 3 * 9472
    # the eager form holds three whole hidden rows and, in Qwen2MLP, gate_up through down_proj
    assert V.dense_live_elements_per_token(facts, 2, "eager-gate-up-held") == 4 * 3584 + 3 * 9472


def test_the_cublas_workspace_follows_the_gpu_generation():
    assert V.cublas_workspace("NVIDIA H100 80GB HBM3") == 32 * 1024 * 1024
    assert V.cublas_workspace("NVIDIA A100-SXM4-80GB") == 8_519_680
    assert V.cublas_workspace("") == 8_519_680  # an unknown name: torch's default branch


@pytest.mark.parametrize("gpu,workspace", [
    ("NVIDIA H200", 32 * 1024 * 1024), ("NVIDIA GH200 480GB", 32 * 1024 * 1024),  # 9.x
    ("NVIDIA B200", 32 * 1024 * 1024), ("NVIDIA GeForce RTX 5090", 32 * 1024 * 1024),  # 10.x, 12.x
    ("NVIDIA L40S", 8_519_680), ("NVIDIA GeForce RTX 4090", 8_519_680),  # Ada 8.9: the default branch
    ("Tesla T4", 8_519_680), ("AMD Instinct MI300X", 8_519_680),  # Turing; no CUDA capability known
])
def test_the_cublas_workspace_on_each_gpu_family(gpu, workspace):
    assert V.cublas_workspace(gpu) == workspace


def test_the_cublas_workspace_moves_the_forward_peak_by_the_gpu_name_alone():
    # Llama-3.1-8B under 0.19.0 on the same 80 GB: the forward peak on an H100 holds 32 MiB of workspace, on an
    # A100 8,519,680 B (torch's ":4096:2:16:8"); nothing else in the forward depends on the name
    facts = catalog_facts("meta-llama/Llama-3.1-8B")
    cfg = VllmConfig(max_model_len=8192, max_num_batched_tokens=8192, max_num_seqs=256)
    h100 = estimate_vllm(facts, 80 * GiB, cfg, version="0.19.0", gpu_name="NVIDIA H100 80GB HBM3")
    a100 = estimate_vllm(facts, 80 * GiB, cfg, version="0.19.0", gpu_name="NVIDIA A100-SXM4-80GB")
    assert h100.extra["forward_peak"] - a100.extra["forward_peak"] == 32 * 1024 * 1024 - 8_519_680


def test_moe_forward_of_qwen3_moe_compiled_is_its_routed_experts_step():
    # Qwen3-30B-A3B, V1 compiled at 0.10.1.1, 8,192 tokens on one rank: the piece holds the attention output
    # (4,096) and three hidden rows (2,048 each), the router's 128 logits, top-8 fp32 weights + int32 ids and
    # indices (96 B), moe_align_block_size's 8,192 x 8 + 128 x 63 sorted ids and their 1,150 blocks, and one
    # 32,768-token chunk of cache13 (8 x 2,048) and cache2 (8 x 768)
    facts = catalog_facts("Qwen/Qwen3-30B-A3B")
    per_token = (4096 + 3 * 2048 + 128) * 2 + 8 * 12
    align = 4 * (8192 * 8 + 128 * 63 + 1150)
    caches = 8192 * 8 * 2048 * 2 + 8192 * 8 * 768 * 2
    expected = 8192 * per_token + align + caches
    assert expected == 540_053_496
    assert V.activation_peak(facts, 8192, 256, 1, VllmConfig(), True, chunk=32_768,
                             form="moe-piecewise-inductor") == expected


def test_moe_forward_of_mixtral_before_the_shared_cache13_keeps_three_caches():
    # Mixtral-8x7B under V0 at 0.7.3 (eager), TP 2, 4,096 tokens: 3 hidden rows, 8 router logits, top-2 routing
    # tensors, and cache1 (2 x 14,336), cache2 (2 x 7,168) and cache3 (2 x 4,096) allocated apart
    facts = catalog_facts("mistralai/Mixtral-8x7B-v0.1")
    cfg = VllmConfig(tensor_parallel_size=2)
    assert V.dense_forward_form(facts, "v0", "0.7.3", cfg) == "moe-eager-caches-apart"
    per_token = (3 * 4096 + 8) * 2 + 2 * 12
    align = 4 * (4096 * 2 + 8 * 63 + 136)
    caches = 4096 * 2 * (14_336 + 7168 + 4096) * 2
    assert V.activation_peak(facts, 4096, 256, 2, cfg, True, chunk=32_768,
                             form="moe-eager-caches-apart") == 4096 * per_token + align + caches == 520_292_864
    # from 0.8.0 cache1 and cache3 share one buffer: the same call holds less
    shared = V.activation_peak(facts, 4096, 256, 2, cfg, True, chunk=32_768, form="moe-eager")
    assert 520_292_864 - shared == 4096 * 2 * (14_336 + 4096 - 14_336) * 2


def test_moe_forward_with_a_shared_expert_takes_the_larger_branch():
    # Qwen1.5-MoE-A2.7B eager at 0.8.5, 2,048 tokens: the shared expert's MLP step (3 hidden rows, the routed
    # branch's output, gate_up 2 x 5,632, its output 5,632 and down's 2,048) outgrows the routed step
    facts = catalog_facts("Qwen/Qwen1.5-MoE-A2.7B")
    shared_step = 2048 * (3 * 2048 + 2048 + 3 * 5632 + 2048) * 2
    routed_step = 2048 * ((3 * 2048 + 2048 + 60) * 2 + 4 * 12) + 4 * (2048 * 4 + 60 * 63 + 188) + \
        2048 * 4 * 2816 * 2 + 2048 * 4 * 1408 * 2
    assert (shared_step, routed_step) == (111_149_056, 103_153_152)
    assert V.activation_peak(facts, 2048, 256, 1, VllmConfig(), True, chunk=32_768, form="moe-eager") == shared_step


def test_moe_estimate_shows_the_derived_rule_and_drops_the_calibration():
    # Qwen3-30B-A3B on an H100 at 0.19.0 (held workspace, whole batch) and at 0.10.1.1 (per call): the forward
    # term is the derived peak plus cuBLAS's 32 MiB, named by its rule and source, with no 1.15 factor
    facts = catalog_facts("Qwen/Qwen3-30B-A3B")
    for version, held in (("0.19.0", True), ("0.10.1.1", False)):
        est = estimate_vllm(facts, 80 * GiB, VllmConfig(max_num_batched_tokens=8192), version=version,
                            gpu_name="NVIDIA H100 80GB HBM3")
        chunk = V.fused_moe_chunk(version)
        derived = V.moe_forward_bytes(facts, 8192, 1, VllmConfig(), "moe-piecewise-inductor", chunk, held, False, 2)
        assert est.extra["forward_peak"] == derived + 32 * MiB, version
        rules = {t.term: (t.rule, t.source) for t in budget_terms(est)}
        assert rules["forward_peak_bytes_per_gpu"][0] == "live-tensors-moe-piecewise-inductor"
        assert "moe_forward" in rules["forward_peak_bytes_per_gpu"][1]
    # gpt-oss (MXFP4 experts, not read) keeps the calibrated rule
    oss = estimate_vllm(catalog_facts("openai/gpt-oss-120b"), 80 * GiB, VllmConfig(), version="0.19.0",
                        gpu_name="NVIDIA H100 80GB HBM3")
    assert "forward_peak_bytes_per_gpu" not in oss.extra["term_rules"]


def test_fused_moe_chunk_was_65536_before_0_6():
    assert [V.fused_moe_chunk(v) for v in ("0.5.4", "0.6.0", "0.11.2", "0.12.0", "0.18.0")] == \
        [65_536, 32_768, 32_768, 16_384, None]


def test_the_moe_forward_leaves_the_logits_to_the_phase_that_computes_them():
    """The derived MoE forward holds no logits (profiles.VLLM_MOE_FORWARD_SOURCES): the V1 alpha's logits step and
    V0's dummy sampler count them, each once. Mixtral-8x7B at TP 2, 8,192 batched tokens, 256 sequences, H100."""
    facts = catalog_facts("mistralai/Mixtral-8x7B-v0.1")  # vocabulary 32,000 (a multiple of 64), hidden 4,096

    def run(version: str, env: str | None):
        cfg = VllmConfig(use_v1_env=env, max_model_len=4096, max_num_batched_tokens=8192, max_num_seqs=256,
                         tensor_parallel_size=2)
        return estimate_vllm(facts, 80 * GiB, cfg, version=version, gpu_name="NVIDIA H100 80GB HBM3"), cfg

    # 0.7.1 alpha: every batched row's logits, rank 0's 16,000-wide shard + two gathered shards + their cat
    alpha, cfg = run("0.7.1", "1")
    logits = 8192 * 4096 * 2 + 8192 * 16_000 * 2 * (1 + 2 * 2)
    moe = V.activation_peak(facts, 8192, 256, 2, cfg, True, chunk=32_768, form="moe-piecewise-inductor")
    assert (moe, logits) == (939_920_384, 1_377_828_864)
    assert alpha.extra["forward_peak"] == alpha.activation == logits and alpha.extra["sampler_peak"] == 0
    # 0.7.3 alpha: 256 rows of logits, below the experts' step (+ the H100's 32 MiB cuBLAS workspace)
    alpha_seqs, _ = run("0.7.3", "1")
    assert alpha_seqs.extra["forward_peak"] == moe + 32 * MiB == 973_474_816
    # V0 at 0.7.3: eager with cache1/2/3 apart; the logits are in its sampler phase (fp32 sort of 256 rows, 38 B
    # an entry, beside the batch's hidden states), not in the forward
    v0, cfg0 = run("0.7.3", None)
    eager = V.activation_peak(facts, 8192, 256, 2, cfg0, True, chunk=32_768, form="moe-eager-caches-apart")
    assert v0.extra["forward_peak"] == eager + 32 * MiB == 1_074_138_112
    assert v0.extra["sampler_peak"] == 8192 * 4096 * 2 + 256 * 32_000 * 38 == 378_404_864


B200 = 183_359 * MiB
H200 = 143_771 * MiB


@pytest.mark.parametrize("gpu_name,gpu_total,version,given,block,capacity", [
    # CUTLASS MLA on 10.0 up to 0.17's FlashInfer switch; --block-size 16 is overridden like the default
    ("NVIDIA B200", B200, "0.14.0", None, 128, 1_123_456),
    ("NVIDIA B200", B200, "0.14.0", 16, 128, 1_123_456),
    # 0.18.0+: FlashInfer MLA's smallest kernel block (32); a --block-size is kept (Triton MLA takes 16)
    ("NVIDIA B200", B200, "0.24.0", None, 32, 1_213_216),
    ("NVIDIA B200", B200, "0.24.0", 16, 16, 1_213_232),
    # FlashMLA forces 64 on Hopper up to 0.17.0; from 0.18.0 FlashAttention MLA takes the default 16
    ("NVIDIA H200", H200, "0.14.0", 16, 64, 593_728),
    ("NVIDIA H200", H200, "0.24.0", None, 16, 671_680),
])
def test_mla_block_size_follows_the_backend_vllm_picks(gpu_name, gpu_total, version, given, block, capacity):
    cfg = VllmConfig(max_model_len=8192, tensor_parallel_size=8, block_size=given)
    est = estimate_vllm(catalog_facts("deepseek-ai/DeepSeek-V3"), gpu_total, cfg, version=version, gpu_name=gpu_name)
    assert (est.block_size, est.kv_capacity_tokens) == (block, capacity)
    assert capacity % block == 0
    forced = [n for n in est.notes if "forces block size" in n]
    assert forced == ([f"vLLM {version} forces block size {block} for "
                       f"{'CUTLASS MLA' if block == 128 else 'FlashMLA'} over --block-size 16 (platforms/cuda.py)"]
                      if given and given != block else [])


@pytest.mark.parametrize("version,gpu_name,kv_dtype,given,expected", [
    ("0.10.1", "NVIDIA H100 80GB HBM3", None, 128, (64, "FlashMLA")),  # != 64 -> 64 before 0.11.1
    ("0.11.1", "NVIDIA H100 80GB HBM3", None, 128, (128, "FlashMLA")),  # a multiple of 64 is kept
    ("0.11.0", "NVIDIA B200", None, 256, (128, "CUTLASS MLA")),
    ("0.12.0", "NVIDIA B200", None, 256, (256, "CUTLASS MLA")),
    ("0.16.0", "NVIDIA B200", None, 32, (32, "FlashInfer MLA")),  # FlashInfer MLA keeps 32
    ("0.17.0", "NVIDIA A100-SXM4-80GB", None, None, (16, "Triton MLA")),  # FlashMLA is Hopper-only
    ("0.20.0", "NVIDIA RTX PRO 6000 Blackwell", None, None, (16, "Triton MLA")),
    ("0.20.0", "NVIDIA H100 80GB HBM3", "fp8", None, (64, "FlashMLA")),  # FlashAttention MLA takes no fp8 KV
    ("0.34.0", "NVIDIA H100 80GB HBM3", None, None, (64, "FlashAttention MLA")),  # CacheConfig's default is 64
    ("0.34.0", "NVIDIA B200", None, None, (64, "FlashInfer MLA")),
    ("0.24.0", "", None, None, (16, "FlashAttention MLA")),  # an unnamed GPU is sized as Hopper
    # B300/GB300 are 10.3: the 0.11.1-0.12.0 hook tests exactly 10.0 (no FlashMLA off 9.x), CUTLASS MLA's [128]
    # refuses the kept 16, so Triton MLA; 0.13.0's is_device_capability_family(100) takes them in
    ("0.12.0", "NVIDIA B300 SXM6 AC", None, None, (16, "Triton MLA")),
    ("0.12.0", "NVIDIA GB200", None, None, (128, "CUTLASS MLA")),
    ("0.13.0", "NVIDIA GB300", None, None, (128, "CUTLASS MLA")),
    # 0.7.x: no MLA backend sets the block size (FlashMLA's forced 64 arrives in 0.8.0)
    ("0.7.3", "NVIDIA H200", None, None, (16, "the MLA backend")),
    ("0.7.3", "NVIDIA H200", None, 32, (32, "the MLA backend")),
    ("0.8.0", "NVIDIA H200", None, None, (64, "FlashMLA")),
])
def test_mla_block_size_rule_by_release_and_capability(version, gpu_name, kv_dtype, given, expected):
    facts = catalog_facts("deepseek-ai/DeepSeek-V2-Lite")
    cfg = VllmConfig(max_model_len=8192, block_size=given, kv_cache_dtype=kv_dtype)
    assert V.mla_block_size(facts, cfg, version, gpu_name) == expected


@pytest.mark.parametrize("model,version,gpu_name,kv_dtype,layer_bytes", [
    # 0.7.2-0.7.3 V0 pads the 576-element latent to 256 bytes of the model dtype: 640 elements
    ("deepseek-ai/DeepSeek-V2-Lite", "0.7.3", "NVIDIA H100 80GB HBM3", None, 1280),
    ("deepseek-ai/DeepSeek-V2-Lite", "0.7.2", "NVIDIA A100-SXM4-80GB", None, 1280),
    # counted in the model dtype, stored in the KV dtype: an fp8 cache keeps 640 one-byte elements
    ("deepseek-ai/DeepSeek-V2-Lite", "0.7.3", "NVIDIA H100 80GB HBM3", "fp8", 640),
    ("deepseek-ai/DeepSeek-V3", "0.7.3", "NVIDIA H200", None, 1280),
    # 0.7.1 and 0.8.0 do not pad; ROCm is not CUDA (current_platform.is_cuda())
    ("deepseek-ai/DeepSeek-V2-Lite", "0.7.1", "NVIDIA H100 80GB HBM3", None, 1152),
    ("deepseek-ai/DeepSeek-V2-Lite", "0.8.0", "NVIDIA H100 80GB HBM3", None, 1152),
    ("deepseek-ai/DeepSeek-V2-Lite", "0.7.3", "AMD Instinct MI300X", None, 1152),
])
def test_mla_latent_entry_padding_by_release(model, version, gpu_name, kv_dtype, layer_bytes):
    facts = catalog_facts(model)
    cfg = VllmConfig(max_model_len=8192, kv_cache_dtype=kv_dtype)
    notes: list[str] = []
    shape = V.kv_shape(facts, cfg, 8192, notes, version, gpu_name)
    assert shape.layer_bytes == layer_bytes
    assert shape.bytes_per_token == facts.num_hidden_layers * layer_bytes
    assert [n for n in notes if "pads" in n] == ([f"vLLM {version} pads each MLA latent entry to 256 bytes "
                                                  f"({layer_bytes} B per token and layer; worker/cache_engine.py)"]
                                                 if layer_bytes in (1280, 640) else [])


def test_mla_latent_padding_of_a_float32_model_is_a_multiple_of_64_elements():
    facts = replace(catalog_facts("deepseek-ai/DeepSeek-V2-Lite"), dtype="float32")
    # 576 float32 elements are already 9 x 64 (256 bytes of float32): no padding, 4 bytes each
    assert mla_aligned_layer_bytes(facts, None, 256) == 576 * 4
    assert mla_aligned_layer_bytes(replace(facts, qk_rope_head_dim=72), None, 256) == 640 * 4


def test_mla_block_size_on_blackwell_takes_cutlass_when_flashinfer_refuses_the_head():
    facts = replace(catalog_facts("deepseek-ai/DeepSeek-V2-Lite"), qk_nope_head_dim=96)
    cfg = VllmConfig(max_model_len=8192)
    assert V.mla_block_size(facts, cfg, "0.17.0", "NVIDIA B200") == (128, "CUTLASS MLA")
    assert V.mla_block_size(facts, cfg, "0.24.0", "NVIDIA B200") == (128, "CUTLASS MLA")
    # 0.18.0+'s FlashInfer MLA takes qk_nope_head_dim 64 too; 0.16-0.17's hook only 128
    half = replace(facts, qk_nope_head_dim=64)
    assert V.mla_block_size(half, cfg, "0.17.0", "NVIDIA B200") == (128, "CUTLASS MLA")
    assert V.mla_block_size(half, cfg, "0.24.0", "NVIDIA B200") == (32, "FlashInfer MLA")


def test_b300_is_compute_capability_10_3_and_its_mla_block_differs_from_b200_before_0_13():
    assert [gpu_arch.compute_capability(n) for n in ("NVIDIA B200", "NVIDIA GB200", "NVIDIA B300 SXM6 AC",
                                                      "NVIDIA GB300", "NVIDIA B100")] == \
        [(10, 0), (10, 0), (10, 3), (10, 3), (10, 0)]
    cfg = VllmConfig(max_model_len=8192, tensor_parallel_size=8)
    facts = catalog_facts("deepseek-ai/DeepSeek-V3")
    b200, b300 = (estimate_vllm(facts, B200, cfg, version="0.12.0", gpu_name=name) for name in ("NVIDIA B200",
                                                                                                  "NVIDIA B300"))
    assert (b200.block_size, b300.block_size) == (128, 16)
    assert b200.kv_capacity_tokens % 128 == 0 and b300.kv_capacity_tokens % 16 == 0


@pytest.mark.parametrize("model,version,given,block,capacity", [
    ("meta-llama/Llama-3.1-8B", "0.33.0", None, 16, 451_168),
    ("meta-llama/Llama-3.1-8B", "0.34.0", None, 64, 488_064),  # CacheConfig.DEFAULT_BLOCK_SIZE = 64 from 0.34.0
    ("Qwen/Qwen3-8B", "0.34.0", None, 64, 427_648),
    ("Qwen/Qwen3-8B", "0.34.0", 16, 16, 427_648),  # a --block-size is kept
])
def test_dense_default_block_size_by_release(model, version, given, block, capacity):
    cfg = VllmConfig(max_model_len=8192, block_size=given)
    est = estimate_vllm(catalog_facts(model), 81_559 * MiB, cfg, version=version, gpu_name="NVIDIA H100 80GB HBM3")
    assert (est.block_size, est.kv_capacity_tokens) == (block, capacity)
    assert P.vllm_default_block_size(version) == (64 if version == "0.34.0" else 16)


H100 = 81_559 * MiB
RTX_5090 = 32_607 * MiB


@pytest.mark.parametrize("model,gpu_name,gpu_total,version,backend,kv_dtype,block", [
    # --attention-backend FLASH_ATTN on 10.x runs FA4, whose head-256 kernel takes 128-token pages from 0.29.0
    ("google/gemma-3-1b-it", "NVIDIA B200", B200, "0.29.0", "FLASH_ATTN", None, 128),
    ("google/gemma-3-1b-it", "NVIDIA B200", B200, "0.28.0", "FLASH_ATTN", None, 16),
    ("google/gemma-3-1b-it", "NVIDIA B300", B200, "0.34.0", "flash_attn", None, 128),  # max(64, 128)
    ("google/gemma-7b", "NVIDIA GB200", B200, "0.30.0", "FLASH_ATTN", None, 128),  # Gemma 1: head 256, MHA
    # not on 10.x: FA3 on 9.x, FA2 on 12.x (RTX 5090) and 8.x; without the flag 10.x runs FLASHINFER
    ("google/gemma-3-1b-it", "NVIDIA H100 80GB HBM3", H100, "0.29.0", "FLASH_ATTN", None, 16),
    ("google/gemma-3-1b-it", "NVIDIA GeForce RTX 5090", RTX_5090, "0.29.0", "FLASH_ATTN", None, 16),
    ("google/gemma-3-1b-it", "NVIDIA B200", B200, "0.29.0", None, None, 16),
    # what the head-256 kernel refuses runs FA2 with the default block
    ("google/gemma-3-1b-it", "NVIDIA B200", B200, "0.29.0", "FLASH_ATTN", "fp8", 16),  # quantized KV
    ("google/gemma-2-2b", "NVIDIA B200", B200, "0.29.0", "FLASH_ATTN", None, 16),  # logit softcapping
    ("google/gemma-3-4b-it", "NVIDIA B200", B200, "0.29.0", "FLASH_ATTN", None, 16),  # mm-prefix model
    ("meta-llama/Llama-3.1-8B", "NVIDIA B200", B200, "0.29.0", "FLASH_ATTN", None, 16),  # head 128
])
def test_fa4_head256_page_raises_the_dense_block(model, gpu_name, gpu_total, version, backend, kv_dtype, block):
    cfg = VllmConfig(max_model_len=8192, attention_backend=backend, kv_cache_dtype=kv_dtype)
    est = estimate_vllm(catalog_facts(model), gpu_total, cfg, version=version, gpu_name=gpu_name)
    assert est.block_size == block  # (Gemma 3's window layers make the printed capacity no multiple of it)
    raised = [n for n in est.notes if "FlashAttention 4" in n]
    assert raised == ([f"vLLM {version} raises the KV block to 128 tokens for FlashAttention 4's head-256 kernel on "
                       "compute capability 10.x (FLASH_ATTN get_preferred_block_size)"] if block == 128 else [])
    # a --block-size is kept (update_block_size_for_backend skips a user-specified one)
    given = estimate_vllm(catalog_facts(model), gpu_total, replace(cfg, block_size=32), version=version,
                          gpu_name=gpu_name)
    assert given.block_size == 32


def test_fa4_head256_page_moves_the_capacity_by_whole_pages():
    facts = catalog_facts("google/gemma-7b")
    cfg = VllmConfig(max_model_len=8192, attention_backend="FLASH_ATTN")
    fa4, flashinfer = (estimate_vllm(facts, B200, c, version="0.30.0", gpu_name="NVIDIA B200")
                       for c in (cfg, replace(cfg, attention_backend=None)))
    assert (fa4.block_size, flashinfer.block_size) == (128, 16)
    # the same bytes per token; only the rounding to whole blocks differs
    assert fa4.kv_bytes_per_token == flashinfer.kv_bytes_per_token
    assert (fa4.kv_capacity_tokens, flashinfer.kv_capacity_tokens) == (336_640, 336_656)  # 2,630 x 128 and 21,041 x 16


@pytest.mark.parametrize("version,gpu_name,kv_dtype,backend,expected", [
    ("0.33.0", "NVIDIA H100 80GB HBM3", "fp8", None, 64),  # FLASH_ATTN first on 9.x; FA3 -> FA4 past head 256
    ("0.32.0", "NVIDIA H100 80GB HBM3", "fp8", None, 16),
    ("0.33.0", "NVIDIA H100 80GB HBM3", None, None, 16),  # bf16 KV: no dequant kernel
    ("0.33.0", "NVIDIA H100 80GB HBM3", "fp8", "TRITON_ATTN", 16),
    ("0.33.0", "NVIDIA A100-SXM4-80GB", "fp8", None, 16),
    ("0.34.0", "NVIDIA H200", "fp8_e4m3", None, 64),
])
def test_fa4_sm90_fp8_head512_page(version, gpu_name, kv_dtype, backend, expected):
    facts = replace(catalog_facts("meta-llama/Llama-3.1-8B"), head_dim=512)
    cfg = VllmConfig(max_model_len=8192, kv_cache_dtype=kv_dtype, attention_backend=backend)
    assert V.dense_block_size(facts, cfg, version, gpu_name)[0] == expected
    assert V.dense_block_size(replace(facts, head_dim=256), cfg, version, gpu_name)[0] == \
        P.vllm_default_block_size(version)



def test_logit_softcapping_read_from_config_or_gemma2_default():
    from gpustack_guard.core.memory.hfconfig import facts_from_config

    assert catalog_facts("google/gemma-2-2b").attention_softcap  # Gemma2Config's default 50.0
    assert not catalog_facts("google/gemma-3-1b-it").attention_softcap
    base = {"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "hidden_size": 2304,
            "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
            "intermediate_size": 9216, "vocab_size": 256000}
    assert not facts_from_config({**base, "attn_logit_softcapping": None}, "test").attention_softcap


@pytest.mark.parametrize("version,gpu_name,backend,expected", [
    ("0.24.0", "NVIDIA B200", "TRITON_MLA", (16, "TRITON_MLA")),  # MultipleOf(16): the default
    ("0.24.0", "NVIDIA B200", "CUTLASS_MLA", (128, "CUTLASS_MLA")),
    ("0.24.0", "NVIDIA H100 80GB HBM3", "FLASHMLA", (64, "FLASHMLA")),
    ("0.24.0", "NVIDIA H100 80GB HBM3", "flashinfer_mla", (32, "FLASHINFER_MLA")),
    ("0.34.0", "NVIDIA B200", "FLASHINFER_MLA", (64, "FLASHINFER_MLA")),  # the 64 default is listed
    ("0.34.0", "NVIDIA B200", "FLASH_ATTN", (64, "FlashInfer MLA")),  # not an MLA backend: the platform's pick
])
def test_mla_block_size_follows_a_named_backend(version, gpu_name, backend, expected):
    cfg = VllmConfig(max_model_len=8192, attention_backend=backend)
    assert V.mla_block_size(catalog_facts("deepseek-ai/DeepSeek-V2-Lite"), cfg, version, gpu_name) == expected


def test_mla_block_size_on_an_unnamed_gpu_says_it_is_hoppers():
    cfg = VllmConfig(max_model_len=8192, tensor_parallel_size=8)
    facts = catalog_facts("deepseek-ai/DeepSeek-V3")
    unnamed = estimate_vllm(facts, B200, cfg, version="0.14.0", gpu_name="")
    assert unnamed.block_size == 64
    assert "GPU not named: the MLA block size (64, FlashMLA) is Hopper's; vLLM picks the MLA backend, and its " \
           "block, by compute capability" in unnamed.notes
    named = estimate_vllm(facts, B200, cfg, version="0.14.0", gpu_name="NVIDIA B200")
    assert named.block_size == 128 and not [n for n in named.notes if n.startswith("GPU not named")]
@pytest.mark.parametrize("version,engine,expected", [
    ("0.6.4", "v0", P.NON_TORCH_SINGLE),  # the profiler took the CUDA context in (worker.py@v0.6.4)
    ("0.6.5", "v0", int(0.16 * GiB)),  # from the post-CUDA-init baseline (utils.py@v0.6.5 memory_profiling)
    ("0.8.2", "v0", int(0.16 * GiB)),
    ("0.9.1", "v1", P.NON_TORCH_SINGLE),  # V1 keeps its own row
    ("0.24.0", "v1", P.NON_TORCH_SINGLE),
])
def test_v0_alone_on_a_gpu_books_non_torch_from_its_baseline_from_0_6_5(version, engine, expected):
    assert V.parallel_overheads("Tesla T4", 1, 1, False, version, engine=engine) == (expected, 0, 0)
    # a TP group keeps its interconnect's row whatever the engine
    assert V.non_torch_links("Tesla T4", 2, 1, engine=engine) == "peerless"


def test_a_v0_fallback_estimate_names_the_v0_non_torch_row():
    # vLLM 0.8.2 falls back to V0 below compute capability 8.0 (a second model and GPU than the T4 vector)
    est = estimate_vllm(catalog_facts("Qwen/Qwen2.5-1.5B"), 32_768 * MiB, VllmConfig(max_model_len=4096),
                        version="0.8.2", gpu_name="Tesla V100-SXM2-32GB")
    assert est.extra["non_torch_source"].startswith("worker.py@v0.6.5 / utils.py@v0.6.5")
    assert est.non_torch == int(0.16 * GiB)


@pytest.mark.parametrize("model,tp,gpu", [("meta-llama/Llama-2-7b-hf", 1, "NVIDIA A100-SXM4-80GB"),
                                          ("meta-llama/Llama-2-13b-hf", 2, "NVIDIA GeForce RTX 4090")])
def test_v0_up_to_0_2_4_budgets_torch_peak_alone(model, tp, gpu):
    # worker.py@v0.2.4 subtracts torch.cuda.max_memory_allocated() from gmu x total; @v0.2.5 total - free after the
    # profile (vllm PR #2031), so from 0.2.5 the non-torch memory (CUDA context, NCCL) comes off the pool as well
    facts = catalog_facts(model)
    cfg = VllmConfig(max_model_len=4096, tensor_parallel_size=tp)
    old, new = (estimate_vllm(facts, 24_564 * MiB if tp == 2 else 81_920 * MiB, cfg, version=v, gpu_name=gpu)
                for v in ("0.2.4", "0.2.5"))
    # 0.2.5 also budgets what torch reserved (tests/core/memory/test_vllm_v0_reserved.py): at TP 2 the 13B's halved
    # forward caches no block that holds the 256 x 32,000 sort's reverse indices (62.5 MiB) or cub's storage (78.1)
    reserved = new.activation - old.activation
    assert reserved == (0 if tp == 1 else 64 * MiB + 80 * MiB)
    assert old.weights == new.weights and old.non_torch == new.non_torch > 0
    assert old.kv_available == new.kv_available + new.non_torch + reserved
    # the 0.2.7 and 0.3.3 profiles are 0.2.5's
    for version in ("0.2.7", "0.3.3"):
        assert estimate_vllm(facts, 24_564 * MiB if tp == 2 else 81_920 * MiB, cfg, version=version,
                             gpu_name=gpu).kv_available == new.kv_available
