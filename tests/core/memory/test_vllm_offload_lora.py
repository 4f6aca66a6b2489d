"""vLLM --cpu-offload-gb (decoder-layer parameters stay on the CPU) and --enable-lora (preallocated LoRA slots),
in exact bytes (docs/memory-arithmetic.md, "vLLM")."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory.engine import vllm_config
from gpustack_guard.core.memory.engines.vllm import VllmConfig, cpu_offloaded, estimate_vllm, lora_buffers
from gpustack_guard.core.memory.weights import weight_layout
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import GiB

LLAMA_8B = catalog_facts("meta-llama/Llama-3.1-8B")  # 32 layers, H 4096, 32 heads, 8 KV heads, I 14336
LAYER_BYTES = sum(weight_layout(LLAMA_8B).per_layer)


def test_offload_takes_decoder_layers_up_to_the_amount_per_gpu():
    assert cpu_offloaded(LLAMA_8B, 1, [32], 4 * GiB) == [4 * GiB]
    assert cpu_offloaded(LLAMA_8B, 1, [32], 100 * GiB) == [LAYER_BYTES]  # never the embedding or LM head
    assert cpu_offloaded(LLAMA_8B, 2, [32], 100 * GiB) == [LAYER_BYTES // 2]  # each rank offloads its own shard
    first, second = cpu_offloaded(LLAMA_8B, 1, [16, 16], 100 * GiB)  # per pipeline stage: its own layers
    assert first + second == LAYER_BYTES and first == second


def test_offload_lowers_the_weights_and_raises_the_pool():
    base = estimate_vllm(LLAMA_8B, 24 * GiB, VllmConfig(max_model_len=8192), version="0.11.0")
    off = estimate_vllm(LLAMA_8B, 24 * GiB, VllmConfig(max_model_len=8192, cpu_offload_bytes=4 * GiB),
                        version="0.11.0")
    assert base.weights - off.weights == 4 * GiB
    assert off.kv_available - base.kv_available == 4 * GiB
    assert off.extra["cpu_offloaded"] == 4 * GiB and base.extra["cpu_offloaded"] == 0


# per layer, rank r: q, k, v: A r x 4096 each, B (4096 | 1024 | 1024) x r; o: A r x 4096, B 4096 x r;
# gate, up: A r x 4096, B 14336 x r; down: A r x 14336, B 4096 x r  ->  r x 81,920 elements
@pytest.mark.parametrize("loras, rank, tp, sharded, per_layer_elements", [
    (1, 16, 1, False, 81_920),
    (4, 64, 1, False, 81_920),
    # TP 2: B of q/k/v/gate/up and A of o/down halve; A of q/k/v/gate/up and B of o/down stay whole
    (1, 16, 2, False, 3 * 4096 + 2048 + 2 * 512 + 2048 + 4096 + 2 * (4096 + 7168) + 7168 + 4096),
    # fully sharded: the whole-kept side is split over TP as well
    (1, 16, 2, True, 81_920 // 2),
])
def test_lora_slots(loras, rank, tp, sharded, per_layer_elements):
    cfg = VllmConfig(tensor_parallel_size=tp, max_loras=loras, max_lora_rank=rank, fully_sharded_loras=sharded)
    assert lora_buffers(LLAMA_8B, cfg, 32) == loras * 32 * rank * per_layer_elements * 2


def test_lora_off_costs_nothing_and_on_adds_to_the_weights():
    assert lora_buffers(LLAMA_8B, VllmConfig(), 32) == 0
    base = estimate_vllm(LLAMA_8B, 24 * GiB, VllmConfig(max_model_len=8192), version="0.11.0")
    lora = estimate_vllm(LLAMA_8B, 24 * GiB, VllmConfig(max_model_len=8192, max_loras=4, max_lora_rank=64),
                         version="0.11.0")
    assert lora.weights - base.weights == 4 * 32 * 64 * 81_920 * 2 == lora.extra["lora_buffers"]
    assert "LoRA: 4 slot(s) at rank 64, +1.25 GiB per GPU" in lora.notes


def test_flags_read_like_vllm():
    cfg = vllm_config({"enable-lora": None, "max-lora-rank": "32", "cpu-offload-gb": "2.5"}, Policy())
    assert (cfg.max_loras, cfg.max_lora_rank, cfg.cpu_offload_bytes) == (1, 32, int(2.5 * GiB))
    assert vllm_config({"max-loras": "4"}, Policy()).max_loras == 0  # without --enable-lora no slots exist


@pytest.mark.parametrize("family, flags, message", [
    ("vllm", {"pipeline-parallel-size": "33"}, "--pipeline-parallel-size 33 is more stages than the model's 32 layers"),
    ("vllm", {"pipeline-parallel-size": "9" * 30}, "is more stages than the model's 32 layers"),
    ("vllm", {"tensor-parallel-size": "5000"}, "--tensor-parallel-size 5,000 is beyond 4,096 ranks"),
    ("sglang", {"pp-size": "64"}, "--pp-size 64 is more stages than the model's 32 layers"),
])
def test_parallel_sizes_no_engine_starts_with_are_refused_before_lists_are_built(family, flags, message):
    from gpustack_guard.core.memory.engine import estimate

    with pytest.raises(ValueError, match=message):
        estimate(family, LLAMA_8B, [(24 * GiB, "NVIDIA L4")], flags, "0.11.0" if family == "vllm" else "0.5.5",
                 Policy())
