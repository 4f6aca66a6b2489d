"""llama.cpp's --split-mode tensor (profiles.LLAMACPP_SPLIT_MODES, from b8738; read at llama.cpp 0c1e57098): one
Meta device over every GPU. Each GPU holds its -ts proportion of the weights (evenly without -ts, not by free
memory), whole KV heads of every layer's cache (the rounding rotated by layer) and a compute buffer of its own.
Before this round the mode was read as layer split: each GPU whole layers and their KV, and pipeline copies."""

import json

import pytest

from gpustack_guard.core.memory.engines import llamacpp_tensor as TS

LLAMA = ("-m", "meta-llama/Llama-3.1-8B-Instruct", "-q", "q4_k_m")  # 32 layers, 8 KV heads of 128
QWEN = ("-m", "Qwen/Qwen2.5-7B-Instruct", "-q", "q4_k_m")  # 28 layers, 4 KV heads of 128, 28 query heads


def estimate(gsg, model, gpus, version, *flags):
    result = gsg("estimate", *model, "--gpu-memory", "24GiB", "--gpus", str(gpus), "--backend", "llama.cpp",
                 "-o", "json", "--backend-version", version, "--", *flags)
    assert result.code == 0, result.err
    return json.loads(result.out)


def per_gpu(doc, term):
    return [device[term] for device in doc["extra"]["per_device"]]


@pytest.mark.parametrize("version", ["b8738", "b10507"])
@pytest.mark.parametrize("model, cell_head_layer", [(LLAMA, 512), (QWEN, 512)])
def test_two_gpus_hold_half_the_weights_and_half_the_kv_heads_each(gsg, version, model, cell_head_layer):
    one = estimate(gsg, model, 1, version, "-c", "8192")
    two = estimate(gsg, model, 2, version, "-c", "8192", "-sm", "tensor")
    assert two["extra"]["split_mode"] == "tensor" and two["extra"]["pipeline_copies"] == 1
    weights = per_gpu(one, "weights")[0]
    assert per_gpu(two, "weights") == [weights // 2, weights // 2]
    # K and V: 2 x 128 f16 per head, layer and cell; half the heads on each GPU
    heads_layers = {LLAMA: 32 * 8, QWEN: 28 * 4}[model]
    assert per_gpu(two, "kv") == [8192 * cell_head_layer * heads_layers // 2] * 2
    assert per_gpu(one, "kv")[0] == 8192 * cell_head_layer * heads_layers
    # each GPU its own compute buffer, gsg's one-device size (flash attention on, as llama.cpp forces it)
    assert per_gpu(two, "compute") == [per_gpu(estimate(gsg, model, 1, version, "-c", "8192", "-fa", "on"),
                                               "compute")[0]] * 2


def test_three_gpus_take_whole_kv_heads_rotated_by_layer(gsg):
    # Qwen2.5-7B's 4 KV heads over 3 GPUs: 1, 1, 2 a layer, the 2 on GPU 2, 0, 1 as the layer index mod 3 turns
    # (layers 0..27: 10, 9, 9 of each turn): 37, 37, 38 head-layers of 512 bytes a cell
    doc = estimate(gsg, QWEN, 3, "b10507", "-c", "16384", "-sm", "tensor")
    assert per_gpu(doc, "kv") == [37 * 512 * 16384, 37 * 512 * 16384, 38 * 512 * 16384]


def test_tensor_split_sets_the_proportions(gsg):
    # -ts 3,1: 6 of Llama's 8 KV heads on GPU 0, 2 on GPU 1, and 3/4 of the weights
    one = estimate(gsg, LLAMA, 1, "b10507", "-c", "8192")
    doc = estimate(gsg, LLAMA, 2, "b10507", "-c", "8192", "-sm", "tensor", "-ts", "3,1")
    weights = per_gpu(one, "weights")[0]
    assert per_gpu(doc, "weights") == [int(weights * 3 / 4), int(weights * 1 / 4)]
    assert per_gpu(doc, "kv") == [8192 * 512 * 32 * 6, 8192 * 512 * 32 * 2]


def test_layer_split_is_unchanged_and_keeps_its_pipeline_copies(gsg):
    doc = estimate(gsg, LLAMA, 2, "b10507", "-c", "8192")
    assert doc["extra"]["split_mode"] == "layer" and doc["extra"]["pipeline_copies"] == 4
    assert sum(per_gpu(doc, "kv")) == 8192 * 512 * 32 * 8 and per_gpu(doc, "kv")[0] != per_gpu(doc, "kv")[1]


def test_what_llama_cpp_refuses(gsg):
    before = gsg("estimate", *LLAMA, "--gpu-memory", "24GiB", "--gpus", "2", "--backend", "llama.cpp",
                 "--backend-version", "b8737", "--", "-sm", "tensor")
    assert before.code != 0 and "--split-mode 'tensor': llama.cpp b8737 takes none, layer, row" in before.err
    off = gsg("estimate", *LLAMA, "--gpu-memory", "24GiB", "--gpus", "2", "--backend", "llama.cpp",
              "--backend-version", "b10507", "--", "-sm", "tensor", "-fa", "off")
    assert off.code != 0 and "--split-mode tensor needs flash attention" in off.err


@pytest.mark.parametrize("heads, head_dim, gqa, fractions, rotation, expected", [
    (8, 128, 4, (1.0, 1.0), 0, [512, 512]),
    (4, 128, 7, (1.0, 1.0, 1.0), 0, [128, 128, 256]),
    (4, 128, 7, (1.0, 1.0, 1.0), 1, [256, 128, 128]),  # the remainder one GPU further on
    (8, 128, 4, (3.0, 1.0), 1, [768, 256]),
    (8, 64, 1, (1.0, 1.0, 1.0), 0, [128, 192, 192]),  # 64-wide heads: 2, 3, 3 whole heads
])
def test_head_split(heads, head_dim, gqa, fractions, rotation, expected):
    split = TS.head_split(heads, head_dim, gqa, fractions, rotation)
    assert split == expected and sum(split) == heads * head_dim  # every KV head's channels on exactly one GPU


def test_fit_gives_up_so_an_unset_context_stays_the_trained_one(gsg):
    # common/fit.cpp@0c1e57098: "llama_params_fit is not implemented for SPLIT_MODE_TENSOR" -> the arguments run as
    # given, n_ctx 0 = the trained 131,072; with layer split --fit shortens it on two 12 GiB GPUs
    def run(*flags):
        result = gsg("estimate", *LLAMA, "--gpu-memory", "12GiB", "--gpus", "2", "--backend", "llama.cpp", "-o",
                     "json", "--backend-version", "b10507", "--", *flags)
        return json.loads(result.out)
    tensor = run("-sm", "tensor")
    assert tensor["kv_capacity_tokens"] == 131072 and tensor["extra"]["context"]["source"] == "engine-default"
    assert "fit" not in tensor["extra"]
    assert run()["extra"]["context"]["source"] == "fit-shortened"


@pytest.mark.parametrize("model", [("-m", "allenai/OLMo-2-0425-1B"), ("-m", "deepseek-ai/DeepSeek-V3", "-q",
                                                                     "q4_k_m")])
def test_architectures_llama_cpp_does_not_split_by_tensor_are_refused(gsg, model):
    # llm_arch_supports_sm_tensor (src/llama-arch.cpp@0c1e57098) is false for olmo2 and deepseek2: the load throws
    run = gsg("estimate", *model, "--gpu-memory", "80GiB", "--gpus", "2", "--backend", "llama.cpp",
              "--backend-version", "b10507", "--", "-sm", "tensor", "-c", "4096")
    assert run.code != 0 and "'LLAMA_SPLIT_MODE_TENSOR not implemented for architecture'" in run.err
    layer = gsg("estimate", *model, "--gpu-memory", "80GiB", "--gpus", "2", "--backend", "llama.cpp",
                "--backend-version", "b10507", "--", "-c", "4096")
    assert layer.code == 0 and "GSG016" not in layer.err and "LLAMA_SPLIT_MODE_TENSOR" not in layer.err
