"""`gsg estimate --output json` shows the vLLM encoder profile of a multimodal model term by term: the dummy items,
the encoder phase, what the text run holds, and the budget row naming the model file and tag it was read from."""

import json
import math

import pytest
from support.vision_configs import QWEN2_VL_7B, QWEN3_VL_8B, QWEN25_VL_7B

from gpustack_guard.core.units import GiB

QWEN_PIXELS = 65_536 * 1_176 * 2  # one 3,584 px image of 14 px patches, 16-bit pixel values


@pytest.mark.parametrize("config, version, gpu, phase, held, rule, read", [
    # 0.9.0.1: 13 ViT widths of 1,280 at the fp32 rotary step; 16,384 tokens x 3,584 of outputs held
    (QWEN25_VL_7B, "0.9.0", "NVIDIA L4", QWEN_PIXELS + 65_536 * 13 * 1_280 * 2, QWEN_PIXELS + 16_384 * 3_584 * 2,
     "vit-attention-fp32-rotary", "qwen2_5_vl.py@v0.9.0.1"),
    # 0.27.1: 16-bit rotary (11 widths, 14,080) under the gated MLP step (3 x 4,700 = 14,100); the V2 runner keeps
    # the outputs alone through the text run (its dummy items are CPU tensors)
    (QWEN25_VL_7B, "0.27.1", "NVIDIA GeForce RTX 4090", QWEN_PIXELS + 65_536 * 14_100 * 2,
     16_384 * 3_584 * 2, "vit-attention-16bit-rotary:v2-runner-outputs-held", "qwen2_5_vl.py@v0.12.0"),
    # Qwen3-VL-8B on a T4 (SDPA ViT backend from 0.12: the same widths as FLASH_ATTN): 1,536 pixel elements per
    # 16 px patch, 11 widths of 1,152 beside 3 DeepStack features (3,072), 4 x 4,096 of outputs per token
    (QWEN3_VL_8B, "0.19.0", "Tesla T4", 65_536 * 1_536 * 2 + 65_536 * (11 * 1_152 + 3_072) * 2,
     65_536 * 1_536 * 2 + 16_384 * 4 * 4_096 * 2, "vit-attention-16bit-rotary", "qwen3_vl.py@v0.12.0"),
])
def test_estimate_json_shows_the_encoder_term(gsg, tmp_path, config, version, gpu, phase, held, rule, read):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = gsg("estimate", "--model", str(path), "--gpu-memory", "80GiB", "--gpu-name", gpu, "--backend-version",
                 version, "--offline", "-o", "json", "--", "--max-model-len", "8192")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    profile, extra = doc["extra"]["encoder_profile"], doc["extra"]
    assert (profile["items"], profile["item_patches"], profile["item_tokens"]) == (1, 65_536, 16_384)
    assert (profile["encoder_phase"], profile["held_through_text"]) == (phase, held)
    assert "calibrated" not in profile
    text = max(extra["forward_peak"], extra["sampler_peak"])
    assert extra["encoder_peak"] == max(held, phase - text)
    row = next(t for t in doc["budget"] if t["term"] == "encoder_peak_bytes_per_gpu")
    assert row["rule"] == f"max(encoder-phase, text+held):{rule}" and row["value"] == extra["encoder_peak"]
    assert read in row["source"]


L4_CUDA_TOTAL = int(22.03 * GiB)  # what mem_get_info reports for an L4 whose NVML total is 23,034 MiB
KV_BLOCK = 16 * 28 * 2 * 4 * 128 * 2  # 16 tokens x 28 layers x K and V x 4 KV heads x 128 x 2 B (both 7B models)


# V25 (benchmarks/accuracy.py): Qwen2.5-VL-7B on an L4 as GPUStack reports it, under 0.9.2's code at 2,048 tokens;
# the log keeps 33,824 tokens. Qwen2-VL-7B at 0.10.1 is the neighbour with the same 13-width fp32-rotary ViT step.
@pytest.mark.parametrize("config, version, tokens", [
    (QWEN25_VL_7B, "0.9.2", 32_480),
    (QWEN2_VL_7B, "0.10.1", 32_496),
])
def test_an_l4_budget_is_cudas_total_less_the_binding_encoder_phase(gsg, tmp_path, config, version, tokens):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = gsg("estimate", "--model", str(path), "--gpu-memory", "23034MiB", "--gpu-name", "NVIDIA L4",
                 "--backend-version", version, "--offline", "-o", "json", "--", "--max-model-len", "2048")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    parts = doc["breakdown"]
    assert doc["extra"]["cuda_total"] == L4_CUDA_TOTAL
    assert parts["requested"] == math.ceil(0.9 * L4_CUDA_TOTAL)
    # the encoder phase (pixels + 13 ViT widths of 1,280 per patch) is above the text run plus what it holds
    assert parts["activation"] == QWEN_PIXELS + 65_536 * 13 * 1_280 * 2
    kv = parts["requested"] - parts["weights"] - parts["activation"] - parts["non_torch"]
    assert parts["kv_cache"] == kv // KV_BLOCK * KV_BLOCK
    assert doc["kv_capacity_tokens"] == tokens == kv // KV_BLOCK * 16
