"""llama.cpp's buffer-type overrides (-ot, --cpu-moe, --n-cpu-moe) place tensors in the estimate.

Two GGUF headers written here with the tensor names and shapes of the real models (the type mix is stated per
model, not claimed to be a given file's): Qwen3-30B-A3B with q4_K tensors and q6_K ffn_down_exps / attn_v, and
gpt-oss-20b with MXFP4 experts (with their f32 biases) and f16 attention.
"""

from __future__ import annotations

import pytest
from support.gguf_header import STRING, UINT32, gguf_header, gguf_string, gguf_u32

from gpustack_guard.core.engine_flags import FlagValueError
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engine import estimate
from gpustack_guard.core.memory.engines.llamacpp import LlamaCppConfig, estimate_llamacpp, expert_overrides, ffn_scratch
from gpustack_guard.core.memory.estimate import DOES_NOT_FIT, FITS
from gpustack_guard.core.memory.gguf import facts_from_gguf, parse_header
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import GiB

F32, F16, Q4_K, Q6_K, MXFP4 = 0, 1, 12, 14, 39


def _header(arch: str, layers: int, ints: dict, tensors: list[tuple[str, tuple[int, ...], int]]):
    kv = [("general.architecture", STRING, gguf_string(arch))]
    kv += [(f"{arch}.{key}", UINT32, gguf_u32(value)) for key, value in {"block_count": layers, **ints}.items()]
    body = gguf_header(kv, tensors)
    return facts_from_gguf(parse_header(lambda offset, size: body[offset:offset + size]), f"{arch}.gguf")


def qwen3_30b_a3b():
    hidden, experts, width = 2048, 128, 768
    per_layer = [("attn_norm.weight", (hidden,), F32), ("attn_q.weight", (hidden, 4096), Q4_K),
                 ("attn_k.weight", (hidden, 512), Q4_K), ("attn_v.weight", (hidden, 512), Q6_K),
                 ("attn_output.weight", (4096, hidden), Q4_K), ("attn_q_norm.weight", (128,), F32),
                 ("attn_k_norm.weight", (128,), F32), ("ffn_norm.weight", (hidden,), F32),
                 ("ffn_gate_inp.weight", (hidden, experts), F32),
                 ("ffn_gate_exps.weight", (hidden, width, experts), Q4_K),
                 ("ffn_up_exps.weight", (hidden, width, experts), Q4_K),
                 ("ffn_down_exps.weight", (width, hidden, experts), Q6_K)]
    tensors = [(f"blk.{i}.{n}", shape, kind) for i in range(48) for n, shape, kind in per_layer]
    tensors += [("token_embd.weight", (hidden, 151936), Q4_K), ("output_norm.weight", (hidden,), F32),
                ("output.weight", (hidden, 151936), Q6_K)]
    return _header("qwen3moe", 48, {"embedding_length": hidden, "attention.head_count": 32,
                                    "attention.head_count_kv": 4, "attention.key_length": 128,
                                    "context_length": 40960, "vocab_size": 151936, "feed_forward_length": 6144,
                                    "expert_count": experts, "expert_used_count": 8,
                                    "expert_feed_forward_length": width}, tensors)


def gpt_oss_20b():
    hidden, experts = 2880, 32
    per_layer = [("attn_norm.weight", (hidden,), F32), ("attn_q.weight", (hidden, 4096), F16),
                 ("attn_k.weight", (hidden, 512), F16), ("attn_v.weight", (hidden, 512), F16),
                 ("attn_output.weight", (4096, hidden), F16), ("attn_sinks.weight", (64,), F32),
                 ("post_attention_norm.weight", (hidden,), F32), ("ffn_gate_inp.weight", (hidden, experts), F32),
                 ("ffn_gate_inp.bias", (experts,), F32)]
    for kind in ("gate", "up", "down"):
        per_layer += [(f"ffn_{kind}_exps.weight", (hidden, hidden, experts), MXFP4),
                      (f"ffn_{kind}_exps.bias", (hidden, experts), F32)]
    tensors = [(f"blk.{i}.{n}", shape, kind) for i in range(24) for n, shape, kind in per_layer]
    tensors += [("token_embd.weight", (hidden, 201088), F16), ("output_norm.weight", (hidden,), F32),
                ("output.weight", (hidden, 201088), F16)]
    return _header("gpt-oss", 24, {"embedding_length": hidden, "attention.head_count": 64,
                                   "attention.head_count_kv": 8, "attention.key_length": 64,
                                   "context_length": 131072, "vocab_size": 201088, "feed_forward_length": hidden,
                                   "expert_count": experts, "expert_used_count": 4,
                                   "expert_feed_forward_length": hidden}, tensors)


QWEN_GATE = 2048 * 768 * 128 // 256 * 144  # q4_K: 144 bytes per 256 values
QWEN_DOWN = 768 * 2048 * 128 // 256 * 210  # q6_K: 210 bytes per 256 values
QWEN_EXPERTS = 2 * QWEN_GATE + QWEN_DOWN
OSS_EXPERT = 2880 * 2880 * 32 // 32 * 17  # mxfp4: 17 bytes per 32 values
OSS_BIAS = 2880 * 32 * 4
B = "b8467"  # a build with --fit and the fused gate+up pattern


def _cfg(**kw) -> LlamaCppConfig:
    return LlamaCppConfig(ctx_size=8192, parallel=1, flash_attn=True, **kw)


def test_byte_figures_of_the_two_headers():
    assert (QWEN_GATE, QWEN_DOWN, QWEN_EXPERTS) == (113_246_208, 165_150_720, 391_643_136)
    assert (OSS_EXPERT, OSS_BIAS) == (141_004_800, 368_640)
    qwen = qwen3_30b_a3b()
    assert qwen.layer_weight_bytes[0] == 403_596_288 and len(qwen.block_tensors) == 48 * 12


def test_cpu_moe_moves_every_routed_expert_of_qwen3_30b_off_the_gpu():
    facts = qwen3_30b_a3b()
    plain = estimate_llamacpp(facts, [16 * GiB], _cfg(), version=B)
    moe = estimate_llamacpp(facts, [16 * GiB], _cfg(tensor_overrides=True,
                                                     buft_overrides=expert_overrides(True, None, B)), version=B)
    before, after = plain.extra["per_device"][0], moe.extra["per_device"][0]
    assert before["weights"] == 19_627_882_496 and plain.verdict == DOES_NOT_FIT
    assert before["weights"] - after["weights"] == 48 * QWEN_EXPERTS == 18_798_870_528
    assert after["weights"] == 829_011_968 and moe.verdict == FITS
    assert moe.extra["host"]["weights"] - plain.extra["host"]["weights"] == 48 * QWEN_EXPERTS
    assert moe.extra["host"]["cpu_repack"] - plain.extra["host"]["cpu_repack"] == 48 * 2 * QWEN_GATE  # q4_K only
    placed = moe.extra["tensor_placement"]
    assert (placed["matched"], placed["moved"], placed["host_weight_copy"]) == (144, 144, [QWEN_DOWN])
    # the GPU runs the prompt's expert products on a copy of one host weight at a time: the largest, q6_K down. With
    # the output layer on the GPU its 512 rows of logits are larger still; with -ngl 48 (output on the host) not
    assert after["compute"] == before["compute"] == (2048 + 151936) * 512 * 4 == 315_359_232
    ffn = ffn_scratch(8192, 512, facts, True, True, B)
    layers_only = [estimate_llamacpp(facts, [16 * GiB], _cfg(gpu_layers=48, tensor_overrides=bool(o), buft_overrides=o),
                                     version=B).extra["per_device"][0]["compute"]
                   for o in ((), expert_overrides(True, None, B))]
    assert layers_only == [ffn, ffn + QWEN_DOWN] == [75_497_472, 240_648_192]
    assert any("144 of 144 matched block tensors" in note for note in moe.notes)


def test_n_cpu_moe_counts_from_layer_0_not_from_the_first_offloaded_layer():
    facts = qwen3_30b_a3b()
    ten = expert_overrides(False, 10, B)
    assert ten[0] == (r"blk\.0\.ffn_(up|down|gate|gate_up)_(ch|)exps", "CPU") and len(ten) == 10
    # -ngl 40 offloads layers 8..47: the overrides of layers 0..7 name tensors already in host memory
    partial = estimate_llamacpp(facts, [24 * GiB], _cfg(gpu_layers=40), version=B)
    moved = estimate_llamacpp(facts, [24 * GiB], _cfg(gpu_layers=40, tensor_overrides=True, buft_overrides=ten),
                              version=B)
    assert partial.extra["per_device"][0]["weights"] - moved.extra["per_device"][0]["weights"] == 2 * QWEN_EXPERTS
    assert moved.extra["host"]["weights"] - partial.extra["host"]["weights"] == 2 * QWEN_EXPERTS == 783_286_272
    assert (moved.extra["tensor_placement"]["matched"], moved.extra["tensor_placement"]["moved"]) == (30, 6)


def test_an_override_pattern_that_matches_nothing_moves_nothing():
    facts = gpt_oss_20b()
    plain = estimate_llamacpp(facts, [16 * GiB], _cfg(), version=B)
    none = estimate_llamacpp(facts, [16 * GiB], _cfg(tensor_overrides=True, buft_overrides=((r"\.ffn_nothing", "CPU"),)),
                             version=B)
    assert none.extra["per_device"][0]["weights"] == plain.extra["per_device"][0]["weights"] == 12_620_595_456
    assert none.extra["tensor_placement"]["matched"] == 0
    assert any("no pattern matches" in note for note in none.notes)


def test_gpt_oss_20b_cpu_moe_takes_the_expert_biases_too_and_repacks_mxfp4():
    facts = gpt_oss_20b()
    plain = estimate_llamacpp(facts, [16 * GiB], _cfg(), version=B)
    moe = estimate_llamacpp(facts, [16 * GiB], _cfg(tensor_overrides=True,
                                                     buft_overrides=expert_overrides(True, None, B)), version=B)
    per_layer = 3 * (OSS_EXPERT + OSS_BIAS)
    assert per_layer == 424_120_320
    moved = plain.extra["per_device"][0]["weights"] - moe.extra["per_device"][0]["weights"]
    assert moved == 24 * per_layer == 10_178_887_680
    assert moe.extra["host"]["cpu_repack"] - plain.extra["host"]["cpu_repack"] == 24 * 3 * OSS_EXPERT
    assert moe.extra["tensor_placement"]["host_weight_copy"] == [OSS_EXPERT]


def test_the_first_matching_pattern_wins_and_a_device_buffer_keeps_the_tensor():
    facts = gpt_oss_20b()
    keep = ((r"blk\.0\.ffn_down_exps", "CUDA0"),) + expert_overrides(True, None, B)
    est = estimate_llamacpp(facts, [16 * GiB], _cfg(tensor_overrides=True, buft_overrides=keep), version=B)
    moe = estimate_llamacpp(facts, [16 * GiB], _cfg(tensor_overrides=True,
                                                     buft_overrides=expert_overrides(True, None, B)), version=B)
    assert est.extra["per_device"][0]["weights"] - moe.extra["per_device"][0]["weights"] == OSS_EXPERT + OSS_BIAS
    with pytest.raises(ValueError, match="CUDA1"):
        estimate_llamacpp(facts, [16 * GiB], _cfg(tensor_overrides=True, buft_overrides=(("exps", "CUDA1"),)),
                          version=B)


def test_fused_gate_up_experts_move_from_b8301():
    fused = _header("qwen3moe", 1, {"embedding_length": 2048, "attention.head_count": 32,
                                    "attention.head_count_kv": 4, "attention.key_length": 128,
                                    "context_length": 4096, "vocab_size": 1000, "feed_forward_length": 6144,
                                    "expert_count": 128, "expert_used_count": 8, "expert_feed_forward_length": 768},
                    [("blk.0.ffn_gate_up_exps.weight", (2048, 1536, 128), Q4_K),
                     ("blk.0.ffn_down_exps.weight", (768, 2048, 128), Q6_K), ("token_embd.weight", (2048, 1000), F16)])
    for build, moved in (("b8300", QWEN_DOWN), ("b8301", QWEN_DOWN + 2 * QWEN_GATE)):
        est = estimate_llamacpp(fused, [16 * GiB], _cfg(tensor_overrides=True,
                                                        buft_overrides=expert_overrides(True, None, build)),
                                version=build)
        assert est.extra["host"]["weights"] - 2048 * 1000 * 2 == moved, build
    assert P.llamacpp_expert_pattern("b6089").rule == "ffn-exps-up-down-gate"


def test_the_flags_build_the_override_list_in_command_line_order():
    facts = gpt_oss_20b()
    gpus = [(16 * GiB, "NVIDIA RTX 4080")]
    est = estimate("llamacpp", facts, gpus, {"ctx-size": "8192", "ot": r"blk\.0\.ffn_down_exps=CUDA0",
                                             "n-cpu-moe": "2"}, B, Policy())
    assert est.extra["tensor_placement"]["overrides"][0] == [r"blk\.0\.ffn_down_exps", "CUDA0"]
    assert est.extra["tensor_placement"]["moved"] == 2 * 6 - 2  # layer 0's down weight and bias stay
    with pytest.raises(FlagValueError, match="not <tensor name pattern>=<buffer type>"):
        estimate("llamacpp", facts, gpus, {"ot": "exps"}, B, Policy())
    with pytest.raises(FlagValueError, match="negative"):
        estimate("llamacpp", facts, gpus, {"n-cpu-moe": "-1"}, B, Policy())


def test_without_a_tensor_list_the_routed_experts_are_split_from_the_computed_layout():
    from gpustack_guard.adapters.model_sources.catalog import catalog_facts

    facts = catalog_facts("Qwen/Qwen3-30B-A3B")
    assert facts is not None and facts.block_tensors is None
    cfg = LlamaCppConfig(ctx_size=4096, parallel=1, flash_attn=True)
    plain = estimate_llamacpp(facts, [80 * GiB], cfg, version=B)
    moe = estimate_llamacpp(facts, [80 * GiB], LlamaCppConfig(ctx_size=4096, parallel=1, flash_attn=True,
                                                              tensor_overrides=True,
                                                              buft_overrides=expert_overrides(True, None, B)),
                            version=B)
    routed = 48 * 128 * 3 * 2048 * 768 * 2  # bf16
    assert plain.extra["per_device"][0]["weights"] - moe.extra["per_device"][0]["weights"] == routed
    assert routed == 57_982_058_496
    assert moe.extra["tensor_placement"]["measured"] is False


def test_a_host_buffer_from_a_log_line_counts_as_host_memory():
    """gsg verify passes the loader's "overridden to CUDA_Host" lines on as -ot pairs: a CPU override's pick."""
    facts = gpt_oss_20b()
    gpus = [(16 * GiB, "NVIDIA RTX 4080")]
    plain = estimate("llamacpp", facts, gpus, {"ctx-size": "8192"}, B, Policy())
    est = estimate("llamacpp", facts, gpus, {"ctx-size": "8192", "override-tensor":
                                             "blk.0.ffn_gate_exps.weight=CUDA_Host,blk.1.ffn_up_exps.weight=CPU"},
                   B, Policy())
    assert plain.extra["per_device"][0]["weights"] - est.extra["per_device"][0]["weights"] == 2 * OSS_EXPERT
    assert est.extra["tensor_placement"]["moved"] == 2


def test_a_vector_keeps_the_per_layer_sums_not_the_tensor_list():
    from gpustack_guard.core.verify.vector import facts_json

    stored = facts_json(gpt_oss_20b())
    assert "block_tensors" not in stored and stored["layer_weight_bytes"][0] == 477_596_544
