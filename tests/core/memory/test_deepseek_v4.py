"""DeepSeek-V4 (compressed sparse attention): checkpoint bytes and vLLM's packed KV layout, to the byte.

The KV numbers are B14 of docs/memory-arithmetic.md (vllm#44376): 30,000 tokens need 6.66 GiB, and 5.44 GiB of pool
gives an estimated maximum length of 13,528. The profile forward is derived from vLLM's source
(profiles.VLLM_V4_FORWARD_SOURCE), not fit to that log.
"""

from dataclasses import replace

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.deepseek_v4 import CompressedKV
from gpustack_guard.core.memory.engines import vllm as V
from gpustack_guard.core.memory.engines.sglang import SglangConfig, estimate_sglang
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.memory.weights import param_breakdown, weight_layout, weights_per_rank
from gpustack_guard.core.units import GiB, MiB

pytestmark = pytest.mark.xdist_group("deepseek-v4")  # its module-scoped fixtures are built once, on one worker

INDEX_TOTAL_SIZE = 159_609_485_896  # model.safetensors.index.json of deepseek-ai/DeepSeek-V4-Flash
GH200 = 97871 * MiB
GH200_NAME = "NVIDIA GH200 96GB HBM3"  # as GPUStack reports it; capability 9.0


@pytest.fixture(scope="module")
def v4():
    return catalog_facts("deepseek-ai/DeepSeek-V4-Flash")


def test_config_fields_parsed(v4):
    assert v4.is_compressed_attention and not v4.is_mla
    assert (v4.compress_ratios.count(4), v4.compress_ratios.count(128), len(v4.compress_ratios)) == (21, 20, 44)
    assert (v4.index_n_heads, v4.index_head_dim, v4.hc_mult, v4.o_groups, v4.o_lora_rank) == (64, 128, 4, 8, 1024)
    assert (v4.num_hash_layers, v4.num_nextn_predict_layers, v4.expert_dtype) == (3, 1, "fp4")
    assert v4.max_position_embeddings == 1_048_576


def test_checkpoint_bytes_match_the_published_index(v4):
    layout = weight_layout(v4)
    assert layout.total == 156_012_861_660  # loaded: 43 layers, embeddings, head
    assert layout.unloaded == 3_593_787_756  # the MTP layer
    assert INDEX_TOTAL_SIZE - (layout.total + layout.unloaded) == 2_836_480  # 159,606,649,416: -0.002 %


def test_parameter_count_is_the_published_284b(v4):
    assert param_breakdown(v4).total == 284_332_240_471


def test_measured_index_total_rescales_without_counting_mtp(v4):
    measured = replace(v4, weight_bytes=INDEX_TOTAL_SIZE)
    assert weight_layout(measured).total == 156_015_634_245  # 156,012,861,660 x index / computed


def test_tensor_parallel_ranks_hold_replicated_parts_whole(v4):
    layout = weight_layout(v4)
    assert sum(layout.per_layer_replicated) == 1_313_735_624
    assert weights_per_rank(v4, 2, 1) == 78_663_298_642  # (total - replicated) / 2 + replicated
    assert weights_per_rank(v4, 1, 1) == layout.total


def test_packed_layout_geometry(v4):
    kv = CompressedKV(v4, pp=1, in_flight_tokens=16384)
    # one block: CSA latent 37,440 + indexer keys 8,640 + HCA latent 1,728 bytes, 22 layer tuples
    assert (kv.tuple_bytes, kv.tuples, kv.block_bytes) == (47_808, 22, 1_051_776)
    assert (kv.swa_groups, kv.csa_state_groups, kv.hca_state_groups) == (2, 1, 1)  # the "5-group" layout
    assert kv.bytes_per_token == 4_109


def test_b14_kv_demand_and_estimated_max_length(v4):
    kv = CompressedKV(v4, pp=1, in_flight_tokens=16384)
    assert kv.request_pages(30000) == 118 + 2 * 259 + 4099 + 2065
    assert kv.request_bytes(30000) == 7_152_076_800  # the log's "6.66 GiB KV cache is needed"
    assert round(kv.request_bytes(30000) / GiB, 2) == 6.66
    assert kv.request_bytes(13528) == 5_841_563_904
    assert kv.request_bytes(13529) == 5_843_667_456
    # any pool vLLM would print as 5.44 GiB and that holds 13,528 tokens but not 13,529
    assert kv.max_tokens_fitting(5_842_000_000, 30000) == 13528
    assert kv.max_tokens_fitting(kv.request_bytes(1) - 1, 30000) == 0


def test_windowed_caches_stop_growing_after_window_plus_in_flight(v4):
    kv = CompressedKV(v4, pp=1, in_flight_tokens=8192)
    growth = kv.request_bytes(200_000) - kv.request_bytes(100_000)
    assert growth == (782 - 391) * 1_051_776  # only the 256-token blocks of the compressed latents


def test_in_flight_tokens_double_from_vllm_0_26(v4):
    # kv_cache_interface.py SlidingWindowSpec.max_admission_blocks_per_request adds one max_num_batched_tokens
    # at 0.23.0-0.25.1 and VllmConfig.max_in_flight_tokens (2 x under async scheduling) from 0.26.0
    cfg = VllmConfig(gpu_memory_utilization=0.95, max_model_len=30000, max_num_batched_tokens=8192,
                     max_num_seqs=1024, tensor_parallel_size=2, kv_cache_dtype="fp8")
    assert CompressedKV(v4, 1, 8192).request_pages(30000) == 118 + 2 * 131 + 2051 + 1041
    for one_step in ("0.23.0", "0.24.0", "0.25.0", "0.25.1"):
        assert estimate_vllm(v4, GH200, cfg, version=one_step).kv_needed == 3_651_766_272, one_step
    assert CompressedKV(v4, 1, 8192).request_bytes(30000) == 3_651_766_272
    after = estimate_vllm(v4, GH200, cfg, version="0.26.0")
    assert after.kv_needed == CompressedKV(v4, 1, 16384).request_bytes(30000) == 7_152_076_800


UNREAD_NOTE = ("DeepSeek-V4's forward peak holds 254,555 B per batched token measured on one log (vllm#44376), not "
               "derived: the compiled graph's liveness is not read")
B14_CFG = VllmConfig(gpu_memory_utilization=0.95, max_model_len=30000, max_num_batched_tokens=16384,
                     max_num_seqs=1024, tensor_parallel_size=2, kv_cache_dtype="fp8", block_size=256,
                     expert_parallel=True)


def test_b14_forward_is_derived_part_by_part(v4):
    # profiles.VLLM_V4_FORWARD_SOURCE at T = 16384 tokens on one of two ranks (H 4096, hc_mult 4, 32 local heads
    # padded to 64 of 512, q_lora 1024, 64 index heads of 128). Held per token: previous output and residual
    # streams, new residual streams, layer input (4096 + 16384 + 16384 + 4096) x 2 B + mixes (4 + 16) x 4 B
    # = 82,000. Indexer step: + o_padded 65,536 + qr_kv and its normed copies 6,144 + padded q 65,536 + index q
    # bf16 and fp8 24,576 + fp32 weights 256 = 244,048 B x 16384 + the 512 MiB dummy logits = 4,535,353,344,
    # above the attention step (251,984 B x 16384 = 4,128,505,856) and the MoE step.
    est = estimate_vllm(v4, GH200, B14_CFG, version="0.22.0", gpu_name=GH200_NAME)
    assert est.extra["v4_forward_parts"] == {
        "layer_peak": 244_048 * 16384 + 512 * MiB,
        # the WorkspaceManager's one buffer, grown to the largest request: Marlin's, 2 x 16384 x 6 x 4096 x 2 B
        "workspace_manager": 1_610_612_736,
        "topk_indices_buffer": 16384 * 512 * 4,
        "mtp_hidden_buffer": 16384 * 4 * 4096 * 2,
        # kept apart from the derived parts: profiles.VLLM_V4_UNREAD_PER_TOKEN per batched token
        "unread_measured_once": 16384 * P.VLLM_V4_UNREAD_PER_TOKEN}
    requests = est.extra["v4_workspace_requests"]
    # FlashMLA's ratio-4 gather: 4 x (ceil(30000 / 4) + 128 window + 16384) x 512 x 2 B, now below Marlin's
    assert requests["flashmla_gather_ratio_4"] == 4 * (7500 + 128 + 16384) * 512 * 2
    assert max(requests, key=requests.__getitem__) == "marlin_moe"


def test_v4_marlin_experts_request_on_hopper(v4):
    # profiles.VLLM_V4_MARLIN_SOURCE: on SM90 the MXFP4 experts run MarlinExperts, whose caches come from the
    # WorkspaceManager unchunked: max(T x 6 x max(2048, 4096), T x 4096) + T x 6 x max(2 x 2048, 4096), bf16.
    # Expert parallelism keeps each expert whole (I 2048); without it TP 2 halves I, which H still outgrows.
    requests = V.v4_workspace_requests(v4, 16384, 30000, tp=2, expert_parallel=True, gpu_name=GH200_NAME)
    assert requests["marlin_moe"] == 16384 * 6 * 4096 * 2 + 16384 * 6 * 4096 * 2 == 1_610_612_736
    assert V.v4_workspace_requests(v4, 16384, 30000, tp=2, gpu_name=GH200_NAME)["marlin_moe"] == 1_610_612_736
    # a wider expert (I 6144 > H) sizes both workspaces by I: 1000 x 8 x 6144 + 1000 x 8 x 12,288, bf16
    wide = replace(v4, moe_intermediate_size=6144, num_experts_per_tok=8)
    assert V.v4_workspace_requests(wide, 1000, 30000, tp=1, gpu_name=GH200_NAME)["marlin_moe"] == \
        (1000 * 8 * 6144 + 1000 * 8 * 12_288) * 2


@pytest.mark.parametrize(("gpu_name", "marlin"), [
    ("NVIDIA GH200 96GB HBM3", True), ("NVIDIA H100 80GB HBM3", True), ("NVIDIA A100-SXM4-80GB", True),
    ("Tesla T4", True),  # capability 7.5, Marlin's floor
    ("NVIDIA GeForce RTX 5090", True),  # 12.x is outside the 10.x family TRTLLM and DeepGEMM require
    ("Tesla V100-SXM2-32GB", False),  # 7.0: below Marlin's floor
    ("NVIDIA B200", False),  # 10.x: TRTLLM MXFP8 first, its buffers not read
    ("", False)])  # unknown: not assumed
def test_v4_marlin_experts_by_gpu(v4, gpu_name, marlin):
    assert V.v4_marlin_experts(gpu_name) is marlin
    requests = V.v4_workspace_requests(v4, 8192, 30000, tp=2, expert_parallel=True, gpu_name=gpu_name)
    assert ("marlin_moe" in requests) is marlin


def test_v4_kernel_not_read_keeps_the_fused_experts_caches_in_the_moe_step(v4):
    # On a B200 the MoE step carries fused_experts' caches (moe_workspace) and the manager only the gathers:
    # 16384 x 97,408 B of MoE transients + the caches, below the indexer step, so the layer peak is unchanged.
    parts = V.v4_forward_parts(v4, 16384, 2, B14_CFG, gpu_name="NVIDIA B200")
    assert parts["workspace_manager"] == 4 * (7500 + 128 + 16384) * 512 * 2
    assert parts["layer_peak"] == 244_048 * 16384 + 512 * MiB
    assert 16384 * 97_408 + V.moe_workspace(v4, 16384, 2, True) < parts["layer_peak"]


def test_b14_end_to_end_pool_from_the_derivation(v4):
    # The log (vllm#44376) prints 5.44 GiB; the derived parts alone leave 9.33 GiB (+71 %, MISSES.md: the compiled
    # graph's liveness is not read). The remainder, 254,555 B per batched token, is carried apart as measured on
    # this log so that the refusal stays a refusal; the derived parts are what this test holds to the byte.
    est = estimate_vllm(v4, GH200, B14_CFG, version="0.22.0", gpu_name=GH200_NAME)
    assert est.weights == 78_663_298_642
    assert est.kv_needed == 7_152_076_800
    derived = 4_535_353_344 + 1_610_612_736 + 33_554_432 + 536_870_912
    # the four derived parts + the measured remainder + Hopper's cuBLAS workspace (32 MiB)
    assert est.activation == derived + 16384 * P.VLLM_V4_UNREAD_PER_TOKEN + 32 * MiB
    assert est.kv_cache == 10_013_214_332 - 16384 * P.VLLM_V4_UNREAD_PER_TOKEN
    assert est.verdict == "kv-below-max-model-len"
    assert est.block_size == 256
    rule = est.extra["term_rules"]["forward_peak_bytes_per_gpu"]
    assert rule[0] == "live-tensors-deepseek-v4" and "deepseek_v4.py@v0.21.0" in rule[1]
    assert "VLLM_V4_MARLIN_SOURCE" in rule[1] and "unread_measured_once: measured once: vllm#44376" in rule[1]


def test_v4_forward_on_a_second_configuration(v4):
    # TP 4 + EP, 8192 batched tokens, vLLM 0.26.0: 16 local heads padded to 64, so the padded tensors keep
    # their width while wq_b's q halves. Indexer step: held 82,000 + 65,536 + 6,144 + 65,536 + 24,576 + 256
    # = 244,048 B x 8192 + 512 MiB; attention step 82,000 + 65,536 + 6,144 + 16,384 + 65,536 = 235,600 B.
    # Marlin's request halves with T (8192 x 6 x 4096 x 2 B, twice) and still outgrows the gathers.
    cfg = replace(B14_CFG, tensor_parallel_size=4, max_num_batched_tokens=8192)
    est = estimate_vllm(v4, GH200, cfg, version="0.26.0", gpu_name=GH200_NAME)
    assert est.extra["v4_forward_parts"] == {
        "layer_peak": 244_048 * 8192 + 512 * MiB,
        "workspace_manager": 2 * 8192 * 6 * 4096 * 2,
        "topk_indices_buffer": 8192 * 512 * 4,
        "mtp_hidden_buffer": 8192 * 4 * 4096 * 2,
        "unread_measured_once": 8192 * P.VLLM_V4_UNREAD_PER_TOKEN}
    assert est.extra["v4_workspace_requests"]["flashmla_gather_ratio_4"] == 4 * (7500 + 128 + 8192) * 512 * 2
    # a longer context grows only the gather request: ceil(100000 / 4) = 25,000 compressed entries
    longer = estimate_vllm(v4, GH200, replace(cfg, max_model_len=100_000), version="0.26.0", gpu_name=GH200_NAME)
    assert longer.extra["v4_workspace_requests"]["flashmla_gather_ratio_4"] == 4 * (25_000 + 128 + 8192) * 512 * 2
    assert longer.extra["v4_forward_parts"]["workspace_manager"] == 2 * 8192 * 6 * 4096 * 2


def test_v4_indexer_workspace_binds_when_the_batch_is_small(v4):
    # 256 batched tokens and 300,000 tokens of context: the indexer's K gather (40 x 300,000 / 4 = 3,000,000
    # entries of 128 fp8 + 4 B scale, + 1 MiB radix top-k) outgrows FlashMLA's 4 x (75,000 + 128 + 256) x 1,024 B
    cfg = replace(B14_CFG, max_num_batched_tokens=256, max_model_len=300_000)
    est = estimate_vllm(v4, GH200, cfg, version="0.22.0", gpu_name=GH200_NAME)
    parts = est.extra["v4_forward_parts"]
    assert parts["workspace_manager"] == 3_000_000 * 128 + 3_000_000 * 4 + MiB
    # Marlin's request at 256 tokens is 2 x 256 x 6 x 4096 x 2 B: asked for, and outgrown
    assert est.extra["v4_workspace_requests"]["marlin_moe"] == 2 * 256 * 6 * 4096 * 2
    assert parts["workspace_manager"] > 4 * (75_000 + 128 + 256) * 512 * 2


def test_block_size_and_dtype_notes(v4):
    est = estimate_vllm(v4, GH200, VllmConfig(max_model_len=8192, tensor_parallel_size=2, block_size=64),
                        version="0.22.0")
    assert est.block_size == 256
    assert est.notes == ("DeepSeek-V4 runs with block size 256 whatever --block-size says",
                         "KV sized as fp8_ds_mla, the layout vLLM's DeepSeek-V4 kernels use; set --kv-cache-dtype fp8",
                         UNREAD_NOTE)
    fp8 = estimate_vllm(v4, GH200, VllmConfig(max_model_len=8192, tensor_parallel_size=2, kv_cache_dtype="fp8"),
                        version="0.22.0")
    assert fp8.notes == (UNREAD_NOTE,)


def test_missing_v4_fields_are_named():
    config = {"model_type": "deepseek_v4", "hidden_size": 4096, "num_hidden_layers": 2, "num_attention_heads": 64,
              "vocab_size": 1000, "n_routed_experts": 4, "moe_intermediate_size": 64, "compress_ratios": [0, 4]}
    with pytest.raises(ValueError, match="head_dim, q_lora_rank, num_experts_per_tok, index_n_heads"):
        param_breakdown(facts_from_config(config, "test"))
    short = {**config, "head_dim": 512, "q_lora_rank": 64, "num_experts_per_tok": 2, "index_n_heads": 4,
             "index_head_dim": 32, "compress_ratios": [0]}
    with pytest.raises(ValueError, match=r"missing compress_ratios \(one per layer\)"):
        param_breakdown(facts_from_config(short, "test"))


def test_sglang_declines_compressed_attention(v4):
    with pytest.raises(ValueError, match="no SGLang memory model for compressed sparse attention"):
        estimate_sglang(v4, GH200, SglangConfig(tp_size=2), version=None)


B14_SPEC = """\
name: dsv4-flash
source: huggingface
huggingface_repo_id: deepseek-ai/DeepSeek-V4-Flash
gpu_selector: {gpu_ids: ['gh-0:cuda:0', 'gh-0:cuda:1']}
backend: vLLM
backend_version: 0.22.0
backend_parameters: [--tensor-parallel-size=2, --enable-expert-parallel, --gpu-memory-utilization=0.95,
  --kv-cache-dtype=fp8, --block-size=256, --max-model-len=30000, --max-num-batched-tokens=16384,
  --max-num-seqs=1024]
"""
GH200_FLEET = """\
clusters:
- name: gh
  workers:
  - name: gh-0
    gpus:
    - {index: 0, name: NVIDIA GH200 96GB HBM3, memory: {total: 97871MiB}}
    - {index: 1, name: NVIDIA GH200 96GB HBM3, memory: {total: 97871MiB}}
"""


def test_validate_names_the_kv_shortfall_and_the_length_to_set(gsg, tmp_path):
    # B14 as the log ran it (gmu 0.95): the message, the argument's position and the fix. Its 5.44 GiB holds the
    # part measured on this very log (profiles.VLLM_V4_UNREAD_PER_TOKEN), so it checks the wording, not the arithmetic
    (tmp_path / "b14.yaml").write_text(B14_SPEC)
    (tmp_path / "fleet.yaml").write_text(GH200_FLEET)
    result = gsg("validate", str(tmp_path / "b14.yaml"), "--fleet", str(tmp_path / "fleet.yaml"))
    assert result.code == 1
    line = next(x for x in result.out.splitlines() if "GSG032" in x)
    assert "b14.yaml:8:43:" in line  # the --max-model-len argument
    assert "one sequence of 30,000 tokens needs 6.66 GiB of KV cache but only 5.44 GiB is available" in line
    assert "Estimated maximum model length: 13,528" in line
    assert "fix: set --max-model-len 13528 or lower" in result.out


def test_sglang_spec_for_v4_is_a_model_facts_finding(gsg, tmp_path):
    spec = B14_SPEC.replace("backend: vLLM", "backend: SGLang").replace("backend_version: 0.22.0\n", "")
    spec = spec[:spec.index("backend_parameters")] + "backend_parameters: [--tp-size=2]\n"
    (tmp_path / "b14.yaml").write_text(spec)
    (tmp_path / "fleet.yaml").write_text(GH200_FLEET)
    result = gsg("validate", str(tmp_path / "b14.yaml"), "--fleet", str(tmp_path / "fleet.yaml"))
    assert result.code == 1
    line = next(x for x in result.out.splitlines() if "GSG030" in x)
    assert "b14.yaml:5:" in line and "no SGLang memory model for compressed sparse attention" in line
