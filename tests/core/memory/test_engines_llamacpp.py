"""llama.cpp's compute buffer as sched_reserve allocates it, and its caches, against the logs L1..L8
(docs/memory-arithmetic.md, "llama.cpp")."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines.llamacpp import (
    LlamaCppConfig,
    attention_scratch,
    cell_bytes_per_layer,
    cell_widths,
    compute_buffer,
    context_cells,
    estimate_llamacpp,
    flash_attention_on,
    kv_streams,
    logits_scratch,
    offloaded_blocks,
    reserve_tokens,
    reserved_outputs,
    split_layers,
    swa_cells,
)
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.units import GiB, MiB

L40S = 46_068 * MiB
# TriLM-3.9B-like dims (llamafile PR #552 log L8; the checkpoint is F16 by its 7317.71 MiB of weights)
TRILM = ModelFacts(architecture="LlamaForCausalLM", num_hidden_layers=30, hidden_size=3072, num_attention_heads=24,
                   num_key_value_heads=24, intermediate_size=9216, vocab_size=50688, max_position_embeddings=2048,
                   dtype="float16")


def test_reserve_tokens_are_min_of_ctx_and_ubatch():
    assert reserve_tokens(8192, None, None) == 512
    assert reserve_tokens(8192, 256, 512) == 256  # n_ubatch is capped by n_batch
    assert reserve_tokens(100, None, 512) == 100


def test_attention_scratch_with_and_without_flash_attention():
    assert attention_scratch(4096, 512, 32, flash_attn=False) == 4096 * 512 * 32 * 4 + 4096 * 512 * 4
    # six hidden-size f32 rows per reserved token are live beside KQ and its mask
    assert attention_scratch(4096, 512, 32, False, hidden=4096) == 4096 * 512 * 32 * 4 + 4096 * 512 * 4 \
        + 6 * 4096 * 512 * 4
    assert attention_scratch(4096, 512, 32, flash_attn=True, hidden=4096) == 4096 * 512 * 2  # no KQ, the f16 mask


def test_one_buffer_is_the_larger_of_attention_and_logits_not_their_sum():
    facts = catalog_facts("Qwen/Qwen2.5-7B")  # 28 heads, vocab 152,064, hidden 3,584
    logits = logits_scratch(3584, 152_064, 512)
    small_ctx = compute_buffer(1024, 512, facts, False, output_device=True)
    assert small_ctx == logits == (3584 + 152_064) * 512 * 4  # attention 59 MiB < logits 304 MiB
    big_ctx = compute_buffer(131_072, 512, facts, False, output_device=True)
    assert big_ctx == attention_scratch(131_072, 512, 28, False, 3584) == 7_828_668_416  # 7.29 GiB of KQ dominate
    # before the GLU op (b5764) attention binds off the output device; from it, gate, up and their GLU output do
    assert compute_buffer(1024, 512, facts, False, output_device=False, version="b5763") == attention_scratch(
        1024, 512, 28, False, 3584) == 104_857_600
    assert compute_buffer(1024, 512, facts, False, output_device=False, version="b5764") == \
        (2 * 3584 + 3 * 18944) * 512 * 4 + 1024 * 512 * 4 == 133_169_152


def test_l8_trilm_f16_rtx4080_compute_and_kv_exact():
    # "CUDA0 KV buffer size = 180.00 MiB", "CUDA0 compute buffer size = 105.00 MiB", n_ctx 512, no flash attention
    est = estimate_llamacpp(TRILM, [16_376 * MiB], LlamaCppConfig(ctx_size=512), version="b3000")
    assert est.kv_cache == 180 * MiB
    assert est.compute_buffer_per_gpu == (105 * MiB,)  # (3072 + 50688) x 512 x 4: logits beat 24 MiB of KQ
    assert est.as_json()["compute_buffer_bytes_per_gpu"] == [105 * MiB]


def test_l1_gemma3_27b_iswa_caches_and_logits_bound_buffer():
    # llama.cpp#13703 (b5452, L40S, FA, 16 slots, ctx 49152, ubatch 128): non-SWA 3840 MiB (49152 cells, 10 layers),
    # SWA 7488 MiB (18432 cells, 52 layers), compute buffer "130." MiB (the excerpt cuts the rest)
    facts = replace(catalog_facts("google/gemma-3-27b-it"), quant_method="gguf:q4_k_m")
    cfg = LlamaCppConfig(ctx_size=49152, parallel=16, ubatch_size=128, flash_attn=True)
    est = estimate_llamacpp(facts, [L40S], cfg, version="b5452")
    assert swa_cells(49152, 1024, 16, 2048, True) == 18432
    assert est.kv_cache == (3840 + 7488) * MiB
    assert est.compute_buffer_per_gpu == ((5376 + 262_208) * 128 * 4,)  # 130.66 MiB
    older = estimate_llamacpp(facts, [L40S], cfg, version="b5000")
    assert older.kv_cache == 62 * 49152 * 16 * 128 * 2 * 2  # before the SWA cache: every layer full-length


def test_swa_full_sizes_the_window_cache_as_the_full_one():
    # --swa-full (ollama's runner sets it): llama_kv_cache_iswa logs "using full-size SWA cache" and gives the window
    # layers the full cache's cells. The same Gemma-3-27B run as above: 62 layers x 49,152 cells, where the window
    # cache held 18,432; and Gemma-2-2B under ollama on a Radeon RX 6600 (index file 55586255430: two split streams
    # of 8,192 cells, 13 + 13 layers, 832 + 832 MiB logged)
    facts = replace(catalog_facts("google/gemma-3-27b-it"), quant_method="gguf:q4_k_m")
    cfg = LlamaCppConfig(ctx_size=49152, parallel=16, ubatch_size=128, flash_attn=True, swa_full=True)
    assert estimate_llamacpp(facts, [L40S], cfg, version="b5452").kv_cache == 62 * 49152 * 16 * 128 * 2 * 2
    gemma2 = replace(catalog_facts("google/gemma-2-2b"), quant_method="gguf:q4_0")
    cfg2 = LlamaCppConfig(ctx_size=16384, parallel=2, kv_unified=False, batch_size=512, ubatch_size=256)
    assert estimate_llamacpp(gemma2, [8176 * MiB], replace(cfg2, swa_full=True), version="b8700").kv_cache == \
        (832 + 832) * MiB
    assert estimate_llamacpp(gemma2, [8176 * MiB], cfg2, version="b8700").kv_cache < (832 + 832) * MiB


def test_l3_qwen3_30b_four_devices_same_buffer_everywhere():
    # llama.cpp#13661 (4x K80, n_ctx 30016, no FA, row split: CUDA0_Split buffers, so no pipeline parallelism):
    # 1958.63 MiB compute on all four devices, 2814 MiB KV in all
    facts = replace(catalog_facts("Qwen/Qwen3-30B-A3B"), quant_method="gguf:q8_0")
    est = estimate_llamacpp(facts, [12 * GiB] * 4, LlamaCppConfig(ctx_size=30016, split_mode="row"),
                            version="b5261")
    assert est.compute_buffer_per_gpu == (attention_scratch(30016, 512, 32, False, 2048),) * 4
    assert est.compute_buffer_per_gpu[0] == int(1958.625 * MiB)  # the logged 1958.63 MiB, to the byte
    assert sum(d["kv"] for d in est.extra["per_device"]) == 2814 * MiB


def test_estimated_context_is_the_longest_that_fits():
    facts = replace(catalog_facts("Qwen/Qwen2.5-7B"), quant_method="gguf:q4_k_m")
    est = estimate_llamacpp(facts, [24 * GiB], LlamaCppConfig(ctx_size=8192), version="b6000")
    longest = est.estimated_max_model_len
    at = estimate_llamacpp(facts, [24 * GiB], LlamaCppConfig(ctx_size=longest), version="b6000")
    over = estimate_llamacpp(facts, [24 * GiB], LlamaCppConfig(ctx_size=longest + 32), version="b6000")
    assert at.verdict == "fits" and over.verdict == "does-not-fit"


def test_tensor_split_is_read_per_device_like_llama_cpp():
    # 28 layers + output (29 slots) on 24 + 12 GiB: all zeros (or none) is llama.cpp's default split by device
    # memory, 2:1, so slots 0..19 (j / 29 < 2/3) go to the first device; a missing proportion is 0, an extra one
    # unused
    facts = replace(catalog_facts("Qwen/Qwen2.5-7B"), quant_method="gguf:q4_k_m")

    def layers(split):
        est = estimate_llamacpp(facts, [24 * GiB, 12 * GiB], LlamaCppConfig(ctx_size=8192, tensor_split=split),
                                version="b6000")
        return [d["layers"] for d in est.extra["per_device"]]

    assert layers(None) == layers((0.0,)) == layers((0.0, 0.0)) == [20, 8]
    assert layers((1.0,)) == [28, 0]
    assert layers((1.0, 1.0, 5.0)) == [15, 13]


def test_split_points_are_llama_cpps_upper_bound_over_slots():
    # A 60-layer model fully offloaded at -ts 1,1 has 61 slots (the output is the last): j / 61 < 0.5 for
    # j <= 30, so 31 blocks go to CUDA0 and 29 blocks + output to CUDA1. Largest-remainder shares would put 30/30;
    # the same rule gives llama.cpp#14075's logged 21/20/20/19 on four cards (test_l9 below).
    assert split_layers(61, (1.0, 1.0)) == [0] * 31 + [1] * 30
    assert split_layers(60, (1.0, 1.0)) == [0] * 30 + [1] * 30  # -ngl 60: the output stays on the CPU
    assert split_layers(4, (0.0, 1.0)) == [1] * 4  # a zero share gets no slot
    assert split_layers(3, (1.0, 1.0, 1.0)) == [0, 1, 2]
    assert split_layers(0, (1.0, 1.0)) == []  # -ngl 0: nothing offloaded
    assert split_layers(5, (0.0, 0.0, 1.0)) == [2] * 5  # the last share takes all, no clamp needed
    sixty = ModelFacts(architecture="LlamaForCausalLM", num_hidden_layers=60, hidden_size=7168,
                       num_attention_heads=56, num_key_value_heads=8, intermediate_size=20480,
                       vocab_size=64000, max_position_embeddings=4096, dtype="bfloat16", quant_method="gguf:q4_k_m")
    est = estimate_llamacpp(sixty, [24 * GiB, 24 * GiB], LlamaCppConfig(ctx_size=4096, tensor_split=(1.0, 1.0)),
                            version="b2800")
    devices = est.extra["per_device"]
    assert [d["layers"] for d in devices] == [31, 29]
    per_layer = 8 * 128 * (2 + 2) * 4096  # f16 K and V of 8 KV heads x 128 over 4096 cells
    assert [d["kv"] for d in devices] == [31 * per_layer, 29 * per_layer]
    per_block = devices[0]["weights"] // 31  # the output layer's weights sit on CUDA1 beside its 29 blocks
    assert devices[1]["weights"] - 29 * per_block == est.extra["output_weights"] > 0


def test_only_llama_cpps_swa_architectures_get_a_window_cache():
    # Phi-3's config has a 2047-token window, llama.cpp builds it with one full cache (swa_type NONE)
    phi3 = catalog_facts("microsoft/Phi-3-mini-4k-instruct")
    est = estimate_llamacpp(phi3, [24 * GiB], LlamaCppConfig(ctx_size=4096), version="b6000")
    assert est.kv_cache == 32 * 4096 * 32 * 96 * 2 * 2  # 32 layers x 4096 cells x 32 KV heads x 96 x f16 K+V
    assert any("full-length cache" in n for n in est.notes)
    # gpt-oss: pattern 2, so 12 of 24 layers keep 128 x 1 slot + n_ubatch cells (from b5560), padded to 256
    oss = replace(catalog_facts("openai/gpt-oss-20b"), quant_method="gguf:mxfp4")
    est = estimate_llamacpp(oss, [24 * GiB], LlamaCppConfig(ctx_size=8192, flash_attn=True), version="b6500")
    cell = 8 * 64 * 2 * 2
    assert est.kv_cache == 12 * 8192 * cell + 12 * 768 * cell  # 128 + 512 = 640 -> 768
    before = estimate_llamacpp(oss, [24 * GiB], LlamaCppConfig(ctx_size=8192, flash_attn=True), version="b5500")
    assert before.kv_cache == 12 * 8192 * cell + 12 * 2304 * cell  # 128 + n_batch 2048 = 2176 -> 2304


def test_flash_attention_flag_by_build():
    assert flash_attention_on(None, "b6000") == (False, False)  # a switch, off unless given
    assert flash_attention_on("on", "b6000") == (True, False)
    assert flash_attention_on(None, "b6325") == (True, True)  # auto is the default from b6325
    assert flash_attention_on("auto", "b7000") == (True, True)
    assert flash_attention_on("off", "b7000") == (False, False)
    assert flash_attention_on("-1", "b7000") == (True, True)  # common/arg.cpp reads -1 as auto
    assert flash_attention_on("enabled", "b7000") == flash_attention_on("1", "b7000") == (True, False)
    assert flash_attention_on(None, "b7000", kv_on_host=True) == (False, True)  # auto off with --no-kv-offload
    assert flash_attention_on("on", "b7000", kv_on_host=True) == (True, False)  # an explicit on stays on
    with pytest.raises(ValueError, match="on, off or auto"):
        flash_attention_on("yes", "b7000")  # not among llama.cpp's words
    with pytest.raises(ValueError, match="on, off or auto"):
        flash_attention_on("sometimes", "b7000")
    with pytest.raises(ValueError, match="switch, on or off .auto exists from b6325"):
        flash_attention_on("auto", "b6000")


def test_l9_feed_forward_stage_and_input_device_exact():
    # llama.cpp#14075 (b5605, 4x Quadro RTX 5000, -fa, n_ctx 2048): compute 166 / 146 / 146 / 266.50 MiB,
    # KV 168 / 160 / 160 / 152 MiB (21/20/20/19 layers: 80 layers + output over four equal cards); -sm row
    # (CUDA0_Split buffers), so no pipeline parallelism
    facts = replace(catalog_facts("meta-llama/Llama-3.3-70B-Instruct"), quant_method="gguf:q5_k_m")
    est = estimate_llamacpp(facts, [16 * GiB] * 4, LlamaCppConfig(ctx_size=2048, flash_attn=True, split_mode="row"),
                            version="b5605")
    devices = est.extra["per_device"]
    assert [d["layers"] for d in devices] == [21, 20, 20, 19]
    assert [d["kv"] for d in devices] == [168 * MiB, 160 * MiB, 160 * MiB, 152 * MiB]
    ffn = (2 * 28672 + 2 * 8192) * 512 * 4 + 2048 * 512 * 2  # gate + up, residual + normed input, f16 mask
    assert ffn == 146 * MiB
    assert est.compute_buffer_per_gpu == (ffn + 8192 * 512 * 4 + 2048 * 512 * 4, ffn, ffn,
                                          (8192 + 128_256) * 512 * 4)
    assert est.compute_buffer_per_gpu[0] == 166 * MiB and est.compute_buffer_per_gpu[3] == int(266.5 * MiB)


def test_ffn_width_dense_plain_and_moe():
    from gpustack_guard.core.memory.engines.llamacpp import ffn_width

    assert ffn_width(catalog_facts("meta-llama/Llama-3.3-70B-Instruct"), "b5605") == 2 * 28672
    assert ffn_width(replace(TRILM, gated_mlp=False), "b5605") == 9216
    qwen3_moe = catalog_facts("Qwen/Qwen3-30B-A3B")  # 8 of 128 experts of 768
    assert ffn_width(qwen3_moe, "b5605") == 2 * 768 * 8


# Each build's feed-forward form (profiles.LLAMACPP_FFN_FORMS), on two models: the widths were measured on CPU with
# each build's own compute buffer, 512 tokens (tiny GGUFs, hidden 256, n_ff 2048 and 3072, k = 1, 2, 3)
@pytest.mark.parametrize(("model", "build", "width"), [
    # b1880's loop over the selected experts: one expert's gate and up, then from the second expert the allocator's
    # third slot and the running sum (hidden 4,096)
    ("mistralai/Mixtral-8x7B-v0.1", "b1880", 3 * 14336 + 4096),
    ("mistralai/Mixtral-8x7B-v0.1", "b2693", 3 * 14336 + 4096),
    ("mistralai/Mixtral-8x7B-v0.1", "b2694", 2 * 2 * 14336),  # PR #6505: all k experts in one ggml_mul_mat_id
    ("mistralai/Mixtral-8x7B-v0.1", "b5763", 2 * 2 * 14336),
    ("mistralai/Mixtral-8x7B-v0.1", "b5764", 3 * 2 * 14336),  # the GLU output beside gate and up
    ("Qwen/Qwen3-30B-A3B", "b2000", 3 * 768 + 2048),  # k = 8 under the loop: still one expert at a time
    ("Qwen/Qwen3-30B-A3B", "b2694", 2 * 8 * 768),
    ("Qwen/Qwen3-30B-A3B", "b10507", 3 * 8 * 768),
    ("meta-llama/Llama-3.3-70B-Instruct", "b1880", 2 * 28672),  # dense: the loop is MoE only
    ("meta-llama/Llama-3.3-70B-Instruct", "b5763", 2 * 28672),
    ("meta-llama/Llama-3.3-70B-Instruct", "b5764", 3 * 28672),
])
def test_ffn_width_by_build(model, build, width):
    from gpustack_guard.core.memory.engines.llamacpp import ffn_width

    assert ffn_width(catalog_facts(model), build) == width


def test_ffn_width_one_expert_and_plain_mlp_under_the_loop():
    from gpustack_guard.core.memory.engines.llamacpp import ffn_width

    mixtral = catalog_facts("mistralai/Mixtral-8x7B-v0.1")
    # k = 1: no second expert, so no third slot and no running sum (measured: 2 widths at k = 1)
    assert ffn_width(replace(mixtral, num_experts_per_tok=1), "b1880") == 2 * 14336
    # a plain (ungated) MLP frees nothing before down: one width and the running sum
    assert ffn_width(replace(mixtral, gated_mlp=False), "b1880") == 14336 + 4096
    assert ffn_width(replace(mixtral, gated_mlp=False), "b5764") == 2 * 14336  # no GLU without a gate


@pytest.mark.parametrize(("ctx", "streams", "flash", "version", "cells"), [
    (1100, 1, False, "b7045", (1280, 1280)),  # n_ctx padded to 256 whatever the attention (PR #17046)
    (1100, 1, False, "b7044", (1120, 1120)),  # before: 32 without flash attention
    (1100, 1, True, "b7044", (1280, 1280)),  # and 256 with it
    (1000, 3, False, "b7045", (1536, 512)),  # 1,024 cells over 3 slots: 341 each, padded to 512 per slot
    (2048, 2, True, "b7045", (2048, 1024)),  # a share already on the pad keeps the total
    (4096, 3, True, "b10507", (4608, 1536)),  # 1,365 -> 1,536 per slot
])
def test_context_cells_by_build(ctx, streams, flash, version, cells):
    assert context_cells(ctx, streams, flash, version) == cells


@pytest.mark.parametrize(("cfg", "version", "streams"), [
    (LlamaCppConfig(parallel=3, kv_unified=False), "b7045", 3),
    (LlamaCppConfig(parallel=3, kv_unified=True), "b7045", 1),
    (LlamaCppConfig(parallel=None, kv_unified=False), "b7045", 1),
    (LlamaCppConfig(parallel=3, kv_unified=False), "b7044", 1),  # older builds: counted as one cache
])
def test_kv_streams(cfg, version, streams):
    assert kv_streams(cfg, version) == streams


def test_a_cache_split_per_slot_reads_one_slots_cells_in_attention():
    # -c 16384 -np 2 without flash attention: KQ over 8,192 cells per stream, not 16,384
    facts = catalog_facts("Qwen/Qwen2.5-7B")
    split = estimate_llamacpp(facts, [L40S], LlamaCppConfig(ctx_size=16384, parallel=2, kv_unified=False),
                              version="b7045")
    unified = estimate_llamacpp(facts, [L40S], LlamaCppConfig(ctx_size=16384, parallel=2, kv_unified=True),
                                version="b7045")
    assert split.kv_cache == unified.kv_cache == 16384 * 28 * 4 * 128 * 2 * 2
    assert unified.compute_buffer_per_gpu == (attention_scratch(16384, 512, 28, False, 3584),) == (1_017_118_720,)
    assert split.compute_buffer_per_gpu == (attention_scratch(8192, 512, 28, False, 3584),) == (530_579_456,)


def _tiny_gguf_facts(tied: bool) -> ModelFacts:
    # per block 1,000 B of which 600 repacked; token_embd 300 B; output 200 B (repacked 160) + norm 10 B
    return ModelFacts(architecture="llama", num_hidden_layers=4, hidden_size=256, num_attention_heads=8,
                      num_key_value_heads=2, intermediate_size=512, vocab_size=259, max_position_embeddings=4096,
                      tie_word_embeddings=tied, layer_weight_bytes=(1000,) * 4, layer_repack_bytes=(600,) * 4,
                      embedding_bytes=300, output_bytes=310 if tied else 210, output_repack_bytes=0 if tied else 160,
                      weight_bytes=4310 if tied else 4510, quant_method="gguf:ftype2")


@pytest.mark.parametrize(("tied", "layers", "kv_on_host", "host"), [
    (False, 0, False, {"weights": 4510, "cpu_repack": 2560, "kv": 4 * 512 * 256}),  # -ngl 0: all on the host
    (True, 0, False, {"weights": 4310, "cpu_repack": 2400, "kv": 4 * 512 * 256}),  # tied: the output is token_embd
    (False, 3, False, {"weights": 1510, "cpu_repack": 760, "kv": 512 * 256}),  # the first block and the output
    (False, 5, False, {"weights": 300, "cpu_repack": 0, "kv": 0}),  # full offload: token_embd only
    (False, 5, True, {"weights": 300, "cpu_repack": 0, "kv": 4 * 512 * 256}),  # --no-kv-offload: every layer's KV
])
def test_host_memory_of_a_partial_offload(tied, layers, kv_on_host, host):
    cfg = LlamaCppConfig(ctx_size=512, gpu_layers=layers, no_kv_offload=kv_on_host, flash_attn=True)
    est = estimate_llamacpp(_tiny_gguf_facts(tied), [16 * GiB], cfg, version="b7045")
    assert est.extra["host"] == host  # KV per cell and layer: 2 heads x 32 x (2 + 2) B = 256 B


# --- pipeline parallelism: GGML_SCHED_MAX_COPIES copies of each device's graph inputs ---------------------------
# Command-R v01 dims (L2, llama.cpp PR #6122: "pipeline parallelism enabled (n_copies=4)", CUDA0 compute 672.01 MiB)
COMMAND_R = ModelFacts(architecture="CohereForCausalLM", num_hidden_layers=40, hidden_size=8192,
                       num_attention_heads=64, num_key_value_heads=64, intermediate_size=22528, vocab_size=256000,
                       max_position_embeddings=131072, dtype="float16")


def _two_gpus(facts: ModelFacts, version: str = "b2450", **cfg) -> dict:
    est = estimate_llamacpp(facts, [24 * GiB, 24 * GiB], LlamaCppConfig(ctx_size=4096, **cfg), version=version)
    return est.extra


def test_pipeline_parallel_adds_three_copies_of_each_devices_inputs():
    on = _two_gpus(COMMAND_R, tensor_split=(12, 29))
    off = _two_gpus(COMMAND_R, tensor_split=(12, 29), split_mode="row")
    # per device: hidden state 8192 x 512 x 4 = 16 MiB, f32 mask 4096 x 512 x 4 = 8 MiB, positions 512 x 4 B
    inputs = 16 * MiB + 8 * MiB + 2048
    assert (on["pipeline_copies"], off["pipeline_copies"]) == (4, 1)
    for dev_on, dev_off in zip(on["per_device"], off["per_device"]):
        assert dev_on["compute"] - dev_off["compute"] == 3 * inputs
    assert round(on["per_device"][0]["compute"] / MiB, 2) == 688.01  # log 672.01: +2.4 %


@pytest.mark.parametrize("version,input_mask_bytes,logits_bound", [
    ("b6000", 4, True),  # the input device received the f32 mask and cast it (before llama.cpp PR #23764)
    # the mask input is f16 under flash attention; llama-server reserves one row of logits per slot
    # (profiles.LLAMACPP_SERVER_OUTPUTS_SINCE), so the feed-forward stage bounds the output device too
    ("b10507", 2, False),
])
def test_pipeline_parallel_on_a_second_model_with_flash_attention_and_a_window(version, input_mask_bytes,
                                                                               logits_bound):
    # gemma-3-27b (sliding-window layers on both devices): two masks, the full one over 4,096 cells and the
    # window's over min(4096, pad(1024 x 1 + 512)) = 1,536 cells; hidden 5376. CUDA1 receives the f16 mask CUDA0
    # cast, in every build. Where it is bound by the logits, which count no input copy of their own, all four
    # copies add; where a stage that holds one copy already binds it, three
    facts = catalog_facts("google/gemma-3-27b-it")
    on = _two_gpus(facts, version=version, flash_attn=True)
    off = _two_gpus(facts, version=version, flash_attn=True, split_mode="none")
    def inputs(mask_bytes):
        return 5376 * 512 * 4 + (4096 + 1536) * 512 * mask_bytes + 512 * 4

    logits = (5376 + 262_208) * 512 * 4
    assert (off["per_device"][1]["compute"] == logits) is logits_bound  # the output device's high-water mark
    assert [a["compute"] - b["compute"] for a, b in zip(on["per_device"], off["per_device"])] == \
        [3 * inputs(input_mask_bytes), (4 if logits_bound else 3) * inputs(2)]


def test_held_copies_on_a_logits_bound_device_before_the_f16_mask_input():
    # the rule on Qwen2.5-32B's shape (llama.cpp#11200's deployment: b4462, -fa, -ub 256, -c 32768, -ts 10,6,
    # q8_0 cache): CUDA1 = 4 x (5120 x 256 x 4 B hidden + 32768 x 256 x 2 B f16 mask + 256 x 4 B positions)
    # + (5120 + 152064) x 256 x 4 B of logits; CUDA0 casts the f32 mask it receives
    facts = replace(catalog_facts("Qwen/Qwen2.5-32B"), quant_method="gguf:q8_0")
    cfg = LlamaCppConfig(ctx_size=32768, batch_size=512, ubatch_size=256, flash_attn=True, tensor_split=(10, 6),
                         cache_type_k="q8_0", cache_type_v="q8_0")
    est = estimate_llamacpp(facts, [24 * GiB] * 2, cfg, version="b4462")
    devices = est.extra["per_device"]
    assert [d["layers"] for d in devices] == [41, 23]
    assert [d["kv"] for d in devices] == [2788 * MiB, 1564 * MiB]  # as logged
    downstream = 4 * (5120 * 256 * 4 + 32768 * 256 * 2 + 256 * 4)
    assert devices[1]["compute"] == downstream + (5120 + 152_064) * 256 * 4
    assert round(devices[1]["compute"] / MiB, 2) == 237.5  # logged 237.51


@pytest.mark.parametrize("gpus,cfg,version,copies", [
    (2, {}, "b2450", 4),
    (2, {}, "b2430", 1),  # before llama.cpp PR #6017
    (1, {}, "b6000", 1),  # one device: nothing to pipeline
    (2, {"gpu_layers": 40}, "b6000", 1),  # the output layer stays on the CPU: not full offload
    (2, {"split_mode": "row"}, "b6000", 1),
    (2, {"no_kv_offload": True}, "b6000", 1),
    (2, {"tensor_overrides": True}, "b6000", 1),
    (2, {"tensor_split": (1.0, 0.0)}, "b6000", 1),  # every layer on CUDA0
])
def test_when_llama_cpp_enables_pipeline_parallelism(gpus, cfg, version, copies):
    est = estimate_llamacpp(COMMAND_R, [24 * GiB] * gpus, LlamaCppConfig(ctx_size=4096, **cfg), version=version)
    assert est.extra["pipeline_copies"] == copies
    assert any("pipeline parallelism" in note for note in est.notes) is (copies > 1)


@pytest.mark.parametrize("model,build,widths", [
    # before the latent cache: every head's nope + rope K and value V (128 heads for V3/R1, 16 for V2-Lite)
    ("deepseek-ai/DeepSeek-R1", "b5100", (128 * 192, 128 * 128)),
    ("deepseek-ai/DeepSeek-V2-Lite", "b5100", (16 * 192, 16 * 128)),
    # the converter's MQA over the latent: K = kv_lora_rank + rope, V = kv_lora_rank ...
    ("deepseek-ai/DeepSeek-R1", "b5452", (512 + 64, 512)),
    ("deepseek-ai/DeepSeek-V2-Lite", "b7045", (512 + 64, 512)),
    # ... and no V cache from PR #19067 on
    ("deepseek-ai/DeepSeek-R1", "b8651", (512 + 64, 0)),
    # grouped-query models are not touched: 4 KV heads x 128 for K and for V
    ("Qwen/Qwen2.5-7B", "b5100", (512, 512)),
    ("Qwen/Qwen2.5-7B", "b8651", (512, 512)),
])
def test_cell_widths_mla_by_build(model, build, widths):
    assert cell_widths(catalog_facts(model), build) == widths


def test_legacy_deepseek_cache_on_two_logs_exact():
    """Both logs show `can_shift = 0` (before PR #12801): uv-genai/llm-setonix, R1 Q4_K_M over 8 MI250X GCDs,
    8 layers of f16 at 8,192 cells on ROCm1 = 5,120 MiB; llama.cpp#9390, q4_0 K and f16 V at 16,384 cells,
    8 layers on CUDA0 = 5,824 MiB and 7 on CUDA3 = 5,096 MiB."""
    r1 = catalog_facts("deepseek-ai/DeepSeek-R1")
    assert cell_bytes_per_layer(r1, "b5100", "f16", "f16") * 8 * 8192 == 5120 * MiB
    assert cell_bytes_per_layer(r1, "b4600", "q4_0", "f16") * 8 * 16384 == 5824 * MiB
    assert cell_bytes_per_layer(r1, "b4600", "q4_0", "f16") * 7 * 16384 == 5096 * MiB


def test_reserved_outputs_one_row_per_slot_from_the_server_limit():
    """llama-server caps a batch's outputs at its slots (profiles.LLAMACPP_SERVER_OUTPUTS_SINCE); never more than
    the reserved tokens or n_batch; before it every reserved token has a row."""
    assert reserved_outputs(512, 4, 2048, "b10434") == 4
    assert reserved_outputs(512, 4, 2048, "b9517") == 512
    assert reserved_outputs(2, 4, 2048, "b10434") == 2
    assert reserved_outputs(512, 8, 4, "b10434") == 4


@pytest.mark.parametrize("model, ctx, old, new", [
    # the 2026-10 note's llama-server (tests/fixtures/logs/llama.cpp/qwen3-4b-q4km-8192-sched-reserve.log) logs
    # 85.01 MiB: 512 rows of logits would be 301.75 MiB, the feed-forward stage is what is left
    ("Qwen/Qwen3-4B", 8192, 316_407_808, 100_663_296),
    # an older build (ollama 0.20.2's runner) logs 304.00 MiB: exactly 512 rows of (3,584 + 152,064) f32
    ("Qwen/Qwen2.5-7B", 4096, 318_767_104, 150_994_944),
])
def test_llama_servers_compute_buffer_drops_the_logits_of_all_reserved_tokens(model, ctx, old, new):
    facts = catalog_facts(model)
    cfg = LlamaCppConfig(ctx_size=ctx, flash_attn=True)  # -np not given: the automatic four slots
    before = estimate_llamacpp(facts, [24 * GiB], cfg, version="b9517")
    after = estimate_llamacpp(facts, [24 * GiB], cfg, version="b9518")
    assert before.extra["per_device"][0]["compute"] == old
    assert before.extra["output_buffer"] == logits_scratch(facts.hidden_size, facts.vocab_size, 512)
    assert after.extra["per_device"][0]["compute"] == new
    assert after.extra["output_buffer"] == logits_scratch(facts.hidden_size, facts.vocab_size, 4)


@pytest.mark.parametrize(("offload", "n_layer", "version", "placed"), [
    # llama.cpp#24183 (version 9527): "offloading output layer to GPU", "offloading 64 repeating layers",
    # "offloaded 65/66": -ngl 65 of 65 blocks takes the output layer first and leaves block 0 on the CPU
    (65, 65, "b9527", (64, True)),
    (31, 32, "b9849", (30, True)),  # the b9849 Qwen3.5-9B fixture: "offloaded 31/33", 30 repeating
    (1, 32, P.LLAMACPP_OUTPUT_FIRST_SINCE, (0, True)),
    (0, 32, P.LLAMACPP_OUTPUT_FIRST_SINCE, (0, False)),
    (33, 32, P.LLAMACPP_OUTPUT_FIRST_SINCE, (32, True)),  # full offload is the same either way
    # before it the last N blocks, the output layer only past n_layer (the ollama QwQ fixture: "offloading 29
    # repeating layers", "offloaded 29/65"; llama.cpp PR #6122's Mixtral at 10/33)
    (29, 64, "b8163", (29, False)),
    (10, 32, "b2431", (10, False)),
    (33, 32, "b2431", (32, True)),
])
def test_ngl_places_the_output_layer_first_from_its_build(offload, n_layer, version, placed):
    assert offloaded_blocks(offload, n_layer, version) == placed
