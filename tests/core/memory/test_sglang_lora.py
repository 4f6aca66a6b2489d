"""SGLang's LoRA memory pool (lora/mem_pool.py): allocated after the weights and before the KV pool is sized, so
the pool is smaller by exactly its bytes (docs/memory-arithmetic.md, "LoRA adapters")."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.engine_flags import FlagValueError
from gpustack_guard.core.memory.engine import sglang_config
from gpustack_guard.core.memory.engines.sglang import SglangConfig, estimate_sglang
from gpustack_guard.core.memory.lora import LoraRequest, sglang_slots, target_names
from gpustack_guard.core.memory.terms import LORA_BUFFERS, budget_terms
from gpustack_guard.core.units import GiB

LLAMA_8B = catalog_facts("meta-llama/Llama-3.1-8B")  # 32 layers, H 4096, 32 x 128 heads, 8 KV heads, I 14336
QWEN3_8B = catalog_facts("Qwen/Qwen3-8B")  # 36 layers, H 4096, 32 x 128 heads, 8 KV heads, I 12288
H100 = 85_045_231_616  # 79.2 GiB, the docs CI's card
ALL = target_names("all")

# Llama-3.1-8B, one slot, one layer, rank r: qkv A 3r x 4096, B 6144 x r; o A r x 4096, B 4096 x r; gate_up
# A 2r x 4096, B 28672 x r; down A r x 14336, B 4096 x r -> 81,920 r elements. At TP 2 the B of qkv and gate_up
# and the A of o and down halve: 55,296 r.
LLAMA_DOCS_CI = 2 * 32 * 256 * 81_920 * 2  # 2 slots at rank 256: 2,684,354,560 bytes = 2.50 GiB


def test_the_docs_ci_pool_of_two_rank_256_slots_is_2_5_gib():
    request = LoraRequest(slots=2, rank=256, targets=ALL)
    slots = sglang_slots(LLAMA_8B, request, 1, 1, "0.5.8")  # csgmv drops embed_tokens and lm_head from `all`
    assert (slots.bytes, slots.vocab_bytes) == (LLAMA_DOCS_CI, 0) and LLAMA_DOCS_CI / GiB == 2.5
    assert slots.modules == ("down_proj", "gate_up_proj", "o_proj", "qkv_proj")


def test_a_second_model_with_its_own_head_size_and_a_narrower_target_list():
    # Qwen3-8B, 8 slots (the default) at rank 64 on q_proj and v_proj: the whole packed qkv_proj,
    # A 3 x 64 x 4096, B (4096 + 2 x 1024) x 64 per slot and layer
    request = LoraRequest(slots=8, rank=64, targets=target_names("q_proj v_proj"))
    slots = sglang_slots(QWEN3_8B, request, 1, 1, "0.5.5")
    assert slots.bytes == 8 * 36 * 64 * (3 * 4096 + 6144) * 2 == 679_477_248 and slots.modules == ("qkv_proj",)


LINEAR_TP2 = 4 * 32 * 16 * 55_296 * 2  # 4 slots at rank 16, TP 2: 226,492,416
EMBED = 4 * 16 * (128_256 + 4096) * 2  # A rank x vocab, B hidden x rank, whole on every rank
HEAD_WHOLE = 4 * 16 * (4096 + 128_256) * 2
HEAD_SHARD = 4 * 16 * (4096 + 128_256 // 2) * 2  # B holds the rank's half of the vocabulary from 0.5.10


@pytest.mark.parametrize("version, backend, expected", [
    ("0.5.5", None, LINEAR_TP2),  # `all` is the linear projections
    ("0.5.6", "triton", LINEAR_TP2),
    ("0.5.8", None, LINEAR_TP2),  # csgmv (the default) drops the embedding and the LM head from `all`
    ("0.5.8", "triton", LINEAR_TP2 + EMBED + HEAD_WHOLE),  # kept, not sharded yet
    ("0.5.10", None, LINEAR_TP2 + EMBED + HEAD_SHARD),
    ("0.5.23", "csgmv", LINEAR_TP2 + EMBED + HEAD_SHARD),
])
def test_all_targets_by_release_and_backend(version, backend, expected):
    request = LoraRequest(slots=4, rank=16, targets=ALL, backend=backend)
    assert sglang_slots(LLAMA_8B, request, 2, 1, version).bytes == expected


def test_the_pool_shrinks_by_the_lora_bytes_and_the_weights_term_stays():
    base = estimate_sglang(LLAMA_8B, H100, SglangConfig(), version="0.5.8")
    cfg = SglangConfig(lora=LoraRequest(slots=2, rank=256, targets=ALL))
    lora = estimate_sglang(LLAMA_8B, H100, cfg, version="0.5.8")
    assert lora.weights == base.weights  # "Load weight end ... mem usage" has no LoRA in it
    assert base.kv_available - lora.kv_available == LLAMA_DOCS_CI
    # the pool in tokens: 2.5 GiB over 131,072 bytes a token (32 layers x 8 heads x 128 x 2 x 2 bytes)
    assert base.kv_capacity_tokens - lora.kv_capacity_tokens in (LLAMA_DOCS_CI // 131_072, LLAMA_DOCS_CI // 131_072 + 1)
    assert lora.requested == base.requested  # the static fraction is the same; the pool gives way
    rows = {row.term: row for row in budget_terms(lora)}
    assert rows[LORA_BUFFERS].value == LLAMA_DOCS_CI
    assert rows[LORA_BUFFERS].rule == "slots-x-modules-x-layers-before-kv-pool"
    assert "server_args.py@v0.5.7" in rows[LORA_BUFFERS].source
    assert LORA_BUFFERS not in {row.term for row in budget_terms(base)}
    assert any(note.startswith("LoRA pool: 2 slot(s) at rank 256") for note in lora.notes)


@pytest.mark.parametrize("facts, request_, version, tp, pp, said", [
    (LLAMA_8B, LoraRequest(slots=2, rank=None), "0.5.5", 1, 1, "SGLang infers --max-lora-rank from the adapters"),
    (LLAMA_8B, LoraRequest(slots=2, rank=16, targets=ALL), "0.5.4", 1, 1, "SGLang 0.5.4's LoRA pool is not read"),
    (catalog_facts("Qwen/Qwen3-30B-A3B"), LoraRequest(slots=2, rank=16, targets=ALL), "0.5.5", 1, 1, "MoE experts"),
    (LLAMA_8B, LoraRequest(slots=2, rank=16, targets=ALL), "0.5.5", 1, 2, "pipeline stages"),
    (LLAMA_8B, LoraRequest(slots=2, rank=16, targets=ALL), "0.5.5", 16, 1, "8 KV heads over TP 16"),
    (replace(LLAMA_8B, gated_mlp=False), LoraRequest(slots=2, rank=16, targets=ALL), "0.5.5", 1, 1, "ungated"),
])
def test_what_gsg_has_not_read_is_said_and_not_booked(facts, request_, version, tp, pp, said):
    slots = sglang_slots(facts, request_, tp, pp, version)
    assert slots.bytes == 0 and any(said in text for text in slots.unread), slots.unread


def test_targets_inferred_from_the_adapters_are_taken_as_every_linear_and_said():
    slots = sglang_slots(LLAMA_8B, LoraRequest(slots=2, rank=256), 1, 1, "0.5.8")
    assert slots.bytes == LLAMA_DOCS_CI and "every linear projection assumed" in slots.unread[0]


def test_embedding_targets_before_0_5_7_are_refused_by_the_release_and_not_booked():
    slots = sglang_slots(LLAMA_8B, LoraRequest(slots=1, rank=16, targets=target_names("lm_head o_proj")), 1, 1,
                         "0.5.5")
    assert slots.modules == ("o_proj",) and "no embedding or LM-head LoRA buffers" in slots.unread[0]


def test_flags_read_like_sglang():
    cfg = sglang_config({"lora-paths": "a=x b=y", "max-lora-rank": "256", "max-loras-per-batch": "2",
                         "lora-target-modules": "all"}, "0.5.8")
    assert cfg.lora is not None and (cfg.lora.slots, cfg.lora.rank, cfg.lora.targets) == (2, 256, ALL)
    assert sglang_config({"lora-paths": "a=x"}, "0.5.8").lora.slots == 8  # --lora-paths alone turns LoRA on
    assert sglang_config({"enable-lora": None}, "0.5.8").lora.rank is None
    assert sglang_config({"max-lora-rank": "64"}, "0.5.8").lora is None
    with pytest.raises(FlagValueError, match="max-loras-per-batch"):
        sglang_config({"enable-lora": None, "max-loras-per-batch": "0"}, "0.5.8")
