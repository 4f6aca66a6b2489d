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
OLD = "b8100"  # before -ngl took the output layer first (profiles.LLAMACPP_OUTPUT_FIRST_SINCE): partial -ngl leaves it


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
    # the output layer on the GPU its 512 rows of logits are larger still
    assert after["compute"] == before["compute"] == (2048 + 151936) * 512 * 4 == 315_359_232

    def layers_only(version: str) -> list[int]:
        return [estimate_llamacpp(facts, [16 * GiB], _cfg(gpu_layers=48, tensor_overrides=bool(o), buft_overrides=o),
                                  version=version).extra["per_device"][0]["compute"]
                for o in ((), expert_overrides(True, None, version))]

    # before the output-first placement -ngl 48 left the output on the host, and its product over 512 rows runs on
    # the GPU on a copy of the q6_K output (profiles.LLAMACPP_OUTPUT_OFFLOAD), above the expert copy either way
    assert layers_only(OLD) == [facts.output_bytes + 315_359_232] * 2 == [570_619_904] * 2
    # from it -ngl 48 takes the output layer (block 0 stays on the host): its own logits bind, no copy
    assert layers_only(B) == [315_359_232] * 2
    # llama-server from b9518 reserves one output row per slot, under offload_op's 32: the expert copy binds
    ffn = ffn_scratch(8192, 512, facts, True, True, "b9518")
    assert layers_only("b9518") == [ffn, ffn + QWEN_DOWN] == [75_497_472, 240_648_192]
    assert any("144 of 144 matched tensors" in note for note in moe.notes)


def test_n_cpu_moe_counts_from_layer_0_not_from_the_first_offloaded_layer():
    facts = qwen3_30b_a3b()
    ten = expert_overrides(False, 10, B)
    assert ten[0] == (r"blk\.0\.ffn_(up|down|gate|gate_up)_(ch|)exps", "CPU") and len(ten) == 10
    # -ngl 41 offloads the output layer and layers 8..47: the overrides of layers 0..7 name tensors already in host
    # memory
    partial = estimate_llamacpp(facts, [24 * GiB], _cfg(gpu_layers=41), version=B)
    moved = estimate_llamacpp(facts, [24 * GiB], _cfg(gpu_layers=41, tensor_overrides=True, buft_overrides=ten),
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


# --- every -ot given, in order; the input and output layers' weights -------------------------------------------


def _flags(*params: str) -> dict:
    from gpustack_guard.core import args as A

    return A.as_dict(A.parse(["-c", "8192", *params], "llamacpp"), "llamacpp")


def _run(facts, *params: str, gib: int = 16, version: str = B):
    est = estimate("llamacpp", facts, [(gib * GiB, "NVIDIA RTX 4080")], _flags(*params), version, Policy())
    return est.extra["per_device"][0]["weights"], est.extra["host"]["weights"], est.extra["tensor_placement"]["moved"]


OSS_DOWN_0 = OSS_EXPERT + OSS_BIAS  # blk.0.ffn_down_exps.weight and .bias, both matched by blk\.0\.ffn_down_exps


def test_two_ot_flags_both_count_and_the_earlier_pattern_wins():
    """llama.cpp appends every -ot's pairs to one list (common/arg.cpp parse_tensor_buffer_overrides) and the loader
    takes the first pattern that matches; gsg kept only the last -ot (2,441,707,776 bytes on the GPU, 144 moved)."""
    facts = gpt_oss_20b()
    assert _flags("-ot", r"blk\.0\.ffn_down_exps=CUDA0", "-ot", "exps=CPU")["override-tensor"] == \
        r"blk\.0\.ffn_down_exps=CUDA0,exps=CPU"
    keep_first = _run(facts, "-ot", r"blk\.0\.ffn_down_exps=CUDA0", "--override-tensor", "exps=CPU")
    assert keep_first == (2_441_707_776 + OSS_DOWN_0, 1_158_266_880 + 24 * 3 * OSS_DOWN_0 - OSS_DOWN_0, 142)
    assert keep_first[0] == 2_583_081_216
    # the other order: exps=CPU matches layer 0's down weight first, so the CUDA0 pair never decides
    assert _run(facts, "-ot", "exps=CPU", "-ot", r"blk\.0\.ffn_down_exps=CUDA0") == \
        _run(facts, "-ot", "exps=CPU") == (2_441_707_776, 11_337_154_560, 144)


def test_a_comma_list_in_one_ot_is_the_same_list_as_two_flags():
    facts = gpt_oss_20b()
    assert _run(facts, "-ot", r"blk\.0\.ffn_down_exps=CUDA0,exps=CPU") == \
        _run(facts, "-ot", r"blk\.0\.ffn_down_exps=CUDA0", "-ot", "exps=CPU") == (2_583_081_216, 11_195_781_120, 142)


def test_the_output_layer_overridden_to_the_cpu_leaves_the_gpu():
    """dev_output follows -ngl (on the GPU on full offload); an override sends it to host memory. A pattern matches
    anywhere in a name: output\\.weight also takes every block's attn_output.weight, ^output\\. only the head."""
    facts = qwen3_30b_a3b()
    assert facts.output_bytes == 255_260_672  # q6_K head (and the f32 output_norm)
    plain = estimate("llamacpp", facts, [(24 * GiB, "L4")], _flags(), B, Policy()).extra
    assert (plain["per_device"][0]["weights"], plain["host"]["weights"]) == (19_627_882_496, 175_030_272)
    assert _run(facts, "-ot", r"^output\.=CPU", gib=24) == (19_627_882_496 - 255_260_672,
                                                             175_030_272 + 255_260_672, 1)
    attn_output = 4096 * 2048 // 256 * 144  # q4_K, one per block
    assert _run(facts, "-ot", r"output\.weight=CPU", gib=24) == (19_372_621_824 - 48 * attn_output,
                                                                  430_290_944 + 48 * attn_output, 49)
    # -ngl 40 before the output-first placement: the output stays on the host, the override brings it onto the GPU
    partial = estimate("llamacpp", facts, [(24 * GiB, "L4")], _flags("-ngl", "40"), OLD, Policy()).extra
    moved = _run(facts, "-ngl", "40", "-ot", r"^output\.=CUDA0", gib=24, version=OLD)
    assert (moved[0] - partial["per_device"][0]["weights"], partial["host"]["weights"] - moved[1]) == \
        (255_260_672, 255_260_672)
    # from it -ngl 40 has put the output on the GPU already: the override moves nothing
    partial = estimate("llamacpp", facts, [(24 * GiB, "L4")], _flags("-ngl", "40"), B, Policy()).extra
    assert _run(facts, "-ngl", "40", "-ot", r"^output\.=CUDA0", gib=24) == \
        (partial["per_device"][0]["weights"], partial["host"]["weights"], 0)


def test_token_embd_overridden_to_a_gpu_leaves_host_memory():
    """dev_input is the CPU whatever -ngl says; -ot token_embd=CUDA0 moves the embedding table onto the GPU."""
    oss, qwen = gpt_oss_20b(), qwen3_30b_a3b()
    assert _run(oss, "-ot", "token_embd=CUDA0") == (12_620_595_456 + 1_158_266_880, 0, 1)
    assert _run(qwen, "-ot", "token_embd=CUDA0", gib=24) == (19_627_882_496 + 175_030_272, 0, 1)
    # already on the CPU: matched, nothing moves
    assert _run(oss, "-ot", "token_embd=CPU") == (12_620_595_456, 1_158_266_880, 0)


def test_a_tied_output_is_token_embd_again_and_moves_with_it():
    """Without output.weight the output layer takes token_embd (TENSOR_DUPLICATED): on full offload a copy on the
    output device, so -ot token_embd=CPU takes that copy off the GPU and adds nothing to host memory (the same
    mapped tensor); -ot token_embd=CUDA0 on partial offload puts two tensors on the GPU (input and output)."""
    tied = _header("qwen3", 2, {"embedding_length": 1024, "attention.head_count": 16, "attention.head_count_kv": 8,
                                "attention.key_length": 128, "context_length": 4096, "vocab_size": 8192,
                                "feed_forward_length": 3072},
                   [(f"blk.{i}.{n}", shape, F16) for i in range(2)
                    for n, shape in (("attn_q.weight", (1024, 2048)), ("ffn_up.weight", (1024, 3072)))]
                   + [("token_embd.weight", (1024, 8192), F16)])
    embd = 1024 * 8192 * 2
    plain = _flags()
    base = estimate("llamacpp", tied, [(16 * GiB, "L4")], plain, B, Policy()).extra
    assert base["output_weights"] == embd == 16_777_216
    on_gpu, on_host = base["per_device"][0]["weights"], base["host"]["weights"]
    assert on_host == embd
    assert _run(tied, "-ot", "token_embd=CPU") == (on_gpu - embd, on_host, 1)
    # -ngl 2 of 2 blocks left the output on the host before the output-first placement (OLD)
    partial = estimate("llamacpp", tied, [(16 * GiB, "L4")], _flags("-ngl", "2"), OLD, Policy()).extra
    assert _run(tied, "-ngl", "2", "-ot", "token_embd=CUDA0", version=OLD) == \
        (partial["per_device"][0]["weights"] + 2 * embd, 0, 2)


def test_n_cpu_moe_past_the_last_block_moves_what_the_block_count_does_without_a_pattern_per_layer():
    # llama.cpp adds blk\.<i> patterns for every i < N; those past the model's blocks match nothing, so gsg stops at
    # the block count (a huge N once built a pattern per unit: 10^5 of them took ~11 s)
    facts, gpus = gpt_oss_20b(), [(16 * GiB, "NVIDIA RTX 4080")]
    at_count = estimate("llamacpp", facts, gpus, {"ctx-size": "8192", "n-cpu-moe": "24"}, B, Policy())
    past = estimate("llamacpp", facts, gpus, {"ctx-size": "8192", "n-cpu-moe": str(10**12)}, B, Policy())
    assert past.extra["tensor_placement"] == at_count.extra["tensor_placement"]
    assert len(past.extra["tensor_placement"]["overrides"]) == 24
    assert past.extra["tensor_placement"]["moved"] == 24 * 6
    assert expert_overrides(False, 30, B, blocks=24) == expert_overrides(False, 24, B)
    assert len(expert_overrides(False, 30, B)) == 30  # without a block count, every pattern


def test_an_ot_buffer_naming_no_gpu_is_refused_as_the_flag_with_its_value():
    facts, gpus = gpt_oss_20b(), [(16 * GiB, "NVIDIA RTX 4080")]
    with pytest.raises(FlagValueError) as err:
        estimate("llamacpp", facts, gpus, {"ctx-size": "8192", "ot": r"exps=CUDA1"}, B, Policy())
    assert str(err.value) == ("--override-tensor 'CUDA1': a buffer type that names none of the 1 GPU(s) (CPU, or a "
                              "device's own such as CUDA0)")
