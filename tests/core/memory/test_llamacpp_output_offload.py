"""The output layer left on the host by -ngl runs on the first device for a batch of outputs: its weight is copied
into that device's compute buffer beside the logits (profiles.LLAMACPP_OUTPUT_OFFLOAD)."""

from __future__ import annotations

import pytest

from gpustack_guard.core.memory.engines.llamacpp import LlamaCppConfig, estimate_llamacpp, logits_scratch
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.units import GiB

OUTPUT = 40_000_000  # the GGUF's output tensor and norm, larger than any stage of the graph


def _facts(tied: bool = False) -> ModelFacts:
    return ModelFacts(architecture="llama", num_hidden_layers=4, hidden_size=256, num_attention_heads=8,
                      num_key_value_heads=2, intermediate_size=512, vocab_size=32_000, max_position_embeddings=4096,
                      tie_word_embeddings=tied, layer_weight_bytes=(1000,) * 4, embedding_bytes=30_000_000,
                      output_bytes=30_000_000 if tied else OUTPUT, quant_method="gguf:ftype2")


def _first_device_compute(version: str, layers: int = 3, tied: bool = False, parallel: int | None = 1) -> int:
    cfg = LlamaCppConfig(ctx_size=2048, gpu_layers=layers, parallel=parallel, flash_attn=True)
    return estimate_llamacpp(_facts(tied), [16 * GiB, 16 * GiB], cfg, version=version).extra["per_device"][0][
        "compute"]


def test_the_host_output_weight_and_its_logits_sit_in_the_first_devices_buffer():
    # ollama's runner and llama-cli reserve n_ubatch outputs: 512 rows of (256 + 32,000) f32 beside the copy; -ngl 3
    # of 4 blocks leaves the output layer on the host in builds before the output-first placement (b8164)
    assert _first_device_compute("b8100") == OUTPUT + logits_scratch(256, 32_000, 512) == 106_060_288
    # a tied model's output is token_embd, copied the same way
    assert _first_device_compute("b8100", tied=True) == 30_000_000 + logits_scratch(256, 32_000, 512)


@pytest.mark.parametrize("version,layers,parallel", [
    ("b2400", 3, 1),  # before the scheduler offloaded host weights' ops (c2101a2e ran them on the CPU)
    ("b9500", 5, 1),  # full offload: the output is a device's own weight, not a copy
    ("b9500", 3, 1),  # from b8164 -ngl 3 takes the output layer first: on a device, not a copy
    ("b9518", 3, None),  # llama-server from b9518 reserves one output per slot (4): under offload_op's 32 rows
])
def test_no_copy_where_the_output_op_stays_on_the_host_or_on_its_device(version, layers, parallel):
    assert _first_device_compute(version, layers, parallel=parallel) < OUTPUT
