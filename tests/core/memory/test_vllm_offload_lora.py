"""vLLM --cpu-offload-gb (decoder-layer parameters stay on the CPU) and --enable-lora (preallocated LoRA slots),
in exact bytes (docs/memory-arithmetic.md, "vLLM")."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory.engine import vllm_config
from gpustack_guard.core.memory.engines.vllm import VllmConfig, cpu_offloaded, estimate_vllm
from gpustack_guard.core.memory.lora import LoraRequest, target_names, vllm_slots
from gpustack_guard.core.memory.terms import LORA_BUFFERS, budget_terms
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
def test_lora_slots_of_the_linears(loras, rank, tp, sharded, per_layer_elements):
    request = LoraRequest(slots=loras, rank=rank, fully_sharded=sharded)
    (slots,) = vllm_slots(LLAMA_8B, request, tp, [32], "0.34.0")
    assert slots.linear_bytes == loras * 32 * rank * per_layer_elements * 2


# Llama-3.1-8B (vocabulary 128,256, hidden 4,096), 4 slots at rank 64. LlamaForCausalLM declares embed_tokens and
# lm_head as embedding modules. 0.11.0: the embedding's A has 128,256 + 256 extra rows and each slot keeps 256
# extra embedding rows (4,096 wide) for the embedding and for the LM head; the LM head's B rows are 128,512
# (128,256 + 256, a multiple of 256 already). 0.12.0 on: A (vocab x rank) and B (hidden x rank) of each, no more.
LINEAR_4X64 = 4 * 32 * 64 * 81_920 * 2  # 1,342,177,280
VOCAB_0110 = 2 * (4 * (64 * 128_512 + 4096 * 64) * 2 + 4 * 256 * 4096 * 2)  # 152,567,808
VOCAB_0340 = 2 * 4 * (64 * 128_256 + 4096 * 64) * 2  # 135,528,448


@pytest.mark.parametrize("version, vocab", [("0.11.0", VOCAB_0110), ("0.8.5", VOCAB_0110),  # older: 0.11.0's row
                                            ("0.12.0", VOCAB_0340), ("0.20.0", VOCAB_0340), ("0.34.0", VOCAB_0340)])
def test_lora_slots_of_the_embedding_and_lm_head_by_release(version, vocab):
    (slots,) = vllm_slots(LLAMA_8B, LoraRequest(slots=4, rank=64), 1, [32], version)
    assert (slots.linear_bytes, slots.vocab_bytes, slots.bytes) == (LINEAR_4X64, vocab, LINEAR_4X64 + vocab)
    assert slots.modules == ("down_proj", "embed_tokens", "gate_up_proj", "lm_head", "o_proj", "qkv_proj")


QWEN3_8B = catalog_facts("Qwen/Qwen3-8B")  # 36 layers, H 4096, 32 x 128 heads, 8 KV heads, I 12288, V 151,936


def test_lora_slots_of_a_second_model_whose_class_declares_no_embedding_modules_until_later():
    # per layer and rank: qkv 3 x 4096 + 6144, o 4096 + 4096, gate_up 2 x 4096 + 2 x 12288, down 12288 + 4096
    linear = 2 * 36 * 32 * (18_432 + 8_192 + 32_768 + 16_384) * 2  # 2 slots, rank 32
    (old,) = vllm_slots(QWEN3_8B, LoraRequest(slots=2, rank=32), 1, [36], "0.11.0")
    assert (old.bytes, old.vocab_bytes) == (linear, 0)  # Qwen3ForCausalLM declares none at 0.11.0
    (new,) = vllm_slots(QWEN3_8B, LoraRequest(slots=2, rank=32), 1, [36], "0.34.0")
    assert new.bytes == linear + 2 * 2 * (32 * 151_936 + 4096 * 32) * 2 and not new.unread
    (between,) = vllm_slots(QWEN3_8B, LoraRequest(slots=2, rank=32), 1, [36], "0.20.0")
    assert between.bytes == linear and "Qwen3ForCausalLM declares embedding LoRA modules" in between.unread[0]


def test_lora_target_modules_are_read_from_034_on():
    request = LoraRequest(slots=1, rank=16, targets=target_names("o_proj q_proj,v_proj"))
    (narrow,) = vllm_slots(LLAMA_8B, request, 1, [32], "0.34.0")
    # q_proj and v_proj wrap the whole packed qkv_proj; no embedding or LM-head slot
    assert narrow.modules == ("o_proj", "qkv_proj") and narrow.vocab_bytes == 0
    assert narrow.bytes == 32 * 16 * (3 * 4096 + 6144 + 4096 + 4096) * 2
    (ignored,) = vllm_slots(LLAMA_8B, request, 1, [32], "0.13.0")
    assert ignored.linear_bytes == 32 * 16 * 81_920 * 2
    assert "--lora-target-modules is not read at vLLM 0.13.0" in ignored.unread[0]


def test_lora_dtype_float32_model_doubles_the_slots():
    f32 = vllm_slots(replace(LLAMA_8B, dtype="float32"), LoraRequest(slots=1, rank=16), 1, [32], "0.34.0")[0]
    f16 = vllm_slots(LLAMA_8B, LoraRequest(slots=1, rank=16, dtype="float16"), 1, [32], "0.34.0")[0]
    assert f32.bytes == 2 * f16.bytes


def test_lora_slots_per_pipeline_stage_keep_the_embedding_first_and_the_lm_head_last():
    first, last = vllm_slots(LLAMA_8B, LoraRequest(slots=4, rank=64), 1, [16, 16], "0.34.0")
    assert first.linear_bytes == last.linear_bytes == LINEAR_4X64 // 2
    assert first.vocab_bytes == last.vocab_bytes == VOCAB_0340 // 2  # embedding and LM head weigh the same here


def test_lora_off_costs_nothing_and_on_adds_to_the_weights_and_its_own_term():
    base = estimate_vllm(LLAMA_8B, 24 * GiB, VllmConfig(max_model_len=8192), version="0.11.0")
    lora = estimate_vllm(LLAMA_8B, 24 * GiB, VllmConfig(max_model_len=8192, lora=LoraRequest(slots=4, rank=64)),
                         version="0.11.0")
    assert base.extra["lora_buffers"] == 0 and "lora" not in base.extra
    assert lora.weights - base.weights == LINEAR_4X64 + VOCAB_0110 == lora.extra["lora_buffers"]
    assert base.kv_available - lora.kv_available == LINEAR_4X64 + VOCAB_0110  # inside the budget: the KV shrinks
    assert any(n.startswith("LoRA: 4 slot(s) at rank 64, +1.39 GiB per GPU in the weights") for n in lora.notes)
    rows = {row.term: row for row in budget_terms(lora)}
    assert rows[LORA_BUFFERS].value == LINEAR_4X64 + VOCAB_0110
    assert rows[LORA_BUFFERS].rule == "slots-x-modules-x-layers-in-model-loading"
    assert "logits_processor.py@v0.11.0" in rows[LORA_BUFFERS].source
    assert LORA_BUFFERS not in {row.term for row in budget_terms(base)}


def test_flags_read_like_vllm():
    cfg = vllm_config({"enable-lora": None, "max-lora-rank": "32", "cpu-offload-gb": "2.5"}, Policy())
    assert cfg.lora is not None and (cfg.lora.slots, cfg.lora.rank, cfg.lora.targets) == (1, 32, None)
    assert cfg.cpu_offload_bytes == int(2.5 * GiB)
    assert vllm_config({"max-loras": "4"}, Policy()).lora is None  # without --enable-lora no slots exist
    cfg = vllm_config({"enable-lora": None, "max-loras": "3", "lora-target-modules": "o_proj gate_proj",
                       "lora-dtype": "float16", "fully-sharded-loras": None}, Policy())
    assert cfg.lora is not None and (cfg.lora.slots, cfg.lora.rank, cfg.lora.dtype, cfg.lora.fully_sharded) == (
        3, 16, "float16", True)
    assert cfg.lora.targets == frozenset({"o_proj", "gate_up_proj"})


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
