"""SGLang 0.5.18+'s multimodal reserve (profiles.SGLANG_MM_RESERVE_ROWS, engines/sglang.multimodal_kv_reserve): the
embedding cache's 100 MB, plus the 1 GiB feature pool when the transport resolves to cuda_ipc or cuda_vmm, taken off
a multimodal model's KV budget before the pools are sized (kv_cache_configurator.py@v0.5.18 .. @v0.5.23)."""

from __future__ import annotations

import pytest
from support.vision_configs import QWEN3_VL_8B, QWEN3_VL_30B_A3B, QWEN25_VL_7B

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engine import estimate, sglang_config
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import MiB
from gpustack_guard.core.verify.compare import estimated_terms
from gpustack_guard.core.verify.logparse import parse_log

H200 = (143771 * MiB, "NVIDIA H200")
H100 = (81559 * MiB, "NVIDIA H100 80GB HBM3")
L40S = (46068 * MiB, "NVIDIA L40S")
QWEN35 = catalog_facts("Qwen/Qwen3.5-27B")
QWEN25_VL = facts_from_config(QWEN25_VL_7B, "Qwen/Qwen2.5-VL-7B-Instruct")
QWEN3_VL = facts_from_config(QWEN3_VL_8B, "Qwen/Qwen3-VL-8B-Instruct")


def run(facts, flags, version, gpu=H200, env=None):
    return estimate("sglang", facts, [gpu], flags, version, Policy(), env or {})


def test_rows_are_keyed_where_the_wheels_changed():
    assert [(r.since, r.cache_mb, r.feature_pool_mb, r.hopper_qwen3_vl) for r in P.SGLANG_MM_RESERVE_ROWS] == [
        ("0.0.0", 0, 0, False), ("0.5.18", 100, 1024, False), ("0.5.20", 100, 1024, True)]


@pytest.mark.parametrize("facts", [QWEN35, QWEN25_VL], ids=["qwen3.5-27b-gdn", "qwen2.5-vl-7b"])
@pytest.mark.parametrize(("flags", "env", "reserve_mb", "transport"), [
    ({}, {}, 100, "cpu"),  # one node: cpu, the embedding cache alone
    ({"mm-feature-transport": "cuda_ipc"}, {}, 100 + 1024, "cuda_ipc"),
    ({"mm-feature-transport": "CUDA_VMM"}, {}, 100 + 1024, "cuda_vmm"),
    ({"keep-mm-feature-on-device": None}, {}, 100 + 1024, "cuda_ipc"),  # the deprecated switch
    ({}, {"SGLANG_USE_CUDA_IPC_TRANSPORT": "1"}, 100 + 1024, "cuda_ipc"),  # the deprecated variable
    ({"mm-feature-transport": "cuda_ipc"}, {"SGLANG_MM_FEATURE_CACHE_MB": "2048"}, 100 + 2048, "cuda_ipc"),
    ({}, {"SGLANG_VLM_CACHE_SIZE_MB": "0"}, 0, "cpu"),
    ({"mm-feature-transport": "cuda_ipc", "encoder-only": None}, {}, 100, "cpu"),
])
def test_reserve_comes_off_the_kv_budget_from_0_5_18(facts, flags, env, reserve_mb, transport):
    old, new = run(facts, flags, "0.5.17", env=env), run(facts, flags, "0.5.18", env=env)
    assert "multimodal_kv_reserve" not in old.extra
    assert (new.extra["multimodal_kv_reserve"], new.extra["mm_feature_transport"]) == (reserve_mb * MiB, transport)
    assert old.kv_available - new.kv_available == reserve_mb * MiB
    assert estimated_terms(new)["multimodal_kv_reserve_bytes_per_gpu"] == reserve_mb * MiB


def test_capacity_figures_of_two_models_and_releases():
    # Qwen3.5-27B: the reserve comes off before the mamba slots and the KV rest are divided (a GDN hybrid)
    assert [run(QWEN35, {}, v).kv_capacity_tokens for v in ("0.5.17", "0.5.18", "0.5.20")] == [
        571_525, 569_925, 569_925]
    assert run(QWEN35, {"mm-feature-transport": "cuda_ipc"}, "0.5.18").kv_capacity_tokens == 562_937
    base = run(QWEN25_VL, {}, "0.5.17")
    cell = base.kv_bytes_per_token
    for version in ("0.5.18", "0.5.23"):
        est = run(QWEN25_VL, {}, version)
        assert base.kv_capacity_tokens - est.kv_capacity_tokens == pytest.approx(100 * MiB / cell, abs=1)


def test_text_models_and_classes_served_text_only_reserve_nothing():
    llama = catalog_facts("meta-llama/Llama-3.1-8B-Instruct")
    assert "multimodal_kv_reserve" not in run(llama, {"mm-feature-transport": "cuda_ipc"}, "0.5.23").extra
    gemma = facts_from_config({**QWEN25_VL_7B, "architectures": ["Gemma3ForConditionalGeneration"]}, "gemma-like")
    assert "multimodal_kv_reserve" not in run(gemma, {}, "0.5.20").extra
    assert run(gemma, {"enable-multimodal": None}, "0.5.20").extra["multimodal_kv_reserve"] == 100 * MiB


@pytest.mark.parametrize(("version", "gpu", "flags", "env", "reserve_mb", "transport"), [
    ("0.5.19", H100, {}, {}, 100, "cpu"),  # the Hopper override arrives in 0.5.20
    ("0.5.20", H100, {}, {}, 1024, "cuda_ipc"),  # cache off, cuda_ipc on one node
    ("0.5.23", H200, {"max-running-requests": "400"}, {}, 3 * 1024, "cuda_ipc"),  # a wide wave: 3 GiB pool
    ("0.5.23", H200, {"max-running-requests": "399"}, {}, 1024, "cuda_ipc"),
    ("0.5.23", H200, {"mm-preprocess-cache-size-mb": "64"}, {}, 0, "cpu"),  # a retaining cache keeps cpu
    ("0.5.23", H200, {}, {"SGLANG_VLM_CACHE_SIZE_MB": "200"}, 200, "cpu"),
    ("0.5.23", H200, {"mm-feature-transport": "cpu"}, {}, 0, "cpu"),
    ("0.5.23", L40S, {}, {}, 100, "cpu"),  # not SM90
])
def test_qwen3_vl_on_large_hopper_from_0_5_20(version, gpu, flags, env, reserve_mb, transport):
    est = run(QWEN3_VL, flags, version, gpu=gpu, env=env)
    assert (est.extra["multimodal_kv_reserve"], est.extra["mm_feature_transport"]) == (reserve_mb * MiB, transport)


def test_multi_node_notes_the_cuda_vmm_choice():
    est = run(QWEN25_VL, {"nnodes": "2"}, "0.5.20")
    assert est.extra["mm_feature_transport"] == "cpu"
    assert any("cuda_vmm" in note for note in est.notes)


@pytest.mark.parametrize(("flags", "env", "message"), [
    ({"mm-feature-transport": "shm"}, {}, "--mm-feature-transport 'shm': SGLang accepts cpu, cuda_ipc, cuda_vmm"),
    ({}, {"SGLANG_VLM_CACHE_SIZE_MB": "1.5"}, "env SGLANG_VLM_CACHE_SIZE_MB='1.5': SGLang reads a whole number"),
    ({}, {"SGLANG_MM_FEATURE_CACHE_MB": str(2**31)}, "more MB than any GPU holds"),
    ({}, {"SGLANG_USE_CUDA_IPC_TRANSPORT": "maybe"}, "SGLANG_USE_CUDA_IPC_TRANSPORT='maybe': SGLang reads true"),
])
def test_bad_values_are_one_clear_error(flags, env, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        sglang_config(flags, "0.5.20", env)


def test_verify_reads_the_reserve_line_per_rank():
    lines = ["[2026-09-11 23:46:11 TP0 EP0] Reserving 0.10 GB of the KV budget for post-sizing multimodal "
             "allocations (feature-transport pools + embedding cache).\n",
             "[2026-09-11 23:46:11 TP1 EP1] Reserving 1.10 GB of the KV budget for post-sizing multimodal "
             "allocations (feature-transport pools + embedding cache).\n"]
    log, _ = parse_log(lines, "sglang")
    assert log.ranks["TP0 EP0"]["multimodal_kv_reserve_bytes_per_gpu"] == int(0.10 * 1024**3)
    assert log.ranks["TP1 EP1"]["multimodal_kv_reserve_bytes_per_gpu"] == int(1.10 * 1024**3)


@pytest.mark.parametrize(("facts", "version", "gpu", "running", "graph_bs"), [
    # qwen3_vl.py@0.5.20 .. @0.5.23 expand_multimodal_decode_graph_to_running_limit: the default 256 rises to
    # --max-running-requests (at most 512) on an SM90 GPU of 60 GiB or more
    (QWEN3_VL, "0.5.20", H100, "400", 400), (QWEN3_VL, "0.5.19", H100, "400", 256),
    (facts_from_config(QWEN3_VL_30B_A3B, "Qwen/Qwen3-VL-30B-A3B-Instruct"), "0.5.23", H200, "512", 512),
    (QWEN3_VL, "0.5.23", H100, "513", 256),  # above 512: left alone
    (QWEN3_VL, "0.5.23", (81920 * MiB, "NVIDIA A100-SXM4-80GB"), "400", 256),  # SM80
    (QWEN3_VL, "0.5.23", L40S, "400", 32),  # SM89, 45 GiB: the 35-60 GiB default
    (QWEN25_VL, "0.5.23", H100, "400", 256),  # another model type
    (QWEN3_VL, "0.5.23", H100, "128", 128),  # below the default: 0.5.22's cut, no raise
])
def test_qwen3_vl_on_large_hopper_raises_the_decode_graph_batch_from_0_5_20(facts, version, gpu, running, graph_bs):
    est = run(facts, {"max-running-requests": running}, version, gpu=gpu)
    assert est.extra["cuda_graph_max_bs"] == graph_bs


def test_the_raised_decode_batch_moves_the_reserve():
    # 0.5.20 on an H100: 512 + 8192 x 1.5 + bs x 2 + 128 MiB (no prefill graphs for a multimodal model), then the
    # Qwen3-VL factor; 400 graphs keep 288 MiB more than 256
    raised, given = (run(QWEN3_VL, {"max-running-requests": "400", **flags}, "0.5.20", gpu=H100)
                     for flags in ({}, {"cuda-graph-max-bs-decode": "256"}))
    assert (raised.extra["cuda_graph_max_bs"], given.extra["cuda_graph_max_bs"]) == (400, 256)
    factor = raised.extra["mem_fraction_static"] / round((81_559 - 13_728) / 81_559, 3)
    assert given.extra["mem_fraction_static"] == pytest.approx(round((81_559 - 13_440) / 81_559, 3) * factor)
