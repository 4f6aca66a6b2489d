"""DeepSeek-V4 (compressed sparse attention): checkpoint bytes and vLLM's packed KV layout, to the byte.

The KV numbers are B14 of docs/memory-arithmetic.md (vllm#44376): 30,000 tokens need 6.66 GiB, and 5.44 GiB of pool
gives an estimated maximum length of 13,528.
"""

from dataclasses import replace

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory.deepseek_v4 import CompressedKV
from gpustack_guard.core.memory.engines.sglang import SglangConfig, estimate_sglang
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.memory.weights import param_breakdown, weight_layout, weights_per_rank
from gpustack_guard.core.units import GiB, MiB

pytestmark = pytest.mark.xdist_group("deepseek-v4")  # its module-scoped fixtures are built once, on one worker

INDEX_TOTAL_SIZE = 159_609_485_896  # model.safetensors.index.json of deepseek-ai/DeepSeek-V4-Flash
GH200 = 97871 * MiB


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


def test_in_flight_tokens_double_from_vllm_0_24(v4):
    cfg = VllmConfig(gpu_memory_utilization=0.95, max_model_len=30000, max_num_batched_tokens=8192,
                     max_num_seqs=1024, tensor_parallel_size=2, kv_cache_dtype="fp8")
    before = estimate_vllm(v4, GH200, cfg, version="0.23.0")
    after = estimate_vllm(v4, GH200, cfg, version="0.24.0")
    assert CompressedKV(v4, 1, 8192).request_pages(30000) == 118 + 2 * 131 + 2051 + 1041
    assert before.kv_needed == CompressedKV(v4, 1, 8192).request_bytes(30000) == 3_651_766_272
    assert after.kv_needed == CompressedKV(v4, 1, 16384).request_bytes(30000) == 7_152_076_800


def test_b14_end_to_end_rejects_with_the_logged_estimate(v4):
    # A regression pin, not evidence: the V4 workspace constant in profiles.py was fit to this log.
    # The log's LLM(...) defaults on a >= 70 GiB card: 16384 batched tokens, 1024 sequences.
    cfg = VllmConfig(gpu_memory_utilization=0.95, max_model_len=30000, max_num_batched_tokens=16384,
                     max_num_seqs=1024, tensor_parallel_size=2, kv_cache_dtype="fp8", block_size=256)
    est = estimate_vllm(v4, GH200, cfg, version="0.22.0")
    assert est.verdict == "kv-below-max-model-len"
    assert est.weights == 78_663_298_642
    assert est.kv_needed == 7_152_076_800
    assert est.estimated_max_model_len == 13528
    assert est.block_size == 256


def test_block_size_and_dtype_notes(v4):
    est = estimate_vllm(v4, GH200, VllmConfig(max_model_len=8192, tensor_parallel_size=2, block_size=64),
                        version="0.22.0")
    assert est.block_size == 256
    assert est.notes == ("DeepSeek-V4 runs with block size 256 whatever --block-size says",
                         "KV sized as fp8_ds_mla, the layout vLLM's DeepSeek-V4 kernels use; set --kv-cache-dtype fp8")
    fp8 = estimate_vllm(v4, GH200, VllmConfig(max_model_len=8192, tensor_parallel_size=2, kv_cache_dtype="fp8"),
                        version="0.22.0")
    assert fp8.notes == ()


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
